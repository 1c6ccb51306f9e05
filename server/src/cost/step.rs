//! One execution of a module's ENTRY on a GPU (a training or inference step): every
//! kernel with how many times it runs per step, the time the model for its kind gives
//! it ([`super::class`]), and the step's total.
//!
//! A kernel of a while body runs once per iteration: it counts as often as its loop's
//! trip count ([`crate::loops::trip_count`]), and a body nested in another loop as
//! often as the product. A loop whose count is unknown is counted once, and the total
//! says it is a lower bound. A conditional runs one branch: each branch's kernels are
//! listed, and the total takes the costliest branch. Every launch pays XLA's
//! `kKernelLaunchOverhead`, as `fusion`'s unfused times count it; what no model covers
//! is listed with its reason and kept out of the total.

use std::ops::Range;

use super::class::{classify, KernelClass};
use super::collective::{self, SolConfig};
use super::duration::Duration;
use super::kernel::{Bound, KernelCost, Model};
use super::launch::LaunchDims;
use super::tiled;
use super::KERNEL_LAUNCH_OVERHEAD;
use crate::analysis;
use crate::device::{Device, Unit};
use crate::loops;
use crate::model::{ComputationId, ComputationRef, InstrId, Instruction, Module, Opcode};
use crate::units;

/// Which of XLA's models gave a kernel its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelUsed {
    /// `GpuPerformanceModel` (emitted kernels).
    Performance,
    /// The tiled model of a block-level (Triton) fusion, with its output tiles.
    Tiled,
    /// A GEMM on the matrix units.
    Matrix,
    /// XLA's SoL model of a collective.
    Collective,
    /// A copy over the host link.
    HostLink,
}

impl ModelUsed {
    /// How the JSON and the words name it.
    pub fn name(self) -> &'static str {
        match self {
            ModelUsed::Performance => "gpu_performance_model",
            ModelUsed::Tiled => "tiled",
            ModelUsed::Matrix => "matrix_units",
            ModelUsed::Collective => "sol_collective",
            ModelUsed::HostLink => "host_link",
        }
    }

    /// Whether the kernel is a launch that pays `kKernelLaunchOverhead` (a
    /// collective's model counts its own launch).
    fn launches(self) -> bool {
        self != ModelUsed::Collective
    }
}

/// A kernel's estimate: the model's numbers and which model gave them.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub model: ModelUsed,
    pub cost: KernelCost,
    /// For a collective: what it is and who takes part.
    pub collective: Option<CollectiveFacts>,
    /// For a GEMM: XLA's `MatmulInterpolator` over its measured cuBLAS table, a
    /// second estimate beside the roofline at the matrix peak (`Err`: why there is
    /// none, e.g. the device has no table).
    pub measured_table: Option<Result<Duration, String>>,
    /// The peak rate the compute time is counted against (a GEMM's element type on
    /// the matrix units, else the CUDA cores).
    pub peak: Option<Peak>,
    /// For the tiled model: the tiles and warps it ran with; for a nested GEMM
    /// fusion, the tiles its `block_level_fusion_config` gives.
    pub tiles: Option<tiled::BlockLevelParameters>,
    /// Why XLA's tiled model gives those tiles no finite time (they would spill
    /// registers): the time shown is then the roofline at the matrix peak.
    pub tiles_refused: Option<String>,
}

/// A peak rate of operations, and what it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Peak {
    /// `the bf16 matrix peak`, `the CUDA cores' peak`.
    pub what: String,
    pub flops_per_second: f64,
}

/// What a report says of a collective besides its time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectiveFacts {
    /// `all-reduce`, `all-gather`, ... (a start's or wrapper's collective).
    pub kind: &'static str,
    /// Devices in each group.
    pub devices: Option<i64>,
    /// Nodes the traffic spans (1 inside a node).
    pub nodes: Option<i64>,
    /// How XLA's estimator found the time (`XLA's measurements (exact devices)`).
    pub method: String,
}

