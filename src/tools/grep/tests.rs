use super::*;
use std::fs;

fn setup() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, ToolContext::new(root))
}

fn write(ctx: &ToolContext, rel: &str, content: &str) {
    let path = ctx.workspace.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, content).unwrap();
}

async fn grep(ctx: &ToolContext, input: Value) -> ToolOutput {
    GrepTool.run(input, ctx).await
}

#[tokio::test]
async fn finds_matches_grouped_by_file_with_line_numbers() {
    let (_d, ctx) = setup();
    write(&ctx, "src/main.rs", "use x;\nfn main() {\n}\n");
    write(&ctx, "src/lib.rs", "fn main_helper() {}\n");
    let out = grep(&ctx, json!({"pattern": "fn main"})).await;
    assert!(!out.is_error);
    assert_eq!(
        out.text_content(),
        "2 matching lines in 2 files\n\n\
         src/lib.rs:1: fn main_helper() {}\n\n\
         src/main.rs:2: fn main() {\n\n"
    );
}

#[tokio::test]
async fn respects_gitignore_and_skips_hidden_and_git() {
    let (_d, ctx) = setup();
    write(&ctx, ".gitignore", "target/\n*.log\n");
    write(&ctx, "target/debug/out.rs", "needle\n");
    write(&ctx, "run.log", "needle\n");
    write(&ctx, ".git/config", "needle\n");
    write(&ctx, ".hidden/x.rs", "needle\n");
    write(&ctx, "kept.rs", "needle\n");
    let text = grep(&ctx, json!({"pattern": "needle"}))
        .await
        .text_content();
    assert!(text.contains("kept.rs:1: needle"), "{text}");
    for skipped in ["target", "run.log", ".git", ".hidden"] {
        assert!(!text.contains(skipped), "{skipped} in {text}");
    }
}

#[tokio::test]
async fn include_filters_file_names() {
    let (_d, ctx) = setup();
    write(&ctx, "a/b.rs", "hit\n");
    write(&ctx, "c.ts", "hit\n");
    write(&ctx, "d.tsx", "hit\n");
    write(&ctx, "e.md", "hit\n");
    let text = grep(&ctx, json!({"pattern": "hit", "include": "*.rs"}))
        .await
        .text_content();
    assert!(text.contains("a/b.rs:1:") && !text.contains(".ts") && !text.contains("e.md"));
    let text = grep(&ctx, json!({"pattern": "hit", "include": "*.{ts,tsx}"}))
        .await
        .text_content();
    assert!(
        text.contains("c.ts:1:") && text.contains("d.tsx:1:"),
        "{text}"
    );
    assert!(!text.contains("b.rs") && !text.contains("e.md"));
}

