//! Which formatter serves a file: the languages cairn knows out of the
//! box, the person's `[format.NAME]` tables over them, and the command
//! line each formatter is run with.

use std::path::Path;

use crate::config::format::{FormatConfig, FormatLanguage, FormatterName};

/// A language as cairn formats it.
#[derive(Debug, Clone, PartialEq)]
pub struct Language {
    pub name: String,
    pub filetypes: Vec<String>,
    pub how: How,
    /// Named by the person's config, not only a built-in default: a
    /// missing program is said, where a built-in one is left out quietly.
    pub asked: bool,
}

/// What formats a language.
#[derive(Debug, Clone, PartialEq)]
pub enum How {
    /// Formatters cairn knows, in order of preference: the first one
    /// installed is used.
    Known(Vec<FormatterName>),
    /// The person's own command line.
    Command(Vec<String>),
}

/// (name, file types, formatters in order of preference).
type Builtin = (
    &'static str,
    &'static [&'static str],
    &'static [FormatterName],
);

use FormatterName::{Black, ClangFormat, Gofmt, Prettier, Ruff, Rustfmt};

/// The languages formatted when `[format] enabled = true`.
const BUILTIN: &[Builtin] = &[
    ("rust", &["rs"], &[Rustfmt]),
    ("python", &["py", "pyi"], &[Ruff, Black]),
    ("go", &["go"], &[Gofmt]),
    ("c", &["c", "h"], &[ClangFormat]),
    (
        "cpp",
        &["cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        &[ClangFormat],
    ),
    ("javascript", &["js", "jsx", "mjs", "cjs"], &[Prettier]),
    ("typescript", &["ts", "tsx", "mts", "cts"], &[Prettier]),
    ("json", &["json"], &[Prettier]),
    ("css", &["css", "scss", "less"], &[Prettier]),
    ("html", &["html", "vue"], &[Prettier]),
    ("yaml", &["yaml", "yml"], &[Prettier]),
    ("markdown", &["md", "markdown"], &[Prettier]),
];

/// Every language the configuration formats, the person's own tables
/// first (so a table of theirs wins over a built-in for the same files),
/// then the built-ins; languages turned off are left out. Tables that
/// cannot be a language are returned as (name, why).
pub fn languages(config: &FormatConfig) -> (Vec<Language>, Vec<(String, String)>) {
    let mut mine = Vec::new();
    let mut builtin = Vec::new();
    let mut bad = Vec::new();
    if !config.any() {
        return (mine, bad);
    }
    for (name, types, formatters) in BUILTIN {
        let table = config.languages.get(*name);
        if table.is_some_and(|t| t.disabled) {
            continue;
        }
        let asked = table.is_some_and(FormatLanguage::names_formatter);
        if !asked && !config.builtins_on() {
            continue;
        }
        let mut language = Language {
            name: name.to_string(),
            filetypes: types.iter().map(|t| t.to_string()).collect(),
            how: How::Known(formatters.to_vec()),
            asked,
        };
        if let Some(t) = table {
            over(&mut language, t);
        }
        builtin.push(language);
    }
    for (name, t) in &config.languages {
        if t.disabled || BUILTIN.iter().any(|b| b.0 == name) {
            continue;
        }
        match (&t.filetypes, t.names_formatter()) {
            (Some(types), true) if !types.is_empty() => {
                let mut language = Language {
                    name: name.clone(),
                    filetypes: types.clone(),
                    how: How::Known(Vec::new()),
                    asked: true,
                };
                over(&mut language, t);
                mine.push(language);
            }
            (None, _) | (Some(_), true) => bad.push((
                name.clone(),
                format!("`[format.{name}]` needs `filetypes` (the extensions it formats)"),
            )),
            (Some(_), false) => bad.push((
                name.clone(),
                format!("`[format.{name}]` needs a `formatter` or a `command`"),
            )),
        }
    }
    mine.extend(builtin);
    (mine, bad)
}

fn over(language: &mut Language, t: &FormatLanguage) {
    if let Some(types) = &t.filetypes {
        language.filetypes = types.clone();
    }
    match (&t.command, t.formatter) {
        (Some(words), _) => language.how = How::Command(words.clone()),
        (None, Some(f)) => language.how = How::Known(vec![f]),
        (None, None) => {}
    }
}

/// Whether `language` formats `path` (by its extension).
pub fn serves(language: &Language, path: &Path) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    !ext.is_empty()
        && (language.filetypes.iter()).any(|f| f.trim_start_matches('.').eq_ignore_ascii_case(&ext))
}

