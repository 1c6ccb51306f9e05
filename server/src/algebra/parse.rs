//! Parser of XLA's indexing-map text and of MLIR's `affine_map<...>` syntax.
//!
//! ```text
//! (d0, d1)[s0]{rt0} -> (d0 floordiv 4, d1 + s0),
//! domain: d0 in [0, 9], d1 in [0, 3], s0 in [0, 1], rt0 in [0, 2], d0 mod 4 in [0, 0]
//! ```
//! Whitespace and newlines may appear anywhere; `[...]` and `{...}` are optional;
//! floor division is `floordiv`, `floorDiv` or `/`; `UNDEFINED` and `KNOWN EMPTY`
//! are maps too. Errors carry the byte offset where parsing stopped.

use std::fmt;

use super::expr::{BinOp, Expr};
use super::interval::Interval;
use super::map::IndexingMap;
use super::variable::{Var, VarKind, Variable};

/// How deep parentheses, `min`/`max` and unary minus may nest. The parser keeps
/// its own stack, so this is not about the parser: nothing sensible needs more,
/// and the refusal names the first level too deep.
pub const MAX_NESTING: usize = 200;

/// How deep an expression tree may be (a leaf is 1 deep, a sum of 1,000
/// products 1,001): every walk over a tree (simplification, printing, dropping
/// it) recurses once per level, so this bounds their stack use. Measured on a
/// 2 MiB thread (the server's workers): sums of products survive every walk up to
/// 16,000 deep, chains of floordiv, mod, min and products up to 4,000.
pub const MAX_DEPTH: usize = 2000;

/// Why a text is not a map, and where (byte offset into the input).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at offset {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ParseError {}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    /// An unsigned integer literal (a leading `-` is its own token).
    Int(u64),
    Ident(&'a str),
    /// One of `( ) [ ] { } , : + - * / % < >`.
    Punct(u8),
    /// `->`.
    Arrow,
    End,
}

/// A token with its byte range.
type Lexed<'a> = (Tok<'a>, usize, usize);

/// What kind of token is stored (an identifier is its byte range).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Raw {
    Int,
    Ident,
    Punct,
    Arrow,
    End,
}

/// A token as stored: plain fields (an integer's value or a punctuation byte in
/// `value`), so that storing one is a few plain stores. An enum with payloads
/// here was built byte by byte and then copied whole, which stalled every token.
#[derive(Clone, Copy, Debug)]
struct RawToken {
    raw: Raw,
    value: u64,
    start: usize,
    end: usize,
}

impl RawToken {
    fn new(raw: Raw, value: u64, start: usize, end: usize) -> RawToken {
        RawToken {
            raw,
            value,
            start,
            end,
        }
    }
}

/// Token buffers above this many tokens are not kept for the next parse.
const KEEP_TOKENS: usize = 1 << 16;

thread_local! {
    /// The token buffer, reused by every parse on a thread.
    static TOKENS: std::cell::RefCell<Vec<RawToken>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The tokens of a text, read in one pass, walked with one token of lookahead.
/// A character that starts no token ends the list with an error that is
/// reported when the parser reaches it.
struct Lexer<'a> {
    text: &'a str,
    tokens: Vec<RawToken>,
    next: usize,
    /// Why lexing stopped before the end of the text (the last token is then a
    /// placeholder at that offset).
    error: Option<ParseError>,
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.'
}

