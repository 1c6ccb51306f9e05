//! The facts behind the indexing-map sections of a hover, gathered from the analysis
//! for [`crate::hover`] to lay out.
//!
//! For an instruction: its output-to-input maps per operand with utilization (on a
//! fusion, the analysis composes through the fused computation, per output). Inside
//! a computation called by a fusion, also the composed maps from every fusion output
//! that reaches the instruction, and the maps from this instruction to the fusion
//! parameters it reads. With `physicalLayout` every map goes between physical
//! (layout-ordered) index spaces.

use rayon::prelude::*;

use super::config::Config;
use super::snapshot::{FusedMaps, HloSnapshot};
use crate::analysis::fusion::Reached;
use crate::analysis::{self, layout, recompute, utilization, ArrayShape, OperandIndexing, Query};
use crate::hover::{FusionReach, InstructionHover, Labelled, Reads};
use crate::model::{self, ComputationId, ComputationRef, Instruction, Module, ModuleId};

/// Domain points a hover enumerates to make utilization exact; beyond that it shows
/// the closed form or an estimate, so a hover stays fast on huge operands.
const HOVER_UTILIZATION_BUDGET: u128 = 200_000;

/// Id of `module` in the snapshot's model (modules are split by `// -----`).
pub fn module_id(snapshot: &HloSnapshot, module: &Module) -> Option<ModuleId> {
    snapshot
        .model()
        .modules
        .iter()
        .position(|m| std::ptr::eq(m, module))
        .map(|k| ModuleId(k as u32))
}

/// The fusion instruction calling `computation`, if it is a fused computation.
pub fn calling_fusion(module: &Module, computation: ComputationId) -> Option<&Instruction> {
    let site = module.callers_of(computation).first()?;
    let (_, caller) = module.caller(site)?;
    (caller.opcode.name() == "fusion").then_some(caller)
}

/// What the maps inside a computation are composed from: the output of the fusion
/// calling it, or, in a document whose functions compose (StableHLO: a JAX
/// function is not fused yet), the function's own result, which plays the fusion
/// output's role.
#[derive(Clone, Copy, Debug)]
pub enum Composer<'a> {
    Fusion(&'a Instruction),
    /// A function (the entry, or a computation `call`s name) and its root.
    Function {
        name: &'a str,
        root: &'a Instruction,
    },
}

impl Composer<'_> {
    /// The name it is shown by: `%fusion.3`, `@main`.
    pub fn label(&self) -> String {
        match self {
            Composer::Fusion(f) => format!("%{}", f.name),
            Composer::Function { name, .. } => format!("@{name}"),
        }
    }

    /// The shape of its output(s).
    fn shape(&self) -> &model::Shape {
        match self {
            Composer::Fusion(f) => &f.shape,
            Composer::Function { root, .. } => &root.shape,
        }
    }
}

/// The composer of `computation`'s maps, if it has one (see [`Composer`]).
pub fn composer<'a>(
    snapshot: &HloSnapshot,
    module: &'a Module,
    computation: ComputationId,
) -> Option<Composer<'a>> {
    if let Some(fusion) = calling_fusion(module, computation) {
        return Some(Composer::Fusion(fusion));
    }
    if !snapshot.functions_compose() {
        return None;
    }
    let is_entry = module.entry == Some(computation);
    let callers = module.callers_of(computation);
    let called = !callers.is_empty()
        && callers.iter().all(|site| {
            module
                .caller(site)
                .is_some_and(|(_, i)| i.opcode.name() == "call")
        });
    if !(is_entry || called) {
        return None;
    }
    let c = module.computation(computation).model();
    let root = c.root.map(|id| &c.instructions[id.index()])?;
    Some(Composer::Function {
        name: &c.name,
        root,
    })
}

/// A shape without its layout: `f32[8,128]`.
pub fn short_shape(shape: &model::Shape) -> String {
    match shape {
        model::Shape::Array(_) => shape.logical_text(),
        other => other.to_string(),
    }
}

