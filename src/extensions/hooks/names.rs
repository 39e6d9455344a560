//! cairn's tools as Claude Code's hooks know them: the name a matcher and a
//! script compare (`Bash`, `Read`, `Edit`, …) and the input fields they
//! read (`tool_input.command`, `tool_input.file_path`). An MCP tool keeps
//! its name (`mcp__server__tool`), as Claude Code spells it too.

use std::path::Path;

use serde_json::{Map, Value, json};

/// (cairn's name, Claude Code's name).
const NAMES: [(&str, &str); 13] = [
    ("bash", "Bash"),
    ("view", "Read"),
    ("edit", "Edit"),
    ("multiedit", "MultiEdit"),
    ("write", "Write"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("ls", "LS"),
    ("fetch", "WebFetch"),
    ("todos", "TodoWrite"),
    ("agent", "Task"),
    ("skill", "Skill"),
    ("web_search", "WebSearch"),
];

/// The name hooks see for a cairn tool (its own when Claude Code has none).
pub fn claude_name(tool: &str) -> &str {
    NAMES
        .iter()
        .find(|(c, _)| *c == tool)
        .map(|(_, claude)| *claude)
        .unwrap_or(tool)
}

/// Renames `from` to `to` in an object, when present.
fn rename(obj: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(v) = obj.remove(from) {
        obj.insert(to.to_string(), v);
    }
}

/// The input hooks see: Claude Code's field names, and paths absolute (a
/// script compares them with `$CLAUDE_PROJECT_DIR`).
pub fn claude_input(tool: &str, input: &Value, cwd: &Path) -> Value {
    let Value::Object(mut obj) = input.clone() else {
        return input.clone();
    };
    for key in ["file_path", "path"] {
        if let Some(Value::String(p)) = obj.get(key) {
            let abs = cwd.join(p);
            obj.insert(key.into(), json!(crate::paths::lexical(&abs)));
        }
    }
    match tool {
        "bash" => rename(&mut obj, "timeout_ms", "timeout"),
        "grep" => rename(&mut obj, "include", "glob"),
        "fetch" => {
            obj.entry("prompt").or_insert(json!(""));
        }
        _ => {}
    }
    Value::Object(obj)
}

/// A hook's `updatedInput` (Claude Code's fields) as cairn's tool reads it.
/// Fields the hook left out keep their value from `original`.
pub fn cairn_input(tool: &str, updated: &Value, original: &Value) -> Value {
    let Value::Object(mut obj) = updated.clone() else {
        return original.clone();
    };
    match tool {
        "bash" => {
            rename(&mut obj, "timeout", "timeout_ms");
            obj.remove("description");
        }
        "grep" => rename(&mut obj, "glob", "include"),
        // cairn's fetch has no `prompt`; the one hooks were shown goes.
        "fetch" => {
            obj.remove("prompt");
        }
        _ => {}
    }
    let mut merged = original.as_object().cloned().unwrap_or_default();
    merged.extend(obj);
    Value::Object(merged)
}

/// What hooks see as a finished call's `tool_response`.
pub fn claude_response(tool: &str, input: &Value, output: &str, is_error: bool) -> Value {
    let mut obj = Map::new();
    match tool {
        "bash" => {
            obj.insert("stdout".into(), json!(output));
            obj.insert("stderr".into(), json!(""));
            obj.insert("interrupted".into(), json!(false));
        }
        "view" | "edit" | "multiedit" | "write" => {
            if let Some(p) = input.get("file_path") {
                obj.insert("filePath".into(), p.clone());
            }
        }
        _ => {}
    }
    obj.insert("output".into(), json!(output));
    obj.insert("success".into(), json!(!is_error));
    Value::Object(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_get_the_names_and_fields_claude_code_hooks_read() {
        assert_eq!(claude_name("bash"), "Bash");
        assert_eq!(claude_name("view"), "Read");
        assert_eq!(claude_name("mcp__github__search"), "mcp__github__search");
        let cwd = Path::new("/w/p");
        let input = json!({"file_path": "src/../.env", "offset": 3});
        let seen = claude_input("view", &input, cwd);
        assert_eq!(seen, json!({"file_path": "/w/p/.env", "offset": 3}));
        let seen = claude_input("bash", &json!({"command": "ls", "timeout_ms": 5}), cwd);
        assert_eq!(seen, json!({"command": "ls", "timeout": 5}));
    }

    #[test]
    fn an_updated_input_comes_back_in_cairns_fields() {
        let original = json!({"command": "rm -rf x", "timeout_ms": 5, "run_in_background": false});
        let updated = json!({"command": "echo safe", "timeout": 9});
        let back = cairn_input("bash", &updated, &original);
        assert_eq!(
            back,
            json!({"command": "echo safe", "timeout_ms": 9, "run_in_background": false})
        );
        let back = cairn_input("grep", &json!({"pattern": "a", "glob": "*.rs"}), &json!({}));
        assert_eq!(back, json!({"pattern": "a", "include": "*.rs"}));
    }
}
