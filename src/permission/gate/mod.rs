//! The gate every tool call passes: security (blocks), permission (mode and
//! rules: allow, ask or deny), repetition (blocks a stuck model).
//!
//! `sandbox_mode` is what smart and auto still ask when the sandbox is
//! enforced, and what an approval grants for one run.

use std::path::{Path, PathBuf};

use super::needs;
use super::paths;
use super::readonly;
use super::rules::{Rule, RuleError, Rules};
use super::runtime_paths;
use super::security::{self, Findings, cautions};
use super::suggest::suggest_rules_covering;
use super::{CallInfo, Mode, Verdict};
use crate::permission::repetition::Repetition;
use crate::sandbox::Facts;
use crate::shell::{self, ShellAnalysis};

/// Tools that only read and run without asking (also in always-ask mode).
pub const READ_ONLY_TOOLS: &[&str] = &["view", "grep", "glob", "ls", "job_output", "todos"];

pub struct Gate {
    mode: Mode,
    rules: Rules,
    /// Allow rules that hold until the turn ends (a skill's or a custom
    /// command's `allowed-tools`), kept apart so that they go then.
    for_turn: Vec<Rule>,
    /// The rules without `for_turn`, while any are granted.
    standing: Option<Rules>,
    repetition: Repetition,
    /// Prefixes of MCP tool names the person trusts (`mcp__docs__`).
    trusted_tools: Vec<String>,
    home: Option<PathBuf>,
    /// What the sandbox guarantees; decides what smart and auto still ask.
    sandbox: Facts,
}

/// What the permission inspector concluded before rules are applied.
struct Judgement {
    /// Reasons that an allow rule may lift.
    liftable: Vec<String>,
    /// Reasons no rule lifts: outside the workspace, cautions, unreadable.
    fixed: Vec<String>,
    /// Whether suggested rules may be offered.
    offer_rules: bool,
}

impl Gate {
    pub fn new(mode: Mode, rules: Rules, repeat_limit: u32) -> Gate {
        Gate {
            mode,
            rules,
            for_turn: Vec::new(),
            standing: None,
            repetition: Repetition::new(repeat_limit),
            trusted_tools: Vec::new(),
            home: paths::home_dir(),
            sandbox: Facts::NONE,
        }
    }

    /// Commands run in a sandbox with these guarantees.
    pub fn with_sandbox(mut self, facts: Facts) -> Gate {
        self.sandbox = facts;
        self
    }

    pub fn set_sandbox(&mut self, facts: Facts) {
        self.sandbox = facts;
    }

    pub fn sandbox(&self) -> Facts {
        self.sandbox
    }

    /// Trust MCP tools whose names start with any of `prefixes`
    /// (`mcp__docs__` trusts every tool of the `docs` server).
    pub fn with_trusted_tools(mut self, prefixes: Vec<String>) -> Gate {
        self.trusted_tools = prefixes;
        self
    }

