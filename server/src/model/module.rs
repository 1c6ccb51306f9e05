//! The typed HLO model: a file holds modules, a module holds computations, a
//! computation holds instructions. Operands are resolved to the instructions that
//! define them; called computations are resolved by name through the module.
//!
//! A computation is built from its own chunk of text alone (see [`super::build`]), so
//! every position inside it is a [`Span`] relative to the start of that chunk: an edit
//! elsewhere moves the chunk without touching what was built from it. Code that needs
//! document positions goes through a [`ComputationRef`], which knows where its chunk
//! starts ([`ComputationRef::abs`]) and its text ([`ComputationRef::src`]).

use crate::blocks::Blocks;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use thin_vec::ThinVec;

use crate::syntax::Chunk;

use super::attributes::{AttrName, Attrs};
use super::diagnostics::Diagnostic;
use super::opcode::Opcode;
use super::shape::Shape;

/// Bytes of a computation's chunk, relative to the chunk's start (`u32`: a chunk is a
/// single computation, far below 4 GiB; half the size of a `Range<usize>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// No range: what an absent optional range is stored as.
    pub const NONE: Span = Span {
        start: u32::MAX,
        end: u32::MAX,
    };

    pub fn new(range: Range<usize>) -> Span {
        Span {
            start: range.start as u32,
            end: range.end as u32,
        }
    }

    /// The empty span at `at`.
    pub fn at(at: u32) -> Span {
        Span { start: at, end: at }
    }

    pub fn is_empty(self) -> bool {
        self.start >= self.end
    }

    pub fn len(self) -> usize {
        self.end.saturating_sub(self.start) as usize
    }

    /// As a range of the chunk's text.
    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Whether `offset` (relative to the chunk) is inside or at either end.
    pub fn touches(self, offset: usize) -> bool {
        self.start as usize <= offset && offset <= self.end as usize
    }
}

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

/// The modules of one document (split by `// -----`), and its diagnostics when built
/// whole by [`super::parse_hlo`] (a lazily built [`super::Document`] leaves them empty:
/// it computes diagnostics per computation instead).
#[derive(Debug, Clone, Default)]
pub struct HloFile {
    pub modules: Vec<Module>,
    pub diagnostics: Vec<Diagnostic>,
}

/// One HLO module: a `HloModule` header (optional) and its computations. It
/// dereferences to its [`Crossrefs`], which versions share while their edits leave the
/// names and calls alone.
#[derive(Debug, Clone, Default)]
pub struct Module {
    /// Name from the `HloModule` line, if there is one.
    pub name: Option<String>,
    pub name_range: Option<Range<usize>>,
    /// The `HloModule ...` line with its attributes.
    pub header_range: Option<Range<usize>>,
    /// The chunk (and unit) of the header, for its text ([`Module::header_text`]).
    pub(crate) header_chunk: Option<usize>,
    /// The header says `is_scheduled=true` and gives `entry_computation_layout`: XLA
    /// printed the module after its pipeline (an after-optimizations dump). Modules
    /// written by hand for tests may say the first, not both.
    pub compiled: bool,
    /// `replica_count=` and `num_partitions=` of the header (XLA's
    /// `HloModuleConfig`), when written; read them with [`Module::replica_count`]
    /// and [`Module::num_partitions`].
    pub replicas: Option<i64>,
    pub partitions: Option<i64>,
    /// From the first to the last byte of the module's text.
    pub range: Range<usize>,
    /// The computations in text order, each where its chunk starts (shared by the
    /// versions whose edits moved no chunk).
    pub(crate) places: Arc<Vec<Placed>>,
    /// The document's units (see [`Units`]): `units[places[i].chunk]` is
    /// computation `i`'s.
    pub(crate) units: Units,
    pub(crate) refs: Arc<Crossrefs>,
    /// Every instruction of the module by name, made on first use by
    /// [`Module::find_instruction`].
    pub(crate) instruction_index: OnceLock<InstructionIndex>,
}

/// The first instruction of each name across a module's computations, in text order:
/// the memory report looks up each of its buffers' instructions by name, and scanning
/// every computation's own index per look-up made a report of a module of 25,000
/// computations quadratic. Hashes with ids, sorted (16 bytes an instruction, no copy
/// of the names); equal hashes are told apart by the names the instructions hold.
#[derive(Debug, Clone, Default)]
pub struct InstructionIndex {
    /// `(hash of the name, computation, instruction)`, by hash, then text order.
    entries: Vec<(u64, ComputationId, InstrId)>,
}

