//! Cooperative cancellation and time budgets for long analyses.
//!
//! A language server must be able to stop work nobody waits for any more (the
//! client cancelled the request, or an edit made it stale) and must answer within a
//! bounded time with what it has. The analyses are plain synchronous code, so they
//! cannot be interrupted from outside; instead the work runs under a [`Budget`]
//! ([`Budget::run`] makes it current on this thread) and long loops ask
//! [`exhausted`] between steps: the fusion composition between instructions, the
//! simplifier every thousand rewrite steps, the checks between computations. Once it
//! says yes, each loop stops in a state that is still correct (a map left
//! unsimplified, instructions marked "unknown: stopped"), and the caller learns
//! from [`Budget::cut`] that the answer is partial and why.
//!
//! Without a current budget (the CLI, tests) [`exhausted`] is always false. The
//! check costs a thread-local read and an atomic load, and a clock read every
//! [`CLOCK_EVERY`] calls.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why work stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Its time budget ran out: the answer is partial.
    Deadline,
    /// Nobody wants the answer any more.
    Cancelled,
}

/// A cancellation flag and an optional deadline, shared by everything working for
/// one request (cheap to clone). A child budget ([`Budget::child`]) also stops
/// when its parent does.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    shared: Option<Arc<Shared>>,
}

#[derive(Debug)]
struct Shared {
    /// Distinguishes budgets (see [`Budget::id`]).
    id: u64,
    deadline: Option<Instant>,
    /// How long each part of the work that answers on its own (one computation's
    /// checks) may take, when the caller says (see [`Budget::with_part_limit`]).
    part_limit: Option<Duration>,
    /// 0 while running, else the [`Cut`] (1 deadline, 2 cancelled).
    cut: AtomicU8,
    parent: Option<Arc<Shared>>,
    /// How many more checks the work may make, when counted (see
    /// [`Budget::after_checks`]).
    checks: Option<AtomicU64>,
}

/// The reason an analysis gives for what it did not compute because [`exhausted`]
/// said stop (shown as "unknown indexing: ..." where a map would be).
pub const STOPPED: &str = "not computed: the analysis ran out of its time budget";

/// How many [`exhausted`] calls share one clock read.
pub const CLOCK_EVERY: u32 = 64;

const RUNNING: u8 = 0;
const DEADLINE: u8 = 1;
const CANCELLED: u8 = 2;

impl Shared {
    fn cut(&self) -> Option<Cut> {
        match self.cut.load(Ordering::Relaxed) {
            DEADLINE => Some(Cut::Deadline),
            CANCELLED => Some(Cut::Cancelled),
            _ => None,
        }
    }

    /// Records `cut` unless another one was recorded first.
    fn record(&self, cut: u8) {
        let _ = self
            .cut
            .compare_exchange(RUNNING, cut, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Whether the work should stop; `clock` says whether to read the time.
    fn check(&self, clock: bool) -> bool {
        if self.cut.load(Ordering::Relaxed) != RUNNING {
            return true;
        }
        if let Some(parent) = &self.parent {
            if parent.check(clock) {
                // A cancelled parent cancels; a parent's deadline is a deadline.
                self.record(parent.cut.load(Ordering::Relaxed));
                return true;
            }
        }
        if clock && self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.record(DEADLINE);
            return true;
        }
        if let Some(checks) = &self.checks {
            let left =
                checks.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
            if left.is_err() {
                self.record(DEADLINE);
                return true;
            }
        }
        false
    }
}

impl Budget {
    /// No limit and no way to cancel: work runs to its end.
    pub fn unlimited() -> Budget {
        Budget::default()
    }

    /// Cancellable, with `time` to run (from now) when given.
    pub fn new(time: Option<Duration>) -> Budget {
        Budget::with_part_limit(time, None)
    }

    /// [`Budget::new`], also saying how long each part of the work that answers
    /// on its own may take (see [`Budget::part_limit`]).
    pub fn with_part_limit(time: Option<Duration>, part_limit: Option<Duration>) -> Budget {
        Budget {
            shared: Some(Arc::new(Shared {
                id: next_id(),
                deadline: time.map(|t| Instant::now() + t),
                part_limit,
                cut: AtomicU8::new(RUNNING),
                parent: None,
                checks: None,
            })),
        }
    }

    /// A budget that runs out at its `checks`-th check ([`exhausted`], from any
    /// thread, and the checks of its children): where a deadline cuts work at a
    /// moment that depends on the machine, this cuts it after a given amount of
    /// it, for tests of what a cut answer keeps.
    pub fn after_checks(checks: u64) -> Budget {
        Budget {
            shared: Some(Arc::new(Shared {
                id: next_id(),
                deadline: None,
                part_limit: None,
                cut: AtomicU8::new(RUNNING),
                parent: None,
                checks: Some(AtomicU64::new(checks)),
            })),
        }
    }

    /// How long each part of the work that answers on its own (one computation's
    /// checks, which then report what they found) may take, if the creator said.
    pub fn part_limit(&self) -> Option<Duration> {
        self.shared.as_ref().and_then(|s| s.part_limit)
    }

    /// A budget of `time` (from now) that also stops when this one does: one
    /// part of a larger piece of work with its own limit.
    pub fn child(&self, time: Duration) -> Budget {
        Budget {
            shared: Some(Arc::new(Shared {
                id: next_id(),
                deadline: Some(Instant::now() + time),
                part_limit: None,
                cut: AtomicU8::new(RUNNING),
                parent: self.shared.clone(),
                checks: None,
            })),
        }
    }

    /// A number no other budget of this process has (0 for unlimited ones): a
    /// result cut short by this budget may be reused by the same request only.
    pub fn id(&self) -> u64 {
        self.shared.as_ref().map_or(0, |s| s.id)
    }

