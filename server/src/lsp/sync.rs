//! Ordered text synchronisation.
//!
//! tower-lsp runs handlers concurrently (up to [`super::CONCURRENT_REQUESTS`] at
//! once, polled in no fixed order), so two `didChange` handlers could apply their
//! edits out of order and corrupt the text. Instead, [`Sequencer`] sits in front of
//! the `LspService`: it sees every message in wire order, and hands
//! `didOpen`/`didChange`/`didClose` to the [`DocumentActor`], which gives each open
//! document a worker thread that applies its events one after the other. Each change
//! is thus applied strictly after its predecessor: the client sends versions in
//! increasing order, so wire order is version order, and the worker rejects nothing
//! but logs a warning when a client's versions go backwards. Documents are applied
//! in parallel: opening a 100 MB file does not delay an edit of another.
//!
//! Every other request is held until the text-sync notifications that arrived before
//! it have been applied, those of its own document when it names one (else all), so
//! a hover sent right after an edit sees the edited text and never waits for
//! another document.
//!
//! Settings are ordered the same way ([`SettingsOrder`]): a message read after a
//! `workspace/didChangeConfiguration` runs once those settings are applied, so a
//! formatting request sent right after `format.style` changed uses the new style.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll};

use tower_lsp_server::jsonrpc::{Error, ErrorCode, Request, Response};
use tower_lsp_server::ls_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, Uri,
};
use tower_service::Service;

use super::bulk::Bulk;
use super::diagnostics::DiagnosticsScheduler;
use super::documents::Document;
use super::guard::guarded_sync;
use super::json_answers;
use super::outbox::Outbox;
use super::output::Output;
use super::progress::{ProgressTask, LARGE_DOCUMENT_BYTES};
use super::workspace::Workspace;

/// A text-sync notification with its arrival number.
#[derive(Debug)]
pub enum SyncEvent {
    Open(u64, DidOpenTextDocumentParams),
    Change(u64, DidChangeTextDocumentParams),
    Close(u64, DidCloseTextDocumentParams),
}

impl SyncEvent {
    fn uri(&self) -> &Uri {
        match self {
            Self::Open(_, p) => &p.text_document.uri,
            Self::Change(_, p) => &p.text_document.uri,
            Self::Close(_, p) => &p.text_document.uri,
        }
    }