impl Drop for Lexer<'_> {
    fn drop(&mut self) {
        if self.tokens.capacity() <= KEEP_TOKENS {
            let tokens = std::mem::take(&mut self.tokens);
            let _ = TOKENS.try_with(|cell| {
                if let Ok(mut pool) = cell.try_borrow_mut() {
                    *pool = tokens;
                }
            });
        }
    }
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Lexer<'a> {
        let mut tokens = TOKENS
            .try_with(|cell| {
                cell.try_borrow_mut()
                    .map(|mut v| std::mem::take(&mut *v))
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        tokens.clear();
        let mut lexer = Lexer {
            text,
            tokens,
            next: 0,
            error: None,
        };
        let mut pos = 0;
        loop {
            match lexer.lex(pos) {
                Ok(t) => {
                    lexer.tokens.push(t);
                    if t.raw == Raw::End {
                        break;
                    }
                    pos = t.end;
                }
                Err(e) => {
                    lexer
                        .tokens
                        .push(RawToken::new(Raw::End, 0, e.offset, e.offset));
                    lexer.error = Some(e);
                    break;
                }
            }
        }
        lexer
    }

    /// Byte offset of the first non-whitespace character at or after `i`.
    fn skip_ws(&self, mut i: usize) -> usize {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(i) {
            if b.is_ascii_whitespace() {
                i += 1;
            } else if b < 0x80 {
                break;
            } else {
                let rest = &self.text[i..];
                let trimmed = rest.trim_start();
                if trimmed.len() == rest.len() {
                    break;
                }
                i += rest.len() - trimmed.len();
            }
        }
        i
    }

    /// End of the identifier starting at `start` (ASCII fast path; other
    /// letters and digits are allowed too).
    fn ident_end(&self, start: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut i = start;
        while let Some(&b) = bytes.get(i) {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
                i += 1;
            } else if b < 0x80 {
                return i;
            } else {
                let rest = &self.text[i..];
                return i + rest
                    .char_indices()
                    .find(|&(_, c)| !is_ident_char(c))
                    .map_or(rest.len(), |(j, _)| j);
            }
        }
        i
    }

    /// Inlined into the lexing loop: returned through memory, a token was
    /// reloaded whole right after being stored in parts (a stall per token).
    #[inline(always)]
    fn lex(&self, pos: usize) -> Result<RawToken, ParseError> {
        let start = self.skip_ws(pos);
        let bytes = self.text.as_bytes();
        let Some(&b) = bytes.get(start) else {
            return Ok(RawToken::new(Raw::End, 0, start, start));
        };
        let punct = |len: usize, raw: Raw, value: u8| {
            Ok(RawToken::new(raw, u64::from(value), start, start + len))
        };
        match b {
            b'0'..=b'9' => {
                let mut value: Option<u64> = Some(0);
                let mut i = start;
                while let Some(&d @ b'0'..=b'9') = bytes.get(i) {
                    value = value
                        .and_then(|v| v.checked_mul(10))
                        .and_then(|v| v.checked_add(u64::from(d - b'0')));
                    i += 1;
                }
                match value {
                    Some(v) => Ok(RawToken::new(Raw::Int, v, start, i)),
                    None => Err(ParseError {
                        offset: start,
                        message: "integer does not fit in 64 bits".into(),
                    }),
                }
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let end = self.ident_end(start);
                Ok(RawToken::new(Raw::Ident, 0, start, end))
            }
            b'-' if bytes.get(start + 1) == Some(&b'>') => punct(2, Raw::Arrow, 0),
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b',' | b':' | b'+' | b'-' | b'*' | b'/'
            | b'%' | b'<' | b'>' => punct(1, Raw::Punct, b),
            _ => {
                let c = self.text[start..].chars().next().expect("a character");
                if c.is_alphabetic() {
                    let end = self.ident_end(start);
                    return Ok(RawToken::new(Raw::Ident, 0, start, end));
                }
                Err(ParseError {
                    offset: start,
                    message: format!("unexpected character `{c}`"),
                })
            }
        }
    }

    /// Next token and its byte range, without consuming it.
    #[inline(always)]
    fn peek(&mut self) -> Result<Lexed<'a>, ParseError> {
        let RawToken {
            raw,
            value,
            start,
            end,
        } = self.tokens[self.next];
        let tok = match raw {
            Raw::Int => Tok::Int(value),
            Raw::Ident => Tok::Ident(&self.text[start..end]),
            Raw::Punct => Tok::Punct(value as u8),
            Raw::Arrow => Tok::Arrow,
            Raw::End => match &self.error {
                Some(e) => return Err(e.clone()),
                None => Tok::End,
            },
        };
        Ok((tok, start, end))
    }

    fn next(&mut self) -> Result<(Tok<'a>, usize), ParseError> {
        let (tok, start, _) = self.peek()?;
        if tok != Tok::End {
            self.next += 1;
        }
        Ok((tok, start))
    }

    fn at(&mut self, tok: Tok<'_>) -> Result<bool, ParseError> {
        Ok(self.peek()?.0 == tok)
    }

    fn eat(&mut self, tok: Tok<'_>) -> Result<bool, ParseError> {
        if self.at(tok)? {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn expect(&mut self, tok: Tok<'_>, what: &str) -> Result<usize, ParseError> {
        let (found, start) = self.next()?;
        if found == tok {
            Ok(start)
        } else {
            Err(ParseError {
                offset: start,
                message: format!("expected {what}, found {}", describe(&found)),
            })
        }
    }

    fn error<T>(&mut self, message: impl Into<String>) -> Result<T, ParseError> {
        let (_, start, _) = self.peek()?;
        Err(ParseError {
            offset: start,
            message: message.into(),
        })
    }
}

fn describe(tok: &Tok<'_>) -> String {
    match tok {
        Tok::Int(v) => format!("`{v}`"),
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Punct(p) => format!("`{}`", *p as char),
        Tok::Arrow => "`->`".to_string(),
        Tok::End => "end of input".to_string(),
    }
}

fn punct(p: u8) -> Tok<'static> {
    Tok::Punct(p)
}

