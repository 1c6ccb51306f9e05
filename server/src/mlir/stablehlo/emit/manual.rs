//! Shardy's `sdy.manual_computation` (what `jax.shard_map` lowers to), as XLA's
//! Shardy export writes it (`xla/service/spmd/shardy/stablehlo_round_trip/
//! export_manual_axes` / `sdy_round_trip_shard_map_export`): each operand goes
//! through a `custom-call` to `xla.sdy.GlobalToLocalShape` (the global array to
//! the shard a device holds), the body is a computation `call`ed on those shards,
//! and its result comes back through `xla.sdy.LocalToGlobalShape`. So the body's
//! ops are written on per-shard shapes (its block arguments' types) and their
//! maps are those of one shard; the op itself, the custom-calls, has no static
//! maps (which shard a device holds is the device's id).

use super::{Emitter, Instr, Scope};
use crate::mlir::stablehlo::{sharding, types};

impl Emitter<'_> {
    /// Fills `instr` as the `LocalToGlobalShape` custom-call of the manual
    /// computation `o`, writing the `GlobalToLocalShape` custom-calls and the
    /// body's `call` before it.
    pub(super) fn manual_computation(
        &mut self,
        o: usize,
        instr: &mut Instr,
        scope: &mut Scope,
    ) -> bool {
        let Some(&region) = self.file.ops[o].regions.first() else {
            return false;
        };
        let params = self.region_args(region);
        if params.len() != instr.operands.len() {
            return false;
        }
        let mut locals = Vec::new();
        for (k, (&p, global)) in params.iter().zip(&instr.operands).enumerate() {
            let shape = self.file.values[p]
                .ty
                .as_deref()
                .and_then(types::shape)
                .unwrap_or_else(|| "f32[]".to_string());
            let name = format!("{}.local{k}", instr.name);
            scope.comp.instrs.push(Instr {
                name: name.clone(),
                shape,
                opcode: "custom-call".into(),
                operands: vec![global.clone()],
                attrs: vec!["custom_call_target=\"xla.sdy.GlobalToLocalShape\"".into()],
                mlir_name: instr.mlir_name.clone(),
                mlir_op: instr.mlir_op.clone(),
            });
            locals.push(name);
        }
        let body = self.computation_name(&format!("manual_computation_body_{o}"));
        self.emit_region(region, &params, body.clone(), Some(scope.values.clone()));
        let local_shape = self
            .comps
            .last()
            .and_then(|c| c.root.and_then(|r| c.instrs.get(r)))
            .map_or_else(|| instr.shape.clone(), |r| r.shape.clone());
        let call = format!("{}.body", instr.name);
        scope.comp.instrs.push(Instr {
            name: call.clone(),
            shape: local_shape,
            opcode: "call".into(),
            operands: locals,
            attrs: vec![format!("to_apply={body}")],
            mlir_name: instr.mlir_name.clone(),
            mlir_op: instr.mlir_op.clone(),
        });
        instr.opcode = "custom-call".into();
        instr.operands = vec![call];
        instr
            .attrs
            .push("custom_call_target=\"xla.sdy.LocalToGlobalShape\"".into());
        // The global results' shardings (`out_shardings`) are the op's own.
        let text = &self.src[self.file.ops[o].range.clone()];
        let header = text.split(") {").next().unwrap_or(text);
        match &sharding::listed(header, "out_shardings", &self.meshes)[..] {
            [] => {}
            [one] => instr.attrs.push(format!("sharding={one}")),
            many => instr
                .attrs
                .push(format!("sharding={{{}}}", many.join(", "))),
        }
        true
    }
}
