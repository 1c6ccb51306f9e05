//! Shapes: element types, dimensions (static, bounded-dynamic `<=N`, unbounded `?`),
//! layouts (`{1,0:T(8,128)(2,1)E(4)S(1)}`) and tuples, decoded from the text of one
//! shape token. The syntax tree keeps a shape as one coarse token; this module is a
//! small decoder of that token, not a re-lexer of the line.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

/// An XLA element type. `Unknown` keeps the text of a name we do not recognise so a
/// newer XLA type does not turn a whole file red (it is reported as a warning).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    Pred,
    S1,
    S2,
    S4,
    S8,
    S16,
    S32,
    S64,
    U1,
    U2,
    U4,
    U8,
    U16,
    U32,
    U64,
    F16,
    Bf16,
    F32,
    F64,
    C64,
    C128,
    F4E2M1Fn,
    F8E3M4,
    F8E4M3,
    F8E4M3Fn,
    F8E4M3B11Fnuz,
    F8E4M3Fnuz,
    F8E5M2,
    F8E5M2Fnuz,
    F8E8M0Fnu,
    Token,
    Opaque,
    Unknown(Box<str>),
}

/// Spelling and bit width of every known element type (XLA's lower-case names).
const PRIMITIVE_TYPES: &[(&str, PrimitiveType, u32)] = &[
    ("pred", PrimitiveType::Pred, 8),
    ("s1", PrimitiveType::S1, 1),
    ("s2", PrimitiveType::S2, 2),
    ("s4", PrimitiveType::S4, 4),
    ("s8", PrimitiveType::S8, 8),
    ("s16", PrimitiveType::S16, 16),
    ("s32", PrimitiveType::S32, 32),
    ("s64", PrimitiveType::S64, 64),
    ("u1", PrimitiveType::U1, 1),
    ("u2", PrimitiveType::U2, 2),
    ("u4", PrimitiveType::U4, 4),
    ("u8", PrimitiveType::U8, 8),
    ("u16", PrimitiveType::U16, 16),
    ("u32", PrimitiveType::U32, 32),
    ("u64", PrimitiveType::U64, 64),
    ("f16", PrimitiveType::F16, 16),
    ("bf16", PrimitiveType::Bf16, 16),
    ("f32", PrimitiveType::F32, 32),
    ("f64", PrimitiveType::F64, 64),
    ("c64", PrimitiveType::C64, 64),
    ("c128", PrimitiveType::C128, 128),
    ("f4e2m1fn", PrimitiveType::F4E2M1Fn, 4),
    ("f8e3m4", PrimitiveType::F8E3M4, 8),
    ("f8e4m3", PrimitiveType::F8E4M3, 8),
    ("f8e4m3fn", PrimitiveType::F8E4M3Fn, 8),
    ("f8e4m3b11fnuz", PrimitiveType::F8E4M3B11Fnuz, 8),
    ("f8e4m3fnuz", PrimitiveType::F8E4M3Fnuz, 8),
    ("f8e5m2", PrimitiveType::F8E5M2, 8),
    ("f8e5m2fnuz", PrimitiveType::F8E5M2Fnuz, 8),
    ("f8e8m0fnu", PrimitiveType::F8E8M0Fnu, 8),
    ("token", PrimitiveType::Token, 0),
    ("opaque", PrimitiveType::Opaque, 0),
];