fn ident(s: &str) -> Tok<'_> {
    Tok::Ident(s)
}

/// The variables in scope while parsing expressions.
struct Scope<'a> {
    names: Vec<(&'a str, Var)>,
}

impl Scope<'_> {
    fn lookup(&self, name: &str) -> Option<Var> {
        self.names
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }
}

/// `true` when `name` is the default name of the variable at `index` (`d3`).
fn is_default_name(name: &str, kind: VarKind, index: usize) -> bool {
    let Some(digits) = name.strip_prefix(kind.default_prefix()) else {
        return false;
    };
    let canonical = digits == "0" || !digits.starts_with('0');
    canonical && digits.bytes().all(|b| b.is_ascii_digit()) && digits.parse() == Ok(index)
}

/// What waits for its operands while an expression is parsed (the parser keeps
/// its own stack, so nesting depth costs no call stack).
#[derive(Clone, Copy)]
enum Pending {
    /// `(`.
    Paren,
    /// `min(` or `max(`; whether the first argument is complete.
    Call { is_min: bool, first_done: bool },
    /// Unary minus.
    Neg,
    /// `+`.
    Add,
    /// Binary minus.
    Sub,
    /// `*`, floor division, ceiling division, modulo.
    Mul(BinOp),
}

impl Pending {
    /// Binding strength of an operator (0 for brackets, which are never reduced
    /// by an operator).
    fn precedence(self) -> u8 {
        match self {
            Pending::Paren | Pending::Call { .. } => 0,
            Pending::Add | Pending::Sub => 1,
            Pending::Mul(_) => 2,
            Pending::Neg => 3,
        }
    }
}

/// An operand with the depth of its tree.
type Operand = (Expr, usize);

/// The part of a map before the domain: variables, results, and the names in scope.
type Header<'a> = (
    Vec<Variable>,
    Vec<Variable>,
    Vec<Variable>,
    Vec<Expr>,
    Scope<'a>,
);

/// The expression stacks of a parser.
type Stacks = (Vec<(Pending, usize)>, Vec<Operand>);

