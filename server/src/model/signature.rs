//! What XLA's text takes after each opcode: the operands (named as XLA's builders
//! name them) and the attributes, in the order `HloInstruction::PrintExtraAttributes`
//! prints them, each with the kind of value it holds and a template to insert.
//!
//! Completion, signature help and the quick fix of a missing attribute read this one
//! table, so the attribute a fix inserts is the one completion offers, spelled alike.

use super::opcode::{Arity, Opcode};

/// What an attribute's value is: how a template is written and how a value seen in
/// the text is recognised (completion ranks an attribute name by the value after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `{1,0}`.
    IntList,
    /// `3`.
    Int,
    /// `true` / `false`.
    Bool,
    /// A computation's name.
    Computation,
    /// `{%a, %b}`.
    ComputationList,
    /// `{[0:2], [0:4:2]}`.
    Slice,
    /// `0_0x1_1`.
    Padding,
    /// `{size=3x3 stride=1x1}`.
    Window,
    /// `b01f_01io->b01f`.
    DimLabels,
    /// `kLoop`, `kInput`, ...
    FusionKind,
    /// `EQ`, `LT`, ...
    Direction,
    /// A quoted string (`custom_call_target="..."`).
    Str,
    /// `{op_name="..." source_file=...}`.
    Metadata,
    /// A JSON object (`backend_config={"operation_queue_id":"0"}`).
    Json,
    /// `{key="value"}` (`frontend_attributes`).
    Dictionary,
    /// `{replicated}`, `{devices=[2,1]0,1}`.
    Sharding,
    /// `{{0,1},{2,3}}` or `[2,2]<=[4]`.
    Groups,
    /// `{{0,1},{1,0}}`.
    Pairs,
    /// A bare word among a few (`rng_uniform`, `FFT`, ...).
    Word(&'static [&'static str]),
    /// `{%a, %b}`: instruction names.
    InstructionList,
    /// Anything else, written as XLA prints it.
    Other,
}

/// One attribute an opcode takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttributeSpec {
    pub name: &'static str,
    pub value: ValueKind,
    /// XLA's parser refuses the instruction without it.
    pub required: bool,
}

/// A required attribute (a macro, not a `const fn`: a literal is promoted to a
/// `'static` slice in a `match` arm, a call is not).
macro_rules! req {
    ($name:literal, $value:expr) => {
        AttributeSpec {
            name: $name,
            value: $value,
            required: true,
        }
    };
}

/// An optional attribute.
macro_rules! opt {
    ($name:literal, $value:expr) => {
        AttributeSpec {
            name: $name,
            value: $value,
            required: false,
        }
    };
}

use ValueKind::*;

const DIRECTIONS: &[&str] = &["EQ", "NE", "LT", "LE", "GT", "GE"];
const COMPARISON_TYPES: &[&str] = &["FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"];
const DISTRIBUTIONS: &[&str] = &["rng_uniform", "rng_normal"];
const FFT_TYPES: &[&str] = &["FFT", "IFFT", "RFFT", "IRFFT"];
const RNG_ALGORITHMS: &[&str] = &["rng_default", "rng_three_fry", "rng_philox"];
const CUSTOM_CALL_SCHEDULES: &[&str] = &["SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"];
const API_VERSIONS: &[&str] = &[
    "API_VERSION_ORIGINAL",
    "API_VERSION_STATUS_RETURNING",
    "API_VERSION_STATUS_RETURNING_UNIFIED",
    "API_VERSION_TYPED_FFI",
];

/// The fusion kinds XLA's parser reads (`HloInstruction::FusionKind`), with what each
/// means.
pub const FUSION_KINDS: &[(&str, &str)] = &[
    (
        "kLoop",
        "elementwise loop over the output (XLA's loop emitter)",
    ),
    (
        "kInput",
        "a reduction or scatter at the root (reduction emitter)",
    ),
    ("kOutput", "a GEMM or convolution with fused consumers"),
    (
        "kCustom",
        "a custom emitter: Triton, cuDNN, a custom fusion",
    ),
];

/// Attributes every instruction may carry, in XLA's print order (after the opcode's
/// own and its computations: `PrintWithCanonicalNameMap` writes `origin` after the
/// extra attributes and before `metadata`). The formatter sorts by this list too.
pub const GENERIC: &[AttributeSpec] = &[
    opt!("sharding", Sharding),
    opt!("frontend_attributes", Dictionary),
    opt!("control-predecessors", InstructionList),
    opt!("statistics", Other),
    opt!("result_accuracy", Other),
    opt!("origin", Other),
    opt!("metadata", Metadata),
    opt!("backend_config", Json),
];

