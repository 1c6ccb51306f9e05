//! Tile sizes from a fusion's `backend_config`:
//! `fusion_backend_config.block_level_fusion_config.output_tiles[*].sizes`, as
//! XLA writes them for Triton fusions (sizes as strings `"16"` or numbers, the
//! config as JSON, JSON with bare keys, or a quoted string with `\"` escapes).
//!
//! Besides the values, the byte range of every `sizes` list in the document is
//! kept, so diagnostics point at it and the quick fix rewrites only the list,
//! in the quoting style it was written in.

use crate::model;
use std::ops::Range;

/// The configured output tiles of one fusion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputTiles {
    /// One size list per fusion output.
    pub sizes: Vec<Vec<i64>>,
    /// `fusion_backend_config.kind` starts with `__triton`.
    pub triton: bool,
    /// For each size list, the range between its `[` and `]` (when found in
    /// the text; empty otherwise).
    pub list_ranges: Vec<Range<usize>>,
    /// The `output_tiles` key through the end of its list, or the attribute.
    pub range: Range<usize>,
}

/// A malformed `output_tiles` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub range: Range<usize>,
    pub message: String,
}

/// The output tiles of `instr` (an instruction of computation `c`), `None` when its
/// backend_config has no `output_tiles`. Ranges are in document bytes.
pub fn output_tiles(
    c: model::ComputationRef,
    instr: &model::Instruction,
) -> Option<Result<OutputTiles, ConfigError>> {
    let config = instr.attrs().backend_config()?;
    let fusion = config.get("fusion_backend_config")?;
    let tiles = fusion
        .get("block_level_fusion_config")?
        .get("output_tiles")?;
    let triton = fusion
        .get("kind")
        .and_then(|k| k.as_str())
        .is_some_and(|k| k.starts_with("__triton"));
    let attr = instr.attributes.iter().find(|a| a.name == "backend_config");
    let attr_range = c.abs(attr.map_or(instr.name_range, |a| a.value_range));
    let located = locate(c.text, c.offset, attr_range.clone());
    let range = located.as_ref().map_or(attr_range.clone(), |l| l.0.clone());
    let list_ranges = located.map(|l| l.1).unwrap_or_default();
    let error = |k: usize, message: String| ConfigError {
        range: list_ranges.get(k).cloned().unwrap_or(range.clone()),
        message,
    };
    let Some(entries) = tiles.as_array() else {
        return Some(Err(error(0, "output_tiles is not a list".into())));
    };
    let mut sizes = vec![];
    for (k, entry) in entries.iter().enumerate() {
        let Some(list) = entry.get("sizes").and_then(|s| s.as_array()) else {
            return Some(Err(error(
                k,
                format!("output_tiles[{k}] has no sizes list"),
            )));
        };
        let mut out = vec![];
        for v in list {
            let n = match v {
                serde_json::Value::Number(n) => n.as_i64(),
                serde_json::Value::String(s) => s.trim().parse::<i64>().ok(),
                _ => None,
            };
            match n {
                Some(n) if n >= 1 => out.push(n),
                _ => {
                    return Some(Err(error(
                        k,
                        format!(
                            "output_tiles[{k}].sizes has {v}: tile sizes are positive integers"
                        ),
                    )))
                }
            }
        }
        sizes.push(out);
    }
    Some(Ok(OutputTiles {
        sizes,
        triton,
        list_ranges,
        range,
    }))
}

/// Finds `output_tiles` in the attribute text and the inside of every `sizes`
/// list after it (up to the end of the output_tiles list).
/// `text` is the chunk's text, starting at document offset `base`; `attr` is in
/// document bytes.
fn locate(
    text: &str,
    base: usize,
    attr: Range<usize>,
) -> Option<(Range<usize>, Vec<Range<usize>>)> {
    let body = text.get(attr.start - base..attr.end - base)?;
    let key = body.find("output_tiles")?;
    let open = key + body[key..].find('[')?;
    let close = open + matching_bracket(&body[open..])?;
    let mut lists = vec![];
    let mut at = open + 1;
    while let Some(rel) = body[at..close].find("sizes") {
        let s = at + rel;
        let Some(lb) = body[s..close].find('[') else {
            break;
        };
        let lb = s + lb;
        let rb = lb + matching_bracket(&body[lb..])?;
        lists.push(attr.start + lb + 1..attr.start + rb);
        at = rb + 1;
    }
    Some((attr.start + key..attr.start + close + 1, lists))
}

