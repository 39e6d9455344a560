//! State the tools share within one session.

pub use crate::sync::lock;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::sandbox::census::Census;

/// A census and what its comparison with the last session moved.
type Taken = (Census, Vec<String>);

/// What was on disk when the model last viewed (or wrote) a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    pub modified: Option<SystemTime>,
    pub len: u64,
    /// A hash of the content, so a touch without change is not a change.
    pub hash: u64,
}

impl FileStamp {
    pub fn of_bytes(bytes: &[u8], meta: &std::fs::Metadata) -> Self {
        FileStamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            hash: hash_bytes(bytes),
        }
    }
}

pub fn hash_bytes(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// One file's content before a tool changed it. `before` is `None` when the
/// file did not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileVersion {
    pub path: PathBuf,
    pub before: Option<Vec<u8>>,
    /// Which turn of the session made the change.
    pub turn: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    pub content: String,
    pub status: TodoStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// The skill a `skill` call loaded, exactly as it was read: the grant of
/// its `allowed-tools` is judged on this, never on a second read.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSkill {
    pub name: String,
    /// Its `SKILL.md`.
    pub file: PathBuf,
    /// A project's (else the person's own).
    pub project: bool,
    pub allowed_tools: Vec<String>,
    /// The hash of the file's text as read (`config::trust::hash_text`).
    pub text_hash: String,
}

pub struct SessionState {
    cwd: Mutex<PathBuf>,
    /// What each `skill` call loaded, by call id, until the agent grants
    /// its `allowed-tools` (`agent::grants`).
    loaded_skills: Mutex<HashMap<String, LoadedSkill>>,
    viewed: Mutex<HashMap<PathBuf, FileStamp>>,
    history: Mutex<Vec<FileVersion>>,
    /// Versions not yet handed to the session store.
    unsent: Mutex<Vec<FileVersion>>,
    /// Unrestorable files not yet handed to the store: (path, turn, why).
    unsent_lost: Mutex<Vec<(PathBuf, u64, String)>>,
    /// Files a turn changed that cannot be put back: (path, turn, why).
    unrestorable: Mutex<Vec<(PathBuf, u64, String)>>,
    todos: Mutex<Vec<Todo>>,
    turn: Mutex<u64>,
    /// Shell commands left running in the background.
    pub jobs: super::jobs::JobTable,
    /// Git control files a command could add past the sandbox's binds:
    /// taken on a thread of its own at start (a large tree takes a while,
    /// and the first screen does not wait for it), and waited for before
    /// anything runs (`ready`) and at every check.
    census: Mutex<Option<Census>>,
    taking: Mutex<Option<std::thread::JoinHandle<Taken>>>,
    workspace: PathBuf,
    /// What checks between tool calls moved, for the model's next result.
    moved_between: Mutex<Vec<String>>,
    /// What the start-up comparison moved, not yet shown to the person.
    noticed_start: Mutex<Vec<String>>,
    /// What file tools running now were let write: a check that runs for
    /// a call beside them takes these as approved too.
    writing: Mutex<Vec<PathBuf>>,
    /// Every file a file tool changed, in order (`wrote_since`).
    write_log: Mutex<Vec<(PathBuf, crate::sandbox::census::Written)>>,
    /// Set once the session's end was recorded (`finish`).
    finished: std::sync::atomic::AtomicBool,
    /// A watcher checks the control files while background jobs run
    /// (`agent::calls::watch_for_plants`): one per session.
    pub plant_watch: std::sync::atomic::AtomicBool,
}

/// Tells `census` which commands its next check must count as able to
/// write unbound: those running, and those ended since its last check.
fn count_commands(census: &mut crate::sandbox::census::Census) {
    census.set_oldest_running(super::jobs::oldest_running_since(census.last_checked()));
}

/// Where moved control files are kept.
fn quarantine() -> PathBuf {
    // Tests keep theirs apart from the developer's own state.
    let state = if cfg!(test) {
        None
    } else {
        crate::config::state_dir()
    };
    match state {
        Some(s) => s.join("quarantine"),
        // Tests: a folder of their own under the temporary one.
        None if cfg!(test) => std::env::temp_dir().join("quarantine"),
        // No state folder: never a fixed path in the shared temporary
        // folder (a command could put a link there); the census moves to
        // `.cairn-quarantine/` in the workspace instead.
        None => PathBuf::new(),
    }
}

