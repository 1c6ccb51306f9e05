//! The Chrome trace XProf and `jax.profiler` write (`*.trace.json.gz`), read as a
//! stream: a scanner ([`Framer`]) finds where each event of the `traceEvents` array
//! begins and ends in the decompressed bytes, serde reads that one event from its
//! slice (strings borrowed, not copied), and nothing but its op fields is kept. Serde
//! reading the whole stream itself went byte by byte through `io::Read` at a third
//! of the speed.
//!
//! The layout is TSL's `TraceContainerToJson` (`xla/tsl/profiler/convert/
//! trace_events_to_json.cc`): `{"displayTimeUnit":"ns", "metadata":{...},
//! "traceEvents":[...]}`, first the `"M"` events naming each process (a plane:
//! `/host:CPU`, `/device:GPU:0`) and thread (a line), then one `"X"` event per XEvent
//! with `ts` and `dur` in microseconds (picoseconds printed with full precision) and
//! the stats as string `args` (`hlo_op`, `hlo_module`, `run_id`, `program_id`); a
//! last `{}`. The array form (`[...]`) of the Chrome trace format is read too, and
//! numbers are taken where a writer puts them instead of strings.

use std::borrow::Cow;
use std::cell::Cell;
use std::io::{BufReader, Read};
use std::rc::Rc;

use rustc_hash::FxHashMap;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::collect::{line_tier, Collector, OpEvent};
use super::xplane::{DEVICE_PLANE_PREFIXES, HOST_PLANE};
use super::{ProfileError, Tier};

/// Counts the bytes read from the file (before decompression), for progress.
struct Counting<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// How often progress is told (bytes of the file).
const PROGRESS_EVERY: u64 = 1 << 20;

/// Reads a Chrome trace from `reader` into `sink`.
pub(crate) fn read<R: Read>(
    reader: R,
    gzip: bool,
    sink: &mut Collector,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<(), ProfileError> {
    let read = Rc::new(Cell::new(0));
    let counting = Counting {
        inner: reader,
        read: read.clone(),
    };
    let mut state = State {
        sink,
        processes: FxHashMap::default(),
        threads: FxHashMap::default(),
        tiers: FxHashMap::default(),
        base_us: None,
        read,
        next_report: PROGRESS_EVERY,
        progress,
    };
    if gzip {
        let decoder =
            flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, counting));
        frame(Framer::new(decoder, true), &mut state)
    } else {
        frame(Framer::new(counting, false), &mut state)
    }
}

/// Every event of the stream into `state`.
fn frame<R: Read>(mut framer: Framer<R>, state: &mut State) -> Result<(), ProfileError> {
    while let Some((start, end)) = framer.next_event()? {
        let event: Event = serde_json::from_slice(&framer.buf[start..end]).map_err(|e| {
            ProfileError::Corrupt(format!(
                "in the event at byte {}: {e}",
                framer.offset + start as u64
            ))
        })?;
        state.take(event);
        if !state.report() {
            return Err(ProfileError::Cancelled);
        }
    }
    Ok(())
}

/// Finds the events of a Chrome trace in a byte stream: the elements of the
/// top-level `traceEvents` array (or of a top-level array), as ranges of [`Self::buf`].
/// It follows strings, escapes and nesting only; serde checks each event, and what
/// lies between events is skipped. The stream is read to its end, past the JSON, so
/// that gzip checks its trailer (a file cut by a few bytes is an error, not a trace).
struct Framer<R> {
    reader: R,
    /// The stream is gzip's: a read error is the file's, not the disk's.
    gzip: bool,
    buf: Vec<u8>,
    /// Bytes of the stream before `buf[0]`.
    offset: u64,
    pos: usize,
    eof: bool,
    depth: u32,
    in_string: bool,
    /// Where the string being read starts (the key `traceEvents` is looked for).
    string_start: usize,
    /// The last string read at depth 1 is `"traceEvents"`.
    events_key: bool,
    /// The depth the events sit at, once their array was entered.
    events_depth: Option<u32>,
    /// The event being read starts here.
    event_start: Option<usize>,
    started: bool,
    closed: bool,
}

