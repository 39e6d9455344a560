//! cairn's file tools on a large repository, timed against ripgrep on the
//! same tree and the same query in the same run (issue 32): `grep` against
//! `rg PATTERN`, `glob` against `rg --files -g GLOB`, `ls` and the `@`
//! completion list against `rg --files`; and `view` of a 2 GB file (its
//! first page, without reading the whole file).
//!
//!     cargo bench --bench large_tree
//!
//! The tree is generated once, deterministically: 200,000 files (160,000
//! tracked, 40,000 under ignored `build/` folders and `*.log` files) in a
//! git repository with a `.gitignore`, kept under `target/bench-tree/` and
//! reused. Prints medians of five warm runs; skips (with the reason) when
//! `rg` is not installed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn::conversation::ResultContent;
use cairn::tools::{Tool, ToolContext, ToolOutput};
use serde_json::{Value, json};

const TOP: usize = 200;
const SUB: usize = 10;
const FILES: usize = 80;
const IGNORED: usize = 20;
const RUNS: usize = 5;

fn main() {
    if Command::new("rg").arg("--version").output().is_err() {
        println!("large_tree: skipped — ripgrep (`rg`) is not installed to compare with");
        return;
    }
    let root = tree();
    census(&root);
    links(&root);
    if std::env::var_os("LARGE_TREE_ONLY_CENSUS").is_some() {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let ctx = ToolContext::new(root.clone());

    let grep = cairn::tools::grep::GrepTool;
    let glob = cairn::tools::glob::GlobTool;
    let ls = cairn::tools::ls::LsTool;
    let cases: [(&str, &dyn Tool, Value, Vec<&str>); 3] = [
        (
            "grep needle_7[0-9]{2}\\b",
            &grep,
            json!({"pattern": "needle_7[0-9]{2}\\b"}),
            vec!["-n", "needle_7[0-9]{2}\\b"],
        ),
        (
            "glob **/*.toml",
            &glob,
            json!({"pattern": "**/*.toml"}),
            vec!["--files", "-g", "*.toml"],
        ),
        ("ls .", &ls, json!({}), vec!["--files"]),
    ];
    for (name, tool, input, rg_args) in cases {
        let ours = median(time_runs(|| {
            let out = rt.block_on(tool.run(input.clone(), &ctx));
            assert!(!out.is_error, "{name}: {}", text(&out));
            text(&out).len()
        }));
        let theirs = median(time_runs(|| {
            let out = Command::new("rg")
                .args(&rg_args)
                .current_dir(&root)
                .output()
                .expect("rg runs");
            out.stdout.len()
        }));
        println!(
            "{name}: cairn {:.0} ms, rg {:.0} ms ({:.2}×), medians of {RUNS}",
            ms(ours),
            ms(theirs),
            ours.as_secs_f64() / theirs.as_secs_f64()
        );
    }

    let listed = median(time_runs(|| {
        cairn::tools::walk::workspace_files(&root, 20_000).len()
    }));
    println!(
        "@ completion list (first 20,000 paths): {:.1} ms, median of {RUNS}",
        ms(listed)
    );

    let big = big_file(&root);
    let view = cairn::tools::view::ViewTool;
    let path = big.to_string_lossy().into_owned();
    let page = rt.block_on(view.run(json!({"file_path": path}), &ctx));
    assert!(!page.is_error, "view: {}", text(&page));
    let first_page = median(time_runs(|| {
        let out = rt.block_on(view.run(json!({"file_path": path}), &ctx));
        text(&out).len()
    }));
    println!(
        "view of a 2 GB file, first page: {:.1} ms, median of {RUNS}",
        ms(first_page)
    );
}

/// The control-file census on the tree: taken once at a session's start,
/// checked after every tool call (nothing changed, the usual case).
fn census(root: &Path) {
    use cairn::sandbox::census::Census;
    let quarantine = std::env::temp_dir().join("cairn-bench-quarantine");
    let take = median(time_runs(|| {
        std::hint::black_box(Census::take(root));
        1
    }));
    let mut c = Census::take(root);
    let check = median(time_runs(|| c.check(&quarantine, &[]).len()));
    println!(
        "census: taken in {:.1} ms, checked in {:.2} ms, medians of {RUNS}",
        ms(take),
        ms(check)
    );
}

/// The walk for links and hard-linked files that leave the tree: taken at
/// the start of a project with an MCP server outside the sandbox (its
/// trust covers what the walk finds).
fn links(root: &Path) {
    use cairn::sandbox::workspace_changes::outward;
    let mut found = 0;
    let walk = median(time_runs(|| {
        let out = outward::find(root);
        found = out.targets.len() + out.shared.len();
        found
    }));
    println!(
        "links out of the tree: walked in {:.1} ms ({found} found), median of {RUNS}",
        ms(walk)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn text(out: &ToolOutput) -> String {
    out.content
        .iter()
        .filter_map(|c| match c {
            ResultContent::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// One warm-up run, then `RUNS` timed ones.
fn time_runs(mut f: impl FnMut() -> usize) -> Vec<Duration> {
    std::hint::black_box(f());
    (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .collect()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The generated repository, made once.
fn tree() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-tree/repo");
    let done = root.join(".bench-complete");
    if done.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("tree root");
    let start = Instant::now();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status();
    if !git.is_ok_and(|s| s.success()) {
        // The walkers only honour .gitignore inside a repository.
        std::fs::create_dir_all(root.join(".git")).expect(".git");
    }
    std::fs::write(root.join(".gitignore"), "build/\n*.log\n").expect(".gitignore");
    let mut n = 0usize;
    for t in 0..TOP {
        for s in 0..SUB {
            let dir = root.join(format!("pkg{t:03}/mod{s}"));
            std::fs::create_dir_all(&dir).expect("dir");
            for f in 0..FILES {
                let ext = ["rs", "py", "ts", "md", "toml"][f % 5];
                std::fs::write(dir.join(format!("file{f:02}.{ext}")), body(n)).expect("file");
                n += 1;
            }
            let ignored = dir.join("build");
            std::fs::create_dir_all(&ignored).expect("build dir");
            for f in 0..IGNORED {
                let name = if f % 2 == 0 {
                    format!("out{f:02}.o")
                } else {
                    format!("../trace{f:02}.log")
                };
                std::fs::write(ignored.join(name), body(n)).expect("ignored file");
                n += 1;
            }
        }
    }
    std::fs::write(&done, "").expect("stamp");
    println!(
        "generated {n} files under {} in {:.1} s",
        root.display(),
        start.elapsed().as_secs_f64()
    );
    root
}

/// A few lines of code; one file in 200 holds a `needle_NNN` to find.
fn body(n: usize) -> String {
    let mut s =
        format!("// file {n}\nfn item_{n}(input: &str) -> usize {{\n    input.len() + {n}\n}}\n");
    if n.is_multiple_of(200) {
        s.push_str(&format!("// needle_{}\n", n / 200));
    }
    s
}

/// A 2 GB text file (sparse where the filesystem allows) with a first page
/// of text.
fn big_file(root: &Path) -> PathBuf {
    let path = root.join("build/huge.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= 2 << 30) {
        return path;
    }
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str(&format!("line {i}: the log goes on\n"));
    }
    std::fs::write(&path, text).expect("big file");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open big file");
    f.set_len(2 << 30).expect("grow to 2 GB");
    path
}
