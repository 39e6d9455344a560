//! Real processes under the real sandbox. Fixtures live under `target/`,
//! not under the temporary directory, which the sandbox leaves writable.

use std::path::{Path, PathBuf};

use super::*;

pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub ws: PathBuf,
}

pub(crate) fn fixture() -> Fixture {
    let base = crate::sandbox::fixture_base::fixture_base(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("target/sandbox-fixtures"),
    );
    let dir = tempfile::tempdir_in(&base).unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap().join("home");
    let ws = home.join("project");
    for d in [".ssh", ".cargo/bin", ".config/gh", "project", "other"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    std::fs::write(home.join(".cargo/bin/tool"), "#!/bin/sh\necho tool ran\n").unwrap();
    std::fs::write(home.join("notes.txt"), "keep me").unwrap();
    std::fs::write(ws.join("main.txt"), "workspace file").unwrap();
    Fixture {
        _dir: dir,
        home,
        ws,
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

fn policy(f: &Fixture, network: bool) -> Policy {
    let config = crate::config::SandboxConfig {
        network: Some(network),
        ..Default::default()
    };
    Sandbox::with_dirs(&config, false, Some(f.home.clone()), Vec::new())
        .policy(&f.ws)
        .unwrap()
}

fn run(policy: &Policy, f: &Fixture, script: &str) -> (i32, String) {
    let mut cmd = std_command("bash".as_ref(), Some(policy)).unwrap();
    let out = cmd
        .arg("-c")
        .arg(script)
        .current_dir(&f.ws)
        .env("HOME", &f.home)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn writes_stay_in_the_workspace() {
    if !enforced() {
        return;
    }
    let f = fixture();
    let p = policy(&f, false);
    let (code, out) = run(&p, &f, "echo new > inside.txt && echo x > ../outside.txt");
    assert_ne!(code, 0, "{out}");
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
        "{out}"
    );
    // cairn's own process is not restricted by what its children run under.
    std::fs::write(f.home.join("outside.txt"), "cairn writes").unwrap();
}

#[test]
fn secrets_are_unreadable_while_toolchains_and_the_workspace_are_readable() {
    if !enforced() {
        return;
    }
    let f = fixture();
    let p = policy(&f, false);
    let (code, out) = run(&p, &f, "cat ~/.ssh/id_rsa");
    assert_ne!(code, 0, "{out}");
    assert!(!out.contains("PRIVATE KEY"), "{out}");
    assert!(matches!(
        detect::detect(&p, code, &out, &f.ws, false),
        Some(Stop::Read { .. })
    ));
    let (code, out) = run(
        &p,
        &f,
        "ls /usr/bin >/dev/null && cat main.txt && sh ~/.cargo/bin/tool && cat ~/notes.txt && ls ~/.ssh",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("workspace file") && out.contains("tool ran") && out.contains("keep me"));
    // Names inside a denied directory may be listed; contents not.
    assert!(out.contains("id_rsa"), "{out}");
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
    let f = fixture();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (code, out) = run(&policy(&f, false), &f, &connect_script(port));
    assert_ne!(code, 0, "{out}");
    assert!(!out.contains("connected"));
    assert!(listener.accept().is_err(), "a connection got through");
    // Unix sockets keep working with the network off.
    let (code, out) = run(
        &policy(&f, false),
        &f,
        "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"hi\"); print(b.recv(2))'",
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = run(&policy(&f, true), &f, &connect_script(port));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("connected"));
    listener.set_nonblocking(false).unwrap();
    assert!(listener.accept().is_ok());
    // A grant turns it on for one run.
    let granted = policy(&f, false).with_grant(&Grant {
        network: true,
        write: Vec::new(),
    });
    let (code, out) = run(&granted, &f, &connect_script(port));
    assert_eq!(code, 0, "{out}");
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
    for command in wrapped {
        let f = fixture();
        let (_, out) = run(&policy(&f, false), &f, &format!("touch ran; {command}"));
        assert_eq!(
            std::fs::read_to_string(f.home.join("notes.txt"))
                .ok()
                .as_deref(),
            Some("keep me"),
            "{command}: {out}"
        );
        assert!(f.home.join(".ssh/id_rsa").exists(), "{command}");
        assert!(f.home.join("other").is_dir(), "{command}");
        // It ran, and in the workspace it could delete.
        assert!(!f.ws.join("main.txt").exists(), "{command}: {out}");
    }
}

#[test]
fn real_toolchains_work_inside() {
    if !enforced() {
        return;
    }
    let f = fixture();
    let p = policy(&f, false);
    let script = "git init -q . && git -c user.name=t -c user.email=t@t add main.txt \
                  && git -c user.name=t -c user.email=t@t commit -qm first && git status --short \
                  && python3 -c 'open(\"py.txt\", \"w\").write(\"from python\")'";
    let (code, out) = run(&p, &f, script);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(f.ws.join("py.txt")).unwrap(),
        "from python"
    );
    assert!(f.ws.join(".git/HEAD").exists());
    // cargo and rustup read the real toolchain outside the fixture home.
    let mut cmd = std_command("cargo".as_ref(), Some(&p)).unwrap();
    let out = cmd.arg("--version").current_dir(&f.ws).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("cargo "));
}

#[test]
fn read_only_mode_refuses_workspace_writes() {
    if !enforced() {
        return;
    }
    let f = fixture();
    let config = crate::config::SandboxConfig {
        mode: Some(crate::config::SandboxMode::ReadOnly),
        ..Default::default()
    };
    let p = Sandbox::with_dirs(&config, false, Some(f.home.clone()), Vec::new())
        .policy(&f.ws)
        .unwrap();
    let (code, out) = run(&p, &f, "cat main.txt && touch new.txt");
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("workspace file"));
    assert!(!f.ws.join("new.txt").exists());
}

#[test]
fn a_workspace_holding_a_denied_path_keeps_it_unreadable_and_stays_writable() {
    if !enforced() {
        return;
    }
    let f = fixture();
    // cairn started in the home directory: the workspace holds `~/.ssh`.
    let p = Sandbox::with_dirs(&Default::default(), false, Some(f.home.clone()), Vec::new())
        .policy(&f.home)
        .unwrap();
    let run_in_home = |script: &str| {
        let mut cmd = std_command("bash".as_ref(), Some(&p)).unwrap();
        let out = cmd
            .arg("-c")
            .arg(script)
            .current_dir(&f.home)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, err) = run_in_home("echo deep > project/deep.txt && echo more >> notes.txt");
    assert!(ok, "{err}");
    assert_eq!(
        std::fs::read_to_string(f.home.join("project/deep.txt")).unwrap(),
        "deep\n"
    );
    for theft in [
        "cat .ssh/id_rsa",
        "mv .ssh/id_rsa project/stolen",
        "cp -r .ssh project/",
    ] {
        let (ok, _) = run_in_home(theft);
        assert!(!ok, "{theft}");
    }
    assert!(f.home.join(".ssh/id_rsa").exists());
    assert!(!f.home.join("project/stolen").exists());
    assert!(!f.home.join("project/.ssh/id_rsa").exists());
}
