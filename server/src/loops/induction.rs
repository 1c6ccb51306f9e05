//! Which element of the loop state is the induction variable: a port of XLA's
//! `GetLoopInductionVarTupleIdx` and the walks behind it (`IsScalarOp`,
//! `GetReachingParameters`, `GetGTEDependenceIndices`,
//! `GetUniqueGTEDependenceIndex`), in `xla/hlo/analysis/while_loop_analysis.cc`.
//!
//! The condition must be a function of scalar elements of its parameter, through
//! scalar ops, copies, tuples and scalar fusions or calls; exactly one of those
//! elements is the induction variable, and the body must compute that element's
//! next value from the same element alone.

use std::collections::{BTreeSet, HashSet};

use crate::model::{ComputationRef, InstrId, Instruction, Module, Opcode};

use super::hlo::{self, Loop, MAX_NESTING};
use super::reason::{Part, Why};

/// A parameter that reaches an output of a called computation: its number, and
/// the element of it when the parameter is a tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Reaching {
    parameter: usize,
    element: Option<usize>,
}

/// `IsScalarOp`: `op` yields a scalar, and neither it nor anything in the
/// computations it calls is a collective, custom call, send or receive.
fn scalar_op(module: &Module, op: &Instruction, part: Part, nesting: usize) -> Result<(), Why> {
    opaque(module, op, part, nesting)?;
    if hlo::is_scalar(&op.shape) {
        Ok(())
    } else {
        Err(Why::NotScalar {
            part,
            name: op.name.to_string(),
            within: None,
        })
    }
}

/// The part of `IsScalarOp` that looks into called computations: every
/// instruction there must pass `IsScalarOp` itself.
fn opaque(module: &Module, op: &Instruction, part: Part, nesting: usize) -> Result<(), Why> {
    let opaque_op = hlo::is_collective(&op.opcode)
        || matches!(
            op.opcode,
            Opcode::Send | Opcode::SendDone | Opcode::Recv | Opcode::RecvDone | Opcode::CustomCall
        );
    if opaque_op {
        return Err(Why::Opaque {
            part,
            name: op.name.to_string(),
            opcode: op.opcode.name().to_string(),
            within: None,
        });
    }
    if nesting >= MAX_NESTING {
        return Err(Why::Broken("calls are nested too deep".into()));
    }
    for called in &op.called {
        let Some(c) = module.resolve(called) else {
            continue;
        };
        for i in &c.model().instructions {
            scalar_op(module, i, part, nesting + 1).map_err(|why| within(why, op))?;
        }
    }
    Ok(())
}

/// A reason found inside the computations `op` calls, said of `op` (the
/// outermost call: what the user sees in the condition or body).
fn within(why: Why, op: &Instruction) -> Why {
    match why {
        Why::NotScalar { part, name, .. } => Why::NotScalar {
            part,
            name,
            within: Some(op.name.to_string()),
        },
        Why::Opaque {
            part, name, opcode, ..
        } => Why::Opaque {
            part,
            name,
            opcode,
            within: Some(op.name.to_string()),
        },
        other => other,
    }
}

/// `GetReachingParameters`: the parameters of `c` (and their elements) that the
/// root reaches, the root's element `element` when given; every op on the way a
/// scalar op unless the caller checked already (`checked`).
fn reaching_parameters(
    module: &Module,
    c: ComputationRef<'_>,
    element: Option<usize>,
    checked: bool,
    part: Part,
    nesting: usize,
) -> Result<BTreeSet<Reaching>, Why> {
    if nesting >= MAX_NESTING {
        return Err(Why::Broken("calls are nested too deep".into()));
    }
    let root = c
        .model()
        .root_instruction()
        .ok_or_else(|| Why::Broken(format!("`{}` has no root", c.name)))?;
    let mut found = BTreeSet::new();
    let mut visited: HashSet<(InstrId, Option<usize>)> = HashSet::new();
    let mut work = vec![(root, element)];
    while let Some((instr, element)) = work.pop() {
        if !visited.insert((instr.id, element)) {
            continue;
        }
        let shape_fits = match element {
            Some(_) => instr.shape.is_tuple(),
            None => hlo::is_scalar(&instr.shape),
        };
        if !shape_fits {
            return Err(Why::NotScalar {
                part,
                name: instr.name.to_string(),
                within: None,
            });
        }
        let operand = |k: usize| {
            hlo::operand(c, instr, k).ok_or_else(|| Why::Broken(format!("`{}`", instr.name)))
        };
        match instr.opcode {
            Opcode::Parameter => {
                found.insert(Reaching {
                    parameter: instr.parameter_number.unwrap_or(0) as usize,
                    element,
                });
            }
            Opcode::Tuple => {
                let k = element.unwrap_or(usize::MAX);
                work.push((operand(k)?, None));
            }
            Opcode::GetTupleElement => {
                work.push((operand(0)?, hlo::tuple_index(instr)));
            }
            Opcode::Copy => work.push((operand(0)?, element)),
            Opcode::Fusion | Opcode::Call => {
                let callee = hlo::callee(module, instr)
                    .ok_or_else(|| Why::Broken(format!("`{}` calls nothing", instr.name)))?;
                let inner =
                    reaching_parameters(module, callee, element, checked, part, nesting + 1)?;
                for r in inner {
                    work.push((operand(r.parameter)?, r.element));
                }
            }
            _ => {
                if element.is_some() {
                    return Err(Why::NotScalar {
                        part,
                        name: instr.name.to_string(),
                        within: None,
                    });
                }
                if !checked {
                    scalar_op(module, instr, part, nesting)?;
                }
                for k in 0..instr.operands.len() {
                    work.push((operand(k)?, None));
                }
            }
        }
    }
    Ok(found)
}

