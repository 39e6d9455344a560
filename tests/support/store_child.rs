//! Lets a store test run parts of itself in separate OS processes: the test
//! binary re-executes itself with only the `child_entry` test selected and an
//! environment variable saying what to do.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use cairn::conversation::{Message, Part, ResultContent, Role};
use cairn::store::{MessageMeta, SessionId, Store};

pub const ROLE_VAR: &str = "CAIRN_STORE_CHILD";

/// Starts this test binary as a child doing `role` with `args`.
pub fn spawn(role: &str, args: &[&str], envs: &[(&str, &str)]) -> Child {
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        "store::child_entry",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(ROLE_VAR, format!("{role}\u{1f}{}", args.join("\u{1f}")))
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.spawn().expect("spawn child test process")
}

/// The child side; does nothing in a normal test run.
pub fn run_if_child() {
    let Ok(spec) = std::env::var(ROLE_VAR) else {
        return;
    };
    let mut fields = spec.split('\u{1f}');
    match fields.next() {
        Some("writer") => {
            let db = PathBuf::from(fields.next().expect("db path"));
            let session = SessionId(fields.next().expect("session id").to_string());
            let count: u64 = fields.next().expect("count").parse().expect("count number");
            let label = fields.next().expect("label").to_string();
            write_loop(&db, &session, count, &label);
        }
        Some("default_path") => {
            let path = cairn::store::default_path().expect("a data directory");
            println!("path {}", path.display());
        }
        other => panic!("unknown child role {other:?}"),
    }
}

/// Appends messages one by one and acknowledges each only after its commit
/// returned. `count == 0` writes until killed.
fn write_loop(db: &std::path::Path, session: &SessionId, count: u64, label: &str) {
    let mut store = Store::open(db).expect("open store in child");
    let out = std::io::stdout();
    let mut i = 0u64;
    while count == 0 || i < count {
        let message = if i.is_multiple_of(2) {
            Message::user_text(format!("{label} message {i}"))
        } else {
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult {
                    call_id: format!("c{i}"),
                    content: vec![ResultContent::text(format!(
                        "{label} output {i}\n{}",
                        "compiling crate ... ok\n".repeat(40)
                    ))],
                    is_error: false,
                }],
            }
        };
        let id = store
            .append_message(
                session,
                &message,
                &MessageMeta {
                    turn: i,
                    ..Default::default()
                },
            )
            .expect("append in child");
        let mut lock = out.lock();
        // The parent stops reading before it kills us: a closed pipe just
        // means stop.
        if writeln!(lock, "ack {label} {i} {}", id.0).is_err() || lock.flush().is_err() {
            return;
        }
        i += 1;
    }
}
