//! The person's own permission rules for one project: what "Allow always"
//! stores, kept in `<config dir>/cairn/projects/<name>-<hash>.toml`, outside
//! the repository.
//!
//! Why not a file in the repository (`.cairn/config.local.toml`): such a
//! file is committed by accident, wiped by `git clean -fdx`, and — worse —
//! can be planted, by the repository itself or by any command the sandbox
//! lets write the workspace, so cairn could never tell the person's grant
//! from a stranger's. cairn's config directory is the person's: commands in
//! the sandbox can neither read nor write it. The rules here are therefore
//! believed without the trust question, and a repository's files never
//! are: cairn does not read a `.cairn/config.local.toml` at all.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

/// What the file may hold: rules only, nothing that could loosen cairn in
/// another way.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OwnRules {
    #[serde(default)]
    pub permissions: RuleLists,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RuleLists {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

/// The file for the project at `root`, in the person's config directory
/// `config_dir` (`~/.config/cairn`): named after the folder, for a person
/// browsing the directory, and its canonical path's hash, so two checkouts
/// named alike do not share rules.
pub fn path_in(config_dir: &Path, root: &Path) -> PathBuf {
    let key = super::trust::project_key(root);
    let hash = super::trust::hash_text(key.as_os_str().as_encoded_bytes());
    let name: String = (key.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let name = name.trim_start_matches('.');
    let name = if name.is_empty() { "project" } else { name };
    config_dir
        .join("projects")
        .join(format!("{name}-{}.toml", &hash[..16]))
}

/// The file for the project at `root` in this person's config directory.
pub fn path_for(root: &Path) -> Option<PathBuf> {
    super::global_dir().map(|d| path_in(&d, root))
}

/// The rules in the file; empty when it does not exist. A damaged file is
/// an error that names it, as the other config files are.
pub fn read(path: &Path) -> Result<OwnRules, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OwnRules::default()),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    toml::from_str(&text).map_err(|e| ConfigError::Invalid {
        path: path.to_path_buf(),
        message: format!(
            "{} (this file holds only [permissions] allow and deny)",
            e.message().trim()
        ),
    })
}

/// The header of a new file: whose it is and for which project
/// (`permission::store::store_own_rule` writes it).
pub fn header(root: &Path) -> String {
    format!(
        "# Your own permission rules for {}.\n\
         # \"Allow always\" adds them here, outside the repository, so they are\n\
         # never committed and no repository can plant them.\n\
         # `cairn permissions list` shows them; `cairn permissions remove RULE`\n\
         # takes one away.\n\n[permissions]\nallow = []\n",
        super::trust::project_key(root).display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_checkout_has_its_own_file_named_after_it() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        for d in [&a, &b] {
            std::fs::create_dir(d.path().join("my app")).unwrap();
        }
        let cfg = Path::new("/cfg/cairn");
        let pa = path_in(cfg, &a.path().join("my app"));
        let pb = path_in(cfg, &b.path().join("my app"));
        assert_ne!(pa, pb);
        assert!(pa.starts_with("/cfg/cairn/projects"), "{}", pa.display());
        let name = pa.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("my_app-") && name.ends_with(".toml"),
            "{name}"
        );
        assert_eq!(pa, path_in(cfg, &a.path().join("my app/../my app")));
    }

    #[test]
    fn rules_are_stored_read_back_and_nothing_else_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir(&root).unwrap();
        let file = path_in(&dir.path().join("cfg"), &root);
        assert_eq!(read(&file).unwrap(), OwnRules::default());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let text = header(&root).replace("allow = []", "allow = [\"bash(cargo test*)\"]");
        std::fs::write(&file, &text).unwrap();
        assert!(
            text.starts_with("# Your own permission rules for"),
            "{text}"
        );
        assert_eq!(
            read(&file).unwrap().permissions.allow,
            ["bash(cargo test*)"]
        );
        std::fs::write(&file, "[permissions]\nmode = \"auto\"\n").unwrap();
        let err = read(&file).unwrap_err().to_string();
        assert!(err.contains("only [permissions] allow and deny"), "{err}");
        std::fs::write(&file, "[sandbox]\nmode = \"off\"\n").unwrap();
        assert!(read(&file).is_err());
    }

    #[test]
    fn own_rules_join_the_persons_and_a_repositorys_local_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join(".cairn")).unwrap();
        let own = path_in(&dir.path().join("cfg"), &root);
        std::fs::create_dir_all(own.parent().unwrap()).unwrap();
        std::fs::write(&own, "[permissions]\nallow = [\"bash(make*)\"]\n").unwrap();
        // The project asks for the same rule and one more, and carries a
        // "local" file that would allow everything.
        std::fs::write(
            root.join(".cairn/config.toml"),
            "[permissions]\nallow = [\"bash(make*)\", \"bash(npm*)\"]\n",
        )
        .unwrap();
        std::fs::write(
            root.join(".cairn/config.local.toml"),
            "[permissions]\nallow = [\"bash(*)\"]\nmode = \"auto\"\n",
        )
        .unwrap();
        let project = super::super::project_config_path(&root);
        let c = super::super::load_layers(None, Some(&own), &project).unwrap();
        assert_eq!(c.file.permissions.allow, ["bash(make*)"]);
        assert_eq!(c.mode(), super::super::Mode::Smart);
        // Only the project's other rule waits for trust; the person's own
        // is not asked about again.
        let held: Vec<_> = c.held().iter().map(|h| h.what.clone()).collect();
        assert_eq!(held.len(), 1, "{held:?}");
        assert!(held[0].contains("bash(npm*)"), "{held:?}");
    }
}
