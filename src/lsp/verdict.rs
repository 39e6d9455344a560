//! What an edit did to a file's diagnostics: the problems the server
//! reports for the new text that it did not report for the old one, and
//! the ones that went away. A diagnostic is known by its severity,
//! message, code and the text it points at, not by its line, so lines
//! that merely moved do not count as new.

use std::collections::HashMap;

use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString};
use serde::{Deserialize, Serialize};

/// Most findings carried in one verdict (the counts stay exact).
pub const MAX_FINDINGS: usize = 20;

/// Most other files whose new errors a verdict carries (the rest are
/// counted).
pub const MAX_OTHER_FILES: usize = 5;

/// Most findings carried per other file.
const MAX_OTHER_FINDINGS: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem the edit introduced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub severity: Severity,
    /// 0-based line in the new text.
    pub line: u32,
    pub message: String,
    pub code: Option<String>,
}

/// New errors an edit caused in another file the server re-checked (a
/// caller of a function the edit renamed, say).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Elsewhere {
    /// The file as shown to the person and the model.
    pub path: String,
    /// Errors first, at most a few.
    pub new: Vec<Finding>,
    pub new_errors: usize,
    pub new_warnings: usize,
}

/// The server's verdict on one proposed text of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    Checked {
        server: String,
        /// New problems, errors first, at most [`MAX_FINDINGS`].
        new: Vec<Finding>,
        new_errors: usize,
        new_warnings: usize,
        fixed_errors: usize,
        fixed_warnings: usize,
        /// Other files with new errors, at most [`MAX_OTHER_FILES`].
        #[serde(default)]
        elsewhere: Vec<Elsewhere>,
        /// Further files with new errors, left out.
        #[serde(default)]
        elsewhere_cut: usize,
        /// New errors in other files, all of them (exact).
        #[serde(default)]
        elsewhere_errors: usize,
    },
    /// The file has a server, but it gave no verdict: why.
    Unavailable { server: String, reason: String },
}

impl Verdict {
    pub fn server(&self) -> &str {
        match self {
            Verdict::Checked { server, .. } | Verdict::Unavailable { server, .. } => server,
        }
    }

    /// "+1 error, −2 warnings", or "no new problems".
    pub fn tally(&self) -> String {
        match self {
            Verdict::Checked {
                new_errors,
                new_warnings,
                fixed_errors,
                fixed_warnings,
                elsewhere,
                elsewhere_cut,
                elsewhere_errors,
                ..
            } => {
                let mut parts: Vec<String> = [
                    (*new_errors, "+", "error"),
                    (*new_warnings, "+", "warning"),
                    (*fixed_errors, "−", "error"),
                    (*fixed_warnings, "−", "warning"),
                ]
                .into_iter()
                .filter(|(n, ..)| *n > 0)
                .map(|(n, sign, what)| format!("{sign}{n} {}", plural(n, what)))
                .collect();
                let files = elsewhere.len() + elsewhere_cut;
                if *elsewhere_errors > 0 {
                    parts.push(format!(
                        "+{elsewhere_errors} {} in {files} other {}",
                        plural(*elsewhere_errors, "error"),
                        plural(files, "file")
                    ));
                }
                if parts.is_empty() {
                    "no new problems".into()
                } else {
                    parts.join(", ")
                }
            }
            Verdict::Unavailable { reason, .. } => format!("not checked: {reason}"),
        }
    }

    /// What the model is told after the edit: the errors it introduced
    /// (warnings counted), or nothing when it introduced none.
    pub fn for_model(&self, path: &str) -> Option<String> {
        let Verdict::Checked {
            server,
            new,
            new_errors,
            new_warnings,
            elsewhere,
            elsewhere_cut,
            ..
        } = self
        else {
            return None;
        };
        let others = elsewhere_for_model(server, elsewhere, *elsewhere_cut);
        if *new_errors == 0 {
            return others;
        }
        let mut text = format!(
            "The language server ({server}) reports {new_errors} new {} in {path} after this edit \
             (problems that were there before are not listed):",
            plural(*new_errors, "error")
        );
        for f in new.iter().filter(|f| f.severity == Severity::Error) {
            let code = f
                .code
                .as_deref()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            text.push_str(&format!(
                "\n  line {}: {}{code}",
                f.line + 1,
                one_line(&f.message)
            ));
        }
        let shown = new.iter().filter(|f| f.severity == Severity::Error).count();
        if shown < *new_errors {
            text.push_str(&format!("\n  … and {} more", new_errors - shown));
        }
        if *new_warnings > 0 {
            text.push_str(&format!(
                "\n(and {new_warnings} new {})",
                plural(*new_warnings, "warning")
            ));
        }
        if let Some(others) = others {
            text.push('\n');
            text.push_str(&others);
        }
        Some(text)
    }

