//! The iteration domain of a linalg op and each operand's indexing map over it.
//!
//! A loop's extent comes from an operand whose map has that loop as a bare result
//! (`d1` at result 2 of a `tensor<1x56x56x256>` operand: 56); operands that
//! disagree are an error. With every extent known, each operand's MLIR map
//! becomes an [`IndexingMap`] from the output's point of view, as XLA writes
//! them: the loops the (first) output indexes are the dimensions in the output's
//! order, the remaining (reduction) loops are range variables. The maps are then
//! simplified, checked against the operand's bounds, and measured with
//! [`crate::analysis::utilization`].

use std::ops::Range;

use super::maps::is_bare_dim;
use super::ops::{IteratorType, StructuredOp};
use super::reader::MlirFile;
use crate::algebra::{Expr, IndexingMap, Variable};
use crate::analysis::operand_indexing::{OperandIndexing, OperandMap as XlaOperandMap};
use crate::analysis::shape::ArrayShape;
use crate::analysis::utilization::{utilization, Utilization};
use crate::model::{Diagnostic, Severity};

/// Diagnostic codes of the MLIR analysis.
pub mod codes {
    pub const INVALID_MAP: &str = "invalid-map";
    pub const UNDEFINED_ALIAS: &str = "undefined-alias";
    pub const MAP_COUNT: &str = "map-count-mismatch";
    pub const MAP_RANK: &str = "map-rank-mismatch";
    pub const MAP_DIMS: &str = "map-dimension-count";
    pub const ITERATOR_COUNT: &str = "iterator-count-mismatch";
    pub const LOOP_EXTENT: &str = "loop-extent-mismatch";
    pub const OUT_OF_BOUNDS: &str = "out-of-bounds";
    pub const INDIVISIBLE_TILE: &str = "indivisible-tile";
    pub const TILE_SIZES_COUNT: &str = "tile-sizes-count";
    pub const INVALID_TILE: &str = "invalid-tile-size";
    /// A `linalg_ext` op (or `linalg.softmax`) whose structure its definition rules out.
    pub const INVALID_EXT_OP: &str = "invalid-linalg-ext";
}

/// Enumeration budget for utilization (domain points per operand): keeps hover fast.
pub const UTILIZATION_BUDGET: u128 = 250_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    /// `None` when no operand with a static extent indexes it directly.
    pub extent: Option<i64>,
    pub iterator: Option<IteratorType>,
    /// (operand, dimension) the extent was taken from.
    pub source: Option<(usize, usize)>,
}

/// Where loop `d` goes in the output's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewVar {
    Dim(usize),
    Range(usize),
}

#[derive(Clone, Debug)]
pub struct OperandView {
    /// Output index (and reduction loops) → operand index, simplified.
    pub map: IndexingMap,
    pub utilization: Option<Utilization>,
}

#[derive(Clone, Debug)]
pub struct LinalgAnalysis {
    pub op: StructuredOp,
    pub loops: Vec<Loop>,
    /// For every loop, its variable in the views (empty when there are no views).
    pub view_vars: Vec<ViewVar>,
    /// Parallel to `op.operands`; `None` when the domain is not fully known.
    pub views: Vec<Option<OperandView>>,
    pub diagnostics: Vec<Diagnostic>,
}

impl LinalgAnalysis {
    /// The loop extents when all are known.
    pub fn extents(&self) -> Option<Vec<i64>> {
        self.loops.iter().map(|l| l.extent).collect()
    }

    /// `[1, 56, 56, 256]` style text for the domain, `?` for unknown loops.
    pub fn domain_text(&self) -> String {
        let parts: Vec<String> = self
            .loops
            .iter()
            .enumerate()
            .map(|(d, l)| match l.extent {
                Some(e) => format!("d{d} ∈ [0, {e})"),
                None => format!("d{d} ∈ ?"),
            })
            .collect();
        parts.join(", ")
    }
}

