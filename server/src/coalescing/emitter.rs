//! Which GPU emitter XLA picks for a fusion, and the shape facts it decides by:
//! the heroes of the roots, a reduction's kind and contiguous components, a
//! transpose's normalized form. Facts about XLA (`HloFusionAnalysis::
//! GetEmitterFusionKind`, `FindNonTrivialHero`, `IsReductionFromOrToContiguous
//! Dimensions`, `GetReductionKindAndContiguousComponents`,
//! `IsUnnestedReductionFasterThanElemental`, `GetDescriptionForTiledTransposeEmitter`);
//! the launch parameters of each emitter are in [`super::launch`].

use super::device::Device;
use super::subject::Subject;
use crate::analysis::{ArrayShape, Node};
use crate::model::shape::check_permutation;
use crate::model::Opcode;

/// Transposes whose swapped dimensions are both at least this long are tiled
/// (XLA's `kMinDimensionToTransposeTiled`).
pub const MIN_DIMENSION_TO_TRANSPOSE_TILED: i64 = 16;
/// ... or both at least this long with a product of at least
/// [`MIN_TOTAL_DIMENSIONS_TO_TRANSPOSE_TILED`] (`kMinDimensionToTransposeTiled2`).
pub const MIN_DIMENSION_TO_TRANSPOSE_TILED_2: i64 = 8;
/// `kMinTotalDimensionsToTransposeTiled` = 64 * 128.
pub const MIN_TOTAL_DIMENSIONS_TO_TRANSPOSE_TILED: i64 = 64 * 128;

/// A reduction as XLA's reduction emitters see it: three contiguous groups of
/// physical dimensions. Row: `[major reduced, kept, minor reduced]`; column:
/// `[major kept, reduced, minor kept]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReductionDims {
    pub is_row: bool,
    pub dims: [i64; 3],
}

/// A transpose normalized as XLA's emitter sees it: physical dimensions with
/// unit ones dropped and neighbours that stay neighbours merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NormalizedTranspose {
    /// The operand's normalized extents, major to minor.
    pub input: Vec<i64>,
    /// Output normalized dimension `j` is input normalized dimension `permutation[j]`.
    pub permutation: Vec<usize>,
}

impl NormalizedTranspose {
    /// The input dimension that becomes the output's most minor one.
    pub fn moved_dim(&self) -> usize {
        *self.permutation.last().unwrap_or(&0)
    }

    /// XLA's tiled-transpose test: the most minor dimension moves, and both
    /// swapped dimensions are long enough.
    pub fn is_tiled(&self) -> bool {
        let rank = self.input.len();
        if rank < 2 || self.moved_dim() == rank - 1 {
            return false;
        }
        let a = self.input[rank - 1];
        let b = self.input[self.moved_dim()];
        (a >= MIN_DIMENSION_TO_TRANSPOSE_TILED && b >= MIN_DIMENSION_TO_TRANSPOSE_TILED)
            || (a >= MIN_DIMENSION_TO_TRANSPOSE_TILED_2
                && b >= MIN_DIMENSION_TO_TRANSPOSE_TILED_2
                && a.saturating_mul(b) >= MIN_TOTAL_DIMENSIONS_TO_TRANSPOSE_TILED)
    }
}

/// The emitter XLA would use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EmitterKind {
    /// One thread per output element (or `unroll` consecutive ones).
    Loop,
    /// A reduction emitter for the hero reduce `hero` of root `root`.
    Reduction { dims: ReductionDims },
    /// The shared-memory transpose emitter.
    Transpose { transpose: NormalizedTranspose },
    /// An emitter outside this model (Triton, cuDNN, custom calls, scatter).
    Other(String),
}

/// The roots of the fused computation: the operands of a tuple root, else the root.
pub fn roots(nodes: &[Node], root: usize) -> Vec<usize> {
    // Unresolved operands (undefined names) are `usize::MAX`: not roots.
    match nodes.get(root) {
        Some(n) if n.op.opcode == "tuple" => n
            .operands
            .iter()
            .copied()
            .filter(|&o| o < nodes.len())
            .collect(),
        Some(_) => vec![root],
        None => vec![],
    }
}

