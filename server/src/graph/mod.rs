//! The dataflow around an instruction (or of a whole computation) as a graph to
//! draw, with on every edge *how* the consumer reads the producer: the operand
//! index, the short form of the indexing map and its class (identity, broadcast,
//! reduction, transpose-like, gather, uncoalesced).
//!
//! What people expect from Model Explorer's HLO view, on plain types: fusions are
//! groups that open into their fused computation, get-tuple-elements are folded
//! into the edges they feed (the edge says which tuple element), parameters and
//! constants are small nodes, and a cap on nodes leaves "N more" stubs where the
//! graph was cut, so a 50,000-instruction module stays drawable. Each node says
//! what it weighs: its output's bytes and, drawn for a GPU, its kernel's time;
//! with a profile ([`crate::profile`]), the time it was measured to take, and its
//! box is coloured by its share of the step ([`heat`]).
//!
//! * [`select`]: which instructions, within N hops, get-tuple-elements folded.
//! * [`class`]: an edge's class and short text, from its maps.
//! * [`build`]: the graph of a [`Scope`], maps from the analysis, coalescing verdicts.
//! * [`drawing`]: boxes, clusters and arrows, decided once for every renderer.
//! * [`heat`]: the colour of a measured node, by its share of the step.
//! * [`json`], [`dot`], [`svg`] (laid out by [`layout`]): what the front ends print.
//! * [`stablehlo`]: the graph of a `.mlir` file, its ops grouped by name scope.

pub mod build;
pub mod class;
pub mod dot;
pub mod drawing;
pub mod heat;
pub mod json;
pub mod layout;
pub mod select;
pub mod stablehlo;
pub mod svg;

use std::ops::Range;

pub use build::{build, Options, Scope};
pub use class::EdgeClass;

/// A graph ready to draw: nodes (fusion groups included) and operand edges.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// The node the graph is drawn around, if any.
    pub focus: Option<String>,
    /// The fusion whose fused computation the graph is drawn in: a group node
    /// around the others, not one of the instructions read.
    pub context: Option<String>,
    /// True when the analysis ran out of its time budget for some edge's maps.
    pub partial: bool,
}

impl Graph {
    /// The node with id `id`.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }
}

/// What a node stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Instruction,
    /// Drawn small: no work, only where the data comes from.
    Parameter,
    Constant,
    /// A fusion; `open` when its fused computation's instructions are in the graph
    /// as members (their `group` is this node's id).
    Fusion {
        open: bool,
    },
    /// A name scope of a StableHLO file's ops (`jit(f)/layer1`, [`stablehlo`]):
    /// `open`, a cluster around its ops (their `group` is this node's id);
    /// folded, one box standing for them.
    Namespace {
        open: bool,
    },
    /// Neighbours of `of` the cap (or the radius) left out.
    More {
        of: String,
        count: usize,
        direction: Direction,
    },
}

/// Which neighbours a "more" stub stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Operands,
    Users,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Operands => "operands",
            Direction::Users => "users",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Unique within the graph and stable across versions that keep the
    /// instruction's place: `c{computation}i{instruction}` (stubs add `+in`/`+out`).
    pub id: String,
    pub name: String,
    pub opcode: String,
    /// Without layout: `f32[8,128]`.
    pub shape: String,
    pub computation: String,
    /// The id of the open fusion whose fused computation holds this node.
    pub group: Option<String>,
    pub kind: NodeKind,
    /// The instruction's name in the document (bytes), for jumping to it.
    pub range: Range<usize>,
    /// `parameter(k)`'s number: an open fusion's operand `k` enters there.
    pub parameter_number: Option<usize>,
    /// The computation's root: an open fusion's value leaves from there.
    pub is_root: bool,
    /// XLA's GPU performance model's estimate of the kernel, for a kernel of a
    /// computation that launches kernels when the graph is drawn for a GPU
    /// ([`Options::device`]); `None` elsewhere (fused members, CPU dumps, stubs).
    pub time: Option<crate::cost::Duration>,
    /// Bytes of the instruction's output (every array of a tuple once); `None`
    /// for a stub.
    pub bytes: Option<u64>,
    /// What a profile measured of the instruction ([`Options::measured`]); `None`
    /// without a profile and for what it has no event of.
    pub measured: Option<Measurement>,
}

/// An instruction's measured time, as the profile joined to the module says it
/// ([`crate::profile::Measured`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// Mean per execution of the summed durations of its events (µs).
    pub us: f64,
    /// Share of the step, in percent.
    pub percent: f64,
    /// Events per execution.
    pub count: f64,
}

impl Measurement {
    /// `measured 214.00 µs · 12%`, `measured 3.10 ms · 40% · ×5`.
    pub fn line(&self) -> String {
        use crate::profile::report;
        let mut line = format!(
            "measured {} · {}",
            report::time(self.us),
            report::percent(self.percent)
        );
        if (self.count - 1.0).abs() > 1e-9 {
            line.push_str(&format!(" · ×{}", report::count(self.count)));
        }
        line
    }
}

impl Node {
    /// `≈ 12.30 µs · 4.0 MiB`, `4.0 MiB`: what the node costs, as its label and
    /// tooltip say it; `None` for a stub.
    pub fn cost_line(&self) -> Option<String> {
        let bytes = crate::memory::human_bytes(self.bytes?);
        Some(match self.time {
            Some(t) => format!("≈ {t} · {bytes}"),
            None => bytes,
        })
    }
}

/// Producer `from` is operand `operand_index` of consumer `to` (through the
/// get-tuple-elements `tuple_index` names, outermost first).
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub operand_index: usize,
    /// The tuple element read, when get-tuple-elements were folded into the edge.
    pub tuple_index: Vec<usize>,
    /// The short form of the consumer's output-to-operand maps.
    pub map: String,
    pub class: EdgeClass,
    /// XLA's coalescing verdict on a kernel's read, when it was asked.
    pub coalesced: Option<bool>,
}