/// How many times a kernel runs per step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// The product of the trip counts of the loops around it (an unknown count is
    /// taken as 1).
    pub n: u64,
    /// Some loop around it has an unknown trip count: `n` is a lower bound.
    pub unknown: bool,
}

impl Count {
    const ONCE: Count = Count {
        n: 1,
        unknown: false,
    };

    fn times(self, loop_count: &LoopCount) -> Count {
        Count {
            n: self.n.saturating_mul(loop_count.trip_count.unwrap_or(1)),
            unknown: self.unknown || loop_count.trip_count.is_none(),
        }
    }
}

/// Where a while loop's trip count came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TripCountSource {
    /// `backend_config={"known_trip_count":{"n":"32"}}`, written by XLA.
    BackendConfig,
    /// XLA's while-loop analysis of the condition and the induction variable.
    Analysis,
    Unknown,
}

impl TripCountSource {
    pub fn name(self) -> &'static str {
        match self {
            TripCountSource::BackendConfig => "backend_config",
            TripCountSource::Analysis => "analysis",
            TripCountSource::Unknown => "unknown",
        }
    }
}

/// A while loop of the step with its trip count.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopCount {
    pub computation: ComputationId,
    pub instruction: InstrId,
    pub name: String,
    pub trip_count: Option<u64>,
    pub source: TripCountSource,
    /// Why the count is unknown (for [`TripCountSource::Unknown`]).
    pub reason: Option<String>,
    /// How many times the loop itself is entered per step.
    pub entered: Count,
}

/// One kernel of the step.
#[derive(Clone, Debug)]
pub struct StepKernel {
    pub computation: ComputationId,
    pub instruction: InstrId,
    pub name: String,
    /// The computation's name (`main`, a while body).
    pub computation_name: String,
    /// The fusion kind (`kLoop`, `kCustom`) or custom-call target, else the opcode.
    pub kind: String,
    /// The instruction's name, in document bytes.
    pub name_range: Range<usize>,
    pub count: Count,
    /// `branch 1 of %conditional.3` for a kernel of a conditional's branch.
    pub branch: Option<String>,
    /// The model's estimate, or why no model covers the kernel.
    pub estimate: Result<Estimate, String>,
}

impl StepKernel {
    /// Time of one execution (`None`: not modelled).
    pub fn time(&self) -> Option<Duration> {
        self.estimate.as_ref().ok().map(|e| e.cost.exec_time)
    }

    /// Time of every execution per step, launches included.
    pub fn total(&self) -> Option<Duration> {
        let e = self.estimate.as_ref().ok()?;
        let launch = if e.model.launches() {
            KERNEL_LAUNCH_OVERHEAD
        } else {
            Duration::ZERO
        };
        Some((e.cost.exec_time + launch).mul_i64(saturating_i64(self.count.n)))
    }
}

fn saturating_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Every kernel of one step of a module, and its total.
#[derive(Clone, Debug)]
pub struct Step {
    /// In call order from ENTRY (a body's kernels where its loop stands).
    pub kernels: Vec<StepKernel>,
    pub loops: Vec<LoopCount>,
    /// Every modelled kernel times its count, launches included; a conditional's
    /// costliest branch.
    pub total: Duration,
    /// The part of `total` that is `kKernelLaunchOverhead`.
    pub launch_overhead: Duration,
    /// The launches that pay it, per step (a collective's model counts its own).
    pub launches: u64,
    /// Some loop's trip count is unknown: its body counts once, and `total` is a
    /// lower bound.
    pub lower_bound: bool,
}

impl Step {
    /// The kernels no model covers.
    pub fn not_modelled(&self) -> impl Iterator<Item = &StepKernel> {
        self.kernels.iter().filter(|k| k.estimate.is_err())
    }
}