fn is_elementwise(node: &Node) -> bool {
    Opcode::from_name(&node.op.opcode).is_elementwise()
}

/// Whether `node` only moves or maps values one to one on the way to its hero:
/// XLA's `IsIntermediate` (elementwise ops with at most `allowed_operands`
/// operands, bitcasts, and reshapes that are bitcasts).
fn is_intermediate(node: &Node, allowed_operands: usize) -> bool {
    let n = node.operands.len();
    if n == 0 || n > allowed_operands {
        return false;
    }
    match node.op.opcode.as_str() {
        "bitcast" => true,
        "reshape" => reshape_is_bitcast(node),
        "copy" => !changes_layout(node),
        _ => is_elementwise(node),
    }
}

/// A copy that changes the layout is a physical transpose.
fn changes_layout(node: &Node) -> bool {
    let (Some(out), Some(inp)) = (
        node.op.shape.as_array(),
        node.op.operands.first().and_then(|s| s.as_array()),
    ) else {
        return false;
    };
    drop_unit_dims(&out.physical_dims(), &out.major_to_minor())
        != drop_unit_dims(&inp.physical_dims(), &inp.major_to_minor())
        && out.major_to_minor() != inp.major_to_minor()
}

fn drop_unit_dims(extents: &[i64], order: &[usize]) -> Vec<(i64, usize)> {
    extents
        .iter()
        .zip(order)
        .filter(|(&n, _)| n != 1)
        .map(|(&n, &d)| (n, d))
        .collect()
}

/// A reshape between default layouts is a bitcast; with layouts, when the
/// physical extents without unit dimensions agree.
fn reshape_is_bitcast(node: &Node) -> bool {
    let (Some(out), Some(inp)) = (
        node.op.shape.as_array(),
        node.op.operands.first().and_then(|s| s.as_array()),
    ) else {
        return false;
    };
    if out.has_default_layout() && inp.has_default_layout() {
        return true;
    }
    let squeeze = |a: &ArrayShape| -> Vec<i64> {
        a.physical_dims().into_iter().filter(|&n| n != 1).collect()
    };
    squeeze(out) == squeeze(inp) && out.element_count() == inp.element_count()
}

/// The hero of `root`: the instruction whose emitter shapes the kernel, found
/// through intermediates (XLA's `FindNonTrivialHero`); a tiled transpose is also
/// found through elementwise ops with up to 3 operands.
pub fn hero(nodes: &[Node], root: usize) -> usize {
    let mut hero = root;
    // Bounded: malformed text can make operand chains cyclic.
    for _ in 0..nodes.len() {
        if !(is_intermediate(&nodes[hero], 1) && nodes[hero].operands[0] < nodes.len()) {
            break;
        }
        let next = nodes[hero].operands[0];
        if nodes[next].parameter_number.is_some() {
            break;
        }
        hero = next;
    }
    if tiled_transpose(&nodes[hero]).is_some() {
        return hero;
    }
    // Breadth-first through intermediates with up to 3 operands.
    let mut queue = std::collections::VecDeque::from([hero]);
    let mut seen = vec![false; nodes.len()];
    while let Some(n) = queue.pop_front() {
        if std::mem::replace(&mut seen[n], true) {
            continue;
        }
        if tiled_transpose(&nodes[n]).is_some() {
            return n;
        }
        if n == hero || is_intermediate(&nodes[n], 3) {
            for &o in &nodes[n].operands {
                if o < nodes.len() && nodes[o].parameter_number.is_none() {
                    queue.push_back(o);
                }
            }
        }
    }
    hero
}

/// A `transpose` node's `dimensions`, as indices (`None` when one is negative or
/// they are missing).
pub fn transpose_permutation(node: &Node) -> Option<Vec<usize>> {
    node.op
        .attrs
        .dimensions
        .as_ref()?
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect()
}

