//! Constructed broken files produce exactly the expected diagnostic codes at the
//! expected ranges; tolerant inputs (no header, no ENTRY, no ROOT, inline operands,
//! several modules) build without any.

use hlo_lsp::model::{self, codes, Opcode, Severity};

/// Asserts that `text` produces exactly `expected` diagnostics: (code, severity, a
/// unique piece of context, the text the range covers inside that context).
fn expect(text: &str, expected: &[(&str, Severity, &str, &str)]) {
    let file = model::parse_hlo(text);
    let mut got: Vec<(&str, Severity, std::ops::Range<usize>)> = file
        .diagnostics
        .iter()
        .map(|d| (d.code, d.severity, d.range.clone()))
        .collect();
    let mut want: Vec<(&str, Severity, std::ops::Range<usize>)> = expected
        .iter()
        .map(|&(code, severity, context, covered)| {
            assert_eq!(
                text.matches(context).count(),
                1,
                "context `{context}` must be unique"
            );
            let at = text.find(context).unwrap()
                + context
                    .find(covered)
                    .expect("covered text inside the context");
            (code, severity, at..at + covered.len())
        })
        .collect();
    got.sort_by_key(|g| (g.2.start, g.0));
    want.sort_by_key(|w| (w.2.start, w.0));
    assert_eq!(got, want, "diagnostics: {:#?}", file.diagnostics);
}

use Severity::{Error, Warning};

/// Parameter numbers are kept in four bytes: one past that range is too large, as one
/// past the computation's size is, and a negative one is not a number of a parameter;
/// the messages say which, and a valid parameter still shows its number.
#[test]
fn parameter_numbers() {
    expect(
        "ENTRY e {\n  a = f32[2] parameter(4294967296)\n  b = f32[2] parameter(-1)\n  ROOT c = f32[2] parameter(0)\n}\n",
        &[
            (codes::PARAMETER_NUMBER, Error, "(4294967296)", "(4294967296)"),
            (codes::PARAMETER_NUMBER, Error, "(-1)", "(-1)"),
        ],
    );
    let file = model::parse_hlo("ENTRY e {\n  a = f32[2] parameter(4294967296)\n  b = f32[2] parameter(-1)\n  ROOT c = f32[2] parameter(7)\n}\n");
    let messages: Vec<&str> = file
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert!(
        messages.contains(&"parameter number 4294967296 is too large"),
        "{messages:?}"
    );
    assert!(
        messages.contains(&"parameter needs a non-negative number: `parameter(0)`"),
        "{messages:?}"
    );
    let entry = file.modules[0].entry_computation().unwrap();
    assert_eq!(
        entry
            .model()
            .instruction_by_name("c")
            .unwrap()
            .parameter_number,
        Some(7)
    );
}

#[test]
fn names() {
    expect(
        "ENTRY e {\n  p = f32[2] parameter(0)\n  p = f32[2] parameter(1)\n  ROOT r = f32[2] add(p, %missing)\n}\n",
        &[(codes::DUPLICATE_NAME, Error, "p = f32[2] parameter(1)", "p"), (codes::UNDEFINED_NAME, Error, "%missing", "%missing")],
    );
    expect(
        "c {\n  ROOT x = f32[] constant(0)\n}\n\nc {\n  ROOT y = f32[] constant(1)\n}\n",
        &[(codes::DUPLICATE_NAME, Error, "\nc {\n  ROOT y", "c")],
    );
}

#[test]
fn operand_counts_and_calls() {
    expect(
        "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p, p)\n}\n",
        &[(codes::OPERAND_COUNT, Error, "(p, p)", "(p, p)")],
    );
    expect(
        "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT f = f32[2] fusion(p), kind=kLoop, calls=%nope\n}\n",
        &[(codes::UNDEFINED_COMPUTATION, Error, "%nope", "%nope")],
    );
    expect(
        "f {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT s = f32[2] add(a, b)\n}\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(p), kind=kLoop, calls=f\n}\n",
        &[(codes::CALL_ARITY, Error, "calls=f", "f")],
    );
    expect(
        "f {\n  a = f32[3] parameter(0)\n  ROOT s = f32[3] negate(a)\n}\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(p), kind=kLoop, calls=f\n}\n",
        &[(codes::CALL_SHAPE_MISMATCH, Warning, "fusion(p)", "p"), (codes::CALL_SHAPE_MISMATCH, Warning, "r = f32[2] fusion", "f32[2]")],
    );
    expect(
        "ENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n",
        &[(codes::MULTIPLE_ROOTS, Error, "ROOT b", "b")],
    );
    expect(
        "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(0)\n}\n",
        &[(
            codes::PARAMETER_NUMBER,
            Error,
            "ROOT b = f32[] parameter(0)",
            "(0)",
        )],
    );
}

