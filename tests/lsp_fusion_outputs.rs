//! Multi-output fusions end to end, through the real binary: for every multi-output
//! fusion in `tests/data` and constructed ones (outputs with different maps, an
//! instruction that feeds only the last output), the maps the hover, the whole-text
//! request (`hlo-lsp/fusionMaps`) and the inlay hints show from output k of the
//! fusion to each fused instruction, and the maps `hlo-lsp maps --from-fusion
//! --output k` prints, all read exactly the elements a point-by-point composition
//! of the per-op maps reads (per-op maps are checked against op semantics by
//! `server/tests/analysis_ops.rs`; the composition here enumerates points instead
//! of composing maps). For parameters the same must hold for `hlo-lsp maps
//! --instruction FUSION --output k`. No instruction that feeds an output is called
//! "not read", and `KNOWN EMPTY` never shows.

use crate::lsp_support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::Command;

use hlo_lsp::algebra::IndexingMap;
use hlo_lsp::analysis::{self, ops, view};
use lsp_support::{read_repo_file, repo_file, uri, Client};
use serde_json::{json, Value};

/// `(line, character)` of byte `offset` (the test texts are ASCII).
fn position(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let column = before.rsplit('\n').next().unwrap().chars().count();
    json!({"line": line, "character": column})
}

