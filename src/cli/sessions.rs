//! `cairn sessions list|show|search|export|delete`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;

use crate::conversation::{Part, Role, result_text};
use crate::store::{MATCH_END, MATCH_START, MessageStatus, Store};

pub enum Action {
    List {
        all: bool,
        limit: usize,
    },
    Show {
        id: String,
    },
    Search {
        query: String,
        all: bool,
        limit: usize,
    },
    Export {
        id: String,
        json: bool,
        output: Option<std::path::PathBuf>,
    },
    Delete {
        id: String,
        yes: bool,
    },
}

pub fn open_store() -> Result<Store> {
    let path = crate::store::default_path()
        .context("cannot find a data directory for the session store on this system")?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    Ok(Store::open(&path)?)
}

pub fn run(action: Action, json_out: bool, project_root: &Path, out: &mut dyn Write) -> Result<()> {
    let mut store = open_store()?;
    match action {
        Action::List { all, limit } => list(all, limit, json_out, project_root, &store, out),
        Action::Show { id } => show(id, json_out, &store, out),
        Action::Search { query, all, limit } => {
            search(query, all, limit, json_out, project_root, &store, out)
        }
        Action::Export { id, json, output } => export(id, json, output, &store, out),
        Action::Delete { id, yes } => delete(id, yes, &mut store, out),
    }
}

fn list(
    all: bool,
    limit: usize,
    json_out: bool,
    project_root: &Path,
    store: &Store,
    out: &mut dyn Write,
) -> Result<()> {
    let sessions = crate::sessions::list(store, (!all).then_some(project_root), limit, 0)?;
    if json_out {
        writeln!(out, "{}", serde_json::to_string_pretty(&sessions)?)?;
    } else if sessions.is_empty() {
        writeln!(
            out,
            "No sessions{}.",
            if all {
                ""
            } else {
                " in this project (--all for every project)"
            }
        )?;
    } else {
        let now = chrono::Utc::now().timestamp_millis();
        for s in sessions {
            writeln!(
                out,
                "{}  {:>9}  {:>4} msgs  {}",
                &s.id.as_str()[..s.id.as_str().len().min(13)],
                crate::sessions::age(now, s.updated_at),
                s.message_count,
                one_line_max(s.display_title(), 80)
            )?;
        }
    }
    Ok(())
}

fn show(id: String, json_out: bool, store: &Store, out: &mut dyn Write) -> Result<()> {
    let id = store.resolve_id(&id)?;
    let summary = store.session(&id)?;
    let messages = store.load_messages(&id)?;
    if json_out {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&store.export_json(&id)?)?
        )?;
        return Ok(());
    }
    writeln!(out, "{}  {}", summary.id, summary.display_title())?;
    writeln!(
        out,
        "{} · {} · {} messages · {} in / {} out tokens · ${:.4}",
        summary.model,
        summary.cwd.display(),
        summary.message_count,
        summary.input_tokens,
        summary.output_tokens,
        summary.cost
    )?;
    for (_, m, meta) in messages {
        let undone = if meta.status == MessageStatus::Undone {
            " (undone)"
        } else {
            ""
        };
        for p in &m.parts {
            match (m.role, p) {
                (Role::User, Part::Text { text }) => {
                    writeln!(out, "\n> {}{undone}", text.replace('\n', "\n> "))?
                }
                (Role::Assistant, Part::Text { text }) => writeln!(out, "\n{text}")?,
                (_, Part::ToolCall { name, input, .. }) => {
                    writeln!(out, "→ {name} {}", one_line_max(&input.to_string(), 120))?
                }
                (
                    _,
                    Part::ToolResult {
                        content, is_error, ..
                    },
                ) => {
                    let text = result_text(content);
                    let mark = if *is_error { "✗" } else { "✓" };
                    writeln!(out, "  {mark} {}", one_line_max(&text, 120))?
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn search(
    query: String,
    all: bool,
    limit: usize,
    json_out: bool,
    project_root: &Path,
    store: &Store,
    out: &mut dyn Write,
) -> Result<()> {
    let root = (!all).then_some(project_root);
    let hits = crate::sessions::search(store, &query, root, limit, false)?;
    if json_out {
        let v: Vec<_> = hits
            .iter()
            .map(|h| {
                json!({
                    "session_id": h.session_id,
                    "message_id": h.message_id,
                    "title": h.title,
                    "snippet": h.snippet.replace([MATCH_START, MATCH_END], ""),
                    "updated_at": h.updated_at,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else if hits.is_empty() {
        writeln!(
            out,
            "Nothing matches `{query}`{}.",
            if all {
                ""
            } else {
                " in this project (--all for every project)"
            }
        )?;
    } else {
        for h in hits {
            let snippet = h
                .snippet
                .replace(MATCH_START, "\x1b[1m")
                .replace(MATCH_END, "\x1b[22m");
            writeln!(
                out,
                "{}  {}\n    {}",
                &h.session_id.as_str()[..h.session_id.as_str().len().min(13)],
                one_line_max(h.title.as_deref().unwrap_or("(untitled)"), 70),
                one_line_max(&snippet, 160)
            )?;
        }
    }
    Ok(())
}

fn export(
    id: String,
    as_json: bool,
    output: Option<std::path::PathBuf>,
    store: &Store,
    out: &mut dyn Write,
) -> Result<()> {
    let id = store.resolve_id(&id)?;
    let (text, _) = crate::sessions::export_text(store, &id, as_json)?;
    match output {
        Some(path) => {
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            writeln!(out, "Exported {} to {}", id, path.display())?;
        }
        None => write!(out, "{text}")?,
    }
    Ok(())
}

fn delete(id: String, yes: bool, store: &mut Store, out: &mut dyn Write) -> Result<()> {
    let id = store.resolve_id(&id)?;
    let s = store.session(&id)?;
    if !yes {
        anyhow::bail!(
            "this deletes \"{}\" ({} messages) for good; run again with --yes to confirm",
            s.display_title(),
            s.message_count
        );
    }
    store.delete_session(&id)?;
    writeln!(out, "Deleted {id}")?;
    Ok(())
}

/// `s` on one line, cut to `max` characters.
fn one_line_max(s: &str, max: usize) -> String {
    crate::text::truncate_chars(&crate::text::one_line(s), max)
}
