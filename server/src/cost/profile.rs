//! What one element of an elementwise op costs, in "flops": the clock cycles
//! XLA measured on an RTX A6000 (`sm_86`) with `hlo_op_profiler_run`, from
//! `xla/service/gpu/model/hlo_op_profiles_data.h`. XLA looks the device's
//! compute capability up in that table and falls back to `sm_86`; only the
//! `sm_86` entries are carried here, so every device uses them (XLA's fallback).
//! An op the table does not list costs 3 (`kDefaultFlopsPerElement`: "elementwise
//! instructions typically take at least a few clock cycles"), which is why a
//! plain f32 `add` counts 3.

use crate::model::PrimitiveType;

/// `kDefaultFlopsPerElement`.
pub const DEFAULT_FLOPS_PER_ELEMENT: i64 = 3;

/// `(opcode, element type, clock cycles)` of `sm_86`.
const SM_86: &[(&str, &str, i64)] = &[
    ("divide", "s8", 370),
    ("power", "s8", 392),
    ("divide", "s16", 367),
    ("power", "s16", 396),
    ("divide", "s32", 306),
    ("divide", "s64", 918),
    ("power", "s64", 601),
    ("divide", "u8", 306),
    ("power", "u8", 388),
    ("divide", "u16", 302),
    ("power", "u16", 399),
    ("divide", "u32", 115),
    ("divide", "u64", 838),
    ("power", "u64", 604),
    ("cbrt", "f16", 925),
    ("cosine", "f16", 691),
    ("exponential", "f16", 108),
    ("exponential-minus-one", "f16", 396),
    ("log", "f16", 266),
    ("log-plus-one", "f16", 284),
    ("logistic", "f16", 226),
    ("rsqrt", "f16", 97),
    ("sqrt", "f16", 97),
    ("tanh", "f16", 212),
    ("atan2", "f16", 482),
    ("power", "f16", 975),
    ("cbrt", "f32", 867),
    ("cosine", "f32", 662),
    ("exponential", "f32", 86),
    ("exponential-minus-one", "f32", 381),
    ("log", "f32", 244),
    ("log-plus-one", "f32", 262),
    ("logistic", "f32", 176),
    ("rsqrt", "f32", 75),
    ("sine", "f32", 662),
    ("sqrt", "f32", 75),
    ("tanh", "f32", 190),
    ("atan2", "f32", 486),
    ("power", "f32", 925),
    ("cbrt", "f64", 6339),
    ("cosine", "f64", 1717),
    ("exponential", "f64", 1652),
    ("exponential-minus-one", "f64", 1900),
    ("log", "f64", 608),
    ("log-plus-one", "f64", 2073),
    ("logistic", "f64", 2412),
    ("rsqrt", "f64", 698),
    ("sine", "f64", 1789),
    ("sqrt", "f64", 986),
    ("tanh", "f64", 1609),
    ("add", "f64", 97),
    ("atan2", "f64", 3747),
    ("divide", "f64", 2016),
    ("multiply", "f64", 97),
    ("power", "f64", 5511),
    ("subtract", "f64", 97),
    ("exponential", "c64", 1360),
    ("exponential-minus-one", "c64", 1400),
    ("log", "c64", 950),
    ("log-plus-one", "c64", 842),
    ("rsqrt", "c64", 2383),
    ("sqrt", "c64", 3193),
    ("atan2", "c64", 5353),
    ("divide", "c64", 687),
    ("power", "c64", 3351),
    ("cosine", "c128", 6613),
    ("exponential", "c128", 4028),
    ("exponential-minus-one", "c128", 4161),
    ("log", "c128", 7599),
    ("log-plus-one", "c128", 6962),
    ("rsqrt", "c128", 11318),
    ("sine", "c128", 5878),
    ("sqrt", "c128", 15606),
    ("tanh", "c128", 9939),
    ("add", "c128", 97),
    ("atan2", "c128", 39027),
    ("divide", "c128", 7941),
    ("multiply", "c128", 270),
    ("power", "c128", 18205),
    ("subtract", "c128", 97),
];

/// A table of clock cycles per element, `(opcode, element type, cycles)`: the
/// `HloOpProfile` a `GpuHloCostAnalysis` is built with. Ops it does not list
/// cost [`DEFAULT_FLOPS_PER_ELEMENT`].
#[derive(Clone, Copy, Debug)]
pub struct Profile<'a> {
    entries: &'a [(&'a str, &'a str, i64)],
}

impl<'a> Profile<'a> {
    /// XLA's default profile (`sm_86`, measured on an RTX A6000).
    pub const SM_86: Profile<'static> = Profile { entries: SM_86 };

    /// A profile of one's own (XLA's tests pass one to the cost analysis).
    pub fn new(entries: &'a [(&'a str, &'a str, i64)]) -> Profile<'a> {
        Profile { entries }
    }

    /// `GetFlopsPerElementwiseOpElement(type, opcode)`.
    pub fn flops_per_element(&self, opcode: &str, element: &PrimitiveType) -> i64 {
        let ty = element.name();
        self.entries
            .iter()
            .find(|(op, t, _)| *op == opcode && *t == ty)
            .map_or(DEFAULT_FLOPS_PER_ELEMENT, |&(_, _, cycles)| cycles)
    }
}

/// XLA's `FlopsPerElement(device, type, opcode)` for an elementwise op producing
/// `element` values (the `sm_86` profile).
pub fn flops_per_element(opcode: &str, element: &PrimitiveType) -> i64 {
    Profile::SM_86.flops_per_element(opcode, element)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_ops_cost_their_cycles_others_three() {
        let f32 = PrimitiveType::from_name("f32");
        assert_eq!(flops_per_element("exponential", &f32), 86);
        assert_eq!(flops_per_element("power", &f32), 925);
        assert_eq!(flops_per_element("add", &f32), 3);
        assert_eq!(
            flops_per_element("compare", &PrimitiveType::from_name("pred")),
            3
        );
    }
}
