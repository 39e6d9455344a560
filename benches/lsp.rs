//! Checked edits with real servers — pyright and typescript-language-server
//! from tests/lsp_servers, rust-analyzer from rustup — per server: the time
//! from proposing an edit to the verdict, the first one (the server
//! starting and analysing the project) and then with the server warm, each
//! edit a new text so nothing comes from the cache; the memory the server
//! adds; and cairn's own CPU time while the server starts and indexes (the
//! first edit). Prints medians; a server that is not installed is skipped,
//! saying why.
//!
//!     cargo bench --bench lsp

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn::lsp::LspManager;

const RUNS: usize = 15;
const ROUNDS: usize = 3;

fn median<T: Ord + Copy>(mut v: Vec<T>) -> T {
    v.sort();
    v[v.len() / 2]
}

/// This process's CPU time (user + system), its children not included.
fn own_cpu() -> Duration {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid rusage for the call to fill.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| Duration::new(v.tv_sec as u64, v.tv_usec as u32 * 1000);
    t(u.ru_utime) + t(u.ru_stime)
}

/// One server's case: its config, a project, and the file an edit breaks.
struct Case {
    name: &'static str,
    config: String,
    file: &'static str,
    setup: fn(&Path) -> String,
    /// The edited text, unique per run `i`, with one new error.
    broken: fn(&str, usize) -> String,
}

fn python(ws: &Path) -> String {
    let mut old = String::from("import os\n\n");
    for i in 0..200 {
        old.push_str(&format!("def f{i}(x):\n    return x + {i}\n\n"));
    }
    std::fs::write(ws.join("app.py"), &old).expect("write");
    old
}

fn typescript(ws: &Path) -> String {
    std::fs::write(
        ws.join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true}, "include": ["*.ts"]}"#,
    )
    .expect("write");
    let mut old = String::new();
    for i in 0..200 {
        old.push_str(&format!(
            "export function f{i}(x: number): number {{\n  return x + {i};\n}}\n\n"
        ));
    }
    std::fs::write(ws.join("app.ts"), &old).expect("write");
    old
}

fn rust(ws: &Path) -> String {
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"bench\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .expect("write");
    std::fs::create_dir_all(ws.join("src")).expect("src");
    let mut old = String::from("fn main() {}\n\n");
    for i in 0..200 {
        old.push_str(&format!(
            "pub fn f{i}(x: u32) -> u32 {{\n    return x + {i};\n}}\n\n"
        ));
    }
    std::fs::write(ws.join("src/main.rs"), &old).expect("write");
    old
}

fn installed(program: &Path) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn main() {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lsp_servers/node_modules/.bin");
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let cases = [
        Case {
            name: "pyright",
            config: format!(
                "[lsp.pyright]\ncommand = \"{}\"\n",
                bin.join("pyright-langserver").display()
            ),
            file: "app.py",
            setup: python,
            broken: |old, i| old.replace("return x + 7\n", &format!("return z{i} + 7\n")),
        },
        Case {
            name: "typescript",
            config: format!(
                "[lsp.typescript]\ncommand = \"{}\"\n",
                bin.join("typescript-language-server").display()
            ),
            file: "app.ts",
            setup: typescript,
            broken: |old, i| old.replace("return x + 7;", &format!("return z{i} + 7;")),
        },
        Case {
            name: "rust-analyzer",
            config: String::new(),
            file: "src/main.rs",
            setup: rust,
            // A type error rust-analyzer finds itself, without `cargo check`.
            broken: |old, i| old.replace("return x + 7;", &format!("return \"z{i}\";")),
        },
    ];
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    for case in cases
        .iter()
        .filter(|c| only.as_deref().is_none_or(|o| c.name == o))
    {
        let program = match case.name {
            "pyright" => bin.join("pyright-langserver"),
            "typescript" => bin.join("typescript-language-server"),
            _ => PathBuf::from("rust-analyzer"),
        };
        let present = if case.name == "rust-analyzer" {
            installed(&program)
        } else {
            program.exists()
        };
        if !present {
            println!("{}: skipped, not installed", case.name);
            continue;
        }
        rt.block_on(measure(case));
    }
}

async fn measure(case: &Case) {
    let (mut firsts, mut warms, mut memory, mut cpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let ws = dir.path().to_path_buf();
        let old = (case.setup)(&ws);
        let file = ws.join(case.file);
        let config = cairn::config::parse(&case.config).expect("config").lsp;
        let m = LspManager::new(
            &config,
            ws.clone(),
            cairn::sandbox::Sandbox::default_for_user(),
            false,
        );
        let (started, cpu_before) = (Instant::now(), own_cpu());
        let new = (case.broken)(&old, 1000);
        let v = m.check(&file, &old, &new, Duration::from_secs(180)).await;
        firsts.push(started.elapsed());
        cpu.push(own_cpu() - cpu_before);
        assert!(
            format!("{v:?}").contains("new_errors: 1"),
            "{}: {v:?} (round {round})",
            case.name
        );
        for i in 0..RUNS {
            let new = (case.broken)(&old, i);
            let t = Instant::now();
            let v = m.check(&file, &old, &new, Duration::from_secs(60)).await;
            warms.push(t.elapsed());
            assert!(
                format!("{v:?}").contains("new_errors: 1"),
                "{}: {v:?}",
                case.name
            );
        }
        memory.push(m.memory_kib());
        m.shutdown().await;
    }
    let first = median(firsts.clone());
    println!(
        "{}: first edit (start + analysis) median {first:?} of {ROUNDS}; warm edit to verdict \
         median {:?} of {}; memory added median {} MiB; cairn's own CPU during the first \
         edit median {:?} ({:.1}% of one core)",
        case.name,
        median(warms),
        ROUNDS * RUNS,
        median(memory) / 1024,
        median(cpu.clone()),
        100.0 * median(cpu).as_secs_f64() / first.as_secs_f64()
    );
}
