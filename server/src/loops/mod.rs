//! While loops: how many times each runs, and so how many times each computation
//! runs per execution of ENTRY. A port of XLA's while-loop analysis
//! (`xla/hlo/analysis/while_loop_analysis.cc`) and of what its
//! `WhileLoopTripCountAnnotator` writes, on the model's instructions.
//!
//! A cost report weights every kernel of a while body by its loop's trip count:
//! a transformer's 32 layers in one loop are 32 times the body, not once.
//!
//! One concept per file:
//!
//! * [`hlo`]: the questions asked of the model (unique `get-tuple-element`,
//!   the one non-constant operand, copies looked through) and [`Loop`];
//! * [`eval`]: a small evaluator of scalar HLO (XLA's `HloEvaluator` as the
//!   analysis uses it), through fusions and calls;
//! * [`induction`]: which element of the loop state is the induction variable
//!   (`GetLoopInductionVarTupleIdx`);
//! * [`trip_count`]: the trivial patterns, the evaluated iterations, the range
//!   and the upper bound (`ComputeWhileLoopTripCount`, ...);
//! * [`traced`]: beyond XLA, the same evaluation on loops later passes reshaped
//!   (copies before the update, the while wrapped in a call);
//! * [`auxiliary`]: auxiliary induction variables;
//! * [`annotate`]: the `WhileLoopBackendConfig` XLA's annotator writes;
//! * [`reason`]: why a count is unknown, in a user's words;
//! * [`count`]: the count a report uses ([`trip_count()`]: the while's
//!   `known_trip_count` first, else the analysis, else unknown with a reason);
//! * [`executions`]: runs of every computation per execution of ENTRY.

pub mod annotate;
pub mod auxiliary;
pub mod count;
pub mod eval;
pub mod executions;
pub mod hlo;
pub mod induction;
pub mod reason;
pub mod traced;
pub mod trip_count;

pub use count::{trip_count, Induction, Source, TripCount};
pub use executions::{
    analyze, branches, executions, BranchSite, Executions, Kind, LoopSite, ModuleLoops, WhileLoop,
};
pub use hlo::Loop;
pub use trip_count::{LoopRange, Method};
