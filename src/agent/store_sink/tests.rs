//! The store writer when another process records the session.
use super::*;
use crate::store::SessionLock;

#[test]
fn resuming_a_session_another_process_records_continues_in_a_fork() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let mut store = Store::open(&db).unwrap();
    let original = store.create_session(&NewSession::default()).unwrap();
    // Another holder: a second open of the lock file conflicts just as
    // another process would.
    let _other = SessionLock::acquire(&db, &original).unwrap().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = StoreSink::start(
        Store::open(&db).unwrap(),
        SessionInfo {
            cwd: dir.path().into(),
            project_root: dir.path().into(),
            provider: "p".into(),
            model: "m".into(),
            mode: None,
        },
        Some(tx),
    );
    sink.resume(&original);
    let status = sink.flush();
    let now = status.session.expect("a session is recorded");
    assert_ne!(now, original);
    assert_eq!(store.session(&now).unwrap().parent_id, Some(original));
    let mut told = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        told.push(ev);
    }
    assert!(
        told.iter()
            .any(|e| matches!(e, AgentEvent::Notice { text, .. } if text.contains("copy"))),
        "{told:?}"
    );
}
