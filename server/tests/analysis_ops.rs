#![allow(clippy::needless_range_loop, clippy::type_complexity)]
//! Differential tests of the per-op maps: for random small shapes and attributes,
//! a brute-force reference written from each op's semantics (plain loops over
//! indices, no affine maps) gives the set of operand elements every output element
//! reads; the output-to-input maps must give exactly that set, and the
//! input-to-output maps exactly its inverse.

use crate::analysis_support;

use std::collections::BTreeSet;

use analysis_support::{entry_reads, in_bounds, indices, linear, RuntimeRule, Tensor};
use hlo_lsp::analysis::op::*;
use hlo_lsp::analysis::{ops, ArrayShape, OpInfo, Shape, Unknown};
use proptest::prelude::*;

type Reads = Vec<BTreeSet<Vec<i64>>>;

fn arr(d: &[i64]) -> Shape {
    Shape::Array(ArrayShape::new(d.to_vec()))
}

fn dims_of(s: &Shape) -> Vec<i64> {
    s.as_array().expect("array").dims.clone()
}

/// Compares the maps of `op` with `reference` at every output element, in both
/// directions (input to output unless `skip_inverse` lists the operand).
fn check(
    op: &OpInfo,
    tensors: &[Option<Tensor>],
    rule: RuntimeRule,
    skip_inverse: &[usize],
    reference: &dyn Fn(&[i64]) -> Reads,
) -> Result<(), TestCaseError> {
    let out = op.output(0).unwrap().dims.clone();
    let o2i = ops::output_to_input(op, 0);
    prop_assert_eq!(o2i.entries.len(), op.operands.len());
    let mut relation: Vec<BTreeSet<(Vec<i64>, Vec<i64>)>> =
        vec![BTreeSet::new(); op.operands.len()];
    for o in indices(&out) {
        let expected = reference(&o);
        for (k, entry) in o2i.entries.iter().enumerate() {
            let extents = dims_of(&op.operands[k]);
            let got = entry_reads(entry, &o, &extents, tensors, rule);
            prop_assert_eq!(
                &got,
                &expected[k],
                "{} operand {} at output {:?}",
                op.opcode,
                k,
                o
            );
            for x in &expected[k] {
                relation[k].insert((x.clone(), o.clone()));
            }
        }
    }
    for k in 0..op.operands.len() {
        if skip_inverse.contains(&k) {
            continue;
        }
        let i2o = ops::input_to_output(op, k);
        let extents = dims_of(&op.operands[k]);
        for x in indices(&extents) {
            let got = entry_reads(&i2o.entries[0], &x, &out, tensors, rule);
            let want: BTreeSet<Vec<i64>> = relation[k]
                .iter()
                .filter(|(a, _)| *a == x)
                .map(|(_, o)| o.clone())
                .collect();
            prop_assert_eq!(
                &got,
                &want,
                "{} input-to-output operand {} at {:?}",
                op.opcode,
                k,
                x
            );
        }
    }
    Ok(())
}

fn one(x: Vec<i64>) -> BTreeSet<Vec<i64>> {
    BTreeSet::from([x])
}

