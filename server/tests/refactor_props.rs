//! Property test of the reshape-chain quick fixes against brute-force semantics.
//!
//! Random chains of reshape, transpose and bitcast over small shapes with random
//! layouts (optionally followed by their inverses, so that identities are common) are
//! written as HLO text. Each offered fix is applied to the text; the result must parse
//! without diagnostics and, run through a tiny interpreter (parameter element `i`
//! holds the value `i`, so the outputs ARE the output-to-parameter maps, enumerated),
//! must compute exactly what the original computed, layouts included. And whenever
//! the interpreter shows that the chain returns its source unchanged, a removal must
//! be offered; when it reads its source in row-major order, a single reshape.

use hlo_lsp::model::{self, parse_hlo, Opcode, Shape};
use hlo_lsp::refactor::{self, rewrite::apply};
use proptest::prelude::*;

/// A value: logical extents, layout (minor to major) and elements in row-major order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Array {
    dims: Vec<i64>,
    minor_to_major: Vec<i64>,
    data: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Array(Array),
    Tuple(Vec<Value>),
}

fn strides(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1];
    }
    s
}

fn unflatten(mut linear: i64, dims: &[i64]) -> Vec<i64> {
    let mut idx = vec![0; dims.len()];
    for k in (0..dims.len()).rev() {
        idx[k] = linear % dims[k];
        linear /= dims[k];
    }
    idx
}

/// Offset of logical index `idx` in the buffer of an array with this layout.
fn physical_offset(idx: &[i64], dims: &[i64], minor_to_major: &[i64]) -> i64 {
    let (mut offset, mut stride) = (0, 1);
    for &d in minor_to_major {
        offset += idx[d as usize] * stride;
        stride *= dims[d as usize];
    }
    offset
}

fn array_shape(shape: &Shape) -> (Vec<i64>, Vec<i64>) {
    let a = shape.as_array().expect("array shapes only");
    (a.dims.clone(), a.minor_to_major())
}

/// Runs the entry computation of a module made of parameter(0), reshape, transpose,
/// bitcast, negate, add and tuple.
fn run(text: &str) -> Value {
    let file = parse_hlo(text);
    let m = &file.modules[0];
    let c = m.computation(m.entry.expect("an entry"));
    let mut values: Vec<Option<Value>> = vec![None; c.instructions.len()];
    for instr in &c.instructions {
        let arg = |k: usize| -> Value {
            values[instr.operands[k].target.expect("defined").index()]
                .clone()
                .expect("defined before use")
        };
        let array = |k: usize| match arg(k) {
            Value::Array(a) => a,
            Value::Tuple(_) => panic!("array operand expected"),
        };
        let value = match instr.opcode {
            Opcode::Tuple => Value::Tuple((0..instr.operands.len()).map(arg).collect()),
            _ => {
                let (dims, minor_to_major) = array_shape(&instr.shape);
                let count: i64 = dims.iter().product();
                let data = match instr.opcode {
                    Opcode::Parameter => (0..count).collect(),
                    Opcode::Reshape => array(0).data,
                    Opcode::Negate => array(0).data.iter().map(|x| -x).collect(),
                    Opcode::Add => {
                        let (a, b) = (array(0), array(1));
                        a.data.iter().zip(&b.data).map(|(x, y)| x + y).collect()
                    }
                    Opcode::Transpose => {
                        let a = array(0);
                        let perm = instr.attrs().dimensions.clone().expect("dimensions");
                        let in_strides = strides(&a.dims);
                        (0..count)
                            .map(|l| {
                                let out = unflatten(l, &dims);
                                let at: i64 = (0..dims.len())
                                    .map(|i| out[i] * in_strides[perm[i] as usize])
                                    .sum();
                                a.data[at as usize]
                            })
                            .collect()
                    }
                    Opcode::Bitcast => {
                        let a = array(0);
                        let mut buffer = vec![0; count as usize];
                        for (l, &v) in a.data.iter().enumerate() {
                            let idx = unflatten(l as i64, &a.dims);
                            buffer[physical_offset(&idx, &a.dims, &a.minor_to_major) as usize] = v;
                        }
                        (0..count)
                            .map(|l| {
                                let idx = unflatten(l, &dims);
                                buffer[physical_offset(&idx, &dims, &minor_to_major) as usize]
                            })
                            .collect()
                    }
                    ref other => panic!("the interpreter does not run {}", other.name()),
                };
                Value::Array(Array {
                    dims,
                    minor_to_major,
                    data,
                })
            }
        };
        values[instr.id.index()] = Some(value);
    }
    values[c.root.expect("a root").index()]
        .clone()
        .expect("computed")
}