/// Output `k` of a (possibly tuple-shaped) model shape.
fn model_output(shape: &model::Shape, k: usize) -> Option<&model::Shape> {
    if shape.is_tuple() {
        shape.tuple_element(k)
    } else {
        (k == 0).then_some(shape)
    }
}

/// One instruction of the snapshot, located in both the model and the analysis view.
struct Site<'a> {
    snapshot: &'a HloSnapshot,
    config: &'a Config,
    module: &'a Module,
    module_id: ModuleId,
    view: &'a analysis::Module<'static>,
    computation: ComputationId,
    instruction: &'a Instruction,
}

impl Site<'_> {
    fn node(&self) -> Option<&analysis::Node> {
        self.view
            .get(self.computation.index())?
            .nodes
            .get(self.instruction.id.index())
    }

    fn model_computation(&self) -> ComputationRef<'_> {
        self.module.computation(self.computation)
    }

    /// An analysis shape as the maps see it: physical extents in physical mode.
    fn extents(&self, shape: &ArrayShape) -> Vec<i64> {
        if self.config.physical_layout {
            shape.physical_dims()
        } else {
            shape.dims.clone()
        }
    }

    /// Rewrites `entry` (from `from` to `to`) between physical spaces if asked.
    fn physical(&self, entry: &mut OperandIndexing, from: &ArrayShape, to: &ArrayShape) {
        if self.config.physical_layout {
            for m in &mut entry.maps {
                *m = layout::to_physical(m, from, to);
            }
        }
    }

    /// [`Self::utilization`], computed once per distinct map set in `cache` (the
    /// outputs of a multi-output fusion often read an operand alike).
    fn utilization_once(
        &self,
        cache: &mut Vec<(OperandIndexing, Option<utilization::Utilization>)>,
        entry: &OperandIndexing,
        target: &[i64],
    ) -> Option<utilization::Utilization> {
        if let Some((_, u)) = cache.iter().find(|(e, _)| e == entry) {
            return *u;
        }
        let u = self.utilization(entry, target);
        cache.push((entry.clone(), u));
        u
    }

    /// How many times the calling loop fusion computes each element of fused
    /// instruction `node`, if that is expensive work computed more often than the
    /// re-read budget allows: `(times, opcode)`.
    fn recomputed(&self, fused: &FusedMaps, node: usize) -> Option<(f64, String)> {
        let comp = self.computation.index();
        let n = self.view.get(comp)?.nodes.get(node)?;
        if n.parameter_number.is_some() || !recompute::is_expensive(&n.op.opcode) {
            return None;
        }
        let fusion = calling_fusion(self.module, self.computation)?;
        if !recompute::recomputes(fusion.attrs().fusion_kind.as_deref()) {
            return None;
        }
        let reached: Vec<&Reached> = fused.reaching(node).map(|(_, r)| r).collect();
        let shape = n.op.shape.output(first_tag(reached.first()?))?;
        let times = recompute::computations_per_element(&reached, shape, HOVER_UTILIZATION_BUDGET)?;
        (times > self.config.utilization_budget).then(|| (times, n.op.opcode.clone()))
    }

    /// How much of a tensor with extents `target` the maps read; nothing for a
    /// scalar (read once per element by design).
    fn utilization(
        &self,
        entry: &OperandIndexing,
        target: &[i64],
    ) -> Option<utilization::Utilization> {
        if target.is_empty() {
            return None;
        }
        self.snapshot.utilization(entry, target, || {
            utilization::utilization(
                entry,
                &ArrayShape::new(target.to_vec()),
                HOVER_UTILIZATION_BUDGET,
            )
        })
    }
}

