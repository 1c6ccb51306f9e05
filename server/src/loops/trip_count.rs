//! How many times a while loop runs, as XLA's `while_loop_analysis.cc` finds it:
//! `MatchTrivialLoopInductionStep`, `MatchTrivialLoopTripCount`,
//! `MatchTrivialLoopRange`, `ComputeWhileLoopTripCount` (the patterns first,
//! then up to 128 evaluated iterations) and `ComputeWhileLoopTripCountUpperBound`.
//!
//! The trivial patterns: the induction variable `i` starts at a constant `K`, the
//! body does `i += C` with a positive constant `C`, and the condition is
//! `i < N` or `i <= N` with a constant `N`.

use crate::model::{ComparisonDirection, Instruction, Opcode};

use super::eval::{self, Value};
use super::hlo::{self, Loop};
use super::induction;
use super::reason::Why;

/// XLA's default `max_brute_force_iters`.
pub const MAX_BRUTE_FORCE_ITERS: i64 = 128;

/// `Range` of `MatchTrivialLoopRange`: the first and the last value the
/// induction variable takes, and its step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopRange {
    pub min: i64,
    pub max: i64,
    pub step: i64,
}

/// How an exact trip count was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `MatchTrivialLoopTripCount`: `i = K; i < N (or <=); i += C`.
    Pattern,
    /// The condition and the update evaluated iteration by iteration.
    Evaluated,
    /// Evaluated with the induction variable read through copies and a
    /// wrapping call, where XLA's analysis gives up on an optimized loop
    /// ([`super::traced`]; not XLA).
    Traced,
}

/// `EvaluateIndvarInit`: the induction variable's first value, evaluated from
/// the while's operand (through copies and tuple round trips).
pub fn initial_value(l: &Loop<'_>, index: usize) -> Result<Value, Why> {
    let init = l
        .init()
        .and_then(|t| hlo::operand(l.computation, t, index))
        .ok_or_else(|| Why::Broken(format!("the loop state has no element {index}")))?;
    let traced = hlo::trace_copies(l.computation, init);
    eval::evaluate(l.module, l.computation, traced, &[]).map_err(|detail| Why::InitNotConstant {
        name: traced.name.to_string(),
        detail,
    })
}

/// The add of the body's update and its step constant, when the update is
/// `add(i, C)` or `add(C, i)` (`m::AddAnyOrder(m::Op().Is(i), m::Constant())`).
fn step_constant<'a>(
    l: &Loop<'a>,
    update: &Instruction,
    indvar: &Instruction,
) -> Option<&'a Instruction> {
    if update.opcode != Opcode::Add || update.operands.len() != 2 {
        return None;
    }
    let a = hlo::operand(l.body, update, 0)?;
    let b = hlo::operand(l.body, update, 1)?;
    if a.id == indvar.id && hlo::is_constant(b) {
        Some(b)
    } else if b.id == indvar.id && hlo::is_constant(a) {
        Some(a)
    } else {
        None
    }
}

/// `MatchTrivialLoopInductionStep`: `C` when the body does `i += C` with an
/// integral constant `C > 0` (copies and tuple round trips looked through).
pub fn induction_step(l: &Loop<'_>, index: usize) -> Option<i64> {
    let root = l.body_root()?;
    let update = hlo::trace_copies(l.body, hlo::operand(l.body, root, index)?);
    let indvar = l
        .body
        .instruction(hlo::non_constant_operand(l.body, update)?);
    let param = l.body_parameter()?;
    if Some(hlo::trace_copies(l.body, indvar).id) != hlo::unique_gte(l.body, param.id, index) {
        return None;
    }
    let step = step_constant(l, update, indvar)?;
    if !hlo::is_effective_scalar(&step.shape) {
        return None;
    }
    eval::literal(l.body, step)?.as_i64().filter(|&s| s > 0)
}

