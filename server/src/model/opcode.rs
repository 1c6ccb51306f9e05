//! XLA opcodes: the spelling table, how many operands each takes, and which are
//! elementwise (the analysis maps those with identity maps, shape inference checks
//! that their operands agree).

use std::fmt;

macro_rules! opcodes {
    ($($variant:ident = $name:literal, $arity:expr, $class:ident;)*) => {
        /// An HLO opcode. `Unknown` keeps the spelling of an opcode this table does not
        /// know (reported as a warning, never an error), boxed twice so that an opcode
        /// takes 16 bytes, not 24: every instruction of a dump holds one.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum Opcode {
            $($variant,)*
            Unknown(Box<Box<str>>),
        }

        const TABLE: &[(&str, Opcode, Arity, Class)] = &[
            $(($name, Opcode::$variant, $arity, Class::$class),)*
        ];

        impl Opcode {
            /// Decodes XLA's spelling; an unknown spelling gives `Opcode::Unknown`.
            pub fn from_name(name: &str) -> Opcode {
                match name {
                    $($name => Opcode::$variant,)*
                    other => Opcode::Unknown(Box::new(other.into())),
                }
            }

            /// XLA's spelling (`get-tuple-element`, `exponential`, ...).
            pub fn name(&self) -> &str {
                match self {
                    $(Opcode::$variant => $name,)*
                    Opcode::Unknown(name) => name,
                }
            }

            /// The operand counts XLA accepts; `Any` for unknown opcodes.
            pub fn arity(&self) -> Arity {
                match self {
                    $(Opcode::$variant => $arity,)*
                    Opcode::Unknown(_) => Arity::Any,
                }
            }

            pub fn class(&self) -> Class {
                match self {
                    $(Opcode::$variant => Class::$class,)*
                    Opcode::Unknown(_) => Class::Other,
                }
            }
        }
    };
}

/// How many operands an opcode accepts (XLA's parser and verifier rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    Exactly(usize),
    AtLeast(usize),
    Between(usize, usize),
    /// An even number, at least the given one (variadic reduce: inputs then inits).
    EvenAtLeast(usize),
    /// An odd number, at least the given one (variadic scatter: inputs, indices, updates).
    OddAtLeast(usize),
    Any,
}

impl Arity {
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Exactly(k) => n == k,
            Arity::AtLeast(k) => n >= k,
            Arity::Between(lo, hi) => (lo..=hi).contains(&n),
            Arity::EvenAtLeast(k) => n >= k && n.is_multiple_of(2),
            Arity::OddAtLeast(k) => n >= k && !n.is_multiple_of(2),
            Arity::Any => true,
        }
    }
}

impl fmt::Display for Arity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Arity::Exactly(1) => write!(f, "1 operand"),
            Arity::Exactly(k) => write!(f, "{k} operands"),
            Arity::AtLeast(k) => write!(f, "at least {k} operand{}", if k == 1 { "" } else { "s" }),
            Arity::Between(lo, hi) => write!(f, "{lo} to {hi} operands"),
            Arity::EvenAtLeast(k) => write!(f, "an even number of operands (at least {k})"),
            Arity::OddAtLeast(k) => write!(f, "an odd number of operands (at least {k})"),
            Arity::Any => write!(f, "any number of operands"),
        }
    }
}

/// Broad classes of opcodes used by shape inference and the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Elementwise with one operand (`negate`, `exponential`, `convert`, ...).
    Unary,
    /// Elementwise with two operands of the same shape (`add`, `compare`, ...).
    Binary,
    /// Elementwise with three operands (`select`, `clamp`: scalars broadcast implicitly).
    Ternary,
    /// Anything else.
    Other,
}

use Arity::{AtLeast, Between, EvenAtLeast, Exactly, OddAtLeast};