/// Which of XLA's two models costs the kernels its emitters generate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EmittedModel {
    /// `GpuPerformanceModel`: flops and bytes from `GpuHloCostAnalysis`.
    #[default]
    CostAnalysis,
    /// `GpuPerformanceModelWithIndexingAnalysis`: flops and bytes counted from each
    /// instruction's indexing maps (`EstimateRunTimeForFusion`).
    Indexing,
}

/// A tiling the user asks a fusion to be costed with (`cost --tiles`), in place of
/// its backend config's or the one XLA's search picks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileChoice {
    /// The fusion's name.
    pub fusion: String,
    /// One tile per output; `None`: the tiling XLA's search picks
    /// (`TryFindBestTilingForFusion`).
    pub output_tile_sizes: Option<Vec<Vec<i64>>>,
    /// Warps per block; `None`: what XLA's `GetNumWarps` gives the largest tile.
    pub num_warps: Option<i64>,
}

impl TileChoice {
    /// `NAME=16,128[/16][:WARPS]`: a tile per output, `/` between outputs; `NAME`
    /// alone: the best tiling XLA's search finds.
    pub fn parse(spec: &str) -> Result<TileChoice, String> {
        let Some((fusion, rest)) = spec.split_once('=') else {
            if spec.trim().is_empty() {
                return Err("expected NAME or NAME=SIZES[/SIZES][:WARPS]".into());
            }
            return Ok(TileChoice {
                fusion: spec.trim().trim_start_matches('%').to_string(),
                output_tile_sizes: None,
                num_warps: None,
            });
        };
        let (sizes, warps) = match rest.split_once(':') {
            Some((sizes, warps)) => (sizes, Some(warps)),
            None => (rest, None),
        };
        let number = |t: &str| {
            t.trim()
                .parse::<i64>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("{spec}: {t:?} is not a positive number"))
        };
        let output_tile_sizes = sizes
            .split('/')
            .map(|tile| {
                if tile.trim().is_empty() {
                    return Ok(vec![]);
                }
                tile.split(',')
                    .map(number)
                    .collect::<Result<Vec<i64>, String>>()
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(TileChoice {
            fusion: fusion.trim().trim_start_matches('%').to_string(),
            output_tile_sizes: Some(output_tile_sizes),
            num_warps: warps.map(number).transpose()?,
        })
    }
}

/// What the user chose of the step's models.
#[derive(Clone, Debug, Default)]
pub struct StepOptions {
    /// The collectives' SoL options (XLA's `xla_gpu_analytical_latency_estimator_options`).
    pub latency: SolConfig,
    pub emitted: EmittedModel,
    pub tiles: Vec<TileChoice>,
}

impl StepOptions {
    /// The tiling asked for fusion `name`, if any.
    fn tiles_of(&self, name: &str) -> Option<&TileChoice> {
        self.tiles.iter().find(|t| t.fusion == name)
    }
}

/// What the models of a module's kernels share: its collective estimator (XLA's
/// measured table for the device, read once) and the user's options.
pub struct Models<'a> {
    pub collectives: collective::Estimator<'a>,
    pub options: StepOptions,
}

impl<'a> Models<'a> {
    pub fn new(module: &'a Module, device: &'a Device, options: StepOptions) -> Models<'a> {
        Models {
            collectives: collective::Estimator::new(module, device, &options.latency),
            options,
        }
    }
}

/// Every kernel of one execution of `module`'s ENTRY on `device`, with the user's
/// options; `None` without an ENTRY computation.
pub fn step(module: &Module, device: &Device, options: &StepOptions) -> Option<Step> {
    let entry = module.entry_computation()?;
    let view = analysis::view::borrowed(module);
    let models = Models::new(module, device, options.clone());
    let mut walk = Walk::new(module, &view, &models, device);
    let time = walk.computation(entry, Count::ONCE, None);
    let launches = walk
        .kernels
        .iter()
        .filter(|k| k.estimate.as_ref().is_ok_and(|e| e.model.launches()))
        .fold(0u64, |sum, k| sum.saturating_add(k.count.n));
    let launch_overhead = KERNEL_LAUNCH_OVERHEAD.mul_i64(saturating_i64(launches));
    let lower_bound = walk.loops.iter().any(|l| l.trip_count.is_none());
    let Walk { kernels, loops, .. } = walk;
    Some(Step {
        kernels,
        loops,
        total: time.total,
        launch_overhead,
        launches,
        lower_bound,
    })
}

