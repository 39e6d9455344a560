//! A long session in the release binary (issue 32): 2,000 turns against
//! the scripted model in a 120×40 pseudo-terminal, each turn a tool call
//! (`view`) and a markdown answer of about 1 KB with a code block, streamed
//! in 128-character pieces; `/compact` at turns 700 and 1,400. Reports,
//! every 250 turns, the process's resident memory, the time from a key to
//! its echo (a frame's cost), the CPU used and the size of the last request;
//! at the end, the growth per turn between turn 100 and the last.
//!
//!     cargo bench --bench long_session
//!
//! Targets: frame time flat (the last echo within 1.5× of the one at turn
//! 100) and memory within +40 KB per turn. `CAIRN_BENCH_TURNS` runs fewer
//! turns (compacting at 35% and 70% of them), `CAIRN_BENCH_EVERY` reports
//! every so many turns, and `CAIRN_BENCH_BIN` runs another build of cairn
//! (one with symbols, to profile).

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
use serde_json::json;

fn wait_drained(mock: &MockModel, what: &str) {
    let start = Instant::now();
    while mock.pending() > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}: {} replies left",
            mock.pending()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The answer of turn `n`: prose, a list, a Rust block that differs per
/// turn (so no two are highlighted alike), and a last line to wait for.
fn answer(n: usize) -> String {
    format!(
        "## Step {n}\n\nI read `notes.md` and the parser now **keeps** its spans, so an error can point at the exact source position. This paragraph is long enough to wrap on a normal terminal width, as answers do.\n\n- the lexer hands out tokens with their offsets ({n})\n- errors carry `line:col` and the text around them\n- the tree stores spans on every node\n\n```rust\nfn step_{n}(input: &str) -> Result<usize, String> {{\n    let tokens = input.split_whitespace().count();\n    if tokens > {n} {{\n        return Err(format!(\"too many tokens: {{tokens}}\"));\n    }}\n    Ok(tokens)\n}}\n```\n\nRun `cargo test` to check. Next I will look at the error messages again and tidy the wording where it reads badly.\n\nFinished turn {n} here.\n"
    )
}

/// `/compact`, answered until it is done: a long conversation is
/// summarised in more than one request, each needing a reply.
fn compact(app: &mut PtyApp, mock: &MockModel, n: usize) {
    let summary = || {
        Reply::text(&format!(
            "## Goal\nKeep spans in the parser (compacted at turn {n})."
        ))
        .when("You are summarising the earlier part")
    };
    app.type_text("/compact");
    std::thread::sleep(Duration::from_millis(20));
    app.send(b"\r");
    let start = Instant::now();
    loop {
        if mock.pending() == 0 {
            mock.push(summary());
        }
        let screen = app.screen();
        if screen.contains("context compacted") {
            break;
        }
        assert!(
            !screen.contains("Could not compact"),
            "the compaction at turn {n} failed:\n{screen}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the compaction at turn {n} did not end:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(300));
}

/// Median key-to-echo time over `keys` keystrokes typed into the prompt,
/// which is then emptied again.
fn echo_ms(app: &mut PtyApp, keys: usize) -> f64 {
    let mut lat = Vec::new();
    for i in 0..keys {
        let c = (b'a' + (i % 26) as u8) as char;
        let before = app.screen();
        let t = Instant::now();
        app.send(c.to_string().as_bytes());
        wait(
            &*app,
            "the key echoed",
            |s| s != before,
            Duration::from_secs(5),
        );
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        std::thread::sleep(Duration::from_millis(15));
    }
    for _ in 0..keys {
        app.send(b"\x7f");
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(Duration::from_millis(100));
    median(lat)
}

fn main() {
    let turns: usize = std::env::var("CAIRN_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let every: usize = std::env::var("CAIRN_BENCH_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(250);
    let compact_at = [turns * 35 / 100, turns * 70 / 100];
    // `CAIRN_BENCH_BIN`: another build of cairn (one with symbols, to
    // profile).
    let bin = std::env::var_os("CAIRN_BENCH_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_BIN_EXE_cairn")).to_path_buf());
    let bin = bin.as_path();
    let rt = pty_bench::runtime();
    let home = tempfile::tempdir().unwrap();
    let project = pty_bench::project();
    let notes: String = (1..=12)
        .map(|i| format!("Note {i}: the parser keeps spans; errors point at the source.\n"))
        .collect();
    std::fs::write(project.path().join("notes.md"), notes).unwrap();
    let mock = rt.block_on(MockModel::start(Format::Anthropic, vec![]));
    let vars = pty_bench::vars(home.path(), &mock.url());
    let mut app = pty_bench::start(bin, &vars, project.path());
    let pid = app.pid().expect("pid");
    // The title is asked for once, after the first turn.
    mock.push(Reply::text("Bench").when("<request>"));

    let start = Instant::now();
    let mut rows = Vec::new();
    let mut base: Option<(u64, f64)> = None;
    let mut cpu_mark = cpu_seconds(pid).unwrap_or(0.0);
    for n in 1..=turns {
        if compact_at.contains(&n) {
            compact(&mut app, &mock, n);
        }
        let ask = format!("turn-{n}-ask");
        mock.push(
            Reply::tool(
                &format!("tn-{n}-x"),
                "view",
                json!({"file_path": "notes.md"}),
            )
            .when(&ask),
        );
        mock.push(
            Reply::text(&answer(n))
                .chunk_chars(128)
                .chunk_delay(Duration::from_millis(1))
                .when(&format!("tn-{n}-x")),
        );
        app.type_text(&ask);
        std::thread::sleep(Duration::from_millis(10));
        app.send(b"\r");
        let last = format!("Finished turn {n} here.");
        wait(&app, &last, |s| s.contains(&last), Duration::from_secs(30));
        let report = n == 100 || n % every == 0 || n == turns;
        let request_kb = if report {
            let last = mock.requests().pop();
            last.map_or(0.0, |r| r.to_string().len() as f64 / 1024.0)
        } else {
            0.0
        };
        mock.forget_requests();
        if n == 1 {
            wait_drained(&mock, "the title");
        }
        if report {
            std::thread::sleep(Duration::from_millis(300));
            let rss = proc_status_kb(pid, "VmRSS:").unwrap_or(0);
            let echo = echo_ms(&mut app, 15);
            let cpu = cpu_seconds(pid).unwrap_or(0.0);
            println!(
                "turn {n:>5}: resident {:>6.1} MB, key echo median {echo:.2} ms, {:.2} CPU-s since the last row, last request {request_kb:.0} KB, {:.0} s in",
                rss as f64 / 1024.0,
                cpu - cpu_mark,
                start.elapsed().as_secs_f64()
            );
            cpu_mark = cpu;
            if n == 100 {
                base = Some((rss, echo));
            }
            rows.push((n, rss, echo));
        }
    }
    let (n_last, rss_last, echo_last) = *rows.last().expect("a row");
    let peak = proc_status_kb(pid, "VmHWM:").unwrap_or(0);
    if let Some((rss_100, echo_100)) = base.filter(|_| n_last > 100) {
        let per_turn = (rss_last as f64 - rss_100 as f64) / (n_last - 100) as f64;
        println!(
            "{n_last} turns: memory {per_turn:+.1} KB per turn after turn 100 (target ≤ +40), peak {:.1} MB; key echo {echo_100:.2} ms at turn 100, {echo_last:.2} ms at turn {n_last} ({:.2}×, target ≤ 1.5×)",
            peak as f64 / 1024.0,
            echo_last / echo_100
        );
    }
    app.ctrl_c_to_quit();
    app.wait_exit(Duration::from_secs(10));
}
