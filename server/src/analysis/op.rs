//! What the per-op map constructors need to know about one instruction: its
//! opcode, output shape, operand shapes and decoded attributes. Built from the
//! model by `view`, or directly by tests (no parsing needed).

use crate::analysis::unknown::Unknown;
use std::sync::Arc;

use super::shape::{ArrayShape, Shape};

/// One dimension of a `slice={[start:limit:stride], ...}` attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SliceDim {
    pub start: i64,
    pub limit: i64,
    pub stride: i64,
}

/// One dimension of a `padding=low_high_interior x ...` attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PadDim {
    pub low: i64,
    pub high: i64,
    pub interior: i64,
}

/// One dimension of a `window={size=.. stride=.. pad=.. lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WindowDim {
    pub size: i64,
    pub stride: i64,
    pub pad_low: i64,
    pub pad_high: i64,
    pub base_dilation: i64,
    pub window_dilation: i64,
    pub reversal: bool,
}

impl Default for WindowDim {
    fn default() -> WindowDim {
        WindowDim {
            size: 1,
            stride: 1,
            pad_low: 0,
            pad_high: 0,
            base_dilation: 1,
            window_dilation: 1,
            reversal: false,
        }
    }
}

/// `lhs_batch_dims`, `lhs_contracting_dims`, ... of a dot.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct DotDims {
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
    pub lhs_contracting: Vec<usize>,
    pub rhs_contracting: Vec<usize>,
}

/// A convolution's `dim_labels` (e.g. `b01f_01io->b01f`), as dimension numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ConvDims {
    pub input_batch: usize,
    pub input_feature: usize,
    pub input_spatial: Vec<usize>,
    pub kernel_input_feature: usize,
    pub kernel_output_feature: usize,
    pub kernel_spatial: Vec<usize>,
    pub output_batch: usize,
    pub output_feature: usize,
    pub output_spatial: Vec<usize>,
}

/// Gather dimension numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct GatherDims {
    pub offset_dims: Vec<usize>,
    pub collapsed_slice_dims: Vec<usize>,
    pub start_index_map: Vec<usize>,
    pub operand_batching_dims: Vec<usize>,
    pub start_indices_batching_dims: Vec<usize>,
    pub index_vector_dim: usize,
    pub slice_sizes: Vec<i64>,
}

/// Scatter dimension numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ScatterDims {
    pub update_window_dims: Vec<usize>,
    pub inserted_window_dims: Vec<usize>,
    pub scatter_dims_to_operand_dims: Vec<usize>,
    pub input_batching_dims: Vec<usize>,
    pub scatter_indices_batching_dims: Vec<usize>,
    pub index_vector_dim: usize,
}

/// Decoded attributes the analysis uses. Missing ones are `None`/empty; the op
/// constructors report `unknown indexing` with a reason when they need one.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Attrs {
    pub dimensions: Option<Vec<i64>>,
    pub slice: Option<Vec<SliceDim>>,
    pub padding: Option<Vec<PadDim>>,
    pub window: Option<Vec<WindowDim>>,
    /// The dimension numbers of a dot, a convolution, a gather and a scatter are
    /// boxed: few instructions have them, and a view holds a set of attributes for
    /// every instruction that has any (a broadcast's `dimensions`), 750 bytes each
    /// when these were inline.
    pub dot: Option<Box<DotDims>>,
    pub conv: Option<Box<ConvDims>>,
    pub gather: Option<Box<GatherDims>>,
    pub scatter: Option<Box<ScatterDims>>,
    pub dynamic_slice_sizes: Option<Vec<i64>>,
    pub iota_dimension: Option<i64>,
    pub tuple_index: Option<i64>,
    pub feature_group_count: Option<i64>,
    pub batch_group_count: Option<i64>,
    pub num_carries: Option<i64>,
    pub fft_length: Option<Vec<i64>>,
    /// `k` of `topk`.
    pub k: Option<i64>,
}

impl Attrs {
    /// No attributes, shared.
    pub fn none() -> Arc<Attrs> {
        static NONE: std::sync::LazyLock<Arc<Attrs>> = std::sync::LazyLock::new(Arc::default);
        NONE.clone()
    }

    /// `self`, shared with every other instruction without attributes when it has none.
    pub fn shared(self) -> Arc<Attrs> {
        if self == Attrs::default() {
            Attrs::none()
        } else {
            Arc::new(self)
        }
    }
}

/// The analysis' view of one instruction. Its shapes are shared: an operand's shape
/// is its producer's output shape, and a view of a large fusion would otherwise hold
/// each shape once per reader (about a quarter of a hovered computation's view).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpInfo {
    pub opcode: String,
    pub shape: Arc<Shape>,
    pub operands: Vec<Arc<Shape>>,
    /// Shared: most instructions have none, every [`Attrs`] is some 700 bytes, and a
    /// view of a large fusion holds thousands of instructions (write through
    /// [`OpInfo::attrs_mut`]).
    pub attrs: Arc<Attrs>,
}

impl OpInfo {
    /// A new view with no attributes.
    pub fn new(opcode: impl Into<String>, shape: impl Into<Shape>, operands: Vec<Shape>) -> OpInfo {
        OpInfo::shared(
            opcode,
            Arc::new(shape.into()),
            operands.into_iter().map(Arc::new).collect(),
        )
    }

    /// A new view with no attributes, of shapes already shared.
    pub fn shared(
        opcode: impl Into<String>,
        shape: Arc<Shape>,
        operands: Vec<Arc<Shape>>,
    ) -> OpInfo {
        OpInfo {
            opcode: opcode.into(),
            shape,
            operands,
            attrs: Attrs::none(),
        }
    }

    /// The attributes, to set some (a copy of its own when shared).
    pub fn attrs_mut(&mut self) -> &mut Attrs {
        Arc::make_mut(&mut self.attrs)
    }

    /// The array shape of output `output_id`.
    pub fn output(&self, output_id: usize) -> Result<&ArrayShape, Unknown> {
        self.shape.output(output_id).ok_or_else(|| {
            Unknown::malformed(format!("{} has no array output {output_id}", self.opcode))
        })
    }

    /// The array shape of operand `k`.
    pub fn operand(&self, k: usize) -> Result<&ArrayShape, Unknown> {
        self.operands
            .get(k)
            .and_then(|s| s.as_array())
            .ok_or_else(|| {
                Unknown::malformed(format!(
                    "{}: operand {k} is missing or not an array",
                    self.opcode
                ))
            })
    }

    /// Checks that an operand of rank `operand` and an output of rank `out` have the
    /// same rank, as ops that pair their dimensions one to one need (transpose, pad,
    /// dynamic-slice).
    pub fn same_rank(&self, operand: usize, out: usize) -> Result<(), Unknown> {
        if operand == out {
            return Ok(());
        }
        Err(Unknown::malformed(format!(
            "{}: the operand has rank {operand} but the output has rank {out}",
            self.opcode
        )))
    }

    /// `dimensions={...}` as indices, checked against `bound`.
    pub fn dimensions(&self, bound: usize) -> Result<Vec<usize>, Unknown> {
        let dims = self.attrs.dimensions.as_ref().ok_or_else(|| {
            Unknown::malformed(format!("{} needs a `dimensions` attribute", self.opcode))
        })?;
        dims.iter()
            .map(|&d| {
                usize::try_from(d)
                    .ok()
                    .filter(|&d| d < bound)
                    .ok_or_else(|| {
                        Unknown::malformed(format!("{}: dimension {d} out of range", self.opcode))
                    })
            })
            .collect()
    }
}
