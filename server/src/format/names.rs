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

use rayon::prelude::*;
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
    let mut out: String = name
        .chars()
        .enumerate()
        .map(|(k, c)| match k {
            0 if !may_start(c) => '_',
            _ if !may_hold(c) => '_',
            _ => c,
        })
        .collect();
    if is_type_name(&out) {
        out.push('_');
    }
    if is_reserved(&out) {
        out.replace_range(0..1, "a");
    }
    out
}

/// The characters a sanitized name starts with.
fn may_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

/// The characters a sanitized name holds.
fn may_hold(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// A primitive type's name, which a name may not be (`tuple` and `buffer` may).
fn is_type_name(name: &str) -> bool {
    // No type name has a dot, and most names in a dump do (`fusion.25`).
    !name.contains('.')
        && name != "tuple"
        && name != "buffer"
        && crate::model::PrimitiveType::names().any(|t| t == name)
}

/// A leading `__` other than `__xla_`, reserved for backends.
fn is_reserved(name: &str) -> bool {
    name.starts_with("__") && !name.starts_with("__xla_")
}

/// Whether `name` is what [`NameUniquer::unique`] gives for it when its root and
/// suffix were not handed out before: sanitized already, and a numeric suffix
/// written as XLA writes a number (`x.01` prints as `x.1`). Its (root, suffix) key
/// when it is, read without a copy.
fn as_written(name: &str) -> Option<(&str, i64)> {
    let bytes = name.as_bytes();
    let first_ok = bytes.first().is_some_and(|&b| may_start(char::from(b)));
    if !first_ok || !bytes.iter().all(|&b| may_hold(char::from(b))) {
        return None;
    }
    if is_reserved(name) || is_type_name(name) {
        return None;
    }
    let Some(dot) = name.rfind('.').filter(|&d| d > 0 && d + 1 < name.len()) else {
        return Some((name, 0));
    };
    let suffix = &name[dot + 1..];
    let Ok(id) = suffix.parse::<i64>() else {
        return Some((name, 0));
    };
    let digits = suffix.strip_prefix('-').unwrap_or(suffix);
    let canonical =
        !suffix.starts_with('+') && (digits == "0" && suffix == "0" || !digits.starts_with('0'));
    canonical.then_some((&name[..dot], id))
}

/// The printed name of every instruction of a module.
pub struct Names<'m> {
    /// By computation index, then instruction index; `None` when every name prints
    /// as written ([`written_names_print`]), the dumps' case.
    names: Option<Vec<Vec<String>>>,
    /// (computation, instruction) of a `call` or `conditional` whose shape is left
    /// out: the computation it calls (the first branch) and that one's root.
    callee_roots: HashMap<(usize, usize), (ComputationRef<'m>, InstrId)>,
}

/// Whether XLA prints every instruction of a module under its written name, given
/// every instruction's [`name_key`] (`None` when one has none): no operand
/// written inline (the parser names those), every name [`as_written`], and no two
/// with the same root and suffix (the module's `NameUniquer` hands each out once).
/// Then the uniquer's two passes, sequential and a string per instruction (half a
/// second on a 58 MiB dump), change nothing. The keys are hashes; two names with
/// the same hash take the uniquer's road, which is always right.
fn written_names_print(keys: Option<Vec<u64>>) -> bool {
    let Some(mut keys) = keys else {
        return false;
    };
    keys.par_sort_unstable();
    keys.windows(2).all(|w| w[0] != w[1])
}

/// The (root, suffix) key of `i`'s name hashed, when XLA prints it as written
/// ([`written_names_print`]).
pub(super) fn name_key(c: &ComputationRef, i: &crate::model::Instruction) -> Option<u64> {
    use std::hash::{BuildHasher, BuildHasherDefault};
    let hasher = BuildHasherDefault::<rustc_hash::FxHasher>::default();
    match i.synthetic {
        true => None,
        false => as_written(written_name(c, i)).map(|key| hasher.hash_one(key)),
    }
}

/// The name of `i` read from the text, which is read in order, where each model
/// name is an allocation of its own: five million names scattered in memory made
/// the check wait on memory. The model's name when the text's differs from it.
fn written_name<'c>(c: &'c ComputationRef, i: &'c crate::model::Instruction) -> &'c str {
    let written = c.src(i.name_range);
    let written = written.strip_prefix('%').unwrap_or(written);
    match written.len() == i.name.len() {
        true => written,
        false => &i.name,
    }
}

impl<'m> Names<'m> {
    /// The names XLA gives the instructions of `module` after parsing it, given
    /// the [`name_key`] of every instruction.
    pub fn of(module: &'m Module, name_keys: Option<Vec<u64>>) -> Names<'m> {
        let computations: Vec<ComputationRef> = module.computations().collect();
        let names = match written_names_print(name_keys) {
            true => None,
            false => Some(uniqued(&computations)),
        };
        let callee_roots = computations
            .par_iter()
            .flat_map_iter(|c| {
                c.instructions.iter().filter_map(move |i| {
                    let unshaped = i.shape_range.is_empty() && matches!(*i.shape, Shape::Invalid);
                    if !unshaped || !matches!(i.opcode, Opcode::Call | Opcode::Conditional) {
                        return None;
                    }
                    let callee = i.called.iter().find_map(|k| module.resolve(k))?;
                    Some(((c.id.index(), i.id.index()), (callee, callee.root?)))
                })
            })
            .collect();
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

    /// Whether every instruction prints under its written name
    /// ([`written_names_print`]): then a computation's names are its own text's.
    pub fn as_written(&self) -> bool {
        self.names.is_none()
    }

    /// The printed name of instruction `id` of computation `c`.
    pub fn get<'a>(&'a self, c: &'a ComputationRef, id: InstrId) -> &'a str {
        let Some(names) = &self.names else {
            return c.instructions.get(id.index()).map_or("", |i| &i.name);
        };
        names
            .get(c.id.index())
            .and_then(|names| names.get(id.index()))
            .map_or("", String::as_str)
    }
}

/// The names of `computations` through XLA's two passes: the parser's (inline
/// operands named, written names only registered), then the module's (every name
/// made unique across the module).
fn uniqued(computations: &[ComputationRef]) -> Vec<Vec<String>> {
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
    let mut module_names = NameUniquer::default();
    parsed
        .into_iter()
        .map(|names| names.iter().map(|n| module_names.unique(n)).collect())
        .collect()
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

    #[test]
    fn a_name_prints_as_written_only_in_xla_form() {
        for name in [
            "p0",
            "x.5",
            "x.0",
            "x.-3",
            "fusion.25",
            "_a",
            "__xla_a",
            "a-b",
            "y.",
        ] {
            assert!(as_written(name).is_some(), "{name}");
            assert_eq!(NameUniquer::default().unique(name), name);
        }
        for name in [
            "x.01", "x.+1", "x.-0", "x.00", "f32", "__a", "1a", "a b", "",
        ] {
            assert!(as_written(name).is_none(), "{name}");
        }
    }

    use proptest::prelude::*;

    /// A name from a small alphabet, so that roots and suffixes repeat.
    fn name() -> impl Strategy<Value = String> {
        let root = prop::sample::select(vec!["p", "x", "f32", "a.b", "__a", "add.anon", "q-"]);
        let suffix = prop::sample::select(vec!["", ".0", ".1", ".2", ".01", ".-1", ".x", "."]);
        (root, suffix).prop_map(|(r, s)| format!("{r}{s}"))
    }

    proptest! {
        /// Names the module's instructions print under, read without the uniquer
        /// when they may be, are the uniquer's names: a differential test of
        /// [`written_names_print`] against [`uniqued`] on modules whose names collide
        /// within and across computations, some written inline.
        #[test]
        fn names_printed_as_written_are_the_uniquers(
            computations in prop::collection::vec(prop::collection::vec((name(), any::<bool>()), 1..5), 1..4),
        ) {
            let mut text = String::from("HloModule m\n\n");
            for (k, names) in computations.iter().enumerate() {
                let entry = if k + 1 == computations.len() { "ENTRY " } else { "" };
                text += &format!("{entry}c{k} {{\n  %{} = f32[2] parameter(0)\n", names[0].0);
                for (j, (name, inline)) in names.iter().enumerate().skip(1) {
                    let operand = match inline {
                        true => "f32[2] parameter(1)".to_string(),
                        false => format!("%{}", names[j - 1].0),
                    };
                    text += &format!("  %{name} = f32[2] negate({operand})\n");
                }
                text += "}\n\n";
            }
            let doc = crate::model::Document::parse(&text);
            let module = &doc.file().modules[0];
            let names = Names::of(module, super::super::scan::ModuleScan::of(module, false).name_keys);
            let computations: Vec<ComputationRef> = module.computations().collect();
            let want = uniqued(&computations);
            for c in &computations {
                for (k, _) in c.instructions.iter().enumerate() {
                    prop_assert_eq!(names.get(c, InstrId(k as u32)), &want[c.id.index()][k], "{}", text);
                }
            }
        }
    }
}