/// The normalized transpose of a `transpose` (or layout-changing `copy`) node, if
/// XLA's transpose emitter tiles it.
pub fn tiled_transpose(node: &Node) -> Option<NormalizedTranspose> {
    let permutation: Vec<usize> = match node.op.opcode.as_str() {
        "transpose" => transpose_permutation(node)?,
        "copy" => (0..node.op.shape.as_array()?.rank()).collect(),
        _ => return None,
    };
    let out = node.op.shape.as_array()?;
    let inp = node.op.operands.first()?.as_array()?;
    let t = normalize_transpose(inp, out, &permutation)?;
    t.is_tiled().then_some(t)
}

/// The physical permutation of a transpose, with unit dimensions dropped and
/// runs that stay adjacent merged.
pub fn normalize_transpose(
    input: &ArrayShape,
    output: &ArrayShape,
    permutation: &[usize],
) -> Option<NormalizedTranspose> {
    let rank = input.rank();
    if output.rank() != rank || rank == 0 || check_permutation(permutation, rank).is_err() {
        return None;
    }
    let in_order = input.major_to_minor();
    let mut in_position = vec![0; rank];
    for (p, &l) in in_order.iter().enumerate() {
        in_position[l] = p;
    }
    // Output physical dim j is input physical dim q[j].
    let q: Vec<usize> = output
        .major_to_minor()
        .iter()
        .map(|&o| permutation.get(o).map(|&l| in_position[l]))
        .collect::<Option<_>>()?;
    let extent = |p: usize| input.dims[in_order[p]];
    let kept: Vec<usize> = q.iter().copied().filter(|&p| extent(p) != 1).collect();
    // Group runs of consecutive input positions in output order.
    let mut groups: Vec<Vec<usize>> = vec![];
    for p in kept {
        match groups.last_mut() {
            Some(g) if next_kept(input, &in_order, *g.last()?) == Some(p) => g.push(p),
            _ => groups.push(vec![p]),
        }
    }
    // Normalized input order: groups sorted by their first input position.
    let mut by_input: Vec<usize> = (0..groups.len()).collect();
    by_input.sort_by_key(|&g| groups[g][0]);
    let input_extents: Vec<i64> = by_input
        .iter()
        .map(|&g| groups[g].iter().map(|&p| extent(p)).product())
        .collect();
    let permutation = (0..groups.len())
        .map(|g| by_input.iter().position(|&x| x == g))
        .collect::<Option<_>>()?;
    Some(NormalizedTranspose {
        input: input_extents,
        permutation,
    })
}

/// The next input position after `p` whose extent is not 1 (unit dimensions in
/// between do not break adjacency).
fn next_kept(input: &ArrayShape, in_order: &[usize], p: usize) -> Option<usize> {
    ((p + 1)..in_order.len()).find(|&x| input.dims[in_order[x]] != 1)
}

/// Positions of `dims` in the physical (major-to-minor) order of `shape`,
/// ignoring unit dimensions, are consecutive (XLA's `AreDimensionsConsecutive`
/// after its passes have dropped degenerate dimensions).
fn consecutive(shape: &ArrayShape, dims: &[usize]) -> bool {
    let order: Vec<usize> = shape
        .major_to_minor()
        .into_iter()
        .filter(|&d| shape.dims[d] != 1)
        .collect();
    let mut positions: Vec<usize> = dims
        .iter()
        .filter_map(|d| order.iter().position(|x| x == d))
        .collect();
    positions.sort_unstable();
    positions.windows(2).all(|w| w[1] == w[0] + 1)
}

/// Products of the physical dimensions more major than, inside, and more minor
/// than the consecutive group `middle` (XLA's `PartitionShapeByMiddleDimensions`).
fn partition(shape: &ArrayShape, middle: &[usize]) -> [i64; 3] {
    let mut values = [1i64, 1, 1];
    let mut segment = 2; // minor, middle (1), major (0)
    for d in shape.layout() {
        if shape.dims[d] == 1 {
            continue;
        }
        let inside = middle.contains(&d);
        if segment == 2 && inside {
            segment = 1;
        } else if segment == 1 && !inside {
            segment = 0;
        }
        values[segment] = values[segment].saturating_mul(shape.dims[d]);
    }
    values
}

