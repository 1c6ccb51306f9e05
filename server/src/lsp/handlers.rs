//! One router per request: each takes the request's snapshot, routes on its language
//! ([`ide::Snapshot::Hlo`] or [`ide::Snapshot::Mlir`]), calls the feature in
//! [`crate::ide`] with byte offsets, and converts the answer ([`super::to_proto`]).
//! No feature logic lives here: a language without the feature answers nothing.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tower_lsp_server::ls_types::{
    CodeLens, Command, DocumentHighlight, DocumentHighlightKind, DocumentLink, DocumentSymbol,
    FoldingRange, FoldingRangeKind, Hover, InlayHint, Location, TextEdit, WorkspaceEdit,
    WorkspaceSymbol,
};

use super::position::PositionEncoding;
use super::snapshot::Snapshot;
use super::to_proto;
use crate::hover::Detail;
use crate::ide::history::PassHistory;
use crate::ide::{self, navigation, Config};
use crate::profile::Profile;

/// The profile joined to an HLO snapshot's version (kept in the snapshot).
fn joined(
    hlo: &ide::HloSnapshot,
    profile: Option<&Arc<Profile>>,
) -> Option<Arc<ide::profile::Joined>> {
    profile.map(|p| ide::profile::joined(hlo, p))
}

/// The hover at `offset`; [`Detail::Full`] is the fusion-maps panel's. With the pass
/// history of the document's dump directory, an instruction's hover says which pass
/// made it; with a profile, what it was measured to take.
pub fn hover(
    snapshot: &Snapshot,
    offset: usize,
    config: &Config,
    detail: Detail,
    encoding: PositionEncoding,
    history: Option<PassHistory>,
    profile: Option<&Arc<Profile>>,
) -> Option<Hover> {
    let hover = match &snapshot.ide {
        ide::Snapshot::Hlo(hlo) => {
            let measured = joined(hlo, profile);
            ide::hover::hover(hlo, offset, config, detail)
                .map(|h| match history {
                    Some(history) => ide::history::with_history(hlo, h, history),
                    None => h,
                })
                .map(|h| match &measured {
                    Some(j) => ide::profile::with_measurement(hlo, h, j),
                    None => h,
                })
        }
        ide::Snapshot::Mlir(mlir) => ide::mlir::hover(mlir, offset, config),
    }?;
    Some(to_proto::hover(snapshot, hover, encoding))
}

/// The inlay hints of `range` (bytes).
pub fn inlay_hints(
    snapshot: &Snapshot,
    range: std::ops::Range<usize>,
    config: &Config,
    encoding: PositionEncoding,
) -> Vec<InlayHint> {
    let hints = match &snapshot.ide {
        ide::Snapshot::Hlo(hlo) => ide::inlay_hints::inlay_hints(hlo, range, config),
        ide::Snapshot::Mlir(mlir) => ide::mlir::inlay_hints(mlir, range, config),
    };
    to_proto::inlay_hints(snapshot, hints, encoding)
}

/// Where the name at `offset` is defined (or, on a definition, what it leads to).
pub fn definition(snapshot: &Snapshot, offset: usize, encoding: PositionEncoding) -> Vec<Location> {
    let ranges = match &snapshot.ide {
        ide::Snapshot::Hlo(hlo) => navigation::definition(hlo.model(), offset),
        ide::Snapshot::Mlir(mlir) => ide::mlir::definition(mlir, offset),
    };
    to_proto::locations(snapshot, ranges, encoding)
}

/// Every use of the name at `offset`, with its definition when asked.
pub fn references(
    snapshot: &Snapshot,
    offset: usize,
    include_declaration: bool,
    encoding: PositionEncoding,
) -> Vec<Location> {
    let ranges = match &snapshot.ide {
        ide::Snapshot::Hlo(hlo) => navigation::occurrences_at(hlo.model(), offset)
            .into_iter()
            .filter(|o| include_declaration || !o.is_definition)
            .map(|o| o.range)
            .collect(),
        ide::Snapshot::Mlir(mlir) => ide::mlir::occurrences(mlir, offset, include_declaration),
    };
    to_proto::locations(snapshot, ranges, encoding)
}

