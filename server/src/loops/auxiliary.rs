//! Auxiliary induction variables: XLA's `GetAuxiliaryLoopInductionVars`. An
//! element of the loop state that the body reads once (one `get-tuple-element`)
//! and writes back at the same index through a chain of `+ - * /` with constants
//! (`i2 = (i * 3 + 1) / 2`): it moves in step with the loop, like the induction
//! variable. An element passed through unchanged is not one.

use std::collections::BTreeMap;

use crate::model::{InstrId, Opcode};

use super::hlo::{self, Loop};

/// The body's `get-tuple-element`s of the auxiliary induction variables, by
/// tuple index.
pub fn auxiliary_induction_vars(l: &Loop<'_>) -> Vec<InstrId> {
    let body = l.body;
    let Some(param) = l.body_parameter() else {
        return vec![];
    };
    // Elements read once: a second read of the same index drops it.
    let mut extractions: BTreeMap<usize, Option<InstrId>> = BTreeMap::new();
    for u in hlo::users(body, param.id) {
        let user = body.instruction(u);
        if user.opcode != Opcode::GetTupleElement {
            continue;
        }
        let Some(k) = hlo::tuple_index(user) else {
            continue;
        };
        extractions
            .entry(k)
            .and_modify(|e| *e = None)
            .or_insert(Some(u));
    }
    let Some(root) = l.body_root().filter(|r| r.opcode == Opcode::Tuple) else {
        return vec![];
    };
    let mut out = vec![];
    for (k, operand) in root.operands.iter().enumerate() {
        let Some(insertion) = operand.target else {
            continue;
        };
        if hlo::is_constant(body.instruction(insertion)) {
            continue;
        }
        let Some(Some(extraction)) = extractions.get(&k).copied() else {
            continue;
        };
        if extraction != insertion && reaches(l, insertion, extraction) {
            out.push(extraction);
        }
    }
    out
}

/// Whether `to` is reached from `from` going to operands only through
/// `get-tuple-element`, add, subtract, multiply and divide with exactly one
/// non-constant operand (XLA's reachability map with restricted edges).
fn reaches(l: &Loop<'_>, from: InstrId, to: InstrId) -> bool {
    let body = l.body;
    let mut at = from;
    for _ in 0..=body.model().instructions.len() {
        if at == to {
            return true;
        }
        let instr = body.instruction(at);
        let follows = matches!(
            instr.opcode,
            Opcode::GetTupleElement
                | Opcode::Add
                | Opcode::Multiply
                | Opcode::Divide
                | Opcode::Subtract
        );
        let mut non_constant = instr
            .operands
            .iter()
            .filter_map(|o| o.target)
            .filter(|&t| !hlo::is_constant(body.instruction(t)));
        match (follows, non_constant.next(), non_constant.next()) {
            (true, Some(next), None) => at = next,
            _ => return false,
        }
    }
    false
}
