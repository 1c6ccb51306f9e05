//! A computation chunk read by a byte scan, without tree-sitter: the same parts, at
//! the same byte ranges, as the grammar's nodes (`computation`, `instruction`,
//! `operand`, `attribute`, ... in `tree-sitter-hlo/grammar.js`), for the text dumps
//! are made of.
//!
//! Why: reading a 60 MB dump whole (`check`, `memory`, the server's first open) spent
//! two thirds of its time in tree-sitter, which makes a node per token and reduces
//! a stack per node; the model only reads names, shapes, opcodes, operands and
//! attribute ranges. This reader finds those in one pass.
//!
//! It declines (`None`) anything it is not sure the grammar reads the same way:
//! comments other than `/* ... */` between tokens, operands written inline or as
//! tuples, computations written inline, typed literals, attribute values that start
//! with `(` or a shape, names that spell a keyword, and any syntax error. A declined
//! chunk is parsed by tree-sitter as before, so the reader only has to be right on
//! what it accepts: `server/tests/quick_read.rs` builds every computation of the
//! repository's HLO files both ways and compares the models.

use std::ops::Range;

use smallvec::SmallVec;

use super::outline::COMPUTATION_KEYS;

/// A computation's parts (ranges relative to the chunk).
#[derive(Debug)]
pub struct QuickComputation {
    /// The `computation` node: from `ENTRY` or the name to the closing `}`.
    pub range: Range<usize>,
    pub entry: bool,
    pub name: Range<usize>,
    pub signature: Option<QuickSignature>,
    pub instructions: Vec<QuickInstruction>,
}

/// `(p: f32[2], ...) -> f32[2]`.
#[derive(Debug)]
pub struct QuickSignature {
    pub range: Range<usize>,
    /// Each parameter's name.
    pub parameters: Vec<Range<usize>>,
    /// The result shape (a `shape` or `tuple_shape` node).
    pub result: Range<usize>,
}

/// One instruction's parts.
#[derive(Debug)]
pub struct QuickInstruction {
    pub range: Range<usize>,
    pub root: bool,
    pub name: Range<usize>,
    pub shape: Option<Range<usize>>,
    pub opcode: Range<usize>,
    /// The `operand_list`, parentheses included.
    pub operands: Range<usize>,
    pub operand_items: SmallVec<[QuickOperand; 4]>,
    pub attributes: SmallVec<[QuickAttribute; 4]>,
}

/// An operand: a name (its shape written before it or not), or a literal.
#[derive(Debug)]
pub enum QuickOperand {
    Named {
        range: Range<usize>,
        shape: Option<Range<usize>>,
        name: Range<usize>,
    },
    /// A `literal` (a number, `{...}` or a string): the operand is the literal.
    Literal(Range<usize>),
}

/// `key=value`.
#[derive(Debug)]
pub struct QuickAttribute {
    pub key: Range<usize>,
    pub value: Range<usize>,
    /// The value's node kind in the grammar: `computation_ref`, `computation_list`,
    /// `brace_block`, `string` or `attribute_atom`.
    pub value_kind: &'static str,
    /// The names a `computation_ref` or `computation_list` holds.
    pub called: SmallVec<[Range<usize>; 1]>,
}

/// Reads `text`, one computation chunk, or declines (see the module docs).
pub fn read_computation(text: &str) -> Option<QuickComputation> {
    let mut r = Reader {
        b: text.as_bytes(),
        pos: 0,
    };
    r.skip()?;
    let start = r.pos;
    let mut name = r.name()?;
    let entry = &r.b[name.clone()] == b"ENTRY";
    if entry {
        r.skip()?;
        name = r.name()?;
    }
    if is_keyword(&r.b[name.clone()]) {
        return None;
    }
    r.skip()?;
    let signature = if r.peek() == Some(b'(') {
        let s = r.signature()?;
        r.skip()?;
        Some(s)
    } else {
        None
    };
    r.expect(b'{')?;
    let mut instructions = Vec::new();
    loop {
        r.skip()?;
        if r.peek() == Some(b'}') {
            r.pos += 1;
            break;
        }
        instructions.push(r.instruction()?);
    }
    let end = r.pos;
    // Attributes of the computation itself (`, execution_thread="x"`) are left to
    // the grammar; so is anything else after the body.
    r.skip()?;
    if r.pos != r.b.len() {
        return None;
    }
    Some(QuickComputation {
        range: start..end,
        entry,
        name,
        signature,
        instructions,
    })
}

