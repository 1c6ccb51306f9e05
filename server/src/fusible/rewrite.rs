//! A module's text rewritten by priority fusion's steps: what XLA's
//! `PriorityFusion::Fuse` does to the HLO, on text.
//!
//! A producer fused into a consumer that is not a fusion first wraps the consumer in a
//! new fusion instruction (`fusion`, `fusion.1`, ... calling `fused_computation`,
//! `fused_computation.1`, ..., as XLA names them: the consumer keeps its name inside,
//! its users now read the fusion); the producer then goes into the fused computation
//! in place of the parameter that received it (a fusion producer's body is merged,
//! `MergeFusionInstruction`), its own operands becoming new parameters of the fusion.
//! A producer left without users is removed, with its fused computation. Every other
//! instruction keeps its name and text.
//!
//! The rewrite works on a plain list of instructions built from the model
//! ([`Text::new`]) and prints HLO text XLA's parser reads ([`Text::print`]).
//! Multi-output producers are not rewritten (`Err`).

use crate::model::{ComputationRef, Instruction, Module, Opcode, Span};

/// The operand list of an instruction: names, or literal text kept as written
/// (`constant(1)`, `parameter(0)`).
#[derive(Clone, Debug, PartialEq)]
enum Args {
    Names(Vec<String>),
    Verbatim(String),
}

/// One instruction as text parts.
#[derive(Clone, Debug, PartialEq)]
struct Ins {
    name: String,
    root: bool,
    shape: String,
    opcode: String,
    args: Args,
    /// Everything after the operand list: `, kind=kLoop, calls=f`.
    tail: String,
}

impl Ins {
    fn operands(&self) -> &[String] {
        match &self.args {
            Args::Names(n) => n,
            Args::Verbatim(_) => &[],
        }
    }

    fn calls(&self) -> Option<String> {
        let at = self.tail.find("calls=")? + "calls=".len();
        let rest = &self.tail[at..];
        let end = rest
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(rest.len());
        Some(rest[..end].trim_start_matches('%').to_string())
    }
}

/// One computation: its header (name, signature) and instructions.
#[derive(Clone, Debug, PartialEq)]
struct Comp {
    name: String,
    entry: bool,
    signature: Option<String>,
    instrs: Vec<Ins>,
}

/// A module as rewritable text.
#[derive(Clone, Debug, PartialEq)]
pub struct Text {
    header: String,
    comps: Vec<Comp>,
    /// Computations changed, added or removed by [`Text::fuse`] (names).
    touched: std::collections::BTreeSet<String>,
    /// How many computations and instructions use each name (for [`Text::unique`]).
    names: std::collections::HashMap<String, u32>,
}

fn ins(c: ComputationRef<'_>, i: &Instruction) -> Option<Ins> {
    let names: Option<Vec<String>> = i
        .operands
        .iter()
        .map(|o| {
            let t = c.instruction(o.target?);
            (!t.synthetic).then(|| t.name.to_string())
        })
        .collect();
    let literal = !i.literals.is_empty()
        || matches!(i.opcode, Opcode::Parameter | Opcode::Constant)
        || i.operands.is_empty();
    let args = match (literal, names) {
        (false, Some(n)) => Args::Names(n),
        _ => Args::Verbatim(c.src(i.operands_range).to_string()),
    };
    Some(Ins {
        name: i.name.to_string(),
        root: i.is_root,
        shape: c.src(i.shape_range).to_string(),
        opcode: c.src(i.opcode_range).to_string(),
        args,
        tail: c
            .src(Span {
                start: i.operands_range.end,
                end: i.range.end,
            })
            .to_string(),
    })
}

impl Text {
    /// The module's computations as text parts; `full` is the document text (the
    /// header is what precedes the first computation).
    pub fn new(module: &Module, full: &str) -> Text {
        let mut comps = vec![];
        let mut first = usize::MAX;
        for c in module.computations() {
            first = first.min(c.range().start);
            let instrs = c
                .model()
                .instructions
                .iter()
                .filter(|i| !i.synthetic)
                .filter_map(|i| ins(c, i))
                .collect();
            comps.push(Comp {
                name: c.name.clone(),
                entry: c.is_entry,
                signature: c.signature_range.map(|s| c.src(s).to_string()),
                instrs,
            });
        }
        // The `HloModule` line and the tables (`FileNames`, `StackFrames`, ...) that
        // metadata refers to.
        let header = full
            .get(..first.min(full.len()))
            .unwrap_or("")
            .trim()
            .to_string();
        let mut text = Text {
            header,
            comps,
            touched: Default::default(),
            names: Default::default(),
        };
        let all: Vec<String> = text.comps.iter().flat_map(comp_names).collect();
        all.into_iter().for_each(|n| text.name_added(n));
        text
    }

