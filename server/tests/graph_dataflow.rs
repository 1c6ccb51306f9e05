//! The dataflow graph (`hlo_lsp::graph`): every edge is a real operand edge of the
//! module and every operand edge between drawn instructions is drawn, on every
//! shipped HLO file and on random modules; what is drawn lies within the radius
//! and, when the cap does not cut, everything within it is drawn; an edge's class
//! agrees with its maps and with the op that reads (a transpose-like edge's map is
//! a permutation of the output's indices); a 50,000-instruction module stays
//! within the cap; snapshots of the JSON and DOT users read.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use hlo_lsp::analysis::{self, view};
use hlo_lsp::graph::{self, build::Open, class, EdgeClass, Graph, NodeKind, Options, Scope};
use hlo_lsp::model::{self, ComputationId, InstrId, Module};
use proptest::prelude::*;

use crate::analysis_support::renamed;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data")
}

/// Every HLO file the tests ship: `*.hlo` and the dumps' `*.txt`.
fn shipped(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.to_string_lossy();
        if path.is_dir() && !name.contains("fuzz") {
            shipped(&path, out);
        } else if path.extension().is_some_and(|e| e == "hlo")
            || (name.contains("/dumps/") && name.ends_with(".txt"))
        {
            out.push(path);
        }
    }
}

/// `c3i17` -> (3, 17).
fn ids(id: &str) -> (ComputationId, InstrId) {
    let (c, i) = id[1..].split_once('i').expect("c{c}i{i}");
    (
        ComputationId(c.parse().unwrap()),
        InstrId(i.parse().unwrap()),
    )
}

/// The get-tuple-element folding, written again from the model: the producer an
/// operand reads and the tuple indices on the way.
fn folded_producer(
    m: &Module,
    c: ComputationId,
    i: InstrId,
    k: usize,
) -> Option<(InstrId, Vec<usize>)> {
    let comp = m.computation(c);
    let mut at = comp.instruction(i).operands.get(k)?.target?;
    let mut path = vec![];
    for _ in 0..comp.instructions.len() + 1 {
        let p = comp.instruction(at);
        match (p.opcode.name(), p.operands.first().and_then(|o| o.target)) {
            ("get-tuple-element", Some(t)) => {
                path.insert(0, p.attrs().tuple_index.unwrap_or(0) as usize);
                at = t;
            }
            _ => return Some((at, path)),
        }
    }
    None
}

/// The instruction members of a graph (not stubs, not the context group).
fn members(g: &Graph) -> HashSet<(ComputationId, InstrId)> {
    g.nodes
        .iter()
        .filter(|n| !matches!(n.kind, NodeKind::More { .. }))
        .filter(|n| Some(&n.id) != g.context.as_ref())
        .map(|n| ids(&n.id))
        .collect()
}

/// Every edge is a real operand edge; every operand edge between members is an edge.
fn check_edges(m: &Module, g: &Graph, what: &str) {
    let set = members(g);
    let mut drawn = HashSet::new();
    for e in &g.edges {
        let (pc, p) = ids(&e.from);
        let (cc, c) = ids(&e.to);
        assert_eq!(pc, cc, "{what}: edge across computations {e:?}");
        assert!(
            set.contains(&(pc, p)) && set.contains(&(cc, c)),
            "{what}: edge to a non-member {e:?}"
        );
        let real = folded_producer(m, cc, c, e.operand_index);
        assert_eq!(
            real,
            Some((p, e.tuple_index.clone())),
            "{what}: not an operand edge {e:?}"
        );
        assert!(
            drawn.insert((e.to.clone(), e.operand_index)),
            "{what}: operand drawn twice {e:?}"
        );
    }
    for &(c, i) in &set {
        for k in 0..m.computation(c).instruction(i).operands.len() {
            if let Some((p, _)) = folded_producer(m, c, i, k) {
                if set.contains(&(c, p)) {
                    let to = graph::build::id_of(c, i);
                    assert!(
                        drawn.contains(&(to.clone(), k)),
                        "{what}: missing edge into {to} operand {k}"
                    );
                }
            }
        }
    }
}

