//! Semantic tokens (full and delta) in the protocol's encoding, with a legend made of
//! the standard token types so every theme colours them without configuration; which
//! bytes are which token is [`crate::ide::semantic_tokens`].
//!
//! Delta requests diff the new token array against the previous result sent for the
//! document (common prefix and suffix, one edit), which keeps typing in a large
//! dump cheap on the wire.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::position::{to_position, PositionCursor, PositionEncoding};
use super::snapshot::Snapshot;
use super::workspace::lock;
use crate::ide;
use tower_lsp_server::ls_types::{
    SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokens, SemanticTokensDelta,
    SemanticTokensEdit, SemanticTokensLegend, Uri,
};

/// Token types, in the order of [`ide::semantic_tokens::TokenKind`].
const TYPES: [SemanticTokenType; 10] = [
    SemanticTokenType::KEYWORD,
    SemanticTokenType::COMMENT,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::TYPE,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::ENUM_MEMBER,
    SemanticTokenType::STRING,
    SemanticTokenType::NUMBER,
    SemanticTokenType::NAMESPACE,
];
pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TYPES.to_vec(),
        token_modifiers: vec![
            SemanticTokenModifier::DECLARATION,
            SemanticTokenModifier::DEFAULT_LIBRARY,
        ],
    }
}

/// Bytes of text up to which the whole document's tokens are answered (`full`,
/// `full/delta`). Past it an editor asks for what it shows (`range`): the tokens of a
/// 60 MB dump took 7 s to compute, are millions of numbers the client must parse, and
/// were kept for the next delta; a larger document gets no whole-document answer.
pub const FULL_TOKENS_MAX_BYTES: usize = 16 << 20;

/// Whether `full` and `full/delta` answer for `snapshot` (see [`FULL_TOKENS_MAX_BYTES`]).
pub fn answers_full(snapshot: &Snapshot) -> bool {
    snapshot.syntax().len() <= FULL_TOKENS_MAX_BYTES
}

/// All tokens of a snapshot, LSP-encoded (relative positions, one line per token).
pub fn tokens(snapshot: &Snapshot, encoding: PositionEncoding) -> Vec<SemanticToken> {
    tokens_in(snapshot, 0..snapshot.syntax().len(), encoding)
}

/// The tokens overlapping `range` (document bytes), LSP-encoded from the document's
/// start as a `range` answer is.
pub fn tokens_in(
    snapshot: &Snapshot,
    range: std::ops::Range<usize>,
    encoding: PositionEncoding,
) -> Vec<SemanticToken> {
    let raw = match &snapshot.ide {
        ide::Snapshot::Hlo(hlo) => ide::semantic_tokens::tokens_in(hlo, range),
        // The HLO grammar's tokens would be wrong on MLIR text.
        ide::Snapshot::Mlir(_) => return Vec::new(),
    };
    let doc = snapshot.syntax();
    let mut encoded = Vec::with_capacity(raw.len());
    let (mut last_line, mut last_start) = (0u32, 0u32);
    let mut positions = PositionCursor::new(doc, encoding);
    for token in raw {
        let start = positions.position(token.start);
        let end = positions.position(token.end);
        // Split multi-line tokens (block comments) into one token per line.
        for line in start.line..=end.line {
            let from = if line == start.line {
                start.character
            } else {
                0
            };
            let to = if line == end.line {
                end.character
            } else {
                // The end of this line's content, before its terminator.
                let line_start = doc.line_start(line as usize).unwrap_or(doc.len());
                let content = doc.line_text(line as usize).map_or(0, |text| text.len());
                to_position(doc, line_start + content, encoding).character
            };
            if to <= from {
                continue;
            }
            let delta_line = line - last_line;
            let delta_start = if delta_line == 0 {
                from - last_start
            } else {
                from
            };
            encoded.push(SemanticToken {
                delta_line,
                delta_start,
                length: to - from,
                token_type: token.kind as u32,
                token_modifiers_bitset: token.modifiers,
            });
            last_line = line;
            last_start = from;
        }
    }
    encoded
}

/// The last result sent per document, for delta requests.
#[derive(Debug, Default)]
pub struct TokenCache {
    results: Mutex<HashMap<Uri, (String, Vec<SemanticToken>)>>,
    next_id: AtomicU64,
}

impl TokenCache {
    /// Full tokens; remembered for the next delta.
    pub fn full(&self, uri: &Uri, tokens: Vec<SemanticToken>) -> SemanticTokens {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed).to_string();
        lock(&self.results).insert(uri.clone(), (id.clone(), tokens.clone()));
        SemanticTokens {
            result_id: Some(id),
            data: tokens,
        }
    }

    /// The edit from result `previous` to `tokens`; `None` when `previous` is not the
    /// last result we sent (the client then gets full tokens).
    pub fn delta(
        &self,
        uri: &Uri,
        previous: &str,
        tokens: Vec<SemanticToken>,
    ) -> Option<SemanticTokensDelta> {
        let mut results = lock(&self.results);
        let (id, old) = results.get(uri)?;
        if id != previous {
            return None;
        }
        let edit = diff(old, &tokens);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed).to_string();
        results.insert(uri.clone(), (id.clone(), tokens));
        Some(SemanticTokensDelta {
            result_id: Some(id),
            edits: edit.into_iter().collect(),
        })
    }

    pub fn forget(&self, uri: &Uri) {
        lock(&self.results).remove(uri);
    }
}

/// One edit turning `old` into `new` (indices count integers: 5 per token).
fn diff(old: &[SemanticToken], new: &[SemanticToken]) -> Option<SemanticTokensEdit> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let removed = old.len() - prefix - suffix;
    let inserted = &new[prefix..new.len() - suffix];
    if removed == 0 && inserted.is_empty() {
        return None;
    }
    Some(SemanticTokensEdit {
        start: (prefix * 5) as u32,
        delete_count: (removed * 5) as u32,
        data: Some(inserted.to_vec()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(delta_line: u32, length: u32) -> SemanticToken {
        SemanticToken {
            delta_line,
            delta_start: 0,
            length,
            token_type: 0,
            token_modifiers_bitset: 0,
        }
    }

    /// Applies an edit to a flat integer array, as the client does.
    fn apply(old: &[SemanticToken], edit: &SemanticTokensEdit) -> Vec<SemanticToken> {
        let mut tokens = old.to_vec();
        let start = edit.start as usize / 5;
        let end = start + edit.delete_count as usize / 5;
        tokens.splice(start..end, edit.data.clone().unwrap_or_default());
        tokens
    }

    #[test]
    fn delta_edit_reproduces_the_new_tokens() {
        let old: Vec<_> = (0..6).map(|i| token(1, i)).collect();
        let cases = [
            vec![
                token(1, 0),
                token(1, 9),
                token(1, 2),
                token(1, 3),
                token(1, 4),
                token(1, 5),
            ],
            old[..3].to_vec(),
            [old.clone(), vec![token(2, 2)]].concat(),
            vec![],
        ];
        for new in cases {
            let edit = diff(&old, &new).unwrap();
            assert_eq!(apply(&old, &edit), new);
        }
        assert!(diff(&old, &old).is_none());
    }
}
