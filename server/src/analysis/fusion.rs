//! Output-to-input indexing of any instruction of a module, composing through
//! fused (and called) computations: XLA's `ComputeGroupedOutputToInputIndexing`.
//!
//! Starting from the identity on the chosen output, the traversal visits the
//! computation's instructions users-before-operands, composes every map that
//! reached an instruction with that instruction's own operand maps, simplifies,
//! and accumulates a deduplicated set per instruction. Parameters collect the
//! maps of the fusion's operands. Nested fusions recurse.

use std::sync::Arc;

use super::build::identity;
use super::compose::{compose, resolve_sources};
use super::graph::Module;
use super::operand_indexing::{
    insert_live_first, InstructionIndexing, OperandIndexing, OperandMap, RuntimeSource, SetIndex,
};
use super::ops;
use super::unknown::Unknown;
use crate::algebra::IndexingMap;

/// Domain points [`Reached::is_read`] walks, at most, to find a constrained map
/// empty: a few microseconds.
pub const EMPTINESS_WALK: u128 = 4096;

/// Maps that reached one instruction, tagged with which of its outputs they index.
#[derive(Clone, Debug, Default)]
pub struct Reached {
    pub maps: Vec<(usize, OperandMap)>,
    pub unknown: Option<Unknown>,
}

impl Reached {
    fn insert(&mut self, output: usize, m: OperandMap) {
        insert_live_first(&mut self.maps, (output, m), |(_, m)| m, |a, b| a.0 == b.0);
    }

    /// True when some path reads this instruction: a map whose domain is not
    /// empty (known to be, or found so on a domain of at most [`EMPTINESS_WALK`]
    /// points), or a path whose indexing is unknown (it may read it).
    pub fn is_read(&self) -> bool {
        let reads = |m: &IndexingMap| {
            !m.is_known_empty()
                && super::utilization::has_point_within(m, EMPTINESS_WALK) != Some(false)
        };
        self.unknown.is_some() || self.maps.iter().any(|(_, m)| reads(&m.map))
    }

    fn mark_unknown(&mut self, reason: &Unknown) {
        if self.unknown.is_none() {
            self.unknown = Some(reason.clone());
        }
    }

    /// The maps as one operand entry (output tags dropped).
    pub fn to_entry(&self) -> OperandIndexing {
        let mut e = OperandIndexing::none();
        e.insert_all(self.maps.iter().map(|(_, m)| m.clone()));
        if let Some(r) = &self.unknown {
            e.mark_unknown(r.clone());
        }
        e
    }
}

/// The runtime-variable source for operand `k` of node `node` in `comp`.
fn source(module: &Module, comp: usize, node: usize, k: usize) -> RuntimeSource {
    let c = module.computation(comp);
    match c.nodes[node].operands.get(k) {
        Some(&operand) => RuntimeSource::Instruction {
            computation: comp,
            instruction: operand,
            label: c.nodes[operand].label(),
        },
        None => RuntimeSource::Operand(k),
    }
}

/// Output-to-input indexing of `node` (in computation `comp`) for `output_id`.
/// Fusions and calls are composed through their computation; other instructions
/// get their per-op maps, with runtime variables naming the operand instructions.
pub fn output_to_input(
    module: &Module,
    comp: usize,
    node: usize,
    output_id: usize,
) -> InstructionIndexing {
    Arc::unwrap_or_clone(shared_output_to_input(module, comp, node, output_id))
}

/// [`output_to_input`], shared: a fusion's composed maps are the request's
/// ([`super::memo`]), read by every output that reaches the fusion, not copied.
pub fn shared_output_to_input(
    module: &Module,
    comp: usize,
    node: usize,
    output_id: usize,
) -> Arc<InstructionIndexing> {
    let n = &module.computation(comp).nodes[node];
    if n.is_composite() {
        let (called, operands) = (n.called[0], n.operands.len());
        return super::memo::composed(module, called, output_id, operands, || {
            super::nesting::enter(module, called, || {
                fused_output_to_input(module, called, output_id, operands)
            })
            .unwrap_or_else(|reason| InstructionIndexing::all_unknown(operands, &reason))
        });
    }
    let mut indexing = ops::output_to_input(&n.op, output_id);
    for entry in &mut indexing.entries {
        for m in &mut entry.maps {
            resolve_sources(m, &|k| source(module, comp, node, k));
        }
    }
    Arc::new(indexing)
}

