//! The YAML frontmatter of the markdown files people share (commands,
//! skills, agents): the subset those files use — `key: value`, quoted
//! strings, `[a, b]` and `- item` lists, `>`/`|` blocks — read without a YAML
//! library. Anything else is kept as text, never an error: a file someone
//! wrote for another tool must still load.

use std::collections::BTreeMap;

/// A frontmatter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    List(Vec<String>),
}

impl Value {
    /// The value as one line of text (a list joined with ", ").
    pub fn text(&self) -> String {
        match self {
            Value::Text(t) => t.clone(),
            Value::List(items) => items.join(", "),
        }
    }

    /// The value as a list: a list, or text split at commas and spaces the
    /// way Claude Code reads `allowed-tools: Bash(git:*), Read`.
    pub fn list(&self) -> Vec<String> {
        match self {
            Value::List(items) => items.clone(),
            Value::Text(t) => split_tools(t),
        }
    }

    /// `true`/`yes`/`on` (any case).
    pub fn flag(&self) -> bool {
        matches!(
            self.text().trim().to_ascii_lowercase().as_str(),
            "true" | "yes" | "on"
        )
    }
}

/// A parsed file: its fields (keys lower-cased) and the body after them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    pub fields: BTreeMap<String, Value>,
    /// Each one-line field as written (`argument-hint: [pr] [priority]`
    /// is a hint to show, not a list).
    pub raw: BTreeMap<String, String>,
    pub body: String,
}

impl Document {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// A text field, trimmed, `None` when missing or empty.
    pub fn text(&self, key: &str) -> Option<String> {
        let t = self.get(key)?.text();
        let t = t.trim();
        (!t.is_empty()).then(|| t.to_string())
    }

    /// A one-line field exactly as written (quotes removed), else as text.
    pub fn shown(&self, key: &str) -> Option<String> {
        let t = match self.raw.get(key) {
            Some(r) if r.starts_with('[') => r.clone(),
            _ => self.get(key)?.text(),
        };
        let t = t.trim();
        (!t.is_empty()).then(|| t.to_string())
    }
}

/// Splits a markdown file into its frontmatter and body. A file without a
/// `---` first line is all body.
pub fn parse(text: &str) -> Document {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.clone().next().unwrap_or("");
    if first.trim_end() != "---" {
        return Document {
            body: text.to_string(),
            ..Document::default()
        };
    }
    lines.next();
    let mut head = Vec::new();
    let mut closed = false;
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        head.push(line.trim_end_matches(['\n', '\r']));
    }
    if !closed {
        // An opening `---` and no end: a horizontal rule, not frontmatter.
        return Document {
            body: text.to_string(),
            ..Document::default()
        };
    }
    let (fields, raw) = fields(&head);
    Document {
        fields,
        raw,
        body: lines.collect::<String>(),
    }
}

type Fields = (BTreeMap<String, Value>, BTreeMap<String, String>);

fn fields(lines: &[&str]) -> Fields {
    let mut out = BTreeMap::new();
    let mut raw = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.starts_with([' ', '\t', '#']) || line.trim().is_empty() {
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let rest = rest.trim();
        // The indented lines that belong to this key.
        let start = i;
        while i < lines.len() && (lines[i].starts_with([' ', '\t']) || lines[i].trim().is_empty()) {
            i += 1;
        }
        let nested = &lines[start..i];
        if !rest.is_empty() {
            raw.insert(key.clone(), rest.to_string());
        }
        let value = if rest.is_empty() || rest.starts_with(['>', '|']) {
            block(rest, nested)
        } else if rest.starts_with('[') && rest.ends_with(']') {
            Value::List(inline_list(&rest[1..rest.len() - 1]))
        } else {
            Value::Text(unquote(rest))
        };
        out.insert(key, value);
    }
    (out, raw)
}

/// A value written on the lines below its key: a `- item` list or a block
/// of text (folded for `>` and plain continuation, kept for `|`).
fn block(marker: &str, nested: &[&str]) -> Value {
    let items: Vec<&str> = nested
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if !items.is_empty() && items.iter().all(|l| l.starts_with("- ") || *l == "-") {
        return Value::List(
            items
                .iter()
                .map(|l| unquote(l.trim_start_matches('-').trim()))
                .filter(|s| !s.is_empty())
                .collect(),
        );
    }
    let joiner = if marker.starts_with('|') { "\n" } else { " " };
    Value::Text(unquote(&items.join(joiner)))
}

fn inline_list(inner: &str) -> Vec<String> {
    inner
        .split(',')
        .map(|s| unquote(s.trim()))
        .filter(|s| !s.is_empty())
        .collect()
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            let inner = &s[1..s.len() - 1];
            return if q == '"' {
                inner.replace("\\\"", "\"").replace("\\n", "\n")
            } else {
                inner.replace("''", "'")
            };
        }
    }
    s.to_string()
}

/// `Bash(git add:*), Read Grep` → the three tool patterns; commas and
/// spaces inside parentheses stay.
fn split_tools(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c == ',' || c.is_whitespace()) {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fields_people_write() {
        let doc = parse(
            "---\nname: pdf-tools\ndescription: \"Fill PDF forms: extract, fill, merge\"\n\
             allowed-tools: Bash(git add:*), Bash(git status:*), Read\nargument-hint: [message]\n\
             disable-model-invocation: true\ntags:\n  - a\n  - 'b c'\nlong: >\n  one\n  two\n---\n# Body\n",
        );
        assert_eq!(doc.text("name").as_deref(), Some("pdf-tools"));
        assert_eq!(
            doc.text("description").as_deref(),
            Some("Fill PDF forms: extract, fill, merge")
        );
        assert_eq!(
            doc.get("allowed-tools").unwrap().list(),
            ["Bash(git add:*)", "Bash(git status:*)", "Read"]
        );
        assert_eq!(doc.shown("argument-hint").as_deref(), Some("[message]"));
        assert!(doc.get("disable-model-invocation").unwrap().flag());
        assert_eq!(doc.get("tags").unwrap().list(), ["a", "b c"]);
        assert_eq!(doc.text("long").as_deref(), Some("one two"));
        assert_eq!(doc.body, "# Body\n");
    }

    #[test]
    fn a_file_without_frontmatter_is_all_body() {
        assert_eq!(parse("just text\n").body, "just text\n");
        let unclosed = parse("---\nnot: closed\n");
        assert!(unclosed.fields.is_empty());
        assert_eq!(unclosed.body, "---\nnot: closed\n");
        assert_eq!(
            parse("---\r\nname: x\r\n---\r\nbody")
                .text("name")
                .as_deref(),
            Some("x")
        );
    }
}
