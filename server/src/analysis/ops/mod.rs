//! Per-op indexing maps: pure functions from an instruction's shapes and
//! attributes ([`OpInfo`]) to its output-to-input and input-to-output maps.
//!
//! One module per family of opcodes. Anything a module cannot describe exactly
//! becomes `unknown indexing` with the reason, never a guess.

use super::op::OpInfo;
use super::operand_indexing::InstructionIndexing;
use crate::analysis::unknown::Unknown;

pub mod broadcast;
pub mod collective;
pub mod concatenate;
pub mod convolution;
pub mod dot;
pub mod dynamic_slice;
pub mod elementwise;
pub mod fft;
pub mod gather;
pub mod pad;
pub mod reduce;
pub mod reduce_window;
pub mod reshape;
pub mod reverse;
pub mod scan;
pub mod scatter;
pub mod select_and_scatter;
pub mod slice;
pub mod sort;
pub mod transpose;
pub mod tuple;

use super::operand_indexing::OperandIndexing;

/// Result of one op constructor: one entry per operand (or output), or a reason
/// why the op has no exact indexing.
pub type OpResult = Result<Vec<OperandIndexing>, Unknown>;

/// Opcodes that produce a value without reading any tensor operand.
const NO_OPERANDS: &[&str] = &[
    "parameter",
    "constant",
    "iota",
    "partition-id",
    "replica-id",
    "after-all",
];

/// Opcodes that XLA (and this analysis) leave without indexing, with the reason.
fn no_indexing_reason(opcode: &str) -> Option<&'static str> {
    Some(match opcode {
        "custom-call" => "custom-call has opaque semantics",
        "while" | "conditional" => "control flow has no static indexing",
        "triangular-solve" | "cholesky" => "XLA defines no indexing for linear-algebra ops",
        "infeed" | "outfeed" | "send" | "recv" | "send-done" | "recv-done" => {
            "I/O ops have no indexing"
        }
        "rng-bit-generator" | "rng-get-and-update-state" => "random state has no indexing",
        "reduce-scatter" | "all-to-all" | "ragged-all-to-all" => {
            "the element read depends on the replica computing it"
        }
        "dynamic-reshape" | "get-dimension-size" | "set-dimension-size" => {
            "dynamic shapes have no static indexing"
        }
        "async-start" | "async-update" | "async-done" | "copy-start" | "copy-done" => {
            "asynchronous wrappers have no indexing of their own"
        }
        _ => return None,
    })
}

/// Output-to-input indexing of one (unfused) instruction for output `output_id`.
/// Fusions and calls are composed by [`super::fusion`]; here they are unknown.
pub fn output_to_input(op: &OpInfo, output_id: usize) -> InstructionIndexing {
    let n = op.operands.len();
    let result = if NO_OPERANDS.contains(&op.opcode.as_str()) {
        Ok((0..n).map(|_| OperandIndexing::none()).collect())
    } else if has_unbounded_dims(op) {
        Err(Unknown::no_indexing(
            "unbounded dynamic dimensions have no static indexing",
        ))
    } else if let Some(reason) = no_indexing_reason(&op.opcode) {
        Err(Unknown::no_indexing(reason))
    } else {
        output_to_input_op(op, output_id)
    };
    finish(result, n)
}

/// Input-to-output indexing: for operand `operand_id`, one entry per output.
pub fn input_to_output(op: &OpInfo, operand_id: usize) -> InstructionIndexing {
    let n = op.shape.output_count();
    let result = if operand_id >= op.operands.len() {
        Err(Unknown::malformed(format!(
            "{} has no operand {operand_id}",
            op.opcode
        )))
    } else if let Some(reason) = no_indexing_reason(&op.opcode) {
        Err(Unknown::no_indexing(reason))
    } else if has_unbounded_dims(op) {
        Err(Unknown::no_indexing(
            "unbounded dynamic dimensions have no static indexing",
        ))
    } else {
        input_to_output_op(op, operand_id)
    };
    finish(result, n)
}

/// True when a shape has an unbounded (`?`) extent, stored as a negative number.
fn has_unbounded_dims(op: &OpInfo) -> bool {
    fn negative(s: &super::shape::Shape) -> bool {
        match s {
            super::shape::Shape::Array(a) => a.dims.iter().any(|&d| d < 0),
            super::shape::Shape::Tuple(es) => es.iter().any(negative),
        }
    }
    negative(&op.shape) || op.operands.iter().any(|s| negative(s))
}

fn finish(result: OpResult, count: usize) -> InstructionIndexing {
    match result {
        Ok(entries) => InstructionIndexing { entries },
        Err(reason) => InstructionIndexing::all_unknown(count, &reason),
    }
}