/// The command line of a formatter cairn knows; `None` for the language
/// server's formatting, which runs no command.
pub fn known_command(f: FormatterName) -> Option<Vec<&'static str>> {
    Some(match f {
        FormatterName::Rustfmt => vec!["rustfmt", "--emit", "stdout", "--edition", "{edition}"],
        FormatterName::Ruff => vec!["ruff", "format", "--stdin-filename", "{file}", "-"],
        FormatterName::Black => vec!["black", "--quiet", "--stdin-filename", "{file}", "-"],
        FormatterName::Prettier => vec!["prettier", "--stdin-filepath", "{file}"],
        FormatterName::Gofmt => vec!["gofmt"],
        FormatterName::ClangFormat => vec!["clang-format", "--assume-filename={file}"],
        FormatterName::Lsp => return None,
    })
}

/// Programs that run another one named by the next word (`npx prettier`):
/// a result names both.
const RUNNERS: &[&str] = &[
    "npx", "pnpx", "bunx", "uvx", "pipx", "yarn", "pnpm", "bun", "uv", "poetry", "env",
];

/// The name a result gives a command: its program (`rustfmt`), or the
/// runner and what it runs (`npx prettier`).
pub fn command_name(words: &[String]) -> String {
    let base = |w: &str| {
        Path::new(w)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| w.to_string())
    };
    let Some(first) = words.first() else {
        return String::new();
    };
    let program = base(first);
    if RUNNERS.contains(&program.as_str())
        && let Some(next) = words[1..].iter().find(|w| !w.starts_with('-'))
    {
        return format!("{program} {}", base(next));
    }
    program
}

/// The words of a command line with `{file}`, `{root}` and `{edition}`
/// filled in for `path` in `workspace`.
pub fn fill(words: &[String], path: &Path, workspace: &Path) -> Vec<String> {
    let edition = words
        .iter()
        .any(|w| w.contains("{edition}"))
        .then(|| rust_edition(path, workspace));
    words
        .iter()
        .map(|w| {
            let mut w = w
                .replace("{file}", &path.to_string_lossy())
                .replace("{root}", &workspace.to_string_lossy());
            if let Some(e) = &edition {
                w = w.replace("{edition}", e);
            }
            w
        })
        .collect()
}

/// The Rust edition of the package `path` belongs to: the nearest
/// `Cargo.toml` at or above its folder (inside the workspace) with a
/// `[package]`, its `edition` or the workspace's `[workspace.package]`
/// one; 2015 for a package that names none (Cargo's default); 2021 when
/// there is no package at all.
pub fn rust_edition(path: &Path, workspace: &Path) -> String {
    let manifests: Vec<toml::Table> = path
        .ancestors()
        .skip(1)
        .take_while(|d| d.starts_with(workspace))
        .filter_map(|d| read_manifest(&d.join("Cargo.toml"), workspace))
        .collect();
    let inherited = || {
        manifests.iter().find_map(|m| {
            let w = m.get("workspace")?.get("package")?.get("edition")?;
            w.as_str().map(String::from)
        })
    };
    let Some(package) = manifests.iter().find_map(|m| m.get("package")) else {
        return inherited().unwrap_or_else(|| "2021".into());
    };
    match package.get("edition") {
        Some(toml::Value::String(e)) => e.clone(),
        Some(toml::Value::Table(t)) if t.get("workspace") == Some(&toml::Value::Boolean(true)) => {
            inherited().unwrap_or_else(|| "2021".into())
        }
        _ => "2015".into(),
    }
}

