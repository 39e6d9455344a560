//! The approval dialog's view of an MCP tool call: the server and tool, the
//! tool's description, the server's hints, and every argument in full —
//! nested values indented, long and multi-line strings shown whole.

use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::tui::styles::Styles;
use crate::tui::wrap::{wrap_plain, wrap_prefixed};

/// What the dialog shows above its choices for an MCP call.
pub struct McpCall<'a> {
    pub server: &'a str,
    pub tool: &'a str,
    pub description: &'a str,
    pub hints: &'a [String],
    pub input: &'a Value,
}

pub fn lines(call: &McpCall<'_>, width: u16, styles: &Styles) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(vec![
        Span::styled("MCP server ", styles.dim),
        Span::styled(call.server.to_string(), styles.accent),
        Span::styled(" · tool ", styles.dim),
        Span::styled(call.tool.to_string(), styles.user),
    ])];
    if !call.description.trim().is_empty() {
        out.extend(wrap_plain(call.description.trim(), width, styles.dim));
    }
    let hints = if call.hints.is_empty() {
        "none given".to_string()
    } else {
        call.hints.join(", ")
    };
    let hint_style = if call.hints.iter().any(|h| h == "destructive") {
        styles.warning
    } else {
        styles.dim
    };
    out.extend(wrap_prefixed(
        &hints,
        width,
        Span::styled("server's hints: ", styles.dim),
        Span::raw(" ".repeat(16)),
        hint_style,
    ));
    out.push(Line::default());
    match call.input {
        Value::Object(map) if map.is_empty() => {
            out.push(Line::from(Span::styled("(no arguments)", styles.dim)));
        }
        Value::Object(map) => {
            for (key, value) in map {
                value_lines(&mut out, key, value, 0, width, styles);
            }
        }
        other => value_lines(&mut out, "arguments", other, 0, width, styles),
    }
    out
}

/// One argument: `key: value` for a short scalar, `key:` and an indented
/// block for anything else.
fn value_lines(
    out: &mut Vec<Line<'static>>,
    key: &str,
    value: &Value,
    indent: usize,
    width: u16,
    styles: &Styles,
) {
    let pad = " ".repeat(indent);
    let head = |suffix: &str| {
        Line::from(vec![
            Span::raw(pad.clone()),
            Span::styled(format!("{key}:{suffix}"), styles.accent),
        ])
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push(head(""));
            for (k, v) in map {
                value_lines(out, k, v, indent + 2, width, styles);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            out.push(head(""));
            for (i, v) in items.iter().enumerate() {
                value_lines(out, &format!("[{i}]"), v, indent + 2, width, styles);
            }
        }
        Value::String(s) if s.contains('\n') => {
            let lines = s.lines().count();
            out.push(head(&format!(" ({lines} lines)")));
            out.extend(wrap_prefixed(
                s,
                width,
                Span::styled(format!("{pad}  │ "), styles.dim),
                Span::styled(format!("{pad}  │ "), styles.dim),
                styles.text,
            ));
        }
        scalar => {
            let text = match scalar {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let first = format!("{pad}{key}: ");
            let rest = " ".repeat(first.chars().count());
            out.extend(wrap_prefixed(
                &text,
                width,
                Span::styled(first, styles.accent),
                Span::raw(rest),
                styles.text,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(lines: &[Line<'static>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn every_argument_is_shown_whole() {
        let long = "word ".repeat(40);
        let input = json!({
            "path": "/work/notes.md",
            "content": "first line\nsecond line\nthird line",
            "options": {"overwrite": true, "tags": ["a", "b"]},
            "summary": long.trim(),
        });
        let hints = vec!["destructive".to_string()];
        let call = McpCall {
            server: "fs",
            tool: "write_file",
            description: "Writes a file.",
            hints: &hints,
            input: &input,
        };
        let shown = text(&lines(&call, 40, &Styles::default()));
        assert_eq!(shown[0], "MCP server fs · tool write_file");
        assert_eq!(shown[1], "Writes a file.");
        assert_eq!(shown[2], "server's hints: destructive");
        assert!(
            shown.contains(&"content: (3 lines)".to_string()),
            "{shown:#?}"
        );
        assert!(shown.contains(&"  │ third line".to_string()));
        assert!(shown.contains(&"  overwrite: true".to_string()));
        assert!(shown.contains(&"    [1]: b".to_string()));
        assert!(shown.contains(&"path: /work/notes.md".to_string()));
        let words: usize = shown.iter().map(|l| l.matches("word").count()).sum();
        assert_eq!(words, 40, "the long string is wrapped, not cut");
    }
}
