//! Rules kept in a project's `.cairn/config.toml` under `[permissions]`.
//! Edits go through `toml_edit` so the person's comments and layout
//! survive.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table, Value};

use super::rules::{Rule, RuleError};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read or write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {message}")]
    Toml { path: PathBuf, message: String },
    #[error("{path}: `{key}` must be {expected}")]
    Shape {
        path: PathBuf,
        key: String,
        expected: &'static str,
    },
    #[error(
        "{path} leads outside the project through a symbolic link; cairn does not \
         write rules there (add the rule by hand if you meant it)"
    )]
    OutsideProject { path: PathBuf },
    #[error(transparent)]
    Rule(#[from] RuleError),
}

/// The rules a config file holds, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredRules {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
}

/// Append `rule` to `[permissions] allow` in the config file at `config`
/// (created if missing). A rule already present is not added twice.
pub fn store_rule(config: &Path, rule: &str) -> Result<(), StoreError> {
    let rule = Rule::parse(rule)?;
    let mut doc = load(config)?;
    let allow = list_mut(&mut doc, config, "allow")?;
    if !allow.iter().any(|v| v.as_str() == Some(rule.as_str())) {
        allow.push(rule.as_str());
    }
    save(config, &doc)
}

/// Adds `rule` to the person's own file for the project at `root`
/// (`config::own_rules`), creating it with a header that says whose file
/// it is and for which project.
pub fn store_own_rule(path: &Path, root: &Path, rule: &str) -> Result<(), StoreError> {
    if !path.exists() {
        let header = crate::config::own_rules::header(root);
        let doc: DocumentMut = header.parse().unwrap_or_default();
        save(path, &doc)?;
    }
    store_rule(path, rule)
}

/// Remove `rule` from `[permissions] allow` and `deny`. Returns whether it
/// was there.
pub fn remove_rule(config: &Path, rule: &str) -> Result<bool, StoreError> {
    if !config.exists() {
        return Ok(false);
    }
    let mut doc = load(config)?;
    let wanted = rule.trim();
    let mut removed = false;
    for key in ["allow", "deny"] {
        let list = list_mut(&mut doc, config, key)?;
        let before = list.len();
        list.retain(|v| v.as_str().map(str::trim) != Some(wanted));
        removed |= list.len() != before;
    }
    if removed {
        save(config, &doc)?;
    }
    Ok(removed)
}

/// The rules stored in the config file; empty when it does not exist.
pub fn list_rules(config: &Path) -> Result<StoredRules, StoreError> {
    if !config.exists() {
        return Ok(StoredRules::default());
    }
    let doc = load(config)?;
    let read = |key: &str| -> Result<Vec<String>, StoreError> {
        let Some(item) = doc.get("permissions").and_then(|p| p.get(key)) else {
            return Ok(Vec::new());
        };
        let shape = || StoreError::Shape {
            path: config.to_path_buf(),
            key: format!("permissions.{key}"),
            expected: "an array of strings",
        };
        let array = item.as_array().ok_or_else(shape)?;
        array
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(shape))
            .collect()
    };
    Ok(StoredRules {
        allow: read("allow")?,
        deny: read("deny")?,
    })
}

fn load(config: &Path) -> Result<DocumentMut, StoreError> {
    crate::config::read_toml(config).map_err(file_error)
}

fn save(config: &Path, doc: &DocumentMut) -> Result<(), StoreError> {
    if let Some(dir) = config.parent().filter(|d| !d.as_os_str().is_empty()) {
        refuse_links_out(config, dir)?;
    }
    crate::config::write_toml(config, doc).map_err(file_error)
}

/// A config file that could not be read, parsed or written.
fn file_error(e: crate::config::SaveError) -> StoreError {
    use crate::config::SaveError as E;
    match e {
        E::Parse { path, source } => StoreError::Toml {
            path,
            message: source.to_string(),
        },
        E::Read { path, source } | E::Write { path, source } => StoreError::Io { path, source },
    }
}

/// A project's `.cairn` directory (or its config file) that is a link to
/// somewhere outside the project must not receive rules: a cloned
/// repository could point it at any directory the person can write.
fn refuse_links_out(config: &Path, dir: &Path) -> Result<(), StoreError> {
    let Some(project) = dir.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    let Ok(project) = std::fs::canonicalize(project) else {
        return Ok(());
    };
    let is_link = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    let escapes = |p: &Path| {
        is_link(p) && std::fs::canonicalize(p).map_or(true, |real| !real.starts_with(&project))
    };
    if escapes(dir) || escapes(config) {
        return Err(StoreError::OutsideProject {
            path: config.to_path_buf(),
        });
    }
    Ok(())
}

fn list_mut<'a>(
    doc: &'a mut DocumentMut,
    config: &Path,
    key: &str,
) -> Result<&'a mut Array, StoreError> {
    let shape = |key: String, expected| StoreError::Shape {
        path: config.to_path_buf(),
        key,
        expected,
    };
    let permissions = doc
        .entry("permissions")
        .or_insert_with(|| Item::Table(Table::new()));
    let table = permissions
        .as_table_like_mut()
        .ok_or_else(|| shape("permissions".into(), "a table"))?;
    let item = table
        .entry(key)
        .or_insert(Item::Value(Value::Array(Array::new())));
    item.as_array_mut()
        .ok_or_else(|| shape(format!("permissions.{key}"), "an array of strings"))
}

