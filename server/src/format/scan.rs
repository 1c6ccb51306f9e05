//! What the printer reads of every instruction of a module before printing any:
//! the form its operands are written in ([`Style`]), whether every name prints as
//! written ([`super::names`]) and the call sites that decide XLA's computation
//! order ([`super::post_order`]). Read in one pass: a 588 MiB dump is five million
//! instructions, and reading them waits on memory (each instruction's operand list
//! is an allocation of its own): three passes took 340 ms of formatting it, one
//! takes 300.

use rayon::prelude::*;

use super::names;
use super::post_order;
use super::Style;
use crate::model::{ComputationId, ComputationRef, Instruction, Module};

/// Every instruction of a module, read once.
pub struct ModuleScan {
    /// Named operands, and how many of them are written with their shape.
    operands: OperandCounts,
    /// The hashed (root, suffix) key of every instruction's name, when each is
    /// in the form XLA prints ([`names::name_key`]).
    pub name_keys: Option<Vec<u64>>,
    /// Each computation's call sites ([`post_order::computation_order`]), when
    /// asked for.
    pub call_sites: Vec<Vec<Vec<usize>>>,
}

/// Named operands, and how many of them are written with their shape.
#[derive(Clone, Copy, Default)]
pub struct OperandCounts {
    named: usize,
    shaped: usize,
}

impl OperandCounts {
    /// The named operands of `c`, and those written with their shape.
    pub fn of(c: &ComputationRef) -> OperandCounts {
        let mut counts = OperandCounts::default();
        c.instructions.iter().for_each(|i| counts.add(i));
        counts
    }

    /// Counts the named operands of `i`.
    fn add(&mut self, i: &Instruction) {
        for o in i.operands.iter().filter(|o| o.name_range().is_some()) {
            self.named += 1;
            self.shaped += usize::from(o.declared_shape.is_some());
        }
    }

    pub fn plus(self, other: OperandCounts) -> OperandCounts {
        OperandCounts {
            named: self.named + other.named,
            shaped: self.shaped + other.shaped,
        }
    }

    /// Long when most named operands carry their shape, short otherwise (also
    /// when there are no operands at all).
    pub fn style(self) -> Style {
        match self.named > 0 && self.shaped * 2 >= self.named {
            true => Style::Long,
            false => Style::Short,
        }
    }
}

/// One computation's share of a [`ModuleScan`].
struct Scanned {
    operands: OperandCounts,
    name_keys: Option<Vec<u64>>,
    call_sites: Vec<Vec<usize>>,
}

impl ModuleScan {
    /// The scan of `module`; without call sites unless `order` (XLA's computation
    /// order is not needed to print some computations alone).
    pub fn of(module: &Module, order: bool) -> ModuleScan {
        let scanned: Vec<Scanned> = (0..module.computation_count())
            .into_par_iter()
            .map(|k| scan(module, &module.computation(ComputationId(k as u32)), order))
            .collect();
        let operands = scanned
            .iter()
            .fold(OperandCounts::default(), |n, s| n.plus(s.operands));
        let all_keyed = scanned.iter().all(|s| s.name_keys.is_some());
        let name_keys = all_keyed.then(|| {
            let mut keys = Vec::with_capacity(
                scanned
                    .iter()
                    .map(|s| s.name_keys.as_ref().map_or(0, Vec::len))
                    .sum(),
            );
            keys.par_extend(
                scanned
                    .par_iter()
                    .flat_map_iter(|s| s.name_keys.iter().flatten().copied()),
            );
            keys
        });
        let call_sites = scanned.into_iter().map(|s| s.call_sites).collect();
        ModuleScan {
            operands,
            name_keys,
            call_sites,
        }
    }

    /// The form the module is written in.
    pub fn style(&self) -> Style {
        self.operands.style()
    }
}

/// Every instruction of `c`, once (its call sites when `order`).
fn scan(module: &Module, c: &ComputationRef, order: bool) -> Scanned {
    let mut operands = OperandCounts::default();
    let mut name_keys = Some(Vec::with_capacity(c.instructions.len()));
    let mut call_sites = Vec::new();
    for i in &c.instructions {
        operands.add(i);
        if let Some(keys) = &mut name_keys {
            match names::name_key(c, i) {
                Some(key) => keys.push(key),
                None => name_keys = None,
            }
        }
        if order && !i.called.is_empty() {
            let callees = post_order::callees(module, i);
            if !callees.is_empty() {
                call_sites.push(callees);
            }
        }
    }
    Scanned {
        operands,
        name_keys,
        call_sites,
    }
}
