//! Structural classes of computations: two computations share a class when they
//! differ at most in names (of the computation and of its instructions).
//!
//! The analysis of a fusion reads its fused computation's opcodes, shapes,
//! attributes, operand wiring, parameter numbers, constants and the computations
//! it calls, never a name, except where a runtime variable is labelled with the
//! instruction it reads (see [`super::InstructionIndexing::names_instructions`]).
//! A dump repeats its layers' fusions hundreds of times under different names, so
//! a batch of queries ([`super::analyze_many`]) analyzes one fusion per class.
//!
//! Classes are exact: each computation's structure is interned by equality, not
//! only by a hash, and a class id stands for the structure of everything called.

use rustc_hash::FxHashMap;

use super::graph::Module;
use super::nesting::MAX_DEPTH;
use super::op::OpInfo;

/// A structural class id.
pub type Class = u32;

/// The class of each computation of one module (`None` for computations that
/// call themselves or nest deeper than the composition goes: those are analyzed
/// on their own, as the reason the analysis gives names them).
pub struct Classes {
    of: Vec<Option<Class>>,
}

/// What the analysis reads of one instruction.
#[derive(Hash, PartialEq, Eq)]
struct NodeStructure<'m> {
    op: &'m OpInfo,
    operands: &'m [usize],
    parameter_number: Option<usize>,
    constant_scalar: Option<i64>,
    constant_text: Option<&'m str>,
    called: Vec<Class>,
}

/// What the analysis reads of one computation.
#[derive(Hash, PartialEq, Eq)]
struct Structure<'m> {
    root: usize,
    nodes: Vec<NodeStructure<'m>>,
}

/// The state of one computation while classes are assigned.
#[derive(Clone, Copy)]
enum Mark {
    Unvisited,
    InProgress,
    Done(Option<Class>),
}

impl Classes {
    /// The classes of every computation of `module` (views them all).
    pub fn of(module: &Module) -> Classes {
        let mut interner = Interner {
            module,
            marks: vec![Mark::Unvisited; module.len()],
            ids: FxHashMap::default(),
        };
        let of = (0..module.len()).map(|c| interner.class(c, 0)).collect();
        Classes { of }
    }

    /// The class of computation `comp`.
    pub fn class(&self, comp: usize) -> Option<Class> {
        self.of.get(comp).copied().flatten()
    }
}

struct Interner<'m> {
    module: &'m Module<'m>,
    marks: Vec<Mark>,
    ids: FxHashMap<Structure<'m>, Class>,
}

impl<'m> Interner<'m> {
    /// The class of `comp`, reached `depth` calls deep.
    fn class(&mut self, comp: usize, depth: usize) -> Option<Class> {
        match self.marks.get(comp)? {
            Mark::Done(class) => return *class,
            Mark::InProgress => return None,
            Mark::Unvisited => {}
        }
        if depth > MAX_DEPTH {
            return None;
        }
        self.marks[comp] = Mark::InProgress;
        let class = self.structure(comp, depth).map(|s| {
            let next = self.ids.len() as Class;
            *self.ids.entry(s).or_insert(next)
        });
        // A computation on a cycle is refused by the one that closes it, and every
        // computation that calls one of those inherits the refusal.
        self.marks[comp] = Mark::Done(class);
        class
    }

    fn structure(&mut self, comp: usize, depth: usize) -> Option<Structure<'m>> {
        let module = self.module;
        let c = module.computation(comp);
        let mut nodes = Vec::with_capacity(c.nodes.len());
        for n in &c.nodes {
            let called = n
                .called
                .iter()
                .map(|&k| self.class(k, depth + 1))
                .collect::<Option<Vec<_>>>()?;
            nodes.push(NodeStructure {
                op: &n.op,
                operands: &n.operands,
                parameter_number: n.parameter_number,
                constant_scalar: n.constant_scalar,
                constant_text: n.constant_text.as_deref(),
                called,
            });
        }
        Some(Structure {
            root: c.root,
            nodes,
        })
    }
}

/// Whether computations `a` and `b` of `module` share a structural class, found by
/// walking the two side by side (and what they call, pair by pair) without
/// classing the rest of the module: what [`Classes::of`] would say of the two,
/// at the cost of the two. Computations on a call cycle or nested deeper than
/// the composition goes have no class, so they are equal to nothing. When the
/// current time budget ([`crate::budget`]) runs out the answer is `false`: not
/// known equal.
pub fn same(module: &Module, a: usize, b: usize) -> bool {
    let key = (a.min(b), a.max(b));
    if let Some(known) = module.compared.get(key) {
        return known;
    }
    // The source's word first: the views of two equal copies need not be built.
    let equal = module.twins_in_source(a, b)
        || Pairs {
            module,
            equal: FxHashMap::default(),
        }
        .same(a, b, 0);
    // A walk the budget cut short says `false` for "not known": not kept.
    if !crate::budget::exhausted() {
        module.compared.keep(key, equal);
    }
    equal
}

/// The answers of [`same`] for one view: a graph around ENTRY's parameter of a
/// live module compares each of 32 calls' whole steps (every fused computation
/// of each) with the first's, some 60 ms of two cores, and a view lives as long
/// as its document's version, over many requests.
#[derive(Default)]
pub struct Compared {
    known: std::sync::Mutex<FxHashMap<(usize, usize), bool>>,
}

