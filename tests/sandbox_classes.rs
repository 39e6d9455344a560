//! The sandbox's classes through the real binary: `cairn sandbox --status`
//! in each layer, the variables a command is not given, and processes that
//! do not outlive cairn. The finer cases run as unit tests beside the code
//! (`src/sandbox/tests/`); the hostile end-to-end suite is `tests/escapes/`.

use crate::fixture_base;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Home {
    fn new() -> Home {
        let base = fixture_base::fixture_base(Path::new(env!("CARGO_TARGET_TMPDIR")));
        let dir = tempfile::tempdir_in(base).unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap().join("home");
        let project = home.join("project");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        Home {
            _dir: dir,
            home,
            project,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"));
        cmd
    }

    fn cairn(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied());
        cmd.output().unwrap()
    }
}

fn landlock() -> bool {
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
        eprintln!("skipped: this kernel offers no Landlock");
    }
    abi > 0
}

fn bwrap_works() -> bool {
    let ok = Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent"])
        .args(["--new-session", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: bubblewrap is not installed or cannot work here");
    }
    ok
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The line of `status` about `class`.
fn class_line<'a>(status: &'a str, class: &str) -> &'a str {
    status
        .lines()
        .find(|l| l.starts_with(&format!("  {class} ")))
        .unwrap_or_else(|| panic!("no {class} line in {status}"))
}

#[test]
fn status_names_each_class_in_each_layer() {
    if !landlock() {
        return;
    }
    let h = Home::new();
    let kernel = text(&h.cairn(&["sandbox", "--status"], &[("CAIRN_SANDBOX_NO_BWRAP", "1")]));
    assert!(
        kernel.contains("CAIRN_SANDBOX_NO_BWRAP=1 is set"),
        "{kernel}"
    );
    for class in ["processes", "repo config"] {
        assert!(
            class_line(&kernel, class).contains("NOT ENFORCED"),
            "{kernel}"
        );
    }
    for class in ["files", "home", "sockets", "terminal", "caches", "network"] {
        assert!(class_line(&kernel, class).contains(" enforced"), "{kernel}");
    }
    assert!(
        kernel.contains("smart and auto mode ask for every command"),
        "{kernel}"
    );
    // cairn's own helpers are contained whatever layer the commands get.
    for helper in ["git", "mcp", "file tools", "fetch"] {
        let line = class_line(&kernel, helper);
        assert!(
            line.contains("contained:") && !line.contains("NOT"),
            "{kernel}"
        );
    }
    if bwrap_works() {
        let whole = text(&h.cairn(&["sandbox", "--status"], &[]));
        assert!(whole.contains("bubblewrap"), "{whole}");
        assert!(!whole.contains("smart and auto mode ask"), "{whole}");
        for class in ["processes", "repo config", "home", "terminal"] {
            assert!(class_line(&whole, class).contains(" enforced"), "{whole}");
        }
    }
}

#[test]
fn socket_locating_and_secret_variables_are_not_given_to_commands() {
    if !landlock() {
        return;
    }
    let h = Home::new();
    let env = [
        ("TMUX", "/tmp/tmux-0/default,1,0"),
        ("TMUX_PANE", "%1"),
        ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"),
        ("DISPLAY", ":0"),
        ("WAYLAND_DISPLAY", "wayland-0"),
        ("DOCKER_HOST", "unix:///run/docker.sock"),
        ("KITTY_LISTEN_ON", "unix:/tmp/kitty"),
        ("BW_SESSION", "bitwarden-session-canary"),
        ("OP_SESSION_my", "onepassword-canary"),
        ("TF_TOKEN_app_terraform_io", "terraform-canary"),
        ("CI_JOB_JWT", "jwt-canary"),
        ("SLACK_WEBHOOK_URL", "https://hooks.example/canary"),
        ("DB_CONNECTION_STRING", "Server=x;Password=canary"),
        ("DOCKER_AUTH_CONFIG", "docker-auth-canary"),
        ("LANG", "C.UTF-8"),
    ];
    for layer in [&[("CAIRN_SANDBOX_NO_BWRAP", "1")][..], &[]] {
        let mut all = env.to_vec();
        all.extend_from_slice(layer);
        let out = h.cairn(&["sandbox", "--", "env"], &all);
        let seen = text(&out);
        assert!(out.status.success(), "{seen}");
        for (name, _) in &env[..env.len() - 1] {
            assert!(
                !seen.contains(&format!("{name}=")),
                "{layer:?} {name}: {seen}"
            );
        }
        assert!(!seen.contains("canary"), "{seen}");
        assert!(seen.contains("LANG=C.UTF-8"), "{seen}");
        assert!(seen.contains("CARGO_HOME="), "{seen}");
    }
}