thread_local! {
    /// Expression stacks, reused by every parse on a thread (a map is parsed in
    /// about a microsecond: allocating them anew was a tenth of it).
    static STACKS: std::cell::RefCell<Stacks> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

struct Parser<'a> {
    lex: Lexer<'a>,
    /// Expression stacks, kept between expressions.
    ops: Vec<(Pending, usize)>,
    operands: Vec<Operand>,
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        if self.ops.capacity() <= KEEP_TOKENS && self.operands.capacity() <= KEEP_TOKENS {
            self.operands.clear();
            let stacks = (
                std::mem::take(&mut self.ops),
                std::mem::take(&mut self.operands),
            );
            let _ = STACKS.try_with(|cell| {
                if let Ok(mut pool) = cell.try_borrow_mut() {
                    *pool = stacks;
                }
            });
        }
    }
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        let (ops, operands) = STACKS
            .try_with(|cell| {
                cell.try_borrow_mut()
                    .map(|mut v| std::mem::take(&mut *v))
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        Parser {
            lex: Lexer::new(text),
            ops,
            operands,
        }
    }

    fn var_list(
        &mut self,
        close: u8,
        kind: VarKind,
        scope: &mut Scope<'a>,
    ) -> Result<Vec<Variable>, ParseError> {
        let mut vars = Vec::new();
        if self.lex.eat(punct(close))? {
            return Ok(vars);
        }
        loop {
            let (tok, start) = self.lex.next()?;
            let Tok::Ident(name) = tok else {
                return Err(ParseError {
                    offset: start,
                    message: format!("expected a variable name, found {}", describe(&tok)),
                });
            };
            let index = vars.len();
            scope.names.push((name, Var { kind, index }));
            vars.push(Variable {
                bounds: Interval::FULL,
                name: if is_default_name(name, kind, index) {
                    String::new()
                } else {
                    name.to_string()
                },
            });
            if self.lex.eat(punct(close))? {
                return Ok(vars);
            }
            let (found, at) = self.lex.next()?;
            if found != punct(b',') {
                return Err(ParseError {
                    offset: at,
                    message: format!(
                        "expected `,` or `{}`, found {}",
                        close as char,
                        describe(&found)
                    ),
                });
            }
        }
    }

    /// One expression, up to the first token that cannot continue it (left for
    /// the caller). Operator precedence with explicit stacks: `-x` binds tightest,
    /// then `*`, `floordiv`, `ceildiv`, `mod` (left to right), then `+`, `-`.
    fn expr(&mut self, scope: &Scope<'_>) -> Result<Expr, ParseError> {
        let mut ops = std::mem::take(&mut self.ops);
        let mut operands = std::mem::take(&mut self.operands);
        ops.clear();
        operands.clear();
        let e = self.expr_with(scope, &mut ops, &mut operands);
        self.ops = ops;
        self.operands = operands;
        e
    }

    /// [`Parser::expr`] with the operator and operand stacks to use.
    fn expr_with(
        &mut self,
        scope: &Scope<'_>,
        ops: &mut Vec<(Pending, usize)>,
        operands: &mut Vec<Operand>,
    ) -> Result<Expr, ParseError> {
        loop {
            if let Some(pending) = self.operand(scope, operands)? {
                let open = ops
                    .iter()
                    .filter(|(p, _)| {
                        matches!(p, Pending::Paren | Pending::Call { .. } | Pending::Neg)
                    })
                    .count();
                if open >= MAX_NESTING {
                    return Err(ParseError {
                        offset: pending.1,
                        message: format!("expression nested more than {MAX_NESTING} levels deep"),
                    });
                }
                ops.push(pending);
                continue;
            }
            loop {
                let (tok, start, _) = self.lex.peek()?;
                if let Some(op) = binary_operator(tok) {
                    self.lex.next()?;
                    while ops
                        .last()
                        .is_some_and(|(top, _)| top.precedence() >= op.precedence())
                    {
                        let (top, at) = ops.pop().expect("an operator");
                        reduce(top, at, operands)?;
                    }
                    ops.push((op, start));
                    break;
                }
                // Everything pending inside the innermost bracket is complete.
                while ops.last().is_some_and(|(top, _)| top.precedence() > 0) {
                    let (top, at) = ops.pop().expect("an operator");
                    reduce(top, at, operands)?;
                }
                let Some(&(bracket, open)) = ops.last() else {
                    return Ok(operands.pop().expect("one operand").0);
                };
                match (bracket, tok) {
                    (Pending::Paren, Tok::Punct(b')')) => {
                        self.lex.next()?;
                        ops.pop();
                    }
                    (
                        Pending::Call {
                            is_min,
                            first_done: true,
                        },
                        Tok::Punct(b')'),
                    ) => {
                        self.lex.next()?;
                        ops.pop();
                        let (b, db) = operands.pop().expect("second argument");
                        let (a, da) = operands.pop().expect("first argument");
                        let e = if is_min { a.min(b) } else { a.max(b) };
                        operands.push((e, deeper(da.max(db), open)?));
                    }
                    (
                        Pending::Call {
                            is_min,
                            first_done: false,
                        },
                        Tok::Punct(b','),
                    ) => {
                        self.lex.next()?;
                        ops.pop();
                        ops.push((
                            Pending::Call {
                                is_min,
                                first_done: true,
                            },
                            open,
                        ));
                        break;
                    }
                    (Pending::Call { first_done, .. }, _) => {
                        let what = if first_done { "`)`" } else { "`,`" };
                        return Err(ParseError {
                            offset: start,
                            message: format!("expected {what}, found {}", describe(&tok)),
                        });
                    }
                    _ => {
                        return Err(ParseError {
                            offset: start,
                            message: format!("expected `)`, found {}", describe(&tok)),
                        })
                    }
                }
            }
        }
    }

    /// Reads an operand onto `operands`, or returns the prefix (`(`, `min(`,
    /// unary minus) that comes before one.
    fn operand(
        &mut self,
        scope: &Scope<'_>,
        operands: &mut Vec<Operand>,
    ) -> Result<Option<(Pending, usize)>, ParseError> {
        let (tok, start) = self.lex.next()?;
        let e = match tok {
            Tok::Punct(b'-') => {
                if let (Tok::Int(v), at, _) = self.lex.peek()? {
                    self.lex.next()?;
                    literal(-i128::from(v), at)?
                } else {
                    return Ok(Some((Pending::Neg, start)));
                }
            }
            Tok::Int(v) => literal(i128::from(v), start)?,
            Tok::Punct(b'(') => return Ok(Some((Pending::Paren, start))),
            Tok::Ident(name) if (name == "min" || name == "max") && self.lex.at(punct(b'('))? => {
                self.lex.next()?;
                let is_min = name == "min";
                return Ok(Some((
                    Pending::Call {
                        is_min,
                        first_done: false,
                    },
                    start,
                )));
            }
            Tok::Ident(name) => match scope.lookup(name) {
                Some(v) => Expr::Var(v),
                None => {
                    return Err(ParseError {
                        offset: start,
                        message: format!("unknown variable `{name}`"),
                    })
                }
            },
            other => {
                return Err(ParseError {
                    offset: start,
                    message: format!("expected an expression, found {}", describe(&other)),
                })
            }
        };
        operands.push((e, 1));
        Ok(None)
    }

    fn interval(&mut self) -> Result<Interval, ParseError> {
        self.lex.expect(punct(b'['), "`[`")?;
        let lo = self.signed_int()?;
        self.lex.expect(punct(b','), "`,`")?;
        let hi = self.signed_int()?;
        self.lex.expect(punct(b']'), "`]`")?;
        Ok(Interval::new(lo, hi))
    }

    fn signed_int(&mut self) -> Result<i64, ParseError> {
        let negative = self.lex.eat(punct(b'-'))?;
        let (tok, start) = self.lex.next()?;
        let Tok::Int(v) = tok else {
            return Err(ParseError {
                offset: start,
                message: format!("expected an integer, found {}", describe(&tok)),
            });
        };
        let v = if negative {
            -i128::from(v)
        } else {
            i128::from(v)
        };
        i64::try_from(v).map_err(|_| ParseError {
            offset: start,
            message: "integer does not fit in 64 bits".into(),
        })
    }

    /// `(dims)[ranges]{runtimes} -> (results)`; returns the scope too.
    fn header(&mut self) -> Result<Header<'a>, ParseError> {
        let mut scope = Scope { names: Vec::new() };
        self.lex
            .expect(punct(b'('), "`(` starting the dimension list")?;
        let dims = self.var_list(b')', VarKind::Dim, &mut scope)?;
        let ranges = if self.lex.eat(punct(b'['))? {
            self.var_list(b']', VarKind::Range, &mut scope)?
        } else {
            Vec::new()
        };
        let runtimes = if self.lex.eat(punct(b'{'))? {
            self.var_list(b'}', VarKind::Runtime, &mut scope)?
        } else {
            Vec::new()
        };
        self.lex.expect(Tok::Arrow, "`->`")?;
        self.lex.expect(punct(b'('), "`(` starting the results")?;
        let mut results = Vec::new();
        if !self.lex.eat(punct(b')'))? {
            loop {
                results.push(self.expr(&scope)?);
                if self.lex.eat(punct(b')'))? {
                    break;
                }
                self.lex.expect(punct(b','), "`,` or `)`")?;
            }
        }
        Ok((dims, ranges, runtimes, results, scope))
    }

    fn map(&mut self) -> Result<IndexingMap, ParseError> {
        if self.lex.eat(ident("UNDEFINED"))? {
            return Ok(IndexingMap::undefined());
        }
        if self.lex.eat(ident("KNOWN"))? {
            self.lex.expect(ident("EMPTY"), "`EMPTY`")?;
            return Ok(IndexingMap::known_empty(0, 0));
        }
        let (mut dims, mut ranges, mut runtimes, results, scope) = self.header()?;
        let mut constraints = Vec::new();
        let mut infeasible = false;
        if self.lex.eat(punct(b','))? {
            self.lex.expect(ident("domain"), "`domain`")?;
            self.lex.expect(punct(b':'), "`:`")?;
            loop {
                let e = self.expr(&scope)?;
                self.lex.expect(ident("in"), "`in`")?;
                let range = self.interval()?;
                match e {
                    Expr::Var(v) => {
                        let var = match v.kind {
                            VarKind::Dim => &mut dims[v.index],
                            VarKind::Range => &mut ranges[v.index],
                            VarKind::Runtime => &mut runtimes[v.index],
                        };
                        var.bounds = var.bounds.intersect(&range);
                        infeasible |= !range.is_feasible();
                    }
                    e => constraints.push((e, range)),
                }
                if !self.lex.eat(punct(b','))? {
                    break;
                }
            }
        }
        if !self.lex.at(Tok::End)? {
            return self.lex.error("expected `,` or end of the map");
        }
        let mut map = IndexingMap::new(dims, ranges, runtimes, results, constraints);
        if infeasible {
            map.reset_to_known_empty();
        }
        Ok(map)
    }
}

