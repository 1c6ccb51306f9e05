//! The open documents: the client's version and the current [`model::Document`] (its
//! chunks own the text, the only copy the server keeps).
//!
//! Only the document actor ([`super::sync`]) mutates this store, one text-sync
//! notification at a time in the order the client sent them, so a change is always
//! applied on top of its predecessor. Readers never touch it: they get immutable
//! [`Snapshot`]s published after each change.

use std::collections::HashMap;
use std::sync::Arc;

use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};

use super::position::{to_byte_range_clamped, PositionEncoding};
use super::snapshot::Snapshot;
use crate::checks::incremental::Checked;
use crate::language::Language;
use crate::model;

/// One text edit in byte offsets of the text it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteEdit {
    pub range: std::ops::Range<usize>,
    pub new_text: String,
}

/// An open document.
#[derive(Debug)]
pub struct Document {
    pub uri: Uri,
    pub version: i32,
    /// The current version's chunks and model (shared with the snapshots made of it).
    pub model: Arc<model::Document>,
    /// Its diagnostics, per computation, shared with earlier versions where valid.
    pub checked: Arc<Checked>,
    /// HLO or MLIR: which library snapshot its versions make ([`crate::ide::Snapshot`]).
    pub language: Language,
    /// The module-wide answers its versions share ([`crate::ide::module_wide`]).
    pub module_memo: Arc<crate::ide::module_wide::ModuleMemo>,
}

impl Document {
    pub fn new(uri: Uri, version: i32, text: &str) -> Self {
        let model = model::Document::parse(text);
        let checked = Checked::new(&model);
        Self {
            language: Language::Hlo,
            uri,
            version,
            model: Arc::new(model),
            checked: Arc::new(checked),
            module_memo: Arc::default(),
        }
        .with_language(None)
    }

    /// Sets the language from the client's `languageId`, else the file extension,
    /// else the content ([`crate::language::detect`], as `hlo-lsp check` does).
    pub fn with_language(mut self, language_id: Option<&str>) -> Self {
        // The top of the file is enough to tell (and a 50 MB dump is not copied).
        let mut top = String::new();
        for chunk in self.model.syntax().chunks() {
            if top.len() > 64 * 1024 {
                break;
            }
            top.push_str(chunk.text());
        }
        self.language = crate::language::detect(self.uri.path().as_str(), language_id, &top);
        self
    }

    /// Applies the changes of one `didChange` in order (each change's range refers to
    /// the text after the previous change) and returns the byte edits applied.
    pub fn apply_changes(
        &mut self,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
        encoding: PositionEncoding,
    ) -> Vec<ByteEdit> {
        let mut edits = Vec::with_capacity(changes.len());
        for change in changes {
            let syntax = self.model.syntax();
            let range = match change.range {
                Some(range) => to_byte_range_clamped(syntax, range, encoding),
                None => 0..syntax.len(),
            };
            self.apply_edit(&range, &change.text);
            edits.push(ByteEdit {
                range,
                new_text: change.text,
            });
        }
        self.version = version;
        edits
    }

    /// Replaces `range` (char boundaries, as produced by [`super::position`]) by `text`:
    /// a new version sharing every untouched chunk with the previous one.
    fn apply_edit(&mut self, range: &std::ops::Range<usize>, text: &str) {
        let (model, checked) = if range.start == 0 && range.end == self.model.syntax().len() {
            let model = model::Document::parse(text);
            let checked = Checked::new(&model);
            (model, checked)
        } else {
            let (model, change) = self.model.edited(range.start, range.end, text);
            let checked = self.checked.after(&model, &change);
            (model, checked)
        };
        crate::ide::reaper::release(std::mem::replace(&mut self.model, Arc::new(model)));
        crate::ide::reaper::release(std::mem::replace(&mut self.checked, Arc::new(checked)));
    }

    /// An immutable view of the current version for background work, produced by
    /// text-sync notification number `sequence`.
    pub fn snapshot_at(&self, sequence: u64) -> Arc<Snapshot> {
        let name = self.uri.path().as_str().rsplit('/').next().unwrap_or("");
        let ide = crate::ide::Snapshot::new(
            self.model.clone(),
            self.checked.clone(),
            self.language,
            name,
            self.uri.to_file_path().as_deref(),
        )
        // Computed after the diagnostics (`super::diagnostics`): no hover waits for them.
        .with_module_answers(crate::ide::ModuleAnswers::Background)
        .with_module_memo(
            self.module_memo.clone(),
            crate::ide::snapshot::SMALL_DOCUMENT_BYTES,
        );
        Arc::new(Snapshot::new(self.uri.clone(), self.version, sequence, ide))
    }
}

/// All open documents, by URI.
#[derive(Debug, Default)]
pub struct DocumentStore {
    documents: HashMap<Uri, Document>,
}

impl DocumentStore {
    /// Opens (or re-opens, replacing) a document.
    pub fn open(&mut self, uri: Uri, version: i32, text: &str) -> &Document {
        self.open_with_language(uri, version, text, None)
    }

    /// Opens a document whose `languageId` the client gave.
    pub fn open_with_language(
        &mut self,
        uri: Uri,
        version: i32,
        text: &str,
        language_id: Option<&str>,
    ) -> &Document {
        let document = Document::new(uri.clone(), version, text).with_language(language_id);
        crate::ide::reaper::release(self.documents.insert(uri.clone(), document));
        &self.documents[&uri]
    }

    pub fn get_mut(&mut self, uri: &Uri) -> Option<&mut Document> {
        self.documents.get_mut(uri)
    }

    pub fn close(&mut self, uri: &Uri) -> Option<Document> {
        self.documents.remove(uri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Range};

    fn change(start: (u32, u32), end: (u32, u32), text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(
                Position::new(start.0, start.1),
                Position::new(end.0, end.1),
            )),
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn changes_in_one_notification_apply_in_sequence() {
        let uri: Uri = "file:///a.hlo".parse().unwrap();
        let mut document = Document::new(uri, 1, "abc\ndef\n");
        let edits = document.apply_changes(
            2,
            vec![change((0, 1), (0, 2), "XY"), change((1, 0), (1, 3), "")],
            PositionEncoding::Utf16,
        );
        assert_eq!(document.model.syntax().text(), "aXYc\n\n");
        assert_eq!(document.model.syntax().text(), "aXYc\n\n");
        assert_eq!(edits[1].range, 5..8);
        assert_eq!(document.version, 2);
    }

    #[test]
    fn full_replacement_and_out_of_range_edits_stay_inside_the_text() {
        let uri: Uri = "file:///a.hlo".parse().unwrap();
        let mut document = Document::new(uri, 1, "é\n");
        document.apply_changes(
            2,
            vec![change((7, 0), (9, 9), "tail")],
            PositionEncoding::Utf16,
        );
        assert_eq!(document.model.syntax().text(), "é\ntail");
        let full = TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: "new".into(),
        };
        document.apply_changes(3, vec![full], PositionEncoding::Utf8);
        assert_eq!(document.model.syntax().text(), "new");
        assert_eq!(document.model.syntax().text(), "new");
    }
}