/// Fills the map sections of `hover` for `instruction`; nothing when the analysis
/// has no view of it.
pub fn instruction_maps(
    snapshot: &HloSnapshot,
    module: &Module,
    computation: ComputationId,
    instruction: &Instruction,
    config: &Config,
    hover: &mut InstructionHover,
) {
    let Some(module_id) = module_id(snapshot, module) else {
        return;
    };
    let view = snapshot.analysis_module(module_id);
    let site = Site {
        snapshot,
        config,
        module,
        module_id,
        view: &view,
        computation,
        instruction,
    };
    if site.node().is_none() {
        return;
    }
    let file = snapshot.file_name();
    let composer = composer(snapshot, module, computation);
    let from_fusion = if matches!(composer, Some(Composer::Fusion(_))) {
        " --from-fusion"
    } else {
        ""
    };
    hover.whole_text = Some(format!(
        "hlo-lsp maps{from_fusion} --instruction {} {file}",
        instruction.name
    ));
    let root_tuple = module.computation(computation).root == Some(instruction.id)
        && instruction.opcode.name() == "tuple";
    // What reaches the instructions this hover reads, made for them alone.
    let fused = composer
        .map(|_| snapshot.fused_maps_reaching(module_id, computation, &read_instructions(&site)));
    if let Some(composer) = composer.filter(|_| root_tuple) {
        // The outputs themselves: the fusion's hover has their maps to the parameters.
        let what = match composer {
            Composer::Fusion(_) => "root of fusion",
            Composer::Function { .. } => "result of",
        };
        hover.notes.push(format!(
            "The {what} `{}`: output k is operand k.",
            composer.label()
        ));
    } else if let (Some(composer), Some(fused)) = (composer, &fused) {
        hover.fusion = Some(fusion_reach(&site, composer, fused));
        if instruction.parameter_number.is_none() {
            hover.parameters = parameters_read(&site);
        }
    }
    if instruction.parameter_number.is_none() {
        hover.operands = operands(&site, fused.as_deref());
    }
}

/// The fused instructions whose maps from the fusion outputs a hover on the site
/// reads: its own, and each operand's producer whose recomputation it may warn of
/// ([`Site::recomputed`], [`recomputation_warning`]).
fn read_instructions(site: &Site<'_>) -> Vec<usize> {
    let mut read = vec![site.instruction.id.index()];
    if let Some(comp) = site.view.get(site.computation.index()) {
        for operand in site.instruction.operands.iter().filter_map(|o| o.target) {
            let producer = recompute::producer(comp, operand.index());
            let expensive = comp.nodes.get(producer).is_some_and(|n| {
                n.parameter_number.is_none() && recompute::is_expensive(&n.op.opcode)
            });
            if expensive {
                read.push(producer);
            }
        }
    }
    read
}

/// The maps from every fusion output that reaches the instruction.
fn fusion_reach(site: &Site<'_>, composer: Composer<'_>, fused: &FusedMaps) -> FusionReach {
    let node = site.node().expect("checked by the caller");
    let comp = site.computation.index();
    let is_parameter = site.instruction.parameter_number.is_some();
    let count = fused.outputs.len();
    let mut outputs = Vec::new();
    let mut seen = Vec::new();
    // Expensive work this loop fusion computes more than once per element: say so
    // on the outputs that read it more than once.
    let recomputed = site.recomputed(fused, site.instruction.id.index());
    for (k, reached) in fused.reaching(site.instruction.id.index()) {
        let from = analysis::fusion::output_start(site.view, comp, k).and_then(|(start, out)| {
            site.view.computation(comp).nodes[start]
                .op
                .shape
                .output(out)
        });
        let to = node.op.shape.output(first_tag(reached));
        let mut maps = reached.to_entry();
        if let (Some(from), Some(to)) = (from, to) {
            site.physical(&mut maps, from, to);
        }
        let target = to.map(|t| site.extents(t)).unwrap_or_default();
        // A parameter's maps are the fusion's reads of that operand: say how much
        // of it they read (computed once per distinct map set).
        let utilization = if is_parameter || recomputed.is_some() {
            site.utilization_once(&mut seen, &maps, &target)
        } else {
            None
        };
        let warning = match (&recomputed, &utilization) {
            (Some((_, opcode)), Some(u)) if u.max_multiplicity() > site.config.utilization_budget => {
                Some(format!(
                    "recomputed {:.2}×: the loop fusion computes each element of this {opcode} once per output element that reads it",
                    u.max_multiplicity()
                ))
            }
            _ => None,
        };
        let shape = model_output(composer.shape(), k)
            .map(short_shape)
            .unwrap_or_default();
        outputs.push(Labelled {
            output: (count > 1).then_some((k, shape)),
            maps,
            domain: from.map(|f| site.extents(f)).unwrap_or_default(),
            target,
            utilization: utilization.filter(|u| !plain(u) && warning.is_none()),
            warning,
        });
    }
    FusionReach {
        fusion: composer.label(),
        function: matches!(composer, Composer::Function { .. }),
        output_count: count,
        outputs,
    }
}

