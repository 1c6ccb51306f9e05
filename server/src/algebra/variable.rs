//! Variables of an indexing map: which kind (dimension, range, runtime), their
//! position, and their declared bounds and display name.

use super::interval::Interval;

/// The three kinds of map arguments. Dimensions index the tensor we map from,
/// range variables enumerate the many elements one element needs (reduction
/// windows, contracting dimensions), runtime variables are only known at run time
/// (dynamic-slice offsets, gather indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VarKind {
    Dim,
    Range,
    Runtime,
}

impl VarKind {
    /// The prefix of the default name, as XLA prints unnamed variables.
    pub fn default_prefix(self) -> &'static str {
        match self {
            VarKind::Dim => "d",
            VarKind::Range => "s",
            VarKind::Runtime => "rt",
        }
    }
}

/// A reference to one variable of a map: its kind and position among that kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var {
    pub kind: VarKind,
    pub index: usize,
}

impl Var {
    pub fn dim(index: usize) -> Var {
        Var {
            kind: VarKind::Dim,
            index,
        }
    }
    pub fn range(index: usize) -> Var {
        Var {
            kind: VarKind::Range,
            index,
        }
    }
    pub fn runtime(index: usize) -> Var {
        Var {
            kind: VarKind::Runtime,
            index,
        }
    }
}

/// A declared variable: inclusive bounds and a name. An empty name means "use the
/// default name for the position" (`d3`, `s0`, `rt1`), so that removing a variable
/// renumbers the default names the way XLA does.
#[derive(Clone, Debug, Eq)]
pub struct Variable {
    pub bounds: Interval,
    pub name: String,
}

impl PartialEq for Variable {
    /// Bounds first, and names compared only when not both default: the
    /// memos of composed maps compare maps' variables by the million, nearly
    /// all unnamed, and comparing two empty strings still calls `memcmp`.
    fn eq(&self, other: &Variable) -> bool {
        self.bounds == other.bounds
            && self.name.len() == other.name.len()
            && (self.name.is_empty() || self.name == other.name)
    }
}

impl std::hash::Hash for Variable {
    /// What [`Variable::eq`] compares: bounds and name.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.bounds.hash(state);
        self.name.hash(state);
    }
}

impl Variable {
    pub fn new(lo: i64, hi: i64) -> Variable {
        Variable {
            bounds: Interval::new(lo, hi),
            name: String::new(),
        }
    }

    pub fn named(lo: i64, hi: i64, name: impl Into<String>) -> Variable {
        Variable {
            bounds: Interval::new(lo, hi),
            name: name.into(),
        }
    }

    /// The name to print for this variable at position `index` of `kind`.
    pub fn display_name(&self, kind: VarKind, index: usize) -> String {
        if self.name.is_empty() {
            format!("{}{}", kind.default_prefix(), index)
        } else {
            self.name.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_equal_in_bounds_and_name() {
        let plain = Variable::new(0, 3);
        assert_eq!(plain, Variable::new(0, 3));
        assert_ne!(plain, Variable::new(0, 4));
        assert_ne!(plain, Variable::named(0, 3, "d0"));
        assert_eq!(Variable::named(0, 3, "x"), Variable::named(0, 3, "x"));
        assert_ne!(Variable::named(0, 3, "x"), Variable::named(0, 3, "y"));
        assert_ne!(Variable::named(0, 3, "x"), Variable::named(1, 3, "x"));
    }
}
