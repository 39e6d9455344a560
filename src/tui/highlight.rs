//! Syntax highlighting with syntect.
//!
//! Loading syntect's syntax and theme sets costs milliseconds and several
//! megabytes, and a session may never show code, so they load on first use,
//! on a background thread started by [`warm_up`] (the first code block or
//! diff asks for them). Until they are ready, code comes back plain; callers
//! that cache rendered lines watch [`is_loading`] / [`is_ready`] and re-render
//! once.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::rc::Rc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, HighlightState, Theme as SynTheme, ThemeSet};
use syntect::parsing::{ParseState, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use super::theme::{ColorDepth, Theme, adapt_color};

struct Assets {
    syntaxes: SyntaxSet,
    themes: ThemeSet,
}

static ASSETS: OnceLock<Assets> = OnceLock::new();
static WARMING: AtomicBool = AtomicBool::new(false);

/// syntect's own grammars lack much of what developers open every day
/// (TOML, TypeScript and TSX, Dockerfile, Nix, Zig, Kotlin, Swift…);
/// `two-face` ships bat's extended set, built for this syntect.
fn load() -> Assets {
    Assets {
        syntaxes: two_face::syntax::extra_newlines(),
        themes: ThemeSet::load_defaults(),
    }
}

/// Starts loading syntect's data on a background thread (once). Called by
/// the first caller that wants highlighting; calling again is free.
pub fn warm_up() {
    if ASSETS.get().is_some() || WARMING.swap(true, Ordering::AcqRel) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("syntect-load".into())
        .spawn(|| {
            ASSETS.get_or_init(load);
        });
    if spawned.is_err() {
        // No thread available: let a later call try again rather than never
        // highlighting.
        WARMING.store(false, Ordering::Release);
    }
}

/// Whether highlighting is available yet.
pub fn is_ready() -> bool {
    ASSETS.get().is_some()
}

/// Whether the data is being loaded now: something asked for highlighting
/// and got plain text, and will look different once [`is_ready`].
pub fn is_loading() -> bool {
    WARMING.load(Ordering::Acquire) && !is_ready()
}

/// Loads syntect's data on this thread if it is not loaded yet (for tests,
/// benches and non-interactive output, where blocking is fine).
pub fn ensure_loaded() {
    ASSETS.get_or_init(load);
}

/// Maps a fence token or a file extension to one the syntax set knows.
fn alias(token: &str) -> &str {
    match token {
        "typescript" | "mts" | "cts" => "ts",
        "typescriptreact" => "tsx",
        "mjs" | "cjs" | "javascriptreact" => "js",
        "shell" | "zsh" | "console" | "shellsession" | "fish" | "ksh" => "sh",
        "golang" => "go",
        "c++" | "hpp" | "cc" | "hh" | "cxx" => "cpp",
        "py3" | "python3" | "pyi" => "py",
        "yml" => "yaml",
        "jsonc" | "json5" => "json",
        "rs" => "rs",
        "kotlin" | "kts" => "kt",
        "docker" | "containerfile" => "dockerfile",
        other => other,
    }
}

/// How many names [`find_syntax`] remembers before it starts over (diffs
/// name a path each).
const FOUND_MAX: usize = 256;

thread_local! {
    /// The syntax (its index in the loaded set) found for each name.
    static FOUND: RefCell<HashMap<String, Option<usize>>> = RefCell::new(HashMap::new());
}

/// The syntax for a fence's language or a file's path: looked up once per
/// name (syntect's lookups walk every syntax, and a code block asks on
/// every frame it is drawn), then remembered.
fn find_syntax<'a>(set: &'a SyntaxSet, lang_or_path: &str) -> Option<&'a SyntaxReference> {
    // Only the loaded set lives as long as the process.
    if !ASSETS.get().is_some_and(|a| std::ptr::eq(&a.syntaxes, set)) {
        return look_up_syntax(set, lang_or_path);
    }
    let known = FOUND.with(|f| f.borrow().get(lang_or_path).copied());
    let index = match known {
        Some(index) => index,
        None => {
            let found = look_up_syntax(set, lang_or_path).and_then(|s| {
                (set.syntaxes().iter()).position(|candidate| std::ptr::eq(candidate, s))
            });
            FOUND.with(|f| {
                let mut names = f.borrow_mut();
                if names.len() >= FOUND_MAX {
                    names.clear();
                }
                names.insert(lang_or_path.to_string(), found);
            });
            found
        }
    };
    index.map(|i| &set.syntaxes()[i])
}

