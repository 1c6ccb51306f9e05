//! What a history says to a person: one line for a code lens or a hover
//! ([`summary`]), a short story per instruction for the command line ([`story`]),
//! and the JSON of `hlo-lsp history --json` ([`to_json`]).

use std::fmt::Write as _;

use serde::Serialize;

use super::{InstructionHistory, ModuleHistory, Snapshot};
use crate::dump::naming::Stage;

/// Where an instruction came from: `in the input (before optimizations)`,
/// `introduced by layout-assignment (step 47)`.
pub(super) fn origin(module: &ModuleHistory, i: &InstructionHistory) -> String {
    let snapshot = &module.snapshots[i.introduced];
    match (&snapshot.stage, i.introduced) {
        (Stage::BeforeOptimizations, _) => "in the input (before optimizations)".into(),
        (_, 0) => format!("in the first snapshot ({})", snapshot.label()),
        _ => format!("introduced by {}", snapshot.label()),
    }
}

/// `fused into %f by fusion (step 19)`, `removed by dce (step 3)`.
pub(super) fn end(module: &ModuleHistory, i: &InstructionHistory) -> Option<String> {
    let removal = i.removed.as_ref()?;
    let by = module.snapshots[removal.snapshot].label();
    Some(match (&removal.fused_into, &removal.replaced_by) {
        (Some(fusion), _) => format!("fused into %{fusion} by {by}"),
        (None, Some(other)) => format!("replaced by %{other} by {by}"),
        (None, None) => format!("removed by {by}"),
    })
}

/// One line: `introduced by layout-assignment (step 47) · changed by 3 passes`.
pub fn summary(module: &ModuleHistory, i: &InstructionHistory) -> String {
    let mut parts = vec![origin(module, i)];
    match i.changed.as_slice() {
        [] => {}
        [one] => parts.push(format!("changed by {}", module.snapshots[*one].label())),
        many => parts.push(format!("changed by {} passes", many.len())),
    }
    parts.extend(end(module, i));
    parts.join(" · ")
}

/// A few lines: the instruction, then where it came from, each change, its end.
pub fn story(module: &ModuleHistory, i: &InstructionHistory) -> String {
    let mut text = format!(
        "%{} ({}) in %{}: {}\n",
        i.name,
        i.opcode,
        i.computation,
        origin(module, i)
    );
    for &k in &i.changed {
        let _ = writeln!(text, "  changed by {}", module.snapshots[k].label());
    }
    match (end(module, i), i.changed.is_empty()) {
        (Some(end), _) => {
            let _ = writeln!(text, "  {end}");
        }
        (None, true) => text.insert_str(text.len() - 1, ", unchanged to the end"),
        (None, false) => text.push_str("  still there at the end\n"),
    }
    text
}

/// The stories of the instructions `filter` keeps, under a line about the module.
/// The stories of the instructions `filter` keeps. With `collapse_quiet` (the whole
/// module asked for), those the input already had and no pass touched are counted in
/// one closing line instead of told one by one: someone bisecting a transpose reads
/// what the passes did, not the hundreds of reducer parameters they left alone.
pub fn render(
    module: &ModuleHistory,
    filter: impl Fn(&InstructionHistory) -> bool,
    collapse_quiet: bool,
) -> String {
    let mut text = format!(
        "module {} (module_{:04}): {} snapshots, {} instructions followed, {} at the end\n",
        module.module,
        module.module_id,
        module.snapshots.len(),
        module.instructions.len(),
        module.last_alive()
    );
    for name in &module.unreadable {
        let _ = writeln!(text, "not read: {name}");
    }
    let mut quiet = 0;
    for i in module.instructions.iter().filter(|i| filter(i)) {
        if collapse_quiet && is_quiet(module, i) {
            quiet += 1;
        } else {
            text.push_str(&story(module, i));
        }
    }
    if quiet > 0 {
        let _ = writeln!(
            text,
            "{quiet} more in the input (before optimizations), unchanged to the end \
             (--instruction NAME tells one, --json lists all)"
        );
    }
    text
}

/// In the input, never changed, never removed.
fn is_quiet(module: &ModuleHistory, i: &InstructionHistory) -> bool {
    module.snapshots[i.introduced].stage == Stage::BeforeOptimizations
        && i.changed.is_empty()
        && i.removed.is_none()
}

#[derive(Serialize)]
struct Json<'a> {
    module: &'a str,
    snapshots: Vec<SnapshotJson>,
    instructions: Vec<InstructionJson<'a>>,
}

#[derive(Serialize)]
struct SnapshotJson {
    step: Option<u64>,
    pass: String,
    file: String,
}

#[derive(Serialize)]
struct InstructionJson<'a> {
    name: &'a str,
    computation: &'a str,
    opcode: &'a str,
    introduced_by: &'a str,
    introduced_step: Option<u64>,
    changed_by: Vec<PassJson<'a>>,
    removed_by: Option<RemovalJson<'a>>,
}

#[derive(Serialize)]
struct PassJson<'a> {
    pass: &'a str,
    step: Option<u64>,
}

#[derive(Serialize)]
struct RemovalJson<'a> {
    pass: &'a str,
    step: Option<u64>,
    fused_into: Option<&'a str>,
    replaced_by: Option<&'a str>,
}

fn pass(s: &Snapshot) -> PassJson<'_> {
    PassJson {
        pass: s.pass(),
        step: s.step(),
    }
}

/// The JSON of `hlo-lsp history --json` for the instructions `filter` keeps, its keys
/// in the order the fields are listed (module, snapshots, instructions).
pub fn to_json(module: &ModuleHistory, filter: impl Fn(&InstructionHistory) -> bool) -> String {
    let snapshots = module
        .snapshots
        .iter()
        .map(|s| SnapshotJson {
            step: s.step(),
            pass: s.pass().to_string(),
            file: s.file_name(),
        })
        .collect();
    let instructions = module
        .instructions
        .iter()
        .filter(|i| filter(i))
        .map(|i| {
            let introduced = &module.snapshots[i.introduced];
            InstructionJson {
                name: &i.name,
                computation: &i.computation,
                opcode: &i.opcode,
                introduced_by: introduced.pass(),
                introduced_step: introduced.step(),
                changed_by: i
                    .changed
                    .iter()
                    .map(|&k| pass(&module.snapshots[k]))
                    .collect(),
                removed_by: i.removed.as_ref().map(|r| {
                    let by = pass(&module.snapshots[r.snapshot]);
                    RemovalJson {
                        pass: by.pass,
                        step: by.step,
                        fused_into: r.fused_into.as_deref(),
                        replaced_by: r.replaced_by.as_deref(),
                    }
                }),
            }
        })
        .collect();
    let json = Json {
        module: &module.module,
        snapshots,
        instructions,
    };
    serde_json::to_string_pretty(&json).unwrap_or_default()
}
