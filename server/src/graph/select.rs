//! Which instructions of a computation a graph shows: those within N hops of an
//! instruction (operands and users alike), or all of them, closest first, up to a
//! cap. A get-tuple-element is no hop of its own: it is folded into the edges
//! from the tuple's producer to its users.

use rustc_hash::FxHashSet;

use crate::model::{Computation, InstrId, Instruction};

/// Whether `i` is a get-tuple-element the graph folds into its edges (its operand
/// resolves; an unresolved one stays a node).
pub fn is_folded(i: &Instruction) -> bool {
    i.opcode.name() == "get-tuple-element" && i.operands.first().is_some_and(|o| o.target.is_some())
}

/// The producer operand `k` of `i` reads, through folded get-tuple-elements, and
/// the tuple indices on the way (outermost first: `[1, 0]` reads `x{1}{0}`).
pub fn producer(c: &Computation, i: &Instruction, k: usize) -> Option<(InstrId, Vec<usize>)> {
    let mut id = i.operands.get(k)?.target?;
    let mut path = Vec::new();
    // A cycle of get-tuple-elements (broken input) ends after one lap.
    for _ in 0..=c.instructions.len() {
        let p = c.instructions.get(id.index())?;
        if !is_folded(p) {
            path.reverse();
            return Some((id, path));
        }
        let index = p.attrs().tuple_index.unwrap_or(0);
        path.push(usize::try_from(index).unwrap_or(0));
        id = p.operands[0].target?;
    }
    None
}

/// The instructions that read `id`, through folded get-tuple-elements (each once).
pub fn users(c: &Computation, id: InstrId) -> Vec<InstrId> {
    let mut out = Vec::new();
    let mut stack = vec![id];
    // A set: a parameter of a large module may have thousands of users.
    let mut seen: FxHashSet<InstrId> = std::iter::once(id).collect();
    while let Some(at) = stack.pop() {
        let Some(i) = c.instructions.get(at.index()) else {
            continue;
        };
        for &u in c.users(i.id) {
            if !seen.insert(u) {
                continue;
            }
            match c.instructions.get(u.index()) {
                Some(user) if is_folded(user) => stack.push(u),
                Some(_) => out.push(u),
                None => {}
            }
        }
    }
    out
}

/// The distinct producers `i` reads (through folded get-tuple-elements).
pub fn producers(c: &Computation, i: &Instruction) -> Vec<InstrId> {
    let mut seen = FxHashSet::default();
    (0..i.operands.len())
        .filter_map(|k| producer(c, i, k))
        .map(|(p, _)| p)
        .filter(|p| seen.insert(*p))
        .collect()
}

/// Every instruction that is not folded reached from `starts` within `radius`
/// hops (all of them with `None`), breadth first, at most `cap`.
pub fn reach(
    c: &Computation,
    starts: &[InstrId],
    radius: Option<usize>,
    cap: usize,
) -> Vec<InstrId> {
    let mut seen = vec![false; c.instructions.len()];
    let mut out = Vec::new();
    reach_into(c, starts, radius, cap, &mut seen, &mut out);
    out
}

/// [`reach`], appending to `out` what `seen` does not hold yet, until `out` holds `cap`.
fn reach_into(
    c: &Computation,
    starts: &[InstrId],
    radius: Option<usize>,
    cap: usize,
    seen: &mut [bool],
    out: &mut Vec<InstrId>,
) {
    let mut frontier = Vec::new();
    for &s in starts {
        if s.index() < seen.len() && !seen[s.index()] && out.len() < cap {
            seen[s.index()] = true;
            out.push(s);
            frontier.push(s);
        }
    }
    let mut hops = 0;
    while !frontier.is_empty() && out.len() < cap && radius.is_none_or(|r| hops < r) {
        hops += 1;
        let mut next = Vec::new();
        for &at in &frontier {
            let i = &c.instructions[at.index()];
            for n in producers(c, i).into_iter().chain(users(c, at)) {
                if out.len() >= cap {
                    return;
                }
                if !seen[n.index()] {
                    seen[n.index()] = true;
                    out.push(n);
                    next.push(n);
                }
            }
        }
        frontier = next;
    }
}

/// The instructions within `radius` hops of `start` (a folded get-tuple-element
/// starts from its producer), at most `cap`.
pub fn around(c: &Computation, start: InstrId, radius: usize, cap: usize) -> Vec<InstrId> {
    reach(c, &[unfolded(c, start)], Some(radius), cap)
}

/// Every instruction of `c` that is not folded, the root's dataflow first, then
/// what it does not reach in text order; at most `cap`.
pub fn whole(c: &Computation, cap: usize) -> Vec<InstrId> {
    let mut seen = vec![false; c.instructions.len()];
    let mut out = Vec::new();
    let rest = c
        .instructions
        .iter()
        .filter(|i| !is_folded(i))
        .map(|i| i.id);
    for s in c.root.map(|r| unfolded(c, r)).into_iter().chain(rest) {
        if out.len() >= cap {
            break;
        }
        reach_into(c, &[s], None, cap, &mut seen, &mut out);
    }
    out
}

/// `id`, or the producer a folded get-tuple-element reads.
pub fn unfolded(c: &Computation, id: InstrId) -> InstrId {
    let i = &c.instructions[id.index()];
    if is_folded(i) {
        producer(c, i, 0).map_or(id, |(p, _)| p)
    } else {
        id
    }
}