/// Analyzes one structured op.
pub fn analyze(file: &MlirFile, op: StructuredOp, budget: u128) -> LinalgAnalysis {
    let name_range = file.ops[op.op].name_range.clone();
    let mut diags: Vec<Diagnostic> = op
        .notes
        .iter()
        .map(|(r, m)| Diagnostic::new(r.clone(), Severity::Warning, codes::INVALID_MAP, m.clone()))
        .chain(op.diagnostics.iter().cloned())
        .collect();
    let num_loops = op
        .maps
        .iter()
        .find_map(|m| m.map.as_ref().map(|m| m.dims().len()))
        .unwrap_or(op.iterators.len());
    let mut loops: Vec<Loop> = (0..num_loops)
        .map(|d| Loop {
            extent: None,
            iterator: op.iterators.get(d).copied(),
            source: None,
        })
        .collect();
    let mut consistent = true;
    if !op.maps.is_empty() && op.maps.len() != op.operands.len() {
        consistent = false;
        diags.push(Diagnostic::error(
            name_range.clone(),
            codes::MAP_COUNT,
            format!(
                "{} indexing maps for {} operands",
                op.maps.len(),
                op.operands.len()
            ),
        ));
    }
    if !op.iterators.is_empty() && op.iterators.len() != num_loops {
        diags.push(Diagnostic::error(
            name_range.clone(),
            codes::ITERATOR_COUNT,
            format!(
                "{} iterator types for {} loops",
                op.iterators.len(),
                num_loops
            ),
        ));
    }
    for (k, (operand, m)) in op.operands.iter().zip(&op.maps).enumerate() {
        let at = m.source.range().unwrap_or(name_range.clone());
        let Some(map) = &m.map else {
            consistent = false;
            if let super::ops::MapSource::Alias { alias: None, range } = &m.source {
                diags.push(Diagnostic::error(
                    range.clone(),
                    codes::UNDEFINED_ALIAS,
                    "undefined attribute alias",
                ));
            }
            continue;
        };
        if map.dims().len() != num_loops {
            consistent = false;
            diags.push(Diagnostic::error(
                at.clone(),
                codes::MAP_DIMS,
                format!(
                    "map of operand #{k} has {} dimensions, the op has {num_loops} loops",
                    map.dims().len()
                ),
            ));
        }
        // Symbols of a written `affine_map` have no bounds; implied maps bound their own.
        let implied = m.source == super::ops::MapSource::Implied;
        let has_symbols = !map.range_vars().is_empty() || !map.runtime_vars().is_empty();
        if has_symbols && !implied {
            consistent = false;
        }
        let Some(ty) = &operand.ty else { continue };
        if map.results().len() != ty.rank() {
            consistent = false;
            let mut d = Diagnostic::error(
                at,
                codes::MAP_RANK,
                format!(
                    "map of operand #{k} ({}) has {} results but its type {} has rank {}",
                    operand.value,
                    map.results().len(),
                    operand.ty_text,
                    ty.rank()
                ),
            );
            if let Some(r) = &operand.ty_range {
                d.related.push((r.clone(), "operand type".into()));
            }
            diags.push(d);
            continue;
        }
        for (j, e) in map.results().iter().enumerate() {
            let (Some(d), Some(ext)) = (is_bare_dim(e), ty.dim(j)) else {
                continue;
            };
            let Some(l) = loops.get_mut(d) else { continue };
            match (l.extent, l.source) {
                (None, _) => {
                    l.extent = Some(ext);
                    l.source = Some((k, j));
                }
                (Some(first), Some((k0, j0))) if first != ext => {
                    consistent = false;
                    let first_op = &op.operands[k0];
                    let mut diag = Diagnostic::error(
                        operand.ty_range.clone().unwrap_or(operand.value_range.clone()),
                        codes::LOOP_EXTENT,
                        format!(
                            "loop d{d} has extent {ext} from operand #{k} ({}, dimension {j}) but {first} from operand #{k0} ({}, dimension {j0})",
                            operand.value, first_op.value
                        ),
                    );
                    diag.related.push((
                        first_op
                            .ty_range
                            .clone()
                            .unwrap_or(first_op.value_range.clone()),
                        format!("d{d} = {first} here"),
                    ));
                    diags.push(diag);
                }
                _ => {}
            }
        }
    }
    let mut analysis = LinalgAnalysis {
        op,
        loops,
        view_vars: vec![],
        views: vec![],
        diagnostics: diags,
    };
    if consistent {
        build_views(&mut analysis, budget);
    }
    analysis.views.resize(analysis.op.operands.len(), None);
    analysis
}

/// The loops the first output indexes directly (in its order) become dimensions,
/// the others range variables; without a projected-permutation output all loops
/// are dimensions.
fn view_vars(op: &StructuredOp, num_loops: usize) -> Vec<ViewVar> {
    let out = op
        .operands
        .iter()
        .position(|o| o.is_output)
        .and_then(|k| op.maps.get(k))
        .and_then(|m| m.map.as_ref());
    let order: Option<Vec<usize>> = out.and_then(|m| m.results().iter().map(is_bare_dim).collect());
    let mut vars = vec![ViewVar::Dim(0); num_loops];
    match order {
        Some(order) if is_distinct(&order) && order.iter().all(|&d| d < num_loops) => {
            for (pos, &d) in order.iter().enumerate() {
                vars[d] = ViewVar::Dim(pos);
            }
            let mut next = 0;
            for (d, v) in vars.iter_mut().enumerate() {
                if !order.contains(&d) {
                    *v = ViewVar::Range(next);
                    next += 1;
                }
            }
        }
        _ => {
            for (d, v) in vars.iter_mut().enumerate() {
                *v = ViewVar::Dim(d);
            }
        }
    }
    vars
}

