//! The StableHLO reader on mutated JAX programs: 2,000 variants of the shipped
//! `.mlir` texts (the 53 JAX programs, with regions among them, softmax, the
//! name-scoped MLP, XLA's analysis vectors converted to
//! StableHLO), each cut, spliced, renumbered or salted with MLIR punctuation, go
//! through everything `check`, `mlir`, `graph` and the server do with a `.mlir`
//! file (read, translation to HLO, its checks, the per-op maps, those of ops in
//! regions with their reasons, the graph with namespaces open and folded: the
//! `stablehlo` fuzz target's body, `fuzz_support::stablehlo`). None may panic; a
//! failing variant is printed whole. Deterministic (a fixed seed), so a failure
//! is reproduced by running the test again; `MUTATION_SEED` and
//! `MUTATION_VARIANTS` run other and more variants.

use std::panic::{catch_unwind, AssertUnwindSafe};

use hlo_lsp::mlir::{self, stablehlo};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");
const VARIANTS: usize = 2000;

/// xorshift64*: deterministic from the seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Pieces of StableHLO syntax a mutation inserts: the brackets and separators the
/// reader balances, result lists, empty lists, out-of-range numbers.
const SALT: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    ",",
    ":",
    "=",
    "->",
    "%",
    "#0",
    "#7",
    ":2",
    "%a, %b = ",
    "%0:3 = ",
    "dims = []",
    "dims = [0, 1, 2]",
    "tensor<",
    "tensor<f32>",
    "tensor<0x?xf32>",
    "x",
    "-1",
    "0",
    "99999999999999999999",
    "\"",
    "\n",
    "^bb0(%q: tensor<f32>):",
    "stablehlo.",
    "stablehlo.return",
    "return",
    "loc(",
    "#loc3",
    "dense<",
    "complex<f32>",
];

fn corpus() -> Vec<String> {
    let mut out = vec![
        std::fs::read_to_string(format!("{DATA}/stablehlo/softmax.mlir")).expect("softmax"),
        std::fs::read_to_string(format!("{DATA}/stablehlo/softmax_debug.mlir")).expect("debug"),
        std::fs::read_to_string(format!("{DATA}/stablehlo/scopes.mlir")).expect("scopes"),
    ];
    for (file, key) in [("programs.jsonl", "stablehlo"), ("analysis.jsonl", "mlir")] {
        let text = std::fs::read_to_string(format!("{DATA}/stablehlo/{file}")).expect(file);
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("json");
            if let Some(src) = v[key].as_str().filter(|s| !s.is_empty()) {
                out.push(src.to_string());
            }
        }
    }
    out
}

/// A byte offset of `text` on a character boundary.
fn boundary(rng: &mut Rng, text: &str) -> usize {
    let mut at = rng.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// One to four mutations of `text`.
fn mutate(rng: &mut Rng, text: &mut String) {
    for _ in 0..1 + rng.below(4) {
        let a = boundary(rng, text);
        let b = boundary(rng, text);
        let (lo, hi) = (a.min(b), a.max(b));
        match rng.below(6) {
            // Cut a short span (a token, part of a line).
            0 => {
                let end = (lo + 1 + rng.below(24)).min(text.len());
                let end = (end..=text.len())
                    .find(|&e| text.is_char_boundary(e))
                    .unwrap_or(lo);
                text.replace_range(lo..end, "");
            }
            // Cut a long span (lines, the end of the file).
            1 => text.replace_range(lo..hi, ""),
            // Duplicate a span elsewhere (a line twice, a region spliced in).
            2 => {
                let piece = text[lo..hi.min(lo + 400)].to_string();
                let at = boundary(rng, text);
                text.insert_str(at, &piece);
            }
            // Salt.
            3 | 4 => {
                let salt = SALT[rng.below(SALT.len())];
                text.insert_str(a, salt);
            }
            // Renumber: the digits after the offset become another number.
            _ => {
                let start = text[a..].find(|c: char| c.is_ascii_digit()).map(|k| a + k);
                if let Some(start) = start {
                    let len = text[start..]
                        .find(|c: char| !c.is_ascii_digit())
                        .unwrap_or(text.len() - start);
                    let n = ["0", "1", "3", "65536", "-2", "18446744073709551616"][rng.below(6)];
                    text.replace_range(start..start + len, n);
                }
            }
        }
    }
}

/// Everything done with a `.mlir` file: read, translation, checks, maps.
fn exercise(src: &str) {
    let file = mlir::read(src);
    let t = stablehlo::translate(src, &file);
    for line in &t.lines {
        let _ = t.to_mlir(line.hlo.clone());
        let _ = t.to_hlo(line.mlir_op.start);
    }
    let _ = stablehlo::summary::ops(src, &file);
    let _ = hlo_lsp::checks::mlir(src);
    let _ = mlir::analyze(src);
    // The `stablehlo` fuzz target's body: regions' coverage, `graph`.
    crate::fuzz_support::stablehlo(src.as_bytes());
}

#[test]
fn mutated_jax_programs_never_panic_the_stablehlo_reader() {
    let corpus = corpus();
    assert!(corpus.len() > 100, "{} texts", corpus.len());
    let env = |key: &str| std::env::var(key).ok().and_then(|s| s.parse::<u64>().ok());
    let mut rng = Rng(env("MUTATION_SEED").unwrap_or(0x5eed_57ab_1e40) | 1);
    let variants = env("MUTATION_VARIANTS").map_or(VARIANTS, |n| n as usize);
    let mut failures = vec![];
    // Where the panic happened, for the report (the message alone rarely says).
    static WHERE: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        if let (Ok(mut at), Some(l)) = (WHERE.lock(), info.location()) {
            *at = format!("{}:{}", l.file(), l.line());
        }
    }));
    for k in 0..variants {
        let mut text = corpus[rng.below(corpus.len())].clone();
        mutate(&mut rng, &mut text);
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| exercise(&text))) {
            let why = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let at = WHERE.lock().map(|w| w.clone()).unwrap_or_default();
            failures.push(format!("variant {k} (at {at}): {why}\n{text}"));
        }
    }
    std::panic::set_hook(hook);
    assert!(
        failures.is_empty(),
        "{} of {variants} variants panic:\n\n{}",
        failures.len(),
        failures
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}
