//! The `LanguageServer` implementation: capabilities, settings and the dispatch of
//! each request to its feature module, on a snapshot, under the panic guard.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use super::formatting;
use super::guard::{guarded, guarded_within};
use super::json_answers::Json;
use super::position::PositionEncoding;
use super::semantic_tokens::{self, TokenCache};
use super::settings::Work;
use super::snapshot::Snapshot;
use super::workspace::{write, Workspace};
use super::{
    call_hierarchy, code_actions, commands, handlers, history_command, pass_history, profiles,
};
use crate::budget::Budget;
use crate::hover::Detail;
use crate::ide::history::PassHistory;

/// The language server's request handlers.
pub struct Backend {
    client: Client,
    workspace: Arc<Workspace>,
    tokens: Arc<TokenCache>,
    /// For background work that reports progress (the workspace index).
    outbox: Option<super::outbox::Outbox>,
}

impl Backend {
    pub fn new(client: Client, workspace: Arc<Workspace>) -> Self {
        Self {
            client,
            workspace,
            tokens: Arc::default(),
            outbox: None,
        }
    }

    /// Gives background work (the workspace index) a way to report progress.
    pub fn with_outbox(mut self, outbox: super::outbox::Outbox) -> Self {
        self.outbox = Some(outbox);
        self
    }

    /// Runs `work` on the current snapshot of `uri` under the panic guard, and answers
    /// `ContentModified` if the document changed while it ran.
    async fn on_document<T, F>(&self, what: Request, uri: &Uri, work: F) -> Result<T>
    where
        F: FnOnce(&Snapshot, PositionEncoding) -> T + Send + 'static,
        T: Send + 'static,
    {
        let snapshot = self
            .workspace
            .snapshot(uri)
            .ok_or_else(|| unknown_document(uri))?;
        let encoding = self.workspace.encoding();
        let budget = Budget::new(Some(self.workspace.settings().time_budget(what.work())));
        // An edit of the document makes the answer stale: stop the work then.
        let _registered = self.workspace.register_work(uri, &budget);
        let answer = {
            let snapshot = snapshot.clone();
            guarded_within(what.name(), budget, move || work(&snapshot, encoding)).await?
        };
        if self.workspace.is_stale(&snapshot) {
            return Err(Error::content_modified());
        }
        Ok(answer)
    }

    /// Like [`Self::on_document`] at a position; `None` when the line does not exist.
    async fn on_position<T, F>(
        &self,
        what: Request,
        at: TextDocumentPositionParams,
        work: F,
    ) -> Result<Option<T>>
    where
        F: FnOnce(&Snapshot, usize, PositionEncoding) -> T + Send + 'static,
        T: Send + 'static,
    {
        let position = at.position;
        self.on_document(what, &at.text_document.uri, move |snapshot, encoding| {
            let offset = snapshot.offset(position, encoding)?;
            Some(work(snapshot, offset, encoding))
        })
        .await
    }

    /// The custom-call targets the open documents other than `uri` write, for
    /// completion (the library finds them; this only routes).
    fn workspace_targets(&self, uri: &Uri) -> std::sync::Arc<[String]> {
        let mut targets: Vec<String> = Vec::new();
        for snapshot in self.workspace.snapshots() {
            if &snapshot.uri == uri {
                continue;
            }
            for target in crate::ide::completion::custom_call_targets_written(&snapshot.ide) {
                if !targets.contains(&target) {
                    targets.push(target);
                }
            }
        }
        targets.into()
    }

    fn apply_settings(&self, value: &serde_json::Value) {
        let (before, after, warnings) = {
            let mut settings = write(&self.workspace.settings);
            let before = settings.profile.clone();
            let warnings = settings.apply(value);
            (before, settings.profile.clone(), warnings)
        };
        for warning in warnings {
            tracing::warn!("{warning}");
        }
        if before != after {
            profiles::set_setting(&self.workspace, self.outbox.as_ref(), after);
        }
    }

