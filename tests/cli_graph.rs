//! End-to-end tests of `hlo-lsp graph` through the built binary: the JSON points at
//! the instructions' lines, the DOT is read by Graphviz when it is installed, the
//! SVG is well-formed XML, and bad names are errors with exit status 2.

use crate::cli_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cli_support::{run, stderr, stdout};
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data")
        .join(rel)
}

fn softmax() -> String {
    data("jax/softmax.after.hlo").to_string_lossy().into_owned()
}

/// Runs `program args` with `input` on stdin; `None` when it is not installed.
fn pipe(program: &str, args: &[&str], input: &str) -> Option<std::process::Output> {
    use std::io::Write;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    child.wait_with_output().ok()
}

#[test]
fn json_nodes_point_at_their_instructions() {
    let file = softmax();
    let o = run(&[
        "graph",
        &file,
        "--instruction",
        "subtract_exponential_fusion",
        "--radius",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let nodes = v["nodes"].as_array().unwrap();
    assert!(nodes.len() > 5);
    for n in nodes.iter().filter(|n| n["kind"] != "more") {
        let line = n["range"]["line"].as_u64().unwrap() as usize;
        let name = n["name"].as_str().unwrap();
        assert!(lines[line - 1].contains(name), "{name} not on line {line}");
    }
    let edges = v["edges"].as_array().unwrap();
    assert!(edges.iter().any(|e| e["class"] == "reduction"));
    assert_eq!(
        v["focus"],
        nodes
            .iter()
            .find(|n| n["name"] == "subtract_exponential_fusion")
            .unwrap()["id"]
    );
}

#[test]
fn dot_is_read_by_graphviz() {
    let o = run(&[
        "graph",
        &softmax(),
        "--format",
        "dot",
        "--open-fusions",
        "all",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dot = stdout(&o);
    assert!(dot.starts_with("digraph hlo {") && dot.trim_end().ends_with('}'));
    assert!(dot.contains("subgraph \"cluster_"), "fusions open: {dot}");
    match pipe("dot", &["-Tsvg"], &dot) {
        Some(out) => {
            assert!(
                out.status.success(),
                "graphviz: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(String::from_utf8_lossy(&out.stdout).contains("<svg"));
        }
        None => eprintln!("graphviz is not installed: the DOT was only checked for its frame"),
    }
}

#[test]
fn svg_is_well_formed_xml() {
    let o = run(&[
        "graph",
        &softmax(),
        "--instruction",
        "reduce_divide_fusion",
        "--format",
        "svg",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = stdout(&o);
    assert!(svg.starts_with("<svg") && svg.contains("class=\"legend\""));
    let check = "import sys, xml.dom.minidom as m; d = m.parseString(sys.stdin.read()); print(len(d.getElementsByTagName('g')))";
    match pipe("python3", &["-c", check], &svg) {
        Some(out) => {
            assert!(
                out.status.success(),
                "not XML: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let groups: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
            assert!(groups > 5, "{groups} groups");
        }
        None => assert_eq!(
            svg.matches("<g ").count() + svg.matches("<g>").count(),
            svg.matches("</g>").count()
        ),
    }
}

#[test]
fn unknown_names_are_errors() {
    let o = run(&["graph", &softmax(), "--instruction", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no instruction named nope"),
        "{}",
        stderr(&o)
    );
    let o = run(&["graph", &softmax(), "--computation", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no computation named nope"));
}

/// Nodes weigh what they hold: every instruction node has its output's bytes; a
/// CPU dump's kernels get a time only when a GPU is chosen (as the cost lenses),
/// and then the SVG's boxes say it (`≈ … · … KiB`); XLA:CPU's own kernels never.
#[test]
fn a_cpu_dump_is_timed_only_on_a_chosen_gpu() {
    let dump = data(
        "memory/transpose_at_peak/module_0095.jit_transpose_at_peak.cpu_after_optimizations.txt",
    );
    let dump = dump.to_string_lossy();
    let nodes = |extra: &[&str]| -> Vec<Value> {
        let mut args = vec!["graph", &dump];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["nodes"].as_array().unwrap().clone()
    };
    let plain = nodes(&[]);
    assert!(
        plain.iter().all(|n| n.get("time_us").is_none()),
        "{plain:?}"
    );
    let x = plain.iter().find(|n| n["name"] == "x.1").unwrap();
    assert_eq!(x["bytes"], 8 * 512 * 512 * 4, "f32[8,512,512]");
    let chosen = nodes(&["--device", "h100"]);
    let fusion = chosen
        .iter()
        .find(|n| n["name"] == "copy_bitcast_fusion")
        .unwrap();
    assert!(fusion["time_us"].as_f64().unwrap() > 0.0, "{fusion}");
    // XLA:CPU's own kernels (XNNPACK's `__ynn_fusion`) have no GPU model: no time.
    let ynn = chosen.iter().find(|n| n["name"] == "ynn_fusion.1").unwrap();
    assert!(ynn.get("time_us").is_none(), "{ynn}");
    assert!(chosen
        .iter()
        .filter(|n| n["kind"] == "parameter")
        .all(|n| n.get("time_us").is_none()));
    let o = run(&["graph", &dump, "--device", "h100", "--format", "svg"]);
    let svg = stdout(&o);
    assert!(svg.contains("≈ ") && svg.contains(" · 8.0 MiB"), "{svg}");
}

/// A StableHLO file: `@main`'s ops named by their SSA values, at their lines of
/// the `.mlir` text, grouped by the name scopes of their locations (JAX's
/// `jax.named_scope`s); folded, one node per scope with the maps on the edges
/// between them; DOT and SVG draw the same; `--computation` is refused in one line.
#[test]
fn stablehlo_ops_are_grouped_by_name_scope() {
    let file = data("stablehlo/scopes.mlir").to_string_lossy().into_owned();
    let text = std::fs::read_to_string(&file).unwrap();
    let o = run(&["graph", &file]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let nodes = v["nodes"].as_array().expect("nodes");
    let node = |name: &str| {
        nodes
            .iter()
            .find(|n| n["name"] == name && n["kind"] != "parameter")
            .unwrap_or_else(|| panic!("no node {name}: {nodes:?}"))
    };
    let divide = node("%6");
    assert_eq!(divide["group"], "ns:jit(scoped_mlp)/layer2/norm");
    let line = divide["range"]["line"].as_u64().expect("a line") as usize;
    assert!(
        text.lines()
            .nth(line - 1)
            .unwrap()
            .contains("%6 = stablehlo.divide"),
        "line {line}"
    );
    let scope = node("jit(scoped_mlp)/layer1");
    assert_eq!(
        (scope["kind"].as_str(), scope["open"].as_bool()),
        (Some("namespace"), Some(true))
    );
    let o = run(&["graph", &file, "--namespaces", "folded"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let edges = v["edges"].as_array().expect("edges");
    let between = edges
        .iter()
        .find(|e| {
            e["from"] == "ns:jit(scoped_mlp)/layer1" && e["to"] == "ns:jit(scoped_mlp)/layer2"
        })
        .unwrap_or_else(|| panic!("no edge between the layers: {edges:?}"));
    assert_eq!(between["map"], "(d0, d1)[s0] -> (d0, s0)");
    for format in ["dot", "svg"] {
        let o = run(&["graph", &file, "--format", format]);
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("jit(scoped_mlp)/layer2/norm"),
            "{format}"
        );
    }
    let o = run(&["graph", &file, "--computation", "main"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}
