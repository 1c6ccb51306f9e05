//! A small evaluator of scalar HLO: what XLA's loop analysis asks its
//! `HloEvaluator` for when no pattern matches (`ComputeWhileLoopTripCount`'s
//! brute force, the induction variable's initial value, the condition on a
//! constant in `ComputeWhileLoopTripCountUpperBound`).
//!
//! It evaluates one instruction from the values of its operands, some of them
//! given (XLA's `substitutions`), through fusions and calls, on scalars only:
//! arrays of one element count as scalars, anything larger is refused. Integers
//! wrap at their width, as XLA's do; integer division by zero gives -1 and the
//! remainder the dividend (the evaluator's convention).

use std::collections::HashMap;
use std::fmt;

use crate::model::{ComparisonDirection, ComputationRef, InstrId, Instruction, Module, Opcode};
use crate::model::{PrimitiveType, Shape};

use super::hlo::{self, MAX_NESTING};

/// Instructions one evaluation may visit, all frames together: conditions and
/// updates are a handful of scalar ops; this bounds hostile input.
const MAX_STEPS: usize = 100_000;
/// Operand chains followed deeper than this are refused (the walk recurses).
const MAX_DEPTH: usize = 400;

/// A scalar value (or a tuple of them).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer of `bits` bits, kept wrapped to its width.
    Int {
        value: i128,
        bits: u32,
        signed: bool,
    },
    /// A float: `f64` for `f64`, rounded to `f32` for the narrower types.
    Float {
        value: f64,
        double: bool,
    },
    Pred(bool),
    Tuple(Vec<Value>),
}

impl Value {
    /// `LiteralUtil::LiteralAsScalarInt64`: an integer's value when it fits `i64`
    /// (floats and predicates have none).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int { value, .. } => i64::try_from(value).ok(),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Pred(b) => Some(b),
            _ => None,
        }
    }

    /// A zero of element type `ty`, then set to `v` (wrapped): how a value of a
    /// known type is made from a number.
    pub fn of_type(ty: &PrimitiveType, v: i128) -> Option<Value> {
        Some(match ty {
            PrimitiveType::Pred => Value::Pred(v != 0),
            t if t.is_integral() => {
                let bits = t.bit_width()?;
                let signed = t.name().starts_with('s');
                Value::Int {
                    value: wrap(v, bits, signed),
                    bits,
                    signed,
                }
            }
            t if t.is_floating() => float(v as f64, t == &PrimitiveType::F64),
            _ => return None,
        })
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int { value, .. } => write!(f, "{value}"),
            Value::Float { value, .. } => write!(f, "{value}"),
            Value::Pred(b) => write!(f, "{b}"),
            Value::Tuple(values) => {
                let parts: Vec<String> = values.iter().map(ToString::to_string).collect();
                write!(f, "({})", parts.join(", "))
            }
        }
    }
}

/// Why an evaluation stopped: the instruction and what about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    pub instruction: String,
    pub why: &'static str,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}", self.instruction, self.why)
    }
}

fn refuse(instr: &Instruction, why: &'static str) -> EvalError {
    EvalError {
        instruction: instr.name.to_string(),
        why,
    }
}

fn wrap(v: i128, bits: u32, signed: bool) -> i128 {
    if bits == 0 || bits >= 127 {
        return v;
    }
    let modulus = 1i128 << bits;
    let m = v.rem_euclid(modulus);
    if signed && m >= modulus / 2 {
        m - modulus
    } else {
        m
    }
}

fn float(v: f64, double: bool) -> Value {
    Value::Float {
        value: if double { v } else { v as f32 as f64 },
        double,
    }
}

/// The value of constant `instr` of `c` when it holds one element (`constant(5)`,
/// `constant({4})`); `None` for anything else or text that does not decode.
pub fn literal(c: ComputationRef<'_>, instr: &Instruction) -> Option<Value> {
    if !hlo::is_constant(instr) || !hlo::is_effective_scalar(&instr.shape) {
        return None;
    }
    let ty = &instr.shape.as_array()?.element;
    let mut text = c.src(*instr.literals.first()?).trim();
    while let Some(inner) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        text = inner.trim();
    }
    if text.contains(',') {
        return None;
    }
    parse_scalar(ty, text)
}

fn parse_scalar(ty: &PrimitiveType, text: &str) -> Option<Value> {
    match ty {
        PrimitiveType::Pred => match text {
            "true" | "1" => Some(Value::Pred(true)),
            "false" | "0" => Some(Value::Pred(false)),
            _ => None,
        },
        t if t.is_integral() => {
            let digits = text.strip_prefix('+').unwrap_or(text);
            let v = match digits.strip_prefix("0x") {
                Some(hex) => i128::from_str_radix(hex, 16).ok()?,
                None => digits.parse::<i128>().ok()?,
            };
            Value::of_type(t, v)
        }
        t if t.is_floating() => {
            let v = match text {
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                "nan" | "-nan" => f64::NAN,
                _ => text.parse::<f64>().ok()?,
            };
            Some(float(v, t == &PrimitiveType::F64))
        }
        _ => None,
    }
}

