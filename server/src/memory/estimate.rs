//! The estimate from the module text alone, for a scheduled module (`is_scheduled=
//! true`: each computation's text order is its schedule). What XLA's buffer assigner
//! does by default, in the same steps:
//! 1. the schedule is flattened as `HloLiveRange` does it: a while's condition and
//!    body, a call's or conditional's computations, laid out before the instruction;
//! 2. values: each instruction defines one per leaf of its shape (and one per tuple
//!    table, 8 bytes a pointer), except those that pass values on: get-tuple-element,
//!    bitcast, a tuple's elements, a while (its init, body parameter, body root and
//!    result are one buffer), a conditional (its result a phi in its branches' roots'
//!    buffer), a call (its
//!    callee's root), parameters of called computations (their operands);
//! 3. liveness: from the defining time to the last use or position (a root's until its
//!    computation ends; the entry's parameters and outputs until the end);
//! 4. parameters, constants and outputs get allocations of their own; each other
//!    buffer, largest first, goes into an output's allocation it fits without
//!    overlapping in time (XLA's `MaybeAssignBuffer`), else into the temp heap, packed
//!    by best fit ([`super::heap`]).
//!
//! Not modelled: a buffer shared with a dying operand by an in-place op when both
//! are temps (XLA's heap simulator `ShareWith`), thread-local buffers of fused
//! computations, async ops, and memory spaces other than the default.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::heap::{self, Interval};
use super::report::{peak_of, Buffer, Span};
use super::{Allocation, AllocationKind, AssignedValue, Note, Report, Source, Totals};
use crate::model::{ComputationId, InstrId, Instruction, Module, Opcode, Shape};

/// Bytes of a pointer in a tuple's table (XLA on CPU and GPU).
const POINTER_BYTES: u64 = 8;
/// The temp heap's alignment on XLA's CPU backend.
const TEMP_ALIGNMENT: u64 = 64;

type At = (ComputationId, InstrId);
type Index = Vec<usize>;
type ValueId = usize;

/// What an instruction position holds: the value at each shape index.
type Positions = Vec<(Index, ValueId)>;

#[derive(Clone, Debug)]
struct Value {
    def: At,
    index: Index,
    bytes: u64,
    start: u64,
    end: u64,
    parameter: Option<u64>,
    constant: bool,
    live_out: bool,
    /// A loop's parameter or result (XLA's SSA phi): it hands the loop's buffer on,
    /// and its memory is counted with the value before it.
    phi: bool,
}

/// The positions a called computation's parameters take from its caller; `phi`
/// for a loop's condition and body, whose parameters are values of their own.
struct Binding {
    positions: Vec<Positions>,
    phi: bool,
}

/// The flattened schedule and the values over it.
#[derive(Default)]
struct Flow {
    order: Vec<At>,
    times: FxHashMap<At, u64>,
    spans: FxHashMap<ComputationId, std::ops::Range<u64>>,
    values: Vec<Value>,
    positions: FxHashMap<At, Positions>,
    /// Union-find over values: the buffers XLA's alias analysis would form.
    parent: Vec<ValueId>,
    notes: Vec<Note>,
    /// How many computations are being flattened, one inside the other.
    depth: usize,
}

/// Calls nested deeper than this are not flattened (their results are taken as
/// values of their own, with a note): the walk recurses, and a 10,000-deep chain of
/// calls must not overflow the stack.
const MAX_CALL_DEPTH: usize = 64;

/// The estimate for `module`; `None` when it has no entry computation, or when the
/// caller's budget ran out ([`crate::budget`]: the server gives up a version's
/// estimate when a newer version arrives). A module that is not scheduled is
/// estimated in text order and says so in a note.
pub fn estimate(module: &Module) -> Option<Report> {
    let entry = module.entry_computation()?;
    let mut flow = Flow::default();
    if !module.compiled {
        flow.notes.push(note(
            "the module is not marked is_scheduled=true: its text order is taken as the schedule",
        ));
    }
    flow.flatten(module, entry.id, None);
    if crate::budget::exhausted() {
        return None;
    }
    flow.liveness(module, entry.id);
    if crate::budget::exhausted() {
        return None;
    }
    flow.assign(module, entry.id)
}

fn note(message: &str) -> Note {
    Note {
        file: None,
        line: None,
        message: message.to_string(),
    }
}

/// Every shape index of `shape`, tuple nodes before their elements.
fn indices(shape: &Shape) -> Vec<(Index, u64)> {
    fn walk(s: &Shape, at: &mut Index, out: &mut Vec<(Index, u64)>) {
        match s {
            Shape::Tuple(es) => {
                out.push((at.clone(), POINTER_BYTES * es.len() as u64));
                for (i, e) in es.iter().enumerate() {
                    at.push(i);
                    walk(e, at, out);
                    at.pop();
                }
            }
            Shape::Array(a) => out.push((at.clone(), bytes_of(a))),
            Shape::Invalid => out.push((at.clone(), 0)),
        }
    }
    let mut out = Vec::new();
    walk(shape, &mut Vec::new(), &mut out);
    out
}

