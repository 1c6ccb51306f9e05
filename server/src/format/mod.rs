//! Formatting: an HLO module printed as XLA prints it, for `hlo-lsp fmt` and the
//! editor's `textDocument/formatting` / `rangeFormatting`.
//!
//! Two of XLA's print forms ([`Style`]): the long one its parser tests round-trip
//! (`HloPrintOptions` with `print_operand_shape`: `add(f32[4]{0} %x, f32[4]{0} %y)`)
//! and the short one `HloModule::ToString()` gives in jaxlib 0.10.2 and that XLA's
//! dumps are written in (`add(%x, %y)`). Without a choice the file keeps the form it
//! is written in (long when most named operands carry their shape).
//!
//! The printer never drops text silently: XLA's printer forgets comments, and an
//! editor action must not. The comment lines a file starts with are kept above the
//! printed module, and every other comment beside the instruction or computation
//! it was written beside ([`Comments::Keep`], what `fmt` and the editor do);
//! [`Comments::Drop`] prints exactly what XLA prints, for the comparison with it.
//! What the printer cannot write back (syntax errors, several modules) is refused
//! with a one-line reason ([`Refusal`]). Library code only: byte offsets and
//! plain text edits; the front ends turn them into a command's output or LSP edits.

mod comments;
pub mod edits;
mod known;
mod names;
mod order;
mod post_order;
mod printer;
mod scan;
pub mod shape_text;
mod single;
mod stack_frames;
mod values;

use std::fmt;
use std::ops::Range;

use rayon::prelude::*;

use crate::model::{ComputationId, Document, TextEdit};
use printer::Select;

pub use comments::Comments;
pub use edits::{line_edits, within};
pub use known::Known;

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

/// `text` printed as XLA prints it in `style` (`None`: the style it is written in),
/// its comments kept ([`Comments::Keep`]).
pub fn format(text: &str, style: Option<Style>) -> Result<String, Refusal> {
    format_with(text, style, Comments::Keep)
}

/// [`format`] with a choice of what becomes of comments: [`Comments::Drop`] gives
/// exactly XLA's printing (which has none).
pub fn format_with(
    text: &str,
    style: Option<Style>,
    comments: Comments,
) -> Result<String, Refusal> {
    format_document_with(&Document::parse(text), style, comments)
}

/// [`format`] of a document already parsed (the editor's snapshot). The comment
/// lines a file starts with (a test's `// RUN:` lines, a licence, what the module
/// is) stand before the module, not inside it: they are kept as written and the
/// module after them is printed.
pub fn format_document(doc: &Document, style: Option<Style>) -> Result<String, Refusal> {
    format_document_with(doc, style, Comments::Keep)
}

/// [`format_document`] with a choice of what becomes of comments.
pub fn format_document_with(
    doc: &Document,
    style: Option<Style>,
    comments: Comments,
) -> Result<String, Refusal> {
    formatted(doc, &doc.syntax().text(), style, comments)
}

/// [`format_document_with`] of `doc`, whose text is `text` (joined once from its
/// chunks: 58 MB on a large dump).
fn formatted(
    doc: &Document,
    text: &str,
    style: Option<Style>,
    comments: Comments,
) -> Result<String, Refusal> {
    let (lead, printed) = past_leading_comments(doc, text, |doc, text| {
        print_module(doc, text, style, comments)
    })?;
    Ok(match comments {
        Comments::Keep if lead > 0 => format!("{}{printed}", &text[..lead]),
        _ => printed,
    })
}

/// `print` of `doc` (whose text is `text`), or, when the text starts with comment
/// lines, of the document after them (a refusal's offset moved back to `text`'s),
/// with the length of those lines.
fn past_leading_comments<T>(
    doc: &Document,
    text: &str,
    print: impl FnOnce(&Document, &str) -> Result<T, Refusal>,
) -> Result<(usize, T), Refusal> {
    let lead = leading_comment_lines(text);
    if lead == 0 {
        return Ok((0, print(doc, text)?));
    }
    let rest = &text[lead..];
    let printed =
        print(&Document::parse(rest), rest).map_err(|r| Refusal::at(r.offset + lead, r.message))?;
    Ok((lead, printed))
}

/// The module of `doc` printed, or why it cannot be. With comments in it, the text
/// without them is parsed and printed, and the comments are written back
/// ([`comments::Attached`]) or left out.
fn print_module(
    doc: &Document,
    text: &str,
    style: Option<Style>,
    mode: Comments,
) -> Result<String, Refusal> {
    Ok(match printed(doc, text, style, mode, None)? {
        Printed::Single(module, style) => print_single(&module, style)?,
        Printed::Module(pieces) => pieces.joined(),
        Printed::Commented => unreachable!("the whole module is printed with its comments"),
    })
}

