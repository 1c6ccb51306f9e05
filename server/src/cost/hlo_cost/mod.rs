//! What XLA's `GpuHloCostAnalysis` (on top of `HloCostAnalysis`) records for an
//! instruction: flops, bytes written, bytes read per operand, each operand's
//! utilization (how many times the instruction reads each of its elements, on
//! average; more than 1 for a broadcast), the total bytes accessed, the size of
//! the emitted code (`IrSize`) and, for collectives, the bytes moved between
//! devices (`BytesTransferred`). [`analyze`] runs it as XLA's cost model and
//! priority fusion do (`count_multiple_input_accesses` on, the `sm_86` op
//! profile); [`analyze_with`] takes other [`Options`].
//!
//! For a fusion, the utilizations propagate from the root to the parameters
//! (`FusionCalculateUtilizations`): an elementwise op, an elementwise bitcast,
//! a tuple or a get-tuple-element passes its users' utilization through
//! ("elementwise use roots"), any other op multiplies it by its own operand
//! utilization, rounded up to whole elements. A fused instruction's flops count
//! as often as it is used, and its code is emitted once per root it reaches; a
//! parameter is read `size x utilization` bytes (rounded), a constant of more than
//! 8 elements too.
//!
//! One concept per file: this one holds the per-op handlers and the fusion;
//! [`collective`] the collectives, [`custom_call`] cuBLAS, cuDNN and the cost
//! estimates JAX writes on custom calls.

mod collective;
mod custom_call;

pub use custom_call::{cost_estimate, raw_backend_config, CostEstimate};

use crate::model::{
    self, ArrayShape, ComputationRef, InstrId, Instruction, Module, Opcode, PrimitiveType, Shape,
};

use super::profile::Profile;

/// Flops of a fused multiply-add (`kFmaFlops`).
const FMA_FLOPS: i64 = 2;
/// Called computations nested deeper than this count nothing (a recursive
/// module is an error the model reports; the cost must still terminate).
const MAX_NESTING: usize = 16;
/// Fused constants of more elements than this are read from memory
/// (`immediate_constant_max_elements` of the GPU analysis); smaller ones are
/// immediates in the code.
const IMMEDIATE_CONSTANT_MAX_ELEMENTS: i64 = 8;

/// How the analysis counts (`HloCostAnalysis::Options` and the op profile).
#[derive(Clone, Copy, Debug)]
pub struct Options<'p> {
    /// `count_multiple_input_accesses`: an element read several times (by a
    /// broadcast, overlapping windows) counts each time.
    pub count_multiple_input_accesses: bool,
    /// Clock cycles per element of elementwise ops.
    pub profile: Profile<'p>,
}

impl Default for Options<'static> {
    /// As XLA's GPU cost model and priority fusion run it.
    fn default() -> Options<'static> {
        Options {
            count_multiple_input_accesses: true,
            profile: Profile::SM_86,
        }
    }
}

/// What the cost analysis says about one instruction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InstructionCost {
    /// `flop_count`; 0 where XLA records -1 ("unknown", see `unknown_flops`).
    pub flops: i64,
    /// `output_bytes_accessed`.
    pub output_bytes: i64,
    /// `operand_bytes_accessed(k)`.
    pub operand_bytes: Vec<i64>,
    /// `operand_utilization(k)`.
    pub operand_utilization: Vec<f32>,
    /// `bytes_accessed`: what XLA counts as read and written in all, which is not
    /// always the sum of the above (a broadcast's or a reduce-window's repeated
    /// reads are left out, a slice reads only what it keeps, a fusion adds its
    /// large constants); -1 for a custom call XLA cannot see into.
    pub bytes_accessed: i64,
    /// `IrSize`: how many times the instruction's code is emitted (1, or for a
    /// fusion the sum over its instructions).
    pub ir_size: i64,
    /// `BytesTransferred`: bytes a collective moves between devices.
    pub bytes_transferred: i64,
    /// A custom call XLA cannot see into and that carries no flop estimate: XLA
    /// records -1 flops (and -1 bytes; `operand_bytes` and `output_bytes` keep
    /// the sizes here so that a kernel time can still be estimated).
    pub unknown_flops: bool,
    /// For a fusion: the utilization of every fused instruction.
    pub fused: Option<FusedUtilization>,
}

impl InstructionCost {
    /// `flop_count` as XLA reports it (-1 when unknown).
    pub fn xla_flop_count(&self) -> i64 {
        if self.unknown_flops {
            -1
        } else {
            self.flops
        }
    }
}

