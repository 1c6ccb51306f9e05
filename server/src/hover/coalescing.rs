//! The coalescing lines of a hover, laid out from a [`Report`]: on a fusion one
//! line per operand (uncoalesced ones first when a summary cuts the list), on a
//! fused parameter its operand's verdict, the first warp's read map and, when
//! the read is not coalesced (or in the full text), the picture of what a warp
//! or tile reads.

use super::Detail;
use crate::analysis::ArrayShape;
use crate::coalescing::{picture, svg, Device, Evidence, OperandVerdict, Report};

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
pub fn fusion_lines(report: &Report, device: &Device, detail: Detail) -> Vec<String> {
    let mut lines = vec![title(report, &device.name)];
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
    if detail == Detail::Full {
        for o in ops.iter().filter(|o| !o.coalesced) {
            lines.push(format!("`{}`:", o.name));
            read_pictures(&mut lines, o, device, detail);
        }
    }
    lines
}

/// The lines of a hover on a fused parameter: the verdict on the operand that
/// feeds it, the warp's read map, and the picture.
pub fn parameter_lines(
    report: &Report,
    fusion: &str,
    device: &Device,
    detail: Detail,
) -> Vec<String> {
    let Some(o) = report.operands.first() else {
        return vec![];
    };
    let mut lines = vec![format!(
        "{} of operand {} of `%{fusion}`: {}",
        title(report, &device.name),
        o.index,
        verdict_text(o)
    )];
    if let Some(map) = warp_map(o) {
        lines.push(format!("First warp reads (linear offsets): `{map}`"));
    }
    if !o.coalesced || detail == Detail::Full {
        read_pictures(&mut lines, o, device, detail);
    }
    lines
}

/// The first warp's (uncoalesced, else first) read map on one line.
fn warp_map(o: &OperandVerdict) -> Option<String> {
    let Evidence::Warp(warps) = &o.evidence else {
        return None;
    };
    let w = warps.iter().find(|w| !w.coalesced).or(warps.first())?;
    Some(w.map.to_string().replace('\n', " "))
}

/// The pictures of what a warp (or tile) reads of `o`.
fn read_pictures(lines: &mut Vec<String>, o: &OperandVerdict, device: &Device, detail: Detail) {
    match &o.evidence {
        Evidence::Warp(warps) => {
            let Some(w) = warps.iter().find(|w| !w.coalesced).or(warps.first()) else {
                return;
            };
            if let (false, Some(shape)) = (w.offsets.is_empty(), &o.tensor) {
                pictures(lines, o, shape, &w.offsets, "one warp", device, detail);
            }
        }
        Evidence::Tile(tiles) => {
            let Some(t) = tiles.iter().find(|t| !t.coalesced).or(tiles.first()) else {
                return;
            };
            let offsets = picture::tile_offsets(t);
            if !offsets.is_empty() {
                pictures(lines, o, &t.shape, &offsets, "one tile", device, detail);
            }
        }
        Evidence::None => {}
    }
}

/// The block-character picture, and in the full text (the fusion-maps panel)
/// the SVG with the transaction boundaries.
fn pictures(
    lines: &mut Vec<String>,
    o: &OperandVerdict,
    shape: &ArrayShape,
    offsets: &[i64],
    who: &str,
    device: &Device,
    detail: Detail,
) {
    let p = picture::draw(shape, offsets);
    lines.push(format!("What {who} reads, {}:", p.caption()));
    lines.push(p.markdown());
    if detail == Detail::Full {
        let bytes = device.dram_to_l2_transaction_bytes;
        let image = svg::svg(&p, o.element_bits.unwrap_or(32), bytes);
        lines.push(format!(
            "{} (red: {bytes}-byte transaction boundaries)",
            svg::markdown_image(&format!("what {who} reads of {}", o.name), &image),
        ));
    }
}
