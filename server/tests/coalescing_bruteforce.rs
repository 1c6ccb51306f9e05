//! Brute force against the coalescing analysis: random small loop fusions
//! (operands read directly, transposed, broadcast or strided-sliced, each with
//! its own layout; the output with its own) and random tiles of one-op fusions.
//! The reference computes, with plain integers and no indexing maps, the
//! physical address of every element the first warp (or the first tile) reads,
//! and judges them by XLA's rules; the analysis composes launch maps, fusion
//! maps and layouts symbolically. Their verdicts, utilizations and pictures
//! must agree.

use std::collections::BTreeMap;

use hlo_lsp::analysis::contiguity::{contiguous_elements, judge_bytes};
use hlo_lsp::analysis::{view, ArrayShape};
use hlo_lsp::coalescing::picture;
use hlo_lsp::coalescing::warp::{runs, utilization, xla_coalesced};
use hlo_lsp::coalescing::{self, Device, Evidence, Options, Subject};
use hlo_lsp::model;
use proptest::prelude::*;

/// How the root reads one operand.
#[derive(Clone, Debug)]
enum Read {
    Same,
    /// Output dim i is operand dim perm[i].
    Transpose(Vec<usize>),
    /// The operand has the output dims in `kept` (sorted).
    Broadcast(Vec<usize>),
    /// Operand index = start + stride * output index.
    Slice(Vec<(i64, i64)>),
}

#[derive(Clone, Debug)]
struct Operand {
    read: Read,
    dims: Vec<i64>,
    layout: Vec<usize>,
}

#[derive(Clone, Debug)]
struct Case {
    ty: &'static str,
    bits: i64,
    out: Vec<i64>,
    out_layout: Vec<usize>,
    operands: Vec<Operand>,
}

fn layout_text(m2m: &[usize]) -> String {
    let items: Vec<String> = m2m.iter().map(|d| d.to_string()).collect();
    format!("{{{}}}", items.join(","))
}

fn shape_text(ty: &str, dims: &[i64], layout: &[usize]) -> String {
    let d: Vec<String> = dims.iter().map(|x| x.to_string()).collect();
    if dims.is_empty() {
        return format!("{ty}[]");
    }
    format!("{ty}[{}]{}", d.join(","), layout_text(layout))
}

fn hlo(case: &Case) -> String {
    let out = shape_text(case.ty, &case.out, &case.out_layout);
    let plain: Vec<String> = case.out.iter().map(|x| x.to_string()).collect();
    let plain = format!("{}[{}]", case.ty, plain.join(","));
    let mut fused = String::from("fused {\n");
    let mut entry = String::from("ENTRY e {\n");
    let mut values = vec![];
    for (k, op) in case.operands.iter().enumerate() {
        let s = shape_text(case.ty, &op.dims, &op.layout);
        fused.push_str(&format!("  p{k} = {s} parameter({k})\n"));
        entry.push_str(&format!("  a{k} = {s} parameter({k})\n"));
        let v = match &op.read {
            Read::Same => format!("p{k}"),
            Read::Transpose(perm) => {
                let p: Vec<String> = perm.iter().map(|x| x.to_string()).collect();
                fused.push_str(&format!(
                    "  x{k} = {plain} transpose(p{k}), dimensions={{{}}}\n",
                    p.join(",")
                ));
                format!("x{k}")
            }
            Read::Broadcast(kept) => {
                let p: Vec<String> = kept.iter().map(|x| x.to_string()).collect();
                fused.push_str(&format!(
                    "  x{k} = {plain} broadcast(p{k}), dimensions={{{}}}\n",
                    p.join(",")
                ));
                format!("x{k}")
            }
            Read::Slice(ss) => {
                let parts: Vec<String> = ss
                    .iter()
                    .zip(&case.out)
                    .map(|(&(start, stride), &n)| {
                        format!("[{start}:{}:{stride}]", start + (n - 1) * stride + 1)
                    })
                    .collect();
                fused.push_str(&format!(
                    "  x{k} = {plain} slice(p{k}), slice={{{}}}\n",
                    parts.join(", ")
                ));
                format!("x{k}")
            }
        };
        values.push(v);
    }
    let mut acc = values[0].clone();
    for (i, v) in values.iter().enumerate().skip(1) {
        let shape = if i + 1 == values.len() {
            out.clone()
        } else {
            plain.clone()
        };
        let root = if i + 1 == values.len() { "ROOT " } else { "" };
        fused.push_str(&format!("  {root}s{i} = {shape} add({acc}, {v})\n"));
        acc = format!("s{i}");
    }
    if values.len() == 1 {
        fused.push_str(&format!("  ROOT n = {out} negate({acc})\n"));
    }
    fused.push_str("}\n");
    let args: Vec<String> = (0..case.operands.len()).map(|k| format!("a{k}")).collect();
    entry.push_str(&format!(
        "  ROOT f = {out} fusion({}), kind=kLoop, calls=fused\n}}\n",
        args.join(", ")
    ));
    format!("HloModule m\n{fused}{entry}")
}

