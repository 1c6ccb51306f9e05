#![allow(clippy::needless_range_loop, clippy::type_complexity)]
//! Differential test of fusion composition: random small fusions built from
//! supported ops; a brute-force dataflow (plain loops: which parameter elements
//! each output element transitively reads, op by op) must equal the union of the
//! composed, simplified maps per parameter. Also the seed's fusion examples.

use crate::analysis_support;

use std::collections::{BTreeSet, HashMap};

use analysis_support::{check_round_trip, entry_reads, in_bounds, indices, linear, RuntimeRule};
use hlo_lsp::analysis::fusion::{
    fused_output_to_input, grouped_from_every_output, grouped_from_every_output_within,
};
use hlo_lsp::analysis::op::*;
use hlo_lsp::analysis::{ArrayShape, Computation, Module, Node, OpInfo, Shape};
use proptest::prelude::*;

fn arr(d: &[i64]) -> Shape {
    Shape::Array(ArrayShape::new(d.to_vec()))
}

/// Operand elements output element `o` of `op` reads, from the op's semantics.
fn op_reads(op: &OpInfo, o: &[i64]) -> Vec<BTreeSet<Vec<i64>>> {
    let dims = |k: usize| op.operands[k].as_array().unwrap().dims.clone();
    let one = |x: Vec<i64>| BTreeSet::from([x]);
    let attr_dims = || -> Vec<usize> {
        op.attrs
            .dimensions
            .clone()
            .unwrap()
            .iter()
            .map(|&d| d as usize)
            .collect()
    };
    match op.opcode.as_str() {
        "negate" | "exponential" => vec![one(o.to_vec())],
        "add" | "multiply" => vec![one(o.to_vec()), one(o.to_vec())],
        "transpose" => {
            let perm = attr_dims();
            let mut x = vec![0; o.len()];
            for (i, &p) in perm.iter().enumerate() {
                x[p] = o[i];
            }
            vec![one(x)]
        }
        "reverse" => {
            let rev = attr_dims();
            let n = dims(0);
            vec![one((0..o.len())
                .map(|k| {
                    if rev.contains(&k) {
                        n[k] - 1 - o[k]
                    } else {
                        o[k]
                    }
                })
                .collect())]
        }
        "broadcast" => vec![one(attr_dims().iter().map(|&k| o[k]).collect())],
        "reduce" => {
            let red = attr_dims();
            let n = dims(0);
            let rd: Vec<i64> = red.iter().map(|&k| n[k]).collect();
            let mut set = BTreeSet::new();
            for r in indices(&rd) {
                let (mut oi, mut ri) = (o.iter(), r.iter());
                set.insert(
                    (0..n.len())
                        .map(|k| {
                            if red.contains(&k) {
                                *ri.next().unwrap()
                            } else {
                                *oi.next().unwrap()
                            }
                        })
                        .collect(),
                );
            }
            vec![set, one(vec![])]
        }
        "reshape" => {
            let out = op.output(0).unwrap().dims.clone();
            let n = dims(0);
            let mut rest = linear(o, &out) as i64;
            let mut x = vec![0; n.len()];
            for k in (0..n.len()).rev() {
                x[k] = rest % n[k];
                rest /= n[k];
            }
            vec![one(x)]
        }
        "slice" => vec![one(op
            .attrs
            .slice
            .as_ref()
            .unwrap()
            .iter()
            .zip(o)
            .map(|(s, &i)| s.start + i * s.stride)
            .collect())],
        "pad" => {
            let n = dims(0);
            let mut x = vec![];
            let mut hit = true;
            for (k, p) in op.attrs.padding.as_ref().unwrap().iter().enumerate() {
                let rel = o[k] - p.low;
                if rel < 0 || rel % (p.interior + 1) != 0 || rel / (p.interior + 1) >= n[k] {
                    hit = false;
                }
                x.push(rel.div_euclid(p.interior + 1));
            }
            vec![if hit { one(x) } else { BTreeSet::new() }, one(vec![])]
        }
        "concatenate" => {
            let dim = attr_dims()[0];
            let mut off = 0;
            (0..op.operands.len())
                .map(|k| {
                    let n = dims(k)[dim];
                    let r = if o[dim] >= off && o[dim] < off + n {
                        let mut x = o.to_vec();
                        x[dim] -= off;
                        one(x)
                    } else {
                        BTreeSet::new()
                    };
                    off += n;
                    r
                })
                .collect()
        }
        other => panic!("no reference for {other}"),
    }
}