impl Compared {
    fn get(&self, key: (usize, usize)) -> Option<bool> {
        self.known.lock().ok()?.get(&key).copied()
    }

    fn keep(&self, key: (usize, usize), equal: bool) {
        if let Ok(mut known) = self.known.lock() {
            known.insert(key, equal);
        }
    }
}

/// Pairs of computations compared so far: `true` equal, `false` different or
/// being compared (a pair met again while open is on a cycle).
struct Pairs<'m> {
    module: &'m Module<'m>,
    equal: FxHashMap<(usize, usize), bool>,
}

impl Pairs<'_> {
    fn same(&mut self, a: usize, b: usize, depth: usize) -> bool {
        if let Some(&known) = self.equal.get(&(a, b)) {
            return known;
        }
        if depth > MAX_DEPTH
            || crate::budget::exhausted()
            || self.module.get(a).is_none()
            || self.module.get(b).is_none()
        {
            return false;
        }
        self.equal.insert((a, b), false);
        // A computation that calls itself has no class, even paired with itself.
        let equal = self.compare(a, b, depth);
        self.equal.insert((a, b), equal);
        equal
    }

    fn compare(&mut self, a: usize, b: usize, depth: usize) -> bool {
        let module = self.module;
        let (ca, cb) = (module.computation(a), module.computation(b));
        if ca.root != cb.root || ca.nodes.len() != cb.nodes.len() {
            return false;
        }
        for (x, y) in ca.nodes.iter().zip(&cb.nodes) {
            let plain = x.op == y.op
                && x.operands == y.operands
                && x.parameter_number == y.parameter_number
                && x.constant_scalar == y.constant_scalar
                && x.constant_text == y.constant_text
                && x.called.len() == y.called.len();
            if !plain {
                return false;
            }
        }
        // Called computations last: most differences show in the nodes.
        for (x, y) in ca.nodes.iter().zip(&cb.nodes) {
            for (&p, &q) in x.called.iter().zip(&y.called) {
                if !self.same(p, q, depth + 1) {
                    return false;
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::view;

    fn classes(text: &str) -> (Module<'static>, Classes) {
        let (_, mut modules) = view::parse(text);
        let module = modules.remove(0);
        let classes = Classes::of(&module);
        (module, classes)
    }

    fn index(m: &Module, name: &str) -> usize {
        m.computations().position(|c| c.name == name).unwrap()
    }

    #[test]
    fn computations_that_differ_in_names_share_a_class_and_no_other() {
        let text = "HloModule m
a {
  x = f32[8] parameter(0)
  ROOT n = f32[8] negate(x)
}
b {
  p = f32[8] parameter(0)
  ROOT q = f32[8] negate(p)
}
wider {
  p = f32[9] parameter(0)
  ROOT q = f32[9] negate(p)
}
other_op {
  p = f32[8] parameter(0)
  ROOT q = f32[8] exponential(p)
}
other_constant {
  p = f32[8] parameter(0)
  ROOT c = s32[] constant(2)
}
constant {
  p = f32[8] parameter(0)
  ROOT c = s32[] constant(1)
}
ENTRY e {
  p = f32[8] parameter(0)
  f = f32[8] fusion(p), kind=kLoop, calls=a
  g = f32[8] fusion(p), kind=kLoop, calls=b
  ROOT t = (f32[8], f32[8]) tuple(f, g)
}
";
        let (m, classes) = classes(text);
        let class = |name| classes.class(index(&m, name)).unwrap();
        assert_eq!(class("a"), class("b"));
        for other in ["wider", "other_op", "other_constant", "constant", "e"] {
            assert_ne!(class("a"), class(other), "{other}");
        }
        assert_ne!(class("constant"), class("other_constant"));
    }

    #[test]
    fn callers_share_a_class_only_when_their_callees_do() {
        let text = "HloModule m
inner_a {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
inner_b {
  p = f32[8] parameter(0)
  ROOT n = f32[8] abs(p)
}
outer_a {
  p = f32[8] parameter(0)
  ROOT f = f32[8] fusion(p), kind=kLoop, calls=inner_a
}
outer_b {
  p = f32[8] parameter(0)
  ROOT f = f32[8] fusion(p), kind=kLoop, calls=inner_b
}
outer_a2 {
  q = f32[8] parameter(0)
  ROOT g = f32[8] fusion(q), kind=kLoop, calls=inner_a
}
ENTRY e {
  ROOT p = f32[8] parameter(0)
}
";
        let (m, classes) = classes(text);
        let class = |name| classes.class(index(&m, name)).unwrap();
        assert_ne!(class("outer_a"), class("outer_b"));
        assert_eq!(class("outer_a"), class("outer_a2"));
    }

    #[test]
    fn computations_on_a_call_cycle_have_no_class() {
        let text = "HloModule m
a {
  p = f32[8] parameter(0)
  ROOT f = f32[8] fusion(p), kind=kLoop, calls=b
}
b {
  p = f32[8] parameter(0)
  ROOT f = f32[8] fusion(p), kind=kLoop, calls=a
}
c {
  p = f32[8] parameter(0)
  ROOT f = f32[8] fusion(p), kind=kLoop, calls=a
}
ENTRY e {
  ROOT p = f32[8] parameter(0)
}
";
        let (m, classes) = classes(text);
        for name in ["a", "b", "c"] {
            assert_eq!(classes.class(index(&m, name)), None, "{name}");
        }
        assert!(classes.class(index(&m, "e")).is_some());
    }
}
