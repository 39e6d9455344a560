//! The one way cairn changes a TOML config file (a setting, the chosen
//! provider, permission rules, MCP servers): read it (missing is empty),
//! edit it with `toml_edit` so comments, order and other tables stay as the
//! person wrote them, and write it beside-and-renamed.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not valid TOML: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: toml_edit::TomlError,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Sets a top-level string key in a TOML file, keeping the rest as it was.
pub fn save_setting(path: &Path, key: &str, value: &str) -> Result<(), SaveError> {
    edit_toml(path, |doc| doc[key] = toml_edit::value(value))
}

/// Reads the TOML file at `path` (empty when missing), lets `change` edit
/// it with comments and layout kept, and writes it back beside-and-renamed
/// so a crash never leaves half a config.
pub fn edit_toml(
    path: &Path,
    change: impl FnOnce(&mut toml_edit::DocumentMut),
) -> Result<(), SaveError> {
    let mut doc = read_toml(path)?;
    change(&mut doc);
    write_toml(path, &doc)
}

/// The read half of [`edit_toml`], for an edit that decides on the way
/// whether to write at all: the document at `path`, empty when the file is
/// missing.
pub fn read_toml(path: &Path) -> Result<toml_edit::DocumentMut, SaveError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(SaveError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    text.parse().map_err(|source| SaveError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// The write half of [`edit_toml`]: its directory created, the file
/// written beside and renamed over the old one (0600).
pub fn write_toml(path: &Path, doc: &toml_edit::DocumentMut) -> Result<(), SaveError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| SaveError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    crate::private::replace(path, doc.to_string().as_bytes()).map_err(|source| SaveError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_setting_keeps_comments() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c/config.toml");
        save_setting(&p, "theme", "light").unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap().trim(),
            "theme = \"light\""
        );
        std::fs::write(
            &p,
            "# mine\ntheme = \"light\"\n[permissions]\nmode = \"auto\"\n",
        )
        .unwrap();
        save_setting(&p, "theme", "dark").unwrap();
        let t = std::fs::read_to_string(&p).unwrap();
        assert!(
            t.contains("# mine") && t.contains("theme = \"dark\"") && t.contains("mode = \"auto\""),
            "{t}"
        );
    }
}