impl InstructionIndex {
    fn of(module: &Module) -> InstructionIndex {
        let mut entries: Vec<(u64, ComputationId, InstrId)> = module
            .computations()
            .flat_map(|c| {
                c.model()
                    .instructions
                    .iter()
                    .map(move |i| (super::names::hash(&i.name), c.id, i.id))
            })
            .collect();
        // Stable: among equal hashes the first in text order stays first.
        entries.sort_by_key(|&(h, _, _)| h);
        InstructionIndex { entries }
    }

    fn get(&self, module: &Module, name: &str) -> Option<(ComputationId, InstrId)> {
        let h = super::names::hash(name);
        let from = self.entries.partition_point(|&(e, _, _)| e < h);
        self.entries[from..]
            .iter()
            .take_while(|&&(e, _, _)| e == h)
            .find(|&&(_, c, i)| *module.computation(c).instruction(i).name == *name)
            .map(|&(_, c, i)| (c, i))
    }
}

impl std::ops::Deref for Module {
    type Target = Crossrefs;
    fn deref(&self) -> &Crossrefs {
        &self.refs
    }
}

/// What ties a module's computations together, from their outlines: who defines each
/// name and who calls whom. It depends on names and calls only, not on positions, so
/// an edit inside a computation body keeps it.
#[derive(Debug, Clone, Default)]
pub struct Crossrefs {
    /// The `ENTRY` computation, or the last one when none is marked (as XLA's parser).
    pub entry: Option<ComputationId>,
    /// First computation of each name (duplicates are reported); names shared with
    /// the outlines, so indexing a version allocates no strings.
    pub computation_names: rustc_hash::FxHashMap<Arc<str>, ComputationId>,
    /// For each name called (`calls=`, `to_apply=`, ...), the call sites, whether the
    /// module defines the name or not: for a fused computation, its fusion(s).
    pub callers: rustc_hash::FxHashMap<Arc<str>, Vec<CallSite>>,
    /// Computations whose name an earlier one already has.
    pub duplicates: Vec<ComputationId>,
    /// Computations marked `ENTRY` (one, in a valid module).
    pub marked_entries: Vec<ComputationId>,
    /// The call graph's strongly connected components, computed on first use.
    pub(crate) components: OnceLock<Vec<u32>>,
    /// The backend the module's text names ([`super::backend::Backend::of_text`]),
    /// found on first use and kept while names and calls stay: how a dump was
    /// compiled does not change with an edit of a body.
    pub(crate) backend: OnceLock<Option<super::backend::Backend>>,
    /// [`super::backend::before_fusion`], found on first use and kept like
    /// `backend`: a new fusion instruction changes the calls, and so these tables.
    pub(crate) before_fusion: OnceLock<bool>,
}

/// A chunk and what it alone yields, built on first use: shared (`Arc`) between
/// versions of a document whose edits did not touch the chunk, so a computation is
/// built once however often the rest of the document changes.
#[derive(Debug)]
pub struct Unit {
    pub chunk: Arc<Chunk>,
    built: OnceLock<Built>,
    /// [`Unit::fingerprint`], made on first use.
    fingerprint: OnceLock<u64>,
}

/// What a chunk yields on its own.
#[derive(Debug, Default)]
pub struct Built {
    /// The computation (for a computation chunk; empty but named from the outline
    /// when the chunk does not parse as one).
    pub computation: Computation,
    /// Syntax errors and what building the computation alone found, with ranges
    /// relative to the chunk.
    pub diagnostics: Vec<Diagnostic>,
}

impl Unit {
    pub fn new(chunk: Arc<Chunk>) -> Unit {
        Unit {
            chunk,
            built: OnceLock::new(),
            fingerprint: OnceLock::new(),
        }
    }

    /// A hash of the chunk's text without its instructions' `metadata={...}`: equal
    /// for two chunks that differ only in what the metadata says (an `op_name`, a
    /// source line), which no shape, buffer or schedule depends on. Answers that read
    /// no metadata (the memory estimate) are kept across versions whose units all
    /// keep their fingerprints.
    pub fn fingerprint(&self) -> u64 {
        *self
            .fingerprint
            .get_or_init(|| super::fingerprint::without_metadata(self.chunk.text()))
    }

    /// The chunk's text; every [`Span`] of its computation indexes it.
    pub fn text(&self) -> &str {
        self.chunk.text()
    }

    /// Builds on first use (parsing the chunk if it keeps no tree).
    pub fn built(&self) -> &Built {
        self.built
            .get_or_init(|| super::build::build_chunk(&self.chunk))
    }

    /// Whether [`Self::built`] has run.
    pub fn is_built(&self) -> bool {
        self.built.get().is_some()
    }

    /// Whether the chunk is built and shows nothing wrong on its own (no syntax
    /// errors, nothing its computation alone shows).
    pub fn is_quiet(&self) -> bool {
        self.built.get().is_some_and(|b| b.diagnostics.is_empty())
    }

