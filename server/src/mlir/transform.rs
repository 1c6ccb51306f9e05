//! Transform-dialect tiling: `transform.structured.tile_using_for`,
//! `tile_using_forall`, `tile`, `fuse`, `fuse_ext` (any `transform.*` op with
//! `tile_sizes`), ByteIR's `tile_ext %h [sizes]` (sizes right after the handle),
//! their `tile_interchange`/`interchange`, and the payload ops they tile when the
//! file says which: the handle operand is traced to a
//! `transform.structured.match` (`ops{["linalg.generic"]}`, `attributes {__root__}`)
//! and matched against the linalg ops of the file. Payload ops written before the
//! script are preferred (the document's input), else those after it.

use std::ops::Range;

use super::domain::LinalgAnalysis;
use super::lexer::TokKind;
use super::ops::{int_list, matching, IteratorType};
use super::reader::{MlirFile, ValueKind};
use crate::tiling::{SplitError, TiledSpace};

#[derive(Clone, Debug)]
pub struct TileOp {
    /// Index into [`MlirFile::ops`].
    pub op: usize,
    pub tile_sizes: Vec<i64>,
    pub sizes_range: Range<usize>,
    pub interchange: Vec<i64>,
    /// Indices into the analysis list of the payload ops it tiles.
    pub targets: Vec<usize>,
    /// How the targets were found (or why not).
    pub matcher: String,
}

/// A payload op's iteration space tiled by a tiling op. MLIR's tile size 0 (or a
/// missing size) leaves a loop untiled: one tile of the whole extent.
#[derive(Clone, Debug)]
pub struct Tiling {
    pub space: TiledSpace,
    /// Loops with a non-zero tile size.
    pub tiled: Vec<bool>,
    pub reduction: Vec<bool>,
}

/// Every tiling op of the file with its resolved targets.
pub fn tile_ops(src: &str, file: &MlirFile, linalg: &[LinalgAnalysis]) -> Vec<TileOp> {
    let mut out = Vec::new();
    for (i, o) in file.ops.iter().enumerate() {
        if !o.name.starts_with("transform.") {
            continue;
        }
        let Some((tile_sizes, sizes_range)) = int_list(src, file, o.tokens.clone(), "tile_sizes")
            .or_else(|| positional_sizes(src, file, o.tokens.clone()))
        else {
            continue;
        };
        let interchange = int_list(src, file, o.tokens.clone(), "tile_interchange")
            .or_else(|| int_list(src, file, o.tokens.clone(), "interchange"))
            .map(|(v, _)| v)
            .unwrap_or_default();
        let (targets, matcher) = resolve_targets(src, file, i, linalg);
        out.push(TileOp {
            op: i,
            tile_sizes,
            sizes_range,
            interchange,
            targets,
            matcher,
        });
    }
    out
}

/// Sizes written right after the handle, ByteIR's `tile_ext %h [2, 4, 8]` (and the
/// older upstream `tile %h [4, 8]`), with the list's range.
fn positional_sizes(
    src: &str,
    file: &MlirFile,
    toks: Range<usize>,
) -> Option<(Vec<i64>, Range<usize>)> {
    let handle = toks
        .clone()
        .find(|&i| file.tokens[i].kind == TokKind::Value)?;
    let open = handle + 1;
    if !toks.contains(&open) || file.token_text(src, open) != "[" {
        return None;
    }
    let close = matching(src, file, open, toks.end)?;
    let sizes = (open + 1..close)
        .filter(|&i| file.token_text(src, i) != ",")
        .map(|i| file.token_text(src, i).parse::<i64>().ok())
        .collect::<Option<Vec<_>>>()?;
    Some((
        sizes,
        file.tokens[open].range.start..file.tokens[close].range.end,
    ))
}