/// Which output of the instruction the reached maps index (0 unless it is
/// tuple-shaped inside the fusion).
fn first_tag(reached: &Reached) -> usize {
    reached.maps.first().map_or(0, |(tag, _)| *tag)
}

/// Every element read exactly once: nothing worth a word.
fn plain(u: &utilization::Utilization) -> bool {
    u.exact && u.fraction >= 1.0 && (u.multiplicity - 1.0).abs() < 1e-9
}

/// The fusion parameters this instruction reads, with maps from its own index.
fn parameters_read(site: &Site<'_>) -> Vec<Reads> {
    let comp = site.computation.index();
    let node = site.node().expect("checked by the caller");
    let reached =
        analysis::fusion::grouped_from_instruction(site.view, comp, site.instruction.id.index());
    let computation = site.model_computation();
    let mut parameters: Vec<(u32, &Instruction)> = computation
        .instructions
        .iter()
        .filter_map(|i| i.parameter_number.map(|k| (k, i)))
        .filter(|(_, i)| reached.get(i.id.index()).is_some_and(Reached::is_read))
        .collect();
    parameters.sort_by_key(|(k, _)| *k);
    parameters
        .into_iter()
        .map(|(k, parameter)| {
            let r = &reached[parameter.id.index()];
            let view_parameter = &site.view.computation(comp).nodes[parameter.id.index()];
            let to = view_parameter.op.shape.output(0);
            let from = node.op.shape.output(first_tag(r));
            let mut maps = r.to_entry();
            if let (Some(from), Some(to)) = (from, to) {
                site.physical(&mut maps, from, to);
            }
            Reads {
                name: format!("%{}", parameter.name),
                role: format!("parameter {k}"),
                shape: short_shape(&parameter.shape),
                reads: vec![Labelled {
                    output: None,
                    maps,
                    domain: from.map(|f| site.extents(f)).unwrap_or_default(),
                    target: to.map(|t| site.extents(t)).unwrap_or_default(),
                    utilization: None,
                    warning: None,
                }],
                extra: Vec::new(),
            }
        })
        .collect()
}

/// Why reading `operand` may cost something: it is (a one-to-one move of) expensive
/// work that the calling loop fusion recomputes for every read.
fn recomputation_warning(
    site: &Site<'_>,
    fused: Option<&FusedMaps>,
    operand: Option<crate::model::InstrId>,
) -> Option<String> {
    calling_fusion(site.module, site.computation)?;
    let comp = site.view.get(site.computation.index())?;
    let producer = recompute::producer(comp, operand?.index());
    let (times, opcode) = site.recomputed(fused?, producer)?;
    Some(format!(
        "recomputed {times:.2}×: the loop fusion computes each element of `%{}` ({opcode}) once per output element that reads it",
        comp.nodes[producer].name
    ))
}

