//! A server's request for input (elicitation) as a form the person fills
//! in, or (URL mode) a web page the person may agree to open. Without
//! anyone to ask (`cairn run`) it is declined.

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
    let Some(ask) = lock(asker).clone() else {
        tracing::info!(%server, "MCP input request declined: nobody to ask");
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let source = format!("MCP server `{server}`");
    match request {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => {
            let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
            let request = InputRequest {
                source,
                message,
                fields: fields(&schema, requested_schema.property_order.as_deref()),
                url: None,
            };
            match ask(request).await {
                Ok(InputAnswer::Accept(mut values)) => {
                    chosen_values(&schema, &mut values);
                    ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(values))
                }
                Ok(InputAnswer::Decline) => ElicitResult::new(ElicitationAction::Decline),
                Ok(InputAnswer::Cancel) | Err(_) => ElicitResult::new(ElicitationAction::Cancel),
            }
        }
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            open_url(server, source, message, &url, ask).await
        }
        // A mode of a later protocol revision.
        _ => ElicitResult::new(ElicitationAction::Decline),
    }
}

/// A server asks the person to open a web page (URL mode): shown whole
/// with its host, opened in the browser only when the person accepts.
/// Anything but an http(s) address is declined without asking.
async fn open_url(
    server: &str,
    source: String,
    message: String,
    url: &str,
    ask: crate::tools::input::Asker,
) -> ElicitResult {
    let Some(address) = super::browser::web_address(url) else {
        tracing::warn!(%server, "MCP URL request declined: not a web address: {url:?}");
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let request = InputRequest {
        source,
        message,
        fields: Vec::new(),
        url: Some(address.clone()),
    };
    match ask(request).await {
        Ok(InputAnswer::Accept(_)) => {
            match super::browser::open(&address) {
                Ok(_) => {}
                Err(why) => tracing::warn!(%server, "could not open {address}: {why}"),
            }
            ElicitResult::new(ElicitationAction::Accept)
        }
        Ok(InputAnswer::Decline) => ElicitResult::new(ElicitationAction::Decline),
        Ok(InputAnswer::Cancel) | Err(_) => ElicitResult::new(ElicitationAction::Cancel),
    }
}

/// The form's fields from the requested schema (a flat object of
/// primitives), in the order the server wrote them: `order` as rmcp keeps
/// it beside the schema, else the JSON object's own order (serde_json's
/// `preserve_order` keeps it through rmcp's decoding).
fn fields(schema: &Value, order: Option<&[String]>) -> Vec<InputField> {
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
            let options: Vec<String> = choices(p).into_iter().map(|(shown, _)| shown).collect();
            let many: Vec<(String, String)> = match p["type"].as_str() {
                Some("array") => choices(&p["items"]),
                _ => Vec::new(),
            };
            let count = |k: &str| p[k].as_u64().map(|n| n as usize);
            let kind = match p["type"].as_str() {
                _ if !many.is_empty() => FieldKind::Choices {
                    options: many.iter().map(|(shown, _)| shown.clone()).collect(),
                    min: count("minItems"),
                    max: count("maxItems"),
                },
                _ if !options.is_empty() => FieldKind::Choice(options),
                Some("integer") => FieldKind::Integer,
                Some("number") => FieldKind::Number,
                Some("boolean") => FieldKind::Boolean,
                _ => FieldKind::Text,
            };
            let default = match &p["default"] {
                Value::Null => None,
                // A multiple choice's default values, shown by their titles.
                Value::Array(values) if !many.is_empty() => {
                    let shown: Vec<&String> = (many.iter())
                        .filter(|(_, v)| values.iter().any(|d| d.as_str() == Some(v)))
                        .map(|(s, _)| s)
                        .collect();
                    Some(serde_json::to_string(&shown).unwrap_or_default())
                }
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
    if let Some(order) = order {
        let rank = |name: &str| order.iter().position(|o| o == name).unwrap_or(order.len());
        out.sort_by_key(|f| rank(&f.name));
    }
    out
}

/// A choice field's options as `(shown, value)`: a titled option
/// (`oneOf`/`anyOf` of `{const, title}`, or `enum` with `enumNames`) shows
/// its title and answers with its value.
fn choices(p: &Value) -> Vec<(String, String)> {
    if let Some(values) = p["enum"].as_array() {
        let names = p["enumNames"].as_array();
        return values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let value = v.as_str()?.to_string();
                let shown = names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), String::from);
                Some((shown, value))
            })
            .collect();
    }
    p["oneOf"]
        .as_array()
        .or(p["anyOf"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|o| {
            let value = o.as_str().or(o["const"].as_str())?.to_string();
            let shown = o["title"]
                .as_str()
                .map_or_else(|| value.clone(), String::from);
            Some((shown, value))
        })
        .collect()
}

