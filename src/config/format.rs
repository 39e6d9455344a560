//! `[format]`: formatting a file after an edit is applied. Off unless the
//! person asks: `enabled = true` formats every language whose built-in
//! formatter is installed; a `[format.NAME]` table that names a
//! `formatter` or a `command` formats that language even without it;
//! `enabled = false` turns all of it off.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::set;

/// How long a formatter may run when `timeout_secs` is not set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The whole `[format]` section.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct FormatConfig {
    /// `true`: every built-in language whose formatter is installed;
    /// `false`: nothing is formatted, whatever the tables say.
    pub enabled: Option<bool>,
    /// How long one formatter run may take before it is stopped.
    #[serde(default, deserialize_with = "super::range::helper_seconds")]
    pub timeout_secs: Option<u64>,
    /// `[format.NAME]` tables, by language name (`rust`, `python`, …, or
    /// a name of the person's own with `filetypes`).
    #[serde(flatten)]
    pub languages: BTreeMap<String, FormatLanguage>,
}

/// The formatters cairn knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FormatterName {
    Rustfmt,
    Ruff,
    Black,
    Prettier,
    Gofmt,
    ClangFormat,
    /// The language server's own formatting (`textDocument/formatting`).
    Lsp,
}

impl FormatterName {
    /// The name as the config spells it, and as results say it.
    pub fn as_str(self) -> &'static str {
        match self {
            FormatterName::Rustfmt => "rustfmt",
            FormatterName::Ruff => "ruff",
            FormatterName::Black => "black",
            FormatterName::Prettier => "prettier",
            FormatterName::Gofmt => "gofmt",
            FormatterName::ClangFormat => "clang-format",
            FormatterName::Lsp => "lsp",
        }
    }
}

/// One `[format.NAME]` table. For a built-in language every field is
/// optional and replaces the built-in value; a language of the person's
/// own needs `filetypes` and a `formatter` or `command`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FormatLanguage {
    /// A formatter cairn knows by name.
    pub formatter: Option<FormatterName>,
    /// A command line of the person's own, which reads the file's text on
    /// stdin and writes the formatted text on stdout; `{file}` is replaced
    /// by the file's path, `{edition}` by the Rust edition of the nearest
    /// `Cargo.toml`. Used instead of `formatter` when both are given.
    pub command: Option<Vec<String>>,
    /// File extensions without the dot: `["py", "pyi"]`.
    pub filetypes: Option<Vec<String>>,
    #[serde(default)]
    pub disabled: bool,
}

impl FormatLanguage {
    /// The table names what formats the language.
    pub fn names_formatter(&self) -> bool {
        self.formatter.is_some() || self.command.is_some()
    }
}

impl FormatConfig {
    /// Whether anything may be formatted at all.
    pub fn any(&self) -> bool {
        match self.enabled {
            Some(false) => false,
            Some(true) => true,
            None => self
                .languages
                .values()
                .any(|l| !l.disabled && l.names_formatter()),
        }
    }

    /// Whether the built-in languages the person did not name format.
    pub fn builtins_on(&self) -> bool {
        self.enabled == Some(true)
    }

    pub fn timeout(&self) -> Duration {
        self.timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_TIMEOUT)
    }

    /// Lays a more specific file's section over this one, field by field.
    pub fn overlay(&mut self, other: FormatConfig) {
        set(&mut self.enabled, other.enabled);
        set(&mut self.timeout_secs, other.timeout_secs);
        for (name, l) in other.languages {
            let entry = self.languages.entry(name).or_default();
            // `formatter` and `command` are one choice: the more specific
            // file's replaces both.
            if l.names_formatter() {
                entry.formatter = l.formatter;
                entry.command = l.command;
            }
            set(&mut entry.filetypes, l.filetypes);
            entry.disabled |= l.disabled;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> FormatConfig {
        crate::config::parse(text).unwrap().format
    }

    #[test]
    fn off_unless_asked_for() {
        assert!(!parse("").any());
        assert!(!parse("[format]\ntimeout_secs = 5\n").any());
        let on = parse("[format]\nenabled = true\n");
        assert!(on.any() && on.builtins_on());
        // Naming a formatter for one language asks for that language only.
        let one = parse("[format.rust]\nformatter = \"rustfmt\"\n");
        assert!(one.any() && !one.builtins_on());
        // A table that only turns a language off asks for nothing.
        assert!(!parse("[format.rust]\ndisabled = true\n").any());
        let off = parse("[format]\nenabled = false\n[format.rust]\nformatter = \"rustfmt\"\n");
        assert!(!off.any());
    }

    #[test]
    fn a_section_reads_names_commands_and_file_types() {
        let c = parse(
            "[format]\nenabled = true\ntimeout_secs = 3\n\
             [format.rust]\ncommand = [\"rustfmt\", \"--edition\", \"2021\", \"--emit\", \"stdout\"]\n\
             [format.python]\nformatter = \"black\"\n\
             [format.web]\nformatter = \"clang-format\"\nfiletypes = [\"proto\"]\n",
        );
        assert_eq!(c.timeout(), Duration::from_secs(3));
        assert_eq!(c.languages["rust"].command.as_ref().unwrap()[0], "rustfmt");
        assert_eq!(c.languages["python"].formatter, Some(FormatterName::Black));
        assert_eq!(
            c.languages["web"].formatter,
            Some(FormatterName::ClangFormat)
        );
        assert_eq!(parse("").timeout(), DEFAULT_TIMEOUT);
    }

    #[test]
    fn mistakes_are_refused_with_what_was_wrong() {
        let err = crate::config::parse("[format.rust]\nformatter = \"rustfnt\"\n").unwrap_err();
        assert!(err.contains("rustfnt") && err.contains("rustfmt"), "{err}");
        let err = crate::config::parse("[format.rust]\ncomand = [\"x\"]\n").unwrap_err();
        assert!(err.contains("comand"), "{err}");
        let err = crate::config::parse("[format]\ntimeout_secs = 0\n").unwrap_err();
        assert!(err.contains("out of range"), "{err}");
    }

    #[test]
    fn overlay_replaces_fields_and_keeps_the_rest() {
        let mut base = parse(
            "[format]\nenabled = true\n[format.rust]\ncommand = [\"rustfmt\"]\nfiletypes = [\"rs\"]\n",
        );
        base.overlay(parse(
            "[format]\ntimeout_secs = 20\n[format.rust]\nformatter = \"lsp\"\n\
             [format.go]\ndisabled = true\n",
        ));
        assert_eq!(base.enabled, Some(true));
        assert_eq!(base.timeout(), Duration::from_secs(20));
        let rust = &base.languages["rust"];
        assert_eq!(rust.formatter, Some(FormatterName::Lsp));
        assert_eq!(rust.command, None, "the newer choice replaces the command");
        assert_eq!(rust.filetypes.as_deref(), Some(&["rs".to_string()][..]));
        assert!(base.languages["go"].disabled);
    }
}
