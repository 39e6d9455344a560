use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Subcommand};

use cairn::cli::run::Output;
use cairn::cli::startup::Overrides;
use cairn::config::Mode;

#[derive(clap::Parser, Debug)]
#[command(name = "cairn", version, about = "A full-screen terminal coding agent")]
struct Cli {
    /// Provider to use, by name (from the config or a preset: anthropic, openai, ollama, …).
    #[arg(long, global = true)]
    provider: Option<String>,
    /// Model id to use.
    #[arg(long, global = true)]
    model: Option<String>,
    /// Permission mode: smart, always-ask, auto, chat or plan.
    #[arg(long, global = true, value_parser = parse_mode)]
    mode: Option<Mode>,
    /// Same as --mode auto: run tools without asking (dangerous commands stay blocked).
    #[arg(long, global = true)]
    yolo: bool,
    /// Apply this project's .cairn/config.toml in full for this run (its
    /// servers, allow rules, mode, providers), without asking or storing.
    #[arg(long, global = true)]
    trust_project: bool,
    /// Run commands without the sandbox (shown in red in the status line).
    #[arg(long, global = true)]
    no_sandbox: bool,
    /// Model round trips allowed in one turn (instead of max_turns in the config).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_turns: Option<u32>,
    /// A permission rule to allow for this run only, e.g. 'bash(cargo test*)' (repeatable).
    #[arg(long, global = true, value_name = "RULE")]
    allow: Vec<String>,
    /// How hard a reasoning model thinks: minimal, low, medium, high or xhigh.
    #[arg(long, global = true, value_name = "LEVEL", value_parser = parse_effort)]
    effort: Option<cairn::config::effort::Effort>,
    /// A picture to send with the prompt of `cairn run` / -p (PNG, JPEG,
    /// GIF, WebP; repeatable).
    #[arg(short = 'i', long = "image", global = true, value_name = "FILE")]
    image: Vec<std::path::PathBuf>,
    /// Run without recording the session: nothing is written to the
    /// session store (prompt history and settings are still kept).
    #[arg(long, alias = "ephemeral", global = true)]
    no_save: bool,
    /// Answer one prompt without the interface, as `cairn run` does (the
    /// prompt from standard input when none is given).
    #[arg(short = 'p', long = "print", value_name = "PROMPT", num_args = 0..=1, default_missing_value = "")]
    print: Option<String>,
    /// With -p: text, json (one result object) or stream-json (a JSON line per event).
    #[arg(long, value_enum, requires = "print")]
    output_format: Option<OutputFormat>,
    /// Continue the latest session of this project.
    #[arg(short = 'c', long = "continue")]
    continue_latest: bool,
    /// Resume a session by id (or a unique prefix); without an id, pick one.
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    resume: Option<String>,
    /// A first prompt: the interface starts with it sent (with -p, the
    /// prompt to answer). A prompt that is also a command's name goes
    /// after `--`: cairn -- "run".
    #[arg(value_name = "PROMPT")]
    prompt: Vec<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Answer one prompt without the full-screen interface.
    Run {
        /// Print one JSON object per line instead of text (cairn's first format;
        /// prefer --output-format stream-json).
        #[arg(long, conflicts_with = "output_format")]
        json: bool,
        /// text, json (one result object at the end) or stream-json (one JSON
        /// line per event as it happens; see docs/stream-json.md).
        #[arg(long, value_enum)]
        output_format: Option<OutputFormat>,
        /// Accepted for habit's sake: `cairn run` always answers one prompt and exits.
        #[arg(short = 'p', long = "print")]
        print: bool,
        /// Continue the latest session of this project.
        #[arg(short = 'c', long = "continue", conflicts_with = "session")]
        continue_latest: bool,
        /// Continue the session with this id (or a unique prefix of it).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// The prompt; read from standard input when absent.
        prompt: Vec<String>,
    },
    /// Past sessions: list, show, search, export, delete.
    Sessions {
        #[command(subcommand)]
        action: SessionsAction,
        /// Print JSON (list, show, search).
        #[arg(long, global = true)]
        json: bool,
    },
    /// MCP servers: list, add, remove, get, login, logout.
    Mcp {
        #[command(subcommand)]
        action: cairn::cli::mcp::McpAction,
    },
    /// Run a command in the sandbox (`cairn sandbox -- CMD ARGS…`), or show
    /// what this machine enforces (`cairn sandbox --status`).
    Sandbox {
        /// Print the policy and what the kernel enforces.
        #[arg(long)]
        status: bool,
        /// The command and its arguments, after `--`.
        #[arg(last = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// The launcher an editor's terminal runs: one command under the
    /// sandbox a spec in cairn's cache folder describes (internal).
    #[command(name = "__contained", hide = true)]
    Contained { spec: std::path::PathBuf },
    /// Stored permission rules ("allow always" and the config's lists).
    Permissions {
        #[command(subcommand)]
        action: PermissionsAction,
    },
    /// Serve an editor over the Agent Client Protocol on stdin/stdout
    /// (register `cairn acp` as an agent server in Zed or any ACP client).
    Acp,
    /// Projects whose settings you trusted or refused.
    Trust {
        #[command(subcommand)]
        action: TrustAction,
    },
    /// Print a shell completion script: `cairn completions bash > ~/.local/share/bash-completion/completions/cairn`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print cairn's manual page (roff): `cairn man | man -l -`.
    Man,
}

/// The command line as parsed: the options every subcommand takes are
/// listed once, in `cairn --help`. Each subcommand still accepts them (a
/// hidden copy), and its help says where they are described.
fn cli_command() -> clap::Command {
    let top = Cli::command();
    let globals: Vec<clap::Arg> = top
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    hide_globals(top, &globals)
}

fn hide_globals(cmd: clap::Command, globals: &[clap::Arg]) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let mut cmd = cmd;
    for name in names {
        cmd = cmd.mut_subcommand(name, |sub| {
            let sub = globals
                .iter()
                .fold(sub, |sub, a| sub.arg(a.clone().hide(true)))
                .after_help(
                    "Options for every command (--model, --provider, --mode, --no-save, …): see `cairn --help`.",
                );
            hide_globals(sub, globals)
        });
    }
    cmd
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

fn output_of(json: bool, format: Option<OutputFormat>) -> Output {
    match (json, format) {
        (true, _) => Output::Json,
        (false, None | Some(OutputFormat::Text)) => Output::Plain,
        (false, Some(OutputFormat::Json)) => Output::JsonResult,
        (false, Some(OutputFormat::StreamJson)) => Output::StreamJson,
    }
}

#[derive(Subcommand, Debug)]
enum TrustAction {
    /// Every stored answer, and whether the file changed since.
    List,
    /// Forget the answer for a project (this one by default): cairn asks again.
    Revoke { path: Option<std::path::PathBuf> },
}

#[derive(Subcommand, Debug)]
enum SessionsAction {
    /// Sessions of this project, latest first.
    List {
        /// Every project's sessions.
        #[arg(long)]
        all: bool,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// One session's conversation (an id or a unique prefix of it).
    Show { id: String },
    /// Full-text search over prompts, answers and tool output.
    Search {
        query: Vec<String>,
        #[arg(long)]
        all: bool,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Write a session as Markdown (default) or JSON.
    Export {
        id: String,
        #[arg(long)]
        json: bool,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<std::path::PathBuf>,
    },
    /// Delete a session and its history.
    Delete {
        id: String,
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Subcommand, Debug)]
enum PermissionsAction {
    /// List the rules of the global and project config files.
    List,
    /// Remove a rule from the project config, e.g. 'bash(cargo test*)'.
    Remove {
        rule: String,
        /// Remove it from the global config instead.
        #[arg(long)]
        global: bool,
    },
}

impl From<PermissionsAction> for cairn::cli::permissions::Action {
    fn from(a: PermissionsAction) -> Self {
        match a {
            PermissionsAction::List => Self::List,
            PermissionsAction::Remove { rule, global } => Self::Remove { rule, global },
        }
    }
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    Mode::parse(s)
        .ok_or_else(|| format!("`{s}` is not a mode; use smart, always-ask, auto, chat or plan"))
}

fn parse_effort(s: &str) -> Result<cairn::config::effort::Effort, String> {
    cairn::config::effort::Effort::parse(s).ok_or_else(|| {
        format!("`{s}` is not an effort level; use minimal, low, medium, high or xhigh")
    })
}

fn main() -> ExitCode {
    // The network launcher a sandboxed command may be started through
    // (`sandbox::netstack`): before descriptors are sealed, since it hands
    // some to bubblewrap.
    #[cfg(target_os = "linux")]
    cairn::sandbox::netstack::run_if_launcher();
    // First, while cairn has one thread: no child may read its keys, or
    // use a descriptor cairn was started with.
    cairn::tools::env::shield_own_environment();
    cairn::sandbox::seal_inherited_descriptors();
    // SAFETY: cairn has one thread yet.
    unsafe { cairn::sandbox::own_path::cut_own_path() };
    cairn::private::survive_file_size_limit();
    let cli = match Cli::from_arg_matches(&cli_command().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    // A panic the shell parser raises and cairn catches is not news.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !cairn::shell::panic_is_expected() {
            default_hook(info);
        }
    }));
    let _log_guard = init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cairn: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(async_main(cli));
    // Background tasks (a stuck stream, a tool) must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    ExitCode::from(code)
}

