use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::super::view::ViewTool;
use super::*;
use crate::tools::ToolDisplay;

async fn setup(name: &str, content: &[u8]) -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(name), content).unwrap();
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let out = ViewTool.run(json!({"file_path": name}), &ctx).await;
    assert!(!out.is_error, "{}", out.text_content());
    (dir, ctx)
}

fn edit(old: &str, new: &str) -> Value {
    json!({"file_path": "f.txt", "old_string": old, "new_string": new})
}

#[tokio::test]
async fn replaces_once_and_reports_counts_and_diff() {
    let (dir, ctx) = setup("f.txt", b"one\ntwo\nthree\n").await;
    let out = EditTool.run(edit("two", "TWO\nand a half"), &ctx).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "one\nTWO\nand a half\nthree\n"
    );
    assert!(out.text_content().contains("+2 -1"));
    assert!(out.text_content().contains("3\tand a half"));
    assert!(
        matches!(out.display, Some(ToolDisplay::Diff(crate::diff::FileDiff { added: 2, removed: 1, ref path, .. })) if path == "f.txt")
    );
    assert_eq!(
        ctx.session.versions()[0].before,
        Some(b"one\ntwo\nthree\n".to_vec())
    );
    // The fresh stamp lets a second edit go through without a new view.
    let again = EditTool.run(edit("one", "ONE"), &ctx).await;
    assert!(!again.is_error, "{}", again.text_content());
}

#[tokio::test]
async fn no_match_shows_the_nearest_lines() {
    let (_dir, ctx) = setup("f.txt", b"fn main() {\n    let total = 1;\n}\n").await;
    let out = EditTool
        .run(edit("let totl = 1;", "let total = 2;"), &ctx)
        .await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(text.contains("not found"), "{text}");
    assert!(text.contains("2\t    let total = 1;"), "{text}");
    let preview = EditTool.preview(&edit("let totl = 1;", "x"), &ctx).await;
    assert!(preview.is_err());
}

#[tokio::test]
async fn several_matches_list_their_lines() {
    let (_dir, ctx) = setup("f.txt", b"x = 1\ny\nx = 1\nz\nx = 1\n").await;
    let out = EditTool.run(edit("x = 1", "x = 2"), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.text_content()
            .contains("matches 3 places (lines 1, 3, 5)"),
        "{}",
        out.text_content()
    );
    let mut all = edit("x = 1", "x = 2");
    all["replace_all"] = json!(true);
    let out = EditTool.run(all, &ctx).await;
    assert!(!out.is_error, "{}", out.text_content());
}

#[tokio::test]
async fn refuses_identical_and_empty_old_string() {
    let (_dir, ctx) = setup("f.txt", b"a\n").await;
    assert!(EditTool.run(edit("a", "a"), &ctx).await.is_error);
    let out = EditTool.run(edit("", "b"), &ctx).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("write"));
}

#[tokio::test]
async fn requires_a_view_and_no_change_since() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f.txt");
    fs::write(&p, "a\n").unwrap();
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let out = EditTool.run(edit("a", "b"), &ctx).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("not been viewed"));

    ViewTool.run(json!({"file_path": "f.txt"}), &ctx).await;
    fs::write(&p, "a changed\n").unwrap();
    let out = EditTool.run(edit("a", "b"), &ctx).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("view it again"));
    assert_eq!(fs::read_to_string(&p).unwrap(), "a changed\n");
}

#[tokio::test]
async fn keeps_crlf_and_bom() {
    let (dir, ctx) = setup("f.txt", b"\xEF\xBB\xBFone\r\ntwo\r\n").await;
    let out = EditTool.run(edit("one\ntwo", "1\n2\n3"), &ctx).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(
        fs::read(dir.path().join("f.txt")).unwrap(),
        b"\xEF\xBB\xBF1\r\n2\r\n3\r\n".to_vec()
    );
}

#[tokio::test]
async fn keeps_permissions() {
    let (dir, ctx) = setup("f.txt", b"#!/bin/sh\necho hi\n").await;
    let p = dir.path().join("f.txt");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    let out = EditTool.run(edit("hi", "there"), &ctx).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(
        fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o755
    );
}

#[tokio::test]
async fn multiedit_is_all_or_nothing() {
    let (dir, ctx) = setup("f.txt", b"alpha\nbeta\n").await;
    let input = json!({"file_path": "f.txt", "edits": [
        {"old_string": "alpha", "new_string": "ALPHA"},
        {"old_string": "gamma", "new_string": "GAMMA"}
    ]});
    let out = MultiEditTool.run(input, &ctx).await;
    assert!(out.is_error);
    assert!(
        out.text_content().contains("edit 2 of 2"),
        "{}",
        out.text_content()
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "alpha\nbeta\n"
    );
    let input = json!({"file_path": "f.txt", "edits": [
        {"old_string": "alpha", "new_string": "ALPHA"},
        {"old_string": "ALPHA\nbeta", "new_string": "ALPHA\nBETA"}
    ]});
    let preview = MultiEditTool.preview(&input, &ctx).await.unwrap();
    assert!(matches!(
        preview,
        Some(Preview::Diff(crate::diff::FileDiff {
            added: 2,
            removed: 2,
            ..
        }))
    ));
    let out = MultiEditTool.run(input, &ctx).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "ALPHA\nBETA\n"
    );
}

#[tokio::test]
async fn whitespace_only_mismatch_is_named() {
    let (_dir, ctx) = setup("f.txt", b"a\n\tif x {\n\t\ty();\n\t}\nb\n").await;
    let out = EditTool
        .run(edit("if x {\n    y();\n}", "if x { z(); }"), &ctx)
        .await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(text.contains("differs only in whitespace"), "{text}");
    assert!(text.contains("(lines 2-4)"), "{text}");
}
