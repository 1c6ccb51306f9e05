//! Linalg structured ops as the analysis needs them: operands with their types,
//! one MLIR indexing map per operand (loops as dimensions) and the iterator
//! types; written out for `linalg.generic`, implied for the named ops below.
//!
//! Named ops covered (maps from their OpDSL definitions in MLIR's
//! `LinalgNamedStructuredOps.yaml`): `fill`, `copy`, `elemwise_unary`,
//! `elemwise_binary`, `map`, `matmul`, `batch_matmul`, `matvec`, `vecmat`, `dot`,
//! `transpose`, `broadcast`, `reduce`, `conv_2d_nhwc_fhwc`, `conv_2d_nhwc_hwcf`,
//! `conv_2d_nchw_fchw`. Named ops with an explicit `indexing_maps = [...]` (the
//! newer transposed matmuls) use those. ByteIR's `linalg_ext` ops and upstream
//! `linalg.softmax` come from [`super::linalg_ext`].

use std::ops::Range;

use super::lexer::TokKind;
use super::reader::MlirFile;
use super::types::{parse_type, ShapedType};
use crate::algebra::{Expr, IndexingMap, Variable};
use crate::model::Diagnostic;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IteratorType {
    Parallel,
    Reduction,
}

impl IteratorType {
    pub fn as_str(self) -> &'static str {
        match self {
            IteratorType::Parallel => "parallel",
            IteratorType::Reduction => "reduction",
        }
    }
}

/// One `ins`/`outs` operand.
#[derive(Clone, Debug)]
pub struct Operand {
    pub value: String,
    pub value_range: Range<usize>,
    pub ty_text: String,
    pub ty_range: Option<Range<usize>>,
    /// `None` when the type is missing or not a shaped/scalar type.
    pub ty: Option<ShapedType>,
    pub is_output: bool,
}

/// Where an operand's map is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapSource {
    /// An alias use `#map3` (range of the use; index of the alias definition).
    Alias {
        range: Range<usize>,
        alias: Option<usize>,
    },
    /// An inline `affine_map<...>`, index into [`MlirFile::maps`].
    Inline { range: Range<usize>, site: usize },
    /// Implied by a named op's definition.
    Implied,
}