    /// The profile document `snapshot` shows (see [`profiles::for_snapshot`]).
    fn profile_of(&self) -> impl Fn(&Snapshot) -> Option<Arc<crate::profile::Profile>> {
        let (workspace, outbox) = (self.workspace.clone(), self.outbox.clone());
        move |snapshot| profiles::for_snapshot(&workspace, outbox.as_ref(), snapshot)
    }
}

/// A request that runs on one document's snapshot: its name (for logs and the panic
/// guard) and the time budget its analysis gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Request {
    DocumentText,
    FusionMaps,
    Hover,
    Definition,
    PrepareRename,
    SemanticTokens,
    CodeAction,
    InlayHint,
    References,
    DocumentHighlight,
    Rename,
    DocumentSymbol,
    PrepareCallHierarchy,
    IncomingCalls,
    OutgoingCalls,
    DocumentLink,
    FoldingRange,
    SemanticTokensDelta,
    SemanticTokensRange,
    CodeLens,
    CodeLensResolve,
    Kernels,
    Graph,
    MemoryTimeline,
    Hottest,
    Formatting,
    RangeFormatting,
    Completion,
    SignatureHelp,
}

impl Request {
    /// The method's name as the protocol writes it, without its namespace.
    fn name(self) -> &'static str {
        match self {
            Request::DocumentText => "documentText",
            Request::FusionMaps => "fusionMaps",
            Request::Hover => "hover",
            Request::Definition => "definition",
            Request::PrepareRename => "prepareRename",
            Request::SemanticTokens => "semanticTokens",
            Request::CodeAction => "codeAction",
            Request::InlayHint => "inlayHint",
            Request::References => "references",
            Request::DocumentHighlight => "documentHighlight",
            Request::Rename => "rename",
            Request::DocumentSymbol => "documentSymbol",
            Request::PrepareCallHierarchy => "prepareCallHierarchy",
            Request::IncomingCalls => "incomingCalls",
            Request::OutgoingCalls => "outgoingCalls",
            Request::DocumentLink => "documentLink",
            Request::FoldingRange => "foldingRange",
            Request::SemanticTokensDelta => "semanticTokensDelta",
            Request::SemanticTokensRange => "semanticTokensRange",
            Request::CodeLens => "codeLens",
            Request::CodeLensResolve => "codeLens/resolve",
            Request::Kernels => "kernels",
            Request::Graph => "graph",
            Request::MemoryTimeline => "memoryTimeline",
            Request::Hottest => "hottest",
            Request::Formatting => "formatting",
            Request::RangeFormatting => "rangeFormatting",
            Request::Completion => "completion",
            Request::SignatureHelp => "signatureHelp",
        }
    }

    /// Which time budget the analysis gets: it then answers with what it has
    /// (marked partial where the answer can say so: hovers).
    fn work(self) -> Work {
        match self {
            Request::Hover => Work::Hover,
            Request::InlayHint => Work::InlayHints,
            Request::FusionMaps
            | Request::Kernels
            | Request::Graph
            | Request::MemoryTimeline
            | Request::Hottest => Work::FusionMaps,
            _ => Work::Other,
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
        self.on_document(Request::DocumentText, &uri, |snapshot, _| DocumentText {
            version: snapshot.version,
            text: snapshot.text().to_string(),
        })
        .await
    }
}

impl Backend {
    /// `textDocument/documentSymbol`, answered as JSON text (see [`super::json_answers`]).
    pub async fn document_symbol_json(&self, params: DocumentSymbolParams) -> Result<Json> {
        self.on_document(
            Request::DocumentSymbol,
            &params.text_document.uri,
            |snapshot, encoding| Json::of(&handlers::document_symbols(snapshot, encoding)),
        )
        .await?
    }