/// Evaluates `instr` of `c`, the instructions in `given` taking the values given
/// (XLA's `HloEvaluator::Evaluate(instruction, {}, false, substitutions)`): a
/// parameter of `c` that is not given cannot be evaluated.
pub fn evaluate(
    module: &Module,
    c: ComputationRef<'_>,
    instr: &Instruction,
    given: &[(InstrId, Value)],
) -> Result<Value, EvalError> {
    let mut evaluator = Evaluator { module, steps: 0 };
    let mut frame = Frame {
        c,
        arguments: None,
        values: given.iter().cloned().collect(),
        nesting: 0,
    };
    evaluator.value(&mut frame, instr, 0)
}

/// Evaluates computation `c` on `arguments` (its parameters' values).
pub fn evaluate_computation(
    module: &Module,
    c: ComputationRef<'_>,
    arguments: Vec<Value>,
) -> Result<Value, EvalError> {
    let mut evaluator = Evaluator { module, steps: 0 };
    evaluator.call(c, arguments, 0)
}

struct Evaluator<'a> {
    module: &'a Module,
    steps: usize,
}

/// One computation being evaluated: its parameters' values (none for the
/// computation the evaluation starts in) and the values found so far.
struct Frame<'a> {
    c: ComputationRef<'a>,
    arguments: Option<Vec<Value>>,
    values: HashMap<InstrId, Value>,
    nesting: usize,
}

impl<'a> Evaluator<'a> {
    fn call(
        &mut self,
        c: ComputationRef<'_>,
        arguments: Vec<Value>,
        nesting: usize,
    ) -> Result<Value, EvalError> {
        let root = c.model().root_instruction().ok_or_else(|| EvalError {
            instruction: c.name.clone(),
            why: "has no root instruction",
        })?;
        let mut frame = Frame {
            c,
            arguments: Some(arguments),
            values: HashMap::new(),
            nesting,
        };
        self.value(&mut frame, root, 0)
    }

    fn value(
        &mut self,
        frame: &mut Frame<'_>,
        instr: &Instruction,
        depth: usize,
    ) -> Result<Value, EvalError> {
        if let Some(v) = frame.values.get(&instr.id) {
            return Ok(v.clone());
        }
        self.steps += 1;
        if self.steps > MAX_STEPS || depth > MAX_DEPTH {
            return Err(refuse(instr, "is too far from the values given"));
        }
        let v = self.compute(frame, instr, depth)?;
        frame.values.insert(instr.id, v.clone());
        Ok(v)
    }

    fn operand_values(
        &mut self,
        frame: &mut Frame<'_>,
        instr: &Instruction,
        depth: usize,
    ) -> Result<Vec<Value>, EvalError> {
        let c = frame.c;
        let mut out = Vec::with_capacity(instr.operands.len());
        for o in hlo::operands(c, instr) {
            let o = o.ok_or_else(|| refuse(instr, "names an undefined operand"))?;
            out.push(self.value(frame, o, depth + 1)?);
        }
        Ok(out)
    }

    fn compute(
        &mut self,
        frame: &mut Frame<'_>,
        instr: &Instruction,
        depth: usize,
    ) -> Result<Value, EvalError> {
        let shape_ok = match &*instr.shape {
            Shape::Tuple(_) => true,
            s => hlo::is_effective_scalar(s),
        };
        if !shape_ok {
            return Err(refuse(instr, "is not a scalar"));
        }
        match &instr.opcode {
            Opcode::Constant => {
                literal(frame.c, instr).ok_or_else(|| refuse(instr, "holds no scalar literal"))
            }
            Opcode::Parameter => {
                let k = instr.parameter_number.unwrap_or(0) as usize;
                match &frame.arguments {
                    Some(arguments) => arguments
                        .get(k)
                        .cloned()
                        .ok_or_else(|| refuse(instr, "has no argument")),
                    None => Err(refuse(instr, "is a parameter whose value is not known")),
                }
            }
            Opcode::Fusion | Opcode::Call => {
                if frame.nesting >= MAX_NESTING {
                    return Err(refuse(instr, "calls computations nested too deep"));
                }
                let callee = hlo::callee(self.module, instr)
                    .ok_or_else(|| refuse(instr, "calls no computation of the module"))?;
                let arguments = self.operand_values(frame, instr, depth)?;
                self.call(callee, arguments, frame.nesting + 1)
            }
            _ => {
                let values = self.operand_values(frame, instr, depth)?;
                apply(instr, &values).ok_or_else(|| refuse(instr, "cannot be evaluated here"))
            }
        }
    }
}

