//! Large generated HLO modules shared by the benchmarks (one generator per kind of
//! text, so every benchmark measures the same input).
//!
//! * [`replicated_samples`]: the shipped samples and JAX dumps, replicated under fresh
//!   names: realistic text for the parser (metadata, layouts, backend configs).
//! * [`fused_module`]: a valid module of fused computations (elementwise chains,
//!   broadcasts, transposes, slices, reduces, with metadata and backend configs) and
//!   an entry that calls each one: for the model, the analysis and the server.
//! * [`transformer_module`]: renamed copies of a real JAX dump (an 8-layer transformer
//!   training step, 1.77 MB, `tests/data/bench`) in one module, every copy live: the
//!   scale benchmark.

#![allow(dead_code)]

use hlo_lsp::syntax::{ChunkKind, SyntaxDocument};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");

/// Non-ENTRY computations of every sample, as text.
fn source_computations() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["jax", "samples/xla"] {
        let mut paths: Vec<_> = std::fs::read_dir(format!("{DATA}/{dir}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        {
            let text = std::fs::read_to_string(&path).unwrap();
            let doc = SyntaxDocument::parse(&text);
            for chunk in doc
                .chunks()
                .iter()
                .filter(|c| c.kind() == ChunkKind::Computation)
            {
                let tree = chunk.tree();
                if !chunk.outline().is_entry && !tree.root_node().has_error() {
                    out.push(strip_comments(chunk.text()));
                }
            }
        }
    }
    out
}

/// Drops comment-only lines (lit-test CHECK lines) so the copies are plain HLO.
fn strip_comments(text: &str) -> String {
    let mut s: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    s.push_str("\n\n");
    s
}

