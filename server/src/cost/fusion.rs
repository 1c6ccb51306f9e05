//! Whether fusing a producer into its consumers pays: XLA's
//! `GpuPerformanceModel::EstimateRunTimes` (the priority-fusion form) and
//! `EstimateRunTimesForMultiOutputFusion`.
//!
//! Unfused, every kernel pays the launch overhead and its own run time, and each
//! consumer reads the producer's output from memory. Fused, the consumer
//! recomputes the producer for the elements it uses (its flops times the
//! consumer's utilization of it), reads the producer's operands instead (shared
//! operands once: `GetSharedOperandBytesAccessed`), and XLA judges those reads
//! with its coalescing heuristic for the pair.

use super::compute::{combine, compute_time};
use super::duration::Duration;
use super::hlo_cost::{self, InstructionCost};
use super::kernel::{element_bytes, KernelCost, Model};
use super::launch::LaunchDims;
use super::memory::{coalescing_utilization_rate, read_time};
use crate::coalescing::emitter::EmitterKind;
use crate::coalescing::heuristic;
use crate::model::{InstrId, Instruction, Opcode};

/// `kKernelLaunchOverhead`.
pub const KERNEL_LAUNCH_OVERHEAD: Duration = Duration::from_micros(1);

/// Run time without and with the fusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunTimes {
    pub time_unfused: Duration,
    pub time_fused: Duration,
}

fn uses(consumer: &Instruction, x: InstrId) -> bool {
    consumer.operands.iter().any(|o| o.target == Some(x))
}

fn operand_index(consumer: &Instruction, x: InstrId) -> Option<usize> {
    consumer.operands.iter().position(|o| o.target == Some(x))
}

impl<'a> Model<'a> {
    /// A fusion whose fused root is a tuple (`IsMultiOutputFusion`).
    fn is_multi_output_fusion(&self, instr: &Instruction) -> bool {
        instr.opcode == Opcode::Fusion
            && self
                .module
                .called_computation(instr, "calls")
                .and_then(|c| c.model().root_instruction())
                .is_some_and(|r| r.opcode == Opcode::Tuple)
    }

    /// Whether operand `k` of `consumer` is `producer` or a
    /// `get-tuple-element` of it.
    fn reads_producer(&self, consumer: &Instruction, k: usize, producer: &Instruction) -> bool {
        match consumer.operands[k].target {
            Some(t) if t == producer.id => true,
            Some(t) => {
                let x = self.instruction(t);
                x.opcode == Opcode::GetTupleElement
                    && x.operands.first().and_then(|o| o.target) == Some(producer.id)
            }
            None => false,
        }
    }

    /// `GetOperandUtilization(consumer, producer)`.
    fn utilization_of(
        &self,
        consumer: &Instruction,
        consumer_cost: &InstructionCost,
        producer: &Instruction,
    ) -> f32 {
        if self.is_multi_output_fusion(producer) {
            return (0..consumer.operands.len())
                .filter(|&k| {
                    self.reads_producer(consumer, k, producer)
                        && consumer.operands[k].target != Some(producer.id)
                })
                .map(|k| consumer_cost.operand_utilization[k])
                .sum();
        }
        match operand_index(consumer, producer.id) {
            Some(k) => consumer_cost.operand_utilization[k],
            None => 0.0,
        }
    }

    /// A fused computation's parameter `k`, as an instruction index.
    fn fused_parameter(&self, cost: &InstructionCost, k: usize) -> Option<usize> {
        let fused = cost.fused.as_ref()?;
        let comp = self.module.computation(fused.computation);
        comp.model().parameter(k).map(|p| p.id.index())
    }

    /// `GetCommonUtilization`: how much of operand `k` of `producer` the consumer
    /// also reads on the same elementwise path (those reads are shared once
    /// fused).
    fn common_utilization(
        &self,
        producer: &Instruction,
        producer_cost: &InstructionCost,
        k: usize,
        consumer: &Instruction,
        consumer_cost: &InstructionCost,
    ) -> f32 {
        let Some(operand) = producer.operands[k].target else {
            return 0.0;
        };
        if !uses(consumer, operand) {
            return 0.0;
        }
        let elementwise_from_root = producer.opcode != Opcode::Fusion
            && producer.opcode.is_elementwise()
            || match (&producer_cost.fused, self.fused_parameter(producer_cost, k)) {
                (Some(f), Some(p)) => {
                    let root = self
                        .module
                        .computation(f.computation)
                        .model()
                        .root
                        .map(InstrId::index);
                    root.is_some_and(|r| f.common(p, r) == 1.0)
                }
                _ => false,
            };
        if !elementwise_from_root {
            return 0.0;
        }
        if let Some(fused) = &consumer_cost.fused {
            let Some(common) = operand_index(consumer, operand)
                .and_then(|i| self.fused_parameter(consumer_cost, i))
            else {
                return 0.0;
            };
            let producer_indices: Vec<usize> = if self.is_multi_output_fusion(producer) {
                (0..consumer.operands.len())
                    .filter(|&i| {
                        self.reads_producer(consumer, i, producer)
                            && consumer.operands[i].target != Some(producer.id)
                    })
                    .collect()
            } else {
                operand_index(consumer, producer.id).into_iter().collect()
            };
            return producer_indices
                .into_iter()
                .filter_map(|i| self.fused_parameter(consumer_cost, i))
                .map(|p| fused.common(common, p))
                .sum();
        }
        if consumer.opcode.is_elementwise() {
            return 1.0;
        }
        0.0
    }

