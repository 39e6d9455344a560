//! Opening a session with a server: a child process on stdio, or a
//! streamable HTTP endpoint. `${VAR}` in the configuration is filled from
//! cairn's environment here, at connect time, so a restart sees new values.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, Command};
use tokio::task::JoinHandle;

use super::client::CairnClient;
use super::errors::Credentials;
use super::slot::Slot;
use crate::config::McpServerConfig;
use crate::sync::lock;

pub(crate) type Session = RunningService<RoleClient, CairnClient>;

/// Lines of a server's stderr kept to explain a crash.
/// Lines of a server's stderr kept for the reason it failed: enough for a
/// hint and the traceback after it.
const STDERR_TAIL: usize = 60;

/// An open session, and the process behind it for stdio servers.
pub(crate) struct Connection {
    pub(crate) session: Session,
    pub(crate) child: Option<ServerProcess>,
    /// It speaks the older HTTP+SSE transport (asked for, or fallen back
    /// to when streamable HTTP was refused), as `/mcp` reports it.
    pub(crate) sse: bool,
}

/// Why a connection did not open: the reason shown in `/mcp`.
#[derive(Debug)]
pub(crate) enum ConnectError {
    Failed(String),
    /// The server wants the person to log in (`cairn mcp login`).
    NeedsLogin(String),
}

impl From<String> for ConnectError {
    fn from(reason: String) -> Self {
        ConnectError::Failed(reason)
    }
}

/// Connects to the server `config` describes.
pub(crate) async fn connect(slot: &Slot, client: CairnClient) -> Result<Connection, ConnectError> {
    let (name, config) = (slot.name.as_str(), &slot.config);
    let expand = |text: &str| expand_for(config, text);
    if let Some(command) = &config.command {
        // A server outside the sandbox is registered before it starts and
        // before the workspace is checked, so a writing call made at any
        // moment either stops its start or waits for it to be killed.
        let hold = (slot.outside.as_ref().and(slot.root.as_ref())).map(|root| {
            crate::sandbox::workspace_changes::hold(
                root,
                &super::tool_name(name, ""),
                slot.outside.as_deref().unwrap_or(""),
            )
        });
        if let Some(why) = slot.outside_changed() {
            return Err(ConnectError::Failed(why));
        }
        let cmd = stdio_command(slot, &expand(command)?)?;
        let sandboxed = runs_sandboxed(slot);
        let mut connection = connect_stdio(name, cmd, command, config, client, sandboxed).await?;
        if let Some(child) = connection.child.as_mut() {
            child.hold = hold;
        }
        Ok(connection)
    } else if let Some(url) = &config.url {
        let url = expand(url)?;
        let headers = headers_for(config)?;
        match config.transport.as_deref() {
            None | Some("http") => connect_http(name, &url, headers, client).await,
            Some("sse") => Ok(connect_sse(&url, headers, client).await?),
            Some(other) => Err(ConnectError::Failed(format!(
                "`transport = \"{other}\"` is not a transport; use `http` (streamable HTTP, the \
                 default) or `sse` (the older HTTP+SSE)"
            ))),
        }
    } else {
        Err(ConnectError::Failed(
            "neither `command` nor `url` is set".to_string(),
        ))
    }
}

/// Whether a stdio server runs inside the sandbox: a project's server
/// unless its entry says `sandbox = false`, the person's own when theirs
/// says `sandbox = true`.
pub(crate) fn sandboxed(config: &McpServerConfig) -> bool {
    config.sandbox.unwrap_or(config.from_project)
}

