//! How many times each computation runs per execution of ENTRY: the product of
//! the trip counts of the whiles on the way to it, summed over every way it is
//! called. A while body runs `n` times per run of its while, its condition
//! `n + 1` times; a call, a fusion, an async computation or a reduce's
//! `to_apply` run (as a whole) once per run of the instruction naming them.
//!
//! What cannot be known is said, not guessed: a loop of unknown trip count
//! counts once and is listed ([`Executions::unknown_loops`]: the count is then a
//! lower bound), and a computation under a conditional branch counts as if that
//! branch were taken every time ([`Executions::branches`]; with the branches of
//! a conditional from [`branches`], a report can show each and the worst).

use std::collections::HashMap;

use crate::model::callgraph::{self, Role};
use crate::model::{ComputationId, InstrId, Instruction, Module, Opcode};

use super::count::{trip_count, TripCount};

/// What a computation's instructions are, for a report of kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Run as a sequence of instructions: ENTRY, while bodies and conditions,
    /// branches, `call`s, async computations, a custom call's
    /// `called_computations` (as `cost::report::launches_kernels` counts them).
    Code,
    /// A fused computation: one kernel with its fusion.
    Fused,
    /// Applied inside an op (a reduce's `to_apply`, a sort's comparator, a
    /// scatter's combiner): not a sequence of kernels.
    Applied,
}

/// A while of a computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoopSite {
    pub computation: ComputationId,
    pub instruction: InstrId,
}

/// Branch `index` of a conditional.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BranchSite {
    pub computation: ComputationId,
    pub instruction: InstrId,
    pub index: usize,
}

/// How many times one computation runs per execution of ENTRY.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executions {
    pub computation: ComputationId,
    /// Whether ENTRY reaches it at all (`times` is 0 when not).
    pub reached: bool,
    /// Runs per execution of ENTRY (saturating), counting loops of unknown trip
    /// count once and every branch on the way as taken.
    pub times: u64,
    pub kind: Kind,
    /// Whiles of unknown trip count on some way from ENTRY: `times` is a lower bound.
    pub unknown_loops: Vec<LoopSite>,
    /// Conditional branches on some way from ENTRY: `times` holds when they are taken.
    pub branches: Vec<BranchSite>,
}

/// One while of the module, its trip count and how many times it runs itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhileLoop {
    pub site: LoopSite,
    pub trip_count: TripCount,
    /// Runs of the while per execution of ENTRY (its computation's `times`).
    pub runs: u64,
}

/// Every computation's executions (indexed by `ComputationId`) and every while's
/// trip count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleLoops {
    pub executions: Vec<Executions>,
    pub loops: Vec<WhileLoop>,
}

/// Executions of every computation of `module`, indexed by `ComputationId`.
pub fn executions(module: &Module) -> Vec<Executions> {
    analyze(module).executions
}

/// The branch computations of a conditional, by branch index
/// (`branch_computations={...}` or `true_computation=` / `false_computation=`).
pub fn branches(module: &Module, conditional: &Instruction) -> Vec<(usize, ComputationId)> {
    if conditional.opcode != Opcode::Conditional {
        return vec![];
    }
    let mut out: Vec<(usize, ComputationId)> = conditional
        .called
        .iter()
        .zip(callgraph::roles(conditional))
        .filter_map(|(called, role)| match role {
            Role::Branch(k) => Some((k, module.resolve(called)?.id)),
            _ => None,
        })
        .collect();
    out.sort_by_key(|&(k, _)| k);
    out
}