    /// HLO text: the header, then each computation.
    pub fn print(&self) -> String {
        let mut out = self.print_header();
        for c in &self.comps {
            out.push_str(&print_comp(c));
        }
        out
    }

    /// What [`Text::print`] writes before the first computation.
    pub fn print_header(&self) -> String {
        if self.header.is_empty() {
            String::new()
        } else {
            format!("{}\n\n", self.header)
        }
    }

    /// The computations' names, in the order [`Text::print`] writes them.
    pub fn computation_names(&self) -> impl Iterator<Item = &str> {
        self.comps.iter().map(|c| c.name.as_str())
    }

    /// What [`Text::print`] writes for computation `name`.
    pub fn print_computation(&self, name: &str) -> Option<String> {
        self.comp_index(name).map(|ci| print_comp(&self.comps[ci]))
    }

    /// The computations [`Text::fuse`] added, changed or removed since the last call.
    pub fn take_touched(&mut self) -> std::collections::BTreeSet<String> {
        std::mem::take(&mut self.touched)
    }

    fn comp_index(&self, name: &str) -> Option<usize> {
        self.comps.iter().position(|c| c.name == name)
    }

    fn name_added(&mut self, name: String) {
        *self.names.entry(name).or_default() += 1;
    }

    fn name_removed(&mut self, name: &str) {
        if let Some(n) = self.names.get_mut(name) {
            *n -= 1;
            if *n == 0 {
                self.names.remove(name);
            }
        }
    }

    /// `base`, or `base.N` with the smallest `N` no computation or instruction uses.
    fn unique(&self, base: &str) -> String {
        let taken = |n: &str| self.names.contains_key(n);
        if !taken(base) {
            return base.to_string();
        }
        (1..)
            .map(|k| format!("{base}.{k}"))
            .find(|n| !taken(n))
            .unwrap_or_default()
    }

    /// `PriorityFusion::Fuse`: `producer` into `consumer`, both instructions of
    /// computation `comp`, the new fusion (if one is made) of `kind` (`kLoop`,
    /// `kInput`, `kCustom`). Returns the consumer's name after the step.
    pub fn fuse(
        &mut self,
        comp: &str,
        producer: &str,
        consumer: &str,
        kind: &str,
    ) -> Result<String, String> {
        let ci = self.comp_index(comp).ok_or("no such computation")?;
        let find = |t: &Text, n: &str| t.comps[ci].instrs.iter().position(|i| i.name == n);
        let p = find(self, producer).ok_or("no producer")?;
        let c = find(self, consumer).ok_or("no consumer")?;
        if self.comps[ci].instrs[p].shape.starts_with('(') {
            return Err(format!("%{producer} is multi-output: not rewritten"));
        }
        let fusion_name = if self.comps[ci].instrs[c].opcode == "fusion" {
            consumer.to_string()
        } else {
            self.wrap_in_fusion(ci, c, kind)
        };
        // The new fused computation went in before `comp`.
        let ci = self.comp_index(comp).ok_or("no such computation")?;
        let find = |t: &Text, n: &str| t.comps[ci].instrs.iter().position(|i| i.name == n);
        let p = find(self, producer).ok_or("no producer")?;
        let c = find(self, &fusion_name).ok_or("no fusion")?;
        let body = self.comps[ci].instrs[c]
            .calls()
            .ok_or("fusion without calls")?;
        let fi = self.comp_index(&body).ok_or("no fused computation")?;
        self.inline_producer(ci, p, c, fi);
        // A producer with no users left is gone, with its fused computation.
        let used = self.comps[ci]
            .instrs
            .iter()
            .any(|i| i.operands().iter().any(|o| o == producer));
        if !used {
            let p = find(self, producer).ok_or("no producer")?;
            let gone = self.comps[ci].instrs.remove(p);
            self.name_removed(&gone.name);
            if let Some(callee) = gone.calls() {
                let still_called = self.comps.iter().any(|c| {
                    c.instrs.iter().any(|i| {
                        i.tail.contains(callee.as_str()) && i.calls().as_deref() == Some(&callee)
                    })
                });
                if !still_called {
                    if let Some(k) = self.comp_index(&callee) {
                        let removed = self.comps.remove(k);
                        comp_names(&removed).for_each(|n| self.name_removed(&n));
                        self.touched.insert(callee);
                    }
                }
            }
        }
        self.touched.insert(comp.to_string());
        self.touched.insert(body);
        Ok(fusion_name)
    }

