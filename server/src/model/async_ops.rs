//! The structure of an async chain (`async-start` → `async-update`* → `async-done`,
//! or their sugared spellings `custom-call-start`, `dot-done`, ...), as XLA's parser
//! checks it when it builds one (`HloParserImpl::ParseInstructionRhs`, case
//! `kAsyncStart`): the start's and each update's shape is `((operands), outputs,
//! state)`, updates and dones take the chain's previous op, and what they
//! repeat of the start (the wrapped opcode, `calls=`, `async_execution_thread=`)
//! agrees with it. Messages use XLA's wording.

use std::ops::Range;

use super::attributes::unquote;
use super::diagnostics::{codes, Diagnostic};
use super::module::{Computation, Instruction};
use super::opcode::Opcode;
use super::shape::Shape;

/// What is wrong with the async ops of `c` (`text`: its chunk's text).
pub fn check(c: &Computation, text: &str) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for instr in &c.instructions {
        match instr.opcode {
            Opcode::AsyncStart if !start_shape_fits(&instr.shape) => {
                found.push(error(
                    instr.shape_range.range(),
                    "AsyncStart expects the op shape to be in the form of \
                     ((async-operands), async-outputs, state).",
                ));
            }
            Opcode::AsyncUpdate | Opcode::AsyncDone => {
                found.extend(check_follower(c, instr, text));
            }
            _ => {}
        }
    }
    found
}

fn error(range: Range<usize>, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(range, codes::INVALID_MODULE, message)
}

fn start_shape_fits(shape: &Shape) -> bool {
    match shape {
        Shape::Tuple(elements) => elements.len() >= 2 && matches!(elements[0], Shape::Tuple(_)),
        Shape::Invalid => true,
        _ => false,
    }
}

/// What an op of a chain says of it: the wrapped opcode of a sugared spelling, the
/// computation it `calls`, its execution thread.
struct Says<'a> {
    wrapped: Option<&'a str>,
    calls: Option<&'a str>,
    thread: Option<String>,
}

fn says<'a>(instr: &Instruction, text: &'a str) -> Says<'a> {
    let spelled = &text[instr.opcode_range.range()];
    let wrapped = ["-start", "-update", "-done"]
        .iter()
        .find_map(|suffix| spelled.strip_suffix(suffix))
        .filter(|stem| *stem != "async");
    let calls = instr
        .attribute("calls")
        .map(|a| text[a.value_range.range()].trim().trim_start_matches('%'));
    let thread = instr
        .attribute("async_execution_thread")
        .map(|a| unquote(&text[a.value_range.range()]));
    Says {
        wrapped,
        calls,
        thread,
    }
}

/// An `async-update` or `async-done` against the op before it in the chain.
fn check_follower(c: &Computation, instr: &Instruction, text: &str) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let Some(operand) = instr.operands.first() else {
        return found;
    };
    let Some(producer) = operand.target.map(|t| c.instruction(t)) else {
        return found;
    };
    let is_update = instr.opcode == Opcode::AsyncUpdate;
    match producer.opcode {
        Opcode::AsyncStart | Opcode::AsyncUpdate => {}
        Opcode::AsyncDone => {
            found.push(error(
                operand.range.range(),
                "AsyncUpdate and AsyncDone cannot have AsyncDone as operand.",
            ));
            return found;
        }
        // A chain may pass through a parameter, a tuple element, a loop or a call.
        Opcode::Parameter
        | Opcode::GetTupleElement
        | Opcode::While
        | Opcode::Call
        | Opcode::Conditional
        | Opcode::Bitcast
        | Opcode::Copy
        | Opcode::OptimizationBarrier
        | Opcode::Unknown(_) => return found,
        _ => {
            found.push(error(
                operand.range.range(),
                "AsyncUpdate and AsyncDone expect a single async op as their operand.",
            ));
            return found;
        }
    }
    // An update may bind operands and outputs late (its shape then grows from its
    // operand's), but keeps the start's form.
    if is_update && !start_shape_fits(&instr.shape) {
        found.push(error(
            instr.shape_range.range(),
            "AsyncUpdate expects the op shape to be the same as the operand shape. Both \
             are in the form ((async-operands), async-outputs, state).",
        ));
    }
    let start = chain_start(c, producer);
    let (own, first) = (says(instr, text), says(start, text));
    if let (Some(got), Some(expected)) = (own.wrapped, first.wrapped) {
        if got != expected {
            found.push(error(
                instr.opcode_range.range(),
                format!("Expect async wrapped opcode to be {expected}, but got {got}"),
            ));
        }
    }
    if let (Some(got), Some(expected)) = (own.calls, first.calls) {
        if got != expected {
            found.push(error(
                instr.opcode_range.range(),
                format!("Expect async_wrapped_computation to be {expected}, but got {got}"),
            ));
        }
    }
    if let Some(got) = own.thread {
        let expected = first.thread.unwrap_or_else(|| "main".to_string());
        if got != expected {
            found.push(error(
                instr.opcode_range.range(),
                format!("Expect async_execution_thread to be {expected}, but got {got}"),
            ));
        }
    }
    found
}

/// The `async-start` a chain begins with, walking back through its updates.
fn chain_start<'c>(c: &'c Computation, mut op: &'c Instruction) -> &'c Instruction {
    for _ in 0..c.instructions.len() {
        if op.opcode != Opcode::AsyncUpdate {
            break;
        }
        match op.operands.first().and_then(|o| o.target) {
            Some(t) => op = c.instruction(t),
            None => break,
        }
    }
    op
}
