//! Inlay hints inside fused computations: after each instruction, the simplified map
//! from the fusion's output index to this instruction's index (`(d0, d1) -> (d1, d0)`),
//! so a reader sees how the kernel indexes every intermediate without hovering. In
//! a document whose functions compose (StableHLO), a function's result plays the
//! fusion output's role ([`super::maps::Composer`]).
//!
//! Only instructions in the requested range get a hint. The maps come from the
//! snapshot's per-computation cache, so scrolling through a fusion composes its maps
//! once. `short` mode shows the map's head truncated to
//! [`Config::SHORT_HINT_CHARS`] with the full map (and its domain) in the tooltip;
//! `full` shows the whole map on one line.

use std::ops::Range;

use super::config::{Config, InlayHintMode};
use super::maps::{composer, module_id, Composer};
use super::snapshot::HloSnapshot;
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

/// A hint after the bytes it describes.
#[derive(Clone, Debug, PartialEq)]
pub struct InlayHint {
    /// Where it stands: the end of what it describes.
    pub offset: usize,
    pub label: String,
    /// Markdown: every map behind the label.
    pub tooltip: Option<String>,
    /// Whether a space separates it from the text after it too.
    pub pad_right: bool,
}

/// The hints for instructions of fused computations that start inside `range` (bytes),
/// in text order.
pub fn inlay_hints(snapshot: &HloSnapshot, range: Range<usize>, config: &Config) -> Vec<InlayHint> {
    if config.inlay_hints == InlayHintMode::Off {
        return Vec::new();
    }
    let mut hints = Vec::new();
    let chunks = snapshot.syntax().chunks();
    for module in &snapshot.model().modules {
        // Only the computations whose chunks the range touches are built: an editor
        // asks for the lines it shows, and building every computation of a 600 MB
        // dump to find them took 18 s.
        let shown = (0..module.computation_count())
            .map(|k| ComputationId(k as u32))
            .filter(|&id| {
                let chunk = chunks.at(module.chunk_of(id));
                ranges_touch(&(chunk.start..chunk.start + chunk.chunk.len()), &range)
            });
        for computation in shown.map(|id| module.computation(id)) {
            let id = computation.id;
            if !ranges_touch(&computation.range(), &range) {
                continue;
            }
            let Some(composer) = composer(snapshot, module, id) else {
                continue;
            };
            let from = match composer {
                Composer::Fusion(_) => "fusion",
                Composer::Function { .. } => "function",
            };
            computation_hints(snapshot, module, id, &range, config, from, &mut hints);
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
    snapshot: &HloSnapshot,
    module: &Module,
    id: ComputationId,
    range: &Range<usize>,
    config: &Config,
    from: &str,
    hints: &mut Vec<InlayHint>,
) {
    let Some(module_id) = module_id(snapshot, module) else {
        return;
    };
    let fused = snapshot.fused_maps(module_id, id);
    let computation = module.computation(id);
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
        if let Some(hint) = hint(&reaching, fused.outputs.len(), config, from) {
            hints.push(InlayHint {
                offset: at.end,
                label: hint.label,
                tooltip: Some(hint.tooltip),
                pad_right: false,
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
/// distinct maps; every output's maps in the tooltip (`from`: what has them, the
/// "fusion" or the "function"). `None` when no output reads it.
fn hint(
    reaching: &[(usize, OperandIndexing)],
    outputs: usize,
    config: &Config,
    from: &str,
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
    let one_line = config.print_options(false);
    let mut label = match distinct.first() {
        Some(first) => match config.inlay_hints {
            InlayHintMode::Full => operand_map_to_string(first, &one_line)
                .trim_end()
                .to_string(),
            _ => truncate(&head(first, &one_line), Config::SHORT_HINT_CHARS),
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
    let multiline = config.print_options(true);
    let mut tooltip = String::new();
    for (k, entry) in reaching {
        let from = match (outputs > 1, from) {
            (true, _) => format!("From output {k} of the {from}"),
            (false, "function") => "From the function's result".to_string(),
            (false, _) => format!("From the {from} output"),
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