fn look_up_syntax<'a>(set: &'a SyntaxSet, lang_or_path: &str) -> Option<&'a SyntaxReference> {
    let raw = lang_or_path.trim();
    if raw.is_empty() {
        return None;
    }
    let lower = raw.to_ascii_lowercase();
    if let Some(s) = set.find_syntax_by_token(alias(&lower)) {
        return Some(s);
    }
    let path = Path::new(raw);
    if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
        let ext = ext.to_ascii_lowercase();
        if let Some(s) = set.find_syntax_by_extension(alias(&ext)) {
            return Some(s);
        }
    }
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or(raw);
    match file {
        "Makefile" | "makefile" | "GNUmakefile" => set.find_syntax_by_token("make"),
        "Containerfile" => set.find_syntax_by_token("dockerfile"),
        f if f.starts_with("Dockerfile") => set.find_syntax_by_token("dockerfile"),
        ".bashrc" | ".zshrc" | ".profile" | ".bash_profile" => set.find_syntax_by_token("sh"),
        _ => None,
    }
}

fn syn_theme<'a>(assets: &'a Assets, theme: &Theme) -> Option<&'a SynTheme> {
    assets
        .themes
        .themes
        .get(&theme.syntax_theme)
        .or_else(|| assets.themes.themes.get("base16-ocean.dark"))
}

fn convert(style: syntect::highlighting::Style, depth: ColorDepth) -> Style {
    let f = style.foreground;
    let mut out = Style {
        fg: adapt_color(Color::Rgb(f.r, f.g, f.b), depth),
        ..Style::default()
    };
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

/// Highlighted code as styled segments per line (line endings dropped), or
/// `None` when the language is unknown or syntect is not loaded yet.
/// Styles carry only foreground and font style, so callers can lay their own
/// background (code block, diff line) over them.
pub fn highlight_segments(
    code: &str,
    lang_or_path: &str,
    theme: &Theme,
) -> Option<Vec<Vec<(Style, String)>>> {
    let Some(assets) = ASSETS.get() else {
        warm_up();
        return None;
    };
    let syntax = find_syntax(&assets.syntaxes, lang_or_path)?;
    let syn = syn_theme(assets, theme)?;
    let mut hl = HighlightLines::new(syntax, syn);
    let mut out = Vec::new();
    for line in LinesWithEndings::from(code) {
        out.push(highlight_one(&mut hl, line, assets, theme)?);
    }
    Some(out)
}

/// One line (with its ending, if it has one) as styled segments.
fn highlight_one(
    hl: &mut HighlightLines<'_>,
    line: &str,
    assets: &Assets,
    theme: &Theme,
) -> Option<Vec<(Style, String)>> {
    let ranges = hl.highlight_line(line, &assets.syntaxes).ok()?;
    let mut segs: Vec<(Style, String)> = Vec::with_capacity(ranges.len());
    for (st, text) in ranges {
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            continue;
        }
        let style = convert(st, theme.color_depth);
        match segs.last_mut() {
            Some((s, t)) if *s == style => t.push_str(text),
            _ => segs.push((style, text.to_string())),
        }
    }
    Some(segs)
}

type Segments = Vec<Vec<(Style, String)>>;

/// The highlighted complete lines of a block, and syntect's state after
/// them, so a line that follows can be highlighted alone.
#[derive(Clone)]
struct Done {
    segments: Segments,
    parse: ParseState,
    highlight: HighlightState,
}

/// About what syntect's two states weigh on the heap (scope stacks,
/// contexts, cached styles), as measured for a short Rust block.
const STATE_WEIGHT: usize = 3 << 10;

impl Done {
    /// About what the entry weighs on the heap: its segments and states.
    /// The source alone would undercount it some fifty times.
    fn weight(&self) -> usize {
        let segment = std::mem::size_of::<(Style, String)>();
        let line = std::mem::size_of::<Vec<(Style, String)>>();
        STATE_WEIGHT
            + self
                .segments
                .iter()
                .map(|l| {
                    line + l
                        .iter()
                        .map(|(_, t)| segment + t.len().max(16))
                        .sum::<usize>()
                })
                .sum::<usize>()
    }
}

/// Recently highlighted code, by its complete lines. A streaming answer is
/// re-rendered on every frame and highlighting is the costly part: the
/// complete lines of a block come from here, and only the line still being
/// written (or a finished block's last line) is highlighted again, from the
/// state kept after the lines before it. When a line is completed, its
/// block's entry is extended by that line, not highlighted from the top.
/// Bounded: cleared when it grows past `CACHE_BYTES` by the entries'
/// weight (a finished block keeps its entry, and a long session shows many
/// blocks; counted by source, 8 MB of it held over 400 MB). Kept per
/// thread (syntect's parse state may hold regex match registers, which
/// cannot cross threads); the interface draws on one.
/// The entries' weight, and results by hash of (complete lines, language,
/// theme).
type CodeCache = (usize, HashMap<u64, Rc<Done>>);
thread_local! {
    static CACHE: RefCell<CodeCache> = RefCell::new((0, HashMap::new()));
}
const CACHE_BYTES: usize = 4 << 20;

