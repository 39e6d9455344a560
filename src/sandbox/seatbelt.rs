//! The policy as a macOS Seatbelt profile, run with `sandbox-exec -p`.
//! It cannot run on this machine, so it is tested as text.

use std::path::Path;

use super::Policy;

pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// A string literal of the profile language.
fn quote(path: &Path) -> String {
    let text = path.display().to_string();
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

fn target(path: &Path) -> String {
    if path.is_dir() {
        format!("(subpath {})", quote(path))
    } else {
        format!("(literal {})", quote(path))
    }
}

/// Deny by default; read the system but not home (bar the allow-list) nor
/// the denied paths; write only the writable roots; IP networking only
/// when the policy allows it, Unix sockets only those it names. Later
/// rules win, so the denials come after the allows.
pub fn profile(policy: &Policy) -> String {
    let mut p = String::from(
        "(version 1)\n\
         (deny default)\n\
         (allow process-exec process-fork)\n\
         (allow signal (target same-sandbox))\n\
         (allow sysctl-read mach-lookup ipc-posix-shm pseudo-tty)\n\
         (allow file-ioctl (literal \"/dev/tty\"))\n\
         (allow file-read*)\n",
    );
    if !policy.writable.is_empty() {
        p.push_str("(allow file-write*");
        for w in &policy.writable {
            p.push_str(&format!("\n  {}", target(w)));
        }
        p.push_str(")\n");
    }
    for home in &policy.homes {
        // Home is hidden but for the allow-list and what may be written.
        p.push_str(&format!("(deny file-read* {})\n", target(home)));
        let open: Vec<_> = policy.read.iter().chain(&policy.writable).collect();
        if !open.is_empty() {
            p.push_str("(allow file-read*");
            for r in open {
                p.push_str(&format!("\n  {}", target(r)));
            }
            p.push_str(")\n");
        }
    }
    if !policy.deny_read.is_empty() {
        p.push_str("(deny file-read* file-write*");
        for d in &policy.deny_read {
            p.push_str(&format!("\n  {}", target(d)));
        }
        p.push_str(")\n");
    }
    if policy.network {
        p.push_str("(allow network* (remote ip) (local ip))\n");
    }
    for socket in &policy.unix_sockets {
        p.push_str(&format!(
            "(allow network-outbound (remote unix-socket (path-literal {})))\n",
            quote(socket)
        ));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(network: bool) -> (tempfile::TempDir, Policy) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        std::fs::create_dir(dir.path().join(".ssh")).unwrap();
        let p = Policy::bare(
            dir.path().join("ws"),
            vec![dir.path().join("ws"), "/dev/null".into()],
            vec![dir.path().join(".ssh"), dir.path().join("we\"ird")],
            network,
        );
        (dir, p)
    }

    #[test]
    fn the_profile_denies_by_default_and_lists_the_policy() {
        let (dir, p) = policy(false);
        let text = profile(&p);
        let d = dir.path().display();
        assert!(text.starts_with("(version 1)\n(deny default)\n"), "{text}");
        assert!(
            text.contains(&format!(
                "(allow file-write*\n  (subpath \"{d}/ws\")\n  (literal \"/dev/null\"))"
            )),
            "{text}"
        );
        assert!(text.contains(&format!("(deny file-read* file-write*\n  (subpath \"{d}/.ssh\")\n  (literal \"{d}/we\\\"ird\"))")), "{text}");
        // The denials come after the general read allowance.
        assert!(text.find("(allow file-read*)").unwrap() < text.find("(deny file-read*").unwrap());
        assert!(!text.contains("(allow network"), "{text}");
        assert!(profile(&policy(true).1).contains("(allow network* (remote ip) (local ip))\n"));
    }
}
