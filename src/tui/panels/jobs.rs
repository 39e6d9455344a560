//! `/jobs`: the session's background jobs in a list (command, how long it
//! has run or how it ended), the latest output of the highlighted one on
//! Enter, and stopping it after a yes. The rows are a snapshot `update`
//! refreshes while the panel is open, so clocks and ends show as they come.

use std::time::Instant;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{Outcome, PanelAction, boxed};
use crate::protocol::AgentCommand;
use crate::tools::jobs::JobEnd;
use crate::tui::keys::{Action, KeyMap};
use crate::tui::styles::Styles;
use crate::tui::widgets::tool_cell::{format_elapsed, format_running};

/// Output lines shown under the list for the highlighted job.
pub const TAIL_LINES: usize = 12;

/// A background job the session started, as the interface follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRow {
    /// The `bash` call that started it (its pane holds the output).
    pub call_id: String,
    pub job_id: String,
    pub command: String,
    pub started: Instant,
    pub end: Option<JobEnd>,
    /// Started by an earlier session (before `/new` or a resume), which
    /// stopped it when it ended: listed, never stoppable from here.
    pub earlier: bool,
}

impl JobRow {
    pub fn running(&self) -> bool {
        self.end.is_none()
    }

    /// `running 12s`, `exit 0 · 3s`, `killed · 5s`, and for a job of an
    /// earlier session `stopped with the earlier session · 5s`.
    pub fn state(&self, now: Instant) -> String {
        if let (true, Some(JobEnd::Killed { ran })) = (self.earlier, self.end) {
            return format!("stopped with the earlier session · {}", format_elapsed(ran));
        }
        let state = self.state_of_its_own(now);
        if self.earlier {
            format!("{state} · earlier session")
        } else {
            state
        }
    }

    fn state_of_its_own(&self, now: Instant) -> String {
        match self.end {
            None => format!(
                "running {}",
                format_running(now.saturating_duration_since(self.started))
            ),
            Some(JobEnd::Exited { code, ran }) => format!("exit {code} · {}", format_elapsed(ran)),
            Some(JobEnd::Killed { ran }) => format!("killed · {}", format_elapsed(ran)),
        }
    }
}

/// One row of the panel: what the list shows and the output's tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobView {
    pub job_id: String,
    pub command: String,
    pub state: String,
    pub running: bool,
    pub tail: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobsPanel {
    pub rows: Vec<JobView>,
    selected: usize,
    /// The highlighted job's output is shown under the list.
    output: bool,
    /// Asking whether to stop the highlighted job.
    confirm: bool,
}

impl JobsPanel {
    pub fn new(rows: Vec<JobView>) -> JobsPanel {
        // The newest job first catches the eye; the list is oldest first.
        let selected = rows.len().saturating_sub(1);
        JobsPanel {
            rows,
            selected,
            ..JobsPanel::default()
        }
    }