/// The occurrences of the name at `offset`: HLO marks its definition as written.
pub fn highlights(
    snapshot: &Snapshot,
    offset: usize,
    encoding: PositionEncoding,
) -> Vec<DocumentHighlight> {
    let highlight = |range, kind| DocumentHighlight {
        range: snapshot.range(range, encoding),
        kind,
    };
    match &snapshot.ide {
        ide::Snapshot::Hlo(hlo) => navigation::occurrences_at(hlo.model(), offset)
            .into_iter()
            .map(|o| {
                let kind = if o.is_definition {
                    DocumentHighlightKind::WRITE
                } else {
                    DocumentHighlightKind::READ
                };
                highlight(o.range, Some(kind))
            })
            .collect(),
        ide::Snapshot::Mlir(mlir) => ide::mlir::occurrences(mlir, offset, true)
            .into_iter()
            .map(|range| highlight(range, None))
            .collect(),
    }
}

/// The range a rename at `offset` replaces; MLIR renames are not offered (yet).
pub fn rename_range(snapshot: &Snapshot, offset: usize) -> Option<std::ops::Range<usize>> {
    match &snapshot.ide {
        ide::Snapshot::Hlo(hlo) => navigation::rename_range(hlo.model(), offset),
        ide::Snapshot::Mlir(_) => None,
    }
}

/// The workspace edit renaming the name at `offset`, or why it cannot be renamed.
pub fn rename(
    snapshot: &Snapshot,
    offset: usize,
    new_name: &str,
    encoding: PositionEncoding,
) -> Result<Option<WorkspaceEdit>, navigation::RenameError> {
    let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
        return Ok(None);
    };
    let Some(edits) = navigation::rename(hlo.model(), offset, new_name)? else {
        return Ok(None);
    };
    let edits = edits
        .into_iter()
        .map(|e| TextEdit::new(snapshot.range(e.range, encoding), e.new_text))
        .collect();
    let changes = std::iter::once((snapshot.uri.clone(), edits)).collect();
    Ok(Some(WorkspaceEdit::new(changes)))
}

/// The document's outline.
pub fn document_symbols(snapshot: &Snapshot, encoding: PositionEncoding) -> Vec<DocumentSymbol> {
    let outline = match &snapshot.ide {
        ide::Snapshot::Hlo(hlo) => navigation::outline(hlo),
        ide::Snapshot::Mlir(mlir) => ide::mlir::outline(mlir),
    };
    outline
        .into_iter()
        .map(|entry| to_proto::document_symbol(snapshot, entry, encoding))
        .collect()
}

/// Most symbols one workspace query returns.
pub const WORKSPACE_SYMBOL_LIMIT: usize = 2000;

/// Computations and instructions of the open HLO documents whose name contains
/// `query` (case-insensitive).
pub fn workspace_symbols(
    snapshots: &[Arc<Snapshot>],
    query: &str,
    encoding: PositionEncoding,
) -> Vec<WorkspaceSymbol> {
    let query = query.to_lowercase();
    let mut found = Vec::new();
    for snapshot in snapshots {
        let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
            continue;
        };
        let mut named = Vec::new();
        let room = WORKSPACE_SYMBOL_LIMIT - found.len();
        navigation::symbols_matching(hlo.model(), &query, room, &mut named);
        found.extend(
            named
                .into_iter()
                .map(|symbol| to_proto::workspace_symbol(snapshot, symbol, encoding)),
        );
        if found.len() >= WORKSPACE_SYMBOL_LIMIT {
            break;
        }
    }
    found
}