/// Hops from `start` over operands and users, get-tuple-elements folded.
fn distances(m: &Module, c: ComputationId, start: InstrId) -> HashMap<InstrId, usize> {
    let comp = m.computation(c);
    let is_gte = |i: InstrId| {
        let x = comp.instruction(i);
        x.opcode.name() == "get-tuple-element"
            && x.operands.first().and_then(|o| o.target).is_some()
    };
    let mut neighbours: HashMap<InstrId, HashSet<InstrId>> = HashMap::new();
    for x in &comp.instructions {
        if is_gte(x.id) {
            continue;
        }
        for k in 0..x.operands.len() {
            if let Some((p, _)) = folded_producer(m, c, x.id, k) {
                neighbours.entry(x.id).or_default().insert(p);
                neighbours.entry(p).or_default().insert(x.id);
            }
        }
    }
    let start = if is_gte(start) {
        folded_producer(m, c, start, 0).unwrap().0
    } else {
        start
    };
    let mut dist = HashMap::from([(start, 0)]);
    let mut queue = VecDeque::from([start]);
    while let Some(at) = queue.pop_front() {
        for &n in neighbours.get(&at).into_iter().flatten() {
            if !dist.contains_key(&n) {
                dist.insert(n, dist[&at] + 1);
                queue.push_back(n);
            }
        }
    }
    dist
}

/// The home computation's members lie within the radius; all of it when not capped.
fn check_radius(
    m: &Module,
    g: &Graph,
    c: ComputationId,
    start: InstrId,
    radius: usize,
    cap: usize,
    what: &str,
) {
    let dist = distances(m, c, start);
    let home: HashSet<InstrId> = members(g)
        .into_iter()
        .filter(|(mc, _)| *mc == c)
        .map(|(_, i)| i)
        .collect();
    for i in &home {
        assert!(
            dist.get(i).is_some_and(|&d| d <= radius),
            "{what}: {i:?} beyond radius {radius}"
        );
    }
    let within = dist.values().filter(|&&d| d <= radius).count();
    if members(g).len() < cap / 2 {
        assert_eq!(
            home.len(),
            within,
            "{what}: an instruction within the radius is missing"
        );
    }
}

fn options(cap: usize) -> Options {
    Options {
        max_nodes: cap,
        open: Open::Focus,
        device: None,
        ..Options::default()
    }
}

#[test]
fn every_edge_is_an_operand_edge_on_every_shipped_file() {
    let mut files = vec![];
    shipped(&data(), &mut files);
    assert!(files.len() > 40, "found {} files", files.len());
    let mut graphs = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = model::parse_hlo(&text);
        for m in &file.modules {
            let v = view::borrowed(m);
            // The 1.7 MB transformer: every 25th computation is enough variety.
            let step = if text.len() > 1_000_000 { 25 } else { 1 };
            for c in m.computations().step_by(step) {
                let n = c.instructions.len();
                // Three instructions spread over the computation, and the whole of it.
                for i in [0, n / 2, n.saturating_sub(1)]
                    .into_iter()
                    .filter(|&i| i < n)
                {
                    let scope = Scope::Around {
                        computation: c.id,
                        instruction: InstrId(i as u32),
                        radius: 2,
                    };
                    let g = graph::build(m, &v, &scope, &options(60));
                    let what = format!(
                        "{}: {} around {}",
                        path.display(),
                        c.name,
                        c.instructions[i].name
                    );
                    check_edges(m, &g, &what);
                    check_radius(m, &g, c.id, InstrId(i as u32), 2, 60, &what);
                    graphs += 1;
                }
                let g = graph::build(m, &v, &Scope::Computation(c.id), &options(60));
                check_edges(m, &g, &format!("{}: {}", path.display(), c.name));
                assert!(members(&g).len() <= 60);
            }
        }
    }
    assert!(graphs > 500, "{graphs} graphs");
}

