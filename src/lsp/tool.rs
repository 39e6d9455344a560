//! The `lsp` tool: what the language server knows of the code, for the
//! model: where a symbol is defined, where it is used, its type and
//! documentation, a file's or the project's symbols, and diagnostics.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::client::Client;
use super::manager::LspManager;
use super::rename::{self, MAX_FILE};
use crate::sync::lock;
use crate::tools::edit_core::Plan;
use crate::tools::{Preview, Tool, ToolContext, ToolOutput, opt_str_arg, opt_u64_arg, str_arg};

/// How long a question waits for a server that is still starting.
const START_WAIT: Duration = Duration::from_secs(60);
/// How long a server that just had a file opened must be quiet (no work
/// announced or ended, no diagnostics) before it is asked.
const SETTLE: Duration = Duration::from_millis(400);
/// Most locations or symbols listed.
const MAX_ITEMS: usize = 60;
/// Most renames worked out and not yet run (one per call in flight).
const MAX_PREPARED: usize = 32;

/// A rename worked out for one call: what the call asked, and the change
/// of each file.
struct Prepared {
    asked: Value,
    plans: Vec<Plan>,
}

pub struct LspTool {
    manager: Arc<LspManager>,
    /// Renames by call id, from `resolve` until the call runs.
    prepared: Mutex<HashMap<String, Prepared>>,
}

impl LspTool {
    pub fn new(manager: Arc<LspManager>) -> LspTool {
        LspTool {
            manager,
            prepared: Mutex::new(HashMap::new()),
        }
    }

    fn renames(input: &Value) -> bool {
        input["operation"].as_str() == Some("rename")
    }

    /// The files of the rename worked out for this call, if its input is
    /// still what was asked.
    fn prepared_plans(&self, input: &Value, ctx: &ToolContext) -> Option<Vec<Plan>> {
        let prepared = lock(&self.prepared);
        let p = prepared.get(&ctx.call_id)?;
        (p.asked == rename::asked(input)).then(|| p.plans.clone())
    }
}

#[async_trait]
impl Tool for LspTool {
    fn name(&self) -> &str {
        "lsp"
    }
    fn description(&self) -> &str {
        include_str!("../../assets/tools/lsp.md")
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "operation": {
                    "type": "string",
                    "enum": ["definition", "references", "hover", "document_symbols", "workspace_symbols", "diagnostics", "rename"],
                    "description": "What to ask the language server."
                },
                "file_path": {
                    "type": "string",
                    "description": "The file (all but workspace_symbols; for diagnostics, leave out for every file the server has reported on)."
                },
                "line": {
                    "type": "integer",
                    "description": "1-based line of the symbol (definition, references, hover, rename)."
                },
                "symbol": {
                    "type": "string",
                    "description": "The symbol's text on that line (definition, references, hover, rename)."
                },
                "new_name": {
                    "type": "string",
                    "description": "The symbol's new name (rename)."
                },
                "query": {
                    "type": "string",
                    "description": "Name or part of a name to look for (workspace_symbols)."
                }
            },
            "required": ["operation"],
            "additionalProperties": false
        })
    }
    fn read_only(&self) -> bool {
        true
    }
    fn read_only_call(&self, input: &Value, _ctx: &ToolContext) -> bool {
        !Self::renames(input)
    }
    fn summary(&self, input: &Value) -> String {
        let op = input["operation"].as_str().unwrap_or("");
        if Self::renames(input) {
            return format!(
                "lsp rename {} → {}",
                input["symbol"].as_str().unwrap_or("?"),
                input["new_name"].as_str().unwrap_or("?")
            );
        }
        let target = (input["symbol"].as_str())
            .or(input["query"].as_str())
            .or(input["file_path"].as_str())
            .unwrap_or("");
        format!("lsp {op} {target}").trim_end().to_string()
    }
    fn paths(&self, input: &Value, ctx: &ToolContext) -> Vec<PathBuf> {
        if Self::renames(input)
            && let Some(plans) = self.prepared_plans(input, ctx)
        {
            return plans.into_iter().map(|p| p.path).collect();
        }
        opt_str_arg(input, "file_path")
            .ok()
            .flatten()
            .map(|p| vec![ctx.resolve(p)])
            .unwrap_or_default()
    }
    async fn resolve(&self, input: Value, ctx: &ToolContext) -> Result<Value, String> {
        if !Self::renames(&input) {
            return Ok(input);
        }
        let plans = self.work_out_rename(&input, ctx).await?;
        let mut prepared = lock(&self.prepared);
        if prepared.len() >= MAX_PREPARED {
            prepared.clear();
        }
        let asked = rename::asked(&input);
        prepared.insert(ctx.call_id.clone(), Prepared { asked, plans });
        Ok(input)
    }
    async fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        if !Self::renames(input) {
            return Ok(None);
        }
        let plans = self.prepared_plans(input, ctx).ok_or(NOT_PREPARED)?;
        Ok(Some(rename::preview(&plans)))
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        if Self::renames(&input) {
            let plans = self.prepared_plans(&input, ctx);
            lock(&self.prepared).remove(&ctx.call_id);
            let Some(plans) = plans else {
                return ToolOutput::error(NOT_PREPARED);
            };
            let from = input["symbol"].as_str().unwrap_or("");
            let to = input["new_name"].as_str().unwrap_or("");
            let c = ctx.clone();
            let (from, to) = (from.to_string(), to.to_string());
            return crate::tools::walk::blocking(move || rename::write(plans, &from, &to, &c))
                .await
                .unwrap_or_else(ToolOutput::error);
        }
        match self.answer(&input, ctx).await {
            Ok(text) => ToolOutput::text(text),
            Err(e) => ToolOutput::error(e),
        }
    }
}

