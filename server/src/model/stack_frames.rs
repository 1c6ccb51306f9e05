//! The stack-frame tables at the top of JAX dumps, and the Python stack of an
//! instruction's `stack_frame_id` resolved through them:
//!
//! ```text
//! FileNames
//! 1 "model.py"
//! FunctionNames
//! 1 "attention"
//! FileLocations
//! 1 {file_name_id=1 function_name_id=1 line=42 end_line=42 column=4 end_column=10}
//! StackFrames
//! 1 {file_location_id=1 parent_frame_id=1}
//! ```
//!
//! Ids are 1-based positions. XLA prints a frame's parent as the stored id plus one
//! (`parent_frame_id=1` is "no parent", `k` is frame `k - 1`: `HloModule::ToString`),
//! so a chain `1 → 2 → 3` prints as frame `k` with `parent_frame_id=k`. A table
//! written with the stored ids (`0` for no parent, which the printed form never has)
//! is read as such. Missing tables, ids and cycles leave gaps, never errors: a frame
//! whose file is unknown still shows its line.

use std::ops::Range;

use rustc_hash::FxHashMap;

use super::metadata::string_at;

/// A file location of the `FileLocations` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileLocation {
    pub file_name_id: u32,
    pub function_name_id: u32,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

/// A frame of the `StackFrames` table, as printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StackFrame {
    pub file_location_id: u32,
    pub parent_frame_id: u32,
}

/// One entry of a table with where it is written (document bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<T> {
    pub value: T,
    /// The entry's value (`"model.py"`, `{file_name_id=...}`) in the document.
    pub range: Range<usize>,
}

/// One frame of a resolved stack: whatever the tables say about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frame {
    pub file: Option<String>,
    pub function: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

impl Frame {
    /// `model.py:42 in attention` (the file's last path component, `<locals>` left
    /// out of the function's name; parts the tables do not give are left out, an
    /// unknown file is `?`).
    pub fn short(&self) -> String {
        let file = self
            .file
            .as_deref()
            .map(|f| f.rsplit(['/', '\\']).next().unwrap_or(f))
            .unwrap_or("?");
        let mut text = match self.line {
            Some(line) => format!("{file}:{line}"),
            None => file.to_string(),
        };
        if let Some(function) = &self.function {
            // Python's qualified names: `step.<locals>.body` reads as `step.body`.
            text.push_str(" in ");
            text.push_str(&function.replace(".<locals>.", "."));
        }
        text
    }
}

/// `model.py:42 in attention ← train.py:10 in step`: innermost frame first, at most
/// `max` places, then how many frames more. Consecutive frames at the same place (a
/// function called from a lambda on its own line, as `jnp.argmax` in JAX's traces)
/// are one place, `make_dumps.py:77 in argmax (×2)`: the repeat says nothing new.
pub fn format_stack(frames: &[Frame], max: usize) -> String {
    let mut places: Vec<(String, usize)> = Vec::new();
    for frame in frames {
        let place = frame.short();
        match places.last_mut() {
            Some((last, count)) if *last == place => *count += 1,
            _ => places.push((place, 1)),
        }
    }
    let shown = &places[..places.len().min(max)];
    let mut parts: Vec<String> = shown
        .iter()
        .map(|(place, count)| match count {
            1 => place.clone(),
            n => format!("{place} (×{n})"),
        })
        .collect();
    let hidden = frames.len() - shown.iter().map(|(_, n)| n).sum::<usize>();
    if hidden > 0 {
        parts.push(format!("… {hidden} more"));
    }
    parts.join(" ← ")
}

/// The four tables of one module (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct StackFrameIndex {
    pub file_names: FxHashMap<u32, Entry<String>>,
    pub function_names: FxHashMap<u32, Entry<String>>,
    pub file_locations: FxHashMap<u32, Entry<FileLocation>>,
    pub stack_frames: FxHashMap<u32, Entry<StackFrame>>,
    /// A frame printed `parent_frame_id=0`: the table holds stored ids, not ids + 1.
    stored_parents: bool,
}