/// Every index of a box with these extents (row-major).
fn indices(extents: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![];
    if extents.iter().any(|&n| n <= 0) {
        return out;
    }
    let mut idx = vec![0i64; extents.len()];
    loop {
        out.push(idx.clone());
        let mut k = extents.len();
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < extents[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// Indices `map` reads at `at` (range variables enumerated; no runtime variables).
fn reads(map: &IndexingMap, at: &[i64]) -> BTreeSet<Vec<i64>> {
    let mut out = BTreeSet::new();
    if map.is_known_empty() {
        return out;
    }
    assert!(map.runtime_vars().is_empty(), "runtime variables: {map}");
    let extents: Vec<i64> = map
        .range_vars()
        .iter()
        .map(|v| v.bounds.hi - v.bounds.lo + 1)
        .collect();
    for r in indices(&extents) {
        let r: Vec<i64> = r
            .iter()
            .zip(map.range_vars())
            .map(|(x, v)| x + v.bounds.lo)
            .collect();
        if map.contains_point(at, &r, &[]) {
            if let Some(idx) = map.evaluate_at(at, &r, &[]) {
                out.insert(idx);
            }
        }
    }
    out
}

/// The brute-force side: which elements of which instruction one element of one
/// output of a fused computation reads, by evaluating every per-op map point by
/// point from the output down to the parameters.
struct Reference<'a> {
    c: &'a analysis::Computation,
    memo: HashMap<(usize, usize, Vec<i64>), Elements>,
}

/// Elements of instructions: `(instruction, index)`.
type Elements = BTreeSet<(usize, Vec<i64>)>;

impl Reference<'_> {
    /// `(instruction, index)` reached from element `idx` of output `tag` of `node`.
    fn reach(&mut self, node: usize, tag: usize, idx: &[i64]) -> Elements {
        let key = (node, tag, idx.to_vec());
        if let Some(r) = self.memo.get(&key) {
            return r.clone();
        }
        let n = &self.c.nodes[node];
        let mut out = BTreeSet::from([(node, idx.to_vec())]);
        if n.parameter_number.is_none() {
            let per_op = ops::output_to_input(&n.op, tag);
            let operand_tag = if n.op.opcode == "get-tuple-element" {
                n.op.attrs.tuple_index.unwrap_or(0) as usize
            } else {
                0
            };
            for (k, entry) in per_op.entries.iter().enumerate() {
                assert!(entry.unknown.is_none(), "{}: {:?}", n.name, entry.unknown);
                for m in &entry.maps {
                    for x in reads(&m.map, idx) {
                        out.extend(self.reach(n.operands[k], operand_tag, &x));
                    }
                }
            }
        }
        self.memo.insert(key, out.clone());
        out
    }
}

/// A few points of a box: all of them when small, else corners and a spread.
fn sample(extents: &[i64]) -> Vec<Vec<i64>> {
    let total: i64 = extents.iter().product();
    if total <= 64 {
        return indices(extents);
    }
    let mut out = vec![];
    for s in 0..12i64 {
        let mut rest = (s * 7919 + s * s * 104_729) % total;
        if s == 0 {
            rest = 0;
        }
        if s == 1 {
            rest = total - 1;
        }
        let mut idx = vec![0; extents.len()];
        for k in (0..extents.len()).rev() {
            idx[k] = rest % extents[k];
            rest /= extents[k];
        }
        out.push(idx);
    }
    out
}

/// How the hover writes one map set: a word, or map texts (one-line or wrapped).
#[derive(Clone, Debug)]
enum Shown {
    Identity,
    Scalar,
    Maps(Vec<String>),
    NotRead,
}

/// Expands `{0, 1, 2, 3}` (one varying constant of a map family) into the maps.
fn expand_family(text: &str) -> Vec<String> {
    let Some(open) = text.find('{') else {
        return vec![text.to_string()];
    };
    let close = open + text[open..].find('}').expect("family set closes");
    text[open + 1..close]
        .split(", ")
        .map(|v| format!("{}{}{}", &text[..open], v.trim(), &text[close + 1..]))
        .collect()
}

/// The text after `: ` in `label: rest`, without the utilization / warning suffix.
fn strip_suffix(rest: &str) -> &str {
    let rest = rest.split(" — ").next().unwrap();
    rest.split(" ⚠").next().unwrap().trim()
}

/// Parses what follows an item's label: `identity`, `scalar ...`, `` `map` ``, `not
/// read`, or nothing (the maps follow on indented lines / in fenced blocks).
fn parse_item(
    rest: Option<&str>,
    lines: &mut std::iter::Peekable<std::slice::Iter<'_, &str>>,
) -> Shown {
    if let Some(rest) = rest {
        let rest = strip_suffix(rest);
        if rest == "identity" {
            return Shown::Identity;
        }
        if rest.starts_with("scalar") {
            return Shown::Scalar;
        }
        if rest == "not read" {
            return Shown::NotRead;
        }
        if let Some(map) = rest.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
            return Shown::Maps(expand_family(map));
        }
        panic!("unexpected item text: {rest}");
    }
    let mut maps = vec![];
    while let Some(line) = lines.peek() {
        let t = line.trim();
        if t.starts_with("- ") || t.is_empty() || !line.starts_with("  ") {
            break;
        }
        lines.next();
        if t == "```" {
            let mut block = vec![];
            for l in lines.by_ref() {
                if l.trim() == "```" {
                    break;
                }
                block.push(l.trim().to_string());
            }
            maps.extend(expand_family(&block.join("\n")));
        } else if let Some(map) = t.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
            maps.extend(expand_family(map));
        } else {
            assert!(!t.starts_with('…'), "a cut list in the whole text: {t}");
        }
    }
    Shown::Maps(maps)
}

/// What follows a label (`, 4 maps: `...``, `: identity`, ` — utilization ...`): the
/// text after `: `, or `None` when the maps follow on their own lines.
fn inline_text(tail: &str) -> Option<&str> {
    let tail = match tail.strip_prefix(", ") {
        Some(t) => t
            .split_once(' ')
            .map_or("", |(_, rest)| rest.trim_start_matches("maps")),
        None => tail,
    };
    tail.strip_prefix(": ")
}