    /// Whether the chunk, once built, has syntax errors (`false` while not built).
    pub fn has_syntax_errors(&self) -> bool {
        self.built.get().is_some_and(|b| {
            b.diagnostics
                .iter()
                .any(|d| d.code == super::diagnostics::codes::SYNTAX_ERROR)
        })
    }
}

/// A [`Unit`] at its place in the document.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    /// Document offset of the chunk's first byte.
    pub offset: usize,
    /// Index of the chunk (and its unit) in the document.
    pub chunk: usize,
}

/// A document's units, one per chunk, shared by the document and its index: an edit
/// makes one new list (sharing the blocks it leaves alone with the last), and the
/// index reads its units from it instead of holding a reference to each (tens of
/// thousands to count up and down per edit).
pub type Units = Arc<Blocks<Arc<Unit>>>;

/// A call of a computation, from the caller's outline (known without building it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSite {
    /// The calling computation.
    pub computation: ComputationId,
    /// Index into the caller's outline calls ([`crate::syntax::Outline::calls`]).
    pub call: u32,
}

/// A computation where it stands in the document: its id in the module, where its
/// chunk starts and the chunk's text. Dereferences to the [`Computation`].
#[derive(Debug, Clone, Copy)]
pub struct ComputationRef<'a> {
    pub id: ComputationId,
    /// Document offset of the chunk's first byte.
    pub offset: usize,
    /// The chunk's text.
    pub text: &'a str,
    computation: &'a Computation,
}

impl<'a> std::ops::Deref for ComputationRef<'a> {
    type Target = Computation;
    fn deref(&self) -> &Computation {
        self.computation
    }
}

impl<'a> ComputationRef<'a> {
    /// The computation itself, for the lifetime of the model.
    pub fn model(&self) -> &'a Computation {
        self.computation
    }

    /// A span of this computation in document bytes.
    pub fn abs(&self, span: Span) -> Range<usize> {
        self.offset + span.start as usize..self.offset + span.end as usize
    }

    /// The text of a span.
    pub fn src(&self, span: Span) -> &'a str {
        self.text.get(span.range()).unwrap_or("")
    }

    /// A document offset relative to this computation's chunk, if it falls inside.
    pub fn relative(&self, offset: usize) -> Option<usize> {
        offset
            .checked_sub(self.offset)
            .filter(|&r| r <= self.text.len())
    }

    /// The whole computation in document bytes.
    pub fn range(&self) -> Range<usize> {
        self.abs(self.computation.range)
    }

    pub fn instruction(&self, id: InstrId) -> &'a Instruction {
        &self.computation.instructions[id.index()]
    }

    /// The innermost instruction whose text contains document offset `offset`
    /// (synthesized inline operands win over the instruction that contains them).
    pub fn instruction_at(&self, offset: usize) -> Option<&'a Instruction> {
        let rel = self.relative(offset)?;
        let mut best: Option<&Instruction> = None;
        for instr in self
            .computation
            .instructions
            .iter()
            .filter(|i| i.range.touches(rel))
        {
            if best.is_none_or(|b| instr.range.len() < b.range.len()) {
                best = Some(instr);
            }
        }
        best
    }
}

/// One computation: `[ENTRY] name [(signature) -> shape] { instructions }`. Spans are
/// relative to the computation's chunk.
#[derive(Debug, Clone, Default)]
pub struct Computation {
    pub name: String,
    pub name_range: Span,
    /// The whole computation including its body.
    pub range: Span,
    /// Marked `ENTRY` in the text.
    pub is_entry: bool,
    /// The `(p: shape, ...) -> shape` signature, if written.
    pub signature_range: Option<Span>,
    /// The names in the signature, parameter by parameter (`param_1.11` in
    /// `(param_0: f32[8], param_1.11: f32[8])`): renames edit them too.
    pub signature_parameters: Vec<Span>,
    pub instructions: Vec<Instruction>,
    /// First instruction of each name (duplicates are reported); read it with
    /// [`Computation::instruction_id`].
    pub(crate) names: super::names::NameIndex,
    /// The `ROOT` instruction, or the last one when none is marked.
    pub root: Option<InstrId>,
    /// `parameters[k]` is the instruction `parameter(k)`, if any.
    pub parameters: Vec<Option<InstrId>>,
    /// Who uses each instruction; read it with [`Computation::users`].
    pub(crate) users: Users,
    /// Where each computation name this one's instructions call is written (its
    /// start) and the instruction calling it, sorted by place: finding the caller of
    /// a call site is a search, not a scan (checks ask it of each of the hundreds of
    /// fusions a computation calls).
    pub(crate) call_sites: Box<[(u32, InstrId)]>,
}

