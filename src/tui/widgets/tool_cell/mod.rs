//! One tool call in the transcript: a header with status and the tool's own
//! run time, what a command is and where it ran, its output as it arrives
//! (colours kept), an edit's diff inline.

use std::time::{Duration, Instant};

use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::protocol::ToolStatus;
use crate::text::fit as truncate;
use crate::tools::ToolDisplay;
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;
use crate::tui::widgets::diff_view::{DiffLayout, DiffOptions, DiffView};

mod command;
mod job;
mod output;

pub use job::JobPane;
pub use output::End;

/// Diff lines shown while folded.
const DIFF_PREVIEW_LINES: usize = 16;
/// Output kept while a command runs; older output is dropped from the
/// screen (the model gets the whole answer at the end).
const LIVE_MAX_BYTES: usize = 256 * 1024;

pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    /// Announced by the model, not yet judged or started.
    Pending,
    /// A dialog asks the person; no time counts.
    Waiting,
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
    /// When the call was announced, then when it started running.
    pub started: Instant,
    /// Whether it ever ran (a denied call has no run time).
    ran: bool,
    pub elapsed: Option<Duration>,
    pub output: String,
    /// Output streamed while running (colour codes kept).
    pub live: String,
    pub display: Option<ToolDisplay>,
    /// A `bash` call's command and the model's description of it.
    pub command: Option<String>,
    pub description: Option<String>,
    /// The background job the call started, followed live.
    pub job: Option<Box<JobPane>>,
    /// "`AGENTS.md` changes the instructions of every future session",
    /// for a write of an instruction file.
    pub instructions: Option<String>,
    /// An `agent` call's sub-agent's own tool calls, in order: what each
    /// was and how it ended (`None` while it runs); shown when expanded.
    pub steps: Vec<Step>,
}