opcodes! {
    Abs = "abs", Exactly(1), Unary;
    Add = "add", Exactly(2), Binary;
    AddDependency = "add-dependency", Exactly(2), Other;
    AfterAll = "after-all", Arity::Any, Other;
    AllGather = "all-gather", AtLeast(1), Other;
    AllGatherDone = "all-gather-done", Exactly(1), Other;
    AllGatherStart = "all-gather-start", AtLeast(1), Other;
    AllReduce = "all-reduce", AtLeast(1), Other;
    AllReduceDone = "all-reduce-done", Exactly(1), Other;
    AllReduceStart = "all-reduce-start", AtLeast(1), Other;
    AllToAll = "all-to-all", AtLeast(1), Other;
    And = "and", Exactly(2), Binary;
    AsyncDone = "async-done", Exactly(1), Other;
    AsyncStart = "async-start", Arity::Any, Other;
    // More operands bind late (`dot-update(start, lhs)`).
    AsyncUpdate = "async-update", AtLeast(1), Other;
    Atan2 = "atan2", Exactly(2), Binary;
    BatchNormGrad = "batch-norm-grad", Exactly(5), Other;
    BatchNormInference = "batch-norm-inference", Exactly(5), Other;
    BatchNormTraining = "batch-norm-training", Exactly(3), Other;
    Bitcast = "bitcast", Exactly(1), Other;
    BitcastConvert = "bitcast-convert", Exactly(1), Other;
    Broadcast = "broadcast", Exactly(1), Other;
    Call = "call", Arity::Any, Other;
    Cbrt = "cbrt", Exactly(1), Unary;
    Ceil = "ceil", Exactly(1), Unary;
    Cholesky = "cholesky", Exactly(1), Other;
    Clamp = "clamp", Exactly(3), Ternary;
    CollectiveBroadcast = "collective-broadcast", AtLeast(1), Other;
    CollectivePermute = "collective-permute", AtLeast(1), Other;
    CollectivePermuteDone = "collective-permute-done", Exactly(1), Other;
    CollectivePermuteStart = "collective-permute-start", AtLeast(1), Other;
    Compare = "compare", Exactly(2), Binary;
    Complex = "complex", Exactly(2), Binary;
    Concatenate = "concatenate", AtLeast(1), Other;
    Conditional = "conditional", AtLeast(1), Other;
    Constant = "constant", Arity::Any, Other;
    Convert = "convert", Exactly(1), Unary;
    Convolution = "convolution", Exactly(2), Other;
    Copy = "copy", Exactly(1), Unary;
    CopyDone = "copy-done", Exactly(1), Other;
    CopyStart = "copy-start", Exactly(1), Other;
    Cosine = "cosine", Exactly(1), Unary;
    CountLeadingZeros = "count-leading-zeros", Exactly(1), Unary;
    CustomCall = "custom-call", Arity::Any, Other;
    Divide = "divide", Exactly(2), Binary;
    Domain = "domain", Exactly(1), Other;
    Dot = "dot", Exactly(2), Other;
    DynamicReshape = "dynamic-reshape", AtLeast(1), Other;
    DynamicSlice = "dynamic-slice", AtLeast(1), Other;
    DynamicUpdateSlice = "dynamic-update-slice", AtLeast(2), Other;
    Erf = "erf", Exactly(1), Unary;
    Exp = "exponential", Exactly(1), Unary;
    Expm1 = "exponential-minus-one", Exactly(1), Unary;
    Fft = "fft", Exactly(1), Other;
    Floor = "floor", Exactly(1), Unary;
    Fusion = "fusion", Arity::Any, Other;
    Gather = "gather", Exactly(2), Other;
    GetDimensionSize = "get-dimension-size", Exactly(1), Other;
    GetTupleElement = "get-tuple-element", Exactly(1), Other;
    Imag = "imag", Exactly(1), Unary;
    Infeed = "infeed", Exactly(1), Other;
    Iota = "iota", Exactly(0), Other;
    IsFinite = "is-finite", Exactly(1), Unary;
    Log = "log", Exactly(1), Unary;
    Log1p = "log-plus-one", Exactly(1), Unary;
    Logistic = "logistic", Exactly(1), Unary;
    Map = "map", AtLeast(1), Other;
    Maximum = "maximum", Exactly(2), Binary;
    Minimum = "minimum", Exactly(2), Binary;
    Multiply = "multiply", Exactly(2), Binary;
    Negate = "negate", Exactly(1), Unary;
    Not = "not", Exactly(1), Unary;
    OptimizationBarrier = "opt-barrier", Exactly(1), Other;
    Or = "or", Exactly(2), Binary;
    Outfeed = "outfeed", Exactly(2), Other;
    Pad = "pad", Exactly(2), Other;
    Parameter = "parameter", Arity::Any, Other;
    PartitionId = "partition-id", Exactly(0), Other;
    PopulationCount = "popcnt", Exactly(1), Unary;
    Power = "power", Exactly(2), Binary;
    RaggedAllToAll = "ragged-all-to-all", Exactly(6), Other;
    RaggedDot = "ragged-dot", Exactly(3), Other;
    Real = "real", Exactly(1), Unary;
    Recv = "recv", Exactly(1), Other;
    RecvDone = "recv-done", Exactly(1), Other;
    Reduce = "reduce", EvenAtLeast(2), Other;
    ReducePrecision = "reduce-precision", Exactly(1), Unary;
    ReduceScatter = "reduce-scatter", AtLeast(1), Other;
    ReduceWindow = "reduce-window", EvenAtLeast(2), Other;
    Remainder = "remainder", Exactly(2), Binary;
    ReplicaId = "replica-id", Exactly(0), Other;
    Reshape = "reshape", Exactly(1), Other;
    Reverse = "reverse", Exactly(1), Other;
    Rng = "rng", Between(2, 3), Other;
    RngBitGenerator = "rng-bit-generator", Exactly(1), Other;
    RngGetAndUpdateState = "rng-get-and-update-state", Exactly(0), Other;
    RoundNearestAfz = "round-nearest-afz", Exactly(1), Unary;
    RoundNearestEven = "round-nearest-even", Exactly(1), Unary;
    Rsqrt = "rsqrt", Exactly(1), Unary;
    Scan = "scan", AtLeast(1), Other;
    ScaledDot = "scaled-dot", Exactly(4), Other;
    Scatter = "scatter", OddAtLeast(3), Other;
    Select = "select", Exactly(3), Ternary;
    SelectAndScatter = "select-and-scatter", Exactly(3), Other;
    Send = "send", Exactly(2), Other;
    SendDone = "send-done", Exactly(1), Other;
    SetDimensionSize = "set-dimension-size", Exactly(2), Other;
    ShiftLeft = "shift-left", Exactly(2), Binary;
    ShiftRightArithmetic = "shift-right-arithmetic", Exactly(2), Binary;
    ShiftRightLogical = "shift-right-logical", Exactly(2), Binary;
    Sign = "sign", Exactly(1), Unary;
    Sine = "sine", Exactly(1), Unary;
    Slice = "slice", Exactly(1), Other;
    Sort = "sort", AtLeast(1), Other;
    Sqrt = "sqrt", Exactly(1), Unary;
    StochasticConvert = "stochastic-convert", Exactly(2), Other;
    Subtract = "subtract", Exactly(2), Binary;
    Tan = "tan", Exactly(1), Unary;
    Tanh = "tanh", Exactly(1), Unary;
    TopK = "topk", Exactly(1), Other;
    Transpose = "transpose", Exactly(1), Other;
    TriangularSolve = "triangular-solve", Exactly(2), Other;
    Tuple = "tuple", Arity::Any, Other;
    While = "while", Exactly(1), Other;
    Xor = "xor", Exactly(2), Binary;
}