/// [`Computation::call_sites`] of `instructions`.
pub(crate) fn call_sites(instructions: &[Instruction]) -> Box<[(u32, InstrId)]> {
    let mut sites: Vec<(u32, InstrId)> = instructions
        .iter()
        .flat_map(|i| i.called.iter().map(move |c| (c.name_range.start, i.id)))
        .collect();
    sites.sort_unstable_by_key(|&(at, _)| at);
    sites.into_boxed_slice()
}

/// The instructions that use each instruction of a computation as an operand, one
/// entry per use, by the user's place in the computation: one table for the whole
/// computation (a list of its own per instruction cost 20 bytes an instruction).
#[derive(Debug, Clone, Default)]
pub(crate) struct Users {
    /// The uses of instruction `i` are `users[starts[i]..starts[i + 1]]`.
    starts: Box<[u32]>,
    users: Box<[InstrId]>,
}

impl Users {
    /// The table of `instructions`, read from their operands' targets.
    pub(crate) fn of(instructions: &[Instruction]) -> Users {
        let targets = || {
            instructions.iter().flat_map(|i| {
                i.operands
                    .iter()
                    .filter_map(move |o| o.target.map(|t| (t, i.id)))
            })
        };
        let mut starts = vec![0u32; instructions.len() + 1];
        for (target, _) in targets() {
            if let Some(count) = starts.get_mut(target.index() + 1) {
                *count += 1;
            }
        }
        for k in 1..starts.len() {
            starts[k] += starts[k - 1];
        }
        let mut next = starts.clone();
        let mut users = vec![InstrId(0); starts.last().map_or(0, |&n| n as usize)];
        for (target, user) in targets() {
            if let Some(at) = next.get_mut(target.index()) {
                users[*at as usize] = user;
                *at += 1;
            }
        }
        Users {
            starts: starts.into(),
            users: users.into(),
        }
    }

    fn of_instruction(&self, id: InstrId) -> &[InstrId] {
        match (self.starts.get(id.index()), self.starts.get(id.index() + 1)) {
            (Some(&start), Some(&end)) => &self.users[start as usize..end as usize],
            _ => &[],
        }
    }
}

/// One instruction: `[ROOT] name = shape opcode(operands), attributes`.
#[derive(Debug, Clone)]
pub struct Instruction {
    pub id: InstrId,
    /// The name without `%`. For an operand written inline (XLA's nested form) the
    /// builder synthesizes an instruction named `<user>.operand<k>`.
    pub name: Box<str>,
    /// Range of the name as written (including `%`); for synthesized instructions,
    /// the range of the inline operand.
    pub name_range: Span,
    /// The whole instruction, up to and including its last attribute.
    pub range: Span,
    /// Marked `ROOT` in the text.
    pub is_root: bool,
    /// True for instructions synthesized from inline operands.
    pub synthetic: bool,
    /// Shared between the instructions that write the same shape (see
    /// [`super::shape::parse_shared_shape`]).
    pub shape: Arc<Shape>,
    pub shape_range: Span,
    pub opcode: Opcode,
    pub opcode_range: Span,
    pub operands: ThinVec<Operand>,
    /// The parenthesized operand list, `(` to `)`.
    pub operands_range: Span,
    /// Literal operands (`constant(1)`): ranges in order. A parameter's number is
    /// decoded ([`Instruction::parameter_number`]); its range is kept only when it is not
    /// one (for the report).
    pub literals: ThinVec<Span>,
    /// `parameter(k)`'s number.
    pub parameter_number: Option<u32>,
    pub attributes: ThinVec<Attribute>,
    /// Decoded attributes the opcode needs; `None` when there are none (read them with
    /// [`Instruction::attrs`]).
    pub decoded: Option<Box<Attrs>>,
    /// Computations this instruction calls, in attribute order.
    pub called: ThinVec<CalledComputation>,
}

/// One operand reference: `%name`, `f32[2] %name` (shape written), or an inline
/// instruction (then `target` is the synthesized instruction).
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    /// The whole operand text.
    pub range: Span,
    /// The name as written (with `%`), [`Span::NONE`] when the operand is not a name
    /// (read it with [`Operand::name_range`]): an `Option` made the operand 40 bytes,
    /// not 32, in a model of millions.
    name: Span,
    /// A shape written before the name (`f32[2] %x`), decoded (shared: see
    /// [`super::shape::parse_shared_shape`]).
    pub declared_shape: Option<Arc<Shape>>,
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
    pub name: AttrName,
    pub name_range: Span,
    pub value_range: Span,
    pub value_kind: AttributeValueKind,
}

