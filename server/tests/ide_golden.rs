//! What a user reads, checked whole: each fixture is HLO (or MLIR) text with a `$0`
//! where the cursor is; the feature of [`hlo_lsp::ide`] answers at that byte offset
//! and the answer is compared with its snapshot under `tests/snapshots/` (insta).
//! A change to any line of a hover, a hint or an outline shows up as a diff.
//!
//! To accept a deliberate change: `INSTA_UPDATE=always cargo test -p hlo-lsp --test library ide_golden`
//! (or `cargo insta review`), then read the diff before committing it.

use std::sync::Arc;

use hlo_lsp::checks::incremental::Checked;
use hlo_lsp::hover::Detail;
use hlo_lsp::ide::{self, Config, HloSnapshot, MlirSnapshot};
use hlo_lsp::model;

/// The text without its `$0`, and the byte offset of the marker.
fn fixture(marked: &str) -> (String, usize) {
    let at = marked
        .find("$0")
        .expect("the fixture marks the cursor with $0");
    (marked.replacen("$0", "", 1), at)
}

fn hlo(text: &str) -> HloSnapshot {
    let document = Arc::new(model::Document::parse(text));
    let checked = Arc::new(Checked::new(&document));
    HloSnapshot::new(document, checked).with_file_name("fixture.hlo")
}

/// The hover at the marker, as the user reads it, with the bytes it covers.
fn hover_at(marked: &str, detail: Detail) -> String {
    let (text, at) = fixture(marked);
    let snapshot = hlo(&text);
    match ide::hover::hover(&snapshot, at, &Config::default(), detail) {
        Some(hover) => format!("[{}]\n{}", &text[hover.range.clone()], hover.text()),
        None => "(no hover)".to_string(),
    }
}

const SOFTMAX: &str = include_str!("../../examples/softmax.hlo");

/// `SOFTMAX` with the cursor placed at the `nth` occurrence of `needle` (plus `shift`).
fn softmax_at(needle: &str, nth: usize, shift: usize) -> String {
    let at = SOFTMAX
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle} #{nth}"))
        .0
        + shift;
    format!("{}$0{}", &SOFTMAX[..at], &SOFTMAX[at..])
}

#[test]
fn hover_on_a_fusion() {
    insta::assert_snapshot!(hover_at(&softmax_at("ROOT fusion", 0, 5), Detail::Summary));
}

#[test]
fn hover_on_a_fused_reduce() {
    insta::assert_snapshot!(hover_at(&softmax_at("row_max =", 0, 1), Detail::Summary));
}

#[test]
fn hover_on_a_fused_parameter() {
    insta::assert_snapshot!(hover_at(&softmax_at("p0 =", 0, 0), Detail::Summary));
}

#[test]
fn hover_on_an_opcode() {
    insta::assert_snapshot!(hover_at(
        &softmax_at("bitcast(row_sum)", 0, 2),
        Detail::Summary
    ));
}

#[test]
fn hover_on_an_operand_reference() {
    insta::assert_snapshot!(hover_at(&softmax_at("subtract(p0", 0, 10), Detail::Summary));
}

#[test]
fn hover_on_a_called_computation() {
    insta::assert_snapshot!(hover_at(
        &softmax_at("calls=fused_softmax", 0, 8),
        Detail::Summary
    ));
}

#[test]
fn whole_hover_of_a_fusion() {
    insta::assert_snapshot!(hover_at(&softmax_at("ROOT fusion", 0, 5), Detail::Full));
}

const SHARDED_MLP: &str = include_str!("../../tests/data/jax/sharded_mlp.after.hlo");

/// A parameter of a JAX program partitioned over a 2x4 mesh: its sharding in
/// words, the per-device shape beside the global one.
#[test]
fn hover_on_a_sharded_parameter() {
    let at = SHARDED_MLP.find("%param.1 = f32[64,32]").expect("param.1") + 1;
    let marked = format!("{}$0{}", &SHARDED_MLP[..at], &SHARDED_MLP[at..]);
    insta::assert_snapshot!(hover_at(&marked, Detail::Summary));
}

