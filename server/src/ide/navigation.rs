//! Navigation on the HLO model: definition, references, document highlights, rename
//! (with validation), document symbols (module → computations → instructions) and
//! workspace symbols.
//!
//! Everything here starts from the symbol under the cursor: an instruction (named at
//! its definition or as an operand) or a computation (named at its definition or by
//! `calls=`, `to_apply=`, `branch_computations=`, ...). Instruction names are scoped to
//! their computation and computation names to their module, as in XLA.

use std::ops::Range;

use super::touches;
use crate::model::{ComputationId, ComputationRef, HloFile, InstrId, Module, ModuleId, TextEdit};

/// A named entity of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symbol {
    Instruction {
        module: ModuleId,
        computation: ComputationId,
        instruction: InstrId,
    },
    Computation {
        module: ModuleId,
        computation: ComputationId,
    },
}

/// One place a symbol is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    pub range: Range<usize>,
    pub is_definition: bool,
}

/// The symbol named at `offset`, if any.
pub fn symbol_at(file: &HloFile, offset: usize) -> Option<Symbol> {
    let module_id = file.module_at(offset)?;
    let module = file.module(module_id);
    let computation_id = module.computation_at(offset)?;
    let computation = module.computation(computation_id);
    let as_computation = |target| Symbol::Computation {
        module: module_id,
        computation: target,
    };
    if touches(&computation.abs(computation.name_range), offset) {
        return Some(as_computation(computation_id));
    }
    let as_instruction = |instruction| Symbol::Instruction {
        module: module_id,
        computation: computation_id,
        instruction,
    };
    let at = computation.relative(offset)?;
    // A name in the signature: the parameter instruction it declares.
    if let Some(k) = computation
        .signature_parameters
        .iter()
        .position(|name| name.touches(at))
    {
        return signature_parameter(computation, k).map(as_instruction);
    }
    for instruction in computation
        .model()
        .instructions
        .iter()
        .filter(|i| i.range.touches(at))
    {
        if !instruction.synthetic && instruction.name_range.touches(at) {
            return Some(as_instruction(instruction.id));
        }
        for operand in &instruction.operands {
            if let (Some(range), Some(target)) = (operand.name_range(), operand.target) {
                if range.touches(at) {
                    return Some(as_instruction(target));
                }
            }
        }
        for called in &instruction.called {
            if called.name_range.touches(at) {
                if let Some(target) = module.resolve(called) {
                    return Some(as_computation(target.id));
                }
            }
        }
    }
    None
}

/// Every place `symbol` is named, its definition first.
pub fn occurrences(file: &HloFile, symbol: Symbol) -> Vec<Occurrence> {
    let definition = |range: &Range<usize>| Occurrence {
        range: range.clone(),
        is_definition: true,
    };
    let reference = |range: &Range<usize>| Occurrence {
        range: range.clone(),
        is_definition: false,
    };
    match symbol {
        Symbol::Instruction {
            module,
            computation,
            instruction,
        } => {
            let c = file.module(module).computation(computation);
            let mut found = vec![definition(&c.abs(c.instruction(instruction).name_range))];
            // A parameter is also named in the computation's signature.
            if let Some(name) = c
                .signature_parameters
                .iter()
                .enumerate()
                .find(|&(k, _)| signature_parameter(c, k) == Some(instruction))
                .map(|(_, name)| *name)
            {
                found.push(reference(&c.abs(name)));
            }
            for user in &c.model().instructions {
                for operand in &user.operands {
                    if operand.target == Some(instruction) {
                        found.extend(operand.name_range().map(|r| reference(&c.abs(r))));
                    }
                }
            }
            found
        }
        Symbol::Computation {
            module,
            computation,
        } => {
            let module = file.module(module);
            let c = module.computation(computation);
            let mut found = vec![definition(&c.abs(c.name_range))];
            for site in module.callers_of(computation) {
                found.push(reference(&module.call_name_range(site)));
            }
            found
        }
    }
}

/// The parameter instruction that signature entry `k` declares: `parameter(k)`, when
/// the signature writes its name (a signature naming something else is left alone).
fn signature_parameter(c: ComputationRef, k: usize) -> Option<InstrId> {
    let id = (*c.parameters.get(k)?)?;
    let written = c.src(*c.signature_parameters.get(k)?);
    (written.strip_prefix('%').unwrap_or(written) == &*c.instruction(id).name).then_some(id)
}