#[tokio::test]
async fn shows_context_lines_and_breaks() {
    let (_d, ctx) = setup();
    let body: String = (1..=20).map(|i| format!("l{i}\n")).collect();
    write(
        &ctx,
        "f.txt",
        &body.replace("l5\n", "hit5\n").replace("l15\n", "hit15\n"),
    );
    let text = grep(&ctx, json!({"pattern": "hit", "context": 1}))
        .await
        .text_content();
    assert!(
        text.contains(
            "f.txt-4- l4\nf.txt:5: hit5\nf.txt-6- l6\n--\nf.txt-14- l14\nf.txt:15: hit15\nf.txt-16- l16\n"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn caps_matches_and_says_how_many_more() {
    let (_d, ctx) = setup();
    write(&ctx, "a.txt", &"match\n".repeat(80));
    write(&ctx, "b.txt", &"match\n".repeat(70));
    let text = grep(&ctx, json!({"pattern": "match"})).await.text_content();
    assert!(
        text.starts_with("150 matching lines in 2 files (showing the first 100)"),
        "{text}"
    );
    assert_eq!(text.matches(": match").count(), 100);
    assert!(text.contains("b.txt:20: match") && !text.contains("b.txt:21:"));
    assert!(text.contains("… 50 more matches not shown"), "{text}");
}

#[tokio::test]
async fn long_lines_are_cut() {
    let (_d, ctx) = setup();
    write(&ctx, "min.js", &format!("x{}\n", "a".repeat(1000)));
    let text = grep(&ctx, json!({"pattern": "^x"})).await.text_content();
    assert!(text.contains("… [line cut, 501 more characters]"), "{text}");
}

#[tokio::test]
async fn invalid_regex_is_an_error_naming_the_problem() {
    let (_d, ctx) = setup();
    let out = grep(&ctx, json!({"pattern": "fn main("})).await;
    assert!(out.is_error);
    let msg = out.text_content();
    assert!(
        msg.contains("invalid regex \"fn main(\"") && msg.contains("unclosed"),
        "{msg}"
    );
}

#[tokio::test]
async fn no_match_is_text_not_an_error() {
    let (_d, ctx) = setup();
    write(&ctx, "a.txt", "nothing here\n");
    let out = grep(&ctx, json!({"pattern": "absent"})).await;
    assert!(!out.is_error);
    assert!(out.text_content().starts_with("No matches for \"absent\""));
}

#[tokio::test]
async fn skips_binary_files() {
    let (_d, ctx) = setup();
    fs::write(ctx.workspace.join("blob.bin"), b"needle\0\x01\x02needle").unwrap();
    write(&ctx, "t.txt", "needle\n");
    let text = grep(&ctx, json!({"pattern": "needle"}))
        .await
        .text_content();
    assert!(text.starts_with("1 matching line in 1 file"), "{text}");
    assert!(!text.contains("blob.bin"));
}

#[tokio::test]
async fn path_can_be_a_file_or_a_directory() {
    let (_d, ctx) = setup();
    write(&ctx, "src/a.rs", "target\n");
    write(&ctx, "other/b.rs", "target\n");
    let text = grep(&ctx, json!({"pattern": "target", "path": "src"}))
        .await
        .text_content();
    assert!(text.contains("src/a.rs:1:") && !text.contains("other"));
    let text = grep(&ctx, json!({"pattern": "target", "path": "other/b.rs"}))
        .await
        .text_content();
    assert!(text.contains("other/b.rs:1: target"), "{text}");
    let out = grep(&ctx, json!({"pattern": "x", "path": "nope"})).await;
    assert!(out.is_error && out.text_content().contains("path not found: nope"));
}

#[test]
fn summary_and_paths() {
    assert_eq!(
        GrepTool.summary(&json!({"pattern": "fn main", "path": "src/"})),
        "grep \"fn main\" src/"
    );
    let ctx = ToolContext::new(PathBuf::from("/ws"));
    assert_eq!(
        GrepTool.paths(&json!({"pattern": "x", "path": "src"}), &ctx),
        vec![PathBuf::from("/ws/src")]
    );
    assert_eq!(
        GrepTool.paths(&json!({"pattern": "x"}), &ctx),
        vec![PathBuf::from("/ws")]
    );
}

#[tokio::test]
async fn an_explicit_path_is_searched_even_if_ignored() {
    let (_d, ctx) = setup();
    write(&ctx, ".gitignore", "*.log\n");
    write(&ctx, "run.log", "panic here\n");
    let text = grep(&ctx, json!({"pattern": "panic", "path": "run.log"}))
        .await
        .text_content();
    assert!(text.contains("run.log:1: panic here"), "{text}");
}

#[tokio::test]
async fn a_cancelled_search_stops() {
    let (_d, ctx) = setup();
    write(&ctx, "a.txt", "x\n");
    ctx.cancel.cancel();
    let out = grep(&ctx, json!({"pattern": "x"})).await;
    assert!(out.is_error);
    assert_eq!(out.text_content(), "cancelled");
}

/// Searched on several threads, with more matching rows than are held at
/// once: the output is still the first matches in path order, the same
/// on every run, context included.
#[tokio::test]
async fn a_parallel_search_shows_the_first_matches_in_path_order() {
    let (_d, ctx) = setup();
    for dir in 0..12 {
        for file in 0..25 {
            let body: String = (0..30)
                .map(|i| format!("line {i}\nhit {dir}-{file}-{i}\n"))
                .collect();
            write(&ctx, &format!("d{dir:02}/f{file:02}.txt"), &body);
        }
    }
    let input = json!({"pattern": "^hit", "context": 1});
    let first = grep(&ctx, input.clone()).await.text_content();
    assert!(
        first.starts_with("9000 matching lines in 300 files (showing the first 100)"),
        "{first}"
    );
    // d00/f00..f02 hold 90 matches; the next ten come from d00/f03.
    assert!(first.contains("d00/f00.txt:2: hit 0-0-0"), "{first}");
    assert!(first.contains("d00/f03.txt:20: hit 0-3-9"), "{first}");
    assert!(!first.contains("d00/f03.txt:22: hit 0-3-10"), "{first}");
    assert!(
        first.contains("d00/f03.txt-21- line 10"),
        "trailing context: {first}"
    );
    assert!(!first.contains("d00/f04.txt"), "{first}");
    for _ in 0..3 {
        assert_eq!(grep(&ctx, input.clone()).await.text_content(), first);
    }
}