/// Logical dimension strides of a layout.
fn strides(dims: &[i64], m2m: &[usize]) -> Vec<i64> {
    let mut s = vec![0; dims.len()];
    let mut acc = 1;
    for &d in m2m {
        s[d] = acc;
        acc *= dims[d];
    }
    s
}

/// The operand index the output element `index` reads.
fn operand_index(op: &Operand, index: &[i64]) -> Vec<i64> {
    match &op.read {
        Read::Same => index.to_vec(),
        Read::Transpose(perm) => {
            let mut x = vec![0; index.len()];
            for (i, &p) in perm.iter().enumerate() {
                x[p] = index[i];
            }
            x
        }
        Read::Broadcast(kept) => kept.iter().map(|&d| index[d]).collect(),
        Read::Slice(ss) => index
            .iter()
            .zip(ss)
            .map(|(&i, &(start, stride))| start + stride * i)
            .collect(),
    }
}

/// A device small enough that loop fusions of a few hundred elements unroll.
fn device() -> Device {
    Device {
        name: "tiny".into(),
        sm_count: 1,
        threads_per_sm: 32,
        ..Device::a6000()
    }
}

/// XLA's warp rule on enumerated addresses `v[t][u]` (None: masked).
fn reference(v: &[Vec<Option<i64>>]) -> Option<Vec<i64>> {
    // g(u) from the first thread, checked on all: v = f(t) + g(u).
    let steps = v.first().map_or(0, Vec::len);
    let mut g: BTreeMap<usize, i64> = BTreeMap::new();
    let mut f: Vec<Option<i64>> = vec![];
    for row in v {
        let Some(u0) = row.iter().position(Option::is_some) else {
            f.push(None);
            continue;
        };
        let base = row[u0].unwrap();
        let anchor = match g.get(&u0) {
            Some(&a) => a,
            None if g.is_empty() => {
                g.insert(u0, 0);
                0
            }
            None => return None,
        };
        for (u, x) in row.iter().enumerate() {
            if let Some(x) = x {
                let rel = x - base + anchor;
                if *g.entry(u).or_insert(rel) != rel {
                    return None;
                }
            }
        }
        f.push(Some(base - anchor));
    }
    let consecutive = steps > 1 && g.iter().all(|(&u, &x)| x == u as i64);
    let mut out: Vec<i64> = if consecutive {
        v.iter().flatten().flatten().copied().collect()
    } else {
        f.into_iter().flatten().collect()
    };
    out.sort_unstable();
    out.dedup();
    Some(out)
}

fn arb_case() -> impl Strategy<Value = Case> {
    let ty = prop_oneof![Just(("f32", 32i64)), Just(("f16", 16)), Just(("s8", 8))];
    (ty, 1usize..=3)
        .prop_flat_map(|(ty, rank)| {
            (
                Just(ty),
                proptest::collection::vec(1i64..=12, rank),
                Just((0..rank).collect::<Vec<usize>>()).prop_shuffle(),
                proptest::collection::vec((0u8..4, any::<u64>()), 1..=3),
            )
        })
        .prop_map(|((ty, bits), out, out_layout, ops)| {
            let rank = out.len();
            let operands = ops
                .into_iter()
                .map(|(kind, seed)| operand(kind, seed, &out, rank))
                .collect();
            Case {
                ty,
                bits,
                out,
                out_layout,
                operands,
            }
        })
}

