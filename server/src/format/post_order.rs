//! The order XLA prints a computation's instructions in when the module has no
//! schedule: `HloComputation::MakeInstructionPostOrder`. Every instruction nothing
//! uses, in written order, starts a depth-first walk that prints an instruction after
//! its operands (first operand first) and its control predecessors. A scheduled module
//! (`is_scheduled=true`) is printed in its schedule's order, which is the written one.

use crate::model::{ComputationId, ComputationRef, InstrId, Instruction, Module};

/// The instructions of `c` in XLA's post order.
pub fn instruction_order(c: &ComputationRef) -> Vec<InstrId> {
    let count = c.instructions.len();
    let mut state = vec![State::New; count];
    let mut order = Vec::with_capacity(count);
    let mut stack: Vec<usize> = Vec::new();
    for (start, _) in c.instructions.iter().enumerate() {
        if !c.users(InstrId(start as u32)).is_empty() {
            continue;
        }
        stack.push(start);
        while let Some(&current) = stack.last() {
            match state[current] {
                State::New => state[current] = State::Visiting,
                visited => {
                    stack.pop();
                    if visited == State::Visiting {
                        state[current] = State::Visited;
                        order.push(InstrId(current as u32));
                    }
                    continue;
                }
            }
            let before = predecessors(c, current);
            for p in before.into_iter().rev() {
                if state[p] != State::Visited {
                    stack.push(p);
                }
            }
        }
    }
    // Instructions in a cycle of uses are not reached from one without users (the
    // model reports the cycle): they keep their written place at the end.
    for (k, s) in state.iter().enumerate() {
        if *s == State::New {
            order.push(InstrId(k as u32));
        }
    }
    order
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    New,
    Visiting,
    Visited,
}

/// What XLA pushes before visiting `k`, in visiting order: its operands, then its
/// control predecessors (pushed after the operands, so visited first).
fn predecessors(c: &ComputationRef, k: usize) -> Vec<usize> {
    let instruction = &c.instructions[k];
    let mut out: Vec<usize> = instruction
        .operands
        .iter()
        .filter_map(|o| o.target.map(|t| t.index()))
        .collect();
    // Control predecessors go on the stack after the reversed operands: they are
    // walked before the operands, so they come first in visiting order.
    let control: Vec<usize> = instruction
        .attribute("control-predecessors")
        .map(|a| super::values::instruction_names(c.src(a.value_range)))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|name| c.instruction_id(name).map(|id| id.index()))
        .collect();
    let mut visiting = control.into_iter().rev().collect::<Vec<_>>();
    visiting.append(&mut out);
    visiting
}

/// The computations of `module` in the order XLA prints them:
/// `HloModule::MakeComputationPostOrder` (the depth-first form `HloModule::Print`
/// asks for). XLA walks its list of computations and each computation's list of
/// instructions; after parsing, both lists are in the written order, and that is
/// what jaxlib prints for a hand-written module ([`xla_walk`] over the written calls).
///
/// A dump is different: XLA printed it from lists in the order its passes built
/// them, which the text does not record, so walking the written order moves
/// computations around (jaxlib's own re-parse does so on 159 of the 309 dumps
/// in tests/data). A written order that XLA's walk gives for some order of each
/// computation's call sites is therefore kept: it is one XLA printed, and
/// formatting it again must change nothing.
pub fn computation_order(call_sites: Vec<Vec<Vec<usize>>>) -> Vec<ComputationId> {
    let calls = CallSites { sites: call_sites };
    let written: Vec<usize> = (0..calls.sites.len()).collect();
    let printable = calls.ordered_like(&written);
    let order = if printable.walk() == written {
        written
    } else {
        calls.walk()
    };
    order.into_iter().map(|k| ComputationId(k as u32)).collect()
}

/// Each computation's call sites (the instructions that call a computation, in
/// instruction order), each with its callees in `called_computations()` order
/// (read by [`super::scan`]).
struct CallSites {
    sites: Vec<Vec<Vec<usize>>>,
}

impl CallSites {
    /// XLA's walk: every computation nothing calls, in list order, after the
    /// computations it reaches (`HloComputation::MakeEmbeddedComputationsList`)
    /// that are not placed yet. Computations only a cycle of calls reaches (XLA
    /// refuses those) keep their written place at the end.
    fn walk(&self) -> Vec<usize> {
        let count = self.sites.len();
        let mut called = vec![false; count];
        for callee in self.sites.iter().flatten().flatten() {
            called[*callee] = true;
        }
        let mut placed = vec![false; count];
        let mut order = Vec::with_capacity(count);
        for root in (0..count).filter(|&k| !called[k]) {
            for k in self.embedded(root) {
                if !placed[k] {
                    placed[k] = true;
                    order.push(k);
                }
            }
            placed[root] = true;
            order.push(root);
        }
        order.extend((0..count).filter(|&k| !placed[k]));
        order
    }