fn output_to_input_op(op: &OpInfo, output_id: usize) -> OpResult {
    match op.opcode.as_str() {
        "broadcast" => broadcast::output_to_input(op),
        "transpose" => transpose::output_to_input(op),
        "reverse" => reverse::output_to_input(op),
        "reshape" => reshape::output_to_input(op),
        "bitcast" => reshape::bitcast_output_to_input(op),
        "slice" => slice::output_to_input(op),
        "dynamic-slice" => dynamic_slice::output_to_input(op),
        "dynamic-update-slice" => dynamic_slice::update_output_to_input(op),
        "gather" => gather::output_to_input(op),
        "scatter" => scatter::output_to_input(op, output_id),
        "concatenate" => concatenate::output_to_input(op),
        "dot" => dot::output_to_input(op),
        "scaled-dot" => dot::scaled_output_to_input(op),
        "pad" => pad::output_to_input(op),
        "reduce" => reduce::output_to_input(op, output_id),
        "reduce-window" => reduce_window::output_to_input(op, output_id),
        "convolution" => convolution::output_to_input(op),
        "sort" => sort::output_to_input(op, output_id),
        "topk" => sort::topk_output_to_input(op, output_id),
        "get-tuple-element" => tuple::gte_output_to_input(op),
        "tuple" | "optimization-barrier" => tuple::tuple_output_to_input(op, output_id),
        "all-gather" => collective::all_gather_output_to_input(op),
        "all-reduce" | "collective-permute" => {
            collective::all_reduce_output_to_input(op, output_id)
        }
        "scan" => scan::output_to_input(op, output_id),
        "fft" => fft::output_to_input(op),
        "select-and-scatter" => select_and_scatter::output_to_input(op),
        "add-dependency" => tuple::add_dependency_output_to_input(op),
        "rng" => elementwise::rng_output_to_input(op),
        "bitcast-convert" => elementwise::bitcast_convert_output_to_input(op),
        "fusion" | "call" => Err(Unknown::not_modelled(format!(
            "{} is composed through its computation",
            op.opcode
        ))),
        other if elementwise::is_elementwise(other) => elementwise::output_to_input(op),
        other => Err(Unknown::no_indexing(format!(
            "no indexing is defined for `{other}`"
        ))),
    }
}

fn input_to_output_op(op: &OpInfo, operand_id: usize) -> OpResult {
    match op.opcode.as_str() {
        "broadcast" => broadcast::input_to_output(op),
        "transpose" => transpose::input_to_output(op),
        "reverse" => reverse::output_to_input(op),
        "reshape" => reshape::input_to_output(op),
        "bitcast" => reshape::bitcast_input_to_output(op),
        "slice" => slice::input_to_output(op),
        "dynamic-slice" => dynamic_slice::input_to_output(op, operand_id),
        "dynamic-update-slice" => dynamic_slice::update_input_to_output(op, operand_id),
        "gather" => gather::input_to_output(op, operand_id),
        "scatter" => scatter::input_to_output(op, operand_id),
        "concatenate" => concatenate::input_to_output(op, operand_id),
        "dot" => dot::input_to_output(op, operand_id),
        "scaled-dot" if operand_id < 2 => dot::input_to_output(op, operand_id),
        "scaled-dot" => Err(Unknown::not_modelled(
            "scaled-dot: input-to-output of the scales is not modelled",
        )),
        "pad" => pad::input_to_output(op, operand_id),
        "reduce" => reduce::input_to_output(op, operand_id),
        "reduce-window" => reduce_window::input_to_output(op, operand_id),
        "convolution" => convolution::input_to_output(op, operand_id),
        "sort" => sort::input_to_output(op, operand_id),
        "topk" => sort::topk_input_to_output(op),
        "get-tuple-element" => tuple::gte_input_to_output(op),
        "tuple" | "optimization-barrier" => tuple::tuple_input_to_output(op, operand_id),
        "all-gather" => collective::all_gather_input_to_output(op),
        "all-reduce" | "collective-permute" => {
            collective::all_reduce_input_to_output(op, operand_id)
        }
        "fft" => fft::input_to_output(op),
        "select-and-scatter" => select_and_scatter::input_to_output(op, operand_id),
        "add-dependency" => tuple::add_dependency_input_to_output(op, operand_id),
        "rng" => elementwise::rng_input_to_output(op),
        "bitcast-convert" => elementwise::bitcast_convert_input_to_output(op),
        "fusion" | "call" => Err(Unknown::not_modelled(format!(
            "{} is composed through its computation",
            op.opcode
        ))),
        other if elementwise::is_elementwise(other) => elementwise::input_to_output(op, operand_id),
        other => Err(Unknown::no_indexing(format!(
            "no input-to-output indexing is defined for `{other}`"
        ))),
    }
}
