//! Tool names in agent files: Claude Code's (`Read, Grep, Bash`) and
//! cairn's own (`view, grep, bash`) both mean cairn's tools.

/// What `explore` may use; an agent allowed no more needs no trust.
pub const EXPLORE_TOOLS: &[&str] = &["view", "grep", "glob", "ls", "bash", "job_output"];

/// cairn's tools for one name of a `tools:` list; `None` when it means
/// nothing to cairn.
fn map_one(name: &str) -> Option<&'static [&'static str]> {
    // `Bash(git:*)` narrows a tool in Claude Code; here the gate judges
    // each call, so the tool itself is what counts.
    let base = name.split('(').next().unwrap_or(name).trim();
    Some(match base.to_ascii_lowercase().as_str() {
        "read" | "view" => &["view"],
        "grep" => &["grep"],
        "glob" => &["glob"],
        "ls" => &["ls"],
        "bash" => &["bash", "job_output", "job_kill"],
        "bashoutput" | "job_output" => &["job_output"],
        "killshell" | "killbash" | "job_kill" => &["job_kill"],
        "edit" => &["edit"],
        "multiedit" => &["multiedit"],
        "write" => &["write"],
        "webfetch" | "fetch" => &["fetch"],
        "todowrite" | "todos" => &["todos"],
        "task" | "agent" => &["agent"],
        "skill" => &["skill"],
        _ => return None,
    })
}

/// cairn's tools for a `tools:` list, and the names that mean nothing to
/// cairn (said once to the person, never silently dropped). MCP tools
/// (`mcp__server__tool`) are kept as they are.
pub fn map_tools(names: &[String]) -> (Vec<String>, Vec<String>) {
    let mut tools: Vec<String> = Vec::new();
    let mut unknown = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if name.starts_with("mcp__") {
            if !tools.iter().any(|t| t == name) {
                tools.push(name.to_string());
            }
            continue;
        }
        match map_one(name) {
            Some(mapped) => {
                for t in mapped {
                    if !tools.iter().any(|x| x == t) {
                        tools.push(t.to_string());
                    }
                }
            }
            None => unknown.push(name.to_string()),
        }
    }
    (tools, unknown)
}
