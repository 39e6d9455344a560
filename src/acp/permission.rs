//! cairn's permission dialog as `session/request_permission`: the same
//! choices the interface offers (allow once, allow always with the narrow
//! rule it stores named, allow once without the sandbox for a sandboxed
//! command, deny), the diff of an edit or the command as the
//! request's content, and the editor's answer turned back into the
//! `Decision` cairn's gate records.

use std::path::Path;

use agent_client_protocol::v1::schema as acp;

use super::updates;
use crate::permission::Preview;
use crate::protocol::{Decision, PermissionRequest};

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const ALLOW_UNSANDBOXED: &str = "allow_once_unsandboxed";
const DENY: &str = "deny";
/// At most this many "always" rules are offered one by one.
const MAX_RULES: usize = 3;

/// The options, in the order a person reads them.
pub fn options(request: &PermissionRequest) -> Vec<acp::PermissionOption> {
    use acp::PermissionOptionKind as K;
    let mut out = vec![acp::PermissionOption::new(
        ALLOW_ONCE,
        "Allow once",
        K::AllowOnce,
    )];
    if request.rules_together() {
        let named: Vec<String> = request.rules.iter().map(|r| format!("`{r}`")).collect();
        out.push(acp::PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow {}", named.join(", ")),
            K::AllowAlways,
        ));
    } else {
        for (i, rule) in request.rules.iter().take(MAX_RULES).enumerate() {
            out.push(acp::PermissionOption::new(
                format!("{ALLOW_ALWAYS}:{i}"),
                format!("Always allow `{rule}`"),
                K::AllowAlways,
            ));
        }
    }
    if request.can_unsandbox() {
        out.push(acp::PermissionOption::new(
            ALLOW_UNSANDBOXED,
            "Allow once without the sandbox",
            K::AllowOnce,
        ));
    }
    out.push(acp::PermissionOption::new(DENY, "Deny", K::RejectOnce));
    out
}

/// The editor's answer as cairn's decision. An option cairn did not offer
/// is a denial (nothing runs on a misunderstanding), and so is a request
/// the editor withdrew.
pub fn decision(request: &PermissionRequest, outcome: &acp::RequestPermissionOutcome) -> Decision {
    let id = match outcome {
        acp::RequestPermissionOutcome::Selected(s) => s.option_id.0.to_string(),
        _ => {
            return Decision::Deny {
                reason: Some("the editor withdrew the question".into()),
            };
        }
    };
    match id.as_str() {
        ALLOW_ONCE => Decision::AllowOnce,
        ALLOW_ALWAYS if request.rules_together() => Decision::AllowAlwaysAll {
            rules: request.rules.clone(),
        },
        ALLOW_UNSANDBOXED if request.can_unsandbox() => Decision::AllowUnsandboxed,
        DENY => Decision::Deny { reason: None },
        other => {
            let rule = other
                .strip_prefix(ALLOW_ALWAYS)
                .and_then(|n| n.strip_prefix(':'))
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n < MAX_RULES)
                .and_then(|n| request.rules.get(n));
            match rule {
                Some(rule) => Decision::AllowAlways { rule: rule.clone() },
                None => Decision::Deny {
                    reason: Some(format!(
                        "the editor answered `{other}`, not an offered choice"
                    )),
                },
            }
        }
    }
}