impl PrimitiveType {
    /// Decodes XLA's spelling (`f32`, `bf16`, `pred`, ...); unknown names are kept.
    pub fn from_name(name: &str) -> PrimitiveType {
        PRIMITIVE_TYPES
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, t, _)| t.clone())
            .unwrap_or_else(|| PrimitiveType::Unknown(name.into()))
    }

    /// Every element type's spelling, in XLA's order (`pred`, `s1`, ... `opaque`).
    pub fn names() -> impl Iterator<Item = &'static str> {
        PRIMITIVE_TYPES.iter().map(|(n, _, _)| *n)
    }

    pub fn name(&self) -> &str {
        match self {
            PrimitiveType::Unknown(name) => name,
            known => PRIMITIVE_TYPES
                .iter()
                .find(|(_, t, _)| t == known)
                .map(|(n, _, _)| *n)
                .unwrap_or("?"),
        }
    }

    /// Storage width of one element in bits (0 for token/opaque, `None` if unknown).
    pub fn bit_width(&self) -> Option<u32> {
        match self {
            PrimitiveType::Unknown(_) => None,
            known => PRIMITIVE_TYPES
                .iter()
                .find(|(_, t, _)| t == known)
                .map(|(_, _, w)| *w),
        }
    }

    pub fn is_floating(&self) -> bool {
        matches!(
            self,
            PrimitiveType::F16 | PrimitiveType::Bf16 | PrimitiveType::F32 | PrimitiveType::F64
        ) || self.name().starts_with("f8")
            || self.name().starts_with("f4")
    }

    pub fn is_complex(&self) -> bool {
        matches!(self, PrimitiveType::C64 | PrimitiveType::C128)
    }

    pub fn is_integral(&self) -> bool {
        let n = self.name();
        (n.starts_with('s') || n.starts_with('u')) && !matches!(self, PrimitiveType::Unknown(_))
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Size of an unbounded dynamic dimension (`?`), as XLA's `Shape::kUnboundedSize`.
pub const UNBOUNDED_SIZE: i64 = i64::MIN;
/// A `*` entry of a layout tile (XLA's `Tile::kCombineDimension`).
pub const TILE_COMBINE_DIMENSION: i64 = i64::MIN;

/// A layout: `{minor_to_major:T(tile)(tile)...E(bits)S(space)...}`. Only the parts the
/// analysis needs are decoded; the rest of the text after `:` is kept as `extra`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Layout {
    pub minor_to_major: Vec<i64>,
    /// `T(8,128)(2,1)`: tiles, outermost first; `*` entries are [`TILE_COMBINE_DIMENSION`].
    pub tiles: Vec<Vec<i64>>,
    /// `E(4)`: element size in bits when it differs from the type's width.
    pub element_size_in_bits: Option<i64>,
    /// `S(1)`: memory space.
    pub memory_space: Option<i64>,
    /// Layout items we do not decode (`D(...)`, `L(...)`, `#(...)`, `*(...)`, `P(...)`, ...).
    pub extra: String,
}

/// An array shape: element type, dimensions and an optional layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayShape {
    pub element: PrimitiveType,
    /// Extents; for a bounded dynamic dimension (`<=N`) the bound `N`; for `?`
    /// [`UNBOUNDED_SIZE`].
    pub dims: Vec<i64>,
    /// Whether each dimension is dynamic (`<=N` or `?`); empty when none is, which is
    /// nearly always (no allocation per shape). Read it with [`ArrayShape::is_dynamic`].
    pub dynamic: Vec<bool>,
    /// Shared: after layout assignment every shape has one, and a dump uses a handful of
    /// distinct layouts (see [`intern`]).
    pub layout: Option<Arc<Layout>>,
}

