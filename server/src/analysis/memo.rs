//! Answers of fusions and calls shared by the queries of one request.
//!
//! A graph around an instruction asks for the maps of every consumer in it, and
//! each of a consumer's outputs is one query. A `call` of a whole layer composes
//! through every fusion of the layer, once per output asked: sixteen outputs of
//! one call compose the same fusions sixteen times. While a [`Memo`] is current
//! ([`Memo::run`], on every thread working for the request), the composed maps
//! from output `k` of a called computation to its parameters
//! ([`super::fusion::fused_output_to_input`]) are computed once and shared.
//!
//! The outputs of one called computation also meet inside it: sixteen outputs of
//! a whole training step read the same activations through the same maps. The
//! composition of a map that reached an instruction with that instruction's own
//! maps ([`step`]) is done once per request too, whichever output brought it.
//!
//! Only answers that do not depend on how they were reached are kept: one that a
//! time budget cut short, or in which the nesting guard refused a computation
//! ([`super::nesting`]: a recursive call is refused or not depending on what is
//! being composed around it), is recomputed the next time it is asked.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use super::graph::Module;
use super::operand_indexing::{InstructionIndexing, OperandMap};
use super::unknown::Unknown;

/// The key of one answer: the module (its address: views of different modules
/// may share a thread), the called computation, the output, the operand count.
type Key = (usize, usize, usize, usize);

/// Where a map reached, for [`step`]: the module (its address), the computation,
/// the instruction and its output.
type At = (usize, usize, usize, usize);

/// For each operand of an instruction, the composition of one map that reached it
/// with each of the operand's maps, in the order of those maps.
pub type Step = Arc<Vec<Vec<Result<OperandMap, Unknown>>>>;

/// The shared answers of one request.
#[derive(Default)]
pub struct Memo {
    answers: Mutex<FxHashMap<Key, Arc<InstructionIndexing>>>,
    /// By where the map reached, then by the map (looked up without copying it).
    steps: Mutex<FxHashMap<At, FxHashMap<OperandMap, Step>>>,
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Memo>>> = const { RefCell::new(None) };
}

impl Memo {
    pub fn new() -> Arc<Memo> {
        Arc::new(Memo::default())
    }

    /// Runs `work` with this memo current on this thread (restoring the previous
    /// one after, also when `work` unwinds).
    pub fn run<T>(self: &Arc<Self>, work: impl FnOnce() -> T) -> T {
        crate::budget::with_current(&CURRENT, Some(self.clone()), work)
    }

    /// How many answers are kept (for tests).
    pub fn len(&self) -> usize {
        self.answers.lock().map_or(0, |a| a.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The answer for output `output` of the computation `comp` with `operands`
/// operands: the current memo's, or `compute()`'s (kept when it does not depend
/// on how it was reached). Shared, not copied: a whole step's answer is read by
/// every output that reaches its call.
pub fn composed(
    module: &Module,
    comp: usize,
    output: usize,
    operands: usize,
    compute: impl FnOnce() -> InstructionIndexing,
) -> Arc<InstructionIndexing> {
    let Some(memo) = CURRENT.with(|c| c.borrow().clone()) else {
        return Arc::new(compute());
    };
    let key = (std::ptr::from_ref(module) as usize, comp, output, operands);
    if let Some(known) = memo.answers.lock().ok().and_then(|a| a.get(&key).cloned()) {
        return known;
    }
    let refusals = super::nesting::refusals();
    let answer = Arc::new(compute());
    let clean = super::nesting::refusals() == refusals && !crate::budget::exhausted();
    if clean {
        if let Ok(mut answers) = memo.answers.lock() {
            answers.insert(key, answer.clone());
        }
    }
    answer
}

/// The compositions of `m`, which reached output `output` of instruction `node` of
/// computation `comp`, with the instruction's maps to each operand: the current
/// memo's, or `compute()`'s. `compute` also reports whether its answer is clean
/// (the instruction's own maps were not cut short by the budget nor refused by the
/// nesting guard): only a clean answer is kept, as for [`composed`].
pub fn step(
    module: &Module,
    (comp, node, output): (usize, usize, usize),
    m: &OperandMap,
    compute: impl FnOnce() -> (Step, bool),
) -> Step {
    let Some(memo) = CURRENT.with(|c| c.borrow().clone()) else {
        return compute().0;
    };
    let at = (std::ptr::from_ref(module) as usize, comp, node, output);
    let known = memo
        .steps
        .lock()
        .ok()
        .and_then(|s| s.get(&at).and_then(|maps| maps.get(m)).cloned());
    if let Some(known) = known {
        return known;
    }
    let (answer, clean) = compute();
    if clean && !crate::budget::exhausted() {
        if let Ok(mut steps) = memo.steps.lock() {
            steps
                .entry(at)
                .or_default()
                .insert(m.clone(), answer.clone());
        }
    }
    answer
}
