//! The `publishDiagnostics` notification as JSON text, with each computation's
//! findings rendered once and kept while the computation is unchanged.
//!
//! A large dump has thousands of findings (reshape-chain hints, uncoalesced reads).
//! Placing each one, converting its positions and serializing it through tower-lsp
//! (which goes through `serde_json::Value`) on every edit made publishing cost what the
//! file holds, not what the edit touched. A computation's findings depend only on its
//! cell ([`crate::checks::incremental`]): while a version shares the cell, they are the
//! same text at the same place in the computation. So they are kept as JSON whose line
//! numbers are relative to the computation's first line (or, for a range in another
//! computation, such as the fusion an uncoalesced read names in its caller, to that
//! computation's), and a publish writes them with the current lines. A chunk's own
//! diagnostics (syntax errors) and MLIR documents are rendered each time.
//!
//! A 590 MB dump still has 18,000 computations with findings, and visiting each on
//! every publish cost 20 ms. So the text of a whole block of chunks (the
//! [`crate::blocks`] the document's versions share) is kept too, beside the
//! renderings of its cells, and a later version that shares the block's places, units
//! and cells (and, when a finding is shown in another computation, the document's
//! [`Layout`]) copies it: an edit that moves nothing renders the blocks it changed.

use std::io::Write as _;
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use tower_lsp_server::ls_types::{Diagnostic, DiagnosticSeverity, Uri};

use super::diagnostics::to_lsp;
use super::output::{Body, Spare};
use super::position::{self, PositionEncoding};
use super::snapshot::Snapshot;
use crate::blocks::{BlockToken, BLOCK_LEN};
use crate::checks::anchored::{Anchor, Anchored};
use crate::checks::incremental::{Checked, KeptCell, Part};
use crate::coalescing::diagnostics::UNCOALESCED_READ;
use crate::ide::{self, HloSnapshot};
use crate::model::{self, ComputationRef, Module};
use crate::syntax::Layout;

/// How diagnostics are shown: part of what a rendering depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub encoding: PositionEncoding,
    /// The `coalescing.severity: "warning"` setting: `uncoalesced-read` findings
    /// (information in the library) become warnings.
    pub raise_uncoalesced: bool,
}

impl Style {
    /// One library diagnostic as the client sees it.
    fn lsp(self, snapshot: &Snapshot, diagnostic: &model::Diagnostic) -> Diagnostic {
        let mut d = to_lsp(snapshot, diagnostic, self.encoding);
        if self.raise_uncoalesced && diagnostic.code == UNCOALESCED_READ {
            d.severity = Some(DiagnosticSeverity::WARNING);
        }
        d
    }
}

/// One computation's findings as JSON (diagnostics separated by commas), with a hole
/// where each line number goes.
#[derive(Debug)]
struct Template {
    style: Style,
    bases: Bases,
    /// The column where each base started (see [`Bases`]): a finding on a base's first
    /// line has its column counted from the line's start, so a base that moved along
    /// its line makes the rendering wrong.
    columns: Vec<u32>,
    text: String,
    /// `(byte in text, base, line relative to the base's first line)`, in order.
    lines: Vec<(usize, usize, i64)>,
}

/// Each base's line and column in a version (see [`Bases::positions`]).
type BasePositions = SmallVec<[(u32, u32); 2]>;

/// Where the positions of one computation's findings are measured from: its own start
/// and the start of each computation they point into (a fusion's caller), distinct,
/// in the order the findings name them. Kept with a rendering, so that a publish finds
/// where they are now without reading the findings again.
#[derive(Debug)]
struct Bases {
    anchors: SmallVec<[Anchor; 2]>,
}

impl Bases {
    /// The bases of `found`; `each` is given the index of the base of every finding's
    /// range and related ranges in turn.
    fn new(found: &[Anchored], mut each: impl FnMut(usize)) -> Bases {
        let mut anchors: SmallVec<[Anchor; 2]> = SmallVec::new();
        for anchor in found.iter().flat_map(Anchored::shown_anchors) {
            let k = match anchors.iter().position(|a| a == anchor) {
                Some(k) => k,
                None => {
                    anchors.push(anchor.clone());
                    anchors.len() - 1
                }
            };
            each(k);
        }
        Bases { anchors }
    }