/// The estimate of `instr` as a kernel of its own, by the model for its kind
/// ([`classify`]): `None` when it launches nothing, `Err` with the reason when no
/// model covers it. A fusion the user gave tiles for is costed as a tiled one.
pub fn estimate_kernel(
    model: &Model<'_>,
    models: &Models<'_>,
    instr: &Instruction,
) -> Option<Result<Estimate, String>> {
    let class = classify(model.module, model.computation, instr);
    if instr.opcode == Opcode::Fusion && class != KernelClass::NotLaunched {
        if let Some(choice) = models.options.tiles_of(&instr.name) {
            return Some(tiled_with(model, instr, choice));
        }
    }
    Some(match class {
        KernelClass::NotLaunched => return None,
        KernelClass::NotModelled(reason) => Err(reason),
        KernelClass::Emitted => Ok(emitted_kernel(model, models.options.emitted, instr)),
        KernelClass::Tiled => Ok(tiled_kernel(model, instr)),
        KernelClass::Gemm => Ok(gemm_kernel(model, instr)),
        KernelClass::Collective => return collective_kernel(model, &models.collectives, instr),
        KernelClass::HostTransfer if model.device.host_bandwidth > 0 => {
            Ok(estimate(ModelUsed::HostLink, model.kernel(instr)))
        }
        KernelClass::HostTransfer => {
            Err("a host transfer: the device's host link bandwidth is not known".into())
        }
    })
}

/// A collective (or its start) by XLA's SoL latency estimator: its time and the
/// bytes it moves; `None` for the part of a pair that carries no time.
fn collective_kernel(
    model: &Model<'_>,
    collectives: &collective::Estimator<'_>,
    instr: &Instruction,
) -> Option<Result<Estimate, String>> {
    let cost = collectives.collective(model.computation, instr)?;
    if cost.part == collective::Part::Done {
        return None;
    }
    let time = match cost.time {
        Ok(time) => time,
        Err(why) => {
            return Some(Err(why
                .strip_prefix("not modelled: ")
                .map(str::to_string)
                .unwrap_or(why)))
        }
    };
    let how = cost.method.as_ref().map(collective::Method::describe);
    Some(Ok(Estimate {
        model: ModelUsed::Collective,
        cost: KernelCost {
            name: instr.name.to_string(),
            exec_time: time,
            compute_time: Duration::ZERO,
            read_time: time,
            write_time: Duration::ZERO,
            flops: 0,
            bytes_read: cost.bytes,
            bytes_written: 0,
            bound: Bound::Memory,
            launch: LaunchDims {
                num_blocks: 0,
                threads_per_block: 0,
                emitter: "collective".into(),
            },
            operands: vec![],
            units: Unit::Vector,
        },
        collective: Some(CollectiveFacts {
            kind: cost.kind,
            devices: cost.devices,
            nodes: cost.nodes,
            method: how.unwrap_or_default(),
        }),
        measured_table: None,
        peak: None,
        tiles: None,
        tiles_refused: None,
    }))
}

/// The time of a computation's kernels per execution of it.
#[derive(Clone, Copy, Debug, Default)]
struct Time {
    total: Duration,
}

/// The walk from ENTRY through the computations that launch kernels.
struct Walk<'a, 'e> {
    module: &'a Module,
    /// The analysis view of the module.
    view: &'a analysis::Module<'a>,
    /// The module's collective estimator and the user's options.
    models: &'e Models<'a>,
    device: &'a Device,
    kernels: Vec<StepKernel>,
    loops: Vec<LoopCount>,
    /// Computations being walked: a call back into one is recursion (an error the
    /// model reports), not walked again.
    on_path: Vec<ComputationId>,
}

