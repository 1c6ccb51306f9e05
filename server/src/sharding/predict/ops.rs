//! How each operation carries its operands' layouts to its result before
//! partitioning, and what it needs on the way: an elementwise op wants its
//! operands laid out alike, a reduce over a split dimension and a dot over a
//! split contracting dimension leave each device a partial result that an
//! all-reduce completes (`SpmdPartitioningVisitor::HandleReduce`,
//! `PartitionDot`), broadcast, transpose and reshape move the pieces with the
//! dimensions.

use super::layout::{Layout, Piece};
use super::reshard::{reshard, Need};
use crate::cost::collective::op::Op;
use crate::model::DotDims;

/// A need with the reason for it.
#[derive(Clone, Debug)]
pub struct Step {
    pub need: Need,
    /// Which operand it reshards (`None`: the result's partial sums).
    pub operand: Option<usize>,
    pub why: String,
}

/// What an op makes of its operands' layouts.
pub struct Carried {
    pub layout: Layout,
    pub steps: Vec<Step>,
}

fn pieces_words(pieces: &[Piece]) -> String {
    let parts: Vec<String> = pieces
        .iter()
        .map(|p| format!("{}×{}", p.size, p.stride))
        .collect();
    parts.join(",")
}

/// Elementwise: the operands are resharded to one layout, the one that needs
/// the fewest collectives, counting the reshard to `wanted` (the sharding
/// written where the result is used, which propagation carries back to here);
/// ties go to `wanted`, then to the operand split the most. A copy held
/// everywhere is sliced, no collective.
pub fn elementwise(operands: &[Layout], wanted: Option<&Layout>) -> Option<Carried> {
    let cost = |c: &Layout| -> usize {
        let to_c: usize = operands.iter().map(|l| reshard(l, c).len()).sum();
        to_c + wanted.map_or(0, |w| reshard(c, w).len())
    };
    let split = |l: &Layout| l.dims.iter().map(Vec::len).sum::<usize>();
    let mut candidates: Vec<&Layout> = wanted
        .into_iter()
        .filter(|w| w.dims.len() == operands.first().map_or(0, |o| o.dims.len()))
        .collect();
    let mut by_split: Vec<&Layout> = operands.iter().collect();
    by_split.sort_by_key(|l| std::cmp::Reverse(split(l)));
    candidates.extend(by_split);
    let target = (*candidates.iter().min_by_key(|c| cost(c))?).clone();
    let mut steps = vec![];
    for (k, l) in operands.iter().enumerate() {
        for need in reshard(l, &target) {
            steps.push(Step {
                why: super::reshard_words(
                    &need,
                    &format!("operand {k} is split differently: the op"),
                ),
                need,
                operand: Some(k),
            });
        }
    }
    Some(Carried {
        layout: target,
        steps,
    })
}

/// `broadcast(x), dimensions={...}`: operand dimension `k` is result
/// dimension `dims[k]`; the new dimensions are whole.
pub fn broadcast(operand: &Layout, dims: &[i64], rank: usize) -> Option<Layout> {
    let mut out = vec![vec![]; rank];
    for (k, &d) in dims.iter().enumerate() {
        *out.get_mut(usize::try_from(d).ok()?)? = operand.dims.get(k)?.clone();
    }
    Some(Layout {
        dims: out,
        replicated: operand.replicated.clone(),
    })
}

/// `transpose(x), dimensions={...}`: result dimension `k` is operand
/// dimension `perm[k]`.
pub fn transpose(operand: &Layout, perm: &[i64]) -> Option<Layout> {
    let dims = perm
        .iter()
        .map(|&p| operand.dims.get(usize::try_from(p).ok()?).cloned())
        .collect::<Option<Vec<_>>>()?;
    Some(Layout {
        dims,
        replicated: operand.replicated.clone(),
    })
}