    /// Each base's line and column in `snapshot`, for findings of the computation of
    /// module `m` in chunk `chunk`.
    fn positions(
        &self,
        snapshot: &Snapshot,
        (m, chunk): (&Module, usize),
        encoding: PositionEncoding,
    ) -> BasePositions {
        let syntax = snapshot.syntax();
        self.anchors
            .iter()
            .map(|anchor| {
                let p = match anchor {
                    Anchor::Own => position::chunk_start(syntax, chunk, encoding),
                    _ => {
                        let own = syntax.chunks().at(chunk).start;
                        position::to_position(syntax, anchor.offset(m, own), encoding)
                    }
                };
                (p.line, p.character)
            })
            .collect()
    }
}

impl Template {
    /// Renders `found` (the findings of computation `c` of `m`) with their lines
    /// relative to their bases, and gives the bases' positions now; `None` when a
    /// finding's JSON does not have the positions its ranges call for (then it is
    /// rendered on each publish).
    fn new(
        snapshot: &Snapshot,
        style: Style,
        (found, m, c): (&[Anchored], &Module, ComputationRef),
        chunk: usize,
    ) -> Option<(Template, BasePositions)> {
        let mut of_ranges = Vec::new();
        let bases = Bases::new(found, |k| of_ranges.push(k));
        let at = bases.positions(snapshot, (m, chunk), style.encoding);
        let mut of_ranges = &of_ranges[..];
        let mut placed: Vec<(model::Diagnostic, &[usize])> = found
            .iter()
            .map(|a| {
                let d = a.place(m, c);
                let (own, rest) = of_ranges.split_at(1 + d.related.len());
                of_ranges = rest;
                (d, own)
            })
            .collect();
        placed.sort_by_key(|(d, _)| crate::checks::sort_key(d));
        let mut text = String::new();
        let mut lines = Vec::new();
        for (k, (d, of_range)) in placed.iter().enumerate() {
            if k > 0 {
                text.push(',');
            }
            let json = serde_json::to_string(&style.lsp(snapshot, d)).expect("writing to memory");
            let mut rest = json.as_str();
            // Two positions (start, end) per range: the range, then each related one.
            let mut holes = of_range.iter().flat_map(|&base| [base, base]);
            while let Some(at_key) = rest.find(LINE_KEY) {
                let (before, after) = rest.split_at(at_key + LINE_KEY.len());
                text.push_str(before);
                let digits = after.bytes().take_while(u8::is_ascii_digit).count();
                let line: i64 = after[..digits].parse().ok()?;
                let base = holes.next()?;
                lines.push((text.len(), base, line - i64::from(at[base].0)));
                rest = &after[digits..];
            }
            if holes.next().is_some() {
                return None;
            }
            text.push_str(rest);
        }
        let template = Template {
            style,
            bases,
            columns: at.iter().map(|&(_, column)| column).collect(),
            text,
            lines,
        };
        Some((template, at))
    }

    /// Whether the rendering holds for bases now at `at`, in `style`.
    fn fits(&self, style: Style, at: &[(u32, u32)]) -> bool {
        self.style == style
            && self.columns.len() == at.len()
            && self.columns.iter().zip(at).all(|(c, (_, now))| c == now)
    }

    /// Writes the findings for bases now at `at`.
    fn write(&self, out: &mut Vec<u8>, at: &[(u32, u32)]) {
        let mut from = 0;
        for &(hole, base, line) in &self.lines {
            out.extend_from_slice(&self.text.as_bytes()[from..hole]);
            let _ = write!(out, "{}", i64::from(at[base].0) + line);
            from = hole;
        }
        out.extend_from_slice(&self.text.as_bytes()[from..]);
    }
}

/// The key of every position's line in a serialized [`Diagnostic`]. Inside a JSON
/// string a quote is escaped, so these bytes can only be a key.
const LINE_KEY: &str = "\"line\":";

/// Writes `diagnostics` as JSON objects separated by commas.
fn write_list(
    out: &mut Vec<u8>,
    snapshot: &Snapshot,
    style: Style,
    diagnostics: &[model::Diagnostic],
) {
    for (k, d) in diagnostics.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, &style.lsp(snapshot, d)).expect("writing to memory");
    }
}

/// Renderings by the address of their cell, which each holds alive.
type Kept = FxHashMap<usize, (KeptCell, Arc<Template>)>;

/// What the findings of the chunks of one block ([`BLOCK_LEN`] chunks) are made
/// from, but for where the block is: its units (its chunks' text and own diagnostics)
/// and its checks' cells.
#[derive(Debug)]
struct Sources([BlockToken; 2]);

