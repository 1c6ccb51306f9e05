//! Reshape-chain findings through the built binary (`hlo-lsp check`), and the
//! library's fixes on the same file against hand-written expected texts.

use std::process::Command;

use hlo_lsp::model::parse_hlo;
use hlo_lsp::refactor::{diagnostics_of, rewrite::apply};

const CHAINS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/data/refactor/chains.hlo"
);

fn data(name: &str) -> String {
    let path = format!(
        "{}/../tests/data/refactor/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).expect("test data")
}

fn check(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
        .arg("check")
        .args(args)
        .output()
        .expect("run hlo-lsp");
    (out.status.success(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn check_reports_the_chains_as_hints_and_exits_zero() {
    let (ok, stdout) = check(&[CHAINS]);
    assert!(ok, "hints are not errors: {stdout}");
    let lines: Vec<String> = stdout
        .lines()
        .map(|l| l.strip_prefix(CHAINS).expect("file name first").to_string())
        .collect();
    assert_eq!(
        lines,
        vec![
            ":8:3: hint: these 2 instructions compose to a single reshape (f32[10,10,10]{2,1,0} -> f32[50,20]{1,0} -> f32[1000]{0}) [reshape-chain]",
            ":14:3: hint: these 2 instructions compose to the identity (f32[10,10,10]{2,1,0} -> f32[50,20]{1,0} -> f32[10,10,10]{2,1,0}): they can be removed [reshape-chain]",
            ":17:3: hint: `t` is a no-op transpose (f32[10,10,10]{2,1,0} -> f32[10,10,10]{2,1,0}, identity map): it can be removed [noop-reshape]",
        ]
    );
}

#[test]
fn check_json_carries_the_codes_and_ranges() {
    let (ok, stdout) = check(&["--json", CHAINS]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let found: Vec<(String, u64, u64, String)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["end_line"].as_u64().unwrap(),
                d["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expect =
        |code: &str, line, end_line| (code.to_string(), line, end_line, "hint".to_string());
    assert_eq!(
        found,
        vec![
            expect("reshape-chain", 8, 9),
            expect("reshape-chain", 14, 15),
            expect("noop-reshape", 17, 17),
        ]
    );
}

#[test]
fn fixes_give_the_expected_files_and_those_check_clean_of_them() {
    let text = data("chains.hlo");
    let found = diagnostics_of(&text);
    assert_eq!(found.len(), 3);
    let expectations = [
        (0, "chains.reshape-fixed.hlo"),
        (1, "chains.identity-fixed.hlo"),
    ];
    for (k, file) in expectations {
        let fixed = apply(&text, &found[k].fixes[0].edits);
        assert_eq!(fixed, data(file), "fix {}", found[k].fixes[0].title);
        assert!(parse_hlo(&fixed).diagnostics.is_empty());
        // The fixed chain is gone; the two other findings remain.
        assert_eq!(diagnostics_of(&fixed).len(), 2);
    }
    // Applying all three in turn leaves nothing to fix and a clean `check`.
    let mut text = text;
    while let Some(d) = diagnostics_of(&text).into_iter().next() {
        text = apply(&text, &d.fixes[0].edits);
    }
    assert!(parse_hlo(&text).diagnostics.is_empty());
    assert!(!text.contains("  %t = f32[10,10,10]"), "{text}");
    assert!(
        text.contains("%n = f32[10,10,10]{2,1,0} negate(%x)"),
        "{text}"
    );
    let dir = std::env::temp_dir().join(format!("hlo-lsp-refactor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fixed.hlo");
    std::fs::write(&path, &text).unwrap();
    let (ok, stdout) = check(&[path.to_str().unwrap()]);
    assert!(ok && stdout.is_empty(), "{stdout}");
}