/// What [`print_module`] prints: the module a single-instruction file makes (and the
/// style), or the module printed in pieces; for some computations alone, nothing
/// when the module has comments.
enum Printed {
    Single(String, Style),
    Module(printer::Pieces),
    Commented,
}

/// [`print_module`] of `doc` (whose text is `text`) up to the printing of a single
/// instruction's module. With `only`, those computations alone
/// ([`printer::pieces`]), and [`Printed::Commented`] for a module with comments: one
/// written in a computation's header line is printed above it, outside the
/// computation's own text.
fn printed(
    doc: &Document,
    text: &str,
    style: Option<Style>,
    mode: Comments,
    only: Option<&[ComputationId]>,
) -> Result<Printed, Refusal> {
    let select = only.map_or(Select::All, Select::Only);
    if !comments::any(text) {
        refuse_unprintable(doc)?;
        if let Some(module) = single::as_module(doc) {
            return Ok(Printed::Single(
                module,
                style.unwrap_or_else(|| written_style(doc)),
            ));
        }
        return printer::pieces(doc, style, &comments::Attached::default(), select)
            .map(Printed::Module);
    }
    if only.is_some() {
        return Ok(Printed::Commented);
    }
    let stripped = comments::strip(text);
    let bare = Document::parse(&stripped.text);
    let back = |r: Refusal| Refusal::at(stripped.original_offset(r.offset), r.message);
    refuse_unprintable(&bare).map_err(back)?;
    if let Some(module) = single::as_module(&bare) {
        if mode == Comments::Keep {
            return Err(Refusal::at(
                stripped.original_offset(stripped.comments[0].at),
                "a comment in a single-instruction file: XLA makes a module of the \
                 instruction and the comment has no place in it; remove it to format",
            ));
        }
        return Ok(Printed::Single(
            module,
            style.unwrap_or_else(|| written_style(doc)),
        ));
    }
    let attached = match (mode, bare.file().modules.first()) {
        (Comments::Keep, Some(module)) => comments::Attached::of(module, &stripped),
        _ => comments::Attached::default(),
    };
    printer::pieces(&bare, style, &attached, select)
        .map(Printed::Module)
        .map_err(back)
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
/// one is given (range formatting). `known`: what the document's earlier versions
/// found already formatted, which whole-document formatting reads and updates
/// (a fresh [`Known`] for a document without versions).
pub fn edits(
    doc: &Document,
    style: Option<Style>,
    range: Option<Range<usize>>,
    known: &Known,
) -> Result<Vec<TextEdit>, Refusal> {
    let Some(range) = range else {
        return whole_edits(doc, style, known);
    };
    // Each computation the range touches against its own printed text: a diff of
    // the whole text gives up on a file far from XLA's form (one edit of everything
    // between its first and last change), which range formatting sent whole. A
    // module with comments (rare in dumps) is still diffed whole.
    let (syntax, file) = (doc.syntax(), doc.file());
    let touched: Vec<_> = file
        .all_computations()
        .map(|(_, c)| c)
        .filter(|c| c.range().end >= range.start && c.range().start <= range.end)
        .collect();
    let ids: Vec<ComputationId> = touched.iter().map(|c| c.id).collect();
    let pieces = if let Some(pieces) = uncommented_pieces(doc, style, Select::Only(&ids))? {
        pieces
    } else {
        let text = syntax.text();
        let Some(pieces) = module_pieces(doc, &text, style, &ids)? else {
            let all = line_edits(&text, &formatted(doc, &text, style, Comments::Keep)?);
            return Ok(within(file, syntax, range, all));
        };
        pieces
    };
    let mut edits = Vec::new();
    for c in touched {
        if let Some(piece) = pieces.computation(c.id) {
            edits.extend(edits_at(
                c.range().start,
                &syntax.slice(c.range()),
                &piece.body,
            ));
        }
    }
    Ok(within(file, syntax, range, edits))
}

/// The computations `select` names printed, when `doc` is a module without
/// comments (every dump): the printer prints it from the model alone, without a
/// copy of its text. `None` for a module with comments or a single instruction
/// (XLA makes a module of it), which [`formatted`] prints.
fn uncommented_pieces(
    doc: &Document,
    style: Option<Style>,
    select: Select,
) -> Result<Option<printer::Pieces>, Refusal> {
    let commented = doc
        .syntax()
        .chunks()
        .par_iter()
        .any(|c| comments::any(c.text()));
    if commented || single::as_module(doc).is_some() {
        return Ok(None);
    }
    refuse_unprintable(doc)?;
    let attached = comments::Attached::default();
    printer::pieces(doc, style, &attached, select).map(Some)
}

/// The edits formatting the whole document. A module without comments printed in
/// its written order (every dump) is compared computation by computation, and
/// the blank lines between them, as it is printed: a dump already in XLA's form
/// costs its printing, never a copy of its text, of its printed text or a diff
/// of the two (each as large as the file: 26 s on a 588 MiB dump, most of it the
/// memory). Anything else is printed whole and diffed line by line.
fn whole_edits(
    doc: &Document,
    style: Option<Style>,
    known: &Known,
) -> Result<Vec<TextEdit>, Refusal> {
    if let Some(pieces) = uncommented_pieces(doc, style, Select::Changed(known))? {
        if pieces.in_written_order {
            return Ok(edits_in_written_order(doc, &pieces));
        }
        // Reordered, every computation was kept: the whole printed text.
        return Ok(line_edits(&doc.syntax().text(), &pieces.joined()));
    }
    let text = doc.syntax().text();
    Ok(line_edits(
        &text,
        &formatted(doc, &text, style, Comments::Keep)?,
    ))
}

/// [`whole_edits`] of a module without comments whose `pieces` are its changed
/// computations, printed in the written order: what stands before the first
/// computation against the printed head, each changed computation against its
/// written text, and what stands between computations (and after the last)
/// against the blank line XLA prints.
fn edits_in_written_order(doc: &Document, pieces: &printer::Pieces) -> Vec<TextEdit> {
    let syntax = doc.syntax();
    let Some(module) = doc.file().modules.first() else {
        return Vec::new();
    };
    // In parallel: a 588 MiB dump has a quarter of a million computations, most of
    // them unchanged and followed by the blank line XLA prints.
    let written: Vec<(ComputationId, Range<usize>)> = (0..module.computation_count())
        .into_par_iter()
        .map(|k| module.computation(ComputationId(k as u32)))
        .map(|c| (c.id, c.range()))
        .collect();
    let head_end = written.first().map_or(syntax.len(), |(_, r)| r.start);
    let mut edits = edits_at(0, &syntax.slice(0..head_end), pieces.head());
    // In written order, which is XLA's here: sorted by id.
    let printed = pieces.computations();
    let per_computation: Vec<Vec<TextEdit>> = written
        .par_iter()
        .enumerate()
        .map(|(k, (id, whole))| {
            let mut edits = Vec::new();
            if let Ok(p) = printed.binary_search_by_key(id, |p| p.id) {
                let old = syntax.slice(whole.clone());
                edits.extend(edits_at(whole.start, &old, &printed[p].body));
            }
            let gap = whole.end..written.get(k + 1).map_or(syntax.len(), |(_, r)| r.start);
            let between = syntax.slice(gap.clone());
            if between != "\n\n" {
                edits.extend(edits_at(gap.start, &between, "\n\n"));
            }
            edits
        })
        .collect();
    edits.extend(per_computation.into_iter().flatten());
    edits
}

/// [`line_edits`] of `old`, which starts at byte `at` of the document, into `new`.
fn edits_at(at: usize, old: &str, new: &str) -> Vec<TextEdit> {
    line_edits(old, new)
        .into_iter()
        .map(|e| TextEdit {
            range: e.range.start + at..e.range.end + at,
            new_text: e.new_text,
        })
        .collect()
}

/// Computations `only` of `doc`'s module (whose text is `text`) printed
/// ([`printer::pieces`]), numbered as `doc`'s; `None` for a single-instruction file
/// (XLA makes a module of it) and for a module with comments ([`Printed::Commented`]).
fn module_pieces(
    doc: &Document,
    text: &str,
    style: Option<Style>,
    only: &[ComputationId],
) -> Result<Option<printer::Pieces>, Refusal> {
    let (_, printed) = past_leading_comments(doc, text, |doc, text| {
        printed(doc, text, style, Comments::Keep, Some(only))
    })?;
    Ok(match printed {
        Printed::Module(pieces) => Some(pieces),
        Printed::Single(..) | Printed::Commented => None,
    })
}

/// The form `doc` is written in ([`scan::OperandCounts::style`]).
fn written_style(doc: &Document) -> Style {
    doc.file()
        .all_computations()
        .map(|(_, c)| scan::OperandCounts::of(&c))
        .fold(scan::OperandCounts::default(), scan::OperandCounts::plus)
        .style()
}

/// The module XLA makes of a single-instruction file ([`single::as_module`]),
/// printed; a refusal points at the instruction.
fn print_single(module: &str, style: Style) -> Result<String, Refusal> {
    let doc = Document::parse(module);
    printer::print(&doc, style, &comments::Attached::default())
        .map_err(|r| Refusal::at(0, r.message))
}

/// Text the printer cannot write back from the model: syntax errors.
fn refuse_unprintable(doc: &Document) -> Result<(), Refusal> {
    // The model's: each built chunk keeps its own, where the trees' were found by
    // parsing every chunk again (most keep no tree): 5 s of formatting a 58 MiB dump.
    if let Some(error) = doc.syntax_errors().first() {
        return Err(Refusal::at(
            error.range.start,
            format!("{}; formatting needs text XLA parses", error.message),
        ));
    }
    Ok(())
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
