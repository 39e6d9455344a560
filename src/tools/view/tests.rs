use super::*;
use crate::conversation::ResultContent;
use std::fs;

fn setup() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    // Canonical, so paths the walker yields compare equal to resolved ones.
    let root = dir.path().canonicalize().unwrap();
    (dir, ToolContext::new(root))
}

async fn view(ctx: &ToolContext, input: Value) -> ToolOutput {
    ViewTool.run(input, ctx).await
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn shows_numbered_lines_like_cat_n() {
    let (_d, ctx) = setup();
    fs::write(ctx.workspace.join("a.txt"), "alpha\nbeta\r\n\tgamma").unwrap();
    let out = view(&ctx, json!({"file_path": "a.txt"})).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(
        out.text_content(),
        "     1\talpha\n     2\tbeta\n     3\t\tgamma\n"
    );
}

#[tokio::test]
async fn default_limit_is_2000_with_a_footer() {
    let (_d, ctx) = setup();
    fs::write(ctx.workspace.join("big.txt"), numbered(2340)).unwrap();
    let out = view(&ctx, json!({"file_path": "big.txt"})).await;
    let text = out.text_content();
    assert!(text.contains("  2000\tline 2000\n"));
    assert!(!text.contains("line 2001"));
    assert!(
        text.ends_with("… 340 more lines; use offset=2001 to continue\n"),
        "{text}"
    );
}

#[tokio::test]
async fn one_line_left_is_said_in_the_singular() {
    let (_d, ctx) = setup();
    fs::write(ctx.workspace.join("three.txt"), "a\nb\nc\n").unwrap();
    let out = view(&ctx, json!({"file_path": "three.txt", "limit": 2})).await;
    assert!(
        out.text_content()
            .ends_with("… 1 more line; use offset=3 to continue\n")
    );
}

#[tokio::test]
async fn offset_and_limit_select_a_range() {
    let (_d, ctx) = setup();
    fs::write(ctx.workspace.join("f.txt"), numbered(10)).unwrap();
    let out = view(&ctx, json!({"file_path": "f.txt", "offset": 4, "limit": 2})).await;
    assert_eq!(
        out.text_content(),
        "     4\tline 4\n     5\tline 5\n\n… 5 more lines; use offset=6 to continue\n"
    );
    // The last lines need no footer.
    let out = view(&ctx, json!({"file_path": "f.txt", "offset": 9})).await;
    assert_eq!(out.text_content(), "     9\tline 9\n    10\tline 10\n");
    let out = view(&ctx, json!({"file_path": "f.txt", "offset": 50})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("has 10 lines"));
}

#[tokio::test]
async fn long_lines_are_cut_with_a_marker() {
    let (_d, ctx) = setup();
    let long = "x".repeat(2500);
    fs::write(ctx.workspace.join("l.txt"), format!("{long}\nshort\n")).unwrap();
    let text = view(&ctx, json!({"file_path": "l.txt"}))
        .await
        .text_content();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with(&format!("     1\t{}", "x".repeat(2000))));
    assert!(
        first.ends_with("… [line cut, 500 more characters]"),
        "{first}"
    );
    assert!(text.contains("     2\tshort"));
}