/// Links from source metadata and stack-frame tables (HLO) or locations (MLIR) to
/// files under `roots` or beside the document.
pub fn document_links(
    snapshot: &Snapshot,
    roots: &[PathBuf],
    encoding: PositionEncoding,
) -> Vec<DocumentLink> {
    let folder = snapshot
        .uri
        .to_file_path()
        .and_then(|p| p.parent().map(|d| d.to_path_buf()));
    let links = match &snapshot.ide {
        ide::Snapshot::Hlo(hlo) => ide::source::document_links(hlo, roots, folder.as_deref()),
        ide::Snapshot::Mlir(mlir) => {
            ide::source::mlir_document_links(mlir, roots, folder.as_deref())
        }
    };
    links
        .into_iter()
        .filter_map(|link| to_proto::document_link(snapshot, link, encoding))
        .collect()
}

/// Folding ranges over whole lines, outer ones first; HLO chunks mean nothing in MLIR.
pub fn folding_ranges(snapshot: &Snapshot) -> Vec<FoldingRange> {
    let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
        return Vec::new();
    };
    // A fold is lines only: no column is counted (a 600 MB dump has a quarter of a
    // million computations to fold).
    let line = |offset: usize| snapshot.syntax().line_of(offset).0 as u32;
    let mut ranges: Vec<FoldingRange> = ide::folding::folding_ranges(hlo)
        .into_iter()
        .map(|bytes| (line(bytes.start), line(bytes.end)))
        .filter(|(start, end)| end > start)
        .map(|(start, end)| FoldingRange {
            start_line: start,
            start_character: None,
            end_line: end,
            end_character: None,
            kind: Some(FoldingRangeKind::Region),
            collapsed_text: None,
        })
        .collect();
    ranges.sort_by_key(|r| (r.start_line, std::cmp::Reverse(r.end_line)));
    ranges
}

/// Adds the computations and fusions of indexed files that are not open (see
/// [`super::workspace_index`]) whose name contains `query`, up to the limit.
pub fn indexed_symbols(
    files: &[Arc<super::workspace_index::IndexedFile>],
    open: &[Arc<Snapshot>],
    query: &str,
    encoding: PositionEncoding,
    found: &mut Vec<WorkspaceSymbol>,
) {
    use crate::dump::index::IndexedKind;
    use tower_lsp_server::ls_types::{OneOf, Position, Range as LspRange, SymbolKind};
    let query = query.to_lowercase();
    for file in files {
        if open.iter().any(|s| s.uri == file.uri) {
            continue;
        }
        for symbol in &file.symbols {
            if found.len() >= WORKSPACE_SYMBOL_LIMIT {
                return;
            }
            if !symbol.name.to_lowercase().contains(&query) {
                continue;
            }
            let column = match encoding {
                PositionEncoding::Utf8 => symbol.utf8_column,
                _ => symbol.utf16_column,
            };
            let range = LspRange::new(
                Position::new(symbol.line, column),
                Position::new(symbol.line, column + symbol.len),
            );
            found.push(WorkspaceSymbol {
                name: symbol.name.clone(),
                kind: match symbol.kind {
                    IndexedKind::Computation => SymbolKind::FUNCTION,
                    IndexedKind::Fusion => SymbolKind::FIELD,
                },
                tags: None,
                container_name: Some(symbol.container.clone()),
                location: OneOf::Left(Location::new(file.uri.clone(), range)),
                data: None,
            });
        }
    }
}

