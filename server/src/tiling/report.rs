//! The tiling report of a fusion: issue 7's items, per output.
//!
//! 1. every indivisible split (tiles, holes in the last tile, its guard);
//! 2. the minimal predicates, and the guards on reads they imply;
//! 3. merges followed by a split that divides neither way (non-contiguous);
//! 4. read predicates from the maps' domains and dynamic offsets;
//! 5. reductions with holes, the reducer's identity and the init value;
//! 6. violated constraints (no hyper-rectangle), with the nearest valid sizes.
//!
//! Built from the model (positions, backend_config) and the analysis view.

use super::candidates::{nearest_valid, nearest_valid_where, valid_tilings, Candidate};
use super::config::{output_tiles, ConfigError, OutputTiles};
use super::predicates::DomainGraph;
use super::propagate::{FusionMaps, Propagation, ReadCost, TilingOptions};
use super::split::{join_sizes, SplitError};
use super::symbolic::{Constraint, MergeSplit};
use crate::algebra::{DivSpelling, Expr, IndexingMap, Variable};
use crate::analysis;
use crate::model::{self, HloFile, InstrRef};

/// One indivisible split of an output dimension (item 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitFinding {
    pub dim: usize,
    pub extent: i64,
    /// The configured size.
    pub tile: i64,
    /// The block it becomes (padded to a power of two for Triton).
    pub block: i64,
    pub tiles: i64,
    /// Holes in the last tile.
    pub holes: i64,
    /// `d1 < 6500`.
    pub predicate: String,
}

/// The report of one fusion output.
#[derive(Clone, Debug)]
pub struct OutputReport {
    pub output: usize,
    pub propagation: Propagation,
    pub splits: Vec<SplitFinding>,
    /// Item 2: the minimal set of output guards.
    pub predicates: Vec<String>,
    /// Item 2: guards of reads that the minimal set implies (not needed).
    pub implied: Vec<String>,
    /// Item 3: (instruction whose map merges, the merge and split).
    pub non_contiguous: Vec<(usize, MergeSplit)>,
    /// Item 6: violated constraints, with the instruction that imposes them.
    pub violations: Vec<(usize, Constraint)>,
    /// The valid tiling nearest to the configured one (when it differs).
    pub suggestion: Option<Candidate>,
    /// When some split is indivisible: the valid tiling nearest to the
    /// configured one that needs fewer guards.
    pub fewer_predicates: Option<Candidate>,
    /// Valid tilings ranked by holes and predicates (only when asked).
    pub candidates: Vec<Candidate>,
}

impl OutputReport {
    /// Predicates a tile needs: the minimal output guards plus the distinct
    /// domain predicates of the loads (parameter reads; dynamic offsets are
    /// clamped, not guarded).
    pub fn predicate_count(&self) -> usize {
        let p = &self.propagation;
        let loads = p.read_predicates.iter().filter(|rp| {
            !rp.dynamic
                && p.reads
                    .iter()
                    .any(|r| r.instruction == rp.instruction && r.parameter.is_some())
        });
        let mut texts: Vec<&str> = loads.map(|rp| rp.text.as_str()).collect();
        texts.sort_unstable();
        texts.dedup();
        self.predicates.len() + texts.len()
    }
}

/// The tiling report of one fusion instruction.
#[derive(Clone, Debug)]
pub struct FusionReport {
    /// The fusion instruction.
    pub at: InstrRef,
    pub name: String,
    /// The fused computation (index in the module) and its name.
    pub fused: usize,
    pub fused_name: String,
    /// The backend_config's output tiles (`None` when the sizes were given).
    pub config: Option<OutputTiles>,
    pub outputs: Vec<OutputReport>,
    /// Outputs that could not be analyzed, and why.
    pub errors: Vec<String>,
}

impl FusionReport {
    /// `tiles 4x128 · 2 predicates · 0 holes in reductions` (the hover line).
    pub fn summary(&self) -> String {
        let tiles: Vec<String> = self
            .outputs
            .iter()
            .map(|o| join_sizes(&o.propagation.sizes))
            .collect();
        let predicates: usize = self.outputs.iter().map(OutputReport::predicate_count).sum();
        let holes: i64 = self
            .outputs
            .iter()
            .map(|o| o.propagation.reduction_holes())
            .sum();
        let mut s = format!(
            "tiles {} · {predicates} predicate{} · {holes} hole{} in reductions",
            tiles.join(", "),
            if predicates == 1 { "" } else { "s" },
            if holes == 1 { "" } else { "s" }
        );
        if self.outputs.iter().any(|o| !o.violations.is_empty()) {
            s.push_str(" · invalid tiling");
        }
        s
    }

    pub fn is_valid(&self) -> bool {
        self.outputs.iter().all(|o| o.violations.is_empty())
    }
}