    /// The computations `root` reaches, each after those it reaches, the way
    /// `MakeEmbeddedComputationsList` walks them: a call site's callees go on a
    /// stack together (first callee on top) and count as seen from then on, so a
    /// callee that an earlier callee of the same site also calls comes after it.
    fn embedded(&self, root: usize) -> Vec<usize> {
        let mut seen = vec![false; self.sites.len()];
        let mut order = Vec::new();
        // (computation, its next call site)
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for site in &self.sites[root] {
            push_callees(site, &mut seen, &mut stack);
            while let Some(top) = stack.last_mut() {
                let (k, next) = *top;
                match self.sites[k].get(next) {
                    Some(site) => {
                        top.1 += 1;
                        push_callees(site, &mut seen, &mut stack);
                    }
                    None => {
                        stack.pop();
                        order.push(k);
                    }
                }
            }
        }
        order
    }

    /// The same calls with each computation's call sites reordered so XLA's walk
    /// follows `written` where it can: a site goes before another when the
    /// computations it reaches are written earlier (compared as sorted lists of
    /// written places). When some order of call sites makes XLA's walk give
    /// `written`, this one does.
    fn ordered_like(&self, written: &[usize]) -> CallSites {
        let mut place = vec![0; written.len()];
        for (at, &k) in written.iter().enumerate() {
            place[k] = at;
        }
        let mut reached = Reached::new(self.sites.len());
        let sites = self
            .sites
            .iter()
            .map(|sites| {
                if sites.len() < 2 {
                    return sites.clone();
                }
                let mut keyed: Vec<(Vec<usize>, &Vec<usize>)> = sites
                    .iter()
                    .map(|site| (reached.places(self, site, &place), site))
                    .collect();
                keyed.sort_by(|a, b| a.0.cmp(&b.0));
                keyed.into_iter().map(|(_, site)| site.clone()).collect()
            })
            .collect();
        CallSites { sites }
    }
}

/// The computations a call site reaches, with one mark per computation reused from
/// site to site (a fresh list per site would cost the square of the computation
/// count on a module with thousands of fusions).
struct Reached {
    mark: Vec<u32>,
    round: u32,
}

impl Reached {
    fn new(count: usize) -> Reached {
        Reached {
            mark: vec![0; count],
            round: 0,
        }
    }

    /// The written places of every computation `site` reaches, sorted.
    fn places(&mut self, calls: &CallSites, site: &[usize], place: &[usize]) -> Vec<usize> {
        self.round += 1;
        let mut todo: Vec<usize> = site.to_vec();
        let mut out = Vec::new();
        while let Some(k) = todo.pop() {
            if std::mem::replace(&mut self.mark[k], self.round) == self.round {
                continue;
            }
            out.push(place[k]);
            todo.extend(calls.sites[k].iter().flatten());
        }
        out.sort_unstable();
        out
    }
}

/// Pushes the callees of a call site not seen yet, the first one last (on top).
fn push_callees(site: &[usize], seen: &mut [bool], stack: &mut Vec<(usize, usize)>) {
    for &callee in site.iter().rev() {
        if !std::mem::replace(&mut seen[callee], true) {
            stack.push((callee, 0));
        }
    }
}

/// The computations `instruction` calls in `HloInstruction::called_computations()`
/// order: a `while` lists its body before its condition, a `conditional` its true
/// branch before its false one, `select-and-scatter` its select before its scatter;
/// otherwise the written order. Names that name no computation are left out.
pub(super) fn callees(module: &Module, instruction: &Instruction) -> Vec<usize> {
    let rank = |attribute: &str| match attribute {
        "condition" | "false_computation" | "scatter" => 1,
        _ => 0,
    };
    let mut called: Vec<(u8, usize)> = instruction
        .called
        .iter()
        .filter_map(|c| {
            Some((
                rank(c.attribute.as_str()),
                module.computation_by_name(&c.name)?.index(),
            ))
        })
        .collect();
    called.sort_by_key(|(rank, _)| *rank);
    called.into_iter().map(|(_, k)| k).collect()
}
