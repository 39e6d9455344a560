//! Colour themes: built-in TOML files embedded in the binary, user themes
//! loaded from a directory, and adaptation to what the terminal can show.
//!
//! Every role is a [`Style`] (colours plus modifiers) meant to be applied with
//! `Style::patch`, so a role can carry boldness or reverse video as well as a
//! colour. That matters for [`ColorDepth::NoColor`]: with colours stripped, the
//! roles that only differed by background (selection, focus, diff lines) keep a
//! modifier so they stay visible.

use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};

/// What the terminal can display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    TrueColor,
    Ansi256,
    Ansi16,
    NoColor,
}

/// A broken or missing theme, named so a person can find and fix it.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error(
        "theme '{0}' not found (built-in themes: {1}; user themes are <name>.toml in the themes directory)"
    )]
    NotFound(String, String),
    #[error("cannot read theme file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("theme file {path} is not valid TOML: {message}")]
    Syntax { path: String, message: String },
    #[error("theme file {path}, key '{key}': {message}")]
    Key {
        path: String,
        key: String,
        message: String,
    },
}

/// All the styles the interface draws with.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    /// Default text colour; `None` leaves the terminal's own.
    pub fg: Option<Color>,
    /// Default background; `None` leaves the terminal's own.
    pub bg: Option<Color>,
    /// The text and background colours a theme that keeps the terminal's
    /// own paints when the terminal's background is the opposite of the one
    /// it was made for (a dark theme in a white xterm).
    pub canvas: Style,
    pub dim: Style,
    pub accent: Style,
    pub border: Style,
    pub border_focus: Style,
    pub user_prompt: Style,
    pub assistant: Style,
    pub reasoning: Style,
    pub tool_name: Style,
    pub success: Style,
    pub warning: Style,
    pub error: Style,
    pub selection_bg: Style,
    pub status_bg: Style,
    pub status_fg: Style,
    pub line_number: Style,
    pub code_bg: Style,
    pub inline_code: Style,
    pub heading: Style,
    pub link: Style,
    pub quote: Style,
    pub diff_add_fg: Style,
    pub diff_add_bg: Style,
    pub diff_del_fg: Style,
    pub diff_del_bg: Style,
    pub diff_add_word_bg: Style,
    pub diff_del_word_bg: Style,
    pub diff_hunk: Style,
    /// Name of a syntect default theme used for code.
    pub syntax_theme: String,
    /// Depth the styles were adapted to; code highlighting follows it.
    pub color_depth: ColorDepth,
}

const BUILTIN: [(&str, &str); 4] = [
    ("dark", include_str!("../../../themes/dark.toml")),
    ("light", include_str!("../../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../../themes/high-contrast.toml"),
    ),
    (
        "colorblind",
        include_str!("../../../themes/colorblind.toml"),
    ),
];

const BUILTIN_NAMES: [&str; 4] = ["dark", "light", "high-contrast", "colorblind"];

/// Syntect's bundled themes; a theme file must name one of them.
pub const SYNTAX_THEMES: [&str; 7] = [
    "base16-ocean.dark",
    "base16-eighties.dark",
    "base16-mocha.dark",
    "base16-ocean.light",
    "InspiredGitHub",
    "Solarized (dark)",
    "Solarized (light)",
];

