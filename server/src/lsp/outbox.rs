//! Messages from synchronous code (the document actor, the log forwarder) to the
//! client, delivered by one async task in the order they were posted: a progress
//! `end` never overtakes its `begin`, and posting never blocks the poster.
//! Notifications rendered here as JSON (diagnostics) go to [`Output`] directly.

use tokio::sync::mpsc;
use tower_lsp_server::ls_types::{
    notification, MessageType, NumberOrString, ProgressParams, ProgressParamsValue, ProgressToken,
    WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport,
};
use tower_lsp_server::Client;

use super::output::Output;

/// One message for the client.
#[derive(Debug)]
pub enum Outgoing {
    Log(MessageType, String),
    /// A notification already rendered as JSON (see [`super::rendered`]).
    Rendered(Vec<u8>),
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
            Outgoing::Log(kind, text) => client.log_message(kind, text).await,
            Outgoing::Rendered(body) => destination.output.send(&body),
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
                send_progress(client, token, begin).await;
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
                send_progress(client, token, report).await;
            }
            Outgoing::ProgressEnd { token, message } if !refused.remove(&token) => {
                let end = WorkDoneProgress::End(WorkDoneProgressEnd {
                    message: Some(message),
                });
                send_progress(client, token, end).await;
            }
            Outgoing::ProgressReport { .. } | Outgoing::ProgressEnd { .. } => {}
        }
    }
}

async fn send_progress(client: &Client, token: String, value: WorkDoneProgress) {
    let params = ProgressParams {
        token: ProgressToken::String(token),
        value: ProgressParamsValue::WorkDone(value),
    };
    client
        .send_notification::<notification::Progress>(params)
        .await;
}
