//! The graph of a StableHLO file: drawn on the HLO module the file translates to
//! ([`crate::mlir::stablehlo`], as XLA's converter writes it), every node named and
//! placed as the op it is in the `.mlir` text (`%3`, its line), the maps on the
//! edges those of the translation, and the ops grouped by the name scopes of their
//! locations, as Model Explorer groups them into namespaces: JAX writes
//! `loc("jit(f)/layer1/dot_general"(...))` for an op under `jax.named_scope("layer1")`
//! of the jitted `f`, and the namespace is the name without its last part
//! (`jit(f)/layer1`).
//!
//! Open, each namespace is a cluster around its ops; folded, each namespace one
//! level below what all ops share (`jit(f)/layer1`, `jit(f)/layer2`) is one node,
//! the edges between namespaces kept with their maps and those inside dropped.

use std::collections::{BTreeMap, HashSet};

use super::{build, Graph, NodeKind, Options, Scope};
use crate::analysis;
use crate::mlir::{self, location, stablehlo};

/// How namespaces are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Namespaces {
    /// A cluster around the ops of each namespace.
    Open,
    /// One node per namespace one level below the scope every op shares.
    Folded,
}

/// What to draw of a StableHLO file.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// Around this value (`%3`) within `radius` hops; the whole `@main` without.
    pub value: Option<&'a str>,
    pub radius: usize,
    pub namespaces: Namespaces,
}

/// The graph of the StableHLO text `src`; `Err` with one line when it holds no
/// StableHLO op or no value `request.value`. Node ranges are bytes of `src`.
pub fn graph(src: &str, request: &Request, options: &Options) -> Result<Graph, String> {
    let file = mlir::read(src);
    if !stablehlo::is_stablehlo(&file) {
        return Err("no StableHLO op found (for linalg and other MLIR: hlo-lsp mlir)".into());
    }
    let t = stablehlo::translate(src, &file);
    let parsed = crate::model::parse_hlo(&t.hlo);
    let Some(module) = parsed.modules.first() else {
        return Err("the translation to HLO has no module".into());
    };
    let scope = match request.value {
        Some(value) => {
            let (computation, instruction) = module
                .find_instruction(value)
                .ok_or_else(|| format!("no value named {value}"))?;
            Scope::Around {
                computation,
                instruction,
                radius: request.radius,
            }
        }
        None => Scope::Computation(module.entry.ok_or("no function to draw")?),
    };
    let view = analysis::view::borrowed(module);
    let mut g = build(module, &view, &scope, options);
    let mut spaces = Vec::with_capacity(g.nodes.len());
    for node in &mut g.nodes {
        let line = t.line_at(node.range.start);
        spaces.push(line.and_then(|l| namespace(src, &file, &l.mlir_op)));
        if let Some(line) = line {
            node.name = src.get(line.mlir_name.clone()).unwrap_or("").to_string();
            node.range = line.mlir_name.clone();
        }
    }
    match request.namespaces {
        Namespaces::Open => open(&mut g, &spaces),
        Namespaces::Folded => fold(&mut g, &spaces),
    }
    Ok(g)
}

/// The name scope of the op at `op` (its header's bytes): its location's name
/// without the last part.
fn namespace(src: &str, file: &mlir::MlirFile, op: &std::ops::Range<usize>) -> Option<String> {
    let o = file.ops.iter().find(|o| o.range == *op)?;
    let v = stablehlo::view::view(src, file, o);
    let name = location::name(src, file, v.location.as_deref()?)?;
    let (space, _) = name.rsplit_once('/')?;
    Some(space.to_string())
}

fn namespace_id(space: &str) -> String {
    format!("ns:{space}")
}

/// A namespace's node: open (a cluster) or folded (a box).
fn namespace_node(g: &Graph, space: &str, open: bool, members: usize) -> super::Node {
    let computation = g.nodes.first().map(|n| n.computation.clone());
    super::Node {
        id: namespace_id(space),
        name: space.to_string(),
        opcode: "namespace".into(),
        shape: format!("{members} ops"),
        computation: computation.unwrap_or_default(),
        group: None,
        kind: NodeKind::Namespace { open },
        range: 0..0,
        parameter_number: None,
        is_root: false,
        time: None,
        bytes: None,
        measured: None,
    }
}

/// Each op in a namespace is a member of its namespace's cluster.
fn open(g: &mut Graph, spaces: &[Option<String>]) {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (node, space) in g.nodes.iter_mut().zip(spaces) {
        let Some(space) = space.as_ref().filter(|_| node.group.is_none()) else {
            continue;
        };
        node.group = Some(namespace_id(space));
        *counts.entry(space.clone()).or_default() += 1;
    }
    for (space, n) in counts {
        let node = namespace_node(g, &space, true, n);
        g.nodes.push(node);
    }
}