impl ArrayShape {
    pub fn new(element: PrimitiveType, dims: Vec<i64>) -> ArrayShape {
        ArrayShape {
            element,
            dims,
            dynamic: Vec::new(),
            layout: None,
        }
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Whether dimension `i` is dynamic (`<=N` or `?`).
    pub fn is_dynamic(&self, i: usize) -> bool {
        self.dynamic.get(i).copied().unwrap_or(false)
    }

    /// Whether any dimension is dynamic.
    pub fn has_dynamic(&self) -> bool {
        self.dynamic.contains(&true)
    }

    /// Number of elements, `None` if a dimension is unbounded or the product overflows.
    pub fn element_count(&self) -> Option<i64> {
        self.dims.iter().try_fold(
            1i64,
            |acc, &d| if d < 0 { None } else { acc.checked_mul(d) },
        )
    }

    /// Storage size in bits (`E(n)` of the layout overrides the type's width).
    pub fn bit_size(&self) -> Option<i64> {
        let width = match self.layout.as_ref().and_then(|l| l.element_size_in_bits) {
            Some(bits) if bits > 0 => bits,
            _ => i64::from(self.element.bit_width()?),
        };
        self.element_count()?.checked_mul(width)
    }

    /// Same element type and extents (dynamic markers and layouts ignored), as XLA's
    /// `ShapeUtil::Compatible` for static shapes.
    pub fn same_dims_and_type(&self, other: &ArrayShape) -> bool {
        self.element == other.element && self.dims == other.dims
    }

    /// The layout's minor-to-major order, or the default (major-to-minor) one.
    pub fn minor_to_major(&self) -> Vec<i64> {
        match &self.layout {
            Some(l) if l.minor_to_major.len() == self.dims.len() => l.minor_to_major.clone(),
            _ => (0..self.dims.len() as i64).rev().collect(),
        }
    }
}

/// The shared copy of `layout`. A dump writes the same few layouts (`{1,0}`,
/// `{2,1,0}`) on hundreds of thousands of shapes; sharing them keeps a shape small. Each
/// thread keeps its own table, bounded so that hostile input cannot grow it.
fn intern(layout: Layout) -> Arc<Layout> {
    const CAPACITY: usize = 4096;
    thread_local! {
        static LAYOUTS: RefCell<FxHashMap<Layout, Arc<Layout>>> = RefCell::new(FxHashMap::default());
    }
    LAYOUTS.with_borrow_mut(|table| {
        if let Some(shared) = table.get(&layout) {
            return shared.clone();
        }
        let shared = Arc::new(layout);
        if table.len() < CAPACITY {
            table.insert(Layout::clone(&shared), shared.clone());
        }
        shared
    })
}

/// Records whether dimension `i` is dynamic in `dynamic`, which stays empty (allocates
/// nothing) until the first dynamic dimension.
fn mark_dynamic(dynamic: &mut Vec<bool>, i: usize, is_dynamic: bool) {
    if is_dynamic {
        dynamic.resize(i, false);
        dynamic.push(true);
    } else if !dynamic.is_empty() {
        dynamic.push(false);
    }
}

/// A shape: an array, a tuple of shapes, or a token (`token[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    Array(ArrayShape),
    Tuple(Vec<Shape>),
    /// A shape whose text could not be decoded; the error was reported.
    Invalid,
}

impl Shape {
    /// The one shared [`Shape::Invalid`] (what an instruction whose shape did not
    /// decode, or was left out, holds).
    pub fn invalid() -> Arc<Shape> {
        static INVALID: std::sync::LazyLock<Arc<Shape>> =
            std::sync::LazyLock::new(|| Arc::new(Shape::Invalid));
        INVALID.clone()
    }

    pub fn array(element: PrimitiveType, dims: Vec<i64>) -> Shape {
        Shape::Array(ArrayShape::new(element, dims))
    }

    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn is_tuple(&self) -> bool {
        matches!(self, Shape::Tuple(_))
    }

    /// The shape as written without layouts (`f32[8,128]`, tuples element by
    /// element): what a label or a hover header needs, not the bytes' order.
    pub fn logical_text(&self) -> String {
        match self {
            Shape::Array(a) => {
                let mut a = a.clone();
                a.layout = None;
                a.to_string()
            }
            Shape::Tuple(es) => {
                let inner: Vec<String> = es.iter().map(Shape::logical_text).collect();
                format!("({})", inner.join(", "))
            }
            Shape::Invalid => self.to_string(),
        }
    }

    /// Element `index` of a tuple shape.
    pub fn tuple_element(&self, index: usize) -> Option<&Shape> {
        match self {
            Shape::Tuple(elements) => elements.get(index),
            _ => None,
        }
    }

