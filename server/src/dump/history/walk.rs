//! Following instructions from one snapshot to the next: each step compares the
//! computations whose hash changed, instruction by instruction, keyed by computation
//! and name. A name whose opcode differs from the step before is a new instruction
//! (XLA gave a removed instruction's name to another), so is a name that comes back
//! after it was gone. An instruction that is gone is followed to what took its
//! place: the operand its users read now instead of it, or the fusion that swallowed
//! its user, or the computation's new root.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::scan::{ScannedComputation, ScannedInstruction, ScannedSnapshot};
use super::{InstructionHistory, Removal};

/// The instructions followed so far, and which are alive in the last snapshot.
#[derive(Debug, Default)]
pub(super) struct Walk {
    pub tracks: Vec<InstructionHistory>,
    /// (computation name hash, instruction name hash) → track alive now.
    live: FxHashMap<(u64, u64), u32>,
}

/// How far the users of a removed instruction are followed when they are gone too.
const FOLLOW_DEPTH: u32 = 8;

impl Walk {
    /// Snapshot `k` (`text`, read as `now`) after `before` (none for the first).
    pub fn step(
        &mut self,
        k: usize,
        before: Option<&ScannedSnapshot>,
        now: &ScannedSnapshot,
        text: &str,
    ) {
        let empty = ScannedSnapshot::default();
        let before = before.unwrap_or(&empty);
        let by_name: FxHashMap<u64, usize> = before
            .computations
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name_hash, i))
            .collect();
        let mut kept = vec![false; before.computations.len()];
        for c in &now.computations {
            match by_name.get(&c.name_hash) {
                Some(&p) => {
                    kept[p] = true;
                    if before.computations[p].hash != c.hash {
                        self.compare(k, &before.computations[p], c, text);
                    }
                }
                None => {
                    let name: Arc<str> = text[c.name.clone()].into();
                    for i in &c.instructions {
                        self.introduce(k, c, &name, i, text);
                    }
                }
            }
        }
        for (c, _) in before.computations.iter().zip(kept).filter(|(_, k)| !k) {
            for i in &c.instructions {
                self.end(k, (c.name_hash, i.name_hash), Removal::at(k));
            }
        }
    }

    fn introduce(
        &mut self,
        k: usize,
        c: &ScannedComputation,
        computation: &Arc<str>,
        i: &ScannedInstruction,
        text: &str,
    ) {
        let id = self.tracks.len() as u32;
        self.tracks.push(InstructionHistory {
            computation: computation.clone(),
            name: text[i.name.clone()].to_string(),
            opcode: text[i.opcode.clone()].to_string(),
            introduced: k,
            changed: Vec::new(),
            removed: None,
            opcode_hash: i.opcode_hash,
            line_hash: i.line_hash,
        });
        self.live.insert((c.name_hash, i.name_hash), id);
    }

    fn end(&mut self, k: usize, key: (u64, u64), removal: Removal) {
        debug_assert_eq!(removal.snapshot, k);
        if let Some(t) = self.live.remove(&key) {
            self.tracks[t as usize].removed = Some(removal);
        }
    }

    /// One computation of both snapshots, whose text changed.
    fn compare(&mut self, k: usize, a: &ScannedComputation, b: &ScannedComputation, text: &str) {
        let name: Arc<str> = text[b.name.clone()].into();
        for j in &b.instructions {
            let key = (b.name_hash, j.name_hash);
            match self.live.get(&key).map(|&t| &mut self.tracks[t as usize]) {
                Some(t) if t.opcode_hash == j.opcode_hash => {
                    if t.line_hash != j.line_hash {
                        t.changed.push(k);
                        t.line_hash = j.line_hash;
                    }
                }
                Some(_) => {
                    let mut removal = Removal::at(k);
                    removal.replaced_by = Some(text[j.name.clone()].to_string());
                    self.end(k, key, removal);
                    self.introduce(k, b, &name, j, text);
                }
                None => self.introduce(k, b, &name, j, text),
            }
        }
        let fresh_fusions = b
            .instructions
            .iter()
            .map(|j| j.opcode_hash == *FUSION && self.is_fresh(k, b, j))
            .collect();
        let places = Places::new(a, b, fresh_fusions);
        for (x, i) in a.instructions.iter().enumerate() {
            if places.b_names.contains_key(&i.name_hash) {
                continue;
            }
            let removal = match places.destination(x, 0) {
                Some(w) => removal_into(k, &places, w, text),
                None => Removal::at(k),
            };
            self.end(k, (a.name_hash, i.name_hash), removal);
        }
    }

    /// Whether `i` of `b` was made or changed at snapshot `k`.
    fn is_fresh(&self, k: usize, b: &ScannedComputation, i: &ScannedInstruction) -> bool {
        self.live
            .get(&(b.name_hash, i.name_hash))
            .map(|&t| &self.tracks[t as usize])
            .is_some_and(|t| t.introduced == k || t.changed.last() == Some(&k))
    }
}

