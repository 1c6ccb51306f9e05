//! XLA's `*-buffer-assignment.txt`: every allocation (`allocation 3: size 2048,
//! parameter 1, shape |f32[8,64]| at ShapeIndex {}, maybe-live-out:`) and the values
//! placed in it (` value: <35 h0.1 @0> (size=2048,offset=0): f32[8,64]{1,0}`), as
//! `BufferAllocation::ToString` prints them.
//!
//! Lines of other sections (statistics, used values) are skipped; a line that starts
//! like an allocation or a value but cannot be read becomes a [`Note`], and a file
//! cut short keeps what was read.

use super::Note;
use std::sync::Arc;

/// What an allocation is, from the words of its header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllocationKind {
    /// `parameter N`: entry parameter N.
    pub parameter: Option<u64>,
    /// `at ShapeIndex {0,1}`: the part of the parameter it holds.
    pub parameter_index: Option<String>,
    /// `output shape is |...|`: it holds the module's result (its tuple table).
    pub output: bool,
    pub constant: bool,
    pub thread_local: bool,
    pub maybe_live_out: bool,
    /// Said by XLA (`preallocated-temp`); [`Allocation::is_preallocated_temp`] also
    /// derives it.
    pub preallocated_temp: bool,
    /// `color N` (memory space); 0 when not printed.
    pub color: u64,
}

/// One value placed in an allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignedValue {
    /// XLA's value id.
    pub id: u64,
    /// The defining instruction's name (without `%`), shared with the report's
    /// buffers and schedule.
    pub instruction: Arc<str>,
    /// `{}`, `{1}`, `{0,2}`: where in the instruction's shape.
    pub shape_index: Arc<str>,
    /// A `(phi)` value of a loop or conditional.
    pub phi: bool,
    pub offset: u64,
    pub size: u64,
    /// The shape as printed (shared among values of one shape).
    pub shape: Arc<str>,
}

/// One allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub index: u64,
    pub size: u64,
    pub kind: AllocationKind,
    pub values: Vec<AssignedValue>,
}

impl Allocation {
    /// XLA's `IsPreallocatedTempBuffer`: not a parameter, not live out, not a
    /// constant, not thread-local.
    pub fn is_preallocated_temp(&self) -> bool {
        let k = &self.kind;
        k.parameter.is_none() && !k.maybe_live_out && !k.constant && !k.thread_local
    }

    /// `parameter 0`, `output`, `temp`, `constant`, `thread-local`, `live-out`: the
    /// one word a listing shows.
    pub fn kind_name(&self) -> &'static str {
        let k = &self.kind;
        match () {
            _ if k.parameter.is_some() => "parameter",
            _ if k.output => "output",
            _ if k.constant => "constant",
            _ if k.thread_local => "thread-local",
            _ if k.maybe_live_out => "maybe-live-out",
            _ => "temp",
        }
    }
}

/// A whole file, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BufferAssignment {
    pub allocations: Vec<Allocation>,
    pub notes: Vec<Note>,
}

impl BufferAssignment {
    /// Reads the file's text; `file` names it in notes.
    pub fn parse(text: &str, file: &str) -> BufferAssignment {
        let mut out = BufferAssignment::default();
        let note = |line: usize, message: String| Note {
            file: Some(file.to_string()),
            line: Some(line),
            message,
        };
        for (i, line) in text.lines().enumerate() {
            if let Some(rest) = line.strip_prefix("allocation ") {
                match parse_header(rest) {
                    Some(a) => out.allocations.push(a),
                    None => out
                        .notes
                        .push(note(i + 1, format!("unreadable allocation: {line}"))),
                }
            } else if let Some(rest) = line.trim_start().strip_prefix("value: ") {
                match (parse_value(rest), out.allocations.last_mut()) {
                    (Some(v), Some(a)) => a.values.push(v),
                    (None, _) => out
                        .notes
                        .push(note(i + 1, format!("unreadable value: {}", line.trim()))),
                    (Some(_), None) => out
                        .notes
                        .push(note(i + 1, "a value before any allocation".into())),
                }
            }
        }
        if out.allocations.is_empty() {
            out.notes.push(Note {
                file: Some(file.to_string()),
                line: None,
                message: "no allocation found (not a buffer assignment, or cut short)".into(),
            });
        }
        out
    }
}

