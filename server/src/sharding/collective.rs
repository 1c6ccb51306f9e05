//! A collective of a sharded program explained: which devices it joins and
//! along which mesh axes, how many bytes each device sends and receives, and
//! which sharding calls for it (the dimension summed, gathered or exchanged,
//! traced back to the sharded instruction it comes from).
//!
//! The bytes are those of the algorithms XLA's collective models assume
//! (`SolLatencyEstimator`'s ring for all-reduce, all-gather and
//! reduce-scatter, one exchange per peer for all-to-all, one transfer per pair
//! for collective-permute); the time is the collective model's
//! ([`crate::cost::collective`]), which a caller asks for on a GPU.
//!
//! The cause is found on the indexing maps ([`crate::analysis`]): the map from
//! the collective's operand back to each sharded instruction it is computed
//! from says which of that instruction's dimensions were summed on the way (a
//! dimension indexed by reduction variables only) and which dimension the
//! collective gathers or exchanges.

use rustc_hash::FxHashSet;

use crate::algebra::{IndexingMap, Var, VarKind};
use crate::analysis::{self, Query};
use crate::cost::collective::groups::{parse_pairs, DeviceList};
use crate::cost::collective::op::Op;
use crate::model::{ComputationRef, Instruction, Module, Opcode};

use super::mesh::{self, Mesh};
use super::{parse, Leaf};

/// Bytes one device sends and receives in a collective.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Traffic {
    pub sends: i64,
    pub receives: i64,
    /// The algorithm and its formula: "ring: 2(n-1)/n × 32 B, n = 4".
    pub rule: String,
}

/// What a collective joins, moves and why.
#[derive(Clone, Debug)]
pub struct CollectiveReport {
    /// The collective (a `*-start`'s synchronous name).
    pub op: Op,
    /// The device groups (a permute's pairs as two-device groups).
    pub groups: Vec<Vec<i64>>,
    /// The module's mesh and the axes each group runs along, when it has one
    /// and the groups follow it.
    pub mesh: Option<Mesh>,
    pub axes: Option<Vec<usize>>,
    /// The pieces of axes (`'d':(2)4`) the groups run along when they do not
    /// follow whole axes: `(axis, pre, size)`.
    pub sub_axes: Option<Vec<(usize, i64, i64)>>,
    pub traffic: Option<Traffic>,
    /// Sentences saying which sharding calls for it.
    pub why: Vec<String>,
}

/// The report of `instruction` if it is a collective, or why its devices
/// cannot be read.
pub fn explain(
    module: &Module,
    view: &analysis::Module<'_>,
    computation: ComputationRef<'_>,
    instruction: &Instruction,
) -> Option<Result<CollectiveReport, String>> {
    let op = Op::from_name(instruction.opcode.name())?.synchronous();
    Some(report(module, view, computation, instruction, op))
}

fn report(
    module: &Module,
    view: &analysis::Module<'_>,
    computation: ComputationRef<'_>,
    instruction: &Instruction,
    op: Op,
) -> Result<CollectiveReport, String> {
    let mesh = mesh::of_module(module);
    let pairs = match instruction.attribute("source_target_pairs") {
        Some(a) => parse_pairs(computation.src(a.value_range))?,
        None => vec![],
    };
    let groups = if op.is_permute() {
        pairs.iter().map(|&(s, t)| vec![s, t]).collect()
    } else {
        let written = match instruction.attribute("replica_groups") {
            Some(a) => DeviceList::parse(computation.src(a.value_range))?.groups(),
            None => vec![],
        };
        if written.is_empty() {
            let n = mesh
                .as_ref()
                .map_or(module.num_partitions(), Mesh::num_devices);
            vec![(0..n.max(1)).collect()]
        } else {
            written
        }
    };
    let axes = mesh.as_ref().and_then(|m| {
        if op.is_permute() {
            None
        } else {
            m.axes_of_groups(&groups)
        }
    });
    let sub_axes = match (&mesh, &axes) {
        (Some(m), None) if !op.is_permute() => m.sub_axes_of_groups(&groups),
        _ => None,
    };
    let n = groups.first().map_or(1, |g| g.len() as i64);
    let bytes = operand_bytes(computation, instruction);
    let traffic = bytes.and_then(|b| traffic(op, b, n, &pairs));
    let mut why = vec![];
    if op.is_permute() {
        why.extend(permute_words(mesh.as_ref(), &pairs));
    } else if let Some(group) = groups.first() {
        let dims = integer_list(computation, instruction, "dimensions");
        let sources = sharded_sources(view, computation, instruction);
        let over = over(mesh.as_ref(), axes.as_deref(), sub_axes.as_deref());
        why.extend(cause(op, &sources, group, &dims, &over));
        if op == Op::AllGather {
            why.extend(readers(computation, instruction));
        }
    }
    Ok(CollectiveReport {
        op,
        groups,
        mesh,
        axes,
        sub_axes,
        traffic,
        why,
    })
}

