//! One snapshot of a pass-by-pass dump, read cheaply: a directory of 300 snapshots of
//! a 2 MB module is 600 MB of text, too much for the tree-sitter parse, so each line
//! is read once by a byte scan that relies on how XLA prints a module (one
//! instruction per line, a computation's header alone on its line, `}` closing it).
//!
//! Of each instruction it keeps what following it through the passes needs: where
//! its name and opcode are written, hashes of its operands' names (to find what took
//! its place when it is gone) and a hash of its line without `metadata={...}` (a pass
//! that only moves source locations changes nothing). A line that is not read as an
//! instruction still counts in its computation's hash, so no change goes unseen.

use std::hash::Hasher;
use std::ops::Range;

use memchr::memmem;
use rustc_hash::FxHasher;
use smallvec::SmallVec;

/// The hash every comparison here uses.
pub fn hash(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish()
}

/// An instruction line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedInstruction {
    /// The name without `%`, in bytes of the snapshot's text.
    pub name: Range<usize>,
    pub name_hash: u64,
    pub opcode: Range<usize>,
    pub opcode_hash: u64,
    /// Hashes of the operands' names, in order.
    pub operands: SmallVec<[u64; 4]>,
    /// Hash of the line without indentation and `metadata={...}`.
    pub line_hash: u64,
    pub is_root: bool,
}

/// A computation, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedComputation {
    pub name: Range<usize>,
    pub name_hash: u64,
    /// Of its header and every line (metadata left out): equal hashes, nothing changed.
    pub hash: u64,
    pub instructions: Vec<ScannedInstruction>,
}

/// Every computation of a snapshot, in text order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScannedSnapshot {
    pub computations: Vec<ScannedComputation>,
}

/// Reads a snapshot's text (never fails: what is not read as a computation or an
/// instruction is left out).
pub fn scan(text: &str) -> ScannedSnapshot {
    let bytes = text.as_bytes();
    let mut snapshot = ScannedSnapshot::default();
    let mut open: Option<(ScannedComputation, FxHasher)> = None;
    let mut scratch = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |n| start + n);
        let line = start..trim_end(bytes, start, end);
        start = end + 1;
        let indented = bytes
            .get(line.start)
            .is_some_and(|b| *b == b' ' || *b == b'\t');
        match (&mut open, indented) {
            (Some((computation, h)), true) => {
                let body = skip_blanks(bytes, line.start)..line.end;
                let line_hash = without_metadata(bytes, body.clone(), &mut scratch);
                h.write_u64(line_hash);
                if let Some(i) = instruction(bytes, body, line_hash) {
                    computation.instructions.push(i);
                }
            }
            (Some(_), false) if bytes[line.clone()].starts_with(b"}") => {
                if let Some((mut computation, h)) = open.take() {
                    computation.hash = h.finish();
                    snapshot.computations.push(computation);
                }
            }
            _ => {
                if let Some(computation) = header(bytes, line.clone()) {
                    let mut h = FxHasher::default();
                    h.write(&bytes[line]);
                    open = Some((computation, h));
                }
            }
        }
    }
    if let Some((mut computation, h)) = open {
        computation.hash = h.finish();
        snapshot.computations.push(computation);
    }
    snapshot
}

fn trim_end(bytes: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    end
}

