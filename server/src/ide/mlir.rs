//! The language features for `.mlir` documents, over [`crate::mlir`]: hover on a
//! map (alias definition or use, inline `affine_map`, `#xla.indexing_map`), on a
//! linalg op or ByteIR `linalg_ext` op (domain, what its loops mean, operand maps,
//! utilization), on a reshape/slice and on a
//! tiling op; inlay hints with each linalg op's loop bounds; go to definition and
//! references of attribute aliases and SSA values; document symbols.
//!
//! The server routes here for a [`super::Snapshot::Mlir`].

use std::fmt::Write as _;
use std::ops::Range;

use super::config::{Config, InlayHintMode};
use super::hover::Hover;
use super::inlay_hints::InlayHint;
use super::navigation::{Outline, OutlineKind};
use super::snapshot::MlirSnapshot;
use super::touches;
use crate::algebra::IndexingMap;
use crate::mlir::{LinalgAnalysis, MapKind, MlirAnalysis};

/// The hover at `offset` of an MLIR document.
pub fn hover(snapshot: &MlirSnapshot, offset: usize, config: &Config) -> Option<Hover> {
    if let Some(h) = stablehlo_hover(snapshot, offset, config) {
        return Some(h);
    }
    let (text, range) = describe(snapshot.text(), &snapshot.mlir(), offset, config)?;
    Some(Hover::new(text, range))
}

/// On a StableHLO op or value: the HLO hover of the instruction it is, placed on
/// the `.mlir` text.
fn stablehlo_hover(snapshot: &MlirSnapshot, offset: usize, config: &Config) -> Option<Hover> {
    let s = snapshot.stablehlo()?;
    let at = s.translation.to_hlo(offset)?;
    let mut h = super::hover::hover(&s.hlo, at, config, crate::hover::Detail::Summary)?;
    h.range = s.translation.to_mlir(h.range.clone())?;
    // Where the op comes from (its `loc(...)`), under the header as on HLO.
    let op = &s.translation.line_at(at)?.mlir_op;
    let source = super::source::mlir_hover_line(snapshot.text(), &snapshot.mlir().file, op);
    if let Some(line) = source {
        h.markdown = after_header(&h.markdown, &format!("{line}\n\n"));
    }
    h.markdown = mlir_header(&h.markdown, &snapshot.text()[op.clone()]);
    Some(h)
}

/// Longest op header shown before "…".
const MAX_HEADER_CHARS: usize = 160;

/// `markdown` whose first code block (the HLO instruction) is the op as the user
/// wrote it, the HLO spelling following on one line: a JAX user reads their
/// program's words first, and the HLO's to compare with the compiled dump.
fn mlir_header(markdown: &str, op: &str) -> String {
    let Some(rest) = markdown.strip_prefix("```hlo\n") else {
        return markdown.to_string();
    };
    let Some(end) = rest.find("\n```\n") else {
        return markdown.to_string();
    };
    let hlo = &rest[..end];
    let mut written = op.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(loc) = written.rfind(" loc(") {
        written.truncate(loc);
    }
    if let Some((cut, _)) = written.char_indices().nth(MAX_HEADER_CHARS) {
        written.truncate(cut);
        written.push('…');
    }
    crate::hover::single_blank_lines(format!(
        "```mlir\n{written}\n```\nAs HLO: `{hlo}`\n\n{}",
        &rest[end + "\n```\n".len()..]
    ))
}

/// `markdown` with `text` right after its first code block (the instruction's
/// header).
fn after_header(markdown: &str, text: &str) -> String {
    let end = markdown
        .match_indices("```")
        .nth(1)
        .and_then(|(k, _)| markdown[k..].find('\n').map(|n| k + n + 1))
        .unwrap_or(0);
    format!("{}{text}{}", &markdown[..end], &markdown[end..])
}

/// The HLO side's inlay hints of a StableHLO document, each after the op it is
/// about (one per op: the hint of the instruction its value names, not of the
/// helpers an op was written with).
fn stablehlo_hints(
    snapshot: &MlirSnapshot,
    range: &Range<usize>,
    config: &Config,
) -> Vec<InlayHint> {
    let Some(s) = snapshot.stablehlo() else {
        return Vec::new();
    };
    let all = 0..s.translation.hlo.len();
    super::inlay_hints::inlay_hints(&s.hlo, all, config)
        .into_iter()
        .filter(|hint| {
            s.translation
                .line_at(hint.offset)
                .is_some_and(|l| l.primary)
        })
        .filter_map(|mut hint| {
            let at = s.translation.to_mlir(hint.offset..hint.offset)?;
            hint.offset = at.end;
            (range.start <= at.end && at.end <= range.end).then_some(hint)
        })
        .collect()
}