    /// New rows from `update`, keeping the highlighted job.
    pub fn refresh(&mut self, rows: Vec<JobView>) {
        let id = self.rows.get(self.selected).map(|r| r.job_id.clone());
        self.rows = rows;
        // Rows are only ever added, so the same place holds the same job;
        // an id alone is not enough (each session counts from job-1).
        let same_place = self.rows.get(self.selected).map(|r| &r.job_id) == id.as_ref();
        if !same_place
            && let Some(i) = id.and_then(|id| self.rows.iter().position(|r| r.job_id == id))
        {
            self.selected = i;
        }
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
        if !self.rows.get(self.selected).is_some_and(|r| r.running) {
            self.confirm = false;
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, keys: &KeyMap) -> Outcome {
        if self.confirm {
            self.confirm = false;
            if keys.is(Action::PanelConfirm, &key)
                && let Some(row) = self.rows.get(self.selected)
            {
                return Outcome {
                    keep: true,
                    action: PanelAction::Agent(AgentCommand::KillJob {
                        job_id: row.job_id.clone(),
                    }),
                };
            }
            return Outcome::keep();
        }
        if keys.is(Action::JobPrev, &key) {
            self.selected = self.selected.saturating_sub(1);
        } else if keys.is(Action::JobNext, &key) {
            self.selected = (self.selected + 1).min(self.rows.len().saturating_sub(1));
        } else if keys.is(Action::JobOutput, &key) {
            self.output = !self.output;
        } else if keys.is(Action::JobKill, &key) {
            self.confirm = self.rows.get(self.selected).is_some_and(|r| r.running);
        } else {
            return Outcome::stay(!keys.is(Action::PanelReject, &key));
        }
        Outcome::keep()
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, s: &Styles, keys: &KeyMap) {
        let mut lines = Vec::new();
        if self.rows.is_empty() {
            lines.push(Line::styled(
                "No background jobs in this session. A command the model starts with \
                 run_in_background shows here.",
                s.dim,
            ));
        }
        let id_w = self.rows.iter().map(|r| r.job_id.len()).max().unwrap_or(0);
        let state_w = self.rows.iter().map(|r| r.state.len()).max().unwrap_or(0);
        for (i, r) in self.rows.iter().enumerate() {
            let mark = if i == self.selected { "› " } else { "  " };
            let style = if i == self.selected { s.accent } else { s.text };
            let state_style = if r.running { s.accent } else { s.dim };
            lines.push(Line::from(vec![
                Span::styled(format!("{mark}{:id_w$}  ", r.job_id), style),
                Span::styled(format!("{:state_w$}  ", r.state), state_style),
                Span::styled(first_line(&r.command), style),
            ]));
        }
        if let Some(r) = self.rows.get(self.selected) {
            if self.confirm {
                lines.push(Line::default());
                lines.push(Line::styled(
                    format!(
                        "Stop {} and everything it started? y stops it, n keeps it",
                        r.job_id
                    ),
                    s.warning,
                ));
            } else if self.output {
                lines.push(Line::default());
                lines.push(Line::styled(format!("{} — latest output", r.job_id), s.dim));
                if r.tail.is_empty() {
                    lines.push(Line::styled("  (no output yet)", s.dim));
                }
                for l in &r.tail {
                    lines.push(Line::styled(format!("  {l}"), s.text));
                }
            }
        }
        lines.push(Line::default());
        let hint = format!(
            "{} output · {} stop · Esc closes",
            keys.keys_for(Action::JobOutput),
            keys.keys_for(Action::JobKill)
        );
        lines.push(Line::styled(hint, s.dim));
        boxed(" Background jobs ", lines, area, buf, s);
    }
}

/// The command's first line, with a mark when it has more.
fn first_line(command: &str) -> String {
    let mut lines = command.lines();
    let first = crate::tui::wrap::clean(lines.next().unwrap_or(""));
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first
    }
}

/// The last `TAIL_LINES` lines of `output`, colour codes and control
/// characters taken out.
pub fn tail(output: &str) -> Vec<String> {
    let text = crate::ansi::strip(output.trim_end_matches('\n'));
    let all: Vec<&str> = text.split('\n').collect();
    let from = all.len().saturating_sub(TAIL_LINES);
    all[from..]
        .iter()
        .filter(|l| !(all.len() == 1 && l.is_empty()))
        .map(|l| crate::tui::wrap::clean(l.trim_end_matches('\r')))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};
    use std::time::Duration;

    fn press(p: &mut JobsPanel, code: KeyCode) -> Outcome {
        p.handle_key(KeyEvent::new(code, KeyModifiers::NONE), &KeyMap::default())
    }

    fn view(id: &str, running: bool) -> JobView {
        JobView {
            job_id: id.into(),
            command: "sleep 100".into(),
            state: if running {
                "running 3s"
            } else {
                "exit 0 · 2s"
            }
            .into(),
            running,
            tail: vec!["line".into()],
        }
    }

    #[test]
    fn stopping_asks_first_and_only_for_a_running_job() {
        let mut p = JobsPanel::new(vec![view("job-1", false), view("job-2", true)]);
        assert_eq!(press(&mut p, KeyCode::Char('k')), Outcome::keep());
        assert!(p.confirm, "the newest job is highlighted and runs");
        let out = press(&mut p, KeyCode::Char('y'));
        assert_eq!(
            out.action,
            PanelAction::Agent(AgentCommand::KillJob {
                job_id: "job-2".into()
            })
        );
        press(&mut p, KeyCode::Up);
        press(&mut p, KeyCode::Delete);
        assert!(!p.confirm, "a finished job is not asked about");
        press(&mut p, KeyCode::Down);
        press(&mut p, KeyCode::Char('k'));
        assert_eq!(press(&mut p, KeyCode::Char('n')).action, PanelAction::None);
        assert!(!press(&mut p, KeyCode::Esc).keep);
    }

    #[test]
    fn a_row_says_how_long_and_how_it_ended() {
        let now = Instant::now();
        let mut row = JobRow {
            call_id: "c".into(),
            job_id: "job-1".into(),
            command: "x".into(),
            started: now - Duration::from_millis(2500),
            end: None,
            earlier: false,
        };
        assert_eq!(row.state(now), "running 2s");
        row.end = Some(JobEnd::Killed {
            ran: Duration::from_millis(900),
        });
        assert_eq!(row.state(now), "killed · 900ms");
        row.earlier = true;
        assert_eq!(row.state(now), "stopped with the earlier session · 900ms");
        assert_eq!(tail("a\nb\n"), vec!["a", "b"]);
        assert!(tail("").is_empty());
    }
}