/// What to analyze and how.
#[derive(Clone, Debug, Default)]
pub struct ReportOptions {
    /// Only the fusion with this name.
    pub fusion: Option<String>,
    /// Sizes for output 0 instead of the backend_config (applied to every
    /// output of that rank); fusions without output_tiles are then analyzed too.
    pub sizes: Option<Vec<i64>>,
    /// Also rank the valid tilings (up to this many).
    pub candidates: usize,
    /// The DRAM-to-L2 transaction of the GPU the caller models: candidates are then
    /// ranked by their uncoalesced reads first.
    pub transaction_bytes: Option<i64>,
}

/// A fusion whose configuration could not be read.
#[derive(Clone, Debug)]
pub struct ConfigProblem {
    pub at: InstrRef,
    pub error: ConfigError,
}

/// Reports for every tiled fusion of the file (those with `output_tiles`, or
/// with `options.sizes` every fusion).
pub fn analyze_file(
    file: &HloFile,
    options: &ReportOptions,
) -> (Vec<FusionReport>, Vec<ConfigProblem>) {
    let mut reports = vec![];
    let mut problems = vec![];
    for (mi, module) in file.modules.iter().enumerate() {
        let view = analysis::view::borrowed(module);
        for comp in module.computations() {
            for instr in &comp.model().instructions {
                let at = InstrRef {
                    module: model::ModuleId(mi as u32),
                    computation: comp.id,
                    instruction: instr.id,
                };
                match report_at(module, &view, at, options) {
                    Some(Ok(r)) => reports.push(r),
                    Some(Err(p)) => problems.push(p),
                    None => {}
                }
            }
        }
    }
    (reports, problems)
}

/// The report of the instruction at `at` when it is a tiled fusion (one with
/// `output_tiles`, or any fusion with `options.sizes`), or the problem with its
/// `output_tiles`.
pub fn report_at(
    module: &model::Module,
    view: &analysis::Module,
    at: InstrRef,
    options: &ReportOptions,
) -> Option<Result<FusionReport, ConfigProblem>> {
    let comp = module.computation(at.computation);
    let instr = comp.instruction(at.instruction);
    if instr.opcode.name() != "fusion" {
        return None;
    }
    if options.fusion.as_ref().is_some_and(|f| **f != *instr.name) {
        return None;
    }
    let config = match output_tiles(comp, instr) {
        Some(Err(error)) => return Some(Err(ConfigProblem { at, error })),
        Some(Ok(c)) => Some(c),
        None if options.sizes.is_some() => None,
        None => return None,
    };
    analyze_fusion(module, view, at, instr, config, options).map(Ok)
}

/// The report of one fusion instruction `instr` (at `at`), with its config.
pub fn analyze_fusion(
    module: &model::Module,
    view: &analysis::Module,
    at: InstrRef,
    instr: &model::Instruction,
    config: Option<OutputTiles>,
    options: &ReportOptions,
) -> Option<FusionReport> {
    let fused = module.called_computation(instr, "calls")?.id.index();
    let tiling = TilingOptions {
        pad_to_power_of_two: config.as_ref().is_none_or(|c| c.triton),
    };
    let outputs = match &*instr.shape {
        model::Shape::Tuple(t) => t.len(),
        _ => 1,
    };
    let mut report = FusionReport {
        at,
        name: instr.name.to_string(),
        fused,
        fused_name: module
            .computation(model::ComputationId(fused as u32))
            .name
            .clone(),
        config: config.clone(),
        outputs: vec![],
        errors: vec![],
    };
    for output in 0..outputs {
        let element_bits: Vec<Option<i64>> = module
            .computation(model::ComputationId(fused as u32))
            .model()
            .instructions
            .iter()
            .map(|i| i.shape.element_bits())
            .collect();
        let cost = options.transaction_bytes.map(|transaction_bytes| ReadCost {
            element_bits,
            transaction_bytes,
        });
        let Some(maps) = FusionMaps::new(view, fused, output).map(|m| match cost {
            Some(cost) => m.with_read_cost(cost),
            None => m,
        }) else {
            report.errors.push(format!(
                "output {output} of {} is not an array",
                report.fused_name
            ));
            continue;
        };
        let sizes = match (&options.sizes, &config) {
            (Some(s), _) if s.len() == maps.extents.len() => s.clone(),
            (Some(_), _) => continue,
            (None, Some(c)) => match c.sizes.get(output) {
                Some(s) => s.clone(),
                None => continue,
            },
            (None, None) => continue,
        };
        match output_report(module, view, &maps, &sizes, tiling, options.candidates) {
            Ok(o) => report.outputs.push(o),
            Err(e) => report.errors.push(format!("output {output}: {e}")),
        }
    }
    Some(report)
}

