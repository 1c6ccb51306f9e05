//! Values of a snapshot computed once, on first use, under request budgets.
//!
//! A snapshot's diagnostics, MLIR analysis and fused maps are computed by whichever
//! request (or diagnostics run) first needs them, under that request's
//! [`crate::budget`]. A value the budget cut short (cancelled, out of time) is an
//! answer for that request only; the next one computes it again. While one caller
//! computes, the others wait for it instead of doing the same work beside it (an
//! editor asks for code actions on every cursor move, each of which needs the
//! diagnostics a 50 MB document takes seconds to check), but they keep watching
//! their own budget: a waiter that is cancelled or out of time stops waiting and
//! computes with what little budget it has left, which ends at once.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How often a waiting caller looks at its own budget.
const WAIT_STEP: Duration = Duration::from_millis(10);

/// A computed value, and the budget that cut it short if one did.
#[derive(Debug)]
struct Partial<T> {
    value: Arc<T>,
    cut_by: Option<u64>,
}

impl<T> Partial<T> {
    /// `value`, just computed under the current budget.
    fn of(value: T) -> Self {
        let budget = crate::budget::current();
        Self {
            value: Arc::new(value),
            cut_by: budget.cut().map(|_| budget.id()),
        }
    }

    /// The value, if the current request may use it.
    fn usable(&self) -> Option<Arc<T>> {
        match self.cut_by {
            Some(id) if id != crate::budget::current().id() => None,
            _ => Some(self.value.clone()),
        }
    }
}

#[derive(Debug)]
struct State<T> {
    value: Option<Partial<T>>,
    /// Someone is computing the value.
    computing: bool,
}

/// A value computed once on first use (see the module docs).
#[derive(Debug)]
pub struct Memo<T> {
    state: Mutex<State<T>>,
    computed: Condvar,
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                value: None,
                computing: false,
            }),
            computed: Condvar::new(),
        }
    }
}

/// Clears the computing mark when the computation ends, also by a panic.
struct Computing<'m, T>(&'m Memo<T>);

impl<T> Drop for Computing<'_, T> {
    fn drop(&mut self) {
        lock(&self.0.state).computing = false;
        self.0.computed.notify_all();
    }
}

impl<T: Send + Sync + 'static> Memo<T> {
    /// The value, if one is stored that the current request may use (nothing is
    /// computed, nor waited for).
    pub fn get(&self) -> Option<Arc<T>> {
        lock(&self.state).value.as_ref().and_then(Partial::usable)
    }

    /// The value: stored, computed by another caller meanwhile, or by `compute`.
    pub fn get_or_compute(&self, compute: impl FnOnce() -> T) -> Arc<T> {
        let mut state = lock(&self.state);
        loop {
            if let Some(value) = state.value.as_ref().and_then(Partial::usable) {
                return value;
            }
            if !state.computing || crate::budget::current().is_exhausted() {
                break;
            }
            state = match self.computed.wait_timeout(state, WAIT_STEP) {
                Ok((state, _)) => state,
                Err(poison) => poison.into_inner().0,
            };
        }
        let mark = !state.computing;
        state.computing = true;
        drop(state);
        let computing = mark.then_some(Computing(self));
        let computed = Partial::of(compute());
        let value = computed.value.clone();
        let mut state = lock(&self.state);
        // A cut value does not evict another's (requests would take turns
        // recomputing); a complete one replaces anything.
        if state.value.is_none() || computed.cut_by.is_none() {
            let old = state.value.replace(computed);
            super::reaper::release(old);
        }
        drop(state);
        drop(computing);
        value
    }
}

/// Locks ignoring poison: a panicking request is caught and must not wedge the server.
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Budget;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    #[test]
    fn callers_at_once_compute_once() {
        let memo = Arc::new(Memo::<u64>::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let callers: Vec<_> = (0..4)
            .map(|_| {
                let (memo, runs) = (memo.clone(), runs.clone());
                std::thread::spawn(move || {
                    Budget::new(None).run(|| {
                        *memo.get_or_compute(|| {
                            runs.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(100));
                            42
                        })
                    })
                })
            })
            .collect();
        for caller in callers {
            assert_eq!(caller.join().unwrap(), 42);
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_cut_value_serves_its_own_request_only() {
        let memo = Memo::<&str>::default();
        let cut = Budget::new(None);
        cut.cancel();
        assert_eq!(*cut.run(|| memo.get_or_compute(|| "partial")), "partial");
        assert_eq!(*cut.run(|| memo.get_or_compute(|| "again")), "partial");
        let next = Budget::new(None);
        assert_eq!(*next.run(|| memo.get_or_compute(|| "whole")), "whole");
        assert_eq!(*cut.run(|| memo.get_or_compute(|| "later")), "whole");
    }

    #[test]
    fn a_waiter_out_of_budget_stops_waiting() {
        let memo = Arc::new(Memo::<&str>::default());
        let slow = {
            let memo = memo.clone();
            std::thread::spawn(move || {
                *Budget::new(None).run(|| {
                    memo.get_or_compute(|| {
                        std::thread::sleep(Duration::from_millis(500));
                        "slow"
                    })
                })
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        let waiter = Budget::new(Some(Duration::from_millis(50)));
        let got = *waiter.run(|| memo.get_or_compute(|| "own"));
        assert_eq!(got, "own");
        assert!(started.elapsed() < Duration::from_millis(400));
        assert_eq!(slow.join().unwrap(), "slow");
        // The whole value is kept; the waiter's (cut by its deadline) was not.
        assert_eq!(*memo.get_or_compute(|| "never"), "slow");
    }
}