/// For a parameter of a called computation (e.g. a fused parameter), the operands
/// of the calling instructions that feed it.
pub fn parameter_sources(file: &HloFile, symbol: Symbol) -> Vec<Range<usize>> {
    let Symbol::Instruction {
        module,
        computation,
        instruction,
    } = symbol
    else {
        return Vec::new();
    };
    let module = file.module(module);
    let Some(number) = module
        .computation(computation)
        .instruction(instruction)
        .parameter_number
        .and_then(|k| usize::try_from(k).ok())
    else {
        return Vec::new();
    };
    module
        .callers_of(computation)
        .iter()
        .filter_map(|site| {
            let (c, caller) = module.caller(site)?;
            caller
                .operands
                .get(number)
                .map(|operand| c.abs(operand.range))
        })
        .collect()
}

/// For a called computation (e.g. a fused computation), the names of the instructions
/// that call it (its fusions): where "go to definition" on its header leads.
pub fn calling_instructions(file: &HloFile, symbol: Symbol) -> Vec<Range<usize>> {
    let Symbol::Computation {
        module,
        computation,
    } = symbol
    else {
        return Vec::new();
    };
    crate::model::callgraph::incoming(file.module(module), computation)
        .into_iter()
        .map(|call| call.instruction_range)
        .collect()
}

/// Definition: the symbol's definition; on a parameter's own name, the operands of
/// the fusions (or other callers) that feed it; on a computation's own name (its
/// header), the instructions that call it.
pub fn definition(file: &HloFile, offset: usize) -> Vec<Range<usize>> {
    let Some(symbol) = symbol_at(file, offset) else {
        return Vec::new();
    };
    let all = occurrences(file, symbol);
    let own = &all[0].range;
    if touches(own, offset) {
        let mut sources = parameter_sources(file, symbol);
        sources.extend(calling_instructions(file, symbol));
        if !sources.is_empty() {
            return sources;
        }
    }
    vec![own.clone()]
}

/// Every place the symbol at `offset` is named, its definition first.
pub fn occurrences_at(file: &HloFile, offset: usize) -> Vec<Occurrence> {
    symbol_at(file, offset).map_or_else(Vec::new, |symbol| occurrences(file, symbol))
}

/// The name's range without a leading `%` (what rename replaces).
fn bare_name(file: &HloFile, range: &Range<usize>) -> Range<usize> {
    match file.text(range.clone()) {
        Some(name) if name.starts_with('%') => range.start + 1..range.end,
        _ => range.clone(),
    }
}

/// Why a rename cannot be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameError(pub String);

/// Checks `new_name` (a leading `%` is accepted and dropped) as a name for `symbol`.
pub fn validate_new_name(
    file: &HloFile,
    symbol: Symbol,
    new_name: &str,
) -> Result<String, RenameError> {
    let name = new_name.strip_prefix('%').unwrap_or(new_name);
    let mut chars = name.chars();
    let valid_start = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !valid_start || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')) {
        return Err(RenameError(format!(
            "`{new_name}` is not a valid HLO name: use a letter or `_` followed by letters, digits, `_`, `.` or `-`"
        )));
    }
    // The clash, named: which instruction or computation has the name already.
    let clash = match symbol {
        Symbol::Instruction {
            module,
            computation,
            instruction,
        } => {
            let c = file.module(module).computation(computation);
            c.instruction_id(name)
                .filter(|&id| id != instruction)
                .map(|id| {
                    let other = c.instruction(id);
                    format!(
                        "`{name}` is already defined in `{}`: `%{} = {} {}(...)`",
                        c.name, other.name, other.shape, other.opcode
                    )
                })
        }
        Symbol::Computation {
            module,
            computation,
        } => {
            let m = file.module(module);
            m.computation_names
                .get(name)
                .filter(|&&id| id != computation)
                .map(|_| format!("`{name}` is already the name of a computation of this module"))
        }
    };
    match clash {
        Some(message) => Err(RenameError(message)),
        None => Ok(name.to_string()),
    }
}

/// The range to rename at `offset` (the name without `%`), for `prepareRename`.
pub fn rename_range(file: &HloFile, offset: usize) -> Option<Range<usize>> {
    let symbol = symbol_at(file, offset)?;
    occurrences(file, symbol)
        .into_iter()
        .find(|o| touches(&o.range, offset))
        .map(|o| bare_name(file, &o.range))
}

/// The edits renaming the symbol at `offset` to `new_name`; `None` when nothing
/// is named there.
pub fn rename(
    file: &HloFile,
    offset: usize,
    new_name: &str,
) -> Result<Option<Vec<TextEdit>>, RenameError> {
    let Some(symbol) = symbol_at(file, offset) else {
        return Ok(None);
    };
    let name = validate_new_name(file, symbol, new_name)?;
    let edits = occurrences(file, symbol)
        .iter()
        .map(|o| TextEdit {
            range: bare_name(file, &o.range),
            new_text: name.clone(),
        })
        .collect();
    Ok(Some(edits))
}

/// What an entry of a document's outline is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutlineKind {
    Module,
    /// A computation, or an MLIR function.
    Function,
    /// An instruction.
    Field,
    /// A parameter instruction.
    Variable,
    /// An MLIR attribute alias.
    Constant,
    /// An MLIR op.
    Operator,
}

