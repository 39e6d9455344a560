//! The classes of escape the sandbox closes, and whether this machine
//! holds each. Smart mode trusts the sandbox only when every class holds
//! ([`whole`]); otherwise the gate asks as it would without one.

use super::policy::Layer;
use super::support::Support;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Writes outside the workspace, reads of denied paths.
    Files,
    /// The home directory: only the allow-list is readable.
    Home,
    /// Unix sockets and the variables that locate them.
    Sockets,
    /// The person's terminal: no controlling terminal, no `TIOCSTI`.
    Terminal,
    /// Every process dies with its call and with cairn, and reaches no
    /// process outside (signals, `prlimit`, priorities, affinity).
    Processes,
    /// Build caches are private, not the person's.
    Caches,
    /// `.git/config`, `.git/hooks`, `.git/info`, `.cairn` are read-only.
    RepoConfig,
    /// The network is off unless granted.
    Network,
}

impl Class {
    pub const ALL: [Class; 8] = [
        Class::Files,
        Class::Home,
        Class::Sockets,
        Class::Terminal,
        Class::Processes,
        Class::Caches,
        Class::RepoConfig,
        Class::Network,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Files => "files",
            Class::Home => "home",
            Class::Sockets => "sockets",
            Class::Terminal => "terminal",
            Class::Processes => "processes",
            Class::Caches => "caches",
            Class::RepoConfig => "repo config",
            Class::Network => "network",
        }
    }
}

/// One class on this machine: held or not, and how or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    pub class: Class,
    pub held: bool,
    pub how: String,
}

/// What a layer holds with this kernel. `layer` is `None` when nothing
/// can be enforced; `sockets_named`: `[sandbox] unix_sockets` opens some.
pub fn assess(layer: Option<Layer>, support: Support, sockets_named: bool) -> Vec<Holding> {
    Class::ALL
        .iter()
        .map(|&class| {
            let (held, how) = match layer {
                None => (false, "nothing enforces it on this system".to_string()),
                Some(Layer::Namespace) => namespace(class, support, sockets_named),
                Some(Layer::Kernel) => kernel(class, support, sockets_named),
            };
            Holding { class, held, how }
        })
        .collect()
}

/// Every class holds (the network class may be open on purpose).
pub fn whole(holdings: &[Holding]) -> bool {
    holdings.iter().all(|h| h.held)
}

fn sockets(support: Support, sockets_named: bool, extra: &str) -> (bool, String) {
    match (support.seccomp, sockets_named) {
        (true, false) => (
            true,
            format!("seccomp refuses AF_UNIX sockets{extra}; socket variables withheld"),
        ),
        (true, true) => (
            false,
            "[sandbox] unix_sockets opens AF_UNIX: the named sockets, and any other socket \
             a command can find"
                .into(),
        ),
        (false, _) => (false, "no seccomp: Unix sockets are open".into()),
    }
}

fn namespace(class: Class, support: Support, sockets_named: bool) -> (bool, String) {
    let text = |s: &str| (true, s.to_string());
    match class {
        Class::Files => text("bubblewrap: the system read-only, writes only in the workspace"),
        Class::Home => text("bubblewrap: home is an empty tmpfs holding the allow-list"),
        Class::Sockets => sockets(support, sockets_named, ", /run/user and /tmp are private"),
        Class::Terminal => text("bubblewrap: a new session, a private /dev; seccomp: no TIOCSTI"),
        Class::Processes if support.seccomp => text(
            "bubblewrap: a PID namespace that dies with the call and with cairn; \
             seccomp: no prlimit/renice/taskset of others",
        ),
        Class::Processes => (false, "no seccomp: prlimit/renice/taskset are open".into()),
        Class::Caches => text("private per project in cairn's cache area"),
        Class::RepoConfig => text(
            "bubblewrap: bound read-only (by descriptor); what a bind cannot stop (a new \
             .git/commondir, a repository put in the index as a submodule, new .claude/ \
             settings) is moved away after each tool call",
        ),
        Class::Network => text("bubblewrap: a network namespace without interfaces"),
    }
}

fn kernel(class: Class, support: Support, sockets_named: bool) -> (bool, String) {
    let abi = support.landlock_abi;
    let landlock = abi > 0;
    let pair = |held: bool, yes: &str, no: &str| (held, if held { yes } else { no }.to_string());
    match class {
        Class::Files => pair(
            abi >= 3,
            "Landlock",
            "Landlock ABI < 3 (or none): truncation or writes are not confined",
        ),
        Class::Home => pair(landlock, "Landlock: only the allow-list", "no Landlock"),
        Class::Sockets if abi >= 6 || !sockets_named => sockets(support, sockets_named, ""),
        Class::Sockets => (
            false,
            "abstract Unix sockets are not scoped (ABI < 6)".into(),
        ),
        Class::Terminal => pair(
            landlock && support.seccomp,
            "the terminal is given up, /dev/tty and /dev/pts are out of reach, no TIOCSTI",
            "needs Landlock and seccomp",
        ),
        Class::Processes => (
            false,
            "without a PID namespace a process a command leaves behind outlives cairn when \
             cairn is killed (install bubblewrap)"
                .into(),
        ),
        Class::Caches => pair(
            landlock,
            "private per project; the person's caches are not writable",
            "no Landlock",
        ),
        Class::RepoConfig => (
            false,
            "Landlock cannot make part of the workspace read-only (install bubblewrap)".into(),
        ),
        Class::Network => pair(
            support.seccomp || abi >= 4,
            "seccomp and Landlock TCP rules",
            "neither seccomp nor Landlock ABI 4",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: Support = Support {
        landlock_abi: 7,
        seccomp: true,
        seatbelt: false,
    };

    #[test]
    fn only_the_namespace_layer_holds_every_class() {
        assert!(whole(&assess(Some(Layer::Namespace), FULL, false)));
        let kernel = assess(Some(Layer::Kernel), FULL, false);
        assert!(!whole(&kernel));
        let missing: Vec<Class> = kernel.iter().filter(|h| !h.held).map(|h| h.class).collect();
        assert_eq!(missing, [Class::Processes, Class::RepoConfig]);
        assert!(!whole(&assess(None, FULL, false)));
    }

    #[test]
    fn a_named_socket_or_an_old_kernel_breaks_the_whole() {
        assert!(!whole(&assess(Some(Layer::Namespace), FULL, true)));
        let old = Support {
            landlock_abi: 2,
            seccomp: false,
            seatbelt: false,
        };
        let held: Vec<Class> = assess(Some(Layer::Kernel), old, false)
            .iter()
            .filter(|h| h.held)
            .map(|h| h.class)
            .collect();
        assert_eq!(held, [Class::Home, Class::Caches]);
    }
}
