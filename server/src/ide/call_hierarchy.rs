//! Call hierarchy over computations: the edges come from [`crate::model::callgraph`];
//! here they become items that say how each computation is called.

use std::ops::Range;

use super::navigation::{symbol_at, Symbol};
use crate::model::callgraph::{self, Call};
use crate::model::{ComputationId, HloFile, Module, ModuleId};

/// A computation in the hierarchy.
#[derive(Clone, Debug, PartialEq)]
pub struct CallItem {
    pub module: ModuleId,
    pub computation: ComputationId,
    pub name: String,
    /// How it is called (`fusion %fusion.3`, `(+2 more)`), or `ENTRY`.
    pub detail: Option<String>,
    pub range: Range<usize>,
    pub selection: Range<usize>,
}

/// The computation at `offset`: the one named there (its header or a `calls=`-like
/// attribute), else the one whose text contains `offset`.
pub fn prepare(file: &HloFile, offset: usize) -> Option<CallItem> {
    let (module, computation) = match symbol_at(file, offset) {
        Some(Symbol::Computation {
            module,
            computation,
        }) => (module, computation),
        _ => {
            let (module, c) = file.computation_at(offset)?;
            (module, c.id)
        }
    };
    Some(item(file, module, computation))
}

/// The computations calling computation `id`, one entry per caller with the ranges
/// of its calling instructions.
pub fn incoming(
    file: &HloFile,
    module: ModuleId,
    id: ComputationId,
) -> Vec<(CallItem, Vec<Range<usize>>)> {
    let m = file.module(module);
    group(callgraph::incoming(m, id), |call| Some(call.caller))
        .into_iter()
        .map(|(caller, calls)| {
            let ranges = calls.into_iter().map(|c| c.instruction_range).collect();
            (item(file, module, caller), ranges)
        })
        .collect()
}

/// The computations `id` calls (those the module defines), one entry per callee with
/// the ranges of the names that call it.
pub fn outgoing(
    file: &HloFile,
    module: ModuleId,
    id: ComputationId,
) -> Vec<(CallItem, Vec<Range<usize>>)> {
    let m = file.module(module);
    group(callgraph::outgoing(m, id), |call| call.callee)
        .into_iter()
        .map(|(callee, calls)| {
            let ranges = calls.into_iter().map(|c| c.name_range).collect();
            (item(file, module, callee), ranges)
        })
        .collect()
}

/// The computation named `name`, in module `hint` when it has one, else in the
/// first module that does: an item from an earlier version found again (ids may
/// move, names rarely do).
pub fn find(file: &HloFile, hint: Option<usize>, name: &str) -> Option<(ModuleId, ComputationId)> {
    let in_module = |m: usize| {
        let module = file.modules.get(m)?;
        let id = module.computation_by_name(name)?;
        Some((ModuleId(m as u32), id))
    };
    hint.and_then(in_module)
        .or_else(|| (0..file.modules.len()).find_map(in_module))
}

/// Calls grouped by `key` (first appearance order); calls without a key are dropped.
fn group(
    calls: Vec<Call>,
    key: impl Fn(&Call) -> Option<ComputationId>,
) -> Vec<(ComputationId, Vec<Call>)> {
    let mut groups: Vec<(ComputationId, Vec<Call>)> = Vec::new();
    for call in calls {
        let Some(k) = key(&call) else { continue };
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(call),
            None => groups.push((k, vec![call])),
        }
    }
    groups
}

/// The item of computation `id`.
fn item(file: &HloFile, module_id: ModuleId, id: ComputationId) -> CallItem {
    let module = file.module(module_id);
    let c = module.computation(id);
    CallItem {
        module: module_id,
        computation: id,
        name: c.name.clone(),
        detail: detail(module, id),
        range: c.range(),
        selection: c.abs(c.name_range),
    }
}

fn detail(module: &Module, id: ComputationId) -> Option<String> {
    if module.computation(id).is_entry {
        return Some("ENTRY".into());
    }
    let calls = callgraph::incoming(module, id);
    let first = calls.first()?;
    let caller = module.computation(first.caller);
    let instruction = caller.instruction(first.instruction);
    let mut text = format!(
        "{} %{}",
        first.role.describe(&instruction.opcode),
        instruction.name
    );
    if calls.len() > 1 {
        text.push_str(&format!(" (+{} more)", calls.len() - 1));
    }
    Some(text)
}