    /// Use `home` instead of `$HOME` when resolving `~` (tests).
    pub fn with_home(mut self, home: Option<PathBuf>) -> Gate {
        self.home = home;
        self
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Replace the rules (the config file changed); what this turn was
    /// granted still holds until it ends.
    pub fn set_rules(&mut self, rules: Rules) {
        self.rules = rules.clone();
        for rule in &self.for_turn {
            self.rules.add_allow(rule.clone());
        }
        if self.standing.is_some() {
            self.standing = Some(rules);
        }
    }

    /// Allows `rules` (as the config writes them) until [`Gate::end_turn`];
    /// returns the ones that were not allowed already. A rule that does not
    /// parse is left out.
    pub fn grant_for_turn(&mut self, rules: &[String]) -> Vec<String> {
        let mut granted = Vec::new();
        for text in rules {
            let Ok(rule) = Rule::parse(text) else {
                continue;
            };
            if self.rules.allow().contains(&rule) {
                continue;
            }
            if self.standing.is_none() {
                self.standing = Some(self.rules.clone());
            }
            self.rules.add_allow(rule.clone());
            self.for_turn.push(rule);
            granted.push(text.clone());
        }
        granted
    }

    /// The turn is over: what it was granted goes.
    pub fn end_turn(&mut self) {
        self.for_turn.clear();
        if let Some(standing) = self.standing.take() {
            self.rules = standing;
        }
    }

    pub fn set_trusted_tools(&mut self, prefixes: Vec<String>) {
        self.trusted_tools = prefixes;
    }

    /// The session effect of "Allow always": the rule holds from now on.
    pub fn add_allow_rule(&mut self, rule: &str) -> Result<(), RuleError> {
        let rule = Rule::parse(rule)?;
        if let Some(standing) = &mut self.standing {
            standing.add_allow(rule.clone());
        }
        self.for_turn.retain(|r| *r != rule);
        self.rules.add_allow(rule);
        Ok(())
    }

    /// Forget repeated-call history (a new user turn).
    pub fn reset_repetition(&mut self) {
        self.repetition.reset();
    }

    /// A call that was cancelled or failed does not count as a repeat.
    pub fn uncount_repetition(&mut self, tool: &str, input: &serde_json::Value) {
        self.repetition.uncount(tool, input);
    }

    /// Judge one call, and record it for the repetition check (so call
    /// this once per call the model makes).
    ///
    /// - chat: every tool is denied; plan: every call that is not read-only.
    /// - security blocks (`rm -rf /`, `sudo`, `curl … | sh`, writes into
    ///   system directories, …) hold in every other mode; no rule lifts them.
    /// - deny rules refuse, in every mode.
    /// - outside the workspace, unreadable commands and cautions (force
    ///   push to main, removing the workspace, …) ask in every mode, and no
    ///   allow rule lifts them.
    /// - smart: read-only tools and read-only shell commands run; the rest
    ///   asks unless allow rules cover it (every command of a shell call).
    /// - always-ask: read-only tools run; everything else asks unless allow
    ///   rules cover it, read-only shell commands included.
    /// - auto: everything else runs.
    /// - repetition: the same call too many times in a row is blocked.
    pub fn check(&mut self, call: &CallInfo) -> Verdict {
        if self.mode == Mode::Chat {
            return Verdict::Deny {
                message: "tools are off in chat mode; answer in text. If a tool is really \
                          needed, ask the user to switch to another mode."
                    .into(),
            };
        }
        if self.mode == Mode::Plan
            && let Some(why) = self.read_only_refusal(call)
        {
            return Verdict::Deny {
                message: format!(
                    "you are in plan mode: {why}, so it was not run. While planning only \
                     read-only tools run; explore, then call exit_plan_mode with your plan \
                     for the person to approve."
                ),
            };
        }
        let analysis = if call.tool == "bash" {
            match call.input.get("command").and_then(|c| c.as_str()) {
                Some(command) => Some((command, shell::parse(command))),
                None => {
                    return Verdict::Deny {
                        message: "`bash` needs a `command` string argument.".into(),
                    };
                }
            }
        } else {
            None
        };

        // 1. Security.
        let findings = match &analysis {
            Some((command, a)) => {
                security::inspect_shell(command, a, call.cwd, self.home.as_deref())
            }
            None if super::edits_files(call.tool, call.input) => Findings {
                block: call
                    .paths
                    .iter()
                    .find_map(|p| security::inspect_write_path(p)),
                cautions: Vec::new(),
            },
            None => Findings::default(),
        };
        if let Some(message) = findings.block {
            return Verdict::Block { message };
        }

        // 2. Permission: deny rules, then mode and allow rules.
        let shell_analysis = analysis.as_ref().map(|(_, a)| a);
        if let Some(rule) = self.rules.denied_by(call, shell_analysis) {
            return Verdict::Deny {
                message: format!(
                    "denied by the rule `{rule}` in the user's permission settings. Do not retry \
                     this call; find another way or ask the user."
                ),
            };
        }
        let judgement = self.judge(call, shell_analysis, findings.cautions);
        let verdict = if judgement.liftable.is_empty() && judgement.fixed.is_empty() {
            Verdict::Allow
        } else {
            let fixed = !judgement.fixed.is_empty();
            let mut reasons = judgement.fixed;
            reasons.extend(judgement.liftable);
            // What approving lets the repository run (an install script, a
            // `build.rs`), said plainly.
            if let Some(a) = shell_analysis {
                let asked =
                    (a.commands.iter()).filter(|c| self.rules.command_allowed_by(c).is_none());
                reasons.extend(super::repo_code::notes(asked));
            }
            let reasons = dedup(reasons);
            let rules = if judgement.offer_rules {
                suggest_rules_covering(call, shell_analysis, self.mode == Mode::AlwaysAsk)
            } else {
                Vec::new()
            };
            Verdict::Ask {
                reasons,
                rules,
                fixed,
            }
        };

        // 3. Repetition.
        if let Some(message) = self.repetition.check(call.tool, call.input) {
            return Verdict::Block { message };
        }
        verdict
    }

    fn judge(
        &self,
        call: &CallInfo,
        analysis: Option<&ShellAnalysis>,
        cautions: Vec<String>,
    ) -> Judgement {
        let mut fixed = cautions;
        let mut liftable = Vec::new();
        match analysis {
            Some(a) => {
                // In auto mode an enforced sandbox confines what cannot be
                // read; elsewhere it still asks.
                let confined = self.sandbox.trusted() && self.mode == Mode::Auto;
                if let Some(error) = a.parse_error.as_ref().filter(|_| !confined) {
                    fixed.push(format!("{error}; cairn cannot tell what it would do"));
                }
                for part in a.opaque.iter().filter(|_| !confined) {
                    fixed.push(format!("contains {part}, which cannot be inspected"));
                }
                fixed.extend(cautions::workspace_cautions(
                    a,
                    call.cwd,
                    call.workspace,
                    self.home.as_deref(),
                ));
                if confined {
                    // Reads outside are the sandbox's to judge; writes ask.
                    let home = self.home.as_deref();
                    for path in needs::writes_outside(a, call.cwd, call.workspace, home) {
                        fixed.push(format!("writes outside the workspace: {}", path.display()));
                    }
                } else {
                    fixed.extend(self.shell_outside(a, call));
                    fixed.extend(outside_paths(&call.paths, call.workspace));
                }
                if self.sandbox.trusted() && self.mode != Mode::AlwaysAsk {
                    liftable = self.sandbox_reasons(a, call);
                } else if self.mode != Mode::Auto && a.is_complete() {
                    liftable = self.shell_reasons(a, call);
                }
            }
            None => {
                fixed.extend(outside_paths(&call.paths, call.workspace));
                fixed.extend(control_reasons(call));
                // `fetch` and an untrusted server's tools reach the network
                // outside the sandbox: they ask in auto mode too.
                let network = call.tool == "fetch"
                    || call.tool == "web_search"
                    || call.tool.starts_with("mcp__");
                if (self.mode != Mode::Auto || network) && !self.tool_runs_freely(call) {
                    liftable.push(tool_reason(call));
                    // A rename's files are the server's answer, not the
                    // model's: no rule names them in advance.
                    if !renames(call) && self.rules.allowed_by(call).is_some() {
                        liftable.clear();
                    }
                }
            }
        }
        let offer_rules = fixed.is_empty() && !renames(call);
        Judgement {
            liftable,
            fixed,
            offer_rules,
        }
    }

    fn tool_runs_freely(&self, call: &CallInfo) -> bool {
        if call.tool.starts_with("mcp__") {
            // `read_only` is true only when the person's config lets this
            // server's read-only hints count.
            return call.read_only
                || self
                    .trusted_tools
                    .iter()
                    .any(|p| call.tool.starts_with(p.as_str()));
        }
        READ_ONLY_TOOLS.contains(&call.tool) || (call.read_only && call.tool != "bash")
    }

    /// Why a complete shell analysis needs asking, after allow rules.
    fn shell_reasons(&self, a: &ShellAnalysis, call: &CallInfo) -> Vec<String> {
        let mut reasons = Vec::new();
        for cmd in &a.commands {
            if self.rules.command_allowed_by(cmd).is_some() {
                continue;
            }
            let verdict = readonly::check(cmd);
            match (self.mode, verdict) {
                (Mode::AlwaysAsk, _) => {
                    let text = cmd.text();
                    let shown = if text.is_empty() {
                        cmd.assignments.join(" ")
                    } else {
                        text
                    };
                    reasons.push(format!("always-ask mode asks before running `{shown}`"));
                }
                (_, Err(reason)) => reasons.push(reason),
                (_, Ok(())) => {
                    // Read-only, but of files it cannot see (issue 10, 7).
                    let index = a.commands.iter().position(|c| std::ptr::eq(c, cmd));
                    if let Some(index) = index {
                        reasons.extend(runtime_paths::reasons(a, index, call.cwd, call.workspace));
                    }
                }
            }
        }
        if !a.evaluated.is_empty() && !self.rules.allows_all_bash() {
            let mut places = a.evaluated.clone();
            places.dedup();
            reasons.push(format!(
                "bash evaluates {} as code when it runs: a value like `a[$(cmd)]` there runs \
                 `cmd`",
                places.join(", ")
            ));
        }
        for redirect in a.file_writes() {
            let path = paths::resolve_word(
                &redirect.target,
                redirect.target_literal,
                call.cwd,
                self.home.as_deref(),
            );
            let covered = path
                .as_deref()
                .is_some_and(|p| self.rules.redirect_allowed_by(p, call.workspace).is_some());
            if !covered {
                reasons.push(format!(
                    "writes `{}` (redirect `{}`)",
                    redirect.target, redirect.operator
                ));
            }
        }
        dedup(reasons)
    }

    /// Paths outside the workspace a shell command names, and `cd` out of it.
    fn shell_outside(&self, a: &ShellAnalysis, call: &CallInfo) -> Vec<String> {
        let judge = super::outside::Outside::new(call.workspace, self.home.as_deref());
        dedup(judge.shell(a, call.cwd))
    }
}

/// Why a file tool's write of one of the workspace's control files
/// (`sandbox::control`) asks in every mode, whatever the rules say: the
/// person's own git (or cairn, or another agent) runs what it names later,
/// outside the sandbox. Judged by the path's text and by where its links
/// lead now; `tools::beneath` refuses a link swapped in afterwards.
pub fn control_reasons(call: &CallInfo) -> Vec<String> {
    if !super::edits_files(call.tool, call.input) {
        return Vec::new();
    }
    let workspace = paths::normalize(call.workspace);
    let mut reasons = Vec::new();
    for path in &call.paths {
        let places = crate::sandbox::control::places_in(&workspace, path);
        for rel in places.iter().flatten() {
            if let Some(what) = crate::sandbox::control::control_file_in(&workspace, rel) {
                reasons.push(format!(
                    "changes `{}`, {what} later, outside the sandbox; cairn asks every time \
                     (no rule or mode skips this)",
                    rel.display()
                ));
            }
        }
    }
    dedup(reasons)
}

/// A language server's rename: a change of the files its answer names.
fn renames(call: &CallInfo) -> bool {
    call.tool == "lsp" && super::edits_files(call.tool, call.input)
}

fn outside_paths(paths_in: &[PathBuf], workspace: &Path) -> Vec<String> {
    paths_in
        .iter()
        .filter(|p| !paths::is_within(p, workspace))
        .map(|p| format!("outside the workspace: {}", p.display()))
        .collect()
}

fn tool_reason(call: &CallInfo) -> String {
    let shown: Vec<String> = call
        .paths
        .iter()
        .map(|p| {
            let relative = p.strip_prefix(call.workspace).unwrap_or(p);
            format!("`{}`", relative.display())
        })
        .collect();
    let files = if shown.is_empty() {
        "a file".to_string()
    } else {
        shown.join(", ")
    };
    match call.tool {
        "edit" | "multiedit" => format!("edits {files}"),
        "write" => format!("writes {files}"),
        "lsp" => format!(
            "renames `{}` to `{}` in {files}",
            call.input["symbol"].as_str().unwrap_or("?"),
            call.input["new_name"].as_str().unwrap_or("?")
        ),
        "fetch" => match call.input.get("url").and_then(|u| u.as_str()) {
            Some(url) => format!("fetches `{url}` from the network"),
            None => "fetches from the network".into(),
        },
        "web_search" => match call.input.get("query").and_then(|q| q.as_str()) {
            Some(q) => format!("searches the web for `{q}`"),
            None => "searches the web".into(),
        },
        "job_kill" => "stops a running job".into(),
        tool if tool.starts_with("mcp__") => {
            let server = tool
                .trim_start_matches("mcp__")
                .split("__")
                .next()
                .unwrap_or("");
            format!("`{tool}` is a tool of the MCP server `{server}`, which is not trusted")
        }
        tool => format!("`{tool}` can change things"),
    }
}

fn dedup(mut items: Vec<String>) -> Vec<String> {
    let mut seen = Vec::new();
    items.retain(|i| {
        let fresh = !seen.contains(i);
        seen.push(i.clone());
        fresh
    });
    items
}

mod read_only;
mod sandbox_mode;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod blind_spots_tests;

#[cfg(test)]
mod reviewed_tests;

#[cfg(test)]
mod sandbox_tests;
