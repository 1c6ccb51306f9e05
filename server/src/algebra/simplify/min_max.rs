//! `min` and `max` decided by ranges, or by the sign of the simplified
//! difference of the operands.

use super::arena::Id;
use super::linear::Linear;
use super::rewriter::Rewriter;
use crate::algebra::expr::BinOp;

/// `min(a, b)` / `max(a, b)` with simplified operands: the operand that is
/// provably the smaller (larger), else the node itself.
pub fn min_max(rw: &mut Rewriter<'_>, a: Id, b: Id, is_min: bool) -> Id {
    if provably_le(rw, a, b) {
        return if is_min { a } else { b };
    }
    if provably_le(rw, b, a) {
        return if is_min { b } else { a };
    }
    let op = if is_min { BinOp::Min } else { BinOp::Max };
    rw.bin(op, a, b)
}

/// `a <= b` everywhere: by ranges, or because `a - b` simplifies to something at
/// most 0.
fn provably_le(rw: &mut Rewriter<'_>, a: Id, b: Id) -> bool {
    if rw.range(a).hi <= rw.range(b).lo {
        return true;
    }
    let difference = (|| {
        let mut d = Linear::of(rw.arena, a)?;
        let lb = Linear::of(rw.arena, b)?;
        d.add_linear(rw.arena, &lb, -1)?;
        Some(d.to_id(rw.arena))
    })();
    match difference {
        Some(d) => {
            let d = rw.fixpoint(d);
            rw.range(d).hi <= 0
        }
        None => false,
    }
}