/// The unique `get-tuple-element` of the condition's parameter reading element
/// `index`, when it is also the condition root's one non-constant operand.
fn condition_indvar<'a>(l: &Loop<'a>, root: &Instruction, index: usize) -> Option<&'a Instruction> {
    let param = l.condition_parameter()?;
    let indvar = hlo::non_constant_operand(l.condition, root)?;
    (Some(indvar) == hlo::unique_gte(l.condition, param.id, index))
        .then(|| l.condition.instruction(indvar))
}

/// `MatchTrivialLoopTripCount`: the trip count of `i = init; i < N (or <=);
/// i += C`, without overflowing `i64`.
pub fn match_trivial_trip_count(l: &Loop<'_>, index: usize, init: i64) -> Option<i64> {
    let step = induction_step(l, index)?;
    let root = l.condition_root()?;
    let indvar = condition_indvar(l, root, index)?;
    if root.operands.len() != 2 {
        return None;
    }
    let bound = (0..2)
        .filter_map(|k| hlo::operand(l.condition, root, k))
        .find(|o| o.id != indvar.id && hlo::is_constant(o))?;
    if !hlo::is_effective_scalar(&bound.shape) {
        return None;
    }
    let bound = eval::literal(l.condition, bound)?.as_i64()?;
    if root.opcode != Opcode::Compare
        || hlo::operand(l.condition, root, 0).map(|o| o.id) != Some(indvar.id)
    {
        return None;
    }
    let trips = bound.checked_sub(init)?;
    match root.attrs().comparison_direction? {
        ComparisonDirection::Lt if trips <= 0 => Some(0),
        // ceil((N - init) / C) without overflowing N - init + C - 1.
        ComparisonDirection::Lt => ((trips - 1) / step).checked_add(1),
        ComparisonDirection::Le if trips < 0 => Some(0),
        ComparisonDirection::Le => (trips / step).checked_add(1),
        _ => None,
    }
}

/// `MatchTrivialLoopRange` (`MatchLoopRangeWithKnownValues` without known
/// values): the values the induction variable takes, when it starts at a
/// constant, grows by a positive constant and is compared with a constant by
/// `<`, `>`, `<=` or `>=`.
pub fn match_trivial_range(l: &Loop<'_>) -> Option<LoopRange> {
    let index = induction::tuple_index(l).ok()?;
    let init = initial_value(l, index).ok()?.as_i64()?;
    let root = l.body_root()?;
    let update = hlo::operand(l.body, root, index)?;
    let param = l.body_parameter()?;
    let indvar = hlo::non_constant_operand(l.body, update)?;
    if Some(indvar) != hlo::unique_gte(l.body, param.id, index) {
        return None;
    }
    let step = step_constant(l, update, l.body.instruction(indvar))
        .filter(|s| hlo::is_effective_scalar(&s.shape))
        .and_then(|s| eval::literal(l.body, s)?.as_i64())
        .filter(|&s| s > 0)?;
    let cond_root = l.condition_root()?;
    let cond_param = l.condition_parameter()?;
    let cond_indvar = hlo::unique_gte(l.condition, cond_param.id, index)?;
    if cond_root.operands.len() != 2 {
        return None;
    }
    let operand = |k| hlo::operand(l.condition, cond_root, k);
    let bound = match (operand(0)?, operand(1)?) {
        (a, b) if a.id == cond_indvar => b,
        (a, b) if b.id == cond_indvar => a,
        _ => return None,
    };
    // A bound read from the loop state would need XLA's known values.
    let mut max = eval::literal(l.condition, bound)?.as_i64()?;
    match cond_root.attrs().comparison_direction? {
        ComparisonDirection::Lt | ComparisonDirection::Gt => max = max.checked_sub(1)?,
        ComparisonDirection::Le | ComparisonDirection::Ge => {}
        _ => return None,
    }
    // Round the bound down so that `max - min` is a multiple of the step.
    let remainder = ((max % step) - (init % step)) % step;
    max = max.checked_sub(if remainder < 0 {
        remainder + step
    } else {
        remainder
    })?;
    Some(LoopRange {
        min: init,
        max,
        step,
    })
}

