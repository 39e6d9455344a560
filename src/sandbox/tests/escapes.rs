//! Each class of escape, tried by a real process in each layer; the
//! assertions are on effects (bytes on a terminal, a connection accepted,
//! a process still running, a limit changed, a file written).

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use super::*;

fn python(policy: &Policy, f: &Fixture, code: &str) -> (i32, String) {
    let script = format!("python3 -c '{}'", code.replace('\'', "'\\''"));
    run(policy, f, &script)
}

#[test]
fn no_typing_into_a_terminal() {
    if !enforced() {
        return;
    }
    for layer in layers() {
        let f = fixture();
        let p = policy(&f, false, layer);
        let pty = nix::pty::openpty(None, None).unwrap();
        let mut cmd = std_command("python3".as_ref(), Some(&p)).unwrap();
        cmd.arg("-c")
            .arg(
                "import fcntl, termios, os\n\
                 for fd in (0,):\n\
                 \x20   try:\n\
                 \x20       fcntl.ioctl(fd, termios.TIOCSTI, b'X')\n\
                 \x20       print('injected')\n\
                 \x20   except OSError as e:\n\
                 \x20       print('refused', e.errno)\n\
                 try:\n\
                 \x20   os.open('/dev/tty', os.O_RDWR)\n\
                 \x20   print('tty opened')\n\
                 except OSError as e:\n\
                 \x20   print('no tty', e.errno)\n",
            )
            .current_dir(&f.ws)
            .stdin(std::process::Stdio::from(std::fs::File::from(
                pty.slave.try_clone().unwrap(),
            )));
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("refused"), "{layer:?}: {text}");
        assert!(text.contains("no tty"), "{layer:?}: {text}");
        // Nothing arrived as input on the terminal.
        drop(pty.slave);
        let mut master = std::fs::File::from(pty.master);
        nix::fcntl::fcntl(
            &master,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .unwrap();
        let mut buf = [0u8; 64];
        let n = master.read(&mut buf).unwrap_or(0);
        assert!(!buf[..n].contains(&b'X'), "{layer:?}: {:?}", &buf[..n]);
    }
}

#[test]
fn unix_sockets_are_closed_unless_named() {
    if !enforced() || !Support::detect().seccomp {
        return;
    }
    for layer in layers() {
        let f = fixture();
        let path = f.ws.join("agent.sock");
        let listener = UnixListener::bind(&path).unwrap();
        listener.set_nonblocking(true).unwrap();
        let abstract_name = format!("cairn-test-{}", std::process::id());
        let addr = <std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(
            abstract_name.as_bytes(),
        )
        .unwrap();
        let abstract_listener = UnixListener::bind_addr(&addr).unwrap();
        abstract_listener.set_nonblocking(true).unwrap();
        let connect = |target: &str| {
            format!(
                "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({target})\nprint('reached')"
            )
        };
        let p = policy(&f, true, layer);
        for target in [
            format!("'{}'", path.display()),
            format!("'\\0{abstract_name}'"),
        ] {
            let (code, out) = python(&p, &f, &connect(&target));
            assert_ne!(code, 0, "{layer:?} {target}: {out}");
            assert!(!out.contains("reached"));
        }
        assert!(listener.accept().is_err() && abstract_listener.accept().is_err());
        // Named in `[sandbox] unix_sockets`, that one is reachable.
        let config = crate::config::SandboxConfig {
            unix_sockets: vec![path.display().to_string()],
            ..Default::default()
        };
        let p = sandbox_for(&f, config).policy_in(&f.ws, layer).unwrap();
        let (code, out) = python(&p, &f, &connect(&format!("'{}'", path.display())));
        assert_eq!(code, 0, "{layer:?}: {out}");
        listener.set_nonblocking(false).unwrap();
        assert!(listener.accept().is_ok());
    }
}

/// Processes whose command line holds `marker`.
fn running(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}

