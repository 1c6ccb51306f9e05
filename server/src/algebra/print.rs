//! Printer of XLA's indexing-map text (and of MLIR's `affine_map<...>`).
//!
//! Bracketing follows XLA's printer so that strings compare with XLA's output:
//! `+` binds weakest and brackets only a right-hand sum; `*`, `floordiv`,
//! `ceildiv` and `mod` bracket any compound operand; a product by `-1` prints as a
//! leading `-`, and `a + b * -c` / `a + -c` print as subtractions.
//! Constraints are listed in lexicographic order of their text, as XLA does.

use std::fmt::{self, Write};

use super::expr::{BinOp, Expr};
use super::interval::Interval;
use super::map::{IndexingMap, MapState};
use super::variable::{Var, VarKind, Variable};

/// How floor division is spelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DivSpelling {
    /// `floordiv`, as the indexing documentation and older XLA write it.
    #[default]
    FloorDiv,
    /// `/`, as XLA prints since mid-2026.
    Slash,
}

/// Printing options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PrintOptions {
    pub div: DivSpelling,
    /// One line per domain entry (XLA's `ToString`), or everything on one line.
    pub multiline: bool,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions {
            div: DivSpelling::FloorDiv,
            multiline: true,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Strength {
    Weak,
    Strong,
}

/// Names of the variables of one map, for printing expressions.
pub struct VarNames<'a> {
    pub dims: &'a [Variable],
    pub range_vars: &'a [Variable],
    pub runtime_vars: &'a [Variable],
}

impl VarNames<'_> {
    fn name(&self, v: Var) -> String {
        let vars = match v.kind {
            VarKind::Dim => self.dims,
            VarKind::Range => self.range_vars,
            VarKind::Runtime => self.runtime_vars,
        };
        match vars.get(v.index) {
            Some(var) => var.display_name(v.kind, v.index),
            None => format!("{}{}", v.kind.default_prefix(), v.index),
        }
    }
}

/// Writes `expr` with the given variable names.
pub fn write_expr(out: &mut String, expr: &Expr, names: &VarNames<'_>, div: DivSpelling) {
    write_inner(out, expr, Strength::Weak, &|v| names.name(v), div);
}

fn write_inner(
    out: &mut String,
    expr: &Expr,
    strength: Strength,
    name: &dyn Fn(Var) -> String,
    div: DivSpelling,
) {
    match expr {
        Expr::Const(c) => {
            let _ = write!(out, "{c}");
        }
        Expr::Var(v) => out.push_str(&name(*v)),
        Expr::Add(a, b) => {
            if strength == Strength::Strong {
                out.push('(');
            }
            write_inner(out, a, Strength::Weak, name, div);
            write_addend(out, b, name, div);
            if strength == Strength::Strong {
                out.push(')');
            }
        }
        Expr::Min(a, b) | Expr::Max(a, b) => {
            out.push_str(if matches!(expr, Expr::Min(..)) {
                "min("
            } else {
                "max("
            });
            write_inner(out, a, Strength::Weak, name, div);
            out.push_str(", ");
            write_inner(out, b, Strength::Weak, name, div);
            out.push(')');
        }
        _ => {
            let (op, a, b) = expr.as_binary().expect("binary node");
            if op == BinOp::Mul && b.as_const() == Some(-1) {
                out.push('-');
                write_inner(out, a, Strength::Strong, name, div);
                return;
            }
            if strength == Strength::Strong {
                out.push('(');
            }
            write_inner(out, a, Strength::Strong, name, div);
            out.push_str(match op {
                BinOp::Mul => " * ",
                BinOp::FloorDiv if div == DivSpelling::Slash => " / ",
                BinOp::FloorDiv => " floordiv ",
                BinOp::CeilDiv => " ceildiv ",
                _ => " mod ",
            });
            write_inner(out, b, Strength::Strong, name, div);
            if strength == Strength::Strong {
                out.push(')');
            }
        }
    }
}

/// Writes ` + b`, or ` - x` when `b` is a negated term or a negative constant.
fn write_addend(out: &mut String, b: &Expr, name: &dyn Fn(Var) -> String, div: DivSpelling) {
    match b {
        Expr::Const(c) if *c < 0 && *c != i64::MIN => {
            let _ = write!(out, " - {}", -c);
        }
        Expr::Mul(x, c) if c.as_const() == Some(-1) => {
            out.push_str(" - ");
            let strength = if matches!(**x, Expr::Add(..)) {
                Strength::Strong
            } else {
                Strength::Weak
            };
            write_inner(out, x, strength, name, div);
        }
        Expr::Mul(x, c) if c.as_const().is_some_and(|c| c < 0 && c != i64::MIN) => {
            out.push_str(" - ");
            let positive = Expr::Mul(x.clone(), Box::new(Expr::Const(-c.as_const().unwrap())));
            write_inner(out, &positive, Strength::Weak, name, div);
        }
        _ => {
            out.push_str(" + ");
            let strength = if matches!(b, Expr::Add(..)) {
                Strength::Strong
            } else {
                Strength::Weak
            };
            write_inner(out, b, strength, name, div);
        }
    }
}

