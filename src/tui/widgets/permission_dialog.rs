//! The modal that asks before a risky tool call: what, why, a preview, and
//! Allow once / Allow always (with the exact rule) / Deny (with a reason).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::permission::{Decision, PermissionRequest};
use crate::text::fit as truncate;
use crate::tools::Preview;
use crate::tui::keys::{Action, KeyMap};
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;
use crate::tui::widgets::diff_view::{DiffLayout, DiffOptions, DiffView};
use crate::tui::wrap::{wrap_plain, wrap_prefixed};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    AllowOnce,
    AllowAlways,
    /// Once, outside the sandbox: offered for commands that would run in one.
    AllowUnsandboxed,
    Deny,
}

#[derive(Debug, Clone)]
pub struct PermissionDialog {
    pub id: u64,
    pub request: PermissionRequest,
    pub choice: Choice,
    pub rule: usize,
    /// `None` picks by width; `t` forces one.
    pub layout: Option<DiffLayout>,
    pub scroll: usize,
    /// `Some` while typing the reason for a denial.
    pub deny_reason: Option<String>,
    /// Rows of preview at the last frame (for paging).
    preview_rows: u16,
    /// The preview wrapped for (width, layout): diffing and highlighting
    /// are too slow to redo on every frame.
    preview_cache: Option<(u16, Option<DiffLayout>, Vec<Line<'static>>)>,
}

impl PermissionDialog {
    pub fn new(id: u64, request: PermissionRequest) -> Self {
        PermissionDialog {
            id,
            request,
            choice: Choice::AllowOnce,
            rule: 0,
            layout: None,
            scroll: 0,
            deny_reason: None,
            preview_rows: 10,
            preview_cache: None,
        }
    }

    fn can_always(&self) -> bool {
        !self.request.rules.is_empty()
    }

    /// A command that would run in an enforced sandbox may be let out.
    fn can_unsandbox(&self) -> bool {
        self.request
            .sandbox
            .as_deref()
            .is_some_and(|s| s.starts_with("sandbox: "))
    }

    fn choices(&self) -> Vec<Choice> {
        let mut c = vec![Choice::AllowOnce, Choice::AllowAlways];
        if self.can_unsandbox() {
            c.push(Choice::AllowUnsandboxed);
        }
        c.push(Choice::Deny);
        c
    }

    fn decide(&self, choice: Choice) -> Option<Decision> {
        match choice {
            Choice::AllowOnce => Some(Decision::AllowOnce),
            Choice::AllowAlways => self
                .request
                .rules
                .get(self.rule)
                .map(|r| Decision::AllowAlways { rule: r.clone() }),
            Choice::AllowUnsandboxed => Some(Decision::AllowUnsandboxed),
            Choice::Deny => None,
        }
    }

    /// Handles a key; returns the decision when the person made one.
    pub fn key(&mut self, key: KeyEvent, keys: &KeyMap) -> Option<Decision> {
        if let Some(reason) = &mut self.deny_reason {
            if keys.is(Action::TextSubmit, &key) {
                let r = reason.trim().to_string();
                return Some(Decision::Deny {
                    reason: (!r.is_empty()).then_some(r),
                });
            } else if keys.is(Action::TextCancel, &key) {
                return Some(Decision::Deny { reason: None });
            } else if keys.is(Action::TextDeleteBack, &key) {
                reason.pop();
            } else if let KeyCode::Char(c) = key.code
                && !key.modifiers.contains(KeyModifiers::CONTROL)
            {
                reason.push(c)
            }
            return None;
        }
        if keys.is(Action::AllowOnce, &key) {
            return self.decide(Choice::AllowOnce);
        }
        if keys.is(Action::AllowAlways, &key) {
            if self.can_always() {
                self.choice = Choice::AllowAlways;
            }
            return self.decide(Choice::AllowAlways);
        }
        if keys.is(Action::AllowUnsandboxed, &key) && self.can_unsandbox() {
            return self.decide(Choice::AllowUnsandboxed);
        }
        if keys.is(Action::Deny, &key) {
            self.choice = Choice::Deny;
            self.deny_reason = Some(String::new());
            return None;
        }
        if keys.is(Action::ToggleDiffLayout, &key) {
            self.layout = Some(match self.layout {
                Some(DiffLayout::SideBySide) => DiffLayout::Unified,
                _ => DiffLayout::SideBySide,
            });
            return None;
        }
        let page = usize::from(self.preview_rows.max(2) - 1);
        let is = |a| keys.is(a, &key);
        if is(Action::DialogDismiss) {
            return Some(Decision::Deny { reason: None });
        } else if is(Action::DialogChoose) {
            if self.choice == Choice::Deny {
                self.deny_reason = Some(String::new());
                return None;
            }
            return self.decide(self.choice);
        } else if is(Action::DialogPrevChoice) {
            self.move_choice(-1)
        } else if is(Action::DialogNextChoice) {
            self.move_choice(1)
        } else if is(Action::RulePrev) {
            self.cycle_rule(-1)
        } else if is(Action::RuleNext) {
            self.cycle_rule(1)
        } else if is(Action::DialogScrollDown) {
            self.scroll += 1
        } else if is(Action::DialogScrollUp) {
            self.scroll = self.scroll.saturating_sub(1)
        } else if is(Action::DialogPageDown) {
            self.scroll += page
        } else if is(Action::DialogPageUp) {
            self.scroll = self.scroll.saturating_sub(page)
        }
        None
    }

