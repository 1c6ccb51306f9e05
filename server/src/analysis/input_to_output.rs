//! Input-to-output indexing of any instruction, composing forward through fused
//! computations: from a fusion parameter through its users to the root (per
//! fusion output). XLA only offers this for single ops and epilogues; the
//! forward composition is the same algebra in the other direction.

use super::build::identity;
use super::compose::{compose, resolve_sources};
use super::fusion::Reached;
use super::graph::Module;
use super::operand_indexing::{InstructionIndexing, OperandIndexing, OperandMap, RuntimeSource};
use super::ops;
use super::unknown::Unknown;

fn source(module: &Module, comp: usize, node: usize, k: usize) -> RuntimeSource {
    let c = module.computation(comp);
    match c.nodes[node].operands.get(k) {
        Some(&operand) => RuntimeSource::Instruction {
            computation: comp,
            instruction: operand,
            label: c.nodes[operand].label(),
        },
        None => RuntimeSource::Operand(k),
    }
}

/// Input-to-output indexing of operand `operand_id` of `node`: one entry per output.
pub fn input_to_output(
    module: &Module,
    comp: usize,
    node: usize,
    operand_id: usize,
) -> InstructionIndexing {
    let n = &module.computation(comp).nodes[node];
    if n.is_composite() {
        let called = n.called[0];
        let outputs = n.op.shape.output_count();
        return super::nesting::enter(module, called, || {
            fused_input_to_output(module, called, operand_id)
        })
        .unwrap_or_else(|reason| InstructionIndexing::all_unknown(outputs, &reason));
    }
    let mut indexing = ops::input_to_output(&n.op, operand_id);
    for entry in &mut indexing.entries {
        for m in &mut entry.maps {
            resolve_sources(m, &|k| source(module, comp, node, k));
        }
    }
    indexing
}

/// Maps from parameter `number` of the fused computation `comp` to each output.
pub fn fused_input_to_output(module: &Module, comp: usize, number: usize) -> InstructionIndexing {
    let c = module.computation(comp);
    let outputs = c
        .nodes
        .get(c.root)
        .map(|r| r.op.shape.output_count())
        .unwrap_or(0);
    let Some(param) = c.parameter(number) else {
        return InstructionIndexing::all_unknown(
            outputs,
            &Unknown::malformed("the fusion has no such parameter"),
        );
    };
    let mut reached = vec![Reached::default(); c.nodes.len()];
    let Some(shape) = c.nodes[param].op.shape.as_array() else {
        return InstructionIndexing::all_unknown(
            outputs,
            &Unknown::not_modelled("tuple-shaped parameters are not mapped"),
        );
    };
    reached[param]
        .maps
        .push((0, OperandMap::plain(identity(&shape.dims))));
    let mut users: Vec<Vec<(usize, usize)>> = vec![vec![]; c.nodes.len()];
    for (u, node) in c.nodes.iter().enumerate() {
        for (k, &v) in node.operands.iter().enumerate() {
            if v < c.nodes.len() {
                users[v].push((u, k));
            }
        }
    }
    let order = c.post_order_from(c.root);
    for (done, &v) in order.iter().enumerate() {
        if crate::budget::exhausted() {
            for &w in &order[done..] {
                mark(&mut reached[w], &Unknown::Stopped);
            }
            break;
        }
        if reached[v].maps.is_empty() && reached[v].unknown.is_none() {
            continue;
        }
        let from = reached[v].clone();
        for &(u, k) in &users[v] {
            let user = &c.nodes[u];
            let gte_index = (user.op.opcode == "get-tuple-element").then(|| {
                user.op
                    .attrs
                    .tuple_index
                    .and_then(|i| usize::try_from(i).ok())
                    .unwrap_or(0)
            });
            let q = input_to_output(module, comp, u, k);
            for (j, entry) in q.entries.iter().enumerate() {
                for (o, m) in &from.maps {
                    if gte_index.is_some_and(|g| g != *o) {
                        continue;
                    }
                    for p in &entry.maps {
                        match compose(m, p, &|kk| source(module, comp, u, kk), module) {
                            Ok(cm) => insert(&mut reached[u], j, cm),
                            Err(reason) => mark(&mut reached[u], &reason),
                        }
                    }
                }
                if let Some(reason) = &entry.unknown {
                    mark(&mut reached[u], reason);
                }
            }
            if let Some(reason) = &from.unknown {
                mark(&mut reached[u], reason);
            }
        }
    }
    let root = &c.nodes[c.root];
    let entries = (0..outputs)
        .map(|j| {
            let (node, out) = if root.op.opcode == "tuple" {
                (root.operands.get(j).copied().unwrap_or(usize::MAX), 0)
            } else {
                (c.root, j)
            };
            let mut e = OperandIndexing::none();
            if node >= c.nodes.len() {
                // The tuple names an undefined operand, or has fewer than its shape.
                e.mark_unknown(Unknown::malformed("the root tuple has no such operand"));
                return e;
            }
            for (o, m) in &reached[node].maps {
                if *o == out {
                    e.insert(m.clone());
                }
            }
            if let Some(r) = &reached[node].unknown {
                e.mark_unknown(r.clone());
            }
            e
        })
        .collect();
    InstructionIndexing { entries }
}

fn insert(r: &mut Reached, output: usize, m: OperandMap) {
    if !r.maps.iter().any(|(o, x)| *o == output && *x == m) {
        r.maps.push((output, m));
    }
}

fn mark(r: &mut Reached, reason: &Unknown) {
    if r.unknown.is_none() {
        r.unknown = Some(reason.clone());
    }
}