/// A rename run without the answer worked out for it (its input changed
/// after, or it was never worked out).
const NOT_PREPARED: &str =
    "the rename was not worked out for this call as it is now; nothing was renamed. Ask again.";

impl LspTool {
    /// Asks the server for the rename and works out each file's change.
    async fn work_out_rename(&self, input: &Value, ctx: &ToolContext) -> Result<Vec<Plan>, String> {
        let file = ctx.resolve(str_arg(input, "file_path")?);
        let to = str_arg(input, "new_name")?;
        if to.trim().is_empty() || to.contains(['\n', '\r']) {
            return Err("`new_name` must be the new name, on one line".into());
        }
        if !file.starts_with(&ctx.workspace) {
            return Err(format!(
                "{} is outside the workspace; rename only the workspace's code",
                file.display()
            ));
        }
        let position = position(&file, input)?;
        let client = self.opened(&file).await?;
        let answer = {
            // The server must see every file as it is on disk: the
            // positions of its answer are in the text it holds.
            let _one = self.manager.docs.busy.lock().await;
            for (other, _) in self.manager.docs.others(&client, &file) {
                if let Ok(text) = read_text(&other) {
                    self.manager.docs.put(&client, &other, &text).await?;
                }
            }
            let mut params = doc(&file);
            params["position"] = position;
            params["newName"] = Value::String(to.to_string());
            client.request("textDocument/rename", params).await?
        };
        let files = rename::one_name_each(rename::edits_by_file(answer)?)?;
        let outside: Vec<String> = (files.keys())
            .filter(|p| !crate::paths::lexical(p).starts_with(&ctx.workspace))
            .map(|p| p.display().to_string())
            .collect();
        if !outside.is_empty() {
            return Err(format!(
                "the language server's rename would change files outside the workspace ({}); \
                 nothing was renamed",
                outside.join(", ")
            ));
        }
        if files.len() > rename::MAX_FILES {
            return Err(format!(
                "the rename would change {} files, more than {} can be reviewed; rename in \
                 smaller steps",
                files.len(),
                rename::MAX_FILES
            ));
        }
        let ctx = ctx.clone();
        crate::tools::walk::blocking(move || {
            let plans = (files.iter())
                .map(|(path, edits)| rename::plan_file(path, edits, &ctx))
                .collect::<Result<Vec<Plan>, String>>()?;
            // A file the edits leave as it is is neither shown nor written.
            let plans: Vec<Plan> = plans
                .into_iter()
                .filter(|p| p.old_text != p.new_text)
                .collect();
            if plans.is_empty() {
                return Err("the language server's rename changes nothing".to_string());
            }
            Ok(plans)
        })
        .await?
    }

