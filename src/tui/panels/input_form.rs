//! The form a server's request for input (MCP elicitation) is shown as:
//! its message, one line per field, and Enter to send, Esc to decline.
//! ↑↓/Tab move between fields; Space toggles a yes/no field and ←→ cycle a
//! choice; other keys type. A request to open a web page shows the whole
//! address and its host instead of fields: Enter opens it, Esc declines.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use serde_json::Map;

use crate::tools::input::{FieldKind, InputAnswer, InputRequest};
use crate::tui::keys::{Action, KeyMap};
use crate::tui::styles::Styles;
use crate::tui::wrap::{wrap_plain, wrap_prefixed};

pub struct InputForm {
    pub id: u64,
    request: InputRequest,
    values: Vec<String>,
    /// Per field, the option a multiple choice's cursor is on.
    cursor: Vec<usize>,
    focus: usize,
    error: Option<String>,
}

impl InputForm {
    pub fn new(id: u64, request: InputRequest) -> Self {
        let values = request
            .fields
            .iter()
            .map(|f| match (&f.default, &f.kind) {
                (Some(d), _) => d.clone(),
                (None, FieldKind::Boolean) => "no".to_string(),
                (None, FieldKind::Choice(options)) if f.required => {
                    options.first().cloned().unwrap_or_default()
                }
                (None, FieldKind::Choices { .. }) => "[]".to_string(),
                _ => String::new(),
            })
            .collect();
        InputForm {
            id,
            cursor: vec![0; request.fields.len()],
            request,
            values,
            focus: 0,
            error: None,
        }
    }

    /// Handles a key; `Some` when the form is answered.
    pub fn key(&mut self, key: KeyEvent, keys: &KeyMap) -> Option<InputAnswer> {
        let n = self.values.len();
        let is = |a| keys.is(a, &key);
        if is(Action::FormDecline) {
            return Some(InputAnswer::Decline);
        } else if is(Action::FormCancel) {
            return Some(InputAnswer::Cancel);
        } else if is(Action::FormSubmit) {
            return self.submit();
        } else if is(Action::FormNext) && n > 0 {
            self.focus = (self.focus + 1) % n;
        } else if is(Action::FormPrev) && n > 0 {
            self.focus = (self.focus + n - 1) % n;
        } else {
            self.edit(key, keys);
        }
        None
    }

    fn edit(&mut self, key: KeyEvent, keys: &KeyMap) {
        let Some(field) = self.request.fields.get(self.focus) else {
            return;
        };
        let value = &mut self.values[self.focus];
        let (next, prev) = (
            keys.is(Action::FormChoiceNext, &key),
            keys.is(Action::FormChoicePrev, &key),
        );
        match &field.kind {
            FieldKind::Boolean if next || prev => {
                *value = if value == "yes" { "no" } else { "yes" }.to_string();
            }
            FieldKind::Choice(options) if next || prev => {
                let at = options.iter().position(|o| o == value);
                let i = match at {
                    Some(i) if prev => (i + options.len() - 1) % options.len(),
                    Some(i) => (i + 1) % options.len(),
                    None => 0,
                };
                *value = options.get(i).cloned().unwrap_or_default();
            }
            FieldKind::Choices { options, .. } => {
                let at = &mut self.cursor[self.focus];
                if key.code == KeyCode::Char(' ') {
                    toggle(value, options, *at);
                } else if next {
                    *at = (*at + 1) % options.len().max(1);
                } else if prev {
                    *at = (*at + options.len().max(1) - 1) % options.len().max(1);
                }
            }
            FieldKind::Boolean | FieldKind::Choice(_) => {}
            _ if keys.is(Action::TextDeleteBack, &key) => {
                value.pop();
            }
            _ => {
                if let KeyCode::Char(c) = key.code
                    && !key.modifiers.contains(KeyModifiers::CONTROL)
                {
                    value.push(c)
                }
            }
        }
        self.error = None;
    }

    fn submit(&mut self) -> Option<InputAnswer> {
        let mut out = Map::new();
        for (i, (field, text)) in self.request.fields.iter().zip(&self.values).enumerate() {
            let none_picked = matches!(field.kind, FieldKind::Choices { .. })
                && crate::tools::input::picked_options(text, &[]).is_ok();
            if text.trim().is_empty() || none_picked {
                if field.required {
                    self.focus = i;
                    self.error = Some(format!("{} is required", field.label));
                    return None;
                }
                continue;
            }
            match field.kind.value(text) {
                Ok(v) => {
                    out.insert(field.name.clone(), v);
                }
                Err(why) => {
                    self.focus = i;
                    self.error = Some(format!("{}: {why}", field.label));
                    return None;
                }
            }
        }
        Some(InputAnswer::Accept(out))
    }