/// A reshape: dimensions are matched in groups of equal product; a group's
/// split must sit on its major dimension, and its pieces (major first) fill
/// the result's dimensions of the group major first, each wholly before the
/// next (`[8,16]` split 8 ways to `[2,4,16]` puts the major 2 of the pieces on
/// the 2 and the other 4 on the 4: Shardy's sub-axes `'d':(1)2` and
/// `'d':(2)4`). `None` for a split the result cannot hold that way.
pub fn reshape(operand: &Layout, from: &[i64], to: &[i64]) -> Option<Layout> {
    let mut out = vec![vec![]; to.len()];
    let (mut i, mut j) = (0, 0);
    while i < from.len() || j < to.len() {
        let (si, sj) = (i, j);
        let (mut a, mut b) = (1i64, 1i64);
        loop {
            if a <= b && i < from.len() {
                a *= from[i];
                i += 1;
            } else if j < to.len() {
                b *= to[j];
                j += 1;
            } else {
                break;
            }
            if a == b && (i == from.len() || from[i] != 1) && (j == to.len() || to[j] != 1) {
                break;
            }
        }
        if a != b {
            return None;
        }
        let split: Vec<usize> = (si..i).filter(|&d| !operand.dims[d].is_empty()).collect();
        match split[..] {
            [] => {}
            [d] => {
                if Some(d) != (si..i).find(|&k| from[k] != 1) {
                    return None;
                }
                let mut pieces = operand.dims[d].iter().copied().peekable();
                for k in sj..j {
                    let mut held = 1i64;
                    while let Some(p) = pieces.peek() {
                        if to[k] % (held * p.size) != 0 {
                            break;
                        }
                        held *= p.size;
                        out[k].push(*p);
                        pieces.next();
                    }
                    if pieces.peek().is_none() {
                        break;
                    }
                    if held != to[k] {
                        return None;
                    }
                }
                if pieces.next().is_some() {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(Layout {
        dims: out,
        replicated: operand.replicated.clone(),
    })
}

/// `reduce` over `dims`: each split dimension reduced leaves partial results,
/// one all-reduce per dimension over its pieces (XLA's
/// `AllReduceAlongShardingDims`, the last dimension first); the result keeps
/// the other dimensions' splits.
pub fn reduce(operand: &Layout, dims: &[i64]) -> Carried {
    let reduced: Vec<usize> = dims
        .iter()
        .filter_map(|&d| usize::try_from(d).ok())
        .collect();
    let mut steps = vec![];
    let mut sorted = reduced.clone();
    sorted.sort_unstable();
    for &d in sorted.iter().rev() {
        let Some(pieces) = operand.dims.get(d) else {
            continue;
        };
        if pieces.is_empty() {
            continue;
        }
        steps.push(Step {
            need: Need {
                op: Op::AllReduce,
                pieces: pieces.clone(),
                dim: d,
                to_dim: None,
            },
            operand: None,
            why: format!("dim {d} is split and reduced: each device holds a partial result"),
        });
    }
    let mut replicated = operand.replicated.clone();
    let mut kept = vec![];
    for (d, pieces) in operand.dims.iter().enumerate() {
        if reduced.contains(&d) {
            replicated.extend(pieces);
        } else {
            kept.push(pieces.clone());
        }
    }
    Carried {
        layout: Layout {
            dims: kept,
            replicated,
        },
        steps,
    }
}

/// Why a dot's partitioning is not predicted.
pub type Unpredicted = String;

/// `dot`: batch dimensions split alike stay split; a contracting dimension
/// split over the same pieces in both operands (or in one, the other holding
/// copies along them and slicing its part locally) leaves partial sums that
/// an all-reduce over those pieces completes; the free dimensions keep their
/// operand's split. Splits XLA resolves by cost (different pieces on the two
/// sides, one piece splitting both operands' free dimensions) are not
/// predicted.
pub fn dot(lhs: &Layout, rhs: &Layout, dd: &DotDims) -> Result<Carried, Unpredicted> {
    let at = |l: &Layout, d: i64| -> Result<Vec<Piece>, Unpredicted> {
        usize::try_from(d)
            .ok()
            .and_then(|d| l.dims.get(d).cloned())
            .ok_or_else(|| format!("dimension {d} is beyond the operand"))
    };
    let pair = |a: Vec<Piece>, b: Vec<Piece>, what: &str| -> Result<Vec<Piece>, Unpredicted> {
        if a == b || (b.is_empty() && a.iter().all(|p| rhs.replicated.contains(p))) {
            Ok(a)
        } else if a.is_empty() && b.iter().all(|p| lhs.replicated.contains(p)) {
            Ok(b)
        } else {
            Err(format!(
                "the two operands split a {what} dimension over different devices ({} against {}): XLA reshards one of them, chosen by cost",
                pieces_words(&a),
                pieces_words(&b)
            ))
        }
    };
    let mut out: Vec<Vec<Piece>> = vec![];
    for (&l, &r) in dd.lhs_batch.iter().zip(&dd.rhs_batch) {
        out.push(pair(at(lhs, l)?, at(rhs, r)?, "batch")?);
    }
    let mut steps = vec![];
    for (&l, &r) in dd.lhs_contracting.iter().zip(&dd.rhs_contracting) {
        let pieces = pair(at(lhs, l)?, at(rhs, r)?, "contracting")?;
        if !pieces.is_empty() {
            steps.push(Step {
                need: Need {
                    op: Op::AllReduce,
                    pieces,
                    dim: usize::try_from(l).unwrap_or(0),
                    to_dim: None,
                },
                operand: None,
                why: format!("the contracting dim (lhs {l}, rhs {r}) is split: each device holds a partial sum"),
            });
        }
    }
    let free = |l: &Layout, batch: &[i64], contracting: &[i64]| -> Vec<Vec<Piece>> {
        (0..l.dims.len() as i64)
            .filter(|d| !batch.contains(d) && !contracting.contains(d))
            .map(|d| l.dims[d as usize].clone())
            .collect()
    };
    out.extend(free(lhs, &dd.lhs_batch, &dd.lhs_contracting));
    out.extend(free(rhs, &dd.rhs_batch, &dd.rhs_contracting));
    let mut used: Vec<Piece> = out.concat();
    used.extend(steps.iter().flat_map(|s| s.need.pieces.clone()));
    let mut seen = used.clone();
    seen.sort_unstable();
    if seen.windows(2).any(|w| w[0] == w[1]) {
        return Err("one mesh axis splits a free dimension of each operand (or a free and a contracting one): XLA gathers one operand along it, chosen by cost".into());
    }
    let mut all = lhs.pieces();
    all.sort_unstable();
    let replicated = all
        .into_iter()
        .filter(|p| !out.concat().contains(p))
        .collect();
    Ok(Carried {
        layout: Layout {
            dims: out,
            replicated,
        },
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::super::layout::split;
    use super::*;

    #[test]
    fn reshapes_keep_a_split_on_the_major_dimension() {
        let rows = Layout {
            dims: vec![split(1, 8), vec![]],
            replicated: vec![],
        };
        let kept = reshape(&rows, &[8, 16], &[8, 4, 4]).unwrap();
        assert_eq!(kept.dims[0], split(1, 8));
        assert_eq!(
            reshape(&rows, &[8, 16], &[1, 8, 16]).unwrap().dims[1],
            split(1, 8)
        );
        // Cut into 2x4: the major piece on the 2, the others on the 4 (Shardy's
        // sub-axes 'd':(1)2 and 'd':(2)4).
        let cut = reshape(&rows, &[8, 16], &[2, 4, 16]).unwrap();
        assert_eq!(cut.dims[0], split(4, 2));
        assert_eq!(cut.dims[1], split(1, 4));
        // A split of the minor dimension of a group is not contiguous.
        let minor = Layout {
            dims: vec![vec![], split(1, 8)],
            replicated: vec![],
        };
        assert_eq!(reshape(&minor, &[4, 8], &[32]), None);
    }
}
