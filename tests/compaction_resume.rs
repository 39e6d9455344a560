//! A day-long session: compaction survives quitting and resuming. Headless
//! through `cairn run -c`, against a scripted model that refuses requests
//! larger than its window.

use crate::{mock_model, test_home};
use cairn::conversation::Message;
use cairn::store::{MessageMeta, Store};
use mock_model::{Format, MockModel, Reply};
use serde_json::Value;
use test_home::TestHome;

const SUMMARY_SYSTEM: &str = "You write faithful, compact summaries";
/// The model's window, and the largest request body the scripted server
/// takes (about four bytes a token).
const WINDOW: usize = 32_000;
const MAX_BODY: usize = WINDOW * 4;

async fn run(home: &TestHome, mock: &MockModel, args: &[&str]) -> String {
    let out = home.command(&mock.url()).args(args).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stdout}\n{stderr}");
    stdout
}

fn is_summary_request(r: &Value) -> bool {
    r.to_string().contains(SUMMARY_SYSTEM)
}

/// Adds `turns` long turns to the only session in the test home's store.
fn grow_session(home: &TestHome, turns: u64) -> String {
    let db = home.home.path().join("data/cairn/sessions.db");
    let mut store = Store::open(&db).unwrap();
    let sessions = store.list_sessions(&Default::default()).unwrap();
    let id = sessions[0].id.clone();
    let first = store.load_messages(&id).unwrap().last().unwrap().2.turn + 1;
    let filler = "The parser change touches the tokenizer and the error paths. ".repeat(30);
    for turn in first..first + turns {
        let meta = |t| MessageMeta {
            turn: t,
            ..MessageMeta::default()
        };
        let prompt = Message::user_text(format!("old prompt number {turn}: look at module {turn}"));
        store.append_message(&id, &prompt, &meta(turn)).unwrap();
        let answer = Message::assistant_text(format!("old answer {turn}. {filler}"));
        store.append_message(&id, &answer, &meta(turn)).unwrap();
    }
    id.0
}

fn write_window(home: &TestHome, model: &str) {
    let dir = home.home.path().join("config/cairn");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!("[models.\"{model}\"]\ncontext_window = {WINDOW}\nmax_output = 4096\n"),
    )
    .unwrap();
}

#[tokio::test]
async fn a_300_turn_session_resumes_into_a_32k_window_and_stays_compacted() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Started."), Reply::text("A title")],
    )
    .await;
    run(&home, &mock, &["run", "old prompt number 1: begin"]).await;
    let model = mock.requests()[0]["model"].as_str().unwrap().to_string();
    // A day of work with a large-window model: about 150k tokens.
    let id = grow_session(&home, 299);
    write_window(&home, &model);
    mock.refuse_over(MAX_BODY);
    for _ in 0..40 {
        mock.push(Reply::text(
            "## Goal\nSUMMARY-MARK: the person walked through 300 modules.",
        ));
    }

    let before = mock.requests().len();
    let out = run(&home, &mock, &["run", "-c", "what is left to do?"]).await;
    assert!(
        out.contains("SUMMARY-MARK"),
        "the session still answers: {out}"
    );
    let asked = mock.requests()[before..].to_vec();
    let summaries = asked.iter().filter(|r| is_summary_request(r)).count();
    assert!(
        summaries >= 2,
        "summarised in pieces: {summaries} summary requests"
    );
    for r in &asked {
        let size = r.to_string().len();
        assert!(size <= MAX_BODY, "a request of {size} bytes was sent");
    }
    let answer = asked.last().unwrap().to_string();
    assert!(!is_summary_request(asked.last().unwrap()));
    assert!(answer.contains("SUMMARY-MARK"), "the summary is sent");
    assert!(answer.contains("what is left to do?"));
    assert!(
        !answer.contains("old prompt number 5:"),
        "old turns are not"
    );

    // Resumed again: no new summary, the summary and the later turns only.
    let before = mock.requests().len();
    run(&home, &mock, &["run", "-c", "and after that?"]).await;
    let asked = mock.requests()[before..].to_vec();
    assert_eq!(asked.len(), 1, "one request, no summary: {}", asked.len());
    let next = asked[0].to_string();
    assert!(next.contains("SUMMARY-MARK") && next.contains("what is left to do?"));
    assert!(next.contains("and after that?"));
    assert!(!next.contains("old prompt number 5:"));
    assert!(!next.contains("old prompt number 200:"));
    assert!(
        next.contains("old prompt number 299:"),
        "the recent turns stay verbatim"
    );

    // The export keeps the whole history and the summary where it happened.
    let md = run(&home, &mock, &["sessions", "export", &id]).await;
    assert!(
        md.contains("## Compaction") && md.contains("SUMMARY-MARK"),
        "{md:.300}"
    );
    assert!(md.contains("old prompt number 5:"));
}
