//! A file that is one instruction (`f32[4] add(f32[4] %x, f32[4] %y)`), which XLA's
//! parser reads as a module of its own (`HloParserImpl::ParseSingleInstruction`):
//! the module and its entry computation are named `_`, each operand it does not
//! define becomes a parameter of the operand's shape (named as written, or `_0`,
//! `_1`, ... when only a shape is written), an unnamed instruction is named `_`,
//! and a computation written inline (`calls={ ... }`) becomes a computation of its
//! own, named `_` and so made unique as `_.1`, `_.2`, ... (the entry is added to the
//! module first). The module is scheduled in that order (`is_scheduled=true`), and
//! its `entry_computation_layout` holds default layouts, not the written ones
//! (`HloModuleConfig::SetDefaultComputationLayout`).
//!
//! [`as_module`] writes that module as text, which the printer then prints like
//! any other.

use tree_sitter::Node;

use crate::model::Document;
use crate::syntax::{Chunk, ChunkKind};

/// The module XLA makes of `doc` when it is a single instruction, as text.
pub fn as_module(doc: &Document) -> Option<String> {
    let syntax = doc.syntax();
    let mut chunks = syntax
        .chunks()
        .iter()
        .filter(|c| !c.text().trim().is_empty());
    let placed = chunks.next()?;
    if chunks.next().is_some() || placed.kind() != ChunkKind::Computation {
        return None;
    }
    let tree = placed.tree();
    let item = Chunk::item(&tree).filter(|n| n.kind() == "instruction")?;
    let text = placed.text();
    let of = |n: Node| text.get(n.byte_range()).unwrap_or("");
    let name = item
        .child_by_field_name("name")
        .map_or("_", |n| of(n).trim_start_matches('%'));
    let shape = of(item.child_by_field_name("shape")?);
    let opcode = of(item.child_by_field_name("opcode")?);
    let mut parameters: Vec<(String, String)> = Vec::new();
    let mut operands = Vec::new();
    let list = item.child_by_field_name("operands")?;
    let mut cursor = list.walk();
    for operand in list.named_children(&mut cursor) {
        if let Some(literal) = operand.child_by_field_name("literal") {
            operands.push(of(literal).to_string());
            continue;
        }
        let written = operand.child_by_field_name("name");
        let name = match written {
            Some(n) => of(n).trim_start_matches('%').to_string(),
            None => format!("_{}", parameters.len()),
        };
        if !parameters.iter().any(|(p, _)| *p == name) {
            let shape = of(operand.child_by_field_name("shape")?).to_string();
            parameters.push((name.clone(), shape));
        }
        operands.push(format!("%{name}"));
    }
    let mut inline = Vec::new();
    let mut attributes = Vec::new();
    let mut cursor = item.walk();
    for attribute in item.children_by_field_name("attribute", &mut cursor) {
        let key = of(attribute.child_by_field_name("key")?);
        let value = attribute.child_by_field_name("value")?;
        let value = match value.kind() {
            "inline_computation" => computations(of(value), &mut inline)?,
            _ => of(value).to_string(),
        };
        attributes.push(format!(", {key}={value}"));
    }
    let layouts: Vec<String> = parameters.iter().map(|(_, s)| without_layouts(s)).collect();
    let mut out = format!(
        "HloModule _, is_scheduled=true, entry_computation_layout={{({})->{}}}\n\n\
         ENTRY %_ {{\n",
        layouts.join(", "),
        without_layouts(shape)
    );
    for (k, (name, shape)) in parameters.iter().enumerate() {
        out.push_str(&format!("  %{name} = {shape} parameter({k})\n"));
    }
    out.push_str(&format!(
        "  ROOT %{name} = {shape} {opcode}({}){}\n}}\n",
        operands.join(", "),
        attributes.concat()
    ));
    for (k, body) in inline.iter().enumerate() {
        out.push_str(&format!("\n%_.{} {body}\n", k + 1));
    }
    Some(out)
}

/// An inline computation value (`{ ... }`, or `{ {...}, {...} }` for a list of
/// them) with each computation moved to `inline` and named there (`%_.N`).
fn computations(value: &str, inline: &mut Vec<String>) -> Option<String> {
    let inner = value.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    if !inner.starts_with('{') {
        inline.push(value.trim().to_string());
        return Some(format!("%_.{}", inline.len()));
    }
    let mut names = Vec::new();
    let mut rest = inner;
    while let Some(body_end) = super::values::braced_end(rest) {
        inline.push(rest[..body_end].to_string());
        names.push(format!("%_.{}", inline.len()));
        rest = rest[body_end..].trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    rest.is_empty().then(|| format!("{{{}}}", names.join(", ")))
}

/// `f32[2,3]{0,1}` as `f32[2,3]`: the layouts left out, so the printer writes the
/// default ones.
fn without_layouts(shape: &str) -> String {
    let mut out = String::with_capacity(shape.len());
    let mut rest = shape;
    while let Some(k) = rest.find(']') {
        out.push_str(&rest[..=k]);
        rest = &rest[k + 1..];
        if let Some(end) = super::values::braced_end(rest) {
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_left_out() {
        assert_eq!(without_layouts("f32[1,2]{0,1}"), "f32[1,2]");
        assert_eq!(
            without_layouts("(f32[2]{0}, s32[], (u8[1,1]{1,0}))"),
            "(f32[2], s32[], (u8[1,1]))"
        );
    }

    #[test]
    fn inline_computations_are_named_in_order() {
        let mut inline = Vec::new();
        assert_eq!(
            computations("{\n{ a }, { b }\n}", &mut inline).as_deref(),
            Some("{%_.1, %_.2}")
        );
        assert_eq!(computations("{ c }", &mut inline).as_deref(), Some("%_.3"));
        assert_eq!(inline, ["{ a }", "{ b }", "{ c }"]);
    }
}
