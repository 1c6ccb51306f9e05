//! XLA's indexing analysis on the HLO model: for an instruction (or a whole
//! fusion), which elements of each operand one output element reads (output to
//! input), or which output elements one operand element feeds (input to output),
//! as simplified indexing maps with their domains, runtime variables and
//! operand utilization.
//!
//! * [`ops`]: per-op maps, pure functions of shapes and attributes ([`op::OpInfo`]).
//! * [`fusion`] / [`input_to_output`]: composition through fused computations.
//! * [`compose`]: composition of one map pair with runtime variables and replicas.
//! * [`layout`]: the physical-layout view. [`utilization`]: operand utilization.
//! * [`recompute`]: expensive work a loop fusion computes more than once.
//! * [`nesting`]: bounds the recursion through called computations (cycles, depth).
//! * [`graph`]: the module view the analysis runs on; [`view`] builds it from the model.

pub mod build;
pub mod compose;
pub mod fusion;
pub mod graph;
pub mod input_to_output;
pub mod layout;
pub mod nesting;
pub mod op;
pub mod operand_indexing;
pub mod ops;
pub mod recompute;
pub mod shape;
pub mod utilization;
pub mod view;

pub use graph::{Computation, Module, Node};
pub use op::OpInfo;
pub use operand_indexing::{
    InstructionIndexing, OperandIndexing, OperandMap, RuntimeSource, RuntimeVar,
};
pub use shape::{ArrayShape, Shape};

/// Which way the maps go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
                        node.op.operands.iter().map(Shape::as_array).collect();
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
                if let Some(Some(from)) = node.op.operands.get(q.operand_id).map(Shape::as_array) {
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
