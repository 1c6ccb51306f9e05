//! What XLA's `GpuHloCostAnalysis` (on top of `HloCostAnalysis`) records for an
//! instruction, with `count_multiple_input_accesses` on (as XLA's cost model and
//! priority fusion run it): flops, bytes written, bytes read per operand, and
//! each operand's utilization (how many times the instruction reads each of its
//! elements, on average; more than 1 for a broadcast).
//!
//! For a fusion, the utilizations propagate from the root to the parameters
//! (`FusionCalculateUtilizations`): an elementwise op, tuple or
//! get-tuple-element passes its users' utilization through ("elementwise use
//! roots"), any other op multiplies it by its own operand utilization, rounded up
//! to whole elements. A fused instruction's flops count as often as it is used,
//! and a parameter is read `size x utilization` bytes.

use crate::model::{
    self, ArrayShape, ComputationRef, InstrId, Instruction, Module, Opcode, PrimitiveType, Shape,
};

use super::profile;

/// Flops of a fused multiply-add (`kFmaFlops`).
const FMA_FLOPS: i64 = 2;
/// Called computations nested deeper than this count nothing (a recursive
/// module is an error the model reports; the cost must still terminate).
const MAX_NESTING: usize = 16;

/// What the cost analysis says about one instruction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InstructionCost {
    pub flops: i64,
    /// `output_bytes_accessed`.
    pub output_bytes: i64,
    /// `operand_bytes_accessed(k)`.
    pub operand_bytes: Vec<i64>,
    /// `operand_utilization(k)`.
    pub operand_utilization: Vec<f32>,
    /// For a fusion: the utilization of every fused instruction.
    pub fused: Option<FusedUtilization>,
}

