//! The stack-frame tables (`FileNames`, `FunctionNames`, `FileLocations`,
//! `StackFrames`) as jaxlib prints them after parsing. XLA's parser does not keep
//! the tables it reads: `HloModule::CanonicalizeStackFrameIds` walks every
//! instruction's `stack_frame_id` (computations and instructions in the order they
//! were read) and adds the frames it reaches, oldest caller first, to a fresh index
//! (`StackFrames::AddStackFrame`, which keeps one copy of each file name, function
//! name, location and frame, numbered in the order they are first added). Frames no
//! instruction reaches are gone, and every `stack_frame_id` is renumbered; one that
//! reaches a cycle or a missing id becomes 0, which the metadata does not print.
//!
//! A dump's tables are XLA's own index, built over the life of the module: frames of
//! instructions that passes removed are still there, and the numbering follows the
//! order the frames were made, not the order of the text. jaxlib rewrites them on
//! a re-parse (193 of the 309 dumps in tests/data), so such tables are kept as
//! written: tables shaped like an index `AddStackFrame` built (every entry used by a
//! later one, numbered in first-use order, no duplicates, parents before their
//! children) are printed back unchanged; any other tables are rebuilt as jaxlib does.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::model::metadata::OpMetadata;
use crate::model::{ComputationId, Module};

/// The tables to print, and how `stack_frame_id`s change.
#[derive(Debug, Default)]
pub struct FrameTables {
    /// The tables' texts, each without its final line break.
    pub tables: Vec<String>,
    /// Old frame id to new (0: dropped), when the tables were rebuilt.
    renumbered: Option<HashMap<i64, i64>>,
}

impl FrameTables {
    /// The tables `written` (each table's text) as jaxlib prints them for `module`.
    /// Tables this reader does not take apart are kept as written.
    pub fn of(written: Vec<String>, module: &Module) -> FrameTables {
        let index = match Index::parse(&written) {
            Some(index) if !index.as_built() => index,
            _ => {
                return FrameTables {
                    tables: written,
                    renumbered: None,
                }
            }
        };
        let (rebuilt, renumbered) = index.canonical(frame_uses(module));
        FrameTables {
            tables: rebuilt.print(),
            renumbered: Some(renumbered),
        }
    }

    /// Whether the tables were rebuilt, so that instructions' `stack_frame_id`s
    /// change with what every computation uses.
    pub fn renumbers(&self) -> bool {
        self.renumbered.is_some()
    }

    /// An instruction's written `metadata={...}` with its `stack_frame_id` renumbered.
    pub fn metadata<'a>(&self, written: &'a str) -> Cow<'a, str> {
        let Some(renumbered) = &self.renumbered else {
            return Cow::Borrowed(written);
        };
        let m = OpMetadata::parse(written);
        match (m.stack_frame_id, m.stack_frame_range) {
            (Some(old), Some(range)) => {
                let new = renumbered.get(&i64::from(old)).copied().unwrap_or(0);
                Cow::Owned(format!(
                    "{}{new}{}",
                    &written[..range.start],
                    &written[range.end..]
                ))
            }
            _ => Cow::Borrowed(written),
        }
    }
}

/// Every instruction's `stack_frame_id` (0 without one), computations in written
/// order and each one's instructions in the order the parser makes them.
fn frame_uses(module: &Module) -> Vec<i64> {
    let mut uses = Vec::new();
    for k in 0..module.computation_count() {
        let c = module.computation(ComputationId(k as u32));
        for i in &c.instructions {
            if let Some(a) = i.attribute("metadata") {
                let m = OpMetadata::parse(c.src(a.value_range));
                uses.push(m.stack_frame_id.map_or(0, i64::from));
            }
        }
    }
    uses
}

/// A location: file name id, function name id, line, end line, column, end column.
type Location = [i64; 6];

/// The four tables, rows in order (an id is its row's place, from 1); a frame's
/// parent as printed (the parent's id plus one, 1 for none).
#[derive(Debug, Default)]
struct Index {
    file_names: Vec<String>,
    function_names: Vec<String>,
    locations: Vec<Location>,
    frames: Vec<(i64, i64)>,
}