impl Opcode {
    pub fn is_unknown(&self) -> bool {
        matches!(self, Opcode::Unknown(_))
    }

    /// Elementwise in XLA's sense (`HloInstruction::IsElementwise` for the opcodes
    /// whose output element `i` depends only on operand elements `i`); `map` too.
    pub fn is_elementwise(&self) -> bool {
        self.class() != Class::Other || matches!(self, Opcode::Map | Opcode::StochasticConvert)
    }

    /// Whether the result element type is `pred` (compare) or the operand's.
    pub fn is_comparison(&self) -> bool {
        matches!(self, Opcode::Compare)
    }

    /// Every known opcode, for completion and tests.
    pub fn all() -> impl Iterator<Item = &'static Opcode> {
        TABLE.iter().map(|(_, op, ..)| op)
    }
}

/// What an opcode spelled `X-start`, `X-update` or `X-done` means when `X` is an
/// opcode: XLA's parser (`ParseOpcode`) reads it as `async-start` (`-update`,
/// `-done`) wrapping `X`, except for the opcodes that have async forms of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AsyncSugar {
    /// `async`, wrapping `wrapped`.
    Async { op: Opcode, wrapped: Opcode },
    /// `X` may not be wrapped: XLA says "Unknown opcode".
    NotWrappable,
}

/// The async opcode a sugared name stands for (see [`AsyncSugar`]); `None` when the
/// name has no async suffix or its stem is no opcode.
pub fn async_sugar(name: &str) -> Option<AsyncSugar> {
    let (stem, op) = [
        ("-start", Opcode::AsyncStart),
        ("-update", Opcode::AsyncUpdate),
        ("-done", Opcode::AsyncDone),
    ]
    .into_iter()
    .find_map(|(suffix, op)| Some((name.strip_suffix(suffix)?, op)))?;
    let wrapped = Opcode::from_name(stem);
    match wrapped {
        Opcode::Unknown(_) => None,
        Opcode::AllGather
        | Opcode::AllReduce
        | Opcode::CollectivePermute
        | Opcode::Copy
        | Opcode::Recv
        | Opcode::Send => Some(AsyncSugar::NotWrappable),
        wrapped => Some(AsyncSugar::Async { op, wrapped }),
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut names = std::collections::HashSet::new();
        for op in Opcode::all() {
            assert_eq!(&Opcode::from_name(op.name()), op);
            assert!(names.insert(op.name().to_string()), "duplicate {op}");
        }
        assert_eq!(
            Opcode::from_name("frobnicate"),
            Opcode::Unknown(Box::new("frobnicate".into()))
        );
        assert_eq!(Opcode::from_name("frobnicate").arity(), Arity::Any);
    }

    #[test]
    fn arity_rules() {
        assert!(Opcode::Add.arity().accepts(2));
        assert!(!Opcode::Add.arity().accepts(3));
        assert!(Opcode::Reduce.arity().accepts(4));
        assert!(!Opcode::Reduce.arity().accepts(3));
        assert!(Opcode::Scatter.arity().accepts(5));
        assert!(!Opcode::Scatter.arity().accepts(4));
        assert!(Opcode::Rng.arity().accepts(3) && !Opcode::Rng.arity().accepts(1));
        assert!(Opcode::Exp.is_elementwise() && Opcode::Select.is_elementwise());
        assert!(!Opcode::Broadcast.is_elementwise() && !Opcode::Dot.is_elementwise());
    }
}
