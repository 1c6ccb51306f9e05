//! Which pass made each instruction, in the editor: in a snapshot file of a dump
//! directory written with `--xla_dump_hlo_pass_re=.*` (the after-optimizations one
//! included), a code lens on every instruction, `introduced by layout-assignment (step
//! 47) · changed by 3 passes`, and the same line in its hover. The history
//! ([`crate::dump::history`]) is built by the server, once per directory; here it is
//! only read, one lookup per instruction. [`passes_at`] gives, for the instruction
//! under the cursor, the snapshots just before and after each pass of its story.

use std::ops::Range;

use super::hover::Hover;
use super::snapshot::HloSnapshot;
use crate::dump::history::passes::{self, PassStep};
use crate::dump::history::{story, InstructionHistory, ModuleHistory};

/// The history of the module a document is a snapshot of, and which snapshot it is.
#[derive(Clone, Copy, Debug)]
pub struct PassHistory<'a> {
    pub module: &'a ModuleHistory,
    pub snapshot: usize,
}

/// A lens with its title (cheap: no resolve step).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryLens {
    /// The instruction's name, in document bytes.
    pub range: Range<usize>,
    pub title: String,
    /// Which instruction, for the lens's command.
    pub computation: String,
    pub instruction: String,
}

/// A lens on every instruction the history knows, in text order.
pub fn lenses(snapshot: &HloSnapshot, history: PassHistory) -> Vec<HistoryLens> {
    let mut out = Vec::new();
    for module in &snapshot.model().modules {
        for computation in module.computations() {
            for i in computation
                .model()
                .instructions
                .iter()
                .filter(|i| !i.synthetic)
            {
                if let Some(title) = line(history, &computation.name, &i.name) {
                    out.push(HistoryLens {
                        range: computation.abs(i.name_range),
                        title,
                        computation: computation.name.clone(),
                        instruction: i.name.to_string(),
                    });
                }
            }
        }
    }
    out
}

/// The history line of instruction `name` of `computation`.
fn line(history: PassHistory, computation: &str, name: &str) -> Option<String> {
    let i = history.module.at(history.snapshot, computation, name)?;
    Some(story::summary(history.module, i))
}

/// `hover` with the history line of the instruction it describes (its name or
/// opcode under the cursor), as the hover's last line.
pub fn with_history(snapshot: &HloSnapshot, mut hover: Hover, history: PassHistory) -> Hover {
    let file = snapshot.model();
    let Some(at) = file.instruction_at(hover.range.start) else {
        return hover;
    };
    let computation = file.computation(at);
    let i = computation.instruction(at.instruction);
    let described = [i.name_range, i.opcode_range].map(|r| computation.abs(r));
    if !described.contains(&hover.range) {
        return hover;
    }
    if let Some(line) = line(history, &computation.name, &i.name) {
        hover.markdown.push_str(&format!("\n\n**Passes**: {line}"));
    }
    hover
}

/// One instruction's passes, to open around each: the instruction as the history
/// knows it, its one-line summary, and per pass the snapshots before and after it
/// with the instruction's line in each ([`passes::passes`]).
#[derive(Debug, Clone)]
pub struct InstructionPasses<'a> {
    pub instruction: &'a InstructionHistory,
    pub summary: String,
    pub steps: Vec<PassStep>,
}

/// The passes of instruction `name` of `computation`, as it is in the document's
/// snapshot. Reads the files around each pass: call it off the async runtime.
pub fn passes_of<'a>(
    history: PassHistory<'a>,
    computation: &str,
    name: &str,
) -> Option<InstructionPasses<'a>> {
    let i = history.module.at(history.snapshot, computation, name)?;
    Some(InstructionPasses {
        instruction: i,
        summary: story::summary(history.module, i),
        steps: passes::passes(history.module, i),
    })
}

/// [`passes_of`] the instruction at `offset`, or on its line when `offset` is in
/// the line's indentation (where an editor's cursor often rests).
pub fn passes_at<'a>(
    snapshot: &HloSnapshot,
    offset: usize,
    history: PassHistory<'a>,
) -> Option<InstructionPasses<'a>> {
    let file = snapshot.model();
    // The blanks from `offset` on, read in its chunk: the whole text of a large dump
    // would be joined for every hover.
    let blanks = snapshot.syntax().chunk_at(offset).map_or(0, |chunk| {
        let rest = chunk.text().get(offset - chunk.start..).unwrap_or_default();
        rest.len() - rest.trim_start_matches([' ', '\t']).len()
    });
    let at = file
        .instruction_at(offset)
        .or_else(|| file.instruction_at(offset + blanks))?;
    let computation = file.computation(at);
    let i = computation.instruction(at.instruction);
    passes_of(history, &computation.name, &i.name)
}
