//! Call hierarchy over computations (`textDocument/prepareCallHierarchy`,
//! `callHierarchy/incomingCalls`, `callHierarchy/outgoingCalls`): the items of
//! [`crate::ide::call_hierarchy`] as LSP items.
//!
//! An item's `data` keeps the module index and the name, so that a later request
//! finds it again in a newer version of the document.

use serde_json::json;
use tower_lsp_server::ls_types::{
    CallHierarchyIncomingCall, CallHierarchyItem, CallHierarchyOutgoingCall, SymbolKind,
};

use super::position::PositionEncoding;
use super::snapshot::Snapshot;
use crate::ide::{self, call_hierarchy::CallItem};
use crate::model::HloFile;

/// The HLO model of the snapshot; MLIR documents have no call hierarchy.
fn hlo(snapshot: &Snapshot) -> Option<&HloFile> {
    match &snapshot.ide {
        ide::Snapshot::Hlo(hlo) => Some(hlo.model()),
        ide::Snapshot::Mlir(_) => None,
    }
}

pub fn prepare(
    snapshot: &Snapshot,
    offset: usize,
    encoding: PositionEncoding,
) -> Option<Vec<CallHierarchyItem>> {
    let item = ide::call_hierarchy::prepare(hlo(snapshot)?, offset)?;
    Some(vec![to_item(snapshot, item, encoding)])
}

pub fn incoming(
    snapshot: &Snapshot,
    item: &CallHierarchyItem,
    encoding: PositionEncoding,
) -> Vec<CallHierarchyIncomingCall> {
    let Some((file, (module, id))) = find(snapshot, item) else {
        return Vec::new();
    };
    ide::call_hierarchy::incoming(file, module, id)
        .into_iter()
        .map(|(from, ranges)| CallHierarchyIncomingCall {
            from: to_item(snapshot, from, encoding),
            from_ranges: ranges
                .into_iter()
                .map(|r| snapshot.range(r, encoding))
                .collect(),
        })
        .collect()
}

pub fn outgoing(
    snapshot: &Snapshot,
    item: &CallHierarchyItem,
    encoding: PositionEncoding,
) -> Vec<CallHierarchyOutgoingCall> {
    let Some((file, (module, id))) = find(snapshot, item) else {
        return Vec::new();
    };
    ide::call_hierarchy::outgoing(file, module, id)
        .into_iter()
        .map(|(to, ranges)| CallHierarchyOutgoingCall {
            to: to_item(snapshot, to, encoding),
            from_ranges: ranges
                .into_iter()
                .map(|r| snapshot.range(r, encoding))
                .collect(),
        })
        .collect()
}

/// The computation an item stands for, in this version of its document.
fn find<'a>(
    snapshot: &'a Snapshot,
    item: &CallHierarchyItem,
) -> Option<(
    &'a HloFile,
    (crate::model::ModuleId, crate::model::ComputationId),
)> {
    let file = hlo(snapshot)?;
    let hint = item
        .data
        .as_ref()
        .and_then(|d| d.get("module"))
        .and_then(|m| m.as_u64())
        .map(|m| m as usize);
    Some((file, ide::call_hierarchy::find(file, hint, &item.name)?))
}

fn to_item(snapshot: &Snapshot, item: CallItem, encoding: PositionEncoding) -> CallHierarchyItem {
    CallHierarchyItem {
        data: Some(json!({ "module": item.module.index(), "computation": item.name })),
        name: item.name,
        kind: SymbolKind::FUNCTION,
        tags: None,
        detail: item.detail,
        uri: snapshot.uri.clone(),
        range: snapshot.range(item.range, encoding),
        selection_range: snapshot.range(item.selection, encoding),
    }
}
