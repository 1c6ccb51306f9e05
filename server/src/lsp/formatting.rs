//! `textDocument/formatting` and `textDocument/rangeFormatting`: the edits that print
//! the document as XLA prints it ([`crate::format`]), in the form the `format.style`
//! setting names (by default the form the file is written in), its comments kept.
//! A document the printer refuses (a syntax error) gets a request error with the
//! reason and its line, never edits that lose text.

use std::ops::Range;

use tower_lsp_server::jsonrpc::{Error, ErrorCode};
use tower_lsp_server::ls_types::TextEdit;

use super::position::PositionEncoding;
use super::snapshot::Snapshot;
use crate::{format, ide};

/// LSP's `RequestFailed`: the request was valid but could not be answered.
const REQUEST_FAILED: i64 = -32803;

/// The edits formatting the document, or only the instructions and computations
/// `range` touches; `None` for a document that is not HLO (MLIR is not formatted).
pub fn edits(
    snapshot: &Snapshot,
    (style, range): (Option<format::Style>, Option<Range<usize>>),
    encoding: PositionEncoding,
) -> Result<Option<Vec<TextEdit>>, Error> {
    let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
        return Ok(None);
    };
    let edits = hlo.format_edits(style, range).map_err(|refusal| {
        let (line, _) = crate::syntax::line_col(hlo.text(), refusal.offset);
        Error {
            code: ErrorCode::ServerError(REQUEST_FAILED),
            message: format!("not formatted: line {line}: {refusal}").into(),
            data: None,
        }
    })?;
    Ok(Some(
        edits
            .into_iter()
            .map(|edit| TextEdit {
                range: snapshot.range(edit.range, encoding),
                new_text: edit.new_text,
            })
            .collect(),
    ))
}