    /// `textDocument/foldingRange`, answered as JSON text (see [`super::json_answers`]).
    pub async fn folding_range_json(&self, params: FoldingRangeParams) -> Result<Json> {
        self.on_document(
            Request::FoldingRange,
            &params.text_document.uri,
            |snapshot, _| Json::of(&handlers::folding_ranges(snapshot)),
        )
        .await?
    }
}

/// Custom request (params: `TextDocumentPositionParams`) returning the whole hover at
/// a position, nothing summarized: what the editor's fusion-maps panel shows when
/// the hover of a large fusion says "N more". Same answer shape as a hover.
pub const FUSION_MAPS: &str = "hlo-lsp/fusionMaps";

impl Backend {
    pub async fn fusion_maps(&self, at: TextDocumentPositionParams) -> Result<Option<Hover>> {
        let config = self.workspace.settings().features;
        let profile_of = self.profile_of();
        self.on_position(
            Request::FusionMaps,
            at,
            move |snapshot, offset, encoding| {
                let profile = profile_of(snapshot);
                handlers::hover(
                    snapshot,
                    offset,
                    &config,
                    Detail::Full,
                    encoding,
                    None,
                    profile.as_ref(),
                )
            },
        )
        .await
        .map(Option::flatten)
    }
}

/// Params of [`KERNELS`].
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KernelsParams {
    pub text_document: TextDocumentIdentifier,
    /// How many kernels, the costliest first (default 50).
    pub limit: Option<usize>,
}

/// Custom request returning the document's costliest kernels on the configured GPU
/// (`{device, kernels: [{name, computation, kind, exec_time_us, count, per_step_us, summary, range}]}`):
/// the ranked list editors show (VS Code's quick pick, Neovim's quickfix list).
pub const KERNELS: &str = "hlo-lsp/kernels";

impl Backend {
    pub async fn kernels(&self, params: KernelsParams) -> Result<serde_json::Value> {
        let config = self.workspace.settings().features;
        let limit = params.limit.unwrap_or(50);
        let uri = params.text_document.uri;
        self.on_document(Request::Kernels, &uri, move |snapshot, encoding| {
            handlers::kernels(snapshot, &config, limit, encoding)
        })
        .await
    }
}

/// Params of [`GRAPH`].
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphParams {
    pub text_document: TextDocumentIdentifier,
    pub position: Position,
    /// Hops around the instruction (default 2, at most 8).
    pub radius: Option<usize>,
    /// `"svg"`: the answer also holds the picture laid out by the server (`svg`), for
    /// editors that cannot draw (Neovim's `:HloGraph`).
    pub format: Option<String>,
}

/// Custom request returning the dataflow graph at a position, the maps on its edges
/// (`{nodes, edges, focus, context, partial, legend, dot}`, and `svg` when asked,
/// null off any computation): what an editor draws next to the text (VS Code's graph
/// panel) or opens in a viewer (Neovim).
pub const GRAPH: &str = "hlo-lsp/graph";

impl Backend {
    pub async fn graph(&self, params: GraphParams) -> Result<serde_json::Value> {
        let config = self.workspace.settings().features;
        let radius = params.radius.unwrap_or(2);
        let svg = params.format.as_deref() == Some("svg");
        let at = TextDocumentPositionParams {
            text_document: params.text_document,
            position: params.position,
        };
        let profile_of = self.profile_of();
        self.on_position(Request::Graph, at, move |snapshot, offset, encoding| {
            let profile = profile_of(snapshot);
            handlers::graph(
                snapshot,
                offset,
                radius,
                svg,
                &config,
                encoding,
                profile.as_ref(),
            )
        })
        .await
        .map(|v| v.unwrap_or(serde_json::Value::Null))
    }
}

/// Params of [`HOTTEST`].
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HottestParams {
    pub text_document: TextDocumentIdentifier,
    /// How many instructions per module, the most measured time first (default 50).
    pub limit: Option<usize>,
}

