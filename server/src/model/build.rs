//! Tree → model. Walks the tree-sitter trees of the syntax layer by field name (see
//! ARCHITECTURE.md), decodes shapes and attributes, resolves names, and reports
//! semantic diagnostics. Never fails: whatever is missing or broken is skipped with a
//! diagnostic (or, for syntax errors, left to the syntax layer's report).
//!
//! Computations are independent until names are resolved across them, so each
//! computation chunk is built on its own (in parallel with rayon); a second, cheap
//! pass per module resolves called computations and builds the callers index.

use std::sync::Arc;

use rayon::prelude::*;
use tree_sitter::Node;

use super::attributes::{self, decode_attrs, AttrError};
use super::diagnostics::{codes, Diagnostic};
use super::module::{
    Attribute, AttributeValueKind, CallSite, CalledComputation, Computation, ComputationId,
    ComputationRef, HloFile, InstrId, Instruction, Module, Operand, Placed, Span, Unit,
};
use super::opcode::Opcode;
use super::shape::{parse_shape, PrimitiveType, Shape};
use super::shape_inference::{self, Site};
use crate::syntax::{ChunkKind, SyntaxDocument};

/// Parses `text` with the syntax layer and builds the model: the convenience entry
/// point for tests, the CLI and the analysis. Syntax errors are included in
/// [`HloFile::diagnostics`] with code `syntax-error`, before the semantic ones.
pub fn parse_hlo(text: &str) -> HloFile {
    let doc = SyntaxDocument::parse(text);
    let mut file = build(&doc);
    let mut all: Vec<Diagnostic> = doc
        .syntax_errors()
        .into_iter()
        .map(|e| Diagnostic::error(e.range, codes::SYNTAX_ERROR, e.message))
        .collect();
    all.append(&mut file.diagnostics);
    file.diagnostics = all;
    file
}

/// Builds the model from a parsed document: semantic diagnostics only (the syntax
/// layer reports syntax errors itself).
pub fn build(doc: &SyntaxDocument) -> HloFile {
    let text = doc.text();
    let chunks = doc.chunks();
    // Computations first, in parallel: each is built from its own chunk alone.
    let built: Vec<Option<Arc<Unit>>> = chunks
        .par_iter()
        .map(|chunk| match chunk.kind {
            ChunkKind::Computation => build_unit(chunk.text(text), &chunk.tree).map(Arc::new),
            _ => None,
        })
        .collect();
    let mut file = HloFile::default();
    let mut current: Option<ModuleBuilder> = None;
    for (chunk, unit) in chunks.iter().zip(built) {
        match chunk.kind {
            ChunkKind::Separator => {
                if let Some(m) = current.take() {
                    file.modules.push(m.finish(&mut file.diagnostics));
                }
            }
            ChunkKind::Header => {
                let Some(header) = chunk.item().filter(|n| n.kind() == "module_header") else {
                    continue;
                };
                if current
                    .as_ref()
                    .is_some_and(|m| m.module.header_range.is_some() || !m.module.units.is_empty())
                {
                    if let Some(m) = current.take() {
                        file.modules.push(m.finish(&mut file.diagnostics));
                    }
                }
                let m = current.get_or_insert_with(|| ModuleBuilder::new(chunk.range.start));
                m.module.header_range = Some(chunk.abs_range(header));
                if let Some(name) = header.child_by_field_id(fields().name) {
                    let r = chunk.abs_range(name);
                    m.module.name = Some(strip_percent(&text[r.clone()]).to_string());
                    m.module.name_range = Some(r);
                }
                m.module.range.end = chunk.range.end;
            }
            ChunkKind::Computation => {
                let Some(unit) = unit else {
                    continue;
                };
                let m = current.get_or_insert_with(|| ModuleBuilder::new(chunk.range.start));
                let offset = chunk.range.start;
                m.diagnostics
                    .extend(unit.diagnostics.iter().map(|d| d.shifted(offset)));
                m.module.units.push(Placed { offset, unit });
                m.module.range.end = chunk.range.end;
            }
            ChunkKind::Table | ChunkKind::Other => {
                if let Some(m) = current.as_mut() {
                    m.module.range.end = chunk.range.end;
                }
            }
        }
    }
    if let Some(m) = current.take() {
        file.modules.push(m.finish(&mut file.diagnostics));
    }
    file
}