    /// Bits per element (of the first leaf of a tuple): the layout's element size
    /// when it sets one, else the type's width; `None` for tokens and opaque values.
    pub fn element_bits(&self) -> Option<i64> {
        let leaf = self.leaves().into_iter().next()?;
        let bits = match leaf.layout.as_ref().and_then(|l| l.element_size_in_bits) {
            Some(bits) if bits > 0 => Some(bits),
            _ => leaf.element.bit_width().map(i64::from),
        };
        bits.filter(|&b| b > 0)
    }

    /// The array shapes of a (possibly nested) tuple in order; an array is itself.
    pub fn leaves(&self) -> Vec<&ArrayShape> {
        let mut out = Vec::new();
        fn walk<'a>(s: &'a Shape, out: &mut Vec<&'a ArrayShape>) {
            match s {
                Shape::Array(a) => out.push(a),
                Shape::Tuple(es) => es.iter().for_each(|e| walk(e, out)),
                Shape::Invalid => {}
            }
        }
        walk(self, &mut out);
        out
    }

    /// Equal ignoring layouts and dynamic markers (what shape checks compare).
    pub fn compatible(&self, other: &Shape) -> bool {
        self.alike(other, &ArrayShape::same_dims_and_type)
    }

    /// Whether `self` and `other` have the same extents (element types and layouts
    /// aside): what index maps over one also index in the other.
    pub fn same_extents(&self, other: &Shape) -> bool {
        self.alike(other, &|a, b| a.dims == b.dims)
    }

    /// Whether `self` and `other` nest the same way with `same` arrays at each place.
    fn alike(&self, other: &Shape, same: &impl Fn(&ArrayShape, &ArrayShape) -> bool) -> bool {
        match (self, other) {
            (Shape::Array(a), Shape::Array(b)) => same(a, b),
            (Shape::Tuple(a), Shape::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.alike(y, same))
            }
            _ => false,
        }
    }
}

impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.element)?;
        for (i, &d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            match (d, self.is_dynamic(i)) {
                (UNBOUNDED_SIZE, _) => f.write_str("?")?,
                (d, true) => write!(f, "<={d}")?,
                (d, false) => write!(f, "{d}")?,
            }
        }
        f.write_str("]")?;
        if let Some(layout) = &self.layout {
            let m2m: Vec<String> = layout
                .minor_to_major
                .iter()
                .map(|d| d.to_string())
                .collect();
            write!(f, "{{{}", m2m.join(","))?;
            let mut items = String::new();
            if !layout.tiles.is_empty() {
                items.push('T');
                for tile in &layout.tiles {
                    let t: Vec<String> = tile
                        .iter()
                        .map(|&d| {
                            if d == TILE_COMBINE_DIMENSION {
                                "*".to_string()
                            } else {
                                d.to_string()
                            }
                        })
                        .collect();
                    items.push_str(&format!("({})", t.join(",")));
                }
            }
            if let Some(e) = layout.element_size_in_bits {
                items.push_str(&format!("E({e})"));
            }
            if let Some(s) = layout.memory_space {
                items.push_str(&format!("S({s})"));
            }
            items.push_str(&layout.extra);
            if !items.is_empty() {
                write!(f, ":{items}")?;
            }
            f.write_str("}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array(a) => a.fmt(f),
            Shape::Tuple(es) => {
                f.write_str("(")?;
                for (i, e) in es.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    e.fmt(f)?;
                }
                f.write_str(")")
            }
            Shape::Invalid => f.write_str("<invalid shape>"),
        }
    }
}

/// Why a shape token could not be decoded, with the byte offset inside the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    pub offset: usize,
    pub message: String,
}

/// Decodes a shape: an array shape token (`f32[2,3]{1,0}`, `pred[]`, `f32[<=10,?]`,
/// `f32[2] {0}`) or a tuple of shapes (`(f32[2], (s32[], token[]))`).
pub fn parse_shape(text: &str) -> Result<Shape, ShapeError> {
    let mut cursor = Cursor {
        text: text.as_bytes(),
        pos: 0,
    };
    cursor.skip_space();
    let shape = cursor.shape(0)?;
    cursor.skip_space();
    if cursor.pos != text.len() {
        return Err(cursor.error("unexpected text after the shape"));
    }
    Ok(shape)
}

