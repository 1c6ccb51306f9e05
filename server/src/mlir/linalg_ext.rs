//! ByteIR's `linalg_ext` ops and upstream `linalg.softmax` as structured ops: the
//! iteration domain (loops, iterator types) and one map per operand, from each op's
//! semantics as the ByteIR seed (`byteir-linalg-ext.md`, "Linalg-ext Op Extension")
//! states them, with the assembly ByteIR prints (`dimension(1)`, `inclusive(true)`,
//! `axis([2])`, `layout = "nn"`, `ins(...) outs(...)`).
//!
//! The maps say which elements of an operand an iteration reads or writes, which for
//! these ops is more than ByteIR's tiling maps: a softmax or layer-norm result
//! element reads its whole row of the input (a range variable over the reduced
//! dimension); a scan output reads a prefix (`s0 <= d1`, or `<` when exclusive);
//! `diag` reads its vector on the diagonal only (`d0 - d1 in [0, 0]`). Where the seed
//! says a position is not affine, runtime variables stand for the data, as the HLO
//! side does for gather and scatter: scatter writes `src` at the values of its index
//! vectors, topk writes its outputs at the rank an element has among the `k`
//! selected. Loop extents come from the operands that index a loop directly, so
//! topk's `k` (the outputs' extent along `dimension`) is not a loop.
//!
//! Ops: `linalg_ext.softmax` (four outputs: result, max, accumulator, scale),
//! `linalg.softmax`, `linalg_ext.diag`, `linalg_ext.scan`, `linalg_ext.scatter`,
//! `linalg_ext.topk`, `linalg_ext.batch_matmul` (`layout` nn/nt/tn/tt),
//! `linalg_ext.layer_norm`; `linalg_ext.alias` is not structured (the seed: no loop
//! iterator types) and reads as a one-to-one data move ([`alias_move`]).

use std::ops::Range;

use super::combiner;
use super::domain::codes;
use super::lexer::TokKind;
use super::ops::{affine, dims, StructuredOp};
use super::ops::{group_operands, matching, IteratorType, MapSource, Operand, OperandMap};
use super::reader::MlirFile;
use super::reshape::{DataMove, DataMoveKind};
use super::types::{parse_type, ShapedType};
use crate::algebra::{Expr, IndexingMap, Interval, Variable};
use crate::model::Diagnostic;
use crate::tiling::Reducer;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtKind {
    Softmax,
    LinalgSoftmax,
    Diag,
    Scan,
    Scatter,
    Topk,
    BatchMatmul,
    LayerNorm,
}

impl ExtKind {
    pub fn from_name(name: &str) -> Option<ExtKind> {
        Some(match name {
            "linalg_ext.softmax" => ExtKind::Softmax,
            "linalg.softmax" => ExtKind::LinalgSoftmax,
            "linalg_ext.diag" => ExtKind::Diag,
            "linalg_ext.scan" => ExtKind::Scan,
            "linalg_ext.scatter" => ExtKind::Scatter,
            "linalg_ext.topk" => ExtKind::Topk,
            "linalg_ext.batch_matmul" => ExtKind::BatchMatmul,
            "linalg_ext.layer_norm" => ExtKind::LayerNorm,
            _ => return None,
        })
    }
}

/// What the loops and maps of a `linalg_ext` op mean, for the hover and the CLI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtInfo {
    pub kind: ExtKind,
    /// One paragraph: the computation and its loop structure.
    pub summary: String,
    /// Parallel to the op's operands: what the map alone does not say (runtime
    /// variables, whole-row reads, outputs that are also read).
    pub operand_notes: Vec<Option<String>>,
    /// What the holes of a tiled reduction loop must contribute, as a parenthetical
    /// note; `None` to use the body's combiner.
    pub holes: Option<String>,
}

