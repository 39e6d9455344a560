//! The real `cairn` binary with MCP servers: `cairn run` waits for them and
//! offers their tools, names a server that failed, sees a tool list that
//! changed mid-turn; `cairn mcp list / add / get / remove`.
//!
//! Like tests/mcp_manager.rs this binary has its own `main`: started with
//! `CAIRN_TEST_MCP_SERVE=1` it is the test MCP server
//! (tests/support/mcp_server.rs), which the configs below point at.

#[path = "support/mcp_server.rs"]
mod mcp_server;
#[path = "support/mock_model.rs"]
mod mock_model;
#[path = "support/test_home.rs"]
mod test_home;

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

const SERVE_ENV: &str = "CAIRN_TEST_MCP_SERVE";

type TestFn = fn() -> Pin<Box<dyn Future<Output = ()>>>;

macro_rules! tests {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), || Box::pin($name()) as Pin<Box<dyn Future<Output = ()>>>)),*]
    };
}

fn main() {
    if std::env::var_os(SERVE_ENV).is_some() {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(mcp_server::serve_stdio());
        return;
    }
    let all: &[(&str, TestFn)] = tests!(
        run_waits_for_a_server_and_calls_its_tool,
        sandboxed_servers_start_and_answer,
        run_names_servers_that_failed_and_goes_on,
        a_tool_list_changed_mid_turn_is_offered_next,
        enabled_and_disabled_tools_filter_what_is_offered,
        read_only_hints_count_only_when_the_config_says_so,
        the_model_lists_and_reads_resources,
        an_attached_image_is_an_image_or_a_note,
        a_prompt_command_sends_the_servers_prompt,
        run_declines_a_servers_request_for_input,
        mcp_list_is_bounded_and_fails_when_a_server_does,
        run_stops_its_servers_when_it_ends,
        mcp_add_get_remove_edit_the_user_config,
    );
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
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(test())));
        rt.shutdown_timeout(Duration::from_secs(5));
        match outcome {
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

/// The TOML for a server that is this test binary serving MCP on stdio.
fn test_server(name: &str, extra: &str) -> String {
    let exe = std::env::current_exe().expect("own path");
    format!(
        "[mcp.{name}]\ncommand = {:?}\nenv = {{ {SERVE_ENV} = \"1\" }}\n{extra}\n",
        exe.display().to_string()
    )
}

struct Env {
    home: TestHome,
}

impl Env {
    fn new(config: &str) -> Env {
        let home = TestHome::new();
        let dir = home.home.path().join("config").join("cairn");
        std::fs::create_dir_all(&dir).expect("config dir");
        std::fs::write(dir.join("config.toml"), config).expect("config");
        Env { home }
    }

    fn config_path(&self) -> std::path::PathBuf {
        self.home.home.path().join("config/cairn/config.toml")
    }

    async fn cairn(&self, model_url: &str, args: &[&str]) -> (i32, String, String) {
        let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .current_dir(self.home.project.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.home.vars(model_url))
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(Duration::from_secs(60), out)
            .await
            .expect("cairn finished in time")
            .expect("cairn ran");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect()
}

fn last_result(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

async fn run_waits_for_a_server_and_calls_its_tool() {
    let env = Env::new(&test_server("test", "trusted = true"));
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("c1", "mcp__test__echo", json!({"text": "over stdio"})),
            Reply::tool("c2", "mcp__test__roots", json!({})),
            Reply::text("The server echoed."),
        ],
    )
    .await;
    let (code, stdout, stderr) = env.cairn(&mock.url(), &["run", "echo something"]).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let requests = mock.requests();
    // A title request may follow the turn.
    assert!(requests.len() >= 3, "{stderr}");
    assert!(
        tool_names(&requests[0]).contains(&"mcp__test__echo".to_string()),
        "the first request offers the server's tools: {:?}",
        tool_names(&requests[0])
    );
    assert!(last_result(&requests[1]).contains("echo: over stdio"));
    // The workspace is the client's root.
    let root = env.home.project.path().canonicalize().expect("project");
    let uri = format!("file://{}", root.display());
    assert!(
        last_result(&requests[2]).contains(&uri),
        "{}",
        last_result(&requests[2])
    );
    assert!(stdout.contains("The server echoed."));
}

/// A project's server runs in the sandbox, and so does the person's own
/// with `sandbox = true`; both start, answer, and see the workspace root.
async fn sandboxed_servers_start_and_answer() {
    let env = Env::new(&test_server("mine", "trusted = true\nsandbox = true"));
    let project = env.home.project.path().join(".cairn");
    std::fs::create_dir_all(&project).expect("project config dir");
    std::fs::write(
        project.join("config.toml"),
        test_server("theirs", "trusted = true"),
    )
    .expect("project config");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("c1", "mcp__mine__echo", json!({"text": "from mine"})),
            Reply::tool("c2", "mcp__theirs__echo", json!({"text": "from theirs"})),
            Reply::text("Both answered."),
        ],
    )
    .await;
    let (code, stdout, stderr) = env
        .cairn(&mock.url(), &["run", "--trust-project", "echo twice"])
        .await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(!stderr.contains("could not start"), "{stderr}");
    let requests = mock.requests();
    assert!(requests.len() >= 3, "{stderr}");
    assert!(
        last_result(&requests[1]).contains("echo: from mine"),
        "{stderr}"
    );
    assert!(
        last_result(&requests[2]).contains("echo: from theirs"),
        "{stderr}"
    );
}

