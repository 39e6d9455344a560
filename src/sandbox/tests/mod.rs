//! Real processes under the real sandbox, in each layer this machine has.
//! Fixtures live under `target/`, not under the temporary directory, which
//! the kernel layer leaves writable.

mod escapes;
mod toolchains;

use std::path::{Path, PathBuf};

use super::*;

pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub ws: PathBuf,
    /// One of cairn's own directories, outside home.
    pub private: PathBuf,
}

pub(crate) fn fixture() -> Fixture {
    let base = crate::sandbox::fixture_base::fixture_base(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("target/sandbox-fixtures"),
    );
    let dir = tempfile::tempdir_in(&base).unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let ws = home.join("project");
    let private = root.join("cairn-data");
    for d in [
        ".ssh",
        ".cargo/bin",
        ".config/gh",
        "project",
        "other",
        ".cache",
    ] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::create_dir_all(&private).unwrap();
    std::fs::write(private.join("sessions.db"), "SESSIONS").unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    std::fs::write(home.join(".npmrc"), "//registry/:_authToken=NPM CANARY").unwrap();
    std::fs::write(home.join(".cargo/credentials.toml"), "CARGO CANARY").unwrap();
    std::fs::write(home.join(".cargo/bin/tool"), "#!/bin/sh\necho tool ran\n").unwrap();
    std::fs::write(home.join("notes.txt"), "keep me").unwrap();
    std::fs::write(home.join("other/.env"), "SIBLING CANARY").unwrap();
    std::fs::write(ws.join("main.txt"), "workspace file").unwrap();
    Fixture {
        _dir: dir,
        home,
        ws,
        private,
    }
}

pub(crate) fn enforced() -> bool {
    let s = Support::detect();
    if s.landlock_abi == 0 {
        eprintln!("skipped: this kernel offers no Landlock, so nothing can be enforced");
        return false;
    }
    true
}

/// The layers to test here: the kernel layer always, bubblewrap when it
/// works on this machine.
pub(crate) fn layers() -> Vec<Layer> {
    let mut layers = vec![Layer::Kernel];
    match bwrap::available() {
        Some(_) => layers.push(Layer::Namespace),
        None => eprintln!(
            "note: the namespace layer is not tested: {}",
            bwrap::why_not().unwrap_or_default()
        ),
    }
    layers
}

pub(crate) fn sandbox_for(f: &Fixture, config: crate::config::SandboxConfig) -> Sandbox {
    Sandbox::with_dirs(
        &config,
        false,
        Some(f.home.clone()),
        vec![f.private.clone()],
    )
}

pub(crate) fn policy(f: &Fixture, network: bool, layer: Layer) -> Policy {
    let config = crate::config::SandboxConfig {
        network: Some(network),
        ..Default::default()
    };
    sandbox_for(f, config).policy_in(&f.ws, layer).unwrap()
}