fn bytes_of(a: &crate::model::ArrayShape) -> u64 {
    a.bit_size()
        .map(|bits| (bits.max(0) as u64).div_ceil(8))
        .unwrap_or(0)
}

/// The report's texts, each held once: an instruction's name (in the schedule, its
/// buffers and its allocated values), a shape index, a shape as printed. A report is
/// kept for each of the last versions, and a large module has tens of thousands of
/// values, most of them `{}` of a few shapes.
#[derive(Default)]
struct Texts {
    names: FxHashMap<At, Arc<str>>,
    indices: FxHashMap<Index, Arc<str>>,
    /// By the model shape's address: the module outlives the report's making.
    shapes: FxHashMap<*const Shape, Arc<str>>,
}

impl Texts {
    fn name(&mut self, module: &Module, at: At) -> Arc<str> {
        self.names
            .entry(at)
            .or_insert_with(|| (*module.computation(at.0).instruction(at.1).name).into())
            .clone()
    }

    fn index(&mut self, index: &[usize]) -> Arc<str> {
        if let Some(text) = self.indices.get(index) {
            return text.clone();
        }
        let text: Arc<str> = index_text(index).into();
        self.indices.insert(index.to_vec(), text.clone());
        text
    }
}

/// `{}`, `{1}`, `{0,2}`.
pub fn index_text(index: &[usize]) -> String {
    let parts: Vec<String> = index.iter().map(|i| i.to_string()).collect();
    format!("{{{}}}", parts.join(","))
}

impl Flow {
    fn find(&mut self, v: ValueId) -> ValueId {
        let mut root = v;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        let mut at = v;
        while self.parent[at] != root {
            let next = self.parent[at];
            self.parent[at] = root;
            at = next;
        }
        root
    }

