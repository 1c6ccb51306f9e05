//! One kernel's run time: XLA's `GpuPerformanceModel::EstimateRunTimeForInstruction`.
//! The flops and bytes come from the cost analysis ([`super::hlo_cost`]), the
//! launch from the emitter ([`super::launch`]); each operand's read time from
//! [`super::memory::read_time`] at the bandwidth its coalescing allows; the
//! compute time from the FPUs the launch occupies; the two overlap
//! ([`super::compute::combine`]).

use super::compute::{combine, compute_time};
use super::duration::Duration;
use super::hlo_cost::{self, InstructionCost};
use super::launch::{launch_dims, LaunchDims};
use super::memory::{coalescing_utilization_rate, read_time, write_time};
use crate::analysis::utilization::{self, Utilization};
use crate::analysis::{self, fusion, ArrayShape, OperandIndexing, Unknown};
use crate::coalescing::{self, heuristic, Subject};
use crate::device::{Device, Unit};
use crate::model::{ComputationRef, InstrId, Instruction, Module, Opcode, Shape};

/// How an operand read is judged coalesced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Coalescing {
    /// XLA's cost model: `IsReadCoalescedHeuristic` (a transposed minor
    /// dimension outside a transpose emitter, or two fused reductions, break
    /// coalescing), what `GpuPerformanceModel` uses.
    #[default]
    Heuristic,
    /// The project's indexing-based verdicts (`coalescing::analyze`: the first
    /// warp's reads or the tiles'), as XLA's indexing cost model does. Producer
    /// and consumer fusions still use the heuristic: they have no fused
    /// computation to index.
    Indexing,
}

/// Whether a kernel is limited by memory traffic or by arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Memory,
    Compute,
}

/// The cost of reading one operand.
#[derive(Clone, Debug, PartialEq)]
pub struct OperandCost {
    pub index: usize,
    /// The operand's name in the calling computation.
    pub name: String,
    /// Bytes read, re-reads included (`operand_bytes_accessed`).
    pub bytes: i64,
    /// Distinct bytes that come from DRAM: `min(size, bytes)`.
    pub net_bytes: i64,
    pub coalesced: bool,
    /// Times each element is read on average (XLA's operand utilization).
    pub utilization: f32,
    pub read_time: Duration,
    /// The project's exact count of the elements read and how often each is
    /// re-read ([`crate::analysis::utilization`]), when [`Model::distinct_reads`]
    /// asks for it. XLA's model does not use it (it takes `min(size, bytes)`
    /// as the distinct bytes); it says how far that guess is off.
    pub reads: Option<Utilization>,
}

/// XLA's `EstimateRunTimeData` for one kernel, with the launch and the operands.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelCost {
    pub name: String,
    pub exec_time: Duration,
    pub compute_time: Duration,
    pub read_time: Duration,
    pub write_time: Duration,
    pub flops: i64,
    pub bytes_read: i64,
    pub bytes_written: i64,
    pub bound: Bound,
    pub launch: LaunchDims,
    pub operands: Vec<OperandCost>,
    /// The units `compute_time` counts the flops on: the CUDA cores for most
    /// kernels, the tensor cores for GEMMs ([`super::gemm`]) on a device that
    /// describes them.
    pub units: Unit,
}

impl KernelCost {
    /// `EstimateRunTimeData::Infinite()`: a kernel that must not be chosen.
    pub fn infinite(name: &str) -> KernelCost {
        KernelCost {
            name: name.to_string(),
            exec_time: Duration::INFINITE,
            compute_time: Duration::INFINITE,
            read_time: Duration::INFINITE,
            write_time: Duration::INFINITE,
            flops: i64::MAX,
            bytes_read: i64::MAX,
            bytes_written: i64::MAX,
            bound: Bound::Memory,
            launch: LaunchDims {
                num_blocks: 1,
                threads_per_block: 1,
                emitter: "none".into(),
            },
            operands: vec![],
            units: Unit::Vector,
        }
    }