    fn lines(&self, width: u16, styles: &Styles, keys: &KeyMap) -> Vec<Line<'static>> {
        if let Some(url) = &self.request.url {
            return url_lines(url, &self.request.message, width, styles, keys);
        }
        let mut out = wrap_plain(&self.request.message, width, styles.user);
        out.push(Line::default());
        for (i, (field, value)) in self.request.fields.iter().zip(&self.values).enumerate() {
            let focused = i == self.focus;
            let marker = if focused { "› " } else { "  " };
            let mut label = field.label.clone();
            if field.required {
                label.push('*');
            }
            let shown = match &field.kind {
                FieldKind::Boolean => format!("[{value}]  (Space toggles)"),
                FieldKind::Choice(options) => format!("◂ {value} ▸  ({})", options.join(" / ")),
                FieldKind::Choices { options, .. } => {
                    let at = focused.then_some(self.cursor[i]);
                    choices_line(value, options, at)
                }
                _ if focused => format!("{value}▏"),
                _ => value.clone(),
            };
            let style = if focused {
                styles.selection
            } else {
                styles.text
            };
            out.extend(wrap_prefixed(
                &shown,
                width,
                Span::styled(format!("{marker}{label}: "), styles.accent),
                Span::raw("    "),
                style,
            ));
            if focused && !field.description.is_empty() {
                out.extend(wrap_prefixed(
                    &field.description,
                    width,
                    Span::raw("    "),
                    Span::raw("    "),
                    styles.dim,
                ));
            }
        }
        if let Some(e) = &self.error {
            out.push(Line::default());
            out.extend(wrap_plain(e, width, styles.error));
        }
        out.push(Line::default());
        let hint = format!(
            "{} field · {} send · {} decline · {} cancel · F1 keys",
            keys.keys_for(Action::FormNext),
            keys.keys_for(Action::FormSubmit),
            keys.keys_for(Action::FormDecline),
            keys.keys_for(Action::FormCancel),
        );
        out.extend(wrap_plain(&hint, width, styles.dim));
        out
    }

    /// The dialog's title.
    fn title(&self) -> String {
        if self.request.url.is_some() {
            format!(" {} asks you to open a web page ", self.request.source)
        } else {
            format!(" {} asks ", self.request.source)
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, styles: &Styles, keys: &KeyMap) {
        let w = area
            .width
            .saturating_sub(4)
            .min(100)
            .max(20.min(area.width));
        let lines = self.lines(w.saturating_sub(2), styles, keys);
        let h = (lines.len() as u16 + 2).min(area.height);
        let rect = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        Clear.render(rect, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(styles.accent)
            .title(Span::styled(self.title(), styles.accent));
        let inner = block.inner(rect);
        block.render(rect, buf);
        for (row, line) in lines.into_iter().take(inner.height as usize).enumerate() {
            buf.set_line(inner.x, inner.y + row as u16, &line, inner.width);
        }
    }
}

/// Most rows of the address shown: a long one (a userinfo padded to look
/// like another site) must not push the site off the dialog.
const MAX_ADDRESS_ROWS: usize = 3;

/// The site first (the part that says whose page it is, which no message
/// or address length can push out of the dialog), the address, the
/// server's message, and what the keys do.
fn url_lines(
    url: &str,
    message: &str,
    width: u16,
    styles: &Styles,
    keys: &KeyMap,
) -> Vec<Line<'static>> {
    let host = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default();
    let mut out = wrap_prefixed(
        &host,
        width,
        Span::styled("site:    ", styles.accent),
        Span::raw("         "),
        styles.warning,
    );
    let mut address = wrap_prefixed(
        url,
        width,
        Span::styled("address: ", styles.accent),
        Span::raw("         "),
        styles.text,
    );
    if address.len() > MAX_ADDRESS_ROWS {
        address.truncate(MAX_ADDRESS_ROWS);
        address.push(Line::styled("         … (longer)", styles.dim));
    }
    out.extend(address);
    out.push(Line::default());
    out.extend(wrap_plain(message, width, styles.user));
    out.push(Line::default());
    let hint = format!(
        "{} open in your browser · {} decline · {} cancel",
        keys.keys_for(Action::FormSubmit),
        keys.keys_for(Action::FormDecline),
        keys.keys_for(Action::FormCancel),
    );
    out.extend(wrap_plain(&hint, width, styles.dim));
    out
}

/// Picks or unpicks option `at` of a multiple choice kept as a JSON array.
fn toggle(value: &mut String, options: &[String], at: usize) {
    let Some(option) = options.get(at) else {
        return;
    };
    let mut picked = crate::tools::input::picked_options(value, options).unwrap_or_default();
    if let Some(i) = picked.iter().position(|p| p == option) {
        picked.remove(i);
    } else {
        picked.push(option.clone());
    }
    let ordered: Vec<&String> = options.iter().filter(|o| picked.contains(o)).collect();
    *value = serde_json::to_string(&ordered).unwrap_or_default();
}

