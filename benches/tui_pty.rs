//! The release binary in a 120×40 pseudo-terminal against the scripted
//! model: start-up time, idle memory, cost of streaming a 100 KB answer,
//! keystroke latency, and whether anything is drawn while idle.
//!
//!     cargo bench --bench tui_pty
//!
//! Prints medians. Targets (issue 4): first usable screen ≤ 20 ms, idle
//! RSS ≤ 25 MB, streaming ≤ 1 CPU-second and ≤ 60 MB peak, keystroke to
//! screen ≤ 5 ms, no output while idle; (issue 17) ≤ 400 KB written to the
//! terminal while the 100 KB answer streams.

#[path = "../tests/support/mock_model.rs"]
mod mock_model;
#[path = "../tests/support/pty.rs"]
mod pty;
#[path = "support/pty_bench.rs"]
mod pty_bench;

use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use pty_bench::{cpu_seconds, median, proc_status_kb, wait};

/// Five agent files, fifty skills and three configured (never started)
/// language servers in the person's own folders under `home`.
fn define_extensions(home: &Path) {
    let config = home.join("c/cairn");
    for i in 1..=5 {
        let dir = config.join("agents");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("reviewer-{i}.md")),
            format!(
                "---\nname: reviewer-{i}\ndescription: Reviews a change for problems of kind {i}; \
                 use after edits.\ntools: Read, Grep, Glob\n---\nYou review changes. {}\n",
                "Look for mistakes and say where they are. ".repeat(20)
            ),
        )
        .unwrap();
    }
    for i in 1..=50 {
        let dir = config.join(format!("skills/skill-{i:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: skill-{i:02}\ndescription: Does task number {i} the house way; use when \
                 asked for task {i}.\n---\n# Skill {i}\n\n{}\n",
                "A step of the procedure, with its reasons and its checks. ".repeat(60)
            ),
        )
        .unwrap();
    }
    let mut toml = String::new();
    for i in 1..=3 {
        toml.push_str(&format!(
            "[lsp.bench{i}]\ncommand = \"bench-language-server-{i}\"\nargs = [\"--stdio\"]\n\
             filetypes = [\"bench{i}\"]\nroot_markers = [\"bench{i}.toml\"]\n\n"
        ));
    }
    std::fs::write(config.join("config.toml"), toml).unwrap();
}

fn main() {
    // `CAIRN_BENCH_BIN`: another build of cairn, to compare two in one run.
    let other = std::env::var_os("CAIRN_BENCH_BIN").map(std::path::PathBuf::from);
    let bin = other
        .as_deref()
        .unwrap_or(Path::new(env!("CARGO_BIN_EXE_cairn")));
    let rt = pty_bench::runtime();
    let home = tempfile::tempdir().unwrap();
    let project = pty_bench::project();
    let answer = markdown_answer(100 * 1024);
    let mock = rt.block_on(MockModel::start(
        Format::Anthropic,
        vec![streamed_reply(&answer), Reply::text("Bench")],
    ));
    let vars = pty_bench::vars(home.path(), &mock.url());

    // 1. Time to the first usable screen.
    let mut starts = Vec::new();
    for _ in 0..10 {
        let t0 = Instant::now();
        let mut app = pty_bench::start(bin, &vars, project.path());
        starts.push(t0.elapsed().as_secs_f64() * 1000.0);
        app.send(b"\x03");
        app.wait_exit(Duration::from_secs(5));
    }
    println!(
        "first usable screen: median {:.1} ms (10 runs)",
        median(starts)
    );

    let mut app = pty_bench::start(bin, &vars, project.path());
    let pid = app.pid().expect("pid");
    std::thread::sleep(Duration::from_secs(1));

    // 2. Idle: memory, and nothing drawn.
    let idle_rss = proc_status_kb(pid, "VmRSS:").unwrap_or(0);
    let before = app.output_len();
    std::thread::sleep(Duration::from_secs(2));
    let idle_bytes = app.output_len() - before;
    println!("idle resident memory: {:.1} MB", idle_rss as f64 / 1024.0);
    println!("bytes written while idle for 2 s: {idle_bytes}");

    // 2b. What defined extensions cost before any is used (issue 32: within
    // 1 MB): 5 sub-agents, 50 skills and 3 language servers (configured,
    // never started), against the same home without them; medians of three
    // fresh processes each, 2 s after the first screen.
    let plain_home = tempfile::tempdir().unwrap();
    let extended_home = tempfile::tempdir().unwrap();
    define_extensions(extended_home.path());
    let idle = |home: &Path| {
        let vars = pty_bench::vars(home, &mock.url());
        let mut app = pty_bench::start(bin, &vars, project.path());
        std::thread::sleep(Duration::from_secs(2));
        let kb = proc_status_kb(app.pid().expect("pid"), "VmRSS:").unwrap_or(0);
        quit(&mut app);
        kb as f64 / 1024.0
    };
    let (mut plain, mut extended) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        plain.push(idle(plain_home.path()));
        extended.push(idle(extended_home.path()));
    }
    let (plain, extended) = (median(plain), median(extended));
    println!(
        "idle with 5 sub-agents, 50 skills, 3 language servers defined: {extended:.1} MB \
         against {plain:.1} MB without ({:+.2} MB)",
        extended - plain
    );

    // 3. Streaming a 100 KB markdown answer over ~10 s, three times (the
    // first in this process, two more in fresh ones): CPU and bytes written
    // to the terminal, from Enter until the last line is on screen.
    let mut runs = vec![stream_answer(&mut app, &answer)];
    quit(&mut app);
    for _ in 0..2 {
        mock.push(streamed_reply(&answer));
        mock.push(Reply::text("Bench"));
        let mut fresh = pty_bench::start(bin, &vars, project.path());
        runs.push(stream_answer(&mut fresh, &answer));
        quit(&mut fresh);
    }
    for (i, r) in runs.iter().enumerate() {
        println!(
            "streaming run {}: {:.1} s, {:.2} CPU-seconds, {:.0} KB written, peak memory {:.1} MB",
            i + 1,
            r.secs,
            r.cpu,
            r.bytes as f64 / 1024.0,
            r.peak_kb as f64 / 1024.0
        );
    }
    println!(
        "streaming 100 KB: median {:.2} CPU-seconds, median {:.0} KB written to the terminal, median peak memory {:.1} MB ({} runs)",
        median(runs.iter().map(|r| r.cpu).collect()),
        median(runs.iter().map(|r| r.bytes as f64).collect()) / 1024.0,
        median(runs.iter().map(|r| r.peak_kb as f64).collect()) / 1024.0,
        runs.len()
    );

    // 4. Keystroke to screen, after the long answer (in a fresh process
    // that streamed it).
    mock.push(streamed_reply(&answer));
    mock.push(Reply::text("Bench"));
    let mut app = pty_bench::start(bin, &vars, project.path());
    stream_answer(&mut app, &answer);
    let mut lat = Vec::new();
    for i in 0..60 {
        let c = (b'a' + (i % 26) as u8) as char;
        let before = app.screen();
        let t = Instant::now();
        app.send(c.to_string().as_bytes());
        wait(
            &app,
            "the key echoed",
            |s| s != before,
            Duration::from_secs(5),
        );
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "keystroke to screen: median {:.2} ms (60 keys)",
        median(lat)
    );
    quit(&mut app);
}

