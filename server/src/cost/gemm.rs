//! GEMMs in the per-kernel estimate: a plain `dot`, a cuBLAS call
//! (`__cublas$gemm`, `__cublas$lt$matmul`, its `$f8` and `$mx` forms), and the
//! GEMM fusions (`kind=kCustom` with `__triton_gemm`,
//! `__triton_nested_gemm_fusion` or `__cudnn$fusion`) run on the tensor cores.
//!
//! Why: XLA's `GpuPerformanceModel::EstimateRunTimeForInstruction` counts every
//! flop at the CUDA cores' rate (`ComputeTime`), which XLA never meets for a
//! GEMM (its passes turn a dot into a cuBLAS call or a Triton fusion first, and
//! those have models of their own): a bf16 GEMM on an H100 came out 15 times
//! too slow. What each kind gets, following what XLA models it with:
//! * a Triton fusion with a `block_level_fusion_config` (nested GEMM): XLA's
//!   indexing model with the dot's GEMM model (`EstimateRunTimeForTriton` →
//!   `GetDotEstimates`, [`super::tiled::estimate_tiled`]), as XLA's cost-model
//!   statistics pass and priority fusion do;
//! * a `__triton_gemm` with a `triton_gemm_config`: XLA's GEMM model
//!   (`EstimateRunTimeForDotOpWithBlockParameters`, [`super::dot::estimate`]) at
//!   its `block_m` x `block_n` tile, `block_k` step and `num_stages`;
//! * a plain dot, a cuBLAS call, a cuDNN fusion, and any GEMM the tiled models do
//!   not cover (more than one contracting or free dimension): the roofline
//!   `GpuPerformanceModel` builds, with the compute term at the matrix units'
//!   peak for the type XLA picks the rate by (operand 0's element type,
//!   `CalculatePeakMatrixOpsPerNs`) and the memory term as for any kernel
//!   (`CombineComputeAndMemoryAccessTime`).
//!
//! [`Gemm::of`] recognizes the kinds and their dot dimensions; XLA's
//! `MatmulInterpolator` ([`super::matmul`]) reads the same description.

use super::compute::combine;
use super::duration::Duration;
use super::kernel::{Bound, KernelCost, Model};
use super::launch::LaunchDims;
use crate::device::Unit;
use crate::model::{ArrayShape, ComputationRef, DotDims, Instruction, Module, Opcode, Shape};

/// What launches the GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GemmKind {
    /// A `dot` instruction of its own.
    Dot,
    /// `__cublas$gemm`: the legacy cuBLAS call.
    CublasLegacy,
    /// `__cublas$lt$matmul` and its `$f8`, `$mx` and grouped forms (`IsCublasLtGemm`).
    CublasLt,
    /// A `__triton_gemm` fusion (tiles in `triton_gemm_config`).
    TritonGemm,
    /// A `__triton_nested_gemm_fusion` (tiles in `block_level_fusion_config`).
    TritonNestedGemm,
    /// A `__cudnn$fusion` around a dot.
    Cudnn,
}

/// A GEMM: its kind and the dot it computes (operand and output shapes, the
/// dimension numbers), wherever they are written.
#[derive(Clone, Debug, PartialEq)]
pub struct Gemm {
    pub kind: GemmKind,
    pub dims: DotDims,
    pub lhs: ArrayShape,
    pub rhs: ArrayShape,
    pub out: ArrayShape,
}

fn array(shape: Option<&Shape>) -> Option<ArrayShape> {
    match shape? {
        Shape::Tuple(elements) => array(elements.first()),
        s => s.as_array().cloned(),
    }
}

/// A backend-config dimension list: numbers or numbers as strings.
fn dims_of(value: Option<&serde_json::Value>) -> Vec<i64> {
    value
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_i64().or_else(|| x.as_str()?.parse().ok()))
                .collect()
        })
        .unwrap_or_default()
}

/// `gemm_backend_config.dot_dimension_numbers` of a cuBLAS call.
fn cublas_dims(instr: &Instruction) -> Option<DotDims> {
    let config = instr.attrs().backend_config()?;
    let d = config.pointer("/gemm_backend_config/dot_dimension_numbers")?;
    Some(DotDims {
        lhs_batch: dims_of(d.get("lhs_batch_dimensions")),
        rhs_batch: dims_of(d.get("rhs_batch_dimensions")),
        lhs_contracting: dims_of(d.get("lhs_contracting_dimensions")),
        rhs_contracting: dims_of(d.get("rhs_contracting_dimensions")),
    })
}

