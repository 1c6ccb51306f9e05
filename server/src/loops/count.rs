//! The trip count a report uses for one while loop: what XLA wrote on the while
//! (`backend_config={"known_trip_count":{"n":"32"}}`, put there by its
//! `WhileLoopTripCountAnnotator` after the loop passes), else what the analysis
//! finds ([`super::trip_count::compute_trip_count`]), else unknown with the
//! reason a user can read.

use crate::model::{ComputationRef, Instruction, Module};

use super::hlo::Loop;
use super::trip_count::{self, Method, MAX_BRUTE_FORCE_ITERS};
use super::{induction, reason::Why, traced};

/// Where a trip count comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The while's own `backend_config` (`known_trip_count.n`).
    BackendConfig,
    /// XLA's while-loop analysis, by pattern or by evaluation.
    Analysis(Method),
    /// Neither: why the analysis gave up, in a user's words.
    Unknown(String),
}

/// The induction variable: its element of the loop state, and its first value
/// and step when they are constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Induction {
    pub tuple_index: usize,
    pub init: Option<i64>,
    pub step: Option<i64>,
}

/// How many times a while's body runs per run of the while.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TripCount {
    /// `None` when unknown ([`Source::Unknown`] says why).
    pub n: Option<u64>,
    pub source: Source,
    pub induction: Option<Induction>,
}

impl TripCount {
    fn unknown(why: impl ToString) -> TripCount {
        TripCount {
            n: None,
            source: Source::Unknown(why.to_string()),
            induction: None,
        }
    }

    /// The reason the count is unknown, if it is.
    pub fn unknown_reason(&self) -> Option<&str> {
        match &self.source {
            Source::Unknown(why) => Some(why),
            _ => None,
        }
    }
}

/// The trip count of `instruction`, a `while` of `computation`: its
/// `known_trip_count` first, else XLA's analysis, else unknown with a reason.
pub fn trip_count(
    module: &Module,
    computation: ComputationRef<'_>,
    instruction: &Instruction,
) -> TripCount {
    if let Some(known) = from_backend_config(instruction) {
        return known;
    }
    match Loop::new(module, computation, instruction) {
        Some(l) => analyzed(&l),
        None => TripCount::unknown(Why::Broken(format!(
            "`{}` is not a while with a condition and a body in this module",
            instruction.name
        ))),
    }
}

/// The trip count the analysis finds, whatever the while's `backend_config`
/// says: XLA's analysis, else the same evaluation through copies and a
/// wrapping call ([`super::traced`]); unknown with XLA's reason otherwise.
pub fn analyzed(l: &Loop<'_>) -> TripCount {
    let count = match trip_count::compute_trip_count(l, MAX_BRUTE_FORCE_ITERS) {
        Ok((n, method)) => Ok((n, method)),
        Err(why) => traced::trip_count(l, MAX_BRUTE_FORCE_ITERS)
            .map(|n| (n, Method::Traced))
            .map_err(|_| why),
    };
    match count {
        Ok((n, method)) => TripCount {
            n: Some(u64::try_from(n).unwrap_or(0)),
            source: Source::Analysis(method),
            induction: induction_of(l),
        },
        Err(why) => TripCount {
            induction: induction_of(l),
            ..TripCount::unknown(why)
        },
    }
}

/// The induction variable the analysis finds, its first value, and its step
/// when it is `i += C`.
fn induction_of(l: &Loop<'_>) -> Option<Induction> {
    let tuple_index = induction::tuple_index_where(l, false).ok()?;
    let init = traced::initial_value(l, tuple_index)
        .ok()
        .and_then(|v| v.as_i64());
    Some(Induction {
        tuple_index,
        init,
        step: trip_count::induction_step(l, tuple_index),
    })
}

/// `known_trip_count`, `known_induction_variable` and `known_init_step` of the
/// while's `WhileLoopBackendConfig` (int64 fields print as strings in JSON;
/// numbers are read too).
fn from_backend_config(instruction: &Instruction) -> Option<TripCount> {
    let config = instruction.attrs().backend_config()?;
    let n = int(config.get("known_trip_count")?.get("n")?)?;
    let induction = config
        .get("known_induction_variable")
        .and_then(|v| int(v.get("tuple_index")?))
        .and_then(|k| usize::try_from(k).ok())
        .map(|tuple_index| {
            let init_step = config.get("known_init_step");
            let field = |name: &str| init_step.and_then(|s| int(s.get(name)?));
            Induction {
                tuple_index,
                init: field("init"),
                step: field("step"),
            }
        });
    Some(TripCount {
        n: Some(u64::try_from(n).ok()?),
        source: Source::BackendConfig,
        induction,
    })
}

fn int(v: &serde_json::Value) -> Option<i64> {
    match v {
        serde_json::Value::String(s) => s.trim().parse().ok(),
        serde_json::Value::Number(n) => n.as_i64(),
        _ => None,
    }
}