    /// `GetSharedOperandBytesAccessed`: bytes of `x` the fused kernel reads.
    fn shared_operand_bytes(
        &self,
        producer: &Instruction,
        producer_cost: &InstructionCost,
        consumer: &Instruction,
        consumer_cost: &InstructionCost,
        x: &Instruction,
    ) -> i64 {
        let producer_utilization = self.utilization_of(consumer, consumer_cost, producer);
        let by_producer =
            operand_index(producer, x.id).map_or(0, |k| producer_cost.operand_bytes[k]);
        let by_consumer =
            operand_index(consumer, x.id).map_or(0, |k| consumer_cost.operand_bytes[k]);
        let common = operand_index(producer, x.id).map_or(0.0, |k| {
            self.common_utilization(producer, producer_cost, k, consumer, consumer_cost)
        });
        let common_bytes = (hlo_cost::shape_size(&x.shape) as f32 * common).round() as i64;
        (by_producer as f32 * producer_utilization).round() as i64 + by_consumer - common_bytes
    }

    /// The emitter and launch of the fused kernel. Its root is the consumer's, so
    /// the consumer's emitter decides, unless the consumer only passes the
    /// producer's hero through (a bitcast, reshape or unary elementwise op after
    /// a reduction or transpose: XLA's hero search walks through those).
    fn fused_launch(
        &self,
        producer: &Instruction,
        consumer: &Instruction,
    ) -> (Option<EmitterKind>, LaunchDims) {
        let consumer_subject = self.subject(consumer);
        let (consumer_kind, consumer_launch) = self.launch(consumer, consumer_subject.as_ref());
        let passes_hero_through = consumer.opcode != Opcode::Fusion
            && consumer.operands.len() == 1
            && (consumer.opcode.is_elementwise()
                || matches!(consumer.opcode.name(), "bitcast" | "reshape"));
        if passes_hero_through {
            let producer_subject = self.subject(producer);
            let (producer_kind, producer_launch) = self.launch(producer, producer_subject.as_ref());
            if matches!(
                producer_kind,
                Some(EmitterKind::Reduction { .. } | EmitterKind::Transpose { .. })
            ) {
                return (producer_kind, producer_launch);
            }
        }
        (consumer_kind, consumer_launch)
    }

    /// `EstimateRunTimeForFusion`: the run time of `producer` fused into
    /// `consumer`, given both unfused estimates; `side_output` when the producer's
    /// result is still written (a multi-output fusion).
    pub fn fused_time(
        &self,
        producer: &Instruction,
        consumer: &Instruction,
        producer_runtime: &KernelCost,
        consumer_runtime: &KernelCost,
        side_output: bool,
    ) -> Duration {
        if producer_runtime.is_infinite() || consumer_runtime.is_infinite() {
            return Duration::INFINITE;
        }
        let device = self.device;
        let producer_cost = self.hlo_cost(producer);
        let consumer_cost = self.hlo_cost(consumer);
        let utilization: f32 = (0..consumer.operands.len())
            .filter(|&k| self.reads_producer(consumer, k, producer))
            .map(|k| consumer_cost.operand_utilization[k])
            .sum();
        let (kind, launch) = self.fused_launch(producer, consumer);
        let flops =
            (producer_runtime.flops as f32 * utilization + consumer_runtime.flops as f32) as i64;
        let compute = compute_time(device, flops, launch.num_blocks, launch.threads_per_block);
        let coalesced = match &kind {
            Some(kind) => {
                heuristic::read_coalesced(
                    self.view,
                    kind,
                    self.at(producer),
                    Some(self.at(consumer)),
                    device.warp_size,
                )
                .coalesced
            }
            None => true,
        };

        // The fused kernel's parameters: the producer's operands, then the
        // consumer's other operands, each once.
        let mut parameters: Vec<InstrId> = vec![];
        for o in producer.operands.iter().filter_map(|o| o.target) {
            if !parameters.contains(&o) {
                parameters.push(o);
            }
        }
        for k in 0..consumer.operands.len() {
            let Some(o) = consumer.operands[k].target else {
                continue;
            };
            if !self.reads_producer(consumer, k, producer) && !parameters.contains(&o) {
                parameters.push(o);
            }
        }
        let mut read = Duration::ZERO;
        for id in parameters {
            let x = self.instruction(id);
            let size = hlo_cost::shape_size(&x.shape);
            let total =
                self.shared_operand_bytes(producer, &producer_cost, consumer, &consumer_cost, x);
            let net = size.min(total);
            let rate = coalescing_utilization_rate(element_bytes(&x.shape), device, coalesced);
            read += read_time(device, launch.num_blocks, net, total, rate);
        }
        let mut write = consumer_runtime.write_time;
        if side_output {
            write += producer_runtime.write_time;
        }
        combine(compute, read + write)
    }

