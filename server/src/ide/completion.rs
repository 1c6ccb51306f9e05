//! Completion at a cursor, for HLO as it is typed (broken text included) and for
//! StableHLO.
//!
//! The instruction line around the cursor is read by [`super::typing`], which says
//! what is being typed: a result shape, an opcode, an operand, an attribute's name or
//! value. Items are ranked by what the rest of the line already says, as
//! rust-analyzer ranks by the expected type:
//! * an opcode by the instruction's name (XLA names `%multiply.3` after its opcode),
//!   the operand count and the attributes written after it;
//! * an operand by whether the instruction above has a user yet, how near it is, and
//!   the shape written before it (XLA's long form) or the result's (elementwise ops);
//! * an attribute by the value written after it and XLA's print order around it;
//! * a computation by whether anything calls it yet and whether its signature fits
//!   the operands and result (a reduction's scalar signature, a loop's state).
//!
//! The measure of issue 48 (the deleted token first on at least half the positions of
//! real dumps, among the first ten on nine in ten) is `server/tests/completion_measure.rs`.

use std::ops::Range;

use super::typing::{self, Line, Place};
use super::{HloSnapshot, Snapshot};
use crate::model::signature::{self, ValueKind};
use crate::model::{ComputationId, ComputationRef, Module, Opcode, PrimitiveType, Shape};

/// What an item completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Opcode,
    Attribute,
    Computation,
    Instruction,
    ElementType,
    Shape,
    Layout,
    /// A value among a few (`kLoop`, `EQ`, `true`, a custom-call target).
    Value,
    /// A key inside a value (`backend_config`'s, `metadata`'s).
    Key,
    Keyword,
    MlirOp,
    MlirValue,
}

/// One completion item. `insert` is a snippet (`$1` tab stops) when `snippet`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub label: String,
    pub kind: ItemKind,
    pub detail: Option<String>,
    pub documentation: Option<String>,
    pub insert: String,
    pub snippet: bool,
}

/// The items, best first, and the bytes they replace (the word typed so far, with
/// its `%`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    pub replace: Range<usize>,
    pub items: Vec<Item>,
    /// Only the best [`MAX_ITEMS`] were kept: typing more asks again.
    pub incomplete: bool,
}

/// What the client accepts, and what the rest of the workspace holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Insert snippets (`dimensions={$1}`); plain text otherwise.
    pub snippets: bool,
    /// The custom-call targets the other open documents write, most used first
    /// ([`custom_call_targets_written`]): offered after this document's own.
    pub workspace_targets: std::sync::Arc<[String]>,
}

/// At most this many items are answered (a module's ENTRY can hold 100,000
/// instructions in scope).
pub const MAX_ITEMS: usize = 200;

/// The completion at `offset` (bytes), or `None` where nothing is completed (inside
/// a shape's dimensions, a literal, a comment).
pub fn complete(snapshot: &Snapshot, offset: usize, options: Options) -> Option<Completion> {
    match snapshot {
        Snapshot::Hlo(hlo) => hlo_completion(hlo, offset, options),
        Snapshot::Mlir(mlir) => super::completion_mlir::complete(mlir.text(), offset, options),
    }
}

/// An item with its rank: higher scores first, then the order it was found in.
struct Scored {
    score: i64,
    item: Item,
}

fn item(label: impl Into<String>, kind: ItemKind, insert: impl Into<String>) -> Item {
    Item {
        label: label.into(),
        kind,
        detail: None,
        documentation: None,
        insert: insert.into(),
        snippet: false,
    }
}

/// The items best first (a stable sort keeps equal scores in the order found).
fn ranked(replace: Range<usize>, mut scored: Vec<Scored>) -> Completion {
    scored.sort_by_key(|s| std::cmp::Reverse(s.score));
    let incomplete = scored.len() > MAX_ITEMS;
    scored.truncate(MAX_ITEMS);
    Completion {
        replace,
        items: scored.into_iter().map(|s| s.item).collect(),
        incomplete,
    }
}

/// The cursor's surroundings in an HLO document.
struct Cursor<'a> {
    hlo: &'a HloSnapshot,
    /// The text of the chunk (the computation) holding the cursor: the document's
    /// text is never joined (60 MB for a large dump, 100 ms per version).
    text: &'a str,
    /// Where the chunk starts in the document: every other offset here is the chunk's.
    base: usize,
    line_start: usize,
    line: Line<'a>,
    /// The word typed, in document bytes (without its `%`).
    word: Range<usize>,
    /// The bytes items replace (with the `%` typed before the word).
    replace: Range<usize>,
    /// Whether names are written with `%` here.
    percent: bool,
    /// Some candidates were not scored (see [`COMPUTATION_WINDOW`]).
    incomplete: std::cell::Cell<bool>,
    options: Options,
}

impl<'a> Cursor<'a> {
    /// The cursor's place in line bytes.
    fn at(&self) -> usize {
        self.word.start - self.line_start
    }

    fn opcode(&self) -> Opcode {
        Opcode::from_name(self.line.opcode_text())
    }

    /// A name as this document writes it.
    fn spelled(&self, name: &str) -> String {
        if self.percent {
            format!("%{name}")
        } else {
            name.to_string()
        }
    }

    /// The line's text after the cursor's word, trimmed.
    fn rest(&self) -> &'a str {
        let end = self.line_start + self.line.text.len();
        let mut after = self.word.end;
        while after < end && typing::is_word_byte(self.text.as_bytes()[after]) {
            after += 1;
        }
        self.text[after..end].trim()
    }

    /// The computation the cursor is in, when the model has one there.
    fn computation(&self) -> Option<(&'a Module, ComputationRef<'a>)> {
        let file = self.hlo.model();
        let (module, c) = file.computation_at(self.base + self.word.start)?;
        Some((file.module(module), c))
    }
}

