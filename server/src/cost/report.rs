//! The kernels of a step ranked by the time they take per step, and the lines a code
//! lens, a hover and `hlo-lsp cost` show of each: what an engineer chasing a slow step
//! reads first. Sizes in binary units, rates as vendors quote them ([`crate::units`]).

use super::step::{self, Estimate, ModelUsed, Step, StepKernel, StepOptions};
use super::{Bound, Duration, KernelCost};
use crate::device::{Device, Unit};
use crate::model::{ComputationId, Module, Opcode};
use crate::units;

/// Whether the instructions of computation `id` run as kernels of their own: the
/// entry, while bodies and conditions, conditional branches, `call`ed and
/// custom-call-called computations. Fused computations run inside their fusion's
/// kernel and `to_apply` computations inside their reduce's (or sort's, ...).
pub fn launches_kernels(module: &Module, id: ComputationId) -> bool {
    if module.entry == Some(id) {
        return true;
    }
    // Decided by the calling attribute as the outline scanned it: only `to_apply`
    // needs its instruction (a `call`'s or a reduce's), so a fused computation's
    // answer costs no search through its caller (the lenses ask it of thousands).
    module
        .callers_of(id)
        .iter()
        .any(|site| match module.call_attribute(site) {
            "body"
            | "condition"
            | "true_computation"
            | "false_computation"
            | "branch_computations"
            | "called_computations" => true,
            "to_apply" => module
                .caller(site)
                .is_some_and(|(_, instruction)| instruction.opcode == Opcode::Call),
            _ => false,
        })
}

/// The kernels of one step of `module` on `device` (with the user's options), the costliest per step first (ties in walk order), those no
/// model covers last.
pub fn ranked_kernels(module: &Module, device: &Device, options: &StepOptions) -> Vec<StepKernel> {
    let Some(step) = step::step(module, device, options) else {
        return vec![];
    };
    ranked(step)
}

/// The kernels of `step`, the costliest per step first, those no model covers last.
pub fn ranked(step: Step) -> Vec<StepKernel> {
    let mut kernels = step.kernels;
    kernels.sort_by_key(|k| std::cmp::Reverse(k.total().unwrap_or(Duration::ZERO)));
    kernels.sort_by_key(|k| k.estimate.is_err());
    kernels
}

/// Kernels whose estimates are the same (same model, kind, numbers and count):
/// one row of a ranking, "× 26" rather than 26 lines.
pub fn same_estimate(a: &StepKernel, b: &StepKernel) -> bool {
    match (&a.estimate, &b.estimate) {
        (Ok(x), Ok(y)) => {
            x.model == y.model
                && a.kind == b.kind
                && a.count == b.count
                && a.branch == b.branch
                && x.cost.exec_time == y.cost.exec_time
                && x.cost.flops == y.cost.flops
                && x.cost.bytes_read == y.cost.bytes_read
                && x.cost.bytes_written == y.cost.bytes_written
        }
        (Err(x), Err(y)) => x == y && a.kind == b.kind && a.count == b.count,
        _ => false,
    }
}

/// `≈ 12.3 µs · memory-bound · reads 3.1 MiB (1 uncoalesced)`: the time, what
/// bounds it, and the reads (with the operands read uncoalesced, when some are).
pub fn summary(cost: &KernelCost) -> String {
    if cost.is_infinite() {
        return "no estimate: XLA's model cannot run this kernel".to_string();
    }
    let bound = match cost.bound {
        _ if launch_bound(cost) => "launch-bound",
        Bound::Memory => "memory-bound",
        Bound::Compute => "compute-bound",
    };
    let uncoalesced = cost.operands.iter().filter(|o| !o.coalesced).count();
    let mut line = format!(
        "≈ {} · {bound} · reads {}",
        cost.exec_time,
        units::signed_bytes(cost.bytes_read)
    );
    if uncoalesced > 0 {
        line.push_str(&format!(" ({uncoalesced} uncoalesced)"));
    }
    line
}