    fn union(&mut self, a: ValueId, b: ValueId) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[b.max(a)] = a.min(b);
        }
    }

    fn define(&mut self, at: At, shape: &Shape, parameter: Option<u64>, constant: bool) {
        let mut positions = Vec::new();
        for (index, bytes) in indices(shape) {
            let id = self.values.len();
            self.values.push(Value {
                def: at,
                index: index.clone(),
                bytes,
                start: 0,
                end: 0,
                parameter,
                constant,
                live_out: false,
                phi: false,
            });
            self.parent.push(id);
            positions.push((index, id));
        }
        self.positions.insert(at, positions);
    }

    /// Defines phi values at `at` (see [`Value::phi`]); their positions.
    fn define_phi(&mut self, at: At, shape: &Shape) -> Positions {
        let first = self.values.len();
        self.define(at, shape, None, false);
        for v in &mut self.values[first..] {
            v.phi = true;
        }
        self.positions[&at].clone()
    }

    /// The positions of `at`'s operand `i`.
    fn operand(&self, module: &Module, at: At, i: usize) -> Positions {
        let c = module.computation(at.0);
        let instr = c.instruction(at.1);
        instr
            .operands
            .get(i)
            .and_then(|o| o.target)
            .and_then(|t| self.positions.get(&(at.0, t)))
            .cloned()
            .unwrap_or_default()
    }

    /// Lays out computation `id` (and what it calls) in the schedule; `binding` holds
    /// the positions its parameters take from the caller.
    fn flatten(&mut self, module: &Module, id: ComputationId, binding: Option<Binding>) {
        if self.spans.contains_key(&id) {
            return;
        }
        let start = self.order.len() as u64;
        self.spans.insert(id, start..start);
        self.depth += 1;
        let c = module.computation(id);
        let is_entry = c.model().is_entry;
        for instr in &c.model().instructions {
            // A newer version stops this one's estimate (see `estimate`): the walk of
            // a dump's every instruction is most of its time.
            if crate::budget::exhausted() {
                break;
            }
            let at = (id, instr.id);
            self.before(module, at, instr);
            self.times.insert(at, self.order.len() as u64);
            self.order.push(at);
            self.values_of(module, at, instr, is_entry, binding.as_ref());
        }
        self.spans.insert(id, start..self.order.len() as u64);
        self.depth -= 1;
    }

    /// Flattens what `instr` runs, before it.
    fn before(&mut self, module: &Module, at: At, instr: &Instruction) {
        let calls = matches!(
            instr.opcode,
            Opcode::While | Opcode::Conditional | Opcode::Call
        );
        if calls && self.depth >= MAX_CALL_DEPTH {
            let message = format!(
                "calls nested more than {MAX_CALL_DEPTH} deep are not followed: their \
                 buffers are left out"
            );
            if !self.notes.iter().any(|n| n.message == message) {
                self.notes.push(note(&message));
            }
            return;
        }
        match instr.opcode {
            Opcode::While => {
                let init = vec![self.operand(module, at, 0)];
                for attribute in ["condition", "body"] {
                    if let Some(c) = module.called_computation(instr, attribute) {
                        let phi = Binding {
                            positions: init.clone(),
                            phi: true,
                        };
                        self.flatten(module, c.id, Some(phi));
                    }
                }
            }
            Opcode::Conditional => {
                for (k, called) in instr.called.iter().enumerate() {
                    if let Some(c) = module.resolve(called) {
                        let bound = vec![self.operand(module, at, k + 1)];
                        self.flatten(
                            module,
                            c.id,
                            Some(Binding {
                                positions: bound,
                                phi: false,
                            }),
                        );
                    }
                }
            }
            Opcode::Call => {
                if let Some(c) = instr.called.first().and_then(|c| module.resolve(c)) {
                    let bound = (0..instr.operands.len())
                        .map(|i| self.operand(module, at, i))
                        .collect();
                    self.flatten(
                        module,
                        c.id,
                        Some(Binding {
                            positions: bound,
                            phi: false,
                        }),
                    );
                }
            }
            _ => {}
        }
    }

    /// The root positions of the computation `instr` calls through `attribute`.
    fn callee_root(&self, module: &Module, instr: &Instruction, called: usize) -> Positions {
        let Some(c) = instr.called.get(called).and_then(|c| module.resolve(c)) else {
            return Positions::new();
        };
        c.model()
            .root
            .and_then(|r| self.positions.get(&(c.id, r)))
            .cloned()
            .unwrap_or_default()
    }

    fn values_of(
        &mut self,
        module: &Module,
        at: At,
        instr: &Instruction,
        is_entry: bool,
        binding: Option<&Binding>,
    ) {
        let pass = |p: Positions| -> Positions { p };
        let positions = match instr.opcode {
            Opcode::Parameter if !is_entry => {
                let n = instr.parameter_number.unwrap_or(0) as usize;
                let bound = binding.and_then(|b| b.positions.get(n)).cloned();
                if binding.is_some_and(|b| b.phi) {
                    // A loop's parameter is a value of its own (XLA's SSA phi), in the
                    // loop's buffer: the init's live range ends where the loop begins.
                    let phi = self.define_phi(at, &instr.shape);
                    self.join(&phi, &bound.unwrap_or_default());
                    return;
                }
                bound.map(pass)
            }
            Opcode::Parameter => {
                let n = instr.parameter_number.map(u64::from);
                self.define(at, &instr.shape, n, false);
                return;
            }
            Opcode::Constant => {
                self.define(at, &instr.shape, None, true);
                return;
            }
            Opcode::GetTupleElement => {
                let i = instr.attrs().tuple_index.unwrap_or(0).max(0) as usize;
                let within = self
                    .operand(module, at, 0)
                    .into_iter()
                    .filter(|(index, _)| index.first() == Some(&i))
                    .map(|(index, v)| (index[1..].to_vec(), v))
                    .collect();
                Some(within)
            }
            Opcode::Bitcast => Some(self.operand(module, at, 0)),
            Opcode::Tuple => {
                self.define(
                    at,
                    &Shape::Tuple(vec![Shape::Invalid; instr.operands.len()]),
                    None,
                    false,
                );
                let mut positions: Positions = self.positions[&at][..1].to_vec();
                for i in 0..instr.operands.len() {
                    for (index, v) in self.operand(module, at, i) {
                        let mut inside = vec![i];
                        inside.extend(index);
                        positions.push((inside, v));
                    }
                }
                Some(positions)
            }
            Opcode::While => {
                let init = self.operand(module, at, 0);
                let body = module
                    .called_computation(instr, "body")
                    .and_then(|b| b.model().root.and_then(|r| self.positions.get(&(b.id, r))))
                    .cloned()
                    .unwrap_or_default();
                // The loop's result is a phi value too, in the same buffer.
                let phi = self.define_phi(at, &instr.shape);
                self.join(&phi, &init);
                self.join(&phi, &body);
                return;
            }
            Opcode::Conditional => {
                // XLA's dataflow gives the result a phi value of its own, in the
                // buffer of every branch's root: a branch's root is live only until
                // its branch ends, so the next branch's values may take its place.
                let phi = self.define_phi(at, &instr.shape);
                for k in 0..instr.called.len() {
                    let root = self.callee_root(module, instr, k);
                    self.join(&phi, &root);
                }
                return;
            }
            Opcode::Call => Some(self.callee_root(module, instr, 0)),
            _ => None,
        };
        match positions {
            Some(p) if !p.is_empty() => {
                self.positions.insert(at, p);
            }
            _ => self.define(at, &instr.shape, None, false),
        }
    }

    /// Makes the values at equal shape indices of `a` and `b` one buffer.
    fn join(&mut self, a: &Positions, b: &Positions) {
        for (index, va) in a {
            if let Some((_, vb)) = b.iter().find(|(i, _)| i == index) {
                self.union(*va, *vb);
            }
        }
    }

    /// Start and end of every value (XLA's `HloLiveRange::CalculateBufferStartEndMap`).
    fn liveness(&mut self, module: &Module, entry: ComputationId) {
        let end_of_schedule = self.order.len() as u64;
        for v in &mut self.values {
            let c = module.computation(v.def.0);
            let is_param = c.instruction(v.def.1).opcode == Opcode::Parameter;
            v.start = match is_param {
                true => self.spans[&v.def.0].start,
                false => self.times[&v.def],
            };
            v.end = v.start;
        }
        let order = self.order.clone();
        for at in order {
            if crate::budget::exhausted() {
                return;
            }
            let c = module.computation(at.0);
            let instr = c.instruction(at.1);
            let time = self.times[&at];
            // Positions: a root's values live until its computation ends.
            let held_until = match instr.is_root {
                true => self.spans[&at.0].end,
                false => time,
            };
            for &(_, v) in self.positions.get(&at).into_iter().flatten() {
                self.values[v].end = self.values[v].end.max(held_until);
            }
            // Uses; a while's init is used when its condition or body (the first
            // scheduled) begins.
            let used_at = match instr.opcode {
                Opcode::While => ["condition", "body"]
                    .iter()
                    .filter_map(|a| module.called_computation(instr, a))
                    .filter_map(|c| self.spans.get(&c.id).map(|s| s.start))
                    .min()
                    .unwrap_or(time),
                _ => time,
            };
            for o in instr.operands.iter().filter_map(|o| o.target) {
                for &(_, v) in self.positions.get(&(at.0, o)).into_iter().flatten() {
                    self.values[v].end = self.values[v].end.max(used_at);
                }
            }
        }
        let entry_root = module.computation(entry).model().root;
        let live_out: Vec<ValueId> = entry_root
            .and_then(|r| self.positions.get(&(entry, r)))
            .map(|p| p.iter().map(|&(_, v)| v).collect())
            .unwrap_or_default();
        for v in live_out {
            self.values[v].live_out = true;
            self.values[v].end = end_of_schedule;
        }
        for v in &mut self.values {
            if v.parameter.is_some() && v.def.0 == entry {
                v.end = end_of_schedule;
            }
        }
    }
}

