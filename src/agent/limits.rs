//! Learning a model's window from its server, once per model, when the
//! catalogue does not know it (a local llama.cpp, vLLM, LM Studio, Ollama
//! or LiteLLM model), so compaction works to the real size.

use super::turn_context::TurnContext;
use super::{AgentOptions, Shared, fixed};
use crate::llm::{ModelCatalog, Provider};
use crate::protocol::{AgentEvent, NoticeLevel};

/// Asks the provider for the limits of the current model when nothing else
/// states them, and puts them into `opts`; says once what was found. True
/// when the window was learned now.
pub(super) async fn learn(
    provider: &dyn Provider,
    opts: &mut AgentOptions,
    shared: &Shared,
) -> bool {
    let catalog = ModelCatalog::global();
    if !catalog.wants_server_limits(&opts.model) {
        return false;
    }
    let limits = provider.limits(&opts.model).await;
    ModelCatalog::install_learned(&opts.model, limits.clone());
    let Some(limits) = limits else { return false };
    if let Some(w) = &limits.warning {
        shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Warning,
            text: format!("`{}`: {w}", opts.model),
        });
    }
    opts.model_info = catalog.lookup(&opts.model);
    let assumed = limits.source.starts_with("assumed");
    let text = if assumed {
        format!(
            "The server does not report the context window of `{}`; assuming {} tokens. Set `[models.\"{}\"] context_window` if it is larger.",
            opts.model, limits.context_window, opts.model
        )
    } else {
        format!(
            "`{}` has a context window of {} tokens (from {}).",
            opts.model, limits.context_window, limits.source
        )
    };
    shared.emit(AgentEvent::Notice {
        level: if assumed {
            NoticeLevel::Warning
        } else {
            NoticeLevel::Info
        },
        text,
    });
    true
}

/// Says what cairn's own part of every request costs (system prompt and
/// tool descriptions) against a window just learned, so a person with a
/// small local model knows what is left for the conversation.
pub(super) fn report_overhead(ctx: &TurnContext, learned: bool) {
    if !learned {
        return;
    }
    let overhead = fixed::fixed_tokens(ctx, &fixed::build_system_prompt(ctx));
    let window = ctx.opts.model_info.context_window.max(1);
    let compact = if fixed::is_small_window(ctx) {
        " (the short prompt and compact tool descriptions of a small window)"
    } else {
        ""
    };
    ctx.shared.emit(AgentEvent::Notice {
        level: NoticeLevel::Info,
        text: format!(
            "cairn's own part of each request{compact}: about {overhead} tokens, {}% of the window.",
            overhead * 100 / window
        ),
    });
}

/// Tells the front end what the next request of a loaded conversation will
/// cost, the fixed part included (its own estimate knows only the
/// messages).
pub(super) fn report_context(
    ctx: &TurnContext,
    messages: &[crate::conversation::Message],
    cost: Option<f64>,
) {
    let overhead = fixed::fixed_tokens(ctx, &fixed::build_system_prompt(ctx));
    ctx.shared.emit(AgentEvent::Usage {
        usage: crate::llm::Usage::default(),
        context_tokens: overhead + crate::context::estimate_messages(messages),
        context_window: ctx.opts.model_info.context_window,
        cost,
    });
}
