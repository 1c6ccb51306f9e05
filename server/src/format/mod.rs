//! Formatting: an HLO module printed as XLA prints it, for `hlo-lsp fmt` and the
//! editor's `textDocument/formatting` / `rangeFormatting`.
//!
//! Two of XLA's print forms ([`Style`]): the long one its parser tests round-trip
//! (`HloPrintOptions` with `print_operand_shape`: `add(f32[4]{0} %x, f32[4]{0} %y)`)
//! and the short one `HloModule::ToString()` gives in jaxlib 0.10.2 and that XLA's
//! dumps are written in (`add(%x, %y)`). Without a choice the file keeps the form it
//! is written in ([`written_style`]).
//!
//! The printer never drops text silently: XLA's printer forgets comments, and an
//! editor action must not. The comment lines a file starts with are kept above the
//! printed module; a file with a comment elsewhere (or anything else the printer
//! cannot write back: syntax errors, inline operands, several modules) is refused
//! with a one-line reason ([`Refusal`]) instead. Library code only: byte offsets and
//! plain text edits; the front ends turn them into a command's output or LSP edits.

pub mod edits;
mod order;
mod post_order;
mod printer;
pub mod shape_text;
mod values;

use std::fmt;
use std::ops::Range;

use crate::model::{Document, HloFile, TextEdit};

pub use edits::{line_edits, within};

/// Which of XLA's print forms to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Operand shapes printed before operand names (`HloPrintOptions` with
    /// `print_operand_shape`, XLA's `HloParserTestLong` table).
    Long,
    /// Operand names only (`HloModule::ToString()` in jaxlib 0.10.2, XLA's dumps).
    Short,
}

/// Why a document is not formatted: a place in it and a one-line reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The byte where the problem is.
    pub offset: usize,
    pub message: String,
}

impl Refusal {
    pub(crate) fn at(offset: usize, message: impl Into<String>) -> Refusal {
        Refusal {
            offset,
            message: message.into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// `text` printed as XLA prints it in `style` (`None`: the style it is written in).
pub fn format(text: &str, style: Option<Style>) -> Result<String, Refusal> {
    format_document(&Document::parse(text), style)
}

/// [`format`] of a document already parsed (the editor's snapshot). The comment
/// lines a file starts with (a test's `// RUN:` lines, a licence, what the module
/// is) stand before the module, not inside it: they are kept as written and the
/// module after them is printed.
pub fn format_document(doc: &Document, style: Option<Style>) -> Result<String, Refusal> {
    let text = doc.syntax().text();
    let lead = leading_comment_lines(&text);
    if lead == 0 {
        return print_module(doc, style);
    }
    let rest = Document::parse(&text[lead..]);
    let printed =
        print_module(&rest, style).map_err(|r| Refusal::at(r.offset + lead, r.message))?;
    Ok(format!("{}{printed}", &text[..lead]))
}

/// The module of `doc` printed, or why it cannot be.
fn print_module(doc: &Document, style: Option<Style>) -> Result<String, Refusal> {
    refuse_unprintable(doc)?;
    let style = style.unwrap_or_else(|| written_style(doc.file()));
    printer::print(doc, style)
}

/// The length of the run of `//` comment lines and blank lines `text` starts with,
/// the blank lines after the last comment included (0 when it starts with no comment).
fn leading_comment_lines(text: &str) -> usize {
    let mut at = 0;
    let mut commented = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with("//") && !trimmed.starts_with("// -----") {
            commented = true;
        } else if !trimmed.is_empty() {
            break;
        }
        at += line.len();
    }
    if commented {
        at
    } else {
        0
    }
}

/// The edits that format `text`, one per changed line where lines correspond, and
/// only those inside the instructions and computations that `range` touches when
/// one is given (range formatting).
pub fn edits(
    doc: &Document,
    style: Option<Style>,
    range: Option<Range<usize>>,
) -> Result<Vec<TextEdit>, Refusal> {
    let formatted = format_document(doc, style)?;
    let text = doc.syntax().text();
    let all = line_edits(&text, &formatted);
    Ok(match range {
        None => all,
        Some(range) => within(doc.file(), &text, range, all),
    })
}

/// The form the file is written in: long when most named operands carry their
/// shape, short otherwise (also when there are no operands at all).
pub fn written_style(file: &HloFile) -> Style {
    let (mut named, mut shaped) = (0usize, 0usize);
    for (_, c) in file.all_computations() {
        for i in &c.instructions {
            for o in &i.operands {
                if o.name_range().is_some() {
                    named += 1;
                    shaped += usize::from(o.declared_shape.is_some());
                }
            }
        }
    }
    if named > 0 && shaped * 2 >= named {
        Style::Long
    } else {
        Style::Short
    }
}

/// What XLA's printer would lose or cannot be written back from the model.
fn refuse_unprintable(doc: &Document) -> Result<(), Refusal> {
    if let Some(error) = doc.syntax().syntax_errors().first() {
        return Err(Refusal::at(
            error.range.start,
            format!("{}; formatting needs text XLA parses", error.message),
        ));
    }
    for placed in doc.syntax().chunks() {
        let tree = placed.tree();
        if let Some(comment) = first_comment(tree.root_node(), placed.text()) {
            return Err(Refusal::at(
                placed.range().start + comment,
                "a comment, which XLA's printer drops; \
                 remove it to format (formatting never deletes text)",
            ));
        }
    }
    Ok(())
}

/// The chunk-relative start of the first comment under `node` that XLA's printer
/// would not write back. Its own operand index annotations (`/*index=5*/`) and a
/// literal's dimension annotations (`/*i0=1*/`) it does write: they are kept.
fn first_comment(node: tree_sitter::Node, text: &str) -> Option<usize> {
    if node.kind() == "comment" {
        let comment = text.get(node.byte_range()).unwrap_or("");
        return (!is_xla_annotation(comment)).then_some(node.start_byte());
    }
    let mut cursor = node.walk();
    let found = node
        .children(&mut cursor)
        .find_map(|child| first_comment(child, text));
    found
}

/// `/*index=5*/` or `/*i0=1*/`: what XLA's printer writes as a comment.
fn is_xla_annotation(comment: &str) -> bool {
    let Some(inner) = comment
        .strip_prefix("/*")
        .and_then(|c| c.strip_suffix("*/"))
    else {
        return false;
    };
    let Some((key, number)) = inner.split_once('=') else {
        return false;
    };
    let key_ok = key == "index"
        || key
            .strip_prefix('i')
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    key_ok && !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests;
