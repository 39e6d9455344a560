//! The prompt line as a command line, through `update`.

use crossterm::event::KeyCode;

use crate::config::Mode;
use crate::protocol::AgentCommand;
use crate::tui::cmd::Cmd;
use crate::tui::model::Overlay;
use crate::tui::test_support::*;
use crate::tui::update::update;

fn enter(m: &mut crate::tui::model::Model, text: &str) -> Vec<Cmd> {
    type_text(m, text);
    update(m, key(KeyCode::Enter))
}

fn top_panel(m: &crate::tui::model::Model) -> Option<&'static str> {
    match m.modals.overlays.last() {
        Some(Overlay::Panel(p)) => Some(p.name()),
        _ => None,
    }
}

#[test]
fn a_typed_command_runs_with_its_arguments() {
    let mut m = model();
    m.session = Some(crate::sessions::SessionId::from("s1"));
    let cmds = enter(&mut m, "/rename Calculator fixes");
    assert_eq!(m.title.as_deref(), Some("Calculator fixes"));
    assert!(cmds.contains(&Cmd::Send(AgentCommand::SetTitle(
        "Calculator fixes".into()
    ))));
    assert!(m.input.is_empty());

    let cmds = enter(&mut m, "/model gpt-4.1");
    assert_eq!(
        cmds,
        vec![Cmd::Send(AgentCommand::SetModel {
            provider: None,
            model: "gpt-4.1".into()
        })]
    );
    let cmds = enter(&mut m, "/compact keep names");
    assert_eq!(
        cmds,
        vec![Cmd::Send(AgentCommand::Compact {
            focus: Some("keep names".into())
        })]
    );
    assert_eq!(
        enter(&mut m, "/mcp restart demo"),
        vec![Cmd::RestartMcp("demo".into())]
    );
    assert_eq!(
        enter(&mut m, "/mode auto"),
        vec![Cmd::Send(AgentCommand::SetMode(Mode::Auto))]
    );
}

#[test]
fn mode_opens_the_mode_picker_not_the_model_one() {
    let mut m = model();
    enter(&mut m, "/mode");
    assert_eq!(top_panel(&m), Some("modes"));
    // In the palette too, the exact name ranks first.
    let mut m = model();
    update(&mut m, ctrl('p'));
    assert_eq!(top_panel(&m), Some("commands"));
    type_text(&mut m, "mode");
    update(&mut m, key(KeyCode::Enter));
    assert_eq!(top_panel(&m), Some("modes"));
}

#[test]
fn a_slash_naming_no_command_is_sent_as_a_prompt() {
    let mut m = model();
    let text = "/usr/bin/python3 is missing, why?";
    let cmds = enter(&mut m, text);
    assert_eq!(
        cmds[0],
        Cmd::Send(AgentCommand::Submit {
            text: text.into(),
            images: Vec::new()
        })
    );
}

#[test]
fn a_bad_argument_keeps_the_line_to_fix() {
    let mut m = model();
    assert!(enter(&mut m, "/mode yolo").is_empty());
    assert_eq!(m.input.text(), "/mode yolo");
    assert!(m.flash.as_ref().is_some_and(|f| f.0.contains("not a mode")));
}

#[test]
fn tab_completes_names_and_arguments_and_arrows_choose() {
    let mut m = model();
    type_text(&mut m, "/the");
    update(&mut m, key(KeyCode::Tab));
    assert_eq!(m.input.text(), "/theme ");
    type_text(&mut m, "li");
    update(&mut m, key(KeyCode::Tab));
    assert_eq!(m.input.text(), "/theme light");

    let mut m = model();
    m.mcp_servers = vec!["demo".into(), "docs".into()];
    type_text(&mut m, "/mcp restart d");
    update(&mut m, key(KeyCode::Down));
    update(&mut m, key(KeyCode::Tab));
    assert_eq!(m.input.text(), "/mcp restart docs");

    let mut m = model();
    type_text(&mut m, "/ren");
    update(&mut m, key(KeyCode::Enter));
    assert_eq!(
        m.input.text(),
        "/rename ",
        "a command needing text waits for it"
    );
    // Esc closes the menu and keeps the text; Tab then moves focus.
    let mut m = model();
    type_text(&mut m, "/mo");
    update(&mut m, key(KeyCode::Esc));
    assert_eq!(m.input.text(), "/mo");
    assert!(crate::tui::slash::menu(&m).is_none());
}

