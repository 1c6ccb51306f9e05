//! The text of a hover on an HLO instruction, laid out from analysis results (no
//! LSP types; [`crate::lsp::hover`] gathers the facts and sends the text).
//!
//! What an XLA engineer reads first comes first:
//! 1. the instruction with the attributes that define its maps (`dimensions=`,
//!    `slice=`, `padding=`, ...), then one-line notes (tiling, who feeds a parameter);
//! 2. inside a fused computation, the composed maps from the fusion output(s) that
//!    reach the instruction, each labelled by output (`output 1 (f32[1024])`);
//!    outputs with the same maps share one line;
//! 3. the fusion parameters read through this instruction (only those), with their
//!    maps from this instruction's index;
//! 4. the instruction's own operand maps (on a fusion, the composed maps to its
//!    operands), with utilization and recomputation warnings;
//! 5. long findings about the instruction (a fused parameter's coalescing).
//!
//! Trivial maps (identity over the same shape, a scalar read) are one word; a map
//! whose one-line form (XLA's `print_indexing` style: `(d0) -> (d0), domain: d0 in
//! [0, 1023]`) fits [`WIDTH`] is one line; longer ones are wrapped to that width.
//! [`Detail::Summary`] cuts long lists ("12 more parameters") and says where the
//! whole text is; [`Detail::Full`] prints everything.

pub mod coalescing;
mod text;

use std::fmt::Write as _;

use crate::algebra::PrintOptions;
use crate::analysis::utilization::Utilization;
use crate::analysis::OperandIndexing;

pub use text::{families, is_identity, is_scalar_read, map_lines, output_ranges, Family, WIDTH};

/// How much of a long hover to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Lists cut to a few entries with a count of the rest (the editor's hover).
    Summary,
    /// Everything (the fusion-maps panel).
    Full,
}

/// How to write the hover.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub print: PrintOptions,
    pub detail: Detail,
    /// The maps are between physical (layout-ordered) index spaces: say so.
    pub physical: bool,
}

/// Where the whole text of a summarized hover is (the command line is added).
pub const WHOLE_TEXT: &str = "Whole text: **HLO: Show Fusion Indexing Maps at Cursor** (VS Code)";

/// In a summary: outputs groups, parameters, operands and maps shown before "N more".
const MAX_GROUPS: usize = 4;
const MAX_PARAMETERS: usize = 6;
const MAX_OPERANDS: usize = 8;
const MAX_MAPS: usize = 3;

/// Everything a hover on one instruction says, as plain data.
#[derive(Clone, Debug, Default)]
pub struct InstructionHover {
    /// `%name = shape opcode(operands), attributes` (one line of HLO).
    pub header: String,
    /// Markdown lines right under the header (the tiling summary, who feeds a parameter).
    pub notes: Vec<String>,
    /// Inside a fused computation: what reaches this instruction from the fusion outputs.
    pub fusion: Option<FusionReach>,
    /// Fusion parameters read through this instruction (maps from its own index).
    pub parameters: Vec<Reads>,
    /// The instruction's operands (on a fusion: its operands, composed per output).
    pub operands: Vec<Reads>,
    /// Markdown paragraphs after the maps: findings about the instruction that run
    /// long (a fused parameter's coalescing, with its picture of the warp's reads),
    /// so that they do not push the maps from the fusion out of sight.
    pub closing: Vec<String>,
    /// The command line that prints the maps a summary cuts (`hlo-lsp maps ...`).
    pub whole_text: Option<String>,
}

/// The maps from the outputs of the calling fusion to one fused instruction.
#[derive(Clone, Debug, Default)]
pub struct FusionReach {
    /// What composes the maps, as shown: the fusion (`%fusion.3`) or, on a
    /// function not fused yet (StableHLO), the function (`@main`).
    pub fusion: String,
    /// Whether that is a function (its result plays the fusion output's role).
    pub function: bool,
    /// How many outputs the fusion has.
    pub output_count: usize,
    /// The outputs that read the instruction, in output order (none: not read).
    pub outputs: Vec<Labelled>,
}

/// What one fusion output reads (or, without `output`, the only map set).
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    /// Which fusion output, with its shape (`f32[1024]`); `None` for a single map set.
    pub output: Option<(usize, String)>,
    pub maps: OperandIndexing,
    /// The extents of the index space the maps start from (an output's, the
    /// instruction's) and of the tensor they index: identity is only trivial over
    /// the same shape, a scalar read only over the whole domain.
    pub domain: Vec<i64>,
    pub target: Vec<i64>,
    pub utilization: Option<Utilization>,
    /// Why this read is worth a look (a recomputation), shown with ⚠.
    pub warning: Option<String>,
}

