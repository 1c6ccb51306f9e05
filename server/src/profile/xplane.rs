//! XProf's `*.xplane.pb`: an `XSpace` protobuf, read as a stream.
//!
//! The schema is TSL's `tsl/profiler/protobuf/xplane.proto` (Apache-2.0, the
//! TensorFlow Authors; in XLA's tree under `third_party/tsl`): an `XSpace` holds
//! `XPlane`s (`/host:CPU`, `/device:GPU:0`, ...), a plane holds `XLine`s (a thread, a
//! GPU stream) and the metadata its events and stats point to by id, a line holds
//! `XEvent`s (`offset_ps`, `duration_ps`, stats). The messages below follow it field by
//! field (numbers and types); prost decodes them, no protoc or build script.
//!
//! A GPU step's file is hundreds of MB, so the space is never decoded whole: the
//! outer messages (space, plane, line) are walked field by field on a seekable reader,
//! and only one event (a few dozen bytes) is decoded at a time. Protobuf writes fields
//! in any order, and C++ writes a plane's lines (field 3) before the metadata they
//! point to (fields 4 and 5), so a plane is read in two passes: its metadata first,
//! then its lines; a line's name (field 11, after its events) is read the same way.
//!
//! Which events count is XLA's rule in `ConvertXplaneToProfiledInstructionsProto`
//! (`xla/python/xplane_to_profile_instructions.cc`): events with both `hlo_op` and
//! `hlo_module` stats, the event metadata's stats first and the event's own after
//! them; on the device planes (GPU, else TPU, else custom devices) when there are
//! any, and never on the "Async XLA Ops" line. [`super::collect`] picks the planes.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use prost::Message;
use rustc_hash::FxHashMap;

use super::collect::{Collector, OpEvent};
use super::{ProfileError, Tier};

/// `XSpace`: every plane of one host's capture. The reader walks the space, its
/// planes and their lines field by field ([`read`]) and never decodes these three
/// whole; they are declared for writing a space (tests, fixtures) and as the schema.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XSpace {
    #[prost(message, repeated, tag = "1")]
    pub planes: Vec<XPlane>,
    #[prost(string, repeated, tag = "2")]
    pub errors: Vec<String>,
    #[prost(string, repeated, tag = "3")]
    pub warnings: Vec<String>,
    #[prost(string, repeated, tag = "4")]
    pub hostnames: Vec<String>,
}

/// `XPlane`: the timelines of one source (`/host:CPU`, `/device:GPU:0`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct XPlane {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(message, repeated, tag = "3")]
    pub lines: Vec<XLine>,
    #[prost(btree_map = "int64, message", tag = "4")]
    pub event_metadata: std::collections::BTreeMap<i64, XEventMetadata>,
    #[prost(btree_map = "int64, message", tag = "5")]
    pub stat_metadata: std::collections::BTreeMap<i64, XStatMetadata>,
    #[prost(message, repeated, tag = "6")]
    pub stats: Vec<XStat>,
}

/// `XLine`: one timeline (a thread, a GPU stream); its events nest, never overlap.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XLine {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(int64, tag = "10")]
    pub display_id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "11")]
    pub display_name: String,
    /// Nanoseconds since the epoch; events are offsets from it.
    #[prost(int64, tag = "3")]
    pub timestamp_ns: i64,
    #[prost(int64, tag = "9")]
    pub duration_ps: i64,
    #[prost(message, repeated, tag = "4")]
    pub events: Vec<XEvent>,
}

/// `XEvent`: one occurrence of an event on a line.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XEvent {
    /// Key of the plane's `event_metadata`.
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    #[prost(oneof = "EventTime", tags = "2, 5")]
    pub data: Option<EventTime>,
    /// Picoseconds; zero for an instant.
    #[prost(int64, tag = "3")]
    pub duration_ps: i64,
    #[prost(message, repeated, tag = "4")]
    pub stats: Vec<XStat>,
}

