//! End-to-end tests of `hlo-lsp history` through the real binary, on the
//! pass-by-pass dumps of `tests/data/pass_dumps` (see its README): the story of an
//! instruction, the JSON, choosing a module, and bad input.

use crate::cli_support;

use cli_support::{run, stderr, stdout, temp_file};

fn dumps(program: &str) -> String {
    format!(
        "{}/../tests/data/pass_dumps/{program}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn the_story_of_instructions_fused_away_and_changed() {
    let dir = dumps("mlp_train_step");
    let mut text = String::new();
    for name in ["max.1", "dot.1", "w1.1"] {
        let out = run(&["history", &dir, "--instruction", name]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        text.push_str(&stdout(&out));
    }
    insta::assert_snapshot!(text);
}

#[test]
fn json_lists_snapshots_then_instructions() {
    let out = run(&[
        "history",
        &dumps("mlp_train_step"),
        "--instruction",
        "max.1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let module = text.find("\"module\"").unwrap();
    let snapshots = text.find("\"snapshots\"").unwrap();
    let instructions = text.find("\"instructions\"").unwrap();
    assert!(module < snapshots && snapshots < instructions, "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["snapshots"].as_array().unwrap().len(), 29);
    insta::assert_snapshot!(text);
}

#[test]
fn the_largest_module_unless_one_is_chosen() {
    let step = format!("{}/../tests/data/dumps/step", env!("CARGO_MANIFEST_DIR"));
    let mut dir = None;
    for source in [step, dumps("scan")] {
        for entry in std::fs::read_dir(source).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let copy = temp_file("cli-history", &name, std::fs::read(&path).unwrap());
            dir = copy.parent().map(|d| d.to_path_buf());
        }
    }
    let dir = dir.unwrap();
    let dir = dir.to_str().unwrap();
    let out = run(&["history", dir]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains(
            "2 modules; showing jit_step (module_0004), the largest; choose with --module"
        ),
        "{}",
        stderr(&out)
    );
    let out = run(&["history", dir, "--module", "jit_scan"]);
    assert!(
        stdout(&out).starts_with("module jit_scan (module_0038): 32 snapshots"),
        "{}",
        stdout(&out)
    );
    let out = run(&["history", dir, "--module", "4", "--instruction", "gt.1"]);
    assert!(
        stdout(&out).contains("%gt.1 (compare) in %region_0.4: in the input (before optimizations)\n  fused into %compare_convert_fusion by fusion (step 1)\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    for (args, message) in [
        (vec!["history", "/no/such/dir"], "cannot read /no/such/dir"),
        (
            vec!["history", &dumps("scan"), "--module", "jit_nope"],
            "no module jit_nope in",
        ),
        (
            vec!["history", &dumps("scan"), "--instruction", "nope"],
            "no instruction %nope in module jit_scan",
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
    let empty = temp_file("cli-history-empty", "notes.txt", "no dumps");
    let out = run(&["history", empty.parent().unwrap().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no XLA HLO dumps"),
        "{}",
        stderr(&out)
    );
    // One dump file, not its directory: what to give instead, in one line.
    let out = run(&["history", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is a file: history reads an XLA dump directory")
            && stderr(&out).contains("--xla_dump_hlo_pass_re=.*"),
        "{}",
        stderr(&out)
    );
}

/// The whole module's text tells what the passes did and counts, in one closing
/// line, what the input already had and no pass touched; together they are every
/// instruction of the JSON.
#[test]
fn untouched_input_instructions_are_counted_not_told() {
    let dir = dumps("transformer_block");
    let text = stdout(&run(&["history", &dir]));
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["history", &dir, "--json"]))).unwrap();
    let instructions = json["instructions"].as_array().unwrap();
    let quiet = instructions
        .iter()
        .filter(|i| {
            i["introduced_by"] == "before_optimizations"
                && i["changed_by"].as_array().unwrap().is_empty()
                && i["removed_by"].is_null()
        })
        .count();
    assert!(quiet > 0);
    let told = text.lines().filter(|l| l.starts_with('%')).count();
    assert_eq!(told + quiet, instructions.len());
    assert!(
        text.ends_with(&format!(
            "{quiet} more in the input (before optimizations), unchanged to the end \
             (--instruction NAME tells one, --json lists all)\n"
        )),
        "{text}"
    );
    assert!(!text.contains("in the input (before optimizations), unchanged to the end\n%"));
}