/// XLA's `GetReductionKindAndContiguousComponents` for a reduce of `input`
/// over `reduced`.
pub fn reduction_dims(input: &ArrayShape, reduced: &[usize]) -> ReductionDims {
    let kept: Vec<usize> = (0..input.rank())
        .filter(|d| !reduced.contains(d) && input.dims[*d] != 1)
        .collect();
    let reduced: Vec<usize> = reduced
        .iter()
        .copied()
        .filter(|&d| d < input.rank() && input.dims[d] != 1)
        .collect();
    let elements = input.element_count().unwrap_or(0);
    if kept.is_empty() {
        return ReductionDims {
            is_row: true,
            dims: [1, 1, elements],
        };
    }
    if consecutive(input, &kept) {
        let p = partition(input, &kept);
        if p[1] == 1 {
            return ReductionDims {
                is_row: true,
                dims: [1, 1, p[0].saturating_mul(p[2])],
            };
        }
        if p[2] == 1 {
            return ReductionDims {
                is_row: false,
                dims: [1, p[0], p[1]],
            };
        }
        return ReductionDims {
            is_row: true,
            dims: p,
        };
    }
    let p = partition(input, &reduced);
    if p[2] == 1 {
        return ReductionDims {
            is_row: true,
            dims: [1, p[0], p[1]],
        };
    }
    ReductionDims {
        is_row: false,
        dims: p,
    }
}

/// XLA's `IsUnnestedReductionFasterThanElemental`: small reductions are emitted
/// by the loop emitter instead.
pub fn reduction_emitter_is_faster(r: &ReductionDims, warp: i64) -> bool {
    if r.is_row {
        return r.dims[2] >= warp || (r.dims[2] > 0 && warp % r.dims[2] == 0);
    }
    let (major, minor) = (r.dims[1], r.dims[2]);
    let prefer_loop = major < warp
        || (major < 2 * warp && minor < warp)
        || (major < 4 * warp && minor < 8)
        || (major < 8 * warp && minor < 3);
    !prefer_loop
}

/// The reduction dims of a reduce node when a reduction emitter handles it
/// (XLA's `IsReductionFromOrToContiguousDimensions`).
pub fn reduction_hero(node: &Node, warp: i64) -> Option<ReductionDims> {
    if node.op.opcode != "reduce" {
        return None;
    }
    let input = node.op.operands.first()?.as_array()?;
    let reduced = node.op.dimensions(input.rank()).ok()?;
    let kept: Vec<usize> = (0..input.rank()).filter(|d| !reduced.contains(d)).collect();
    if !(consecutive(input, &kept) || consecutive(input, &reduced)) {
        return None;
    }
    let r = reduction_dims(input, &reduced);
    reduction_emitter_is_faster(&r, warp).then_some(r)
}

/// The smallest element width among the fusion's parameters (inputs) or roots
/// (outputs), in bits.
pub fn smallest_bits(subject: &Subject<'_>, nodes: &[usize]) -> Option<i64> {
    nodes
        .iter()
        .filter_map(|&i| subject.node_bits.get(i).copied().flatten())
        .min()
}

