//! Messages from synchronous code (the document actor, the log forwarder) to the
//! client, delivered by one async task in the order they were posted: a progress
//! `end` never overtakes its `begin`, and posting never blocks the poster.
//! Notifications rendered here as JSON (diagnostics) go to [`Output`] directly.
//!
//! Every notification (log, progress) is written on [`Output`] as a frame of its own,
//! never through tower-lsp's `Client`: the client's channel closes at `exit`, a
//! notification sent through it after that fails with an `ERROR failed to send
//! notification` event, and the log forwarder ([`super::logging`]) posted that event
//! here again, which failed again: a thousand lines on stderr before the process
//! ended. What is sent on a closed output is dropped silently. Only the request
//! that creates a progress token (it needs the client's answer) uses the client.

use tokio::sync::mpsc;
use tower_lsp_server::ls_types::{
    notification, LogMessageParams, MessageType, NumberOrString, ProgressParams,
    ProgressParamsValue, ProgressToken, ShowMessageParams, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressEnd, WorkDoneProgressReport,
};
use tower_lsp_server::Client;

use super::output::{Body, Output};

/// One message for the client.
#[derive(Debug)]
pub enum Outgoing {
    Log(MessageType, String),
    /// `window/showMessage`: what the user must see once (a profile that cannot be
    /// read).
    Show(MessageType, String),
    /// A notification already rendered as JSON (see [`super::rendered`]).
    Rendered(Body),
    /// Ask the client to create `token`, then send `begin`.
    ProgressBegin {
        token: String,
        title: String,
    },
    ProgressReport {
        token: String,
        message: String,
        percentage: u32,
    },
    ProgressEnd {
        token: String,
        message: String,
    },
    /// Ask the client to request its code lenses again (new pass history lenses).
    RefreshCodeLenses,
}

/// The posting side; clone freely.
#[derive(Debug, Clone)]
pub struct Outbox {
    sender: mpsc::UnboundedSender<Outgoing>,
}

/// Where messages go: tower-lsp's client for typed messages, the output stream
/// for rendered ones.
struct Destination {
    client: Client,
    output: Output,
}

impl Outbox {
    /// Starts the delivery task on the current runtime.
    pub fn start(client: Client, output: Output) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        tokio::spawn(deliver(Destination { client, output }, receiver));
        Self { sender }
    }

    /// Posts a message; dropped silently once the server is shutting down.
    pub fn post(&self, message: Outgoing) {
        let _ = self.sender.send(message);
    }
}

async fn deliver(destination: Destination, mut receiver: mpsc::UnboundedReceiver<Outgoing>) {
    let client = &destination.client;
    // Tokens the client refused to create: their report/end are dropped too.
    let mut refused: std::collections::HashSet<String> = Default::default();
    while let Some(message) = receiver.recv().await {
        match message {
            Outgoing::Log(kind, text) => notify::<notification::LogMessage>(
                &destination.output,
                LogMessageParams {
                    typ: kind,
                    message: text,
                },
            ),
            Outgoing::Show(kind, text) => notify::<notification::ShowMessage>(
                &destination.output,
                ShowMessageParams {
                    typ: kind,
                    message: text,
                },
            ),
            Outgoing::Rendered(body) => destination.output.send_owned(body),
            Outgoing::ProgressBegin { token, title } => {
                let id = NumberOrString::String(token.clone());
                if client.create_work_done_progress(id).await.is_err() {
                    refused.insert(token);
                    continue;
                }
                let begin = WorkDoneProgress::Begin(WorkDoneProgressBegin {
                    title,
                    cancellable: Some(false),
                    message: None,
                    percentage: Some(0),
                });
                send_progress(&destination.output, token, begin);
            }
            Outgoing::ProgressReport {
                token,
                message,
                percentage,
            } if !refused.contains(&token) => {
                let report = WorkDoneProgress::Report(WorkDoneProgressReport {
                    cancellable: Some(false),
                    message: Some(message),
                    percentage: Some(percentage),
                });
                send_progress(&destination.output, token, report);
            }
            Outgoing::ProgressEnd { token, message } if !refused.remove(&token) => {
                let end = WorkDoneProgress::End(WorkDoneProgressEnd {
                    message: Some(message),
                });
                send_progress(&destination.output, token, end);
            }
            Outgoing::ProgressReport { .. } | Outgoing::ProgressEnd { .. } => {}
            Outgoing::RefreshCodeLenses => {
                // Not awaited here: the answer must not hold up later messages.
                let client = client.clone();
                tokio::spawn(async move { client.code_lens_refresh().await });
            }
        }
    }
}

fn send_progress(output: &Output, token: String, value: WorkDoneProgress) {
    let params = ProgressParams {
        token: ProgressToken::String(token),
        value: ProgressParamsValue::WorkDone(value),
    };
    notify::<notification::Progress>(output, params);
}

/// Writes notification `N` on the output (see the module docs for why not the client).
fn notify<N: notification::Notification>(output: &Output, params: N::Params) {
    let message = serde_json::json!({ "jsonrpc": "2.0", "method": N::METHOD, "params": params });
    match serde_json::to_vec(&message) {
        Ok(body) => output.send(&body),
        Err(error) => tracing::debug!("cannot serialize {}: {error}", N::METHOD),
    }
}
