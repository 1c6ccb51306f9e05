//! Threads for the checks behind diagnostics.
//!
//! Parsing and model building split their work over rayon's global pool in
//! short jobs. A computation's checks can run for as long as its time budget
//! (seconds, or minutes when a user raises it). On rayon's global pool they
//! would hold its few threads, and opening or editing any other document would
//! wait for them; on one shared pool of their own, a slow document's checks
//! would still hold back every other document's diagnostics. So each run of
//! checks gets threads of its own (as many as cores), which the system shares
//! fairly with everything else: starting a few threads costs well under a
//! millisecond, against checks that run after a quiet period of edits.

/// Runs `work` on threads of its own (its parallel iterators stay on them)
/// under the caller's budget, and waits for it. Runs it on the calling thread
/// when threads cannot be started.
pub fn run_checks<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let budget = crate::budget::current();
    match rayon::ThreadPoolBuilder::new()
        .thread_name(|k| format!("hlo-lsp-checks-{k}"))
        .build()
    {
        Ok(pool) => pool.install(|| budget.run(work)),
        Err(error) => {
            tracing::warn!("checking on one thread: {error}");
            work()
        }
    }
}

/// How much lower than the server's other threads the background threads run
/// (a `nice` increment): under Linux's scheduler a thread at +10 gets about a
/// tenth of a core that a thread at 0 also wants.
const BACKGROUND_NICENESS: i32 = 10;

/// Runs `work` on the background threads, and waits for it: answers nobody is
/// waiting for yet (the memory estimate of a version whose diagnostics are out).
/// They run at a lower priority, so that on a machine with few cores a hover or the
/// next edit's checks, which someone is waiting for, take the cores first. Runs it
/// on the calling thread when the threads cannot be started.
pub fn run_in_background<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    let pool = POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|k| format!("hlo-lsp-background-{k}"))
            .start_handler(|_| lower_this_thread_priority())
            .build()
            .map_err(|error| tracing::warn!("background answers on the caller's thread: {error}"))
            .ok()
    });
    let budget = crate::budget::current();
    match pool {
        Some(pool) => {
            let done = pool.install(|| budget.run(work));
            // Each thread returns what the reaper freed in its pages since the last
            // answers (a dropped version's estimate: `super::reaper`).
            pool.broadcast(|_| super::reaper::give_back_here());
            done
        }
        None => work(),
    }
}

/// Lowers the calling thread's scheduling priority by [`BACKGROUND_NICENESS`]
/// (Linux: `setpriority` applies to one thread when given its id; elsewhere
/// nothing is done and the threads share the cores evenly): for threads that do
/// work nobody waits for (the background answers, the search for a profile).
pub fn lower_this_thread_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain system calls with no pointers; a failure leaves the
        // priority as it was.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            libc::setpriority(libc::PRIO_PROCESS, tid, now + BACKGROUND_NICENESS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_background_thread_gives_back_after_the_work() {
        crate::ide::reaper::recording::install();
        let threads = run_in_background(|| rayon::broadcast(|_| std::thread::current().id()));
        assert!(!threads.is_empty());
        for thread in threads {
            assert!(
                crate::ide::reaper::recording::times(thread) > 0,
                "background thread {thread:?} kept what was freed in its pages"
            );
        }
    }
}