/// The all-reduce of that program: the devices its mesh-form replica groups join
/// and the mesh axis they run along, the bytes each device sends (a ring of 4
/// over 32 B: 2·3/4·32 = 48 B), and the sharding that calls for it (w's columns
/// are split over axis 1 and summed by the reduce).
#[test]
fn hover_on_a_collective_names_its_device_groups() {
    let at = SHARDED_MLP.find("ROOT %all-reduce = ").expect("all-reduce") + 6;
    let marked = format!("{}$0{}", &SHARDED_MLP[..at], &SHARDED_MLP[at..]);
    let hover = hover_at(&marked, Detail::Summary);
    assert!(
        hover.contains(
            "Replica groups: 2 groups of 4 devices over axis 1 of the 2x4 mesh: {0,1,2,3} {4,5,6,7}"
        ),
        "{hover}"
    );
    assert!(
        hover.contains("each device sends 48 B and receives 48 B"),
        "{hover}"
    );
    assert!(
        hover.contains("Why: %param.1 splits dim 1 4 ways"),
        "{hover}"
    );
    insta::assert_snapshot!(hover);
}

const MEGATRON_BEFORE: &str = include_str!("../../tests/data/jax/predict/mlp_megatron.before.hlo");

/// Before partitioning (JAX's before-optimizations dump of a Megatron MLP),
/// the hover on the second dot says first what XLA's partitioner will insert
/// there: an all-reduce over the mesh axis its contracting dimension is split
/// over, and the bytes each device sends (a ring of 4 over the f32[8,64] each
/// device holds: 2·3/4·2 KiB = 3 KiB).
#[test]
fn hover_before_partitioning_predicts_the_collective() {
    let at = MEGATRON_BEFORE.find("%dot_general.4 = ").expect("dot") + 1;
    let marked = format!("{}$0{}", &MEGATRON_BEFORE[..at], &MEGATRON_BEFORE[at..]);
    let hover = hover_at(&marked, Detail::Summary);
    let line = "**Partitioning** inserts all-reduce over axis 1 ('y') of the 2x4 mesh, each device sends 3.0 KiB: the contracting dim (lhs 1, rhs 0) is split: each device holds a partial sum";
    let Some(k) = hover.find(line) else {
        panic!("{hover}")
    };
    // The most useful fact first: right after the instruction and its source
    // line, before the cost and the maps.
    for later in ["**Cost**", "**Operands**"] {
        if let Some(j) = hover.find(later) {
            assert!(k < j, "{later} before the prediction:\n{hover}");
        }
    }
    // The first dot needs nothing: no partitioning line.
    let at = MEGATRON_BEFORE.find("%dot_general.3 = ").expect("dot") + 1;
    let marked = format!("{}$0{}", &MEGATRON_BEFORE[..at], &MEGATRON_BEFORE[at..]);
    assert!(!hover_at(&marked, Detail::Summary).contains("**Partitioning**"));
}

/// A dump of JAX's program before XLA's passes (here compiled on the CPU; its text
/// does not say so) is no GPU kernel graph: its instructions are not kernels yet, so
/// no GPU cost is shown beside them (lens or hover), and no annotation custom call
/// (`xla.sdy.FuncResultSharding`) is listed as a kernel, until the user chooses a
/// GPU; then the hover says it reads the module as if compiled for it.
#[test]
fn a_dump_before_xlas_passes_is_judged_only_on_a_chosen_gpu() {
    let at = MEGATRON_BEFORE.find("%dot_general.4 = ").expect("dot") + 1;
    let snapshot = hlo(MEGATRON_BEFORE);
    let plain = ide::hover::hover(&snapshot, at, &Config::default(), Detail::Summary)
        .expect("hover")
        .text();
    assert!(!plain.contains("**Cost**"), "{plain}");
    assert!(!plain.contains("a6000"), "{plain}");
    assert!(ide::cost::kernels(&snapshot, &Config::default()).is_empty());
    let chosen = Config {
        device: hlo_lsp::device::Device::h100(),
        device_chosen: true,
        ..Config::default()
    };
    let hover = ide::hover::hover(&snapshot, at, &chosen, Detail::Summary)
        .expect("hover")
        .text();
    assert!(hover.contains("as if compiled for h100"), "{hover}");
    let kernels = ide::cost::kernels(&snapshot, &chosen);
    assert!(!kernels.is_empty());
    for k in &kernels {
        let name = &MEGATRON_BEFORE[k.range.clone()];
        assert!(!name.contains("FuncResultSharding"), "{name}");
        let line = MEGATRON_BEFORE[k.range.start..]
            .lines()
            .next()
            .unwrap_or("");
        assert!(!line.contains("custom_call_target=\"xla.sdy."), "{line}");
    }
}

