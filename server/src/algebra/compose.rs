//! Composition of indexing maps, as XLA's `ComposeIndexingMaps`.
//!
//! `consumer.compose(&producer)`: the consumer maps `out -> x`, the producer maps
//! `x -> y`; the result maps `out -> y`. Its dimensions are the consumer's; its
//! range variables are the producer's followed by the consumer's, and likewise its
//! runtime variables. The domain keeps both maps' constraints and adds, for every
//! producer dimension, "the consumer's result lies in that dimension's bounds".

use super::expr::Expr;
use super::map::{IndexingMap, MapState};
use super::variable::{Var, VarKind};

impl IndexingMap {
    /// Returns `self ∘ producer` (see the module documentation). UNDEFINED if
    /// either is undefined, KNOWN EMPTY if either is known empty.
    pub fn compose(&self, producer: &IndexingMap) -> IndexingMap {
        if self.is_undefined() || producer.is_undefined() {
            return IndexingMap::undefined();
        }
        if self.is_known_empty() || producer.is_known_empty() {
            return IndexingMap::known_empty(self.dims.len(), producer.results.len());
        }
        if self.results.len() != producer.dims.len() {
            // A shape mismatch is a caller bug; nothing sound can be said.
            return IndexingMap::undefined();
        }
        let p_ranges = producer.range_vars.len();
        let p_runtimes = producer.runtime_vars.len();
        // Consumer symbols move behind the producer's.
        let shift_consumer = |v: Var| match v.kind {
            VarKind::Dim => Expr::Var(v),
            VarKind::Range => Expr::range(p_ranges + v.index),
            VarKind::Runtime => Expr::runtime(p_runtimes + v.index),
        };
        let consumer_results: Vec<Expr> = self
            .results
            .iter()
            .map(|e| e.map_vars(&shift_consumer))
            .collect();
        let substitute_producer = |e: &Expr| e.replace_vars(&consumer_results, &[], &[]);

        let results = producer.results.iter().map(substitute_producer).collect();
        let mut ranges = producer.range_vars.clone();
        ranges.extend(self.range_vars.iter().cloned());
        let mut runtimes = producer.runtime_vars.clone();
        runtimes.extend(self.runtime_vars.iter().cloned());
        let mut composed = IndexingMap {
            state: MapState::Defined,
            dims: self.dims.clone(),
            range_vars: ranges,
            runtime_vars: runtimes,
            results,
            constraints: Vec::new(),
        };
        for (e, r) in &self.constraints {
            composed.add_constraint(e.map_vars(&shift_consumer), *r);
        }
        for (e, r) in &producer.constraints {
            composed.add_constraint(substitute_producer(e), *r);
        }
        for (e, dim) in consumer_results.into_iter().zip(&producer.dims) {
            composed.add_constraint(e, dim.bounds);
        }
        composed
    }
}
