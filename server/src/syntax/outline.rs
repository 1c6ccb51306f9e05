//! The outline of a chunk, from a byte scan without parsing: the name of the
//! computation (or module) it defines, whether it is the `ENTRY`, and the computations
//! it calls (`calls=`, `to_apply=`, `branch_computations={...}`, ...).
//!
//! This is what the module needs to know about every computation before it builds any
//! of them (its cross-references: who defines which name, who calls whom), so that a
//! request about one computation costs one computation, not the file. It reads what the
//! grammar reads: an attribute whose key is one of [`COMPUTATION_KEYS`] and whose value
//! is a name or a `{...}` list of names, outside strings, comments and other `{...}`
//! blocks (metadata, backend configs).

use super::ChunkKind;

/// Attribute keys whose value names computations (the grammar's `COMPUTATION_KEYS`).
pub const COMPUTATION_KEYS: &[&str] = &[
    "calls",
    "to_apply",
    "condition",
    "body",
    "select",
    "scatter",
    "true_computation",
    "false_computation",
    "branch_computations",
    "called_computations",
    "async_wrapped_computation",
];

/// A name and its bytes in the chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameAt {
    /// Without `%` (shared with the module's name index).
    pub name: std::sync::Arc<str>,
    /// The name as written (with `%`), relative to the chunk.
    pub start: u32,
    pub end: u32,
}

/// One computation named by an attribute of this chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRef {
    /// Index into [`COMPUTATION_KEYS`].
    pub key: u8,
    pub callee: NameAt,
}

impl CallRef {
    pub fn attribute(&self) -> &'static str {
        COMPUTATION_KEYS[self.key as usize]
    }
}

/// See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    /// The computation's name (a computation chunk) or the module's (a header).
    pub name: Option<NameAt>,
    /// A computation marked `ENTRY`.
    pub is_entry: bool,
    /// Computations this chunk calls, in text order.
    pub calls: Vec<CallRef>,
}

impl Outline {
    /// The same name, `ENTRY` mark and calls (attribute and callee, in order), wherever
    /// they are written: what the module's cross-references are made of.
    pub fn same_references(&self, other: &Outline) -> bool {
        let name = |o: &Outline| o.name.as_ref().map(|n| n.name.clone());
        name(self) == name(other)
            && self.is_entry == other.is_entry
            && self.calls.len() == other.calls.len()
            && self
                .calls
                .iter()
                .zip(&other.calls)
                .all(|(a, b)| a.key == b.key && a.callee.name == b.callee.name)
    }

    pub fn scan(kind: ChunkKind, text: &str) -> Outline {
        let bytes = text.as_bytes();
        match kind {
            ChunkKind::Computation => {
                let start = first_item_byte(bytes);
                let (is_entry, at) = match word_at(bytes, start) {
                    Some(end) if &bytes[start..end] == b"ENTRY" => (true, skip_blanks(bytes, end)),
                    _ => (false, start),
                };
                Outline {
                    name: name_at(text, at),
                    is_entry,
                    calls: calls(text),
                }
            }
            ChunkKind::Header => {
                let start = first_item_byte(bytes);
                let at = word_at(bytes, start)
                    .filter(|&end| &bytes[start..end] == b"HloModule")
                    .map(|end| skip_blanks(bytes, end));
                Outline {
                    name: at.and_then(|at| name_at(text, at)),
                    ..Outline::default()
                }
            }
            _ => Outline::default(),
        }
    }
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// The first byte that is neither blank nor in a `//` comment line.
fn first_item_byte(bytes: &[u8]) -> usize {
    let mut p = 0;
    loop {
        p = skip_blanks(bytes, p);
        if bytes[p..].starts_with(b"//") {
            p = bytes[p..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |i| p + i + 1);
        } else {
            return p;
        }
    }
}

fn skip_blanks(bytes: &[u8], mut p: usize) -> usize {
    while p < bytes.len() && bytes[p].is_ascii_whitespace() {
        p += 1;
    }
    p
}

/// End of the identifier-like word starting at `p`.
fn word_at(bytes: &[u8], p: usize) -> Option<usize> {
    let end = p + bytes[p.min(bytes.len())..]
        .iter()
        .take_while(|&&b| is_name_byte(b))
        .count();
    (end > p).then_some(end)
}

/// A name (`%x` or `x`) starting at `p`.
fn name_at(text: &str, p: usize) -> Option<NameAt> {
    let bytes = text.as_bytes();
    let bare = if bytes.get(p) == Some(&b'%') {
        p + 1
    } else {
        p
    };
    let end = word_at(bytes, bare)?;
    Some(NameAt {
        name: text[bare..end].into(),
        start: p as u32,
        end: end as u32,
    })
}

/// Every computation named by a computation-valued attribute of `text`.
fn calls(text: &str) -> Vec<CallRef> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut p = 0;
    while p < bytes.len() {
        match bytes[p] {
            b'"' => p = skip_string(bytes, p),
            b'/' if bytes.get(p + 1) == Some(&b'/') => {
                p = bytes[p..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |i| p + i)
            }
            b'/' if bytes.get(p + 1) == Some(&b'*') => {
                p = find(bytes, p + 2, b"*/").map_or(bytes.len(), |i| i + 2)
            }
            b'{' if p > 0 && bytes[p - 1] == b'=' => p = skip_block(bytes, p),
            b'=' => p = computation_value(text, p, &mut out),
            // Only strings, comments and `=` start something: skip to the next one.
            _ => {
                p = memchr::memchr3(b'"', b'/', b'=', &bytes[p + 1..])
                    .map_or(bytes.len(), |i| p + 1 + i)
            }
        }
    }
    out
}