/// Parameter elements (by parameter number) that output element `o` of `node` reads.
fn dataflow(
    c: &Computation,
    node: usize,
    o: &[i64],
    memo: &mut HashMap<(usize, Vec<i64>), BTreeSet<(usize, Vec<i64>)>>,
) -> BTreeSet<(usize, Vec<i64>)> {
    if let Some(r) = memo.get(&(node, o.to_vec())) {
        return r.clone();
    }
    let n = &c.nodes[node];
    let mut out = BTreeSet::new();
    if let Some(p) = n.parameter_number {
        out.insert((p, o.to_vec()));
    } else {
        for (k, set) in op_reads(&n.op, o).into_iter().enumerate() {
            for x in set {
                out.extend(dataflow(c, n.operands[k], &x, memo));
            }
        }
    }
    memo.insert((node, o.to_vec()), out.clone());
    out
}

/// Checks the composed maps of `c` (root = output) against [`dataflow`].
fn check(c: Computation, params: usize) -> Result<(), TestCaseError> {
    let module = Module::new(vec![c], 0);
    let c = module.computation(0);
    let indexing = fused_output_to_input(&module, 0, 0, params);
    let out = c.nodes[c.root].op.output(0).unwrap().dims.clone();
    let mut memo = HashMap::new();
    for o in indices(&out) {
        let expected = dataflow(c, c.root, &o, &mut memo);
        for p in 0..params {
            let pnode = c.parameter(p).unwrap();
            let extents = c.nodes[pnode].op.output(0).unwrap().dims.clone();
            let got = entry_reads(&indexing.entries[p], &o, &extents, &[], RuntimeRule::Raw);
            let want: BTreeSet<Vec<i64>> = expected
                .iter()
                .filter(|(q, _)| *q == p)
                .map(|(_, x)| x.clone())
                .collect();
            prop_assert_eq!(
                &got,
                &want,
                "parameter {} at output {:?}\nmaps: {:#?}",
                p,
                o,
                indexing.entries[p]
            );
        }
    }
    Ok(())
}

/// Every element of every instruction that output element `o` of `node` reads
/// (itself included), as `(instruction, index)`.
fn reach(
    c: &Computation,
    node: usize,
    o: &[i64],
    memo: &mut HashMap<(usize, Vec<i64>), BTreeSet<(usize, Vec<i64>)>>,
) -> BTreeSet<(usize, Vec<i64>)> {
    if let Some(r) = memo.get(&(node, o.to_vec())) {
        return r.clone();
    }
    let n = &c.nodes[node];
    let mut out = BTreeSet::from([(node, o.to_vec())]);
    if n.parameter_number.is_none() {
        for (k, set) in op_reads(&n.op, o).into_iter().enumerate() {
            for x in set {
                out.extend(reach(c, n.operands[k], &x, memo));
            }
        }
    }
    memo.insert((node, o.to_vec()), out.clone());
    out
}

