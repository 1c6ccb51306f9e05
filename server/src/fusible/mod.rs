//! XLA's GPU fusion rules (`xla/service/gpu/gpu_fusible.cc`, with what it needs of
//! `ir_emission_utils.cc`, `hlo_fusion_analysis.cc` and `instruction_fusion.cc`) on the
//! HLO model: which instructions may be fused, into which kind of fusion, whether two
//! fusions can share one kernel, and the producer-to-consumer decision priority fusion
//! makes before it asks the cost model ([`can_fuse`]).
//!
//! The rules read an instruction's opcode, shapes with layouts and element types, users,
//! and the fused computation of a fusion; they are functions of an [`Hlo`] (the model
//! module plus its analysis view, whose indices are the model's) and [`Instr`] handles.
//! Emitter facts that the coalescing analysis already ports (the hero, reduction
//! dimensions, transpose normalization) are reused from [`crate::coalescing::emitter`].
//!
//! One concept per file: [`decision`] (why a fusion is refused, in XLA's words),
//! [`target`] (the device numbers the rules read), [`shapes`] (bitcast facts of
//! layouts), [`hero`] (reduction and transpose heroes), [`predicates`] (fusible-ness of
//! one instruction), [`multi_output`] (sibling and producer multi-output fusion),
//! [`budget`] (operands, outputs and shared memory of a fusion), [`unroll`] (the loop
//! emitter's unroll factor), [`producer_consumer`] (priority fusion's `CanFuse`),
//! [`priority`] (priority fusion's queue of producers), [`triton`] (the Triton path of
//! priority fusion: generic and heroless Triton fusions, Triton multi-output), [`explain`] (the rules and the
//! cost model together: a fusion query, the facts of an instruction, a simulation).

pub mod budget;
pub mod decision;
pub mod explain;
pub mod fused_document;
pub mod hero;
pub mod multi_output;
pub mod predicates;
pub mod priority;
pub mod priority_cache;
pub mod process_dump;
pub mod producer_consumer;
pub mod rewrite;
pub mod run;
pub mod shapes;
pub mod target;
pub mod triton;
pub mod unroll;

pub use budget::{
    fusion_fits_in_budget, num_unnested_reductions, shared_memory_usage,
    MAX_OPERANDS_AND_OUTPUTS_PER_FUSION,
};
pub use decision::FusionDecision;
pub use hero::{
    find_non_trivial_hero, fusion_roots, is_real_reduction_hero,
    is_reduction_from_or_to_contiguous_dimensions, tiled_transpose, TransposeDescription,
};
pub use multi_output::{
    fusion_heroes_are_compatible, is_producer_multi_output_fusible,
    shapes_compatible_for_multi_output_fusion,
};
pub use predicates::{
    choose_fusion_kind, is_consumer_the_only_non_root_user, is_fusible,
    is_fusible_as_multi_output_fusion_root, is_input_fusible, is_input_fusible_reduction,
    is_loop_fusible_as_consumer, is_loop_fusible_as_producer, is_physically_transposing,
    is_reduce_input_fusion, transposes_minor_dimension, FusionKind,
};
pub use producer_consumer::{
    can_fuse, can_fuse_with_all_non_bitcast_users, is_producer_consumer_fusible,
};
pub use target::{Compilation, Flags, Target};
pub use unroll::{max_unroll_factor, may_cause_performance_drop_if_unrolled, unroll_factor};

use crate::analysis;
use crate::model::{self, ComputationId, InstrId, Instruction, Opcode, Shape};

/// One instruction of the module: its computation and its index there (the model's
/// ids, which are also the analysis view's indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Instr {
    pub computation: ComputationId,
    pub id: InstrId,
}

/// The module the rules look at: the model (element types, users, attributes) and its
/// analysis view (the nodes the emitter facts are computed on).
pub struct Hlo<'a> {
    pub model: &'a model::Module,
    pub view: analysis::Module<'a>,
}

impl<'a> Hlo<'a> {
    pub fn new(model: &'a model::Module) -> Hlo<'a> {
        Hlo {
            model,
            view: analysis::view::borrowed(model),
        }
    }

    /// An instruction by name: `name` (the entry computation's first, then any), or
    /// `computation/name`.
    pub fn find(&self, name: &str) -> Option<Instr> {
        if let Some((comp, instr)) = name.split_once('/') {
            let c = self.model.computation_by_name(comp)?;
            let id = self.model.computation(c).model().instruction_id(instr)?;
            return Some(Instr { computation: c, id });
        }
        if let Some(entry) = self.model.entry_computation() {
            if let Some(id) = entry.model().instruction_id(name) {
                return Some(Instr {
                    computation: entry.id,
                    id,
                });
            }
        }
        let (computation, id) = self.model.find_instruction(name)?;
        Some(Instr { computation, id })
    }

    pub fn instruction(&self, i: Instr) -> &'a Instruction {
        self.model.computation(i.computation).instruction(i.id)
    }

    /// The analysis view's node of `i`.
    pub fn node(&self, i: Instr) -> &analysis::Node {
        &self.nodes(i.computation)[i.id.index()]
    }

    /// The analysis view's nodes of computation `c`.
    pub fn nodes(&self, c: ComputationId) -> &[analysis::Node] {
        &self.view.computation(c.index()).nodes
    }