/// The removal of an instruction whose place `b.instructions[w]` took: fused into it
/// when it is a fusion this pass made or changed (or a `get-tuple-element` of one),
/// else replaced by it.
fn removal_into(k: usize, places: &Places, w: usize, text: &str) -> Removal {
    let b = places.b;
    let mut removal = Removal::at(k);
    let r = &b.instructions[w];
    let fusion = match &text[r.opcode.clone()] {
        "get-tuple-element" => r
            .operands
            .first()
            .and_then(|o| places.b_names.get(o))
            .copied(),
        _ => Some(w),
    }
    .filter(|&f| places.fresh_fusions[f]);
    match fusion {
        Some(f) => removal.fused_into = Some(text[b.instructions[f].name.clone()].to_string()),
        None => removal.replaced_by = Some(text[r.name.clone()].to_string()),
    }
    removal
}

/// One computation before (`a`) and after (`b`) a pass, indexed to find where a
/// removed instruction went.
struct Places<'a> {
    a: &'a ScannedComputation,
    b: &'a ScannedComputation,
    b_names: FxHashMap<u64, usize>,
    /// Which instructions of `b` are fusions the pass made or changed.
    fresh_fusions: Vec<bool>,
    /// Operand name hash → (user in `a`, operand position).
    users: FxHashMap<u64, Vec<(usize, usize)>>,
}

impl<'a> Places<'a> {
    fn new(
        a: &'a ScannedComputation,
        b: &'a ScannedComputation,
        fresh_fusions: Vec<bool>,
    ) -> Places<'a> {
        let b_names = b
            .instructions
            .iter()
            .enumerate()
            .map(|(w, j)| (j.name_hash, w))
            .collect();
        let mut users: FxHashMap<u64, Vec<(usize, usize)>> = FxHashMap::default();
        for (u, i) in a.instructions.iter().enumerate() {
            for (pos, o) in i.operands.iter().enumerate() {
                users.entry(*o).or_default().push((u, pos));
            }
        }
        Places {
            a,
            b,
            b_names,
            fresh_fusions,
            users,
        }
    }

    /// The instruction of `b` that took the place of `a.instructions[x]`, if found.
    fn destination(&self, x: usize, depth: u32) -> Option<usize> {
        let gone = &self.a.instructions[x];
        let users = self.users.get(&gone.name_hash).map(Vec::as_slice);
        for &(u, pos) in users.unwrap_or_default() {
            let user = &self.a.instructions[u];
            let found = match self.b_names.get(&user.name_hash) {
                None if depth < FOLLOW_DEPTH => self.destination(u, depth + 1),
                None => None,
                Some(&v) => self.read_instead(gone, user, pos, v),
            };
            if found.is_some() {
                return found;
            }
        }
        let new_root = || self.b.instructions.iter().position(|j| j.is_root);
        gone.is_root.then(new_root).flatten()
    }

    /// What user `user` (now `b.instructions[v]`) reads in place of `gone`, its
    /// operand `pos`: a fusion the pass made, else the user itself when the pass made
    /// it a fusion or grew it (`gone` was fused into its consumer), else the operand.
    fn read_instead(
        &self,
        gone: &ScannedInstruction,
        user: &ScannedInstruction,
        pos: usize,
        v: usize,
    ) -> Option<usize> {
        let now = &self.b.instructions[v];
        let instead = if now.operands.len() == user.operands.len() {
            Some(now.operands[pos]).filter(|r| *r != gone.name_hash)
        } else {
            now.operands
                .iter()
                .copied()
                .find(|r| !user.operands.contains(r))
        };
        let instead = instead.and_then(|r| self.b_names.get(&r).copied());
        match instead {
            Some(r) if self.fresh_fusions[r] => Some(r),
            _ if self.fresh_fusions[v] => Some(v),
            other => other,
        }
    }
}

/// The hash of the opcode `fusion`.
static FUSION: std::sync::LazyLock<u64> = std::sync::LazyLock::new(|| super::scan::hash(b"fusion"));
