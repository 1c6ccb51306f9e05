//! End-to-end through the language server: a dump with an XProf logdir beside it
//! (`tests/data/profiles/`) shows measured time with no setting: the profile is found
//! and read in the background with `$/progress`, then a `workspace/codeLens/refresh`;
//! the lenses above the measured instructions, the hover's line, `hlo-lsp/hottest`
//! and the graph's nodes say it. The `profile` setting and `hlo-lsp.loadProfile` name
//! one elsewhere; bad profiles (truncated, corrupt, of another program, missing) are
//! one message or one error, and the server keeps answering and exits cleanly.

use crate::lsp_support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_support::{lens_titles_when, position_of, repo_file, Client};
use serde_json::{json, Value};

const ATTENTION: &str = "tests/data/profiles/attention";
const DUMP: &str = "module_0006.jit_attention.cpu_after_optimizations.txt";

fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// A server whose client takes code lens refreshes and progress, with `options`.
fn start(options: Value) -> Client {
    let mut client = Client::spawn(&[]);
    client.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": null,
            "capabilities": {
                "window": {"workDoneProgress": true},
                "workspace": {"codeLens": {"refreshSupport": true}},
            },
            "initializationOptions": options,
        }),
    );
    client.notify("initialized", json!({}));
    client
}

/// The profile is joined for the whole round: some lens says a measurement and no
/// kernel lens resolved before the join still says the estimate alone (a round that
/// straddles the join mixes both).
fn measured(titles: &[(u64, String)]) -> bool {
    let before_join = |t: &str| t.starts_with("≈ ") && !t.ends_with("no event in the profile");
    titles.iter().any(|(_, t)| t.starts_with("measured "))
        && !titles.iter().any(|(_, t)| before_join(t))
}

fn line_of(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u64
}

/// A scratch folder holding `dump/`, a copy of the attention dump with no
/// profile beside it (the server, with no workspace folder, looks in `dump/` only).
fn lone_dump(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hlo-lsp-profile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("dump")).unwrap();
    std::fs::copy(
        repo_file(&format!("{ATTENTION}/{DUMP}")),
        dir.join("dump").join(DUMP),
    )
    .unwrap();
    dir
}

