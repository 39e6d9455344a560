//! A server's prompts as slash commands: `/mcp__SERVER__PROMPT args`
//! fetches the prompt with those arguments, and its text becomes what the
//! person sends.

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{GetPromptRequestParams, Prompt};
use rmcp::service::Peer;
use serde_json::{Map, Value};

use super::manager::McpManager;
use super::{server_key, split_tool_name, tool_name};

/// How long fetching a prompt may take.
const LIMIT: Duration = Duration::from_secs(30);

/// One prompt of a server as a slash command offers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptEntry {
    /// `mcp__docs__summary`, without the `/`.
    pub name: String,
    /// `<topic> [length]`: required arguments in angle brackets.
    pub args: String,
    pub description: String,
}

impl McpManager {
    /// Every prompt of the connected servers as its slash command, with
    /// its arguments and description: `/mcp__docs__summary <topic> — …`.
    pub async fn prompt_commands(&self) -> Vec<String> {
        let mut out = Vec::new();
        for p in self.prompt_entries().await {
            let mut line = format!("/{} {}", p.name, p.args).trim_end().to_string();
            if !p.description.is_empty() {
                line.push_str(" — ");
                line.push_str(&p.description);
            }
            out.push(line);
        }
        out
    }

    /// Every prompt of the connected servers, for the `/` menu.
    pub async fn prompt_entries(&self) -> Vec<PromptEntry> {
        let mut out = Vec::new();
        for slot in self.slots.values() {
            let Ok(live) = slot.live() else { continue };
            let has_prompts = live
                .peer
                .peer_info()
                .is_some_and(|i| i.capabilities.prompts.is_some());
            if !has_prompts {
                continue;
            }
            let Ok(Ok(prompts)) = tokio::time::timeout(LIMIT, live.peer.list_all_prompts()).await
            else {
                continue;
            };
            for p in prompts {
                let args: Vec<String> = (p.arguments.iter().flatten())
                    .map(|a| match a.required {
                        Some(true) => format!("<{}>", a.name),
                        _ => format!("[{}]", a.name),
                    })
                    .collect();
                out.push(PromptEntry {
                    name: tool_name(&slot.name, &p.name),
                    args: args.join(" "),
                    description: (p.description.as_deref().unwrap_or(""))
                        .trim()
                        .replace('\n', " "),
                });
            }
        }
        out
    }

    /// Fetches the prompt `/mcp__SERVER__PROMPT args` names (without the
    /// `/`) and returns its text. `Err` is a message for the person.
    pub async fn expand_prompt(&self, command: &str) -> Result<String, String> {
        let (name, rest) = match command.trim().split_once(char::is_whitespace) {
            Some((n, r)) => (n, r.trim()),
            None => (command.trim(), ""),
        };
        let (server, wanted) = split_tool_name(name).ok_or_else(|| {
            format!("`/{name}` is not an MCP prompt; they look like /mcp__SERVER__PROMPT")
        })?;
        let slot = self
            .find(server)
            .ok_or_else(|| format!("there is no MCP server `{server}` (see /mcp)"))?;
        let live = slot.live()?;
        let prompt = find_prompt(&slot.name, &live.peer, server, wanted).await?;
        let params: Vec<(String, bool)> = prompt
            .arguments
            .iter()
            .flatten()
            .map(|a| (a.name.clone(), a.required == Some(true)))
            .collect();
        let args = arguments(rest, &params).map_err(|why| {
            format!(
                "/{} {why}",
                tool_name(&server_key(&slot.name), &prompt.name)
            )
        })?;
        let mut request = GetPromptRequestParams::new(prompt.name.clone());
        if !args.is_empty() {
            request = request.with_arguments(args);
        }
        let result = match tokio::time::timeout(LIMIT, live.peer.get_prompt(request)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                return Err(format!(
                    "MCP server `{}` could not give prompt `{}`: {}",
                    slot.name,
                    prompt.name,
                    super::errors::service_failure(&e)
                ));
            }
            Err(_) => {
                return Err(format!(
                    "MCP server `{}` did not give its prompt in time",
                    slot.name
                ));
            }
        };
        let text = prompt_text(&serde_json::to_value(&result.messages).unwrap_or_default());
        if text.trim().is_empty() {
            return Err(format!(
                "prompt `{}` of MCP server `{}` is empty",
                prompt.name, slot.name
            ));
        }
        Ok(text)
    }
}

