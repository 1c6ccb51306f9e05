//! The statement reader: from tokens to what the server needs of an MLIR file:
//! attribute aliases and their uses, map attributes, operations (their header
//! tokens), SSA values (definitions and uses, scoped by region), functions.
//!
//! It reads MLIR's custom assembly loosely: an operation starts at the first
//! token of a line outside brackets (`%r = dialect.op ...` or `dialect.op ...`)
//! and its header runs to the next such line or to the `{` that opens its region.
//! That is enough for the ops whose syntax the analysis decodes (see
//! [`super::ops`]) and is robust to excerpts: `...` lines, repeated function
//! names and unbalanced text only affect the statement they are in.

use std::ops::Range;

use super::lexer::{tokenize, TokKind, Token};
use super::maps::{self, MapKind};
use crate::algebra::IndexingMap;
use crate::model::Diagnostic;

/// `#name = <attribute>` at the top level.
#[derive(Clone, Debug)]
pub struct AttrAlias {
    pub name: String,
    pub name_range: Range<usize>,
    /// The aliased attribute's text.
    pub value_range: Range<usize>,
    /// Index into [`MlirFile::maps`] when the value is a map.
    pub map: Option<usize>,
}

/// A use `#name` of an alias; `target` is the definition it resolves to.
#[derive(Clone, Debug)]
pub struct AliasUse {
    pub name: String,
    pub range: Range<usize>,
    pub target: Option<usize>,
}

/// One `affine_map<...>`, `affine_set<...>` or `#xla.indexing_map<"...">` in the text.
#[derive(Clone, Debug)]
pub struct MapSite {
    pub kind: MapKind,
    /// The whole attribute, `affine_map<...>`.
    pub range: Range<usize>,
    pub map: Result<IndexingMap, maps::MapError>,
}

/// A region (`{ ... }` of an op) for SSA scoping; region 0 is the file.
#[derive(Clone, Debug)]
pub struct Region {
    pub parent: Option<usize>,
    pub range: Range<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// Result of the op with this index into [`MlirFile::ops`].
    OpResult(usize),
    /// Function argument.
    Argument,
    /// Block argument (`^bb0(%in: f32)`) or op-defined region value (`scf.for %i = ...`).
    BlockArgument,
}

#[derive(Clone, Debug)]
pub struct ValueDef {
    pub name: String,
    pub range: Range<usize>,
    pub kind: ValueKind,
    pub region: usize,
    /// Type text when written next to the definition (`%arg0: tensor<...>`).
    pub ty: Option<String>,
}

#[derive(Clone, Debug)]
pub struct ValueUse {
    /// Name without a `#k` result number.
    pub name: String,
    pub range: Range<usize>,
    pub region: usize,
    /// Index into [`MlirFile::values`].
    pub target: Option<usize>,
}

/// One operation: its name and header tokens (not its regions' contents).
#[derive(Clone, Debug)]
pub struct Op {
    pub name: String,
    pub name_range: Range<usize>,
    /// From the first result (or the name) to the end of the header.
    pub range: Range<usize>,
    /// Token indices of the header after the op name.
    pub tokens: Range<usize>,
    /// Indices into [`MlirFile::values`] of the results.
    pub results: Vec<usize>,
    /// The function it is in (index into [`MlirFile::funcs`]).
    pub func: Option<usize>,
    /// The region the op is in.
    pub region: usize,
}

#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub name_range: Range<usize>,
    /// The `func.func` op's header plus body.
    pub range: Range<usize>,
    pub op: usize,
}

/// Everything the reader found; never fails (diagnostics for what it could not read).
#[derive(Clone, Debug, Default)]
pub struct MlirFile {
    pub tokens: Vec<Token>,
    pub aliases: Vec<AttrAlias>,
    pub alias_uses: Vec<AliasUse>,
    pub maps: Vec<MapSite>,
    pub ops: Vec<Op>,
    pub values: Vec<ValueDef>,
    pub value_uses: Vec<ValueUse>,
    pub funcs: Vec<Func>,
    pub regions: Vec<Region>,
    pub diagnostics: Vec<Diagnostic>,
}

