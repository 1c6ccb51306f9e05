//! What changed between two dumps of one module (before and after a pass, or two
//! compilations): computations and instructions added, removed and changed, matched
//! by name, and for each fusion that changed (its line or its fused computation) the
//! composed maps from its outputs to its operands, before and after, side by side.
//!
//! An instruction is compared by what defines it: shape, opcode, operands as
//! written and attributes, `metadata={...}` left out (a pass that only moves source
//! locations changes nothing here).

use std::fmt::Write as _;

use serde::Serialize;

use crate::algebra::PrintOptions;
use crate::analysis::operand_indexing::operand_map_to_string;
use crate::analysis::{analyze, view, Query};
use crate::model::{ComputationRef, HloFile, Instruction, Module, Opcode};

/// Differences between two versions of one module.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ModuleDiff {
    pub before_name: Option<String>,
    pub after_name: Option<String>,
    /// Computations only the second has (name, instruction count).
    pub added: Vec<(String, usize)>,
    /// Computations only the first has.
    pub removed: Vec<(String, usize)>,
    pub changed: Vec<ComputationDiff>,
    /// How many computations are the same in both.
    pub unchanged: usize,
}

/// Differences inside a computation both versions have.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ComputationDiff {
    pub name: String,
    /// Instructions only the second has, as written (metadata left out).
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<InstructionChange>,
    /// Fusions of this computation whose maps changed.
    pub fusion_maps: Vec<FusionMapsChange>,
}

/// One instruction of both versions, defined differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstructionChange {
    pub name: String,
    pub before: String,
    pub after: String,
}

/// A fusion whose maps differ: one row per (output, operand) whose maps changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FusionMapsChange {
    pub fusion: String,
    pub rows: Vec<MapRow>,
}

/// The maps from output `output` to operand `operand`, one line each; `None` where that
/// version has no such output or operand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MapRow {
    pub output: usize,
    pub operand: usize,
    pub before: Option<String>,
    pub after: Option<String>,
}

impl ModuleDiff {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Compares two versions of a module.
pub fn diff(before: &Module, after: &Module) -> ModuleDiff {
    diff_where(before, after, |_| true)
}

/// [`diff`], comparing the insides of only the computations `keep` names (the others
/// are counted as unchanged): the maps of a large module's fusions are not computed
/// for a question about one computation.
fn diff_where(before: &Module, after: &Module, keep: impl Fn(&str) -> bool) -> ModuleDiff {
    let mut result = ModuleDiff {
        before_name: before.name.clone(),
        after_name: after.name.clone(),
        ..ModuleDiff::default()
    };
    let size = |c: &ComputationRef| c.instructions.iter().filter(|i| !i.synthetic).count();
    for a in before.computations() {
        if after.computation_by_name(&a.name).is_none() {
            result.removed.push((a.name.clone(), size(&a)));
        }
    }
    let before_view = view::borrowed(before);
    let after_view = view::borrowed(after);
    for b in after.computations() {
        let Some(a) = before
            .computation_by_name(&b.name)
            .map(|id| before.computation(id))
        else {
            result.added.push((b.name.clone(), size(&b)));
            continue;
        };
        if !keep(&b.name) {
            result.unchanged += 1;
            continue;
        }
        let mut changes = compare(a, b);
        changes.fusion_maps =
            fusion_maps((before, &before_view, a), (after, &after_view, b), &changes);
        if changes.added.is_empty()
            && changes.removed.is_empty()
            && changes.changed.is_empty()
            && changes.fusion_maps.is_empty()
        {
            result.unchanged += 1;
        } else {
            result.changed.push(changes);
        }
    }
    result
}

/// An instruction as it is defined: `f32[8] add(%a, %b), attr=value` (no name, no
/// metadata), read from the text so that two dumps compare as written.
pub fn definition(c: ComputationRef, i: &Instruction) -> String {
    let mut text = format!(
        "{} {}{}",
        c.src(i.shape_range).trim(),
        i.opcode,
        c.src(i.operands_range).trim()
    );
    for attribute in &i.attributes {
        if attribute.name == "metadata" {
            continue;
        }
        let _ = write!(
            text,
            ", {}={}",
            c.src(attribute.name_range),
            c.src(attribute.value_range).trim()
        );
    }
    text
}

fn line(c: ComputationRef, i: &Instruction) -> String {
    let root = if i.is_root { "ROOT " } else { "" };
    format!("{root}%{} = {}", i.name, definition(c, i))
}

/// The instructions written in the text (not synthesized from inline operands).
fn named<'a>(c: ComputationRef<'a>) -> impl Iterator<Item = &'a Instruction> {
    c.model().instructions.iter().filter(|i| !i.synthetic)
}