/// One op on its operands' values; `None` for an op or types it does not know.
fn apply(instr: &Instruction, values: &[Value]) -> Option<Value> {
    let ty = instr.shape.as_array().map(|a| &a.element);
    let arg = |k: usize| values.get(k);
    match &instr.opcode {
        Opcode::Tuple => Some(Value::Tuple(values.to_vec())),
        Opcode::GetTupleElement => match arg(0)? {
            Value::Tuple(elements) => elements.get(hlo::tuple_index(instr)?).cloned(),
            _ => None,
        },
        Opcode::Copy
        | Opcode::Bitcast
        | Opcode::Reshape
        | Opcode::Broadcast
        | Opcode::Slice
        | Opcode::Transpose
        | Opcode::OptimizationBarrier => arg(0).cloned(),
        Opcode::Convert => convert(arg(0)?, ty?),
        Opcode::Compare => {
            let direction = instr.attrs().comparison_direction?;
            compare(arg(0)?, arg(1)?, direction).map(Value::Pred)
        }
        Opcode::Select => match arg(0)? {
            Value::Pred(true) => arg(1).cloned(),
            Value::Pred(false) => arg(2).cloned(),
            _ => None,
        },
        Opcode::Clamp => {
            let lower = binary(&Opcode::Maximum, arg(0)?, arg(1)?)?;
            binary(&Opcode::Minimum, &lower, arg(2)?)
        }
        op if values.len() == 2 => binary(op, arg(0)?, arg(1)?),
        op if values.len() == 1 => unary(op, arg(0)?),
        _ => None,
    }
}

fn convert(v: &Value, ty: &PrimitiveType) -> Option<Value> {
    match *v {
        Value::Int { value, .. } => Value::of_type(ty, value),
        Value::Pred(b) => Value::of_type(ty, i128::from(b)),
        Value::Float { value, .. } => match ty {
            PrimitiveType::Pred => Some(Value::Pred(value != 0.0)),
            t if t.is_floating() => Some(float(value, t == &PrimitiveType::F64)),
            // Saturating, NaN to zero: the evaluator's cast is undefined out of range.
            t => Value::of_type(t, value as i128),
        },
        Value::Tuple(_) => None,
    }
}

fn compare(a: &Value, b: &Value, direction: ComparisonDirection) -> Option<bool> {
    use std::cmp::Ordering;
    let order = match (a, b) {
        (Value::Int { value: x, .. }, Value::Int { value: y, .. }) => Some(x.cmp(y)),
        (Value::Float { value: x, .. }, Value::Float { value: y, .. }) => x.partial_cmp(y),
        (Value::Pred(x), Value::Pred(y)) => Some(x.cmp(y)),
        _ => return None,
    };
    Some(match (direction, order) {
        // NaN: only "not equal" holds.
        (ComparisonDirection::Ne, None) => true,
        (_, None) => false,
        (ComparisonDirection::Eq, Some(o)) => o == Ordering::Equal,
        (ComparisonDirection::Ne, Some(o)) => o != Ordering::Equal,
        (ComparisonDirection::Lt, Some(o)) => o == Ordering::Less,
        (ComparisonDirection::Le, Some(o)) => o != Ordering::Greater,
        (ComparisonDirection::Gt, Some(o)) => o == Ordering::Greater,
        (ComparisonDirection::Ge, Some(o)) => o != Ordering::Less,
    })
}

fn binary(op: &Opcode, a: &Value, b: &Value) -> Option<Value> {
    match (a, b) {
        (
            &Value::Int {
                value: x,
                bits,
                signed,
            },
            &Value::Int { value: y, .. },
        ) => {
            let v = int_binary(op, x, y, bits, signed)?;
            Some(Value::Int {
                value: wrap(v, bits, signed),
                bits,
                signed,
            })
        }
        (
            &Value::Float {
                value: x, double, ..
            },
            &Value::Float { value: y, .. },
        ) => {
            let v = match op {
                Opcode::Add => x + y,
                Opcode::Subtract => x - y,
                Opcode::Multiply => x * y,
                Opcode::Divide => x / y,
                Opcode::Remainder => x % y,
                Opcode::Maximum => x.max(y),
                Opcode::Minimum => x.min(y),
                Opcode::Power => x.powf(y),
                Opcode::Atan2 => x.atan2(y),
                _ => return None,
            };
            Some(float(v, double))
        }
        (&Value::Pred(x), &Value::Pred(y)) => Some(Value::Pred(match op {
            Opcode::And | Opcode::Minimum | Opcode::Multiply => x && y,
            Opcode::Or | Opcode::Maximum | Opcode::Add => x || y,
            Opcode::Xor => x != y,
            _ => return None,
        })),
        _ => None,
    }
}

