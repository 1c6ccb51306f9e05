//! The typed HLO model built from the syntax trees: modules, computations,
//! instructions with decoded shapes and attributes, plus semantic diagnostics.
//!
//! Building never fails: [`parse_hlo`] returns an [`HloFile`] plus diagnostics,
//! whatever the text. One concept per module: [`shape`], [`opcode`], [`attributes`],
//! [`module`] (the model types), [`build`] (one chunk's tree → its computation),
//! [`crossref`] (names and calls across computations), [`callgraph`] (who calls whom, in
//! which role), [`document`] (a version of a
//! document, built lazily per computation), [`shape_inference`] (XLA-style shape
//! checks), [`signature`] (the operands and attributes XLA's text takes per opcode), [`async_ops`] (an async chain's structure), [`header`] (the module header's aliasing attributes), [`literal`] (a constant's literal against its shape), [`instruction_checks`] (attributes kept as text, checked as XLA's parser does), [`diagnostics`], [`metadata`] (an instruction's `metadata={...}`), [`stack_frames`]
//! (the Python stack of a `stack_frame_id`).

pub mod async_ops;
pub mod attributes;
pub mod backend;
pub mod build;
pub mod callgraph;
pub mod crossref;
pub mod diagnostics;
pub mod document;
pub mod fingerprint;
pub mod header;
pub mod instruction_checks;
pub mod iota;
pub mod literal;
pub mod metadata;
pub mod module;
pub mod nameless;
pub mod names;
pub mod opcode;
pub mod shape;
pub mod shape_inference;
pub mod signature;
pub mod stack_frames;

pub use attributes::{
    AttrName, Attrs, ComparisonDirection, ConvDimLabels, DotDims, GatherDims, PadDim, ScatterDims,
    SliceDim, WindowDim,
};
pub use diagnostics::{codes, Diagnostic, Fix, Severity, TextEdit};
pub use document::{parse_hlo, Change, Document};
pub use module::{
    Attribute, AttributeValueKind, CallSite, CalledComputation, Computation, ComputationId,
    ComputationRef, Crossrefs, HloFile, InstrId, InstrRef, Instruction, Module, ModuleId, Operand,
    Span, Unit,
};
pub use opcode::{Arity, Opcode};
pub use shape::{parse_shape, ArrayShape, Layout, PrimitiveType, Shape};
