//! A language server's formatting of a file (`textDocument/formatting`),
//! for `[format] … formatter = "lsp"`: the server is given the edited
//! text as the file's content and answers with edits, which are applied
//! here; nothing is written by the server.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::manager::LspManager;

impl LspManager {
    /// `text` as `path`'s server formats it, within `wait` (a server's
    /// start included); `Err` says why not, naming the server.
    pub async fn format(
        self: &Arc<Self>,
        path: &Path,
        text: &str,
        wait: Duration,
    ) -> Result<String, String> {
        let deadline = tokio::time::Instant::now() + wait;
        let client = match self.client_for(path, wait).await {
            Ok(Some(c)) => c,
            Ok(None) => return Err("no language server looks after this file".into()),
            Err((server, why)) => return Err(format!("{server}: {why}")),
        };
        let server = client.name.clone();
        let Ok(_one) = tokio::time::timeout_at(deadline, self.docs.busy.lock()).await else {
            return Err(format!("{server} was still busy with a check of an edit"));
        };
        self.docs
            .put(&client, path, text)
            .await
            .map_err(|e| format!("{server}: {e}"))?;
        let params = json!({
            "textDocument": {"uri": super::uri::from_path(path)},
            "options": options(text),
        });
        let asked = client.request("textDocument/formatting", params);
        let answer = match tokio::time::timeout_at(deadline, asked).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => return Err(format!("{server} could not format it: {e}")),
            Err(_) => {
                return Err(format!(
                    "{server} did not format it within {} s",
                    wait.as_secs()
                ));
            }
        };
        apply_edits(text, &answer).map_err(|e| format!("{server} answered {e}"))
    }
}

/// Formatting options that match the file: tabs when its indented lines
/// use tabs, else spaces in the smallest step its lines are indented by.
fn options(text: &str) -> Value {
    let indents = text.lines().filter_map(|l| {
        let lead: String = l.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        (!lead.is_empty() && l.len() > lead.len()).then_some(lead)
    });
    let mut tabs = 0;
    let mut spaces = 0;
    let mut step = usize::MAX;
    for lead in indents {
        if lead.starts_with('\t') {
            tabs += 1;
        } else {
            spaces += 1;
            step = step.min(lead.len());
        }
    }
    let size = if step == usize::MAX || step > 8 {
        4
    } else {
        step
    };
    json!({
        "tabSize": size,
        "insertSpaces": tabs <= spaces,
        "trimTrailingWhitespace": true,
        "insertFinalNewline": true,
        "trimFinalNewlines": true,
    })
}

/// `text` with the server's answer applied (`null`: no change).
fn apply_edits(text: &str, answer: &Value) -> Result<String, String> {
    let edits: Option<Vec<lsp_types::TextEdit>> = serde_json::from_value(answer.clone())
        .map_err(|_| "something that is not a list of edits".to_string())?;
    super::edits::apply(text, &edits.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(l1: u64, c1: u64, l2: u64, c2: u64, new: &str) -> Value {
        json!({"range": {"start": {"line": l1, "character": c1},
                         "end": {"line": l2, "character": c2}}, "newText": new})
    }

    #[test]
    fn an_answer_is_applied_and_null_changes_nothing() {
        let text = "fn  main(){}\n";
        let answer = json!([edit(0, 2, 0, 4, " "), edit(0, 10, 0, 10, " ")]);
        assert_eq!(apply_edits(text, &answer).unwrap(), "fn main() {}\n");
        assert_eq!(apply_edits(text, &Value::Null).unwrap(), text);
    }

    #[test]
    fn answers_that_are_not_edits_are_refused() {
        assert!(apply_edits("x", &json!({"a": 1})).is_err());
        let overlapping = json!([edit(0, 0, 0, 3, "a"), edit(0, 2, 0, 4, "b")]);
        assert_eq!(
            apply_edits("abcdef", &overlapping).unwrap_err(),
            "edits that overlap"
        );
        assert!(apply_edits("x", &json!([edit(0, 1, 0, 0, "")])).is_err());
    }

    #[test]
    fn options_follow_the_files_indentation() {
        let o = options("a\n  b\n    c\n");
        assert_eq!(
            (o["tabSize"].as_u64(), o["insertSpaces"].as_bool()),
            (Some(2), Some(true))
        );
        let o = options("a\n\tb\n\t\tc\n");
        assert_eq!(o["insertSpaces"], false);
        assert_eq!(options("flat\n")["tabSize"], 4);
    }
}