/// The grammar's keywords: written bare, they may lex as the keyword, not as a name.
fn is_keyword(word: &[u8]) -> bool {
    // Every keyword starts with a letter; a `%name` is never one.
    if !word.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    matches!(
        word,
        b"ROOT"
            | b"ENTRY"
            | b"HloModule"
            | b"FileNames"
            | b"FunctionNames"
            | b"FileLocations"
            | b"StackFrames"
            | b"true"
            | b"false"
    ) || COMPUTATION_KEYS.iter().any(|k| k.as_bytes() == word)
}

/// How deep tuple shapes may nest before the reader leaves them to the grammar.
const MAX_TUPLE_DEPTH: usize = 16;

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn at(&self, k: usize) -> Option<u8> {
        self.b.get(self.pos + k).copied()
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.pos += 1)
    }

    /// Skips whitespace and `/* ... */` comments (the grammar's extras); declines a
    /// `//` comment (a `// -----` line is a module separator) and whitespace the
    /// brace scanner would not skip.
    fn skip(&mut self) -> Option<()> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') => {
                    if self.at(1) != Some(b'*') {
                        return None;
                    }
                    let body = &self.b[self.pos + 2..];
                    let close = body.windows(2).position(|w| w == b"*/")?;
                    self.pos += 2 + close + 2;
                }
                Some(0x0b | 0x0c) => return None,
                _ => return Some(()),
            }
        }
    }

    /// The `name` token: `%` and name characters, or a letter or `_` and name
    /// characters.
    fn name(&mut self) -> Option<Range<usize>> {
        let start = self.pos;
        match self.peek()? {
            b'%' => {
                self.pos += 1;
                let from = self.pos;
                self.run(is_name_char);
                (self.pos > from).then_some(())?;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => self.run(is_name_char),
            _ => return None,
        }
        Some(start..self.pos)
    }

    fn run(&mut self, keep: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&keep) {
            self.pos += 1;
        }
    }

    /// Whether a `shape` token starts here (`[a-z][a-z0-9]*[`).
    fn at_shape(&self) -> bool {
        if !self.peek().is_some_and(|c| c.is_ascii_lowercase()) {
            return false;
        }
        let word = self.b[self.pos..]
            .iter()
            .position(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
            .unwrap_or(self.b.len() - self.pos);
        self.at(word) == Some(b'[')
    }

    /// The `shape` token: `[a-z][a-z0-9]*\[[^\]\n]*\]`, then a layout
    /// `[ \t]*\{[^{}\n%="a-z:]*(:[^{}\n%="]*)?\}` when one follows.
    fn shape(&mut self) -> Option<Range<usize>> {
        if !self.at_shape() {
            return None;
        }
        let start = self.pos;
        self.run(|c| c != b'[');
        self.pos += 1;
        self.run(|c| c != b']' && c != b'\n');
        self.expect(b']')?;
        let end = self.pos;
        self.run(|c| c == b' ' || c == b'\t');
        if self.peek() == Some(b'{') && self.layout() {
            return Some(start..self.pos);
        }
        self.pos = end;
        Some(start..end)
    }

    /// A layout after a shape, from its `{`; moves past it when it matches.
    fn layout(&mut self) -> bool {
        let mut k = self.pos + 1;
        let forbidden = |c: u8| matches!(c, b'{' | b'}' | b'\n' | b'%' | b'=' | b'"');
        while k < self.b.len() && !forbidden(self.b[k]) && self.b[k] != b':' {
            if self.b[k].is_ascii_lowercase() {
                return false;
            }
            k += 1;
        }
        if k < self.b.len() && self.b[k] == b':' {
            while k < self.b.len() && !forbidden(self.b[k]) {
                k += 1;
            }
        }
        if k < self.b.len() && self.b[k] == b'}' {
            self.pos = k + 1;
            return true;
        }
        false
    }

    /// A `shape` or a `tuple_shape`.
    fn any_shape(&mut self, depth: usize) -> Option<Range<usize>> {
        if self.peek()? != b'(' {
            return self.shape();
        }
        if depth >= MAX_TUPLE_DEPTH {
            return None;
        }
        let start = self.pos;
        self.pos += 1;
        self.skip()?;
        if self.peek()? != b')' {
            loop {
                self.any_shape(depth + 1)?;
                self.skip()?;
                if self.peek()? != b',' {
                    break;
                }
                self.pos += 1;
                self.skip()?;
            }
        }
        self.expect(b')')?;
        Some(start..self.pos)
    }

    /// `(name: shape, ...) -> shape`.
    fn signature(&mut self) -> Option<QuickSignature> {
        let start = self.pos;
        self.expect(b'(')?;
        self.skip()?;
        let mut parameters = Vec::new();
        if self.peek()? != b')' {
            loop {
                let name = self.name()?;
                if is_keyword(&self.b[name.clone()]) {
                    return None;
                }
                self.skip()?;
                self.expect(b':')?;
                self.skip()?;
                self.any_shape(0)?;
                parameters.push(name);
                self.skip()?;
                if self.peek()? != b',' {
                    break;
                }
                self.pos += 1;
                self.skip()?;
            }
        }
        self.expect(b')')?;
        self.skip()?;
        self.expect(b'-')?;
        self.expect(b'>')?;
        self.skip()?;
        let result = self.any_shape(0)?;
        Some(QuickSignature {
            range: start..result.end,
            parameters,
            result,
        })
    }

    /// `[ROOT] name = [shape] opcode(operands)[, attribute]*`.
    fn instruction(&mut self) -> Option<QuickInstruction> {
        let start = self.pos;
        let mut name = self.name()?;
        let root = &self.b[name.clone()] == b"ROOT";
        if root {
            self.skip()?;
            name = self.name()?;
        }
        if is_keyword(&self.b[name.clone()]) {
            return None;
        }
        self.skip()?;
        self.expect(b'=')?;
        self.skip()?;
        let shape = if self.peek()? == b'(' || self.at_shape() {
            let s = self.any_shape(0)?;
            self.skip()?;
            Some(s)
        } else {
            None
        };
        let opcode = self.opcode()?;
        self.skip()?;
        let (operands, operand_items) = self.operand_list()?;
        let mut end = self.pos;
        let mut attributes = SmallVec::new();
        loop {
            self.skip()?;
            if self.peek() != Some(b',') {
                break;
            }
            self.pos += 1;
            self.skip()?;
            attributes.push(self.attribute()?);
            end = self.pos;
        }
        self.pos = end;
        Some(QuickInstruction {
            range: start..end,
            root,
            name,
            shape,
            opcode,
            operands,
            operand_items,
            attributes,
        })
    }

    /// The `opcode` token, `[a-z][a-z0-9_\-]*`.
    fn opcode(&mut self) -> Option<Range<usize>> {
        let start = self.pos;
        if !self.peek()?.is_ascii_lowercase() {
            return None;
        }
        self.run(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-');
        let word = &self.b[start..self.pos];
        if is_keyword(word) && !is_opcode_word(word) {
            return None;
        }
        Some(start..self.pos)
    }

    /// `( operand, ... )`.
    fn operand_list(&mut self) -> Option<(Range<usize>, SmallVec<[QuickOperand; 4]>)> {
        let start = self.pos;
        self.expect(b'(')?;
        self.skip()?;
        let mut items = SmallVec::new();
        if self.peek()? != b')' {
            loop {
                items.push(self.operand()?);
                self.skip()?;
                if self.peek()? != b',' {
                    break;
                }
                self.pos += 1;
                self.skip()?;
            }
        }
        self.expect(b')')?;
        Some((start..self.pos, items))
    }

    fn operand(&mut self) -> Option<QuickOperand> {
        let c = self.peek()?;
        if c == b'{' {
            return self.brace_block().map(QuickOperand::Literal);
        }
        if c == b'"' {
            return self.string().map(QuickOperand::Literal);
        }
        if c.is_ascii_digit() || ((c == b'-' || c == b'+') && self.at(1)?.is_ascii_digit()) {
            return self.number().map(QuickOperand::Literal);
        }
        if let Some(literal) = self.infinity_or_nan() {
            return Some(QuickOperand::Literal(literal));
        }
        let start = self.pos;
        let shape = if self.at_shape() {
            let s = self.shape()?;
            self.skip()?;
            Some(s)
        } else {
            None
        };
        let name = self.name()?;
        let word = &self.b[name.clone()];
        // `inf`, `nan`, `true`, `false` are literals; a name that starts like one is
        // left to the grammar's precedence rules.
        if is_keyword(word)
            || word.starts_with(b"inf")
            || word.starts_with(b"nan")
            || word.starts_with(b"true")
            || word.starts_with(b"false")
        {
            return None;
        }
        let after = self.pos;
        self.skip()?;
        if self.peek() == Some(b'(') {
            return None; // an instruction written inline
        }
        self.pos = after;
        Some(QuickOperand::Named {
            range: start..name.end,
            shape,
            name,
        })
    }

    /// The `number` token's second form, `[-+]?\d[0-9A-Za-z_.]*([eE][-+]?\d+)?`.
    fn number(&mut self) -> Option<Range<usize>> {
        let start = self.pos;
        if matches!(self.peek()?, b'-' | b'+') {
            self.pos += 1;
        }
        if !self.peek()?.is_ascii_digit() {
            return None;
        }
        self.run(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.');
        let ends_in_e = matches!(self.b[self.pos - 1], b'e' | b'E');
        if ends_in_e
            && matches!(self.peek(), Some(b'-' | b'+'))
            && self.at(1).is_some_and(|c| c.is_ascii_digit())
        {
            self.pos += 1;
            self.run(|c| c.is_ascii_digit());
        }
        Some(start..self.pos)
    }

    /// The `number` token's first form, `[-+]?(inf|nan)`, when nothing a name may
    /// hold follows (`-inf`, `nan`).
    fn infinity_or_nan(&mut self) -> Option<Range<usize>> {
        let start = self.pos;
        let sign = usize::from(matches!(self.peek()?, b'-' | b'+'));
        let word = self.b.get(start + sign..start + sign + 3)?;
        if word != b"inf" && word != b"nan" {
            return None;
        }
        let end = start + sign + 3;
        if self.b.get(end).is_some_and(|&c| is_name_char(c)) {
            return None;
        }
        self.pos = end;
        Some(start..end)
    }

    /// The `string` token: `"([^"\\\n]|\\[^\n])*"`.
    fn string(&mut self) -> Option<Range<usize>> {
        let start = self.pos;
        self.expect(b'"')?;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\n' => return None,
                b'\\' => {
                    if self.at(1)? == b'\n' {
                        return None;
                    }
                    self.pos += 2;
                }
                _ => self.pos += 1,
            }
        }
        self.pos += 1;
        Some(start..self.pos)
    }

    /// A balanced `{...}`, as the grammar's external scanner reads it (braces inside
    /// strings skipped; a string ends at its quote or the end of its line). Also
    /// says whether it holds an `=` outside strings (then, after a computation key,
    /// it is an `inline_computation`).
    fn braces(&mut self) -> Option<(Range<usize>, bool)> {
        let start = self.pos;
        let b = self.b;
        let mut k = self.pos;
        let mut depth = 0u32;
        let mut assigns = false;
        loop {
            let c = *b.get(k)?;
            k += 1;
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.wrapping_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                b'=' => assigns = true,
                b'"' => {
                    while k < b.len() && b[k] != b'"' && b[k] != b'\n' {
                        if b[k] == b'\\' {
                            k += 1;
                            if k >= b.len() || b[k] == b'\n' {
                                break;
                            }
                        }
                        k += 1;
                    }
                    if k < b.len() && b[k] == b'"' {
                        k += 1;
                    }
                }
                _ => {}
            }
        }
        self.pos = k;
        Some((start..k, assigns))
    }

    fn brace_block(&mut self) -> Option<Range<usize>> {
        self.braces().map(|(range, _)| range)
    }

    /// `key=value`.
    fn attribute(&mut self) -> Option<QuickAttribute> {
        let key_start = self.pos;
        let first = self.peek()?;
        if !(first.is_ascii_alphabetic() || first == b'_') {
            return None;
        }
        self.run(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
        let key = key_start..self.pos;
        self.skip()?;
        self.expect(b'=')?;
        self.skip()?;
        let mut called = SmallVec::new();
        let c = self.peek()?;
        let computation_key = COMPUTATION_KEYS
            .iter()
            .any(|k| k.as_bytes() == &self.b[key.clone()]);
        let (value, value_kind) = if computation_key {
            match c {
                b'"' => (self.string()?, "string"),
                b'{' => {
                    let start = self.pos;
                    let (_, assigns) = self.braces()?;
                    if assigns {
                        return None; // a computation written inline
                    }
                    self.pos = start + 1;
                    self.skip()?;
                    if self.peek()? != b'}' {
                        loop {
                            called.push(self.name()?);
                            self.skip()?;
                            if self.peek()? != b',' {
                                break;
                            }
                            self.pos += 1;
                            self.skip()?;
                        }
                    }
                    self.expect(b'}')?;
                    (start..self.pos, "computation_list")
                }
                _ => {
                    let name = self.name()?;
                    called.push(name.clone());
                    (name, "computation_ref")
                }
            }
        } else {
            match c {
                b'{' => (self.brace_block()?, "brace_block"),
                b'"' => (self.string()?, "string"),
                _ => (self.atom()?, "attribute_atom"),
            }
        };
        Some(QuickAttribute {
            key,
            value,
            value_kind,
            called,
        })
    }

    /// An `attribute_atom`: characters other than whitespace, `,`, braces,
    /// parentheses, brackets and quotes, with `[...]` groups anywhere and `(...)`
    /// groups after the first character (`kLoop`, `b01f_01io->b01f`, `[8,1]<=[8]`,
    /// `[2,4]<=[8]T(1,0)`). Declines a word followed by `[` (a shape, a typed literal
    /// or a mesh, which the grammar reads as longer tokens) and an atom the next
    /// character would not end, and characters outside printable ASCII.
    fn atom(&mut self) -> Option<Range<usize>> {
        let start = self.pos;
        let word_start = self.peek()?.is_ascii_alphabetic() || self.peek()? == b'_';
        loop {
            match self.peek() {
                None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',') => break,
                Some(b'[') => {
                    let word = &self.b[start..self.pos];
                    if word_start && word.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_') {
                        return None;
                    }
                    self.group(b']')?;
                }
                Some(b'(') if self.pos > start => self.group(b')')?,
                Some(b'{' | b'}' | b'(' | b')' | b']' | b'"') => return None,
                Some(c) if c.is_ascii_graphic() => self.pos += 1,
                // Other whitespace, control characters, non-ASCII text: left to the
                // grammar's notion of whitespace.
                Some(_) => return None,
            }
        }
        (self.pos > start).then_some(start..self.pos)
    }

    /// A `[...]` or `(...)` group of an atom, closed on its line.
    fn group(&mut self, close: u8) -> Option<()> {
        let end = self.b[self.pos + 1..]
            .iter()
            .position(|&c| c == close || c == b'\n')?;
        if self.b[self.pos + 1 + end] != close {
            return None;
        }
        self.pos += end + 2;
        Some(())
    }
}