    pub fn is_infinite(&self) -> bool {
        self.exec_time.is_infinite()
    }

    /// Read plus write time.
    pub fn memory_time(&self) -> Duration {
        self.read_time + self.write_time
    }
}

/// Everything an estimate needs: the module, the computation the kernels live
/// in, its analysis view and the device.
#[derive(Clone, Copy)]
pub struct Model<'a> {
    pub view: &'a analysis::Module<'a>,
    pub module: &'a Module,
    pub computation: ComputationRef<'a>,
    pub device: &'a Device,
    pub coalescing: Coalescing,
    /// Also count each operand's distinct and re-read elements from the
    /// indexing maps ([`OperandCost::reads`]); off by default (it enumerates).
    pub distinct_reads: bool,
}

/// The bytes per element of a shape's first leaf (`None` for tuples and tokens).
pub(super) fn element_bytes(shape: &Shape) -> Option<i64> {
    shape
        .as_array()
        .and_then(|a| hlo_cost::element_bytes(&a.element))
}

impl<'a> Model<'a> {
    pub fn new(
        view: &'a analysis::Module<'a>,
        module: &'a Module,
        computation: ComputationRef<'a>,
        device: &'a Device,
    ) -> Model<'a> {
        Model {
            view,
            module,
            computation,
            device,
            coalescing: Coalescing::Heuristic,
            distinct_reads: false,
        }
    }

    pub(super) fn instruction(&self, id: InstrId) -> &'a Instruction {
        self.computation.instruction(id)
    }

    pub(super) fn at(&self, instr: &Instruction) -> heuristic::At {
        heuristic::At {
            computation: self.computation.id.index(),
            node: instr.id.index(),
        }
    }

    pub(super) fn subject(&self, instr: &Instruction) -> Option<Subject<'a>> {
        Subject::new(self.module, self.view, self.computation, instr).ok()
    }

    /// The cost analysis of one instruction of the computation.
    pub fn hlo_cost(&self, instr: &Instruction) -> InstructionCost {
        hlo_cost::analyze(self.module, self.computation, instr)
    }

    /// The launch and emitter kind of `instr` as its own kernel.
    pub(super) fn launch(
        &self,
        instr: &Instruction,
        subject: Option<&Subject<'_>>,
    ) -> (Option<coalescing::emitter::EmitterKind>, LaunchDims) {
        match subject {
            Some(s) => {
                let kind = heuristic::kind_of(s, self.device);
                (Some(kind), launch_dims(s, self.device, num_warps(instr)))
            }
            None => {
                let elements = hlo_cost::elements_recursive(&instr.shape);
                (
                    None,
                    super::launch::loop_launch(elements, 1, self.device, "fallback"),
                )
            }
        }
    }

    /// `EstimateRunTimeForInstruction`: `instr` launched as one kernel; a GEMM
    /// (a dot, a cuBLAS call, a GEMM fusion) on the matrix units
    /// ([`super::gemm`]), a host offload over the host link ([`super::offload`]).
    pub fn kernel(&self, instr: &Instruction) -> KernelCost {
        let generic = self.generic_kernel(instr);
        if let Some(transfer) = super::offload::kernel(self, instr, &generic) {
            return transfer;
        }
        match super::gemm::Gemm::of(self.module, self.computation, instr) {
            Some(gemm) => super::gemm::kernel(self, instr, &gemm, generic),
            None => generic,
        }
    }

    /// `EstimateRunTimeForInstruction` as XLA's `GpuPerformanceModel` has it:
    /// every flop on the CUDA cores the launch occupies.
    pub fn generic_kernel(&self, instr: &Instruction) -> KernelCost {
        let device = self.device;
        let cost = self.hlo_cost(instr);
        let subject = self.subject(instr);
        let (kind, launch) = self.launch(instr, subject.as_ref());
        let compute = compute_time(
            device,
            cost.flops,
            launch.num_blocks,
            launch.threads_per_block,
        );

        let heuristic_verdict = match &kind {
            Some(kind) => {
                heuristic::read_coalesced(self.view, kind, self.at(instr), None, device.warp_size)
                    .coalesced
            }
            None => true,
        };
        let verdicts = match (self.coalescing, subject.as_ref()) {
            (Coalescing::Indexing, Some(s)) => {
                let options = coalescing::Options {
                    sizes: None,
                    device: device.clone(),
                    operand: None,
                };
                coalescing::analyze(s, &options, None)
                    .operands
                    .into_iter()
                    .map(|v| {
                        let judged = !v.reason.starts_with("its");
                        (
                            v.index,
                            if judged {
                                v.coalesced
                            } else {
                                heuristic_verdict
                            },
                        )
                    })
                    .collect()
            }
            _ => vec![],
        };

        let reads = if self.distinct_reads {
            self.distinct(instr)
        } else {
            vec![]
        };
        let mut operands = vec![];
        let mut read = Duration::ZERO;
        let mut bytes_read = 0i64;
        for (k, operand) in instr.operands.iter().enumerate() {
            // XLA looks an operand up by its first index (`operand_index`).
            let first = instr
                .operands
                .iter()
                .position(|o| o.target.is_some() && o.target == operand.target)
                .unwrap_or(k);
            let shape = self
                .computation
                .operand_shape(instr, k)
                .cloned()
                .unwrap_or(Shape::Invalid);
            let size = hlo_cost::shape_size(&shape);
            let total = cost.operand_bytes.get(first).copied().unwrap_or(0);
            let net = size.min(total);
            bytes_read = bytes_read.saturating_add(total);
            let coalesced = verdicts
                .iter()
                .find(|(i, _)| *i == k)
                .map_or(heuristic_verdict, |&(_, c)| c);
            let rate = coalescing_utilization_rate(element_bytes(&shape), device, coalesced);
            let t = read_time(device, launch.num_blocks, net, total, rate);
            read += t;
            operands.push(OperandCost {
                index: k,
                name: operand
                    .target
                    .map_or_else(|| format!("#{k}"), |t| self.instruction(t).name.to_string()),
                bytes: total,
                net_bytes: net,
                coalesced,
                utilization: cost.operand_utilization.get(first).copied().unwrap_or(0.0),
                read_time: t,
                reads: reads.get(k).cloned().flatten(),
            });
        }
        let write = write_time(device, cost.output_bytes);
        let exec = combine(compute, read + write);
        KernelCost {
            name: instr.name.to_string(),
            exec_time: exec,
            compute_time: compute,
            read_time: read,
            write_time: write,
            flops: cost.flops,
            bytes_read,
            bytes_written: cost.output_bytes,
            bound: if compute > read + write {
                Bound::Compute
            } else {
                Bound::Memory
            },
            launch,
            operands,
            units: Unit::Vector,
        }
    }
}