    async fn answer(&self, input: &Value, ctx: &ToolContext) -> Result<String, String> {
        let op = str_arg(input, "operation")?;
        let file = opt_str_arg(input, "file_path")?.map(|p| ctx.resolve(p));
        match (op, file) {
            ("workspace_symbols", file) => {
                let query = opt_str_arg(input, "query")?.unwrap_or("");
                let file = file.ok_or(
                    "workspace_symbols needs `file_path`: any file of the language to search",
                )?;
                let client = self.opened(&file).await?;
                let r = client
                    .request("workspace/symbol", json!({"query": query}))
                    .await?;
                Ok(symbols(&r, ctx, None))
            }
            ("diagnostics", None) => Ok(self.all_diagnostics(ctx)),
            (_, None) => Err(format!("`{op}` needs `file_path`")),
            ("diagnostics", Some(file)) => self.file_diagnostics(&file, ctx).await,
            ("document_symbols", Some(file)) => {
                let client = self.opened(&file).await?;
                let r = client
                    .request("textDocument/documentSymbol", doc(&file))
                    .await?;
                Ok(symbols(&r, ctx, Some(&file)))
            }
            ("definition" | "references" | "hover", Some(file)) => {
                let position = position(&file, input)?;
                let client = self.opened(&file).await?;
                let mut params = doc(&file);
                params["position"] = position;
                let method = match op {
                    "definition" => "textDocument/definition",
                    "references" => {
                        params["context"] = json!({"includeDeclaration": true});
                        "textDocument/references"
                    }
                    _ => "textDocument/hover",
                };
                let r = client.request(method, params).await?;
                Ok(if op == "hover" {
                    hover_text(&r)
                } else {
                    locations(&r, ctx)
                })
            }
            (other, _) => Err(format!(
                "`{other}` is not an operation; use definition, references, hover, \
                 document_symbols, workspace_symbols, diagnostics or rename"
            )),
        }
    }

    /// The file's server, holding the file as it is on disk.
    async fn opened(&self, file: &Path) -> Result<Arc<Client>, String> {
        let client = match self.manager.client_for(file, START_WAIT).await {
            Ok(Some(c)) => c,
            Ok(None) => {
                return Err(format!(
                    "no language server looks after {}; use grep instead",
                    file.display()
                ));
            }
            Err((server, why)) => return Err(format!("the language server {server}: {why}")),
        };
        let text = read_text(file)?;
        let (_, changed) = self.manager.docs.put(&client, file, &text).await?;
        if changed {
            // A file just opened may make the server load its project:
            // questions across files wait for that.
            let deadline = tokio::time::Instant::now() + START_WAIT;
            client.settle(SETTLE, deadline).await;
        }
        Ok(client)
    }

    async fn file_diagnostics(&self, file: &Path, ctx: &ToolContext) -> Result<String, String> {
        let client = self.opened(file).await?;
        let text = read_text(file)?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let _one = self.manager.docs.busy.lock().await;
        let d = self
            .manager
            .diagnostics(&client, file, &text, deadline, true)
            .await?;
        Ok(diagnostic_lines(&ctx.display_path(file), &d))
    }

    fn all_diagnostics(&self, ctx: &ToolContext) -> String {
        let mut out = String::new();
        for (path, d) in self.manager.published() {
            if !d.is_empty() {
                out.push_str(&diagnostic_lines(&ctx.display_path(&path), &d));
                out.push('\n');
            }
        }
        if out.is_empty() {
            "No diagnostics reported for the files the servers have seen.".into()
        } else {
            out
        }
    }
}

fn doc(file: &Path) -> Value {
    json!({"textDocument": {"uri": super::uri::from_path(file)}})
}

/// The position of `symbol` on 1-based `line` (its first character when
/// no symbol is given), in UTF-16 units.
fn position(file: &Path, input: &Value) -> Result<Value, String> {
    let line = opt_u64_arg(input, "line")?.ok_or("give `line` (1-based) and `symbol`")?;
    let text = read_text(file)?;
    let row = line.saturating_sub(1) as usize;
    let Some(content) = text.lines().nth(row) else {
        return Err(format!("{} has no line {line}", file.display()));
    };
    let at = match opt_str_arg(input, "symbol")? {
        Some(s) => content
            .find(s)
            .ok_or_else(|| format!("`{s}` is not on line {line}: {}", content.trim()))?,
        None => content.len() - content.trim_start().len(),
    };
    let character = content[..at].encode_utf16().count();
    Ok(json!({"line": row, "character": character}))
}

