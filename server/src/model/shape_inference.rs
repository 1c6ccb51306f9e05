//! XLA-style shape checks: for the opcodes whose result shape follows from the
//! operands and attributes, check the operands the way XLA's `ShapeInference` does and
//! compare the declared shape with the inferred one.
//!
//! The checks are pure functions of shapes and decoded attributes; a [`Problem`] says
//! which part of the instruction to point at, and the builder turns that into a range.

use super::attributes::Attrs;
use super::diagnostics::codes;
use super::opcode::{Class, Opcode};
use super::shape::{check_permutation, ArrayShape, PrimitiveType, Shape, UNBOUNDED_SIZE};

/// Which part of an instruction a problem is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// Operand `k`.
    Operand(usize),
    /// The value of the named attribute (the instruction when absent).
    Attribute(&'static str),
    /// The declared result shape.
    Shape,
    /// The opcode.
    Opcode,
}

/// One shape error: a stable code, a message in XLA's spirit, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub code: &'static str,
    pub message: String,
    pub site: Site,
    /// For a declared shape that differs from the inferred one: the shape to write
    /// instead (the declared layout kept when the rank allows, else XLA's default).
    pub expected: Option<Box<Shape>>,
}

fn problem(code: &'static str, site: Site, message: impl Into<String>) -> Problem {
    Problem {
        code,
        message: message.into(),
        site,
        expected: None,
    }
}

/// What inference says about the result.
#[derive(Debug, Clone, PartialEq)]
enum Inferred {
    /// Dimensions known, element type known (`Some`) or free (`None`, e.g. `convert`).
    Array {
        element: Option<PrimitiveType>,
        dims: Vec<i64>,
    },
    /// The whole shape known (tuples, get-tuple-element).
    Exact(Shape),
}

/// Checks one instruction given its operand shapes (`None` when an operand could not
/// be resolved: checks needing it are skipped). Returns every problem found.
pub fn check(
    opcode: &Opcode,
    declared: &Shape,
    operands: &[Option<&Shape>],
    attrs: &Attrs,
) -> Vec<Problem> {
    if !opcode.arity().accepts(operands.len()) || matches!(declared, Shape::Invalid) {
        return Vec::new();
    }
    // Without every operand shape, or with `?` sizes, XLA's static rules do not apply.
    if operands.iter().any(|o| o.is_none_or(has_unbounded)) || has_unbounded(declared) {
        return Vec::new();
    }
    let shapes: Vec<&Shape> = operands.iter().map(|o| o.expect("checked above")).collect();
    match infer(opcode, declared, &shapes, attrs) {
        Ok(Some(inferred)) => compare_declared(declared, &inferred).into_iter().collect(),
        Ok(None) => Vec::new(),
        Err(p) => vec![p],
    }
}

fn has_unbounded(s: &Shape) -> bool {
    s.leaves().iter().any(|a| a.dims.contains(&UNBOUNDED_SIZE))
}

fn compare_declared(declared: &Shape, inferred: &Inferred) -> Option<Problem> {
    let mismatch = |expected: String, shape: Option<Shape>| Problem {
        expected: shape.map(Box::new),
        ..problem(
            codes::SHAPE_MISMATCH,
            Site::Shape,
            format!(
                "declared shape {} differs from the inferred shape {expected}",
                strip_layouts(declared)
            ),
        )
    };
    match inferred {
        Inferred::Exact(shape) => (!declared.compatible(shape))
            .then(|| mismatch(strip_layouts(shape).to_string(), Some(shape.clone()))),
        Inferred::Array { element, dims } => {
            let Some(d) = declared.as_array() else {
                return Some(mismatch(
                    format!("an array of dimensions [{}]", join(dims)),
                    None,
                ));
            };
            let element_ok = element.as_ref().is_none_or(|e| *e == d.element);
            if d.dims == *dims && element_ok {
                return None;
            }
            let element = element.clone().unwrap_or_else(|| d.element.clone());
            let text = ArrayShape::new(element.clone(), dims.clone()).to_string();
            Some(mismatch(text, Some(with_layout_of(d, element, dims))))
        }
    }
}

/// An array shape of `element` and `dims` laid out as `declared` is when the ranks
/// agree, else in XLA's default layout (major to minor) when `declared` has a layout.
fn with_layout_of(declared: &ArrayShape, element: PrimitiveType, dims: &[i64]) -> Shape {
    let mut shape = ArrayShape::new(element, dims.to_vec());
    shape.layout = declared.layout.as_ref().map(|layout| {
        if layout.minor_to_major.len() == dims.len() {
            layout.clone()
        } else {
            std::sync::Arc::new(super::shape::Layout {
                minor_to_major: (0..dims.len() as i64).rev().collect(),
                ..Default::default()
            })
        }
    });
    Shape::Array(shape)
}

fn strip_layouts(shape: &Shape) -> Shape {
    match shape {
        Shape::Array(a) => Shape::Array(ArrayShape {
            layout: None,
            ..a.clone()
        }),
        Shape::Tuple(es) => Shape::Tuple(es.iter().map(strip_layouts).collect()),
        Shape::Invalid => Shape::Invalid,
    }
}

