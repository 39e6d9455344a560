//! `cairn trust list` and `cairn trust revoke [PATH]`: the stored answers
//! to "trust this project's settings?".

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::config::trust::{TrustStore, hash_text};
use crate::config::{project::printable, project_config_path};

#[derive(Debug, Clone)]
pub enum Action {
    List,
    /// Forget the answer for a project (the current one when `None`).
    Revoke {
        path: Option<PathBuf>,
    },
}

pub fn run(action: Action, cwd: &Path, out: &mut dyn Write) -> Result<()> {
    let store = TrustStore::default_location()?;
    match action {
        Action::List => list(&store, out),
        Action::Revoke { path } => {
            let root = match path {
                Some(p) if p.is_absolute() => p,
                Some(p) => cwd.join(p),
                None => crate::agent::instructions::project_root(cwd),
            };
            if store.revoke(&root)? {
                writeln!(
                    out,
                    "Forgot the trust decision for {}; cairn asks again when it next starts there.",
                    printable(&root.display().to_string())
                )?;
                Ok(())
            } else {
                anyhow::bail!(
                    "no trust decision is stored for {} (see `cairn trust list`)",
                    root.display()
                )
            }
        }
    }
}

fn list(store: &TrustStore, out: &mut dyn Write) -> Result<()> {
    let entries = store
        .entries()
        .with_context(|| format!("reading {}", store.path().display()))?;
    if entries.is_empty() {
        writeln!(out, "No trust decisions are stored.")?;
        writeln!(
            out,
            "cairn asks once per project whose .cairn/config.toml would loosen it or run programs."
        )?;
        return Ok(());
    }
    for e in entries {
        let answer = if e.trusted {
            "trusted    "
        } else {
            "not trusted"
        };
        let file = project_config_path(&e.project);
        let state = match std::fs::read(&file) {
            Ok(bytes) if hash_text(&bytes) == e.sha256 => "",
            Ok(_) => "  (file changed since; cairn will ask again)",
            Err(_) => "  (no .cairn/config.toml there now)",
        };
        writeln!(
            out,
            "{answer}  {}  {}{state}",
            printable(&e.project.display().to_string()),
            e.decided_at
        )?;
    }
    Ok(())
}
