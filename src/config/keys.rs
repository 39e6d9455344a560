//! API keys pasted at first start, kept in cairn's data directory (0600,
//! the directory 0700) under the name of the environment variable they
//! stand in for: `<data>/keys/ANTHROPIC_API_KEY`. A variable that is set
//! wins over the stored key. Also where the set-up writes the provider it
//! chose into the user's config.

use std::io;
use std::path::{Path, PathBuf};

use super::settings::SaveError;

/// Where stored keys live.
pub fn keys_dir() -> Option<PathBuf> {
    super::data_dir().map(|d| d.join("keys"))
}

/// A variable name that is safe as a file name: `A-Z`, `0-9`, `_`.
pub fn valid_var(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// The key stored for variable `var`, if one is.
pub fn stored_key(var: &str) -> Option<String> {
    stored_key_in(&keys_dir()?, var)
}

pub fn stored_key_in(dir: &Path, var: &str) -> Option<String> {
    if !valid_var(var) {
        return None;
    }
    let text = std::fs::read_to_string(dir.join(var)).ok()?;
    Some(text.trim().to_string()).filter(|k| !k.is_empty())
}

/// Stores `key` for variable `var` (0600); returns the file.
pub fn store_key_in(dir: &Path, var: &str, key: &str) -> io::Result<PathBuf> {
    if !valid_var(var) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{var}` is not a variable name"),
        ));
    }
    crate::private::create_dir(dir)?;
    let path = dir.join(var);
    crate::private::replace(&path, key.trim().as_bytes())?;
    Ok(path)
}

/// Writes `provider = name` and `[providers.name]` with `fields` into the
/// config at `path`, keeping everything else in it as it was.
pub fn save_provider(path: &Path, name: &str, fields: &[(&str, String)]) -> Result<(), SaveError> {
    super::settings::edit_toml(path, |doc| {
        doc["provider"] = toml_edit::value(name);
        if fields.is_empty() {
            return;
        }
        if !doc.contains_table("providers") {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            doc["providers"] = toml_edit::Item::Table(t);
        }
        if let Some(providers) = doc["providers"].as_table_mut()
            && !providers.contains_key(name)
        {
            providers.insert(name, toml_edit::Item::Table(toml_edit::Table::new()));
        }
        for (k, v) in fields {
            doc["providers"][name][k] = toml_edit::value(v.as_str());
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_stored_key_is_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let keys = dir.path().join("keys");
        let path = store_key_in(&keys, "ANTHROPIC_API_KEY", " sk-1 \n").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dmode = std::fs::metadata(&keys).unwrap().permissions().mode() & 0o777;
        assert_eq!(dmode, 0o700);
        assert_eq!(
            stored_key_in(&keys, "ANTHROPIC_API_KEY").as_deref(),
            Some("sk-1")
        );
        assert!(store_key_in(&keys, "../etc", "x").is_err());
        assert_eq!(stored_key_in(&keys, "../ANTHROPIC_API_KEY"), None);
    }

    #[test]
    fn a_key_is_never_written_through_a_link_or_into_a_shared_file() {
        let dir = tempfile::tempdir().unwrap();
        let keys = dir.path().join("keys");
        crate::private::create_dir(&keys).unwrap();
        let victim = dir.path().join("bashrc");
        std::fs::write(&victim, "export PATH\n").unwrap();
        std::os::unix::fs::symlink(&victim, keys.join("OPENAI_API_KEY")).unwrap();
        let shared = dir.path().join("shared");
        std::fs::write(&shared, "other\n").unwrap();
        std::fs::hard_link(&shared, keys.join("ANTHROPIC_API_KEY")).unwrap();
        store_key_in(&keys, "OPENAI_API_KEY", "sk-new").unwrap();
        store_key_in(&keys, "ANTHROPIC_API_KEY", "sk-ant-new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "export PATH\n");
        assert_eq!(std::fs::read_to_string(&shared).unwrap(), "other\n");
        let link = std::fs::symlink_metadata(keys.join("OPENAI_API_KEY")).unwrap();
        assert!(link.is_file() && link.permissions().mode() & 0o777 == 0o600);
        assert_eq!(
            stored_key_in(&keys, "OPENAI_API_KEY").as_deref(),
            Some("sk-new")
        );
    }

    #[test]
    fn the_chosen_provider_is_saved_with_the_rest_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, "# mine\ntheme = \"light\"\n").unwrap();
        save_provider(
            &p,
            "local",
            &[
                ("kind", "openai".into()),
                ("base_url", "http://h/v1".into()),
            ],
        )
        .unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.contains("# mine") && text.contains("theme = \"light\""),
            "{text}"
        );
        let v: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(v["provider"].as_str(), Some("local"));
        assert_eq!(
            v["providers"]["local"]["base_url"].as_str(),
            Some("http://h/v1")
        );
    }
}