async fn async_main(cli: Cli) -> u8 {
    let overrides = Overrides {
        provider: cli.provider.clone(),
        model: cli.model.clone(),
        mode: if cli.yolo { Some(Mode::Auto) } else { cli.mode },
        trust_project: cli.trust_project,
        no_sandbox: cli.no_sandbox,
        max_turns: cli.max_turns,
        allow: cli.allow.clone(),
        effort: cli.effort,
        no_save: cli.no_save,
    };
    if cli.no_save && (cli.continue_latest || cli.resume.is_some()) {
        eprintln!(
            "cairn: --no-save starts a session that is not recorded; it cannot continue or resume one"
        );
        return 2;
    }
    if let Err(e) = cairn::permission::rules::Rules::parse::<String, String>(&overrides.allow, &[])
    {
        eprintln!("cairn: --allow: {e}");
        return 2;
    }
    if let (Some(prompt), None) = (&cli.print, &cli.command) {
        let output = output_of(false, cli.output_format);
        let session = cli.resume.clone().filter(|id| !id.is_empty());
        let resume = cairn::cli::resume::Resume::from_flags(cli.continue_latest, session);
        let mut words = cli.prompt.clone();
        if !prompt.is_empty() {
            words.insert(0, prompt.clone());
        }
        let prompt = words;
        return run_command(&overrides, (prompt, &cli.image), output, resume).await;
    }
    match cli.command {
        Some(Command::Run {
            json,
            output_format,
            print: _,
            continue_latest,
            session,
            prompt,
        }) => {
            let output = output_of(json, output_format);
            let resume = cairn::cli::resume::Resume::from_flags(continue_latest, session);
            run_command(&overrides, (prompt, &cli.image), output, resume).await
        }
        Some(Command::Sessions { action, json }) => sessions_command(action, json),
        Some(Command::Completions { shell }) => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli_command(), "cairn", &mut script);
            print_bytes(&script)
        }
        Some(Command::Man) => {
            let mut page = Vec::new();
            match clap_mangen::Man::new(cli_command()).render(&mut page) {
                Ok(()) => print_bytes(&page),
                Err(e) => report(Err(e.into())),
            }
        }
        Some(Command::Acp) => cairn::acp::serve(overrides).await,
        Some(Command::Trust { action }) => {
            let action = match action {
                TrustAction::List => cairn::cli::trust::Action::List,
                TrustAction::Revoke { path } => cairn::cli::trust::Action::Revoke { path },
            };
            let run = std::env::current_dir()
                .map_err(anyhow::Error::from)
                .and_then(|cwd| cairn::cli::trust::run(action, &cwd, &mut std::io::stdout()));
            report(run.map(|()| 0))
        }
        Some(Command::Mcp { action }) => report(cairn::cli::mcp::run(action, &overrides).await),
        Some(Command::Sandbox { status, command }) => {
            cairn::cli::sandbox::run(status, &command, cli.no_sandbox)
        }
        Some(Command::Contained { spec }) => cairn::cli::contained::run(&spec).await,
        Some(Command::Permissions { action }) => {
            report(cairn::cli::permissions::run(action.into()).map(|()| 0))
        }
        None => report(
            cairn::cli::interactive::run(
                &overrides,
                cli.continue_latest,
                cli.resume,
                (!cli.prompt.is_empty()).then(|| cli.prompt.join(" ")),
            )
            .await
            .map(|()| 0),
        ),
    }
}

