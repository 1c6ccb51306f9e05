//! Builds the analysis' module view ([`graph::Module`]) from the typed model:
//! shapes with layouts, decoded attributes, resolved operands and called
//! computations, and the values of integer scalar constants.

use super::graph::{Computation, Module, Node};
use super::op::{self, Attrs, OpInfo};
use super::shape::{ArrayShape, Shape};
use crate::model;
use std::sync::Arc;

/// Converts one model module (every computation, now).
pub fn from_model(m: &model::Module) -> Module<'static> {
    let computations = m.computations().map(|c| computation(m, c)).collect();
    Module::new(computations, entry(m))
}

/// The view of `m`, each computation converted when the analysis first reaches it.
pub fn borrowed(m: &model::Module) -> Module<'_> {
    Module::lazy(m.computation_count(), entry(m), move |ci| {
        computation(m, m.computation(model::ComputationId(ci as u32)))
    })
    .with_twins(move |a, b| twins(m, a, b))
}

/// The view of module `index` of `document`, each computation converted when the
/// analysis first reaches it.
pub fn lazy(document: std::sync::Arc<model::Document>, index: usize) -> Module<'static> {
    let m = document.file().module(model::ModuleId(index as u32));
    let (count, entry) = (m.computation_count(), entry(m));
    let source = document.clone();
    Module::lazy(count, entry, move |ci| {
        let m = document.file().module(model::ModuleId(index as u32));
        computation(m, m.computation(model::ComputationId(ci as u32)))
    })
    .with_twins(move |a, b| twins(source.file().module(model::ModuleId(index as u32)), a, b))
}

/// [`lazy`], whose computations are looked up in `recent` first and kept there once
/// converted: a view made for one request (and dropped with it) converts again only
/// what the last requests did not.
pub fn lazy_through(
    document: std::sync::Arc<model::Document>,
    index: usize,
    recent: Arc<Recent>,
) -> Module<'static> {
    let m = document.file().module(model::ModuleId(index as u32));
    let (count, entry) = (m.computation_count(), entry(m));
    let source = document.clone();
    let kept = recent.clone();
    Module::lazy_shared(count, entry, move |ci| {
        recent.get_or_convert(ci, || {
            let m = document.file().module(model::ModuleId(index as u32));
            computation(m, m.computation(model::ComputationId(ci as u32)))
        })
    })
    .with_twins(move |a, b| {
        kept.twins_or(a, b, || {
            twins(source.file().module(model::ModuleId(index as u32)), a, b)
        })
    })
}

/// The views of the computations of one module converted last (at most a fixed
/// number), for the views made per request ([`lazy_through`]). A language server
/// that kept every view it made for as long as the version lived held 14.5 MiB after
/// 300 hovers of a 58 MiB dump, at its peak; the next hover is most often in the
/// computation of the last.
pub struct Recent {
    capacity: usize,
    kept: std::sync::Mutex<RecentViews>,
    /// The [`twins`] answers of this version: a graph around ENTRY compares each of
    /// its 32 calls of renamed copies of a step with the first, a third of every
    /// such request on a 58 MiB dump.
    twins: std::sync::Mutex<KnownTwins>,
}

/// Kept [`twins`] answers. Twins are equal but for names, so "yes" answers are
/// kept as classes: a graph around another of ENTRY's instructions compares the
/// same 32 copies in other pairs (each with the first consumer it meets), and
/// finds them twins without comparing again.
#[derive(Default)]
struct KnownTwins {
    /// Union-find parents of computations found twins of another.
    parent: rustc_hash::FxHashMap<usize, usize>,
    /// Pairs found not twins (or not shown to be).
    differ: rustc_hash::FxHashSet<(usize, usize)>,
}

impl KnownTwins {
    /// The class representative of `a`.
    fn root(&self, mut a: usize) -> usize {
        while let Some(&p) = self.parent.get(&a) {
            if p == a {
                break;
            }
            a = p;
        }
        a
    }

    fn get(&self, a: usize, b: usize) -> Option<bool> {
        if self.root(a) == self.root(b) {
            return Some(true);
        }
        self.differ.contains(&(a, b)).then_some(false)
    }