/// A pass-by-pass dump of a CPU run says nothing of the CPU, neither in its name
/// nor in its text (the CPU's backend configs come later in the pipeline): the
/// after-optimizations dump of the same module beside it does, and the kernels get
/// no GPU cost until the user chooses a GPU.
#[test]
fn a_pass_dump_of_a_cpu_run_is_judged_only_on_a_chosen_gpu() {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/dumps/step/module_0004.jit_step.0001.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt"
    ));
    let text = std::fs::read_to_string(path).expect("test data");
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let snapshot = hlo(&text).with_file_name(name);
    // Read alone (as a test module would be), its fusions are GPU kernels...
    assert!(!ide::cost::kernels(&snapshot, &Config::default()).is_empty());
    // ...but beside its module's `cpu_after_optimizations.txt` they are not.
    let snapshot = snapshot.with_path(Some(path));
    assert!(ide::cost::kernels(&snapshot, &Config::default()).is_empty());
    let at = text.find("%broadcast_add_fusion = ").expect("a fusion") + 1;
    let hover = ide::hover::hover(&snapshot, at, &Config::default(), Detail::Summary)
        .expect("hover")
        .text();
    assert!(
        !hover.contains("**Cost**") && !hover.contains("a6000"),
        "{hover}"
    );
    let chosen = Config {
        device_chosen: true,
        ..Config::default()
    };
    assert!(!ide::cost::kernels(&snapshot, &chosen).is_empty());
}

/// On a GPU chosen for the CPU dump, the collective's hover carries the
/// collective model's time, the number `hlo-lsp cost --device h100` prints.
#[test]
fn hover_on_a_collective_on_a_chosen_gpu_shows_the_model_time() {
    let at = SHARDED_MLP.find("ROOT %all-reduce = ").expect("all-reduce") + 6;
    let marked = format!("{}$0{}", &SHARDED_MLP[..at], &SHARDED_MLP[at..]);
    let (text, at) = fixture(&marked);
    let snapshot = hlo(&text);
    let config = Config {
        device: hlo_lsp::device::Device::h100(),
        device_chosen: true,
        ..Config::default()
    };
    let hover = ide::hover::hover(&snapshot, at, &config, Detail::Summary)
        .expect("hover")
        .text();
    assert!(
        hover.contains("**Cost** ≈ 2.32 µs · all-reduce of 4 devices in one node"),
        "{hover}"
    );
}

/// A kernel that reads a multi-output fusion through a get-tuple-element of its
/// result: the hover weighs fusing that fusion (XLA's
/// FusingTransposeMultiOutputFusionIntoReduceIsSlow module), as `fusion --producer` does.
#[test]
fn hover_weighs_a_producer_read_through_a_tuple_element() {
    let text = r#"
HloModule testmodule

max {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT max = f32[] maximum(p0, p1)
}

transpose_fusion {
  param0 = f32[1500,32,128] parameter(0)
  transpose.1 = f32[1500,128,32] transpose(param0), dimensions={0,2,1}
  ROOT res = (f32[1500,128,32]) tuple(transpose.1)
}

ENTRY fusion {
  c = f32[] constant(-inf)
  p0 = f32[1500,32,128] parameter(0)
  fusion = (f32[1500,128,32]) fusion(p0), kind=kInput, calls=transpose_fusion
  gte = f32[1500,128,32] get-tuple-element(fusion), index=0
  ROOT $0reduce.1 = f32[1500,32] reduce(gte, c), dimensions={1}, to_apply=max
}
"#;
    let hover = hover_at(text, Detail::Summary);
    assert!(
        hover.contains("- not fused with `%fusion`: not an array · fusing would cost"),
        "{hover}"
    );
}

#[test]
fn no_hover_in_whitespace() {
    assert_eq!(hover_at("HloModule m\n$0\n", Detail::Summary), "(no hover)");
}

/// Inlay hints as `line: label` plus their tooltips, for every fused instruction.
#[test]
fn inlay_hints_of_a_fused_computation() {
    let snapshot = hlo(SOFTMAX);
    let hints = ide::inlay_hints::inlay_hints(&snapshot, 0..SOFTMAX.len(), &Config::default());
    let shown: Vec<String> = hints
        .iter()
        .map(|h| {
            let line = SOFTMAX[..h.offset].lines().count();
            let tooltip = h.tooltip.as_deref().unwrap_or("");
            format!("{line}: {}\n{tooltip}\n", h.label)
        })
        .collect();
    insta::assert_snapshot!(shown.join("\n"));
}

