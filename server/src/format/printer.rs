//! The module printed as XLA prints it: `HloModule::Print`, `HloComputation::Print` and
//! `HloInstruction::PrintWithCanonicalNameMap`, ported onto the model and the syntax
//! tree of the text. What XLA would compute from its in-memory module (the
//! `entry_computation_layout`, a computation's program shape, a result shape left out
//! and inferred) comes from the model; everything the user wrote and XLA keeps
//! (attribute values, literals, tables, layouts) is copied from the text, so nothing
//! is re-derived that could come out different.

use std::borrow::Cow;
use std::sync::Arc;

use rayon::prelude::*;
use tree_sitter::Node;

use super::comments::{Anchor, Attached};
use super::known::{self, AsWritten, Known};
use super::names::Names;
use super::order;
use super::post_order;
use super::scan::ModuleScan;
use super::shape_text;
use super::stack_frames::FrameTables;
use super::values;
use super::{Refusal, Style};
use crate::model::{
    AttributeValueKind, ComputationId, ComputationRef, Document, InstrId, Instruction, Module,
};
use crate::syntax::{Chunk, ChunkKind, Placed};

/// The whole document printed in `style`, or why it cannot be; the comments in
/// `attached` written back beside what they were written beside.
pub fn print(doc: &Document, style: Style, attached: &Attached) -> Result<String, Refusal> {
    Ok(pieces(doc, Some(style), attached, Select::All)?.joined())
}

