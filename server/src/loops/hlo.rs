//! The questions the loop analysis asks of the model, in XLA's words: an
//! instruction's operand, its distinct users, the unique `get-tuple-element` of a
//! tuple element (`hlo_query::GetUniqueGteInstruction`), the one non-constant
//! operand (`NonConstantOperand`), copies and tuple round trips looked through
//! (`TraceThroughCopyAndGteTupleChain`), and the computations an instruction calls.

use crate::model::{ComputationRef, InstrId, Instruction, Module, Opcode, Shape};

/// Calls nested deeper than this are not followed (a recursive module is an error
/// the model reports; the analysis must still end).
pub(crate) const MAX_NESTING: usize = 16;

/// A while loop: the instruction, where it is, and the two computations it runs.
#[derive(Clone, Copy)]
pub struct Loop<'a> {
    pub module: &'a Module,
    /// The computation holding the `while`.
    pub computation: ComputationRef<'a>,
    pub instruction: &'a Instruction,
    pub condition: ComputationRef<'a>,
    pub body: ComputationRef<'a>,
}

impl<'a> Loop<'a> {
    /// The loop `instruction` of `computation` runs; `None` when it is not a `while`
    /// or a computation it names is missing (the model reported it).
    pub fn new(
        module: &'a Module,
        computation: ComputationRef<'a>,
        instruction: &'a Instruction,
    ) -> Option<Loop<'a>> {
        if instruction.opcode != Opcode::While {
            return None;
        }
        Some(Loop {
            module,
            computation,
            instruction,
            condition: module.called_computation(instruction, "condition")?,
            body: module.called_computation(instruction, "body")?,
        })
    }

    /// The while's operand: the loop state it starts from.
    pub fn init(&self) -> Option<&'a Instruction> {
        operand(self.computation, self.instruction, 0)
    }

    pub fn condition_root(&self) -> Option<&'a Instruction> {
        self.condition.model().root_instruction()
    }

    pub fn body_root(&self) -> Option<&'a Instruction> {
        self.body.model().root_instruction()
    }

    pub fn condition_parameter(&self) -> Option<&'a Instruction> {
        self.condition.model().parameter(0)
    }

    pub fn body_parameter(&self) -> Option<&'a Instruction> {
        self.body.model().parameter(0)
    }
}

/// Operand `k` of `instr`, an instruction of `c`.
pub(crate) fn operand<'a>(
    c: ComputationRef<'a>,
    instr: &Instruction,
    k: usize,
) -> Option<&'a Instruction> {
    instr
        .operands
        .get(k)
        .and_then(|o| o.target)
        .map(|t| c.instruction(t))
}

/// Every operand of `instr`, `None` where a name is undefined.
pub(crate) fn operands<'a>(
    c: ComputationRef<'a>,
    instr: &'a Instruction,
) -> impl Iterator<Item = Option<&'a Instruction>> + 'a {
    instr
        .operands
        .iter()
        .map(move |o| o.target.map(|t| c.instruction(t)))
}

/// The distinct instructions using `id`, in the order they are written (XLA's
/// `users()`: a user reading the same value twice is one user).
pub(crate) fn users(c: ComputationRef<'_>, id: InstrId) -> Vec<InstrId> {
    let mut out: Vec<InstrId> = vec![];
    for &u in c.model().users(id) {
        if !out.contains(&u) {
            out.push(u);
        }
    }
    out
}

/// `index=` of a `get-tuple-element`.
pub(crate) fn tuple_index(instr: &Instruction) -> Option<usize> {
    usize::try_from(instr.attrs().tuple_index?).ok()
}

pub(crate) fn is_constant(instr: &Instruction) -> bool {
    instr.opcode == Opcode::Constant
}

/// `ShapeUtil::IsScalar`: an array of rank 0.
pub(crate) fn is_scalar(shape: &Shape) -> bool {
    shape.as_array().is_some_and(|a| a.dims.is_empty())
}

/// `ShapeUtil::IsEffectiveScalar`: an array of one element (`s32[]`, `s32[1,1]`).
pub(crate) fn is_effective_scalar(shape: &Shape) -> bool {
    shape
        .as_array()
        .is_some_and(|a| a.dims.iter().all(|&d| d == 1))
}

/// `hlo_query::GetUniqueGteInstruction`: the one `get-tuple-element` of `tuple`
/// with index `index`; `None` when there is none or several.
pub(crate) fn unique_gte(c: ComputationRef<'_>, tuple: InstrId, index: usize) -> Option<InstrId> {
    let mut found = None;
    for u in users(c, tuple) {
        let user = c.instruction(u);
        if user.opcode == Opcode::GetTupleElement && tuple_index(user) == Some(index) {
            if found.is_some() {
                return None;
            }
            found = Some(u);
        }
    }
    found
}

/// `NonConstantOperand`: the one operand of `instr` that is not a constant (the
/// same operand may appear twice); `None` when there are none or several.
pub(crate) fn non_constant_operand(c: ComputationRef<'_>, instr: &Instruction) -> Option<InstrId> {
    let mut result: Option<InstrId> = None;
    for o in &instr.operands {
        let t = o.target?;
        if is_constant(c.instruction(t)) {
            continue;
        }
        if result.is_some_and(|r| r != t) {
            return None;
        }
        result = Some(t);
    }
    result
}

/// `TraceThroughCopyAndGteTupleChain`: through copies (`copy`, `copy-start`,
/// `copy-done`) and `get-tuple-element`s of a `tuple` to the value they pass on.
pub(crate) fn trace_copies<'a>(
    c: ComputationRef<'a>,
    mut instr: &'a Instruction,
) -> &'a Instruction {
    for _ in 0..c.model().instructions.len() + 1 {
        let next = match instr.opcode {
            Opcode::GetTupleElement => operand(c, instr, 0)
                .filter(|t| t.opcode == Opcode::Tuple)
                .and_then(|t| operand(c, t, tuple_index(instr)?)),
            Opcode::Copy | Opcode::CopyStart | Opcode::CopyDone => operand(c, instr, 0),
            _ => None,
        };
        match next {
            Some(n) => instr = n,
            None => return instr,
        }
    }
    instr
}

/// The computation a fusion (`calls=`) or a call (`to_apply=`) runs.
pub(crate) fn callee<'a>(module: &'a Module, instr: &Instruction) -> Option<ComputationRef<'a>> {
    match instr.opcode {
        Opcode::Fusion => module.called_computation(instr, "calls"),
        Opcode::Call => module.called_computation(instr, "to_apply"),
        _ => None,
    }
}

/// `IsCollective`: an instruction that talks to other devices (a fusion or call
/// holding one counts too, through [`crate::loops::induction`]'s walk over called
/// computations).
pub(crate) fn is_collective(opcode: &Opcode) -> bool {
    matches!(
        opcode,
        Opcode::AllReduce
            | Opcode::AllReduceStart
            | Opcode::AllReduceDone
            | Opcode::AllGather
            | Opcode::AllGatherStart
            | Opcode::AllGatherDone
            | Opcode::AllToAll
            | Opcode::RaggedAllToAll
            | Opcode::CollectivePermute
            | Opcode::CollectivePermuteStart
            | Opcode::CollectivePermuteDone
            | Opcode::CollectiveBroadcast
            | Opcode::ReduceScatter
    )
}
