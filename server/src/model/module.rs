//! The typed HLO model: a file holds modules, a module holds computations, a
//! computation holds instructions. Every name, operand and attribute keeps its byte
//! range in the document so the server can point at it; operands are resolved to the
//! instructions that define them and called computations to their ids.

use std::ops::Range;

use super::attributes::Attrs;
use super::diagnostics::Diagnostic;
use super::opcode::Opcode;
use super::shape::Shape;

/// A map from names to ids with a fast, non-cryptographic hash (rustc's FxHash, from
/// the `rustc-hash` crate): names come from the document, and hashing them with SipHash
/// showed up in profiles of large modules.
pub type NameMap<V> = rustc_hash::FxHashMap<String, V>;

/// Index of a module in [`HloFile::modules`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleId(pub u32);

/// Index of a computation in [`Module::computations`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComputationId(pub u32);

/// Index of an instruction in [`Computation::instructions`]. Operands always refer to
/// instructions of the same computation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstrId(pub u32);

impl ModuleId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl ComputationId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl InstrId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Everything built from one document: the modules (split by `// -----`) and the
/// semantic diagnostics (syntax diagnostics stay with the syntax layer; [`super::parse_hlo`]
/// returns both).
#[derive(Debug, Clone, Default)]
pub struct HloFile {
    pub modules: Vec<Module>,
    pub diagnostics: Vec<Diagnostic>,
}

/// One HLO module: a `HloModule` header (optional) and its computations.
#[derive(Debug, Clone, Default)]
pub struct Module {
    /// Name from the `HloModule` line, if there is one.
    pub name: Option<String>,
    pub name_range: Option<Range<usize>>,
    /// The `HloModule ...` line with its attributes.
    pub header_range: Option<Range<usize>>,
    /// From the first to the last byte of the module's text.
    pub range: Range<usize>,
    pub computations: Vec<Computation>,
    /// The `ENTRY` computation, or the last one when none is marked (as XLA's parser).
    pub entry: Option<ComputationId>,
    /// First computation of each name (duplicates are reported).
    pub computation_names: NameMap<ComputationId>,
    /// For each computation (by id), the instructions that call it (`calls=`,
    /// `to_apply=`, ...): for a fused computation, the fusion instruction(s).
    pub callers: Vec<Vec<CallSite>>,
}

/// An instruction that calls a computation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSite {
    pub computation: ComputationId,
    pub instruction: InstrId,
    /// Index into the caller's [`Instruction::called`].
    pub called_index: u32,
}

/// One computation: `[ENTRY] name [(signature) -> shape] { instructions }`.
#[derive(Debug, Clone, Default)]
pub struct Computation {
    pub name: String,
    pub name_range: Range<usize>,
    /// The whole computation including its body.
    pub range: Range<usize>,
    /// Marked `ENTRY` in the text.
    pub is_entry: bool,
    /// The `(p: shape, ...) -> shape` signature, if written.
    pub signature_range: Option<Range<usize>>,
    pub instructions: Vec<Instruction>,
    /// First instruction of each name (duplicates are reported).
    pub names: NameMap<InstrId>,
    /// The `ROOT` instruction, or the last one when none is marked.
    pub root: Option<InstrId>,
    /// `parameters[k]` is the instruction `parameter(k)`, if any.
    pub parameters: Vec<Option<InstrId>>,
}

/// One instruction: `[ROOT] name = shape opcode(operands), attributes`.
#[derive(Debug, Clone)]
pub struct Instruction {
    pub id: InstrId,
    /// The name without `%`. For an operand written inline (XLA's nested form) the
    /// builder synthesizes an instruction named `<user>.operand<k>`.
    pub name: String,
    /// Range of the name as written (including `%`); for synthesized instructions,
    /// the range of the inline operand.
    pub name_range: Range<usize>,
    /// The whole instruction, up to and including its last attribute.
    pub range: Range<usize>,
    /// Marked `ROOT` in the text.
    pub is_root: bool,
    /// True for instructions synthesized from inline operands.
    pub synthetic: bool,
    pub shape: Shape,
    pub shape_range: Range<usize>,
    pub opcode: Opcode,
    pub opcode_range: Range<usize>,
    pub operands: Vec<Operand>,
    /// The parenthesized operand list, `(` to `)`.
    pub operands_range: Range<usize>,
    /// Literal operands (`constant(1)`, `parameter(0)`'s number): ranges in order.
    pub literals: Vec<Range<usize>>,
    /// `parameter(k)`'s number.
    pub parameter_number: Option<i64>,
    pub attributes: Vec<Attribute>,
    /// Decoded attributes the opcode needs.
    pub attrs: Attrs,
    /// Computations this instruction calls, in attribute order.
    pub called: Vec<CalledComputation>,
    /// Instructions of the same computation that use this one as an operand (in order,
    /// one entry per use).
    pub users: Vec<InstrId>,
}

/// One operand reference: `%name`, `f32[2] %name` (shape written), or an inline
/// instruction (then `target` is the synthesized instruction).
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    /// The whole operand text.
    pub range: Range<usize>,
    /// The name as written (with `%`), if the operand is a name.
    pub name_range: Option<Range<usize>>,
    /// A shape written before the name (`f32[2] %x`), decoded.
    pub declared_shape: Option<Shape>,
    /// The defining instruction, `None` when the name is undefined (reported).
    pub target: Option<InstrId>,
}

/// How an attribute's value is written (the syntax node kind of the value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttributeValueKind {
    /// `calls=%fused_computation`
    ComputationRef,
    /// `branch_computations={%a, %b}`
    ComputationList,
    /// `{...}`
    Braces,
    /// `"..."`
    String,
    /// one token: `kLoop`, `b01f_01io->b01f`, `1_4_1x4_8_0`, `true`, `3`
    Atom,
}