fn is_distinct(v: &[usize]) -> bool {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.windows(2).all(|w| w[0] != w[1])
}

fn build_views(a: &mut LinalgAnalysis, budget: u128) {
    let Some(extents) = a.extents() else { return };
    let vars = view_vars(&a.op, extents.len());
    let num_dims = vars.iter().filter(|v| matches!(v, ViewVar::Dim(_))).count();
    let num_ranges = vars.len() - num_dims;
    let mut dims = vec![Variable::new(0, 0); num_dims];
    let mut ranges = vec![Variable::new(0, 0); num_ranges];
    let mut subst = Vec::with_capacity(vars.len());
    for (d, v) in vars.iter().enumerate() {
        let var = Variable::new(0, extents[d] - 1);
        match *v {
            ViewVar::Dim(i) => {
                dims[i] = var;
                subst.push(Expr::dim(i));
            }
            ViewVar::Range(i) => {
                ranges[i] = var;
                subst.push(Expr::range(i));
            }
        }
    }
    let mut views = Vec::new();
    let mut diags = Vec::new();
    for (k, (operand, m)) in a.op.operands.iter().zip(&a.op.maps).enumerate() {
        let Some(map) = &m.map else {
            views.push(None);
            continue;
        };
        let view = place(map, &subst, &dims, &ranges);
        let shape = operand.ty.as_ref().and_then(|t| t.static_dims());
        if let Some(shape) = &shape {
            for (j, e) in view.results().iter().enumerate() {
                let r = view.range_of(e);
                let Some(&size) = shape.get(j) else { continue };
                if !view.is_known_empty() && r.is_feasible() && (r.lo < 0 || r.hi >= size) {
                    diags.push(Diagnostic::warning(
                        m.source.range().or(operand.ty_range.clone()).unwrap_or(operand.value_range.clone()),
                        codes::OUT_OF_BOUNDS,
                        format!(
                            "operand #{k} ({}) is indexed in [{}, {}] along dimension {j} of extent {size}",
                            operand.value, r.lo, r.hi
                        ),
                    ));
                }
            }
        }
        let util = shape.and_then(|s| {
            let entry = OperandIndexing::single(XlaOperandMap::plain(view.clone()));
            utilization(&entry, &ArrayShape::new(s), budget)
        });
        views.push(Some(OperandView {
            map: view,
            utilization: util,
        }));
    }
    a.view_vars = vars;
    a.views = views;
    a.diagnostics.extend(diags);
}

/// An operand's MLIR map over the loops placed in the output's view: loop `d` becomes
/// `subst[d]`, the map's own range variables (a row an iteration reads whole) follow
/// the view's, its runtime variables and constraints are kept; simplified.
fn place(map: &IndexingMap, subst: &[Expr], dims: &[Variable], ranges: &[Variable]) -> IndexingMap {
    let own_ranges: Vec<Expr> = (0..map.range_vars().len())
        .map(|i| Expr::range(ranges.len() + i))
        .collect();
    let runtimes: Vec<Expr> = (0..map.runtime_vars().len()).map(Expr::runtime).collect();
    let moved = |e: &Expr| e.replace_vars(subst, &own_ranges, &runtimes);
    let mut all_ranges = ranges.to_vec();
    all_ranges.extend(map.range_vars().iter().cloned());
    IndexingMap::new(
        dims.to_vec(),
        all_ranges,
        map.runtime_vars().to_vec(),
        map.results().iter().map(moved).collect(),
        map.constraints()
            .iter()
            .map(|(e, i)| (moved(e), *i))
            .collect(),
    )
    .simplified()
}

/// Every linalg op of the file, analyzed.
pub fn analyze_file(src: &str, file: &MlirFile, budget: u128) -> Vec<LinalgAnalysis> {
    super::ops::structured_ops(src, file)
        .into_iter()
        .map(|op| analyze(file, op, budget))
        .collect()
}

/// The range to report a whole op's findings at.
pub fn op_range(file: &MlirFile, a: &LinalgAnalysis) -> Range<usize> {
    file.ops[a.op.op].name_range.clone()
}