/// The per-instruction result of `FusionCalculateUtilizations` on one fused
/// computation (indices are the fused computation's instruction indices).
#[derive(Clone, Debug, PartialEq)]
pub struct FusedUtilization {
    pub computation: model::ComputationId,
    /// Times each fused instruction is computed per fusion run, relative to its
    /// own size.
    pub utilization: Vec<f32>,
    /// `IrSize` of each fused instruction: how many times its code is emitted.
    pub ir_size: Vec<i64>,
    /// The non-elementwise users ("roots") each instruction's reads go through.
    roots: Vec<Vec<usize>>,
    root_utilization: Vec<f32>,
}

impl FusedUtilization {
    /// `CommonElementwiseUtilization(a, b)`: the utilization `a` and `b` share
    /// through the same elementwise roots (1 when both feed the root
    /// elementwise, 0 when their paths never meet elementwise).
    pub fn common(&self, a: usize, b: usize) -> f32 {
        let (Some(ra), Some(rb)) = (self.roots.get(a), self.roots.get(b)) else {
            return 0.0;
        };
        ra.iter()
            .filter(|r| rb.contains(r))
            .map(|&r| self.root_utilization[r])
            .sum()
    }
}

/// `HloCostAnalysis::GetShapeSize` with XLA's default shape size: an array's
/// bytes (sub-byte types with an `E(n)` layout packed), a tuple's table of
/// 8-byte pointers, nothing for tokens.
pub fn shape_size(shape: &Shape) -> i64 {
    match shape {
        Shape::Array(a) => array_bytes(a),
        Shape::Tuple(elements) => 8 * elements.len() as i64,
        _ => 0,
    }
}

/// Bytes of one array.
pub fn array_bytes(a: &ArrayShape) -> i64 {
    let n = a.element_count().unwrap_or(0);
    let packed = a.layout.as_ref().and_then(|l| l.element_size_in_bits);
    match packed {
        Some(bits) if bits > 0 && bits < 8 => (n.saturating_mul(bits) + 7) / 8,
        _ => n.saturating_mul(element_bytes(&a.element).unwrap_or(0)),
    }
}

/// `ByteSizeOfPrimitiveType`: whole bytes (a `pred` or `s4` takes one).
pub fn element_bytes(element: &PrimitiveType) -> Option<i64> {
    let bits = i64::from(element.bit_width()?);
    Some(if bits == 0 { 0 } else { (bits + 7) / 8 })
}

/// `ShapeUtil::ElementsIn` of an array (0 for anything else).
fn elements(shape: &Shape) -> i64 {
    shape
        .as_array()
        .and_then(ArrayShape::element_count)
        .unwrap_or(0)
}

/// `ShapeUtil::ElementsInRecursive`: every leaf's elements.
pub fn elements_recursive(shape: &Shape) -> i64 {
    shape
        .leaves()
        .iter()
        .map(|a| a.element_count().unwrap_or(0))
        .fold(0i64, i64::saturating_add)
}

fn operand_shape<'c>(comp: ComputationRef<'c>, instr: &'c Instruction, k: usize) -> &'c Shape {
    static INVALID: Shape = Shape::Invalid;
    comp.model().operand_shape(instr, k).unwrap_or(&INVALID)
}

/// The array shape that counts as an instruction's output for reductions
/// (`shape().IsArray() ? shape() : tuple_shapes(0)`).
fn first_output(shape: &Shape) -> Shape {
    match shape {
        Shape::Tuple(elements) => elements.first().cloned().unwrap_or(Shape::Invalid),
        other => other.clone(),
    }
}

/// Bytes written for one output: every array leaf once.
pub fn output_leaf_bytes(shape: &Shape) -> i64 {
    shape.leaves().iter().map(|a| array_bytes(a)).sum()
}

/// The cost of `instr` in `comp` as XLA's cost model and priority fusion count
/// it ([`Options::default`]).
pub fn analyze(module: &Module, comp: ComputationRef<'_>, instr: &Instruction) -> InstructionCost {
    analyze_with(module, comp, instr, &Options::default())
}

/// The cost of `instr` in `comp` counted with `options`: a fusion is analyzed
/// through its fused computation; anything else by its own handler.
pub fn analyze_with(
    module: &Module,
    comp: ComputationRef<'_>,
    instr: &Instruction,
    options: &Options<'_>,
) -> InstructionCost {
    Analysis { module, options }.instruction(comp, instr, 0)
}

/// One run of the analysis: the module and how it counts.
struct Analysis<'a, 'p> {
    module: &'a Module,
    options: &'a Options<'p>,
}

/// `Preprocess`: what an instruction costs before its handler speaks: it writes
/// every leaf of its output and reads every operand whole, once; its code is
/// emitted once.
fn preprocess(comp: ComputationRef<'_>, instr: &Instruction) -> InstructionCost {
    let n = instr.operands.len();
    let output_bytes = output_leaf_bytes(&instr.shape);
    let operand_bytes: Vec<i64> = (0..n)
        .map(|k| shape_size(operand_shape(comp, instr, k)))
        .collect();
    InstructionCost {
        flops: 0,
        output_bytes,
        bytes_accessed: output_bytes + operand_bytes.iter().sum::<i64>(),
        operand_bytes,
        operand_utilization: vec![1.0; n],
        ir_size: 1,
        bytes_transferred: 0,
        unknown_flops: false,
        fused: None,
    }
}

