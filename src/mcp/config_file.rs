//! `cairn mcp add / remove / get`: servers kept under `[mcp.NAME]` in the
//! user's config file, read and written through the config's one TOML
//! read-modify-write (`config::read_toml`, `config::write_toml`), so the
//! person's comments and layout survive.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// The file could not be read, parsed or written.
    #[error(transparent)]
    File(#[from] crate::config::SaveError),
    #[error("{path}: `mcp` must be a table of servers ([mcp.NAME])")]
    Shape { path: PathBuf },
    #[error(
        "an MCP server named `{name}` is already in {path}; remove it first with `cairn mcp remove {name}`"
    )]
    Exists { name: String, path: PathBuf },
    #[error("`{0}` is not a usable server name: use letters, digits, `-` and `_`")]
    BadName(String),
    #[error("`{0}` is not a header; write it as NAME=VALUE")]
    BadHeader(String),
    #[error("`{0}` is not a transport; use `http` (streamable HTTP) or `sse`")]
    BadTransport(String),
}

/// How a new server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewServer {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    Http {
        url: String,
        headers: Vec<String>,
        transport: Option<String>,
    },
}

/// Adds `[mcp.NAME]` to the config file at `path` (created if missing).
pub fn add_server(path: &Path, name: &str, server: &NewServer) -> Result<(), ConfigFileError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(ConfigFileError::BadName(name.to_string()));
    }
    let mut doc = load(path)?;
    let servers = servers_mut(&mut doc, path)?;
    if servers.contains_key(name) {
        return Err(ConfigFileError::Exists {
            name: name.to_string(),
            path: path.to_path_buf(),
        });
    }
    let mut table = Table::new();
    match server {
        NewServer::Stdio { command, args, env } => {
            table["command"] = value(command.as_str());
            if !args.is_empty() {
                table["args"] = value(args.iter().map(String::as_str).collect::<Array>());
            }
            if !env.is_empty() {
                let mut vars = InlineTable::new();
                for (k, v) in env {
                    vars.insert(k, v.as_str().into());
                }
                table["env"] = value(vars);
            }
        }
        NewServer::Http {
            url,
            headers,
            transport,
        } => {
            table["url"] = value(url.as_str());
            if let Some(t) = transport {
                if t != "sse" && t != "http" {
                    return Err(ConfigFileError::BadTransport(t.clone()));
                }
                table["transport"] = value(t.as_str());
            }
            if !headers.is_empty() {
                let mut map = InlineTable::new();
                for h in headers {
                    let (k, v) = h
                        .split_once('=')
                        .filter(|(k, _)| !k.trim().is_empty())
                        .ok_or_else(|| ConfigFileError::BadHeader(h.clone()))?;
                    map.insert(k.trim(), v.trim().into());
                }
                table["headers"] = value(map);
            }
        }
    }
    servers.insert(name, Item::Table(table));
    save(path, &doc)
}

/// Removes `[mcp.NAME]`; returns whether it was there.
pub fn remove_server(path: &Path, name: &str) -> Result<bool, ConfigFileError> {
    if !path.exists() {
        return Ok(false);
    }
    let mut doc = load(path)?;
    let removed = servers_mut(&mut doc, path)?.remove(name).is_some();
    if removed {
        save(path, &doc)?;
    }
    Ok(removed)
}

/// `[mcp.NAME]` as written in the file, or `None`.
pub fn server_text(path: &Path, name: &str) -> Result<Option<String>, ConfigFileError> {
    if !path.exists() {
        return Ok(None);
    }
    let doc = load(path)?;
    let Some(item) = doc.get("mcp").and_then(|m| m.get(name)) else {
        return Ok(None);
    };
    let mut out = DocumentMut::new();
    let mut mcp = Table::new();
    mcp.set_implicit(true);
    mcp.insert(name, item.clone());
    out.insert("mcp", Item::Table(mcp));
    Ok(Some(out.to_string()))
}

fn servers_mut<'a>(
    doc: &'a mut DocumentMut,
    path: &Path,
) -> Result<&'a mut Table, ConfigFileError> {
    let item = doc.entry("mcp").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    item.as_table_mut().ok_or_else(|| ConfigFileError::Shape {
        path: path.to_path_buf(),
    })
}

fn load(path: &Path) -> Result<DocumentMut, ConfigFileError> {
    Ok(crate::config::read_toml(path)?)
}

fn save(path: &Path, doc: &DocumentMut) -> Result<(), ConfigFileError> {
    Ok(crate::config::write_toml(path, doc)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_keeps_comments_and_remove_takes_only_the_server()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# my settings\nmodel = \"m\" # the model\n")?;
        let stdio = NewServer::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "server-x".into()],
            env: vec![],
        };
        add_server(&path, "fs", &stdio)?;
        let http = NewServer::Http {
            url: "https://example.com/mcp".into(),
            headers: vec!["Authorization=Bearer ${TOKEN}".into()],
            transport: Some("sse".into()),
        };
        add_server(&path, "docs", &http)?;
        let text = std::fs::read_to_string(&path)?;
        assert!(text.starts_with("# my settings\nmodel = \"m\" # the model\n"));
        let parsed: crate::config::ConfigFile = toml::from_str(&text)?;
        assert_eq!(parsed.mcp["fs"].args, ["-y", "server-x"]);
        assert_eq!(
            parsed.mcp["docs"].headers["Authorization"],
            "Bearer ${TOKEN}"
        );
        assert!(matches!(
            add_server(&path, "fs", &stdio),
            Err(ConfigFileError::Exists { .. })
        ));
        let shown = server_text(&path, "docs")?.unwrap_or_default();
        assert!(
            shown.contains("[mcp.docs]") && shown.contains("transport = \"sse\""),
            "{shown}"
        );
        assert!(remove_server(&path, "fs")?);
        assert!(!remove_server(&path, "fs")?);
        let text = std::fs::read_to_string(&path)?;
        assert!(
            text.contains("# the model")
                && text.contains("[mcp.docs]")
                && !text.contains("server-x")
        );
        Ok(())
    }

    #[test]
    fn bad_input_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        let http = |h: &str, t: Option<&str>| NewServer::Http {
            url: "http://x".into(),
            headers: vec![h.into()],
            transport: t.map(String::from),
        };
        assert!(matches!(
            add_server(&path, "a b", &http("K=V", None)),
            Err(ConfigFileError::BadName(_))
        ));
        assert!(matches!(
            add_server(&path, "a", &http("novalue", None)),
            Err(ConfigFileError::BadHeader(_))
        ));
        assert!(matches!(
            add_server(&path, "a", &http("K=V", Some("ws"))),
            Err(ConfigFileError::BadTransport(_))
        ));
        std::fs::write(&path, "mcp = 3\n").expect("write");
        assert!(matches!(
            add_server(&path, "a", &http("K=V", None)),
            Err(ConfigFileError::Shape { .. })
        ));
    }
}
