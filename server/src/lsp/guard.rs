//! The panic guard: every request's work runs on a blocking thread under
//! `catch_unwind`. A bug in one request becomes an error answer for that request and
//! the server keeps serving (tower-lsp itself would re-panic on a panicked handler).

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use tower_lsp_server::jsonrpc::{Error, ErrorCode};

use crate::budget::Budget;

/// Runs `work` off the async runtime; a panic becomes an `InternalError` naming `what`.
/// The work is cancelled (see [`crate::budget`]) when this future is dropped first.
pub async fn guarded<T, F>(what: &'static str, work: F) -> Result<T, Error>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    guarded_within(what, Budget::new(None), work).await
}

/// [`guarded`] under `budget`, which is current while `work` runs and is
/// cancelled if this future is dropped before the work ends (tower-lsp drops a
/// request's future on `$/cancelRequest`, or when the client goes away).
pub async fn guarded_within<T, F>(what: &'static str, budget: Budget, work: F) -> Result<T, Error>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let mut cancel = CancelOnDrop(Some(budget.clone()));
    let (answer, answered) = tokio::sync::oneshot::channel();
    let _running = tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| budget.run(work)));
        if let Some(cut) = budget.cut() {
            // Tests read this line to see that cancelled work really stopped.
            tracing::info!("{what} stopped ({cut:?}) after {:?}", started.elapsed());
        }
        // The answer goes first; then this thread returns what the reaper freed in
        // its pages meanwhile (`ide::reaper`), off the request's time.
        let _ = answer.send(outcome);
        crate::ide::reaper::give_back_here();
    });
    let outcome = answered.await;
    cancel.0 = None;
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(payload)) => Err(internal_error(what, &panic_message(payload.as_ref()))),
        Err(_) => Err(internal_error(what, "the work ended without an answer")),
    }
}

/// Cancels a budget when dropped while armed: the request's future went away
/// before the work ended, so nobody waits for it.
struct CancelOnDrop(Option<Budget>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(budget) = &self.0 {
            budget.cancel();
        }
    }
}

/// Like [`guarded`] for synchronous callers (the document actor).
pub fn guarded_sync<T>(what: &'static str, work: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(work)).map_err(|payload| {
        let message = panic_message(payload.as_ref());
        tracing::error!("{what} panicked: {message}");
        message
    })
}

fn internal_error(what: &str, message: &str) -> Error {
    tracing::error!("{what} panicked: {message}");
    Error {
        code: ErrorCode::InternalError,
        message: format!("internal error in {what}: {message}").into(),
        data: None,
    }
}

/// The text of a panic payload (`panic!` with a literal or a formatted message).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_panicking_request_becomes_an_error_and_the_next_one_runs() {
        let error = guarded("hover", || -> i32 { panic!("boom {}", 7) })
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::InternalError);
        assert!(error.message.contains("hover") && error.message.contains("boom 7"));
        assert_eq!(guarded("hover", || 41 + 1).await.unwrap(), 42);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn the_thread_that_did_the_work_gives_back_after_answering() {
        crate::ide::reaper::recording::install();
        let worker = guarded("hover", || std::thread::current().id())
            .await
            .unwrap();
        let gave_back = || crate::ide::reaper::recording::times(worker);
        // The answer comes before the give-back: wait for it a little.
        for _ in 0..500 {
            if gave_back() > 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(gave_back() > 0, "the worker never gave back");
        assert_ne!(worker, std::thread::current().id());
    }

    #[test]
    fn synchronous_guard_reports_the_message() {
        assert_eq!(
            guarded_sync("open", || -> () { panic!("bad") }),
            Err("bad".into())
        );
        assert_eq!(guarded_sync("open", || 3), Ok(3));
    }
}