/// An instruction that moves no data (`parameter`, `constant`,
/// `get-tuple-element`, `bitcast`, ordering tokens).
fn touches_nothing(cost: &mut InstructionCost) {
    cost.output_bytes = 0;
    cost.bytes_accessed = 0;
    cost.operand_bytes.iter_mut().for_each(|b| *b = 0);
}

impl Analysis<'_, '_> {
    fn instruction(
        &self,
        comp: ComputationRef<'_>,
        instr: &Instruction,
        depth: usize,
    ) -> InstructionCost {
        if instr.opcode == Opcode::Fusion && depth < MAX_NESTING {
            if let Some(fused) = self.module.called_computation(instr, "calls") {
                return self.fusion(comp, instr, fused, depth);
            }
        }
        self.own(comp, instr, depth)
    }

    /// Flops of one run of a called computation (`ProcessSubcomputation`): the
    /// sum of its instructions'.
    fn subcomputation_flops(&self, instr: &Instruction, attribute: &str, depth: usize) -> i64 {
        if depth >= MAX_NESTING {
            return 0;
        }
        let Some(called) = self.module.called_computation(instr, attribute) else {
            return 0;
        };
        called
            .model()
            .instructions
            .iter()
            .map(|i| self.instruction(called, i, depth + 1).xla_flop_count())
            .fold(0i64, i64::saturating_add)
    }