/// `XEvent.data`: where the event starts, or how often it happened when aggregated.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum EventTime {
    /// Picoseconds after the line's `timestamp_ns`.
    #[prost(int64, tag = "2")]
    OffsetPs(i64),
    #[prost(int64, tag = "5")]
    NumOccurrences(i64),
}

/// `XStat`: a named value (the name is in the plane's `stat_metadata`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct XStat {
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    #[prost(oneof = "StatValue", tags = "2, 3, 4, 5, 6, 7")]
    pub value: Option<StatValue>,
}

/// `XStat.value`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum StatValue {
    #[prost(double, tag = "2")]
    Double(f64),
    #[prost(uint64, tag = "3")]
    Uint64(u64),
    #[prost(int64, tag = "4")]
    Int64(i64),
    #[prost(string, tag = "5")]
    Str(String),
    #[prost(bytes = "vec", tag = "6")]
    Bytes(Vec<u8>),
    /// A string kept once, as the name of the `stat_metadata` with this id.
    #[prost(uint64, tag = "7")]
    Ref(u64),
}

/// `XEventMetadata`: what all events with one `metadata_id` share (the serialized
/// `metadata` bytes, field 3, are not declared: prost skips them).
#[derive(Clone, PartialEq, prost::Message)]
pub struct XEventMetadata {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "4")]
    pub display_name: String,
    #[prost(message, repeated, tag = "5")]
    pub stats: Vec<XStat>,
    #[prost(int64, repeated, tag = "6")]
    pub child_id: Vec<i64>,
}

/// `XStatMetadata`: a stat's name.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XStatMetadata {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub description: String,
}

/// One entry of `map<int64, XEventMetadata> event_metadata` (how protobuf writes a map).
#[derive(Clone, PartialEq, prost::Message)]
struct EventMetadataEntry {
    #[prost(int64, tag = "1")]
    key: i64,
    #[prost(message, optional, tag = "2")]
    value: Option<XEventMetadata>,
}

/// One entry of `map<int64, XStatMetadata> stat_metadata`.
#[derive(Clone, PartialEq, prost::Message)]
struct StatMetadataEntry {
    #[prost(int64, tag = "1")]
    key: i64,
    #[prost(message, optional, tag = "2")]
    value: Option<XStatMetadata>,
}

/// Field numbers of the outer messages, walked by hand.
mod field {
    pub const SPACE_PLANES: u32 = 1;
    pub const PLANE_NAME: u32 = 2;
    pub const PLANE_LINES: u32 = 3;
    pub const PLANE_EVENT_METADATA: u32 = 4;
    pub const PLANE_STAT_METADATA: u32 = 5;
    pub const LINE_ID: u32 = 1;
    pub const LINE_NAME: u32 = 2;
    pub const LINE_EVENTS: u32 = 4;
    pub const LINE_DISPLAY_NAME: u32 = 11;
}

/// Protobuf's wire types that this reader meets.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

/// A protobuf reader over a seekable byte stream that knows where it is.
struct Wire<R> {
    inner: BufReader<R>,
    pos: u64,
    len: u64,
}

impl<R: Read + Seek> Wire<R> {
    fn corrupt(&self, what: impl std::fmt::Display) -> ProfileError {
        ProfileError::Corrupt(format!("at byte {}: {what}", self.pos))
    }