/// ~2,000 chunks of 52 characters, 5 ms apart: about 10 s.
fn streamed_reply(answer: &str) -> Reply {
    Reply::text(answer)
        .chunk_chars(52)
        .chunk_delay(Duration::from_millis(5))
}

fn quit(app: &mut PtyApp) {
    app.send(b"\x03");
    std::thread::sleep(Duration::from_millis(100));
    app.send(b"\x03");
    app.wait_exit(Duration::from_secs(5));
}

/// CPU ticks per thread name (threads of one name summed), of the
/// threads alive now.
fn thread_ticks(pid: u32) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else {
            continue;
        };
        let name = stat
            .split_once('(')
            .and_then(|(_, r)| r.rsplit_once(')'))
            .map_or("?", |(n, _)| n)
            .to_string();
        let f: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        let ticks = f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
            + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        *out.entry(name).or_default() += ticks;
    }
    out
}

struct StreamRun {
    secs: f64,
    cpu: f64,
    bytes: usize,
    peak_kb: u64,
}

/// Sends a prompt and waits for the end of the streamed answer.
fn stream_answer(app: &mut PtyApp, answer: &str) -> StreamRun {
    let pid = app.pid().expect("pid");
    let threads0 = thread_ticks(pid);
    let cpu0 = cpu_seconds(pid).unwrap_or(0.0);
    let bytes0 = app.output_len();
    let t0 = Instant::now();
    app.type_text("stream");
    app.send(b"\r");
    let last_line = answer.trim_end().rsplit('\n').next().unwrap_or("").trim();
    let tail: String = last_line
        .chars()
        .rev()
        .take(20)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    wait(
        app,
        "the end of the answer",
        |s| s.contains(tail.trim()),
        Duration::from_secs(60),
    );
    let secs = t0.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(500));
    // Where the CPU went, by thread (threads that ended are not listed).
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let by_thread: Vec<String> = thread_ticks(pid)
        .into_iter()
        .map(|(name, t)| {
            (
                name.clone(),
                t - threads0.get(&name).copied().unwrap_or(0).min(t),
            )
        })
        .filter(|(_, t)| *t > 0)
        .map(|(name, t)| format!("{name} {:.2} s", t as f64 / hz))
        .collect();
    println!("  by thread: {}", by_thread.join(", "));
    StreamRun {
        secs,
        cpu: cpu_seconds(pid).unwrap_or(0.0) - cpu0,
        bytes: app.output_len() - bytes0,
        peak_kb: proc_status_kb(pid, "VmHWM:").unwrap_or(0),
    }
}

/// Markdown of about `size` bytes: headings, prose, lists, code blocks.
fn markdown_answer(size: usize) -> String {
    let mut s = String::new();
    let mut n = 0;
    while s.len() < size {
        n += 1;
        s.push_str(&format!("## Section {n}\n\nThe parser reads **tokens** one by one and builds a tree; each `node` keeps its span so errors can point at the source. This paragraph is long enough to wrap on a normal terminal width.\n\n- first point about section {n}\n- second point with `code`\n\n```rust\nfn section_{n}(input: &str) -> usize {{\n    input.lines().filter(|l| !l.is_empty()).count()\n}}\n```\n\n"));
    }
    s.push_str("The end of the answer is here.\n");
    s
}
