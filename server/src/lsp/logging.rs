//! Logging: `tracing` events go to stderr (never stdout, which carries JSON-RPC) and,
//! from `info` up, to the client's log through `window/logMessage`.
//!
//! The filter comes from `HLO_LSP_LOG` (tracing's env-filter syntax), default `info`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use tower_lsp_server::ls_types::MessageType;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use super::outbox::{Outbox, Outgoing};

/// Where forwarded events go once the server has a client.
static CLIENT_LOG: OnceLock<Outbox> = OnceLock::new();

/// Installs the global subscriber (once; later calls are no-ops).
pub fn init() {
    let filter = EnvFilter::try_from_env("HLO_LSP_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false);
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(ClientLogLayer)
        .try_init();
}

/// Set at `exit`: events are no longer forwarded (see [`stop_forwarding`]).
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Starts forwarding events to the client.
pub fn forward_to_client(outbox: Outbox) {
    let _ = CLIENT_LOG.set(outbox);
}

/// Stops forwarding events to the client (at `exit`, before tower-lsp closes its
/// client): nobody reads the client's log after that, and stderr still has them.
pub fn stop_forwarding() {
    STOPPED.store(true, Ordering::SeqCst);
}

/// Forwards `info`, `warn` and `error` events to `window/logMessage`.
struct ClientLogLayer;

impl<S: Subscriber> Layer<S> for ClientLogLayer {
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        let Some(outbox) = CLIENT_LOG.get().filter(|_| !STOPPED.load(Ordering::SeqCst)) else {
            return;
        };
        let kind = match *event.metadata().level() {
            Level::ERROR => MessageType::ERROR,
            Level::WARN => MessageType::WARNING,
            Level::INFO => MessageType::INFO,
            _ => return,
        };
        let mut message = MessageText::default();
        event.record(&mut message);
        outbox.post(Outgoing::Log(kind, message.0));
    }
}

/// The event's message followed by its other fields as `key=value`.
#[derive(Default)]
struct MessageText(String);

impl Visit for MessageText {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let rest = std::mem::take(&mut self.0);
            let _ = write!(self.0, "{value:?}{rest}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}