/// The bytes of the collective's operands (every array; a tuple's leaves).
fn operand_bytes(computation: ComputationRef<'_>, instruction: &Instruction) -> Option<i64> {
    let mut total = 0i64;
    for operand in &instruction.operands {
        let shape = computation.instruction(operand.target?).shape.clone();
        for leaf in shape.leaves() {
            total = total.saturating_add((leaf.bit_size()? + 7) / 8);
        }
    }
    Some(total)
}

/// The bytes each device sends and receives for `bytes` of operand among
/// groups of `n`, by the algorithm XLA's models assume.
pub fn traffic(op: Op, bytes: i64, n: i64, pairs: &[(i64, i64)]) -> Option<Traffic> {
    let b = crate::units::signed_bytes(bytes);
    let ring = |times: i64, over: i64, rule: String| {
        let moved = times.saturating_mul(n - 1).saturating_mul(over) / n.max(1);
        Traffic {
            sends: moved,
            receives: moved,
            rule,
        }
    };
    if n <= 1 && !op.is_permute() {
        return Some(Traffic {
            sends: 0,
            receives: 0,
            rule: "a group of one device moves nothing".into(),
        });
    }
    Some(match op {
        Op::AllReduce | Op::AllReduceStart => ring(
            2,
            bytes,
            format!("ring all-reduce: 2(n-1)/n × {b}, n = {n}"),
        ),
        Op::AllGather | Op::AllGatherStart => {
            let gathered = bytes.saturating_mul(n);
            ring(
                1,
                gathered,
                format!(
                    "ring all-gather: (n-1)/n × the {} gathered, n = {n}",
                    crate::units::signed_bytes(gathered)
                ),
            )
        }
        Op::ReduceScatter => ring(
            1,
            bytes,
            format!("ring reduce-scatter: (n-1)/n × {b}, n = {n}"),
        ),
        Op::AllToAll => ring(
            1,
            bytes,
            format!("all-to-all: keeps 1/n of {b}, sends the rest, one part per peer, n = {n}"),
        ),
        Op::CollectivePermute | Op::CollectivePermuteStart => {
            let most = |side: fn(&(i64, i64)) -> i64| {
                let mut counts = rustc_hash::FxHashMap::<i64, i64>::default();
                for p in pairs {
                    *counts.entry(side(p)).or_default() += 1;
                }
                counts.values().copied().max().unwrap_or(0)
            };
            let (out, into) = (most(|p| p.0), most(|p| p.1));
            Traffic {
                sends: bytes.saturating_mul(out),
                receives: bytes.saturating_mul(into),
                rule: format!(
                    "{} pair{}: a source sends its {b} to each of its targets",
                    pairs.len(),
                    if pairs.len() == 1 { "" } else { "s" }
                ),
            }
        }
        Op::CollectiveBroadcast => Traffic {
            sends: bytes,
            receives: bytes,
            rule: format!("broadcast: the source sends {b}, every other device receives it"),
        },
        Op::RaggedAllToAll => return None,
    })
}

