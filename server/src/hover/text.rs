//! Short forms of maps for hovers: which maps are trivial, and a map printed on
//! as few lines as fit a width (XLA's one-line `print_indexing` form when it fits).

use crate::algebra::{IndexingMap, MapState, PrintOptions};
use crate::analysis::{OperandMap, RuntimeSource};

/// Widest map line a hover prints before wrapping (characters).
pub const WIDTH: usize = 100;

/// True for `(d0, ..., dn) -> (d0, ..., dn)` over exactly the extents `target`: no
/// symbols, no constraints, every dimension over the whole of its extent.
pub fn is_identity(map: &IndexingMap, target: &[i64]) -> bool {
    (map.state() == MapState::Defined)
        && map.range_vars().is_empty()
        && map.runtime_vars().is_empty()
        && map.constraints().is_empty()
        && map.dims().len() == target.len()
        && map.results().len() == target.len()
        && map
            .results()
            .iter()
            .zip(target)
            .enumerate()
            .all(|(i, (e, &n))| {
                // A dimension of extent 1 simplifies to the constant 0.
                let same = e
                    .as_var()
                    .is_some_and(|v| v.kind == crate::algebra::VarKind::Dim && v.index == i);
                same || (n == 1 && e.as_const() == Some(0))
            })
        && map
            .dims()
            .iter()
            .zip(target)
            .all(|(d, &n)| d.bounds.lo == 0 && d.bounds.hi == n - 1)
}

/// Maps that differ only in one constant result, printed as one:
/// `(d0) -> ({0, 1, 2, 3}, d0)` for the four maps `(d0) -> (k, d0)`.
#[derive(Clone, Debug)]
pub struct Family<'a> {
    pub first: &'a OperandMap,
    /// The result position that varies and its values (in the maps' order).
    pub varying: Option<(usize, Vec<i64>)>,
}

impl Family<'_> {
    /// How many maps this family stands for (at least one).
    pub fn count(&self) -> usize {
        self.varying.as_ref().map_or(1, |(_, v)| v.len())
    }

    /// The family as [`map_lines`], the varying constant written as a set.
    pub fn lines(&self, options: &PrintOptions) -> Vec<String> {
        let Some((position, values)) = &self.varying else {
            return map_lines(self.first, options);
        };
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let set = format!(
            "{{{}}}",
            sorted
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let marked = with_result(self.first, *position, PLACEHOLDER);
        map_lines(&marked, options)
            .into_iter()
            .map(|line| line.replace(&PLACEHOLDER.to_string(), &set))
            .collect()
    }
}

/// A constant no real map prints, replaced by the set of values after printing.
const PLACEHOLDER: i64 = i64::MIN + 7;

fn with_result(m: &OperandMap, position: usize, value: i64) -> OperandMap {
    let mut m = m.clone();
    let mut results = m.map.results().to_vec();
    results[position] = crate::algebra::Expr::constant(value);
    m.map.set_results(results);
    m
}

/// Whether `a` and `b` are equal except for constant result `position`.
fn differ_only_at(a: &OperandMap, b: &OperandMap, position: usize) -> bool {
    let (Some(x), Some(y)) = (
        a.map.results().get(position).and_then(|e| e.as_const()),
        b.map.results().get(position).and_then(|e| e.as_const()),
    ) else {
        return false;
    };
    x != y && with_result(a, position, 0) == with_result(b, position, 0)
}

/// Groups `maps` into families (in order of first appearance).
pub fn families(maps: &[OperandMap]) -> Vec<Family<'_>> {
    let mut out: Vec<Family<'_>> = Vec::new();
    for m in maps {
        let value_at = |p: usize| m.map.results()[p].as_const().unwrap_or_default();
        let joined = out.iter_mut().any(|f| match &mut f.varying {
            Some((p, values)) => {
                let fits = differ_only_at(f.first, m, *p) && !values.contains(&value_at(*p));
                if fits {
                    values.push(value_at(*p));
                }
                fits
            }
            None => {
                let position = (0..m.map.results().len()).find(|&p| differ_only_at(f.first, m, p));
                if let Some(p) = position {
                    let first = f.first.map.results()[p].as_const().unwrap_or_default();
                    f.varying = Some((p, vec![first, value_at(p)]));
                }
                position.is_some()
            }
        });
        if !joined {
            out.push(Family {
                first: m,
                varying: None,
            });
        }
    }
    out
}