const COLLECTIVE: &[AttributeSpec] = &[
    opt!("channel_id", Int),
    opt!("replica_groups", Groups),
    opt!("use_global_device_ids", Bool),
];

const DOT: &[AttributeSpec] = &[
    opt!("lhs_batch_dims", IntList),
    req!("lhs_contracting_dims", IntList),
    opt!("rhs_batch_dims", IntList),
    req!("rhs_contracting_dims", IntList),
    opt!("operand_precision", Other),
    opt!("algorithm", Other),
    opt!("sparsity", Other),
];

/// The attributes of `opcode` before the generic ones, in XLA's print order.
fn own(opcode: &Opcode) -> &'static [AttributeSpec] {
    use Opcode as O;
    match opcode {
        O::Broadcast | O::Transpose | O::Reverse => &[req!("dimensions", IntList)],
        O::Concatenate => &[req!("dimensions", IntList)],
        O::GetDimensionSize | O::SetDimensionSize => &[req!("dimensions", IntList)],
        O::Reduce => &[req!("dimensions", IntList), req!("to_apply", Computation)],
        O::Map => &[opt!("dimensions", IntList), req!("to_apply", Computation)],
        O::Sort => &[
            req!("dimensions", IntList),
            opt!("is_stable", Bool),
            req!("to_apply", Computation),
        ],
        O::Scan => &[
            req!("dimensions", IntList),
            opt!("is_reverse", Bool),
            opt!("num_carries", Int),
            opt!("is_associative", Bool),
            req!("to_apply", Computation),
        ],
        O::Slice => &[req!("slice", Slice)],
        O::DynamicSlice => &[req!("dynamic_slice_sizes", IntList)],
        O::Pad => &[req!("padding", Padding)],
        O::Iota => &[req!("iota_dimension", Int)],
        O::GetTupleElement => &[req!("index", Int)],
        O::Compare => &[
            req!("direction", Direction),
            opt!("type", Word(COMPARISON_TYPES)),
        ],
        O::Dot | O::ScaledDot => DOT,
        O::RaggedDot => &[
            opt!("lhs_batch_dims", IntList),
            req!("lhs_contracting_dims", IntList),
            opt!("rhs_batch_dims", IntList),
            req!("rhs_contracting_dims", IntList),
            req!("lhs_ragged_dims", IntList),
            opt!("rhs_group_dims", IntList),
            opt!("operand_precision", Other),
        ],
        O::Convolution => &[
            opt!("window", Window),
            req!("dim_labels", DimLabels),
            opt!("feature_group_count", Int),
            opt!("batch_group_count", Int),
            opt!("operand_precision", Other),
        ],
        O::Fusion => &[
            req!("kind", FusionKind),
            opt!("output_to_operand_aliasing", Other),
            req!("calls", Computation),
        ],
        O::CustomCall => &[
            req!("custom_call_target", Str),
            opt!("window", Window),
            opt!("dim_labels", DimLabels),
            opt!("feature_group_count", Int),
            opt!("batch_group_count", Int),
            opt!("operand_layout_constraints", Other),
            opt!("custom_call_has_side_effect", Bool),
            opt!("output_to_operand_aliasing", Other),
            opt!("literal", Other),
            opt!("schedule", Word(CUSTOM_CALL_SCHEDULES)),
            opt!("api_version", Word(API_VERSIONS)),
            opt!("called_computations", ComputationList),
        ],
        O::ReduceWindow => &[req!("window", Window), req!("to_apply", Computation)],
        O::SelectAndScatter => &[
            req!("window", Window),
            req!("select", Computation),
            req!("scatter", Computation),
        ],
        O::Gather => &[
            req!("offset_dims", IntList),
            req!("collapsed_slice_dims", IntList),
            req!("start_index_map", IntList),
            opt!("operand_batching_dims", IntList),
            opt!("start_indices_batching_dims", IntList),
            req!("index_vector_dim", Int),
            req!("slice_sizes", IntList),
            opt!("indices_are_sorted", Bool),
        ],
        O::Scatter => &[
            req!("update_window_dims", IntList),
            req!("inserted_window_dims", IntList),
            req!("scatter_dims_to_operand_dims", IntList),
            opt!("input_batching_dims", IntList),
            opt!("scatter_indices_batching_dims", IntList),
            req!("index_vector_dim", Int),
            opt!("indices_are_sorted", Bool),
            opt!("unique_indices", Bool),
            req!("to_apply", Computation),
        ],
        O::While => &[req!("condition", Computation), req!("body", Computation)],
        O::Conditional => &[
            opt!("branch_computations", ComputationList),
            opt!("true_computation", Computation),
            opt!("false_computation", Computation),
        ],
        O::Call => &[req!("to_apply", Computation), opt!("is_composite", Bool)],
        O::AllReduce | O::AllReduceStart => &[
            opt!("channel_id", Int),
            opt!("replica_groups", Groups),
            opt!("constrain_layout", Bool),
            opt!("use_global_device_ids", Bool),
            req!("to_apply", Computation),
        ],
        O::ReduceScatter => &[
            opt!("channel_id", Int),
            opt!("replica_groups", Groups),
            req!("dimensions", IntList),
            opt!("use_global_device_ids", Bool),
            req!("to_apply", Computation),
        ],
        O::AllGather | O::AllGatherStart => &[
            opt!("channel_id", Int),
            opt!("replica_groups", Groups),
            req!("dimensions", IntList),
            opt!("use_global_device_ids", Bool),
        ],
        O::AllToAll | O::RaggedAllToAll => &[
            opt!("channel_id", Int),
            opt!("replica_groups", Groups),
            opt!("dimensions", IntList),
        ],
        O::CollectiveBroadcast => COLLECTIVE,
        O::CollectivePermute | O::CollectivePermuteStart => &[
            opt!("channel_id", Int),
            req!("source_target_pairs", Pairs),
            opt!("slice_sizes", Other),
        ],
        O::Parameter => &[opt!("parameter_replication", Other)],
        O::ReducePrecision => &[req!("exponent_bits", Int), req!("mantissa_bits", Int)],
        O::Rng => &[req!("distribution", Word(DISTRIBUTIONS))],
        O::RngBitGenerator => &[req!("algorithm", Word(RNG_ALGORITHMS))],
        O::Fft => &[
            req!("fft_type", Word(FFT_TYPES)),
            req!("fft_length", IntList),
        ],
        O::TriangularSolve => &[
            opt!("left_side", Bool),
            opt!("lower", Bool),
            opt!("unit_diagonal", Bool),
            opt!(
                "transpose_a",
                Word(&["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])
            ),
        ],
        O::Cholesky => &[opt!("lower", Bool)],
        O::BatchNormTraining | O::BatchNormInference | O::BatchNormGrad => {
            &[req!("epsilon", Other), req!("feature_index", Int)]
        }
        O::TopK => &[req!("k", Int), opt!("largest", Bool)],
        O::Send | O::Recv | O::SendDone | O::RecvDone => {
            &[opt!("channel_id", Int), opt!("is_host_transfer", Bool)]
        }
        O::Infeed => &[opt!("infeed_config", Str)],
        O::Outfeed => &[opt!("outfeed_shape", Other), opt!("outfeed_config", Str)],
        O::CopyStart => &[opt!("cross_program_prefetch_index", Int)],
        O::AsyncStart => &[
            req!("calls", Computation),
            opt!("async_execution_thread", Str),
        ],
        O::AsyncUpdate | O::AsyncDone => &[],
        O::Domain => &[req!("domain", Other)],
        _ => &[],
    }
}

/// Every attribute `opcode` takes, in XLA's print order: its own, then those every
/// instruction may carry.
pub fn attributes(opcode: &Opcode) -> impl Iterator<Item = &'static AttributeSpec> {
    own(opcode).iter().chain(GENERIC)
}

