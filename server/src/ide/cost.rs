//! What a kernel costs, next to its text: a code lens above every kernel (`≈ 12.3 µs
//! · memory-bound · reads 3.1 MB (1 uncoalesced)`), the hover's "Cost" line with the
//! operand that dominates, one line per operand another kernel computes saying
//! whether XLA's rules would fuse the two and what it would save, and the ranked list
//! of the costliest kernels. Numbers from XLA's GPU performance model
//! ([`crate::cost`]) and rules ([`crate::fusible`]) on the user's GPU.
//!
//! A CPU dump is left alone unless the user chose a GPU; then every answer says it
//! reads the dump as if compiled for that GPU.

use std::ops::Range;

use super::config::Config;
use super::maps::module_id;
use super::snapshot::HloSnapshot;
use crate::cost::step::{self, Estimate, StepOptions};
use crate::cost::{self, report, Model};
use crate::fusible::{self, Hlo, Instr};
use crate::model::backend::Backend;
use crate::model::{ComputationId, ComputationRef, InstrId, Instruction, Module, ModuleId, Opcode};

/// A kernel whose lens the editor shows; its title is computed when the editor
/// resolves it ([`lens_title`]), since a dump has thousands and a screen shows a few.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelAt {
    pub module: ModuleId,
    pub computation: ComputationId,
    pub instruction: InstrId,
    /// The instruction's name, in document bytes.
    pub range: Range<usize>,
}

/// Whether `module` (or `kernel` in it) is not a GPU's program: the CPU's (the
/// kernel's own marks say so, else the module's text, else the file's name, else the
/// after-optimizations dump of its module beside it), or a
/// program no backend has compiled yet (StableHLO, or HLO before XLA's fusion
/// passes). GPU answers (costs, coalescing) leave it alone unless the user chose a
/// GPU.
pub(super) fn off_gpu(
    snapshot: &HloSnapshot,
    module: &Module,
    kernel: Option<&Instruction>,
) -> bool {
    if snapshot.functions_compose() || crate::model::backend::before_fusion(module) {
        return true;
    }
    let backend = kernel
        .and_then(Backend::of_instruction)
        .or_else(|| Backend::of_module(module))
        .or_else(|| Backend::from_file_name(snapshot.file_name()))
        .or_else(|| {
            snapshot
                .path()
                .and_then(crate::dump::naming::backend_beside)
        });
    backend == Some(Backend::Cpu)
}

/// Whether GPU numbers are shown for `module`: not for a CPU dump or a StableHLO
/// program, unless the user chose a GPU.
pub(super) fn judged(snapshot: &HloSnapshot, module: &Module, config: &Config) -> bool {
    !off_gpu(snapshot, module, None) || config.device_chosen
}

/// "as if compiled for h100" on a CPU dump or StableHLO read on a chosen GPU, else
/// nothing.
fn as_if(snapshot: &HloSnapshot, module: &Module, config: &Config) -> Option<String> {
    off_gpu(snapshot, module, None).then(|| format!("as if compiled for {}", config.device.name))
}

/// Every kernel of the document (in text order), for lenses; cheap: no estimate.
pub fn kernels(snapshot: &HloSnapshot, config: &Config) -> Vec<KernelAt> {
    let mut out = Vec::new();
    for (k, module) in snapshot.model().modules.iter().enumerate() {
        if !judged(snapshot, module, config) {
            continue;
        }
        for computation in module.computations() {
            if !report::launches_kernels(module, computation.id) {
                continue;
            }
            for instruction in &computation.model().instructions {
                if instruction.synthetic || !cost::is_kernel(instruction) {
                    continue;
                }
                out.push(KernelAt {
                    module: ModuleId(k as u32),
                    computation: computation.id,
                    instruction: instruction.id,
                    range: computation.abs(instruction.name_range),
                });
            }
        }
    }
    out
}

/// The kernel named `instruction` in the computation named `computation` of module
/// `module`, in this version. A lens keeps names, not ids: they outlive an edit that
/// moves instructions, and a lens whose kernel is gone finds nothing.
pub fn kernel_named(
    snapshot: &HloSnapshot,
    module: ModuleId,
    computation: &str,
    instruction: &str,
) -> Option<KernelAt> {
    let m = snapshot.model().modules.get(module.index())?;
    let computation = m.computation_by_name(computation)?;
    let c = m.computation(computation);
    let instruction = c.instruction_id(instruction)?;
    Some(KernelAt {
        module,
        computation,
        instruction,
        range: c.abs(c.instruction(instruction).name_range),
    })
}

/// The estimate of one kernel on the configured GPU, by the model for its kind
/// (`Err`: why none covers it); `None` when the instruction launches nothing.
fn estimate(
    snapshot: &HloSnapshot,
    at: &KernelAt,
    config: &Config,
) -> Option<Result<Estimate, String>> {
    let module = snapshot.model().module(at.module);
    let computation = module.computation(at.computation);
    let view = snapshot.analysis_module(at.module);
    let model = Model::new(&view, module, computation, &config.device);
    let models = step::Models::new(module, &config.device, StepOptions::default());
    step::estimate_kernel(&model, &models, computation.instruction(at.instruction))
}

