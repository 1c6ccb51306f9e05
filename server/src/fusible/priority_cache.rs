//! Producer priorities kept from one round of a priority-fusion run to the next
//! (XLA's `PriorityFusionQueue` keeps its queue the same way and recomputes only the
//! priorities of the instructions around each fusion, `to_update_priority_`).
//!
//! A priority is a function of the producer, its users, and what the rules and the
//! cost model read around them: the users' other operands (shared reads, the fusion's
//! operand budget), the users' own users (a bitcast fused only into transposes, a
//! reduction's single user), the operands' shapes. A fusion changes the instructions it
//! joins and their neighbours, so after each fusion those neighbours are forgotten
//! ([`PriorityCache::forget_around`]) and computed again; the rest are reused. A multi-output fusion changes which
//! instructions reach which (its outputs feed the producer's other users), so it
//! forgets its whole computation.
//!
//! Entries are keyed by computation and instruction name: a fusion renames what it
//! replaces, and positions shift as instructions are added and removed.
//! `server/tests/fusion_run.rs` runs the whole pass with and without the cache on every
//! test module and requires the same fusions.

use std::collections::HashMap;

use super::priority::Priority;
use super::{FusionDecision, Hlo, Instr};
use crate::model::ComputationId;

/// A [`Priority`] with its consumers by name.
#[derive(Clone, Debug)]
enum Stored {
    Bitcast,
    Constant,
    Ineligible(FusionDecision),
    Saves { time: f64, consumers: Vec<String> },
}

/// See the module docs.
#[derive(Default)]
pub struct PriorityCache {
    /// By computation name, then instruction name (looked up by `&str`: no key is
    /// allocated on a hit, and every round looks up every candidate).
    entries: HashMap<String, HashMap<String, Stored>>,
}

impl PriorityCache {
    /// The priority of `producer`: the kept one, else `compute()` (then kept).
    pub fn priority(
        &mut self,
        h: &Hlo,
        producer: Instr,
        compute: impl FnOnce() -> Priority,
    ) -> Priority {
        let computation = &h.model.computation(producer.computation).name;
        let name = h.name(producer);
        let kept = self
            .entries
            .get(computation.as_str())
            .and_then(|c| c.get(name));
        if let Some(p) = kept.and_then(|s| restore(h, producer, s)) {
            return p;
        }
        let p = compute();
        self.entries
            .entry(computation.clone())
            .or_default()
            .insert(name.to_string(), store(h, &p));
        p
    }

    /// Forgets the priorities a fusion may have changed, around the instructions
    /// `names` of computation `c` (the fusions made, the producer, its consumers):
    /// theirs (also when they are gone from the module), their operands' and their
    /// operands' operands (their users changed: a bitcast is fused only into
    /// transposes, a reduction only into its single user), their users' and their
    /// users' other operands (a consumer's operands are read by the fused kernel).
    /// Not the other users of an operand: an operand's shape, all they read of it,
    /// does not change.
    pub fn forget_around(&mut self, h: &Hlo, c: ComputationId, names: &[&str]) {
        let comp = h.model.computation(c);
        let model = comp.model();
        let fused: Vec<Instr> = names
            .iter()
            .filter_map(|n| model.instruction_id(n))
            .map(|id| Instr { computation: c, id })
            .collect();
        let Some(entries) = self.entries.get_mut(comp.name.as_str()) else {
            return;
        };
        for n in names {
            entries.remove(*n);
        }
        let operands =
            |is: &[Instr]| -> Vec<Instr> { is.iter().flat_map(|&i| h.operands(i)).collect() };
        let users: Vec<Instr> = fused.iter().flat_map(|&i| h.users(i)).collect();
        let first = operands(&fused);
        let second = operands(&first);
        let beside = operands(&users);
        for i in [fused, first, second, users, beside].concat() {
            entries.remove(h.name(i));
        }
    }

    /// Forgets every priority of computation `name`.
    pub fn forget_computation(&mut self, name: &str) {
        self.entries.remove(name);
    }
}

fn store(h: &Hlo, p: &Priority) -> Stored {
    match p {
        Priority::Bitcast => Stored::Bitcast,
        Priority::Constant => Stored::Constant,
        Priority::Ineligible(d) => Stored::Ineligible(d.clone()),
        Priority::Saves { time, consumers } => Stored::Saves {
            time: *time,
            consumers: consumers.iter().map(|&c| h.name(c).to_string()).collect(),
        },
    }
}

/// The stored priority with its consumers found again by name (`None` when one is
/// gone: then it is computed afresh).
fn restore(h: &Hlo, producer: Instr, s: &Stored) -> Option<Priority> {
    Some(match s {
        Stored::Bitcast => Priority::Bitcast,
        Stored::Constant => Priority::Constant,
        Stored::Ineligible(d) => Priority::Ineligible(d.clone()),
        Stored::Saves { time, consumers } => {
            let model = h.model.computation(producer.computation).model();
            let consumers = consumers
                .iter()
                .map(|n| {
                    let id = model.instruction_id(n)?;
                    Some(Instr {
                        computation: producer.computation,
                        id,
                    })
                })
                .collect::<Option<Vec<Instr>>>()?;
            Priority::Saves {
                time: *time,
                consumers,
            }
        }
    })
}