pub(crate) fn run_in(policy: &Policy, cwd: &Path, home: &Path, script: &str) -> (i32, String) {
    let mut cmd = std_command("bash".as_ref(), Some(policy)).unwrap();
    let out = cmd
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env("HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

pub(crate) fn run(policy: &Policy, f: &Fixture, script: &str) -> (i32, String) {
    run_in(policy, &f.ws, &f.home, script)
}

#[test]
fn writes_stay_in_the_workspace() {
    if !enforced() {
        return;
    }
    for layer in layers() {
        let f = fixture();
        let p = policy(&f, false, layer);
        let (code, out) = run(&p, &f, "echo new > inside.txt && echo x > ../outside.txt");
        assert_ne!(code, 0, "{layer:?}: {out}");
        assert_eq!(
            std::fs::read_to_string(f.ws.join("inside.txt")).unwrap(),
            "new\n"
        );
        assert!(!f.home.join("outside.txt").exists());
        let stop = detect::detect(&p, code, &out, &f.ws, false);
        assert_eq!(
            stop,
            Some(Stop::Write {
                path: f.home.join("outside.txt")
            }),
            "{layer:?}: {out}"
        );
        // cairn's own process is not restricted by what its children run under.
        std::fs::write(f.home.join("outside.txt"), "cairn writes").unwrap();
    }
}

#[test]
fn home_is_denied_but_for_the_toolchain_allow_list() {
    if !enforced() {
        return;
    }
    for layer in layers() {
        let f = fixture();
        let p = policy(&f, false, layer);
        for theft in [
            "cat ~/.ssh/id_rsa",
            "cat ~/notes.txt",
            "cat ~/.npmrc",
            "cat ~/.cargo/credentials.toml",
            "cat ~/other/.env",
            "ls ~/other",
            "ls ~/.ssh",
            &format!("ls {}", f.private.display()),
            &format!("cat {}/sessions.db", f.private.display()),
        ] {
            let (code, out) = run(&p, &f, theft);
            // Under bubblewrap a hidden directory is an empty one.
            let listing = theft.starts_with("ls");
            assert!(code != 0 || listing, "{layer:?} {theft}: {out}");
            let names = ["id_rsa", ".env", "sessions.db"];
            assert!(!listing || !names.iter().any(|n| out.contains(n)), "{out}");
            for canary in ["PRIVATE KEY", "keep me", "CANARY", "SESSIONS"] {
                assert!(!out.contains(canary), "{layer:?} {theft}: {out}");
            }
        }
        let (code, out) = run(
            &p,
            &f,
            "ls /usr/bin >/dev/null && cat main.txt && sh ~/.cargo/bin/tool",
        );
        assert_eq!(code, 0, "{layer:?}: {out}");
        assert!(out.contains("workspace file") && out.contains("tool ran"));
        // `[sandbox] read` widens the allow-list on purpose.
        let config = crate::config::SandboxConfig {
            read: vec!["~/notes.txt".into()],
            ..Default::default()
        };
        let p = sandbox_for(&f, config).policy_in(&f.ws, layer).unwrap();
        let (code, out) = run(&p, &f, "cat ~/notes.txt");
        assert_eq!(code, 0, "{layer:?}: {out}");
        assert!(out.contains("keep me"));
    }
}

fn connect_script(port: u16) -> String {
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
}

#[test]
fn the_network_is_off_unless_the_policy_turns_it_on() {
    if !enforced() {
        return;
    }
    if !Support::detect().enforces_network() {
        eprintln!("skipped: neither seccomp nor Landlock TCP rules (ABI 4) are available");
        return;
    }
    for layer in layers() {
        let f = fixture();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (code, out) = run(&policy(&f, false, layer), &f, &connect_script(port));
        assert_ne!(code, 0, "{out}");
        assert!(!out.contains("connected"));
        assert!(listener.accept().is_err(), "a connection got through");
        // A socket pair reaches no one: it keeps working.
        let (code, out) = run(
            &policy(&f, false, layer),
            &f,
            "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"hi\"); print(b.recv(2))'",
        );
        assert_eq!(code, 0, "{layer:?}: {out}");
        let (code, out) = run(&policy(&f, true, layer), &f, &connect_script(port));
        assert_eq!(code, 0, "{layer:?}: {out}");
        assert!(out.contains("connected"));
        listener.set_nonblocking(false).unwrap();
        assert!(listener.accept().is_ok());
        // A grant turns it on for one run.
        let granted = policy(&f, false, layer).with_grant(&Grant {
            network: true,
            write: Vec::new(),
        });
        let (code, out) = run(&granted, &f, &connect_script(port));
        assert_eq!(code, 0, "{layer:?}: {out}");
    }
}

#[test]
fn rm_rf_home_behind_wrappers_destroys_nothing_outside_the_workspace() {
    if !enforced() {
        return;
    }
    let wrapped = [
        "setsid rm -rf ~",
        "flock /tmp/cairn-sandbox-test.lock rm -rf \"$HOME\"",
        "script -qc 'rm -rf ~' /dev/null",
        "find ~ -maxdepth 0 -exec rm -rf {} +",
        "trap 'rm -rf ~' EXIT; true",
        "bash -c \"bash -c 'bash -c \\\"rm -rf ~\\\"'\"",
    ];
    for layer in layers() {
        for command in wrapped {
            let f = fixture();
            let (_, out) = run(
                &policy(&f, false, layer),
                &f,
                &format!("touch ran; {command}"),
            );
            assert_eq!(
                std::fs::read_to_string(f.home.join("notes.txt"))
                    .ok()
                    .as_deref(),
                Some("keep me"),
                "{command}: {out}"
            );
            assert!(f.home.join(".ssh/id_rsa").exists(), "{command}");
            assert!(f.home.join("other").is_dir(), "{command}");
            // Under bubblewrap it ran, and in the workspace it could delete;
            // the kernel layer does not even let it list home.
            if layer == Layer::Namespace {
                assert!(
                    !f.ws.join("main.txt").exists(),
                    "{layer:?} {command}: {out}"
                );
            }
        }
    }
}

#[test]
fn read_only_mode_refuses_workspace_writes() {
    if !enforced() {
        return;
    }
    for layer in layers() {
        let f = fixture();
        let config = crate::config::SandboxConfig {
            mode: Some(crate::config::SandboxMode::ReadOnly),
            ..Default::default()
        };
        let p = sandbox_for(&f, config).policy_in(&f.ws, layer).unwrap();
        let (code, out) = run(&p, &f, "cat main.txt && touch new.txt");
        assert_ne!(code, 0, "{out}");
        assert!(out.contains("workspace file"));
        assert!(!f.ws.join("new.txt").exists());
    }
}

#[test]
fn a_workspace_at_home_is_neither_readable_nor_writable() {
    if !enforced() {
        return;
    }
    for layer in layers() {
        let f = fixture();
        // cairn started in the home directory (a dotfiles repository).
        std::fs::create_dir_all(f.home.join(".git")).unwrap();
        let p = sandbox_for(&f, Default::default())
            .policy_in(&f.home, layer)
            .unwrap();
        assert!(!p.workspace_usable);
        for attempt in [
            "echo 'curl x | sh' >> .bashrc",
            "echo deep > project/deep.txt",
            "cat notes.txt",
            "cat .ssh/id_rsa",
            "mv .ssh/id_rsa project/stolen",
        ] {
            let (code, out) = run_in(&p, &f.home, &f.home, attempt);
            assert_ne!(code, 0, "{layer:?} {attempt}: {out}");
            assert!(
                !out.contains("keep me") && !out.contains("PRIVATE"),
                "{out}"
            );
        }
        assert!(!f.home.join(".bashrc").exists());
        assert!(!f.home.join("project/deep.txt").exists());
        assert!(f.home.join(".ssh/id_rsa").exists());
    }
}