/// True for a read of a scalar at every index of `domain`: `(d0, ...) -> ()` over
/// the whole of `domain`, without symbols or constraints.
pub fn is_scalar_read(m: &OperandMap, domain: &[i64]) -> bool {
    m.map.state() == MapState::Defined
        && m.map.results().is_empty()
        && m.map.range_vars().is_empty()
        && m.map.constraints().is_empty()
        && m.runtime_vars.is_empty()
        && m.replica_id.is_none()
        && m.map.dims().len() == domain.len()
        && m.map
            .dims()
            .iter()
            .zip(domain)
            .all(|(d, &n)| d.bounds.lo == 0 && d.bounds.hi == n - 1)
}

/// The map (with its runtime variables and replica) as lines of at most [`WIDTH`]
/// characters where possible: the one-line form if it fits, else the head, then
/// the domain entries packed onto lines; then each runtime variable as
/// `rt0 = parameter(1) at <map>` (the element of that tensor the map gives).
pub fn map_lines(m: &OperandMap, options: &PrintOptions) -> Vec<String> {
    let one_line = PrintOptions {
        multiline: false,
        ..*options
    };
    let multiline = PrintOptions {
        multiline: true,
        ..*options
    };
    let mut lines = one_map_lines(&m.map, &one_line, &multiline);
    for (i, rt) in m.runtime_vars.iter().enumerate() {
        let label = match &rt.source {
            RuntimeSource::Operand(k) => format!("operand({k})"),
            RuntimeSource::Instruction { label, .. } => label.clone(),
        };
        // The variable's map starts from the same indices as the map: its head says it.
        let at = rt.map.print(&one_line);
        let head = at.split(", domain:").next().unwrap_or_default();
        lines.push(format!("rt{i} = {label} at {head}"));
    }
    if let Some(replica) = &m.replica_id {
        let mut r = one_map_lines(replica, &one_line, &multiline).into_iter();
        lines.push(format!("replica id: {}", r.next().unwrap_or_default()));
        lines.extend(r.map(|l| format!("  {l}")));
    }
    lines
}

/// One map: its one-line form if it fits [`WIDTH`], else wrapped.
fn one_map_lines(
    map: &IndexingMap,
    one_line: &PrintOptions,
    multiline: &PrintOptions,
) -> Vec<String> {
    let flat = map.print(one_line);
    if flat.chars().count() <= WIDTH {
        vec![flat]
    } else {
        wrap_domain(&map.print(multiline))
    }
}

/// XLA's multi-line text (`head,\ndomain:\nentry,\nentry`) with the entries packed
/// onto lines of at most [`WIDTH`] characters, the first after `domain: `.
fn wrap_domain(multiline: &str) -> Vec<String> {
    let mut parts = multiline.lines();
    let mut lines = vec![parts.next().unwrap_or_default().to_string()];
    if parts.next().is_none() {
        return lines;
    }
    let mut current = "domain:".to_string();
    for entry in parts {
        let entry = entry.trim();
        if current != "domain:" && current.chars().count() + 1 + entry.chars().count() > WIDTH {
            lines.push(std::mem::take(&mut current));
            current = entry.to_string();
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(entry);
        }
    }
    lines.push(current);
    lines
}

