//! Which language a document is written in: HLO text or MLIR. The server and
//! `hlo-lsp check` decide the same way: the client's `languageId` when it names
//! one, else the file's extension (`.mlir`, `.hlo`), else the content. Dumps come as
//! `module_0001.after_optimizations.txt` and excerpts as anything, so the content
//! decides more often than one would think.

/// A document's language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Hlo,
    Mlir,
}

/// The language of a document at `path` (a file path or URI path), opened with
/// `language_id` (the LSP client's, if any), holding `text`.
pub fn detect(path: &str, language_id: Option<&str>, text: &str) -> Language {
    match language_id {
        Some("mlir") => return Language::Mlir,
        Some("hlo") if !path.ends_with(".mlir") => return Language::Hlo,
        _ => {}
    }
    if path.ends_with(".mlir") {
        Language::Mlir
    } else if path.ends_with(".hlo") || path.ends_with(".hlo.txt") {
        Language::Hlo
    } else {
        from_content(text)
    }
}

/// How many lines of a file the content check reads: the top of a file says it.
const LINES_READ: usize = 200;

/// The language the text looks like: MLIR when its first lines carry more MLIR
/// marks (`func.func`, `tensor<...>`, `%0 = linalg.generic`, `affine_map<`) than
/// HLO marks (`HloModule`, `ENTRY`, `%x = f32[8] op(...)`); HLO otherwise.
pub fn from_content(text: &str) -> Language {
    let Marks { hlo, mlir } = marks(text);
    if mlir > hlo {
        Language::Mlir
    } else {
        Language::Hlo
    }
}

/// `true` when the text carries HLO marks and more of them than MLIR marks: HLO
/// by what it says, not only by default (an empty or foreign file is neither).
pub fn says_hlo(text: &str) -> bool {
    let Marks { hlo, mlir } = marks(text);
    hlo > mlir
}

/// How many marks of each language the first lines carry.
struct Marks {
    hlo: usize,
    mlir: usize,
}

fn marks(text: &str) -> Marks {
    let (mut hlo, mut mlir) = (0usize, 0usize);
    for line in text.lines().take(LINES_READ) {
        let line = line.trim();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        if line.starts_with("HloModule") || line.starts_with("ENTRY") {
            hlo += 3;
        }
        if has_hlo_shape_after_equals(line) {
            hlo += 1;
        }
        const MLIR_MARKS: &[&str] = &[
            "func.func",
            "builtin.module",
            "affine_map<",
            "tensor<",
            "memref<",
            "vector<",
            "#xla.indexing_map",
            "transform.",
            "linalg.",
            "arith.",
            "scf.",
        ];
        if line.starts_with("module") && (line.ends_with('{') || line.contains("attributes")) {
            mlir += 3;
        }
        mlir += MLIR_MARKS.iter().filter(|m| line.contains(*m)).count();
    }
    Marks { hlo, mlir }
}

/// `name = f32[...]`, `%x = (s32[], f32[2])`, `p = pred[]`: an HLO instruction's shape.
fn has_hlo_shape_after_equals(line: &str) -> bool {
    let Some((_, rhs)) = line.split_once(" = ") else {
        return false;
    };
    let rhs = rhs.trim_start_matches('(');
    let type_name: String = rhs
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    !type_name.is_empty() && rhs[type_name.len()..].starts_with('[')
}

#[cfg(test)]
mod tests {
    use super::*;

    const HLO: &str =
        "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n";
    const MLIR: &str = "// input.mlir\nfunc.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>]} ins(%a : tensor<4xf32>)\n  return %0 : tensor<4xf32>\n}\n";

    #[test]
    fn the_client_then_the_extension_then_the_content_decide() {
        assert_eq!(detect("a.txt", Some("mlir"), HLO), Language::Mlir);
        assert_eq!(detect("a.txt", Some("hlo"), MLIR), Language::Hlo);
        assert_eq!(detect("a.mlir", Some("hlo"), HLO), Language::Mlir);
        assert_eq!(detect("a.mlir", None, HLO), Language::Mlir);
        assert_eq!(detect("a.hlo", None, MLIR), Language::Hlo);
        assert_eq!(
            detect("module_0001.after_optimizations.txt", None, HLO),
            Language::Hlo
        );
        assert_eq!(detect("excerpt.txt", None, MLIR), Language::Mlir);
        assert_eq!(detect("excerpt", Some("plaintext"), MLIR), Language::Mlir);
        assert_eq!(from_content(""), Language::Hlo);
    }

    #[test]
    fn only_text_with_hlo_marks_says_hlo() {
        assert!(says_hlo(HLO));
        assert!(!says_hlo(MLIR));
        assert!(!says_hlo(""));
        assert!(!says_hlo("some notes\nnot a program\n"));
    }

    #[test]
    fn every_sample_is_recognized_by_its_content() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");
        let mut seen = (0, 0);
        for dir in ["samples/xla", "samples/mlir", "jax", "mlir"] {
            for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
                let path = entry.unwrap().path();
                let want = match path.extension().and_then(|e| e.to_str()) {
                    Some("hlo") => Language::Hlo,
                    Some("mlir") => Language::Mlir,
                    _ => continue,
                };
                let text = std::fs::read_to_string(&path).unwrap();
                assert_eq!(from_content(&text), want, "{}", path.display());
                match want {
                    Language::Hlo => seen.0 += 1,
                    Language::Mlir => seen.1 += 1,
                }
            }
        }
        assert!(seen.0 >= 20 && seen.1 >= 6, "{seen:?}");
    }
}
