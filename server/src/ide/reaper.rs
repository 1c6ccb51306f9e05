//! Freeing old versions off the request path.
//!
//! When an edit replaces a document's version, or a newer snapshot replaces an older
//! one, the last reference to the old one may drop wherever that happens: in the
//! document actor, or in a request handler. Freeing a large version (its units, caches,
//! analysis views) takes milliseconds and would delay the edit or the request that
//! happened to drop it. Values handed to [`release`] are dropped on a thread of their own.

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

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