#[tokio::test]
async fn files_over_5mb_stream_a_page_at_a_time() {
    let (_d, ctx) = setup();
    let path = ctx.workspace.join("huge.log");
    let line = format!("{}\n", "y".repeat(99));
    let count = (MAX_WHOLE_FILE as usize / line.len()) + 100;
    fs::write(&path, line.repeat(count)).unwrap();

    let out = view(&ctx, json!({"file_path": "huge.log"})).await;
    assert!(!out.is_error, "{}", out.text_content());
    let text = out.text_content();
    assert!(text.starts_with("     1\tyyyy"), "{text}");
    assert!(text.contains(&format!("… {} more lines; use offset=2001", count - 2000)));

    let out = view(
        &ctx,
        json!({"file_path": "huge.log", "offset": 3, "limit": 2}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text_content());
    let text = out.text_content();
    assert!(text.starts_with("     3\tyyyy"));
    assert!(text.contains(&format!("… {} more lines; use offset=5", count - 4)));
    let bytes = fs::read(&path).unwrap();
    let meta = fs::metadata(&path).unwrap();
    assert_eq!(
        ctx.session.viewed(&path),
        Some(FileStamp::of_bytes(&bytes, &meta))
    );
}

/// A file past the counting limit gives its page without being read to the
/// end: a sparse 3 GB file whose first lines are text answers at once.
#[tokio::test]
async fn a_huge_file_gives_its_first_page_without_reading_it_all() {
    let (_d, ctx) = setup();
    let path = ctx.workspace.join("huge.log");
    let file = fs::File::create(&path).unwrap();
    let head = "line of text\n".repeat(3000);
    use std::io::Write;
    (&file).write_all(head.as_bytes()).unwrap();
    file.set_len(3 * 1024 * 1024 * 1024).unwrap();

    let started = std::time::Instant::now();
    let out = view(&ctx, json!({"file_path": "huge.log", "limit": 10})).await;
    let text = out.text_content();
    assert!(!out.is_error, "{text}");
    assert!(text.starts_with("     1\tline of text"), "{text}");
    assert!(
        text.contains("goes on: it is 3.0 GB") && text.contains("offset=11"),
        "{text}"
    );
    // Reading 3 GB of zeros line by line takes many seconds even in release.
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Not read to the end, so nothing is recorded for the edit tools.
    assert!(ctx.session.viewed(&path).is_none());
}

/// A line far longer than anything the view shows is read past, not held:
/// the view of a 60 MB one-line file still shows it, cut, with its size.
#[tokio::test]
async fn a_giant_line_is_cut_while_streaming() {
    let (_d, ctx) = setup();
    let path = ctx.workspace.join("one.txt");
    let mut text = "z".repeat(60 * 1024 * 1024);
    text.push_str("\nsecond\n");
    fs::write(&path, &text).unwrap();
    let out = view(&ctx, json!({"file_path": "one.txt"})).await;
    let shown = out.text_content();
    assert!(!out.is_error, "{shown}");
    assert!(shown.starts_with("     1\tzzzz"), "{}", &shown[..80]);
    assert!(
        shown.contains("     2\tsecond"),
        "{}",
        &shown[shown.len() - 200..]
    );
    assert!(
        shown.contains("[line cut, 60.0 MB in all]"),
        "{}",
        &shown[..2200]
    );
    assert!(shown.len() < 10_000);
}

#[test]
fn streamed_hash_matches_of_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let content = b"one\ntwo\nthree without newline";
    fs::write(&path, content).unwrap();
    let meta = fs::metadata(&path).unwrap();
    let mut h = StreamHasher::new(content.len() as u64);
    for piece in content.split_inclusive(|&b| b == b'\n') {
        h.write(piece);
    }
    assert_eq!(h.finish(&meta), Some(FileStamp::of_bytes(content, &meta)));
}

#[tokio::test]
async fn binary_files_are_refused_with_size_and_type() {
    let (_d, ctx) = setup();
    let mut elf = b"\x7fELF\x02\x01\x01\0\0\0".to_vec();
    elf.extend(std::iter::repeat_n(0u8, 2038));
    fs::write(ctx.workspace.join("prog"), &elf).unwrap();
    let out = view(&ctx, json!({"file_path": "prog"})).await;
    assert!(out.is_error);
    let msg = out.text_content();
    assert!(
        msg.contains("binary file (ELF executable, 2.0 KB)"),
        "{msg}"
    );

    // No NUL, but mostly invalid UTF-8.
    let noise: Vec<u8> = (0..600).map(|i| 0x80 + (i % 100) as u8).collect();
    fs::write(ctx.workspace.join("noise.bin"), &noise).unwrap();
    let out = view(&ctx, json!({"file_path": "noise.bin"})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("binary data"));
}

