//! Decoders for the values of HLO attributes (`dimensions={1,0}`, `slice={[0:2:1]}`,
//! `padding=1_4_1x4_8_0`, `window={size=3x3 ...}`, `dim_labels=b01f_01io->b01f`, dot
//! and gather/scatter dimension numbers, ...) and the decoded set an instruction keeps.
//!
//! Each decoder takes the value's text and returns a value or an [`AttrError`] whose
//! offset is relative to the value, so the builder can point at the exact character.

use rustc_hash::FxHashMap;
use thin_vec::ThinVec;

/// Why an attribute value could not be decoded; `offset` is inside the value text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrError {
    pub offset: usize,
    pub message: String,
}

fn err<T>(offset: usize, message: impl Into<String>) -> Result<T, AttrError> {
    Err(AttrError {
        offset,
        message: message.into(),
    })
}

/// Parses one integer at the start of `text[at..]`, returning it and its end.
fn integer(text: &str, at: usize) -> Result<(i64, usize), AttrError> {
    let bytes = text.as_bytes();
    let mut end = at;
    if matches!(bytes.get(end), Some(b'-') | Some(b'+')) {
        end += 1;
    }
    let digits = end;
    while matches!(bytes.get(end), Some(c) if c.is_ascii_digit()) {
        end += 1;
    }
    if digits == end {
        return err(at, "expected an integer");
    }
    match text[at..end].parse::<i64>() {
        Ok(v) => Ok((v, end)),
        Err(_) => err(at, format!("integer `{}` out of range", &text[at..end])),
    }
}

fn skip_space(text: &str, mut at: usize) -> usize {
    while matches!(text.as_bytes().get(at), Some(c) if c.is_ascii_whitespace()) {
        at += 1;
    }
    at
}

/// A whole value that must be a single integer (`iota_dimension=0`, `index=3`).
pub fn parse_integer(text: &str) -> Result<i64, AttrError> {
    let start = skip_space(text, 0);
    let (v, end) = integer(text, start)?;
    if skip_space(text, end) != text.len() {
        return err(end, "unexpected text after the integer");
    }
    Ok(v)
}

/// A whole value that must be a small integer (a dimension, an index, a count of
/// groups or bits): what [`Attrs`] keeps in four bytes.
pub fn parse_small_integer(text: &str) -> Result<i32, AttrError> {
    let value = parse_integer(text)?;
    i32::try_from(value).or_else(|_| err(0, format!("{value} is out of range")))
}

/// `{1,0}` or `{}` (also a bare `1,0` or a single `3`): a list of integers.
pub fn parse_int_list(text: &str) -> Result<Vec<i64>, AttrError> {
    let mut at = skip_space(text, 0);
    let braced = text.as_bytes().get(at) == Some(&b'{');
    if braced {
        at += 1;
    }
    let mut out = Vec::new();
    at = skip_space(text, at);
    let close = |at: usize| braced && text.as_bytes().get(at) == Some(&b'}');
    if !close(at) && at < text.len() {
        loop {
            at = skip_space(text, at);
            let (v, end) = integer(text, at)?;
            out.push(v);
            at = skip_space(text, end);
            if text.as_bytes().get(at) == Some(&b',') {
                at += 1;
                continue;
            }
            break;
        }
    }
    if braced {
        if !close(at) {
            return err(at, "expected `,` or `}`");
        }
        at += 1;
    }
    if skip_space(text, at) != text.len() {
        return err(at, "unexpected text after the list");
    }
    Ok(out)
}

/// Whether a braced value opens with a second brace (`{{128,32}}`).
fn is_nested_list(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with('{') && text[1..].trim_start().starts_with('{')
}

/// One dimension of `slice={[start:limit:stride], ...}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceDim {
    pub start: i64,
    pub limit: i64,
    pub stride: i64,
}

/// `{[0:2:1], [1:4]}` (stride defaults to 1).
pub fn parse_slice(text: &str) -> Result<Vec<SliceDim>, AttrError> {
    let bytes = text.as_bytes();
    let mut at = skip_space(text, 0);
    if bytes.get(at) != Some(&b'{') {
        return err(at, "expected `{` starting the slice");
    }
    at = skip_space(text, at + 1);
    let mut out = Vec::new();
    if bytes.get(at) == Some(&b'}') {
        return finish(text, at + 1, out);
    }
    loop {
        if bytes.get(at) != Some(&b'[') {
            return err(at, "expected `[start:limit:stride]`");
        }
        let mut parts = Vec::with_capacity(3);
        at += 1;
        loop {
            at = skip_space(text, at);
            let (v, end) = integer(text, at)?;
            parts.push(v);
            at = skip_space(text, end);
            match bytes.get(at) {
                Some(b':') if parts.len() < 3 => at += 1,
                Some(b']') => break,
                _ => return err(at, "expected `:` or `]`"),
            }
        }
        if parts.len() < 2 {
            return err(at, "a slice dimension needs `start:limit`");
        }
        out.push(SliceDim {
            start: parts[0],
            limit: parts[1],
            stride: parts.get(2).copied().unwrap_or(1),
        });
        at = skip_space(text, at + 1);
        match bytes.get(at) {
            Some(b',') => at = skip_space(text, at + 1),
            Some(b'}') => return finish(text, at + 1, out),
            _ => return err(at, "expected `,` or `}`"),
        }
    }
}

fn finish<T>(text: &str, at: usize, value: T) -> Result<T, AttrError> {
    if skip_space(text, at) != text.len() {
        return err(at, "unexpected text after the value");
    }
    Ok(value)
}