/// Markdown and the range it describes; plain so tests can call it on text.
pub fn describe(
    src: &str,
    a: &MlirAnalysis,
    offset: usize,
    config: &Config,
) -> Option<(String, Range<usize>)> {
    let f = &a.file;
    let line = |m: &IndexingMap| m.print(&config.print_options(false));
    let block = |m: &IndexingMap| m.print(&config.print_options(true));
    // An alias, at its definition or a use.
    let alias_use = f.alias_uses.iter().find(|u| touches(&u.range, offset));
    let alias_def = f
        .aliases
        .iter()
        .position(|al| touches(&al.name_range, offset));
    if let Some(k) = alias_def.or(alias_use.and_then(|u| u.target)) {
        let al = &f.aliases[k];
        let range = alias_use.map_or(al.name_range.clone(), |u| u.range.clone());
        let mut out = format!(
            "```mlir\n{} = {}\n```\n",
            al.name,
            &src[al.value_range.clone()]
        );
        if let Some(site) = al.map.and_then(|m| f.maps.get(m)) {
            map_section(&mut out, site.kind, site.map.as_ref().ok(), &block);
        }
        // In a linalg op: the operand's map over the op's domain.
        if let Some(u) = alias_use {
            operand_section(&mut out, a, &u.range, &line);
        }
        return Some((out, range));
    }
    if let Some(k) = f.map_at(offset) {
        let site = &f.maps[k];
        let mut out = String::new();
        map_section(&mut out, site.kind, site.map.as_ref().ok(), &block);
        if let Err(e) = &site.map {
            let _ = writeln!(out, "**error**: {}", e.message);
        }
        operand_section(&mut out, a, &site.range, &line);
        return Some((out, site.range.clone()));
    }
    if let Some(l) = a
        .linalg
        .iter()
        .find(|l| touches(&f.ops[l.op.op].name_range, offset))
    {
        return Some((
            linalg_hover(src, a, l, &line),
            f.ops[l.op.op].name_range.clone(),
        ));
    }
    if let Some(m) = a
        .moves
        .iter()
        .find(|m| touches(&f.ops[m.op].name_range, offset))
    {
        let op = &f.ops[m.op];
        let out = match &m.map {
            Some(map) => format!("**{}**: {}\n```\n{}\n```\n", op.name, m.note, block(map)),
            None => format!("**{}**: no static map ({})\n", op.name, m.note),
        };
        return Some((out, op.name_range.clone()));
    }
    if let Some(t) = a
        .tiles
        .iter()
        .find(|t| touches(&f.ops[t.op].name_range, offset) || touches(&t.sizes_range, offset))
    {
        let op = &f.ops[t.op];
        let mut out = format!("**{}** tile sizes {:?}", op.name, t.tile_sizes);
        if !t.interchange.is_empty() {
            let _ = write!(out, ", interchange {:?}", t.interchange);
        }
        let _ = writeln!(out, "\n\ntargets ({}):", t.matcher);
        // One line table for every target (a script may tile hundreds of ops).
        let lines = crate::syntax::LineIndex::new(src);
        for &k in &t.targets {
            let target = &a.linalg[k];
            let (tl, _) = lines.line_col(src, f.ops[target.op.op].name_range.start);
            let _ = writeln!(
                out,
                "* `{}` (line {tl}): {}",
                target.op.name,
                target.domain_text()
            );
            if let Some(Ok(tiling)) = crate::mlir::transform::tile(t, target) {
                for (d, s) in tiling
                    .space
                    .splits
                    .iter()
                    .enumerate()
                    .filter(|(d, _)| tiling.tiled[*d])
                {
                    let guard = s.predicate(d).map_or("divisible".to_string(), |p| {
                        format!("{} holes, predicate `{p}`", s.holes())
                    });
                    let _ = writeln!(
                        out,
                        "  * d{d}: {} by {} → {} tiles, {guard}",
                        s.extent,
                        s.tile,
                        s.tile_count()
                    );
                }
            }
        }
        return Some((out, op.name_range.clone()));
    }
    if let Some(def) = f.value_at(offset) {
        let v = &f.values[def];
        let range = f
            .value_uses
            .iter()
            .find(|u| touches(&u.range, offset))
            .map_or(v.range.clone(), |u| u.range.clone());
        let (dl, _) = crate::syntax::line_col(src, v.range.start);
        let what = match v.kind {
            crate::mlir::reader::ValueKind::OpResult(op) => {
                format!("result of `{}`", f.ops[op].name)
            }
            crate::mlir::reader::ValueKind::Argument => "function argument".to_string(),
            crate::mlir::reader::ValueKind::BlockArgument => "block argument".to_string(),
        };
        let ty = v.ty.as_ref().map_or(String::new(), |t| format!(" : `{t}`"));
        return Some((
            format!("`{}`{ty}: {what}, defined on line {dl}", v.name),
            range,
        ));
    }
    None
}