/// Builds one computation chunk (its text and tree) on its own: the computation and
/// what it alone shows to be wrong, positions relative to the chunk. `None` when the
/// chunk did not parse as a computation.
pub fn build_unit(text: &str, tree: &tree_sitter::Tree) -> Option<Unit> {
    let root = tree.root_node();
    let mut cursor = root.walk();
    let node = root
        .named_children(&mut cursor)
        .find(|n| n.kind() != "comment")
        .filter(|n| n.kind() == "computation")?;
    let (computation, diagnostics) = build_computation(text, node);
    Some(Unit {
        text: text.into(),
        computation,
        diagnostics,
    })
}

/// Field ids of the grammar, looked up once: `child_by_field_name` compares strings
/// on every call, which showed up in profiles of large modules.
struct Fields {
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
    attribute_id: std::num::NonZeroU16,
}

fn fields() -> &'static Fields {
    static FIELDS: std::sync::OnceLock<Fields> = std::sync::OnceLock::new();
    FIELDS.get_or_init(|| {
        let language = crate::syntax::language();
        let id = |name: &str| {
            language
                .field_id_for_name(name)
                .unwrap_or_else(|| panic!("the grammar has no field `{name}`"))
        };
        Fields {
            body: id("body").get(),
            entry: id("entry").get(),
            key: id("key").get(),
            literal: id("literal").get(),
            name: id("name").get(),
            nested: id("nested").get(),
            opcode: id("opcode").get(),
            operands: id("operands").get(),
            root: id("root").get(),
            shape: id("shape").get(),
            signature: id("signature").get(),
            value: id("value").get(),
            attribute_id: id("attribute"),
        }
    })
}

fn strip_percent(name: &str) -> &str {
    name.strip_prefix('%').unwrap_or(name)
}

struct ModuleBuilder {
    module: Module,
    diagnostics: Vec<Diagnostic>,
}

impl ModuleBuilder {
    fn new(start: usize) -> ModuleBuilder {
        ModuleBuilder {
            module: Module {
                range: start..start,
                ..Module::default()
            },
            diagnostics: Vec::new(),
        }
    }

    /// Module-level work: computation names, the entry, called computations, callers.
    fn finish(mut self, out: &mut Vec<Diagnostic>) -> Module {
        let m = &mut self.module;
        let diags = &mut self.diagnostics;
        for i in 0..m.units.len() {
            let c = m.computation(ComputationId(i as u32));
            match m.computation_names.get(&c.name) {
                Some(&first) => diags.push(
                    Diagnostic::error(
                        c.abs(c.name_range),
                        codes::DUPLICATE_NAME,
                        format!("computation `{}` is defined twice", c.name),
                    )
                    .with_related(
                        m.computation(first).abs(m.computation(first).name_range),
                        "first defined here",
                    ),
                ),
                None => {
                    let name = c.name.clone();
                    m.computation_names.insert(name, ComputationId(i as u32));
                }
            }
        }
        let entries: Vec<ComputationId> = m
            .computations()
            .filter(|c| c.is_entry)
            .map(|c| c.id)
            .collect();
        for &extra in entries.iter().skip(1) {
            let c = m.computation(extra);
            diags.push(Diagnostic::error(
                c.abs(c.name_range),
                codes::DUPLICATE_NAME,
                "a module has one ENTRY computation; this is another",
            ));
        }
        m.entry = entries.first().copied().or(m
            .units
            .len()
            .checked_sub(1)
            .map(|i| ComputationId(i as u32)));
        let mut callers = vec![Vec::new(); m.units.len()];
        for c in m.computations() {
            for instr in &c.model().instructions {
                for (k, called) in instr.called.iter().enumerate() {
                    match m.computation_names.get(&called.name).copied() {
                        Some(t) => callers[t.index()].push(CallSite {
                            computation: c.id,
                            instruction: instr.id,
                            called_index: k as u32,
                        }),
                        None => diags.push(Diagnostic::error(
                            c.abs(called.name_range),
                            codes::UNDEFINED_COMPUTATION,
                            format!("no computation named `{}` in this module", called.name),
                        )),
                    }
                }
            }
        }
        m.callers = callers;
        for c in m.computations() {
            for instr in &c.model().instructions {
                check_calls(m, c, instr, diags);
            }
        }
        out.append(diags);
        self.module
    }
}