/// One dimension of a padding config: `low_high` or `low_high_interior`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PadDim {
    pub low: i64,
    pub high: i64,
    pub interior: i64,
}

/// `1_4_1x4_8_0`: dimensions separated by `x`, each `low_high[_interior]`. An empty
/// text is the padding of a scalar.
pub fn parse_padding(text: &str) -> Result<Vec<PadDim>, AttrError> {
    let text_trimmed = text.trim_end();
    let start = skip_space(text, 0);
    if start >= text_trimmed.len() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut at = start;
    for part in text_trimmed[start..].split('x') {
        let numbers = split_numbers(text, at, part, '_')?;
        if !(2..=3).contains(&numbers.len()) {
            return err(
                at,
                "padding is `low_high` or `low_high_interior` per dimension",
            );
        }
        out.push(PadDim {
            low: numbers[0],
            high: numbers[1],
            interior: numbers.get(2).copied().unwrap_or(0),
        });
        at += part.len() + 1;
    }
    Ok(out)
}

/// Splits `part` (found at `at` in `text`) by `sep` into integers.
fn split_numbers(text: &str, at: usize, part: &str, sep: char) -> Result<Vec<i64>, AttrError> {
    let mut out = Vec::new();
    let mut offset = at;
    for piece in part.split(sep) {
        let (v, end) = integer(text, offset)?;
        if end != offset + piece.len() {
            return err(
                end,
                format!("unexpected `{}`", &text[end..offset + piece.len()]),
            );
        }
        out.push(v);
        offset += piece.len() + 1;
    }
    Ok(out)
}

/// One spatial dimension of a `window={...}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowDim {
    pub size: i64,
    pub stride: i64,
    pub padding_low: i64,
    pub padding_high: i64,
    pub base_dilation: i64,
    pub window_dilation: i64,
    pub reversal: bool,
}

impl Default for WindowDim {
    fn default() -> Self {
        WindowDim {
            size: 1,
            stride: 1,
            padding_low: 0,
            padding_high: 0,
            base_dilation: 1,
            window_dilation: 1,
            reversal: false,
        }
    }
}

/// `{size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}`
/// (XLA's window syntax; `lhs_dilate` is the base dilation, `rhs_dilate` the window's).
pub fn parse_window(text: &str) -> Result<Vec<WindowDim>, AttrError> {
    let bytes = text.as_bytes();
    let mut at = skip_space(text, 0);
    if bytes.get(at) != Some(&b'{') {
        return err(at, "expected `{` starting the window");
    }
    at += 1;
    let mut fields: Vec<(&str, usize, &str)> = Vec::new();
    loop {
        at = skip_space(text, at);
        match bytes.get(at) {
            Some(b'}') => {
                at += 1;
                break;
            }
            None => return err(at, "unterminated window"),
            _ => {}
        }
        let key_start = at;
        while matches!(bytes.get(at), Some(c) if c.is_ascii_alphanumeric() || *c == b'_') {
            at += 1;
        }
        let key = &text[key_start..at];
        if bytes.get(at) != Some(&b'=') {
            return err(at, "expected `key=value` in the window");
        }
        at += 1;
        let value_start = at;
        while matches!(bytes.get(at), Some(c) if !c.is_ascii_whitespace() && *c != b'}') {
            at += 1;
        }
        fields.push((key, value_start, &text[value_start..at]));
    }
    finish(text, at, ())?;
    let size = fields.iter().find(|f| f.0 == "size");
    let Some(&(_, size_at, size_text)) = size else {
        return err(0, "a window needs `size=`");
    };
    let sizes = split_numbers(text, size_at, size_text, 'x')?;
    let mut dims: Vec<WindowDim> = sizes
        .iter()
        .map(|&size| WindowDim {
            size,
            ..WindowDim::default()
        })
        .collect();
    for &(key, value_at, value) in &fields {
        let per_dim: Vec<i64> = match key {
            "size" => continue,
            "pad" => {
                let pads = parse_padding(value).map_err(|e| AttrError {
                    offset: value_at + e.offset,
                    ..e
                })?;
                if pads.len() != dims.len() {
                    return err(
                        value_at,
                        format!(
                            "`pad` has {} dimensions, `size` has {}",
                            pads.len(),
                            dims.len()
                        ),
                    );
                }
                for (d, p) in dims.iter_mut().zip(pads) {
                    d.padding_low = p.low;
                    d.padding_high = p.high;
                }
                continue;
            }
            "stride" | "lhs_dilate" | "rhs_dilate" | "rhs_reversal" => {
                split_numbers(text, value_at, value, 'x')?
            }
            _ => {
                return err(
                    value_at - key.len() - 1,
                    format!("unknown window field `{key}`"),
                )
            }
        };
        if per_dim.len() != dims.len() {
            return err(
                value_at,
                format!(
                    "`{key}` has {} dimensions, `size` has {}",
                    per_dim.len(),
                    dims.len()
                ),
            );
        }
        for (d, v) in dims.iter_mut().zip(per_dim) {
            match key {
                "stride" => d.stride = v,
                "lhs_dilate" => d.base_dilation = v,
                "rhs_dilate" => d.window_dilation = v,
                _ => d.reversal = v != 0,
            }
        }
    }
    Ok(dims)
}

/// Convolution dimension numbers from `dim_labels=b01f_01io->b01f`: which dimension of
/// each of input, kernel and output is batch/feature/spatial.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConvDimLabels {
    pub input_batch: i64,
    pub input_feature: i64,
    pub input_spatial: Vec<i64>,
    pub kernel_input_feature: i64,
    pub kernel_output_feature: i64,
    pub kernel_spatial: Vec<i64>,
    pub output_batch: i64,
    pub output_feature: i64,
    pub output_spatial: Vec<i64>,
}