/// Whether the kernel's work takes less time than the launch XLA's model adds to
/// every kernel ([`super::KERNEL_LAUNCH_OVERHEAD`]): then neither memory nor compute
/// bounds it, and what a profile shows of it is mostly the launch.
pub fn launch_bound(cost: &KernelCost) -> bool {
    !cost.is_infinite() && cost.exec_time < super::KERNEL_LAUNCH_OVERHEAD
}

/// [`summary`] saying which model gave the time when it is not the generic one:
/// `≈ 8.70 ms · compute-bound on the matrix units · reads 3.0 GiB`,
/// `≈ 14.7 ms · host link · moves 896.0 MiB`.
pub fn estimate_summary(estimate: &Estimate) -> String {
    let cost = &estimate.cost;
    if cost.is_infinite() {
        return summary(cost);
    }
    match estimate.model {
        ModelUsed::Performance => summary(cost),
        ModelUsed::Tiled => format!("{} · tiled (Triton)", summary(cost)),
        ModelUsed::Matrix if cost.units == Unit::Matrix => {
            summary(cost).replacen("compute-bound", "compute-bound on the matrix units", 1)
        }
        ModelUsed::Matrix => summary(cost),
        ModelUsed::HostLink => format!(
            "≈ {} · host link · moves {}",
            cost.exec_time,
            units::signed_bytes(cost.bytes_read)
        ),
        ModelUsed::Collective => {
            let mut line = format!("≈ {} · ", cost.exec_time);
            match &estimate.collective {
                Some(c) => {
                    line.push_str(c.kind);
                    if let Some(d) = c.devices {
                        line.push_str(&format!(" of {d} devices"));
                    }
                    match c.nodes {
                        Some(1) => line.push_str(" in one node"),
                        Some(n) => line.push_str(&format!(" across {n} nodes")),
                        None => {}
                    }
                    line.push_str(&format!(" · {}", c.method));
                }
                None => line.push_str("collective"),
            }
            line.push_str(&format!(
                " · moves {}",
                units::signed_bytes(cost.bytes_read)
            ));
            line
        }
    }
}

/// The operand whose reads take the longest, with its share of the read time:
/// `` `%p0` (2.0 MiB, 85% of the read time) ``; `None` when there is no choice to
/// point at (one operand, no read time) or no operand takes more than half of it.
pub fn dominant_operand(cost: &KernelCost) -> Option<String> {
    let total = cost.read_time.as_nanos_f64();
    if cost.operands.len() < 2 || total <= 0.0 || cost.read_time.is_infinite() {
        return None;
    }
    let top = cost
        .operands
        .iter()
        .max_by(|a, b| a.read_time.cmp(&b.read_time))?;
    let share = top.read_time.as_nanos_f64() / total * 100.0;
    if share <= 50.0 {
        return None;
    }
    Some(format!(
        "`%{}` ({}, {share:.0}% of the read time{})",
        top.name,
        units::signed_bytes(top.bytes),
        if top.coalesced { "" } else { ", uncoalesced" }
    ))
}

