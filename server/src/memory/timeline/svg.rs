//! The timeline as a standalone SVG: a heading that says where the numbers come
//! from, the memory curve (the heap at each step, as XProf's memory viewer counts
//! it: what is held for the whole run and the temporaries live) with the peak marked
//! and its value,
//! then one bar per buffer over the steps it is live, orange when it stands in the
//! peak, its size at the right. Each bar is a `<g class="buffer" data-row="k">` with a
//! tooltip (instruction, shape, bytes, live from → to, source line), so an editor can
//! make a click jump to row `k`'s instruction.
//!
//! Wide schedules are squeezed into [`PLOT_WIDTH`] pixels: a pixel column of the
//! curve shows the most bytes of the steps it covers, so the peak is never averaged
//! away; a bar is at least a pixel wide.

use std::fmt::Write;

use super::{Row, Timeline};
use crate::memory::human_bytes;
use crate::xml::escape;

const WIDTH: f64 = 960.0;
const LABEL_WIDTH: f64 = 250.0;
const PLOT_LEFT: f64 = LABEL_WIDTH + 10.0;
/// The plot's width in pixels: steps beyond it share columns.
pub const PLOT_WIDTH: f64 = 610.0;
const HEADER: f64 = 76.0;
const CURVE_HEIGHT: f64 = 120.0;
const AXIS: f64 = 26.0;
const ROW: f64 = 16.0;
const BAR: f64 = 10.0;
/// Characters of a row's label before it is cut with `…`.
const LABEL_CHARS: usize = 34;

const PEAK_COLOUR: &str = "#c0392b";
const AT_PEAK: &str = "#e67e22";
const OTHER: &str = "#2e86c1";

/// The SVG text of `t`.
pub fn to_svg(t: &Timeline) -> String {
    let rows_top = HEADER + CURVE_HEIGHT + AXIS;
    let more_rows = usize::from(t.more > 0);
    let height = rows_top + (t.rows.len() + more_rows) as f64 * ROW + 12.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="memory-timeline" width="{WIDTH:.0}" height="{height:.0}" viewBox="0 0 {WIDTH:.0} {height:.0}" font-family="monospace" font-size="11">"#
    );
    let _ = writeln!(
        out,
        r##"<rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    heading(&mut out, t);
    let scale = Scale::of(t);
    curve(&mut out, t, &scale);
    axis(&mut out, t, &scale);
    for (k, r) in t.rows.iter().enumerate() {
        bar(&mut out, k, r, &scale, rows_top + k as f64 * ROW);
    }
    if t.more > 0 {
        let _ = writeln!(
            out,
            r##"<text class="more" x="{:.1}" y="{:.1}" fill="#555555">… {} more buffers ({})</text>"##,
            PLOT_LEFT,
            rows_top + t.rows.len() as f64 * ROW + BAR,
            t.more,
            human_bytes(t.more_bytes)
        );
    }
    peak_line(&mut out, t, &scale, height - 12.0);
    out.push_str("</svg>\n");
    out
}

/// Steps to pixels.
struct Scale {
    first: u64,
    steps: u64,
    /// Pixel columns of the curve, each covering `steps / columns` steps.
    columns: usize,
    max_bytes: u64,
}

impl Scale {
    fn of(t: &Timeline) -> Scale {
        let steps = t.steps.end - t.steps.start;
        Scale {
            first: t.steps.start,
            steps,
            columns: (steps as usize).clamp(1, PLOT_WIDTH as usize),
            max_bytes: t.curve_max().max(1),
        }
    }

    /// The left edge of step `time`.
    fn x(&self, time: u64) -> f64 {
        PLOT_LEFT + time.saturating_sub(self.first) as f64 * PLOT_WIDTH / self.steps as f64
    }

    fn y(&self, bytes: u64) -> f64 {
        HEADER + CURVE_HEIGHT - bytes as f64 * CURVE_HEIGHT / self.max_bytes as f64
    }

    /// The indices into the curve that column `k` covers.
    fn cover(&self, k: usize) -> std::ops::Range<usize> {
        let (n, c) = (self.steps as usize, self.columns);
        let start = k * n / c;
        start..((k + 1) * n / c).max(start + 1)
    }
}