/// `3: size 2048, parameter 1, shape |f32[8,64]| at ShapeIndex {}, maybe-live-out:`
fn parse_header(rest: &str) -> Option<Allocation> {
    let (index, rest) = rest.split_once(": size ")?;
    let index = index.trim().parse().ok()?;
    let rest = rest.trim_end().strip_suffix(':').unwrap_or(rest.trim_end());
    let rest = without_shapes(rest);
    let mut parts = rest.split(", ");
    let size = parts.next()?.trim().parse().ok()?;
    let mut kind = AllocationKind::default();
    for part in parts {
        let part = part.trim();
        if let Some(n) = part.strip_prefix("parameter ") {
            kind.parameter = n.trim().parse().ok();
        } else if let Some(at) = part.strip_prefix("shape || at ShapeIndex ") {
            kind.parameter_index = Some(at.trim().to_string());
        } else if part.starts_with("output shape is") {
            kind.output = true;
        } else if let Some(c) = part.strip_prefix("color ") {
            kind.color = c.trim().parse().unwrap_or(0);
        } else {
            match part {
                "constant" => kind.constant = true,
                "thread-local" => kind.thread_local = true,
                "maybe-live-out" => kind.maybe_live_out = true,
                "preallocated-temp" => kind.preallocated_temp = true,
                _ => {}
            }
        }
    }
    Some(Allocation {
        index,
        size,
        kind,
        values: Vec::new(),
    })
}

/// The header with the text between `|` pairs (shapes, which hold commas) removed.
fn without_shapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for c in text.chars() {
        if c == '|' {
            inside = !inside;
            out.push(c);
        } else if !inside {
            out.push(c);
        }
    }
    out
}

/// `<35 h0.1 @0> (size=2048,offset=0): f32[8,64]{1,0}`, `<47 arg_tuple.3{2} (phi) @0> ...`
fn parse_value(rest: &str) -> Option<AssignedValue> {
    let inner = rest.strip_prefix('<')?;
    let (inside, after) = inner.split_once('>')?;
    let mut words = inside.split_whitespace();
    let id = words.next()?.parse().ok()?;
    let named = words.next()?;
    let phi = inside.contains("(phi)");
    let (instruction, shape_index) = match named.find('{') {
        Some(at) => (&named[..at], &named[at..]),
        None => (named, "{}"),
    };
    let after = after.trim_start().strip_prefix("(size=")?;
    let (size, after) = after.split_once(",offset=")?;
    let (offset, shape) = after.split_once(')')?;
    Some(AssignedValue {
        id,
        instruction: instruction.into(),
        shape_index: shape_index.into(),
        phi,
        offset: offset.trim().parse().ok()?,
        size: size.trim().parse().ok()?,
        shape: shape.trim_start_matches(':').trim().into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_headers_values_and_notes() {
        let text = "BufferAssignment:\nallocation 0: size 32, parameter 1, shape |(f32[2], f32[3])| at ShapeIndex {1}, maybe-live-out:\n value: <7 p.1{1} @0> (size=12,offset=0): f32[3]{0}\nallocation 1: size 8, preallocated-temp:\n value: <8 t (phi) @0> (size=8,offset=0): f32[2]{0}\n value: <broken\nallocation x\n";
        let ba = BufferAssignment::parse(text, "f.txt");
        assert_eq!(ba.allocations.len(), 2);
        let a = &ba.allocations[0];
        assert_eq!(a.kind.parameter, Some(1));
        assert_eq!(a.kind.parameter_index.as_deref(), Some("{1}"));
        assert!(a.kind.maybe_live_out && !a.is_preallocated_temp());
        assert_eq!(&*a.values[0].instruction, "p.1");
        assert_eq!(&*a.values[0].shape_index, "{1}");
        assert!(ba.allocations[1].values[0].phi && ba.allocations[1].is_preallocated_temp());
        assert_eq!(ba.notes.len(), 2, "{:?}", ba.notes);
        // The broken value (line 6) and the allocation without a number (line 7).
        let lines: Vec<Option<usize>> = ba.notes.iter().map(|n| n.line).collect();
        assert_eq!(lines, [Some(6), Some(7)]);
    }
}
