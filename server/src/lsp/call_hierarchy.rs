//! Call hierarchy over computations (`textDocument/prepareCallHierarchy`,
//! `callHierarchy/incomingCalls`, `callHierarchy/outgoingCalls`): the edges come from
//! [`crate::model::callgraph`]; here they become LSP items.
//!
//! An item is a computation; its `data` keeps the module index and the name, so that
//! a later request finds it again in a newer version of the document (ids may move,
//! names rarely do).

use serde_json::json;
use tower_lsp_server::ls_types::{
    CallHierarchyIncomingCall, CallHierarchyItem, CallHierarchyOutgoingCall, SymbolKind,
};

use super::navigation::{symbol_at, Symbol};
use super::position::PositionEncoding;
use super::snapshot::Snapshot;
use crate::model::callgraph::{self, Call};
use crate::model::{ComputationId, Module, ModuleId};

/// The computation at `offset`: the one named there (its header or a `calls=`-like
/// attribute), else the one whose text contains `offset`.
pub fn prepare(
    snapshot: &Snapshot,
    offset: usize,
    encoding: PositionEncoding,
) -> Option<Vec<CallHierarchyItem>> {
    if snapshot.is_mlir() {
        return None;
    }
    let file = snapshot.model();
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
    Some(vec![computation_item(
        snapshot,
        module,
        computation,
        encoding,
    )])
}

/// The computations calling `item`, one entry per caller with every call's range.
pub fn incoming(
    snapshot: &Snapshot,
    item: &CallHierarchyItem,
    encoding: PositionEncoding,
) -> Vec<CallHierarchyIncomingCall> {
    let Some((module_id, id)) = find(snapshot, item) else {
        return Vec::new();
    };
    let module = snapshot.model().module(module_id);
    group(callgraph::incoming(module, id), |call| Some(call.caller))
        .into_iter()
        .map(|(caller, calls)| CallHierarchyIncomingCall {
            from: computation_item(snapshot, module_id, caller, encoding),
            from_ranges: calls
                .iter()
                .map(|call| snapshot.range(call.instruction_range.clone(), encoding))
                .collect(),
        })
        .collect()
}

/// The computations `item` calls, one entry per callee (those the module defines).
pub fn outgoing(
    snapshot: &Snapshot,
    item: &CallHierarchyItem,
    encoding: PositionEncoding,
) -> Vec<CallHierarchyOutgoingCall> {
    let Some((module_id, id)) = find(snapshot, item) else {
        return Vec::new();
    };
    let module = snapshot.model().module(module_id);
    group(callgraph::outgoing(module, id), |call| call.callee)
        .into_iter()
        .map(|(callee, calls)| CallHierarchyOutgoingCall {
            to: computation_item(snapshot, module_id, callee, encoding),
            from_ranges: calls
                .iter()
                .map(|call| snapshot.range(call.name_range.clone(), encoding))
                .collect(),
        })
        .collect()
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

/// The item of computation `id`: its detail says how it is called (`fusion
/// %fusion.3`), or `ENTRY`.
fn computation_item(
    snapshot: &Snapshot,
    module_id: ModuleId,
    id: ComputationId,
    encoding: PositionEncoding,
) -> CallHierarchyItem {
    let module = snapshot.model().module(module_id);
    let c = module.computation(id);
    CallHierarchyItem {
        name: c.name.clone(),
        kind: SymbolKind::FUNCTION,
        tags: None,
        detail: detail(module, id),
        uri: snapshot.uri.clone(),
        range: snapshot.range(c.range(), encoding),
        selection_range: snapshot.range(c.abs(c.name_range), encoding),
        data: Some(json!({ "module": module_id.index(), "computation": c.name })),
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

/// The computation an item stands for, in this version of its document.
fn find(snapshot: &Snapshot, item: &CallHierarchyItem) -> Option<(ModuleId, ComputationId)> {
    let file = snapshot.model();
    let module_hint = item
        .data
        .as_ref()
        .and_then(|d| d.get("module"))
        .and_then(|m| m.as_u64())
        .map(|m| m as usize);
    let in_module = |m: usize| {
        let module = file.modules.get(m)?;
        let id = module.computation_by_name(&item.name)?;
        Some((ModuleId(m as u32), id))
    };
    module_hint
        .and_then(in_module)
        .or_else(|| (0..file.modules.len()).find_map(in_module))
}