/// `ComputeWhileLoopTripCount`: the exact trip count, from the pattern or by
/// evaluating the condition and the update up to `max_brute_force_iters` times.
pub fn compute_trip_count(l: &Loop<'_>, max_brute_force_iters: i64) -> Result<(i64, Method), Why> {
    let index = induction::tuple_index(l)?;
    let mut value = initial_value(l, index)?;
    if let Some(n) = value
        .as_i64()
        .and_then(|init| match_trivial_trip_count(l, index, init))
    {
        return Ok((n, Method::Pattern));
    }
    let body_root = l
        .body_root()
        .ok_or_else(|| Why::Broken("the body is empty".into()))?;
    let update = hlo::operand(l.body, body_root, index)
        .ok_or_else(|| Why::Broken(format!("the body's result has no element {index}")))?;
    let body_param = l
        .body_parameter()
        .ok_or_else(|| Why::Broken("the body has no parameter".into()))?;
    let body_indvar = hlo::non_constant_operand(l.body, update)
        .filter(|&i| Some(i) == hlo::unique_gte(l.body, body_param.id, index))
        .ok_or_else(|| Why::UpdateNotSimple(update.name.to_string()))?;
    let cond_root = l
        .condition_root()
        .ok_or_else(|| Why::Broken("the condition is empty".into()))?;
    let cond_indvar = condition_indvar(l, cond_root, index)
        .ok_or_else(|| condition_not_on_variable(l, cond_root))?;
    for trips in 0..=max_brute_force_iters {
        let holds = eval::evaluate(
            l.module,
            l.condition,
            cond_root,
            &[(cond_indvar.id, value.clone())],
        )
        .map_err(Why::Evaluation)?;
        if holds == Value::Pred(false) {
            return Ok((trips, Method::Evaluated));
        }
        value = eval::evaluate(l.module, l.body, update, &[(body_indvar, value)])
            .map_err(Why::Evaluation)?;
    }
    Err(Why::TooManyIterations(max_brute_force_iters + 1))
}

/// Why the condition's root is not `op(i, constants)`: it tests a value computed
/// from `i`, or compares `i` with a non-constant.
fn condition_not_on_variable(l: &Loop<'_>, root: &Instruction) -> Why {
    match hlo::non_constant_operand(l.condition, root) {
        Some(only) => Why::ConditionNotOnVariable(l.condition.instruction(only).name.to_string()),
        None => {
            let other = hlo::operands(l.condition, root)
                .flatten()
                .find(|o| !hlo::is_constant(o) && o.opcode != Opcode::GetTupleElement)
                .unwrap_or(root);
            Why::BoundNotConstant(other.name.to_string())
        }
    }
}

/// `ComputeWhileLoopTripCountUpperBound`: the exact count when known; else 1
/// when the condition reads one element, the body sets it to a constant and the
/// condition is false on that constant (the loop runs at most once).
pub fn trip_count_upper_bound(l: &Loop<'_>) -> Option<i64> {
    if let Ok((n, _)) = compute_trip_count(l, MAX_BRUTE_FORCE_ITERS) {
        return Some(n);
    }
    let param = l.condition_parameter()?;
    let cond_gte = match hlo::users(l.condition, param.id)[..] {
        [only] => l.condition.instruction(only),
        _ => return None,
    };
    if cond_gte.opcode != Opcode::GetTupleElement {
        return None;
    }
    let body_root = l.body_root()?;
    if body_root.opcode != Opcode::Tuple {
        return None;
    }
    let set_to = hlo::operand(l.body, body_root, hlo::tuple_index(cond_gte)?)?;
    if set_to.opcode != Opcode::Constant {
        return None;
    }
    let value = eval::literal(l.body, set_to)?;
    let root = l.condition_root()?;
    let holds = eval::evaluate(l.module, l.condition, root, &[(cond_gte.id, value)]).ok()?;
    (holds == Value::Pred(false)).then_some(1)
}
