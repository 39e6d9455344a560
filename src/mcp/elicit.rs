//! A server's request for input (elicitation, form mode) as a form the
//! person fills in. Without anyone to ask (`cairn run`) it is declined.

use std::sync::{Arc, Mutex};

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::Value;

use crate::tools::input::{Asker, FieldKind, InputAnswer, InputField, InputRequest};
use crate::tools::state::lock;

/// Who to ask, shared by every server's client; set by the front end.
pub(crate) type SharedAsker = Arc<Mutex<Option<Asker>>>;

pub(crate) async fn answer(
    server: &str,
    asker: &SharedAsker,
    request: ElicitRequestParams,
) -> ElicitResult {
    let ElicitRequestParams::FormElicitationParams {
        message,
        requested_schema,
        ..
    } = request
    else {
        // A URL to open elsewhere is not something cairn offers.
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let Some(ask) = lock(asker).clone() else {
        tracing::info!(%server, "MCP input request declined: nobody to ask");
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
    let request = InputRequest {
        source: format!("MCP server `{server}`"),
        message,
        fields: fields(&schema),
    };
    match ask(request).await {
        Ok(InputAnswer::Accept(values)) => {
            ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(values))
        }
        Ok(InputAnswer::Decline) => ElicitResult::new(ElicitationAction::Decline),
        Ok(InputAnswer::Cancel) | Err(_) => ElicitResult::new(ElicitationAction::Cancel),
    }
}

/// The form's fields from the requested schema (a flat object of
/// primitives): the required ones first, each group by name (the JSON
/// object's own order is not kept).
fn fields(schema: &Value) -> Vec<InputField> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let Some(props) = schema["properties"].as_object() else {
        return Vec::new();
    };
    let mut out: Vec<InputField> = props
        .iter()
        .map(|(name, p)| {
            let text = |k: &str| p[k].as_str().unwrap_or("").to_string();
            let options: Vec<String> = p["enum"]
                .as_array()
                .or(p["oneOf"].as_array())
                .into_iter()
                .flatten()
                .filter_map(|o| o.as_str().or(o["const"].as_str()).map(String::from))
                .collect();
            let kind = match p["type"].as_str() {
                _ if !options.is_empty() => FieldKind::Choice(options),
                Some("integer") => FieldKind::Integer,
                Some("number") => FieldKind::Number,
                Some("boolean") => FieldKind::Boolean,
                _ => FieldKind::Text,
            };
            let default = match &p["default"] {
                Value::Null => None,
                Value::Bool(b) => Some(if *b { "yes" } else { "no" }.to_string()),
                Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            };
            InputField {
                name: name.clone(),
                label: if text("title").is_empty() {
                    name.clone()
                } else {
                    text("title")
                },
                description: text("description"),
                kind,
                required: required.contains(&name.as_str()),
                default,
            }
        })
        .collect();
    out.sort_by_key(|f| !f.required);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_schema_becomes_fields() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name", "description": "as you like it"},
                "count": {"type": "integer", "default": 2},
                "happy": {"type": "boolean"},
                "colour": {"type": "string", "enum": ["red", "green"]},
            },
            "required": ["name"],
        });
        let f = fields(&schema);
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["name", "colour", "count", "happy"],
            "required first"
        );
        let name = f.iter().find(|f| f.name == "name").unwrap();
        assert_eq!((name.label.as_str(), name.required), ("Your name", true));
        let count = f.iter().find(|f| f.name == "count").unwrap();
        assert_eq!(
            (count.kind.clone(), count.default.as_deref()),
            (FieldKind::Integer, Some("2"))
        );
        let colour = f.iter().find(|f| f.name == "colour").unwrap();
        assert_eq!(
            colour.kind,
            FieldKind::Choice(vec!["red".into(), "green".into()])
        );
    }
}