/// Sorted output numbers as ranges: `0–3, 5, 7–9`.
pub fn output_ranges(outputs: &[usize]) -> String {
    let mut sorted = outputs.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => sorted[i].to_string(),
            1 => format!("{}, {}", sorted[i], sorted[j]),
            _ => format!("{}–{}", sorted[i], sorted[j]),
        });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::DivSpelling;

    fn map(text: &str) -> OperandMap {
        OperandMap::plain(IndexingMap::parse(text).unwrap())
    }

    const SLASH: PrintOptions = PrintOptions {
        div: DivSpelling::Slash,
        multiline: true,
    };

    #[test]
    fn identity_only_over_the_same_shape() {
        let m = map("(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 127]");
        assert!(is_identity(&m.map, &[8, 128]));
        assert!(!is_identity(&m.map, &[8, 256]));
        assert!(!is_identity(&m.map, &[128, 8]));
        let t = map("(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 7]");
        assert!(!is_identity(&t.map, &[8, 8]));
        let part = map("(d0) -> (d0), domain: d0 in [0, 511]");
        assert!(!is_identity(&part.map, &[1024]));
        let s = map("(d0) -> (), domain: d0 in [0, 1023]");
        assert!(is_scalar_read(&s, &[1024]));
        assert!(!is_scalar_read(&s, &[2048]));
        assert!(!is_scalar_read(&m, &[8, 128]));
        let padded = map("(d0) -> (), domain: d0 in [0, 9], d0 mod 2 in [1, 1]");
        assert!(!is_scalar_read(&padded, &[10]));
    }

    #[test]
    fn short_maps_stay_on_one_line_long_ones_wrap() {
        let m = map("(d0, d1) -> (d1, d0), domain: d0 in [0, 15], d1 in [0, 7]");
        assert_eq!(
            map_lines(&m, &SLASH),
            ["(d0, d1) -> (d1, d0), domain: d0 in [0, 15], d1 in [0, 7]"]
        );
        let long = map(
            "(d0, d1, d2, d3)[s0, s1] -> (d0 * 4 + s0, d1 floordiv 8, d2 mod 16 + s1, d3), \
             domain: d0 in [0, 1023], d1 in [0, 1023], d2 in [0, 1023], d3 in [0, 1023], \
             s0 in [0, 3], s1 in [0, 3], d0 * 4 + s0 in [0, 4000]",
        );
        let lines = map_lines(&long, &SLASH);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(lines[1].starts_with("domain: d0 in [0, 1023]"), "{lines:?}");
        assert!(
            lines.iter().all(|l| l.chars().count() <= WIDTH),
            "{lines:?}"
        );
        // The wrapped text is still a map XLA's parser (and ours) reads back.
        let back = IndexingMap::parse(&lines.join("\n")).unwrap();
        assert_eq!(back, long.map);
    }

    #[test]
    fn maps_differing_in_one_constant_are_one_family() {
        let maps: Vec<OperandMap> = [3, 2, 1, 0]
            .iter()
            .map(|k| map(&format!("(d0) -> ({k}, d0, 0), domain: d0 in [0, 8191]")))
            .chain([map("(d0) -> (d0, 0, 0), domain: d0 in [0, 3]")])
            .collect();
        let f = families(&maps);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].count(), 4);
        assert_eq!(
            f[0].lines(&SLASH),
            ["(d0) -> ({0, 1, 2, 3}, d0, 0), domain: d0 in [0, 8191]"]
        );
        assert_eq!(f[1].count(), 1);
        // A map of extent-1 dimensions simplified to 0 is still the identity.
        let m = map("(d0, d1) -> (d0, 0), domain: d0 in [0, 8191], d1 in [0, 0]");
        assert!(is_identity(&m.map, &[8192, 1]));
    }

    #[test]
    fn output_numbers_become_ranges() {
        assert_eq!(output_ranges(&[3, 0, 1, 2, 5, 7, 8, 9]), "0–3, 5, 7–9");
        assert_eq!(output_ranges(&[4, 5]), "4, 5");
        assert_eq!(output_ranges(&[1]), "1");
    }
}
