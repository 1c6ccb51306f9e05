//! Writing the HLO module of a StableHLO file: computations from functions and
//! regions, an instruction per op (see [`super`]), the ranges back to the MLIR text.

mod control;
mod manual;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;

use super::sharding::{self, Meshes};
use super::types::{self, split_top};
use super::view::{self, field, ints, pair, OpView};
use super::{Line, Translation};
use crate::mlir::reader::{MlirFile, ValueKind};
use crate::model::Diagnostic;

/// One HLO instruction to write.
#[derive(Clone, Debug)]
struct Instr {
    name: String,
    shape: String,
    opcode: String,
    operands: Vec<String>,
    attrs: Vec<String>,
    mlir_name: Range<usize>,
    mlir_op: Range<usize>,
}

#[derive(Clone, Debug, Default)]
struct Comp {
    name: String,
    instrs: Vec<Instr>,
    root: Option<usize>,
}

/// A value of the computation being written: its HLO name and shape.
#[derive(Clone, Debug)]
struct Value {
    name: String,
    shape: String,
    /// For an op with several results: the names of their `get-tuple-element`s.
    parts: Vec<String>,
}

pub struct Emitter<'a> {
    src: &'a str,
    file: &'a MlirFile,
    comps: Vec<Comp>,
    diagnostics: Vec<Diagnostic>,
    taken: HashMap<String, usize>,
    /// Shardy's meshes, for the shardings written over them.
    meshes: Meshes,
}

/// The scope of one computation: values by MLIR name, the instructions so far.
struct Scope {
    comp: Comp,
    values: HashMap<String, Value>,
    /// Values of enclosing regions a region uses become its parameters.
    captures: Vec<(String, Value)>,
    parent: Option<HashMap<String, Value>>,
}

/// StableHLO names that are HLO opcodes with other spellings, or the same.
fn elementwise(base: &str) -> Option<&'static str> {
    Some(match base {
        "abs" => "abs",
        "add" => "add",
        "and" => "and",
        "atan2" => "atan2",
        "cbrt" => "cbrt",
        "ceil" => "ceil",
        "clamp" => "clamp",
        "complex" => "complex",
        "cosine" | "cos" => "cosine",
        "count_leading_zeros" => "count-leading-zeros",
        "divide" | "div" => "divide",
        "exponential" | "exp" => "exponential",
        "exponential_minus_one" | "expm1" => "exponential-minus-one",
        "floor" => "floor",
        "imag" => "imag",
        "is_finite" => "is-finite",
        "log" => "log",
        "log_plus_one" | "log1p" => "log-plus-one",
        "logistic" => "logistic",
        "maximum" | "max" => "maximum",
        "minimum" | "min" => "minimum",
        "multiply" | "mul" => "multiply",
        "negate" | "neg" => "negate",
        "not" => "not",
        "or" => "or",
        "popcnt" => "popcnt",
        "power" | "pow" => "power",
        "real" => "real",
        "remainder" | "rem" => "remainder",
        "round_nearest_afz" | "round" => "round-nearest-afz",
        "round_nearest_even" => "round-nearest-even",
        "rsqrt" => "rsqrt",
        "shift_left" => "shift-left",
        "shift_right_arithmetic" => "shift-right-arithmetic",
        "shift_right_logical" => "shift-right-logical",
        "sign" => "sign",
        "sine" | "sin" => "sine",
        "sqrt" => "sqrt",
        "subtract" | "sub" => "subtract",
        "tan" => "tan",
        "tanh" => "tanh",
        "xor" => "xor",
        "convert" => "convert",
        "bitcast_convert" => "bitcast-convert",
        "select" => "select",
        "erf" => "erf",
        "copy" => "copy",
        "tuple" => "tuple",
        "after_all" => "after-all",
        "dynamic_update_slice" => "dynamic-update-slice",
        "reshape" => "reshape",
        "bitcast" => "bitcast",
        "real_dynamic_slice" => return None,
        _ => return None,
    })
}

fn list(v: &[i64]) -> String {
    let parts: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("{{{}}}", parts.join(","))
}