    /// Wraps instruction `c` of computation `ci` in a new fusion of `kind`: a new
    /// fused computation (placed before `ci`) computes it from parameters; the fusion
    /// takes its place and its users' operands. Returns the fusion's name.
    fn wrap_in_fusion(&mut self, ci: usize, c: usize, kind: &str) -> String {
        let fusion = self.unique("fusion");
        let body = self.unique("fused_computation");
        let consumer = self.comps[ci].instrs[c].clone();
        let mut operands: Vec<String> = vec![];
        for o in consumer.operands() {
            if !operands.contains(o) {
                operands.push(o.clone());
            }
        }
        let mut instrs: Vec<Ins> = operands
            .iter()
            .enumerate()
            .map(|(k, o)| parameter(&format!("param_{k}"), &self.shape_of(ci, o), k))
            .collect();
        let rename = |o: &String| {
            let k = operands.iter().position(|x| x == o).unwrap_or(0);
            format!("param_{k}")
        };
        let mut root = consumer.clone();
        root.root = true;
        if let Args::Names(n) = &mut root.args {
            *n = n.iter().map(rename).collect();
        }
        instrs.push(root);
        let tail = if kind == "kCustom" {
            ", kind=kCustom, calls=".to_string()
                + &body
                + ", backend_config={\"fusion_backend_config\":{\"kind\":\"__triton\"}}"
        } else {
            format!(", kind={kind}, calls={body}")
        };
        let wrapper = Ins {
            name: fusion.clone(),
            root: consumer.root,
            shape: consumer.shape.clone(),
            opcode: "fusion".into(),
            args: Args::Names(operands),
            tail,
        };
        let old = consumer.name.clone();
        self.comps[ci].instrs[c] = wrapper;
        for i in &mut self.comps[ci].instrs {
            if let Args::Names(n) = &mut i.args {
                for o in n.iter_mut().filter(|o| **o == old) {
                    *o = fusion.clone();
                }
            }
        }
        let comp = Comp {
            name: body,
            entry: false,
            signature: None,
            instrs,
        };
        self.name_added(fusion.clone());
        for k in 0..comp.instrs.len().saturating_sub(1) {
            self.name_added(comp.instrs[k].name.clone());
        }
        self.name_added(comp.name.clone());
        self.touched.insert(comp.name.clone());
        self.comps.insert(ci, comp);
        fusion
    }

