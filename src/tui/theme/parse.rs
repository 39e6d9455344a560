//! Reading theme files: colours, styles and the keys a theme may set.

use ratatui::style::{Color, Modifier, Style};

use super::{BUILTIN_NAMES, ColorDepth, SYNTAX_THEMES, Theme, ThemeError};

/// Parses "#rrggbb", "#rgb", a colour name, an index 0-255, or
/// "default"/"reset" (the terminal's own colour, returned as `None`).
pub fn parse_color(s: &str) -> Result<Option<Color>, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    if lower == "default" || lower == "reset" || lower == "none" {
        return Ok(None);
    }
    if let Some(hex) = t.strip_prefix('#') {
        let expand = |h: &str| -> Option<(u8, u8, u8)> {
            match h.len() {
                6 => Some((
                    u8::from_str_radix(h.get(0..2)?, 16).ok()?,
                    u8::from_str_radix(h.get(2..4)?, 16).ok()?,
                    u8::from_str_radix(h.get(4..6)?, 16).ok()?,
                )),
                3 => {
                    let d = |i: usize| {
                        u8::from_str_radix(h.get(i..i + 1)?, 16)
                            .ok()
                            .map(|v| v * 17)
                    };
                    Some((d(0)?, d(1)?, d(2)?))
                }
                _ => None,
            }
        };
        return expand(hex)
            .map(|(r, g, b)| Some(Color::Rgb(r, g, b)))
            .ok_or_else(|| format!("'{s}' is not a colour: expected #rrggbb"));
    }
    if let Ok(i) = lower.parse::<u8>() {
        return Ok(Some(Color::Indexed(i)));
    }
    let name = lower.replace(['-', '_', ' '], "");
    let c = match name.as_str() {
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "darkgray" | "darkgrey" => Color::DarkGray,
        "lightred" => Color::LightRed,
        "lightgreen" => Color::LightGreen,
        "lightyellow" => Color::LightYellow,
        "lightblue" => Color::LightBlue,
        "lightmagenta" => Color::LightMagenta,
        "lightcyan" => Color::LightCyan,
        "white" => Color::White,
        _ => {
            return Err(format!(
                "'{s}' is not a colour: use #rrggbb, a number 0-255, a name like 'blue' or 'lightcyan', or 'default'"
            ));
        }
    };
    Ok(Some(c))
}

pub(super) const STYLE_KEYS: [&str; 27] = [
    "dim",
    "accent",
    "border",
    "border_focus",
    "user_prompt",
    "assistant",
    "reasoning",
    "tool_name",
    "success",
    "warning",
    "error",
    "selection_bg",
    "status_bg",
    "status_fg",
    "line_number",
    "code_bg",
    "inline_code",
    "heading",
    "link",
    "quote",
    "diff_add_fg",
    "diff_add_bg",
    "diff_del_fg",
    "diff_del_bg",
    "diff_add_word_bg",
    "diff_del_word_bg",
    "diff_hunk",
];

/// Parses one theme file. `path` only names the file in errors. A built-in
/// starts from no colour; a user file starts from `inherits` (default "dark").
pub(super) fn parse(text: &str, path: &str, name: &str) -> Result<Theme, ThemeError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| ThemeError::Syntax {
        path: path.to_string(),
        message: e.to_string(),
    })?;
    let key_err = |key: &str, message: String| ThemeError::Key {
        path: path.to_string(),
        key: key.to_string(),
        message,
    };
    let is_builtin = BUILTIN_NAMES.contains(&name) && path.starts_with("themes/");
    let mut theme = match table.get("inherits") {
        Some(toml::Value::String(parent)) => {
            if !BUILTIN_NAMES.contains(&parent.as_str()) {
                return Err(key_err(
                    "inherits",
                    format!(
                        "'{parent}' is not a built-in theme ({})",
                        BUILTIN_NAMES.join(", ")
                    ),
                ));
            }
            Theme::load(parent, None)?
        }
        Some(_) => return Err(key_err("inherits", "expected a theme name string".into())),
        None if is_builtin => Theme::plain(),
        None => Theme::dark(),
    };
    theme.name = name.to_string();
    theme.color_depth = ColorDepth::TrueColor;
    for (key, value) in &table {
        set_key(&mut theme, key, value, path)?;
    }
    Ok(theme)
}

