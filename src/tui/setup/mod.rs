//! The first-start set-up, when no provider is configured: choose a
//! provider, paste a key (or name the variable to read it from) or point
//! at a local server; cairn checks it against the provider's models
//! endpoint and starts. The screen stays until a provider works or the
//! person quits. Its own short screen before the main interface, like the
//! trust question; the check and what it saves are the caller's.

mod view;

use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures::future::BoxFuture;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::tui::render::late_answers::LateFiltered;
use crate::tui::render::terminal;
use crate::tui::theme::{Theme, Themes, detect_color_depth};

/// One provider the set-up offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    pub label: &'static str,
    /// The preset's name, or `custom`.
    pub name: &'static str,
    /// A server on this machine or network: no key asked for.
    pub local: bool,
    pub default_url: &'static str,
}

pub const CHOICES: &[Choice] = &[
    Choice {
        label: "Anthropic",
        name: "anthropic",
        local: false,
        default_url: "https://api.anthropic.com",
    },
    Choice {
        label: "OpenAI",
        name: "openai",
        local: false,
        default_url: "https://api.openai.com/v1",
    },
    Choice {
        label: "OpenRouter",
        name: "openrouter",
        local: false,
        default_url: "https://openrouter.ai/api/v1",
    },
    Choice {
        label: "Gemini",
        name: "gemini",
        local: false,
        default_url: "https://generativelanguage.googleapis.com/v1beta",
    },
    Choice {
        label: "Groq",
        name: "groq",
        local: false,
        default_url: "https://api.groq.com/openai/v1",
    },
    Choice {
        label: "DeepSeek",
        name: "deepseek",
        local: false,
        default_url: "https://api.deepseek.com/v1",
    },
    Choice {
        label: "Ollama (local server)",
        name: "ollama",
        local: true,
        default_url: "http://127.0.0.1:11434",
    },
    Choice {
        label: "LM Studio (local server)",
        name: "lmstudio",
        local: true,
        default_url: "http://127.0.0.1:1234/v1",
    },
    Choice {
        label: "Another OpenAI-compatible server (base URL)",
        name: "custom",
        local: true,
        default_url: "http://127.0.0.1:8080/v1",
    },
];

/// Where the key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyInput {
    None,
    /// Pasted: stored 0600 in cairn's data directory.
    Pasted(String),
    /// Read from this environment variable.
    Env(String),
}

/// What the person filled in, for the caller to check and save.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub choice: Choice,
    pub base_url: String,
    pub key: KeyInput,
}

/// Checks an attempt: `Ok` once the provider answered and the choice is
/// saved; `Err` says what to fix.
pub type Check = Box<dyn Fn(Attempt) -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Choose,
    Details,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Key,
    Url,
}

/// The set-up screen's state.
#[derive(Debug, Clone)]
pub struct Setup {
    step: Step,
    selected: usize,
    key: String,
    url: String,
    field: Field,
    /// Why the last check failed.
    error: Option<String>,
    checking: bool,
    /// Base URLs the environment sets (`ANTHROPIC_BASE_URL`), by preset.
    urls: Vec<(&'static str, String)>,
}

/// What a key asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupEvent {
    Quit,
    Check(Attempt),
}

impl Setup {
    /// `urls`: base URLs from the environment, by preset name.
    pub fn new(urls: Vec<(&'static str, String)>) -> Setup {
        Setup {
            step: Step::Choose,
            selected: 0,
            key: String::new(),
            url: String::new(),
            field: Field::Key,
            error: None,
            checking: false,
            urls,
        }
    }

    fn choice(&self) -> Choice {
        CHOICES[self.selected.min(CHOICES.len() - 1)]
    }

    pub fn key(&mut self, key: KeyEvent) -> Option<SetupEvent> {
        if self.checking {
            return None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return Some(SetupEvent::Quit);
        }
        match self.step {
            Step::Choose => self.choose_key(key),
            Step::Details => self.details_key(key, ctrl),
        }
    }

    fn choose_key(&mut self, key: KeyEvent) -> Option<SetupEvent> {
        match key.code {
            KeyCode::Esc => return Some(SetupEvent::Quit),
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(CHOICES.len() - 1)
            }
            KeyCode::Enter => {
                let c = self.choice();
                self.url = self
                    .urls
                    .iter()
                    .find(|(n, _)| *n == c.name)
                    .map(|(_, u)| u.clone())
                    .unwrap_or_else(|| c.default_url.to_string());
                self.key.clear();
                self.error = None;
                self.field = if c.local { Field::Url } else { Field::Key };
                self.step = Step::Details;
            }
            _ => {}
        }
        None
    }