    fn shape_of(&self, ci: usize, name: &str) -> String {
        self.comps[ci]
            .instrs
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.shape.clone())
            .unwrap_or_default()
    }

    /// Puts producer `p` of computation `ci` into fusion `c`'s fused computation
    /// `fi`, replacing the parameters that received it; the producer's operands
    /// become the fusion's operands (and parameters) when they are not already.
    fn inline_producer(&mut self, ci: usize, p: usize, c: usize, fi: usize) {
        let producer = self.comps[ci].instrs[p].clone();
        let fusion = self.comps[ci].instrs[c].clone();
        let old_operands = fusion.operands().to_vec();
        // The producer's body: a fusion's instructions, or the producer itself.
        let mut body: Vec<Ins> = match producer.calls().and_then(|n| self.comp_index(&n)) {
            Some(pi) if producer.opcode == "fusion" => self.comps[pi].instrs.clone(),
            _ => {
                let mut own = producer.clone();
                own.root = true;
                let params: Vec<Ins> = producer
                    .operands()
                    .iter()
                    .enumerate()
                    .map(|(k, o)| parameter(&format!("param_{k}"), &self.shape_of(ci, o), k))
                    .collect();
                if let Args::Names(n) = &mut own.args {
                    *n = (0..n.len()).map(|k| format!("param_{k}")).collect();
                }
                params.into_iter().chain([own]).collect()
            }
        };
        // New operand list: the fusion's without the producer, then the producer's.
        let mut operands: Vec<String> = old_operands
            .iter()
            .filter(|o| **o != producer.name)
            .cloned()
            .collect();
        operands.dedup();
        for o in producer.operands() {
            if !operands.contains(o) {
                operands.push(o.clone());
            }
        }
        let old_names: Vec<String> = comp_names(&self.comps[fi]).collect();
        old_names.iter().for_each(|n| self.name_removed(n));
        let fused = &mut self.comps[fi].instrs;
        let param_number = |i: &Ins| match (&i.opcode[..], &i.args) {
            ("parameter", Args::Verbatim(v)) => v
                .trim_matches(|c| c == '(' || c == ')')
                .trim()
                .parse::<usize>()
                .ok(),
            _ => None,
        };
        // Old parameters: those that received the producer now read its root.
        let mut from_fusion: Vec<String> = vec![];
        let mut kept: Vec<Ins> = vec![];
        for i in fused.drain(..) {
            match param_number(&i) {
                Some(k) if old_operands.get(k) == Some(&producer.name) => {
                    from_fusion.push(i.name.clone());
                }
                Some(k) => {
                    let new = operands
                        .iter()
                        .position(|o| Some(o) == old_operands.get(k))
                        .unwrap_or(k);
                    kept.push(Ins {
                        args: Args::Verbatim(format!("({new})")),
                        ..i
                    });
                }
                None => kept.push(i),
            }
        }
        // The producer's parameters become the fusion's (reusing one the fusion has);
        // its other instructions keep their names unless the fusion has them.
        let mut taken: Vec<String> = kept.iter().map(|i| i.name.clone()).collect();
        let mut body_renames: Vec<(String, String)> = vec![];
        let mut new_params: Vec<Ins> = vec![];
        let mut inserted: Vec<Ins> = vec![];
        let mut root_name = String::new();
        for mut i in body.drain(..) {
            if let Some(k) = param_number(&i) {
                let operand = producer.operands().get(k).cloned().unwrap_or_default();
                let new = operands.iter().position(|o| *o == operand).unwrap_or(k);
                let existing = kept
                    .iter()
                    .chain(&new_params)
                    .find(|x| param_number(x) == Some(new))
                    .map(|x| x.name.clone());
                let name = existing.unwrap_or_else(|| {
                    let name = fresh(&taken, &i.name);
                    taken.push(name.clone());
                    new_params.push(Ins {
                        name: name.clone(),
                        args: Args::Verbatim(format!("({new})")),
                        root: false,
                        ..i.clone()
                    });
                    name
                });
                body_renames.push((i.name.clone(), name));
                continue;
            }
            let name = fresh(&taken, &i.name);
            body_renames.push((i.name.clone(), name.clone()));
            taken.push(name.clone());
            if i.root {
                root_name = name.clone();
            }
            i.name = name;
            i.root = false;
            rename_operands(&mut i, &body_renames);
            inserted.push(i);
        }
        if root_name.is_empty() {
            root_name = inserted.last().map(|i| i.name.clone()).unwrap_or_default();
        }
        let fusion_renames: Vec<(String, String)> = from_fusion
            .into_iter()
            .map(|n| (n, root_name.clone()))
            .collect();
        for i in &mut kept {
            rename_operands(i, &fusion_renames);
        }
        // New parameters first, then the producer's instructions before the first
        // instruction of the fusion that is not a parameter.
        let at = kept
            .iter()
            .position(|i| param_number(i).is_none())
            .unwrap_or(kept.len());
        kept.splice(at..at, inserted);
        kept.splice(0..0, new_params);
        *fused = kept;
        let new_names: Vec<String> = comp_names(&self.comps[fi]).collect();
        new_names.into_iter().for_each(|n| self.name_added(n));
        self.comps[ci].instrs[c].args = Args::Names(operands);
    }
}

/// The names a computation uses: its own and its instructions'.
fn comp_names(c: &Comp) -> impl Iterator<Item = String> + '_ {
    std::iter::once(c.name.clone()).chain(c.instrs.iter().map(|i| i.name.clone()))
}

