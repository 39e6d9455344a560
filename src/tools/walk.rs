//! Helpers the read-only tools share: the gitignore-aware walker, running
//! blocking filesystem work off the async threads, and text trimming.

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{DirEntry, WalkBuilder};

use super::ignore_files::Ignores;

/// A walker that skips hidden entries and honours `.gitignore`, `.ignore`
/// and git's exclude files, even when the directory is not a git checkout
/// (a fresh project without `git init` still has meaningful ignores).
/// Entries come sorted by name so output is stable from run to run. The
/// ignore files are read by [`Ignores`], never through a link out of the
/// workspace nor from a FIFO or device; only the person's global excludes
/// file (`core.excludesFile`, outside every workspace) is read by the crate.
pub fn walker(root: &Path) -> WalkBuilder {
    walker_with(root, |_| true)
}

/// [`walker`] that also leaves out (and does not enter) what `keep` refuses.
pub fn walker_with<F>(root: &Path, keep: F) -> WalkBuilder
where
    F: Fn(&DirEntry) -> bool + Send + Sync + 'static,
{
    let mut b = WalkBuilder::new(root);
    b.hidden(true)
        .git_ignore(false)
        .git_global(true)
        .git_exclude(false)
        .ignore(false)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    let ignores = Ignores::new(root);
    b.filter_entry(move |e| {
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        keep(e) && (e.depth() == 0 || !ignores.ignored(e.path(), is_dir))
    });
    b
}

/// Walks `builder`'s tree on several threads (as ripgrep does), calling
/// `visit` for each file with that thread's own state (made by `init`,
/// once per thread) and keeping what it returns, in no particular order:
/// the caller sorts. When `stop` says so the walk ends early (the tool was
/// cancelled); what was found so far is returned with `false`.
pub fn parallel_files<S, T, I, F>(
    mut builder: WalkBuilder,
    stop: &(dyn Fn() -> bool + Sync),
    init: I,
    visit: F,
) -> (Vec<T>, bool)
where
    S: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, &DirEntry) -> Option<T> + Sync,
    T: Send,
{
    use std::sync::atomic::{AtomicBool, Ordering};
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let found = std::sync::Mutex::new(Vec::new());
    let stopped = AtomicBool::new(false);
    let (found_ref, stopped_ref, visit) = (&found, &stopped, &visit);
    builder.threads(threads).build_parallel().run(|| {
        let mut state = init();
        let (found, stopped) = (found_ref, stopped_ref);
        let mut seen = 0u32;
        Box::new(move |entry| {
            use ignore::WalkState;
            // Asking whether to stop takes a lock: every 64th entry is
            // soon enough.
            seen = seen.wrapping_add(1);
            if seen % 64 == 1 && stop() {
                stopped.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.file_type().is_some_and(|t| t.is_file())
                && let Some(item) = visit(&mut state, &entry)
            {
                found.lock().unwrap_or_else(|e| e.into_inner()).push(item);
            }
            WalkState::Continue
        })
    });
    let found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    (found, !stopped.into_inner())
}

/// Runs filesystem work on tokio's blocking pool so a slow disk or a huge
/// tree never stalls the agent's other tasks.
pub async fn blocking<T, F>(f: F) -> Result<T, String>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("internal error: the tool's worker stopped ({e})"))
}

/// Builds a glob set from patterns the model gave. `*` stays within one path
/// component, as in a shell, so `*.rs` and `**/*.rs` mean different things.
pub fn glob_set<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let glob = GlobBuilder::new(p)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("invalid glob `{p}`: {e}"))?;
        b.add(glob);
    }
    b.build().map_err(|e| format!("invalid glob set: {e}"))
}

/// Cuts `line` to at most `max` characters, on a character boundary, and
/// says how much was cut so the model knows the line is incomplete.
pub fn cut_line(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        None => line.to_string(),
        Some((byte, _)) => {
            let rest = line[byte..].chars().count();
            format!("{}… [line cut, {rest} more characters]", &line[..byte])
        }
    }
}

/// A byte count in the units a person reads.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `s` in double quotes for a one-line summary, shortened when long.
pub fn quote_short(s: &str, max: usize) -> String {
    let one_line = s.replace('\n', "\\n");
    match one_line.char_indices().nth(max) {
        None => format!("\"{one_line}\""),
        Some((byte, _)) => format!("\"{}…\"", &one_line[..byte]),
    }
}

/// Files under `root` for the `@` picker: gitignore-aware, relative paths,
/// at most `cap`.
pub fn workspace_files(root: &std::path::Path, cap: usize) -> Vec<String> {
    let mut out = Vec::new();
    for entry in walker(root).build().flatten() {
        if out.len() >= cap {
            break;
        }
        if entry.file_type().is_some_and(|t| t.is_file())
            && let Ok(rel) = entry.path().strip_prefix(root)
        {
            out.push(rel.to_string_lossy().into_owned());
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_line_keeps_short_lines_and_marks_long_ones() {
        assert_eq!(cut_line("abc", 5), "abc");
        assert_eq!(cut_line("abcdef", 3), "abc… [line cut, 3 more characters]");
        // Multi-byte characters are counted as characters, never split.
        assert_eq!(cut_line("ééééé", 2), "éé… [line cut, 3 more characters]");
    }

    #[test]
    fn human_size_picks_a_unit() {
        assert_eq!(human_size(12), "12 bytes");
        assert_eq!(human_size(2048), "2.0 KB");
        assert_eq!(human_size(6 * 1024 * 1024), "6.0 MB");
    }

    #[test]
    fn glob_star_stays_in_one_component() {
        let set = glob_set(["*.rs"]).unwrap();
        assert!(set.is_match("main.rs"));
        assert!(!set.is_match("src/main.rs"));
        let set = glob_set(["**/*.{ts,tsx}"]).unwrap();
        assert!(set.is_match("a/b/c.tsx"));
        assert!(glob_set(["a{b"]).is_err());
    }

    #[test]
    fn walker_honours_gitignore_without_git_and_skips_hidden() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "skip.txt\n").unwrap();
        std::fs::write(dir.path().join("skip.txt"), "x").unwrap();
        std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
        std::fs::write(dir.path().join(".secret"), "x").unwrap();
        let names: Vec<String> = walker(dir.path())
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.depth() > 0)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["keep.txt".to_string()]);
    }

    #[test]
    fn workspace_files_respect_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(dir.path().join("target")).unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("target/x.o"), "").unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "").unwrap();
        let files = workspace_files(dir.path(), 100);
        assert_eq!(files, vec!["src/a.rs".to_string()]);
    }
}
