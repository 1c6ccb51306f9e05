//! Diagnostics of every layer in one plain type: a byte range, a severity, a stable
//! code (tests and editors match on it) and a message, plus related locations.

use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }
}

/// One finding about the document. `range` is in bytes of the whole document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub range: Range<usize>,
    pub severity: Severity,
    /// Stable identifier such as `undefined-name`; see [`codes`].
    pub code: &'static str,
    pub message: String,
    /// Other places that explain this one (the first definition of a duplicate, ...).
    pub related: Vec<(Range<usize>, String)>,
    /// Edits that resolve this finding (the server offers them as quick fixes).
    pub fixes: Vec<Fix>,
}

/// A quick fix: a title and the text edits that apply it, in bytes of the document
/// the diagnostic was computed on. Edits do not overlap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<TextEdit>,
}

/// Replace the bytes `range` with `new_text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub range: Range<usize>,
    pub new_text: String,
}

impl Diagnostic {
    pub fn new(
        range: Range<usize>,
        severity: Severity,
        code: &'static str,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            range,
            severity,
            code,
            message: message.into(),
            related: Vec::new(),
            fixes: Vec::new(),
        }
    }

    pub fn error(
        range: Range<usize>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::new(range, Severity::Error, code, message)
    }

    pub fn warning(
        range: Range<usize>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::new(range, Severity::Warning, code, message)
    }

    pub fn with_fix(mut self, fix: Fix) -> Diagnostic {
        self.fixes.push(fix);
        self
    }

    pub fn with_related(mut self, range: Range<usize>, message: impl Into<String>) -> Diagnostic {
        self.related.push((range, message.into()));
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The same diagnostic `by` bytes later in the document: a computation's own
    /// diagnostics are kept relative to its chunk and placed when published.
    pub fn shifted(&self, by: usize) -> Diagnostic {
        let mut d = self.clone();
        for r in d.ranges_mut() {
            *r = r.start + by..r.end + by;
        }
        d
    }

    /// Every range the diagnostic holds: its own, its related locations', its fixes'
    /// edits (in that order).
    pub fn ranges_mut(&mut self) -> impl Iterator<Item = &mut Range<usize>> {
        std::iter::once(&mut self.range)
            .chain(self.related.iter_mut().map(|(r, _)| r))
            .chain(
                self.fixes
                    .iter_mut()
                    .flat_map(|f| f.edits.iter_mut().map(|e| &mut e.range)),
            )
    }
}

