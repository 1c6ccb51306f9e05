//! The graph as a standalone SVG, laid out by [`super::layout`]: boxes (small
//! ellipses for parameters and constants, dashed notes for "more" stubs), open
//! fusions as dashed rectangles around their members, arrows coloured by class
//! with their labels, and a legend of the classes drawn (and of the measured
//! nodes' colours, [`super::heat`], when a profile measured some). Each node's group has
//! the node's id, each arrow's the ids it joins (`data-from`, `data-to`), so a
//! script (or a test) can read the picture back.

use std::fmt::Write;

use super::drawing::{drawing, Drawing};
use super::layout::{box_size, layout, Layout, Placed, LINE_HEIGHT};
use super::{EdgeClass, Graph, NodeKind};

const LEGEND_ROW: f64 = 16.0;

/// The SVG text of `graph`.
pub fn to_svg(graph: &Graph) -> String {
    let d = drawing(graph);
    let sizes: Vec<(f64, f64)> = d
        .boxes
        .iter()
        .map(|b| box_size(&b.label, small(&b.node.kind)))
        .collect();
    let l = layout(&d, &sizes);
    let classes: Vec<EdgeClass> = EdgeClass::ALL
        .into_iter()
        .filter(|c| d.arrows.iter().any(|a| a.class == Some(*c)))
        .collect();
    let measured = graph.nodes.iter().any(|n| n.measured.is_some());
    let heat_rows = if measured {
        super::heat::BANDS.len()
    } else {
        0
    };
    let legend_height = (classes.len() + heat_rows) as f64 * LEGEND_ROW + 10.0;
    let width = l.width.max(320.0);
    let height = l.height + legend_height;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="monospace" font-size="11">"#
    );
    out.push_str("<defs>\n");
    for c in EdgeClass::ALL {
        marker(&mut out, c.name(), c.colour());
    }
    marker(&mut out, "more", "#aaaaaa");
    out.push_str("</defs>\n");
    let _ = writeln!(
        out,
        r##"<rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    clusters(&mut out, &d, &l);
    arrows(&mut out, &d, &l);
    boxes(&mut out, &d, &l);
    legend(&mut out, &classes, l.height);
    if measured {
        heat_legend(&mut out, l.height + classes.len() as f64 * LEGEND_ROW);
    }
    out.push_str("</svg>\n");
    out
}

fn small(kind: &NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Parameter | NodeKind::Constant | NodeKind::More { .. }
    )
}

fn marker(out: &mut String, name: &str, colour: &str) {
    let _ = writeln!(
        out,
        r#"<marker id="arrow-{name}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>"#
    );
}

fn clusters(out: &mut String, d: &Drawing<'_>, l: &Layout) {
    for (c, &(x, y, w, h)) in d.clusters.iter().zip(&l.clusters) {
        if w <= 0.0 {
            continue;
        }
        let (fill, ink) = match c.measured {
            Some(m) => {
                let band = super::heat::band(m.percent);
                (band.fill, band.text)
            }
            None => ("#f7fbff", "#555555"),
        };
        let _ = writeln!(
            out,
            r##"<g class="cluster" id="cluster_{}"><rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" rx="8" fill="{fill}" stroke="#888888" stroke-dasharray="5,3"/><text x="{:.1}" y="{:.1}" fill="{ink}">{}</text></g>"##,
            escape(c.id),
            x + 8.0,
            y + 14.0,
            escape(&c.label)
        );
    }
}

fn arrows(out: &mut String, d: &Drawing<'_>, l: &Layout) {
    for (a, points) in d.arrows.iter().zip(&l.arrows) {
        if points.len() < 2 {
            continue;
        }
        let (colour, name, dash, width) = match a.class {
            Some(c) => (
                c.colour(),
                c.name(),
                "",
                if c == EdgeClass::Identity { 1.0 } else { 1.6 },
            ),
            None => ("#aaaaaa", "more", r#" stroke-dasharray="4,3""#, 1.0),
        };
        let path: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = write!(
            out,
            r#"<g class="edge {name}" data-from="{}" data-to="{}"><title>{}</title><polyline points="{}" fill="none" stroke="{colour}" stroke-width="{width}"{dash} marker-end="url(#arrow-{name})"/>"#,
            escape(a.from),
            escape(a.to),
            escape(&a.tooltip),
            path.join(" ")
        );
        if !a.label.is_empty() {
            // On the last segment, just above the consumer.
            let (x1, y1) = points[points.len() - 2];
            let (x2, y2) = points[points.len() - 1];
            let (x, y) = (x1 + (x2 - x1) * 0.6, y1 + (y2 - y1) * 0.6);
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{y:.1}" font-size="9" fill="{colour}">{}</text>"#,
                x + 4.0,
                escape(&a.label)
            );
        }
        out.push_str("</g>\n");
    }
}