    /// The handlers of `HloCostAnalysis` / `GpuHloCostAnalysis` for one
    /// non-fusion instruction.
    fn own(&self, comp: ComputationRef<'_>, instr: &Instruction, depth: usize) -> InstructionCost {
        let mut cost = preprocess(comp, instr);
        let n = instr.operands.len();
        let out_elements = elements(&instr.shape);
        let operand_elements = |k: usize| elements(operand_shape(comp, instr, k));
        let ratio = |a: i64, b: i64| if b == 0 { 0.0 } else { a as f32 / b as f32 };
        let attrs = instr.attrs();
        match instr.opcode {
            Opcode::Parameter
            | Opcode::Constant
            | Opcode::GetTupleElement
            | Opcode::Bitcast
            | Opcode::AfterAll
            | Opcode::AddDependency
            | Opcode::Domain => touches_nothing(&mut cost),
            // A tuple writes its pointer table and reads nothing.
            Opcode::Tuple => {
                cost.operand_bytes.iter_mut().for_each(|b| *b = 0);
                cost.output_bytes = shape_size(&instr.shape);
                cost.bytes_accessed = cost.output_bytes;
            }
            // A slice reads only what it keeps.
            Opcode::Slice if n > 0 => {
                let out = shape_size(&instr.shape);
                cost.output_bytes = out;
                cost.operand_bytes[0] = out;
                cost.bytes_accessed = 2 * out;
                cost.operand_utilization[0] = ratio(out_elements, operand_elements(0));
            }
            Opcode::DynamicSlice if n > 1 => {
                let out = shape_size(&instr.shape);
                let start = shape_size(operand_shape(comp, instr, 1));
                cost.output_bytes = out;
                cost.operand_bytes[0] = out;
                cost.operand_bytes[1] = start;
                cost.bytes_accessed = 2 * out + start;
                cost.operand_utilization[0] = ratio(out_elements, operand_elements(0));
            }
            // Operand 0 is aliased to the output: only the update is written.
            Opcode::DynamicUpdateSlice if n > 2 => {
                let update = shape_size(operand_shape(comp, instr, 1));
                let start = shape_size(operand_shape(comp, instr, 2));
                cost.output_bytes = update;
                cost.operand_bytes[0] = 0;
                cost.operand_bytes[1] = update;
                cost.operand_bytes[2] = start;
                cost.bytes_accessed = 2 * update + start;
                cost.operand_utilization[0] =
                    ratio(out_elements - operand_elements(1), out_elements);
            }
            // Every output element reads one operand element.
            Opcode::Broadcast if n > 0 && self.options.count_multiple_input_accesses => {
                cost.operand_bytes[0] = shape_size(&instr.shape);
                cost.operand_utilization[0] = ratio(out_elements, operand_elements(0));
            }
            // A copy of the output's size from the operand, plus the indices.
            Opcode::Gather if n > 1 => {
                let out = shape_size(&instr.shape);
                let indices = shape_size(operand_shape(comp, instr, 1));
                cost.output_bytes = out;
                cost.operand_bytes[0] = out;
                cost.operand_bytes[1] = indices;
                cost.bytes_accessed = 2 * out + indices;
                cost.operand_utilization[0] = ratio(out_elements, operand_elements(0));
            }
            Opcode::Scatter => self.scatter(comp, instr, depth, &mut cost),
            Opcode::Concatenate => {
                // Compare plus branch per element; a warp straddling two operands
                // runs both branches (XLA charges 400 when the first operand's
                // extent is not a multiple of the warp, to keep concats out of
                // column reductions).
                let dim = attrs
                    .dimensions
                    .as_ref()
                    .and_then(|d| d.first())
                    .copied()
                    .unwrap_or(0);
                let first = operand_shape(comp, instr, 0)
                    .as_array()
                    .and_then(|a| a.dims.get(dim as usize))
                    .copied()
                    .unwrap_or(0);
                let per_element = if dim > 0 && first & 31 != 0 { 400 } else { 6 };
                cost.flops = per_element * elements_recursive(&instr.shape);
            }
            Opcode::Reduce => self.reduce(comp, instr, depth, &mut cost),
            Opcode::ReduceWindow => self.reduce_window(comp, instr, depth, &mut cost),
            Opcode::SelectAndScatter => {
                let source = operand_elements(1);
                let window: i64 = attrs
                    .uncommon()
                    .window
                    .as_ref()
                    .map_or(1, |w| w.iter().map(|d| d.size).product());
                cost.flops =
                    self.subcomputation_flops(instr, "select", depth) * source * (window - 1)
                        + self.subcomputation_flops(instr, "scatter", depth) * source;
            }
            Opcode::Map => {
                cost.flops = self.subcomputation_flops(instr, "to_apply", depth) * out_elements
            }
            Opcode::Dot => {
                let reduction: i64 = attrs.dot.as_ref().map_or(1, |d| {
                    d.lhs_contracting
                        .iter()
                        .map(|&c| {
                            operand_shape(comp, instr, 0)
                                .as_array()
                                .and_then(|a| a.dims.get(c as usize))
                                .copied()
                                .unwrap_or(1)
                        })
                        .product()
                });
                cost.flops = FMA_FLOPS * out_elements * reduction;
            }
            Opcode::Convolution => cost.flops = convolution_flops(comp, instr),
            Opcode::Sort => {
                let e = operand_elements(0);
                cost.flops = e * ceil_log2(e);
            }
            Opcode::Fft => {
                let lengths = attrs.dimensions.clone().unwrap_or_default();
                let logs: i64 = lengths.iter().map(|&l| floor_log2(l)).product();
                cost.flops =
                    FMA_FLOPS * 4 * logs * elements(&first_output(operand_shape(comp, instr, 0)));
            }
            Opcode::CustomCall => self.custom_call(comp, instr, &mut cost),
            // Data movement without arithmetic.
            Opcode::Copy
            | Opcode::Transpose
            | Opcode::Reshape
            | Opcode::Pad
            | Opcode::Reverse
            | Opcode::Iota => {}
            _ if self.collective(comp, instr, &mut cost) => {}
            ref op if op.is_elementwise() => {
                // `GetFlopsForElementwiseOp`: the profile's cycles for the output's
                // element type (a tuple has none: the default).
                let per_element = match instr.shape.as_array() {
                    Some(a) => self
                        .options
                        .profile
                        .flops_per_element(op.name(), &a.element),
                    None => super::profile::DEFAULT_FLOPS_PER_ELEMENT,
                };
                cost.flops = per_element * elements_recursive(&instr.shape);
            }
            _ => {}
        }
        cost
    }

    /// `HandleScatter`: operands, updates and output are each the updates' size
    /// (a read-modify-write of the updated elements), plus the indices.
    fn scatter(
        &self,
        comp: ComputationRef<'_>,
        instr: &Instruction,
        depth: usize,
        cost: &mut InstructionCost,
    ) {
        let n = instr.operands.len();
        let m = n.saturating_sub(1) / 2;
        let mut total = 0;
        for i in 0..m {
            let update = shape_size(operand_shape(comp, instr, m + 1 + i));
            cost.operand_bytes[i] = update;
            cost.operand_bytes[m + 1 + i] = update;
            total += update;
        }
        let indices = shape_size(operand_shape(comp, instr, m));
        cost.output_bytes = total;
        cost.bytes_accessed = 3 * total + indices;
        let updates = if n > m + 1 {
            elements(operand_shape(comp, instr, m + 1))
        } else {
            0
        };
        cost.flops = self.subcomputation_flops(instr, "to_apply", depth) * updates;
    }

