//! The graph of a [`Scope`]: which instructions (selected by [`super::select`],
//! fusions opened into their fused computation), their operand edges with the
//! consumers' maps (their analysis queries, in parallel), XLA's coalescing verdicts on
//! kernels' reads, each node's output bytes and kernel time (XLA's GPU performance
//! model, when drawn for a GPU), what a profile measured of each, and "more" stubs
//! where the cap or the radius cut the graph.

use rustc_hash::{FxHashMap, FxHashSet};

use super::{class, select, Direction, Edge, EdgeClass, Graph, Node, NodeKind};
use crate::analysis::{self, OperandIndexing, Query};
use crate::coalescing::{self, site::calling_fusion, Device, Subject};
use crate::cost;
use crate::model::{ComputationId, InstrId, Instruction, Module};

/// What to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The instructions within `radius` hops of one.
    Around {
        computation: ComputationId,
        instruction: InstrId,
        radius: usize,
    },
    /// A whole computation (up to the cap).
    Computation(ComputationId),
}

/// Which fusions open into their fused computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    /// The fusion the graph is drawn around, if it is one.
    Focus,
    /// Every fusion in the graph (while the cap lasts).
    All,
    None,
}

/// How big a graph may get and what it says.
#[derive(Clone, Debug)]
pub struct Options {
    /// Instruction nodes at most (stubs and fusion groups come on top): what a
    /// layout draws in well under a second and a reader can still follow.
    pub max_nodes: usize,
    pub open: Open,
    /// Ask XLA's coalescing analysis about kernels' reads, and its performance
    /// model about kernels' times, on this GPU (GPU modules only: the caller
    /// decides, as for the cost lenses).
    pub device: Option<Device>,
    /// A profile joined to the module: each node's measured time and share of the
    /// step ([`super::Node::measured`]), which its colour shows.
    pub measured: Option<std::sync::Arc<crate::profile::ModuleProfile>>,
    /// How long the maps on the edges may take together ([`MAPS_BUDGET`] by
    /// default): what is not composed by then reads "not computed", and the graph
    /// is partial. Tests that compare every map give it more.
    pub maps_budget: std::time::Duration,
}

/// The default cap on instruction nodes.
pub const DEFAULT_MAX_NODES: usize = 150;

impl Default for Options {
    fn default() -> Self {
        Options {
            max_nodes: DEFAULT_MAX_NODES,
            open: Open::Focus,
            device: None,
            measured: None,
            maps_budget: MAPS_BUDGET,
        }
    }
}

/// Outputs of a multi-output consumer whose maps an edge unites (a fusion with
/// 40 outputs reads its operands alike through most of them).
const MAX_OUTPUTS: usize = 16;

/// How long the maps on a graph's edges may take together (see [`with_maps`]):
/// most of the 200 ms a graph request may take. With consumers that call equal
/// computations answered once and fused computations composed once per request,
/// the radius-3 graph around ENTRY's middle instruction of a 60 MB live module (a
/// parameter read by 32 calls of a whole step) completes in about 165 ms on two
/// cores once the module's view is built.
pub const MAPS_BUDGET: std::time::Duration = std::time::Duration::from_millis(170);

/// One output's answer: the output and the maps from it to every operand.
pub type Answer = (usize, std::sync::Arc<analysis::InstructionIndexing>);

/// A node's id: `c{computation}i{instruction}`.
pub fn id_of(c: ComputationId, i: InstrId) -> String {
    format!("c{}i{}", c.0, i.0)
}

/// An instruction in the graph, and the open fusion it belongs to.
#[derive(Clone, Copy)]
struct Member {
    computation: ComputationId,
    instruction: InstrId,
    group: Option<(ComputationId, InstrId)>,
}

/// An edge found, before its maps are known.
struct Pending {
    computation: ComputationId,
    consumer: InstrId,
    operand: usize,
    producer: InstrId,
    path: Vec<usize>,
}