impl Sources {
    fn of(snapshot: &Snapshot, checked: &Checked, b: usize) -> Sources {
        let document = snapshot.ide.document();
        Sources([document.units().token(b), checked.cells_token(b)])
    }

    fn same(&self, other: &Sources) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a.same(b))
    }
}

/// What one block's chunks published last: the renderings of their cells, and the
/// whole text when it depends on the block alone.
#[derive(Debug, Default)]
struct KeptBlock {
    cells: Kept,
    text: Option<BlockText>,
}

/// The findings of one block's chunks as last published, when they depend on that
/// block alone: a version that shares its sources publishes the same bytes, with the
/// lines moved as the block moved. An edit that moves nothing (a digit changed)
/// shares every block but one, and one that adds a line moves the blocks after it,
/// so a publish of a dump with tens of thousands of findings copies their text
/// instead of visiting each computation (20 of the 40 ms of CPU an edit of a 590 MB
/// dump took).
#[derive(Debug)]
struct BlockText {
    from: Sources,
    style: Style,
    /// When some finding is placed from another computation's start (or the
    /// document's), the layout it was placed in: it holds while that is the same.
    layout: Option<Layout>,
    /// The line and line start of the block's first chunk when rendered: the chunks
    /// after it keep their places relative to it (their text is the same).
    first: (usize, bool),
    bytes: Vec<u8>,
    /// Each line number in `bytes`: where its digits are, how many, its value.
    lines: Vec<(u32, u8, u32)>,
    /// The version it was rendered for (kept for later ones): what the tests read.
    #[cfg_attr(not(test), allow(dead_code))]
    version: i32,
}

impl BlockText {
    /// The text `bytes` of block `b` rendered from `from` in `style` for `snapshot`,
    /// kept unless it `depends` on more than the block and the layout.
    fn new(
        (from, style, depends): (Sources, Style, DependsOn),
        (snapshot, b): (&Snapshot, usize),
        bytes: Vec<u8>,
    ) -> Option<BlockText> {
        let layout = match depends {
            DependsOn::ItsBlock => None,
            DependsOn::Layout => Some(snapshot.syntax().layout().clone()),
            DependsOn::More => return None,
        };
        Some(BlockText {
            from,
            style,
            layout,
            first: first_of_block(snapshot, b),
            lines: line_numbers(&bytes)?,
            bytes,
            version: snapshot.version,
        })
    }

    /// By how many lines the block moved, when this text (with its lines moved) is
    /// what block `b`, now made from `from`, shows in `snapshot`.
    fn moved(
        &self,
        snapshot: &Snapshot,
        style: Style,
        (from, b): (&Sources, usize),
    ) -> Option<i64> {
        let layout = snapshot.syntax().layout();
        let holds = self.style == style
            && self.from.same(from)
            && self.layout.as_ref().is_none_or(|l| l.same(layout));
        let (line, starts_line) = first_of_block(snapshot, b);
        // A finding placed from another computation moves as that one does.
        let moved = line as i64 - self.first.0 as i64;
        let placed_alone = self.layout.is_none() || moved == 0;
        (holds && starts_line == self.first.1 && placed_alone).then_some(moved)
    }

    /// Writes the text with its lines moved by `moved`.
    fn write(&self, out: &mut Vec<u8>, moved: i64) {
        if moved == 0 {
            out.extend_from_slice(&self.bytes);
            return;
        }
        let mut from = 0;
        for &(at, digits, line) in &self.lines {
            out.extend_from_slice(&self.bytes[from..at as usize]);
            let _ = write!(out, "{}", i64::from(line) + moved);
            from = at as usize + usize::from(digits);
        }
        out.extend_from_slice(&self.bytes[from..]);
    }
}

/// The line and whether it starts there of chunk `b`'s first chunk.
fn first_of_block(snapshot: &Snapshot, b: usize) -> (usize, bool) {
    let first = snapshot.syntax().chunks().at(b * BLOCK_LEN);
    (first.first_line, first.starts_line)
}