/// The first handle operand of the tiling op, traced to its `match`.
fn resolve_targets(
    src: &str,
    file: &MlirFile,
    op: usize,
    linalg: &[LinalgAnalysis],
) -> (Vec<usize>, String) {
    let o = &file.ops[op];
    let handle = file
        .value_uses
        .iter()
        .find(|u| o.range.contains(&u.range.start) && u.range.start > o.name_range.start);
    let Some(def) = handle.and_then(|u| u.target) else {
        return (
            vec![],
            "the tiled handle is not defined in this file".into(),
        );
    };
    let ValueKind::OpResult(m) = file.values[def].kind else {
        return (
            vec![],
            format!(
                "{} is the whole payload, not a matched op",
                file.values[def].name
            ),
        );
    };
    let matcher = &file.ops[m];
    if matcher.name != "transform.structured.match" {
        return (
            vec![],
            format!("the tiled handle comes from `{}`", matcher.name),
        );
    }
    let toks = matcher.tokens.clone();
    let op_names = braced_words(src, file, toks.clone(), "ops");
    let attrs = braced_words(src, file, toks, "attributes");
    let describe = format!(
        "match{}{}",
        if op_names.is_empty() {
            String::new()
        } else {
            format!(" ops {op_names:?}")
        },
        if attrs.is_empty() {
            String::new()
        } else {
            format!(" attributes {attrs:?}")
        }
    );
    let matches = |a: &LinalgAnalysis| {
        let p = &file.ops[a.op.op];
        let name_ok = op_names.is_empty() || op_names.contains(&p.name);
        let attrs_ok = attrs.iter().all(|want| {
            p.tokens
                .clone()
                .any(|t| file.tokens[t].kind == TokKind::Ident && file.token_text(src, t) == want)
        });
        name_ok && attrs_ok && !(op_names.is_empty() && attrs.is_empty())
    };
    let here = o.range.start;
    let before: Vec<usize> = (0..linalg.len())
        .filter(|&k| matches(&linalg[k]) && file.ops[linalg[k].op.op].range.start < here)
        .collect();
    let targets = if before.is_empty() {
        (0..linalg.len()).filter(|&k| matches(&linalg[k])).collect()
    } else {
        before
    };
    (targets, describe)
}

/// Words inside `key {...}` / `key{[...]}`: `ops{["linalg.generic"]}` → `linalg.generic`.
fn braced_words(src: &str, file: &MlirFile, toks: Range<usize>, key: &str) -> Vec<String> {
    let Some(k) = toks
        .clone()
        .find(|&i| file.tokens[i].kind == TokKind::Ident && file.token_text(src, i) == key)
    else {
        return vec![];
    };
    if file.token_text(src, k + 1) != "{" {
        return vec![];
    }
    let Some(close) = matching(src, file, k + 1, toks.end) else {
        return vec![];
    };
    (k + 2..close)
        .filter_map(|i| match file.tokens[i].kind {
            TokKind::Ident => Some(file.token_text(src, i).to_string()),
            TokKind::Str => Some(file.token_text(src, i).trim_matches('"').to_string()),
            _ => None,
        })
        .filter(|w| w != "=")
        .collect()
}

/// Tiles `target`'s static iteration space by the op's sizes; `None` when a loop
/// extent is unknown, an error for a negative size or an overflow.
pub fn tile(t: &TileOp, target: &LinalgAnalysis) -> Option<Result<Tiling, SplitError>> {
    let extents = target.extents()?;
    let sizes: Vec<i64> = (0..extents.len())
        .map(|d| t.tile_sizes.get(d).copied().unwrap_or(0))
        .collect();
    let tiles: Vec<i64> = sizes
        .iter()
        .zip(&extents)
        .map(|(&s, &n)| if s == 0 { n.max(1) } else { s })
        .collect();
    Some(TiledSpace::new(&extents, &tiles).map(|space| {
        Tiling {
            space,
            tiled: sizes.iter().map(|&s| s != 0).collect(),
            reduction: target
                .loops
                .iter()
                .map(|l| l.iterator == Some(IteratorType::Reduction))
                .collect(),
        }
    }))
}
