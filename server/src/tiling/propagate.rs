//! Propagating an output tile through a fused computation, the way XLA's
//! symbolic tile analysis does: the output-to-input maps of `crate::analysis`
//! give, for every instruction the output reaches (fusion parameters
//! included), the index it reads as a function of the output index; each map
//! is turned into the tile that instruction produces for one output tile
//! ([`super::symbolic`]), with the constraints the tile sizes must satisfy.
//!
//! Besides tiles, the walk collects what guards the reads need beyond the
//! output's own split guards: the maps' domain constraints (strided slices,
//! pads, concatenate ranges), dynamic offsets, and reductions whose reduced
//! dimension is padded with holes.

use std::collections::{HashMap, HashSet};

use super::identity::{init_is_identity, Reducer};
use super::split::{SplitError, TiledSpace};
use super::symbolic::{tile_of_map, Constraint, TileDim};
use crate::algebra::{DivSpelling, IndexingMap, VarKind};
use crate::analysis::{self, contiguity, fusion};
use crate::model;

/// How tile sizes become blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TilingOptions {
    /// Triton blocks are powers of two: a single tile (size at least the
    /// extent) is padded to the next power of two (XLA's emitter loads
    /// `tensor<128xf32>` for a tile of 127), and so is a reduced dimension read
    /// whole. The padding is holes.
    pub pad_to_power_of_two: bool,
}

/// What reading a tile costs on the GPU the caller models: the widths of the fused
/// computation's instructions (bits, by instruction index) and the GPU's DRAM-to-L2
/// transaction. Tiling ranks candidates with it but does not choose the GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadCost {
    pub element_bits: Vec<Option<i64>>,
    pub transaction_bytes: i64,
}

impl Default for TilingOptions {
    fn default() -> TilingOptions {
        TilingOptions {
            pad_to_power_of_two: true,
        }
    }
}

/// What one instruction reads for one output tile, through one of its maps.
#[derive(Clone, Debug)]
pub struct Read {
    /// Instruction index in the fused computation.
    pub instruction: usize,
    pub name: String,
    /// `Some(k)` for `parameter(k)`: the tile read from the fusion's operand k.
    pub parameter: Option<usize>,
    /// Output index of the fusion -> index of this instruction's result.
    pub map: IndexingMap,
    /// One entry per dimension of the instruction's result.
    pub tile: Vec<TileDim>,
}

/// A domain constraint of a read's map or a dynamic offset: a predicate on the
/// read that the output's split guards do not cover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadPredicate {
    pub instruction: usize,
    pub name: String,
    /// `(d1 - 3) mod 7 == 0`, or `dynamic offset rt0 ...`.
    pub text: String,
    /// A dynamic offset: clamped into bounds by the op, so it costs no guard.
    pub dynamic: bool,
}

/// A reduce whose reduced dimensions are read as padded blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReductionHoles {
    pub instruction: usize,
    pub name: String,
    /// (operand dimension, extent, block) of every reduced dimension.
    pub dims: Vec<(usize, i64, i64)>,
    /// Hole elements per reduced row: `prod(block) - prod(extent)`.
    pub holes: i64,
    pub reducer: Option<Reducer>,
    /// The identity of the reducer for the element type.
    pub identity: Option<String>,
    /// The init operand's literal, when it is a constant.
    pub init: Option<String>,
    /// Whether `init` is the identity (`None`: unknown).
    pub init_is_identity: Option<bool>,
}

impl ReductionHoles {
    /// Holes, what XLA masks them with (the init value), and whether that is correct.
    pub fn describe(&self) -> String {
        let reducer = self
            .reducer
            .map_or("an unknown reducer".to_string(), |r| r.to_string());
        let identity = self.identity.as_deref().unwrap_or("?");
        let holes = match self.holes {
            1 => "1 hole".to_string(),
            n => format!("{n} holes"),
        };
        let init = match self.init.as_deref() {
            Some(init) => format!("the init value {init}"),
            None => "the init value (not a constant)".to_string(),
        };
        let verdict = match (self.init_is_identity, self.init_fill_is_correct()) {
            (Some(true), _) => format!("the identity of {reducer}, so they do not change the result"),
            (_, Some(true)) => format!(
                "not the identity ({identity}), but {reducer} is idempotent, so they do not change the result"
            ),
            (Some(false), _) => format!(
                "not the identity of {reducer} ({identity}): the holes change the result"
            ),
            (None, _) => format!(
                "the holes change the result unless it is {identity}, the identity of {reducer}"
            ),
        };
        format!("{holes} per reduced row, masked with {init}: {verdict}")
    }

