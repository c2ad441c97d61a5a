//! Stages `arguments` and `schema`: the arguments are a JSON object (absent:
//! `{}`) within the size cap, and (once the host's own fields are taken out)
//! match the tool's schema.

use serde_json::{Map, Value};

use super::{Call, Stage};
use crate::error::ToolError;

pub(crate) struct Arguments {
    /// The largest arguments object, in bytes of JSON.
    pub max_bytes: usize,
}

impl Stage for Arguments {
    fn name(&self) -> &'static str {
        "arguments"
    }

    fn check(&self, call: &mut Call<'_>) -> Result<(), ToolError> {
        let name = call.name;
        let args = match std::mem::take(&mut call.args) {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            other => {
                return Err(ToolError::invalid_argument(
                    "arguments",
                    format!("{name}: arguments must be a JSON object, not {}", type_name(&other)),
                ));
            }
        };
        let size = serde_json::to_vec(&args).map(|v| v.len()).unwrap_or(usize::MAX);
        if size > self.max_bytes {
            let field = args
                .iter()
                .max_by_key(|(_, v)| serde_json::to_vec(v).map(|b| b.len()).unwrap_or(0))
                .map(|(k, _)| k.clone())
                .unwrap_or_else(|| "arguments".into());
            return Err(ToolError::invalid_argument(
                &field,
                format!(
                    "{name}: arguments are {size} bytes, over the {} byte limit (largest field: `{field}`)",
                    self.max_bytes
                ),
            ));
        }
        call.args = Value::Object(args);
        Ok(())
    }
}

/// The arguments match the tool's schema: checked after every other stage has
/// taken its own fields out.
pub(crate) struct Schema;

impl Stage for Schema {
    fn name(&self) -> &'static str {
        "schema"
    }

    fn check(&self, call: &mut Call<'_>) -> Result<(), ToolError> {
        // A plan or a replay runs its steps in one tab: a step whose tool has
        // no tab (a crawl, a host tool) runs without it.
        if !call.is_top_level()
            && !call.declares("tabId")
            && let Some(m) = call.fields()
        {
            m.remove("tabId");
        }
        match schema_error(call.name, call.validator, &call.info.input_schema, &call.args) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Turn the first schema violation into `INVALID_ARGUMENT` naming the field. The
/// message never quotes the offending value (it may be huge, or a secret). An
/// argument the tool does not take gets the list of those it does (`accepted`):
/// an agent that guessed a name gets the right one without reading the schema.
fn schema_error(
    tool: &str,
    validator: &jsonschema::Validator,
    schema: &Value,
    args: &Value,
) -> Option<ToolError> {
    use jsonschema::error::ValidationErrorKind as K;
    let err = validator.iter_errors(args).next()?;
    let path = err.instance_path().to_string();
    let at = path.trim_start_matches('/').replace('/', ".");
    let (field, what) = match err.kind() {
        K::Required { property } => {
            let p = property.as_str().unwrap_or_default().to_owned();
            let field = if at.is_empty() { p.clone() } else { format!("{at}.{p}") };
            (field, "is required".to_owned())
        }
        K::AdditionalProperties { unexpected } => {
            let p = unexpected.first().cloned().unwrap_or_default();
            let field = if at.is_empty() { p } else { format!("{at}.{p}") };
            let names = accepted(schema, &path);
            if names.is_empty() {
                (field, "is not an accepted argument".to_owned())
            } else {
                let what = format!("is not an accepted argument (accepted: {})", names.join(", "));
                let e = ToolError::invalid_argument(&field, format!("{tool}: `{field}` {what}"));
                return Some(e.with("accepted", names));
            }
        }
        K::MaxLength { limit } => (at, format!("is longer than {limit} characters")),
        K::MinLength { limit } => (at, format!("is shorter than {limit} characters")),
        K::Type { kind } => {
            let want = match kind {
                jsonschema::error::TypeKind::Single(t) => t.to_string(),
                jsonschema::error::TypeKind::Multiple(set) => format!("{set:?}").to_lowercase(),
            };
            (at, format!("must be of type {want}"))
        }
        K::Pattern { pattern } => (at, format!("does not match the pattern {pattern}")),
        K::Enum { options } => {
            let mut o = options.to_string();
            if o.len() > 200 {
                o.truncate(200);
            }
            (at, format!("must be one of {o}"))
        }
        K::Minimum { limit } => (at, format!("must be at least {limit}")),
        K::Maximum { limit } => (at, format!("must be at most {limit}")),
        _ => {
            let mut m = err.to_string();
            if m.len() > 200 {
                m.truncate(m.floor_char_boundary(200));
                m.push('…');
            }
            (at, m)
        }
    };
    let shown = if field.is_empty() { "arguments".to_owned() } else { field.clone() };
    Some(ToolError::invalid_argument(
        if field.is_empty() { "arguments" } else { &field },
        format!("{tool}: `{shown}` {what}"),
    ))
}

/// The property names the schema allows at a JSON pointer into the arguments
/// (`/steps/0`: the properties of a step), sorted; empty where it cannot tell.
fn accepted(schema: &Value, pointer: &str) -> Vec<String> {
    let mut at = schema;
    for seg in pointer.split('/').filter(|s| !s.is_empty()) {
        at = match (at["properties"].get(seg), at.get("items")) {
            (Some(p), _) => p,
            (None, Some(items)) if seg.parse::<usize>().is_ok() => items,
            _ => return Vec::new(),
        };
    }
    let mut names: Vec<String> =
        at["properties"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    names.sort();
    names
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_errors_name_the_field_and_never_quote_the_value() {
        let schema = json!({
            "type": "object",
            "properties": {"domain": {"type": "string", "maxLength": 10}},
            "required": ["domain"],
            "additionalProperties": false
        });
        let v = jsonschema::validator_for(&schema).expect("schema");
        let check = |args: &Value| schema_error("t", &v, &schema, args);
        let e = check(&json!({})).expect("missing");
        assert_eq!(e.details["field"], "domain");
        let e = check(&json!({"domain": 5})).expect("type");
        assert_eq!(e.details["field"], "domain");
        let e = check(&json!({"domain": "a", "junk": 1})).expect("extra");
        assert_eq!(e.details["field"], "junk");
        assert_eq!(e.details["accepted"], json!(["domain"]));
        assert_eq!(e.message, "t: `junk` is not an accepted argument (accepted: domain)");
        let huge = "y".repeat(1 << 20);
        let e = check(&json!({"domain": huge})).expect("long");
        assert_eq!(e.details["field"], "domain");
        assert!(e.message.len() < 200, "{}", e.message.len());
        assert!(check(&json!({"domain": "ok"})).is_none());
    }

    #[test]
    fn a_nested_unknown_field_lists_what_its_object_takes() {
        let schema = json!({
            "type": "object",
            "properties": {"steps": {"type": "array", "items": {
                "type": "object",
                "properties": {"tool": {"type": "string"}, "args": {"type": "object"}},
                "additionalProperties": false
            }}},
            "additionalProperties": false
        });
        let v = jsonschema::validator_for(&schema).expect("schema");
        let e = schema_error("t", &v, &schema, &json!({"steps": [{"tool": "x", "argz": {}}]}))
            .expect("extra");
        assert_eq!(e.details["field"], "steps.0.argz");
        assert_eq!(e.details["accepted"], json!(["args", "tool"]));
    }
}
