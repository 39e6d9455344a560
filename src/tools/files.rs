//! Where the file tools read text: the disk, or a front end's own copy of
//! the files (an editor's buffers, reached over the Agent Client
//! Protocol), so unsaved changes are seen.
//!
//! The front end only supplies the transport ([`FileAccess`]); every rule
//! stays here and runs first. A path goes to the front end only when it
//! lies inside the workspace, after it opened beneath the workspace as a
//! regular file (no link leads out of it), and the front end is asked
//! about the real path that open reached. The front end then opens that
//! name itself, outside cairn's hold, so a contained command could swap a
//! link in for that moment: every folder on the path is watched while it
//! reads (`sandbox::unmoved`), and an answer given while any of them
//! changed is dropped for the disk's text. Writes never go through the
//! front end — no check made here could hold for a name another process
//! opens — but to the disk, pinned beneath the workspace; an editor
//! reloads a file that changed on disk.

use std::io;
use std::path::{Path, PathBuf};

use super::ToolContext;
use super::state::FileStamp;

/// A front end's copy of the files. The call blocks (the tools run it on
/// blocking threads) and gets absolute paths already checked.
pub trait FileAccess: Send + Sync {
    /// The file's text as the front end holds it (an unsaved buffer when
    /// one is open); `Err` says why it could not.
    fn read_text(&self, path: &Path) -> Result<String, String>;
}

/// The front end that reads `path`, with the real path to ask it about;
/// `None` reads the disk.
fn reader(ctx: &ToolContext, path: &Path) -> io::Result<Option<PathBuf>> {
    if ctx.files.is_none() || !ctx.in_workspace(path) {
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
    let root = std::fs::canonicalize(&ctx.workspace)?;
    let Some(quiet) = crate::sandbox::unmoved::Unmoved::watch(&root, &real) else {
        return super::regular::read_bounded(path, max);
    };
    // The name is checked again with the watch in place: a swap before
    // the watch began is caught here, one after it by the watch.
    if super::beneath::real_path(path).ok().as_deref() != Some(real.as_path()) {
        return super::regular::read_bounded(path, max);
    }
    let answer = files.read_text(&real);
    if !quiet.held() {
        tracing::warn!(
            "a folder on {} changed while the front end read it; the disk's text is used",
            real.display()
        );
        return super::regular::read_bounded(path, max);
    }
    match answer {
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

/// Writes `bytes` to `path` on the disk, atomically and beneath the
/// workspace, and records what the model now knows of the file.
pub fn write(ctx: &ToolContext, path: &Path, bytes: &[u8]) -> Result<(), String> {
    super::atomic::write_atomic(path, bytes)
        .map_err(|e| format!("cannot write {}: {e}", ctx.display_path(path)))?;
    if let Ok(meta) = std::fs::metadata(path) {
        ctx.session
            .record_view(path, FileStamp::of_bytes(bytes, &meta));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
