//! The Chrome trace XProf and `jax.profiler` write (`*.trace.json.gz`), read as a
//! stream: serde visits one event at a time, and nothing but its op fields is kept.
//!
//! The layout is TSL's `TraceContainerToJson` (`xla/tsl/profiler/convert/
//! trace_events_to_json.cc`): `{"displayTimeUnit":"ns", "metadata":{...},
//! "traceEvents":[...]}`, first the `"M"` events naming each process (a plane:
//! `/host:CPU`, `/device:GPU:0`) and thread (a line), then one `"X"` event per XEvent
//! with `ts` and `dur` in microseconds (picoseconds printed with full precision) and
//! the stats as string `args` (`hlo_op`, `hlo_module`, `run_id`, `program_id`); a
//! last `{}`. The array form (`[...]`) of the Chrome trace format is read too, and
//! numbers are taken where a writer puts them instead of strings.

use std::cell::Cell;
use std::io::{BufReader, Read};
use std::rc::Rc;

use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

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
        cancelled: false,
        saw_events: false,
    };
    let result = if gzip {
        let decoder =
            flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, counting));
        parse(BufReader::with_capacity(1 << 16, decoder), &mut state)
    } else {
        parse(BufReader::with_capacity(1 << 16, counting), &mut state)
    };
    if state.cancelled {
        return Err(ProfileError::Cancelled);
    }
    result.map_err(|e| explain(e, gzip))?;
    if !state.saw_events {
        return Err(ProfileError::Corrupt(
            "no traceEvents array: not a Chrome trace".to_string(),
        ));
    }
    Ok(())
}

fn parse<R: Read>(reader: R, state: &mut State) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    TraceSeed(state).deserialize(&mut de)?;
    de.end()
}

/// One line for a JSON or gzip failure.
fn explain(e: serde_json::Error, gzip: bool) -> ProfileError {
    use serde_json::error::Category;
    let at = format!("line {}, column {}", e.line(), e.column());
    ProfileError::Corrupt(match e.classify() {
        Category::Io => {
            let io: std::io::Error = e.into();
            match (io.kind(), gzip) {
                (std::io::ErrorKind::UnexpectedEof, true) => {
                    "the gzip stream ends early (truncated?)".to_string()
                }
                (_, true) => format!("broken gzip data: {io}"),
                (_, false) => io.to_string(),
            }
        }
        Category::Eof => format!("the JSON ends early, at {at} (truncated?)"),
        Category::Syntax | Category::Data => format!("at {at}: {e}"),
    })
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
    cancelled: bool,
    saw_events: bool,
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
                        self.threads.insert((e.pid, e.tid), name);
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
        if !(self.progress)(done) {
            self.cancelled = true;
        }
        !self.cancelled
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

/// The fields of one event that matter.
#[derive(Default)]
struct Event {
    ph: u8,
    pid: u64,
    tid: u64,
    ts: f64,
    dur: f64,
    meta: MetaName,
    args: Args,
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
struct Args {
    hlo_op: Option<String>,
    hlo_module: Option<String>,
    run_id: Option<String>,
    program_id: Option<i64>,
    /// A process's or thread's name (`"M"` events).
    name: Option<String>,
}

/// The whole file: `{"traceEvents": [...], ...}` or `[...]`.
struct TraceSeed<'a, 's>(&'a mut State<'s>);

impl<'de> DeserializeSeed<'de> for TraceSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TraceSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a Chrome trace: an object with traceEvents, or an array of events")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::TraceEvents => map.next_value_seed(EventsSeed(&mut *self.0))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        EventsSeed(self.0).visit_seq(seq)
    }
}

/// The `traceEvents` array.
struct EventsSeed<'a, 's>(&'a mut State<'s>);

impl<'de> DeserializeSeed<'de> for EventsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.saw_events = true;
        while let Some(event) = seq.next_element::<Event>()? {
            self.0.take(event);
            if !self.0.report() {
                return Err(de::Error::custom("cancelled"));
            }
        }
        Ok(())
    }
}

/// The keys read, of the trace, an event and its args; any other is skipped.
enum Key {
    TraceEvents,
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
                    "traceEvents" => Key::TraceEvents,
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

impl<'de> de::Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Event, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Event;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a trace event (an object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
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

impl<'de> de::Deserialize<'de> for Args {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Args, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Args;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an event's args (an object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Args, A::Error> {
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
enum Scalar {
    Text(String),
    Int(i128),
    Float(f64),
    Other,
}

impl Scalar {
    fn text(self) -> Option<String> {
        match self {
            Scalar::Text(s) => Some(s),
            Scalar::Int(n) => Some(n.to_string()),
            Scalar::Float(x) => Some(x.to_string()),
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

impl<'de> de::Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(s.to_string()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Scalar, E> {
                Ok(Scalar::Text(s))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Scalar, E> {
                Ok(Scalar::Int(n.into()))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Scalar, E> {
                Ok(Scalar::Int(n.into()))
            }
            fn visit_f64<E: de::Error>(self, x: f64) -> Result<Scalar, E> {
                Ok(Scalar::Float(x))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
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
        assert!(e.starts_with("at line 1, column 1"), "{e}");
    }
}