/// Where a kernel stands against the device's limits: `8.61 TFLOP · 3.0 GiB read and written ·
/// 2,866 FLOP/B · 98% of the bf16 matrix peak (989 TFLOP/s) · 4,096 blocks × 256
/// threads`, and when too few blocks keep the SMs busy, the bandwidth XLA's model
/// lets them reach. `None` for a model without those numbers (collectives).
pub fn roofline(estimate: &Estimate, device: &Device) -> Option<String> {
    let cost = &estimate.cost;
    if cost.is_infinite() || estimate.model == ModelUsed::Collective {
        return None;
    }
    let seconds = cost.exec_time.as_secs_f64();
    let bytes = cost.bytes_read.saturating_add(cost.bytes_written).max(0);
    let mut parts = vec![];
    if estimate.model == ModelUsed::HostLink {
        // The bytes cross the link once: what it moves, not read plus written.
        if seconds > 0.0 {
            parts.push(format!(
                "{} over the host link",
                units::rate(cost.bytes_read.max(0) as f64 / seconds)
            ));
        }
        return Some(parts.join(" · ")).filter(|s| !s.is_empty());
    }
    if cost.flops > 0 {
        parts.push(units::flops(cost.flops as f64));
    }
    parts.push(format!("{} read and written", units::signed_bytes(bytes)));
    if bytes > 0 && cost.flops > 0 {
        parts.push(format!(
            "{} FLOP/B",
            units::grouped(cost.flops.max(0) as f64 / bytes as f64)
        ));
    }
    if launch_bound(cost) {
        parts.push(format!(
            "less work than the {} launch XLA's model adds to each kernel",
            super::KERNEL_LAUNCH_OVERHEAD
        ));
    } else if seconds > 0.0 {
        match cost.bound {
            Bound::Compute => {
                let (what, peak) = match &estimate.peak {
                    Some(p) => (p.what.clone(), p.flops_per_second),
                    None => ("the CUDA cores' peak".to_string(), vector_peak(device)),
                };
                if peak > 0.0 {
                    parts.push(format!(
                        "{:.0}% of {what} ({})",
                        cost.flops as f64 / seconds / peak * 100.0,
                        units::flop_rate(peak)
                    ));
                }
            }
            Bound::Memory => {
                let bandwidth = device.memory_bandwidth as f64;
                let dram = dram_bytes(cost);
                let share = dram as f64 / seconds / bandwidth * 100.0;
                if share <= 100.5 {
                    parts.push(format!(
                        "{share:.0}% of the memory bandwidth ({})",
                        units::rate(bandwidth)
                    ));
                } else {
                    // The tiled model reads a tile again for each block that needs
                    // it; those reads hit the caches.
                    parts.push(format!(
                        "reads at {} effective, above the memory bandwidth ({}): re-read tiles come from the caches",
                        units::rate(dram as f64 / seconds),
                        units::rate(bandwidth)
                    ));
                }
                if dram < bytes {
                    parts.push(format!(
                        "{} re-read from the caches",
                        units::signed_bytes(bytes - dram)
                    ));
                }
            }
        }
    }
    let launch = &cost.launch;
    if estimate.model != ModelUsed::Matrix {
        parts.push(format!(
            "{} block{} × {} thread{}",
            units::grouped(launch.num_blocks as f64),
            if launch.num_blocks == 1 { "" } else { "s" },
            launch.threads_per_block,
            if launch.threads_per_block == 1 {
                ""
            } else {
                "s"
            }
        ));
    }
    let mut line = parts.join(" · ");
    if estimate.model != ModelUsed::Matrix {
        if let Some(few) = few_blocks(cost, device) {
            line.push_str(&format!("\n{few}"));
        }
    }
    if let Some(Ok(measured)) = &estimate.measured_table {
        line.push_str(&format!(
            "\nXLA's measured cuBLAS table (MatmulInterpolator): ≈ {measured}"
        ));
    }
    if let Some(refused) = &estimate.tiles_refused {
        line.push_str(&format!("\n{refused}"));
    }
    Some(line)
}

/// The bytes a kernel moves to and from DRAM: each operand's distinct bytes (XLA's
/// `min(size, bytes read)`; its re-reads come from the caches) and the output.
fn dram_bytes(cost: &KernelCost) -> i64 {
    let read = if cost.operands.is_empty() {
        cost.bytes_read
    } else {
        cost.operands.iter().map(|o| o.net_bytes.max(0)).sum()
    };
    read.saturating_add(cost.bytes_written).max(0)
}

/// CUDA cores' peak FLOP/s (`CalculateEffectiveFlopsPerNs` of a full launch).
fn vector_peak(device: &Device) -> f64 {
    super::compute::effective_flops_per_ns(device, device.sm_count, device.fpus_per_core) as f64
        * 1e9
}

/// Why a kernel with fewer blocks than SMs reads slowly: XLA's model gives each
/// block one SM's transactions per clock (`AdjustBandwidth`).
fn few_blocks(cost: &KernelCost, device: &Device) -> Option<String> {
    let blocks = cost.launch.num_blocks;
    if blocks >= device.sm_count || cost.read_time.is_infinite() {
        return None;
    }
    let reachable = super::memory::adjust_bandwidth(device, device.memory_bandwidth as f32, blocks);
    if f64::from(reachable) >= device.memory_bandwidth as f64 {
        return None;
    }
    let mut line = format!(
        "{blocks} block{} on {} SMs: XLA's model lets {} reach {} of the {} the device has",
        if blocks == 1 { "" } else { "s" },
        device.sm_count,
        if blocks == 1 { "it" } else { "them" },
        units::rate(f64::from(reachable)),
        units::rate(device.memory_bandwidth as f64)
    );
    if splits_before_emission(cost) {
        line.push_str(
            "; XLA's tree-reduction rewrite splits a reduction this long in two before it \
             emits it, so the compiled program spreads it over many blocks",
        );
    }
    Some(line)
}

