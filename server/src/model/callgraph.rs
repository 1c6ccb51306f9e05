//! The call graph over a module's computations, edge by edge: which instruction calls
//! which computation, and in what role (a fusion's `calls=`, a reduce's `to_apply=`, a
//! while's `body=` and `condition=`, a conditional's `branch_computations`, a `call`,
//! a custom call's `called_computations`, ...).
//!
//! The call hierarchy of the server and "go to the fusion that calls this computation"
//! read it; it only looks at instructions' `called` lists and the module's callers
//! index (which comes from the outlines), so asking for the callers of a computation
//! builds the callers only.

use std::ops::Range;

use super::module::{CalledComputation, ComputationId, InstrId, Instruction, Module};
use super::opcode::Opcode;

/// How a computation is used by the instruction that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// `fusion(...)`, `calls=`.
    Fused,
    /// `to_apply=` of a reduce, map, sort, scatter, all-reduce, `call`, ...
    Applied,
    /// `while(...)`'s `body=`.
    WhileBody,
    /// `while(...)`'s `condition=`.
    WhileCondition,
    /// Branch `k` of a `conditional` (`branch_computations=` or the
    /// `true_computation=` (0) / `false_computation=` (1) form).
    Branch(usize),
    /// `called_computations=` of a `custom-call` (or an async op).
    Called,
    /// Any other attribute naming a computation (`select=`, `scatter=`,
    /// `async_wrapped_computation=`, `calls=` of a non-fusion).
    Other,
}

impl Role {
    /// A few words for a hover or a detail line: `fusion`, `while body`, `branch 1`.
    pub fn describe(self, opcode: &Opcode) -> String {
        match self {
            Role::Fused => "fusion".into(),
            Role::Applied if *opcode == Opcode::Call => "call".into(),
            Role::Applied => format!("{opcode} to_apply"),
            Role::WhileBody => "while body".into(),
            Role::WhileCondition => "while condition".into(),
            Role::Branch(k) => format!("branch {k}"),
            Role::Called => format!("{opcode} called computation"),
            Role::Other => format!("{opcode} computation"),
        }
    }
}

/// One edge: `instruction` of computation `caller` names `callee_name` (resolved to
/// `callee` when the module defines it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub caller: ComputationId,
    pub instruction: InstrId,
    pub callee_name: String,
    pub callee: Option<ComputationId>,
    pub role: Role,
    /// The callee's name as written in the attribute, in document bytes.
    pub name_range: Range<usize>,
    /// The calling instruction's name, in document bytes.
    pub instruction_range: Range<usize>,
}

/// The role of each entry of `instruction.called`, in order.
pub fn roles(instruction: &Instruction) -> Vec<Role> {
    let mut branch = 0;
    instruction
        .called
        .iter()
        .map(|called| role(instruction, called, &mut branch))
        .collect()
}

fn role(instruction: &Instruction, called: &CalledComputation, branch: &mut usize) -> Role {
    let next_branch = |branch: &mut usize| {
        *branch += 1;
        Role::Branch(*branch - 1)
    };
    match called.attribute.as_str() {
        "calls" if instruction.opcode == Opcode::Fusion => Role::Fused,
        "to_apply" => Role::Applied,
        "body" => Role::WhileBody,
        "condition" => Role::WhileCondition,
        "branch_computations" => next_branch(branch),
        "true_computation" => Role::Branch(0),
        "false_computation" => Role::Branch(1),
        "called_computations" => Role::Called,
        _ => Role::Other,
    }
}

/// The calls made by computation `id` (its outgoing edges), in text order.
pub fn outgoing(module: &Module, id: ComputationId) -> Vec<Call> {
    let c = module.computation(id);
    let mut calls = Vec::new();
    for instruction in &c.model().instructions {
        for (called, role) in instruction.called.iter().zip(roles(instruction)) {
            calls.push(Call {
                caller: id,
                instruction: instruction.id,
                callee_name: called.name.clone(),
                callee: module.resolve(called).map(|r| r.id),
                role,
                name_range: c.abs(called.name_range),
                instruction_range: c.abs(instruction.name_range),
            });
        }
    }
    calls
}

