//! Where an export goes: cairn's export directory (`[ui] export_dir`, or
//! the data directory), or the path the person typed after `/export`.

use std::path::{Path, PathBuf};

use super::SessionError;
use super::edit::{export_file, export_name};
use crate::store::{SessionId, Store};

/// The place `to` names: `~/` is the home, a relative path is taken from
/// the workspace root (as the file tools take theirs), never from wherever
/// a command last `cd`-ed.
pub fn resolve(to: &str, root: &Path, home: Option<&Path>) -> PathBuf {
    let to = to.trim();
    if let (Some(rest), Some(home)) = (to.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    if let (true, Some(home)) = (to == "~", home) {
        return home.to_path_buf();
    }
    root.join(to)
}

/// Writes the export into the directory `dir` (cairn's or the person's
/// `export_dir`): an earlier export of the same session there is replaced,
/// and the line says so.
pub fn into_export_dir(
    store: &Store,
    id: &SessionId,
    json: bool,
    dir: &Path,
) -> Result<String, SessionError> {
    crate::private::create_dir(dir).map_err(|source| SessionError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join(export_name(id, json));
    let replaced = std::fs::symlink_metadata(&path).is_ok();
    export_file(store, id, json, &path)?;
    Ok(if replaced {
        format!(
            "Exported to {} (replacing this session's earlier export there)",
            path.display()
        )
    } else {
        format!("Exported to {}", path.display())
    })
}

/// Writes the export to the place the person named: into it when it is a
/// folder (or ends with `/`), else as that file. A file already there is
/// never overwritten: the answer says so and nothing is written.
pub fn to_named_place(
    store: &Store,
    id: &SessionId,
    json: bool,
    place: &Path,
    typed: &str,
) -> Result<String, SessionError> {
    let is_dir = typed.ends_with('/') || place.is_dir();
    let path = if is_dir {
        place.join(export_name(id, json))
    } else {
        place.to_path_buf()
    };
    if std::fs::symlink_metadata(&path).is_ok() {
        return Ok(format!(
            "Not exported: {} already exists, and /export does not overwrite a file. \
             Give another name, or remove that file first.",
            path.display()
        ));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| SessionError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    export_file(store, id, json, &path)?;
    Ok(format!("Exported to {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_path_is_taken_from_the_workspace_or_the_home() {
        let root = Path::new("/w/p");
        let home = Some(Path::new("/home/me"));
        assert_eq!(
            resolve("notes/a.md", root, home),
            Path::new("/w/p/notes/a.md")
        );
        assert_eq!(
            resolve(" ~/x.json ", root, home),
            Path::new("/home/me/x.json")
        );
        assert_eq!(resolve("/tmp/s.md", root, home), Path::new("/tmp/s.md"));
        assert_eq!(resolve("~/x", root, None), Path::new("/w/p/~/x"));
    }
}