/// The emitter XLA picks for `subject` (per `GetEmitterFusionKind`), with the
/// hero of each root.
pub fn choose(subject: &Subject<'_>, device: &Device) -> (EmitterKind, Vec<(usize, usize)>) {
    let graph = subject.graph();
    let nodes = &graph.nodes;
    let roots = roots(nodes, graph.root);
    let heroes: Vec<(usize, usize)> = roots.iter().map(|&r| (r, hero(nodes, r))).collect();
    if let Some(kind) = subject.backend_kind.as_deref() {
        if kind.contains("triton") || kind.contains("cudnn") || kind.contains("custom") {
            return (EmitterKind::Other(format!("a {kind} fusion")), heroes);
        }
    }
    if subject.fusion_kind.as_deref() == Some("kCustom") {
        return (EmitterKind::Other("a custom fusion".into()), heroes);
    }
    let params: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].parameter_number.is_some())
        .collect();
    let small_in = smallest_bits(subject, &params).is_some_and(|b| b < 8);
    let small_out = smallest_bits(subject, &roots).is_some_and(|b| b < 8);
    if small_in || small_out {
        return (EmitterKind::Loop, heroes);
    }
    for &(_, h) in &heroes {
        if let Some(dims) = reduction_hero(&nodes[h], device.warp_size) {
            return (EmitterKind::Reduction { dims }, heroes);
        }
    }
    let transposes: Vec<NormalizedTranspose> = heroes
        .iter()
        .filter_map(|&(_, h)| tiled_transpose(&nodes[h]))
        .collect();
    if let Some(first) = transposes.first() {
        // XLA requires the transpose heroes to agree.
        if transposes.iter().all(|t| t == first) {
            return (
                EmitterKind::Transpose {
                    transpose: first.clone(),
                },
                heroes,
            );
        }
    }
    if roots.len() == 1 && nodes[roots[0]].op.opcode == "scatter" {
        return (EmitterKind::Other("the scatter emitter".into()), heroes);
    }
    (EmitterKind::Loop, heroes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(dims: &[i64], m2m: &[usize]) -> ArrayShape {
        ArrayShape::with_layout(dims.to_vec(), m2m.to_vec())
    }

    #[test]
    fn reduction_kinds() {
        let row = reduction_dims(&ArrayShape::new(vec![100, 64, 512]), &[2]);
        assert_eq!(
            row,
            ReductionDims {
                is_row: true,
                dims: [1, 6400, 512]
            }
        );
        let col = reduction_dims(&ArrayShape::new(vec![100, 64, 32]), &[1]);
        assert_eq!(
            col,
            ReductionDims {
                is_row: false,
                dims: [100, 64, 32]
            }
        );
        // Reducing the physically minor dimension of a transposed layout: a row.
        let r = reduction_dims(&shape(&[64, 100], &[0, 1]), &[0]);
        assert_eq!(
            r,
            ReductionDims {
                is_row: true,
                dims: [1, 100, 64]
            }
        );
        let small = reduction_dims(&ArrayShape::new(vec![5696, 10, 4]), &[1]);
        assert!(!reduction_emitter_is_faster(&small, 32));
        assert!(reduction_emitter_is_faster(&col, 32));
    }

    #[test]
    fn transpose_normalization() {
        let t = normalize_transpose(
            &ArrayShape::new(vec![100, 64, 32]),
            &ArrayShape::new(vec![32, 100, 64]),
            &[2, 0, 1],
        )
        .unwrap();
        assert_eq!(t.input, vec![6400, 32]);
        assert_eq!(t.permutation, vec![1, 0]);
        assert!(t.is_tiled());
        let outer = normalize_transpose(
            &ArrayShape::new(vec![100, 32, 64]),
            &ArrayShape::new(vec![32, 100, 64]),
            &[1, 0, 2],
        )
        .unwrap();
        assert_eq!(outer.permutation, vec![1, 0, 2]);
        assert!(!outer.is_tiled());
        let unit = normalize_transpose(
            &ArrayShape::new(vec![1, 6400, 32]),
            &ArrayShape::new(vec![1, 32, 6400]),
            &[0, 2, 1],
        )
        .unwrap();
        assert_eq!(
            (unit.input.clone(), unit.permutation.clone()),
            (vec![6400, 32], vec![1, 0])
        );
        // A layout change without a logical transpose (a copy).
        let copy = normalize_transpose(
            &shape(&[64, 128], &[1, 0]),
            &shape(&[64, 128], &[0, 1]),
            &[0, 1],
        )
        .unwrap();
        assert_eq!((copy.input, copy.permutation), (vec![64, 128], vec![1, 0]));
    }
}
