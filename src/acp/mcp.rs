//! The MCP servers an editor passes with `session/new` and `session/load`
//! (its own context servers, which the person set up there): added to the
//! session's servers as the person's own, beside those of cairn's config.
//! One with a name the config also uses replaces it for this session.
//!
//! A stdio server runs as the person's own do: outside the sandbox, in a
//! folder no repository can write, its environment scrubbed — unless its
//! command line names a file inside the workspace, whose code the model
//! can change; that one runs inside the sandbox (read-only, network on),
//! as a project's server does.

use std::collections::BTreeMap;
use std::path::Path;

use agent_client_protocol::v1::schema as acp;

use crate::config::McpServerConfig;

/// Adds `given` to `servers`; says what was replaced or left out.
pub fn add(
    servers: &mut BTreeMap<String, McpServerConfig>,
    given: &[acp::McpServer],
    workspace: &Path,
) -> Vec<String> {
    let mut notes = Vec::new();
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    for server in given {
        let (name, config) = match server {
            acp::McpServer::Stdio(s) => {
                let mut config = McpServerConfig {
                    command: Some(s.command.to_string_lossy().into_owned()),
                    args: s.args.clone(),
                    env: (s.env.iter())
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect(),
                    ..Default::default()
                };
                if names_inside(&root, &config.command_words()) {
                    config.sandbox = Some(true);
                }
                (&s.name, config)
            }
            acp::McpServer::Http(s) => (&s.name, remote(&s.url, &s.headers, None)),
            acp::McpServer::Sse(s) => (&s.name, remote(&s.url, &s.headers, Some("sse"))),
            _ => {
                notes.push("an MCP server of a transport cairn does not offer was left out".into());
                continue;
            }
        };
        let name = usable_name(name);
        if servers.insert(name.clone(), config).is_some() {
            notes.push(format!(
                "the editor's MCP server `{name}` replaces the one of that name in cairn's config for this session"
            ));
        }
    }
    notes
}

fn remote(url: &str, headers: &[acp::HttpHeader], transport: Option<&str>) -> McpServerConfig {
    McpServerConfig {
        url: Some(url.to_string()),
        headers: (headers.iter())
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect(),
        transport: transport.map(str::to_string),
        ..Default::default()
    }
}

/// A server name as tool names take it (`mcp::server_key`), `editor`
/// when nothing of it is left.
fn usable_name(name: &str) -> String {
    let key = crate::mcp::server_key(name.trim());
    let key = key.trim_matches('_');
    if key.is_empty() {
        "editor".to_string()
    } else {
        key.to_string()
    }
}

/// Whether any word (split at white space, `:` and after `=`) is a path
/// inside `root`, as written or as it resolves.
fn names_inside(root: &Path, words: &[String]) -> bool {
    words.iter().any(|word| {
        word.split_whitespace().any(|part| {
            let value = part.split_once('=').map_or(part, |(_, v)| v);
            value.split(':').filter(|p| p.contains('/')).any(|piece| {
                let at = crate::paths::lexical(&root.join(piece));
                at.starts_with(root) || crate::paths::real_or_parent(&at).starts_with(root)
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_servers_are_added_as_the_persons_and_workspace_code_is_contained() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("tools")).unwrap();
        let mut servers = BTreeMap::new();
        servers.insert("docs".to_string(), McpServerConfig::default());
        let given = vec![
            acp::McpServer::Stdio(
                acp::McpServerStdio::new("My Server!", "/usr/bin/node")
                    .args(vec![ws.join("tools/mcp.js").display().to_string()])
                    .env(vec![acp::EnvVariable::new("TOKEN", "t")]),
            ),
            acp::McpServer::Stdio(
                acp::McpServerStdio::new("plain", "/usr/bin/uvx")
                    .args(vec!["mcp-server-time".into()]),
            ),
            acp::McpServer::Http(
                acp::McpServerHttp::new("docs", "http://127.0.0.1:9/mcp")
                    .headers(vec![acp::HttpHeader::new("Authorization", "Bearer x")]),
            ),
            acp::McpServer::Sse(acp::McpServerSse::new("__", "http://127.0.0.1:9/sse")),
        ];
        let notes = add(&mut servers, &given, &ws);
        let mine = &servers["My_Server"];
        assert_eq!(mine.sandbox, Some(true), "{mine:?}");
        assert_eq!(mine.env["TOKEN"], "t");
        assert!(!mine.from_project);
        assert_eq!(servers["plain"].sandbox, None);
        assert_eq!(servers["docs"].headers["Authorization"], "Bearer x");
        assert_eq!(servers["editor"].transport.as_deref(), Some("sse"));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("`docs` replaces"));
    }

    #[test]
    fn a_link_into_the_workspace_counts_as_inside() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let ws = ws.canonicalize().unwrap();
        std::os::unix::fs::symlink(&ws, dir.path().join("link")).unwrap();
        let via = dir.path().join("link/server.py").display().to_string();
        assert!(names_inside(&ws, &["python3".into(), via]));
        assert!(!names_inside(
            &ws,
            &["/usr/bin/python3".into(), "-m".into(), "x".into()]
        ));
        assert!(names_inside(&ws, &["PYTHONPATH=./lib".into()]));
    }
}