/// Decodes a shape as [`parse_shape`] does, shared: the same text gives the same
/// `Arc`. A dump writes a few hundred distinct shapes on hundreds of thousands of
/// instructions (`f32[128,128]{1,0}`), so sharing them keeps an instruction small
/// and skips decoding the text again. Errors are not kept.
///
/// Each thread keeps its own table in front of one table for the process, which
/// it asks only for a text it has not met: chunks parsed on different threads
/// share one `Arc` per text, so comparing the shapes of two copies of a
/// computation (ENTRY calling 32 copies of a step) is comparing two addresses.
/// Both tables are bounded so that hostile input cannot grow them.
pub fn parse_shared_shape(text: &str) -> Result<Arc<Shape>, ShapeError> {
    const CAPACITY: usize = 4096;
    thread_local! {
        static SHAPES: RefCell<FxHashMap<Box<str>, Arc<Shape>>> = RefCell::new(FxHashMap::default());
    }
    if let Some(shared) = SHAPES.with_borrow(|table| table.get(text).cloned()) {
        return Ok(shared);
    }
    let shared = process_shape(text)?;
    SHAPES.with_borrow_mut(|table| {
        if table.len() < CAPACITY {
            table.insert(text.into(), shared.clone());
        }
    });
    Ok(shared)
}

/// The process's shared shape of `text` ([`parse_shared_shape`]), decoded
/// outside the lock.
fn process_shape(text: &str) -> Result<Arc<Shape>, ShapeError> {
    const CAPACITY: usize = 1 << 14;
    static SHAPES: std::sync::Mutex<Option<FxHashMap<Box<str>, Arc<Shape>>>> =
        std::sync::Mutex::new(None);
    let known = |shapes: &mut Option<FxHashMap<Box<str>, Arc<Shape>>>| {
        shapes
            .get_or_insert_with(FxHashMap::default)
            .get(text)
            .cloned()
    };
    if let Some(shared) = SHAPES.lock().ok().and_then(|mut s| known(&mut s)) {
        return Ok(shared);
    }
    let parsed = Arc::new(parse_shape(text)?);
    let Ok(mut shapes) = SHAPES.lock() else {
        return Ok(parsed);
    };
    let table = shapes.get_or_insert_with(FxHashMap::default);
    if let Some(shared) = table.get(text) {
        return Ok(shared.clone());
    }
    // Full (hostile input, or a server's many documents): it starts over, so
    // that the shapes of the next dump are shared too.
    if table.len() >= CAPACITY {
        table.clear();
    }
    table.insert(text.into(), parsed.clone());
    Ok(parsed)
}

/// Tuples nested deeper than this are rejected rather than risking the stack.
const MAX_TUPLE_DEPTH: usize = 64;