fn hlo_completion(hlo: &HloSnapshot, offset: usize, options: Options) -> Option<Completion> {
    let syntax = hlo.syntax();
    // The chunk holding the character before the cursor: a cursor at the end of a
    // line that ends a chunk completes that line.
    let placed = syntax.chunk_at(offset.saturating_sub(1))?;
    let base = placed.range().start;
    let text = placed.text();
    let offset = offset.checked_sub(base)?;
    if offset > text.len() || !text.is_char_boundary(offset) {
        return None;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line_text = &text[line_start..line_end];
    if line_text.trim_start().starts_with("//") || line_text.trim_start().starts_with('#') {
        return None;
    }
    let word = typing::word_before(text, offset);
    let word = word.start.max(line_start)..word.end;
    let typed_percent = word.start > line_start && text.as_bytes()[word.start - 1] == b'%';
    let replace = word.start - usize::from(typed_percent)..word.end;
    let before = &text.as_bytes()[offset.saturating_sub(4096)..offset];
    let cursor = Cursor {
        hlo,
        text,
        base,
        line_start,
        line: Line::read(line_text),
        word,
        replace,
        percent: typed_percent || memchr::memchr(b'%', before).is_some(),
        incomplete: std::cell::Cell::new(false),
        options,
    };
    let scored = match cursor.line.place(cursor.at()) {
        Place::Name => names(&cursor),
        Place::Shape { layout } => shapes(&cursor, layout)?,
        Place::Opcode => opcodes(&cursor),
        Place::Operand { index } => operands(&cursor, index)?,
        Place::AttributeName { k } => attribute_names(&cursor, k),
        Place::AttributeValue { k } => attribute_values(&cursor, k)?,
    };
    let replace = base + cursor.replace.start..base + cursor.replace.end;
    let mut answer = ranked(replace, scored);
    answer.incomplete |= cursor.incomplete.get();
    Some(answer)
}

/// At the start of an instruction: `ROOT`.
fn names(cursor: &Cursor) -> Vec<Scored> {
    let before = &cursor.line.text[..cursor.at()];
    let typed_percent = cursor.replace.start < cursor.word.start;
    if typed_percent
        || !before.trim().is_empty()
        || cursor.line.text.trim_start().starts_with("ROOT")
    {
        return Vec::new();
    }
    let mut root = item("ROOT", ItemKind::Keyword, "ROOT ");
    root.detail = Some("the computation's result".into());
    vec![Scored {
        score: 0,
        item: root,
    }]
}

/// Element types (the scope's most used first), the shapes written above, and
/// inside a layout the default one.
fn shapes(cursor: &Cursor, layout: bool) -> Option<Vec<Scored>> {
    let typed = cursor.line.get(&(cursor.line.shape.start..cursor.at()));
    let in_dims = typed
        .rfind('[')
        .is_some_and(|o| typed.rfind(']').is_none_or(|c| c < o));
    if in_dims {
        return None;
    }
    let scope = cursor.computation();
    let above: Vec<&crate::model::Instruction> = scope
        .map(|(_, c)| {
            c.model()
                .instructions
                .iter()
                .filter(|i| !i.synthetic && c.abs(i.range).end <= cursor.base + cursor.line_start)
                .collect()
        })
        .unwrap_or_default();
    if layout {
        let dims = typed.rfind('[').map_or("", |o| &typed[o + 1..]);
        let rank = dims
            .split(']')
            .next()
            .map_or(0, |d| d.split(',').filter(|s| !s.trim().is_empty()).count());
        let default: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
        let mut item = item(default.join(","), ItemKind::Layout, default.join(","));
        item.detail = Some("XLA's default layout (major to minor)".into());
        return Some(vec![Scored { score: 0, item }]);
    }
    let mut uses: Vec<(&str, usize)> = Vec::new();
    for i in &above {
        for leaf in i.shape.leaves() {
            let name = leaf.element.name();
            match uses.iter_mut().find(|(n, _)| *n == name) {
                Some((_, count)) => *count += 1,
                None => uses.push((name, 1)),
            }
        }
    }
    let mut scored: Vec<Scored> = PrimitiveType::names()
        .map(|name| {
            let used = uses.iter().find(|(n, _)| *n == name).map_or(0, |(_, c)| *c);
            let mut it = item(name, ItemKind::ElementType, name);
            let width = PrimitiveType::from_name(name).bit_width().unwrap_or(0);
            it.detail = Some(format!("{width}-bit element type"));
            let common = COMMON_TYPES
                .iter()
                .position(|t| *t == name)
                .map_or(0, |p| 20 - p as i64);
            Scored {
                score: 100 + common + used.min(1000) as i64 * 50,
                item: it,
            }
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    for i in above.iter().rev() {
        if matches!(*i.shape, Shape::Invalid) || seen.len() >= 20 {
            continue;
        }
        let shape = i.shape.to_string();
        if seen.insert(shape.clone()) {
            let mut it = item(shape.clone(), ItemKind::Shape, shape);
            it.detail = Some(format!("the shape of {}", cursor.spelled(&i.name)));
            scored.push(Scored { score: 0, item: it });
        }
    }
    Some(scored)
}

/// The element types most modules use, most common first.
const COMMON_TYPES: &[&str] = &[
    "f32", "bf16", "s32", "pred", "f16", "u32", "s64", "u8", "s8", "f64",
];

/// Common opcodes of XLA's dumps, most common first: a small prior among equals.
const COMMON: &[&str] = &[
    "fusion",
    "get-tuple-element",
    "parameter",
    "constant",
    "bitcast",
    "broadcast",
    "add",
    "multiply",
    "copy",
    "reshape",
    "convert",
    "transpose",
    "reduce",
    "dot",
    "select",
    "compare",
    "tuple",
    "slice",
    "concatenate",
    "dynamic-slice",
    "exponential",
    "subtract",
    "divide",
    "maximum",
];

/// Opcodes, ranked by the instruction's name, its operand count and attributes.
fn opcodes(cursor: &Cursor) -> Vec<Scored> {
    let line = &cursor.line;
    let stem = name_stem(line.name_text());
    let operands: Option<Vec<&str>> = line
        .close
        .map(|_| line.operands.iter().map(|r| line.get(r)).collect());
    let attributes: Vec<&str> = (0..line.attributes.len())
        .map(|k| line.attribute_name(k))
        .filter(|n| !n.is_empty())
        .collect();
    let open_after = line.open.is_some() || !cursor.rest().is_empty();
    Opcode::all()
        .map(|op| {
            let mut score = name_score(op.name(), stem);
            if let Some(operands) = &operands {
                score += operand_score(op, operands);
            }
            for a in &attributes {
                score += match signature::attribute(op, a) {
                    Some(_) if signature::print_position(op, a) < Some(own_count(op)) => 250,
                    Some(_) => 0,
                    None => -400,
                };
            }
            // With the operands closed, the attributes written are all there are so far:
            // an opcode they leave without a required one fits less.
            if line.close.is_some() {
                let missing = signature::attributes(op)
                    .filter(|a| a.required && !attributes.contains(&a.name))
                    .count();
                score -= 250 * missing as i64;
            }
            score += COMMON
                .iter()
                .position(|c| *c == op.name())
                .map_or(0, |p| 30 - p as i64);
            let mut it = item(op.name(), ItemKind::Opcode, op.name());
            let signature = super::signature_help::signature(op);
            it.detail = Some(signature.label);
            it.documentation = Some(signature.documentation);
            if cursor.options.snippets && !open_after {
                it.insert = opcode_snippet(op);
                it.snippet = true;
            }
            Scored { score, item: it }
        })
        .collect()
}

/// How many of `op`'s attributes are its own (before those every instruction takes).
fn own_count(op: &Opcode) -> usize {
    signature::attributes(op)
        .position(|a| a.name == "sharding")
        .unwrap_or(0)
}

/// `broadcast(${1:operand}), dimensions={$2}`: operands and required attributes.
fn opcode_snippet(op: &Opcode) -> String {
    let mut stop = 0;
    let mut next = || {
        stop += 1;
        stop
    };
    let operands: Vec<String> = signature::operand_names(op)
        .into_iter()
        .map(|name| format!("${{{}:{name}}}", next()))
        .collect();
    let mut text = format!("{}({})", op.name(), operands.join(", "));
    for a in signature::attributes(op).filter(|a| a.required) {
        let template = signature::template(a.value, true);
        let n = next();
        if template.contains("${2") {
            next();
        }
        text.push_str(&format!(", {}={}", a.name, renumber(&template, n)));
    }
    text
}

/// A template's tab stops 1 and 2 written as `n` and `n + 1`.
fn renumber(template: &str, n: usize) -> String {
    template
        .replace("${2", "\u{0}")
        .replace("${1", &format!("${{{n}"))
        .replace("$1", &format!("${n}"))
        .replace('\u{0}', &format!("${{{}", n + 1))
}

/// An instruction's name without `.N` suffixes and `.clone`s: XLA's names start
/// with the opcode (`get-tuple-element.15`, `broadcast.4`).
fn name_stem(name: &str) -> &str {
    let mut stem = name;
    loop {
        let Some((head, tail)) = stem.rsplit_once('.') else {
            return stem;
        };
        if tail.is_empty() || tail.bytes().all(|b| b.is_ascii_digit()) || tail == "clone" {
            stem = head;
        } else {
            return stem;
        }
    }
}

/// How well opcode `op` fits an instruction named `stem`.
fn name_score(op: &str, stem: &str) -> i64 {
    if stem.is_empty() {
        return 0;
    }
    if stem == op {
        return 1000;
    }
    let word = |s: &str| s.starts_with(['_', '-', '.']);
    if let Some(rest) = stem.strip_prefix(op) {
        if word(rest) {
            return 400 + op.len() as i64;
        }
    }
    if let Some(head) = stem.strip_suffix(op) {
        if head.ends_with(['_', '-', '.']) {
            return 300 + op.len() as i64;
        }
    }
    if let Some((_, opcode)) = JAX_NAMES.iter().find(|(name, _)| *name == stem) {
        if *opcode == op {
            return 900;
        }
    }
    match op {
        "parameter" if stem.starts_with("param") || stem.starts_with("arg") => 900,
        "constant" if stem.starts_with("constant") || stem.starts_with("cst") => 900,
        "fusion" if stem.contains("fusion") || stem.starts_with("wrapped_") => 600,
        "get-tuple-element" if stem.starts_with("gte") => 600,
        _ => 0,
    }
}

/// The names JAX gives instructions (its primitives', `metadata={op_name=...}`'s last
/// part) that are not the opcode's: `%mul.2 = multiply(...)`, `%gt.0 = compare(...)`.
const JAX_NAMES: &[(&str, &str)] = &[
    ("exp", "exponential"),
    ("exp2", "exponential"),
    ("expm1", "exponential-minus-one"),
    ("log1p", "log-plus-one"),
    ("mul", "multiply"),
    ("sub", "subtract"),
    ("div", "divide"),
    ("max", "maximum"),
    ("min", "minimum"),
    ("neg", "negate"),
    ("pow", "power"),
    ("integer_pow", "multiply"),
    ("rem", "remainder"),
    ("gt", "compare"),
    ("lt", "compare"),
    ("ge", "compare"),
    ("le", "compare"),
    ("eq", "compare"),
    ("ne", "compare"),
    ("select_n", "select"),
    ("convert_element_type", "convert"),
    ("dot_general", "dot"),
    ("broadcast_in_dim", "broadcast"),
    ("squeeze", "reshape"),
    ("expand_dims", "reshape"),
    ("dynamic_slice", "dynamic-slice"),
    ("dynamic_update_slice", "dynamic-update-slice"),
    ("cumsum", "reduce-window"),
    ("sin", "sine"),
    ("cos", "cosine"),
    ("is_finite", "is-finite"),
    ("shift_left", "shift-left"),
    ("shift_right_logical", "shift-right-logical"),
    ("shift_right_arithmetic", "shift-right-arithmetic"),
    ("population_count", "popcnt"),
    ("clz", "count-leading-zeros"),
    ("round", "round-nearest-afz"),
    ("stop_gradient", "copy"),
    ("copy_p", "copy"),
];

/// How well an operand list written after the cursor fits `op`.
fn operand_score(op: &Opcode, operands: &[&str]) -> i64 {
    let numeric = operands.len() == 1
        && !operands[0].is_empty()
        && !operands[0].contains('%')
        && operands[0]
            .bytes()
            .all(|b| b.is_ascii_digit() || b"{}[]-+., eEinfatrulsINF".contains(&b));
    match op {
        Opcode::Parameter => {
            return if numeric && operands[0].bytes().all(|b| b.is_ascii_digit()) {
                900
            } else {
                -600
            }
        }
        Opcode::Constant => return if numeric { 700 } else { -600 },
        _ if numeric => return -600,
        _ => {}
    }
    if op.arity().accepts(operands.len()) {
        300
    } else {
        -600
    }
}

/// The instructions above the cursor in its computation.
fn operands(cursor: &Cursor, index: usize) -> Option<Vec<Scored>> {
    let opcode = cursor.opcode();
    if matches!(opcode, Opcode::Parameter | Opcode::Constant) {
        return None;
    }
    let (_, c) = cursor.computation()?;
    let line = &cursor.line;
    // XLA's long form writes each operand's shape before its name.
    let piece = line
        .operands
        .get(index)
        .map_or("", |r| line.get(&(r.start..cursor.at().max(r.start))))
        .trim();
    let written = (!piece.is_empty())
        .then(|| crate::model::parse_shape(piece).ok())
        .flatten();
    let result = crate::model::parse_shape(line.get(&line.shape)).ok();
    let here: Vec<&str> = line
        .operands
        .iter()
        .map(|r| line.get(r).rsplit([' ', '%']).next().unwrap_or(""))
        .collect();
    // Elementwise operands share a shape: the other operands written say which.
    let siblings: Vec<&Shape> = if opcode.is_elementwise() {
        here.iter()
            .enumerate()
            .filter(|&(k, n)| k != index && !n.is_empty())
            .filter(|&(k, _)| !(opcode == Opcode::Select && (k == 0 || index == 0)))
            .filter_map(|(_, n)| c.instruction_by_name(n).map(|i| &*i.shape))
            .collect()
    } else {
        Vec::new()
    };
    let line_start = cursor.base + cursor.line_start;
    let line_range = line_start..line_start + line.text.len();
    let above: Vec<&crate::model::Instruction> = c
        .model()
        .instructions
        .iter()
        .filter(|i| !i.synthetic && c.abs(i.name_range).end <= line_start)
        .collect();
    let n = above.len();
    let scored = above
        .iter()
        .enumerate()
        .map(|(k, i)| {
            let distance = (n - 1 - k) as i64;
            let mut score = 200 - distance.min(200);
            let used = c.users(i.id).iter().any(|&u| {
                !crate::syntax::ranges_touch(&c.abs(c.instruction(u).range), &line_range)
            });
            if !used {
                score += 400;
            }
            if here.contains(&&*i.name) {
                score -= 150;
            }
            score += shape_score(&opcode, index, &i.shape, written.as_ref(), result.as_ref());
            if siblings.iter().any(|s| s.compatible(&i.shape)) {
                score += 250;
            }
            let mut it = item(&*i.name, ItemKind::Instruction, cursor.spelled(&i.name));
            it.detail = Some(i.shape.to_string());
            Scored { score, item: it }
        })
        .collect();
    Some(scored)
}

/// How well an instruction of shape `shape` fits operand `index` of `opcode`.
fn shape_score(
    opcode: &Opcode,
    index: usize,
    shape: &Shape,
    written: Option<&Shape>,
    result: Option<&Shape>,
) -> i64 {
    if let Some(written) = written {
        return if written.compatible(shape) { 800 } else { -400 };
    }
    if *opcode == Opcode::GetTupleElement {
        return if matches!(shape, Shape::Tuple(_)) {
            300
        } else {
            -300
        };
    }
    let (Some(result), Some(operand)) = (result.and_then(Shape::as_array), shape.as_array()) else {
        return 0;
    };
    let pred_slot = *opcode == Opcode::Select && index == 0;
    if opcode.is_elementwise() && operand.dims == result.dims {
        let element_fits = opcode.is_comparison()
            || matches!(opcode, Opcode::Convert | Opcode::BitcastConvert)
            || (pred_slot && operand.element == PrimitiveType::Pred)
            || (!pred_slot && operand.element == result.element);
        return if element_fits { 200 } else { 80 };
    }
    0
}

/// Attribute names `opcode` takes and the line does not have yet, ranked by the
/// value written after the cursor and XLA's print order around it.
fn attribute_names(cursor: &Cursor, k: usize) -> Vec<Scored> {
    let line = &cursor.line;
    let opcode = cursor.opcode();
    let present: Vec<&str> = (0..line.attributes.len())
        .filter(|&j| j != k)
        .map(|j| line.attribute_name(j))
        .collect();
    let value = line
        .attributes
        .get(k)
        .and_then(|a| a.value.as_ref())
        .map(|v| line.get(v));
    let position = |name: &str| signature::print_position(&opcode, name);
    let previous = k
        .checked_sub(1)
        .and_then(|j| position(line.attribute_name(j)));
    let next = position(line.attribute_name(k + 1));
    signature::attributes(&opcode)
        .enumerate()
        .filter(|(_, a)| !present.contains(&a.name))
        .map(|(p, a)| {
            let mut score = -(p as i64);
            if let Some(value) = value {
                score += match fits(a.value, value) {
                    Some(true) => 600,
                    Some(false) => -300,
                    None => 0,
                };
            }
            if previous.is_none_or(|q| q < p) && next.is_none_or(|q| p < q) {
                score += 300;
            }
            if a.required {
                score += 200;
            }
            let mut it = item(a.name, ItemKind::Attribute, a.name);
            it.detail = Some(format!(
                "{}={}{}",
                a.name,
                signature::template(a.value, false),
                if a.required { " (required)" } else { "" }
            ));
            if value.is_none() {
                it.insert = format!(
                    "{}={}",
                    a.name,
                    signature::template(a.value, cursor.options.snippets)
                );
                it.snippet = cursor.options.snippets;
            }
            Scored { score, item: it }
        })
        .collect()
}

/// Whether `value` is written as a value of `kind` is (`None`: cannot tell).
pub fn fits(kind: ValueKind, value: &str) -> Option<bool> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    let braced = v.starts_with('{');
    let inner = v.trim_start_matches('{').trim_start();
    let ident = v
        .trim_start_matches('%')
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    Some(match kind {
        ValueKind::IntList => {
            braced
                && inner
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b", }-".contains(&b))
        }
        ValueKind::Int => v.parse::<i64>().is_ok(),
        ValueKind::Bool => v == "true" || v == "false",
        ValueKind::Computation => {
            ident && !v.starts_with('k') && v.parse::<i64>().is_err() && v != "true" && v != "false"
                || v.starts_with('%')
        }
        ValueKind::ComputationList | ValueKind::InstructionList => {
            braced
                && (inner.starts_with('%') || inner.starts_with(|c: char| c.is_alphabetic()))
                && !inner.contains('=')
        }
        ValueKind::Slice => v.starts_with("{["),
        ValueKind::Padding => v.bytes().all(|b| b.is_ascii_digit() || b"_x-".contains(&b)),
        ValueKind::Window => v.starts_with("{size=") || v.starts_with("{stride"),
        ValueKind::DimLabels => v.contains("->"),
        ValueKind::FusionKind => v.starts_with('k') && v[1..].starts_with(char::is_uppercase),
        ValueKind::Direction => ["EQ", "NE", "LT", "LE", "GT", "GE"].contains(&v),
        ValueKind::Str => v.starts_with('"'),
        ValueKind::Metadata => {
            braced
                && [
                    "op_type",
                    "op_name",
                    "source_file",
                    "source_line",
                    "stack_frame_id",
                    "}",
                ]
                .iter()
                .any(|k| inner.starts_with(k))
        }
        ValueKind::Json => inner.starts_with('"') || v == "{}",
        ValueKind::Dictionary => {
            braced && inner.contains("=\"") && fits(ValueKind::Metadata, v) != Some(true)
        }
        ValueKind::Sharding => [
            "replicated",
            "maximal",
            "devices=",
            "manual",
            "{",
            "unknown",
            "mesh",
        ]
        .iter()
        .any(|k| inner.starts_with(k)),
        ValueKind::Groups => v.starts_with("{{") || v == "{}" || v.starts_with('['),
        ValueKind::Pairs => v.starts_with("{{") || v == "{}",
        ValueKind::Word(words) => words.contains(&v),
        ValueKind::Other => return None,
    })
}

/// The values of attribute `k` the cursor is in.
fn attribute_values(cursor: &Cursor, k: usize) -> Option<Vec<Scored>> {
    let line = &cursor.line;
    let name = line.attribute_name(k);
    let opcode = cursor.opcode();
    let kind = signature::attribute(&opcode, name)
        .map(|a| a.value)
        .or(match name {
            "to_apply" | "calls" | "condition" | "body" | "select" | "scatter" => {
                Some(ValueKind::Computation)
            }
            "branch_computations" | "called_computations" => Some(ValueKind::ComputationList),
            "kind" => Some(ValueKind::FusionKind),
            "custom_call_target" => Some(ValueKind::Str),
            "backend_config" => Some(ValueKind::Json),
            _ => None,
        })?;
    let quoted = cursor.word.start > 0 && cursor.text.as_bytes()[cursor.word.start - 1] == b'"';
    match kind {
        ValueKind::Computation | ValueKind::ComputationList => {
            let (items, skipped) = computations(cursor, name)?;
            cursor.incomplete.set(skipped);
            Some(items)
        }
        ValueKind::InstructionList => operands(cursor, usize::MAX),
        ValueKind::FusionKind => Some(words(
            signature::FUSION_KINDS.iter().map(|(k, d)| (*k, Some(*d))),
        )),
        ValueKind::Direction => Some(words(
            ["EQ", "NE", "LT", "LE", "GT", "GE"]
                .into_iter()
                .map(|w| (w, None)),
        )),
        ValueKind::Bool => Some(words(["true", "false"].into_iter().map(|w| (w, None)))),
        ValueKind::Word(choices) => Some(words(choices.iter().map(|w| (*w, None)))),
        ValueKind::Str if name == "custom_call_target" => Some(custom_call_targets(
            cursor.hlo,
            &cursor.options.workspace_targets,
            quoted,
        )),
        ValueKind::Json => Some(backend_config_keys(cursor, quoted)),
        ValueKind::Metadata => Some(
            [
                "op_type",
                "op_name",
                "source_file",
                "source_line",
                "stack_frame_id",
            ]
            .into_iter()
            .map(|key| Scored {
                score: 0,
                item: item(key, ItemKind::Key, format!("{key}=")),
            })
            .collect(),
        ),
        _ => None,
    }
}

fn words<'w>(words: impl Iterator<Item = (&'w str, Option<&'w str>)>) -> Vec<Scored> {
    words
        .map(|(w, detail)| {
            let mut it = item(w, ItemKind::Value, w);
            it.detail = detail.map(str::to_string);
            Scored { score: 0, item: it }
        })
        .collect()
}