/// The graph of `scope` in `module`, whose analysis view is `view`.
pub fn build(
    module: &Module,
    view: &analysis::Module<'_>,
    scope: &Scope,
    options: &Options,
) -> Graph {
    let (home, focus) = match *scope {
        Scope::Around {
            computation,
            instruction,
            ..
        } => {
            let c = module.computation(computation);
            (computation, Some(select::unfolded(&c, instruction)))
        }
        Scope::Computation(c) => (c, None),
    };
    // A fused computation that calls itself (broken input) has no outside to draw.
    let enclosing = calling_fusion(module, home)
        .map(|(c, f)| (c, f.id))
        .filter(|(c, _)| *c != home);
    let (members, opened) = members(module, scope, focus, enclosing, options);
    let set: FxHashSet<(ComputationId, InstrId)> = members
        .iter()
        .map(|m| (m.computation, m.instruction))
        .collect();
    let mut graph = Graph {
        focus: focus.map(|f| id_of(home, f)),
        context: enclosing.map(|(c, f)| id_of(c, f)),
        ..Graph::default()
    };
    let mut kernels = Kernels {
        module,
        launches: FxHashMap::default(),
        found: Vec::new(),
    };
    // Every instruction's node: its index, computation and instruction.
    let mut placed = Vec::with_capacity(members.len() + 1);
    if let Some((c, f)) = enclosing {
        kernels.note(graph.nodes.len(), c, f);
        placed.push((graph.nodes.len(), c, f));
        graph
            .nodes
            .push(node(module, c, f, None, NodeKind::Fusion { open: true }));
    }
    let mut pending = Vec::new();
    for m in &members {
        let kind = kind_of(module, m, &opened);
        kernels.note(graph.nodes.len(), m.computation, m.instruction);
        placed.push((graph.nodes.len(), m.computation, m.instruction));
        graph
            .nodes
            .push(node(module, m.computation, m.instruction, m.group, kind));
        pending.extend(edges_into(module, m, &set));
        graph.nodes.extend(stubs(module, m, &set));
    }
    if let Some(device) = &options.device {
        kernels.time(view, device, &mut graph.nodes);
    }
    if let Some(profile) = &options.measured {
        measure(profile, &placed, &mut graph.nodes);
    }
    graph.edges = with_maps(module, view, &pending, options, &mut graph.partial);
    graph.partial |= crate::budget::exhausted();
    graph
}

/// The instructions of the graph: the scope's (selected in the home computation),
/// then the members of the fusions that open; and the fusions that opened.
fn members(
    module: &Module,
    scope: &Scope,
    focus: Option<InstrId>,
    enclosing: Option<(ComputationId, InstrId)>,
    options: &Options,
) -> (Vec<Member>, FxHashSet<(ComputationId, InstrId)>) {
    let cap = options.max_nodes.max(1);
    let opens = |c: ComputationId, i: InstrId| {
        let fusion = module.computation(c).instruction(i).opcode.name() == "fusion";
        fusion
            && match options.open {
                Open::Focus => Some(i) == focus,
                Open::All => true,
                Open::None => false,
            }
    };
    // Opening fusions share half the cap with the home computation.
    let home_cap = |c: ComputationId| {
        let focus_opens = focus.is_some_and(|f| opens(c, f));
        match options.open == Open::All || focus_opens {
            true => cap - cap / 2,
            false => cap,
        }
    };
    let (home, selected) = match *scope {
        Scope::Around {
            computation,
            radius,
            ..
        } => {
            let c = module.computation(computation);
            let start = focus.unwrap_or(InstrId(0));
            (
                computation,
                select::around(&c, start, radius, home_cap(computation)),
            )
        }
        Scope::Computation(id) => (id, select::whole(&module.computation(id), home_cap(id))),
    };
    let mut out: Vec<Member> = selected
        .iter()
        .map(|&i| Member {
            computation: home,
            instruction: i,
            group: enclosing,
        })
        .collect();
    let mut opened = FxHashSet::default();
    for &i in &selected {
        if out.len() >= cap {
            break;
        }
        if !opens(home, i) {
            continue;
        }
        let called = module.called_computation(module.computation(home).instruction(i), "calls");
        // A fusion calling its own computation, or the one around it (recursive
        // calls, broken input), opens into nothing new.
        let around = enclosing.map(|(c, _)| c);
        let Some(fused) = called.filter(|f| f.id != home && Some(f.id) != around) else {
            continue;
        };
        let inside = select::whole(&fused, cap - out.len());
        if inside.is_empty() {
            continue;
        }
        opened.insert((home, i));
        out.extend(inside.into_iter().map(|f| Member {
            computation: fused.id,
            instruction: f,
            group: Some((home, i)),
        }));
    }
    (out, opened)
}

fn kind_of(module: &Module, m: &Member, opened: &FxHashSet<(ComputationId, InstrId)>) -> NodeKind {
    let i = module.computation(m.computation).instruction(m.instruction);
    match i.opcode.name() {
        _ if i.parameter_number.is_some() => NodeKind::Parameter,
        "parameter" => NodeKind::Parameter,
        "constant" => NodeKind::Constant,
        "fusion" => NodeKind::Fusion {
            open: opened.contains(&(m.computation, m.instruction)),
        },
        _ => NodeKind::Instruction,
    }
}