impl Theme {
    pub fn builtin_names() -> &'static [&'static str] {
        &BUILTIN_NAMES
    }

    /// A built-in theme by name, else `<user_dir>/<name>.toml`. A user theme
    /// may set `inherits = "dark"` (the default) and override only some keys.
    pub fn load(name: &str, user_dir: Option<&Path>) -> Result<Theme, ThemeError> {
        if let Some(dir) = user_dir {
            let path = dir.join(format!("{name}.toml"));
            if path.is_file() {
                let text = std::fs::read_to_string(&path).map_err(|source| ThemeError::Io {
                    path: path.clone(),
                    source,
                })?;
                return parse(&text, &path.display().to_string(), name);
            }
        }
        match BUILTIN.iter().find(|(n, _)| *n == name) {
            Some((n, text)) => parse(text, &format!("themes/{n}.toml"), n),
            None => Err(ThemeError::NotFound(
                name.to_string(),
                BUILTIN_NAMES.join(", "),
            )),
        }
    }

    /// The default theme. The embedded file is checked by a unit test, so a
    /// failure here is a build defect; fall back to a plain theme regardless.
    pub fn dark() -> Theme {
        let (_, text) = BUILTIN[0];
        parse(text, "themes/dark.toml", "dark").unwrap_or_else(|_| Theme::plain())
    }

    /// A theme with no colours at all: terminal defaults plus modifiers.
    pub fn plain() -> Theme {
        let s = Style::default();
        let b = Style::default().add_modifier(Modifier::BOLD);
        let r = Style::default().add_modifier(Modifier::REVERSED);
        Theme {
            name: "plain".into(),
            fg: None,
            bg: None,
            canvas: s,
            dim: s.add_modifier(Modifier::DIM),
            accent: b,
            border: s,
            border_focus: b,
            user_prompt: b,
            assistant: s,
            reasoning: s.add_modifier(Modifier::ITALIC | Modifier::DIM),
            tool_name: b,
            success: s,
            warning: b,
            error: b,
            selection_bg: r,
            status_bg: r,
            status_fg: s,
            line_number: s.add_modifier(Modifier::DIM),
            code_bg: s,
            inline_code: s,
            heading: b,
            link: s.add_modifier(Modifier::UNDERLINED),
            quote: s.add_modifier(Modifier::ITALIC),
            diff_add_fg: b,
            diff_add_bg: s,
            diff_del_fg: s,
            diff_del_bg: s,
            diff_add_word_bg: r,
            diff_del_word_bg: r,
            diff_hunk: s.add_modifier(Modifier::DIM),
            syntax_theme: "base16-ocean.dark".into(),
            color_depth: ColorDepth::NoColor,
        }
    }

    /// The theme as drawn on a terminal whose background is `terminal_bg`:
    /// a theme that keeps the terminal's colours but was made for the other
    /// kind of background paints its canvas instead.
    pub fn on_background(mut self, terminal_bg: Option<(u8, u8, u8)>) -> Theme {
        let (Some(term), None, Some(Color::Rgb(r, g, b))) = (terminal_bg, self.bg, self.canvas.bg)
        else {
            return self;
        };
        if contrast::is_light(term) != contrast::is_light((r, g, b)) {
            self.bg = self.canvas.bg;
            self.fg = self.canvas.fg.or(self.fg);
        }
        self
    }

    /// Maps every colour to what `depth` can show. With `NoColor` all colours
    /// go and the background-only roles gain a modifier instead.
    pub fn adapt(mut self, depth: ColorDepth) -> Theme {
        let declared = depth::Declared::of(&self);
        self.color_depth = depth;
        if depth == ColorDepth::TrueColor {
            return self;
        }
        self.fg = self.fg.and_then(|c| adapt_color(c, depth));
        self.bg = self.bg.and_then(|c| adapt_color(c, depth));
        for style in self.styles_mut() {
            *style = adapt_style(*style, depth);
        }
        if depth == ColorDepth::Ansi16 {
            // Sixteen colours have no dark green or red to lay text on: diff
            // lines show in their add/delete text colour instead, and changed
            // words in reverse video.
            self.diff_add_bg.bg = None;
            self.diff_del_bg.bg = None;
            self.diff_add_word_bg = Style::default().add_modifier(Modifier::REVERSED);
            self.diff_del_word_bg = Style::default().add_modifier(Modifier::REVERSED);
            // Nor a shade to lift the chosen row from the page (its nearest
            // colour is often the page's own): reverse video shows it.
            self.selection_bg = Style::default().add_modifier(Modifier::REVERSED);
        }
        depth::derive(&mut self, &declared, depth);
        if depth == ColorDepth::NoColor {
            let keep = |s: &mut Style, m: Modifier| *s = s.add_modifier(m);
            keep(&mut self.selection_bg, Modifier::REVERSED);
            keep(&mut self.status_bg, Modifier::REVERSED);
            keep(&mut self.border_focus, Modifier::BOLD);
            keep(&mut self.diff_add_word_bg, Modifier::REVERSED);
            keep(&mut self.diff_del_word_bg, Modifier::REVERSED);
            keep(&mut self.diff_add_fg, Modifier::BOLD);
            keep(&mut self.heading, Modifier::BOLD);
            keep(&mut self.link, Modifier::UNDERLINED);
            keep(&mut self.dim, Modifier::DIM);
        }
        self
    }

    /// The base style for text: the theme's fg/bg.
    pub fn base(&self) -> Style {
        Style {
            fg: self.fg,
            bg: self.bg,
            ..Style::default()
        }
    }

    fn styles_mut(&mut self) -> [&mut Style; 27] {
        [
            &mut self.dim,
            &mut self.accent,
            &mut self.border,
            &mut self.border_focus,
            &mut self.user_prompt,
            &mut self.assistant,
            &mut self.reasoning,
            &mut self.tool_name,
            &mut self.success,
            &mut self.warning,
            &mut self.error,
            &mut self.selection_bg,
            &mut self.status_bg,
            &mut self.status_fg,
            &mut self.line_number,
            &mut self.code_bg,
            &mut self.inline_code,
            &mut self.heading,
            &mut self.link,
            &mut self.quote,
            &mut self.diff_add_fg,
            &mut self.diff_add_bg,
            &mut self.diff_del_fg,
            &mut self.diff_del_bg,
            &mut self.diff_add_word_bg,
            &mut self.diff_del_word_bg,
            &mut self.diff_hunk,
        ]
    }
}