/// The estimate of every run of the kernel at `at` in one step: one run's time
/// times its runs per step (a while body's kernel runs once per iteration), as a
/// profile sums every run into an instruction's time per execution
/// ([`crate::profile::report::Estimates`] counts the same from the whole step).
/// `None` when no model covers it, or it launches nothing.
pub(super) fn estimate_per_step(
    snapshot: &HloSnapshot,
    at: &KernelAt,
    config: &Config,
) -> Option<cost::Duration> {
    let e = estimate(snapshot, at, config)?.ok()?;
    let executions = snapshot.executions(at.module);
    let times = executions
        .get(at.computation.index())
        .filter(|e| e.reached)
        .map_or(1, |e| e.times);
    let per_step = e
        .cost
        .exec_time
        .mul_i64(i64::try_from(times).unwrap_or(i64::MAX));
    (!per_step.is_infinite()).then_some(per_step)
}

/// ` · × 32 per step` for a kernel of a loop body (`× 32+` when a loop's count is
/// unknown), nothing for a kernel that runs once.
fn runs(snapshot: &HloSnapshot, at: &KernelAt) -> String {
    let executions = snapshot.executions(at.module);
    match executions.get(at.computation.index()) {
        Some(e) if e.reached && (e.times != 1 || !e.unknown_loops.is_empty()) => format!(
            " · × {}{} per step",
            e.times,
            if e.unknown_loops.is_empty() { "" } else { "+" }
        ),
        _ => String::new(),
    }
}

/// A kernel's lens: its estimate in one line, how often it runs per step, and the
/// GPU; or why no model covers it.
pub fn lens_title(snapshot: &HloSnapshot, at: &KernelAt, config: &Config) -> String {
    let module = snapshot.model().module(at.module);
    let per_device = crate::sharding::per_device(module, Some(snapshot.file_name()))
        .map_or("", |_| ", per device");
    let on = match as_if(snapshot, module, config) {
        Some(as_if) => format!(" ({as_if}{per_device})"),
        None => format!(" ({}{per_device})", config.device.name),
    };
    match estimate(snapshot, at, config) {
        Some(Ok(e)) => format!("{}{}{on}", report::estimate_summary(&e), runs(snapshot, at)),
        Some(Err(reason)) => format!("not modelled: {reason}"),
        None => String::new(),
    }
}

/// The kernel `instruction` of computation `computation`, if it is one.
fn kernel_at(
    snapshot: &HloSnapshot,
    module: &Module,
    computation: ComputationId,
    instruction: &Instruction,
    config: &Config,
) -> Option<KernelAt> {
    let module_id = module_id(snapshot, module)?;
    let launches = report::launches_kernels(module, computation);
    (launches
        && !instruction.synthetic
        && cost::is_kernel(instruction)
        && judged(snapshot, module, config))
    .then(|| KernelAt {
        module: module_id,
        computation,
        instruction: instruction.id,
        range: module.computation(computation).abs(instruction.name_range),
    })
}

/// The hover's cost lines of a kernel: its estimate and the operand that dominates,
/// then, per operand another kernel computes, whether XLA would fuse the two.
pub fn hover_lines(
    snapshot: &HloSnapshot,
    module: &Module,
    computation: ComputationId,
    instruction: &Instruction,
    config: &Config,
) -> Vec<String> {
    let Some(at) = kernel_at(snapshot, module, computation, instruction, config) else {
        return Vec::new();
    };
    let mut on = as_if(snapshot, module, config).unwrap_or_else(|| config.device.name.clone());
    if crate::sharding::per_device(module, Some(snapshot.file_name())).is_some() {
        on.push_str(", per device");
    }
    let first = match estimate(snapshot, &at, config) {
        Some(Ok(e)) => {
            let mut line = format!(
                "**Cost** {}{} ({on})",
                report::estimate_summary(&e),
                runs(snapshot, &at)
            );
            if let Some(dominant) = report::dominant_operand(&e.cost) {
                line.push_str(&format!(" · most read time: {dominant}"));
            }
            if let Some(roofline) = report::roofline(&e, &config.device) {
                line.push_str(&format!("\n\n{}", roofline.replace('\n', " · ")));
            }
            line
        }
        Some(Err(reason)) => format!("**Cost** not modelled: {reason}"),
        None => return Vec::new(),
    };
    // A paragraph of its own: the title, the producers as a list, a blank line.
    let mut lines = vec![first];
    lines.extend(
        fusion_lines(snapshot, &at, config)
            .into_iter()
            .map(|line| format!("- {line}")),
    );
    if let Some(last) = lines.last_mut() {
        last.push('\n');
    }
    lines
}