/// Which computations [`pieces`] prints and keeps.
#[derive(Clone, Copy)]
pub enum Select<'a> {
    All,
    /// Those of the list (range formatting: the computations a range touches),
    /// without the module's head.
    Only(&'a [ComputationId]),
    /// All, leaving out those printed as written when XLA prints the computations
    /// in the written order ([`Pieces::in_written_order`]): formatting a dump
    /// already in XLA's form keeps none. Those an earlier version printed as
    /// written are not printed again, where [`Known`] allows it.
    Changed(&'a Known),
}

/// The printed module in pieces: what stands before the computations, each
/// computation on its own, and what stands after them. Range formatting reads the
/// computations a range touches, formatting the changed ones; [`print`] joins
/// them all.
pub struct Pieces {
    head: String,
    computations: Vec<Piece>,
    end: String,
    /// Whether XLA prints the computations in the order they are written (it prints
    /// callees before callers: a dump is in that order, a hand-written test may not be).
    /// Not looked at for [`Select::Only`], whose pieces stay in the written order.
    pub in_written_order: bool,
}

/// One computation printed: the comments written before it, its text from its
/// header (or `ENTRY`) to its closing brace and attributes, and what follows that
/// brace on its line.
pub struct Piece {
    pub id: ComputationId,
    before: String,
    pub body: String,
    after: String,
}

impl Pieces {
    /// The printed computation `id`, if the module has it.
    pub fn computation(&self, id: ComputationId) -> Option<&Piece> {
        self.computations.iter().find(|p| p.id == id)
    }

    /// The printed computations, in XLA's order.
    pub fn computations(&self) -> &[Piece] {
        &self.computations
    }

    /// What stands before the computations: the module header line and tables
    /// (nothing for [`Select::Only`]).
    pub fn head(&self) -> &str {
        &self.head
    }

    /// The whole text, computations in XLA's order with a blank line after each
    /// (all of them when printed with [`Select::All`]).
    pub fn joined(self) -> String {
        let pieces: usize = self
            .computations
            .iter()
            .map(|p| p.before.len() + p.body.len() + p.after.len() + 2)
            .sum();
        let mut out = String::with_capacity(self.head.len() + pieces + self.end.len());
        out.push_str(&self.head);
        for p in &self.computations {
            out.push_str(&p.before);
            out.push_str(&p.body);
            out.push_str(&p.after);
            out.push_str("\n\n");
        }
        out.push_str(&self.end);
        out
    }
}

/// [`print`] in pieces: the computations `select` names (their names still read
/// the module), in `style` or else the style the module is written in.
pub fn pieces(
    doc: &Document,
    style: Option<Style>,
    attached: &Attached,
    select: Select,
) -> Result<Pieces, Refusal> {
    let file = doc.file();
    let module = match file.modules.as_slice() {
        [module] => module,
        [] => return Err(Refusal::at(0, "the file holds no HLO module")),
        [_, second, ..] => {
            return Err(Refusal::at(
                second.range.start,
                "the file holds several modules (`// -----`); format them one by one",
            ))
        }
    };
    let syntax = doc.syntax();
    let mut header = None;
    let mut tables = Vec::new();
    let mut computations = Vec::new();
    for (index, placed) in syntax.chunks().iter().enumerate() {
        match placed.kind() {
            ChunkKind::Header => header = Some(placed),
            // XLA writes a table's rows again from what it read: the rows as
            // written, without spaces at their ends.
            ChunkKind::Table => tables.push(
                placed
                    .text()
                    .trim_end()
                    .lines()
                    .map(str::trim_end)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            ChunkKind::Computation => {
                let (_, id) = file.computation_in_chunk(index).ok_or_else(|| {
                    Refusal::at(
                        placed.range().start,
                        "a computation the model did not build",
                    )
                })?;
                computations.push((placed, module.computation(id)));
            }
            ChunkKind::Separator => {}
            ChunkKind::Other => {
                if !placed.text().trim().is_empty() {
                    return Err(Refusal::at(
                        placed.range().start,
                        "text outside a module header, table or computation \
                         (a single-instruction file: XLA wraps it in a module of its own)",
                    ));
                }
            }
        }
    }
    // Some computations alone need neither XLA's order nor the module's head.
    let whole = !matches!(select, Select::Only(_));
    let scan = ModuleScan::of(module, whole);
    let style = style.unwrap_or_else(|| scan.style());
    let computations = match whole {
        true => in_xla_order(module, scan.call_sites, computations),
        false => computations,
    };
    let in_written_order = computations.windows(2).all(|w| w[0].1.id < w[1].1.id);
    let leave_unchanged = matches!(select, Select::Changed(_)) && in_written_order;
    let names = Names::of(module, scan.name_keys);
    let frames = FrameTables::of(tables, module);
    let mut out = String::new();
    if whole {
        head(
            &mut out,
            (module, header, &computations),
            (&names, &frames),
            attached,
        )?;
    }
    let scheduled = module.header_text().is_some_and(|h| {
        h.split_whitespace()
            .any(|w| w.starts_with("is_scheduled=true"))
    });
    // What an earlier version printed as written, when nothing outside a chunk
    // changes how it prints (see `known`).
    let context = known::Context { style, scheduled };
    let memory = match select {
        Select::Changed(known)
            if leave_unchanged
                && attached.is_empty()
                && names.as_written()
                && !frames.renumbers() =>
        {
            Some((known, known.take(context)))
        }
        _ => None,
    };
    // Each computation on its own (its names are settled): in parallel, in order.
    // Every one is printed (no stop at the first refusal) so that the refusal
    // reported is the first in order, whichever thread met it first.
    let printed: Vec<Result<Outcome, Refusal>> = computations
        .par_iter()
        .filter(|(_, c)| match select {
            Select::Only(only) => only.contains(&c.id),
            Select::All | Select::Changed(_) => true,
        })
        .map(|(placed, c)| {
            // Outside the entry computation, whose header `ENTRY` may be implied.
            let rememberable = memory.is_some() && module.entry != Some(c.id);
            if rememberable
                && memory
                    .as_ref()
                    .is_some_and(|(_, m)| m.contains(placed.chunk))
            {
                return Ok(Outcome::AsWritten(Some(placed.chunk.clone())));
            }
            let k = c.id.index();
            let (mut before, mut body, mut after) = (String::new(), String::new(), String::new());
            Attached::lines(&mut before, attached.at(Anchor::BeforeComputation(k)), "");
            computation(
                &mut body,
                module,
                placed,
                c,
                (style, &names, &frames, attached),
                scheduled,
            )?;
            Attached::trailing(&mut after, attached.at(Anchor::AfterClose(k)));
            if leave_unchanged && body == written(placed, c) {
                return Ok(Outcome::AsWritten(
                    rememberable.then(|| placed.chunk.clone()),
                ));
            }
            Ok(Outcome::Printed(Piece {
                id: c.id,
                before,
                body,
                after,
            }))
        })
        .collect();
    let mut end = String::new();
    Attached::lines(&mut end, attached.at(Anchor::End), "");
    let mut as_written = Vec::new();
    let mut pieces = Vec::new();
    for outcome in printed {
        let outcome = outcome?;
        match outcome {
            Outcome::Printed(piece) => pieces.push(piece),
            Outcome::AsWritten(chunk) => as_written.extend(chunk),
        }
    }
    if let Some((known, _)) = memory {
        known.keep(context, AsWritten::from_chunks(as_written));
    }
    Ok(Pieces {
        head: out,
        computations: pieces,
        end,
        in_written_order,
    })
}

/// A computation printed, or found (or known) to print as written, with its
/// chunk when it may be remembered so.
enum Outcome {
    Printed(Piece),
    AsWritten(Option<Arc<Chunk>>),
}

/// The written text of computation `c`, which chunk `placed` holds: from its
/// header to its closing brace and attributes, as a printed piece's body.
fn written<'t>(placed: &Placed<'t>, c: &ComputationRef) -> &'t str {
    let (whole, base) = (c.range(), placed.range().start);
    placed
        .text()
        .get(whole.start - base..whole.end - base)
        .unwrap_or("")
}

