//! A module's cross-references: which computation defines each name, the entry, who
//! calls whom, and the checks that look across computations (duplicate names,
//! undefined callees, parameter counts and shapes of calls).
//!
//! The index comes from the chunks' outlines (a byte scan each), so it exists before
//! any computation is built: a request about one computation builds that one and the
//! few it needs, not the module.

use crate::blocks::Blocks;
use std::sync::Arc;

use super::diagnostics::{codes, Diagnostic};
use super::module::{
    CallSite, ComputationId, ComputationRef, Crossrefs, HloFile, Instruction, Module, Placed, Unit,
    Units,
};
use super::opcode::Opcode;
use super::shape::Shape;
use crate::syntax::{ChunkKind, SyntaxDocument};

/// The modules of a document (split by `// -----` or a second `HloModule`), indexed.
/// `units[i]` is the unit of chunk `i`. With `previous` (the index of the version this
/// one was edited from, when the edit changed no name, call or module boundary), the
/// cross-references are shared with it instead of rebuilt.
pub fn index(syntax: &SyntaxDocument, units: &Units, previous: Option<&HloFile>) -> HloFile {
    let mut modules: Vec<Module> = Vec::new();
    let mut current: Option<Module> = None;
    let chunks = syntax.chunks();
    // Reads the places only, not the chunks behind them: an edit indexes again.
    let end_of = |chunk: usize| {
        chunks
            .get(chunk + 1)
            .map_or(syntax.len(), |next| next.start)
    };
    for (chunk, placed) in chunks.iter().enumerate() {
        match placed.kind() {
            ChunkKind::Separator => modules.extend(current.take()),
            ChunkKind::Header => {
                if current
                    .as_ref()
                    .is_some_and(|m| m.header_range.is_some() || !m.places.is_empty())
                {
                    modules.extend(current.take());
                }
                let m = current.get_or_insert_with(|| new_module(placed.start, units));
                let text = placed.text();
                m.header_range = Some(placed.abs(0..text.trim_end().len()));
                m.header_chunk = Some(chunk);
                m.compiled = text.contains("is_scheduled=true")
                    && text.contains("entry_computation_layout=");
                m.replicas = header_number(text, "replica_count=");
                m.partitions = header_number(text, "num_partitions=");
                if let Some(name) = &placed.outline().name {
                    m.name = Some(name.name.to_string());
                    m.name_range = Some(placed.abs(name.start as usize..name.end as usize));
                }
                m.range.end = end_of(chunk);
            }
            ChunkKind::Computation => {
                let m = current.get_or_insert_with(|| new_module(placed.start, units));
                Arc::make_mut(&mut m.places).push(Placed {
                    offset: placed.start,
                    chunk,
                });
                m.range.end = end_of(chunk);
            }
            ChunkKind::Table | ChunkKind::Other => {
                if let Some(m) = current.as_mut() {
                    m.range.end = end_of(chunk);
                }
            }
        }
    }
    modules.extend(current);
    let shared = previous.filter(|p| p.modules.len() == modules.len());
    for (k, m) in modules.iter_mut().enumerate() {
        m.refs = match shared {
            Some(p) => p.modules[k].refs.clone(),
            None => Arc::new(crossrefs(&m.places, units)),
        };
    }
    HloFile {
        modules,
        diagnostics: Vec::new(),
    }
}