impl MlirFile {
    pub fn token_text<'a>(&self, src: &'a str, i: usize) -> &'a str {
        self.tokens.get(i).map_or("", |t| t.text(src))
    }

    /// The alias definition an alias use or definition at `byte` refers to.
    pub fn alias_at(&self, byte: usize) -> Option<usize> {
        if let Some(i) = self
            .aliases
            .iter()
            .position(|a| a.name_range.contains(&byte))
        {
            return Some(i);
        }
        self.alias_uses
            .iter()
            .find(|u| u.range.contains(&byte))
            .and_then(|u| u.target)
    }

    /// The value definition a value use or definition at `byte` refers to.
    pub fn value_at(&self, byte: usize) -> Option<usize> {
        if let Some(i) = self.values.iter().position(|v| v.range.contains(&byte)) {
            return Some(i);
        }
        self.value_uses
            .iter()
            .find(|u| u.range.contains(&byte))
            .and_then(|u| u.target)
    }

    /// The map attribute whose text contains `byte`.
    pub fn map_at(&self, byte: usize) -> Option<usize> {
        self.maps.iter().position(|m| m.range.contains(&byte))
    }

    /// Innermost op whose header contains `byte`.
    pub fn op_at(&self, byte: usize) -> Option<usize> {
        self.ops.iter().rposition(|o| o.range.contains(&byte))
    }

    fn ancestors(&self, mut region: usize) -> Vec<usize> {
        let mut out = vec![region];
        while let Some(p) = self.regions.get(region).and_then(|r| r.parent) {
            out.push(p);
            region = p;
        }
        out
    }
}

/// Reads `src`. Never fails.
pub fn read(src: &str) -> MlirFile {
    let mut r = Reader {
        src,
        file: MlirFile {
            tokens: tokenize(src),
            regions: vec![Region {
                parent: None,
                range: 0..src.len(),
            }],
            ..MlirFile::default()
        },
        stack: Vec::new(),
        func_stack: Vec::new(),
    };
    r.run();
    r.resolve();
    r.file
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Open {
    Paren,
    Bracket,
    /// `{` of an attribute dictionary (part of a header).
    Dict,
    /// `{` of a region, with its id.
    Region(usize),
}

struct Reader<'a> {
    src: &'a str,
    file: MlirFile,
    stack: Vec<Open>,
    /// (region id, func index) of open `func.func` bodies.
    func_stack: Vec<(usize, usize)>,
}