fn join(dims: &[i64]) -> String {
    dims.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn array(shapes: &[&Shape], k: usize, opcode: &Opcode) -> Result<ArrayShape, Problem> {
    match shapes[k] {
        Shape::Array(a) => Ok(a.clone()),
        other => Err(problem(
            codes::OPERAND_SHAPE,
            Site::Operand(k),
            format!("operand {k} of {opcode} must be an array, not {other}"),
        )),
    }
}

fn dims_in_range(dims: &[i64], rank: usize, attribute: &'static str) -> Result<(), Problem> {
    for &d in dims {
        if d < 0 || d as usize >= rank {
            return Err(problem(
                codes::DIMENSION_OUT_OF_RANGE,
                Site::Attribute(attribute),
                format!("dimension {d} in `{attribute}` is out of range for rank {rank}"),
            ));
        }
    }
    Ok(())
}

fn required<'a, T>(
    value: &'a Option<T>,
    attribute: &'static str,
    opcode: &Opcode,
) -> Result<&'a T, Problem> {
    value.as_ref().ok_or_else(|| {
        problem(
            codes::MISSING_ATTRIBUTE,
            Site::Attribute(attribute),
            format!("{opcode} needs a `{attribute}` attribute"),
        )
    })
}

/// A value for attribute `attribute` of `opcode` that makes the instruction check,
/// read backwards from its operand shapes and declared shape where that is one
/// choice (`broadcast`'s dimensions: each operand dimension onto the first result
/// dimension of its size, in order); `None` when it cannot be told. The quick fix of
/// a missing attribute inserts it.
pub fn missing_attribute_value(
    opcode: &Opcode,
    attribute: &str,
    declared: &Shape,
    operands: &[Option<&Shape>],
) -> Option<String> {
    let operand = operands
        .first()
        .copied()
        .flatten()
        .and_then(Shape::as_array);
    let result = declared.as_array();
    let list = |v: Vec<i64>| format!("{{{}}}", join(&v));
    match (opcode, attribute) {
        (Opcode::Broadcast, "dimensions") => {
            let (operand, result) = (operand?, result?);
            let mut next = 0;
            let mut dims = Vec::new();
            for &size in &operand.dims {
                let found = (next..result.rank()).find(|&d| result.dims[d] == size)?;
                dims.push(found as i64);
                next = found + 1;
            }
            Some(list(dims))
        }
        (Opcode::Transpose, "dimensions") => {
            let (operand, result) = (operand?, result?);
            let mut used = vec![false; operand.rank()];
            let mut perm = Vec::new();
            for &size in &result.dims {
                let j = (0..operand.rank()).find(|&j| !used[j] && operand.dims[j] == size)?;
                used[j] = true;
                perm.push(j as i64);
            }
            (perm.len() == operand.rank()).then(|| list(perm))
        }
        (Opcode::Reduce, "dimensions") => {
            let (operand, result) = (operand?, result?);
            let mut kept = 0;
            let mut reduced = Vec::new();
            for (d, &size) in operand.dims.iter().enumerate() {
                if kept < result.rank() && result.dims[kept] == size {
                    kept += 1;
                } else {
                    reduced.push(d as i64);
                }
            }
            (kept == result.rank()).then(|| list(reduced))
        }
        (Opcode::Concatenate, "dimensions") => {
            let (operand, result) = (operand?, result?);
            let d = (0..result.rank()).find(|&d| operand.dims.get(d) != Some(&result.dims[d]));
            Some(list(vec![d.unwrap_or(0) as i64]))
        }
        (Opcode::Reverse, "dimensions") => Some("{}".into()),
        (Opcode::Slice, "slice") => {
            let result = result?;
            let dims: Vec<String> = result.dims.iter().map(|d| format!("[0:{d}]")).collect();
            Some(format!("{{{}}}", dims.join(", ")))
        }
        (Opcode::DynamicSlice, "dynamic_slice_sizes") => Some(list(result?.dims.clone())),
        (Opcode::Pad, "padding") => {
            let rank = operand?.rank();
            Some(vec!["0_0"; rank].join("x"))
        }
        (Opcode::Iota, "iota_dimension") => Some("0".into()),
        (Opcode::GetTupleElement, "index") => {
            let Some(Shape::Tuple(elements)) = operands.first().copied().flatten() else {
                return Some("0".into());
            };
            let k = elements
                .iter()
                .position(|e| e.compatible(declared))
                .unwrap_or(0);
            Some(k.to_string())
        }
        _ => None,
    }
}

