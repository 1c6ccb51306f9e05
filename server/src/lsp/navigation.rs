//! Navigation on the HLO model: definition, references, document highlights, rename
//! (with validation), document symbols (module → computations → instructions) and
//! workspace symbols.
//!
//! Everything here starts from the symbol under the cursor: an instruction (named at
//! its definition or as an operand) or a computation (named at its definition or by
//! `calls=`, `to_apply=`, `branch_computations=`, ...). Instruction names are scoped to
//! their computation and computation names to their module, as in XLA.

use std::ops::Range;

use tower_lsp_server::ls_types::{
    DocumentHighlight, DocumentHighlightKind, DocumentSymbol, Location, OneOf, SymbolKind,
    TextEdit, Uri, WorkspaceEdit, WorkspaceSymbol,
};

use super::position::PositionEncoding;
use super::snapshot::Snapshot;
use crate::model::{ComputationId, ComputationRef, HloFile, InstrId, Module, ModuleId};

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

fn touches(range: &Range<usize>, offset: usize) -> bool {
    range.start <= offset && offset <= range.end
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
            if let (Some(range), Some(target)) = (operand.name_range, operand.target) {
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
                        found.extend(operand.name_range.map(|r| reference(&c.abs(r))));
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
    (written.strip_prefix('%').unwrap_or(written) == c.instruction(id).name).then_some(id)
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
pub fn definition(snapshot: &Snapshot, offset: usize) -> Vec<Range<usize>> {
    if snapshot.is_mlir() {
        return super::mlir::definition(snapshot, offset);
    }
    let file = snapshot.model();
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
            c.names
                .get(name)
                .filter(|&&id| id != instruction)
                .map(|&id| {
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
pub fn rename_range(snapshot: &Snapshot, offset: usize) -> Option<Range<usize>> {
    if snapshot.is_mlir() {
        return None; // MLIR renames are not supported (yet): never edit HLO-style.
    }
    let file = snapshot.model();
    let symbol = symbol_at(file, offset)?;
    occurrences(file, symbol)
        .into_iter()
        .find(|o| touches(&o.range, offset))
        .map(|o| bare_name(file, &o.range))
}

/// The edits renaming the symbol at `offset` to `new_name`.
pub fn rename(
    snapshot: &Snapshot,
    offset: usize,
    new_name: &str,
    encoding: PositionEncoding,
) -> Result<Option<WorkspaceEdit>, RenameError> {
    if snapshot.is_mlir() {
        return Ok(None);
    }
    let file = snapshot.model();
    let Some(symbol) = symbol_at(file, offset) else {
        return Ok(None);
    };
    let name = validate_new_name(file, symbol, new_name)?;
    let edits = occurrences(file, symbol)
        .iter()
        .map(|o| {
            TextEdit::new(
                snapshot.range(bare_name(file, &o.range), encoding),
                name.clone(),
            )
        })
        .collect();
    let changes = std::iter::once((snapshot.uri.clone(), edits)).collect();
    Ok(Some(WorkspaceEdit::new(changes)))
}

pub fn references(
    snapshot: &Snapshot,
    offset: usize,
    include_declaration: bool,
    encoding: PositionEncoding,
) -> Vec<Location> {
    if snapshot.is_mlir() {
        return super::mlir::references(snapshot, offset, include_declaration, encoding);
    }
    let file = snapshot.model();
    let Some(symbol) = symbol_at(file, offset) else {
        return Vec::new();
    };
    occurrences(file, symbol)
        .into_iter()
        .filter(|o| include_declaration || !o.is_definition)
        .map(|o| Location::new(snapshot.uri.clone(), snapshot.range(o.range, encoding)))
        .collect()
}

pub fn highlights(
    snapshot: &Snapshot,
    offset: usize,
    encoding: PositionEncoding,
) -> Vec<DocumentHighlight> {
    if snapshot.is_mlir() {
        return super::mlir::occurrences(snapshot, offset, true)
            .into_iter()
            .map(|r| DocumentHighlight {
                range: snapshot.range(r, encoding),
                kind: None,
            })
            .collect();
    }
    let file = snapshot.model();
    let Some(symbol) = symbol_at(file, offset) else {
        return Vec::new();
    };
    occurrences(file, symbol)
        .into_iter()
        .map(|o| DocumentHighlight {
            range: snapshot.range(o.range, encoding),
            kind: Some(if o.is_definition {
                DocumentHighlightKind::WRITE
            } else {
                DocumentHighlightKind::READ
            }),
        })
        .collect()
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must still be written.
fn document_symbol(
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    range: tower_lsp_server::ls_types::Range,
    selection: tower_lsp_server::ls_types::Range,
    children: Option<Vec<DocumentSymbol>>,
) -> DocumentSymbol {
    DocumentSymbol {
        name,
        detail,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range: selection,
        children,
    }
}

/// Module → computations → instructions, with shapes and opcodes as detail.
pub fn document_symbols(snapshot: &Snapshot, encoding: PositionEncoding) -> Vec<DocumentSymbol> {
    if snapshot.is_mlir() {
        return super::mlir::document_symbols(snapshot, encoding);
    }
    let file = snapshot.model();
    file.modules
        .iter()
        .map(|module| module_symbol(snapshot, module, encoding))
        .collect()
}

fn module_symbol(
    snapshot: &Snapshot,
    module: &Module,
    encoding: PositionEncoding,
) -> DocumentSymbol {
    let computations = module
        .computations()
        .map(|computation| {
            let instructions = computation
                .model()
                .instructions
                .iter()
                .filter(|i| !i.synthetic)
                .map(|i| {
                    document_symbol(
                        i.name.clone(),
                        Some(format!("{} {}", i.shape, i.opcode)),
                        if i.parameter_number.is_some() {
                            SymbolKind::VARIABLE
                        } else {
                            SymbolKind::FIELD
                        },
                        snapshot.range(computation.abs(i.range), encoding),
                        snapshot.range(computation.abs(i.name_range), encoding),
                        None,
                    )
                })
                .collect();
            document_symbol(
                computation.name.clone(),
                computation.is_entry.then(|| "ENTRY".to_string()),
                SymbolKind::FUNCTION,
                snapshot.range(computation.range(), encoding),
                snapshot.range(computation.abs(computation.name_range), encoding),
                Some(instructions),
            )
        })
        .collect();
    let selection = module
        .name_range
        .clone()
        .or_else(|| module.header_range.clone())
        .unwrap_or(module.range.start..module.range.start);
    document_symbol(
        module.name.clone().unwrap_or_else(|| "(module)".into()),
        None,
        SymbolKind::MODULE,
        snapshot.range(module.range.clone(), encoding),
        snapshot.range(selection, encoding),
        Some(computations),
    )
}

/// Most symbols one workspace query returns.
pub const WORKSPACE_SYMBOL_LIMIT: usize = 2000;

/// Computations and instructions of the open documents whose name contains `query`
/// (case-insensitive).
pub fn workspace_symbols(
    snapshots: &[std::sync::Arc<Snapshot>],
    query: &str,
    encoding: PositionEncoding,
) -> Vec<WorkspaceSymbol> {
    let query = query.to_lowercase();
    let mut found = Vec::new();
    let matches = |name: &str| name.to_lowercase().contains(&query);
    for snapshot in snapshots {
        let symbol =
            |name: &str, kind, range: &Range<usize>, container: &str, uri: &Uri| WorkspaceSymbol {
                name: name.to_string(),
                kind,
                tags: None,
                container_name: Some(container.to_string()),
                location: OneOf::Left(Location::new(
                    uri.clone(),
                    snapshot.range(range.clone(), encoding),
                )),
                data: None,
            };
        for module in &snapshot.model().modules {
            let module_name = module.name.as_deref().unwrap_or("");
            for computation in module.computations() {
                if matches(&computation.name) {
                    found.push(symbol(
                        &computation.name,
                        SymbolKind::FUNCTION,
                        &computation.abs(computation.name_range),
                        module_name,
                        &snapshot.uri,
                    ));
                }
                for instruction in computation
                    .model()
                    .instructions
                    .iter()
                    .filter(|i| !i.synthetic && matches(&i.name))
                {
                    found.push(symbol(
                        &instruction.name,
                        SymbolKind::FIELD,
                        &computation.abs(instruction.name_range),
                        &computation.name,
                        &snapshot.uri,
                    ));
                }
                if found.len() >= WORKSPACE_SYMBOL_LIMIT {
                    found.truncate(WORKSPACE_SYMBOL_LIMIT);
                    return found;
                }
            }
        }
    }
    found
}

/// Adds the computations and fusions of indexed files that are not open (see
/// [`super::workspace_index`]) whose name contains `query`, up to the limit.
pub fn indexed_symbols(
    files: &[std::sync::Arc<super::workspace_index::IndexedFile>],
    open: &[std::sync::Arc<Snapshot>],
    query: &str,
    encoding: PositionEncoding,
    found: &mut Vec<WorkspaceSymbol>,
) {
    use crate::dump::index::IndexedKind;
    use tower_lsp_server::ls_types::{Position, Range as LspRange};
    let query = query.to_lowercase();
    for file in files {
        if open.iter().any(|s| s.uri == file.uri) {
            continue;
        }
        for symbol in &file.symbols {
            if found.len() >= WORKSPACE_SYMBOL_LIMIT {
                return;
            }
            if !symbol.name.to_lowercase().contains(&query) {
                continue;
            }
            let column = match encoding {
                PositionEncoding::Utf8 => symbol.utf8_column,
                _ => symbol.utf16_column,
            };
            let range = LspRange::new(
                Position::new(symbol.line, column),
                Position::new(symbol.line, column + symbol.len),
            );
            found.push(WorkspaceSymbol {
                name: symbol.name.clone(),
                kind: match symbol.kind {
                    IndexedKind::Computation => SymbolKind::FUNCTION,
                    IndexedKind::Fusion => SymbolKind::FIELD,
                },
                tags: None,
                container_name: Some(symbol.container.clone()),
                location: OneOf::Left(Location::new(file.uri.clone(), range)),
                data: None,
            });
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
