//! What the benchmarks that drive the release binary in a pseudo-terminal
//! share: reading a process's memory and CPU from `/proc`, waiting for the
//! screen, medians. Each such bench declares `mod pty;` at its root.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use crate::pty::PtyApp;

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A `/proc/PID/status` figure in KB (`VmRSS:`, `VmHWM:`).
pub fn proc_status_kb(pid: u32, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// User + system CPU seconds of a process.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = text.rsplit(')').next()?;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / hz)
}

/// Waits until the screen satisfies `pred`; how long that took.
pub fn wait(app: &PtyApp, what: &str, pred: impl Fn(&str) -> bool, limit: Duration) -> Duration {
    let start = Instant::now();
    loop {
        if pred(&app.screen()) {
            return start.elapsed();
        }
        if start.elapsed() > limit {
            panic!("timed out waiting for {what}:\n{}", app.screen());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// The runtime the scripted model is served from.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// A project folder that is a git repository's root.
pub fn project() -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".git")).unwrap();
    project
}

/// The environment cairn runs in: its own home and XDG folders under
/// `home`, Anthropic's API at `url`.
pub fn vars(home: &std::path::Path, url: &str) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.display().to_string()),
        (
            "XDG_CONFIG_HOME".into(),
            home.join("c").display().to_string(),
        ),
        ("XDG_DATA_HOME".into(), home.join("d").display().to_string()),
        (
            "XDG_STATE_HOME".into(),
            home.join("s").display().to_string(),
        ),
        ("ANTHROPIC_API_KEY".into(), "bench".into()),
        ("ANTHROPIC_BASE_URL".into(), url.to_string()),
    ]
}

/// cairn in a 40×120 pseudo-terminal, once its first screen is up.
pub fn start(
    bin: &std::path::Path,
    vars: &[(String, String)],
    project: &std::path::Path,
) -> PtyApp {
    let app = PtyApp::spawn(bin, &[], vars, project, 40, 120);
    wait(
        &app,
        "first screen",
        |s| s.contains("Ask cairn"),
        Duration::from_secs(10),
    );
    app
}
