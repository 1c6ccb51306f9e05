//! Where the model's bytes go: a heap profile of the stages a module passes through
//! (text, chunks, built computations, analysis views), measured by a counting global
//! allocator, and the built model's bytes split by part (instruction records, names,
//! operands, attributes, shapes, name maps, ...) from the sizes and capacities of what
//! it holds. The parts should add up to the allocator's count for the build stage;
//! what they miss is printed as "not attributed".
//!
//! `HLO_BENCH_COPIES` renamed copies of the transformer dump (default 1, 1.8 MB; 32
//! is the 60.5 MB module of `benches/lsp.rs`). Run: `cargo bench --bench model_memory`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::mem::size_of;
use std::sync::atomic::{AtomicIsize, Ordering};

use hlo_lsp::model::{Attribute, Computation, Document, Instruction, Operand, Shape};

mod common;

/// The system allocator, counting the bytes live (requested sizes, not the
/// allocator's rounding or its own overhead).
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
/// The most bytes live at once since the last [`reset_peak`].
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grew(bytes: isize) {
    let now = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> usize {
    LIVE.load(Ordering::Relaxed).max(0) as usize
}

/// Starts a new peak from what is live now.
fn reset_peak() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// The most bytes live at once since [`reset_peak`], above `base`.
fn peak_above(base: usize) -> usize {
    (PEAK.load(Ordering::Relaxed).max(0) as usize).saturating_sub(base)
}

/// Bytes of the model, by part.
#[derive(Default)]
struct Parts {
    rows: Vec<(&'static str, usize)>,
}

impl Parts {
    fn add(&mut self, part: &'static str, bytes: usize) {
        match self.rows.iter_mut().find(|(p, _)| *p == part) {
            Some((_, b)) => *b += bytes,
            None => self.rows.push((part, bytes)),
        }
    }

    fn total(&self) -> usize {
        self.rows.iter().map(|(_, b)| b).sum()
    }
}

fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * size_of::<T>()
}

/// A `ThinVec` keeps its length and capacity on the heap, before the elements, and
/// allocates nothing while empty.
fn thin_bytes<T>(v: &thin_vec::ThinVec<T>) -> usize {
    match v.capacity() {
        0 => 0,
        n => 2 * size_of::<usize>() + n * size_of::<T>(),
    }
}

fn shape_heap(shape: &Shape) -> usize {
    match shape {
        Shape::Array(a) => vec_bytes(&a.dims) + vec_bytes(&a.dynamic),
        Shape::Tuple(items) => vec_bytes(items) + items.iter().map(shape_heap).sum::<usize>(),
        Shape::Invalid => 0,
    }
}

/// Shapes are shared between instructions (`parse_shared_shape`): each is counted
/// once, with its `Arc`'s two counts.
#[derive(Default)]
struct SeenShapes(std::collections::HashSet<*const Shape>);

impl SeenShapes {
    fn bytes(&mut self, shape: &std::sync::Arc<Shape>) -> usize {
        if self.0.insert(std::sync::Arc::as_ptr(shape)) {
            2 * size_of::<usize>() + size_of::<Shape>() + shape_heap(shape)
        } else {
            0
        }
    }
}

fn instruction_parts(i: &Instruction, parts: &mut Parts, shapes: &mut SeenShapes) {
    parts.add("instruction names", i.name.len());
    let declared: usize = i
        .operands
        .iter()
        .filter_map(|o| o.declared_shape.as_ref())
        .map(|s| shapes.bytes(s))
        .sum();
    parts.add("shapes (shared)", shapes.bytes(&i.shape) + declared);
    parts.add("operands", thin_bytes(&i.operands));
    parts.add("attributes", thin_bytes(&i.attributes));
    parts.add("literals", thin_bytes(&i.literals));
    parts.add(
        "called computations",
        thin_bytes(&i.called) + i.called.iter().map(|c| c.name.capacity()).sum::<usize>(),
    );
    if i.decoded.is_some() {
        parts.add(
            "decoded attributes (boxes only)",
            size_of::<hlo_lsp::model::Attrs>(),
        );
    }
}

fn computation_parts(c: &Computation, parts: &mut Parts, shapes: &mut SeenShapes) {
    parts.add("instruction records", vec_bytes(&c.instructions));
    for i in &c.instructions {
        instruction_parts(i, parts, shapes);
    }
    // The users table: a start per instruction (and one past the end), an id per use.
    let uses: usize = c.instructions.iter().map(|i| c.users(i.id).len()).sum();
    parts.add("users", (c.instructions.len() + 1 + uses) * 4);
    // A hashbrown table: one control byte per bucket besides the entry.
    parts.add(
        "name index",
        c.name_index().capacity() * (size_of::<hlo_lsp::model::InstrId>() + 1),
    );
    parts.add(
        "computation records",
        size_of::<Computation>()
            + c.name.capacity()
            + vec_bytes(&c.parameters)
            + vec_bytes(&c.signature_parameters),
    );
}

fn mib(bytes: usize) -> String {
    format!("{:8.1} MiB", bytes as f64 / (1 << 20) as f64)
}

fn main() {
    let copies = common::env_number("HLO_BENCH_COPIES", 1);
    let text = common::transformer_module(copies);
    let text_bytes = text.len();
    let base = live();
    let document = Document::parse(&text);
    let split = live() - base;
    document.build_all();
    let built = live() - base - split;
    let file = document.file();
    let indexed = live() - base - split - built;

    let mut parts = Parts::default();
    let mut shapes = SeenShapes::default();
    let mut instructions = 0;
    for module in &file.modules {
        for computation in module.computations() {
            instructions += computation.instructions.len();
            computation_parts(&computation, &mut parts, &mut shapes);
        }
    }
    let diagnostics: usize = document
        .units()
        .iter()
        .map(|u| vec_bytes(&u.built().diagnostics))
        .sum();
    parts.add("diagnostics", diagnostics);
    parts.rows.sort_by_key(|r| std::cmp::Reverse(r.1));

    let per = |bytes: usize| format!("{:5.2}x text", bytes as f64 / text_bytes as f64);
    println!(
        "{copies} copies: {} of text, {instructions} instructions ({:.0} bytes of text each)",
        mib(text_bytes),
        text_bytes as f64 / instructions as f64
    );
    println!("stage (live bytes the stage adds)");
    println!(
        "  chunks (text copies, outlines, lines) {} {}",
        mib(split),
        per(split)
    );
    println!(
        "  built computations                   {} {}",
        mib(built),
        per(built)
    );
    println!(
        "  module index                         {} {}",
        mib(indexed),
        per(indexed)
    );
    println!(
        "built computations by part ({} bytes per instruction record)",
        size_of::<Instruction>()
    );
    for (part, bytes) in &parts.rows {
        println!(
            "  {part:36} {} {:6.1} B/instruction",
            mib(*bytes),
            *bytes as f64 / instructions as f64
        );
    }
    let unattributed = built.saturating_sub(parts.total());
    println!(
        "  {:36} {} {:6.1} B/instruction",
        "not attributed (decoded contents, ...)",
        mib(unattributed),
        unattributed as f64 / instructions as f64
    );
    println!(
        "sizes: Shape {} ArrayShape {} PrimitiveType {} Opcode {} Operand {} Attribute {} Attrs {} CalledComputation {} Span {} Value {}",
        size_of::<Shape>(),
        size_of::<hlo_lsp::model::ArrayShape>(),
        size_of::<hlo_lsp::model::PrimitiveType>(),
        size_of::<hlo_lsp::model::Opcode>(),
        size_of::<Operand>(),
        size_of::<Attribute>(),
        size_of::<hlo_lsp::model::Attrs>(),
        size_of::<hlo_lsp::model::CalledComputation>(),
        size_of::<hlo_lsp::model::Span>(),
        size_of::<serde_json::Value>(),
    );
    module_answers(file, text_bytes);
    caller_views(file, text_bytes);
    fused_views(file, text_bytes);
    let before_views = live();
    let views: Vec<_> = file
        .modules
        .iter()
        .map(hlo_lsp::analysis::view::from_model)
        .collect();
    let view_bytes = live() - before_views;
    println!(
        "analysis views of every computation    {} {}",
        mib(view_bytes),
        per(view_bytes)
    );
    drop(views);
}

/// The memory estimate of every module, as the server computes it once a version is
/// checked (`ide::module_wide`): what it keeps (the reports) and the most it holds
/// while it runs, both beside the model already built.
fn module_answers(file: &hlo_lsp::model::HloFile, text_bytes: usize) {
    let base = live();
    reset_peak();
    let reports: Vec<_> = file
        .modules
        .iter()
        .map(hlo_lsp::memory::estimate::estimate)
        .collect();
    let kept = live() - base;
    let transient = peak_above(base);
    println!(
        "memory estimate: kept {} {:5.2}x text, at most {} {:5.2}x text while it runs",
        mib(kept),
        kept as f64 / text_bytes as f64,
        mib(transient),
        transient as f64 / text_bytes as f64
    );
    drop(reports);
}

/// What converting the analysis views of the computations `select` picks holds, kept
/// as a version keeps them: the views, how many computations and instructions they
/// cover, and their bytes.
struct Views<'m> {
    views: Vec<hlo_lsp::analysis::Module<'m>>,
    computations: usize,
    instructions: usize,
    bytes: usize,
}