/// The tables' keywords.
const TABLES: &[&str] = &["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

/// Deepest stack followed (guards against a cycle the checks below miss).
const MAX_DEPTH: usize = 256;

impl StackFrameIndex {
    /// The tables of `(document offset, text)` chunks (each one table, keyword first).
    pub fn from_tables<'a>(tables: impl IntoIterator<Item = (usize, &'a str)>) -> Self {
        let mut index = StackFrameIndex::default();
        for (offset, text) in tables {
            index.add_table(offset, text);
        }
        index
    }

    pub fn is_empty(&self) -> bool {
        self.stack_frames.is_empty() && self.file_locations.is_empty()
    }

    /// Reads the tables of a text (a table chunk: its keyword, then `id value` lines);
    /// lines that do not read as an entry are skipped.
    pub fn add_table(&mut self, offset: usize, text: &str) {
        let mut kind = "";
        for (at, line) in lines_with_offsets(text) {
            let word = line.trim();
            if TABLES.contains(&word) {
                kind = word;
                continue;
            }
            let Some((id, value_at)) = leading_id(line) else {
                continue;
            };
            let value = &line[value_at..];
            let start = offset + at + value_at;
            let range = start..start + value.trim_end().len();
            match kind {
                "FileNames" | "FunctionNames" => {
                    let Some((name, _)) = value
                        .starts_with('"')
                        .then(|| string_at(value, 0))
                        .flatten()
                    else {
                        continue;
                    };
                    let table = if kind == "FileNames" {
                        &mut self.file_names
                    } else {
                        &mut self.function_names
                    };
                    table.insert(id, Entry { value: name, range });
                }
                "FileLocations" => {
                    let fields = fields(value);
                    let location = FileLocation {
                        file_name_id: fields.get("file_name_id").copied().unwrap_or(0),
                        function_name_id: fields.get("function_name_id").copied().unwrap_or(0),
                        line: fields.get("line").copied(),
                        column: fields.get("column").copied(),
                    };
                    self.file_locations.insert(
                        id,
                        Entry {
                            value: location,
                            range,
                        },
                    );
                }
                "StackFrames" => {
                    let fields = fields(value);
                    let (Some(&file_location_id), Some(&parent_frame_id)) = (
                        fields.get("file_location_id"),
                        fields.get("parent_frame_id"),
                    ) else {
                        continue;
                    };
                    let frame = StackFrame {
                        file_location_id,
                        parent_frame_id,
                    };
                    self.stored_parents |= frame.parent_frame_id == 0;
                    self.stack_frames.insert(
                        id,
                        Entry {
                            value: frame,
                            range,
                        },
                    );
                }
                _ => {}
            }
        }
    }

    /// What file location `id` says.
    pub fn location(&self, id: u32) -> Option<Frame> {
        let location = &self.file_locations.get(&id)?.value;
        Some(Frame {
            file: self
                .file_names
                .get(&location.file_name_id)
                .map(|e| e.value.clone()),
            function: self
                .function_names
                .get(&location.function_name_id)
                .map(|e| e.value.clone()),
            line: location.line,
            column: location.column,
        })
    }

    /// The parent of frame `id`, if it has one.
    fn parent(&self, frame: &StackFrame) -> Option<u32> {
        let printed = frame.parent_frame_id;
        let stored = if self.stored_parents {
            printed
        } else {
            printed.checked_sub(1)?
        };
        (stored > 0).then_some(stored)
    }

    /// Frame `id` itself (the innermost of its stack), without its callers.
    pub fn innermost(&self, id: u32) -> Option<Frame> {
        let frame = self.stack_frames.get(&id)?;
        Some(
            self.location(frame.value.file_location_id)
                .unwrap_or_default(),
        )
    }

    /// The stack of frame `id`, innermost first; empty when the frame is unknown.
    /// A frame whose location is missing stands as an empty [`Frame`].
    pub fn stack(&self, id: u32) -> Vec<Frame> {
        let mut frames = Vec::new();
        let mut seen = Vec::new();
        let mut current = Some(id);
        while let Some(id) = current {
            if seen.contains(&id) || frames.len() >= MAX_DEPTH {
                break;
            }
            seen.push(id);
            let Some(frame) = self.stack_frames.get(&id) else {
                break;
            };
            frames.push(
                self.location(frame.value.file_location_id)
                    .unwrap_or_default(),
            );
            current = self.parent(&frame.value);
        }
        frames
    }
}

/// Each line of `text` with its offset.
fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n').map(move |line| {
        let start = at;
        at += line.len();
        (start, line.trim_end_matches(['\n', '\r']))
    })
}

/// `12 rest`: the id and where the rest starts.
fn leading_id(line: &str) -> Option<(u32, usize)> {
    let start = line.len() - line.trim_start().len();
    let digits = line[start..].bytes().take_while(u8::is_ascii_digit).count();
    let id = line[start..start + digits].parse().ok()?;
    let rest = start + digits;
    let value_at = rest + (line[rest..].len() - line[rest..].trim_start().len());
    (value_at > rest && value_at < line.len()).then_some((id, value_at))
}