/// Every dimension list of rank <= 3 with `count` elements.
fn factorizations(count: i64) -> Vec<Vec<i64>> {
    let mut out = vec![];
    if count == 1 {
        out.push(vec![]);
    }
    let mut frontier: Vec<Vec<i64>> = vec![vec![]];
    for _ in 0..3 {
        let mut next = vec![];
        for dims in &frontier {
            let so_far: i64 = dims.iter().product();
            for d in (1..=count).filter(|d| (count / so_far) % d == 0) {
                let mut longer = dims.clone();
                longer.push(d);
                if longer.iter().product::<i64>() == count {
                    out.push(longer.clone());
                }
                next.push(longer);
            }
        }
        frontier = next;
    }
    out
}

fn permutations(rank: usize) -> Vec<Vec<usize>> {
    if rank == 0 {
        return vec![vec![]];
    }
    let mut out = vec![];
    for p in permutations(rank - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, rank - 1);
            out.push(q);
        }
    }
    out
}

/// A shape in the text: extents and `Some(layout)` written, or `None` (default).
#[derive(Debug, Clone, PartialEq)]
struct Spec {
    dims: Vec<i64>,
    layout: Option<Vec<usize>>,
}

impl Spec {
    fn text(&self) -> String {
        let dims: Vec<String> = self.dims.iter().map(i64::to_string).collect();
        let mut s = format!("f32[{}]", dims.join(","));
        if let Some(l) = &self.layout {
            let l: Vec<String> = l.iter().map(usize::to_string).collect();
            s.push_str(&format!("{{{}}}", l.join(",")));
        }
        s
    }

    /// A layout chosen by `pick`: one of the permutations, or none written.
    fn with_layout(dims: Vec<i64>, pick: u16) -> Spec {
        let perms = permutations(dims.len());
        let k = pick as usize % (perms.len() + 1);
        Spec {
            dims,
            layout: perms.get(k).cloned(),
        }
    }
}

/// One chain member as text: `(opcode, operand shape -> spec, attributes)`.
#[derive(Debug, Clone)]
struct Step {
    opcode: &'static str,
    out: Spec,
    attrs: String,
}