/// A random module over f32[4,6]-shaped values (and their transposes, rows,
/// columns): elementwise ops, transposes, broadcasts, reduces, tuples read
/// through get-tuple-elements, from one op list of `(kind, operand picks)`.
fn random_module(ops: &[(u8, u8, u8)]) -> String {
    let mut lines = vec![
        "  p0 = f32[4,6] parameter(0)".to_string(),
        "  zero = f32[] constant(0)".to_string(),
    ];
    let mut values: Vec<(String, &str)> = vec![("p0".into(), "[4,6]")];
    let mut params = 1;
    let pick = |values: &Vec<(String, &str)>, shape: &str, k: u8| -> Option<String> {
        let of: Vec<&String> = values
            .iter()
            .filter(|(_, s)| *s == shape)
            .map(|(n, _)| n)
            .collect();
        (!of.is_empty()).then(|| of[k as usize % of.len()].clone())
    };
    for (n, &(kind, a, b)) in ops.iter().enumerate() {
        let name = format!("v{n}");
        let (line, shape) = match kind % 7 {
            0 => {
                let shape = ["[4,6]", "[6,4]", "[4]"][a as usize % 3];
                let (x, y) = (pick(&values, shape, a), pick(&values, shape, b));
                match (x, y) {
                    (Some(x), Some(y)) => (format!("f32{shape} add({x}, {y})"), shape),
                    _ => continue,
                }
            }
            1 => match pick(&values, "[4,6]", a) {
                Some(x) => (
                    format!("f32[6,4] transpose({x}), dimensions={{1,0}}"),
                    "[6,4]",
                ),
                None => continue,
            },
            2 => match pick(&values, "[6,4]", a) {
                Some(x) => (
                    format!("f32[4,6] transpose({x}), dimensions={{1,0}}"),
                    "[4,6]",
                ),
                None => continue,
            },
            3 => match pick(&values, "[4]", a) {
                Some(x) => (
                    format!("f32[4,6] broadcast({x}), dimensions={{0}}"),
                    "[4,6]",
                ),
                None => continue,
            },
            4 => match pick(&values, "[4,6]", a) {
                Some(x) => (
                    format!("f32[4] reduce({x}, zero), dimensions={{1}}, to_apply=add"),
                    "[4]",
                ),
                None => continue,
            },
            5 => {
                let (Some(x), Some(y)) = (pick(&values, "[4,6]", a), pick(&values, "[4]", b))
                else {
                    continue;
                };
                lines.push(format!("  {name}t = (f32[4,6], f32[4]) tuple({x}, {y})"));
                lines.push(format!(
                    "  {name}g = f32[4] get-tuple-element({name}t), index=1"
                ));
                (format!("f32[4] exponential({name}g)"), "[4]")
            }
            _ => {
                lines.push(format!("  {name} = f32[4,6] parameter({params})"));
                params += 1;
                values.push((name, "[4,6]"));
                continue;
            }
        };
        lines.push(format!("  {name} = {line}"));
        values.push((name, shape));
    }
    let root = &values.last().unwrap().0;
    lines.push(format!(
        "  ROOT out = (f32[4,6]) tuple({})",
        pick(&values, "[4,6]", 0).unwrap_or(root.clone())
    ));
    format!(
        "HloModule random\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\n\nENTRY main {{\n{}\n}}\n",
        lines.join("\n")
    )
}

/// The class an op implies for operand `k` on these shapes (4 ≠ 6, so a
/// transpose is never the identity).
fn implied(opcode: &str, k: usize) -> Option<EdgeClass> {
    match (opcode, k) {
        ("add" | "exponential", _) => Some(EdgeClass::Identity),
        ("transpose", _) => Some(EdgeClass::TransposeLike),
        ("broadcast", _) => Some(EdgeClass::Broadcast),
        ("reduce", 0) => Some(EdgeClass::Reduction),
        ("reduce", 1) => Some(EdgeClass::Broadcast),
        _ => None,
    }
}

/// A transpose-like edge's maps send every output index to a permutation of it.
fn check_permutation(v: &analysis::Module<'_>, c: ComputationId, i: InstrId, k: usize) {
    let query = analysis::Query {
        computation: c.index(),
        instruction: i.index(),
        direction: analysis::Direction::OutputToInput,
        output_id: 0,
        operand_id: 0,
        physical_layout: false,
    };
    let indexing = analysis::analyze(v, &query);
    let node = &v.computation(c.index()).nodes[i.index()];
    let domain = node.op.shape.output(0).unwrap().dims.clone();
    let target = node.op.operands[k].as_array().unwrap().dims.clone();
    for m in &indexing.entries[k].maps {
        let dims = class::dimension_results(&m.map, &target).expect("bare dimensions");
        let mut sorted = dims.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..domain.len()).collect::<Vec<_>>(),
            "not a permutation: {}",
            m.map
        );
        assert_ne!(dims, sorted, "the identity order: {}", m.map);
        let point: Vec<i64> = domain.iter().map(|&n| n - 1).collect();
        let image = m.map.evaluate_at(&point, &[], &[]).expect("in the domain");
        let expected: Vec<i64> = dims.iter().map(|&d| point[d]).collect();
        assert_eq!(image, expected);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_modules_draw_real_edges_of_the_class_their_op_implies(
        ops in prop::collection::vec((0u8..7, any::<u8>(), any::<u8>()), 1..40),
        focus in any::<u16>(),
        radius in 0usize..4,
        cap in 3usize..40,
    ) {
        let text = random_module(&ops);
        let file = model::parse_hlo(&text);
        prop_assert!(file.diagnostics.iter().all(|d| d.severity != model::Severity::Error), "{text}\n{:?}", file.diagnostics);
        let m = &file.modules[0];
        let c = m.entry.unwrap();
        let n = m.computation(c).instructions.len();
        let start = InstrId((focus as usize % n) as u32);
        let v = view::borrowed(m);
        let scope = Scope::Around { computation: c, instruction: start, radius };
        let g = graph::build(m, &v, &scope, &options(cap));
        check_edges(m, &g, &text);
        check_radius(m, &g, c, start, radius, cap, &text);
        prop_assert!(members(&g).len() <= cap);
        for e in &g.edges {
            let (ec, ei) = ids(&e.to);
            let opcode = m.computation(ec).instruction(ei).opcode.name();
            if let Some(class) = implied(opcode, e.operand_index) {
                prop_assert_eq!(e.class, class, "{} operand {}: {}", opcode, e.operand_index, e.map);
            }
            if e.class == EdgeClass::TransposeLike {
                check_permutation(&v, ec, ei, e.operand_index);
            }
        }
    }
}

