//! The person's answers to "trust this project's settings?", kept per
//! project (its canonical path) with the SHA-256 of the project file they
//! answered about: a changed file is asked about again.
//!
//! Stored as JSON in `<data dir>/cairn/trusted_projects.json`, mode 0600. A
//! store that others could write to is not believed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::project::Held;
use super::{Config, ConfigFile};

#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("cannot read or write the trust store {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the trust store {path} is damaged ({message}); fix or delete it")]
    Damaged { path: PathBuf, message: String },
    #[error("the trust store {path} belongs to or can be written by other users; not using it")]
    Unsafe { path: PathBuf },
    #[error("no user data directory on this system to keep trust decisions in")]
    NoDataDir,
}

/// The project file's settings that need trust, found when loading.
#[derive(Debug, Clone)]
pub struct Pending {
    pub held: Vec<Held>,
    /// SHA-256 of the project file's bytes, hex.
    pub hash: String,
    /// The person's config with the whole project file over it.
    pub(super) full: ConfigFile,
}

/// How the project's settings stand for this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// No project file, or nothing in it needs trust.
    NothingToTrust,
    /// Trusted earlier, for this very file.
    Trusted,
    /// Accepted for this run only (`--trust-project`).
    TrustedThisRun,
    /// The person said no to this very file.
    Refused,
    /// Not decided: the interface asks; headless runs ignore them.
    Undecided,
}

/// One stored answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The project root, canonical.
    pub project: PathBuf,
    pub sha256: String,
    pub trusted: bool,
    /// When it was answered (RFC 3339, UTC).
    pub decided_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    version: u32,
    projects: Vec<Entry>,
}

pub struct TrustStore {
    path: PathBuf,
}

pub fn hash_text(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// What trust is stored under: the project file's hash, and with `extra`
/// (the fingerprint of the project's hooks and their scripts) both.
pub fn hash_with(project: &[u8], extra: &str) -> String {
    let file = hash_text(project);
    if extra.is_empty() {
        return file;
    }
    hash_text(format!("{file}\n{extra}").as_bytes())
}

/// The key a project is stored under: its canonical root.
pub fn project_key(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

impl TrustStore {
    pub fn at(path: PathBuf) -> TrustStore {
        TrustStore { path }
    }

    /// `<data dir>/cairn/trusted_projects.json`.
    pub fn default_location() -> Result<TrustStore, TrustError> {
        super::data_dir()
            .map(|d| TrustStore::at(d.join("trusted_projects.json")))
            .ok_or(TrustError::NoDataDir)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn entries(&self) -> Result<Vec<Entry>, TrustError> {
        Ok(self.read()?.projects)
    }

    /// The stored answer for this project and this exact file content.
    pub fn lookup(&self, root: &Path, hash: &str) -> Result<Option<bool>, TrustError> {
        let key = project_key(root);
        Ok(self
            .read()?
            .projects
            .into_iter()
            .find(|e| e.project == key && e.sha256 == hash)
            .map(|e| e.trusted))
    }

    /// Whether the person trusted this project before, in a form that is
    /// not the one it has now (the exact form would not be asked about).
    pub fn trusted_before(&self, root: &Path) -> bool {
        let key = project_key(root);
        self.read()
            .is_ok_and(|f| f.projects.iter().any(|e| e.project == key && e.trusted))
    }

    /// Stores an answer, replacing any earlier one for the project.
    pub fn record(&self, root: &Path, hash: &str, trusted: bool) -> Result<(), TrustError> {
        let key = project_key(root);
        let mut file = self.read()?;
        file.projects.retain(|e| e.project != key);
        file.projects.push(Entry {
            project: key,
            sha256: hash.to_string(),
            trusted,
            decided_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        });
        self.write(&file)
    }

    /// Forgets the answer for a project; whether there was one.
    pub fn revoke(&self, root: &Path) -> Result<bool, TrustError> {
        let key = project_key(root);
        let mut file = self.read()?;
        let before = file.projects.len();
        file.projects
            .retain(|e| e.project != key && e.project != root);
        if file.projects.len() == before {
            return Ok(false);
        }
        self.write(&file)?;
        Ok(true)
    }

    fn io(&self, source: std::io::Error) -> TrustError {
        TrustError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn read(&self) -> Result<StoreFile, TrustError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(StoreFile::default());
            }
            Err(e) => return Err(self.io(e)),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::{MetadataExt, PermissionsExt};
            let meta = std::fs::metadata(&self.path).map_err(|e| self.io(e))?;
            // Writable by others, or someone else's: not the person's answers.
            // SAFETY: geteuid cannot fail and touches no memory.
            let owner = unsafe { libc::geteuid() };
            if meta.permissions().mode() & 0o022 != 0 || meta.uid() != owner {
                return Err(TrustError::Unsafe {
                    path: self.path.clone(),
                });
            }
        }
        serde_json::from_str(&text).map_err(|e| TrustError::Damaged {
            path: self.path.clone(),
            message: e.to_string(),
        })
    }

    fn write(&self, file: &StoreFile) -> Result<(), TrustError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let text = serde_json::to_string_pretty(&StoreFile {
            version: 1,
            projects: file.projects.clone(),
        })
        .map_err(|e| self.io(std::io::Error::other(e)))?;
        // Written beside and renamed (0600), so a crash never leaves half a store.
        crate::private::replace(&self.path, text.as_bytes()).map_err(|e| self.io(e))
    }
}

impl Config {
    /// Lays the whole project file over the person's config.
    pub fn trust_project(&mut self) {
        if let Some(p) = &self.pending {
            self.file = p.full.clone();
        }
    }