/// The calls of computation `id` (its incoming edges), in text order of the callers.
pub fn incoming(module: &Module, id: ComputationId) -> Vec<Call> {
    let mut calls = Vec::new();
    for site in module.callers_of(id) {
        let Some((c, instruction)) = module.caller(site) else {
            continue;
        };
        let at = module.call_name_range(site);
        let roles = roles(instruction);
        let Some((called, role)) = instruction
            .called
            .iter()
            .zip(roles)
            .find(|(called, _)| c.abs(called.name_range) == at)
        else {
            continue;
        };
        calls.push(Call {
            caller: c.id,
            instruction: instruction.id,
            callee_name: called.name.clone(),
            callee: Some(id),
            role,
            name_range: at,
            instruction_range: c.abs(instruction.name_range),
        });
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_hlo;

    const TEXT: &str = r#"HloModule m

%fused (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%p)
}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%cond (t: (s32[], f32[4])) -> pred[] {
  %t = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%t), index=0
  %k = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %k), direction=LT
}

%body (t: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%t), index=0
  %x = f32[4] get-tuple-element(%t), index=1
  %f = f32[4] fusion(%x), kind=kLoop, calls=%fused
  ROOT %r = (s32[], f32[4]) tuple(%i, %f)
}

%then (x: f32[4]) -> f32[4] {
  ROOT %x = f32[4] parameter(0)
}

%else (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %g = f32[4] fusion(%x), kind=kLoop, calls=%fused
}

ENTRY %main (x: f32[4], p: pred[]) -> f32[] {
  %x = f32[4] parameter(0)
  %p = pred[] parameter(1)
  %z = s32[] constant(0)
  %t = (s32[], f32[4]) tuple(%z, %x)
  %w = (s32[], f32[4]) while(%t), condition=%cond, body=%body
  %y = f32[4] get-tuple-element(%w), index=1
  %c = f32[4] conditional(%p, %y, %y), branch_computations={%then, %else}
  %cc = f32[4] custom-call(%c), custom_call_target="foo", called_computations={%fused}
  %zero = f32[] constant(0)
  ROOT %sum = f32[] reduce(%cc, %zero), dimensions={0}, to_apply=%add
}
"#;

    fn id(file: &crate::model::HloFile, name: &str) -> ComputationId {
        file.modules[0].computation_by_name(name).unwrap()
    }

    fn describe(file: &crate::model::HloFile, calls: &[Call], callee: bool) -> Vec<String> {
        let m = &file.modules[0];
        calls
            .iter()
            .map(|call| {
                let c = m.computation(call.caller);
                let i = c.instruction(call.instruction);
                let other = if callee {
                    call.callee_name.clone()
                } else {
                    c.name.clone()
                };
                format!("{} %{} {}", other, i.name, call.role.describe(&i.opcode))
            })
            .collect()
    }

    #[test]
    fn outgoing_calls_name_each_role() {
        let file = parse_hlo(TEXT);
        let calls = outgoing(&file.modules[0], id(&file, "main"));
        assert_eq!(
            describe(&file, &calls, true),
            [
                "cond %w while condition",
                "body %w while body",
                "then %c branch 0",
                "else %c branch 1",
                "fused %cc custom-call called computation",
                "add %sum reduce to_apply",
            ]
        );
        assert!(calls.iter().all(|c| c.callee.is_some()));
        assert_eq!(&TEXT[calls[0].name_range.clone()], "%cond");
        assert_eq!(&TEXT[calls[0].instruction_range.clone()], "%w");
    }

    #[test]
    fn incoming_calls_find_every_caller() {
        let file = parse_hlo(TEXT);
        let calls = incoming(&file.modules[0], id(&file, "fused"));
        assert_eq!(
            describe(&file, &calls, false),
            [
                "body %f fusion",
                "else %g fusion",
                "main %cc custom-call called computation"
            ]
        );
        assert!(incoming(&file.modules[0], id(&file, "main")).is_empty());
    }

    #[test]
    fn the_old_conditional_form_has_true_and_false_branches() {
        let text = "HloModule m\n%t (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n%f (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\nENTRY %e (p: pred[], x: f32[]) -> f32[] {\n  %p = pred[] parameter(0)\n  %x = f32[] parameter(1)\n  ROOT %c = f32[] conditional(%p, %x, %x), true_computation=%t, false_computation=%f\n}\n";
        let file = parse_hlo(text);
        let calls = outgoing(&file.modules[0], id(&file, "e"));
        let roles: Vec<_> = calls.iter().map(|c| c.role).collect();
        assert_eq!(roles, [Role::Branch(0), Role::Branch(1)]);
    }
}
