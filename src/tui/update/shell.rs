//! `!cmd` at the prompt runs the person's own command (in the sandbox,
//! through the gate) and attaches its output to the next prompt; `!`
//! alone switches a shell-input mode on and off.

use crate::protocol::AgentCommand;
use crate::tui::cmd::Cmd;
use crate::tui::model::Model;

/// The effects of sending the prompt when it is a command line; `None`
/// when it is a prompt for the model.
pub fn shell_line(model: &mut Model) -> Option<Vec<Cmd>> {
    let typed = model.input.text();
    let trimmed = typed.trim();
    if trimmed == "!" {
        model.input.take();
        model.shell_mode = !model.shell_mode;
        model.flash(if model.shell_mode {
            "Shell mode: each line runs in the sandbox (! alone leaves)"
        } else {
            "Shell mode off"
        });
        return Some(Vec::new());
    }
    let command = match trimmed.strip_prefix('!') {
        Some(rest) => rest.trim(),
        None if model.shell_mode => trimmed,
        None => return None,
    };
    if model.turn_running {
        model.flash("A command of your own waits until the agent is idle (Esc stops it)");
        return Some(Vec::new());
    }
    let command = command.to_string();
    model.input.take();
    model.transcript.to_bottom();
    Some(vec![
        Cmd::Send(AgentCommand::RunShell {
            command: command.clone(),
        }),
        Cmd::AppendHistory(format!("!{command}")),
    ])
}
