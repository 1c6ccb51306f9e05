//! Signature help: what XLA's text expects after the opcode being typed, its operands
//! then its attributes ([`crate::model::signature`]), with the one the cursor is on.
//!
//! `add(lhs, rhs)`, `broadcast(operand), dimensions={}`: the operand is active by the
//! commas before the cursor (a variadic `operands...` stays active), an attribute by
//! the name typed.

use std::ops::Range;

use super::typing::{self, Line, Place};
use super::Snapshot;
use crate::model::signature::{self, AttributeSpec};
use crate::model::Opcode;

/// The signature of one opcode as a line of text, with each parameter's bytes in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub label: String,
    /// Operands first, then attributes.
    pub parameters: Vec<Range<usize>>,
    /// How many of `parameters` are operands.
    pub operands: usize,
    /// What the opcode takes, in words (`2 operands; requires dimensions`).
    pub documentation: String,
}

/// The answer at a cursor: the signature and the parameter the cursor is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureHelp {
    pub signature: Signature,
    pub active: Option<usize>,
}

/// The signature of `opcode`: `name(operands), required attributes, [optional ones]`.
/// Attributes every instruction may carry (`metadata`, ...) are left out.
pub fn signature(opcode: &Opcode) -> Signature {
    let mut label = format!("{}(", opcode.name());
    let mut parameters = Vec::new();
    let names = signature::operand_names(opcode);
    for (k, name) in names.iter().enumerate() {
        if k > 0 {
            label.push_str(", ");
        }
        parameters.push(label.len()..label.len() + name.len());
        label.push_str(name);
    }
    label.push(')');
    let own: Vec<&AttributeSpec> = signature::attributes(opcode)
        .filter(|a| !is_generic(a.name))
        .collect();
    for a in &own {
        label.push_str(", ");
        let text = format!("{}={}", a.name, signature::template(a.value, false));
        let text = if a.required {
            text
        } else {
            format!("[{text}]")
        };
        let start = label.len() + usize::from(!a.required);
        parameters.push(start..start + a.name.len());
        label.push_str(&text);
    }
    let required: Vec<&str> = own.iter().filter(|a| a.required).map(|a| a.name).collect();
    let mut documentation = format!("{} takes {}", opcode.name(), opcode.arity());
    if !required.is_empty() {
        documentation.push_str(&format!("; requires {}", required.join(", ")));
    }
    Signature {
        label,
        parameters,
        operands: names.len(),
        documentation,
    }
}

/// Whether every instruction may carry attribute `name` (it is not the opcode's own).
fn is_generic(name: &str) -> bool {
    signature::attributes(&Opcode::Iota)
        .skip(1)
        .any(|a| a.name == name)
}

/// The signature help at `offset`: inside an HLO instruction's operands or
/// attributes, once its opcode is written.
pub fn signature_help(snapshot: &Snapshot, offset: usize) -> Option<SignatureHelp> {
    let Snapshot::Hlo(hlo) = snapshot else {
        return None;
    };
    // The chunk holding the cursor's line: the document's text is never joined.
    let placed = hlo.syntax().chunk_at(offset.saturating_sub(1))?;
    let text = placed.text();
    let offset = offset.checked_sub(placed.range().start)?;
    if offset > text.len() || !text.is_char_boundary(offset) {
        return None;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = Line::read(&text[line_start..line_end]);
    let word = typing::word_before(text, offset);
    let at = word.start.max(line_start) - line_start;
    let opcode = Opcode::from_name(line.opcode_text());
    if opcode.is_unknown() {
        return None;
    }
    let signature = signature(&opcode);
    let active = match line.place(at) {
        Place::Operand { index } => active_operand(&signature, index),
        Place::AttributeName { k } | Place::AttributeValue { k } => {
            let typed = line.attribute_name(k);
            let label = &signature.label;
            signature.parameters[signature.operands..]
                .iter()
                .position(|r| !typed.is_empty() && label[r.clone()].starts_with(typed))
                .map(|p| p + signature.operands)
        }
        _ => return None,
    };
    Some(SignatureHelp { signature, active })
}

/// Operand `index`'s parameter: the last when it is variadic (`...`), none past the
/// end of a fixed list.
fn active_operand(signature: &Signature, index: usize) -> Option<usize> {
    let operands = &signature.parameters[..signature.operands];
    if index < operands.len() {
        return Some(index);
    }
    let last = operands.last()?;
    signature.label[last.clone()]
        .ends_with("...")
        .then(|| operands.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        let s = signature(&Opcode::Broadcast);
        assert_eq!(s.label, "broadcast(operand), dimensions={}");
        assert_eq!(&s.label[s.parameters[1].clone()], "dimensions");
        let s = signature(&Opcode::Add);
        assert_eq!(s.label, "add(lhs, rhs)");
        let s = signature(&Opcode::Sort);
        assert_eq!(
            s.label,
            "sort(keys...), dimensions={}, [is_stable=true], to_apply="
        );
        assert_eq!(&s.label[s.parameters[2].clone()], "is_stable");
    }
}
