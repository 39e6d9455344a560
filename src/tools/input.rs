//! A tool source's request for input from the person (an MCP server's
//! elicitation): a message and a flat form of fields, answered by the
//! front end through the agent.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// Who asks, e.g. "MCP server `github`".
    pub source: String,
    pub message: String,
    pub fields: Vec<InputField>,
    /// A web page the person is asked to open instead of filling in
    /// fields (URL-mode elicitation); accepting opens it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputField {
    /// The key in the answer.
    pub name: String,
    /// What the person sees (the title, else the name).
    pub label: String,
    pub description: String,
    pub kind: FieldKind,
    pub required: bool,
    /// Shown filled in, when the server gives a default.
    pub default: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "options", rename_all = "snake_case")]
pub enum FieldKind {
    Text,
    Number,
    Integer,
    Boolean,
    Choice(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", content = "values", rename_all = "snake_case")]
pub enum InputAnswer {
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

/// Asks the person; the answer arrives on the receiver (dropped: cancel).
pub type Asker = Arc<dyn Fn(InputRequest) -> oneshot::Receiver<InputAnswer> + Send + Sync>;

impl FieldKind {
    /// The typed text as the JSON value the field needs; `Err` says why not.
    pub fn value(&self, text: &str) -> Result<Value, String> {
        let t = text.trim();
        match self {
            FieldKind::Text => Ok(Value::String(text.to_string())),
            FieldKind::Integer => t
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| format!("`{t}` is not a whole number")),
            FieldKind::Number => t
                .parse::<f64>()
                .ok()
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
                .ok_or_else(|| format!("`{t}` is not a number")),
            FieldKind::Boolean => match t {
                "yes" | "true" => Ok(Value::Bool(true)),
                "no" | "false" => Ok(Value::Bool(false)),
                _ => Err(format!("`{t}` is not yes or no")),
            },
            FieldKind::Choice(options) => options
                .iter()
                .find(|o| o.as_str() == t)
                .map(|o| Value::String(o.clone()))
                .ok_or_else(|| format!("`{t}` is not one of {}", options.join(", "))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_becomes_the_fields_value() {
        assert_eq!(FieldKind::Integer.value(" 3 "), Ok(Value::from(3)));
        assert!(FieldKind::Integer.value("3.5").is_err());
        assert_eq!(FieldKind::Boolean.value("yes"), Ok(Value::Bool(true)));
        let choice = FieldKind::Choice(vec!["a".into(), "b".into()]);
        assert_eq!(choice.value("b"), Ok(Value::String("b".into())));
        assert!(choice.value("c").unwrap_err().contains("one of a, b"));
    }
}
