//! Where the file tools read and write text: the disk, or a front end's
//! own copy of the files (an editor's buffers, reached over the Agent
//! Client Protocol), so unsaved changes are seen and edits land where the
//! person is looking.
//!
//! The front end only supplies the transport ([`FileAccess`]); every rule
//! stays here and runs first. A path goes to the front end only when it
//! lies inside the workspace, after it opened beneath the workspace as a
//! regular file (no link leads out of it) — and the front end is asked
//! about the real path that open reached, not the name the model gave. A
//! write pins its directory and refuses a control file reached through a
//! link, as the disk write does. Whatever the front end answers cannot
//! widen any of that: it is only asked about paths already allowed.

use std::io;
use std::path::{Path, PathBuf};

use super::ToolContext;
use super::state::{FileStamp, hash_bytes};

/// A front end's copy of the files. Both calls block (the tools run them
/// on blocking threads) and get absolute paths already checked.
pub trait FileAccess: Send + Sync {
    /// Whether text is read through it.
    fn reads(&self) -> bool;
    /// Whether text is written through it.
    fn writes(&self) -> bool;
    /// The file's text as the front end holds it (an unsaved buffer when
    /// one is open); `Err` says why it could not.
    fn read_text(&self, path: &Path) -> Result<String, String>;
    /// Replaces the file's text in the front end (its buffer).
    fn write_text(&self, path: &Path, text: &str) -> Result<(), String>;
}

/// The front end that reads `path`, with the real path to ask it about;
/// `None` reads the disk.
fn reader(ctx: &ToolContext, path: &Path) -> io::Result<Option<PathBuf>> {
    if !ctx.files.as_ref().is_some_and(|f| f.reads()) || !ctx.in_workspace(path) {
        return Ok(None);
    }
    let file = super::beneath::open(path)?;
    let meta = file.metadata()?;
    if let Some(kind) = super::regular::special_kind(&meta) {
        return Err(io::Error::other(format!("it is {kind}")));
    }
    let real = super::beneath::real_path(path)?;
    Ok(ctx.in_workspace(&real).then_some(real))
}

/// Reads at most `max` bytes of `path`, through the front end when it
/// reads files (falling back to the disk when it cannot answer), else
/// from the disk as [`super::regular::read_bounded`] does.
pub fn read_bounded(ctx: &ToolContext, path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let (Some(real), Some(files)) = (reader(ctx, path)?, ctx.files.as_ref()) else {
        return super::regular::read_bounded(path, max);
    };
    match files.read_text(&real) {
        Ok(text) if text.len() as u64 > max => Err(io::Error::other(format!(
            "it is larger than the {} MB limit",
            max / (1024 * 1024)
        ))),
        Ok(text) => Ok(text.into_bytes()),
        Err(why) => {
            tracing::warn!("the front end could not read {}: {why}", real.display());
            super::regular::read_bounded(path, max)
        }
    }
}

/// Writes `bytes` to `path`: through the front end when it writes files
/// and the path is in the workspace and the bytes are text, else to the
/// disk atomically. Records what the model now knows of the file.
pub fn write(ctx: &ToolContext, path: &Path, bytes: &[u8]) -> Result<(), String> {
    let shown = ctx.display_path(path);
    let through = ctx
        .files
        .as_ref()
        .filter(|f| f.writes() && ctx.in_workspace(path));
    let text = std::str::from_utf8(bytes).ok();
    let (Some(files), Some(text)) = (through, text) else {
        super::atomic::write_atomic(path, bytes)
            .map_err(|e| format!("cannot write {shown}: {e}"))?;
        if let Ok(meta) = std::fs::metadata(path) {
            ctx.session
                .record_view(path, FileStamp::of_bytes(bytes, &meta));
        }
        return Ok(());
    };
    let landing = landing(path).map_err(|e| format!("cannot write {shown}: {e}"))?;
    files
        .write_text(&landing, text)
        .map_err(|e| format!("cannot write {shown}: the editor refused it: {e}"))?;
    ctx.session.record_view(
        path,
        FileStamp {
            modified: None,
            len: bytes.len() as u64,
            hash: hash_bytes(bytes),
        },
    );
    Ok(())
}

/// Where a write to `path` lands, with the checks of the disk write: a
/// link followed only inside the workspace, the directory pinned (and
/// made) beneath it, a control file reached by another name refused, and
/// nothing but a regular file replaced.
fn landing(path: &Path) -> io::Result<PathBuf> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => super::beneath::real_path(path)?,
        _ => path.to_path_buf(),
    };
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(io::Error::other("not a file path"));
    };
    let (pin, _) = super::beneath::pinned_dir(dir)?;
    let real = if cfg!(target_os = "linux") {
        super::beneath::landing(&pin, name)?
    } else {
        target.clone()
    };
    super::beneath::check_control(path, &real)?;
    if let Ok(meta) = std::fs::symlink_metadata(&real)
        && !meta.is_file()
    {
        return Err(io::Error::other("it is not a regular file"));
    }
    Ok(real)
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