/// Instructions added, removed and changed between two computations of one name.
fn compare(a: ComputationRef, b: ComputationRef) -> ComputationDiff {
    let mut d = ComputationDiff {
        name: b.name.clone(),
        ..ComputationDiff::default()
    };
    for i in named(a) {
        if b.instruction_by_name(&i.name).is_none() {
            d.removed.push(line(a, i));
        }
    }
    for j in named(b) {
        match a.instruction_by_name(&j.name) {
            None => d.added.push(line(b, j)),
            Some(i) => {
                let (before, after) = (line(a, i), line(b, j));
                if before != after {
                    d.changed.push(InstructionChange {
                        name: j.name.to_string(),
                        before,
                        after,
                    });
                }
            }
        }
    }
    d
}

type Side<'a> = (
    &'a Module,
    &'a crate::analysis::Module<'a>,
    ComputationRef<'a>,
);

/// The fusions of `b` (also in `a`) whose line or fused computation changed, with the
/// rows of maps that differ.
fn fusion_maps(a: Side, b: Side, changes: &ComputationDiff) -> Vec<FusionMapsChange> {
    let (a_module, a_view, a_comp) = a;
    let (b_module, b_view, b_comp) = b;
    let mut found = Vec::new();
    for j in b_comp
        .model()
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Fusion)
    {
        let Some(i) = a_comp
            .instruction_by_name(&j.name)
            .filter(|i| i.opcode == Opcode::Fusion)
        else {
            continue;
        };
        let line_changed = changes.changed.iter().any(|c| *c.name == *j.name);
        let body_changed = match (
            a_module.called_computation(i, "calls"),
            b_module.called_computation(j, "calls"),
        ) {
            (Some(x), Some(y)) => bodies_differ(x, y),
            _ => false,
        };
        if !line_changed && !body_changed {
            continue;
        }
        let before = maps(a_view, a_comp.id.index(), i);
        let after = maps(b_view, b_comp.id.index(), j);
        let rows = rows(&before, &after);
        if !rows.is_empty() {
            found.push(FusionMapsChange {
                fusion: j.name.to_string(),
                rows,
            });
        }
    }
    found
}

/// Whether two fused computations are defined differently (names aside: a pass
/// renumbers).
fn bodies_differ(x: ComputationRef, y: ComputationRef) -> bool {
    let lines = |c: ComputationRef| -> Vec<String> {
        c.model()
            .instructions
            .iter()
            .filter(|i| !i.synthetic)
            .map(|i| definition(c, i))
            .collect()
    };
    lines(x) != lines(y)
}

/// The maps of a fusion: `[output][operand]`, each the operand's maps on one line.
fn maps(view: &crate::analysis::Module, computation: usize, i: &Instruction) -> Vec<Vec<String>> {
    let options = PrintOptions {
        multiline: false,
        ..PrintOptions::default()
    };
    let outputs = match &*i.shape {
        crate::model::Shape::Tuple(elements) => elements.len().max(1),
        _ => 1,
    };
    (0..outputs)
        .map(|output_id| {
            let q = Query::output_to_input(computation, i.id.index(), output_id);
            analyze(view, &q)
                .entries
                .iter()
                .map(|entry| {
                    let mut text: Vec<String> = entry
                        .maps
                        .iter()
                        .map(|m| operand_map_to_string(m, &options).trim().replace('\n', " "))
                        .collect();
                    if entry.unknown.is_some() {
                        text.push("unknown indexing".into());
                    }
                    if text.is_empty() {
                        "not read".into()
                    } else {
                        text.join(" | ")
                    }
                })
                .collect()
        })
        .collect()
}

fn rows(before: &[Vec<String>], after: &[Vec<String>]) -> Vec<MapRow> {
    let mut rows = Vec::new();
    for output in 0..before.len().max(after.len()) {
        let a = before.get(output).map(Vec::as_slice).unwrap_or(&[]);
        let b = after.get(output).map(Vec::as_slice).unwrap_or(&[]);
        for operand in 0..a.len().max(b.len()) {
            let (x, y) = (a.get(operand), b.get(operand));
            if x != y {
                rows.push(MapRow {
                    output,
                    operand,
                    before: x.cloned(),
                    after: y.cloned(),
                });
            }
        }
    }
    rows
}

