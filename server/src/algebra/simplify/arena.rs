//! Hash-consed expression nodes: the simplifier's working representation.
//!
//! Every distinct node is stored once and named by a small [`Id`], so equal
//! sub-expressions have equal ids: comparing, copying and memoizing an expression
//! costs one integer, where a boxed [`Expr`] tree costs a deep walk and an
//! allocation per node. Nodes are stored exactly as built (no folding unless a
//! folding constructor is asked for), so `to_expr(from_expr(e)) == e`.
//! Children always have smaller ids than their parents.

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::linear::{Linear, LinearMemo};
use crate::algebra::expr::{BinOp, Expr};
use crate::algebra::variable::Var;

/// A node of the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(u32);

impl Id {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One expression node; children are ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    Const(i64),
    Var(Var),
    Bin(BinOp, Id, Id),
}

/// How simple an expression is: floor division, ceiling division and modulo
/// nodes first (the operations the simplifier exists to remove), then all nodes.
/// Counts saturate, so shared sub-trees cannot overflow them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cost {
    pub div_mod: u32,
    pub nodes: u32,
}

/// The node store. Cleared (capacity kept) between simplifications.
#[derive(Default)]
pub struct Arena {
    nodes: Vec<Node>,
    costs: Vec<Cost>,
    /// Open-addressing hash table of node ids (`id + 1`, 0 for an empty slot),
    /// probed linearly; its length is a power of two, at most half full.
    slots: Vec<u32>,
    /// Linear forms of sums already flattened ([`super::linear::Linear::of`]):
    /// a node never changes, so neither does its form, and the rules ask for the
    /// same sums' forms many times.
    pub(super) linear: RefCell<LinearMemo>,
    /// The nodes [`Linear::to_id`] built, by form (the same numerator is built
    /// many times by the division rules).
    pub(super) built: FxHashMap<Linear, Id>,
}

/// Beyond this many nodes a cleared arena gives its memory back.
const KEEP_CAPACITY: usize = 1 << 16;

/// How deep [`Arena::from_expr`] and [`Arena::to_expr`] recurse before they
/// go on iteratively (a few kilobytes of stack).
const SHALLOW: usize = 64;

/// Slots of a fresh table.
const INITIAL_SLOTS: usize = 256;

/// A hash of a node (its fields packed into two words, then mixed).
fn hash(node: &Node) -> u64 {
    let (a, b) = match *node {
        Node::Const(c) => (0u64, c as u64),
        Node::Var(v) => (1 | (v.kind as u64) << 8, v.index as u64),
        Node::Bin(op, x, y) => (2 | (op as u64) << 8, u64::from(x.0) << 32 | u64::from(y.0)),
    };
    let mut h = (a.rotate_left(47) ^ b).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 32)
}

impl Arena {
    pub fn clear(&mut self) {
        if self.nodes.capacity() > KEEP_CAPACITY {
            *self = Arena::default();
        } else {
            self.nodes.clear();
            self.costs.clear();
            self.slots.fill(0);
            self.linear.get_mut().clear();
            self.built.clear();
        }
    }