impl Reader<'_> {
    fn kind(&self, i: usize) -> Option<TokKind> {
        self.file.tokens.get(i).map(|t| t.kind)
    }
    fn text(&self, i: usize) -> &str {
        self.file.token_text(self.src, i)
    }
    fn range(&self, i: usize) -> Range<usize> {
        self.file.tokens[i].range.clone()
    }
    fn is_punct(&self, i: usize, p: &str) -> bool {
        self.kind(i) == Some(TokKind::Punct) && self.text(i) == p
    }
    fn region(&self) -> usize {
        self.stack
            .iter()
            .rev()
            .find_map(|o| match o {
                Open::Region(r) => Some(*r),
                _ => None,
            })
            .unwrap_or(0)
    }
    fn in_header_brackets(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Open::Paren | Open::Bracket | Open::Dict)
        )
    }
    fn func(&self) -> Option<usize> {
        self.func_stack.last().map(|&(_, f)| f)
    }

    fn run(&mut self) {
        let n = self.file.tokens.len();
        let mut i = 0;
        while i < n {
            i = self.statement(i);
        }
        let end = self.src.len();
        for open in self.stack.drain(..) {
            if let Open::Region(r) = open {
                self.file.regions[r].range.end = end;
            }
        }
    }

    /// Reads one statement starting at token `i`; returns the index after it.
    fn statement(&mut self, i: usize) -> usize {
        let n = self.file.tokens.len();
        match self.kind(i) {
            Some(TokKind::Punct) if self.text(i) == "}" => {
                self.close_region(i);
                // `} -> type` / `} : type to type` continue the op whose region closed.
                self.skip_to_line_end(i + 1)
            }
            Some(TokKind::Hash) if self.is_punct(i + 1, "=") => self.alias_definition(i),
            Some(TokKind::Block) => self.block_label(i),
            Some(TokKind::Value) => {
                // `%a, %b:2 = op ...`
                let mut j = i;
                let mut results = Vec::new();
                while self.kind(j) == Some(TokKind::Value) {
                    let count =
                        if self.is_punct(j + 1, ":") && self.kind(j + 2) == Some(TokKind::Int) {
                            2
                        } else {
                            0
                        };
                    results.push(j);
                    j += 1 + count;
                    if self.is_punct(j, ",") {
                        j += 1;
                    } else {
                        break;
                    }
                }
                if self.is_punct(j, "=") && j + 1 < n {
                    self.operation(i, j + 1, &results)
                } else {
                    self.skip_line(i)
                }
            }
            Some(TokKind::Ident | TokKind::Str) => self.operation(i, i, &[]),
            _ => self.skip_line(i),
        }
    }

    /// Visits token `i` and the rest of its line; always makes progress.
    fn skip_line(&mut self, i: usize) -> usize {
        self.visit(i, None);
        self.skip_to_line_end(i + 1)
    }

    /// Visits tokens from `i` up to the next line start outside brackets.
    fn skip_to_line_end(&mut self, mut i: usize) -> usize {
        let n = self.file.tokens.len();
        while i < n && (!self.file.tokens[i].line_start || self.in_header_brackets()) {
            self.visit(i, None);
            i += 1;
        }
        i
    }

    fn close_region(&mut self, i: usize) {
        // Pop through any unclosed header brackets to the innermost region.
        while let Some(top) = self.stack.pop() {
            if let Open::Region(r) = top {
                self.file.regions[r].range.end = self.file.tokens[i].range.end;
                if self.func_stack.last().is_some_and(|&(fr, _)| fr == r) {
                    let (_, f) = self.func_stack.pop().unwrap_or((0, 0));
                    if let Some(func) = self.file.funcs.get_mut(f) {
                        func.range.end = self.file.tokens[i].range.end;
                    }
                }
                return;
            }
        }
    }

    fn alias_definition(&mut self, i: usize) -> usize {
        let name = self.text(i).to_string();
        let name_range = self.range(i);
        let v = i + 2;
        let value_range = match self.file.tokens.get(v) {
            Some(t) => t.range.clone(),
            None => name_range.end..name_range.end,
        };
        let before = self.file.maps.len();
        let end = self.skip_to_line_end(v).max(i + 2);
        let map = (self.file.maps.len() > before && self.file.maps[before].range == value_range)
            .then_some(before);
        self.file.aliases.push(AttrAlias {
            name,
            name_range,
            value_range,
            map,
        });
        end
    }

    /// `^bb0(%in: f16, %out: f16):` defines block arguments in the current region.
    fn block_label(&mut self, i: usize) -> usize {
        let region = self.region();
        let mut j = i + 1;
        if self.is_punct(j, "(") {
            j += 1;
            while j < self.file.tokens.len() && !self.is_punct(j, ")") {
                if self.kind(j) == Some(TokKind::Value) {
                    let ty = self
                        .is_punct(j + 1, ":")
                        .then(|| self.text(j + 2).to_string());
                    self.define(j, ValueKind::BlockArgument, region, ty);
                }
                j += 1;
            }
        }
        let end = self.skip_to_line_end(j);
        end.max(i + 1)
    }

    fn define(&mut self, tok: usize, kind: ValueKind, region: usize, ty: Option<String>) -> usize {
        let name = self.text(tok).to_string();
        self.file.values.push(ValueDef {
            name,
            range: self.range(tok),
            kind,
            region,
            ty,
        });
        self.file.values.len() - 1
    }

    /// An op whose results start at token `first` and whose name is token `name`.
    fn operation(&mut self, first: usize, name: usize, results: &[usize]) -> usize {
        let n = self.file.tokens.len();
        let op_index = self.file.ops.len();
        let region = self.region();
        let op_name = {
            let t = self.text(name);
            t.trim_matches('"').to_string()
        };
        let result_defs: Vec<usize> = results
            .iter()
            .map(|&t| self.define(t, ValueKind::OpResult(op_index), region, None))
            .collect();
        let base_depth = self.stack.len();
        let function_like = is_function_like(&op_name);
        let mut j = name + 1;
        // Values the op defines for its region (`scf.for %i = ...`, `iter_args(%a = ...)`,
        // `func.func @f(%arg0: ...)`), attached to the region once it opens.
        let mut region_defs: Vec<(usize, Option<String>)> = Vec::new();
        let mut opened_region = None;
        while j < n {
            let t = &self.file.tokens[j];
            if t.line_start
                && ((self.stack.len() == base_depth && !self.continues_header(j))
                    || self.starts_statement(j))
            {
                break;
            }
            if self.is_punct(j, "{") && self.stack.len() == base_depth && self.opens_region(j) {
                opened_region = Some(j);
                break;
            }
            let typed_argument = function_like && self.is_punct(j + 1, ":");
            if self.kind(j) == Some(TokKind::Value) && (self.is_punct(j + 1, "=") || typed_argument)
            {
                let ty = typed_argument.then(|| self.text(j + 2).to_string());
                region_defs.push((j, ty));
                j += 1;
                continue;
            }
            self.visit(j, Some(region));
            j += 1;
        }
        // Unbalanced header brackets end with the header.
        self.stack.truncate(base_depth);
        let end_tok = j.saturating_sub(1).max(name);
        let start = self.file.tokens[first].range.start;
        let end = self.file.tokens[end_tok].range.end;
        let is_func = function_like;
        let func_index = if is_func {
            let sym = (name + 1..j).find(|&k| self.kind(k) == Some(TokKind::Symbol));
            let (fname, frange) = match sym {
                Some(k) => (self.text(k).to_string(), self.range(k)),
                None => (String::new(), self.range(name)),
            };
            self.file.funcs.push(Func {
                name: fname,
                name_range: frange,
                range: start..end,
                op: op_index,
            });
            Some(self.file.funcs.len() - 1)
        } else {
            None
        };
        self.file.ops.push(Op {
            name: op_name,
            name_range: self.range(name),
            range: start..end,
            tokens: name + 1..j,
            results: result_defs,
            func: func_index.or(self.func()),
            region,
        });
        if let Some(open) = opened_region {
            let id = self.file.regions.len();
            self.file.regions.push(Region {
                parent: Some(region),
                range: self.file.tokens[open].range.start..self.src.len(),
            });
            self.stack.push(Open::Region(id));
            if let Some(f) = func_index {
                self.func_stack.push((id, f));
            }
            let kind = if is_func {
                ValueKind::Argument
            } else {
                ValueKind::BlockArgument
            };
            for (t, ty) in region_defs {
                self.define(t, kind, id, ty);
            }
            return open + 1;
        }
        for (t, ty) in region_defs {
            // No region (a declaration or an excerpt): the values still exist.
            self.define(t, ValueKind::BlockArgument, region, ty);
        }
        j.max(first + 1)
    }

    /// `%x = ...` / `%x:2 = ...` at a line start is a new statement even inside an
    /// unclosed bracket of the previous one (an excerpt or a typo).
    fn starts_statement(&self, j: usize) -> bool {
        self.kind(j) == Some(TokKind::Value)
            && (self.is_punct(j + 1, "=")
                || (self.is_punct(j + 1, ":")
                    && self.kind(j + 2) == Some(TokKind::Int)
                    && self.is_punct(j + 3, "=")))
    }

    /// Lines that continue an op header written over several lines
    /// (`linalg.elemwise_unary ins(...)` then `outs(...)` on the next line).
    fn continues_header(&self, j: usize) -> bool {
        match self.kind(j) {
            Some(TokKind::Arrow) => true,
            // An attribute dictionary on its own line (`{__internal_linalg_transform__ = ...}`).
            Some(TokKind::Punct) if self.text(j) == "{" => !self.opens_region(j),
            Some(TokKind::Punct) => matches!(self.text(j), ":" | "," | ")" | "]"),
            Some(TokKind::Ident) => matches!(
                self.text(j),
                "ins"
                    | "outs"
                    | "attrs"
                    | "dimensions"
                    | "dimension"
                    | "inclusive"
                    | "axis"
                    | "epsilon"
                    | "layout"
                    | "permutation"
                    | "into"
                    | "to"
                    | "step"
                    | "iter_args"
                    | "tile_sizes"
                    | "interchange"
                    | "low"
                    | "high"
                    | "output_shape"
                    | "in"
            ),
            _ => false,
        }
    }

    /// A `{` opens a region when nothing follows it on its line, unless the next
    /// line reads like a dictionary entry (`name = ...`).
    fn opens_region(&self, j: usize) -> bool {
        match self.file.tokens.get(j + 1) {
            None => true,
            Some(next) if next.line_start => {
                let entry =
                    matches!(next.kind, TokKind::Ident | TokKind::Str) && self.is_punct(j + 2, "=");
                !entry
            }
            Some(_) => false,
        }
    }

    fn visit_brackets(&mut self, j: usize) {
        if self.kind(j) != Some(TokKind::Punct) {
            return;
        }
        match self.text(j) {
            "(" => self.stack.push(Open::Paren),
            "[" => self.stack.push(Open::Bracket),
            "{" => self.stack.push(Open::Dict),
            ")" | "]" => {
                if matches!(
                    self.stack.last(),
                    Some(Open::Paren | Open::Bracket | Open::Dict)
                ) {
                    self.stack.pop();
                }
            }
            "}" => {
                if matches!(
                    self.stack.last(),
                    Some(Open::Dict | Open::Paren | Open::Bracket)
                ) {
                    self.stack.pop();
                }
            }
            _ => {}
        }
    }

    /// Records what token `j` is (map, alias use, value use) and tracks brackets.
    fn visit(&mut self, j: usize, region: Option<usize>) {
        self.visit_brackets(j);
        let t = self.file.tokens[j].clone();
        match t.kind {
            TokKind::Angle => {
                let text = &self.src[t.range.clone()];
                let head = &text[..text.find('<').unwrap_or(text.len())];
                if let Some(kind) = MapKind::of_head(head) {
                    let map = maps::decode(kind, text, t.range.start);
                    if let Err(e) = &map {
                        let at = e.offset.min(self.src.len());
                        let r = at..(at + 1).min(t.range.end).max(at);
                        self.file.diagnostics.push(Diagnostic::error(
                            r,
                            "invalid-map",
                            format!("{}: {}", kind.as_str(), e.message),
                        ));
                    }
                    self.file.maps.push(MapSite {
                        kind,
                        range: t.range.clone(),
                        map,
                    });
                }
            }
            TokKind::Hash => {
                self.file.alias_uses.push(AliasUse {
                    name: self.src[t.range.clone()].to_string(),
                    range: t.range.clone(),
                    target: None,
                });
            }
            TokKind::Value => {
                let text = &self.src[t.range.clone()];
                let name = text.split('#').next().unwrap_or(text).to_string();
                let range = t.range.start..t.range.start + name.len();
                self.file.value_uses.push(ValueUse {
                    name,
                    range,
                    region: region.unwrap_or_else(|| self.region()),
                    target: None,
                });
            }
            _ => {}
        }
    }

    /// Links alias uses and value uses to their definitions.
    fn resolve(&mut self) {
        let f = &mut self.file;
        for u in &mut f.alias_uses {
            // The nearest definition before the use (excerpts redefine `#map`), else the first after.
            let before = f
                .aliases
                .iter()
                .rposition(|a| a.name == u.name && a.name_range.start < u.range.start);
            u.target = before.or_else(|| f.aliases.iter().position(|a| a.name == u.name));
        }
        let mut uses = std::mem::take(&mut f.value_uses);
        for u in &mut uses {
            let chain = f.ancestors(u.region);
            let mut best: Option<(usize, usize, bool)> = None; // (depth rank, index, before)
            for (k, d) in f.values.iter().enumerate() {
                if d.name != u.name {
                    continue;
                }
                let Some(rank) = chain.iter().position(|&r| r == d.region) else {
                    continue;
                };
                let before = d.range.start <= u.range.start;
                // Prefer: defined before the use, then innermost region, then latest.
                let better = match best {
                    None => true,
                    Some((brank, bk, bbefore)) => {
                        (before, std::cmp::Reverse(rank), d.range.start)
                            > (bbefore, std::cmp::Reverse(brank), f.values[bk].range.start)
                    }
                };
                if better {
                    best = Some((rank, k, before));
                }
            }
            u.target = best.map(|(_, k, _)| k);
        }
        f.value_uses = uses;
    }
}