/// A computation named by an attribute (`calls=`, `to_apply=`, `branch_computations=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalledComputation {
    /// The attribute it appears in (`calls`, `to_apply`, `condition`, ...).
    pub attribute: AttrName,
    /// The name without `%`.
    pub name: String,
    pub name_range: Span,
}

/// Where an instruction lives: module, computation, instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InstrRef {
    pub module: ModuleId,
    pub computation: ComputationId,
    pub instruction: InstrId,
}

impl Module {
    /// This module for a version whose edit kept every chunk where it was and changed
    /// no name, call or header: the same places and cross-references, reading `units`
    /// (its instruction index is made again: an edit may rename an instruction).
    pub(crate) fn with_units(&self, units: &Units) -> Module {
        Module {
            name: self.name.clone(),
            name_range: self.name_range.clone(),
            header_range: self.header_range.clone(),
            header_chunk: self.header_chunk,
            compiled: self.compiled,
            replicas: self.replicas,
            partitions: self.partitions,
            range: self.range.clone(),
            places: self.places.clone(),
            units: units.clone(),
            refs: self.refs.clone(),
            instruction_index: OnceLock::new(),
        }
    }
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

    /// The computation chunk `chunk` holds, if it holds one (each module's
    /// computations are in document order: a binary search).
    pub fn computation_in_chunk(&self, chunk: usize) -> Option<(ModuleId, ComputationId)> {
        self.modules.iter().enumerate().find_map(|(mi, m)| {
            let k = m.places.binary_search_by_key(&chunk, |p| p.chunk).ok()?;
            Some((ModuleId(mi as u32), ComputationId(k as u32)))
        })
    }

    /// What [`Self::computation_in_chunk`] gives for each of `chunks`, which ascend: each
    /// module's computations are walked forward from the last one found (galloping), where
    /// a binary search each over tens of thousands of computations was a cache miss per
    /// step, for the thousands of chunks every publish visits.
    pub fn computations_in_chunks<'a>(
        &'a self,
        chunks: impl IntoIterator<Item = usize> + 'a,
    ) -> impl Iterator<Item = Option<(ModuleId, ComputationId)>> + 'a {
        let mut cursors = vec![0; self.modules.len()];
        chunks.into_iter().map(move |chunk| {
            self.modules
                .iter()
                .zip(&mut cursors)
                .enumerate()
                .find_map(|(mi, (m, at))| {
                    *at = first_place_from(&m.places, *at, chunk);
                    let found = m.places.get(*at).is_some_and(|p| p.chunk == chunk);
                    found.then_some((ModuleId(mi as u32), ComputationId(*at as u32)))
                })
        })
    }

    /// The computation whose text contains `offset`.
    pub fn computation_at(&self, offset: usize) -> Option<(ModuleId, ComputationRef<'_>)> {
        let module = self.module_at(offset)?;
        let m = self.module(module);
        let computation = m.computation_at(offset)?;
        Some((module, m.computation(computation)))
    }

    /// The innermost instruction whose text contains `offset` (synthesized inline
    /// operands win over the instruction that contains them).
    pub fn instruction_at(&self, offset: usize) -> Option<InstrRef> {
        let (module, c) = self.computation_at(offset)?;
        c.instruction_at(offset).map(|i| InstrRef {
            module,
            computation: c.id,
            instruction: i.id,
        })
    }

    /// The document text of `range`, when it lies inside one computation.
    pub fn text(&self, range: Range<usize>) -> Option<&str> {
        let (_, c) = self.computation_at(range.start)?;
        let start = c.relative(range.start)?;
        let end = c.relative(range.end)?;
        c.text.get(start..end)
    }

    /// The computation of an instruction reference.
    pub fn computation(&self, r: InstrRef) -> ComputationRef<'_> {
        self.module(r.module).computation(r.computation)
    }

    pub fn instruction(&self, r: InstrRef) -> &Instruction {
        self.computation(r).instruction(r.instruction)
    }

    /// Every computation of every module.
    pub fn all_computations(&self) -> impl Iterator<Item = (ModuleId, ComputationRef<'_>)> {
        self.modules
            .iter()
            .enumerate()
            .flat_map(|(mi, m)| m.computations().map(move |c| (ModuleId(mi as u32), c)))
    }

    /// Iterates over every instruction of every computation of every module.
    pub fn all_instructions(&self) -> impl Iterator<Item = (InstrRef, &Instruction)> {
        self.all_computations().flat_map(|(module, c)| {
            c.model().instructions.iter().map(move |i| {
                (
                    InstrRef {
                        module,
                        computation: c.id,
                        instruction: i.id,
                    },
                    i,
                )
            })
        })
    }
}

impl Module {
    /// Replicas the module runs on (`replica_count=`, 1 when not written).
    pub fn replica_count(&self) -> i64 {
        self.replicas.unwrap_or(1)
    }