/// Decodes `b01f_01io->b01f` as XLA's `ParseConvolutionDimensionNumbers` does:
/// spatial dimensions are digits numbered from 0, `?` marks a dimension that is
/// none of them, and a missing `b`/`f` (`i`/`o`) stays dimension 0. Its errors use
/// XLA's wording (`expects [0-2bf?] in lhs dimension numbers`).
pub fn parse_dim_labels(text: &str) -> Result<ConvDimLabels, AttrError> {
    let text = text.trim();
    let Some((lhs_rhs, out)) = text.split_once("->") else {
        return err(0, "dim_labels look like `b01f_01io->b01f`");
    };
    let Some((lhs, rhs)) = lhs_rhs.split_once('_') else {
        return err(0, "dim_labels look like `b01f_01io->b01f`");
    };
    let rhs_at = lhs.len() + 1;
    let out_at = lhs_rhs.len() + 2;
    let (input_batch, input_feature, input_spatial) = labels(lhs, 0, ['b', 'f'], "lhs")?;
    let (kernel_input_feature, kernel_output_feature, kernel_spatial) =
        labels(rhs, rhs_at, ['i', 'o'], "rhs")?;
    let (output_batch, output_feature, output_spatial) = labels(out, out_at, ['b', 'f'], "output")?;
    if input_spatial.len() != kernel_spatial.len() || input_spatial.len() != output_spatial.len() {
        return err(
            0,
            format!(
                "input, kernel, and output must have same number of spatial dimensions, \
                 but got {}, {}, {}",
                input_spatial.len(),
                kernel_spatial.len(),
                output_spatial.len()
            ),
        );
    }
    Ok(ConvDimLabels {
        input_batch,
        input_feature,
        input_spatial,
        kernel_input_feature,
        kernel_output_feature,
        kernel_spatial,
        output_batch,
        output_feature,
        output_spatial,
    })
}

/// One group of labels (`side` names it in errors): the positions of `pair[0]` and
/// `pair[1]` and of the spatial digits.
fn labels(
    group: &str,
    at: usize,
    pair: [char; 2],
    side: &str,
) -> Result<(i64, i64, Vec<i64>), AttrError> {
    let mut seen = Vec::new();
    for c in group.chars().filter(|&c| c != '?') {
        if seen.contains(&c) {
            return err(
                at,
                format!("expects unique {side} dimension numbers, but sees {group}"),
            );
        }
        seen.push(c);
    }
    let count = seen.iter().filter(|c| !pair.contains(c)).count();
    let (mut a, mut b) = (0, 0);
    let mut spatial = vec![-1; count];
    for (i, c) in group.chars().enumerate() {
        let pos = i as i64;
        match c {
            '?' => {}
            _ if c == pair[0] => a = pos,
            _ if c == pair[1] => b = pos,
            _ => match c.to_digit(10).map(|d| d as usize) {
                Some(d) if d < count => spatial[d] = pos,
                _ => {
                    return err(
                        at + i,
                        format!(
                            "expects [0-{}{}{}?] in {side} dimension numbers",
                            count as i64 - 1,
                            pair[0],
                            pair[1]
                        ),
                    )
                }
            },
        }
    }
    Ok((a, b, spatial))
}

/// Dot dimension numbers (`lhs_batch_dims={0} lhs_contracting_dims={2} ...`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DotDims {
    pub lhs_batch: Vec<i64>,
    pub rhs_batch: Vec<i64>,
    pub lhs_contracting: Vec<i64>,
    pub rhs_contracting: Vec<i64>,
}

/// Gather dimension numbers plus `slice_sizes`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GatherDims {
    pub offset_dims: Vec<i64>,
    pub collapsed_slice_dims: Vec<i64>,
    pub start_index_map: Vec<i64>,
    pub index_vector_dim: i64,
    pub operand_batching_dims: Vec<i64>,
    pub start_indices_batching_dims: Vec<i64>,
    pub slice_sizes: Vec<i64>,
}

/// Scatter dimension numbers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScatterDims {
    pub update_window_dims: Vec<i64>,
    pub inserted_window_dims: Vec<i64>,
    pub scatter_dims_to_operand_dims: Vec<i64>,
    pub index_vector_dim: i64,
    pub input_batching_dims: Vec<i64>,
    pub scatter_indices_batching_dims: Vec<i64>,
}

/// `direction=` of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComparisonDirection {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

pub fn parse_comparison_direction(text: &str) -> Result<ComparisonDirection, AttrError> {
    Ok(match text.trim() {
        "EQ" => ComparisonDirection::Eq,
        "NE" => ComparisonDirection::Ne,
        "LT" => ComparisonDirection::Lt,
        "LE" => ComparisonDirection::Le,
        "GT" => ComparisonDirection::Gt,
        "GE" => ComparisonDirection::Ge,
        other => {
            return err(
                0,
                format!("unknown comparison direction `{other}` (EQ, NE, LT, LE, GT, GE)"),
            )
        }
    })
}

