//! The language server: the only module that knows LSP types, JSON-RPC and async.
//!
//! Shape of the server (one concept per module):
//! * [`sync`]: text-sync notifications are taken out of tower-lsp's concurrent
//!   dispatch and applied in wire order by one document actor ([`documents`]), which
//!   publishes immutable [`snapshot`]s into the shared [`workspace`];
//! * [`server`]: request handlers run feature code on a snapshot off the async
//!   runtime, under the panic [`guard`], and answer `ContentModified` when stale;
//! * [`diagnostics`] are debounced and published with their version through the
//!   ordered [`outbox`], which also carries [`progress`] and [`logging`] messages;
//! * [`wire`] and [`framing`] find messages in the input, also after a wrong
//!   `Content-Length`, and turn malformed ones into answerable stand-ins;
//! * [`position`] converts between LSP positions and the library's byte offsets.

use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tower_lsp_server::{LspService, Server};

pub mod bulk;
pub mod call_hierarchy;
pub mod code_actions;
pub mod commands;
pub mod completion;
pub mod diagnostics;
pub mod documents;
pub mod formatting;
pub mod framing;
pub mod guard;
pub mod handlers;
pub mod history_command;
pub mod json_answers;
pub mod json_string;
pub mod logging;
pub mod outbox;
pub mod output;
pub mod pass_history;
pub mod position;
pub mod profiles;
pub mod progress;
pub mod rendered;
pub mod semantic_tokens;
pub mod server;
pub mod settings;
pub mod snapshot;
pub mod sync;
pub mod to_proto;
pub mod wire;
pub mod workspace;
pub mod workspace_index;

use outbox::Outbox;
use output::Output;
use workspace::Workspace;

/// How many requests may be in progress at once (see [`serve`]).
pub const CONCURRENT_REQUESTS: usize = 64;

/// Serves LSP on stdin/stdout until `exit` (or end of input). The exit code is 0 when
/// `shutdown` came before `exit`, 1 otherwise, as the specification requires (the
/// [`sync::Sequencer`] records `shutdown` in wire order, also when `exit` follows at once).
pub fn run_stdio() -> ExitCode {
    logging::init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("hlo-lsp: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let workspace = Arc::new(Workspace::default());
    runtime.block_on(serve(workspace.clone()));
    // stdin is read on a blocking thread that may still wait for input: do not join it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    if workspace.shutdown_requested.load(Ordering::SeqCst) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn serve(workspace: Arc<Workspace>) {
    let mut events = None;
    let (output, tower_output, writer) = Output::start(tokio::io::stdout());
    let (service, socket) = LspService::build(|client| {
        let outbox = Outbox::start(client.clone(), output.clone());
        logging::forward_to_client(outbox.clone());
        let outbox_for_backend = outbox.clone();
        let scheduler = diagnostics::DiagnosticsScheduler::start(workspace.clone(), outbox.clone());
        events = Some(sync::DocumentActor::spawn(
            workspace.clone(),
            outbox,
            scheduler,
        ));
        server::Backend::new(client, workspace.clone()).with_outbox(outbox_for_backend)
    })
    .custom_method(server::DOCUMENT_TEXT, server::Backend::document_text)
    .custom_method(server::FUSION_MAPS, server::Backend::fusion_maps)
    .custom_method(server::KERNELS, server::Backend::kernels)
    .custom_method(server::GRAPH, server::Backend::graph)
    .custom_method(server::MEMORY_TIMELINE, server::Backend::memory_timeline)
    .custom_method(server::HOTTEST, server::Backend::hottest)
    .custom_method(
        json_answers::DOCUMENT_SYMBOL,
        server::Backend::document_symbol_json,
    )
    .custom_method(
        json_answers::FOLDING_RANGE,
        server::Backend::folding_range_json,
    )
    .custom_method(wire::INVALID_REQUEST, server::Backend::invalid_request)
    .custom_method(wire::INVALID_MESSAGE, server::Backend::invalid_message)
    .custom_method(wire::PARSE_ERROR, server::Backend::parse_error)
    .custom_method(wire::FRAMING_NOTE, server::Backend::framing_note)
    .finish();
    let Some(events) = events else {
        return;
    };
    let bulk = Arc::new(bulk::Bulk::default());
    let service = sync::Sequencer::new(service, workspace, events, bulk.clone(), output.clone());
    let (guarded_input, input) = tokio::io::duplex(1 << 16);
    wire::widen_stdin_pipe();
    tokio::spawn(async move { wire::filter(tokio::io::stdin(), guarded_input, &bulk).await });
    // tower-lsp polls at most this many requests at once; with its default of 4,
    // four slow requests held every other one back. The work itself runs on
    // blocking threads under budgets (see `guard`), so waiting requests are cheap.
    Server::new(input, tower_output, socket)
        .concurrency_level(CONCURRENT_REQUESTS)
        .serve(service)
        .await;
    output.close();
    let _ = writer.await;
}