/// `ProcessCalledComputation`: the parameters of the fusion or call `caller`
/// reaching its output (element `element`): elements of `state` are recorded,
/// scalar arguments go on the work list.
#[allow(clippy::too_many_arguments)]
fn through_call<'a>(
    module: &Module,
    c: ComputationRef<'a>,
    caller: &'a Instruction,
    state: InstrId,
    element: Option<usize>,
    checked: bool,
    part: Part,
    work: &mut Vec<&'a Instruction>,
    elements: &mut BTreeSet<i64>,
) -> Result<(), Why> {
    let callee = hlo::callee(module, caller)
        .ok_or_else(|| Why::Broken(format!("`{}` calls nothing", caller.name)))?;
    let reaching = reaching_parameters(module, callee, element, checked, part, 1)
        .map_err(|why| within(why, caller))?;
    for r in reaching {
        let mut argument = hlo::operand(c, caller, r.parameter)
            .ok_or_else(|| Why::Broken(format!("`{}`", caller.name)))?;
        match r.element {
            Some(k) => {
                while argument.opcode == Opcode::Copy {
                    argument = hlo::operand(c, argument, 0)
                        .ok_or_else(|| Why::Broken(format!("`{}`", argument.name)))?;
                }
                if argument.id != state {
                    return Err(Why::Untraceable {
                        part,
                        name: argument.name.to_string(),
                    });
                }
                elements.insert(k as i64);
            }
            None => work.push(argument),
        }
    }
    Ok(())
}

/// `GetGTEDependenceIndices`: the elements of tuple `state` (a parameter of
/// `c`) that `out` is a function of, through scalar ops only.
pub(crate) fn dependence(
    module: &Module,
    c: ComputationRef<'_>,
    out: &Instruction,
    state: &Instruction,
    part: Part,
) -> Result<BTreeSet<i64>, Why> {
    if !state.shape.is_tuple() {
        return Err(Why::ReadsWholeState(part));
    }
    let mut elements = BTreeSet::new();
    let mut visited: HashSet<InstrId> = HashSet::new();
    let mut work = vec![out];
    let not_scalar = |i: &Instruction| Why::NotScalar {
        part,
        name: i.name.to_string(),
        within: None,
    };
    while let Some(instr) = work.pop() {
        if !visited.insert(instr.id) {
            continue;
        }
        if instr.id == state.id || instr.opcode == Opcode::Parameter {
            return Err(Why::ReadsWholeState(part));
        }
        let operand = |i: &Instruction, k: usize| {
            hlo::operand(c, i, k).ok_or_else(|| Why::Broken(format!("`{}`", i.name)))
        };
        match instr.opcode {
            Opcode::GetTupleElement => {
                if !hlo::is_scalar(&instr.shape) {
                    return Err(not_scalar(instr));
                }
                let mut source = operand(instr, 0)?;
                while source.opcode == Opcode::Copy {
                    source = operand(source, 0)?;
                }
                let k = hlo::tuple_index(instr);
                if source.id == state.id {
                    elements.insert(k.map_or(-1, |k| k as i64));
                } else if source.opcode == Opcode::Tuple {
                    for o in hlo::operands(c, source) {
                        work.push(o.ok_or_else(|| Why::Broken(format!("`{}`", source.name)))?);
                    }
                } else if matches!(source.opcode, Opcode::Fusion | Opcode::Call) {
                    through_call(
                        module,
                        c,
                        source,
                        state.id,
                        k,
                        false,
                        part,
                        &mut work,
                        &mut elements,
                    )?;
                } else {
                    return Err(Why::Untraceable {
                        part,
                        name: instr.name.to_string(),
                    });
                }
            }
            Opcode::Copy => work.push(operand(instr, 0)?),
            Opcode::Fusion | Opcode::Call => {
                scalar_op(module, instr, part, 0)?;
                through_call(
                    module,
                    c,
                    instr,
                    state.id,
                    None,
                    true,
                    part,
                    &mut work,
                    &mut elements,
                )?;
            }
            _ => {
                scalar_op(module, instr, part, 0)?;
                for k in 0..instr.operands.len() {
                    work.push(operand(instr, k)?);
                }
            }
        }
    }
    if elements.is_empty() {
        return Err(Why::NoLoopVariable);
    }
    Ok(elements)
}

