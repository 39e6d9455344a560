//! `/lsp`'s text, from the agent's report of its language servers (the
//! full-screen interface and an editor's `/lsp` show the same).

use super::{KnownServer, ServerState, ServerStatus};

/// The servers started, then the ones known here, and how to change them.
pub fn report_text(statuses: &[ServerStatus], known: &[KnownServer]) -> String {
    let mut text = String::new();
    if statuses.is_empty() {
        text.push_str("No language server has started yet; one starts with the first file of its language a tool touches.\n");
    }
    for s in statuses {
        let state = match &s.state {
            ServerState::Starting => "starting…".to_string(),
            ServerState::Indexing(what) => format!("ready, busy: {what}"),
            ServerState::Ready => "ready".to_string(),
            ServerState::Failed(why) => format!("failed: {why}"),
        };
        text.push_str(&format!(
            "  {}  {}  ({})\n",
            s.name,
            state,
            s.root.display()
        ));
    }
    text.push_str("Known here (✓ installed):\n");
    for k in known {
        let mark = if k.installed { "✓" } else { "·" };
        text.push_str(&format!("  {mark} {}  {}\n", k.name, k.filetypes));
    }
    text.push_str(
        "Restart one with /lsp restart <name>. Configure them as [lsp.NAME] in your \
         config or the project's .cairn/config.toml.",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn the_report_names_each_server_its_state_and_what_is_installed() {
        let statuses = [ServerStatus {
            name: "pyright".into(),
            root: PathBuf::from("/w"),
            state: ServerState::Failed("it exited (status 3)".into()),
        }];
        let known = [
            KnownServer {
                name: "pyright".into(),
                filetypes: "py pyi".into(),
                installed: true,
            },
            KnownServer {
                name: "gopls".into(),
                filetypes: "go".into(),
                installed: false,
            },
        ];
        let text = report_text(&statuses, &known);
        assert!(
            text.contains("pyright  failed: it exited (status 3)  (/w)"),
            "{text}"
        );
        assert!(
            text.contains("✓ pyright  py pyi") && text.contains("· gopls  go"),
            "{text}"
        );
        assert!(report_text(&[], &known).starts_with("No language server has started yet"));
    }
}