impl Model<'_> {
    /// [`OperandCost::reads`] of every operand of `instr`: through the fused
    /// computation's maps from every output for a fusion, the op's own maps
    /// otherwise.
    fn distinct(&self, instr: &Instruction) -> Vec<Option<Utilization>> {
        let n = instr.operands.len();
        let entries: Vec<(OperandIndexing, Option<ArrayShape>)> = match self
            .module
            .called_computation(instr, "calls")
            .filter(|_| instr.opcode == Opcode::Fusion)
        {
            Some(fused) => {
                let comp = fused.id.index();
                let every = fusion::grouped_from_every_output(self.view, comp);
                let nodes = &self.view.computation(comp).nodes;
                (0..n)
                    .map(|k| {
                        let Some(p) = nodes.iter().position(|x| x.parameter_number == Some(k))
                        else {
                            return (
                                OperandIndexing::unknown(Unknown::malformed("no parameter")),
                                None,
                            );
                        };
                        let mut entry = OperandIndexing {
                            maps: vec![],
                            unknown: None,
                        };
                        for output in &every {
                            if let Some(r) = output.get(p) {
                                entry.maps.extend(r.maps.iter().map(|(_, m)| m.clone()));
                                if entry.unknown.is_none() {
                                    entry.unknown = r.unknown.clone();
                                }
                            }
                        }
                        (entry, nodes[p].op.shape.as_array().cloned())
                    })
                    .collect()
            }
            None => {
                let node = instr.id.index();
                let indexing =
                    fusion::output_to_input(self.view, self.computation.id.index(), node, 0);
                let operand_shapes = self
                    .view
                    .get(self.computation.id.index())
                    .and_then(|c| c.nodes.get(node))
                    .map(|x| x.op.operands.clone())
                    .unwrap_or_default();
                indexing
                    .entries
                    .into_iter()
                    .enumerate()
                    .map(|(k, e)| (e, operand_shapes.get(k).and_then(|s| s.as_array()).cloned()))
                    .collect()
            }
        };
        entries
            .iter()
            .map(|(entry, shape)| {
                utilization::utilization(entry, shape.as_ref()?, utilization::DEFAULT_BUDGET)
            })
            .collect()
    }
}

