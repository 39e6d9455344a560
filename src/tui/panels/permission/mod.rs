//! The modal that asks before a risky tool call: what, why, a preview, and
//! Allow once / Allow always (with the exact rule) / Deny (with a reason);
//! an edit's hunks can be accepted or rejected one by one (`review`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::protocol::{Decision, PermissionRequest};
use crate::text::fit as truncate;
use crate::tools::Preview;
use crate::tui::keys::{Action, KeyMap};
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;
use crate::tui::widgets::diff_view::{DiffLayout, DiffView};
use crate::tui::wrap::{wrap_plain, wrap_prefixed};

mod check;
mod keys;
mod preview;
mod review;

pub use review::HunkReview;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    AllowOnce,
    AllowAlways,
    /// Once, outside the sandbox: offered for commands that would run in one.
    AllowUnsandboxed,
    Deny,
}

/// The preview as last laid out: for (width, layout, full screen, review
/// revision), its lines and where each hunk's mark is.
type PreviewCache = (
    (u16, Option<DiffLayout>, bool, u64),
    Vec<Line<'static>>,
    Vec<usize>,
);

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
    /// An edit's hunks, each accepted or rejected by the person.
    pub review: Option<HunkReview>,
    /// The edit's diff over the whole screen (`v`).
    pub full: bool,
    /// `Some` while typing why the rejected hunks were left out.
    pub hunk_reason: Option<String>,
    /// The edit's diff, one per file it changes, computed once
    /// (highlighting is kept with it).
    diffs: Vec<DiffView>,
    /// Bumped whenever the review changes, to redraw the preview.
    review_rev: u64,
    /// Rows of preview at the last frame (for paging).
    preview_rows: u16,
    /// Diffing and highlighting are too slow to redo on every frame.
    preview_cache: Option<PreviewCache>,
    /// Some choice rows (the rules "Always" stores) did not fit the last
    /// frame: rules the person has not seen are not stored.
    choices_cut: bool,
    /// When it opened, if the person was typing a prompt then.
    pub typed_over: Option<std::time::Instant>,
    /// When it appeared just after a key press (it takes no answer at once).
    pub opened: Option<std::time::Instant>,
    /// The language server's check of the edit, once one began.
    pub check: Option<check::EditCheck>,
    /// The hunks now rejected, when the edit must be checked again.
    pub recheck: Option<Vec<usize>>,
}

/// Most rules stored together for one command: more cannot all be read
/// in the dialog, and a model could hide one among them.
const MAX_RULES_TOGETHER: usize = 8;

impl PermissionDialog {
    pub fn new(id: u64, request: PermissionRequest) -> Self {
        let files = match &request.preview {
            Some(Preview::Diff(d)) => std::slice::from_ref(d),
            Some(Preview::Diffs { files }) => files.as_slice(),
            _ => &[],
        };
        let diffs: Vec<DiffView> = (files.iter())
            .map(|d| DiffView::new(&d.path, &d.old, &d.new))
            .collect();
        let review = HunkReview::new(diffs.iter().map(DiffView::hunk_count).sum());
        PermissionDialog {
            id,
            request,
            choice: Choice::AllowOnce,
            rule: 0,
            layout: None,
            scroll: 0,
            deny_reason: None,
            review,
            full: false,
            hunk_reason: None,
            diffs,
            review_rev: 0,
            preview_rows: 10,
            preview_cache: None,
            choices_cut: false,
            typed_over: None,
            opened: None,
            check: None,
            recheck: None,
        }
    }

    /// Some hunks are rejected (but not all).
    fn partial(&self) -> bool {
        self.review
            .as_ref()
            .is_some_and(|r| !r.rejected().is_empty())
    }

    /// A rule is only stored for the whole change as shown, and rules
    /// stored together only when every one of them was on screen.
    fn can_always(&self) -> bool {
        !self.request.rules.is_empty()
            && !self.partial()
            && !self.too_many_rules()
            && (!self.request.rules_together() || !self.choices_cut)
    }

