//! The background job a `bash` call started, in that call's pane: its id,
//! its latest output as it arrives, its clock while it runs, and then its
//! exit code and run time, or that it was stopped.

use std::time::{Duration, Instant};

use ratatui::style::Style;
use ratatui::text::Span;

use super::{LIVE_MAX_BYTES, SPINNER, format_elapsed, format_running, output};
use crate::tools::jobs::JobEnd;
use crate::tui::styles::Styles;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPane {
    pub id: String,
    /// Its newest output (colour codes kept), at most `LIVE_MAX_BYTES`.
    pub output: String,
    pub end: Option<JobEnd>,
}

impl JobPane {
    pub fn new(id: String) -> Self {
        JobPane {
            id,
            output: String::new(),
            end: None,
        }
    }

    pub fn running(&self) -> bool {
        self.end.is_none()
    }

    pub fn push(&mut self, chunk: &str) {
        output::push_capped(&mut self.output, chunk, LIVE_MAX_BYTES);
    }

    /// The header's tail: `background job-1 · running 3s`, `… · exit 0 ·
    /// 2s`, `… · killed · 5s`, and its style.
    pub fn status(&self, started: Instant, now: Instant, styles: &Styles) -> (String, Style) {
        let id = &self.id;
        let (what, ran, style) = match self.end {
            None => {
                let ran = now.saturating_duration_since(started);
                return (
                    format!("background {id} · running {}", format_running(ran)),
                    styles.accent,
                );
            }
            Some(JobEnd::Exited { code: 0, ran }) => ("exit 0".to_string(), ran, styles.success),
            Some(JobEnd::Exited { code, ran }) => (format!("exit {code}"), ran, styles.error),
            Some(JobEnd::Killed { ran }) => ("killed".to_string(), ran, styles.warning),
        };
        (
            format!("background {id} · {what} · {}", format_elapsed(ran)),
            style,
        )
    }

    /// The gutter's glyph: a spinner while it runs, then how it ended.
    pub fn glyph(&self, running_for: Duration, styles: &Styles) -> Span<'static> {
        match self.end {
            None => {
                let frame = (running_for.as_millis() / 100) as usize;
                Span::styled(SPINNER[frame % SPINNER.len()], styles.accent)
            }
            Some(JobEnd::Exited { code: 0, .. }) => Span::styled("✓", styles.success),
            Some(JobEnd::Exited { .. }) => Span::styled("✗", styles.error),
            Some(JobEnd::Killed { .. }) => Span::styled("⊘", styles.warning),
        }
    }
}