    fn insert(&mut self, a: usize, b: usize, twins: bool) {
        if !twins {
            self.differ.insert((a, b));
            return;
        }
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent.insert(rb, ra);
            self.parent.insert(b, ra);
        }
    }
}

/// `(computation, its view, when last used)`, and the clock.
#[derive(Default)]
struct RecentViews {
    entries: Vec<(usize, Arc<Computation>, u64)>,
    clock: u64,
}

impl std::fmt::Debug for Recent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recent").field("kept", &self.len()).finish()
    }
}

impl Recent {
    /// Keeps the last `capacity` views.
    pub fn new(capacity: usize) -> Recent {
        Recent {
            capacity,
            kept: Default::default(),
            twins: Default::default(),
        }
    }

    /// Whether computations `a` and `b` are twins: the answer kept, or `compare()`'s
    /// (kept unless the budget ran out while comparing: then "no" only means "not
    /// shown").
    pub fn twins_or(&self, a: usize, b: usize, compare: impl FnOnce() -> bool) -> bool {
        let lock = || self.twins.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = lock().get(a, b) {
            return known;
        }
        let answer = compare();
        if !crate::budget::exhausted() {
            lock().insert(a, b, answer);
        }
        answer
    }

    /// The view of computation `i`: the kept one, or `convert()`ed now and kept (the
    /// one used longest ago goes when full).
    pub fn get_or_convert(
        &self,
        i: usize,
        convert: impl FnOnce() -> Computation,
    ) -> Arc<Computation> {
        if let Some(kept) = self.lock().use_kept(i) {
            return kept;
        }
        // Converted without the lock: another request may be converting another one.
        let view = Arc::new(convert());
        let gone = self.lock().keep(i, view.clone(), self.capacity);
        drop(gone);
        view
    }

    /// How many views are kept.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RecentViews> {
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl RecentViews {
    fn use_kept(&mut self, i: usize) -> Option<Arc<Computation>> {
        self.clock += 1;
        let clock = self.clock;
        let entry = self.entries.iter_mut().find(|e| e.0 == i)?;
        entry.2 = clock;
        Some(entry.1.clone())
    }

    /// Keeps `view` of computation `i` (unless another request kept one meanwhile),
    /// and returns the view it replaces when full.
    fn keep(
        &mut self,
        i: usize,
        view: Arc<Computation>,
        capacity: usize,
    ) -> Option<Arc<Computation>> {
        if capacity == 0 || self.entries.iter().any(|e| e.0 == i) {
            return None;
        }
        self.clock += 1;
        let mut gone = None;
        if self.entries.len() >= capacity {
            let oldest = (0..self.entries.len()).min_by_key(|&k| self.entries[k].2);
            gone = oldest.map(|k| self.entries.swap_remove(k).1);
        }
        self.entries.push((i, view, self.clock));
        gone
    }
}

#[cfg(test)]
mod recent_tests {
    use super::*;

    fn named(name: &str) -> Computation {
        Computation {
            name: name.to_string(),
            nodes: vec![],
            root: 0,
        }
    }

    #[test]
    fn a_kept_view_is_not_converted_again_and_the_one_used_longest_ago_goes() {
        let recent = Recent::new(2);
        let first = recent.get_or_convert(0, || named("a"));
        recent.get_or_convert(1, || named("b"));
        // Kept: the same view, `convert` not called.
        let again = recent.get_or_convert(0, || panic!("converted again"));
        assert!(Arc::ptr_eq(&first, &again));
        // Full: 1 was used longest ago.
        recent.get_or_convert(2, || named("c"));
        assert_eq!(recent.len(), 2);
        assert!(Arc::ptr_eq(
            &first,
            &recent.get_or_convert(0, || named("a2"))
        ));
        assert_eq!(recent.get_or_convert(1, || named("b2")).name, "b2");
    }