/// Whether a loop fusion may write its result over operand `read`: the fused
/// parameter is read only elementwise on its way to the root, or is the buffer the
/// root dynamic-update-slice or scatter updates (XLA's `CanShareOperandBufferWithUser`).
fn fusion_writes_over(module: &Module, fusion: &Instruction, read: usize) -> bool {
    let Some(fused) = module.called_computation(fusion, "calls") else {
        return false;
    };
    if !fusion_kind_is(fusion, "kLoop") {
        return false;
    }
    let model = fused.model();
    let Some(Some(param)) = model.parameters.get(read).copied() else {
        return false;
    };
    let mut stack = vec![param];
    let mut seen = Vec::new();
    while let Some(id) = stack.pop() {
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        for &u in model.users(id) {
            let user = model.instruction(u);
            let in_place = matches!(user.opcode, Opcode::DynamicUpdateSlice | Opcode::Scatter)
                && user.operands.first().and_then(|o| o.target) == Some(id);
            let passes = matches!(user.opcode, Opcode::Bitcast | Opcode::Tuple);
            if !(in_place
                || passes
                || (user.opcode.is_elementwise() && user.opcode != Opcode::Copy))
            {
                return false;
            }
            if !in_place {
                stack.push(u);
            }
        }
    }
    true
}

/// Whether `fusion` is of kind `kind` (`kind=kLoop`), from its decoded attributes:
/// looking the fusion up by name to read its text searched every computation, once
/// per fusion (a quadratic share of `check` on a module of many layers).
fn fusion_kind_is(fusion: &Instruction, kind: &str) -> bool {
    fusion.attrs().fusion_kind.as_deref() == Some(kind)
}

/// An allocation being built: its members are values.
struct Building {
    size: u64,
    kind: AllocationKind,
    members: Vec<ValueId>,
    offsets: Vec<u64>,
    /// The members' lifetimes, for [`Flow::fits`] (empty for the temp heap, which
    /// nothing joins afterwards).
    lifetimes: Lifetimes,
}

impl Building {
    fn new(size: u64, kind: AllocationKind) -> Building {
        Building {
            size,
            kind,
            members: Vec::new(),
            offsets: Vec::new(),
            lifetimes: Lifetimes::default(),
        }
    }

    /// `group` joins the allocation at offset 0.
    fn join(&mut self, flow: &Flow, group: &[ValueId]) {
        self.members.extend(group.iter().copied());
        self.offsets.extend(std::iter::repeat_n(0, group.len()));
        for &v in group {
            self.lifetimes
                .insert(flow.values[v].start, flow.values[v].end, v);
        }
    }
}

/// An allocation a group may join, with what says which values it holds.
#[derive(Clone, Copy)]
struct Held<'a> {
    allocation: &'a Building,
    /// Its index among the allocations.
    index: usize,
    /// Which allocation holds each value placed so far.
    holder: &'a FxHashMap<ValueId, usize>,
}