/// A chain of 50,000 instructions, each also reading the parameter.
fn huge_module(n: usize) -> String {
    let mut s = String::from(
        "HloModule huge\n\nENTRY main {\n  p = f32[8] parameter(0)\n  x0 = f32[8] negate(p)\n",
    );
    for k in 1..n {
        s.push_str(&format!("  x{k} = f32[8] add(x{}, p)\n", k - 1));
    }
    s.push_str(&format!("  ROOT r = f32[8] negate(x{})\n}}\n", n - 1));
    s
}

#[test]
fn a_50000_instruction_module_stays_within_the_cap() {
    let text = huge_module(50_000);
    let file = model::parse_hlo(&text);
    let m = &file.modules[0];
    let c = m.entry.unwrap();
    let v = view::borrowed(m);
    let cap = graph::build::DEFAULT_MAX_NODES;
    let whole = graph::build(m, &v, &Scope::Computation(c), &Options::default());
    assert_eq!(members(&whole).len(), cap);
    // Every member may have a stub of each kind at most.
    assert!(whole.nodes.len() <= 3 * cap, "{} nodes", whole.nodes.len());
    let stubs: usize = whole
        .nodes
        .iter()
        .filter_map(|n| match n.kind {
            NodeKind::More { count, .. } => Some(count),
            _ => None,
        })
        .sum();
    assert!(stubs > 0, "the cut is shown");
    check_edges(m, &whole, "whole");
    let middle = m.computation(c).instruction_by_name("x25000").unwrap().id;
    let around = graph::build(
        m,
        &v,
        &Scope::Around {
            computation: c,
            instruction: middle,
            radius: 3,
        },
        &Options::default(),
    );
    check_edges(m, &around, "around");
    // The parameter is one hop from everything: the cap, not the radius, bounds it.
    assert_eq!(members(&around).len(), cap);
}

fn sample(name: &str) -> (String, model::HloFile) {
    let text = std::fs::read_to_string(data().join(name)).unwrap();
    let file = model::parse_hlo(&text);
    (text, file)
}

/// The graph around `instruction` of a shipped sample, with coalescing on a6000.
fn sample_graph(name: &str, instruction: &str, radius: usize) -> (String, Graph) {
    let (text, file) = sample(name);
    let m = &file.modules[0];
    let (c, i) = m.find_instruction(instruction).unwrap();
    let v = view::borrowed(m);
    let options = Options {
        device: Some(hlo_lsp::device::Device::a6000()),
        ..Options::default()
    };
    let g = graph::build(
        m,
        &v,
        &Scope::Around {
            computation: c,
            instruction: i,
            radius,
        },
        &options,
    );
    (text, g)
}

#[test]
fn snapshot_json_around_a_softmax_fusion() {
    let (text, g) = sample_graph("jax/softmax.after.hlo", "subtract_exponential_fusion", 1);
    let v = graph::json::to_json(&g, |r| {
        serde_json::json!(hlo_lsp::syntax::line_col(&text, r.start).0)
    });
    insta::assert_snapshot!(serde_json::to_string_pretty(&v).unwrap());
}

#[test]
fn snapshot_dot_around_a_softmax_fusion() {
    let (_, g) = sample_graph("jax/softmax.after.hlo", "subtract_exponential_fusion", 1);
    insta::assert_snapshot!(graph::dot::to_dot(&g));
}

