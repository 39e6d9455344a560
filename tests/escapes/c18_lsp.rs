//! Language servers (third hostile review): a server was looked up on the
//! whole `PATH`, so an absolute entry inside the workspace (a project's
//! `node_modules/.bin` that the person put on their `PATH`, or a venv's
//! `bin`) made the repository's own script the "language server" — and
//! with the sandbox off it ran unconfined the first time the model opened
//! a file, in a project nobody trusted. `PATH` entries inside the
//! workspace are now dropped for servers (and for their `#!` lookups), and
//! with the sandbox off an untrusted project's server does not start.

use serde_json::json;

use crate::escape_fixture::{Fixture, assert_contained};
use crate::mock_model::{Format, MockModel, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_from_the_workspaces_path_never_runs_unconfined() {
    let mut f = Fixture::new();
    let mark = f.base.join("lsp-ran");
    let bin = f.ws.join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("pyright-langserver");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\ntouch {}\nsleep 3\n", mark.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    f.write_ws("app.py", "x = 1\n");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    f.set_env("PATH", &path);
    f.write_home(".config/cairn/config.toml", "[sandbox]\nmode = \"off\"\n");
    let mock = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![
            Reply::tool("v1", "view", json!({ "file_path": "app.py" })),
            Reply::tool(
                "l1",
                "lsp",
                json!({ "operation": "diagnostics", "file_path": "app.py" }),
            ),
        ]),
    )
    .await;
    f.run(&mock, "smart").await;
    let mut escapes = Vec::new();
    if mark.exists() {
        escapes.push("the workspace's script ran as the language server".into());
    }
    assert_contained("language servers from the workspace", &escapes);
}