/// Applies one top-level key of a theme file.
fn set_key(
    theme: &mut Theme,
    key: &str,
    value: &toml::Value,
    path: &str,
) -> Result<(), ThemeError> {
    let key_err = |key: &str, message: String| ThemeError::Key {
        path: path.to_string(),
        key: key.to_string(),
        message,
    };
    match key {
        "inherits" => {}
        "name" => {
            theme.name = value
                .as_str()
                .ok_or_else(|| key_err(key, "expected a string".into()))?
                .to_string();
        }
        "syntax_theme" => {
            let v = value
                .as_str()
                .ok_or_else(|| key_err(key, "expected a string".into()))?;
            if !SYNTAX_THEMES.contains(&v) {
                return Err(key_err(
                    key,
                    format!(
                        "unknown syntax theme '{v}'; choose one of: {}",
                        SYNTAX_THEMES.join(", ")
                    ),
                ));
            }
            theme.syntax_theme = v.to_string();
        }
        "fg" | "bg" => {
            let v = value
                .as_str()
                .ok_or_else(|| key_err(key, "expected a colour string".into()))?;
            let c = parse_color(v).map_err(|m| key_err(key, m))?;
            if key == "fg" {
                theme.fg = c;
            } else {
                theme.bg = c;
            }
        }
        "canvas" => {
            theme.canvas = parse_style(value).map_err(|m| key_err(key, m))?;
        }
        "styles" => {
            let styles = value
                .as_table()
                .ok_or_else(|| key_err(key, "expected a table of styles".into()))?;
            for (role, v) in styles {
                let full = format!("styles.{role}");
                let idx = STYLE_KEYS.iter().position(|k| k == role).ok_or_else(|| {
                    key_err(
                        &full,
                        format!("unknown style; known: {}", STYLE_KEYS.join(", ")),
                    )
                })?;
                let style = parse_style(v).map_err(|m| key_err(&full, m))?;
                *theme.styles_mut()[idx] = style;
            }
        }
        other => {
            return Err(key_err(
                other,
                "unknown key; expected name, inherits, syntax_theme, fg, bg, canvas or [styles]"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// A style is either a colour string (the foreground) or a table with
/// fg, bg and boolean modifiers.
fn parse_style(v: &toml::Value) -> Result<Style, String> {
    let mut style = Style::default();
    match v {
        toml::Value::String(s) => {
            style.fg = parse_color(s)?;
        }
        toml::Value::Table(t) => {
            for (k, v) in t {
                match k.as_str() {
                    "fg" | "bg" => {
                        let s = v.as_str().ok_or(format!("'{k}' must be a colour string"))?;
                        let c = parse_color(s)?;
                        if k == "fg" {
                            style.fg = c;
                        } else {
                            style.bg = c;
                        }
                    }
                    m => {
                        let on = v.as_bool().ok_or(format!("'{m}' must be true or false"))?;
                        let modifier = match m {
                            "bold" => Modifier::BOLD,
                            "italic" => Modifier::ITALIC,
                            "underline" | "underlined" => Modifier::UNDERLINED,
                            "dim" => Modifier::DIM,
                            "reversed" | "reverse" => Modifier::REVERSED,
                            "strikethrough" => Modifier::CROSSED_OUT,
                            _ => {
                                return Err(format!(
                                    "unknown attribute '{m}'; use fg, bg, bold, italic, underline, dim, reversed, strikethrough"
                                ));
                            }
                        };
                        if on {
                            style = style.add_modifier(modifier);
                        }
                    }
                }
            }
        }
        _ => {
            return Err(
                "expected a colour string or a table like { fg = \"#rrggbb\", bold = true }".into(),
            );
        }
    }
    Ok(style)
}