    /// The slot holding `node`, or the empty slot where it belongs.
    fn find_slot(&self, node: &Node) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = hash(node) as usize & mask;
        loop {
            match self.slots[i] {
                0 => return i,
                s if self.nodes[s as usize - 1] == *node => return i,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Doubles the table (or makes the first one) and re-inserts every node.
    fn grow(&mut self) {
        let len = (self.slots.len() * 2).max(INITIAL_SLOTS);
        self.slots = vec![0; len];
        for (i, node) in self.nodes.iter().enumerate() {
            let mask = len - 1;
            let mut j = hash(node) as usize & mask;
            while self.slots[j] != 0 {
                j = (j + 1) & mask;
            }
            self.slots[j] = i as u32 + 1;
        }
    }

    pub fn node(&self, id: Id) -> Node {
        self.nodes[id.index()]
    }

    pub fn cost(&self, id: Id) -> Cost {
        self.costs[id.index()]
    }

    /// The id of `node`, adding it when new.
    pub fn intern(&mut self, node: Node) -> Id {
        if (self.nodes.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let slot = self.find_slot(&node);
        if self.slots[slot] != 0 {
            return Id(self.slots[slot] - 1);
        }
        let id = Id(u32::try_from(self.nodes.len()).expect("fewer than 2^32 nodes"));
        self.slots[slot] = id.0 + 1;
        let cost = match node {
            Node::Const(_) | Node::Var(_) => Cost {
                div_mod: 0,
                nodes: 1,
            },
            Node::Bin(op, a, b) => {
                let (ca, cb) = (self.cost(a), self.cost(b));
                let own = matches!(op, BinOp::FloorDiv | BinOp::CeilDiv | BinOp::Mod) as u32;
                Cost {
                    div_mod: own.saturating_add(ca.div_mod).saturating_add(cb.div_mod),
                    nodes: 1u32.saturating_add(ca.nodes).saturating_add(cb.nodes),
                }
            }
        };
        self.nodes.push(node);
        self.costs.push(cost);
        id
    }

    pub fn constant(&mut self, c: i64) -> Id {
        self.intern(Node::Const(c))
    }

    pub fn var(&mut self, v: Var) -> Id {
        self.intern(Node::Var(v))
    }

    /// `op(a, b)` exactly as given (no folding).
    pub fn bin(&mut self, op: BinOp, a: Id, b: Id) -> Id {
        self.intern(Node::Bin(op, a, b))
    }

    /// `op(a, c)` for a constant `c`, exactly as given.
    pub fn bin_const(&mut self, op: BinOp, a: Id, c: i64) -> Id {
        let c = self.constant(c);
        self.bin(op, a, c)
    }

    pub fn as_const(&self, id: Id) -> Option<i64> {
        match self.node(id) {
            Node::Const(c) => Some(c),
            _ => None,
        }
    }

    /// Operator and operands when `id` is a binary node.
    pub fn as_bin(&self, id: Id) -> Option<(BinOp, Id, Id)> {
        match self.node(id) {
            Node::Bin(op, a, b) => Some((op, a, b)),
            _ => None,
        }
    }

    /// `(x, c)` when `id` is `op(x, c)` with a constant `c`.
    pub fn with_const_rhs(&self, id: Id, op: BinOp) -> Option<(Id, i64)> {
        match self.node(id) {
            Node::Bin(o, x, c) if o == op => Some((x, self.as_const(c)?)),
            _ => None,
        }
    }

    /// `a * b` with `Expr`'s construction-time folding: constants folded (unless
    /// that overflows), `x * 1 = x`, constants on the right, `(x * c1) * c2 =
    /// x * (c1 * c2)`.
    pub fn mul(&mut self, a: Id, b: Id) -> Id {
        match (self.node(a), self.node(b)) {
            (Node::Const(x), Node::Const(y)) => match x.checked_mul(y) {
                Some(v) => self.constant(v),
                None => self.bin(BinOp::Mul, a, b),
            },
            (_, Node::Const(1)) => a,
            (Node::Const(1), _) => b,
            (Node::Const(_), _) => self.mul(b, a),
            (Node::Bin(BinOp::Mul, x, c1), Node::Const(c2)) => {
                match self.as_const(c1).and_then(|c1| c1.checked_mul(c2)) {
                    Some(c) => {
                        let c = self.constant(c);
                        self.mul(x, c)
                    }
                    None => self.bin(BinOp::Mul, a, b),
                }
            }
            _ => self.bin(BinOp::Mul, a, b),
        }
    }

    /// `op(a, b)` with the folding of the expression constructors
    /// ([`Expr::binary`], which the parser uses): constants folded when the result
    /// fits, `x + 0`, `x * 1`, `x floordiv 1`, `x mod 1` dropped, constants to the
    /// right of `+` and `*`. A node built this way prints as text that reads back
    /// as the same node, where [`Arena::bin`] may keep a `+ 0` the text loses.
    pub fn binary(&mut self, op: BinOp, a: Id, b: Id) -> Id {
        use crate::algebra::interval::{ceil_div, floor_div, floor_mod};
        let (x, y) = (self.as_const(a), self.as_const(b));
        let folded = match (op, x, y) {
            (BinOp::Add, Some(x), Some(y)) => x.checked_add(y).map(|v| self.constant(v)),
            (BinOp::Add, _, Some(0)) => Some(a),
            (BinOp::Add, Some(0), _) => Some(b),
            (BinOp::Add, Some(_), None) => Some(self.bin(BinOp::Add, b, a)),
            (BinOp::Mul, ..) => Some(self.mul(a, b)),
            (BinOp::FloorDiv, Some(x), Some(y)) => floor_div(x, y).map(|v| self.constant(v)),
            (BinOp::CeilDiv, Some(x), Some(y)) => ceil_div(x, y).map(|v| self.constant(v)),
            (BinOp::FloorDiv | BinOp::CeilDiv, _, Some(1)) => Some(a),
            (BinOp::Mod, Some(x), Some(y)) => floor_mod(x, y).map(|v| self.constant(v)),
            (BinOp::Mod, _, Some(1 | -1)) => Some(self.constant(0)),
            (BinOp::Min, Some(x), Some(y)) => Some(self.constant(x.min(y))),
            (BinOp::Max, Some(x), Some(y)) => Some(self.constant(x.max(y))),
            _ => None,
        };
        folded.unwrap_or_else(|| self.bin(op, a, b))
    }

    /// Adds an expression tree: by recursion while it is shallow (the common
    /// case, and the cheapest walk), the deeper parts iteratively, so deep trees
    /// cost no call stack.
    pub fn from_expr(&mut self, root: &Expr) -> Id {
        self.add_expr_within(root, SHALLOW)
    }

    /// [`Arena::from_expr`] with `depth` levels of recursion left.
    fn add_expr_within(&mut self, e: &Expr, depth: usize) -> Id {
        match e {
            Expr::Const(c) => self.constant(*c),
            Expr::Var(v) => self.var(*v),
            _ if depth == 0 => self.add_deep_expr(e),
            _ => {
                let (op, a, b) = e.as_binary().expect("binary node");
                let a = self.add_expr_within(a, depth - 1);
                let b = self.add_expr_within(b, depth - 1);
                self.bin(op, a, b)
            }
        }
    }

    /// Adds an expression tree iteratively.
    fn add_deep_expr(&mut self, root: &Expr) -> Id {
        let mut stack: SmallVec<[(&Expr, bool); 32]> = SmallVec::new();
        stack.push((root, false));
        let mut done: SmallVec<[Id; 32]> = SmallVec::new();
        while let Some((e, expanded)) = stack.pop() {
            match e {
                Expr::Const(c) => done.push(self.constant(*c)),
                Expr::Var(v) => done.push(self.var(*v)),
                _ => {
                    let (op, a, b) = e.as_binary().expect("binary node");
                    if expanded {
                        let rb = done.pop().expect("right operand");
                        let ra = done.pop().expect("left operand");
                        done.push(self.bin(op, ra, rb));
                    } else {
                        stack.push((e, true));
                        stack.push((b, false));
                        stack.push((a, false));
                    }
                }
            }
        }
        done.pop().expect("one result")
    }

    /// The expression tree of a node: by recursion while it is shallow, the
    /// deeper parts iteratively (see [`Arena::from_expr`]).
    pub fn to_expr(&self, root: Id) -> Expr {
        self.to_expr_within(root, SHALLOW)
    }

    /// [`Arena::to_expr`] with `depth` levels of recursion left.
    fn to_expr_within(&self, id: Id, depth: usize) -> Expr {
        match self.node(id) {
            Node::Const(c) => Expr::Const(c),
            Node::Var(v) => Expr::Var(v),
            Node::Bin(..) if depth == 0 => self.to_deep_expr(id),
            Node::Bin(op, a, b) => Expr::raw(
                op,
                self.to_expr_within(a, depth - 1),
                self.to_expr_within(b, depth - 1),
            ),
        }
    }

    /// The expression tree of a node, iteratively.
    fn to_deep_expr(&self, root: Id) -> Expr {
        let mut stack: SmallVec<[(Id, bool); 32]> = SmallVec::new();
        stack.push((root, false));
        let mut done: SmallVec<[Expr; 16]> = SmallVec::new();
        while let Some((id, expanded)) = stack.pop() {
            match self.node(id) {
                Node::Const(c) => done.push(Expr::Const(c)),
                Node::Var(v) => done.push(Expr::Var(v)),
                Node::Bin(op, a, b) => {
                    if expanded {
                        let rb = done.pop().expect("right operand");
                        let ra = done.pop().expect("left operand");
                        done.push(Expr::raw(op, ra, rb));
                    } else {
                        stack.push((id, true));
                        stack.push((b, false));
                        stack.push((a, false));
                    }
                }
            }
        }
        done.pop().expect("one result")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_trees_share_one_id_and_round_trip() {
        let mut arena = Arena::default();
        let e = (Expr::dim(0) * 4 + Expr::range(1)).floor_div(8);
        let a = arena.from_expr(&e);
        let b = arena.from_expr(&e.clone());
        assert_eq!(a, b);
        assert_eq!(arena.to_expr(a), e);
        assert_eq!(
            arena.cost(a),
            Cost {
                div_mod: 1,
                nodes: 7
            }
        );
    }

    #[test]
    fn binary_folds_as_the_expression_constructors_do() {
        let operands = [
            Expr::constant(0),
            Expr::constant(1),
            Expr::constant(-1),
            Expr::constant(7),
            Expr::constant(i64::MAX),
            Expr::constant(i64::MIN),
            Expr::dim(0),
            Expr::raw(BinOp::Mul, Expr::dim(0), Expr::constant(3)),
            Expr::raw(BinOp::Mul, Expr::dim(0), Expr::constant(i64::MAX)),
            Expr::raw(BinOp::Add, Expr::dim(1), Expr::constant(0)),
        ];
        let ops = [
            BinOp::Add,
            BinOp::Mul,
            BinOp::FloorDiv,
            BinOp::CeilDiv,
            BinOp::Mod,
            BinOp::Min,
            BinOp::Max,
        ];
        let mut arena = Arena::default();
        for op in ops {
            for a in &operands {
                for b in &operands {
                    let (ia, ib) = (arena.from_expr(a), arena.from_expr(b));
                    let built = arena.binary(op, ia, ib);
                    let expected = Expr::binary(op, a.clone(), b.clone());
                    assert_eq!(arena.to_expr(built), expected, "{op:?} {a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn deep_trees_convert_without_recursion() {
        let mut e = Expr::dim(0);
        for _ in 0..100_000 {
            e = Expr::raw(BinOp::Add, e, Expr::constant(1));
        }
        let mut arena = Arena::default();
        let id = arena.from_expr(&e);
        let back = arena.to_expr(id);
        assert_eq!(arena.cost(id).nodes, 200_001);
        // Dropping deep trees recursively would overflow: unwind them by hand.
        for t in [e, back] {
            let mut cur = t;
            while let Expr::Add(a, _) = cur {
                cur = *a;
            }
        }
    }
}
