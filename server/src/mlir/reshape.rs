//! Index maps of the tensor ops that move data without computing:
//! `tensor.expand_shape` / `tensor.collapse_shape` (reshapes: linearize and
//! delinearize along each reassociation group) and `tensor.extract_slice` /
//! `tensor.insert_slice` (offset + index × stride; a dynamic offset `%v` becomes a
//! runtime variable bounded by the slice having to fit).
//!
//! Maps go from the op's result index to its source index, except `insert_slice`,
//! whose map goes from the inserted tensor's index to the destination's.

use std::ops::Range;

use super::lexer::TokKind;
use super::ops::matching;
use super::reader::MlirFile;
use super::types::{parse_type, ShapedType};
use crate::algebra::{Expr, IndexingMap, Variable};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataMoveKind {
    ExpandShape,
    CollapseShape,
    ExtractSlice,
    InsertSlice,
    /// `linalg_ext.alias`: one to one ([`super::linalg_ext::alias_move`]).
    Alias,
}

#[derive(Clone, Debug)]
pub struct DataMove {
    /// Index into [`MlirFile::ops`].
    pub op: usize,
    pub kind: DataMoveKind,
    /// `None` with a reason in `note` when a size is dynamic or the text is unreadable.
    pub map: Option<IndexingMap>,
    /// What the map's domain and runtime variables are.
    pub note: String,
}

/// Every reshape and slice op of the file.
pub fn data_moves(src: &str, file: &MlirFile) -> Vec<DataMove> {
    (0..file.ops.len())
        .filter_map(|i| data_move(src, file, i))
        .collect()
}

pub fn data_move(src: &str, file: &MlirFile, op: usize) -> Option<DataMove> {
    if let Some(alias) = super::linalg_ext::alias_move(src, file, op) {
        return Some(alias);
    }
    let o = &file.ops[op];
    let kind = match o.name.as_str() {
        "tensor.expand_shape" | "memref.expand_shape" => DataMoveKind::ExpandShape,
        "tensor.collapse_shape" | "memref.collapse_shape" => DataMoveKind::CollapseShape,
        "tensor.extract_slice" | "memref.subview" => DataMoveKind::ExtractSlice,
        "tensor.insert_slice" => DataMoveKind::InsertSlice,
        _ => return None,
    };
    let (from, to) = types(src, file, o.tokens.clone());
    let built = match kind {
        DataMoveKind::ExpandShape | DataMoveKind::CollapseShape => {
            reshape(src, file, o.tokens.clone(), kind, from, to)
        }
        DataMoveKind::ExtractSlice => slice(src, file, o.tokens.clone(), to, from),
        DataMoveKind::InsertSlice => slice(src, file, o.tokens.clone(), from, to),
        DataMoveKind::Alias => return None,
    };
    let (map, note) = match built {
        Ok((m, n)) => (Some(m), n),
        Err(why) => (None, why),
    };
    Some(DataMove {
        op,
        kind,
        map,
        note,
    })
}

/// `: T1 into T2` / `: T1 to T2` at the end of the header.
fn types(
    src: &str,
    file: &MlirFile,
    toks: Range<usize>,
) -> (Option<ShapedType>, Option<ShapedType>) {
    let angles: Vec<usize> = toks
        .clone()
        .filter(|&i| {
            file.tokens[i].kind == TokKind::Angle && parse_type(file.token_text(src, i)).is_some()
        })
        .collect();
    let ty = |i: Option<&usize>| i.and_then(|&i| parse_type(file.token_text(src, i)));
    match angles.len() {
        0 => (None, None),
        1 => (ty(angles.first()), None),
        n => (ty(angles.get(n - 2)), ty(angles.get(n - 1))),
    }
}

fn static_of(t: &Option<ShapedType>, what: &str) -> Result<Vec<i64>, String> {
    t.as_ref()
        .ok_or_else(|| format!("no {what} type"))?
        .static_dims()
        .ok_or_else(|| format!("the {what} type has dynamic sizes"))
}