/// The stable codes the model reports. Syntax errors use `syntax-error`.
pub mod codes {
    /// The parser could not make sense of some text (from the syntax layer).
    pub const SYNTAX_ERROR: &str = "syntax-error";
    /// An operand names no instruction of the computation.
    pub const UNDEFINED_NAME: &str = "undefined-name";
    /// Two instructions of a computation, or two computations of a module, share a name.
    pub const DUPLICATE_NAME: &str = "duplicate-name";
    /// A computation marks more than one instruction `ROOT`.
    pub const MULTIPLE_ROOTS: &str = "multiple-roots";
    /// The operand count is not one the opcode accepts.
    pub const OPERAND_COUNT: &str = "operand-count";
    /// `calls=`, `to_apply=`, ... name a computation the module does not have.
    pub const UNDEFINED_COMPUTATION: &str = "undefined-computation";
    /// An opcode this server does not know (a warning).
    pub const UNKNOWN_OPCODE: &str = "unknown-opcode";
    /// An attribute this server does not know (a warning).
    pub const UNKNOWN_ATTRIBUTE: &str = "unknown-attribute";
    /// An element type XLA does not know (an error, as in XLA's parser).
    pub const UNKNOWN_TYPE: &str = "unknown-type";
    /// A shape token that does not decode (`f32[2,` ...).
    pub const INVALID_SHAPE: &str = "invalid-shape";
    /// An attribute value that does not decode (`dimensions={a}`).
    pub const INVALID_ATTRIBUTE: &str = "invalid-attribute";
    /// An attribute the opcode requires is absent (`broadcast` without `dimensions`).
    pub const MISSING_ATTRIBUTE: &str = "missing-attribute";
    /// Two parameters of a computation share a number, or a number is missing.
    pub const PARAMETER_NUMBER: &str = "parameter-number";
    /// Operands of an elementwise op have different shapes.
    pub const ELEMENTWISE_SHAPE_MISMATCH: &str = "elementwise-shape-mismatch";
    /// `broadcast`'s `dimensions` do not match the operand and result.
    pub const BROADCAST_DIMENSIONS: &str = "broadcast-dimensions";
    /// `transpose`'s `dimensions` are not a permutation.
    pub const TRANSPOSE_PERMUTATION: &str = "transpose-permutation";
    /// `reshape` element counts differ.
    pub const RESHAPE_ELEMENT_COUNT: &str = "reshape-element-count";
    /// `bitcast` byte sizes differ.
    pub const BITCAST_SIZE: &str = "bitcast-size";
    /// `slice` bounds outside the operand, or malformed.
    pub const SLICE_BOUNDS: &str = "slice-bounds";
    /// `concatenate` operands disagree outside the concatenated dimension.
    pub const CONCATENATE_SHAPES: &str = "concatenate-shapes";
    /// `dot` contracting (or batch) dimension sizes differ.
    pub const DOT_DIMENSIONS: &str = "dot-dimensions";
    /// A dimension index in an attribute is out of range for the operand's rank.
    pub const DIMENSION_OUT_OF_RANGE: &str = "dimension-out-of-range";
    /// The declared shape differs from the one shape inference computes.
    pub const SHAPE_MISMATCH: &str = "shape-mismatch";
    /// A fusion/call operand differs from the callee's parameter, or its declared shape
    /// from the callee's root (a warning: XLA's parser accepts it, its verifier not).
    pub const CALL_SHAPE_MISMATCH: &str = "call-shape-mismatch";
    /// An operand has a shape kind the opcode cannot take (a tuple to `add`, ...).
    pub const OPERAND_SHAPE: &str = "operand-shape";
    /// `get-tuple-element` index out of range.
    pub const TUPLE_INDEX: &str = "tuple-index";
    /// A constant's literal does not fit its shape (nesting, element count, a value
    /// out of its type's range, a NaN payload the type cannot hold).
    pub const INVALID_LITERAL: &str = "invalid-literal";
    /// A module's structure XLA's parser refuses: a second ENTRY, an async op whose
    /// shape or computation does not fit its start, an attribute on the wrong op, a
    /// header attribute that does not read (`input_output_alias`, `buffer_donor`).
    pub const INVALID_MODULE: &str = "invalid-module";
    /// A computation without instructions.
    pub const EMPTY_COMPUTATION: &str = "empty-computation";
    /// A called computation takes a different number of parameters than it is given.
    pub const CALL_ARITY: &str = "call-arity";
    /// A computation calls itself, directly or through others (XLA's call graph is
    /// acyclic; every walk over it stops at the cycle).
    pub const RECURSIVE_CALL: &str = "recursive-call";
    /// Inline operands nested deeper than the model follows (an error; the
    /// innermost ones are not built, so no walk recurses without bound).
    pub const NESTED_TOO_DEEP: &str = "nested-too-deep";
    /// The server stopped checking a computation at its time budget (information:
    /// some findings of that computation may be missing).
    pub const ANALYSIS_BUDGET: &str = "analysis-budget";
    /// A chain of reshape/bitcast/transpose that is the identity or one op (a hint
    /// with a quick fix; `refactor`).
    pub const RESHAPE_CHAIN: &str = "reshape-chain";
    /// A single reshape/bitcast/transpose whose map is the identity on an unchanged
    /// shape (a hint with a quick fix; `refactor`).
    pub const NOOP_RESHAPE: &str = "noop-reshape";
}
