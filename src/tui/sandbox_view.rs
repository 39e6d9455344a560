//! What the interface shows of the sandbox: plain data handed over at
//! start (the interface never asks the service itself).

/// How the sandbox stands, for the status line and `/sandbox`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxView {
    /// "sandbox: workspace-write, network off", "sandbox off", "sandbox
    /// not enforced"; empty when unknown (nothing is shown).
    pub label: String,
    /// Turned off by the person: shown in red.
    pub off: bool,
    /// The full report `/sandbox` prints (as `cairn sandbox --status`).
    pub report: String,
}

/// Works out the [`SandboxView`]; run once, off the interface thread, after
/// the first frame (it may start bubblewrap to see whether it works here).
pub type SandboxProbe = std::sync::Arc<dyn Fn() -> SandboxView + Send + Sync>;

impl SandboxView {
    /// The text `/sandbox` shows.
    pub fn details(&self) -> String {
        if self.report.is_empty() {
            "The sandbox state is not known in this session.".into()
        } else {
            format!("Sandbox\n{}", self.report.trim_end())
        }
    }
}
