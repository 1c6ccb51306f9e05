//! What XLA's `WhileLoopTripCountAnnotator`
//! (`xla/hlo/transforms/while_loop_trip_count_annotator.cc`) writes on a while,
//! computed as data: the `WhileLoopBackendConfig` (`known_induction_variable`,
//! `known_trip_count`, `known_init_step`, `dynamic_variables`) and the uses of
//! the induction variable after the loop it replaces with the final value.
//!
//! Dynamic variables are the elements of the loop state that index
//! `dynamic-slice`s and `dynamic-update-slice`s of a body that moves data to or
//! from the host (`CollectDynamicVariableTupleIndices` of
//! `host_offload_utils.cc`); each gets its own init and step when it is a
//! constant advanced by a constant, or a copy of the induction variable lagging
//! one iteration behind.

use std::collections::BTreeSet;

use serde_json::json;

use crate::model::{ComputationRef, InstrId, Instruction, Opcode};

use super::hlo::{self, Loop};
use super::induction;
use super::trip_count::{self, MAX_BRUTE_FORCE_ITERS};

/// `KnownInitStep`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InitStep {
    pub init: i64,
    pub step: i64,
}

/// One entry of `dynamic_variables`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DynamicVariable {
    pub tuple_index: usize,
    pub init_step: Option<InitStep>,
}

/// The induction variable's final value and the `get-tuple-element`s of the
/// while (in its computation) that XLA replaces with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forwarded {
    pub value: i64,
    pub uses: Vec<InstrId>,
}

/// The `WhileLoopBackendConfig` the annotator writes, and what it forwards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhileLoopConfig {
    pub known_induction_variable: usize,
    pub known_trip_count: Option<i64>,
    pub known_init_step: Option<InitStep>,
    pub dynamic_variables: Vec<DynamicVariable>,
    pub forwarded: Option<Forwarded>,
}

impl WhileLoopConfig {
    /// The config as XLA prints it in `backend_config=` (int64 fields as strings).
    pub fn to_json(&self) -> serde_json::Value {
        let mut config = serde_json::Map::new();
        if let Some(n) = self.known_trip_count {
            config.insert("known_trip_count".into(), json!({ "n": n.to_string() }));
        }
        if let Some(s) = self.known_init_step {
            config.insert(
                "known_init_step".into(),
                json!({ "init": s.init.to_string(), "step": s.step.to_string() }),
            );
        }
        config.insert(
            "known_induction_variable".into(),
            json!({ "tuple_index": self.known_induction_variable.to_string() }),
        );
        if !self.dynamic_variables.is_empty() {
            let variables: Vec<serde_json::Value> = self
                .dynamic_variables
                .iter()
                .map(|v| {
                    let mut entry = json!({ "tuple_index": v.tuple_index.to_string() });
                    if let Some(s) = v.init_step {
                        entry["init"] = json!(s.init.to_string());
                        entry["step"] = json!(s.step.to_string());
                    }
                    entry
                })
                .collect();
            config.insert("dynamic_variables".into(), variables.into());
        }
        serde_json::Value::Object(config)
    }
}

