//! `textDocument/completion` and `textDocument/signatureHelp`: the answers of
//! [`crate::ide::completion`] and [`crate::ide::signature_help`] as LSP types.

use tower_lsp_server::ls_types::{
    CompletionItem, CompletionItemKind, CompletionList, CompletionResponse, CompletionTextEdit,
    Documentation, InsertTextFormat, MarkupContent, MarkupKind, ParameterInformation,
    ParameterLabel, SignatureHelp, SignatureInformation, TextEdit,
};

use super::position::PositionEncoding;
use super::snapshot::Snapshot;
use crate::ide::completion::{self, ItemKind, Options};
use crate::ide::signature_help;

/// The characters after which a client asks for completion without being told.
pub const TRIGGERS: &[&str] = &["%", "=", "(", " ", ",", "{", "\"", "."];

/// The characters that open or move signature help.
pub const SIGNATURE_TRIGGERS: &[&str] = &["(", ","];

/// The completion at `offset`, best item first (`sortText` keeps the order).
pub fn completion(
    snapshot: &Snapshot,
    offset: usize,
    options: Options,
    encoding: PositionEncoding,
) -> Option<CompletionResponse> {
    let answer = completion::complete(&snapshot.ide, offset, options)?;
    if answer.items.is_empty() {
        return None;
    }
    let range = snapshot.range(answer.replace.clone(), encoding);
    let typed = snapshot.ide.syntax().slice(answer.replace.clone());
    let items = answer
        .items
        .into_iter()
        .enumerate()
        .map(|(k, item)| CompletionItem {
            // The client filters on what was typed, `%` included.
            filter_text: (typed.starts_with('%') && !item.label.starts_with('%'))
                .then(|| format!("%{}", item.label)),
            kind: Some(kind(item.kind)),
            detail: item.detail,
            documentation: item.documentation.map(|value| {
                Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value,
                })
            }),
            sort_text: Some(format!("{k:04}")),
            preselect: (k == 0).then_some(true),
            insert_text_format: Some(if item.snippet {
                InsertTextFormat::SNIPPET
            } else {
                InsertTextFormat::PLAIN_TEXT
            }),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                range,
                new_text: item.insert,
            })),
            label: item.label,
            ..Default::default()
        })
        .collect();
    Some(CompletionResponse::List(CompletionList {
        is_incomplete: answer.incomplete,
        items,
    }))
}

fn kind(kind: ItemKind) -> CompletionItemKind {
    match kind {
        ItemKind::Opcode | ItemKind::MlirOp => CompletionItemKind::FUNCTION,
        ItemKind::Attribute => CompletionItemKind::PROPERTY,
        ItemKind::Computation => CompletionItemKind::MODULE,
        ItemKind::Instruction | ItemKind::MlirValue => CompletionItemKind::VARIABLE,
        ItemKind::ElementType | ItemKind::Shape | ItemKind::Layout => {
            CompletionItemKind::TYPE_PARAMETER
        }
        ItemKind::Value => CompletionItemKind::ENUM_MEMBER,
        ItemKind::Key => CompletionItemKind::FIELD,
        ItemKind::Keyword => CompletionItemKind::KEYWORD,
    }
}

/// The signature help at `offset`.
pub fn signature_help(snapshot: &Snapshot, offset: usize) -> Option<SignatureHelp> {
    let help = signature_help::signature_help(&snapshot.ide, offset)?;
    let signature = help.signature;
    let label = &signature.label;
    let utf16 = |byte: usize| label[..byte].encode_utf16().count() as u32;
    let parameters = signature
        .parameters
        .iter()
        .map(|r| ParameterInformation {
            label: ParameterLabel::LabelOffsets([utf16(r.start), utf16(r.end)]),
            documentation: None,
        })
        .collect();
    let active = help.active.map(|a| a as u32);
    Some(SignatureHelp {
        signatures: vec![SignatureInformation {
            label: signature.label.clone(),
            documentation: Some(Documentation::String(signature.documentation)),
            parameters: Some(parameters),
            active_parameter: active,
        }],
        active_signature: Some(0),
        active_parameter: active,
    })
}