/// `kRowAtomicFreeBound`-like: XLA's `TreeReductionRewriter` rewrites a row
/// reduction whose rows are longer than a warp can reduce without atomics
/// (`32 x 32 x 8` elements) into two reductions.
const TREE_REDUCTION_BOUND: i64 = 32 * 32 * 8;

/// Whether `cost` is a reduction with more than [`TREE_REDUCTION_BOUND`] input
/// elements per output element: one XLA's pipeline would split before emitting.
fn splits_before_emission(cost: &KernelCost) -> bool {
    if !cost.launch.emitter.contains("reduction") || cost.bytes_written <= 0 {
        return false;
    }
    let input = cost.operands.first().map_or(0, |o| o.bytes);
    input / cost.bytes_written > TREE_REDUCTION_BOUND
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model;

    const TEXT: &str = r#"HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused_exp {
  p = f32[1024,1024] parameter(0)
  ROOT e = f32[1024,1024] exponential(p)
}

ENTRY main {
  x = f32[1024,1024] parameter(0)
  small = f32[16] parameter(1)
  f = f32[1024,1024] fusion(x), kind=kLoop, calls=fused_exp
  z = f32[] constant(0)
  r = f32[1024] reduce(f, z), dimensions={1}, to_apply=add
  n = f32[16] negate(small)
  ROOT t = (f32[1024], f32[16]) tuple(r, n)
}
"#;

    #[test]
    fn kernels_of_the_entry_ranked_costliest_first() {
        let file = model::parse_hlo(TEXT);
        let module = &file.modules[0];
        let ranked = ranked_kernels(module, &Device::a6000(), &StepOptions::default());
        let names: Vec<&str> = ranked.iter().map(|k| k.name.as_str()).collect();
        // Not the tuple, the constant or the parameters; not the reducer's add nor
        // the fused exponential (they run inside other kernels).
        assert_eq!(names.len(), 3, "{names:?}");
        assert!(names.contains(&"f") && names.contains(&"r") && names.contains(&"n"));
        assert!(ranked.windows(2).all(|w| w[0].total() >= w[1].total()));
        assert_eq!(ranked.iter().find(|k| k.name == "f").unwrap().kind, "kLoop");
        let time = |n: &str| ranked.iter().find(|k| k.name == n).unwrap().time();
        // The 4 MiB fusion takes longer than the 64-byte negate.
        assert!(time("f") > time("n"));
    }

    #[test]
    fn summaries_say_time_bound_and_reads() {
        let file = model::parse_hlo(TEXT);
        let ranked = ranked_kernels(&file.modules[0], &Device::a6000(), &StepOptions::default());
        let f = ranked.iter().find(|k| k.name == "f").unwrap();
        let line = summary(&f.estimate.as_ref().unwrap().cost);
        assert!(
            line.starts_with("≈ ") && line.contains("-bound · reads 4.0 MiB"),
            "{line}"
        );
    }

    #[test]
    fn one_operand_has_no_dominant_read_and_few_blocks_are_explained() {
        let file = model::parse_hlo(TEXT);
        let device = Device::a6000();
        let ranked = ranked_kernels(&file.modules[0], &device, &StepOptions::default());
        let n = ranked.iter().find(|k| k.name == "n").unwrap();
        let estimate = n.estimate.as_ref().unwrap();
        assert_eq!(dominant_operand(&estimate.cost), None);
        let line = roofline(estimate, &device).unwrap();
        assert!(line.contains("1 block × "), "{line}");
        assert!(line.contains("1 block on 84 SMs"), "{line}");
    }
}
