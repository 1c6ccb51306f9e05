//! A layered (Sugiyama) layout of a [`Drawing`], so that the CLI draws an SVG with
//! no Graphviz installed: cycles broken by reversing back edges, layers by longest
//! path (sources pulled down next to their first reader, as parameters and
//! constants should be), long edges split by dummy points, crossings reduced by
//! barycentre sweeps that keep an open fusion's members together, and x positions
//! relaxed towards the neighbours' while keeping each layer's order.
//!
//! Written here rather than taken from a crate: `layout-rs`, the well-kept Rust
//! layered layout, has no clusters (nested graphs) and draws with its own styling,
//! and a fusion group and coloured, labelled edges are what this picture is for.

use rustc_hash::FxHashMap;

use super::drawing::Drawing;

/// Characters' width and a line's height in the SVG's font (monospace, 11 px).
pub const CHAR_WIDTH: f64 = 6.7;
pub const LINE_HEIGHT: f64 = 14.0;
const PADDING: f64 = 8.0;
const NODE_GAP: f64 = 24.0;
const LAYER_GAP: f64 = 46.0;
const MARGIN: f64 = 30.0;
/// Room between a cluster's members and its rectangle.
const CLUSTER_PAD: f64 = 10.0;
/// Barycentre sweeps (down then up): crossings stop improving after a few.
const SWEEPS: usize = 8;
/// Passes moving nodes towards their neighbours.
const RELAX: usize = 6;

/// A box's place: centre and size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placed {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Placed {
    pub fn left(&self) -> f64 {
        self.x - self.width / 2.0
    }
    pub fn top(&self) -> f64 {
        self.y - self.height / 2.0
    }
}

/// Where everything of a drawing goes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// One per box of the drawing, in its order.
    pub boxes: Vec<Placed>,
    /// One per arrow of the drawing: the points from the producer's bottom to
    /// the consumer's top (empty for an arrow whose ends are not boxes).
    pub arrows: Vec<Vec<(f64, f64)>>,
    /// One per cluster: the rectangle around its members (left, top, width, height).
    pub clusters: Vec<(f64, f64, f64, f64)>,
    pub width: f64,
    pub height: f64,
}

/// The size of a box with these label lines.
pub fn box_size(lines: &[String], small: bool) -> (f64, f64) {
    let scale = if small { 0.85 } else { 1.0 };
    let chars = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    (
        chars * CHAR_WIDTH * scale + 2.0 * PADDING,
        lines.len() as f64 * LINE_HEIGHT * scale + PADDING,
    )
}

/// A vertex of the layered graph: a box, or a dummy point of a long edge.
struct Vertex {
    width: f64,
    height: f64,
    /// The cluster index of a box, to keep members together.
    cluster: Option<usize>,
    layer: usize,
    x: f64,
}

pub fn layout(d: &Drawing<'_>, sizes: &[(f64, f64)]) -> Layout {
    let index: FxHashMap<&str, usize> = d
        .boxes
        .iter()
        .enumerate()
        .map(|(i, b)| (b.node.id.as_str(), i))
        .collect();
    let clusters: FxHashMap<&str, usize> = d
        .clusters
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id, i))
        .collect();
    let n = d.boxes.len();
    let edges: Vec<Option<(usize, usize)>> = d
        .arrows
        .iter()
        .map(|a| Some((*index.get(a.from)?, *index.get(a.to)?)).filter(|(u, v)| u != v))
        .collect();
    let acyclic = break_cycles(n, &edges);
    let layers = assign_layers(n, &acyclic);
    let mut vertices: Vec<Vertex> = (0..n)
        .map(|i| Vertex {
            width: sizes[i].0,
            height: sizes[i].1,
            cluster: d.boxes[i].cluster.and_then(|c| clusters.get(c).copied()),
            layer: layers[i],
            x: 0.0,
        })
        .collect();
    // Each arrow as a chain of vertices, one per layer it crosses.
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(edges.len());
    for e in &acyclic {
        let Some((u, v, reversed)) = *e else {
            chains.push(Vec::new());
            continue;
        };
        let mut chain = vec![u];
        // A long edge inside a cluster stays inside; any other is kept out.
        let cluster = vertices[u]
            .cluster
            .filter(|c| vertices[v].cluster == Some(*c));
        for layer in vertices[u].layer + 1..vertices[v].layer {
            vertices.push(Vertex {
                width: 2.0,
                height: 0.0,
                cluster,
                layer,
                x: 0.0,
            });
            chain.push(vertices.len() - 1);
        }
        chain.push(v);
        if reversed {
            chain.reverse();
        }
        chains.push(chain);
    }
    let order = order_layers(&mut vertices, &chains);
    place_x(&mut vertices, &order, &chains);
    clear_clusters(&mut vertices, &order, d.clusters.len());
    normalise(&mut vertices);
    finish(d, &vertices, &order, &chains, n)
}