/// A manifest read as a project file (no link out of the workspace,
/// bounded).
fn read_manifest(path: &Path, workspace: &Path) -> Option<toml::Table> {
    let over = crate::config::project_file::Over::Refuse;
    let contents =
        crate::config::project_file::read(Some(workspace), path, 1 << 20, over).ok()??;
    String::from_utf8(contents.bytes).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> FormatConfig {
        crate::config::parse(text).unwrap().format
    }

    fn for_file<'a>(languages: &'a [Language], file: &str) -> Option<&'a Language> {
        languages.iter().find(|l| serves(l, Path::new(file)))
    }

    #[test]
    fn enabled_formats_every_builtin_language_and_tables_change_them() {
        let (all, bad) = languages(&config(
            "[format]\nenabled = true\n[format.python]\nformatter = \"black\"\n\
             [format.markdown]\ndisabled = true\n",
        ));
        assert!(bad.is_empty());
        let rust = for_file(&all, "src/main.rs").unwrap();
        assert_eq!(rust.how, How::Known(vec![Rustfmt]));
        assert!(!rust.asked);
        let py = for_file(&all, "a/b.PY").unwrap();
        assert_eq!(py.how, How::Known(vec![Black]));
        assert!(py.asked);
        assert_eq!(for_file(&all, "README.md"), None);
        assert_eq!(for_file(&all, "Makefile"), None);
    }

    #[test]
    fn without_enabled_only_the_languages_named_format() {
        let (all, bad) = languages(&config(
            "[format.rust]\ncommand = [\"rustfmt\", \"--edition\", \"2024\"]\n\
             [format.proto]\nformatter = \"clang-format\"\nfiletypes = [\".proto\"]\n\
             [format.broken]\nformatter = \"gofmt\"\n[format.empty]\nfiletypes = [\"x\"]\n",
        ));
        assert_eq!(all.len(), 2, "{all:?}");
        // The person's own language comes first.
        assert_eq!(all[0].name, "proto");
        assert!(serves(&all[0], Path::new("api.proto")));
        assert_eq!(
            for_file(&all, "lib.rs").unwrap().how,
            How::Command(vec!["rustfmt".into(), "--edition".into(), "2024".into()])
        );
        assert_eq!(for_file(&all, "x.py"), None);
        let names: Vec<&str> = bad.iter().map(|b| b.0.as_str()).collect();
        assert_eq!(names, ["broken", "empty"]);
        assert!(bad[0].1.contains("filetypes"), "{bad:?}");
        assert!(bad[1].1.contains("formatter"), "{bad:?}");
        let (none, _) = languages(&config(
            "[format]\nenabled = false\n[format.rust]\nformatter = \"rustfmt\"\n",
        ));
        assert!(none.is_empty());
    }

    #[test]
    fn command_lines_are_filled_in_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join("crates/a/src")).unwrap();
        std::fs::write(
            ws.join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/a\"]\n[workspace.package]\nedition = \"2024\"\n",
        )
        .unwrap();
        std::fs::write(
            ws.join("crates/a/Cargo.toml"),
            "[package]\nname = \"a\"\nedition.workspace = true\n",
        )
        .unwrap();
        let file = ws.join("crates/a/src/lib.rs");
        let words: Vec<String> = known_command(Rustfmt)
            .unwrap()
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            fill(&words, &file, ws).join(" "),
            "rustfmt --emit stdout --edition 2024"
        );
        std::fs::write(ws.join("crates/a/Cargo.toml"), "[package]\nname = \"a\"\n").unwrap();
        assert_eq!(rust_edition(&file, ws), "2015", "Cargo's default");
        std::fs::remove_file(ws.join("crates/a/Cargo.toml")).unwrap();
        std::fs::remove_file(ws.join("Cargo.toml")).unwrap();
        assert_eq!(rust_edition(&file, ws), "2021", "no package at all");
        let words = vec![
            "prettier".to_string(),
            "--stdin-filepath={file}".into(),
            "{root}".into(),
        ];
        assert_eq!(
            fill(&words, &file, ws),
            [
                "prettier".to_string(),
                format!("--stdin-filepath={}", file.display()),
                ws.display().to_string()
            ]
        );
        let named = |w: &[&str]| command_name(&w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(named(&["/usr/bin/rustfmt", "--emit", "stdout"]), "rustfmt");
        assert_eq!(
            named(&["npx", "--offline", "prettier", "--stdin-filepath"]),
            "npx prettier"
        );
    }
}
