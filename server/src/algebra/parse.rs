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

/// How deep parentheses, `min`/`max` and unary minus may nest: the parser
/// recurses once per level.
pub const MAX_NESTING: usize = 200;

/// How deep an expression tree may be (a 1,000-term sum is 1,000 deep): every
/// walk over the tree recurses once per level.
pub const MAX_DEPTH: usize = 1000;

/// An expression and the depth of its tree.
type Deep = (Expr, usize);

struct Parser<'a> {
    lex: Lexer<'a>,
    /// Current recursion depth (see [`MAX_NESTING`]).
    nesting: usize,
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
        self.sum(scope).map(|(e, _)| e)
    }

    /// `term (+|- term)*`, left-associated like MLIR's parser.
    fn sum(&mut self, scope: &Scope) -> Result<Deep, ParseError> {
        let mut lhs = self.term(scope)?;
        loop {
            let (negate, start) = match self.lex.peek()? {
                (Tok::Punct("+"), start, _) => (false, start),
                (Tok::Punct("-"), start, _) => (true, start),
                _ => return Ok(lhs),
            };
            self.lex.next()?;
            let rhs = self.term(scope)?;
            let depth = self.deeper(start, lhs.1.max(rhs.1 + usize::from(negate)))?;
            lhs = if negate {
                (lhs.0 - rhs.0, depth)
            } else {
                (lhs.0 + rhs.0, depth)
            };
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

    fn term(&mut self, scope: &Scope) -> Result<Deep, ParseError> {
        let mut lhs = self.unary(scope)?;
        loop {
            let start = self.lex.peek()?.1;
            let Some(op) = self.term_op()? else {
                return Ok(lhs);
            };
            let rhs = self.unary(scope)?;
            let depth = self.deeper(start, lhs.1.max(rhs.1))?;
            lhs = (Expr::binary(op, lhs.0, rhs.0), depth);
        }
    }

    fn unary(&mut self, scope: &Scope) -> Result<Deep, ParseError> {
        let (tok, start, _) = self.lex.peek()?;
        if tok != punct("-") {
            return self.primary(scope);
        }
        self.lex.next()?;
        if let (Tok::Int(v), start, _) = self.lex.peek()? {
            self.lex.next()?;
            return Ok((literal(-v, start)?, 1));
        }
        let (operand, depth) = self.nested(start, |p| p.unary(scope))?;
        Ok((-operand, self.deeper(start, depth)?))
    }

    fn primary(&mut self, scope: &Scope) -> Result<Deep, ParseError> {
        let (tok, start) = self.lex.next()?;
        match tok {
            Tok::Int(v) => Ok((literal(v, start)?, 1)),
            Tok::Punct("(") => {
                let e = self.nested(start, |p| p.sum(scope))?;
                self.lex.expect(&punct(")"), "`)`")?;
                Ok(e)
            }
            Tok::Ident(name) if (name == "min" || name == "max") && self.lex.at(&punct("("))? => {
                self.lex.next()?;
                let (a, b) = self.nested(start, |p| {
                    let a = p.sum(scope)?;
                    p.lex.expect(&punct(","), "`,`")?;
                    let b = p.sum(scope)?;
                    Ok((a, b))
                })?;
                self.lex.expect(&punct(")"), "`)`")?;
                let depth = self.deeper(start, a.1.max(b.1))?;
                Ok((
                    if name == "min" {
                        a.0.min(b.0)
                    } else {
                        a.0.max(b.0)
                    },
                    depth,
                ))
            }
            Tok::Ident(name) => match scope.lookup(&name) {
                Some(v) => Ok((Expr::Var(v), 1)),
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

    /// Parses a parenthesized (or negated) part one level deeper, refusing input
    /// nested beyond [`MAX_NESTING`] instead of overflowing the stack.
    fn nested<T>(
        &mut self,
        start: usize,
        parse: impl FnOnce(&mut Self) -> Result<T, ParseError>,
    ) -> Result<T, ParseError> {
        if self.nesting >= MAX_NESTING {
            return Err(ParseError {
                offset: start,
                message: format!("expression nested more than {MAX_NESTING} levels deep"),
            });
        }
        self.nesting += 1;
        let parsed = parse(self);
        self.nesting -= 1;
        parsed
    }

    /// The depth of a node over children of depth `children`, refused beyond
    /// [`MAX_DEPTH`]: every later walk over the tree (simplification, printing,
    /// dropping it) recurses once per level.
    fn deeper(&self, start: usize, children: usize) -> Result<usize, ParseError> {
        if children >= MAX_DEPTH {
            return Err(ParseError {
                offset: start,
                message: format!(
                    "expression too deep: more than {MAX_DEPTH} nested operations (split it)"
                ),
            });
        }
        Ok(children + 1)
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
            nesting: 0,
        }
        .map()
    }

    /// Parses MLIR's `affine_map<(d0, d1)[s0] -> (...)>`; symbols become range
    /// variables, bounds are unknown (the full `i64` range).
    pub fn parse_affine_map(text: &str) -> Result<IndexingMap, ParseError> {
        let mut p = Parser {
            lex: Lexer { text, pos: 0 },
            nesting: 0,
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
        nesting: 0,
    };
    let e = p.expr(&scope)?;
    if !p.lex.at(&Tok::End)? {
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