/// Ops whose `(%arg: type)` list declares the body's arguments.
fn is_function_like(name: &str) -> bool {
    matches!(
        name,
        "func.func" | "func" | "llvm.func" | "gpu.func" | "transform.named_sequence"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = [\"parallel\", \"parallel\"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.addf %in, %in : f32
    linalg.yield %2 : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
func.func @f(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  ...
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = [\"parallel\", \"parallel\"]} ins(%arg0 : tensor<4x8xf32>) outs(%arg0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
";

    fn names(f: &MlirFile) -> Vec<&str> {
        f.ops.iter().map(|o| o.name.as_str()).collect()
    }

    #[test]
    fn reads_ops_aliases_and_funcs() {
        let f = read(SRC);
        assert_eq!(
            names(&f),
            [
                "func.func",
                "tensor.empty",
                "linalg.generic",
                "arith.addf",
                "linalg.yield",
                "return",
                "func.func",
                "linalg.generic",
                "linalg.yield",
                "return"
            ]
        );
        assert_eq!(f.aliases.len(), 1);
        assert_eq!(f.alias_uses.len(), 4);
        assert!(f.alias_uses.iter().all(|u| u.target == Some(0)));
        assert_eq!(f.funcs.len(), 2);
        assert_eq!(f.maps.len(), 1);
        assert_eq!(f.ops[2].func, Some(0));
        assert_eq!(f.ops[7].func, Some(1));
        assert!(f.diagnostics.is_empty());
    }

    #[test]
    fn value_uses_resolve_within_their_function_and_body() {
        let f = read(SRC);
        for u in &f.value_uses {
            let d = &f.values[u.target.unwrap_or_else(|| panic!("unresolved {}", u.name))];
            assert_eq!(d.name, u.name);
            // The definition is in the same function as the use.
            let func_of = |b: usize| f.funcs.iter().position(|fu| fu.range.contains(&b));
            assert_eq!(func_of(d.range.start), func_of(u.range.start), "{}", u.name);
        }
        // `%in` in the second body resolves to the second body's block argument.
        let last_in = f.value_uses.iter().rfind(|u| u.name == "%in").unwrap();
        let def = &f.values[last_in.target.unwrap()];
        assert!(
            def.range.start
                > SRC
                    .find("@f(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {\n  ...")
                    .unwrap()
        );
    }

    #[test]
    fn broken_text_still_reads_later_ops() {
        let src = "%0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0 +)>\n%1 = tensor.empty() : tensor<2xf32>\n";
        let f = read(src);
        assert!(names(&f).contains(&"tensor.empty"));
        assert_eq!(f.diagnostics.len(), 1);
        assert_eq!(f.diagnostics[0].code, "invalid-map");
    }
}
