//! The full-screen binary with MCP servers, in a pseudo-terminal: the status
//! line and notices while a server starts and then fails, a prompt that
//! waits for it, and the approval dialog of an MCP call with its full
//! arguments.
//!
//! Also `cairn acp` with the same server: its questions reach an editor as
//! options, or are declined at once.
//!
//! Like tests/mcp_manager.rs this binary has its own `main`: started with
//! `CAIRN_TEST_MCP_SERVE=1` it is the test MCP server.

#[path = "support/mcp_acp.rs"]
mod mcp_acp;
#[path = "support/mcp_server.rs"]
mod mcp_server;
#[path = "support/mock_model.rs"]
mod mock_model;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/test_home.rs"]
mod test_home;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::json;
use test_home::TestHome;

const SERVE_ENV: &str = "CAIRN_TEST_MCP_SERVE";

fn main() {
    if std::env::var_os(SERVE_ENV).is_some() {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(mcp_server::serve_stdio());
        return;
    }
    let all: &[(&str, fn())] = &[
        (
            "the_status_line_shows_a_server_starting_then_failing",
            the_status_line_shows_a_server_starting_then_failing,
        ),
        (
            "the_dialog_shows_the_whole_call_and_always_offers_the_tool",
            the_dialog_shows_the_whole_call_and_always_offers_the_tool,
        ),
        (
            "a_servers_request_for_input_is_a_form",
            a_servers_request_for_input_is_a_form,
        ),
        (
            "a_servers_request_to_open_a_page_shows_it_and_opens_it",
            a_servers_request_to_open_a_page_shows_it_and_opens_it,
        ),
        ("a_prompt_is_a_slash_command", a_prompt_is_a_slash_command),
        (
            "a_multiple_choice_answers_with_an_array",
            a_multiple_choice_answers_with_an_array,
        ),
        (
            "a_resource_is_attached_from_the_at_picker",
            a_resource_is_attached_from_the_at_picker,
        ),
        (
            "undo_restores_a_file_an_mcp_server_wrote",
            undo_restores_a_file_an_mcp_server_wrote,
        ),
        (
            "in_an_editor_a_choice_is_asked_and_a_form_declined",
            mcp_acp::in_an_editor_a_choice_is_asked_and_a_form_declined,
        ),
    ];
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if std::env::args().any(|a| a == "--list") {
        for (name, _) in all {
            println!("{name}: test");
        }
        return;
    }
    let mut failed = Vec::new();
    for (name, test) in all {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        match std::panic::catch_unwind(test) {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed.push(*name);
            }
        }
    }
    if !failed.is_empty() {
        println!("failures: {}", failed.join(", "));
        std::process::exit(1);
    }
}

fn test_server(name: &str, extra: &str) -> String {
    let exe = std::env::current_exe().expect("own path");
    format!(
        "[mcp.{name}]\ncommand = {:?}\nenv = {{ {SERVE_ENV} = \"1\" }}\n{extra}\n",
        exe.display().to_string()
    )
}

/// Starts the scripted model on its own runtime (the pty waits block).
fn model(replies: Vec<Reply>) -> (tokio::runtime::Runtime, MockModel) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mock = rt.block_on(MockModel::start(Format::Anthropic, replies));
    (rt, mock)
}

fn start(config: &str, mock: &MockModel, rows: u16, cols: u16) -> (TestHome, PtyApp) {
    start_with(config, mock, rows, cols, &[])
}

fn start_with(
    config: &str,
    mock: &MockModel,
    rows: u16,
    cols: u16,
    extra: &[(String, String)],
) -> (TestHome, PtyApp) {
    let home = TestHome::new();
    let dir = home.home.path().join("config").join("cairn");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), config).expect("config");
    let mut vars = home.vars(&mock.url());
    vars.extend_from_slice(extra);
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &vars,
        home.project.path(),
        rows,
        cols,
    );
    app.wait_for_text("Ask cairn");
    (home, app)
}

fn quit(mut app: PtyApp) {
    app.ctrl_c_to_quit();
    assert!(
        app.wait_exit(Duration::from_secs(10)).is_some(),
        "cairn did not quit"
    );
}