/// One `key=value` attribute with ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    pub name: String,
    pub name_range: Range<usize>,
    pub value_range: Range<usize>,
    pub value_kind: AttributeValueKind,
}

/// A computation named by an attribute (`calls=`, `to_apply=`, `branch_computations=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalledComputation {
    /// The attribute it appears in (`calls`, `to_apply`, `condition`, ...).
    pub attribute: String,
    /// The name without `%`.
    pub name: String,
    pub name_range: Range<usize>,
    /// `None` when the module has no computation of that name (reported).
    pub target: Option<ComputationId>,
}

/// Where an instruction lives: module, computation, instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InstrRef {
    pub module: ModuleId,
    pub computation: ComputationId,
    pub instruction: InstrId,
}

impl HloFile {
    pub fn module(&self, id: ModuleId) -> &Module {
        &self.modules[id.index()]
    }

    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The module whose text contains `offset`.
    pub fn module_at(&self, offset: usize) -> Option<ModuleId> {
        self.modules
            .iter()
            .position(|m| m.range.contains(&offset) || m.range.end == offset)
            .map(|i| ModuleId(i as u32))
    }

    /// The innermost instruction whose text contains `offset` (synthesized inline
    /// operands win over the instruction that contains them).
    pub fn instruction_at(&self, offset: usize) -> Option<InstrRef> {
        let module = self.module_at(offset)?;
        let m = self.module(module);
        let computation = m.computation_at(offset)?;
        let c = m.computation(computation);
        let mut best: Option<&Instruction> = None;
        for instr in c
            .instructions
            .iter()
            .filter(|i| i.range.start <= offset && offset <= i.range.end)
        {
            if best.is_none_or(|b| instr.range.len() < b.range.len()) {
                best = Some(instr);
            }
        }
        best.map(|i| InstrRef {
            module,
            computation,
            instruction: i.id,
        })
    }

    pub fn instruction(&self, r: InstrRef) -> &Instruction {
        self.module(r.module)
            .computation(r.computation)
            .instruction(r.instruction)
    }

    /// Iterates over every instruction of every computation of every module.
    pub fn all_instructions(&self) -> impl Iterator<Item = (InstrRef, &Instruction)> {
        self.modules.iter().enumerate().flat_map(|(mi, m)| {
            m.computations.iter().enumerate().flat_map(move |(ci, c)| {
                c.instructions.iter().map(move |i| {
                    (
                        InstrRef {
                            module: ModuleId(mi as u32),
                            computation: ComputationId(ci as u32),
                            instruction: i.id,
                        },
                        i,
                    )
                })
            })
        })
    }
}

impl Module {
    pub fn computation(&self, id: ComputationId) -> &Computation {
        &self.computations[id.index()]
    }

    pub fn computation_by_name(&self, name: &str) -> Option<ComputationId> {
        self.computation_names
            .get(name.strip_prefix('%').unwrap_or(name))
            .copied()
    }

    pub fn entry_computation(&self) -> Option<&Computation> {
        self.entry.map(|id| self.computation(id))
    }

    pub fn computation_at(&self, offset: usize) -> Option<ComputationId> {
        self.computations
            .iter()
            .position(|c| c.range.start <= offset && offset <= c.range.end)
            .map(|i| ComputationId(i as u32))
    }

    /// Instructions that call computation `id` (for a fused computation: its fusions).
    pub fn callers_of(&self, id: ComputationId) -> &[CallSite] {
        self.callers
            .get(id.index())
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The computation an instruction calls through attribute `attribute`
    /// (`calls` for a fusion, `to_apply` for a reduce, ...).
    pub fn called_computation(&self, instr: &Instruction, attribute: &str) -> Option<&Computation> {
        instr
            .called
            .iter()
            .find(|c| c.attribute == attribute)
            .and_then(|c| c.target)
            .map(|id| self.computation(id))
    }

    /// Finds an instruction by name in any computation (first match in order).
    pub fn find_instruction(&self, name: &str) -> Option<(ComputationId, InstrId)> {
        let name = name.strip_prefix('%').unwrap_or(name);
        self.computations
            .iter()
            .enumerate()
            .find_map(|(ci, c)| c.names.get(name).map(|&id| (ComputationId(ci as u32), id)))
    }
}

impl Computation {
    pub fn instruction(&self, id: InstrId) -> &Instruction {
        &self.instructions[id.index()]
    }

    pub fn instruction_by_name(&self, name: &str) -> Option<&Instruction> {
        self.names
            .get(name.strip_prefix('%').unwrap_or(name))
            .map(|&id| self.instruction(id))
    }

    pub fn root_instruction(&self) -> Option<&Instruction> {
        self.root.map(|id| self.instruction(id))
    }

    /// The instruction `parameter(k)`.
    pub fn parameter(&self, k: usize) -> Option<&Instruction> {
        self.parameters
            .get(k)
            .copied()
            .flatten()
            .map(|id| self.instruction(id))
    }

    /// The instruction an operand refers to.
    pub fn operand_instruction(&self, operand: &Operand) -> Option<&Instruction> {
        operand.target.map(|id| self.instruction(id))
    }

    /// The shape of operand `k` of `instr` (from its definition, else as written).
    pub fn operand_shape<'a>(&'a self, instr: &'a Instruction, k: usize) -> Option<&'a Shape> {
        let operand = instr.operands.get(k)?;
        match operand.target {
            Some(id) => Some(&self.instruction(id).shape),
            None => operand.declared_shape.as_ref(),
        }
    }
}

impl Instruction {
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }
}
