//! The layers of one simple command: the command itself, what runs under
//! a privilege or multi-call program, and every command a program runs
//! from its arguments. Each inspector judges every layer.

use super::wrappers::{basename, inner_commands, wrapped_command};

/// Programs that run a command with other privileges.
pub(super) const PRIVILEGE: &[&str] = &["sudo", "su", "doas", "pkexec", "run0"];
/// Programs that are many commands, chosen by their first argument.
pub(super) const MULTI_CALL: &[&str] = &["busybox", "toybox"];

/// The layers of a command: `env sudo rm -rf /` → [`env …`, `sudo …`, `rm …`],
/// and every command a program runs from its arguments (`find -exec`,
/// `setsid`, `flock`, … see [`inner_commands`]). Commands are recognised
/// by their base name (`/usr/bin/env`).
pub(super) fn layers(words: &[String]) -> Vec<&[String]> {
    let mut out = vec![words];
    let mut next = 0;
    while next < out.len() && out.len() < MAX_LAYERS {
        let current = out[next];
        next += 1;
        let Some((name, args)) = current.split_first() else {
            continue;
        };
        let name = basename(name);
        let mut inner: Vec<&[String]> = Vec::new();
        if PRIVILEGE.contains(&name) {
            // `sudo -u x cmd`: skip options so the command under it is inspected too.
            let start = args
                .iter()
                .position(|a| !a.starts_with('-'))
                .unwrap_or(args.len());
            inner.push(&args[start..]);
        } else if MULTI_CALL.contains(&name) {
            // `busybox sh`: the applet is the command.
            if args.first().is_some_and(|a| !a.starts_with('-')) {
                inner.push(args);
            }
        } else if let Some(wrapped) = wrapped_command(name, args) {
            inner.push(wrapped);
        }
        inner.extend(inner_commands(name, args));
        for layer in inner {
            if !layer.is_empty() && !out.contains(&layer) && out.len() < MAX_LAYERS {
                out.push(layer);
            }
        }
    }
    out
}

/// Layers looked at in one simple command.
const MAX_LAYERS: usize = 32;
