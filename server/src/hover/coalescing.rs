//! The coalescing lines of a hover, laid out from a [`Report`]: on a fusion one
//! line per operand (uncoalesced ones first when a summary cuts the list), on a
//! fused parameter its operand's verdict, the first warp's read map and, when
//! the read is not coalesced (or in the full text), the picture of what a warp
//! or tile reads.

use super::Detail;
use crate::coalescing::{picture, Evidence, OperandVerdict, Report};

/// Operand lines a summary shows before "N more".
pub const MAX_OPERAND_LINES: usize = 8;

fn title(report: &Report, device: &str) -> String {
    format!("**Coalescing** ({} · {device})", report.family.describe())
}

/// `` `p1 f32[100,200]{0,1}`: not coalesced — ... ``.
fn verdict_text(o: &OperandVerdict) -> String {
    format!(
        "`{} {}`: {} — {}",
        o.name,
        o.shape,
        if o.coalesced {
            "coalesced"
        } else {
            "not coalesced"
        },
        o.reason
    )
}

/// The lines of a hover on a fusion.
pub fn fusion_lines(report: &Report, device: &str, detail: Detail) -> Vec<String> {
    let mut lines = vec![title(report, device)];
    let ops = &report.operands;
    let shown: Vec<&OperandVerdict> = if detail == Detail::Full || ops.len() <= MAX_OPERAND_LINES {
        ops.iter().collect()
    } else {
        // Uncoalesced reads first, in operand order, then the others.
        let mut v: Vec<&OperandVerdict> = ops.iter().filter(|o| !o.coalesced).collect();
        v.extend(ops.iter().filter(|o| o.coalesced));
        v.truncate(MAX_OPERAND_LINES);
        v.sort_by_key(|o| o.index);
        v
    };
    lines.extend(shown.iter().map(|o| format!("- {}", verdict_text(o))));
    let rest = ops.len() - shown.len();
    if rest > 0 {
        let bad = ops.iter().filter(|o| !o.coalesced).count()
            - shown.iter().filter(|o| !o.coalesced).count();
        let which = if bad == 0 {
            "all coalesced".to_string()
        } else {
            format!("{bad} not coalesced")
        };
        lines.push(format!("- … {rest} more operands ({which})"));
    }
    lines
}

/// The lines of a hover on a fused parameter: the verdict on the operand that
/// feeds it, the warp's read map, and the picture.
pub fn parameter_lines(report: &Report, fusion: &str, device: &str, detail: Detail) -> Vec<String> {
    let Some(o) = report.operands.first() else {
        return vec![];
    };
    let mut lines = vec![format!(
        "{} of operand {} of `%{fusion}`: {}",
        title(report, device),
        o.index,
        verdict_text(o)
    )];
    let picture_wanted = !o.coalesced || detail == Detail::Full;
    match &o.evidence {
        Evidence::Warp(warps) => {
            let Some(w) = warps.iter().find(|w| !w.coalesced).or(warps.first()) else {
                return lines;
            };
            lines.push(format!(
                "First warp reads (linear offsets): `{}`",
                w.map.to_string().replace('\n', " ")
            ));
            if let (true, Some(shape)) = (picture_wanted && !w.offsets.is_empty(), &o.tensor) {
                let p = picture::draw(shape, &w.offsets);
                lines.push(format!("What one warp reads, {}:", p.caption()));
                lines.push(p.markdown());
            }
        }
        Evidence::Tile(tiles) => {
            let Some(t) = tiles.iter().find(|t| !t.coalesced).or(tiles.first()) else {
                return lines;
            };
            let offsets = picture::tile_offsets(t);
            if picture_wanted && !offsets.is_empty() {
                let p = picture::draw(&t.shape, &offsets);
                lines.push(format!("What one tile reads, {}:", p.caption()));
                lines.push(p.markdown());
            }
        }
        Evidence::None => {}
    }
    lines
}