/// The per-instruction result of `FusionCalculateUtilizations` on one fused
/// computation (indices are the fused computation's instruction indices).
#[derive(Clone, Debug, PartialEq)]
pub struct FusedUtilization {
    pub computation: model::ComputationId,
    /// Times each fused instruction is computed per fusion run, relative to its
    /// own size.
    pub utilization: Vec<f32>,
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

/// The cost of `instr` in `comp`: a fusion is analyzed through its fused
/// computation; anything else by its own handler.
pub fn analyze(module: &Module, comp: ComputationRef<'_>, instr: &Instruction) -> InstructionCost {
    analyze_nested(module, comp, instr, 0)
}

fn analyze_nested(
    module: &Module,
    comp: ComputationRef<'_>,
    instr: &Instruction,
    depth: usize,
) -> InstructionCost {
    if instr.opcode == Opcode::Fusion && depth < MAX_NESTING {
        if let Some(fused) = module.called_computation(instr, "calls") {
            return fusion(module, instr, fused, depth);
        }
    }
    own(module, comp, instr, depth)
}

/// Flops of one run of a called computation (`ProcessSubcomputation`): the sum
/// of its instructions'.
fn subcomputation_flops(
    module: &Module,
    instr: &Instruction,
    attribute: &str,
    depth: usize,
) -> i64 {
    if depth >= MAX_NESTING {
        return 0;
    }
    let Some(called) = module.called_computation(instr, attribute) else {
        return 0;
    };
    called
        .model()
        .instructions
        .iter()
        .map(|i| analyze_nested(module, called, i, depth + 1).flops)
        .fold(0i64, i64::saturating_add)
}

/// The handlers of `HloCostAnalysis` / `GpuHloCostAnalysis` for one non-fusion
/// instruction.
fn own(
    module: &Module,
    comp: ComputationRef<'_>,
    instr: &Instruction,
    depth: usize,
) -> InstructionCost {
    let n = instr.operands.len();
    let mut cost = InstructionCost {
        flops: 0,
        output_bytes: shape_size(&instr.shape),
        operand_bytes: (0..n)
            .map(|k| shape_size(operand_shape(comp, instr, k)))
            .collect(),
        operand_utilization: vec![1.0; n],
        fused: None,
    };
    let out_elements = elements(&instr.shape);
    let operand_elements = |k: usize| elements(operand_shape(comp, instr, k));
    let ratio = |a: i64, b: i64| if b == 0 { 0.0 } else { a as f32 / b as f32 };
    let attrs = instr.attrs();
    let op = &instr.opcode;
    match op.name() {
        // No computation, no memory traffic.
        "parameter" | "constant" | "get-tuple-element" | "bitcast" | "after-all"
        | "add-dependency" | "domain" => {
            cost.output_bytes = 0;
            cost.operand_bytes.iter_mut().for_each(|b| *b = 0);
        }
        // A tuple writes its pointer table and reads nothing.
        "tuple" => cost.operand_bytes.iter_mut().for_each(|b| *b = 0),
        "slice" => {
            let out = shape_size(&instr.shape);
            if let Some(b) = cost.operand_bytes.first_mut() {
                *b = out;
            }
            if n > 0 {
                cost.operand_utilization[0] = ratio(out_elements, operand_elements(0));
            }
        }
        "dynamic-slice" => {
            let out = shape_size(&instr.shape);
            if let Some(b) = cost.operand_bytes.first_mut() {
                *b = out;
            }
            if n > 0 {
                cost.operand_utilization[0] = ratio(out_elements, operand_elements(0));
            }
        }
        "dynamic-update-slice" => {
            // Operand 0 is aliased to the output: only the update is written.
            let update = shape_size(operand_shape(comp, instr, 1));
            cost.output_bytes = update;
            if n > 0 {
                cost.operand_bytes[0] = 0;
                cost.operand_utilization[0] =
                    ratio(out_elements - operand_elements(1), out_elements);
            }
        }
        // count_multiple_input_accesses: every output element reads one.
        "broadcast" if n > 0 => {
            cost.operand_bytes[0] = shape_size(&instr.shape);
            cost.operand_utilization[0] = ratio(out_elements, operand_elements(0));
        }
        "gather" => {
            let out = shape_size(&instr.shape);
            cost.output_bytes = out;
            if n > 0 {
                cost.operand_bytes[0] = out;
                cost.operand_utilization[0] = ratio(out_elements, operand_elements(0));
            }
        }
        "scatter" => {
            // Operands, indices, updates: updates are read and written three times.
            let m = n.saturating_sub(1) / 2;
            let mut total = 0;
            for i in 0..m {
                let update = shape_size(operand_shape(comp, instr, m + 1 + i));
                cost.operand_bytes[i] = update;
                cost.operand_bytes[m + 1 + i] = update;
                total += update;
            }
            cost.output_bytes = total;
            let updates = if n > m + 1 {
                operand_elements(m + 1)
            } else {
                0
            };
            cost.flops = subcomputation_flops(module, instr, "to_apply", depth) * updates;
        }
        "transpose" | "reshape" | "copy" | "pad" | "reverse" | "iota" => {}
        "concatenate" => {
            // Compare plus branch per element; a warp straddling two operands
            // runs both branches (XLA charges 400 when an operand's extent is not
            // a multiple of the warp, to keep concats out of reductions).
            cost.flops = 6 * out_elements;
            let dim = attrs
                .dimensions
                .as_ref()
                .and_then(|d| d.first())
                .copied()
                .unwrap_or(0);
            if dim != 0 {
                for k in 0..n {
                    let size = operand_shape(comp, instr, k)
                        .as_array()
                        .and_then(|a| a.dims.get(dim as usize))
                        .copied()
                        .unwrap_or(0);
                    let rounded = (size + 31) / 32 * 32;
                    if size > 0 {
                        cost.operand_utilization[k] = rounded as f32 / size as f32;
                    }
                    if size < rounded {
                        cost.flops = 400 * out_elements;
                    }
                }
            }
        }
        "reduce" => {
            let reduced = operand_elements(0) - elements(&first_output(&instr.shape));
            cost.flops = subcomputation_flops(module, instr, "to_apply", depth) * reduced;
        }
        "reduce-window" => {
            cost.flops = reduce_window_flops(module, comp, instr, depth, &mut cost);
        }
        "select-and-scatter" => {
            let source = operand_elements(1);
            let window: i64 = attrs
                .window
                .as_ref()
                .map_or(1, |w| w.iter().map(|d| d.size).product());
            cost.flops =
                subcomputation_flops(module, instr, "select", depth) * source * (window - 1)
                    + subcomputation_flops(module, instr, "scatter", depth) * source;
        }
        "map" => cost.flops = subcomputation_flops(module, instr, "to_apply", depth) * out_elements,
        "dot" => {
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
        "convolution" => cost.flops = convolution_flops(comp, instr),
        "sort" => {
            let e = operand_elements(0);
            cost.flops = e * ceil_log2(e);
        }
        "fft" => {
            let lengths = attrs.dimensions.clone().unwrap_or_default();
            let logs: i64 = lengths.iter().map(|&l| floor_log2(l)).product();
            cost.flops =
                FMA_FLOPS * 4 * logs * elements(&first_output(operand_shape(comp, instr, 0)));
        }
        "custom-call" => {}
        _ if op.is_elementwise() => {
            let element = instr
                .shape
                .leaves()
                .first()
                .map(|a| a.element.clone())
                .unwrap_or(PrimitiveType::from_name("f32"));
            cost.flops =
                profile::flops_per_element(op.name(), &element) * elements_recursive(&instr.shape);
        }
        _ => {}
    }
    cost
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

/// `HandleReduceWindow`: `window - 1` applications per output element (a window
/// that reduces one padded dimension and broadcasts it back counts as a reduce),
/// and every output element reads a whole window.
fn reduce_window_flops(
    module: &Module,
    comp: ComputationRef<'_>,
    instr: &Instruction,
    depth: usize,
    cost: &mut InstructionCost,
) -> i64 {
    let window = instr.attrs().window.clone().unwrap_or_default();
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
    if input > 0 {
        cost.operand_utilization[0] = (output * window_elements) as f32 / input as f32;
    }
    let element = operand_shape(comp, instr, 0)
        .as_array()
        .and_then(|a| element_bytes(&a.element))
        .unwrap_or(0);
    cost.operand_bytes[0] = output * window_elements * element;
    subcomputation_flops(module, instr, "to_apply", depth) * reductions
}

/// `GetConvolutionFlops`: one FMA per input feature (per group), output feature,
/// batch (per group) and valid kernel position along each spatial dimension.
fn convolution_flops(comp: ComputationRef<'_>, instr: &Instruction) -> i64 {
    let attrs = instr.attrs();
    let (Some(labels), Some(lhs), Some(rhs), Some(out)) = (
        attrs.dim_labels.as_ref(),
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
    let window = attrs.window.clone().unwrap_or_default();
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
    let fgc = i64::from(attrs.feature_group_count.unwrap_or(1).max(1));
    let bgc = i64::from(attrs.batch_group_count.unwrap_or(1).max(1));
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

/// `HandleFusion` + `FusionCalculateUtilizations`.
fn fusion(
    module: &Module,
    instr: &Instruction,
    fused: ComputationRef<'_>,
    depth: usize,
) -> InstructionCost {
    let body = fused.model();
    let n = body.instructions.len();
    let mut own_costs: Vec<InstructionCost> = body
        .instructions
        .iter()
        .map(|i| analyze_nested(module, fused, i, depth + 1))
        .collect();
    let root = body.root.map(InstrId::index).filter(|&r| r < n);

    // Outputs: a dynamic-update-slice root writes only its update, and the
    // buffer it updates in place is not read.
    let is_dus = |i: usize| body.instructions[i].opcode.name() == "dynamic-update-slice";
    let mut output_bytes = 0;
    match root {
        Some(r) if body.instructions[r].opcode.name() == "tuple" => {
            let root_instr = &body.instructions[r];
            for (k, operand) in root_instr.operands.iter().enumerate() {
                let leaf_size = shape_size(operand_shape(fused, root_instr, k));
                match operand.target.map(InstrId::index) {
                    Some(t) if t < n && is_dus(t) => {
                        output_bytes += shape_size(operand_shape(fused, &body.instructions[t], 1));
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

    // Utilization from the root down.
    let mut utilization = vec![0.0f32; n];
    let mut roots: Vec<Vec<usize>> = vec![vec![]; n];
    let mut root_utilization = vec![0.0f32; n];
    if let Some(r) = root {
        root_utilization[r] = 1.0;
        roots[r].push(r);
    }
    let mut flops = 0.0f32;
    for i in users_first(body) {
        let u: f32 = roots[i].iter().map(|&r| root_utilization[r]).sum();
        utilization[i] = u;
        flops += u * own_costs[i].flops as f32;
        let x = &body.instructions[i];
        let passes_through =
            x.opcode.is_elementwise() || matches!(x.opcode.name(), "tuple" | "get-tuple-element");
        for (k, operand) in x.operands.iter().enumerate() {
            let Some(o) = operand.target.map(InstrId::index).filter(|&o| o < n) else {
                continue;
            };
            if passes_through {
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
            }
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
        operand_bytes[k] = (shape_size(&p.shape) as f32 * u) as i64;
        operand_utilization[k] = u;
    }
    own_costs.clear();
    InstructionCost {
        flops: flops as i64,
        output_bytes,
        operand_bytes,
        operand_utilization,
        fused: Some(FusedUtilization {
            computation: fused.id,
            utilization,
            roots,
            root_utilization,
        }),
    }
}

/// Bytes a fusion writes for one output: every array leaf once.
pub fn output_leaf_bytes(shape: &Shape) -> i64 {
    shape.leaves().iter().map(|a| array_bytes(a)).sum()
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
        assert_eq!(c.operand_utilization, vec![32.0 / 20.0, 32.0 / 12.0]);
    }
}