impl Default for Theme {
    fn default() -> Self {
        Theme::dark()
    }
}

/// The terminal's colour support: `forced` when the person set it, else
/// from the environment and the terminal's terminfo entry.
pub fn detect_color_depth(forced: Option<crate::config::ui::Colors>) -> ColorDepth {
    use crate::config::ui::Colors;
    if let Some(c) = forced {
        return match c {
            Colors::TrueColor => ColorDepth::TrueColor,
            Colors::Ansi256 => ColorDepth::Ansi256,
            Colors::Ansi16 => ColorDepth::Ansi16,
            Colors::None => ColorDepth::NoColor,
        };
    }
    let var = |k: &str| std::env::var(k).ok();
    let term = var("TERM").unwrap_or_default();
    let home = var("HOME").map(PathBuf::from);
    let info = terminfo::lookup(
        &term,
        home.as_deref(),
        var("TERMINFO").as_deref(),
        var("TERMINFO_DIRS").as_deref(),
    );
    depth_from_env(
        &var("NO_COLOR").unwrap_or_default(),
        &var("COLORTERM").unwrap_or_default(),
        &term,
        info,
    )
}

fn depth_from_env(
    no_color: &str,
    colorterm: &str,
    term: &str,
    info: Option<terminfo::Colours>,
) -> ColorDepth {
    if !no_color.is_empty() {
        return ColorDepth::NoColor;
    }
    let ct = colorterm.to_ascii_lowercase();
    if ct == "truecolor" || ct == "24bit" || info.is_some_and(|i| i.direct) {
        return ColorDepth::TrueColor;
    }
    match info.and_then(|i| i.count) {
        Some(n) if n >= 256 => return ColorDepth::Ansi256,
        Some(n) if n >= 8 => return ColorDepth::Ansi16,
        Some(_) => return ColorDepth::NoColor,
        None => {}
    }
    if term.ends_with("-256color") || term.ends_with("-direct") {
        return ColorDepth::Ansi256;
    }
    ColorDepth::Ansi16
}

pub fn adapt_style(mut s: Style, depth: ColorDepth) -> Style {
    s.fg = s.fg.and_then(|c| adapt_color(c, depth));
    s.bg = s.bg.and_then(|c| adapt_color(c, depth));
    s.underline_color = None;
    s
}

/// One colour mapped to `depth`; `None` means "terminal default".
pub fn adapt_color(c: Color, depth: ColorDepth) -> Option<Color> {
    match depth {
        ColorDepth::TrueColor => Some(c),
        ColorDepth::NoColor => None,
        ColorDepth::Ansi256 => Some(match c {
            Color::Rgb(r, g, b) => Color::Indexed(rgb_to_256(r, g, b)),
            other => other,
        }),
        ColorDepth::Ansi16 => Some(match c {
            Color::Rgb(r, g, b) => nearest_16(r, g, b),
            Color::Indexed(i) => {
                let (r, g, b) = index_to_rgb(i);
                nearest_16(r, g, b)
            }
            other => other,
        }),
    }
}

const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    let cube_idx = |v: u8| -> usize {
        CUBE.iter()
            .enumerate()
            .min_by_key(|(_, c)| (i32::from(**c) - i32::from(v)).abs())
            .map_or(0, |(i, _)| i)
    };
    let (ri, gi, bi) = (cube_idx(r), cube_idx(g), cube_idx(b));
    let cube = (CUBE[ri], CUBE[gi], CUBE[bi]);
    let avg = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let gray_i = (((avg as i32 - 8).max(0)) / 10).min(23) as u8;
    let gray = 8 + 10 * gray_i;
    if dist((r, g, b), (gray, gray, gray)) < dist((r, g, b), cube) {
        232 + gray_i
    } else {
        16 + (36 * ri + 6 * gi + bi) as u8
    }
}

