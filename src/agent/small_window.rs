//! Small windows (a local model with 8k or 16k of context): the same tools
//! with shorter texts and schemas, and a shorter system prompt, so the fixed
//! part of every request leaves room for the conversation.

use serde_json::Value;

use crate::llm::ToolSpec;

/// The system prompt for a small window.
pub(crate) const SYSTEM_SMALL: &str = include_str!("../../assets/prompts/system_small.md");

/// A description's first sentence or line: what the tool is for.
fn first_sentence(text: &str) -> String {
    let para = text
        .split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty())
        .unwrap_or("");
    let line = para.lines().next().unwrap_or("").trim();
    let cut = line
        .char_indices()
        .find(|&(i, c)| c == '.' && line[i + 1..].starts_with(' '))
        .map_or(line.len(), |(i, _)| i + 1);
    crate::text::truncate_chars(&line[..cut], 160)
}

/// A schema without the texts of its properties: their names, types,
/// enums and which are required say enough to a model that has the tool's
/// one-line description.
fn strip_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                for p in props.values_mut() {
                    if let Some(o) = p.as_object_mut() {
                        o.remove("description");
                        o.remove("examples");
                    }
                    strip_descriptions(p);
                }
            }
            if let Some(items) = map.get_mut("items") {
                strip_descriptions(items);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

/// The same tools, in few words.
pub(crate) fn compact_specs(specs: Vec<ToolSpec>) -> Vec<ToolSpec> {
    specs
        .into_iter()
        .map(|mut s| {
            s.description = first_sentence(&s.description);
            strip_descriptions(&mut s.input_schema);
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_same_tools_in_fewer_words() {
        let specs = vec![ToolSpec {
            name: "view".into(),
            description: "Reads a file from the workspace. Lines are numbered.\n\nMore text about offsets and limits.".into(),
            input_schema: json!({"type": "object", "required": ["file_path"], "properties": {
                "file_path": {"type": "string", "description": "The path to read, long text"},
                "mode": {"type": "string", "enum": ["a", "b"], "description": "x"}}}),
        }];
        let small = compact_specs(specs.clone());
        assert_eq!(small[0].name, "view");
        assert_eq!(small[0].description, "Reads a file from the workspace.");
        assert_eq!(small[0].input_schema["required"], json!(["file_path"]));
        assert_eq!(
            small[0].input_schema["properties"]["mode"]["enum"],
            json!(["a", "b"])
        );
        assert!(
            small[0].input_schema["properties"]["file_path"]
                .get("description")
                .is_none()
        );
    }

    #[test]
    fn the_builtin_tools_shrink_by_more_than_half() {
        let specs = crate::tools::Registry::builtin().specs();
        let size = |s: &[ToolSpec]| -> u64 { s.iter().map(crate::agent::fixed::spec_tokens).sum() };
        let (normal, small) = (size(&specs), size(&compact_specs(specs.clone())));
        let prompt = crate::context::estimate_tokens(SYSTEM_SMALL);
        println!("tool specs: {normal} tokens normal, {small} compact; small prompt {prompt}");
        assert!(small * 2 < normal, "{small} of {normal}");
        // The target: the fixed part under a quarter of an 8k window.
        assert!(small + prompt < 2_048, "{small} + {prompt}");
    }
}
