//! Working with XLA dump directories: which files hold HLO and in what order XLA
//! wrote them ([`naming`]), what changed between two dumps of a module ([`diff`]), the
//! computations and fusions of a workspace's files without opening them ([`index`]),
//! and finding the source files a dump names on this machine ([`source_path`]).

pub mod diff;
pub mod index;
pub mod naming;
pub mod source_path;
