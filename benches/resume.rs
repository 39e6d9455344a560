//! Resuming a 5,000-message session until its first frame is drawn: load
//! from the store, rebuild the transcript, draw at 120×40.
//!
//!     cargo bench --bench resume

use std::hint::black_box;

use cairn::conversation::{Message, Part, ResultContent, Role};
use cairn::permission::Mode;
use cairn::store::{MessageMeta, NewSession, Store, ToolRun};
use cairn::tui::model::Model;
use cairn::tui::theme::Theme;
use cairn::tui::view::view;
use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

fn fixture(dir: &std::path::Path) -> (std::path::PathBuf, cairn::store::SessionId) {
    let path = dir.join("resume.db");
    let mut store = Store::open(&path).unwrap();
    let id = store
        .create_session(&NewSession {
            cwd: dir.to_path_buf(),
            project_root: Some(dir.to_path_buf()),
            provider: "bench".into(),
            model: "claude-sonnet-4-5".into(),
            parent_id: None,
        })
        .unwrap();
    let mut turn = 0;
    let mut n = 0;
    while n < 5_000 {
        turn += 1;
        let msgs = [
            Message::user_text(format!(
                "step {turn}: fix the failing test in src/parser.rs"
            )),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text {
                        text: "Let me look at the parser first.".into(),
                    },
                    Part::ToolCall {
                        id: format!("c{turn}"),
                        name: "view".into(),
                        input: json!({"file_path": "src/parser.rs"}),
                    },
                ],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult {
                    call_id: format!("c{turn}"),
                    content: vec![ResultContent::text("     1\tfn parse() {}\n".repeat(40))],
                    is_error: false,
                }],
            },
            Message::assistant_text(format!(
                "## Turn {turn}\n\nThe parser drops the last **token**; here is the fix:\n\n```rust\nfn parse(input: &str) -> usize {{\n    input.len()\n}}\n```\n\n- checked with `cargo test`\n"
            )),
        ];
        for m in msgs {
            store
                .append_message(
                    &id,
                    &m,
                    &MessageMeta {
                        turn,
                        ..Default::default()
                    },
                )
                .unwrap();
            n += 1;
        }
        // Every fourth call ended as an edit with its diff kept, as the
        // store records it for the interface.
        let file: String = (0..100).map(|i| format!("fn f{i}() {{ {i} }}\n")).collect();
        let display = (turn % 4 == 0).then(|| {
            json!({"kind": "diff", "path": "src/parser.rs", "old": file,
                   "new": file.replace("f50()", "g50()"), "added": 1, "removed": 1})
        });
        store
            .record_tool_run(
                &id,
                &ToolRun {
                    call_id: format!("c{turn}"),
                    turn,
                    status: cairn::conversation::ToolStatus::Done,
                    display,
                    elapsed_ms: Some(120),
                },
            )
            .unwrap();
    }
    (path, id)
}

fn resume(c: &mut Criterion) {
    cairn::tui::highlight::ensure_loaded();
    let dir = tempfile::tempdir().unwrap();
    let (path, id) = fixture(dir.path());
    c.bench_function("resume_5000_messages_to_first_frame_120x40", |b| {
        b.iter(|| {
            let store = Store::open(&path).unwrap();
            let loaded = cairn::sessions::load(&store, &id).unwrap();
            let mut m = Model::new(
                "bench".into(),
                "m".into(),
                Mode::Smart,
                dir.path().to_path_buf(),
                Theme::default(),
            );
            cairn::tui::history::rebuild(&mut m, &loaded.messages, &loaded.runs);
            let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
            term.draw(|f| view(&mut m, f)).unwrap();
            black_box(m.transcript.len())
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = resume
}
criterion_main!(benches);
