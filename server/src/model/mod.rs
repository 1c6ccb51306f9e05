//! The typed HLO model built from the syntax trees: modules, computations,
//! instructions with decoded shapes and attributes, plus semantic diagnostics.
