//! Checks of one instruction that XLA's parser makes on attributes the model keeps
//! as text: which ops take `result_accuracy` and what it may say
//! (`HloParserImpl::ParseResultAccuracy`), a custom call's `api_version` and
//! `operand_layout_constraints`, a conditional's branch index and attributes, and
//! `parameter_replication`'s length. Messages use XLA's wording.

use std::ops::Range;

use super::diagnostics::{codes, Diagnostic};
use super::module::Instruction;
use super::opcode::Opcode;
use super::shape::{parse_shape, PrimitiveType, Shape};

/// What is wrong with `instr` (`text`: its computation's text; `operand`: the shape
/// of operand k, when known).
pub fn check<'s>(
    instr: &Instruction,
    text: &str,
    operand: impl Fn(usize) -> Option<&'s Shape>,
) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let value = |name: &str| {
        instr
            .attribute(name)
            .map(|a| (&text[a.value_range.range()], a.value_range.range()))
    };
    if let Some((v, range)) = value("result_accuracy") {
        if let Err((at, message)) = result_accuracy(&instr.opcode, v) {
            found.push(error(shift(&range, at), message));
        }
    }
    if instr.opcode == Opcode::CustomCall {
        if let Some((v, range)) = value("api_version") {
            if !API_VERSIONS.contains(&v.trim()) {
                found.push(error(range, format!("Invalid API version `{}`", v.trim())));
            }
        }
        if let Some((v, range)) = value("operand_layout_constraints") {
            found.extend(layout_constraints(v, range, &operand));
        }
    }
    if instr.opcode == Opcode::Conditional {
        found.extend(conditional(instr, operand(0)));
    }
    if instr.opcode == Opcode::Parameter {
        if let Some((v, range)) = value("parameter_replication") {
            let leaves = instr.shape.leaves().len();
            let given = v
                .trim()
                .trim_matches(['{', '}'])
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .count();
            if !matches!(*instr.shape, Shape::Invalid) && given != leaves {
                found.push(error(
                    range,
                    format!(
                        "parameter has {leaves} leaf buffers, but parameter_replication has \
                         {given} elements"
                    ),
                ));
            }
        }
    }
    found
}

fn error(range: Range<usize>, message: String) -> Diagnostic {
    Diagnostic::error(range, codes::INVALID_ATTRIBUTE, message)
}

fn shift(range: &Range<usize>, at: Range<usize>) -> Range<usize> {
    (range.start + at.start).min(range.end)..(range.start + at.end).min(range.end)
}

/// `api_version=` values XLA knows (`CustomCallApiVersion`, less UNSPECIFIED).
const API_VERSIONS: &[&str] = &[
    "API_VERSION_ORIGINAL",
    "API_VERSION_STATUS_RETURNING",
    "API_VERSION_STATUS_RETURNING_UNIFIED",
    "API_VERSION_TYPED_FFI",
];

/// Ops that take `result_accuracy` (XLA's unary transcendental ops).
fn takes_result_accuracy(opcode: &Opcode) -> bool {
    matches!(
        opcode,
        Opcode::Cbrt
            | Opcode::Cosine
            | Opcode::Erf
            | Opcode::Exp
            | Opcode::Expm1
            | Opcode::Log
            | Opcode::Log1p
            | Opcode::Logistic
            | Opcode::Rsqrt
            | Opcode::Sine
            | Opcode::Sqrt
            | Opcode::Tan
            | Opcode::Tanh
    )
}

/// `{mode=highest}` or `{tolerance={rtol=0.5, atol=1.0, ulps=2}}`.
fn result_accuracy(opcode: &Opcode, value: &str) -> Result<(), (Range<usize>, String)> {
    let whole = 0..value.len();
    if !takes_result_accuracy(opcode) && !opcode.is_unknown() {
        return Err((
            whole,
            format!("unexpected attribute \"result_accuracy\" on {opcode}"),
        ));
    }
    let inner = value
        .trim()
        .strip_prefix('{')
        .and_then(|v| v.strip_suffix('}'));
    let Some(inner) = inner else {
        return Err((whole, "expects '{' at the start of result_accuracy".into()));
    };
    let inner = inner.trim();
    let Some((key, rest)) = inner.split_once('=') else {
        return Err((whole, "expects attribute name in result_accuracy".into()));
    };
    match key.trim() {
        "mode" => match rest.trim() {
            "default" | "highest" | "DEFAULT" | "HIGHEST" => Ok(()),
            other => Err((
                whole,
                format!("expects ResultAccuracy type but sees: {other}"),
            )),
        },
        "tolerance" => {
            let fields = rest.trim().trim_start_matches('{').trim_end_matches('}');
            for field in fields.split(',').filter(|f| !f.trim().is_empty()) {
                let name = field.split('=').next().unwrap_or("").trim();
                if !matches!(name, "rtol" | "atol" | "ulps") {
                    return Err((whole, format!("invalid attribute name: {name}")));
                }
            }
            Ok(())
        }
        other if other.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
            Err((whole, format!("invalid attribute name: {other}")))
        }
        _ => Err((whole, "expects attribute name in result_accuracy".into())),
    }
}

/// Each shape of `operand_layout_constraints={...}` fits its operand.
fn layout_constraints<'s>(
    value: &str,
    range: Range<usize>,
    operand: &impl Fn(usize) -> Option<&'s Shape>,
) -> Vec<Diagnostic> {
    let value = value.trim();
    let inner = value
        .strip_prefix('{')
        .and_then(|v| v.strip_suffix('}'))
        .unwrap_or(value);
    split_top_level(inner)
        .into_iter()
        .enumerate()
        .filter_map(|(k, piece)| {
            let written = parse_shape(piece.trim()).ok()?;
            let actual = operand(k)?;
            (!written.compatible(actual)).then(|| {
                error(
                    range.clone(),
                    format!(
                        "operand {k} is not compatible with operand shape: constraint {} vs \
                         operand {actual}",
                        piece.trim()
                    ),
                )
            })
        })
        .collect()
}

/// `a, (b, c), d{1,0}` split at the commas outside brackets.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        out.push(&text[start..]);
    }
    out
}

/// A conditional's first operand is a PRED scalar (then `true_computation` and
/// `false_computation`) or an S32 scalar (then `branch_computations`).
fn conditional(instr: &Instruction, index: Option<&Shape>) -> Vec<Diagnostic> {
    let Some(Shape::Array(index)) = index else {
        return Vec::new();
    };
    let range = instr
        .operands
        .first()
        .map_or(instr.operands_range.range(), |o| o.range.range());
    if index.rank() != 0 || !matches!(index.element, PrimitiveType::Pred | PrimitiveType::S32) {
        return vec![Diagnostic::error(
            range,
            codes::OPERAND_SHAPE,
            "The first operand must be a scalar of PRED or S32".to_string(),
        )];
    }
    if index.element == PrimitiveType::Pred {
        if let Some(a) = instr.attribute("branch_computations") {
            return vec![error(
                a.name_range.range(),
                "unexpected attribute \"branch_computations\": a conditional on a PRED takes \
                 true_computation and false_computation"
                    .into(),
            )];
        }
    }
    Vec::new()
}