/// Offset of the `]` matching the `[` at the start of `s`.
fn matching_bracket(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The text to put between the brackets of a sizes list written as `old`
/// (its inside), keeping its quoting (`"8"`, `\"8\"` or `8`) and separator
/// (`,` or `, `).
pub fn format_sizes_like(old: &str, sizes: &[i64]) -> String {
    let first = old.split(',').next().unwrap_or("").trim();
    let quote = if first.starts_with("\\\"") {
        "\\\""
    } else if first.starts_with('"') {
        "\""
    } else {
        ""
    };
    let sep = if old.contains(", ") { ", " } else { "," };
    sizes
        .iter()
        .map(|s| format!("{quote}{s}{quote}"))
        .collect::<Vec<_>>()
        .join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_fusion(text: &str) -> (model::HloFile, model::InstrRef) {
        let file = model::parse_hlo(text);
        let (r, _) = file
            .all_instructions()
            .find(|(_, i)| i.opcode.name() == "fusion")
            .unwrap();
        (file, r)
    }

    #[test]
    fn reads_strings_numbers_and_escaped_configs() {
        let cases = [
            (
                r#"backend_config={"fusion_backend_config":{"kind":"__triton","block_level_fusion_config":{"output_tiles":[{"sizes":["4", "128"]}]}}}"#,
                vec![4, 128],
                true,
                r#""4", "128""#,
                r#""2", "8""#,
            ),
            (
                r#"backend_config={fusion_backend_config:{kind:"__triton",block_level_fusion_config:{output_tiles:[{sizes:[64,32]}]}}}"#,
                vec![64, 32],
                true,
                "64,32",
                "2,8",
            ),
            (
                r#"backend_config="{\"fusion_backend_config\": {kind: \"__triton_nested_gemm_fusion\", block_level_fusion_config: {\"output_tiles\":[{\"sizes\":[\"16\",\"16\"]}]}}}""#,
                vec![16, 16],
                true,
                r#"\"16\",\"16\""#,
                r#"\"2\",\"8\""#,
            ),
        ];
        for (config, sizes, triton, inside, fixed) in cases {
            let text = format!(
                "f {{\n  p = f32[8,256] parameter(0)\n  ROOT n = f32[8,256] negate(p)\n}}\n\nENTRY e {{\n  a = f32[8,256] parameter(0)\n  ROOT r = f32[8,256] fusion(a), kind=kCustom, calls=f, {config}\n}}\n"
            );
            let (file, r) = first_fusion(&text);
            let tiles = output_tiles(file.computation(r), file.instruction(r))
                .unwrap()
                .unwrap();
            assert_eq!(tiles.sizes, vec![sizes], "{config}");
            assert_eq!(tiles.triton, triton);
            assert_eq!(&text[tiles.list_ranges[0].clone()], inside);
            assert!(text[tiles.range.clone()].starts_with("output_tiles"));
            assert_eq!(format_sizes_like(inside, &[2, 8]), fixed, "{config}");
        }
    }

    #[test]
    fn bad_sizes_are_errors_with_a_range() {
        let text = "f {\n  ROOT p = f32[8] parameter(0)\n}\n\nENTRY e {\n  a = f32[8] parameter(0)\n  ROOT r = f32[8] fusion(a), kind=kCustom, calls=f, backend_config={\"fusion_backend_config\":{\"block_level_fusion_config\":{\"output_tiles\":[{\"sizes\":[\"0\"]}]}}}\n}\n";
        let (file, r) = first_fusion(text);
        let err = output_tiles(file.computation(r), file.instruction(r))
            .unwrap()
            .unwrap_err();
        assert_eq!(&text[err.range.clone()], "\"0\"");
        assert!(err.message.contains("positive"), "{}", err.message);
    }
}
