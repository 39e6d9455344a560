//! Builds (once) a session database the size of a heavy user's history:
//! 10,000 sessions, 1,000,000 messages of mixed prompts, answers, tool calls
//! and tool outputs, one session holding 5,000 messages. The file is cached
//! under `target/` and reused while the schema version stays the same.

use std::path::PathBuf;
use std::time::Instant;

use cairn::conversation::{Message, Part, ResultContent, Role};
use cairn::store::{SCHEMA_VERSION, Store, message_search_text};
use rusqlite::{Connection, params};

pub const SESSIONS: usize = 10_000;
pub const MESSAGES: usize = 1_000_000;
pub const BIG_SESSION: usize = 5_000;
pub const PROJECTS: usize = 50;

/// A small, fast, deterministic generator; the fixture must be the same on
/// every machine so runs compare.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Words drawn with a Zipf-like law, as in real text: a few very common, a
/// long tail of rare ones.
struct Vocabulary {
    words: Vec<String>,
    cdf: Vec<f64>,
}

const COMMON: &[&str] = &[
    "the",
    "to",
    "a",
    "in",
    "is",
    "it",
    "and",
    "of",
    "this",
    "that",
    "file",
    "error",
    "test",
    "function",
    "fix",
    "build",
    "cargo",
    "add",
    "use",
    "return",
    "value",
    "type",
    "struct",
    "impl",
    "module",
    "line",
    "failed",
    "warning",
    "compile",
    "run",
    "change",
    "should",
    "now",
    "config",
    "path",
    "string",
    "result",
    "option",
    "async",
    "tokio",
    "trait",
    "lifetime",
    "borrow",
    "checker",
    "connection",
    "refused",
    "timeout",
    "request",
    "response",
    "parse",
    "json",
    "serde",
    "database",
    "query",
    "index",
    "cache",
    "thread",
    "panic",
    "unwrap",
];

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "ta", "shi", "vo", "pe", "zu", "bra", "qui", "dex", "tor", "lin",
    "gar", "fen", "hul", "jor", "wex", "sna", "plo", "cri", "dum",
];

impl Vocabulary {
    fn new(rng: &mut Rng) -> Self {
        let mut words: Vec<String> = COMMON.iter().map(|w| w.to_string()).collect();
        while words.len() < 30_000 {
            let n = 2 + rng.below(3);
            let w: String = (0..n)
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect();
            words.push(w);
        }
        let mut total = 0.0;
        let cdf = (1..=words.len())
            .map(|rank| {
                total += 1.0 / (rank as f64).powf(1.07);
                total
            })
            .collect::<Vec<_>>();
        let cdf = cdf.into_iter().map(|c| c / total).collect();
        Vocabulary { words, cdf }
    }

    fn word(&self, rng: &mut Rng) -> &str {
        let u = rng.unit();
        let i = self
            .cdf
            .partition_point(|c| *c < u)
            .min(self.words.len() - 1);
        &self.words[i]
    }

    /// `min` to `min + spread - 1` words.
    fn words(&self, rng: &mut Rng, min: usize, spread: usize) -> String {
        let n = min + rng.below(spread);
        self.sentence(rng, n)
    }

    fn sentence(&self, rng: &mut Rng, words: usize) -> String {
        let mut s = String::with_capacity(words * 7);
        for i in 0..words {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(self.word(rng));
        }
        s
    }
}

fn tool_output(vocab: &Vocabulary, rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => {
            let mut out = String::new();
            for _ in 0..(3 + rng.below(8)) {
                out.push_str(&format!(
                    "   Compiling {} v0.{}.{}\n",
                    vocab.word(rng),
                    rng.below(20),
                    rng.below(10)
                ));
            }
            if rng.below(3) == 0 {
                out.push_str(&format!(
                    "error[E0{}]: {}\n  --> src/{}.rs:{}:{}\n",
                    300 + rng.below(400),
                    vocab.sentence(rng, 8),
                    vocab.word(rng),
                    rng.below(900),
                    rng.below(80)
                ));
            }
            out
        }
        1 => {
            let mut out = String::new();
            for n in 1..(4 + rng.below(10)) {
                out.push_str(&format!("{n:>4}  {}\n", vocab.words(rng, 3, 6)));
            }
            out
        }
        2 => format!(
            "thread 'main' panicked at src/{}.rs:{}: {}",
            vocab.word(rng),
            rng.below(500),
            vocab.sentence(rng, 10)
        ),
        _ => vocab.words(rng, 10, 30),
    }
}