/// Where traversal of output `output_id` of `comp` starts: the tuple root's
/// operand, or the root itself (a variadic op's output). `None` also when the
/// tuple's operand is undefined (the model reports that name).
pub fn output_start(module: &Module, comp: usize, output_id: usize) -> Option<(usize, usize)> {
    let c = module.get(comp)?;
    let root = &c.nodes.get(c.root)?;
    if root.op.opcode == "tuple" {
        let operand = *root.operands.get(output_id)?;
        (operand < c.nodes.len()).then_some((operand, 0))
    } else {
        Some((c.root, output_id))
    }
}

/// Composed maps from output `output_id` of the fused computation `comp` to each
/// of its `operand_count` parameters.
pub fn fused_output_to_input(
    module: &Module,
    comp: usize,
    output_id: usize,
    operand_count: usize,
) -> InstructionIndexing {
    let Some((start, out)) = output_start(module, comp, output_id) else {
        return InstructionIndexing::all_unknown(
            operand_count,
            &Unknown::malformed("the fusion has no such output"),
        );
    };
    let reached = grouped_output_to_input(module, comp, start, out);
    parameter_entries(module, comp, &reached, operand_count)
}

/// The maps that reached the parameters of `comp` (from [`grouped_output_to_input`])
/// as the fusion's per-operand entries.
pub fn parameter_entries(
    module: &Module,
    comp: usize,
    reached: &[Reached],
    operand_count: usize,
) -> InstructionIndexing {
    let c = module.computation(comp);
    let mut entries = vec![OperandIndexing::none(); operand_count];
    for (i, node) in c.nodes.iter().enumerate() {
        if let (Some(p), Some(r)) = (node.parameter_number, reached.get(i)) {
            if p < operand_count {
                entries[p].extend(r.to_entry());
            }
        }
    }
    InstructionIndexing { entries }
}

/// Number of outputs of the computation `comp` (a fused computation's outputs):
/// the operands of a tuple root, else the root's own outputs (a variadic reduce).
pub fn output_count(module: &Module, comp: usize) -> usize {
    let Some(c) = module.get(comp) else {
        return 0;
    };
    match c.nodes.get(c.root) {
        Some(root) if root.op.opcode == "tuple" => root.operands.len(),
        Some(root) => root.op.shape.output_count(),
        None => 0,
    }
}

/// Maps from every output of the computation `comp` to each of its instructions:
/// `result[k][i]` is what reaches instruction `i` from output `k` (XLA's grouped
/// indexing, once per output, as `print_indexing` prints every output).
pub fn grouped_from_every_output(module: &Module, comp: usize) -> Vec<Vec<Reached>> {
    from_every_output_within(module, comp, None)
}

/// [`grouped_from_every_output`] for some instructions alone: `result[k][i]` is
/// complete for every instruction `i` of `within`, empty for the others. `within`
/// holds every user of each instruction it holds: the users' closure of the
/// instructions wanted ([`super::graph::Computation::users_closure`]), which is
/// what the traversal must visit to know their maps. A hover reads one
/// instruction's maps: it visits the few dozen instructions above it, not the
/// hundreds of its fusion.
pub fn grouped_from_every_output_within(
    module: &Module,
    comp: usize,
    within: &[bool],
) -> Vec<Vec<Reached>> {
    from_every_output_within(module, comp, Some(within))
}

/// [`grouped_from_every_output`], visiting only the instructions of `within` when
/// given (see [`propagate`]).
fn from_every_output_within(
    module: &Module,
    comp: usize,
    within: Option<&[bool]>,
) -> Vec<Vec<Reached>> {
    let every_output = || {
        (0..output_count(module, comp))
            .map(|k| match output_start(module, comp, k) {
                Some((start, out)) => output_within(module, comp, (start, out), within),
                None => vec![Reached::default(); module.computation(comp).nodes.len()],
            })
            .collect()
    };
    super::nesting::enter(module, comp, every_output).unwrap_or_else(|reason| {
        let mut unknown = Reached::default();
        unknown.mark_unknown(&reason);
        vec![vec![unknown; module.computation(comp).nodes.len()]; output_count(module, comp)]
    })
}

