//! Live ranges as a picture in text: one row per buffer over the whole schedule,
//! `█` where it holds memory and `▁` where not, under a line that marks the peak with
//! `▼`. Wide schedules are squeezed into [`WIDTH`] columns (a column is live when its
//! buffer is live at any step it covers), so the picture fits a hover.

use super::{human_bytes, Buffer, Report};

/// The most columns a row takes.
pub const WIDTH: usize = 48;

/// The picture of `rows` (label, buffer) over `report`'s schedule, lines joined by
/// `\n`: the peak line, then a row per buffer with its size.
pub fn render(report: &Report, rows: &[(String, &Buffer)]) -> String {
    let steps = rows
        .iter()
        .map(|(_, b)| b.end + 1)
        .chain([report.schedule.len() as u64])
        .max()
        .unwrap_or(1)
        .max(1);
    let width = (steps as usize).min(WIDTH);
    // Column `k` covers steps `cover(k)`.
    let cover = |k: usize| {
        let start = k as u64 * steps / width as u64;
        let end = ((k as u64 + 1) * steps / width as u64).max(start + 1);
        start..end
    };
    let label_width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let mut lines = Vec::new();
    if let Some(peak) = &report.peak {
        let column = (0..width).find(|&k| cover(k).contains(&peak.time));
        let marks: String = (0..width)
            .map(|k| if Some(k) == column { '▼' } else { ' ' })
            .collect();
        lines.push(format!(
            "{:label_width$}  {marks}  peak {} at step {}",
            "",
            human_bytes(peak.bytes),
            peak.time
        ));
    }
    for (label, b) in rows {
        let cells: String = (0..width)
            .map(|k| {
                let c = cover(k);
                if b.start < c.end && c.start <= b.end {
                    '█'
                } else {
                    '▁'
                }
            })
            .collect();
        lines.push(format!(
            "{label:<label_width$}  {cells}  {}",
            human_bytes(b.bytes)
        ));
    }
    lines.join("\n")
}