    #[test]
    fn a_twins_answer_is_kept_unless_the_budget_ran_out_while_comparing() {
        let recent = Recent::new(2);
        assert!(recent.twins_or(3, 5, || true));
        assert!(recent.twins_or(3, 5, || panic!("compared again")));
        // Cut short: "no" is not an answer, and the next ask compares.
        let budget = crate::budget::Budget::new(None);
        budget.cancel();
        assert!(!budget.run(|| recent.twins_or(4, 6, || false)));
        assert!(recent.twins_or(4, 6, || true));
    }

    #[test]
    fn twins_of_twins_are_twins_without_comparing() {
        let recent = Recent::new(4);
        // A class built in any order: 1~2, 3~4, then 2~4 joins them.
        assert!(recent.twins_or(1, 2, || true));
        assert!(recent.twins_or(3, 4, || true));
        assert!(!recent.twins_or(1, 3, || false));
        assert!(recent.twins_or(2, 4, || true));
        for (a, b) in [(1, 3), (3, 1), (4, 1), (2, 3), (4, 2), (1, 1)] {
            assert!(recent.twins_or(a, b, || panic!("{a} and {b} compared again")));
        }
        // A "no" stays a "no" for its own pair only.
        assert!(!recent.twins_or(5, 6, || false));
        assert!(!recent.twins_or(5, 6, || panic!("compared again")));
        assert!(recent.twins_or(6, 5, || true));
    }
}

fn entry(m: &model::Module) -> usize {
    m.entry
        .map(|id| id.index())
        .unwrap_or_else(|| m.computation_count().saturating_sub(1))
}

fn computation(m: &model::Module, c: model::ComputationRef) -> Computation {
    let mut shared = Shared::default();
    let nodes = c
        .instructions
        .iter()
        .map(|i| node(m, c, i, &mut shared))
        .collect();
    let root = c
        .root
        .map(|r| r.index())
        .unwrap_or_else(|| c.instructions.len().saturating_sub(1));
    Computation {
        name: c.name.clone(),
        nodes,
        root,
    }
}

/// What the nodes of one computation share: each shape converted once (an operand's
/// shape is its producer's output, and the model already shares equal shapes), and
/// each distinct set of attributes held once. A view is kept as long as its version,
/// and a hovered fusion of 500 instructions held every operand's shape again.
#[derive(Default)]
struct Shared {
    /// By the model shape's address: the model outlives the conversion.
    shapes: rustc_hash::FxHashMap<*const model::Shape, Arc<Shape>>,
    attrs: rustc_hash::FxHashSet<Arc<Attrs>>,
}

impl Shared {
    fn shape(&mut self, s: &model::Shape) -> Arc<Shape> {
        self.shapes
            .entry(s as *const model::Shape)
            .or_insert_with(|| Arc::new(shape(s)))
            .clone()
    }

    fn attrs(&mut self, attrs: Attrs) -> Arc<Attrs> {
        if attrs == Attrs::default() {
            return Attrs::none();
        }
        if let Some(kept) = self.attrs.get(&attrs) {
            return kept.clone();
        }
        let kept = Arc::new(attrs);
        self.attrs.insert(kept.clone());
        kept
    }
}

fn node(
    m: &model::Module,
    c: model::ComputationRef,
    i: &model::Instruction,
    shared: &mut Shared,
) -> Node {
    let opcode = i.opcode.name();
    let operands: Vec<Arc<Shape>> = (0..i.operands.len())
        .map(|k| match c.operand_shape(i, k) {
            Some(s) => shared.shape(s),
            // An operand without a shape reads as an empty tuple, as an invalid one.
            None => shared.shape(&model::Shape::invalid()),
        })
        .collect();
    let mut op = OpInfo::shared(opcode, shared.shape(&i.shape), operands);
    op.attrs = attrs(c, i, shared);
    let mut n = Node::new(
        i.name.clone(),
        op,
        i.operands
            .iter()
            .map(|o| o.target.map_or(usize::MAX, |t| t.index()))
            .collect(),
    );
    n.parameter_number = i.parameter_number.and_then(|p| usize::try_from(p).ok());
    n.called = called(m, i);
    if opcode == "constant" {
        if let Some(r) = i.literals.first() {
            let lit = c.src(*r).trim();
            n.constant_text = Some(lit.to_string());
            if i.shape
                .as_array()
                .is_some_and(|a| a.dims.is_empty() && a.element.is_integral())
            {
                n.constant_scalar = lit.parse::<i64>().ok();
            }
        }
    }
    n
}

/// Whether computations `a` and `b` of `m` (and what their fusions and calls
/// call, pair by pair) are equal in everything [`node`] reads but names, read from
/// the model without viewing them: `true` means that their views share a
/// structural class ([`super::structure::same`] says so without building them).
/// `false` means only "not shown": an instruction may differ in what the view
/// drops (a decoded attribute it does not read), and calls on a cycle or nested
/// deeper than the composition goes are left to the view's own comparison.
/// ENTRY's 32 calls of renamed copies of a step: viewing the 31 others to compare
/// them was most of a graph's first request.
pub fn twins(m: &model::Module, a: usize, b: usize) -> bool {
    Twins {
        m,
        open: Vec::new(),
        equal: rustc_hash::FxHashSet::default(),
    }
    .same(a, b)
}

/// The pairs of one [`twins`] walk.
struct Twins<'m> {
    m: &'m model::Module,
    /// The pairs being compared, outermost first.
    open: Vec<(usize, usize)>,
    /// Pairs found equal.
    equal: rustc_hash::FxHashSet<(usize, usize)>,
}

