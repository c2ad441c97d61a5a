//! Stage `intent` (seed 000): a tool call may carry an `intent`, a short label of
//! what the action is for. It is checked, taken out of the arguments, written to
//! the journal, and a human-in-the-loop escalation (`needs_human`) carries it.

use futures::future::BoxFuture;
use serde_json::Value;

use super::{Call, Outcome, Stage, done};
use crate::error::ToolError;
use crate::tool::{Content, ToolOutput};

pub(crate) struct Intent;

impl Stage for Intent {
    fn name(&self) -> &'static str {
        "intent"
    }

    fn check(&self, call: &mut Call<'_>) -> Result<(), ToolError> {
        if !call.info.intent {
            return Ok(());
        }
        if let Some(v) = call.fields().and_then(|a| a.remove("intent")) {
            call.intent = Some(check_intent(&v)?);
        }
        Ok(())
    }

    fn after<'a>(&'a self, call: &'a mut Call<'_>, outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        if let (Ok(out), Some(intent)) = (outcome, &call.intent) {
            attach_intent(out, intent);
        }
        done()
    }
}

/// Longest `intent` label.
pub const MAX_INTENT_CHARS: usize = 120;

/// Validate an `intent` value: a string of 1-120 chars that is not blank.
pub fn check_intent(value: &Value) -> Result<String, ToolError> {
    let bad = |why: &str| {
        ToolError::invalid_intent(format!("intent {why}: pass a short label of what this action is for (1-{MAX_INTENT_CHARS} chars), or omit it"),
        )
        .with("field", "intent")
    };
    let Some(s) = value.as_str() else {
        return Err(bad("must be a string"));
    };
    if s.trim().is_empty() {
        return Err(bad("must not be empty or blank"));
    }
    if s.chars().count() > MAX_INTENT_CHARS {
        return Err(bad(&format!("is {} chars, over the limit", s.chars().count())));
    }
    Ok(s.to_owned())
}

/// A human-in-the-loop escalation (`needs_human: true`) carries the call's intent,
/// in the structured content and in its JSON text.
fn attach_intent(out: &mut ToolOutput, intent: &str) {
    let Some(Value::Object(obj)) = &mut out.structured else {
        return;
    };
    if obj.get("needs_human") != Some(&Value::Bool(true)) {
        return;
    }
    let before = Value::Object(obj.clone());
    obj.insert("intent".into(), Value::String(intent.to_owned()));
    let after = Value::Object(obj.clone()).to_string();
    for c in &mut out.content {
        if let Content::Text(t) = c
            && serde_json::from_str::<Value>(t).ok().as_ref() == Some(&before)
        {
            *t = after.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;
    use serde_json::json;

    #[test]
    fn intent_rules() {
        assert_eq!(check_intent(&json!("submit the form")).expect("ok"), "submit the form");
        for bad in [json!(""), json!("   "), json!("x".repeat(121)), json!(5)] {
            assert_eq!(check_intent(&bad).expect_err("bad").code, Code::InvalidIntent);
        }
        assert!(check_intent(&json!("é".repeat(120))).is_ok(), "chars, not bytes");
    }
}
