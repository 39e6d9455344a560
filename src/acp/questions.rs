//! cairn's other questions as `session/request_permission`: a plan that
//! waits for approval (plan mode), and an MCP server's request for input
//! (elicitation) when its form is a choice an editor can show as options
//! — a confirmation, a yes/no, or one pick from a list. Anything else is
//! declined at once with a note, so no server ever waits on an editor
//! that cannot answer.

use agent_client_protocol::v1::schema as acp;
use serde_json::{Map, Value};

use super::updates;
use crate::config::Mode;
use crate::protocol::Decision;
use crate::tools::input::{FieldKind, InputAnswer, InputRequest};

const APPROVE_SMART: &str = "approve_smart";
const APPROVE_AUTO: &str = "approve_auto";
const KEEP_PLANNING: &str = "keep_planning";
const ACCEPT: &str = "accept";
const YES: &str = "yes";
const NO: &str = "no";
const PICK: &str = "pick:";
const DECLINE: &str = "decline";
/// A list longer than this is not offered option by option.
const MAX_PICKS: usize = 12;

/// The question for a proposed plan, shown on its call.
pub fn plan(call_id: &str, plan: &str) -> (acp::ToolCallUpdate, Vec<acp::PermissionOption>) {
    use acp::PermissionOptionKind as K;
    let fields = acp::ToolCallUpdateFields::new()
        .title("Approve the plan?".to_string())
        .kind(acp::ToolKind::Think)
        .status(acp::ToolCallStatus::Pending)
        .content(vec![updates::content_text(plan.to_string())]);
    let options = vec![
        acp::PermissionOption::new(
            APPROVE_SMART,
            "Approve, then work in smart mode (edits and commands ask)",
            K::AllowOnce,
        ),
        acp::PermissionOption::new(
            APPROVE_AUTO,
            "Approve, then work in auto mode (tools run without asking)",
            K::AllowOnce,
        ),
        acp::PermissionOption::new(KEEP_PLANNING, "Keep planning", K::RejectOnce),
    ];
    (
        acp::ToolCallUpdate::new(call_id.to_string(), fields),
        options,
    )
}

/// The editor's answer to a plan; anything but an approval keeps planning.
pub fn plan_decision(outcome: &acp::RequestPermissionOutcome) -> Decision {
    let picked = match outcome {
        acp::RequestPermissionOutcome::Selected(s) => s.option_id.0.to_string(),
        _ => String::new(),
    };
    match picked.as_str() {
        APPROVE_SMART => Decision::ApprovePlan { mode: Mode::Smart },
        APPROVE_AUTO => Decision::ApprovePlan { mode: Mode::Auto },
        KEEP_PLANNING => Decision::Deny { reason: None },
        _ => Decision::Deny {
            reason: Some("the editor did not approve the plan".into()),
        },
    }
}

/// The question for an input request whose form an editor can answer
/// with options; `None` when it cannot (text, numbers, several fields, a
/// web page to open).
pub fn input(
    id: u64,
    request: &InputRequest,
) -> Option<(acp::ToolCallUpdate, Vec<acp::PermissionOption>)> {
    use acp::PermissionOptionKind as K;
    if request.url.is_some() {
        return None;
    }
    let mut options = match request.fields.as_slice() {
        [] => vec![acp::PermissionOption::new(ACCEPT, "Accept", K::AllowOnce)],
        [field] => match &field.kind {
            FieldKind::Boolean => vec![
                acp::PermissionOption::new(YES, "Yes", K::AllowOnce),
                acp::PermissionOption::new(NO, "No", K::AllowOnce),
            ],
            FieldKind::Choice(list) if list.len() <= MAX_PICKS => list
                .iter()
                .enumerate()
                .map(|(i, o)| acp::PermissionOption::new(format!("{PICK}{i}"), o, K::AllowOnce))
                .collect(),
            _ => return None,
        },
        _ => return None,
    };
    options.push(acp::PermissionOption::new(
        DECLINE,
        "Decline",
        K::RejectOnce,
    ));
    let mut shown = request.message.clone();
    if let [field] = request.fields.as_slice() {
        shown.push_str(&format!("\n\n{}", field.label));
        if !field.description.is_empty() {
            shown.push_str(&format!(": {}", field.description));
        }
    }
    let fields = acp::ToolCallUpdateFields::new()
        .title(format!("{} asks", request.source))
        .kind(acp::ToolKind::Other)
        .status(acp::ToolCallStatus::Pending)
        .content(vec![updates::content_text(shown)]);
    let call = acp::ToolCallUpdate::new(format!("input-{id}"), fields);
    Some((call, options))
}