fn domain(shape: &[i64]) -> Vec<Variable> {
    shape.iter().map(|&n| Variable::new(0, n - 1)).collect()
}

/// Reassociation groups `[[0, 1], [2]]`: the first `[` after the source value.
fn groups(src: &str, file: &MlirFile, toks: Range<usize>) -> Option<Vec<Vec<usize>>> {
    let open = toks
        .clone()
        .find(|&i| file.token_text(src, i) == "[" && file.token_text(src, i + 1) == "[")?;
    let close = matching(src, file, open, toks.end)?;
    let mut out = Vec::new();
    let mut cur: Option<Vec<usize>> = None;
    for i in open + 1..close {
        match file.token_text(src, i) {
            "[" => cur = Some(Vec::new()),
            "]" => out.push(cur.take()?),
            "," => {}
            t => cur.as_mut()?.push(t.parse().ok()?),
        }
    }
    Some(out)
}

fn reshape(
    src: &str,
    file: &MlirFile,
    toks: Range<usize>,
    kind: DataMoveKind,
    from: Option<ShapedType>,
    to: Option<ShapedType>,
) -> Result<(IndexingMap, String), String> {
    let groups = groups(src, file, toks).ok_or("no reassociation `[[...]]`")?;
    let source = static_of(&from, "source")?;
    let result = static_of(&to, "result")?;
    // The expanded side is indexed by the groups' members, the collapsed side by group number.
    let (expanded, collapsed) = if kind == DataMoveKind::ExpandShape {
        (&result, &source)
    } else {
        (&source, &result)
    };
    let members: Vec<usize> = groups.iter().flatten().copied().collect();
    if members.len() != expanded.len()
        || groups.len() != collapsed.len()
        || members.iter().enumerate().any(|(i, &m)| i != m)
    {
        return Err(format!(
            "reassociation {groups:?} does not match ranks {} and {}",
            expanded.len(),
            collapsed.len()
        ));
    }
    for (g, group) in groups.iter().enumerate() {
        let product = group
            .iter()
            .try_fold(1i64, |acc, &d| acc.checked_mul(expanded[d]))
            .ok_or("size overflow")?;
        if product != collapsed[g] {
            return Err(format!(
                "group {g} {group:?} multiplies to {product}, not {}",
                collapsed[g]
            ));
        }
    }
    let mut results = Vec::new();
    if kind == DataMoveKind::ExpandShape {
        // source[g] = linearized (d_a, ..., d_b) over the expanded sizes.
        for group in &groups {
            let mut e = Expr::constant(0);
            for &d in group {
                e = e * expanded[d] + Expr::dim(d);
            }
            results.push(e);
        }
        let map = IndexingMap::new(domain(&result), vec![], vec![], results, vec![]).simplified();
        Ok((map, "expanded index → source index".into()))
    } else {
        // source[i] = (d_g floordiv stride_i) mod size_i, stride = product of the later sizes of the group.
        for (g, group) in groups.iter().enumerate() {
            for (pos, &d) in group.iter().enumerate() {
                let stride: i64 = group[pos + 1..].iter().map(|&x| expanded[x]).product();
                results.push(
                    Expr::dim(g)
                        .floor_div(Expr::constant(stride))
                        .modulo(Expr::constant(expanded[d])),
                );
            }
        }
        let map = IndexingMap::new(domain(&result), vec![], vec![], results, vec![]).simplified();
        Ok((map, "collapsed index → source index".into()))
    }
}

/// One entry of an offsets/sizes/strides list: a constant or an SSA value.
#[derive(Clone, Debug, PartialEq)]
enum Entry {
    Const(i64),
    Value(String),
}

