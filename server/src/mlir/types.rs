//! Shaped types of MLIR text: `tensor<1x?x56xf16>`, `memref<4x8xf32, strided<...>>`,
//! `vector<4x[8]xf32>`; a scalar type (`f32`, `index`) is rank 0.

/// A shaped (or scalar) type; `dims[i]` is `None` for a dynamic `?` extent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapedType {
    pub dims: Vec<Option<i64>>,
    pub element: String,
}

impl ShapedType {
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The extents when all are static.
    pub fn static_dims(&self) -> Option<Vec<i64>> {
        self.dims.iter().copied().collect()
    }

    pub fn dim(&self, i: usize) -> Option<i64> {
        self.dims.get(i).copied().flatten()
    }
}

/// Decodes a type's text; `None` for unranked (`tensor<*xf32>`) or unknown forms.
pub fn parse_type(text: &str) -> Option<ShapedType> {
    let text = text.trim();
    let inner = ["tensor<", "memref<", "vector<"]
        .iter()
        .find_map(|h| text.strip_prefix(h))
        .and_then(|t| t.strip_suffix('>'));
    let Some(inner) = inner else {
        // A scalar element type.
        let scalar = text.starts_with(['f', 'i', 'u', 's', 'b']) || text == "index";
        return (scalar && !text.contains(['<', '(', ' '])).then(|| ShapedType {
            dims: vec![],
            element: text.to_string(),
        });
    };
    // Layout / memory space after the first top-level comma.
    let shape = inner.split(',').next().unwrap_or(inner).trim();
    let mut dims = Vec::new();
    let mut rest = shape;
    while let Some(x) = rest.find('x') {
        let part = rest[..x]
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let dim = if part == "?" {
            None
        } else {
            match part.parse::<i64>() {
                Ok(v) if v >= 0 => Some(v),
                _ => break, // not a dimension: the element type starts here (`xf32` never occurs, `x` is in the element only for complex/custom types)
            }
        };
        dims.push(dim);
        rest = &rest[x + 1..];
    }
    if rest.starts_with('*') {
        return None;
    }
    Some(ShapedType {
        dims,
        element: rest.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_shapes() {
        let t = parse_type("tensor<1x?x56x256xf16>").unwrap();
        assert_eq!(t.dims, vec![Some(1), None, Some(56), Some(256)]);
        assert_eq!(t.element, "f16");
        assert_eq!(
            parse_type("memref<4x8xf32, strided<[8, 1], offset: ?>>")
                .unwrap()
                .static_dims(),
            Some(vec![4, 8])
        );
        assert_eq!(parse_type("tensor<f32>").unwrap().rank(), 0);
        assert_eq!(parse_type("f16").unwrap().rank(), 0);
        assert_eq!(
            parse_type("vector<4x[8]xf32>").unwrap().static_dims(),
            Some(vec![4, 8])
        );
        assert!(parse_type("tensor<*xf32>").is_none());
        assert!(parse_type("!pdl.operation").is_none());
        assert!(parse_type("tensor<2xcomplex<f32>>").is_some());
    }
}