fn gone_within(marker: &str, limit: Duration) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let left = running(marker);
        if left.is_empty() || start.elapsed() > limit {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn every_process_dies_with_its_call() {
    if !enforced() {
        return;
    }
    for layer in layers() {
        let f = fixture();
        let p = policy(&f, false, layer);
        let marker = format!("7{}{}", std::process::id(), layer as u8);
        // setsid, setpgid, a double fork, nohup: each tries to outlive it.
        let script = format!(
            "setsid sleep 300.{marker}1 >/dev/null 2>&1 &\n\
             python3 -c 'import os, time; os.setpgid(0, 0); time.sleep(300)' {marker}2 >/dev/null 2>&1 &\n\
             (sh -c 'sleep 300.{marker}3 &' &) >/dev/null 2>&1\n\
             nohup sleep 300.{marker}4 >/dev/null 2>&1 &\n\
             sleep 0.5; echo started"
        );
        let mut cmd = std_command("bash".as_ref(), Some(&p)).unwrap();
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let out = cmd
            .arg("-c")
            .arg(&script)
            .current_dir(&f.ws)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pgid = out.id() as i32;
        let out = out.wait_with_output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("started"));
        // What cairn does when a call ends (`tools::jobs`).
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
        let left = gone_within(&marker, Duration::from_secs(3));
        for pid in &left {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        assert!(left.is_empty(), "{layer:?}: left running: {left:?}");
    }
}

fn core_limit() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: fills a local struct.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_CORE, &mut limit) }, 0);
    (limit.rlim_cur, limit.rlim_max)
}

#[test]
fn no_reaching_processes_outside() {
    if !enforced() || !Support::detect().seccomp {
        return;
    }
    let me = std::process::id();
    let core_before = core_limit();
    // SAFETY: reads this process's nice value.
    let nice_before = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    for layer in layers() {
        let f = fixture();
        let p = policy(&f, false, layer);
        for attempt in [
            format!("prlimit --pid {me} --core=4096:"),
            format!("renice -n 7 -p {me}"),
            format!("taskset -p 1 {me}"),
            format!("kill -CONT {me}"),
        ] {
            let (code, out) = run(&p, &f, &attempt);
            assert_ne!(code, 0, "{layer:?} {attempt}: {out}");
        }
        // On themselves they still work.
        let (code, out) = run(&p, &f, "nice -n 1 true && ulimit -c 0 && taskset -c 0 true");
        assert_eq!(code, 0, "{layer:?}: {out}");
        // The x32 system call numbers are refused, not run or unknown.
        let (code, out) = python(
            &p,
            &f,
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n\
             r = libc.syscall(0x40000000 + 41, 2, 1, 0)\nprint(r, ctypes.get_errno())",
        );
        if cfg!(target_arch = "x86_64") {
            assert_eq!(code, 0, "{out}");
            assert_eq!(out.trim(), format!("-1 {}", libc::EPERM), "{layer:?}");
        }
    }
    assert_eq!(core_before, core_limit());
    // SAFETY: as above.
    assert_eq!(nice_before, unsafe {
        libc::getpriority(libc::PRIO_PROCESS, 0)
    });
}

#[test]
fn caches_are_private_and_the_persons_untouched() {
    if !enforced() {
        return;
    }
    for layer in layers() {
        let f = fixture();
        let p = policy(&f, false, layer);
        let caches = p.caches.clone().expect("caches");
        let script = "echo built > \"$XDG_CACHE_HOME/build.txt\" && \
                      echo c > \"$CARGO_HOME/marker\" && echo n > \"$npm_config_cache/marker\" && \
                      echo t > \"$TMPDIR/tmp.txt\" && echo ok; \
                      echo evil > ~/.cache/poison; mkdir -p ~/.cargo/registry/src/x 2>&1; \
                      echo p > ~/.npm/marker";
        let (_, out) = run(&p, &f, script);
        assert!(out.contains("ok"), "{layer:?}: {out}");
        assert!(caches.dir.join("xdg/build.txt").exists());
        assert!(caches.dir.join("cargo/marker").exists());
        assert!(caches.tmp.join("tmp.txt").exists(), "{layer:?}");
        assert!(!f.home.join(".cache/poison").exists());
        assert!(!f.home.join(".cargo/registry").exists());
        assert!(!f.home.join(".npm").exists());
        // Another project's cache is neither readable nor writable.
        let other = f.home.join(".cache").join(CACHE_AREA).join("other-0");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("secret"), "OTHER CACHE").unwrap();
        let (code, out) = run(
            &p,
            &f,
            &format!("cat {0}/secret; touch {0}/x", other.display()),
        );
        assert_ne!(code, 0);
        assert!(
            !out.contains("OTHER CACHE") && !other.join("x").exists(),
            "{out}"
        );
    }
}