    /// `HandleReduce` of the GPU analysis: the reducer once per reduced element;
    /// every output written, every input read once, and each init value read
    /// once per output element.
    fn reduce(
        &self,
        comp: ComputationRef<'_>,
        instr: &Instruction,
        depth: usize,
        cost: &mut InstructionCost,
    ) {
        let n = instr.operands.len();
        let inputs = n / 2;
        let output_elements = elements(&first_output(&instr.shape));
        let reduced = elements(operand_shape(comp, instr, 0)) - output_elements;
        cost.flops = self.subcomputation_flops(instr, "to_apply", depth) * reduced;
        cost.output_bytes = output_leaf_bytes(&instr.shape);
        let mut bytes = cost.output_bytes + cost.operand_bytes[..inputs].iter().sum::<i64>();
        for k in inputs..n {
            let init = output_elements * shape_size(operand_shape(comp, instr, k));
            cost.operand_bytes[k] = init;
            cost.operand_utilization[k] = output_elements as f32;
            bytes += init;
        }
        cost.bytes_accessed = bytes;
    }

    /// `HandleReduceWindow`: `window - 1` applications per output element (a
    /// window that reduces one padded dimension and broadcasts it back counts as
    /// a reduce); counting repeated reads, every output element reads a whole
    /// window (the total bytes accessed do not change).
    fn reduce_window(
        &self,
        comp: ComputationRef<'_>,
        instr: &Instruction,
        depth: usize,
        cost: &mut InstructionCost,
    ) {
        let window = instr.attrs().uncommon().window.clone().unwrap_or_default();
        let mut window_elements: i64 = window.iter().map(|d| d.size).product();
        let input = elements(operand_shape(comp, instr, 0));
        let out_shape = first_output(&instr.shape);
        let output = elements(&out_shape);
        let mut reductions = (window_elements - 1) * output;
        let reducing = window.iter().filter(|d| d.size != 1).count();
        let padded = window
            .iter()
            .filter(|d| d.padding_low != 0 || d.padding_high != 0)
            .count();
        if reducing == 1 && padded == 1 && !instr.shape.is_tuple() {
            let found = window.iter().position(|d| {
                d.size != 1
                    && d.padding_low != 0
                    && d.padding_high != 0
                    && d.padding_low == d.padding_high
                    && d.size == 2 * d.padding_low + 1
            });
            if let Some(dim) = found {
                let extent = out_shape
                    .as_array()
                    .and_then(|a| a.dims.get(dim))
                    .copied()
                    .unwrap_or(0);
                if window[dim].padding_low == extent - 1 && extent > 0 {
                    window_elements = extent;
                    reductions = output / extent + (extent - 1);
                }
            }
        }
        if self.options.count_multiple_input_accesses && !cost.operand_bytes.is_empty() {
            if input > 0 {
                cost.operand_utilization[0] = (output * window_elements) as f32 / input as f32;
            }
            let element = operand_shape(comp, instr, 0)
                .as_array()
                .and_then(|a| element_bytes(&a.element))
                .unwrap_or(0);
            cost.operand_bytes[0] = output * window_elements * element;
        }
        cost.flops = self.subcomputation_flops(instr, "to_apply", depth) * reductions;
    }
}

fn ceil_log2(n: i64) -> i64 {
    if n <= 1 {
        0
    } else {
        64 - i64::from((n - 1).leading_zeros())
    }
}

fn floor_log2(n: i64) -> i64 {
    if n <= 1 {
        0
    } else {
        63 - i64::from(n.leading_zeros())
    }
}

/// `GetConvolutionFlops`: one FMA per input feature (per group), output feature,
/// batch (per group) and valid kernel position along each spatial dimension.
fn convolution_flops(comp: ComputationRef<'_>, instr: &Instruction) -> i64 {
    let attrs = instr.attrs();
    let (Some(labels), Some(lhs), Some(rhs), Some(out)) = (
        attrs.uncommon().dim_labels.as_ref(),
        operand_shape(comp, instr, 0).as_array(),
        operand_shape(comp, instr, 1).as_array(),
        first_output(&instr.shape).as_array().cloned(),
    ) else {
        return 0;
    };
    let dim = |a: &ArrayShape, d: i64| a.dims.get(d as usize).copied().unwrap_or(1);
    let input_feature = dim(lhs, labels.input_feature);
    let output_feature = dim(&out, labels.output_feature);
    let batch = dim(lhs, labels.input_batch);
    let window = attrs.uncommon().window.clone().unwrap_or_default();
    let mut positions: i64 = 1;
    for (s, w) in window.iter().enumerate() {
        let kernel = labels.kernel_spatial.get(s).map_or(1, |&d| dim(rhs, d));
        let output = labels.output_spatial.get(s).map_or(1, |&d| dim(&out, d));
        let input = labels.input_spatial.get(s).map_or(1, |&d| dim(lhs, d));
        let base = w.base_dilation.max(1);
        let mut count = 0i64;
        if input == output
            && kernel == output
            && input == base
            && w.window_dilation == 1
            && (input - 1).max(1) == w.stride
            && w.padding_low == 0
            && w.padding_high == 0
        {
            count = input;
        } else if input == 1
            && kernel == output
            && w.window_dilation == 1
            && base == 1
            && w.stride == 1
            && w.padding_high == output - 1
            && w.padding_low == output - 1
        {
            count = output;
        } else if kernel.saturating_mul(output) <= 100_000_000 {
            for k in 0..kernel {
                for o in 0..output {
                    let undilated = o * w.stride - w.padding_low + k * w.window_dilation;
                    let index = if base > 1 {
                        undilated / base
                    } else {
                        undilated
                    };
                    if undilated != index * base || index < 0 || index >= input {
                        continue;
                    }
                    count += 1;
                }
            }
        } else {
            count = output;
        }
        positions = positions.saturating_mul(count);
    }
    let fgc = i64::from(attrs.uncommon().feature_group_count.unwrap_or(1).max(1));
    let bgc = i64::from(attrs.uncommon().batch_group_count.unwrap_or(1).max(1));
    (input_feature / fgc)
        .saturating_mul(output_feature)
        .saturating_mul(batch / bgc)
        .saturating_mul(positions)
        .saturating_mul(FMA_FLOPS)
}