fn dims_strategy(max_rank: usize) -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(1i64..4, 1..=max_rank)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn elementwise_with_scalar_operands(dims in dims_strategy(3), scalar_pred in any::<bool>()) {
        let pred = if scalar_pred { arr(&[]) } else { arr(&dims) };
        let op = OpInfo::new("select", ArrayShape::new(dims.clone()), vec![pred, arr(&dims), arr(&dims)]);
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            vec![if scalar_pred { one(vec![]) } else { one(o.to_vec()) }, one(o.to_vec()), one(o.to_vec())]
        })?;
    }

    #[test]
    fn broadcast(in_dims in dims_strategy(2), extra in dims_strategy(2), seed in any::<u64>()) {
        // Output = operand dims interleaved with extra dims at random positions.
        let rank = in_dims.len() + extra.len();
        let mut positions: Vec<usize> = (0..rank).collect();
        let mut s = seed;
        for i in (1..positions.len()).rev() { s = s.wrapping_mul(6364136223846793005).wrapping_add(1); positions.swap(i, (s >> 33) as usize % (i + 1)); }
        let mut dims: Vec<usize> = positions[..in_dims.len()].to_vec();
        dims.sort();
        let mut out = vec![0; rank];
        let mut e = extra.iter();
        for k in 0..rank { out[k] = match dims.iter().position(|&x| x == k) { Some(i) => in_dims[i], None => *e.next().unwrap() }; }
        let mut op = OpInfo::new("broadcast", ArrayShape::new(out.clone()), vec![arr(&in_dims)]);
        op.attrs_mut().dimensions = Some(dims.iter().map(|&x| x as i64).collect());
        check(&op, &[], RuntimeRule::Raw, &[], &|o| vec![one(dims.iter().map(|&k| o[k]).collect())])?;
    }

    #[test]
    fn transpose(in_dims in dims_strategy(4), seed in any::<u64>()) {
        let mut perm: Vec<usize> = (0..in_dims.len()).collect();
        let mut s = seed;
        for i in (1..perm.len()).rev() { s = s.wrapping_mul(6364136223846793005).wrapping_add(1); perm.swap(i, (s >> 33) as usize % (i + 1)); }
        let out: Vec<i64> = perm.iter().map(|&p| in_dims[p]).collect();
        let mut op = OpInfo::new("transpose", ArrayShape::new(out), vec![arr(&in_dims)]);
        op.attrs_mut().dimensions = Some(perm.iter().map(|&x| x as i64).collect());
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            let mut x = vec![0; o.len()];
            for (i, &p) in perm.iter().enumerate() { x[p] = o[i]; }
            vec![one(x)]
        })?;
    }

    #[test]
    fn reverse(dims in dims_strategy(3), mask in any::<u8>()) {
        let rev: Vec<usize> = (0..dims.len()).filter(|k| mask & (1 << k) != 0).collect();
        let mut op = OpInfo::new("reverse", ArrayShape::new(dims.clone()), vec![arr(&dims)]);
        op.attrs_mut().dimensions = Some(rev.iter().map(|&x| x as i64).collect());
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            vec![one(o.iter().enumerate().map(|(k, &i)| if rev.contains(&k) { dims[k] - 1 - i } else { i }).collect())]
        })?;
    }

    #[test]
    fn reshape(factors in prop::collection::vec(prop::sample::select(vec![1i64, 2, 3]), 1..5), split_in in any::<u8>(), split_out in any::<u8>()) {
        // Both shapes group the same list of prime factors differently.
        let group = |mask: u8| -> Vec<i64> {
            let mut out = vec![];
            let mut cur = 1;
            for (i, f) in factors.iter().enumerate() { cur *= f; if mask & (1 << i) != 0 || i + 1 == factors.len() { out.push(cur); cur = 1; } }
            out
        };
        let (input, output) = (group(split_in), group(split_out));
        let op = OpInfo::new("reshape", ArrayShape::new(output.clone()), vec![arr(&input)]);
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            let lin = linear(o, &output) as i64;
            let mut x = vec![0; input.len()];
            let mut rest = lin;
            for k in (0..input.len()).rev() { x[k] = rest % input[k]; rest /= input[k]; }
            vec![one(x)]
        })?;
    }

    #[test]
    fn bitcast_with_layouts(factors in prop::collection::vec(prop::sample::select(vec![1i64, 2, 3]), 1..5), split_in in any::<u8>(), split_out in any::<u8>(), s1 in any::<u64>(), s2 in any::<u64>()) {
        let group = |mask: u8| -> Vec<i64> {
            let mut out = vec![];
            let mut cur = 1;
            for (i, f) in factors.iter().enumerate() { cur *= f; if mask & (1 << i) != 0 || i + 1 == factors.len() { out.push(cur); cur = 1; } }
            out
        };
        let shuffle = |n: usize, mut s: u64| -> Vec<usize> {
            let mut p: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() { s = s.wrapping_mul(6364136223846793005).wrapping_add(1); p.swap(i, (s >> 33) as usize % (i + 1)); }
            p
        };
        // Physical shapes are the groupings; logical shapes permute them.
        let (pin, pout) = (group(split_in), group(split_out));
        let (min, mout) = (shuffle(pin.len(), s1), shuffle(pout.len(), s2));
        // major_to_minor[p] = logical dim; logical extents from physical ones.
        let logical = |phys: &[i64], m2m: &[usize]| { let mut l = vec![0; phys.len()]; for (p, &d) in m2m.iter().enumerate() { l[d] = phys[p]; } l };
        let (lin_dims, lout_dims) = (logical(&pin, &min), logical(&pout, &mout));
        let layout = |m2m: &[usize]| m2m.iter().rev().copied().collect::<Vec<_>>();
        let op = OpInfo::new("bitcast", ArrayShape::with_layout(lout_dims.clone(), layout(&mout)), vec![Shape::Array(ArrayShape::with_layout(lin_dims.clone(), layout(&min)))]);
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            let phys_out: Vec<i64> = mout.iter().map(|&d| o[d]).collect();
            let mut rest = linear(&phys_out, &pout) as i64;
            let mut phys_in = vec![0; pin.len()];
            for k in (0..pin.len()).rev() { phys_in[k] = rest % pin[k]; rest /= pin[k]; }
            let mut x = vec![0; pin.len()];
            for (p, &d) in min.iter().enumerate() { x[d] = phys_in[p]; }
            vec![one(x)]
        })?;
    }

    #[test]
    fn slice(spec in prop::collection::vec((1i64..7, 0i64..3, 1i64..4), 1..4)) {
        let input: Vec<i64> = spec.iter().map(|s| s.0 + s.1).collect();
        let sd: Vec<SliceDim> = spec.iter().map(|&(n, start, stride)| SliceDim { start, limit: start + n, stride }).collect();
        let out: Vec<i64> = sd.iter().map(|s| (s.limit - s.start + s.stride - 1) / s.stride).collect();
        let mut op = OpInfo::new("slice", ArrayShape::new(out), vec![arr(&input)]);
        op.attrs_mut().slice = Some(sd.clone());
        check(&op, &[], RuntimeRule::Raw, &[], &|o| vec![one(o.iter().zip(&sd).map(|(&i, s)| s.start + i * s.stride).collect())])?;
    }

    #[test]
    fn dynamic_slice(spec in prop::collection::vec((1i64..4, 0i64..3, -2i64..6), 1..4)) {
        let input: Vec<i64> = spec.iter().map(|s| s.0 + s.1).collect();
        let sizes: Vec<i64> = spec.iter().map(|s| s.0).collect();
        let mut operands = vec![arr(&input)];
        let mut tensors = vec![None];
        for s in &spec { operands.push(arr(&[])); tensors.push(Some(Tensor { dims: vec![], values: vec![s.2] })); }
        let mut op = OpInfo::new("dynamic-slice", ArrayShape::new(sizes.clone()), operands);
        op.attrs_mut().dynamic_slice_sizes = Some(sizes.clone());
        let n = spec.len();
        check(&op, &tensors, RuntimeRule::Clamp, &[], &|o| {
            let start: Vec<i64> = spec.iter().map(|s| s.2.clamp(0, s.1)).collect();
            let mut r = vec![one(o.iter().zip(&start).map(|(a, b)| a + b).collect())];
            r.extend((0..n).map(|_| one(vec![])));
            r
        })?;
    }

    #[test]
    fn dynamic_update_slice(spec in prop::collection::vec((1i64..4, 0i64..3, -2i64..6), 1..4)) {
        let out: Vec<i64> = spec.iter().map(|s| s.0 + s.1).collect();
        let upd: Vec<i64> = spec.iter().map(|s| s.0).collect();
        let mut operands = vec![arr(&out), arr(&upd)];
        let mut tensors = vec![None, None];
        for s in &spec { operands.push(arr(&[])); tensors.push(Some(Tensor { dims: vec![], values: vec![s.2] })); }
        let op = OpInfo::new("dynamic-update-slice", ArrayShape::new(out.clone()), operands);
        let n = spec.len();
        check(&op, &tensors, RuntimeRule::Clamp, &[], &|o| {
            let start: Vec<i64> = spec.iter().map(|s| s.2.clamp(0, s.1)).collect();
            let u: Vec<i64> = o.iter().zip(&start).map(|(a, b)| a - b).collect();
            let mut r = vec![one(o.to_vec()), if in_bounds(&u, &upd) { one(u) } else { BTreeSet::new() }];
            r.extend((0..n).map(|_| one(vec![])));
            r
        })?;
    }

    #[test]
    fn concatenate(base in dims_strategy(3), sizes in prop::collection::vec(1i64..4, 1..4), dim_seed in any::<usize>()) {
        let dim = dim_seed % base.len();
        let operands: Vec<Vec<i64>> = sizes.iter().map(|&n| { let mut d = base.clone(); d[dim] = n; d }).collect();
        let mut out = base.clone();
        out[dim] = sizes.iter().sum();
        let mut op = OpInfo::new("concatenate", ArrayShape::new(out), operands.iter().map(|d| arr(d)).collect());
        op.attrs_mut().dimensions = Some(vec![dim as i64]);
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            let mut off = 0;
            sizes.iter().map(|&n| {
                let r = if o[dim] >= off && o[dim] < off + n { let mut x = o.to_vec(); x[dim] -= off; one(x) } else { BTreeSet::new() };
                off += n;
                r
            }).collect()
        })?;
    }

    #[test]
    fn dot(batch in prop::collection::vec(1i64..3, 0..2), lfree in prop::collection::vec(1i64..3, 0..2), rfree in prop::collection::vec(1i64..3, 0..2), contr in prop::collection::vec(1i64..4, 0..3), s1 in any::<u64>(), s2 in any::<u64>()) {
        let shuffle = |n: usize, mut s: u64| -> Vec<usize> {
            let mut p: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() { s = s.wrapping_mul(6364136223846793005).wrapping_add(1); p.swap(i, (s >> 33) as usize % (i + 1)); }
            p
        };
        // Logical lists: [batch.., free.., contracting..] placed at shuffled positions.
        let place = |free: &[i64], s: u64| {
            let n = batch.len() + free.len() + contr.len();
            let pos = shuffle(n, s);
            let mut dims = vec![0; n];
            let all: Vec<i64> = batch.iter().chain(free).chain(&contr).copied().collect();
            for (i, &p) in pos.iter().enumerate() { dims[p] = all[i]; }
            (dims, pos)
        };
        let (ld, lpos) = place(&lfree, s1);
        let (rd, rpos) = place(&rfree, s2);
        let nb = batch.len();
        let dd = DotDims {
            lhs_batch: lpos[..nb].to_vec(), rhs_batch: rpos[..nb].to_vec(),
            lhs_contracting: lpos[nb + lfree.len()..].to_vec(), rhs_contracting: rpos[nb + rfree.len()..].to_vec(),
        };
        let out: Vec<i64> = batch.iter().chain(&lfree).chain(&rfree).copied().collect();
        let mut op = OpInfo::new("dot", ArrayShape::new(out), vec![arr(&ld), arr(&rd)]);
        op.attrs_mut().dot = Some(Box::new(dd));
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            let (mut l, mut r) = (BTreeSet::new(), BTreeSet::new());
            for c in indices(&contr) {
                let lv: Vec<i64> = o[..nb].iter().chain(&o[nb..nb + lfree.len()]).chain(&c).copied().collect();
                let rv: Vec<i64> = o[..nb].iter().chain(&o[nb + lfree.len()..]).chain(&c).copied().collect();
                let mut li = vec![0; ld.len()]; for (i, &p) in lpos.iter().enumerate() { li[p] = lv[i]; }
                let mut ri = vec![0; rd.len()]; for (i, &p) in rpos.iter().enumerate() { ri[p] = rv[i]; }
                l.insert(li); r.insert(ri);
            }
            vec![l, r]
        })?;
    }

    #[test]
    fn pad(spec in prop::collection::vec((1i64..4, -2i64..3, -2i64..3, 0i64..3), 1..3)) {
        let input: Vec<i64> = spec.iter().map(|s| s.0).collect();
        let pads: Vec<PadDim> = spec.iter().map(|&(_, low, high, interior)| PadDim { low, high, interior }).collect();
        let out: Vec<i64> = spec.iter().map(|&(n, low, high, int)| low + high + n + (n - 1) * int).collect();
        prop_assume!(out.iter().all(|&n| n > 0));
        let mut op = OpInfo::new("pad", ArrayShape::new(out), vec![arr(&input), arr(&[])]);
        op.attrs_mut().padding = Some(pads.clone());
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            let mut x = vec![];
            let mut hit = true;
            for (k, p) in pads.iter().enumerate() {
                let rel = o[k] - p.low;
                if rel < 0 || rel % (p.interior + 1) != 0 || rel / (p.interior + 1) >= input[k] { hit = false; }
                x.push(rel.div_euclid(p.interior + 1));
            }
            vec![if hit { one(x) } else { BTreeSet::new() }, one(vec![])]
        })?;
    }

    #[test]
    fn reduce(dims in dims_strategy(4), mask in any::<u8>(), variadic in any::<bool>()) {
        let red: Vec<usize> = (0..dims.len()).filter(|k| mask & (1 << k) != 0).collect();
        let out: Vec<i64> = (0..dims.len()).filter(|k| !red.contains(k)).map(|k| dims[k]).collect();
        let n = if variadic { 2 } else { 1 };
        let mut operands: Vec<Shape> = (0..n).map(|_| arr(&dims)).collect();
        operands.extend((0..n).map(|_| arr(&[])));
        let shape = if variadic { Shape::Tuple(vec![arr(&out), arr(&out)]) } else { arr(&out) };
        let mut op = OpInfo::new("reduce", ArrayShape::new(vec![]), operands);
        op.shape = shape.into();
        op.attrs_mut().dimensions = Some(red.iter().map(|&x| x as i64).collect());
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            let rdims: Vec<i64> = red.iter().map(|&k| dims[k]).collect();
            let mut set = BTreeSet::new();
            for r in indices(&rdims) {
                let (mut oi, mut ri) = (o.iter(), r.iter());
                set.insert((0..dims.len()).map(|k| if red.contains(&k) { *ri.next().unwrap() } else { *oi.next().unwrap() }).collect());
            }
            let mut v: Reads = (0..n).map(|_| set.clone()).collect();
            v.extend((0..n).map(|_| one(vec![])));
            v
        })?;
    }

    #[test]
    fn reduce_window(spec in prop::collection::vec((1i64..5, 1i64..4, 1i64..3, 0i64..2, 0i64..2, 1i64..3, 1i64..3), 1..3)) {
        let input: Vec<i64> = spec.iter().map(|s| s.0).collect();
        let win: Vec<WindowDim> = spec.iter().map(|&(_, size, stride, lo, hi, bd, wd)| WindowDim { size, stride, pad_low: lo, pad_high: hi, base_dilation: bd, window_dilation: wd, reversal: false }).collect();
        let out: Vec<i64> = spec.iter().zip(&win).map(|(s, w)| {
            let padded = (s.0 - 1) * w.base_dilation + 1 + w.pad_low + w.pad_high;
            let eff = (w.size - 1) * w.window_dilation + 1;
            if padded < eff { 0 } else { (padded - eff) / w.stride + 1 }
        }).collect();
        prop_assume!(out.iter().all(|&n| n > 0));
        let mut op = OpInfo::new("reduce-window", ArrayShape::new(out), vec![arr(&input), arr(&[])]);
        op.attrs_mut().window = Some(win.clone());
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            let sizes: Vec<i64> = win.iter().map(|w| w.size).collect();
            let mut set = BTreeSet::new();
            for t in indices(&sizes) {
                let mut x = vec![];
                let mut ok = true;
                for (k, w) in win.iter().enumerate() {
                    let rel = o[k] * w.stride + t[k] * w.window_dilation - w.pad_low;
                    if rel < 0 || rel % w.base_dilation != 0 || rel / w.base_dilation >= input[k] { ok = false; }
                    x.push(rel.div_euclid(w.base_dilation));
                }
                if ok { set.insert(x); }
            }
            vec![set, one(vec![])]
        })?;
    }

    #[test]
    fn convolution(b in 1i64..3, g in 1i64..3, cin in 1i64..3, cout in 1i64..3, spatial in prop::collection::vec((2i64..5, 1i64..3, 1i64..3, 0i64..2, 1i64..3, 1i64..3, any::<bool>()), 1..3)) {
        // b01f input, 01io kernel, b01f output, feature groups g.
        let ns = spatial.len();
        let win: Vec<WindowDim> = spatial.iter().map(|&(_, size, stride, pad, ld, rd, rev)| WindowDim { size, stride, pad_low: pad, pad_high: pad, base_dilation: ld, window_dilation: rd, reversal: rev }).collect();
        let mut input = vec![b]; input.extend(spatial.iter().map(|s| s.0)); input.push(cin * g);
        let mut kernel: Vec<i64> = win.iter().map(|w| w.size).collect(); kernel.push(cin); kernel.push(cout * g);
        let osp: Vec<i64> = spatial.iter().zip(&win).map(|(s, w)| {
            let padded = (s.0 - 1) * w.base_dilation + 1 + 2 * w.pad_low;
            let eff = (w.size - 1) * w.window_dilation + 1;
            if padded < eff { 0 } else { (padded - eff) / w.stride + 1 }
        }).collect();
        prop_assume!(osp.iter().all(|&n| n > 0));
        let mut out = vec![b]; out.extend(&osp); out.push(cout * g);
        let mut op = OpInfo::new("convolution", ArrayShape::new(out), vec![arr(&input), arr(&kernel)]);
        op.attrs_mut().window = Some(win.clone());
        op.attrs_mut().feature_group_count = Some(g);
        op.attrs_mut().conv = Some(Box::new(ConvDims {
            input_batch: 0, input_feature: ns + 1, input_spatial: (1..=ns).collect(),
            kernel_input_feature: ns, kernel_output_feature: ns + 1, kernel_spatial: (0..ns).collect(),
            output_batch: 0, output_feature: ns + 1, output_spatial: (1..=ns).collect(),
        }));
        check(&op, &[], RuntimeRule::Raw, &[1], &|o| {
            let (mut l, mut r) = (BTreeSet::new(), BTreeSet::new());
            let group = o[ns + 1] / cout;
            let sizes: Vec<i64> = win.iter().map(|w| w.size).collect();
            for t in indices(&sizes) {
                for f in 0..cin {
                    let mut x = vec![o[0]];
                    let mut ok = true;
                    for (k, w) in win.iter().enumerate() {
                        let rel = o[1 + k] * w.stride + t[k] * w.window_dilation - w.pad_low;
                        if rel < 0 || rel % w.base_dilation != 0 || rel / w.base_dilation >= input[1 + k] { ok = false; }
                        x.push(rel.div_euclid(w.base_dilation));
                    }
                    x.push(group * cin + f);
                    let mut kx: Vec<i64> = t.iter().zip(&win).map(|(&ti, w)| if w.reversal { w.size - 1 - ti } else { ti }).collect();
                    kx.push(f); kx.push(o[ns + 1]);
                    r.insert(kx);
                    if ok { l.insert(x); }
                }
            }
            vec![l, r]
        })?;
    }

    #[test]
    fn gather(rows in 1i64..4, operand in prop::collection::vec(1i64..5, 1..4), seed in any::<u64>(), values in prop::collection::vec(-2i64..6, 12)) {
        // General gather: random start_index_map subset, collapsed dims among size-1 slices.
        let rank = operand.len();
        let mut s = seed;
        let mut next = || { s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); s >> 33 };
        let slice_sizes: Vec<i64> = operand.iter().map(|&n| 1 + (next() as i64 % n)).collect();
        let start_index_map: Vec<usize> = (0..rank).filter(|_| next() % 2 == 0).collect();
        prop_assume!(!start_index_map.is_empty());
        let collapsed: Vec<usize> = (0..rank).filter(|&j| slice_sizes[j] == 1 && next() % 2 == 0).collect();
        let window: Vec<usize> = (0..rank).filter(|j| !collapsed.contains(j)).collect();
        let nv = start_index_map.len() as i64;
        let indices_dims = vec![rows, nv];
        // Output: [rows, window slice sizes...]; offset dims 1..
        let mut out = vec![rows];
        out.extend(window.iter().map(|&j| slice_sizes[j]));
        let g = GatherDims {
            offset_dims: (1..=window.len()).collect(), collapsed_slice_dims: collapsed.clone(),
            start_index_map: start_index_map.clone(), operand_batching_dims: vec![], start_indices_batching_dims: vec![],
            index_vector_dim: 1, slice_sizes: slice_sizes.clone(),
        };
        let mut op = OpInfo::new("gather", ArrayShape::new(out), vec![arr(&operand), arr(&indices_dims)]);
        op.attrs_mut().gather = Some(Box::new(g));
        let idx = Tensor { dims: indices_dims.clone(), values: values[..(rows * nv) as usize].to_vec() };
        let tensors = vec![None, Some(idx.clone())];
        check(&op, &tensors, RuntimeRule::Clamp, &[0], &|o| {
            let mut x = vec![0; rank];
            for j in 0..rank {
                let start = match start_index_map.iter().position(|&m| m == j) {
                    Some(p) => idx.at(&[o[0], p as i64]).unwrap().clamp(0, operand[j] - slice_sizes[j]),
                    None => 0,
                };
                let off = window.iter().position(|&w| w == j).map(|p| o[1 + p]).unwrap_or(0);
                x[j] = start + off;
            }
            vec![one(x), (0..nv).map(|p| vec![o[0], p]).collect()]
        })?;
    }

    #[test]
    fn scatter(rows in 1i64..4, operand in prop::collection::vec(1i64..5, 1..3), seed in any::<u64>(), values in prop::collection::vec(-1i64..5, 8)) {
        let rank = operand.len();
        let mut s = seed;
        let mut next = || { s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); s >> 33 };
        let window_sizes: Vec<i64> = operand.iter().map(|&n| 1 + (next() as i64 % n)).collect();
        let scattered: Vec<usize> = (0..rank).filter(|_| next() % 2 == 0).collect();
        prop_assume!(!scattered.is_empty());
        let inserted: Vec<usize> = (0..rank).filter(|&j| window_sizes[j] == 1 && next() % 2 == 0).collect();
        let window: Vec<usize> = (0..rank).filter(|j| !inserted.contains(j)).collect();
        let nv = scattered.len() as i64;
        let indices_dims = vec![rows, nv];
        let mut upd = vec![rows];
        upd.extend(window.iter().map(|&j| window_sizes[j]));
        let sd = ScatterDims {
            update_window_dims: (1..=window.len()).collect(), inserted_window_dims: inserted.clone(),
            scatter_dims_to_operand_dims: scattered.clone(), input_batching_dims: vec![], scatter_indices_batching_dims: vec![], index_vector_dim: 1,
        };
        let mut op = OpInfo::new("scatter", ArrayShape::new(operand.clone()), vec![arr(&operand), arr(&indices_dims), arr(&upd)]);
        op.attrs_mut().scatter = Some(Box::new(sd));
        let idx = Tensor { dims: indices_dims.clone(), values: values[..(rows * nv) as usize].to_vec() };
        let tensors = vec![None, Some(idx.clone()), None];
        check(&op, &tensors, RuntimeRule::Raw, &[1], &|o| {
            let mut ups = BTreeSet::new();
            for u in indices(&upd) {
                let mut target = vec![0; rank];
                let mut ok = true;
                for j in 0..rank {
                    let start = scattered.iter().position(|&m| m == j).map(|p| idx.at(&[u[0], p as i64]).unwrap()).unwrap_or(0);
                    let wsize = window.iter().position(|&w| w == j).map(|_| window_sizes[j]).unwrap_or(1);
                    if start < 0 || start + wsize > operand[j] { ok = false; }
                    target[j] = start + window.iter().position(|&w| w == j).map(|p| u[1 + p]).unwrap_or(0);
                }
                if ok && target == o { ups.insert(u); }
            }
            vec![one(o.to_vec()), indices(&indices_dims).into_iter().collect(), ups]
        })?;
    }

    #[test]
    fn sort(dims in dims_strategy(3), dim_seed in any::<usize>(), two in any::<bool>()) {
        let dim = dim_seed % dims.len();
        let n = if two { 2 } else { 1 };
        let mut op = OpInfo::new("sort", ArrayShape::new(dims.clone()), (0..n).map(|_| arr(&dims)).collect());
        if two { op.shape = Shape::Tuple(vec![arr(&dims), arr(&dims)]).into(); }
        op.attrs_mut().dimensions = Some(vec![dim as i64]);
        check(&op, &[], RuntimeRule::Raw, &[], &|o| {
            let row: BTreeSet<Vec<i64>> = (0..dims[dim]).map(|i| { let mut x = o.to_vec(); x[dim] = i; x }).collect();
            (0..n).map(|_| row.clone()).collect()
        })?;
    }

    #[test]
    fn select_and_scatter(spec in prop::collection::vec((1i64..4, 1i64..3, 1i64..3, 0i64..2), 1..3)) {
        // Output/operand extents from the source extents and the window.
        let win: Vec<WindowDim> = spec.iter().map(|&(_, size, stride, pad)| WindowDim { size, stride, pad_low: pad, pad_high: pad, ..WindowDim::default() }).collect();
        let src: Vec<i64> = spec.iter().map(|s| s.0).collect();
        let operand: Vec<i64> = spec.iter().zip(&win).map(|(s, w)| ((s.0 - 1) * w.stride + w.size - 2 * w.pad_low).max(1)).collect();
        let mut op = OpInfo::new("select-and-scatter", ArrayShape::new(operand.clone()), vec![arr(&operand), arr(&src), arr(&[])]);
        op.attrs_mut().window = Some(win.clone());
        check(&op, &[], RuntimeRule::Raw, &[0], &|x| {
            let sizes: Vec<i64> = win.iter().map(|w| w.size).collect();
            let (mut ops_read, mut src_read) = (BTreeSet::new(), BTreeSet::new());
            for w in indices(&src) {
                let covers = indices(&sizes).into_iter().any(|t| (0..x.len()).all(|k| w[k] * win[k].stride + t[k] - win[k].pad_low == x[k]));
                if !covers { continue; }
                src_read.insert(w.clone());
                for u in indices(&sizes) {
                    let e: Vec<i64> = (0..x.len()).map(|k| w[k] * win[k].stride + u[k] - win[k].pad_low).collect();
                    if in_bounds(&e, &operand) { ops_read.insert(e); }
                }
            }
            vec![ops_read, src_read, one(vec![])]
        })?;
    }
}