/// Every edge as `(from, to, reversed)` with back edges of a depth-first search
/// turned around, so the rest is a DAG.
fn break_cycles(n: usize, edges: &[Option<(usize, usize)>]) -> Vec<Option<(usize, usize, bool)>> {
    let mut out_edges = vec![Vec::new(); n];
    for (k, e) in edges.iter().enumerate() {
        if let Some((u, _)) = e {
            out_edges[*u].push(k);
        }
    }
    let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
    let mut reversed = vec![false; edges.len()];
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some((u, next)) = stack.pop() {
            if let Some(&k) = out_edges[u].get(next) {
                stack.push((u, next + 1));
                let (_, v) = edges[k].expect("an edge");
                match state[v] {
                    0 => {
                        state[v] = 1;
                        stack.push((v, 0));
                    }
                    1 => reversed[k] = true,
                    _ => {}
                }
            } else {
                state[u] = 2;
            }
        }
    }
    edges
        .iter()
        .zip(reversed)
        .map(|(e, r)| e.map(|(u, v)| if r { (v, u, true) } else { (u, v, false) }))
        .collect()
}

/// Longest-path layers; then every vertex without predecessors moves down to
/// just above its nearest successor.
fn assign_layers(n: usize, edges: &[Option<(usize, usize, bool)>]) -> Vec<usize> {
    let mut preds = vec![Vec::new(); n];
    let mut succs = vec![Vec::new(); n];
    for (u, v, _) in edges.iter().flatten() {
        preds[*v].push(*u);
        succs[*u].push(*v);
    }
    let mut indegree: Vec<usize> = preds.iter().map(Vec::len).collect();
    let mut queue: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut layer = vec![0usize; n];
    let mut topo = Vec::with_capacity(n);
    while let Some(u) = queue.pop() {
        topo.push(u);
        for &v in &succs[u] {
            layer[v] = layer[v].max(layer[u] + 1);
            indegree[v] -= 1;
            if indegree[v] == 0 {
                queue.push(v);
            }
        }
    }
    for &u in topo.iter().rev() {
        if preds[u].is_empty() {
            if let Some(min) = succs[u].iter().map(|&v| layer[v]).min() {
                layer[u] = min.saturating_sub(1).max(layer[u]);
            }
        }
    }
    layer
}

/// Each layer's vertices, left to right, after barycentre sweeps.
fn order_layers(vertices: &mut [Vertex], chains: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let layers = vertices.iter().map(|v| v.layer).max().map_or(0, |m| m + 1);
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (i, v) in vertices.iter().enumerate() {
        order[v.layer].push(i);
    }
    let mut up = vec![Vec::new(); vertices.len()];
    let mut down = vec![Vec::new(); vertices.len()];
    for chain in chains {
        for w in chain.windows(2) {
            let (a, b) = if vertices[w[0]].layer < vertices[w[1]].layer {
                (w[0], w[1])
            } else {
                (w[1], w[0])
            };
            down[a].push(b);
            up[b].push(a);
        }
    }
    let mut position = vec![0.0f64; vertices.len()];
    let renumber = |order: &Vec<Vec<usize>>, position: &mut Vec<f64>| {
        for layer in order {
            for (k, &v) in layer.iter().enumerate() {
                position[v] = k as f64;
            }
        }
    };
    renumber(&order, &mut position);
    for sweep in 0..SWEEPS {
        let downward = sweep % 2 == 0;
        let layer_ids: Vec<usize> = if downward {
            (1..layers).collect()
        } else {
            (0..layers.saturating_sub(1)).rev().collect()
        };
        for l in layer_ids {
            let neighbours = if downward { &up } else { &down };
            let key: Vec<(usize, f64)> = order[l]
                .iter()
                .map(|&v| {
                    let ns = &neighbours[v];
                    let b = if ns.is_empty() {
                        position[v]
                    } else {
                        ns.iter().map(|&u| position[u]).sum::<f64>() / ns.len() as f64
                    };
                    (v, b)
                })
                .collect();
            let clustered = keep_clusters_together(vertices, &key);
            let mut sorted = clustered;
            sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
            order[l] = sorted.into_iter().map(|(v, _)| v).collect();
            for (k, &v) in order[l].iter().enumerate() {
                position[v] = k as f64;
            }
        }
    }
    order
}

