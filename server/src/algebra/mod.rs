//! The indexing-map algebra: affine expressions over dimension, range and runtime
//! variables, `IndexingMap` with its domain, composition, the simplifier, and the
//! text format (XLA's map syntax and MLIR's `affine_map`).
//!
//! Plain library code: no LSP, no async, no tree-sitter types.

pub mod compiled;
pub mod compose;
pub mod expr;
pub mod interval;
pub mod map;
pub mod parse;
pub mod print;
pub mod simplify;
pub mod variable;

pub use compiled::CompiledMap;
pub use expr::{BinOp, Expr};
pub use interval::Interval;
pub use map::{IndexingMap, MapState};
pub use parse::{parse_expr, ParseError};
pub use print::{DivSpelling, PrintOptions};
pub use variable::{Var, VarKind, Variable};