/// How many producers a hover weighs: each costs two estimates, and a hover stays
/// short; the rest are counted.
const HOVER_PRODUCERS: usize = 4;

/// The instruction a consumer reads: a multi-output producer is read through a
/// `get-tuple-element` of its result, which is no kernel of its own (the same step as
/// [`fusible::explain::reads`]).
fn through_tuple_element(computation: ComputationRef<'_>, id: InstrId) -> InstrId {
    let read = computation.instruction(id);
    match read.operands.first().and_then(|o| o.target) {
        Some(tuple) if read.opcode == Opcode::GetTupleElement => tuple,
        _ => id,
    }
}

/// `not fused with %fusion.7: both the producer and the consumer contain a reduce ·
/// fusing would save 3.2 µs`, for each operand of the kernel at `at` that another
/// kernel of its computation computes (the first [`HOVER_PRODUCERS`]).
fn fusion_lines(snapshot: &HloSnapshot, at: &KernelAt, config: &Config) -> Vec<String> {
    let module = snapshot.model().module(at.module);
    let computation = module.computation(at.computation);
    let consumer = computation.instruction(at.instruction);
    let hlo = Hlo::new(module);
    let view = snapshot.analysis_module(at.module);
    let model = Model::new(&view, module, computation, &config.device);
    let mut seen = Vec::new();
    let mut lines = Vec::new();
    for operand in &consumer.operands {
        let Some(id) = operand
            .target
            .map(|id| through_tuple_element(computation, id))
        else {
            continue;
        };
        let producer = computation.instruction(id);
        if seen.contains(&id) || !cost::is_kernel(producer) || producer.synthetic {
            continue;
        }
        seen.push(id);
        if seen.len() > HOVER_PRODUCERS {
            continue;
        }
        let decision = fusible::can_fuse(
            &hlo,
            Instr {
                computation: at.computation,
                id,
            },
            Instr {
                computation: at.computation,
                id: consumer.id,
            },
            &config.device,
        );
        // A custom call (a cuBLAS gemm, a user's kernel) is opaque: no fusion with
        // it exists, so what the cost model would say of one is beside the point.
        let opaque = [producer, consumer]
            .into_iter()
            .find_map(|i| i.custom_call_target());
        let verdict = match (decision.is_allowed(), opaque) {
            (true, _) => format!("`%{}` could fuse here", producer.name),
            (false, Some(target)) => {
                lines.push(format!(
                    "not fused with `%{}`: {} (custom-call `{target}`)",
                    producer.name,
                    decision.message()
                ));
                continue;
            }
            (false, None) => format!(
                "not fused with `%{}`: {}",
                producer.name,
                decision.message()
            ),
        };
        let times = model.run_times(producer, &[consumer]);
        let saving = if times.time_fused <= times.time_unfused {
            format!(
                "fusing would save {}",
                times.time_unfused - times.time_fused
            )
        } else {
            format!(
                "fusing would cost {} more",
                times.time_fused - times.time_unfused
            )
        };
        lines.push(format!("{verdict} · {saving}"));
    }
    if seen.len() > HOVER_PRODUCERS {
        let more = seen.len() - HOVER_PRODUCERS;
        lines.push(format!(
            "… {more} more operand(s) from other kernels: `hlo-lsp fusion FILE --producer NAME`"
        ));
    }
    lines
}

/// The costliest kernels of the document, for a ranked list that jumps to them.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranked {
    pub name: String,
    pub computation: String,
    pub kind: String,
    /// The time of one run.
    pub exec_time_us: f64,
    /// Runs per step (while bodies run once per iteration).
    pub count: u64,
    /// Every run's time per step, launches included.
    pub per_step_us: f64,
    pub summary: String,
    /// The instruction's name, in document bytes.
    pub range: Range<usize>,
}

/// The `limit` costliest kernels of every judged module, costliest first.
pub fn ranked(snapshot: &HloSnapshot, config: &Config, limit: usize) -> Vec<Ranked> {
    let mut all = Vec::new();
    for module in &snapshot.model().modules {
        if !judged(snapshot, module, config) {
            continue;
        }
        all.extend(report::ranked_kernels(
            module,
            &config.device,
            &StepOptions::default(),
        ));
    }
    all.sort_by_key(|k| std::cmp::Reverse(k.total().unwrap_or(cost::Duration::ZERO)));
    all.into_iter()
        .filter_map(|k| {
            let e = k.estimate.as_ref().ok()?;
            Some(Ranked {
                summary: report::estimate_summary(e),
                exec_time_us: e.cost.exec_time.as_micros_f64(),
                count: k.count.n,
                per_step_us: k.total().unwrap_or(cost::Duration::ZERO).as_micros_f64(),
                name: k.name.clone(),
                computation: k.computation_name.clone(),
                kind: k.kind.clone(),
                range: k.name_range.clone(),
            })
        })
        .take(limit)
        .collect()
}