/// The stored rules of each config file, one `allow`/`deny` line each under
/// the file's path, or a sentence saying there are none.
pub fn describe_rules<'a>(
    configs: impl IntoIterator<Item = &'a Path>,
) -> Result<String, StoreError> {
    let mut text = String::new();
    for path in configs {
        let rules = list_rules(path)?;
        if rules.allow.is_empty() && rules.deny.is_empty() {
            continue;
        }
        text.push_str(&format!("{}\n", path.display()));
        for r in &rules.allow {
            text.push_str(&format!("  allow  {r}\n"));
        }
        for r in &rules.deny {
            text.push_str(&format!("  deny   {r}\n"));
        }
    }
    if text.is_empty() {
        text = "No permission rules are stored. \"Allow always\" in a permission dialog adds one; `cairn permissions remove RULE` takes one away.".into();
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_keeps_comments_and_other_keys() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let config = dir.path().join(".cairn/config.toml");
        std::fs::create_dir_all(dir.path().join(".cairn"))?;
        std::fs::write(
            &config,
            "# my settings\nmodel = \"x\" # the model\n\n[permissions]\n# trusted\nallow = [\"bash(ls*)\"]\ndeny = [\"bash(rm*)\"]\n\n[ui]\ntheme = \"dark\"\n",
        )?;
        store_rule(&config, "bash(cargo test*)")?;
        store_rule(&config, "bash(cargo test*)")?;
        let text = std::fs::read_to_string(&config)?;
        assert!(text.contains("# my settings"));
        assert!(text.contains("model = \"x\" # the model"));
        assert!(text.contains("# trusted"));
        assert!(text.contains("theme = \"dark\""));
        assert_eq!(text.matches("cargo test*").count(), 1, "{text}");
        let rules = list_rules(&config)?;
        assert_eq!(rules.allow, vec!["bash(ls*)", "bash(cargo test*)"]);
        assert_eq!(rules.deny, vec!["bash(rm*)"]);

        assert!(remove_rule(&config, "bash(ls*)")?);
        assert!(!remove_rule(&config, "bash(ls*)")?);
        let text = std::fs::read_to_string(&config)?;
        assert!(text.contains("# my settings") && text.contains("theme = \"dark\""));
        assert_eq!(list_rules(&config)?.allow, vec!["bash(cargo test*)"]);
        Ok(())
    }

    #[test]
    #[cfg(unix)]
    fn a_cairn_directory_linked_outside_the_project_is_not_written()
    -> Result<(), Box<dyn std::error::Error>> {
        let outside = tempfile::tempdir()?;
        let project = tempfile::tempdir()?;
        std::os::unix::fs::symlink(outside.path(), project.path().join(".cairn"))?;
        let config = project.path().join(".cairn/config.toml");
        let err = store_rule(&config, "bash(ls*)").expect_err("a link out must be refused");
        assert!(matches!(err, StoreError::OutsideProject { .. }), "{err}");
        assert!(!outside.path().join("config.toml").exists());
        // A link that stays inside the project is fine.
        std::fs::remove_file(project.path().join(".cairn"))?;
        std::fs::create_dir(project.path().join("real"))?;
        std::os::unix::fs::symlink(project.path().join("real"), project.path().join(".cairn"))?;
        store_rule(&config, "bash(ls*)")?;
        assert!(project.path().join("real/config.toml").exists());
        Ok(())
    }

    #[test]
    fn the_persons_own_file_is_created_with_its_header_and_takes_rules_once()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().join("p");
        std::fs::create_dir(&root)?;
        let file = crate::config::own_rules::path_in(&dir.path().join("cfg"), &root);
        store_own_rule(&file, &root, "bash(cargo test*)")?;
        store_own_rule(&file, &root, "bash(cargo test*)")?;
        let text = std::fs::read_to_string(&file)?;
        assert!(
            text.starts_with("# Your own permission rules for"),
            "{text}"
        );
        assert_eq!(text.matches("cargo test*").count(), 1, "{text}");
        let rules = crate::config::own_rules::read(&file)?;
        assert_eq!(rules.permissions.allow, ["bash(cargo test*)"]);
        Ok(())
    }

    #[test]
    fn store_creates_the_file() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let config = dir.path().join(".cairn/config.toml");
        store_rule(&config, "edit(src/**)")?;
        assert_eq!(list_rules(&config)?.allow, vec!["edit(src/**)"]);
        Ok(())
    }

    #[test]
    fn bad_input_is_reported() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let config = dir.path().join("config.toml");
        assert!(matches!(
            store_rule(&config, "bash(ls"),
            Err(StoreError::Rule(_))
        ));
        std::fs::write(&config, "[permissions]\nallow = \"bash\"\n")?;
        let err = store_rule(&config, "bash(ls*)")
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("permissions.allow")));
        std::fs::write(&config, "[permissions\n")?;
        assert!(matches!(list_rules(&config), Err(StoreError::Toml { .. })));
        Ok(())
    }
}