/// An HLO name for an MLIR value or symbol (`%cst_0`, `main`): `$` and quotes are
/// not HLO name characters.
fn hlo_name(mlir: &str) -> String {
    mlir.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '%') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl<'a> Emitter<'a> {
    pub fn new(src: &'a str, file: &'a MlirFile) -> Self {
        Emitter {
            src,
            file,
            comps: vec![],
            diagnostics: vec![],
            taken: HashMap::new(),
            meshes: Meshes::of(src),
        }
    }

    pub fn run(mut self) -> Translation {
        let funcs: Vec<usize> = (0..self.file.funcs.len())
            .filter(|&f| !self.file.ops[self.file.funcs[f].op].regions.is_empty())
            .collect();
        let entry_func = funcs
            .iter()
            .copied()
            .find(|&f| self.file.funcs[f].name == "@main")
            .or(funcs.last().copied());
        let mut entry_name = None;
        for &f in &funcs {
            let func = &self.file.funcs[f];
            let op = &self.file.ops[func.op];
            let region = op.regions[0];
            let name = self.computation_name(func.name.trim_start_matches('@'));
            let params = self.region_args(region);
            self.emit_region(region, &params, name.clone(), None);
            self.parameter_layouts(func.op);
            self.parameter_shardings(f);
            if Some(f) == entry_func {
                entry_name = Some(name);
            }
        }
        self.write(entry_name.as_deref())
    }

    /// XLA's importer writes an entry parameter's layout that is not the default
    /// on the function (`xla_entry_computation_parameter_layouts`): the
    /// computation just written takes them, so physical maps read them.
    fn parameter_layouts(&mut self, func_op: usize) {
        let v = view::view(self.src, self.file, &self.file.ops[func_op]);
        let Some(layouts) = v.attr("xla_entry_computation_parameter_layouts") else {
            return;
        };
        let inner = layouts.trim().trim_start_matches('[').trim_end_matches(']');
        let Some(comp) = self.comps.last_mut() else {
            return;
        };
        let params = comp.instrs.iter_mut().filter(|i| i.opcode == "parameter");
        for (instr, layout) in params.zip(split_top(inner)) {
            instr.shape = types::with_layout(&instr.shape, &ints(layout));
        }
    }

    /// A function argument's `mhlo.sharding` or `sdy.sharding` is the sharding of
    /// its parameter, and a result's that of the root, as XLA's importer writes
    /// them.
    fn parameter_shardings(&mut self, f: usize) {
        let func = &self.file.funcs[f];
        let op = &self.file.ops[func.op];
        let Some(body) = op.regions.first().and_then(|&r| self.file.regions.get(r)) else {
            return;
        };
        let Some(header) = self.src.get(func.name_range.end..body.range.start) else {
            return;
        };
        let (args, results) = super::signature::split_header(header);
        let read = |list: &str| -> Vec<Option<String>> {
            sharding::split_outside_strings(list)
                .into_iter()
                .map(|a| sharding::from_dictionary(a, &self.meshes))
                .collect()
        };
        let (shardings, results) = (read(args), read(results));
        let Some(comp) = self.comps.last_mut() else {
            return;
        };
        let params = comp.instrs.iter_mut().filter(|i| i.opcode == "parameter");
        for (instr, sharding) in params.zip(shardings) {
            if let Some(s) = sharding {
                instr.attrs.push(format!("sharding={s}"));
            }
        }
        // The results' shardings are the root's (a tuple's, element by
        // element), as XLA's exporter writes them; a root that is a parameter
        // keeps the parameter's.
        let Some(root) = comp.root.and_then(|k| comp.instrs.get_mut(k)) else {
            return;
        };
        let unsharded = !root.attrs.iter().any(|a| a.starts_with("sharding="));
        if results.iter().all(Option::is_none) || !unsharded || root.opcode == "parameter" {
            return;
        }
        match &results[..] {
            [Some(one)] => root.attrs.push(format!("sharding={one}")),
            many if root.opcode == "tuple" && many.len() == root.operands.len() => {
                let each: Vec<&str> = many
                    .iter()
                    .map(|s| s.as_deref().unwrap_or("{replicated}"))
                    .collect();
                root.attrs.push(format!("sharding={{{}}}", each.join(", ")));
            }
            _ => {}
        }
    }

    /// A computation name not used yet.
    fn computation_name(&mut self, base: &str) -> String {
        let mut base = hlo_name(base).trim_start_matches('%').to_string();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            base.insert(0, '_');
        }
        let n = self.taken.entry(base.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            base
        } else {
            format!("{base}.{}", *n - 1)
        }
    }

    /// The arguments of a region's first block, in order (value indices).
    fn region_args(&self, region: usize) -> Vec<usize> {
        let mut args: Vec<usize> = (0..self.file.values.len())
            .filter(|&v| {
                let d = &self.file.values[v];
                d.region == region
                    && matches!(d.kind, ValueKind::Argument | ValueKind::BlockArgument)
            })
            .collect();
        args.sort_by_key(|&v| self.file.values[v].range.start);
        args
    }

    fn op_name_range(&self, op: usize) -> Range<usize> {
        self.file.ops[op].name_range.clone()
    }

    /// Writes the computation of `region` named `name`, with `params` (value
    /// indices) as its parameters; `outer` are the values it may capture.
    fn emit_region(
        &mut self,
        region: usize,
        params: &[usize],
        name: String,
        outer: Option<HashMap<String, Value>>,
    ) -> Vec<(String, Value)> {
        let mut scope = Scope {
            comp: Comp {
                name,
                ..Comp::default()
            },
            values: HashMap::new(),
            captures: vec![],
            parent: outer,
        };
        for (k, &v) in params.iter().enumerate() {
            let d = &self.file.values[v];
            let shape =
                d.ty.as_deref()
                    .and_then(types::shape)
                    .unwrap_or_else(|| "f32[]".to_string());
            let name = hlo_name(&d.name);
            scope.values.insert(
                d.name.clone(),
                Value {
                    name: name.clone(),
                    shape: shape.clone(),
                    parts: vec![],
                },
            );
            scope.comp.instrs.push(Instr {
                name,
                shape,
                opcode: "parameter".into(),
                operands: vec![k.to_string()],
                attrs: vec![],
                mlir_name: d.range.clone(),
                mlir_op: d.range.clone(),
            });
        }
        let ops: Vec<usize> = (0..self.file.ops.len())
            .filter(|&o| self.file.ops[o].region == region)
            .collect();
        for o in ops {
            self.op(o, &mut scope);
        }
        let captures = scope.captures.clone();
        self.comps.push(scope.comp);
        captures
    }

    /// The value an operand names (`%3`, `%3#1`), capturing it from the enclosing
    /// computation when it is defined there.
    fn operand(&mut self, scope: &mut Scope, text: &str, at: Range<usize>) -> String {
        let (base, part) = match text.split_once('#') {
            Some((b, p)) => (b, p.parse::<usize>().ok()),
            None => (text, None),
        };
        let found = scope.values.get(base).cloned().or_else(|| {
            let outer = scope.parent.as_ref()?.get(base)?.clone();
            let name = hlo_name(base);
            let captured = Value {
                name: name.clone(),
                shape: outer.shape.clone(),
                parts: vec![],
            };
            scope.captures.push((base.to_string(), outer.clone()));
            let at_param = scope
                .comp
                .instrs
                .iter()
                .filter(|i| i.opcode == "parameter")
                .count();
            scope.comp.instrs.insert(
                at_param,
                Instr {
                    name,
                    shape: outer.shape,
                    opcode: "parameter".into(),
                    operands: vec![at_param.to_string()],
                    attrs: vec![],
                    mlir_name: at.clone(),
                    mlir_op: at.clone(),
                },
            );
            scope.values.insert(base.to_string(), captured.clone());
            Some(captured)
        });
        match found {
            Some(v) => match part {
                Some(p) if !v.parts.is_empty() => v.parts.get(p).cloned().unwrap_or(v.name),
                None if !v.parts.is_empty() => v.parts[0].clone(),
                _ => v.name,
            },
            None => {
                self.diagnostics.push(Diagnostic::error(
                    at,
                    "undefined-value",
                    format!("{base} is not defined before this use"),
                ));
                hlo_name(base)
            }
        }
    }

    /// Converts op `o` into instructions of `scope`.
    fn op(&mut self, o: usize, scope: &mut Scope) {
        let file = self.file;
        let op = &file.ops[o];
        let v = view::view(self.src, file, op);
        let mlir_op = op.range.clone();
        let operands: Vec<String> = v
            .operands
            .iter()
            .map(|(t, r)| self.operand(scope, t, r.clone()))
            .collect();
        let is_return = matches!(v.base.as_str(), "return")
            && (v.dialect.is_empty()
                || matches!(v.dialect.as_str(), "func" | "stablehlo" | "mhlo" | "sdy"));
        if is_return {
            self.root(scope, operands, o);
            return;
        }
        let result_def = op.results.first().copied();
        // `%values, %indices = ...` names each result; `%2:2 = ...` names two at once.
        let counts: Vec<usize> = op.results.iter().map(|&r| self.result_count(r)).collect();
        let count: usize = counts.iter().sum();
        let mut results: Vec<String> = v.results.iter().filter_map(|t| types::shape(t)).collect();
        if v.operand_types.is_empty() && v.base != "while" && results.len() > count.max(1) {
            results = results.split_off(results.len() - count.max(1));
        }
        if let (Some(layout), [one]) = (v.attr("result_layout"), results.as_mut_slice()) {
            *one = types::with_layout(one, &ints(layout));
        }
        let shape = match results.len() {
            1 => results[0].clone(),
            0 => "()".to_string(),
            _ => format!("({})", results.join(", ")),
        };
        let (name, mlir_name) = match result_def {
            Some(r) => {
                let d = &file.values[r];
                (hlo_name(&d.name), d.range.clone())
            }
            None => (
                format!("%{}.{}", v.base.replace('.', "_"), o),
                op.name_range.clone(),
            ),
        };
        let mut instr = Instr {
            name: name.clone(),
            shape,
            opcode: String::new(),
            operands,
            attrs: vec![],
            mlir_name: mlir_name.clone(),
            mlir_op,
        };
        let known = view::is_hlo_dialect(&op.name)
            || matches!(
                op.name.as_str(),
                "func.call" | "call" | "sdy.sharding_constraint" | "sdy.manual_computation"
            );
        if !(known && self.convert(o, &v, &mut instr, scope)) {
            // CHLO ops are expanded by XLA into several HLO ops; most are elementwise.
            let note = if v.dialect == "chlo" {
                format!(
                    "{} is expanded by XLA into several HLO ops (before XLA sees it): kept as a custom-call, its maps are unknown here",
                    op.name
                )
            } else {
                format!(
                    "{} has no HLO counterpart here: it is kept as a custom-call, its maps are unknown",
                    op.name
                )
            };
            self.diagnostics.push(Diagnostic::warning(
                op.name_range.clone(),
                "unconverted-op",
                note,
            ));
            instr.opcode = "custom-call".into();
            instr.attrs = vec![format!("custom_call_target=\"{}\"", op.name)];
        }
        if !instr.attrs.iter().any(|a| a.starts_with("sharding=")) {
            let written = v.attr("mhlo.sharding").or_else(|| v.attr("sdy.sharding"));
            if let Some(s) = written.and_then(|w| sharding::from_value(w, &self.meshes)) {
                instr.attrs.push(format!("sharding={s}"));
            }
        }
        scope.comp.instrs.push(instr);
        let mut value = Value {
            name: name.clone(),
            shape: String::new(),
            parts: vec![],
        };
        // A while and an optimization barrier are tuple-shaped even with one value.
        if results.len() > 1 || instr_is_tuple_shaped(&scope.comp) {
            // Each element belongs to the result that names it (`%indices`).
            let owners = part_owners(&counts, results.len());
            for (k, part) in results.iter().enumerate() {
                let gte = format!("{name}.{k}");
                let owner = owners[k].and_then(|d| op.results.get(d));
                scope.comp.instrs.push(Instr {
                    name: gte.clone(),
                    shape: part.clone(),
                    opcode: "get-tuple-element".into(),
                    operands: vec![name.clone()],
                    attrs: vec![format!("index={k}")],
                    mlir_name: owner.map_or(mlir_name.clone(), |&r| file.values[r].range.clone()),
                    mlir_op: file.ops[o].range.clone(),
                });
                value.parts.push(gte);
            }
        }
        if op.results.len() > 1 && value.parts.len() >= count {
            // Several names: each its own elements.
            let mut at = 0;
            for (&r, &n) in op.results.iter().zip(&counts) {
                let parts = value.parts[at..at + n].to_vec();
                let one = Value {
                    name: if n == 1 {
                        parts[0].clone()
                    } else {
                        name.clone()
                    },
                    shape: results.get(at).cloned().unwrap_or_default(),
                    parts: if n == 1 { vec![] } else { parts },
                };
                scope.values.insert(file.values[r].name.clone(), one);
                at += n;
            }
        } else if let Some(r) = result_def {
            value.shape = results.first().cloned().unwrap_or_default();
            scope.values.insert(file.values[r].name.clone(), value);
        }
    }

    /// How many results `%0:2 = ...` declares (1 without a count).
    fn result_count(&self, value: usize) -> usize {
        let at = self.file.values[value].range.end;
        let k = self.file.tokens.partition_point(|t| t.range.start < at);
        let colon = self.file.token_text(self.src, k) == ":";
        if colon {
            self.file.token_text(self.src, k + 1).parse().unwrap_or(1)
        } else {
            1
        }
    }

    /// The op's return: its value is the computation's ROOT (a tuple when several).
    fn root(&mut self, scope: &mut Scope, operands: Vec<String>, o: usize) {
        let op = &self.file.ops[o];
        if operands.len() == 1 {
            let target = &operands[0];
            if let Some(k) = scope.comp.instrs.iter().rposition(|i| &i.name == target) {
                scope.comp.root = Some(k);
                return;
            }
        }
        let shapes: Vec<String> = operands
            .iter()
            .map(|n| {
                scope
                    .comp
                    .instrs
                    .iter()
                    .find(|i| &i.name == n)
                    .map_or("f32[]".to_string(), |i| i.shape.clone())
            })
            .collect();
        scope.comp.instrs.push(Instr {
            name: format!("%return.{o}"),
            shape: format!("({})", shapes.join(", ")),
            opcode: "tuple".into(),
            operands,
            attrs: vec![],
            mlir_name: op.name_range.clone(),
            mlir_op: op.range.clone(),
        });
        scope.comp.root = Some(scope.comp.instrs.len() - 1);
    }

    /// Fills `instr` for op `o`; false when the op is not one this knows.
    fn convert(&mut self, o: usize, v: &OpView, instr: &mut Instr, scope: &mut Scope) -> bool {
        let base = v.base.as_str();
        // `chlo.broadcast_add` on operands of the result's shape is the add.
        let same_shapes = v.operand_types.iter().all(|t| Some(t) == v.results.first());
        if let Some(op) = base.strip_prefix("broadcast_").filter(|_| same_shapes) {
            if let Some(opcode) = elementwise(op).filter(|_| v.dialect == "chlo") {
                instr.opcode = opcode.into();
                return true;
            }
        }
        if let Some(opcode) = elementwise(base) {
            instr.opcode = opcode.into();
            return true;
        }
        let dims = |keys: &[&str]| keys.iter().find_map(|k| v.attr(k)).map(ints);
        match base {
            "fft" => {
                instr.opcode = "fft".into();
                let kind = v.attr("fft_type").or_else(|| v.attr("type")).map(enum_word);
                instr
                    .attrs
                    .push(format!("fft_type={}", kind.unwrap_or("FFT")));
                let length = dims(&["length", "fft_length"]).unwrap_or_default();
                instr.attrs.push(format!("fft_length={}", list(&length)));
            }
            "reduce_precision" => {
                let Some((exponent, mantissa)) = precision_bits(v) else {
                    return false;
                };
                instr.opcode = "reduce-precision".into();
                instr.attrs.push(format!("exponent_bits={exponent}"));
                instr.attrs.push(format!("mantissa_bits={mantissa}"));
            }
            "rng_bit_generator" => {
                instr.opcode = "rng-bit-generator".into();
                let algorithm = v
                    .attr("algorithm")
                    .or_else(|| v.attr("rng_algorithm"))
                    .map(enum_word)
                    .unwrap_or("DEFAULT");
                let algorithm = match algorithm {
                    "THREE_FRY" => "rng_three_fry",
                    "PHILOX" => "rng_philox",
                    _ => "rng_default",
                };
                instr.attrs.push(format!("algorithm={algorithm}"));
            }
            "optimization_barrier" => self.optimization_barrier(instr, scope),
            // XLA turns `chlo.top_k` into its `topk` instruction (largest first).
            "top_k" => {
                let Some(k) = dims(&["k"]).and_then(|d| d.first().copied()) else {
                    return false;
                };
                instr.opcode = "topk".into();
                instr.attrs.push(format!("k={k}"));
                instr.attrs.push("largest=true".into());
            }
            "compare" => {
                let direction = v
                    .attr("comparison_direction")
                    .and_then(|a| a.trim_end_matches('>').split_whitespace().last())
                    .map(str::to_string)
                    .or_else(|| v.words.first().cloned());
                instr.opcode = "compare".into();
                if let Some(d) = direction {
                    instr.attrs.push(format!("direction={d}"));
                }
            }
            "broadcast_in_dim" => {
                instr.opcode = "broadcast".into();
                let d = dims(&["dims", "broadcast_dimensions"]).unwrap_or_default();
                let d = self.expand_ones(v, &d, instr, scope);
                instr.attrs.push(format!("dimensions={}", list(&d)));
            }
            // HLO's `dimensions=`, under the pretty and the generic attribute name.
            "transpose" | "reverse" | "concatenate" => {
                let names: &[&str] = match base {
                    "transpose" => &["dims", "permutation"],
                    "reverse" => &["dims", "dimensions"],
                    _ => &["dim", "dimension"],
                };
                instr.opcode = base.into();
                let d = dims(names).unwrap_or_default();
                instr.attrs.push(format!("dimensions={}", list(&d)));
            }
            "iota" => {
                instr.opcode = "iota".into();
                let d = dims(&["dim", "iota_dimension"]).unwrap_or_default();
                instr
                    .attrs
                    .push(format!("iota_dimension={}", d.first().unwrap_or(&0)));
                instr.operands.clear();
            }
            "dynamic_slice" => {
                instr.opcode = "dynamic-slice".into();
                let d = dims(&["sizes", "slice_sizes"]).unwrap_or_default();
                instr
                    .attrs
                    .push(format!("dynamic_slice_sizes={}", list(&d)));
            }
            "slice" => {
                instr.opcode = "slice".into();
                let parts: Vec<String> = if let Some(s) = &v.slice {
                    split_top(s)
                        .iter()
                        .map(|p| {
                            let n: Vec<&str> = p.split(':').map(str::trim).collect();
                            let stride = n.get(2).copied().unwrap_or("1");
                            format!(
                                "[{}:{}:{stride}]",
                                n.first().unwrap_or(&"0"),
                                n.get(1).unwrap_or(&"0")
                            )
                        })
                        .collect()
                } else {
                    let s = dims(&["start_indices"]).unwrap_or_default();
                    let l = dims(&["limit_indices"]).unwrap_or_default();
                    let st = dims(&["strides"]).unwrap_or_default();
                    (0..s.len())
                        .map(|k| {
                            format!(
                                "[{}:{}:{}]",
                                s[k],
                                l.get(k).unwrap_or(&0),
                                st.get(k).unwrap_or(&1)
                            )
                        })
                        .collect()
                };
                instr.attrs.push(format!("slice={{{}}}", parts.join(", ")));
            }
            "pad" => {
                instr.opcode = "pad".into();
                let lo = dims(&["low", "edge_padding_low"]).unwrap_or_default();
                let hi = dims(&["high", "edge_padding_high"]).unwrap_or_default();
                let int = dims(&["interior", "interior_padding"]).unwrap_or_default();
                let parts: Vec<String> = (0..lo.len())
                    .map(|k| {
                        format!(
                            "{}_{}_{}",
                            lo[k],
                            hi.get(k).unwrap_or(&0),
                            int.get(k).unwrap_or(&0)
                        )
                    })
                    .collect();
                instr.attrs.push(format!("padding={}", parts.join("x")));
            }
            "dot_general" | "dot" => {
                instr.opcode = "dot".into();
                let (lb, rb, lc, rc) = if let Some(a) = v.attr("dot_dimension_numbers") {
                    (
                        field(a, "lhs_batching_dimensions").unwrap_or_default(),
                        field(a, "rhs_batching_dimensions").unwrap_or_default(),
                        field(a, "lhs_contracting_dimensions").unwrap_or_default(),
                        field(a, "rhs_contracting_dimensions").unwrap_or_default(),
                    )
                } else if base == "dot" {
                    let rank = v
                        .operand_types
                        .first()
                        .and_then(|t| crate::mlir::types::parse_type(t))
                        .map_or(1, |t| t.rank());
                    (vec![], vec![], vec![rank as i64 - 1], vec![0])
                } else {
                    let (lb, rb) = v.attr("batching_dims").map(pair).unwrap_or_default();
                    let (lc, rc) = v.attr("contracting_dims").map(pair).unwrap_or_default();
                    (lb, rb, lc, rc)
                };
                if !lb.is_empty() {
                    instr.attrs.push(format!("lhs_batch_dims={}", list(&lb)));
                }
                instr
                    .attrs
                    .push(format!("lhs_contracting_dims={}", list(&lc)));
                if !rb.is_empty() {
                    instr.attrs.push(format!("rhs_batch_dims={}", list(&rb)));
                }
                instr
                    .attrs
                    .push(format!("rhs_contracting_dims={}", list(&rc)));
            }
            "constant" => {
                instr.opcode = "constant".into();
                instr.operands = vec![self.literal(v, &instr.shape)];
            }
            "gather" => {
                instr.opcode = "gather".into();
                let a = v.attr("dimension_numbers").unwrap_or("");
                for (key, hlo) in [
                    ("offset_dims", "offset_dims"),
                    ("collapsed_slice_dims", "collapsed_slice_dims"),
                    ("start_index_map", "start_index_map"),
                    ("operand_batching_dims", "operand_batching_dims"),
                    ("start_indices_batching_dims", "start_indices_batching_dims"),
                ] {
                    let d = field(a, key).or_else(|| v.attr(key).map(ints));
                    if let Some(d) = d.filter(|d| !d.is_empty() || !key.contains("batching")) {
                        instr.attrs.push(format!("{hlo}={}", list(&d)));
                    }
                }
                let ivd = field(a, "index_vector_dim").or_else(|| dims(&["index_vector_dim"]));
                instr.attrs.push(format!(
                    "index_vector_dim={}",
                    ivd.and_then(|d| d.first().copied()).unwrap_or(0)
                ));
                let sizes = dims(&["slice_sizes"]).unwrap_or_default();
                instr.attrs.push(format!("slice_sizes={}", list(&sizes)));
            }
            "scatter" => {
                instr.opcode = "scatter".into();
                let a = v.attr("scatter_dimension_numbers").unwrap_or("");
                for key in [
                    "update_window_dims",
                    "inserted_window_dims",
                    "scatter_dims_to_operand_dims",
                    "input_batching_dims",
                    "scatter_indices_batching_dims",
                ] {
                    let d = field(a, key).unwrap_or_default();
                    if !d.is_empty() || !key.contains("batching") {
                        instr.attrs.push(format!("{key}={}", list(&d)));
                    }
                }
                let ivd = field(a, "index_vector_dim")
                    .and_then(|d| d.first().copied())
                    .unwrap_or(0);
                instr.attrs.push(format!("index_vector_dim={ivd}"));
                let to_apply = self.body(o, 0, scope, None);
                instr.attrs.push(format!("to_apply={to_apply}"));
            }
            "reduce" => {
                instr.opcode = "reduce".into();
                let pretty = v.words.iter().any(|w| w == "applies" || w == "across");
                if pretty {
                    // `(%a init: %x), (%b init: %y)`: inputs, then inits.
                    let (inputs, inits): (Vec<_>, Vec<_>) = instr
                        .operands
                        .iter()
                        .cloned()
                        .enumerate()
                        .partition(|(k, _)| k % 2 == 0);
                    instr.operands = inputs.into_iter().chain(inits).map(|(_, n)| n).collect();
                }
                let d = dims(&["dimensions"]).unwrap_or_default();
                instr.attrs.push(format!("dimensions={}", list(&d)));
                let applies = v
                    .words
                    .iter()
                    .position(|w| w == "applies")
                    .and_then(|k| v.words.get(k + 1));
                let to_apply = match applies {
                    Some(f) => self.scalar_body(o, f, &v.results),
                    None => self.body(o, 0, scope, Some(instr.operands.len() / 2)),
                };
                instr.attrs.push(format!("to_apply={to_apply}"));
            }
            "reduce_window" => {
                instr.opcode = "reduce-window".into();
                let size = dims(&["window_dimensions"]).unwrap_or_default();
                let rank = size.len();
                let ones = vec![1; rank];
                let stride = dims(&["window_strides"]).unwrap_or(ones.clone());
                let lhs = dims(&["base_dilations"]).unwrap_or(ones.clone());
                let rhs = dims(&["window_dilations"]).unwrap_or(ones.clone());
                let pad = dims(&["padding"]).unwrap_or_default();
                let join = |d: &[i64]| d.iter().map(i64::to_string).collect::<Vec<_>>().join("x");
                let pads: Vec<String> = (0..rank)
                    .map(|k| {
                        format!(
                            "{}_{}",
                            pad.get(2 * k).unwrap_or(&0),
                            pad.get(2 * k + 1).unwrap_or(&0)
                        )
                    })
                    .collect();
                instr.attrs.push(format!(
                    "window={{size={} stride={} pad={} lhs_dilate={} rhs_dilate={}}}",
                    join(&size),
                    join(&stride),
                    pads.join("x"),
                    join(&lhs),
                    join(&rhs)
                ));
                let to_apply = self.body(o, 0, scope, None);
                instr.attrs.push(format!("to_apply={to_apply}"));
            }
            "sort" => {
                instr.opcode = "sort".into();
                let d = dims(&["dimension"]).unwrap_or_default();
                instr.attrs.push(format!("dimensions={}", list(&d)));
                if v.attr("is_stable").is_some_and(|s| s.trim() == "true") {
                    instr.attrs.push("is_stable=true".into());
                }
                let to_apply = self.body(o, 0, scope, None);
                instr.attrs.push(format!("to_apply={to_apply}"));
            }
            "custom_call" => {
                instr.opcode = "custom-call".into();
                let target = v
                    .symbol
                    .clone()
                    .or_else(|| {
                        v.attr("call_target_name")
                            .map(|s| s.trim_matches('"').to_string())
                    })
                    .unwrap_or_default();
                instr.attrs.push(format!("custom_call_target=\"{target}\""));
            }
            // Shardy's constraint is XLA's `Sharding` custom-call.
            "sharding_constraint" if v.dialect == "sdy" => {
                let text = &self.src[self.file.ops[o].range.clone()];
                instr.opcode = "custom-call".into();
                instr.attrs.push("custom_call_target=\"Sharding\"".into());
                if let Some(s) = sharding::inline(text, &self.meshes) {
                    instr.attrs.push(format!("sharding={s}"));
                }
            }
            "call" => {
                let callee = v
                    .symbol
                    .clone()
                    .or_else(|| {
                        v.attr("callee")
                            .map(|s| s.trim().trim_start_matches('@').to_string())
                    })
                    .unwrap_or_default();
                instr.opcode = "call".into();
                instr.attrs.push(format!("to_apply={}", hlo_name(&callee)));
            }
            "get_tuple_element" => {
                instr.opcode = "get-tuple-element".into();
                let index = v
                    .attr("index")
                    .map(ints)
                    .and_then(|d| d.first().copied())
                    .or_else(|| self.bracket_index(o));
                instr.attrs.push(format!("index={}", index.unwrap_or(0)));
            }
            "map" => {
                instr.opcode = "map".into();
                let d = dims(&["dimensions"]).unwrap_or_default();
                instr.attrs.push(format!("dimensions={}", list(&d)));
                let to_apply = self.body(o, 0, scope, None);
                instr.attrs.push(format!("to_apply={to_apply}"));
            }
            "all_gather" => {
                instr.opcode = "all-gather".into();
                let d = dims(&["all_gather_dim"]).unwrap_or_default();
                instr.attrs.push(format!("dimensions={}", list(&d)));
                if let Some(groups) = v.attr("replica_groups").map(replica_groups) {
                    instr.attrs.push(format!("replica_groups={groups}"));
                }
            }
            // A ppermute inside a shard_map: XLA's exporter writes the pairs
            // (an `Nx2` dense) and the channel as HLO's `collective-permute`.
            "collective_permute" => {
                instr.opcode = "collective-permute".into();
                instr.attrs.extend(channel_id(v));
                if let Some(pairs) = v.attr("source_target_pairs").map(replica_groups) {
                    instr.attrs.push(format!("source_target_pairs={pairs}"));
                }
            }
            // The array form: one HLO all-to-all over `split_dimension` (XLA's
            // builder surrounds it with reshapes and a transpose when the concat
            // dimension differs; the devices and bytes are the same).
            "all_to_all" => {
                instr.opcode = "all-to-all".into();
                instr.attrs.extend(channel_id(v));
                if let Some(groups) = v.attr("replica_groups").map(replica_groups) {
                    instr.attrs.push(format!("replica_groups={groups}"));
                }
                let d = dims(&["split_dimension"]).unwrap_or_default();
                if !d.is_empty() {
                    instr.attrs.push(format!("dimensions={}", list(&d)));
                }
            }
            "collective_broadcast" => {
                instr.opcode = "collective-broadcast".into();
                instr.attrs.extend(channel_id(v));
                if let Some(groups) = v.attr("replica_groups").map(replica_groups) {
                    instr.attrs.push(format!("replica_groups={groups}"));
                }
            }
            // A psum inside a shard_map: the collective over its replica groups,
            // combining with its region (`to_apply`).
            "all_reduce" | "reduce_scatter" => {
                instr.opcode = base.replace('_', "-");
                if base == "reduce_scatter" {
                    let d = dims(&["scatter_dimension"]).unwrap_or_default();
                    instr.attrs.push(format!("dimensions={}", list(&d)));
                }
                if let Some(groups) = v.attr("replica_groups").map(replica_groups) {
                    instr.attrs.push(format!("replica_groups={groups}"));
                }
                if v.attr("use_global_device_ids").is_some()
                    || v.words.iter().any(|w| w == "use_global_device_ids")
                {
                    instr.attrs.push("use_global_device_ids=true".into());
                }
                let to_apply = self.body(o, 0, scope, None);
                instr.attrs.push(format!("to_apply={to_apply}"));
            }
            "convolution" => {
                let Some(attrs) = super::conv::attributes(v) else {
                    return false;
                };
                instr.opcode = "convolution".into();
                instr.attrs.extend(attrs);
            }
            "while" => return self.while_loop(o, v, instr, scope),
            "case" | "if" => return self.conditional(o, instr, scope),
            "manual_computation" => return self.manual_computation(o, instr, scope),
            "fusion" => {
                instr.opcode = "fusion".into();
                instr.attrs.push("kind=kLoop".into());
                let calls = self.fused(o, instr, scope);
                instr.attrs.push(format!("calls={calls}"));
            }
            _ => return false,
        }
        true
    }

    /// XLA's exporter (`ExportXlaOp` for `OptimizationBarrierOp`) makes one tuple of
    /// the operands, the barrier over it, and a `get-tuple-element` per result: the
    /// tuple goes before `instr`, whose shape is the tuple's.
    fn optimization_barrier(&self, instr: &mut Instr, scope: &mut Scope) {
        let shapes: Vec<String> = instr
            .operands
            .iter()
            .map(|n| {
                scope
                    .comp
                    .instrs
                    .iter()
                    .rfind(|i| &i.name == n)
                    .map_or_else(|| "f32[]".to_string(), |i| i.shape.clone())
            })
            .collect();
        let tuple = format!("({})", shapes.join(", "));
        let name = format!("{}.tuple", instr.name);
        scope.comp.instrs.push(Instr {
            name: name.clone(),
            shape: tuple.clone(),
            opcode: "tuple".into(),
            operands: std::mem::take(&mut instr.operands),
            attrs: vec![],
            mlir_name: instr.mlir_name.clone(),
            mlir_op: instr.mlir_op.clone(),
        });
        instr.opcode = "opt-barrier".into();
        instr.operands = vec![name];
        instr.shape = tuple;
    }

    /// A `broadcast_in_dim` that stretches a size-1 operand dimension is, as XLA's
    /// builder writes it, a reshape that drops those dimensions, then a broadcast
    /// (an HLO broadcast keeps its operand's extents): the reshape goes before
    /// `instr`, and the dimensions kept are returned.
    fn expand_ones(&self, v: &OpView, d: &[i64], instr: &mut Instr, scope: &mut Scope) -> Vec<i64> {
        let parse = |t: &String| crate::mlir::types::parse_type(t);
        let (Some(from), Some(to)) = (
            v.operand_types.first().and_then(parse),
            v.results.first().and_then(parse),
        ) else {
            return d.to_vec();
        };
        let stretched = |k: usize| {
            from.dim(k) == Some(1) && d.get(k).and_then(|&o| to.dim(o as usize)) != Some(1)
        };
        // `dims` names one result dimension per operand dimension; a list of another
        // length (`dims = []` for a non-scalar) is left as written, for `check` to report.
        if d.len() != from.rank() || !(0..from.rank()).any(stretched) || instr.operands.is_empty() {
            return d.to_vec();
        }
        let kept: Vec<usize> = (0..from.rank()).filter(|&k| !stretched(k)).collect();
        let element = types::element(&from.element).unwrap_or_else(|| "f32".into());
        let extents: Vec<String> = kept
            .iter()
            .map(|&k| from.dim(k).map_or("?".into(), |e| e.to_string()))
            .collect();
        let layout: Vec<String> = (0..kept.len()).rev().map(|k| k.to_string()).collect();
        let layout = if kept.is_empty() {
            String::new()
        } else {
            format!("{{{}}}", layout.join(","))
        };
        let name = format!("{}.reshape", instr.name);
        scope.comp.instrs.push(Instr {
            name: name.clone(),
            shape: format!("{element}[{}]{layout}", extents.join(",")),
            opcode: "reshape".into(),
            operands: vec![instr.operands[0].clone()],
            attrs: vec![],
            mlir_name: instr.mlir_name.clone(),
            mlir_op: instr.mlir_op.clone(),
        });
        instr.operands[0] = name;
        kept.iter().map(|&k| d[k]).collect()
    }

    /// `stablehlo.get_tuple_element %t[1]`.
    fn bracket_index(&self, o: usize) -> Option<i64> {
        let op = &self.file.ops[o];
        let toks: Vec<usize> = op.own_tokens(self.file).collect();
        let open = toks
            .iter()
            .position(|&k| self.file.token_text(self.src, k) == "[")?;
        self.file
            .token_text(self.src, *toks.get(open + 1)?)
            .parse()
            .ok()
    }

    /// The computation of region `k` of op `o` (its block arguments as parameters;
    /// `pairs`: the pretty reduce's `reducer(%a, %c) (%b, %d)` lists, per input).
    fn body(&mut self, o: usize, k: usize, scope: &Scope, pairs: Option<usize>) -> String {
        let Some(&region) = self.file.ops[o].regions.get(k) else {
            return "missing_region".into();
        };
        let mut params = self.region_args(region);
        if pairs.is_some_and(|n| n > 1 && params.len() == 2 * n) {
            // Written per input (lhs, rhs); HLO takes every lhs, then every rhs.
            let (lhs, rhs): (Vec<_>, Vec<_>) =
                params.iter().enumerate().partition(|(i, _)| i % 2 == 0);
            params = lhs.into_iter().chain(rhs).map(|(_, v)| *v).collect();
        }
        let name = self.computation_name(&format!("region_{o}_{k}"));
        let captures = self.emit_region(region, &params, name.clone(), Some(scope.values.clone()));
        if !captures.is_empty() {
            let op = &self.file.ops[o];
            self.diagnostics.push(Diagnostic::warning(
                op.name_range.clone(),
                "captured-value",
                format!(
                    "the region of {} uses {} from outside: read as extra parameters",
                    op.name,
                    captures
                        .iter()
                        .map(|c| c.0.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        name
    }

    /// `applies stablehlo.add`: a two-parameter computation of that op on scalars of
    /// the result's element type.
    fn scalar_body(&mut self, o: usize, function: &str, results: &[String]) -> String {
        let base = function.rsplit('.').next().unwrap_or(function);
        let opcode = elementwise(base).unwrap_or("add");
        let element = results
            .first()
            .and_then(|t| crate::mlir::types::parse_type(t))
            .and_then(|t| types::element(&t.element))
            .unwrap_or_else(|| "f32".into());
        let name = self.computation_name(&format!("region_{o}_0"));
        let at = self.op_name_range(o);
        let p = |k: usize| Instr {
            name: format!("%p{k}"),
            shape: format!("{element}[]"),
            opcode: "parameter".into(),
            operands: vec![k.to_string()],
            attrs: vec![],
            mlir_name: at.clone(),
            mlir_op: at.clone(),
        };
        let root = Instr {
            name: "%r".into(),
            shape: format!("{element}[]"),
            opcode: opcode.into(),
            operands: vec!["%p0".into(), "%p1".into()],
            attrs: vec![],
            mlir_name: at.clone(),
            mlir_op: at.clone(),
        };
        self.comps.push(Comp {
            name: name.clone(),
            instrs: vec![p(0), p(1), root],
            root: Some(2),
        });
        name
    }

    /// `mhlo.fusion`'s region reads the fusion's operands from outside: they are
    /// its parameters, in the fusion's operand order.
    fn fused(&mut self, o: usize, instr: &mut Instr, scope: &Scope) -> String {
        let name = self.computation_name(&format!("fused_{o}"));
        let Some(&region) = self.file.ops[o].regions.first() else {
            return name;
        };
        // `"mhlo.fusion"(%a, %b) ({^bb0(%p, %q): ...})` names its parameters; the
        // other spelling reads the fusion's operands from outside.
        let params = self.region_args(region);
        let captures = self.emit_region(region, &params, name.clone(), Some(scope.values.clone()));
        if params.is_empty() {
            instr.operands.clear();
        }
        // Values captured from outside are parameters after the block's, in order.
        instr
            .operands
            .extend(captures.iter().map(|(_, v)| v.name.clone()));
        name
    }

    /// The HLO literal of a `stablehlo.constant`: its value when a scalar or a splat,
    /// else zeros of its shape (the maps never read a constant's elements).
    fn literal(&self, v: &OpView, shape: &str) -> String {
        let dense = v
            .words
            .iter()
            .chain(v.attrs.iter().map(|(_, a)| a))
            .find(|w| w.starts_with("dense<"));
        let raw = dense.cloned().unwrap_or_default();
        let inner = raw
            .strip_prefix("dense<")
            .and_then(|r| r.rsplit_once('>'))
            .map_or("0", |(a, _)| a)
            .trim();
        let scalar = scalar_literal(inner, shape);
        let dims: Vec<usize> = shape
            .split_once('[')
            .and_then(|(_, r)| r.split_once(']'))
            .map(|(d, _)| d.split(',').filter_map(|x| x.trim().parse().ok()).collect())
            .unwrap_or_default();
        if dims.is_empty() {
            return scalar;
        }
        let count: usize = dims.iter().product();
        if count > 1 << 16 {
            return scalar;
        }
        let value = if inner.starts_with('[') {
            "0".to_string()
        } else {
            scalar
        };
        nest(&dims, &value)
    }

    /// Writes the module.
    fn write(self, entry: Option<&str>) -> Translation {
        let mut out = String::from("HloModule stablehlo");
        if let Some(n) = sharding::num_partitions(self.src) {
            let _ = write!(out, ", num_partitions={n}");
        }
        if let Some(meshes) = self.meshes.frontend_attributes() {
            let _ = write!(out, ", frontend_attributes={meshes}");
        }
        out.push_str("\n\n");
        let mut lines = Vec::new();
        for comp in &self.comps {
            let is_entry = entry == Some(comp.name.as_str());
            let _ = writeln!(
                out,
                "{}{} {{",
                if is_entry { "ENTRY " } else { "" },
                comp.name
            );
            for (k, i) in comp.instrs.iter().enumerate() {
                let start = out.len();
                out.push_str("  ");
                if comp.root == Some(k) {
                    out.push_str("ROOT ");
                }
                let name_start = out.len();
                out.push_str(&i.name);
                let name_end = out.len();
                let _ = write!(
                    out,
                    " = {} {}({})",
                    i.shape,
                    i.opcode,
                    i.operands.join(", ")
                );
                for a in &i.attrs {
                    let _ = write!(out, ", {a}");
                }
                let named = self.src.get(i.mlir_name.clone()).map(hlo_name);
                lines.push(Line {
                    hlo: start..out.len(),
                    hlo_name: name_start..name_end,
                    mlir_name: i.mlir_name.clone(),
                    mlir_op: i.mlir_op.clone(),
                    primary: named.as_deref() == Some(i.name.as_str()),
                });
                out.push('\n');
            }
            out.push_str("}\n\n");
        }
        Translation {
            hlo: out,
            lines,
            diagnostics: self.diagnostics,
        }
    }
}

/// Whether the instruction written last has a tuple shape whatever its result
/// count: a `while`, an `opt-barrier`.
fn instr_is_tuple_shaped(comp: &Comp) -> bool {
    comp.instrs
        .last()
        .is_some_and(|i| matches!(i.opcode.as_str(), "while" | "opt-barrier"))
}

/// The enum's name in `FFT`, `#stablehlo<fft_type FFT>`, `#mhlo<rng_algorithm PHILOX>`.
fn enum_word(value: &str) -> &str {
    value
        .trim()
        .trim_end_matches('>')
        .split_whitespace()
        .last()
        .unwrap_or("")
}

/// A `reduce_precision`'s exponent and mantissa bits: `format = e5m10` (pretty) or
/// `exponent_bits = 5 : i32, mantissa_bits = 10 : i32` (generic).
fn precision_bits(v: &OpView) -> Option<(i64, i64)> {
    if let Some(format) = v.attr("format") {
        let (e, m) = format.trim().strip_prefix('e')?.split_once('m')?;
        return Some((e.parse().ok()?, m.parse().ok()?));
    }
    let bits = |key: &str| ints(v.attr(key)?).first().copied();
    Some((bits("exponent_bits")?, bits("mantissa_bits")?))
}

/// For each of `len` tuple elements, the index of the result name that holds it
/// (`%a:2, %b` holds 0 and 1 in `%a`, 2 in `%b`); `None` past the names.
fn part_owners(counts: &[usize], len: usize) -> Vec<Option<usize>> {
    let mut owners: Vec<Option<usize>> = counts
        .iter()
        .enumerate()
        .flat_map(|(d, &n)| std::iter::repeat_n(Some(d), n))
        .collect();
    owners.resize(len, None);
    owners
}

/// A scalar literal for HLO from MLIR's text (`0xFF800000` as `-inf`, `true`).
fn scalar_literal(text: &str, shape: &str) -> String {
    let t = text.trim().trim_matches('"');
    if t == "true" || t == "false" {
        return t.into();
    }
    if let Some(hex) = t.strip_prefix("0x") {
        let bits = u64::from_str_radix(hex, 16).unwrap_or(0);
        let value = if shape.starts_with("f32") && hex.len() == 8 {
            f32::from_bits(bits as u32) as f64
        } else if shape.starts_with("f64") {
            f64::from_bits(bits)
        } else if shape.starts_with('f') || shape.starts_with("bf") {
            return "0".into();
        } else {
            return bits.to_string();
        };
        return if value.is_nan() {
            "nan".into()
        } else if value.is_infinite() {
            if value > 0.0 {
                "inf".into()
            } else {
                "-inf".into()
            }
        } else {
            format!("{value}")
        };
    }
    match t.parse::<f64>() {
        Ok(_) => t.to_string(),
        Err(_) => "0".into(),
    }
}

/// `dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>` as HLO's `{{0,1},{2,3}}`: groups
/// of the type's last extent.
/// `channel_id=N` of `channel_handle = #stablehlo.channel_handle<handle = N, ...>`.
fn channel_id(v: &OpView) -> Option<String> {
    let handle = v.attr("channel_handle")?;
    let n = handle.split("handle = ").nth(1)?;
    let n: String = n.chars().take_while(char::is_ascii_digit).collect();
    (!n.is_empty()).then(|| format!("channel_id={n}"))
}

fn replica_groups(value: &str) -> String {
    let ids = ints(value);
    let size = value
        .split_once(" : ")
        .and_then(|(_, t)| crate::mlir::types::parse_type(t.trim()))
        .and_then(|t| t.dims.last().copied().flatten())
        .filter(|&n| n > 0)
        .map_or(ids.len().max(1), |n| n as usize);
    let groups: Vec<String> = ids.chunks(size).map(list).collect();
    format!("{{{}}}", groups.join(","))
}

/// `{{v,v},{v,v}}` for dims `[2,2]`.
fn nest(dims: &[usize], v: &str) -> String {
    match dims.split_first() {
        None => v.to_string(),
        Some((&n, rest)) => {
            let inner = nest(rest, v);
            let parts = vec![inner; n];
            format!("{{{}}}", parts.join(","))
        }
    }
}
