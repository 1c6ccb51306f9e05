//! The result of the analysis for one instruction: for every operand (output to
//! input) or every output (input to output), the set of indexing maps, each with
//! the runtime variables it uses and, for collectives, the replica it reads from.
//!
//! Printed in XLA's text format (`operand id = N <map>`), so that the output can be
//! compared with XLA's own tests.

use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;

use super::unknown::Unknown;
use crate::algebra::{IndexingMap, PrintOptions};

/// Where a runtime variable's value comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RuntimeSource {
    /// Operand `k` of the instruction whose per-op map this is (before composition).
    Operand(usize),
    /// An instruction of a computation, after composition through a fusion.
    Instruction {
        /// Index of the computation in [`super::graph::Module::computations`].
        computation: usize,
        /// Index of the instruction in that computation.
        instruction: usize,
        /// How XLA prints it: `parameter(1)`, `constant(42)`, or the name.
        label: String,
    },
}

/// A runtime variable: its value is the element of the source tensor at the index
/// `map` gives (from the same index space as the map it belongs to).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RuntimeVar {
    pub source: RuntimeSource,
    pub map: IndexingMap,
}

/// One access pattern of an operand: the map plus what its runtime variables and
/// replica mean. `runtime_vars[i]` describes runtime variable `rt{i}` of `map`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OperandMap {
    pub map: IndexingMap,
    pub runtime_vars: Vec<RuntimeVar>,
    /// For collectives (all-gather): which replica holds the element read.
    pub replica_id: Option<IndexingMap>,
}

impl OperandMap {
    /// A map without runtime variables or replica.
    pub fn plain(map: IndexingMap) -> OperandMap {
        OperandMap {
            map,
            runtime_vars: vec![],
            replica_id: None,
        }
    }
}

/// Every access pattern of one operand (or, input to output, of one output):
/// a deduplicated list in discovery order, plus the reason when some path through
/// the computation has no known indexing.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OperandIndexing {
    pub maps: Vec<OperandMap>,
    pub unknown: Option<Unknown>,
}

impl OperandIndexing {
    pub fn single(map: OperandMap) -> OperandIndexing {
        OperandIndexing {
            maps: vec![map],
            unknown: None,
        }
    }

    pub fn plain(map: IndexingMap) -> OperandIndexing {
        OperandIndexing::single(OperandMap::plain(map))
    }

    pub fn unknown(reason: Unknown) -> OperandIndexing {
        OperandIndexing {
            maps: vec![],
            unknown: Some(reason),
        }
    }

    /// No access at all (e.g. the other elements of a tuple).
    pub fn none() -> OperandIndexing {
        OperandIndexing::default()
    }

    /// Adds a map unless an equal one is already there (XLA keeps a set). A
    /// `KNOWN EMPTY` map reads nothing, so it is kept only while the set has no
    /// other map: XLA prints `KNOWN EMPTY` for an operand no path reads, but a
    /// union of live maps with an empty one is just the live maps.
    pub fn insert(&mut self, map: OperandMap) {
        if map.map.is_undefined() {
            self.mark_unknown(Unknown::no_indexing("undefined indexing map"));
            return;
        }
        insert_live_first(&mut self.maps, map, |m| m, |_, _| true);
    }

    /// [`OperandIndexing::insert`] of each map in turn, the set hashed once for all
    /// of them: uniting a call's outputs inserts hundreds of maps into one set.
    pub fn insert_all(&mut self, maps: impl IntoIterator<Item = OperandMap>) {
        let mut maps = maps.into_iter().peekable();
        if maps.peek().is_none() {
            return;
        }
        let mut index = SetIndex::of(&self.maps, |m| m);
        for map in maps {
            if map.map.is_undefined() {
                self.mark_unknown(Unknown::no_indexing("undefined indexing map"));
                continue;
            }
            let hash = SetIndex::hash(&map);
            if index.find(&self.maps, hash, |x| *x == map).is_none() {
                index.insert_new(&mut self.maps, hash, map, |m| m, |_, _| true);
            }
        }
    }

    /// Records that some path has no known indexing (the first reason wins).
    pub fn mark_unknown(&mut self, reason: Unknown) {
        if self.unknown.is_none() {
            self.unknown = Some(reason);
        }
    }

    /// Merges another set into this one.
    pub fn extend(&mut self, other: OperandIndexing) {
        self.insert_all(other.maps);
        if let Some(r) = other.unknown {
            self.mark_unknown(r);
        }
    }

    pub fn is_unknown(&self) -> bool {
        self.unknown.is_some()
    }
}

/// Inserts `item` into the set `items` (deduplicated), where a known-empty map
/// only stands in for "nothing read": it is dropped once a live map of the same
/// group arrives and not added next to one. `group` tells which items are one set.
pub(crate) fn insert_live_first<T: PartialEq>(
    items: &mut Vec<T>,
    item: T,
    map: impl Fn(&T) -> &OperandMap,
    same_group: impl Fn(&T, &T) -> bool,
) {
    if items.contains(&item) {
        return;
    }
    if map(&item).map.is_known_empty() {
        let live = items
            .iter()
            .any(|x| same_group(x, &item) && !map(x).map.is_known_empty());
        if !live {
            items.push(item);
        }
        return;
    }
    items.retain(|x| !(same_group(x, &item) && map(x).map.is_known_empty()));
    items.push(item);
}