/// A pseudo-random operand from `seed` (deterministic, so proptest shrinks well).
fn operand(kind: u8, seed: u64, out: &[i64], rank: usize) -> Operand {
    let mut s = seed;
    let mut next = |n: u64| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) % n.max(1)
    };
    let mut layout: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        let j = next(i as u64 + 1) as usize;
        layout.swap(i, j);
    }
    match kind {
        0 => Operand {
            read: Read::Same,
            dims: out.to_vec(),
            layout,
        },
        1 => {
            let mut perm: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                let j = next(i as u64 + 1) as usize;
                perm.swap(i, j);
            }
            let mut dims = vec![0; rank];
            for (i, &p) in perm.iter().enumerate() {
                dims[p] = out[i];
            }
            Operand {
                read: Read::Transpose(perm),
                dims,
                layout,
            }
        }
        2 => {
            let kept: Vec<usize> = (0..rank).filter(|_| next(2) == 0).collect();
            let dims: Vec<i64> = kept.iter().map(|&d| out[d]).collect();
            let mut layout: Vec<usize> = (0..kept.len()).collect();
            for i in (1..kept.len()).rev() {
                let j = next(i as u64 + 1) as usize;
                layout.swap(i, j);
            }
            Operand {
                read: Read::Broadcast(kept),
                dims,
                layout,
            }
        }
        _ => {
            let ss: Vec<(i64, i64)> = (0..rank)
                .map(|_| (next(3) as i64, 1 + next(3) as i64))
                .collect();
            let dims: Vec<i64> = ss
                .iter()
                .zip(out)
                .map(|(&(start, stride), &n)| start + (n - 1) * stride + 1 + next(2) as i64)
                .collect();
            Operand {
                read: Read::Slice(ss),
                dims,
                layout,
            }
        }
    }
}

