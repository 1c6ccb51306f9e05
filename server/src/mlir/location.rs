//! MLIR locations (`loc(...)`) read back to where the program came from: a file,
//! line and column (`"model.py":12:3`, `"model.py":4:8 to :37`), named
//! (`"softmax"(child)`: the function of the frame inside), call sites
//! (`callsite(callee at caller)`: a stack, innermost first), fused locations
//! (`fused[a, b]`: the first that names a file) and `#loc3` aliases defined once
//! at the end of the file, as JAX writes them with `as_text(debug_info=True)`.
//!
//! Read from text with byte offsets, so a file's string can be a document link;
//! never fails (what it cannot read is no frame), and an alias cycle stops.

use std::collections::HashMap;
use std::ops::Range;

use super::reader::MlirFile;
use crate::model::stack_frames::Frame;

/// Aliases followed at most, one inside another (a cycle stops here).
const MAX_DEPTH: usize = 64;

/// A `"file":line:col` written in the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileLine {
    pub file: String,
    /// The file's string, quotes included.
    pub range: Range<usize>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

/// The frames of the location whose text (inside `loc(...)`, or an alias such as
/// `#loc3`) is `text`: innermost first, only those that name a file.
pub fn frames(src: &str, file: &MlirFile, text: &str) -> Vec<Frame> {
    let aliases = alias_values(src, file);
    let mut out = Vec::new();
    Reader {
        text,
        at: 0,
        base: 0,
    }
    .location(&aliases, 0, &mut out, &mut Vec::new());
    out.into_iter().filter(|f| f.file.is_some()).collect()
}

/// The name of the location whose text is `text` (inside `loc(...)`, or an alias):
/// `"jit(f)/layer1/dot_general"` of `loc("jit(f)/layer1/dot_general"(#loc19))`, the
/// callee's name of a call site, the first name of a fused location. JAX writes
/// the name scopes of an op there (`jax.named_scope`, the jitted function), as
/// XLA's `op_name` metadata: `None` for a location with no name.
pub fn name(src: &str, file: &MlirFile, text: &str) -> Option<String> {
    let aliases = alias_values(src, file);
    let mut text = text;
    for _ in 0..MAX_DEPTH {
        let t = text.trim_start();
        let t = t.strip_prefix("loc(").map_or(t, str::trim_start);
        if let Some(alias) = t.strip_prefix('#') {
            let end = alias
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(alias.len());
            text = aliases.get(&t[..end + 1])?;
            continue;
        }
        if let Some(rest) = t.strip_prefix("callsite(") {
            text = rest;
            continue;
        }
        if let Some(rest) = t.strip_prefix("fused") {
            text = rest.trim_start().trim_start_matches('[');
            continue;
        }
        let mut reader = Reader {
            text: t,
            at: 0,
            base: 0,
        };
        let (value, _) = reader.string()?;
        // `"file":3:4` is a place, `"name"(...)` or a bare `"name"` a name.
        return (!reader.rest().starts_with(':')).then_some(value);
    }
    None
}

/// Every `"file":line[:col]` inside a `loc(...)` of the document (op locations,
/// arguments' and aliases'), in text order.
pub fn file_lines(src: &str, file: &MlirFile) -> Vec<FileLine> {
    let mut out = Vec::new();
    let tokens = &file.tokens;
    for k in 0..tokens.len() {
        let opens = k + 1 < tokens.len() && file.token_text(src, k + 1) == "(";
        if file.token_text(src, k) != "loc" || !opens {
            continue;
        }
        let start = tokens[k + 1].range.end;
        let mut reader = Reader {
            text: &src[start..],
            at: 0,
            base: start,
        };
        reader.location(&HashMap::new(), MAX_DEPTH, &mut Vec::new(), &mut out);
    }
    out
}

/// `#loc3` → the text from its `loc(...)` on (the reader reads one location).
fn alias_values<'a>(src: &'a str, file: &MlirFile) -> HashMap<&'a str, &'a str> {
    file.aliases
        .iter()
        .filter_map(|a| {
            let value = src.get(a.name_range.end..)?.trim_start();
            let value = value.strip_prefix('=')?.trim_start();
            value
                .starts_with("loc")
                .then(|| Some((src.get(a.name_range.clone())?, value)))?
        })
        .collect()
}

