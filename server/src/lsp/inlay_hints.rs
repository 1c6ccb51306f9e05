//! Inlay hints inside fused computations: after each instruction, the simplified map
//! from the fusion's output index to this instruction's index (`(d0, d1) -> (d1, d0)`),
//! so a reader sees how the kernel indexes every intermediate without hovering.
//!
//! Only instructions in the requested range get a hint. The maps come from the
//! snapshot's per-computation cache, so scrolling through a fusion composes its maps
//! once. `short` mode shows the map's head truncated to
//! [`Settings::SHORT_HINT_CHARS`] with the full map (and its domain) in the tooltip;
//! `full` shows the whole map on one line.

use std::ops::Range;

use tower_lsp_server::ls_types::{
    InlayHint, InlayHintKind, InlayHintLabel, InlayHintTooltip, MarkupContent, MarkupKind,
};

use super::maps::{calling_fusion, module_index, print_options};
use super::position::{PositionCursor, PositionEncoding};
use super::settings::{InlayHintMode, Settings};
use super::snapshot::Snapshot;
use crate::algebra::PrintOptions;
use crate::analysis::operand_indexing::operand_map_to_string;
use crate::analysis::{OperandIndexing, OperandMap};
use crate::hover::map_blocks;
use crate::model::{ComputationId, Module};
use crate::syntax::ranges_touch;

/// At most this many hints per request. Editors ask for the visible lines; a
/// request for a whole 500,000-instruction fusion would otherwise build (and
/// serialize) gigabytes of hints. The first ones in text order are answered.
pub const MAX_HINTS: usize = 5_000;

/// The hints for instructions of fused computations that start inside `range` (bytes).
pub fn inlay_hints(
    snapshot: &Snapshot,
    range: Range<usize>,
    settings: &Settings,
    encoding: PositionEncoding,
) -> Vec<InlayHint> {
    if snapshot.is_mlir() {
        return super::mlir::inlay_hints(snapshot, range, settings, encoding);
    }
    if settings.inlay_hints == InlayHintMode::Off {
        return Vec::new();
    }
    let mut hints = Vec::new();
    for module in &snapshot.model().modules {
        for computation in module.computations() {
            let id = computation.id;
            if !ranges_touch(&computation.range(), &range) || calling_fusion(module, id).is_none() {
                continue;
            }
            computation_hints(snapshot, module, id, &range, settings, encoding, &mut hints);
            if hints.len() >= MAX_HINTS {
                tracing::info!(
                    "inlay hints: more than {MAX_HINTS} instructions in the requested range; the first {MAX_HINTS} are hinted"
                );
                return hints;
            }
        }
    }
    hints
}

fn computation_hints(
    snapshot: &Snapshot,
    module: &Module,
    id: ComputationId,
    range: &Range<usize>,
    settings: &Settings,
    encoding: PositionEncoding,
    hints: &mut Vec<InlayHint>,
) {
    let Some(module_index) = module_index(snapshot, module) else {
        return;
    };
    let fused = snapshot.fused_maps(module_index, id.index());
    let computation = module.computation(id);
    let mut positions = PositionCursor::new(snapshot.syntax(), encoding);
    for instruction in &computation.model().instructions {
        if hints.len() >= MAX_HINTS {
            return;
        }
        let at = computation.abs(instruction.range);
        if instruction.synthetic || !range.contains(&at.start) {
            continue;
        }
        let reaching: Vec<(usize, OperandIndexing)> = fused
            .reaching(instruction.id.index())
            .map(|(k, reached)| (k, reached.to_entry()))
            .collect();
        if let Some(hint) = hint(&reaching, fused.outputs.len(), settings) {
            let position = positions.position(at.end);
            hints.push(InlayHint {
                position,
                label: InlayHintLabel::String(hint.label),
                kind: Some(InlayHintKind::TYPE),
                text_edits: None,
                tooltip: Some(InlayHintTooltip::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: hint.tooltip,
                })),
                padding_left: Some(true),
                padding_right: None,
                data: None,
            });
        }
    }
}

/// A hint's text and its tooltip.
struct Hint {
    label: String,
    tooltip: String,
}

/// The hint for one instruction from the maps of the fusion outputs that reach it
/// (`(output, maps)`, in output order): the first map, then `(+N)` for the other
/// distinct maps; every output's maps in the tooltip. `None` when no output reads it.
fn hint(
    reaching: &[(usize, OperandIndexing)],
    outputs: usize,
    settings: &Settings,
) -> Option<Hint> {
    let mut distinct: Vec<&OperandMap> = Vec::new();
    for (_, entry) in reaching {
        for m in &entry.maps {
            if !distinct.contains(&m) {
                distinct.push(m);
            }
        }
    }
    let unknown = reaching.iter().any(|(_, e)| e.unknown.is_some());
    let one_line = print_options(settings, false);
    let mut label = match distinct.first() {
        Some(first) => match settings.inlay_hints {
            InlayHintMode::Full => operand_map_to_string(first, &one_line)
                .trim_end()
                .to_string(),
            _ => truncate(&head(first, &one_line), Settings::SHORT_HINT_CHARS),
        },
        None if unknown => "unknown".to_string(),
        None => return None,
    };
    if distinct.len() > 1 {
        label.push_str(&format!(" (+{})", distinct.len() - 1));
    }
    if unknown && !distinct.is_empty() {
        label.push_str(" (+unknown)");
    }
    let multiline = print_options(settings, true);
    let mut tooltip = String::new();
    for (k, entry) in reaching {
        let from = if outputs > 1 {
            format!("From output {k} of the fusion")
        } else {
            "From the fusion output".to_string()
        };
        tooltip.push_str(&format!(
            "{from} to this instruction:\n\n{}\n",
            map_blocks(entry, &multiline)
        ));
    }
    Some(Hint {
        label,
        tooltip: tooltip.trim_end().to_string(),
    })
}

/// The map without its domain: `(d0, d1)[s0] -> (d1, s0)`.
fn head(m: &crate::analysis::OperandMap, options: &PrintOptions) -> String {
    let printed = m.map.print(options);
    match printed.find(", domain:") {
        Some(end) => printed[..end].to_string(),
        None => printed,
    }
}

/// At most `limit` characters, ending in `…` when cut.
fn truncate(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(limit.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