/// Opcodes that are also keywords of the grammar (attribute keys): read as opcodes
/// after a shape.
fn is_opcode_word(word: &[u8]) -> bool {
    matches!(word, b"select" | b"scatter")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_computation_with_its_parts() {
        let text = "%f (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} add(%p, f32[2] %p), metadata={op_name=\"a{\"}, to_apply=%g\n}\n";
        let c = read_computation(text).expect("read");
        assert_eq!(&text[c.name.clone()], "%f");
        assert_eq!(c.instructions.len(), 2);
        let n = &c.instructions[1];
        assert!(n.root);
        assert_eq!(&text[n.opcode.clone()], "add");
        assert_eq!(n.operand_items.len(), 2);
        assert_eq!(&text[n.attributes[0].value.clone()], "{op_name=\"a{\"}");
        assert_eq!(n.attributes[1].value_kind, "computation_ref");
        assert!(text[n.range.clone()].ends_with("%g"));
    }

    #[test]
    fn declines_what_it_leaves_to_the_grammar() {
        for text in [
            "%f { %a = f32[] add(f32[] negate(%x), %y) }",
            "%f { // c\n %a = f32[] parameter(0) }",
            "%f { %a = f32[] parameter(0) ",
            "%f { %a = f32[] custom-call(), literal=s32[2]{0} {1,2} }",
            "%f { %a = f32[] parameter(0) }, execution_thread=\"x\"",
            "%f { %a = f32[] reduce(%x), to_apply={ r = f32[] add(f32[] x, y) } }",
        ] {
            assert!(read_computation(text).is_none(), "{text}");
        }
    }
}