    fn method(&self) -> &'static str {
        match self {
            Self::Open(..) => "didOpen",
            Self::Change(..) => "didChange",
            Self::Close(..) => "didClose",
        }
    }

    fn sequence(&self) -> u64 {
        match self {
            Self::Open(sequence, _) | Self::Change(sequence, _) | Self::Close(sequence, _) => {
                *sequence
            }
        }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The service in front of tower-lsp's `LspService` (see the module docs).
pub struct Sequencer<S> {
    inner: S,
    workspace: Arc<Workspace>,
    events: mpsc::Sender<SyncEvent>,
    /// The texts the wire filter took out of large notifications.
    bulk: Arc<Bulk>,
    /// Closed while `initialize` is answered: nothing after it is read before.
    initializing: Arc<Gate>,
    /// Where the answers written as JSON text go (see [`super::json_answers`]).
    output: Output,
    /// The `workspace/didChangeConfiguration` notifications read and applied.
    settings: Arc<SettingsOrder>,
}

const CHANGE_CONFIGURATION: &str = "workspace/didChangeConfiguration";

/// Counts the `workspace/didChangeConfiguration` notifications read and those whose
/// handler has run. Without it, the handler of one and that of the request after it
/// run concurrently (tower-lsp polls them in no fixed order), and when both wait for
/// the same edit (a settings change names no document, so it waits for all) they are
/// released together: the request could read the settings before the change.
#[derive(Debug)]
struct SettingsOrder {
    read: std::sync::atomic::AtomicU64,
    applied: tokio::sync::watch::Sender<u64>,
}

impl Default for SettingsOrder {
    fn default() -> Self {
        Self {
            read: Default::default(),
            applied: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl SettingsOrder {
    /// Numbers a settings change as it is read.
    fn arrive(&self) -> u64 {
        self.read.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The number of the last settings change read.
    fn latest(&self) -> u64 {
        self.read.load(Ordering::SeqCst)
    }

    /// Waits until every settings change up to `number` has been applied.
    async fn wait_applied(&self, number: u64) {
        let mut applied = self.applied.subscribe();
        // The sender lives as long as `self`: this ends only once applied.
        let _ = applied.wait_for(|&n| n >= number).await;
    }
}

/// Marks a settings change applied when its handler is done, or dropped (an `exit`
/// cancels pending handlers): a request waiting for it never waits forever.
struct SettingsApplied(Arc<SettingsOrder>, u64);

impl Drop for SettingsApplied {
    fn drop(&mut self) {
        let number = self.1;
        self.0.applied.send_modify(|n| *n = (*n).max(number));
    }
}

/// Holds the reading of further messages while `initialize` is being answered.
/// tower-lsp marks the server initialized only once the answer is ready, so a
/// client that writes `initialize`, `initialized` and `didOpen` back to back (as
/// some do) would otherwise have its `didOpen` dropped as too early.
#[derive(Debug, Default)]
struct Gate {
    closed: std::sync::atomic::AtomicBool,
    waker: std::sync::Mutex<Option<std::task::Waker>>,
}

impl Gate {
    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    fn open(&self) {
        self.closed.store(false, Ordering::SeqCst);
        if let Some(waker) = super::workspace::lock(&self.waker).take() {
            waker.wake();
        }
    }

    /// Ready when open; else registers `cx` to be woken by [`Self::open`].
    fn poll_open(&self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.closed.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        *super::workspace::lock(&self.waker) = Some(cx.waker().clone());
        if self.closed.load(Ordering::SeqCst) {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// Opens the gate when the `initialize` answer is ready, or if it is dropped.
struct Reopen(Arc<Gate>);

impl Drop for Reopen {
    fn drop(&mut self) {
        self.0.open();
    }
}

impl<S> Sequencer<S> {
    pub fn new(
        inner: S,
        workspace: Arc<Workspace>,
        events: mpsc::Sender<SyncEvent>,
        bulk: Arc<Bulk>,
        output: Output,
    ) -> Self {
        Self {
            inner,
            workspace,
            events,
            bulk,
            initializing: Arc::default(),
            output,
            settings: Arc::default(),
        }
    }

    /// Queues a text-sync notification; gives `request` back when it is not one.
    /// Takes the request by value: a `didOpen` may carry a document of a hundred
    /// megabytes, which is decoded from the message without a copy.
    fn route_text_sync(&self, request: Request) -> Option<Request> {
        let method = request.method();
        if !matches!(
            method,
            "textDocument/didOpen" | "textDocument/didChange" | "textDocument/didClose"
        ) {
            return Some(request);
        }
        let method = method.to_string();
        if !self.workspace.initialized.load(Ordering::SeqCst) {
            tracing::warn!("dropping {method} received before initialize");
            return None;
        }
        let (_, _, params) = request.into_parts();
        let params = params.unwrap_or(serde_json::Value::Null);
        let event = match method.as_str() {
            "textDocument/didOpen" => {
                serde_json::from_value(params).map(|mut p: DidOpenTextDocumentParams| {
                    let text = std::mem::take(&mut p.text_document.text);
                    p.text_document.text = self.bulk.redeem(text);
                    SyncEvent::Open(self.workspace.arrive(&p.text_document.uri), p)
                })
            }
            "textDocument/didChange" => {
                serde_json::from_value(params).map(|mut p: DidChangeTextDocumentParams| {
                    for change in &mut p.content_changes {
                        change.text = self.bulk.redeem(std::mem::take(&mut change.text));
                    }
                    SyncEvent::Change(self.workspace.arrive(&p.text_document.uri), p)
                })
            }
            _ => serde_json::from_value(params).map(|p: DidCloseTextDocumentParams| {
                SyncEvent::Close(self.workspace.arrive(&p.text_document.uri), p)
            }),
        };
        match event {
            Ok(event) => {
                let _ = self.events.send(event);
            }
            Err(error) => tracing::warn!("ignoring {method} with invalid params: {error}"),
        }
        None
    }
}

/// The document a request is about (`params.textDocument.uri`), if it names one.
fn document_of(request: &Request) -> Option<Uri> {
    let uri = request
        .params()?
        .get("textDocument")?
        .get("uri")?
        .as_str()?;
    uri.parse().ok()
}

impl<S> Service<Request> for Sequencer<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if self.initializing.poll_open(cx).is_pending() {
            return Poll::Pending;
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let Some(request) = self.route_text_sync(request) else {
            return Box::pin(async { Ok(None) });
        };
        if let Some(id) = request.id().filter(|_| request.method().starts_with("$/")) {
            // No `$/` request is implemented, and the specification wants an error
            // (tower-lsp drops the answer to any `$/` method it does not know).
            let answer = Response::from_error(id.clone(), Error::method_not_found());
            return Box::pin(async { Ok(Some(answer)) });
        }
        if request.method() == "shutdown" {
            return self.shutdown(request);
        }
        if request.method() == "exit" {
            // tower-lsp closes its client at `exit`: nobody reads the client's log after it.
            super::logging::stop_forwarding();
        }
        if request.method() == "initialize" {
            self.initializing.close();
            let reopen = Reopen(self.initializing.clone());
            let response = self.inner.call(request);
            return Box::pin(async move {
                let answer = response.await;
                drop(reopen);
                answer
            });
        }
        // Only edits of the request's own document are waited for: a request on
        // one file never waits for an edit of another.
        let needed = self.workspace.arrivals(document_of(&request).as_ref());
        let workspace = self.workspace.clone();
        // A settings change waits for those before it; anything else for all read so far.
        let (settings_needed, applies) = if request.method() == CHANGE_CONFIGURATION {
            let number = self.settings.arrive();
            let applied = SettingsApplied(self.settings.clone(), number);
            (number - 1, Some(applied))
        } else {
            (self.settings.latest(), None)
        };
        let settings = self.settings.clone();
        let (request, as_json) = json_answers::reroute(request);
        let output = self.output.clone();
        // The handler's body only runs when this future is first polled, after the wait.
        let response = self.inner.call(request);
        Box::pin(async move {
            workspace.wait_applied(&needed).await;
            settings.wait_applied(settings_needed).await;
            let answer = response.await;
            drop(applies);
            let answer = answer?;
            Ok(if as_json {
                json_answers::deliver(answer, &output)
            } else {
                answer
            })
        })
    }
}

impl<S> Sequencer<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    /// `shutdown`, taken in wire order. tower-lsp runs a handler only when its future
    /// is first polled, and `exit` cancels every pending one: an `exit` read right
    /// after `shutdown` (a client may write both at once) answered the shutdown with
    /// `RequestCancelled` before `Backend::shutdown` ran, and the process ended with
    /// status 1. So the request is recorded here, when read (after `initialize`, as
    /// tower-lsp accepts it), and a cancelled answer becomes the null result the
    /// handler gives; tower-lsp's other answers (a second `shutdown`, one before
    /// `initialize`) pass unchanged, and tower-lsp still rejects what follows.
    fn shutdown(&mut self, request: Request) -> BoxFuture<Result<Option<Response>, S::Error>> {
        if self.workspace.initialized.load(Ordering::SeqCst) {
            self.workspace
                .shutdown_requested
                .store(true, Ordering::SeqCst);
        }
        let response = self.inner.call(request);
        Box::pin(async move {
            let answer = response.await?;
            Ok(answer.map(|answer| match answer.error() {
                Some(e) if e.code == ErrorCode::RequestCancelled => {
                    Response::from_ok(answer.id().clone(), serde_json::Value::Null)
                }
                _ => answer,
            }))
        })
    }
}

/// Routes text-sync events, in arrival order, to one worker thread per open
/// document. Each document's events are applied strictly in order by its worker,
/// and a slow open or edit of one document never delays another's (a hover on a
/// small file does not wait for a 50 MB file opened just before it).
pub struct DocumentActor {
    workspace: Arc<Workspace>,
    outbox: Outbox,
    diagnostics: DiagnosticsScheduler,
    /// The worker of each open document.
    workers: HashMap<Uri, mpsc::Sender<SyncEvent>>,
}

impl DocumentActor {
    /// Starts the routing thread; it ends when every sender is dropped (and each
    /// worker when its document is closed or the router ends).
    pub fn spawn(
        workspace: Arc<Workspace>,
        outbox: Outbox,
        diagnostics: DiagnosticsScheduler,
    ) -> mpsc::Sender<SyncEvent> {
        let (sender, receiver) = mpsc::channel();
        let mut actor = Self {
            workspace,
            outbox,
            diagnostics,
            workers: HashMap::new(),
        };
        std::thread::Builder::new()
            .name("hlo-lsp-documents".into())
            .spawn(move || {
                while let Ok(event) = receiver.recv() {
                    actor.route(event);
                }
            })
            .expect("spawning the document thread");
        sender
    }

    fn route(&mut self, event: SyncEvent) {
        let uri = event.uri().clone();
        if matches!(event, SyncEvent::Open(..)) && !self.workers.contains_key(&uri) {
            let worker = DocumentWorker {
                workspace: self.workspace.clone(),
                outbox: self.outbox.clone(),
                diagnostics: self.diagnostics.clone(),
                document: None,
            };
            self.workers.insert(uri.clone(), worker.spawn());
        }
        let closing = matches!(event, SyncEvent::Close(..));
        let event = match self.workers.get(&uri) {
            Some(worker) => match worker.send(event) {
                Ok(()) => None,
                Err(mpsc::SendError(event)) => Some(event),
            },
            None => Some(event),
        };
        if closing || event.is_some() {
            // The worker applies the close and ends once its queue is empty.
            self.workers.remove(&uri);
        }
        if let Some(event) = event {
            tracing::warn!(
                "{} for a document that is not open: {}",
                event.method(),
                uri.as_str()
            );
            self.workspace.mark_applied(&uri, event.sequence());
        }
    }
}

/// Applies the events of one document (see [`DocumentActor`]).
struct DocumentWorker {
    workspace: Arc<Workspace>,
    outbox: Outbox,
    diagnostics: DiagnosticsScheduler,
    document: Option<Document>,
}

impl DocumentWorker {
    fn spawn(mut self) -> mpsc::Sender<SyncEvent> {
        let (sender, receiver) = mpsc::channel();
        std::thread::Builder::new()
            .name("hlo-lsp-document".into())
            .spawn(move || {
                while let Ok(event) = receiver.recv() {
                    self.handle(event);
                }
            })
            .expect("spawning a document thread");
        sender
    }

    fn handle(&mut self, event: SyncEvent) {
        let sequence = event.sequence();
        let uri = event.uri().clone();
        // A panic while applying one event must not stop text sync for good.
        let _ = guarded_sync("text synchronisation", || self.apply(event));
        self.workspace.mark_applied(&uri, sequence);
        // This thread makes each version; the reaper frees the old ones into its pages.
        crate::ide::reaper::give_back_here();
    }

    fn apply(&mut self, event: SyncEvent) {
        let encoding = self.workspace.encoding();
        match event {
            SyncEvent::Open(sequence, params) => {
                let item = params.text_document;
                let large = item.text.len() >= LARGE_DOCUMENT_BYTES
                    && self
                        .workspace
                        .client_supports_progress
                        .load(Ordering::SeqCst);
                let mut progress = ProgressTask::begin(
                    &self.outbox,
                    large,
                    format!("Opening {}", file_name(item.uri.as_str())),
                );
                let document = Document::new(item.uri.clone(), item.version, &item.text)
                    .with_language(Some(item.language_id.as_str()));
                crate::ide::reaper::release(self.document.replace(document));
                let Some(document) = &self.document else {
                    return;
                };
                let snapshot = document.snapshot_at(sequence);
                if let Some(progress) = progress.as_mut() {
                    progress.set_end_message(format!("{} lines", snapshot.syntax().line_count()));
                }
                self.workspace.publish(snapshot.clone());
                self.diagnostics.schedule(snapshot);
            }
            SyncEvent::Change(sequence, params) => {
                let uri = params.text_document.uri;
                let Some(document) = self.document.as_mut() else {
                    tracing::warn!(
                        "didChange for a document that is not open: {}",
                        uri.as_str()
                    );
                    return;
                };
                let version = params.text_document.version;
                if version <= document.version {
                    tracing::warn!(
                        "{}: version {version} after {}; applying in the order received",
                        uri.as_str(),
                        document.version
                    );
                }
                document.apply_changes(version, params.content_changes, encoding);
                let snapshot = document.snapshot_at(sequence);
                self.workspace.publish(snapshot.clone());
                self.diagnostics.schedule(snapshot);
            }
            SyncEvent::Close(sequence, params) => {
                let uri = params.text_document.uri;
                crate::ide::reaper::release(self.document.take());
                // A later re-open of the same URI has its own worker: leave its
                // snapshot and diagnostics alone.
                self.workspace.remove(&uri, sequence);
                self.diagnostics.clear(uri, sequence);
            }
        }
    }
}

/// The last path segment of a URI, for progress titles.
fn file_name(uri: &str) -> &str {
    uri.rsplit('/').next().unwrap_or(uri)
}
