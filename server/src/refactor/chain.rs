//! Finding chains of layout ops (reshape, bitcast, transpose) in a computation.
//!
//! A chain is a run `source -> m1 -> m2 -> ... -> mk` where every member is a layout
//! op and every member but the last is used exactly once, by the next member, and is
//! not the computation's root. Only then can the intermediates be deleted without
//! changing any other instruction. Chains are maximal here; [`super::diagnostics`]
//! looks for the best windows inside them.

use std::collections::HashSet;

use crate::model::{ArrayShape, Computation, InstrId, Instruction, Opcode, Shape};

/// A maximal chain: `members` in data-flow order, `source` the first member's operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub source: InstrId,
    pub members: Vec<InstrId>,
}

impl Chain {
    /// The window `members[start..end]` as a chain of its own (its source is the
    /// member before it, or the chain's source).
    pub fn window(&self, start: usize, end: usize) -> Chain {
        Chain {
            source: if start == 0 {
                self.source
            } else {
                self.members[start - 1]
            },
            members: self.members[start..end].to_vec(),
        }
    }

    pub fn last(&self) -> InstrId {
        *self.members.last().expect("a chain has members")
    }
}

/// The opcodes whose output-to-input map is a pure re-indexing of one operand.
pub fn is_layout_op(op: &Opcode) -> bool {
    matches!(op, Opcode::Reshape | Opcode::Bitcast | Opcode::Transpose)
}

/// A static array shape (no dynamic dimensions): the only ones with exact maps.
pub fn static_array(shape: &Shape) -> Option<&ArrayShape> {
    shape
        .as_array()
        .filter(|a| !a.has_dynamic() && a.dims.iter().all(|&d| d >= 0))
}

/// Names that `control-predecessors={...}` attributes of `c` mention: deleting or
/// bypassing such an instruction would drop an ordering constraint, so they never
/// join a chain.
pub fn control_dependency_names(text: &str, c: &Computation) -> HashSet<String> {
    let mut names = HashSet::new();
    for instr in &c.instructions {
        for attr in instr
            .attributes
            .iter()
            .filter(|a| a.name == "control-predecessors")
        {
            let value = text.get(attr.value_range.range()).unwrap_or("");
            for name in value.split([',', '{', '}']) {
                let name = name.trim().trim_start_matches('%');
                if !name.is_empty() {
                    names.insert(name.to_string());
                }
            }
            // The instruction carrying the constraint must stay as well.
            names.insert(instr.name.to_string());
        }
    }
    names
}

/// Whether `instr` can be a chain member: a layout op written out in the text, on a
/// static array of the same element type as its (named, static) operand.
fn is_member(c: &Computation, instr: &Instruction, pinned: &HashSet<String>) -> bool {
    if !is_layout_op(&instr.opcode) || instr.synthetic || pinned.contains(&*instr.name) {
        return false;
    }
    let [operand] = instr.operands.as_slice() else {
        return false;
    };
    let (Some(target), Some(_)) = (operand.target, operand.name_range()) else {
        return false;
    };
    let source = c.instruction(target);
    match (static_array(&instr.shape), static_array(&source.shape)) {
        (Some(out), Some(input)) => {
            !source.synthetic
                && out.element == input.element
                && (instr.opcode != Opcode::Bitcast || (plain_layout(out) && plain_layout(input)))
        }
        _ => false,
    }
}

/// A layout that is only a dimension order: no tiles (`T(8,128)`), element size
/// (`E(4)`) or other items. The analysis' bitcast map models exactly those; a tiled
/// buffer is reinterpreted differently, so such bitcasts never join a chain.
pub fn plain_layout(a: &ArrayShape) -> bool {
    a.layout.as_ref().is_none_or(|l| {
        l.tiles.is_empty() && l.element_size_in_bits.is_none() && l.extra.trim().is_empty()
    })
}

/// Whether `instr` is the computation's root (marked `ROOT`, or the last one).
pub fn is_root(c: &Computation, instr: &Instruction) -> bool {
    instr.is_root || c.root == Some(instr.id)
}

/// The member that continues the chain after `instr`, if `instr` may be an
/// intermediate: its only use is by a member, and it is not the root.
fn next_member(c: &Computation, instr: &Instruction, pinned: &HashSet<String>) -> Option<InstrId> {
    let [user] = c.users(instr.id) else {
        return None;
    };
    let next = c.instruction(*user);
    (!is_root(c, instr) && is_member(c, next, pinned)).then_some(*user)
}

/// Every maximal chain of `c` (single layout ops included: a chain of length 1).
pub fn maximal_chains(text: &str, c: &Computation) -> Vec<Chain> {
    let pinned = control_dependency_names(text, c);
    let mut chains = Vec::new();
    for instr in &c.instructions {
        if !is_member(c, instr, &pinned) {
            continue;
        }
        let source = instr.operands[0].target.expect("members have targets");
        let src = c.instruction(source);
        if is_member(c, src, &pinned) && next_member(c, src, &pinned) == Some(instr.id) {
            continue; // not the start of a maximal chain
        }
        let mut members = vec![instr.id];
        let mut current = instr;
        while let Some(next) = next_member(c, current, &pinned) {
            members.push(next);
            current = c.instruction(next);
        }
        chains.push(Chain { source, members });
    }
    chains
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_hlo;

    fn chains_of(text: &str) -> Vec<Vec<String>> {
        let file = parse_hlo(text);
        let m = &file.modules[0];
        let c = m.computation(m.entry.expect("entry"));
        maximal_chains(c.text, c.model())
            .iter()
            .map(|ch| {
                std::iter::once(ch.source)
                    .chain(ch.members.iter().copied())
                    .map(|id| c.instruction(id).name.to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_chain_stops_at_a_second_user_and_at_the_root() {
        let text = "ENTRY e {\n  p = f32[4,6] parameter(0)\n  a = f32[24] reshape(p)\n  \
                    b = f32[6,4] reshape(a)\n  c = f32[4,6] transpose(b), dimensions={1,0}\n  \
                    d = f32[24] reshape(c)\n  n = f32[24] negate(c)\n  \
                    ROOT t = (f32[24], f32[24]) tuple(d, n)\n}\n";
        // c has two users: the chain a-b-c ends there, d starts a new one from c.
        assert_eq!(
            chains_of(text),
            vec![vec!["p", "a", "b", "c"], vec!["c", "d"]]
        );
    }

    #[test]
    fn control_predecessors_pin_instructions() {
        let text = "ENTRY e {\n  p = f32[4,6] parameter(0)\n  a = f32[24] reshape(p)\n  \
                    b = f32[4,6] reshape(a)\n  ROOT n = f32[4,6] negate(b), control-predecessors={a}\n}\n";
        assert_eq!(chains_of(text), vec![vec!["a", "b"]]);
    }

    #[test]
    fn tiled_bitcasts_are_not_members() {
        let text = "ENTRY e {\n  p = f32[8,128]{1,0:T(8,128)} parameter(0)\n  \
                    a = f32[1024]{0} bitcast(p)\n  ROOT b = f32[8,128] reshape(a)\n}\n";
        assert_eq!(chains_of(text), vec![vec!["a", "b"]]);
    }

    #[test]
    fn element_type_changes_end_chains() {
        let text = "ENTRY e {\n  p = f32[4] parameter(0)\n  a = s32[4] bitcast(p)\n  \
                    ROOT b = s32[2,2] reshape(a)\n}\n";
        assert_eq!(chains_of(text), vec![vec!["a", "b"]]);
    }
}
