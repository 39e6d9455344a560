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