impl Index {
    /// The four tables in XLA's order, or `None` when they are not exactly that.
    fn parse(tables: &[String]) -> Option<Index> {
        let [names, functions, locations, frames] = tables else {
            return None;
        };
        Some(Index {
            file_names: rows(names, "FileNames", quoted)?,
            function_names: rows(functions, "FunctionNames", quoted)?,
            locations: rows(locations, "FileLocations", |row| {
                let f = fields(row)?;
                let get = |k: &str| f.get(k).copied().unwrap_or(0);
                Some([
                    get("file_name_id"),
                    get("function_name_id"),
                    get("line"),
                    get("end_line"),
                    get("column"),
                    get("end_column"),
                ])
            })?,
            frames: rows(frames, "StackFrames", |row| {
                let f = fields(row)?;
                let get = |k: &str| f.get(k).copied().unwrap_or(0);
                Some((get("file_location_id"), get("parent_frame_id")))
            })?,
        })
    }

    /// Whether these tables could be an index `StackFrames::AddStackFrame` built:
    /// no entry twice, every name used by a location and every location by a frame,
    /// each first used in numbering order, and each frame's parent made before it.
    fn as_built(&self) -> bool {
        let distinct = |n: usize, set: usize| n == set;
        if !distinct(self.file_names.len(), set_len(&self.file_names))
            || !distinct(self.function_names.len(), set_len(&self.function_names))
            || !distinct(self.locations.len(), set_len(&self.locations))
            || !distinct(self.frames.len(), set_len(&self.frames))
        {
            return false;
        }
        let mut files = FirstUse::new(self.file_names.len());
        let mut functions = FirstUse::new(self.function_names.len());
        let locations_in_order = self
            .locations
            .iter()
            .all(|l| files.add(l[0]) && functions.add(l[1]));
        let mut locations = FirstUse::new(self.locations.len());
        let frames_in_order = self
            .frames
            .iter()
            .zip(1..)
            .all(|(&(location, parent), id)| locations.add(location) && (1..=id).contains(&parent));
        locations_in_order
            && frames_in_order
            && files.all_used()
            && functions.all_used()
            && locations.all_used()
    }

    /// `HloModule::CanonicalizeStackFrameIds`: the index the frames `uses` reach
    /// make, and each used id's new one (0: dropped).
    fn canonical(&self, uses: Vec<i64>) -> (Index, HashMap<i64, i64>) {
        let mut built = Builder::default();
        let mut mapping: HashMap<i64, i64> = HashMap::new();
        let mut renumbered = HashMap::new();
        // XLA keeps this list across instructions, and a frame with a broken
        // location leaves the rest of it for the next instruction; so does this.
        let mut path: Vec<i64> = Vec::new();
        for old in uses.into_iter().filter(|&id| id != 0) {
            let mut current = old;
            let mut seen = HashSet::new();
            let mut broken = false;
            while current != 0 {
                if current < 0 || current > self.frames.len() as i64 || !seen.insert(current) {
                    broken = true;
                    break;
                }
                if mapping.contains_key(&current) {
                    break;
                }
                path.push(current);
                current = self.frames[current as usize - 1].1 - 1;
            }
            if broken {
                path.clear();
                renumbered.insert(old, 0);
                continue;
            }
            let mut id = match current {
                0 => 0,
                c => mapping[&c],
            };
            while let Some(next) = path.pop() {
                match self.frame(next, id) {
                    Some(frame) => {
                        id = built.add(frame);
                        mapping.insert(next, id);
                    }
                    None => {
                        id = 0;
                        break;
                    }
                }
            }
            renumbered.insert(old, id);
        }
        (built.index, renumbered)
    }

    /// Frame `id` with its strings, under the new parent `parent`; `None` when one
    /// of its ids points nowhere.
    fn frame(&self, id: i64, parent: i64) -> Option<(String, String, Location, i64)> {
        let location = *self.locations.get(index(self.frames[id as usize - 1].0)?)?;
        let file = self.file_names.get(index(location[0])?)?.clone();
        let function = self.function_names.get(index(location[1])?)?.clone();
        Some((file, function, location, parent))
    }