    /// Partitions the module is split into (`num_partitions=`, 1 when not written).
    pub fn num_partitions(&self) -> i64 {
        self.partitions.unwrap_or(1)
    }

    /// Computation `id` where it stands in the document.
    pub fn computation(&self, id: ComputationId) -> ComputationRef<'_> {
        let placed = &self.places[id.index()];
        let unit = &self.units[placed.chunk];
        ComputationRef {
            id,
            offset: placed.offset,
            text: unit.text(),
            computation: &unit.built().computation,
        }
    }

    /// The text of computation `id`'s chunk, without building its computation
    /// (completion reads every signature of a large module this way).
    pub fn chunk_text(&self, id: ComputationId) -> &str {
        self.unit(id).text()
    }

    /// The unit of computation `id`.
    fn unit(&self, id: ComputationId) -> &Unit {
        &self.units[self.places[id.index()].chunk]
    }

    /// The computations in text order.
    pub fn computations(&self) -> impl ExactSizeIterator<Item = ComputationRef<'_>> + '_ {
        (0..self.places.len()).map(|i| self.computation(ComputationId(i as u32)))
    }

    pub fn computation_count(&self) -> usize {
        self.places.len()
    }

    pub fn computation_by_name(&self, name: &str) -> Option<ComputationId> {
        self.computation_names
            .get(name.strip_prefix('%').unwrap_or(name))
            .copied()
    }

    /// The computation a call names, when the module has one of that name.
    pub fn resolve(&self, called: &CalledComputation) -> Option<ComputationRef<'_>> {
        self.computation_by_name(&called.name)
            .map(|id| self.computation(id))
    }

    /// The `HloModule` line's text with its attributes (`num_partitions=8`, ...).
    pub fn header_text(&self) -> Option<&str> {
        let unit = self.units.get(self.header_chunk?)?;
        Some(unit.text())
    }

    pub fn entry_computation(&self) -> Option<ComputationRef<'_>> {
        self.entry.map(|id| self.computation(id))
    }

    /// The computation whose text contains `offset`.
    pub fn computation_at(&self, offset: usize) -> Option<ComputationId> {
        // The chunk holding `offset`, or the one before it when `offset` is the end
        // of the previous computation (a cursor right after its closing brace).
        let after = self.places.partition_point(|p| p.offset <= offset);
        (after.saturating_sub(2)..after)
            .map(|i| self.computation(ComputationId(i as u32)))
            .find(|c| c.range().start <= offset && offset <= c.range().end)
            .map(|c| c.id)
    }

    /// Instructions that call computation `id` (for a fused computation: its fusions).
    /// Calls by name go to the first computation of that name.
    pub fn callers_of(&self, id: ComputationId) -> &[CallSite] {
        let Some(name) = self.outline(id).name.as_ref() else {
            return &[];
        };
        if self.computation_names.get(&name.name) != Some(&id) {
            return &[];
        }
        self.callers_of_name(&name.name)
    }

    /// The call sites naming `name` (defined in the module or not).
    pub fn callers_of_name(&self, name: &str) -> &[CallSite] {
        self.callers.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The outline of computation `id`'s chunk (its name and calls, without building).
    pub fn outline(&self, id: ComputationId) -> &crate::syntax::Outline {
        self.unit(id).chunk.outline()
    }

    /// The strongly connected component of each computation in the call graph: a call
    /// between two computations of one component (or of one to itself) is recursion.
    pub fn call_cycles(&self) -> &[u32] {
        self.components
            .get_or_init(|| super::crossref::call_components(self))
    }

    /// [`Module::call_cycles`] if something asked for them already.
    pub fn known_call_cycles(&self) -> Option<&[u32]> {
        self.components.get().map(Vec::as_slice)
    }

    /// The document's index of computation `id`'s chunk.
    pub fn chunk_of(&self, id: ComputationId) -> usize {
        self.places[id.index()].chunk
    }

    /// Where computation `id`'s chunk starts in the document (without building it).
    pub fn chunk_offset(&self, id: ComputationId) -> usize {
        self.places[id.index()].offset
    }

    /// The name of the callee as written at a call site, in document bytes (no
    /// computation is built for it).
    pub fn call_name_range(&self, site: &CallSite) -> Range<usize> {
        let placed = &self.places[site.computation.index()];
        let callee = &self.unit(site.computation).chunk.outline().calls[site.call as usize].callee;
        placed.offset + callee.start as usize..placed.offset + callee.end as usize
    }

    /// The attribute a call site names its callee with (`calls`, `body`, `to_apply`,
    /// ...), from the caller's outline: without building the caller.
    pub fn call_attribute(&self, site: &CallSite) -> &'static str {
        self.unit(site.computation).chunk.outline().calls[site.call as usize].attribute()
    }

    /// The calling computation and instruction of a call site; `None` when the
    /// caller's model has no instruction calling there (broken text).
    pub fn caller(&self, site: &CallSite) -> Option<(ComputationRef<'_>, &Instruction)> {
        let c = self.computation(site.computation);
        let at = self.call_name_range(site);
        let span = Span::new(at.start - c.offset..at.end - c.offset);
        let calls = |i: &&Instruction| i.called.iter().any(|called| called.name_range == span);
        let model = c.model();
        let sites = &model.call_sites;
        let indexed = sites
            .get(sites.partition_point(|&(start, _)| start < span.start))
            .filter(|&&(start, _)| start == span.start)
            .and_then(|&(_, id)| model.instructions.get(id.index()))
            .filter(calls);
        // A computation made without the index (not by the builder) is scanned.
        let instruction = indexed.or_else(|| model.instructions.iter().find(calls))?;
        Some((c, instruction))
    }

    /// The computation an instruction calls through attribute `attribute`
    /// (`calls` for a fusion, `to_apply` for a reduce, ...).
    pub fn called_computation(
        &self,
        instr: &Instruction,
        attribute: &str,
    ) -> Option<ComputationRef<'_>> {
        instr
            .called
            .iter()
            .find(|c| c.attribute == attribute)
            .and_then(|c| self.resolve(c))
    }

    /// Indexes the module's instruction names now ([`Module::find_instruction`] would
    /// on its first look-up): for a caller that has a thread free for it.
    pub fn index_instructions(&self) {
        self.instruction_index
            .get_or_init(|| InstructionIndex::of(self));
    }

    /// Finds an instruction by name in any computation (first match in order). The
    /// first look-up indexes the whole module ([`InstructionIndex`]).
    pub fn find_instruction(&self, name: &str) -> Option<(ComputationId, InstrId)> {
        let name = name.strip_prefix('%').unwrap_or(name);
        self.instruction_index
            .get_or_init(|| InstructionIndex::of(self))
            .get(self, name)
    }
}