/// `dimensions={1}` as integers (empty without it).
fn integer_list(
    computation: ComputationRef<'_>,
    instruction: &Instruction,
    name: &str,
) -> Vec<usize> {
    let Some(a) = instruction.attribute(name) else {
        return vec![];
    };
    computation
        .src(a.value_range)
        .trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .filter_map(|t| t.trim().parse().ok())
        .collect()
}

/// A sharded instruction the collective's operand is computed from, with the
/// map from the operand's index space to its own and the instructions between.
pub struct Source<'a> {
    pub instruction: &'a Instruction,
    pub leaf: Leaf,
    pub map: IndexingMap,
    /// The instructions from the source (excluded) to the collective's operand.
    pub path: Vec<&'a Instruction>,
}

/// How far back the walk goes: a collective's cause is a few instructions away.
const MAX_VISITED: usize = 64;

/// The nearest sharded instructions the collective's first operand is
/// computed from, walking its producers breadth first and composing their
/// output-to-input maps; a walk stops at a sharded instruction, a parameter
/// without one, or a map the analysis does not know.
pub fn sharded_sources<'a>(
    view: &analysis::Module<'_>,
    computation: ComputationRef<'a>,
    collective: &Instruction,
) -> Vec<Source<'a>> {
    let mut out = vec![];
    let Some(start) = collective.operands.first().and_then(|o| o.target) else {
        return out;
    };
    let start_instr = computation.instruction(start);
    let Some(array) = start_instr.shape.as_array() else {
        return out;
    };
    let mut queue = std::collections::VecDeque::new();
    queue.push_back((start, 0usize, IndexingMap::identity(&array.dims), vec![]));
    let mut seen = FxHashSet::default();
    while let Some((id, output, map, path)) = queue.pop_front() {
        if !seen.insert((id, output)) || seen.len() > MAX_VISITED {
            continue;
        }
        let instr = computation.instruction(id);
        if let Some(leaf) = sharding_of(computation, instr, output) {
            out.push(Source {
                instruction: instr,
                leaf,
                map,
                path,
            });
            continue;
        }
        if instr.opcode == Opcode::Parameter {
            continue;
        }
        let mut path = path;
        path.insert(0, instr);
        if instr.opcode == Opcode::GetTupleElement {
            let index = integer_text(computation, instr, "index").unwrap_or(0);
            if let Some(t) = instr.operands.first().and_then(|o| o.target) {
                queue.push_back((t, index, map, path));
            }
            continue;
        }
        let query = Query::output_to_input(computation.id.index(), id.index(), output);
        let indexing = analysis::analyze(view, &query);
        for (k, entry) in indexing.entries.iter().enumerate() {
            let (Some(target), Some(m)) = (
                instr.operands.get(k).and_then(|o| o.target),
                entry.maps.first(),
            ) else {
                continue;
            };
            let mut composed = map.compose(&m.map);
            composed.simplify();
            if composed.is_undefined() {
                continue;
            }
            queue.push_back((target, 0, composed, path.clone()));
        }
    }
    out
}

fn integer_text(computation: ComputationRef<'_>, instr: &Instruction, name: &str) -> Option<usize> {
    computation
        .src(instr.attribute(name)?.value_range)
        .trim()
        .parse()
        .ok()
}

/// The v2 sharding of output `output` of `instr`, when it has one.
fn sharding_of(
    computation: ComputationRef<'_>,
    instr: &Instruction,
    output: usize,
) -> Option<Leaf> {
    let text = computation.src(instr.attribute("sharding")?.value_range);
    let sharding = parse(text).ok()?;
    sharding.element(output)?.v2()
}