#[test]
fn elementwise_and_broadcast() {
    expect(
        "ENTRY e {\n  p = f32[2,3] parameter(0)\n  q = f32[3,2] parameter(1)\n  ROOT r = f32[2,3] add(p, q)\n}\n",
        &[(codes::ELEMENTWISE_SHAPE_MISMATCH, Error, "add(p, q)", "q")],
    );
    expect(
        "ENTRY e {\n  p = f32[3] parameter(0)\n  ROOT b = f32[3,2] broadcast(p), dimensions={1}\n}\n",
        &[(codes::BROADCAST_DIMENSIONS, Error, "{1}", "{1}")],
    );
    expect(
        "ENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT t = f32[3,2] transpose(p), dimensions={0,0}\n}\n",
        &[(codes::TRANSPOSE_PERMUTATION, Error, "{0,0}", "{0,0}")],
    );
    expect(
        "ENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT n = f32[3,2] negate(p)\n}\n",
        &[(codes::SHAPE_MISMATCH, Error, "f32[3,2] negate", "f32[3,2]")],
    );
}

#[test]
fn reshape_bitcast_slice_concat_dot() {
    expect(
        "ENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT r = f32[7] reshape(p)\n}\n",
        &[(codes::RESHAPE_ELEMENT_COUNT, Error, "f32[7]", "f32[7]")],
    );
    expect(
        "ENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT b = f16[4]{0} bitcast(p)\n}\n",
        &[(codes::BITCAST_SIZE, Error, "f16[4]{0}", "f16[4]{0}")],
    );
    expect(
        "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT s = f32[3] slice(p), slice={[2:5]}\n}\n",
        &[(codes::SLICE_BOUNDS, Error, "{[2:5]}", "{[2:5]}")],
    );
    expect(
        "ENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[2,4] parameter(1)\n  ROOT c = f32[4,3] concatenate(a, b), dimensions={0}\n}\n",
        &[(codes::CONCATENATE_SHAPES, Error, "concatenate(a, b)", "b")],
    );
    expect(
        "ENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[4,5] parameter(1)\n  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
        &[(codes::DOT_DIMENSIONS, Error, "lhs_contracting_dims={1}", "{1}")],
    );
}

#[test]
fn decoding_errors_and_unknowns() {
    expect(
        "ENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT t = f32[3,2] transpose(p), dimensions={1,x}\n}\n",
        &[(codes::INVALID_ATTRIBUTE, Error, "{1,x}", "x}")],
    );
    expect(
        "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT t = f32[2] frobnicate(p), colour=blue\n}\n",
        &[
            (codes::UNKNOWN_OPCODE, Warning, "frobnicate", "frobnicate"),
            (codes::UNKNOWN_ATTRIBUTE, Warning, "colour", "colour"),
        ],
    );
    expect(
        "ENTRY e {\n  ROOT p = q7[2] parameter(0)\n}\n",
        &[(codes::UNKNOWN_TYPE, Error, "q7[2]", "q7[2]")],
    );
    expect(
        "ENTRY e {\n  ROOT p = f32[2]{1,0} parameter(0)\n}\n",
        &[(codes::INVALID_SHAPE, Error, "{1,0}", "{1,0}")],
    );
}