/// Puts back the value behind each title the person chose.
fn chosen_values(schema: &Value, values: &mut serde_json::Map<String, Value>) {
    let Some(props) = schema["properties"].as_object() else {
        return;
    };
    let value_of = |options: &[(String, String)], shown: &str| {
        (options.iter())
            .find(|(s, _)| s == shown)
            .map(|(_, v)| Value::String(v.clone()))
    };
    for (name, p) in props {
        match values.get(name) {
            Some(Value::String(shown)) => {
                if let Some(value) = value_of(&choices(p), shown) {
                    values.insert(name.clone(), value);
                }
            }
            // A multiple choice answers with an array of values.
            Some(Value::Array(shown)) => {
                let options = choices(&p["items"]);
                let chosen: Vec<Value> = (shown.iter())
                    .map(|s| {
                        s.as_str()
                            .and_then(|s| value_of(&options, s))
                            .unwrap_or_else(|| s.clone())
                    })
                    .collect();
                values.insert(name.clone(), Value::Array(chosen));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_schema_becomes_fields_in_the_servers_order() {
        let wire = r#"{"type": "object", "properties": {
            "name": {"type": "string", "title": "Your name", "description": "as you like it"},
            "happy": {"type": "boolean"},
            "count": {"type": "integer", "default": 2},
            "colour": {"type": "string", "enum": ["red", "green"]}
        }, "required": ["colour"]}"#;
        let parsed: rmcp::model::ElicitationSchema = serde_json::from_str(wire).unwrap();
        let schema = serde_json::to_value(&parsed).unwrap();
        let f = fields(&schema, parsed.property_order.as_deref());
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["name", "happy", "count", "colour"]);
        let name = &f[0];
        assert_eq!((name.label.as_str(), name.required), ("Your name", false));
        assert_eq!(
            (f[2].kind.clone(), f[2].default.as_deref()),
            (FieldKind::Integer, Some("2"))
        );
        assert!(f[3].required);
        assert_eq!(
            f[3].kind,
            FieldKind::Choice(vec!["red".into(), "green".into()])
        );
        // Without rmcp's order, the object's own.
        let names: Vec<String> = fields(&json!({"properties": {"b": {}, "a": {}}}), None)
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(names, ["b", "a"]);
    }

    #[test]
    fn titled_choices_show_titles_and_answer_with_values() {
        let schema = json!({"properties": {
            "hero": {"type": "string", "oneOf": [
                {"const": "hero-1", "title": "Ada Lovelace"},
                {"const": "hero-2", "title": "Grace Hopper"}]},
            "size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
            "plain": {"type": "string", "enum": ["x", "y"]}
        }});
        let f = fields(&schema, None);
        let shown = |i: usize| match &f[i].kind {
            FieldKind::Choice(o) => o.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(shown(0), ["Ada Lovelace", "Grace Hopper"]);
        assert_eq!(shown(1), ["Small", "Large"]);
        assert_eq!(shown(2), ["x", "y"]);
        let mut answer = serde_json::Map::new();
        answer.insert("hero".into(), json!("Grace Hopper"));
        answer.insert("size".into(), json!("Small"));
        answer.insert("plain".into(), json!("y"));
        chosen_values(&schema, &mut answer);
        assert_eq!(
            Value::Object(answer),
            json!({"hero": "hero-2", "size": "s", "plain": "y"})
        );
    }

    /// The order survives rmcp's decoding of the whole JSON-RPC message,
    /// which goes through `serde_json::Value` (hence serde_json's
    /// `preserve_order` feature).
    #[test]
    fn a_multiple_choice_is_a_choices_field_and_answers_with_an_array_of_values() {
        let schema = json!({"type": "object", "properties": {
            "instruments": {"type": "array", "minItems": 1, "maxItems": 2,
                "default": ["pno"],
                "items": {"anyOf": [
                    {"const": "gtr", "title": "Guitar"},
                    {"const": "pno", "title": "Piano"}]}},
            "genres": {"type": "array", "items": {"type": "string", "enum": ["jazz", "rock"]}}
        }});
        let f = fields(&schema, None);
        assert_eq!(
            f[0].kind,
            FieldKind::Choices {
                options: vec!["Guitar".into(), "Piano".into()],
                min: Some(1),
                max: Some(2)
            }
        );
        assert_eq!(f[0].default.as_deref(), Some(r#"["Piano"]"#));
        assert!(
            matches!(&f[1].kind, FieldKind::Choices { options, .. } if options == &["jazz", "rock"])
        );
        let mut values = serde_json::Map::new();
        values.insert(
            "instruments".into(),
            f[0].kind.value("Guitar, Piano").unwrap(),
        );
        values.insert("genres".into(), f[1].kind.value(r#"["rock"]"#).unwrap());
        chosen_values(&schema, &mut values);
        assert_eq!(
            Value::Object(values),
            json!({"instruments": ["gtr", "pno"], "genres": ["rock"]})
        );
    }

    #[test]
    fn the_order_survives_the_wire() {
        let wire = r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{
            "mode":"form","message":"m","requestedSchema":{"type":"object","properties":{
            "name":{"type":"string"},"mood":{"type":"string"},"count":{"type":"integer"}}}}}"#;
        let message: rmcp::model::ServerJsonRpcMessage = serde_json::from_str(wire).unwrap();
        let value = serde_json::to_value(&message).unwrap();
        let props = value["params"]["requestedSchema"]["properties"]
            .as_object()
            .unwrap();
        let names: Vec<&str> = props.keys().map(String::as_str).collect();
        assert_eq!(names, ["name", "mood", "count"]);
    }
}