/// What the annotator writes on loop `l`; `None` when it finds no induction
/// variable (it leaves such a while alone).
pub fn annotate(l: &Loop<'_>) -> Option<WhileLoopConfig> {
    let index = induction::tuple_index(l).ok()?;
    let mut config = WhileLoopConfig {
        known_induction_variable: index,
        known_trip_count: None,
        known_init_step: None,
        dynamic_variables: dynamic_variable_indices(l)
            .into_iter()
            .map(|tuple_index| DynamicVariable {
                tuple_index,
                init_step: None,
            })
            .collect(),
        forwarded: None,
    };
    // The stored values are signed: a range below zero is not written.
    let range = trip_count::match_trivial_range(l).filter(|r| r.min >= 0 && r.max >= 0);
    let mut primary = None;
    if let Some(r) = range {
        // XLA computes `(max - min) / step + 1`; a loop that never runs (max < min)
        // gets 0 here rather than a negative count.
        let Some(n) = ((r.max - r.min) / r.step).checked_add(1).map(|n| n.max(0)) else {
            return Some(config);
        };
        config.known_trip_count = Some(n);
        config.known_init_step = Some(InitStep {
            init: r.min,
            step: r.step,
        });
        primary = Some(InitStep {
            init: r.min,
            step: r.step,
        });
        config.forwarded = r
            .step
            .checked_mul(n)
            .and_then(|d| d.checked_add(r.min))
            .map(|value| Forwarded {
                value,
                uses: induction_uses(l, index),
            })
            .filter(|f| !f.uses.is_empty());
    } else if let Ok((n, _)) = trip_count::compute_trip_count(l, MAX_BRUTE_FORCE_ITERS) {
        config.known_trip_count = Some(n);
    }
    for v in &mut config.dynamic_variables {
        v.init_step = resolve_affine(l, v.tuple_index, index, primary);
    }
    Some(config)
}

/// The while's `get-tuple-element`s of element `index` in its computation.
fn induction_uses(l: &Loop<'_>, index: usize) -> Vec<InstrId> {
    hlo::users(l.computation, l.instruction.id)
        .into_iter()
        .filter(|&u| {
            let user = l.computation.instruction(u);
            user.opcode == Opcode::GetTupleElement && hlo::tuple_index(user) == Some(index)
        })
        .collect()
}

/// `CollectDynamicVariableTupleIndices`: with host offloading in the body, the
/// elements read (through copies and `+ - * /`) by the index operands of its
/// dynamic slices and dynamic update slices, sorted.
pub fn dynamic_variable_indices(l: &Loop<'_>) -> Vec<usize> {
    let body = l.body;
    let instructions = &body.model().instructions;
    let offloads = instructions
        .iter()
        .any(|i| moves_to_host_into_update(body, i) || moves_to_device_from_slice(body, i));
    if !offloads {
        return vec![];
    }
    let mut indices = BTreeSet::new();
    for i in instructions {
        let first_index = match i.opcode {
            Opcode::DynamicUpdateSlice => 2,
            Opcode::DynamicSlice => 1,
            _ => continue,
        };
        for o in hlo::operands(body, i).skip(first_index).flatten() {
            read_elements(body, o, &mut indices, 0);
        }
    }
    indices.into_iter().collect()
}

/// `FindTupleIndicesInOperand`.
fn read_elements(c: ComputationRef<'_>, i: &Instruction, out: &mut BTreeSet<usize>, depth: usize) {
    if depth > hlo::MAX_NESTING * 8 {
        return;
    }
    match i.opcode {
        Opcode::GetTupleElement => out.extend(hlo::tuple_index(i)),
        Opcode::Copy => {
            if let Some(o) = hlo::operand(c, i, 0) {
                read_elements(c, o, out, depth + 1);
            }
        }
        Opcode::Add | Opcode::Subtract | Opcode::Multiply | Opcode::Divide => {
            for o in hlo::operands(c, i).flatten() {
                read_elements(c, o, out, depth + 1);
            }
        }
        _ => {}
    }
}

fn custom_call_to(i: &Instruction, target: &str) -> bool {
    i.opcode == Opcode::CustomCall && i.custom_call_target() == Some(target)
}

/// `IsMoveToHostWithDynamicUpdateSlice`: a `MoveToHost` whose value reaches a
/// `dynamic-update-slice` through reshapes, broadcasts and transposes.
fn moves_to_host_into_update(c: ComputationRef<'_>, i: &Instruction) -> bool {
    custom_call_to(i, "MoveToHost") && walk(c, i.id, hlo::users, Opcode::DynamicUpdateSlice)
}