impl Twins<'_> {
    fn same(&mut self, a: usize, b: usize) -> bool {
        if self.equal.contains(&(a, b)) {
            return true;
        }
        let count = self.m.computation_count();
        if a >= count
            || b >= count
            || self.open.len() > super::nesting::MAX_DEPTH
            || self.open.iter().any(|&(x, y)| x == a || y == b)
            || crate::budget::exhausted()
        {
            return false;
        }
        self.open.push((a, b));
        let equal = self.compare(a, b);
        self.open.pop();
        if equal {
            self.equal.insert((a, b));
        }
        equal
    }

    fn compare(&mut self, a: usize, b: usize) -> bool {
        let m = self.m;
        let ca = m.computation(model::ComputationId(a as u32));
        let cb = m.computation(model::ComputationId(b as u32));
        if ca.root != cb.root || ca.instructions.len() != cb.instructions.len() {
            return false;
        }
        let plain = ca
            .instructions
            .iter()
            .zip(&cb.instructions)
            .all(|(x, y)| same_node(ca, cb, x, y));
        // Called computations last: most differences show in the instructions.
        plain
            && ca.instructions.iter().zip(&cb.instructions).all(|(x, y)| {
                let (mut p, mut q) = (callees(m, x), callees(m, y));
                loop {
                    match (p.next(), q.next()) {
                        (Some(p), Some(q)) if self.same(p, q) => {}
                        (None, None) => return true,
                        _ => return false,
                    }
                }
            })
    }
}

/// Whether instructions `x` of `ca` and `y` of `cb` are equal in what [`node`]
/// reads (but their names and what they call), given that the other
/// instructions at the same places are compared too (an operand's shape is its
/// target's).
fn same_node(
    ca: model::ComputationRef,
    cb: model::ComputationRef,
    x: &model::Instruction,
    y: &model::Instruction,
) -> bool {
    let same_shape = |s: &std::sync::Arc<model::Shape>, t: &std::sync::Arc<model::Shape>| {
        std::sync::Arc::ptr_eq(s, t) || s == t
    };
    // The attributes read from text, by their two-byte names (`i.attribute(name)`
    // compares each attribute's spelling, three times an instruction).
    static FROM_TEXT: std::sync::LazyLock<[model::AttrName; 3]> =
        std::sync::LazyLock::new(|| READ_FROM_TEXT.map(model::AttrName::of));
    fn raw<'c>(
        c: model::ComputationRef<'c>,
        i: &model::Instruction,
        name: model::AttrName,
    ) -> Option<&'c str> {
        let first = i.attributes.iter().find(|a| a.name == name);
        first.map(|at| c.src(at.value_range).trim())
    }
    fn literal<'c>(c: model::ComputationRef<'c>, i: &model::Instruction) -> Option<&'c str> {
        i.literals.first().map(|r| c.src(*r).trim())
    }
    x.opcode == y.opcode
        && same_shape(&x.shape, &y.shape)
        && x.parameter_number == y.parameter_number
        && x.operands.len() == y.operands.len()
        // An operand's shape is its target's (compared as that instruction), or
        // the one written beside an undefined name.
        && x.operands.iter().zip(&y.operands).all(|(o, p)| {
            o.target == p.target && (o.target.is_some() || o.declared_shape == p.declared_shape)
        })
        && x.decoded == y.decoded
        && FROM_TEXT
            .iter()
            .all(|&name| raw(ca, x, name) == raw(cb, y, name))
        && (x.opcode.name() != "constant" || literal(ca, x) == literal(cb, y))
}