/// `0–3, 5` → [0, 1, 2, 3, 5].
fn parse_ranges(text: &str) -> Vec<usize> {
    let mut out = vec![];
    for part in text.split(", ") {
        match part.split_once('–') {
            Some((a, b)) => out.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out
}

/// The "From ... fusion" section of a hover: what each output shows (outputs not
/// listed are not read), and whether the summary cut some outputs.
fn fusion_section(hover: &str, output_count: usize) -> (BTreeMap<usize, Shown>, bool) {
    let lines: Vec<&str> = hover.lines().collect();
    let mut out = BTreeMap::new();
    let start = lines
        .iter()
        .position(|l| {
            l.starts_with("**From the output of fusion") || l.starts_with("**From fusion")
        })
        .unwrap_or_else(|| panic!("no fusion section in:\n{hover}"));
    let heading = lines[start];
    let mut rest = lines[start + 1..].iter().peekable();
    if output_count <= 1 {
        let after = heading
            .split_once("**")
            .unwrap()
            .1
            .split_once("**")
            .unwrap()
            .1;
        let shown = parse_item(inline_text(after), &mut rest);
        if !matches!(shown, Shown::NotRead) {
            out.insert(0, shown);
        }
        return (out, false);
    }
    if heading.ends_with(": not read") {
        return (out, false);
    }
    let mut cut = false;
    while let Some(line) = rest.next() {
        if line.is_empty() {
            break;
        }
        if line.starts_with("- …") {
            cut = true;
            continue;
        }
        let item = line.strip_prefix("- ").expect("an output item");
        let body = item
            .trim_start_matches("outputs ")
            .trim_start_matches("output ");
        let (ranges, after) = body.split_once(" (").expect("output numbers and shape");
        let tail = &after[after.find(')').expect("shape closes") + 1..];
        let inline = inline_text(tail);
        let shown = parse_item(inline, &mut rest);
        for k in parse_ranges(ranges) {
            out.insert(k, shown.clone());
        }
    }
    (out, cut)
}

/// The inlay-hint tooltip: maps per output (`From output k of the fusion ...`).
fn tooltip_maps(tooltip: &str) -> BTreeMap<usize, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut current: Option<usize> = None;
    let mut block: Option<Vec<String>> = None;
    for line in tooltip.lines() {
        if let Some(rest) = line.strip_prefix("From output ") {
            current = Some(rest.split(' ').next().unwrap().parse().unwrap());
            out.insert(current.unwrap(), vec![]);
        } else if line.starts_with("From the fusion output") {
            current = Some(0);
            out.insert(0, vec![]);
        } else if line == "```" {
            match block.take() {
                Some(b) => out.get_mut(&current.unwrap()).unwrap().push(b.join("\n")),
                None => block = Some(vec![]),
            }
        } else if let Some(b) = &mut block {
            b.push(line.to_string());
        }
    }
    out
}

/// Evaluates what the hover shows for one output at `at`.
fn shown_reads(shown: &Shown, at: &[i64], own: &[i64]) -> BTreeSet<Vec<i64>> {
    match shown {
        Shown::Identity => BTreeSet::from([at
            .iter()
            .zip(own)
            .map(|(&i, &n)| if n == 1 { 0 } else { i })
            .collect()]),
        Shown::Scalar => BTreeSet::from([vec![]]),
        Shown::NotRead => BTreeSet::new(),
        Shown::Maps(maps) => maps
            .iter()
            .flat_map(|m| {
                reads(
                    &IndexingMap::parse(m).unwrap_or_else(|e| panic!("{m}: {e:?}")),
                    at,
                )
            })
            .collect(),
    }
}

fn text_maps_reads(maps: &[String], at: &[i64]) -> BTreeSet<Vec<i64>> {
    shown_reads(&Shown::Maps(maps.to_vec()), at, &[])
}

fn cli(args: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
        .args(args)
        .output()
        .expect("run hlo-lsp");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// Every check above, for every multi-output fusion of `text` (saved at `path`).
fn check_file(name: &str, text: &str, path: &str) -> usize {
    let (file, modules) = view::parse(text);
    let mut client = Client::start();
    let document = uri(name);
    client.open(&document, text);
    let from_fusion = cli(&["maps", "--from-fusion", "--all", "--json", path]);
    let mut cli_maps: HashMap<(String, usize), (bool, Vec<String>)> = HashMap::new();
    for r in from_fusion["instructions"].as_array().unwrap() {
        let maps = r["maps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        cli_maps.insert(
            (
                r["name"].as_str().unwrap().to_string(),
                r["output_id"].as_u64().unwrap() as usize,
            ),
            (r["read"].as_bool().unwrap(), maps),
        );
    }
    let mut checked = 0;
    for (mi, m) in modules.iter().enumerate() {
        let model_module = &file.modules[mi];
        for (ci, c) in m.computations().enumerate() {
            let count = analysis::fusion::output_count(m, ci);
            let caller = m.computations().find_map(|cc| {
                cc.nodes
                    .iter()
                    .find(|n| n.op.opcode == "fusion" && n.called.first() == Some(&ci))
            });
            let Some(fusion) = caller else { continue };
            if count < 2 {
                continue;
            }
            // The fusion's own maps to its operands, per output.
            let per_output: Vec<Value> = (0..count)
                .map(|k| {
                    let v = cli(&[
                        "maps",
                        "--json",
                        "--instruction",
                        &fusion.name,
                        "--output",
                        &k.to_string(),
                        path,
                    ]);
                    v["instructions"][0]["operands"].clone()
                })
                .collect();
            let model_c = model_module.computation(hlo_lsp::model::ComputationId(ci as u32));
            let hints = client.result(
                "textDocument/inlayHint",
                json!({"textDocument": {"uri": document},
                       "range": {"start": position(text, model_c.range().start), "end": position(text, model_c.range().end)}}),
            );
            let hints = hints.as_array().cloned().unwrap_or_default();
            let root = c.root;
            let mut reference = Reference {
                c,
                memo: HashMap::new(),
            };
            for (i, node) in c.nodes.iter().enumerate() {
                let instruction = &model_c.instructions[i];
                if instruction.synthetic || i == root {
                    continue;
                }
                let at = json!({"textDocument": {"uri": document}, "position": position(text, model_c.abs(instruction.name_range).start + 1)});
                let hover = client.result("textDocument/hover", at.clone());
                let hover = hover["contents"]["value"].as_str().unwrap().to_string();
                let whole = client.result("hlo-lsp/fusionMaps", at);
                let whole = whole["contents"]["value"].as_str().unwrap().to_string();
                assert!(!hover.contains("KNOWN EMPTY"), "{hover}");
                let (summary, cut) = fusion_section(&hover, count);
                let (full, full_cut) = fusion_section(&whole, count);
                assert!(!full_cut, "{whole}");
                let hint = hints
                    .iter()
                    .find(|h| h["position"] == position(text, model_c.abs(instruction.range).end));
                let tooltip = hint.map(|h| tooltip_maps(h["tooltip"]["value"].as_str().unwrap()));
                if let (Some(h), Some(t)) = (hint, &tooltip) {
                    // The label: the first map, then `(+N)` for the other distinct maps.
                    let label = h["label"].as_str().unwrap();
                    assert!(!label.contains("KNOWN EMPTY"), "{h}");
                    let distinct: BTreeSet<&String> = t.values().flatten().collect();
                    let first = t.values().flatten().next().expect("a map in the tooltip");
                    let head = first
                        .split(", domain:")
                        .next()
                        .unwrap()
                        .split('\n')
                        .next()
                        .unwrap();
                    let head = head.trim_end_matches(',');
                    assert!(
                        label.starts_with(&head[..head.len().min(30)]),
                        "{label} vs {first}"
                    );
                    match distinct.len() {
                        1 => assert!(!label.contains("(+"), "{label}"),
                        n => assert!(
                            label.ends_with(&format!("(+{})", n - 1)),
                            "{label}: {distinct:?}"
                        ),
                    }
                }
                let own = node
                    .op
                    .shape
                    .output(0)
                    .map(|a| a.dims.clone())
                    .unwrap_or_default();
                for k in 0..count {
                    let (start, out) = analysis::fusion::output_start(m, ci, k).unwrap();
                    let out_dims = c.nodes[start].op.shape.output(out).unwrap().dims.clone();
                    let (cli_read, cli_k) = cli_maps[&(node.name.clone(), k)].clone();
                    let mut any = false;
                    for o in sample(&out_dims) {
                        let want: BTreeSet<Vec<i64>> = reference
                            .reach(start, out, &o)
                            .into_iter()
                            .filter(|(j, _)| *j == i)
                            .map(|(_, x)| x)
                            .collect();
                        any |= !want.is_empty();
                        let context = format!("{name}: {} from output {k} at {o:?}", node.name);
                        let full_k = full.get(&k).cloned().unwrap_or(Shown::NotRead);
                        assert_eq!(
                            shown_reads(&full_k, &o, &own),
                            want,
                            "whole text, {context}\n{whole}"
                        );
                        match summary.get(&k) {
                            Some(s) => assert_eq!(
                                shown_reads(s, &o, &own),
                                want,
                                "hover, {context}\n{hover}"
                            ),
                            None => assert!(
                                cut || want.is_empty(),
                                "hover omits a reading output, {context}\n{hover}"
                            ),
                        }
                        assert_eq!(
                            text_maps_reads(&cli_k, &o),
                            want,
                            "maps --from-fusion, {context}"
                        );
                        if let Some(t) = &tooltip {
                            let maps = t.get(&k).cloned().unwrap_or_default();
                            assert_eq!(
                                text_maps_reads(&maps, &o),
                                want,
                                "inlay tooltip, {context}"
                            );
                        }
                        if let Some(p) = node.parameter_number {
                            let maps: Vec<String> = per_output[k][p]["maps"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|m| m.as_str().unwrap().to_string())
                                .collect();
                            assert_eq!(
                                text_maps_reads(&maps, &o),
                                want,
                                "maps --output {k}, {context}"
                            );
                        }
                        checked += 1;
                    }
                    // Sampled points may miss a read; where the reference found one, every
                    // view must say the output reads the instruction.
                    if any {
                        assert!(
                            cli_read,
                            "{}: maps --from-fusion says output {k} does not read it",
                            node.name
                        );
                        assert!(
                            full.contains_key(&k),
                            "{}: whole text omits output {k}\n{whole}",
                            node.name
                        );
                        if let Some(t) = &tooltip {
                            assert!(
                                t.contains_key(&k),
                                "{}: inlay tooltip omits output {k}",
                                node.name
                            );
                        }
                    }
                }
                if hint.is_none() {
                    assert!(
                        full.is_empty(),
                        "{}: no inlay hint but read: {whole}",
                        node.name
                    );
                }
            }
        }
    }
    assert!(client.shutdown_and_exit().success());
    checked
}

/// Outputs with different maps (transposed, sliced, reduced, as is) and an
/// instruction (`%e`) that feeds only the last output.
const CONSTRUCTED: &str = "HloModule mo

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%fused (p0: f32[4,6], p1: f32[6]) -> (f32[6,4], f32[4,6], f32[2,3], f32[4], f32[6]) {
  %p0 = f32[4,6]{1,0} parameter(0)
  %p1 = f32[6]{0} parameter(1)
  %n = f32[4,6]{1,0} negate(%p0)
  %t = f32[6,4]{1,0} transpose(%n), dimensions={1,0}
  %b = f32[4,6]{1,0} broadcast(%p1), dimensions={1}
  %a = f32[4,6]{1,0} add(%n, %b)
  %s = f32[2,3]{1,0} slice(%a), slice={[1:3], [0:6:2]}
  %c = f32[] constant(0)
  %r = f32[4]{0} reduce(%n, %c), dimensions={1}, to_apply=%add
  %e = f32[6]{0} exponential(%p1)
  ROOT %out = (f32[6,4]{1,0}, f32[4,6]{1,0}, f32[2,3]{1,0}, f32[4]{0}, f32[6]{0}) tuple(%t, %a, %s, %r, %e)
}

ENTRY %main (a: f32[4,6], b: f32[6]) -> (f32[6,4], f32[4,6], f32[2,3], f32[4], f32[6]) {
  %a = f32[4,6]{1,0} parameter(0)
  %b = f32[6]{0} parameter(1)
  ROOT %f = (f32[6,4]{1,0}, f32[4,6]{1,0}, f32[2,3]{1,0}, f32[4]{0}, f32[6]{0}) fusion(%a, %b), kind=kLoop, calls=%fused
}
";

/// A concatenation split back into outputs by slices (each output reads one input),
/// and a reshape feeding two outputs differently.
const SPLIT: &str = "HloModule split

%fused (p0: f32[2,3], p1: f32[2,3]) -> (f32[2,3], f32[2,3], f32[3,2]) {
  %p0 = f32[2,3]{1,0} parameter(0)
  %p1 = f32[2,3]{1,0} parameter(1)
  %cat = f32[4,3]{1,0} concatenate(%p0, %p1), dimensions={0}
  %lo = f32[2,3]{1,0} slice(%cat), slice={[0:2], [0:3]}
  %hi = f32[2,3]{1,0} slice(%cat), slice={[2:4], [0:3]}
  %r = f32[3,2]{1,0} reshape(%hi)
  ROOT %out = (f32[2,3]{1,0}, f32[2,3]{1,0}, f32[3,2]{1,0}) tuple(%lo, %hi, %r)
}

ENTRY %main (a: f32[2,3], b: f32[2,3]) -> (f32[2,3], f32[2,3], f32[3,2]) {
  %a = f32[2,3]{1,0} parameter(0)
  %b = f32[2,3]{1,0} parameter(1)
  ROOT %f = (f32[2,3]{1,0}, f32[2,3]{1,0}, f32[3,2]{1,0}) fusion(%a, %b), kind=kLoop, calls=%fused
}
";

fn check_constructed(name: &str, text: &str) -> usize {
    let path = std::env::temp_dir().join(format!("hlo-lsp-mof-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let checked = check_file(name, text, path.to_str().unwrap());
    let _ = std::fs::remove_file(path);
    checked
}

#[test]
fn constructed_multi_output_fusions() {
    assert!(check_constructed("constructed.hlo", CONSTRUCTED) > 100);
    assert!(check_constructed("split.hlo", SPLIT) > 50);
}

#[test]
fn constructed_hover_names_each_output_and_the_one_feeding_only_the_last() {
    let mut client = Client::start();
    let document = uri("constructed.hlo");
    client.open(&document, CONSTRUCTED);
    let at = |needle: &str| json!({"textDocument": {"uri": document}, "position": position(CONSTRUCTED, CONSTRUCTED.find(needle).unwrap() + 1)});
    let e = client.result("textDocument/hover", at("%e = "));
    let e = e["contents"]["value"].as_str().unwrap();
    assert!(
        e.contains(
            "**From fusion `%f`** (read by 1 of 5 outputs)\n- output 4 (`f32[6]`): identity"
        ),
        "{e}"
    );
    let n = client.result("textDocument/hover", at("%n = "));
    let n = n["contents"]["value"].as_str().unwrap();
    assert!(n.contains("(read by 4 of 5 outputs)"), "{n}");
    assert!(
        n.contains(
            "- output 0 (`f32[6,4]`): `(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]`"
        ),
        "{n}"
    );
    assert!(n.contains("- output 1 (`f32[4,6]`): identity"), "{n}");
    assert!(
        n.contains("- output 3 (`f32[4]`): `(d0)[s0] -> (d0, s0)"),
        "{n}"
    );
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn multi_output_fusions_of_the_test_data() {
    let mut total = 0;
    for rel in [
        "tests/data/samples/xla/xla__tools__print_indexing_test.hlo",
        "tests/data/samples/xla/xla__codegen__emitters__tests__loop__mof_reshapes.hlo",
        "tests/data/jax/argmax.after.hlo",
    ] {
        let text = read_repo_file(rel);
        let name = rel.rsplit('/').next().unwrap();
        let checked = check_file(name, &text, &repo_file(rel));
        assert!(checked > 0, "{rel}: nothing checked");
        total += checked;
    }
    assert!(total > 1000, "{total}");
}