async fn run_names_servers_that_failed_and_goes_on() {
    let config = format!(
        "{}{}{}",
        test_server("test", "trusted = true"),
        "[mcp.broken]\ncommand = \"/nonexistent/mcp-server\"\n",
        "[mcp.hang]\ncommand = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_secs = 1\n",
    );
    let env = Env::new(&config);
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("Answered anyway.")]).await;
    let started = Instant::now();
    let (code, stdout, stderr) = env.cairn(&mock.url(), &["run", "hello"]).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the wait is bounded by the server's startup_timeout_secs"
    );
    assert!(stderr.contains("`broken` could not start"), "{stderr}");
    assert!(
        stderr.contains("`hang` could not start") && stderr.contains("within 1 s"),
        "{stderr}"
    );
    assert!(stderr.contains("Waiting for MCP server"), "{stderr}");
    let tools = tool_names(&mock.requests()[0]);
    assert!(tools.contains(&"mcp__test__echo".to_string()), "{tools:?}");
    assert!(
        !tools
            .iter()
            .any(|t| t.contains("hang") || t.contains("broken"))
    );
}

async fn a_tool_list_changed_mid_turn_is_offered_next() {
    let env = Env::new(&test_server("test", "trusted = true"));
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("c1", "mcp__test__add_tool", json!({})),
            Reply::tool("c2", "mcp__test__extra", json!({})),
            Reply::text("Used the new tool."),
        ],
    )
    .await;
    let (code, stdout, stderr) = env.cairn(&mock.url(), &["run", "add a tool"]).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let requests = mock.requests();
    assert!(!tool_names(&requests[0]).contains(&"mcp__test__extra".to_string()));
    assert!(
        tool_names(&requests[1]).contains(&"mcp__test__extra".to_string()),
        "the request right after `list_changed` offers the new tool"
    );
    assert!(last_result(&requests[2]).contains("extra tool here"));
}

async fn enabled_and_disabled_tools_filter_what_is_offered() {
    let config = format!(
        "{}{}",
        test_server("only", "enabled_tools = [\"echo\", \"fail\"]"),
        test_server("but", "disabled_tools = [\"crash\"]"),
    );
    let env = Env::new(&config);
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("ok")]).await;
    let (code, _, stderr) = env.cairn(&mock.url(), &["run", "hi"]).await;
    assert_eq!(code, 0, "{stderr}");
    let tools = tool_names(&mock.requests()[0]);
    let only: Vec<&String> = tools
        .iter()
        .filter(|t| t.starts_with("mcp__only__"))
        .collect();
    assert_eq!(only, ["mcp__only__echo", "mcp__only__fail"]);
    assert!(tools.contains(&"mcp__but__echo".to_string()));
    assert!(!tools.contains(&"mcp__but__crash".to_string()));
}

