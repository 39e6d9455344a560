//! What a skill's or a custom command's `allowed-tools` grants: the
//! tools it names run without the question the mode would put, for the
//! rest of the turn that loaded it — as Claude Code lets a skill's tools
//! run while the skill is active. A grant is an allow rule for the turn:
//! deny rules, the security inspector, what no rule lifts (outside the
//! workspace, a force push) and the sandbox still hold. A project's skill
//! or command grants only when it is, with the very text that was loaded,
//! among those the person trusted (`extensions::granting_entries`, listed
//! in the trust question); the skill is the one the `skill` call read
//! (`tools::state::LoadedSkill`), never a second lookup by name.

use super::turn_context::TurnContext;
use crate::extensions::commands::Scope;
use crate::protocol::{AgentEvent, NoticeLevel};
use crate::tools::state::lock;

/// A skill or command that may grant tools.
pub(crate) struct Granting<'a> {
    /// `skill` or `command`, as the trust fingerprint names it.
    pub kind: &'a str,
    pub name: &'a str,
    pub scope: Scope,
    /// Its file (`SKILL.md`, the command's markdown).
    pub file: &'a std::path::Path,
    /// The hash of its text as it was read for this use.
    pub hash: &'a str,
    pub tools: &'a [String],
}

/// Grants what `g` names for the rest of the turn, for `what` (`The skill
/// `pdf``, `/git:commit`), and says so.
pub(crate) fn grant(ctx: &TurnContext, what: &str, g: Granting<'_>) {
    let tools = g.tools;
    if tools.is_empty() {
        return;
    }
    let say = |level, text: String| ctx.shared.emit(AgentEvent::Notice { level, text });
    if g.scope == Scope::Project && !trust_holds(ctx, &g) {
        say(
            NoticeLevel::Warning,
            format!(
                "{what} asks to run {} without asking, but it is not among the skills and \
                 commands you trusted in this project as they were then (it is new, changed, \
                 in a subfolder, or the project is not trusted), so cairn asks as its mode \
                 says; the next start asks you about it",
                tools.join(", ")
            ),
        );
        return;
    }
    let mut rules = Vec::new();
    let mut unknown = Vec::new();
    for entry in tools {
        match crate::extensions::claude_permissions::cairn_rule(entry) {
            Some(r) => rules.push(r),
            None => unknown.push(entry.as_str()),
        }
    }
    if !unknown.is_empty() {
        say(
            NoticeLevel::Info,
            format!(
                "{what}: cairn has no tool for {} in its allowed-tools",
                unknown.join(", ")
            ),
        );
    }
    if rules.is_empty() {
        return;
    }
    let granted = lock(&ctx.shared.gate).grant_for_turn(&rules);
    if granted.is_empty() {
        return;
    }
    say(
        NoticeLevel::Info,
        format!("{what} allows {} for this turn", granted.join(", ")),
    );
}

/// The `skill` call `call_id` loaded a skill (`tools::state::
/// LoadedSkill`, exactly as the tool read it): what its `allowed-tools`
/// names is granted.
pub(crate) fn skill_loaded(ctx: &TurnContext, call_id: &str) {
    let Some(s) = ctx.session.take_loaded_skill(call_id) else {
        return;
    };
    let g = Granting {
        kind: "skill",
        name: &s.name,
        scope: if s.project {
            Scope::Project
        } else {
            Scope::User
        },
        file: &s.file,
        hash: &s.text_hash,
        tools: &s.allowed_tools,
    };
    grant(ctx, &format!("The skill `{}`", s.name), g);
}

/// Whether the project is trusted with this skill or command as it was
/// read: it is among the granting skills and commands the trust covered
/// (at the project's root; the trust question lists each), with the same
/// text.
fn trust_holds(ctx: &TurnContext, g: &Granting<'_>) -> bool {
    let Some(trusted) = &ctx.opts.trusted_grants else {
        return false;
    };
    let file = g.file.strip_prefix(&ctx.opts.workspace).unwrap_or(g.file);
    let entry = crate::extensions::GrantEntry {
        kind: g.kind.into(),
        name: g.name.into(),
        file: file.to_path_buf(),
        hash: g.hash.into(),
    };
    trusted.contains(&entry)
}