/// Custom request returning the document's instructions ranked by the time the
/// profile shown beside it measured ([`handlers::hottest`]): VS Code's quick pick
/// "HLO: Show Hottest Instructions", Neovim's quickfix list. Waits for a profile
/// still being looked for or read (the user asked).
pub const HOTTEST: &str = "hlo-lsp/hottest";

impl Backend {
    pub async fn hottest(&self, params: HottestParams) -> Result<serde_json::Value> {
        let config = self.workspace.settings().features;
        let limit = params.limit.unwrap_or(50);
        let uri = params.text_document.uri;
        let (workspace, outbox) = (self.workspace.clone(), self.outbox.clone());
        // Waiting for the profile is not the analysis' time: done before the budget.
        let snapshot = self
            .workspace
            .snapshot(&uri)
            .ok_or_else(|| unknown_document(&uri))?;
        let profile = guarded("hottest", move || {
            Some(profiles::wait_for(&workspace, outbox.as_ref(), &snapshot))
        })
        .await?
        .unwrap_or_else(|| Err("no profile".to_string()));
        self.on_document(Request::Hottest, &uri, move |snapshot, encoding| {
            handlers::hottest(snapshot, &config, limit, encoding, profile)
        })
        .await
    }
}

/// Params of [`MEMORY_TIMELINE`].
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryTimelineParams {
    pub text_document: TextDocumentIdentifier,
    /// The cursor: its computation's timeline when it runs in the schedule (a while
    /// body), else ENTRY's (the default).
    pub position: Option<Position>,
}

/// Custom request returning the memory timeline of the computation at a position
/// (`{computation, source, steps, peak, reported_peak, rows: [{instruction, shape,
/// bytes, live, at_peak, source, range}], more, svg}`, null for a module without a
/// schedule): VS Code's memory panel.
pub const MEMORY_TIMELINE: &str = "hlo-lsp/memoryTimeline";

impl Backend {
    pub async fn memory_timeline(&self, params: MemoryTimelineParams) -> Result<serde_json::Value> {
        let at = TextDocumentPositionParams {
            text_document: params.text_document,
            position: params.position.unwrap_or_default(),
        };
        self.on_position(Request::MemoryTimeline, at, handlers::memory_timeline)
            .await
            .map(|v| v.unwrap_or(serde_json::Value::Null))
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

    /// Answers a message that is not JSON (its id read leniently, else `null`).
    pub async fn parse_error(&self, params: InvalidMessageParams) -> Result<()> {
        tracing::warn!("{}", params.reason);
        Err(Error {
            code: ErrorCode::ParseError,
            message: params.reason.into(),
            data: None,
        })
    }

    /// Logs bytes skipped between frames or a frame whose length was repaired.
    pub async fn framing_note(&self, params: InvalidMessageParams) {
        tracing::warn!("input framing: {}", params.reason);
    }
}

fn unknown_document(uri: &Uri) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: format!("document is not open: {}", uri.as_str()).into(),
        data: None,
    }
}