/// `IsMoveToDeviceWithDynamicSlice`: a `MoveToDevice` of a `dynamic-slice`,
/// through reshapes, broadcasts and transposes.
fn moves_to_device_from_slice(c: ComputationRef<'_>, i: &Instruction) -> bool {
    custom_call_to(i, "MoveToDevice")
        && walk(
            c,
            i.id,
            |c, id| {
                c.instruction(id)
                    .operands
                    .iter()
                    .filter_map(|o| o.target)
                    .collect()
            },
            Opcode::DynamicSlice,
        )
}

/// Whether a neighbour (by `next`) of `start`, through reshapes, broadcasts and
/// transposes, has opcode `goal`.
fn walk(
    c: ComputationRef<'_>,
    start: InstrId,
    next: impl Fn(ComputationRef<'_>, InstrId) -> Vec<InstrId>,
    goal: Opcode,
) -> bool {
    let mut seen = BTreeSet::new();
    let mut work = vec![start];
    while let Some(at) = work.pop() {
        if !seen.insert(at) {
            continue;
        }
        for n in next(c, at) {
            let op = &c.instruction(n).opcode;
            if *op == goal {
                return true;
            }
            if matches!(op, Opcode::Reshape | Opcode::Broadcast | Opcode::Transpose) {
                work.push(n);
            }
        }
    }
    false
}

/// `DecomposeLinear`: `expr` as an element of the body's parameter plus a
/// constant offset (through `+` and `-`).
fn decompose(
    c: ComputationRef<'_>,
    expr: &Instruction,
    param: InstrId,
    depth: usize,
) -> Option<(Option<usize>, i64)> {
    if depth > hlo::MAX_NESTING * 8 {
        return None;
    }
    match expr.opcode {
        Opcode::GetTupleElement if expr.operands.first()?.target == Some(param) => {
            Some((Some(hlo::tuple_index(expr)?), 0))
        }
        Opcode::Constant => Some((None, super::eval::literal(c, expr)?.as_i64()?)),
        Opcode::Add | Opcode::Subtract => {
            let (a_index, a) = decompose(c, hlo::operand(c, expr, 0)?, param, depth + 1)?;
            let (b_index, b) = decompose(c, hlo::operand(c, expr, 1)?, param, depth + 1)?;
            let subtract = expr.opcode == Opcode::Subtract;
            if (a_index.is_some() && b_index.is_some()) || (b_index.is_some() && subtract) {
                return None;
            }
            let offset = if subtract {
                a.checked_sub(b)?
            } else {
                a.checked_add(b)?
            };
            Some((a_index.or(b_index), offset))
        }
        _ => None,
    }
}

/// `ResolveAffine`: element `index` as `init + k * step`, either advancing
/// itself by a constant from a constant start, or trailing the induction variable
/// (`primary`) by one iteration; the start must agree with the while's operand.
fn resolve_affine(
    l: &Loop<'_>,
    index: usize,
    primary_index: usize,
    primary: Option<InitStep>,
) -> Option<InitStep> {
    let root = l.body_root().filter(|r| r.opcode == Opcode::Tuple)?;
    let param = l.body_parameter()?;
    let update = hlo::operand(l.body, root, index)?;
    let (source, offset) = decompose(l.body, update, param.id, 0)?;
    let source = source?;
    let init_operand = l
        .init()
        .filter(|t| t.opcode == Opcode::Tuple)
        .and_then(|t| hlo::operand(l.computation, t, index))
        .filter(|i| i.opcode == Opcode::Constant)?;
    let init = super::eval::literal(l.computation, init_operand)?.as_i64()?;
    if source == index {
        return Some(InitStep { init, step: offset });
    }
    let primary = primary.filter(|_| source == primary_index)?;
    let derived = primary
        .init
        .checked_sub(primary.step)?
        .checked_add(offset)?;
    (derived == init).then_some(InitStep {
        init: derived,
        step: primary.step,
    })
}