/// Writes generated text to standard output; a reader that closed early
/// (`| head`) ends it quietly.
fn print_bytes(bytes: &[u8]) -> u8 {
    use std::io::Write;
    cairn::term_safe::quiet_broken_pipe();
    let mut out = std::io::stdout();
    report(
        out.write_all(bytes)
            .and_then(|()| out.flush())
            .map(|()| 0)
            .map_err(Into::into),
    )
}

/// The exit code of a command's result; an error is printed, escaped, as
/// one `cairn:` line.
fn report(result: anyhow::Result<u8>) -> u8 {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cairn: {}", cairn::term_safe::escape(&format!("{e:#}")));
            1
        }
    }
}

/// `cairn run`: the prompt from the arguments or standard input.
async fn run_command(
    overrides: &Overrides,
    (prompt, images): (Vec<String>, &[std::path::PathBuf]),
    output: Output,
    resume: cairn::cli::resume::Resume,
) -> u8 {
    let read = cairn::cli::run_input::read(&prompt).and_then(|mut p| {
        p.images = cairn::cli::run_input::read_images(images)?;
        Ok(p)
    });
    let prompt = match read {
        Ok(p) => p,
        Err(why) => {
            eprintln!("cairn: {}", cairn::term_safe::escape(&why));
            return 2;
        }
    };
    report(cairn::cli::run::main(overrides, prompt, output, resume).await)
}

