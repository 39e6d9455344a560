//! Frame cost of the virtual transcript: long sessions, streaming, resize.
//! Targets: a 10,000-cell frame ≤ 1 ms and within 1.5× of a 100-cell one;
//! a 12-byte delta on a 100 KB answer + frame ≤ 0.5 ms; resize + frame
//! of 10,000 cells ≤ 16 ms.

use std::hint::black_box;
use std::path::PathBuf;

use cairn::permission::Mode;
use cairn::protocol::{AgentEvent, ToolStatus, TurnOutcome};
use cairn::tools::ToolDisplay;
use cairn::tui::model::Model;
use cairn::tui::msg::Msg;
use cairn::tui::theme::Theme;
use cairn::tui::update::update;
use cairn::tui::view::view;
use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const ANSWER: &str = "Here is what changed and why it matters:\n\n- the parser now **keeps** spans\n- errors carry `line:col`\n\n```rust\nfn parse(input: &str) -> Result<Ast, Error> {\n    let tokens = lex(input)?;\n    Parser::new(tokens).run()\n}\n```\n\nRun `cargo test` to check.\n";

fn ev(m: &mut Model, e: AgentEvent) {
    update(m, Msg::Agent(e));
}

fn model() -> Model {
    cairn::tui::highlight::ensure_loaded();
    let mut m = Model::new(
        "bench".into(),
        "model".into(),
        Mode::Smart,
        PathBuf::from("/work/project"),
        Theme::default(),
    );
    m.usage.context_window = 200_000;
    m
}

/// About `cells` cells: prompts, answers with code, tool calls, diffs.
fn session(cells: usize) -> Model {
    let mut m = model();
    let mut turn = 0u64;
    while m.transcript.len() < cells {
        turn += 1;
        ev(
            &mut m,
            AgentEvent::TurnStarted {
                turn,
                prompt: format!("request number {turn}: please fix the parser"),
            },
        );
        ev(&mut m, AgentEvent::ResponseStarted);
        ev(&mut m, AgentEvent::TextDelta(ANSWER.into()));
        let id = format!("c{turn}");
        ev(
            &mut m,
            AgentEvent::ToolCallStarted {
                call_id: id.clone(),
                name: "bash".into(),
                input: serde_json::json!({}),
                summary: "cargo test".into(),
            },
        );
        let out: String = (0..20).map(|i| format!("test t{i} ... ok\n")).collect();
        ev(
            &mut m,
            AgentEvent::ToolCallFinished {
                call_id: id.clone(),
                status: ToolStatus::Done,
                output: out,
                display: None,
            },
        );
        let id = format!("e{turn}");
        ev(
            &mut m,
            AgentEvent::ToolCallStarted {
                call_id: id.clone(),
                name: "edit".into(),
                input: serde_json::json!({}),
                summary: "src/parse.rs".into(),
            },
        );
        let old: String = (0..30).map(|i| format!("let x{i} = {i};\n")).collect();
        let new = old
            .replace("x7 = 7", "x7 = 70")
            .replace("x20 = 20", "x20 = 21");
        ev(
            &mut m,
            AgentEvent::ToolCallFinished {
                call_id: id,
                status: ToolStatus::Done,
                output: "edited".into(),
                display: Some(ToolDisplay::Diff(cairn::diff::FileDiff {
                    path: "src/parse.rs".into(),
                    old,
                    new,
                    added: 2,
                    removed: 2,
                })),
            },
        );
        ev(
            &mut m,
            AgentEvent::TurnFinished {
                turn,
                outcome: TurnOutcome::Completed,
            },
        );
    }
    m
}

fn frames(c: &mut Criterion) {
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    for n in [100usize, 10_000] {
        let mut m = session(n);
        term.draw(|f| view(&mut m, f)).unwrap();
        c.bench_function(&format!("frame_{n}_cells_200x60"), |b| {
            b.iter(|| {
                term.draw(|f| view(black_box(&mut m), f)).unwrap();
            })
        });
    }
}

