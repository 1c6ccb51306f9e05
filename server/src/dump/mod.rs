//! Working with XLA dump directories: which files hold HLO and in what order XLA
//! wrote them ([`naming`]), what changed between two dumps of a module ([`diff`]), and
//! finding the source files a dump names on this machine ([`source_path`]).

pub mod source_path;