/// Maps from output `out` of `start` to every instruction of `comp` it reaches
/// (the grouped form; index = instruction). Unreached instructions are empty.
pub fn grouped_output_to_input(
    module: &Module,
    comp: usize,
    start: usize,
    out: usize,
) -> Vec<Reached> {
    output_within(module, comp, (start, out), None)
}

/// [`grouped_output_to_input`] through the instructions of `within` (see
/// [`propagate`]).
fn output_within(
    module: &Module,
    comp: usize,
    (start, out): (usize, usize),
    within: Option<&[bool]>,
) -> Vec<Reached> {
    let c = module.computation(comp);
    let mut reached = vec![Reached::default(); c.nodes.len()];
    match c.nodes[start].op.shape.output(out) {
        Some(shape) => reached[start].insert(out, OperandMap::plain(identity(&shape.dims))),
        None => reached[start].mark_unknown(&Unknown::malformed(
            "the instruction has no such array output",
        )),
    }
    propagate(module, comp, start, reached, within)
}

/// Maps from every array output of `start` (its own index space) to every
/// instruction of `comp` it reads, e.g. the fusion parameters one fused
/// instruction reads.
pub fn grouped_from_instruction(module: &Module, comp: usize, start: usize) -> Vec<Reached> {
    super::nesting::enter(module, comp, || grouped_from(module, comp, start)).unwrap_or_else(
        |reason| {
            let mut unknown = Reached::default();
            unknown.mark_unknown(&reason);
            vec![unknown; module.computation(comp).nodes.len()]
        },
    )
}

fn grouped_from(module: &Module, comp: usize, start: usize) -> Vec<Reached> {
    let c = module.computation(comp);
    let mut reached = vec![Reached::default(); c.nodes.len()];
    let shape = &c.nodes[start].op.shape;
    for out in 0..shape.output_count() {
        if let Some(a) = shape.output(out) {
            reached[start].insert(out, OperandMap::plain(identity(&a.dims)));
        }
    }
    propagate(module, comp, start, reached, None)
}

/// Pushes the maps in `reached` (seeded at `start`) through the operands of
/// every instruction `start` depends on, users before operands.
///
/// With `within` (every user of each instruction it holds, as
/// [`super::graph::Computation::users_closure`] gives), only its instructions are
/// visited and given maps, in the same order: what reaches each of them is what
/// the whole traversal gives it, as only its users pass it maps.
fn propagate(
    module: &Module,
    comp: usize,
    start: usize,
    mut reached: Vec<Reached>,
    within: Option<&[bool]>,
) -> Vec<Reached> {
    let c = module.computation(comp);
    let inside = |v| super::graph::is_within(within, v);
    let order = c.post_order_within(start, within);
    // Each instruction's maps, hashed: what reaches an instruction is a set.
    let mut index: Vec<SetIndex> = reached
        .iter()
        .map(|r| SetIndex::of(&r.maps, |(_, m)| m))
        .collect();
    for (done, &u) in order.iter().rev().enumerate() {
        if crate::budget::exhausted() {
            stop(c, &order[..order.len() - done], &mut reached);
            break;
        }
        let node = &c.nodes[u];
        if node.parameter_number.is_some()
            || (reached[u].maps.is_empty() && reached[u].unknown.is_none())
        {
            continue;
        }
        let maps = std::mem::take(&mut reached[u].maps);
        let own_index = std::mem::take(&mut index[u]);
        let unknown = reached[u].unknown.clone();
        let mut outputs: Vec<usize> = maps.iter().map(|(o, _)| *o).collect();
        outputs.sort_unstable();
        outputs.dedup();
        let operand_output = if node.op.opcode == "get-tuple-element" {
            node.op
                .attrs
                .tuple_index
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(0)
        } else {
            0
        };
        for output in outputs {
            let refusals = super::nesting::refusals();
            let producer = shared_output_to_input(module, comp, u, output);
            let clean = super::nesting::refusals() == refusals && !crate::budget::exhausted();
            let steps: Vec<super::memo::Step> = maps
                .iter()
                .filter(|(o, _)| *o == output)
                .map(|(_, m)| match within {
                    // The request's memo keeps steps to every operand.
                    None => super::memo::step(module, (comp, u, output), m, || {
                        (
                            Arc::new(step(module, comp, u, m, &producer, &inside)),
                            clean,
                        )
                    }),
                    Some(_) => Arc::new(step(module, comp, u, m, &producer, &inside)),
                })
                .collect();
            for (k, &v) in node.operands.iter().enumerate() {
                if v >= c.nodes.len() || !inside(v) {
                    continue;
                }
                let Some(entry) = producer.entries.get(k) else {
                    reached[v].mark_unknown(&Unknown::malformed(
                        "operand count differs from the op's indexing",
                    ));
                    continue;
                };
                for composed in steps.iter().filter_map(|s| s.get(k)) {
                    for result in composed {
                        match result {
                            Ok(cm) => insert(&mut reached[v], &mut index[v], operand_output, cm),
                            Err(reason) => reached[v].mark_unknown(reason),
                        }
                    }
                }
                if let Some(reason) = &entry.unknown {
                    reached[v].mark_unknown(reason);
                }
            }
        }
        if let Some(reason) = unknown {
            for &v in &node.operands {
                if v < c.nodes.len() {
                    reached[v].mark_unknown(&reason);
                }
            }
        }
        reached[u].maps = maps;
        index[u] = own_index;
    }
    reached
}