/// Custom-call targets XLA's GPU and CPU backends register, beside those the
/// document uses.
const KNOWN_TARGETS: &[&str] = &[
    "__cublas$gemm",
    "__cublas$lt$matmul",
    "__cublas$lt$matmul$f8",
    "__cudnn$convForward",
    "__cudnn$convBiasActivationForward",
    "__cudnn$convBackwardInput",
    "__cudnn$convBackwardFilter",
    "__cudnn$fmhaSoftmax",
    "__triton",
    "Sharding",
    "SPMDFullToShardShape",
    "SPMDShardToFullShape",
    "MoveToHost",
    "MoveToDevice",
    "TopK",
    "AllocateBuffer",
    "PadToStatic",
    "SliceToDynamic",
];

/// The targets written in the document (most used first), then those the other
/// open documents write, then the known ones.
fn custom_call_targets(hlo: &HloSnapshot, workspace: &[String], quoted: bool) -> Vec<Scored> {
    let mut seen = hlo.custom_call_targets().to_vec();
    let mine = seen.len();
    for target in workspace {
        if !seen.iter().any(|(t, _)| t == target) {
            seen.push((target.clone(), 0));
        }
    }
    let elsewhere = seen.len();
    for known in KNOWN_TARGETS {
        if !seen.iter().any(|(t, _)| t == known) {
            seen.push((known.to_string(), 0));
        }
    }
    seen.into_iter()
        .enumerate()
        .map(|(k, (target, uses))| {
            let insert = if quoted {
                target.clone()
            } else {
                format!("\"{target}\"")
            };
            let mut it = item(target, ItemKind::Value, insert);
            it.detail = Some(if k < mine {
                format!("used {uses} times in this document")
            } else if k < elsewhere {
                "used in another open document".into()
            } else {
                "an XLA target".into()
            });
            // This document's first (by uses), then the workspace's (in their order,
            // above the known ones).
            let score = match k < mine {
                true => uses + (elsewhere - mine) as i64 + 1,
                false => (elsewhere - k.min(elsewhere)) as i64,
            };
            Scored { score, item: it }
        })
        .collect()
}