/// One tool call of a sub-agent, as its pane lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub call_id: String,
    pub summary: String,
    pub status: Option<ToolStatus>,
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
            ran: true,
            elapsed: None,
            output: String::new(),
            live: String::new(),
            display: None,
            command: None,
            description: None,
            job: None,
            instructions: None,
            steps: Vec::new(),
        }
    }

    /// A call the agent just announced: it waits to be judged, and its
    /// time starts when it runs.
    pub fn announced(call_id: String, name: String, summary: String, now: Instant) -> Self {
        ToolCell {
            state: CallState::Pending,
            ran: false,
            ..ToolCell::new(call_id, name, summary, now)
        }
    }

    /// Takes what the pane shows from the call's input (a command and its
    /// description).
    pub fn with_input(mut self, input: &Value) -> Self {
        if self.name == "bash" {
            let text = |k: &str| {
                input
                    .get(k)
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
            };
            self.command = text("command");
            self.description = text("description");
        }
        self.instructions = crate::extensions::instruction_files::call_mark(&self.name, input);
        self
    }

    pub fn wait_for_approval(&mut self) {
        if !self.is_finished() {
            self.state = CallState::Waiting;
        }
    }

    /// The call starts running now: the clock starts.
    pub fn start_running(&mut self, now: Instant) {
        if !self.is_finished() {
            self.state = CallState::Running;
            self.started = now;
            self.ran = true;
            self.live.clear();
        }
    }

    /// Appends streamed output, keeping at most the newest `LIVE_MAX_BYTES`.
    pub fn push_output(&mut self, chunk: &str) {
        output::push_capped(&mut self.live, chunk, LIVE_MAX_BYTES);
    }

    /// The call finished by leaving a job running in the background: the
    /// pane follows it from now on (see `AgentEvent::JobOutput`).
    pub fn follow_job(&mut self) {
        if let (CallState::Finished(ToolStatus::Done), Some(ToolDisplay::Job { job_id })) =
            (self.state, &self.display)
        {
            self.job = Some(Box::new(JobPane::new(job_id.clone())));
        }
    }

    /// More output of the job this call started.
    pub fn push_job_output(&mut self, chunk: &str) {
        if let Some(job) = self.job.as_mut().filter(|j| j.running()) {
            job.push(chunk);
        }
    }

    /// The job this call started ended.
    pub fn end_job(&mut self, end: crate::tools::jobs::JobEnd) {
        if let Some(job) = &mut self.job {
            job.end = Some(end);
        }
    }

    fn job_running(&self) -> bool {
        self.job.as_ref().is_some_and(|j| j.running())
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
        self.elapsed = self
            .ran
            .then(|| now.saturating_duration_since(self.started));
        self.progress = None;
        self.live = String::new();
    }

    /// Not finished: pending, waiting for the person, or running.
    pub fn is_running(&self) -> bool {
        !self.is_finished()
    }

    fn is_finished(&self) -> bool {
        matches!(self.state, CallState::Finished(_))
    }

    /// Whether the pane changes with time (a spinner, a clock), its
    /// background job's included.
    pub fn is_ticking(&self) -> bool {
        matches!(self.state, CallState::Pending | CallState::Running) || self.job_running()
    }

    /// `$ cargo test`, `edit src/main.rs +3 −1`.
    pub fn title(&self) -> String {
        if let Some(cmd) = &self.command {
            return format!("$ {}", crate::text::first_line_marked(cmd, 400));
        }
        let mut t = if self.summary.is_empty() {
            self.name.clone()
        } else if self.summary.starts_with(&self.name) {
            self.summary.clone()
        } else {
            format!("{} {}", self.name, self.summary)
        };
        let diffs = self.display.as_ref().map_or(&[][..], ToolDisplay::diffs);
        if !diffs.is_empty() {
            let added: usize = diffs.iter().map(|d| d.added).sum();
            let removed: usize = diffs.iter().map(|d| d.removed).sum();
            t.push_str(&format!(" +{added} −{removed}"));
        }
        t
    }

    /// What `y` copies: the whole command (or the title) and the output.
    pub fn copy_text(&self) -> String {
        let head = match &self.command {
            Some(cmd) => format!("$ {cmd}"),
            None => self.title(),
        };
        let out = if let Some(job) = &self.job {
            job.output.clone()
        } else if self.is_finished() {
            self.output.clone()
        } else {
            crate::ansi::strip(&self.live)
        };
        let out = crate::ansi::strip(out.trim_end_matches('\n'));
        if out.is_empty() {
            head
        } else {
            format!("{head}\n{out}")
        }
    }

    /// The status glyph for the gutter.
    pub fn glyph(&self, styles: &Styles, now: Instant) -> Span<'static> {
        if let Some(job) = &self.job {
            return job.glyph(now.saturating_duration_since(self.started), styles);
        }
        match self.state {
            CallState::Pending | CallState::Running => {
                let frame =
                    (now.saturating_duration_since(self.started).as_millis() / 100) as usize;
                Span::styled(SPINNER[frame % SPINNER.len()], styles.accent)
            }
            CallState::Waiting => Span::styled("?", styles.warning),
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
        if let Some(mark) = &self.instructions {
            let text = truncate(&format!("  ⚑ {mark}"), width as usize);
            out.push(Line::from(Span::styled(text, styles.warning)));
        }
        if let Some(p) = &self.progress {
            out.push(dim_line(&format!("  {p}"), width, styles));
        }
        command::details(self, width, expanded, styles, &mut out);
        if expanded && !self.steps.is_empty() {
            for Step {
                summary, status, ..
            } in &self.steps
            {
                let (mark, style) = match status {
                    None => ("…", styles.dim),
                    Some(ToolStatus::Done) => ("✓", styles.success),
                    Some(ToolStatus::Failed) => ("✗", styles.error),
                    Some(_) => ("⊘", styles.warning),
                };
                let text = truncate(&format!(" {summary}"), width.saturating_sub(4) as usize);
                out.push(Line::from(vec![
                    Span::styled(format!("  {mark}"), style),
                    Span::styled(text, styles.dim),
                ]));
            }
        }
        if self.diff_lines(width, expanded, styles, theme, &mut out)
            && self.state == CallState::Finished(ToolStatus::Done)
        {
            if let Some(line) = self.rejected_line(width, styles) {
                out.push(line);
            }
            if let Some(line) = self.format_line(width, styles) {
                out.push(line);
            }
            // The language server's verdict, as the model got it.
            for (text, problem) in crate::lsp::verdict::pane_notes(&self.output) {
                let style = if problem { styles.warning } else { styles.dim };
                let text = truncate(&clean(&format!("  {text}")), width as usize);
                out.push(Line::from(Span::styled(text, style)));
            }
            return out;
        }
        let (text, end) = if let Some(job) = &self.job {
            // What the model was told ("started as job-1") is in the header.
            (job.output.as_str(), End::Tail)
        } else if self.is_finished() {
            (
                self.poll_output(width, styles, &mut out),
                End::for_tool(&self.name),
            )
        } else {
            (self.live.as_str(), End::Tail)
        };
        out.extend(output::lines(text, end, expanded, width, styles));
        out
    }

    /// A finished call's output; a `job_output` poll's status line ("job-1
    /// (…): still running") goes above it as a subtitle, so the folded
    /// tail of what the poll returned never hides it.
    fn poll_output(&self, width: u16, styles: &Styles, out: &mut Vec<Line<'static>>) -> &str {
        if self.name != "job_output" {
            return &self.output;
        }
        match self.output.split_once('\n') {
            Some((status, rest)) => {
                out.push(dim_line(&format!("  {status}"), width, styles));
                rest
            }
            None => &self.output,
        }
    }

    /// "1 of 3 hunks rejected by you, not applied: why", under an edit's
    /// diff (which shows only what was applied).
    fn rejected_line(&self, width: u16, styles: &Styles) -> Option<Line<'static>> {
        let (out, all, why) = crate::tools::hunks::rejected_tally(&self.output)?;
        let mut text = format!("  {out} of {all} hunks rejected by you, not applied");
        if let Some(why) = why.filter(|w| !w.is_empty()) {
            text.push_str(": ");
            text.push_str(why);
        }
        let text = truncate(&text, width as usize);
        Some(Line::from(Span::styled(text, styles.warning)))
    }

    /// "formatted by rustfmt", or why the edit was not formatted, under
    /// its diff (which shows the file as formatted).
    fn format_line(&self, width: u16, styles: &Styles) -> Option<Line<'static>> {
        let (text, style) = match crate::tools::format::note_of(&self.output)? {
            Ok(done) => (format!("  {done}"), styles.dim),
            Err(why) => (format!("  not formatted: {why}"), styles.warning),
        };
        Some(Line::from(Span::styled(
            truncate(&clean(&text), width as usize),
            style,
        )))
    }

    /// An edit's diff, folded to a preview unless expanded; whether there
    /// was one.
    fn diff_lines(
        &self,
        width: u16,
        expanded: bool,
        styles: &Styles,
        theme: &Theme,
        out: &mut Vec<Line<'static>>,
    ) -> bool {
        let diffs = self.display.as_ref().map_or(&[][..], ToolDisplay::diffs);
        if diffs.is_empty() {
            return false;
        }
        let mut diff = Vec::new();
        for d in diffs {
            if diffs.len() > 1 {
                let head = format!("── {}  +{} −{}", d.path, d.added, d.removed);
                diff.push(Line::from(Span::styled(
                    crate::text::fit(&head, usize::from(width.saturating_sub(2).max(1))),
                    styles.accent,
                )));
            }
            diff.extend(DiffView::new(&d.path, &d.old, &d.new).lines(
                width.saturating_sub(2).max(1),
                DiffLayout::Unified,
                theme,
                DiffOptions {
                    context: 3,
                    fold: !expanded,
                    line_numbers: true,
                    highlight: crate::tui::widgets::diff_view::highlight_affordable(&d.old, &d.new),
                },
            ));
        }
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
            out.push(output::more_line(hidden, styles));
        }
        true
    }

    fn header(&self, width: u16, styles: &Styles, now: Instant) -> Line<'static> {
        let (tail, style) = match &self.job {
            Some(job) => job.status(self.started, now, styles),
            None => self.status(styles, now),
        };
        let room = (width as usize).saturating_sub(tail.chars().count() + 2);
        Line::from(vec![
            Span::styled(truncate(&clean(&self.title()), room), styles.tool_name),
            Span::raw("  "),
            Span::styled(tail, style),
        ])
    }

    /// The header's tail: the state and the run time.
    fn status(&self, styles: &Styles, now: Instant) -> (String, ratatui::style::Style) {
        let (label, style) = match self.state {
            CallState::Pending => ("", styles.accent),
            CallState::Waiting => ("waiting for approval", styles.warning),
            CallState::Running => ("running", styles.accent),
            CallState::Finished(ToolStatus::Done) => ("", styles.success),
            CallState::Finished(ToolStatus::Failed) => ("failed", styles.error),
            CallState::Finished(ToolStatus::Denied) => ("denied", styles.warning),
            CallState::Finished(ToolStatus::Blocked) => ("blocked", styles.error),
            CallState::Finished(ToolStatus::Cancelled) => ("cancelled", styles.warning),
        };
        let time = match self.state {
            CallState::Running => Some(format_running(now.saturating_duration_since(self.started))),
            CallState::Finished(_) => self.elapsed.map(format_elapsed),
            CallState::Pending | CallState::Waiting => None,
        };
        let tail = [label.to_string(), time.unwrap_or_default()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        (tail, style)
    }
}

/// One line of text with control characters removed.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect()
}

fn dim_line(text: &str, width: u16, styles: &Styles) -> Line<'static> {
    Line::from(Span::styled(
        truncate(&clean(text), width as usize),
        styles.dim,
    ))
}

/// A clock that is still running: whole seconds (`0s`, `42s`, `1m05s`), the
/// same in a pane's header, a job's and the status line.
pub fn format_running(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// How long something took, once it ended (`901ms`, `3s`, `2m01s`).
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

#[cfg(test)]
mod tests;

#[cfg(test)]
mod job_tests;
