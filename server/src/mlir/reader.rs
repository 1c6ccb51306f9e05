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
    /// The op whose region it is (index into [`MlirFile::ops`]); `None` for the file.
    pub op: Option<usize>,
    /// Token indices from its `{` to its `}` (both included; to the end when unclosed).
    pub tokens: Range<usize>,
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

/// One operation: its name, header tokens and regions.
#[derive(Clone, Debug)]
pub struct Op {
    pub name: String,
    pub name_range: Range<usize>,
    /// From the first result (or the name) to the end of the header.
    pub range: Range<usize>,
    /// Token indices of the header after the op name, up to its first region.
    pub tokens: Range<usize>,
    /// Token indices after the op name to the op's last token: the header, its
    /// regions and what follows them (`} : (...) -> ...`, `cond {...} do {...}`).
    pub all_tokens: Range<usize>,
    /// Its regions (indices into [`MlirFile::regions`]), in text order.
    pub regions: Vec<usize>,
    /// Indices into [`MlirFile::values`] of the results.
    pub results: Vec<usize>,
    /// The function it is in (index into [`MlirFile::funcs`]).
    pub func: Option<usize>,
    /// The region the op is in.
    pub region: usize,
}

impl Op {
    /// Token indices of the op outside its regions (header, attributes, types,
    /// location), in order.
    pub fn own_tokens<'a>(&'a self, file: &'a MlirFile) -> impl Iterator<Item = usize> + 'a {
        self.all_tokens.clone().filter(move |&t| {
            !self
                .regions
                .iter()
                .any(|&r| file.regions[r].tokens.contains(&t))
        })
    }
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
    let tokens = tokenize(src);
    let n = tokens.len();
    let mut r = Reader {
        src,
        file: MlirFile {
            tokens,
            regions: vec![Region {
                parent: None,
                range: 0..src.len(),
                op: None,
                tokens: 0..n,
            }],
            ..MlirFile::default()
        },
        stack: Vec::new(),
        func_stack: Vec::new(),
        suspended: Vec::new(),
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

/// An op whose header a region interrupted: it goes on after the region's `}`.
#[derive(Clone, Debug)]
struct Suspended {
    region: usize,
    op: usize,
    /// The bracket depth of the op's statement.
    base_depth: usize,
    /// Values the op defines for each of its regions (`stablehlo.while(%iterArg = ...)`).
    region_defs: Vec<(usize, Option<String>)>,
}

struct Reader<'a> {
    src: &'a str,
    file: MlirFile,
    stack: Vec<Open>,
    /// (region id, func index) of open `func.func` bodies.
    func_stack: Vec<(usize, usize)>,
    /// Ops waiting for their open regions to close.
    suspended: Vec<Suspended>,
}

/// Where reading an op's tokens stopped.
enum Stop {
    /// At this token, which is not the op's (the next statement, a `}`).
    End(usize),
    /// A region opened at this `{`.
    Region(usize),
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
        for open in std::mem::take(&mut self.stack) {
            if let Open::Region(r) = open {
                self.file.regions[r].range.end = end;
                let at = self.file.regions[r].range.start;
                self.file.diagnostics.push(Diagnostic::error(
                    at..at + 1,
                    "unclosed-region",
                    "this `{` is never closed: the region runs to the end of the file",
                ));
            }
        }
        for s in std::mem::take(&mut self.suspended) {
            self.finish_op(s.op, n);
        }
    }

    /// Reads one statement starting at token `i`; returns the index after it.
    fn statement(&mut self, i: usize) -> usize {
        match self.kind(i) {
            Some(TokKind::Punct) if self.text(i) == "}" => self.close_region(i),
            Some(TokKind::Hash | TokKind::Bang) if self.is_punct(i + 1, "=") => {
                self.alias_definition(i)
            }
            Some(TokKind::Block) => self.block_label(i),
            Some(TokKind::Value) => match self.result_list(i) {
                Some((results, name)) => self.operation(i, name, &results),
                None => self.skip_unreadable(i),
            },
            Some(TokKind::Ident | TokKind::Str) => self.operation(i, i, &[]),
            _ => self.skip_unreadable(i),
        }
    }

