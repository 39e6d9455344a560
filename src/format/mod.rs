//! Formatting an edited file (`[format]`): which formatter serves a file,
//! and running it — a command in the sandbox (`sandbox::Helper::Format`:
//! read-only, network off, secrets withheld), or the language server's
//! own formatting. The file tools call it through
//! `tools::format::Formatting` after an edit is written, and write what it
//! answers themselves.
//!
//! - `specs` — the languages known out of the box and `[format.NAME]`.
//! - `run` — one command: stdin in, stdout out, a time limit, an output cap.
//!
//! A formatter is the repository's code in effect (prettier's plugins,
//! `rustfmt.toml`, ruff's settings), so it is held like a language server:
//! found on a `PATH` without folders inside the workspace, never run on a
//! file outside the workspace or on a control file, and with the sandbox
//! off not run at all for a project the person has not trusted.

pub mod run;
pub mod specs;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::config::format::FormatConfig;
use crate::lsp::LspManager;
use crate::sync::lock;
use specs::{How, Language};

/// The least a language server's formatting may take, its start included.
const SERVER_WAIT: Duration = Duration::from_secs(30);

/// Why nothing is formatted with the sandbox off in an untrusted project.
const UNTRUSTED: &str = "the sandbox is off or cannot be enforced here, and this project is not \
     trusted: a formatter runs the repository's own config and plugins, so cairn does not run it \
     (trust the project, or run cairn where its sandbox holds: `cairn sandbox --status`)";

/// What formats one file type, as found.
#[derive(Debug, Clone)]
enum Choice {
    /// A program: what a result calls it, where it is, its words.
    Command {
        name: String,
        program: PathBuf,
        words: Vec<String>,
    },
    /// The language server's formatting.
    Server,
    /// The person asked for a formatter that cannot run here: why.
    Missing { why: String },
}

/// The formatters of a session's workspace.
pub struct Formatters {
    workspace: PathBuf,
    sandbox: crate::sandbox::Sandbox,
    languages: Vec<Language>,
    problems: Vec<(String, String)>,
    /// `PATH` without relative entries and without folders inside the
    /// workspace: where formatters are found, and their own `PATH`.
    path_var: Option<OsString>,
    trusted: bool,
    limits: run::Limits,
    lsp: Option<Arc<LspManager>>,
    /// Where a language server's (async) formatting runs from the file
    /// tools' blocking thread.
    runtime: Option<tokio::runtime::Handle>,
    /// The choice for each file extension: `PATH` is searched once per
    /// language, not on every edit.
    choices: Mutex<HashMap<String, Option<Choice>>>,
}

impl Formatters {
    /// Reads the configuration; runs nothing. `trusted`: the project is
    /// (what its own `[format]` says is already in `config` only then).
    pub fn new(
        config: &FormatConfig,
        workspace: PathBuf,
        sandbox: crate::sandbox::Sandbox,
        trusted: bool,
        lsp: Option<Arc<LspManager>>,
    ) -> Formatters {
        let path = std::env::var_os("PATH");
        Self::with_path(config, workspace, sandbox, trusted, lsp, path.as_deref())
    }

    /// As `new`, with programs looked up on `path` (made safe first).
    pub fn with_path(
        config: &FormatConfig,
        workspace: PathBuf,
        sandbox: crate::sandbox::Sandbox,
        trusted: bool,
        lsp: Option<Arc<LspManager>>,
        path: Option<&std::ffi::OsStr>,
    ) -> Formatters {
        let (languages, problems) = specs::languages(config);
        Formatters {
            path_var: crate::lsp::servers::safe_path(path, &workspace),
            workspace,
            sandbox,
            languages,
            problems,
            trusted,
            limits: run::Limits {
                time: config.timeout(),
                output: crate::tools::regular::MAX_EDIT_FILE as usize,
            },
            lsp,
            runtime: tokio::runtime::Handle::try_current().ok(),
            choices: Mutex::new(HashMap::new()),
        }
    }

    /// Whether any language is formatted at all.
    pub fn is_empty(&self) -> bool {
        self.languages.is_empty()
    }

    /// `[format.NAME]` tables that format nothing, said as the person
    /// should read them.
    pub fn problems(&self) -> Vec<String> {
        (self.problems.iter())
            .map(|(_, why)| format!("{why}; it formats nothing"))
            .collect()
    }

    /// What formats `path`, when anything may.
    fn choice(&self, path: &Path) -> Option<Choice> {
        if !self.may_format(path) {
            return None;
        }
        let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
        if let Some(c) = lock(&self.choices).get(&ext) {
            return c.clone();
        }
        let c = self.choose(path);
        lock(&self.choices).insert(ext, c.clone());
        c
    }

