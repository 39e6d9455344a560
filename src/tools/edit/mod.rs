//! `edit` and `multiedit`: exact string replacement in a file the model has
//! viewed, written atomically with its line endings and BOM kept.

use std::path::PathBuf;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::edit_core::{EditSpec, Plan, plan_edits};
use super::walk::blocking;
use super::{Preview, Tool, ToolContext, ToolOutput, opt_bool_arg, str_arg};

pub struct EditTool;
pub struct MultiEditTool;

fn file_path(input: &Value) -> Result<&str, String> {
    let p = str_arg(input, "file_path")?;
    if p.trim().is_empty() {
        return Err("`file_path` is empty; give the path of the file to change".into());
    }
    Ok(p)
}

fn spec(v: &Value) -> Result<EditSpec, String> {
    Ok(EditSpec {
        old_string: str_arg(v, "old_string")?.to_string(),
        new_string: str_arg(v, "new_string")?.to_string(),
        replace_all: opt_bool_arg(v, "replace_all")?.unwrap_or(false),
    })
}

fn edit_specs(input: &Value, multi: bool) -> Result<Vec<EditSpec>, String> {
    if !multi {
        return Ok(vec![spec(input)?]);
    }
    let list = match input.get("edits") {
        Some(Value::Array(a)) => a,
        Some(_) => return Err("`edits` must be an array of edits".into()),
        None => return Err("missing required parameter `edits`".into()),
    };
    if list.is_empty() {
        return Err("`edits` is empty; give at least one edit".into());
    }
    list.iter()
        .enumerate()
        .map(|(i, v)| spec(v).map_err(|e| format!("edit {}: {e}", i + 1)))
        .collect()
}

async fn plan(input: &Value, ctx: &ToolContext, multi: bool) -> Result<Plan, String> {
    let path = ctx.resolve(file_path(input)?);
    let edits = edit_specs(input, multi)?;
    let ctx = ctx.clone();
    blocking(move || plan_edits(&ctx, &path, &edits)).await?
}

async fn run_edit(input: Value, ctx: &ToolContext, multi: bool) -> ToolOutput {
    let plan = match plan(&input, ctx, multi).await {
        Ok(p) => p,
        Err(e) => return ToolOutput::error(e),
    };
    let c = ctx.clone();
    blocking(move || super::hunks::write_reviewed(plan, &c, "Edited"))
        .await
        .unwrap_or_else(ToolOutput::error)
}

fn resolved(input: &Value, ctx: &ToolContext) -> Vec<PathBuf> {
    file_path(input)
        .map(|p| vec![ctx.resolve(p)])
        .unwrap_or_default()
}

fn edit_properties() -> Value {
    json!({
        "old_string": {
            "type": "string",
            "description": "The exact text to replace, including indentation and enough surrounding lines to be unique."
        },
        "new_string": {
            "type": "string",
            "description": "The text to put in its place (must differ from old_string)."
        },
        "replace_all": {
            "type": "boolean",
            "description": "Replace every occurrence instead of requiring exactly one. Default false."
        }
    })
}

fn path_property() -> Value {
    json!({
        "type": "string",
        "description": "Path of the file to change, absolute or relative to the current directory."
    })
}

#[async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }
    fn description(&self) -> &str {
        include_str!("../../../assets/tools/edit.md")
    }
    fn schema(&self) -> Value {
        let mut props = edit_properties();
        props["file_path"] = path_property();
        json!({
            "type": "object",
            "properties": props,
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }
    fn read_only(&self) -> bool {
        false
    }
    fn summary(&self, input: &Value) -> String {
        format!("edit {}", file_path(input).unwrap_or(""))
    }
    fn paths(&self, input: &Value, ctx: &ToolContext) -> Vec<PathBuf> {
        resolved(input, ctx)
    }
    async fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        plan(input, ctx, false).await.map(|p| Some(p.preview()))
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        run_edit(input, ctx, false).await
    }
}

#[async_trait]
impl Tool for MultiEditTool {
    fn name(&self) -> &str {
        "multiedit"
    }
    fn description(&self) -> &str {
        include_str!("../../../assets/tools/multiedit.md")
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": path_property(),
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "description": "Replacements applied in order, each to the result of the one before. If any fails, none is applied.",
                    "items": {
                        "type": "object",
                        "properties": edit_properties(),
                        "required": ["old_string", "new_string"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["file_path", "edits"],
            "additionalProperties": false
        })
    }
    fn read_only(&self) -> bool {
        false
    }
    fn summary(&self, input: &Value) -> String {
        let n = input
            .get("edits")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        format!("multiedit {} ({n} edits)", file_path(input).unwrap_or(""))
    }
    fn paths(&self, input: &Value, ctx: &ToolContext) -> Vec<PathBuf> {
        resolved(input, ctx)
    }
    async fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        plan(input, ctx, true).await.map(|p| Some(p.preview()))
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        run_edit(input, ctx, true).await
    }
}

#[cfg(test)]
mod tests;
