//! The kernels of a module ranked by estimated time, and the one-line summary a code
//! lens, a hover and `hlo-lsp cost` show of each: what an engineer chasing a slow step
//! reads first.

use super::{Bound, KernelCost, Model};
use crate::analysis;
use crate::device::Device;
use crate::model::{ComputationId, InstrId, Module, Opcode};

/// One kernel of a module with its estimate.
#[derive(Clone, Debug)]
pub struct RankedKernel {
    pub computation: ComputationId,
    pub instruction: InstrId,
    /// The computation's name (`main`, a while body).
    pub computation_name: String,
    /// The fusion kind (`kLoop`, `kInput`, `kCustom`), else the opcode.
    pub kind: String,
    /// The instruction's name, in document bytes.
    pub name_range: std::ops::Range<usize>,
    pub cost: KernelCost,
}

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

/// Every kernel of `module` on `device`, the costliest first (ties in text order).
pub fn ranked_kernels(module: &Module, device: &Device) -> Vec<RankedKernel> {
    let view = analysis::view::borrowed(module);
    let mut out = Vec::new();
    for computation in module.computations() {
        if !launches_kernels(module, computation.id) {
            continue;
        }
        let model = Model::new(&view, module, computation, device);
        for instruction in &computation.model().instructions {
            if instruction.synthetic || !super::is_kernel(instruction) {
                continue;
            }
            if crate::budget::exhausted() {
                break;
            }
            let kind = match instruction.attrs().fusion_kind.as_deref() {
                Some(kind) if instruction.opcode == Opcode::Fusion => kind.to_string(),
                _ => instruction.opcode.name().to_string(),
            };
            out.push(RankedKernel {
                computation: computation.id,
                instruction: instruction.id,
                computation_name: computation.name.clone(),
                kind,
                name_range: computation.abs(instruction.name_range),
                cost: model.kernel(instruction),
            });
        }
    }
    out.sort_by_key(|k| std::cmp::Reverse(k.cost.exec_time));
    out
}

/// `≈ 12.3 µs · memory-bound · reads 3.1 MB (1 uncoalesced)`: the time, what
/// bounds it, and the reads (with the operands read uncoalesced, when some are).
pub fn summary(cost: &KernelCost) -> String {
    if cost.is_infinite() {
        return "no estimate: XLA's model cannot run this kernel".to_string();
    }
    let bound = match cost.bound {
        Bound::Memory => "memory-bound",
        Bound::Compute => "compute-bound",
    };
    let uncoalesced = cost.operands.iter().filter(|o| !o.coalesced).count();
    let mut line = format!(
        "≈ {} · {bound} · reads {}",
        cost.exec_time,
        bytes(cost.bytes_read)
    );
    if uncoalesced > 0 {
        line.push_str(&format!(" ({uncoalesced} uncoalesced)"));
    }
    line
}

/// The operand whose reads take the longest, with its share of the read time:
/// `%p0 (2.0 MB, 85% of the reads)`; `None` without operands.
pub fn dominant_operand(cost: &KernelCost) -> Option<String> {
    let total = cost.read_time.as_nanos_f64();
    let top = cost
        .operands
        .iter()
        .max_by(|a, b| a.read_time.cmp(&b.read_time))?;
    let share = if total > 0.0 {
        top.read_time.as_nanos_f64() / total * 100.0
    } else {
        0.0
    };
    if cost.operands.len() > 1 && share <= 50.0 {
        return None;
    }
    Some(format!(
        "`%{}` ({}, {share:.0}% of the read time{})",
        top.name,
        bytes(top.bytes),
        if top.coalesced { "" } else { ", uncoalesced" }
    ))
}

/// Bytes the way a profiler prints them: `512 B`, `3.1 KB`, `2.0 MB`, `1.5 GB`
/// (powers of 1000, as XLA's cost model counts bandwidth).
pub fn bytes(n: i64) -> String {
    let n = n as f64;
    if n < 1e3 {
        format!("{n} B")
    } else if n < 1e6 {
        format!("{:.1} KB", n / 1e3)
    } else if n < 1e9 {
        format!("{:.1} MB", n / 1e6)
    } else {
        format!("{:.1} GB", n / 1e9)
    }
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
        let ranked = ranked_kernels(module, &Device::a6000());
        let names: Vec<&str> = ranked.iter().map(|k| k.cost.name.as_str()).collect();
        // Not the tuple, the constant or the parameters; not the reducer's add nor
        // the fused exponential (they run inside other kernels).
        assert_eq!(names.len(), 3, "{names:?}");
        assert!(names.contains(&"f") && names.contains(&"r") && names.contains(&"n"));
        assert!(ranked
            .windows(2)
            .all(|w| w[0].cost.exec_time >= w[1].cost.exec_time));
        assert_eq!(
            ranked.iter().find(|k| k.cost.name == "f").unwrap().kind,
            "kLoop"
        );
        // The 4 MB fusion takes longer than the 64-byte negate.
        let time = |n: &str| {
            ranked
                .iter()
                .find(|k| k.cost.name == n)
                .unwrap()
                .cost
                .exec_time
        };
        assert!(time("f") > time("n"));
    }

    #[test]
    fn summaries_say_time_bound_and_reads() {
        let file = model::parse_hlo(TEXT);
        let ranked = ranked_kernels(&file.modules[0], &Device::a6000());
        let f = ranked.iter().find(|k| k.cost.name == "f").unwrap();
        let line = summary(&f.cost);
        assert!(
            line.starts_with("≈ ") && line.contains("-bound · reads 4.2 MB"),
            "{line}"
        );
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3_100_000), "3.1 MB");
    }
}