#[test]
fn inside_a_fused_computation_the_fusion_is_the_group() {
    let (_, g) = sample_graph("jax/softmax.after.hlo", "sub.0", 1);
    let context = g.context.as_deref().expect("drawn inside a fusion");
    assert!(g
        .node(context)
        .is_some_and(|n| n.name == "subtract_exponential_fusion"));
    assert!(g
        .nodes
        .iter()
        .filter(|n| n.id != context)
        .all(|n| n.group.as_deref() == Some(context)));
    assert!(g.edges.iter().all(|e| e.from != context && e.to != context));
}

#[test]
fn the_svg_is_well_formed_and_draws_every_node() {
    let (_, g) = sample_graph("jax/softmax.after.hlo", "subtract_exponential_fusion", 2);
    let svg = graph::svg::to_svg(&g);
    let doc = roxmltree_free_check(&svg);
    for n in g
        .nodes
        .iter()
        .filter(|n| !matches!(n.kind, NodeKind::Fusion { open: true }))
    {
        assert!(
            svg.contains(&format!("id=\"{}\"", n.id)),
            "{} not drawn",
            n.id
        );
    }
    assert!(doc > 10);
}

/// Counts the elements of `xml` after checking every tag is closed in order
/// (a well-formedness check without an XML crate).
fn roxmltree_free_check(xml: &str) -> usize {
    let mut stack: Vec<String> = vec![];
    let mut elements = 0;
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        let close = rest[open..].find('>').expect("a tag ends") + open;
        let tag = &rest[open + 1..close];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.trim()),
                "mismatched </{name}>"
            );
        } else if !tag.ends_with('/') {
            stack.push(tag.split_whitespace().next().unwrap().to_string());
            elements += 1;
        } else {
            elements += 1;
        }
        assert!(!tag.contains('<'), "< inside a tag: {tag}");
        rest = &rest[close + 1..];
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    elements
}

/// Every node's `bytes` is what XLA's buffer assignment gives the instruction's
/// array value, on every dump shipped with its buffer assignment (XLA CPU, jaxlib).
#[test]
fn node_bytes_are_xlas_buffer_sizes() {
    use hlo_lsp::memory::buffer_assignment::BufferAssignment;
    let mut compared = 0;
    let dirs = std::fs::read_dir(data().join("memory")).unwrap();
    for dir in dirs.flatten().filter(|d| d.path().is_dir()) {
        for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix("-buffer-assignment.txt") else {
                continue;
            };
            let ba_text = std::fs::read_to_string(file.path()).unwrap();
            let ba = BufferAssignment::parse(&ba_text, &name);
            let sizes: HashMap<&str, u64> = ba
                .allocations
                .iter()
                .flat_map(|a| &a.values)
                .filter(|v| &*v.shape_index == "{}" && !v.shape.starts_with('('))
                .map(|v| (&*v.instruction, v.size))
                .collect();
            let text = std::fs::read_to_string(dir.path().join(format!("{stem}.txt"))).unwrap();
            let file = model::parse_hlo(&text);
            let m = &file.modules[0];
            let v = view::borrowed(m);
            let options = Options {
                max_nodes: 100_000,
                open: Open::None,
                device: None,
                ..Options::default()
            };
            let g = graph::build(m, &v, &Scope::Computation(m.entry.unwrap()), &options);
            for n in g
                .nodes
                .iter()
                .filter(|n| n.kind != NodeKind::Fusion { open: true })
            {
                let Some(&size) = sizes.get(n.name.as_str()) else {
                    continue;
                };
                assert_eq!(n.bytes, Some(size), "{name}: {}", n.name);
                compared += 1;
            }
        }
    }
    eprintln!("{compared} buffer sizes compared");
    assert!(compared > 300, "only {compared} buffers compared");
}

/// A node's time is the cost model's estimate of that kernel, the one the cost
/// lenses and the ranked list show: every kernel drawn has it, nothing else does.
#[test]
fn node_times_are_the_kernels_estimates() {
    let (_, file) = sample("samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo");
    let m = &file.modules[0];
    let device = hlo_lsp::device::Device::a6000();
    let ranked: HashMap<String, hlo_lsp::cost::Duration> = hlo_lsp::cost::report::ranked_kernels(
        m,
        &device,
        &hlo_lsp::cost::step::StepOptions::default(),
    )
    .into_iter()
    .filter_map(|k| Some((k.name.clone(), k.time()?)))
    .collect();
    let (_, g) = sample_graph(
        "samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo",
        "custom-call.1",
        2,
    );
    let mut timed = 0;
    for n in g.nodes.iter().filter(|n| n.bytes.is_some()) {
        assert_eq!(n.time, ranked.get(&n.name).copied(), "{}", n.name);
        timed += n.time.is_some() as usize;
    }
    assert!(timed >= 4, "{timed} kernels timed");
    // Without a GPU (a CPU dump), no times.
    let v = view::borrowed(m);
    let (c, i) = m.find_instruction("custom-call.1").unwrap();
    let scope = Scope::Around {
        computation: c,
        instruction: i,
        radius: 2,
    };
    let cpu = graph::build(m, &v, &scope, &options(150));
    assert!(cpu.nodes.iter().all(|n| n.time.is_none()));
}