fn heading(out: &mut String, t: &Timeline) {
    let _ = writeln!(
        out,
        r#"<text class="title" x="10" y="16" font-size="13" font-weight="bold">{}</text>"#,
        escape(&format!(
            "Memory of %{} over steps {} to {} ({})",
            t.computation,
            t.steps.start,
            t.steps.end.saturating_sub(1),
            t.source.describe()
        ))
    );
    let summary = match &t.peak {
        Some(p) => format!(
            "peak {} at %{}, step {} · {} buffers live then · {} buffers in these steps",
            human_bytes(p.bytes),
            p.instruction.as_deref().unwrap_or("?"),
            p.time,
            p.buffers,
            t.rows.len() + t.more
        ),
        None => "no peak: nothing is live in these steps".to_string(),
    };
    let _ = writeln!(
        out,
        r##"<text class="summary" x="10" y="33" fill="#333333">{}</text>"##,
        escape(&summary)
    );
    if let Some(r) = &t.reported {
        let whose = match t.source {
            crate::memory::Source::BufferAssignment => "XLA's live-range peak (its own count)",
            crate::memory::Source::Estimate => {
                "The estimate's live ranges counted as XLA's live-range file counts"
            }
        };
        let _ = writeln!(
            out,
            r##"<text class="reported" x="10" y="49" fill="#7f8c8d">{}</text>"##,
            escape(&format!(
                "{whose}: {} at %{}, step {} (grey line)",
                human_bytes(r.bytes),
                r.instruction.as_deref().unwrap_or("?"),
                r.time,
            ))
        );
    }
}

/// The area under the curve, a column per pixel, each at its steps' most bytes.
fn curve(out: &mut String, t: &Timeline, s: &Scale) {
    let base = s.y(0);
    let column_width = PLOT_WIDTH / s.columns as f64;
    let mut points = vec![format!("{PLOT_LEFT:.1},{base:.1}")];
    for k in 0..s.columns {
        let bytes = t.curve[s.cover(k)].iter().copied().max().unwrap_or(0);
        let (x0, y) = (PLOT_LEFT + k as f64 * column_width, s.y(bytes));
        points.push(format!("{x0:.1},{y:.1}"));
        points.push(format!("{:.1},{y:.1}", x0 + column_width));
    }
    points.push(format!("{:.1},{base:.1}", PLOT_LEFT + PLOT_WIDTH));
    let _ = writeln!(
        out,
        r##"<g class="curve"><title>bytes live at each step (a column shows the most of the steps it covers)</title><polygon points="{}" fill="#d6eaf8" stroke="#2471a3" stroke-width="1"/></g>"##,
        points.join(" ")
    );
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="10" fill="#555555">{}</text><text x="{:.1}" y="{base:.1}" text-anchor="end" font-size="10" fill="#555555">0 B</text>"##,
        PLOT_LEFT - 6.0,
        HEADER + 8.0,
        human_bytes(t.curve_max()),
        PLOT_LEFT - 6.0,
    );
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#333333">bytes live</text>"##,
        PLOT_LEFT - 6.0,
        HEADER + CURVE_HEIGHT / 2.0
    );
}

/// Step numbers under the curve: the first, the last and three between.
fn axis(out: &mut String, t: &Timeline, s: &Scale) {
    let y = HEADER + CURVE_HEIGHT;
    let _ = writeln!(
        out,
        r##"<line x1="{PLOT_LEFT:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#555555"/>"##,
        PLOT_LEFT + PLOT_WIDTH
    );
    let last = t.steps.end - 1;
    let mut ticks: Vec<u64> = (0..=4)
        .map(|k| t.steps.start + (last - t.steps.start) * k / 4)
        .collect();
    ticks.dedup();
    for step in ticks {
        let x = s.x(step) + PLOT_WIDTH / s.steps as f64 / 2.0;
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{y:.1}" x2="{x:.1}" y2="{:.1}" stroke="#555555"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="10" fill="#555555">{step}</text>"##,
            y + 4.0,
            y + 15.0
        );
    }
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="10" fill="#555555">step</text>"##,
        PLOT_LEFT - 6.0,
        y + 15.0
    );
}