/// At the `=` of `key=value`: records the value's names when `key` is a computation
/// key, and returns where scanning goes on. Blanks may follow the `=` (the grammar
/// skips whitespace between tokens, so `to_apply=  add` calls `add` for the parser;
/// the outline must agree, or an edit that defines `add` misses this caller).
fn computation_value(text: &str, eq: usize, out: &mut Vec<CallRef>) -> usize {
    let bytes = text.as_bytes();
    // The key touches the `=`: `%select = s32[] ...` defines an instruction named
    // like select-and-scatter's `select=` key.
    let key_start = eq
        - bytes[..eq]
            .iter()
            .rev()
            .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            .count();
    let key = COMPUTATION_KEYS
        .iter()
        .position(|k| k.as_bytes() == &bytes[key_start..eq]);
    let preceded = key_start == 0 || !is_name_byte(bytes[key_start - 1]);
    let Some(key) = key.filter(|_| preceded) else {
        return eq + 1;
    };
    let key = key as u8;
    let mut p = skip_blanks(bytes, eq + 1);
    if bytes.get(p) != Some(&b'{') {
        if let Some(callee) = name_at(text, p) {
            p = callee.end as usize;
            out.push(CallRef { key, callee });
        }
        return p;
    }
    // A computation written inline (`calls={ p = f32[] parameter(0) ... }`) calls no
    // computation by name, as the grammar's `inline_computation`.
    let end = skip_block(bytes, p);
    if bytes[p..end].contains(&b'=') {
        return end;
    }
    // `{%a, %b}`: names separated by commas and blanks.
    p += 1;
    loop {
        p = skip_blanks(bytes, p);
        match bytes.get(p) {
            Some(b',') => p += 1,
            Some(b'}') => return p + 1,
            Some(_) => match name_at(text, p) {
                Some(callee) => {
                    p = callee.end as usize;
                    out.push(CallRef { key, callee });
                }
                None => return p,
            },
            None => return p,
        }
    }
}

/// Past the string starting at `p` (a `"`; strings end at the line's end at the latest).
fn skip_string(bytes: &[u8], p: usize) -> usize {
    let mut i = p + 1;
    while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(bytes.len())
}

/// Past the balanced `{...}` starting at `p`, strings respected (the grammar's
/// `brace_block`).
fn skip_block(bytes: &[u8], p: usize) -> usize {
    let mut depth = 0usize;
    let mut i = p;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = skip_string(bytes, i);
                continue;
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(o: &Outline) -> Vec<(&str, &str)> {
        o.calls
            .iter()
            .map(|c| (c.attribute(), &*c.callee.name))
            .collect()
    }

    #[test]
    fn a_computation_names_itself_and_its_callees() {
        let text = "// lit\nENTRY %main.3 (p: f32[2]) -> f32[2] {\n  %f = f32[2] fusion(%p), kind=kLoop, calls=%fused.1, metadata={op_name=\"a calls=%no\" x={calls=%no2}}\n  %r = f32[] reduce(%f, %c), dimensions={0}, to_apply=add\n  ROOT %k = f32[] conditional(%b), branch_computations={%t, f.2}\n}\n";
        let o = Outline::scan(ChunkKind::Computation, text);
        let name = o.name.as_ref().unwrap();
        assert_eq!(&*name.name, "main.3");
        assert_eq!(&text[name.start as usize..name.end as usize], "%main.3");
        assert!(o.is_entry);
        assert_eq!(
            names(&o),
            [
                ("calls", "fused.1"),
                ("to_apply", "add"),
                ("branch_computations", "t"),
                ("branch_computations", "f.2")
            ]
        );
        let callee = &o.calls[0].callee;
        assert_eq!(
            &text[callee.start as usize..callee.end as usize],
            "%fused.1"
        );
    }

    /// The grammar skips whitespace between tokens, so blanks after `=` still make a
    /// call (found by an edit storm: a caller written `to_apply=  y` was missed); an
    /// instruction named like a key (`%select = ...`) is not one.
    #[test]
    fn blanks_after_the_equals_sign_still_make_a_call() {
        let text = "c {\n  %select = s32[] add(a, b)\n  r = f32[] reduce(a, b), to_apply=  add, metadata={x={calls=%no}}\n  f = f32[] fusion(a), calls=\n    %fused\n}\n";
        let o = Outline::scan(ChunkKind::Computation, text);
        assert_eq!(names(&o), [("to_apply", "add"), ("calls", "fused")]);
    }

    #[test]
    fn a_header_names_the_module() {
        let o = Outline::scan(ChunkKind::Header, "HloModule jit_f, is_scheduled=true\n");
        assert_eq!(&*o.name.unwrap().name, "jit_f");
        let o = Outline::scan(ChunkKind::Computation, "fused {\n}\n");
        assert!(!o.is_entry);
        assert_eq!(&*o.name.unwrap().name, "fused");
    }
}