fn map_section(
    out: &mut String,
    kind: MapKind,
    map: Option<&IndexingMap>,
    block: &dyn Fn(&IndexingMap) -> String,
) {
    let Some(map) = map else { return };
    let simplified = map.simplified();
    match kind {
        MapKind::XlaIndexingMap => {
            let _ = writeln!(
                out,
                "xla.indexing_map, simplified with its domain:\n```\n{}\n```",
                block(&simplified)
            );
        }
        MapKind::AffineSet => {
            let _ = writeln!(
                out,
                "affine_set as a domain:\n```\n{}\n```",
                block(&simplified)
            );
        }
        MapKind::AffineMap => {
            let _ = writeln!(out, "simplified: `{}`", simplified.to_affine_map());
        }
    }
}

/// When `range` is an entry of some linalg op's `indexing_maps`, that operand's map
/// over the op's domain.
fn operand_section(
    out: &mut String,
    a: &MlirAnalysis,
    range: &Range<usize>,
    line: &dyn Fn(&IndexingMap) -> String,
) {
    for l in &a.linalg {
        for (k, m) in l.op.maps.iter().enumerate() {
            if m.source.range().as_ref() != Some(range) {
                continue;
            }
            let Some(operand) = l.op.operands.get(k) else {
                continue;
            };
            let _ = writeln!(
                out,
                "\noperand #{k} `{}` of `{}`, domain {}:",
                operand.value,
                l.op.name,
                l.domain_text()
            );
            match l.views.get(k).and_then(|v| v.as_ref()) {
                Some(v) => {
                    let _ = writeln!(out, "```\n{}\n```", line(&v.map));
                    utilization_line(out, v);
                }
                None => {
                    let _ = writeln!(out, "(no static domain)");
                }
            }
        }
    }
}

fn utilization_line(out: &mut String, v: &crate::mlir::domain::OperandView) {
    if let Some(u) = v.utilization {
        let _ = writeln!(out, "{u}");
    }
}

fn linalg_hover(
    src: &str,
    a: &MlirAnalysis,
    l: &LinalgAnalysis,
    line: &dyn Fn(&IndexingMap) -> String,
) -> String {
    let iters: Vec<&str> = l
        .loops
        .iter()
        .map(|x| x.iterator.map_or("?", |i| i.as_str()))
        .collect();
    let mut out = format!(
        "**{}**\n\ndomain: {} ({})\n",
        l.op.name,
        l.domain_text(),
        iters.join(", ")
    );
    let ext = l.op.ext.as_ref();
    if let Some(e) = ext {
        let _ = writeln!(out, "\n{}", e.summary);
    }
    for (k, o) in l.op.operands.iter().enumerate() {
        let role = if o.is_output { "out" } else { "in" };
        let _ = writeln!(out, "\n{role} #{k} `{}` : `{}`", o.value, o.ty_text);
        if let Some(note) = ext
            .and_then(|e| e.operand_notes.get(k))
            .and_then(Option::as_ref)
        {
            let _ = writeln!(out, "{note}");
        }
        if let Some(m) = l.op.maps.get(k) {
            let written = match &m.source {
                // Maps with their own variables show them bounded in the view below.
                crate::mlir::ops::MapSource::Implied => m
                    .map
                    .as_ref()
                    .filter(|m| m.range_vars().is_empty() && m.runtime_vars().is_empty())
                    .map(|m| format!("implied `{}`", m.to_affine_map())),
                other => other.range().map(|r| format!("`{}`", &src[r])),
            };
            if let Some(w) = written {
                let _ = writeln!(out, "map {w}");
            }
        }
        if let Some(Some(v)) = l.views.get(k) {
            let _ = writeln!(out, "```\n{}\n```", line(&v.map));
            utilization_line(&mut out, v);
        }
    }
    for d in &l.diagnostics {
        let _ = writeln!(out, "\n**{}**: {}", d.severity.as_str(), d.message);
    }
    let _ = a;
    out
}

