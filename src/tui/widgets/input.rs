//! The prompt editor: multi-line, grows to ~10 rows, collapses large pastes,
//! recalls earlier prompts.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Widget};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use crate::tui::styles::Styles;

pub const MAX_ROWS: u16 = 10;
const PASTE_MAX_LINES: usize = 10;
const PASTE_MAX_CHARS: usize = 1000;

/// A prompt as the box showed it: its text with placeholders, and the
/// pastes they stand for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Recall {
    shown: String,
    pastes: Vec<(String, String)>,
}

impl Recall {
    /// A prompt from the history file, folded whole when it is as large as
    /// a paste the box would fold.
    fn stored(text: String) -> Recall {
        match fold(&text) {
            Some(placeholder) => Recall {
                shown: placeholder.clone(),
                pastes: vec![(placeholder, text)],
            },
            None => Recall {
                shown: text,
                pastes: Vec::new(),
            },
        }
    }

    fn text(&self) -> String {
        expand(&self.shown, &self.pastes)
    }
}

/// The placeholder a paste of `text` is shown as, when it is folded.
fn fold(text: &str) -> Option<String> {
    let lines = text.lines().count();
    if lines > PASTE_MAX_LINES {
        Some(format!("[pasted {lines} lines]"))
    } else if text.chars().count() > PASTE_MAX_CHARS {
        Some(format!("[pasted {} chars]", text.chars().count()))
    } else {
        None
    }
}

/// `shown` with each placeholder replaced by its paste.
fn expand(shown: &str, pastes: &[(String, String)]) -> String {
    let mut text = shown.to_string();
    for (placeholder, content) in pastes {
        if let Some(at) = text.find(placeholder.as_str()) {
            text.replace_range(at..at + placeholder.len(), content);
        }
    }
    text
}

#[derive(Debug, Clone)]
pub struct PromptInput {
    area: TextArea<'static>,
    /// Collapsed pastes: the placeholder shown and the text it stands for.
    pastes: Vec<(String, String)>,
    history: Vec<Recall>,
    /// Position while walking the history; `None` when editing a draft.
    history_pos: Option<usize>,
    draft: Recall,
    /// The key the empty prompt's hint names for a new line.
    newline_key: &'static str,
}

impl Default for PromptInput {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl PromptInput {
    pub fn new(history: Vec<String>) -> Self {
        PromptInput {
            area: new_area(Vec::new()),
            pastes: Vec::new(),
            history: history.into_iter().map(Recall::stored).collect(),
            history_pos: None,
            draft: Recall::default(),
            newline_key: NEWLINE_KEY,
        }
    }

    /// What the box shows (placeholders included).
    pub fn shown_text(&self) -> String {
        self.area.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.area.lines().iter().all(|l| l.is_empty())
    }

    /// The prompt as it will be sent: placeholders replaced by their pastes.
    pub fn text(&self) -> String {
        expand(&self.shown_text(), &self.pastes)
    }

    /// The box's text with its pastes, to keep or recall.
    fn recall(&self) -> Recall {
        Recall {
            shown: self.shown_text(),
            pastes: self.pastes.clone(),
        }
    }

    fn restore(&mut self, r: &Recall) {
        self.set_text(&r.shown);
        self.pastes = r.pastes.clone();
    }

    pub fn set_text(&mut self, text: &str) {
        self.area = new_area(text.split('\n').map(str::to_string).collect());
        self.area
            .set_placeholder_text(placeholder(self.newline_key));
        self.area.move_cursor(CursorMove::Bottom);
        self.area.move_cursor(CursorMove::End);
        self.pastes.clear();
    }

    /// Names `key` as the one that adds a line, in the empty prompt's hint.
    pub fn set_newline_key(&mut self, key: &'static str) {
        self.newline_key = key;
        self.area.set_placeholder_text(placeholder(key));
    }

    pub fn clear(&mut self) {
        self.set_text("");
        self.history_pos = None;
    }

    /// Takes the prompt for sending and records it in the history.
    pub fn take(&mut self) -> String {
        self.take_shown().0
    }

    /// Takes the prompt for sending: the text sent, and the text shown
    /// when a paste was folded in it.
    pub fn take_shown(&mut self) -> (String, Option<String>) {
        let kept = self.recall();
        let text = kept.text();
        let folded = (kept.shown != text).then(|| kept.shown.clone());
        if !text.trim().is_empty() && self.history.last().map(Recall::text) != Some(text.clone()) {
            self.history.push(kept);
        }
        self.clear();
        (text, folded)
    }

    pub fn key(&mut self, key: KeyEvent) {
        self.area.input(key);
    }

    /// Empties the prompt as an edit, so undo brings the text back.
    pub fn clear_undoable(&mut self) {
        self.area.select_all();
        self.area.cut();
        self.history_pos = None;
    }

    /// Deletes from the cursor to the start of its line.
    pub fn delete_to_start(&mut self) {
        self.area.delete_line_by_head();
    }

    /// Deletes from the cursor to the end of its line.
    pub fn delete_to_end(&mut self) {
        self.area.delete_line_by_end();
    }

    /// Deletes the word before the cursor.
    pub fn delete_word_back(&mut self) {
        self.area.delete_word();
    }

    pub fn undo(&mut self) {
        self.area.undo();
    }

    pub fn newline(&mut self) {
        self.area.insert_newline();
    }

    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        if let Some(placeholder) = fold(&text) {
            self.area.insert_str(&placeholder);
            self.pastes.push((placeholder, text));
        } else {
            self.area.insert_str(&text);
        }
    }

