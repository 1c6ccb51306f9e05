//! XLA's `FusionDecision`: a fusion is allowed, or refused for one reason. The reasons
//! are typed so that callers can match on them; [`FusionDecision::message`] gives the
//! words XLA's `Explain()` prints, so that a hover or a log reads as XLA's own
//! `--vmodule=priority_fusion=10` output does.

/// Allowed, or the reason XLA refuses the fusion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FusionDecision {
    Allow,
    // -- gpu_fusible.cc: producer/consumer fusibility.
    ProducerNotLoopFusible,
    ReductionEpilogueNotFusible,
    ReductionOutputSingleUser,
    ConsumerNotInputOrLoopFusible,
    ProducerIsMultiOutputFusionForConsumer,
    NotFusingConstant,
    // -- CanEmitInputFusedScatter.
    IntoScatterOutput,
    IntoScatterInPlaceOperand,
    ProducerUsesScatterInPlaceOperand,
    // -- IsProducerMultiOutputFusible.
    ProducerIsMultiOutputFusion,
    InPlaceOperationsPresent,
    MultiOutputProducerNotLoopFusible,
    ProducerPhysicallyTransposing,
    // -- ProducerCandidateIsFusible (multi-output fusion of a producer and its consumer).
    ConsumerNotMultiOutputRoot,
    // -- FusionHeroesAreCompatible / ShapesCompatibleForMultiOutputFusion.
    TiledReductionsWithDifferentShapes,
    TiledTransposesWithDifferentShapes,
    NestedTransposeWithUnnestedHero,
    TransposeAndReduction,
    TiledTransposeWouldBecomeUntiled,
    DifferentLoopShapes,
    // -- FusionFitsInBudget.
    SharedMemoryOverBudget {
        budget_bytes: i64,
    },
    TooManyUnnestedReductions {
        limit: i64,
    },
    TooManyOperandsAndOutputs,
    // -- PriorityFusion::CanFuse / CanFuseWithAllNonBitcastUsers.
    ProducerNotFusible,
    ConsumerNotFusible,
    IntoSingleBitcast,
    NotAnArray,
    BothContainReduce,
    TransposeIntoSignificantReduction,
    ReduceOutputWouldBecomeLoop,
    OverlyLargeCodeDuplication,
    IntoRootOutput,
    NoUsers,
    OnlyBitcastUsers,
    /// Generic Triton fusions are decided by Triton's tiling, which is not modelled.
    GenericTritonFusion,
    // -- PriorityFusionQueue::CanFuseTriton and Triton multi-output fusion.
    ScanEpilogue,
    TritonHerolessDisabled,
    /// Triton's support check refused an instruction, in Triton's words.
    TritonUnsupported(String),
    MoreThanOneConsumer,
}

impl FusionDecision {
    pub fn is_allowed(&self) -> bool {
        *self == FusionDecision::Allow
    }

    /// XLA's words for the decision (`FusionDecision::Explain`); empty when allowed.
    pub fn message(&self) -> String {
        use FusionDecision::*;
        let text = match self {
            Allow => "",
            ProducerNotLoopFusible => "the producer is not loop-fusible",
            ReductionEpilogueNotFusible => {
                "Reductions from/to continuous dims epilogue not fusible"
            }
            ReductionOutputSingleUser => "reduction output fusion only works for single user",
            ConsumerNotInputOrLoopFusible => {
                "the consumer is not input-fusible and not loop-fusible"
            }
            ProducerIsMultiOutputFusionForConsumer => {
                "the producer is not fusible as it is a multi-output fusion"
            }
            NotFusingConstant => "not fusing constant",
            IntoScatterOutput => "do not fuse into the output of scatter",
            IntoScatterInPlaceOperand => "do not fuse into the in-place operand of scatter",
            ProducerUsesScatterInPlaceOperand => "Producer uses the in-place operand of a scatter",
            ProducerIsMultiOutputFusion => "Producer is a multi-output fusion",
            InPlaceOperationsPresent => "In-place operations are present",
            MultiOutputProducerNotLoopFusible => "producer is not loop-fusible",
            ProducerPhysicallyTransposing => "producer is physically transposing",
            ConsumerNotMultiOutputRoot => "consumer not eligible as multi-output fusion root.",
            TiledReductionsWithDifferentShapes => "tiled reductions with different shapes",
            TiledTransposesWithDifferentShapes => "tiled transposes with different shapes",
            NestedTransposeWithUnnestedHero => {
                "multi-output fusion of a nested transpose with an unnested hero op"
            }
            TransposeAndReduction => "multi-output fusion of a transpose and a reduction",
            TiledTransposeWouldBecomeUntiled => "tiled transpose would become untiled",
            DifferentLoopShapes => "different loop shapes",
            SharedMemoryOverBudget { budget_bytes } => {
                return format!("shared memory usage would be over the budget of {budget_bytes}B")
            }
            TooManyUnnestedReductions { limit } => {
                return format!("over {limit} unnested reductions in fusion")
            }
            TooManyOperandsAndOutputs => {
                "Number of operands and output buffers is larger than allowed budget per fusion"
            }
            ProducerNotFusible => "the producer is not fusible",
            ConsumerNotFusible => "the consumer is not fusible",
            IntoSingleBitcast => "not fusing into a single bitcast as consumer",
            NotAnArray => "not an array",
            BothContainReduce => "both the producer and the consumer contain a reduce",
            TransposeIntoSignificantReduction => {
                "Do not fuse transpose into a significant reduction"
            }
            ReduceOutputWouldBecomeLoop => {
                "fusion into output of a reduce fusion would create a loop fusion"
            }
            OverlyLargeCodeDuplication => {
                "the fusion would result in an overly large code duplication"
            }
            IntoRootOutput => "not fusing into the output of the root instruction",
            NoUsers => "No users to fuse",
            OnlyBitcastUsers => "not fusing because there are only bitcast users",
            GenericTritonFusion => {
                "generic Triton fusions are decided by Triton's tiling (not modelled)"
            }
            ScanEpilogue => "epilogue fusion for scan is not supported",
            TritonHerolessDisabled => "triton heroless fusion is not enabled",
            TritonUnsupported(why) => return why.clone(),
            MoreThanOneConsumer => "more than one consumer to fuse with",
        };
        text.to_string()
    }
}

impl std::fmt::Display for FusionDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_xlas_words() {
        assert!(FusionDecision::Allow.is_allowed());
        assert_eq!(FusionDecision::Allow.message(), "");
        assert_eq!(
            FusionDecision::SharedMemoryOverBudget {
                budget_bytes: 49152
            }
            .message(),
            "shared memory usage would be over the budget of 49152B"
        );
        assert_eq!(
            FusionDecision::TooManyUnnestedReductions { limit: 8 }.to_string(),
            "over 8 unnested reductions in fusion"
        );
        assert_eq!(
            FusionDecision::BothContainReduce.message(),
            "both the producer and the consumer contain a reduce"
        );
    }
}