/// One tensor an instruction reads: an operand or a fusion parameter.
#[derive(Clone, Debug, Default)]
pub struct Reads {
    /// `%name`, or empty when the operand does not resolve.
    pub name: String,
    /// `parameter 0`, `operand 1`: where it comes from.
    pub role: String,
    /// Its shape without layout (`f32[8,128]`).
    pub shape: String,
    /// Its maps: one entry, or one per fusion output on a multi-output fusion.
    pub reads: Vec<Labelled>,
    /// More facts about this operand from other analyses (one markdown line each,
    /// shown under it): the place for per-operand findings such as coalescing.
    pub extra: Vec<String>,
}

/// The hover's markdown.
pub fn render(hover: &InstructionHover, style: &Style) -> String {
    let mut out = format!("```hlo\n{}\n```\n", hover.header);
    for note in &hover.notes {
        let _ = writeln!(out, "{note}");
    }
    let mut cut = false;
    if style.physical && has_maps(hover) {
        out.push_str("_Physical layout: maps between layout-ordered (major-to-minor) indices._\n");
    }
    if let Some(fusion) = &hover.fusion {
        cut |= fusion_section(&mut out, fusion, style);
    }
    if !hover.parameters.is_empty() {
        let function = hover.fusion.as_ref().is_some_and(|f| f.function);
        let what = if function {
            "Arguments"
        } else {
            "Fusion parameters"
        };
        let _ = writeln!(out, "\n**{what} it reads** (maps from its index)");
        cut |= reads_list(
            &mut out,
            &hover.parameters,
            MAX_PARAMETERS,
            "parameters",
            style,
        );
    }
    if !hover.operands.is_empty() {
        let from = match hover.operands.iter().map(|r| r.reads.len()).max() {
            Some(n) if n > 1 => " (from each fusion output)",
            _ => "",
        };
        let _ = writeln!(out, "\n**Operands**{from}");
        cut |= reads_list(&mut out, &hover.operands, MAX_OPERANDS, "operands", style);
    }
    if !hover.closing.is_empty() {
        out.push('\n');
        for line in &hover.closing {
            let _ = writeln!(out, "{line}");
        }
    }
    if cut {
        match &hover.whole_text {
            Some(command) => {
                let _ = writeln!(out, "\n_{WHOLE_TEXT} or `{command}`_");
            }
            None => {
                let _ = writeln!(out, "\n_{WHOLE_TEXT}_");
            }
        }
    }
    single_blank_lines(out)
}

/// Paragraphs end their last line with a blank one and sections begin with one: where
/// both meet, one blank line is kept (a raw-markdown float, as Neovim shows, would
/// show two).
pub(crate) fn single_blank_lines(text: String) -> String {
    if !text.contains("\n\n\n") {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\n' && out.ends_with("\n\n") {
            continue;
        }
        out.push(c);
    }
    out
}

fn has_maps(hover: &InstructionHover) -> bool {
    hover.fusion.is_some() || !hover.parameters.is_empty() || !hover.operands.is_empty()
}

/// `From fusion %f` with one item per group of outputs with the same maps.
/// Returns whether something was cut.
fn fusion_section(out: &mut String, fusion: &FusionReach, style: &Style) -> bool {
    let what = if fusion.function {
        "function"
    } else {
        "fusion"
    };
    let title = if fusion.output_count > 1 {
        format!("**From {what} `{}`**", fusion.fusion)
    } else {
        format!("**From the output of {what} `{}`**", fusion.fusion)
    };
    if fusion.outputs.is_empty() {
        let _ = writeln!(out, "\n{title}: not read");
        return false;
    }
    if fusion.output_count <= 1 {
        out.push('\n');
        return item(out, &title, &fusion.outputs[0], style, "");
    }
    let groups = group_outputs(&fusion.outputs);
    let _ = writeln!(
        out,
        "\n{title} (read by {} of {} outputs)",
        fusion.outputs.len(),
        fusion.output_count
    );
    let shown = limit(groups.len(), MAX_GROUPS, style);
    let mut cut = false;
    for g in &groups[..shown] {
        let label = format!("- {}", outputs_label(&g.outputs, &g.shape));
        cut |= item(out, &label, g.read, style, "");
    }
    if shown < groups.len() {
        let rest: usize = groups[shown..].iter().map(|g| g.outputs.len()).sum();
        let _ = writeln!(out, "- … {rest} more outputs");
        cut = true;
    }
    cut
}