/// `fusion_backend_config.kind` of a fusion.
pub(super) fn fusion_backend_kind(instr: &Instruction) -> Option<String> {
    let config = instr.attrs().backend_config()?;
    config
        .pointer("/fusion_backend_config/kind")?
        .as_str()
        .map(str::to_string)
}

impl Gemm {
    /// The GEMM `instr` of `comp` launches, if it is one: a dot, a cuBLAS call,
    /// or a GEMM fusion with exactly one dot (`IsTritonGemm`).
    pub fn of(module: &Module, comp: ComputationRef<'_>, instr: &Instruction) -> Option<Gemm> {
        match instr.opcode {
            Opcode::Dot => Gemm::dot(GemmKind::Dot, comp, instr),
            Opcode::CustomCall => {
                let kind = match instr.custom_call_target()? {
                    "__cublas$gemm" => GemmKind::CublasLegacy,
                    t if t.starts_with("__cublas$lt$matmul") => GemmKind::CublasLt,
                    _ => return None,
                };
                let body = comp.model();
                Some(Gemm {
                    kind,
                    dims: cublas_dims(instr)?,
                    lhs: array(body.operand_shape(instr, 0))?,
                    rhs: array(body.operand_shape(instr, 1))?,
                    out: array(Some(&instr.shape))?,
                })
            }
            Opcode::Fusion if instr.attrs().fusion_kind.as_deref() == Some("kCustom") => {
                let kind = match fusion_backend_kind(instr)?.as_str() {
                    "__triton_gemm" => GemmKind::TritonGemm,
                    "__triton_nested_gemm_fusion" => GemmKind::TritonNestedGemm,
                    "__cudnn$fusion" => GemmKind::Cudnn,
                    _ => return None,
                };
                let fused = module.called_computation(instr, "calls")?;
                let mut dots = fused
                    .model()
                    .instructions
                    .iter()
                    .filter(|i| i.opcode == Opcode::Dot);
                let dot = dots.next()?;
                if dots.next().is_some() {
                    return None;
                }
                let mut gemm = Gemm::dot(kind, fused, dot)?;
                // The fusion's output is what the kernel writes.
                gemm.out.element = array(Some(&instr.shape))?.element;
                Some(gemm)
            }
            _ => None,
        }
    }

    fn dot(kind: GemmKind, comp: ComputationRef<'_>, dot: &Instruction) -> Option<Gemm> {
        let body = comp.model();
        Some(Gemm {
            kind,
            dims: dot.attrs().dot.as_deref()?.clone(),
            lhs: array(body.operand_shape(dot, 0))?,
            rhs: array(body.operand_shape(dot, 1))?,
            out: array(Some(&dot.shape))?,
        })
    }

    fn product(shape: &ArrayShape, dims: &[i64]) -> i64 {
        dims.iter()
            .map(|&d| {
                usize::try_from(d)
                    .ok()
                    .and_then(|d| shape.dims.get(d))
                    .copied()
                    .unwrap_or(1)
            })
            .fold(1i64, i64::saturating_mul)
    }

    /// The free (non-contracting, non-batch) dimensions of an operand.
    fn free(shape: &ArrayShape, contracting: &[i64], batch: &[i64]) -> Vec<i64> {
        (0..shape.rank() as i64)
            .filter(|d| !contracting.contains(d) && !batch.contains(d))
            .collect()
    }

    /// `(b, m, n, k)`: batch, lhs free, rhs free and contracted extents, each a
    /// product over its dimensions.
    pub fn bmnk(&self) -> (i64, i64, i64, i64) {
        let d = &self.dims;
        let lhs_free = Gemm::free(&self.lhs, &d.lhs_contracting, &d.lhs_batch);
        let rhs_free = Gemm::free(&self.rhs, &d.rhs_contracting, &d.rhs_batch);
        (
            Gemm::product(&self.lhs, &d.lhs_batch),
            Gemm::product(&self.lhs, &lhs_free),
            Gemm::product(&self.rhs, &rhs_free),
            Gemm::product(&self.lhs, &d.lhs_contracting),
        )
    }