/// A lens above every kernel and every instruction the profile measured,
/// unresolved: its estimate or measurement is looked up when the editor resolves it
/// ([`resolve_code_lens`]), for the lenses on screen. With the pass history of the
/// document's dump directory, also a lens on every instruction saying which pass
/// made it (resolved: a lookup each).
pub fn code_lenses(
    snapshot: &Snapshot,
    config: &Config,
    encoding: PositionEncoding,
    history: Option<PassHistory>,
    profile: Option<&Arc<Profile>>,
) -> Vec<CodeLens> {
    let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
        return Vec::new();
    };
    let measured = joined(hlo, profile);
    let mut lenses = kernel_lenses(snapshot, hlo, config, encoding, measured.as_deref());
    if let Some(history) = history {
        let mut positions = super::position::PositionCursor::new(snapshot.syntax(), encoding);
        lenses.extend(ide::history::lenses(hlo, history).into_iter().map(|lens| {
            let start = positions.position(lens.range.start);
            let end = positions.position(lens.range.end);
            CodeLens {
                range: tower_lsp_server::ls_types::Range::new(start, end),
                command: Some(Command {
                    title: lens.title,
                    command: super::history_command::SHOW.to_string(),
                    arguments: Some(vec![json!({
                        "uri": snapshot.uri.as_str(),
                        "computation": lens.computation,
                        "instruction": lens.instruction,
                    })]),
                }),
                data: None,
            }
        }));
    }
    lenses
}

fn kernel_lenses(
    snapshot: &Snapshot,
    hlo: &ide::HloSnapshot,
    config: &Config,
    encoding: PositionEncoding,
    measured: Option<&ide::profile::Joined>,
) -> Vec<CodeLens> {
    let mut positions = super::position::PositionCursor::new(snapshot.syntax(), encoding);
    let mut lenses: Vec<CodeLens> = ide::profile::lens_sites(hlo, config, measured)
        .into_iter()
        .map(|kernel| {
            let start = positions.position(kernel.range.start);
            let end = positions.position(kernel.range.end);
            let m = hlo.model().module(kernel.module);
            let c = m.computation(kernel.computation);
            CodeLens {
                range: tower_lsp_server::ls_types::Range::new(start, end),
                command: None,
                data: Some(json!({
                    "uri": snapshot.uri.as_str(),
                    "module": kernel.module.index(),
                    "computation": c.name,
                    "instruction": c.instruction(kernel.instruction).name,
                })),
            }
        })
        .collect();
    // Memory lenses (ENTRY, while bodies) come with their titles.
    let mut positions = super::position::PositionCursor::new(snapshot.syntax(), encoding);
    lenses.extend(ide::memory::lenses(hlo).into_iter().map(|lens| CodeLens {
        range: tower_lsp_server::ls_types::Range::new(
            positions.position(lens.range.start),
            positions.position(lens.range.end),
        ),
        command: Some(Command {
            title: lens.title,
            command: String::new(),
            arguments: None,
        }),
        data: None,
    }));
    lenses
}

/// The lens with its title: the instruction's measurement or the kernel's
/// estimate, found again by name in this version. A title-only lens (no command to
/// run).
pub fn resolve_code_lens(
    snapshot: &Snapshot,
    mut lens: CodeLens,
    config: &Config,
    profile: Option<&Arc<Profile>>,
) -> CodeLens {
    if lens.command.is_some() {
        return lens; // a memory lens comes with its title
    }
    let title = (|| {
        let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
            return None;
        };
        let data = lens.data.as_ref()?;
        let at = ide::cost::kernel_named(
            hlo,
            crate::model::ModuleId(u32::try_from(data.get("module")?.as_u64()?).ok()?),
            data.get("computation")?.as_str()?,
            data.get("instruction")?.as_str()?,
        )?;
        let measured = joined(hlo, profile);
        Some(ide::profile::lens_title(
            hlo,
            &at,
            config,
            measured.as_deref(),
        ))
        .filter(|t| !t.is_empty())
    })();
    lens.command = Some(Command {
        title: title.unwrap_or_else(|| "no estimate: the instruction changed".to_string()),
        command: String::new(),
        arguments: None,
    });
    lens
}

/// The costliest kernels of the document, for a ranked list that jumps to each.
pub fn kernels(
    snapshot: &Snapshot,
    config: &Config,
    limit: usize,
    encoding: PositionEncoding,
) -> serde_json::Value {
    let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
        return json!({ "device": config.device.name, "kernels": [] });
    };
    let kernels: Vec<serde_json::Value> = ide::cost::ranked(hlo, config, limit)
        .into_iter()
        .map(|k| {
            json!({
                "name": k.name,
                "computation": k.computation,
                "kind": k.kind,
                "exec_time_us": k.exec_time_us,
                "count": k.count,
                "per_step_us": k.per_step_us,
                "summary": k.summary,
                "range": snapshot.range(k.range, encoding),
            })
        })
        .collect();
    json!({ "device": config.device.name, "kernels": kernels })
}