fn infer(
    opcode: &Opcode,
    declared: &Shape,
    shapes: &[&Shape],
    attrs: &Attrs,
) -> Result<Option<Inferred>, Problem> {
    // A copy of a tuple is a shallow copy (an async chain passes through one).
    if *opcode == Opcode::Copy {
        if let Some(Shape::Tuple(_)) = shapes.first() {
            return Ok(Some(Inferred::Exact(shapes[0].clone())));
        }
    }
    match opcode.class() {
        Class::Unary => return unary(opcode, shapes),
        Class::Binary => return binary(opcode, shapes),
        Class::Ternary => return ternary(opcode, shapes),
        Class::Other => {}
    }
    match opcode {
        Opcode::Broadcast => broadcast(opcode, declared, shapes, attrs),
        Opcode::Transpose => transpose(opcode, shapes, attrs),
        Opcode::Reshape => reshape(opcode, declared, shapes),
        Opcode::Bitcast => bitcast(opcode, declared, shapes),
        Opcode::Slice => slice(opcode, shapes, attrs),
        Opcode::Concatenate => concatenate(opcode, shapes, attrs),
        Opcode::Dot => dot(opcode, shapes, attrs),
        Opcode::Pad => pad(opcode, shapes, attrs),
        Opcode::Reverse => {
            let a = array(shapes, 0, opcode)?;
            dims_in_range(
                required(&attrs.dimensions, "dimensions", opcode)?,
                a.rank(),
                "dimensions",
            )?;
            Ok(Some(Inferred::Array {
                element: Some(a.element),
                dims: a.dims,
            }))
        }
        Opcode::Iota => {
            let Some(d) = declared.as_array() else {
                return Ok(None);
            };
            dims_in_range(
                &[i64::from(*required(
                    &attrs.uncommon().iota_dimension,
                    "iota_dimension",
                    opcode,
                )?)],
                d.rank(),
                "iota_dimension",
            )?;
            Ok(None)
        }
        Opcode::GetTupleElement => {
            let index = *required(&attrs.tuple_index, "index", opcode)?;
            match shapes[0] {
                Shape::Tuple(es) => match usize::try_from(index).ok().and_then(|i| es.get(i)) {
                    Some(e) => Ok(Some(Inferred::Exact(e.clone()))),
                    None => Err(problem(
                        codes::TUPLE_INDEX,
                        Site::Attribute("index"),
                        format!(
                            "index {index} is out of range for a tuple of {} elements",
                            es.len()
                        ),
                    )),
                },
                other => Err(problem(
                    codes::OPERAND_SHAPE,
                    Site::Operand(0),
                    format!("get-tuple-element needs a tuple operand, not {other}"),
                )),
            }
        }
        Opcode::Tuple => Ok(Some(Inferred::Exact(Shape::Tuple(
            shapes.iter().map(|s| (*s).clone()).collect(),
        )))),
        Opcode::DynamicSlice => dynamic_slice(opcode, shapes, attrs),
        Opcode::DynamicUpdateSlice => dynamic_update_slice(opcode, shapes),
        Opcode::Reduce => reduce(opcode, shapes, attrs),
        _ => Ok(None),
    }
}

/// Element type of a unary op's result, when it is determined by the operand.
fn unary(opcode: &Opcode, shapes: &[&Shape]) -> Result<Option<Inferred>, Problem> {
    let a = array(shapes, 0, opcode)?;
    let element = match opcode {
        Opcode::Convert | Opcode::Real | Opcode::Imag | Opcode::Abs => None,
        Opcode::IsFinite => Some(PrimitiveType::Pred),
        _ => Some(a.element),
    };
    Ok(Some(Inferred::Array {
        element,
        dims: a.dims,
    }))
}

fn binary(opcode: &Opcode, shapes: &[&Shape]) -> Result<Option<Inferred>, Problem> {
    let lhs = array(shapes, 0, opcode)?;
    let rhs = array(shapes, 1, opcode)?;
    if lhs.dims != rhs.dims {
        return Err(problem(
            codes::ELEMENTWISE_SHAPE_MISMATCH,
            Site::Operand(1),
            format!(
                "binary op {opcode} with incompatible shapes: {} and {}",
                strip_layouts(shapes[0]),
                strip_layouts(shapes[1])
            ),
        ));
    }
    let element = match opcode {
        Opcode::Compare => Some(PrimitiveType::Pred),
        Opcode::Complex => None,
        _ if lhs.element != rhs.element => {
            return Err(problem(
                codes::ELEMENTWISE_SHAPE_MISMATCH,
                Site::Operand(1),
                format!(
                    "binary op {opcode} with different element types: {} and {}",
                    lhs.element, rhs.element
                ),
            ))
        }
        _ => Some(lhs.element),
    };
    Ok(Some(Inferred::Array {
        element,
        dims: lhs.dims,
    }))
}

/// `select(pred, on_true, on_false)` and `clamp(min, x, max)`; scalar `pred`, `min`,
/// `max` are accepted (implicitly broadcast).
fn ternary(opcode: &Opcode, shapes: &[&Shape]) -> Result<Option<Inferred>, Problem> {
    let arrays: Vec<ArrayShape> = (0..3)
        .map(|k| array(shapes, k, opcode))
        .collect::<Result<_, _>>()?;
    // select(pred, on_true, on_false), clamp(min, x, max): operand 1 carries the shape.
    let (main, others) = (1, [0, 2]);
    let dims = &arrays[main].dims;
    for k in others {
        let scalar_ok = arrays[k].rank() == 0 && !(matches!(opcode, Opcode::Select) && k == 2);
        if arrays[k].dims != *dims && !scalar_ok {
            return Err(problem(
                codes::ELEMENTWISE_SHAPE_MISMATCH,
                Site::Operand(k),
                format!(
                    "{opcode} operand {k} has shape {} but operand {main} has {}",
                    strip_layouts(shapes[k]),
                    strip_layouts(shapes[main])
                ),
            ));
        }
    }
    Ok(Some(Inferred::Array {
        element: Some(arrays[main].element.clone()),
        dims: dims.clone(),
    }))
}

fn broadcast(
    opcode: &Opcode,
    declared: &Shape,
    shapes: &[&Shape],
    attrs: &Attrs,
) -> Result<Option<Inferred>, Problem> {
    let operand = array(shapes, 0, opcode)?;
    let Some(result) = declared.as_array() else {
        return Ok(None);
    };
    // XLA's own tests broadcast scalars without `dimensions` (they default to `{}`).
    let dimensions: &[i64] = match &attrs.dimensions {
        None if operand.rank() == 0 => &[],
        _ => required(&attrs.dimensions, "dimensions", opcode)?,
    };
    if dimensions.len() != operand.rank() {
        return Err(problem(
            codes::BROADCAST_DIMENSIONS,
            Site::Attribute("dimensions"),
            format!(
                "broadcast `dimensions` has {} entries but the operand has rank {}",
                dimensions.len(),
                operand.rank()
            ),
        ));
    }
    dims_in_range(dimensions, result.rank(), "dimensions")?;
    for (i, &d) in dimensions.iter().enumerate() {
        let (in_size, out_size) = (operand.dims[i], result.dims[d as usize]);
        if in_size != out_size && in_size != 1 {
            return Err(problem(
                codes::BROADCAST_DIMENSIONS,
                Site::Attribute("dimensions"),
                format!("broadcast maps operand dimension {i} (size {in_size}) to result dimension {d} (size {out_size})"),
            ));
        }
    }
    Ok(Some(Inferred::Array {
        element: Some(operand.element),
        dims: result.dims.clone(),
    }))
}

