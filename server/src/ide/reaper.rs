//! Freeing old versions off the request path, and giving what was freed back.
//!
//! When an edit replaces a document's version, or a newer snapshot replaces an older
//! one, the last reference to the old one may drop wherever that happens: in the
//! document actor, or in a request handler. Freeing a large version (its units, caches,
//! analysis views) takes milliseconds and would delay the edit or the request that
//! happened to drop it. Values handed to [`release`] are dropped on a thread of their own.
//!
//! That thread frees into memory other threads allocated. A thread-caching allocator
//! (the binary's mimalloc) notes such a free in the page of the thread that allocated
//! it, and that thread only looks again at its full pages when it collects: a hover
//! thread that filled pages with a version's analysis views, then sat idle, kept them
//! resident after the version was dropped, and each edit's version left a little more
//! (on a 58 MiB dump, resident memory climbed 0.2-0.5 MiB a version with the live heap
//! flat). So the threads that do the server's work call [`give_back_here`] at the end
//! of each job, which runs what the binary installed with [`set_give_back`].

use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, OnceLock};

type Garbage = Box<dyn Send>;

fn sender() -> &'static Mutex<Sender<Garbage>> {
    static SENDER: OnceLock<Mutex<Sender<Garbage>>> = OnceLock::new();
    SENDER.get_or_init(|| {
        let (sender, receiver) = mpsc::channel::<Garbage>();
        std::thread::Builder::new()
            .name("hlo-lsp-reaper".into())
            .spawn(move || {
                for garbage in receiver {
                    drop(garbage);
                }
            })
            .expect("starting the reaper thread");
        Mutex::new(sender)
    })
}

/// What [`give_back_here`] runs: the binary's allocator's collection of the calling
/// thread's pages (main.rs). Unset (the library's tests, other embedders), it does nothing.
static GIVE_BACK: OnceLock<fn()> = OnceLock::new();

/// Installs how a thread returns the memory freed in its pages (see the module docs);
/// the first installation stays.
pub fn set_give_back(give_back: fn()) {
    let _ = GIVE_BACK.set(give_back);
}

/// How often one thread gives back at most. Pages given back are faulted in again
/// when the thread allocates next: giving back after every edit's jobs cost an edit of
/// a 58 MiB dump about 1 ms, for memory that comes back by the next give-back anyway.
pub const GIVE_BACK_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// Returns to the system what other threads freed in the pages this thread allocated
/// (see the module docs), unless this thread did so in the last [`GIVE_BACK_EVERY`]:
/// for the end of a job, not for a hot path (it visits every page the thread owns).
pub fn give_back_here() {
    use std::cell::Cell;
    use std::time::Instant;
    thread_local! {
        static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    let Some(give_back) = GIVE_BACK.get() else {
        return;
    };
    let now = Instant::now();
    if LAST
        .get()
        .is_some_and(|last| now.duration_since(last) < GIVE_BACK_EVERY)
    {
        return;
    }
    give_back();
    LAST.set(Some(now));
}

/// Drops `value` on the reaper thread (or here, if that thread is gone).
pub fn release<T: Send + 'static>(value: T) {
    let garbage: Garbage = Box::new(value);
    let lock = sender().lock();
    if let Ok(sender) = lock {
        if let Err(returned) = sender.send(garbage) {
            drop(returned.0);
        }
    }
}

/// A give-back for tests that records the threads it ran on.
#[cfg(test)]
pub(crate) mod recording {
    use std::sync::Mutex;
    use std::thread::ThreadId;

    static GAVE_BACK: Mutex<Vec<ThreadId>> = Mutex::new(Vec::new());

    fn record() {
        let mut gave = GAVE_BACK.lock().unwrap_or_else(|p| p.into_inner());
        gave.push(std::thread::current().id());
    }

    /// Installs the recording give-back (for the whole test binary).
    pub fn install() {
        super::set_give_back(record);
    }

    /// How many times `thread` gave back so far.
    pub fn times(thread: ThreadId) -> usize {
        let gave = GAVE_BACK.lock().unwrap_or_else(|p| p.into_inner());
        gave.iter().filter(|t| **t == thread).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_thread_gives_back_at_most_once_in_the_interval() {
        recording::install();
        let thread = std::thread::spawn(|| {
            let me = std::thread::current().id();
            give_back_here();
            give_back_here();
            let soon = recording::times(me);
            std::thread::sleep(GIVE_BACK_EVERY + std::time::Duration::from_millis(20));
            give_back_here();
            (soon, recording::times(me))
        });
        assert_eq!(thread.join().unwrap(), (1, 2));
    }

    #[test]
    fn released_values_are_dropped_on_another_thread() {
        struct Probe(Arc<Mutex<Option<std::thread::ThreadId>>>);
        impl Drop for Probe {
            fn drop(&mut self) {
                *self.0.lock().unwrap() = Some(std::thread::current().id());
            }
        }
        let seen = Arc::new(Mutex::new(None));
        release(Probe(seen.clone()));
        for _ in 0..500 {
            if seen.lock().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let dropped_on = seen.lock().unwrap().expect("dropped");
        assert_ne!(dropped_on, std::thread::current().id());
    }
}