/// ENTRY calls four renamed copies of a layer (as `make_live_module.py` makes a live
/// module): the graph around ENTRY's parameter answers the calls structurally
/// equal to the first from its answers, and the maps on their edges are what each
/// call's own graph draws, also where an answer names an instruction of its copy
/// (a dynamic-slice whose offset the layer computes, never shared).
#[test]
fn calls_of_equal_copies_draw_the_maps_each_call_draws_alone() {
    let layer = "%fused (p0: f32[10,8], p1: s32[]) -> f32[2,8] {
  %p0 = f32[10,8]{1,0} parameter(0)
  %p1 = s32[] parameter(1)
  %zero = s32[] constant(0)
  ROOT %ds = f32[2,8]{1,0} dynamic-slice(%p0, %p1, %zero), dynamic_slice_sizes={2,8}
}
%layer (x: f32[10,8], i: s32[], w: f32[8,8]) -> (f32[2,8], f32[8,8]) {
  %x = f32[10,8]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %w = f32[8,8]{1,0} parameter(2)
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %f = f32[2,8]{1,0} fusion(%x, %next), kind=kLoop, calls=%fused
  %t = f32[8,8]{1,0} transpose(%w), dimensions={1,0}
  ROOT %out = (f32[2,8]{1,0}, f32[8,8]{1,0}) tuple(%f, %t)
}
";
    let copies = 4;
    let mut text = String::from("HloModule live\n");
    for k in 0..copies {
        text.push_str(&renamed(layer, &format!(".c{k}")));
    }
    text.push_str("ENTRY %main (x: f32[10,8], i: s32[], w: f32[8,8]) -> (f32[2,8], f32[8,8]) {\n");
    text.push_str("  %x = f32[10,8]{1,0} parameter(0)\n  %i = s32[] parameter(1)\n");
    text.push_str("  %w = f32[8,8]{1,0} parameter(2)\n");
    for k in 0..copies {
        let root = if k + 1 == copies { "ROOT " } else { "" };
        text.push_str(&format!(
            "  {root}%call.c{k} = (f32[2,8]{{1,0}}, f32[8,8]{{1,0}}) call(%x, %i, %w), to_apply=%layer.c{k}\n"
        ));
    }
    text.push_str("}\n");
    let file = model::parse_hlo(&text);
    let m = &file.modules[0];
    let v = view::borrowed(m);
    let around = |name: &str, radius| {
        let (c, i) = m.find_instruction(name).unwrap();
        let scope = Scope::Around {
            computation: c,
            instruction: i,
            radius,
        };
        graph::build(m, &v, &scope, &options(150))
    };
    let entry = around("x", 2);
    assert!(!entry.partial);
    let edges_into = |g: &Graph, name: &str| {
        let id = g.nodes.iter().find(|n| n.name == name).unwrap().id.clone();
        let mut maps: Vec<(usize, String)> = g
            .edges
            .iter()
            .filter(|e| e.to == id)
            .map(|e| (e.operand_index, e.map.clone()))
            .collect();
        maps.sort();
        maps
    };
    for k in 0..copies {
        let call = format!("call.c{k}");
        let shared = edges_into(&entry, &call);
        assert_eq!(shared.len(), 3, "{call}: {shared:?}");
        assert_eq!(shared, edges_into(&around(&call, 1), &call), "{call}");
        // The offset is the copy's own `next` instruction: the answer names it.
        let (c, i) = m.find_instruction(&call).unwrap();
        let q = analysis::Query::output_to_input(c.index(), i.index(), 0);
        assert!(analysis::analyze(&v, &q).names_instructions(), "{call}");
    }
    assert_eq!(
        edges_into(&entry, "call.c0")[2],
        edges_into(&entry, "call.c3")[2]
    );
}