/// `backend_config={...}` (JSON) or `backend_config="..."` (a quoted string, which
/// usually holds JSON too). XLA keeps backend configs as opaque strings, and real
/// files also carry proto-text-like configs with bare keys (`{sizes:[32]}`) and MLIR
/// dictionaries; so this never fails: strict JSON, then JSON with bare keys quoted,
/// else the text itself as a JSON string.
pub fn parse_backend_config(text: &str) -> serde_json::Value {
    let trimmed = text.trim();
    let inner = if trimmed.starts_with('"') {
        match serde_json::from_str::<String>(trimmed) {
            Ok(inner) => inner,
            Err(_) => return serde_json::Value::String(trimmed.to_string()),
        }
    } else {
        trimmed.to_string()
    };
    if inner.trim().is_empty() {
        return serde_json::Value::Null;
    }
    serde_json::from_str(&inner)
        .or_else(|_| serde_json::from_str(&quote_bare_keys(&inner)))
        .or_else(|_| serde_json::from_str(&drop_trailing_commas(&quote_bare_keys(&inner))))
        .unwrap_or(serde_json::Value::String(inner))
}

/// Drops a comma before a closing `}` or `]` outside strings: XLA's JSON reader
/// (protobuf's) accepts `{"a": 1,}`, and its tests write configs that way.
fn drop_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let mut in_string = false;
    while let Some((i, c)) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let rest = text[i + 1..].trim_start();
            if rest.starts_with('}') || rest.starts_with(']') {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// Quotes identifier keys (`{kind:"x"}` → `{"kind":"x"}`) outside strings.
fn quote_bare_keys(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    let mut last_significant = b' ';
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'"' {
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
            out.push_str(&text[start..i]);
            last_significant = b'"';
            continue;
        }
        if (c.is_ascii_alphabetic() || c == b'_') && matches!(last_significant, b'{' | b',') {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            if bytes.get(j) == Some(&b':') {
                out.push('"');
                out.push_str(&text[start..i]);
                out.push('"');
            } else {
                out.push_str(&text[start..i]);
            }
            last_significant = b'a';
            continue;
        }
        if !c.is_ascii_whitespace() {
            last_significant = c;
        }
        let ch_len = text[i..].chars().next().map(char::len_utf8).unwrap_or(1);
        out.push_str(&text[i..i + ch_len]);
        i += ch_len;
    }
    out
}

/// The attributes an instruction's opcode needs, decoded. Fields are `None` when the
/// attribute is absent (or could not be decoded; that was reported). Those of the few
/// opcodes that have them are behind [`Attrs::uncommon`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Attrs {
    /// Broadcast, reduce, transpose, concatenate, reverse: most decoded instructions.
    pub dimensions: Option<ThinVec<i64>>,
    pub slice: Option<ThinVec<SliceDim>>,
    pub dot: Option<Box<DotDims>>,
    /// `index=` of `get-tuple-element`.
    pub tuple_index: Option<i32>,
    pub comparison_direction: Option<ComparisonDirection>,
    /// `kind=` of a fusion (`kLoop`, `kInput`, `kOutput`, `kCustom`).
    pub fusion_kind: Option<Box<str>>,
    /// `backend_config=` as written: decoded when asked ([`Attrs::backend_config`]).
    /// Decoded once for all, its maps took 12 MB of a 60 MB dump's model, for the
    /// few fields a hover or a check reads from a few instructions.
    pub backend_config_text: Option<Box<str>>,
    uncommon: Option<Box<UncommonAttrs>>,
}

/// The attributes of convolutions and windows, gathers and scatters, custom calls and
/// a few more, boxed apart: one in five instructions of a dump has decoded attributes,
/// nearly all of them a `dimensions=` list or a fusion's kind, and with these inline
/// every one of them took 192 bytes (10 MiB of a 60 MB dump's model), not 80.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UncommonAttrs {
    // The dimension-number groups are boxed: only convolutions, gathers and
    // scatters have them.
    pub padding: Option<ThinVec<PadDim>>,
    pub window: Option<ThinVec<WindowDim>>,
    pub dim_labels: Option<Box<ConvDimLabels>>,
    pub gather: Option<Box<GatherDims>>,
    pub scatter: Option<Box<ScatterDims>>,
    pub slice_sizes: Option<ThinVec<i64>>,
    pub dynamic_slice_sizes: Option<ThinVec<i64>>,
    pub iota_dimension: Option<i32>,
    pub index_vector_dim: Option<i32>,
    pub feature_group_count: Option<i32>,
    pub batch_group_count: Option<i32>,
    pub exponent_bits: Option<i32>,
    pub mantissa_bits: Option<i32>,
    pub is_stable: Option<bool>,
    pub custom_call_target: Option<Box<str>>,
}

impl UncommonAttrs {
    /// None of them.
    pub const NONE: UncommonAttrs = UncommonAttrs {
        padding: None,
        window: None,
        dim_labels: None,
        gather: None,
        scatter: None,
        slice_sizes: None,
        dynamic_slice_sizes: None,
        iota_dimension: None,
        index_vector_dim: None,
        feature_group_count: None,
        batch_group_count: None,
        exponent_bits: None,
        mantissa_bits: None,
        is_stable: None,
        custom_call_target: None,
    };
}

impl Attrs {
    /// The decoded `backend_config` ([`parse_backend_config`]), if the instruction has one.
    pub fn backend_config(&self) -> Option<serde_json::Value> {
        self.backend_config_text
            .as_deref()
            .map(parse_backend_config)
    }

    /// The attributes few instructions have ([`UncommonAttrs::NONE`] when it has none).
    pub fn uncommon(&self) -> &UncommonAttrs {
        self.uncommon.as_deref().unwrap_or(&UncommonAttrs::NONE)
    }

    /// The same to set one: boxed on the first.
    pub fn uncommon_mut(&mut self) -> &mut UncommonAttrs {
        self.uncommon.get_or_insert_with(Box::default)
    }

