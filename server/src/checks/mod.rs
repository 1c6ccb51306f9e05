//! Every diagnostic of a document: each chunk's own (syntax errors, what a computation
//! alone shows) and, per computation, what the [`SOURCES`] find by reading it together
//! with the computations it calls or is called by. `hlo-lsp check` asks for all of them
//! at once ([`all`]); the server keeps them per computation across versions
//! ([`incremental`]), so an edit recomputes only what it can have changed.
//!
//! A source reports only diagnostics located in the computation it is given (their
//! related locations may point anywhere): that is what lets each computation's findings
//! be kept and replaced on their own.

pub mod anchored;
pub mod incremental;

use std::path::Path;

use rayon::prelude::*;

use crate::model::{crossref, ComputationRef, Diagnostic, Document, HloFile, ModuleId};

/// A producer of the diagnostics located in one computation.
pub type Source = fn(&HloFile, ModuleId, ComputationRef) -> Vec<Diagnostic>;

/// Every source, in the order their findings are listed.
pub const SOURCES: &[Source] = &[
    cross_references,
    reshape_chains,
    tilings,
    crate::coalescing::diagnostics::computation_diagnostics,
];

fn cross_references(file: &HloFile, module: ModuleId, c: ComputationRef) -> Vec<Diagnostic> {
    crossref::diagnostics(file.module(module), c)
}

/// Tiling findings, with quick fixes that prefer coalesced reads on the GPU the
/// coalescing findings model.
fn tilings(file: &HloFile, module: ModuleId, c: ComputationRef) -> Vec<Diagnostic> {
    let options = crate::tiling::report::ReportOptions {
        transaction_bytes: Some(
            crate::coalescing::Options::default()
                .device
                .dram_to_l2_transaction_bytes,
        ),
        ..Default::default()
    };
    crate::tiling::diagnostics::computation_diagnostics(file, module, c, &options)
}

fn reshape_chains(_: &HloFile, _: ModuleId, c: ComputationRef) -> Vec<Diagnostic> {
    crate::refactor::computation_diagnostics(c)
}

/// What every source finds in computation `c` of module `module`, and the memory
/// findings, which read XLA's buffer assignment beside `dump` (where the document is
/// on disk) when it is there.
pub fn of_computation(
    file: &HloFile,
    module: ModuleId,
    c: ComputationRef,
    dump: Option<&Path>,
) -> Vec<Diagnostic> {
    let mut found = of_computation_alone(file, module, c);
    found.extend(crate::memory::diagnostics::computation_diagnostics(
        file, module, c, dump,
    ));
    found
}

/// What the [`SOURCES`] find in computation `c`: [`of_computation`] without the memory
/// findings, which need the whole module's estimate. The server keeps these per
/// computation ([`incremental`]) and adds the memory findings once the version's
/// module-wide answers are ready, so that an edit's diagnostics never wait for them.
pub fn of_computation_alone(
    file: &HloFile,
    module: ModuleId,
    c: ComputationRef,
) -> Vec<Diagnostic> {
    SOURCES
        .iter()
        .flat_map(|source| source(file, module, c))
        .collect()
}

/// The memory findings of `file`'s modules from their memory answers `reports` (one
/// per module, `None` where there is none), by the chunk they are shown in, in chunk
/// order: what the server adds to the per-computation checks ([`incremental`]) once
/// a version's module-wide answers are ready.
pub fn module_wide(
    file: &HloFile,
    reports: &[Option<std::sync::Arc<crate::memory::Report>>],
) -> Vec<(usize, Vec<Diagnostic>)> {
    let mut by_chunk: Vec<(usize, Vec<Diagnostic>)> = Vec::new();
    for (mi, report) in reports.iter().enumerate() {
        let Some(report) = report else { continue };
        let m = file.module(ModuleId(mi as u32));
        for (ci, d) in crate::memory::diagnostics::peak_findings(m, report) {
            let chunk = m.chunk_of(ci);
            match by_chunk.iter_mut().find(|(c, _)| *c == chunk) {
                Some((_, found)) => found.push(d),
                None => by_chunk.push((chunk, vec![d])),
            }
        }
    }
    by_chunk.sort_by_key(|(chunk, _)| *chunk);
    for (_, found) in &mut by_chunk {
        sort(found);
    }
    by_chunk
}

/// [`module_wide`] of `document` (at `dump` on disk), its memory answers computed here.
pub fn module_wide_of(document: &Document, dump: Option<&Path>) -> Vec<(usize, Vec<Diagnostic>)> {
    let file = document.file();
    let reports: Vec<_> = (0..file.modules.len())
        .map(|m| crate::memory::analyze_in(file, ModuleId(m as u32), dump).map(std::sync::Arc::new))
        .collect();
    module_wide(file, &reports)
}

/// Every diagnostic of `document`, sorted by position: what `hlo-lsp check` prints and
/// the server publishes.
pub fn all(document: &Document) -> Vec<Diagnostic> {
    all_beside(document, None)
}

/// [`all`] of a document at `dump` on disk (XLA's files beside it are read).
pub fn all_beside(document: &Document, dump: Option<&Path>) -> Vec<Diagnostic> {
    document.build_all();
    let file = document.file();
    let computations: Vec<(ModuleId, ComputationRef)> = file.all_computations().collect();
    let mut found: Vec<Diagnostic> = (0..document.units().len())
        .into_par_iter()
        .flat_map_iter(|i| document.own_diagnostics(i).collect::<Vec<_>>())
        .chain(
            computations
                .into_par_iter()
                .flat_map_iter(|(module, c)| of_computation(file, module, c, dump)),
        )
        .collect();
    sort(&mut found);
    found
}

/// A file with no module, computation or instruction in it (empty, or only comments):
/// XLA's parser refuses it. Not among [`all`]'s findings: an editor's new file is
/// empty on purpose, and the server keeps [`all`]'s findings per computation; `hlo-lsp
/// check`, which reads a finished file, adds it.
pub fn no_module(document: &Document) -> Option<Diagnostic> {
    document
        .file()
        .modules
        .is_empty()
        .then(|| Diagnostic::error(0..0, crate::model::codes::SYNTAX_ERROR, NO_MODULE))
}

/// What [`no_module`] says (`hlo-lsp parse` says it too).
pub const NO_MODULE: &str =
    "the file holds no HLO module, computation or instruction (XLA's parser expects one)";

/// Document order: by start, end, then severity.
pub fn sort(found: &mut [Diagnostic]) {
    found.sort_by_key(sort_key);
}

/// The order of [`sort`].
pub fn sort_key(d: &Diagnostic) -> (usize, usize, crate::model::Severity) {
    (d.range.start, d.range.end, d.severity)
}

/// Every diagnostic of an MLIR document: the reader's and the index maps' findings
/// ([`crate::mlir::analyze`]) and, for StableHLO, what the conversion could not
/// read plus the HLO checks of the converted module, each placed on the op it is
/// about.
pub fn mlir(text: &str) -> Vec<Diagnostic> {
    let analysis = crate::mlir::analyze(text);
    let mut found = analysis.diagnostics;
    if crate::mlir::stablehlo::is_stablehlo(&analysis.file) {
        let translation = crate::mlir::stablehlo::translate(text, &analysis.file);
        found.extend(translation.diagnostics.iter().cloned());
        for mut d in all(&Document::parse(&translation.hlo)) {
            let Some(range) = translation.to_mlir(d.range.clone()) else {
                continue;
            };
            d.range = range;
            d.related.clear();
            d.fixes.clear();
            found.push(d);
        }
    }
    sort(&mut found);
    found
}
