//! The quick reader (`syntax::quick`) against tree-sitter: every computation of every
//! HLO file in the repository is built both ways, and the two models (computation and
//! diagnostics, compared through their `Debug` text) must be equal wherever the quick
//! reader accepts the text. Mutated computations (a byte deleted, inserted or
//! replaced) check that it declines what the grammar reads otherwise.

use std::path::{Path, PathBuf};

use hlo_lsp::model::build::{build_chunk, build_from_tree};
use hlo_lsp::syntax::quick::read_computation;
use hlo_lsp::syntax::{Chunk, ChunkKind, SyntaxDocument};

/// Computations of the repository's HLO files the quick reader reads (the rest go to
/// tree-sitter: lit tests with `//` comments, inline operands and computations, typed
/// literals...). A floor: it may only go up.
const READ_AT_LEAST: usize = 3553;

fn hlo_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            hlo_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "hlo" || e == "txt") {
            out.push(path);
        }
    }
}

fn all_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    hlo_files(&root.join("tests/data"), &mut files);
    hlo_files(&root.join("examples"), &mut files);
    files.sort();
    files
}

/// `None` when both ways agree (or the quick reader declines), else what differs.
fn disagreement(text: &str) -> Option<String> {
    let chunk = Chunk::new(ChunkKind::Computation, text);
    read_computation(text)?;
    let quick = format!("{:?}", build_chunk(&chunk));
    let tree = format!("{:?}", build_from_tree(&chunk, &chunk.tree()));
    (quick != tree).then(|| format!("quick: {quick}\ntree:  {tree}"))
}

fn computation_chunks(text: &str) -> Vec<String> {
    SyntaxDocument::parse(text)
        .chunks()
        .iter()
        .filter(|c| c.kind() == ChunkKind::Computation)
        .map(|c| c.text().to_string())
        .collect()
}

#[test]
fn the_quick_reader_builds_what_the_tree_builds() {
    let (mut read, mut total, mut failures) = (0usize, 0usize, Vec::new());
    for path in all_files() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for chunk in computation_chunks(&text) {
            total += 1;
            if read_computation(&chunk).is_some() {
                read += 1;
            }
            if let Some(diff) = disagreement(&chunk) {
                failures.push(format!("{}:\n{chunk}\n{diff}", path.display()));
            }
        }
    }
    eprintln!("quick reader: {read} of {total} computations read without tree-sitter");
    assert!(
        failures.is_empty(),
        "{} computations differ; the first:\n{}",
        failures.len(),
        failures[0]
    );
    assert!(total > 1000, "found only {total} computations");
    assert!(
        read >= READ_AT_LEAST,
        "the quick reader read {read} computations, fewer than its floor {READ_AT_LEAST}"
    );
}

/// The bench module (the live scale module is made of it) is read whole.
#[test]
fn the_quick_reader_reads_every_computation_of_the_bench_module() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/bench/transformer.after.hlo"
    );
    let text = std::fs::read_to_string(path).expect("bench module");
    let declined: Vec<String> = computation_chunks(&text)
        .into_iter()
        .filter(|c| read_computation(c).is_none())
        .map(|c| c.lines().next().unwrap_or("").to_string())
        .collect();
    assert!(declined.is_empty(), "declined: {declined:?}");
}

/// A small deterministic generator (no dependency on the seed of a property library).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn mutated_computations_are_declined_or_read_alike() {
    const INSERTS: &[u8] = b"{}()[],=%\" /*\n:-.0aT\\";
    let mut rng = Lcg(47);
    let mut chunks: Vec<String> = Vec::new();
    for path in all_files() {
        if let Ok(text) = std::fs::read_to_string(&path) {
            chunks.extend(
                computation_chunks(&text)
                    .into_iter()
                    .filter(|c| c.len() < 4000 && read_computation(c).is_some()),
            );
        }
    }
    chunks.sort();
    chunks.dedup();
    let mut failures = Vec::new();
    let mut tried = 0;
    for chunk in chunks.iter().take(600) {
        for _ in 0..8 {
            let mut bytes = chunk.clone().into_bytes();
            let at = rng.next(bytes.len());
            match rng.next(3) {
                0 => {
                    bytes.remove(at);
                }
                1 => bytes.insert(at, INSERTS[rng.next(INSERTS.len())]),
                _ => bytes[at] = INSERTS[rng.next(INSERTS.len())],
            }
            let Ok(mutated) = String::from_utf8(bytes) else {
                continue;
            };
            tried += 1;
            if let Some(diff) = disagreement(&mutated) {
                failures.push(format!("{mutated}\n{diff}"));
            }
        }
    }
    eprintln!("{tried} mutations tried");
    assert!(
        failures.is_empty(),
        "{} mutations differ; the first:\n{}",
        failures.len(),
        failures[0]
    );
}

/// XLA's iota replica groups are one `attribute_atom`; a mesh (a word before `[`) is
/// left to the grammar.
#[test]
fn iota_replica_groups_are_read_as_one_atom() {
    let text = "%f {\n  ROOT %r = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups=[2,4]<=[8]T(1,0), use_global_device_ids=true, to_apply=%add\n}\n";
    let c = read_computation(text).expect("read");
    let attributes = &c.instructions[0].attributes;
    assert_eq!(&text[attributes[1].value.clone()], "[2,4]<=[8]T(1,0)");
    assert_eq!(attributes[1].value_kind, "attribute_atom");
    assert_eq!(disagreement(text), None);
    let mesh = "%f {\n  ROOT %r = f32[8]{0} all-reduce(%x), replica_groups=mesh['a'=8] {'a'}, to_apply=%add\n}\n";
    assert!(read_computation(mesh).is_none());
}
