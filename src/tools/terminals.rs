//! A front end's terminals (an editor's, over ACP `terminal/*`), where the
//! `bash` tool shows a foreground command while it runs. This is only the
//! transport: what runs there is cairn's own launcher, which rebuilds the
//! call's sandbox (`tools::shell::launch`); the answer for the model is
//! still read by cairn.

use std::path::Path;

use async_trait::async_trait;

/// The terminal calls `bash` needs; every error is said in words.
#[async_trait]
pub trait Terminals: Send + Sync {
    /// Starts `program args…` in `cwd`, shown with the call `call_id`;
    /// answers the terminal's id.
    async fn create(
        &self,
        call_id: &str,
        program: &Path,
        args: Vec<String>,
        cwd: &Path,
    ) -> Result<String, String>;
    /// Waits for the process to end: its exit code (128 + n for signal n).
    async fn wait_for_exit(&self, id: &str) -> Result<i32, String>;
    /// What it printed so far (the terminal keeps a bounded tail).
    async fn output(&self, id: &str) -> Result<String, String>;
    async fn kill(&self, id: &str) -> Result<(), String>;
    /// The terminal is no longer needed (the editor may keep showing it).
    async fn release(&self, id: &str);
    /// A command could not go to the terminal and ran inside cairn: said
    /// once to the person.
    fn fell_back(&self, why: &str);
}