impl<'a, 'e> Walk<'a, 'e> {
    fn new(
        module: &'a Module,
        view: &'a analysis::Module<'a>,
        models: &'e Models<'a>,
        device: &'a Device,
    ) -> Walk<'a, 'e> {
        Walk {
            module,
            view,
            models,
            device,
            kernels: vec![],
            loops: vec![],
            on_path: vec![],
        }
    }

    /// Lists the kernels of `computation` run `count` times per step, and returns
    /// the time of one run of it.
    fn computation(
        &mut self,
        computation: ComputationRef<'a>,
        count: Count,
        branch: Option<&str>,
    ) -> Time {
        if self.on_path.contains(&computation.id) || crate::budget::exhausted() {
            return Time::default();
        }
        self.on_path.push(computation.id);
        let model = Model::new(self.view, self.module, computation, self.device);
        let mut total = Duration::ZERO;
        for instr in &computation.model().instructions {
            if instr.synthetic {
                continue;
            }
            total += match instr.opcode {
                Opcode::While => self.while_loop(computation, instr, count, branch),
                Opcode::Conditional => self.conditional(instr, count),
                Opcode::Call => self.call(instr, count, branch),
                _ => self.kernel(&model, computation, instr, count, branch),
            };
        }
        self.on_path.pop();
        Time { total }
    }

    /// A kernel (or nothing, for what launches none): listed, and its time per run
    /// of its computation returned.
    fn kernel(
        &mut self,
        model: &Model<'a>,
        computation: ComputationRef<'a>,
        instr: &Instruction,
        count: Count,
        branch: Option<&str>,
    ) -> Duration {
        let Some(estimate) = estimate_kernel(model, self.models, instr) else {
            return Duration::ZERO;
        };
        let kernel = StepKernel {
            computation: computation.id,
            instruction: instr.id,
            name: instr.name.to_string(),
            computation_name: computation.name.clone(),
            kind: kind(instr),
            name_range: computation.abs(instr.name_range),
            count,
            branch: branch.map(str::to_string),
            estimate,
        };
        let per_run = kernel
            .estimate
            .as_ref()
            .ok()
            .map(|e| {
                e.cost.exec_time
                    + if e.model.launches() {
                        KERNEL_LAUNCH_OVERHEAD
                    } else {
                        Duration::ZERO
                    }
            })
            .unwrap_or(Duration::ZERO);
        self.kernels.push(kernel);
        per_run
    }

    /// A while loop: its condition runs one more time than its body.
    fn while_loop(
        &mut self,
        computation: ComputationRef<'a>,
        instr: &Instruction,
        count: Count,
        branch: Option<&str>,
    ) -> Duration {
        let mut loop_count = trip_count(self.module, computation, instr);
        loop_count.entered = count;
        let n = loop_count.trip_count.unwrap_or(1);
        let body_count = count.times(&loop_count);
        let condition_count = Count {
            n: body_count.n.saturating_add(count.n),
            unknown: body_count.unknown,
        };
        self.loops.push(loop_count);
        let mut time = Duration::ZERO;
        if let Some(condition) = self.module.called_computation(instr, "condition") {
            time += self
                .computation(condition, condition_count, branch)
                .total
                .mul_i64(saturating_i64(n.saturating_add(1)));
        }
        if let Some(body) = self.module.called_computation(instr, "body") {
            time += self
                .computation(body, body_count, branch)
                .total
                .mul_i64(saturating_i64(n));
        }
        time
    }

    /// A conditional: one branch runs; the costliest counts.
    fn conditional(&mut self, instr: &Instruction, count: Count) -> Duration {
        let branches: Vec<_> = instr
            .called
            .iter()
            .filter(|c| {
                matches!(
                    c.attribute.as_str(),
                    "branch_computations" | "true_computation" | "false_computation"
                )
            })
            .filter_map(|c| Some((c.attribute.as_str(), self.module.resolve(c)?)))
            .collect();
        let mut worst = Duration::ZERO;
        for (k, (attribute, branch)) in branches.into_iter().enumerate() {
            let label = match attribute {
                "true_computation" => format!("true branch of %{}", instr.name),
                "false_computation" => format!("false branch of %{}", instr.name),
                _ => format!("branch {k} of %{}", instr.name),
            };
            let time = self.computation(branch, count, Some(&label)).total;
            worst = worst.max(time);
        }
        worst
    }