/// What XLA prints before the computations: the comments above the header, the
/// header line, the stack-frame tables and a blank line.
fn head(
    out: &mut String,
    (module, header, computations): (&Module, Option<Placed>, &[(Placed, ComputationRef)]),
    (names, frames): (&Names, &FrameTables),
    attached: &Attached,
) -> Result<(), Refusal> {
    Attached::lines(out, attached.at(Anchor::Top), "");
    out.push_str(&header_line(module, header, computations, names)?);
    if !frames.tables.is_empty() {
        out.push_str("\n\n");
        out.push_str(&frames.tables.join("\n\n"));
        out.push('\n');
    }
    out.push_str("\n\n");
    Ok(())
}

/// `computations` in the order XLA prints them ([`post_order::computation_order`]
/// of the module's `call_sites`).
fn in_xla_order<'m>(
    module: &'m Module,
    call_sites: Vec<Vec<Vec<usize>>>,
    computations: Vec<(Placed<'m>, ComputationRef<'m>)>,
) -> Vec<(Placed<'m>, ComputationRef<'m>)> {
    let mut by_id: Vec<Option<(Placed, ComputationRef)>> =
        (0..module.computation_count()).map(|_| None).collect();
    for (placed, c) in computations {
        let k = c.id.index();
        by_id[k] = Some((placed, c));
    }
    post_order::computation_order(call_sites)
        .into_iter()
        .filter_map(|id| by_id.get_mut(id.index()).and_then(Option::take))
        .collect()
}

/// `HloModule name, attr=value, ...`: the written attributes in XLA's order, those
/// holding XLA's default left out, and `entry_computation_layout` computed when it
/// is not written (XLA's parser sets it from the entry computation).
fn header_line(
    module: &Module,
    header: Option<Placed>,
    computations: &[(Placed, ComputationRef)],
    names: &Names,
) -> Result<String, Refusal> {
    let mut attributes: Vec<(String, String)> = Vec::new();
    let name = match header {
        Some(placed) => {
            let tree = placed.tree();
            let item = crate::syntax::Chunk::item(&tree)
                .filter(|n| n.kind() == "module_header")
                .ok_or_else(|| Refusal::at(placed.range().start, "a module header in pieces"))?;
            let text = placed.text();
            let name = item
                .child_by_field_name("name")
                .map(|n| node_text(text, n).trim_start_matches('%').to_string())
                .unwrap_or_default();
            let mut cursor = item.walk();
            for a in item.named_children(&mut cursor) {
                if a.kind() == "attribute" {
                    let (key, value) = key_value(text, a).ok_or_else(|| {
                        Refusal::at(placed.range().start, "an attribute in pieces")
                    })?;
                    if !order::header_default(&key, &value) {
                        let value = values::header(&key, &value);
                        attributes.push((key, value));
                    }
                }
            }
            name
        }
        None => {
            let entry = module.entry_computation();
            format!(
                "module_{}",
                entry.map(|c| c.name.clone()).unwrap_or_default()
            )
        }
    };
    if !attributes
        .iter()
        .any(|(k, _)| k == "entry_computation_layout")
    {
        if let Some(entry) = module.entry_computation() {
            let entry = computations
                .iter()
                .map(|(_, c)| c)
                .find(|c| c.id == entry.id)
                .unwrap_or(&entry);
            attributes.push((
                "entry_computation_layout".into(),
                format!("{{{}}}", program_shape(entry, true, names)?),
            ));
        }
    }
    attributes.sort_by_key(|(k, _)| order::header_rank(k));
    let mut line = format!("HloModule {name}");
    for (k, v) in attributes {
        line.push_str(&format!(", {k}={v}"));
        // `HloModule::Print` ends this table with a line break of its own.
        if k == "origin_recovery_table" {
            line.push('\n');
        }
    }
    Ok(line)
}