/// `[x] Guitar  ‹[ ] Piano›  [ ] Drums  (Space picks)`: the cursor's option
/// in ‹ › when the field has the focus.
fn choices_line(value: &str, options: &[String], at: Option<usize>) -> String {
    let picked = crate::tools::input::picked_options(value, options).unwrap_or_default();
    let mut parts: Vec<String> = Vec::new();
    for (i, o) in options.iter().enumerate() {
        let mark = if picked.contains(o) { "[x]" } else { "[ ]" };
        if at == Some(i) {
            parts.push(format!("‹{mark} {o}›"));
        } else {
            parts.push(format!("{mark} {o}"));
        }
    }
    let mut line = parts.join("  ");
    if at.is_some() {
        line.push_str("  (←→ move · Space picks)");
    }
    line
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::input::InputField;

    fn field(name: &str, kind: FieldKind, required: bool) -> InputField {
        InputField {
            name: name.into(),
            label: name.into(),
            description: String::new(),
            kind,
            required,
            default: None,
        }
    }

    fn press(form: &mut InputForm, code: KeyCode) -> Option<InputAnswer> {
        form.key(KeyEvent::new(code, KeyModifiers::NONE), &KeyMap::default())
    }

    #[test]
    fn a_filled_form_is_sent_with_typed_values() {
        let request = InputRequest {
            source: "MCP server `t`".into(),
            message: "Who are you?".into(),
            fields: vec![
                field("name", FieldKind::Text, true),
                field("age", FieldKind::Integer, false),
                field("happy", FieldKind::Boolean, false),
            ],
            url: None,
        };
        let mut form = InputForm::new(1, request);
        assert_eq!(press(&mut form, KeyCode::Enter), None, "name is required");
        assert!(
            form.error
                .as_deref()
                .is_some_and(|e| e.contains("required"))
        );
        for c in "Ada".chars() {
            press(&mut form, KeyCode::Char(c));
        }
        press(&mut form, KeyCode::Tab);
        press(&mut form, KeyCode::Char('x'));
        assert_eq!(
            press(&mut form, KeyCode::Enter),
            None,
            "age must be a number"
        );
        press(&mut form, KeyCode::Backspace);
        press(&mut form, KeyCode::Char('7'));
        press(&mut form, KeyCode::Tab);
        press(&mut form, KeyCode::Char(' '));
        let Some(InputAnswer::Accept(values)) = press(&mut form, KeyCode::Enter) else {
            panic!("sent");
        };
        assert_eq!(
            serde_json::Value::Object(values),
            json!({"name": "Ada", "age": 7, "happy": true})
        );
        assert_eq!(press(&mut form, KeyCode::Esc), Some(InputAnswer::Decline));
    }

    #[test]
    fn a_web_page_request_shows_the_address_and_opens_on_enter() {
        let request = InputRequest {
            source: "MCP server `t`".into(),
            message: "Sign the form".into(),
            fields: Vec::new(),
            url: Some("https://example.com/verify?id=7".into()),
        };
        let mut form = InputForm::new(2, request.clone());
        let styles = Styles::default();
        let text: Vec<String> = form
            .lines(60, &styles, &KeyMap::default())
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let text = text.join("\n");
        assert!(
            text.contains("address: https://example.com/verify?id=7"),
            "{text}"
        );
        assert!(text.contains("site:    example.com"), "{text}");
        assert!(text.contains("Enter open in your browser"), "{text}");
        assert!(form.title().contains("asks you to open a web page"));
        press(&mut form, KeyCode::Char('x'));
        assert_eq!(
            press(&mut form, KeyCode::Enter),
            Some(InputAnswer::Accept(Map::new()))
        );
        let mut form = InputForm::new(3, request);
        assert_eq!(press(&mut form, KeyCode::Esc), Some(InputAnswer::Decline));
    }

    #[test]
    fn no_long_address_or_message_hides_the_site() {
        let padding = "%2Flogin%3Fcontinue%3D".repeat(200);
        let request = InputRequest {
            source: "MCP server `t`".into(),
            message: "Sign in to your account.\n".repeat(40),
            fields: Vec::new(),
            url: Some(format!(
                "https://accounts.example.com{padding}@evil.example/"
            )),
        };
        let form = InputForm::new(2, request);
        let area = Rect::new(0, 0, 80, 24);
        let mut buf = Buffer::empty(area);
        form.render(area, &mut buf, &Styles::default(), &KeyMap::default());
        let screen: String = (0..24)
            .map(|y| (0..80).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n")
            .collect();
        assert!(screen.contains("site:    evil.example"), "{screen}");
        assert!(
            screen.contains("address: https://accounts.example.com"),
            "{screen}"
        );
    }
}