/// The text of `dump` made live `copies` times over, as `make_live_module.py` makes
/// it (its README in `../shared/bench`): each copy's names suffixed `.c{k}`, its
/// ENTRY a plain computation, and a new ENTRY with the dump's parameters that
/// calls every copy, the last call the root.
fn live_module(dump: &str, copies: usize) -> String {
    let lines: Vec<&str> = dump.lines().collect();
    let first = lines
        .iter()
        .position(|l| l.starts_with('%') || l.starts_with("ENTRY "))
        .expect("a computation");
    let body = &lines[first..];
    let entry = body.iter().position(|l| l.starts_with("ENTRY ")).unwrap();
    let header = body[entry];
    let name = header.split_whitespace().nth(1).unwrap();
    let result = header
        .rsplit_once("->")
        .unwrap()
        .1
        .trim()
        .trim_end_matches('{');
    let parameters: Vec<&str> = body[entry + 1..]
        .iter()
        .take_while(|l| !l.starts_with('}'))
        .filter(|l| l.contains(" parameter("))
        .copied()
        .collect();
    let mut out: String = lines[..first].iter().map(|l| format!("{l}\n")).collect();
    for k in 0..copies {
        for l in body {
            let l = match l.strip_prefix("ENTRY ") {
                // The signature's parameter names are not `%`-prefixed: drop them.
                Some(rest) => format!("{} {{", rest.split(" (").next().unwrap()),
                None => l.to_string(),
            };
            out.push_str(&renamed(&l, &format!(".c{k}")));
            out.push('\n');
        }
    }
    out.push_str("ENTRY %main_all {\n");
    let mut operands = Vec::new();
    for p in &parameters {
        let p = p.split(", metadata").next().unwrap();
        out.push_str(&format!("{p}\n"));
        operands.push(p.trim().split(' ').next().unwrap().to_string());
    }
    for k in 0..copies {
        let root = if k + 1 == copies { "ROOT " } else { "" };
        out.push_str(&format!(
            "  {root}%call.c{k} = {result} call({}), to_apply={name}.c{k}\n",
            operands.join(", ")
        ));
    }
    out.push_str("}\n");
    out
}

/// Checks that every edge of `g` carries what a hover computes for it: the maps
/// of its consumer asked one output at a time (`analysis::analyze`, nothing
/// shared), united as the graph unites them. Returns how many edges it checked.
fn check_maps_against_hover(v: &analysis::Module<'_>, g: &Graph, what: &str) -> usize {
    use std::sync::Arc;
    let mut answers: HashMap<(ComputationId, InstrId), Vec<graph::build::Answer>> = HashMap::new();
    for e in &g.edges {
        let consumer = ids(&e.to);
        let outputs = answers.entry(consumer).or_insert_with(|| {
            (0..graph::build::outputs_asked(v, consumer))
                .map(|o| {
                    let q =
                        analysis::Query::output_to_input(consumer.0.index(), consumer.1.index(), o);
                    (o, Arc::new(analysis::analyze(v, &q)))
                })
                .collect()
        });
        let (map, class) = graph::build::edge_map(v, consumer, e.operand_index, outputs);
        assert_eq!(e.map, map, "{what}: the map of {e:?}");
        if e.class != EdgeClass::Uncoalesced {
            assert_eq!(e.class, class, "{what}: the class of {e:?}");
        }
    }
    g.edges.len()
}

/// Options that let the maps take what they take: the test compares all of them.
fn unhurried(open: Open) -> Options {
    Options {
        max_nodes: 150,
        open,
        device: None,
        maps_budget: std::time::Duration::from_secs(600),
        ..Options::default()
    }
}

