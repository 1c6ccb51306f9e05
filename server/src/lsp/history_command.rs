//! `workspace/executeCommand` `hlo-lsp.history`: the passes of one instruction of a
//! pass-by-pass snapshot ([`crate::ide::history::passes_of`]), each with the snapshot
//! just before and just after it and the instruction's line in each, for the editor
//! to open side by side; the pass's diff of the computation is `hlo-lsp.diff` with
//! `{ before, after, computation }`.
//!
//! Arguments (one object): `{ "uri", "computation", "instruction" }` (what the
//! history code lens carries, its command [`SHOW`]) or `{ "uri", "position" }` (the
//! instruction under the cursor of an open document). Answer:
//! `{ instruction, computation, opcode, summary, passes: [{ event, pass, step, label,
//! before: place | null, after: place }] }`, a place being `{ uri, file, range, found,
//! instead? }` (`found`: `instruction`, `instead` (what stands in its place),
//! `computation` (its header), `file`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tower_lsp_server::ls_types::{Position, Range, Uri};

use super::commands::CommandError;
use super::outbox::Outbox;
use super::pass_history;
use super::workspace::Workspace;
use crate::dump::history::passes::{Found, Place};
use crate::dump::history::ModuleHistory;
use crate::ide;
use crate::ide::history::{InstructionPasses, PassHistory};

/// The command the server executes.
pub const HISTORY: &str = "hlo-lsp.history";

/// The command of the history code lens: the editor's own (it asks [`HISTORY`] and
/// lets the user pick a pass), with the lens's `{ uri, computation, instruction }`.
pub const SHOW: &str = "hlo.showHistory";

/// How long the command waits for a history still being built.
const WAIT: Duration = Duration::from_secs(30);

/// Runs `hlo-lsp.history` (blocking: call it off the async runtime).
pub fn history(
    workspace: &Arc<Workspace>,
    outbox: Option<&Outbox>,
    arguments: &[Value],
) -> Result<Value, CommandError> {
    let invalid = |m: &str| CommandError::InvalidArguments(format!("{HISTORY} {m}"));
    let [argument] = arguments else {
        return Err(invalid(
            "takes one object { uri, computation, instruction }",
        ));
    };
    let uri: Uri = argument["uri"]
        .as_str()
        .and_then(|u| u.parse().ok())
        .ok_or_else(|| invalid("needs a document URI"))?;
    let path = uri
        .to_file_path()
        .ok_or_else(|| invalid("needs a file URI"))?;
    let (module, snapshot) = wait_for_history(workspace, outbox, &path)?;
    let history = PassHistory {
        module: &module,
        snapshot,
    };
    let passes = match (&argument["computation"], &argument["instruction"]) {
        (Value::String(c), Value::String(i)) => ide::history::passes_of(history, c, i),
        _ => at_position(workspace, &uri, &argument["position"], history)?,
    };
    let passes = passes.ok_or_else(|| {
        CommandError::Failed("no instruction the pass history follows is there".to_string())
    })?;
    Ok(to_json(&module, &passes))
}

/// The history of the module `path` is a snapshot of, waiting while it is built.
fn wait_for_history(
    workspace: &Arc<Workspace>,
    outbox: Option<&Outbox>,
    path: &std::path::Path,
) -> Result<(Arc<ModuleHistory>, usize), CommandError> {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(found) = pass_history::history_of(workspace, outbox, path) {
            return Ok(found);
        }
        let is_dump = crate::dump::naming::DumpName::parse(path).is_some();
        if !is_dump || Instant::now() >= deadline {
            return Err(CommandError::Failed(format!(
                "{} is not a snapshot of a pass-by-pass dump (--xla_dump_hlo_pass_re=.*)",
                path.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The passes of the instruction at `position` of the open document `uri`.
fn at_position<'a>(
    workspace: &Workspace,
    uri: &Uri,
    position: &Value,
    history: PassHistory<'a>,
) -> Result<Option<InstructionPasses<'a>>, CommandError> {
    let position: Position = serde_json::from_value(position.clone()).map_err(|_| {
        CommandError::InvalidArguments(format!(
            "{HISTORY} needs {{ computation, instruction }} or a position"
        ))
    })?;
    let snapshot = workspace.snapshot(uri).ok_or_else(|| {
        CommandError::InvalidArguments(format!("{HISTORY}: {} is not open", uri.as_str()))
    })?;
    let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
        return Ok(None);
    };
    let offset = snapshot.offset(position, workspace.encoding());
    Ok(offset.and_then(|o| ide::history::passes_at(hlo, o, history)))
}

fn to_json(module: &ModuleHistory, passes: &InstructionPasses) -> Value {
    let i = passes.instruction;
    let steps: Vec<Value> = passes
        .steps
        .iter()
        .map(|s| {
            let pass = &module.snapshots[s.snapshot];
            json!({
                "event": s.event.as_str(),
                "pass": pass.pass(),
                "step": pass.step(),
                "label": s.label,
                "before": s.before.as_ref().map(place),
                "after": place(&s.after),
            })
        })
        .collect();
    json!({
        "instruction": i.name,
        "computation": &*i.computation,
        "opcode": i.opcode,
        "summary": passes.summary,
        "passes": steps,
    })
}

fn place(place: &Place) -> Value {
    let line = place.line as u32;
    let range = Range::new(
        Position::new(line, place.columns.start as u32),
        Position::new(line, place.columns.end as u32),
    );
    let (found, instead) = match &place.found {
        Found::Instruction => ("instruction", None),
        Found::Instead(name) => ("instead", Some(name)),
        Found::Computation => ("computation", None),
        Found::File => ("file", None),
    };
    let uri = Uri::from_file_path(&place.file).map(|u| u.as_str().to_string());
    json!({
        "uri": uri,
        "file": place.file.display().to_string(),
        "range": range,
        "found": found,
        "instead": instead,
    })
}
