//! The themes `/theme` and the theme picker switch between by name: the
//! user's theme files are read and the terminal's colour depth detected
//! once, at start-up, so switching reads no file and no environment.

use std::collections::BTreeMap;
use std::path::Path;

use super::{BUILTIN, BUILTIN_NAMES, ColorDepth, Theme, ThemeError, parse};

/// A user theme file as read at start-up: its path (for messages) and its
/// text, or why it could not be read.
#[derive(Debug, Clone)]
struct UserTheme {
    path: String,
    text: Result<String, String>,
}

#[derive(Debug, Clone)]
pub struct Themes {
    user: BTreeMap<String, UserTheme>,
    depth: ColorDepth,
    /// The terminal's background, once it answered.
    background: Option<(u8, u8, u8)>,
}

impl Default for Themes {
    fn default() -> Self {
        Themes {
            user: BTreeMap::new(),
            depth: ColorDepth::TrueColor,
            background: None,
        }
    }
}

impl Themes {
    /// The built-in themes and the `<name>.toml` files in `user_dir`, for a
    /// terminal with `depth` colours.
    pub fn load(user_dir: Option<&Path>, depth: ColorDepth) -> Themes {
        let mut user = BTreeMap::new();
        let files = user_dir.and_then(|d| std::fs::read_dir(d).ok());
        for entry in files.into_iter().flatten().flatten() {
            let path = entry.path();
            let (Some(name), Some("toml")) = (
                path.file_stem().and_then(|n| n.to_str()),
                path.extension().and_then(|e| e.to_str()),
            ) else {
                continue;
            };
            if !path.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&path).map_err(|e| {
                ThemeError::Io {
                    path: path.clone(),
                    source: e,
                }
                .to_string()
            });
            user.insert(
                name.to_string(),
                UserTheme {
                    path: path.display().to_string(),
                    text,
                },
            );
        }
        Themes {
            user,
            depth,
            background: None,
        }
    }

    /// The theme called `name`, adapted to the terminal: the user's file of
    /// that name, else the built-in one.
    pub fn get(&self, name: &str) -> Result<Theme, String> {
        let theme = match self.user.get(name) {
            Some(u) => match &u.text {
                Ok(text) => parse(text, &u.path, name),
                Err(e) => return Err(e.clone()),
            },
            None => match BUILTIN.iter().find(|(n, _)| *n == name) {
                Some((n, text)) => parse(text, &format!("themes/{n}.toml"), n),
                None => Err(ThemeError::NotFound(
                    name.to_string(),
                    BUILTIN_NAMES.join(", "),
                )),
            },
        };
        theme
            .map(|t| t.on_background(self.background).adapt(self.depth))
            .map_err(|e| e.to_string())
    }

    /// The default theme, adapted to the terminal.
    pub fn fallback(&self) -> Theme {
        Theme::default()
            .on_background(self.background)
            .adapt(self.depth)
    }

    /// The theme called `name`, or the one that suits the terminal when
    /// `name` is `None`; the default theme when the named one is broken.
    pub fn chosen_or_automatic(&self, name: Option<&str>) -> Theme {
        self.get(name.unwrap_or(self.automatic()))
            .unwrap_or_else(|_| self.fallback())
    }

    /// Records the background the terminal reported.
    pub fn set_background(&mut self, rgb: Option<(u8, u8, u8)>) {
        self.background = rgb;
    }

    /// The theme that suits the terminal when the person chose none: light
    /// on a light background, else dark.
    pub fn automatic(&self) -> &'static str {
        match self.background {
            Some(bg) if super::contrast::is_light(bg) => "light",
            _ => "dark",
        }
    }

    /// The names the theme picker offers.
    pub fn names(&self) -> Vec<String> {
        BUILTIN_NAMES.iter().map(|n| n.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_themes_are_read_once_and_switched_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.toml"), "inherits = \"light\"\n").unwrap();
        let themes = Themes::load(Some(dir.path()), ColorDepth::TrueColor);
        std::fs::remove_file(dir.path().join("mine.toml")).unwrap();
        assert_eq!(themes.get("mine").unwrap().name, "mine");
        assert_eq!(themes.get("dark").unwrap().name, "dark");
        let err = themes.get("nope").unwrap_err();
        assert!(err.contains("not found"), "{err}");
    }
}