/// The binary operator a token stands for, if any.
fn binary_operator(tok: Tok<'_>) -> Option<Pending> {
    Some(match tok {
        Tok::Punct(b'+') => Pending::Add,
        Tok::Punct(b'-') => Pending::Sub,
        Tok::Punct(b'*') => Pending::Mul(BinOp::Mul),
        Tok::Punct(b'/') => Pending::Mul(BinOp::FloorDiv),
        Tok::Punct(b'%') => Pending::Mul(BinOp::Mod),
        Tok::Ident("floordiv" | "floorDiv") => Pending::Mul(BinOp::FloorDiv),
        Tok::Ident("ceildiv" | "ceilDiv") => Pending::Mul(BinOp::CeilDiv),
        Tok::Ident("mod") => Pending::Mul(BinOp::Mod),
        _ => return None,
    })
}

/// The depth of a node over children of depth `children`, refused beyond
/// [`MAX_DEPTH`].
fn deeper(children: usize, at: usize) -> Result<usize, ParseError> {
    if children >= MAX_DEPTH {
        return Err(ParseError {
            offset: at,
            message: format!(
                "expression too deep: more than {MAX_DEPTH} nested operations (split it)"
            ),
        });
    }
    Ok(children + 1)
}

/// Applies an operator to the operands on top of the stack (with the smart
/// constructors' constant folding, as the recursive form of the grammar did).
fn reduce(op: Pending, at: usize, operands: &mut Vec<Operand>) -> Result<(), ParseError> {
    let (b, db) = operands.pop().expect("an operand");
    let (e, depth) = match op {
        Pending::Neg => (-b, db),
        Pending::Add | Pending::Sub | Pending::Mul(_) => {
            let (a, da) = operands.pop().expect("a left operand");
            let (e, db) = match op {
                Pending::Add => (a + b, db),
                // `a - b` is `a + b * -1`: the negation is a level of its own.
                Pending::Sub => (a - b, db + 1),
                Pending::Mul(op) => (Expr::binary(op, a, b), db),
                _ => unreachable!("binary operators only"),
            };
            (e, da.max(db))
        }
        Pending::Paren | Pending::Call { .. } => unreachable!("brackets are not reduced"),
    };
    operands.push((e, deeper(depth, at)?));
    Ok(())
}

