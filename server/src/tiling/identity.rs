//! The value masked loads must fill a reduction's holes with: the identity of
//! its reducer (nvFuser seed, "strong correctness": an unpredicated reduction
//! over holes is correct only if the holes hold the reducer's neutral value).
//!
//! The reducer is read from the root of the `to_apply` computation: `add` → 0,
//! `multiply` → 1, `maximum` → -inf, `minimum` → +inf, `and` → true, `or` →
//! false. XLA's Triton emitter fills masked reduction inputs with the reduce's
//! init value, so a tiling with holes in a reduced dimension is only correct
//! when the init value is that identity: [`init_is_identity`] checks it.

use std::fmt;

/// A reducer with a known identity element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reducer {
    Add,
    Multiply,
    Maximum,
    Minimum,
    And,
    Or,
}

impl Reducer {
    /// The reducer of a `to_apply` computation whose root has opcode `opcode`
    /// (`None` for anything else: no identity is known).
    pub fn from_opcode(opcode: &str) -> Option<Reducer> {
        Some(match opcode {
            "add" => Reducer::Add,
            "multiply" => Reducer::Multiply,
            "maximum" => Reducer::Maximum,
            "minimum" => Reducer::Minimum,
            "and" => Reducer::And,
            "or" => Reducer::Or,
            _ => return None,
        })
    }

    /// The identity as XLA spells a literal of element type `element`
    /// (`pred`, integer or floating point): `0`, `1`, `-inf`, `inf`, `true`,
    /// `false`; for integers, maximum/minimum use the type's bounds.
    pub fn identity(&self, element: &str) -> String {
        let is_float = element.starts_with('f') || element.starts_with("bf");
        let is_pred = element == "pred";
        match self {
            Reducer::Add if is_pred => "false".into(),
            Reducer::Multiply if is_pred => "true".into(),
            Reducer::Add => "0".into(),
            Reducer::Multiply => "1".into(),
            Reducer::Maximum if is_float => "-inf".into(),
            Reducer::Minimum if is_float => "inf".into(),
            Reducer::Maximum if is_pred => "false".into(),
            Reducer::Minimum if is_pred => "true".into(),
            Reducer::Maximum => int_bound(element, false),
            Reducer::Minimum => int_bound(element, true),
            Reducer::And => "true".into(),
            Reducer::Or => "false".into(),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Reducer::Add => "add",
            Reducer::Multiply => "multiply",
            Reducer::Maximum => "maximum",
            Reducer::Minimum => "minimum",
            Reducer::And => "and",
            Reducer::Or => "or",
        }
    }
}

impl fmt::Display for Reducer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The smallest (for maximum) or largest (for minimum) value of an integer type.
fn int_bound(element: &str, max: bool) -> String {
    let bits: u32 = element
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .unwrap_or(32)
        .clamp(1, 64);
    let unsigned = element.starts_with('u');
    let value: i128 = match (unsigned, max) {
        (true, false) => 0,
        (true, true) => (1i128 << bits) - 1,
        (false, false) => -(1i128 << (bits - 1)),
        (false, true) => (1i128 << (bits - 1)) - 1,
    };
    value.to_string()
}

/// Whether the init literal text (`0`, `-0.0`, `-inf`, `0x0`...) denotes the
/// reducer's identity for `element`. `None` when the literal cannot be read.
pub fn init_is_identity(reducer: Reducer, element: &str, literal: &str) -> Option<bool> {
    let lit = literal
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .trim();
    let want = reducer.identity(element);
    if lit == want {
        return Some(true);
    }
    match (lit, want.as_str()) {
        ("true" | "false", _) | (_, "true" | "false") => return Some(false),
        _ => {}
    }
    let value = |s: &str| -> Option<f64> {
        match s.to_ascii_lowercase().as_str() {
            "inf" | "+inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            "nan" | "-nan" => Some(f64::NAN),
            t => t.parse::<f64>().ok(),
        }
    };
    let (a, b) = (value(lit)?, value(&want)?);
    Some(a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_by_reducer() {
        assert_eq!(Reducer::from_opcode("add").unwrap().identity("f32"), "0");
        assert_eq!(Reducer::Multiply.identity("bf16"), "1");
        assert_eq!(Reducer::Maximum.identity("f32"), "-inf");
        assert_eq!(Reducer::Minimum.identity("f16"), "inf");
        assert_eq!(Reducer::Maximum.identity("s8"), "-128");
        assert_eq!(Reducer::Minimum.identity("u8"), "255");
        assert_eq!(Reducer::And.identity("pred"), "true");
        assert_eq!(Reducer::from_opcode("subtract"), None);
    }

    #[test]
    fn init_literals() {
        assert_eq!(init_is_identity(Reducer::Add, "f32", "0"), Some(true));
        assert_eq!(init_is_identity(Reducer::Add, "f32", "-0.0"), Some(true));
        assert_eq!(init_is_identity(Reducer::Add, "f32", "1"), Some(false));
        assert_eq!(
            init_is_identity(Reducer::Maximum, "f32", "-inf"),
            Some(true)
        );
        assert_eq!(init_is_identity(Reducer::Maximum, "f32", "0"), Some(false));
        assert_eq!(
            init_is_identity(Reducer::Minimum, "bf16", "inf"),
            Some(true)
        );
        assert_eq!(init_is_identity(Reducer::Or, "pred", "false"), Some(true));
        assert_eq!(init_is_identity(Reducer::Add, "f32", "x"), None);
    }
}