/// A hash index over a set kept as a vector in discovery order (see
/// [`insert_live_first`], which compares an insert with each item: enough for a
/// few): the position of each item, found by its hash. A
/// fused computation's instruction collects hundreds of maps, one insert at a
/// time; comparing each insert with every map already there was a sixth of a
/// graph's composition.
#[derive(Clone, Debug, Default)]
pub(crate) struct SetIndex {
    /// Each item's hash and position in the vector.
    table: HashTable<(u64, u32)>,
    /// How many known-empty maps the vector holds: a live insert drops those of
    /// its group, and looks for them only while there are some.
    known_empty: usize,
}

impl SetIndex {
    /// The index of `items`, whose maps `map` reads.
    pub(crate) fn of<T: Hash>(items: &[T], map: impl Fn(&T) -> &OperandMap) -> SetIndex {
        let mut index = SetIndex::default();
        for (position, item) in items.iter().enumerate() {
            index.note(SetIndex::hash(item), position);
            index.known_empty += usize::from(map(item).map.is_known_empty());
        }
        index
    }

    /// The hash an item is indexed by (a borrowed form of the item that hashes
    /// alike, e.g. `(output, &map)` for `(output, map)`, finds it).
    pub(crate) fn hash<Q: Hash + ?Sized>(key: &Q) -> u64 {
        rustc_hash::FxBuildHasher.hash_one(key)
    }

    /// The position in `items` (the vector this indexes) of the item of hash
    /// `hash` that `is` accepts.
    pub(crate) fn find<T>(&self, items: &[T], hash: u64, is: impl Fn(&T) -> bool) -> Option<usize> {
        self.table
            .find(hash, |&(h, position)| {
                h == hash && is(&items[position as usize])
            })
            .map(|&(_, position)| position as usize)
    }

    fn note(&mut self, hash: u64, position: usize) {
        self.table
            .insert_unique(hash, (hash, position as u32), |&(h, _)| h);
    }

    /// Adds `item` (of hash `hash`), which [`SetIndex::find`] did not find in
    /// `items`, as [`insert_live_first`] says.
    pub(crate) fn insert_new<T: Hash>(
        &mut self,
        items: &mut Vec<T>,
        hash: u64,
        item: T,
        map: impl Fn(&T) -> &OperandMap,
        same_group: impl Fn(&T, &T) -> bool,
    ) {
        if map(&item).map.is_known_empty() {
            let live = items
                .iter()
                .any(|x| same_group(x, &item) && !map(x).map.is_known_empty());
            if !live {
                self.note(hash, items.len());
                self.known_empty += 1;
                items.push(item);
            }
            return;
        }
        if self.known_empty > 0 {
            let before = items.len();
            items.retain(|x| !(same_group(x, &item) && map(x).map.is_known_empty()));
            if items.len() != before {
                *self = SetIndex::of(items, &map);
            }
        }
        self.note(hash, items.len());
        items.push(item);
    }
}

/// Indexing of one instruction in one direction: entry `k` is operand `k`
/// (output to input) or output `k` (input to output).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct InstructionIndexing {
    pub entries: Vec<OperandIndexing>,
}

impl InstructionIndexing {
    /// Every entry unknown for the same reason.
    pub fn all_unknown(count: usize, reason: &Unknown) -> InstructionIndexing {
        InstructionIndexing {
            entries: (0..count)
                .map(|_| OperandIndexing::unknown(reason.clone()))
                .collect(),
        }
    }

    /// True when a runtime variable is labelled with an instruction of the module
    /// (the instruction's position and its name, unless it is a parameter or a
    /// constant): such a result belongs to that computation alone, not to every
    /// computation of its structural class ([`super::structure`]).
    pub fn names_instructions(&self) -> bool {
        self.entries.iter().flat_map(|e| &e.maps).any(|m| {
            m.runtime_vars
                .iter()
                .any(|v| matches!(v.source, RuntimeSource::Instruction { .. }))
        })
    }

    /// XLA's text: `operand id = N` followed by each map (or `unknown indexing`).
    pub fn to_xla_string(&self, options: &PrintOptions) -> String {
        let mut out = String::new();
        for (id, entry) in self.entries.iter().enumerate() {
            out.push_str(&format!("operand id = {id}\n"));
            out.push_str(&entry_to_string(entry, options));
        }
        out
    }
}

/// The text of one operand's maps, each indented by two spaces.
pub fn entry_to_string(entry: &OperandIndexing, options: &PrintOptions) -> String {
    let mut out = String::new();
    for m in &entry.maps {
        out.push_str(&indent(&operand_map_to_string(m, options), 2));
    }
    if entry.unknown.is_some() {
        out.push_str("  unknown indexing\n");
    }
    out
}

/// One map with its runtime variables and replica, in XLA's layout.
pub fn operand_map_to_string(m: &OperandMap, options: &PrintOptions) -> String {
    let mut out = m.map.print(options);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if !m.runtime_vars.is_empty() {
        out.push_str("runtime variables:\n");
        for (i, rt) in m.runtime_vars.iter().enumerate() {
            let label = match &rt.source {
                RuntimeSource::Operand(k) => format!("operand({k})"),
                RuntimeSource::Instruction { label, .. } => label.clone(),
            };
            out.push_str(&format!("  rt{i}: {label}; "));
            out.push_str(indent(rt.map.print(options).trim_end(), 4).trim());
            out.push('\n');
        }
    }
    if let Some(replica) = &m.replica_id {
        out.push_str("replica id:\n");
        out.push_str(&indent(replica.print(options).trim_end(), 2));
        out.push('\n');
    }
    out
}

fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(&pad);
        out.push_str(line);
        out.push('\n');
    }
    out
}
