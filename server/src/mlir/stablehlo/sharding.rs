//! Shardings written in StableHLO, turned into the `sharding={...}` text HLO
//! writes, as XLA's importer does: GSPMD's `mhlo.sharding = "{devices=[...]}"`
//! strings are HLO text already; Shardy's attributes (`sdy.mesh @mesh =
//! <["x"=2, "y"=4]>`, `#sdy.sharding<@mesh, [{"x"}, {}]>`,
//! `#sdy.sharding_per_value<[...]>`, the `<@mesh, [...]>` of
//! `sdy.sharding_constraint` and `sdy.manual_computation`) become HLO's named
//! form over the mesh (`{mesh['x'=2,'y'=4], [{'x'}, {}]}`), which the sharding
//! floor reads as it reads any `sharding=`. Open dimensions (`{"x", ?}`) are
//! read as closed: what is written is what each device holds so far.

use std::collections::HashMap;

use super::types::split_top;

/// The meshes a module declares, by name: `mesh` → `['x'=2,'y'=4]`, and the
/// text of Shardy's `xla.sdy.meshes` attribute XLA writes on the HLO module.
#[derive(Clone, Debug, Default)]
pub struct Meshes {
    axes: HashMap<String, String>,
    declared: Vec<String>,
}

impl Meshes {
    /// Every `sdy.mesh @name = <[...]>` of the text (a top-level op of the module).
    pub fn of(src: &str) -> Meshes {
        let mut meshes = Meshes::default();
        for line in src.lines() {
            let Some(rest) = line.trim_start().strip_prefix("sdy.mesh @") else {
                continue;
            };
            let Some((name, value)) = rest.split_once('=') else {
                continue;
            };
            let value = value.trim_start();
            let Some(close) = value.find("]>") else {
                continue;
            };
            let list = &value[..close + 1];
            let Some(axes) = list.strip_prefix('<') else {
                continue;
            };
            let name = name.trim().to_string();
            meshes
                .axes
                .insert(name.clone(), axes.replace('"', "'").replace(", ", ","));
            meshes.declared.push(format!("{name} = #sdy.mesh{list}>"));
        }
        meshes
    }

    /// `{xla.sdy.meshes={mesh = #sdy.mesh<["x"=2, "y"=4]>}}` for the HLO header,
    /// `None` without a mesh.
    pub fn frontend_attributes(&self) -> Option<String> {
        (!self.declared.is_empty())
            .then(|| format!("{{xla.sdy.meshes={{{}}}}}", self.declared.join(", ")))
    }
}

/// `mhlo.num_partitions = 8 : i32` of the module, when above one.
pub fn num_partitions(src: &str) -> Option<i64> {
    let at = src.find("mhlo.num_partitions")?;
    let value = src[at..].split_once('=')?.1.trim_start();
    let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|&n| n > 1)
}

/// The HLO sharding of an attribute value: an `mhlo.sharding` string, or a
/// Shardy `#sdy.sharding<...>` / `#sdy.sharding_per_value<[...]>`.
pub fn from_value(value: &str, meshes: &Meshes) -> Option<String> {
    let value = value.trim();
    // A string's text, as the op's view keeps it (without its quotes).
    if value.starts_with('{') {
        return Some(value.to_string());
    }
    if let Some(string) = value.strip_prefix('"') {
        let inner = string.strip_suffix('"')?;
        return Some(inner.replace("\\22", "\"").replace("\\\"", "\""));
    }
    if let Some(per_value) = value.strip_prefix("#sdy.sharding_per_value<") {
        let list = per_value.strip_suffix('>')?.trim();
        let inner = list.strip_prefix('[')?.strip_suffix(']')?;
        let elements: Option<Vec<String>> = split_top(inner)
            .into_iter()
            .map(|e| sdy_sharding(e, meshes))
            .collect();
        let elements = elements?;
        return match elements.len() {
            1 => elements.into_iter().next(),
            _ => Some(format!("{{{}}}", elements.join(", "))),
        };
    }
    sdy_sharding(value.strip_prefix("#sdy.sharding").unwrap_or(value), meshes)
}

/// The top-level pieces of `text` between commas, brackets and strings kept
/// whole (a sharding string holds `<=`, which is no bracket).
pub fn split_outside_strings(text: &str) -> Vec<&str> {
    let mut out = vec![];
    let (mut depth, mut start, mut quoted, mut escaped) = (0i32, 0usize, false, false);
    for (k, c) in text.char_indices() {
        if quoted {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' if !text[..k].ends_with('-') => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        out.push(&text[start..]);
    }
    out
}

/// The sharding in an attribute dictionary's text (`{mhlo.sharding = "..."}`,
/// `{sdy.sharding = #sdy.sharding<...>, ...}`).
pub fn from_dictionary(text: &str, meshes: &Meshes) -> Option<String> {
    let open = text.find('{')?;
    let close = text.rfind('}')?;
    let inner = text.get(open + 1..close)?;
    split_outside_strings(inner).into_iter().find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        matches!(k.trim(), "mhlo.sharding" | "sdy.sharding")
            .then(|| from_value(v, meshes))
            .flatten()
    })
}

