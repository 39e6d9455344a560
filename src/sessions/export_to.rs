//! Where an export goes: cairn's export directory (`[ui] export_dir`, or
//! the data directory), or the path the person typed after `/export`.

use std::io::Write;
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
    (dir, root): (&Path, &Path),
) -> Result<String, SessionError> {
    if !dir.starts_with(root) {
        crate::private::create_dir(dir).map_err(|source| SessionError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let path = dir.join(export_name(id, json));
    let replaced = std::fs::symlink_metadata(&path).is_ok();
    let write = |file: &Path, bytes: &[u8]| write_file(file, root, bytes, Replace::Yes);
    export_file(store, id, json, &path, &write)?;
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
    (place, root): (&Path, &Path),
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
    let write = |file: &Path, bytes: &[u8]| write_file(file, root, bytes, Replace::No);
    match export_file(store, id, json, &path, &write) {
        Err(SessionError::Write { path, source })
            if source.kind() == std::io::ErrorKind::AlreadyExists =>
        {
            Ok(format!(
                "Not exported: {} appeared meanwhile, and /export does not overwrite a file.",
                path.display()
            ))
        }
        other => other.map(|()| format!("Exported to {}", path.display())),
    }
}

/// Whether an export may take the place of a file already there.
#[derive(Clone, Copy, PartialEq)]
enum Replace {
    /// cairn's own export of the same session, in its export folder.
    Yes,
    /// A place the person named: never.
    No,
}

/// Writes one file of an export, private (0600), never through a link: in
/// the workspace, every folder on the way is opened beneath it (a folder
/// link a command planted is refused, not followed); elsewhere the
/// person's own folders are made as named.
fn write_file(path: &Path, root: &Path, bytes: &[u8], replace: Replace) -> std::io::Result<()> {
    let mut flags = libc::O_WRONLY | libc::O_CREAT;
    flags |= match replace {
        Replace::Yes => libc::O_TRUNC,
        Replace::No => libc::O_EXCL,
    };
    let mut file = match path.strip_prefix(root) {
        Ok(rel) => {
            crate::tools::beneath::create_under(root, rel, flags, 0o600).map_err(|e| {
                match e.raw_os_error() {
                    Some(libc::ELOOP | libc::ENOTDIR | libc::EXDEV) => std::io::Error::other(
                        "a link stands on the way (an export in the workspace never follows one)",
                    ),
                    _ => e,
                }
            })?
        }
        Err(_) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            use std::os::unix::fs::OpenOptionsExt;
            let mut options = std::fs::OpenOptions::new();
            options
                .write(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW);
            match replace {
                Replace::Yes => options.create(true).truncate(true),
                Replace::No => options.create_new(true),
            }
            .open(path)?
        }
    };
    if replace == Replace::Yes {
        // An earlier export is made private too: it is a conversation.
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(bytes)
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

    #[test]
    fn an_export_in_the_workspace_follows_no_planted_link_and_replaces_nothing() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = root.path();
        std::os::unix::fs::symlink(outside.path(), root.join("notes")).unwrap();
        let e = write_file(&root.join("notes/s.md"), root, b"x", Replace::No).unwrap_err();
        assert!(e.to_string().contains("a link stands on the way"), "{e}");
        // A link in the file's own place, dangling or not, is no way out.
        std::os::unix::fs::symlink(outside.path().join("bashrc"), root.join("s.md")).unwrap();
        assert!(write_file(&root.join("s.md"), root, b"x", Replace::No).is_err());
        assert!(write_file(&root.join("s.md"), root, b"x", Replace::Yes).is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        // A file already there stays as it was.
        std::fs::write(root.join("kept.md"), "mine").unwrap();
        let e = write_file(&root.join("kept.md"), root, b"x", Replace::No).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(
            std::fs::read_to_string(root.join("kept.md")).unwrap(),
            "mine"
        );
        // Missing folders are made, privately written.
        write_file(&root.join("a/b/s.md"), root, b"ok", Replace::No).unwrap();
        assert_eq!(std::fs::read(root.join("a/b/s.md")).unwrap(), b"ok");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(root.join("a/b/s.md"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