fn transpose(
    opcode: &Opcode,
    shapes: &[&Shape],
    attrs: &Attrs,
) -> Result<Option<Inferred>, Problem> {
    let operand = array(shapes, 0, opcode)?;
    let perm = required(&attrs.dimensions, "dimensions", opcode)?;
    check_permutation(perm, operand.rank()).map_err(|m| {
        problem(
            codes::TRANSPOSE_PERMUTATION,
            Site::Attribute("dimensions"),
            format!(
                "transpose `dimensions` are not a permutation of the operand's dimensions: {m}"
            ),
        )
    })?;
    let dims = perm.iter().map(|&p| operand.dims[p as usize]).collect();
    Ok(Some(Inferred::Array {
        element: Some(operand.element),
        dims,
    }))
}

fn reshape(
    opcode: &Opcode,
    declared: &Shape,
    shapes: &[&Shape],
) -> Result<Option<Inferred>, Problem> {
    let operand = array(shapes, 0, opcode)?;
    let Some(result) = declared.as_array() else {
        return Ok(None);
    };
    if let (Some(a), Some(b)) = (operand.element_count(), result.element_count()) {
        if a != b && !result.has_dynamic() {
            return Err(problem(
                codes::RESHAPE_ELEMENT_COUNT,
                Site::Shape,
                format!(
                    "reshape from {} ({a} elements) to {} ({b} elements): element counts differ",
                    strip_layouts(shapes[0]),
                    strip_layouts(declared)
                ),
            ));
        }
    }
    Ok(Some(Inferred::Array {
        element: Some(operand.element),
        dims: result.dims.clone(),
    }))
}

fn bitcast(
    opcode: &Opcode,
    declared: &Shape,
    shapes: &[&Shape],
) -> Result<Option<Inferred>, Problem> {
    let operand = array(shapes, 0, opcode)?;
    let Some(result) = declared.as_array() else {
        return Ok(None);
    };
    if let (Some(a), Some(b)) = (operand.bit_size(), result.bit_size()) {
        if a != b {
            return Err(problem(
                codes::BITCAST_SIZE,
                Site::Shape,
                format!(
                    "bitcast from {} ({} bytes) to {} ({} bytes): sizes differ",
                    strip_layouts(shapes[0]),
                    a / 8,
                    strip_layouts(declared),
                    b / 8
                ),
            ));
        }
    }
    Ok(None)
}

fn slice(opcode: &Opcode, shapes: &[&Shape], attrs: &Attrs) -> Result<Option<Inferred>, Problem> {
    let operand = array(shapes, 0, opcode)?;
    let slice = required(&attrs.slice, "slice", opcode)?;
    if slice.len() != operand.rank() {
        return Err(problem(
            codes::SLICE_BOUNDS,
            Site::Attribute("slice"),
            format!(
                "slice has {} dimensions but the operand has rank {}",
                slice.len(),
                operand.rank()
            ),
        ));
    }
    let mut dims = Vec::with_capacity(slice.len());
    for (i, (s, &size)) in slice.iter().zip(&operand.dims).enumerate() {
        let bad = if s.stride <= 0 {
            Some(format!("stride {} must be positive", s.stride))
        } else if s.start < 0 || s.start > s.limit {
            Some(format!(
                "start {} must be in [0, limit {}]",
                s.start, s.limit
            ))
        } else if s.limit > size {
            Some(format!(
                "limit {} exceeds the operand's size {size}",
                s.limit
            ))
        } else {
            None
        };
        if let Some(why) = bad {
            return Err(problem(
                codes::SLICE_BOUNDS,
                Site::Attribute("slice"),
                format!(
                    "slice dimension {i} [{}:{}:{}]: {why}",
                    s.start, s.limit, s.stride
                ),
            ));
        }
        dims.push((s.limit - s.start + s.stride - 1) / s.stride);
    }
    Ok(Some(Inferred::Array {
        element: Some(operand.element),
        dims,
    }))
}

fn concatenate(
    opcode: &Opcode,
    shapes: &[&Shape],
    attrs: &Attrs,
) -> Result<Option<Inferred>, Problem> {
    let first = array(shapes, 0, opcode)?;
    let dimensions = required(&attrs.dimensions, "dimensions", opcode)?;
    let &[d] = dimensions.as_slice() else {
        return Err(problem(
            codes::CONCATENATE_SHAPES,
            Site::Attribute("dimensions"),
            "concatenate needs exactly one dimension",
        ));
    };
    dims_in_range(&[d], first.rank(), "dimensions")?;
    let d = d as usize;
    let mut dims = first.dims.clone();
    for k in 1..shapes.len() {
        let other = array(shapes, k, opcode)?;
        let agrees = other.rank() == first.rank()
            && (0..first.rank()).all(|i| i == d || other.dims[i] == first.dims[i]);
        if !agrees {
            return Err(problem(
                codes::CONCATENATE_SHAPES,
                Site::Operand(k),
                format!(
                    "concatenate operands must agree outside dimension {d}: operand 0 is {}, operand {k} is {}",
                    strip_layouts(shapes[0]),
                    strip_layouts(shapes[k])
                ),
            ));
        }
        if other.element != first.element {
            return Err(problem(
                codes::CONCATENATE_SHAPES,
                Site::Operand(k),
                format!(
                    "concatenate operands have different element types: {} and {}",
                    first.element, other.element
                ),
            ));
        }
        dims[d] = dims[d].checked_add(other.dims[d]).ok_or_else(|| {
            problem(
                codes::CONCATENATE_SHAPES,
                Site::Operand(k),
                "concatenated size overflows",
            )
        })?;
    }
    Ok(Some(Inferred::Array {
        element: Some(first.element),
        dims,
    }))
}