/// The document outline, indented by depth.
#[test]
fn outline_of_a_module() {
    fn show(entries: &[ide::navigation::Outline], depth: usize, out: &mut String) {
        for e in entries {
            let detail = e.detail.as_deref().unwrap_or("");
            out.push_str(&format!(
                "{}{:?} {} {detail}\n",
                "  ".repeat(depth),
                e.kind,
                e.name
            ));
            if let Some(children) = &e.children {
                show(children, depth + 1, out);
            }
        }
    }
    let snapshot = hlo(SOFTMAX);
    let mut out = String::new();
    show(&ide::navigation::outline(&snapshot), 0, &mut out);
    insta::assert_snapshot!(out);
}

/// Definition from a fused parameter leads to the fusion's operand; references of a
/// computation include its call.
#[test]
fn navigation_answers() {
    let snapshot = hlo(SOFTMAX);
    let file = snapshot.model();
    let at = |needle: &str| SOFTMAX.find(needle).unwrap() + 1;
    let shown = |ranges: Vec<std::ops::Range<usize>>| -> Vec<String> {
        ranges
            .into_iter()
            .map(|r| {
                let line = SOFTMAX[..r.start].lines().count();
                format!("{line}:{}", &SOFTMAX[r])
            })
            .collect()
    };
    let definition = shown(ide::navigation::definition(file, at("p0 =")));
    let references: Vec<std::ops::Range<usize>> =
        ide::navigation::occurrences_at(file, at("fused_softmax {"))
            .into_iter()
            .map(|o| o.range)
            .collect();
    insta::assert_snapshot!(format!(
        "definition of p0: {definition:?}\noccurrences of fused_softmax: {:?}",
        shown(references)
    ));
}

const LINALG: &str = r#"#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
func.func @bias(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %2 = arith.addf %in, %in_1 : f32
    linalg.yield %2 : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
"#;

#[test]
fn mlir_hover_on_a_linalg_op() {
    let at = LINALG.find("linalg.generic").unwrap() + 3;
    let document = Arc::new(model::Document::parse(LINALG));
    let snapshot = MlirSnapshot::new(document);
    let hover = ide::mlir::hover(&snapshot, at, &Config::default()).expect("a hover");
    insta::assert_snapshot!(format!(
        "[{}]\n{}",
        &LINALG[hover.range.clone()],
        hover.text()
    ));
}

/// A fusion XLA's CPU backend compiled (its backend_config says so).
const CPU_FUSION: &str = r#"HloModule cpu

fused_t {
  p0 = f32[64,32]{1,0} parameter(0)
  ROOT t = f32[32,64]{1,0} transpose(p0), dimensions={1,0}
}

ENTRY main {
  x = f32[64,32]{1,0} parameter(0)
  ROOT $0f = f32[32,64]{1,0} fusion(x), kind=kLoop, calls=fused_t, backend_config={"outer_dimension_partitions":[]}
}
"#;

/// A CPU dump is not judged as a GPU kernel: no coalescing unless the user chose a
/// GPU, and then the hover says it reads the dump as if compiled for it.
#[test]
fn a_cpu_fusion_is_judged_only_on_a_chosen_gpu() {
    let (text, at) = fixture(CPU_FUSION);
    let snapshot = hlo(&text);
    let plain = ide::hover::hover(&snapshot, at, &Config::default(), Detail::Summary).unwrap();
    assert!(!plain.text().contains("Coalescing"), "{}", plain.text());
    let chosen = Config {
        device_chosen: true,
        ..Config::default()
    };
    let hover = ide::hover::hover(&snapshot, at, &chosen, Detail::Summary).unwrap();
    insta::assert_snapshot!(hover.text());
}

/// XLA's `DoNotFuseReduceIntoReduce`: the hover of the second reduce says what it
/// costs and why XLA does not fuse the first into it.
const REDUCE_INTO_REDUCE: &str = r#"HloModule test_module

add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT add.13235 = f32[] add(p0, p1)
}

ENTRY main {
  p0 = f32[8,4,128,226]{3,2,1,0} parameter(0)
  c0 = f32[] constant(0)
  r0 = f32[8,4,128]{2,1,0} reduce(p0, c0), dimensions={3}, to_apply=add
  ROOT $0r1 = f32[8,4]{1,0} reduce(r0, c0), dimensions={2}, to_apply=add
}
"#;

