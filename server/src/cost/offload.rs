//! Host offloads: data moved between device memory and host memory over the
//! host link ([`Device::host_bandwidth`](crate::device::Device)), not through
//! HBM.
//!
//! Why: an activation-offloading module annotates its transfers as
//! `custom-call(...), custom_call_target="MoveToHost"` / `"MoveToDevice"`
//! (JAX's offload annotations, which XLA's host offloader turns into copies to
//! and from memory space 5, `S(5)` in a layout). The generic model reads and
//! writes them at HBM speed: a 235 MB activation took 140 µs on an H100, where
//! its PCIe 5.0 x16 link needs about 3.4 ms. A transfer is one copy of its
//! bytes at the host link's bandwidth; with the link unknown (0), the generic
//! estimate stands.

use super::duration::Duration;
use super::hlo_cost;
use super::kernel::{Bound, KernelCost, Model};
use crate::model::{ComputationRef, Instruction, Opcode, Shape};

/// Which way a transfer goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    ToHost,
    ToDevice,
}

/// XLA's host memory space (`Layout::kHostMemorySpace`).
const HOST_MEMORY_SPACE: i64 = 5;

fn in_host_memory(shape: Option<&Shape>) -> bool {
    shape
        .into_iter()
        .flat_map(|s| s.leaves())
        .any(|a| a.layout.as_ref().and_then(|l| l.memory_space) == Some(HOST_MEMORY_SPACE))
}

/// The direction of a host transfer: an offload annotation, or a copy (or
/// `copy-start`) between a host-memory and a device-memory shape.
pub fn direction(computation: ComputationRef<'_>, instr: &Instruction) -> Option<Direction> {
    match instr.opcode {
        Opcode::CustomCall => match instr.custom_call_target()? {
            "MoveToHost" => Some(Direction::ToHost),
            "MoveToDevice" => Some(Direction::ToDevice),
            _ => None,
        },
        Opcode::Copy | Opcode::CopyStart => {
            let source = in_host_memory(computation.model().operand_shape(instr, 0));
            // A `copy-start` gives `(destination, source, context)`.
            let destination = match &*instr.shape {
                Shape::Tuple(elements) => elements.first(),
                s => Some(s),
            };
            let target = in_host_memory(destination);
            match (source, target) {
                (false, true) => Some(Direction::ToHost),
                (true, false) => Some(Direction::ToDevice),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The transfer's estimate: its bytes once over the host link (the read and
/// the write overlap on the two sides of the link), no compute.
pub(super) fn kernel(
    model: &Model<'_>,
    instr: &Instruction,
    generic: &KernelCost,
) -> Option<KernelCost> {
    direction(model.computation, instr)?;
    let bandwidth = model.device.host_bandwidth;
    if bandwidth <= 0 {
        return None;
    }
    let bytes = model
        .computation
        .model()
        .operand_shape(instr, 0)
        .map_or(0, hlo_cost::shape_size);
    let time = Duration::from_secs_f64(bytes as f64 / bandwidth as f64);
    Some(KernelCost {
        exec_time: time,
        compute_time: Duration::ZERO,
        read_time: time,
        write_time: Duration::ZERO,
        flops: 0,
        bound: Bound::Memory,
        ..generic.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::view;
    use crate::device::Device;
    use crate::model;

    fn root_cost(text: &str, device: &Device) -> KernelCost {
        let file = model::parse_hlo(text);
        let module = &file.modules[0];
        let v = view::borrowed(module);
        let entry = module.entry_computation().unwrap();
        Model::new(&v, module, entry, device).kernel(entry.model().root_instruction().unwrap())
    }

    #[test]
    fn an_offload_moves_its_bytes_over_the_host_link() {
        let text = "ENTRY e {\n a = bf16[1,8192,14336] parameter(0)\n ROOT m = bf16[1,8192,14336] custom-call(a), custom_call_target=\"MoveToHost\"\n}\n";
        let h100 = Device::h100();
        let k = root_cost(text, &h100);
        let bytes = 2.0 * 8192.0 * 14336.0;
        let expected = bytes / h100.host_bandwidth as f64 * 1e9;
        assert!(
            (k.exec_time.as_nanos_f64() - expected).abs() < 1.0,
            "{:?}",
            k.exec_time
        );
        // 235 MB at 64 GiB/s: about 3.4 ms.
        assert_eq!(k.exec_time.whole_micros(), 3417);
        let copy =
            "ENTRY e {\n a = f32[1024]{0:S(5)} parameter(0)\n ROOT c = f32[1024]{0} copy(a)\n}\n";
        let k = root_cost(copy, &h100);
        assert!(
            (k.exec_time.as_nanos_f64() - 4096.0 / h100.host_bandwidth as f64 * 1e9).abs() < 1.0
        );
        let start = "ENTRY e {\n a = f32[1024]{0:S(5)} parameter(0)\n ROOT c = (f32[1024]{0}, f32[1024]{0:S(5)}, u32[]) copy-start(a)\n}\n";
        let file = model::parse_hlo(start);
        let module = &file.modules[0];
        let entry = module.entry_computation().unwrap();
        let root = entry.model().root_instruction().unwrap();
        assert_eq!(direction(entry, root), Some(Direction::ToDevice));
        let mut unknown = Device::h100();
        unknown.host_bandwidth = 0;
        let k = root_cost(text, &unknown);
        assert!(k.exec_time.whole_micros() < 200, "{:?}", k.exec_time);
    }
}
