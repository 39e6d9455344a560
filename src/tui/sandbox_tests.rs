//! The sandbox in the interface: the status line (red when off), `/sandbox`,
//! the tool pane, and the dialog's "without the sandbox" choice.

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::json;

use crate::protocol::{AgentCommand, AgentEvent, ToolStatus};
use crate::protocol::{Decision, PermissionRequest};
use crate::sandbox::Stop;
use crate::tools::{Preview, ToolDisplay};
use crate::tui::cmd::Cmd;
use crate::tui::model::Model;
use crate::tui::sandbox_view::SandboxView;
use crate::tui::test_support::*;
use crate::tui::update::update;
use crate::tui::view::view;

fn draw(m: &mut Model) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(120, 30)).unwrap();
    t.draw(|f| view(m, f)).unwrap();
    t
}

fn screen(m: &mut Model) -> String {
    draw(m).backend().to_string()
}

fn reply(cmds: &[Cmd]) -> Option<Decision> {
    cmds.iter().find_map(|c| match c {
        Cmd::Send(AgentCommand::PermissionReply { decision, .. }) => Some(decision.clone()),
        _ => None,
    })
}

fn ask(m: &mut Model, id: u64, sandbox: Option<&str>) {
    let request = PermissionRequest {
        formatting: None,
        tool: "bash".into(),
        summary: "curl example.com".into(),
        reasons: vec!["`curl` uses the network, which the sandbox keeps off".into()],
        preview: Some(Preview::Command {
            command: "curl example.com".into(),
            cwd: ".".into(),
            commands: vec![vec!["curl".into(), "example.com".into()]],
            redirects: vec![],
        }),
        rules: vec!["bash(curl*)".into()],
        sandbox: sandbox.map(String::from),
    };
    agent(m, AgentEvent::PermissionRequested { id, request });
}

#[test]
fn the_status_line_shows_the_sandbox_and_red_when_off() {
    let mut m = model();
    m.sandbox = SandboxView {
        label: "sandbox: workspace-write, network off".into(),
        off: false,
        report: String::new(),
    };
    assert!(screen(&mut m).contains("sandbox: workspace-write, network off"));
    m.sandbox = SandboxView {
        label: "sandbox off".into(),
        off: true,
        report: String::new(),
    };
    let t = draw(&mut m);
    let text = t.backend().to_string();
    let row = text
        .lines()
        .position(|l| l.contains("sandbox off"))
        .expect("shown");
    let col = text.lines().nth(row).unwrap().find("sandbox off").unwrap();
    let col = text.lines().nth(row).unwrap()[..col].chars().count();
    let cell = &t.backend().buffer()[(col as u16, row as u16)];
    assert_eq!(cell.fg, Color::Red);
}

#[test]
fn slash_sandbox_shows_the_report() {
    let mut m = model();
    m.sandbox.report = "mode: workspace-write\nenforcement: Landlock ABI 7\n".into();
    type_text(&mut m, "/sandbox");
    update(&mut m, key(KeyCode::Enter));
    let s = screen(&mut m);
    assert!(s.contains("enforcement: Landlock ABI 7"), "{s}");
}

#[test]
fn the_tool_pane_shows_the_policy_and_what_the_sandbox_stopped() {
    let mut m = model();
    agent(
        &mut m,
        AgentEvent::ToolCallStarted {
            call_id: "c1".into(),
            name: "bash".into(),
            input: json!({"command": "curl x"}),
            summary: "bash curl x".into(),
        },
    );
    agent(
        &mut m,
        AgentEvent::ToolCallFinished {
            call_id: "c1".into(),
            status: ToolStatus::Failed,
            output: "stopped by the sandbox: the network is off".into(),
            display: Some(ToolDisplay::Command {
                sandbox: "sandbox: workspace-write, network off".into(),
                stopped: Some(Stop::Network),
                cwd: None,
                exit_code: Some(1),
            }),
        },
    );
    let s = screen(&mut m);
    assert!(s.contains("  sandbox: workspace-write, network off"), "{s}");
    assert!(
        s.contains("the sandbox stopped it: the network is off"),
        "{s}"
    );
}

#[test]
fn the_dialog_offers_running_without_the_sandbox_only_where_one_applies() {
    let mut m = model();
    ask(&mut m, 1, Some("sandbox: workspace-write, network off"));
    let s = screen(&mut m);
    assert!(s.contains("sandbox: workspace-write, network off"), "{s}");
    assert!(s.contains("Allow once without the sandbox"), "{s}");
    let cmds = update(&mut m, key(KeyCode::Char('u')));
    assert_eq!(reply(&cmds), Some(Decision::AllowUnsandboxed));

    ask(&mut m, 2, None);
    assert!(!screen(&mut m).contains("without the sandbox"));
    let cmds = update(&mut m, key(KeyCode::Char('u')));
    assert_eq!(reply(&cmds), None);
    assert_eq!(m.modals.permissions.len(), 1);
}
