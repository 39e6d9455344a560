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
    /// Any number of the options (an array field), `min` to `max` of them.
    Choices {
        options: Vec<String>,
        min: Option<usize>,
        max: Option<usize>,
    },
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
            FieldKind::Choices { options, min, max } => {
                let picked = picked_options(t, options)?;
                let n = picked.len();
                if let Some(min) = min.filter(|m| n < *m) {
                    return Err(format!("pick at least {min}"));
                }
                if let Some(max) = max.filter(|m| n > *m) {
                    return Err(format!("pick at most {max}"));
                }
                Ok(Value::Array(
                    picked.into_iter().map(Value::String).collect(),
                ))
            }
        }
    }
}

/// The options named by `text`: a JSON array of them (as the form keeps
/// a multiple choice), or a comma-separated list; each must be an option.
pub fn picked_options(text: &str, options: &[String]) -> Result<Vec<String>, String> {
    let named: Vec<String> = match serde_json::from_str::<Vec<String>>(text) {
        Ok(list) => list,
        Err(_) => text
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    };
    for n in &named {
        if !options.contains(n) {
            return Err(format!("`{n}` is not one of {}", options.join(", ")));
        }
    }
    // In the options' order, each once.
    Ok(options
        .iter()
        .filter(|o| named.contains(o))
        .cloned()
        .collect())
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
        let many = FieldKind::Choices {
            options: vec!["Guitar".into(), "Piano".into(), "Drums".into()],
            min: Some(1),
            max: Some(2),
        };
        assert_eq!(
            many.value(r#"["Drums","Guitar"]"#),
            Ok(serde_json::json!(["Guitar", "Drums"]))
        );
        assert_eq!(
            many.value("Piano, Guitar"),
            Ok(serde_json::json!(["Guitar", "Piano"]))
        );
        assert!(many.value("[]").unwrap_err().contains("at least 1"));
        assert!(
            many.value("Guitar, Piano, Drums")
                .unwrap_err()
                .contains("at most 2")
        );
        assert!(many.value("Banjo").unwrap_err().contains("not one of"));
    }
}
