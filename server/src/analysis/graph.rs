//! The analysis' view of an HLO module: computations of nodes with resolved
//! operands and called computations. Built from the model by [`super::view`], or
//! directly by tests (random fusions need no text).

use std::sync::{Arc, OnceLock};

use super::op::OpInfo;

/// One instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub op: OpInfo,
    /// Operand instructions, as indices into the same computation's `nodes`.
    pub operands: Vec<usize>,
    /// Called computations (`calls=` of a fusion or call), as module indices.
    pub called: Vec<usize>,
    /// `parameter(N)`'s number.
    pub parameter_number: Option<usize>,
    /// The value of an integer scalar constant (runtime variables fold it).
    pub constant_scalar: Option<i64>,
    /// The literal text of a constant, for printing `constant(42)`.
    pub constant_text: Option<String>,
}

impl Node {
    pub fn new(name: impl Into<String>, op: OpInfo, operands: Vec<usize>) -> Node {
        Node {
            name: name.into(),
            op,
            operands,
            called: vec![],
            parameter_number: None,
            constant_scalar: None,
            constant_text: None,
        }
    }

    /// How XLA names a runtime variable's source: `parameter(1)`, `constant(99)`,
    /// or the instruction name.
    pub fn label(&self) -> String {
        if let Some(n) = self.parameter_number {
            return format!("parameter({n})");
        }
        if let Some(text) = &self.constant_text {
            return format!("constant({text})");
        }
        self.name.clone()
    }

    /// True for instructions whose maps are composed through a called computation.
    pub fn is_composite(&self) -> bool {
        matches!(self.op.opcode.as_str(), "fusion" | "call") && self.called.len() == 1
    }
}

/// A computation: its nodes in text order and its root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Computation {
    pub name: String,
    pub nodes: Vec<Node>,
    pub root: usize,
}

impl Computation {
    /// Nodes reachable from `start` through operands, operands before users
    /// (iterative DFS: deep chains must not overflow the stack).
    pub fn post_order_from(&self, start: usize) -> Vec<usize> {
        self.post_order_within(start, None)
    }

    /// [`Self::post_order_from`] through the nodes of `within` only (all when
    /// `None`). When `within` holds every user of each node it holds (as
    /// [`Self::users_closure`] does), this is the full order with the other nodes
    /// left out: no other node leads to one of `within`.
    pub fn post_order_within(&self, start: usize, within: Option<&[bool]>) -> Vec<usize> {
        let inside = |node| is_within(within, node);
        if !inside(start) {
            return vec![];
        }
        let mut order = vec![];
        let mut state = vec![0u8; self.nodes.len()]; // 0 new, 1 open, 2 done
        let mut stack = vec![(start, 0usize)];
        while let Some((node, next)) = stack.pop() {
            if next == 0 {
                if state[node] != 0 {
                    continue;
                }
                state[node] = 1;
            }
            let operands = &self.nodes[node].operands;
            if next < operands.len() {
                stack.push((node, next + 1));
                let child = operands[next];
                if child < self.nodes.len() && state[child] == 0 && inside(child) {
                    stack.push((child, 0));
                }
            } else {
                state[node] = 2;
                order.push(node);
            }
        }
        order
    }

    /// The nodes that read one of `targets`, at any depth, and the targets: what
    /// a traversal from the outputs must visit to know what reaches the targets
    /// (`result[i]` for node `i`).
    pub fn users_closure(&self, targets: &[usize]) -> Vec<bool> {
        let n = self.nodes.len();
        // Each node's users, packed: those of `v` are `users[first[v]..first[v + 1]]`.
        let mut first = vec![0usize; n + 1];
        for node in &self.nodes {
            for &v in node.operands.iter().filter(|&&v| v < n) {
                first[v + 1] += 1;
            }
        }
        for v in 0..n {
            first[v + 1] += first[v];
        }
        let mut next = first.clone();
        let mut users = vec![0usize; first[n]];
        for (u, node) in self.nodes.iter().enumerate() {
            for &v in node.operands.iter().filter(|&&v| v < n) {
                users[next[v]] = u;
                next[v] += 1;
            }
        }
        let mut inside = vec![false; self.nodes.len()];
        let mut stack: Vec<usize> = targets
            .iter()
            .copied()
            .filter(|&t| t < self.nodes.len())
            .collect();
        while let Some(v) = stack.pop() {
            if std::mem::replace(&mut inside[v], true) {
                continue;
            }
            let of_v = &users[first[v]..first[v + 1]];
            stack.extend(of_v.iter().copied().filter(|&u| !inside[u]));
        }
        inside
    }

    /// Index of `parameter(number)`.
    pub fn parameter(&self, number: usize) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.parameter_number == Some(number))
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        let name = name.trim_start_matches('%');
        self.nodes.iter().position(|n| n.name == name)
    }
}

/// Whether `node` is one of the nodes of `within` (a flag per node; every node when
/// `None`), as [`Computation::post_order_within`] reads it.
pub fn is_within(within: Option<&[bool]>, node: usize) -> bool {
    within.is_none_or(|w| w.get(node).copied().unwrap_or(false))
}

/// Builds computation `i` of a lazily viewed module (or hands out one built before:
/// [`Module::lazy_shared`]).
type Builder<'a> = Box<dyn Fn(usize) -> Arc<Computation> + Send + Sync + 'a>;

/// Says, from the source of a lazily viewed module, whether two computations'
/// views would be equal but for names (`false`: not known).
type Twins<'a> = Box<dyn Fn(usize, usize) -> bool + Send + Sync + 'a>;

