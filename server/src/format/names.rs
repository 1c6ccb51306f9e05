//! The names XLA prints for a module's instructions, which are not always the
//! written ones. XLA's parser names an operand written inline (`add(f32[4]
//! parameter(0), ...)`) `<opcode>.anon`, made unique among the names it has read so
//! far (`HloParserImpl::ParseInstruction`); then adding each computation to the
//! module runs every instruction's name through the module's `NameUniquer`
//! (`HloModule::AddComputationInternal`), so a name a computation before it already
//! used gets the next free numeric suffix (`p0` in a second computation prints as
//! `p0.1`). Both passes go in the order the parser builds things: computations in
//! written order, instructions in the order they are created (an inline operand
//! before its user), which is the model's order.
//!
//! The same module-wide view gives the result shape the parser infers for a `call`
//! or `conditional` written without one: the root of the computation it calls
//! ([`Names::callee_root`]), which the model of one computation does not see.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::model::{ComputationId, ComputationRef, InstrId, Module, Opcode, Shape};

/// XLA's `NameUniquer` with its `.` separator: a name's numeric suffix is split
/// off, and a root seen before gets the lowest suffix not yet used for it.
#[derive(Default)]
pub struct NameUniquer {
    used: HashMap<String, SuffixIds>,
}

/// `NameUniquer::SequentialIdGenerator`: the suffixes used for one root.
#[derive(Default)]
struct SuffixIds {
    next: i64,
    used: HashSet<i64>,
}

impl SuffixIds {
    /// `id` when it is free, else the next free one from where the last search stopped.
    fn register(&mut self, id: i64) -> i64 {
        if self.used.insert(id) {
            return id;
        }
        while !self.used.insert(self.next) {
            self.next += 1;
        }
        self.next += 1;
        self.next - 1
    }
}

impl NameUniquer {
    /// `NameUniquer::GetUniqueName`: `prefix`, sanitized, unless it (or its root
    /// with that suffix) was handed out before.
    pub fn unique(&mut self, prefix: &str) -> String {
        let mut root = sanitized(if prefix.is_empty() { "name" } else { prefix });
        let mut suffix = None;
        if let Some(dot) = root.rfind('.') {
            if dot > 0 && dot + 1 < root.len() {
                if let Ok(n) = root[dot + 1..].parse::<i64>() {
                    // XLA reads the suffix with `SimpleAtoi`, which takes a sign.
                    suffix = Some(n);
                    root.truncate(dot);
                }
            }
        }
        // Looked up before it is copied: most roots are new (a copy kept), and the
        // others need none.
        let id = match self.used.get_mut(&root) {
            Some(ids) => ids.register(suffix.unwrap_or(0)),
            None => {
                let mut ids = SuffixIds::default();
                let id = ids.register(suffix.unwrap_or(0));
                self.used.insert(root.clone(), ids);
                id
            }
        };
        match (id, suffix) {
            (0, None) => root,
            _ => format!("{root}.{id}"),
        }
    }
}

/// `NameUniquer::GetSanitizedName`: characters a name may not hold become `_`, a
/// primitive type's name gets a `_` after it, and a leading `__` (reserved for
/// backends) becomes `a_`.
fn sanitized(name: &str) -> String {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    let mut out: String = name
        .chars()
        .enumerate()
        .map(|(k, c)| match k {
            0 if !(c.is_ascii_alphabetic() || c == '_') => '_',
            _ if !allowed(c) => '_',
            _ => c,
        })
        .collect();
    if out != "tuple" && out != "buffer" && crate::model::PrimitiveType::names().any(|t| t == out) {
        out.push('_');
    }
    if out.starts_with("__") && !out.starts_with("__xla_") {
        out.replace_range(0..1, "a");
    }
    out
}

/// The printed name of every instruction of a module.
pub struct Names<'m> {
    /// By computation index, then instruction index.
    names: Vec<Vec<String>>,
    /// (computation, instruction) of a `call` or `conditional` whose shape is left
    /// out: the computation it calls (the first branch) and that one's root.
    callee_roots: HashMap<(usize, usize), (ComputationRef<'m>, InstrId)>,
}

impl<'m> Names<'m> {
    /// The names XLA gives the instructions of `module` after parsing it.
    pub fn of(module: &'m Module) -> Names<'m> {
        let computations: Vec<ComputationRef> = module.computations().collect();
        // The parser's pass: inline operands named, written names only registered.
        let mut parser = NameUniquer::default();
        let parsed: Vec<Vec<String>> = computations
            .iter()
            .map(|c| {
                c.instructions
                    .iter()
                    .map(|i| match i.synthetic {
                        true => parser.unique(&format!("{}.anon", c.src(i.opcode_range))),
                        false => {
                            parser.unique(&i.name);
                            i.name.to_string()
                        }
                    })
                    .collect()
            })
            .collect();
        // The module's pass: every name made unique across the module.
        let mut module_names = NameUniquer::default();
        let names = parsed
            .into_iter()
            .map(|names| names.iter().map(|n| module_names.unique(n)).collect())
            .collect();
        let mut callee_roots = HashMap::default();
        for c in &computations {
            for i in &c.instructions {
                let unshaped = i.shape_range.is_empty() && matches!(*i.shape, Shape::Invalid);
                if !unshaped || !matches!(i.opcode, Opcode::Call | Opcode::Conditional) {
                    continue;
                }
                let callee = i.called.iter().find_map(|k| module.resolve(k));
                if let Some((callee, root)) = callee.and_then(|k| Some((k, k.root?))) {
                    callee_roots.insert((c.id.index(), i.id.index()), (callee, root));
                }
            }
        }
        Names {
            names,
            callee_roots,
        }
    }

    /// For a `call` or `conditional` of computation `c` written without its shape:
    /// the computation it calls and that one's root, whose shape is its result
    /// (`ShapeInference::InferCallShape`, `InferConditionalShape`).
    pub fn callee_root(
        &self,
        c: ComputationId,
        id: InstrId,
    ) -> Option<(ComputationRef<'m>, InstrId)> {
        self.callee_roots.get(&(c.index(), id.index())).copied()
    }

    /// The printed name of instruction `id` of computation `c`.
    pub fn get(&self, c: ComputationId, id: InstrId) -> &str {
        self.names
            .get(c.index())
            .and_then(|names| names.get(id.index()))
            .map_or("", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_get_xla_suffixes() {
        let mut u = NameUniquer::default();
        assert_eq!(u.unique("p0"), "p0");
        assert_eq!(u.unique("p0"), "p0.1");
        assert_eq!(u.unique("p0.1"), "p0.2");
        assert_eq!(u.unique("x.5"), "x.5");
        assert_eq!(u.unique("x"), "x");
        assert_eq!(u.unique("x"), "x.1");
        assert_eq!(u.unique("add.anon"), "add.anon");
        assert_eq!(u.unique("add.anon"), "add.anon.1");
        assert_eq!(u.unique("y.0"), "y.0");
        assert_eq!(u.unique("f32"), "f32_");
        assert_eq!(u.unique("__a"), "a_a");
    }
}
