//! Checked edits: the language server's verdict on an edit, given to the
//! permission dialog while it is open and to the model (and the tool's
//! pane) once the edit is applied. The servers' states go to the status
//! line.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::Shared;
use crate::lsp::Verdict;
use crate::protocol::{AgentEvent, NoticeLevel};
use crate::sync::lock;
use crate::tools::{Preview, ToolDisplay, ToolOutput};

/// How long the dialog's check may take, a server's start included (the
/// dialog is open meanwhile, saying "checking…").
const DIALOG_WAIT: Duration = Duration::from_secs(60);

/// How long an applied edit's result waits for the verdict.
const RESULT_WAIT: Duration = Duration::from_secs(20);

/// The tools whose applied change is checked.
const EDITING: &[&str] = &["edit", "multiedit", "write"];

/// Forwards the servers' states as events until the front end goes away.
pub(crate) fn watch(shared: &Arc<Shared>) {
    let Some(lsp) = shared.lsp.clone() else {
        return;
    };
    let shared = shared.clone();
    let mut changes = lsp.changes();
    tokio::spawn(async move {
        let mut last = Vec::new();
        while changes.changed().await.is_ok() {
            let now = lsp.statuses();
            if now != last {
                shared.emit(AgentEvent::LanguageServers(now.clone()));
                last = now;
            }
            if shared.events.is_closed() {
                return;
            }
        }
    });
}

/// `/lsp`: the servers started and the ones known here.
pub(crate) fn report(shared: &Shared) {
    shared.emit(match &shared.lsp {
        Some(lsp) => AgentEvent::LanguageServerReport {
            statuses: lsp.statuses(),
            known: lsp.known(),
        },
        None => AgentEvent::Notice {
            level: NoticeLevel::Info,
            text: "Language servers are not running in this session.".into(),
        },
    });
}

/// `/lsp restart NAME`.
pub(crate) fn restart(shared: &Shared, name: &str) {
    let (level, text) = match shared.lsp.as_ref().map(|l| l.restart(name)) {
        Some(Ok(())) => (
            NoticeLevel::Info,
            format!("Restarting language server `{name}`…"),
        ),
        Some(Err(e)) => (NoticeLevel::Warning, e),
        None => (
            NoticeLevel::Warning,
            "Language servers are not running in this session.".into(),
        ),
    };
    shared.emit(AgentEvent::Notice { level, text });
}

/// The session is over and its tools have ended: its servers stop (none
/// starts after), so none outlives it and no request meets a dead one.
pub(crate) async fn stop(shared: &Shared) {
    if let Some(lsp) = &shared.lsp {
        lsp.shutdown().await;
    }
}

/// Starts the servers of files a call touches, so they are ready by the
/// time an edit comes (nothing for files of no server's language).
pub(crate) fn touch(shared: &Shared, paths: &[PathBuf]) {
    if let Some(lsp) = &shared.lsp {
        for p in paths {
            lsp.touch(p);
        }
    }
}

/// The file an edit preview changes, absolute, with its old and new text.
fn edit_of(workspace: &std::path::Path, diff: &crate::diff::FileDiff) -> (PathBuf, String, String) {
    let path = workspace.join(&diff.path);
    (path, diff.old.clone(), diff.new.clone())
}

/// When the request previews an edit of a file some server looks after:
/// says "checking…" for request `id`, and its verdict when it comes.
pub(crate) fn check_request(
    shared: &Arc<Shared>,
    workspace: &std::path::Path,
    id: u64,
    preview: Option<&Preview>,
) {
    let (Some(lsp), Some(Preview::Diff(diff))) = (shared.lsp.clone(), preview) else {
        return;
    };
    let (path, old, new) = edit_of(workspace, diff);
    let Some((spec, _)) = lsp.server_for(&path) else {
        return;
    };
    let proposed = Proposed {
        path,
        old,
        new,
        server: spec.name,
    };
    lock(&shared.proposed).insert(id, proposed.clone());
    run_check(shared, lsp, id, proposed, Vec::new());
}