    /// No attribute decoded: what most instructions (elementwise ops) have. The model
    /// stores nothing for them (see `Instruction::attrs`).
    pub const NONE: Attrs = Attrs {
        dimensions: None,
        slice: None,
        dot: None,
        tuple_index: None,
        comparison_direction: None,
        fusion_kind: None,
        backend_config_text: None,
        uncommon: None,
    };

    /// Boxed, or nothing when no attribute was decoded: `Attrs` is the largest part of an
    /// instruction and most instructions have none.
    pub fn boxed(self) -> Option<Box<Attrs>> {
        (self != Attrs::NONE).then(|| Box::new(self))
    }
}

/// Attributes XLA's parser accepts (on some opcode); anything else gets a warning.
pub const KNOWN_ATTRIBUTES: &[&str] = &[
    "algorithm",
    "all_gather_dimension",
    "api_version",
    "backend_config",
    "batch_group_count",
    "body",
    "branch_computations",
    "called_computations",
    "calls",
    "channel_id",
    "collective_device_list",
    "comparator",
    "condition",
    "constrain_layout",
    "control-predecessors",
    "custom_call_has_side_effect",
    "custom_call_schedule",
    "custom_call_target",
    "dim_labels",
    "dimensions",
    "direction",
    "distribution",
    "dynamic_slice_sizes",
    "epsilon",
    "exponent_bits",
    "feature_group_count",
    "feature_index",
    "fft_length",
    "fft_type",
    "frontend_attributes",
    "index",
    "index_vector_dim",
    "indices_are_sorted",
    "inferred_dimension",
    "infeed_config",
    "inplace",
    "inserted_window_dims",
    "input_batching_dims",
    "iota_dimension",
    "is_cross_program_prefetch",
    "is_host_transfer",
    "is_stable",
    "k",
    "kind",
    "largest",
    "lhs_batch_dims",
    "lhs_contracting_dims",
    "lhs_ragged_dims",
    "literal",
    "mantissa_bits",
    "metadata",
    "num_carries",
    "offset_dims",
    "collapsed_slice_dims",
    "operand_batching_dims",
    "operand_layout_constraints",
    "operand_precision",
    "original_value",
    "outfeed_config",
    "outfeed_shape",
    "output_to_operand_aliasing",
    "padding",
    "padding_type",
    "precision_config",
    "replica_groups",
    "result_accuracy",
    "rhs_batch_dims",
    "rhs_contracting_dims",
    "rhs_group_dims",
    "sharding",
    "scatter",
    "scatter_dims_to_operand_dims",
    "scatter_indices_batching_dims",
    "schedule",
    "select",
    "slice",
    "slice_sizes",
    "source_target_pairs",
    "sparsity",
    "split_dimension",
    "split_count",
    "start_index_map",
    "start_indices_batching_dims",
    "statistics",
    "to_apply",
    "transpose_a",
    "left_side",
    "lower",
    "unit_diagonal",
    "type",
    "unique_indices",
    "update_window_dims",
    "use_global_device_ids",
    "window",
    "wrapped_opcode",
    "async_execution_thread",
    "async_group_id",
    "async_wrapped_instruction",
    "cross_program_prefetch_index",
    "dot_dimension_numbers",
    "operand_index",
    "send_recv_validation",
    "slice_starts",
    "source_target_pairs",
    // Accepted by XLA's parser on some instruction (`hlo_parser.cc`).
    "convolution_kind",
    "deduplicated_name",
    "delta",
    "domain",
    "has_dynamic_root",
    "is_associative",
    "is_composite",
    "is_reverse",
    "metadata_payload",
    "mode",
    "origin",
    "parameter_replication",
    "profile_type",
    "scheduling_name",
    "sparsity_config",
];

/// Whether XLA knows attribute `name` (binary search in a sorted copy of the list).
pub fn is_known_attribute(name: &str) -> bool {
    known_attribute(name).is_some()
}

/// The attribute name as a static string when XLA's parser knows it.
pub fn known_attribute(name: &str) -> Option<&'static str> {
    AttrName::of(name).known()
}

/// The names XLA's parser knows, sorted: [`AttrName`] is a place in this list.
fn sorted_names() -> &'static [&'static str] {
    static SORTED: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    SORTED.get_or_init(|| {
        let mut v: Vec<&str> = KNOWN_ATTRIBUTES
            .iter()
            .chain(COMPUTATION_ATTRIBUTES)
            .copied()
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    })
}

/// An attribute's name: its place among the names XLA knows, or unknown. Two bytes
/// instead of a string in each of the million attributes of a large dump. An unknown
/// name (the model warns about it) equals no known one; its spelling is the text at
/// the attribute's `name_range`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttrName(u16);

impl AttrName {
    pub const UNKNOWN: AttrName = AttrName(u16::MAX);

    pub fn of(name: &str) -> AttrName {
        sorted_names()
            .binary_search(&name)
            .map_or(AttrName::UNKNOWN, |i| AttrName(i as u16))
    }

    /// The name, when XLA knows it.
    pub fn known(self) -> Option<&'static str> {
        sorted_names().get(usize::from(self.0)).copied()
    }

    /// The name; an unknown one reads as the empty string (see the type's docs).
    pub fn as_str(self) -> &'static str {
        self.known().unwrap_or("")
    }
}

/// Comparing with a name the table lacks is always false, which would hide a name the
/// code reads but the table forgot (the model also warns about it in valid dumps):
/// debug builds stop there.
impl PartialEq<str> for AttrName {
    fn eq(&self, other: &str) -> bool {
        debug_assert!(
            AttrName::of(other) != AttrName::UNKNOWN,
            "`{other}` is not in the table of attribute names"
        );
        self.known() == Some(other)
    }
}

