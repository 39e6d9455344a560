//! What this machine can enforce, and the words that say so.

use super::{Policy, Sandbox, Support};
use crate::config::SandboxMode;

/// The full report of `cairn sandbox --status` and `/sandbox`.
pub fn report(sandbox: &Sandbox, policy: Option<&Policy>, support: Support) -> String {
    let mut out = String::new();
    let line = |out: &mut String, text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(&mut out, format!("mode: {}", sandbox.mode().as_str()));
    if sandbox.turned_off_by_flag() {
        line(&mut out, "turned off by --no-sandbox".into());
    }
    line(&mut out, format!("enforcement: {}", enforcer(support)));
    let network = match (support.seccomp, support.landlock_abi >= 4) {
        (true, true) => "seccomp (no IPv4/IPv6 sockets) and Landlock TCP rules",
        (true, false) => "seccomp (no IPv4/IPv6 sockets)",
        (false, true) => "Landlock TCP rules only (UDP is not filtered)",
        (false, false) if support.seatbelt => "Seatbelt",
        (false, false) => "none",
    };
    line(&mut out, format!("network filtering: {network}"));
    if sandbox.mode() != SandboxMode::Off && support.enforces_files() {
        line(&mut out, format!("a granted network: {}", granted(sandbox)));
    }
    if sandbox.mode() != SandboxMode::Off && !support.enforces_files() {
        line(
            &mut out,
            "NOT ENFORCED: this system offers no sandbox cairn can use; commands run \
             unconfined and the gate asks as it would without one."
                .into(),
        );
    }
    for gap in support.gaps() {
        line(&mut out, format!("degraded: {gap}"));
    }
    classes(&mut out, sandbox);
    if let Some(p) = policy {
        policy_lines(&mut out, p);
    }
    for ignored in &sandbox.config().ignored {
        line(
            &mut out,
            format!("ignored from the project's config: {ignored}"),
        );
    }
    out
}

/// What a command the network is granted to reaches.
fn granted(sandbox: &Sandbox) -> String {
    let shared = |why: &str| {
        format!("this machine's own network, its loopback services (127.0.0.1) included: {why}")
    };
    if sandbox.config().host_loopback() {
        return shared("[sandbox] host_loopback = true");
    }
    #[cfg(target_os = "linux")]
    {
        match super::netstack::reach() {
            super::netstack::Reach::Private(slirp) => format!(
                "a network namespace of its own through {}: the internet, no loopback service \
                 of this machine",
                slirp.display()
            ),
            super::netstack::Reach::Shared(why) => shared(why),
        }
    }
    #[cfg(not(target_os = "linux"))]
    shared("a network of a command's own needs Linux")
}

fn enforcer(support: Support) -> String {
    #[cfg(target_os = "linux")]
    if support.landlock_abi > 0 {
        return match super::bwrap::available() {
            Some(bwrap) => format!(
                "bubblewrap ({}) and seccomp; Landlock ABI {} when bubblewrap is missing",
                bwrap.display(),
                support.landlock_abi
            ),
            None => format!(
                "Landlock ABI {} and seccomp ({})",
                support.landlock_abi,
                super::bwrap::why_not().unwrap_or_default()
            ),
        };
    }
    if support.seatbelt {
        "Seatbelt (sandbox-exec)".into()
    } else {
        "none".into()
    }
}

/// One line per class, and cairn's own helpers.
fn classes(out: &mut String, sandbox: &Sandbox) {
    let holdings = sandbox.holdings();
    let whole = super::classes::whole(&holdings);
    out.push_str("classes:\n");
    for h in &holdings {
        let state = if h.held { "enforced" } else { "NOT ENFORCED" };
        out.push_str(&format!("  {:<12} {state}: {}\n", h.class.name(), h.how));
    }
    if sandbox.mode() != SandboxMode::Off && !whole {
        out.push_str(
            "  smart and auto mode ask for every command that is not read-only, because a \
             class above is not enforced\n",
        );
    }
    out.push_str("cairn's helpers:\n");
    let enforced = sandbox.mode() != SandboxMode::Off && sandbox.facts().enforced;
    for (name, inside, always) in HELPERS {
        let (state, how) = match (inside, enforced) {
            (Some(inside), true) => ("contained", format!("{inside}; {always}")),
            (Some(_), false) => ("NOT SANDBOXED", format!("no sandbox here; {always}")),
            (None, _) => ("contained", always.to_string()),
        };
        out.push_str(&format!("  {name:<12} {state}: {how}\n"));
    }
    let (state, how) = match (sandbox.config().user_hooks(), enforced) {
        (true, true) => (
            "contained",
            "a project's hooks run in the sandbox with the network off; yours run in it too, \
             with the network as `[sandbox] network` says and the files their command names \
             readable (`[sandbox] user_hooks = false` in your config runs yours as you)",
        ),
        (false, true) => (
            "NOT SANDBOXED",
            "yours run as you, unconfined (`[sandbox] user_hooks = false` in your config): a \
             hook that runs the repository's code runs it outside the sandbox; a project's run \
             in the sandbox",
        ),
        (_, false) => ("NOT SANDBOXED", "no sandbox here"),
    };
    out.push_str(&format!("  {:<12} {state}: {how}\n", "hooks"));
}