/// For a person's own stdio server left to run as them (`sandbox` unset):
/// the first place it may load from that the sandbox's commands can write
/// or could have written — this session's workspace, private caches and
/// (under Landlock) `/tmp`, and every workspace a sandboxed session has
/// used before (`Sandbox::workspaces_used`). There a command run
/// unasked could change what the server runs as the person at its next
/// start; such a server runs in the sandbox instead, unless its entry says
/// `sandbox = false`.
///
/// What counts, after the variables are filled in as the launch fills
/// them: any word that holds such a place's path anywhere in its text (a
/// path inside a shell or code string, `--flag=PATH`, `a/../b`); any path
/// in a word that leads there once every link is followed (a link in
/// `~/bin` to a workspace's script); the program found on cairn's own
/// `PATH`, its links followed; the folder a named file loads from, a
/// virtual environment as a whole, and the folders its editable installs
/// name.
pub(crate) fn loads_from_writable(
    config: &McpServerConfig,
    sandbox: &crate::sandbox::Sandbox,
    root: &std::path::Path,
) -> Option<PathBuf> {
    use std::path::Path;
    if config.from_project || config.sandbox.is_some() || config.command.is_none() {
        return None;
    }
    let policy = sandbox.policy(root)?;
    // Under bubblewrap a command's `/tmp` is its session's own folder.
    let private_tmp = policy.layer == crate::sandbox::Layer::Namespace;
    let mut places: Vec<PathBuf> = (policy.writable.iter())
        .filter(|w| !w.starts_with("/dev"))
        .filter(|w| !(private_tmp && w.as_path() == Path::new("/tmp")))
        .cloned()
        .collect();
    places.extend(sandbox.workspaces_used());
    for place in places.clone() {
        if let Ok(real) = std::fs::canonicalize(&place) {
            places.push(real);
        }
    }
    places.sort();
    places.dedup();
    let inside = |at: &Path| places.iter().find(|p| at.starts_with(p)).cloned();
    let expand = |w: &String| expand_for(config, w).unwrap_or_else(|_| w.clone());
    let words = code_words(config, &expand);
    // A place's path anywhere in a word's text.
    for word in &words {
        if let Some(place) = (places.iter()).find(|p| word.contains(&*p.to_string_lossy())) {
            return Some(place.clone());
        }
    }
    // Paths, every link followed; the program as cairn finds it.
    let home = std::env::var("HOME").unwrap_or_default();
    let mut pieces: Vec<PathBuf> = Vec::new();
    for word in &words {
        let split = |c: char| c.is_whitespace() || "\"'`=:(),;".contains(c);
        for piece in word.split(split).filter(|p| p.contains('/')) {
            let piece = match piece.strip_prefix("~/") {
                Some(rest) if !home.is_empty() => format!("{home}/{rest}"),
                _ => piece.to_string(),
            };
            if piece.starts_with('/') {
                pieces.push(PathBuf::from(piece));
            }
        }
    }
    if let Some(program) = config.command.as_deref().map(|c| expand(&c.to_string()))
        && !program.contains('/')
        && let Some(found) = crate::sandbox::own_path::find(&program)
    {
        pieces.push(found);
    }
    for piece in &pieces {
        if let Some(place) = std::fs::canonicalize(piece).ok().and_then(|r| inside(&r)) {
            return Some(place);
        }
    }
    // The folders named files load from; a virtual environment's editable
    // installs.
    let outward = crate::sandbox::workspace_changes::outward::named_anywhere;
    let folders = outward(&neutral_dir(), words.iter().map(String::as_str));
    for folder in &folders {
        if let Some(place) = inside(folder) {
            return Some(place);
        }
        let venv = folder.join("pyvenv.cfg").is_file();
        if venv {
            let editable = crate::sandbox::workspace_changes::outward::venv_path_folders(folder);
            if let Some(place) = editable.iter().find_map(|f| inside(f)) {
                return Some(place);
            }
        }
    }
    None
}

/// Decides, the first time only, whether this person's own server
/// runs in the sandbox because of where it loads from; the place when
/// that was decided now.
pub(crate) fn decide_containment(slot: &Slot) -> Option<&std::path::PathBuf> {
    let mut first = false;
    let place = slot.contained.get_or_init(|| {
        first = true;
        let (Some(sandbox), Some(root)) = (slot.sandbox.as_ref(), slot.root.as_deref()) else {
            return None;
        };
        loads_from_writable(&slot.config, sandbox, root)
    });
    place.as_ref().filter(|_| first)
}

/// Whether this server's process runs in the sandbox: a project's
/// (unless it opts out), one marked `sandbox = true`, or a person's own
/// that loads from a place commands can write.
pub(crate) fn runs_sandboxed(slot: &Slot) -> bool {
    decide_containment(slot);
    sandboxed(&slot.config) || slot.contained.get().is_some_and(Option::is_some)
}