/// The computations [`node`] records as called by `i` (those its maps compose
/// through), as module indices.
fn called(m: &model::Module, i: &model::Instruction) -> Vec<usize> {
    callees(m, i).collect()
}

/// [`called`], one at a time.
fn callees<'m>(
    m: &'m model::Module,
    i: &'m model::Instruction,
) -> impl Iterator<Item = usize> + 'm {
    let attribute = match i.opcode.name() {
        "fusion" => Some("calls"),
        "call" => Some("to_apply"),
        _ => None,
    };
    i.called
        .iter()
        .filter(move |cc| attribute.is_some_and(|a| cc.attribute == a))
        .filter_map(|cc| m.computation_by_name(&cc.name))
        .map(|id| id.index())
}

/// The model's shape as the analysis' shape. Unbounded dynamic extents stay
/// negative; the op constructors refuse them.
pub fn shape(s: &model::Shape) -> Shape {
    match s {
        model::Shape::Array(a) => Shape::Array(array(a)),
        model::Shape::Tuple(es) => Shape::Tuple(es.iter().map(shape).collect()),
        model::Shape::Invalid => Shape::Tuple(vec![]),
    }
}

fn array(a: &model::ArrayShape) -> ArrayShape {
    let layout = a
        .layout
        .as_ref()
        .filter(|l| l.minor_to_major.len() == a.dims.len())
        .and_then(|l| {
            l.minor_to_major
                .iter()
                .map(|&d| usize::try_from(d).ok())
                .collect::<Option<Vec<_>>>()
        });
    ArrayShape {
        dims: a.dims.clone(),
        minor_to_major: layout,
    }
}

fn idx(v: &[i64]) -> Option<Vec<usize>> {
    v.iter().map(|&d| usize::try_from(d).ok()).collect()
}

/// The attributes the model does not decode, which [`decoded_attrs`] reads from
/// their text.
const READ_FROM_TEXT: [&str; 3] = ["num_carries", "fft_length", "k"];

/// The attributes the analysis reads, shared with every instruction that has none
/// or the same.
fn attrs(c: model::ComputationRef, i: &model::Instruction, shared: &mut Shared) -> Arc<Attrs> {
    let from_text = |a: &model::Attribute| READ_FROM_TEXT.contains(&a.name.as_str());
    if i.decoded.is_none() && !i.attributes.iter().any(from_text) {
        return Attrs::none();
    }
    shared.attrs(decoded_attrs(c, i))
}