    /// A `call`: its computation runs where it stands.
    fn call(&mut self, instr: &Instruction, count: Count, branch: Option<&str>) -> Duration {
        match self.module.called_computation(instr, "to_apply") {
            Some(callee) => self.computation(callee, count, branch).total,
            None => Duration::ZERO,
        }
    }
}

fn estimate(model: ModelUsed, cost: KernelCost) -> Estimate {
    Estimate {
        model,
        cost,
        collective: None,
        measured_table: None,
        peak: None,
        tiles: None,
        tiles_refused: None,
    }
}

/// A GEMM: the roofline at the matrix peak of its element type (what
/// [`Model::kernel`] gives it), with XLA's interpolation over its measured table
/// beside it.
fn gemm_kernel(model: &Model<'_>, instr: &Instruction) -> Estimate {
    let mut e = estimate(ModelUsed::Matrix, model.kernel(instr));
    if let Some(gemm) = super::gemm::Gemm::of(model.module, model.computation, instr) {
        let dtype = &gemm.lhs.element;
        let matrix = model.device.peak_ops_per_ns(Unit::Matrix, dtype).is_some();
        e.peak = Some(Peak {
            what: if matrix {
                format!("the {} matrix peak", dtype.name())
            } else {
                format!("the CUDA cores' peak (no {} matrix rate)", dtype.name())
            },
            flops_per_second: model.device.peak_matrix_ops_per_ns(dtype) as f64 * 1e9,
        });
        e.measured_table = Some(super::matmul::estimate(
            model.module,
            model.computation,
            instr,
            model.device,
        ));
        if gemm.kind == super::gemm::GemmKind::TritonNestedGemm {
            refused_tiles(model, instr, &mut e);
        }
    }
    e
}

/// A nested GEMM fusion's configured tiles, and why XLA's tiled model refuses
/// them when it does (`EstimateRunTimeForTriton` gives infinite time for a tile
/// that would not fit in registers; the estimate falls back to the roofline).
fn refused_tiles(model: &Model<'_>, instr: &Instruction, e: &mut Estimate) {
    let Some(params) = tiled::configured_parameters(model, instr) else {
        return;
    };
    if let Ok(run) = tiled::estimate_tiled(model, instr, &params) {
        if run.exec_time.is_infinite() {
            let sizes = params
                .output_tile_sizes
                .iter()
                .map(|t| t.iter().map(i64::to_string).collect::<Vec<_>>().join("×"))
                .collect::<Vec<_>>()
                .join(", ");
            e.tiles_refused = Some(format!(
                "XLA's tiled model refuses the {sizes} tiles (a tile above 40% of a block's {} registers spills): the roofline instead",
                units::grouped(model.device.registers_per_block_limit as f64)
            ));
        }
    }
    e.tiles = Some(params);
}

/// The fusion kind (`kLoop`), custom-call target or opcode, as a kernel is labelled.
pub fn kind(instr: &Instruction) -> String {
    let attrs = instr.attrs();
    match instr.opcode {
        Opcode::Fusion => attrs.fusion_kind.as_deref().unwrap_or("fusion").to_string(),
        Opcode::CustomCall => instr
            .custom_call_target()
            .unwrap_or("custom-call")
            .to_string(),
        _ => instr.opcode.name().to_string(),
    }
}