/// The prompt `wanted` of the server `name` (its key in the command is
/// `server`); prompt names in a command are sanitised like tool names.
async fn find_prompt(
    name: &str,
    peer: &Peer<RoleClient>,
    server: &str,
    wanted: &str,
) -> Result<Prompt, String> {
    let prompts = match tokio::time::timeout(LIMIT, peer.list_all_prompts()).await {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            return Err(format!(
                "MCP server `{name}` could not list its prompts: {}",
                super::errors::service_failure(&e)
            ));
        }
        Err(_) => {
            return Err(format!(
                "MCP server `{name}` did not list its prompts in time"
            ));
        }
    };
    let names: Vec<String> = prompts.iter().map(|p| p.name.clone()).collect();
    prompts
        .into_iter()
        .find(|p| tool_name(name, &p.name) == tool_name(server, wanted) || p.name == wanted)
        .ok_or_else(|| {
            format!(
                "MCP server `{name}` has no prompt `{wanted}` (it has: {})",
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            )
        })
}

/// `key=value` words, or words in the order of the prompt's arguments (the
/// last one takes the rest of the line).
fn arguments(rest: &str, params: &[(String, bool)]) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    let words: Vec<&str> = rest.split_whitespace().collect();
    if !words.is_empty() && words.iter().all(|w| w.contains('=')) {
        for w in words {
            let (k, v) = w.split_once('=').unwrap_or((w, ""));
            if !params.iter().any(|(p, _)| p == k) {
                let known: Vec<&str> = params.iter().map(|(p, _)| p.as_str()).collect();
                return Err(format!(
                    "has no argument `{k}` (it takes: {})",
                    known.join(", ")
                ));
            }
            out.insert(k.to_string(), Value::String(v.to_string()));
        }
    } else if !words.is_empty() {
        let mut remaining = rest.trim();
        for (i, (name, _)) in params.iter().enumerate() {
            if remaining.is_empty() {
                break;
            }
            let value = if i + 1 == params.len() {
                std::mem::take(&mut remaining)
            } else {
                let (word, after) = remaining
                    .split_once(char::is_whitespace)
                    .unwrap_or((remaining, ""));
                remaining = after.trim_start();
                word
            };
            out.insert(name.clone(), Value::String(value.to_string()));
        }
        if params.is_empty() {
            return Err("takes no arguments".to_string());
        }
    }
    let missing: Vec<&str> = params
        .iter()
        .filter(|(p, required)| *required && !out.contains_key(p))
        .map(|(p, _)| p.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "needs: {} (as words in order, or name=value)",
            missing.join(", ")
        ));
    }
    Ok(out)
}

/// The text of a prompt's messages, one paragraph each; embedded
/// resources give their text, other media a note.
fn prompt_text(messages: &Value) -> String {
    let mut parts = Vec::new();
    for m in messages.as_array().into_iter().flatten() {
        let c = &m["content"];
        let text = match c["type"].as_str() {
            Some("text") => c["text"].as_str().unwrap_or("").to_string(),
            Some("resource") => c["resource"]["text"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| {
                    format!(
                        "[resource {}]",
                        c["resource"]["uri"].as_str().unwrap_or("?")
                    )
                }),
            Some(other) => format!("[{other} omitted]"),
            None => String::new(),
        };
        if !text.trim().is_empty() {
            parts.push(text);
        }
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params() -> Vec<(String, bool)> {
        vec![("topic".into(), true), ("style".into(), false)]
    }

    #[test]
    fn arguments_by_order_or_by_name() {
        let a = arguments("rust the short way", &params()).unwrap();
        assert_eq!(a["topic"], "rust");
        assert_eq!(a["style"], "the short way");
        let a = arguments("style=long topic=mcp", &params()).unwrap();
        assert_eq!(
            (a["topic"].as_str(), a["style"].as_str()),
            (Some("mcp"), Some("long"))
        );
        assert!(
            arguments("", &params())
                .unwrap_err()
                .contains("needs: topic")
        );
        assert!(
            arguments("colour=red", &params())
                .unwrap_err()
                .contains("no argument `colour`")
        );
        assert!(
            arguments("x", &[])
                .unwrap_err()
                .contains("takes no arguments")
        );
        assert!(arguments("", &[]).unwrap().is_empty());
    }

    #[test]
    fn messages_become_text() {
        let messages = json!([
            {"role": "user", "content": {"type": "text", "text": "Summarise this."}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "x://a", "text": "the body"}}},
            {"role": "user", "content": {"type": "image", "data": "", "mimeType": "image/png"}},
        ]);
        assert_eq!(
            prompt_text(&messages),
            "Summarise this.\n\nthe body\n\n[image omitted]"
        );
    }
}
