//! Attribute values XLA prints from what it parsed rather than as written: a window
//! (`window_util::ToString`: fields in a fixed order, default ones left out), a slice
//! (`[start:limit:stride]`, the stride always written), values equal to XLA's default
//! that it does not print at all (`feature_group_count=1`), and the header's
//! `entry_computation_layout` and `allow_spmd_*` lists.

use super::shape_text;

/// Whether XLA prints nothing for `key=value` on `opcode` (the value is its default).
pub fn is_default(opcode: &str, key: &str, value: &str) -> bool {
    match key {
        "feature_group_count" | "batch_group_count" => value == "1",
        // Async wrappers name their computation only on the start.
        "calls" => matches!(opcode, "async-update" | "async-done"),
        _ => false,
    }
}

/// `value` of `key` as XLA prints it.
pub fn canonical(key: &str, value: &str) -> String {
    match key {
        "window" => window(value).unwrap_or_else(|| value.to_string()),
        "slice" => slice(value).unwrap_or_else(|| value.to_string()),
        _ => value.to_string(),
    }
}

/// `{size=3x3 pad=1_1x1_1 stride=2x2}` in XLA's field order, fields that hold only
/// their default left out.
fn window(value: &str) -> Option<String> {
    const ORDER: &[(&str, &str)] = &[
        ("size", ""),
        ("stride", "1"),
        ("pad", "0_0"),
        ("lhs_dilate", "1"),
        ("rhs_dilate", "1"),
        ("rhs_reversal", "0"),
    ];
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    let mut fields = Vec::new();
    for item in inner.split_whitespace() {
        let (k, v) = item.split_once('=')?;
        let rank = ORDER.iter().position(|(name, _)| *name == k)?;
        fields.push((rank, k, v));
    }
    fields.sort_by_key(|(rank, _, _)| *rank);
    let kept: Vec<String> = fields
        .into_iter()
        .filter(|(rank, _, v)| {
            let default = ORDER[*rank].1;
            default.is_empty() || v.split('x').any(|d| d != default)
        })
        .map(|(_, k, v)| format!("{k}={v}"))
        .collect();
    Some(format!("{{{}}}", kept.join(" ")))
}

/// `{[0:3], [0:4:2]}` as `{[0:3:1], [0:4:2]}`: XLA writes every stride when one is
/// not 1, and none otherwise (`HloSliceInstruction`'s printer).
fn slice(value: &str) -> Option<String> {
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    let mut dims: Vec<(String, String, String)> = Vec::new();
    for part in inner.split(']') {
        let part = part.trim().trim_start_matches(',').trim();
        if part.is_empty() {
            continue;
        }
        let body: String = part.strip_prefix('[')?.split_whitespace().collect();
        let fields: Vec<&str> = body.split(':').collect();
        let stride = match fields.len() {
            2 => "1",
            3 => fields[2],
            _ => return None,
        };
        dims.push((fields[0].into(), fields[1].into(), stride.into()));
    }
    let strided = dims.iter().any(|(_, _, stride)| stride != "1");
    let printed: Vec<String> = dims
        .into_iter()
        .map(|(start, limit, stride)| match strided {
            true => format!("[{start}:{limit}:{stride}]"),
            false => format!("[{start}:{limit}]"),
        })
        .collect();
    Some(format!("{{{}}}", printed.join(", ")))
}

/// The order XLA prints the attributes of one group in, where a group's members may
/// be written in any order (`DotDimensionNumbersToString`, a convolution's
/// `PrintExtraAttributesImpl`).
pub const GROUPS: &[&[&str]] = &[
    &[
        "lhs_batch_dims",
        "lhs_contracting_dims",
        "rhs_batch_dims",
        "rhs_contracting_dims",
    ],
    &[
        "window",
        "dim_labels",
        "feature_group_count",
        "batch_group_count",
    ],
];

/// Puts the members of each of [`GROUPS`] in the group's order, in the places they
/// hold in `keys` (the other attributes stay where they are).
pub fn order_groups(attributes: &mut [(String, String)]) {
    for group in GROUPS {
        let slots: Vec<usize> = (0..attributes.len())
            .filter(|&i| group.contains(&attributes[i].0.as_str()))
            .collect();
        let mut members: Vec<(String, String)> =
            slots.iter().map(|&i| attributes[i].clone()).collect();
        members.sort_by_key(|(k, _)| group.iter().position(|g| g == k));
        for (slot, member) in slots.into_iter().zip(members) {
            attributes[slot] = member;
        }
    }
}

/// A header attribute's value as XLA prints it.
pub fn header(key: &str, value: &str) -> String {
    match key {
        "entry_computation_layout" => entry_layout(value).unwrap_or_else(|| value.to_string()),
        "allow_spmd_sharding_propagation_to_parameters"
        | "allow_spmd_sharding_propagation_to_output"
            if !value.starts_with('{') =>
        {
            format!("{{{value}}}")
        }
        _ => value.to_string(),
    }
}

/// `{(f32[8] , s32[])  ->  f32[8]}` as `{(f32[8]{0}, s32[])->f32[8]{0}}`.
fn entry_layout(value: &str) -> Option<String> {
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    let (params, result) = inner.rsplit_once("->")?;
    Some(format!(
        "{{{}->{}}}",
        shape_text::canonical(params, true)?,
        shape_text::canonical(result, true)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_slices_print_as_xla_does() {
        assert_eq!(
            window("{pad=1_1 size=1}").as_deref(),
            Some("{size=1 pad=1_1}")
        );
        assert_eq!(
            window("{size=2x2 stride=1x1 pad=0_0x0_0}").as_deref(),
            Some("{size=2x2}")
        );
        assert_eq!(
            slice("{[0:3], [0:4:2]}").as_deref(),
            Some("{[0:3:1], [0:4:2]}")
        );
        assert_eq!(slice("{[0:3:1], [0:4]}").as_deref(), Some("{[0:3], [0:4]}"));
        assert_eq!(
            entry_layout("{(f32[8,16]) -> f32[8]}").as_deref(),
            Some("{(f32[8,16]{1,0})->f32[8]{0}}")
        );
    }
}
