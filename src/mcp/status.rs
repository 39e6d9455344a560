//! The text table of `cairn mcp list`.

use super::{ServerState, ServerStatus};

/// One line per server: name, transport, state, trust and target, then its
/// tools (or the reason it failed) indented below.
pub fn format_status(statuses: &[ServerStatus]) -> String {
    if statuses.is_empty() {
        return "No MCP servers are configured. Add one under [mcp.NAME] in config.toml.\n"
            .to_string();
    }
    let rows: Vec<[String; 4]> = statuses
        .iter()
        .map(|s| {
            let state = match &s.state {
                ServerState::Starting => "starting".to_string(),
                ServerState::Connected { tools } => format!(
                    "connected ({tools} tool{})",
                    if *tools == 1 { "" } else { "s" }
                ),
                ServerState::Failed { .. } => "failed".to_string(),
                ServerState::NeedsLogin { .. } => "needs login".to_string(),
                ServerState::Disabled => "disabled".to_string(),
            };
            let trust = if s.trusted { "trusted" } else { "asks" }.to_string();
            [s.name.clone(), s.transport.to_string(), state, trust]
        })
        .collect();
    let mut widths = [4, 9, 5, 5];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header = ["NAME", "TRANSPORT", "STATE", "TRUST"];
    push_row(&mut out, &widths, &header.map(String::from), "TARGET");
    for (row, status) in rows.iter().zip(statuses) {
        push_row(&mut out, &widths, row, &status.target);
        if let Some(at) = &status.contained_at {
            out.push_str(&format!(
                "    in the sandbox: it loads from {}, which sandboxed commands can change \
                 (`sandbox = false` in its entry runs it as you)\n",
                at.display()
            ));
        }
        match &status.state {
            ServerState::Failed { reason } | ServerState::NeedsLogin { reason } => {
                // Every line of it (a server's stderr hint), indented.
                out.push_str(&format!(
                    "    reason: {}\n",
                    reason.replace('\n', "\n      ")
                ))
            }
            ServerState::Connected { .. } if !status.tools.is_empty() => {
                out.push_str(&format!("    tools: {}\n", status.tools.join(", ")))
            }
            _ => {}
        }
    }
    out
}

fn push_row(out: &mut String, widths: &[usize; 4], cells: &[String; 4], target: &str) {
    for (w, cell) in widths.iter().zip(cells) {
        out.push_str(&format!("{cell:<w$}  "));
    }
    out.push_str(target);
    while out.ends_with(' ') {
        out.pop();
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::TransportKind;

    #[test]
    fn table_shows_state_tools_and_reasons() {
        let statuses = vec![
            ServerStatus {
                name: "github".into(),
                state: ServerState::Connected { tools: 2 },
                tools: vec!["create_issue".into(), "search".into()],
                transport: TransportKind::Stdio,
                target: "npx -y server-github".into(),
                trusted: false,
                contained_at: None,
            },
            ServerStatus {
                name: "docs".into(),
                state: ServerState::Failed {
                    reason: "could not connect".into(),
                },
                tools: vec![],
                transport: TransportKind::Http,
                target: "http://127.0.0.1:9/mcp".into(),
                trusted: true,
                contained_at: Some("/home/me/code/tool".into()),
            },
        ];
        let table = format_status(&statuses);
        let expected = "\
NAME    TRANSPORT  STATE                TRUST    TARGET
github  stdio      connected (2 tools)  asks     npx -y server-github
    tools: create_issue, search
docs    http       failed               trusted  http://127.0.0.1:9/mcp
    in the sandbox: it loads from /home/me/code/tool, which sandboxed commands can change (`sandbox = false` in its entry runs it as you)
    reason: could not connect
";
        assert_eq!(table, expected);
        assert!(format_status(&[]).starts_with("No MCP servers"));
    }
}