fn boxes(out: &mut String, d: &Drawing<'_>, l: &Layout) {
    for (b, p) in d.boxes.iter().zip(&l.boxes) {
        let n = b.node;
        let (mut fill, stroke, width) = match (&n.kind, b.focus) {
            (_, true) => ("#fff3c4", "#333333", 2.5),
            (NodeKind::Fusion { .. }, _) => ("#eaf2f8", "#34495e", 1.5),
            (NodeKind::Namespace { .. }, _) => ("#fef9e7", "#7d6608", 1.5),
            (NodeKind::Parameter | NodeKind::Constant, _) => ("#f4f6f6", "#95a5a6", 1.0),
            (NodeKind::More { .. }, _) => ("#ffffff", "#aaaaaa", 1.0),
            (NodeKind::Instruction, _) => ("#ffffff", "#34495e", 1.0),
        };
        let mut ink = "#000000";
        if let Some(m) = n.measured {
            let band = super::heat::band(m.percent);
            (fill, ink) = (band.fill, band.text);
        }
        let _ = write!(
            out,
            r#"<g class="node" id="{}"><title>{}</title>"#,
            escape(&n.id),
            escape(&super::dot::tooltip(n))
        );
        shape(out, &n.kind, p, fill, stroke, width);
        let size = if small(&n.kind) { 9.0 } else { 11.0 };
        let line = LINE_HEIGHT * size / 11.0;
        let first = p.y - (b.label.len() as f64 - 1.0) * line / 2.0 + size / 3.0;
        for (k, text) in b.label.iter().enumerate() {
            let weight = if k == 0 && !small(&n.kind) {
                r#" font-weight="bold""#
            } else {
                ""
            };
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="{size}" fill="{ink}"{weight}>{}</text>"#,
                p.x,
                first + k as f64 * line,
                escape(text)
            );
        }
        out.push_str("</g>\n");
    }
}

fn shape(out: &mut String, kind: &NodeKind, p: &Placed, fill: &str, stroke: &str, width: f64) {
    match kind {
        NodeKind::Parameter | NodeKind::Constant => {
            let _ = write!(
                out,
                r#"<ellipse cx="{:.1}" cy="{:.1}" rx="{:.1}" ry="{:.1}" fill="{fill}" stroke="{stroke}" stroke-width="{width}"/>"#,
                p.x,
                p.y,
                p.width / 2.0,
                p.height / 2.0
            );
        }
        _ => {
            let dash = if matches!(kind, NodeKind::More { .. }) {
                r#" stroke-dasharray="4,3""#
            } else {
                ""
            };
            let _ = write!(
                out,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="5" fill="{fill}" stroke="{stroke}" stroke-width="{width}"{dash}/>"#,
                p.left(),
                p.top(),
                p.width,
                p.height
            );
            if matches!(kind, NodeKind::Fusion { .. }) {
                let _ = write!(
                    out,
                    r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="4" fill="none" stroke="{stroke}" stroke-width="0.8"/>"#,
                    p.left() + 3.0,
                    p.top() + 3.0,
                    p.width - 6.0,
                    p.height - 6.0
                );
            }
        }
    }
}

fn legend(out: &mut String, classes: &[EdgeClass], top: f64) {
    out.push_str(r#"<g class="legend">"#);
    for (k, c) in classes.iter().enumerate() {
        let y = top + k as f64 * LEGEND_ROW + 8.0;
        let _ = write!(
            out,
            r#"<line x1="20" y1="{y:.1}" x2="50" y2="{y:.1}" stroke="{}" stroke-width="2.5"/><text x="58" y="{:.1}" font-size="10">{}: {}</text>"#,
            c.colour(),
            y + 4.0,
            c.name(),
            escape(c.meaning())
        );
    }
    out.push_str("</g>\n");
}

/// The measured nodes' colours, one row per band of the step.
fn heat_legend(out: &mut String, top: f64) {
    out.push_str(r#"<g class="heat-legend">"#);
    for (k, b) in super::heat::BANDS.iter().enumerate() {
        let y = top + k as f64 * LEGEND_ROW + 8.0;
        let _ = write!(
            out,
            r##"<rect x="20" y="{:.1}" width="30" height="10" rx="2" fill="{}" stroke="#34495e" stroke-width="0.5"/><text x="58" y="{:.1}" font-size="10">measured: {}</text>"##,
            y - 5.0,
            b.fill,
            y + 4.0,
            escape(b.meaning)
        );
    }
    out.push_str("</g>\n");
}

/// Text for XML (kept here for the graph's callers; one escape for every SVG).
pub use crate::xml::escape;