    /// True for [`Budget::unlimited`] (no request behind the work: the CLI, tests).
    pub fn is_unlimited(&self) -> bool {
        self.shared.is_none()
    }

    /// Stops the work (from any thread).
    pub fn cancel(&self) {
        if let Some(shared) = &self.shared {
            shared.record(CANCELLED);
        }
    }

    /// What stopped the work, if anything has yet.
    pub fn cut(&self) -> Option<Cut> {
        self.shared.as_ref().and_then(|s| s.cut())
    }

    /// Whether the work should stop now (reads the clock).
    pub fn is_exhausted(&self) -> bool {
        self.shared.as_ref().is_some_and(|s| s.check(true))
    }

    /// Runs `work` with this budget current on this thread (restoring the previous
    /// one after, also when `work` unwinds).
    pub fn run<T>(&self, work: impl FnOnce() -> T) -> T {
        with_current(&CURRENT, self.shared.clone(), work)
    }
}

/// Runs `work` with `value` in the thread-local `current` (the budget, a request's
/// memo: what a request carries down to every thread working for it), restoring
/// the previous value after, also when `work` unwinds.
pub fn with_current<V: 'static, T>(
    current: &'static std::thread::LocalKey<RefCell<Option<Arc<V>>>>,
    value: Option<Arc<V>>,
    work: impl FnOnce() -> T,
) -> T {
    struct Restore<V: 'static> {
        current: &'static std::thread::LocalKey<RefCell<Option<Arc<V>>>>,
        previous: Option<Arc<V>>,
    }
    impl<V: 'static> Drop for Restore<V> {
        fn drop(&mut self) {
            let previous = self.previous.take();
            self.current.with(|c| *c.borrow_mut() = previous);
        }
    }
    let previous = current.with(|c| c.replace(value));
    let _restore = Restore { current, previous };
    work()
}

fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

/// The budget current on this thread (to carry it into other threads, e.g. rayon
/// tasks: `let b = budget::current(); par_iter().map(|x| b.run(|| ...))`).
pub fn current() -> Budget {
    Budget {
        shared: CURRENT.with(|c| c.borrow().clone()),
    }
}

/// Whether the current work should stop (see the module docs). Always false when
/// no budget is current.
pub fn exhausted() -> bool {
    CURRENT.with(|c| match &*c.borrow() {
        None => false,
        Some(shared) => {
            let calls = CALLS.with(|n| {
                let next = n.get().wrapping_add(1);
                n.set(next);
                next
            });
            shared.check(calls.is_multiple_of(CLOCK_EVERY))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_budget_nothing_is_ever_exhausted() {
        assert!((0..1000).all(|_| !exhausted()));
        let unlimited = Budget::unlimited();
        assert!(!unlimited.run(|| (0..1000).any(|_| exhausted())));
        assert_eq!(unlimited.cut(), None);
    }

    #[test]
    fn cancelling_from_another_thread_stops_the_work() {
        let budget = Budget::new(None);
        let canceller = budget.clone();
        let worker = std::thread::spawn(move || {
            budget.run(|| {
                let mut steps = 0u64;
                while !exhausted() {
                    steps += 1;
                    std::hint::spin_loop();
                }
                (steps, budget.cut())
            })
        });
        std::thread::sleep(Duration::from_millis(20));
        canceller.cancel();
        let (steps, cut) = worker.join().unwrap();
        assert!(steps > 0);
        assert_eq!(cut, Some(Cut::Cancelled));
        // Outside `run` the thread has no budget again.
        assert!(!exhausted());
    }

    #[test]
    fn a_deadline_stops_the_work_soon_after_it_passes() {
        let budget = Budget::new(Some(Duration::from_millis(30)));
        let started = Instant::now();
        budget.run(|| while !exhausted() {});
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(30), "{took:?}");
        assert!(took < Duration::from_millis(500), "{took:?}");
        assert_eq!(budget.cut(), Some(Cut::Deadline));
    }

    #[test]
    fn a_child_stops_with_its_parent_and_by_itself() {
        let parent = Budget::new(None);
        let child = parent.child(Duration::from_secs(60));
        assert!(!child.is_exhausted());
        parent.cancel();
        assert!(child.is_exhausted());
        assert_eq!(child.cut(), Some(Cut::Cancelled));

        let parent = Budget::new(None);
        let child = parent.child(Duration::ZERO);
        assert!(child.is_exhausted());
        assert_eq!(child.cut(), Some(Cut::Deadline));
        assert_eq!(parent.cut(), None, "a child's deadline is its own");
    }

    #[test]
    fn a_counted_budget_runs_out_at_its_last_check_and_cuts_its_children() {
        let budget = Budget::after_checks(100);
        let checks = budget.run(|| (0..1000).take_while(|_| !exhausted()).count());
        assert_eq!(checks, 100);
        assert_eq!(budget.cut(), Some(Cut::Deadline));
        let parent = Budget::after_checks(3);
        let child = parent.child(Duration::from_secs(60));
        let checks = child.run(|| (0..1000).take_while(|_| !exhausted()).count());
        assert_eq!(checks, 3);
        assert_eq!(child.cut(), Some(Cut::Deadline));
    }

    #[test]
    fn budgets_nest_and_are_restored_after_a_panic() {
        let outer = Budget::new(None);
        let inner = Budget::new(None);
        inner.cancel();
        outer.run(|| {
            assert!(!exhausted());
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                inner.run(|| {
                    assert!(exhausted());
                    panic!("inside");
                })
            }));
            assert!(unwound.is_err());
            assert!(!exhausted(), "the outer budget is current again");
        });
    }
}
