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