/// cairn's own helpers: what the sandbox adds when it is enforced, and
/// what holds either way.
const HELPERS: &[(&str, Option<&str>, &str)] = &[
    (
        "git",
        Some("its start-up git calls run in the sandbox, read-only, network off"),
        "no transport (a lazy fetch starts nothing), and the repository's fsmonitor, hooks, \
         filters, diff and ssh programs overridden",
    ),
    (
        "mcp",
        Some("a project's stdio servers (and `sandbox = true`) run in the sandbox, read-only"),
        "the person's own servers start in a neutral directory with PYTHONSAFEPATH and no \
         secret or socket variables; a project's entry gets no secret variable as ${VAR}; an \
         untrusted server's tools ask in every mode",
    ),
    (
        "lsp",
        Some("language servers run in the sandbox, read-only, network off"),
        "none starts before a tool touches a file of its language; found on a PATH without \
         folders inside the workspace, which is also the servers' own PATH; a project's `[lsp]` \
         servers wait for trust, which covers the workspace scripts they run; with the sandbox \
         off, an untrusted project's server does not start",
    ),
    (
        "format",
        Some("formatters run in the sandbox, read-only, network off"),
        "only with `[format]` on; they get the edited file's text on stdin and cairn writes \
         what they answer (never the formatter); at most the configured time (10 s unless \
         set), then stopped; found on a PATH without folders inside the workspace; control \
         files and files outside the workspace are never formatted; a project's `[format]` \
         waits for trust; with the sandbox off, an untrusted project's formatter does not run",
    ),
    (
        "file tools",
        None,
        "paths in the workspace open beneath it (openat2 RESOLVE_BENEATH, else one component \
         at a time without following links): no link leads a read, write or undo out of it; \
         a write of git's, cairn's or other agents' control files asks every time and never \
         goes through a link; ignore files are read as regular files inside the workspace only",
    ),
    (
        "fetch",
        None,
        "asks in every mode unless a rule covers it; no loopback, link-local or private \
         address unless a rule names the host; redirects only to the approved host or one a \
         rule names; no Referer",
    ),
    (
        "web_search",
        None,
        "asks in every mode unless the rule `web_search` allows it; the \
         query goes only to the service your own config names: a project's `[search]` waits \
         for trust and never gets your key",
    ),
];

fn policy_lines(out: &mut String, p: &Policy) {
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!("network: {}", if p.network { "on" } else { "off" }));
    if !p.workspace_usable {
        line(format!(
            "workspace {} is the home directory or above it: commands may neither read nor \
             write it; start cairn in a project directory",
            p.workspace.display()
        ));
    }
    line("writable:".into());
    for w in p.writable.iter().filter(|w| !w.starts_with("/dev")) {
        line(format!("  {}", w.display()));
    }
    line("  /dev/null and the other usual devices (no terminal)".into());
    if !p.read_only.is_empty() {
        line("read-only inside the workspace:".into());
        for r in &p.read_only {
            line(format!("  {}", r.display()));
        }
    }
    for home in &p.homes {
        line(format!(
            "home {}: not readable, but for (read-only):",
            home.display()
        ));
        for r in p.read.iter().filter(|r| r.starts_with(home)) {
            line(format!("  {}", r.display()));
        }
    }
    line("not readable:".into());
    for d in &p.deny_read {
        line(format!("  {}", d.display()));
    }
    if !p.unix_sockets.is_empty() {
        line("unix sockets allowed:".into());
        for s in &p.unix_sockets {
            line(format!("  {}", s.display()));
        }
    }
    line("readable: the system (/usr, /etc, /opt, …) and what is listed above".into());
}

#[cfg(test)]
mod tests {
    /// A rule the status suggests (`web_search`, `fetch(HOST)`) is one the
    /// rule parser takes: a person who copies it gets no error.
    #[test]
    fn every_rule_the_helpers_suggest_parses() {
        let mut checked = 0;
        for (_, _, always) in super::HELPERS {
            for quoted in always.split('`').skip(1).step_by(2) {
                let tool = quoted.split('(').next().unwrap_or_default();
                if !crate::permission::rules::KNOWN_TOOLS.contains(&tool) {
                    continue;
                }
                if quoted.contains('(') && quoted.chars().any(char::is_uppercase) {
                    // A placeholder such as `fetch(HOST)`: its shape is checked
                    // with a real host in its place.
                    let real = quoted.replace("HOST", "example.com");
                    assert!(
                        crate::permission::rules::Rule::parse(&real).is_ok(),
                        "{quoted}"
                    );
                } else {
                    assert!(
                        crate::permission::rules::Rule::parse(quoted).is_ok(),
                        "{quoted}"
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 0, "no rule found in the helpers' lines");
    }
}