/// How much the framer reads at a time.
const CHUNK: usize = 1 << 18;

impl<R: Read> Framer<R> {
    fn new(reader: R, gzip: bool) -> Framer<R> {
        Framer {
            reader,
            gzip,
            buf: Vec::with_capacity(2 * CHUNK),
            offset: 0,
            pos: 0,
            eof: false,
            depth: 0,
            in_string: false,
            string_start: 0,
            events_key: false,
            events_depth: None,
            event_start: None,
            started: false,
            closed: false,
        }
    }

    fn corrupt(&self, what: impl std::fmt::Display) -> ProfileError {
        ProfileError::Corrupt(format!("at byte {}: {what}", self.offset + self.pos as u64))
    }

    /// Drops what was read and reads more; `false` at the end of the stream.
    fn refill(&mut self) -> Result<bool, ProfileError> {
        let mut keep = self.event_start.unwrap_or(self.pos);
        if self.in_string {
            keep = keep.min(self.string_start);
        }
        self.buf.drain(..keep);
        self.offset += keep as u64;
        self.pos -= keep;
        self.string_start = self.string_start.saturating_sub(keep);
        if let Some(start) = &mut self.event_start {
            *start -= keep;
        }
        let filled = self.buf.len();
        self.buf.resize(filled + CHUNK, 0);
        let n = loop {
            match self.reader.read(&mut self.buf[filled..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(filled);
                    return Err(match (self.gzip, e.kind()) {
                        (true, std::io::ErrorKind::UnexpectedEof) => ProfileError::Corrupt(
                            "the gzip stream ends early (truncated?)".to_string(),
                        ),
                        (true, _) => ProfileError::Corrupt(format!("broken gzip data: {e}")),
                        (false, _) => ProfileError::io(e),
                    });
                }
            }
        };
        self.buf.truncate(filled + n);
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// The next event's range in `buf`, or `None` after the last.
    fn next_event(&mut self) -> Result<Option<(usize, usize)>, ProfileError> {
        loop {
            if self.pos >= self.buf.len() {
                if !self.refill()? {
                    return self.finish().map(|()| None);
                }
                continue;
            }
            if self.in_string {
                let rest = &self.buf[self.pos..];
                match memchr::memchr2(b'"', b'\\', rest) {
                    None => self.pos = self.buf.len(),
                    Some(at) if rest[at] == b'\\' => {
                        if self.pos + at + 1 >= self.buf.len() {
                            // The escaped byte is in the next chunk.
                            self.pos += at;
                            if !self.refill()? {
                                return Err(self.corrupt("the JSON ends early (truncated?)"));
                            }
                            continue;
                        }
                        self.pos += at + 2;
                    }
                    Some(at) => {
                        self.pos += at;
                        self.in_string = false;
                        if self.depth == 1 {
                            self.events_key =
                                &self.buf[self.string_start..self.pos] == b"traceEvents";
                        }
                        self.pos += 1;
                    }
                }
                continue;
            }
            let b = self.buf[self.pos];
            let at = self.pos;
            self.pos += 1;
            if self.closed {
                if !b.is_ascii_whitespace() {
                    return Err(self.corrupt("more after the end of the JSON"));
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    self.string_start = self.pos;
                }
                b'{' | b'[' => {
                    if !self.started {
                        self.started = true;
                        if b == b'[' {
                            self.events_depth = Some(1);
                        }
                    } else if b == b'[' && self.depth == 1 && self.events_key {
                        self.events_depth.get_or_insert(2);
                    } else if b == b'{' && Some(self.depth) == self.events_depth {
                        self.event_start = Some(at);
                    }
                    self.depth += 1;
                }
                b'}' | b']' => {
                    if self.depth == 0 {
                        return Err(self.corrupt(format!("an unmatched '{}'", b as char)));
                    }
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.closed = true;
                    }
                    if Some(self.depth) == self.events_depth {
                        if let Some(start) = self.event_start.take() {
                            return Ok(Some((start, self.pos)));
                        }
                    }
                }
                _ if !self.started && !b.is_ascii_whitespace() => {
                    self.pos = at;
                    return Err(self.corrupt("not JSON (a Chrome trace starts with { or [)"));
                }
                _ => {}
            }
        }
    }

