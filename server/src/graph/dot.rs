//! The graph in Graphviz's DOT language, for people who have Graphviz (and for
//! the VS Code panel, which runs Graphviz compiled to WebAssembly): open fusions
//! are clusters, edges are coloured by class, nodes carry their ids so a click on
//! the drawn SVG finds the instruction.

use std::fmt::Write;

use super::drawing::{drawing, Box};
use super::{EdgeClass, Graph, NodeKind};

/// The DOT text of `graph`.
pub fn to_dot(graph: &Graph) -> String {
    let d = drawing(graph);
    let mut out = String::from("digraph hlo {\n");
    out.push_str(
        "  graph [rankdir=TB, fontname=\"monospace\", fontsize=10, nodesep=0.3, ranksep=0.4];\n",
    );
    out.push_str("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"monospace\", fontsize=10];\n");
    out.push_str("  edge [fontname=\"monospace\", fontsize=9, arrowsize=0.7];\n");
    for b in d.boxes.iter().filter(|b| b.cluster.is_none()) {
        node_line(&mut out, b, "  ");
    }
    for c in &d.clusters {
        let _ = writeln!(out, "  subgraph {} {{", quote(&format!("cluster_{}", c.id)));
        let fill = match c.measured {
            Some(m) => {
                let band = super::heat::band(m.percent);
                format!(
                    " style=\"rounded,dashed,filled\"; fillcolor={}; fontcolor={};",
                    quote(band.fill),
                    quote(band.text)
                )
            }
            None => " style=\"rounded,dashed\";".to_string(),
        };
        let _ = writeln!(
            out,
            "    label={}; id={};{fill} color=\"#888888\";",
            quote(&c.label),
            quote(c.id)
        );
        for b in d.boxes.iter().filter(|b| b.cluster == Some(c.id)) {
            node_line(&mut out, b, "    ");
        }
        out.push_str("  }\n");
    }
    for a in &d.arrows {
        let style = match a.class {
            Some(class) => format!(
                "color={}, fontcolor={}, penwidth={}",
                quote(class.colour()),
                quote(class.colour()),
                if class == EdgeClass::Identity {
                    "1"
                } else {
                    "1.6"
                }
            ),
            None => "color=\"#aaaaaa\", style=dashed, arrowhead=none".to_string(),
        };
        let _ = writeln!(
            out,
            "  {} -> {} [label={}, tooltip={}, {style}];",
            quote(a.from),
            quote(a.to),
            quote(&a.label),
            quote(&a.tooltip)
        );
    }
    out.push_str("}\n");
    out
}

fn node_line(out: &mut String, b: &Box<'_>, indent: &str) {
    let n = b.node;
    let mut attrs = vec![
        format!("label={}", quote(&b.label.join("\n"))),
        format!("id={}", quote(&n.id)),
        format!("tooltip={}", quote(&tooltip(n))),
    ];
    match &n.kind {
        NodeKind::Parameter | NodeKind::Constant => {
            attrs.push("shape=ellipse, fontsize=8, fillcolor=\"#f4f6f6\"".into())
        }
        NodeKind::Fusion { .. } => attrs.push("peripheries=2, fillcolor=\"#eaf2f8\"".into()),
        NodeKind::Namespace { .. } => {
            attrs.push("style=\"rounded,filled\", fillcolor=\"#fef9e7\"".into())
        }
        NodeKind::More { .. } => {
            attrs.push("shape=note, style=dashed, fontsize=8, fontcolor=\"#777777\"".into())
        }
        NodeKind::Instruction => {}
    }
    match (b.focus, n.measured) {
        (_, Some(m)) => {
            let band = super::heat::band(m.percent);
            attrs.push(format!(
                "fillcolor={}, fontcolor={}",
                quote(band.fill),
                quote(band.text)
            ));
            if b.focus {
                attrs.push("penwidth=2.5".into());
            }
        }
        (true, None) => attrs.push("penwidth=2.5, fillcolor=\"#fff3c4\"".into()),
        (false, None) => {}
    }
    let _ = writeln!(out, "{indent}{} [{}];", quote(&n.id), attrs.join(", "));
}

/// `name = shape opcode (≈ 1.20 µs · 4.0 MiB; measured 1.31 µs · 2.0%)`; a stub's
/// own words.
pub fn tooltip(n: &super::Node) -> String {
    if let NodeKind::More { .. } = n.kind {
        return n.name.clone();
    }
    let notes: Vec<String> = n
        .cost_line()
        .into_iter()
        .chain(n.measured.map(|m| m.line()))
        .collect();
    match notes.is_empty() {
        true => format!("{} = {} {}", n.name, n.shape, n.opcode),
        false => format!(
            "{} = {} {} ({})",
            n.name,
            n.shape,
            n.opcode,
            notes.join("; ")
        ),
    }
}

/// A DOT string: quotes and backslashes escaped, line breaks as `\n`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
