//! The sharding line of an instruction's hover: what its `sharding=` means
//! in words ([`crate::sharding::describe`]), per device beside global, and
//! whether the written shapes were read as global or per device.

use super::HloSnapshot;
use crate::model::{ComputationRef, Instruction, Module, ModuleId};
use crate::sharding;

/// "Sharding: dim 1 split 4 ways, each tile on 2 devices (replicated); per
/// device f32[64,32] of global f32[64,128] (shapes read as partitioned)" and
/// the grid of devices per tile ([`sharding::grid`]), or why the sharding
/// cannot be read; `None` without a sharding.
pub fn hover_line(
    module: &Module,
    computation: ComputationRef<'_>,
    instruction: &Instruction,
    file_name: Option<&str>,
) -> Option<String> {
    let attribute = instruction.attribute("sharding")?;
    let parsed = match sharding::parse(computation.src(attribute.value_range)) {
        Ok(parsed) => parsed,
        Err(e) => return Some(format!("Sharding: cannot be read ({e})")),
    };
    let (written, _) = sharding::written_shapes(module, file_name);
    let devices = (module.num_partitions() > 1).then(|| module.num_partitions());
    let layouts = sharding::layouts(&instruction.shape, &parsed, written, devices);
    let words: Vec<String> = layouts
        .iter()
        .map(|l| match l.index {
            Some(k) => format!("{{{k}}} {}", l.words()),
            None => l.words(),
        })
        .collect();
    if words.is_empty() {
        return None;
    }
    let mut out = format!(
        "Sharding: {} (shapes read as {})",
        words.join("; "),
        written.name()
    );
    // The devices of each tile, for an array (a tuple's grids would crowd it).
    if let [layout] = &layouts[..] {
        if let Some(grid) = layout.tiles.as_ref().ok().and_then(sharding::grid::draw) {
            out.push_str(&format!("\n\n```text\n{grid}\n```"));
        }
    }
    Some(out)
}

/// What a collective joins, moves and why, as hover lines: "Replica groups: 2
/// groups of 4 devices over axis 1 of the 2x4 mesh: {0,1,2,3} {4,5,6,7}", the
/// bytes each device sends and receives, and the sharding that calls for it
/// ([`sharding::collective::explain`]); `None` when it is not a collective.
pub fn collective_lines(
    module: &Module,
    view: &crate::analysis::Module<'_>,
    computation: ComputationRef<'_>,
    instruction: &Instruction,
) -> Option<Vec<String>> {
    let report = match sharding::collective::explain(module, view, computation, instruction)? {
        Ok(report) => report,
        Err(e) => return Some(vec![format!("Replica groups: cannot be read ({e})")]),
    };
    const SHOWN: usize = 4;
    let list = |g: &Vec<i64>| {
        let ids: Vec<String> = g.iter().map(i64::to_string).collect();
        format!("{{{}}}", ids.join(","))
    };
    let mut shown: Vec<String> = report.groups.iter().take(SHOWN).map(list).collect();
    if report.groups.len() > SHOWN {
        shown.push(format!("… {} more", report.groups.len() - SHOWN));
    }
    let title = if report.op.is_permute() {
        "Source-target pairs"
    } else {
        "Replica groups"
    };
    let mut lines = vec![format!(
        "{title}: {}: {}",
        sharding::collective::groups_text(&report),
        shown.join(" ")
    )];
    if let Some(traffic) = &report.traffic {
        lines.push(format!(
            "Moves: {}",
            sharding::collective::traffic_text(traffic)
        ));
    }
    lines.extend(report.why.iter().map(|w| format!("Why: {w}")));
    Some(lines)
}

/// What XLA's SPMD partitioner will insert at this instruction, on a module
/// whose shapes are global ([`sharding::predict`]): "**Partitioning** inserts
/// all-reduce over axis 1 ('y') of the 2x4 mesh, each device sends 48 B: …",
/// or why it is not predicted. Empty on a partitioned module or where nothing
/// is needed.
pub fn predicted_lines(
    snapshot: &HloSnapshot,
    module: ModuleId,
    computation: ComputationRef<'_>,
    instruction: &Instruction,
) -> Vec<String> {
    let file_name = Some(snapshot.file_name());
    let written = snapshot.model().module(module);
    if written.num_partitions() <= 1
        || sharding::written_shapes(written, file_name).0 != sharding::Written::Global
    {
        return vec![];
    }
    let prediction = snapshot.prediction(module);
    let (c, i) = (&*computation.model().name, &*instruction.name);
    let mut lines: Vec<String> = prediction
        .at(c, i)
        .map(|p| format!("**Partitioning** inserts {}\n", sharding::predict::text(p)))
        .collect();
    if let Some(u) = prediction.unpredicted_at(c, i) {
        lines.push(format!("**Partitioning** not predicted: {}\n", u.why));
    }
    lines
}