/// The editor's pick as the server's answer: a withdrawn question is a
/// cancel, an option cairn did not offer a decline.
pub fn input_answer(
    request: &InputRequest,
    outcome: &acp::RequestPermissionOutcome,
) -> InputAnswer {
    let picked = match outcome {
        acp::RequestPermissionOutcome::Selected(s) => s.option_id.0.to_string(),
        _ => return InputAnswer::Cancel,
    };
    let one = |value: Value| {
        let mut m = Map::new();
        if let [field] = request.fields.as_slice() {
            m.insert(field.name.clone(), value);
        }
        InputAnswer::Accept(m)
    };
    match (picked.as_str(), request.fields.as_slice()) {
        (ACCEPT, []) => InputAnswer::Accept(Map::new()),
        (YES, [_]) => one(Value::Bool(true)),
        (NO, [_]) => one(Value::Bool(false)),
        (p, [field]) => {
            let chosen = p
                .strip_prefix(PICK)
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|i| match &field.kind {
                    FieldKind::Choice(list) => list.get(i).cloned(),
                    _ => None,
                });
            match chosen {
                Some(c) => one(Value::String(c)),
                None => InputAnswer::Decline,
            }
        }
        _ => InputAnswer::Decline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::input::InputField;

    fn request(fields: Vec<InputField>) -> InputRequest {
        InputRequest {
            source: "MCP server `deploy`".into(),
            message: "Which environment?".into(),
            fields,
            url: None,
        }
    }

    fn field(kind: FieldKind) -> InputField {
        InputField {
            name: "env".into(),
            label: "Environment".into(),
            description: String::new(),
            kind,
            required: true,
            default: None,
        }
    }

    fn pick(id: &str) -> acp::RequestPermissionOutcome {
        acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(id.to_string()))
    }

    #[test]
    fn a_choice_is_offered_option_by_option_and_answered_with_the_pick() {
        let r = request(vec![field(FieldKind::Choice(vec![
            "staging".into(),
            "production".into(),
        ]))]);
        let (call, options) = input(7, &r).unwrap();
        assert_eq!(call.tool_call_id.0.as_ref(), "input-7");
        let names: Vec<&str> = options.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["staging", "production", "Decline"]);
        let answer = input_answer(&r, &pick(&options[1].option_id.0));
        assert_eq!(
            answer,
            InputAnswer::Accept(
                serde_json::json!({"env": "production"})
                    .as_object()
                    .unwrap()
                    .clone()
            )
        );
        assert_eq!(input_answer(&r, &pick("decline")), InputAnswer::Decline);
        assert_eq!(input_answer(&r, &pick("pick:9")), InputAnswer::Decline);
        assert_eq!(
            input_answer(&r, &acp::RequestPermissionOutcome::Cancelled),
            InputAnswer::Cancel
        );
    }

    #[test]
    fn yes_no_and_confirmations_are_options_and_free_text_is_not() {
        let r = request(vec![field(FieldKind::Boolean)]);
        let (_, options) = input(1, &r).unwrap();
        assert_eq!(options.len(), 3);
        assert_eq!(
            input_answer(&r, &pick("no")),
            InputAnswer::Accept(
                serde_json::json!({"env": false})
                    .as_object()
                    .unwrap()
                    .clone()
            )
        );
        let confirm = request(vec![]);
        assert_eq!(
            input_answer(&confirm, &pick("accept")),
            InputAnswer::Accept(Map::new())
        );
        assert!(input(2, &request(vec![field(FieldKind::Text)])).is_none());
        let two = request(vec![field(FieldKind::Boolean), field(FieldKind::Boolean)]);
        assert!(input(3, &two).is_none());
        let mut page = request(vec![]);
        page.url = Some("https://example.com/consent".into());
        assert!(input(4, &page).is_none());
    }

    #[test]
    fn a_plan_is_approved_into_a_working_mode_or_kept_in_planning() {
        let (call, options) = plan("p1", "1. Add the parser");
        let json = serde_json::to_value(&call).unwrap();
        assert_eq!(json["content"][0]["content"]["text"], "1. Add the parser");
        assert_eq!(options.len(), 3);
        assert_eq!(
            plan_decision(&pick("approve_auto")),
            Decision::ApprovePlan { mode: Mode::Auto }
        );
        assert_eq!(
            plan_decision(&pick("keep_planning")),
            Decision::Deny { reason: None }
        );
        assert!(matches!(
            plan_decision(&acp::RequestPermissionOutcome::Cancelled),
            Decision::Deny { reason: Some(_) }
        ));
    }
}