/// The custom-call targets `snapshot` writes, most used first (none for MLIR):
/// what completion offers in the other documents of the workspace.
pub fn custom_call_targets_written(snapshot: &Snapshot) -> Vec<String> {
    match snapshot {
        Snapshot::Hlo(hlo) => {
            let mut seen = hlo.custom_call_targets().to_vec();
            seen.sort_by_key(|(_, uses)| std::cmp::Reverse(*uses));
            seen.into_iter().map(|(t, _)| t).collect()
        }
        Snapshot::Mlir(_) => Vec::new(),
    }
}

/// Each `custom_call_target="..."` the document writes, with how often (at most
/// 500 targets), in first-written order.
pub(super) fn written_targets(hlo: &HloSnapshot) -> Vec<(String, i64)> {
    let needle = b"custom_call_target=\"";
    let finder = memchr::memmem::Finder::new(needle);
    let mut seen: Vec<(String, i64)> = Vec::new();
    for chunk in hlo.syntax().chunks() {
        let text = chunk.text();
        for at in finder.find_iter(text.as_bytes()) {
            let start = at + needle.len();
            let Some(len) = text[start..].find('"') else {
                continue;
            };
            let target = &text[start..start + len];
            if target.is_empty() || target.len() > 200 {
                continue;
            }
            if let Some((_, n)) = seen.iter_mut().find(|(t, _)| t == target) {
                *n += 1;
            } else if seen.len() < 500 {
                seen.push((target.to_string(), 1));
            }
        }
    }
    seen
}

