//! Why the indexing of a read is not known.
//!
//! The reason travels with the maps to every reader (hover, `maps`, coalescing, cost)
//! and prints in its own words, but it is a type, not prose: a caller tells a read
//! cut short by the budget (ask again) from an op XLA gives no indexing (final), from
//! an instruction that breaks its op's rules (a shape diagnostic says more), and the
//! cache of fused maps knows that only a recursive call names the computations it
//! was found in ([`Unknown::names_computations`]) without searching the text.

use std::borrow::Cow;
use std::fmt;

/// Why a read has no known indexing map.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Unknown {
    /// The analysis ran out of its time budget before reaching this read.
    Stopped,
    /// XLA defines no static indexing here (dynamic shapes, asynchronous wrappers,
    /// an op without indexing, an undefined map): the answer is final.
    NoIndexing(Cow<'static, str>),
    /// XLA has an indexing this analysis does not model.
    NotModelled(Cow<'static, str>),
    /// The instruction does not fit its op's rules (attributes against shapes, a
    /// query for an output or operand that is not there).
    Malformed(Cow<'static, str>),
    /// A computation calls itself through `chain` (computation names, the repeated
    /// one last); the composition stops there.
    RecursiveCall { chain: Vec<String> },
    /// Called computations nest deeper than `limit`.
    TooDeep { limit: usize },
    /// Composing would build a map of `nodes` expression nodes, over `limit`.
    TooLarge { nodes: usize, limit: usize },
}

impl Unknown {
    pub fn no_indexing(why: impl Into<Cow<'static, str>>) -> Unknown {
        Unknown::NoIndexing(why.into())
    }

    pub fn not_modelled(why: impl Into<Cow<'static, str>>) -> Unknown {
        Unknown::NotModelled(why.into())
    }

    pub fn malformed(why: impl Into<Cow<'static, str>>) -> Unknown {
        Unknown::Malformed(why.into())
    }

    /// True when the reason names computations of the module it was found in: maps
    /// carrying it hold for that module's computation alone, not for every
    /// computation equal up to names.
    pub fn names_computations(&self) -> bool {
        matches!(self, Unknown::RecursiveCall { .. })
    }
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unknown::Stopped => f.write_str(crate::budget::STOPPED),
            Unknown::NoIndexing(why) | Unknown::NotModelled(why) | Unknown::Malformed(why) => {
                f.write_str(why)
            }
            Unknown::RecursiveCall { chain } => {
                let names: Vec<String> = chain.iter().map(|n| format!("`{n}`")).collect();
                write!(
                    f,
                    "recursive call: {} (not composed)",
                    names.join(" calls ")
                )
            }
            Unknown::TooDeep { limit } => write!(
                f,
                "called computations nested more than {limit} deep (not composed)"
            ),
            Unknown::TooLarge { nodes, limit } => write!(
                f,
                "the composed map would have {nodes} expression nodes, more than the {limit} built"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_print_as_the_analysis_always_said_them() {
        let chain = vec!["a".to_string(), "b".to_string(), "a".to_string()];
        assert_eq!(
            Unknown::RecursiveCall { chain }.to_string(),
            "recursive call: `a` calls `b` calls `a` (not composed)"
        );
        assert_eq!(
            Unknown::TooDeep { limit: 64 }.to_string(),
            "called computations nested more than 64 deep (not composed)"
        );
        assert_eq!(Unknown::Stopped.to_string(), crate::budget::STOPPED);
        assert_eq!(
            Unknown::malformed("dot has two operands").to_string(),
            "dot has two operands"
        );
    }

    #[test]
    fn only_a_recursive_call_names_computations() {
        assert!(Unknown::RecursiveCall { chain: vec![] }.names_computations());
        assert!(!Unknown::no_indexing("no indexing is defined for `foo`").names_computations());
        assert!(!Unknown::Stopped.names_computations());
    }
}