fn node_text<'t>(text: &'t str, node: Node) -> &'t str {
    text.get(node.byte_range()).unwrap_or("")
}

fn key_value(text: &str, attribute: Node) -> Option<(String, String)> {
    let key = node_text(text, attribute.child_by_field_name("key")?).to_string();
    let value = node_text(text, attribute.child_by_field_name("value")?)
        .trim()
        .to_string();
    Some((key, value))
}

/// `(p0: shape, ...) -> shape`, XLA's `ComputeProgramShape` printed: the parameters
/// in the order of their numbers, then the root's shape.
fn program_shape(c: &ComputationRef, with_layout: bool, names: &Names) -> Result<String, Refusal> {
    let mut params = Vec::new();
    for id in c.parameters.iter().flatten() {
        let p = c.instruction(*id);
        let shape = result_shape(c, p, with_layout, names)?;
        params.push(if with_layout {
            shape
        } else {
            format!("{}: {shape}", names.get(c, *id))
        });
    }
    let root = c.root.map(|r| c.instruction(r)).ok_or_else(|| {
        Refusal::at(
            c.offset + c.range.start as usize,
            "a computation with no instructions",
        )
    })?;
    let arrow = if with_layout { "->" } else { " -> " };
    Ok(format!(
        "({}){arrow}{}",
        params.join(", "),
        result_shape(c, root, with_layout, names)?
    ))
}

/// An instruction's result shape as XLA prints it: as written, or as the model
/// inferred it when it was left out.
fn result_shape(
    c: &ComputationRef,
    i: &Instruction,
    with_layout: bool,
    names: &Names,
) -> Result<String, Refusal> {
    let mut out = String::new();
    push_result_shape(&mut out, c, i, with_layout, names)?;
    Ok(out)
}

/// [`result_shape`] written at the end of `out` (nothing written when refused).
fn push_result_shape(
    out: &mut String,
    c: &ComputationRef,
    i: &Instruction,
    with_layout: bool,
    names: &Names,
) -> Result<(), Refusal> {
    let printed = if i.shape_range.is_empty() {
        shape_text::of_model(&i.shape, with_layout)
            .or_else(|| {
                // A call or conditional has its callee's result shape (one level: a
                // callee's root left unshaped too is not chased).
                let (callee, root) = names.callee_root(c.id, i.id)?;
                let root = callee.instruction(root);
                match root.shape_range.is_empty() {
                    true => shape_text::of_model(&root.shape, with_layout),
                    false => shape_text::canonical(callee.src(root.shape_range), with_layout),
                }
            })
            .map(|shape| out.push_str(&shape))
    } else {
        shape_text::canonical_into(out, c.src(i.shape_range), with_layout)
    };
    printed.ok_or_else(|| {
        Refusal::at(
            c.abs(i.name_range).start,
            format!("the shape of %{} is neither written nor inferable", i.name),
        )
    })
}

/// `[ENTRY ]%name (params) -> shape {` instructions `}` and the computation's own
/// attributes (`execution_thread=`).
fn computation(
    out: &mut String,
    module: &Module,
    placed: &Placed,
    c: &ComputationRef,
    (style, names, frames, attached): (Style, &Names, &FrameTables, &Attached),
    scheduled: bool,
) -> Result<(), Refusal> {
    let ck = c.id.index();
    if module.entry == Some(c.id) {
        out.push_str("ENTRY ");
    }
    out.push_str(&format!(
        "%{} {} {{\n",
        c.name,
        program_shape(c, false, names)?
    ));
    let order = match scheduled {
        true => (0..c.instructions.len() as u32).map(InstrId).collect(),
        false => post_order::instruction_order(c),
    };
    for id in order {
        let (k, i) = (id.index(), c.instruction(id));
        Attached::lines(out, attached.at(Anchor::BeforeInstruction(ck, k)), "  ");
        out.push_str("  ");
        if c.root.map(|r| r.index()) == Some(k) {
            out.push_str("ROOT ");
        }
        instruction(out, c, i, (style, names, frames))?;
        Attached::trailing(out, attached.at(Anchor::AfterInstruction(ck, k)));
        out.push('\n');
    }
    Attached::lines(out, attached.at(Anchor::BeforeClose(ck)), "  ");
    out.push('}');
    for (key, value) in computation_attributes(placed) {
        out.push_str(&format!(", {key}={value}"));
    }
    Ok(())
}

