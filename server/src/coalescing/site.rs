//! Where the coalescing analysis applies in a document: on a fusion (every
//! operand) and on a parameter of a fused computation (the fusion operand that
//! feeds it).

use super::{analyze, Options, Report, Subject};
use crate::analysis::{self, fusion::Reached};
use crate::model::{self, ComputationId, Instruction};

/// An instruction the analysis speaks about.
#[derive(Clone, Copy, Debug)]
pub enum Site<'m> {
    /// A fusion instruction in computation `computation`.
    Fusion {
        computation: ComputationId,
        fusion: &'m Instruction,
    },
    /// Parameter `operand` of a fused computation, called by `fusion` (the first
    /// caller) in `computation`.
    Parameter {
        computation: ComputationId,
        fusion: &'m Instruction,
        operand: usize,
    },
}

impl<'m> Site<'m> {
    /// The site of `instruction` of computation `computation`, if any.
    pub fn at(
        module: &'m model::Module,
        computation: ComputationId,
        instruction: &'m Instruction,
    ) -> Option<Site<'m>> {
        if instruction.opcode.name() == "fusion" {
            return Some(Site::Fusion {
                computation,
                fusion: instruction,
            });
        }
        let k = usize::try_from(instruction.parameter_number?).ok()?;
        let (caller, fusion) = calling_fusion(module, computation)?;
        Some(Site::Parameter {
            computation: caller,
            fusion,
            operand: k,
        })
    }

    pub fn fusion(&self) -> &'m Instruction {
        match self {
            Site::Fusion { fusion, .. } | Site::Parameter { fusion, .. } => fusion,
        }
    }

    pub fn computation(&self) -> ComputationId {
        match self {
            Site::Fusion { computation, .. } | Site::Parameter { computation, .. } => *computation,
        }
    }

    /// The fused computation the fusion calls.
    pub fn fused(&self, module: &model::Module) -> Option<ComputationId> {
        Some(module.called_computation(self.fusion(), "calls")?.id)
    }

    /// The analysis of the site: every operand of a fusion, or the one operand of
    /// a parameter. `outputs` may hold the fused computation's cached maps.
    pub fn report(
        &self,
        module: &model::Module,
        view: &analysis::Module<'_>,
        options: &Options,
        outputs: Option<&[Vec<Reached>]>,
    ) -> Option<Report> {
        let subject = Subject::new(
            module,
            view,
            module.computation(self.computation()),
            self.fusion(),
        )
        .ok()?;
        let mut options = options.clone();
        if let Site::Parameter { operand, .. } = self {
            options.operand = Some(*operand);
        }
        let report = analyze(&subject, &options, outputs);
        (!report.operands.is_empty()).then_some(report)
    }
}

/// The first fusion calling `computation`, and the computation it is in.
pub fn calling_fusion(
    module: &model::Module,
    computation: ComputationId,
) -> Option<(ComputationId, &Instruction)> {
    module.callers_of(computation).iter().find_map(|site| {
        let (caller, instruction) = module.caller(site)?;
        (instruction.opcode.name() == "fusion").then_some((caller.id, instruction))
    })
}
