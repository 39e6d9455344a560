use super::*;
use crate::conversation::Message;
use crate::protocol::RewindTo;
use crate::store::{MessageId, MessageMeta, NewSession};

/// Two turns, "alpha" then "beta", each answered; the message ids.
fn alpha_beta(store: &mut Store, id: &SessionId) -> Vec<MessageId> {
    [
        (1, Message::user_text("alpha")),
        (1, Message::assistant_text("a")),
        (2, Message::user_text("beta")),
        (2, Message::assistant_text("b")),
    ]
    .into_iter()
    .map(|(turn, m)| {
        let meta = MessageMeta {
            turn,
            ..Default::default()
        };
        store.append_message(id, &m, &meta).unwrap()
    })
    .collect()
}

fn service(store: Store, dir: &Path) -> Sessions {
    Sessions::new(store, dir.to_path_buf()).with_export_dir(dir.join("exports"))
}

fn count(svc: &Sessions, id: &SessionId) -> usize {
    svc.with_store(|s| s.load_messages(id).unwrap().len())
}

#[test]
fn fork_before_a_prompt_keeps_what_came_before_and_returns_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("s.db")).unwrap();
    let id = store.create_session(&NewSession::default()).unwrap();
    let ids = alpha_beta(&mut store, &id);
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "changed in turn 2").unwrap();
    store
        .record_file_version(&id, 2, &file, Some(b"before turn 2"))
        .unwrap();
    let svc = service(store, dir.path());
    match svc.handle(SessionRequest::Prompts(id.clone())) {
        SessionReply::Prompts { prompts, .. } => {
            assert_eq!(
                prompts,
                vec![(ids[0].0, "alpha".into()), (ids[2].0, "beta".into())]
            )
        }
        other => panic!("{other:?}"),
    }
    let reply = svc.handle(SessionRequest::Rewind {
        to: RewindTo {
            id: id.clone(),
            message: ids[2].0,
            in_place: false,
        },
        current: None,
        workspace: dir.path().to_path_buf(),
    });
    match reply {
        SessionReply::Resumed(r) => {
            assert_ne!(r.loaded.id(), &id, "a fork, not the original");
            assert_eq!(r.loaded.messages.len(), 2);
            assert_eq!(r.draft.as_deref(), Some("beta"));
            let later = r.later.expect("turn 2's file is offered back");
            assert_eq!(later.from, 2);
            assert_eq!(
                later.plan.files,
                vec![(
                    "notes.txt".to_string(),
                    crate::tools::restore::FileAction::Restore
                )]
            );
        }
        other => panic!("{other:?}"),
    }
    // The original keeps all four messages.
    assert_eq!(count(&svc, &id), 4);
}

#[test]
fn the_session_in_use_is_not_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("s.db")).unwrap();
    let current = store.create_session(&NewSession::default()).unwrap();
    let other = store.create_session(&NewSession::default()).unwrap();
    let svc = service(store, dir.path());
    let reply = svc.handle(SessionRequest::Delete {
        id: current.clone(),
        current: Some(current.clone()),
    });
    assert!(
        matches!(&reply, SessionReply::DeleteRefused(why) if why.contains("/new")),
        "{reply:?}"
    );
    let reply = svc.handle(SessionRequest::Delete {
        id: other.clone(),
        current: Some(current.clone()),
    });
    assert!(matches!(reply, SessionReply::Info(..)), "{reply:?}");
    svc.with_store(|store| {
        assert!(store.session(&current).is_ok(), "the session in use stays");
        assert!(store.session(&other).is_err(), "the other one is gone");
    });
}

#[test]
fn an_undone_turn_is_resumed_as_it_was_and_not_offered_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("s.db")).unwrap();
    let id = store
        .create_session(&NewSession {
            project_root: Some(dir.path().to_path_buf()),
            ..NewSession::default()
        })
        .unwrap();
    alpha_beta(&mut store, &id);
    let file = dir.path().join("notes.txt");
    for turn in [1, 2] {
        store
            .record_file_version(&id, turn, &file, Some(b"before"))
            .unwrap();
    }
    store.mark_turn_undone(&id, 1).unwrap();
    let loaded = load(&store, &id).unwrap();
    assert_eq!(loaded.messages.len(), 4, "the undone turn stays");
    assert_eq!(
        loaded.versions.iter().map(|v| v.turn).collect::<Vec<_>>(),
        vec![2]
    );
    assert_eq!(loaded.runs.undone, vec![(1, vec!["notes.txt".to_string()])]);

    let mut m = crate::tui::model::Model::new(
        "p".into(),
        "m".into(),
        crate::config::Mode::Smart,
        dir.path().to_path_buf(),
        crate::tui::theme::Theme::default(),
    );
    crate::tui::history::rebuild(&mut m, &loaded.messages, &loaded.runs);
    let cells: Vec<String> = m.transcript.cells().iter().map(|c| c.copy_text()).collect();
    let at = cells
        .iter()
        .position(|c| c.contains("Undone: restored notes.txt"))
        .expect("a notice for the undone turn");
    assert!(
        cells[at - 1].contains('a') && cells[at + 1].contains("beta"),
        "{cells:?}"
    );
}