/// Checks an instruction against the computations it calls: parameter counts and
/// shapes for `fusion`/`call` (operand k feeds parameter k), the result shape of a
/// fusion or call against the callee's root, and the arity of reducers.
fn check_calls(
    m: &Module,
    caller: ComputationRef,
    instr: &Instruction,
    diags: &mut Vec<Diagnostic>,
) {
    for called in &instr.called {
        let Some(callee) = m.resolve(called) else {
            continue;
        };
        let params = callee.parameters.len();
        let expected = match (&instr.opcode, called.attribute.as_str()) {
            (Opcode::Fusion | Opcode::Call | Opcode::AsyncStart, "calls") => {
                Some(instr.operands.len())
            }
            (Opcode::While, "condition" | "body") => Some(1),
            (
                Opcode::Reduce | Opcode::ReduceWindow | Opcode::AllReduce | Opcode::ReduceScatter,
                "to_apply",
            ) => {
                let n = if matches!(instr.opcode, Opcode::Reduce | Opcode::ReduceWindow) {
                    instr.operands.len()
                } else {
                    2
                };
                Some(n)
            }
            (Opcode::Sort, "to_apply") => Some(2 * instr.operands.len()),
            (Opcode::Map, "to_apply") => Some(instr.operands.len()),
            _ => None,
        };
        let Some(expected) = expected else { continue };
        if params != expected {
            diags.push(
                Diagnostic::error(
                    caller.abs(called.name_range),
                    codes::CALL_ARITY,
                    format!(
                        "`{}` takes {params} parameter(s) but {} passes {expected}",
                        callee.name, instr.opcode
                    ),
                )
                .with_related(callee.abs(callee.name_range), "computation defined here"),
            );
            continue;
        }
        if matches!(instr.opcode, Opcode::Fusion | Opcode::Call) {
            for (k, operand) in instr.operands.iter().enumerate() {
                let (Some(param), Some(arg)) =
                    (callee.parameter(k), caller.operand_shape(instr, k))
                else {
                    continue;
                };
                if matches!(param.shape, Shape::Invalid)
                    || matches!(arg, Shape::Invalid)
                    || param.shape.compatible(arg)
                {
                    continue;
                }
                // XLA's parser accepts this (its verifier rejects it), and XLA's own
                // lit tests contain such fusions: a warning, not an error.
                diags.push(
                    Diagnostic::warning(
                        caller.abs(operand.range),
                        codes::CALL_SHAPE_MISMATCH,
                        format!(
                            "operand {k} has shape {arg} but parameter {k} of `{}` is {}",
                            callee.name, param.shape
                        ),
                    )
                    .with_related(callee.abs(param.shape_range), "parameter declared here"),
                );
            }
            if let Some(root) = callee.root_instruction() {
                let comparable =
                    !matches!(root.shape, Shape::Invalid) && !matches!(instr.shape, Shape::Invalid);
                if comparable && !root.shape.compatible(&instr.shape) {
                    diags.push(
                        Diagnostic::warning(
                            caller.abs(instr.shape_range),
                            codes::CALL_SHAPE_MISMATCH,
                            format!(
                                "{} declares {} but `{}` returns {}",
                                instr.opcode, instr.shape, callee.name, root.shape
                            ),
                        )
                        .with_related(callee.abs(root.shape_range), "root shape here"),
                    );
                }
            }
        }
    }
}

/// Everything about one computation chunk, built without looking at other chunks.
/// Positions are relative to the chunk (its tree's own byte offsets).
struct ComputationBuilder<'a> {
    /// The chunk's text.
    text: &'a str,
    computation: Computation,
    diagnostics: Vec<Diagnostic>,
    /// Operand names to resolve once every instruction is known: (instruction,
    /// operand index, name).
    pending: Vec<(usize, usize, &'a str)>,
    roots: Vec<InstrId>,
    /// Instructions with an attribute that did not decode: shape checks would only
    /// repeat that error as a missing attribute, so they are skipped.
    undecoded: Vec<usize>,
}