/// A cursor over location text; `base` is where `text` starts in the document.
struct Reader<'a> {
    text: &'a str,
    at: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    /// Consumes `word` (after spaces) if it is next.
    fn eat(&mut self, word: &str) -> bool {
        self.skip_space();
        if self.rest().starts_with(word) {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    /// A quoted string: its value and its range (quotes included, document bytes).
    fn string(&mut self) -> Option<(String, Range<usize>)> {
        self.skip_space();
        let start = self.at;
        let mut chars = self.rest().char_indices();
        if chars.next()?.1 != '"' {
            return None;
        }
        let mut value = String::new();
        let mut escaped = false;
        for (k, c) in chars {
            match c {
                '"' if !escaped => {
                    self.at = start + k + 1;
                    return Some((value, self.base + start..self.base + self.at));
                }
                '\\' if !escaped => escaped = true,
                _ => {
                    escaped = false;
                    value.push(c);
                }
            }
        }
        self.at = self.text.len();
        None
    }

    fn number(&mut self) -> Option<u32> {
        self.skip_space();
        let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        let n = self.rest()[..digits].parse().ok()?;
        self.at += digits;
        Some(n)
    }

    /// An identifier (`#loc3`, `callsite`, `unknown`).
    fn word(&mut self) -> &'a str {
        self.skip_space();
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '#' | '_' | '.' | '$')))
            .unwrap_or(rest.len());
        self.at += len;
        &rest[..len]
    }

    /// Reads one location, appending its frames (innermost first) to `frames` and
    /// every file it names to `files`; `depth` counts the aliases followed.
    fn location(
        &mut self,
        aliases: &HashMap<&str, &'a str>,
        depth: usize,
        frames: &mut Vec<Frame>,
        files: &mut Vec<FileLine>,
    ) {
        self.skip_space();
        if self.rest().starts_with('"') {
            let Some((value, range)) = self.string() else {
                return;
            };
            if self.eat("(") {
                // A name around a location: the function of its innermost frame.
                let from = frames.len();
                self.location(aliases, depth, frames, files);
                self.eat(")");
                if let Some(f) = frames.get_mut(from).filter(|f| f.function.is_none()) {
                    f.function = Some(value);
                }
            } else if self.rest().starts_with(':') {
                let line = self.eat(":").then(|| self.number()).flatten();
                let column = self.eat(":").then(|| self.number()).flatten();
                // `to :37` or `to 5:2`: the end of a range, not another place.
                if self.eat("to") {
                    self.number();
                    if self.eat(":") {
                        self.number();
                    }
                }
                frames.push(Frame {
                    file: Some(value.clone()),
                    function: None,
                    line,
                    column,
                });
                files.push(FileLine {
                    file: value,
                    range,
                    line,
                    column,
                });
            }
            // A bare name (`loc("add0")`): no file.
            return;
        }
        let word = self.word();
        match word {
            "loc" if self.eat("(") => {
                self.location(aliases, depth, frames, files);
                self.eat(")");
            }
            "callsite" if self.eat("(") => {
                self.location(aliases, depth, frames, files);
                if self.eat("at") {
                    self.location(aliases, depth, frames, files);
                }
                self.eat(")");
            }
            "fused" => self.fused(aliases, depth, frames, files),
            alias if alias.starts_with('#') && depth < MAX_DEPTH => {
                if let Some(inner) = aliases.get(alias) {
                    let mut reader = Reader {
                        text: inner,
                        at: 0,
                        base: 0,
                    };
                    reader.location(aliases, depth + 1, frames, &mut Vec::new());
                }
            }
            _ => {}
        }
    }

    /// `fused[a, b]` or `fused<"metadata">[a, b]`: the frames of the first part
    /// that has any (the others are kept as files for links).
    fn fused(
        &mut self,
        aliases: &HashMap<&str, &'a str>,
        depth: usize,
        frames: &mut Vec<Frame>,
        files: &mut Vec<FileLine>,
    ) {
        if self.eat("<") {
            let mut open = 1;
            while open > 0 && self.at < self.text.len() {
                if self.rest().starts_with('"') {
                    self.string();
                    continue;
                }
                match self.rest().as_bytes()[0] {
                    b'<' => open += 1,
                    b'>' => open -= 1,
                    _ => {}
                }
                self.at += self.rest().chars().next().map_or(1, char::len_utf8);
            }
        }
        if !self.eat("[") {
            return;
        }
        loop {
            let before = self.at;
            let mut part = Vec::new();
            self.location(aliases, depth, &mut part, files);
            if frames.is_empty() {
                frames.extend(part);
            }
            if !self.eat(",") {
                break;
            }
            if self.at == before {
                break;
            }
        }
        self.eat("]");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(src: &str, loc: &str) -> Vec<String> {
        let file = crate::mlir::read(src);
        frames(src, &file, loc).iter().map(Frame::short).collect()
    }

    const JAX: &str = r#"%0 = stablehlo.exponential %arg0 : tensor<4xf32> loc(#loc23)
#loc3 = loc("/tmp/m/model.py":8:16 to :23)
#loc4 = loc("/tmp/m/model.py":12:10 to :50)
#loc6 = loc("/tmp/m/model.py":8:8 to :24)
#loc11 = loc("<module>"(#loc4))
#loc13 = loc("softmax"(#loc6))
#loc17 = loc(callsite(#loc13 at #loc11))
#loc23 = loc("jit(softmax)/exp"(#loc17))
#loc30 = loc(#loc30)
"#;

    #[test]
    fn jax_call_sites_are_a_stack() {
        assert_eq!(
            shown(JAX, "#loc23"),
            ["model.py:8 in softmax", "model.py:12 in <module>"]
        );
        // A cycle of aliases stops.
        assert!(shown(JAX, "#loc30").is_empty());
    }

    #[test]
    fn plain_named_and_fused_locations() {
        assert_eq!(shown("", r#""a.py":3:1"#), ["a.py:3"]);
        assert_eq!(shown("", r#""f"("a.py":3:1)"#), ["a.py:3 in f"]);
        assert!(shown("", r#""add0""#).is_empty());
        assert!(shown("", "unknown").is_empty());
        assert_eq!(
            shown("", r#"fused<"x">["n", "b.py":7:2, "c.py":1:1]"#),
            ["b.py:7"]
        );
        assert_eq!(
            shown(
                "",
                r#"callsite("g"("a.py":1:1) at callsite("b.py":2:2 at "c.py":3:3))"#
            ),
            ["a.py:1 in g", "b.py:2", "c.py:3"]
        );
    }

    #[test]
    fn every_file_line_is_found_with_its_range() {
        let file = crate::mlir::read(JAX);
        let found = file_lines(JAX, &file);
        assert_eq!(found.len(), 3);
        assert_eq!(&JAX[found[0].range.clone()], "\"/tmp/m/model.py\"");
        assert_eq!((found[0].line, found[0].column), (Some(8), Some(16)));
    }
}
