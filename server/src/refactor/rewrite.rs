//! The text edits of a chain fix, in bytes of the checked document.
//!
//! * Removal: delete every member's line; every use of the last member names the
//!   source instead. When the last member is the computation's root, the source
//!   becomes `ROOT` (it has the same shape and layout, so the computation's result
//!   type, a signature's `-> shape` and the entry layout stay valid). Marking the
//!   source is preferred over keeping a `copy`: a copy would be a new op the module
//!   did not have, and a leftover bitcast would be the no-op being removed.
//! * Replacement: delete every member but the last; the last keeps its name, `ROOT`,
//!   shape and layout text and its attributes (metadata, sharding, ...; except the
//!   old `dimensions`), and gets the new opcode and the source as its operand. Its
//!   uses do not change.

use std::ops::Range;

use crate::model::{Computation, Fix, TextEdit};

use super::chain::{is_root, Chain};
use super::maps::Replacement;

/// `range` widened to whole lines when nothing else shares them (leading
/// indentation; trailing spaces and a `//` comment), including the newline.
pub fn line_span(text: &str, range: Range<usize>) -> Range<usize> {
    let line_start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[range.end..]
        .find('\n')
        .map_or(text.len(), |i| range.end + i + 1);
    let before = &text[line_start..range.start];
    let after = text[range.end..line_end].trim();
    if before.trim().is_empty() && (after.is_empty() || after.starts_with("//")) {
        line_start..line_end
    } else {
        range
    }
}

/// How a use site should name `name`: with `%` when the use was written with one.
fn spelled_like(written: &str, name: &str) -> String {
    if written.starts_with('%') {
        format!("%{name}")
    } else {
        name.to_string()
    }
}

/// The edits of `replacement` applied to `chain`, sorted and non-overlapping;
/// `None` when the text lacks a range the edit needs.
pub fn edits(
    text: &str,
    c: &Computation,
    chain: &Chain,
    replacement: &Replacement,
) -> Option<Vec<TextEdit>> {
    let first = c.instruction(chain.members[0]);
    let last = c.instruction(chain.last());
    let source = c.instruction(chain.source);
    let mut edits = Vec::new();
    let deleted = if *replacement == Replacement::Remove {
        &chain.members[..]
    } else {
        &chain.members[..chain.members.len() - 1]
    };
    for &id in deleted {
        edits.push(TextEdit {
            range: line_span(text, c.instruction(id).range.range()),
            new_text: String::new(),
        });
    }
    match replacement {
        Replacement::Remove => {
            // `users` has one entry per use: visit each user once.
            let mut users = c.users(last.id).to_vec();
            users.sort();
            users.dedup();
            for user in users {
                for operand in &c.instruction(user).operands {
                    if operand.target != Some(last.id) {
                        continue;
                    }
                    let range = operand.name_range()?.range();
                    edits.push(TextEdit {
                        new_text: spelled_like(text.get(range.clone())?, &source.name),
                        range,
                    });
                }
            }
            if is_root(c, last) {
                let at = source.range.start as usize;
                edits.push(TextEdit {
                    range: at..at,
                    new_text: "ROOT ".to_string(),
                });
            }
        }
        _ => {
            let operand = text.get(first.operands[0].name_range()?.range())?;
            let opcode = replacement.opcode()?;
            let mut new_text = format!("{opcode}({operand})");
            if let Replacement::Transpose(perm) = replacement {
                let perm: Vec<String> = perm.iter().map(usize::to_string).collect();
                new_text.push_str(&format!(", dimensions={{{}}}", perm.join(",")));
            }
            for attr in last
                .attributes
                .iter()
                .filter(|a| a.name != "dimensions" && a.name != "inferred_dimension")
            {
                new_text.push_str(", ");
                new_text.push_str(
                    text.get(attr.name_range.start as usize..attr.value_range.end as usize)?,
                );
            }
            edits.push(TextEdit {
                range: last.opcode_range.start as usize..last.range.end as usize,
                new_text,
            });
        }
    }
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let disjoint = edits.windows(2).all(|w| w[0].range.end <= w[1].range.start);
    disjoint.then_some(edits)
}

/// The quick fix for `replacement` on `chain`, titled for the editor's menu.
pub fn fix(text: &str, c: &Computation, chain: &Chain, replacement: &Replacement) -> Option<Fix> {
    let last = c.instruction(chain.last());
    let source = c.instruction(chain.source);
    let title = match (replacement, chain.members.len()) {
        (Replacement::Remove, 1) => format!(
            "Remove the no-op {} `{}` (its uses read `{}`)",
            last.opcode.name(),
            last.name,
            source.name
        ),
        (Replacement::Remove, n) => format!(
            "Remove the {n} instructions from `{}` to `{}` (uses of `{}` read `{}`)",
            c.instruction(chain.members[0]).name,
            last.name,
            last.name,
            source.name
        ),
        (other, n) => format!(
            "Replace the {n} instructions with one {} of `{}`",
            other.opcode()?,
            source.name
        ),
    };
    Some(Fix {
        title,
        edits: edits(text, c, chain, replacement)?,
    })
}

/// `text` with `edits` (sorted, disjoint) applied.
pub fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for e in edits {
        out.push_str(&text[at..e.range.start]);
        out.push_str(&e.new_text);
        at = e.range.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_only_when_alone_on_them() {
        let text = "a\n  x = f32[] y() // note\nb";
        let start = text.find('x').unwrap();
        let end = text.find(" //").unwrap();
        assert_eq!(
            &text[line_span(text, start..end)],
            "  x = f32[] y() // note\n"
        );
        let text = "a; x = f32[] y()\n";
        let start = text.find('x').unwrap();
        assert_eq!(
            line_span(text, start..text.len() - 1),
            start..text.len() - 1
        );
    }

    #[test]
    fn apply_splices_in_order() {
        let edits = vec![
            TextEdit {
                range: 0..1,
                new_text: "A".into(),
            },
            TextEdit {
                range: 2..2,
                new_text: "-".into(),
            },
        ];
        assert_eq!(apply("abc", &edits), "Ab-c");
    }
}