/// The number after `key` in a module header (`num_partitions=4`).
fn header_number(header: &str, key: &str) -> Option<i64> {
    let at = header.find(key)? + key.len();
    let digits: String = header[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn new_module(start: usize, units: &Units) -> Module {
    Module {
        range: start..start,
        units: units.clone(),
        ..Module::default()
    }
}

/// Names, the entry and the callers of a module's computations, from their outlines.
fn crossrefs(places: &[Placed], units: &Blocks<Arc<Unit>>) -> Crossrefs {
    let outline = |placed: &Placed| units[placed.chunk].chunk.outline();
    let mut refs = Crossrefs::default();
    // Sized once: grown by doubling, rehashing them was half of the index's time when
    // an edit that adds a computation indexes a 600 MB dump's 500,000 again. Nearly
    // every computation has a name, and nearly every one is called.
    refs.computation_names.reserve(places.len());
    refs.callers.reserve(places.len());
    for (i, placed) in places.iter().enumerate() {
        let id = ComputationId(i as u32);
        let outline = outline(placed);
        if let Some(name) = &outline.name {
            match refs.computation_names.entry(name.name.clone()) {
                std::collections::hash_map::Entry::Occupied(_) => refs.duplicates.push(id),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(id);
                }
            }
        }
        if outline.is_entry {
            refs.marked_entries.push(id);
        }
    }
    refs.entry = refs
        .marked_entries
        .first()
        .copied()
        .or(places.len().checked_sub(1).map(|i| ComputationId(i as u32)));
    for (caller, placed) in places.iter().enumerate() {
        for (k, call) in outline(placed).calls.iter().enumerate() {
            refs.callers
                .entry(call.callee.name.clone())
                .or_default()
                .push(CallSite {
                    computation: ComputationId(caller as u32),
                    call: k as u32,
                });
        }
    }
    refs
}

/// What computation `c` of `m` shows to be wrong in relation to the others: its name
/// defined twice, a second `ENTRY`, callees that do not exist, calls whose operands or
/// result do not fit the callee. Builds `c` and the computations it calls.
pub fn diagnostics(m: &Module, c: ComputationRef) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let outline = m.outline(c.id);
    if let Some(name) = &outline.name {
        let first = m.computation_names.get(&*name.name).copied();
        if let Some(first) = first.filter(|&f| f != c.id) {
            let first = m.computation(first);
            let free = super::names::free_name(&name.name, |n| m.computation_names.contains_key(n));
            let range = c.abs(c.name_range);
            let percent = if c.src(c.name_range).starts_with('%') {
                "%"
            } else {
                ""
            };
            out.push(
                Diagnostic::error(
                    range.clone(),
                    codes::DUPLICATE_NAME,
                    format!("computation `{}` is defined twice", name.name),
                )
                .with_related(first.abs(first.name_range), "first defined here")
                .with_fix(crate::model::Fix {
                    title: format!("rename to `{free}`"),
                    edits: vec![crate::model::TextEdit {
                        range,
                        new_text: format!("{percent}{free}"),
                    }],
                }),
            );
        }
    }
    if outline.is_entry && m.entry != Some(c.id) {
        out.push(Diagnostic::error(
            c.abs(c.name_range),
            codes::DUPLICATE_NAME,
            "expects only one ENTRY computation in a module; this is another",
        ));
    }
    for call in &outline.calls {
        if !m.computation_names.contains_key(&*call.callee.name) {
            out.push(Diagnostic::error(
                c.offset + call.callee.start as usize..c.offset + call.callee.end as usize,
                codes::UNDEFINED_COMPUTATION,
                format!("no computation named `{}` in this module", call.callee.name),
            ));
        }
    }
    out.extend(recursive_calls(m, c));
    for instr in &c.model().instructions {
        check_calls(m, c, instr, &mut out);
        if instr.opcode == Opcode::AsyncStart {
            shared_async_computation(m, c, instr, &mut out);
        }
    }
    out
}

/// An async computation belongs to one `async-start` (XLA's parser: "Computation X is
/// called by more than one async op"): an error on every start after the first.
fn shared_async_computation(
    m: &Module,
    c: ComputationRef,
    instr: &Instruction,
    diags: &mut Vec<Diagnostic>,
) {
    for called in instr.called.iter().filter(|k| k.attribute == "calls") {
        let starts: Vec<(ComputationId, usize)> = m
            .callers_of_name(&called.name)
            .iter()
            .filter_map(|site| {
                let (caller, i) = m.caller(site)?;
                (i.opcode == Opcode::AsyncStart).then_some((caller.id, i.range.start as usize))
            })
            .collect();
        let first = starts.iter().min().copied();
        if starts.len() > 1 && first != Some((c.id, instr.range.start as usize)) {
            diags.push(Diagnostic::error(
                c.abs(called.name_range),
                codes::INVALID_MODULE,
                format!(
                    "Computation {} is called by more than one async op",
                    called.name
                ),
            ));
        }
    }
}

/// An error on each call of `c` that leads back to `c`, naming the cycle: a call
/// inside one strongly connected component of the call graph ([`Module::call_cycles`]).
fn recursive_calls(m: &Module, c: ComputationRef) -> Vec<Diagnostic> {
    let outline = m.outline(c.id);
    let mut out = Vec::new();
    // Nothing calls `c` (the entry, most of all): no call of it leads back.
    let called = outline
        .name
        .as_ref()
        .is_some_and(|name| !m.callers_of_name(&name.name).is_empty());
    if !called {
        return out;
    }
    for call in &outline.calls {
        let Some(callee) = m.computation_by_name(&call.callee.name) else {
            continue;
        };
        let Some(path) = path_back(m, callee, c.id) else {
            continue;
        };
        let names: Vec<String> = std::iter::once(c.id)
            .chain(path)
            .map(|id| {
                let name = m.outline(id).name.as_ref().map_or("", |n| &n.name);
                format!("`{name}`")
            })
            .collect();
        out.push(Diagnostic::error(
            c.offset + call.callee.start as usize..c.offset + call.callee.end as usize,
            codes::RECURSIVE_CALL,
            format!(
                "recursive call: {} (computations cannot call themselves)",
                names.join(" calls ")
            ),
        ));
    }
    out
}