    /// The tables as `HloModule::PrintStackFrameIndex` writes them; none when no
    /// frame is left.
    fn print(&self) -> Vec<String> {
        if self.frames.is_empty() {
            return Vec::new();
        }
        let names = |title: &str, names: &[String]| {
            let rows = names.iter().zip(1..).map(|(n, k)| format!("\n{k} \"{n}\""));
            std::iter::once(title.to_string()).chain(rows).collect()
        };
        let locations = self.locations.iter().zip(1..).map(|(l, k)| {
            format!(
                "\n{k} {{file_name_id={} function_name_id={} line={} end_line={} column={} end_column={}}}",
                l[0], l[1], l[2], l[3], l[4], l[5]
            )
        });
        let frames = self
            .frames
            .iter()
            .zip(1..)
            .map(|((l, p), k)| format!("\n{k} {{file_location_id={l} parent_frame_id={p}}}"));
        vec![
            names("FileNames", &self.file_names),
            names("FunctionNames", &self.function_names),
            std::iter::once("FileLocations".to_string())
                .chain(locations)
                .collect(),
            std::iter::once("StackFrames".to_string())
                .chain(frames)
                .collect(),
        ]
    }
}

/// `StackFrames::AddStackFrame`: one copy of each name, location and frame,
/// numbered from 1 in the order first added.
#[derive(Default)]
struct Builder {
    index: Index,
    files: HashMap<String, i64>,
    functions: HashMap<String, i64>,
    locations: HashMap<Location, i64>,
    frames: HashMap<(i64, i64), i64>,
}

impl Builder {
    /// Adds a frame (file, function, location, parent id) and gives its id.
    fn add(&mut self, (file, function, location, parent): (String, String, Location, i64)) -> i64 {
        let file = intern(&mut self.files, &mut self.index.file_names, file);
        let function = intern(
            &mut self.functions,
            &mut self.index.function_names,
            function,
        );
        let location = [
            file,
            function,
            location[2],
            location[3],
            location[4],
            location[5],
        ];
        let location = intern(&mut self.locations, &mut self.index.locations, location);
        // Printed parents are the parent's id plus one.
        intern(
            &mut self.frames,
            &mut self.index.frames,
            (location, parent + 1),
        )
    }
}

/// The id of `value`, added at the end of `rows` when new.
fn intern<T: Clone + Eq + std::hash::Hash>(
    ids: &mut HashMap<T, i64>,
    rows: &mut Vec<T>,
    value: T,
) -> i64 {
    *ids.entry(value.clone()).or_insert_with(|| {
        rows.push(value);
        rows.len() as i64
    })
}

/// Ids used in order: each new one is the next number.
struct FirstUse {
    count: usize,
    highest: i64,
}

impl FirstUse {
    fn new(count: usize) -> FirstUse {
        FirstUse { count, highest: 0 }
    }

    /// Uses `id`; false when it is out of range or skips an unused one.
    fn add(&mut self, id: i64) -> bool {
        if id < 1 || id > self.highest + 1 || id > self.count as i64 {
            return false;
        }
        self.highest = self.highest.max(id);
        true
    }

    fn all_used(&self) -> bool {
        self.highest == self.count as i64
    }
}

fn set_len<T: Eq + std::hash::Hash>(items: &[T]) -> usize {
    items.iter().collect::<HashSet<_>>().len()
}

/// The 0-based place of a 1-based id.
fn index(id: i64) -> Option<usize> {
    usize::try_from(id).ok()?.checked_sub(1)
}

/// The rows of a table titled `title`, each read by `read` after its id (which must
/// count from 1).
fn rows<T>(text: &str, title: &str, read: impl Fn(&str) -> Option<T>) -> Option<Vec<T>> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    if lines.next()? != title {
        return None;
    }
    lines
        .zip(1..)
        .map(|(line, k): (&str, u64)| {
            let (id, row) = line.split_once(' ')?;
            (id.parse::<u64>().ok()? == k).then_some(())?;
            read(row.trim())
        })
        .collect()
}

/// `"text"` as the text between the quotes.
fn quoted(row: &str) -> Option<String> {
    Some(row.strip_prefix('"')?.strip_suffix('"')?.to_string())
}