/// The data dimensions of `leaf` whose tile changes from device to device
/// within `group`, each with the number of different tiles.
fn varying_dims(leaf: &Leaf, group: &[i64]) -> Vec<(usize, usize)> {
    let Some(rank) = leaf.data_rank() else {
        return vec![];
    };
    let indices: Vec<Vec<i64>> = group
        .iter()
        .filter_map(|&d| leaf.tile_index_for_device(d))
        .collect();
    (0..rank)
        .filter_map(|j| {
            let mut values: Vec<i64> = indices.iter().map(|i| i[j]).collect();
            values.sort_unstable();
            values.dedup();
            (values.len() > 1).then_some((j, values.len()))
        })
        .collect()
}

fn uses(expr: &crate::algebra::Expr, kind: VarKind) -> bool {
    let mut found = false;
    expr.for_each_var(&mut |v: Var| found |= v.kind == kind);
    found
}

/// `%a → %b`, or "directly".
fn path_text(path: &[&Instruction]) -> String {
    if path.is_empty() {
        return "directly".into();
    }
    let names: Vec<String> = path.iter().map(|i| format!("%{}", i.name)).collect();
    format!("through {}", names.join(" → "))
}

/// "over axis 1 ('y') of the 2x4 mesh", "over sub-axis 'd':(2)4 of the
/// 8-device mesh" or "over the devices of each group".
fn over(
    mesh: Option<&Mesh>,
    axes: Option<&[usize]>,
    sub_axes: Option<&[(usize, i64, i64)]>,
) -> String {
    match (mesh, axes, sub_axes) {
        (Some(m), Some(a), _) => format!("over {}", m.axes_text(a)),
        (Some(m), None, Some(p)) => format!("over {}", m.sub_axes_text(p)),
        _ => "over the devices of each group".into(),
    }
}

