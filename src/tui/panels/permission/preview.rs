//! What the dialog shows of a call: an edit's diff (with its hunk review),
//! a command as the simple commands it was parsed into, a URL, an MCP
//! call, or the raw arguments.

use ratatui::text::{Line, Span};

use crate::tools::Preview;
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;
use crate::tui::widgets::diff_view::{DiffLayout, DiffOptions, DiffView, Review};
use crate::tui::wrap::{wrap_plain, wrap_prefixed};

/// How to draw the preview.
pub(super) struct Shape<'a> {
    pub width: u16,
    pub layout: Option<DiffLayout>,
    /// The whole file rather than the changes with some context.
    pub full: bool,
    pub review: Option<Review<'a>>,
}

/// The preview's lines, and where each hunk's review mark is.
pub(super) fn lines(
    preview: &Preview,
    diffs: &[DiffView],
    shape: &Shape,
    theme: &Theme,
    styles: &Styles,
) -> (Vec<Line<'static>>, Vec<usize>) {
    let width = shape.width;
    let lines = match preview {
        Preview::Diff(crate::diff::FileDiff { old, new, .. }) => {
            let Some(view) = diffs.first() else {
                return (Vec::new(), Vec::new());
            };
            let opts = diff_options(shape, old, new);
            let layout = shape.layout.unwrap_or_else(|| DiffLayout::for_width(width));
            return view.lines_reviewed(width, layout, theme, opts, shape.review);
        }
        Preview::Diffs { files } => return files_lines(files, diffs, shape, theme, styles),
        Preview::Command {
            command,
            cwd,
            commands,
            redirects,
        } => command_lines(command, cwd, commands, redirects, width, styles),
        Preview::Url { url } => wrap_plain(url, width, styles.accent),
        Preview::Input { input } => {
            let pretty = serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string());
            wrap_plain(&pretty, width, styles.text)
        }
        Preview::Mcp {
            server,
            tool,
            description,
            hints,
            input,
        } => crate::tui::widgets::mcp_preview::lines(
            &crate::tui::widgets::mcp_preview::McpCall {
                server,
                tool,
                description,
                hints,
                input,
            },
            width,
            styles,
        ),
    };
    (lines, Vec::new())
}

fn diff_options(shape: &Shape, old: &str, new: &str) -> DiffOptions {
    DiffOptions {
        context: 3,
        fold: !shape.full,
        line_numbers: true,
        highlight: crate::tui::widgets::diff_view::highlight_affordable(old, new),
    }
}

/// A change of several files: each under a line naming it, its hunks
/// marked with their numbers across all the files.
fn files_lines(
    files: &[crate::diff::FileDiff],
    diffs: &[DiffView],
    shape: &Shape,
    theme: &Theme,
    styles: &Styles,
) -> (Vec<Line<'static>>, Vec<usize>) {
    let width = shape.width;
    let layout = shape.layout.unwrap_or_else(|| DiffLayout::for_width(width));
    let (mut out, mut marks) = (Vec::new(), Vec::new());
    let mut first = 0;
    for (file, view) in files.iter().zip(diffs) {
        let n = view.hunk_count();
        let head = format!(
            "── {}  +{} −{}  ({} {})",
            file.path,
            file.added,
            file.removed,
            n,
            if n == 1 { "hunk" } else { "hunks" }
        );
        out.extend(wrap_plain(&head, width, styles.accent));
        let review = shape.review.map(|r| Review {
            accepted: r.accepted.get(first..first + n).unwrap_or(&[]),
            focus: r
                .focus
                .checked_sub(first)
                .filter(|f| *f < n)
                .unwrap_or(usize::MAX),
        });
        let opts = diff_options(shape, &file.old, &file.new);
        let (lines, file_marks) = view.lines_reviewed(width, layout, theme, opts, review);
        let at = out.len();
        marks.extend(file_marks.into_iter().map(|m| m + at));
        out.extend(lines);
        first += n;
    }
    (out, marks)
}

/// What runs comes first, one parsed simple command a line, so nothing in
/// the raw text can push it below the fold.
fn command_lines(
    command: &str,
    cwd: &str,
    commands: &[Vec<String>],
    redirects: &[String],
    width: u16,
    styles: &Styles,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for c in commands {
        out.extend(wrap_prefixed(
            &c.join(" "),
            width,
            Span::styled("▸ ", styles.accent),
            Span::raw("  "),
            styles.user,
        ));
    }
    for r in redirects {
        out.extend(wrap_prefixed(
            r,
            width,
            Span::styled("↳ ", styles.warning),
            Span::raw("  "),
            styles.warning,
        ));
    }
    out.extend(wrap_prefixed(
        cwd,
        width,
        Span::styled("in ", styles.dim),
        Span::raw("   "),
        styles.dim,
    ));
    out.push(Line::default());
    out.extend(wrap_prefixed(
        &collapse_blank_runs(command),
        width,
        Span::styled("$ ", styles.dim),
        Span::raw("  "),
        styles.text,
    ));
    out
}

/// The raw command with every run of blank (or whitespace-only) lines
/// shown as one line saying how many there were.
fn collapse_blank_runs(command: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut blanks = 0;
    let flush = |blanks: usize, out: &mut Vec<String>| match blanks {
        0 => {}
        1 => out.push(String::new()),
        n => out.push(format!("⋯ {n} blank lines ⋯")),
    };
    for line in command.trim_end().lines() {
        if line.trim().is_empty() {
            blanks += 1;
            continue;
        }
        flush(blanks, &mut out);
        blanks = 0;
        out.push(line.to_string());
    }
    flush(blanks, &mut out);
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::collapse_blank_runs;

    #[test]
    fn runs_of_blank_lines_are_collapsed() {
        assert_eq!(collapse_blank_runs("a\n\nb"), "a\n\nb");
        assert_eq!(
            collapse_blank_runs("echo hi\n\n\n  \n\t\nrm -rf x\n\n\n"),
            "echo hi\n⋯ 4 blank lines ⋯\nrm -rf x"
        );
        assert_eq!(collapse_blank_runs("ls"), "ls");
    }
}