fn build_computation(text: &str, node: Node) -> (Computation, Vec<Diagnostic>) {
    let mut b = ComputationBuilder {
        text,
        computation: Computation {
            range: span(node),
            ..Computation::default()
        },
        diagnostics: Vec::new(),
        pending: Vec::new(),
        roots: Vec::new(),
        undecoded: Vec::new(),
    };
    if let Some(name) = node.child_by_field_id(fields().name) {
        b.computation.name = strip_percent(&text[name.byte_range()]).to_string();
        b.computation.name_range = span(name);
    }
    b.computation.is_entry = node.child_by_field_id(fields().entry).is_some();
    b.computation.signature_range = node.child_by_field_id(fields().signature).map(span);
    if let Some(body) = node.child_by_field_id(fields().body) {
        let mut cursor = body.walk();
        for instr in body
            .named_children(&mut cursor)
            .filter(|n| n.kind() == "instruction")
        {
            b.instruction(instr);
        }
    }
    b.resolve();
    b.check_parameters();
    b.check_shapes();
    if b.computation.instructions.is_empty()
        && node
            .child_by_field_id(fields().body)
            .is_some_and(|n| !n.has_error())
    {
        b.diagnostics.push(Diagnostic::warning(
            b.computation.name_range.range(),
            codes::EMPTY_COMPUTATION,
            format!("computation `{}` has no instructions", b.computation.name),
        ));
    }
    (b.computation, b.diagnostics)
}

/// The parts of an instruction or inline operand, found by field.
struct Parts<'t> {
    shape: Option<Node<'t>>,
    opcode: Node<'t>,
    operands: Node<'t>,
}

/// A node's span in its chunk.
fn span(node: Node) -> Span {
    Span::new(node.byte_range())
}

impl<'a> ComputationBuilder<'a> {
    fn range(&self, node: Node) -> Span {
        span(node)
    }