/// Every line number of the diagnostics in `bytes` (see [`LINE_KEY`]); `None` when
/// one does not fit the record.
fn line_numbers(bytes: &[u8]) -> Option<Vec<(u32, u8, u32)>> {
    let key = LINE_KEY.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(k) = bytes[at..].windows(key.len()).position(|w| w == key) {
        let digits_at = at + k + key.len();
        let digits = bytes[digits_at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let line: u32 = std::str::from_utf8(&bytes[digits_at..digits_at + digits])
            .ok()?
            .parse()
            .ok()?;
        out.push((
            u32::try_from(digits_at).ok()?,
            u8::try_from(digits).ok()?,
            line,
        ));
        at = digits_at + digits;
    }
    Some(out)
}

/// Kept blocks by block index.
type KeptBlocks = FxHashMap<usize, KeptBlock>;

/// What the findings of a block's chunks depend on besides their block's sources,
/// from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum DependsOn {
    ItsBlock,
    /// Where other computations start: some finding is placed from another
    /// computation's start (an uncoalesced read shown at the fusion in its caller)
    /// or from the document's.
    Layout,
    /// Something that may change in place: the chunk's checks are not complete (a
    /// cell still empty fills later), or its chunk does not start its line (its
    /// columns count from an earlier chunk), or memory findings are shown in it.
    More,
}

impl DependsOn {
    fn of(snapshot: &Snapshot, part: &Part) -> DependsOn {
        let starts_line = snapshot.syntax().chunks().at(part.chunk).starts_line;
        if !starts_line || (part.computation.is_some() && !part.is_filled()) {
            return DependsOn::More;
        }
        let own = (part.found.iter())
            .flat_map(Anchored::shown_anchors)
            .all(|a| matches!(a, Anchor::Own));
        if own {
            DependsOn::ItsBlock
        } else {
            DependsOn::Layout
        }
    }
}

/// The renderings of one document's computations, kept across its versions.
#[derive(Debug, Default)]
pub struct Renderings {
    blocks: Mutex<KeptBlocks>,
    /// The length of the last notification: the next one's buffer is made that large
    /// at once (growing 5 MB by doubling copied it and faulted each new page in).
    last_len: std::sync::atomic::AtomicUsize,
    /// The buffer of the last notification, once written, for the next.
    spare: Spare,
}

impl Renderings {
    /// The body of the `publishDiagnostics` notification of `snapshot`, whose checks
    /// are computed here if they are not yet. Keeps the renderings of this
    /// version's cells, and only those.
    pub fn notification(&self, snapshot: &Snapshot, style: Style) -> Body {
        use std::sync::atomic::Ordering;
        let room = self.last_len.load(Ordering::Relaxed);
        let mut list = self.spare.body(room + room / 8 + 160);
        body_start(&mut list, &snapshot.uri);
        match &snapshot.ide {
            ide::Snapshot::Mlir(mlir) => {
                write_list(&mut list, snapshot, style, &mlir.diagnostics());
            }
            ide::Snapshot::Hlo(hlo) => self.write_hlo(&mut list, snapshot, hlo, style),
        }
        body_end(&mut list, Some(snapshot.version));
        self.last_len.store(list.len(), Ordering::Relaxed);
        list
    }

    /// Appends the findings of an HLO version, block by block: the text kept for a
    /// block whose sources are unchanged, each unsettled chunk's otherwise.
    fn write_hlo(&self, list: &mut Vec<u8>, snapshot: &Snapshot, hlo: &HloSnapshot, style: Style) {
        use super::workspace::lock;
        let mut kept = std::mem::take(&mut *lock(&self.blocks));
        let mut now = KeptBlocks::with_capacity_and_hasher(kept.len(), Default::default());
        // The memory findings known so far: they never hold up the rest.
        let module_wide = hlo.ready_module_findings();
        let mut extra = module_wide.iter().peekable();
        let checked = hlo.filled_checks();
        for chunks in checked
            .unsettled()
            .chunk_by(|a, b| a / BLOCK_LEN == b / BLOCK_LEN)
        {
            while let Some((_, found)) = extra.next_if(|(at, _)| *at < chunks[0]) {
                separated(list, |list| write_list(list, snapshot, style, found));
            }
            let b = chunks[0] / BLOCK_LEN;
            let before = kept.remove(&b).unwrap_or_default();
            // Memory findings in the block are rendered with it each time.
            let plain = extra
                .peek()
                .is_none_or(|(at, _)| *at >= (b + 1) * BLOCK_LEN);
            let from = Sources::of(snapshot, checked, b);
            let moved = (before.text.as_ref()).and_then(|t| t.moved(snapshot, style, (&from, b)));
            if let (Some(text), Some(moved), true) = (&before.text, moved, plain) {
                separated(list, |list| text.write(list, moved));
                now.insert(b, before);
                continue;
            }
            let mut block = KeptBlock::default();
            let mut bytes = Vec::new();
            let mut depends = match plain {
                true => DependsOn::ItsBlock,
                false => DependsOn::More,
            };
            let mut before = before.cells;
            for part in checked.parts_of(snapshot.ide.document(), chunks) {
                while let Some((_, found)) = extra.next_if(|(at, _)| *at < part.chunk) {
                    separated(&mut bytes, |list| write_list(list, snapshot, style, found));
                }
                let also = extra
                    .next_if(|(at, _)| *at == part.chunk)
                    .map(|(_, found)| found.as_slice());
                depends = depends.max(DependsOn::of(snapshot, &part));
                let context = (&mut before, &mut block.cells);
                self.write_part(&mut bytes, snapshot, style, (part, also), context);
            }
            separated(list, |list| list.extend_from_slice(&bytes));
            block.text = BlockText::new((from, style, depends), (snapshot, b), bytes);
            now.insert(b, block);
        }
        for (_, found) in extra {
            separated(list, |list| write_list(list, snapshot, style, found));
        }
        *lock(&self.blocks) = now;
    }

