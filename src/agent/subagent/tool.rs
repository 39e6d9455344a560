//! The `agent` tool the model calls to delegate (the field names of Claude
//! Code's Task tool, which models know).

use async_trait::async_trait;
use serde_json::{Value, json};

use super::Host;
use crate::tools::{Tool, ToolContext, ToolOutput};

const DESCRIPTION: &str = include_str!("../../../assets/tools/agent.md");

pub(crate) struct AgentTool {
    host: Host,
    /// The description with the list of agents.
    description: String,
}

impl AgentTool {
    pub fn new(host: Host) -> AgentTool {
        let description = format!(
            "{}\n{}",
            DESCRIPTION.trim_end(),
            crate::extensions::agents::listing(&host.catalogue)
        );
        AgentTool { host, description }
    }
}

#[async_trait]
impl Tool for AgentTool {
    fn name(&self) -> &str {
        "agent"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn schema(&self) -> Value {
        let names: Vec<&str> = self
            .host
            .catalogue
            .agents
            .iter()
            .map(|a| a.name.as_str())
            .collect();
        json!({
            "type": "object",
            "properties": {
                "subagent_type": {
                    "type": "string",
                    "description": format!("Which agent: {}", names.join(", ")),
                },
                "description": {
                    "type": "string",
                    "description": "The task in 3-5 words, shown to the person",
                },
                "prompt": {
                    "type": "string",
                    "description": "The whole task for the sub-agent, which sees nothing else",
                },
            },
            "required": ["subagent_type", "description", "prompt"],
            "additionalProperties": false,
        })
    }

    /// Delegating changes nothing by itself: each of the sub-agent's calls
    /// is judged on its own.
    fn read_only(&self) -> bool {
        true
    }

    fn summary(&self, input: &Value) -> String {
        let get = |k: &str| input.get(k).and_then(|v| v.as_str()).unwrap_or("");
        let agent = match get("subagent_type") {
            "" => "general",
            a => a,
        };
        format!(
            "{agent}: {}",
            crate::text::truncate_chars(get("description"), 80)
        )
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        super::delegate(&self.host, &input, ctx).await
    }
}
