//! A computation's instructions by name, without a second copy of the names.
//!
//! A map from `String` to id cloned every instruction's name (60 bytes an instruction
//! with the table, about a tenth of the model). The index keeps only ids, hashed by the
//! name the instruction itself holds: 4 bytes and a control byte an entry.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::module::{InstrId, Instruction};

/// The first instruction of each name of one computation (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    table: HashTable<InstrId>,
}

pub(crate) fn hash(name: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(name)
}

impl NameIndex {
    /// Indexes `instructions`, keeping the first of each name; the later ones of a
    /// name already taken are returned with the first, in order.
    pub fn of(instructions: &[Instruction]) -> (NameIndex, Vec<(InstrId, InstrId)>) {
        let mut table = HashTable::with_capacity(instructions.len());
        let mut duplicates = Vec::new();
        let name_of = |id: &InstrId| hash(&instructions[id.index()].name);
        for (i, instr) in instructions.iter().enumerate() {
            let id = InstrId(i as u32);
            let entry = table.entry(
                hash(&instr.name),
                |&other: &InstrId| instructions[other.index()].name == instr.name,
                name_of,
            );
            match entry {
                hashbrown::hash_table::Entry::Occupied(first) => {
                    duplicates.push((id, *first.get()));
                }
                hashbrown::hash_table::Entry::Vacant(slot) => {
                    slot.insert(id);
                }
            }
        }
        table.shrink_to_fit(name_of);
        (NameIndex { table }, duplicates)
    }

    /// The first instruction named `name` (without `%`) among `instructions`, the
    /// ones the index was made of.
    pub fn get(&self, instructions: &[Instruction], name: &str) -> Option<InstrId> {
        self.table
            .find(hash(name), |&id| *instructions[id.index()].name == *name)
            .copied()
    }

    /// The instructions indexed: the first of each name, in no particular order.
    pub fn ids(&self) -> impl Iterator<Item = InstrId> + '_ {
        self.table.iter().copied()
    }

    /// Entries the table has room for (for memory accounting).
    pub fn capacity(&self) -> usize {
        self.table.capacity()
    }
}

/// `name` without its `.N` suffix: the names [`free_name`] chooses among.
pub fn stem(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((stem, n))
            if !stem.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            stem
        }
        _ => name,
    }
}

/// A name like `name` that `taken` says is free: its stem (without a `.N` suffix)
/// with the first free number, as XLA's `NameUniquer` numbers the copies of a name.
pub fn free_name(name: &str, taken: impl Fn(&str) -> bool) -> String {
    let stem = stem(name);
    (1..)
        .map(|k| format!("{stem}.{k}"))
        .find(|candidate| !taken(candidate))
        .unwrap_or_else(|| format!("{stem}.0"))
}