    /// `2 * b * m * n * k`: a multiply and an add per contracted pair.
    pub fn flops(&self) -> i64 {
        let (b, m, n, k) = self.bmnk();
        [b, m, n, k].into_iter().fold(2i64, i64::saturating_mul)
    }
}

/// `triton_gemm_config` of a `__triton_gemm`: output tile `[block_m, block_n]`,
/// the `block_k` step, `num_stages` and `num_warps`.
fn triton_gemm_config(instr: &Instruction) -> Option<(i64, i64, i64, i64, i64)> {
    let config = instr.attrs().backend_config()?;
    let c = config.pointer("/fusion_backend_config/triton_gemm_config")?;
    let field = |name: &str| {
        c.get(name)
            .and_then(|v| v.as_i64().or_else(|| v.as_str()?.parse().ok()))
    };
    Some((
        field("block_m")?,
        field("block_n")?,
        field("block_k")?,
        field("num_stages").unwrap_or(1),
        field("num_warps").unwrap_or(4),
    ))
}

/// The kernel estimate of a GEMM; `generic` is `GpuPerformanceModel`'s estimate
/// of the same instruction (its reads, writes and launch are kept).
pub(super) fn kernel(
    model: &Model<'_>,
    instr: &Instruction,
    gemm: &Gemm,
    generic: KernelCost,
) -> KernelCost {
    let tiled = match gemm.kind {
        GemmKind::TritonNestedGemm | GemmKind::TritonGemm => tiled_estimate(model, instr, gemm),
        _ => None,
    };
    match tiled {
        Some(t) => t.into_kernel(generic, units_of(model, gemm)),
        None => roofline(model, gemm, generic),
    }
}

/// The units a GEMM runs on: the matrix units when the device has a rate for
/// its element type, else the CUDA cores (XLA's `CalculatePeakMatrixOpsPerNs`
/// falls back to them).
fn units_of(model: &Model<'_>, gemm: &Gemm) -> Unit {
    if model
        .device
        .peak_ops_per_ns(Unit::Matrix, &gemm.lhs.element)
        .is_some()
    {
        Unit::Matrix
    } else {
        Unit::Vector
    }
}

/// What the tiled models give: the time parts and the launch.
struct Tiled {
    flops: i64,
    read: Duration,
    write: Duration,
    compute: Duration,
    exec: Duration,
    num_blocks: i64,
    threads_per_block: i64,
}

impl Tiled {
    fn into_kernel(self, generic: KernelCost, units: Unit) -> KernelCost {
        KernelCost {
            exec_time: self.exec,
            compute_time: self.compute,
            read_time: self.read,
            write_time: self.write,
            flops: self.flops,
            bound: if self.compute > self.read + self.write {
                Bound::Compute
            } else {
                Bound::Memory
            },
            launch: LaunchDims {
                num_blocks: self.num_blocks,
                threads_per_block: self.threads_per_block,
                emitter: "triton gemm".into(),
            },
            units,
            ..generic
        }
    }
}

/// XLA's tiled estimate of a Triton GEMM fusion, when its config and shape
/// allow one.
fn tiled_estimate(model: &Model<'_>, instr: &Instruction, gemm: &Gemm) -> Option<Tiled> {
    let warp = model.device.warp_size;
    if gemm.kind == GemmKind::TritonNestedGemm {
        let params = super::tiled::configured_parameters(model, instr)?;
        let data = super::tiled::estimate_tiled(model, instr, &params).ok()?;
        if data.exec_time.is_infinite() {
            return None;
        }
        return Some(Tiled {
            flops: data.flops,
            read: data.read_time,
            write: data.write_time,
            compute: data.compute_time,
            exec: data.exec_time,
            num_blocks: data.num_blocks,
            threads_per_block: params.num_warps.saturating_mul(warp),
        });
    }
    let (block_m, block_n, block_k, num_stages, num_warps) = triton_gemm_config(instr)?;
    let fused = model.module.called_computation(instr, "calls")?;
    let dot = fused
        .model()
        .instructions
        .iter()
        .find(|i| i.opcode == Opcode::Dot)?;
    let problem = super::dot::DotProblem::of(fused, dot).ok()?;
    let batch_rank = gemm.out.rank().saturating_sub(2);
    let mut tile = vec![1; batch_rank];
    tile.extend([block_m, block_n]);
    let pipeline = super::dot::Pipeline {
        num_stages,
        is_tma_allowed: false,
    };
    let e = super::dot::estimate(
        &problem,
        &tile,
        block_k.min(problem.k),
        pipeline,
        model.device,
    )
    .ok()?;
    let blocks = |extent: i64, t: i64| (extent + t - 1) / t.max(1);
    Some(Tiled {
        flops: e.flops,
        read: e.read_time,
        write: e.write_time,
        compute: e.compute_time,
        exec: e.exec_time,
        num_blocks: problem.b * blocks(problem.m, block_m) * blocks(problem.n, block_n),
        threads_per_block: num_warps.saturating_mul(warp),
    })
}