/// How many computations [`path_back`] visits from a callee before it asks for the
/// module's call-graph components instead. A fused computation's callees (its
/// reducers) reach a few, so checking one after an edit does not wait for the
/// components, a walk over every call of the module that an edit adding or renaming
/// a computation would otherwise start (a seventh of such an edit on a 600 MB dump).
const NEARBY_CALLS: usize = 64;

/// The computations from `from` back to `to` along calls (both included), a shortest
/// such path, or `None` when `to` cannot be reached. Breadth-first: within the
/// components once they are known, else from `from` alone while it reaches few
/// computations. Both find the same path: a computation on a path back to `to` is
/// in `to`'s component, and one outside it never leads back into it, so the walks
/// meet the component's computations in the same order.
fn path_back(m: &Module, from: ComputationId, to: ComputationId) -> Option<Vec<ComputationId>> {
    if from == to {
        return Some(vec![from]);
    }
    if m.outline(from).calls.is_empty() {
        return None; // a reducer or another leaf: most callees
    }
    if m.known_call_cycles().is_none() {
        match walk_back(m, from, to, |_| true, NEARBY_CALLS) {
            Walk::Path(path) => return Some(path),
            Walk::NoPath => return None,
            Walk::TooFar => {}
        }
    }
    let components = m.call_cycles();
    if components[from.index()] != components[to.index()] {
        return None;
    }
    let within = |id: ComputationId| components[id.index()] == components[to.index()];
    match walk_back(m, from, to, within, usize::MAX) {
        Walk::Path(path) => Some(path),
        Walk::NoPath | Walk::TooFar => None,
    }
}

/// How a [`walk_back`] ended.
enum Walk {
    Path(Vec<ComputationId>),
    NoPath,
    /// More than the limit of computations were reached.
    TooFar,
}

/// Breadth-first from `from` along calls to computations `keep` accepts, until `to`
/// or more than `limit` computations are reached.
fn walk_back(
    m: &Module,
    from: ComputationId,
    to: ComputationId,
    keep: impl Fn(ComputationId) -> bool,
    limit: usize,
) -> Walk {
    let mut parent: rustc_hash::FxHashMap<ComputationId, ComputationId> = Default::default();
    let mut queue = std::collections::VecDeque::from([from]);
    let mut seen: rustc_hash::FxHashSet<ComputationId> = [from].into_iter().collect();
    while let Some(at) = queue.pop_front() {
        if at == to {
            let mut path = vec![at];
            while let Some(&p) = path.last().and_then(|last| parent.get(last)) {
                path.push(p);
            }
            path.reverse();
            return Walk::Path(path);
        }
        for next in outline_callees(m, at) {
            if keep(next) && seen.insert(next) {
                if seen.len() > limit {
                    return Walk::TooFar;
                }
                parent.insert(next, at);
                queue.push_back(next);
            }
        }
    }
    Walk::NoPath
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
                if matches!(*param.shape, Shape::Invalid)
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
                let comparable = !matches!(*root.shape, Shape::Invalid)
                    && !matches!(*instr.shape, Shape::Invalid);
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

/// The computations `id` calls, as its outline names them (without building it), in
/// the order of its calls; calls of a name the module does not define are left out.
fn outline_callees(m: &Module, id: ComputationId) -> impl Iterator<Item = ComputationId> + '_ {
    m.outline(id)
        .calls
        .iter()
        .filter_map(|call| m.computation_by_name(&call.callee.name))
}