/// Credentials a variable puts outside home (`CARGO_HOME=/usr/local/cargo`,
/// as container images set it; `AWS_SHARED_CREDENTIALS_FILE`) are denied
/// where they are, and a cargo config there is shown without its token.
#[test]
fn secrets_a_variable_puts_outside_home_are_not_readable() {
    if !landlock() {
        return;
    }
    let h = Home::new();
    let outside = h.home.parent().unwrap().join("opt");
    let cargo = outside.join("cargo");
    std::fs::create_dir_all(&cargo).unwrap();
    std::fs::write(
        cargo.join("credentials.toml"),
        "[registry]\ntoken = \"cargo-canary\"\n",
    )
    .unwrap();
    std::fs::write(
        cargo.join("config.toml"),
        "[net]\nretry = 3\n[registries.corp]\ntoken = \"config-canary\"\n",
    )
    .unwrap();
    let docker = outside.join("docker");
    std::fs::create_dir_all(docker.join("contexts/tls/x")).unwrap();
    std::fs::write(docker.join("contexts/tls/x/key.pem"), "docker-key-canary\n").unwrap();
    let config = outside.join("config");
    std::fs::create_dir_all(config.join("rclone")).unwrap();
    std::fs::write(config.join("rclone/rclone.conf"), "pass = rclone-canary\n").unwrap();
    let aws = outside.join("aws-credentials");
    std::fs::write(&aws, "[default]\naws_secret_access_key = aws-canary\n").unwrap();
    std::fs::write(outside.join("plain.txt"), "readable\n").unwrap();
    // Tools no list names: any variable named like a secret.
    let token = outside.join("deploy.token");
    std::fs::write(&token, "deploy-token-canary\n").unwrap();
    let keys = outside.join("signing");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::write(keys.join("release.key"), "signing-key-canary\n").unwrap();
    let tickets = outside.join("krb5cc_1000");
    std::fs::write(&tickets, "kerberos-ticket-canary\n").unwrap();
    let script = format!(
        "cat {c}/credentials.toml {c}/config.toml {a} {p} {d}/contexts/tls/x/key.pem \
         {x}/rclone/rclone.conf {t} {k}/release.key {kt}; true",
        c = cargo.display(),
        a = aws.display(),
        p = outside.join("plain.txt").display(),
        d = docker.display(),
        x = config.display(),
        t = token.display(),
        k = keys.display(),
        kt = tickets.display(),
    );
    let krb5 = format!("FILE:{}", tickets.display());
    // A variable named like a secret that names a folder holding the
    // workspace hides nothing (the command still runs and reads).
    let above = h.home.parent().unwrap().to_str().unwrap().to_string();
    let vars = [
        ("CARGO_HOME", cargo.to_str().unwrap()),
        ("AWS_SHARED_CREDENTIALS_FILE", aws.to_str().unwrap()),
        ("DOCKER_CONFIG", docker.to_str().unwrap()),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
        ("DEPLOY_TOKEN_FILE", token.to_str().unwrap()),
        ("RELEASE_SIGNING_KEYS_DIR", keys.to_str().unwrap()),
        ("KRB5CCNAME", &krb5),
        ("BACKUP_SECRETS_DIR", &above),
    ];
    let mut layers = vec![vec![("CAIRN_SANDBOX_NO_BWRAP", "1")]];
    if bwrap_works() {
        layers.push(vec![]);
    }
    for layer in layers {
        let mut env = vars.to_vec();
        env.extend(layer.iter().copied());
        let out = h.cairn(&["sandbox", "--", "sh", "-c", &script], &env);
        let seen = text(&out);
        assert!(seen.contains("readable"), "{layer:?}: {seen}");
        assert!(!seen.contains("canary"), "{layer:?}: {seen}");
    }
}

/// `sleep` processes whose argument holds `marker`, zombies aside.
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
        let cmdline = String::from_utf8_lossy(&cmdline);
        if !zombie && cmdline.starts_with("sleep\0") && cmdline.contains(marker) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn nothing_a_command_started_outlives_a_killed_cairn() {
    if !landlock() || !bwrap_works() {
        return;
    }
    let h = Home::new();
    let marker = format!("9{}", std::process::id());
    let script = format!(
        "setsid sleep 300.{marker}1 >/dev/null 2>&1 & \
         (sh -c 'sleep 300.{marker}2 &' &) >/dev/null 2>&1; \
         echo started; sleep 300.{marker}3"
    );
    let mut cairn = h
        .command(&["sandbox", "--", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while running(&marker).len() < 3 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(running(&marker).len(), 3, "the escapers did not start");
    cairn.kill().unwrap();
    cairn.wait().unwrap();
    let start = Instant::now();
    let mut left = running(&marker);
    while !left.is_empty() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
        left = running(&marker);
    }
    for pid in &left {
        // SAFETY: stops what the test itself started.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "outlived cairn: {left:?}");
}
