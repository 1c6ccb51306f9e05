//! The dataflow graph at the cursor ([`crate::graph`]): around the instruction
//! under it, or of the computation it is in when it is on no instruction (a
//! header, a blank line). Edges into kernels carry XLA's coalescing verdict on
//! the user's GPU, where GPU findings apply (not a CPU dump unless a GPU was
//! chosen). With a profile joined to the version, each node says what it was
//! measured to take, and its box is coloured by its share of the step.

use super::config::Config;
use super::cost::judged;
use super::snapshot::HloSnapshot;
use crate::graph::{self, Graph, Options, Scope};

/// Hops a graph at the cursor goes at most: beyond that the cap decides anyway.
pub const MAX_RADIUS: usize = 8;

/// The graph at byte `offset`, `radius` hops around the instruction there;
/// `measured`: the profile joined to the version ([`super::profile::joined`]).
pub fn graph_at(
    snapshot: &HloSnapshot,
    offset: usize,
    radius: usize,
    config: &Config,
    measured: Option<&super::profile::Joined>,
) -> Option<Graph> {
    let file = snapshot.model();
    let (module_index, computation) = file.computation_at(offset)?;
    let module = file.module(module_index);
    let scope = match computation.instruction_at(offset) {
        Some(i) => Scope::Around {
            computation: computation.id,
            instruction: i.id,
            radius: radius.min(MAX_RADIUS),
        },
        None => Scope::Computation(computation.id),
    };
    let view = snapshot.analysis_module(module_index);
    let options = Options {
        device: judged(snapshot, module, config).then(|| config.device.clone()),
        measured: measured.and_then(|j| j.module(module_index)).cloned(),
        ..Options::default()
    };
    Some(graph::build(module, &view, &scope, &options))
}