/// The attributes written after a computation's closing brace.
fn computation_attributes(placed: &Placed) -> Vec<(String, String)> {
    if !may_have_attributes(placed.text()) {
        return Vec::new();
    }
    let tree = placed.tree();
    let Some(item) = crate::syntax::Chunk::item(&tree) else {
        return Vec::new();
    };
    let mut cursor = item.walk();
    item.named_children(&mut cursor)
        .filter(|a| a.kind() == "attribute")
        .filter_map(|a| key_value(placed.text(), a))
        .collect()
}

/// Whether a computation's text may have attributes after its closing brace, seen
/// without a parse: most chunks keep no tree, and parsing each one again to find
/// none took most of formatting a 58 MiB dump. The closing brace is at or after the
/// start of the last line that starts with `}` (every such line is inside the body
/// or is its end), and an attribute needs a comma after it: with no comma after
/// that line's start there are none. Without such a line, the parse decides.
pub(super) fn may_have_attributes(text: &str) -> bool {
    let last_close = memchr::memmem::rfind(text.as_bytes(), b"\n}")
        .map(|at| at + 1)
        .or_else(|| text.starts_with('}').then_some(0));
    last_close.is_none_or(|at| text[at..].contains(','))
}

/// `%name = shape opcode(operands), attributes`, written into `out` as it goes:
/// what is printed as written is borrowed, not copied (a 588 MiB dump is five
/// million instructions).
fn instruction(
    out: &mut String,
    c: &ComputationRef,
    i: &Instruction,
    (style, names, frames): (Style, &Names, &FrameTables),
) -> Result<(), Refusal> {
    let opcode = c.src(i.opcode_range);
    out.push('%');
    out.push_str(names.get(c, i.id));
    out.push_str(" = ");
    push_result_shape(out, c, i, true, names)?;
    out.push(' ');
    out.push_str(opcode);
    out.push('(');
    operands(out, c, i, (style, names))?;
    out.push(')');
    let mut attributes: Vec<(&str, Cow<str>)> = Vec::with_capacity(i.attributes.len());
    for a in &i.attributes {
        let key = c.src(a.name_range);
        let mut written = attribute_value(a.value_kind, c.src(a.value_range));
        if key == "metadata" {
            if let Cow::Owned(renumbered) = frames.metadata(&written) {
                written = Cow::Owned(renumbered);
            }
        }
        if key == "control-predecessors" {
            attributes.push((key, Cow::Owned(renamed_list(c, names, &written))));
        } else if !values::is_default(opcode, key, &written) {
            let value = match values::canonical(key, &written) {
                Cow::Borrowed(_) => written,
                Cow::Owned(value) => Cow::Owned(value),
            };
            attributes.push((key, value));
        }
    }
    for &(key, value) in values::always_printed(opcode) {
        if !attributes.iter().any(|(k, _)| *k == key) {
            attributes.push((key, Cow::Borrowed(value)));
        }
    }
    attributes.sort_by_key(|(key, _)| order::instruction_rank(key));
    values::order_groups(&mut attributes);
    wrapped_statistics(opcode, &mut attributes);
    for (key, value) in attributes {
        out.push_str(", ");
        out.push_str(key);
        out.push('=');
        out.push_str(&value);
    }
    Ok(())
}

/// `add-start(...)`, XLA's short form of an async op, prints the attributes of the
/// instruction it wraps after its own (`HloAsyncStartInstruction::
/// PrintExtraAttributesImpl`). The parser gives the wrapped instruction the
/// start's `statistics`, so they are printed there as well as in their own place.
fn wrapped_statistics(opcode: &str, attributes: &mut Vec<(&str, Cow<str>)>) {
    const NATIVE: &[&str] = &[
        "async",
        "all-gather",
        "all-reduce",
        "collective-permute",
        "copy",
    ];
    let sugared = opcode
        .strip_suffix("-start")
        .is_some_and(|wrapped| !NATIVE.contains(&wrapped));
    let Some(statistics) = attributes.iter().find(|(k, _)| *k == "statistics").cloned() else {
        return;
    };
    if sugared {
        // Text XLA printed writes them twice already: one is kept.
        let mut seen = false;
        attributes.retain(|(k, _)| *k != "statistics" || !std::mem::replace(&mut seen, true));
        let own = attributes
            .iter()
            .take_while(|(k, _)| order::instruction_rank(k) == 0)
            .count();
        attributes.insert(own, statistics);
    }
}

