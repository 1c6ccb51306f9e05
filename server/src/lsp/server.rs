//! The `LanguageServer` implementation: capabilities, settings and the dispatch of
//! each request to its feature module, on a snapshot, under the panic guard.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use super::guard::guarded;
use super::position::PositionEncoding;
use super::snapshot::Snapshot;
use super::workspace::{write, Workspace};

/// The language server's request handlers.
pub struct Backend {
    client: Client,
    workspace: Arc<Workspace>,
}

impl Backend {
    pub fn new(client: Client, workspace: Arc<Workspace>) -> Self {
        Self { client, workspace }
    }

    /// Runs `work` on the current snapshot of `uri` under the panic guard, and answers
    /// `ContentModified` if the document changed while it ran.
    async fn on_document<T, F>(&self, what: &'static str, uri: &Uri, work: F) -> Result<T>
    where
        F: FnOnce(&Snapshot, PositionEncoding) -> T + Send + 'static,
        T: Send + 'static,
    {
        let snapshot = self
            .workspace
            .snapshot(uri)
            .ok_or_else(|| unknown_document(uri))?;
        let encoding = self.workspace.encoding();
        let answer = {
            let snapshot = snapshot.clone();
            guarded(what, move || work(&snapshot, encoding)).await?
        };
        if self.workspace.is_stale(&snapshot) {
            return Err(Error::content_modified());
        }
        Ok(answer)
    }

    fn apply_settings(&self, value: &serde_json::Value) {
        let warnings = write(&self.workspace.settings).apply(value);
        for warning in warnings {
            tracing::warn!("{warning}");
        }
    }
}

/// Params of [`DOCUMENT_TEXT`].
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentTextParams {
    pub text_document: TextDocumentIdentifier,
}

/// Answer of [`DOCUMENT_TEXT`].
#[derive(Debug, serde::Serialize)]
pub struct DocumentText {
    pub version: i32,
    pub text: String,
}

/// Custom request returning the server's copy of a document: lets users and tests
/// check that incremental sync reproduced the editor's text exactly.
pub const DOCUMENT_TEXT: &str = "hlo-lsp/documentText";

impl Backend {
    pub async fn document_text(&self, params: DocumentTextParams) -> Result<DocumentText> {
        let uri = params.text_document.uri;
        self.on_document("documentText", &uri, |snapshot, _| DocumentText {
            version: snapshot.version,
            text: snapshot.text(),
        })
        .await
    }
}

/// Params of the stand-ins for malformed messages (see [`super::wire`]).
#[derive(Debug, serde::Deserialize)]
pub struct InvalidMessageParams {
    pub reason: String,
}

impl Backend {
    /// Answers a malformed request (whose id could be recovered) with an error.
    pub async fn invalid_request(&self, params: InvalidMessageParams) -> Result<()> {
        tracing::warn!("invalid request: {}", params.reason);
        Err(Error {
            code: ErrorCode::InvalidRequest,
            message: params.reason.into(),
            data: None,
        })
    }

    /// Logs a malformed message that cannot be answered (no usable id).
    pub async fn invalid_message(&self, params: InvalidMessageParams) {
        tracing::warn!("ignoring invalid message: {}", params.reason);
    }
}

fn unknown_document(uri: &Uri) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: format!("document is not open: {}", uri.as_str()).into(),
        data: None,
    }
}

/// What the server offers.
fn capabilities(encoding: PositionEncoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(encoding.kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            },
        )),
        ..Default::default()
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offered = params
            .capabilities
            .general
            .as_ref()
            .and_then(|general| general.position_encodings.as_deref());
        let encoding = PositionEncoding::negotiate(offered);
        self.workspace.set_encoding(encoding);
        let progress = params
            .capabilities
            .window
            .as_ref()
            .and_then(|window| window.work_done_progress)
            .unwrap_or(false);
        self.workspace
            .client_supports_progress
            .store(progress, Ordering::SeqCst);
        if let Some(options) = &params.initialization_options {
            self.apply_settings(options);
        }
        self.workspace.initialized.store(true, Ordering::SeqCst);
        Ok(InitializeResult {
            capabilities: capabilities(encoding),
            server_info: Some(ServerInfo {
                name: "hlo-lsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        tracing::info!(
            "hlo-lsp {} ready ({:?} positions)",
            env!("CARGO_PKG_VERSION"),
            self.workspace.encoding()
        );
    }

    async fn shutdown(&self) -> Result<()> {
        self.workspace
            .shutdown_requested
            .store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        self.apply_settings(&params.settings);
        let _ = &self.client;
    }
}