/// An emitted kernel by the model the user chose (XLA's cost-analysis one unless
/// asked for the indexing one).
fn emitted_kernel(model: &Model<'_>, emitted: EmittedModel, instr: &Instruction) -> Estimate {
    match emitted {
        EmittedModel::CostAnalysis => estimate(ModelUsed::Performance, model.kernel(instr)),
        EmittedModel::Indexing => {
            let run = tiled::estimate_indexed(model, instr);
            let mut cost = model.kernel(instr);
            cost.exec_time = run.exec_time;
            cost.compute_time = run.compute_time;
            cost.read_time = run.read_time;
            cost.write_time = run.write_time;
            cost.flops = run.flops;
            cost.bytes_read = run.bytes_read;
            cost.bytes_written = run.bytes_written;
            cost.bound = bound_of(&run);
            estimate(ModelUsed::Performance, cost)
        }
    }
}

fn bound_of(run: &tiled::RunTimeData) -> Bound {
    if run.compute_time > run.read_time + run.write_time {
        Bound::Compute
    } else {
        Bound::Memory
    }
}

/// A Triton fusion by the tiled model with the tiles in its backend config, or with
/// the best tiling XLA's search would pick when it gives none.
fn tiled_kernel(model: &Model<'_>, instr: &Instruction) -> Estimate {
    let run = match tiled::configured_parameters(model, instr) {
        Some(params) => tiled::estimate_tiled(model, instr, &params).map(|r| (r, params)),
        None => tiled::best_tiling(model, instr).map(|t| (t.runtime, t.parameters)),
    };
    match run {
        Ok((run, params)) => tiled_estimate(model, instr, run, params),
        Err(_) => estimate(ModelUsed::Performance, model.kernel(instr)),
    }
}

/// A fusion by the tiled model with the tiles the user gave (`Err` when they do not
/// fit it: another rank, a tile that is not a hyper-rectangle).
fn tiled_with(
    model: &Model<'_>,
    instr: &Instruction,
    choice: &TileChoice,
) -> Result<Estimate, String> {
    let not_applied = |why: String| format!("the tiles asked for do not apply: {why}");
    let Some(sizes) = &choice.output_tile_sizes else {
        let best = tiled::best_tiling(model, instr)
            .map_err(|why| format!("no tiling of this fusion is valid: {why}"))?;
        return Ok(tiled_estimate(model, instr, best.runtime, best.parameters));
    };
    let warps = match choice.num_warps {
        Some(warps) => warps,
        None => tiled::estimate_num_warps(model, instr, sizes).map_err(not_applied)?,
    };
    let parameters = tiled::BlockLevelParameters::new(sizes.clone(), warps);
    let run = tiled::estimate_tiled(model, instr, &parameters).map_err(not_applied)?;
    Ok(tiled_estimate(model, instr, run, parameters))
}

/// The estimate of a tiled run, with its tiles.
fn tiled_estimate(
    model: &Model<'_>,
    instr: &Instruction,
    run: tiled::RunTimeData,
    params: tiled::BlockLevelParameters,
) -> Estimate {
    let threads = params.num_warps.saturating_mul(model.device.warp_size);
    let mut e = estimate(
        ModelUsed::Tiled,
        KernelCost {
            name: instr.name.to_string(),
            exec_time: run.exec_time,
            compute_time: run.compute_time,
            read_time: run.read_time,
            write_time: run.write_time,
            flops: run.flops,
            bytes_read: run.bytes_read,
            bytes_written: run.bytes_written,
            bound: bound_of(&run),
            launch: LaunchDims {
                num_blocks: run.num_blocks,
                threads_per_block: threads,
                emitter: "triton".into(),
            },
            operands: vec![],
            units: Unit::Vector,
        },
    );
    e.tiles = Some(params);
    e
}