/// Options after which a folder is where a runner loads code from
/// (`uv run --directory DIR`, `npm --prefix DIR`, `pip -e DIR`).
const CODE_FOLDER_FLAGS: &[&str] = &[
    "--directory",
    "--project",
    "--prefix",
    "--cwd",
    "-C",
    "--manifest-path",
    "--from",
    "--with-editable",
    "--editable",
    "-e",
];

/// Variables whose folders are where code is loaded from.
const CODE_FOLDER_VARIABLES: &[&str] = &[
    "PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "VIRTUAL_ENV",
    "NODE_PATH",
    "NODE_OPTIONS",
    "GEM_PATH",
    "GEM_HOME",
    "RUBYLIB",
    "PERL5LIB",
    "CLASSPATH",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "UV_PROJECT",
];

/// The words of a server's entry, `${VAR}`s filled in by `expand`, that
/// may name what it runs: its program, and its arguments and `env` values
/// but those that are only a folder it works on (the folder a filesystem
/// server is given). A folder counts when it is a virtual environment,
/// follows an option that names where code comes from
/// ([`CODE_FOLDER_FLAGS`]), or is the value of a variable that does
/// ([`CODE_FOLDER_VARIABLES`]).
fn code_words(config: &McpServerConfig, expand: &dyn Fn(&String) -> String) -> Vec<String> {
    let home = std::env::var("HOME").unwrap_or_default();
    let data_folder = |word: &str| {
        let path = match word.strip_prefix("~/") {
            Some(rest) if !home.is_empty() => PathBuf::from(format!("{home}/{rest}")),
            _ => PathBuf::from(word),
        };
        path.is_absolute()
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
            && !path.join("pyvenv.cfg").is_file()
    };
    let mut out: Vec<String> = config.command.iter().map(expand).collect();
    let mut previous = String::new();
    for arg in &config.args {
        let word = expand(arg);
        let (flag, value) = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => (flag.to_string(), value),
            _ => (previous.clone(), word.as_str()),
        };
        if !data_folder(value) || CODE_FOLDER_FLAGS.contains(&flag.as_str()) {
            out.push(word.clone());
        }
        previous = word;
    }
    for (key, value) in &config.env {
        let value = expand(value);
        let code = CODE_FOLDER_VARIABLES.contains(&key.to_ascii_uppercase().as_str());
        if code || !data_folder(&value) {
            out.push(value);
        }
    }
    out
}

/// A directory no repository and no sandboxed command can write: where a
/// person's own server starts, so neither `python3 -m NAME` nor `npx NAME`
/// finds a module or package a workspace ships.
fn neutral_dir() -> PathBuf {
    let dir = crate::config::state_dir().map(|d| d.join("helpers"));
    match dir {
        Some(d) if crate::private::create_dir(&d).is_ok() => d,
        _ => PathBuf::from("/"),
    }
}

/// The server's process: in the sandbox by the helper rules (read-only,
/// network on) or, for the person's own server, outside it; either way in
/// a neutral directory, with a module path that holds no working
/// directory and with secret and socket-locating variables withheld.
fn stdio_command(slot: &Slot, program: &str) -> Result<Command, String> {
    let workspace = slot.root.clone().unwrap_or_else(neutral_dir);
    let mut cmd = match (&slot.sandbox, runs_sandboxed(slot)) {
        (Some(sandbox), true) => {
            let helper = crate::sandbox::Helper::Mcp { network: true };
            let mut cmd = crate::sandbox::helper_command(sandbox, helper, program, &workspace)
                .map_err(|e| format!("cannot start `{program}` in the sandbox: {e}"))?;
            // A project's server names its files relative to the project;
            // the sandbox keeps it from writing there. A person's own keeps
            // the helper's neutral folder.
            if slot.contained.get().is_none_or(Option::is_none) {
                cmd.current_dir(&workspace);
            }
            cmd
        }
        (None, true) => {
            return Err(
                "this server runs only inside the sandbox (it comes from the project, or sets \
                 `sandbox = true`), and no sandbox was given to start it in"
                    .to_string(),
            );
        }
        (_, false) => {
            let mut cmd = Command::new(program);
            // Found, like what it starts, on cairn's own PATH: never in a
            // folder a session's commands can write.
            crate::sandbox::own_path::apply(cmd.as_std_mut());
            // (A sandboxed command has this hook already, first of all.)
            // Its guard reaps what it starts: a helper that leaves the
            // process group (`setsid`) still ends with the server.
            crate::sandbox::die_with_parent_reaping(cmd.as_std_mut());
            crate::tools::env::scrub(&mut cmd);
            for name in crate::sandbox::env::withheld(&[]) {
                cmd.env_remove(name);
            }
            cmd.current_dir(neutral_dir());
            cmd
        }
    };
    // Python puts neither the working directory nor the script's folder on
    // the module path.
    cmd.env("PYTHONSAFEPATH", "1");
    Ok(cmd)
}