#[test]
fn the_menu_is_drawn_over_the_transcript_above_the_prompt() {
    let mut m = model();
    type_text(&mut m, "/mo");
    let screen = draw_text(&mut m, 80, 24);
    let model_row = screen.lines().position(|l| l.contains("/model [id]"));
    let mode_row = screen.lines().position(|l| l.contains("/mode [mode]"));
    assert!(model_row.is_some() && mode_row > model_row, "{screen}");
    assert!(screen.contains("/mouse"), "{screen}");
    // Neither a file name after `@` in an address nor a path opens anything.
    let mut m = model();
    type_text(&mut m, "me@example.com");
    assert_eq!(m.input.text(), "me@example.com");
}

#[test]
fn an_at_typed_fast_is_kept_and_the_picker_completes_the_word() {
    let mut m = model();
    type_text(&mut m, "explain ");
    assert_eq!(
        update(&mut m, key(KeyCode::Char('@'))),
        vec![Cmd::ListFiles]
    );
    type_text(&mut m, "ma");
    assert_eq!(m.input.text(), "explain @ma", "keys before the picker stay");
    let files = vec!["src/main.rs".to_string(), "README.md".to_string()];
    update(&mut m, crate::tui::msg::Msg::Files(files.clone()));
    assert_eq!(top_panel(&m), Some("files"));
    update(&mut m, key(KeyCode::Enter));
    assert_eq!(m.input.text(), "explain @src/main.rs ");

    // A word finished before the list arrived needs no picker.
    let mut m = model();
    type_text(&mut m, "@notes.md ");
    update(&mut m, crate::tui::msg::Msg::Files(files.clone()));
    assert_eq!(top_panel(&m), None);
    // Esc in the picker keeps what was typed.
    let mut m = model();
    type_text(&mut m, "@");
    update(&mut m, crate::tui::msg::Msg::Files(files));
    type_text(&mut m, "zz");
    update(&mut m, key(KeyCode::Esc));
    assert_eq!(m.input.text(), "@zz");
}

#[test]
fn resume_completes_session_titles_and_resumes_by_title() {
    use crate::protocol::{SessionEntry, SessionReply, SessionRequest};
    use crate::sessions::SessionId;
    let mut m = model();
    type_text(&mut m, "/resume");
    let asked = update(&mut m, key(KeyCode::Char(' ')));
    assert!(matches!(
        asked.as_slice(),
        [Cmd::Session(SessionRequest::Query { .. })]
    ));
    let entry = |id: &str, title: &str| SessionEntry {
        id: SessionId::from(id),
        title: title.into(),
        updated_at: 0,
        message_count: 2,
        first_prompt: "add two numbers".into(),
        project: "/work/project".into(),
        snippet: None,
        subagent_of: None,
    };
    let reply = SessionReply::Sessions {
        query: String::new(),
        entries: vec![entry("s1", "Calculator fixes"), entry("s2", "")],
        offset: 0,
    };
    update(&mut m, crate::tui::msg::Msg::Session(reply));
    type_text(&mut m, "cal");
    update(&mut m, key(KeyCode::Tab));
    assert_eq!(m.input.text(), "/resume Calculator fixes");
    assert_eq!(
        update(&mut m, key(KeyCode::Enter)),
        vec![Cmd::Session(SessionRequest::Resume(SessionId::from("s1")))]
    );
    // An untitled session completes by its first prompt.
    type_text(&mut m, "/resume add");
    update(&mut m, key(KeyCode::Tab));
    assert_eq!(m.input.text(), "/resume add two numbers");
}

#[test]
fn ctrl_c_cancels_a_servers_question_before_anything_else() {
    use crate::tools::input::{InputAnswer, InputRequest};
    let mut m = model();
    let request = InputRequest {
        source: "MCP server `demo`".into(),
        message: "Which?".into(),
        fields: Vec::new(),
        url: None,
    };
    agent(
        &mut m,
        crate::protocol::AgentEvent::InputRequested { id: 7, request },
    );
    assert_eq!(
        update(&mut m, ctrl('c')),
        vec![Cmd::Send(AgentCommand::InputReply {
            id: 7,
            answer: InputAnswer::Cancel
        })]
    );
    assert!(m.modals.forms.is_empty() && m.last_interrupt.is_none());
}