/// `<@mesh, [{"x"}, {}]>` (with or without `replicated=`/`unreduced=` after
/// the dimensions) as `{mesh['x'=2,'y'=4], [{'x'}, {}]}`.
pub fn sdy_sharding(text: &str, meshes: &Meshes) -> Option<String> {
    let inner = text.trim().strip_prefix('<')?.strip_suffix('>')?;
    let parts = split_top(inner);
    let mesh = parts.first()?.trim();
    let axes = match mesh.strip_prefix('@') {
        Some(name) => meshes.axes.get(name)?.clone(),
        // An inline mesh: `mesh<["x"=2]>`.
        None => mesh
            .strip_prefix("mesh<")?
            .strip_suffix('>')?
            .replace('"', "'")
            .replace(", ", ","),
    };
    let dims = parts.get(1)?.trim();
    let dims = dims.strip_prefix('[')?.strip_suffix(']')?;
    let dims: Vec<String> = split_top(dims)
        .into_iter()
        .map(|d| {
            let axes: Vec<String> = d
                .trim()
                .trim_start_matches('{')
                .trim_end_matches('}')
                .split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty() && *a != "?")
                .map(|a| a.replace('"', "'"))
                .collect();
            format!("{{{}}}", axes.join(", "))
        })
        .collect();
    if axes == "[]" {
        return Some("{replicated}".into());
    }
    Some(format!("{{mesh{axes}, [{}]}}", dims.join(", ")))
}

/// `in_shardings=[<@mesh, [...]>, ...]` of an op's text: each sharding.
pub fn listed(op_text: &str, key: &str, meshes: &Meshes) -> Vec<String> {
    let Some(at) = op_text.find(&format!("{key}=[")) else {
        return vec![];
    };
    let rest = &op_text[at + key.len() + 2..];
    let mut depth = 0i32;
    let mut end = rest.len();
    for (k, c) in rest.char_indices() {
        match c {
            '[' | '<' | '{' => depth += 1,
            ']' if depth == 0 => {
                end = k;
                break;
            }
            ']' | '>' | '}' => depth -= 1,
            _ => {}
        }
    }
    split_top(&rest[..end])
        .into_iter()
        .filter_map(|s| sdy_sharding(s, meshes))
        .collect()
}

/// The first `<@mesh, [...]>` of an op's text (`sdy.sharding_constraint %0
/// <@mesh, [{}, {"y"}]> : ...`).
pub fn inline(op_text: &str, meshes: &Meshes) -> Option<String> {
    let at = op_text.find("<@")?;
    let rest = &op_text[at..];
    let mut depth = 0i32;
    for (k, c) in rest.char_indices() {
        match c {
            '<' | '[' | '{' => depth += 1,
            '>' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return sdy_sharding(&rest[..=k], meshes);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESH: &str =
        "module @m {\n  sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]> {stablehlo.mesh = {}}\n}";

    #[test]
    fn shardy_attributes_become_hlo_named_shardings() {
        let meshes = Meshes::of(MESH);
        assert_eq!(
            from_value("#sdy.sharding<@mesh, [{\"x\"}, {}]>", &meshes).as_deref(),
            Some("{mesh['x'=2,'y'=4], [{'x'}, {}]}")
        );
        assert_eq!(
            from_value(
                "#sdy.sharding_per_value<[<@mesh, [{\"x\", \"y\"}]>, <@mesh, [{?}]>]>",
                &meshes
            )
            .as_deref(),
            Some("{{mesh['x'=2,'y'=4], [{'x', 'y'}]}, {mesh['x'=2,'y'=4], [{}]}}")
        );
        assert_eq!(
            from_value(
                "\"{devices=[2,1,4]<=[8] last_tile_dim_replicate}\"",
                &meshes
            )
            .as_deref(),
            Some("{devices=[2,1,4]<=[8] last_tile_dim_replicate}")
        );
        assert_eq!(
            meshes.frontend_attributes().as_deref(),
            Some("{xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=2, \"y\"=4]>}}")
        );
        let op = "%0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"x\"}, {\"y\"}]>] out_shardings=[<@mesh, [{\"x\"}, {\"y\"}]>] manual_axes={\"x\", \"y\"} (%arg1: tensor<8x8xf32>) {";
        assert_eq!(
            listed(op, "in_shardings", &meshes),
            vec!["{mesh['x'=2,'y'=4], [{'x'}, {'y'}]}".to_string()]
        );
        assert_eq!(
            inline(
                "%1 = sdy.sharding_constraint %0 <@mesh, [{}, {\"y\"}]> : tensor<32x32xf32>",
                &meshes
            )
            .as_deref(),
            Some("{mesh['x'=2,'y'=4], [{}, {'y'}]}")
        );
        let args = "%arg0: tensor<32x64xf32> {mhlo.sharding = \"{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}\"}, %arg1: tensor<64x16xf32> {mhlo.sharding = \"{replicated}\"}";
        let pieces = split_outside_strings(args);
        assert_eq!(pieces.len(), 2);
        assert_eq!(
            from_dictionary(pieces[1], &meshes).as_deref(),
            Some("{replicated}")
        );
        assert_eq!(
            num_partitions("module @m attributes {mhlo.num_partitions = 8 : i32}"),
            Some(8)
        );
    }
}