    fn too_many_rules(&self) -> bool {
        self.request.rules_together() && self.request.rules.len() > MAX_RULES_TOGETHER
    }

    /// The rules are listed under "Allow always", one row each.
    fn lists_rules(&self) -> bool {
        self.request.rules_together() && !self.partial() && !self.too_many_rules()
    }

    /// A command that would run in an enforced sandbox may be let out.
    fn can_unsandbox(&self) -> bool {
        self.request.can_unsandbox()
    }

    fn choices(&self) -> Vec<Choice> {
        let mut c = vec![Choice::AllowOnce, Choice::AllowAlways];
        if self.can_unsandbox() {
            c.push(Choice::AllowUnsandboxed);
        }
        c.push(Choice::Deny);
        c
    }

    fn decide(&mut self, choice: Choice) -> Option<Decision> {
        match choice {
            Choice::AllowOnce => self.allow_once(),
            Choice::AllowAlways if !self.can_always() => None,
            Choice::AllowAlways if self.request.rules_together() => {
                Some(Decision::AllowAlwaysAll {
                    rules: self.request.rules.clone(),
                })
            }
            Choice::AllowAlways => self
                .request
                .rules
                .get(self.rule)
                .map(|r| Decision::AllowAlways { rule: r.clone() }),
            Choice::AllowUnsandboxed => Some(Decision::AllowUnsandboxed),
            Choice::Deny => None,
        }
    }

    /// Allowing an edit with rejected hunks first asks why (optional);
    /// rejecting every hunk is a denial.
    fn allow_once(&mut self) -> Option<Decision> {
        match &self.review {
            Some(r) if r.all_rejected() => {
                self.choice = Choice::Deny;
                self.deny_reason = Some(String::new());
                None
            }
            Some(r) if !r.rejected().is_empty() => {
                self.choice = Choice::AllowOnce;
                self.hunk_reason = Some(String::new());
                None
            }
            _ => Some(Decision::AllowOnce),
        }
    }

    /// The preview laid out for `width`, from the cache when nothing
    /// changed; reveals the focused hunk when it moved.
    fn preview(&mut self, width: u16, theme: &Theme, styles: &Styles) -> &[Line<'static>] {
        let key = (width, self.layout, self.full, self.review_rev);
        if self.preview_cache.as_ref().is_none_or(|c| c.0 != key) {
            let (mut lines, marks) = match &self.request.preview {
                Some(p) => preview::lines(
                    p,
                    &self.diffs,
                    &preview::Shape {
                        width,
                        layout: self.layout,
                        full: self.full,
                        review: self.review.as_ref().map(HunkReview::as_review),
                    },
                    theme,
                    styles,
                ),
                None => (Vec::new(), Vec::new()),
            };
            check::mark_hunks(self.check.as_ref(), &mut lines, &marks, styles);
            self.preview_cache = Some((key, lines, marks));
        }
        if let Some(review) = &mut self.review
            && std::mem::take(&mut review.reveal)
            && let Some(mark) = self
                .preview_cache
                .as_ref()
                .and_then(|c| c.2.get(review.focus))
        {
            // The mark and a line of context above it at the top.
            self.scroll = mark.saturating_sub(1);
        }
        self.preview_cache.as_ref().map_or(&[], |c| c.1.as_slice())
    }

    fn allow_label(&self) -> String {
        match (&self.review, &self.hunk_reason) {
            (Some(r), Some(reason)) => format!(
                "Allow {} of {} hunks. Why reject the rest (optional): {reason}▏ (Enter sends, Esc back)",
                r.accepted.iter().filter(|a| **a).count(),
                r.accepted.len()
            ),
            (Some(r), None) if self.partial() => format!("Allow once, {}", r.tally()),
            _ => "Allow once".to_string(),
        }
    }

