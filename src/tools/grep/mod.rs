//! `grep`: regex search over the workspace with ripgrep's own crates, so the
//! walk honours `.gitignore` and binary files are skipped as ripgrep does.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use globset::GlobSet;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde_json::{Value, json};

use super::beneath::Reader;
use super::walk::{blocking, cut_line, glob_set, parallel_files, quote_short, walker};
use super::{Tool, ToolContext, ToolOutput, opt_str_arg, opt_u64_arg, str_arg};

const MAX_MATCHES: usize = 100;
const MAX_LINE_CHARS: usize = 500;
const MAX_CONTEXT: u64 = 10;
/// Rows held in all while files are searched in parallel.
const ROW_BUDGET: usize = 20 * MAX_MATCHES;

pub struct GrepTool;

#[async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        include_str!("../../../assets/tools/grep.md")
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "Regular expression (Rust regex syntax) to search for, matched line by line."
                },
                "path": {
                    "type": "string",
                    "description": "File or directory to search. Default: the current directory."
                },
                "include": {
                    "type": "string",
                    "description": "Glob on file names limiting which files are searched, e.g. \"*.rs\" or \"*.{ts,tsx}\"."
                },
                "context": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": MAX_CONTEXT,
                    "description": "Lines of context to show before and after each match. Default 0."
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    fn summary(&self, input: &Value) -> String {
        let pattern = input.get("pattern").and_then(Value::as_str).unwrap_or("");
        let mut s = format!("grep {}", quote_short(pattern, 60));
        if let Some(path) = input.get("path").and_then(Value::as_str) {
            s.push(' ');
            s.push_str(path);
        }
        if let Some(include) = input.get("include").and_then(Value::as_str) {
            s.push_str(&format!(" ({include})"));
        }
        s
    }

    fn paths(&self, input: &Value, ctx: &ToolContext) -> Vec<PathBuf> {
        let path = opt_str_arg(input, "path").ok().flatten().unwrap_or(".");
        vec![ctx.resolve(path)]
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let query = match Query::parse(&input, ctx) {
            Ok(q) => q,
            Err(e) => return ToolOutput::error(e),
        };
        let ctx = ctx.clone();
        blocking(move || search(&ctx, &query))
            .await
            .unwrap_or_else(ToolOutput::error)
    }
}

struct Query {
    pattern: String,
    matcher: grep_regex::RegexMatcher,
    root: PathBuf,
    include: Option<GlobSet>,
    context: usize,
}

impl Query {
    /// A searcher for this query: one per thread, reused file to file.
    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .before_context(self.context)
            .after_context(self.context)
            .build()
    }

    fn parse(input: &Value, ctx: &ToolContext) -> Result<Query, String> {
        let pattern = str_arg(input, "pattern")?.to_string();
        if pattern.is_empty() {
            return Err("`pattern` is empty; give a regular expression to search for".into());
        }
        let matcher = RegexMatcherBuilder::new()
            .line_terminator(Some(b'\n'))
            .build(&pattern)
            .map_err(|e| {
                format!(
                    "invalid regex {}: {e}\nEscape special characters such as ( ) [ ] {{ }} . * + ? | \\ \
                     with a backslash to match them literally.",
                    quote_short(&pattern, 200)
                )
            })?;
        let root = ctx.resolve(opt_str_arg(input, "path")?.unwrap_or("."));
        let include = match opt_str_arg(input, "include")? {
            Some(g) if !g.trim().is_empty() => Some(glob_set([g.trim()])?),
            _ => None,
        };
        let context = opt_u64_arg(input, "context")?.unwrap_or(0).min(MAX_CONTEXT) as usize;
        Ok(Query {
            pattern,
            matcher,
            root,
            include,
            context,
        })
    }
}