/// The sentences saying which sharding calls for the collective.
fn cause(op: Op, sources: &[Source<'_>], group: &[i64], dims: &[usize], over: &str) -> Vec<String> {
    let mut out = vec![];
    for source in sources {
        let varying = varying_dims(&source.leaf, group);
        let name = &source.instruction.name;
        let results = source.map.results();
        for &(j, ways) in &varying {
            let Some(expr) = results.get(j) else { continue };
            let summed = !uses(expr, VarKind::Dim) && uses(expr, VarKind::Range);
            match op {
                Op::AllReduce | Op::ReduceScatter if summed => out.push(format!(
                    "%{name} splits dim {j} {ways} ways {over}, and that dim is summed on the way here ({}): each device holds a partial sum of its part, which this {} adds{}",
                    path_text(&source.path),
                    op.name(),
                    match (op, dims.first()) {
                        (Op::ReduceScatter, Some(k)) => format!(", leaving dim {k} of the result split {} ways", group.len()),
                        _ => String::new(),
                    }
                )),
                Op::AllGather | Op::AllToAll => {
                    let Some(&k) = dims.first() else { continue };
                    if !expr.uses_var(Var::dim(k)) {
                        continue;
                    }
                    out.push(if op == Op::AllGather {
                        format!(
                            "%{name} splits dim {j} {ways} ways {over}; it reaches dim {k} of the operand ({}), which this all-gather makes whole on every device",
                            path_text(&source.path)
                        )
                    } else {
                        format!(
                            "%{name} splits dim {j} {ways} ways {over}; it reaches dim {k} of the operand ({}), whose blocks this all-to-all exchanges: the split moves to another dimension",
                            path_text(&source.path)
                        )
                    });
                }
                _ => {}
            }
        }
    }
    if out.is_empty() && op == Op::AllToAll {
        // The tuple form (no `dimensions=`): each operand is the block for one peer.
        for source in sources {
            for (j, ways) in varying_dims(&source.leaf, group) {
                out.push(format!(
                    "%{} splits dim {j} {ways} ways {over} and reaches this all-to-all {}, which sends each peer its block: the split moves to another dimension (a reshard)",
                    source.instruction.name,
                    path_text(&source.path)
                ));
            }
        }
    }
    if out.is_empty() && !sources.is_empty() && matches!(op, Op::AllReduce | Op::ReduceScatter) {
        let names: Vec<String> = sources
            .iter()
            .map(|s| format!("%{}", s.instruction.name))
            .collect();
        out.push(format!(
            "no dimension of {} split {over} is summed on the way here (a sum the maps do not show, or a sharding decided inside)",
            names.join(", ")
        ));
    }
    out
}

/// "read whole by %dot.3, %add.1": the users of an all-gather's result.
fn readers(computation: ComputationRef<'_>, instruction: &Instruction) -> Option<String> {
    let users: Vec<String> = computation
        .model()
        .instructions
        .iter()
        .filter(|i| i.operands.iter().any(|o| o.target == Some(instruction.id)))
        .map(|i| format!("%{}", i.name))
        .take(3)
        .collect();
    (!users.is_empty()).then(|| format!("the gathered array is read by {}", users.join(", ")))
}

/// "each device sends to the next device along axis 1 ('y') of the 2x4 mesh
/// (cyclic)": the shift a permute's pairs make, when they make one.
fn permute_words(mesh: Option<&Mesh>, pairs: &[(i64, i64)]) -> Option<String> {
    let mesh = mesh?;
    let mut axis: Option<(usize, i64)> = None;
    let mut wraps = false;
    for &(s, t) in pairs {
        let (cs, ct) = (mesh.coordinates(s), mesh.coordinates(t));
        let moved: Vec<usize> = (0..cs.len()).filter(|&k| cs[k] != ct[k]).collect();
        let [k] = moved[..] else { return None };
        let size = mesh.axes[k].1;
        let step = (ct[k] - cs[k]).rem_euclid(size);
        wraps |= ct[k] < cs[k] && step < size / 2 + 1 || ct[k] > cs[k] && step > size / 2;
        match axis {
            Some(a) if a != (k, step) => return None,
            _ => axis = Some((k, step)),
        }
    }
    let (k, step) = axis?;
    let size = mesh.axes[k].1;
    let direction = if step == 1 {
        "the next device".to_string()
    } else if step == size - 1 {
        "the previous device".to_string()
    } else {
        format!("the device {step} steps on")
    };
    Some(format!(
        "each device sends to {direction} along {}{}: a shift, as a pipeline or a halo exchange makes",
        mesh.axes_text(&[k]),
        if wraps { " (cyclic)" } else { "" }
    ))
}

/// The words of a [`CollectiveReport`]'s devices: "2 groups of 4 devices over
/// axis 1 ('y') of the 2x4 mesh".
pub fn groups_text(report: &CollectiveReport) -> String {
    let groups = &report.groups;
    let what = if report.op.is_permute() {
        "pair"
    } else {
        "group"
    };
    let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
    let size = match sizes.first() {
        Some(&s) if sizes.iter().all(|&x| x == s) => {
            format!(" of {s} device{}", if s == 1 { "" } else { "s" })
        }
        _ => " of different sizes".into(),
    };
    let mut out = format!(
        "{} {what}{}{}",
        groups.len(),
        if groups.len() == 1 { "" } else { "s" },
        if report.op.is_permute() {
            String::new()
        } else {
            size
        }
    );
    match (&report.mesh, &report.axes, &report.sub_axes) {
        (Some(m), Some(a), _) => out.push_str(&format!(" over {}", m.axes_text(a))),
        (Some(m), None, Some(p)) => out.push_str(&format!(" over {}", m.sub_axes_text(p))),
        _ => {}
    }
    out
}

/// "each device sends 48 B and receives 48 B (ring all-reduce: 2(n-1)/n × 32 B, n = 4)".
pub fn traffic_text(traffic: &Traffic) -> String {
    format!(
        "each device sends {} and receives {} ({})",
        crate::units::signed_bytes(traffic.sends),
        crate::units::signed_bytes(traffic.receives),
        traffic.rule
    )
}