impl MapSource {
    pub fn range(&self) -> Option<Range<usize>> {
        match self {
            MapSource::Alias { range, .. } | MapSource::Inline { range, .. } => Some(range.clone()),
            MapSource::Implied => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct OperandMap {
    /// MLIR form: loops are dimensions `d0..`, bounds unknown. `None` when the
    /// map could not be read (an unknown alias, a parse error).
    pub map: Option<IndexingMap>,
    pub source: MapSource,
}

/// A linalg op read from the text.
#[derive(Clone, Debug)]
pub struct StructuredOp {
    /// Index into [`MlirFile::ops`].
    pub op: usize,
    pub name: String,
    pub operands: Vec<Operand>,
    /// Parallel to `operands`.
    pub maps: Vec<OperandMap>,
    pub iterators: Vec<IteratorType>,
    /// Problems reading the op (not analysis findings).
    pub notes: Vec<(Range<usize>, String)>,
    /// Errors in the op's structure that its definition rules out (a `linalg_ext`
    /// softmax without four outputs, a `dimension(k)` past the rank).
    pub diagnostics: Vec<Diagnostic>,
    /// For `linalg_ext` ops and `linalg.softmax`: what their loops and maps mean.
    pub ext: Option<super::linalg_ext::ExtInfo>,
}

impl StructuredOp {
    /// Op `op` named `name` over `operands` (ins, then outs), nothing read yet.
    pub fn new(op: usize, name: String, operands: Vec<Operand>) -> StructuredOp {
        StructuredOp {
            op,
            name,
            operands,
            maps: vec![],
            iterators: vec![],
            notes: vec![],
            diagnostics: vec![],
            ext: None,
        }
    }
}

/// Every linalg op of the file with maps (written or implied).
pub fn structured_ops(src: &str, file: &MlirFile) -> Vec<StructuredOp> {
    (0..file.ops.len())
        .filter_map(|i| structured_op(src, file, i))
        .collect()
}

/// The structured op at index `op` of the file, if it is one we know.
pub fn structured_op(src: &str, file: &MlirFile, op: usize) -> Option<StructuredOp> {
    if let Some(ext) = super::linalg_ext::structured_op(src, file, op) {
        return Some(ext);
    }
    let o = &file.ops[op];
    let short = o.name.strip_prefix("linalg.")?;
    let toks = o.tokens.clone();
    let mut operands = group_operands(src, file, toks.clone(), "ins", false);
    operands.extend(group_operands(src, file, toks.clone(), "outs", true));
    let mut s = StructuredOp::new(op, o.name.clone(), operands);
    if let Some(list) = attr_list(src, file, toks.clone(), "indexing_maps") {
        s.maps = list.into_iter().map(|t| map_of_token(file, t)).collect();
        s.iterators = attr_list(src, file, toks.clone(), "iterator_types")
            .unwrap_or_default()
            .into_iter()
            .filter_map(|t| {
                let text = file.token_text(src, t);
                if text.contains("parallel") {
                    Some(IteratorType::Parallel)
                } else if text.contains("reduction") {
                    Some(IteratorType::Reduction)
                } else {
                    None
                }
            })
            .collect();
        if s.iterators.is_empty() {
            if let Some(m) = s.maps.iter().find_map(|m| m.map.as_ref()) {
                // Named ops with explicit maps: reductions are the loops the output omits.
                s.iterators =
                    implied_iterators(m.dims().len(), s.maps.last().and_then(|m| m.map.as_ref()));
            }
        }
        return Some(s);
    }
    if short == "generic" {
        s.notes.push((
            o.name_range.clone(),
            "linalg.generic without `indexing_maps`".into(),
        ));
        return Some(s);
    }
    let implied = implied_maps(short, src, file, toks, &s.operands)?;
    s.iterators = implied.1;
    s.maps = implied
        .0
        .into_iter()
        .map(|m| OperandMap {
            map: Some(m),
            source: MapSource::Implied,
        })
        .collect();
    Some(s)
}

fn implied_iterators(loops: usize, output: Option<&IndexingMap>) -> Vec<IteratorType> {
    let used: Vec<usize> = output
        .map(|m| {
            m.results()
                .iter()
                .filter_map(super::maps::is_bare_dim)
                .collect()
        })
        .unwrap_or_default();
    (0..loops)
        .map(|d| {
            if used.contains(&d) {
                IteratorType::Parallel
            } else {
                IteratorType::Reduction
            }
        })
        .collect()
}

/// `ins(%a, %b : T1, T2)` (or `outs`) within token range `toks`.
pub(crate) fn group_operands(
    src: &str,
    file: &MlirFile,
    toks: Range<usize>,
    keyword: &str,
    is_output: bool,
) -> Vec<Operand> {
    let Some(k) = toks.clone().find(|&i| {
        file.tokens[i].kind == TokKind::Ident
            && file.token_text(src, i) == keyword
            && file.token_text(src, i + 1) == "("
    }) else {
        return vec![];
    };
    let Some(close) = matching(src, file, k + 1, toks.end) else {
        return vec![];
    };
    let inner = k + 2..close;
    let colon = inner
        .clone()
        .find(|&i| file.token_text(src, i) == ":" && file.tokens[i].kind == TokKind::Punct);
    let values: Vec<usize> = inner
        .clone()
        .take_while(|&i| Some(i) != colon)
        .filter(|&i| file.tokens[i].kind == TokKind::Value)
        .collect();
    let types: Vec<usize> = match colon {
        Some(c) => (c + 1..close)
            .filter(|&i| file.token_text(src, i) != "," || file.tokens[i].kind != TokKind::Punct)
            .collect(),
        None => vec![],
    };
    values
        .iter()
        .enumerate()
        .map(|(n, &v)| {
            let t = types.get(n).copied();
            let ty_text = t
                .map(|t| file.token_text(src, t).to_string())
                .unwrap_or_default();
            Operand {
                value: file.token_text(src, v).to_string(),
                value_range: file.tokens[v].range.clone(),
                ty: t.and_then(|_| parse_type(&ty_text)),
                ty_text,
                ty_range: t.map(|t| file.tokens[t].range.clone()),
                is_output,
            }
        })
        .collect()
}

/// Index of the token closing the bracket opened at `open`, before `end`.
pub fn matching(src: &str, file: &MlirFile, open: usize, end: usize) -> Option<usize> {
    let mut depth = 0i32;
    for i in open..end.min(file.tokens.len()) {
        if file.tokens[i].kind != TokKind::Punct {
            continue;
        }
        match file.token_text(src, i) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The element tokens of `name = [a, b, ...]` in `toks` (commas dropped).
pub fn attr_list(src: &str, file: &MlirFile, toks: Range<usize>, name: &str) -> Option<Vec<usize>> {
    let k = toks.clone().find(|&i| {
        file.tokens[i].kind == TokKind::Ident
            && file.token_text(src, i) == name
            && file.token_text(src, i + 1) == "="
    })?;
    // `name = [..]` or `name [..]` (newer transform syntax writes `tile_sizes [8, 32]`).
    let open = if file.token_text(src, k + 2) == "[" {
        k + 2
    } else {
        return None;
    };
    let close = matching(src, file, open, toks.end)?;
    Some(
        (open + 1..close)
            .filter(|&i| file.token_text(src, i) != ",")
            .collect(),
    )
}

/// Integers of `name = [1, 2]` (or `name [1, 2]`), with the list's range.
pub fn int_list(
    src: &str,
    file: &MlirFile,
    toks: Range<usize>,
    name: &str,
) -> Option<(Vec<i64>, Range<usize>)> {
    let k = toks
        .clone()
        .find(|&i| file.tokens[i].kind == TokKind::Ident && file.token_text(src, i) == name)?;
    let mut open = k + 1;
    if file.token_text(src, open) == "=" {
        open += 1;
    }
    let text = file.token_text(src, open);
    if text.starts_with("array<") || text.starts_with("dense<") {
        // `array<i64: 1, 2>` / `dense<[1, 2]>`.
        let inner = text[text.find('<')? + 1..text.len() - 1].trim();
        let inner = inner
            .split_once(':')
            .map_or(inner, |(_, v)| v)
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let vals = inner
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().parse::<i64>().ok())
            .collect::<Option<Vec<_>>>()?;
        return Some((vals, file.tokens[open].range.clone()));
    }
    if text != "[" {
        return None;
    }
    let close = matching(src, file, open, toks.end)?;
    let mut vals = Vec::new();
    for i in open + 1..close {
        let t = file.token_text(src, i);
        if t == "," {
            continue;
        }
        // Scalable sizes `[4]` inside the list are not tile sizes we can check.
        vals.push(t.parse::<i64>().ok()?);
    }
    Some((
        vals,
        file.tokens[open].range.start..file.tokens[close].range.end,
    ))
}

fn map_of_token(file: &MlirFile, t: usize) -> OperandMap {
    let tok = &file.tokens[t];
    match tok.kind {
        TokKind::Hash => {
            let alias = file
                .alias_uses
                .iter()
                .find(|u| u.range == tok.range)
                .and_then(|u| u.target);
            let map = alias
                .and_then(|a| file.aliases[a].map)
                .and_then(|m| file.maps[m].map.as_ref().ok().cloned());
            OperandMap {
                map,
                source: MapSource::Alias {
                    range: tok.range.clone(),
                    alias,
                },
            }
        }
        _ => {
            let site = file.maps.iter().position(|m| m.range == tok.range);
            OperandMap {
                map: site.and_then(|s| file.maps[s].map.as_ref().ok().cloned()),
                source: match site {
                    Some(site) => MapSource::Inline {
                        range: tok.range.clone(),
                        site,
                    },
                    None => MapSource::Alias {
                        range: tok.range.clone(),
                        alias: None,
                    },
                },
            }
        }
    }
}

/// An MLIR map over `loops` dimensions with results `results` (loop indices or expressions).
pub(crate) fn affine(loops: usize, results: Vec<Expr>) -> IndexingMap {
    IndexingMap::new(
        (0..loops)
            .map(|_| Variable::new(i64::MIN, i64::MAX))
            .collect(),
        vec![],
        vec![],
        results,
        vec![],
    )
}

pub(crate) fn dims(ids: &[usize]) -> Vec<Expr> {
    ids.iter().map(|&i| Expr::dim(i)).collect()
}

fn rank(ops: &[Operand], k: usize) -> Option<usize> {
    ops.get(k).and_then(|o| o.ty.as_ref()).map(ShapedType::rank)
}

/// Maps and iterators of a named op, from its definition and its operand ranks.
fn implied_maps(
    short: &str,
    src: &str,
    file: &MlirFile,
    toks: Range<usize>,
    ops: &[Operand],
) -> Option<(Vec<IndexingMap>, Vec<IteratorType>)> {
    use IteratorType::{Parallel as P, Reduction as R};
    let out_rank = ops
        .iter()
        .rfind(|o| o.is_output)
        .and_then(|o| o.ty.as_ref())
        .map(ShapedType::rank);
    match short {
        "fill" | "copy" | "elemwise_unary" | "elemwise_binary" | "map" => {
            // Identity on the output; rank-0 (scalar) inputs broadcast.
            let n = out_rank?;
            let maps = ops
                .iter()
                .map(|o| {
                    let r = o.ty.as_ref().map_or(0, ShapedType::rank);
                    if r == 0 {
                        affine(n, vec![])
                    } else {
                        affine(n, dims(&(0..n).collect::<Vec<_>>()))
                    }
                })
                .collect();
            Some((maps, vec![P; n]))
        }
        "matmul" => Some((
            vec![
                affine(3, dims(&[0, 2])),
                affine(3, dims(&[2, 1])),
                affine(3, dims(&[0, 1])),
            ],
            vec![P, P, R],
        )),
        "batch_matmul" => Some((
            vec![
                affine(4, dims(&[0, 1, 3])),
                affine(4, dims(&[0, 3, 2])),
                affine(4, dims(&[0, 1, 2])),
            ],
            vec![P, P, P, R],
        )),
        "matvec" => Some((
            vec![
                affine(2, dims(&[0, 1])),
                affine(2, dims(&[1])),
                affine(2, dims(&[0])),
            ],
            vec![P, R],
        )),
        "vecmat" => Some((
            vec![
                affine(2, dims(&[1])),
                affine(2, dims(&[1, 0])),
                affine(2, dims(&[0])),
            ],
            vec![P, R],
        )),
        "dot" => Some((
            vec![
                affine(1, dims(&[0])),
                affine(1, dims(&[0])),
                affine(1, vec![]),
            ],
            vec![R],
        )),
        "transpose" => {
            // out[i] = in[permutation[i]]: the input's result at permutation[i] is loop i.
            let (perm, _) = int_list(src, file, toks, "permutation")?;
            let n = perm.len();
            let mut res = vec![Expr::constant(0); n];
            for (i, &p) in perm.iter().enumerate() {
                *res.get_mut(usize::try_from(p).ok()?)? = Expr::dim(i);
            }
            Some((
                vec![affine(n, res), affine(n, dims(&(0..n).collect::<Vec<_>>()))],
                vec![P; n],
            ))
        }
        "broadcast" => {
            // `dimensions` lists the output dimensions the input does not have.
            let (added, _) = int_list(src, file, toks, "dimensions")?;
            let n = out_rank?;
            let kept: Vec<usize> = (0..n).filter(|d| !added.contains(&(*d as i64))).collect();
            Some((
                vec![
                    affine(n, dims(&kept)),
                    affine(n, dims(&(0..n).collect::<Vec<_>>())),
                ],
                vec![P; n],
            ))
        }
        "reduce" => {
            // Loops are the input's dimensions; `dimensions` are reduced away in the outputs.
            let (reduced, _) = int_list(src, file, toks, "dimensions")?;
            let n = rank(ops, 0)?;
            let kept: Vec<usize> = (0..n).filter(|d| !reduced.contains(&(*d as i64))).collect();
            let maps = ops
                .iter()
                .map(|o| {
                    if o.is_output {
                        affine(n, dims(&kept))
                    } else {
                        affine(n, dims(&(0..n).collect::<Vec<_>>()))
                    }
                })
                .collect();
            let iters = (0..n)
                .map(|d| if kept.contains(&d) { P } else { R })
                .collect();
            Some((maps, iters))
        }
        "conv_2d_nhwc_fhwc" | "conv_2d_nhwc_hwcf" | "conv_2d_nchw_fchw" => {
            // Loops (n, oh, ow, f, kh, kw, c); input rows oh * stride + kh * dilation.
            let strides = attr_pair(src, file, toks.clone(), "strides");
            let dilations = attr_pair(src, file, toks, "dilations");
            let h = Expr::dim(1) * strides[0] + Expr::dim(4) * dilations[0];
            let w = Expr::dim(2) * strides[1] + Expr::dim(5) * dilations[1];
            let (input, filter, output) = match short {
                "conv_2d_nhwc_fhwc" => (
                    vec![Expr::dim(0), h, w, Expr::dim(6)],
                    dims(&[3, 4, 5, 6]),
                    dims(&[0, 1, 2, 3]),
                ),
                "conv_2d_nhwc_hwcf" => (
                    vec![Expr::dim(0), h, w, Expr::dim(6)],
                    dims(&[4, 5, 6, 3]),
                    dims(&[0, 1, 2, 3]),
                ),
                _ => (
                    vec![Expr::dim(0), Expr::dim(6), h, w],
                    dims(&[3, 6, 4, 5]),
                    dims(&[0, 3, 1, 2]),
                ),
            };
            Some((
                vec![affine(7, input), affine(7, filter), affine(7, output)],
                vec![P, P, P, P, R, R, R],
            ))
        }
        _ => None,
    }
}

/// `strides = dense<2> : tensor<2xi64>` or `dense<[2, 1]>`; default 1.
fn attr_pair(src: &str, file: &MlirFile, toks: Range<usize>, name: &str) -> [i64; 2] {
    match int_list(src, file, toks, name) {
        Some((v, _)) if v.len() == 1 => [v[0], v[0]],
        Some((v, _)) if v.len() == 2 => [v[0], v[1]],
        _ => [1, 1],
    }
}
