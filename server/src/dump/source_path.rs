//! Finding a source file that a dump names (`source_file=`, the `FileNames` table) on
//! this machine: dumps are often made elsewhere (a CI runner, a container), so an
//! absolute path that does not exist here is matched by its trailing components
//! against the workspace folders and the dump's own folder.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// Where to look, and what was found already (a dump names few files many times).
#[derive(Debug, Default)]
pub struct SourceFinder {
    roots: Vec<PathBuf>,
    found: HashMap<String, Option<PathBuf>>,
}

/// Most trailing components tried: deeper paths are matched by their last ones.
const MAX_COMPONENTS: usize = 12;

impl SourceFinder {
    /// Looks under `base` (the dump's folder, and its ancestors up to the workspace
    /// folder holding it) and `roots` (the workspace folders).
    pub fn new(roots: &[PathBuf], base: Option<&Path>) -> SourceFinder {
        let mut all: Vec<PathBuf> = Vec::new();
        if let Some(base) = base {
            // The dump's folder, and its ancestors when it lies inside a root (never
            // above it: a file name alone must not match anywhere on the disk).
            all.push(base.to_path_buf());
            if let Some(root) = roots.iter().find(|r| base.starts_with(r)) {
                all.extend(
                    base.ancestors()
                        .skip(1)
                        .take_while(|dir| dir.starts_with(root))
                        .map(Path::to_path_buf),
                );
            }
        }
        for root in roots {
            if !all.contains(root) {
                all.push(root.clone());
            }
        }
        SourceFinder {
            roots: all,
            found: HashMap::new(),
        }
    }

    /// The file `written` names, if it exists here: as written (absolute), else the
    /// longest trailing part of it under one of the folders (nearest folder first).
    pub fn find(&mut self, written: &str) -> Option<PathBuf> {
        if let Some(hit) = self.found.get(written) {
            return hit.clone();
        }
        let hit = self.search(written);
        self.found.insert(written.to_string(), hit.clone());
        hit
    }

    fn search(&self, written: &str) -> Option<PathBuf> {
        if written.is_empty() || written.contains('\0') {
            return None;
        }
        let path = Path::new(written);
        if path.is_absolute() && path.is_file() {
            return Some(path.to_path_buf());
        }
        let parts: Vec<&str> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(part) => part.to_str(),
                _ => None,
            })
            .collect();
        let longest = parts.len().min(MAX_COMPONENTS);
        for take in (1..=longest).rev() {
            let tail: PathBuf = parts[parts.len() - take..].iter().collect();
            for root in &self.roots {
                let candidate = root.join(&tail);
                if candidate.is_file() {
                    return Some(candidate);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_from_another_machine_match_by_their_tail() {
        let dir = std::env::temp_dir().join(format!("hlo-lsp-source-{}", std::process::id()));
        let project = dir.join("project");
        std::fs::create_dir_all(project.join("pkg")).unwrap();
        std::fs::create_dir_all(project.join("dumps")).unwrap();
        std::fs::write(project.join("pkg/model.py"), "x = 1\n").unwrap();
        std::fs::write(project.join("model.py"), "y = 1\n").unwrap();
        let roots = [project.clone()];
        let mut finder = SourceFinder::new(&roots, Some(&project.join("dumps")));
        // The longest tail wins over a shorter one that also exists.
        assert_eq!(
            finder.find("/home/ci/work/project/pkg/model.py"),
            Some(project.join("pkg/model.py"))
        );
        assert_eq!(finder.find("model.py"), Some(project.join("model.py")));
        assert_eq!(finder.find("pkg/missing.py"), None);
        assert_eq!(finder.find(""), None);
        let absolute = project.join("pkg/model.py");
        assert_eq!(
            finder.find(absolute.to_str().unwrap()),
            Some(absolute.clone())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