/// `text` with every `name` node suffixed by `.c<copy>` (definitions, uses and
/// computation references alike, so the copy is as consistent as the original).
fn renamed(text: &str, copy: usize) -> String {
    let doc = SyntaxDocument::parse(text);
    let mut ends = Vec::new();
    for chunk in doc.chunks() {
        let tree = chunk.tree();
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            if n.kind() == "name" {
                ends.push(chunk.abs(n.byte_range()).end);
            }
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
    }
    ends.sort_unstable();
    let mut out = String::with_capacity(text.len() + ends.len() * 8);
    let mut at = 0;
    for end in ends {
        out.push_str(&text[at..end]);
        out.push_str(&format!(".c{copy}"));
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// About `megabytes` MB of replicated sample computations and an ENTRY calling each.
pub fn replicated_samples(megabytes: usize) -> String {
    let sources = source_computations();
    let header = "HloModule bench, is_scheduled=true, entry_computation_layout={(f32[8,128]{1,0})->f32[8,128]{1,0}}\n\n";
    let mut text = String::from(header);
    let mut entry = String::from(
        "ENTRY %main (p: f32[8,128]) -> f32[8,128] {\n  %p = f32[8,128]{1,0} parameter(0)\n",
    );
    let target = megabytes * 1_000_000;
    let mut copy = 0;
    while text.len() + entry.len() < target {
        for (k, source) in sources.iter().enumerate() {
            let comp = renamed(source, copy);
            let name_end = comp.find([' ', '{']).unwrap_or(0);
            entry.push_str(&format!(
                "  %call.{copy}.{k} = f32[8,128]{{1,0}} fusion(%p), kind=kLoop, calls={}, metadata={{op_name=\"bench\"}}\n",
                comp[..name_end].trim()
            ));
            text.push_str(&comp);
        }
        copy += 1;
    }
    entry.push_str("  ROOT %r = f32[8,128]{1,0} copy(%p)\n}\n");
    text.push_str(&entry);
    text
}

/// A module of fused computations (elementwise chains, broadcasts, reduces, slices,
/// transposes with layouts and metadata) and an entry that calls each one.
pub fn fused_module(target_bytes: usize) -> String {
    let mut text = String::from(
        "HloModule bench, entry_computation_layout={(f32[128,256]{1,0})->f32[128]{0}}\n\n",
    );
    text.push_str("add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n");
    let mut entry = String::from("ENTRY main {\n  p0 = f32[128,256]{1,0} parameter(0)\n");
    let mut k = 0;
    let mut previous = "p0".to_string();
    while text.len() + entry.len() < target_bytes {
        text.push_str(&format!(
            "fused_{k} {{\n  param_0 = f32[128,256]{{1,0}} parameter(0)\n  c = f32[] constant(0.5)\n  b = f32[128,256]{{1,0}} broadcast(c), dimensions={{}}\n"
        ));
        let mut last = "param_0".to_string();
        for i in 0..12 {
            let op = ["add", "multiply", "subtract", "maximum"][i % 4];
            text.push_str(&format!(
                "  e{i} = f32[128,256]{{1,0}} {op}({last}, b), metadata={{op_type=\"{op}\" op_name=\"jit(f)/{op}\" source_file=\"model.py\" source_line={i}}}\n"
            ));
            let n = format!("x{i}");
            text.push_str(&format!("  {n} = f32[128,256]{{1,0}} exponential(e{i})\n"));
            last = n;
        }
        text.push_str(&format!(
            "  t = f32[256,128]{{0,1}} transpose({last}), dimensions={{1,0}}\n  s = f32[128,128]{{0,1}} slice(t), slice={{[0:256:2], [0:128]}}\n  r = f32[128,128]{{1,0}} bitcast(s)\n  z = f32[] constant(0)\n  ROOT red = f32[128]{{0}} reduce(r, z), dimensions={{1}}, to_apply=add_f32\n}}\n\n"
        ));
        let f = format!("fusion.{k}");
        entry.push_str(&format!(
            "  {f} = f32[128]{{0}} fusion({previous}), kind=kLoop, calls=fused_{k}, backend_config={{\"operation_queue_id\":\"0\",\"fusion_backend_config\":{{\"kind\":\"__loop\"}}}}\n  w{k} = f32[128,256]{{1,0}} broadcast({f}), dimensions={{0}}\n"
        ));
        previous = format!("w{k}");
        k += 1;
    }
    text.push_str(&entry);
    text.push_str(&format!(
        "  ROOT out = f32[128,256]{{1,0}} copy({previous})\n}}\n"
    ));
    text
}

/// The real dump the scale benchmarks replicate (`tests/data/bench/make_transformer.py`).
pub fn transformer_dump() -> String {
    std::fs::read_to_string(format!("{DATA}/bench/transformer.after.hlo"))
        .expect("tests/data/bench/transformer.after.hlo")
}

/// `copies` renamed copies of the transformer dump in one valid module in which every
/// copy is live: the first copy keeps the `HloModule` line and the stack-frame tables,
/// each copy's ENTRY becomes a plain computation, and a new ENTRY with the dump's
/// signature calls every copy ([`live_entry`]), as `../shared/bench/make_live_module.py`
/// writes it. (Keeping only the last copy's ENTRY left the others dead: analyses that
/// start at ENTRY, the memory estimate, costs and the peak lens, saw 1/copies of the
/// module, which no real dump of that size does.) XLA's parser accepts the result, so
/// both parsers read the same text.
pub fn transformer_module(copies: usize) -> String {
    let dump = transformer_dump();
    let mut out = String::with_capacity(dump.len() * copies + 64 * copies + 4096);
    for copy in 0..copies {
        let renamed = renamed(&dump, copy);
        let doc_copy = SyntaxDocument::parse(&renamed);
        for chunk in doc_copy.chunks() {
            let text = chunk.text();
            match chunk.kind() {
                ChunkKind::Header | ChunkKind::Table if copy > 0 => continue,
                ChunkKind::Header => out.push_str(&text.replace(".c0", "")),
                ChunkKind::Computation => out.push_str(text.strip_prefix("ENTRY ").unwrap_or(text)),
                _ => out.push_str(text),
            }
        }
    }
    out.push_str(&live_entry(&dump, copies));
    out
}

/// The ENTRY of [`transformer_module`]: the dump's ENTRY signature and parameters
/// (their names are the dump's own, which no copy uses), and a `call` of each copy's
/// former ENTRY, the last one the root.
fn live_entry(dump: &str, copies: usize) -> String {
    let doc = SyntaxDocument::parse(dump);
    let entry = doc
        .chunks()
        .iter()
        .find(|c| c.kind() == ChunkKind::Computation && c.outline().is_entry)
        .expect("the dump has an ENTRY");
    let name = entry
        .outline()
        .name
        .as_ref()
        .expect("a named ENTRY")
        .name
        .to_string();
    let text = entry.text();
    let header = text.lines().next().expect("a header line");
    let header = header.replacen(&format!("%{name} "), "%main_all ", 1);
    let result = header
        .rsplit_once("->")
        .map(|(_, r)| r.trim().trim_end_matches('{').trim().to_string())
        .expect("a signature with a result");
    let mut parameters: Vec<(usize, String, String)> = text
        .lines()
        .filter_map(|line| {
            let (def, rest) = line.trim_start().split_once(" parameter(")?;
            let (name, shape) = def.split_once(" = ")?;
            let number = rest.split(')').next()?.parse().ok()?;
            Some((
                number,
                name.trim_start_matches('%').to_string(),
                shape.to_string(),
            ))
        })
        .collect();
    parameters.sort();
    let mut out = format!("\n{header}\n");
    for (k, name, shape) in &parameters {
        out.push_str(&format!("  %{name} = {shape} parameter({k})\n"));
    }
    let operands: Vec<String> = parameters.iter().map(|(_, n, _)| format!("%{n}")).collect();
    let operands = operands.join(", ");
    for copy in 0..copies {
        let root = if copy + 1 == copies { "ROOT " } else { "" };
        out.push_str(&format!(
            "  {root}%call.c{copy} = {result} call({operands}), to_apply=%{name}.c{copy}\n"
        ));
    }
    out.push_str("}\n");
    out
}

/// A number from the environment variable `name`, else `default`.
pub fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `p` percentile of `sorted`.
pub fn percentile(sorted: &[std::time::Duration], p: f64) -> std::time::Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Wall time of `binary ARGS` in seconds, best of `runs` (on a shared machine a single
/// run measures the neighbours); exit codes 0 and 1 (findings) count as success.
pub fn cli_seconds(binary: &str, args: &[&str], runs: usize) -> f64 {
    (0..runs)
        .map(|_| {
            let t = std::time::Instant::now();
            let out = std::process::Command::new(binary)
                .args(args)
                .output()
                .expect("running hlo-lsp");
            assert!(
                out.status.code().is_some_and(|c| c <= 1),
                "hlo-lsp {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}
