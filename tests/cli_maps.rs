//! End-to-end tests of `hlo-lsp maps` through the built binary: the README's
//! example, JSON shape, directions, errors, and every real module of the test data
//! (XLA samples and JAX dumps) with `--all`: no failure, no panic, and no `unknown`
//! except for ops that have no defined indexing. `check` must not crash on them.

use crate::cli_support;

use std::path::{Path, PathBuf};

use cli_support::{run, stderr, stdout, temp_file};
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// Reasons that mean "this opcode has no defined indexing" (not a gap).
const NO_INDEXING: &[&str] = &[
    "custom-call",
    "control flow",
    "linear-algebra",
    "I/O ops",
    "random state",
    "replica computing",
    "dynamic shapes",
    "asynchronous",
    "unbounded dynamic",
];

#[test]
fn softmax_example_prints_the_row_and_element_maps() {
    let example = data("examples/softmax.hlo");
    let o = run(&["maps", example.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text: String = stdout(&o).chars().filter(|c| !c.is_whitespace()).collect();
    assert!(text.contains("operandid=0"));
    assert!(
        text.contains("(d0,d1,d2)->(d0,d1,d2),domain:d0in[0,1],d1in[0,64],d2in[0,124]"),
        "{text}"
    );
    assert!(
        text.contains(
            "(d0,d1,d2)[s0]->(d0,d1,s0),domain:d0in[0,1],d1in[0,64],d2in[0,124],s0in[0,124]"
        ),
        "{text}"
    );
}

/// The README's StableHLO capture is what the binary prints: each `$ hlo-lsp ...`
/// block's lines (up to a `...`) are the command's output, run from the repository.
#[test]
fn readme_stablehlo_capture_is_real_output() {
    let readme = std::fs::read_to_string(data("README.md")).expect("README");
    let section = readme
        .split("### StableHLO, as JAX lowers a program")
        .nth(1)
        .and_then(|s| s.split("```").nth(1))
        .expect("the capture");
    let mut commands = 0;
    for block in section.split("$ hlo-lsp ").skip(1) {
        let (command, shown) = block.split_once('\n').unwrap_or((block, ""));
        let args: Vec<&str> = command.split_whitespace().collect();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
            .args(&args)
            .current_dir(data(""))
            .output()
            .expect("run hlo-lsp");
        let out = stdout(&o);
        // The shown lines appear in order (`...` skips some).
        let mut rest = out.as_str();
        for line in shown.lines().filter(|l| *l != "...") {
            let at = rest
                .find(line)
                .unwrap_or_else(|| panic!("`{command}` does not print `{line}`:\n{out}"));
            rest = &rest[at + line.len()..];
        }
        commands += 1;
    }
    assert_eq!(commands, 2);
}

#[test]
fn json_has_the_documented_shape() {
    let example = data("examples/softmax.hlo");
    let o = run(&["maps", "--json", example.to_str().unwrap()]);
    assert!(o.status.success());
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let instr = &v["instructions"][0];
    assert_eq!(instr["name"], "fusion");
    assert_eq!(instr["computation"], "main");
    assert_eq!(instr["opcode"], "fusion");
    assert_eq!(instr["output_id"], 0);
    let operand = &instr["operands"][0];
    assert_eq!(operand["index"], 0);
    assert_eq!(operand["name"], "x");
    assert_eq!(operand["maps"].as_array().unwrap().len(), 2);
    let u = &operand["utilization"];
    assert_eq!(u["fraction"], 1.0);
    assert_eq!(u["exact"], true);
    // Each element is read once directly and 125 times through the row reductions... per map.
    assert!(u["multiplicity"].as_f64().unwrap() > 1.0);
}

#[test]
fn input_to_output_lists_outputs() {
    let example = data("examples/softmax.hlo");
    let o = run(&[
        "maps",
        "--json",
        "--direction",
        "input-to-output",
        "--operand",
        "0",
        example.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let outputs = v["instructions"][0]["outputs"].as_array().expect("outputs");
    assert_eq!(outputs.len(), 1);
    assert!(!outputs[0]["maps"].as_array().unwrap().is_empty());
}

#[test]
fn floordiv_spelling_and_instruction_selection() {
    let f = data("tests/data/samples/xla/xla__tools__print_indexing_test.hlo");
    let o = run(&["maps", "--all", "--div", "floordiv", f.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(!stdout(&o).contains(" / "));
}

#[test]
fn errors_are_one_line_and_non_zero() {
    let o = run(&["maps", "/nonexistent/file.hlo"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let example = data("examples/softmax.hlo");
    let o = run(&[
        "maps",
        "--instruction",
        "no_such_instruction",
        example.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no_such_instruction"));
    let file = temp_file("cli-maps", "not-hlo.txt", "this is not HLO at all\n");
    let o = run(&["maps", file.to_str().unwrap()]);
    assert!(!o.status.success());
    assert_ne!(o.status.code(), Some(101), "panicked");
}

fn real_modules() -> Vec<PathBuf> {
    let mut files = vec![];
    for dir in ["tests/data/samples/xla", "tests/data/jax"] {
        for e in std::fs::read_dir(data(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "hlo") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 20);
    files
}

#[test]
fn every_real_module_maps_without_unknowns() {
    for f in real_modules() {
        for direction in ["output-to-input", "input-to-output"] {
            let o = run(&[
                "maps",
                "--all",
                "--json",
                "--direction",
                direction,
                f.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{}: {}", f.display(), stderr(&o));
            let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
            let key = if direction == "output-to-input" {
                "operands"
            } else {
                "outputs"
            };
            for instr in v["instructions"].as_array().unwrap() {
                for e in instr[key].as_array().unwrap() {
                    if let Some(reason) = e["unknown"].as_str() {
                        // Input to output: gather and all-gather depend on values/replicas;
                        // a few directions are not modelled yet (reported as such).
                        let allowed = NO_INDEXING.iter().any(|r| reason.contains(r))
                            || (direction == "input-to-output"
                                && (reason.contains("gather") || reason.contains("not modelled")));
                        assert!(
                            allowed,
                            "{}: {} ({direction}): unknown: {reason}",
                            f.display(),
                            instr["name"]
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn check_does_not_crash_on_real_modules() {
    for f in real_modules() {
        let o = run(&["check", f.to_str().unwrap()]);
        assert!(
            matches!(o.status.code(), Some(0) | Some(1)),
            "{}: {:?}",
            f.display(),
            o.status
        );
    }
}

#[test]
fn gather_utilization_is_the_range_over_the_indices() {
    // Three rows of f32[16,8] by runtime indices: one row read three times (all
    // indices equal) up to three rows read once (all different), not a guess.
    let f = data("tests/data/jax/gather.after.hlo");
    let o = run(&[
        "maps",
        "--json",
        "--instruction",
        "gather_bitcast_fusion",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let u = &v["instructions"][0]["operands"][0]["utilization"];
    assert_eq!(u["exact"], false, "{u}");
    assert_eq!(u["attained"], true, "{u}");
    assert_eq!(u["least"]["fraction"], 1.0 / 16.0, "{u}");
    assert_eq!(u["least"]["multiplicity"], 3.0, "{u}");
    assert_eq!(u["most"]["fraction"], 3.0 / 16.0, "{u}");
    assert_eq!(u["most"]["multiplicity"], 1.0, "{u}");
    // The indices themselves: each read by the 8 elements of its row.
    let u = &v["instructions"][0]["operands"][1]["utilization"];
    assert_eq!(u["exact"], true, "{u}");
    assert_eq!(u["multiplicity"], 8.0, "{u}");
}

#[test]
fn every_output_of_a_multi_output_fusion_is_printed_and_output_narrows() {
    let f = data("tests/data/samples/xla/xla__tools__print_indexing_test.hlo");
    let o = run(&["maps", f.to_str().unwrap()]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(
        text.contains("// fusion = fusion in main, output 0 of 2 (s32[1024])"),
        "{text}"
    );
    assert!(
        text.contains("// fusion = fusion in main, output 1 of 2 (s32[1024])"),
        "{text}"
    );
    let o = run(&["maps", "--output", "1", "--json", f.to_str().unwrap()]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let records = v["instructions"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["output_id"], 1);
    assert_eq!(
        records[0]["operands"][2]["maps"][0],
        "(d0) -> (d0),\ndomain:\nd0 in [0, 1023]"
    );
    let o = run(&["maps", "--json", f.to_str().unwrap()]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let ids: Vec<&Value> = v["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["output_id"])
        .collect();
    assert_eq!(ids, [&Value::from(0), &Value::from(1)]);
    // Output 0 does not read parameter 2: no map, the same as XLA's print_indexing.
    assert!(v["instructions"][0]["operands"][2]["maps"]
        .as_array()
        .unwrap()
        .is_empty());
    // From the fusion's outputs to an instruction inside it.
    let o = run(&[
        "maps",
        "--from-fusion",
        "--instruction",
        "add",
        f.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert!(
        text.contains(
            "// add in fused_computation, from output 0 (s32[1024]) of fusion %fusion\n  not read"
        ),
        "{text}"
    );
    assert!(
        text.contains("from output 1 (s32[1024]) of fusion %fusion\n  (d0) -> (d0),"),
        "{text}"
    );
    let o = run(&[
        "maps",
        "--from-fusion",
        "--instruction",
        "fusion",
        f.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("inside a fused computation"));
}

/// Reproducers of crashes (`tests/data/repro/`): every command ends with its
/// normal exit code, a diagnostic or `unknown indexing` naming why, never a
/// panic (101) or an abort by signal.
#[test]
fn recursive_and_broken_call_graphs_end_cleanly() {
    for (file, check_code) in [
        ("fusion_triton_self_call.hlo", 1),
        ("fusion_mutual_call.hlo", 1),
        ("tuple_root_undefined_operand.hlo", 1),
    ] {
        let path = data(&format!("tests/data/repro/{file}"));
        let path = path.to_str().unwrap();
        let check = run(&["check", path]);
        assert_eq!(check.status.code(), Some(check_code), "check {file}");
        let maps = run(&["maps", "--all", path]);
        assert_eq!(maps.status.code(), Some(0), "maps {file}: {maps:?}");
        let tiles = run(&["tiles", path]);
        assert!(
            matches!(tiles.status.code(), Some(0..=2)),
            "tiles {file}: {tiles:?}"
        );
    }
    let path = data("tests/data/repro/fusion_triton_self_call.hlo");
    let maps = stdout(&run(&["maps", "--all", path.to_str().unwrap()]));
    // XLA's text format has no room for the reason (the hover shows it).
    assert!(maps.contains("unknown indexing"), "{maps}");
}

/// `--instruction` targets come out in the order asked, also across modules (each
/// module's queries are answered in one batch).
#[test]
fn instructions_print_in_the_order_asked_across_modules() {
    let file = temp_file(
        "cli-maps",
        "two.hlo",
        "HloModule a\nENTRY ea {\n  p = f32[4] parameter(0)\n  ROOT na = f32[4] negate(p)\n}\n// -----\nHloModule b\nENTRY eb {\n  q = f32[4,2] parameter(0)\n  ROOT tb = f32[2,4] transpose(q), dimensions={1,0}\n}\n",
    );
    let path = file.to_str().unwrap();
    let out = run(&["maps", path, "--instruction", "tb", "--instruction", "na"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let headers: Vec<String> = stdout(&out)
        .lines()
        .filter(|l| l.starts_with("//"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        headers,
        [
            "// tb = transpose in eb, output 0",
            "// na = negate in ea, output 0"
        ]
    );
}

/// A fusion whose parameter 0 is read only by a custom-call (no known indexing),
/// parameter 1 by an add, and parameter 2 by nothing.
const UNKNOWN_READ: &str = "HloModule unknown_read

fused {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  p2 = f32[8] parameter(2)
  cc = f32[8] custom-call(p0), custom_call_target=\"foo\"
  ROOT add = f32[8] add(cc, p1)
}

ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  c = f32[8] parameter(2)
  ROOT fusion = f32[8] fusion(a, b, c), kind=kLoop, calls=fused
}
";

/// Issue 31: an operand of unknown indexing was `"maps": []` plus an `"unknown"` key,
/// which a reader of `maps` takes for "not read". Its own record says it now:
/// `"known": false, "maps": null`; an operand that is really not read has
/// `"known": true, "maps": []`.
#[test]
fn json_unknown_indexing_is_not_an_empty_map_list() {
    let f = temp_file("cli-maps", "unknown-read.hlo", UNKNOWN_READ);
    let o = run(&["maps", "--json", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let operands = v["instructions"][0]["operands"].as_array().unwrap();
    assert_eq!(operands.len(), 3);
    let unknown = &operands[0];
    assert_eq!(unknown["known"], false, "{unknown}");
    assert!(unknown["maps"].is_null(), "{unknown}");
    assert!(unknown["unknown"].as_str().unwrap().contains("custom-call"));
    assert!(unknown["known_maps"].is_array(), "{unknown}");
    let read = &operands[1];
    assert_eq!(read["known"], true, "{read}");
    assert_eq!(read["maps"].as_array().unwrap().len(), 1, "{read}");
    assert!(read.get("unknown").is_none(), "{read}");
    let unread = &operands[2];
    assert_eq!(unread["known"], true, "{unread}");
    assert_eq!(unread["maps"].as_array().unwrap().len(), 0, "{unread}");

    // The same rule for `--from-fusion`: the parameter read through the custom-call.
    let o = run(&[
        "maps",
        "--from-fusion",
        "--all",
        "--json",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let records = v["instructions"].as_array().unwrap();
    let record = |name: &str| records.iter().find(|r| r["name"] == name).unwrap().clone();
    let p0 = record("p0");
    assert_eq!(p0["known"], false, "{p0}");
    assert!(p0["maps"].is_null(), "{p0}");
    assert!(p0["unknown"].is_string(), "{p0}");
    let p1 = record("p1");
    assert_eq!(p1["known"], true, "{p1}");
    assert_eq!(p1["maps"].as_array().unwrap().len(), 1, "{p1}");
    let p2 = record("p2");
    assert_eq!(
        (p2["known"].clone(), p2["read"].clone()),
        (true.into(), false.into())
    );
    assert_eq!(p2["maps"].as_array().unwrap().len(), 0, "{p2}");
}

/// Issue 31: `maps --all --from-fusion` on a module without fusions said `--all` was
/// missing. It says there is no fusion, with the exit code of `maps` on a file with
/// nothing to analyze.
#[test]
fn from_fusion_all_without_fusions_says_there_is_none() {
    let f = temp_file(
        "cli-maps",
        "no-fusion.hlo",
        "HloModule m\n\nENTRY main {\n  a = f32[8] parameter(0)\n  ROOT n = f32[8] negate(a)\n}\n",
    );
    let o = run(&["maps", "--all", "--from-fusion", f.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("--all or") && !err.contains("needs"), "{err}");
    assert!(err.contains("no fusion"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let nothing = temp_file("cli-maps", "nothing.hlo", "HloModule m\n");
    let o = run(&["maps", nothing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// JAX's softmax as StableHLO: without `--instruction` the op `@main` returns, as
/// ENTRY's ROOT for HLO; ops are named by their SSA value, opcodes are HLO's.
#[test]
fn stablehlo_file_prints_the_maps_of_its_ops() {
    let file = data("tests/data/stablehlo/softmax.mlir");
    let o = run(&["maps", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("// %10 = divide in main, output 0\n"),
        "{out}"
    );
    assert!(out.contains("(d0, d1) -> (d0, d1)"), "{out}");
    let o = run(&[
        "maps",
        file.to_str().unwrap(),
        "--instruction",
        "%4",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let i = &v["instructions"][0];
    assert_eq!(i["name"], "%4");
    assert_eq!(i["opcode"], "broadcast");
    // `dims = [0, 1]` from 4x1 to 4x8: as XLA's builder, a reshape to 4 then a
    // broadcast along dimension 0.
    assert_eq!(i["operands"][0]["name"], "%4.reshape");
    let map = i["operands"][0]["maps"][0].as_str().unwrap_or_default();
    assert!(map.starts_with("(d0, d1) -> (d0)"), "{map}");
}

/// A dump's ENTRY ROOT is the tuple of its outputs: its maps (the default target)
/// only pass them through, and a note on stderr says where the kernels' maps
/// are. A named instruction, `--all`, or a root that is no tuple get no note.
#[test]
fn a_tuple_root_says_where_the_kernels_maps_are() {
    let dump = data("tests/data/bench/transformer.after.hlo");
    let dump = dump.to_str().unwrap();
    let o = run(&["maps", dump]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("// tuple.1 = tuple"),
        "{}",
        stdout(&o)
    );
    let note = stderr(&o);
    assert_eq!(note.lines().count(), 1, "{note}");
    assert!(
        note.contains("the ENTRY ROOT %tuple.1 is a tuple") && note.contains("--all"),
        "{note}"
    );
    let softmax = data("examples/softmax.hlo");
    for args in [
        vec!["maps", dump, "--all"],
        vec!["maps", dump, "--instruction", "tuple.1"],
        vec!["maps", softmax.to_str().unwrap()],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}
