//! Variables that lead a command out of the sandbox: the ones that locate
//! a socket, a server or an agent of the person's session (tmux, ssh-agent,
//! D-Bus, X11, Wayland, docker, editors, terminals). They are withheld
//! from every sandboxed command — by pattern, to close the class — unless
//! their value names a socket `[sandbox] unix_sockets` lets through.

use std::ffi::OsStr;
use std::path::PathBuf;

const EXACT: &[&str] = &[
    "STY",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "PODMAN_HOST",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "SESSION_MANAGER",
    "PULSE_SERVER",
    "KRB5CCNAME",
    "SWAYSOCK",
    "I3SOCK",
    "HYPRLAND_INSTANCE_SIGNATURE",
    "GNOME_KEYRING_CONTROL",
];

const PREFIXES: &[&str] = &[
    "TMUX",
    "ZELLIJ",
    "DBUS_",
    "VSCODE_IPC",
    "VSCODE_GIT_IPC",
    "KITTY_",
    "WEZTERM_",
    "ALACRITTY_SOCKET",
    "JUPYTER_",
];

const PARTS: &[&str] = &["_SOCK", "SOCKET", "_IPC_", "LISTEN_ON", "BUS_ADDRESS"];

/// Whether a variable named `name` locates something outside the sandbox.
pub fn locates_socket(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    EXACT.contains(&n.as_str())
        || PREFIXES.iter().any(|p| n.starts_with(p))
        || PARTS.iter().any(|p| n.contains(p))
        || n.ends_with("_IPC")
}

/// The variables of cairn's environment a sandboxed command must not get.
pub fn withheld(allowed_sockets: &[PathBuf]) -> Vec<std::ffi::OsString> {
    std::env::vars_os()
        .filter(|(k, v)| locates_socket(&k.to_string_lossy()) && !names_allowed(v, allowed_sockets))
        .map(|(k, _)| k)
        .collect()
}

fn names_allowed(value: &OsStr, allowed: &[PathBuf]) -> bool {
    !value.is_empty() && allowed.iter().any(|a| a.as_os_str() == value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_locating_names_are_caught_by_pattern() {
        for name in [
            "TMUX",
            "TMUX_PANE",
            "STY",
            "SSH_AUTH_SOCK",
            "GPG_AGENT_INFO",
            "DBUS_SESSION_BUS_ADDRESS",
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "XAUTHORITY",
            "DOCKER_HOST",
            "NVIM",
            "VSCODE_IPC_HOOK_CLI",
            "KITTY_LISTEN_ON",
            "WEZTERM_UNIX_SOCKET",
            "MY_AGENT_SOCKET_PATH",
            "ZELLIJ_SESSION_NAME",
            "XDG_RUNTIME_DIR",
            "OTHER_APP_SOCK",
        ] {
            assert!(locates_socket(name), "{name}");
        }
        for name in ["PATH", "HOME", "TERM", "LANG", "CARGO_HOME", "SHELL", "PWD"] {
            assert!(!locates_socket(name), "{name}");
        }
    }

    #[test]
    fn a_socket_the_person_allowed_keeps_its_variable() {
        let allowed = [PathBuf::from("/run/agent.sock")];
        assert!(names_allowed(OsStr::new("/run/agent.sock"), &allowed));
        assert!(!names_allowed(OsStr::new("/run/other.sock"), &allowed));
        assert!(!names_allowed(OsStr::new(""), &allowed));
    }
}