fn decoded_attrs(c: model::ComputationRef, i: &model::Instruction) -> Attrs {
    let a = i.attrs();
    let u = a.uncommon();
    let raw = |name: &str| i.attribute(name).map(|at| c.src(at.value_range).trim());
    Attrs {
        dimensions: a.dimensions.as_deref().map(<[i64]>::to_vec),
        slice: a.slice.as_ref().map(|v| {
            v.iter()
                .map(|s| op::SliceDim {
                    start: s.start,
                    limit: s.limit,
                    stride: s.stride,
                })
                .collect()
        }),
        padding: u.padding.as_ref().map(|v| {
            v.iter()
                .map(|p| op::PadDim {
                    low: p.low,
                    high: p.high,
                    interior: p.interior,
                })
                .collect()
        }),
        window: u.window.as_ref().map(|v| {
            v.iter()
                .map(|w| op::WindowDim {
                    size: w.size,
                    stride: w.stride,
                    pad_low: w.padding_low,
                    pad_high: w.padding_high,
                    base_dilation: w.base_dilation,
                    window_dilation: w.window_dilation,
                    reversal: w.reversal,
                })
                .collect()
        }),
        dot: a.dot.as_ref().and_then(|dd| {
            Some(Box::new(op::DotDims {
                lhs_batch: idx(&dd.lhs_batch)?,
                rhs_batch: idx(&dd.rhs_batch)?,
                lhs_contracting: idx(&dd.lhs_contracting)?,
                rhs_contracting: idx(&dd.rhs_contracting)?,
            }))
        }),
        conv: u.dim_labels.as_ref().and_then(|l| {
            Some(Box::new(op::ConvDims {
                input_batch: usize::try_from(l.input_batch).ok()?,
                input_feature: usize::try_from(l.input_feature).ok()?,
                input_spatial: idx(&l.input_spatial)?,
                kernel_input_feature: usize::try_from(l.kernel_input_feature).ok()?,
                kernel_output_feature: usize::try_from(l.kernel_output_feature).ok()?,
                kernel_spatial: idx(&l.kernel_spatial)?,
                output_batch: usize::try_from(l.output_batch).ok()?,
                output_feature: usize::try_from(l.output_feature).ok()?,
                output_spatial: idx(&l.output_spatial)?,
            }))
        }),
        gather: u.gather.as_ref().and_then(|g| {
            Some(Box::new(op::GatherDims {
                offset_dims: idx(&g.offset_dims)?,
                collapsed_slice_dims: idx(&g.collapsed_slice_dims)?,
                start_index_map: idx(&g.start_index_map)?,
                operand_batching_dims: idx(&g.operand_batching_dims)?,
                start_indices_batching_dims: idx(&g.start_indices_batching_dims)?,
                index_vector_dim: usize::try_from(g.index_vector_dim).ok()?,
                slice_sizes: g.slice_sizes.clone(),
            }))
        }),
        scatter: u.scatter.as_ref().and_then(|s| {
            Some(Box::new(op::ScatterDims {
                update_window_dims: idx(&s.update_window_dims)?,
                inserted_window_dims: idx(&s.inserted_window_dims)?,
                scatter_dims_to_operand_dims: idx(&s.scatter_dims_to_operand_dims)?,
                input_batching_dims: idx(&s.input_batching_dims)?,
                scatter_indices_batching_dims: idx(&s.scatter_indices_batching_dims)?,
                index_vector_dim: usize::try_from(s.index_vector_dim).ok()?,
            }))
        }),
        dynamic_slice_sizes: u.dynamic_slice_sizes.as_deref().map(<[i64]>::to_vec),
        iota_dimension: u.iota_dimension.map(i64::from),
        tuple_index: a.tuple_index.map(i64::from),
        feature_group_count: u.feature_group_count.map(i64::from),
        batch_group_count: u.batch_group_count.map(i64::from),
        num_carries: raw("num_carries").and_then(|v| v.parse().ok()),
        fft_length: raw("fft_length").and_then(|v| model::attributes::parse_int_list(v).ok()),
        k: raw("k").and_then(|v| v.parse().ok()),
    }
}

/// Parses `text` and builds the analysis view of every module in it (every
/// computation built and converted, in parallel). Of the diagnostics, only the syntax
/// errors are in the file's (a command refuses a broken file; the semantic checks are
/// `check`'s, and cost seconds on a large dump).
pub fn parse(text: &str) -> (model::HloFile, Vec<Module<'static>>) {
    use rayon::prelude::*;
    let document = model::Document::parse(text);
    document.build_all();
    let syntax_errors = document.syntax_errors();
    let mut file = document.into_file();
    file.diagnostics = syntax_errors;
    let modules = file
        .modules
        .iter()
        .map(|m| {
            let computations: Vec<Computation> = m
                .computations()
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|c| computation(m, c))
                .collect();
            Module::new(computations, entry(m))
        })
        .collect();
    (file, modules)
}