    fn details_key(&mut self, key: KeyEvent, ctrl: bool) -> Option<SetupEvent> {
        let field = match self.field {
            Field::Key => &mut self.key,
            Field::Url => &mut self.url,
        };
        match key.code {
            KeyCode::Esc => {
                self.step = Step::Choose;
                self.error = None;
            }
            KeyCode::Tab | KeyCode::BackTab | KeyCode::Up | KeyCode::Down => {
                self.field = match self.field {
                    Field::Key => Field::Url,
                    Field::Url => Field::Key,
                };
            }
            KeyCode::Enter => return self.attempt().map(SetupEvent::Check),
            KeyCode::Backspace => {
                field.pop();
            }
            KeyCode::Char('u') if ctrl => field.clear(),
            KeyCode::Char(c) if !ctrl => field.push(c),
            _ => {}
        }
        // What was wrong was said of what has just been changed.
        if matches!(key.code, KeyCode::Backspace | KeyCode::Char(_)) {
            self.error = None;
        }
        None
    }

    /// Pasted text goes into the field being edited (one line of it).
    pub fn paste(&mut self, text: &str) {
        if self.step != Step::Details || self.checking {
            return;
        }
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        match self.field {
            Field::Key => self.key.push_str(line),
            Field::Url => self.url.push_str(line),
        }
        self.error = None;
    }

    /// The filled-in form, or why it cannot be checked yet.
    fn attempt(&mut self) -> Option<Attempt> {
        let choice = self.choice();
        let url = self.url.trim().to_string();
        let key = self.key.trim();
        let key = if let Some(var) = key.strip_prefix('$') {
            if !crate::config::keys::valid_var(var) {
                self.error = Some(format!("`{var}` is not a variable name (A-Z, 0-9, _)"));
                return None;
            }
            KeyInput::Env(var.to_string())
        } else if key.is_empty() {
            if !choice.local {
                self.error =
                    Some("Paste the API key, or type $NAME to read it from a variable.".into());
                self.field = Field::Key;
                return None;
            }
            KeyInput::None
        } else {
            KeyInput::Pasted(key.to_string())
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            self.error = Some("The base URL starts with http:// or https://.".into());
            self.field = Field::Url;
            return None;
        }
        self.error = None;
        Some(Attempt {
            choice,
            base_url: url,
            key,
        })
    }

    /// The check ended: on failure the form stays, with why.
    pub fn checked(&mut self, result: Result<(), String>) {
        self.checking = false;
        self.error = result.err();
    }
}

/// Runs the set-up until a provider works (`true`) or the person quits.
/// The first argument is the theme the person named and the colour depth they forced.
pub async fn run(
    (theme_name, colors): (Option<&str>, Option<crate::config::ui::Colors>),
    mut setup: Setup,
    check: Check,
) -> anyhow::Result<bool> {
    let dir = crate::config::global_dir().map(|g| g.join("themes"));
    terminal::install_panic_hook();
    terminal::enter(false)?;
    // After `enter`: the terminal's background is known by then.
    let mut themes = Themes::load(dir.as_deref(), detect_color_depth(colors));
    themes.set_background(terminal::background());
    let theme = themes.chosen_or_automatic(theme_name);
    let result = event_loop(&mut setup, &theme, &check).await;
    terminal::restore();
    result
}

async fn event_loop(setup: &mut Setup, theme: &Theme, check: &Check) -> anyhow::Result<bool> {
    let mut term = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    term.clear()?;
    let mut input = LateFiltered::new(EventStream::new());
    loop {
        term.draw(|f| {
            let area = f.area();
            f.buffer_mut().set_style(area, theme.base());
            setup.render(area, f.buffer_mut(), theme);
        })?;
        let event = match input.next().await {
            Some(Ok(Event::Key(k))) if k.kind != KeyEventKind::Release => setup.key(k),
            Some(Ok(Event::Paste(text))) => {
                setup.paste(&text);
                None
            }
            Some(Ok(_)) => None,
            Some(Err(e)) => return Err(e.into()),
            None => return Ok(false),
        };
        match event {
            Some(SetupEvent::Quit) => return Ok(false),
            Some(SetupEvent::Check(attempt)) => {
                setup.checking = true;
                term.draw(|f| {
                    let area = f.area();
                    f.buffer_mut().set_style(area, theme.base());
                    setup.render(area, f.buffer_mut(), theme);
                })?;
                let result = check(attempt).await;
                let ok = result.is_ok();
                setup.checked(result);
                if ok {
                    return Ok(true);
                }
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests;