#[test]
fn all_gather_reads_the_replica_holding_the_element() {
    let mut op = OpInfo::new(
        "all-gather",
        ArrayShape::new(vec![2, 6]),
        vec![arr(&[2, 3])],
    );
    op.attrs_mut().dimensions = Some(vec![1]);
    let o2i = ops::output_to_input(&op, 0);
    let m = &o2i.entries[0].maps[0];
    let replica = m.replica_id.as_ref().expect("replica id");
    for o in indices(&[2, 6]) {
        assert_eq!(
            m.map.evaluate_at(&o, &[], &[]).unwrap(),
            vec![o[0], o[1] % 3]
        );
        assert_eq!(replica.evaluate_at(&o, &[], &[]).unwrap(), vec![o[1] / 3]);
    }
}

#[test]
fn ops_without_defined_indexing_are_unknown_with_a_reason() {
    let op = OpInfo::new("custom-call", ArrayShape::new(vec![4]), vec![arr(&[4])]);
    let o2i = ops::output_to_input(&op, 0);
    assert_eq!(
        o2i.entries[0].unknown,
        Some(Unknown::no_indexing("custom-call has opaque semantics"))
    );
    let op = OpInfo::new(
        "triangular-solve",
        ArrayShape::new(vec![4, 3]),
        vec![arr(&[4, 4]), arr(&[4, 3])],
    );
    assert!(ops::output_to_input(&op, 0)
        .entries
        .iter()
        .all(|e| matches!(e.unknown, Some(Unknown::NoIndexing(_)))));
    // An instruction that breaks its op's rules is told apart from an op without
    // indexing: a shape diagnostic says more about it.
    let mut op = OpInfo::new("broadcast", ArrayShape::new(vec![4, 3]), vec![arr(&[4])]);
    op.attrs_mut().dimensions = Some(vec![0, 1]);
    assert!(matches!(
        ops::output_to_input(&op, 0).entries[0].unknown,
        Some(Unknown::Malformed(_))
    ));
}