#[test]
fn hover_of_a_kernel_says_why_its_producer_is_not_fused() {
    let hover = hover_at(REDUCE_INTO_REDUCE, Detail::Summary);
    assert!(
        hover.contains("not fused with `%r0`: both the producer and the consumer contain a reduce"),
        "{hover}"
    );
    insta::assert_snapshot!(hover);
}

const CUBLAS_AFTER_FUSION: &str = r#"HloModule cublas

fused_computation {
  p = f32[5,5]{1,0} parameter(0)
  ROOT s = f32[5,5]{1,0} sqrt(p)
}

ENTRY main {
  a = f32[5,5]{1,0} parameter(0)
  fusion = f32[5,5]{1,0} fusion(a), kind=kLoop, calls=fused_computation
  ROOT $0gemm = f32[5,5]{1,0} custom-call(fusion, fusion), custom_call_target="__cublas$lt$matmul"
}
"#;

/// A 5x5 cuBLAS call: XLA's model gives it nanoseconds of work, less than the launch it
/// adds to every kernel, so it is neither memory- nor compute-bound; and a rule keeps
/// its producer apart, so no saving is offered beside the refusal.
#[test]
fn a_tiny_library_call_is_launch_bound_and_refused_without_a_saving() {
    let hover = hover_at(CUBLAS_AFTER_FUSION, Detail::Summary);
    assert!(hover.contains("· launch-bound ·"), "{hover}");
    assert!(
        hover.contains(
            "not fused with `%fusion`: the consumer is not fusible (custom-call `__cublas$lt$matmul`)\n"
        ),
        "{hover}"
    );
    assert!(!hover.contains("would save"), "{hover}");
}

/// The text of `range` with its line (1-based) and column, as a reader finds it.
fn place(text: &str, range: &std::ops::Range<usize>) -> String {
    let line = text[..range.start].matches('\n').count() + 1;
    let column = range.start - text[..range.start].rfind('\n').map_or(0, |n| n + 1) + 1;
    format!("{line}:{column}")
}

/// Every code action of a whole document: title, kind, how many findings it answers,
/// whether it is preferred, and each edit with its place.
fn actions_of(snapshot: &ide::Snapshot) -> String {
    let text = snapshot.text().to_string();
    let mut out = String::new();
    for action in ide::code_actions::actions(snapshot, &(0..text.len())) {
        out.push_str(&format!(
            "{:?}{} · answers {}: {}\n",
            action.kind,
            if action.preferred { " (preferred)" } else { "" },
            action.answers.len(),
            action.fix.title
        ));
        for edit in &action.fix.edits {
            out.push_str(&format!(
                "  {} {:?} → {:?}\n",
                place(&text, &edit.range),
                &text[edit.range.clone()],
                edit.new_text
            ));
        }
    }
    out
}

#[test]
fn code_actions_of_a_tile_that_does_not_divide() {
    let text = include_str!("../../tests/data/tiling/split_6_by_4.hlo");
    insta::assert_snapshot!(actions_of(&ide::Snapshot::Hlo(hlo(text))));
}

#[test]
fn code_actions_of_reshape_chains() {
    let text = include_str!("../../tests/data/refactor/chains.hlo");
    insta::assert_snapshot!(actions_of(&ide::Snapshot::Hlo(hlo(text))));
}

#[test]
fn code_actions_of_mlir_aliases() {
    let document = Arc::new(model::Document::parse(LINALG));
    let snapshot = ide::Snapshot::Mlir(MlirSnapshot::new(document));
    insta::assert_snapshot!(actions_of(&snapshot));
}

/// Semantic tokens as `text kind [modifiers]`, one per line.
#[test]
fn semantic_tokens_of_a_module() {
    let text = SOFTMAX.lines().take(24).collect::<Vec<_>>().join("\n");
    let snapshot = hlo(&text);
    let mut out = String::new();
    for t in ide::semantic_tokens::tokens(&snapshot) {
        out.push_str(&format!(
            "{} {:?} {:?} {}\n",
            place(&text, &(t.start..t.end)),
            &text[t.start..t.end],
            t.kind,
            t.modifiers
        ));
    }
    insta::assert_snapshot!(out);
}