/// The call as the request shows it: its summary, and the diff of an edit
/// or what would run and why cairn asks.
pub fn tool_call(cwd: &Path, call_id: &str, request: &PermissionRequest) -> acp::ToolCallUpdate {
    let mut content = Vec::new();
    let mut why = request.reasons.join("; ");
    if let Some(sandbox) = &request.sandbox {
        why = format!("{why}\n{sandbox}");
    }
    if let Some(line) = &request.formatting {
        why = format!("{why}\n{line}");
    }
    match &request.preview {
        Some(Preview::Diff(d)) => content.push(updates::diff(cwd, d)),
        Some(Preview::Diffs { files }) => {
            content.extend(files.iter().map(|d| updates::diff(cwd, d)))
        }
        Some(Preview::Command { command, cwd, .. }) => {
            content.push(updates::content_text(format!("$ {command}\n(in {cwd})")))
        }
        Some(Preview::Url { url }) => content.push(updates::content_text(url.clone())),
        Some(Preview::Input { input }) | Some(Preview::Mcp { input, .. }) => {
            let shown = serde_json::to_string_pretty(input).unwrap_or_default();
            content.push(updates::content_text(shown))
        }
        None => {}
    }
    if !why.trim().is_empty() {
        content.push(updates::content_text(why));
    }
    let fields = acp::ToolCallUpdateFields::new()
        .title(request.summary.clone())
        .kind(updates::kind_of(&request.tool))
        .status(acp::ToolCallStatus::Pending)
        .content(content);
    acp::ToolCallUpdate::new(call_id.to_string(), fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(rules: &[&str], preview: Option<Preview>) -> PermissionRequest {
        PermissionRequest {
            formatting: None,
            tool: "edit".into(),
            summary: "edit a.txt".into(),
            reasons: vec!["writes a file".into()],
            preview,
            rules: rules.iter().map(|r| r.to_string()).collect(),
            sandbox: None,
        }
    }

    fn pick(id: &str) -> acp::RequestPermissionOutcome {
        acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(id.to_string()))
    }

    #[test]
    fn each_offered_choice_maps_to_the_gate_decision() {
        let r = request(&["edit(a.txt)", "edit(*)"], None);
        let opts = options(&r);
        let names: Vec<&str> = opts.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Allow once",
                "Always allow `edit(a.txt)`",
                "Always allow `edit(*)`",
                "Deny"
            ]
        );
        assert_eq!(decision(&r, &pick("allow_once")), Decision::AllowOnce);
        assert_eq!(
            decision(&r, &pick(&opts[2].option_id.0)),
            Decision::AllowAlways {
                rule: "edit(*)".into()
            }
        );
        assert_eq!(decision(&r, &pick("deny")), Decision::Deny { reason: None });
    }

    #[test]
    fn unknown_or_withdrawn_answers_deny() {
        let r = request(&["edit(a.txt)"], None);
        for outcome in [
            pick("allow_always:7"),
            pick("yes please"),
            acp::RequestPermissionOutcome::Cancelled,
        ] {
            assert!(
                matches!(decision(&r, &outcome), Decision::Deny { reason: Some(_) }),
                "{outcome:?}"
            );
        }
    }

    #[test]
    fn a_command_stores_all_its_rules_together() {
        let preview = Preview::Command {
            command: "cargo test && ls".into(),
            cwd: "/w".into(),
            commands: vec![],
            redirects: vec![],
        };
        let mut r = request(&["bash(cargo test*)", "bash(ls*)"], Some(preview));
        r.tool = "bash".into();
        let opts = options(&r);
        assert_eq!(opts.len(), 3);
        assert_eq!(
            decision(&r, &pick("allow_always")),
            Decision::AllowAlwaysAll {
                rules: r.rules.clone()
            }
        );
    }

    #[test]
    fn a_sandboxed_command_may_run_once_outside_it() {
        let preview = Preview::Command {
            command: "cargo fetch".into(),
            cwd: "/w".into(),
            commands: vec![],
            redirects: vec![],
        };
        let mut r = request(&["bash(cargo fetch*)"], Some(preview));
        r.tool = "bash".into();
        let unsandboxed = pick("allow_once_unsandboxed");
        // Not offered (nothing enforced to leave): a stray answer denies.
        assert!(
            options(&r)
                .iter()
                .all(|o| o.option_id.0.as_ref() != "allow_once_unsandboxed")
        );
        assert!(matches!(
            decision(&r, &unsandboxed),
            Decision::Deny { reason: Some(_) }
        ));
        r.sandbox = Some("sandbox: workspace-write, network off".into());
        let names: Vec<String> = options(&r).iter().map(|o| o.name.clone()).collect();
        assert_eq!(
            names,
            [
                "Allow once",
                "Always allow `bash(cargo fetch*)`",
                "Allow once without the sandbox",
                "Deny"
            ]
        );
        assert_eq!(decision(&r, &unsandboxed), Decision::AllowUnsandboxed);
    }

    #[test]
    fn an_edit_shows_its_diff_with_the_full_path() {
        let d = crate::diff::FileDiff::new("a.txt".into(), "one\n".into(), "two\n".into());
        let r = request(&[], Some(Preview::Diff(d)));
        let call = tool_call(Path::new("/w"), "c1", &r);
        let json = serde_json::to_value(&call).unwrap();
        assert_eq!(json["content"][0]["type"], "diff");
        assert_eq!(json["content"][0]["path"], "/w/a.txt");
        assert_eq!(json["content"][0]["oldText"], "one\n");
        assert_eq!(json["content"][0]["newText"], "two\n");
        // No rules to store: only once and deny.
        assert_eq!(options(&r).len(), 2);
    }
}