fn dot(opcode: &Opcode, shapes: &[&Shape], attrs: &Attrs) -> Result<Option<Inferred>, Problem> {
    let lhs = array(shapes, 0, opcode)?;
    let rhs = array(shapes, 1, opcode)?;
    let numbers = attrs.dot.clone().unwrap_or_default();
    dims_in_range(&numbers.lhs_batch, lhs.rank(), "lhs_batch_dims")?;
    dims_in_range(&numbers.lhs_contracting, lhs.rank(), "lhs_contracting_dims")?;
    dims_in_range(&numbers.rhs_batch, rhs.rank(), "rhs_batch_dims")?;
    dims_in_range(&numbers.rhs_contracting, rhs.rank(), "rhs_contracting_dims")?;
    let pairs = [
        (
            &numbers.lhs_contracting,
            &numbers.rhs_contracting,
            "contracting",
            "lhs_contracting_dims",
        ),
        (
            &numbers.lhs_batch,
            &numbers.rhs_batch,
            "batch",
            "lhs_batch_dims",
        ),
    ];
    for (l, r, what, attribute) in pairs {
        if l.len() != r.len() {
            return Err(problem(
                codes::DOT_DIMENSIONS,
                Site::Attribute(attribute),
                format!(
                    "dot has {} lhs and {} rhs {what} dimensions",
                    l.len(),
                    r.len()
                ),
            ));
        }
        for (&a, &b) in l.iter().zip(r.iter()) {
            let (sa, sb) = (lhs.dims[a as usize], rhs.dims[b as usize]);
            if sa != sb {
                return Err(problem(
                    codes::DOT_DIMENSIONS,
                    Site::Attribute(attribute),
                    format!("dot {what} dimension sizes differ: lhs dimension {a} has size {sa}, rhs dimension {b} has size {sb}"),
                ));
            }
        }
    }
    let mut dims: Vec<i64> = numbers
        .lhs_batch
        .iter()
        .map(|&d| lhs.dims[d as usize])
        .collect();
    let free = |a: &ArrayShape, batch: &[i64], contracting: &[i64]| -> Vec<i64> {
        (0..a.rank() as i64)
            .filter(|d| !batch.contains(d) && !contracting.contains(d))
            .map(|d| a.dims[d as usize])
            .collect()
    };
    dims.extend(free(&lhs, &numbers.lhs_batch, &numbers.lhs_contracting));
    dims.extend(free(&rhs, &numbers.rhs_batch, &numbers.rhs_contracting));
    // The result element type may differ from the operands' (mixed precision).
    Ok(Some(Inferred::Array {
        element: None,
        dims,
    }))
}

fn pad(opcode: &Opcode, shapes: &[&Shape], attrs: &Attrs) -> Result<Option<Inferred>, Problem> {
    let operand = array(shapes, 0, opcode)?;
    let value = array(shapes, 1, opcode)?;
    if value.rank() != 0 {
        return Err(problem(
            codes::OPERAND_SHAPE,
            Site::Operand(1),
            "the padding value of pad must be a scalar",
        ));
    }
    let padding = required(&attrs.uncommon().padding, "padding", opcode)?;
    if padding.len() != operand.rank() {
        return Err(problem(
            codes::DIMENSION_OUT_OF_RANGE,
            Site::Attribute("padding"),
            format!(
                "padding has {} dimensions but the operand has rank {}",
                padding.len(),
                operand.rank()
            ),
        ));
    }
    let mut dims = Vec::with_capacity(padding.len());
    for (p, &d) in padding.iter().zip(&operand.dims) {
        if p.interior < 0 {
            return Err(problem(
                codes::INVALID_ATTRIBUTE,
                Site::Attribute("padding"),
                "interior padding must not be negative",
            ));
        }
        let size = (|| {
            d.checked_add(p.low)?
                .checked_add(p.high)?
                .checked_add((d - 1).max(0).checked_mul(p.interior)?)
        })();
        match size {
            Some(s) if s >= 0 => dims.push(s),
            _ => {
                return Err(problem(
                    codes::INVALID_ATTRIBUTE,
                    Site::Attribute("padding"),
                    "padding gives a negative or overflowing size",
                ))
            }
        }
    }
    Ok(Some(Inferred::Array {
        element: Some(operand.element),
        dims,
    }))
}

fn dynamic_slice(
    opcode: &Opcode,
    shapes: &[&Shape],
    attrs: &Attrs,
) -> Result<Option<Inferred>, Problem> {
    let operand = array(shapes, 0, opcode)?;
    let sizes = required(
        &attrs.uncommon().dynamic_slice_sizes,
        "dynamic_slice_sizes",
        opcode,
    )?;
    if sizes.len() != operand.rank() {
        return Err(problem(
            codes::SLICE_BOUNDS,
            Site::Attribute("dynamic_slice_sizes"),
            format!(
                "dynamic_slice_sizes has {} entries but the operand has rank {}",
                sizes.len(),
                operand.rank()
            ),
        ));
    }
    check_start_indices(opcode, shapes, operand.rank(), 1)?;
    for (i, (&s, &d)) in sizes.iter().zip(&operand.dims).enumerate() {
        if s < 0 || s > d {
            return Err(problem(
                codes::SLICE_BOUNDS,
                Site::Attribute("dynamic_slice_sizes"),
                format!("slice size {s} of dimension {i} is outside [0, {d}]"),
            ));
        }
    }
    Ok(Some(Inferred::Array {
        element: Some(operand.element),
        dims: sizes.to_vec(),
    }))
}