fn literal(v: i128, start: usize) -> Result<Expr, ParseError> {
    i64::try_from(v).map(Expr::Const).map_err(|_| ParseError {
        offset: start,
        message: "integer does not fit in 64 bits".into(),
    })
}

impl IndexingMap {
    /// Parses XLA's indexing-map text (see the module documentation).
    pub fn parse(text: &str) -> Result<IndexingMap, ParseError> {
        let trimmed = text.trim_start();
        if trimmed.starts_with("affine_map") {
            return IndexingMap::parse_affine_map(text);
        }
        Parser::new(text).map()
    }

    /// Parses MLIR's `affine_map<(d0, d1)[s0] -> (...)>`; symbols become range
    /// variables, bounds are unknown (the full `i64` range).
    pub fn parse_affine_map(text: &str) -> Result<IndexingMap, ParseError> {
        let mut p = Parser::new(text);
        p.lex.expect(ident("affine_map"), "`affine_map`")?;
        p.lex.expect(punct(b'<'), "`<`")?;
        let (dims, ranges, runtimes, results, _) = p.header()?;
        p.lex.expect(punct(b'>'), "`>`")?;
        if !p.lex.at(Tok::End)? {
            return p.lex.error("expected end of input after `>`");
        }
        Ok(IndexingMap::new(dims, ranges, runtimes, results, vec![]))
    }
}