/// The members of an allocation by start time, with the latest end of each prefix:
/// the members a value overlaps in time are found by walking back from the last one
/// that starts before it ends, stopping where no earlier member lasts until it starts.
/// A chain of in-place ops puts tens of thousands of values in one allocation; asking
/// each new value about every member made the estimate quadratic.
#[derive(Default)]
struct Lifetimes {
    /// (start, end, value), by start.
    by_start: Vec<(u64, u64, ValueId)>,
    /// `latest_end[i]`: the latest end among `by_start[..=i]`.
    latest_end: Vec<u64>,
}

impl Lifetimes {
    fn insert(&mut self, start: u64, end: u64, value: ValueId) {
        let at = self.by_start.partition_point(|&(s, _, _)| s <= start);
        self.by_start.insert(at, (start, end, value));
        self.latest_end.truncate(at);
        let mut latest = self.latest_end.last().copied().unwrap_or(0);
        for &(_, e, _) in &self.by_start[at..] {
            latest = latest.max(e);
            self.latest_end.push(latest);
        }
    }

    /// The members alive at some time in `start..=end`, the latest started first.
    fn overlapping(&self, start: u64, end: u64) -> impl Iterator<Item = ValueId> + '_ {
        let before_end = self.by_start.partition_point(|&(s, _, _)| s <= end);
        (0..before_end)
            .rev()
            .take_while(move |&i| self.latest_end[i] >= start)
            .filter(move |&i| self.by_start[i].1 >= start)
            .map(move |i| self.by_start[i].2)
    }
}

impl Flow {
    /// The buffers (alias groups) with their values, largest first as XLA sorts them
    /// (live-out first among equals, then earlier first).
    fn groups(&mut self) -> Vec<Vec<ValueId>> {
        let mut by_root: FxHashMap<ValueId, Vec<ValueId>> = FxHashMap::default();
        for v in 0..self.values.len() {
            let root = self.find(v);
            by_root.entry(root).or_default().push(v);
        }
        let mut groups: Vec<Vec<ValueId>> = by_root.into_values().collect();
        let key = |g: &Vec<ValueId>| {
            let size = g.iter().map(|&v| self.values[v].bytes).max().unwrap_or(0);
            let out = g.iter().any(|&v| self.values[v].live_out);
            let first = g.iter().map(|&v| self.values[v].start).min().unwrap_or(0);
            (std::cmp::Reverse(size), !out, first, g[0])
        };
        groups.sort_by_cached_key(key);
        groups
    }

    fn size(&self, group: &[ValueId]) -> u64 {
        group
            .iter()
            .map(|&v| self.values[v].bytes)
            .max()
            .unwrap_or(0)
    }

    /// Whether values `a` and `b` may not share memory (XLA's `LiveRangeInterferes`):
    /// their ranges overlap, beyond a user taking over its operand's buffer in place
    /// at the one time where one ends and the other starts.
    fn interfere(&self, module: &Module, a: ValueId, b: ValueId) -> bool {
        let (va, vb) = (&self.values[a], &self.values[b]);
        if va.start > vb.end || vb.start > va.end {
            return false;
        }
        let takes_over = |operand: &Value, user: &Value| {
            operand.end == user.start && self.shares_in_place(module, user, operand)
        };
        !(takes_over(va, vb) || takes_over(vb, va))
    }

    /// Whether `user`'s instruction may write its result over `operand` (an operand
    /// it reads, of the same size, elementwise or updated in place): XLA's
    /// `CanShareOperandBufferWithUser` for the common cases.
    fn shares_in_place(&self, module: &Module, user: &Value, operand: &Value) -> bool {
        // The cheap conditions first: this runs for every pair of values that meet
        // in time while the heap is laid out.
        if user.bytes != operand.bytes || !user.index.is_empty() {
            return false;
        }
        let c = module.computation(user.def.0);
        let instr = c.instruction(user.def.1);
        let may_write_over = match &instr.opcode {
            Opcode::Copy => false,
            Opcode::DynamicUpdateSlice | Opcode::Scatter | Opcode::Fusion => true,
            op => op.is_elementwise(),
        };
        if !may_write_over {
            return false;
        }
        let read = instr.operands.iter().position(|o| {
            o.target
                .and_then(|t| self.positions.get(&(user.def.0, t)))
                .is_some_and(|p| {
                    p.iter().any(|&(_, v)| {
                        self.values[v].def == operand.def && self.values[v].index == operand.index
                    })
                })
        });
        let Some(read) = read else { return false };
        let kind_fits = match &instr.opcode {
            Opcode::Copy => false,
            Opcode::DynamicUpdateSlice | Opcode::Scatter => read == 0,
            Opcode::Fusion => fusion_writes_over(module, instr, read),
            op => op.is_elementwise(),
        };
        kind_fits && self.same_shape(module, user, operand)
    }

    /// Whether two values have the same shape, dimensions and layout: XLA's
    /// `CanShareOperandBufferWithUser` shares nothing else, so a `select` that
    /// reshapes while it writes (`f32[4,N,N]` into `f32[1,4,N,N]`) gets a new buffer.
    fn same_shape(&self, module: &Module, a: &Value, b: &Value) -> bool {
        let shape = |v: &Value| -> Option<Shape> {
            let at: &Shape = &module.computation(v.def.0).instruction(v.def.1).shape;
            v.index
                .iter()
                .try_fold(at, |s, &k| s.tuple_element(k))
                .cloned()
        };
        match (shape(a), shape(b)) {
            (Some(Shape::Array(x)), Some(Shape::Array(y))) => {
                x.element == y.element
                    && x.dims == y.dims
                    && x.minor_to_major() == y.minor_to_major()
            }
            _ => false,
        }
    }