/// Sort keys with a cluster's members at their mean key (in their own order), so
/// that sorting keeps them adjacent.
fn keep_clusters_together(vertices: &[Vertex], key: &[(usize, f64)]) -> Vec<(usize, f64)> {
    let mut sums: FxHashMap<usize, (f64, usize)> = FxHashMap::default();
    for &(v, b) in key {
        if let Some(c) = vertices[v].cluster {
            let e = sums.entry(c).or_insert((0.0, 0));
            e.0 += b;
            e.1 += 1;
        }
    }
    key.iter()
        .map(|&(v, b)| match vertices[v].cluster {
            Some(c) => {
                let (sum, count) = sums[&c];
                (v, sum / count as f64 + b * 1e-6 + c as f64 * 1e-9)
            }
            None => (v, b),
        })
        .collect()
}

/// x positions: packed left to right, then moved towards the mean of their
/// neighbours, each layer kept in order and apart.
fn place_x(vertices: &mut [Vertex], order: &[Vec<usize>], chains: &[Vec<usize>]) {
    let mut neighbours = vec![Vec::new(); vertices.len()];
    for chain in chains {
        for w in chain.windows(2) {
            neighbours[w[0]].push(w[1]);
            neighbours[w[1]].push(w[0]);
        }
    }
    for layer in order {
        let mut x = 0.0;
        for &v in layer {
            vertices[v].x = x + vertices[v].width / 2.0;
            x += vertices[v].width + NODE_GAP;
        }
    }
    for _ in 0..RELAX {
        for layer in order {
            let desired: Vec<f64> = layer
                .iter()
                .map(|&v| {
                    let ns = &neighbours[v];
                    if ns.is_empty() {
                        vertices[v].x
                    } else {
                        ns.iter().map(|&u| vertices[u].x).sum::<f64>() / ns.len() as f64
                    }
                })
                .collect();
            pack(vertices, layer, &desired);
        }
    }
}

/// Shifts everything so the leftmost box starts at the margin.
fn normalise(vertices: &mut [Vertex]) {
    let min = vertices
        .iter()
        .map(|v| v.x - v.width / 2.0)
        .fold(f64::INFINITY, f64::min);
    if min.is_finite() {
        for v in vertices.iter_mut() {
            v.x += MARGIN - min;
        }
    }
}

/// Moves vertices that are not in a cluster out of its rectangle: in every
/// layer the cluster spans, those ordered before its members (or left of its
/// centre) go left of it, the others right, pushing their neighbours along.
fn clear_clusters(vertices: &mut [Vertex], order: &[Vec<usize>], clusters: usize) {
    for c in 0..clusters {
        let members = || vertices.iter().filter(move |v| v.cluster == Some(c));
        let (Some(lo), Some(hi)) = (
            members().map(|v| v.layer).min(),
            members().map(|v| v.layer).max(),
        ) else {
            continue;
        };
        let left = members()
            .map(|v| v.x - v.width / 2.0)
            .fold(f64::INFINITY, f64::min)
            - CLUSTER_PAD;
        let right = members()
            .map(|v| v.x + v.width / 2.0)
            .fold(f64::NEG_INFINITY, f64::max)
            + CLUSTER_PAD;
        let centre = (left + right) / 2.0;
        for layer in &order[lo..=hi] {
            let first_member = layer.iter().position(|&v| vertices[v].cluster == Some(c));
            let before = |k: usize, v: &Vertex| match first_member {
                Some(m) => k < m,
                None => v.x < centre,
            };
            // Right side: left to right, each pushed past the cluster and its left neighbour.
            let mut edge = right;
            for (k, &v) in layer.iter().enumerate() {
                if vertices[v].cluster == Some(c) || before(k, &vertices[v]) {
                    continue;
                }
                let half = vertices[v].width / 2.0;
                vertices[v].x = vertices[v].x.max(edge + NODE_GAP / 2.0 + half);
                edge = vertices[v].x + half;
            }
            // Left side: right to left.
            let mut edge = left;
            for (k, &v) in layer.iter().enumerate().rev() {
                if vertices[v].cluster == Some(c) || !before(k, &vertices[v]) {
                    continue;
                }
                let half = vertices[v].width / 2.0;
                vertices[v].x = vertices[v].x.min(edge - NODE_GAP / 2.0 - half);
                edge = vertices[v].x - half;
            }
        }
    }
}