    /// The same verdict with the new errors of other files.
    pub fn with_elsewhere(mut self, mut files: Vec<Elsewhere>) -> Verdict {
        if let Verdict::Checked {
            elsewhere,
            elsewhere_cut,
            elsewhere_errors,
            ..
        } = &mut self
        {
            files.retain(|f| f.new_errors > 0);
            files.sort_by(|a, b| a.path.cmp(&b.path));
            *elsewhere_errors = files.iter().map(|f| f.new_errors).sum();
            *elsewhere_cut = files.len().saturating_sub(MAX_OTHER_FILES);
            files.truncate(MAX_OTHER_FILES);
            *elsewhere = files;
        }
        self
    }

    /// The other files with new errors (at most [`MAX_OTHER_FILES`]).
    pub fn elsewhere(&self) -> &[Elsewhere] {
        match self {
            Verdict::Checked { elsewhere, .. } => elsewhere,
            Verdict::Unavailable { .. } => &[],
        }
    }

    /// The findings on lines `lines` (0-based, of the new text).
    pub fn findings_in(&self, lines: std::ops::Range<usize>) -> Vec<&Finding> {
        match self {
            Verdict::Checked { new, .. } => new
                .iter()
                .filter(|f| lines.contains(&(f.line as usize)))
                .collect(),
            Verdict::Unavailable { .. } => Vec::new(),
        }
    }
}

/// How many of a note's error lines a pane shows.
const PANE_ERRORS: usize = 3;

/// What an applied edit's result says of the language server's check,
/// for its pane: each line, and whether it is a problem (new errors, or
/// not checked). Read back from the notes `for_model` and the agent's
/// check write, so the pane says what the model was told.
pub fn pane_notes(output: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut errors_left = 0;
    for line in output.lines() {
        if line.starts_with("The language server (") {
            let head = line
                .split_once(" after this edit")
                .map_or(line, |(h, _)| h)
                .trim_end_matches(':');
            out.push((head.to_string(), true));
            errors_left = PANE_ERRORS;
        } else if let Some(rest) = line.strip_prefix("  ").filter(|_| errors_left > 0) {
            out.push((format!("  {}", rest.trim()), true));
            errors_left -= 1;
        } else if line.starts_with("Not checked by ") {
            out.push((line.trim_end_matches('.').to_string(), true));
            errors_left = 0;
        } else if line.starts_with("Checked by ") {
            out.push((line.trim_end_matches('.').to_string(), false));
            errors_left = 0;
        } else {
            errors_left = 0;
        }
    }
    out
}

/// The model's note on the errors an edit caused in other files.
fn elsewhere_for_model(server: &str, files: &[Elsewhere], cut: usize) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let mut text = format!(
        "The language server ({server}) also reports new errors in other files after this edit:"
    );
    for f in files {
        for x in f.new.iter().filter(|x| x.severity == Severity::Error) {
            let code = x
                .code
                .as_deref()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            text.push_str(&format!(
                "\n  {} line {}: {}{code}",
                f.path,
                x.line + 1,
                one_line(&x.message)
            ));
        }
        let shown = f
            .new
            .iter()
            .filter(|x| x.severity == Severity::Error)
            .count();
        if shown < f.new_errors {
            text.push_str(&format!(
                "\n  {}: … and {} more",
                f.path,
                f.new_errors - shown
            ));
        }
    }
    if cut > 0 {
        text.push_str(&format!(
            "\n  … and {cut} more {} with new errors (ask the lsp tool for diagnostics)",
            plural(cut, "file")
        ));
    }
    Some(text)
}