    /// The end of the stream: the JSON must be whole, and a trace.
    fn finish(&self) -> Result<(), ProfileError> {
        if self.started && !self.closed {
            return Err(self.corrupt("the JSON ends early (truncated?)"));
        }
        if self.events_depth.is_none() {
            return Err(ProfileError::Corrupt(
                "no traceEvents array: not a Chrome trace".to_string(),
            ));
        }
        Ok(())
    }
}

/// What the reader keeps between events.
struct State<'s> {
    sink: &'s mut Collector,
    /// Each process's tier, from its `process_name` (`None`: a plane of no ops).
    processes: FxHashMap<u64, Option<Tier>>,
    threads: FxHashMap<(u64, u64), String>,
    /// Each thread's tier, found once ([`line_tier`]).
    tiers: FxHashMap<(u64, u64), Option<Tier>>,
    /// The first op event's `ts`: times are kept relative to it, in picoseconds.
    base_us: Option<f64>,
    read: Rc<Cell<u64>>,
    next_report: u64,
    progress: &'s mut dyn FnMut(u64) -> bool,
}

impl State<'_> {
    fn tier(&mut self, pid: u64, tid: u64) -> Option<Tier> {
        if let Some(t) = self.tiers.get(&(pid, tid)) {
            return *t;
        }
        // A process without a name is taken as the host's.
        let plane = self
            .processes
            .get(&pid)
            .copied()
            .unwrap_or(Some(Tier::Host));
        let line = self.threads.get(&(pid, tid)).map_or("", String::as_str);
        let tier = plane.and_then(|p| line_tier(p, line));
        self.tiers.insert((pid, tid), tier);
        tier
    }

    fn take(&mut self, e: Event) {
        match e.ph {
            b'M' => {
                let name = e.args.name.unwrap_or_default();
                match e.meta {
                    MetaName::Process => {
                        self.processes.insert(e.pid, plane_tier(&name));
                    }
                    MetaName::Thread => {
                        self.threads.insert((e.pid, e.tid), name.into_owned());
                    }
                    MetaName::Other => {}
                }
                self.tiers.clear();
            }
            b'X' => {
                let (Some(op), Some(module)) = (&e.args.hlo_op, &e.args.hlo_module) else {
                    return;
                };
                let Some(tier) = self.tier(e.pid, e.tid) else {
                    return;
                };
                let base = *self.base_us.get_or_insert(e.ts);
                self.sink.add(OpEvent {
                    tier,
                    track: (e.pid, e.tid),
                    start_ps: ((e.ts - base) * 1e6).round() as i64,
                    duration_ps: (e.dur * 1e6).round().max(0.0) as i64,
                    module,
                    program_id: e.args.program_id,
                    op,
                    run: e.args.run_id.as_deref(),
                });
            }
            _ => {}
        }
    }

    /// Tells progress when a MB more was read; `false` when it asked to stop.
    fn report(&mut self) -> bool {
        let done = self.read.get();
        if done < self.next_report {
            return true;
        }
        self.next_report = done + PROGRESS_EVERY;
        (self.progress)(done)
    }
}

fn plane_tier(name: &str) -> Option<Tier> {
    if name == HOST_PLANE {
        Some(Tier::Host)
    } else if DEVICE_PLANE_PREFIXES.iter().any(|p| name.starts_with(p)) {
        Some(Tier::Device)
    } else {
        None
    }
}

/// The fields of one event that matter (strings borrowed from the event's bytes).
#[derive(Default)]
struct Event<'a> {
    ph: u8,
    pid: u64,
    tid: u64,
    ts: f64,
    dur: f64,
    meta: MetaName,
    args: Args<'a>,
}

/// What an `"M"` event names.
#[derive(Default, Clone, Copy)]
enum MetaName {
    Process,
    Thread,
    #[default]
    Other,
}