/// Instructions of `comp` so that every user comes before its operands (the
/// reverse of a post order over operands).
fn users_first(comp: &model::Computation) -> Vec<usize> {
    let n = comp.instructions.len();
    let mut state = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some((node, next)) = stack.pop() {
            let operands = &comp.instructions[node].operands;
            if next < operands.len() {
                stack.push((node, next + 1));
                if let Some(t) = operands[next].target.map(InstrId::index) {
                    if t < n && state[t] == 0 {
                        state[t] = 1;
                        stack.push((t, 0));
                    }
                }
            } else {
                state[node] = 2;
                order.push(node);
            }
        }
    }
    order.reverse();
    order
}

/// Whether a fused instruction passes its users' utilization through to its
/// operands: elementwise ops, tuples, get-tuple-elements, and bitcasts that keep
/// the shape (up to the element type).
fn passes_through(comp: ComputationRef<'_>, x: &Instruction) -> bool {
    match x.opcode {
        Opcode::Tuple | Opcode::GetTupleElement => true,
        Opcode::Bitcast => {
            let (Some(out), Some(input)) =
                (x.shape.as_array(), operand_shape(comp, x, 0).as_array())
            else {
                return false;
            };
            out.dims == input.dims && out.minor_to_major() == input.minor_to_major()
        }
        ref op => op.is_elementwise(),
    }
}