fn node(
    module: &Module,
    c: ComputationId,
    i: InstrId,
    group: Option<(ComputationId, InstrId)>,
    kind: NodeKind,
) -> Node {
    let computation = module.computation(c);
    let instruction = computation.instruction(i);
    Node {
        id: id_of(c, i),
        name: instruction.name.to_string(),
        opcode: instruction.opcode.name().to_string(),
        shape: instruction.shape.logical_text(),
        computation: computation.name.clone(),
        group: group.map(|(gc, gi)| id_of(gc, gi)),
        kind,
        range: computation.abs(instruction.name_range),
        parameter_number: instruction
            .parameter_number
            .and_then(|k| usize::try_from(k).ok()),
        is_root: computation.root == Some(i),
        time: None,
        bytes: u64::try_from(cost::hlo_cost::output_leaf_bytes(&instruction.shape)).ok(),
        measured: None,
    }
}

/// Each instruction node's measurement in `profile` (`placed`: a node's index and
/// its instruction).
fn measure(
    profile: &crate::profile::ModuleProfile,
    placed: &[(usize, ComputationId, InstrId)],
    nodes: &mut [Node],
) {
    for &(index, c, i) in placed {
        nodes[index].measured = profile.get(c, i).map(|m| super::Measurement {
            us: m.mean_us,
            percent: profile.percent(m),
            count: m.count,
        });
    }
}

/// The nodes to time on the graph's GPU: instructions that XLA launches as
/// kernels of their own (not a fused computation's members, nor what only names
/// a buffer), as the cost lenses choose them.
struct Kernels<'a> {
    module: &'a Module,
    launches: FxHashMap<ComputationId, bool>,
    /// The node's index in the graph, and its instruction.
    found: Vec<(usize, ComputationId, InstrId)>,
}

impl Kernels<'_> {
    /// Notes node `index` (instruction `i` of computation `c`) if it is a kernel.
    fn note(&mut self, index: usize, c: ComputationId, i: InstrId) {
        let module = self.module;
        let launched = *self
            .launches
            .entry(c)
            .or_insert_with(|| cost::report::launches_kernels(module, c));
        let instruction = module.computation(c).instruction(i);
        if launched && !instruction.synthetic && cost::is_kernel(instruction) {
            self.found.push((index, c, i));
        }
    }

    /// Each kernel's estimated time on `device`, into its node, in parallel as the
    /// edges' maps are (a transformer's entry puts 74 kernels in one graph). A
    /// kernel the model cannot run, or that no model covers, has no time.
    fn time(self, view: &analysis::Module<'_>, device: &Device, nodes: &mut [Node]) {
        use rayon::prelude::*;
        let module = self.module;
        let models = cost::step::Models::new(module, device, cost::step::StepOptions::default());
        let times: Vec<Option<cost::Duration>> = self
            .found
            .par_iter()
            .map(|&(_, c, i)| {
                if crate::budget::exhausted() {
                    return None;
                }
                let computation = module.computation(c);
                let instruction = computation.instruction(i);
                let model = cost::Model::new(view, module, computation, device);
                let estimate = cost::step::estimate_kernel(&model, &models, instruction)?.ok()?;
                (!estimate.cost.is_infinite()).then_some(estimate.cost.exec_time)
            })
            .collect();
        for (&(index, _, _), time) in self.found.iter().zip(times) {
            nodes[index].time = time;
        }
    }
}

/// The edges from members into member `m`.
fn edges_into(
    module: &Module,
    m: &Member,
    set: &FxHashSet<(ComputationId, InstrId)>,
) -> Vec<Pending> {
    let c = module.computation(m.computation);
    let i = c.instruction(m.instruction);
    (0..i.operands.len())
        .filter_map(|k| {
            let (p, path) = select::producer(&c, i, k)?;
            set.contains(&(m.computation, p)).then_some(Pending {
                computation: m.computation,
                consumer: m.instruction,
                operand: k,
                producer: p,
                path,
            })
        })
        .collect()
}