/// A while loop's trip count ([`loops::trip_count`]: XLA's `known_trip_count`, else
/// XLA's while-loop analysis, else unknown with the reason).
fn trip_count(module: &Module, computation: ComputationRef<'_>, instr: &Instruction) -> LoopCount {
    let count = loops::trip_count(module, computation, instr);
    let (source, reason) = match &count.source {
        loops::Source::BackendConfig => (TripCountSource::BackendConfig, None),
        loops::Source::Analysis(_) => (TripCountSource::Analysis, None),
        loops::Source::Unknown(why) => (TripCountSource::Unknown, Some(why.clone())),
    };
    LoopCount {
        computation: computation.id,
        instruction: instr.id,
        name: instr.name.to_string(),
        trip_count: count.n,
        source,
        reason,
        entered: Count::ONCE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model;

    const LOOP: &str = r#"HloModule m

body {
  p = (s32[], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x = f32[1024] get-tuple-element(p), index=1
  e = f32[1024] exponential(x)
  ROOT t = (s32[], f32[1024]) tuple(next, e)
}

cond {
  p = (s32[], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[1024] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[1024]) tuple(zero, x)
  w = (s32[], f32[1024]) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"8"}}
  r = f32[1024] get-tuple-element(w), index=1
  ROOT n = f32[1024] negate(r)
}
"#;

    #[test]
    fn tiles_are_read_from_the_command_line() {
        let t = TileChoice::parse("%fusion=1,4/16:8").unwrap();
        assert_eq!(t.fusion, "fusion");
        assert_eq!(t.output_tile_sizes, Some(vec![vec![1, 4], vec![16]]));
        assert_eq!(t.num_warps, Some(8));
        assert_eq!(TileChoice::parse("f=9,9,9").unwrap().num_warps, None);
        assert!(TileChoice::parse("f=0,4").is_err());
        assert_eq!(TileChoice::parse("f").unwrap().output_tile_sizes, None);
        assert!(TileChoice::parse("").is_err());
    }

    #[test]
    fn a_body_counts_once_per_iteration() {
        let file = model::parse_hlo(LOOP);
        let step = step(&file.modules[0], &Device::h100(), &StepOptions::default()).unwrap();
        let count = |name: &str| step.kernels.iter().find(|k| k.name == name).unwrap().count;
        assert_eq!(count("e").n, 8);
        assert_eq!(count("next").n, 8);
        // The condition runs once more than the body.
        assert_eq!(count("lt").n, 9);
        assert_eq!(count("n").n, 1);
        assert_eq!(step.loops.len(), 1);
        assert_eq!(step.loops[0].trip_count, Some(8));
        assert!(!step.lower_bound);
        let sum = step
            .kernels
            .iter()
            .filter_map(StepKernel::total)
            .fold(Duration::ZERO, |s, t| s + t);
        assert_eq!(step.total, sum);
        // Every launch pays the overhead: 8 x (e, next) + 9 x lt + n.
        assert_eq!(step.launch_overhead, KERNEL_LAUNCH_OVERHEAD.mul_i64(26));
    }

    #[test]
    fn an_unknown_trip_count_makes_the_total_a_lower_bound() {
        // The loop runs until the counter exceeds a value the data holds: no
        // known_trip_count, and nothing XLA's analysis can count.
        let text = LOOP
            .replace(r#", backend_config={"known_trip_count":{"n":"8"}}"#, "")
            .replace(
                "  n = s32[] constant(8)\n  ROOT lt = pred[] compare(i, n), direction=LT",
                "  x = f32[1024] get-tuple-element(p), index=1\n  z = f32[] constant(0)\n  \
                 m = f32[] reduce(x, z), dimensions={0}, to_apply=add\n  \
                 n = s32[] convert(m)\n  ROOT lt = pred[] compare(i, n), direction=LT",
            )
            .replace(
                "ENTRY e {",
                "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {",
            );
        let file = model::parse_hlo(&text);
        assert!(
            !file
                .diagnostics
                .iter()
                .any(|d| d.severity == crate::model::Severity::Error),
            "{text}"
        );
        let step = step(&file.modules[0], &Device::h100(), &StepOptions::default()).unwrap();
        assert!(step.lower_bound);
        let e = step.kernels.iter().find(|k| k.name == "e").unwrap();
        assert!(e.count.unknown);
    }
}