/// The attribute `name` of `opcode`, if it takes one so named.
pub fn attribute(opcode: &Opcode, name: &str) -> Option<&'static AttributeSpec> {
    attributes(opcode).find(|a| a.name == name)
}

/// Where `name` stands in `opcode`'s print order (`None`: the opcode does not take it).
pub fn print_position(opcode: &Opcode, name: &str) -> Option<usize> {
    attributes(opcode).position(|a| a.name == name)
}

/// The value a template inserts for a value kind, in plain text (`{}` for a list).
/// `snippet` writes LSP snippet tab stops (`{$1}`); a choice of words becomes
/// `${1|a,b|}`.
pub fn template(value: ValueKind, snippet: bool) -> String {
    let stop = if snippet { "$1" } else { "" };
    let choice = |words: &[&str]| -> String {
        if snippet {
            format!("${{1|{}|}}", words.join(","))
        } else {
            words.first().copied().unwrap_or("").to_string()
        }
    };
    match value {
        IntList | ComputationList | Dictionary | Json | Sharding | InstructionList => {
            format!("{{{stop}}}")
        }
        Int => if snippet { "${1:0}" } else { "0" }.to_string(),
        Bool => choice(&["true", "false"]),
        Computation | Other | Padding | DimLabels => stop.to_string(),
        Slice => {
            if snippet {
                "{[${1:0}:${2:1}]}".to_string()
            } else {
                "{[0:1]}".to_string()
            }
        }
        Window => format!("{{size={}}}", if snippet { "${1:1}" } else { "1" }),
        FusionKind => choice(&FUSION_KINDS.iter().map(|(k, _)| *k).collect::<Vec<_>>()),
        Direction => choice(DIRECTIONS),
        Str => format!("\"{stop}\""),
        Metadata => format!("{{op_name=\"{stop}\"}}"),
        Groups | Pairs => format!("{{{{{stop}}}}}"),
        Word(words) => choice(words),
    }
}