fn run_folder(sample: &str) -> PathBuf {
    let runs = PathBuf::from(repo_file(&format!("{sample}/profile/plugins/profile")));
    std::fs::read_dir(runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

#[test]
fn a_logdir_beside_the_dump_gives_measured_lenses_hover_ranking_and_graph() {
    let path = PathBuf::from(repo_file(&format!("{ATTENTION}/{DUMP}")));
    let text = std::fs::read_to_string(&path).unwrap();
    let document = file_uri(&path);
    let mut client = start(json!({}));
    client.open(&document, &text);
    let lenses = lens_titles_when(&mut client, &document, measured);
    // Read in the background with progress, then the lenses were asked for again.
    let deadline = Instant::now() + Duration::from_secs(30);
    while client.queued("workspace/codeLens/refresh").is_empty() {
        assert!(Instant::now() < deadline, "no workspace/codeLens/refresh");
        client.next_response(Duration::from_millis(100));
    }
    let begun = client.notification("$/progress", |p| {
        p["value"]["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("Reading profile vm.xplane.pb"))
    });
    assert_eq!(begun["value"]["kind"], "begin");
    let at = |needle: &str| {
        let line = line_of(&text, needle);
        lenses
            .iter()
            .find(|(l, _)| *l == line)
            .map(|(_, t)| t.clone())
            .unwrap_or_default()
    };
    // A CPU dump: measured, no GPU estimate (no GPU was chosen).
    assert_eq!(
        at("%subtract_exponential_fusion = "),
        "measured 2.38 µs · 7.7% of step"
    );
    assert_eq!(at("%ynn_fusion.1 = "), "measured 22.12 µs · 71% of step");
    let hover = client.hover_markdown(
        &document,
        position_of(&text, "%subtract_exponential_fusion = ", 1),
    );
    assert!(
        hover.contains("**Measured** 2.38 µs · 7.7% of step"),
        "{hover}"
    );
    assert_eq!(hover.matches("**Measured**").count(), 1);
    let hottest = client.result(
        "hlo-lsp/hottest",
        json!({"textDocument": {"uri": document}, "limit": 3}),
    );
    assert!(hottest["profile"]["file"]
        .as_str()
        .unwrap()
        .ends_with("vm.xplane.pb"));
    let module = &hottest["modules"][0];
    assert_eq!(module["module"], "jit_attention(6)");
    assert_eq!(module["executions"], 5);
    let rows = module["instructions"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["ynn_fusion.1", "ynn_fusion", "subtract_exponential_fusion"]
    );
    for r in rows {
        let line = r["range"]["start"]["line"].as_u64().unwrap() as usize;
        let name = r["name"].as_str().unwrap();
        assert!(text.lines().nth(line).unwrap().contains(name), "{r}");
        assert!(r["estimate_us"].is_null());
    }
    let graph = client.result(
        "hlo-lsp/graph",
        json!({"textDocument": {"uri": document},
               "position": position_of(&text, "%subtract_exponential_fusion = ", 1)}),
    );
    let node = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "subtract_exponential_fusion")
        .cloned()
        .unwrap();
    assert!(
        (node["measured_us"].as_f64().unwrap() - 2.38).abs() < 0.01,
        "{node}"
    );
    assert!(graph["dot"].as_str().unwrap().contains("measured 2.38 µs"));
    assert!(graph["heat"].is_array());
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn on_a_chosen_gpu_the_lens_has_the_estimate_per_step_beside() {
    let path = PathBuf::from(repo_file(&format!("{ATTENTION}/{DUMP}")));
    let text = std::fs::read_to_string(&path).unwrap();
    let document = file_uri(&path);
    let mut client = start(json!({"coalescing": {"device": "a6000"}}));
    client.open(&document, &text);
    let lenses = lens_titles_when(&mut client, &document, measured);
    let line = line_of(&text, "%subtract_exponential_fusion = ");
    let title = &lenses.iter().find(|(l, _)| *l == line).unwrap().1;
    assert!(
        title.starts_with("measured 2.38 µs · 7.7% of step (est. ") && title.ends_with(" ns)"),
        "{title}"
    );
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn the_setting_and_the_command_load_a_profile_from_elsewhere() {
    let dir = lone_dump("elsewhere");
    let path = dir.join("dump").join(DUMP);
    let text = std::fs::read_to_string(&path).unwrap();
    let document = file_uri(&path);
    // The setting names the logdir (the dump's folder has none).
    let logdir = repo_file(&format!("{ATTENTION}/profile"));
    let mut client = start(json!({"profile": logdir}));
    client.open(&document, &text);
    lens_titles_when(&mut client, &document, measured);
    assert!(client.shutdown_and_exit().success());

    // The command, on a server with nothing found: the trace of the same run.
    let mut client = start(json!({}));
    client.open(&document, &text);
    let hottest = client.result(
        "hlo-lsp/hottest",
        json!({"textDocument": {"uri": document}}),
    );
    assert!(hottest["profile"].is_null());
    assert!(
        hottest["message"]
            .as_str()
            .unwrap()
            .contains("no XProf profile"),
        "{hottest}"
    );
    let trace = run_folder(ATTENTION).join("vm.trace.json.gz");
    let loaded = client.result(
        "workspace/executeCommand",
        json!({"command": "hlo-lsp.loadProfile",
               "arguments": [{"path": trace.display().to_string(), "uri": document}]}),
    );
    assert_eq!(loaded["format"], "trace.json.gz");
    assert_eq!(
        loaded["documents"][0]["modules"][0]["module"],
        "jit_attention"
    );
    let lenses = lens_titles_when(&mut client, &document, measured);
    let line = line_of(&text, "%subtract_exponential_fusion = ");
    assert!(lenses
        .iter()
        .any(|(l, t)| *l == line && t.starts_with("measured 2.38 µs")));
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn bad_profiles_are_one_message_or_one_error_and_the_server_keeps_working() {
    let dir = lone_dump("bad");
    let path = dir.join("dump").join(DUMP);
    let text = std::fs::read_to_string(&path).unwrap();
    let document = file_uri(&path);
    let gz = std::fs::read(run_folder(ATTENTION).join("vm.trace.json.gz")).unwrap();
    let cut = dir.join("cut.trace.json.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    // The setting names a truncated trace: one message, however often it is asked.
    let mut client = start(json!({"profile": cut.display().to_string()}));
    client.open(&document, &text);
    // The editor asks for the lenses on opening: the profile is looked for then.
    client.result(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": document}}),
    );
    let shown = client.notification("window/showMessage", |_| true);
    let message = shown["message"].as_str().unwrap();
    assert!(
        message.contains("the gzip stream ends early (truncated?)"),
        "{message}"
    );
    for _ in 0..3 {
        client.result(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": document}}),
        );
    }
    // Still answering.
    let hover = client.hover_markdown(
        &document,
        position_of(&text, "%subtract_exponential_fusion = ", 1),
    );
    assert!(hover.contains("subtract_exponential_fusion"), "{hover}");
    // The command: each bad profile is the command's error (RequestFailed).
    let other = repo_file("tests/data/profiles/fori_cumulative/profile");
    let empty = dir.join("empty-logdir/plugins/profile/2026_01_01_00_00_00");
    std::fs::create_dir_all(&empty).unwrap();
    let corrupt = dir.join("corrupt.xplane.pb");
    let pb = std::fs::read(run_folder(ATTENTION).join("vm.xplane.pb")).unwrap();
    std::fs::write(&corrupt, &pb[..pb.len() / 3]).unwrap();
    let cases: [(String, &str); 5] = [
        (
            other,
            "no event names an instruction of jit_attention; the profile holds jit_fori_cumulative(6)",
        ),
        (cut.display().to_string(), "truncated"),
        (corrupt.display().to_string(), "not a readable XSpace protobuf"),
        (
            dir.join("empty-logdir").display().to_string(),
            "no profile in it",
        ),
        ("/nowhere/at/all".to_string(), "cannot read /nowhere/at/all"),
    ];
    for (profile, says) in cases {
        let answer = client.request(
            "workspace/executeCommand",
            json!({"command": "hlo-lsp.loadProfile", "arguments": [{"path": profile}]}),
        );
        let error = &answer["error"];
        assert_eq!(error["code"], -32803, "{profile}: {answer}");
        let text = error["message"].as_str().unwrap();
        assert!(text.contains(says), "{profile}: {text}");
        assert_eq!(text.lines().count(), 1, "{text}");
    }
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "hlo-lsp.loadProfile", "arguments": [42]}),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // The one message, once.
    client.next_response(Duration::from_millis(300));
    assert!(client.queued("window/showMessage").is_empty());
    let hover = client.hover_markdown(&document, position_of(&text, "%ynn_fusion.1 = ", 1));
    assert!(hover.contains("ynn_fusion.1"), "{hover}");
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn a_corrupt_profile_near_the_dump_is_said_once() {
    let dir = lone_dump("near").join("dump");
    let run = dir.join("profile/plugins/profile/2026_01_01_00_00_00");
    std::fs::create_dir_all(&run).unwrap();
    let pb = std::fs::read(run_folder(ATTENTION).join("vm.xplane.pb")).unwrap();
    std::fs::write(run.join("vm.xplane.pb"), &pb[..pb.len() / 3]).unwrap();
    let path = dir.join(DUMP);
    let text = std::fs::read_to_string(&path).unwrap();
    let document = file_uri(&path);
    let mut client = start(json!({}));
    client.open(&document, &text);
    client.result(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": document}}),
    );
    let shown = client.notification("window/showMessage", |_| true);
    let message = shown["message"].as_str().unwrap();
    assert!(message.contains("cannot be read"), "{message}");
    assert!(
        message.contains("not a readable XSpace protobuf"),
        "{message}"
    );
    let lenses = client.result(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": document}}),
    );
    assert!(lenses.is_array());
    assert!(client.shutdown_and_exit().success());
}
