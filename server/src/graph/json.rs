//! The graph as JSON, for the CLI and for editors that draw it themselves:
//! `{"nodes": [{"id", "name", "opcode", "shape", "computation", "group", "kind",
//! "bytes", "time_us" (a GPU kernel's estimate), "measured_us", "measured_percent",
//! "measured_count" (with a profile), ...}], "edges": [{"from", "to", "operand_index", "map", "class", ...}],
//! "focus", "partial", "legend"}`, and `"heat"` (the measured nodes' colours) when a
//! node was measured. Where a node is in the document is the front
//! end's to say (`locate`: a line for the CLI, an LSP range for the server).

use std::ops::Range;

use serde_json::{json, Map, Value};

use super::{EdgeClass, Graph, NodeKind};

/// The graph as JSON, each node's document range written by `locate`.
pub fn to_json(graph: &Graph, locate: impl Fn(&Range<usize>) -> Value) -> Value {
    let nodes: Vec<Value> = graph
        .nodes
        .iter()
        .map(|n| {
            let mut v = json!({
                "id": n.id,
                "name": n.name,
                "opcode": n.opcode,
                "shape": n.shape,
                "computation": n.computation,
                "group": n.group,
                "kind": kind_name(&n.kind),
                "range": locate(&n.range),
            });
            let o = v.as_object_mut().expect("an object");
            extra(o, &n.kind);
            if let Some(k) = n.parameter_number {
                o.insert("parameter_number".into(), json!(k));
            }
            if n.is_root {
                o.insert("root".into(), json!(true));
            }
            if let Some(t) = n.time {
                o.insert("time_us".into(), json!(t.as_micros_f64()));
            }
            if let Some(b) = n.bytes {
                o.insert("bytes".into(), json!(b));
            }
            if let Some(m) = n.measured {
                o.insert("measured_us".into(), json!(m.us));
                o.insert("measured_percent".into(), json!(m.percent));
                o.insert("measured_count".into(), json!(m.count));
                o.insert("heat".into(), json!(super::heat::band(m.percent).fill));
            }
            v
        })
        .collect();
    let edges: Vec<Value> = graph
        .edges
        .iter()
        .map(|e| {
            let mut v = json!({
                "from": e.from,
                "to": e.to,
                "operand_index": e.operand_index,
                "map": e.map,
                "class": e.class.name(),
            });
            let o = v.as_object_mut().expect("an object");
            if !e.tuple_index.is_empty() {
                o.insert("tuple_index".into(), json!(e.tuple_index));
            }
            if let Some(c) = e.coalesced {
                o.insert("coalesced".into(), json!(c));
            }
            v
        })
        .collect();
    let mut v = json!({
        "nodes": nodes,
        "edges": edges,
        "focus": graph.focus,
        "context": graph.context,
        "partial": graph.partial,
        "legend": legend(),
    });
    if graph.nodes.iter().any(|n| n.measured.is_some()) {
        v["heat"] = super::heat::legend();
    }
    v
}

/// Every class with its colour and meaning, for a legend.
pub fn legend() -> Value {
    EdgeClass::ALL
        .iter()
        .map(|c| json!({ "class": c.name(), "colour": c.colour(), "meaning": c.meaning() }))
        .collect()
}

/// `instruction`, `parameter`, `constant`, `fusion`, `namespace`, `more`.
pub fn kind_name(kind: &NodeKind) -> &'static str {
    match kind {
        NodeKind::Instruction => "instruction",
        NodeKind::Parameter => "parameter",
        NodeKind::Constant => "constant",
        NodeKind::Fusion { .. } => "fusion",
        NodeKind::Namespace { .. } => "namespace",
        NodeKind::More { .. } => "more",
    }
}

/// The fields only some kinds have.
fn extra(o: &mut Map<String, Value>, kind: &NodeKind) {
    match kind {
        NodeKind::Fusion { open } | NodeKind::Namespace { open } => {
            o.insert("open".into(), json!(open));
        }
        NodeKind::More {
            of,
            count,
            direction,
        } => {
            o.insert("of".into(), json!(of));
            o.insert("count".into(), json!(count));
            o.insert("direction".into(), json!(direction.name()));
        }
        _ => {}
    }
}