/// `{key=number key=number}` as a map (other values are skipped).
fn fields(block: &str) -> FxHashMap<&str, u32> {
    block
        .trim_matches(|c| c == '{' || c == '}')
        .split([' ', ','])
        .filter_map(|field| {
            let (key, value) = field.split_once('=')?;
            Some((key.trim(), value.trim().parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables of `tests/data/jax/softmax.after.hlo` (made by JAX 0.10.2).
    const JAX: &str = "FileNames\n1 \"make_dumps.py\"\n\nFunctionNames\n1 \"<module>\"\n2 \"main\"\n3 \"softmax\"\n\nFileLocations\n1 {file_name_id=1 function_name_id=1 line=120 end_line=120 column=4 end_column=10}\n2 {file_name_id=1 function_name_id=2 line=105 end_line=105 column=8 end_column=32}\n3 {file_name_id=1 function_name_id=3 line=27 end_line=27 column=11 end_column=37}\n\nStackFrames\n1 {file_location_id=1 parent_frame_id=1}\n2 {file_location_id=2 parent_frame_id=2}\n3 {file_location_id=3 parent_frame_id=3}\n";

    fn tables(text: &str) -> StackFrameIndex {
        StackFrameIndex::from_tables([(0, text)])
    }

    #[test]
    fn printed_parents_are_ids_plus_one() {
        let index = tables(JAX);
        let stack = index.stack(3);
        assert_eq!(
            format_stack(&stack, 8),
            "make_dumps.py:27 in softmax ← make_dumps.py:105 in main ← make_dumps.py:120 in <module>"
        );
        assert_eq!(
            format_stack(&stack, 1),
            "make_dumps.py:27 in softmax ← … 2 more"
        );
        assert_eq!(index.stack(1).len(), 1);
        let repeated = [stack[0].clone(), stack[0].clone(), stack[1].clone()];
        assert_eq!(
            format_stack(&repeated, 8),
            "make_dumps.py:27 in softmax (×2) ← make_dumps.py:105 in main"
        );
        assert_eq!(
            format_stack(&repeated, 1),
            "make_dumps.py:27 in softmax (×2) ← … 1 more"
        );
        assert_eq!(index.innermost(3), stack.first().cloned());
        assert_eq!(index.innermost(9), None);
        let nested = Frame {
            function: Some("step.<locals>.body.<locals>.<lambda>".into()),
            ..Frame::default()
        };
        assert_eq!(nested.short(), "? in step.body.<lambda>");
        let entry = &index.file_names[&1];
        assert_eq!(&JAX[entry.range.clone()], "\"make_dumps.py\"");
        let location = &index.file_locations[&2];
        assert!(JAX[location.range.clone()].starts_with("{file_name_id=1 function_name_id=2"));
    }

    #[test]
    fn stored_parents_are_read_as_such() {
        let text = "FileNames\n1 \"/src/train.py\"\n2 \"/src/model.py\"\nFunctionNames\n1 \"step\"\n2 \"attention\"\nFileLocations\n1 {file_name_id=1 function_name_id=1 line=10}\n2 {file_name_id=2 function_name_id=2 line=42}\nStackFrames\n1 {file_location_id=1 parent_frame_id=0}\n2 {file_location_id=2 parent_frame_id=1}\n";
        let index = tables(text);
        assert_eq!(
            format_stack(&index.stack(2), 4),
            "model.py:42 in attention ← train.py:10 in step"
        );
    }

    #[test]
    fn missing_and_partial_tables_leave_gaps() {
        // No FileNames, no FunctionNames: lines only; an unknown location is `?`.
        let text = "FileLocations\n1 {file_name_id=1 function_name_id=1 line=7}\nStackFrames\n1 {file_location_id=1 parent_frame_id=1}\n2 {file_location_id=9 parent_frame_id=2}\n3 garbage\n";
        let index = tables(text);
        assert_eq!(format_stack(&index.stack(2), 4), "? ← ?:7");
        assert!(index.stack(3).is_empty());
        assert!(index.stack(42).is_empty());
        assert!(StackFrameIndex::default().stack(1).is_empty());
    }

    #[test]
    fn cycles_end() {
        let text = "StackFrames\n1 {file_location_id=1 parent_frame_id=3}\n2 {file_location_id=1 parent_frame_id=2}\n";
        let index = tables(text);
        assert_eq!(index.stack(2).len(), 2);
        assert_eq!(index.stack(1).len(), 2);
    }
}