fn cache_key(code: &str, lang: &str, theme: &Theme) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (code, lang, &theme.syntax_theme, theme.color_depth as u8).hash(&mut h);
    h.finish()
}

/// The complete lines of `code` highlighted, from the cache, from the cached
/// entry for all of them but the last, or from the top.
fn done_lines(
    done: &str,
    syntax: &SyntaxReference,
    syn: &SynTheme,
    assets: &Assets,
    lang: &str,
    theme: &Theme,
) -> Option<Rc<Done>> {
    let key = cache_key(done, lang, theme);
    let cached = |k: u64| CACHE.with_borrow(|(_, map)| map.get(&k).cloned());
    if let Some(hit) = cached(key) {
        return Some(hit);
    }
    // `done` ends with a line ending; the lines before its last one. Their
    // entry is taken out: a streaming block needs only its longest prefix.
    let before = done[..done.len() - 1].rfind('\n').map(|i| &done[..=i]);
    let parent = before.and_then(|b| {
        let k = cache_key(b, lang, theme);
        CACHE.with_borrow_mut(|(bytes, map)| {
            let p = map.remove(&k)?;
            *bytes = bytes.saturating_sub(p.weight());
            Some(Rc::unwrap_or_clone(p))
        })
    });
    let from = before.filter(|_| parent.is_some()).map_or(0, str::len);
    let mut hl = resume(parent.as_ref(), syntax, syn);
    let mut segments = parent.map(|p| p.segments).unwrap_or_default();
    for line in LinesWithEndings::from(&done[from..]) {
        segments.push(highlight_one(&mut hl, line, assets, theme)?);
    }
    let (highlight, parse) = hl.state();
    let entry = Rc::new(Done {
        segments,
        parse,
        highlight,
    });
    let weight = entry.weight();
    CACHE.with_borrow_mut(|(bytes, map)| {
        if *bytes + weight > CACHE_BYTES {
            map.clear();
            *bytes = 0;
        }
        *bytes += weight;
        map.insert(key, entry.clone());
    });
    Some(entry)
}

/// A highlighter that goes on after `done`'s lines, or starts afresh.
fn resume<'a>(
    done: Option<&Done>,
    syntax: &SyntaxReference,
    syn: &'a SynTheme,
) -> HighlightLines<'a> {
    match done {
        Some(d) => HighlightLines::from_state(syn, d.highlight.clone(), d.parse.clone()),
        None => HighlightLines::new(syntax, syn),
    }
}

/// An unfinished line longer than this is shown plain until it is finished:
/// it is highlighted again on every frame, from its start.
const LIVE_LINE_MAX: usize = 1024;

/// Like [`highlight_segments`], but remembers the complete lines, for
/// callers that highlight the same text again and again, or the same text
/// with more at its end (markdown re-rendered while it streams or on
/// resize).
pub fn highlight_segments_cached(
    code: &str,
    lang_or_path: &str,
    theme: &Theme,
) -> Option<Highlighted> {
    let Some(assets) = ASSETS.get() else {
        warm_up();
        return None;
    };
    let syntax = find_syntax(&assets.syntaxes, lang_or_path)?;
    let syn = syn_theme(assets, theme)?;
    let split = code.rfind('\n').map_or(0, |i| i + 1);
    let (done, last) = code.split_at(split);
    let done = if done.is_empty() {
        None
    } else {
        Some(done_lines(done, syntax, syn, assets, lang_or_path, theme)?)
    };
    let last = if last.is_empty() {
        None
    } else if last.len() > LIVE_LINE_MAX {
        Some(vec![(theme.base(), last.to_string())])
    } else {
        let mut hl = resume(done.as_deref(), syntax, syn);
        Some(highlight_one(&mut hl, last, assets, theme)?)
    };
    Some(Highlighted { done, last })
}

/// A block's highlighted lines: the complete ones (shared with the cache)
/// and the last one, when it has no line ending yet.
pub struct Highlighted {
    done: Option<Rc<Done>>,
    last: Option<Vec<(Style, String)>>,
}

impl Highlighted {
    /// Each line's segments, in order.
    pub fn lines(&self) -> impl Iterator<Item = &[(Style, String)]> {
        self.done
            .iter()
            .flat_map(|d| d.segments.iter())
            .chain(self.last.iter())
            .map(Vec::as_slice)
    }
}