    /// XLA fills masked reduction inputs with the init value. That is correct
    /// when init is the identity, or when the reducer is idempotent (max, min,
    /// and, or: init is part of the result anyway).
    pub fn init_fill_is_correct(&self) -> Option<bool> {
        if self.init_is_identity == Some(true) {
            return Some(true);
        }
        match self.reducer? {
            Reducer::Maximum | Reducer::Minimum | Reducer::And | Reducer::Or => Some(true),
            Reducer::Add | Reducer::Multiply => self.init_is_identity,
        }
    }
}

/// The whole propagation for one output of one fused computation.
#[derive(Clone, Debug)]
pub struct Propagation {
    /// The fused computation (index in the module).
    pub computation: usize,
    pub output: usize,
    /// Output extents tiled by the block sizes.
    pub space: TiledSpace,
    /// The sizes as configured (before padding).
    pub sizes: Vec<i64>,
    pub reads: Vec<Read>,
    /// Constraints met, with the instruction whose map imposed them.
    pub constraints: Vec<(usize, Constraint)>,
    pub read_predicates: Vec<ReadPredicate>,
    pub reductions: Vec<ReductionHoles>,
    /// Instructions with no tile, and why.
    pub unknown: Vec<(usize, crate::analysis::Unknown)>,
}

impl Propagation {
    /// Whether every constraint holds: the tile is a hyper-rectangle everywhere.
    pub fn is_valid(&self) -> bool {
        self.constraints.iter().all(|(_, c)| c.satisfied)
    }

    pub fn violated(&self) -> impl Iterator<Item = &(usize, Constraint)> {
        self.constraints.iter().filter(|(_, c)| !c.satisfied)
    }

    /// Hole elements per reduced row summed over the reduces.
    pub fn reduction_holes(&self) -> i64 {
        self.reductions.iter().map(|r| r.holes).sum()
    }
}

/// The smallest power of two `>= n` (saturating).
pub fn next_power_of_two(n: i64) -> i64 {
    if n <= 1 {
        return 1;
    }
    u64::try_from(n)
        .ok()
        .and_then(u64::checked_next_power_of_two)
        .and_then(|p| i64::try_from(p).ok())
        .unwrap_or(i64::MAX)
}

/// The block a tile size becomes (see [`TilingOptions`]).
pub fn block_size(extent: i64, tile: i64, options: TilingOptions) -> i64 {
    if options.pad_to_power_of_two && tile >= extent {
        next_power_of_two(tile)
    } else {
        tile
    }
}

/// The size-independent part of a propagation: the composed maps from one
/// output of a fused computation to every instruction it reaches. Computed
/// once per fusion; [`FusionMaps::propagate`] and the candidate search then
/// only evaluate tiles for concrete sizes.
#[derive(Clone, Debug)]
pub struct FusionMaps {
    pub computation: usize,
    pub output: usize,
    /// The output's extents.
    pub extents: Vec<i64>,
    /// (instruction, map from the output index to its result index).
    pub maps: Vec<(usize, IndexingMap)>,
    /// Instructions whose indexing is unknown, and why.
    pub unknown: Vec<(usize, crate::analysis::Unknown)>,
    /// For each entry of `maps` that reaches a fusion parameter: its shape with
    /// layout (the tile it reads is laid out in it).
    pub parameter_shapes: Vec<Option<analysis::ArrayShape>>,
    /// Bits per element of every instruction, when the caller knows them: then
    /// tilings are also ranked by how many parameter reads are not coalesced.
    /// What a read costs, when the caller says (see [`Self::with_read_cost`]).
    pub read_cost: Option<ReadCost>,
}

impl FusionMaps {
    /// The maps of output `output` of the fused computation `comp` of `view`;
    /// `None` when the computation has no such array output.
    pub fn new(view: &analysis::Module, comp: usize, output: usize) -> Option<FusionMaps> {
        let c = view.get(comp)?;
        let (start, out) = fusion::output_start(view, comp, output)?;
        let extents = c.nodes.get(start)?.op.shape.output(out)?.dims.clone();
        let reached = fusion::grouped_output_to_input(view, comp, start, out);
        let mut maps = vec![];
        let mut unknown = vec![];
        for (i, r) in reached.iter().enumerate() {
            if let Some(reason) = &r.unknown {
                unknown.push((i, reason.clone()));
            }
            maps.extend(r.maps.iter().map(|(_, m)| (i, m.map.clone())));
        }
        let parameter_shapes = maps
            .iter()
            .map(|(i, _)| {
                let node = &c.nodes[*i];
                node.parameter_number?;
                node.op.shape.as_array().cloned()
            })
            .collect();
        Some(FusionMaps {
            computation: comp,
            output,
            extents,
            maps,
            unknown,
            parameter_shapes,
            read_cost: None,
        })
    }