    /// Appends the findings of one chunk (after a comma when `list` has some), moving
    /// its rendering from `kept` to `now`. `also` are module-wide findings shown in the
    /// chunk (rendered each time, with the chunk's own diagnostics).
    fn write_part(
        &self,
        list: &mut Vec<u8>,
        snapshot: &Snapshot,
        style: Style,
        (part, also): (Part, Option<&[model::Diagnostic]>),
        (kept, now): (&mut Kept, &mut Kept),
    ) {
        let document = snapshot.ide.document();
        let mut own: Vec<model::Diagnostic> = document.own_diagnostics(part.chunk).collect();
        own.extend(also.into_iter().flatten().cloned());
        let Some((mi, ci)) = part.computation else {
            separated(list, |list| write_list(list, snapshot, style, &own));
            return;
        };
        if part.found.is_empty() && own.is_empty() {
            return;
        }
        let m = document.file().module(mi);
        if own.is_empty() {
            // The same cell as at the last publish: its rendering, if its bases did not
            // move along their lines, with their lines now.
            if let Some((cell, template)) = kept.remove(&part.cell_address()) {
                let at = template
                    .bases
                    .positions(snapshot, (m, part.chunk), style.encoding);
                if template.fits(style, &at) {
                    separated(list, |list| template.write(list, &at));
                    now.insert(part.cell_address(), (cell, template));
                    return;
                }
            }
        }
        let c = m.computation(ci);
        let render_now = |list: &mut Vec<u8>| {
            let mut placed = own.clone();
            placed.extend(part.found.iter().map(|a| a.place(m, c)));
            crate::checks::sort(&mut placed);
            separated(list, |list| write_list(list, snapshot, style, &placed));
        };
        if !own.is_empty() {
            render_now(list);
            return;
        }
        let Some((template, at)) = Template::new(snapshot, style, (part.found, m, c), part.chunk)
        else {
            render_now(list);
            return;
        };
        separated(list, |list| template.write(list, &at));
        now.insert(part.cell_address(), (part.cell(), Arc::new(template)));
    }
}

/// Appends what `write` writes, after a comma when both are non-empty.
fn separated(list: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let before = list.len();
    // The list is written inside its notification: it is empty while `[` ends it.
    let first = matches!(list.last(), None | Some(b'['));
    if !first {
        list.push(b',');
    }
    write(list);
    if !first && list.len() == before + 1 {
        list.truncate(before);
    }
}

/// The body of a `publishDiagnostics` notification for `uri` whose diagnostics are
/// `list` (JSON objects separated by commas).
pub fn body(uri: &Uri, version: Option<i32>, list: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(list.len() + 160);
    body_start(&mut out, uri);
    out.extend_from_slice(list);
    body_end(&mut out, version);
    out
}