/// `cairn sessions …`, for the project of the current directory.
fn sessions_command(action: SessionsAction, json: bool) -> u8 {
    cairn::term_safe::quiet_broken_pipe();
    use cairn::cli::sessions::Action;
    let action = match action {
        SessionsAction::List { all, limit } => Action::List { all, limit },
        SessionsAction::Show { id } => Action::Show { id },
        SessionsAction::Search { query, all, limit } => Action::Search {
            query: query.join(" "),
            all,
            limit,
        },
        SessionsAction::Export { id, json, output } => Action::Export { id, json, output },
        SessionsAction::Delete { id, yes } => Action::Delete { id, yes },
    };
    let root = match std::env::current_dir() {
        Ok(cwd) => cairn::agent::instructions::project_root(&cwd),
        Err(e) => {
            eprintln!("cairn: cannot read the current directory: {e}");
            return 1;
        }
    };
    let mut out = std::io::stdout().lock();
    report(cairn::cli::sessions::run(action, json, &root, &mut out).map(|()| 0))
}

/// How many log lines may wait for the writer thread.
const LOG_QUEUE_LINES: usize = 2048;

/// Logs go to a file under the state directory, never to the terminal.
fn init_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dir = cairn::config::state_dir()?;
    cairn::private::create_dir(&dir).ok()?;
    let file = cairn::config::log::LogFile::open(&dir.join("cairn.log")).ok()?;
    // The default queue holds 128,000 lines and its channel sets up every
    // slot at once: 4 MB resident for the whole session. cairn logs a few
    // lines a turn; a burst past this many is dropped, not waited on.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .lossy(true)
        .finish(file);
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        // rmcp writes a line at info for every message a server sends,
        // which a chatty server turns into megabytes; its warnings stay.
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}