fn the_status_line_shows_a_server_starting_then_failing() {
    let config = format!(
        "{}[mcp.slow]\ncommand = \"sleep\"\nargs = [\"60\"]\nstartup_timeout_secs = 4\n",
        test_server("test", "")
    );
    let (_rt, mock) = model(vec![Reply::text("Answered after the wait.")]);
    let (_home, mut app) = start(&config, &mock, 30, 120);
    app.wait_for("one server up, one starting", |s| s.contains("mcp 1/2 …"));
    app.type_text("hello");
    app.send(b"\r");
    app.wait_for_text("Waiting for MCP server `slow` to start");
    let screen = app.wait_for_text("Answered after the wait.");
    assert!(
        screen.contains("`slow` could not start") && screen.contains("within 4 s"),
        "the failure is a notice in the transcript:\n{screen}"
    );
    assert!(
        screen.contains("mcp 1/2") && !screen.contains("mcp 1/2 …"),
        "{screen}"
    );
    let tools: Vec<String> = mock.requests()[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    assert!(tools.contains(&"mcp__test__echo".to_string()), "{tools:?}");
    quit(app);
}

fn a_servers_request_for_input_is_a_form() {
    let (_rt, mock) = model(vec![
        Reply::tool("a1", "mcp__test__ask", json!({})),
        Reply::text("Thanks for answering."),
        Reply::text("Asked"),
    ]);
    let (_home, mut app) = start(&test_server("test", "trusted = true"), &mock, 30, 110);
    app.type_text("ask me");
    app.send(b"\r");
    let form = app.wait_for("the form", |s| s.contains("Who is asking?"));
    assert!(form.contains("MCP server `test` asks"), "{form}");
    // The fields in the order the server sent them.
    let at = |label: &str| {
        form.find(label)
            .unwrap_or_else(|| panic!("{label}: {form}"))
    };
    assert!(
        at("Your name*:") < at("mood:") && at("mood:") < at("count:"),
        "{form}"
    );
    // A titled choice shows its titles, never its ids.
    assert!(
        form.contains("Ada Lovelace") && form.contains("Grace Hopper") && !form.contains("hero-1"),
        "{form}"
    );
    // Sending without the required name says so and keeps the form.
    app.send(b"\r");
    app.wait_for_text("Your name is required");
    app.type_text("Ada");
    app.send(b"\t");
    app.type_text("calm");
    app.send(b"\t");
    app.type_text("3");
    app.send(b"\r");
    app.wait_for_text("Thanks for answering.");
    let result = mock.requests()[1]["messages"].to_string();
    assert!(
        result.contains("answer: Accept")
            && result.contains(r#"\"name\":\"Ada\""#)
            && result.contains(r#"\"mood\":\"calm\""#)
            && result.contains(r#"\"count\":3"#)
            && result.contains(r#"\"hero\":\"hero-1\""#),
        "{result}"
    );
    quit(app);
}

fn a_multiple_choice_answers_with_an_array() {
    let (_rt, mock) = model(vec![
        Reply::tool("a1", "mcp__test__ask", json!({"many": true})),
        Reply::text("Noted your instruments."),
        Reply::text("Asked"),
    ]);
    let (_home, mut app) = start(&test_server("test", "trusted = true"), &mock, 30, 120);
    app.type_text("ask me");
    app.send(b"\r");
    let form = app.wait_for("the form", |s| s.contains("Instruments*:"));
    assert!(
        form.contains("‹[ ] Guitar›  [ ] Piano  [ ] Drums") && !form.contains("gtr"),
        "{form}"
    );
    // None picked: the form says at least one is needed.
    app.send(b"\r");
    app.wait_for_text("Instruments is required");
    app.send(b" ");
    app.send(b"\x1b[C");
    app.send(b"\x1b[C");
    app.send(b" ");
    app.wait_for_text("[x] Guitar  [ ] Piano  ‹[x] Drums›");
    app.send(b"\t");
    app.send(b"\x1b[C");
    app.send(b" ");
    app.wait_for_text("[ ] jazz  ‹[x] rock›");
    app.send(b"\r");
    app.wait_for_text("Noted your instruments.");
    let result = mock.requests()[1]["messages"].to_string();
    assert!(
        result.contains("answer: Accept")
            && result.contains(r#"\"instruments\":[\"gtr\",\"drm\"]"#)
            && result.contains(r#"\"genres\":[\"rock\"]"#),
        "{result}"
    );
    quit(app);
}

fn a_servers_request_to_open_a_page_shows_it_and_opens_it() {
    let page = "https://example.com/verify?id=7";
    let (_rt, mock) = model(vec![
        Reply::tool("u1", "mcp__test__ask", json!({"url": page})),
        Reply::text("Opened."),
        Reply::text("Page"),
    ]);
    let scratch = tempfile::tempdir().expect("tempdir");
    let opened = scratch.path().join("opened");
    let browser = scratch.path().join("browser.sh");
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$1\" > '{}'\n",
        opened.display()
    );
    std::fs::write(&browser, script).expect("script");
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let extra = [("CAIRN_BROWSER".to_string(), browser.display().to_string())];
    let config = test_server("test", "trusted = true");
    let (_home, mut app) = start_with(&config, &mock, 30, 110, &extra);
    app.type_text("open it");
    app.send(b"\r");
    let dialog = app.wait_for("the page dialog", |s| s.contains("open a web page"));
    assert!(
        dialog.contains("Confirm your account on the web."),
        "{dialog}"
    );
    assert!(dialog.contains(&format!("address: {page}")), "{dialog}");
    assert!(dialog.contains("site:    example.com"), "{dialog}");
    assert!(!opened.exists(), "nothing opens before the person agrees");
    app.send(b"\r");
    app.wait_for_text("Opened.");
    let result = mock.requests()[1]["messages"].to_string();
    assert!(result.contains("answer: Accept"), "{result}");
    let got = std::fs::read_to_string(&opened).expect("the browser was asked");
    assert_eq!(got.trim(), page);
    quit(app);
}

fn a_resource_is_attached_from_the_at_picker() {
    let (_rt, mock) = model(vec![Reply::text("Summarised."), Reply::text("Notes")]);
    let (_home, mut app) = start(&test_server("test", ""), &mock, 30, 110);
    app.wait_for("the server up", |s| {
        s.contains("mcp 1/1") && !s.contains("mcp 1/1 …")
    });
    app.send(b"@");
    let picker = app.wait_for_text("mcp:test:cairn-test://notes");
    assert!(picker.contains("Files (@)"), "{picker}");
    app.type_text("notes");
    std::thread::sleep(Duration::from_millis(200));
    app.send(b"\r");
    app.wait_for_text("@mcp:test:cairn-test://notes");
    app.type_text("summarise this");
    app.send(b"\r");
    app.wait_for_text("Summarised.");
    let sent = mock.requests()[0]["messages"].to_string();
    assert!(sent.contains(mcp_server::RESOURCE_TEXT), "{sent}");
    quit(app);
}

fn a_prompt_is_a_slash_command() {
    let (_rt, mock) = model(vec![
        Reply::text("Hello there, Ada."),
        Reply::text("Greeting"),
    ]);
    let (_home, mut app) = start(&test_server("test", ""), &mock, 30, 120);
    app.wait_for("the server up", |s| {
        s.contains("mcp 1/1") && !s.contains("mcp 1/1 …")
    });
    app.type_text("/mcp");
    app.send(b"\r");
    // The `/` menu shows the prompt too: wait for the panel's own text.
    app.wait_for_text("Restart one with /mcp restart");
    let panel = app.wait_for_text("/mcp__test__greet <name> [mood]");
    assert!(panel.contains("Greets someone."), "{panel}");
    app.send(b"\x1b");
    // A key right after Esc would read as Alt+key.
    std::thread::sleep(Duration::from_millis(300));
    app.wait_for("the panel closed", |s| !s.contains("Greets someone."));
    // `/prompts` lists them too.
    app.type_text("/prompts");
    app.send(b"\r");
    let panel = app.wait_for_text("Type one to send it");
    assert!(
        panel.contains("/mcp__test__greet <name> [mood]") && panel.contains("Greets someone."),
        "{panel}"
    );
    app.send(b"\x1b");
    std::thread::sleep(Duration::from_millis(300));
    app.wait_for("the panel closed", |s| !s.contains("Greets someone."));
    // The `/` menu offers it with its arguments; Enter fills in the name.
    app.type_text("/mcp__test__g");
    let menu = app.wait_for_text("Greets someone.");
    assert!(menu.contains("/mcp__test__greet <name> [mood]"), "{menu}");
    app.send(b"\r");
    app.wait_for_text("/mcp__test__greet ");
    app.type_text("name=Ada mood=briskly");
    app.send(b"\r");
    let screen = app.wait_for_text("Hello there, Ada.");
    assert!(screen.contains("Say hello to Ada, briskly."), "{screen}");
    let sent = mock.requests()[0]["messages"].to_string();
    assert!(sent.contains("Say hello to Ada, briskly."), "{sent}");
    quit(app);
}

const FILESYSTEM: &str = "@modelcontextprotocol/server-filesystem";

/// Whether `npx` can run `package` (fetching it if need be); `Err` is the
/// reason to skip.
fn npx_package(package: &str) -> Result<(), String> {
    let out = std::process::Command::new("npx")
        .args(["-y", "--package", package, "-c", "true"])
        .env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("npx could not be run ({e})"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("npx could not fetch {package} ({})", out.status))
    }
}

/// npm's cache directory for the person running the tests.
fn npm_cache() -> String {
    std::process::Command::new("npm")
        .args(["config", "get", "cache"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| format!("{}/.npm", std::env::var("HOME").unwrap_or_default()))
}

fn undo_restores_a_file_an_mcp_server_wrote() {
    if let Err(why) = npx_package(FILESYSTEM) {
        eprintln!("skipped: {why}");
        return;
    }
    let home = TestHome::new();
    let project = home.project.path().canonicalize().expect("project path");
    let target = project.join("notes.txt");
    std::fs::write(&target, "the original notes\n").expect("notes");
    // The test's home is empty; npx takes the package from the cache
    // npx_package just filled instead of downloading it again.
    let config = format!(
        "[mcp.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"{FILESYSTEM}\", {:?}]\n\
         env = {{ npm_config_cache = {:?}, NPM_CONFIG_UPDATE_NOTIFIER = \"false\" }}\n\
         trusted = true\nstartup_timeout_secs = 120\n",
        project.display().to_string(),
        npm_cache()
    );
    let (_rt, mock) = model(vec![
        Reply::tool(
            "w1",
            "mcp__fs__write_file",
            json!({"path": target.display().to_string(), "content": "written by the server\n"}),
        ),
        Reply::text("Wrote the notes."),
        Reply::text("Notes"),
    ]);
    let dir = home.home.path().join("config").join("cairn");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), config).expect("config");
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(&mock.url()),
        home.project.path(),
        30,
        120,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("rewrite the notes");
    app.send(b"\r");
    app.wait_for_text("Wrote the notes.");
    assert_eq!(
        std::fs::read_to_string(&target).expect("notes"),
        "written by the server\n",
        "{}",
        mock.requests()[1]
    );
    app.type_text("/undo");
    app.send(b"\r");
    let confirm = app.wait_for_text("Undo the file changes");
    assert!(confirm.contains("notes.txt"), "{confirm}");
    app.send(b"y");
    app.wait_for_text("Undone: restored");
    assert_eq!(
        std::fs::read_to_string(&target).expect("notes"),
        "the original notes\n"
    );
    quit(app);
}

fn the_dialog_shows_the_whole_call_and_always_offers_the_tool() {
    let body: Vec<String> = (1..=40).map(|i| format!("line {i} of the file")).collect();
    let long = format!(
        "{} END-OF-LONG",
        "a long sentence that keeps going ".repeat(6)
    );
    let (_rt, mock) = model(vec![
        Reply::tool(
            "c1",
            "mcp__test__echo",
            // Shown in the order the model wrote them.
            json!({"note": long, "text": body.join("\n")}),
        ),
        Reply::text("Echoed it."),
    ]);
    let (_home, mut app) = start(&test_server("test", ""), &mock, 40, 100);
    app.type_text("echo the file");
    app.send(b"\r");
    let dialog = app.wait_for("the MCP dialog", |s| {
        s.contains("Allow once") && s.contains("MCP server test · tool echo")
    });
    assert!(dialog.contains("Echoes the text back."), "{dialog}");
    assert!(
        dialog.contains("server's hints: read-only"),
        "the hint is shown, and did not stop the dialog:\n{dialog}"
    );
    assert!(
        dialog.contains("END-OF-LONG"),
        "long strings are whole:\n{dialog}"
    );
    assert!(dialog.contains("text: (40 lines)"), "{dialog}");
    assert!(dialog.contains("│ line 1 of the file"), "{dialog}");
    assert!(
        dialog.contains("Allow always: mcp__test__echo"),
        "Always offers the tool by name:\n{dialog}"
    );
    // The rest of the arguments are a scroll away.
    for _ in 0..6 {
        app.send(b"\x1b[6~");
    }
    app.wait_for("the last line after scrolling", |s| {
        s.contains("│ line 40 of the file")
    });
    app.send(b"a");
    app.wait_for_text("Echoed it.");
    let result = mock.requests()[1]["messages"].to_string();
    assert!(result.contains("line 40 of the file"), "{result}");
    quit(app);
}
