//! Parsing HLO text into tree-sitter trees: one tree per computation, split by a
//! fast scan, parsed in parallel, reparsed incrementally after an edit.