/// "N more" stubs for the producers and users of `m` the graph leaves out.
fn stubs(module: &Module, m: &Member, set: &FxHashSet<(ComputationId, InstrId)>) -> Vec<Node> {
    let c = module.computation(m.computation);
    let i: &Instruction = c.instruction(m.instruction);
    let hidden = |ids: Vec<InstrId>| {
        ids.into_iter()
            .filter(|p| !set.contains(&(m.computation, *p)))
            .count()
    };
    let operands = hidden(select::producers(&c, i));
    let users = hidden(select::users(&c, m.instruction));
    let id = id_of(m.computation, m.instruction);
    [
        (operands, Direction::Operands, "+in"),
        (users, Direction::Users, "+out"),
    ]
    .into_iter()
    .filter(|(count, _, _)| *count > 0)
    .map(|(count, direction, suffix)| Node {
        id: format!("{id}{suffix}"),
        name: match count {
            1 => format!("1 more {}", direction.name().trim_end_matches('s')),
            _ => format!("{count} more {}", direction.name()),
        },
        opcode: String::new(),
        shape: String::new(),
        computation: c.name.clone(),
        group: m.group.map(|(gc, gi)| id_of(gc, gi)),
        kind: NodeKind::More {
            of: id.clone(),
            count,
            direction,
        },
        range: c.abs(i.name_range),
        parameter_number: None,
        is_root: false,
        time: None,
        measured: None,
        bytes: None,
    })
    .collect()
}

/// The edges with their consumers' maps (one batch of queries, every output of
/// a multi-output consumer up to [`MAX_OUTPUTS`]) and, on kernels' reads, the
/// coalescing verdicts.
fn with_maps(
    module: &Module,
    view: &analysis::Module<'_>,
    pending: &[Pending],
    options: &Options,
    partial: &mut bool,
) -> Vec<Edge> {
    let mut consumers: Vec<(ComputationId, InstrId)> = Vec::new();
    for p in pending {
        if consumers.last() != Some(&(p.computation, p.consumer)) {
            consumers.push((p.computation, p.consumer));
        }
    }
    consumers.dedup();
    let mut queries = Vec::new();
    let mut owner = Vec::new();
    for (k, &(c, i)) in consumers.iter().enumerate() {
        for output in 0..outputs_asked(view, (c, i)) {
            owner.push(k);
            queries.push(Query {
                computation: c.index(),
                instruction: i.index(),
                direction: analysis::Direction::OutputToInput,
                output_id: output,
                operand_id: 0,
                physical_layout: false,
            });
        }
    }
    // Each query on its own, in parallel: `analyze_many` would first class every
    // computation of the module to share answers (746 ms on a 60 MB module for a
    // graph of four nodes), and a graph asks about a few consumers. A consumer that
    // calls a computation (a `call` of a whole layer) composes through all of it: the
    // maps share one time budget, so that the graph costs what its radius holds, not
    // what its consumers call; what it cuts short reads as unknown, and the graph
    // says it is partial.
    let maps_budget = crate::budget::current().child(options.maps_budget);
    let (answers, memo) = answer_sharing(view, &queries, &owner, &consumers, &maps_budget);
    *partial |= maps_budget.cut().is_some();
    let mut per_consumer: FxHashMap<(ComputationId, InstrId), Vec<Answer>> = FxHashMap::default();
    for ((q, answer), k) in queries.iter().zip(answers).zip(owner) {
        per_consumer
            .entry(consumers[k])
            .or_default()
            .push((q.output_id, answer));
    }
    let verdicts = coalescing_verdicts(module, view, &consumers, options);
    let described = describe_edges(view, pending, &per_consumer);
    let edges = pending
        .iter()
        .zip(described)
        .map(|(p, (map, mut class))| {
            let key = (p.computation, p.consumer);
            let outputs = per_consumer
                .get(&key)
                .map(Vec::as_slice)
                .unwrap_or_default();
            *partial |= outputs.iter().any(|(_, a)| {
                a.entries
                    .get(p.operand)
                    .is_some_and(|e| e.unknown == Some(crate::analysis::Unknown::Stopped))
            });
            let coalesced = verdicts.get(&(key, p.operand)).copied();
            if coalesced == Some(false) {
                class = EdgeClass::Uncoalesced;
            }
            Edge {
                from: id_of(p.computation, p.producer),
                to: id_of(p.computation, p.consumer),
                operand_index: p.operand,
                tuple_index: p.path.clone(),
                map,
                class,
                coalesced,
            }
        })
        .collect();
    // The memo holds every composition of the request (a whole step's, some 30 ms
    // to free): freed on the pool once the edges are described, not beside them.
    rayon::spawn(move || drop((memo, per_consumer)));
    edges
}