/// Writes the notification up to its list of diagnostics into `out` (empty): the list
/// is written after this.
fn body_start(out: &mut Vec<u8>, uri: &Uri) {
    out.extend_from_slice(
        br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"#,
    );
    serde_json::to_writer(&mut *out, uri).expect("writing to memory");
    out.extend_from_slice(br#","diagnostics":["#);
}

/// Closes the notification whose list `out` ends with.
fn body_end(out: &mut Vec<u8>, version: Option<i32>) {
    out.push(b']');
    if let Some(version) = version {
        let _ = write!(out, r#","version":{version}"#);
    }
    out.extend_from_slice(b"}}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::documents::Document;
    use proptest::prelude::*;
    use tower_lsp_server::ls_types::{Range, TextDocumentContentChangeEvent};

    /// Several modules with findings of every kind of anchoring: in the computation
    /// itself (reshape chains, uncoalesced reads), in its caller (tiling), syntax
    /// errors, and computations that share a line.
    fn text() -> String {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");
        let files = [
            "samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo",
            "tiling/merge_2x5_split_4.hlo",
            "refactor/chains.hlo",
            "samples/xla/xla__backends__gpu__codegen__triton__tests__normalization__generic_emitter_multi_tiled_dims.hlo",
            "samples/xla/xla__tools__print_indexing_test.hlo",
        ];
        let mut text: String = files
            .iter()
            .map(|f| std::fs::read_to_string(format!("{data}/{f}")).expect("test data"))
            .collect::<Vec<_>>()
            .join("\n");
        // Computations with a finding each, so that findings fill several blocks.
        for k in 0..160 {
            text.push_str(&format!(
                "%noop{k} (q: f32[2]) -> f32[2] {{\n  %q = f32[2]{{0}} parameter(0)\n  ROOT %r = f32[2]{{0}} reshape(%q)\n}}\n"
            ));
        }
        text.push_str("\n%broken { %x = f32[2] add(\n}\n");
        text.push_str(SHARED_LINE);
        text
    }

    /// Two computations on one line, the second with a finding.
    const SHARED_LINE: &str = "%a { ROOT %p = f32[2]{0} parameter(0) } %b { %q = f32[2]{0} parameter(0) ROOT %r = f32[2]{0} reshape(%q) }\n";

    #[test]
    fn a_finding_on_a_line_shared_with_an_edited_computation() {
        let text = text();
        let mut document = Document::new("file:///m.hlo".parse().unwrap(), 1, &text);
        for style in STYLES {
            let renderings = Renderings::default();
            published(&renderings, &document.snapshot_at(1), style);
            let at = text.find(SHARED_LINE).unwrap() + 1;
            edit(&mut document, at, 0, "𝔸", 2);
            let snapshot = document.snapshot_at(2);
            let expected = expected(&snapshot, style);
            assert!(expected.to_string().contains("noop-reshape"));
            assert_eq!(published(&renderings, &snapshot, style), expected);
            edit(&mut document, at, "𝔸".len(), "", 3);
        }
    }

    /// What the publisher sends, as the reference computes it: every library
    /// diagnostic of the version through [`Style::lsp`].
    fn expected(snapshot: &Snapshot, style: Style) -> serde_json::Value {
        let all: Vec<Diagnostic> = snapshot
            .ide
            .diagnostics()
            .iter()
            .map(|d| style.lsp(snapshot, d))
            .collect();
        serde_json::to_value(all).unwrap()
    }

    fn published(renderings: &Renderings, snapshot: &Snapshot, style: Style) -> serde_json::Value {
        let body = renderings.notification(snapshot, style);
        let value: serde_json::Value = serde_json::from_slice(&body).expect("valid JSON");
        assert_eq!(value["method"], "textDocument/publishDiagnostics");
        assert_eq!(value["params"]["version"], snapshot.version);
        assert_eq!(value["params"]["uri"], snapshot.uri.as_str());
        value["params"]["diagnostics"].clone()
    }

    /// Replaces bytes `at..at + removed` (moved to char boundaries) by `inserted`.
    fn edit(document: &mut Document, at: usize, removed: usize, inserted: &str, version: i32) {
        let syntax = document.model.syntax();
        let text = syntax.text();
        let mut start = at.min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + removed).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let encoding = PositionEncoding::Utf16;
        let range = Range::new(
            position::to_position(syntax, start, encoding),
            position::to_position(syntax, end, encoding),
        );
        let change = TextDocumentContentChangeEvent {
            range: Some(range),
            range_length: None,
            text: inserted.into(),
        };
        document.apply_changes(version, vec![change], encoding);
    }

    const STYLES: [Style; 3] = [
        Style {
            encoding: PositionEncoding::Utf16,
            raise_uncoalesced: false,
        },
        Style {
            encoding: PositionEncoding::Utf8,
            raise_uncoalesced: false,
        },
        Style {
            encoding: PositionEncoding::Utf16,
            raise_uncoalesced: true,
        },
    ];

    #[test]
    fn the_first_publish_is_every_diagnostic_in_order() {
        let document = Document::new("file:///m.hlo".parse().unwrap(), 1, &text());
        let snapshot = document.snapshot_at(1);
        for style in STYLES {
            let renderings = Renderings::default();
            let expected = expected(&snapshot, style);
            assert!(expected.as_array().unwrap().len() > 20, "{expected}");
            assert_eq!(published(&renderings, &snapshot, style), expected);
            // Kept renderings give the same text again.
            let blocks = super::super::workspace::lock(&renderings.blocks);
            assert!(blocks.values().any(|b| !b.cells.is_empty()));
            drop(blocks);
            assert_eq!(published(&renderings, &snapshot, style), expected);
        }
    }

    #[test]
    fn a_raised_finding_is_a_warning() {
        let document = Document::new("file:///m.hlo".parse().unwrap(), 1, &text());
        let snapshot = document.snapshot_at(1);
        let raised = published(&Renderings::default(), &snapshot, STYLES[2]);
        let uncoalesced: Vec<&serde_json::Value> = raised
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == UNCOALESCED_READ)
            .collect();
        assert!(!uncoalesced.is_empty());
        assert!(uncoalesced.iter().all(|d| d["severity"] == 2));
    }

    /// A digit changed inside one computation moves nothing: every block whose
    /// sources the edit left alone (all but the edited computation's and its callers')
    /// is published from the text kept for it, and what is published is still what
    /// the version holds.
    #[test]
    fn an_edit_that_moves_nothing_renders_only_the_blocks_it_changed() {
        let text = text();
        let mut document = Document::new("file:///m.hlo".parse().unwrap(), 1, &text);
        let style = STYLES[0];
        let renderings = Renderings::default();
        let first = document.snapshot_at(1);
        published(&renderings, &first, style);
        // The version each kept block was rendered for.
        let texts = |renderings: &Renderings| -> FxHashMap<usize, i32> {
            let blocks = super::super::workspace::lock(&renderings.blocks);
            (blocks.iter())
                .filter_map(|(&b, r)| Some((b, r.text.as_ref()?.version)))
                .collect()
        };
        let before = texts(&renderings);
        assert!(before.len() >= 3, "blocks kept: {}", before.len());
        // The first digit of a shape in the middle of the text, inside a computation.
        let middle = text.len() / 2;
        let at = middle + text[middle..].find("f32[").unwrap() + 4;
        let digit = &text[at..at + 1];
        assert!(digit.chars().all(|c| c.is_ascii_digit()), "{digit}");
        let other = if digit == "7" { "6" } else { "7" };
        edit(&mut document, at, 1, other, 2);
        let second = document.snapshot_at(2);
        assert_eq!(
            published(&renderings, &second, style),
            expected(&second, style)
        );
        assert!(first.syntax().layout().same(second.syntax().layout()));
        let after = texts(&renderings);
        let sources = |snapshot: &Snapshot, b| match &snapshot.ide {
            ide::Snapshot::Hlo(hlo) => Sources::of(snapshot, hlo.filled_checks(), b),
            ide::Snapshot::Mlir(_) => unreachable!("an HLO document"),
        };
        let ide::Snapshot::Hlo(hlo) = &second.ide else {
            unreachable!("an HLO document")
        };
        let with_memory_findings: Vec<usize> = (hlo.ready_module_findings().iter())
            .map(|(chunk, _)| chunk / BLOCK_LEN)
            .collect();
        let mut reused = 0;
        for (b, text) in &before {
            let unchanged = sources(&first, *b).same(&sources(&second, *b))
                && !with_memory_findings.contains(b);
            assert_eq!(after.get(b) == Some(text), unchanged, "block {b}");
            reused += usize::from(unchanged);
        }
        let edited = second.syntax().chunk_index_at(at).unwrap() / BLOCK_LEN;
        assert!(
            after.get(&edited) != before.get(&edited),
            "the edited block again"
        );
        assert!(reused >= 2, "{reused} of {} blocks reused", before.len());
    }

    /// A line added near the start moves every block after it: their text is kept,
    /// written with the lines moved.
    #[test]
    fn blocks_after_an_added_line_are_moved_not_rendered_again() {
        let text = text();
        let mut document = Document::new("file:///m.hlo".parse().unwrap(), 1, &text);
        let style = STYLES[0];
        let renderings = Renderings::default();
        published(&renderings, &document.snapshot_at(1), style);
        // A blank line inside the first of the computations with a finding each.
        let at = text.find("%noop0 ").unwrap();
        let at = at + text[at..].find('\n').unwrap() + 1;
        edit(&mut document, at, 0, "\n", 2);
        let snapshot = document.snapshot_at(2);
        assert_eq!(
            published(&renderings, &snapshot, style),
            expected(&snapshot, style)
        );
        let edited = snapshot.syntax().chunk_index_at(at).unwrap() / BLOCK_LEN;
        let blocks = super::super::workspace::lock(&renderings.blocks);
        let moved: Vec<usize> = (blocks.iter())
            .filter(|(&b, r)| b > edited && r.text.as_ref().is_some_and(|t| t.version == 1))
            .map(|(&b, _)| b)
            .collect();
        assert!(moved.len() >= 2, "blocks after {edited} kept: {moved:?}");
    }

    /// A finding shown in another computation (an uncoalesced read at the fusion in
    /// its caller) is kept with its block only while no computation moves: a line
    /// added to a computation between them, in a later block, moves the caller.
    #[test]
    fn a_finding_shown_in_a_later_block_moves_with_it() {
        // Computations put before the text until a block ends between a finding's
        // computation and the one it is shown in, with a computation between.
        let (text, at) = (0..BLOCK_LEN)
            .find_map(|pad| {
                let padding =
                    (0..pad).map(|k| format!("%pad{k} {{ ROOT %p = f32[2]{{0}} parameter(0) }}\n"));
                let text: String = padding.collect::<String>() + &text();
                let document = Document::new("file:///m.hlo".parse().unwrap(), 1, &text);
                let at = between_a_finding_and_where_it_is_shown(&document)?;
                Some((text, at))
            })
            .expect("a finding shown in a later block");
        let mut document = Document::new("file:///m.hlo".parse().unwrap(), 1, &text);
        let style = STYLES[0];
        let renderings = Renderings::default();
        published(&renderings, &document.snapshot_at(1), style);
        edit(&mut document, at, 0, "\n", 2);
        let snapshot = document.snapshot_at(2);
        assert_eq!(
            published(&renderings, &snapshot, style),
            expected(&snapshot, style)
        );
    }

    /// For the first finding shown in a computation of a later block than its own,
    /// the start of the second line of a computation in between, second in its block
    /// (a blank line added there moves the other one, and no block before).
    fn between_a_finding_and_where_it_is_shown(document: &Document) -> Option<usize> {
        let snapshot = document.snapshot_at(1);
        let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
            return None;
        };
        let (file, syntax) = (snapshot.ide.document().file(), snapshot.syntax());
        hlo.check_parts().into_iter().find_map(|part| {
            let (mi, ci) = part.computation?;
            let m = file.module(mi);
            let next_block = (part.chunk / BLOCK_LEN + 1) * BLOCK_LEN;
            part.found.iter().find_map(|a| {
                let placed = a.place(m, m.computation(ci));
                let shown = placed.related.iter().map(|r| r.0.start);
                let there = shown.filter_map(|at| syntax.chunk_index_at(at)).max()?;
                // Not the block's first chunk: an edit rescans from the chunk before.
                let between = syntax.chunks().get(next_block + 1).filter(|c| {
                    next_block + 1 < there && c.kind() == crate::syntax::ChunkKind::Computation
                })?;
                Some(between.start + between.text().find('\n')? + 1)
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// After any edits, what is published from kept renderings is what a fresh
        /// rendering of the version gives: lines moved by the edits above a
        /// computation, columns on a line shared with an edited computation, findings
        /// that appear, disappear or move with another computation.
        #[test]
        fn kept_renderings_publish_what_the_version_holds(
            edits in prop::collection::vec(
                (0.0..1.0f64, 0usize..12, prop::sample::select(vec!["", "\n", "x", "é\n", "𝔸", "}\n", "\n\n\n", "%", "7", "7", "7"])),
                1..8,
            ),
            style in prop::sample::select(STYLES.to_vec()),
        ) {
            let text = text();
            let mut document = Document::new("file:///m.hlo".parse().unwrap(), 1, &text);
            let renderings = Renderings::default();
            published(&renderings, &document.snapshot_at(1), style);
            for (k, (at, removed, inserted)) in edits.into_iter().enumerate() {
                let len = document.model.syntax().len();
                let version = 2 + k as i32;
                // A digit replaces one byte: an edit that moves nothing.
                let removed = if inserted == "7" { 1 } else { removed };
                edit(&mut document, (at * len as f64) as usize, removed, inserted, version);
                let snapshot = document.snapshot_at(version as u64);
                prop_assert_eq!(published(&renderings, &snapshot, style), expected(&snapshot, style));
            }
        }
    }
}
