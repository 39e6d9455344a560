//! `cairn sandbox -- CMD` and `cairn sandbox --status` through the real
//! binary, and `cairn run --mode auto` against wrapped `rm -rf ~`, with a
//! fixture home outside the temporary directory (which stays writable).

use crate::test_home::have;
use crate::{fixture_base, mock_model};
use std::path::{Path, PathBuf};
use std::process::Output;

use mock_model::{Format, MockModel, Reply};
use serde_json::json;

struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir_in(fixture_base::fixture_base(Path::new(env!(
            "CARGO_TARGET_TMPDIR"
        ))))
        .unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap().join("home");
        let project = home.join("project");
        for d in [".ssh", ".cargo/bin", "project/.git", "documents"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
        std::fs::write(home.join("documents/thesis.txt"), "years of work").unwrap();
        std::fs::write(home.join(".cargo/bin/tool"), "#!/bin/sh\necho tool ran\n").unwrap();
        Home {
            _dir: dir,
            home,
            project,
        }
    }

    fn vars(&self) -> Vec<(String, PathBuf)> {
        vec![
            ("HOME".into(), self.home.clone()),
            ("XDG_CONFIG_HOME".into(), self.home.join(".config")),
            ("XDG_DATA_HOME".into(), self.home.join(".local/share")),
            ("XDG_STATE_HOME".into(), self.home.join(".local/state")),
        ]
    }

    fn cairn(&self, args: &[&str]) -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.vars())
            .output()
            .unwrap()
    }
}

fn enforced() -> bool {
    // SAFETY: the documented version query; creates nothing.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    if abi <= 0 {
        eprintln!("skipped: this kernel offers no Landlock, so cairn enforces no sandbox");
        return false;
    }
    true
}

