//! What a prompt may name (`/name args`) — cairn's own commands that run
//! in an editor, then the custom commands and skills — as ACP's
//! `available_commands_update` lists them: when a session opens, and
//! again after a turn when they changed. A custom command named as a
//! built-in is hidden, as in the interface.

use agent_client_protocol::v1::schema as acp;

/// The commands and skills under `roots`, as read now from `cwd`.
pub(super) fn at(
    roots: &crate::extensions::commands::Roots,
    cwd: &std::path::Path,
) -> acp::SessionUpdate {
    let catalogue = crate::extensions::invocable(roots, cwd);
    let own = super::builtins::OFFERED
        .iter()
        .filter_map(|name| crate::protocol::slash::named(name))
        .map(|c| entry(c.name, c.description, c.args));
    let custom = catalogue
        .commands
        .iter()
        .filter(|c| !super::builtins::OFFERED.contains(&c.name.as_str()))
        .map(|c| entry(&c.name, &c.description, &c.argument_hint));
    let list = own.chain(custom).collect();
    acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(list))
}

fn entry(name: &str, description: &str, hint: &str) -> acp::AvailableCommand {
    let cmd = acp::AvailableCommand::new(name.to_string(), description.to_string());
    if hint.is_empty() {
        return cmd;
    }
    cmd.input(acp::AvailableCommandInput::Unstructured(
        acp::UnstructuredCommandInput::new(hint.to_string()),
    ))
}