fn analyze(text: &str, options: &Options) -> coalescing::Report {
    let file = model::parse_hlo(text);
    assert!(!file.has_errors(), "{text}\n{:?}", file.diagnostics);
    let module = &file.modules[0];
    let entry = module.entry_computation().unwrap();
    let root = entry.root_instruction().unwrap();
    let v = view::borrowed(module);
    let subject = Subject::new(module, &v, entry, root).unwrap();
    coalescing::analyze(&subject, options, None)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn loop_fusion_warp_reads_match_enumeration(case in arb_case()) {
        let text = hlo(&case);
        let device = device();
        let report = analyze(&text, &Options { sizes: None, device: device.clone(), operand: None });
        let n: i64 = case.out.iter().product();
        let unroll = if n >= device.resident_threads() {
            [4, 2].into_iter().find(|u| n % u == 0).unwrap_or(1)
        } else {
            1
        };
        let threads = ((n + unroll - 1) / unroll).clamp(1, 128).min(32);
        let out_strides = strides(&case.out, &case.out_layout);
        for (k, op) in case.operands.iter().enumerate() {
            let op_strides = strides(&op.dims, &op.layout);
            let mut v: Vec<Vec<Option<i64>>> = vec![];
            for t in 0..threads {
                let mut row = vec![];
                for u in 0..unroll {
                    let l = t * unroll + u;
                    if l >= n {
                        row.push(None);
                        continue;
                    }
                    // Delinearize in the output's layout.
                    let index: Vec<i64> = (0..case.out.len())
                        .map(|d| (l / out_strides[d]) % case.out[d])
                        .collect();
                    let x = operand_index(op, &index);
                    row.push(Some(x.iter().zip(&op_strides).map(|(a, b)| a * b).sum()));
                }
                v.push(row);
            }
            let verdict = &report.operands[k];
            let rank0 = op.dims.is_empty();
            if rank0 {
                prop_assert!(verdict.coalesced);
                continue;
            }
            match reference(&v) {
                None => prop_assert!(!verdict.coalesced, "{text}\n{verdict:?}"),
                Some(offsets) => {
                    let expected = xla_coalesced(&runs(&offsets), (case.bits / 8).max(1));
                    prop_assert_eq!(verdict.coalesced, expected, "{}\n{:?}\n{:?}", text, offsets, verdict);
                    let (u, _) = utilization(&offsets, case.bits, device.dram_to_l2_transaction_bytes);
                    let got = verdict.bandwidth_utilization.unwrap();
                    prop_assert!((got - u).abs() < 1e-9, "{} {} vs {}", text, got, u);
                    // The picture counts what enumeration finds in every cell.
                    let shape = ArrayShape::with_layout(op.dims.clone(), op.layout.clone());
                    let Evidence::Warp(warps) = &verdict.evidence else { panic!() };
                    prop_assert_eq!(&warps[0].offsets, &offsets);
                    let p = picture::draw(&shape, &offsets);
                    prop_assert_eq!(p.counts, cell_counts(&op.dims, &op.layout, &offsets));
                }
            }
        }
    }

    #[test]
    fn tile_reads_match_enumeration(case in arb_case(), tiles in proptest::collection::vec(1i64..=16, 3)) {
        // One-op fusion: the output tile of the operand read directly or transposed.
        let Some(op) = case.operands.iter().find(|o| matches!(o.read, Read::Same | Read::Transpose(_))) else {
            return Ok(());
        };
        let rank = case.out.len();
        let sizes: Vec<i64> = tiles[..rank].to_vec();
        let p = shape_text(case.ty, &op.dims, &op.layout);
        let out = shape_text(case.ty, &case.out, &case.out_layout);
        let body = match &op.read {
            Read::Transpose(perm) => {
                let q: Vec<String> = perm.iter().map(|x| x.to_string()).collect();
                format!("transpose(p0), dimensions={{{}}}", q.join(","))
            }
            _ => "negate(p0)".to_string(),
        };
        let text = format!("HloModule m\nENTRY e {{\n  p0 = {p} parameter(0)\n  ROOT r = {out} {body}\n}}\n");
        let device = Device::a6000();
        let report = analyze(&text, &Options { sizes: Some(sizes.clone()), device: device.clone(), operand: None });
        // Enumerate tile 0 of the output, clamped to the output (masked elements).
        let op_strides = strides(&op.dims, &op.layout);
        let mut offsets = vec![];
        let total: i64 = sizes.iter().product();
        for flat in 0..total {
            let mut rest = flat;
            let mut index = vec![0i64; rank];
            for d in (0..rank).rev() {
                index[d] = rest % sizes[d];
                rest /= sizes[d];
            }
            if index.iter().zip(&case.out).all(|(i, n)| i < n) {
                let x = operand_index(op, &index);
                offsets.push(x.iter().zip(&op_strides).map(|(a, b)| a * b).sum::<i64>());
            }
        }
        offsets.sort_unstable();
        offsets.dedup();
        let rs = runs(&offsets);
        let shortest = rs.iter().map(|(a, b)| b - a + 1).min().unwrap();
        let bytes = shortest * case.bits / 8;
        let (coalesced, u) = judge_bytes(bytes, device.dram_to_l2_transaction_bytes);
        let verdict = &report.operands[0];
        prop_assert_eq!(verdict.coalesced, coalesced, "{}\n{:?}", text, verdict);
        prop_assert!((verdict.bandwidth_utilization.unwrap() - u).abs() < 1e-9);
        let Evidence::Tile(reads) = &verdict.evidence else { panic!("{verdict:?}") };
        let shape = ArrayShape::with_layout(op.dims.clone(), op.layout.clone());
        prop_assert_eq!(
            contiguous_elements(&shape, &reads[0].sizes, &reads[0].strides),
            shortest
        );
        prop_assert_eq!(picture::tile_offsets(&reads[0]), offsets);
    }
}

/// `(read, total)` per picture cell, computed directly.
fn cell_counts(dims: &[i64], layout: &[usize], offsets: &[i64]) -> Vec<Vec<(i64, i64)>> {
    let physical: Vec<i64> = layout.iter().rev().map(|&d| dims[d]).collect();
    let (rows, cols) = match physical.len() {
        1 => (1, physical[0]),
        n => (physical[n - 2], physical[n - 1]),
    };
    let (ch, cw) = ((rows + 15) / 16, (cols + 31) / 32);
    let mut grid =
        vec![vec![(0i64, 0i64); ((cols + cw - 1) / cw) as usize]; ((rows + ch - 1) / ch) as usize];
    for r in 0..rows {
        for c in 0..cols {
            grid[(r / ch) as usize][(c / cw) as usize].1 += 1;
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for &o in offsets {
        let o = o.rem_euclid(rows * cols);
        if seen.insert(o) {
            grid[(o / cols / ch) as usize][(o % cols / cw) as usize].0 += 1;
        }
    }
    grid
}