/// The text of `path` as the file tools read it: never through a link out
/// of its workspace, never blocking on a FIFO, at most 8 MiB.
pub(super) fn read_text(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    crate::tools::beneath::open(path)
        .and_then(|f| f.take(MAX_FILE).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A location a server answered with. Its line is shown only for a file in
/// the workspace: the server (running a repository's build scripts) must
/// not make cairn read `~/.ssh` for it.
fn place(ctx: &ToolContext, uri: &str, line: u64) -> String {
    let path = super::uri::to_path(uri).unwrap_or_else(|| PathBuf::from(uri));
    let text = Some(&path)
        .filter(|p| p.starts_with(&ctx.workspace))
        .and_then(|p| read_text(p).ok())
        .and_then(|t| t.lines().nth(line as usize).map(|l| l.trim().to_string()))
        .unwrap_or_default();
    format!(
        "{}:{}: {}",
        ctx.display_path(&path),
        line + 1,
        crate::text::fit(&text, 160)
    )
}

fn locations(r: &Value, ctx: &ToolContext) -> String {
    let items: Vec<&Value> = match r {
        Value::Array(a) => a.iter().collect(),
        Value::Null => Vec::new(),
        one => vec![one],
    };
    if items.is_empty() {
        return "The server found nothing there.".into();
    }
    let mut out: Vec<String> = items
        .iter()
        .take(MAX_ITEMS)
        .filter_map(|l| {
            let uri = l["uri"].as_str().or(l["targetUri"].as_str())?;
            let range = if l["range"].is_object() {
                &l["range"]
            } else {
                &l["targetSelectionRange"]
            };
            Some(place(
                ctx,
                uri,
                range["start"]["line"].as_u64().unwrap_or(0),
            ))
        })
        .collect();
    if items.len() > MAX_ITEMS {
        out.push(format!("… and {} more", items.len() - MAX_ITEMS));
    }
    out.join("\n")
}

fn hover_text(r: &Value) -> String {
    let c = &r["contents"];
    let text = match c {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .map(|v| v["value"].as_str().or(v.as_str()).unwrap_or("").to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Object(_) => c["value"].as_str().unwrap_or("").to_string(),
        _ => String::new(),
    };
    if text.trim().is_empty() {
        "The server has nothing to say about that symbol.".into()
    } else {
        text
    }
}

fn symbols(r: &Value, ctx: &ToolContext, file: Option<&Path>) -> String {
    let mut out = Vec::new();
    collect_symbols(r, ctx, file, 0, &mut out);
    if out.is_empty() {
        return "No symbols.".into();
    }
    let more = out.len().saturating_sub(MAX_ITEMS);
    out.truncate(MAX_ITEMS);
    if more > 0 {
        out.push(format!("… and {more} more"));
    }
    out.join("\n")
}

fn collect_symbols(
    r: &Value,
    ctx: &ToolContext,
    file: Option<&Path>,
    depth: usize,
    out: &mut Vec<String>,
) {
    for s in r.as_array().into_iter().flatten() {
        if out.len() > MAX_ITEMS * 2 {
            return;
        }
        let name = s["name"].as_str().unwrap_or("?");
        let kind = kind_name(s["kind"].as_u64().unwrap_or(0));
        let (uri, line) = if s["location"].is_object() {
            let l = &s["location"];
            (
                l["uri"].as_str().map(String::from),
                l["range"]["start"]["line"].as_u64(),
            )
        } else {
            (
                file.map(super::uri::from_path),
                s["range"]["start"]["line"].as_u64(),
            )
        };
        let at = match (uri, line) {
            (Some(u), Some(l)) => {
                let path = super::uri::to_path(&u).unwrap_or_default();
                format!("{}:{}", ctx.display_path(&path), l + 1)
            }
            _ => String::new(),
        };
        out.push(format!("{}{kind} {name}  {at}", "  ".repeat(depth)));
        collect_symbols(&s["children"], ctx, file, depth + 1, out);
    }
}

fn kind_name(kind: u64) -> &'static str {
    match kind {
        2 => "module",
        5 => "class",
        6 => "method",
        8 => "field",
        9 => "constructor",
        10 => "enum",
        11 => "interface",
        12 => "function",
        13 => "variable",
        14 => "constant",
        22 => "enum member",
        23 => "struct",
        26 => "type parameter",
        _ => "symbol",
    }
}

fn diagnostic_lines(path: &str, d: &[lsp_types::Diagnostic]) -> String {
    if d.is_empty() {
        return format!("{path}: no problems reported.");
    }
    let mut out = Vec::new();
    for x in d.iter().take(MAX_ITEMS) {
        let sev = match x.severity {
            Some(lsp_types::DiagnosticSeverity::WARNING) => "warning",
            Some(lsp_types::DiagnosticSeverity::INFORMATION) => "info",
            Some(lsp_types::DiagnosticSeverity::HINT) => "hint",
            _ => "error",
        };
        out.push(format!(
            "{path}:{}: {sev}: {}",
            x.range.start.line + 1,
            x.message.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    if d.len() > MAX_ITEMS {
        out.push(format!("… and {} more", d.len() - MAX_ITEMS));
    }
    out.join("\n")
}
