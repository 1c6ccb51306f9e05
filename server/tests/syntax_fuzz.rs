//! A stable-toolchain stand-in for `cargo fuzz` (which needs nightly): mutates the
//! shipped HLO samples and random bytes for a time budget and feeds them to the
//! raw grammar and to `SyntaxDocument` (parse, errors, random edits). A panic, a
//! parse slower than `SLOW` (a hang), an out-of-range node, or an incremental result
//! that differs from a fresh parse fails the run.
//!
//! Ignored by default; run with
//! `FUZZ_SECONDS=300 cargo test --release -p hlo-lsp --test syntax_fuzz -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use hlo_lsp::syntax::{new_parser, SyntaxDocument};

const SLOW: Duration = Duration::from_secs(2);

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

const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"(",
    b")",
    b"\"",
    b"\\",
    b",",
    b"=",
    b"\n",
    b"//",
    b"/*",
    b"*/",
    b"// -----\n",
    b"%",
    b"ENTRY ",
    b"ROOT ",
    b"HloModule ",
    b"FileNames\n",
    b"f32[2]{0}",
    b"->",
    b":",
    b"[",
    b"]",
    b"<=",
    b"\xc3\xa9",
    b"\xe6\x97\xa5",
    b"\xff",
    b"\x00",
    b"backend_config={\"a\":\"}\"}",
    b"calls=",
    b"constant(-inf)",
];

fn samples() -> Vec<Vec<u8>> {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");
    let mut out = Vec::new();
    for dir in ["samples/xla", "jax"] {
        for entry in std::fs::read_dir(format!("{data}/{dir}")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "hlo") {
                let bytes = std::fs::read(&path).unwrap();
                if bytes.len() < 40_000 {
                    out.push(bytes);
                }
            }
        }
    }
    out
}

fn mutate(rng: &mut Rng, input: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(input.len() + 1);
        match rng.below(5) {
            0 => {
                let end = (at + rng.below(64)).min(input.len());
                input.drain(at..end);
            }
            1 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                input.splice(at..at, token.iter().copied());
            }
            2 if at < input.len() => input[at] = rng.next() as u8,
            3 if !input.is_empty() => {
                // Duplicate a slice elsewhere (structure-aware-ish splicing).
                let from = rng.below(input.len());
                let end = (from + rng.below(200)).min(input.len());
                let piece = input[from..end].to_vec();
                input.splice(at..at, piece);
            }
            _ => input.truncate(at),
        }
    }
}

fn check_raw(parser: &mut tree_sitter::Parser, input: &[u8]) {
    let t = Instant::now();
    let tree = parser.parse(input, None).expect("a tree");
    assert!(
        t.elapsed() < SLOW,
        "slow parse ({:?}) of {:?}",
        t.elapsed(),
        String::from_utf8_lossy(input)
    );
    let root = tree.root_node();
    assert!(root.end_byte() <= input.len());
}

fn check_document(rng: &mut Rng, text: &str) {
    let t = Instant::now();
    let mut doc = SyntaxDocument::parse(text);
    for e in doc.syntax_errors() {
        assert!(e.range.end <= text.len() && !e.message.is_empty());
    }
    for _ in 0..3 {
        let len = doc.len();
        let start = rng.below(len + 1);
        let end = start + rng.below(20);
        let insert = String::from_utf8_lossy(TOKENS[rng.below(TOKENS.len())]).into_owned();
        doc.edit(start, end, &insert);
    }
    let fresh = SyntaxDocument::parse(&doc.text());
    let ours: Vec<_> = doc
        .chunks()
        .iter()
        .map(|c| (c.range(), c.tree().root_node().to_sexp()))
        .collect();
    let theirs: Vec<_> = fresh
        .chunks()
        .iter()
        .map(|c| (c.range(), c.tree().root_node().to_sexp()))
        .collect();
    assert_eq!(
        ours,
        theirs,
        "incremental differs from fresh for {:?}",
        doc.text()
    );
    assert!(
        t.elapsed() < SLOW * 4,
        "slow document round ({:?})",
        t.elapsed()
    );
}

#[test]
#[ignore = "a few minutes of fuzzing; run explicitly (see the module docs)"]
fn fuzz_for_a_time_budget() {
    let seconds: u64 = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed);
    let mut rng = Rng(seed | 1);
    let corpus = samples();
    let mut parser = new_parser();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut runs = 0u64;
    while Instant::now() < deadline {
        let mut input = if rng.below(8) == 0 {
            (0..rng.below(2000)).map(|_| rng.next() as u8).collect()
        } else {
            corpus[rng.below(corpus.len())].clone()
        };
        mutate(&mut rng, &mut input);
        check_raw(&mut parser, &input);
        if let Ok(text) = std::str::from_utf8(&input) {
            check_document(&mut rng, text);
        } else {
            check_document(&mut rng, &String::from_utf8_lossy(&input));
        }
        runs += 1;
    }
    eprintln!("fuzz: {runs} inputs in {seconds} s (seed {seed}), no failure");
}