/// `{key=1 key=2}` as its numbers.
fn fields(row: &str) -> Option<HashMap<&str, i64>> {
    let inner = row.strip_prefix('{')?.strip_suffix('}')?;
    inner
        .split_whitespace()
        .map(|field| {
            let (key, value) = field.split_once('=')?;
            Some((key, value.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(text: &str) -> Vec<String> {
        text.split("\n\n").map(str::to_string).collect()
    }

    const TABLES: &str = "FileNames\n1 \"a.py\"\n2 \"b.py\"\n3 \"c.py\"\n\n\
        FunctionNames\n1 \"f\"\n2 \"g\"\n\n\
        FileLocations\n\
        1 {file_name_id=1 function_name_id=1 line=1 end_line=1 column=2 end_column=3}\n\
        2 {file_name_id=3 function_name_id=2 line=5 end_line=5 column=2 end_column=24}\n\
        3 {file_name_id=2 function_name_id=2 line=83 end_line=83 column=2 end_column=15}\n\n\
        StackFrames\n\
        1 {file_location_id=1 parent_frame_id=1}\n\
        2 {file_location_id=3 parent_frame_id=1}\n\
        3 {file_location_id=2 parent_frame_id=3}";

    /// What jaxlib 0.10.2 prints when instructions use frame 3 (whose parent is
    /// frame 2), then frame 1: the frames in the order reached, oldest first.
    #[test]
    fn frames_are_rebuilt_in_the_order_instructions_reach_them() {
        let index = Index::parse(&tables(TABLES)).expect("tables");
        assert!(!index.as_built(), "a.py is used after c.py");
        let (built, renumbered) = index.canonical(vec![3, 1]);
        assert_eq!(
            built.print().join("\n\n"),
            "FileNames\n1 \"b.py\"\n2 \"c.py\"\n3 \"a.py\"\n\n\
             FunctionNames\n1 \"g\"\n2 \"f\"\n\n\
             FileLocations\n\
             1 {file_name_id=1 function_name_id=1 line=83 end_line=83 column=2 end_column=15}\n\
             2 {file_name_id=2 function_name_id=1 line=5 end_line=5 column=2 end_column=24}\n\
             3 {file_name_id=3 function_name_id=2 line=1 end_line=1 column=2 end_column=3}\n\n\
             StackFrames\n\
             1 {file_location_id=1 parent_frame_id=1}\n\
             2 {file_location_id=2 parent_frame_id=2}\n\
             3 {file_location_id=3 parent_frame_id=1}"
        );
        assert_eq!(renumbered[&3], 2);
        assert_eq!(renumbered[&1], 3);
        assert!(built.as_built(), "what XLA prints is kept");
    }

    /// A frame that is its own parent, or an id past the table, is dropped (jaxlib
    /// 0.10.2 logs "Cycle detected" / "Invalid stack_frame_id").
    #[test]
    fn cycles_and_missing_frames_are_dropped() {
        let text = TABLES.replace(
            "3 {file_location_id=2 parent_frame_id=3}",
            "3 {file_location_id=2 parent_frame_id=4}",
        );
        let index = Index::parse(&tables(&text)).expect("tables");
        let (built, renumbered) = index.canonical(vec![3, 9, 1]);
        assert_eq!((renumbered[&3], renumbered[&9], renumbered[&1]), (0, 0, 1));
        assert_eq!(built.frames, vec![(1, 1)]);
        assert!(index.canonical(vec![]).0.print().is_empty());
    }

    #[test]
    fn metadata_ids_are_renumbered() {
        let frames = FrameTables {
            tables: Vec::new(),
            renumbered: Some(HashMap::from([(3, 2), (2, 0)])),
        };
        assert_eq!(
            frames.metadata("{op_name=\"x\" stack_frame_id=3}"),
            "{op_name=\"x\" stack_frame_id=2}"
        );
        assert_eq!(
            frames.metadata("{stack_frame_id=2 op_name=\"x\"}"),
            "{stack_frame_id=0 op_name=\"x\"}"
        );
    }
}