async fn connect_stdio(
    name: &str,
    mut cmd: Command,
    command: &str,
    config: &McpServerConfig,
    client: CairnClient,
    sandboxed: bool,
) -> Result<Connection, String> {
    let program = expand_for(config, command)?;
    let args = config
        .args
        .iter()
        .map(|a| expand_for(config, a))
        .collect::<Result<Vec<_>, _>>()?;
    // A reaping guard must not be killed on drop: it ends what the server
    // started itself (see `ServerProcess::drop`).
    let reaping = cfg!(target_os = "linux") && !sandboxed;
    cmd.args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(!reaping);
    // Secrets stay out unless the server's own `env` names them.
    for (key, value) in &config.env {
        cmd.env(key, expand_for(config, value)?);
    }
    // Its own process group, so stopping it also stops what it started
    // (`npx` runs the server as a grandchild).
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("could not start `{program}`: no such program; is it installed and on PATH?")
        } else {
            format!("could not start `{program}`: {e}")
        }
    })?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let mut process = ServerProcess::new(name, child, stderr);
    process.reaping = reaping;
    let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
        process.stop().await;
        return Err("the server's stdin/stdout could not be opened".to_string());
    };
    // A message too large for the transport fails its call at once.
    match client
        .serve((super::oversize::Bounded::new(stdout), stdin))
        .await
    {
        Ok(session) => Ok(Connection {
            session,
            child: Some(process),
            sse: false,
        }),
        Err(e) => {
            let why = process.exit_reason(Duration::from_millis(500)).await;
            process.stop().await;
            Err(match why {
                Some(why) => format!("initialisation failed: {why}"),
                None => format!("initialisation failed: {}", super::errors::init_failure(&e)),
            })
        }
    }
}

/// Streamable HTTP, with the stored login when there is one; a server that
/// answers its POST with a 4xx other than 401/403 is tried with the older
/// HTTP+SSE transport instead, as the specification's
/// backwards-compatibility section describes.
async fn connect_http(
    name: &str,
    url: &str,
    headers: HashMap<HeaderName, HeaderValue>,
    client: CairnClient,
) -> Result<Connection, ConnectError> {
    // The client handler is used up by a failed attempt; keep a twin for
    // the fallback.
    let twin = client.twin();
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers.clone());
    let (credentials, served) = if headers.contains_key(&AUTHORIZATION) {
        let transport = StreamableHttpClientTransport::from_config(config);
        (Credentials::Header, client.serve(transport).await)
    } else {
        match super::oauth::stored_login(name, url).await? {
            Some(auth) => {
                let transport = StreamableHttpClientTransport::with_client(auth, config);
                (Credentials::Login, client.serve(transport).await)
            }
            None => {
                let transport = StreamableHttpClientTransport::from_config(config);
                (Credentials::None, client.serve(transport).await)
            }
        }
    };
    let e = match served {
        Ok(session) => {
            return Ok(Connection {
                session,
                child: None,
                sse: false,
            });
        }
        Err(e) => e,
    };
    let failure = super::errors::connect_failure(name, url, credentials, &e);
    if failure.needs_login {
        return Err(ConnectError::NeedsLogin(failure.reason));
    }
    match failure.status {
        Some(code) if (400..500).contains(&code) && code != 401 && code != 403 => {
            tracing::info!(server = %name, "streamable HTTP answered {code}; trying HTTP+SSE");
            let why = failure.reason;
            connect_sse(url, headers, twin)
                .await
                .map_err(|sse_why| format!("{why}; as an HTTP+SSE server: {sse_why}").into())
        }
        _ => Err(ConnectError::Failed(failure.reason)),
    }
}

