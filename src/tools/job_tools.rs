//! `job_output` and `job_kill`: following and stopping background commands.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::shell::MAX_OUTPUT_CHARS;
use super::{Tool, ToolContext, ToolOutput, str_arg};
use crate::text::truncate_middle;

pub struct JobOutputTool;
pub struct JobKillTool;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "job_id": {
                "type": "string",
                "description": "The id bash gave the background job, e.g. job-1."
            }
        },
        "required": ["job_id"],
        "additionalProperties": false
    })
}

/// The job a call names, or the answer that it names none.
fn find_job(
    input: &Value,
    ctx: &ToolContext,
) -> Result<(String, std::sync::Arc<super::jobs::Process>), ToolOutput> {
    let id = str_arg(input, "job_id").map_err(ToolOutput::error)?.trim();
    match ctx.session.jobs.get(id) {
        Some(job) => Ok((id.to_string(), job)),
        None => Err(unknown(ctx, id)),
    }
}

fn unknown(ctx: &ToolContext, id: &str) -> ToolOutput {
    let ids = ctx.session.jobs.ids();
    if ids.is_empty() {
        ToolOutput::error(format!("no job `{id}`; there are no background jobs"))
    } else {
        ToolOutput::error(format!(
            "no job `{id}`; the background jobs are {}",
            ids.join(", ")
        ))
    }
}

fn id_of(input: &Value) -> String {
    input
        .get("job_id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

#[async_trait]
impl Tool for JobOutputTool {
    fn name(&self) -> &str {
        "job_output"
    }
    fn description(&self) -> &str {
        include_str!("../../assets/tools/job_output.md")
    }
    fn schema(&self) -> Value {
        schema()
    }
    fn read_only(&self) -> bool {
        true
    }
    fn summary(&self, input: &Value) -> String {
        format!("job_output {}", id_of(input))
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let (id, job) = match find_job(&input, ctx) {
            Ok(found) => found,
            Err(answer) => return answer,
        };
        let id = id.as_str();
        // Read the status first: output read after it is then complete
        // whenever the status says the job finished.
        let status = match job.exit_code() {
            None => "still running".to_string(),
            Some(code) => format!("finished with exit code {code}"),
        };
        let output = job.new_output();
        let output = truncate_middle(output.trim_end(), MAX_OUTPUT_CHARS);
        let body = if output.is_empty() {
            "(no new output)".to_string()
        } else {
            output
        };
        ToolOutput::text(format!("{id} ({}): {status}\n{body}", job.command))
    }
}

#[async_trait]
impl Tool for JobKillTool {
    fn name(&self) -> &str {
        "job_kill"
    }
    fn description(&self) -> &str {
        include_str!("../../assets/tools/job_kill.md")
    }
    fn schema(&self) -> Value {
        schema()
    }
    fn read_only(&self) -> bool {
        false
    }
    /// Nothing to stop (the job ended, or there is no such job) is
    /// nothing to ask about.
    fn read_only_call(&self, input: &Value, ctx: &ToolContext) -> bool {
        find_job(input, ctx).map_or(true, |(_, job)| job.exit_code().is_some())
    }
    fn summary(&self, input: &Value) -> String {
        format!("job_kill {}", id_of(input))
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let (id, job) = match find_job(&input, ctx) {
            Ok(found) => found,
            Err(answer) => return answer,
        };
        let id = id.as_str();
        if let Some(code) = job.exit_code() {
            return ToolOutput::text(format!("{id} had already finished with exit code {code}"));
        }
        job.kill().await;
        ToolOutput::text(format!(
            "{id} ({}) was stopped with everything it started",
            job.command
        ))
    }
}