#[tokio::test]
async fn a_stray_latin1_byte_is_still_text() {
    let (_d, ctx) = setup();
    let mut bytes = "// caf".as_bytes().to_vec();
    bytes.push(0xe9);
    bytes.extend_from_slice(format!("\n{}", "fn main() {}\n".repeat(20)).as_bytes());
    fs::write(ctx.workspace.join("old.c"), &bytes).unwrap();
    let out = view(&ctx, json!({"file_path": "old.c"})).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert!(out.text_content().starts_with("     1\t// caf\u{fffd}"));
    assert!(
        out.text_content()
            .contains("not all UTF-8: 1 invalid byte sequence is shown as \u{fffd}"),
        "{}",
        out.text_content()
    );
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";

#[tokio::test]
async fn images_come_back_as_image_content() {
    let (_d, mut ctx) = setup();
    let path = ctx.workspace.join("shot.png");
    fs::write(&path, PNG).unwrap();
    ctx.supports_images = true;
    let out = view(&ctx, json!({"file_path": "shot.png"})).await;
    assert!(!out.is_error);
    let image = out.content.iter().find_map(|c| match c {
        ResultContent::Image { image } => Some(image.clone()),
        _ => None,
    });
    let image = image.expect("an image part");
    assert_eq!(image.media_type, "image/png");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    assert_eq!(decoded, PNG);
    assert!(ctx.session.viewed(&path).is_some());
}

#[tokio::test]
async fn images_are_refused_when_the_model_cannot_see_them() {
    let (_d, ctx) = setup();
    fs::write(ctx.workspace.join("shot.png"), PNG).unwrap();
    let out = view(&ctx, json!({"file_path": "shot.png"})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("can't view images"));
    assert!(
        out.content
            .iter()
            .all(|c| matches!(c, ResultContent::Text { .. }))
    );
}

#[tokio::test]
async fn an_image_extension_on_text_is_shown_as_text() {
    let (_d, mut ctx) = setup();
    ctx.supports_images = true;
    fs::write(ctx.workspace.join("fake.png"), "not really\n").unwrap();
    let out = view(&ctx, json!({"file_path": "fake.png"})).await;
    assert_eq!(out.text_content(), "     1\tnot really\n");
}

#[tokio::test]
async fn missing_files_get_suggestions() {
    let (_d, ctx) = setup();
    let ws = &ctx.workspace;
    fs::create_dir_all(ws.join("src/tools")).unwrap();
    fs::write(ws.join("src/tools/registry.rs"), "x").unwrap();
    fs::write(ws.join("src/main.rs"), "x").unwrap();
    fs::write(ws.join("src/lib.rs"), "x").unwrap();

    // Same name, elsewhere in the workspace.
    let out = view(&ctx, json!({"file_path": "registry.rs"})).await;
    assert!(out.is_error);
    let msg = out.text_content();
    assert!(
        msg.contains("Did you mean") && msg.contains("src/tools/registry.rs"),
        "{msg}"
    );

    // A typo in the same directory.
    let msg = view(&ctx, json!({"file_path": "src/mian.rs"}))
        .await
        .text_content();
    assert!(msg.contains("  src/main.rs"), "{msg}");
    assert!(!msg.contains("lib.rs"), "{msg}");

    let msg = view(&ctx, json!({"file_path": "nothing/like/it.zzz"}))
        .await
        .text_content();
    assert!(msg.contains("No similar paths"), "{msg}");
}

#[tokio::test]
async fn a_directory_points_to_ls() {
    let (_d, ctx) = setup();
    fs::create_dir(ctx.workspace.join("src")).unwrap();
    let out = view(&ctx, json!({"file_path": "src"})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("use ls"));
}

#[tokio::test]
async fn records_the_view_for_the_edit_tools() {
    let (_d, ctx) = setup();
    let path = ctx.workspace.join("r.txt");
    fs::write(&path, "hello\n").unwrap();
    assert!(ctx.session.viewed(&path).is_none());
    view(&ctx, json!({"file_path": "r.txt", "limit": 1})).await;
    let meta = fs::metadata(&path).unwrap();
    assert_eq!(
        ctx.session.viewed(&path),
        Some(FileStamp::of_bytes(b"hello\n", &meta))
    );
}

#[tokio::test]
async fn relative_paths_are_from_the_workspace_root_whatever_the_shell_cd() {
    let (_d, ctx) = setup();
    fs::create_dir(ctx.workspace.join("sub")).unwrap();
    fs::write(ctx.workspace.join("sub/x.txt"), "in sub\n").unwrap();
    fs::write(ctx.workspace.join("x.txt"), "at root\n").unwrap();
    ctx.session.set_cwd(ctx.workspace.join("sub"));
    let out = view(&ctx, json!({"file_path": "x.txt"})).await;
    assert_eq!(out.text_content(), "     1\tat root\n");
    assert_eq!(
        ViewTool.paths(&json!({"file_path": "x.txt"}), &ctx),
        vec![ctx.workspace.join("x.txt")]
    );
}

#[tokio::test]
async fn empty_files_and_bad_arguments_are_explained() {
    let (_d, ctx) = setup();
    fs::write(ctx.workspace.join("e.txt"), "").unwrap();
    let out = view(&ctx, json!({"file_path": "e.txt"})).await;
    assert!(!out.is_error);
    assert!(out.text_content().contains("empty"));
    let out = view(&ctx, json!({})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("file_path"));
    let out = view(&ctx, json!({"file_path": "e.txt", "limit": 0})).await;
    assert!(out.text_content().contains("at least 1"));
}

#[test]
fn summary_names_the_path_and_range() {
    assert_eq!(
        ViewTool.summary(&json!({"file_path": "src/main.rs"})),
        "view src/main.rs"
    );
    assert_eq!(
        ViewTool.summary(&json!({"file_path": "a.rs", "offset": 100, "limit": 50})),
        "view a.rs (lines 100-149)"
    );
}
