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
    /// asked for (else empty).
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

/// What a run of computations adds to a [`ModuleScan`]: one per rayon split, so
/// that the five million keys go into a few vectors, not one per computation.
struct Part {
    operands: OperandCounts,
    /// `None` once some name has no key.
    name_keys: Option<Vec<u64>>,
    /// The call sites of each computation of the run that has any, by index.
    call_sites: Vec<(usize, Vec<Vec<usize>>)>,
}

impl Part {
    fn new() -> Part {
        Part {
            operands: OperandCounts::default(),
            name_keys: Some(Vec::new()),
            call_sites: Vec::new(),
        }
    }

    /// Every instruction of `c`, once (its call sites when `order`).
    fn add(&mut self, module: &Module, c: &ComputationRef, order: bool) {
        let mut call_sites = Vec::new();
        for i in &c.instructions {
            self.operands.add(i);
            if let Some(keys) = &mut self.name_keys {
                match names::name_key(c, i) {
                    Some(key) => keys.push(key),
                    None => self.name_keys = None,
                }
            }
            if order && !i.called.is_empty() {
                let callees = post_order::callees(module, i);
                if !callees.is_empty() {
                    call_sites.push(callees);
                }
            }
        }
        if !call_sites.is_empty() {
            self.call_sites.push((c.id.index(), call_sites));
        }
    }
}

impl ModuleScan {
    /// The scan of `module`; without call sites unless `order` (XLA's computation
    /// order is not needed to print some computations alone).
    pub fn of(module: &Module, order: bool) -> ModuleScan {
        let count = module.computation_count();
        let parts: Vec<Part> = (0..count)
            .into_par_iter()
            .fold(Part::new, |mut part, k| {
                part.add(module, &module.computation(ComputationId(k as u32)), order);
                part
            })
            .collect();
        let operands = parts
            .iter()
            .fold(OperandCounts::default(), |n, p| n.plus(p.operands));
        let all_keyed = parts.iter().all(|p| p.name_keys.is_some());
        let name_keys = all_keyed.then(|| {
            // Copied a part at a time: five million keys one by one through a
            // flattening iterator were 4% of formatting a 588 MiB dump.
            let runs = || parts.iter().filter_map(|p| p.name_keys.as_deref());
            let mut keys = Vec::with_capacity(runs().map(<[u64]>::len).sum());
            runs().for_each(|run| keys.extend_from_slice(run));
            keys
        });
        let mut call_sites = if order {
            vec![Vec::new(); count]
        } else {
            Vec::new()
        };
        for (k, sites) in parts.into_iter().flat_map(|p| p.call_sites) {
            call_sites[k] = sites;
        }
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
