//! What every renderer draws, decided once: the boxes (an open fusion is no box
//! but a cluster around its members), their labels, and the arrows, with an edge
//! into an open fusion redrawn into the fused parameter it feeds and an edge out
//! of it from the fused root, and "more" stubs tied to their node.

use rustc_hash::FxHashMap;

use super::{Direction, EdgeClass, Graph, Node, NodeKind};

/// A box to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Box<'g> {
    pub node: &'g Node,
    /// Lines of its label: name, then opcode and shape.
    pub label: Vec<String>,
    /// The cluster (an open fusion's id) it is drawn in.
    pub cluster: Option<&'g str>,
    pub focus: bool,
}

/// An arrow to draw, from the producer's box to the consumer's.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrow<'g> {
    pub from: &'g str,
    pub to: &'g str,
    /// `0`, `1{2}: (d0) -> (d0 + 1)`: the operand, the tuple element, the map
    /// (identity maps need no words: the colour says it).
    pub label: String,
    /// `None` for a stub's arrow.
    pub class: Option<EdgeClass>,
    /// The whole map, for a tooltip.
    pub tooltip: String,
}

/// A cluster: an open fusion and what it is called.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster<'g> {
    pub id: &'g str,
    pub label: String,
    /// What a profile measured of the fusion: its fill ([`super::heat`]).
    pub measured: Option<super::Measurement>,
}

/// The boxes, arrows and clusters of `graph`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Drawing<'g> {
    pub boxes: Vec<Box<'g>>,
    pub arrows: Vec<Arrow<'g>>,
    pub clusters: Vec<Cluster<'g>>,
}

fn is_open(n: &Node) -> bool {
    matches!(
        n.kind,
        NodeKind::Fusion { open: true } | NodeKind::Namespace { open: true }
    )
}

/// Where an open fusion's operands enter (parameter number to member id) and its
/// value leaves (the root member).
#[derive(Default)]
struct Ports<'g> {
    parameters: FxHashMap<usize, &'g str>,
    root: Option<&'g str>,
    any: Option<&'g str>,
}

pub fn drawing(graph: &Graph) -> Drawing<'_> {
    let mut ports: FxHashMap<&str, Ports<'_>> = FxHashMap::default();
    for n in graph.nodes.iter().filter(|n| is_open(n)) {
        ports.insert(&n.id, Ports::default());
    }
    for n in &graph.nodes {
        let Some(p) = n.group.as_deref().and_then(|g| ports.get_mut(g)) else {
            continue;
        };
        if matches!(n.kind, NodeKind::More { .. }) {
            continue;
        }
        p.any.get_or_insert(&n.id);
        if let Some(k) = n.parameter_number {
            p.parameters.insert(k, &n.id);
        }
        if n.is_root {
            p.root = Some(&n.id);
        }
    }
    let mut d = Drawing::default();
    for n in &graph.nodes {
        if is_open(n) {
            let mut label = format!("{} ({})", n.name, n.opcode);
            if let Some(m) = n.measured {
                label.push_str(&format!(" · {}", m.line()));
            }
            d.clusters.push(Cluster {
                id: &n.id,
                label,
                measured: n.measured,
            });
            continue;
        }
        d.boxes.push(Box {
            node: n,
            label: label(n),
            cluster: n.group.as_deref().filter(|g| ports.contains_key(g)),
            focus: graph.focus.as_deref() == Some(n.id.as_str()),
        });
        if let NodeKind::More { of, direction, .. } = &n.kind {
            let of = out_port(&ports, of)
                .or_else(|| in_port(&ports, of, 0))
                .unwrap_or(of);
            let (from, to) = match direction {
                Direction::Operands => (n.id.as_str(), of),
                Direction::Users => (of, n.id.as_str()),
            };
            d.arrows.push(Arrow {
                from,
                to,
                label: String::new(),
                class: None,
                tooltip: n.name.clone(),
            });
        }
    }
    for e in &graph.edges {
        let from = out_port(&ports, &e.from).unwrap_or(&e.from);
        let to = in_port(&ports, &e.to, e.operand_index).unwrap_or(&e.to);
        d.arrows.push(Arrow {
            from,
            to,
            label: edge_label(e),
            class: Some(e.class),
            tooltip: match e.map == e.class.name() {
                true => format!("operand {}: {}", e.operand_index, e.map),
                false => format!(
                    "operand {}: {} ({})",
                    e.operand_index,
                    e.map,
                    e.class.name()
                ),
            },
        });
    }
    d
}

/// The member an open fusion's value leaves from; `None` for any other node.
fn out_port<'g>(ports: &FxHashMap<&str, Ports<'g>>, id: &str) -> Option<&'g str> {
    let p = ports.get(id)?;
    p.root.or(p.any)
}

/// The member an open fusion's operand `k` enters; `None` for any other node.
fn in_port<'g>(ports: &FxHashMap<&str, Ports<'g>>, id: &str, k: usize) -> Option<&'g str> {
    let p = ports.get(id)?;
    p.parameters.get(&k).copied().or(p.any)
}

/// A box's lines: the name, then the opcode and shape, then what it costs and
/// what it was measured to take (a stub says how many; a parameter or constant is
/// small: its cost is the tooltip's).
fn label(n: &Node) -> Vec<String> {
    match &n.kind {
        NodeKind::More { .. } => vec![n.name.clone()],
        NodeKind::Parameter | NodeKind::Constant => vec![n.name.clone(), n.shape.clone()],
        _ => {
            let mut lines = vec![n.name.clone(), format!("{} {}", n.opcode, n.shape)];
            lines.extend(n.cost_line());
            lines.extend(n.measured.map(|m| m.line()));
            lines
        }
    }
}

/// `0`, `1{2}`, `0: (d0, d1) -> (d1, d0)`.
fn edge_label(e: &super::Edge) -> String {
    let mut s = e.operand_index.to_string();
    for t in &e.tuple_index {
        s.push_str(&format!("{{{t}}}"));
    }
    if e.class == EdgeClass::Unknown {
        s.push_str(": unknown"); // the reason is the tooltip's
    } else if e.class != EdgeClass::Identity {
        s.push_str(": ");
        s.push_str(&e.map);
    }
    s
}