    fn move_choice(&mut self, delta: i32) {
        let choices = self.choices();
        let n = choices.len() as i32;
        let mut i = choices.iter().position(|c| *c == self.choice).unwrap_or(0) as i32;
        loop {
            i = (i + delta).rem_euclid(n);
            if choices[i as usize] != Choice::AllowAlways || self.can_always() {
                break;
            }
        }
        self.choice = choices[i as usize];
    }

    fn cycle_rule(&mut self, delta: i32) {
        let n = self.request.rules.len() as i32;
        if n > 1 {
            self.rule = (self.rule as i32 + delta).rem_euclid(n) as usize;
            self.choice = Choice::AllowAlways;
        }
    }

    fn preview(&mut self, width: u16, theme: &Theme, styles: &Styles) -> &[Line<'static>] {
        let fresh = self
            .preview_cache
            .as_ref()
            .is_some_and(|(w, l, _)| *w == width && *l == self.layout);
        if !fresh {
            let lines = self.preview_lines(width, theme, styles);
            self.preview_cache = Some((width, self.layout, lines));
        }
        self.preview_cache.as_ref().map_or(&[], |c| c.2.as_slice())
    }

    fn preview_lines(&self, width: u16, theme: &Theme, styles: &Styles) -> Vec<Line<'static>> {
        let Some(preview) = &self.request.preview else {
            return Vec::new();
        };
        match preview {
            Preview::Diff(crate::diff::FileDiff { path, old, new, .. }) => {
                let layout = self.layout.unwrap_or_else(|| DiffLayout::for_width(width));
                DiffView::new(path, old, new).lines(
                    width,
                    layout,
                    theme,
                    DiffOptions {
                        context: 3,
                        fold: true,
                        line_numbers: true,
                        highlight: crate::tui::widgets::diff_view::highlight_affordable(old, new),
                    },
                )
            }
            Preview::Command {
                command,
                cwd,
                commands,
                redirects,
            } => {
                // What runs comes first, one parsed simple command a line,
                // so nothing in the raw text can push it below the fold.
                let mut out = Vec::new();
                for c in commands {
                    out.extend(wrap_prefixed(
                        &c.join(" "),
                        width,
                        Span::styled("▸ ", styles.accent),
                        Span::raw("  "),
                        styles.user,
                    ));
                }
                for r in redirects {
                    out.extend(wrap_prefixed(
                        r,
                        width,
                        Span::styled("↳ ", styles.warning),
                        Span::raw("  "),
                        styles.warning,
                    ));
                }
                out.extend(wrap_prefixed(
                    cwd,
                    width,
                    Span::styled("in ", styles.dim),
                    Span::raw("   "),
                    styles.dim,
                ));
                out.push(Line::default());
                out.extend(wrap_prefixed(
                    &collapse_blank_runs(command),
                    width,
                    Span::styled("$ ", styles.dim),
                    Span::raw("  "),
                    styles.text,
                ));
                out
            }
            Preview::Url { url } => wrap_plain(url, width, styles.accent),
            Preview::Input { input } => {
                let pretty =
                    serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string());
                wrap_plain(&pretty, width, styles.text)
            }
            Preview::Mcp {
                server,
                tool,
                description,
                hints,
                input,
            } => super::mcp_preview::lines(
                &super::mcp_preview::McpCall {
                    server,
                    tool,
                    description,
                    hints,
                    input,
                },
                width,
                styles,
            ),
        }
    }

    fn choice_lines(&self, width: u16, styles: &Styles, keys: &KeyMap) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for c in self.choices() {
            let (action, label) = match c {
                Choice::AllowOnce => (Action::AllowOnce, "Allow once".to_string()),
                Choice::AllowUnsandboxed => (
                    Action::AllowUnsandboxed,
                    "Allow once without the sandbox".to_string(),
                ),
                Choice::AllowAlways => {
                    let label = match self.request.rules.get(self.rule) {
                        Some(rule) if self.request.rules.len() > 1 => format!(
                            "Allow always: {rule}  ◂ {}/{} ▸",
                            self.rule + 1,
                            self.request.rules.len()
                        ),
                        Some(rule) => format!("Allow always: {rule}"),
                        None => "Allow always (not offered here)".to_string(),
                    };
                    (Action::AllowAlways, label)
                }
                Choice::Deny => match &self.deny_reason {
                    Some(r) => (Action::Deny, format!("Deny, reason: {r}▏ (Enter sends)")),
                    None => (Action::Deny, "Deny".to_string()),
                },
            };
            let text = truncate(
                &format!(" {}  {label} ", keys.keys_for(action)),
                width as usize,
            );
            let style = if c == self.choice {
                styles.focused_choice
            } else if c == Choice::AllowAlways && !self.can_always() {
                styles.dim
            } else {
                styles.text
            };
            out.push(Line::from(Span::styled(text, style)));
        }
        out
    }

    /// Draws over `area`; `position` is "1 of 3" when requests queue.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        styles: &Styles,
        theme: &Theme,
        keys: &KeyMap,
        position: Option<(usize, usize)>,
    ) {
        let small = area.width < 60 || area.height < 20;
        let rect = if small {
            area
        } else {
            let w = area.width.saturating_sub(4).min(140);
            // As tall as the content needs, at most the area.
            let inner_w = w.saturating_sub(2);
            let need = wrap_plain(&self.request.summary, inner_w, styles.user).len()
                + self.request.reasons.len()
                + usize::from(self.request.sandbox.is_some())
                + self.preview(inner_w, theme, styles).len()
                + self.choices().len()
                + 5;
            let h = (need.max(12) as u16).min(area.height.saturating_sub(2));
            Rect::new(
                area.x + (area.width - w) / 2,
                area.y + (area.height - h) / 2,
                w,
                h,
            )
        };
        Clear.render(rect, buf);
        let mut title = format!(" {} wants to run ", self.request.tool);
        if let Some((i, n)) = position.filter(|p| p.1 > 1) {
            title.push_str(&format!("({i} of {n}) "));
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(styles.accent)
            .title(Span::styled(title, styles.accent));
        let inner = block.inner(rect);
        block.render(rect, buf);
        if inner.width < 4 || inner.height < 4 {
            return;
        }
        let w = inner.width;
        let mut head = wrap_plain(&self.request.summary, w, styles.user);
        for r in &self.request.reasons {
            head.extend(wrap_prefixed(
                r,
                w,
                Span::styled("why: ", styles.dim),
                Span::raw("     "),
                styles.warning,
            ));
        }
        if let Some(line) = &self.request.sandbox {
            head.extend(wrap_plain(line, w, styles.dim));
        }
        let choices = self.choice_lines(w, styles, keys);
        let hint = Line::from(Span::styled(
            truncate(
                "↑↓ choose · Enter · ←→ rule · t layout · j/k PgUp/PgDn scroll · Esc deny",
                w as usize,
            ),
            styles.dim,
        ));
        // Small screens give the hint's row to the preview.
        let show_hint = inner.height >= 12;
        let fixed = choices.len() + 1 + usize::from(show_hint);
        let head_rows = head
            .len()
            .min((inner.height as usize).saturating_sub(fixed + 1) / 2);
        let preview_rows = (inner.height as usize).saturating_sub(fixed + head_rows + 1);
        self.preview_rows = preview_rows as u16;
        let total = self.preview(w, theme, styles).len();
        self.scroll = self.scroll.min(total.saturating_sub(preview_rows));
        let scroll = self.scroll;
        let visible: Vec<Line<'static>> = self
            .preview(w, theme, styles)
            .iter()
            .skip(scroll)
            .take(preview_rows)
            .cloned()
            .collect();
        let mut y = inner.y;
        for l in head.iter().take(head_rows) {
            buf.set_line(inner.x, y, l, w);
            y += 1;
        }
        let sep = Line::from(Span::styled("─".repeat(w as usize), styles.border));
        buf.set_line(inner.x, y, &sep, w);
        y += 1;
        for l in &visible {
            buf.set_line(inner.x, y, l, w);
            y += 1;
        }
        let below = total.saturating_sub(scroll + preview_rows);
        let mut y = inner.bottom() - fixed as u16;
        let more = if below > 0 {
            format!("── {below} more (j/PgDn) ")
        } else {
            String::new()
        };
        let sep = Line::from(Span::styled(
            truncate(&format!("{more}{}", "─".repeat(w as usize)), w as usize),
            styles.border,
        ));
        buf.set_line(inner.x, y, &sep, w);
        y += 1;
        for l in &choices {
            buf.set_line(inner.x, y, l, w);
            y += 1;
        }
        if show_hint {
            buf.set_line(inner.x, y, &hint, w);
        }
    }
}

/// The raw command with every run of blank (or whitespace-only) lines
/// shown as one line saying how many there were.
fn collapse_blank_runs(command: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut blanks = 0;
    let flush = |blanks: usize, out: &mut Vec<String>| match blanks {
        0 => {}
        1 => out.push(String::new()),
        n => out.push(format!("⋯ {n} blank lines ⋯")),
    };
    for line in command.trim_end().lines() {
        if line.trim().is_empty() {
            blanks += 1;
            continue;
        }
        flush(blanks, &mut out);
        blanks = 0;
        out.push(line.to_string());
    }
    flush(blanks, &mut out);
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::collapse_blank_runs;

    #[test]
    fn runs_of_blank_lines_are_collapsed() {
        assert_eq!(collapse_blank_runs("a\n\nb"), "a\n\nb");
        assert_eq!(
            collapse_blank_runs("echo hi\n\n\n  \n\t\nrm -rf x\n\n\n"),
            "echo hi\n⋯ 4 blank lines ⋯\nrm -rf x"
        );
        assert_eq!(collapse_blank_runs("ls"), "ls");
    }
}