    /// The same maps, knowing what a read costs: candidate tilings are then ranked
    /// by their uncoalesced reads on the caller's GPU.
    pub fn with_read_cost(mut self, cost: ReadCost) -> FusionMaps {
        self.read_cost = Some(cost);
        self
    }

    /// How many parameter reads a tile of `sizes` makes that are not coalesced
    /// (XLA's tiled rule, [`crate::analysis::contiguity`]); 0 without a read cost.
    pub fn uncoalesced_reads(&self, sizes: &[i64], options: TilingOptions) -> usize {
        let Some(cost) = &self.read_cost else {
            return 0;
        };
        let (bits, transaction) = (&cost.element_bits, cost.transaction_bytes);
        let blocks = self.blocks(sizes, options);
        let mut count = 0;
        for ((i, map), shape) in self.maps.iter().zip(&self.parameter_shapes) {
            let (Some(shape), Some(Some(b))) = (shape, bits.get(*i)) else {
                continue;
            };
            if shape.rank() == 0 || map.is_known_empty() {
                continue;
            }
            let Ok(tile) = tile_of_map(map, &blocks, &mut vec![]) else {
                continue;
            };
            if tile.len() != shape.rank() {
                continue;
            }
            let sizes: Vec<i64> = tile.iter().map(|t| t.size).collect();
            let strides: Vec<i64> = tile.iter().map(|t| t.stride).collect();
            let elements = contiguity::contiguous_elements(shape, &sizes, &strides);
            let (coalesced, _) =
                contiguity::judge_bytes(elements.saturating_mul(*b) / 8, transaction);
            count += usize::from(!coalesced);
        }
        count
    }

    /// The blocks of `sizes` (see [`TilingOptions`]).
    pub fn blocks(&self, sizes: &[i64], options: TilingOptions) -> Vec<i64> {
        self.extents
            .iter()
            .zip(sizes)
            .map(|(&n, &t)| block_size(n, t, options))
            .collect()
    }

    /// Whether `sizes` make every read a hyper-rectangle (cheap: no reports).
    pub fn satisfies_constraints(&self, sizes: &[i64], options: TilingOptions) -> bool {
        let blocks = self.blocks(sizes, options);
        let mut cs = vec![];
        for (_, m) in &self.maps {
            // Maps with no tile are reported as unknown, not as violations.
            let _ = tile_of_map(m, &blocks, &mut cs);
            if cs.iter().any(|c| !c.satisfied) {
                return false;
            }
        }
        true
    }

    /// The full propagation for `sizes`. `model_module` gives the reducers and
    /// element types; `view` must be the module these maps came from.
    pub fn propagate(
        &self,
        model_module: &model::Module,
        view: &analysis::Module,
        sizes: &[i64],
        options: TilingOptions,
    ) -> Result<Propagation, SplitError> {
        if self.extents.len() != sizes.len() {
            return Err(SplitError::RankMismatch {
                extents: self.extents.len(),
                tiles: sizes.len(),
            });
        }
        let comp = self.computation;
        let c = view.computation(comp);
        let blocks = self.blocks(sizes, options);
        let space = TiledSpace::new(&self.extents, &blocks)?;
        let mut p = Propagation {
            computation: comp,
            output: self.output,
            space,
            sizes: sizes.to_vec(),
            reads: vec![],
            constraints: vec![],
            read_predicates: vec![],
            reductions: vec![],
            unknown: self.unknown.clone(),
        };
        // What is already listed, for deduplication in constant time per item
        // (scanning the lists made a 25,000-instruction fusion quadratic).
        let mut reads_of: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut conditions: HashSet<(String, Vec<usize>)> = HashSet::new();
        let mut predicates: HashSet<(usize, String)> = HashSet::new();
        let mut reduces: HashSet<usize> = HashSet::new();
        for (i, map) in &self.maps {
            let i = *i;
            let node = &c.nodes[i];
            let mut cs = vec![];
            match tile_of_map(map, &blocks, &mut cs) {
                Ok(tile) => {
                    let listed = reads_of.entry(i).or_default();
                    if !listed.iter().any(|&r| p.reads[r].tile == tile) {
                        listed.push(p.reads.len());
                        p.reads.push(Read {
                            instruction: i,
                            name: node.name.clone(),
                            parameter: node.parameter_number,
                            map: map.clone(),
                            tile,
                        });
                    }
                }
                Err(e) => p
                    .unknown
                    .push((i, crate::analysis::Unknown::not_modelled(e.0))),
            }
            for con in cs {
                if conditions.insert((con.condition.clone(), con.dims.clone())) {
                    p.constraints.push((i, con));
                }
            }
            let mut found = vec![];
            read_predicates(&mut found, i, &node.name, map, &self.extents);
            for predicate in found {
                if predicates.insert((i, predicate.text.clone())) {
                    p.read_predicates.push(predicate);
                }
            }
            if node.op.opcode == "reduce" && reduces.insert(i) {
                if let Some(h) = reduction(model_module, view, comp, i, options) {
                    p.reductions.push(h);
                }
            }
        }
        Ok(p)
    }
}