impl Analysis<'_, '_> {
    /// `HandleFusion` + `FusionCalculateUtilizations` (GPU) +
    /// `FusionCountConstantsMemoryAccess` + `FusionProcessOperandBytesRead`.
    fn fusion(
        &self,
        comp: ComputationRef<'_>,
        instr: &Instruction,
        fused: ComputationRef<'_>,
        depth: usize,
    ) -> InstructionCost {
        if let Some(cost) = self.custom_fusion(comp, instr, fused, depth) {
            return cost;
        }
        let body = fused.model();
        let n = body.instructions.len();
        let mut own_costs: Vec<InstructionCost> = body
            .instructions
            .iter()
            .map(|i| self.instruction(fused, i, depth + 1))
            .collect();
        let root = body.root.map(InstrId::index).filter(|&r| r < n);

        // Outputs: a dynamic-update-slice root writes only its update, and the
        // buffer it updates in place is not read.
        let is_dus = |i: usize| body.instructions[i].opcode == Opcode::DynamicUpdateSlice;
        let mut output_bytes = 0;
        match root {
            Some(r) if body.instructions[r].opcode == Opcode::Tuple => {
                let root_instr = &body.instructions[r];
                for (k, operand) in root_instr.operands.iter().enumerate() {
                    let leaf_size = shape_size(operand_shape(fused, root_instr, k));
                    match operand.target.map(InstrId::index) {
                        Some(t) if t < n && is_dus(t) => {
                            output_bytes +=
                                shape_size(operand_shape(fused, &body.instructions[t], 1));
                            if let Some(u) = own_costs[t].operand_utilization.first_mut() {
                                *u = 0.0;
                            }
                        }
                        _ => {
                            output_bytes += match instr.shape.tuple_element(k) {
                                Some(s) => output_leaf_bytes(s),
                                None => leaf_size,
                            }
                        }
                    }
                }
            }
            Some(r) if is_dus(r) => {
                output_bytes = shape_size(operand_shape(fused, &body.instructions[r], 1));
                if let Some(u) = own_costs[r].operand_utilization.first_mut() {
                    *u = 0.0;
                }
            }
            _ => output_bytes = output_leaf_bytes(&instr.shape),
        }

        // Utilization and emitted code from the root down.
        let mut utilization = vec![0.0f32; n];
        let mut ir_size = vec![0i64; n];
        let mut roots: Vec<Vec<usize>> = vec![vec![]; n];
        let mut root_utilization = vec![0.0f32; n];
        let mut root_ir_size = vec![0i64; n];
        if let Some(r) = root {
            root_utilization[r] = 1.0;
            root_ir_size[r] = 1;
            roots[r].push(r);
        }
        let mut flops = 0.0f32;
        let mut emitted = 0i64;
        for i in users_first(body) {
            let u: f32 = roots[i].iter().map(|&r| root_utilization[r]).sum();
            let times: i64 = roots[i].iter().map(|&r| root_ir_size[r]).sum();
            utilization[i] = u;
            ir_size[i] = times;
            flops += u * own_costs[i].xla_flop_count() as f32;
            emitted += times;
            let x = &body.instructions[i];
            let through = passes_through(fused, x);
            for (k, operand) in x.operands.iter().enumerate() {
                let Some(o) = operand.target.map(InstrId::index).filter(|&o| o < n) else {
                    continue;
                };
                if through {
                    let inherited = roots[i].clone();
                    for r in inherited {
                        if !roots[o].contains(&r) {
                            roots[o].push(r);
                        }
                    }
                } else {
                    if !roots[o].contains(&o) {
                        roots[o].push(o);
                    }
                    let mut operand_u = u * own_costs[i]
                        .operand_utilization
                        .get(k)
                        .copied()
                        .unwrap_or(1.0);
                    let count = elements_recursive(&body.instructions[o].shape);
                    operand_u = if count == 0 {
                        0.0
                    } else {
                        (operand_u * count as f32).ceil() / count as f32
                    };
                    root_utilization[o] += operand_u;
                    root_ir_size[o] += times;
                }
            }
        }

        let clamp = |u: f32| {
            if self.options.count_multiple_input_accesses {
                u
            } else {
                u.min(1.0)
            }
        };
        // Large constants are read from memory, as often as they are used.
        let mut bytes_accessed = output_bytes as f32;
        for (i, x) in body.instructions.iter().enumerate() {
            if x.opcode == Opcode::Constant && elements(&x.shape) > IMMEDIATE_CONSTANT_MAX_ELEMENTS
            {
                bytes_accessed += shape_size(&x.shape) as f32 * clamp(utilization[i]);
            }
        }
        let operands = instr.operands.len();
        let mut operand_bytes = vec![0; operands];
        let mut operand_utilization = vec![0.0; operands];
        for k in 0..operands {
            let Some(p) = fused.model().parameter(k) else {
                continue;
            };
            let u = utilization[p.id.index()];
            operand_bytes[k] = (shape_size(&p.shape) as f32 * clamp(u)).round() as i64;
            operand_utilization[k] = u;
            bytes_accessed += operand_bytes[k] as f32;
        }
        own_costs.clear();
        InstructionCost {
            flops: flops as i64,
            output_bytes,
            operand_bytes,
            operand_utilization,
            bytes_accessed: bytes_accessed as i64,
            ir_size: emitted,
            bytes_transferred: 0,
            unknown_flops: false,
            fused: Some(FusedUtilization {
                computation: fused.id,
                utilization,
                ir_size,
                roots,
                root_utilization,
            }),
        }
    }