impl PartialEq<&str> for AttrName {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl std::fmt::Debug for AttrName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.known() {
            Some(name) => write!(f, "{name:?}"),
            None => f.write_str("<unknown>"),
        }
    }
}

impl std::fmt::Display for AttrName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Attributes whose value names a computation (or a list of them).
pub const COMPUTATION_ATTRIBUTES: &[&str] = &[
    "to_apply",
    "calls",
    "condition",
    "body",
    "branch_computations",
    "called_computations",
    "select",
    "scatter",
    "comparator",
    "true_computation",
    "false_computation",
];

/// Decodes the attributes an instruction needs from `(name, value text)` pairs.
/// Returns the decoded set and, per failed attribute, its index and the error.
pub fn decode_attrs<'a>(
    pairs: impl Iterator<Item = (&'a str, &'a str)>,
) -> (Attrs, Vec<(usize, AttrError)>) {
    let mut attrs = Attrs::default();
    let mut errors = Vec::new();
    let mut lists: FxHashMap<&'a str, Vec<i64>> = FxHashMap::default();
    for (i, (name, value)) in pairs.enumerate() {
        let result: Result<(), AttrError> = (|| {
            match name {
                "dimensions" => attrs.dimensions = Some(parse_int_list(value)?.into()),
                "slice" => attrs.slice = Some(parse_slice(value)?.into()),
                "padding" => {
                    // `padding=` is a PaddingConfig on `pad`; convolutions spell padding in `window`.
                    attrs.uncommon_mut().padding = Some(parse_padding(value)?.into())
                }
                "window" => attrs.uncommon_mut().window = Some(parse_window(value)?.into()),
                "dim_labels" => {
                    attrs.uncommon_mut().dim_labels = Some(Box::new(parse_dim_labels(value)?))
                }
                // A collective-permute's in-place slices are a list of lists
                // (`{{128,32}}`): only a gather's flat list is kept.
                "slice_sizes" if !is_nested_list(value) => {
                    attrs.uncommon_mut().slice_sizes = Some(parse_int_list(value)?.into())
                }
                "dynamic_slice_sizes" => {
                    attrs.uncommon_mut().dynamic_slice_sizes = Some(parse_int_list(value)?.into())
                }
                "iota_dimension" => {
                    attrs.uncommon_mut().iota_dimension = Some(parse_small_integer(value)?)
                }
                "index_vector_dim" => {
                    attrs.uncommon_mut().index_vector_dim = Some(parse_small_integer(value)?)
                }
                "index" => attrs.tuple_index = Some(parse_small_integer(value)?),
                "feature_group_count" => {
                    attrs.uncommon_mut().feature_group_count = Some(parse_small_integer(value)?)
                }
                "batch_group_count" => {
                    attrs.uncommon_mut().batch_group_count = Some(parse_small_integer(value)?)
                }
                "exponent_bits" => {
                    attrs.uncommon_mut().exponent_bits = Some(parse_small_integer(value)?)
                }
                "mantissa_bits" => {
                    attrs.uncommon_mut().mantissa_bits = Some(parse_small_integer(value)?)
                }
                "direction" => {
                    attrs.comparison_direction = Some(parse_comparison_direction(value)?)
                }
                "kind" => attrs.fusion_kind = Some(value.trim().into()),
                "custom_call_target" => {
                    attrs.uncommon_mut().custom_call_target = Some(unquote(value).into())
                }
                "is_stable" => attrs.uncommon_mut().is_stable = Some(value.trim() == "true"),
                "backend_config" => attrs.backend_config_text = Some(value.into()),
                "lhs_batch_dims"
                | "rhs_batch_dims"
                | "lhs_contracting_dims"
                | "rhs_contracting_dims"
                | "offset_dims"
                | "collapsed_slice_dims"
                | "start_index_map"
                | "operand_batching_dims"
                | "start_indices_batching_dims"
                | "update_window_dims"
                | "inserted_window_dims"
                | "scatter_dims_to_operand_dims"
                | "input_batching_dims"
                | "scatter_indices_batching_dims" => {
                    lists.insert(name, parse_int_list(value)?);
                }
                _ => {}
            }
            Ok(())
        })();
        if let Err(e) = result {
            errors.push((i, e));
        }
    }
    let has_dot = [
        "lhs_batch_dims",
        "rhs_batch_dims",
        "lhs_contracting_dims",
        "rhs_contracting_dims",
    ]
    .iter()
    .any(|k| lists.contains_key(k));
    let mut take = |key: &str| lists.remove(key).unwrap_or_default();
    if has_dot {
        attrs.dot = Some(Box::new(DotDims {
            lhs_batch: take("lhs_batch_dims"),
            rhs_batch: take("rhs_batch_dims"),
            lhs_contracting: take("lhs_contracting_dims"),
            rhs_contracting: take("rhs_contracting_dims"),
        }));
    }
    let mut take = |key: &str| lists.remove(key);
    let offset_dims = take("offset_dims");
    let collapsed = take("collapsed_slice_dims");
    let start_index_map = take("start_index_map");
    let operand_batching = take("operand_batching_dims");
    let start_batching = take("start_indices_batching_dims");
    if offset_dims.is_some()
        || collapsed.is_some()
        || start_index_map.is_some()
        || attrs.uncommon().slice_sizes.is_some()
    {
        attrs.uncommon_mut().gather = Some(Box::new(GatherDims {
            offset_dims: offset_dims.unwrap_or_default(),
            collapsed_slice_dims: collapsed.unwrap_or_default(),
            start_index_map: start_index_map.unwrap_or_default(),
            index_vector_dim: attrs.uncommon().index_vector_dim.map_or(0, i64::from),
            operand_batching_dims: operand_batching.unwrap_or_default(),
            start_indices_batching_dims: start_batching.unwrap_or_default(),
            slice_sizes: attrs
                .uncommon()
                .slice_sizes
                .as_deref()
                .unwrap_or_default()
                .to_vec(),
        }));
    }
    let update_window = take("update_window_dims");
    let inserted = take("inserted_window_dims");
    let to_operand = take("scatter_dims_to_operand_dims");
    let input_batching = take("input_batching_dims");
    let indices_batching = take("scatter_indices_batching_dims");
    if update_window.is_some() || inserted.is_some() || to_operand.is_some() {
        attrs.uncommon_mut().scatter = Some(Box::new(ScatterDims {
            update_window_dims: update_window.unwrap_or_default(),
            inserted_window_dims: inserted.unwrap_or_default(),
            scatter_dims_to_operand_dims: to_operand.unwrap_or_default(),
            index_vector_dim: attrs.uncommon().index_vector_dim.map_or(0, i64::from),
            input_batching_dims: input_batching.unwrap_or_default(),
            scatter_indices_batching_dims: indices_batching.unwrap_or_default(),
        }));
    }
    (attrs, errors)
}

