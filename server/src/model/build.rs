//! Tree → model. Walks the tree-sitter trees of the syntax layer by field name (see
//! docs/contracts.md), decodes shapes and attributes, resolves names, and reports
//! semantic diagnostics. Never fails: whatever is missing or broken is skipped with a
//! diagnostic (or, for syntax errors, left to the syntax layer's report).
//!
//! Computations are independent until names are resolved across them, so each
//! computation chunk is built on its own, on first use ([`build_chunk`]); the module's
//! cross-references come from the chunks' outlines ([`super::crossref`]).

use std::sync::Arc;

use smallvec::SmallVec;
use thin_vec::ThinVec;
use tree_sitter::{Node, TreeCursor};

use super::attributes::{self, decode_attrs, AttrError, AttrName};
use super::diagnostics::{codes, Diagnostic, Fix, TextEdit};
use super::literal;
use super::module::{
    Attribute, AttributeValueKind, Built, CalledComputation, Computation, InstrId, Instruction,
    Operand, Span, Users,
};
use super::opcode::{async_sugar, AsyncSugar, Opcode};
use super::shape::{parse_shape, parse_shared_shape, PrimitiveType, Shape};
use super::shape_inference::{self, Site};
use crate::syntax::quick::{self, QuickComputation, QuickOperand};
use crate::syntax::{Chunk, ChunkKind};

/// Builds what one chunk yields on its own: for a computation chunk, the computation
/// (positions relative to the chunk) and what it alone shows to be wrong; for any chunk,
/// its syntax errors. Uses the chunk's kept tree, else parses it (and drops the tree).
pub fn build_chunk(chunk: &Chunk) -> Built {
    if let Some(built) = build_quickly(chunk) {
        return built;
    }
    build_from_tree(chunk, &chunk.tree())
}

/// A computation chunk that keeps no tree, read without one when the quick reader
/// accepts it ([`crate::syntax::quick`]: the same model, several times faster).
fn build_quickly(chunk: &Chunk) -> Option<Built> {
    if chunk.kind != ChunkKind::Computation || chunk.kept_tree().is_some() {
        return None;
    }
    let read = quick::read_computation(chunk.text())?;
    let (computation, diagnostics) = build_read_computation(chunk.text(), read);
    Some(Built {
        computation,
        diagnostics,
    })
}

/// [`build_chunk`] from a parse of the chunk (public for the differential test of
/// the quick reader).
pub fn build_from_tree(chunk: &Chunk, tree: &tree_sitter::Tree) -> Built {
    let mut diagnostics: Vec<Diagnostic> = chunk
        .syntax_errors(tree)
        .into_iter()
        .map(|e| Diagnostic::error(e.range, codes::SYNTAX_ERROR, e.message))
        .collect();
    if chunk.kind == ChunkKind::Header {
        diagnostics.extend(super::header::diagnostics(chunk.text()));
    }
    if chunk.kind != ChunkKind::Computation {
        return Built {
            diagnostics,
            ..Built::default()
        };
    }
    let item = Chunk::item(tree);
    let computation = match item.map(|n| (n, n.kind())) {
        Some((node, "computation")) => {
            let (computation, mut own) = build_computation(chunk.text(), node);
            diagnostics.append(&mut own);
            computation
        }
        Some((node, "instruction")) => {
            let (computation, mut own) = build_single_instruction(chunk.text(), node);
            diagnostics.append(&mut own);
            computation
        }
        _ => unparsed_computation(chunk),
    };
    Built {
        computation,
        diagnostics,
    }
}

/// A computation chunk that does not parse as one: named from its outline, empty (the
/// syntax errors say what is wrong).
fn unparsed_computation(chunk: &Chunk) -> Computation {
    let outline = chunk.outline();
    let name_range = outline.name.as_ref().map_or(Span::default(), |n| Span {
        start: n.start,
        end: n.end,
    });
    Computation {
        name: outline
            .name
            .as_ref()
            .map_or_else(String::new, |n| n.name.to_string()),
        name_range,
        range: Span::new(0..chunk.text().trim_end().len()),
        is_entry: outline.is_entry,
        ..Computation::default()
    }
}

/// Field and kind ids of the grammar, looked up once: `child_by_field_name` and
/// `kind()` compare strings on every call, which showed up in profiles of large
/// modules.
struct Fields {
    attribute: u16,
    body: u16,
    entry: u16,
    key: u16,
    literal: u16,
    name: u16,
    nested: u16,
    opcode: u16,
    operands: u16,
    root: u16,
    shape: u16,
    signature: u16,
    value: u16,
    /// The kind id of `operand` nodes.
    operand_kind: u16,
}

fn fields() -> &'static Fields {
    static FIELDS: std::sync::OnceLock<Fields> = std::sync::OnceLock::new();
    FIELDS.get_or_init(|| {
        let language = crate::syntax::language();
        let id = |name: &str| {
            language
                .field_id_for_name(name)
                .unwrap_or_else(|| panic!("the grammar has no field `{name}`"))
                .get()
        };
        Fields {
            attribute: id("attribute"),
            body: id("body"),
            entry: id("entry"),
            key: id("key"),
            literal: id("literal"),
            name: id("name"),
            nested: id("nested"),
            opcode: id("opcode"),
            operands: id("operands"),
            root: id("root"),
            shape: id("shape"),
            signature: id("signature"),
            value: id("value"),
            operand_kind: language.id_for_node_kind("operand", true),
        }
    })
}