/// The instructions of the most measured time, per measured module of the
/// document: `{profile: {file, format, run} | null, message, modules: [{module,
/// executions, step_us, measured, never_ran, unmatched, instructions: [{name,
/// computation, measured_us, percent, cumulative_percent, count, self_us,
/// estimate_us, ratio, range}]}]}`; `message` says why there is none.
pub fn hottest(
    snapshot: &Snapshot,
    config: &Config,
    limit: usize,
    encoding: PositionEncoding,
    profile: Result<Arc<Profile>, String>,
) -> serde_json::Value {
    let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
        return json!({ "profile": null, "message": "not an HLO document", "modules": [] });
    };
    let profile = match profile {
        Ok(p) => p,
        Err(why) => return json!({ "profile": null, "message": why, "modules": [] }),
    };
    let measured = ide::profile::joined(hlo, &profile);
    let modules: Vec<serde_json::Value> = ide::profile::hottest(hlo, &measured, config, limit)
        .into_iter()
        .map(|m| {
            let rows: Vec<serde_json::Value> = m
                .rows
                .into_iter()
                .map(|r| {
                    json!({
                        "name": r.name,
                        "computation": r.computation,
                        "measured_us": r.measured_us,
                        "percent": r.percent,
                        "cumulative_percent": r.cumulative_percent,
                        "count": r.count,
                        "self_us": r.self_us,
                        "estimate_us": r.estimate_us,
                        "ratio": r.ratio,
                        "range": snapshot.range(r.range, encoding),
                    })
                })
                .collect();
            json!({
                "module": m.module,
                "executions": m.executions,
                "step_us": m.step_us,
                "measured": m.measured,
                "never_ran": m.never_ran,
                "unmatched": m.unmatched,
                "instructions": rows,
            })
        })
        .collect();
    json!({
        "profile": {
            "file": profile.source.file.display().to_string(),
            "format": profile.source.format.as_str(),
            "run": profile.source.run,
        },
        "message": measured.error(),
        "modules": modules,
    })
}

/// The dataflow graph at `offset` as JSON with LSP ranges, its DOT for editors
/// that draw with Graphviz and, when `svg`, the server's own picture; null off any
/// computation (or in MLIR).
pub fn graph(
    snapshot: &Snapshot,
    offset: usize,
    radius: usize,
    svg: bool,
    config: &Config,
    encoding: PositionEncoding,
    profile: Option<&Arc<Profile>>,
) -> serde_json::Value {
    let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
        return serde_json::Value::Null;
    };
    let measured = joined(hlo, profile);
    let Some(g) = ide::graph::graph_at(hlo, offset, radius, config, measured.as_deref()) else {
        return serde_json::Value::Null;
    };
    let mut v = crate::graph::json::to_json(&g, |r| json!(snapshot.range(r.clone(), encoding)));
    v["dot"] = json!(crate::graph::dot::to_dot(&g));
    if svg {
        v["svg"] = json!(crate::graph::svg::to_svg(&g));
    }
    v
}

/// The memory timeline of the computation at `offset` (ENTRY off any scheduled
/// computation), rows with LSP ranges and the SVG; null without a memory answer.
pub fn memory_timeline(
    snapshot: &Snapshot,
    offset: usize,
    encoding: PositionEncoding,
) -> serde_json::Value {
    let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
        return serde_json::Value::Null;
    };
    match ide::memory::timeline_at(hlo, offset) {
        Some(t) => t.to_json(|r| json!(snapshot.range(r.clone(), encoding))),
        None => serde_json::Value::Null,
    }
}