    /// XLA's `MaybeAssignBuffer`: `group` goes into `allocation` if it fits, the
    /// allocation may be written, no two values overlap in time, and a live-out
    /// buffer fills it exactly.
    fn fits(&self, module: &Module, held: Held, group: &[ValueId], live_out: bool) -> bool {
        let allocation = held.allocation;
        let size = self.size(group);
        let kind = &allocation.kind;
        let readonly = kind.constant || (kind.parameter.is_some() && !kind.maybe_live_out);
        if size > allocation.size || readonly || (live_out && size != allocation.size) {
            return false;
        }
        group.iter().all(|&v| {
            let value = &self.values[v];
            !(allocation
                .lifetimes
                .overlapping(value.start, value.end)
                .any(|m| self.interfere(module, v, m))
                || self.copies_from(module, v, held))
        })
    }

    /// Whether `v` is a copy of a value `held` holds: a copy never shares its
    /// operand's buffer.
    fn copies_from(&self, module: &Module, v: ValueId, held: Held) -> bool {
        let def = self.values[v].def;
        let instr = module.computation(def.0).instruction(def.1);
        instr.opcode == Opcode::Copy
            && instr.operands.iter().filter_map(|o| o.target).any(|o| {
                self.positions.get(&(def.0, o)).is_some_and(|p| {
                    p.iter()
                        .any(|&(_, x)| held.holder.get(&x) == Some(&held.index))
                })
            })
    }

    /// The allocations holding the operands of `group`'s defining instructions.
    fn operand_allocations(
        &self,
        module: &Module,
        group: &[ValueId],
        holder: &FxHashMap<ValueId, usize>,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        for &v in group.iter().filter(|&&v| self.values[v].index.is_empty()) {
            let def = self.values[v].def;
            let instr = module.computation(def.0).instruction(def.1);
            for o in instr.operands.iter().filter_map(|o| o.target) {
                let top = self
                    .positions
                    .get(&(def.0, o))
                    .and_then(|p| p.iter().find(|(i, _)| i.is_empty()));
                if let Some(a) = top.and_then(|&(_, x)| holder.get(&x)) {
                    if !out.contains(a) {
                        out.push(*a);
                    }
                }
            }
        }
        out
    }

    fn assign(mut self, module: &Module, entry: ComputationId) -> Option<Report> {
        // Each instruction's time served the liveness pass only.
        self.times = FxHashMap::default();
        let groups = self.groups();
        let mut allocations: Vec<Building> = Vec::new();
        let mut reusable: Vec<usize> = Vec::new();
        let mut holder: FxHashMap<ValueId, usize> = FxHashMap::default();
        let mut temps: Vec<Vec<ValueId>> = Vec::new();
        let output_table = module
            .computation(entry)
            .model()
            .root
            .and_then(|r| self.positions.get(&(entry, r)))
            .and_then(|p| p.iter().find(|(i, _)| i.is_empty()).map(|&(_, v)| v));
        for group in groups {
            if crate::budget::exhausted() {
                return None;
            }
            let size = self.size(&group);
            let live_out = group.iter().any(|&v| self.values[v].live_out);
            let parameter = group.iter().find_map(|&v| {
                (self.values[v].def.0 == entry)
                    .then_some(self.values[v].parameter)
                    .flatten()
            });
            let constant = group.iter().any(|&v| self.values[v].constant);
            let place = |allocations: &mut Vec<Building>, kind: AllocationKind| {
                let mut building = Building::new(size, kind);
                building.join(&self, &group);
                allocations.push(building);
                allocations.len() - 1
            };
            let chosen = if let Some(n) = parameter {
                let kind = AllocationKind {
                    parameter: Some(n),
                    maybe_live_out: live_out,
                    ..AllocationKind::default()
                };
                let a = place(&mut allocations, kind);
                if live_out {
                    reusable.push(a);
                }
                Some(a)
            } else if constant {
                Some(place(
                    &mut allocations,
                    AllocationKind {
                        constant: true,
                        ..Default::default()
                    },
                ))
            } else {
                let candidates = self.operand_allocations(module, &group, &holder);
                let found = candidates
                    .into_iter()
                    .chain(reusable.iter().rev().copied())
                    .find(|&a| {
                        let held = Held {
                            allocation: &allocations[a],
                            index: a,
                            holder: &holder,
                        };
                        self.fits(module, held, &group, live_out)
                    });
                match found {
                    Some(a) => {
                        allocations[a].join(&self, &group);
                        Some(a)
                    }
                    None if !live_out => {
                        temps.push(group.clone());
                        None
                    }
                    None => {
                        let kind = AllocationKind {
                            maybe_live_out: true,
                            output: output_table.is_some_and(|t| group.contains(&t)),
                            ..AllocationKind::default()
                        };
                        let a = place(&mut allocations, kind);
                        reusable.push(a);
                        Some(a)
                    }
                }
            };
            if let Some(a) = chosen {
                for &v in &group {
                    holder.insert(v, a);
                }
            }
        }
        self.heap(module, &mut allocations, &temps);
        Some(self.report(module, allocations))
    }

