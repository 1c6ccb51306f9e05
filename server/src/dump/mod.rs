//! Working with XLA dump directories: which files hold HLO and in what order XLA
//! wrote them ([`naming`]), what changed between two dumps of a module ([`diff`]), the
//! computations and fusions of a workspace's files without opening them ([`index`]),
//! which pass made each instruction of a pass-by-pass dump ([`history`]), and finding the source files a dump names on this machine ([`source_path`]).

pub mod diff;
pub mod history;
pub mod index;
pub mod naming;
pub mod source_path;

/// Why an input file could not be read as text.
#[derive(Debug)]
pub enum ReadError {
    /// The file system refused it (missing, a directory, no permission).
    Io {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
    /// A byte that is not UTF-8, at `line:column` (1-based) and byte `offset`.
    NotUtf8 {
        path: std::path::PathBuf,
        line: usize,
        column: usize,
        byte: u8,
        offset: usize,
    },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            ReadError::NotUtf8 {
                path,
                line,
                column,
                byte,
                offset,
            } => write!(
                f,
                "{}:{line}:{column}: not UTF-8 text (byte 0x{byte:02x} at offset {offset})",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<ReadError> for String {
    fn from(e: ReadError) -> String {
        e.to_string()
    }
}

/// Reads an input file as text. For bytes that are not UTF-8 the error has the line
/// and column of the first one and its value, so that a corrupted dump can be found
/// and mended.
pub fn read_text(path: &std::path::Path) -> Result<String, ReadError> {
    let bytes = std::fs::read(path).map_err(|error| ReadError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let before = String::from_utf8_lossy(&bytes[..offset]);
        let (line, column) = crate::syntax::line_col(&before, offset);
        ReadError::NotUtf8 {
            path: path.to_path_buf(),
            line,
            column,
            byte: bytes[offset],
            offset,
        }
    })
}