fn step(from: &Spec, kind: u8, a: u16, b: u16) -> Step {
    let count: i64 = from.dims.iter().product();
    let shapes = factorizations(count);
    match kind % 3 {
        0 => Step {
            opcode: "reshape",
            out: Spec::with_layout(shapes[b as usize % shapes.len()].clone(), a),
            attrs: String::new(),
        },
        1 => {
            let perms = permutations(from.dims.len());
            let perm = &perms[b as usize % perms.len()];
            let dims = perm.iter().map(|&p| from.dims[p]).collect();
            Step {
                opcode: "transpose",
                out: Spec::with_layout(dims, a),
                attrs: format!(
                    ", dimensions={{{}}}",
                    perm.iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            }
        }
        _ => Step {
            opcode: "bitcast",
            out: Spec::with_layout(shapes[b as usize % shapes.len()].clone(), a),
            attrs: String::new(),
        },
    }
}

/// The step that undoes `s` (applied to `s.out`, giving back `before`).
fn inverse(s: &Step, before: &Spec) -> Step {
    match s.opcode {
        "transpose" => {
            let perm: Vec<usize> = s
                .attrs
                .trim_start_matches(", dimensions={")
                .trim_end_matches('}')
                .split(',')
                .filter(|x| !x.is_empty())
                .map(|x| x.parse().unwrap())
                .collect();
            let mut inv = vec![0; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inv[p] = i;
            }
            Step {
                opcode: "transpose",
                out: before.clone(),
                attrs: format!(
                    ", dimensions={{{}}}",
                    inv.iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            }
        }
        op => Step {
            opcode: op,
            out: before.clone(),
            attrs: String::new(),
        },
    }
}

#[derive(Debug, Clone)]
struct Case {
    text: String,
    /// Chain members' names, in order; `p0` is the source.
    members: Vec<String>,
    /// Whether some member before the last has a second user.
    blocked: bool,
}

fn build_case(
    count_pick: u8,
    source_pick: (u16, u16),
    steps: &[(u8, u16, u16)],
    invert: bool,
    ending: u8,
    extra_user: Option<u8>,
    percent: bool,
) -> Case {
    const COUNTS: [i64; 6] = [1, 2, 4, 6, 8, 12];
    let count = COUNTS[count_pick as usize % COUNTS.len()];
    let shapes = factorizations(count);
    let source = Spec::with_layout(
        shapes[source_pick.1 as usize % shapes.len()].clone(),
        source_pick.0,
    );
    let mut specs = vec![source.clone()];
    let mut chain: Vec<Step> = vec![];
    for &(kind, a, b) in steps {
        let s = step(specs.last().unwrap(), kind, a, b);
        specs.push(s.out.clone());
        chain.push(s);
    }
    if invert {
        for k in (0..steps.len()).rev() {
            let s = inverse(&chain[k], &specs[k]);
            specs.push(s.out.clone());
            chain.push(s);
        }
    }
    let pc = if percent { "%" } else { "" };
    let mut body = format!("  {pc}p0 = {} parameter(0)\n", source.text());
    let mut members = vec![];
    let mut previous = "p0".to_string();
    for (k, s) in chain.iter().enumerate() {
        let name = format!("m{k}");
        body.push_str(&format!(
            "  {pc}{name} = {} {}({pc}{previous}){}\n",
            s.out.text(),
            s.opcode,
            s.attrs
        ));
        members.push(name.clone());
        previous = name;
    }
    let last_spec = specs.last().unwrap().text();
    let extra = extra_user
        .map(|k| k as usize % members.len())
        .filter(|&k| k + 1 < members.len());
    let mut root_parts = vec![];
    match ending % 4 {
        0 if extra.is_none() => {
            // The last member is the root: mark it.
            let line = format!("  {pc}{previous} =");
            body = body.replace(&line, &format!("  ROOT {pc}{previous} ="));
            // Not the last line: a fix that dropped `ROOT` would make this the root.
            body.push_str(&format!("  {pc}q = f32[3] parameter(1)\n"));
        }
        1 => {
            body.push_str(&format!("  {pc}n = {last_spec} negate({pc}{previous})\n"));
            root_parts.push(("n".to_string(), last_spec.clone()));
        }
        2 => {
            body.push_str(&format!(
                "  {pc}s = {last_spec} add({pc}{previous}, {last_spec} {pc}{previous})\n"
            ));
            root_parts.push(("s".to_string(), last_spec.clone()));
        }
        _ => root_parts.push((previous.clone(), last_spec.clone())),
    }
    if let Some(k) = extra {
        root_parts.push((members[k].clone(), specs[k + 1].text()));
    }
    if !root_parts.is_empty() {
        root_parts.push(("p0".to_string(), source.text()));
        let shapes: Vec<&str> = root_parts.iter().map(|(_, s)| s.as_str()).collect();
        let names: Vec<String> = root_parts.iter().map(|(n, _)| format!("{pc}{n}")).collect();
        body.push_str(&format!(
            "  ROOT {pc}out = ({}) tuple({})\n",
            shapes.join(", "),
            names.join(", ")
        ));
    }
    Case {
        text: format!("HloModule m\n\nENTRY e {{\n{body}}}\n"),
        members,
        blocked: extra.is_some(),
    }
}

/// The value of instruction `name` in the original module (re-running with it as root).
fn value_of(text: &str, name: &str) -> Value {
    let file = parse_hlo(text);
    let m = &file.modules[0];
    let c = m.computation(m.entry.unwrap());
    let instr = c.instruction_by_name(name).expect("named");
    // Cut the module after `name` and make it the root.
    let range = c.abs(instr.range);
    let end = range.end;
    let line_start = text[..range.start].rfind('\n').unwrap() + 1;
    let head = text[..line_start].replace("ROOT ", "");
    let own = text[line_start..end].replace("ROOT ", "");
    run(&format!("{head}  ROOT {}\n}}\n", own.trim_start()))
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let text = &case.text;
    let file = parse_hlo(text);
    prop_assert!(
        file.diagnostics.is_empty(),
        "{text}\n{:#?}",
        file.diagnostics
    );
    let before = run(text);
    let found = refactor::diagnostics(&file);
    for d in &found {
        prop_assert!(!d.fixes.is_empty());
        for fix in &d.fixes {
            let after_text = apply(text, &fix.edits);
            let after = parse_hlo(&after_text);
            prop_assert!(
                after.diagnostics.is_empty(),
                "{text}\n--- {} ->\n{after_text}\n{:#?}",
                fix.title,
                after.diagnostics
            );
            let count = |f: &model::HloFile| {
                f.modules[0]
                    .computation(model::ComputationId(0))
                    .instructions
                    .len()
            };
            prop_assert!(count(&after) < count(&file), "{text}\n->\n{after_text}");
            prop_assert_eq!(
                run(&after_text),
                before.clone(),
                "{}\n--- {} ->\n{}",
                text,
                &fix.title,
                after_text
            );
        }
    }
    // Brute-force truth: when the chain gives back its source unchanged, a fix must
    // remove it (all members, since the whole chain is the longest window).
    let last = case.members.last().unwrap();
    if !case.blocked && value_of(text, last) == value_of(text, "p0") {
        let removes_all = found.iter().any(|d| {
            d.fixes.iter().any(|f| {
                let after = parse_hlo(&apply(text, &f.edits));
                let c = after.modules[0].computation(model::ComputationId(0));
                case.members
                    .iter()
                    .all(|m| c.instruction_by_name(m).is_none())
            })
        });
        prop_assert!(
            removes_all,
            "identity chain without a removal:\n{text}\n{found:#?}"
        );
    } else if !case.blocked && case.members.len() >= 2 {
        // A chain that reads its source in row-major order is one reshape: offered.
        let Value::Array(result) = value_of(text, last) else {
            unreachable!()
        };
        let row_major: Vec<i64> = (0..result.data.len() as i64).collect();
        if result.data == row_major {
            let to_one_reshape = found.iter().any(|d| {
                d.fixes.iter().any(|f| {
                    let after = parse_hlo(&apply(text, &f.edits));
                    let c = after.modules[0].computation(model::ComputationId(0));
                    let (kept, gone) = case.members.split_last().unwrap();
                    gone.iter().all(|m| c.instruction_by_name(m).is_none())
                        && c.instruction_by_name(kept).map(|i| &i.opcode) == Some(&Opcode::Reshape)
                })
            });
            prop_assert!(
                to_one_reshape,
                "reshape chain without a fix:\n{text}\n{found:#?}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn offered_fixes_preserve_the_computed_values(
        count_pick in any::<u8>(),
        source_pick in (any::<u16>(), any::<u16>()),
        steps in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 1..4),
        invert in any::<bool>(),
        ending in any::<u8>(),
        extra_user in prop::option::weighted(0.2, any::<u8>()),
        percent in any::<bool>(),
    ) {
        let case = build_case(count_pick, source_pick, &steps, invert, ending, extra_user, percent);
        check(&case)?;
    }
}

#[test]
fn the_interpreter_agrees_with_hand_computed_values() {
    // transpose of a 2x3: out[i,j] = in[j,i]; bitcast to {0,1} of the same is a transpose.
    let t = run("ENTRY e {\n  p = f32[2,3] parameter(0)\n  \
                 ROOT t = f32[3,2] transpose(p), dimensions={1,0}\n}\n");
    let b = run("ENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT b = f32[3,2]{0,1} bitcast(p)\n}\n");
    let data = |v: &Value| match v {
        Value::Array(a) => a.data.clone(),
        Value::Tuple(_) => unreachable!(),
    };
    assert_eq!(data(&t), vec![0, 3, 1, 4, 2, 5]);
    assert_eq!(data(&b), vec![0, 3, 1, 4, 2, 5]);
    let r = run("ENTRY e {\n  p = f32[2,3]{0,1} parameter(0)\n  ROOT r = f32[3,2] reshape(p)\n}\n");
    assert_eq!(data(&r), vec![0, 1, 2, 3, 4, 5]);
}

#[test]
fn seed_identity_cases_are_generated() {
    // The generator does produce identity chains that the property then checks.
    let case = build_case(5, (0, 0), &[(0, 3, 7), (1, 0, 1)], true, 1, None, true);
    assert!(
        value_of(&case.text, "m3") == value_of(&case.text, "p0"),
        "{}",
        case.text
    );
    assert!(
        !refactor::diagnostics_of(&case.text).is_empty(),
        "{}",
        case.text
    );
    check(&case).unwrap();
}