#[derive(Default)]
struct Args<'a> {
    hlo_op: Option<Cow<'a, str>>,
    hlo_module: Option<Cow<'a, str>>,
    run_id: Option<Cow<'a, str>>,
    program_id: Option<i64>,
    /// A process's or thread's name (`"M"` events).
    name: Option<Cow<'a, str>>,
}

/// The keys read, of an event and its args; any other is skipped.
enum Key {
    Ph,
    Pid,
    Tid,
    Ts,
    Dur,
    Name,
    Args,
    HloOp,
    HloModule,
    RunId,
    ProgramId,
    Other,
}

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(match s {
                    "ph" => Key::Ph,
                    "pid" => Key::Pid,
                    "tid" => Key::Tid,
                    "ts" => Key::Ts,
                    "dur" => Key::Dur,
                    "name" => Key::Name,
                    "args" => Key::Args,
                    "hlo_op" => Key::HloOp,
                    "hlo_module" => Key::HloModule,
                    "run_id" => Key::RunId,
                    "program_id" => Key::ProgramId,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> de::Deserialize<'de> for Event<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Event<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Event<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a trace event (an object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event<'de>, A::Error> {
                let mut e = Event::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Ph => e.ph = map.next_value::<Scalar>()?.phase(),
                        Key::Pid => e.pid = map.next_value::<Scalar>()?.id(),
                        Key::Tid => e.tid = map.next_value::<Scalar>()?.id(),
                        Key::Ts => e.ts = map.next_value::<Scalar>()?.number(),
                        Key::Dur => e.dur = map.next_value::<Scalar>()?.number(),
                        Key::Name => e.meta = map.next_value::<Scalar>()?.meta_name(),
                        Key::Args => e.args = map.next_value::<Args>()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(e)
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> de::Deserialize<'de> for Args<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Args<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Args<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an event's args (an object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Args<'de>, A::Error> {
                let mut a = Args::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::HloOp => a.hlo_op = map.next_value::<Scalar>()?.text(),
                        Key::HloModule => a.hlo_module = map.next_value::<Scalar>()?.text(),
                        Key::RunId => a.run_id = map.next_value::<Scalar>()?.text(),
                        Key::ProgramId => {
                            a.program_id = map
                                .next_value::<Scalar>()?
                                .text()
                                .and_then(|t| t.parse().ok())
                        }
                        Key::Name => a.name = map.next_value::<Scalar>()?.text(),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(a)
            }
        }
        d.deserialize_map(V)
    }
}

/// A value read leniently: a string, a number, or anything else (skipped).
enum Scalar<'a> {
    Text(Cow<'a, str>),
    Int(i128),
    Float(f64),
    Other,
}

impl<'a> Scalar<'a> {
    fn text(self) -> Option<Cow<'a, str>> {
        match self {
            Scalar::Text(s) => Some(s),
            Scalar::Int(n) => Some(n.to_string().into()),
            Scalar::Float(x) => Some(x.to_string().into()),
            Scalar::Other => None,
        }
    }

    fn number(self) -> f64 {
        match self {
            Scalar::Text(s) => s.trim().parse().unwrap_or(0.0),
            Scalar::Int(n) => n as f64,
            Scalar::Float(x) => x,
            Scalar::Other => 0.0,
        }
    }

    /// A pid or tid: a number, or a string (parsed, else hashed).
    fn id(self) -> u64 {
        match self {
            Scalar::Int(n) => n as u64,
            Scalar::Float(x) => x as u64,
            Scalar::Text(s) => s.parse().unwrap_or_else(|_| {
                use std::hash::{BuildHasher, BuildHasherDefault};
                BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(&s)
            }),
            Scalar::Other => 0,
        }
    }

    fn phase(self) -> u8 {
        match self {
            Scalar::Text(s) => s.bytes().next().unwrap_or(0),
            _ => 0,
        }
    }

    fn meta_name(self) -> MetaName {
        match self {
            Scalar::Text(s) if s == "process_name" => MetaName::Process,
            Scalar::Text(s) if s == "thread_name" => MetaName::Thread,
            _ => MetaName::Other,
        }
    }
}