/// A multi-output fusion: the root tuples `outputs`. The maps from every output to
/// every instruction ([`grouped_from_every_output`], what hovers and inlay hints
/// show) must give exactly the elements [`reach`] finds, and an instruction that
/// no path from an output reads must not be reported as read by it.
fn check_every_output(mut nodes: Vec<Node>, outputs: &[usize]) -> Result<(), TestCaseError> {
    let shapes: Vec<Shape> = outputs
        .iter()
        .map(|&o| Shape::clone(&nodes[o].op.shape))
        .collect();
    let tuple = OpInfo::new("tuple", Shape::Tuple(shapes.clone()), shapes);
    nodes.push(Node::new("root", tuple, outputs.to_vec()));
    let root = nodes.len() - 1;
    let module = Module::new(
        vec![Computation {
            name: "f".into(),
            nodes,
            root,
        }],
        0,
    );
    let c = module.computation(0);
    let every = grouped_from_every_output(&module, 0);
    prop_assert_eq!(every.len(), outputs.len());
    // Made for one instruction alone (as a hover does), its maps are the same.
    for i in 0..c.nodes.len() {
        let alone = grouped_from_every_output_within(&module, 0, &c.users_closure(&[i]));
        for k in 0..outputs.len() {
            let (got, want) = (format!("{:?}", alone[k][i]), format!("{:?}", every[k][i]));
            prop_assert_eq!(got, want, "output {} instruction {} alone", k, i);
        }
    }
    for (k, &start) in outputs.iter().enumerate() {
        let out_dims = c.nodes[start].op.output(0).unwrap().dims.clone();
        let mut memo = HashMap::new();
        let mut read_somewhere = vec![false; c.nodes.len()];
        for o in indices(&out_dims) {
            let expected = reach(c, start, &o, &mut memo);
            for (i, node) in c.nodes.iter().enumerate().filter(|&(i, _)| i != root) {
                let extents = node.op.output(0).unwrap().dims.clone();
                let want: BTreeSet<Vec<i64>> = expected
                    .iter()
                    .filter(|(j, _)| *j == i)
                    .map(|(_, x)| x.clone())
                    .collect();
                read_somewhere[i] |= !want.is_empty();
                let got = entry_reads(&every[k][i].to_entry(), &o, &extents, &[], RuntimeRule::Raw);
                prop_assert_eq!(&got, &want, "output {} instruction {} at {:?}", k, i, o);
            }
        }
        for (i, reached) in every[k].iter().enumerate() {
            for (_, m) in &reached.maps {
                let at = format!("output {k} instruction {i}");
                check_round_trip(&m.map, &at).map_err(TestCaseError::fail)?;
            }
        }
        for i in (0..c.nodes.len()).filter(|&i| i != root) {
            if !read_somewhere[i] {
                prop_assert!(
                    !every[k][i].is_read(),
                    "output {} claims to read instruction {}: {:?}",
                    k,
                    i,
                    every[k][i]
                );
            }
        }
    }
    Ok(())
}

/// A random fusion: each step applies one op to earlier values.
#[derive(Clone, Debug)]
struct Builder {
    nodes: Vec<Node>,
    params: usize,
    rng: u64,
}