/// The strongly connected component of each computation in the call graph (from the
/// outlines), by Tarjan's algorithm with an explicit stack: components with more than
/// one computation, or a computation calling itself, are recursion.
pub(crate) fn call_components(m: &Module) -> Vec<u32> {
    let n = m.computation_count();
    let callees = |v: usize| -> Vec<usize> {
        outline_callees(m, ComputationId(v as u32))
            .map(|id| id.index())
            .collect()
    };
    const UNSEEN: u32 = u32::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![UNSEEN; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut next_index = 0u32;
    let mut next_component = 0u32;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // Frames: (node, its callees, position of the next callee to visit).
        let mut frames: Vec<(usize, Vec<usize>, usize)> = vec![(root, callees(root), 0)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some((v, edges, at)) = frames.last_mut() {
            let v = *v;
            if let Some(&w) = edges.get(*at) {
                *at += 1;
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, callees(w), 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if let Some((parent, _, _)) = frames.last() {
                low[*parent] = low[*parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component[w] = next_component;
                    if w == v {
                        break;
                    }
                }
                next_component += 1;
            }
        }
    }
    component
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Document;

    /// `name` calling each of `callees` (one fusion each).
    fn computation(name: &str, callees: &[String]) -> String {
        let mut body = format!("{name} {{\n  p0 = f32[2] parameter(0)\n");
        for (k, callee) in callees.iter().enumerate() {
            body.push_str(&format!(
                "  f{k} = f32[2] fusion(p0), kind=kLoop, calls={callee}\n"
            ));
        }
        body.push_str("  ROOT r = f32[2] negate(p0)\n}\n");
        body
    }

    /// A self call, a ring of three with a call leaving it, a ring longer than
    /// [`NEARBY_CALLS`], and a chain longer than it that is no cycle.
    fn call_graphs() -> String {
        let mut text = String::from("HloModule m\n");
        text.push_str(&computation("s", &["s".into()]));
        text.push_str(&computation("r0", &["r1".into()]));
        text.push_str(&computation("r1", &["leaf".into(), "r2".into()]));
        text.push_str(&computation("r2", &["r0".into()]));
        text.push_str(&computation("leaf", &[]));
        let ring = 3 * NEARBY_CALLS;
        for k in 0..ring {
            text.push_str(&computation(
                &format!("q{k}"),
                &[format!("q{}", (k + 1) % ring)],
            ));
        }
        for k in 0..ring {
            let next: Vec<String> = (k + 1 < ring)
                .then(|| format!("h{}", k + 1))
                .into_iter()
                .collect();
            text.push_str(&computation(&format!("h{k}"), &next));
        }
        let entry: Vec<String> = ["s", "r0", "q0", "h0"].map(String::from).to_vec();
        text.push_str(&computation("ENTRY e", &entry));
        text
    }

    /// The recursive-call errors of computation `k`, in a fresh document (so that
    /// nothing asked for the components before), with or without asking for them
    /// first; and whether they were known after.
    fn recursion_errors(text: &str, k: usize, components_first: bool) -> (Vec<String>, bool) {
        let document = Document::parse(text);
        let m = &document.file().modules[0];
        if components_first {
            m.call_cycles();
        }
        let c = m.computations().nth(k).expect("the computation");
        let errors = diagnostics(m, c)
            .into_iter()
            .filter(|d| d.code == codes::RECURSIVE_CALL)
            .map(|d| format!("{:?} {}", d.range, d.message))
            .collect();
        (errors, m.known_call_cycles().is_some())
    }

    /// A call that leads back is found walking near the callee, as it is within the
    /// components, and the components are computed only when the walk goes far (not
    /// for the entry, which nothing calls).
    #[test]
    fn recursive_calls_read_the_same_found_nearby_or_within_the_components() {
        let text = call_graphs();
        let count = Document::parse(&text).file().modules[0].computation_count();
        for k in 0..count {
            let (within, _) = recursion_errors(&text, k, true);
            let (walked, _) = recursion_errors(&text, k, false);
            assert_eq!(walked, within, "computation {k}");
        }
        let (s, known) = recursion_errors(&text, 0, false);
        assert!(
            !known && s.len() == 1 && s[0].contains("`s` calls `s`"),
            "{s:?}"
        );
        let (r0, known) = recursion_errors(&text, 1, false);
        assert!(
            !known && r0[0].contains("`r0` calls `r1` calls `r2` calls `r0`"),
            "{r0:?}"
        );
        let (entry, known) = recursion_errors(&text, count - 1, false);
        assert!(!known && entry.is_empty(), "{entry:?}");
        let (q0, known) = recursion_errors(&text, 5, false);
        assert!(
            known && q0.len() == 1 && q0[0].contains("`q191` calls `q0`"),
            "{q0:?}"
        );
    }

    /// The header's replica and partition counts reach the module (collectives
    /// count their ranks from them); a module without them runs on one device.
    #[test]
    fn the_header_says_how_many_devices() {
        let file = crate::model::parse_hlo(
            "HloModule m, replica_count=2, num_partitions=4\n\nENTRY e {\n  ROOT p = f32[8] parameter(0)\n}\n",
        );
        let m = &file.modules[0];
        assert_eq!((m.replica_count(), m.num_partitions()), (2, 4));
        let file = crate::model::parse_hlo(
            "HloModule m\n\nENTRY e {\n  ROOT p = f32[8] parameter(0)\n}\n",
        );
        let m = &file.modules[0];
        assert_eq!((m.replica_count(), m.num_partitions()), (1, 1));
    }
}