    /// `HandleFusion` of a custom fusion (`kind=kCustom`) holding a gather or a
    /// scatter: XLA costs the fusion as that one instruction.
    fn custom_fusion(
        &self,
        comp: ComputationRef<'_>,
        instr: &Instruction,
        fused: ComputationRef<'_>,
        depth: usize,
    ) -> Option<InstructionCost> {
        if instr.attrs().fusion_kind.as_deref() != Some("kCustom") {
            return None;
        }
        let hero = fused
            .model()
            .instructions
            .iter()
            .find(|i| matches!(i.opcode, Opcode::Gather | Opcode::Scatter))?;
        let inner = self.own(fused, hero, depth + 1);
        let mut cost = preprocess(comp, instr);
        for (k, (&bytes, &u)) in inner
            .operand_bytes
            .iter()
            .zip(&inner.operand_utilization)
            .enumerate()
        {
            if k < cost.operand_bytes.len() {
                cost.operand_bytes[k] = bytes;
                cost.operand_utilization[k] = u;
            }
        }
        cost.output_bytes = inner.output_bytes;
        cost.bytes_accessed = inner.bytes_accessed;
        cost.flops = inner.flops;
        Some(cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost_of(text: &str, name: &str) -> InstructionCost {
        let file = model::parse_hlo(text);
        let module = &file.modules[0];
        let entry = module.entry_computation().unwrap();
        let instr = entry.model().instruction_by_name(name).unwrap();
        analyze(module, entry, instr)
    }

    #[test]
    fn broadcast_in_a_fusion_reads_its_operand_many_times() {
        let c = cost_of(
            "f {\n p0 = f32[10000] parameter(0)\n bc0 = f32[10000,1000] broadcast(p0), dimensions={0}\n b0 = f32[10000000] bitcast(bc0)\n p1 = f32[10000000] parameter(1)\n ROOT a0 = f32[10000000] add(b0, p1)\n}\nENTRY e {\n p0 = f32[10000] parameter(0)\n p1 = f32[10000000] parameter(1)\n ROOT r.1 = f32[10000000] fusion(p0, p1), kind=kLoop, calls=f\n}\n",
            "r.1",
        );
        assert_eq!(c.operand_utilization, vec![1000.0, 1.0]);
        assert_eq!(c.operand_bytes, vec![40_000_000, 40_000_000]);
        assert_eq!(c.output_bytes, 40_000_000);
        // One f32 add (3 flops) per output element.
        assert_eq!(c.flops, 30_000_000);
        let fused = c.fused.unwrap();
        // p0 reaches the root through a broadcast: no common elementwise path.
        assert_eq!(fused.common(0, 4), 0.0);
        assert_eq!(fused.common(3, 4), 1.0);
    }

    #[test]
    fn reduce_dot_and_dynamic_update_slice() {
        let c = cost_of(
            "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\nENTRY e {\n p = f32[8,16] parameter(0)\n c = f32[] constant(0)\n ROOT r = f32[8] reduce(p, c), dimensions={1}, to_apply=add\n}\n",
            "r",
        );
        assert_eq!(c.flops, 3 * (128 - 8));
        let c = cost_of(
            "ENTRY e {\n a = f32[4,8] parameter(0)\n b = f32[8,5] parameter(1)\n ROOT d = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
            "d",
        );
        assert_eq!(c.flops, 2 * 20 * 8);
        let c = cost_of(
            "f {\n p0 = f32[1024] parameter(0)\n p1 = f32[16] parameter(1)\n p2 = s32[] parameter(2)\n ROOT d = f32[1024] dynamic-update-slice(p0, p1, p2)\n}\nENTRY e {\n p0 = f32[1024] parameter(0)\n p1 = f32[16] parameter(1)\n p2 = s32[] parameter(2)\n ROOT r = f32[1024] fusion(p0, p1, p2), kind=kLoop, calls=f\n}\n",
            "r",
        );
        assert_eq!(c.output_bytes, 64);
        assert_eq!(c.operand_bytes, vec![0, 64, 4]);
    }

    #[test]
    fn concatenate_charges_divergent_warps() {
        let c = cost_of(
            "ENTRY e {\n a = f32[4,20] parameter(0)\n b = f32[4,12] parameter(1)\n ROOT c = f32[4,32] concatenate(a, b), dimensions={1}\n}\n",
            "c",
        );
        assert_eq!(c.flops, 400 * 128);
        // XLA changes no utilization: each operand is read once.
        assert_eq!(c.operand_utilization, vec![1.0, 1.0]);
        // The first operand's extent decides: 32 along the dimension is whole warps.
        let c = cost_of(
            "ENTRY e {\n a = f32[4,32] parameter(0)\n b = f32[4,12] parameter(1)\n ROOT c = f32[4,44] concatenate(a, b), dimensions={1}\n}\n",
            "c",
        );
        assert_eq!(c.flops, 6 * 176);
    }

    #[test]
    fn fused_constants_and_emitted_code_are_counted() {
        // A 1000-element constant is read from memory; the fusion emits each of its
        // three instructions once.
        let c = cost_of(
            "f {\n p0 = s8[1000] parameter(0)\n c0 = s8[1000] constant({...})\n ROOT a0 = s8[1000] add(p0, c0)\n}\nENTRY e {\n p0 = s8[1000] parameter(0)\n ROOT r = s8[1000] fusion(p0), kind=kInput, calls=f\n}\n",
            "r",
        );
        assert_eq!(
            (c.output_bytes, c.operand_bytes.clone()),
            (1000, vec![1000])
        );
        assert_eq!(c.bytes_accessed, 3000);
        assert_eq!(c.ir_size, 3);
    }

    #[test]
    fn an_opaque_custom_call_keeps_its_sizes_and_says_xla_does_not_know() {
        let c = cost_of(
            "ENTRY e {\n a = f32[100] parameter(0)\n ROOT c = f32[100] custom-call(a), custom_call_target=\"my_kernel\"\n}\n",
            "c",
        );
        assert_eq!((c.xla_flop_count(), c.bytes_accessed), (-1, -1));
        assert_eq!(
            (c.flops, c.output_bytes, c.operand_bytes),
            (0, 400, vec![400])
        );
    }
}