/// The words the kernel gives a refused write: Landlock's, or those of
/// bubblewrap's read-only mounts.
fn refused(text: &str) -> bool {
    text.contains("Permission denied") || text.contains("Read-only file system")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn sandbox_runs_a_command_under_the_policy_and_exits_with_its_status() {
    if !enforced() {
        return;
    }
    let h = Home::new();
    let out = h.cairn(&[
        "sandbox",
        "--",
        "sh",
        "-c",
        "echo in > inside.txt && echo out > ../outside.txt",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(refused(&text(&out)), "{}", text(&out));
    assert!(h.project.join("inside.txt").exists());
    assert!(!h.home.join("outside.txt").exists());
    let out = h.cairn(&[
        "sandbox",
        "--",
        "cat",
        &h.home.join(".ssh/id_rsa").display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!text(&out).contains("PRIVATE KEY"));
    let out = h.cairn(&[
        "sandbox",
        "--",
        "sh",
        "-c",
        "ls /usr/bin > /dev/null && sh ~/.cargo/bin/tool && exit 7",
    ]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    assert!(text(&out).contains("tool ran"));
    let out = h.cairn(&["sandbox", "--", "no-such-program-x"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(text(&out).contains("command not found"));
}

#[test]
fn no_sandbox_runs_unconfined_and_status_says_so() {
    let h = Home::new();
    let out = h.cairn(&[
        "--no-sandbox",
        "sandbox",
        "--",
        "sh",
        "-c",
        "echo out > ../outside.txt",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(h.home.join("outside.txt").exists());
    let status = text(&h.cairn(&["--no-sandbox", "sandbox", "--status"]));
    assert!(
        status.contains("mode: off") && status.contains("--no-sandbox"),
        "{status}"
    );
}

#[test]
fn status_names_what_the_kernel_enforces_and_what_is_denied() {
    let h = Home::new();
    let out = h.cairn(&["sandbox", "--status"]);
    assert!(out.status.success());
    let status = text(&out);
    assert!(status.contains("mode: workspace-write"), "{status}");
    if enforced() {
        assert!(status.contains("Landlock ABI"), "{status}");
        assert!(status.contains("network filtering: seccomp"), "{status}");
        for class in [
            "files",
            "home",
            "sockets",
            "terminal",
            "processes",
            "caches",
        ] {
            assert!(status.contains(&format!("  {class} ")), "{class}: {status}");
        }
    } else {
        assert!(status.contains("NOT ENFORCED"), "{status}");
    }
    assert!(
        status.contains(&h.home.join(".ssh").display().to_string()),
        "{status}"
    );
    assert!(status.contains(&h.project.display().to_string()));
    // cairn's own helpers, each with how it is held.
    assert!(status.contains("cairn's helpers:"), "{status}");
    for (helper, how) in [
        ("git", "no transport"),
        ("mcp", "neutral directory"),
        ("file tools", "RESOLVE_BENEATH"),
        ("fetch", "no Referer"),
        ("web_search", "asks in every mode"),
        ("lsp", "wait for trust"),
    ] {
        let line = status
            .lines()
            .find(|l| l.trim_start().starts_with(helper))
            .unwrap_or_else(|| panic!("{helper} not listed: {status}"));
        assert!(line.contains(how), "{helper}: {line}");
        assert!(!line.contains("NOT CONTAINED"), "{helper}: {line}");
    }
}

#[test]
fn a_project_config_cannot_loosen_the_sandbox() {
    if !enforced() {
        return;
    }
    let h = Home::new();
    std::fs::create_dir_all(h.project.join(".cairn")).unwrap();
    std::fs::write(
        h.project.join(".cairn/config.toml"),
        "[sandbox]\nmode = \"off\"\nnetwork = true\nwritable = [\"~\"]\ndeny_read = [\"~/documents\"]\n",
    )
    .unwrap();
    let status = text(&h.cairn(&["sandbox", "--status"]));
    assert!(status.contains("mode: workspace-write"), "{status}");
    assert!(
        status.contains("ignored from the project's config: mode = \"off\""),
        "{status}"
    );
    let out = h.cairn(&[
        "sandbox",
        "--",
        "sh",
        "-c",
        "cat ~/documents/thesis.txt; echo x > ~/new.txt",
    ]);
    assert!(!out.status.success());
    assert!(
        !text(&out).contains("years of work"),
        "the project's deny_read holds"
    );
    assert!(
        !h.home.join("new.txt").exists(),
        "the project's writable root was ignored"
    );
}

#[tokio::test]
async fn auto_mode_cannot_destroy_the_home_behind_wrappers() {
    if !enforced() {
        return;
    }
    let h = Home::new();
    // The repository's own script: no reading of the command line can see
    // what it does, so auto mode runs it and only the sandbox stands
    // between it and the home directory.
    std::fs::write(h.project.join("clean.sh"), "rm -rf \"$HOME\"\n").unwrap();
    let commands = [
        "setsid rm -rf ~",
        "flock /tmp/cairn-auto.lock rm -rf \"$HOME\"",
        "script -qc 'rm -rf ~' /dev/null",
        "find ~ -maxdepth 0 -exec rm -rf {} +",
        "trap 'rm -rf ~' EXIT; true",
        "bash -c \"bash -c 'rm -rf ~/documents'\"",
        "sh clean.sh",
    ];
    let mut replies: Vec<Reply> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| Reply::tool(&format!("c{i}"), "bash", json!({ "command": c })))
        .collect();
    replies.push(Reply::text("Done."));
    replies.push(Reply::text("Title"));
    let mock = MockModel::start(Format::Anthropic, replies).await;
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["run", "--mode", "auto", "clean up"])
        .current_dir(&h.project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(h.vars())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("ANTHROPIC_BASE_URL", mock.url())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(h.home.join("documents/thesis.txt")).unwrap(),
        "years of work"
    );
    assert!(h.home.join(".ssh/id_rsa").exists());
    assert!(Path::new(&h.home.join(".cargo/bin/tool")).exists());
    // Each wrapped spelling was either refused by the gate or ran and was
    // refused by the sandbox; the script surely ran: the gate cannot read it.
    let sent: String = mock.requests().iter().map(|r| r.to_string()).collect();
    assert!(refused(&sent), "{sent}");
}

/// A build writes its temporary files to `TMPDIR` (a C compiler's objects
/// before the link): commands get a private one they can write, on both
/// layers, and nothing lands in the machine's shared `/tmp`.
#[test]
fn commands_get_a_private_temporary_folder_a_build_can_link_in() {
    if !enforced() {
        return;
    }
    let Some(cc) = ["cc", "gcc", "clang"].into_iter().find(|c| which(c)) else {
        eprintln!("skipped: no C compiler (cc, gcc, clang) on PATH");
        return;
    };
    let h = Home::new();
    let name = format!("cairn-tmp-probe-{}", std::process::id());
    let script = format!(
        "printf 'int main(void) {{ return 0; }}\\n' > t.c && {cc} t.c -o t && ./t \
         && echo linked; echo \"tmp=$TMPDIR\"; touch \"${{TMPDIR:-/tmp}}/{name}\" && echo wrote"
    );
    for no_bwrap in [false, true] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.args(["sandbox", "--", "sh", "-c", &script])
            .current_dir(&h.project)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(h.vars());
        if no_bwrap {
            cmd.env("CAIRN_SANDBOX_NO_BWRAP", "1");
        }
        let out = cmd.output().unwrap();
        let said = text(&out);
        let layer = if no_bwrap { "Landlock only" } else { "default" };
        assert!(
            said.contains("linked"),
            "{layer}: the build did not link: {said}"
        );
        assert!(
            said.contains("wrote"),
            "{layer}: TMPDIR not writable: {said}"
        );
        let shared = Path::new("/tmp").join(&name);
        let leaked = shared.exists();
        let _ = std::fs::remove_file(&shared);
        assert!(!leaked, "{layer}: a command wrote the shared /tmp: {said}");
    }
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// A granted network is the command's own (slirp4netns): it has an
/// interface with a default route, but this machine's loopback services
/// are out of its reach, on 127.0.0.1 and on slirp4netns's address for the
/// host. Without slirp4netns (or with `host_loopback = true`) the same
/// command reaches the listener, and `--status` says which it is.
#[test]
fn a_granted_network_reaches_no_loopback_service() {
    if !enforced() || !have("bwrap") || !have("slirp4netns") || !have("python3") {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let heard = || {
        let mut n = 0;
        while listener.accept().is_ok() {
            n += 1;
        }
        n
    };
    let h = Home::new();
    std::fs::create_dir_all(h.home.join(".config/cairn")).unwrap();
    let config = |extra: &str| {
        std::fs::write(
            h.home.join(".config/cairn/config.toml"),
            format!("[sandbox]\nnetwork = true\n{extra}"),
        )
        .unwrap()
    };
    config("");
    let probe = format!(
        "for host in 127.0.0.1 10.0.2.2; do python3 -c \"import socket; \
         socket.create_connection(('$host', {port}), timeout=3)\" 2>/dev/null \
         && echo \"reached $host\"; done; cat /proc/net/route /etc/resolv.conf"
    );
    let run = |vars: &[(&str, &str)]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["sandbox", "--", "sh", "-c", &probe])
            .current_dir(&h.project)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(h.vars())
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        text(&out)
    };

    let own = run(&[]);
    // Nothing reaches the listener. (A connection to 10.0.2.2 may still
    // be accepted by slirp4netns itself now and then, going nowhere: its
    // refusal leaves the outcome to a stale error code. So the listener
    // is what tells.)
    assert!(!own.contains("reached 127.0.0.1"), "{own}");
    assert_eq!(heard(), 0, "{own}");
    assert!(own.contains("tap0"), "an interface with a route: {own}");
    assert!(own.contains("nameserver 10.0.2.3"), "{own}");
    let status = text(&h.cairn(&["sandbox", "--status"]));
    assert!(
        status.contains("a granted network: a network namespace of its own through"),
        "{status}"
    );

    // The same command on the host's network reaches the listener: what
    // the first run shows is slirp4netns's doing.
    let shared = run(&[("CAIRN_SANDBOX_NO_SLIRP", "1")]);
    assert!(shared.contains("reached 127.0.0.1"), "{shared}");
    assert!(heard() >= 1, "{shared}");
    config("host_loopback = true\n");
    let asked = run(&[]);
    assert!(asked.contains("reached 127.0.0.1"), "{asked}");
    let status = text(&h.cairn(&["sandbox", "--status"]));
    assert!(
        status.contains("loopback services (127.0.0.1) included: [sandbox] host_loopback = true"),
        "{status}"
    );
}

/// Run by root (as in CI and many containers), bubblewrap used to keep
/// the capabilities: a command could remount the read-only binds
/// writable and plant a git hook, or add a route that sends its packets to
/// the host's loopback through slirp4netns (the hostile review of H8). A
/// command holds no capability, whoever runs cairn.
#[test]
fn a_command_holds_no_capability_even_when_root_runs_cairn() {
    if !enforced() || !have("bwrap") {
        return;
    }
    let h = Home::new();
    std::fs::create_dir_all(h.project.join(".git/hooks")).unwrap();
    let out = h.cairn(&[
        "sandbox",
        "--",
        "sh",
        "-c",
        "grep CapEff /proc/self/status; \
         mount -o remount,bind,rw .git/hooks 2>/dev/null; \
         echo 'curl -s http://127.0.0.1:9/x | sh' > .git/hooks/pre-commit 2>/dev/null; true",
    ]);
    let seen = text(&out);
    assert!(seen.contains("CapEff:\t0000000000000000"), "{seen}");
    assert!(
        !h.project.join(".git/hooks/pre-commit").exists(),
        "a hook was planted: {seen}"
    );
}

/// Where slirp4netns cannot give a command its network (here a broken
/// one first on the PATH), the command does not run at all, with the
/// reason and the way out: a granted network never falls back to this
/// machine's own unasked.
#[test]
fn a_network_that_cannot_be_set_up_runs_nothing() {
    if !enforced() || !have("bwrap") {
        return;
    }
    let h = Home::new();
    let bin = h.home.parent().unwrap().join("broken-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("slirp4netns");
    std::fs::write(&fake, "#!/bin/sh\necho 'no tap for you' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(h.home.join(".config/cairn")).unwrap();
    std::fs::write(
        h.home.join(".config/cairn/config.toml"),
        "[sandbox]\nnetwork = true\n",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["sandbox", "--", "sh", "-c", "echo ran > ran.txt"])
        .current_dir(&h.project)
        .env_clear()
        .env("PATH", path)
        .envs(h.vars())
        .output()
        .unwrap();
    let seen = text(&out);
    assert_eq!(out.status.code(), Some(125), "{seen}");
    assert!(seen.contains("could not be set up"), "{seen}");
    assert!(seen.contains("no tap for you"), "{seen}");
    assert!(seen.contains("host_loopback = true"), "{seen}");
    assert!(
        !h.project.join("ran.txt").exists(),
        "the command ran: {seen}"
    );
}
