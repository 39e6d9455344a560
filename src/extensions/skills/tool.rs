//! The `skill` tool: the model loads one skill's instructions by name.

use std::path::PathBuf;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::super::commands::Roots;
use crate::tools::{Tool, ToolContext, ToolOutput};

pub struct SkillTool {
    roots: Roots,
    cwd: PathBuf,
}

impl SkillTool {
    pub fn new(roots: Roots, cwd: PathBuf) -> SkillTool {
        SkillTool { roots, cwd }
    }
}

#[async_trait]
impl Tool for SkillTool {
    fn name(&self) -> &str {
        "skill"
    }

    fn description(&self) -> &str {
        include_str!("../../../assets/tools/skill.md")
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The skill's name, as the system prompt lists it."
                }
            },
            "required": ["name"]
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    fn summary(&self, input: &Value) -> String {
        format!("skill {}", input["name"].as_str().unwrap_or(""))
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let Some(name) = input["name"].as_str() else {
            return ToolOutput::error("`name` is missing: give the skill's name as listed.");
        };
        let (skills, _) = super::discover(&self.roots, &self.cwd);
        match skills.iter().find(|s| s.name == name && s.model_invocable) {
            Some(s) => {
                // What it grants is judged on exactly this read.
                ctx.session.skill_loaded(
                    &ctx.call_id,
                    crate::tools::state::LoadedSkill {
                        name: s.name.clone(),
                        file: s.dir.join("SKILL.md"),
                        project: s.scope == super::super::commands::Scope::Project,
                        allowed_tools: s.allowed_tools.clone(),
                        text_hash: s.text_hash.clone(),
                    },
                );
                ToolOutput::text(format!(
                    "Skill `{}` (folder: {}):\n\n{}",
                    s.name,
                    s.dir.display(),
                    s.body.trim()
                ))
            }
            None => {
                let names: Vec<&str> = skills
                    .iter()
                    .filter(|s| s.model_invocable)
                    .map(|s| s.name.as_str())
                    .collect();
                ToolOutput::error(format!(
                    "There is no skill named `{name}`. Installed: {}.",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ))
            }
        }
    }
}