/// Adds `(output, m)` to what reached an instruction (`index` hashes its maps),
/// copying `m` only when it is new there.
fn insert(reached: &mut Reached, index: &mut SetIndex, output: usize, m: &OperandMap) {
    let hash = SetIndex::hash(&(output, m));
    let is = |(o, x): &(usize, OperandMap)| *o == output && x == m;
    if index.find(&reached.maps, hash, is).is_none() {
        let item = (output, m.clone());
        index.insert_new(&mut reached.maps, hash, item, |(_, m)| m, |a, b| a.0 == b.0);
    }
}

/// Marks what the traversal did not finish when the budget ran out: the
/// instructions of `unvisited` (the rest of the traversal, in post order) whose
/// maps could still grow. Those an unvisited instruction would still have passed
/// maps to (an operand of one, at any depth) are "stopped"; the others keep what
/// reached them, complete (a parameter whose users were all visited), so that a
/// cut output leaves out only the operands it did not finish.
fn stop(c: &super::graph::Computation, unvisited: &[usize], reached: &mut [Reached]) {
    let mut grows = vec![false; c.nodes.len()];
    for &u in unvisited.iter().rev() {
        let r = &reached[u];
        let passes = c.nodes[u].parameter_number.is_none()
            && (grows[u] || !r.maps.is_empty() || r.unknown.is_some());
        if passes {
            for &v in &c.nodes[u].operands {
                if let Some(g) = grows.get_mut(v) {
                    *g = true;
                }
            }
        }
    }
    for &v in unvisited {
        if grows[v] {
            reached[v].mark_unknown(&Unknown::Stopped);
        }
    }
}