async fn connect_sse(
    url: &str,
    headers: HashMap<HeaderName, HeaderValue>,
    client: CairnClient,
) -> Result<Connection, String> {
    let transport = super::sse::open(url, headers.into_iter().collect())
        .await
        .map_err(|(why, _)| why)?;
    let session = client.serve(transport).await.map_err(|e| {
        format!(
            "the HTTP+SSE server at {url} did not start a session: {}",
            super::errors::init_failure(&e)
        )
    })?;
    Ok(Connection {
        session,
        child: None,
        sse: true,
    })
}

pub(crate) fn headers_for(
    config: &McpServerConfig,
) -> Result<HashMap<HeaderName, HeaderValue>, String> {
    headers_with(&config.headers, |text| expand_for(config, text))
}

fn headers_with(
    headers: &BTreeMap<String, String>,
    expand: impl Fn(&str) -> Result<String, String>,
) -> Result<HashMap<HeaderName, HeaderValue>, String> {
    let mut out = HashMap::new();
    for (key, value) in headers {
        let name = HeaderName::from_bytes(key.as_bytes())
            .map_err(|_| format!("`{key}` is not a valid HTTP header name"))?;
        let value = HeaderValue::from_str(&expand(value)?)
            .map_err(|_| format!("the value of header `{key}` is not a valid HTTP header value"))?;
        out.insert(name, value);
    }
    Ok(out)
}

/// Replaces each `${NAME}` with the environment variable `NAME`. A variable
/// that is not set is an error: a server started with an empty token fails
/// later with a far less helpful message.
fn expand_env(text: &str) -> Result<String, String> {
    expand_with(text, |name| std::env::var(name).ok())
}

/// [`expand_env`] for `config`: a project's server (even trusted) gets no
/// variable cairn withholds from commands (keys, tokens, sessions) — its
/// entry could name its own address, or run repository code that sends it
/// on. The person's own servers get what they name.
pub(crate) fn expand_for(config: &McpServerConfig, text: &str) -> Result<String, String> {
    if !config.from_project {
        return expand_env(text);
    }
    let secrets = crate::tools::env::current();
    let mut refused = None;
    let out = expand_with(text, |name| {
        let value = std::env::var(name).ok()?;
        if secrets.withheld(name, &value) {
            refused = Some(name.to_string());
            return Some(String::new());
        }
        Some(value)
    })?;
    match refused {
        Some(name) => Err(project_secret(&name)),
        None => Ok(out),
    }
}

pub(crate) fn project_secret(name: &str) -> String {
    format!(
        "a project's server may not take `${{{name}}}` from your environment: it holds a \
         secret, and the repository names where the server sends it. To give a server a key, \
         add it to your own config (~/.config/cairn/config.toml)"
    )
}

