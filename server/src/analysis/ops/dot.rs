//! Dot: output dimensions are the batch dimensions, then the lhs free ones, then
//! the rhs free ones; contracting dimensions become range variables (one per
//! contracting pair, in `lhs_contracting_dims` order). `scaled-dot` reads its
//! scale operands at the operand index divided by the block size.

use super::OpResult;
use crate::algebra::{Expr, IndexingMap};
use crate::analysis::build::{d, map, s, var};
use crate::analysis::op::{DotDims, OpInfo};
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::shape::ArrayShape;
use crate::analysis::unknown::Unknown;

struct Sides<'a> {
    lhs: &'a ArrayShape,
    rhs: &'a ArrayShape,
    dims: DotDims,
    lhs_free: Vec<usize>,
    rhs_free: Vec<usize>,
}

fn sides(op: &OpInfo) -> Result<Sides<'_>, Unknown> {
    let lhs = op.operand(0)?;
    let rhs = op.operand(1)?;
    let dims = op.attrs.dot.clone().unwrap_or_default();
    let free = |rank: usize, batch: &[usize], contracting: &[usize]| -> Vec<usize> {
        (0..rank)
            .filter(|k| !batch.contains(k) && !contracting.contains(k))
            .collect()
    };
    let lhs_free = free(lhs.rank(), &dims.lhs_batch, &dims.lhs_contracting);
    let rhs_free = free(rhs.rank(), &dims.rhs_batch, &dims.rhs_contracting);
    let ok = dims.lhs_batch.len() == dims.rhs_batch.len()
        && dims.lhs_contracting.len() == dims.rhs_contracting.len()
        && dims
            .lhs_batch
            .iter()
            .chain(&dims.lhs_contracting)
            .all(|&k| k < lhs.rank())
        && dims
            .rhs_batch
            .iter()
            .chain(&dims.rhs_contracting)
            .all(|&k| k < rhs.rank())
        && dims
            .lhs_contracting
            .iter()
            .zip(&dims.rhs_contracting)
            .all(|(&a, &b)| lhs.dims[a] == rhs.dims[b]);
    if !ok {
        return Err(Unknown::malformed("dot: inconsistent dimension numbers"));
    }
    Ok(Sides {
        lhs,
        rhs,
        dims: *dims,
        lhs_free,
        rhs_free,
    })
}

/// Results for one side: `batch` (that side's batch dims), `contracting`, `free`,
/// with free dimensions starting at output position `free_start`.
fn side_results(
    rank: usize,
    batch: &[usize],
    contracting: &[usize],
    free: &[usize],
    free_start: usize,
) -> Vec<Expr> {
    (0..rank)
        .map(|k| {
            if let Some(b) = batch.iter().position(|&x| x == k) {
                d(b)
            } else if let Some(c) = contracting.iter().position(|&x| x == k) {
                s(c)
            } else {
                d(free_start + free.iter().position(|&x| x == k).unwrap_or(0))
            }
        })
        .collect()
}

fn operand_maps(op: &OpInfo) -> Result<(IndexingMap, IndexingMap), Unknown> {
    let out = op.output(0)?;
    let sd = sides(op)?;
    let nb = sd.dims.lhs_batch.len();
    if out.rank() != nb + sd.lhs_free.len() + sd.rhs_free.len() {
        return Err(Unknown::malformed(
            "dot: output rank does not match the dimension numbers",
        ));
    }
    let ranges: Vec<_> = sd
        .dims
        .lhs_contracting
        .iter()
        .map(|&k| var(sd.lhs.dims[k]))
        .collect();
    let lhs = side_results(
        sd.lhs.rank(),
        &sd.dims.lhs_batch,
        &sd.dims.lhs_contracting,
        &sd.lhs_free,
        nb,
    );
    let rhs = side_results(
        sd.rhs.rank(),
        &sd.dims.rhs_batch,
        &sd.dims.rhs_contracting,
        &sd.rhs_free,
        nb + sd.lhs_free.len(),
    );
    Ok((
        map(&out.dims, ranges.clone(), lhs, vec![]),
        map(&out.dims, ranges, rhs, vec![]),
    ))
}

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let (lhs, rhs) = operand_maps(op)?;
    Ok(vec![
        OperandIndexing::plain(lhs),
        OperandIndexing::plain(rhs),
    ])
}

/// The scale of an operand is read at `index floordiv (operand_dim / scale_dim)`.
fn scale_map(
    operand_map: &IndexingMap,
    operand: &ArrayShape,
    scale: &ArrayShape,
) -> Result<IndexingMap, Unknown> {
    if scale.rank() != operand.rank() {
        return Err(Unknown::malformed(
            "scaled-dot: scale rank differs from its operand",
        ));
    }
    let results = operand_map
        .results()
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let (n, m) = (operand.dims[k], scale.dims[k]);
            if m <= 0 || n % m != 0 {
                Err(Unknown::malformed(
                    "scaled-dot: scale does not divide its operand",
                ))
            } else if n == m {
                Ok(e.clone())
            } else {
                Ok(e.clone().floor_div(n / m))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut m = operand_map.clone();
    m.set_results(results);
    Ok(m)
}

pub fn scaled_output_to_input(op: &OpInfo) -> OpResult {
    let (lhs, rhs) = operand_maps(op)?;
    let mut entries = vec![
        OperandIndexing::plain(lhs.clone()),
        OperandIndexing::plain(rhs.clone()),
    ];
    if op.operands.len() >= 3 {
        entries.push(OperandIndexing::plain(scale_map(
            &lhs,
            op.operand(0)?,
            op.operand(2)?,
        )?));
    }
    if op.operands.len() >= 4 {
        entries.push(OperandIndexing::plain(scale_map(
            &rhs,
            op.operand(1)?,
            op.operand(3)?,
        )?));
    }
    Ok(entries)
}

/// lhs element -> every output element of its row: the rhs free dimensions become
/// range variables (and symmetrically for rhs).
pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let sd = sides(op)?;
    let nb = sd.dims.lhs_batch.len();
    let (this, batch, this_free, other, other_free) = match operand_id {
        0 => (
            sd.lhs,
            &sd.dims.lhs_batch,
            &sd.lhs_free,
            sd.rhs,
            &sd.rhs_free,
        ),
        1 => (
            sd.rhs,
            &sd.dims.rhs_batch,
            &sd.rhs_free,
            sd.lhs,
            &sd.lhs_free,
        ),
        _ => return Err(Unknown::malformed("dot has two operands")),
    };
    let ranges: Vec<_> = other_free.iter().map(|&k| var(other.dims[k])).collect();
    let mut results: Vec<Expr> = batch.iter().map(|&k| d(k)).collect();
    let mine: Vec<Expr> = this_free.iter().map(|&k| d(k)).collect();
    let theirs: Vec<Expr> = (0..other_free.len()).map(s).collect();
    if operand_id == 0 {
        results.extend(mine);
        results.extend(theirs);
    } else {
        results.extend(theirs);
        results.extend(mine);
    }
    debug_assert_eq!(results.len(), nb + this_free.len() + other_free.len());
    Ok(vec![OperandIndexing::plain(map(
        &this.dims,
        ranges,
        results,
        vec![],
    ))])
}
