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

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i128),
    Ident(String),
    Punct(&'static str),
    End,
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn skip_ws(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// Next token and its start offset, without consuming it.
    fn peek(&mut self) -> Result<(Tok, usize, usize), ParseError> {
        self.skip_ws();
        let start = self.pos;
        let rest = &self.text[start..];
        let Some(c) = rest.chars().next() else {
            return Ok((Tok::End, start, start));
        };
        if c.is_ascii_digit() {
            let len = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            let value: i128 = rest[..len].parse().map_err(|_| ParseError {
                offset: start,
                message: "integer literal too large".into(),
            })?;
            return Ok((Tok::Int(value), start, start + len));
        }
        if c.is_alphabetic() || c == '_' {
            let len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(rest.len());
            return Ok((Tok::Ident(rest[..len].to_string()), start, start + len));
        }
        for p in [
            "->", "(", ")", "[", "]", "{", "}", ",", ":", "+", "-", "*", "/", "%", "<", ">",
        ] {
            if rest.starts_with(p) {
                return Ok((Tok::Punct(p), start, start + p.len()));
            }
        }
        Err(ParseError {
            offset: start,
            message: format!("unexpected character `{c}`"),
        })
    }

    fn next(&mut self) -> Result<(Tok, usize), ParseError> {
        let (tok, start, end) = self.peek()?;
        self.pos = end;
        Ok((tok, start))
    }

    fn at(&mut self, tok: &Tok) -> Result<bool, ParseError> {
        Ok(self.peek()?.0 == *tok)
    }

    fn eat(&mut self, tok: &Tok) -> Result<bool, ParseError> {
        if self.at(tok)? {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn expect(&mut self, tok: &Tok, what: &str) -> Result<usize, ParseError> {
        let (found, start) = self.next()?;
        if found == *tok {
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

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Int(v) => format!("`{v}`"),
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Punct(p) => format!("`{p}`"),
        Tok::End => "end of input".to_string(),
    }
}

fn punct(p: &'static str) -> Tok {
    Tok::Punct(p)
}

fn ident(s: &str) -> Tok {
    Tok::Ident(s.to_string())
}

/// The variables in scope while parsing expressions.
struct Scope {
    names: Vec<(String, Var)>,
}

impl Scope {
    fn lookup(&self, name: &str) -> Option<Var> {
        self.names
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

/// The part of a map before the domain: variables, results, and the names in scope.
type Header = (
    Vec<Variable>,
    Vec<Variable>,
    Vec<Variable>,
    Vec<Expr>,
    Scope,
);

struct Parser<'a> {
    lex: Lexer<'a>,
}

impl<'a> Parser<'a> {
    fn var_list(
        &mut self,
        close: &'static str,
        kind: VarKind,
        scope: &mut Scope,
    ) -> Result<Vec<Variable>, ParseError> {
        let mut vars = Vec::new();
        if self.lex.eat(&punct(close))? {
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
            let is_default = name == format!("{}{}", kind.default_prefix(), index);
            scope.names.push((name.clone(), Var { kind, index }));
            vars.push(Variable {
                bounds: Interval::FULL,
                name: if is_default { String::new() } else { name },
            });
            if self.lex.eat(&punct(close))? {
                return Ok(vars);
            }
            self.lex.expect(&punct(","), &format!("`,` or `{close}`"))?;
        }
    }

    fn expr(&mut self, scope: &Scope) -> Result<Expr, ParseError> {
        let mut lhs = self.term(scope)?;
        loop {
            if self.lex.eat(&punct("+"))? {
                let rhs = self.term(scope)?;
                lhs = lhs + rhs;
            } else if self.lex.eat(&punct("-"))? {
                let rhs = self.term(scope)?;
                lhs = lhs - rhs;
            } else {
                return Ok(lhs);
            }
        }
    }

    fn term_op(&mut self) -> Result<Option<BinOp>, ParseError> {
        let (tok, _, _) = self.lex.peek()?;
        let op = match &tok {
            Tok::Punct("*") => BinOp::Mul,
            Tok::Punct("/") => BinOp::FloorDiv,
            Tok::Punct("%") => BinOp::Mod,
            Tok::Ident(s) => match s.as_str() {
                "floordiv" | "floorDiv" => BinOp::FloorDiv,
                "ceildiv" | "ceilDiv" => BinOp::CeilDiv,
                "mod" => BinOp::Mod,
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        self.lex.next()?;
        Ok(Some(op))
    }

    fn term(&mut self, scope: &Scope) -> Result<Expr, ParseError> {
        let mut lhs = self.unary(scope)?;
        while let Some(op) = self.term_op()? {
            let rhs = self.unary(scope)?;
            lhs = Expr::binary(op, lhs, rhs);
        }
        Ok(lhs)
    }

    fn unary(&mut self, scope: &Scope) -> Result<Expr, ParseError> {
        if self.lex.eat(&punct("-"))? {
            if let (Tok::Int(v), start, _) = self.lex.peek()? {
                self.lex.next()?;
                return literal(-v, start);
            }
            let operand = self.unary(scope)?;
            return Ok(-operand);
        }
        self.primary(scope)
    }

    fn primary(&mut self, scope: &Scope) -> Result<Expr, ParseError> {
        let (tok, start) = self.lex.next()?;
        match tok {
            Tok::Int(v) => literal(v, start),
            Tok::Punct("(") => {
                let e = self.expr(scope)?;
                self.lex.expect(&punct(")"), "`)`")?;
                Ok(e)
            }
            Tok::Ident(name) if (name == "min" || name == "max") && self.lex.at(&punct("("))? => {
                self.lex.next()?;
                let a = self.expr(scope)?;
                self.lex.expect(&punct(","), "`,`")?;
                let b = self.expr(scope)?;
                self.lex.expect(&punct(")"), "`)`")?;
                Ok(if name == "min" { a.min(b) } else { a.max(b) })
            }
            Tok::Ident(name) => match scope.lookup(&name) {
                Some(v) => Ok(Expr::Var(v)),
                None => Err(ParseError {
                    offset: start,
                    message: format!("unknown variable `{name}`"),
                }),
            },
            other => Err(ParseError {
                offset: start,
                message: format!("expected an expression, found {}", describe(&other)),
            }),
        }
    }

    fn interval(&mut self) -> Result<Interval, ParseError> {
        self.lex.expect(&punct("["), "`[`")?;
        let lo = self.signed_int()?;
        self.lex.expect(&punct(","), "`,`")?;
        let hi = self.signed_int()?;
        self.lex.expect(&punct("]"), "`]`")?;
        Ok(Interval::new(lo, hi))
    }

    fn signed_int(&mut self) -> Result<i64, ParseError> {
        let negative = self.lex.eat(&punct("-"))?;
        let (tok, start) = self.lex.next()?;
        let Tok::Int(v) = tok else {
            return Err(ParseError {
                offset: start,
                message: format!("expected an integer, found {}", describe(&tok)),
            });
        };
        let v = if negative { -v } else { v };
        i64::try_from(v).map_err(|_| ParseError {
            offset: start,
            message: "integer does not fit in 64 bits".into(),
        })
    }

    /// `(dims)[ranges]{runtimes} -> (results)`; returns the scope too.
    fn header(&mut self) -> Result<Header, ParseError> {
        let mut scope = Scope { names: Vec::new() };
        self.lex
            .expect(&punct("("), "`(` starting the dimension list")?;
        let dims = self.var_list(")", VarKind::Dim, &mut scope)?;
        let ranges = if self.lex.eat(&punct("["))? {
            self.var_list("]", VarKind::Range, &mut scope)?
        } else {
            Vec::new()
        };
        let runtimes = if self.lex.eat(&punct("{"))? {
            self.var_list("}", VarKind::Runtime, &mut scope)?
        } else {
            Vec::new()
        };
        self.lex.expect(&punct("->"), "`->`")?;
        self.lex.expect(&punct("("), "`(` starting the results")?;
        let mut results = Vec::new();
        if !self.lex.eat(&punct(")"))? {
            loop {
                results.push(self.expr(&scope)?);
                if self.lex.eat(&punct(")"))? {
                    break;
                }
                self.lex.expect(&punct(","), "`,` or `)`")?;
            }
        }
        Ok((dims, ranges, runtimes, results, scope))
    }

    fn map(&mut self) -> Result<IndexingMap, ParseError> {
        if self.lex.eat(&ident("UNDEFINED"))? {
            return Ok(IndexingMap::undefined());
        }
        if self.lex.eat(&ident("KNOWN"))? {
            self.lex.expect(&ident("EMPTY"), "`EMPTY`")?;
            return Ok(IndexingMap::known_empty(0, 0));
        }
        let (mut dims, mut ranges, mut runtimes, results, scope) = self.header()?;
        let mut constraints = Vec::new();
        let mut infeasible = false;
        if self.lex.eat(&punct(","))? {
            self.lex.expect(&ident("domain"), "`domain`")?;
            self.lex.expect(&punct(":"), "`:`")?;
            loop {
                let e = self.expr(&scope)?;
                self.lex.expect(&ident("in"), "`in`")?;
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
                if !self.lex.eat(&punct(","))? {
                    break;
                }
            }
        }
        if !self.lex.at(&Tok::End)? {
            return self.lex.error("expected `,` or end of the map");
        }
        let mut map = IndexingMap::new(dims, ranges, runtimes, results, constraints);
        if infeasible {
            map.reset_to_known_empty();
        }
        Ok(map)
    }
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
        Parser {
            lex: Lexer { text, pos: 0 },
        }
        .map()
    }

    /// Parses MLIR's `affine_map<(d0, d1)[s0] -> (...)>`; symbols become range
    /// variables, bounds are unknown (the full `i64` range).
    pub fn parse_affine_map(text: &str) -> Result<IndexingMap, ParseError> {
        let mut p = Parser {
            lex: Lexer { text, pos: 0 },
        };
        p.lex.expect(&ident("affine_map"), "`affine_map`")?;
        p.lex.expect(&punct("<"), "`<`")?;
        let (dims, ranges, runtimes, results, _) = p.header()?;
        p.lex.expect(&punct(">"), "`>`")?;
        if !p.lex.at(&Tok::End)? {
            return p.lex.error("expected end of input after `>`");
        }
        Ok(IndexingMap::new(dims, ranges, runtimes, results, vec![]))
    }
}

/// Parses one expression whose variable names are resolved by `lookup`.
pub fn parse_expr(text: &str, lookup: &dyn Fn(&str) -> Option<Var>) -> Result<Expr, ParseError> {
    // Collect identifiers first so the scope is a plain list.
    let mut lex = Lexer { text, pos: 0 };
    let mut names = Vec::new();
    loop {
        let (tok, _) = lex.next()?;
        match tok {
            Tok::End => break,
            Tok::Ident(n) => {
                if let Some(v) = lookup(&n) {
                    names.push((n, v));
                }
            }
            _ => {}
        }
    }
    let scope = Scope { names };
    let mut p = Parser {
        lex: Lexer { text, pos: 0 },
    };
    let e = p.expr(&scope)?;
    if !p.lex.at(&Tok::End)? {
        return p.lex.error("expected end of expression");
    }
    Ok(e)
}