impl Computation {
    pub fn instruction(&self, id: InstrId) -> &Instruction {
        &self.instructions[id.index()]
    }

    /// The instructions that use instruction `id` as an operand, one entry per use,
    /// in the order the users are written.
    pub fn users(&self, id: InstrId) -> &[InstrId] {
        self.users.of_instruction(id)
    }

    /// The first instruction named `name` (with or without `%`).
    pub fn instruction_id(&self, name: &str) -> Option<InstrId> {
        self.names
            .get(&self.instructions, name.strip_prefix('%').unwrap_or(name))
    }

    pub fn instruction_by_name(&self, name: &str) -> Option<&Instruction> {
        self.instruction_id(name).map(|id| self.instruction(id))
    }

    /// The index behind [`Self::instruction_id`].
    pub fn name_index(&self) -> &super::names::NameIndex {
        &self.names
    }

    /// The first instruction of each name, in no particular order.
    pub fn named_instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.names.ids().map(|id| self.instruction(id))
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
            None => operand.declared_shape.as_deref(),
        }
    }
}

impl Computation {
    /// Drops the slack of vectors that grew while building: a model lives as long as its
    /// text is open, and growth leaves up to half of each vector unused.
    pub fn shrink_to_fit(&mut self) {
        self.instructions.shrink_to_fit();
        for instr in &mut self.instructions {
            instr.operands.shrink_to_fit();
            instr.attributes.shrink_to_fit();
        }
    }
}

impl Operand {
    /// A name reference (`%x`, `f32[2] %x`); its target is resolved later.
    pub fn named(range: Span, name_range: Span, declared_shape: Option<Arc<Shape>>) -> Operand {
        Operand {
            range,
            name: name_range,
            declared_shape,
            target: None,
        }
    }

    /// An instruction written inline as an operand, defining `target`.
    pub fn inline(range: Span, target: Option<InstrId>) -> Operand {
        Operand {
            range,
            name: Span::NONE,
            declared_shape: None,
            target,
        }
    }

    /// The name as written (with `%`), if the operand is a name.
    pub fn name_range(&self) -> Option<Span> {
        (self.name != Span::NONE).then_some(self.name)
    }
}

impl Instruction {
    /// The decoded attributes ([`Attrs::NONE`] when the instruction has none).
    pub fn attrs(&self) -> &Attrs {
        self.decoded.as_deref().unwrap_or(&Attrs::NONE)
    }

    /// A custom call's `custom_call_target`, unquoted.
    pub fn custom_call_target(&self) -> Option<&str> {
        self.attrs().uncommon().custom_call_target.as_deref()
    }

    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }
}