struct Cursor<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn error(&self, message: &str) -> ShapeError {
        ShapeError {
            offset: self.pos,
            message: message.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() {
                self.pos += 1;
            } else if self.text[self.pos..].starts_with(b"/*") {
                // `/*index=5*/` comments appear inside long tuple shapes.
                match find(&self.text[self.pos + 2..], b"*/") {
                    Some(end) => self.pos += 2 + end + 2,
                    None => return,
                }
            } else {
                return;
            }
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), ShapeError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{}`", c as char)))
        }
    }

    fn shape(&mut self, depth: usize) -> Result<Shape, ShapeError> {
        if self.eat(b'(') {
            if depth >= MAX_TUPLE_DEPTH {
                return Err(self.error("tuple shape nested too deeply"));
            }
            let mut elements = Vec::new();
            self.skip_space();
            if self.eat(b')') {
                return Ok(Shape::Tuple(elements));
            }
            loop {
                self.skip_space();
                elements.push(self.shape(depth + 1)?);
                self.skip_space();
                if self.eat(b')') {
                    return Ok(Shape::Tuple(elements));
                }
                self.expect(b',')?;
            }
        }
        self.array().map(Shape::Array)
    }

    fn array(&mut self) -> Result<ArrayShape, ShapeError> {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric()) {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.error("expected an element type such as `f32`"));
        }
        let name = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("");
        let element = PrimitiveType::from_name(name);
        self.expect(b'[')?;
        let mut dims = Vec::new();
        let mut dynamic = Vec::new();
        self.skip_space();
        if !self.eat(b']') {
            loop {
                self.skip_space();
                if self.eat(b'?') {
                    mark_dynamic(&mut dynamic, dims.len(), true);
                    dims.push(UNBOUNDED_SIZE);
                } else {
                    let is_dynamic = self.eat(b'<');
                    if is_dynamic {
                        self.expect(b'=')?;
                    }
                    let at = self.pos;
                    let size = self.number()?;
                    if size < 0 {
                        return Err(ShapeError {
                            offset: at,
                            message: format!("negative dimension size {size}"),
                        });
                    }
                    mark_dynamic(&mut dynamic, dims.len(), is_dynamic);
                    dims.push(size);
                }
                self.skip_space();
                if self.eat(b']') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        // A layout may follow after spaces (`f32[2] {0}`), never after a newline in a tuple.
        let before_layout = self.pos;
        self.skip_space();
        let layout = if self.peek() == Some(b'{') {
            Some(intern(self.layout()?))
        } else {
            self.pos = before_layout;
            None
        };
        let shape = ArrayShape {
            element,
            dims,
            dynamic,
            layout,
        };
        if let Some(layout) = &shape.layout {
            if !layout.minor_to_major.is_empty() || shape.rank() == 0 {
                check_permutation(&layout.minor_to_major, shape.rank()).map_err(|m| {
                    ShapeError {
                        offset: before_layout,
                        message: m,
                    }
                })?;
            }
        }
        Ok(shape)
    }

    fn number(&mut self) -> Result<i64, ShapeError> {
        let start = self.pos;
        let negative = self.eat(b'-');
        let digits = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
            self.pos += 1;
        }
        if digits == self.pos {
            self.pos = start;
            return Err(self.error("expected a number"));
        }
        let text = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("");
        let value: i64 = text.parse().map_err(|_| ShapeError {
            offset: start,
            message: format!("number `{text}` out of range"),
        })?;
        let _ = negative;
        Ok(value)
    }

    fn layout(&mut self) -> Result<Layout, ShapeError> {
        self.expect(b'{')?;
        let mut layout = Layout::default();
        self.skip_space();
        while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
            layout.minor_to_major.push(self.number()?);
            self.skip_space();
            if !self.eat(b',') {
                break;
            }
            self.skip_space();
        }
        if self.eat(b':') {
            self.layout_items(&mut layout)?;
        }
        self.skip_space();
        self.expect(b'}')?;
        Ok(layout)
    }

    /// The items after `:`: `T(..)(..)`, `E(n)`, `S(n)` decoded; anything else kept raw.
    fn layout_items(&mut self, layout: &mut Layout) -> Result<(), ShapeError> {
        loop {
            self.skip_space();
            match self.peek() {
                None => return Err(self.error("unterminated layout")),
                Some(b'}') => return Ok(()),
                Some(b'T') if self.text.get(self.pos + 1) == Some(&b'(') => {
                    self.pos += 1;
                    while self.peek() == Some(b'(') {
                        layout.tiles.push(self.tile()?);
                    }
                }
                Some(b'E') if self.text.get(self.pos + 1) == Some(&b'(') => {
                    self.pos += 2;
                    layout.element_size_in_bits = Some(self.number()?);
                    self.expect(b')')?;
                }
                Some(b'S') if self.text.get(self.pos + 1) == Some(&b'(') => {
                    self.pos += 2;
                    layout.memory_space = Some(self.number()?);
                    self.expect(b')')?;
                }
                Some(_) => {
                    // An item we keep as text: letters then a balanced `(...)`.
                    let start = self.pos;
                    while matches!(self.peek(), Some(c) if c != b'(' && c != b'}') {
                        self.pos += 1;
                    }
                    if self.peek() == Some(b'(') {
                        let mut depth = 0usize;
                        while let Some(c) = self.peek() {
                            self.pos += 1;
                            if c == b'(' {
                                depth += 1;
                            } else if c == b')' {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                        }
                        if depth != 0 {
                            return Err(self.error("unbalanced `(` in layout"));
                        }
                    }
                    let item = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("");
                    if let Some(types) = item.strip_prefix("D(").and_then(|t| t.strip_suffix(')')) {
                        check_dim_level_types(types).map_err(|m| self.error(m))?;
                    }
                    // A physical shape belongs to a sparse layout (`D(D,C)` before it).
                    if item.starts_with("P(") && !layout.extra.contains("D(") {
                        return Err(
                            self.error("Layout has physical shape, but is not for a sparse array")
                        );
                    }
                    layout
                        .extra
                        .push_str(std::str::from_utf8(&self.text[start..self.pos]).unwrap_or(""));
                }
            }
        }
    }

    fn tile(&mut self) -> Result<Vec<i64>, ShapeError> {
        self.expect(b'(')?;
        let mut tile = Vec::new();
        loop {
            self.skip_space();
            if self.eat(b'*') {
                tile.push(TILE_COMBINE_DIMENSION);
            } else {
                tile.push(self.number()?);
            }
            self.skip_space();
            if self.eat(b')') {
                return Ok(tile);
            }
            self.expect(b',')?;
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Checks that `order` is a permutation of `0..rank` (layouts, transposes), as
/// written (`i64`) or as indices (`usize`).
pub fn check_permutation<T>(order: &[T], rank: usize) -> Result<(), String>
where
    T: Copy + TryInto<usize> + std::fmt::Display,
{
    if order.len() != rank {
        return Err(format!("{} dimensions given for rank {rank}", order.len()));
    }
    let mut seen = vec![false; rank];
    for &d in order {
        match d.try_into().ok().filter(|&d| d < rank) {
            Some(d) if !seen[d] => seen[d] = true,
            Some(_) => return Err(format!("dimension {d} repeated")),
            None => return Err(format!("dimension {d} out of range for rank {rank}")),
        }
    }
    Ok(())
}

/// A sparse layout's `D(...)` list: each a dimension level type (`D`, `C`, `S`, `H`,
/// optionally `+` then `~`), as XLA's `ParseDimLevelTypes` reads them.
fn check_dim_level_types(types: &str) -> Result<(), &'static str> {
    let valid = |t: &str| {
        let t = t.trim();
        let t = t.strip_suffix('~').unwrap_or(t);
        let t = t.strip_suffix('+').unwrap_or(t);
        matches!(t, "D" | "C" | "S" | "H")
    };
    if types.trim().is_empty() || types.split(',').all(valid) {
        Ok(())
    } else {
        Err("expected a DimLevelType abbreviation (D, C, or S)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_share_one_shape_per_text() {
        let text = "f32[3,5,7]{0,2,1:T(2,128)}";
        let there = std::thread::spawn(move || parse_shared_shape(text).unwrap())
            .join()
            .unwrap();
        let here = parse_shared_shape(text).unwrap();
        assert!(Arc::ptr_eq(&here, &there));
        assert_eq!(*here, parse_shape(text).unwrap());
        assert!(parse_shared_shape("f32[3,").is_err());
    }

    fn array(text: &str) -> ArrayShape {
        parse_shape(text).unwrap().as_array().unwrap().clone()
    }

    #[test]
    fn arrays_with_layouts() {
        let s = array("f32[128,256]{1,0:T(8,128)(2,1)S(1)}");
        assert_eq!(s.element, PrimitiveType::F32);
        assert_eq!(s.dims, vec![128, 256]);
        let l = s.layout.clone().unwrap();
        assert_eq!(l.minor_to_major, vec![1, 0]);
        assert_eq!(l.tiles, vec![vec![8, 128], vec![2, 1]]);
        assert_eq!(l.memory_space, Some(1));
        assert_eq!(s.to_string(), "f32[128,256]{1,0:T(8,128)(2,1)S(1)}");
        assert_eq!(array("pred[]").dims, Vec::<i64>::new());
        assert_eq!(array("pred[]").element_count(), Some(1));
        assert_eq!(array("f32[2] {0}").layout.unwrap().minor_to_major, vec![0]);
        assert_eq!(array("s4[8]{0:E(4)}").bit_size(), Some(32));
        assert_eq!(array("bf16[3,5]").bit_size(), Some(240));
        assert_eq!(
            array("f32[2,3]{0,1:T(2,*)L(s32)}").layout.unwrap().extra,
            "L(s32)"
        );
        assert_eq!(
            array("f32[2,3]{0,1:T(2,*)}").layout.unwrap().tiles,
            vec![vec![2, TILE_COMBINE_DIMENSION]]
        );
    }

    #[test]
    fn dynamic_dimensions() {
        let s = array("f32[<=10,?,3]");
        assert_eq!(s.dims, vec![10, UNBOUNDED_SIZE, 3]);
        assert_eq!(s.dynamic, vec![true, true, false]);
        assert_eq!(s.element_count(), None);
        assert_eq!(s.to_string(), "f32[<=10,?,3]");
    }

    #[test]
    fn tuples_and_tokens() {
        let s = parse_shape("(f32[2]{0}, (s32[], token[]), /*index=2*/pred[1])").unwrap();
        let Shape::Tuple(es) = &s else { panic!() };
        assert_eq!(es.len(), 3);
        assert_eq!(s.leaves().len(), 4);
        assert_eq!(
            s.tuple_element(1)
                .unwrap()
                .tuple_element(1)
                .unwrap()
                .as_array()
                .unwrap()
                .element,
            PrimitiveType::Token
        );
        assert_eq!(parse_shape("()").unwrap(), Shape::Tuple(vec![]));
        assert_eq!(s.to_string(), "(f32[2]{0}, (s32[], token[]), pred[1])");
    }

    #[test]
    fn unknown_types_are_kept() {
        assert_eq!(
            array("f99[2]").element,
            PrimitiveType::Unknown("f99".into())
        );
        assert_eq!(array("f99[2]").bit_size(), None);
    }

    #[test]
    fn errors_have_offsets() {
        assert_eq!(parse_shape("f32[2,").unwrap_err().offset, 6);
        assert_eq!(
            parse_shape("f32[2]{1,0}").unwrap_err().message,
            "2 dimensions given for rank 1"
        );
        assert!(parse_shape("f32[2,2]{0,0}").is_err());
        assert!(parse_shape("f32[-1]").is_err());
        assert!(parse_shape("f32[99999999999999999999]").is_err());
        assert!(parse_shape("[2]").is_err());
        assert!(parse_shape("f32[2] x").is_err());
        assert!(parse_shape("(f32[2]").is_err());
        assert!(parse_shape("f32[2]{0:T(2}").is_err());
        let deep = "(".repeat(100) + &")".repeat(100);
        assert!(parse_shape(&deep).is_err());
    }

    #[test]
    fn permutations() {
        assert!(check_permutation(&[1, 0, 2], 3).is_ok());
        assert!(check_permutation(&[1, 1], 2).is_err());
        assert!(check_permutation(&[2, 0], 2).is_err());
        assert!(check_permutation(&[-1, 0], 2).is_err());
        assert!(check_permutation(&[0], 2).is_err());
    }
}
