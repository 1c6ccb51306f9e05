//! Composition of operand maps (consumer `out -> x` then producer `x -> y`),
//! carrying runtime variables and replica ids along, then simplifying: XLA's
//! `ComposeIndexingMaps` followed by its runtime-variable optimizations.

use super::graph::Module;
use super::operand_indexing::{OperandMap, RuntimeSource, RuntimeVar};
use crate::algebra::{Expr, IndexingMap, Interval, VarKind};
use crate::analysis::unknown::Unknown;

/// Composes `consumer` with `producer`. The composed map's runtime variables are
/// the producer's (their maps now start from the consumer's index space) followed
/// by the consumer's, as the algebra orders symbols. `resolve` turns a per-op
/// `Operand(k)` source into the instruction it names.
pub fn compose(
    consumer: &OperandMap,
    producer: &OperandMap,
    resolve: &dyn Fn(usize) -> RuntimeSource,
    module: &Module,
) -> Result<OperandMap, Unknown> {
    // Without runtime variables or replicas the answer is a function of the two
    // maps: made once for every fusion that composes them (most of a fused
    // computation's time was composing the same pairs again).
    if super::compositions::keyable(consumer, producer) {
        return super::compositions::composed(consumer, producer, || {
            compose_fresh(consumer, producer, resolve, module)
        });
    }
    compose_fresh(consumer, producer, resolve, module)
}

/// [`compose`], computed again (not looked up in [`super::compositions`]).
pub fn compose_fresh(
    consumer: &OperandMap,
    producer: &OperandMap,
    resolve: &dyn Fn(usize) -> RuntimeSource,
    module: &Module,
) -> Result<OperandMap, Unknown> {
    if consumer.map.is_undefined() || producer.map.is_undefined() {
        return Err(Unknown::no_indexing("undefined indexing map"));
    }
    let nodes = composed_nodes(&consumer.map, &producer.map);
    if nodes > MAX_COMPOSED_NODES {
        return Err(Unknown::TooLarge {
            nodes,
            limit: MAX_COMPOSED_NODES,
        });
    }
    let mut map = consumer.map.compose(&producer.map);
    let mut runtime_vars: Vec<RuntimeVar> = producer
        .runtime_vars
        .iter()
        .map(|rt| {
            let mut m = consumer.map.compose(&rt.map);
            m.simplify();
            let source = match &rt.source {
                RuntimeSource::Operand(k) => resolve(*k),
                other => other.clone(),
            };
            RuntimeVar { source, map: m }
        })
        .collect();
    runtime_vars.extend(consumer.runtime_vars.iter().cloned());
    let replica_id = match (&consumer.replica_id, &producer.replica_id) {
        (Some(_), Some(_)) => {
            return Err(Unknown::not_modelled(
                "chained collectives: two replica ids",
            ))
        }
        (Some(r), None) => Some(r.clone()),
        (None, Some(r)) => {
            let mut m = consumer.map.compose(r);
            m.simplify();
            Some(m)
        }
        (None, None) => None,
    };
    map.simplify();
    let mut result = OperandMap {
        map,
        runtime_vars,
        replica_id,
    };
    fold_runtime_vars(&mut result, module);
    prune_runtime_vars(&mut result);
    result.map.remove_unused_symbols();
    Ok(result)
}

/// The largest composed map built, in expression nodes. Composition substitutes
/// the consumer's results for the producer's dimensions; when the simplifier
/// cannot shrink the outcome (a chain of reshapes between shapes with unrelated
/// factors), each step multiplies the size, and fifty steps reached 23 GB, every
/// copy or walk of such a map running longer than any time budget can cut.
/// Real maps have a few hundred nodes at most.
pub const MAX_COMPOSED_NODES: usize = 50_000;

/// How many expression nodes `consumer.compose(producer)` holds, counted without
/// building it: each use of a producer dimension becomes a copy of the
/// consumer's result for it, which also bounds that dimension (one constraint).
pub fn composed_nodes(consumer: &IndexingMap, producer: &IndexingMap) -> usize {
    let sizes: Vec<usize> = consumer.results().iter().map(Expr::node_count).collect();
    let substituted = |e: &Expr| {
        let mut nodes = e.node_count();
        e.for_each_var(&mut |v| {
            if v.kind == VarKind::Dim {
                let grown = sizes.get(v.index).map_or(0, |s| s - 1);
                nodes = nodes.saturating_add(grown);
            }
        });
        nodes
    };
    let producer_side = producer
        .results()
        .iter()
        .chain(producer.constraints().iter().map(|(e, _)| e))
        .map(substituted);
    let consumer_side = consumer
        .constraints()
        .iter()
        .map(|(e, _)| e.node_count())
        .chain(sizes.iter().copied());
    producer_side
        .chain(consumer_side)
        .fold(0usize, usize::saturating_add)
}

/// Resolves per-op `Operand(k)` sources of an op's own maps (unfused use).
pub fn resolve_sources(m: &mut OperandMap, resolve: &dyn Fn(usize) -> RuntimeSource) {
    for rt in &mut m.runtime_vars {
        if let RuntimeSource::Operand(k) = rt.source {
            rt.source = resolve(k);
        }
    }
}

