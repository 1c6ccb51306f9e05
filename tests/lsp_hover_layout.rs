//! What a hover looks like on real dumps, through the real binary: a budget of lines
//! over every fused instruction of every sample and JAX dump in `tests/data`, the
//! order of its sections, the defining attributes in its header, trivial maps in a
//! word, and the physical view when `physicalLayout` is on.

use crate::lsp_support;

use lsp_support::{read_repo_file, uri, Client};
use serde_json::{json, Value};

/// `(line, character)` of byte `offset` (ASCII where it matters).
fn position(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let column = before.rsplit('\n').next().unwrap().encode_utf16().count();
    json!({"line": line, "character": column})
}

fn hover(client: &mut Client, document: &str, text: &str, offset: usize) -> String {
    let h = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": document}, "position": position(text, offset)}),
    );
    h["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn hover_at(client: &mut Client, document: &str, text: &str, needle: &str) -> String {
    let offset = text.find(needle).unwrap_or_else(|| panic!("{needle}")) + 1;
    hover(client, document, text, offset)
}

fn samples() -> Vec<String> {
    let mut files = vec![];
    for dir in ["tests/data/samples/xla", "tests/data/jax"] {
        for e in std::fs::read_dir(lsp_support::repo_file(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "hlo") {
                files.push(format!(
                    "{dir}/{}",
                    p.file_name().unwrap().to_str().unwrap()
                ));
            }
        }
    }
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    files
}

/// Median at most 25 lines and never more than 60 over the hover of every
/// instruction of every fused computation (called by a fusion) of every sample.
#[test]
fn hovers_on_fused_instructions_fit_the_budget() {
    let mut sizes: Vec<(usize, usize, String)> = vec![];
    for rel in samples() {
        let text = read_repo_file(&rel);
        let file = hlo_lsp::model::parse_hlo(&text);
        let mut client = Client::start();
        let document = uri(rel.rsplit('/').next().unwrap());
        client.open(&document, &text);
        for module in &file.modules {
            for computation in module.computations() {
                let id = computation.id;
                let fused = module.callers_of(id).iter().any(|site| {
                    module
                        .caller(site)
                        .is_some_and(|(_, caller)| caller.opcode.name() == "fusion")
                });
                if !fused {
                    continue;
                }
                for instruction in computation.instructions.iter().filter(|i| !i.synthetic) {
                    let value = hover(
                        &mut client,
                        &document,
                        &text,
                        computation.abs(instruction.name_range).start + 1,
                    );
                    assert!(
                        value.contains("```hlo"),
                        "{rel}: {}: {value}",
                        instruction.name
                    );
                    sizes.push((
                        value.lines().count(),
                        value.chars().count(),
                        format!("{rel}: {}", instruction.name),
                    ));
                }
            }
        }
        assert!(client.shutdown_and_exit().success());
    }
    assert!(sizes.len() > 400, "{}", sizes.len());
    let mut lines: Vec<usize> = sizes.iter().map(|s| s.0).collect();
    lines.sort_unstable();
    let median = lines[lines.len() / 2];
    let worst = sizes.iter().max().unwrap();
    let mut chars: Vec<usize> = sizes.iter().map(|s| s.1).collect();
    chars.sort_unstable();
    eprintln!(
        "{} hovers: median {median} lines, max {} lines ({}); median {} characters, max {}",
        sizes.len(),
        worst.0,
        worst.2,
        chars[chars.len() / 2],
        chars[chars.len() - 1]
    );
    assert!(median <= 25, "median {median} lines");
    assert!(worst.0 <= 60, "{} lines: {}", worst.0, worst.2);
}

const NORMALIZE: &str = "HloModule n

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%fused (p0: f32[8,128], p1: f32[128]) -> f32[8,128] {
  %p0 = f32[8,128]{1,0} parameter(0)
  %p1 = f32[128]{0} parameter(1)
  %p2 = f32[8,128]{1,0} parameter(2)
  %e = f32[8,128]{1,0} exponential(%p0)
  %z = f32[] constant(0)
  %sum = f32[8]{0} reduce(%e, %z), dimensions={1}, to_apply=%add
  %bs = f32[8,128]{1,0} broadcast(%sum), dimensions={0}
  %d = f32[8,128]{1,0} divide(%e, %bs)
  %g = f32[8,128]{1,0} broadcast(%p1), dimensions={1}
  ROOT %m = f32[8,128]{1,0} multiply(%d, %g)
}

ENTRY %main (a: f32[8,128], b: f32[128], c: f32[8,128]) -> f32[8,128] {
  %a = f32[8,128]{1,0} parameter(0)
  %b = f32[128]{0} parameter(1)
  %c = f32[8,128]{1,0} parameter(2)
  ROOT %f = f32[8,128]{1,0} fusion(%a, %b, %c), kind=kLoop, calls=%fused
}
";

