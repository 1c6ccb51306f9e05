//! XLA's `*.hlo.pb` (`--xla_dump_hlo_as_proto`): an `HloProto`, the module and its
//! buffer assignment with the heap simulator's trace, the record XProf's memory
//! viewer reads.
//!
//! The messages follow XLA's `xla/service/hlo.proto` (Apache-2.0, the OpenXLA
//! Authors) field by field (numbers and types), cut to what the memory viewer needs:
//! instruction names and ids, the allocations with the values placed in them, and
//! the trace's events. prost skips every other field; no protoc, no build script.

use prost::Message;

/// `HloProto`: the module and its buffer assignment.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloProto {
    #[prost(message, optional, tag = "1")]
    pub hlo_module: Option<HloModuleProto>,
    #[prost(message, optional, tag = "3")]
    pub buffer_assignment: Option<BufferAssignmentProto>,
}

/// `HloModuleProto`, its name and computations.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloModuleProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub entry_computation_name: String,
    #[prost(message, repeated, tag = "3")]
    pub computations: Vec<HloComputationProto>,
}

/// `HloComputationProto`, its name and instructions.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloComputationProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, repeated, tag = "2")]
    pub instructions: Vec<HloInstructionProto>,
}

/// `HloInstructionProto`, its name, opcode and id (what a value's `defined_at`
/// points to).
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloInstructionProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub opcode: String,
    #[prost(int64, tag = "35")]
    pub id: i64,
}

/// `BufferAssignmentProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BufferAssignmentProto {
    #[prost(message, repeated, tag = "1")]
    pub logical_buffers: Vec<LogicalBufferProto>,
    #[prost(message, repeated, tag = "3")]
    pub buffer_allocations: Vec<BufferAllocationProto>,
    #[prost(message, repeated, tag = "4")]
    pub heap_simulator_traces: Vec<HeapSimulatorTrace>,
}

/// `LogicalBufferProto`: one value (XLA's `HloValue`), its size and where defined.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LogicalBufferProto {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(int64, tag = "2")]
    pub size: i64,
    #[prost(message, optional, tag = "3")]
    pub defined_at: Option<Location>,
    #[prost(int64, tag = "4")]
    pub color: i64,
}

/// `LogicalBufferProto.Location`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Location {
    #[prost(int64, tag = "4")]
    pub instruction_id: i64,
    #[prost(int64, repeated, tag = "3")]
    pub shape_index: Vec<i64>,
}

/// `BufferAllocationProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BufferAllocationProto {
    #[prost(int64, tag = "1")]
    pub index: i64,
    #[prost(int64, tag = "2")]
    pub size: i64,
    #[prost(bool, tag = "3")]
    pub is_thread_local: bool,
    #[prost(bool, tag = "11")]
    pub is_tuple: bool,
    #[prost(bool, tag = "5")]
    pub is_entry_computation_parameter: bool,
    #[prost(bool, tag = "12")]
    pub is_constant: bool,
    #[prost(int64, tag = "6")]
    pub parameter_number: i64,
    #[prost(bool, tag = "7")]
    pub maybe_live_out: bool,
    #[prost(int64, tag = "8")]
    pub color: i64,
    #[prost(message, repeated, tag = "9")]
    pub assigned: Vec<Assigned>,
}

/// `BufferAllocationProto.Assigned`: a value placed in the allocation.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Assigned {
    #[prost(int64, tag = "1")]
    pub logical_buffer_id: i64,
    #[prost(int64, tag = "2")]
    pub offset: i64,
    #[prost(int64, tag = "3")]
    pub size: i64,
}

/// `HeapSimulatorTrace`: what the heap simulator did, event by event.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HeapSimulatorTrace {
    #[prost(message, repeated, tag = "1")]
    pub events: Vec<HeapEvent>,
    #[prost(bool, tag = "2")]
    pub whole_module_simulation: bool,
    #[prost(int64, tag = "3")]
    pub buffer_allocation_index: i64,
}

/// `HeapSimulatorTrace.Event.Kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum EventKind {
    Alloc = 0,
    Free = 1,
    ShareWith = 2,
}

/// `HeapSimulatorTrace.Event`: one allocation, free or share of a value, named by
/// the instruction that defines it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HeapEvent {
    #[prost(enumeration = "EventKind", tag = "1")]
    pub kind: i32,
    #[prost(int64, tag = "2")]
    pub buffer_id: i64,
    #[prost(string, tag = "3")]
    pub computation_name: String,
    #[prost(string, tag = "4")]
    pub instruction_name: String,
    #[prost(int64, tag = "5")]
    pub share_with_canonical_id: i64,
}

/// Reads an `HloProto` from its bytes; the error says what was wrong.
pub fn decode(bytes: &[u8]) -> Result<HloProto, String> {
    HloProto::decode(bytes).map_err(|e| format!("not an HloProto: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_proto_reads_back_and_garbage_is_an_error() {
        let proto = HloProto {
            hlo_module: Some(HloModuleProto {
                name: "m".into(),
                entry_computation_name: "e".into(),
                computations: vec![HloComputationProto {
                    name: "e".into(),
                    instructions: vec![HloInstructionProto {
                        name: "p".into(),
                        opcode: "parameter".into(),
                        id: 7,
                    }],
                }],
            }),
            buffer_assignment: Some(BufferAssignmentProto::default()),
        };
        let bytes = proto.encode_to_vec();
        assert_eq!(decode(&bytes), Ok(proto));
        assert!(decode(&[0xff, 0xff, 0xff]).is_err());
    }
}