/// The roofline of a GEMM without tiles: its flops at the matrix units' peak
/// for operand 0's type, overlapped with the generic model's memory time.
fn roofline(model: &Model<'_>, gemm: &Gemm, generic: KernelCost) -> KernelCost {
    let flops = gemm.flops();
    let peak = model.device.peak_matrix_ops_per_ns(&gemm.lhs.element);
    let compute = if flops <= 0 {
        Duration::ZERO
    } else {
        // `absl::Nanoseconds(1.0f * flops / peak)`, as XLA's `ComputeTime`.
        Duration::from_nanos_f64(f64::from(flops as f32 / peak as f32))
    };
    let memory = generic.read_time + generic.write_time;
    let units = units_of(model, gemm);
    KernelCost {
        exec_time: combine(compute, memory),
        compute_time: compute,
        flops,
        bound: if compute > memory {
            Bound::Compute
        } else {
            Bound::Memory
        },
        units,
        ..generic
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::view;
    use crate::device::Device;
    use crate::model;

    /// The root's estimate on `device`.
    fn root_cost(text: &str, device: &Device) -> KernelCost {
        let file = model::parse_hlo(text);
        let module = &file.modules[0];
        let v = view::borrowed(module);
        let entry = module.entry_computation().unwrap();
        let model = Model::new(&v, module, entry, device);
        model.kernel(entry.model().root_instruction().unwrap())
    }

    fn micros(d: Duration) -> f64 {
        d.as_nanos_f64() / 1000.0
    }

    #[test]
    fn a_bf16_dot_runs_at_the_tensor_cores_peak() {
        let text = "ENTRY e {\n a = bf16[1,8192,4096] parameter(0)\n b = bf16[4096,14336] parameter(1)\n ROOT d = bf16[1,8192,14336] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n}\n";
        let h100 = Device::h100();
        let k = root_cost(text, &h100);
        assert_eq!(k.units, Unit::Matrix);
        let flops = 2.0 * 8192.0 * 14336.0 * 4096.0;
        assert_eq!(k.flops as f64, flops);
        let ideal = flops / h100.peak_matrix_ops_per_ns(&model::PrimitiveType::Bf16) as f64;
        let ratio = k.exec_time.as_nanos_f64() / ideal;
        assert!((1.0..1.05).contains(&ratio), "{ratio}");
        assert_eq!(k.bound, Bound::Compute);
    }

    #[test]
    fn cublas_calls_read_their_dimensions_from_the_gemm_config() {
        let text = r#"ENTRY e {
 a = f8e4m3fn[4096,8192] parameter(0)
 b = f8e4m3fn[8192,4096] parameter(1)
 s = f32[] parameter(2)
 ROOT c = (bf16[4096,4096], s8[33554432]) custom-call(a, b, s, s), custom_call_target="__cublas$lt$matmul$f8",
   backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
}
"#;
        let h100 = Device::h100();
        let k = root_cost(text, &h100);
        assert_eq!(k.flops, 2 * 4096 * 4096 * 8192);
        // The f8 rate (operand 0's type), twice bf16's.
        let f8 = h100.peak_matrix_ops_per_ns(&model::PrimitiveType::F8E4M3Fn) as f64;
        let ideal = k.flops as f64 / f8;
        assert!(
            k.compute_time.as_nanos_f64() / ideal < 1.01,
            "{:?}",
            k.compute_time
        );
    }

    /// A nested GEMM fusion (f16 128x128 by 128x256): XLA costs it with the
    /// indexing model and the GEMM model (a pipelined `k` loop paying a
    /// latency tax per step), not with the generic model's occupancy-limited
    /// flops, which came out about four times too fast.
    #[test]
    fn a_nested_gemm_fusion_is_costed_by_the_tiled_gemm_model() {
        let text = r#"HloModule m
fdot {
  p0 = f16[128,128]{1,0} parameter(0)
  p1 = f16[128,256]{1,0} parameter(1)
  ROOT dot = f16[128,256]{1,0} dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, backend_config={"sizes":["32"]}
}
ENTRY e {
  p0 = f16[128,128]{1,0} parameter(0)
  p1 = f16[128,256]{1,0} parameter(1)
  ROOT f = f16[128,256]{1,0} fusion(p0, p1), kind=kCustom, calls=fdot,
    backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion","block_level_fusion_config":{"output_tiles":[{"sizes":["64","64"]}],"num_warps":"4","num_stages":"3","num_ctas":"1"}}}
}
"#;
        let mut a6000 = Device::a6000();
        a6000.matrix_units.clear();
        let k = root_cost(text, &a6000);
        let file = model::parse_hlo(text);
        let module = &file.modules[0];
        let v = view::borrowed(module);
        let entry = module.entry_computation().unwrap();
        let generic = Model::new(&v, module, entry, &a6000)
            .generic_kernel(entry.model().root_instruction().unwrap());
        assert!(micros(generic.exec_time) < 3.0, "{:?}", generic.exec_time);
        // Four k steps of 32, two in the prologue, each paying the 1.8 µs tax.
        assert!(micros(k.exec_time) > 8.0, "{:?}", k.exec_time);
        assert_eq!(k.launch.num_blocks, 8);
        assert_eq!(k.launch.threads_per_block, 128);
    }

    #[test]
    fn a_triton_gemm_uses_its_tile_config() {
        let text = r#"HloModule m
fdot {
  p0 = bf16[4096,4096] parameter(0)
  p1 = bf16[4096,4096] parameter(1)
  ROOT dot = bf16[4096,4096] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  p0 = bf16[4096,4096] parameter(0)
  p1 = bf16[4096,4096] parameter(1)
  ROOT f = bf16[4096,4096] fusion(p0, p1), kind=kCustom, calls=fdot,
    backend_config={"fusion_backend_config":{"kind":"__triton_gemm","triton_gemm_config":{"block_m":"128","block_n":"256","block_k":"64","num_stages":"4","num_warps":"8","num_ctas":"1"}}}
}
"#;
        let h100 = Device::h100();
        let k = root_cost(text, &h100);
        assert_eq!(k.launch.num_blocks, 32 * 16);
        assert_eq!(k.launch.threads_per_block, 256);
        // 512 tiles on 132 SMs: 4 waves, 528 tiles' flops.
        assert_eq!(k.flops, 2 * 128 * 256 * 4096 * 528);
        let ideal =
            2.0 * 4096f64.powi(3) / h100.peak_matrix_ops_per_ns(&model::PrimitiveType::Bf16) as f64;
        let compute = k.compute_time.as_nanos_f64();
        assert!(
            (1.0..1.04).contains(&(compute / ideal)),
            "{compute} vs {ideal}"
        );
        // XLA's model reads each block's rows and columns from L2 with no
        // multicast between blocks: 1.6 GB at 6.65 TB/s plus 64 steps of
        // 400 ns outlast the tensor cores here.
        assert!(
            k.exec_time.as_nanos_f64() > 1.5 * ideal,
            "{:?}",
            k.exec_time
        );
    }

    #[test]
    fn other_custom_calls_and_fusions_are_not_gemms() {
        let text = "ENTRY e {\n a = f32[8] parameter(0)\n ROOT c = f32[8] custom-call(a), custom_call_target=\"foo\"\n}\n";
        let k = root_cost(text, &Device::h100());
        assert_eq!(k.units, Unit::Vector);
    }
}
