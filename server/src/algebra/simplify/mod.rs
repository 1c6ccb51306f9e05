//! The simplifier: rewrites result and constraint expressions to simpler equal
//! ones using variable bounds and constraints, to a fixpoint (bounded).
//!
//! The map is converted once into hash-consed nodes (`arena`): equal
//! sub-expressions share one id, so ranges and simplified forms are computed once
//! per node and context (`rewriter`), and nothing is allocated per rule. The
//! arena and caches live in a per-thread workspace reused across calls. The map is
//! written back only when something changed.
//!
//! Rules, one function each, named after what they do, with XLA's or tinygrad's
//! name in the doc comment: `sum` (XLA's `RewriteSum`: div/mod recombination),
//! `floordiv` (XLA's `RewriteFloorDiv`, tinygrad's division folding), `modulo`
//! (XLA's `RewriteMod`, tinygrad's modulo folding), `divmod` (what both share),
//! `divisor_expr` (non-constant divisors), `min_max`, and `constraints` (XLA's
//! constraint simplification).
//!
//! Every simplification has a work budget ([`STEP_BUDGET`] steps). Hostile input
//! (thousand-term sums, constants near the `i64` limits, deep nests of floordiv
//! and mod) either finishes within it or is left as it was:
//! [`IndexingMap::try_simplify`] says so, [`IndexingMap::simplify`] keeps the map.

pub mod arena;
pub mod constraints;
mod divisor_expr;
mod divmod;
mod floordiv;
pub mod linear;
mod min_max;
mod modulo;
pub mod rewriter;
mod sum;
mod working_map;

use std::cell::RefCell;
use std::fmt;

use arena::Arena;
use rewriter::{Caches, Fuel, Rewriter};
use working_map::WorkingMap;

use super::map::{IndexingMap, MapState};

/// Upper bound on map-level rounds (each round simplifies the constraints and
/// every result); real maps converge in two or three.
const MAX_MAP_ROUNDS: usize = 8;

/// The work budget of one map's simplification, in rewriter steps. The
/// conformance suites need at most a few thousand; a step costs well under a
/// microsecond, so the budget bounds a simplification to tens of milliseconds.
pub const STEP_BUDGET: u64 = 100_000;

/// Simplification ran out of its work budget; the map was left as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimplifyLimit {
    /// Steps spent before giving up.
    pub steps: u64,
}

impl fmt::Display for SimplifyLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "simplification stopped at its work limit ({} steps); the map is left unsimplified",
            self.steps
        )
    }
}

impl std::error::Error for SimplifyLimit {}

/// The arena and caches, reused by every simplification on a thread.
#[derive(Default)]
struct Workspace {
    arena: Arena,
    caches: Caches,
}

thread_local! {
    static WORKSPACE: RefCell<Workspace> = RefCell::new(Workspace::default());
}

/// Runs `f` with a cleared workspace (the thread's own, or a fresh one if that
/// is in use).
fn with_workspace<R>(f: impl FnOnce(&mut Workspace) -> R) -> R {
    WORKSPACE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut ws) => {
            ws.arena.clear();
            ws.caches.clear();
            f(&mut ws)
        }
        Err(_) => f(&mut Workspace::default()),
    })
}

impl IndexingMap {
    /// Simplifies results and constraints in place, to a fixpoint. Returns `true`
    /// when anything changed. A map whose simplification exceeds the work budget
    /// is left as it was (see [`IndexingMap::try_simplify`]).
    pub fn simplify(&mut self) -> bool {
        self.try_simplify().unwrap_or(false)
    }

    /// [`IndexingMap::simplify`], saying when the work budget ran out (the map is
    /// then unchanged).
    pub fn try_simplify(&mut self) -> Result<bool, SimplifyLimit> {
        self.try_simplify_within(STEP_BUDGET)
    }

    /// [`IndexingMap::try_simplify`] with a given budget of rewriter steps.
    pub fn try_simplify_within(&mut self, steps: u64) -> Result<bool, SimplifyLimit> {
        if self.state != MapState::Defined {
            return Ok(false);
        }
        with_workspace(|ws| {
            let mut fuel = Fuel::new(steps);
            let original = WorkingMap::of(self, &mut ws.arena);
            let mut work = original.clone();
            simplify_rounds(&mut work, ws, &mut fuel);
            if fuel.is_exhausted() {
                return Err(SimplifyLimit {
                    steps: fuel.spent(),
                });
            }
            if work == original {
                return Ok(false);
            }
            work.write_back(&original, &ws.arena, self);
            Ok(true)
        })
    }

    /// A simplified copy.
    pub fn simplified(&self) -> IndexingMap {
        let mut m = self.clone();
        m.simplify();
        m
    }
}

/// Constraints then results, until the domain stops changing (results are
/// simplified to a fixpoint for a given domain, so another round is needed only
/// when the constraints changed it).
fn simplify_rounds(map: &mut WorkingMap, ws: &mut Workspace, fuel: &mut Fuel) {
    for _ in 0..MAX_MAP_ROUNDS {
        let unchanged = simplify_domain(map, ws, fuel);
        if map.known_empty || fuel.is_exhausted() {
            break;
        }
        simplify_results(map, ws, fuel);
        if unchanged || fuel.is_exhausted() {
            break;
        }
    }
}

/// Simplifies the constraints; `true` when the domain stayed as it was.
fn simplify_domain(map: &mut WorkingMap, ws: &mut Workspace, fuel: &mut Fuel) -> bool {
    if map.constraints.is_empty() {
        // Nothing to simplify (most maps): no copy of the domain to compare.
        return true;
    }
    let before = (map.bounds.clone(), map.constraints.clone());
    constraints::simplify_constraints(map, &mut ws.arena, &mut ws.caches, fuel);
    before.0 == map.bounds && before.1 == map.constraints
}

/// Every result to its fixpoint under the map's bounds and constraints.
fn simplify_results(map: &mut WorkingMap, ws: &mut Workspace, fuel: &mut Fuel) {
    ws.caches.clear();
    let mut rw = Rewriter::new(
        &mut ws.arena,
        &map.bounds,
        &map.constraints,
        &mut ws.caches,
        fuel,
    );
    for result in map.results.iter_mut() {
        *result = rw.fixpoint(*result);
    }
}

/// Merges modulus constraints on the same variable (for
/// `IndexingMap::rescale_symbols`); see [`constraints::merge_mod_constraints`].
pub(crate) fn merge_mod_constraints(map: &mut IndexingMap) {
    if map.state != MapState::Defined {
        return;
    }
    with_workspace(|ws| {
        let original = WorkingMap::of(map, &mut ws.arena);
        let mut work = original.clone();
        constraints::merge_mod_constraints(&mut work, &mut ws.arena);
        if work != original {
            work.write_back(&original, &ws.arena, map);
        }
    });
}