/// `backend_config.fusion_backend_config.block_level_fusion_config.num_warps`.
pub(super) fn num_warps(instr: &Instruction) -> Option<i64> {
    block_level_config_field(instr, "num_warps")
        .and_then(|w| w.as_i64().or_else(|| w.as_str()?.parse().ok()))
}

/// A field of a fusion's `block_level_fusion_config`.
pub(super) fn block_level_config_field(
    instr: &Instruction,
    name: &str,
) -> Option<serde_json::Value> {
    instr
        .attrs()
        .backend_config()?
        .pointer_mut(&format!(
            "/fusion_backend_config/block_level_fusion_config/{name}"
        ))
        .map(serde_json::Value::take)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::view;
    use crate::model;

    const SMALL: &str = "f {\n p0 = f32[1000] parameter(0)\n p1 = f32[1000] parameter(1)\n ROOT b0 = f32[1000] add(p0, p1)\n}\nENTRY e {\n p0 = f32[1000] parameter(0)\n p1 = f32[1000] parameter(1)\n ROOT r.1 = f32[1000] fusion(p0, p1), kind=kLoop, calls=f\n}\n";

    #[test]
    fn a_small_loop_fusion_is_bound_by_its_few_blocks() {
        let file = model::parse_hlo(SMALL);
        let module = &file.modules[0];
        let v = view::borrowed(module);
        let device = Device::a6000();
        let entry = module.entry_computation().unwrap();
        let model = Model::new(&v, module, entry, &device);
        let k = model.kernel(entry.model().root_instruction().unwrap());
        // 8 blocks of 128 threads; each operand's 4000 bytes at 8 x 45 GB/s
        // (11.0 ns), the output at full bandwidth (5.25 ns): XLA's 38.4 cycles.
        assert_eq!((k.launch.num_blocks, k.launch.threads_per_block), (8, 128));
        assert_eq!(k.flops, 3000);
        assert_eq!(k.read_time.as_nanos_f64(), 22.0);
        assert_eq!(k.write_time.as_nanos_f64(), 5.25);
        assert_eq!(k.exec_time.as_nanos_f64(), 27.25);
        assert_eq!(k.bound, Bound::Memory);
        assert_eq!(k.operands.len(), 2);
        assert!(k.operands.iter().all(|o| o.coalesced && o.bytes == 4000));
        let counted = Model {
            distinct_reads: true,
            ..model
        }
        .kernel(entry.model().root_instruction().unwrap());
        let reads = counted.operands[0].reads.unwrap();
        assert_eq!((reads.fraction, reads.multiplicity), (1.0, 1.0));
        let indexing = Model {
            coalescing: Coalescing::Indexing,
            ..model
        };
        assert_eq!(
            indexing.kernel(entry.model().root_instruction().unwrap()),
            k
        );
    }
}
