//! Recomputation inside loop fusions. A loop fusion computes every fused
//! instruction once per element of the output it is read for: an element that the
//! output reads several times (a reduce broadcast back over its row, an
//! exponential that feeds both the output and a reduction of it) is computed
//! several times. That costs something only for expensive work (XLA's
//! `HloInstruction::IsExpensive`: reductions, dots, convolutions, transcendental
//! elementwise ops), which is what XLA's fusion heuristics refuse to duplicate; a
//! parameter read many times is a cached load, and cheap elementwise work is free.
//!
//! An instruction that reads such work several times per element of its own (a
//! broadcast of a reduce, possibly through bitcasts) is where the repeated reads
//! start; that read is the one to warn about.
//!
//! Other emitters do not recompute this way: a reduction (`kInput`) fusion
//! computes its reductions once, and a Triton (`kCustom`) fusion keeps whole tiles.

use super::fusion::Reached;
use super::graph::Computation;
use super::shape::ArrayShape;
use super::utilization::utilization;

/// Opcodes whose recomputation costs real work (after XLA's `IsExpensive`).
const EXPENSIVE: &[&str] = &[
    "reduce",
    "reduce-window",
    "dot",
    "convolution",
    "fft",
    "scatter",
    "select-and-scatter",
    "sort",
    "custom-call",
    "cholesky",
    "triangular-solve",
    "rng",
    "exponential",
    "exponential-minus-one",
    "log",
    "log-plus-one",
    "logistic",
    "sine",
    "cosine",
    "tan",
    "tanh",
    "sqrt",
    "rsqrt",
    "cbrt",
    "power",
    "atan2",
    "erf",
    "divide",
    "remainder",
];

/// Opcodes that move each element to one place (a bijection of elements, or a
/// tuple element): reading through them reads their operand once per read, so the
/// reads of their result are reads of the work behind them.
const ONE_TO_ONE: &[&str] = &[
    "bitcast",
    "reshape",
    "transpose",
    "copy",
    "reverse",
    "convert",
    "bitcast-convert",
    "get-tuple-element",
];

pub fn is_expensive(opcode: &str) -> bool {
    EXPENSIVE.contains(&opcode)
}

/// True when the emitter for a fusion of this `kind=` recomputes fused work per
/// output element (loop fusions).
pub fn recomputes(fusion_kind: Option<&str>) -> bool {
    fusion_kind.is_none_or(|k| k == "kLoop")
}

/// The instruction that does the work behind `node`: `node` itself, or what a chain
/// of one-to-one moves (bitcast, transpose, ...) reads.
pub fn producer(c: &Computation, mut node: usize) -> usize {
    while let Some(n) = c.nodes.get(node) {
        match n.operands.first() {
            Some(&operand)
                if ONE_TO_ONE.contains(&n.op.opcode.as_str()) && operand < c.nodes.len() =>
            {
                node = operand
            }
            _ => break,
        }
    }
    node
}

/// How many times a loop fusion computes each element of `node` (`shape`), at the
/// most over its outputs (`reached[k]` from output `k`): the reads per element of
/// the composed maps. `None` when nothing reads it or the maps are unknown.
pub fn computations_per_element(
    reached: &[&Reached],
    shape: &ArrayShape,
    budget: u128,
) -> Option<f64> {
    reached
        .iter()
        .filter(|r| r.is_read())
        .filter_map(|r| utilization(&r.to_entry(), shape, budget))
        .map(|u| u.max_multiplicity())
        .reduce(f64::max)
}