/// One computation as [`Text::print`] writes it: its header line, one line per
/// instruction, and a blank line after the closing brace.
fn print_comp(c: &Comp) -> String {
    let mut out = String::new();
    if c.entry {
        out.push_str("ENTRY ");
    }
    out.push_str(&c.name);
    if let Some(s) = &c.signature {
        out.push(' ');
        out.push_str(s);
    }
    out.push_str(" {\n");
    for i in &c.instrs {
        out.push_str("  ");
        if i.root {
            out.push_str("ROOT ");
        }
        out.push_str(&i.name);
        out.push_str(" = ");
        out.push_str(&i.shape);
        out.push(' ');
        out.push_str(&i.opcode);
        match &i.args {
            Args::Names(n) => {
                out.push('(');
                out.push_str(&n.join(", "));
                out.push(')');
            }
            Args::Verbatim(v) => out.push_str(v),
        }
        out.push_str(&i.tail);
        out.push('\n');
    }
    out.push_str("}\n\n");
    out
}

/// Renames the operands of `i` by `renames` (`from`, `to`).
fn rename_operands(i: &mut Ins, renames: &[(String, String)]) {
    if let Args::Names(n) = &mut i.args {
        for o in n.iter_mut() {
            if let Some((_, to)) = renames.iter().find(|(from, _)| from == o) {
                *o = to.clone();
            }
        }
    }
}

/// `name = shape parameter(k)`.
fn parameter(name: &str, shape: &str, k: usize) -> Ins {
    Ins {
        name: name.to_string(),
        root: false,
        shape: shape.to_string(),
        opcode: "parameter".into(),
        args: Args::Verbatim(format!("({k})")),
        tail: String::new(),
    }
}

/// `name`, or `name.N` when `taken` has it.
fn fresh(taken: &[String], name: &str) -> String {
    if !taken.iter().any(|t| t == name) {
        return name.to_string();
    }
    (1..)
        .map(|k| format!("{name}.{k}"))
        .find(|n| !taken.contains(n))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model;

    fn fused(text: &str, steps: &[(&str, &str, &str)]) -> String {
        let file = model::parse_hlo(text);
        let mut t = Text::new(&file.modules[0], text);
        for (p, c, kind) in steps {
            t.fuse("e", p, c, kind).unwrap();
        }
        t.print()
    }

    #[test]
    fn a_producer_goes_into_a_new_fusion_then_into_an_existing_one() {
        let text = "HloModule m\n\nENTRY e {\n  p0 = f32[8] parameter(0)\n  p1 = f32[8] parameter(1)\n  a = f32[8] add(p0, p1)\n  n = f32[8] negate(a)\n  ROOT x = f32[8] exponential(n)\n}\n";
        let out = fused(text, &[("n", "x", "kLoop"), ("a", "fusion", "kLoop")]);
        let expected = "HloModule m\n\nfused_computation {\n  param_0 = f32[8] parameter(0)\n  param_1 = f32[8] parameter(1)\n  a = f32[8] add(param_0, param_1)\n  n = f32[8] negate(a)\n  ROOT x = f32[8] exponential(n)\n}\n\nENTRY e {\n  p0 = f32[8] parameter(0)\n  p1 = f32[8] parameter(1)\n  ROOT fusion = f32[8] fusion(p0, p1), kind=kLoop, calls=fused_computation\n}\n\n";
        assert_eq!(out, expected);
        let reparsed = model::parse_hlo(&out);
        assert!(
            reparsed.diagnostics.is_empty(),
            "{:?}",
            reparsed.diagnostics
        );
    }

    #[test]
    fn a_producer_with_two_users_is_duplicated_and_then_removed() {
        let text = "HloModule m\n\nENTRY e {\n  p0 = f32[8] parameter(0)\n  a = f32[8] negate(p0)\n  b = f32[8] exponential(a)\n  c = f32[8] log(a)\n  ROOT t = (f32[8], f32[8]) tuple(b, c)\n}\n";
        let out = fused(text, &[("a", "b", "kLoop"), ("a", "c", "kLoop")]);
        assert!(!out.contains("  a = f32[8] negate(p0)"), "{out}");
        assert!(out.contains("ROOT t = (f32[8], f32[8]) tuple(fusion, fusion.1)"));
        assert!(out.contains("fused_computation.1 {"));
        let reparsed = model::parse_hlo(&out);
        assert!(
            reparsed.diagnostics.is_empty(),
            "{:?}",
            reparsed.diagnostics
        );
    }
}