/// The cost lens of every kernel of a GPU module, on the default device.
#[test]
fn cost_lenses_of_a_gpu_module() {
    let text = include_str!(
        "../../tests/data/samples/xla/xla__backends__gpu__tests__memory_bandwidth_fusion.hlo"
    );
    let snapshot = hlo(text);
    let config = Config::default();
    let mut out = String::new();
    for at in ide::cost::kernels(&snapshot, &config) {
        out.push_str(&format!(
            "{} {}: {}\n",
            place(text, &at.range),
            &text[at.range.clone()],
            ide::cost::lens_title(&snapshot, &at, &config)
        ));
    }
    insta::assert_snapshot!(out);
}

/// The loop bounds after each linalg op.
#[test]
fn mlir_inlay_hints() {
    let document = Arc::new(model::Document::parse(LINALG));
    let snapshot = MlirSnapshot::new(document);
    let mut out = String::new();
    for hint in ide::mlir::inlay_hints(&snapshot, 0..LINALG.len(), &Config::default()) {
        out.push_str(&format!(
            "{} {}\n",
            place(LINALG, &(hint.offset..hint.offset)),
            hint.label
        ));
    }
    insta::assert_snapshot!(out);
}

/// The hover at the `nth` occurrence of `needle` in the dump of tests/data/memory
/// `relative`, opened from its folder (XLA's buffer assignment beside it).
fn dump_hover_at(relative: &str, needle: &str, nth: usize) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/memory")
        .join(relative);
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text.match_indices(needle).nth(nth).unwrap().0 + 1;
    let snapshot = hlo(&text).with_path(Some(&path));
    match ide::hover::hover(&snapshot, at, &Config::default(), Detail::Summary) {
        Some(hover) => format!("[{}]\n{}", &text[hover.range.clone()], hover.text()),
        None => "(no hover)".to_string(),
    }
}

#[test]
fn hover_on_entry_lists_what_is_live_at_the_peak_by_source_line() {
    insta::assert_snapshot!(dump_hover_at(
        "transformer_train_step/module_0030.jit_transformer_train_step.cpu_after_optimizations.txt",
        "%main.",
        0
    ));
}

#[test]
fn hover_of_an_instruction_draws_live_ranges_around_it() {
    insta::assert_snapshot!(dump_hover_at(
        "scan_rnn/module_0038.jit_scan_rnn.cpu_after_optimizations.txt",
        "%copy.5 = ",
        0
    ));
}

/// In the server's snapshots the answers that need the whole module (the memory
/// estimate, the stack-frame tables) are computed in the background: a hover before
/// they are ready leaves their sections out instead of waiting, and once they are
/// it is the complete hover, the same as one that waited.
#[test]
fn a_hover_before_the_module_answers_are_ready_leaves_their_sections_out() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/memory/scan_rnn/module_0038.jit_scan_rnn.cpu_after_optimizations.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text.find("%copy.5 = ").unwrap() + 1;
    let entry = text.find("%main.").unwrap() + 1;
    let hover = |snapshot: &HloSnapshot, at: usize| {
        ide::hover::hover(snapshot, at, &Config::default(), Detail::Summary)
            .unwrap()
            .text()
    };
    let waited = hlo(&text).with_path(Some(&path));
    let background = hlo(&text)
        .with_path(Some(&path))
        .with_module_answers(ide::ModuleAnswers::Background);
    assert!(!background.module_answers_ready());
    let early = hover(&background, at);
    assert!(early.starts_with("```hlo\n%copy.5 = "), "{early}");
    assert!(early.contains("**Operands**"), "{early}");
    for section in ["Memory (", "› %copy.5"] {
        assert!(!early.contains(section), "{section} in {early}");
    }
    // What is being computed says so.
    assert!(early.contains("Memory: computing…"), "{early}");
    assert!(
        !early.contains("Source:") || early.contains("Source: reading the module's stack frames…"),
        "{early}"
    );
    assert!(!hover(&background, entry).contains("Live at the peak"));
    assert!(ide::memory::lenses(&background).is_empty());

    background.prepare_module_answers();
    assert!(background.module_answers_ready());
    let complete = hover(&waited, at);
    assert!(complete.contains("Memory (from XLA's buffer assignment)"));
    assert_eq!(hover(&background, at), complete);
    assert_eq!(hover(&background, entry), hover(&waited, entry));
    assert_eq!(
        ide::memory::lenses(&background),
        ide::memory::lenses(&waited)
    );
    assert!(!ide::memory::lenses(&background).is_empty());
}