/// Forgets cached highlighting (benchmarks measure the cold path with it).
pub fn clear_cache() {
    CACHE.with_borrow_mut(|(bytes, map)| {
        *bytes = 0;
        map.clear();
    });
}

/// Highlights `code` for a fence token (`rust`, `py`, `ts`...) or a file path
/// (by extension). Unknown languages and a not-yet-loaded syntect give plain
/// lines in the theme's text colour.
pub fn highlight(code: &str, lang_or_path: &str, theme: &Theme) -> Vec<Line<'static>> {
    match highlight_segments(code, lang_or_path, theme) {
        Some(lines) => lines
            .into_iter()
            .map(|segs| {
                Line::from(
                    segs.into_iter()
                        .map(|(s, t)| Span::styled(t, s))
                        .collect::<Vec<_>>(),
                )
            })
            .collect(),
        None => code
            .lines()
            .map(|l| Line::from(Span::styled(l.to_string(), theme.base())))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each finished block keeps its entry, with syntect's states: the
    /// cache is bounded by what its entries weigh, not by their source (a
    /// few hundred KB of source held 20 MB).
    #[test]
    fn the_cache_is_bounded_by_weight_not_by_source() {
        ensure_loaded();
        let theme = Theme::default();
        clear_cache();
        let mut source = 0;
        for n in 0..3000 {
            let code = format!(
                "fn section_{n}(input: &str) -> usize {{\n    input.lines().filter(|l| !l.is_empty()).count()\n}}\n"
            );
            source += code.len();
            assert!(highlight_segments_cached(&code, "rust", &theme).is_some());
            let (weight, entries) = CACHE.with_borrow(|(w, m)| (*w, m.len()));
            assert!(weight <= CACHE_BYTES, "{weight} held");
            assert!(entries * STATE_WEIGHT <= CACHE_BYTES, "{entries} entries");
        }
        assert!(source < CACHE_BYTES / 10, "the source alone never fills it");
        clear_cache();
    }

    #[test]
    fn a_remembered_syntax_is_the_one_a_fresh_look_up_finds() {
        ensure_loaded();
        let set = &ASSETS.get().unwrap().syntaxes;
        let names = [
            "rust",
            "py",
            "src/app.ts",
            "Dockerfile",
            "nosuchlanguage",
            "toml",
        ];
        // Twice: the second round is answered from memory.
        for name in names.iter().chain(&names) {
            let remembered = find_syntax(set, name).map(|s| s.name.as_str());
            let fresh = look_up_syntax(set, name).map(|s| s.name.as_str());
            assert_eq!(remembered, fresh, "{name}");
        }
        // Many paths (a long diff) start the memory over, never past its size.
        for i in 0..FOUND_MAX * 2 {
            let path = format!("src/module_{i}.rs");
            assert_eq!(
                find_syntax(set, &path).map(|s| s.name.as_str()),
                Some("Rust")
            );
        }
        assert!(FOUND.with(|f| f.borrow().len()) <= FOUND_MAX);
    }

    #[test]
    fn the_languages_of_every_day_have_their_own_grammar() {
        ensure_loaded();
        let set = &ASSETS.get().unwrap().syntaxes;
        for (token, name) in [
            ("toml", "TOML"),
            ("Cargo.toml", "TOML"),
            ("ts", "TypeScript"),
            ("src/app.ts", "TypeScript"),
            ("tsx", "TypeScriptReact"),
            ("src/App.tsx", "TypeScriptReact"),
            ("Dockerfile", "Dockerfile"),
            ("docker/Dockerfile.dev", "Dockerfile"),
            ("nix", "Nix"),
            ("flake.nix", "Nix"),
            ("zig", "Zig"),
            ("build.zig", "Zig"),
            ("kotlin", "Kotlin"),
            ("Main.kt", "Kotlin"),
            ("swift", "Swift"),
            ("App.swift", "Swift"),
        ] {
            let found = find_syntax(set, token).map(|s| s.name.as_str());
            assert_eq!(found, Some(name), "{token}");
        }
        // And they colour code, rather than leaving it plain.
        let theme = Theme::dark();
        let lines = highlight("[package]\nname = \"x\"\n", "toml", &theme);
        let colours: std::collections::HashSet<_> = lines
            .iter()
            .flat_map(|l| l.spans.iter().map(|s| s.style.fg))
            .collect();
        assert!(colours.len() > 1, "{colours:?}");
    }

    #[test]
    fn highlights_by_token_and_path() {
        ensure_loaded();
        let theme = Theme::dark();
        let code = "fn main() {\n    let x = 1;\n}\n";
        for lang in ["rust", "rs", "src/main.rs", "RUST"] {
            let lines = highlight(code, lang, &theme);
            assert_eq!(lines.len(), 3, "{lang}");
            let colours: std::collections::HashSet<_> = lines
                .iter()
                .flat_map(|l| l.spans.iter().map(|s| s.style.fg))
                .collect();
            assert!(colours.len() > 1, "{lang}: {colours:?}");
            let text: String = lines[1].spans.iter().map(|s| s.content.as_ref()).collect();
            assert_eq!(text, "    let x = 1;");
        }
        assert!(highlight_segments("x", "ts", &theme).is_some());
        assert!(highlight_segments("x", "Makefile", &theme).is_some());
    }

    #[test]
    fn cached_highlighting_is_reused_per_theme() {
        ensure_loaded();
        let dark = Theme::dark();
        let code = "let cached_test_value = 42;\nlet more = 1;";
        let a = highlight_segments_cached(code, "rust", &dark).unwrap();
        let b = highlight_segments_cached(code, "rust", &dark).unwrap();
        assert!(Rc::ptr_eq(
            a.done.as_ref().unwrap(),
            b.done.as_ref().unwrap()
        ));
        let light = Theme::load("light", None).unwrap();
        let c = highlight_segments_cached(code, "rust", &light).unwrap();
        assert!(!Rc::ptr_eq(
            a.done.as_ref().unwrap(),
            c.done.as_ref().unwrap()
        ));
        let first = |h: &Highlighted| h.lines().next().unwrap()[0].0;
        assert_ne!(first(&a), first(&c), "colours follow the theme");
    }

    /// A block streamed in a character at a time, highlighted from the
    /// cache at every step, looks at every step as if highlighted whole, and
    /// its complete lines are highlighted once, not again per line added.
    #[test]
    fn a_streaming_block_is_highlighted_as_a_whole_one_line_at_a_time() {
        ensure_loaded();
        let theme = Theme::dark();
        let code = "/* a comment\n   that spans lines */\nfn streamed_block_test(x: u8) -> u8 {\n    let s = \"a\n b\";\n    x + 1\n}\n";
        for end in 0..=code.len() {
            let part = &code[..end];
            let cached: Vec<Vec<(Style, String)>> = highlight_segments_cached(part, "rust", &theme)
                .unwrap()
                .lines()
                .map(<[_]>::to_vec)
                .collect();
            assert_eq!(
                cached,
                highlight_segments(part, "rust", &theme).unwrap(),
                "{part:?}"
            );
        }
        // The longest prefix is kept; the shorter ones it grew from are not.
        let shorter = &code[..code[..code.len() - 1].rfind('\n').unwrap() + 1];
        CACHE.with_borrow(|(_, map)| {
            assert!(map.contains_key(&cache_key(code, "rust", &theme)));
            assert!(!map.contains_key(&cache_key(shorter, "rust", &theme)));
        });
    }

    /// A model can stream one enormous line: while it is unfinished it is
    /// shown plain (it would be highlighted from its start on every frame);
    /// once finished it is highlighted once, like any other.
    #[test]
    fn a_long_unfinished_line_is_plain_until_it_is_finished() {
        ensure_loaded();
        let theme = Theme::dark();
        let long = format!("let s = \"{}\";", "x".repeat(LIVE_LINE_MAX));
        let code = format!("fn f() {{}}\n{long}");
        let live = highlight_segments_cached(&code, "rust", &theme).unwrap();
        let rows: Vec<&[(Style, String)]> = live.lines().collect();
        assert_eq!(rows[1], &[(theme.base(), long.clone())]);
        assert!(rows[0].len() > 1, "the finished line is highlighted");
        let done = format!("{code}\n");
        let finished = highlight_segments_cached(&done, "rust", &theme).unwrap();
        assert!(finished.lines().nth(1).unwrap().len() > 1);
    }

    #[test]
    fn unknown_language_is_plain() {
        ensure_loaded();
        let theme = Theme::dark();
        assert!(highlight_segments("a b", "no-such-lang", &theme).is_none());
        let lines = highlight("a\nb", "no-such-lang", &theme);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].spans[0].content, "b");
    }

    #[test]
    fn nocolor_highlighting_has_no_colour() {
        ensure_loaded();
        let theme = Theme::dark().adapt(ColorDepth::NoColor);
        let lines = highlight("fn main() {}\n", "rust", &theme);
        assert!(
            lines
                .iter()
                .flat_map(|l| &l.spans)
                .all(|s| s.style.fg.is_none())
        );
    }
}