/// Trip counts of every while and executions of every computation.
pub fn analyze(module: &Module) -> ModuleLoops {
    let n = module.computation_count();
    let mut executions: Vec<Executions> = (0..n)
        .map(|i| Executions {
            computation: ComputationId(i as u32),
            reached: false,
            times: 0,
            kind: Kind::Applied,
            unknown_loops: vec![],
            branches: vec![],
        })
        .collect();
    let mut counts: HashMap<LoopSite, TripCount> = HashMap::new();
    let mut loops = vec![];
    for c in module.computations() {
        for instr in c.model().instructions.iter() {
            if instr.opcode == Opcode::While {
                let site = LoopSite {
                    computation: c.id,
                    instruction: instr.id,
                };
                let count = trip_count(module, c, instr);
                counts.insert(site, count.clone());
                loops.push(WhileLoop {
                    site,
                    trip_count: count,
                    runs: 0,
                });
            }
        }
    }
    let Some(entry) = module.entry.filter(|e| e.index() < n) else {
        return ModuleLoops { executions, loops };
    };
    executions[entry.index()].reached = true;
    executions[entry.index()].times = 1;
    executions[entry.index()].kind = Kind::Code;
    let order = callers_first(module, entry);
    let mut position = vec![usize::MAX; n];
    for (k, c) in order.iter().enumerate() {
        position[c.index()] = k;
    }
    for (at, &caller) in order.iter().enumerate() {
        let from = executions[caller.index()].clone();
        for call in callgraph::outgoing(module, caller) {
            // Only forward: a call back up the order is recursion.
            let Some(callee) = call.callee.filter(|c| {
                c.index() < n && position[c.index()] > at && position[c.index()] != usize::MAX
            }) else {
                continue;
            };
            let instr = module.computation(caller).instruction(call.instruction);
            let site = LoopSite {
                computation: caller,
                instruction: call.instruction,
            };
            let trips = counts.get(&site).and_then(|t| t.n);
            let (multiplier, unknown) = match call.role {
                Role::WhileBody => (trips.unwrap_or(1), trips.is_none()),
                Role::WhileCondition => (trips.map_or(1, |t| t.saturating_add(1)), trips.is_none()),
                _ => (1, false),
            };
            let to = &mut executions[callee.index()];
            to.reached = true;
            to.times = to
                .times
                .saturating_add(from.times.saturating_mul(multiplier));
            to.kind = merge(to.kind, kind_of(call.role, instr));
            add_all(&mut to.unknown_loops, &from.unknown_loops);
            add_all(&mut to.branches, &from.branches);
            if unknown {
                add_all(&mut to.unknown_loops, &[site]);
            }
            if let Role::Branch(index) = call.role {
                add_all(
                    &mut to.branches,
                    &[BranchSite {
                        computation: caller,
                        instruction: call.instruction,
                        index,
                    }],
                );
            }
        }
    }
    for l in &mut loops {
        l.runs = executions[l.site.computation.index()].times;
    }
    ModuleLoops { executions, loops }
}

fn add_all<T: PartialEq + Copy>(to: &mut Vec<T>, items: &[T]) {
    for item in items {
        if !to.contains(item) {
            to.push(*item);
        }
    }
}

/// What a call makes of the computation it names.
fn kind_of(role: Role, instr: &Instruction) -> Kind {
    match role {
        Role::Fused => Kind::Fused,
        Role::WhileBody | Role::WhileCondition | Role::Branch(_) | Role::Called => Kind::Code,
        Role::Applied if instr.opcode == Opcode::Call => Kind::Code,
        Role::Other if matches!(instr.opcode, Opcode::AsyncStart | Opcode::Call) => Kind::Code,
        Role::Applied | Role::Other => Kind::Applied,
    }
}

/// A computation run as code somewhere is code; fused beats applied.
fn merge(a: Kind, b: Kind) -> Kind {
    match (a, b) {
        (Kind::Code, _) | (_, Kind::Code) => Kind::Code,
        (Kind::Fused, _) | (_, Kind::Fused) => Kind::Fused,
        _ => Kind::Applied,
    }
}

/// The computations ENTRY reaches, every caller before its callees (a reverse
/// post order of the call graph; a call back into a computation being visited,
/// recursion the model reports, is not followed).
fn callers_first(module: &Module, entry: ComputationId) -> Vec<ComputationId> {
    let n = module.computation_count();
    let callees = |id: ComputationId| -> Vec<ComputationId> {
        let mut out: Vec<ComputationId> = vec![];
        for call in callgraph::outgoing(module, id) {
            if let Some(c) = call.callee.filter(|c| c.index() < n && !out.contains(c)) {
                out.push(c);
            }
        }
        out
    };
    // 0: not seen, 1: on the stack, 2: done.
    let mut state = vec![0u8; n];
    let mut order = vec![];
    let mut stack = vec![(entry, callees(entry), 0usize)];
    state[entry.index()] = 1;
    while let Some((node, next, k)) = stack.last_mut() {
        if let Some(&c) = next.get(*k) {
            *k += 1;
            if state[c.index()] == 0 {
                state[c.index()] = 1;
                let edges = callees(c);
                stack.push((c, edges, 0));
            }
        } else {
            state[node.index()] = 2;
            order.push(*node);
            stack.pop();
        }
    }
    order.reverse();
    order
}