/// The text of a `"..."` value without quotes (escapes decoded), or the text itself.
pub fn unquote(value: &str) -> String {
    let v = value.trim();
    if v.starts_with('"') {
        serde_json::from_str::<String>(v).unwrap_or_else(|_| v.trim_matches('"').to_string())
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_integers_fit_four_bytes_or_are_reported() {
        assert_eq!(parse_small_integer(" 3 "), Ok(3));
        assert_eq!(parse_small_integer("-1"), Ok(-1));
        let too_large = parse_small_integer("4294967296").unwrap_err();
        assert!(too_large.message.contains("out of range"), "{too_large:?}");
    }

    /// Every name XLA knows is its own place in the table and reads back; an unknown
    /// name equals no known one and prints as unknown.
    #[test]
    fn attribute_names_are_places_in_the_table() {
        for &name in KNOWN_ATTRIBUTES.iter().chain(COMPUTATION_ATTRIBUTES) {
            let place = AttrName::of(name);
            assert_ne!(place, AttrName::UNKNOWN, "{name}");
            assert_eq!(place.known(), Some(name));
            assert!(place == name);
            assert_eq!(place.to_string(), name);
        }
        let unknown = AttrName::of("frobnicate");
        assert_eq!(unknown, AttrName::UNKNOWN);
        assert_eq!(unknown.known(), None);
        assert!(unknown != "metadata");
        assert_eq!(format!("{unknown:?}"), "<unknown>");
        // What XLA prints for a reshape and a scan: valid output, no warning.
        assert!(is_known_attribute("inferred_dimension"));
        assert!(is_known_attribute("num_carries"));
    }

    #[test]
    fn int_lists() {
        assert_eq!(parse_int_list("{1,0}"), Ok(vec![1, 0]));
        assert_eq!(parse_int_list("{}"), Ok(vec![]));
        assert_eq!(parse_int_list("{ 3 , -1 }"), Ok(vec![3, -1]));
        assert_eq!(parse_int_list("2"), Ok(vec![2]));
        assert_eq!(parse_int_list("{1,}").unwrap_err().offset, 3);
        assert_eq!(parse_int_list("{1 2}").unwrap_err().offset, 3);
        assert!(parse_int_list("{1").is_err());
        assert!(parse_int_list("{99999999999999999999}").is_err());
        assert!(parse_int_list("{a}").is_err());
    }

    #[test]
    fn slices() {
        assert_eq!(
            parse_slice("{[0:2:1], [1:4]}"),
            Ok(vec![
                SliceDim {
                    start: 0,
                    limit: 2,
                    stride: 1
                },
                SliceDim {
                    start: 1,
                    limit: 4,
                    stride: 1
                }
            ])
        );
        assert_eq!(parse_slice("{}"), Ok(vec![]));
        assert_eq!(
            parse_slice("{[0:10:3]}"),
            Ok(vec![SliceDim {
                start: 0,
                limit: 10,
                stride: 3
            }])
        );
        assert!(parse_slice("{[0]}").is_err());
        assert!(parse_slice("{[0:1:2:3]}").is_err());
        assert!(parse_slice("[0:1]").is_err());
        assert_eq!(parse_slice("{[0:1] [2:3]}").unwrap_err().offset, 7);
    }

    #[test]
    fn paddings() {
        assert_eq!(
            parse_padding("1_4_1x4_8_0"),
            Ok(vec![
                PadDim {
                    low: 1,
                    high: 4,
                    interior: 1
                },
                PadDim {
                    low: 4,
                    high: 8,
                    interior: 0
                }
            ])
        );
        assert_eq!(
            parse_padding("-1_2"),
            Ok(vec![PadDim {
                low: -1,
                high: 2,
                interior: 0
            }])
        );
        assert_eq!(parse_padding(""), Ok(vec![]));
        assert!(parse_padding("1").is_err());
        assert!(parse_padding("1_2_3_4").is_err());
        let e = parse_padding("1_2x3_q").unwrap_err();
        assert_eq!(e.offset, 6);
    }

    #[test]
    fn windows() {
        let w = parse_window(
            "{size=3x3 stride=2x1 pad=0_1x2_2 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1}",
        )
        .unwrap();
        assert_eq!(
            w[0],
            WindowDim {
                size: 3,
                stride: 2,
                padding_low: 0,
                padding_high: 1,
                base_dilation: 1,
                window_dilation: 3,
                reversal: false
            }
        );
        assert_eq!(
            w[1],
            WindowDim {
                size: 3,
                stride: 1,
                padding_low: 2,
                padding_high: 2,
                base_dilation: 2,
                window_dilation: 1,
                reversal: true
            }
        );
        assert_eq!(
            parse_window("{size=2}").unwrap(),
            vec![WindowDim {
                size: 2,
                ..WindowDim::default()
            }]
        );
        assert!(parse_window("{stride=2}").is_err());
        assert!(parse_window("{size=2x2 stride=2}").is_err());
        assert!(parse_window("{size=2 bogus=1}").is_err());
        assert!(parse_window("{size=2").is_err());
    }

    #[test]
    fn dim_labels() {
        let l = parse_dim_labels("b01f_01io->b01f").unwrap();
        assert_eq!(
            (l.input_batch, l.input_feature, l.input_spatial.clone()),
            (0, 3, vec![1, 2])
        );
        assert_eq!(
            (
                l.kernel_input_feature,
                l.kernel_output_feature,
                l.kernel_spatial.clone()
            ),
            (2, 3, vec![0, 1])
        );
        assert_eq!(
            (l.output_batch, l.output_feature, l.output_spatial.clone()),
            (0, 3, vec![1, 2])
        );
        let l = parse_dim_labels("bf0_oi0->bf0").unwrap();
        assert_eq!(
            (
                l.input_feature,
                l.kernel_output_feature,
                l.kernel_input_feature
            ),
            (1, 0, 1)
        );
        assert!(parse_dim_labels("b01f_01io").is_err());
        assert!(parse_dim_labels("b0f_01io->b0f").is_err());
        assert!(parse_dim_labels("b02f_01io->b01f").is_err());
        assert!(parse_dim_labels("b01x_01io->b01f").is_err());
    }

    #[test]
    fn comparison_and_backend_config() {
        assert_eq!(
            parse_comparison_direction("LT"),
            Ok(ComparisonDirection::Lt)
        );
        assert!(parse_comparison_direction("LESS").is_err());
        assert_eq!(parse_backend_config(r#"{"a":1}"#)["a"], 1);
        assert_eq!(parse_backend_config(r#""{\"a\":2}""#)["a"], 2);
        assert_eq!(
            parse_backend_config(r#""plain""#),
            serde_json::Value::String("plain".into())
        );
        assert_eq!(parse_backend_config(r#""""#), serde_json::Value::Null);
        let relaxed = parse_backend_config(
            "{kind:\"__triton\", cfg:{output_tiles:[{sizes:[64,32]}], n:2, s:\"a:b\"}}",
        );
        assert_eq!(relaxed["cfg"]["output_tiles"][0]["sizes"][1], 32);
        assert_eq!(relaxed["cfg"]["s"], "a:b");
        assert_eq!(relaxed["kind"], "__triton");
        // Trailing commas, as XLA's tests write them; a comma in a string stays.
        let trailing = parse_backend_config("{\"a\": {\"b\": [1, 2,],}, \"s\": \",}\",\n}");
        assert_eq!(trailing["a"]["b"][1], 2);
        assert_eq!(trailing["s"], ",}");
        let mlir = "{attn_heads = 32 : i64}";
        assert_eq!(
            parse_backend_config(mlir),
            serde_json::Value::String(mlir.into())
        );
    }

    #[test]
    fn decode_dot_gather_scatter() {
        let pairs = [
            ("lhs_batch_dims", "{0}"),
            ("lhs_contracting_dims", "{2}"),
            ("rhs_batch_dims", "{0}"),
            ("rhs_contracting_dims", "{1}"),
        ];
        let (attrs, errors) = decode_attrs(pairs.into_iter());
        assert!(errors.is_empty());
        assert_eq!(
            attrs.dot,
            Some(Box::new(DotDims {
                lhs_batch: vec![0],
                rhs_batch: vec![0],
                lhs_contracting: vec![2],
                rhs_contracting: vec![1]
            }))
        );

        let pairs = [
            ("offset_dims", "{1}"),
            ("collapsed_slice_dims", "{0}"),
            ("start_index_map", "{0}"),
            ("index_vector_dim", "1"),
            ("slice_sizes", "{1,7}"),
            ("operand_batching_dims", "{}"),
        ];
        let (attrs, errors) = decode_attrs(pairs.into_iter());
        assert!(errors.is_empty());
        let g = attrs.uncommon().gather.clone().unwrap();
        assert_eq!(
            (
                g.offset_dims,
                g.collapsed_slice_dims,
                g.start_index_map,
                g.index_vector_dim,
                g.slice_sizes
            ),
            (vec![1], vec![0], vec![0], 1, vec![1, 7])
        );

        let pairs = [
            ("update_window_dims", "{1}"),
            ("inserted_window_dims", "{0}"),
            ("scatter_dims_to_operand_dims", "{0}"),
            ("index_vector_dim", "1"),
            ("input_batching_dims", "{2}"),
            ("scatter_indices_batching_dims", "{3}"),
        ];
        let (attrs, errors) = decode_attrs(pairs.into_iter());
        assert!(errors.is_empty());
        let s = attrs.uncommon().scatter.clone().unwrap();
        assert_eq!(
            (
                s.update_window_dims,
                s.input_batching_dims,
                s.scatter_indices_batching_dims,
                s.index_vector_dim
            ),
            (vec![1], vec![2], vec![3], 1)
        );

        let (_, errors) =
            decode_attrs([("dimensions", "{x}"), ("iota_dimension", "0")].into_iter());
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].0, 0);
    }
}
