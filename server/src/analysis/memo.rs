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
//! Only answers that do not depend on how they were reached are kept: one that a
//! time budget cut short, or in which the nesting guard refused a computation
//! ([`super::nesting`]: a recursive call is refused or not depending on what is
//! being composed around it), is recomputed the next time it is asked.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use super::graph::Module;
use super::operand_indexing::InstructionIndexing;

/// The key of one answer: the module (its address: views of different modules
/// may share a thread), the called computation, the output, the operand count.
type Key = (usize, usize, usize, usize);

/// The shared answers of one request.
#[derive(Default)]
pub struct Memo {
    answers: Mutex<FxHashMap<Key, Arc<InstructionIndexing>>>,
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
/// on how it was reached).
pub fn composed(
    module: &Module,
    comp: usize,
    output: usize,
    operands: usize,
    compute: impl FnOnce() -> InstructionIndexing,
) -> InstructionIndexing {
    let Some(memo) = CURRENT.with(|c| c.borrow().clone()) else {
        return compute();
    };
    let key = (std::ptr::from_ref(module) as usize, comp, output, operands);
    if let Some(known) = memo.answers.lock().ok().and_then(|a| a.get(&key).cloned()) {
        return (*known).clone();
    }
    let refusals = super::nesting::refusals();
    let answer = compute();
    let clean = super::nesting::refusals() == refusals && !crate::budget::exhausted();
    if clean {
        if let Ok(mut answers) = memo.answers.lock() {
            answers.insert(key, Arc::new(answer.clone()));
        }
    }
    answer
}