/// One entry of a document's outline (document symbols).
#[derive(Clone, Debug, PartialEq)]
pub struct Outline {
    pub name: String,
    pub detail: Option<String>,
    pub kind: OutlineKind,
    /// All of it.
    pub range: Range<usize>,
    /// Its name.
    pub selection: Range<usize>,
    /// `None` for a leaf (an instruction), else the entries inside (maybe none).
    pub children: Option<Vec<Outline>>,
}

/// Lines of text up to which the outline lists every instruction. An editor asks for
/// the outline as it opens a document: listing the 500,000 instructions of a 60 MB dump
/// built every computation and answered a quarter of a million symbols (23 s, 3 GB in
/// the server alone), which no outline view can show; past this size the outline
/// lists the computations, read from their chunks without building them, and
/// instructions are found by name (workspace symbols, go to definition).
pub const OUTLINE_INSTRUCTION_LINES: usize = 50_000;

/// Module → computations → instructions, with shapes and opcodes as detail; a
/// document longer than [`OUTLINE_INSTRUCTION_LINES`] stops at the computations.
pub fn outline(snapshot: &super::HloSnapshot) -> Vec<Outline> {
    let syntax = snapshot.syntax();
    let lines = syntax
        .chunks()
        .last()
        .map_or(0, |last| last.first_line + last.chunk.newlines());
    let modules = snapshot.model().modules.iter();
    if lines <= OUTLINE_INSTRUCTION_LINES {
        return modules.map(module_outline).collect();
    }
    modules
        .map(|module| Outline {
            children: Some(computation_names(module, syntax)),
            ..module_entry(module, Vec::new())
        })
        .collect()
}

/// Computations a large document's outline lists at most: the 250,000 of a 600 MB
/// dump made an answer of 50 MB that took 15 s. Those a fusion calls are left out
/// first (the ENTRY, loop bodies and called computations stay).
pub const OUTLINE_COMPUTATIONS: usize = 30_000;

/// Whether computation `id` of `module` is a fusion's (named by a `calls=`).
fn is_fused(module: &Module, id: ComputationId) -> bool {
    let callers = module.callers_of(id);
    !callers.is_empty()
        && callers
            .iter()
            .all(|site| module.call_attribute(site) == "calls")
}

/// The computations of `module` as their chunks' outlines name them, over their
/// chunks' text (none is built), at most [`OUTLINE_COMPUTATIONS`].
fn computation_names(module: &Module, syntax: &crate::syntax::SyntaxDocument) -> Vec<Outline> {
    let count = module.computation_count();
    let mut listed: Vec<ComputationId> = (0..count).map(|k| ComputationId(k as u32)).collect();
    if count > OUTLINE_COMPUTATIONS {
        let (mut kept, fused): (Vec<_>, Vec<_>) =
            listed.into_iter().partition(|&id| !is_fused(module, id));
        let room = OUTLINE_COMPUTATIONS.saturating_sub(kept.len());
        kept.extend(fused.into_iter().take(room));
        kept.truncate(OUTLINE_COMPUTATIONS);
        kept.sort_unstable();
        listed = kept;
    }
    listed
        .into_iter()
        .filter_map(|id| {
            let outline = module.outline(id);
            let name = outline.name.as_ref()?;
            let start = module.chunk_offset(id);
            let end = start + syntax.chunks().at(module.chunk_of(id)).chunk.len();
            Some(Outline {
                name: name.name.to_string(),
                detail: outline.is_entry.then(|| "ENTRY".to_string()),
                kind: OutlineKind::Function,
                range: start..end,
                selection: start + name.start as usize..start + name.end as usize,
                children: Some(Vec::new()),
            })
        })
        .collect()
}

fn module_outline(module: &Module) -> Outline {
    let computations = module
        .computations()
        .map(|computation| {
            let instructions = computation
                .model()
                .instructions
                .iter()
                .filter(|i| !i.synthetic)
                .map(|i| Outline {
                    name: i.name.to_string(),
                    detail: Some(format!("{} {}", i.shape, i.opcode)),
                    kind: if i.parameter_number.is_some() {
                        OutlineKind::Variable
                    } else {
                        OutlineKind::Field
                    },
                    range: computation.abs(i.range),
                    selection: computation.abs(i.name_range),
                    children: None,
                })
                .collect();
            Outline {
                name: computation.name.clone(),
                detail: computation.is_entry.then(|| "ENTRY".to_string()),
                kind: OutlineKind::Function,
                range: computation.range(),
                selection: computation.abs(computation.name_range),
                children: Some(instructions),
            }
        })
        .collect();
    module_entry(module, computations)
}