/// Places `layer` as near `desired` as its order and gaps allow: pushed right
/// past each left neighbour, then the whole layer shifted so the pushes balance.
fn pack(vertices: &mut [Vertex], layer: &[usize], desired: &[f64]) {
    let mut placed = Vec::with_capacity(layer.len());
    let mut right_edge = f64::NEG_INFINITY;
    for (k, &v) in layer.iter().enumerate() {
        let half = vertices[v].width / 2.0;
        let x = desired[k].max(right_edge + NODE_GAP + half);
        right_edge = x + half;
        placed.push(x);
    }
    let shift =
        desired.iter().zip(&placed).map(|(d, p)| d - p).sum::<f64>() / layer.len().max(1) as f64;
    for (k, &v) in layer.iter().enumerate() {
        vertices[v].x = placed[k] + shift.min(0.0);
    }
}

/// y positions, arrows' points and clusters' rectangles.
fn finish(
    d: &Drawing<'_>,
    vertices: &[Vertex],
    order: &[Vec<usize>],
    chains: &[Vec<usize>],
    boxes: usize,
) -> Layout {
    let mut layer_y = Vec::with_capacity(order.len());
    let mut y = MARGIN;
    for layer in order {
        let h = layer
            .iter()
            .map(|&v| vertices[v].height)
            .fold(0.0, f64::max);
        layer_y.push(y + h / 2.0);
        y += h + LAYER_GAP;
    }
    let placed: Vec<Placed> = vertices
        .iter()
        .map(|v| Placed {
            x: v.x,
            y: layer_y[v.layer],
            width: v.width,
            height: v.height,
        })
        .collect();
    let arrows = chains
        .iter()
        .map(|chain| {
            let (Some(&first), Some(&last)) = (chain.first(), chain.last()) else {
                return Vec::new();
            };
            let mut points = Vec::with_capacity(chain.len());
            let downward = placed[first].y <= placed[last].y;
            for (k, &v) in chain.iter().enumerate() {
                let p = placed[v];
                let half = p.height / 2.0;
                let dy = match (k == 0, k + 1 == chain.len(), downward) {
                    (true, _, true) | (_, true, false) => half,
                    (true, _, false) | (_, true, true) => -half,
                    _ => 0.0,
                };
                points.push((p.x, p.y + dy));
            }
            points
        })
        .collect();
    let clusters = (0..d.clusters.len())
        .map(|c| {
            let members: Vec<&Placed> = (0..boxes)
                .filter(|&i| vertices[i].cluster == Some(c))
                .map(|i| &placed[i])
                .collect();
            let left = members
                .iter()
                .map(|p| p.left())
                .fold(f64::INFINITY, f64::min);
            let top = members
                .iter()
                .map(|p| p.top())
                .fold(f64::INFINITY, f64::min);
            let right = members
                .iter()
                .map(|p| p.left() + p.width)
                .fold(f64::NEG_INFINITY, f64::max);
            let bottom = members
                .iter()
                .map(|p| p.top() + p.height)
                .fold(f64::NEG_INFINITY, f64::max);
            if members.is_empty() {
                (0.0, 0.0, 0.0, 0.0)
            } else {
                (
                    left - CLUSTER_PAD,
                    top - 22.0,
                    right - left + 2.0 * CLUSTER_PAD,
                    bottom - top + 22.0 + CLUSTER_PAD,
                )
            }
        })
        .collect::<Vec<_>>();
    let width = placed
        .iter()
        .map(|p| p.left() + p.width)
        .chain(clusters.iter().map(|c| c.0 + c.2))
        .fold(0.0, f64::max)
        + MARGIN;
    Layout {
        boxes: placed[..boxes].to_vec(),
        arrows,
        clusters,
        width,
        height: y - LAYER_GAP + MARGIN,
    }
}