/// Keys of XLA's GPU `backend_config` (`GpuBackendConfig` and the messages in it).
const BACKEND_CONFIG_KEYS: &[(&str, &str)] = &[
    ("operation_queue_id", "the stream the op runs on"),
    ("wait_on_operation_queues", "streams to wait for"),
    (
        "fusion_backend_config",
        "a fusion's emitter and its configuration",
    ),
    (
        "kind",
        "the fusion's emitter (`__triton`, `__triton_gemm`, `__cudnn$fusion`, ...)",
    ),
    (
        "block_level_fusion_config",
        "Triton tiling: output tiles, warps, stages",
    ),
    ("output_tiles", "tile sizes of each output"),
    ("num_warps", "warps per block"),
    ("num_ctas", "blocks per cluster"),
    ("num_stages", "pipeline stages"),
    ("triton_gemm_config", "a Triton GEMM's tiling"),
    ("custom_fusion_config", "a custom fusion's name"),
    ("cudnn_fusion_config", "a cuDNN fusion's plan"),
    ("gemm_backend_config", "a cuBLAS call's configuration"),
    (
        "cudnn_conv_backend_config",
        "a cuDNN convolution's configuration",
    ),
    ("collective_backend_config", "a collective's scheduling"),
    ("is_sync", "a collective runs synchronously"),
    ("force_earliest_schedule", "schedule as early as possible"),
    ("reification_cost", "costs measured by autotuning"),
    ("device_type", "where the op runs"),
    ("known_trip_count", "a while loop's trip count"),
    ("known_init_step", "a loop's induction variable"),
    (
        "known_induction_variable",
        "a loop's induction variable index",
    ),
];