fn search(ctx: &ToolContext, q: &Query) -> ToolOutput {
    let shown_root = ctx.display_path(&q.root);
    if !q.root.exists() {
        return ToolOutput::error(format!(
            "path not found: {shown_root}; give an existing file or directory (or leave out `path`)"
        ));
    }
    if let Err(e) = super::beneath::real_path(&q.root) {
        return ToolOutput::error(format!("cannot search {shown_root}: {e}"));
    }
    let reader = match super::beneath::Reader::new(&q.root) {
        Ok(r) => r,
        Err(e) => return ToolOutput::error(format!("cannot search {shown_root}: {e}")),
    };
    // Files are searched on several threads; each keeps its rows until
    // ROW_BUDGET rows are held in all (memory stays bounded however many
    // files match), then only counts. Sorted by path afterwards, the
    // output is what a walk in name order gives: a file whose rows were
    // not kept but are shown is searched again.
    let held = AtomicUsize::new(0);
    let (mut hits, finished) = parallel_files(
        walker(&q.root),
        &|| ctx.cancel.is_cancelled(),
        || q.searcher(),
        |searcher, entry| {
            if !included(q.include.as_ref(), &q.root, entry.path()) {
                return None;
            }
            let budget = if held.load(Ordering::Relaxed) >= ROW_BUDGET {
                0
            } else {
                MAX_MATCHES
            };
            let sink = search_file(searcher, q, &reader, entry.path(), budget)?;
            held.fetch_add(sink.kept, Ordering::Relaxed);
            Some((entry.path().to_path_buf(), sink))
        },
    );
    if !finished {
        return ToolOutput::error("cancelled");
    }
    hits.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::new();
    let (mut shown, mut total, mut files) = (0usize, 0usize, 0usize);
    for (path, mut sink) in hits {
        files += 1;
        total += sink.matches;
        let want = sink.matches.min(MAX_MATCHES - shown);
        if want == 0 {
            continue;
        }
        if sink.kept != want {
            match search_file(&mut q.searcher(), q, &reader, &path, want) {
                Some(again) => sink = again,
                None => continue,
            }
        }
        shown += sink.kept;
        if sink.kept > 0 {
            write_rows(&mut out, &ctx.display_path(&path), &sink.rows);
        }
    }
    if total == 0 {
        let mut msg = format!(
            "No matches for {} in {shown_root}",
            quote_short(&q.pattern, 200)
        );
        if q.include.is_some() {
            msg.push_str(" (with the include filter)");
        }
        msg.push_str(
            ". Files ignored by .gitignore, hidden files and binary files are not searched.",
        );
        return ToolOutput::text(msg);
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut head = format!(
        "{} in {}",
        plural(total, "matching line", "matching lines"),
        plural(files, "file", "files")
    );
    if total > shown {
        head.push_str(&format!(" (showing the first {shown})"));
    }
    let mut text = format!("{head}\n\n{out}");
    if total > shown {
        text.push_str(&format!(
            "\n… {} more matches not shown. Narrow the pattern, path or include to see them.\n",
            total - shown
        ));
    }
    ToolOutput::text(text)
}

/// One file's matches, keeping the rows of at most `budget`; `None` when
/// it cannot be read, is binary or does not match. Unreadable files are
/// skipped like binary ones: the rest of the search is still worth
/// returning. Opened beneath the workspace: a link swapped in after the
/// walk saw the entry cannot lead the read out of it.
fn search_file(
    searcher: &mut Searcher,
    q: &Query,
    reader: &Reader,
    path: &Path,
    budget: usize,
) -> Option<FileSink> {
    let mut sink = FileSink::new(budget);
    let file = reader.open(path).ok()?;
    let ok = searcher.search_file(&q.matcher, &file, &mut sink).is_ok();
    (ok && !sink.binary && sink.matches > 0).then_some(sink)
}

/// `include` matches the file name, or the path below the search root when
/// the glob itself contains a `/`.
fn included(include: Option<&GlobSet>, root: &Path, path: &Path) -> bool {
    let Some(set) = include else { return true };
    if path.file_name().is_some_and(|name| set.is_match(name)) {
        return true;
    }
    path.strip_prefix(root).is_ok_and(|rel| set.is_match(rel))
}

enum Row {
    Line {
        number: u64,
        text: String,
        is_match: bool,
    },
    Break,
}

fn write_rows(out: &mut String, path: &str, rows: &[Row]) {
    for row in rows {
        match row {
            Row::Line {
                number,
                text,
                is_match,
            } => {
                let sep = if *is_match { ':' } else { '-' };
                out.push_str(&format!("{path}{sep}{number}{sep} {text}\n"));
            }
            Row::Break => out.push_str("--\n"),
        }
    }
    out.push('\n');
}

/// Collects one file's results. Past `budget` matches it only counts, so a
/// file with a million hits costs no memory.
struct FileSink {
    rows: Vec<Row>,
    budget: usize,
    matches: usize,
    kept: usize,
    binary: bool,
}

impl FileSink {
    fn new(budget: usize) -> Self {
        FileSink {
            rows: Vec::new(),
            budget,
            matches: 0,
            kept: 0,
            binary: false,
        }
    }

    fn full(&self) -> bool {
        self.kept >= self.budget
    }

    fn push_lines(&mut self, first: Option<u64>, bytes: &[u8], is_match: bool) {
        let first = first.unwrap_or(0);
        for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
            let text = String::from_utf8_lossy(line);
            self.rows.push(Row::Line {
                number: first + i as u64,
                text: cut_line(text.trim_end_matches(['\n', '\r']), MAX_LINE_CHARS),
                is_match,
            });
        }
    }
}

impl Sink for FileSink {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matches += 1;
        if !self.full() {
            self.kept += 1;
            self.push_lines(mat.line_number(), mat.bytes(), true);
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        // After the last kept match only its trailing context is wanted.
        let trailing = matches!(c.kind(), grep_searcher::SinkContextKind::After);
        if !self.full() || (trailing && self.matches == self.kept) {
            self.push_lines(c.line_number(), c.bytes(), false);
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        if !self.full() && !self.rows.is_empty() {
            self.rows.push(Row::Break);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests;