impl<'de> de::Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Text(Cow::Owned(s.to_string())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Text(Cow::Owned(s)))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Int(n.into()))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Int(n.into()))
            }
            fn visit_f64<E: de::Error>(self, x: f64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Float(x))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar<'de>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar<'de>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::collect::Collected;

    fn collect(text: &str) -> Result<Collected, ProfileError> {
        let mut sink = Collector::default();
        read(text.as_bytes(), false, &mut sink, &mut |_| true)?;
        Ok(sink.finish())
    }

    fn op(ts: f64, dur: f64, tid: u32, op: &str, module: &str, run: &str) -> String {
        format!(
            r#"{{"ph":"X","pid":PID,"tid":{tid},"ts":{ts},"dur":{dur},"name":"{op}","args":{{"hlo_op":"{op}","hlo_module":"{module}","run_id":"{run}"}}}},"#
        )
    }

    #[test]
    fn device_kernels_are_measured_and_host_launches_not_counted() {
        let host = op(0.0, 10.0, 1, "fusion", "jit_f", "1").replace("PID", "701");
        let kernel = op(2.0, 4.5, 7, "fusion", "jit_f", "1").replace("PID", "1");
        let derived = op(2.0, 4.5, 9, "fusion", "jit_f", "1").replace("PID", "1");
        let text = format!(
            r#"{{"traceEvents":[
            {{"ph":"M","pid":701,"name":"process_name","args":{{"name":"/host:CPU"}}}},
            {{"ph":"M","pid":1,"name":"process_name","args":{{"name":"/device:GPU:0"}}}},
            {{"ph":"M","pid":1,"tid":9,"name":"thread_name","args":{{"name":"XLA Ops"}}}},
            {host}{kernel}{derived}{{}}]}}"#
        );
        let out = collect(&text).unwrap();
        assert_eq!(out.tier, Some(Tier::Device));
        assert_eq!(out.not_counted, 2);
        assert_eq!(out.modules[0].ops[0].total_ps, 4_500_000);
    }

    #[test]
    fn the_array_form_numbers_for_strings_and_program_ids_are_read() {
        let text = r#"[
            {"ph":"X","pid":1,"tid":1,"ts":5,"dur":2,"args":{"hlo_op":"a","hlo_module":"jit_f","program_id":7,"run_id":3}},
            {"ph":"X","pid":1,"tid":1,"ts":9,"dur":1,"args":{"hlo_op":"a","hlo_module":"jit_f","program_id":"8","run_id":3}},
            {"ph":"B","pid":1,"tid":1,"ts":9}
        ]"#;
        let out = collect(text).unwrap();
        let ids: Vec<Option<i64>> = out.modules.iter().map(|m| m.program_id).collect();
        assert_eq!(ids, [Some(7), Some(8)]);
        assert_eq!(out.modules[0].ops[0].total_ps, 2_000_000);
    }

    #[test]
    fn events_are_found_across_chunks_strings_and_escapes() {
        // Braces and escaped quotes inside strings, events longer than a chunk.
        let long = "x".repeat(3 * CHUNK);
        let text = format!(
            r#"{{"metadata":{{"k":"a }} ] \" {{"}},"traceEvents":[
            {{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"{long}","args":{{"hlo_op":"a\"}}{{","hlo_module":"jit_f","run_id":"1"}}}},
            {{"ph":"X","pid":1,"tid":1,"ts":4,"dur":3,"args":{{"hlo_op":"b","hlo_module":"jit_f","run_id":"1"}}}}
            ]}}"#
        );
        let out = collect(&text).unwrap();
        let names: Vec<&str> = out.modules[0].ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["b", "a\"}{"]);
    }

    #[test]
    fn what_is_not_a_trace_says_so() {
        let e = collect(r#"{"displayTimeUnit":"ns"}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "no traceEvents array: not a Chrome trace");
        let e = collect(r#"{"traceEvents":[{"ph":"X","#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("ends early") && e.contains("truncated"), "{e}");
        let e = collect("<html>").unwrap_err().to_string();
        assert_eq!(e, "at byte 0: not JSON (a Chrome trace starts with { or [)");
        let e = collect(r#"{"traceEvents":[{"ph":"X","ts":}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("in the event at byte 16: "), "{e}");
    }
}