/// The instruction's operands with their maps (per output of a multi-output
/// instruction) and utilization; `fused`, inside a fused computation, what reaches
/// the operands' producers ([`read_instructions`]).
fn operands(site: &Site<'_>, fused_here: Option<&FusedMaps>) -> Vec<Reads> {
    let node = site.node().expect("checked by the caller");
    let count = node.op.shape.output_count().max(1);
    let fused = (node.op.opcode == "fusion" && node.is_composite()).then(|| {
        (
            node.called[0],
            site.snapshot
                .fused_maps(site.module_id, ComputationId(node.called[0] as u32)),
        )
    });
    let per_output = per_output_indexing(site, count, fused.as_ref().map(|(c, f)| (*c, &**f)));
    let computation = site.model_computation();
    (0..site.instruction.operands.len())
        .map(|j| {
            let operand = site.instruction.operands[j]
                .target
                .map(|id| computation.instruction(id));
            let target = node
                .op
                .operands
                .get(j)
                .and_then(|s| s.as_array())
                .map(|a| site.extents(a))
                .unwrap_or_default();
            let mut seen = Vec::new();
            let warning =
                recomputation_warning(site, fused_here, site.instruction.operands[j].target);
            let reads = per_output
                .iter()
                .enumerate()
                .filter_map(|(k, indexing)| {
                    let maps = indexing.entries.get(j)?.clone();
                    if count > 1 && maps.maps.is_empty() && maps.unknown.is_none() {
                        return None; // this output does not read the operand
                    }
                    let u = site.utilization_once(&mut seen, &maps, &target);
                    // The read starts the recomputation only if it reads the work
                    // more than once per element itself.
                    let warning = warning.clone().filter(|_| {
                        u.is_some_and(|u| u.max_multiplicity() > site.config.utilization_budget)
                    });
                    let domain = node.op.shape.output(k).map(|a| site.extents(a));
                    Some(Labelled {
                        output: (count > 1).then(|| (k, String::new())),
                        maps,
                        domain: domain.unwrap_or_default(),
                        target: target.clone(),
                        utilization: u.filter(|u| !plain(u)),
                        warning,
                    })
                })
                .collect();
            // The header already shows the operands' shapes.
            Reads {
                name: operand.map(|o| format!("%{}", o.name)).unwrap_or_default(),
                role: String::new(),
                shape: String::new(),
                reads,
                extra: Vec::new(),
            }
        })
        .collect()
}

/// Each output's maps to the instruction's operands. A fusion's come from its fused
/// computation's cached maps (the same as composing again). Anything else is
/// composed, the outputs sharing what they meet inside a called computation: a
/// `call` of a whole layer composes through every fusion of the layer for each
/// output, 0.9 s for the 80 outputs of one on a 58 MiB dump, 0.27 s shared and
/// spread over the cores.
fn per_output_indexing(
    site: &Site<'_>,
    count: usize,
    fused: Option<(usize, &FusedMaps)>,
) -> Vec<analysis::InstructionIndexing> {
    let node = site.node().expect("checked by the caller");
    let memo = analysis::memo::Memo::new();
    let budget = crate::budget::current();
    let one = |output: usize| {
        if let Some((called, fused)) = fused {
            let mut indexing = match fused.outputs.get(output) {
                Some(reached) => analysis::fusion::parameter_entries(
                    site.view,
                    called,
                    reached,
                    node.operands.len(),
                ),
                None => analysis::InstructionIndexing::all_unknown(
                    node.operands.len(),
                    &analysis::Unknown::malformed("the fusion has no such output"),
                ),
            };
            if let (true, Some(from)) = (site.config.physical_layout, node.op.shape.output(output))
            {
                let to: Vec<Option<&ArrayShape>> =
                    node.op.operands.iter().map(|s| s.as_array()).collect();
                layout::indexing_to_physical(&mut indexing, from, &to);
            }
            return indexing;
        }
        let query = Query {
            physical_layout: site.config.physical_layout,
            ..Query::output_to_input(
                site.computation.index(),
                site.instruction.id.index(),
                output,
            )
        };
        memo.run(|| budget.run(|| analysis::analyze(site.view, &query)))
    };
    // One output (most instructions) stays on the request's thread.
    if count > 1 {
        (0..count).into_par_iter().map(one).collect()
    } else {
        (0..count).map(one).collect()
    }
}