/// The map text and class ([`edge_map`]) of every pending edge, in parallel. An
/// edge into a consumer with the same op and the same answers (shared, see
/// [`answer_sharing`]) as an earlier edge's, into the same operand, takes that
/// edge's: ENTRY's 32 calls of equal copies of a step read a parameter alike, and
/// uniting 16 outputs' maps of 81 operands, then printing them, 32 times over
/// took longer than composing them.
fn describe_edges(
    view: &analysis::Module<'_>,
    pending: &[Pending],
    per_consumer: &FxHashMap<(ComputationId, InstrId), Vec<Answer>>,
) -> Vec<(String, EdgeClass)> {
    use rayon::prelude::*;
    let outputs = |p: &Pending| {
        per_consumer
            .get(&(p.computation, p.consumer))
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    let op = |p: &Pending| {
        view.get(p.computation.index())
            .and_then(|v| v.nodes.get(p.consumer.index()))
            .map(|n| &n.op)
    };
    // The edges described so far, by the answers they read (each output and the
    // address of its answer) and their operand.
    type Alike = (Vec<(usize, usize)>, usize);
    let mut first: FxHashMap<Alike, Vec<usize>> = FxHashMap::default();
    // For each edge, the edge it is described as.
    let mut source = Vec::with_capacity(pending.len());
    for (e, p) in pending.iter().enumerate() {
        let answers = outputs(p)
            .iter()
            .map(|(o, a)| (*o, std::sync::Arc::as_ptr(a) as usize))
            .collect();
        let alike = first.entry((answers, p.operand)).or_default();
        match alike.iter().find(|&&d| op(&pending[d]) == op(p)) {
            Some(&d) => source.push(d),
            None => {
                alike.push(e);
                source.push(e);
            }
        }
    }
    let distinct: Vec<usize> = (0..pending.len()).filter(|&e| source[e] == e).collect();
    let texts: FxHashMap<usize, (String, EdgeClass)> = distinct
        .par_iter()
        .map(|&e| {
            let p = &pending[e];
            let key = (p.computation, p.consumer);
            (e, edge_map(view, key, p.operand, outputs(p)))
        })
        .collect();
    source.iter().map(|d| texts[d].clone()).collect()
}

/// The answer to every query (`owner[q]`: the index of its consumer in
/// `consumers`), each consumer's outputs in parallel, under `budget`.
///
/// Two kinds of work are shared. A consumer that calls a computation
/// structurally equal to an earlier consumer's (same op, same shapes: a module's
/// repeated layers, or ENTRY calling every copy of a step) takes that one's
/// answers, as [`analysis::analyze_many`] shares them, unless an answer names
/// instructions of its own computation. And the outputs of every consumer compose
/// through the same fused computations: each is composed once
/// ([`analysis::memo`]).
fn answer_sharing(
    view: &analysis::Module<'_>,
    queries: &[Query],
    owner: &[usize],
    consumers: &[(ComputationId, InstrId)],
    budget: &crate::budget::Budget,
) -> (
    Vec<std::sync::Arc<analysis::InstructionIndexing>>,
    std::sync::Arc<analysis::memo::Memo>,
) {
    use rayon::prelude::*;
    use std::sync::Arc;
    let representative = representatives(view, consumers, budget);
    let memo = analysis::memo::Memo::new();
    let run = |q: &Query| memo.run(|| budget.run(|| analysis::analyze_shared(view, q)));
    let own: Vec<Option<Arc<analysis::InstructionIndexing>>> = queries
        .par_iter()
        .zip(owner)
        .map(|(q, &k)| (representative[k] == k).then(|| run(q)))
        .collect();
    // A represented consumer's query: the representative's query of the same output.
    let mut by_output: FxHashMap<(usize, usize), usize> = FxHashMap::default();
    for (i, (q, &k)) in queries.iter().zip(owner).enumerate() {
        if representative[k] == k {
            by_output.insert((k, q.output_id), i);
        }
    }
    let answers = queries
        .par_iter()
        .zip(owner)
        .enumerate()
        .map(|(i, (q, &k))| {
            let shared = match &own[i] {
                Some(answer) => return answer.clone(),
                None => by_output
                    .get(&(representative[k], q.output_id))
                    .and_then(|&r| own[r].clone()),
            };
            match shared {
                Some(answer) if !answer.names_instructions() => answer,
                _ => run(q),
            }
        })
        .collect();
    (answers, memo)
}

/// For each consumer, the index of the first consumer whose answers it can take:
/// itself, or an earlier composite consumer with the same op (shapes, attributes)
/// whose called computation is structurally equal to its own
/// ([`analysis::structure::same`]). The comparisons of one round run in parallel.
fn representatives(
    view: &analysis::Module<'_>,
    consumers: &[(ComputationId, InstrId)],
    budget: &crate::budget::Budget,
) -> Vec<usize> {
    use rayon::prelude::*;
    let node = |k: usize| {
        let (c, i) = consumers[k];
        view.get(c.index()).and_then(|v| v.nodes.get(i.index()))
    };
    let mut representative: Vec<usize> = (0..consumers.len()).collect();
    let mut open: Vec<usize> = (0..consumers.len())
        .filter(|&k| node(k).is_some_and(|n| n.is_composite()))
        .collect();
    while let Some((&first, rest)) = open.split_first() {
        if budget.is_exhausted() {
            break;
        }
        let Some(a) = node(first) else { break };
        let equal: Vec<bool> = rest
            .par_iter()
            .map(|&k| {
                node(k).is_some_and(|b| {
                    a.op == b.op
                        && budget.run(|| analysis::structure::same(view, a.called[0], b.called[0]))
                })
            })
            .collect();
        let mut next = Vec::new();
        for (&k, equal) in rest.iter().zip(equal) {
            match equal {
                true => representative[k] = first,
                false => next.push(k),
            }
        }
        open = next;
    }
    representative
}

/// The outputs of consumer `(c, i)` whose maps its edges unite: the first
/// [`MAX_OUTPUTS`] (none for an instruction the view does not have).
pub fn outputs_asked(view: &analysis::Module<'_>, (c, i): (ComputationId, InstrId)) -> usize {
    view.get(c.index())
        .and_then(|v| v.nodes.get(i.index()))
        .map_or(0, |node| node.op.shape.output_count().clamp(1, MAX_OUTPUTS))
}

/// The short text and class of the edge into operand `k` of consumer `(c, i)`:
/// its maps from each output in `outputs` (the output and the answer for it),
/// united (before any coalescing verdict).
pub fn edge_map(
    view: &analysis::Module<'_>,
    (c, i): (ComputationId, InstrId),
    k: usize,
    outputs: &[Answer],
) -> (String, EdgeClass) {
    let Some(node) = view.get(c.index()).and_then(|v| v.nodes.get(i.index())) else {
        return ("unknown".to_string(), EdgeClass::Unknown);
    };
    let extents = |s: Option<&analysis::ArrayShape>| s.map(|a| a.dims.clone()).unwrap_or_default();
    let target = extents(node.op.operands.get(k).and_then(|s| s.as_array()));
    let mut united = OperandIndexing::none();
    let mut class = None::<EdgeClass>;
    let mut domain = None;
    for (output, answer) in outputs {
        let Some(entry) = answer.entries.get(k) else {
            continue;
        };
        if entry.maps.is_empty() && entry.unknown.is_none() {
            continue; // this output does not read the operand
        }
        let d = extents(node.op.shape.output(*output));
        let c = class::of_indexing(entry, &d, &target);
        class = Some(class.map_or(c, |old| old.max(c)));
        domain.get_or_insert(d);
        united.extend(entry.clone());
    }
    let domain = domain.unwrap_or_default();
    (
        class::short_text(&united, &domain, &target),
        class.unwrap_or(EdgeClass::Unknown),
    )
}

/// XLA's verdict on each operand read of the kernels among `consumers` (fusions
/// in computations that are not fused), when a device is given.
fn coalescing_verdicts(
    module: &Module,
    view: &analysis::Module<'_>,
    consumers: &[(ComputationId, InstrId)],
    options: &Options,
) -> FxHashMap<((ComputationId, InstrId), usize), bool> {
    let mut out = FxHashMap::default();
    let Some(device) = &options.device else {
        return out;
    };
    for &(c, i) in consumers {
        let computation = module.computation(c);
        let instruction = computation.instruction(i);
        if instruction.opcode.name() != "fusion" || calling_fusion(module, c).is_some() {
            continue;
        }
        let Ok(subject) = Subject::new(module, view, computation, instruction) else {
            continue;
        };
        let report = coalescing::analyze(
            &subject,
            &coalescing::Options {
                sizes: None,
                device: device.clone(),
                operand: None,
            },
            None,
        );
        for verdict in report.operands {
            out.insert(((c, i), verdict.index), verdict.coalesced);
        }
    }
    out
}
