//! What every request carries before the conversation: the system prompt
//! and the tool specifications, their cost in tokens, and their short forms
//! for a small window.

use super::turn_context::TurnContext;
use super::{instructions, prompt};
use crate::context::estimate_tokens;
use crate::permission::Mode;
use crate::tools::state::lock;

pub(crate) fn build_system_prompt(ctx: &TurnContext) -> String {
    let root = &ctx.opts.workspace;
    let cwd = &ctx.opts.cwd;
    let env = prompt::Environment::gather(cwd, root, &ctx.shared.sandbox);
    let files = instructions::discover(
        ctx.opts.global_config_dir.as_deref(),
        root,
        cwd,
        ctx.opts.instructions_max_bytes,
    );
    let mut text = if let Some(sub) = &ctx.sub {
        return prompt::system_prompt_from(&sub.prompt, &env, &files);
    } else if is_small_window(ctx) {
        prompt::system_prompt_from(super::small_window::SYSTEM_SMALL, &env, &files)
    } else {
        prompt::system_prompt(&env, &files)
    };
    if let Some(roots) = &ctx.extensions {
        let (skills, _) = crate::extensions::skills::discover(roots, &ctx.cwd());
        let section = crate::extensions::skills::prompt_section(
            &skills,
            crate::extensions::skills::PROMPT_CAP,
        );
        if !section.is_empty() {
            text.push_str("\n\n");
            text.push_str(&section);
        }
    }
    text
}

/// Whether the model's window is small enough for the short prompt and the
/// compact tool descriptions.
pub(crate) fn is_small_window(ctx: &TurnContext) -> bool {
    ctx.opts.model_info.context_window < ctx.opts.small_window
}

/// The tool specifications a request offers: none in chat mode, compact
/// ones for a small window.
pub(crate) fn offered_specs(ctx: &TurnContext) -> Vec<crate::llm::ToolSpec> {
    let mode = lock(&ctx.shared.gate).mode();
    if mode == Mode::Chat {
        return Vec::new();
    }
    let mut specs = ctx.tools().specs();
    if mode != Mode::Plan {
        specs.retain(|s| s.name != "exit_plan_mode");
    }
    if is_small_window(ctx) {
        super::small_window::compact_specs(specs)
    } else {
        specs
    }
}

/// What every request costs before the conversation: the system prompt and
/// the specifications of the tools it offers.
pub(crate) fn fixed_tokens(ctx: &TurnContext, system: &str) -> u64 {
    let tools: u64 = offered_specs(ctx).iter().map(spec_tokens).sum();
    estimate_tokens(system) + tools
}

/// The tokens one tool specification costs in a request.
pub(crate) fn spec_tokens(spec: &crate::llm::ToolSpec) -> u64 {
    estimate_tokens(&spec.name)
        + estimate_tokens(&spec.description)
        + estimate_tokens(&spec.input_schema.to_string())
        + 8
}