/// The start indices after operand `first`: one scalar per dimension, or (the
/// legacy form XLA's parser still accepts) one integer vector of `rank` elements.
fn check_start_indices(
    opcode: &Opcode,
    shapes: &[&Shape],
    rank: usize,
    first: usize,
) -> Result<(), Problem> {
    let given = shapes.len() - first;
    if given == 1 && rank != 1 {
        if let Shape::Array(v) = shapes[first] {
            if v.rank() == 1 && v.element.is_integral() && v.dims[0] == rank as i64 {
                return Ok(());
            }
        }
    }
    if given != rank {
        return Err(problem(
            codes::OPERAND_COUNT,
            Site::Opcode,
            format!("{opcode} of a rank-{rank} operand needs {rank} start indices, got {given}"),
        ));
    }
    for k in first..shapes.len() {
        let index = array(shapes, k, opcode)?;
        if index.rank() != 0 || !index.element.is_integral() {
            return Err(problem(
                codes::OPERAND_SHAPE,
                Site::Operand(k),
                format!(
                    "start index {} of {opcode} must be an integer scalar, not {}",
                    k - first,
                    strip_layouts(shapes[k])
                ),
            ));
        }
    }
    Ok(())
}

fn dynamic_update_slice(opcode: &Opcode, shapes: &[&Shape]) -> Result<Option<Inferred>, Problem> {
    let operand = array(shapes, 0, opcode)?;
    let update = array(shapes, 1, opcode)?;
    if update.rank() != operand.rank() || update.dims.iter().zip(&operand.dims).any(|(u, o)| u > o)
    {
        return Err(problem(
            codes::SLICE_BOUNDS,
            Site::Operand(1),
            format!(
                "update {} does not fit in operand {}",
                strip_layouts(shapes[1]),
                strip_layouts(shapes[0])
            ),
        ));
    }
    check_start_indices(opcode, shapes, operand.rank(), 2)?;
    Ok(Some(Inferred::Array {
        element: Some(operand.element),
        dims: operand.dims,
    }))
}