    fn byte(&mut self) -> Result<u8, ProfileError> {
        let buf = self.inner.fill_buf().map_err(ProfileError::io)?;
        let Some(&b) = buf.first() else {
            return Err(self.corrupt("the file ends inside a message (truncated?)"));
        };
        self.inner.consume(1);
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, ProfileError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.corrupt("a varint longer than 10 bytes"))
    }

    /// A field's number and wire type, checked to lie before `end`.
    fn key(&mut self, end: u64) -> Result<(u32, u8), ProfileError> {
        let key = self.varint()?;
        let wire_type = (key & 7) as u8;
        let number = key >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err(self.corrupt(format!("field number {number}")));
        }
        if self.pos > end {
            return Err(self.corrupt("a field runs past the end of its message"));
        }
        Ok((number as u32, wire_type))
    }

    /// The length of a length-delimited field, checked to fit in `end`.
    fn length(&mut self, end: u64) -> Result<u64, ProfileError> {
        let n = self.varint()?;
        match self.pos.checked_add(n) {
            Some(stop) if stop <= end && stop <= self.len => Ok(n),
            _ if end >= self.len => Err(self.corrupt(format!(
                "a field of {n} bytes runs past the end of the file ({} bytes: truncated?)",
                self.len
            ))),
            _ => Err(self.corrupt(format!(
                "a field of {n} bytes runs past the end of its message"
            ))),
        }
    }

    fn skip(&mut self, n: u64) -> Result<(), ProfileError> {
        let offset = i64::try_from(n).map_err(|_| self.corrupt("a field too long"))?;
        self.inner.seek_relative(offset).map_err(ProfileError::io)?;
        self.pos += n;
        Ok(())
    }

    /// Skips the value of a field of `wire_type`.
    fn skip_value(&mut self, wire_type: u8, end: u64) -> Result<(), ProfileError> {
        match wire_type {
            VARINT => self.varint().map(drop),
            FIXED64 => self.skip(8),
            LEN => {
                let n = self.length(end)?;
                self.skip(n)
            }
            FIXED32 => self.skip(4),
            other => Err(self.corrupt(format!(
                "wire type {other} (not a protobuf this reader knows)"
            ))),
        }
    }

    fn seek_to(&mut self, pos: u64) -> Result<(), ProfileError> {
        self.inner
            .seek(SeekFrom::Start(pos))
            .map_err(ProfileError::io)?;
        self.pos = pos;
        Ok(())
    }

    /// Reads `n` bytes into `buf` (replacing its contents).
    fn read_into(&mut self, n: u64, buf: &mut Vec<u8>) -> Result<(), ProfileError> {
        buf.clear();
        let n = usize::try_from(n).map_err(|_| self.corrupt("a field too long"))?;
        buf.resize(n, 0);
        self.inner.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => {
                self.corrupt("the file ends inside a message (truncated?)")
            }
            _ => ProfileError::io(e),
        })?;
        self.pos += n as u64;
        Ok(())
    }

    /// Decodes the length-delimited message at the reader as `M`.
    fn message<M: Message + Default>(
        &mut self,
        end: u64,
        buf: &mut Vec<u8>,
    ) -> Result<M, ProfileError> {
        let at = self.pos;
        let n = self.length(end)?;
        self.read_into(n, buf)?;
        M::decode(buf.as_slice()).map_err(|e| ProfileError::Corrupt(format!("at byte {at}: {e}")))
    }

    fn string(&mut self, end: u64, buf: &mut Vec<u8>) -> Result<String, ProfileError> {
        let n = self.length(end)?;
        self.read_into(n, buf)?;
        Ok(String::from_utf8_lossy(buf).into_owned())
    }
}

/// The stats this reader looks for, by name (TSL's `xplane_schema.cc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stat {
    HloOp,
    HloModule,
    ProgramId,
    RunId,
}

impl Stat {
    fn named(name: &str) -> Option<Stat> {
        match name {
            "hlo_op" => Some(Stat::HloOp),
            "hlo_module" => Some(Stat::HloModule),
            "program_id" => Some(Stat::ProgramId),
            "run_id" => Some(Stat::RunId),
            _ => None,
        }
    }
}

/// A stat's text: most are strings of the event or the plane (borrowed); numbers
/// are spelled out.
#[derive(Clone, Debug)]
enum Text<'a> {
    Borrowed(&'a str),
    Owned(String),
}

impl std::ops::Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            Text::Owned(s) => s,
        }
    }
}

/// The four stats of an event (or of its metadata).
#[derive(Clone, Debug, Default)]
struct OpStats<'a> {
    op: Option<Text<'a>>,
    module: Option<Text<'a>>,
    program_id: Option<i64>,
    run: Option<Text<'a>>,
}

