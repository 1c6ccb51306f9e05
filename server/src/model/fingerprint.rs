//! A hash of a chunk's text that leaves out its instructions' `metadata={...}` (see
//! [`super::Unit::fingerprint`]): what a module-wide answer that reads no metadata is
//! keyed by across versions.

use std::hash::Hasher;

/// The attribute left out, up to its closing brace.
const METADATA: &[u8] = b"metadata={";

/// The hash of `text` with every `metadata={...}` taken out (braces inside quoted
/// strings do not count; an unclosed one runs to the end of the text).
pub fn without_metadata(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut hasher = rustc_hash::FxHasher::default();
    let mut from = 0;
    while let Some(found) = find(&bytes[from..], METADATA) {
        let start = from + found;
        hasher.write(&bytes[from..start]);
        from = closing(bytes, start + METADATA.len());
    }
    hasher.write(&bytes[from..]);
    hasher.write_usize(bytes.len() - from);
    hasher.finish()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// The byte after the brace that closes the one opened before `at`.
fn closing(bytes: &[u8], mut at: usize) -> usize {
    let mut depth = 1usize;
    let mut quoted = false;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' if quoted => at += 1,
            b'"' => quoted = !quoted,
            b'{' if !quoted => depth += 1,
            b'}' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_does_not_count_and_the_rest_does() {
        let a = r#"%a = f32[2]{0} add(%x, %y), metadata={op_name="jit(f)/add" source_line=3}"#;
        let b = r#"%a = f32[2]{0} add(%x, %y), metadata={op_name="jit(g)/a}dd" source_line=4}"#;
        let c = r#"%a = f32[3]{0} add(%x, %y), metadata={op_name="jit(f)/add" source_line=3}"#;
        assert_eq!(without_metadata(a), without_metadata(b));
        assert_ne!(without_metadata(a), without_metadata(c));
        assert_ne!(
            without_metadata("%a = f32[2]"),
            without_metadata("%a = f32[3]")
        );
    }
}