    /// `EstimateRunTimes(producer, consumers)`.
    pub fn run_times(&self, producer: &Instruction, consumers: &[&Instruction]) -> RunTimes {
        let producer_runtime = self.kernel(producer);
        let n = consumers.len() as i64;
        let mut time_unfused = KERNEL_LAUNCH_OVERHEAD.mul_i64(n + 1) + producer_runtime.exec_time;
        let mut time_fused = KERNEL_LAUNCH_OVERHEAD.mul_i64(n);
        for consumer in consumers {
            let consumer_runtime = self.kernel(consumer);
            time_unfused += consumer_runtime.exec_time;
            time_fused += self.fused_time(
                producer,
                consumer,
                &producer_runtime,
                &consumer_runtime,
                false,
            );
        }
        RunTimes {
            time_unfused,
            time_fused,
        }
    }

    /// `EstimateRunTimesForMultiOutputFusion`: fusing keeps the producer's output
    /// as a second output of the consumer's kernel.
    pub fn run_times_multi_output(
        &self,
        producer: &Instruction,
        consumer: &Instruction,
    ) -> RunTimes {
        let producer_runtime = self.kernel(producer);
        let consumer_runtime = self.kernel(consumer);
        RunTimes {
            time_unfused: KERNEL_LAUNCH_OVERHEAD.mul_i64(2)
                + producer_runtime.exec_time
                + consumer_runtime.exec_time,
            time_fused: KERNEL_LAUNCH_OVERHEAD
                + self.fused_time(
                    producer,
                    consumer,
                    &producer_runtime,
                    &consumer_runtime,
                    true,
                ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::view;
    use crate::device::Device;
    use crate::model;

    fn run_times(text: &str, producer: &str, consumers: &[&str]) -> RunTimes {
        let file = model::parse_hlo(text);
        let module = &file.modules[0];
        let v = view::borrowed(module);
        let device = Device::a6000();
        let entry = module.entry_computation().unwrap();
        let model = Model::new(&v, module, entry, &device);
        let by_name = |n: &str| entry.model().instruction_by_name(n).unwrap();
        let consumers: Vec<&Instruction> = consumers.iter().map(|c| by_name(c)).collect();
        model.run_times(by_name(producer), &consumers)
    }

    #[test]
    fn fusing_an_elementwise_producer_saves_its_round_trip() {
        let text = "ENTRY e {\n p0 = f32[4194304] parameter(0)\n p1 = f32[4194304] parameter(1)\n m = f32[4194304] multiply(p0, p1)\n ROOT t = f32[4194304] tanh(m)\n}\n";
        let t = run_times(text, "m", &["t"]);
        // Unfused: m reads 2 x 16 MiB and writes 16 MiB, t reads and writes
        // 16 MiB: 5 x 21.8 µs + 2 launches (+ 5% of each kernel's compute,
        // not hidden under its memory time). Fused: 3 x 21.8 µs + 1 launch
        // (+ 5% of its compute).
        assert_eq!(t.time_unfused.whole_micros(), 112);
        assert_eq!(t.time_fused.whole_micros(), 67);
    }

    #[test]
    fn a_shared_operand_is_read_once_when_fused() {
        // The consumer reads p0 elementwise, as the producer does: once fused,
        // p0 is read once (GetSharedOperandBytesAccessed subtracts the common
        // utilization).
        let text = "ENTRY e {\n p0 = f32[4194304] parameter(0)\n n = f32[4194304] negate(p0)\n ROOT a = f32[4194304] add(n, p0)\n}\n";
        let t = run_times(text, "n", &["a"]);
        // Fused: read p0 once, write once: 2 x 21.8 µs + 1 launch.
        assert_eq!(t.time_fused.whole_micros(), 44);
        assert_eq!(t.time_unfused.whole_micros(), 111);
    }
}