/// The diff as text: a summary line, then `+`/`-`/`~` lines per computation and
/// instruction, and changed fusion maps in two columns (before │ after).
pub fn render(d: &ModuleDiff) -> String {
    let mut out = String::new();
    let name = |n: &Option<String>| n.clone().unwrap_or_else(|| "(unnamed)".into());
    if d.before_name != d.after_name {
        let _ = writeln!(
            out,
            "modules: {} → {}",
            name(&d.before_name),
            name(&d.after_name)
        );
    }
    let _ = writeln!(
        out,
        "computations: {} added, {} removed, {} changed, {} unchanged",
        d.added.len(),
        d.removed.len(),
        d.changed.len(),
        d.unchanged
    );
    for (c, n) in &d.added {
        let _ = writeln!(out, "+ computation %{c} ({n} instructions)");
    }
    for (c, n) in &d.removed {
        let _ = writeln!(out, "- computation %{c} ({n} instructions)");
    }
    for c in &d.changed {
        let _ = writeln!(
            out,
            "~ computation %{}: {} added, {} removed, {} changed",
            c.name,
            c.added.len(),
            c.removed.len(),
            c.changed.len()
        );
        for line in &c.removed {
            let _ = writeln!(out, "    - {line}");
        }
        for line in &c.added {
            let _ = writeln!(out, "    + {line}");
        }
        for change in &c.changed {
            let _ = writeln!(out, "    ~ %{}", change.name);
            let _ = writeln!(out, "        - {}", change.before);
            let _ = writeln!(out, "        + {}", change.after);
        }
        for fusion in &c.fusion_maps {
            side_by_side(&mut out, fusion);
        }
    }
    out
}

fn side_by_side(out: &mut String, fusion: &FusionMapsChange) {
    let _ = writeln!(
        out,
        "    maps of fusion %{} (before │ after)",
        fusion.fusion
    );
    let absent = "—".to_string();
    let width = fusion
        .rows
        .iter()
        .map(|r| r.before.as_ref().unwrap_or(&absent).chars().count())
        .max()
        .unwrap_or(0);
    for row in &fusion.rows {
        let before = row.before.as_ref().unwrap_or(&absent);
        let pad = width - before.chars().count();
        let _ = writeln!(
            out,
            "      output {} operand {}: {before}{} │ {}",
            row.output,
            row.operand,
            " ".repeat(pad),
            row.after.as_ref().unwrap_or(&absent)
        );
    }
}

/// Each module of `before` against the module of `after` with its name (else the one
/// at its position).
pub fn compare_files(before: &HloFile, after: &HloFile) -> Vec<ModuleDiff> {
    compare_files_where(before, after, |_| true)
}

/// What changed in computation `computation` between two dumps ([`restrict`]), only
/// that computation compared instruction by instruction.
pub fn compare_computation(
    before: &HloFile,
    after: &HloFile,
    computation: &str,
) -> Vec<ModuleDiff> {
    compare_files_where(before, after, |c| c == computation)
        .iter()
        .map(|d| restrict(d, computation))
        .collect()
}

fn compare_files_where(
    before: &HloFile,
    after: &HloFile,
    keep: impl Fn(&str) -> bool,
) -> Vec<ModuleDiff> {
    before
        .modules
        .iter()
        .enumerate()
        .filter_map(|(k, a)| {
            let b = after
                .modules
                .iter()
                .find(|b| b.name.is_some() && b.name == a.name)
                .or_else(|| after.modules.get(k))?;
            Some(diff_where(a, b, &keep))
        })
        .collect()
}

/// `d` cut down to computation `computation`: its changes, and the computations added
/// or removed that its changed lines name (`calls=%fused_computation.3` of a new
/// fusion); the others count as unchanged. What one pass did to the computation of
/// the instruction being followed ([`super::history::passes`]).
pub fn restrict(d: &ModuleDiff, computation: &str) -> ModuleDiff {
    let changed: Vec<ComputationDiff> = d
        .changed
        .iter()
        .filter(|c| c.name == computation)
        .cloned()
        .collect();
    let lines: Vec<&str> = changed
        .iter()
        .flat_map(|c| {
            let edits = c.changed.iter().flat_map(|x| [&x.before, &x.after]);
            c.added.iter().chain(&c.removed).chain(edits)
        })
        .map(String::as_str)
        .collect();
    let named =
        |(c, _): &&(String, usize)| c == computation || lines.iter().any(|l| mentions(l, c));
    let added: Vec<_> = d.added.iter().filter(named).cloned().collect();
    let removed: Vec<_> = d.removed.iter().filter(named).cloned().collect();
    let dropped = d.changed.len() - changed.len();
    ModuleDiff {
        before_name: d.before_name.clone(),
        after_name: d.after_name.clone(),
        unchanged: d.unchanged + dropped,
        added,
        removed,
        changed,
    }
}