#[test]
fn tolerant_forms() {
    let text = "// RUN: tool %s\n\nfused {\n  p0 = f32[8] parameter(0)\n  n = f32[8] negate(p0)\n  e = f32[8] exponential(f32[8] negate(n))\n}\n\nmain {\n  a = f32[8] parameter(0)\n  f = f32[8] fusion(a), kind=kLoop, calls=fused\n}\n\n// -----\n\nHloModule second\n\nENTRY main2 {\n  x = s32[] parameter(0)\n  ROOT t = (s32[], s32[]) tuple(x, x)\n}\n\nother {\n  ROOT y = s32[] constant(1)\n}\n";
    expect(text, &[]);
    let file = model::parse_hlo(text);
    assert_eq!(file.modules.len(), 2);
    let m = &file.modules[0];
    assert_eq!(m.name, None);
    assert_eq!(m.entry_computation().unwrap().name, "main");
    let fused = m.computation(m.computation_by_name("fused").unwrap());
    assert_eq!(&*fused.root_instruction().unwrap().name, "e");
    // The inline operand became an instruction before its user, with its own range.
    let inline = &fused.instructions[2];
    assert!(inline.synthetic);
    assert_eq!(inline.opcode, Opcode::Negate);
    assert_eq!(&text[fused.abs(inline.range)], "f32[8] negate(n)");
    assert_eq!(inline.operands[0].target, fused.instruction_id("n"));
    assert_eq!(fused.instructions[3].operands[0].target, Some(inline.id));
    let m2 = &file.modules[1];
    assert_eq!(m2.name.as_deref(), Some("second"));
    assert_eq!(m2.entry_computation().unwrap().name, "main2");
    assert!(m2.range.start > m.range.end - 1);
}

#[test]
fn missing_shapes_are_inferred_for_tuples() {
    let text = "ENTRY e {\n  x = s32[] parameter(0)\n  t = tuple(x, x)\n  ROOT g = s32[] get-tuple-element(t), index=1\n}\n";
    expect(text, &[]);
    let file = model::parse_hlo(text);
    let c = file.modules[0].entry_computation().unwrap();
    assert_eq!(
        c.instruction_by_name("t").unwrap().shape.to_string(),
        "(s32[], s32[])"
    );
}

#[test]
fn related_locations_point_at_first_definition() {
    let text = "ENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] parameter(1)\n}\n";
    let file = model::parse_hlo(text);
    let d = file
        .diagnostics
        .iter()
        .find(|d| d.code == codes::DUPLICATE_NAME)
        .unwrap();
    assert_eq!(d.related[0].0, 12..13);
}

#[test]
fn recursive_calls_are_errors_naming_the_cycle() {
    // A fusion calling its own computation, and two computations calling each other
    // (reduced from mutated JAX dumps: ../shared/repro/fusion_mutual_call.hlo).
    let text = "HloModule m\nself {\n  p0 = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(p0), kind=kLoop, calls=self\n}\nf {\n  p0 = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(p0), kind=kLoop, calls=g\n}\ng {\n  p0 = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(p0), kind=kLoop, calls=f\n}\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT fu = f32[2] fusion(a), kind=kLoop, calls=f\n}\n";
    expect(
        text,
        &[
            (codes::RECURSIVE_CALL, Error, "calls=self", "self"),
            (codes::RECURSIVE_CALL, Error, "calls=g", "g"),
            (codes::RECURSIVE_CALL, Error, "calls=f\n}\nENTRY", "f"),
        ],
    );
    let file = model::parse_hlo(text);
    let messages: Vec<&str> = file
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert!(messages
        .contains(&"recursive call: `self` calls `self` (computations cannot call themselves)"));
    assert!(messages.contains(
        &"recursive call: `f` calls `g` calls `f` (computations cannot call themselves)"
    ));
}

#[test]
fn a_call_chain_ten_thousand_deep_is_not_a_cycle_and_does_not_overflow() {
    let mut text = String::from("HloModule m\n");
    for k in 0..10_000 {
        let call = if k + 1 < 10_000 {
            format!("fusion(p0), kind=kLoop, calls=c{}", k + 1)
        } else {
            "negate(p0)".to_string()
        };
        text.push_str(&format!(
            "c{k} {{\n  p0 = f32[2] parameter(0)\n  ROOT r = f32[2] {call}\n}}\n"
        ));
    }
    text.push_str("ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT fu = f32[2] fusion(a), kind=kLoop, calls=c0\n}\n");
    let file = model::parse_hlo(&text);
    assert!(
        file.diagnostics
            .iter()
            .all(|d| d.code != codes::RECURSIVE_CALL),
        "{:?}",
        file.diagnostics.first()
    );
}
