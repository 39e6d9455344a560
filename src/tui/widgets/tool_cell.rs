//! One tool call in the transcript: a summary line with status and time, a
//! short output preview (all of it when expanded), an edit's diff inline.

use std::time::{Duration, Instant};

use ratatui::text::{Line, Span};

use crate::agent::ToolStatus;
use crate::text::fit as truncate;
use crate::tools::ToolDisplay;
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;
use crate::tui::widgets::diff_view::{DiffLayout, DiffOptions, DiffView};
use crate::tui::wrap::wrap_prefixed;

/// Output lines shown while folded.
const PREVIEW_LINES: usize = 5;
/// Diff lines shown while folded.
const DIFF_PREVIEW_LINES: usize = 16;

pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    Running,
    Finished(ToolStatus),
}

#[derive(Debug, Clone)]
pub struct ToolCell {
    pub call_id: String,
    pub name: String,
    pub summary: String,
    pub state: CallState,
    pub progress: Option<String>,
    pub started: Instant,
    pub elapsed: Option<Duration>,
    pub output: String,
    pub display: Option<ToolDisplay>,
}

impl ToolCell {
    pub fn new(call_id: String, name: String, summary: String, now: Instant) -> Self {
        ToolCell {
            call_id,
            name,
            summary,
            state: CallState::Running,
            progress: None,
            started: now,
            elapsed: None,
            output: String::new(),
            display: None,
        }
    }

    pub fn finish(
        &mut self,
        status: ToolStatus,
        output: String,
        display: Option<ToolDisplay>,
        now: Instant,
    ) {
        self.state = CallState::Finished(status);
        self.output = output;
        self.display = display;
        self.elapsed = Some(now.saturating_duration_since(self.started));
        self.progress = None;
    }

    pub fn is_running(&self) -> bool {
        self.state == CallState::Running
    }

    /// `bash cargo test`, `edit src/main.rs +3 −1`.
    pub fn title(&self) -> String {
        let mut t = if self.summary.is_empty() {
            self.name.clone()
        } else if self.summary.starts_with(&self.name) {
            self.summary.clone()
        } else {
            format!("{} {}", self.name, self.summary)
        };
        if let Some(ToolDisplay::Diff(crate::diff::FileDiff { added, removed, .. })) = &self.display
        {
            t.push_str(&format!(" +{added} −{removed}"));
        }
        t
    }

    /// The status glyph for the gutter.
    pub fn glyph(&self, styles: &Styles, now: Instant) -> Span<'static> {
        match self.state {
            CallState::Running => {
                let frame =
                    (now.saturating_duration_since(self.started).as_millis() / 100) as usize;
                Span::styled(SPINNER[frame % SPINNER.len()], styles.accent)
            }
            CallState::Finished(ToolStatus::Done) => Span::styled("✓", styles.success),
            CallState::Finished(ToolStatus::Failed) => Span::styled("✗", styles.error),
            CallState::Finished(_) => Span::styled("⊘", styles.warning),
        }
    }

    pub fn lines(
        &self,
        width: u16,
        expanded: bool,
        styles: &Styles,
        theme: &Theme,
        now: Instant,
    ) -> Vec<Line<'static>> {
        let mut out = vec![self.header(width, styles, now)];
        if let Some(p) = &self.progress {
            out.push(Line::from(Span::styled(
                truncate(&format!("  {p}"), width as usize),
                styles.dim,
            )));
        }
        if let Some(ToolDisplay::Command { sandbox, stopped }) = &self.display {
            out.push(Line::from(Span::styled(
                truncate(&format!("  {sandbox}"), width as usize),
                styles.dim,
            )));
            if let Some(stop) = stopped {
                out.push(Line::from(Span::styled(
                    truncate(&format!("  {}", stop.summary()), width as usize),
                    styles.warning,
                )));
            }
        }
        if let Some(ToolDisplay::Diff(crate::diff::FileDiff { path, old, new, .. })) = &self.display
        {
            let diff = DiffView::new(path, old, new).lines(
                width.saturating_sub(2).max(1),
                DiffLayout::Unified,
                theme,
                DiffOptions {
                    context: 3,
                    fold: !expanded,
                    line_numbers: true,
                    highlight: crate::tui::widgets::diff_view::highlight_affordable(old, new),
                },
            );
            let shown = if expanded {
                diff.len()
            } else {
                diff.len().min(DIFF_PREVIEW_LINES)
            };
            let hidden = diff.len() - shown;
            for mut l in diff.into_iter().take(shown) {
                l.spans.insert(0, Span::raw("  "));
                out.push(l);
            }
            if hidden > 0 {
                out.push(more_line(hidden, styles));
            }
            if self.state == CallState::Finished(ToolStatus::Done) {
                return out;
            }
        }
        let text = self.output.trim_end_matches('\n');
        if text.is_empty() {
            return out;
        }
        let all: Vec<&str> = text.split('\n').collect();
        let skip = if expanded {
            0
        } else {
            all.len().saturating_sub(PREVIEW_LINES)
        };
        if skip > 0 {
            out.push(more_line(skip, styles));
        }
        let style = if self.state == CallState::Finished(ToolStatus::Failed) {
            styles.error
        } else {
            styles.dim
        };
        let body = all[skip..].join("\n");
        out.extend(wrap_prefixed(
            &body,
            width,
            Span::styled("│ ", styles.border),
            Span::styled("│ ", styles.border),
            style,
        ));
        out
    }

    fn header(&self, width: u16, styles: &Styles, now: Instant) -> Line<'static> {
        let elapsed = self
            .elapsed
            .unwrap_or_else(|| now.saturating_duration_since(self.started));
        let (label, style) = match self.state {
            CallState::Running => ("running", styles.accent),
            CallState::Finished(ToolStatus::Done) => ("", styles.success),
            CallState::Finished(ToolStatus::Failed) => ("failed", styles.error),
            CallState::Finished(ToolStatus::Denied) => ("denied", styles.warning),
            CallState::Finished(ToolStatus::Blocked) => ("blocked", styles.error),
            CallState::Finished(ToolStatus::Cancelled) => ("cancelled", styles.warning),
        };
        let mut tail = format_elapsed(elapsed);
        if !label.is_empty() {
            tail = format!("{label} {tail}");
        }
        let room = (width as usize).saturating_sub(tail.chars().count() + 2);
        Line::from(vec![
            Span::styled(truncate(&self.title(), room), styles.tool_name),
            Span::raw("  "),
            Span::styled(tail, style),
        ])
    }
}

fn more_line(n: usize, styles: &Styles) -> Line<'static> {
    Line::from(Span::styled(
        format!("  … {n} more lines (Tab, Enter to expand)"),
        styles.dim,
    ))
}

pub fn format_elapsed(d: Duration) -> String {
    let s = d.as_secs();
    if s < 1 {
        format!("{}ms", d.as_millis())
    } else if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}