fn int_binary(op: &Opcode, x: i128, y: i128, bits: u32, signed: bool) -> Option<i128> {
    let min = if signed { -(1i128 << (bits - 1)) } else { 0 };
    let unsigned = |v: i128| v.rem_euclid(1i128 << bits);
    Some(match op {
        Opcode::Add => x + y,
        Opcode::Subtract => x - y,
        Opcode::Multiply => x.wrapping_mul(y),
        Opcode::Divide if y == 0 => -1,
        Opcode::Divide if x == min && y == -1 => x,
        Opcode::Divide => x / y,
        Opcode::Remainder if y == 0 => x,
        Opcode::Remainder if x == min && y == -1 => 0,
        Opcode::Remainder => x % y,
        Opcode::Maximum => x.max(y),
        Opcode::Minimum => x.min(y),
        Opcode::And => x & y,
        Opcode::Or => x | y,
        Opcode::Xor => x ^ y,
        Opcode::ShiftLeft if y < 0 || y >= i128::from(bits) => 0,
        Opcode::ShiftLeft => x.wrapping_shl(y as u32),
        Opcode::ShiftRightLogical if y < 0 || y >= i128::from(bits) => 0,
        Opcode::ShiftRightLogical => unsigned(x) >> y,
        Opcode::ShiftRightArithmetic if y < 0 || y >= i128::from(bits) => {
            if x < 0 {
                -1
            } else {
                0
            }
        }
        Opcode::ShiftRightArithmetic => x >> y,
        Opcode::Power if y >= 0 => {
            let mut acc: i128 = 1;
            for _ in 0..y.min(128) {
                acc = wrap(acc.wrapping_mul(x), bits, signed);
            }
            acc
        }
        _ => return None,
    })
}

fn unary(op: &Opcode, a: &Value) -> Option<Value> {
    match *a {
        Value::Int {
            value,
            bits,
            signed,
        } => {
            let v = match op {
                Opcode::Negate => -value,
                Opcode::Abs => value.abs(),
                Opcode::Sign => value.signum(),
                Opcode::Not => !value,
                _ => return None,
            };
            Some(Value::Int {
                value: wrap(v, bits, signed),
                bits,
                signed,
            })
        }
        Value::Float { value, double } => {
            let v = match op {
                Opcode::Negate => -value,
                Opcode::Abs => value.abs(),
                Opcode::Floor => value.floor(),
                Opcode::Ceil => value.ceil(),
                Opcode::Sqrt => value.sqrt(),
                Opcode::Exp => value.exp(),
                Opcode::Log => value.ln(),
                _ => return None,
            };
            Some(float(v, double))
        }
        Value::Pred(b) => match op {
            Opcode::Not => Some(Value::Pred(!b)),
            _ => None,
        },
        Value::Tuple(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_root(text: &str) -> Result<Value, EvalError> {
        let file = crate::model::parse_hlo(text);
        let module = &file.modules[0];
        let entry = module.entry_computation().unwrap();
        let root = entry.model().root_instruction().unwrap();
        evaluate(module, entry, root, &[])
    }

    #[test]
    fn integers_wrap_at_their_width_and_divide_as_xla() {
        let v = eval_root("ENTRY e {\n a = s8[] constant(127)\n b = s8[] constant(1)\n ROOT c = s8[] add(a, b)\n}\n");
        assert_eq!(v.unwrap().as_i64(), Some(-128));
        let v = eval_root("ENTRY e {\n a = s32[] constant(7)\n b = s32[] constant(0)\n ROOT c = s32[] divide(a, b)\n}\n");
        assert_eq!(v.unwrap().as_i64(), Some(-1));
        let v = eval_root("ENTRY e {\n a = u32[] constant(0)\n b = u32[] constant(1)\n ROOT c = u32[] subtract(a, b)\n}\n");
        assert_eq!(v.unwrap().as_i64(), Some(4_294_967_295));
    }

    #[test]
    fn fusions_are_evaluated_through_their_computations() {
        let v = eval_root("f {\n p = s32[] parameter(0)\n c = s32[] constant(3)\n ROOT m = s32[] multiply(p, c)\n}\nENTRY e {\n a = s32[] constant(5)\n ROOT r = s32[] fusion(a), kind=kLoop, calls=f\n}\n");
        assert_eq!(v.unwrap().as_i64(), Some(15));
    }

    #[test]
    fn parameters_and_arrays_are_refused_with_the_instruction() {
        let e = eval_root("ENTRY e {\n p = s32[] parameter(0)\n c = s32[] constant(1)\n ROOT a = s32[] add(p, c)\n}\n").unwrap_err();
        assert_eq!(e.instruction, "p");
        let e = eval_root(
            "ENTRY e {\n p = s32[4] iota(), iota_dimension=0\n ROOT n = s32[4] negate(p)\n}\n",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "`n` is not a scalar");
    }
}