fn dist(a: (u8, u8, u8), b: (u8, u8, u8)) -> i32 {
    let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
    d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)
}

const ANSI16: [(Color, (u8, u8, u8)); 16] = [
    (Color::Black, (0, 0, 0)),
    (Color::Red, (205, 0, 0)),
    (Color::Green, (0, 205, 0)),
    (Color::Yellow, (205, 205, 0)),
    (Color::Blue, (0, 0, 238)),
    (Color::Magenta, (205, 0, 205)),
    (Color::Cyan, (0, 205, 205)),
    (Color::Gray, (229, 229, 229)),
    (Color::DarkGray, (127, 127, 127)),
    (Color::LightRed, (255, 0, 0)),
    (Color::LightGreen, (0, 255, 0)),
    (Color::LightYellow, (255, 255, 0)),
    (Color::LightBlue, (92, 92, 255)),
    (Color::LightMagenta, (255, 0, 255)),
    (Color::LightCyan, (0, 255, 255)),
    (Color::White, (255, 255, 255)),
];

fn index_to_rgb(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => ANSI16[usize::from(i)].1,
        16..=231 => {
            let n = i - 16;
            (
                CUBE[usize::from(n / 36)],
                CUBE[usize::from((n / 6) % 6)],
                CUBE[usize::from(n % 6)],
            )
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

fn nearest_16(r: u8, g: u8, b: u8) -> Color {
    ANSI16
        .iter()
        .min_by_key(|(_, rgb)| dist((r, g, b), *rgb))
        .map_or(Color::Reset, |(c, _)| *c)
}

pub mod contrast;
mod depth;
mod parse;
mod set;
pub mod terminfo;

use parse::parse;
pub use parse::parse_color;
pub use set::Themes;

#[cfg(test)]
mod contrast_tests;
#[cfg(test)]
mod usage_tests;
#[cfg(test)]
mod tests {
    use super::parse::STYLE_KEYS;
    use super::*;

    #[test]
    fn builtins_load_and_define_every_style() {
        for name in Theme::builtin_names() {
            let theme = Theme::load(name, None).unwrap();
            assert_eq!(theme.name, *name);
            let (_, text) = BUILTIN.iter().find(|(n, _)| n == name).unwrap();
            let table: toml::Table = toml::from_str(text).unwrap();
            let styles = table["styles"].as_table().unwrap();
            for key in STYLE_KEYS {
                assert!(styles.contains_key(key), "{name} lacks styles.{key}");
            }
        }
        assert_ne!(Theme::dark(), Theme::plain());
    }

    #[test]
    fn high_contrast_does_not_use_red_green_for_diffs() {
        let t = Theme::load("high-contrast", None).unwrap();
        let is_red_or_green = |c: Option<Color>| match c {
            Some(Color::Rgb(r, g, b)) => {
                (r > 150 && g < 100 && b < 100) || (g > 150 && r < 100 && b < 100)
            }
            Some(Color::Red | Color::Green | Color::LightRed | Color::LightGreen) => true,
            _ => false,
        };
        for s in [t.diff_add_fg, t.diff_add_bg, t.diff_del_fg, t.diff_del_bg] {
            assert!(!is_red_or_green(s.fg) && !is_red_or_green(s.bg), "{s:?}");
        }
        assert!(t.diff_add_fg.add_modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn user_theme_inherits_and_overrides() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("mine.toml"),
            "inherits = \"light\"\n[styles]\naccent = { fg = \"#ff8800\", bold = true }\n",
        )
        .unwrap();
        let t = Theme::load("mine", Some(dir.path())).unwrap();
        let light = Theme::load("light", None).unwrap();
        assert_eq!(t.name, "mine");
        assert_eq!(t.accent.fg, Some(Color::Rgb(255, 136, 0)));
        assert_eq!(t.heading, light.heading);
    }

    #[test]
    fn broken_theme_names_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "[styles]\nlink = \"#12345z\"\n").unwrap();
        let err = Theme::load("bad", Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bad.toml") && err.contains("styles.link"),
            "{err}"
        );

        std::fs::write(&path, "[styles]\nlinq = \"blue\"\n").unwrap();
        let err = Theme::load("bad", Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("styles.linq") && err.contains("unknown style"),
            "{err}"
        );

        std::fs::write(&path, "syntax_theme = \"nope\"\n").unwrap();
        let err = Theme::load("bad", Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("syntax_theme") && err.contains("InspiredGitHub"),
            "{err}"
        );

        std::fs::write(&path, "fg = [1\n").unwrap();
        let err = Theme::load("bad", Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad.toml") && err.contains("TOML"), "{err}");

        let err = Theme::load("missing", Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("missing") && err.contains("high-contrast"),
            "{err}"
        );
    }

    #[test]
    fn colour_parsing() {
        assert_eq!(parse_color("#0a0B0c"), Ok(Some(Color::Rgb(10, 11, 12))));
        assert_eq!(parse_color("#fff"), Ok(Some(Color::Rgb(255, 255, 255))));
        assert_eq!(parse_color("light-blue"), Ok(Some(Color::LightBlue)));
        assert_eq!(parse_color("default"), Ok(None));
        assert_eq!(parse_color("42"), Ok(Some(Color::Indexed(42))));
        assert!(parse_color("#12").is_err());
        assert!(parse_color("chartreuse").is_err());
    }

    #[test]
    fn nocolor_strips_colours_and_keeps_focus_visible() {
        let t = Theme::dark().adapt(ColorDepth::NoColor);
        assert_eq!((t.fg, t.bg), (None, None));
        for s in Theme::dark().adapt(ColorDepth::NoColor).styles_mut() {
            assert_eq!((s.fg, s.bg), (None, None));
        }
        assert!(t.selection_bg.add_modifier.contains(Modifier::REVERSED));
        assert!(t.border_focus.add_modifier.contains(Modifier::BOLD));
        assert!(t.diff_add_word_bg.add_modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn ansi_adaptation_maps_rgb() {
        let t = Theme::dark().adapt(ColorDepth::Ansi256);
        assert!(matches!(t.diff_add_bg.bg, Some(Color::Indexed(_))));
        let t = Theme::dark().adapt(ColorDepth::Ansi16);
        assert!(!matches!(
            t.diff_add_bg.bg,
            Some(Color::Indexed(_) | Color::Rgb(..))
        ));
        assert_eq!(rgb_to_256(255, 0, 0), 196);
        assert_eq!(rgb_to_256(128, 128, 128), 244);
        assert_eq!(nearest_16(250, 250, 250), Color::White);
        assert_eq!(
            adapt_color(Color::Indexed(196), ColorDepth::Ansi16),
            Some(Color::LightRed)
        );
    }

    #[test]
    fn depth_detection() {
        let none = None;
        assert_eq!(
            depth_from_env("1", "truecolor", "xterm-256color", none),
            ColorDepth::NoColor
        );
        assert_eq!(
            depth_from_env("", "truecolor", "xterm", none),
            ColorDepth::TrueColor
        );
        assert_eq!(depth_from_env("", "24bit", "", none), ColorDepth::TrueColor);
        assert_eq!(
            depth_from_env("", "", "xterm-256color", none),
            ColorDepth::Ansi256
        );
        assert_eq!(depth_from_env("", "", "xterm", none), ColorDepth::Ansi16);
        assert_eq!(depth_from_env("", "", "", none), ColorDepth::Ansi16);
        let info = |count, direct| Some(terminfo::Colours { count, direct });
        // kitty and foot over ssh: no COLORTERM, but terminfo knows.
        assert_eq!(
            depth_from_env("", "", "xterm-kitty", info(Some(256), true)),
            ColorDepth::TrueColor
        );
        assert_eq!(
            depth_from_env("", "", "foot", info(Some(256), false)),
            ColorDepth::Ansi256
        );
        assert_eq!(
            depth_from_env("", "", "xterm-mono", info(None, false)),
            ColorDepth::Ansi16
        );
        assert_eq!(
            depth_from_env("", "", "vt100", info(Some(2), false)),
            ColorDepth::NoColor
        );
        use crate::config::ui::Colors;
        assert_eq!(detect_color_depth(Some(Colors::Ansi16)), ColorDepth::Ansi16);
    }

    #[test]
    fn sixteen_colours_show_the_selection_in_reverse() {
        for name in Theme::builtin_names() {
            let t = Theme::load(name, None).unwrap().adapt(ColorDepth::Ansi16);
            assert!(
                t.selection_bg.add_modifier.contains(Modifier::REVERSED),
                "{name}: {:?}",
                t.selection_bg
            );
        }
    }
}