/// `GetLoopInductionVarTupleIdx`: the element of the loop state that the
/// condition reads (alone) and the body computes from itself.
pub fn tuple_index(l: &Loop<'_>) -> Result<usize, Why> {
    tuple_index_where(l, true)
}

/// [`tuple_index`], with or without XLA's demand that the while's operand be a
/// `tuple` instruction (it is a parameter when a later pass wrapped the while
/// in a call).
pub(crate) fn tuple_index_where(l: &Loop<'_>, tuple_init: bool) -> Result<usize, Why> {
    let cond_root = l
        .condition_root()
        .ok_or_else(|| Why::Broken("the condition is empty".into()))?;
    let cond_param = l
        .condition_parameter()
        .ok_or_else(|| Why::Broken("the condition has no parameter".into()))?;
    let elements = dependence(
        l.module,
        l.condition,
        cond_root,
        cond_param,
        Part::Condition,
    )?;
    let init = l
        .init()
        .ok_or_else(|| Why::Broken("the while has no operand".into()))?;
    if tuple_init && init.opcode != Opcode::Tuple {
        return Err(Why::InitNotTuple(init.name.to_string()));
    }
    // Without known values (XLA's `known_values` is empty here) several elements
    // leave the induction variable ambiguous.
    let index = match elements.iter().collect::<Vec<_>>()[..] {
        [&k] => k,
        _ => return Err(several(l, elements.into_iter().collect())),
    };
    let body_root = l
        .body_root()
        .ok_or_else(|| Why::Broken("the body is empty".into()))?;
    if body_root.opcode != Opcode::Tuple {
        return Err(Why::BodyRootNotTuple);
    }
    let update = usize::try_from(index)
        .ok()
        .and_then(|k| hlo::operand(l.body, body_root, k))
        .ok_or_else(|| Why::Broken(format!("the body's result has no element {index}")))?;
    let update = hlo::trace_copies(l.body, update);
    let body_param = l
        .body_parameter()
        .ok_or_else(|| Why::Broken("the body has no parameter".into()))?;
    let from =
        dependence(l.module, l.body, update, body_param, Part::Body).map_err(|why| match why {
            Why::NoLoopVariable => Why::BodyMixes {
                name: update.name.to_string(),
                elements: vec![],
            },
            other => other,
        })?;
    match from.iter().collect::<Vec<_>>()[..] {
        [&k] if k == index => {
            usize::try_from(index).map_err(|_| Why::Broken("a negative tuple index".into()))
        }
        [&k] => Err(Why::IndexMismatch {
            condition: index,
            body: k,
        }),
        _ => Err(Why::BodyMixes {
            name: update.name.to_string(),
            elements: from.into_iter().collect(),
        }),
    }
}

/// Why a condition reading several elements has no induction variable: when
/// all but one are passed through the body unchanged and the first of those
/// starts at a value known only at run time (`i < n` with `n` an argument), the
/// bound is that value; otherwise several variables.
fn several(l: &Loop<'_>, elements: Vec<i64>) -> Why {
    let invariant = |k: i64| -> bool {
        let Some(k) = usize::try_from(k).ok() else {
            return false;
        };
        let (Some(root), Some(param)) = (l.body_root(), l.body_parameter()) else {
            return false;
        };
        root.opcode == Opcode::Tuple
            && hlo::operand(l.body, root, k).is_some_and(|o| {
                Some(hlo::trace_copies(l.body, o).id) == hlo::unique_gte(l.body, param.id, k)
            })
    };
    let fixed: Vec<i64> = elements.iter().copied().filter(|&k| invariant(k)).collect();
    if fixed.len() + 1 == elements.len() {
        if let Some(&k) = fixed.first() {
            let start = l
                .init()
                .filter(|t| t.opcode == Opcode::Tuple)
                .and_then(|t| hlo::operand(l.computation, t, usize::try_from(k).ok()?))
                .map(|o| hlo::trace_copies(l.computation, o));
            if let Some(start) = start {
                if super::eval::evaluate(l.module, l.computation, start, &[]).is_err() {
                    return Why::BoundAtRunTime {
                        element: k,
                        name: start.name.to_string(),
                    };
                }
            }
        }
    }
    Why::SeveralLoopVariables(elements)
}