/// Calls `visit` with each child of `node` that has a field, and the field's id, in
/// one walk over the children: `child_by_field_id` walks them again per field asked
/// for. `cursor` is reused (making one allocates).
fn for_each_field<'t>(
    cursor: &mut TreeCursor<'t>,
    node: Node<'t>,
    mut visit: impl FnMut(u16, Node<'t>),
) {
    cursor.reset(node);
    if !cursor.goto_first_child() {
        return;
    }
    loop {
        if let Some(id) = cursor.field_id() {
            visit(id.get(), cursor.node());
        }
        if !cursor.goto_next_sibling() {
            return;
        }
    }
}

fn strip_percent(name: &str) -> &str {
    name.strip_prefix('%').unwrap_or(name)
}

/// Everything about one computation chunk, built without looking at other chunks.
/// Positions are relative to the chunk (its tree's own byte offsets).
struct ComputationBuilder<'a, 't> {
    /// The chunk's text.
    text: &'a str,
    /// Ties the builder to the tree its inline operands are read from.
    tree: std::marker::PhantomData<Node<'t>>,
    computation: Computation,
    diagnostics: Vec<Diagnostic>,
    /// Operand names to resolve once every instruction is known: (instruction,
    /// operand index, name).
    pending: Vec<(usize, usize, &'a str)>,
    roots: Vec<InstrId>,
    /// Instructions with an attribute that did not decode: shape checks would only
    /// repeat that error as a missing attribute, so they are skipped.
    undecoded: Vec<usize>,
    /// How deep the inline operand being built is (see [`MAX_INLINE_DEPTH`]).
    inline_depth: usize,
    /// A single-instruction file: operands it does not define are parameters, as XLA's
    /// parser makes them (`ParseSingleInstruction`).
    single: bool,
}

/// How deep inline operands (`add(f32[] negate(f32[] ...)))`) may nest: building
/// one recurses per level. Real dumps nest one or two.
pub const MAX_INLINE_DEPTH: usize = 100;

impl<'a, 't> ComputationBuilder<'a, 't> {
    fn new(text: &'a str, range: Span) -> Self {
        ComputationBuilder {
            text,
            tree: std::marker::PhantomData,
            computation: Computation {
                range,
                ..Computation::default()
            },
            diagnostics: Vec::new(),
            pending: Vec::new(),
            roots: Vec::new(),
            undecoded: Vec::new(),
            inline_depth: 0,
            single: false,
        }
    }
}

/// A file that is one instruction: a computation of that instruction, named after it,
/// whose undefined operands are its parameters. Anything after the instruction is an
/// error, as in XLA ("Expected eof after parsing single instruction").
fn build_single_instruction<'t>(text: &str, node: Node<'t>) -> (Computation, Vec<Diagnostic>) {
    let mut b = ComputationBuilder::new(text, span(node));
    b.single = true;
    let syntax = InstrSyntax::of(&mut node.walk(), node);
    if let Some(name) = syntax.name.or(syntax.opcode) {
        b.computation.name = strip_percent(b.span_text(name)).to_string();
        b.computation.name_range = name;
        let name_text = b.computation.name.clone();
        if let Some(id) = b.add(name_text, name, span(node), &syntax, false) {
            b.computation.instructions[id.index()].is_root = true;
            b.roots.push(id);
        }
    }
    unnamed_operands_inline(text, node, &mut b.diagnostics);
    let mut next = node.next_named_sibling();
    while let Some(extra) = next {
        if extra.kind() != "comment" {
            b.diagnostics.push(Diagnostic::error(
                extra.byte_range(),
                codes::SYNTAX_ERROR,
                "Expected eof after parsing single instruction: a file of several \
                 instructions needs an `HloModule` header and a computation",
            ));
            break;
        }
        next = extra.next_named_sibling();
    }
    b.resolve();
    b.check_shapes();
    b.computation.shrink_to_fit();
    (b.computation, b.diagnostics)
}

/// Inside a computation written inline (`to_apply={ r = f32[] add(f32[], f32[]) }`)
/// every operand names an instruction: only the single instruction's own operands
/// may be bare shapes. XLA's parser says "expects name" there
/// (`HloParserSingleOpTest.SingleOpWithNested_NoOperandName`). The grammar keeps an
/// inline computation as one token, so its operand lists are read from its text.
fn unnamed_operands_inline(text: &str, node: Node, diagnostics: &mut Vec<Diagnostic>) {
    if node.kind() == "inline_computation" {
        let range = node.byte_range();
        let body = text.get(range.clone()).unwrap_or("");
        for at in bare_shape_operands(body) {
            let at = range.start + at.start..range.start + at.end;
            diagnostics.push(Diagnostic::error(
                at,
                codes::SYNTAX_ERROR,
                "expects name: inside a computation written inline, an operand names an \
                 instruction (only the single instruction's own operands may be bare shapes)",
            ));
        }
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        unnamed_operands_inline(text, child, diagnostics);
    }
}

