//! The services the runtime runs effects with, and the effects that answer
//! later (off the interface thread, answered with a `Msg`).

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use crate::mcp::McpManager;
use crate::protocol::NoticeLevel;
use crate::protocol::{SessionReply, SessionRequest};
use crate::sessions::Sessions;
use crate::tui::msg::Msg;

/// Handles to the services; all optional so the interface runs without them.
#[derive(Clone, Default)]
pub struct Handles {
    pub sessions: Option<Sessions>,
    pub mcp: Option<Arc<McpManager>>,
    /// The language servers, for `/lsp`.
    /// The session's hooks, for `/hooks`.
    pub hooks: Option<Arc<crate::extensions::hooks::Hooks>>,
    pub project_root: PathBuf,
    /// Where the person's commands and skills are read from, and the
    /// folder cairn works in: the `/` menu reads them again when it opens.
    pub command_roots: Option<(crate::extensions::commands::Roots, PathBuf)>,
    pub project_config: PathBuf,
    pub global_config: Option<PathBuf>,
    /// The person's own rules for this project (`config::own_rules`).
    pub own_rules: Option<PathBuf>,
    /// Per-project prompt history (JSON lines).
    pub history_file: Option<PathBuf>,
    /// `[ui] scroll_regions`: let the terminal scroll the transcript.
    pub scroll_regions: bool,
    /// How the sandbox stands, worked out after the first frame.
    pub sandbox_probe: Option<crate::tui::sandbox_view::SandboxProbe>,
}

impl std::fmt::Debug for Handles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handles")
            .field("sessions", &self.sessions.is_some())
            .field("mcp", &self.mcp.is_some())
            .field("project_root", &self.project_root)
            .finish()
    }
}