fn expand_with(
    text: &str,
    mut lookup: impl FnMut(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = &after[..end];
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if valid {
            match lookup(name) {
                Some(value) => out.push_str(&value),
                None => return Err(format!("environment variable `{name}` is not set")),
            }
        } else {
            out.push_str(&rest[start..start + 3 + end]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The child process of a stdio server. Its stderr goes to the log, never to
/// the terminal, and its last lines are kept to explain a crash.
pub(crate) struct ServerProcess {
    child: Child,
    /// Also the process group id; kept because `Child::id` forgets it once
    /// the process is reaped.
    pid: Option<u32>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    stderr_task: Option<JoinHandle<()>>,
    reaped: Option<ExitStatus>,
    /// For a server outside the sandbox: kept while it may still run.
    hold: Option<crate::sandbox::workspace_changes::Hold>,
    /// The process is a reaping guard ([`crate::sandbox::die_with_parent_reaping`]):
    /// it ends everything the server started before it exits.
    reaping: bool,
}

impl ServerProcess {
    fn new(name: &str, child: Child, stderr: Option<ChildStderr>) -> Self {
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_task = stderr.map(|stderr| {
            let tail = stderr_tail.clone();
            let server = name.to_string();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::info!(%server, "MCP stderr: {line}");
                    let mut tail = lock(&tail);
                    if tail.len() >= STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            })
        });
        ServerProcess {
            pid: child.id(),
            child,
            stderr_tail,
            stderr_task,
            reaped: None,
            hold: None,
            reaping: false,
        }
    }

    /// Kills the server and all it started at once, without the polite
    /// steps: for one outside the sandbox whose workspace is about to
    /// change under it.
    pub(crate) async fn kill_now(&mut self) {
        self.end_all().await;
        self.signal_group(Signal::Kill);
        if self.reaped.is_none() {
            let _ = self.child.start_kill();
            if let Ok(Ok(status)) =
                tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await
            {
                self.reaped = Some(status);
            }
        }
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
        self.let_go();
    }

    /// Lets the hold go once nothing the server started can still run: at
    /// once when the process (a reaping guard ends last) is gone, else
    /// when a watcher sees it gone. Until then a writing call waits, and
    /// one that waits too long does not run.
    fn let_go(&mut self) {
        let Some(hold) = self.hold.take() else {
            return;
        };
        match (self.reaped, self.pid) {
            (None, Some(pid)) if self.reaping => linger(pid, hold),
            _ => drop(hold),
        }
    }

    /// Waits up to `within` for the process to end, then says how it ended
    /// and what it last wrote to stderr. `None` if it is still running.
    pub(crate) async fn exit_reason(&mut self, within: Duration) -> Option<String> {
        let status = match self.reaped {
            Some(status) => status,
            None => match tokio::time::timeout(within, self.child.wait()).await {
                Ok(Ok(status)) => {
                    self.reaped = Some(status);
                    status
                }
                _ => return None,
            },
        };
        // Let the reader drain what the process wrote before it died.
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
        }
        let mut reason = format!("the server process exited ({status})");
        let tail = lock(&self.stderr_tail);
        if !tail.is_empty() {
            let lines: Vec<&str> = tail.iter().map(String::as_str).collect();
            reason.push_str("; its last output:\n");
            reason.push_str(&lines.join("\n"));
        }
        Some(reason)
    }

    /// Stops the server: a moment to leave on its own (its stdin is closed
    /// by then), a polite signal, then a kill, for the whole process group.
    pub(crate) async fn stop(&mut self) {
        if self.reaped.is_none() {
            // A server whose stdin closed usually leaves by itself.
            if let Ok(Ok(status)) =
                tokio::time::timeout(Duration::from_millis(300), self.child.wait()).await
            {
                self.reaped = Some(status);
            }
        }
        if self.reaped.is_none() {
            self.signal_group(Signal::Term);
            match tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await {
                Ok(Ok(status)) => self.reaped = Some(status),
                _ => {
                    self.end_all().await;
                    let _ = self.child.start_kill();
                    if let Ok(Ok(status)) =
                        tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await
                    {
                        self.reaped = Some(status);
                    }
                }
            }
        }
        // Whatever the server started may outlive it.
        self.signal_group(Signal::Kill);
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }

    /// For a reaping guard: asks it to end everything the server started
    /// and waits (at most 3 s) until it has and is gone. A kill of the
    /// guard itself would leave what left the group running.
    async fn end_all(&mut self) {
        let (true, None, Some(pid)) = (self.reaping, self.reaped, self.pid) else {
            return;
        };
        crate::sandbox::end_all(pid);
        if let Ok(Ok(status)) =
            tokio::time::timeout(Duration::from_secs(3), self.child.wait()).await
        {
            self.reaped = Some(status);
        }
    }

    fn signal_group(&self, signal: Signal) {
        #[cfg(unix)]
        if let Some(pid) = self.pid {
            // The group and a sandbox namespace started outside it.
            let group = crate::sandbox::Group::stop(pid as i32);
            match signal {
                Signal::Term => {
                    group.signal(libc::SIGTERM);
                    group.resume();
                }
                Signal::Kill => group.signal(libc::SIGKILL),
            }
        }
        #[cfg(not(unix))]
        let _ = signal;
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // `kill_on_drop` ends the child; this ends the rest of its group when
        // cairn exits without a clean shutdown. A reaping guard is asked to
        // end everything and left to do it (killed, it could not).
        if self.reaped.is_none() {
            match (self.reaping, self.pid) {
                (true, Some(pid)) => crate::sandbox::end_all(pid),
                _ => self.signal_group(Signal::Kill),
            }
        }
        self.let_go();
    }
}

/// Keeps `hold` until the process `pid` (a child of cairn's, not reaped
/// yet) has ended: it is then a zombie, or gone — or another process that
/// took its number once it was reaped, told apart by its start time.
fn linger(pid: u32, hold: crate::sandbox::workspace_changes::Hold) {
    // The fields after the command's closing parenthesis: the state first,
    // the start time twentieth.
    let read = move || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = stat.rsplit_once(')')?.1.split_whitespace();
        let fields: Vec<String> = rest.take(20).map(str::to_string).collect();
        Some((fields.first()?.clone(), fields.get(19)?.clone()))
    };
    let born = read().map(|(_, start)| start);
    let ended = move || match (read(), &born) {
        (Some((state, start)), Some(born)) => state.starts_with(['Z', 'X']) || start != *born,
        _ => true,
    };
    let spawned = std::thread::Builder::new()
        .name("cairn-hold".to_string())
        .spawn(move || {
            while !ended() {
                std::thread::sleep(Duration::from_millis(20));
            }
            drop(hold);
        });
    if let Err(e) = spawned {
        // The hold was moved into the closure that failed to start and is
        // let go with it: say so.
        tracing::warn!("cannot watch server process {pid} end: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_a_server_only_works_on_is_not_what_it_runs() {
        let ws = tempfile::tempdir().unwrap();
        let ws_text = ws.path().display().to_string();
        let venv = ws.path().join(".venv");
        std::fs::create_dir(&venv).unwrap();
        std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        let config = McpServerConfig {
            command: Some("npx".into()),
            args: vec![
                "-y".into(),
                "@modelcontextprotocol/server-filesystem".into(),
                ws_text.clone(),
                format!("--data={ws_text}"),
                "--directory".into(),
                ws_text.clone(),
                format!("{ws_text}/server.py"),
                venv.display().to_string(),
            ],
            env: [
                ("PYTHONPATH".to_string(), ws_text.clone()),
                ("NOTES_DIR".to_string(), ws_text.clone()),
            ]
            .into(),
            ..Default::default()
        };
        let words = code_words(&config, &|w: &String| w.clone());
        let data = words.iter().filter(|w| **w == ws_text).count();
        // Kept: after `--directory`, and as `PYTHONPATH`; left out: the
        // filesystem server's folder, `--data=`, `NOTES_DIR`.
        assert_eq!(data, 2, "{words:?}");
        assert!(!words.contains(&format!("--data={ws_text}")), "{words:?}");
        assert!(words.contains(&format!("{ws_text}/server.py")), "{words:?}");
        assert!(words.contains(&venv.display().to_string()), "{words:?}");
        assert_eq!(words[0], "npx");
    }

    #[tokio::test]
    async fn a_hold_is_kept_until_the_process_it_lingers_on_has_ended() {
        use crate::sandbox::workspace_changes as changes;
        let root = std::path::Path::new("/nonexistent/cairn-linger-test/ws");
        let child = std::process::Command::new("sleep")
            .arg("0.6")
            .spawn()
            .unwrap();
        linger(child.id(), changes::hold(root, "mcp__x__", ""));
        let short = Duration::from_millis(100);
        assert!(!changes::outside_gone(root, "bash", short).await);
        // Ended (a zombie: nothing here reaps it), the hold goes.
        assert!(changes::outside_gone(root, "bash", Duration::from_secs(5)).await);
        drop(child);
    }

    fn lookup(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn variables_are_filled_in() {
        assert_eq!(
            expand_with("Bearer ${TOKEN}", lookup).as_deref(),
            Ok("Bearer s3cret")
        );
        assert_eq!(
            expand_with("a${EMPTY}b${TOKEN}", lookup).as_deref(),
            Ok("abs3cret")
        );
        assert_eq!(
            expand_with("plain $HOME", lookup).as_deref(),
            Ok("plain $HOME")
        );
        assert_eq!(
            expand_with("open ${TOKEN", lookup).as_deref(),
            Ok("open ${TOKEN")
        );
        assert_eq!(
            expand_with("${not valid}", lookup).as_deref(),
            Ok("${not valid}")
        );
    }

    #[test]
    fn a_missing_variable_is_named() {
        assert_eq!(
            expand_with("${NOPE}", lookup),
            Err("environment variable `NOPE` is not set".to_string())
        );
    }
}