/// Every this many operands XLA writes the operand's index before it.
const OPERAND_INDEX_INTERVAL: usize = 5;

/// Named operands (`%x`, or `f32[2]{0} %x` in the long form) and literals, in
/// written order, written into `out`; a parameter's number.
fn operands(
    out: &mut String,
    c: &ComputationRef,
    i: &Instruction,
    (style, names): (Style, &Names),
) -> Result<(), Refusal> {
    if let Some(n) = i.parameter_number {
        out.push_str(&n.to_string());
        return Ok(());
    }
    /// A literal's text or an operand, at its written place.
    enum Item<'c> {
        Literal(Cow<'c, str>),
        Operand(&'c crate::model::Operand),
    }
    let mut items: Vec<(u32, Item)> = Vec::with_capacity(i.literals.len() + i.operands.len());
    for literal in &i.literals {
        let written = c.src(*literal).trim();
        let printed = match i.opcode {
            crate::model::Opcode::Constant => values::literal(&i.shape, written),
            _ => None,
        };
        let text = printed.map_or(Cow::Borrowed(written), Cow::Owned);
        items.push((literal.start, Item::Literal(text)));
    }
    items.extend(i.operands.iter().map(|o| (o.range.start, Item::Operand(o))));
    items.sort_by_key(|(start, _)| *start);
    for (k, (_, item)) in items.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
            // XLA's `print_operand_index_annotation_interval` (5 by default).
            if k % OPERAND_INDEX_INTERVAL == 0 {
                out.push_str(&format!("/*index={k}*/"));
            }
        }
        match item {
            Item::Literal(text) => out.push_str(text),
            Item::Operand(o) => operand(out, c, o, (style, names))?,
        }
    }
    Ok(())
}

/// One named operand: `%x`, or `f32[2]{0} %x` in the long form.
fn operand(
    out: &mut String,
    c: &ComputationRef,
    o: &crate::model::Operand,
    (style, names): (Style, &Names),
) -> Result<(), Refusal> {
    // An operand written inline names the instruction made of it.
    let name = match (o.target, o.name_range()) {
        (Some(t), _) => names.get(c, t),
        (None, Some(range)) => c.src(range).trim_start_matches('%'),
        (None, None) => {
            return Err(Refusal::at(
                c.abs(o.range).start,
                "an operand that is not a name",
            ))
        }
    };
    if style == Style::Long {
        match o.target {
            Some(t) => push_result_shape(out, c, c.instruction(t), true, names)?,
            None => out.push_str(
                &o.declared_shape
                    .as_deref()
                    .and_then(|s| shape_text::of_model(s, true))
                    .ok_or_else(|| {
                        Refusal::at(
                            c.abs(o.name_range().unwrap_or(o.range)).start,
                            format!("%{name} is not defined, so its shape is unknown"),
                        )
                    })?,
            ),
        }
        out.push(' ');
    }
    out.push('%');
    out.push_str(name);
    Ok(())
}

/// `{%a, %b}` with each instruction's printed name ([`Names`]).
fn renamed_list(c: &ComputationRef, names: &Names, written: &str) -> String {
    let inner: Vec<String> = values::instruction_names(written)
        .into_iter()
        .map(|n| match c.instruction_id(n) {
            Some(id) => format!("%{}", names.get(c, id)),
            None => format!("%{n}"),
        })
        .collect();
    format!("{{{}}}", inner.join(", "))
}

/// A value as XLA prints it: computation names with `%`, the rest as written.
fn attribute_value(kind: AttributeValueKind, written: &str) -> Cow<'_, str> {
    let written = written.trim();
    match kind {
        AttributeValueKind::ComputationRef => {
            Cow::Owned(format!("%{}", written.trim_start_matches('%')))
        }
        AttributeValueKind::ComputationList => {
            let inner = written
                .trim_start_matches('{')
                .trim_end_matches('}')
                .split(',')
                .map(|n| n.trim())
                .filter(|n| !n.is_empty())
                .map(|n| format!("%{}", n.trim_start_matches('%')))
                .collect::<Vec<_>>();
            Cow::Owned(format!("{{{}}}", inner.join(", ")))
        }
        _ => Cow::Borrowed(written),
    }
}