/// Domain constraints on the output dimensions (not the plain bounds) and
/// runtime variables of `map`, as read predicates.
fn read_predicates(
    out: &mut Vec<ReadPredicate>,
    i: usize,
    name: &str,
    map: &IndexingMap,
    extents: &[i64],
) {
    let mut push = |text: String, dynamic: bool| {
        if !out.iter().any(|r| r.instruction == i && r.text == text) {
            out.push(ReadPredicate {
                instruction: i,
                name: name.to_string(),
                text,
                dynamic,
            });
        }
    };
    // A constraint on a bare dimension was folded into its bounds: a bound
    // narrower than the output extent is a read predicate (concatenate, pad).
    for (d, var) in map.dims().iter().enumerate() {
        let full = extents.get(d).map_or(var.bounds.hi, |n| n - 1);
        if var.bounds.lo > 0 || var.bounds.hi < full {
            let s = var.display_name(VarKind::Dim, d);
            push(
                format!("{s} in [{}, {}]", var.bounds.lo, var.bounds.hi),
                false,
            );
        }
    }
    for (e, range) in map.constraints() {
        let mut uses_dim = false;
        e.for_each_var(&mut |v| uses_dim |= v.kind == VarKind::Dim);
        if !uses_dim {
            continue;
        }
        let s = map.expr_to_string(e, DivSpelling::FloorDiv);
        let text = if range.lo == range.hi {
            format!("{s} == {}", range.lo)
        } else {
            format!("{s} in [{}, {}]", range.lo, range.hi)
        };
        push(text, false);
    }
    for (k, _) in map.runtime_vars().iter().enumerate() {
        let used = map.results().iter().any(|e| {
            let mut u = false;
            e.for_each_var(&mut |v| u |= v.kind == VarKind::Runtime && v.index == k);
            u
        });
        if used {
            let text = format!(
                "dynamic offset {}: clamped into bounds at runtime",
                map.runtime_vars()[k].display_name(VarKind::Runtime, k)
            );
            push(text, true);
        }
    }
}

/// The reduced dimensions of reduce `i` as padded blocks, with its reducer.
fn reduction(
    model_module: &model::Module,
    view: &analysis::Module,
    comp: usize,
    i: usize,
    options: TilingOptions,
) -> Option<ReductionHoles> {
    let node = &view.computation(comp).nodes[i];
    let operand = node.op.operands.first()?.as_array()?;
    let reduced: Vec<usize> = node
        .op
        .attrs
        .dimensions
        .as_ref()?
        .iter()
        .filter_map(|&d| usize::try_from(d).ok())
        .filter(|&d| d < operand.dims.len())
        .collect();
    let dims: Vec<(usize, i64, i64)> = reduced
        .iter()
        .map(|&d| {
            let n = operand.dims[d];
            (d, n, block_size(n, n, options))
        })
        .collect();
    let prod = |f: &dyn Fn(&(usize, i64, i64)) -> i64| {
        dims.iter()
            .try_fold(1i64, |acc, x| acc.checked_mul(f(x)))
            .unwrap_or(i64::MAX)
    };
    let holes = prod(&|x| x.2).saturating_sub(prod(&|x| x.1));
    let mc = model_module
        .computation(model::ComputationId(comp as u32))
        .model();
    let instr = mc.instructions.get(i)?;
    let reducer = model_module
        .called_computation(instr, "to_apply")
        .and_then(|c| c.model().root_instruction())
        .and_then(|r| Reducer::from_opcode(r.opcode.name()));
    let element = match mc.operand_shape(instr, 0) {
        Some(model::Shape::Array(a)) => a.element.name().to_string(),
        _ => String::new(),
    };
    let init_index = node.operands.len() / 2;
    let init = node
        .operands
        .get(init_index)
        .and_then(|&k| view.computation(comp).nodes.get(k))
        .and_then(|n| n.constant_text.clone());
    let identity = reducer.map(|r| r.identity(&element));
    let init_is = match (reducer, &init) {
        (Some(r), Some(lit)) => init_is_identity(r, &element, lit),
        _ => None,
    };
    Some(ReductionHoles {
        instruction: i,
        name: node.name.clone(),
        dims,
        holes,
        reducer,
        identity,
        init,
        init_is_identity: init_is,
    })
}
