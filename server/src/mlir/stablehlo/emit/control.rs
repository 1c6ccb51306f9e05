//! Control flow: `stablehlo.while` as HLO's `while` (its init values tupled, the
//! `cond` and `do` regions as computations of one tuple parameter, each iteration
//! value a `get-tuple-element` of it named as in the MLIR text), `stablehlo.case`
//! and `stablehlo.if` as `conditional` (each branch a computation of one tuple
//! parameter holding the values it reads from outside, the conditional's operand
//! for it a tuple of those values). Their maps are unknown, as on HLO (control
//! flow); what this gives is the graph whole, with the hover and navigation of
//! the ops inside.

use super::{Emitter, Instr, Scope, Value};
use crate::mlir::stablehlo::types;
use crate::mlir::stablehlo::view::OpView;

impl Emitter<'_> {
    /// Fills `instr` as the `while` of op `o`.
    pub(super) fn while_loop(
        &mut self,
        o: usize,
        v: &OpView,
        instr: &mut Instr,
        scope: &mut Scope,
    ) -> bool {
        let regions = self.file.ops[o].regions.clone();
        if regions.len() != 2 {
            return false;
        }
        let shapes: Vec<String> = v.results.iter().filter_map(|t| types::shape(t)).collect();
        let tuple_shape = format!("({})", shapes.join(", "));
        let init = format!("{}.init", instr.name);
        scope.comp.instrs.push(Instr {
            name: init.clone(),
            shape: tuple_shape.clone(),
            opcode: "tuple".into(),
            operands: std::mem::take(&mut instr.operands),
            attrs: vec![],
            mlir_name: instr.mlir_name.clone(),
            mlir_op: instr.mlir_op.clone(),
        });
        instr.operands = vec![init];
        instr.shape = tuple_shape;
        instr.opcode = "while".into();
        // The pretty form names the iteration values once, in the header; the
        // generic form gives each region its block arguments.
        let header_args = self.region_args(regions[0]);
        let mut names = Vec::new();
        for &region in &regions {
            let own = self.region_args(region);
            let params = if own.is_empty() {
                header_args.clone()
            } else {
                own
            };
            let k = names.len();
            let name = self.computation_name(&format!("region_{o}_{k}"));
            self.emit_region(region, &params, name.clone(), Some(scope.values.clone()));
            self.tuple_parameters(Some(&shapes));
            names.push(name);
        }
        instr.attrs.push(format!("condition={}", names[0]));
        instr.attrs.push(format!("body={}", names[1]));
        true
    }

    /// Fills `instr` as the `conditional` of op `o` (`case` on an index, `if` on a
    /// predicate).
    pub(super) fn conditional(&mut self, o: usize, instr: &mut Instr, scope: &mut Scope) -> bool {
        let regions = self.file.ops[o].regions.clone();
        if regions.is_empty() || instr.operands.is_empty() {
            return false;
        }
        instr.opcode = "conditional".into();
        instr.operands.truncate(1);
        let mut branches = Vec::new();
        for (k, &region) in regions.iter().enumerate() {
            let name = self.computation_name(&format!("region_{o}_{k}"));
            let captures = self.emit_region(region, &[], name.clone(), Some(scope.values.clone()));
            // One value read from outside is the branch's operand itself, as XLA
            // writes it; several are a tuple.
            if let [(_, one)] = captures.as_slice() {
                instr.operands.push(one.name.clone());
                branches.push(name);
                continue;
            }
            let shape = self.tuple_parameters(None);
            let operand = format!("{}.branch{k}", instr.name);
            scope.comp.instrs.push(Instr {
                name: operand.clone(),
                shape,
                opcode: "tuple".into(),
                operands: captures
                    .iter()
                    .map(|(_, v): &(String, Value)| v.name.clone())
                    .collect(),
                attrs: vec![],
                mlir_name: instr.mlir_name.clone(),
                mlir_op: instr.mlir_op.clone(),
            });
            instr.operands.push(operand);
            branches.push(name);
        }
        let is_if = self.file.ops[o].name.ends_with(".if") && branches.len() == 2;
        if is_if {
            instr
                .attrs
                .push(format!("true_computation={}", branches[0]));
            instr
                .attrs
                .push(format!("false_computation={}", branches[1]));
        } else {
            instr
                .attrs
                .push(format!("branch_computations={{{}}}", branches.join(", ")));
        }
        true
    }

    /// Makes the parameters of the computation written last the elements of one
    /// tuple parameter (a while body's, a branch's), each a `get-tuple-element`
    /// of it under its own name; `shapes`, when given, are the elements' shapes.
    /// Returns the tuple's shape.
    fn tuple_parameters(&mut self, shapes: Option<&[String]>) -> String {
        let Some(comp) = self.comps.last_mut() else {
            return "()".into();
        };
        let tuple = "%tuple.param".to_string();
        let mut elements = Vec::new();
        let mut anchor = None;
        for instr in comp.instrs.iter_mut().filter(|i| i.opcode == "parameter") {
            let k = instr
                .operands
                .first()
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            if let Some(shape) = shapes.and_then(|s| s.get(k)) {
                instr.shape = shape.clone();
            }
            elements.push((k, instr.shape.clone()));
            instr.opcode = "get-tuple-element".into();
            instr.operands = vec![tuple.clone()];
            instr.attrs = vec![format!("index={k}")];
            anchor.get_or_insert((instr.mlir_name.clone(), instr.mlir_op.clone()));
        }
        elements.sort_by_key(|(k, _)| *k);
        let shape = format!(
            "({})",
            elements
                .iter()
                .map(|(_, s)| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let (mlir_name, mlir_op) = anchor.unwrap_or_default();
        comp.instrs.insert(
            0,
            Instr {
                name: tuple,
                shape: shape.clone(),
                opcode: "parameter".into(),
                operands: vec!["0".into()],
                attrs: vec![],
                mlir_name,
                mlir_op,
            },
        );
        if let Some(root) = comp.root.as_mut() {
            *root += 1;
        }
        // A root tuple returning parameters was written with their shapes then.
        if let Some(root) = comp.root.filter(|&r| comp.instrs[r].opcode == "tuple") {
            let parts: Vec<String> = comp.instrs[root]
                .operands
                .iter()
                .map(|n| {
                    let found = comp.instrs.iter().find(|i| &i.name == n);
                    found.map_or("f32[]".to_string(), |i| i.shape.clone())
                })
                .collect();
            comp.instrs[root].shape = format!("({})", parts.join(", "));
        }
        shape
    }
}