/// The folders of the workspace: `workspaceFolders`, else the deprecated `rootUri`.
#[allow(deprecated)] // `root_uri`: older clients send only that.
fn workspace_roots(params: &InitializeParams) -> Vec<std::path::PathBuf> {
    let folders = params.workspace_folders.iter().flatten().map(|f| &f.uri);
    let uris: Vec<&Uri> = match params.workspace_folders {
        Some(_) => folders.collect(),
        None => params.root_uri.iter().collect(),
    };
    uris.into_iter()
        .filter(|uri| uri.scheme().as_str() == "file")
        .filter_map(|uri| uri.to_file_path().map(|p| p.into_owned()))
        .collect()
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
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(
                super::completion::TRIGGERS
                    .iter()
                    .map(|c| c.to_string())
                    .collect(),
            ),
            ..Default::default()
        }),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(
                super::completion::SIGNATURE_TRIGGERS
                    .iter()
                    .map(|c| c.to_string())
                    .collect(),
            ),
            ..Default::default()
        }),
        inlay_hint_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(true),
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::REFACTOR_INLINE,
                CodeActionKind::REFACTOR_EXTRACT,
            ]),
            ..Default::default()
        })),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_highlight_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_range_formatting_provider: Some(OneOf::Left(true)),
        call_hierarchy_provider: Some(CallHierarchyServerCapability::Simple(true)),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: commands::names(),
            work_done_progress_options: Default::default(),
        }),
        document_link_provider: Some(DocumentLinkOptions {
            resolve_provider: Some(false),
            work_done_progress_options: Default::default(),
        }),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: semantic_tokens::legend(),
                full: Some(SemanticTokensFullOptions::Delta { delta: Some(true) }),
                range: Some(true),
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
        let snippets = params
            .capabilities
            .text_document
            .as_ref()
            .and_then(|t| t.completion.as_ref())
            .and_then(|c| c.completion_item.as_ref())
            .and_then(|i| i.snippet_support)
            .unwrap_or(false);
        self.workspace
            .client_supports_snippets
            .store(snippets, Ordering::SeqCst);
        let refresh = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false);
        self.workspace
            .client_supports_code_lens_refresh
            .store(refresh, Ordering::SeqCst);
        if let Some(options) = &params.initialization_options {
            self.apply_settings(options);
        }
        *write(&self.workspace.roots) = workspace_roots(&params);
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
        if let Some(outbox) = &self.outbox {
            super::workspace_index::spawn(self.workspace.clone(), outbox.clone());
        }
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

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        let config = self.workspace.settings().features;
        let (workspace, outbox) = (self.workspace.clone(), self.outbox.clone());
        let profile_of = self.profile_of();
        self.on_position(Request::Hover, at, move |snapshot, offset, encoding| {
            let found = pass_history::for_snapshot(&workspace, outbox.as_ref(), snapshot);
            let history = found.as_ref().map(|(module, k)| PassHistory {
                module,
                snapshot: *k,
            });
            let profile = profile_of(snapshot);
            handlers::hover(
                snapshot,
                offset,
                &config,
                Detail::Summary,
                encoding,
                history,
                profile.as_ref(),
            )
        })
        .await
        .map(Option::flatten)
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let config = self.workspace.settings().features;
        let (workspace, outbox) = (self.workspace.clone(), self.outbox.clone());
        let profile_of = self.profile_of();
        self.on_document(
            Request::CodeLens,
            &params.text_document.uri,
            move |snapshot, encoding| {
                let found = pass_history::for_snapshot(&workspace, outbox.as_ref(), snapshot);
                let history = found.as_ref().map(|(module, k)| PassHistory {
                    module,
                    snapshot: *k,
                });
                let profile = profile_of(snapshot);
                Some(handlers::code_lenses(
                    snapshot,
                    &config,
                    encoding,
                    history,
                    profile.as_ref(),
                ))
            },
        )
        .await
    }

    async fn code_lens_resolve(&self, lens: CodeLens) -> Result<CodeLens> {
        let uri = lens
            .data
            .as_ref()
            .and_then(|d| d.get("uri"))
            .and_then(|u| u.as_str())
            .and_then(|u| u.parse::<Uri>().ok());
        let Some(uri) = uri else {
            return Err(Error::invalid_params(
                "a code lens of hlo-lsp carries its document's URI",
            ));
        };
        let config = self.workspace.settings().features;
        let profile_of = self.profile_of();
        self.on_document(Request::CodeLensResolve, &uri, move |snapshot, _| {
            let profile = profile_of(snapshot);
            handlers::resolve_code_lens(snapshot, lens, &config, profile.as_ref())
        })
        .await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let uri = &params.text_document_position.text_document.uri;
        let options = crate::ide::completion::Options {
            snippets: self
                .workspace
                .client_supports_snippets
                .load(Ordering::SeqCst),
            workspace_targets: self.workspace_targets(uri),
        };
        self.on_position(
            Request::Completion,
            params.text_document_position,
            move |snapshot, offset, encoding| {
                super::completion::completion(snapshot, offset, options, encoding)
            },
        )
        .await
        .map(Option::flatten)
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        self.on_position(
            Request::SignatureHelp,
            params.text_document_position_params,
            |snapshot, offset, _| super::completion::signature_help(snapshot, offset),
        )
        .await
        .map(Option::flatten)
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let range = params.range;
        self.on_document(
            Request::CodeAction,
            &params.text_document.uri,
            move |snapshot, encoding| {
                let start = snapshot.offset(range.start, encoding)?;
                let end = snapshot.offset(range.end, encoding)?.max(start);
                Some(code_actions::code_actions(snapshot, start..end, encoding))
            },
        )
        .await
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        let style = self.workspace.settings().format_style;
        self.on_document(
            Request::Formatting,
            &params.text_document.uri,
            move |snapshot, encoding| formatting::edits(snapshot, (style, None), encoding),
        )
        .await?
    }

    async fn range_formatting(
        &self,
        params: DocumentRangeFormattingParams,
    ) -> Result<Option<Vec<TextEdit>>> {
        let range = params.range;
        let style = self.workspace.settings().format_style;
        self.on_document(
            Request::RangeFormatting,
            &params.text_document.uri,
            move |snapshot, encoding| {
                formatting::edits(
                    snapshot,
                    (style, Some(snapshot.byte_range(range, encoding))),
                    encoding,
                )
            },
        )
        .await?
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let range = params.range;
        let config = self.workspace.settings().features;
        self.on_document(
            Request::InlayHint,
            &params.text_document.uri,
            move |snapshot, encoding| {
                Some(handlers::inlay_hints(
                    snapshot,
                    snapshot.byte_range(range, encoding),
                    &config,
                    encoding,
                ))
            },
        )
        .await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let at = params.text_document_position_params;
        self.on_position(Request::Definition, at, |snapshot, offset, encoding| {
            let locations = handlers::definition(snapshot, offset, encoding);
            (!locations.is_empty()).then_some(GotoDefinitionResponse::Array(locations))
        })
        .await
        .map(Option::flatten)
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let include = params.context.include_declaration;
        self.on_position(
            Request::References,
            params.text_document_position,
            move |snapshot, offset, encoding| {
                handlers::references(snapshot, offset, include, encoding)
            },
        )
        .await
    }

    async fn document_highlight(
        &self,
        params: DocumentHighlightParams,
    ) -> Result<Option<Vec<DocumentHighlight>>> {
        self.on_position(
            Request::DocumentHighlight,
            params.text_document_position_params,
            handlers::highlights,
        )
        .await
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        self.on_position(
            Request::PrepareRename,
            params,
            |snapshot, offset, encoding| {
                handlers::rename_range(snapshot, offset)
                    .map(|range| PrepareRenameResponse::Range(snapshot.range(range, encoding)))
            },
        )
        .await
        .map(Option::flatten)
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let new_name = params.new_name;
        let outcome = self
            .on_position(
                Request::Rename,
                params.text_document_position,
                move |snapshot, offset, encoding| {
                    handlers::rename(snapshot, offset, &new_name, encoding)
                },
            )
            .await?;
        match outcome {
            None => Ok(None),
            Some(Ok(edit)) => Ok(edit),
            Some(Err(error)) => Err(Error::invalid_params(error.0)),
        }
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        let snapshots = self.workspace.snapshots();
        let workspace = self.workspace.clone();
        let encoding = self.workspace.encoding();
        guarded("workspaceSymbol", move || {
            workspace.index.add_new_files(&workspace.roots());
            let indexed = workspace.index.fresh_files();
            let mut found = handlers::workspace_symbols(&snapshots, &params.query, encoding);
            handlers::indexed_symbols(&indexed, &snapshots, &params.query, encoding, &mut found);
            Some(WorkspaceSymbolResponse::Nested(found))
        })
        .await
    }

    async fn prepare_call_hierarchy(
        &self,
        params: CallHierarchyPrepareParams,
    ) -> Result<Option<Vec<CallHierarchyItem>>> {
        self.on_position(
            Request::PrepareCallHierarchy,
            params.text_document_position_params,
            call_hierarchy::prepare,
        )
        .await
        .map(Option::flatten)
    }

    async fn incoming_calls(
        &self,
        params: CallHierarchyIncomingCallsParams,
    ) -> Result<Option<Vec<CallHierarchyIncomingCall>>> {
        let item = params.item;
        self.on_document(
            Request::IncomingCalls,
            &item.uri.clone(),
            move |snapshot, encoding| Some(call_hierarchy::incoming(snapshot, &item, encoding)),
        )
        .await
    }

    async fn outgoing_calls(
        &self,
        params: CallHierarchyOutgoingCallsParams,
    ) -> Result<Option<Vec<CallHierarchyOutgoingCall>>> {
        let item = params.item;
        self.on_document(
            Request::OutgoingCalls,
            &item.uri.clone(),
            move |snapshot, encoding| Some(call_hierarchy::outgoing(snapshot, &item, encoding)),
        )
        .await
    }

    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> Result<Option<serde_json::Value>> {
        let command = params.command;
        if !commands::names().contains(&command) {
            return Err(Error::invalid_params(format!("unknown command: {command}")));
        }
        let (workspace, outbox) = (self.workspace.clone(), self.outbox.clone());
        let arguments = params.arguments;
        let outcome = guarded("executeCommand", move || match command.as_str() {
            history_command::HISTORY => {
                history_command::history(&workspace, outbox.as_ref(), &arguments)
            }
            profiles::LOAD => profiles::load(&workspace, outbox.as_ref(), &arguments),
            _ => commands::diff(&workspace, &arguments),
        })
        .await?;
        outcome.map(Some).map_err(|e| e.to_jsonrpc())
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        let roots = self.workspace.roots();
        self.on_document(
            Request::DocumentLink,
            &params.text_document.uri,
            move |snapshot, encoding| Some(handlers::document_links(snapshot, &roots, encoding)),
        )
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        let uri = params.text_document.uri;
        let cache = self.tokens.clone();
        self.on_document(
            Request::SemanticTokens,
            &uri.clone(),
            move |snapshot, encoding| {
                if !semantic_tokens::answers_full(snapshot) {
                    cache.forget(&uri);
                    return None;
                }
                let tokens = semantic_tokens::tokens(snapshot, encoding);
                Some(SemanticTokensResult::Tokens(cache.full(&uri, tokens)))
            },
        )
        .await
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let uri = params.text_document.uri;
        let previous = params.previous_result_id;
        let cache = self.tokens.clone();
        self.on_document(
            Request::SemanticTokensDelta,
            &uri.clone(),
            move |snapshot, encoding| {
                if !semantic_tokens::answers_full(snapshot) {
                    cache.forget(&uri);
                    return None;
                }
                let tokens = semantic_tokens::tokens(snapshot, encoding);
                Some(match cache.delta(&uri, &previous, tokens.clone()) {
                    Some(delta) => SemanticTokensFullDeltaResult::TokensDelta(delta),
                    None => SemanticTokensFullDeltaResult::Tokens(cache.full(&uri, tokens)),
                })
            },
        )
        .await
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        let range = params.range;
        self.on_document(
            Request::SemanticTokensRange,
            &params.text_document.uri,
            move |snapshot, encoding| {
                let bytes =
                    super::position::to_byte_range_clamped(snapshot.syntax(), range, encoding);
                let tokens = semantic_tokens::tokens_in(snapshot, bytes, encoding);
                Some(SemanticTokensRangeResult::Tokens(SemanticTokens {
                    result_id: None,
                    data: tokens,
                }))
            },
        )
        .await
    }
}