    /// Packs the temps into one preallocated-temp allocation.
    fn heap(&self, module: &Module, allocations: &mut Vec<Building>, temps: &[Vec<ValueId>]) {
        if temps.is_empty() {
            return;
        }
        let temps = self.share_in_place(module, temps);
        let intervals: Vec<Interval> = temps
            .iter()
            .map(|g| Interval {
                start: g.iter().map(|&v| self.values[v].start).min().unwrap_or(0),
                end: g.iter().map(|&v| self.values[v].end).max().unwrap_or(0),
                size: self.size(g),
            })
            .collect();
        let placement = heap::best_fit(&intervals, TEMP_ALIGNMENT);
        let mut building = Building::new(
            placement.heap_size,
            AllocationKind {
                preallocated_temp: true,
                ..AllocationKind::default()
            },
        );
        for (g, offset) in temps.iter().zip(&placement.offsets) {
            building.members.extend(g.iter().copied());
            building
                .offsets
                .extend(std::iter::repeat_n(*offset, g.len()));
        }
        allocations.push(building);
    }

    /// Temps that a user writes over in place when they die at it (XLA's heap
    /// simulator `ShareWith`) are packed as one: the groups merged, each operand
    /// taken over once.
    fn share_in_place(&self, module: &Module, temps: &[Vec<ValueId>]) -> Vec<Vec<ValueId>> {
        let mut group_of: FxHashMap<ValueId, usize> = FxHashMap::default();
        for (g, members) in temps.iter().enumerate() {
            for &v in members {
                group_of.insert(v, g);
            }
        }
        let mut parent: Vec<usize> = (0..temps.len()).collect();
        fn root(parent: &mut [usize], mut g: usize) -> usize {
            while parent[g] != g {
                parent[g] = parent[parent[g]];
                g = parent[g];
            }
            g
        }
        let mut taken = vec![false; temps.len()];
        let mut order: Vec<ValueId> = group_of.keys().copied().collect();
        order.sort_by_key(|&v| (self.values[v].start, v));
        for v in order {
            let value = &self.values[v];
            if !value.index.is_empty() {
                continue;
            }
            let instr = module.computation(value.def.0).instruction(value.def.1);
            for o in instr.operands.iter().filter_map(|o| o.target) {
                let top = self
                    .positions
                    .get(&(value.def.0, o))
                    .and_then(|p| p.iter().find(|(i, _)| i.is_empty()))
                    .map(|&(_, w)| w);
                let Some(w) = top else { continue };
                let (Some(&gw), Some(&gv)) = (group_of.get(&w), group_of.get(&v)) else {
                    continue;
                };
                let operand = &self.values[w];
                let dies_here = operand.end == value.start
                    && temps[gw].iter().all(|&x| self.values[x].end <= value.start);
                // A user in a loop's or conditional's buffer (with a phi) is placed
                // with that whole set: XLA's heap simulator shares no operand's
                // buffer with a colocated set.
                let colocated = temps[gv].iter().any(|&x| self.values[x].phi);
                if gw != gv
                    && !taken[gw]
                    && !colocated
                    && dies_here
                    && self.shares_in_place(module, value, operand)
                {
                    taken[gw] = true;
                    let (a, b) = (root(&mut parent, gw), root(&mut parent, gv));
                    parent[b] = a;
                    break;
                }
            }
        }
        let mut merged: FxHashMap<usize, Vec<ValueId>> = FxHashMap::default();
        for (g, members) in temps.iter().enumerate() {
            let r = root(&mut parent, g);
            merged.entry(r).or_default().extend(members.iter().copied());
        }
        let mut out: Vec<Vec<ValueId>> = merged.into_values().collect();
        out.sort_by_key(|g| g.iter().copied().min());
        out
    }

    /// The shape of value `v` as XLA prints it in a buffer assignment (without
    /// layout): a tuple's table shows as its tuple shape.
    fn shape_text(&self, module: &Module, v: ValueId, texts: &mut Texts) -> Arc<str> {
        let def = self.values[v].def;
        let shape: &Shape = &module.computation(def.0).instruction(def.1).shape;
        match self.values[v]
            .index
            .iter()
            .try_fold(shape, |s, &k| s.tuple_element(k))
        {
            Some(s) => texts
                .shapes
                .entry(s as *const Shape)
                .or_insert_with(|| s.logical_text().into())
                .clone(),
            None => Arc::from(""),
        }
    }

    fn name(&self, module: &Module, v: ValueId, texts: &mut Texts) -> Arc<str> {
        let def = self.values[v].def;
        texts.name(module, def)
    }

