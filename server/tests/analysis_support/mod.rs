//! Shared helpers of the analysis tests: enumerate index spaces and evaluate
//! operand maps at concrete points (with runtime variables read from concrete
//! tensors), so that maps can be compared with brute-force references.

#![allow(dead_code)]

use std::collections::BTreeSet;

use hlo_lsp::algebra::{DivSpelling, IndexingMap, PrintOptions};
use hlo_lsp::analysis::fusion::grouped_from_every_output;
use hlo_lsp::analysis::{
    analyze, Direction, Module, OperandIndexing, OperandMap, Query, RuntimeSource,
};

/// Every index of a tensor with these extents, row-major.
pub fn indices(extents: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![];
    if extents.iter().any(|&n| n <= 0) {
        return out;
    }
    let mut idx = vec![0i64; extents.len()];
    loop {
        out.push(idx.clone());
        let mut k = extents.len();
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < extents[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

pub fn in_bounds(idx: &[i64], extents: &[i64]) -> bool {
    idx.len() == extents.len() && idx.iter().zip(extents).all(|(&i, &n)| 0 <= i && i < n)
}

/// Row-major linear position.
pub fn linear(idx: &[i64], extents: &[i64]) -> usize {
    idx.iter()
        .zip(extents)
        .fold(0usize, |acc, (&i, &n)| acc * n as usize + i as usize)
}

/// A concrete tensor for runtime values (row-major).
#[derive(Clone, Debug)]
pub struct Tensor {
    pub dims: Vec<i64>,
    pub values: Vec<i64>,
}

impl Tensor {
    pub fn at(&self, idx: &[i64]) -> Option<i64> {
        in_bounds(idx, &self.dims).then(|| self.values[linear(idx, &self.dims)])
    }
}

/// How a runtime variable's value is derived from its source element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeRule {
    /// The op clamps the value into the variable's range (dynamic-slice, gather).
    Clamp,
    /// Out-of-range values fall outside the domain (scatter skips the update).
    Raw,
}

/// Elements of an operand with `extents` that map `m` reads from output index
/// `out` (range variables enumerated, runtime variables from `tensors`).
pub fn reads_of(
    m: &OperandMap,
    out: &[i64],
    extents: &[i64],
    tensors: &[Option<Tensor>],
    rule: RuntimeRule,
) -> BTreeSet<Vec<i64>> {
    let mut set = BTreeSet::new();
    let map = &m.map;
    if map.is_known_empty() {
        return set;
    }
    assert!(!map.is_undefined(), "undefined map");
    let ranges: Vec<i64> = map
        .range_vars()
        .iter()
        .map(|v| v.bounds.hi - v.bounds.lo + 1)
        .collect();
    let lows: Vec<i64> = map.range_vars().iter().map(|v| v.bounds.lo).collect();
    for r in indices(&ranges) {
        let r: Vec<i64> = r.iter().zip(&lows).map(|(a, b)| a + b).collect();
        let mut rts = vec![];
        let mut ok = true;
        for (i, rt) in m.runtime_vars.iter().enumerate() {
            let k = match rt.source {
                RuntimeSource::Operand(k) => k,
                _ => panic!("unresolved runtime source in a per-op map"),
            };
            let nr = rt.map.range_vars().len();
            let idx = rt
                .map
                .evaluate_at(out, &r[..nr.min(r.len())], &[])
                .expect("runtime map evaluates");
            let Some(value) = tensors[k].as_ref().and_then(|t| t.at(&idx)) else {
                ok = false;
                break;
            };
            let b = map.runtime_vars()[i].bounds;
            rts.push(match rule {
                RuntimeRule::Clamp => value.clamp(b.lo, b.hi),
                RuntimeRule::Raw => value,
            });
        }
        if !ok || !map.contains_point(out, &r, &rts) {
            continue;
        }
        if let Some(idx) = map.evaluate_at(out, &r, &rts) {
            if in_bounds(&idx, extents) {
                set.insert(idx);
            }
        }
    }
    set
}

/// Union of [`reads_of`] over every map of an entry.
pub fn entry_reads(
    e: &OperandIndexing,
    out: &[i64],
    extents: &[i64],
    tensors: &[Option<Tensor>],
    rule: RuntimeRule,
) -> BTreeSet<Vec<i64>> {
    assert!(e.unknown.is_none(), "unknown indexing: {:?}", e.unknown);
    let mut set = BTreeSet::new();
    for m in &e.maps {
        set.extend(reads_of(m, out, extents, tensors, rule));
    }
    set
}

/// True when the map's domain holds `out` for some range values (used where the
/// reference says "reads nothing" to tell it apart from "not in the domain").
pub fn plain_reads(map: &IndexingMap, out: &[i64], extents: &[i64]) -> BTreeSet<Vec<i64>> {
    reads_of(
        &OperandMap::plain(map.clone()),
        out,
        extents,
        &[],
        RuntimeRule::Raw,
    )
}

/// Checks that `map` declares what it uses and reads back equal in every spelling.
pub fn check_round_trip(map: &IndexingMap, context: &str) -> Result<(), String> {
    if map.is_undefined() || map.is_known_empty() {
        return Ok(());
    }
    if let Some(v) = map.undeclared_variable() {
        return Err(format!(
            "{context}: map uses undeclared {v:?}:\n{}",
            map.print(&PrintOptions::default())
        ));
    }
    for div in [DivSpelling::FloorDiv, DivSpelling::Slash] {
        for multiline in [true, false] {
            let text = map.print(&PrintOptions { div, multiline });
            let back = IndexingMap::parse(&text)
                .map_err(|e| format!("{context}: printed map does not parse ({e:?}):\n{text}"))?;
            if !back.equivalent(map) {
                return Err(format!(
                    "{context}: printed map reads back different:\n{text}\nread back as:\n{}",
                    back.print(&PrintOptions::default())
                ));
            }
        }
    }
    Ok(())
}

/// Every map an operand map prints: its own, its runtime variables', its replica id's.
pub fn printed_maps(m: &OperandMap) -> impl Iterator<Item = &IndexingMap> {
    std::iter::once(&m.map)
        .chain(m.runtime_vars.iter().map(|rt| &rt.map))
        .chain(m.replica_id.iter())
}

/// Every map the analysis gives for `module`, with a label saying where it came from.
pub fn every_map(module: &Module, file: &str, out: &mut Vec<(String, OperandMap)>) {
    for c in 0..module.len() {
        let comp = module.computation(c);
        for (i, node) in comp.nodes.iter().enumerate() {
            let at = format!("{file} {}/{}", comp.name, node.name);
            for physical_layout in [false, true] {
                let outputs = node.op.shape.output_count().max(1);
                let queries = (0..outputs)
                    .map(|k| (Direction::OutputToInput, k, 0))
                    .chain((0..node.op.operands.len()).map(|k| (Direction::InputToOutput, 0, k)));
                for (direction, output_id, operand_id) in queries {
                    let q = Query {
                        computation: c,
                        instruction: i,
                        direction,
                        output_id,
                        operand_id,
                        physical_layout,
                    };
                    for entry in analyze(module, &q).entries {
                        for m in entry.maps {
                            out.push((format!("{at} {direction:?} {output_id}/{operand_id}"), m));
                        }
                    }
                }
            }
        }
        for (k, reached) in grouped_from_every_output(module, c).into_iter().enumerate() {
            for (i, r) in reached.into_iter().enumerate() {
                for (_, m) in r.maps {
                    let at = format!("{file} {} output {k} -> {}", comp.name, comp.nodes[i].name);
                    out.push((at, m));
                }
            }
        }
    }
}

/// `text` with `suffix` appended to every `%name` (computations and instructions),
/// so that a renamed copy of a module's computations can sit beside the original.
pub fn renamed(text: &str, suffix: &str) -> String {
    let mut out = String::with_capacity(text.len() * 11 / 10);
    let mut in_name = false;
    for ch in text.chars() {
        let name_char = ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '-');
        if in_name && !name_char {
            out.push_str(suffix);
            in_name = false;
        }
        in_name |= ch == '%';
        out.push(ch);
    }
    if in_name {
        out.push_str(suffix);
    }
    out
}
