//! `$/progress` for work the user waits on (opening a large dump).
//!
//! Whether to report is decided up front from the input size rather than after a
//! timer, so small files never cost a `window/workDoneProgress/create` round trip
//! and the behaviour is deterministic for tests.

use std::sync::atomic::{AtomicU64, Ordering};

use super::outbox::{Outbox, Outgoing};

/// Documents at least this large report progress while they are opened.
pub const LARGE_DOCUMENT_BYTES: usize = 1 << 20;

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// A progress report in flight; ends (with its message) when dropped, so a panic in
/// the work still closes the client's progress bar.
pub struct ProgressTask {
    outbox: Outbox,
    token: String,
    end_message: String,
}

impl ProgressTask {
    /// Starts a report when `enabled` (the client supports it and the work is large).
    pub fn begin(outbox: &Outbox, enabled: bool, title: String) -> Option<Self> {
        if !enabled {
            return None;
        }
        let token = format!("hlo-lsp/{}", NEXT_TOKEN.fetch_add(1, Ordering::Relaxed));
        outbox.post(Outgoing::ProgressBegin {
            token: token.clone(),
            title,
        });
        Some(Self {
            outbox: outbox.clone(),
            token,
            end_message: "done".into(),
        })
    }

    pub fn report(&self, message: impl Into<String>, percentage: u32) {
        self.outbox.post(Outgoing::ProgressReport {
            token: self.token.clone(),
            message: message.into(),
            percentage: percentage.min(100),
        });
    }

    pub fn set_end_message(&mut self, message: impl Into<String>) {
        self.end_message = message.into();
    }
}

impl Drop for ProgressTask {
    fn drop(&mut self) {
        self.outbox.post(Outgoing::ProgressEnd {
            token: std::mem::take(&mut self.token),
            message: std::mem::take(&mut self.end_message),
        });
    }
}
