//! The order XLA prints attributes in, so a hand-written `attr=...` list comes out
//! where `HloInstruction::PrintWithCanonicalNameMap` and `HloModule::Print` put it.
//!
//! An instruction's own attributes (`dimensions=`, `window=`, `custom_call_target=`,
//! ...) come first, in the order written: XLA's order for them differs opcode by
//! opcode (`PrintExtraAttributesImpl` of each instruction class) and text XLA printed
//! already has it. What every instruction may carry follows in one fixed order.

use crate::model::signature;

/// Where an instruction attribute goes: 0 for the opcode's own ones (kept in written
/// order), then the called computations (`PrintExtraAttributes`, in the order of
/// its cases), `sharding`, `frontend_attributes`, `control-predecessors`,
/// `statistics`, `result_accuracy`, `origin`, `metadata`, `backend_config`
/// ([`signature::GENERIC`], the table completion ranks by).
pub fn instruction_rank(name: &str) -> u32 {
    const CALLED: &[&str] = &[
        "condition",
        "body",
        "select",
        "scatter",
        "true_computation",
        "false_computation",
        "branch_computations",
        "to_apply",
        "is_composite",
        "called_computations",
        "calls",
    ];
    if let Some(i) = CALLED.iter().position(|n| *n == name) {
        return 1 + i as u32;
    }
    if let Some(i) = signature::GENERIC.iter().position(|a| a.name == name) {
        return 100 + i as u32;
    }
    0
}

/// Where a module header attribute goes (`HloModule::Print`, `PrintConfig`);
/// attributes this list does not name keep their written order after the known
/// configuration and before `frontend_attributes`.
pub fn header_rank(name: &str) -> u32 {
    const ORDER: &[&str] = &[
        "is_scheduled",
        "input_output_alias",
        "buffer_donor",
        "alias_passthrough_params",
        "entry_computation_layout",
        "allow_spmd_sharding_propagation_to_parameters",
        "allow_spmd_sharding_propagation_to_output",
        "replica_count",
        "num_partitions",
    ];
    match ORDER.iter().position(|n| *n == name) {
        Some(i) => i as u32,
        None if name == "frontend_attributes" => 200,
        None => 100,
    }
}

/// Header attributes XLA does not print because they hold the default value.
pub fn header_default(name: &str, value: &str) -> bool {
    matches!(
        (name, value),
        ("is_scheduled", "false")
            | ("alias_passthrough_params", "false")
            | ("replica_count", "1")
            | ("num_partitions", "1")
    )
}