/// Items 1-6 for one output and one tiling.
pub fn output_report(
    module: &model::Module,
    view: &analysis::Module,
    maps: &FusionMaps,
    sizes: &[i64],
    tiling: TilingOptions,
    candidates: usize,
) -> Result<OutputReport, SplitError> {
    let p = maps.propagate(module, view, sizes, tiling)?;
    let splits: Vec<SplitFinding> = p
        .space
        .splits
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_divisible())
        .map(|(dim, s)| SplitFinding {
            dim,
            extent: s.extent,
            tile: sizes[dim],
            block: s.tile,
            tiles: s.tile_count(),
            holes: s.holes(),
            predicate: format!("d{dim} < {}", s.extent),
        })
        .collect();
    let predicates = minimal_output_predicates(&p);
    let implied = implied_read_guards(&p);
    let non_contiguous = p
        .constraints
        .iter()
        .filter_map(|(i, c)| c.merge_split.map(|m| (*i, m)))
        .collect();
    let violations: Vec<(usize, Constraint)> = p.violated().cloned().collect();
    let suggestion = if violations.is_empty() {
        None
    } else {
        nearest_valid(maps, sizes, tiling)
    };
    let guards = p.space.predicates().len();
    let fewer_predicates = if splits.is_empty() {
        None
    } else {
        nearest_valid_where(maps, sizes, tiling, &|c| c.predicates < guards)
    };
    let ranked = if candidates > 0 {
        valid_tilings(maps, sizes, tiling, candidates)
    } else {
        vec![]
    };
    Ok(OutputReport {
        output: maps.output,
        propagation: p,
        splits,
        predicates,
        implied,
        non_contiguous,
        violations,
        suggestion,
        fewer_predicates,
        candidates: ranked,
    })
}

/// The output dimensions as a domain graph split by their blocks: its minimal
/// predicates are the output guards (`d1 < 6500`).
fn minimal_output_predicates(p: &Propagation) -> Vec<String> {
    let mut g = DomainGraph::new();
    for (d, s) in p.space.splits.iter().enumerate() {
        let root = g.root(&format!("d{d}"), s.extent);
        g.split(root, s.tile, &format!("tile{d}"), &format!("offset{d}"));
    }
    if p.space.elements() == 0 {
        return vec![];
    }
    g.minimal_predicates().into_iter().map(|p| p.text).collect()
}

/// Reads of a parameter along an output dimension with holes: their bound is
/// implied by that dimension's guard (the read index is a function of the
/// output index alone, in bounds wherever the output index is).
fn implied_read_guards(p: &Propagation) -> Vec<String> {
    let mut out = vec![];
    let mut listed = std::collections::HashSet::new();
    for read in &p.reads {
        let Some(k) = read.parameter else { continue };
        for (rd, t) in read.tile.iter().enumerate() {
            if t.size <= 1 {
                continue;
            }
            for &d in &t.sources {
                if !p.space.splits[d].is_divisible() {
                    let text = format!(
                        "{} (parameter {k}) dimension {rd}: guard implied by d{d} < {}",
                        read.name, p.space.splits[d].extent
                    );
                    if listed.insert(text.clone()) {
                        out.push(text);
                    }
                }
            }
        }
    }
    out
}

/// The offsets of a read's tile as text, over tile indices `t0, t1, ...`.
pub fn offsets_text(p: &Propagation, read: &super::propagate::Read) -> Vec<String> {
    let dims = p
        .space
        .splits
        .iter()
        .enumerate()
        .map(|(i, s)| Variable::named(0, (s.tile_count() - 1).max(0), format!("t{i}")))
        .collect();
    let results: Vec<Expr> = read.tile.iter().map(|t| t.offset.clone()).collect();
    let mut m = IndexingMap::new(
        dims,
        vec![],
        read.map.runtime_vars().to_vec(),
        results,
        vec![],
    );
    m.simplify();
    m.results()
        .iter()
        .map(|e| m.expr_to_string(e, DivSpelling::FloorDiv))
        .collect()
}

/// The report line for the hover on the fusion at byte `offset` of `text`
/// (its name, or anywhere in the instruction): `tiles 4x128 · 2 predicates ·
/// 0 holes in reductions`. `None` when the instruction is not a tiled fusion.
/// `view` is the analysis view of the fusion's module: the caller keeps it (the
/// server per snapshot), as building it walks the whole module.
pub fn hover_line(file: &HloFile, view: &analysis::Module, offset: usize) -> Option<String> {
    let at = file.instruction_at(offset)?;
    let instr = file.instruction(at);
    if instr.opcode.name() != "fusion" {
        return None;
    }
    let options = ReportOptions {
        fusion: Some(instr.name.to_string()),
        ..ReportOptions::default()
    };
    let module = file.module(at.module);
    let config = output_tiles(file.computation(at), instr)?.ok()?;
    let report = analyze_fusion(module, view, at, instr, Some(config), &options)?;
    (!report.outputs.is_empty()).then(|| report.summary())
}