#[test]
fn sections_come_in_order_of_usefulness_with_trivial_maps_in_a_word() {
    let mut client = Client::start();
    let document = uri("normalize.hlo");
    client.open(&document, NORMALIZE);
    let value = hover_at(&mut client, &document, NORMALIZE, "%bs = ");
    // 1. the instruction with the attribute that defines its map.
    assert!(
        value.starts_with(
            "```hlo\n%bs = f32[8,128]{1,0} broadcast(f32[8] %sum), dimensions={0}\n```\n"
        ),
        "{value}"
    );
    let composed = value
        .find("**From the output of fusion `%f`**: identity")
        .expect(&value);
    // 3. only the parameters read through it: %p0 (through the reduce), not %p1/%p2.
    let parameters = value
        .find("**Fusion parameters it reads** (maps from its index)\n- `%p0` (parameter 0, `f32[8,128]`): `(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 7], d1 in [0, 127], s0 in [0, 127]`")
        .expect(&value);
    assert!(!value.contains("%p1") && !value.contains("%p2"), "{value}");
    // 4. its own operand map, with utilization.
    let operands = value
        .find("**Operands**\n- `%sum`: `(d0, d1) -> (d0), domain: d0 in [0, 7], d1 in [0, 127]` — utilization 100.0% of elements, each read 128.00×")
        .expect(&value);
    assert!(composed < parameters && parameters < operands, "{value}");
    // Identity over the same shape and scalar reads: one short line.
    let value = hover_at(&mut client, &document, NORMALIZE, "%d = ");
    assert!(value.contains("- `%e`, `%bs`: identity"), "{value}");
    let value = hover_at(&mut client, &document, NORMALIZE, "%sum = ");
    assert!(value.contains("- `%z`: scalar"), "{value}");
    assert!(
        value.contains(", dimensions={1}, to_apply=%add\n```"),
        "{value}"
    );
    // A parameter no instruction path reads from the output.
    let value = hover_at(&mut client, &document, NORMALIZE, "%p2 = ");
    assert!(
        value.contains("**From the output of fusion `%f`**: not read"),
        "{value}"
    );
    // The fusion: composed maps to its operands, the unread one said so.
    let value = hover_at(&mut client, &document, NORMALIZE, "%f = ");
    assert!(value.contains("kind=kLoop, calls=%fused\n```"), "{value}");
    assert!(value.contains("- `%c`: not read"), "{value}");
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn recomputed_expensive_work_warns_where_the_reads_start_and_says_why() {
    let mut client = Client::start();
    let document = uri("normalize.hlo");
    client.open(&document, NORMALIZE);
    // The reduce is broadcast back over its row: a loop fusion computes each sum
    // once per element of the row (128 times), and the exponential once more.
    let sum = hover_at(&mut client, &document, NORMALIZE, "%sum = ");
    assert!(
        sum.contains("⚠ recomputed 128.00×: the loop fusion computes each element of this reduce once per output element that reads it"),
        "{sum}"
    );
    let e = hover_at(&mut client, &document, NORMALIZE, "%e = ");
    assert!(e.contains("⚠ recomputed 129.00×: the loop fusion computes each element of this exponential once per output element that reads it"), "{e}");
    // The broadcast is where the repeated reads start: its operand line says so,
    // and keeps the number.
    let bs = hover_at(&mut client, &document, NORMALIZE, "%bs = ");
    assert!(
        bs.contains("each read 128.00× ⚠ recomputed 128.00×: the loop fusion computes each element of `%sum` (reduce) once per output element that reads it"),
        "{bs}"
    );
    // Reading the broadcast once per element, or a parameter many times: no warning.
    for needle in ["%d = ", "%g = ", "%m = ", "%f = "] {
        let value = hover_at(&mut client, &document, NORMALIZE, needle);
        assert!(!value.contains('⚠'), "{needle}: {value}");
    }
    let g = hover_at(&mut client, &document, NORMALIZE, "%g = ");
    assert!(g.contains("each read 8.00×"), "{g}");
    // A reduction fusion computes its reductions once: no warning at all.
    let input = NORMALIZE.replace("kind=kLoop", "kind=kInput");
    let document = uri("normalize_input.hlo");
    client.open(&document, &input);
    for needle in ["%sum = ", "%e = ", "%bs = "] {
        let value = hover_at(&mut client, &document, &input, needle);
        assert!(!value.contains('⚠'), "{needle}: {value}");
        assert!(
            value.contains("**From the output of fusion `%f`**"),
            "{value}"
        );
    }
    assert!(client.shutdown_and_exit().success());
}

const LAYOUT: &str = "HloModule l

%fused (p0: f32[4,8]) -> f32[8,4] {
  %p0 = f32[4,8]{0,1} parameter(0)
  %n = f32[4,8]{0,1} negate(%p0)
  ROOT %t = f32[8,4]{1,0} transpose(%n), dimensions={1,0}
}

ENTRY %main (a: f32[4,8]) -> f32[8,4] {
  %a = f32[4,8]{0,1} parameter(0)
  ROOT %f = f32[8,4]{1,0} fusion(%a), kind=kLoop, calls=%fused
}
";

#[test]
fn physical_layout_applies_to_every_section_and_says_so() {
    let mut client = Client::start();
    let document = uri("layout.hlo");
    client.open(&document, LAYOUT);
    let logical = hover_at(&mut client, &document, LAYOUT, "%n = ");
    assert!(
        logical.contains("**From the output of fusion `%f`**: `(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]`"),
        "{logical}"
    );
    assert!(!logical.contains("Physical"), "{logical}");
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"physicalLayout": true}}),
    );
    // The transpose of a {0,1} tensor into a {1,0} one is the identity in memory.
    let physical = hover_at(&mut client, &document, LAYOUT, "%n = ");
    assert!(physical.contains("_Physical layout"), "{physical}");
    assert!(
        physical.contains("**From the output of fusion `%f`**: identity"),
        "{physical}"
    );
    assert!(
        physical.contains("- `%p0` (parameter 0, `f32[4,8]`): identity"),
        "{physical}"
    );
    let root = hover_at(&mut client, &document, LAYOUT, "%t = ");
    assert!(root.contains("- `%n`: identity"), "{root}");
    let fusion = hover_at(&mut client, &document, LAYOUT, "%f = ");
    assert!(fusion.contains("- `%a`: identity"), "{fusion}");
    assert!(client.shutdown_and_exit().success());
}