/// What a plane's events point to: stat names and the event metadata's stats.
#[derive(Default)]
struct PlaneMetadata {
    stat_names: FxHashMap<i64, String>,
    stat_kinds: FxHashMap<i64, Stat>,
    /// The stats of each event metadata (by id).
    events: FxHashMap<i64, XEventMetadata>,
}

impl PlaneMetadata {
    /// Folds `stats` into `into`, later ones overriding (XLA reads the metadata's
    /// stats before the event's own).
    fn apply<'a>(&'a self, stats: &'a [XStat], into: &mut OpStats<'a>) {
        for stat in stats {
            let Some(&kind) = self.stat_kinds.get(&stat.metadata_id) else {
                continue;
            };
            let Some(value) = &stat.value else { continue };
            match kind {
                Stat::ProgramId => {
                    into.program_id = match value {
                        StatValue::Int64(v) => Some(*v),
                        StatValue::Uint64(v) => i64::try_from(*v).ok(),
                        _ => self.text(value).and_then(|t| t.parse().ok()),
                    }
                }
                Stat::HloOp => into.op = self.text(value),
                Stat::HloModule => into.module = self.text(value),
                Stat::RunId => into.run = self.text(value),
            }
        }
    }

    /// A stat's value as TSL's `XStatVisitor::ToString` spells it.
    fn text<'a>(&'a self, value: &'a StatValue) -> Option<Text<'a>> {
        match value {
            StatValue::Str(s) => Some(Text::Borrowed(s)),
            StatValue::Ref(id) => i64::try_from(*id)
                .ok()
                .and_then(|id| self.stat_names.get(&id))
                .map(|s| Text::Borrowed(s)),
            StatValue::Int64(v) => Some(Text::Owned(v.to_string())),
            StatValue::Uint64(v) => Some(Text::Owned(v.to_string())),
            StatValue::Double(v) => Some(Text::Owned(v.to_string())),
            StatValue::Bytes(_) => None,
        }
    }
}

/// The plane that holds host threads, and the prefixes of device planes (TSL's
/// `kHostThreadsPlaneName`, `kGpuPlanePrefix`, `kTpuPlanePrefix`, `kCustomPlanePrefix`).
pub(crate) const HOST_PLANE: &str = "/host:CPU";
pub(crate) const DEVICE_PLANE_PREFIXES: &[&str] =
    &["/device:GPU:", "/device:TPU:", "/device:CUSTOM:"];

