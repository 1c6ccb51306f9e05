//! Beyond XLA: counting loops that later passes reshaped. XLA annotates trip
//! counts early in its pipeline; afterwards copy insertion puts a `copy` between
//! the induction variable and its update (`add(copy(i), 1)` in a fusion), and
//! small-loop hoisting wraps the while in a `call`, so XLA's own analysis, run
//! on an optimized dump, gives up (its brute force wants the variable itself as
//! the update's and the condition's operand; its init must be a `tuple`). A dump
//! whose whiles kept their `known_trip_count` needs none of this; one without
//! (hand-edited, or from another pipeline) does.
//!
//! The same evaluation as XLA's brute force, with the induction variable given
//! where the body and the condition read it (their one `get-tuple-element` of
//! it) and its first value followed through copies and the wrapping call. The
//! induction variable is still found by XLA's rules ([`super::induction`]), so
//! the update and the condition depend on it alone, through scalar ops.

use crate::model::{Instruction, Opcode};

use super::eval::{self, Value};
use super::hlo::{self, Loop, MAX_NESTING};
use super::induction;
use super::reason::Why;

/// The induction variable's first value: element `index` of the while's
/// operand, through copies, tuples, and the parameter of a computation that one
/// `call` runs (the call's operand then).
pub fn initial_value(l: &Loop<'_>, index: usize) -> Result<Value, Why> {
    let mut c = l.computation;
    let mut state: &Instruction = l
        .init()
        .ok_or_else(|| Why::Broken("the while has no operand".into()))?;
    for _ in 0..MAX_NESTING * 4 {
        match state.opcode {
            Opcode::Tuple => {
                let element = hlo::operand(c, state, index)
                    .ok_or_else(|| Why::Broken(format!("the loop state has no element {index}")))?;
                let traced = hlo::trace_copies(c, element);
                return eval::evaluate(l.module, c, traced, &[]).map_err(|detail| {
                    Why::InitNotConstant {
                        name: traced.name.to_string(),
                        detail,
                    }
                });
            }
            Opcode::Copy => {
                state = hlo::operand(c, state, 0)
                    .ok_or_else(|| Why::Broken(format!("`{}`", state.name)))?;
            }
            Opcode::Parameter => {
                let (caller_c, call) = match l.module.callers_of(c.id) {
                    [site] => l
                        .module
                        .caller(site)
                        .filter(|(_, i)| i.opcode == Opcode::Call),
                    _ => None,
                }
                .ok_or_else(|| Why::InitNotTuple(state.name.to_string()))?;
                let k = state.parameter_number.unwrap_or(0) as usize;
                state = hlo::operand(caller_c, call, k)
                    .ok_or_else(|| Why::Broken(format!("`{}`", call.name)))?;
                c = caller_c;
            }
            _ => return Err(Why::InitNotTuple(state.name.to_string())),
        }
    }
    Err(Why::Broken(
        "the loop state is passed through too many calls".into(),
    ))
}

/// The trip count by evaluation, the induction variable given where the body and
/// the condition read it; at most `max_iters` iterations.
pub fn trip_count(l: &Loop<'_>, max_iters: i64) -> Result<i64, Why> {
    let index = induction::tuple_index_where(l, false)?;
    let mut value = initial_value(l, index)?;
    let body_root = l
        .body_root()
        .ok_or_else(|| Why::Broken("the body is empty".into()))?;
    let update = hlo::operand(l.body, body_root, index)
        .ok_or_else(|| Why::Broken(format!("the body's result has no element {index}")))?;
    let body_param = l
        .body_parameter()
        .ok_or_else(|| Why::Broken("the body has no parameter".into()))?;
    let body_read = hlo::unique_gte(l.body, body_param.id, index)
        .ok_or_else(|| Why::UpdateNotSimple(update.name.to_string()))?;
    let cond_root = l
        .condition_root()
        .ok_or_else(|| Why::Broken("the condition is empty".into()))?;
    let cond_param = l
        .condition_parameter()
        .ok_or_else(|| Why::Broken("the condition has no parameter".into()))?;
    let cond_read = hlo::unique_gte(l.condition, cond_param.id, index)
        .ok_or_else(|| Why::ConditionNotOnVariable(cond_root.name.to_string()))?;
    for trips in 0..=max_iters {
        let holds = eval::evaluate(
            l.module,
            l.condition,
            cond_root,
            &[(cond_read, value.clone())],
        )
        .map_err(Why::Evaluation)?;
        if holds == Value::Pred(false) {
            return Ok(trips);
        }
        value = eval::evaluate(l.module, l.body, update, &[(body_read, value)])
            .map_err(Why::Evaluation)?;
    }
    Err(Why::TooManyIterations(max_iters + 1))
}
