//! Tiling analysis: what happens when an iteration space is executed tile by
//! tile and a tile size does not divide the extent it splits (the nvFuser seed
//! "Divisibility of Split", and XLA's symbolic tile analysis for Triton
//! fusions).
//!
//! * [`split`]: extents `N_i` tiled by sizes `t_i`: tile counts, holes, guards.
//! * [`predicates`]: graphs of split / merge / resize and their minimal
//!   predicates by the seed's theorems.
//! * [`identity`]: the value a reduction's holes must hold, by reducer.
//! * [`config`]: the `output_tiles` of a fusion's `backend_config`.
//! * [`symbolic`] / [`propagate`]: the tile each instruction reads, through the
//!   fusion's indexing maps, and the constraints for it to be a hyper-rectangle.
//! * [`candidates`]: valid tilings, ranked; [`report`]: the findings per fusion;
//!   [`diagnostics`]: those findings as diagnostics with quick fixes.
//!
//! Plain library code: no LSP types. Shared by the HLO `output_tiles` analysis
//! and MLIR `tile_sizes`.

pub mod candidates;
pub mod config;
pub mod diagnostics;
pub mod identity;
pub mod predicates;
pub mod propagate;
pub mod report;
pub mod split;
pub mod symbolic;

pub use identity::{init_is_identity, Reducer};
pub use predicates::{DomainGraph, DomainId, DomainPredicate, Transform};
pub use split::{join_sizes, Predicate, Split, SplitError, TiledSpace};
