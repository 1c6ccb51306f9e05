//! `workspace/executeCommand`: `hlo-lsp.diff` compares two dumps of one module, the
//! server side of `hlo-lsp diff A B` ([`crate::dump::diff`]).
//!
//! Arguments: two document URIs (or one object `{ "before": uri, "after": uri }`,
//! with `"computation": name` to keep only what changed in that computation and the
//! computations its changed lines call: one pass of an instruction's history).
//! An open document is read as the editor has it, another from disk. The answer is
//! `{ "text": the CLI's text, "modules": [per-module diff as the CLI's --json] }`.

use std::sync::Arc;

use serde_json::{json, Value};
use tower_lsp_server::ls_types::Uri;

use super::snapshot::Snapshot;
use super::workspace::Workspace;
use crate::dump::diff::{compare_computation, compare_files, render_changes, ModuleDiff};
use crate::ide;
use crate::model::HloFile;

/// Why a command gave no answer: the client sent what the command cannot take
/// (`InvalidParams`), or a file it names could not be read or compared
/// (`RequestFailed`): an editor shows the second to the user, the first is its bug.
#[derive(Debug)]
pub enum CommandError {
    InvalidArguments(String),
    Failed(String),
}

impl CommandError {
    /// The JSON-RPC error: invalid params, or LSP's `RequestFailed` (-32803).
    pub fn to_jsonrpc(&self) -> tower_lsp_server::jsonrpc::Error {
        use tower_lsp_server::jsonrpc::{Error, ErrorCode};
        match self {
            CommandError::InvalidArguments(message) => Error::invalid_params(message.clone()),
            CommandError::Failed(message) => Error {
                code: ErrorCode::ServerError(REQUEST_FAILED),
                message: message.clone().into(),
                data: None,
            },
        }
    }
}

/// LSP's error code for a request that was valid but failed.
const REQUEST_FAILED: i64 = -32803;

/// The command names the server executes.
pub const DIFF: &str = "hlo-lsp.diff";

pub fn names() -> Vec<String> {
    vec![
        DIFF.to_string(),
        super::history_command::HISTORY.to_string(),
        super::profiles::LOAD.to_string(),
    ]
}

/// A document to compare: the open snapshot, or the file read from disk.
enum Side {
    Open(Arc<Snapshot>),
    Read(HloFile),
}

impl Side {
    /// The HLO model compared; an open MLIR document has none.
    fn file(&self) -> Result<&HloFile, CommandError> {
        match self {
            Side::Open(snapshot) => match &snapshot.ide {
                ide::Snapshot::Hlo(hlo) => Ok(hlo.model()),
                ide::Snapshot::Mlir(_) => Err(CommandError::InvalidArguments(format!(
                    "{DIFF} compares HLO dumps; {} is MLIR",
                    snapshot.uri.as_str()
                ))),
            },
            Side::Read(file) => Ok(file),
        }
    }
}

/// The two URIs of the arguments.
pub fn diff_arguments(arguments: &[Value]) -> Result<(Uri, Uri), CommandError> {
    let uri = |v: &Value| -> Result<Uri, CommandError> {
        let invalid = CommandError::InvalidArguments;
        let text = v
            .as_str()
            .ok_or_else(|| invalid("a URI must be a string".to_string()))?;
        text.parse()
            .map_err(|_| invalid(format!("not a URI: {text}")))
    };
    match arguments {
        [a, b] => Ok((uri(a)?, uri(b)?)),
        [object] if object.is_object() => Ok((uri(&object["before"])?, uri(&object["after"])?)),
        _ => Err(CommandError::InvalidArguments(format!(
            "{DIFF} takes two document URIs (before, after)"
        ))),
    }
}

fn side(workspace: &Workspace, uri: &Uri) -> Result<Side, CommandError> {
    if let Some(snapshot) = workspace.snapshot(uri) {
        return Ok(Side::Open(snapshot));
    }
    let path = uri
        .to_file_path()
        .ok_or_else(|| CommandError::InvalidArguments(format!("not a file: {}", uri.as_str())))?;
    let text = crate::dump::read_text(&path).map_err(|e| CommandError::Failed(e.to_string()))?;
    Ok(Side::Read(crate::model::parse_hlo(&text)))
}

/// Runs `hlo-lsp.diff` (blocking: call it off the async runtime).
pub fn diff(workspace: &Workspace, arguments: &[Value]) -> Result<Value, CommandError> {
    let (a, b) = diff_arguments(arguments)?;
    let (before, after) = (side(workspace, &a)?, side(workspace, &b)?);
    let (before, after) = (before.file()?, after.file()?);
    let computation = arguments.first().and_then(|o| o["computation"].as_str());
    let modules: Vec<ModuleDiff> = match computation {
        Some(computation) => compare_computation(before, after, computation),
        None => compare_files(before, after),
    };
    Ok(json!({ "text": render_changes(&modules), "modules": modules }))
}