    pub fn opcode(&self, i: Instr) -> &'a Opcode {
        &self.instruction(i).opcode
    }

    pub fn shape(&self, i: Instr) -> &'a Shape {
        &self.instruction(i).shape
    }

    pub fn name(&self, i: Instr) -> &'a str {
        &self.instruction(i).name
    }

    /// The instructions `i` reads, in operand order (unresolved operands left out).
    pub fn operands(&self, i: Instr) -> Vec<Instr> {
        self.instruction(i)
            .operands
            .iter()
            .filter_map(|o| o.target)
            .map(|id| Instr {
                computation: i.computation,
                id,
            })
            .collect()
    }

    pub fn operand_count(&self, i: Instr) -> usize {
        self.instruction(i).operands.len()
    }

    /// Operand `k` of `i`, when it names an instruction.
    pub fn operand(&self, i: Instr, k: usize) -> Option<Instr> {
        let id = self.instruction(i).operands.get(k)?.target?;
        Some(Instr {
            computation: i.computation,
            id,
        })
    }

    /// The shape of operand `k` of `i`.
    pub fn operand_shape(&self, i: Instr, k: usize) -> Option<&'a Shape> {
        self.model
            .computation(i.computation)
            .model()
            .operand_shape(self.instruction(i), k)
    }

    /// The instructions that read `i` (each once).
    pub fn users(&self, i: Instr) -> Vec<Instr> {
        let mut users: Vec<Instr> = self
            .model
            .computation(i.computation)
            .model()
            .users(i.id)
            .iter()
            .map(|&id| Instr {
                computation: i.computation,
                id,
            })
            .collect();
        users.dedup();
        users
    }

    /// The root of computation `c`.
    pub fn root(&self, c: ComputationId) -> Option<Instr> {
        let id = self.model.computation(c).model().root?;
        Some(Instr { computation: c, id })
    }

    pub fn is_root(&self, i: Instr) -> bool {
        self.root(i.computation) == Some(i)
    }

    /// The fused computation of a fusion (`calls=`).
    pub fn fused_computation(&self, i: Instr) -> Option<ComputationId> {
        if *self.opcode(i) != Opcode::Fusion {
            return None;
        }
        Some(
            self.model
                .called_computation(self.instruction(i), "calls")?
                .id,
        )
    }

    /// The root of a fusion's fused computation (XLA's `fused_expression_root`).
    pub fn fused_expression_root(&self, i: Instr) -> Option<Instr> {
        self.root(self.fused_computation(i)?)
    }

    /// Every instruction of a fusion's fused computation (XLA's `fused_instructions`,
    /// parameters included); empty for anything else.
    pub fn fused_instructions(&self, i: Instr) -> Vec<Instr> {
        match self.fused_computation(i) {
            Some(c) => self.instructions(c),
            None => vec![],
        }
    }

    /// Every instruction of computation `c`, in text order.
    pub fn instructions(&self, c: ComputationId) -> Vec<Instr> {
        (0..self.model.computation(c).model().instructions.len())
            .map(|k| Instr {
                computation: c,
                id: InstrId(k as u32),
            })
            .collect()
    }

    /// Parameter `k` of computation `c`.
    pub fn parameter(&self, c: ComputationId, k: usize) -> Option<Instr> {
        let id = self.model.computation(c).model().parameter(k)?.id;
        Some(Instr { computation: c, id })
    }

    /// The fusion instruction whose fused computation is `c` (XLA's
    /// `FusionInstruction()`), if `c` is called by exactly that one fusion.
    pub fn fusion_instruction(&self, c: ComputationId) -> Option<Instr> {
        let site = self.model.callers_of(c).first()?;
        let (caller, instr) = self.model.caller(site)?;
        (instr.opcode == Opcode::Fusion).then_some(Instr {
            computation: caller.id,
            id: instr.id,
        })
    }

    /// `kind=` of a fusion (`kLoop`, `kInput`, `kOutput`, `kCustom`).
    pub fn fusion_kind(&self, i: Instr) -> Option<&'a str> {
        self.instruction(i).attrs().fusion_kind.as_deref()
    }

    /// Whether `i` is a fusion whose root is a tuple (XLA's `IsMultiOutputFusion`).
    pub fn is_multi_output_fusion(&self, i: Instr) -> bool {
        self.fused_expression_root(i)
            .is_some_and(|r| *self.opcode(r) == Opcode::Tuple)
    }

    /// `kind=kCustom` (XLA's `IsCustomFusion`).
    pub fn is_custom_fusion(&self, i: Instr) -> bool {
        *self.opcode(i) == Opcode::Fusion && self.fusion_kind(i) == Some("kCustom")
    }

    /// `kind=kLoop` (XLA's `IsLoopFusion`).
    pub fn is_loop_fusion(&self, i: Instr) -> bool {
        *self.opcode(i) == Opcode::Fusion && self.fusion_kind(i) == Some("kLoop")
    }

    /// Bits of an array's element (the layout's `E(n)` wins), for the first leaf of a
    /// tuple.
    pub fn element_bits(shape: &Shape) -> Option<i64> {
        shape.element_bits()
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// Parses `text` (one module) for a test.
    pub fn module(text: &str) -> model::Module {
        let mut file = model::parse_hlo(text);
        file.modules.swap_remove(0)
    }
}
