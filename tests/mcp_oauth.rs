//! OAuth for remote MCP servers, through the real binary: a server that
//! answers 401 "needs login"; `cairn mcp login` discovers the authorization
//! server, registers, and finishes the PKCE flow while this test plays the
//! browser; `cairn run` then calls the server's tool with the stored token,
//! refreshing it when it expired or was revoked; `cairn mcp logout` removes
//! it. The server is tests/support/oauth_server.rs, on 127.0.0.1.

use crate::{mock_model, oauth_server, test_home};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use oauth_server::OAuthServer;
use serde_json::{Value, json};
use test_home::TestHome;
use tokio_util::sync::CancellationToken;

struct Env {
    home: TestHome,
    server: OAuthServer,
    _stop: tokio_util::sync::DropGuard,
    /// Where the test's "browser" writes the address it was asked to open.
    opened: PathBuf,
    browser: PathBuf,
}

impl Env {
    async fn new() -> Env {
        let stop = CancellationToken::new();
        let server = OAuthServer::start(stop.clone())
            .await
            .expect("oauth server");
        let home = TestHome::new();
        let dir = home.home.path().join("config").join("cairn");
        std::fs::create_dir_all(&dir).expect("config dir");
        let config = format!(
            "[mcp.docs]\nurl = \"{}\"\ntrusted = true\n",
            server.mcp_url()
        );
        std::fs::write(dir.join("config.toml"), config).expect("config");
        let opened = home.tmp.path().join("opened-url");
        let browser = home.tmp.path().join("browser.sh");
        std::fs::write(
            &browser,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$1\" > '{}'\n",
                opened.display()
            ),
        )
        .expect("browser script");
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        Env {
            home,
            server,
            _stop: stop.drop_guard(),
            opened,
            browser,
        }
    }

    fn token_file(&self) -> PathBuf {
        self.home.home.path().join("data/cairn/mcp-auth/docs.json")
    }

    fn command(&self, model_url: &str, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.args(args)
            .current_dir(self.home.project.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.home.vars(model_url))
            .env("CAIRN_BROWSER", &self.browser)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    async fn cairn(&self, model_url: &str, args: &[&str]) -> (i32, String, String) {
        let out = self.command(model_url, args).output();
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

    /// `cairn mcp login docs`, with this test as the browser: it fetches
    /// the authorization address cairn opened, and follows the redirect
    /// back to cairn's loopback listener.
    async fn login(&self) -> (i32, String, String) {
        let child = self
            .command("http://127.0.0.1:9", &["mcp", "login", "docs"])
            .spawn()
            .expect("cairn mcp login");
        let address = self.wait_for_browser().await;
        assert!(
            address.starts_with(&format!("{}/authorize?", self.server.base)),
            "{address}"
        );
        assert!(address.contains("code_challenge_method=S256"), "{address}");
        let browser = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let approved = browser.get(&address).send().await.expect("authorize");
        assert_eq!(approved.status().as_u16(), 302);
        let back = approved.headers()["location"]
            .to_str()
            .expect("location")
            .to_string();
        assert!(back.starts_with("http://127.0.0.1:"), "{back}");
        let page = browser.get(&back).send().await.expect("callback");
        assert_eq!(page.status().as_u16(), 200);
        assert!(page.text().await.unwrap_or_default().contains("logged in"));
        let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("login finished in time")
            .expect("login ran");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    async fn wait_for_browser(&self) -> String {
        for _ in 0..300 {
            if let Ok(text) = std::fs::read_to_string(&self.opened)
                && text.ends_with('\n')
            {
                return text.trim().to_string();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("cairn never opened the authorization page");
    }

    fn stored_access_token(&self) -> String {
        let text = std::fs::read_to_string(self.token_file()).expect("token file");
        let file: Value = serde_json::from_str(&text).expect("token json");
        file["credentials"]["token_response"]["access_token"]
            .as_str()
            .expect("access token")
            .to_string()
    }

    /// `cairn run` where the model calls the server's `echo` tool.
    async fn run_echo(&self, text: &str) -> (i32, String, String, Vec<Value>) {
        let mock = MockModel::start(
            Format::Anthropic,
            vec![
                Reply::tool("c1", "mcp__docs__echo", json!({"text": text})),
                Reply::text("Echoed."),
            ],
        )
        .await;
        let (code, stdout, stderr) = self.cairn(&mock.url(), &["run", "echo it"]).await;
        (code, stdout, stderr, mock.requests())
    }
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_asks_for_authorization_says_to_log_in() {
    let env = Env::new().await;
    let (code, stdout, stderr) = env.cairn("http://127.0.0.1:9", &["mcp", "list"]).await;
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("needs login"), "{stdout}");
    assert!(stdout.contains("run `cairn mcp login docs`"), "{stdout}");
    assert!(
        !stdout.contains("Error") && !stdout.contains("AuthRequired"),
        "{stdout}"
    );

    let (code, stdout, stderr, requests) = env.run_echo("anyone?").await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stderr.contains("cairn mcp login docs"), "{stderr}");
    let offered = requests[0]["tools"].to_string();
    assert!(!offered.contains("mcp__docs__"), "{offered}");
    assert!(env.server.counts().rejected >= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_page_that_is_not_a_web_address_is_never_opened() {
    let env = Env::new().await;
    env.server.set_authorization_endpoint("file:///etc/passwd");
    let (code, stdout, stderr) = env
        .cairn("http://127.0.0.1:9", &["mcp", "login", "docs"])
        .await;
    assert_ne!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stderr.contains("not a web address"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(!env.opened.exists(), "the browser was asked to open it");
    assert!(!stdout.contains("file:///etc/passwd"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_then_run_uses_refreshes_and_logout_forgets_the_token() {
    let env = Env::new().await;
    // Tokens that live one second, so the run below finds them expired.
    env.server.set_expires_in(1);
    let (code, stdout, stderr) = env.login().await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains("Logged in to MCP server `docs`"),
        "{stdout}"
    );
    let counts = env.server.counts();
    assert_eq!(
        (
            counts.registrations,
            counts.authorizations,
            counts.code_grants
        ),
        (1, 1, 1)
    );
    let file = env.token_file();
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().expect("dir")), 0o700);
    let first = env.stored_access_token();

    // Expired: refreshed before the first request, then used.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    env.server.set_expires_in(3600);
    let (code, stdout, stderr, requests) = env.run_echo("with a token").await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        requests[1]["messages"]
            .to_string()
            .contains("echo: with a token"),
        "{stderr}"
    );
    assert!(env.server.counts().refresh_grants >= 1);
    let second = env.stored_access_token();
    assert_ne!(first, second, "the refreshed token is stored");
    assert!(env.server.live_tokens().contains(&second));
    assert_eq!(mode(&file), 0o600);

    // Revoked: the server's 401 makes cairn refresh and retry.
    env.server.revoke_access_tokens();
    let before = env.server.counts().refresh_grants;
    let (code, stdout, stderr, requests) = env.run_echo("after revocation").await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        requests[1]["messages"]
            .to_string()
            .contains("echo: after revocation"),
        "{stderr}"
    );
    assert_eq!(env.server.counts().refresh_grants, before + 1);

    let (code, stdout, _) = env
        .cairn("http://127.0.0.1:9", &["mcp", "logout", "docs"])
        .await;
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Logged out of MCP server `docs`"),
        "{stdout}"
    );
    assert!(!file.exists());
    let (code, stdout, _) = env.cairn("http://127.0.0.1:9", &["mcp", "list"]).await;
    assert_eq!(code, 1);
    assert!(stdout.contains("needs login"), "{stdout}");
}