/// Loop bounds after each linalg op name in `range`: `d0 ∈ [0, 1), d1 ∈ [0, 56)`.
pub fn inlay_hints(
    snapshot: &MlirSnapshot,
    range: Range<usize>,
    config: &Config,
) -> Vec<InlayHint> {
    if config.inlay_hints == InlayHintMode::Off {
        return Vec::new();
    }
    let a = snapshot.mlir();
    let mut hints = stablehlo_hints(snapshot, &range, config);
    hints.extend(
        a.linalg
            .iter()
            .filter(|l| {
                let r = &a.file.ops[l.op.op].name_range;
                r.start <= range.end && range.start <= r.end && !l.loops.is_empty()
            })
            .map(|l| InlayHint {
                offset: a.file.ops[l.op.op].name_range.end,
                label: l.domain_text(),
                tooltip: None,
                pad_right: true,
            }),
    );
    hints
}

/// The definition of the alias or SSA value at `offset`.
pub fn definition(snapshot: &MlirSnapshot, offset: usize) -> Vec<Range<usize>> {
    let analysis = snapshot.mlir();
    let f = &analysis.file;
    if let Some(k) = f.alias_at(offset) {
        return vec![f.aliases[k].name_range.clone()];
    }
    if let Some(v) = f.value_at(offset) {
        return vec![f.values[v].range.clone()];
    }
    Vec::new()
}

/// Byte ranges of every occurrence of the alias or value at `offset`, its
/// definition first when `include_declaration`.
pub fn occurrences(
    snapshot: &MlirSnapshot,
    offset: usize,
    include_declaration: bool,
) -> Vec<Range<usize>> {
    let analysis = snapshot.mlir();
    let f = &analysis.file;
    let mut out = Vec::new();
    if let Some(k) = f.alias_at(offset) {
        if include_declaration {
            out.push(f.aliases[k].name_range.clone());
        }
        out.extend(
            f.alias_uses
                .iter()
                .filter(|u| u.target == Some(k))
                .map(|u| u.range.clone()),
        );
    } else if let Some(v) = f.value_at(offset) {
        if include_declaration {
            out.push(f.values[v].range.clone());
        }
        out.extend(
            f.value_uses
                .iter()
                .filter(|u| u.target == Some(v))
                .map(|u| u.range.clone()),
        );
    }
    out
}

/// Functions with their linalg / tensor / transform ops, and the attribute aliases.
pub fn outline(snapshot: &MlirSnapshot) -> Vec<Outline> {
    let a = snapshot.mlir();
    let f = &a.file;
    let mut out: Vec<Outline> = f
        .aliases
        .iter()
        .map(|al| Outline {
            name: al.name.clone(),
            detail: None,
            kind: OutlineKind::Constant,
            range: al.name_range.start..al.value_range.end.max(al.name_range.end),
            selection: al.name_range.clone(),
            children: None,
        })
        .collect();
    let interesting = |name: &str| {
        name.starts_with("linalg.") && name != "linalg.yield"
            || name.starts_with("linalg_ext.") && name != "linalg_ext.yield"
            || name.starts_with("tensor.") && name != "tensor.yield"
            || name.starts_with("transform.")
    };
    let op_symbol = |i: usize| {
        let o = &f.ops[i];
        let detail = a
            .linalg
            .iter()
            .find(|l| l.op.op == i)
            .map(LinalgAnalysis::domain_text);
        let name = o.results.first().map_or(o.name.clone(), |&v| {
            format!("{} = {}", f.values[v].name, o.name)
        });
        Outline {
            name,
            detail,
            kind: OutlineKind::Operator,
            range: o.range.clone(),
            selection: o.name_range.clone(),
            children: None,
        }
    };
    for (fi, func) in f.funcs.iter().enumerate() {
        let children: Vec<Outline> = (0..f.ops.len())
            .filter(|&i| {
                f.ops[i].func == Some(fi) && f.funcs[fi].op != i && interesting(&f.ops[i].name)
            })
            .map(op_symbol)
            .collect();
        let name = if func.name.is_empty() {
            f.ops[func.op].name.clone()
        } else {
            func.name.clone()
        };
        out.push(Outline {
            name,
            detail: None,
            kind: OutlineKind::Function,
            range: func.range.clone(),
            selection: func.name_range.clone(),
            children: Some(children),
        });
    }
    // Ops outside functions (transform scripts).
    out.extend(
        (0..f.ops.len())
            .filter(|&i| f.ops[i].func.is_none() && interesting(&f.ops[i].name))
            .map(op_symbol),
    );
    out
}