impl Handles {
    /// Works out how the sandbox stands in the background; the answer
    /// arrives as [`Msg::Sandbox`].
    pub fn probe_sandbox(&self, tx: UnboundedSender<Msg>) {
        let Some(probe) = self.sandbox_probe.clone() else {
            return;
        };
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(Msg::Sandbox(probe()));
        });
    }

    /// Asks the sessions service in the background.
    pub fn session(&self, req: SessionRequest, tx: UnboundedSender<Msg>) {
        let sessions = self.sessions.clone();
        tokio::task::spawn_blocking(move || {
            let reply = match sessions {
                Some(s) => s.handle(req),
                None => SessionReply::Failed(crate::sessions::SessionError::NoStore.to_string()),
            };
            let _ = tx.send(Msg::Session(reply));
        });
    }

    /// The project's files and the MCP servers' resources, for `@`.
    pub fn list_files(&self, tx: UnboundedSender<Msg>) {
        let root = self.project_root.clone();
        let mcp = self.mcp.clone();
        tokio::spawn(async move {
            let mut files = tokio::task::spawn_blocking(move || {
                crate::tools::walk::workspace_files(&root, 20_000)
            })
            .await
            .unwrap_or_default();
            if let Some(m) = mcp {
                files.extend(m.resource_refs().await);
            }
            let _ = tx.send(Msg::Files(files));
        });
    }

    /// The person's commands and skills as they are now (one added or
    /// edited during the session shows in the `/` menu), answered with
    /// `Msg::CustomCommands`.
    pub fn reload_commands(&self, tx: UnboundedSender<Msg>) {
        let Some((roots, cwd)) = self.command_roots.clone() else {
            return;
        };
        tokio::spawn(async move {
            let read = tokio::task::spawn_blocking(move || {
                let catalogue = crate::extensions::invocable(&roots, &cwd);
                crate::tui::commands::custom_entries(&catalogue).0
            })
            .await;
            if let Ok(entries) = read {
                let _ = tx.send(Msg::CustomCommands(entries));
            }
        });
    }

    /// The configured MCP servers' names.
    pub fn mcp_server_names(&self) -> Vec<String> {
        self.mcp
            .as_ref()
            .map(|m| m.statuses().into_iter().map(|s| s.name).collect())
            .unwrap_or_default()
    }

    /// The servers' state and the prompts they offer.
    pub fn mcp_status(&self, tx: UnboundedSender<Msg>) {
        let mut text = match &self.mcp {
            Some(m) => {
                let s = m.statuses();
                if s.is_empty() {
                    format!(
                        "No MCP servers are configured. Add one as [mcp.NAME] in {}.",
                        self.project_config.display()
                    )
                } else {
                    format!(
                        "{}\nRestart one with /mcp restart <name>.",
                        crate::mcp::format_status(&s)
                    )
                }
            }
            None => "MCP is not running.".into(),
        };
        let mcp = self.mcp.clone();
        tokio::spawn(async move {
            let prompts = match &mcp {
                Some(m) => m.prompt_commands().await,
                None => Vec::new(),
            };
            if !prompts.is_empty() {
                text.push_str("\nPrompts (type one to send it):\n");
                for p in prompts {
                    text.push_str(&format!("  {p}\n"));
                }
            }
            let _ = tx.send(Msg::Text {
                title: "MCP servers".into(),
                text,
            });
        });
    }

    /// Keeps the `/` menu's MCP prompts current: listed again each time
    /// a server starts, stops or restarts.
    pub fn watch_mcp_prompts(&self, tx: UnboundedSender<Msg>) {
        let Some(mcp) = self.mcp.clone() else { return };
        tokio::spawn(async move {
            let mut changes = mcp.changes();
            loop {
                let entries = (mcp.prompt_entries().await.into_iter())
                    .map(|p| crate::tui::commands::CustomEntry {
                        name: p.name,
                        args: p.args,
                        description: p.description,
                    })
                    .collect();
                if tx.send(Msg::McpPrompts(entries)).is_err() || changes.changed().await.is_err() {
                    return;
                }
            }
        });
    }

    /// Fetches an MCP prompt's text to send it as the prompt.
    pub fn mcp_prompt(&self, command: String, tx: UnboundedSender<Msg>) {
        let mcp = self.mcp.clone();
        tokio::spawn(async move {
            let msg = match mcp {
                Some(m) => match m.expand_prompt(&command).await {
                    Ok(text) => Msg::SubmitPrompt(text),
                    Err(why) => Msg::Notice(NoticeLevel::Warning, why),
                },
                None => Msg::Notice(NoticeLevel::Warning, "MCP is not running.".into()),
            };
            let _ = tx.send(msg);
        });
    }

    pub fn restart_mcp(&self, name: &str) -> Msg {
        match self.mcp.as_ref().map(|m| m.restart(name)) {
            Some(Ok(())) => Msg::Notice(
                NoticeLevel::Info,
                format!("Restarting MCP server `{name}`…"),
            ),
            Some(Err(e)) => Msg::Notice(NoticeLevel::Warning, e),
            None => Msg::Notice(NoticeLevel::Warning, "MCP is not running.".into()),
        }
    }

    /// `/hooks`: every hook, its file, how it runs and how it last ended.
    pub fn hooks(&self, tx: UnboundedSender<Msg>) {
        let text = match &self.hooks {
            Some(h) => h.describe(),
            None => "Hooks are not running.".into(),
        };
        let _ = tx.send(Msg::Text {
            title: "Hooks".into(),
            text,
        });
    }

    pub fn permission_rules(&self, tx: UnboundedSender<Msg>) {
        let files: Vec<PathBuf> = self
            .global_config
            .iter()
            .chain(&self.own_rules)
            .chain(std::iter::once(&self.project_config))
            .cloned()
            .collect();
        tokio::task::spawn_blocking(move || {
            let msg =
                match crate::permission::store::describe_rules(files.iter().map(|p| p.as_path())) {
                    Ok(text) => Msg::Text {
                        title: "Permission rules".into(),
                        text,
                    },
                    Err(e) => Msg::Notice(NoticeLevel::Error, e.to_string()),
                };
            let _ = tx.send(msg);
        });
    }

    pub fn save_setting(&self, key: &'static str, value: String, tx: UnboundedSender<Msg>) {
        let Some(path) = self.global_config.clone() else {
            let _ = tx.send(Msg::Notice(
                NoticeLevel::Error,
                "no config directory on this system".into(),
            ));
            return;
        };
        tokio::task::spawn_blocking(move || {
            let msg = match crate::config::save_setting(&path, key, &value) {
                Ok(()) if key == "theme" => Msg::Notice(
                    NoticeLevel::Info,
                    format!("Theme “{value}” saved in {}.", path.display()),
                ),
                Ok(()) => Msg::Notice(
                    NoticeLevel::Info,
                    format!("{key} “{value}” saved in {}.", path.display()),
                ),
                Err(e) => Msg::Notice(NoticeLevel::Error, e.to_string()),
            };
            let _ = tx.send(msg);
        });
    }
}