/// The first index from `from` on whose place's chunk is at least `chunk` (`places`
/// ascend by chunk), found by doubling steps from `from` then bisecting.
fn first_place_from(places: &[Placed], from: usize, chunk: usize) -> usize {
    let mut step = 1;
    let mut low = from;
    while low + step <= places.len() && places[low + step - 1].chunk < chunk {
        low += step;
        step *= 2;
    }
    let high = (low + step).min(places.len());
    low + places[low..high].partition_point(|p| p.chunk < chunk)
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// A dump holds hundreds of thousands of instructions for as long as it is open, so
    /// their size is the model's memory (issue 13: ≤ 10x the text). This guards the
    /// layout: rare parts stay boxed or shared, not inline.
    #[test]
    fn instructions_stay_small() {
        use std::mem::size_of;
        assert!(
            size_of::<Instruction>() <= 136,
            "{}",
            size_of::<Instruction>()
        );
        assert!(size_of::<Shape>() <= 80, "{}", size_of::<Shape>());
        assert!(size_of::<Operand>() <= 32, "{}", size_of::<Operand>());
        assert!(size_of::<Attribute>() <= 20, "{}", size_of::<Attribute>());
        assert!(
            size_of::<CalledComputation>() <= 40,
            "{}",
            size_of::<CalledComputation>()
        );
        assert!(size_of::<Attrs>() <= 80, "{}", size_of::<Attrs>());
        assert!(size_of::<Opcode>() <= 16, "{}", size_of::<Opcode>());
    }
}

#[cfg(test)]
mod users_tests {
    use super::*;

    /// The users table holds, for each instruction, exactly the instructions whose
    /// operands name it, one entry per use, in the users' order: checked against
    /// a scan of every operand, with repeated uses, an inline operand and an unused
    /// instruction.
    #[test]
    fn users_are_every_use_in_order() {
        let text = "HloModule m\n\nENTRY %e {\n  %p = f32[8] parameter(0)\n  %q = f32[8] parameter(1)\n  %a = f32[8] add(%p, %p)\n  %m = f32[8] multiply(%a, f32[8] negate(%q))\n  %unused = f32[8] exponential(%p)\n  ROOT %r = f32[8] subtract(%m, %a)\n}\n";
        let file = crate::model::parse_hlo(text);
        let c = file.modules[0].entry_computation().expect("entry");
        let c = c.model();
        for instruction in &c.instructions {
            let scanned: Vec<InstrId> = c
                .instructions
                .iter()
                .flat_map(|user| {
                    user.operands
                        .iter()
                        .filter(|o| o.target == Some(instruction.id))
                        .map(|_| user.id)
                })
                .collect();
            assert_eq!(c.users(instruction.id), scanned, "{}", instruction.name);
        }
        let named = |name: &str| c.instruction_id(name).expect(name);
        assert_eq!(c.users(named("p")).len(), 3);
        assert_eq!(c.users(named("a")), [named("m"), named("r")]);
        assert!(c.users(named("unused")).is_empty());
        assert!(c.users(named("r")).is_empty());
        assert!(c.users(InstrId(10_000)).is_empty());
    }
}

#[cfg(test)]
mod chunk_tests {
    /// The walk finds, for any ascending choice of chunks, what one search per chunk
    /// finds: in two modules (each with its header chunk), for every chunk, every
    /// third, a few far apart, and none.
    #[test]
    fn the_walk_over_chunks_finds_what_a_search_per_chunk_finds() {
        let module = |name: &str, n: usize| {
            let mut text = format!("HloModule {name}\n\n");
            for k in 0..n {
                text.push_str(&format!(
                    "%c{k} {{\n  ROOT %p = f32[2] parameter(0)\n}}\n\n"
                ));
            }
            text + "ENTRY %e {\n  ROOT %p = f32[2] parameter(0)\n}\n\n"
        };
        let text = module("a", 40) + &module("b", 25);
        let document = crate::model::Document::parse(&text);
        let file = document.file();
        let count = document.units().len();
        assert!(count > 60);
        let choices: [Vec<usize>; 4] = [
            (0..count).collect(),
            (0..count).step_by(3).collect(),
            vec![1, 2, 30, 44, 45, count - 1],
            vec![],
        ];
        for chunks in choices {
            let walked: Vec<_> = file
                .computations_in_chunks(chunks.iter().copied())
                .collect();
            let searched: Vec<_> = chunks
                .iter()
                .map(|&c| file.computation_in_chunk(c))
                .collect();
            assert_eq!(walked, searched, "{chunks:?}");
        }
        let found = file.computations_in_chunks(0..count).flatten().count();
        assert_eq!(found, 40 + 1 + 25 + 1);
    }
}