/// The operands XLA's text takes, named as its builders name them; a name ending in
/// `...` stands for any number of operands.
pub fn operand_names(opcode: &Opcode) -> Vec<&'static str> {
    use Opcode as O;
    let named: &[&str] = match opcode {
        O::Select => &["pred", "on_true", "on_false"],
        O::Clamp => &["min", "operand", "max"],
        O::Dot | O::Convolution | O::TriangularSolve => &["lhs", "rhs"],
        O::RaggedDot => &["lhs", "rhs", "group_sizes"],
        O::ScaledDot => &["lhs", "rhs", "lhs_scale", "rhs_scale"],
        O::Reduce | O::ReduceWindow => &["inputs...", "init_values..."],
        O::DynamicSlice => &["operand", "start_indices..."],
        O::DynamicUpdateSlice => &["operand", "update", "start_indices..."],
        O::Pad => &["operand", "padding_value"],
        O::Gather => &["operand", "start_indices"],
        O::Scatter => &["operands...", "scatter_indices", "updates..."],
        O::GetTupleElement | O::OptimizationBarrier => &["tuple"],
        O::Tuple => &["elements..."],
        O::While => &["init"],
        O::Conditional => &["branch_index", "branch_operands..."],
        O::Parameter => &["number"],
        O::Constant => &["literal"],
        O::Sort => &["keys..."],
        O::SelectAndScatter => &["operand", "source", "init_value"],
        O::Rng => &["a", "b"],
        O::RngBitGenerator => &["state"],
        O::BatchNormTraining => &["operand", "scale", "offset"],
        O::BatchNormInference => &["operand", "scale", "offset", "mean", "variance"],
        O::BatchNormGrad => &["operand", "scale", "mean", "variance", "grad_output"],
        O::Cholesky => &["a"],
        O::AddDependency => &["operand", "token"],
        O::AfterAll => &["tokens..."],
        O::Send | O::Outfeed => &["operand", "token"],
        O::Recv | O::Infeed => &["token"],
        O::SetDimensionSize => &["operand", "size"],
        O::DynamicReshape => &["operand", "dim_sizes..."],
        O::RaggedAllToAll => &[
            "input",
            "output",
            "input_offsets",
            "send_sizes",
            "output_offsets",
            "recv_sizes",
        ],
        O::StochasticConvert => &["operand", "random"],
        O::SendDone | O::RecvDone | O::AsyncDone | O::AsyncUpdate => &["start"],
        O::AllGatherDone | O::AllReduceDone | O::CollectivePermuteDone | O::CopyDone => &["start"],
        _ => &[],
    };
    if !named.is_empty() {
        return named.to_vec();
    }
    match opcode.arity() {
        Arity::Exactly(0) => vec![],
        Arity::Exactly(1) => vec!["operand"],
        Arity::Exactly(2) => vec!["lhs", "rhs"],
        _ => vec!["operands..."],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attribute_is_one_xla_knows() {
        for op in Opcode::all() {
            for a in attributes(op) {
                assert!(
                    super::super::attributes::is_known_attribute(a.name),
                    "{op}: {}",
                    a.name
                );
            }
        }
    }

    #[test]
    fn templates() {
        assert_eq!(template(IntList, true), "{$1}");
        assert_eq!(template(IntList, false), "{}");
        assert_eq!(
            template(FusionKind, true),
            "${1|kLoop,kInput,kOutput,kCustom|}"
        );
        assert_eq!(template(Slice, false), "{[0:1]}");
    }
}