    fn always_label(&self) -> String {
        if self.partial() {
            return "Allow always (accept every hunk first)".to_string();
        }
        let n = self.request.rules.len();
        if self.too_many_rules() {
            return format!("Allow always (not offered: {n} parts are too many rules to review)");
        }
        if self.request.rules_together() {
            return format!("Allow always: store these {n} rules, one for each part:");
        }
        match self.request.rules.get(self.rule) {
            Some(rule) if n > 1 => format!(
                "Allow always: {rule}  ◂ {}/{} ▸",
                self.rule + 1,
                self.request.rules.len()
            ),
            Some(rule) => format!("Allow always: {rule}"),
            None => "Allow always (not offered here)".to_string(),
        }
    }

    fn choice_lines(&self, width: u16, styles: &Styles, keys: &KeyMap) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for c in self.choices() {
            let (action, label) = match c {
                Choice::AllowOnce => (Action::AllowOnce, self.allow_label()),
                Choice::AllowUnsandboxed => (
                    Action::AllowUnsandboxed,
                    "Allow once without the sandbox".to_string(),
                ),
                Choice::AllowAlways => (Action::AllowAlways, self.always_label()),
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
            if c == Choice::AllowAlways && self.lists_rules() {
                for rule in &self.request.rules {
                    let text = truncate(&format!("      {rule}"), width as usize);
                    out.push(Line::from(Span::styled(text, styles.accent)));
                }
            }
        }
        out
    }