fn bar(out: &mut String, k: usize, r: &Row, s: &Scale, top: f64) {
    let x0 = s.x(r.start);
    let x1 = s.x(r.end.saturating_add(1).min(s.first + s.steps));
    let colour = if r.at_peak { AT_PEAK } else { OTHER };
    let _ = write!(
        out,
        r#"<g class="buffer{}" data-row="{k}" data-instruction="{}"><title>{}</title>"#,
        if r.at_peak { " at-peak" } else { "" },
        escape(&r.instruction),
        escape(&tooltip(r))
    );
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text><rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="{BAR}" rx="2" fill="{colour}"/><text x="{:.1}" y="{:.1}" fill="#333333">{}</text>"##,
        PLOT_LEFT - 6.0,
        top + BAR,
        escape(&cut(&r.label(), LABEL_CHARS)),
        top + 1.0,
        (x1 - x0).max(1.0),
        PLOT_LEFT + PLOT_WIDTH + 6.0,
        top + BAR,
        human_bytes(r.bytes)
    );
    out.push_str("</g>\n");
}

/// `%fusion.3 · f32[1024,1024] · 4.0 MiB · live 12 → 40 · allocation 2, offset 0 ·
/// model.py:42 · live at the peak`.
fn tooltip(r: &Row) -> String {
    let mut parts = vec![r.label()];
    parts.extend(r.shape.clone());
    parts.push(human_bytes(r.bytes));
    parts.push(format!("live {} → {}", r.start, r.end));
    if let Some((allocation, offset)) = r.place {
        parts.push(format!("allocation {allocation}, offset {offset}"));
    }
    parts.extend(r.source.clone());
    if r.at_peak {
        parts.push("live at the peak".into());
    }
    parts.join(" · ")
}

/// The peak's step marked down the whole picture, with its value by the curve; the
/// report's own peak, when it is elsewhere, a grey dashed line.
fn peak_line(out: &mut String, t: &Timeline, s: &Scale, bottom: f64) {
    if let Some(r) = &t.reported {
        let x = s.x(r.time) + (PLOT_WIDTH / s.steps as f64 / 2.0);
        let _ = writeln!(
            out,
            r##"<g class="reported-peak"><title>{}</title><line x1="{x:.1}" y1="{HEADER:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="#95a5a6" stroke-width="1" stroke-dasharray="2,3"/></g>"##,
            escape(&format!(
                "XLA's live-range peak: {} at %{}, step {}",
                human_bytes(r.bytes),
                r.instruction.as_deref().unwrap_or("?"),
                r.time
            ))
        );
    }
    let Some(p) = &t.peak else {
        return;
    };
    let x = s.x(p.time) + (PLOT_WIDTH / s.steps as f64 / 2.0);
    let y = s.y(p.bytes);
    let label = format!(
        "peak {} at %{}",
        human_bytes(p.bytes),
        p.instruction.as_deref().unwrap_or("?")
    );
    // Above the plot, reading leftwards when the peak is in the right half.
    let (anchor, dx) = if x > PLOT_LEFT + PLOT_WIDTH / 2.0 {
        ("end", 4.0)
    } else {
        ("start", -4.0)
    };
    let _ = writeln!(
        out,
        r##"<g class="peak"><title>{}</title><line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="{PEAK_COLOUR}" stroke-width="1" stroke-dasharray="4,3"/><circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{PEAK_COLOUR}"/><text x="{:.1}" y="{:.1}" text-anchor="{anchor}" fill="{PEAK_COLOUR}" font-weight="bold">{}</text></g>"##,
        escape(&format!("{label}, step {}", p.time)),
        HEADER - 10.0,
        x + dx,
        HEADER - 4.0,
        escape(&label)
    );
}

/// `s` cut to `n` characters with `…`.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut c: String = s.chars().take(n - 1).collect();
    c.push('…');
    c
}