/// An edit open in a permission dialog.
#[derive(Debug, Clone)]
pub(crate) struct Proposed {
    path: PathBuf,
    old: String,
    new: String,
    server: String,
}

/// Says "checking…" for request `id`, then the verdict on `edit` with
/// the `rejected` hunks left out.
fn run_check(
    shared: &Arc<Shared>,
    lsp: Arc<crate::lsp::LspManager>,
    id: u64,
    edit: Proposed,
    rejected: Vec<usize>,
) {
    shared.emit(AgentEvent::EditCheck {
        id,
        server: edit.server.clone(),
        verdict: None,
        rejected: rejected.clone(),
    });
    let text = if rejected.is_empty() {
        edit.new.clone()
    } else {
        let count = crate::diff::hunks(&edit.old, &edit.new).len();
        let accepted: Vec<bool> = (0..count).map(|i| !rejected.contains(&i)).collect();
        crate::diff::apply_hunks(&edit.old, &edit.new, &accepted)
    };
    let shared = shared.clone();
    tokio::spawn(async move {
        let verdict = lsp.check(&edit.path, &edit.old, &text, DIALOG_WAIT).await;
        if let Some(verdict) = verdict {
            shared.emit(AgentEvent::EditCheck {
                id,
                server: edit.server,
                verdict: Some(verdict),
                rejected,
            });
        }
    });
}

/// The person rejected or took back hunks of request `id`'s edit: its
/// verdict is for what would now be written.
pub(crate) fn recheck(shared: &Arc<Shared>, id: u64, rejected: Vec<usize>) {
    let edit = lock(&shared.proposed).get(&id).cloned();
    if let (Some(lsp), Some(edit)) = (shared.lsp.clone(), edit) {
        run_check(shared, lsp, id, edit, rejected);
    }
}

/// After an edit was applied: the errors it introduced, added to its
/// result (and so to its pane); a line saying it was checked otherwise.
pub(crate) async fn after_edit(
    shared: &Shared,
    workspace: &std::path::Path,
    tool: &str,
    output: &mut ToolOutput,
) {
    let (Some(lsp), Some(display)) = (&shared.lsp, &output.display) else {
        return;
    };
    let renamed = matches!(display, ToolDisplay::Diffs { .. });
    if !(EDITING.contains(&tool) || (tool == "lsp" && renamed)) || output.is_error {
        return;
    }
    let (mut notes, mut clean) = (Vec::new(), 0);
    if renamed {
        let paths: Vec<PathBuf> = (display.diffs().iter())
            .map(|d| edit_of(workspace, d).0)
            .collect();
        lsp.hold_disk_text(&paths).await;
    }
    // A rename's files are checked one by one (the server is one), the
    // first few: what a rename breaks shows in the first files it touches.
    for diff in display.diffs().iter().take(MAX_RENAME_CHECKS) {
        let (path, old, new) = edit_of(workspace, diff);
        let Some(verdict) = lsp.check(&path, &old, &new, RESULT_WAIT).await else {
            continue;
        };
        match (renamed, verdict.for_model(&diff.path), &verdict) {
            (true, None, Verdict::Checked { .. }) => clean += 1,
            _ => notes.push(result_note(&verdict, &diff.path)),
        }
    }
    if renamed && notes.is_empty() && clean > 0 {
        notes.push("Checked by the language server: no new problems in the renamed files.".into());
    }
    for note in notes {
        output
            .content
            .push(crate::conversation::ResultContent::text(note));
    }
}

/// Most files of a rename checked after it is applied.
const MAX_RENAME_CHECKS: usize = 10;

fn result_note(verdict: &Verdict, path: &str) -> String {
    match (verdict.for_model(path), verdict) {
        (Some(text), _) => text,
        (None, Verdict::Unavailable { server, reason }) => {
            format!(
                "Not checked by {server}: {}.",
                crate::text::fit(reason, 160)
            )
        }
        (None, _) => format!("Checked by {}: {}.", verdict.server(), verdict.tally()),
    }
}