/// A session of 100 cells whose last answer is streaming and already
/// holds about 100 KB, drawn once.
fn streaming_session(term: &mut Terminal<TestBackend>) -> Model {
    let mut m = session(100);
    ev(
        &mut m,
        AgentEvent::TurnStarted {
            turn: 999,
            prompt: "write a lot".into(),
        },
    );
    ev(&mut m, AgentEvent::ResponseStarted);
    let mut text = String::new();
    while text.len() < 100_000 {
        text.push_str(ANSWER);
    }
    for piece in text.as_bytes().chunks(4096) {
        ev(
            &mut m,
            AgentEvent::TextDelta(String::from_utf8_lossy(piece).into_owned()),
        );
        term.draw(|f| view(&mut m, f)).unwrap();
    }
    m
}

/// Deltas appended to a 100 KB answer. The answer is rebuilt (untimed)
/// every 2,000 deltas so it stays near 100 KB however many iterations
/// criterion asks for. A paragraph ends every 64 deltas (~770
/// characters), as in a real answer.
/// Times `step` on `iters` deltas appended to the streaming answer,
/// rebuilding the session (untimed) every 2,000 deltas.
fn timed_deltas(
    iters: u64,
    state: &mut (Model, u32, u32),
    term: &mut Terminal<TestBackend>,
    mut step: impl FnMut(&mut Model, &mut Terminal<TestBackend>),
) -> std::time::Duration {
    let (m, n, since_reset) = state;
    let mut total = std::time::Duration::ZERO;
    for _ in 0..iters {
        if *since_reset == 2_000 {
            *m = streaming_session(term);
            *since_reset = 0;
        }
        *since_reset += 1;
        *n += 1;
        let delta = if n.is_multiple_of(64) {
            "end.\n\nNext "
        } else {
            "more words. "
        };
        let t = std::time::Instant::now();
        ev(m, AgentEvent::TextDelta(black_box(delta).into()));
        step(m, term);
        total += t.elapsed();
    }
    total
}

/// Deltas appended to a 100 KB answer. The answer is rebuilt (untimed)
/// every 2,000 deltas so it stays near 100 KB however many iterations
/// criterion asks for. A paragraph ends every 64 deltas (~770
/// characters), as in a real answer.
fn streaming(c: &mut Criterion) {
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut state = (streaming_session(&mut term), 0u32, 0u32);
    c.bench_function("delta_12_bytes_on_100kb_answer_and_frame", |b| {
        b.iter_custom(|iters| {
            timed_deltas(iters, &mut state, &mut term, |m, t| {
                t.draw(|f| view(m, f)).unwrap();
            })
        })
    });
    state.2 = 2_000;
    c.bench_function("delta_12_bytes_layout_only", |b| {
        b.iter_custom(|iters| {
            timed_deltas(iters, &mut state, &mut term, |m, _| {
                let ctx = cairn::tui::widgets::cell::RenderCtx {
                    theme: &m.theme,
                    styles: &m.styles,
                    now: m.now,
                };
                let i = m.transcript.len() - 1;
                if let Some(cell) = m.transcript.get_mut(i) {
                    black_box(cell.layout(198, &ctx).len());
                }
            })
        })
    });
    let mut nothing = Terminal::new(TestBackend::new(200, 60)).unwrap();
    c.bench_function("terminal_draw_nothing_200x60", |b| {
        b.iter(|| {
            nothing.draw(|_| {}).unwrap();
        })
    });
    let mut empty = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut blank = model();
    c.bench_function("frame_empty_session_200x60", |b| {
        b.iter(|| {
            empty.draw(|f| view(black_box(&mut blank), f)).unwrap();
        })
    });
}

fn resize(c: &mut Criterion) {
    let mut m = session(10_000);
    let mut wide = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut narrow = Terminal::new(TestBackend::new(120, 60)).unwrap();
    wide.draw(|f| view(&mut m, f)).unwrap();
    let mut flip = false;
    c.bench_function("resize_10000_cells_and_frame", |b| {
        b.iter(|| {
            flip = !flip;
            let t = if flip { &mut narrow } else { &mut wide };
            update(
                &mut m,
                Msg::Resize {
                    width: t.size().map(|s| s.width).unwrap_or(0),
                    height: 60,
                },
            );
            t.draw(|f| view(&mut m, f)).unwrap();
        })
    });
}

criterion_group!(benches, frames, streaming, resize);
criterion_main!(benches);