    fn report(mut self, module: &Module, built: Vec<Building>) -> Report {
        // The positions served the walk and the assignment only: freed before the
        // report's texts are made, when the estimate holds the most.
        self.positions = FxHashMap::default();
        let mut texts = Texts::default();
        // The schedule first: every value's instruction is in it, and its name is
        // then held once for the schedule, the buffers and the allocations.
        let schedule = self
            .order
            .iter()
            .map(|&at| texts.name(module, at))
            .collect();
        let mut allocations = Vec::with_capacity(built.len());
        let mut placed: FxHashMap<ValueId, (u64, u64)> = FxHashMap::default();
        for (index, b) in built.into_iter().enumerate() {
            let mut values: Vec<AssignedValue> = b
                .members
                .iter()
                .zip(&b.offsets)
                .map(|(&v, &offset)| {
                    placed.insert(v, (index as u64, offset));
                    AssignedValue {
                        id: v as u64,
                        instruction: self.name(module, v, &mut texts),
                        shape_index: texts.index(&self.values[v].index),
                        phi: false,
                        offset,
                        size: self.values[v].bytes,
                        shape: self.shape_text(module, v, &mut texts),
                    }
                })
                .collect();
            values.sort_by_key(|v| v.id);
            allocations.push(Allocation {
                index: index as u64,
                size: b.size,
                kind: b.kind,
                values,
            });
        }
        let buffers = self.buffers(module, &placed, &mut texts);
        // The texts are the report's now; the maps that found them are done.
        drop((placed, texts));
        let peak = peak_of(&buffers, None);
        let spans = module
            .computations()
            .filter_map(|c| {
                let times = self.spans.get(&c.id)?.clone();
                Some(Span {
                    computation: c.model().name.clone(),
                    times,
                })
            })
            .collect();
        let mut report = Report {
            source: Source::Estimate,
            totals: Totals::of(&allocations),
            allocations,
            schedule,
            spans,
            buffers,
            peak: None,
            heap: None,
            xla_live_range_peak: peak,
            notes: std::mem::take(&mut self.notes),
        };
        // The flow (a value record for each of the module's values) is done too:
        // freed before the heap over the schedule is measured, which allocates its own.
        drop(self);
        report.measure_heap(None);
        report
    }

    /// One buffer per value, the ranges of a buffer's values cut so that they do not
    /// overlap (XLA's `NormalizeAliasedBuffers`), so the peak counts a buffer once.
    fn buffers(
        &mut self,
        module: &Module,
        placed: &FxHashMap<ValueId, (u64, u64)>,
        texts: &mut Texts,
    ) -> Vec<Buffer> {
        let mut ranges: Vec<(u64, u64)> = self.values.iter().map(|v| (v.start, v.end)).collect();
        for group in self.groups() {
            let mut g = group.clone();
            g.sort_by_key(|&v| (ranges[v].0, ranges[v].1, v));
            for w in 0..g.len().saturating_sub(1) {
                let (a, b) = (g[w], g[w + 1]);
                ranges[b].1 = ranges[b].1.max(ranges[a].1);
                ranges[a].1 = ranges[a].1.min(ranges[b].0);
            }
            // A phi's time goes to the value holding the buffer before it.
            let mut holder: Option<ValueId> = None;
            for &v in &g {
                match (self.values[v].phi, holder) {
                    (true, Some(h)) => ranges[h].1 = ranges[h].1.max(ranges[v].1),
                    (true, None) => {}
                    (false, _) => holder = Some(v),
                }
            }
        }
        (0..self.values.len())
            .filter(|&v| !self.values[v].phi)
            .map(|v| {
                let (allocation, offset) = placed
                    .get(&v)
                    .map(|&(a, o)| (Some(a), Some(o)))
                    .unwrap_or((None, None));
                Buffer {
                    instruction: self.name(module, v, texts),
                    shape_index: texts.index(&self.values[v].index),
                    bytes: self.values[v].bytes,
                    start: ranges[v].0,
                    end: ranges[v].1,
                    allocation,
                    offset,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Lifetimes;
    use proptest::prelude::*;

    proptest! {
        /// The index finds exactly the lifetimes that meet the asked range, whatever
        /// the order they were inserted in.
        #[test]
        fn overlapping_is_every_lifetime_that_meets_the_range(
            lifetimes in proptest::collection::vec((0u64..60, 0u64..20), 0..40),
            (start, length) in (0u64..70, 0u64..20),
        ) {
            let mut index = Lifetimes::default();
            for (v, &(s, len)) in lifetimes.iter().enumerate() {
                index.insert(s, s + len, v);
            }
            let end = start + length;
            let mut found: Vec<usize> = index.overlapping(start, end).collect();
            found.sort_unstable();
            let expected: Vec<usize> = lifetimes
                .iter()
                .enumerate()
                .filter(|(_, &(s, len))| s <= end && start <= s + len)
                .map(|(v, _)| v)
                .collect();
            prop_assert_eq!(found, expected);
        }
    }
}