fn views_of<'m>(
    file: &'m hlo_lsp::model::HloFile,
    select: impl Fn(&hlo_lsp::model::Module, &hlo_lsp::model::ComputationRef<'_>) -> bool,
) -> Views<'m> {
    let base = live();
    let (mut computations, mut instructions) = (0, 0);
    let views = file
        .modules
        .iter()
        .map(|m| {
            let view = hlo_lsp::analysis::view::borrowed(m);
            for (i, c) in m.computations().enumerate() {
                if select(m, &c) {
                    computations += 1;
                    instructions += c.instructions.len();
                    view.get(i);
                }
            }
            view
        })
        .collect();
    Views {
        views,
        computations,
        instructions,
        bytes: live() - base,
    }
}

/// The analysis views of the computations that launch fusions: what the hovers'
/// cost lines convert (each kernel's caller), kept for the version.
fn caller_views(file: &hlo_lsp::model::HloFile, text_bytes: usize) {
    let callers = views_of(file, |_, c| {
        c.instructions.iter().any(|i| i.opcode.name() == "fusion")
    });
    println!(
        "analysis views of the {} computations that launch fusions ({} instructions): {} {:5.2}x text",
        callers.computations,
        callers.instructions,
        mib(callers.bytes),
        callers.bytes as f64 / text_bytes as f64
    );
}

