//! The order XLA prints a computation's instructions in when the module has no
//! schedule: `HloComputation::MakeInstructionPostOrder`. Every instruction nothing
//! uses, in written order, starts a depth-first walk that prints an instruction after
//! its operands (first operand first) and its control predecessors. A scheduled module
//! (`is_scheduled=true`) is printed in its schedule's order, which is the written one.

use crate::model::{ComputationId, ComputationRef, InstrId, Module};

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
        .map(|a| control_names(c.src(a.value_range)))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|name| c.instruction_id(name).map(|id| id.index()))
        .collect();
    let mut visiting = control.into_iter().rev().collect::<Vec<_>>();
    visiting.append(&mut out);
    visiting
}

/// `{%a, %b}` as `["a", "b"]`.
fn control_names(value: &str) -> Vec<&str> {
    value
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split(',')
        .map(|n| n.trim().trim_start_matches('%'))
        .filter(|n| !n.is_empty())
        .collect()
}

/// The computations of `module` in the order XLA prints them: every computation
/// after the computations it calls (`HloModule::MakeComputationPostOrder`). XLA walks
/// its module's list of computations, an order the text does not record; the written
/// order stands in for it, so a module XLA printed keeps its order and a hand-written
/// one gets its callees moved before their callers, depth first in call order.
pub fn computation_order(module: &Module) -> Vec<ComputationId> {
    let count = module.computation_count();
    let mut added = vec![false; count];
    let mut order = Vec::with_capacity(count);
    for k in 0..count {
        embed(module, ComputationId(k as u32), &mut added, &mut order);
    }
    order
}

/// Adds what `id` calls (depth first), then `id`, unless already added.
fn embed(module: &Module, id: ComputationId, added: &mut [bool], order: &mut Vec<ComputationId>) {
    if added[id.index()] {
        return;
    }
    // Marked before its callees: a recursive call does not loop.
    added[id.index()] = true;
    let c = module.computation(id);
    for i in &c.instructions {
        for callee in &i.called {
            if let Some(target) = module.resolve(callee) {
                embed(module, target.id, added, order);
            }
        }
    }
    order.push(id);
}
