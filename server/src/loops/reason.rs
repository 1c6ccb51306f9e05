//! Why a loop's trip count is unknown, in words a user can act on: each step of
//! XLA's analysis that gives up (`return std::nullopt` after a `VLOG`) says what
//! it found instead of what it wanted.

use std::fmt;

use super::eval::EvalError;

/// Which computation of the loop a reason is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Condition,
    Body,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Condition => "the condition",
            Part::Body => "the body",
        }
    }
}

/// One reason the analysis gave up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// A name the loop needs is undefined (the model reported it).
    Broken(String),
    /// The walk reached the loop state as a whole, or another parameter.
    ReadsWholeState(Part),
    /// A value on the way is not a scalar (`within`: the fusion or call of the
    /// condition or body that holds it).
    NotScalar {
        part: Part,
        name: String,
        within: Option<String>,
    },
    /// A collective, custom call, send or receive on the way: nothing a compiler
    /// can evaluate.
    Opaque {
        part: Part,
        name: String,
        opcode: String,
        within: Option<String>,
    },
    /// A `get-tuple-element` of something that is neither the loop state, a tuple
    /// nor a fusion or call.
    Untraceable { part: Part, name: String },
    /// The condition reads no element of the loop state.
    NoLoopVariable,
    /// The condition reads several elements of the loop state.
    SeveralLoopVariables(Vec<i64>),
    /// The condition compares the loop variable with an element of the loop
    /// state the body never changes, set when the loop starts (`name`).
    BoundAtRunTime { element: i64, name: String },
    /// The while's operand is not a `tuple` instruction.
    InitNotTuple(String),
    /// The body's root is not a `tuple`.
    BodyRootNotTuple,
    /// The body computes the loop variable from several elements (or none).
    BodyMixes { name: String, elements: Vec<i64> },
    /// The body updates another element than the condition reads.
    IndexMismatch { condition: i64, body: i64 },
    /// The loop variable's first value is not computable from constants.
    InitNotConstant { name: String, detail: EvalError },
    /// The update is not one operation of the loop variable and constants.
    UpdateNotSimple(String),
    /// The condition compares the loop variable with something else than a constant.
    BoundNotConstant(String),
    /// The condition compares a value computed from the loop variable, not the
    /// variable itself.
    ConditionNotOnVariable(String),
    /// Evaluating the condition or the update failed.
    Evaluation(EvalError),
    /// The condition still held after this many evaluated iterations.
    TooManyIterations(i64),
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::Broken(what) => write!(f, "the loop is incomplete: {what}"),
            Why::ReadsWholeState(part) => write!(
                f,
                "{} reads the loop state other than through scalar elements",
                part.name()
            ),
            Why::NotScalar { part, name, within } => {
                write!(f, "{} ", part.name())?;
                if let Some(within) = within {
                    write!(f, "calls `{within}`, which ")?;
                }
                write!(f, "computes with a non-scalar value (`{name}`)")
            }
            Why::Opaque {
                part,
                name,
                opcode,
                within,
            } => {
                write!(f, "{} ", part.name())?;
                if let Some(within) = within {
                    write!(f, "calls `{within}`, which ")?;
                }
                write!(
                    f,
                    "goes through {opcode} `{name}`, which cannot be evaluated at compile time"
                )
            }
            Why::Untraceable { part, name } => write!(
                f,
                "{} reads `{name}`, an element of a value computed in the loop",
                part.name()
            ),
            Why::NoLoopVariable => write!(f, "the condition reads no element of the loop state"),
            Why::SeveralLoopVariables(elements) => write!(
                f,
                "the condition depends on several loop variables (tuple elements {})",
                list(elements)
            ),
            Why::BoundAtRunTime { element, name } => write!(
                f,
                "the loop's bound (tuple element {element}) is a value known only at run time (`{name}`)"
            ),
            Why::InitNotTuple(name) => write!(
                f,
                "the loop starts from `{name}`, not from a tuple written next to the while"
            ),
            Why::BodyRootNotTuple => write!(f, "the body's result is not a tuple"),
            Why::BodyMixes { name, elements } if elements.is_empty() => write!(
                f,
                "the body's new loop variable (`{name}`) does not depend on its old value"
            ),
            Why::BodyMixes { name, elements } => write!(
                f,
                "the body computes the loop variable (`{name}`) from several loop elements ({})",
                list(elements)
            ),
            Why::IndexMismatch { condition, body } => write!(
                f,
                "the condition reads tuple element {condition} but the body computes it from element {body}"
            ),
            Why::InitNotConstant { name, detail } => write!(
                f,
                "the loop variable starts at `{name}`, a value known only at run time ({detail})"
            ),
            Why::UpdateNotSimple(name) => write!(
                f,
                "the body's update of the loop variable (`{name}`) is not one operation of the variable and constants"
            ),
            Why::BoundNotConstant(name) => write!(
                f,
                "the condition compares with a value computed in the loop (`{name}`)"
            ),
            Why::ConditionNotOnVariable(name) => write!(
                f,
                "the condition tests `{name}`, computed from the loop variable, not the variable itself"
            ),
            Why::Evaluation(e) => write!(f, "evaluating the loop stopped: {e}"),
            Why::TooManyIterations(n) => write!(
                f,
                "no pattern matched and the condition still held after {n} evaluated iterations"
            ),
        }
    }
}

fn list(elements: &[i64]) -> String {
    let parts: Vec<String> = elements.iter().map(ToString::to_string).collect();
    parts.join(", ")
}