/// Replaces runtime variables whose value is known statically: an integer
/// constant inside the variable's range (XLA keeps out-of-range ones), or an iota
/// read through a map without symbols (clamped to the range, because the
/// consumers clamp their offsets; XLA omits the clamp).
fn fold_runtime_vars(m: &mut OperandMap, module: &Module) {
    let mut i = 0;
    while i < m.runtime_vars.len() && i < m.map.runtime_vars().len() {
        let bounds = m.map.runtime_vars()[i].bounds;
        let value = match &m.runtime_vars[i].source {
            RuntimeSource::Instruction {
                computation,
                instruction,
                ..
            } => static_value(
                module,
                *computation,
                *instruction,
                &m.runtime_vars[i].map,
                bounds,
                &m.map,
            ),
            RuntimeSource::Operand(_) => None,
        };
        match value {
            Some(e) => {
                m.map = substitute_runtime(&m.map, i, Some(e));
                m.runtime_vars.remove(i);
                m.map.simplify();
                if m.map.is_known_empty() {
                    m.runtime_vars.clear();
                }
            }
            None => i += 1,
        }
    }
}

fn static_value(
    module: &Module,
    comp: usize,
    node: usize,
    rt_map: &IndexingMap,
    bounds: Interval,
    main: &IndexingMap,
) -> Option<Expr> {
    let n = module.get(comp)?.nodes.get(node)?;
    if let Some(v) = n.constant_scalar {
        return bounds.contains(v).then(|| Expr::constant(v));
    }
    if n.op.opcode == "iota" && rt_map.range_vars().is_empty() && rt_map.runtime_vars().is_empty() {
        let dim = usize::try_from(n.op.attrs.iota_dimension?).ok()?;
        if rt_map.dims().len() != main.dims().len() || !rt_map.constraints().is_empty() {
            return None;
        }
        let e = rt_map.results().get(dim)?.clone();
        let range = rt_map.range_of(&e);
        if bounds.contains_interval(&range) {
            return Some(e);
        }
        return Some(
            e.max(Expr::constant(bounds.lo))
                .min(Expr::constant(bounds.hi)),
        );
    }
    None
}

/// Drops runtime variables no result or constraint uses, keeping the list of
/// their meanings in step.
fn prune_runtime_vars(m: &mut OperandMap) {
    let mut i = 0;
    while i < m.runtime_vars.len() && i < m.map.runtime_vars().len() {
        let var = Expr::runtime(i);
        let used = m.map.results().iter().any(|e| uses(e, &var))
            || m.map.constraints().iter().any(|(e, _)| uses(e, &var));
        if used {
            i += 1;
        } else {
            m.map = substitute_runtime(&m.map, i, None);
            m.runtime_vars.remove(i);
        }
    }
}

fn uses(e: &Expr, var: &Expr) -> bool {
    match var.as_var() {
        Some(v) => e.uses_var(v),
        None => false,
    }
}

/// Removes runtime variable `i`, replacing it by `value` (or leaving uses of it
/// dangling as 0 when `value` is `None`, for unused variables).
pub fn substitute_runtime(map: &IndexingMap, i: usize, value: Option<Expr>) -> IndexingMap {
    let dims: Vec<Expr> = (0..map.dims().len()).map(Expr::dim).collect();
    let ranges: Vec<Expr> = (0..map.range_vars().len()).map(Expr::range).collect();
    let runtimes: Vec<Expr> = (0..map.runtime_vars().len())
        .map(|j| match j.cmp(&i) {
            std::cmp::Ordering::Less => Expr::runtime(j),
            std::cmp::Ordering::Equal => value.clone().unwrap_or_else(|| Expr::constant(0)),
            std::cmp::Ordering::Greater => Expr::runtime(j - 1),
        })
        .collect();
    let mut rt_vars = map.runtime_vars().to_vec();
    rt_vars.remove(i);
    let results = map
        .results()
        .iter()
        .map(|e| e.replace_vars(&dims, &ranges, &runtimes))
        .collect();
    let constraints = map
        .constraints()
        .iter()
        .map(|(e, r)| (e.replace_vars(&dims, &ranges, &runtimes), *r))
        .collect();
    IndexingMap::new(
        map.dims().to_vec(),
        map.range_vars().to_vec(),
        rt_vars,
        results,
        constraints,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> IndexingMap {
        IndexingMap::parse(text).unwrap()
    }

    fn nodes(map: &IndexingMap) -> usize {
        map.results()
            .iter()
            .chain(map.constraints().iter().map(|(e, _)| e))
            .map(Expr::node_count)
            .sum()
    }

    #[test]
    fn the_size_of_a_composition_is_known_before_it_is_built() {
        let maps = [
            "(d0, d1) -> (d0 * 35 + d1), domain: d0 in [0, 5], d1 in [0, 34]",
            "(d0) -> (d0 floordiv 21, d0 mod 21), domain: d0 in [0, 209]",
            "(d0, d1) -> (d1, d0 + d1 * 2, d0 mod 3), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 in [0, 12]",
            "(d0, d1, d2)[s0] -> (d0 + s0, d1 * d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9], s0 in [0, 3]",
            "(d0, d1) -> (d0, d1, d0 + d1), domain: d0 in [0, 9], d1 in [0, 9]",
            "(d0, d1, d2) -> (d2 floordiv 2, d0 * 2 + d1), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        ];
        let maps: Vec<IndexingMap> = maps.iter().map(|m| parse(m)).collect();
        let mut checked = 0;
        for consumer in &maps {
            for producer in &maps {
                if consumer.results().len() != producer.dims().len() {
                    continue;
                }
                // Built without simplification: exactly what composition makes,
                // give or take constraints merged into variable bounds.
                let built = consumer.compose(producer);
                let estimate = composed_nodes(consumer, producer);
                assert!(estimate >= nodes(&built), "{consumer} ∘ {producer}");
                // A bound on one variable folds into its range: a node or two less.
                let slack = 2 * producer.dims().len();
                assert!(
                    estimate <= nodes(&built) + slack,
                    "{consumer} ∘ {producer}: {estimate} vs {}",
                    nodes(&built)
                );
                checked += 1;
            }
        }
        assert!(checked >= 8, "{checked}");
    }
}