/// The `linalg_ext` op (or `linalg.softmax`) at index `op`, when it is one and is
/// written in the custom assembly (with `ins`/`outs`).
pub fn structured_op(src: &str, file: &MlirFile, op: usize) -> Option<StructuredOp> {
    let o = &file.ops[op];
    let kind = ExtKind::from_name(&o.name)?;
    let toks = o.tokens.clone();
    let ins = group_operands(src, file, toks.clone(), "ins", false);
    let outs = group_operands(src, file, toks.clone(), "outs", true);
    if ins.is_empty() && outs.is_empty() {
        // The generic form `"linalg.softmax"(%a, %b) <{...}>`: not read.
        return None;
    }
    let header = Header {
        src,
        file,
        op,
        toks,
        name: o.name.clone(),
        name_range: o.name_range.clone(),
    };
    let mut operands = ins;
    operands.extend(outs);
    let mut s = StructuredOp::new(op, o.name.clone(), operands);
    let built = match kind {
        ExtKind::Softmax | ExtKind::LinalgSoftmax => softmax(&header, kind, &s.operands),
        ExtKind::Diag => diag(&header, &s.operands),
        ExtKind::Scan => scan(&header, &s.operands),
        ExtKind::Scatter => scatter(&header, &s.operands),
        ExtKind::Topk => topk(&header, &s.operands),
        ExtKind::BatchMatmul => batch_matmul(&header, &s.operands),
        ExtKind::LayerNorm => layer_norm(&header, &s.operands),
    };
    match built {
        Ok(b) => {
            s.maps = b
                .maps
                .into_iter()
                .map(|map| OperandMap {
                    map,
                    source: MapSource::Implied,
                })
                .collect();
            s.iterators = b.iterators;
            s.ext = Some(ExtInfo {
                kind,
                summary: b.summary,
                operand_notes: b.notes,
                holes: b.holes,
            });
        }
        Err(d) => s.diagnostics.push(d),
    }
    Some(s)
}

/// `linalg_ext.alias(%x : T) : T`: the same tensor under another name, read one to one.
pub fn alias_move(src: &str, file: &MlirFile, op: usize) -> Option<DataMove> {
    let o = &file.ops[op];
    if o.name != "linalg_ext.alias" {
        return None;
    }
    let ty = o.tokens.clone().find_map(|i| {
        (file.tokens[i].kind == TokKind::Angle)
            .then(|| parse_type(file.token_text(src, i)))
            .flatten()
    });
    let note = "linalg_ext.alias: the operand under another name (not a structured op: no loops; removed only by ByteIR's alias-removal pattern)";
    let map = ty
        .as_ref()
        .and_then(ShapedType::static_dims)
        .map(|d| IndexingMap::identity(&d));
    Some(DataMove {
        op,
        kind: DataMoveKind::Alias,
        note: if map.is_some() {
            note.to_string()
        } else {
            format!("{note}; no static type")
        },
        map,
    })
}

/// What one op's builder produces: a map per operand (`None` where a needed extent
/// is dynamic), the iterator types, the texts of [`ExtInfo`].
struct Built {
    maps: Vec<Option<IndexingMap>>,
    iterators: Vec<IteratorType>,
    summary: String,
    notes: Vec<Option<String>>,
    holes: Option<String>,
}

/// The op's header tokens, to read its attributes.
struct Header<'a> {
    src: &'a str,
    file: &'a MlirFile,
    /// Index into [`MlirFile::ops`].
    op: usize,
    toks: Range<usize>,
    name: String,
    name_range: Range<usize>,
}