/// The byte ranges of operands of `body`'s instructions that are a shape and
/// nothing else (`add(f32[], f32[])`): after each `= shape opcode(`, the list's
/// top-level items.
fn bare_shape_operands(body: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    for (line_start, line) in body.split_inclusive('\n').scan(0, |at, l| {
        let start = *at;
        *at += l.len();
        Some((start, l))
    }) {
        let Some(eq) = line.find(" = ") else {
            continue;
        };
        let Some(open) = line[eq..].find('(').map(|k| eq + k) else {
            continue;
        };
        let mut depth = 0usize;
        let mut item = open + 1;
        for (k, c) in line.char_indices().skip_while(|(k, _)| *k <= open) {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' if depth > 0 => depth -= 1,
                ',' | ')' if depth == 0 => {
                    let piece = &line[item..k];
                    let trimmed = piece.trim();
                    if is_bare_shape(trimmed) {
                        let lead = piece.len() - piece.trim_start().len();
                        let start = line_start + item + lead;
                        out.push(start..start + trimmed.len());
                    }
                    item = k + 1;
                    if c == ')' {
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// `f32[]`, `f32[10]{0}`, `s32[2,3]`: an element type and extents, no name after.
fn is_bare_shape(item: &str) -> bool {
    let Some((element, rest)) = item.split_once('[') else {
        return false;
    };
    let element_ok = !element.is_empty()
        && element.starts_with(|c: char| c.is_ascii_lowercase())
        && element.chars().all(|c| c.is_ascii_alphanumeric());
    let Some((dims, tail)) = rest.split_once(']') else {
        return false;
    };
    let dims_ok = dims
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, ',' | '?' | '<' | '=' | ' '));
    let tail = tail.trim();
    let layout_ok = tail.is_empty() || (tail.starts_with('{') && tail.ends_with('}'));
    element_ok && dims_ok && layout_ok
}

fn build_computation<'t>(text: &str, node: Node<'t>) -> (Computation, Vec<Diagnostic>) {
    let f = fields();
    let mut b = ComputationBuilder::new(text, span(node));
    let mut cursor = node.walk();
    let (mut name, mut signature, mut body) = (None, None, None);
    for_each_field(&mut cursor, node, |field, child| match field {
        _ if field == f.name => name = Some(child),
        _ if field == f.entry => b.computation.is_entry = true,
        _ if field == f.signature => signature = Some(child),
        _ if field == f.body => body = Some(child),
        _ => {}
    });
    if let Some(name) = name {
        b.computation.name = strip_percent(&text[name.byte_range()]).to_string();
        b.computation.name_range = span(name);
    }
    if let Some(signature) = signature {
        b.computation.signature_range = Some(span(signature));
        let mut cursor = signature.walk();
        b.computation.signature_parameters = signature
            .named_children(&mut cursor)
            .filter(|n| n.kind() == "parameter")
            .filter_map(|p| p.child_by_field_id(f.name))
            .map(span)
            .collect();
    }
    if let Some(body) = body {
        // `{`, the instructions, `}`: inline operands may add a few more.
        b.computation
            .instructions
            .reserve(body.child_count() as usize);
        let mut children = body.walk();
        for instr in body
            .named_children(&mut children)
            .filter(|n| n.kind() == "instruction")
        {
            let syntax = InstrSyntax::of(&mut cursor, instr);
            b.instruction(&syntax);
        }
    }
    let result = signature.and_then(|s| s.child_by_field_name("result"));
    let body_parsed = body.is_some_and(|n| !n.has_error());
    b.finish(result.map(span), body_parsed)
}

/// [`build_computation`] from what the quick reader read: the same model.
fn build_read_computation(text: &str, read: QuickComputation) -> (Computation, Vec<Diagnostic>) {
    let mut b = ComputationBuilder::new(text, Span::new(read.range));
    b.computation.is_entry = read.entry;
    b.computation.name = strip_percent(&text[read.name.clone()]).to_string();
    b.computation.name_range = Span::new(read.name);
    let mut result = None;
    if let Some(signature) = read.signature {
        b.computation.signature_range = Some(Span::new(signature.range));
        b.computation.signature_parameters =
            signature.parameters.into_iter().map(Span::new).collect();
        result = Some(Span::new(signature.result));
    }
    b.computation.instructions.reserve(read.instructions.len());
    for instr in read.instructions {
        b.instruction(&InstrSyntax::read(instr));
    }
    b.finish(result, true)
}

/// An instruction's parts as byte ranges, read from its tree node
/// ([`InstrSyntax::of`]) or by the quick reader ([`InstrSyntax::read`]): the
/// builder reads one or the other the same way.
#[derive(Default)]
struct InstrSyntax<'t> {
    /// The whole instruction (or inline operand).
    range: Span,
    root: bool,
    name: Option<Span>,
    shape: Option<Span>,
    opcode: Option<Span>,
    /// The operand list with its parentheses, and its operands.
    operands: Option<(Span, SmallVec<[OperandSyntax<'t>; 4]>)>,
    attributes: SmallVec<[AttrSyntax; 4]>,
}

/// One operand (`range` is the `operand` node's).
enum OperandSyntax<'t> {
    /// A name, its shape written before it or not; no name: a shape alone.
    Named {
        range: Span,
        shape: Option<Span>,
        name: Option<Span>,
    },
    Literal {
        literal: Span,
    },
    /// An instruction written inline (only from a tree: the quick reader declines).
    Nested {
        range: Span,
        node: Node<'t>,
    },
}

/// `key=value`, and the computations a computation key's value names.
struct AttrSyntax {
    key: Span,
    value: Span,
    value_kind: AttributeValueKind,
    called: SmallVec<[Span; 1]>,
}

/// The kind of an attribute value, by its node kind in the grammar.
fn value_kind(kind: &str) -> AttributeValueKind {
    match kind {
        "computation_ref" => AttributeValueKind::ComputationRef,
        "computation_list" => AttributeValueKind::ComputationList,
        "brace_block" | "inline_computation" => AttributeValueKind::Braces,
        "string" => AttributeValueKind::String,
        _ => AttributeValueKind::Atom,
    }
}

impl<'t> InstrSyntax<'t> {
    /// The parts of an instruction or inline operand node, by field.
    fn of(cursor: &mut TreeCursor<'t>, node: Node<'t>) -> InstrSyntax<'t> {
        let f = fields();
        let mut syntax = InstrSyntax {
            range: span(node),
            ..InstrSyntax::default()
        };
        let mut operand_list = None;
        let mut attributes: SmallVec<[Node<'t>; 4]> = SmallVec::new();
        for_each_field(cursor, node, |field, child| match field {
            _ if field == f.root => syntax.root = true,
            _ if field == f.name => syntax.name = Some(span(child)),
            _ if field == f.shape => syntax.shape = Some(span(child)),
            _ if field == f.opcode => syntax.opcode = Some(span(child)),
            _ if field == f.operands => operand_list = Some(child),
            _ if field == f.attribute => attributes.push(child),
            _ => {}
        });
        if let Some(list) = operand_list {
            syntax.operands = Some((span(list), operands_of(cursor, list)));
        }
        syntax.attributes = attributes
            .into_iter()
            .filter_map(|a| attribute_of(cursor, a))
            .collect();
        syntax
    }

    /// What the quick reader read.
    fn read(read: quick::QuickInstruction) -> InstrSyntax<'t> {
        let operands = read
            .operand_items
            .into_iter()
            .map(|o| match o {
                QuickOperand::Named { range, shape, name } => OperandSyntax::Named {
                    range: Span::new(range),
                    shape: shape.map(Span::new),
                    name: Some(Span::new(name)),
                },
                QuickOperand::Literal(literal) => OperandSyntax::Literal {
                    literal: Span::new(literal),
                },
            })
            .collect();
        InstrSyntax {
            range: Span::new(read.range),
            root: read.root,
            name: Some(Span::new(read.name)),
            shape: read.shape.map(Span::new),
            opcode: Some(Span::new(read.opcode)),
            operands: Some((Span::new(read.operands), operands)),
            attributes: read
                .attributes
                .into_iter()
                .map(|a| AttrSyntax {
                    key: Span::new(a.key),
                    value: Span::new(a.value),
                    value_kind: value_kind(a.value_kind),
                    called: a.called.into_iter().map(Span::new).collect(),
                })
                .collect(),
        }
    }
}

/// The operands of an `operand_list` node.
fn operands_of<'t>(
    cursor: &mut TreeCursor<'t>,
    list: Node<'t>,
) -> SmallVec<[OperandSyntax<'t>; 4]> {
    let operand_kind = fields().operand_kind;
    let mut nodes: SmallVec<[Node<'t>; 4]> = SmallVec::new();
    cursor.reset(list);
    if cursor.goto_first_child() {
        loop {
            let child = cursor.node();
            if child.kind_id() == operand_kind {
                nodes.push(child);
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    let f = fields();
    nodes
        .into_iter()
        .map(|node| {
            let (mut shape, mut name, mut nested, mut literal) = (None, None, None, None);
            for_each_field(cursor, node, |field, child| match field {
                _ if field == f.shape => shape = Some(span(child)),
                _ if field == f.name => name = Some(span(child)),
                _ if field == f.nested => nested = Some(child),
                _ if field == f.literal => literal = Some(span(child)),
                _ => {}
            });
            let range = span(node);
            match (literal, nested) {
                (Some(literal), _) => OperandSyntax::Literal { literal },
                (None, Some(node)) => OperandSyntax::Nested { range, node },
                (None, None) => OperandSyntax::Named { range, shape, name },
            }
        })
        .collect()
}

/// An `attribute` node's key and value; none when either is missing (a syntax error).
fn attribute_of<'t>(cursor: &mut TreeCursor<'t>, node: Node<'t>) -> Option<AttrSyntax> {
    let f = fields();
    let (mut key, mut value) = (None, None);
    for_each_field(cursor, node, |field, child| match field {
        _ if field == f.key => key = Some(child),
        _ if field == f.value => value = Some(child),
        _ => {}
    });
    let (key, value) = (key?, value?);
    let value_kind = value_kind(value.kind());
    let called = match value_kind {
        AttributeValueKind::ComputationRef | AttributeValueKind::ComputationList => {
            let mut cursor = value.walk();
            let names = value
                .named_children(&mut cursor)
                .filter(|n| n.kind() == "name")
                .map(span)
                .collect();
            names
        }
        _ => SmallVec::new(),
    };
    Some(AttrSyntax {
        key: span(key),
        value: span(value),
        value_kind,
        called,
    })
}

/// A node's span in its chunk.
fn span(node: Node) -> Span {
    Span::new(node.byte_range())
}

impl<'a, 't> ComputationBuilder<'a, 't> {
    fn span_text(&self, span: Span) -> &'a str {
        &self.text[span.range()]
    }

    fn instruction(&mut self, syntax: &InstrSyntax<'t>) {
        let Some(name_range) = syntax.name else {
            return; // a broken instruction: the syntax layer reports it
        };
        let name_text = strip_percent(self.span_text(name_range)).to_string();
        let Some(id) = self.add(name_text, name_range, syntax.range, syntax, false) else {
            return;
        };
        if syntax.root {
            self.computation.instructions[id.index()].is_root = true;
            self.roots.push(id);
        }
    }

    /// Adds an instruction (inline operands first, as synthesized instructions);
    /// none without an opcode and operands (a broken instruction: the syntax layer
    /// reports it).
    fn add(
        &mut self,
        name: String,
        name_range: Span,
        range: Span,
        syntax: &InstrSyntax<'t>,
        synthetic: bool,
    ) -> Option<InstrId> {
        let (Some(opcode_range), Some((operands_range, operand_syntax))) =
            (syntax.opcode, &syntax.operands)
        else {
            return None;
        };
        let opcode_text = self.span_text(opcode_range);
        let opcode = self.opcode(opcode_text, opcode_range);
        let (shape, shape_range) = match syntax.shape {
            Some(s) => (self.shape(s), s),
            None => (Shape::invalid(), Span::at(opcode_range.start)),
        };
        let mut operands = ThinVec::with_capacity(operand_syntax.len());
        let mut literals = ThinVec::new();
        let mut pending_names: SmallVec<[(usize, &'a str); 4]> = SmallVec::new();
        for operand in operand_syntax {
            match *operand {
                OperandSyntax::Literal { literal } => literals.push(literal),
                OperandSyntax::Nested { range, node } => {
                    let k = operands.len();
                    let target = self.nested(&name, k, node);
                    operands.push(Operand::inline(range, target));
                }
                OperandSyntax::Named {
                    range,
                    shape,
                    name: None,
                } => {
                    // `f32[4]` alone: a parameter of a single-instruction file.
                    let declared_shape = shape.map(|s| self.shape(s));
                    if !self.single {
                        self.diagnostics.push(Diagnostic::error(
                            range.range(),
                            codes::SYNTAX_ERROR,
                            "expects name: an operand names an instruction (only a \
                             single-instruction file may leave it out)",
                        ));
                    }
                    operands.push(Operand::named(range, Span::NONE, declared_shape));
                }
                OperandSyntax::Named {
                    range,
                    shape,
                    name: Some(op_name),
                } => {
                    let declared_shape = shape.map(|s| self.shape(s));
                    pending_names.push((operands.len(), strip_percent(self.span_text(op_name))));
                    operands.push(Operand::named(range, op_name, declared_shape));
                }
            }
        }
        let attributes: ThinVec<Attribute> = syntax
            .attributes
            .iter()
            .map(|a| self.attribute(a))
            .collect();
        let (attrs, errors) = decode_attrs(
            attributes
                .iter()
                .map(|a| (a.name.as_str(), &self.text[a.value_range.range()])),
        );
        let had_errors = !errors.is_empty();
        for (i, AttrError { offset, message }) in errors {
            let v = attributes[i].value_range.range();
            let start = (v.start + offset).min(v.end);
            self.diagnostics.push(Diagnostic::error(
                start..v.end.max(start),
                codes::INVALID_ATTRIBUTE,
                format!("bad `{}`: {message}", attributes[i].name),
            ));
        }
        if had_errors {
            self.undecoded.push(self.computation.instructions.len());
        }
        let called = syntax
            .attributes
            .iter()
            .zip(&attributes)
            .flat_map(|(a, attribute)| {
                a.called.iter().map(|&n| CalledComputation {
                    attribute: attribute.name,
                    name: strip_percent(self.span_text(n)).to_string(),
                    name_range: n,
                })
            })
            .collect();
        let parameter_number = if opcode == Opcode::Parameter {
            literals
                .first()
                .and_then(|r| attributes::parse_integer(&self.text[r.range()]).ok())
                .and_then(|k| u32::try_from(k).ok())
        } else {
            None
        };
        if parameter_number.is_some() {
            // Kept decoded; the text's range only when it is not a number (for the
            // report): most instructions of a fused computation are parameters.
            literals = ThinVec::new();
        }
        if opcode == Opcode::Constant {
            self.check_literal(&shape, &literals);
        }
        if !opcode.arity().accepts(operands.len()) {
            self.diagnostics.push(Diagnostic::error(
                operands_range.range(),
                codes::OPERAND_COUNT,
                format!("{opcode} takes {}, got {}", opcode.arity(), operands.len()),
            ));
        }
        let id = InstrId(self.computation.instructions.len() as u32);
        let index = id.index();
        for (k, n) in pending_names {
            self.pending.push((index, k, n));
        }
        self.computation.instructions.push(Instruction {
            id,
            name: name.into(),
            name_range,
            range,
            is_root: false,
            synthetic,
            shape,
            shape_range,
            opcode,
            opcode_range,
            operands,
            operands_range: *operands_range,
            literals,
            parameter_number,
            attributes,
            decoded: attrs.boxed(),
            called,
        });
        Some(id)
    }

    /// What every computation ends with: names resolved, parameters and shapes
    /// checked, the root against the signature's `result` shape, async chains, and a
    /// warning for an empty body that parsed (`body_parsed`).
    fn finish(mut self, result: Option<Span>, body_parsed: bool) -> (Computation, Vec<Diagnostic>) {
        self.resolve();
        self.check_parameters();
        self.check_shapes();
        if let Some(result) = result {
            self.check_result(result);
        }
        let chains = super::async_ops::check(&self.computation, self.text);
        self.diagnostics.extend(chains);
        self.computation.shrink_to_fit();
        if self.computation.instructions.is_empty() && body_parsed {
            self.diagnostics.push(Diagnostic::warning(
                self.computation.name_range.range(),
                codes::EMPTY_COMPUTATION,
                format!(
                    "computation `{}` has no instructions",
                    self.computation.name
                ),
            ));
        }
        (self.computation, self.diagnostics)
    }

    /// The opcode spelled `text`: a sugared async name (`dot-start`) reads as the
    /// async op it stands for. An unknown name is a warning (XLA may have added an
    /// opcode since), a sugared name XLA refuses is an error.
    fn opcode(&mut self, text: &str, range: Span) -> Opcode {
        let opcode = Opcode::from_name(text);
        if !opcode.is_unknown() {
            return opcode;
        }
        match async_sugar(text) {
            Some(AsyncSugar::Async { op, .. }) => return op,
            Some(AsyncSugar::NotWrappable) => self.diagnostics.push(Diagnostic::error(
                range.range(),
                codes::UNKNOWN_OPCODE,
                format!("Unknown opcode: {text} (its stem has async forms of its own)"),
            )),
            None => self.diagnostics.push(Diagnostic::warning(
                range.range(),
                codes::UNKNOWN_OPCODE,
                format!("unknown opcode `{text}`"),
            )),
        }
        opcode
    }

    /// A constant's literal against its array shape ([`literal::check`]).
    fn check_literal(&mut self, shape: &Shape, literals: &[Span]) {
        let (Shape::Array(array), [only]) = (shape, literals) else {
            return;
        };
        if let Err((range, message)) = literal::check(array, &self.text[only.range()]) {
            let start = only.start as usize;
            self.diagnostics.push(Diagnostic::error(
                start + range.start..start + range.end,
                codes::INVALID_LITERAL,
                message,
            ));
        }
    }

    /// An inline operand (`add(f32[] constant(1), x)`): synthesized as an instruction.
    fn nested(&mut self, user: &str, k: usize, node: Node<'t>) -> Option<InstrId> {
        let range = span(node);
        if self.inline_depth >= MAX_INLINE_DEPTH {
            self.diagnostics.push(Diagnostic::error(
                range.range(),
                codes::NESTED_TOO_DEEP,
                format!("inline operands nested more than {MAX_INLINE_DEPTH} deep"),
            ));
            return None;
        }
        let syntax = InstrSyntax::of(&mut node.walk(), node);
        self.inline_depth += 1;
        let id = self.add(format!("{user}.operand{k}"), range, range, &syntax, true);
        self.inline_depth -= 1;
        id
    }

    fn shape(&mut self, span: Span) -> Arc<Shape> {
        let range = span.range();
        let text = &self.text[range.clone()];
        match parse_shared_shape(text) {
            Ok(shape) => {
                for leaf in shape.leaves() {
                    if let PrimitiveType::Unknown(name) = &leaf.element {
                        self.diagnostics.push(Diagnostic::error(
                            range.clone(),
                            codes::UNKNOWN_TYPE,
                            format!(
                                "unknown element type `{name}` (XLA's parser expects a known one)"
                            ),
                        ));
                    }
                }
                shape
            }
            Err(e) => {
                let start = (range.start + e.offset).min(range.end);
                self.diagnostics.push(Diagnostic::error(
                    start..range.end,
                    codes::INVALID_SHAPE,
                    format!("invalid shape: {}", e.message),
                ));
                Shape::invalid()
            }
        }
    }

    /// An attribute; an unknown key is a warning.
    fn attribute(&mut self, syntax: &AttrSyntax) -> Attribute {
        let name = self.span_text(syntax.key);
        let known = AttrName::of(name);
        if known == AttrName::UNKNOWN {
            self.diagnostics.push(Diagnostic::warning(
                syntax.key.range(),
                codes::UNKNOWN_ATTRIBUTE,
                format!("unknown attribute `{name}`"),
            ));
        }
        Attribute {
            name: known,
            name_range: syntax.key,
            value_range: syntax.value,
            value_kind: syntax.value_kind,
        }
    }

    /// Names, duplicates, operand targets, users, the root.
    fn resolve(&mut self) {
        let c = &mut self.computation;
        let (names, duplicates) = super::names::NameIndex::of(&c.instructions);
        c.names = names;
        for (twice, first) in duplicates {
            let instr = &c.instructions[twice.index()];
            let free =
                super::names::free_name(&instr.name, |n| c.names.get(&c.instructions, n).is_some());
            let written = &self.text[instr.name_range.range()];
            let percent = if written.starts_with('%') { "%" } else { "" };
            self.diagnostics.push(
                Diagnostic::error(
                    instr.name_range.range(),
                    codes::DUPLICATE_NAME,
                    format!("`{}` is defined twice in `{}`", instr.name, c.name),
                )
                .with_related(
                    c.instructions[first.index()].name_range.range(),
                    "first defined here",
                )
                .with_fix(Fix {
                    title: format!("rename to `{free}`"),
                    edits: vec![TextEdit {
                        range: instr.name_range.range(),
                        new_text: format!("{percent}{free}"),
                    }],
                }),
            );
        }
        for &(i, k, name) in &self.pending {
            match c.names.get(&c.instructions, name) {
                Some(target) => {
                    c.instructions[i].operands[k].target = Some(target);
                }
                None if self.single => {}
                None => {
                    let range = c.instructions[i].operands[k]
                        .name_range()
                        .unwrap_or_default()
                        .range();
                    self.diagnostics.push(Diagnostic::error(
                        range,
                        codes::UNDEFINED_NAME,
                        format!("`{name}` is not defined in `{}`", c.name),
                    ));
                }
            }
        }
        self.check_control_predecessors();
        let c = &mut self.computation;
        c.users = Users::of(&c.instructions);
        c.call_sites = super::module::call_sites(&c.instructions);
        for &extra in self.roots.iter().skip(1) {
            self.diagnostics.push(Diagnostic::error(
                c.instructions[extra.index()].name_range.range(),
                codes::MULTIPLE_ROOTS,
                format!(
                    "`{}` has more than one ROOT (one computation should have only one ROOT)",
                    c.name
                ),
            ));
        }
        infer_missing_shapes(c);
        c.root = self.roots.first().copied().or_else(|| {
            c.instructions
                .iter()
                .rposition(|i| !i.synthetic)
                .map(|i| InstrId(i as u32))
        });
    }

    /// The signature's result shape fits the root's, as XLA's parser requires.
    fn check_result(&mut self, result: Span) {
        let c = &self.computation;
        let Some(root) = c.root.map(|r| c.instruction(r)) else {
            return;
        };
        let Ok(declared) = parse_shape(self.span_text(result)) else {
            return;
        };
        if matches!(*root.shape, Shape::Invalid) || declared.compatible(&root.shape) {
            return;
        }
        let message = format!(
            "Shape of computation {}, {declared}, is not compatible with that of its root \
             instruction {}, {}",
            c.name, root.name, root.shape
        );
        self.diagnostics.push(
            Diagnostic::error(result.range(), codes::SHAPE_MISMATCH, message)
                .with_related(root.shape_range.range(), "the root's shape"),
        );
    }

    /// Every name in `control-predecessors={a, b}` is an instruction of the
    /// computation, as XLA's parser requires.
    fn check_control_predecessors(&mut self) {
        let c = &self.computation;
        let mut found = Vec::new();
        for instr in &c.instructions {
            let Some(a) = instr.attribute("control-predecessors") else {
                continue;
            };
            let value = a.value_range.range();
            let text = &self.text[value.clone()];
            let inner = text.trim().trim_start_matches('{').trim_end_matches('}');
            let base = value.start + text.find(inner).unwrap_or(0);
            let mut at = 0;
            for piece in inner.split(',') {
                let name = piece.trim();
                let offset = base + at + piece.find(name).unwrap_or(0);
                at += piece.len() + 1;
                let bare = strip_percent(name);
                if bare.is_empty() || c.names.get(&c.instructions, bare).is_some() {
                    continue;
                }
                found.push(Diagnostic::error(
                    offset..offset + name.len(),
                    codes::UNDEFINED_NAME,
                    format!("`{bare}` is not defined in `{}`", c.name),
                ));
            }
        }
        self.diagnostics.extend(found);
    }

    /// `parameter(k)` numbers: each at most once, none missing below the largest.
    fn check_parameters(&mut self) {
        let c = &mut self.computation;
        for instr in &c.instructions {
            if instr.opcode != Opcode::Parameter {
                continue;
            }
            let Some(k) = instr.parameter_number.and_then(|k| usize::try_from(k).ok()) else {
                let written = instr.literals.first().map(|r| self.text[r.range()].trim());
                let message = match written.map(attributes::parse_integer) {
                    Some(Ok(k)) if k >= 0 => format!("parameter number {k} is too large"),
                    _ => "parameter needs a non-negative number: `parameter(0)`".to_string(),
                };
                self.diagnostics.push(Diagnostic::error(
                    instr.operands_range.range(),
                    codes::PARAMETER_NUMBER,
                    message,
                ));
                continue;
            };
            if k > c.instructions.len() + 1024 {
                self.diagnostics.push(Diagnostic::error(
                    instr.operands_range.range(),
                    codes::PARAMETER_NUMBER,
                    format!("parameter number {k} is too large"),
                ));
                continue;
            }
            if c.parameters.len() <= k {
                c.parameters.resize(k + 1, None);
            }
            match c.parameters[k] {
                Some(first) => self.diagnostics.push(
                    Diagnostic::error(
                        instr.operands_range.range(),
                        codes::PARAMETER_NUMBER,
                        format!("duplicate parameter number {k}"),
                    )
                    .with_related(
                        c.instructions[first.index()].name_range.range(),
                        "first declared here",
                    ),
                ),
                None => c.parameters[k] = Some(instr.id),
            }
        }
        for (k, p) in c.parameters.iter().enumerate() {
            if p.is_none() {
                self.diagnostics.push(Diagnostic::error(
                    c.name_range.range(),
                    codes::PARAMETER_NUMBER,
                    format!(
                        "`{}` has no parameter {k} (parameters are numbered from 0 without gaps)",
                        c.name
                    ),
                ));
            }
        }
    }

    /// Operand shapes as written vs. their definitions, and XLA's shape inference.
    fn check_shapes(&mut self) {
        let c = &self.computation;
        let mut found = Vec::new();
        for instr in &c.instructions {
            for operand in &instr.operands {
                let (Some(declared), Some(t)) = (operand.declared_shape.as_deref(), operand.target)
                else {
                    continue;
                };
                let actual = &c.instruction(t).shape;
                if !matches!(**actual, Shape::Invalid)
                    && !matches!(declared, Shape::Invalid)
                    && !declared.compatible(actual)
                {
                    found.push(
                        Diagnostic::error(
                            operand.range.range(),
                            codes::SHAPE_MISMATCH,
                            format!(
                                "the declared operand shape {declared} is not compatible with \
                                 the shape of the operand instruction `{}`, {actual}",
                                c.instruction(t).name
                            ),
                        )
                        .with_related(c.instruction(t).shape_range.range(), "defined here"),
                    );
                }
            }
            found.extend(super::instruction_checks::check(instr, self.text, |k| {
                c.operand_shape(instr, k)
            }));
            if self.undecoded.contains(&instr.id.index()) {
                continue;
            }
            if *instr.shape == Shape::Invalid
                && instr.shape_range.is_empty()
                && instr.opcode != Opcode::Tuple
            {
                continue; // no shape written (XLA infers it); nothing to compare
            }
            let shapes: Vec<Option<&Shape>> = (0..instr.operands.len())
                .map(|k| {
                    c.operand_shape(instr, k)
                        .filter(|s| !matches!(s, Shape::Invalid))
                })
                .collect();
            for p in shape_inference::check(&instr.opcode, &instr.shape, &shapes, instr.attrs()) {
                let range = match p.site {
                    Site::Operand(k) => instr
                        .operands
                        .get(k)
                        .map(|o| o.range.range())
                        .unwrap_or(instr.operands_range.range()),
                    Site::Attribute(name) => instr
                        .attribute(name)
                        .map(|a| a.value_range.range())
                        .unwrap_or(instr.opcode_range.range()),
                    Site::Shape => instr.shape_range.range(),
                    Site::Opcode => instr.opcode_range.range(),
                };
                let fix = quick_fix(instr, &p, &shapes);
                let diagnostic = Diagnostic::error(range, p.code, p.message);
                found.push(match fix {
                    Some(fix) => diagnostic.with_fix(fix),
                    None => diagnostic,
                });
            }
        }
        self.diagnostics.extend(found);
    }
}

/// The fix of a shape-inference problem: the inferred result shape written over the
/// declared one, or a missing attribute inserted after the operands (its value read
/// back from the shapes when that is one choice, else the template completion
/// offers).
fn quick_fix(
    instr: &Instruction,
    p: &shape_inference::Problem,
    shapes: &[Option<&Shape>],
) -> Option<Fix> {
    match (&p.site, &p.expected) {
        (Site::Shape, Some(expected)) if !instr.shape_range.is_empty() => {
            let text = expected.to_string();
            Some(Fix {
                title: format!("set the result shape to {text}"),
                edits: vec![TextEdit {
                    range: instr.shape_range.range(),
                    new_text: text,
                }],
            })
        }
        (Site::Attribute(name), _) if p.code == codes::MISSING_ATTRIBUTE => {
            let value =
                shape_inference::missing_attribute_value(&instr.opcode, name, &instr.shape, shapes)
                    .or_else(|| {
                        super::signature::attribute(&instr.opcode, name)
                            .map(|a| super::signature::template(a.value, false))
                    })?;
            let at = instr.operands_range.end as usize;
            Some(Fix {
                title: format!("add `{name}={value}`"),
                edits: vec![TextEdit {
                    range: at..at,
                    new_text: format!(", {name}={value}"),
                }],
            })
        }
        _ => None,
    }
}

/// XLA lets `tuple` and `get-tuple-element` leave their shape out; fill it in from the
/// operands so users of the instruction see a shape.
fn infer_missing_shapes(c: &mut Computation) {
    for i in 0..c.instructions.len() {
        let instr = &c.instructions[i];
        if *instr.shape != Shape::Invalid || !instr.shape_range.is_empty() {
            continue;
        }
        let operand_shape = |k: usize| {
            instr
                .operands
                .get(k)
                .and_then(|o| o.target)
                .map(|t| c.instructions[t.index()].shape.clone())
        };
        let inferred = match instr.opcode {
            Opcode::Tuple => (0..instr.operands.len())
                .map(operand_shape)
                .map(|s| s.map(|s| Shape::clone(&s)))
                .collect::<Option<Vec<_>>>()
                .map(|elements| Arc::new(Shape::Tuple(elements))),
            Opcode::GetTupleElement => operand_shape(0).and_then(|s| {
                let index = usize::try_from(instr.attrs().tuple_index?).ok()?;
                s.tuple_element(index).cloned().map(Arc::new)
            }),
            _ if instr.opcode.is_elementwise()
                && !instr.opcode.is_comparison()
                && instr.opcode != Opcode::Convert =>
            {
                operand_shape(0)
            }
            Opcode::Dot => operand_shape(0)
                .zip(operand_shape(1))
                .and_then(|(lhs, rhs)| dot_shape(lhs.as_array()?, rhs.as_array()?, instr))
                .map(Arc::new),
            _ => None,
        };
        if let Some(shape) = inferred {
            c.instructions[i].shape = shape;
        }
    }
}

/// A dot's result (`ShapeInference::InferDotOpShape`): the batch dimensions, then
/// the lhs's free ones, then the rhs's, of the operands' element type (`None` when
/// they differ: XLA then needs the result written).
fn dot_shape(
    lhs: &super::shape::ArrayShape,
    rhs: &super::shape::ArrayShape,
    instr: &Instruction,
) -> Option<Shape> {
    if lhs.element != rhs.element {
        return None;
    }
    let numbers = instr.attrs().dot.clone().unwrap_or_default();
    let size = |a: &super::shape::ArrayShape, d: i64| a.dims.get(usize::try_from(d).ok()?).copied();
    let mut dims: Vec<i64> = numbers
        .lhs_batch
        .iter()
        .map(|&d| size(lhs, d))
        .collect::<Option<_>>()?;
    for (a, batch, contracting) in [
        (lhs, &numbers.lhs_batch, &numbers.lhs_contracting),
        (rhs, &numbers.rhs_batch, &numbers.rhs_contracting),
    ] {
        dims.extend(
            (0..a.dims.len() as i64)
                .filter(|d| !batch.contains(d) && !contracting.contains(d))
                .filter_map(|d| size(a, d)),
        );
    }
    Some(Shape::array(lhs.element.clone(), dims))
}

#[cfg(test)]
mod tests {
    #[test]
    fn bare_shape_operands_of_an_inline_computation() {
        let body = "{\n  result = f32[] add(f32[], f32[])\n}";
        let found: Vec<&str> = super::bare_shape_operands(body)
            .into_iter()
            .map(|r| &body[r])
            .collect();
        assert_eq!(found, ["f32[]", "f32[]"]);
        let named = "{\n  x = f32[] parameter(0)\n  r = f32[] add(f32[] x, y)\n}";
        assert!(super::bare_shape_operands(named).is_empty());
    }
}