async fn read_only_hints_count_only_when_the_config_says_so() {
    // `echo` is marked read-only by the server, `fail` is not; `cairn run`
    // cannot ask, so a call that needs asking is not run.
    for (extra, echo_runs) in [("", false), ("trust_read_only_hints = true", true)] {
        let env = Env::new(&test_server("test", extra));
        let mock = MockModel::start(
            Format::Anthropic,
            vec![
                Reply::tool("c1", "mcp__test__echo", json!({"text": "hinted"})).tool_call(
                    "c2",
                    "mcp__test__fail",
                    json!({}),
                ),
                Reply::text("done"),
            ],
        )
        .await;
        let (code, _, stderr) = env.cairn(&mock.url(), &["run", "go"]).await;
        assert_eq!(code, 0, "{stderr}");
        let results = last_result(&mock.requests()[1]);
        assert_eq!(
            results.contains("echo: hinted"),
            echo_runs,
            "{extra}: {results}"
        );
        assert!(!results.contains("something went wrong"), "{results}");
        assert!(results.contains("needs the person's approval"), "{results}");
    }
}

/// Whether `pid` is a live process (a zombie is not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        })
        .unwrap_or(false)
}

async fn run_stops_its_servers_when_it_ends() {
    let pidfile = tempfile::NamedTempFile::new().expect("pid file");
    let extra = format!(
        "trusted = true\n[mcp.test.env]\n{SERVE_ENV} = \"1\"\n{} = {:?}\n",
        mcp_server::PIDFILE_ENV,
        pidfile.path().display().to_string()
    );
    let exe = std::env::current_exe().expect("own path");
    let config = format!(
        "[mcp.test]\ncommand = {:?}\n{extra}",
        exe.display().to_string()
    );
    let env = Env::new(&config);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("c1", "mcp__test__echo", json!({"text": "x"})),
            Reply::text("done"),
        ],
    )
    .await;
    let (code, _, stderr) = env.cairn(&mock.url(), &["run", "go"]).await;
    assert_eq!(code, 0, "{stderr}");
    let pid = std::fs::read_to_string(pidfile.path()).expect("pid written");
    assert!(!pid.is_empty(), "the server ran");
    let mut gone = false;
    for _ in 0..40 {
        if !alive(pid.trim()) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the server process {pid} outlived cairn run");
}

async fn the_model_lists_and_reads_resources() {
    let env = Env::new(&test_server("test", ""));
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("r1", "list_mcp_resources", json!({})),
            Reply::tool(
                "r2",
                "read_mcp_resource",
                json!({"server": "test", "uri": mcp_server::RESOURCE_URI}),
            ),
            Reply::tool(
                "r3",
                "read_mcp_resource",
                json!({"server": "test", "uri": "cairn-test://none"}),
            ),
            Reply::text("Read it."),
        ],
    )
    .await;
    let (code, stdout, stderr) = env.cairn(&mock.url(), &["run", "read the notes"]).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let requests = mock.requests();
    let listed = last_result(&requests[1]);
    assert!(
        listed.contains(mcp_server::RESOURCE_URI) && listed.contains("The test server's notes."),
        "{listed}"
    );
    assert!(last_result(&requests[2]).contains(mcp_server::RESOURCE_TEXT));
    let missing = last_result(&requests[3]);
    assert!(
        missing.contains("could not read `cairn-test://none`"),
        "{missing}"
    );
}

/// `@mcp:SERVER:URI` naming an image: an image block for a model that sees
/// images, a note with its type and size for one that does not.
async fn an_attached_image_is_an_image_or_a_note() {
    let prompt = format!("what is in @mcp:test:{}", mcp_server::PIXEL_URI);
    let no_images = "[models.\"claude-sonnet-4-5\"]\nimages = false\n";
    for (extra, sees) in [("", true), (no_images, false)] {
        let env = Env::new(&format!("{extra}{}", test_server("test", "")));
        let mock = MockModel::start(Format::Anthropic, vec![Reply::text("A pixel.")]).await;
        let (code, stdout, stderr) = env.cairn(&mock.url(), &["run", &prompt]).await;
        assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
        let first = &mock.requests()[0]["messages"][0]["content"];
        let blocks = first.as_array().expect("content blocks");
        let image = blocks.iter().find(|b| b["type"] == "image");
        let text = first.to_string();
        assert!(
            text.contains("<attached resource=\\\"mcp:test:cairn-test://pixel\\\">"),
            "{text}"
        );
        if sees {
            let image = image.unwrap_or_else(|| panic!("no image block: {text}"));
            assert_eq!(image["source"]["media_type"], "image/png");
            assert_eq!(image["source"]["data"], mcp_server::PNG);
        } else {
            assert!(image.is_none(), "{text}");
            assert!(
                text.contains("(image/png), 70 bytes: an image, which this model cannot see"),
                "{text}"
            );
        }
    }
}