/// `backend_config` keys: those of the document's computation first, then XLA's.
fn backend_config_keys(cursor: &Cursor, quoted: bool) -> Vec<Scored> {
    let mut keys: Vec<(String, i64, Option<&str>)> = Vec::new();
    if let Some((_, c)) = cursor.computation() {
        let body = c.text;
        let mut rest = body;
        while let Some(i) = rest.find("\":") {
            let head = &rest[..i];
            if let Some(q) = head.rfind('"') {
                let key = &head[q + 1..];
                if !key.is_empty()
                    && key.len() < 64
                    && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                {
                    match keys.iter_mut().find(|(k, ..)| k == key) {
                        Some((_, n, _)) => *n += 1,
                        None => keys.push((key.to_string(), 1, None)),
                    }
                }
            }
            rest = &rest[i + 2..];
        }
    }
    for (key, doc) in BACKEND_CONFIG_KEYS {
        match keys.iter_mut().find(|(k, ..)| k == key) {
            Some(entry) => entry.2 = Some(doc),
            None => keys.push((key.to_string(), 0, Some(doc))),
        }
    }
    keys.into_iter()
        .map(|(key, uses, doc)| {
            let insert = if quoted {
                key.clone()
            } else {
                format!("\"{key}\":")
            };
            let mut it = item(key, ItemKind::Key, insert);
            it.detail = doc.map(str::to_string);
            Scored {
                score: uses,
                item: it,
            }
        })
        .collect()
}