    /// The cursor's row and column (in characters).
    pub fn cursor(&self) -> (usize, usize) {
        let c = self.area.cursor();
        (c.0, c.1)
    }

    pub fn cursor_on_first_line(&self) -> bool {
        self.area.cursor().0 == 0
    }

    pub fn cursor_on_last_line(&self) -> bool {
        self.area.cursor().0 + 1 >= self.area.lines().len()
    }

    /// Shows the previous prompt; false when there is none.
    pub fn history_prev(&mut self) -> bool {
        let pos = match self.history_pos {
            None if self.history.is_empty() => return false,
            None => {
                self.draft = self.recall();
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(p) => p - 1,
        };
        self.history_pos = Some(pos);
        let entry = self.history[pos].clone();
        self.restore(&entry);
        true
    }

    /// Shows the next prompt, then the draft; false when already there.
    pub fn history_next(&mut self) -> bool {
        let Some(pos) = self.history_pos else {
            return false;
        };
        if pos + 1 < self.history.len() {
            self.history_pos = Some(pos + 1);
            let entry = self.history[pos + 1].clone();
            self.restore(&entry);
        } else {
            self.history_pos = None;
            let draft = std::mem::take(&mut self.draft);
            self.restore(&draft);
        }
        true
    }

    /// Rows the box wants for `width`, border included.
    pub fn height(&self, width: u16) -> u16 {
        let inner = width.saturating_sub(2).max(1) as usize;
        let rows: usize = self
            .area
            .lines()
            .iter()
            .map(|l| {
                unicode_width::UnicodeWidthStr::width(l.as_str())
                    .div_ceil(inner)
                    .max(1)
            })
            .sum();
        (rows as u16).clamp(1, MAX_ROWS) + 1
    }

    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        styles: &Styles,
        title: Option<Line<'static>>,
        focused: bool,
    ) {
        let border = if focused {
            styles.border_focus
        } else {
            styles.border
        };
        let mut block = Block::default().borders(Borders::TOP).border_style(border);
        if let Some(t) = title {
            block = block.title(t);
        }
        self.area.set_block(block);
        self.area.set_cursor_style(if focused {
            Style::default().add_modifier(ratatui::style::Modifier::REVERSED)
        } else {
            Style::default()
        });
        (&self.area).render(area, buf);
    }
}

fn new_area(lines: Vec<String>) -> TextArea<'static> {
    let mut a = if lines.is_empty() {
        TextArea::default()
    } else {
        TextArea::new(lines)
    };
    a.set_wrap_mode(WrapMode::WordOrGlyph);
    a.set_cursor_line_style(Style::default());
    a.set_placeholder_text(placeholder(NEWLINE_KEY));
    a
}

/// The key the hint names for a new line: Shift+Enter only where the
/// terminal reports it apart from Enter (the kitty keyboard protocol);
/// xterm's default encoding sends both as the same byte.
pub const NEWLINE_KEY: &str = "Shift+Enter";
pub const NEWLINE_KEY_PLAIN: &str = "Ctrl+J";

fn placeholder(newline_key: &str) -> String {
    format!("Ask cairn…  (Enter send · {newline_key} newline · F1 help)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_paste_is_collapsed_but_sent_whole() {
        let mut input = PromptInput::default();
        let big: String = (0..240).map(|i| format!("line {i}\n")).collect();
        input.paste("see: ");
        input.paste(&big);
        assert_eq!(input.shown_text(), "see: [pasted 240 lines]");
        assert_eq!(input.text(), format!("see: {big}"));
        let small = "one\ntwo";
        input.paste(small);
        assert!(input.shown_text().ends_with("one\ntwo"));
    }

    #[test]
    fn history_walks_back_and_restores_draft() {
        let mut input = PromptInput::new(vec!["first".into(), "second".into()]);
        input.paste("draft");
        assert!(input.history_prev());
        assert_eq!(input.text(), "second");
        assert!(input.history_prev());
        assert_eq!(input.text(), "first");
        assert!(!input.history_prev());
        assert!(input.history_next());
        assert!(input.history_next());
        assert_eq!(input.text(), "draft");
        assert!(!input.history_next());
    }

    #[test]
    fn a_folded_paste_is_recalled_folded_and_sent_whole() {
        let big: String = (0..602).map(|i| format!("row {i}\n")).collect();
        let mut input = PromptInput::new(vec![big.clone()]);
        input.paste("look: ");
        input.paste(&big);
        let (sent, shown) = input.take_shown();
        assert_eq!(sent, format!("look: {big}"));
        assert_eq!(shown.as_deref(), Some("look: [pasted 602 lines]"));
        assert!(input.history_prev());
        assert_eq!(input.shown_text(), "look: [pasted 602 lines]");
        assert_eq!(input.text(), sent);
        // One from the history file is folded whole.
        assert!(input.history_prev());
        assert_eq!(input.shown_text(), "[pasted 602 lines]");
        assert_eq!(input.text(), big);
        input.take_shown();
        assert_eq!(input.take_shown(), (String::new(), None));
    }

    #[test]
    fn grows_with_content_up_to_a_limit() {
        let mut input = PromptInput::default();
        assert_eq!(input.height(40), 2);
        input.set_text("a\nb\nc");
        assert_eq!(input.height(40), 4);
        input.set_text(&"x\n".repeat(30));
        assert_eq!(input.height(40), MAX_ROWS + 1);
    }
}