/// Whether `line` names `%computation` (not a longer name that starts the same).
fn mentions(line: &str, computation: &str) -> bool {
    let needle = format!("%{computation}");
    line.match_indices(&needle).any(|(at, _)| {
        let next = line.as_bytes().get(at + needle.len());
        !next.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    })
}

/// What the editor's diff command shows: "no change", or each changed module.
pub fn render_changes(modules: &[ModuleDiff]) -> String {
    let mut text = String::new();
    if modules.iter().all(ModuleDiff::is_empty) {
        text.push_str("no change\n");
    }
    for m in modules.iter().filter(|m| !m.is_empty()) {
        text.push_str(&render(m));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_hlo;

    const BEFORE: &str = "HloModule m\n\n%fused (p: f32[4,8]) -> f32[8,4] {\n  %p = f32[4,8] parameter(0)\n  ROOT %t = f32[8,4] transpose(%p), dimensions={1,0}\n}\n\n%gone (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n\nENTRY %main (a: f32[4,8]) -> f32[8,4] {\n  %a = f32[4,8] parameter(0), metadata={op_name=\"a\"}\n  %n = f32[4,8] negate(%a)\n  ROOT %f = f32[8,4] fusion(%n), kind=kLoop, calls=%fused\n}\n";
    const AFTER: &str = "HloModule m\n\n%fused (p: f32[4,8]) -> f32[8,4] {\n  %p = f32[4,8] parameter(0)\n  %r = f32[8,4] reshape(%p)\n  ROOT %e = f32[8,4] exponential(%r)\n}\n\nENTRY %main (a: f32[4,8]) -> f32[8,4] {\n  %a = f32[4,8] parameter(0), metadata={op_name=\"moved\"}\n  %n = f32[4,8] abs(%a)\n  ROOT %f = f32[8,4] fusion(%n), kind=kLoop, calls=%fused\n}\n";

    #[test]
    fn finds_added_removed_and_changed_by_name() {
        let (a, b) = (parse_hlo(BEFORE), parse_hlo(AFTER));
        let d = diff(&a.modules[0], &b.modules[0]);
        assert_eq!(d.removed, [("gone".to_string(), 1)]);
        assert!(d.added.is_empty());
        assert_eq!(d.unchanged, 0);
        let fused = d.changed.iter().find(|c| c.name == "fused").unwrap();
        assert_eq!(
            fused.removed,
            ["ROOT %t = f32[8,4] transpose(%p), dimensions={1,0}"]
        );
        assert_eq!(
            fused.added,
            [
                "%r = f32[8,4] reshape(%p)",
                "ROOT %e = f32[8,4] exponential(%r)"
            ]
        );
        let main = d.changed.iter().find(|c| c.name == "main").unwrap();
        // Metadata alone is no change; the opcode is.
        assert_eq!(main.changed.len(), 1);
        assert_eq!(main.changed[0].before, "%n = f32[4,8] negate(%a)");
        assert_eq!(main.changed[0].after, "%n = f32[4,8] abs(%a)");
        // The fusion line did not change, its body did: the maps are compared.
        assert_eq!(main.fusion_maps.len(), 1);
        let row = &main.fusion_maps[0].rows[0];
        assert_eq!((row.output, row.operand), (0, 0));
        assert!(
            row.before
                .as_ref()
                .unwrap()
                .starts_with("(d0, d1) -> (d1, d0)"),
            "{row:?}"
        );
        assert_eq!(
            row.after.as_deref(),
            Some("(d0, d1) -> (d0 floordiv 2, (d0 mod 2) * 4 + d1), domain: d0 in [0, 7], d1 in [0, 3]")
        );
        let text = render(&d);
        assert!(
            text.starts_with("computations: 0 added, 1 removed, 2 changed, 0 unchanged\n"),
            "{text}"
        );
        assert!(text.contains("    maps of fusion %f (before │ after)\n      output 0 operand 0: (d0, d1) -> (d1, d0)"), "{text}");
    }

    #[test]
    fn identical_modules_have_no_diff() {
        let (a, b) = (parse_hlo(BEFORE), parse_hlo(BEFORE));
        let d = diff(&a.modules[0], &b.modules[0]);
        assert!(d.is_empty());
        assert_eq!(d.unchanged, 3);
    }
}