fn skip_blanks(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && (bytes[at] == b' ' || bytes[at] == b'\t') {
        at += 1;
    }
    at
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// The end of the name starting at `at` (`at` itself when there is none).
fn name_end(bytes: &[u8], end: usize, mut at: usize) -> usize {
    while at < end && is_name_byte(bytes[at]) {
        at += 1;
    }
    at
}

/// `[ENTRY] [%]name ... {` at the start of a line: a computation's header.
fn header(bytes: &[u8], line: Range<usize>) -> Option<ScannedComputation> {
    let text = &bytes[line.clone()];
    if !text.ends_with(b"{") || text.starts_with(b"HloModule") {
        return None;
    }
    let mut at = line.start;
    if text.starts_with(b"ENTRY ") {
        at = skip_blanks(bytes, at + "ENTRY ".len());
    }
    if bytes.get(at) == Some(&b'%') {
        at += 1;
    }
    let end = name_end(bytes, line.end, at);
    (end > at).then(|| ScannedComputation {
        name: at..end,
        name_hash: hash(&bytes[at..end]),
        hash: 0,
        instructions: Vec::new(),
    })
}

/// `[ROOT] [%]name = shape opcode(operands), attributes`.
fn instruction(bytes: &[u8], line: Range<usize>, line_hash: u64) -> Option<ScannedInstruction> {
    let mut at = line.start;
    let is_root = bytes[line.clone()].starts_with(b"ROOT ");
    if is_root {
        at = skip_blanks(bytes, at + "ROOT ".len());
    }
    if bytes.get(at) == Some(&b'%') {
        at += 1;
    }
    let name = at..name_end(bytes, line.end, at);
    if name.is_empty() || !bytes[name.end..line.end].starts_with(b" = ") {
        return None;
    }
    let shape_end = shape_end(bytes, line.end, name.end + 3)?;
    let opcode_start = skip_blanks(bytes, shape_end);
    let opcode = opcode_start..name_end(bytes, line.end, opcode_start);
    if opcode.is_empty() || bytes.get(opcode.end) != Some(&b'(') {
        return None;
    }
    let operands = operands(bytes, line.end, opcode.end);
    Some(ScannedInstruction {
        name_hash: hash(&bytes[name.clone()]),
        name,
        opcode_hash: hash(&bytes[opcode.clone()]),
        opcode,
        operands,
        line_hash,
        is_root,
    })
}

/// The end of the shape at `at`: a tuple `(...)` (balanced), else up to a blank.
fn shape_end(bytes: &[u8], end: usize, at: usize) -> Option<usize> {
    if bytes.get(at) == Some(&b'(') {
        return closing(bytes, end, at).map(|close| close + 1);
    }
    let mut k = at;
    while k < end && bytes[k] != b' ' {
        k += 1;
    }
    (k > at).then_some(k)
}

/// The bracket that closes the one at `open` (`()`, `{}`, `[]` nested, strings
/// skipped), if on the line.
fn closing(bytes: &[u8], end: usize, open: usize) -> Option<usize> {
    let mut depth = 0u32;
    let mut k = open;
    while k < end {
        match bytes[k] {
            b'"' => k = string_end(bytes, end, k),
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
        k += 1;
    }
    None
}

/// The closing quote of the string opening at `open` (or the line's end).
fn string_end(bytes: &[u8], end: usize, open: usize) -> usize {
    let mut k = open + 1;
    while k < end {
        match bytes[k] {
            b'\\' => k += 1,
            b'"' => return k,
            _ => {}
        }
        k += 1;
    }
    end
}

/// Hashes of the names in `(%a, f32[2]{0} %b, ...)` at `open`: each operand's last word.
fn operands(bytes: &[u8], end: usize, open: usize) -> SmallVec<[u64; 4]> {
    let mut found = SmallVec::new();
    let Some(close) = closing(bytes, end, open) else {
        return found;
    };
    let mut piece = open + 1;
    let mut depth = 0u32;
    let mut k = open + 1;
    while k <= close {
        match bytes[k] {
            b'"' => k = string_end(bytes, close, k),
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' if k < close => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                push_operand(bytes, piece..k, &mut found);
                piece = k + 1;
            }
            _ => {}
        }
        k += 1;
    }
    push_operand(bytes, piece..close, &mut found);
    found
}

fn push_operand(bytes: &[u8], piece: Range<usize>, found: &mut SmallVec<[u64; 4]>) {
    let text = &bytes[piece];
    let word = text
        .rsplit(|b| *b == b' ')
        .find(|w| !w.is_empty())
        .unwrap_or_default();
    let word = word.strip_prefix(b"%").unwrap_or(word);
    if !word.is_empty() {
        found.push(hash(word));
    }
}

/// Hash of `line` with its `, metadata={...}` cut out (`scratch` holds the rest).
fn without_metadata(bytes: &[u8], line: Range<usize>, scratch: &mut Vec<u8>) -> u64 {
    let text = &bytes[line.clone()];
    let Some(at) = memmem::find(text, b", metadata={") else {
        return hash(text);
    };
    let open = line.start + at + ", metadata=".len();
    let close = closing(bytes, line.end, open).map_or(line.end, |c| c + 1);
    scratch.clear();
    scratch.extend_from_slice(&text[..at]);
    scratch.extend_from_slice(&bytes[close..line.end]);
    hash(scratch)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n\nFileNames\n1 \"a.py\"\n\n%fused (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n  ROOT %n = f32[4]{0} negate(%p), metadata={op_name=\"x}\" source_line=3}\n}\n\nENTRY %main (a: f32[4]) -> (f32[4], s32[]) {\n  %a = f32[4]{0} parameter(0), metadata={op_name=\"a\"}\n  %f.1 = f32[4]{0:T(4)} fusion(f32[4]{0} %a), kind=kLoop, calls=%fused\n  %c = s32[] constant(3)\n  ROOT %t = (f32[4]{0}, s32[]) tuple(%f.1, %c), sharding={{replicated}, {maximal device=0}}\n}\n";

    /// `computation: name opcode operands, ...` per computation.
    fn names(text: &str, s: &ScannedSnapshot) -> Vec<String> {
        s.computations
            .iter()
            .map(|c| {
                let instructions: Vec<String> = c
                    .instructions
                    .iter()
                    .map(|i| {
                        let (name, opcode) = (&text[i.name.clone()], &text[i.opcode.clone()]);
                        format!("{name} {opcode} {}", i.operands.len())
                    })
                    .collect();
                format!("{}: {}", &text[c.name.clone()], instructions.join(", "))
            })
            .collect()
    }

    #[test]
    fn reads_computations_instructions_and_operands() {
        let s = scan(TEXT);
        assert_eq!(
            names(TEXT, &s),
            [
                "fused: p parameter 1, n negate 1",
                "main: a parameter 1, f.1 fusion 1, c constant 1, t tuple 2"
            ]
        );
        let main = &s.computations[1];
        assert_eq!(main.instructions[1].operands[0], hash(b"a"));
        assert_eq!(
            main.instructions[3].operands.as_slice(),
            [hash(b"f.1"), hash(b"c")]
        );
        assert!(main.instructions[3].is_root && !main.instructions[2].is_root);
    }

    #[test]
    fn metadata_changes_nothing_and_anything_else_does() {
        let hashes = |s: &ScannedSnapshot| -> Vec<(u64, Vec<u64>)> {
            let lines =
                |c: &ScannedComputation| c.instructions.iter().map(|i| i.line_hash).collect();
            s.computations.iter().map(|c| (c.hash, lines(c))).collect()
        };
        let base = scan(TEXT);
        let moved = TEXT.replace("op_name=\"a\"", "op_name=\"b\" source_line=9");
        let dropped = TEXT.replace(", metadata={op_name=\"a\"}", "");
        for same in [moved, dropped] {
            assert_eq!(hashes(&scan(&same)), hashes(&base), "{same}");
        }
        let changed = scan(&TEXT.replace("negate(%p)", "abs(%p)"));
        assert_ne!(changed.computations[0].hash, base.computations[0].hash);
        assert_eq!(changed.computations[1].hash, base.computations[1].hash);
        assert_ne!(
            changed.computations[0].instructions[1].line_hash,
            base.computations[0].instructions[1].line_hash
        );
    }

    #[test]
    fn odd_lines_are_left_out_without_panicking() {
        for text in [
            "",
            "%c {\n  %x = \n  %y = (f32[] negate(\n  ROOT\n}",
            "ENTRY {\n\"\n}\n",
            "%c (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0), metadata={op_name=\"unterminated",
        ] {
            let _ = scan(text);
        }
        let s = scan("%c (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n");
        assert_eq!(s.computations.len(), 1);
        assert_eq!(s.computations[0].instructions.len(), 1);
    }
}
