//! How an instruction stands to a collective: the collective itself, the start
//! of an asynchronous one (`all-reduce-start`, or an `async-start` whose called
//! computation's root is the collective), or its done. XLA puts the time on
//! the start and none on the done, so a pair counts once
//! (`HloDataflowAnalysis::IsAsynchronousOperationDone`,
//! `hlo_query::IsAsyncCollectiveStartOp`, `GetCanonicalAsyncOp`). A `call` is
//! not a collective: the collectives of the computation it calls are costed
//! where they stand, as XLA's scheduler sees them.

use super::op::Op;
use crate::model::{ComputationRef, Instruction, Module};

/// Which part of a collective an instruction is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// A synchronous collective.
    Whole,
    /// The start of an asynchronous collective: it carries the time.
    Start,
    /// The done: no time of its own.
    Done,
}

/// The collective instruction behind `instr`, with the computation it stands in.
pub struct Found<'m> {
    pub part: Part,
    pub computation: ComputationRef<'m>,
    pub instr: &'m Instruction,
    pub op: Op,
}

/// The root of the computation an `async-start` (or `async-done`) calls:
/// XLA's `async_wrapped_instruction`.
fn wrapped<'m>(
    module: &'m Module,
    instr: &Instruction,
) -> Option<(ComputationRef<'m>, &'m Instruction)> {
    let called = module.called_computation(instr, "calls")?;
    let root = called.model().root_instruction()?;
    Some((called, root))
}

/// The `async-start` an `async-done` finishes (its operand), for the wrapped
/// collective when the done has no `calls=` of its own.
fn start_of<'m>(computation: ComputationRef<'m>, done: &Instruction) -> Option<&'m Instruction> {
    let id = done.operands.first()?.target?;
    Some(computation.instruction(id))
}

/// The collective behind `instr`, if it is one or a part of one.
pub fn find<'m>(
    module: &'m Module,
    computation: ComputationRef<'m>,
    instr: &'m Instruction,
) -> Option<Found<'m>> {
    let name = instr.opcode.name();
    if let Some(op) = Op::from_name(name) {
        let part = if op.synchronous() == op {
            Part::Whole
        } else {
            Part::Start
        };
        return Some(Found {
            part,
            computation,
            instr,
            op,
        });
    }
    let done_of = |start: &str| -> Option<Op> { Op::from_name(start) };
    match name {
        "all-reduce-done" | "all-gather-done" | "collective-permute-done" => {
            let start = name.replace("-done", "-start");
            Some(Found {
                part: Part::Done,
                computation,
                instr,
                op: done_of(&start)?,
            })
        }
        "async-start" => {
            let (called, root) = wrapped(module, instr)?;
            let op = Op::from_name(root.opcode.name())?;
            Some(Found {
                part: Part::Start,
                computation: called,
                instr: root,
                op,
            })
        }
        "async-done" | "async-update" => {
            let (called, root) = wrapped(module, instr).or_else(|| {
                let start = start_of(computation, instr)?;
                wrapped(module, start)
            })?;
            let op = Op::from_name(root.opcode.name())?;
            Some(Found {
                part: Part::Done,
                computation: called,
                instr: root,
                op,
            })
        }
        _ => None,
    }
}

/// Send and receive, their dones (XLA counts them with the asynchronous
/// collectives when it asks for starts and dones "with send/recv").
pub fn is_send_recv(instr: &Instruction) -> bool {
    matches!(
        instr.opcode.name(),
        "send" | "recv" | "send-done" | "recv-done"
    )
}

/// `IsSupportedCollectiveOp` of the SoL estimator.
pub fn is_supported_collective(instr: &Instruction) -> bool {
    matches!(
        instr.opcode.name(),
        "all-reduce-start"
            | "all-reduce"
            | "reduce-scatter"
            | "all-gather-start"
            | "all-to-all"
            | "collective-permute-start"
            | "collective-permute"
            | "all-gather"
    )
}

/// `GetCanonicalAsyncOp`: (outer, inner) with outer `async-start`,
/// `async-done` or the opcode itself.
fn canonical<'m>(
    module: &'m Module,
    computation: ComputationRef<'m>,
    instr: &'m Instruction,
) -> (String, String) {
    let name = instr.opcode.name();
    for (start, done) in [
        ("all-reduce-start", "all-reduce-done"),
        ("all-gather-start", "all-gather-done"),
        ("collective-permute-start", "collective-permute-done"),
        ("send", "send-done"),
        ("recv", "recv-done"),
    ] {
        let inner = start.trim_end_matches("-start").to_string();
        if name == start {
            return ("async-start".into(), inner);
        }
        if name == done {
            return ("async-done".into(), inner);
        }
    }
    if name == "async-start" || name == "async-done" || name == "async-update" {
        let inner = wrapped(module, instr)
            .or_else(|| start_of(computation, instr).and_then(|s| wrapped(module, s)))
            .map_or_else(String::new, |(_, root)| root.opcode.name().to_string());
        return (name.to_string(), inner);
    }
    (name.to_string(), String::new())
}

/// `LatencyEstimator::IsAsyncPair`: `from` starts what `to` finishes.
pub fn is_async_pair<'m>(
    module: &'m Module,
    computation: ComputationRef<'m>,
    from: &'m Instruction,
    to: &'m Instruction,
) -> bool {
    let (from_outer, from_inner) = canonical(module, computation, from);
    let (to_outer, to_inner) = canonical(module, computation, to);
    from_outer == "async-start" && to_outer == "async-done" && from_inner == to_inner
}

/// `hlo_query::IsAsyncCollectiveStartOp(instr, include_send_recv=true)`.
pub fn is_async_collective_start(
    module: &Module,
    computation: ComputationRef<'_>,
    instr: &Instruction,
) -> bool {
    match instr.opcode.name() {
        "send" | "recv" => true,
        _ => find(module, computation, instr).is_some_and(|f| f.part == Part::Start),
    }
}

/// `hlo_query::IsAsyncCollectiveDoneOp(instr, include_send_recv=true)`.
pub fn is_async_collective_done(
    module: &Module,
    computation: ComputationRef<'_>,
    instr: &Instruction,
) -> bool {
    match instr.opcode.name() {
        "send-done" | "recv-done" => true,
        _ => find(module, computation, instr).is_some_and(|f| f.part == Part::Done),
    }
}