#[test]
fn a_stored_session_can_be_cut_back_in_place_but_not_the_one_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("s.db")).unwrap();
    let id = store.create_session(&NewSession::default()).unwrap();
    let live = store.create_session(&NewSession::default()).unwrap();
    let ids = alpha_beta(&mut store, &id);
    alpha_beta(&mut store, &live);
    let svc = service(store, dir.path());
    let rewind = |id: &SessionId, message: i64| SessionRequest::Rewind {
        to: RewindTo {
            id: id.clone(),
            message,
            in_place: true,
        },
        current: Some(live.clone()),
        workspace: dir.path().to_path_buf(),
    };
    match svc.handle(rewind(&id, ids[2].0)) {
        SessionReply::Resumed(r) => {
            assert_eq!(r.loaded.id(), &id, "the same session, cut back");
            assert_eq!(r.loaded.messages.len(), 2);
            assert_eq!(r.draft.as_deref(), Some("beta"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(count(&svc, &id), 2);
    let reply = svc.handle(rewind(&live, 0));
    assert!(
        matches!(&reply, SessionReply::Info(t) if t.contains("Esc Esc")),
        "{reply:?}"
    );
    assert_eq!(count(&svc, &live), 4);
}

#[test]
fn export_writes_into_the_export_directory_and_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("s.db")).unwrap();
    let id = store.create_session(&NewSession::default()).unwrap();
    alpha_beta(&mut store, &id);
    let svc = service(store, dir.path());
    let reply = svc.handle(SessionRequest::Export {
        id: id.clone(),
        json: false,
        to: None,
    });
    let path = dir
        .path()
        .join("exports")
        .join(format!("cairn-session-{}.md", id.as_str()));
    assert!(
        matches!(&reply, SessionReply::Info(t) if t.contains(&path.display().to_string())),
        "{reply:?}"
    );
    assert!(std::fs::read_to_string(&path).unwrap().contains("alpha"));
}

#[test]
fn exports_of_sessions_made_the_same_minute_do_not_overwrite_each_other() {
    // Ids are time-ordered (v7): a session and its fork share their first
    // eight characters, so a file named after those was overwritten.
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("s.db")).unwrap();
    let first = store.create_session(&NewSession::default()).unwrap();
    let second = store.create_session(&NewSession::default()).unwrap();
    alpha_beta(&mut store, &first);
    store
        .append_message(
            &second,
            &Message::user_text("gamma"),
            &MessageMeta::default(),
        )
        .unwrap();
    let a = export(&store, &first, false, dir.path()).unwrap();
    let b = export(&store, &second, false, dir.path()).unwrap();
    assert_ne!(a, b);
    assert!(std::fs::read_to_string(&a).unwrap().contains("alpha"));
    assert!(std::fs::read_to_string(&b).unwrap().contains("gamma"));
}

/// Fifth hostile review (G9): a Markdown export kept the raw escape
/// sequences a tool's output carried (OSC 52 writes the clipboard, a
/// title sequence renames the window) for whoever `cat`s the file later.
#[test]
fn a_markdown_export_carries_no_escape_sequence_and_json_keeps_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("s.db")).unwrap();
    let id = store.create_session(&NewSession::default()).unwrap();
    let hostile = "done\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}\u{1b}]0;title\u{7}\u{9b}2J";
    store
        .append_message(
            &id,
            &Message::assistant_text(hostile),
            &MessageMeta::default(),
        )
        .unwrap();
    let (md, _) = crate::sessions::export_text(&store, &id, false).unwrap();
    assert!(md.contains("done^[]52;c;"), "{md}");
    assert!(
        !md.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{md:?}"
    );
    let (json, _) = crate::sessions::export_text(&store, &id, true).unwrap();
    let back: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(back.to_string().contains("\\u001b]52"), "{json}");
}
