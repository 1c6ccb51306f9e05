//! XLA's indexing analysis on the HLO model: for an instruction (or a whole
//! fusion), which elements of each operand one output element reads (output to
//! input), or which output elements one operand element feeds (input to output),
//! as simplified indexing maps with their domains, runtime variables and
//! operand utilization.
//!
//! * [`ops`]: per-op maps, pure functions of shapes and attributes ([`op::OpInfo`]).
//! * [`fusion`] / [`input_to_output`]: composition through fused computations.
//! * [`compose`]: composition of one map pair with runtime variables and replicas;
//!   [`compositions`]: the pairs already composed, shared by every fusion.
//! * [`layout`]: the physical-layout view. [`utilization`]: operand utilization.
//! * [`recompute`]: expensive work a loop fusion computes more than once.
//! * [`nesting`]: bounds the recursion through called computations (cycles, depth).
//! * [`structure`]: classes of computations equal up to names, analyzed once.
//! * [`graph`]: the module view the analysis runs on; [`view`] builds it from the model.

use std::sync::Arc;

use rustc_hash::FxHashMap;

pub mod build;
pub mod compose;
pub mod compositions;
pub mod contiguity;
pub mod fusion;
pub mod graph;
pub mod input_to_output;
pub mod layout;
pub mod memo;
pub mod nesting;
pub mod op;
pub mod operand_indexing;
pub mod ops;
pub mod recompute;
pub mod shape;
pub mod structure;
pub mod unknown;
pub mod utilization;
pub mod view;

pub use graph::{Computation, Module, Node};
pub use op::OpInfo;
pub use operand_indexing::{
    InstructionIndexing, OperandIndexing, OperandMap, RuntimeSource, RuntimeVar,
};
pub use shape::{ArrayShape, Shape};
pub use unknown::Unknown;

/// Which way the maps go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From an output element to the operand elements it reads.
    OutputToInput,
    /// From an operand element to the output elements that read it.
    InputToOutput,
}

/// What to analyze about one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    pub computation: usize,
    pub instruction: usize,
    pub direction: Direction,
    /// Output to input: which output of a tuple-shaped instruction.
    pub output_id: usize,
    /// Input to output: which operand.
    pub operand_id: usize,
    /// Maps between physical (layout-ordered) index spaces.
    pub physical_layout: bool,
}

impl Query {
    /// Output `output_id` of instruction `instruction` to what it reads, in logical
    /// index spaces: the question most callers ask.
    pub fn output_to_input(computation: usize, instruction: usize, output_id: usize) -> Query {
        Query {
            computation,
            instruction,
            direction: Direction::OutputToInput,
            output_id,
            operand_id: 0,
            physical_layout: false,
        }
    }
}

/// Runs every query of `queries` on `module` in parallel, each fusion or call whose
/// called computation is structurally equal to an earlier one's (and which has the
/// same shapes and asks the same question) answered from that one's result, unless
/// the result names instructions of its own computation.
pub fn analyze_many(module: &Module, queries: &[Query]) -> Vec<Arc<InstructionIndexing>> {
    use rayon::prelude::*;
    let classes = structure::Classes::of(module);
    // The representative of each query: the first query with the same key.
    let mut first: FxHashMap<(structure::Class, ShareKey, &OpInfo), usize> = FxHashMap::default();
    let representative: Vec<usize> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let node = &module.computation(q.computation).nodes[q.instruction];
            let class = node.is_composite().then(|| classes.class(node.called[0]));
            match class.flatten() {
                Some(class) => *first.entry((class, ShareKey::of(q), &node.op)).or_insert(i),
                None => i,
            }
        })
        .collect();
    let own: Vec<Option<Arc<InstructionIndexing>>> = (0..queries.len())
        .into_par_iter()
        .map(|i| (representative[i] == i).then(|| Arc::new(analyze(module, &queries[i]))))
        .collect();
    (0..queries.len())
        .into_par_iter()
        .map(|i| match &own[representative[i]] {
            Some(shared) if i == representative[i] || !shared.names_instructions() => {
                shared.clone()
            }
            _ => Arc::new(analyze(module, &queries[i])),
        })
        .collect()
}

/// What of a query, besides the instruction, its answer depends on.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ShareKey {
    direction: Direction,
    output_id: usize,
    operand_id: usize,
    physical_layout: bool,
}

impl ShareKey {
    fn of(q: &Query) -> ShareKey {
        ShareKey {
            direction: q.direction,
            output_id: q.output_id,
            operand_id: q.operand_id,
            physical_layout: q.physical_layout,
        }
    }
}

/// [`analyze`], shared with the request's memo ([`memo`]) where it keeps the
/// answer: a call's maps to its operands, not copied for each caller.
pub fn analyze_shared(module: &Module, q: &Query) -> std::sync::Arc<InstructionIndexing> {
    match (q.direction, q.physical_layout) {
        (Direction::OutputToInput, false) => {
            fusion::shared_output_to_input(module, q.computation, q.instruction, q.output_id)
        }
        _ => std::sync::Arc::new(analyze(module, q)),
    }
}

/// Runs the analysis for one query. Entries are operands (output to input) or
/// outputs (input to output).
pub fn analyze(module: &Module, q: &Query) -> InstructionIndexing {
    let node = &module.computation(q.computation).nodes[q.instruction];
    match q.direction {
        Direction::OutputToInput => {
            let mut indexing =
                fusion::output_to_input(module, q.computation, q.instruction, q.output_id);
            if q.physical_layout {
                if let Some(from) = node.op.shape.output(q.output_id) {
                    let to: Vec<Option<&ArrayShape>> =
                        node.op.operands.iter().map(|s| s.as_array()).collect();
                    layout::indexing_to_physical(&mut indexing, from, &to);
                }
            }
            indexing
        }
        Direction::InputToOutput => {
            let mut indexing = input_to_output::input_to_output(
                module,
                q.computation,
                q.instruction,
                q.operand_id,
            );
            if q.physical_layout {
                if let Some(Some(from)) = node.op.operands.get(q.operand_id).map(|s| s.as_array()) {
                    let to: Vec<Option<&ArrayShape>> = (0..node.op.shape.output_count())
                        .map(|j| node.op.shape.output(j))
                        .collect();
                    layout::indexing_to_physical(&mut indexing, from, &to);
                }
            }
            indexing
        }
    }
}