/// Parses one expression whose variable names are resolved by `lookup`.
pub fn parse_expr(text: &str, lookup: &dyn Fn(&str) -> Option<Var>) -> Result<Expr, ParseError> {
    // Collect identifiers first so the scope is a plain list.
    let mut lex = Lexer::new(text);
    let mut names = Vec::new();
    loop {
        let (tok, _) = lex.next()?;
        match tok {
            Tok::End => break,
            Tok::Ident(n) => {
                if let Some(v) = lookup(n) {
                    names.push((n, v));
                }
            }
            _ => {}
        }
    }
    let scope = Scope { names };
    let mut p = Parser::new(text);
    let e = p.expr(&scope)?;
    if !p.lex.at(Tok::End)? {
        return p.lex.error("expected end of expression");
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `work` on a thread with the default 2 MiB stack of the server's workers.
    fn on_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(work)
            .unwrap()
            .join()
            .expect("no stack overflow")
    }

    #[test]
    fn deep_parentheses_are_an_error_at_the_first_level_too_deep() {
        let error = on_small_stack(|| {
            let text = format!("(d0) -> ({}d0{})", "(".repeat(3000), ")".repeat(3000));
            IndexingMap::parse(&text).unwrap_err()
        });
        assert_eq!(error.offset, 9 + MAX_NESTING, "{error}");
        assert!(error.message.contains("nested more than 200"), "{error}");
        let text = format!("(d0) -> ({}d0{})", "(".repeat(199), ")".repeat(199));
        assert_eq!(
            IndexingMap::parse(&text).unwrap().to_string(),
            "(d0) -> (d0)"
        );
        for deep in ["-", "min(0, ", "max(d0, "] {
            let close = if deep == "-" { "" } else { ")" };
            let text = format!("(d0) -> ({}d0{})", deep.repeat(5000), close.repeat(5000));
            let error = on_small_stack(move || IndexingMap::parse(&text).unwrap_err());
            assert!(error.message.contains("nested more than"), "{error}");
        }
    }

    #[test]
    fn long_chains_are_refused_past_the_depth_that_walks_can_take() {
        let sum = |n: usize| format!("(d0) -> ({})", vec!["d0 * 3"; n].join(" + "));
        let error = on_small_stack(move || IndexingMap::parse(&sum(5000)).unwrap_err());
        assert!(error.message.contains("too deep"), "{error}");
        // The deepest accepted map can be simplified, printed and dropped on a
        // worker's stack.
        let printed = on_small_stack(move || {
            let text = format!("(d0) -> ({})", vec!["d0 mod 7"; MAX_DEPTH - 1].join(" + "));
            let mut map = IndexingMap::parse(&text).unwrap();
            map.simplify();
            map.to_string().len()
        });
        assert!(printed > 0);
    }
}