/// A module: computations and the entry. The computations are given up front (tests,
/// generated fusions, the CLI) or built on first use ([`Module::lazy`]): a hover on
/// one fusion of a 50 MB dump views that fusion, not the module.
/// The lifetime is that of what the builder borrows (`'static` for views that own
/// their source).
#[derive(Default)]
pub struct Module<'a> {
    computations: Cells,
    builder: Option<Builder<'a>>,
    twins: Option<Twins<'a>>,
    pub entry: usize,
    /// Pairs of computations found structurally equal or not, kept as long as the
    /// view ([`super::structure::same`]).
    pub(crate) compared: super::structure::Compared,
}

impl std::fmt::Debug for Module<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("computations", &self.computations.len())
            .field("entry", &self.entry)
            .finish()
    }
}

impl<'a> Module<'a> {
    pub fn new(computations: Vec<Computation>, entry: usize) -> Module<'a> {
        Module {
            computations: Cells::filled(computations),
            builder: None,
            twins: None,
            entry,
            compared: Default::default(),
        }
    }

    /// A module of `count` computations, computation `i` built by `build(i)` when
    /// first asked for.
    pub fn lazy(
        count: usize,
        entry: usize,
        build: impl Fn(usize) -> Computation + Send + Sync + 'a,
    ) -> Module<'a> {
        Module::lazy_shared(count, entry, move |i| Arc::new(build(i)))
    }

    /// [`Module::lazy`] with computations that may outlive this module: `build(i)`
    /// may hand out a computation another view of the same source built and kept
    /// ([`super::view::Recent`]), so that a view made per request does not convert
    /// again what the last requests converted.
    pub fn lazy_shared(
        count: usize,
        entry: usize,
        build: impl Fn(usize) -> Arc<Computation> + Send + Sync + 'a,
    ) -> Module<'a> {
        Module {
            computations: Cells::empty(count),
            builder: Some(Box::new(build)),
            twins: None,
            entry,
            compared: Default::default(),
        }
    }

    /// This module, whose source says by `twins(a, b)` that computations `a` and
    /// `b` view alike but for names (what they call included), without viewing
    /// them ([`super::structure::same`] asks it first).
    pub fn with_twins(mut self, twins: impl Fn(usize, usize) -> bool + Send + Sync + 'a) -> Self {
        self.twins = Some(Box::new(twins));
        self
    }

    /// Whether the source says that computations `a` and `b` view alike but for
    /// names (`false`: not known, or no source to ask).
    pub fn twins_in_source(&self, a: usize, b: usize) -> bool {
        self.twins.as_ref().is_some_and(|twins| twins(a, b))
    }

    pub fn len(&self) -> usize {
        self.computations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.computations.is_empty()
    }

    /// Computation `i`, if the module has one.
    pub fn get(&self, i: usize) -> Option<&Computation> {
        let cell = self.computations.get(i)?;
        Some(cell.get_or_init(|| match &self.builder {
            Some(build) => build(i),
            None => Arc::new(Computation {
                name: String::new(),
                nodes: vec![],
                root: 0,
            }),
        }))
    }

    /// Computation `i`; panics past the end, as indexing does.
    pub fn computation(&self, i: usize) -> &Computation {
        self.get(i)
            .unwrap_or_else(|| panic!("computation {i} of a module of {}", self.len()))
    }

    /// How many computations are converted (or were given) so far.
    pub fn converted(&self) -> usize {
        self.computations.converted()
    }

    /// Every computation, in order (builds them all).
    pub fn computations(&self) -> impl Iterator<Item = &Computation> {
        (0..self.len()).map(|i| self.computation(i))
    }

    /// The computations that fusion instructions call, in order (builds them all).
    pub fn fused_computations(&self) -> std::collections::BTreeSet<usize> {
        self.computations()
            .flat_map(|c| &c.nodes)
            .filter(|n| n.op.opcode == "fusion")
            .filter_map(|n| n.called.first().copied())
            .collect()
    }
}

/// Computations per page of [`Cells`].
const PAGE: usize = 256;

/// The cells of [`PAGE`] consecutive computations.
type Page = Box<[OnceLock<Arc<Computation>>]>;

/// One cell per computation, allocated a page at a time when first reached: a
/// diagnostic source views one computation (and what it calls) of a module of tens of
/// thousands, once per computation checked, so making the view must not cost the
/// module's size (a cell per computation made opening a 60 MB dump quadratic).
#[derive(Default)]
struct Cells {
    len: usize,
    pages: Box<[OnceLock<Page>]>,
}

impl Cells {
    fn empty(len: usize) -> Cells {
        Cells {
            len,
            pages: (0..len.div_ceil(PAGE)).map(|_| OnceLock::new()).collect(),
        }
    }

    fn filled(computations: Vec<Computation>) -> Cells {
        let cells = Cells::empty(computations.len());
        for (i, c) in computations.into_iter().enumerate() {
            let _ = cells.get(i).expect("within the length").set(Arc::new(c));
        }
        cells
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many cells hold a computation.
    fn converted(&self) -> usize {
        let pages = self.pages.iter().filter_map(OnceLock::get);
        pages
            .flat_map(|page| page.iter())
            .filter(|c| c.get().is_some())
            .count()
    }

    /// The cell of computation `i` (its page allocated now if it was not).
    fn get(&self, i: usize) -> Option<&OnceLock<Arc<Computation>>> {
        if i >= self.len {
            return None;
        }
        let page = self.pages[i / PAGE].get_or_init(|| {
            let size = PAGE.min(self.len - i / PAGE * PAGE);
            (0..size).map(|_| OnceLock::new()).collect()
        });
        Some(&page[i % PAGE])
    }
}