/// The message at `seq` of a session, cycling through the shape of a real
/// exchange: prompt, call, output, answer.
fn message(vocab: &Vocabulary, rng: &mut Rng, seq: usize) -> Message {
    match seq % 4 {
        0 => Message::user_text(vocab.words(rng, 6, 25)),
        1 => {
            let (name, input) = match rng.below(3) {
                0 => (
                    "bash",
                    serde_json::json!({"command": format!("cargo {} --{}", vocab.word(rng), vocab.word(rng))}),
                ),
                1 => (
                    "view",
                    serde_json::json!({"path": format!("src/{}/{}.rs", vocab.word(rng), vocab.word(rng))}),
                ),
                _ => (
                    "edit",
                    serde_json::json!({
                        "path": format!("src/{}.rs", vocab.word(rng)),
                        "old_string": vocab.sentence(rng, 4),
                        "new_string": vocab.sentence(rng, 5),
                    }),
                ),
            };
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text {
                        text: vocab.words(rng, 4, 10),
                    },
                    Part::ToolCall {
                        id: format!("call_{}", rng.next() % 1_000_000_000),
                        name: name.into(),
                        input,
                    },
                ],
            }
        }
        2 => Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "call".into(),
                content: vec![ResultContent::text(tool_output(vocab, rng))],
                is_error: rng.below(6) == 0,
            }],
        },
        _ => Message::assistant_text(vocab.words(rng, 10, 50)),
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// The fixture's path, generating it first when it is not cached.
pub fn ensure_fixture() -> PathBuf {
    let dir = target_dir().join("store-fixture");
    let path = dir.join(format!("sessions-v{SCHEMA_VERSION}-10k-1m.db"));
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).expect("create fixture directory");
    let partial = dir.join("generating.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", partial.display()));
    }
    let started = Instant::now();
    drop(Store::open(&partial).expect("create fixture schema"));
    generate(&partial);
    std::fs::rename(&partial, &path).expect("move fixture into place");
    eprintln!(
        "generated {} in {:.1} s ({} MB)",
        path.display(),
        started.elapsed().as_secs_f64(),
        std::fs::metadata(&path)
            .map(|m| m.len() / 1_000_000)
            .unwrap_or(0)
    );
    path
}

fn generate(path: &std::path::Path) {
    let mut conn = Connection::open(path).expect("open fixture");
    // Sessions are written after their messages, once their totals are
    // known, so the foreign key is checked by construction, not by SQLite.
    conn.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -400000;
         PRAGMA foreign_keys = OFF;",
    )
    .expect("fast pragmas");
    let mut rng = Rng(0x5EED);
    let vocab = Vocabulary::new(&mut rng);
    let year_ago: i64 = 1_750_000_000_000;
    let per_session = (MESSAGES - BIG_SESSION) / (SESSIONS - 1);
    let mut longer = (MESSAGES - BIG_SESSION) - per_session * (SESSIONS - 1);

    let tx = conn.transaction().expect("begin");
    {
        let mut session_stmt = tx
            .prepare(
                "INSERT INTO sessions (id, title, cwd, project_root, provider, model, created_at,
                     updated_at, input_tokens, output_tokens, cost, message_count, first_prompt)
                 VALUES (?1, ?2, ?3, ?3, 'anthropic', 'claude-sonnet', ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )
            .expect("prepare sessions");
        let mut message_stmt = tx
            .prepare(
                "INSERT INTO messages (session_id, seq, role, parts, created_at, model, usage,
                     turn, status, cost, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'active', ?9, ?10)",
            )
            .expect("prepare messages");
        for s in 0..SESSIONS {
            let count = if s == 0 {
                BIG_SESSION
            } else if longer > 0 {
                longer -= 1;
                per_session + 1
            } else {
                per_session
            };
            let created = year_ago + (s as i64) * 3_000_000 + rng.below(1_000_000) as i64;
            let id = uuid::Uuid::new_v7(uuid::Timestamp::from_unix(
                uuid::NoContext,
                (created / 1000) as u64,
                ((created % 1000) * 1_000_000) as u32,
            ))
            .hyphenated()
            .to_string();
            let root = format!(
                "/home/dev/projects/{}",
                vocab.words[100 + (rng.below(PROJECTS * PROJECTS) as f64).sqrt() as usize]
            );
            let mut first_prompt = None;
            let (mut input, mut output) = (0i64, 0i64);
            let mut at = created;
            for seq in 0..count {
                at += 500 + rng.below(20_000) as i64;
                let msg = message(&vocab, &mut rng, seq);
                if first_prompt.is_none() && msg.role == Role::User {
                    first_prompt = Some(msg.text().chars().take(200).collect::<String>());
                }
                let assistant = msg.role == Role::Assistant;
                let usage = assistant.then(|| {
                    let (i, o) = (2_000 + rng.below(50_000) as i64, 50 + rng.below(800) as i64);
                    input += i;
                    output += o;
                    format!("{{\"input_tokens\":{i},\"output_tokens\":{o}}}")
                });
                message_stmt
                    .execute(params![
                        id,
                        seq as i64 + 1,
                        if assistant { "assistant" } else { "user" },
                        serde_json::to_string(&msg.parts).expect("serialise parts"),
                        at,
                        assistant.then_some("claude-sonnet"),
                        usage,
                        (seq / 4) as i64,
                        assistant.then_some(0.001),
                        message_search_text(&msg.parts),
                    ])
                    .expect("insert message");
            }
            let title = (rng.below(3) > 0).then(|| vocab.words(&mut rng, 3, 4));
            session_stmt
                .execute(params![
                    id,
                    title,
                    root,
                    created,
                    at,
                    input,
                    output,
                    (input as f64) * 3e-6,
                    count as i64,
                    first_prompt
                ])
                .expect("insert session");
        }
    }
    tx.commit().expect("commit fixture");
    // No FTS 'optimize': a real database's index is in whatever segments
    // automerge left, and the benchmark should see that.
    conn.execute_batch("PRAGMA journal_mode = WAL; ANALYZE;")
        .expect("finish fixture");
}
