//! The bottom line: model, mode, context, cost, place, activity, mouse.
//! Parts drop out by priority when the terminal is narrow.

use std::path::Path;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::config::Mode;
use crate::tui::styles::Styles;
use crate::tui::widgets::tool_cell::{SPINNER, format_running};

/// What the agent is doing, for the status line.
#[derive(Debug, Clone, PartialEq)]
pub enum Activity {
    Idle,
    Thinking {
        since: Instant,
    },
    Responding {
        since: Instant,
    },
    RunningTool {
        name: String,
        since: Instant,
    },
    WaitingForPermission,
    Retrying {
        until: Instant,
        attempt: u32,
        max: u32,
    },
}

#[derive(Debug, Clone, Default)]
pub struct UsageInfo {
    pub context_tokens: u64,
    pub context_window: u64,
    pub cost: Option<f64>,
}

/// What the line shows, borrowed from the interface's model.
pub struct StatusInfo<'a> {
    pub styles: &'a Styles,
    pub provider: &'a str,
    pub model: &'a str,
    /// The reasoning effort asked for, when one is set.
    pub effort: Option<crate::config::effort::Effort>,
    pub mode: Mode,
    pub usage: &'a UsageInfo,
    pub cwd: &'a PathBuf,
    pub git_branch: Option<&'a str>,
    pub activity: &'a Activity,
    pub now: Instant,
    pub mouse_captured: bool,
    /// GNU screen: with the mouse on, a lone Esc waits for the next key.
    pub holds_lone_esc: bool,
    /// Why the session store refuses writes, while it does.
    pub store_warning: Option<&'a str>,
    /// MCP servers up / starting / enabled, once any is configured.
    pub servers: Option<crate::tools::SourceHealth>,
    /// The language servers started so far.
    pub language_servers: &'a [crate::protocol::ServerStatus],
    /// The sandbox commands run in.
    pub sandbox: &'a crate::tui::sandbox_view::SandboxView,
    /// The session is open in another cairn: shown, never sent to.
    pub read_only: bool,
    /// Background jobs still running.
    pub jobs_running: usize,
}

/// One part of the line; lower `priority` is dropped first.
struct Part {
    text: String,
    style: Style,
    priority: u8,
}

pub fn render(model: &StatusInfo, area: Rect, buf: &mut Buffer) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let s = model.styles;
    let mut parts = parts(model);
    drop_to_fit(&mut parts, area.width as usize);
    // The theme's status colours fill the whole row; each part's own
    // colour (a warning, the mode) is drawn over them.
    buf.set_style(area, s.status_bar);
    let mut spans = Vec::new();
    for (i, p) in parts.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", s.status_bar.patch(s.dim)));
        }
        spans.push(Span::styled(p.text, s.status_bar.patch(p.style)));
    }
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}

/// Everything the line could show, most important first to keep.
fn parts(model: &StatusInfo) -> Vec<Part> {
    let s = model.styles;
    let mut parts = Vec::new();
    if let Some(why) = model.store_warning {
        parts.push(Part {
            text: format!("not saved: {}", crate::term_safe::escape(why)),
            style: s.error,
            priority: 10,
        });
    }
    if model.read_only {
        parts.push(Part {
            text: "read-only (open in another cairn)".into(),
            style: s.warning,
            priority: 9,
        });
    }
    if model.jobs_running > 0 {
        let n = model.jobs_running;
        parts.push(Part {
            text: format!(
                "{n} {} running (/jobs)",
                crate::text::plural(n, "job", "jobs")
            ),
            style: s.accent,
            priority: 7,
        });
    }
    if let Some(a) = activity(model) {
        parts.push(Part {
            text: a,
            style: s.accent,
            priority: 9,
        });
    }
    parts.push(Part {
        text: if model.model.is_empty() {
            model.provider.to_string()
        } else {
            format!("{}/{}", model.provider, model.model)
        },
        style: s.status,
        priority: 6,
    });
    if let Some(effort) = model.effort {
        parts.push(Part {
            text: format!("effort {effort}"),
            style: s.status,
            priority: 5,
        });
    }
    let mode_style = if model.mode == Mode::Auto {
        s.warning
    } else {
        s.accent
    };
    parts.push(Part {
        text: model.mode.to_string(),
        style: mode_style,
        priority: 8,
    });
    if !model.sandbox.label.is_empty() {
        parts.push(Part {
            text: model.sandbox.label.clone(),
            style: if model.sandbox.off { s.error } else { s.dim },
            priority: 5,
        });
    }
    parts.extend(usage_parts(model));
    let mut place = shorten_path(model.cwd);
    if let Some(b) = model.git_branch {
        place.push_str(&format!(" ({b})"));
    }
    parts.push(Part {
        text: place,
        style: s.dim,
        priority: 3,
    });
    parts.extend(servers(model));
    parts.extend(language_servers(model));
    let mouse = match (model.mouse_captured, model.holds_lone_esc) {
        (false, false) => Some("mouse off (F2)"),
        (false, true) => Some("screen: mouse off so Esc works (F2 on)"),
        (true, true) => Some("screen: Esc waits for a key; F2 mouse off"),
        (true, false) => None,
    };
    if let Some(text) = mouse {
        parts.push(Part {
            text: text.into(),
            style: s.warning,
            priority: 8,
        });
    }
    parts
}

