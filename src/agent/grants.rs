//! What a skill's or a custom command's `allowed-tools` grants: the
//! tools it names run without the question the mode would put, for the
//! rest of the turn that loaded it — as Claude Code lets a skill's tools
//! run while the skill is active. A grant is an allow rule for the turn:
//! deny rules, the security inspector, what no rule lifts (outside the
//! workspace, a force push) and the sandbox still hold. A project's skill
//! or command grants only while the project is trusted with the files as
//! they were when the person trusted them (`extensions::project_held`);
//! one added or changed since grants nothing until the next start asks.

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
                "{what} asks to run {} without asking, but this project's skills and commands \
                 are not trusted as they are now, so cairn asks as its mode says (start cairn \
                 here again to be asked about them)",
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

/// The model loaded the skill `name` with the `skill` tool: what its
/// `allowed-tools` names is granted.
pub(crate) fn skill_loaded(ctx: &TurnContext, name: &str) {
    let Some(roots) = &ctx.extensions else {
        return;
    };
    let (skills, _) = crate::extensions::skills::discover(roots, &ctx.cwd());
    if let Some(s) = skills.iter().find(|s| s.name == name) {
        let file = s.dir.join("SKILL.md");
        let g = Granting {
            kind: "skill",
            name,
            scope: s.scope,
            file: &file,
            tools: &s.allowed_tools,
        };
        grant(ctx, &format!("The skill `{name}`"), g);
    }
}

/// Whether the project is trusted with its skills and commands as they
/// are now, this one among them: the fingerprint of what waits for trust
/// is the one the person trusted, and holds this file as it is now (a
/// skill in a subfolder, which the trust question does not list, is not).
fn trust_holds(ctx: &TurnContext, g: &Granting<'_>) -> bool {
    let (Some(trusted), Some(roots)) = (&ctx.opts.trusted_held, &ctx.extensions) else {
        return false;
    };
    let scope = crate::extensions::commands::Scope::Project;
    let Ok(text) = crate::extensions::read_definition(g.file, scope, &roots.workspace, 256 * 1024)
    else {
        return false;
    };
    let file = g.file.strip_prefix(&roots.workspace).unwrap_or(g.file);
    let line = crate::extensions::granting_line(g.kind, g.name, file, &text);
    trusted.contains(&line) && crate::extensions::project_held(roots).1 == *trusted
}
