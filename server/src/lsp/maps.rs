//! The indexing-map sections of hovers and the inlay hints of fused computations,
//! from the analysis layer.
//!
//! The analysis (`crate::analysis`) is not on main yet: until it is, no maps are
//! shown. This module is the single seam where it plugs in.

use super::settings::Settings;
use super::snapshot::Snapshot;
use crate::model::{ComputationId, Instruction, Module};

/// Markdown with the output-to-input maps of `instruction` (per operand, in XLA's
/// text format, with domain and utilization), and inside a fused computation the
/// composed maps from the fusion's output; `None` when no analysis is available.
pub fn instruction_maps(
    _snapshot: &Snapshot,
    _module: &Module,
    _computation: ComputationId,
    _instruction: &Instruction,
    _settings: &Settings,
) -> Option<String> {
    None
}
