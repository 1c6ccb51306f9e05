//! End-to-end through the language server: the cost of every kernel as a code lens
//! (resolved when the editor shows it), the hover's cost line, and the ranked list of
//! the costliest kernels (`hlo-lsp/kernels`); a CPU dump only on a GPU the user chose.

use crate::lsp_support;

use lsp_support::{position_of, read_repo_file, uri, Client};
use serde_json::{json, Value};

const GPU_SAMPLE: &str = "tests/data/samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo";

fn lenses(client: &mut Client, document: &str) -> Vec<Value> {
    let found = client.result(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": document}}),
    );
    // Kernel lenses only: memory lenses (`peak ...`) are lsp_memory's.
    let memory = |l: &Value| {
        l["command"]["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("peak "))
    };
    found
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|l| !memory(l))
        .collect()
}

#[test]
fn every_kernel_has_a_lens_that_resolves_to_its_estimate() {
    let mut client = Client::start();
    let text = read_repo_file(GPU_SAMPLE);
    let document = uri("kernel_reuse.hlo");
    client.open(&document, &text);
    let found = lenses(&mut client, &document);
    assert!(!found.is_empty(), "the sample has kernels");
    // Memory lenses come with their titles; kernel lenses are resolved.
    let kernels = found.iter().filter(|l| {
        !l["command"]["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("peak "))
    });
    for lens in kernels {
        assert!(
            lens.get("command").is_none_or(Value::is_null),
            "unresolved: {lens}"
        );
        let resolved = client.result("codeLens/resolve", lens.clone());
        let title = resolved["command"]["title"].as_str().unwrap_or_default();
        assert!(
            title.starts_with("≈ ")
                && title.contains("-bound · reads ")
                && title.ends_with("(a6000)"),
            "{title}"
        );
        assert_eq!(resolved["range"], lens["range"]);
    }
    // The ranked list: costliest first, each with the range of its name.
    let ranked = client.result(
        "hlo-lsp/kernels",
        json!({"textDocument": {"uri": document}, "limit": 3}),
    );
    let kernels = ranked["kernels"].as_array().unwrap();
    assert_eq!(ranked["device"], "a6000");
    assert!(!kernels.is_empty() && kernels.len() <= 3);
    let times: Vec<f64> = kernels
        .iter()
        .map(|k| k["exec_time_us"].as_f64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    for k in kernels {
        let line = k["range"]["start"]["line"].as_u64().unwrap() as usize;
        let name = k["name"].as_str().unwrap();
        assert!(text.lines().nth(line).unwrap().contains(name), "{k}");
    }
    client.shutdown_and_exit();
}

#[test]
fn the_hover_of_a_fusion_says_what_it_costs() {
    let mut client = Client::start();
    let text = read_repo_file("examples/softmax.hlo");
    let document = uri("softmax.hlo");
    client.open(&document, &text);
    let hover = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": document}, "position": position_of(&text, "ROOT fusion", 6)}),
    );
    let value = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(value.contains("**Cost** ≈ "), "{value}");
    assert!(value.contains("memory-bound · reads "), "{value}");
    client.shutdown_and_exit();
}

#[test]
fn a_cpu_dump_has_lenses_only_on_a_chosen_gpu() {
    let text = read_repo_file("tests/data/bench/transformer.after.hlo");
    let document = uri("transformer.after.hlo");
    let mut client = Client::start();
    client.open(&document, &text);
    assert!(
        lenses(&mut client, &document).is_empty(),
        "a CPU dump is no GPU kernel graph"
    );
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"coalescing": {"device": "h100"}}}),
    );
    let found = lenses(&mut client, &document);
    assert!(!found.is_empty());
    // XLA:CPU's own kernels (`__ynn_fusion`) have no GPU model and say so; every
    // other kernel is costed as if compiled for the GPU chosen.
    let (mut costed, mut not_modelled) = (0, 0);
    for lens in found {
        let resolved = client.result("codeLens/resolve", lens);
        let title = resolved["command"]["title"].as_str().unwrap_or_default();
        if title.starts_with("not modelled: an XLA:CPU kernel (__ynn_fusion)") {
            not_modelled += 1;
        } else {
            assert!(title.ends_with("(as if compiled for h100)"), "{title}");
            costed += 1;
        }
    }
    assert!(
        costed > 0 && not_modelled > 0,
        "{costed} costed, {not_modelled} not modelled"
    );
    client.shutdown_and_exit();
}