impl Header<'_> {
    fn text(&self, i: usize) -> &str {
        self.file.token_text(self.src, i)
    }

    /// The token index of keyword `key` followed by `(`.
    fn keyword(&self, key: &str) -> Option<usize> {
        self.toks.clone().find(|&i| {
            self.file.tokens[i].kind == TokKind::Ident
                && self.text(i) == key
                && self.text(i + 1) == "("
        })
    }

    /// The tokens inside `key(...)`.
    fn parenthesized(&self, key: &str) -> Option<Range<usize>> {
        let k = self.keyword(key)?;
        let close = matching(self.src, self.file, k + 1, self.toks.end)?;
        Some(k + 2..close)
    }

    /// `dimension(1)`.
    fn int(&self, key: &str) -> Option<i64> {
        let inner = self.parenthesized(key)?;
        (inner.len() == 1)
            .then(|| self.text(inner.start).parse().ok())
            .flatten()
    }

    /// `inclusive(true)`.
    fn boolean(&self, key: &str) -> Option<bool> {
        let inner = self.parenthesized(key)?;
        match self.text(inner.start) {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    /// `axis([1, 2])`.
    fn int_list(&self, key: &str) -> Option<Vec<i64>> {
        let inner = self.parenthesized(key)?;
        inner
            .filter(|&i| !matches!(self.text(i), "[" | "]" | ","))
            .map(|i| self.text(i).parse().ok())
            .collect()
    }

    /// `layout = "nn"`.
    fn string(&self, key: &str) -> Option<String> {
        let k = self.toks.clone().find(|&i| {
            self.file.tokens[i].kind == TokKind::Ident
                && self.text(i) == key
                && self.text(i + 1) == "="
        })?;
        let v = k + 2;
        (self.file.tokens.get(v)?.kind == TokKind::Str)
            .then(|| self.text(v).trim_matches('"').to_string())
    }

    /// The range of `key(...)` (or the op name when absent), for diagnostics.
    fn range_of(&self, key: &str) -> Range<usize> {
        match (self.keyword(key), self.parenthesized(key)) {
            (Some(k), Some(inner)) => {
                self.file.tokens[k].range.start..self.file.tokens[inner.end].range.end
            }
            _ => self.name_range.clone(),
        }
    }

    fn error(&self, at: Range<usize>, message: String) -> Diagnostic {
        Diagnostic::error(
            at,
            codes::INVALID_EXT_OP,
            format!("{}: {message}", self.name),
        )
    }

    /// `dimension(k)` within `rank`.
    fn dimension(&self, rank: usize) -> Result<usize, Diagnostic> {
        let Some(k) = self.int("dimension") else {
            return Err(self.error(
                self.name_range.clone(),
                "`dimension(k)` is missing or not an integer".into(),
            ));
        };
        usize::try_from(k)
            .ok()
            .filter(|&k| k < rank)
            .ok_or_else(|| {
                self.error(
                    self.range_of("dimension"),
                    format!("dimension {k} is not a dimension of a rank-{rank} operand"),
                )
            })
    }

    /// `count_ins` inputs and `count_outs` outputs (each a list of allowed counts).
    fn counts(
        &self,
        operands: &[Operand],
        ins: &[usize],
        outs: &[usize],
        what: &str,
    ) -> Result<(usize, usize), Diagnostic> {
        let i = operands.iter().filter(|o| !o.is_output).count();
        let o = operands.len() - i;
        if ins.contains(&i) && outs.contains(&o) {
            Ok((i, o))
        } else {
            Err(self.error(
                self.name_range.clone(),
                format!("takes {what}; found {i} inputs and {o} outputs"),
            ))
        }
    }
}

fn ty(operands: &[Operand], k: usize) -> Option<&ShapedType> {
    operands.get(k).and_then(|o| o.ty.as_ref())
}

fn rank_of(h: &Header, operands: &[Operand], k: usize) -> Result<usize, Diagnostic> {
    ty(operands, k).map(ShapedType::rank).ok_or_else(|| {
        let o = &operands[k];
        h.error(
            o.ty_range.clone().unwrap_or(o.value_range.clone()),
            format!("operand {} has no shaped type ({})", o.value, o.ty_text),
        )
    })
}

/// The extent along `dim` of the first operand in `from` whose type gives it.
fn extent(operands: &[Operand], from: &[usize], dim: usize) -> Option<i64> {
    from.iter()
        .find_map(|&k| ty(operands, k).and_then(|t| t.dim(dim)))
}

/// A map over `loops` loops with its own range variables, runtime variables and
/// constraints (the loops are unbounded: the domain bounds them).
fn map_with(
    loops: usize,
    results: Vec<Expr>,
    ranges: Vec<Variable>,
    runtimes: Vec<Variable>,
    constraints: Vec<(Expr, Interval)>,
) -> IndexingMap {
    IndexingMap::new(
        (0..loops)
            .map(|_| Variable::new(i64::MIN, i64::MAX))
            .collect(),
        ranges,
        runtimes,
        results,
        constraints,
    )
}

fn identity(loops: usize) -> IndexingMap {
    affine(loops, dims(&(0..loops).collect::<Vec<_>>()))
}

/// The loops but those in `skip`, in order.
fn skipping(loops: usize, skip: &[usize]) -> IndexingMap {
    let kept: Vec<usize> = (0..loops).filter(|d| !skip.contains(d)).collect();
    affine(loops, dims(&kept))
}

/// Each loop in `reduced` replaced by a range variable over `extents[i]`: an
/// iteration reads the whole slice along the reduced dimensions.
fn slice_read(loops: usize, reduced: &[usize], extents: &[i64]) -> IndexingMap {
    let results = (0..loops)
        .map(|d| match reduced.iter().position(|&r| r == d) {
            Some(i) => Expr::range(i),
            None => Expr::dim(d),
        })
        .collect();
    let ranges = extents.iter().map(|&n| Variable::new(0, n - 1)).collect();
    map_with(loops, results, ranges, vec![], vec![])
}

fn iterators(loops: usize, reduced: &[usize]) -> Vec<IteratorType> {
    (0..loops)
        .map(|d| {
            if reduced.contains(&d) {
                IteratorType::Reduction
            } else {
                IteratorType::Parallel
            }
        })
        .collect()
}

fn element(operands: &[Operand], k: usize) -> String {
    ty(operands, k).map_or("f32".to_string(), |t| t.element.clone())
}

/// Softmax along `dimension(k)`: ByteIR's four outputs (result, max, accumulator,
/// scale) per the seed's formulas, or upstream's one result.
fn softmax(h: &Header, kind: ExtKind, operands: &[Operand]) -> Result<Built, Diagnostic> {
    let byteir = kind == ExtKind::Softmax;
    if byteir {
        h.counts(
            operands,
            &[1],
            &[4],
            "one input and four outputs (result, max, accumulator, scale)",
        )?;
    } else {
        h.counts(operands, &[1], &[1], "one input and one output")?;
    }
    let loops = rank_of(h, operands, 1)?;
    let k = h.dimension(loops)?;
    let row = extent(operands, &[0, 1], k);
    let input = row.map(|n| slice_read(loops, &[k], &[n]));
    let mut maps = vec![input, Some(identity(loops))];
    let mut notes = vec![
        Some(format!(
            "s0 runs over the row along dimension {k}: each result element reads all of it (its max and its sum)"
        )),
        None,
    ];
    if byteir {
        maps.extend((0..3).map(|_| Some(skipping(loops, &[k]))));
        notes.extend([
            Some("max: read as max_init, written as max(max(input, dimension), max_init)".into()),
            Some("accumulator: read as accumulator_init, written as accumulator_init · exp(max_init − max) + Σ exp(input − max)".into()),
            Some("scale: written only, accumulator_init · exp(max_init − max) / accumulator".into()),
        ]);
    }
    let summary = if byteir {
        format!("softmax along dimension {k} (loop d{k}, a reduction): result = exp(input − max) / accumulator, with max and accumulator reduced over the row and seeded by their initial values")
    } else {
        format!("softmax along dimension {k} (loop d{k}, a reduction: each result element reads its whole row): result = exp(x − max(x)) / Σ exp(x − max(x))")
    };
    let fill = combiner::identity(Reducer::Maximum, &element(operands, 0));
    Ok(Built {
        maps,
        iterators: iterators(loops, &[k]),
        summary,
        notes,
        holes: Some(format!(
            " (a reduction loop: masked loads must fill holes with {fill}, the identity of the max, so that exp({fill} − max) = 0 adds the identity of the sum)"
        )),
    })
}

/// `diag`: a vector as the diagonal of a matrix over the last two loops.
fn diag(h: &Header, operands: &[Operand]) -> Result<Built, Diagnostic> {
    h.counts(operands, &[1], &[1], "one input and one output")?;
    let loops = rank_of(h, operands, 1)?;
    if loops < 2 {
        return Err(h.error(
            h.name_range.clone(),
            format!("the output has rank {loops}; a diagonal matrix needs rank 2 or more"),
        ));
    }
    let (i, j) = (loops - 2, loops - 1);
    let input = map_with(
        loops,
        dims(&(0..=i).collect::<Vec<_>>()),
        vec![],
        vec![],
        vec![(Expr::dim(i) - Expr::dim(j), Interval::new(0, 0))],
    );
    Ok(Built {
        maps: vec![Some(input), Some(identity(loops))],
        iterators: iterators(loops, &[]),
        summary: format!("diag: result[…, d{i}, d{j}] = input[…, d{i}] where d{i} = d{j}, else 0: the input vector viewed as the diagonal of a matrix"),
        notes: vec![
            Some(format!("read on the diagonal only (d{i} = d{j})")),
            None,
        ],
        holes: None,
    })
}

/// `scan`: a prefix along `dimension(k)`, inclusive or exclusive; the accumulator
/// seeds an exclusive scan and ends holding the last value.
fn scan(h: &Header, operands: &[Operand]) -> Result<Built, Diagnostic> {
    h.counts(
        operands,
        &[1],
        &[2],
        "one input and two outputs (output, accumulator)",
    )?;
    let loops = rank_of(h, operands, 0)?;
    let k = h.dimension(loops)?;
    let Some(inclusive) = h.boolean("inclusive") else {
        return Err(h.error(
            h.name_range.clone(),
            "`inclusive(true)` or `inclusive(false)` is missing".into(),
        ));
    };
    let input = extent(operands, &[0, 1], k).map(|n| {
        let mut results = dims(&(0..loops).collect::<Vec<_>>());
        results[k] = Expr::range(0);
        let last = if inclusive { 0 } else { -1 };
        map_with(
            loops,
            results,
            vec![Variable::new(0, n - 1)],
            vec![],
            vec![(Expr::range(0) - Expr::dim(k), Interval::new(-n, last))],
        )
    });
    let (sign, how) = if inclusive {
        ("<=", "input[…, 0] ⊕ … ⊕ input[…, d]")
    } else {
        ("<", "accumulator_init ⊕ input[…, 0] ⊕ … ⊕ input[…, d − 1]")
    };
    let combiner = combiner::region_combiner(h.file, h.op).map(|(n, _)| n);
    Ok(Built {
        maps: vec![input, Some(identity(loops)), Some(skipping(loops, &[k]))],
        iterators: iterators(loops, &[k]),
        summary: format!(
            "{} scan along dimension {k} (loop d{k}, a reduction): output at d = {how}, ⊕ = {}",
            if inclusive { "inclusive" } else { "exclusive" },
            combiner.as_deref().unwrap_or("the region's combiner")
        ),
        notes: vec![
            Some(format!("s0 {sign} d{k}: the prefix along dimension {k}")),
            None,
            Some(if inclusive {
                "accumulator: written with the last value of each scan".into()
            } else {
                "accumulator: read as the initial value, written with the last value".into()
            }),
        ],
        holes: None,
    })
}

/// `scatter`: `src[indices[b, :], window] = region(src[...], update[b, window])` over
/// the update's index space; the written position is data.
fn scatter(h: &Header, operands: &[Operand]) -> Result<Built, Diagnostic> {
    h.counts(
        operands,
        &[2],
        &[1],
        "two inputs (indices, update) and one output (src)",
    )?;
    let index_rank = rank_of(h, operands, 0)?;
    let loops = rank_of(h, operands, 1)?;
    let src_rank = rank_of(h, operands, 2)?;
    let at = |k: usize| {
        let o = &operands[k];
        o.ty_range.clone().unwrap_or(o.value_range.clone())
    };
    if index_rank == 0 || loops + 1 < index_rank {
        return Err(h.error(
            at(0),
            format!("indices of rank {index_rank} need rank ≥ 1 and update rank ≥ {} (update has rank {loops})", index_rank.saturating_sub(1)),
        ));
    }
    let batches = index_rank - 1;
    let Some(width) = ty(operands, 0).and_then(|t| t.dim(batches)) else {
        return Err(h.error(at(0), "the last dimension of indices must be static".into()));
    };
    let width = usize::try_from(width).unwrap_or(0);
    let window = loops - batches;
    if src_rank != width + window {
        return Err(h.error(
            at(2),
            format!("src has rank {src_rank}, but dim(indices, rank(indices) − 1) + rank(update) − rank(indices) + 1 = {width} + {loops} − {index_rank} + 1 = {}", width + window),
        ));
    }
    let mut index_results = dims(&(0..batches).collect::<Vec<_>>());
    index_results.push(Expr::range(0));
    let indices = map_with(
        loops,
        index_results,
        vec![Variable::new(0, width as i64 - 1)],
        vec![],
        vec![],
    );
    let src_ty = ty(operands, 2);
    let runtimes: Vec<Variable> = (0..width)
        .map(|i| match src_ty.and_then(|t| t.dim(i)) {
            Some(n) => Variable::new(0, n - 1),
            None => Variable::new(0, i64::MAX / 4),
        })
        .collect();
    let mut src_results: Vec<Expr> = (0..width).map(Expr::runtime).collect();
    src_results.extend(dims(&(batches..loops).collect::<Vec<_>>()));
    let src_map = map_with(loops, src_results, vec![], runtimes, vec![]);
    let batch_loops: Vec<usize> = (0..batches).collect();
    let batch_text = if batches == 0 {
        "no loop".to_string()
    } else {
        batch_loops
            .iter()
            .map(|d| format!("d{d}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let combiner = combiner::region_combiner(h.file, h.op).map(|(n, _)| n);
    let fill = combiner::region_combiner(h.file, h.op).map(|(n, r)| {
        format!(
            "{}, the identity of {n},",
            combiner::identity(r, &element(operands, 1))
        )
    });
    Ok(Built {
        maps: vec![Some(indices), Some(identity(loops)), Some(src_map)],
        iterators: iterators(loops, &batch_loops),
        summary: format!(
            "scatter over the update's index space: {batch_text} over the index vectors (reductions: two vectors may name the same element), the rest over the update window; src[indices[…, :], window] = {}(src[…], update[…])",
            combiner.as_deref().unwrap_or("region")
        ),
        notes: vec![
            Some(format!("s0 runs over the {width} components of each index vector")),
            None,
            Some(format!(
                "written at runtime positions: rt0..rt{} are the values indices[{}, 0..{width}) — data, not an affine map",
                width.saturating_sub(1),
                if batches == 0 { "".to_string() } else { batch_text.clone() }
            )),
        ],
        holes: Some(format!(
            " (a reduction loop over index vectors: a hole has no index vector, so its write must be masked; filling the update with {} does not help, the hole's indices are undefined)",
            fill.unwrap_or_else(|| "the combiner's identity".into())
        )),
    })
}

/// `topk`: the `k` best of each row along `dimension(k)` by the region's comparator;
/// the outputs are written at the rank of a selected element.
fn topk(h: &Header, operands: &[Operand]) -> Result<Built, Diagnostic> {
    let (ins, _) = h.counts(
        operands,
        &[1, 2],
        &[2],
        "one or two inputs (values, indices) and two outputs (values, indices)",
    )?;
    let loops = rank_of(h, operands, 0)?;
    let d = h.dimension(loops)?;
    let row = extent(operands, &[0], d);
    let k_of = |o: usize| ty(operands, o).and_then(|t| t.dim(d));
    let (kv, ki) = (k_of(ins), k_of(ins + 1));
    if let (Some(a), Some(b)) = (kv, ki) {
        if a != b {
            return Err(h.error(
                operands[ins + 1]
                    .ty_range
                    .clone()
                    .unwrap_or(h.name_range.clone()),
                format!("the outputs select {a} and {b} elements along dimension {d}"),
            ));
        }
    }
    let k = kv.or(ki);
    if let (Some(k), Some(n)) = (k, row) {
        if k > n {
            return Err(h.error(
                operands[ins]
                    .ty_range
                    .clone()
                    .unwrap_or(h.name_range.clone()),
                format!("selects k = {k} of the {n} elements along dimension {d}"),
            ));
        }
    }
    let written = k.map(|k| {
        let mut results = dims(&(0..loops).collect::<Vec<_>>());
        results[d] = Expr::runtime(0);
        map_with(
            loops,
            results,
            vec![],
            vec![Variable::new(0, k - 1)],
            vec![],
        )
    });
    let mut maps: Vec<Option<IndexingMap>> = (0..ins).map(|_| Some(identity(loops))).collect();
    maps.push(written.clone());
    maps.push(written);
    let comparator = comparator(h);
    let k_text = k.map_or("k".to_string(), |k| k.to_string());
    let select = format!(
        "written at rt0, the rank (0..{k_text}) of input[…] among the selected of its row when it is selected (a runtime position, not an affine map); unselected elements are not written"
    );
    let mut notes: Vec<Option<String>> = vec![None; ins];
    notes.push(Some(select.clone()));
    notes.push(Some(select));
    let element = element(operands, 0);
    let holes = match comparator.as_ref().and_then(|(_, p)| prefers(p)) {
        Some(reducer) => format!(
            " (a reduction loop: masked loads must fill holes with {}, which the comparator never prefers, so a hole is never selected)",
            combiner::identity(reducer, &element)
        ),
        None => " (a reduction loop: holes must hold a value the comparator never prefers)".into(),
    };
    Ok(Built {
        maps,
        iterators: iterators(loops, &[d]),
        summary: format!(
            "topk along dimension {d} (loop d{d}, a reduction): the {k_text} best of each row of {} by {}; each output element depends on the whole row",
            row.map_or("?".to_string(), |n| n.to_string()),
            comparator.map_or("the region's comparator".to_string(), |(op, p)| format!("`{op} {p}`"))
        ),
        notes,
        holes: Some(holes),
    })
}

/// The comparison of the op's region: `arith.cmpf ogt` → (`arith.cmpf`, `ogt`).
fn comparator(h: &Header) -> Option<(String, String)> {
    let f = h.file;
    combiner::body_ops(f, h.op).into_iter().find_map(|o| {
        let op = &f.ops[o];
        matches!(op.name.as_str(), "arith.cmpf" | "arith.cmpi").then(|| {
            let pred = f.token_text(h.src, op.tokens.start).to_string();
            (op.name.clone(), pred)
        })
    })
}

/// The value a comparator never prefers is the identity of the reducer it is:
/// greater-than selects like a maximum (holes `-inf`), less-than like a minimum.
fn prefers(predicate: &str) -> Option<Reducer> {
    let p = predicate.trim_matches('"');
    if p.ends_with("gt") || p.ends_with("ge") {
        Some(Reducer::Maximum)
    } else if p.ends_with("lt") || p.ends_with("le") {
        Some(Reducer::Minimum)
    } else {
        None
    }
}

/// `batch_matmul` with `layout = "nn" | "nt" | "tn" | "tt"`: loops (batch…, m, n, k).
fn batch_matmul(h: &Header, operands: &[Operand]) -> Result<Built, Diagnostic> {
    h.counts(operands, &[2], &[1], "two inputs (lhs, rhs) and one output")?;
    let out_rank = rank_of(h, operands, 2)?;
    let Some(layout) = h.string("layout") else {
        return Err(h.error(h.name_range.clone(), "`layout = \"nn\"` is missing".into()));
    };
    let lay: Vec<char> = layout.chars().collect();
    if lay.len() != 2 || !lay.iter().all(|c| matches!(c, 'n' | 't')) || out_rank < 2 {
        return Err(h.error(
            h.name_range.clone(),
            format!("layout \"{layout}\" is not one of nn, nt, tn, tt (or the output has rank {out_rank} < 2)"),
        ));
    }
    let loops = out_rank + 1;
    let batch: Vec<usize> = (0..loops - 3).collect();
    let (m, n, k) = (loops - 3, loops - 2, loops - 1);
    let with = |a: usize, b: usize| {
        let mut v = batch.clone();
        v.extend([a, b]);
        affine(loops, dims(&v))
    };
    let lhs = if lay[0] == 'n' {
        with(m, k)
    } else {
        with(k, m)
    };
    let rhs = if lay[1] == 'n' {
        with(k, n)
    } else {
        with(n, k)
    };
    let side = |t: char, a: &str, b: &str| {
        if t == 'n' {
            format!("({a}, {b})")
        } else {
            format!("({b}, {a})")
        }
    };
    Ok(Built {
        maps: vec![Some(lhs), Some(rhs), Some(skipping(loops, &[k]))],
        iterators: iterators(loops, &[k]),
        summary: format!(
            "batch matmul, layout \"{layout}\": lhs {} × rhs {} per batch; loops (batch…, m, n, k), d{k} = k a reduction (a sum)",
            side(lay[0], "m", "k"),
            side(lay[1], "k", "n")
        ),
        notes: vec![None, None, None],
        holes: None,
    })
}

/// `layer_norm` over `axis([...])`: output = (x − E[x]) / sqrt(Var[x] + ε) · weight
/// + bias, with optional weight/bias inputs and mean/rstd outputs.
fn layer_norm(h: &Header, operands: &[Operand]) -> Result<Built, Diagnostic> {
    let (ins, outs) = h.counts(
        operands,
        &[1, 3],
        &[1, 3],
        "one or three inputs (input, weight, bias) and one or three outputs (output, mean, rstd)",
    )?;
    let loops = rank_of(h, operands, 0)?;
    let Some(axes) = h.int_list("axis") else {
        return Err(h.error(h.name_range.clone(), "`axis([...])` is missing".into()));
    };
    let axes: Vec<usize> = axes
        .iter()
        .map(|&a| usize::try_from(a).ok().filter(|&a| a < loops))
        .collect::<Option<_>>()
        .filter(|v: &Vec<usize>| {
            !v.is_empty() && v.iter().enumerate().all(|(i, a)| !v[..i].contains(a))
        })
        .ok_or_else(|| {
            h.error(
                h.range_of("axis"),
                format!("axes {axes:?} are not distinct dimensions of a rank-{loops} input"),
            )
        })?;
    let out = ins;
    let input = axes
        .iter()
        .map(|&a| extent(operands, &[0, out], a))
        .collect::<Option<Vec<i64>>>()
        .map(|n| slice_read(loops, &axes, &n));
    let mut maps = vec![input];
    let mut notes =
        vec![Some(format!(
        "{} over the normalized axes: each output element reads its whole slice (E[x] and Var[x])",
        (0..axes.len()).map(|i| format!("s{i}")).collect::<Vec<_>>().join(", ")
    ))];
    if ins == 3 {
        maps.push(Some(affine(loops, dims(&axes))));
        maps.push(Some(affine(loops, dims(&axes))));
        notes.extend([None, None]);
    }
    maps.push(Some(identity(loops)));
    notes.push(None);
    if outs == 3 {
        maps.push(Some(skipping(loops, &axes)));
        maps.push(Some(skipping(loops, &axes)));
        notes.extend([
            Some("mean: written, E[x] over the axes".into()),
            Some("rstd: written, 1 / sqrt(Var[x] + ε)".into()),
        ]);
    }
    let axes_text: Vec<String> = axes.iter().map(|a| format!("d{a}")).collect();
    Ok(Built {
        maps,
        iterators: iterators(loops, &axes),
        summary: format!(
            "layer_norm over axes {:?} (loops {}, reductions): output = (x − E[x]) / sqrt(Var[x] + ε){}",
            axes,
            axes_text.join(", "),
            if ins == 3 { " · weight + bias" } else { "" }
        ),
        notes,
        holes: Some(" (a reduction loop: holes must add 0 to the sums of x and x², and must not count in the mean's divisor)".into()),
    })
}