/// Reads an `XSpace` from `reader` (`len` bytes) into `sink`. `progress` is told
/// the bytes read so far; it stops the reading by returning `false`.
pub(crate) fn read<R: Read + Seek>(
    reader: R,
    len: u64,
    sink: &mut Collector,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<(), ProfileError> {
    let mut wire = Wire {
        inner: BufReader::with_capacity(1 << 16, reader),
        pos: 0,
        len,
    };
    let mut planes = Vec::new();
    while wire.pos < len {
        let (number, wire_type) = wire.key(len)?;
        if number == field::SPACE_PLANES && wire_type == LEN {
            let n = wire.length(len)?;
            planes.push((wire.pos, wire.pos + n));
            wire.skip(n)?;
        } else {
            wire.skip_value(wire_type, len)?;
        }
    }
    if planes.is_empty() && len > 0 {
        return Err(ProfileError::Corrupt(
            "no plane in the file: not an XSpace protobuf".to_string(),
        ));
    }
    for (index, (start, end)) in planes.into_iter().enumerate() {
        read_plane(&mut wire, index as u64, start, end, sink, progress)?;
    }
    Ok(())
}

/// What kind of plane a name makes: measured (and how), or not read.
fn plane_tier(name: &str) -> Option<Tier> {
    if name == HOST_PLANE {
        Some(Tier::Host)
    } else if DEVICE_PLANE_PREFIXES.iter().any(|p| name.starts_with(p)) {
        Some(Tier::Device)
    } else {
        None
    }
}

fn read_plane<R: Read + Seek>(
    wire: &mut Wire<R>,
    index: u64,
    start: u64,
    end: u64,
    sink: &mut Collector,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<(), ProfileError> {
    let mut buf = Vec::new();
    let mut name = None;
    let mut lines = Vec::new();
    let mut metadata = PlaneMetadata::default();
    let mut event_metadata = Vec::new();
    wire.seek_to(start)?;
    while wire.pos < end {
        let (number, wire_type) = wire.key(end)?;
        match (number, wire_type) {
            (field::PLANE_NAME, LEN) => {
                let text = wire.string(end, &mut buf)?;
                if plane_tier(&text).is_none() {
                    return Ok(()); // a plane of no op events (metadata, Python, ...)
                }
                name = Some(text);
            }
            (field::PLANE_LINES, LEN) => {
                let n = wire.length(end)?;
                lines.push((wire.pos, wire.pos + n));
                wire.skip(n)?;
            }
            (field::PLANE_EVENT_METADATA, LEN) => {
                let entry: EventMetadataEntry = wire.message(end, &mut buf)?;
                if let Some(value) = entry.value {
                    event_metadata.push((entry.key, value));
                }
            }
            (field::PLANE_STAT_METADATA, LEN) => {
                let entry: StatMetadataEntry = wire.message(end, &mut buf)?;
                if let Some(value) = entry.value {
                    if let Some(kind) = Stat::named(&value.name) {
                        metadata.stat_kinds.insert(entry.key, kind);
                    }
                    metadata.stat_names.insert(entry.key, value.name);
                }
            }
            _ => wire.skip_value(wire_type, end)?,
        }
    }
    let Some(tier) = name.as_deref().and_then(plane_tier) else {
        return Ok(());
    };
    metadata.events = event_metadata.into_iter().collect();
    for (line_start, line_end) in lines {
        read_line(
            wire, &metadata, tier, index, line_start, line_end, sink, &mut buf,
        )?;
        if !progress(wire.pos) {
            return Err(ProfileError::Cancelled);
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn read_line<R: Read + Seek>(
    wire: &mut Wire<R>,
    metadata: &PlaneMetadata,
    tier: Tier,
    plane: u64,
    start: u64,
    end: u64,
    sink: &mut Collector,
    buf: &mut Vec<u8>,
) -> Result<(), ProfileError> {
    // First pass: the line's id and name (the name may follow the events).
    let mut id = 0u64;
    let mut name = String::new();
    let mut display_name = String::new();
    wire.seek_to(start)?;
    while wire.pos < end {
        let (number, wire_type) = wire.key(end)?;
        match (number, wire_type) {
            (field::LINE_ID, VARINT) => id = wire.varint()?,
            (field::LINE_NAME, LEN) => name = wire.string(end, buf)?,
            (field::LINE_DISPLAY_NAME, LEN) => display_name = wire.string(end, buf)?,
            _ => wire.skip_value(wire_type, end)?,
        }
    }
    let shown = if display_name.is_empty() {
        &name
    } else {
        &display_name
    };
    let Some(tier) = super::collect::line_tier(tier, shown) else {
        return Ok(());
    };
    // Second pass: the events.
    wire.seek_to(start)?;
    while wire.pos < end {
        let (number, wire_type) = wire.key(end)?;
        if number != field::LINE_EVENTS || wire_type != LEN {
            wire.skip_value(wire_type, end)?;
            continue;
        }
        let event: XEvent = wire.message(end, buf)?;
        let Some(EventTime::OffsetPs(offset)) = event.data else {
            continue; // aggregated: no time of its own
        };
        let mut stats = OpStats::default();
        if let Some(shared) = metadata.events.get(&event.metadata_id) {
            metadata.apply(&shared.stats, &mut stats);
        }
        metadata.apply(&event.stats, &mut stats);
        let (Some(op), Some(module)) = (&stats.op, &stats.module) else {
            continue;
        };
        sink.add(OpEvent {
            tier,
            track: (plane, id),
            start_ps: offset,
            duration_ps: event.duration_ps.max(0),
            module,
            program_id: stats.program_id,
            op,
            run: stats.run.as_deref(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::collect::Collected;

    fn stat(id: i64, value: StatValue) -> XStat {
        XStat {
            metadata_id: id,
            value: Some(value),
        }
    }

    fn event(metadata_id: i64, offset_ps: i64, duration_ps: i64, stats: Vec<XStat>) -> XEvent {
        XEvent {
            metadata_id,
            data: Some(EventTime::OffsetPs(offset_ps)),
            duration_ps,
            stats,
        }
    }

    /// A GPU plane as the CUPTI tracer writes it: kernel events on a stream line, the
    /// op's name on the event metadata's stats (a `ref` to a stat name), the module
    /// and program id on each event; and a host plane whose launches name the op too.
    fn gpu_space() -> XSpace {
        let names = [
            (1, "hlo_op"),
            (2, "hlo_module"),
            (3, "program_id"),
            (4, "run_id"),
            (5, "fusion.3"),
        ];
        let stat_metadata = names
            .iter()
            .map(|&(id, name)| {
                (
                    id,
                    XStatMetadata {
                        id,
                        name: name.into(),
                        description: String::new(),
                    },
                )
            })
            .collect();
        let kernel = XEventMetadata {
            id: 10,
            name: "loop_fusion_kernel".into(),
            stats: vec![stat(1, StatValue::Ref(5))],
            ..Default::default()
        };
        let per_event = |run: i64| {
            vec![
                stat(2, StatValue::Str("jit_f".into())),
                stat(3, StatValue::Int64(42)),
                stat(4, StatValue::Int64(run)),
            ]
        };
        let stream = XLine {
            id: 7,
            name: "Stream #7".into(),
            events: vec![
                event(10, 1_000, 2_500, per_event(1)),
                event(10, 9_000, 3_500, per_event(2)),
            ],
            ..Default::default()
        };
        let async_line = XLine {
            id: 8,
            name: "Async XLA Ops".into(),
            events: vec![event(10, 0, 90_000, per_event(1))],
            ..Default::default()
        };
        let device = XPlane {
            id: 1,
            name: "/device:GPU:0".into(),
            lines: vec![stream, async_line],
            event_metadata: [(10, kernel)].into_iter().collect(),
            stat_metadata,
            ..Default::default()
        };
        let mut host = device.clone();
        host.name = HOST_PLANE.into();
        host.lines.truncate(1);
        XSpace {
            planes: vec![host, device],
            ..Default::default()
        }
    }

    fn collect(bytes: &[u8]) -> Result<Collected, ProfileError> {
        let mut sink = Collector::default();
        read(
            std::io::Cursor::new(bytes),
            bytes.len() as u64,
            &mut sink,
            &mut |_| true,
        )?;
        Ok(sink.finish())
    }

    #[test]
    fn gpu_kernel_events_are_measured_with_their_stats() {
        let bytes = gpu_space().encode_to_vec();
        let out = collect(&bytes).unwrap();
        assert_eq!(out.tier, Some(Tier::Device));
        assert_eq!(out.not_counted, 2, "the host's events");
        let m = &out.modules[0];
        assert_eq!((m.name.as_str(), m.program_id), ("jit_f", Some(42)));
        assert_eq!(m.executions(), 2);
        let op = &m.ops[0];
        assert_eq!(
            (op.name.as_str(), op.events, op.total_ps),
            ("fusion.3", 2, 6_000)
        );
    }

    #[test]
    fn every_cut_of_a_space_is_an_error_never_a_panic() {
        let bytes = gpu_space().encode_to_vec();
        for cut in 1..bytes.len() {
            if let Err(e) = collect(&bytes[..cut]) {
                assert!(matches!(e, ProfileError::Corrupt(_)), "{e:?}");
            }
        }
        assert!(collect(&bytes[..bytes.len() - 1]).is_err());
    }
}