async fn a_prompt_command_sends_the_servers_prompt() {
    let env = Env::new(&test_server("test", ""));
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("Hello, Ada!")]).await;
    let (code, stdout, stderr) = env
        .cairn(&mock.url(), &["run", "/mcp__test__greet Ada"])
        .await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let sent = mock.requests()[0]["messages"].to_string();
    assert!(sent.contains("Say hello to Ada, warmly."), "{sent}");
    assert!(!sent.contains("mcp__test__greet"), "{sent}");

    let (code, _, stderr) = env.cairn(&mock.url(), &["run", "/mcp__test__greet"]).await;
    assert_eq!(code, 1);
    assert!(stderr.contains("needs: name"), "{stderr}");
    let (code, _, stderr) = env.cairn(&mock.url(), &["run", "/mcp__test__nope"]).await;
    assert_eq!(code, 1);
    assert!(
        stderr.contains("has no prompt `nope` (it has: greet)"),
        "{stderr}"
    );
}

async fn run_declines_a_servers_request_for_input() {
    let env = Env::new(&test_server("test", "trusted = true"));
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("a1", "mcp__test__ask", json!({})),
            Reply::text("Nobody answered."),
        ],
    )
    .await;
    let (code, _, stderr) = env.cairn(&mock.url(), &["run", "ask me"]).await;
    assert_eq!(code, 0, "{stderr}");
    let result = last_result(&mock.requests()[1]);
    assert!(result.contains("answer: Decline"), "{result}");
}

async fn mcp_list_is_bounded_and_fails_when_a_server_does() {
    let config = format!(
        "{}{}",
        test_server("test", ""),
        "[mcp.hang]\ncommand = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_secs = 1\n",
    );
    let env = Env::new(&config);
    let started = Instant::now();
    let (code, stdout, stderr) = env.cairn("http://127.0.0.1:9", &["mcp", "list"]).await;
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("connected (10 tools)"), "{stdout}");
    assert!(
        stdout.contains("did not finish starting within 1 s"),
        "{stdout}"
    );
    assert!(stderr.contains("hang"), "{stderr}");

    let env = Env::new(&test_server("test", ""));
    let (code, stdout, _) = env.cairn("http://127.0.0.1:9", &["mcp", "list"]).await;
    assert_eq!(code, 0, "{stdout}");
}

async fn mcp_add_get_remove_edit_the_user_config() {
    let env = Env::new("# my own notes\nmax_turns = 7 # keep\n");
    let exe = std::env::current_exe()
        .expect("own path")
        .display()
        .to_string();
    let url = "http://127.0.0.1:9";
    let (code, stdout, stderr) = env
        .cairn(
            url,
            &[
                "mcp",
                "add",
                "local",
                "--env",
                &format!("{SERVE_ENV}=1"),
                "--",
                &exe,
            ],
        )
        .await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, _, stderr) = env
        .cairn(
            url,
            &[
                "mcp",
                "add",
                "docs",
                "--url",
                "https://example.com/mcp",
                "--header",
                "Authorization=Bearer ${DOCS_TOKEN}",
            ],
        )
        .await;
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(env.config_path()).expect("config");
    assert!(
        text.starts_with("# my own notes\nmax_turns = 7 # keep\n"),
        "{text}"
    );
    assert!(
        text.contains("[mcp.docs]") && text.contains("Bearer ${DOCS_TOKEN}"),
        "{text}"
    );

    let (code, stdout, stderr) = env.cairn(url, &["mcp", "get", "local"]).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("[mcp.local]") && stdout.contains("connected (10 tools)"),
        "{stdout}"
    );

    let (code, _, stderr) = env
        .cairn(url, &["mcp", "add", "local", "--", "other"])
        .await;
    assert_eq!(code, 1);
    assert!(stderr.contains("already"), "{stderr}");

    let (code, _, _) = env.cairn(url, &["mcp", "remove", "local"]).await;
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(env.config_path()).expect("config");
    assert!(
        !text.contains("[mcp.local]") && text.contains("# keep"),
        "{text}"
    );
    let (code, _, stderr) = env.cairn(url, &["mcp", "remove", "local"]).await;
    assert_eq!(code, 1);
    assert!(stderr.contains("no MCP server `local`"), "{stderr}");
}