/// Outputs (with a shape) that read the same maps.
struct Group<'a> {
    outputs: Vec<usize>,
    shape: String,
    read: &'a Labelled,
}

/// Groups outputs whose maps and shapes are equal, in order of first output.
fn group_outputs(outputs: &[Labelled]) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for read in outputs {
        let (k, shape) = read.output.clone().unwrap_or((0, String::new()));
        let same = groups.iter_mut().find(|g| {
            g.shape == shape
                && same_set(&g.read.maps, &read.maps)
                && g.read.warning == read.warning
                && g.read.utilization == read.utilization
        });
        match same {
            Some(g) => g.outputs.push(k),
            None => groups.push(Group {
                outputs: vec![k],
                shape,
                read,
            }),
        }
    }
    groups
}

/// Equal as sets of maps (the analysis finds them in path order).
fn same_set(a: &OperandIndexing, b: &OperandIndexing) -> bool {
    a.unknown == b.unknown
        && a.maps.len() == b.maps.len()
        && a.maps.iter().all(|m| b.maps.contains(m))
}

/// `output 1 (f32[1024])`, `outputs 0–3, 7 (f32[1,8192])`.
fn outputs_label(outputs: &[usize], shape: &str) -> String {
    let noun = if outputs.len() == 1 {
        "output"
    } else {
        "outputs"
    };
    // Shapes in code spans: `[30,20]` alone reads as a link to some markdown renderers.
    let shape = if shape.is_empty() {
        String::new()
    } else {
        format!(" (`{shape}`)")
    };
    format!("{noun} {}{shape}", output_ranges(outputs))
}

/// A list of operands or parameters; trivial reads of the same kind share a line.
/// Returns whether something was cut.
fn reads_list(out: &mut String, list: &[Reads], max: usize, noun: &str, style: &Style) -> bool {
    let mut cut = false;
    let mut trivial: Vec<(&str, Vec<String>)> = Vec::new();
    let mut shown = 0;
    let mut hidden = 0;
    for r in list {
        if let Some(word) = trivial_word(r) {
            if r.extra.is_empty() {
                let name = reads_name(r);
                match trivial.iter_mut().find(|(w, _)| *w == word) {
                    Some((_, names)) => names.push(name),
                    None => trivial.push((word, vec![name])),
                }
                continue;
            }
        }
        if shown >= limit(usize::MAX, max, style) {
            hidden += 1;
            continue;
        }
        shown += 1;
        cut |= reads_item(out, r, style);
    }
    for (word, names) in trivial {
        let _ = writeln!(out, "- {}: {word}", names.join(", "));
    }
    if hidden > 0 {
        let _ = writeln!(out, "- … {hidden} more {noun}");
        cut = true;
    }
    cut
}

/// `identity` / `scalar` when every map set of `r` is that one trivial map.
fn trivial_word(r: &Reads) -> Option<&'static str> {
    let mut word = None;
    for read in &r.reads {
        if read.warning.is_some() || read.maps.unknown.is_some() {
            return None;
        }
        let w = match &read.maps.maps[..] {
            [m] if is_identity(&m.map, &read.target) && m.runtime_vars.is_empty() => "identity",
            [m] if is_scalar_read(m, &read.domain) => "scalar",
            _ => return None,
        };
        if word.is_some_and(|x| x != w) {
            return None;
        }
        word = Some(w);
    }
    word
}

/// `` `%p0` (parameter 0, f32[8,128]) ``.
fn reads_name(r: &Reads) -> String {
    let name = if r.name.is_empty() {
        "?".to_string()
    } else {
        format!("`{}`", r.name)
    };
    let shape = (!r.shape.is_empty()).then(|| format!("`{}`", r.shape));
    let details: Vec<&str> = [Some(r.role.as_str()), shape.as_deref()]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect();
    if details.is_empty() {
        name
    } else {
        format!("{name} ({})", details.join(", "))
    }
}

/// One operand or parameter: its maps (per output when there are several), then its
/// extra lines. Returns whether something was cut.
fn reads_item(out: &mut String, r: &Reads, style: &Style) -> bool {
    let name = reads_name(r);
    let mut cut = false;
    match &r.reads[..] {
        [] => {
            let _ = writeln!(out, "- {name}: not read");
        }
        [one] => {
            let label = match &one.output {
                Some((k, _)) => format!("- {name}, output {k}"),
                None => format!("- {name}"),
            };
            cut |= item(out, &label, one, style, "");
        }
        many => {
            let _ = writeln!(out, "- {name}");
            let groups = group_outputs(many);
            let shown = limit(groups.len(), MAX_GROUPS, style);
            for g in &groups[..shown] {
                let noun = if g.outputs.len() == 1 {
                    "output"
                } else {
                    "outputs"
                };
                let label = format!("  - from {noun} {}", output_ranges(&g.outputs));
                cut |= item(out, &label, g.read, style, "  ");
            }
            if shown < groups.len() {
                let rest: usize = groups[shown..].iter().map(|g| g.outputs.len()).sum();
                let _ = writeln!(out, "  - … {rest} more outputs");
                cut = true;
            }
        }
    }
    for line in &r.extra {
        let _ = writeln!(out, "  - {line}");
    }
    cut
}