fn lists(src: &str, file: &MlirFile, toks: Range<usize>) -> Option<[Vec<Entry>; 3]> {
    // The three `[...]` lists follow the sliced value: `%v[o] [s] [t]`.
    let mut out: Vec<Vec<Entry>> = Vec::new();
    let mut i = toks.start;
    while i < toks.end && out.len() < 3 {
        if file.token_text(src, i) == "[" && file.tokens[i].kind == TokKind::Punct {
            let close = matching(src, file, i, toks.end)?;
            let mut list = Vec::new();
            for k in i + 1..close {
                let t = file.token_text(src, k);
                match file.tokens[k].kind {
                    TokKind::Int => list.push(Entry::Const(t.parse().ok()?)),
                    TokKind::Value => list.push(Entry::Value(t.to_string())),
                    _ if t == "," => {}
                    _ => return None,
                }
            }
            out.push(list);
            i = close + 1;
        } else {
            i += 1;
        }
    }
    let [a, b, c]: [Vec<Entry>; 3] = out.try_into().ok()?;
    Some([a, b, c])
}

/// Map from the small tensor's index (`inner`) to the big one's (`outer`).
fn slice(
    src: &str,
    file: &MlirFile,
    toks: Range<usize>,
    inner: Option<ShapedType>,
    outer: Option<ShapedType>,
) -> Result<(IndexingMap, String), String> {
    let [offsets, sizes, strides] =
        lists(src, file, toks).ok_or("no static `[offsets] [sizes] [strides]`")?;
    let outer = static_of(&outer, "sliced tensor")?;
    let inner_ty = inner.ok_or("no slice type")?;
    if offsets.len() != outer.len() || sizes.len() != outer.len() || strides.len() != outer.len() {
        return Err("offsets, sizes and strides do not match the rank".into());
    }
    let mut size = Vec::new();
    for s in &sizes {
        match s {
            Entry::Const(v) => size.push(*v),
            Entry::Value(v) => return Err(format!("size {v} is dynamic")),
        }
    }
    let mut stride = Vec::new();
    for s in &strides {
        match s {
            Entry::Const(v) => stride.push(*v),
            Entry::Value(v) => return Err(format!("stride {v} is dynamic")),
        }
    }
    // Rank reduction drops unit sizes: keep the sizes the slice type has.
    let inner_dims = inner_ty.dims.len();
    let mut kept = Vec::new();
    let mut drop = size.len().saturating_sub(inner_dims);
    for (i, &s) in size.iter().enumerate() {
        if s == 1 && drop > 0 {
            drop -= 1;
        } else {
            kept.push(i);
        }
    }
    if kept.len() != inner_dims {
        return Err("the slice type's rank does not match its sizes".into());
    }
    let mut runtimes = Vec::new();
    let mut names = Vec::new();
    let mut results = Vec::new();
    for i in 0..outer.len() {
        let offset = match &offsets[i] {
            Entry::Const(v) => Expr::constant(*v),
            Entry::Value(v) => {
                // A valid slice fits: offset + (size - 1) * stride <= extent - 1.
                let hi = (outer[i] - 1)
                    .checked_sub((size[i] - 1).checked_mul(stride[i]).ok_or("overflow")?)
                    .ok_or("overflow")?;
                names.push(format!("rt{} = {v}", runtimes.len()));
                runtimes.push(Variable::new(0, hi.max(0)));
                Expr::runtime(runtimes.len() - 1)
            }
        };
        let e = match kept.iter().position(|&k| k == i) {
            Some(d) => offset + Expr::dim(d) * stride[i],
            None => offset,
        };
        results.push(e);
    }
    let dims: Vec<Variable> = kept
        .iter()
        .map(|&i| Variable::new(0, size[i] - 1))
        .collect();
    let map = IndexingMap::new(dims, vec![], runtimes, results, vec![]).simplified();
    let mut note = "slice index → sliced tensor index".to_string();
    if !names.is_empty() {
        note.push_str(&format!(" ({})", names.join(", ")));
    }
    Ok((map, note))
}