impl IndexingMap {
    fn names(&self) -> VarNames<'_> {
        VarNames {
            dims: &self.dims,
            range_vars: &self.range_vars,
            runtime_vars: &self.runtime_vars,
        }
    }

    /// Prints one expression with this map's variable names.
    pub fn expr_to_string(&self, expr: &Expr, div: DivSpelling) -> String {
        let mut out = String::new();
        write_expr(&mut out, expr, &self.names(), div);
        out
    }

    /// Prints the map as XLA does.
    pub fn print(&self, options: &PrintOptions) -> String {
        match self.state {
            MapState::Undefined => return "UNDEFINED".to_string(),
            MapState::KnownEmpty => return "KNOWN EMPTY".to_string(),
            MapState::Defined => {}
        }
        let names = self.names();
        let mut out = String::new();
        let list = |out: &mut String, vars: &[Variable], kind: VarKind| {
            for (i, v) in vars.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&v.display_name(kind, i));
            }
        };
        out.push('(');
        list(&mut out, &self.dims, VarKind::Dim);
        out.push(')');
        if !self.range_vars.is_empty() {
            out.push('[');
            list(&mut out, &self.range_vars, VarKind::Range);
            out.push(']');
        }
        if !self.runtime_vars.is_empty() {
            out.push('{');
            list(&mut out, &self.runtime_vars, VarKind::Runtime);
            out.push('}');
        }
        out.push_str(" -> (");
        for (i, r) in self.results.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_expr(&mut out, r, &names, options.div);
        }
        out.push(')');
        let mut entries = Vec::new();
        for (kind, vars) in [
            (VarKind::Dim, &self.dims),
            (VarKind::Range, &self.range_vars),
            (VarKind::Runtime, &self.runtime_vars),
        ] {
            for (i, v) in vars.iter().enumerate() {
                // Unbounded variables (an affine map without a domain) say nothing.
                if v.bounds != Interval::FULL {
                    entries.push(format!("{} in {}", v.display_name(kind, i), v.bounds));
                }
            }
        }
        let mut constraints: Vec<String> = self
            .constraints
            .iter()
            .map(|(e, r)| {
                let mut s = String::new();
                write_expr(&mut s, e, &names, options.div);
                let _ = write!(s, " in {r}");
                s
            })
            .collect();
        constraints.sort();
        entries.extend(constraints);
        if !entries.is_empty() {
            let sep = if options.multiline { ",\n" } else { ", " };
            out.push_str(if options.multiline {
                ",\ndomain:\n"
            } else {
                ", domain: "
            });
            out.push_str(&entries.join(sep));
        }
        out
    }

    /// Prints the function part as an MLIR `affine_map<...>`: runtime variables
    /// become symbols after the range variables, the domain is dropped.
    pub fn to_affine_map(&self) -> String {
        let num_symbols = self.range_vars.len() + self.runtime_vars.len();
        let num_ranges = self.range_vars.len();
        let name = |v: Var| match v.kind {
            VarKind::Dim => format!("d{}", v.index),
            VarKind::Range => format!("s{}", v.index),
            VarKind::Runtime => format!("s{}", num_ranges + v.index),
        };
        let mut out = String::from("affine_map<(");
        out.push_str(
            &(0..self.dims.len())
                .map(|i| format!("d{i}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
        out.push(')');
        if num_symbols > 0 {
            out.push('[');
            out.push_str(
                &(0..num_symbols)
                    .map(|i| format!("s{i}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            out.push(']');
        }
        out.push_str(" -> (");
        for (i, r) in self.results.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_inner(&mut out, r, Strength::Weak, &name, DivSpelling::FloorDiv);
        }
        out.push_str(")>");
        out
    }
}

impl fmt::Display for IndexingMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.print(&PrintOptions::default()))
    }
}

impl fmt::Display for Expr {
    /// Prints with default variable names (`d0`, `s0`, `rt0`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        write_inner(
            &mut out,
            self,
            Strength::Weak,
            &|v| format!("{}{}", v.kind.default_prefix(), v.index),
            DivSpelling::FloorDiv,
        );
        f.write_str(&out)
    }
}