/// One labelled map set: `label: identity`, `label: `map``, or the label followed by
/// one line (or wrapped block) per map. `indent` prefixes continuation lines.
/// Returns whether maps were cut.
fn item(out: &mut String, label: &str, read: &Labelled, style: &Style, indent: &str) -> bool {
    let suffix = suffix(read);
    let maps = &read.maps.maps;
    let separator = ": ";
    if maps.is_empty() {
        match &read.maps.unknown {
            Some(reason) => {
                let _ = writeln!(out, "{label}{separator}unknown indexing ({reason})");
            }
            None => {
                let _ = writeln!(out, "{label}{separator}not read");
            }
        }
        return false;
    }
    if let [m] = &maps[..] {
        if is_identity(&m.map, &read.target) && m.runtime_vars.is_empty() {
            let _ = writeln!(out, "{label}{separator}identity{suffix}");
            return false;
        }
        if is_scalar_read(m, &read.domain) {
            let _ = writeln!(out, "{label}{separator}scalar `{}`{suffix}", head(m, style));
            return false;
        }
    }
    let count = if maps.len() > 1 {
        format!(", {} maps", maps.len())
    } else {
        String::new()
    };
    let families = families(maps);
    if let [family] = &families[..] {
        let lines = family.lines(&style.print);
        if lines.len() == 1 && read.maps.unknown.is_none() {
            let _ = writeln!(out, "{label}{count}{separator}`{}`{suffix}", lines[0]);
            return false;
        }
    }
    let _ = writeln!(out, "{label}{count}{suffix}");
    let shown = limit(families.len(), MAX_MAPS, style);
    for family in &families[..shown] {
        let lines = family.lines(&style.print);
        if lines.len() == 1 {
            let _ = writeln!(out, "{indent}  `{}`", lines[0]);
        } else {
            let _ = writeln!(out, "{indent}  ```");
            for line in lines {
                let _ = writeln!(out, "{indent}  {line}");
            }
            let _ = writeln!(out, "{indent}  ```");
        }
    }
    let hidden: usize = families[shown..].iter().map(Family::count).sum();
    if hidden > 0 {
        let _ = writeln!(out, "{indent}  … {hidden} more maps");
    }
    if let Some(reason) = &read.maps.unknown {
        let _ = writeln!(out, "{indent}  and unknown indexing ({reason})");
    }
    hidden > 0
}

/// ` — utilization 50.0% of elements, each read 2.00×` and the warning, if any.
fn suffix(read: &Labelled) -> String {
    let mut s = String::new();
    if let Some(u) = &read.utilization {
        let _ = write!(s, " — {u}");
    }
    if let Some(w) = &read.warning {
        let _ = write!(s, " ⚠ {w}");
    }
    s
}

/// The map's head without its domain (`(d0) -> ()`).
fn head(m: &crate::analysis::OperandMap, style: &Style) -> String {
    let one_line = PrintOptions {
        multiline: false,
        ..style.print
    };
    let printed = m.map.print(&one_line);
    match printed.find(", domain:") {
        Some(end) => printed[..end].to_string(),
        None => printed,
    }
}

/// Every map of `entry` as a fenced block of [`map_lines`], then the reason when
/// some path is unknown, or `not read` (inlay-hint tooltips).
pub fn map_blocks(entry: &OperandIndexing, print: &PrintOptions) -> String {
    let mut out = String::new();
    for m in &entry.maps {
        let _ = writeln!(out, "```\n{}\n```", map_lines(m, print).join("\n"));
    }
    if let Some(reason) = &entry.unknown {
        let _ = writeln!(out, "unknown indexing: {reason}");
    }
    if entry.maps.is_empty() && entry.unknown.is_none() {
        out.push_str("not read\n");
    }
    out
}

/// How many of `n` entries to show.
fn limit(n: usize, max: usize, style: &Style) -> usize {
    match style.detail {
        Detail::Full => n,
        Detail::Summary => n.min(max),
    }
}
