//! Noticing that the sandbox stopped a command. The kernel answers a
//! refused open or connect with a bare EACCES, so this reads the failed
//! command's output for the messages programs print then, and checks the
//! paths they name against the policy.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Grant, Policy};

/// What the sandbox refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Stop {
    Network,
    /// A write outside the writable roots.
    Write {
        path: PathBuf,
    },
    /// A read of a denied path (never offered for a re-run).
    Read {
        path: PathBuf,
    },
}

impl Stop {
    /// What the model is told.
    pub fn message(&self) -> String {
        match self {
            Stop::Network => "stopped by the sandbox: the network is off for commands. Do not \
                              retry it in another spelling; the person can re-run it with the \
                              network, or ask them to."
                .into(),
            Stop::Write { path } => format!(
                "stopped by the sandbox: writing {} is outside the writable roots (the \
                 workspace and the temporary directory). Do not retry it in another spelling; \
                 write inside the workspace, or the person can re-run it with that write allowed.",
                path.display()
            ),
            Stop::Read { path } => format!(
                "stopped by the sandbox: {} is not readable by commands (it holds secrets). \
                 Do without it.",
                path.display()
            ),
        }
    }

    /// What the person is told, in one line.
    pub fn summary(&self) -> String {
        format!("the sandbox stopped it: {}", self.cause())
    }

    /// "the network is off", "writing /x is outside the workspace".
    pub fn cause(&self) -> String {
        match self {
            Stop::Network => "the network is off".into(),
            Stop::Write { path } => {
                format!("writing {} is outside the workspace", path.display())
            }
            Stop::Read { path } => format!("{} is not readable", path.display()),
        }
    }

    /// What a re-run would need; `None` for what is never granted.
    pub fn grant(&self) -> Option<Grant> {
        match self {
            Stop::Network => Some(Grant {
                network: true,
                write: Vec::new(),
            }),
            Stop::Write { path } => Some(Grant {
                network: false,
                write: vec![path.clone()],
            }),
            Stop::Read { .. } => None,
        }
    }
}

const DENIED: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "EACCES",
    "EPERM",
];

const NETWORK: &[&str] = &[
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Couldn't connect to server",
    "Failed to connect",
    "Network is unreachable",
    "unable to access 'http",
    "getaddrinfo",
    "ENOTFOUND",
    "EAI_AGAIN",
    "socket: Permission denied",
    "connect: Permission denied",
    "Could not connect",
    "failed to lookup address",
    "error sending request",
    "Failed to establish a new connection",
];

/// Why `output` of a command that exited with `code` under `policy` looks
/// stopped by the sandbox. `wants_network`: the command is known to use it.
pub fn detect(
    policy: &Policy,
    code: i32,
    output: &str,
    cwd: &Path,
    wants_network: bool,
) -> Option<Stop> {
    if code == 0 {
        return None;
    }
    for line in output
        .lines()
        .filter(|l| DENIED.iter().any(|d| l.contains(d)))
    {
        for candidate in paths_in(line) {
            let path = if candidate.is_absolute() {
                candidate
            } else {
                cwd.join(candidate)
            };
            let path = crate::paths::lexical(&path);
            let real = crate::paths::real_or_parent(&path);
            if policy.deny_read.iter().any(|d| real.starts_with(d)) {
                return Some(Stop::Read { path });
            }
            if !policy.writable.iter().any(|w| real.starts_with(w)) {
                return Some(Stop::Write { path });
            }
        }
    }
    let refused = output.lines().any(|l| DENIED.iter().any(|d| l.contains(d)));
    let lower = output.to_lowercase();
    let about_sockets = lower.contains("socket") || lower.contains("connect");
    if !policy.network
        && (wants_network
            || output
                .lines()
                .any(|l| NETWORK.iter().any(|n| l.contains(n)))
            || (refused && about_sockets))
    {
        return Some(Stop::Network);
    }
    None
}

/// Paths a message names: quoted words, and words that start with `/`.
fn paths_in(line: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for quote in ['\'', '"', '`', '‘', '’'] {
        let parts: Vec<&str> = line.split(quote).collect();
        for (i, inside) in parts.iter().enumerate() {
            let closed = i % 2 == 1 && i + 1 < parts.len();
            if closed && !inside.is_empty() && !inside.contains(' ') && looks_like_path(inside) {
                out.push(PathBuf::from(*inside));
            }
        }
    }
    for word in line.split_whitespace() {
        let word = word.trim_matches(|c: char| matches!(c, ':' | ',' | '(' | ')' | '\'' | '"'));
        if word.contains('/') && !word.contains("://") && !out.iter().any(|p| p == Path::new(word))
        {
            out.push(PathBuf::from(word));
        }
    }
    out
}

fn looks_like_path(word: &str) -> bool {
    word.contains('/')
        || word.contains('.')
        || word
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(ws: &Path, deny: &Path) -> Policy {
        Policy::bare(
            ws.into(),
            vec![ws.into(), "/tmp".into()],
            vec![deny.into()],
            false,
        )
    }

    #[test]
    fn a_refused_write_outside_names_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        let p = policy(&ws, Path::new("/nonexistent-secrets"));
        let out = "touch: cannot touch '/etc/cairn-test': Permission denied\n";
        assert_eq!(
            detect(&p, 1, out, &ws, false),
            Some(Stop::Write {
                path: "/etc/cairn-test".into()
            })
        );
        let bash = "bash: line 1: /usr/local/x: Permission denied";
        assert_eq!(
            detect(&p, 1, bash, &ws, false),
            Some(Stop::Write {
                path: "/usr/local/x".into()
            })
        );
        // Inside the workspace a refusal is the file's own mode, not the sandbox.
        let inside = format!(
            "touch: cannot touch '{}/a': Permission denied",
            ws.display()
        );
        assert_eq!(detect(&p, 1, &inside, &ws, false), None);
        assert_eq!(detect(&p, 0, out, &ws, false), None);
    }

    #[test]
    fn a_refused_read_of_a_secret_is_not_offered_again() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        let p = policy(&ws.join("ws"), &ws.join(".ssh"));
        let out = format!("cat: {}/.ssh/id_rsa: Permission denied", ws.display());
        let stop = detect(&p, 1, &out, &ws, false).unwrap();
        assert_eq!(
            stop,
            Stop::Read {
                path: ws.join(".ssh/id_rsa")
            }
        );
        assert!(stop.grant().is_none());
        assert!(stop.message().starts_with("stopped by the sandbox"));
    }

    #[test]
    fn network_failures_are_the_sandbox_only_when_the_network_is_off() {
        let ws = PathBuf::from("/w");
        let mut p = policy(&ws, Path::new("/s"));
        let out = "curl: (6) Could not resolve host: example.com";
        assert_eq!(detect(&p, 6, out, &ws, false), Some(Stop::Network));
        assert_eq!(
            detect(&p, 1, "error: something", &ws, true),
            Some(Stop::Network)
        );
        assert_eq!(detect(&p, 1, "error: something", &ws, false), None);
        let python = "  File \"/usr/lib/python3/socket.py\", line 1, in create_connection\n\
                      PermissionError: [Errno 13] Permission denied";
        assert_eq!(detect(&p, 1, python, &ws, false), Some(Stop::Network));
        p.network = true;
        assert_eq!(detect(&p, 6, out, &ws, false), None);
        assert!(Stop::Network.grant().unwrap().network);
    }
}