/// The namespaces one level below the scope all share replace their ops.
fn fold(g: &mut Graph, spaces: &[Option<String>]) {
    let parts: Vec<Vec<&str>> = spaces
        .iter()
        .flatten()
        .map(|s| s.split('/').collect())
        .collect();
    let shared = parts.first().map_or(0, |first| {
        (0..first.len())
            .take_while(|&k| parts.iter().all(|p| p.get(k) == first.get(k)))
            .count()
    });
    // An op whose namespace is the shared scope itself stays an op.
    let folded: Vec<Option<String>> = spaces
        .iter()
        .map(|s| {
            let p: Vec<&str> = s.as_deref()?.split('/').collect();
            (p.len() > shared).then(|| p[..=shared].join("/"))
        })
        .collect();
    let mut members: BTreeMap<String, usize> = BTreeMap::new();
    let mut into: std::collections::HashMap<String, String> = Default::default();
    for (node, key) in g.nodes.iter().zip(&folded) {
        if let Some(key) = key {
            *members.entry(key.clone()).or_default() += 1;
            into.insert(node.id.clone(), namespace_id(key));
        }
    }
    g.nodes.retain(|n| !into.contains_key(&n.id));
    for (space, n) in members {
        let node = namespace_node(g, &space, false, n);
        g.nodes.push(node);
    }
    let mut seen = HashSet::new();
    let edges = std::mem::take(&mut g.edges);
    for mut e in edges {
        if let Some(to) = into.get(&e.from) {
            e.from = to.clone();
        }
        if let Some(to) = into.get(&e.to) {
            e.to = to.clone();
        }
        let key = (e.from.clone(), e.to.clone(), e.operand_index, e.map.clone());
        if e.from != e.to && seen.insert(key) {
            g.edges.push(e);
        }
    }
    for n in &mut g.nodes {
        if let NodeKind::More { of, .. } = &mut n.kind {
            if let Some(to) = into.get(of.as_str()) {
                *of = to.clone();
            }
        }
    }
    if let Some(focus) = g.focus.as_mut() {
        if let Some(to) = into.get(focus.as_str()) {
            *focus = to.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MLP: &str = r#"module @jit_mlp {
  func.func public @main(%arg0: tensor<4x8xf32> loc("x"), %arg1: tensor<8x16xf32> loc("w1")) -> tensor<4xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc(#loc2)
    %1 = stablehlo.tanh %0 : tensor<4x16xf32> loc(#loc3)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc4)
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32> loc(#loc4)
    return %2 : tensor<4xf32>
  }
}
#loc1 = loc("/p/m.py":3:4)
#loc2 = loc("jit(mlp)/layer1/dot_general"(#loc1))
#loc3 = loc("jit(mlp)/layer1/tanh"(#loc1))
#loc4 = loc("jit(mlp)/head/reduce_sum"(#loc1))
"#;

    fn request(namespaces: Namespaces) -> Request<'static> {
        Request {
            value: None,
            radius: 2,
            namespaces,
        }
    }

    #[test]
    fn open_namespaces_are_clusters_of_their_ops() {
        let g = graph(MLP, &request(Namespaces::Open), &Options::default()).unwrap();
        let tanh = g.nodes.iter().find(|n| n.name == "%1").expect("%1");
        assert_eq!(tanh.group.as_deref(), Some("ns:jit(mlp)/layer1"));
        assert_eq!(&MLP[tanh.range.clone()], "%1");
        let layer1 = g.node("ns:jit(mlp)/layer1").expect("layer1");
        assert_eq!(layer1.kind, NodeKind::Namespace { open: true });
        assert_eq!(layer1.shape, "2 ops");
        let edge = g
            .edges
            .iter()
            .find(|e| e.to == tanh.id)
            .expect("an edge into tanh");
        assert_eq!(g.node(&edge.from).map(|n| n.name.as_str()), Some("%0"));
    }

    #[test]
    fn folded_namespaces_are_one_node_each_with_the_edges_between() {
        let g = graph(MLP, &request(Namespaces::Folded), &Options::default()).unwrap();
        assert!(g.nodes.iter().all(|n| n.name != "%1"));
        let names: Vec<&str> = g
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Namespace { .. }))
            .map(|n| n.name.as_str())
            .collect();
        assert_eq!(names, ["jit(mlp)/head", "jit(mlp)/layer1"]);
        let between: Vec<_> = g
            .edges
            .iter()
            .filter(|e| e.from == "ns:jit(mlp)/layer1" && e.to == "ns:jit(mlp)/head")
            .collect();
        assert_eq!(between.len(), 1, "{:?}", g.edges);
        assert!(!g.edges.iter().any(|e| e.from == e.to));
    }

    #[test]
    fn a_file_without_stablehlo_is_refused() {
        let err = graph(
            "func.func @f() { return }",
            &request(Namespaces::Open),
            &Options::default(),
        );
        assert!(err.is_err());
    }
}