impl Drop for SessionState {
    fn drop(&mut self) {
        self.finish();
    }
}

impl SessionState {
    pub fn new(workspace: &Path) -> Self {
        super::beneath::guard(workspace);
        let ws = workspace.to_path_buf();
        let taking = std::thread::Builder::new()
            .name("census".into())
            .spawn(move || Self::census(&ws))
            .ok();
        SessionState {
            cwd: Mutex::new(workspace.to_path_buf()),
            viewed: Mutex::new(HashMap::new()),
            loaded_skills: Mutex::new(HashMap::new()),
            history: Mutex::new(Vec::new()),
            unsent: Mutex::new(Vec::new()),
            unsent_lost: Mutex::new(Vec::new()),
            unrestorable: Mutex::new(Vec::new()),
            todos: Mutex::new(Vec::new()),
            turn: Mutex::new(0),
            jobs: super::jobs::JobTable::new(),
            census: Mutex::new(None),
            taking: Mutex::new(taking),
            workspace: workspace.to_path_buf(),
            noticed_start: Mutex::new(Vec::new()),
            moved_between: Mutex::new(Vec::new()),
            writing: Mutex::new(Vec::new()),
            write_log: Mutex::new(Vec::new()),
            finished: std::sync::atomic::AtomicBool::new(false),
            plant_watch: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The census of `workspace`, compared with what the last session here
    /// knew (tests in this crate keep no record: they would share the
    /// developer's own).
    fn census(workspace: &Path) -> Taken {
        match crate::config::state_dir() {
            Some(state) if !cfg!(test) => {
                let record = crate::sandbox::census::record_file(&state, workspace);
                Census::resume(workspace, &record, &quarantine())
            }
            _ => (Census::take(workspace), Vec::new()),
        }
    }

    /// Checks the control files between tool calls (a background job
    /// ended, a new turn begins): returns what it moved, which the model
    /// also hears with its next tool result. The first call also returns
    /// what the start-up comparison moved.
    pub fn check_between(&self) -> Vec<String> {
        // The start-up census first: what its comparison moved is noticed.
        drop(self.taken());
        // (`taken` already handed it to the next tool result too.)
        let mut said = std::mem::take(&mut *lock(&self.noticed_start));
        said.extend(self.check_now());
        said
    }

    /// Checks the control files now (also while a background job runs and
    /// the session is idle, when the person may run git meanwhile): only
    /// what the census moves now, which the model also hears with its next
    /// tool result.
    pub fn check_now(&self) -> Vec<String> {
        let mut taken = self.taken();
        let deferred = lock(&self.writing).clone();
        let said = match taken.as_mut() {
            Some(census) => {
                count_commands(census);
                census.check_deferring(&quarantine(), &[], &deferred)
            }
            None => Vec::new(),
        };
        drop(taken);
        lock(&self.moved_between).extend(said.iter().cloned());
        said
    }

    /// The session's end: kills its jobs, then checks once more and keeps
    /// the census for the next session. Once only.
    pub fn finish(&self) {
        use std::sync::atomic::Ordering;
        if self.finished.swap(true, Ordering::SeqCst) {
            return;
        }
        if !self.jobs.ids().is_empty() {
            self.jobs.kill_all();
            // A killed job's last writes land before its processes are gone.
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        if let Some(census) = self.taken().as_mut() {
            census.finish(&quarantine());
        }
    }

    /// Waits for the start-up census: called before anything of the
    /// session runs (its hooks, its first tool call).
    pub fn ready(&self) {
        drop(self.taken());
    }

    /// The census, taken: waits for the start-up thread the first time
    /// (or takes it here if that thread could not start or failed), and
    /// hands what its comparison moved to the next notices.
    fn taken(&self) -> std::sync::MutexGuard<'_, Option<Census>> {
        let mut census = lock(&self.census);
        if census.is_none() {
            let handle = lock(&self.taking).take();
            let (taken, moved) = handle
                .and_then(|h| h.join().ok())
                .unwrap_or_else(|| Self::census(&self.workspace));
            lock(&self.noticed_start).extend(moved.iter().cloned());
            lock(&self.moved_between).extend(moved);
            *census = Some(taken);
        }
        census
    }

    /// Moves away git control files that appeared since the last check
    /// (`sandbox::census`) and says what was moved; call after each tool,
    /// with the paths a file tool was approved to write.
    pub fn check_control_files(&self, accepted: &[PathBuf]) -> Vec<String> {
        let mut taken = self.taken();
        let mut said = std::mem::take(&mut *lock(&self.moved_between));
        lock(&self.noticed_start).clear();
        let deferred = lock(&self.writing).clone();
        if let Some(census) = taken.as_mut() {
            count_commands(census);
            // Each approved file is taken in as the tool last wrote it.
            let log = lock(&self.write_log);
            for path in accepted {
                if let Some((_, written)) = log.iter().rev().find(|(p, _)| p == path) {
                    census.expect_written(path, written);
                }
            }
            drop(log);
            said.extend(census.check_deferring(&quarantine(), accepted, &deferred));
        }
        said
    }

    /// The census check right before a file tool writes `paths` (after
    /// the person's answer): what a command planted there while the
    /// dialog was open is moved away now, so the write cannot take it in
    /// as the person's. Says what was moved.
    pub fn settle_before_writing(&self, paths: &[PathBuf]) -> Vec<String> {
        let mut taken = self.taken();
        let deferred: Vec<PathBuf> = (lock(&self.writing).iter())
            .filter(|p| !paths.contains(p))
            .cloned()
            .collect();
        let Some(census) = taken.as_mut() else {
            return Vec::new();
        };
        count_commands(census);
        let said = census.check_deferring(&quarantine(), &[], &deferred);
        census.before_writing(paths);
        said
    }

    /// A file tool changed `path` to `bytes` (other than before).
    pub fn wrote(&self, path: &Path, bytes: &[u8]) {
        let written = crate::sandbox::census::Written::of(bytes);
        lock(&self.write_log).push((path.to_path_buf(), written));
    }

    /// Where [`SessionState::wrote_since`] starts counting.
    pub fn write_mark(&self) -> usize {
        lock(&self.write_log).len()
    }

    /// The files file tools changed since `mark`.
    pub fn wrote_since(&self, mark: usize) -> Vec<PathBuf> {
        (lock(&self.write_log).get(mark..).unwrap_or_default().iter())
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// Notes that a file tool call is about to write `paths` (let by the
    /// gate or the person); [`SessionState::written`] when it is over.
    pub fn writing(&self, paths: &[PathBuf]) {
        lock(&self.writing).extend(paths.iter().cloned());
    }

    pub fn written(&self, paths: &[PathBuf]) {
        let mut w = lock(&self.writing);
        for p in paths {
            if let Some(i) = w.iter().position(|x| x == p) {
                w.remove(i);
            }
        }
    }

    /// A `skill` call loaded this skill.
    pub fn skill_loaded(&self, call_id: &str, skill: LoadedSkill) {
        lock(&self.loaded_skills).insert(call_id.to_string(), skill);
    }

    /// What the `skill` call `call_id` loaded, once.
    pub fn take_loaded_skill(&self, call_id: &str) -> Option<LoadedSkill> {
        lock(&self.loaded_skills).remove(call_id)
    }

    /// The shell's working directory, kept across `bash` calls.
    pub fn cwd(&self) -> PathBuf {
        lock(&self.cwd).clone()
    }
    pub fn set_cwd(&self, dir: PathBuf) {
        *lock(&self.cwd) = dir;
    }

    pub fn record_view(&self, path: &Path, stamp: FileStamp) {
        lock(&self.viewed).insert(path.to_path_buf(), stamp);
    }
    pub fn viewed(&self, path: &Path) -> Option<FileStamp> {
        lock(&self.viewed).get(path).cloned()
    }
    pub fn forget_views(&self) {
        lock(&self.viewed).clear();
    }

    /// Keeps the content a file had before a tool changed it.
    pub fn record_version(&self, path: &Path, before: Option<Vec<u8>>) {
        let turn = self.turn();
        let v = FileVersion {
            path: path.to_path_buf(),
            before,
            turn,
        };
        lock(&self.unsent).push(v.clone());
        lock(&self.history).push(v);
    }

    /// The versions recorded since the last call, for the session store:
    /// they are stored as soon as the tool that made them finishes.
    pub fn take_unsent(&self) -> Vec<FileVersion> {
        std::mem::take(&mut *lock(&self.unsent))
    }

    /// The unrestorable files noted since the last call: (path, turn, why).
    pub fn take_unsent_lost(&self) -> Vec<(PathBuf, u64, String)> {
        std::mem::take(&mut *lock(&self.unsent_lost))
    }

    /// Forgets every version and unrestorable file of turns `from` and
    /// later (a rewind: those turns are gone from the conversation, so undo
    /// must never offer them again).
    pub fn drop_turns_from(&self, from: u64) {
        lock(&self.history).retain(|v| v.turn < from);
        lock(&self.unsent).retain(|v| v.turn < from);
        lock(&self.unrestorable).retain(|(_, t, _)| *t < from);
        lock(&self.unsent_lost).retain(|(_, t, _)| *t < from);
    }
    pub fn record_unrestorable(&self, path: &Path, why: &str) {
        let turn = self.turn();
        let entry = (path.to_path_buf(), turn, why.to_string());
        lock(&self.unsent_lost).push(entry.clone());
        lock(&self.unrestorable).push(entry);
    }

    /// Files changed in turns `from..=to` that cannot be restored.
    pub fn unrestorable(&self, from: u64, to: u64) -> Vec<(PathBuf, String)> {
        lock(&self.unrestorable)
            .iter()
            .filter(|(_, t, _)| *t >= from && *t <= to)
            .map(|(p, _, why)| (p.clone(), why.clone()))
            .collect()
    }

    pub fn versions(&self) -> Vec<FileVersion> {
        lock(&self.history).clone()
    }
    /// Removes and returns the versions recorded during `turn`.
    pub fn take_versions_of_turn(&self, turn: u64) -> Vec<FileVersion> {
        let mut h = lock(&self.history);
        let (taken, kept): (Vec<_>, Vec<_>) = h.drain(..).partition(|v| v.turn == turn);
        *h = kept;
        lock(&self.unsent).retain(|v| v.turn != turn);
        taken
    }

    pub fn turn(&self) -> u64 {
        *lock(&self.turn)
    }
    pub fn set_turn(&self, turn: u64) {
        *lock(&self.turn) = turn;
    }

    pub fn todos(&self) -> Vec<Todo> {
        lock(&self.todos).clone()
    }
    pub fn set_todos(&self, todos: Vec<Todo>) {
        *lock(&self.todos) = todos;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plant_where_a_write_waits_for_the_person_goes_before_the_write() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        let session = SessionState::new(&ws);
        session.ready();
        let plant = ws.join("sub/.claude/settings.json");
        session.writing(std::slice::from_ref(&plant));
        std::fs::create_dir_all(plant.parent().unwrap()).unwrap();
        std::fs::write(&plant, r#"{"hooks":{"SessionStart":[]}}"#).unwrap();
        // Another call's check leaves it: this call's dialog holds it.
        session.check_control_files(&[]);
        assert!(plant.exists());
        // Right before this call writes, it goes.
        let moved = session.settle_before_writing(std::slice::from_ref(&plant));
        assert!(!plant.exists(), "{moved:?}");
        assert!(moved.iter().any(|m| m.contains("sub/.claude")), "{moved:?}");
        // What a file tool changed is what it is taken at.
        let mark = session.write_mark();
        session.wrote(&ws.join("a.txt"), b"x");
        assert_eq!(session.wrote_since(mark), [ws.join("a.txt")]);
        assert!(session.wrote_since(mark + 1).is_empty());
    }

    #[test]
    fn an_approved_file_is_taken_in_only_as_it_was_written() {
        for swapped in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let ws = dir.path().canonicalize().unwrap();
            std::fs::create_dir_all(ws.join(".git")).unwrap();
            let session = SessionState::new(&ws);
            session.ready();
            let file = ws.join(".claude/settings.json");
            let approved = br#"{"env":{"NOTE":"HARMLESS"}}"#;
            session.writing(std::slice::from_ref(&file));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, approved).unwrap();
            session.wrote(&file, approved);
            if swapped {
                // A command swaps it between the write and the check.
                std::fs::write(&file, br#"{"hooks":{"SessionStart":[]}}"#).unwrap();
            }
            session.written(std::slice::from_ref(&file));
            let moved = session.check_control_files(std::slice::from_ref(&file));
            assert_eq!(file.exists(), !swapped, "swapped {swapped}: {moved:?}");
            // What stayed is taken in: the next check leaves it.
            assert!(session.check_control_files(&[]).is_empty() || swapped);
        }
    }
}
