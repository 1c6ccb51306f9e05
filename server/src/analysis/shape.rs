//! The analysis' view of an HLO shape: an array's extents plus its layout, or a
//! tuple of shapes. Kept separate from the model's shape type so that the per-op
//! map constructors are pure functions of plain data, testable without parsing.

/// An array shape: extents in logical order and the layout as XLA writes it
/// (`minor_to_major`: the first entry is the fastest-varying dimension).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    pub dims: Vec<i64>,
    /// `None` means the default layout (`{rank-1, ..., 1, 0}`), as in XLA's parser.
    pub minor_to_major: Option<Vec<usize>>,
}

impl ArrayShape {
    /// An array shape with the default (row-major) layout.
    pub fn new(dims: impl Into<Vec<i64>>) -> ArrayShape {
        ArrayShape {
            dims: dims.into(),
            minor_to_major: None,
        }
    }

    /// An array shape with an explicit `minor_to_major` layout.
    pub fn with_layout(dims: impl Into<Vec<i64>>, minor_to_major: Vec<usize>) -> ArrayShape {
        ArrayShape {
            dims: dims.into(),
            minor_to_major: Some(minor_to_major),
        }
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of elements; `None` on overflow.
    pub fn element_count(&self) -> Option<i64> {
        self.dims
            .iter()
            .try_fold(1i64, |acc, &d| acc.checked_mul(d.max(0)))
    }

    /// The layout, with the default filled in. A layout that is not a permutation
    /// of `0..rank` is ignored (the model reports it) and the default is used.
    pub fn layout(&self) -> Vec<usize> {
        let rank = self.rank();
        if let Some(m2m) = &self.minor_to_major {
            let mut seen = vec![false; rank];
            let valid = m2m.len() == rank
                && m2m
                    .iter()
                    .all(|&d| d < rank && !std::mem::replace(&mut seen[d], true));
            if valid {
                return m2m.clone();
            }
        }
        (0..rank).rev().collect()
    }

    /// Logical dimensions from major to minor: physical dimension `i` is logical
    /// dimension `major_to_minor()[i]`.
    pub fn major_to_minor(&self) -> Vec<usize> {
        let mut l = self.layout();
        l.reverse();
        l
    }

    /// The extents in physical (major-to-minor) order.
    pub fn physical_dims(&self) -> Vec<i64> {
        self.major_to_minor()
            .iter()
            .map(|&d| self.dims[d])
            .collect()
    }

    /// True when the layout is the default row-major one.
    pub fn has_default_layout(&self) -> bool {
        self.layout().iter().rev().enumerate().all(|(i, &d)| i == d)
    }
}

/// A shape: an array or a (possibly nested) tuple. Tokens are arrays of rank 0.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    Array(ArrayShape),
    Tuple(Vec<Shape>),
}

impl Shape {
    /// The array shape, or for a tuple the array shape of element `index`
    /// (flattening only one level, as XLA's `output_id` does).
    pub fn output(&self, index: usize) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) if index == 0 => Some(a),
            Shape::Array(_) => None,
            Shape::Tuple(elems) => match elems.get(index)? {
                Shape::Array(a) => Some(a),
                Shape::Tuple(_) => None,
            },
        }
    }

    /// Number of outputs: 1 for an array, the element count for a tuple.
    pub fn output_count(&self) -> usize {
        match self {
            Shape::Array(_) => 1,
            Shape::Tuple(elems) => elems.len(),
        }
    }

    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            Shape::Tuple(_) => None,
        }
    }
}

impl From<ArrayShape> for Shape {
    fn from(a: ArrayShape) -> Shape {
        Shape::Array(a)
    }
}
