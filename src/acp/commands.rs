//! The custom commands and skills a prompt may name (`/name args`), as
//! ACP's `available_commands_update` lists them: when a session opens,
//! and again after a turn when they changed.

use agent_client_protocol::v1::schema as acp;

/// The commands and skills under `roots`, as read now from `cwd`.
pub(super) fn at(
    roots: &crate::extensions::commands::Roots,
    cwd: &std::path::Path,
) -> acp::SessionUpdate {
    let catalogue = crate::extensions::invocable(roots, cwd);
    let list = catalogue
        .commands
        .iter()
        .map(|c| {
            let mut cmd = acp::AvailableCommand::new(c.name.clone(), c.description.clone());
            if !c.argument_hint.is_empty() {
                cmd = cmd.input(acp::AvailableCommandInput::Unstructured(
                    acp::UnstructuredCommandInput::new(c.argument_hint.clone()),
                ));
            }
            cmd
        })
        .collect();
    acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(list))
}