/// The analysis views of the fused computations: what hovers inside fused
/// computations convert (each hovered computation's view is kept for the version),
/// and its bytes by part, from the sizes and capacities of the nodes.
fn fused_views(file: &hlo_lsp::model::HloFile, text_bytes: usize) {
    use hlo_lsp::analysis::{Node, Shape as ViewShape};
    let Views {
        views,
        computations: fused,
        instructions,
        bytes,
    } = views_of(file, |m, c| {
        m.callers_of(c.id).iter().any(|site| {
            m.caller(site)
                .is_some_and(|(_, i)| i.opcode.name() == "fusion")
        })
    });
    println!(
        "analysis views of the {fused} fused computations ({instructions} instructions): {} {:5.2}x text, {:.0} B/instruction",
        mib(bytes),
        bytes as f64 / text_bytes as f64,
        bytes as f64 / instructions as f64
    );
    fn shape_heap(s: &ViewShape) -> usize {
        match s {
            ViewShape::Array(a) => {
                vec_bytes(&a.dims) + a.minor_to_major.as_ref().map_or(0, vec_bytes)
            }
            ViewShape::Tuple(items) => {
                vec_bytes(items) + items.iter().map(shape_heap).sum::<usize>()
            }
        }
    }
    let mut parts = Parts::default();
    let mut attrs = std::collections::HashSet::new();
    let mut shapes = std::collections::HashSet::new();
    for (view, m) in views.iter().zip(&file.modules) {
        for i in 0..m.computation_count() {
            let Some(c) = view.get(i).filter(|c| !c.nodes.is_empty()) else {
                continue;
            };
            parts.add("node records", vec_bytes(&c.nodes));
            for n in &c.nodes {
                let n: &Node = n;
                parts.add("names", n.name.capacity());
                parts.add("opcodes", n.op.opcode.capacity());
                for shape in std::iter::once(&n.op.shape).chain(&n.op.operands) {
                    if shapes.insert(std::sync::Arc::as_ptr(shape)) {
                        parts.add(
                            "shapes (distinct, shared)",
                            2 * size_of::<usize>() + size_of::<ViewShape>() + shape_heap(shape),
                        );
                    }
                }
                parts.add("operand shape lists", vec_bytes(&n.op.operands));
                parts.add(
                    "operand and called indices",
                    vec_bytes(&n.operands) + vec_bytes(&n.called),
                );
                parts.add(
                    "constant texts",
                    n.constant_text.as_ref().map_or(0, |t| t.capacity()),
                );
                if attrs.insert(std::sync::Arc::as_ptr(&n.op.attrs)) {
                    parts.add(
                        "attributes (distinct, records only)",
                        2 * size_of::<usize>() + size_of::<hlo_lsp::analysis::op::Attrs>(),
                    );
                }
            }
        }
    }
    parts.rows.sort_by_key(|r| std::cmp::Reverse(r.1));
    println!(
        "fused views by part ({} bytes per node record, {} per shape)",
        size_of::<Node>(),
        size_of::<ViewShape>()
    );
    for (part, b) in &parts.rows {
        println!(
            "  {part:36} {} {:6.1} B/instruction",
            mib(*b),
            *b as f64 / instructions as f64
        );
    }
    let unattributed = bytes.saturating_sub(parts.total());
    println!(
        "  {:36} {} {:6.1} B/instruction",
        "not attributed (attribute contents, ...)",
        mib(unattributed),
        unattributed as f64 / instructions as f64
    );
    drop(views);
}
