//! `cairn sessions list|show|search|export|delete`.

use crate::term_safe::escape;
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
        crate::private::create_dir(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    Store::open(&path).map_err(|e| match path.parent().and_then(why_unwritable) {
        Some(why) => anyhow::anyhow!("{e} ({why})"),
        None => e.into(),
    })
}

/// Why nothing can be written in `dir`, in plain words, when that is so
/// (SQLite's own message for a full or read-only disk can be obscure).
fn why_unwritable(dir: &Path) -> Option<String> {
    use std::io::Write;
    let probe = tempfile::Builder::new()
        .prefix(".cairn-probe-")
        .tempfile_in(dir)
        .and_then(|mut f| {
            f.write_all(&[0u8; 64 * 1024])?;
            f.as_file().sync_all()
        });
    let e = probe.err()?;
    use std::io::ErrorKind as K;
    Some(match e.kind() {
        K::ReadOnlyFilesystem => format!("{} is on a read-only file system", dir.display()),
        K::StorageFull | K::QuotaExceeded => format!("the disk holding {} is full", dir.display()),
        K::PermissionDenied => format!("cairn may not write in {}", dir.display()),
        _ => format!("cannot write in {}: {e}", dir.display()),
    })
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
            let short =
                |id: &crate::store::SessionId| id.as_str()[..id.as_str().len().min(13)].to_string();
            let child = match (&s.parent_id, s.subagent) {
                (Some(p), true) => format!("  (sub-agent of {})", short(p)),
                _ => String::new(),
            };
            writeln!(
                out,
                "{}  {:>9}  {:>4} msgs  {}{child}",
                short(&s.id),
                crate::sessions::age(now, s.updated_at),
                s.message_count,
                escape(&one_line_max(s.display_title(), 80))
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
    writeln!(out, "{}  {}", summary.id, escape(summary.display_title()))?;
    writeln!(
        out,
        "{} · {} · {} messages · {} in / {} out tokens · ${:.4}",
        escape(&summary.model),
        escape(&summary.cwd.display().to_string()),
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
                    writeln!(out, "\n> {}{undone}", escape(text).replace('\n', "\n> "))?
                }
                (Role::Assistant, Part::Text { text }) => writeln!(out, "\n{}", escape(text))?,
                (_, Part::ToolCall { name, input, .. }) => writeln!(
                    out,
                    "→ {} {}",
                    escape(name),
                    escape(&one_line_max(&input.to_string(), 120))
                )?,
                (
                    _,
                    Part::ToolResult {
                        content, is_error, ..
                    },
                ) => {
                    let text = result_text(content);
                    let mark = if *is_error { "✗" } else { "✓" };
                    writeln!(out, "  {mark} {}", escape(&one_line_max(&text, 120)))?
                }
                (_, Part::WebSearch(search)) => {
                    let query = escape(&one_line_max(&search.query_line(), 120));
                    writeln!(out, "⌕ web search \"{query}\"")?;
                    write_sources(out, &search.sources)?
                }
                (_, Part::Citations { sources }) => {
                    writeln!(out, "Sources:")?;
                    write_sources(out, sources)?
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Numbered sources, one line each, escaped (they came from the web).
fn write_sources(out: &mut dyn Write, sources: &[crate::conversation::Source]) -> Result<()> {
    for (i, s) in sources.iter().enumerate() {
        let title = if s.title.trim().is_empty() {
            &s.url
        } else {
            &s.title
        };
        let title = escape(&one_line_max(title, 100));
        writeln!(
            out,
            "  {}. {title} <{}>",
            i + 1,
            escape(&one_line_max(&s.url, 200))
        )?;
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
        let (bold, plain) = if crate::term_safe::stdout_styled() {
            ("\x1b[1m", "\x1b[22m")
        } else {
            ("", "")
        };
        for h in hits {
            let snippet = styled_snippet(&one_line_max(&h.snippet, 160), bold, plain);
            writeln!(
                out,
                "{}  {}\n    {}",
                &h.session_id.as_str()[..h.session_id.as_str().len().min(13)],
                escape(&one_line_max(
                    h.title.as_deref().unwrap_or("(untitled)"),
                    70
                )),
                snippet
            )?;
        }
    }
    Ok(())
}

/// A search snippet with its match markers turned into `bold`/`plain`
/// and the text between them escaped (the markers are controls, so they
/// are taken out before escaping, never shown as `^A`/`^B`).
fn styled_snippet(snippet: &str, bold: &str, plain: &str) -> String {
    let mut out = String::new();
    let mut piece = String::new();
    for c in snippet.chars() {
        if c == MATCH_START || c == MATCH_END {
            out.push_str(&escape(&piece));
            piece.clear();
            out.push_str(if c == MATCH_START { bold } else { plain });
        } else {
            piece.push(c);
        }
    }
    out.push_str(&escape(&piece));
    out
}

fn export(
    id: String,
    as_json: bool,
    output: Option<std::path::PathBuf>,
    store: &Store,
    out: &mut dyn Write,
) -> Result<()> {
    let id = store.resolve_id(&id)?;
    if let Some(path) = output {
        // Markdown's pictures go beside it, as the interface's `/export`
        // writes them (the links would point at nothing otherwise).
        crate::sessions::export_file(store, &id, as_json, &path, &crate::private::write)
            .with_context(|| format!("cannot write {}", path.display()))?;
        writeln!(out, "Exported {} to {}", id, path.display())?;
        return Ok(());
    }
    let (text, _) = crate::sessions::export_text(store, &id, as_json)?;
    // To a terminal it is shown, so escaped; into a pipe or a file it is
    // data, written exactly.
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        write!(out, "{}", escape(&text))?
    } else {
        write!(out, "{text}")?
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