    /// `%a, %b:2 = ` at `i`: the result tokens and the op name's token.
    fn result_list(&self, i: usize) -> Option<(Vec<usize>, usize)> {
        let n = self.file.tokens.len();
        let mut j = i;
        let mut results = Vec::new();
        while self.kind(j) == Some(TokKind::Value) {
            let count = if self.is_punct(j + 1, ":") && self.kind(j + 2) == Some(TokKind::Int) {
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
        (self.is_punct(j, "=") && j + 1 < n).then_some((results, j + 1))
    }

    /// Tokens no statement starts with: skipped up to the next statement, with one
    /// diagnostic for the run (`...` of an excerpt is skipped silently).
    fn skip_unreadable(&mut self, i: usize) -> usize {
        let n = self.file.tokens.len();
        let mut j = i;
        let region = self.region();
        while j < n && (j == i || !self.starts_statement(j)) {
            self.visit_token(j, region);
            j += 1;
        }
        let silent = (i..j).all(|k| self.kind(k) == Some(TokKind::Ellipsis));
        if !silent {
            let range = self.range(i).start..self.range(j - 1).end;
            self.file.diagnostics.push(Diagnostic::warning(
                range,
                "unreadable-mlir",
                format!(
                    "expected an operation, found `{}`: skipped to the next operation",
                    self.text(i)
                ),
            ));
        }
        j
    }

    /// Whether a statement can start at `j` whatever precedes it.
    fn starts_statement(&self, j: usize) -> bool {
        match self.kind(j) {
            Some(TokKind::Value) => self.result_list(j).is_some(),
            Some(TokKind::Punct) => self.text(j) == "}",
            Some(TokKind::Hash | TokKind::Bang) => self.is_punct(j + 1, "="),
            Some(TokKind::Block) => self.is_block_label(j),
            Some(TokKind::Ident) => is_op_name(self.text(j)),
            Some(TokKind::Str) => self.is_punct(j + 1, "("),
            Some(TokKind::Ellipsis) => true,
            _ => false,
        }
    }

    /// `^bb0:` or `^bb0(...):` (not a successor operand `^bb1(%x : i32)`).
    fn is_block_label(&self, j: usize) -> bool {
        if self.is_punct(j + 1, ":") {
            return true;
        }
        if !self.is_punct(j + 1, "(") {
            return false;
        }
        self.matching_close(j + 1)
            .is_some_and(|close| self.is_punct(close + 1, ":"))
    }

    /// The `)`/`]`/`}` closing the bracket at `open`.
    fn matching_close(&self, open: usize) -> Option<usize> {
        let mut depth = 0usize;
        for k in open..self.file.tokens.len() {
            if self.kind(k) != Some(TokKind::Punct) {
                continue;
            }
            match self.text(k) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(k);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Whether the op header at `j` (its previous token read) has ended and `j`
    /// starts the next statement. Read from tokens alone, so line breaks never
    /// change where an op ends.
    fn ends_header(&self, j: usize, name: usize, at_base: bool) -> bool {
        let prev = j.checked_sub(1).filter(|&p| p > name);
        match self.kind(j) {
            // `%x = ...` starts a statement anywhere (even inside brackets an excerpt
            // left open), unless it binds a value in the header (`iter_args(%a = %x)`,
            // `scf.for %i = ...`).
            Some(TokKind::Value) => {
                self.result_list(j).is_some() && prev.is_some_and(|p| self.ends_op(p))
            }
            Some(TokKind::Hash | TokKind::Bang) => self.is_punct(j + 1, "="),
            Some(TokKind::Block) => self.is_block_label(j),
            Some(TokKind::Punct) => at_base && self.text(j) == "}",
            Some(TokKind::Ellipsis) => at_base,
            Some(TokKind::Ident) => {
                at_base && is_op_name(self.text(j)) && prev.is_some_and(|p| self.ends_op(p))
            }
            Some(TokKind::Str) => {
                at_base && self.is_punct(j + 1, "(") && prev.is_some_and(|p| self.ends_op(p))
            }
            _ => false,
        }
    }

    /// Whether an op can end with token `p`: not with `=`, `,`, an open bracket,
    /// `:`, `->` or a keyword (`applies stablehlo.add`), but with a value, a
    /// type, a closing bracket, a literal.
    fn ends_op(&self, p: usize) -> bool {
        match self.kind(p) {
            Some(TokKind::Punct) => matches!(self.text(p), ")" | "]" | "}" | ">"),
            Some(TokKind::Arrow) => false,
            Some(TokKind::Ident) => is_builtin_type(self.text(p)),
            Some(_) => true,
            None => false,
        }
    }

    /// Closes the region at `}` (token `i`) and goes on with the op it belongs to.
    fn close_region(&mut self, i: usize) -> usize {
        // Pop through any unclosed header brackets to the innermost region.
        while let Some(top) = self.stack.pop() {
            if let Open::Region(r) = top {
                self.file.regions[r].range.end = self.file.tokens[i].range.end;
                self.file.regions[r].tokens.end = i + 1;
                if self.func_stack.last().is_some_and(|&(fr, _)| fr == r) {
                    let (_, f) = self.func_stack.pop().unwrap_or((0, 0));
                    if let Some(func) = self.file.funcs.get_mut(f) {
                        func.range.end = self.file.tokens[i].range.end;
                    }
                }
                if self.suspended.last().is_some_and(|s| s.region == r) {
                    if let Some(s) = self.suspended.pop() {
                        return self.resume(s, i + 1);
                    }
                }
                return i + 1;
            }
        }
        self.file.diagnostics.push(Diagnostic::error(
            self.range(i),
            "unmatched-brace",
            "this `}` closes no region",
        ));
        i + 1
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
        let base_depth = self.stack.len();
        let region = self.region();
        let n = self.file.tokens.len();
        let mut j = v;
        while j < n {
            let at_base = self.stack.len() == base_depth;
            if j > v && self.ends_header(j, v - 1, at_base) {
                break;
            }
            if at_base && self.is_punct(j, "}") {
                break;
            }
            self.visit_token(j, region);
            j += 1;
        }
        self.stack.truncate(base_depth);
        let map = (self.file.maps.len() > before && self.file.maps[before].range == value_range)
            .then_some(before);
        if name.starts_with('#') {
            self.file.aliases.push(AttrAlias {
                name,
                name_range,
                value_range,
                map,
            });
        }
        j.max(i + 2)
    }

    /// `^bb0(%in: f16, %out: f16):` defines block arguments in the current region.
    fn block_label(&mut self, i: usize) -> usize {
        let region = self.region();
        let n = self.file.tokens.len();
        let mut j = i + 1;
        if self.is_punct(j, "(") {
            j += 1;
            while j < n && !self.is_punct(j, ")") {
                if self.kind(j) == Some(TokKind::Value) {
                    let ty = self
                        .is_punct(j + 1, ":")
                        .then(|| self.text(j + 2).to_string());
                    self.define(j, ValueKind::BlockArgument, region, ty);
                }
                if self.starts_statement(j) && self.kind(j) != Some(TokKind::Value) {
                    return j;
                }
                // `%a: tensor<f32> loc("x"), %b: ...`: a location's parentheses
                // are not the list's end.
                if self.is_punct(j, "(") {
                    if let Some(close) = self.matching_close(j) {
                        j = close;
                    }
                }
                j += 1;
            }
            j += 1;
        }
        if self.is_punct(j, ":") {
            j += 1;
        }
        j.max(i + 1)
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
        let op_index = self.file.ops.len();
        let region = self.region();
        let op_name = self.text(name).trim_matches('"').to_string();
        let result_defs: Vec<usize> = results
            .iter()
            .map(|&t| self.define(t, ValueKind::OpResult(op_index), region, None))
            .collect();
        let start = self.file.tokens[first].range.start;
        let name_end = self.file.tokens[name].range.end;
        let func_index = is_function_like(&op_name).then(|| {
            self.file.funcs.push(Func {
                name: String::new(),
                name_range: self.range(name),
                range: start..name_end,
                op: op_index,
            });
            self.file.funcs.len() - 1
        });
        self.file.ops.push(Op {
            name: op_name,
            name_range: self.range(name),
            range: start..name_end,
            tokens: name + 1..name + 1,
            all_tokens: name + 1..name + 1,
            regions: Vec::new(),
            results: result_defs,
            func: func_index.or(self.func()),
            region,
        });
        let s = Suspended {
            region: 0,
            op: op_index,
            base_depth: self.stack.len(),
            region_defs: Vec::new(),
        };
        self.resume(s, name + 1)
    }

    /// Reads op `s.op`'s tokens from `j`: to its end, or into a region it opens.
    fn resume(&mut self, mut s: Suspended, j: usize) -> usize {
        let op = s.op;
        let name = self.file.ops[op].all_tokens.start - 1;
        let first_region = self.file.ops[op].regions.is_empty();
        let stop = self.op_tokens(&mut s, j, name);
        match stop {
            Stop::End(end) => {
                if first_region {
                    self.file.ops[op].tokens.end = end;
                    let last = end.saturating_sub(1).max(name);
                    self.file.ops[op].range.end = self.file.tokens[last].range.end;
                }
                self.finish_op(op, end);
                for (t, ty) in std::mem::take(&mut s.region_defs) {
                    if self.file.ops[op].regions.is_empty() {
                        // No region (a declaration or an excerpt): the values still exist.
                        let region = self.file.ops[op].region;
                        self.define(t, ValueKind::BlockArgument, region, ty);
                    }
                }
                end.max(name + 1)
            }
            Stop::Region(open) => {
                if first_region {
                    self.file.ops[op].tokens.end = open;
                    let last = open.saturating_sub(1).max(name);
                    self.file.ops[op].range.end = self.file.tokens[last].range.end;
                }
                let parent = self.region();
                let id = self.file.regions.len();
                self.file.regions.push(Region {
                    parent: Some(parent),
                    range: self.file.tokens[open].range.start..self.src.len(),
                    op: Some(op),
                    tokens: open..self.file.tokens.len(),
                });
                self.file.ops[op].regions.push(id);
                self.stack.push(Open::Region(id));
                let is_func = self.file.ops[op]
                    .func
                    .is_some_and(|f| self.file.funcs.get(f).is_some_and(|fu| fu.op == op));
                if is_func && first_region {
                    let f = self.file.ops[op].func.unwrap_or(0);
                    self.func_stack.push((id, f));
                }
                let kind = if is_func {
                    ValueKind::Argument
                } else {
                    ValueKind::BlockArgument
                };
                for (t, ty) in s.region_defs.clone() {
                    self.define(t, kind, id, ty);
                }
                s.region = id;
                self.suspended.push(s);
                open + 1
            }
        }
    }

    /// Records where op `op` ends (its last token is before `end`).
    fn finish_op(&mut self, op: usize, end: usize) {
        let o = &mut self.file.ops[op];
        o.all_tokens.end = end.max(o.all_tokens.start);
        let o = o.clone();
        let Some(f) = o.func.filter(|&f| self.file.funcs[f].op == op) else {
            return;
        };
        let name = o.all_tokens.start - 1;
        let sym = (name + 1..o.tokens.end).find(|&k| self.kind(k) == Some(TokKind::Symbol));
        if let Some(k) = sym {
            self.file.funcs[f].name = self.text(k).to_string();
            self.file.funcs[f].name_range = self.range(k);
        }
        if o.regions.is_empty() {
            self.file.funcs[f].range.end = o.range.end;
        }
    }

    /// Visits op tokens from `j` until the op ends or opens a region.
    fn op_tokens(&mut self, s: &mut Suspended, mut j: usize, name: usize) -> Stop {
        let n = self.file.tokens.len();
        let region = self.region();
        let op_name = self.file.ops[s.op].name.clone();
        // Shardy's `sdy.manual_computation(%x) ... (%arg1: tensor<8x4xf32>) {`
        // declares its body's arguments (per-shard types) before the region.
        let function_like = is_function_like(&op_name)
            || matches!(
                op_name.as_str(),
                "sdy.manual_computation" | "sdy.named_computation"
            );
        // `reducer(%a: t, %b: t) (%c: t, %d: t)` of a pretty `stablehlo.reduce`
        // declares its body's arguments.
        let mut reducer_params = false;
        while j < n {
            let at_base = self.stack.len() == s.base_depth;
            if self.ends_header(j, name, at_base) {
                if !at_base {
                    let at = self.range(j).start;
                    self.file.diagnostics.push(Diagnostic::warning(
                        at..at,
                        "unclosed-bracket",
                        format!("`{}` ends here with a bracket left open", op_name),
                    ));
                }
                self.stack.truncate(s.base_depth);
                return Stop::End(j);
            }
            if self.is_punct(j, "{") && self.opens_region(j) {
                return Stop::Region(j);
            }
            let bound_here =
                j == name + 1 || self.is_punct(j - 1, "(") || self.is_punct(j - 1, ",");
            if self.kind(j) == Some(TokKind::Ident) && self.text(j) == "reducer" {
                reducer_params = true;
            }
            let typed_argument = (function_like || reducer_params) && self.is_punct(j + 1, ":");
            if self.kind(j) == Some(TokKind::Value)
                && ((self.is_punct(j + 1, "=") && bound_here) || typed_argument)
            {
                let ty = typed_argument.then(|| self.text(j + 2).to_string());
                s.region_defs.push((j, ty));
                j += 1;
                continue;
            }
            self.visit_token(j, region);
            j += 1;
        }
        self.stack.truncate(s.base_depth);
        Stop::End(n)
    }

    /// Whether the `{` at `j` opens a region rather than an attribute dictionary,
    /// from what follows it: a region holds operations and blocks (`%0 = `,
    /// `^bb0`, `stablehlo.return %x`), a dictionary holds `name = value` and unit
    /// names.
    fn opens_region(&self, j: usize) -> bool {
        match self.kind(j + 1) {
            None => true,
            Some(TokKind::Value | TokKind::Block | TokKind::Ellipsis) => true,
            Some(TokKind::Ident | TokKind::Str) => {
                if self.is_punct(j + 2, "=") || self.is_punct(j + 2, ",") {
                    return false;
                }
                if self.is_punct(j + 2, "}") {
                    return is_terminator(self.text(j + 1).trim_matches('"'));
                }
                true
            }
            _ => false,
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
            ")" | "]" | "}" => {
                if matches!(
                    self.stack.last(),
                    Some(Open::Paren | Open::Bracket | Open::Dict)
                ) {
                    self.stack.pop();
                }
            }
            _ => {}
        }
    }

    /// Records what token `j` is (map, alias use, value use) and tracks brackets.
    fn visit_token(&mut self, j: usize, region: usize) {
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
                    region,
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

/// An identifier that names an op where an op may start: dialect ops have a dot
/// (`stablehlo.add`); `func`'s ops print without one.
fn is_op_name(text: &str) -> bool {
    text.contains('.') || matches!(text, "return" | "call" | "module" | "func")
}

/// Ops that end a region and may take no operands (`{ scf.yield }` is a region,
/// `{ unit_attr }` a dictionary).
fn is_terminator(name: &str) -> bool {
    name == "return"
        || name.ends_with(".yield")
        || name.ends_with(".return")
        || name.ends_with(".terminator")
}

/// Builtin types spelled as bare identifiers (`f32`, `i1`, `index`): an op may end
/// with one (`: f32`), so a dotted name after it starts the next op.
pub fn is_builtin_type(text: &str) -> bool {
    let int = |rest: &str| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
    matches!(text, "index" | "none" | "bf16" | "tf32")
        || text.strip_prefix('f').is_some_and(|r| {
            int(r) || r.starts_with("8E") || r.starts_with("4E") || r.starts_with("6E")
        })
        || text.strip_prefix('i').is_some_and(int)
        || text.strip_prefix("si").is_some_and(int)
        || text.strip_prefix("ui").is_some_and(int)
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
        let codes: Vec<&str> = f.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["invalid-map", "unclosed-bracket"]);
    }
}

#[cfg(test)]
mod block_argument_tests {
    use super::*;

    /// XLA's importer writes a location on each block argument: every argument
    /// is still defined (the `)` of `loc("f")` did not end the list).
    #[test]
    fn located_block_arguments_are_all_defined() {
        let src = "%0 = \"mhlo.fusion\"(%a, %b) ({\n^bb0(%x: tensor<f32> loc(\"f\"), %y: tensor<f32> loc(\"f\")):\n  %1 = mhlo.add %x, %y : tensor<f32>\n  mhlo.return %1 : tensor<f32>\n}) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n";
        let f = read(src);
        let args: Vec<&str> = f
            .values
            .iter()
            .filter(|v| v.kind == ValueKind::BlockArgument)
            .map(|v| v.name.as_str())
            .collect();
        assert_eq!(args, ["%x", "%y"]);
        let y = f.values.iter().find(|v| v.name == "%y").expect("%y");
        assert_eq!(y.ty.as_deref(), Some("tensor<f32>"));
    }
}
