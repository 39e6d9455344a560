//! Every integration test of cairn but the hostile suite (tests/escapes) and
//! the three MCP tests that serve as their own MCP server (harness = false),
//! in one binary: one link instead of one per file, and the support modules
//! compiled once. Each file in tests/ is a module here; run one with
//! `cargo test --test suite hooks::`. `every_test_file_is_compiled` below
//! fails when a file in tests/ is neither a module here nor a target of its
//! own in Cargo.toml.

#[path = "support/fixture_base.rs"]
mod fixture_base;
#[path = "support/mcp_server.rs"]
#[allow(dead_code)] // the stdio half serves the separate MCP test binaries
mod mcp_server;
#[path = "support/mock_model.rs"]
mod mock_model;
#[path = "support/oauth_server.rs"]
mod oauth_server;
#[path = "support/provider_harness.rs"]
mod provider_harness;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/store_child.rs"]
mod store_child;
#[path = "support/test_home.rs"]
mod test_home;

mod acp_commands;
mod acp_mcp;
mod acp_rust_client;
mod acp_sdk;
mod acp_sessions;
mod acp_terminals;
mod agents_trust;
mod bounds;
mod ci_example;
mod cli_conventions;
mod cli_providers;
mod cli_run;
mod cli_stream_json;
mod cloud_credentials;
mod compaction_resume;
mod compaction_tui;
mod custom_commands;
mod faults_cancel_io;
mod faults_cli;
mod faults_files;
mod faults_sessions;
mod faults_store;
mod faults_tui;
mod format_run;
mod format_tui;
mod gate_front_door;
mod hooks;
mod layers;
mod local_models;
mod lsp_run;
mod lsp_tui;
mod mcp_everything;
mod mcp_oauth;
mod media_run;
mod media_search;
mod media_tui;
mod mentions_hostile;
mod permission_flow;
mod plan_mode;
mod project_memory;
mod provider_bedrock;
mod provider_models;
mod provider_native;
mod provider_responses;
mod provider_streams;
mod provider_vertex;
mod providers;
mod sandbox_classes;
mod sandbox_cli;
mod sandbox_e2e;
mod search_native;
mod session_settings;
mod signals_tui;
mod skills;
mod store;
mod subagents;
mod subagents_tui;
mod subagents_undo;
mod trust_boundaries;
mod tui_diff;
mod tui_e2e;
mod tui_errors;
mod tui_export;
mod tui_flush;
mod tui_jobs;
mod tui_markdown;
mod tui_panes;
mod tui_prompt;
mod tui_review;
mod tui_sessions;
mod tui_setup;
mod tui_terminal;
mod tui_workday;

/// A test file that is neither a module of this binary nor a `[[test]]` of
/// its own would never be compiled (the package sets `autotests = false`).
#[test]
fn every_test_file_is_compiled() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let suite = include_str!("suite.rs");
    let entries = std::fs::read_dir(root.join("tests")).expect("tests/");
    let mut missing = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let own_target = format!(
            "path = \"tests/{}\"",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        let dir_target = format!("path = \"tests/{stem}/main.rs\"");
        let listed = if path.is_dir() {
            !path.join("main.rs").exists() || manifest.contains(&dir_target)
        } else if path.extension().is_some_and(|e| e == "rs") {
            stem == "suite"
                || suite.contains(&format!("\nmod {stem};\n"))
                || manifest.contains(&own_target)
        } else {
            true
        };
        if !listed {
            missing.push(path.display().to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "test files that nothing compiles: {missing:?}; add `mod NAME;` to tests/suite.rs"
    );
}
