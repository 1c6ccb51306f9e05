//! A computation's text without its names: what tells apart computations that a
//! dump repeats under other names (each layer's fusions, and the benchmark's
//! renamed copies of a whole model). Two computations with equal keys differ at
//! most in the names of the computation and of its instructions and in their
//! metadata, so whatever is computed from their structure (indexing maps,
//! coalescing) is the same for both, up to names it may print.
//!
//! A key is the text itself, names cut out, operands written as the number of the
//! instruction they name: compared whole, it cannot collide. A formatting
//! difference (spacing, `%` or not) makes keys differ; that only costs sharing.

use super::module::{ComputationRef, Instruction, Module, Span};

/// Calls nested deeper than this (a reducer of a nested fusion...) are not keyed.
const MAX_DEPTH: usize = 3;

/// The key of computation `c` and the computations it calls; `None` when a
/// called computation is not found, nests too deep, or has inline operands.
pub fn computation_key(m: &Module, c: ComputationRef) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(c.text.len() / 2);
    write_computation(m, c, 0, &mut out)?;
    Some(out)
}

/// The key of `fusion`, called from computation `caller`: its text without its name, its
/// metadata and its operands' names, which the operands' shapes replace, then
/// the key of each computation it calls. `None` when a called computation is not
/// found, nests too deep, or has inline operands.
pub fn fusion_key(m: &Module, caller: ComputationRef, fusion: &Instruction) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(2048);
    let operand = |out: &mut Vec<u8>, k: usize| {
        use std::io::Write as _;
        let shape = caller.operand_shape(fusion, k)?;
        write!(out, "{shape}").ok()
    };
    write_nameless(caller, fusion, &mut out, operand)?;
    for called in &fusion.called {
        write_computation(m, m.resolve(called)?, 0, &mut out)?;
    }
    Some(out)
}

/// Appends the key of computation `c`: each instruction's text without names or
/// metadata, operands written as the number of the instruction they name, then
/// the keys of the computations it calls.
fn write_computation(m: &Module, c: ComputationRef, depth: usize, out: &mut Vec<u8>) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    out.push(b'{');
    for instruction in &c.instructions {
        if instruction.synthetic {
            return None;
        }
        write_nameless(c, instruction, out, |out, k| {
            let target = instruction.operands[k].target?;
            out.push(b'#');
            out.extend_from_slice(target.index().to_string().as_bytes());
            Some(())
        })?;
        out.push(b'\n');
    }
    out.push(b'}');
    for instruction in &c.instructions {
        for called in &instruction.called {
            write_computation(m, m.resolve(called)?, depth + 1, out)?;
        }
    }
    Some(())
}

/// Appends the text of `instruction` (of computation `c`) without its name, its
/// metadata and the names of the computations it calls; `operand(out, k)` writes
/// what stands for operand `k`'s name.
fn write_nameless(
    c: ComputationRef,
    instruction: &Instruction,
    out: &mut Vec<u8>,
    mut operand: impl FnMut(&mut Vec<u8>, usize) -> Option<()>,
) -> Option<()> {
    // (span, operand number): what is left out or replaced, in text order.
    let mut holes: Vec<(Span, Option<usize>)> = vec![(instruction.name_range, None)];
    for (k, o) in instruction.operands.iter().enumerate() {
        holes.extend(o.name_range().map(|span| (span, Some(k))));
    }
    let text = c.src(instruction.range).as_bytes();
    let base = instruction.range.start;
    for a in &instruction.attributes {
        if a.name == "metadata" {
            // With the comma before it, so that the text reads the same without.
            let at = (a.name_range.start.checked_sub(base)? as usize).min(text.len());
            let kept = text[..at].trim_ascii_end();
            let start = kept.strip_suffix(b",").unwrap_or(kept).len() as u32 + base;
            holes.push((
                Span {
                    start,
                    end: a.value_range.end,
                },
                None,
            ));
        }
    }
    holes.extend(
        instruction
            .called
            .iter()
            .map(|called| (called.name_range, None)),
    );
    holes.sort_unstable_by_key(|(span, _)| span.start);
    let mut at = 0usize;
    for (span, k) in holes {
        let start = span.start.checked_sub(base)? as usize;
        let end = span.end.checked_sub(base)? as usize;
        out.extend_from_slice(text.get(at..start)?);
        if let Some(k) = k {
            operand(out, k)?;
        }
        at = end;
    }
    out.extend_from_slice(text.get(at..)?);
    Some(())
}

/// The names of `c`, of its instructions, and of the computations it calls and
/// theirs: what a result computed from `c` may print that belongs to `c` alone.
pub fn own_names<'m>(m: &'m Module, c: ComputationRef<'m>) -> Vec<&'m str> {
    names(m, c, 0)
}

/// See [`own_names`].
fn names<'m>(m: &'m Module, c: ComputationRef<'m>, depth: usize) -> Vec<&'m str> {
    let instructions = c.model().instructions.iter().map(|i| &*i.name);
    let mut out: Vec<&str> = std::iter::once(c.model().name.as_str())
        .chain(instructions)
        .collect();
    if depth < MAX_DEPTH {
        for called in c.model().instructions.iter().flat_map(|i| &i.called) {
            if let Some(callee) = m.resolve(called) {
                out.extend(names(m, callee, depth + 1));
            }
        }
    }
    out
}
