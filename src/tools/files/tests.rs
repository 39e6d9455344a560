use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::*;
use crate::tools::Tool;
use crate::tools::edit::EditTool;
use crate::tools::view::ViewTool;
use crate::tools::write::WriteTool;

/// An editor with buffers: what it holds for a path (else the disk), and
/// every path it was asked about.
#[derive(Default)]
struct Editor {
    buffers: Mutex<HashMap<PathBuf, String>>,
    asked: Mutex<Vec<String>>,
}

impl FileAccess for Editor {
    fn read_text(&self, path: &Path) -> Result<String, String> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("read {}", path.display()));
        match self.buffers.lock().unwrap().get(path) {
            Some(b) => Ok(b.clone()),
            None => std::fs::read_to_string(path).map_err(|e| e.to_string()),
        }
    }
}

fn setup() -> (tempfile::TempDir, PathBuf, ToolContext, Arc<Editor>) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let ws = ws.canonicalize().unwrap();
    let mut ctx = ToolContext::new(ws.clone());
    let editor = Arc::new(Editor::default());
    ctx.files = Some(editor.clone());
    (dir, ws, ctx, editor)
}

fn asked(editor: &Editor) -> Vec<String> {
    editor.asked.lock().unwrap().clone()
}

#[tokio::test]
async fn view_reads_the_buffer_and_the_edit_lands_on_the_disk() {
    let (_d, ws, ctx, editor) = setup();
    let file = ws.join("a.txt");
    std::fs::write(&file, "saved\n").unwrap();
    editor
        .buffers
        .lock()
        .unwrap()
        .insert(file.clone(), "unsaved alpha\n".into());
    let out = ViewTool.run(json!({"file_path": "a.txt"}), &ctx).await;
    assert!(out.text_content().contains("unsaved alpha"), "{out:?}");
    let input = json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"});
    let preview = EditTool.preview(&input, &ctx).await.unwrap();
    assert!(
        matches!(&preview, Some(crate::tools::Preview::Diff(d)) if d.old == "unsaved alpha\n"),
        "{preview:?}"
    );
    let out = EditTool.run(input, &ctx).await;
    assert!(!out.is_error, "{}", out.text_content());
    // Written to the disk (the editor reloads it), never through the
    // editor, which would open the name outside cairn's hold.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "unsaved beta\n");
    assert!(asked(&editor).iter().all(|a| a.starts_with("read ")));
    // Undo puts back what the buffer held before the edit.
    assert_eq!(
        ctx.session.versions()[0].before.as_deref(),
        Some(&b"unsaved alpha\n"[..])
    );
    // The editor reloads the file it sees changed on disk; the write left
    // a fresh stamp, so a second edit needs no new view.
    editor.buffers.lock().unwrap().remove(&file);
    let again = EditTool
        .run(
            json!({"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"}),
            &ctx,
        )
        .await;
    assert!(!again.is_error, "{}", again.text_content());
}

#[tokio::test]
async fn a_buffer_changed_after_the_view_needs_a_new_view() {
    let (_d, ws, ctx, editor) = setup();
    let file = ws.join("a.txt");
    std::fs::write(&file, "one\n").unwrap();
    ViewTool.run(json!({"file_path": "a.txt"}), &ctx).await;
    // The person types into the buffer; the disk stays as it was.
    editor
        .buffers
        .lock()
        .unwrap()
        .insert(file.clone(), "one typed\n".into());
    let out = EditTool
        .run(
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
            &ctx,
        )
        .await;
    assert!(out.is_error);
    assert!(out.text_content().contains("view it again"), "{out:?}");
}

#[tokio::test]
async fn the_editor_is_never_asked_about_a_path_the_rules_refuse() {
    let (_d, ws, ctx, editor) = setup();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "s3cret\n").unwrap();
    std::os::unix::fs::symlink(&secret, ws.join("key")).unwrap();
    let out = ViewTool.run(json!({"file_path": "key"}), &ctx).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("leads out of the workspace"));
    // Writing through the link is refused.
    let out = WriteTool
        .run(json!({"file_path": "key", "content": "x"}), &ctx)
        .await;
    assert!(out.is_error, "{out:?}");
    // A control file reached through a link is refused too.
    std::fs::create_dir(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::os::unix::fs::symlink(".git/config", ws.join("notes.txt")).unwrap();
    let err = write(&ctx, &ws.join("notes.txt"), b"[core]\nhooksPath = x\n").unwrap_err();
    assert!(err.contains("through a link"), "{err}");
    // A path outside the workspace (the gate asked about it) is read from
    // the disk, not from the editor.
    let bytes = read_bounded(&ctx, &secret, 100).unwrap();
    assert_eq!(bytes, b"s3cret\n");
    assert_eq!(asked(&editor), Vec::<String>::new());
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "s3cret\n");
}

#[tokio::test]
async fn a_link_inside_the_workspace_is_asked_about_by_its_real_path() {
    let (_d, ws, ctx, editor) = setup();
    std::fs::create_dir(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/real.txt"), "real\n").unwrap();
    std::os::unix::fs::symlink("src/real.txt", ws.join("alias.txt")).unwrap();
    let out = ViewTool.run(json!({"file_path": "alias.txt"}), &ctx).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        asked(&editor),
        [format!("read {}", ws.join("src/real.txt").display())]
    );
}

/// An editor that opens the name itself, while a contained command swaps
/// a link to a secret in and back during the read (the review's attack):
/// the folder changed meanwhile, so the answer is dropped for the disk's.
#[tokio::test]
async fn a_link_swapped_in_while_the_editor_reads_is_never_believed() {
    struct Swapping {
        outside: PathBuf,
    }
    impl FileAccess for Swapping {
        fn read_text(&self, path: &Path) -> Result<String, String> {
            let keep = path.with_extension("keep");
            std::fs::rename(path, &keep).unwrap();
            std::os::unix::fs::symlink(&self.outside, path).unwrap();
            let read = std::fs::read_to_string(path).map_err(|e| e.to_string());
            std::fs::remove_file(path).unwrap();
            std::fs::rename(&keep, path).unwrap();
            read
        }
    }
    let (_d, ws, mut ctx, _) = setup();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("id_rsa");
    std::fs::write(&secret, "PRIVATE KEY\n").unwrap();
    std::fs::write(ws.join("k.txt"), "harmless\n").unwrap();
    ctx.files = Some(Arc::new(Swapping { outside: secret }));
    let bytes = read_bounded(&ctx, &ws.join("k.txt"), 1000).unwrap();
    assert_eq!(bytes, b"harmless\n");
}