/// A computation's signature from its header line: parameter shapes and result.
struct Header<'a> {
    parameters: Vec<&'a str>,
    result: &'a str,
}

/// Reads `name (p: f32[2], q: s32[]) -> f32[2] {` at the start of a chunk.
fn header(chunk: &str) -> Option<Header<'_>> {
    let line = chunk
        .lines()
        .find(|l| l.contains("->") || l.trim_end().ends_with('{'))?;
    let open = line.find('(')?;
    let arrow = line.rfind("->")?;
    let close = line[..arrow].rfind(')')?;
    let inside = line.get(open + 1..close)?;
    let mut parameters = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in inside.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parameters.push(&inside[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inside[start..].trim().is_empty() {
        parameters.push(&inside[start..]);
    }
    let parameters = parameters
        .into_iter()
        .map(|p| p.split_once(':').map_or(p, |(_, shape)| shape).trim())
        .collect();
    let result = line[arrow + 2..].trim().trim_end_matches('{').trim();
    Some(Header { parameters, result })
}

/// A shape's text without layouts or spaces, to compare as XLA's `Compatible` does.
fn bare(shape: &str) -> String {
    let mut out = String::with_capacity(shape.len());
    let mut depth = 0;
    let mut last = ' ';
    for c in shape.chars() {
        match c {
            '{' if last == ']' || depth > 0 => depth += 1,
            '}' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            ' ' => {}
            _ => out.push(c),
        }
        if !c.is_whitespace() && depth == 0 {
            last = c;
        }
    }
    out
}

/// Whether `written` is the shape `bare` (a [`bare`] text) once its layouts and
/// spaces are left out; compared without making a string.
fn same_shape(written: &str, bare: &str) -> bool {
    let mut depth = 0;
    let mut last = ' ';
    written
        .chars()
        .filter(move |&c| {
            let keep = match c {
                '{' if last == ']' || depth > 0 => {
                    depth += 1;
                    false
                }
                '}' if depth > 0 => {
                    depth -= 1;
                    false
                }
                _ if depth > 0 => false,
                ' ' => false,
                _ => true,
            };
            if !c.is_whitespace() && depth == 0 {
                last = c;
            }
            keep
        })
        .eq(bare.chars())
}

/// What the called computation's signature should be, from the calling line.
struct Expected {
    parameters: Option<Vec<String>>,
    result: Option<String>,
    /// A reduction's scalar type: every parameter and the result `T[]`.
    scalar: Option<String>,
}

fn expected(cursor: &Cursor, attribute: &str) -> Expected {
    let line = &cursor.line;
    let opcode = cursor.opcode();
    let shape = bare(line.get(&line.shape));
    let operand_shapes: Option<Vec<String>> = cursor.computation().and_then(|(_, c)| {
        line.operands
            .iter()
            .map(|r| {
                let text = line.get(r);
                let name = text.rsplit([' ', '%']).next().unwrap_or("");
                c.instruction_by_name(name)
                    .map(|i| bare(&i.shape.to_string()))
            })
            .collect()
    });
    let element = shape
        .trim_start_matches('(')
        .split('[')
        .next()
        .unwrap_or("")
        .to_string();
    match (&opcode, attribute) {
        (Opcode::Fusion | Opcode::Call | Opcode::AsyncStart, _) => Expected {
            parameters: operand_shapes,
            result: Some(shape),
            scalar: None,
        },
        (Opcode::While, "condition") => Expected {
            parameters: Some(vec![shape]),
            result: Some("pred[]".into()),
            scalar: None,
        },
        (Opcode::While, _) => Expected {
            parameters: Some(vec![shape.clone()]),
            result: Some(shape),
            scalar: None,
        },
        (Opcode::Conditional, _) => Expected {
            parameters: None,
            result: Some(shape),
            scalar: None,
        },
        (Opcode::Sort, _) | (_, "select") => Expected {
            parameters: None,
            result: Some("pred[]".into()),
            scalar: None,
        },
        _ => Expected {
            parameters: None,
            result: None,
            scalar: (!element.is_empty()).then(|| format!("{element}[]")),
        },
    }
}

/// Computations of the module, those nothing calls yet and of a fitting signature
/// first.
/// How many computations on either side of the cursor's are scored before anything
/// is typed: a 60 MB dump has 25,000, and reading every signature took 60 ms. XLA
/// prints a callee just before its callers, so the nearest hold the likely ones; the
/// rest are offered by name once a prefix is typed (the answer says it is incomplete).
const COMPUTATION_WINDOW: i64 = 1000;

fn computations(cursor: &Cursor, attribute: &str) -> Option<(Vec<Scored>, bool)> {
    let file = cursor.hlo.model();
    let at = cursor.base + cursor.word.start;
    let module = file.module(file.module_at(at)?);
    let current = module.computation_at(at);
    let expected = expected(cursor, attribute);
    let hint: &[&str] = match attribute {
        "calls" => &["fused", "fusion", "wrapped", "async"],
        "condition" => &["cond"],
        "body" => &["body"],
        "branch_computations" | "true_computation" | "false_computation" => &["branch"],
        _ => &["region", "add", "max", "min", "sum", "compar"],
    };
    let here = current.map_or(0, |c| c.0 as i64);
    // A list names each branch once: those already in it come last.
    let line = &cursor.line;
    let named: Vec<&str> = (0..line.attributes.len())
        .filter(|&k| line.attribute_name(k) == attribute)
        .flat_map(|k| line.attribute_value(k).split([',', '{', '}', ' ', '%']))
        .filter(|n| !n.is_empty())
        .collect();
    // Scored without a string made (a large dump has 25,000 computations); only the
    // best get their items.
    let typed = &cursor.text[cursor.word.clone()];
    let mut skipped = false;
    let mut scored: Vec<(i64, ComputationId)> = Vec::new();
    for k in 0..module.computation_count() {
        let id = ComputationId(k as u32);
        let outline = module.outline(id);
        let Some(name) = outline.name.as_ref() else {
            continue;
        };
        if outline.is_entry || Some(id) == current {
            continue;
        }
        let distance = (k as i64 - here).abs();
        if distance > COMPUTATION_WINDOW && (typed.is_empty() || !name.name.starts_with(typed)) {
            skipped = true;
            continue;
        }
        let mut score = -distance.min(100);
        if module.callers_of(id).is_empty() {
            score += if attribute == "to_apply" { 150 } else { 300 };
        }
        if named.contains(&&*name.name) {
            score -= 500;
        }
        if hint.iter().any(|h| name.name.contains(h)) {
            score += 100;
        }
        if let Some(h) = header(module.chunk_text(id)) {
            score += signature_score(&h, &expected);
        }
        scored.push((score, id));
    }
    scored.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
    scored.truncate(MAX_ITEMS);
    let items = scored
        .into_iter()
        .filter_map(|(score, id)| {
            let name = module.outline(id).name.as_ref()?;
            let mut it = item(
                &*name.name,
                ItemKind::Computation,
                cursor.spelled(&name.name),
            );
            it.detail = header(module.chunk_text(id))
                .map(|h| format!("({}) -> {}", h.parameters.join(", "), h.result));
            Some(Scored { score, item: it })
        })
        .collect();
    Some((items, skipped))
}

fn signature_score(header: &Header, expected: &Expected) -> i64 {
    let mut score = 0;
    if let Some(parameters) = &expected.parameters {
        if parameters.len() == header.parameters.len() {
            score += 150;
            if parameters
                .iter()
                .zip(&header.parameters)
                .all(|(a, b)| same_shape(b, a))
            {
                score += 300;
            }
        } else {
            score -= 200;
        }
    }
    if let Some(result) = &expected.result {
        score += if same_shape(header.result, result) {
            300
        } else {
            -100
        };
    }
    if let Some(scalar) = &expected.scalar {
        let all_scalar = !header.parameters.is_empty()
            && header.parameters.iter().all(|p| same_shape(p, scalar));
        if all_scalar && same_shape(header.result, scalar) {
            score += 400;
        } else if all_scalar {
            score += 200;
        } else {
            score -= 200;
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_and_names() {
        assert_eq!(name_stem("get-tuple-element.15"), "get-tuple-element");
        assert_eq!(name_stem("region_1.2.clone"), "region_1");
        assert_eq!(name_score("add", "add"), 1000);
        assert!(name_score("fusion", "loop_add_fusion") > name_score("add", "loop_add_fusion"));
        assert!(name_score("parameter", "param_0") > 0);
    }

    #[test]
    fn bare_shapes() {
        assert_eq!(bare("f32[8,128]{1,0}"), "f32[8,128]");
        assert_eq!(bare("(f32[2]{0}, s32[])"), "(f32[2],s32[])");
        assert!(same_shape("(f32[2]{0}, s32[])", "(f32[2],s32[])"));
        assert!(!same_shape("f32[2]{0}", "f32[3]"));
    }

    #[test]
    fn headers() {
        let h = header("%fused (p0: f32[8,128], p1: f32[8]) -> f32[8,128] {\n").unwrap();
        assert_eq!(h.parameters, ["f32[8,128]", "f32[8]"]);
        assert_eq!(h.result, "f32[8,128]");
    }

    #[test]
    fn values_fit() {
        assert_eq!(fits(ValueKind::IntList, "{0,1}"), Some(true));
        assert_eq!(fits(ValueKind::Metadata, "{0,1}"), Some(false));
        assert_eq!(
            fits(ValueKind::Computation, "%fused_computation.1"),
            Some(true)
        );
        assert_eq!(fits(ValueKind::FusionKind, "kLoop"), Some(true));
        assert_eq!(fits(ValueKind::Json, "{\"a\":1}"), Some(true));
    }
}