    fn choose(&self, path: &Path) -> Option<Choice> {
        let language = self.languages.iter().find(|l| specs::serves(l, path))?;
        let find =
            |program: &str| crate::lsp::servers::find_program(program, self.path_var.as_deref());
        let missing = |program: &str| format!("`{program}` is not installed or not on PATH");
        match &language.how {
            How::Command(words) => {
                let Some(first) = words.first() else {
                    return Some(Choice::Missing {
                        why: format!("`[format.{}] command` is empty", language.name),
                    });
                };
                let name = specs::command_name(words);
                Some(match find(first) {
                    Some(program) => Choice::Command {
                        name,
                        program,
                        words: words.clone(),
                    },
                    None => Choice::Missing {
                        why: missing(first),
                    },
                })
            }
            How::Known(formatters) => {
                for f in formatters {
                    let Some(words) = specs::known_command(*f) else {
                        return Some(Choice::Server);
                    };
                    if let Some(program) = find(words[0]) {
                        return Some(Choice::Command {
                            name: f.as_str().to_string(),
                            program,
                            words: words.iter().map(|w| w.to_string()).collect(),
                        });
                    }
                }
                // A built-in default that is not installed is left out; one
                // the person named is said to be missing.
                let first = formatters.first().filter(|_| language.asked)?;
                let program = specs::known_command(*first).map_or("", |w| w[0]);
                Some(Choice::Missing {
                    why: missing(program),
                })
            }
        }
    }

    /// Only the workspace's own files, and never one that git, cairn or
    /// another agent or tool obeys (by its path and by where it really
    /// is): a formatter's output must not become their orders.
    fn may_format(&self, path: &Path) -> bool {
        let places = crate::sandbox::control::places_in(&self.workspace, path);
        places.iter().all(|p| {
            p.as_ref()
                .is_some_and(|rel| !controls(&self.workspace, rel))
        })
    }

    /// With the sandbox off or not enforceable here, nothing runs for a
    /// project not trusted.
    fn untrusted_unconfined(&self) -> bool {
        !self.sandbox.holds_helpers() && !self.trusted
    }

    /// The language server that formats `path` with `formatter = "lsp"`.
    fn server_name(&self, path: &Path) -> Result<String, String> {
        (self.lsp.as_ref())
            .and_then(|l| l.server_for(path))
            .map(|(s, _)| s.name)
            .ok_or_else(|| {
                "no language server looks after this file (`formatter = \"lsp\"`)".into()
            })
    }

    /// A language server formats `text`, from a blocking thread.
    fn format_with_server(
        &self,
        path: &Path,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let (Some(lsp), Some(runtime)) = (self.lsp.clone(), self.runtime.as_ref()) else {
            return Err("language servers are not running in this session".into());
        };
        let wait = self.limits.time.max(SERVER_WAIT);
        let (tx, rx) = std::sync::mpsc::channel();
        let (file, text) = (path.to_path_buf(), text.to_string());
        let task = runtime.spawn(async move {
            let _ = tx.send(lsp.format(&file, &text, wait).await);
        });
        let deadline = Instant::now() + wait + Duration::from_secs(1);
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(answer) => return answer,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                    if !cancel.is_cancelled() && Instant::now() < deadline =>
                {
                    continue;
                }
                Err(_) => {
                    task.abort();
                    let server = self.server_name(path).unwrap_or_default();
                    return Err(match cancel.is_cancelled() {
                        true => "formatting was stopped: the turn was cancelled".into(),
                        false => format!("{server} did not answer in time"),
                    });
                }
            }
        }
    }
}

impl crate::tools::format::Formatting for Formatters {
    fn formatter_for(&self, path: &Path) -> Option<Result<String, String>> {
        let choice = self.choice(path)?;
        if self.untrusted_unconfined() {
            return Some(Err(UNTRUSTED.into()));
        }
        Some(match choice {
            Choice::Command { name, .. } => Ok(name),
            Choice::Missing { why } => Err(why),
            Choice::Server => self.server_name(path),
        })
    }

    fn format(
        &self,
        path: &Path,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let choice = self
            .choice(path)
            .ok_or("no formatter serves this file".to_string())?;
        if self.untrusted_unconfined() {
            return Err(UNTRUSTED.into());
        }
        let (name, program, words) = match choice {
            Choice::Missing { why } => return Err(why),
            Choice::Server => return self.format_with_server(path, text, cancel),
            Choice::Command {
                name,
                program,
                words,
            } => (name, program, words),
        };
        let helper = crate::sandbox::Helper::Format;
        let program_text = program.to_string_lossy();
        let mut cmd = crate::sandbox::helper_std_command(
            &self.sandbox,
            helper,
            &program_text,
            &self.workspace,
        )
        .map_err(|e| format!("{name} cannot run in the sandbox: {e}"))?;
        let filled = specs::fill(&words, path, &self.workspace);
        cmd.args(&filled[1..]);
        // `#!/usr/bin/env node` finds `node` on the same safe PATH.
        if let Some(p) = &self.path_var {
            cmd.env("PATH", p);
        }
        // Formatters find their settings (`rustfmt.toml`, `.prettierrc`,
        // `pyproject.toml`) from the folder they run in.
        if let Some(dir) = path.parent() {
            cmd.current_dir(dir);
        }
        run::run(cmd, &name, text, self.limits, cancel)
    }
}

/// Whether `rel` (inside the workspace) is a control file: git's, cairn's,
/// other agents' and tools' (`sandbox::control`), the instruction files
/// agents read as orders included.
fn controls(workspace: &Path, rel: &Path) -> bool {
    if crate::sandbox::control::control_file_in(workspace, rel).is_some() {
        return true;
    }
    let parts: Vec<_> = rel.components().collect();
    (0..parts.len()).any(|i| {
        let from_here: PathBuf = parts[i..].iter().collect();
        (crate::sandbox::control::AGENT_CONTROL.iter()).any(|c| from_here.starts_with(c))
    })
}

#[cfg(test)]
mod tests;
