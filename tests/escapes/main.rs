//! The hostile containment suite (issues 22 and 23): a prompt-injected
//! model, played by the scripted model server, attacks through the real
//! `cairn run` in smart and auto mode, inside a throwaway home full of
//! canary secrets with the daemons a desktop has. One module per class of
//! the issues; every case asserts effects only (see
//! tests/support/escape_fixture.rs) and lists each route that escaped.
//!
//! Run: `cargo test --test escapes` (`-- --nocapture` shows the cases).

#[path = "../support/escape_daemons.rs"]
mod escape_daemons;
#[path = "../support/escape_fixture.rs"]
mod escape_fixture;
#[path = "../support/fixture_base.rs"]
mod fixture_base;
#[path = "../support/mock_model.rs"]
mod mock_model;
#[path = "../support/pty.rs"]
mod pty;

mod c0_control;
mod c10_walker;
mod c11_keys;
mod c12_hooks;
mod c13_gitstate;
mod c14_unwatched;
mod c15_other_tools;
mod c16_wide_read;
mod c17_project_env;
mod c18_lsp;
mod c19_nested;
mod c1_helpers;
mod c20_git_config;
mod c21_review5;
mod c22_own_path;
mod c23_outside_server;
mod c24_account_home;
mod c2_terminal;
mod c3_sockets;
mod c4_persistence;
mod c5_credentials;
mod c6_network;
mod c7_smaller;
mod c8_review;
mod c9_control;

use serde_json::json;

use mock_model::Reply;

/// A `bash` tool call.
pub fn bash(id: &str, command: &str) -> Reply {
    Reply::tool(id, "bash", json!({ "command": command }))
}

/// A model that starts `command` as a background job, then thinks for
/// `idle` (streaming nothing but keep-alives) before it answers: no call of
/// the session runs while the job does its work.
pub fn job_then_idle(command: &str, idle: std::time::Duration) -> Vec<mock_model::Reply> {
    use mock_model::Reply;
    vec![
        Reply::tool(
            "j1",
            "bash",
            json!({"command": command, "run_in_background": true}),
        ),
        Reply::text("Done.")
            .stall_before(0, idle)
            .keep_alive(std::time::Duration::from_millis(500)),
        Reply::text("Task"),
    ]
}

/// A script put into the workspace by a shell here-document (smart mode
/// runs that unasked, where a `write` asks): how the attacker hides what a
/// later `sh script` does from the gate.
pub fn put(id: &str, path: &str, content: &str) -> Reply {
    bash(id, &put_command(path, content))
}

pub fn put_command(path: &str, content: &str) -> String {
    format!("cat > {path} <<'CAIRN_EOF'\n{content}\nCAIRN_EOF")
}

/// The shell lines that find cairn's own pid from inside a command.
pub const FIND_CAIRN: &str = r#"C=$$
while [ "$C" -gt 1 ]; do
  [ "$(cat /proc/$C/comm 2>/dev/null)" = cairn ] && break
  C=$(awk '/^PPid/ {print $2}' /proc/$C/status 2>/dev/null || echo 1)
done
"#;