/// Past [`ide::navigation::OUTLINE_INSTRUCTION_LINES`] the outline an editor asks for on
/// opening stops at the computations (a large dump's instructions are hundreds of
/// thousands): each named as written, over its own text, ENTRY marked.
#[test]
fn the_outline_of_a_large_document_lists_its_computations() {
    let mut text = String::from("HloModule big\n\n");
    let computations = ide::navigation::OUTLINE_INSTRUCTION_LINES / 40 + 1;
    for k in 0..computations {
        text.push_str(&format!(
            "%c{k} (p: f32[4]) -> f32[4] {{\n  %p = f32[4] parameter(0)\n"
        ));
        for i in 0..40 {
            text.push_str(&format!("  %n{i} = f32[4] negate(%p)\n"));
        }
        text.push_str("  ROOT %r = f32[4] negate(%p)\n}\n\n");
    }
    text.push_str("ENTRY %main (x: f32[4]) -> f32[4] {\n  %x = f32[4] parameter(0)\n  ROOT %y = f32[4] call(%x), to_apply=%c0\n}\n");
    let snapshot = hlo(&text);
    let outline = ide::navigation::outline(&snapshot);
    assert_eq!(outline.len(), 1);
    assert_eq!(outline[0].name, "big");
    let listed = outline[0].children.as_ref().unwrap();
    assert_eq!(listed.len(), computations + 1);
    for (k, entry) in listed.iter().enumerate() {
        let name = if k == computations {
            "main".to_string()
        } else {
            format!("c{k}")
        };
        assert_eq!(entry.name, name);
        assert_eq!(&text[entry.selection.clone()], format!("%{name}"));
        assert!(
            entry.range.start <= entry.selection.start && entry.selection.end <= entry.range.end
        );
        assert!(
            text[entry.range.clone()].trim_end().ends_with('}'),
            "{name}"
        );
        assert_eq!(entry.children.as_deref(), Some(&[][..]));
        assert_eq!(entry.detail.is_some(), name == "main");
    }
}

/// Folding reads the chunks, not the models: each computation folds over the lines
/// its model spans, on the shipped samples and dumps.
#[test]
fn computations_fold_over_the_lines_their_models_span() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files: Vec<_> = ["tests/data/jax", "examples"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .collect();
    files.sort();
    assert!(files.len() > 3);
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let snapshot = hlo(&text);
        let line = |byte: usize| text[..byte].matches('\n').count();
        let lines = |r: &std::ops::Range<usize>| (line(r.start), line(r.end));
        let folds: Vec<_> = ide::folding::folding_ranges(&snapshot)
            .iter()
            .map(lines)
            .collect();
        for module in &snapshot.model().modules {
            for c in module.computations() {
                let spanned = lines(&c.range());
                assert!(
                    folds.contains(&spanned),
                    "{}: {} {spanned:?}",
                    path.display(),
                    c.name
                );
            }
        }
    }
}

/// Past [`ide::navigation::OUTLINE_COMPUTATIONS`] the outline leaves out fused
/// computations first: the ENTRY and a computation called otherwise stay listed.
#[test]
fn the_outline_of_a_huge_document_keeps_what_fusions_do_not_call() {
    let fused = ide::navigation::OUTLINE_COMPUTATIONS + 10;
    let mut text = String::from("HloModule huge\n\n");
    for k in 0..fused {
        text.push_str(&format!(
            "%f{k} (p: f32[4]) -> f32[4] {{\n  %p = f32[4] parameter(0)\n  ROOT %r = f32[4] negate(%p)\n}}\n\n"
        ));
    }
    text.push_str("%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n\n");
    text.push_str("ENTRY %main (x: f32[4]) -> f32[] {\n  %x = f32[4] parameter(0)\n");
    for k in 0..fused {
        text.push_str(&format!(
            "  %u{k} = f32[4] fusion(%x), kind=kLoop, calls=%f{k}\n"
        ));
    }
    text.push_str("  %z = f32[] constant(0)\n  ROOT %y = f32[] reduce(%u0, %z), dimensions={0}, to_apply=%add\n}\n");
    let snapshot = hlo(&text);
    let outline = ide::navigation::outline(&snapshot);
    let listed: Vec<&str> = outline[0]
        .children
        .as_ref()
        .unwrap()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(listed.len(), ide::navigation::OUTLINE_COMPUTATIONS);
    assert_eq!(&listed[listed.len() - 2..], ["add", "main"]);
    assert_eq!(listed[0], "f0");
}