/// The compositions of `m`, a map that reached instruction `u` of `comp`, with
/// each of the instruction's maps (`producer`) to each operand: entry `k` in the
/// order of operand `k`'s maps (empty for an operand the instruction's indexing
/// or the computation does not have, or that is not `inside` the traversal).
fn step(
    module: &Module,
    comp: usize,
    u: usize,
    m: &OperandMap,
    producer: &InstructionIndexing,
    inside: &dyn Fn(usize) -> bool,
) -> Vec<Vec<Result<OperandMap, Unknown>>> {
    let c = module.computation(comp);
    c.nodes[u]
        .operands
        .iter()
        .enumerate()
        .map(|(k, &v)| match producer.entries.get(k) {
            Some(entry) if v < c.nodes.len() && inside(v) => entry
                .maps
                .iter()
                .map(|p| compose(m, p, &|kk| source(module, comp, u, kk), module))
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every instruction of every fused computation of the benchmark dump (a
    /// transformer's 665) and of the examples: what reaches it, made for it alone
    /// (with the users' closure, as a hover does) or with other instructions, is what
    /// the traversal of the whole computation gives it.
    #[test]
    fn maps_made_for_some_instructions_are_those_of_the_whole_traversal() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let files = [
            "tests/data/bench/transformer.after.hlo",
            "examples/softmax.hlo",
            "examples/multi_output_fusion.hlo",
        ];
        let texts = files
            .iter()
            .map(|file| {
                (
                    *file,
                    std::fs::read_to_string(format!("{root}/{file}")).unwrap(),
                )
            })
            .chain([("READ_THREE_WAYS", READ_THREE_WAYS.to_string())]);
        let mut compared = 0;
        for (file, text) in texts {
            let hlo = crate::model::parse_hlo(&text);
            for m in &hlo.modules {
                let view = crate::analysis::view::from_model(m);
                for c in view.fused_computations() {
                    let whole = grouped_from_every_output(&view, c);
                    let nodes = view.computation(c).nodes.len();
                    let every_third: Vec<usize> = (0..nodes).step_by(3).collect();
                    let sets = (0..nodes).map(|i| vec![i]).chain([every_third]);
                    for targets in sets {
                        let within = view.computation(c).users_closure(&targets);
                        let some = grouped_from_every_output_within(&view, c, &within);
                        assert_eq!(some.len(), whole.len());
                        for (k, (some, whole)) in some.iter().zip(&whole).enumerate() {
                            for &i in &targets {
                                assert_eq!(
                                    format!("{:?}", some[i]),
                                    format!("{:?}", whole[i]),
                                    "{file}: computation {c}, output {k}, instruction {i} of {targets:?}"
                                );
                                compared += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(compared > 12_000, "{compared}");
    }

    /// A parameter read by three users through three maps (identity, transposed,
    /// reversed), one of them through a chain: made for the parameter alone, it
    /// needs every path to it (the dump's fusions mostly read one map many ways).
    const READ_THREE_WAYS: &str = r#"HloModule m

%fused (p0: f32[8,8]) -> f32[8,8] {
  %p0 = f32[8,8]{1,0} parameter(0)
  %t = f32[8,8]{1,0} transpose(%p0), dimensions={1,0}
  %n = f32[8,8]{1,0} negate(%t)
  %r = f32[8,8]{1,0} reverse(%p0), dimensions={0}
  %a = f32[8,8]{1,0} add(%p0, %n)
  ROOT %s = f32[8,8]{1,0} subtract(%a, %r)
}

ENTRY %main (x: f32[8,8]) -> f32[8,8] {
  %x = f32[8,8]{1,0} parameter(0)
  ROOT %f = f32[8,8]{1,0} fusion(%x), kind=kLoop, calls=%fused
}
"#;

    /// The users' closure: the targets and what reads them, at any depth; nothing
    /// that only they read.
    #[test]
    fn the_users_closure_holds_the_readers_of_the_targets() {
        use crate::analysis::{ArrayShape, Computation, Node, OpInfo};
        let op = |opcode: &str, n: usize| {
            let shape = ArrayShape::new(vec![4]);
            OpInfo::new(opcode, shape.clone(), vec![shape.into(); n])
        };
        let nodes = vec![
            Node::new("p0", op("parameter", 0), vec![]),
            Node::new("p1", op("parameter", 0), vec![]),
            Node::new("neg", op("negate", 1), vec![0]),
            Node::new("add", op("add", 2), vec![2, 1]),
            Node::new("exp", op("exponential", 1), vec![1]),
            Node::new("mul", op("multiply", 2), vec![3, 4]),
        ];
        let c = Computation {
            name: "f".into(),
            nodes,
            root: 5,
        };
        assert_eq!(
            c.users_closure(&[2]),
            [false, false, true, true, false, true]
        );
        assert_eq!(
            c.users_closure(&[1]),
            [false, true, false, true, true, true]
        );
        // In post order from the root, without the nodes left out.
        let within = c.users_closure(&[2]);
        assert_eq!(c.post_order_within(5, Some(&within)), [2, 3, 5]);
        assert_eq!(c.post_order_from(5), [0, 2, 1, 3, 4, 5]);
    }
}