/// What an edit changed in another file's diagnostics (its text is the
/// same before and after).
pub fn compare_elsewhere(
    path: String,
    text: &str,
    before: &[Diagnostic],
    after: &[Diagnostic],
) -> Elsewhere {
    let (new, new_errors, new_warnings) = match compare("", text, before, text, after) {
        Verdict::Checked {
            mut new,
            new_errors,
            new_warnings,
            ..
        } => {
            new.truncate(MAX_OTHER_FINDINGS);
            (new, new_errors, new_warnings)
        }
        Verdict::Unavailable { .. } => (Vec::new(), 0, 0),
    };
    Elsewhere {
        path,
        new,
        new_errors,
        new_warnings,
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

fn one_line(s: &str) -> String {
    crate::text::fit(&s.split_whitespace().collect::<Vec<_>>().join(" "), 300)
}

/// A diagnostic as cairn compares it, with its 0-based line.
#[derive(Debug, Clone)]
struct Keyed {
    key: (Severity, String, Option<String>, String),
    line: u32,
}

fn keyed(d: &Diagnostic, text: &str) -> Option<Keyed> {
    let severity = match d.severity {
        // A server that says nothing means an error (the protocol leaves
        // it to the client; every common server sets it).
        None | Some(DiagnosticSeverity::ERROR) => Severity::Error,
        Some(DiagnosticSeverity::WARNING) => Severity::Warning,
        _ => return None,
    };
    let code = d.code.as_ref().map(|c| match c {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.clone(),
    });
    let symbol = range_text(text, d);
    Some(Keyed {
        key: (severity, d.message.clone(), code, symbol),
        line: d.range.start.line,
    })
}

/// The text the diagnostic points at (at most one line of it).
fn range_text(text: &str, d: &Diagnostic) -> String {
    let (s, e) = (d.range.start, d.range.end);
    let Some(line) = text.lines().nth(s.line as usize) else {
        return String::new();
    };
    let end = if e.line == s.line {
        e.character as usize
    } else {
        usize::MAX
    };
    // Positions count UTF-16 units; most code is ASCII, and a symbol cut
    // differently in both texts still matches itself.
    let units: Vec<u16> = line.encode_utf16().collect();
    let a = (s.character as usize).min(units.len());
    let b = end.clamp(a, units.len());
    String::from_utf16_lossy(&units[a..b]).trim().to_string()
}

/// Compares the diagnostics of the old and new texts of one file.
pub fn compare(
    server: &str,
    old_text: &str,
    before: &[Diagnostic],
    new_text: &str,
    after: &[Diagnostic],
) -> Verdict {
    let mut left: HashMap<_, usize> = HashMap::new();
    for k in before.iter().filter_map(|d| keyed(d, old_text)) {
        *left.entry(k.key).or_default() += 1;
    }
    let mut new = Vec::new();
    let (mut new_errors, mut new_warnings) = (0, 0);
    let mut after_keyed: Vec<Keyed> = after.iter().filter_map(|d| keyed(d, new_text)).collect();
    after_keyed.sort_by_key(|k| (k.key.0 != Severity::Error, k.line));
    for k in after_keyed {
        match left.get_mut(&k.key) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                match k.key.0 {
                    Severity::Error => new_errors += 1,
                    Severity::Warning => new_warnings += 1,
                }
                if new.len() < MAX_FINDINGS {
                    new.push(Finding {
                        severity: k.key.0,
                        line: k.line,
                        message: k.key.1.clone(),
                        code: k.key.2.clone(),
                    });
                }
            }
        }
    }
    let (mut fixed_errors, mut fixed_warnings) = (0, 0);
    for (key, n) in left {
        match key.0 {
            Severity::Error => fixed_errors += n,
            Severity::Warning => fixed_warnings += n,
        }
    }
    Verdict::Checked {
        server: server.to_string(),
        new,
        new_errors,
        new_warnings,
        fixed_errors,
        fixed_warnings,
        elsewhere: Vec::new(),
        elsewhere_cut: 0,
        elsewhere_errors: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn diag(line: u32, from: u32, to: u32, msg: &str, sev: DiagnosticSeverity) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, from), Position::new(line, to)),
            severity: Some(sev),
            code: Some(NumberOrString::String("reportX".into())),
            message: msg.into(),
            ..Default::default()
        }
    }

    #[test]
    fn moved_problems_are_not_new_and_gone_ones_are_counted() {
        let old = "import os\nx = foo\n";
        let new = "import os\n\n\nx = foo\ny = bar\n";
        let before = [
            diag(1, 4, 7, "\"foo\" is not defined", DiagnosticSeverity::ERROR),
            diag(0, 7, 9, "\"os\" is unused", DiagnosticSeverity::WARNING),
        ];
        let after = [
            diag(3, 4, 7, "\"foo\" is not defined", DiagnosticSeverity::ERROR),
            diag(4, 4, 7, "\"bar\" is not defined", DiagnosticSeverity::ERROR),
            diag(4, 0, 1, "hint only", DiagnosticSeverity::HINT),
        ];
        let v = compare("pyright", old, &before, new, &after);
        assert_eq!(v.tally(), "+1 error, −1 warning");
        let text = v.for_model("a.py").unwrap();
        assert!(
            text.contains("line 5: \"bar\" is not defined [reportX]"),
            "{text}"
        );
        assert!(!text.contains("foo"), "{text}");
        assert_eq!(v.findings_in(4..5).len(), 1);
        assert!(v.findings_in(0..4).is_empty());
    }

    #[test]
    fn errors_in_other_files_are_told_capped_and_counted() {
        let text = "from lib import helper\nhelper()\n";
        let gone = diag(
            0,
            16,
            22,
            "\"helper\" is unknown",
            DiagnosticSeverity::ERROR,
        );
        let files: Vec<Elsewhere> = (0..7)
            .map(|i| compare_elsewhere(format!("u{i}.py"), text, &[], std::slice::from_ref(&gone)))
            .chain([compare_elsewhere(
                "same.py".into(),
                text,
                std::slice::from_ref(&gone),
                std::slice::from_ref(&gone),
            )])
            .collect();
        let v = compare("s", "a", &[], "a", &[]).with_elsewhere(files);
        assert_eq!(v.elsewhere().len(), MAX_OTHER_FILES);
        assert_eq!(v.tally(), "+7 errors in 7 other files");
        let text = v.for_model("lib.py").unwrap();
        assert!(
            text.contains("u0.py line 1: \"helper\" is unknown [reportX]"),
            "{text}"
        );
        assert!(
            text.contains("… and 2 more files with new errors"),
            "{text}"
        );
        assert!(!text.contains("same.py"), "{text}");
        let clean = compare("s", "a", &[], "a", &[]).with_elsewhere(vec![]);
        assert_eq!(clean.for_model("lib.py"), None);
    }

    #[test]
    fn a_pane_reads_back_what_the_model_was_told() {
        let v = compare(
            "pyright",
            "x = 1\n",
            &[],
            "x = y\nz = w\n",
            &[
                diag(0, 4, 5, "\"y\" is not defined", DiagnosticSeverity::ERROR),
                diag(1, 4, 5, "\"w\" is not defined", DiagnosticSeverity::ERROR),
            ],
        );
        let output = format!(
            "Edited a.py (+2 -1 lines)\n\n1\tx = y\n2\tz = w\n{}",
            v.for_model("a.py").unwrap()
        );
        let notes = pane_notes(&output);
        assert_eq!(
            notes,
            [
                (
                    "The language server (pyright) reports 2 new errors in a.py".to_string(),
                    true
                ),
                ("  line 1: \"y\" is not defined [reportX]".to_string(), true),
                ("  line 2: \"w\" is not defined [reportX]".to_string(), true),
            ]
        );
        assert_eq!(
            pane_notes("Edited a.py\nChecked by pyright: no new problems."),
            [("Checked by pyright: no new problems".to_string(), false)]
        );
        assert!(pane_notes("Edited a.py (+1 -1 lines)\n\n1\tx").is_empty());
    }

    #[test]
    fn the_same_message_on_another_symbol_is_new() {
        let old = "a = x\n";
        let new = "a = x\nb = x\nc = y\n";
        let msg = "undefined";
        let before = [diag(0, 4, 5, msg, DiagnosticSeverity::ERROR)];
        let after = [
            diag(0, 4, 5, msg, DiagnosticSeverity::ERROR),
            diag(1, 4, 5, msg, DiagnosticSeverity::ERROR),
            diag(2, 4, 5, msg, DiagnosticSeverity::ERROR),
        ];
        let v = compare("s", old, &before, new, &after);
        // One more `x` (counted) and a `y`.
        assert_eq!(v.tally(), "+2 errors");
        let clean = compare("s", old, &before, old, &before);
        assert_eq!(clean.tally(), "no new problems");
        assert_eq!(clean.for_model("a.py"), None);
    }
}