    fn node_text(&self, node: Node) -> &'a str {
        &self.text[node.byte_range()]
    }

    fn instruction(&mut self, node: Node) {
        let (Some(name), Some(opcode), Some(operands)) = (
            node.child_by_field_id(fields().name),
            node.child_by_field_id(fields().opcode),
            node.child_by_field_id(fields().operands),
        ) else {
            return; // a broken instruction: the syntax layer reports it
        };
        let name_range = self.range(name);
        let name_text = strip_percent(self.node_text(name)).to_string();
        let parts = Parts {
            shape: node.child_by_field_id(fields().shape),
            opcode,
            operands,
        };
        let mut attributes = Vec::new();
        let mut cursor = node.walk();
        for attr in node.children_by_field_id(fields().attribute_id, &mut cursor) {
            attributes.push(attr);
        }
        let id = self.add(
            name_text,
            name_range,
            self.range(node),
            parts,
            &attributes,
            false,
        );
        if node.child_by_field_id(fields().root).is_some() {
            self.computation.instructions[id.index()].is_root = true;
            self.roots.push(id);
        }
    }

    /// Adds an instruction (inline operands first, as synthesized instructions).
    fn add(
        &mut self,
        name: String,
        name_range: Span,
        range: Span,
        parts: Parts,
        attribute_nodes: &[Node],
        synthetic: bool,
    ) -> InstrId {
        let opcode_text = self.node_text(parts.opcode);
        let opcode = Opcode::from_name(opcode_text);
        let opcode_range = self.range(parts.opcode);
        if opcode.is_unknown() {
            self.diagnostics.push(Diagnostic::warning(
                opcode_range.range(),
                codes::UNKNOWN_OPCODE,
                format!("unknown opcode `{opcode_text}`"),
            ));
        }
        let (shape, shape_range) = match parts.shape {
            Some(s) => (self.shape(s), self.range(s)),
            None => (Shape::Invalid, Span::at(opcode_range.start)),
        };
        let mut operands = Vec::new();
        let mut literals = Vec::new();
        let mut cursor = parts.operands.walk();
        let operand_nodes: Vec<Node> = parts
            .operands
            .named_children(&mut cursor)
            .filter(|n| n.kind() == "operand")
            .collect();
        let mut pending_names = Vec::new();
        for operand in operand_nodes {
            let operand_range = self.range(operand);
            if let Some(literal) = operand.child_by_field_id(fields().literal) {
                literals.push(self.range(literal));
            } else if let Some(nested) = operand.child_by_field_id(fields().nested) {
                let k = operands.len();
                let target = self.nested(&name, k, nested);
                operands.push(Operand {
                    range: operand_range,
                    name_range: None,
                    declared_shape: None,
                    target,
                });
            } else if let Some(op_name) = operand.child_by_field_id(fields().name) {
                let declared_shape = operand
                    .child_by_field_id(fields().shape)
                    .map(|s| self.shape(s));
                pending_names.push((operands.len(), strip_percent(self.node_text(op_name))));
                operands.push(Operand {
                    range: operand_range,
                    name_range: Some(self.range(op_name)),
                    declared_shape,
                    target: None,
                });
            }
        }
        let attributes: Vec<Attribute> = attribute_nodes
            .iter()
            .filter_map(|&a| self.attribute(a))
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
        let called = attribute_nodes
            .iter()
            .zip(&attributes)
            .flat_map(|(&node, a)| self.called(node, a))
            .collect();
        let parameter_number = if opcode == Opcode::Parameter {
            literals
                .first()
                .and_then(|r| attributes::parse_integer(&self.text[r.range()]).ok())
        } else {
            None
        };
        if !opcode.arity().accepts(operands.len()) {
            self.diagnostics.push(Diagnostic::error(
                parts.operands.byte_range(),
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
            name,
            name_range,
            range,
            is_root: false,
            synthetic,
            shape,
            shape_range,
            opcode,
            opcode_range,
            operands,
            operands_range: self.range(parts.operands),
            literals,
            parameter_number,
            attributes,
            attrs,
            called,
            users: Vec::new(),
        });
        id
    }

    /// An inline operand (`add(f32[] constant(1), x)`): synthesized as an instruction.
    fn nested(&mut self, user: &str, k: usize, node: Node) -> Option<InstrId> {
        let (Some(opcode), Some(operands)) = (
            node.child_by_field_id(fields().opcode),
            node.child_by_field_id(fields().operands),
        ) else {
            return None;
        };
        let parts = Parts {
            shape: node.child_by_field_id(fields().shape),
            opcode,
            operands,
        };
        let range = self.range(node);
        Some(self.add(format!("{user}.operand{k}"), range, range, parts, &[], true))
    }

    fn shape(&mut self, node: Node) -> Shape {
        let range = node.byte_range();
        let text = &self.text[range.clone()];
        match parse_shape(text) {
            Ok(shape) => {
                for leaf in shape.leaves() {
                    if let PrimitiveType::Unknown(name) = &leaf.element {
                        self.diagnostics.push(Diagnostic::warning(
                            range.clone(),
                            codes::UNKNOWN_TYPE,
                            format!("unknown element type `{name}`"),
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
                Shape::Invalid
            }
        }
    }

    fn attribute(&mut self, node: Node) -> Option<Attribute> {
        let key = node.child_by_field_id(fields().key)?;
        let value = node.child_by_field_id(fields().value)?;
        let name = self.node_text(key);
        let value_kind = match value.kind() {
            "computation_ref" => AttributeValueKind::ComputationRef,
            "computation_list" => AttributeValueKind::ComputationList,
            "brace_block" => AttributeValueKind::Braces,
            "string" => AttributeValueKind::String,
            _ => AttributeValueKind::Atom,
        };
        if !attributes::is_known_attribute(name) {
            self.diagnostics.push(Diagnostic::warning(
                key.byte_range(),
                codes::UNKNOWN_ATTRIBUTE,
                format!("unknown attribute `{name}`"),
            ));
        }
        Some(Attribute {
            name: name.to_string(),
            name_range: self.range(key),
            value_range: self.range(value),
            value_kind,
        })
    }

    /// The computations an attribute names.
    fn called(&self, node: Node, attribute: &Attribute) -> Vec<CalledComputation> {
        let Some(value) = node.child_by_field_id(fields().value) else {
            return Vec::new();
        };
        let mut cursor = value.walk();
        let names: Vec<Node> = match value.kind() {
            "computation_ref" | "computation_list" => value
                .named_children(&mut cursor)
                .filter(|n| n.kind() == "name")
                .collect(),
            _ => return Vec::new(),
        };
        names
            .into_iter()
            .map(|n| CalledComputation {
                attribute: attribute.name.clone(),
                name: strip_percent(self.node_text(n)).to_string(),
                name_range: self.range(n),
            })
            .collect()
    }

    /// Names, duplicates, operand targets, users, the root.
    fn resolve(&mut self) {
        let c = &mut self.computation;
        for (i, instr) in c.instructions.iter().enumerate() {
            match c.names.get(&instr.name) {
                Some(&first) => self.diagnostics.push(
                    Diagnostic::error(
                        instr.name_range.range(),
                        codes::DUPLICATE_NAME,
                        format!("`{}` is defined twice in `{}`", instr.name, c.name),
                    )
                    .with_related(
                        c.instructions[first.index()].name_range.range(),
                        "first defined here",
                    ),
                ),
                None => {
                    c.names.insert(instr.name.clone(), InstrId(i as u32));
                }
            }
        }
        for &(i, k, name) in &self.pending {
            match c.names.get(name) {
                Some(&target) => {
                    c.instructions[i].operands[k].target = Some(target);
                    c.instructions[target.index()].users.push(InstrId(i as u32));
                }
                None => {
                    let range = c.instructions[i].operands[k]
                        .name_range
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
        // Users of synthesized (inline) operands.
        for i in 0..c.instructions.len() {
            for k in 0..c.instructions[i].operands.len() {
                let op = &c.instructions[i].operands[k];
                if op.name_range.is_none() {
                    if let Some(t) = op.target {
                        c.instructions[t.index()].users.push(InstrId(i as u32));
                    }
                }
            }
        }
        for &extra in self.roots.iter().skip(1) {
            self.diagnostics.push(Diagnostic::error(
                c.instructions[extra.index()].name_range.range(),
                codes::MULTIPLE_ROOTS,
                format!("`{}` has more than one ROOT", c.name),
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

    /// `parameter(k)` numbers: each at most once, none missing below the largest.
    fn check_parameters(&mut self) {
        let c = &mut self.computation;
        for instr in &c.instructions {
            if instr.opcode != Opcode::Parameter {
                continue;
            }
            let Some(k) = instr.parameter_number.and_then(|k| usize::try_from(k).ok()) else {
                self.diagnostics.push(Diagnostic::error(
                    instr.operands_range.range(),
                    codes::PARAMETER_NUMBER,
                    "parameter needs a non-negative number: `parameter(0)`",
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
                        format!("parameter {k} is declared twice"),
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
                let (Some(declared), Some(t)) = (&operand.declared_shape, operand.target) else {
                    continue;
                };
                let actual = &c.instruction(t).shape;
                if !matches!(actual, Shape::Invalid)
                    && !matches!(declared, Shape::Invalid)
                    && !declared.compatible(actual)
                {
                    found.push(
                        Diagnostic::error(
                            operand.range.range(),
                            codes::SHAPE_MISMATCH,
                            format!(
                                "operand written as {declared} but `{}` has shape {actual}",
                                c.instruction(t).name
                            ),
                        )
                        .with_related(c.instruction(t).shape_range.range(), "defined here"),
                    );
                }
            }
            if self.undecoded.contains(&instr.id.index()) {
                continue;
            }
            if instr.shape == Shape::Invalid
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
            for p in shape_inference::check(&instr.opcode, &instr.shape, &shapes, &instr.attrs) {
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
                found.push(Diagnostic::error(range, p.code, p.message));
            }
        }
        self.diagnostics.extend(found);
    }
}

/// XLA lets `tuple` and `get-tuple-element` leave their shape out; fill it in from the
/// operands so users of the instruction see a shape.
fn infer_missing_shapes(c: &mut Computation) {
    for i in 0..c.instructions.len() {
        let instr = &c.instructions[i];
        if instr.shape != Shape::Invalid || !instr.shape_range.is_empty() {
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
                .collect::<Option<Vec<_>>>()
                .map(Shape::Tuple),
            Opcode::GetTupleElement => operand_shape(0).and_then(|s| {
                let index = usize::try_from(instr.attrs.tuple_index?).ok()?;
                s.tuple_element(index).cloned()
            }),
            _ if instr.opcode.is_elementwise()
                && !instr.opcode.is_comparison()
                && instr.opcode != Opcode::Convert =>
            {
                operand_shape(0)
            }
            _ => None,
        };
        if let Some(shape) = inferred {
            c.instructions[i].shape = shape;
        }
    }
}