/// The module's entry of the outline, holding `computations`.
fn module_entry(module: &Module, computations: Vec<Outline>) -> Outline {
    let selection = module
        .name_range
        .clone()
        .or_else(|| module.header_range.clone())
        .unwrap_or(module.range.start..module.range.start);
    Outline {
        name: module.name.clone().unwrap_or_else(|| "(module)".into()),
        detail: None,
        kind: OutlineKind::Module,
        range: module.range.clone(),
        selection,
        children: Some(computations),
    }
}

/// A computation or instruction found by name across documents.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedSymbol {
    pub name: String,
    /// [`OutlineKind::Function`] for a computation, [`OutlineKind::Field`] for an
    /// instruction.
    pub kind: OutlineKind,
    pub range: Range<usize>,
    /// The module (for a computation) or computation (for an instruction) it is in.
    pub container: String,
}

/// Computations and instructions of `file` whose name contains `query` (already
/// lowercase), in text order, until `found` holds `limit`.
pub fn symbols_matching(file: &HloFile, query: &str, limit: usize, found: &mut Vec<NamedSymbol>) {
    let matches = |name: &str| name.to_lowercase().contains(query);
    for module in &file.modules {
        let module_name = module.name.as_deref().unwrap_or("");
        for computation in module.computations() {
            if matches(&computation.name) {
                found.push(NamedSymbol {
                    name: computation.name.clone(),
                    kind: OutlineKind::Function,
                    range: computation.abs(computation.name_range),
                    container: module_name.to_string(),
                });
            }
            for instruction in computation
                .model()
                .instructions
                .iter()
                .filter(|i| !i.synthetic && matches(&i.name))
            {
                found.push(NamedSymbol {
                    name: instruction.name.to_string(),
                    kind: OutlineKind::Field,
                    range: computation.abs(instruction.name_range),
                    container: computation.name.clone(),
                });
            }
            if found.len() >= limit {
                found.truncate(limit);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_hlo;

    const TEXT: &str = "HloModule m\n\n%fused {\n  %p0 = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%p0)\n}\n\nENTRY %main {\n  %a = f32[4] parameter(0)\n  ROOT %f = f32[4] fusion(%a), kind=kLoop, calls=%fused\n}\n";

    fn at(needle: &str, skip: usize) -> usize {
        TEXT.match_indices(needle).nth(skip).unwrap().0 + 1
    }

    #[test]
    fn operands_and_definitions_name_the_same_instruction() {
        let file = parse_hlo(TEXT);
        let from_use = symbol_at(&file, at("%p0", 1)).unwrap();
        let from_definition = symbol_at(&file, at("%p0", 0)).unwrap();
        assert_eq!(from_use, from_definition);
        let ranges: Vec<_> = occurrences(&file, from_use)
            .into_iter()
            .map(|o| &TEXT[o.range])
            .collect();
        assert_eq!(ranges, ["%p0", "%p0"]);
    }

    #[test]
    fn computation_references_include_calls() {
        let file = parse_hlo(TEXT);
        let symbol = symbol_at(&file, at("calls=%fused", 0) + 7).unwrap();
        let found = occurrences(&file, symbol);
        assert_eq!(found.len(), 2);
        assert_eq!(&TEXT[found[0].range.clone()], "%fused");
        assert!(found[0].is_definition && !found[1].is_definition);
    }

    #[test]
    fn fused_parameters_lead_to_the_fusion_operand() {
        let file = parse_hlo(TEXT);
        let symbol = symbol_at(&file, at("%p0", 0)).unwrap();
        let sources = parameter_sources(&file, symbol);
        assert_eq!(sources.len(), 1);
        assert_eq!(&TEXT[sources[0].clone()], "%a");
    }

    #[test]
    fn fused_computations_lead_to_their_fusion() {
        let file = parse_hlo(TEXT);
        let symbol = symbol_at(&file, at("%fused {", 0)).unwrap();
        let callers = calling_instructions(&file, symbol);
        assert_eq!(callers.len(), 1);
        assert_eq!(&TEXT[callers[0].clone()], "%f");
        let entry = symbol_at(&file, at("%main", 0)).unwrap();
        assert!(calling_instructions(&file, entry).is_empty());
    }

    #[test]
    fn rename_validation_rejects_bad_and_taken_names() {
        let file = parse_hlo(TEXT);
        let symbol = symbol_at(&file, at("%n", 0)).unwrap();
        assert_eq!(validate_new_name(&file, symbol, "%neg.1").unwrap(), "neg.1");
        assert!(validate_new_name(&file, symbol, "1abc").is_err());
        assert!(validate_new_name(&file, symbol, "a b").is_err());
        assert!(validate_new_name(&file, symbol, "p0").is_err());
        // Names are per computation: `a` lives in `main`, not in `fused`.
        assert!(validate_new_name(&file, symbol, "a").is_ok());
    }
}