    /// Adds what the project holds beside its config file that needs trust
    /// (its hooks, from `.claude/settings.json` too) and a fingerprint of
    /// those files and the scripts they and the project's servers name:
    /// trust then covers them, and a change to any of them is asked about
    /// again.
    pub fn hold_more(&mut self, held: Vec<Held>, fingerprint: &str) {
        if held.is_empty() && (self.pending.is_none() || fingerprint.is_empty()) {
            return;
        }
        let file = self.file.clone();
        let project = std::fs::read(&self.project_path).unwrap_or_default();
        let pending = self.pending.get_or_insert_with(|| Pending {
            held: Vec::new(),
            hash: String::new(),
            full: file,
        });
        pending.held.extend(held);
        pending.hash = hash_with(&project, fingerprint);
    }

    /// What the project file holds that needs trust (empty when nothing).
    pub fn held(&self) -> &[Held] {
        self.pending.as_ref().map(|p| &p.held[..]).unwrap_or(&[])
    }

    /// Applies a stored answer or `--trust-project`; what stands then.
    pub fn apply_trust(
        &mut self,
        store: Option<&TrustStore>,
        root: &Path,
        this_run: bool,
    ) -> Result<Standing, TrustError> {
        let Some(pending) = &self.pending else {
            return Ok(Standing::NothingToTrust);
        };
        if this_run {
            self.trust_project();
            return Ok(Standing::TrustedThisRun);
        }
        let Some(store) = store else {
            return Ok(Standing::Undecided);
        };
        Ok(match store.lookup(root, &pending.hash)? {
            Some(true) => {
                self.trust_project();
                Standing::Trusted
            }
            Some(false) => Standing::Refused,
            None => Standing::Undecided,
        })
    }

    /// Stores the person's answer and applies it.
    pub fn answer_trust(
        &mut self,
        store: &TrustStore,
        root: &Path,
        trusted: bool,
    ) -> Result<Standing, TrustError> {
        let Some(pending) = &self.pending else {
            return Ok(Standing::NothingToTrust);
        };
        store.record(root, &pending.hash, trusted)?;
        if trusted {
            self.trust_project();
            Ok(Standing::Trusted)
        } else {
            Ok(Standing::Refused)
        }
    }
}

/// After cairn itself changed the project file for the person (an "allow
/// always" rule, a removed rule): when the project as it was before was
/// trusted, or held nothing that needs trust (no hooks anywhere, only
/// sections the project rules sort, none of it held), the new file is still
/// the person's own and is recorded as trusted, so their own rule does not
/// make cairn ask again. Returns whether it recorded.
pub fn keep_after_own_edit(
    store: &TrustStore,
    root: &Path,
    global: Option<&Path>,
    before: Option<&[u8]>,
) -> Result<bool, TrustError> {
    keep_after_own_edit_with(store, root, global, before, "")
}

/// [`keep_after_own_edit`] in a project whose hooks have the fingerprint
/// `extra` (`Config::hold_more`), which the stored answer covers too.
pub fn keep_after_own_edit_with(
    store: &TrustStore,
    root: &Path,
    global: Option<&Path>,
    before: Option<&[u8]>,
    extra: &str,
) -> Result<bool, TrustError> {
    let bytes = before.unwrap_or_default();
    let was_own = store.lookup(root, &hash_with(bytes, extra))? == Some(true)
        || (extra.is_empty() && holds_nothing(global, bytes));
    if !was_own {
        return Ok(false);
    }
    let path = super::project_config_path(root);
    let after = std::fs::read(&path).map_err(|source| TrustError::Io { path, source })?;
    store.record(root, &hash_with(&after, extra), true)?;
    Ok(true)
}

/// The sections [`super::project::split`] sorts into what applies and what
/// waits for trust. A file with any other section (`[hooks]`, `[sandbox]`,
/// `[agents]`, `[compat]`, …) is never taken for harmless: what it holds is
/// judged elsewhere or not at all.
const SORTED_SECTIONS: &[&str] = &[
    "provider",
    "model",
    "theme",
    "max_turns",
    "max_tokens",
    "reasoning",
    "effort",
    "providers",
    "retry",
    "permissions",
    "context",
    "keys",
    "mcp",
    "shell",
    "models",
    "search",
    "lsp",
    "format",
    "ui",
];

/// Whether the project file `bytes` (empty: no file) holds nothing that
/// needs the person's trust.
fn holds_nothing(global: Option<&Path>, bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let Ok(table) = text.parse::<toml::Table>() else {
        return false;
    };
    if table.keys().any(|k| !SORTED_SECTIONS.contains(&k.as_str())) {
        return false;
    }
    let base = global
        .and_then(|g| super::read_file(g).ok().flatten())
        .map(|(f, _)| f)
        .unwrap_or_default();
    super::parse(&text).is_ok_and(|p| super::project::split(&base, &p).held.is_empty())
}

/// The message a run without the interface prints about what it ignores.
pub fn ignored_message(config_path: &Path, held: &[Held], standing: Standing) -> String {
    let why = match standing {
        Standing::Refused => "you chose not to trust this project",
        _ => {
            "this project is not trusted yet; start `cairn` here to decide, or pass --trust-project"
        }
    };
    // Hooks alone (from `.claude/settings.json`) leave no project file.
    let place = if config_path.exists() {
        format!(
            "in {}",
            super::project::printable(&config_path.display().to_string())
        )
    } else {
        "of this project".to_string()
    };
    let mut text = format!(
        "cairn: ignoring {} setting{} {place} ({why}):",
        held.len(),
        if held.len() == 1 { "" } else { "s" },
    );
    for h in held {
        text.push_str(&format!("\n  - {h}"));
    }
    text
}

#[cfg(test)]
mod tests;
