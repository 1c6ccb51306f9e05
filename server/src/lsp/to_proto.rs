//! The library's answers ([`crate::ide`]) as LSP types: byte ranges become positions
//! in the client's encoding, plain kinds become protocol kinds. Nothing here decides
//! what an answer says.

use std::path::Path;
use std::str::FromStr;

use tower_lsp_server::ls_types::{
    self as lsp, DocumentSymbol, HoverContents, InlayHintKind, InlayHintLabel, InlayHintTooltip,
    Location, MarkupContent, MarkupKind, OneOf, SymbolKind, Uri, WorkspaceSymbol,
};

use super::position::{PositionCursor, PositionEncoding};
use super::snapshot::Snapshot;
use crate::ide::hover::Hover;
use crate::ide::inlay_hints::InlayHint;
use crate::ide::navigation::{NamedSymbol, Outline, OutlineKind};
use crate::ide::source::DocumentLink;

/// A markdown hover over its range.
pub fn hover(snapshot: &Snapshot, hover: Hover, encoding: PositionEncoding) -> lsp::Hover {
    lsp::Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: hover.text(),
        }),
        range: Some(snapshot.range(hover.range, encoding)),
    }
}

/// Inlay hints, in text order (positions are found walking forward).
pub fn inlay_hints(
    snapshot: &Snapshot,
    hints: Vec<InlayHint>,
    encoding: PositionEncoding,
) -> Vec<lsp::InlayHint> {
    let mut positions = PositionCursor::new(snapshot.syntax(), encoding);
    hints
        .into_iter()
        .map(|hint| lsp::InlayHint {
            position: positions.position(hint.offset),
            label: InlayHintLabel::String(hint.label),
            kind: Some(InlayHintKind::TYPE),
            text_edits: None,
            tooltip: hint.tooltip.map(|value| {
                InlayHintTooltip::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value,
                })
            }),
            padding_left: Some(true),
            padding_right: hint.pad_right.then_some(true),
            data: None,
        })
        .collect()
}

/// Locations in the snapshot's document.
pub fn locations(
    snapshot: &Snapshot,
    ranges: Vec<std::ops::Range<usize>>,
    encoding: PositionEncoding,
) -> Vec<Location> {
    ranges
        .into_iter()
        .map(|range| Location::new(snapshot.uri.clone(), snapshot.range(range, encoding)))
        .collect()
}

/// The protocol's kind of an outline entry.
pub fn symbol_kind(kind: OutlineKind) -> SymbolKind {
    match kind {
        OutlineKind::Module => SymbolKind::MODULE,
        OutlineKind::Function => SymbolKind::FUNCTION,
        OutlineKind::Field => SymbolKind::FIELD,
        OutlineKind::Variable => SymbolKind::VARIABLE,
        OutlineKind::Constant => SymbolKind::CONSTANT,
        OutlineKind::Operator => SymbolKind::OPERATOR,
    }
}

/// A document's outline as nested document symbols.
#[allow(deprecated)] // `DocumentSymbol::deprecated` must still be written.
pub fn document_symbol(
    snapshot: &Snapshot,
    outline: Outline,
    encoding: PositionEncoding,
) -> DocumentSymbol {
    DocumentSymbol {
        name: outline.name,
        detail: outline.detail,
        kind: symbol_kind(outline.kind),
        tags: None,
        deprecated: None,
        range: snapshot.range(outline.range, encoding),
        selection_range: snapshot.range(outline.selection, encoding),
        children: outline.children.map(|children| {
            children
                .into_iter()
                .map(|child| document_symbol(snapshot, child, encoding))
                .collect()
        }),
    }
}

/// A symbol of an open document found by a workspace query.
pub fn workspace_symbol(
    snapshot: &Snapshot,
    symbol: NamedSymbol,
    encoding: PositionEncoding,
) -> WorkspaceSymbol {
    WorkspaceSymbol {
        name: symbol.name,
        kind: symbol_kind(symbol.kind),
        tags: None,
        container_name: Some(symbol.container),
        location: OneOf::Left(Location::new(
            snapshot.uri.clone(),
            snapshot.range(symbol.range, encoding),
        )),
        data: None,
    }
}

/// A link to a file, opened at its line; `None` when the path makes no URI.
pub fn document_link(
    snapshot: &Snapshot,
    link: DocumentLink,
    encoding: PositionEncoding,
) -> Option<lsp::DocumentLink> {
    Some(lsp::DocumentLink {
        range: snapshot.range(link.range, encoding),
        target: Some(file_target(&link.path, link.line)?),
        tooltip: Some(link.tooltip),
        data: None,
    })
}

/// `file:///path#L42` (the line fragment editors open at).
fn file_target(path: &Path, line: Option<u32>) -> Option<Uri> {
    let uri = Uri::from_file_path(path)?;
    match line {
        Some(line) => Uri::from_str(&format!("{}#L{line}", uri.as_str())).ok(),
        None => Some(uri),
    }
}
