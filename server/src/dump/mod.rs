//! Working with XLA dump directories: which files hold HLO and in what order XLA
//! wrote them ([`naming`]), what changed between two dumps of a module ([`diff`]), the
//! computations and fusions of a workspace's files without opening them ([`index`]),
//! and finding the source files a dump names on this machine ([`source_path`]).

pub mod diff;
pub mod index;
pub mod naming;
pub mod source_path;

/// Reads an input file as text. Errors name the file, and for bytes that are not
/// UTF-8 the line and column of the first one and its value, so that a corrupted
/// dump can be found and mended.
pub fn read_text(path: &std::path::Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let before = String::from_utf8_lossy(&bytes[..at]);
        let (line, col) = crate::syntax::line_col(&before, at);
        format!(
            "{}:{line}:{col}: not UTF-8 text (byte 0x{:02x} at offset {at})",
            path.display(),
            bytes[at]
        )
    })
}