impl Builder {
    fn next(&mut self, n: u64) -> u64 {
        self.rng = self
            .rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.rng >> 33) % n.max(1)
    }
    fn dims(&self, v: usize) -> Vec<i64> {
        self.nodes[v].op.output(0).unwrap().dims.clone()
    }
    fn push(&mut self, op: OpInfo, operands: Vec<usize>) -> usize {
        let name = format!("n{}", self.nodes.len());
        self.nodes.push(Node::new(name, op, operands));
        self.nodes.len() - 1
    }
    fn param(&mut self, dims: Vec<i64>) -> usize {
        let v = self.push(
            OpInfo::new("parameter", ArrayShape::new(dims), vec![]),
            vec![],
        );
        self.nodes[v].parameter_number = Some(self.params);
        self.params += 1;
        v
    }
    fn step(&mut self) {
        let v = self.next(self.nodes.len() as u64) as usize;
        let d = self.dims(v);
        let rank = d.len();
        let operand = arr(&d);
        match self.next(10) {
            0 => {
                self.push(
                    OpInfo::new("negate", ArrayShape::new(d.clone()), vec![operand]),
                    vec![v],
                );
            }
            1 => {
                // add with another value of the same shape (or itself)
                let pick = self.next(3) as usize;
                let w = (0..self.nodes.len())
                    .filter(|&w| self.dims(w) == d)
                    .nth(pick)
                    .unwrap_or(v);
                self.push(
                    OpInfo::new(
                        "add",
                        ArrayShape::new(d.clone()),
                        vec![operand.clone(), operand],
                    ),
                    vec![v, w],
                );
            }
            2 if rank > 1 => {
                let mut perm: Vec<usize> = (0..rank).collect();
                for i in (1..rank).rev() {
                    let j = self.next(i as u64 + 1) as usize;
                    perm.swap(i, j);
                }
                let out: Vec<i64> = perm.iter().map(|&p| d[p]).collect();
                let mut op = OpInfo::new("transpose", ArrayShape::new(out), vec![operand]);
                op.attrs_mut().dimensions = Some(perm.iter().map(|&p| p as i64).collect());
                self.push(op, vec![v]);
            }
            3 => {
                let rev: Vec<i64> = (0..rank)
                    .filter(|_| self.next(2) == 0)
                    .map(|k| k as i64)
                    .collect();
                let mut op = OpInfo::new("reverse", ArrayShape::new(d.clone()), vec![operand]);
                op.attrs_mut().dimensions = Some(rev);
                self.push(op, vec![v]);
            }
            4 if rank < 3 => {
                let pos = self.next(rank as u64 + 1) as usize;
                let mut out = d.clone();
                out.insert(pos, 1 + self.next(3) as i64);
                let mut op = OpInfo::new("broadcast", ArrayShape::new(out), vec![operand]);
                op.attrs_mut().dimensions = Some(
                    (0..rank)
                        .map(|k| if k < pos { k as i64 } else { k as i64 + 1 })
                        .collect(),
                );
                self.push(op, vec![v]);
            }
            5 if rank > 0 => {
                let r = self.next(rank as u64) as usize;
                let out: Vec<i64> = (0..rank).filter(|&k| k != r).map(|k| d[k]).collect();
                let init = self.param(vec![]);
                let mut op = OpInfo::new("reduce", ArrayShape::new(out), vec![operand, arr(&[])]);
                op.attrs_mut().dimensions = Some(vec![r as i64]);
                self.push(op, vec![v, init]);
            }
            6 => {
                // collapse everything, or split a 1-D value into two factors
                let total: i64 = d.iter().product();
                let out = if rank == 1 && total % 2 == 0 && total > 2 {
                    vec![2, total / 2]
                } else {
                    vec![total]
                };
                self.push(
                    OpInfo::new("reshape", ArrayShape::new(out), vec![operand]),
                    vec![v],
                );
            }
            7 => {
                let sd: Vec<SliceDim> = d
                    .iter()
                    .map(|&n| {
                        let start = self.next(n as u64) as i64;
                        let stride = 1 + self.next(2) as i64;
                        SliceDim {
                            start,
                            limit: n,
                            stride,
                        }
                    })
                    .collect();
                let out: Vec<i64> = sd
                    .iter()
                    .map(|s| (s.limit - s.start + s.stride - 1) / s.stride)
                    .collect();
                let mut op = OpInfo::new("slice", ArrayShape::new(out), vec![operand]);
                op.attrs_mut().slice = Some(sd);
                self.push(op, vec![v]);
            }
            8 => {
                let pads: Vec<PadDim> = d
                    .iter()
                    .map(|_| PadDim {
                        low: self.next(4) as i64 - 1,
                        high: self.next(3) as i64 - 1,
                        interior: self.next(2) as i64,
                    })
                    .collect();
                let out: Vec<i64> = d
                    .iter()
                    .zip(&pads)
                    .map(|(&n, p)| n + p.low + p.high + (n - 1) * p.interior)
                    .collect();
                if out.iter().any(|&n| n <= 0) {
                    return;
                }
                let value = self.param(vec![]);
                let mut op = OpInfo::new("pad", ArrayShape::new(out), vec![operand, arr(&[])]);
                op.attrs_mut().padding = Some(pads);
                self.push(op, vec![v, value]);
            }
            9 if rank > 0 => {
                let dim = self.next(rank as u64) as usize;
                let mut out = d.clone();
                out[dim] *= 2;
                let mut op = OpInfo::new(
                    "concatenate",
                    ArrayShape::new(out),
                    vec![operand.clone(), operand],
                );
                op.attrs_mut().dimensions = Some(vec![dim as i64]);
                self.push(op, vec![v, v]);
            }
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_fusions_compose_exactly(seed in any::<u64>(), steps in 1usize..10, d0 in prop::collection::vec(1i64..4, 1..4)) {
        let mut b = Builder { nodes: vec![], params: 0, rng: seed };
        b.param(d0);
        for _ in 0..steps { b.step(); }
        let root = b.nodes.len() - 1;
        let params = b.params;
        check(Computation { name: "f".into(), nodes: b.nodes, root }, params)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_output_of_random_multi_output_fusions_reaches_exactly(
        seed in any::<u64>(),
        steps in 2usize..10,
        d0 in prop::collection::vec(1i64..4, 1..4),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 2..4),
    ) {
        let mut b = Builder { nodes: vec![], params: 0, rng: seed };
        b.param(d0);
        for _ in 0..steps { b.step(); }
        // Outputs: the last value (so that most instructions feed something) and
        // random others; an instruction may feed only some outputs, or none.
        let n = b.nodes.len();
        let mut outputs: Vec<usize> = vec![n - 1];
        outputs.extend(picks.iter().map(|p| p.index(n)));
        check_every_output(b.nodes, &outputs)?;
    }
}

/// A case the property found: one output reads instruction 0 through constraints
/// that no point satisfies (`(2*d0+2) mod 3` odd, in [0, 1], and a `floordiv` of the
/// same sum even), which the simplifier cannot combine: it must not claim a read.
#[test]
fn a_map_whose_constraints_no_point_meets_reads_nothing() {
    let mut b = Builder {
        nodes: vec![],
        params: 0,
        rng: 17796624138578332843,
    };
    b.param(vec![3, 1, 2]);
    for _ in 0..4 {
        b.step();
    }
    let n = b.nodes.len();
    check_every_output(b.nodes, &[n - 1, 0, 0]).expect("every output reaches exactly");
}

fn transpose(name: &str, out: &[i64], perm: &[i64], operand: usize, in_dims: &[i64]) -> Node {
    let mut op = OpInfo::new(
        "transpose",
        ArrayShape::new(out.to_vec()),
        vec![arr(in_dims)],
    );
    op.attrs_mut().dimensions = Some(perm.to_vec());
    Node::new(name, op, vec![operand])
}

#[test]
fn seed_three_transposes_give_one_map() {
    // f { p0 = [20,10,50]; t1 = transpose{1,0,2}; e; t2 = transpose{0,2,1}; r1 = transpose{2,1,0}; e; r2 = transpose{1,0,2}; add }
    let mut p0 = Node::new(
        "p0",
        OpInfo::new("parameter", ArrayShape::new(vec![4, 2, 5]), vec![]),
        vec![],
    );
    p0.parameter_number = Some(0);
    let nodes = vec![
        p0,
        transpose("lt1", &[2, 4, 5], &[1, 0, 2], 0, &[4, 2, 5]),
        Node::new(
            "le",
            OpInfo::new(
                "exponential",
                ArrayShape::new(vec![2, 4, 5]),
                vec![arr(&[2, 4, 5])],
            ),
            vec![1],
        ),
        transpose("lt2", &[2, 5, 4], &[0, 2, 1], 2, &[2, 4, 5]),
        transpose("rt1", &[5, 2, 4], &[2, 1, 0], 0, &[4, 2, 5]),
        Node::new(
            "re",
            OpInfo::new(
                "exponential",
                ArrayShape::new(vec![5, 2, 4]),
                vec![arr(&[5, 2, 4])],
            ),
            vec![4],
        ),
        transpose("rt2", &[2, 5, 4], &[1, 0, 2], 5, &[5, 2, 4]),
        Node::new(
            "add",
            OpInfo::new(
                "add",
                ArrayShape::new(vec![2, 5, 4]),
                vec![arr(&[2, 5, 4]), arr(&[2, 5, 4])],
            ),
            vec![3, 6],
        ),
    ];
    let module = Module::new(
        vec![Computation {
            name: "f".into(),
            nodes,
            root: 7,
        }],
        0,
    );
    let indexing = fused_output_to_input(&module, 0, 0, 1);
    assert_eq!(
        indexing.entries[0].maps.len(),
        1,
        "{:#?}",
        indexing.entries[0]
    );
    let m = &indexing.entries[0].maps[0].map;
    for o in indices(&[2, 5, 4]) {
        assert_eq!(m.evaluate_at(&o, &[], &[]).unwrap(), vec![o[2], o[0], o[1]]);
    }
    assert!(in_bounds(&[0, 0, 0], &[4, 2, 5]));
}

#[test]
fn tensor_plus_its_transpose_gives_two_maps() {
    let mut p0 = Node::new(
        "p0",
        OpInfo::new("parameter", ArrayShape::new(vec![3, 3]), vec![]),
        vec![],
    );
    p0.parameter_number = Some(0);
    let nodes = vec![
        p0,
        transpose("t", &[3, 3], &[1, 0], 0, &[3, 3]),
        Node::new(
            "a",
            OpInfo::new(
                "add",
                ArrayShape::new(vec![3, 3]),
                vec![arr(&[3, 3]), arr(&[3, 3])],
            ),
            vec![0, 1],
        ),
    ];
    let module = Module::new(
        vec![Computation {
            name: "f".into(),
            nodes,
            root: 2,
        }],
        0,
    );
    let indexing = fused_output_to_input(&module, 0, 0, 1);
    assert_eq!(indexing.entries[0].maps.len(), 2);
}

/// A composition the budget cuts keeps what it finished: `add(p0, negate^3(p1))`
/// visits `add` first and reaches `p1` last, so a cut after the first steps leaves
/// `p0`'s maps complete (its only user was visited) and marks only `p1` as not
/// computed. Every cut, at any step, gives each operand its complete maps or
/// "not computed", never fewer maps.
#[test]
fn a_cut_composition_keeps_the_operands_it_finished() {
    use hlo_lsp::analysis::Unknown;
    use hlo_lsp::budget::Budget;
    let unary = |name: &str, operand: usize| {
        Node::new(
            name,
            OpInfo::new("negate", ArrayShape::new(vec![8]), vec![arr(&[8])]),
            vec![operand],
        )
    };
    let param = |name: &str, number: usize| {
        let mut p = Node::new(
            name,
            OpInfo::new("parameter", ArrayShape::new(vec![8]), vec![]),
            vec![],
        );
        p.parameter_number = Some(number);
        p
    };
    let add = Node::new(
        "add",
        OpInfo::new("add", ArrayShape::new(vec![8]), vec![arr(&[8]), arr(&[8])]),
        vec![0, 4],
    );
    let nodes = vec![
        param("p0", 0),
        param("p1", 1),
        unary("n1", 1),
        unary("n2", 2),
        unary("n3", 3),
        add,
    ];
    let module = Module::new(
        vec![Computation {
            name: "f".into(),
            nodes,
            root: 5,
        }],
        0,
    );
    let complete = fused_output_to_input(&module, 0, 0, 2);
    assert!(complete.entries.iter().all(|e| e.unknown.is_none()));
    let mut kept_p0 = false;
    for checks in 0..8 {
        let cut = Budget::after_checks(checks).run(|| fused_output_to_input(&module, 0, 0, 2));
        for (k, (entry, whole)) in cut.entries.iter().zip(&complete.entries).enumerate() {
            assert!(
                entry == whole || (entry.unknown == Some(Unknown::Stopped)),
                "{checks} checks, operand {k}: {entry:?}"
            );
        }
        kept_p0 |= cut.entries[0] == complete.entries[0] && cut.entries[1] != complete.entries[1];
    }
    assert!(
        kept_p0,
        "no cut kept p0's maps while p1's were not computed"
    );
}