    /// The dialog's box: the whole area on a small screen or in full
    /// screen, else as tall as the content needs.
    fn frame_rect(&mut self, area: Rect, styles: &Styles, theme: &Theme) -> Rect {
        let small = area.width < 60 || area.height < 20;
        if small || self.full {
            return area;
        }
        let w = area.width.saturating_sub(4).min(140);
        let inner_w = w.saturating_sub(2);
        let need = wrap_plain(&self.request.summary, inner_w, styles.user).len()
            + self.request.reasons.len()
            + usize::from(self.request.sandbox.is_some())
            + usize::from(self.request.formatting.is_some())
            + (self.check.as_ref()).map_or(0, |c| check::head_lines(c, inner_w, styles).len())
            + self.preview(inner_w, theme, styles).len()
            + self.choices().len()
            + if self.lists_rules() {
                self.request.rules.len()
            } else {
                0
            }
            + 5;
        let h = (need.max(12) as u16).min(area.height.saturating_sub(2));
        Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        )
    }

    /// The keys shown under the answers, fitted to `width`: the review's
    /// first, then moving and scrolling; leaving and `?` (every key) stay.
    fn hint(&self, keys: &KeyMap, width: usize) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.review.is_some() {
            parts.extend(
                HunkReview::hint(keys, self.full)
                    .split(" · ")
                    .map(String::from),
            );
        }
        let (more, leave) = if self.full {
            parts.push(format!("{} allow", keys.keys_for(Action::AllowOnce)));
            parts.push(format!("{} deny", keys.keys_for(Action::Deny)));
            (["t layout", "j/k scroll"].as_slice(), "Esc back")
        } else {
            (
                [
                    "↑↓ choose · Enter",
                    "←→ rule",
                    "t layout",
                    "j/k PgUp/PgDn scroll",
                ]
                .as_slice(),
                "Esc deny",
            )
        };
        parts.extend(more.iter().map(|p| p.to_string()));
        let help = format!("{} keys", keys.keys_for(Action::DialogKeys));
        crate::tui::widgets::hint::fit(&parts, &[leave.to_string(), help], width)
    }

    fn head_lines(&self, w: u16, styles: &Styles) -> Vec<Line<'static>> {
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
        if let Some(line) = &self.request.formatting {
            head.extend(wrap_plain(line, w, styles.dim));
        }
        if let Some(c) = &self.check {
            head.extend(check::head_lines(c, w, styles));
        }
        head
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
        let rect = self.frame_rect(area, styles, theme);
        Clear.render(rect, buf);
        let mut title = format!(" {} wants to run ", self.request.tool);
        if let Some((i, n)) = position.filter(|p| p.1 > 1) {
            title.push_str(&format!("({i} of {n}) "));
        }
        if let Some(r) = &self.review {
            title.push_str(&format!("· {} ", r.tally()));
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
        let head = if self.full {
            Vec::new()
        } else {
            self.head_lines(inner.width, styles)
        };
        let choices = if self.full && self.hunk_reason.is_none() && self.deny_reason.is_none() {
            Vec::new()
        } else {
            self.choice_lines(inner.width, styles, keys)
        };
        self.draw_body(inner, buf, &head, &choices, (styles, theme, keys));
    }

    /// Head, preview (scrolled), the "more" rule, the choices and the hint.
    fn draw_body(
        &mut self,
        inner: Rect,
        buf: &mut Buffer,
        head: &[Line<'static>],
        choices: &[Line<'static>],
        (styles, theme, keys): (&Styles, &Theme, &KeyMap),
    ) {
        let w = inner.width;
        // Small screens give the hint's row to the preview.
        let show_hint = inner.height >= 12;
        let fixed = choices.len() + 1 + usize::from(show_hint);
        let head_rows = head
            .len()
            .min((inner.height as usize).saturating_sub(fixed + 1) / 2);
        let sep_rows = usize::from(head_rows > 0 || !self.full);
        let preview_rows = (inner.height as usize).saturating_sub(fixed + head_rows + sep_rows);
        self.preview_rows = preview_rows as u16;
        let total = self.preview(w, theme, styles).len();
        self.scroll = self.scroll.min(total.saturating_sub(preview_rows));
        let scroll = self.scroll;
        let mut y = inner.y;
        for l in head.iter().take(head_rows) {
            buf.set_line(inner.x, y, l, w);
            y += 1;
        }
        if sep_rows > 0 {
            rule(buf, inner, y, "", styles);
            y += 1;
        }
        for l in self
            .preview(w, theme, styles)
            .iter()
            .skip(scroll)
            .take(preview_rows)
        {
            buf.set_line(inner.x, y, l, w);
            y += 1;
        }
        let below = total.saturating_sub(scroll + preview_rows);
        let mut y = inner.bottom().saturating_sub(fixed as u16).max(inner.y);
        let more = if below > 0 {
            format!("── {below} more (j/PgDn) ")
        } else {
            String::new()
        };
        if y < inner.bottom() {
            rule(buf, inner, y, &more, styles);
            y += 1;
        }
        self.choices_cut = false;
        for l in choices {
            if y >= inner.bottom() {
                self.choices_cut = true;
                break;
            }
            buf.set_line(inner.x, y, l, w);
            y += 1;
        }
        if show_hint && y < inner.bottom() {
            let hint = Line::from(Span::styled(
                truncate(&self.hint(keys, w as usize), w as usize),
                styles.dim,
            ));
            buf.set_line(inner.x, y, &hint, w);
        }
    }
}

/// A rule across the dialog at row `y`, joined to its border (`├──┤`),
/// starting with `label` when there is one.
fn rule(buf: &mut Buffer, inner: Rect, y: u16, label: &str, styles: &Styles) {
    let w = usize::from(inner.width);
    let label = crate::text::clip(label, w);
    let fill = w.saturating_sub(crate::text::width(&label));
    let line = Line::from(Span::styled(
        format!("{label}{}", "─".repeat(fill)),
        styles.border,
    ));
    buf.set_line(inner.x, y, &line, inner.width);
    // The block's own border is one column outside `inner` on each side.
    let area = buf.area;
    if inner.x > area.x && inner.right() < area.right() {
        let border = styles.accent;
        buf[(inner.x - 1, y)].set_symbol("├").set_style(border);
        buf[(inner.right(), y)].set_symbol("┤").set_style(border);
    }
}

#[cfg(test)]
mod tests;
