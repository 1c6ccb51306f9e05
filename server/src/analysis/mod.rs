//! XLA's indexing analysis on the HLO model: per-op output-to-input and
//! input-to-output maps, fusion composition and operand utilization.