/// The maps a graph draws are the maps a hover shows, edge by edge: on the shipped
/// JAX dumps (every ENTRY, every fusion open), the transformer step around its
/// ENTRY's middle instruction, and that step made live twice over, around the
/// ENTRY parameter that both calls of a whole step read (the graph shares the
/// answers of equal calls and composes each called computation once per request).
#[test]
fn every_edge_carries_the_maps_a_hover_shows() {
    let mut checked = 0;
    let mut dumps: Vec<PathBuf> = std::fs::read_dir(data().join("jax"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".after.hlo"))
        .collect();
    dumps.sort();
    for path in &dumps {
        let file = model::parse_hlo(&std::fs::read_to_string(path).unwrap());
        for m in &file.modules {
            let Some(entry) = m.entry else { continue };
            let v = view::borrowed(m);
            let g = graph::build(m, &v, &Scope::Computation(entry), &unhurried(Open::All));
            assert!(!g.partial, "{}", path.display());
            checked += check_maps_against_hover(&v, &g, &path.display().to_string());
        }
    }
    assert!(checked >= 100, "{checked} edges on the JAX dumps");
    let step = std::fs::read_to_string(data().join("bench/transformer.after.hlo")).unwrap();
    for (text, around, what) in [
        (step.clone(), None, "the step"),
        (
            live_module(&step, 2),
            Some("params_5___wk__.1"),
            "the live step",
        ),
    ] {
        let file = model::parse_hlo(&text);
        let m = &file.modules[0];
        let entry = m.entry.unwrap();
        let instruction = match around {
            Some(name) => m.find_instruction(name).unwrap().1,
            None => InstrId(m.computation(entry).instructions.len() as u32 / 2),
        };
        let v = view::borrowed(m);
        let scope = Scope::Around {
            computation: entry,
            instruction,
            radius: 3,
        };
        let g = graph::build(m, &v, &scope, &unhurried(Open::Focus));
        assert!(!g.partial, "{what}");
        let edges = check_maps_against_hover(&v, &g, what);
        assert!(edges >= 20, "{what}: {edges} edges");
        let unknown = g
            .edges
            .iter()
            .filter(|e| e.map.starts_with("unknown"))
            .count();
        assert!(
            unknown < edges / 4,
            "{what}: {unknown} of {edges} edges unknown"
        );
    }
}

/// A graph whose maps run out of budget keeps the edges it composed: each edge
/// either says "not computed" or carries the map and class the complete graph
/// draws. The budget runs out after a number of checks (deterministic where a
/// deadline is not), doubled until the graph is complete: around the transformer
/// step's ENTRY middle instruction (consumers of every kind, some cut, some not),
/// and around the ENTRY parameter of that step made live twice over, read by two
/// calls of a whole step (16 outputs each, each output reading nearly every
/// operand: there the calls' edges come complete or not at all).
#[test]
fn a_graph_cut_by_its_budget_keeps_the_edges_it_computed() {
    let step = std::fs::read_to_string(data().join("bench/transformer.after.hlo")).unwrap();
    let kept = cut_graphs_keep_what_they_computed(&step, None);
    assert!(kept > 0, "no cut graph of the step kept some of its edges");
    cut_graphs_keep_what_they_computed(&live_module(&step, 2), Some("params_5___wk__.1"));
}

/// Builds the graph of radius 3 around `around` (ENTRY's middle instruction when
/// `None`) of `text` under budgets of 1, 2, 4, ... checks until it is complete,
/// checks each edge of each against the complete graph's, and returns how many
/// cut graphs kept some of their edges.
fn cut_graphs_keep_what_they_computed(text: &str, around: Option<&str>) -> usize {
    use hlo_lsp::budget::Budget;
    let file = model::parse_hlo(text);
    let m = &file.modules[0];
    let entry = m.entry.unwrap();
    let instruction = match around {
        Some(name) => m.find_instruction(name).unwrap().1,
        None => InstrId(m.computation(entry).instructions.len() as u32 / 2),
    };
    let scope = Scope::Around {
        computation: entry,
        instruction,
        radius: 3,
    };
    let v = view::borrowed(m);
    let complete = graph::build(m, &v, &scope, &unhurried(Open::Focus));
    assert!(!complete.partial);
    let key = |e: &graph::Edge| (e.from.clone(), e.to.clone(), e.operand_index);
    let drawn: HashMap<_, _> = complete.edges.iter().map(|e| (key(e), e)).collect();
    let stopped = |e: &graph::Edge| e.map.starts_with("unknown: not computed");
    assert!(!complete.edges.iter().any(stopped));
    let mut kept = 0;
    let mut checks = 1u64;
    loop {
        let v = view::borrowed(m);
        let cut = Budget::after_checks(checks);
        let g = cut.run(|| graph::build(m, &v, &scope, &unhurried(Open::Focus)));
        assert_eq!(g.edges.len(), complete.edges.len(), "{checks} checks");
        for e in &g.edges {
            let whole = drawn[&key(e)];
            if stopped(e) {
                assert!(g.partial, "{checks} checks: {e:?}");
            } else {
                assert_eq!(
                    (&e.map, e.class),
                    (&whole.map, whole.class),
                    "{checks} checks"
                );
            }
        }
        let computed = g.edges.iter().filter(|e| !stopped(e)).count();
        kept += usize::from(computed > 0 && computed < g.edges.len());
        if !g.partial {
            assert_eq!(computed, g.edges.len(), "{checks} checks");
            return kept;
        }
        checks *= 2;
    }
}