#[test]
fn git_config_hooks_and_cairns_files_are_read_only_under_bubblewrap() {
    if !enforced() || bwrap::available().is_none() {
        eprintln!("skipped: bubblewrap is not available here");
        return;
    }
    let f = fixture();
    let git = |args: &str| {
        let ok = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("git {args}"))
            .current_dir(&f.ws)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{ok:?}");
    };
    git("init -q .");
    std::fs::create_dir_all(f.ws.join(".cairn")).unwrap();
    std::fs::write(f.ws.join(".cairn/config.toml"), "").unwrap();
    let before = std::fs::read_to_string(f.ws.join(".git/config")).unwrap();
    let p = policy(&f, false, Layer::Namespace);
    for attempt in [
        "git config core.fsmonitor 'touch /tmp/x'",
        "echo '[core] sshCommand = evil' >> .git/config",
        "printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit",
        "echo '* filter=evil' > .git/info/attributes",
        "echo 'mode = \"off\"' > .cairn/config.toml",
        "mv .git .git-old",
        "rm -rf .git/hooks",
    ] {
        let (code, out) = run(&p, &f, attempt);
        assert_ne!(code, 0, "{attempt}: {out}");
    }
    assert_eq!(
        std::fs::read_to_string(f.ws.join(".git/config")).unwrap(),
        before
    );
    assert!(!f.ws.join(".git/hooks/pre-commit").exists());
    assert!(f.ws.join(".git/HEAD").exists());
    assert_eq!(
        std::fs::read_to_string(f.ws.join(".cairn/config.toml")).unwrap(),
        ""
    );
}

/// A background job swaps a path cairn binds read-only from inside the
/// workspace (`.cairn`) for a link to a secret folder, after the policy is
/// built and before bubblewrap starts: bubblewrap must not bind what the
/// link points at. The swap is made between the two steps here, so the race
/// is won every time. (bubblewrap 0.8 already refuses a link as the place
/// to mount on; cairn now binds the folder it checked, by descriptor, and
/// refuses to start when it became a link.)
#[test]
fn a_bound_path_swapped_for_a_link_binds_nothing_outside() {
    if !enforced() || bwrap::available().is_none() {
        eprintln!("skipped: needs bubblewrap");
        return;
    }
    let f = fixture();
    std::fs::create_dir_all(f.ws.join(".cairn")).unwrap();
    std::fs::write(f.ws.join(".cairn/config.toml"), "").unwrap();
    let p = policy(&f, false, Layer::Namespace);
    assert!(
        p.read_only.contains(&f.ws.join(".cairn")),
        "{:?}",
        p.read_only
    );
    std::fs::rename(f.ws.join(".cairn"), f.ws.join("cairn-old")).unwrap();
    // Two targets: the hidden home, and a folder of the person's in the
    // real /tmp (commands get a /tmp of their own).
    let theirs = tempfile::tempdir().unwrap();
    std::fs::write(theirs.path().join("id_rsa"), "PRIVATE KEY in tmp").unwrap();
    let mut text = String::new();
    let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    let secret = std::fs::canonicalize(theirs.path()).unwrap().join("id_rsa");
    for target in [f.home.join(".ssh"), tmp] {
        let _ = std::fs::remove_file(f.ws.join(".cairn"));
        std::os::unix::fs::symlink(&target, f.ws.join(".cairn")).unwrap();
        let script = format!(
            "cat .cairn/id_rsa {0}/id_rsa {1} 2>&1",
            target.display(),
            secret.display()
        );
        text.push_str(&run_swapped(&p, &f, &script));
    }
    assert!(!text.contains("PRIVATE KEY"), "{text}");
}

/// Runs `script` under `p`, built after the swap; empty when the sandbox
/// refused to start (a fine answer to the swap).
fn run_swapped(p: &Policy, f: &Fixture, script: &str) -> String {
    let mut cmd = match std_command("bash".as_ref(), Some(p)) {
        Ok(c) => c,
        Err(e) => {
            assert!(e.to_string().contains("changed"), "{e}");
            return String::new();
        }
    };
    let out = cmd
        .arg("-c")
        .arg(script)
        .current_dir(&f.ws)
        .env("HOME", &f.home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
}