/// The context used and the cost so far.
fn usage_parts(model: &StatusInfo) -> Vec<Part> {
    let (s, u) = (model.styles, model.usage);
    let mut out = Vec::new();
    if let Some(pct) = (u.context_tokens * 100)
        .checked_div(u.context_window)
        .filter(|_| u.context_tokens > 0)
    {
        out.push(Part {
            text: format!("context {} ({pct}%)", tokens(u.context_tokens)),
            style: if pct >= 80 { s.warning } else { s.status },
            priority: 7,
        });
    }
    if let Some(cost) = u.cost {
        out.push(Part {
            text: format!("${cost:.2}"),
            style: s.status,
            priority: 4,
        });
    }
    out
}

/// Drops the least important parts until the line fits `width`.
fn drop_to_fit(parts: &mut Vec<Part>, width: usize) {
    loop {
        let total: usize = parts.iter().map(|p| p.text.chars().count()).sum::<usize>()
            + 3 * parts.len().saturating_sub(1);
        if total <= width || parts.len() <= 1 {
            break;
        }
        if let Some((i, _)) = parts.iter().enumerate().min_by_key(|(_, p)| p.priority) {
            parts.remove(i);
        }
    }
}

/// `mcp 2/3`, with `…` while one starts; a warning colour when one is down.
fn servers(model: &StatusInfo) -> Option<Part> {
    let h = model.servers.filter(|h| h.total > 0)?;
    let s = model.styles;
    let down = h.total - h.ready - h.starting;
    Some(Part {
        text: format!(
            "mcp {}/{}{}",
            h.ready,
            h.total,
            if h.starting > 0 { " …" } else { "" }
        ),
        style: if down > 0 { s.warning } else { s.status },
        priority: 5,
    })
}

/// Language servers while they matter: starting, busy, or failed (a
/// failed one checks nothing, so it stays shown); ready ones say nothing.
fn language_servers(model: &StatusInfo) -> Vec<Part> {
    use crate::protocol::ServerState;
    let s = model.styles;
    model
        .language_servers
        .iter()
        .filter_map(|l| {
            let (text, style, priority) = match &l.state {
                ServerState::Ready => return None,
                ServerState::Starting => (format!("{} starting…", l.name), s.dim, 4),
                ServerState::Indexing(what) => (
                    format!("{}: {}", l.name, crate::term_safe::escape(what)),
                    s.dim,
                    4,
                ),
                ServerState::Failed(_) => (format!("{} failed (/lsp)", l.name), s.warning, 7),
            };
            Some(Part {
                text,
                style,
                priority,
            })
        })
        .collect()
}

fn activity(model: &StatusInfo) -> Option<String> {
    let now = model.now;
    let secs = |since| now.saturating_duration_since(since);
    let spin = |d: Duration| SPINNER[(d.as_millis() / 100) as usize % SPINNER.len()];
    let text = match model.activity {
        Activity::Idle => return None,
        Activity::Thinking { since } => {
            format!(
                "{} thinking {}",
                spin(secs(*since)),
                format_running(secs(*since))
            )
        }
        Activity::Responding { since } => {
            format!(
                "{} writing {}",
                spin(secs(*since)),
                format_running(secs(*since))
            )
        }
        Activity::RunningTool { name, since } => {
            format!(
                "{} running {name} {}",
                spin(secs(*since)),
                format_running(secs(*since))
            )
        }
        Activity::WaitingForPermission => "waiting for you".to_string(),
        Activity::Retrying {
            until,
            attempt,
            max,
        } => format!(
            "retrying in {}s ({attempt}/{max})",
            until.saturating_duration_since(now).as_secs_f64().ceil() as u64
        ),
    };
    Some(text)
}

fn tokens(n: u64) -> String {
    if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// `~/src/cairn` for a path under home; only the last two parts if long.
pub fn shorten_path(p: &Path) -> String {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let s = match home.as_deref().and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    };
    let parts: Vec<&str> = s.split('/').collect();
    if parts.len() > 4 {
        format!("…/{}", parts[parts.len() - 2..].join("/"))
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortens_long_paths() {
        assert_eq!(shorten_path(Path::new("/a/b/c/d/e")), "…/d/e");
        assert_eq!(shorten_path(Path::new("/a/b")), "/a/b");
        assert_eq!(tokens(12_345), "12.3k");
    }
}