fn reduce(opcode: &Opcode, shapes: &[&Shape], attrs: &Attrs) -> Result<Option<Inferred>, Problem> {
    let n = shapes.len() / 2;
    let dimensions = required(&attrs.dimensions, "dimensions", opcode)?;
    let first = array(shapes, 0, opcode)?;
    dims_in_range(dimensions, first.rank(), "dimensions")?;
    let mut results = Vec::with_capacity(n);
    for k in 0..n {
        let input = array(shapes, k, opcode)?;
        if input.dims != first.dims {
            return Err(problem(
                codes::ELEMENTWISE_SHAPE_MISMATCH,
                Site::Operand(k),
                "the inputs of a variadic reduce must have the same dimensions",
            ));
        }
        let init = array(shapes, n + k, opcode)?;
        if init.rank() != 0 {
            return Err(problem(
                codes::OPERAND_SHAPE,
                Site::Operand(n + k),
                "the init values of reduce must be scalars",
            ));
        }
        let dims: Vec<i64> = (0..input.rank() as i64)
            .filter(|d| !dimensions.contains(d))
            .map(|d| input.dims[d as usize])
            .collect();
        results.push(ArrayShape::new(init.element.clone(), dims));
    }
    if n == 1 {
        let r = results.pop().expect("one result");
        return Ok(Some(Inferred::Array {
            element: Some(r.element),
            dims: r.dims,
        }));
    }
    Ok(Some(Inferred::Exact(Shape::Tuple(
        results.into_iter().map(Shape::Array).collect(),
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::attributes::{decode_attrs, Attrs};
    use crate::model::parse_shape;

    fn run(
        opcode: &str,
        declared: &str,
        operands: &[&str],
        attrs: &[(&str, &str)],
    ) -> Vec<&'static str> {
        let shapes: Vec<Shape> = operands.iter().map(|s| parse_shape(s).unwrap()).collect();
        let refs: Vec<Option<&Shape>> = shapes.iter().map(Some).collect();
        let (decoded, errors): (Attrs, _) = decode_attrs(attrs.iter().copied());
        assert!(errors.is_empty());
        check(
            &Opcode::from_name(opcode),
            &parse_shape(declared).unwrap(),
            &refs,
            &decoded,
        )
        .into_iter()
        .map(|p| p.code)
        .collect()
    }

    #[test]
    fn elementwise() {
        assert!(run("add", "f32[2,3]", &["f32[2,3]{1,0}", "f32[2,3]{0,1}"], &[]).is_empty());
        assert_eq!(
            run("add", "f32[2,3]", &["f32[2,3]", "f32[3,2]"], &[]),
            [codes::ELEMENTWISE_SHAPE_MISMATCH]
        );
        assert_eq!(
            run("add", "f32[2,3]", &["f32[2,3]", "s32[2,3]"], &[]),
            [codes::ELEMENTWISE_SHAPE_MISMATCH]
        );
        assert_eq!(
            run("add", "f32[3,2]", &["f32[2,3]", "f32[2,3]"], &[]),
            [codes::SHAPE_MISMATCH]
        );
        assert_eq!(
            run(
                "compare",
                "f32[2]",
                &["f32[2]", "f32[2]"],
                &[("direction", "LT")]
            ),
            [codes::SHAPE_MISMATCH]
        );
        assert!(run(
            "compare",
            "pred[2]",
            &["f32[2]", "f32[2]"],
            &[("direction", "LT")]
        )
        .is_empty());
        assert!(run("convert", "s32[2]", &["f32[2]"], &[]).is_empty());
        assert_eq!(
            run("negate", "f32[3]", &["f32[2]"], &[]),
            [codes::SHAPE_MISMATCH]
        );
        assert!(run("select", "f32[2]", &["pred[2]", "f32[2]", "f32[2]"], &[]).is_empty());
        assert!(run("clamp", "f32[2]", &["f32[]", "f32[2]", "f32[]"], &[]).is_empty());
        assert_eq!(
            run("select", "f32[2]", &["pred[3]", "f32[2]", "f32[2]"], &[]),
            [codes::ELEMENTWISE_SHAPE_MISMATCH]
        );
        assert_eq!(
            run("add", "f32[2]", &["(f32[2])", "f32[2]"], &[]),
            [codes::OPERAND_SHAPE]
        );
    }

    #[test]
    fn broadcast_rules() {
        assert!(run(
            "broadcast",
            "f32[2,3]",
            &["f32[3]"],
            &[("dimensions", "{1}")]
        )
        .is_empty());
        assert!(run("broadcast", "f32[2,3]", &["f32[]"], &[("dimensions", "{}")]).is_empty());
        assert_eq!(
            run(
                "broadcast",
                "f32[2,3]",
                &["f32[3]"],
                &[("dimensions", "{0}")]
            ),
            [codes::BROADCAST_DIMENSIONS]
        );
        assert_eq!(
            run(
                "broadcast",
                "f32[2,3]",
                &["f32[3]"],
                &[("dimensions", "{0,1}")]
            ),
            [codes::BROADCAST_DIMENSIONS]
        );
        assert_eq!(
            run(
                "broadcast",
                "f32[2,3]",
                &["f32[3]"],
                &[("dimensions", "{2}")]
            ),
            [codes::DIMENSION_OUT_OF_RANGE]
        );
        assert!(run("broadcast", "f32[2,3]", &["f32[]"], &[]).is_empty());
        assert_eq!(
            run("broadcast", "f32[2,3]", &["f32[3]"], &[]),
            [codes::MISSING_ATTRIBUTE]
        );
        assert_eq!(
            run(
                "broadcast",
                "s32[2,3]",
                &["f32[3]"],
                &[("dimensions", "{1}")]
            ),
            [codes::SHAPE_MISMATCH]
        );
    }

    #[test]
    fn transpose_reshape_bitcast() {
        assert!(run(
            "transpose",
            "f32[3,2]",
            &["f32[2,3]"],
            &[("dimensions", "{1,0}")]
        )
        .is_empty());
        assert_eq!(
            run(
                "transpose",
                "f32[3,2]",
                &["f32[2,3]"],
                &[("dimensions", "{1,1}")]
            ),
            [codes::TRANSPOSE_PERMUTATION]
        );
        assert_eq!(
            run(
                "transpose",
                "f32[2,3]",
                &["f32[2,3]"],
                &[("dimensions", "{1,0}")]
            ),
            [codes::SHAPE_MISMATCH]
        );
        assert!(run("reshape", "f32[6]", &["f32[2,3]"], &[]).is_empty());
        assert_eq!(
            run("reshape", "f32[7]", &["f32[2,3]"], &[]),
            [codes::RESHAPE_ELEMENT_COUNT]
        );
        assert!(run("bitcast", "s8[1024,1]{0,1}", &["s8[1,1024]{1,0}"], &[]).is_empty());
        assert!(run("bitcast", "s16[512]", &["s8[1024]"], &[]).is_empty());
        assert_eq!(
            run("bitcast", "s16[1024]", &["s8[1024]"], &[]),
            [codes::BITCAST_SIZE]
        );
    }

    #[test]
    fn slices_and_pads() {
        assert!(run(
            "slice",
            "f32[2,2]",
            &["f32[4,8]"],
            &[("slice", "{[0:2], [0:8:4]}")]
        )
        .is_empty());
        assert!(run("slice", "f32[1]", &["f32[10]"], &[("slice", "{[9:10:3]}")]).is_empty());
        assert_eq!(
            run("slice", "f32[2]", &["f32[4]"], &[("slice", "{[3:5]}")]),
            [codes::SLICE_BOUNDS]
        );
        assert_eq!(
            run("slice", "f32[2]", &["f32[4]"], &[("slice", "{[3:2]}")]),
            [codes::SLICE_BOUNDS]
        );
        assert_eq!(
            run("slice", "f32[2]", &["f32[4]"], &[("slice", "{[0:2:0]}")]),
            [codes::SLICE_BOUNDS]
        );
        assert_eq!(
            run("slice", "f32[3]", &["f32[4]"], &[("slice", "{[0:2]}")]),
            [codes::SHAPE_MISMATCH]
        );
        assert_eq!(
            run("slice", "f32[2]", &["f32[4,4]"], &[("slice", "{[0:2]}")]),
            [codes::SLICE_BOUNDS]
        );
        assert!(run(
            "pad",
            "f32[13]",
            &["f32[4]", "f32[]"],
            &[("padding", "1_2_2")]
        )
        .is_empty());
        assert!(run(
            "pad",
            "f32[2]",
            &["f32[4]", "f32[]"],
            &[("padding", "-1_-1")]
        )
        .is_empty());
        assert_eq!(
            run(
                "pad",
                "f32[5]",
                &["f32[4]", "f32[]"],
                &[("padding", "1_2_2")]
            ),
            [codes::SHAPE_MISMATCH]
        );
        assert_eq!(
            run(
                "dynamic-slice",
                "f32[2]",
                &["f32[4]", "s32[]"],
                &[("dynamic_slice_sizes", "{2}")]
            ),
            Vec::<&str>::new()
        );
        assert_eq!(
            run(
                "dynamic-slice",
                "f32[5]",
                &["f32[4]", "s32[]"],
                &[("dynamic_slice_sizes", "{5}")]
            ),
            [codes::SLICE_BOUNDS]
        );
        assert_eq!(
            run(
                "dynamic-slice",
                "f32[2]",
                &["f32[4]", "s32[]", "s32[]"],
                &[("dynamic_slice_sizes", "{2}")]
            ),
            [codes::OPERAND_COUNT]
        );
        assert!(run(
            "dynamic-update-slice",
            "f32[4]",
            &["f32[4]", "f32[2]", "s32[]"],
            &[]
        )
        .is_empty());
        assert_eq!(
            run(
                "dynamic-update-slice",
                "f32[4]",
                &["f32[4]", "f32[5]", "s32[]"],
                &[]
            ),
            [codes::SLICE_BOUNDS]
        );
    }

    #[test]
    fn concatenate_dot_reduce() {
        assert!(run(
            "concatenate",
            "f32[5,3]",
            &["f32[2,3]", "f32[3,3]"],
            &[("dimensions", "{0}")]
        )
        .is_empty());
        assert_eq!(
            run(
                "concatenate",
                "f32[5,3]",
                &["f32[2,3]", "f32[3,4]"],
                &[("dimensions", "{0}")]
            ),
            [codes::CONCATENATE_SHAPES]
        );
        assert_eq!(
            run(
                "concatenate",
                "f32[6,3]",
                &["f32[2,3]", "f32[3,3]"],
                &[("dimensions", "{0}")]
            ),
            [codes::SHAPE_MISMATCH]
        );
        assert_eq!(
            run(
                "concatenate",
                "f32[5,3]",
                &["f32[2,3]", "f32[3,3]"],
                &[("dimensions", "{2}")]
            ),
            [codes::DIMENSION_OUT_OF_RANGE]
        );
        let dot = [
            ("lhs_batch_dims", "{0}"),
            ("lhs_contracting_dims", "{2}"),
            ("rhs_batch_dims", "{0}"),
            ("rhs_contracting_dims", "{1}"),
        ];
        assert!(run("dot", "f32[8,2,5]", &["f32[8,2,3]", "f32[8,3,5]"], &dot).is_empty());
        assert!(run("dot", "bf16[8,2,5]", &["f32[8,2,3]", "f32[8,3,5]"], &dot).is_empty());
        assert_eq!(
            run("dot", "f32[8,2,5]", &["f32[8,2,4]", "f32[8,3,5]"], &dot),
            [codes::DOT_DIMENSIONS]
        );
        assert_eq!(
            run("dot", "f32[8,5,2]", &["f32[8,2,3]", "f32[8,3,5]"], &dot),
            [codes::SHAPE_MISMATCH]
        );
        assert_eq!(
            run("dot", "f32[8,2,5]", &["f32[7,2,3]", "f32[8,3,5]"], &dot),
            [codes::DOT_DIMENSIONS]
        );
        assert!(run(
            "reduce",
            "f32[2]",
            &["f32[2,3]", "f32[]"],
            &[("dimensions", "{1}")]
        )
        .is_empty());
        assert_eq!(
            run(
                "reduce",
                "f32[3]",
                &["f32[2,3]", "f32[]"],
                &[("dimensions", "{1}")]
            ),
            [codes::SHAPE_MISMATCH]
        );
        assert!(run(
            "reduce",
            "(f32[2], s32[2])",
            &["f32[2,3]", "s32[2,3]", "f32[]", "s32[]"],
            &[("dimensions", "{1}")]
        )
        .is_empty());
        assert_eq!(
            run(
                "reduce",
                "f32[2]",
                &["f32[2,3]", "f32[]"],
                &[("dimensions", "{3}")]
            ),
            [codes::DIMENSION_OUT_OF_RANGE]
        );
    }

    #[test]
    fn tuples_and_unbounded() {
        assert!(run(
            "get-tuple-element",
            "s32[]",
            &["(f32[2], s32[])"],
            &[("index", "1")]
        )
        .is_empty());
        assert_eq!(
            run(
                "get-tuple-element",
                "s32[]",
                &["(f32[2], s32[])"],
                &[("index", "2")]
            ),
            [codes::TUPLE_INDEX]
        );
        assert_eq!(
            run(
                "get-tuple-element",
                "f32[]",
                &["(f32[2], s32[])"],
                &[("index", "1")]
            ),
            [codes::SHAPE_MISMATCH]
        );
        assert!(run("tuple", "(f32[2], s32[])", &["f32[2]", "s32[]"], &[]).is_empty());
        assert_eq!(
            run("tuple", "(f32[2])", &["f32[2]", "s32[]"], &[]),
            [codes::SHAPE_MISMATCH]
        );
        assert!(run("add", "f32[?]", &["f32[?]", "f32[3]"], &[]).is_empty());
        assert!(run("frobnicate", "f32[2]", &["f32[3]"], &[]).is_empty());
    }
}
