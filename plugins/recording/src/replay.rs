//! Replay: each recorded step runs again through the host's pipeline (the `tools`
//! interface), so capability gates, validation, intent and the journal apply as
//! for a client's call. Refs are minted per page, so a recorded `ax_<n>` means
//! nothing on the new page: each ref whose role and name were recorded is found
//! again by them (and by its rank among elements with the same role and name).

use std::collections::BTreeMap;

use ochre_sdk::{ToolError, browser, tools};
use serde_json::{Map, Value, json};

/// The placeholder the host writes for a redacted argument.
const REDACTED: &str = "[REDACTED]";

fn has_redacted(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if s == REDACTED => Some(String::new()),
        Value::Object(m) => m.iter().find_map(|(k, v)| {
            has_redacted(v).map(|p| if p.is_empty() { k.clone() } else { format!("{k}.{p}") })
        }),
        Value::Array(items) => items.iter().find_map(has_redacted),
        _ => None,
    }
}

/// Swap old refs for new ones: string values equal to an old ref, and object keys.
fn remap(v: &Value, map: &BTreeMap<String, String>) -> Value {
    match v {
        Value::String(s) => map.get(s).map_or_else(|| v.clone(), |n| Value::String(n.clone())),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (map.get(k).cloned().unwrap_or_else(|| k.clone()), remap(v, map)))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|i| remap(i, map)).collect()),
        other => other.clone(),
    }
}

/// Find each recorded target on the page now; old ref -> new ref.
fn relocate(step: &Value, tab: Option<&str>) -> Result<BTreeMap<String, String>, ToolError> {
    let mut map = BTreeMap::new();
    let Some(targets) = step["targets"].as_object() else {
        return Ok(map);
    };
    for (old, t) in targets {
        let (Some(role), Some(name)) = (t["role"].as_str(), t["name"].as_str()) else {
            continue;
        };
        let found = browser::page_op(
            tab,
            "locate",
            &json!({"role": role, "name": name, "nth": t["nth"].as_u64().unwrap_or(0)}),
            5_000,
        )
        .map_err(|e| {
            let mut err = ToolError::new(
                "TARGET_NOT_FOUND",
                format!(
                    "the recorded target of {old} ({role} {name:?}) is not on the page: {}",
                    e.message
                ),
            );
            err.details = Some(json!({"ref": old, "role": role, "name": name}));
            err
        })?;
        if let Some(new) = found["ref"].as_str() {
            map.insert(old.clone(), new.to_owned());
        }
    }
    Ok(map)
}

fn run_step(step: &Value) -> (Result<tools::Called, ToolError>, BTreeMap<String, String>) {
    let tool = step["tool"].as_str().unwrap_or_default();
    let mut args = step["args"].clone();
    if !args.is_object() {
        args = json!({});
    }
    if let Some(field) = has_redacted(&args) {
        let mut e = ToolError::new(
            "REDACTED_ARGUMENT",
            format!(
                "argument `{field}` of {tool} was redacted when recorded, so it cannot be replayed"
            ),
        );
        e.details = Some(json!({"field": field}));
        return (Err(e), BTreeMap::new());
    }
    let tab = args["tabId"].as_str().map(str::to_owned);
    let map = match relocate(step, tab.as_deref()) {
        Ok(m) => m,
        Err(e) => return (Err(e), BTreeMap::new()),
    };
    let mut args = remap(&args, &map);
    if let (Some(intent), Value::Object(o)) = (step["intent"].as_str(), &mut args) {
        o.insert("intent".into(), json!(intent));
    }
    (tools::call(tool, &args), map)
}

/// Replay recording `id` (`rec` as the recorder loads it); the report.
pub fn run(id: &str, rec: &Value, stop_on_error: bool) -> Value {
    let steps: &[Value] = rec["steps"].as_array().map_or(&[], Vec::as_slice);
    let (mut run, mut passed, mut skipped) = (0u64, 0u64, 0u64);
    let mut first_failure = Value::Null;
    let mut results = Vec::with_capacity(steps.len());
    for step in steps {
        let n = step["step"].clone();
        let tool = step["tool"].as_str().unwrap_or_default();
        // A step that failed when recorded was exploration, not part of the path.
        if step["ok"] == json!(false) {
            skipped += 1;
            results.push(json!({"step": n, "tool": tool, "skipped": "failed when recorded"}));
            continue;
        }
        run += 1;
        let (outcome, remapped) = run_step(step);
        let mut r = json!({"step": n, "tool": tool, "ok": outcome.is_ok()});
        if !remapped.is_empty() {
            r["refs"] = json!(remapped);
        }
        match outcome {
            Ok(called) => {
                passed += 1;
                r["outcome"] = json!(called.summary);
            }
            Err(e) => {
                r["code"] = json!(e.code);
                r["message"] = json!(e.message);
                if first_failure.is_null() {
                    first_failure =
                        json!({"step": n, "tool": tool, "code": e.code, "message": e.message});
                }
            }
        }
        results.push(r);
        if stop_on_error && !first_failure.is_null() {
            break;
        }
    }
    let meta = &rec["meta"];
    let now = browser::tabs().ok().and_then(|tabs| tabs.into_iter().find(|t| t.current));
    let expected_url = meta["final_url"].as_str();
    let expected_title = meta["final_title"].as_str();
    let matches = |want: Option<&str>, got: Option<&str>| match (want, got) {
        (Some(w), Some(g)) => json!(w == g),
        _ => Value::Null,
    };
    let final_url = now.as_ref().map(|t| t.url.as_str());
    let final_title = now.as_ref().map(|t| t.title.as_str());
    json!({
        "recordingId": id,
        "steps_total": steps.len(),
        "steps_run": run,
        "steps_passed": passed,
        "steps_failed": run - passed,
        "steps_skipped": skipped,
        "ok": passed == run && run + skipped == steps.len() as u64,
        "first_failure": first_failure,
        "final_url": final_url,
        "expected_url": expected_url,
        "final_url_match": matches(expected_url, final_url),
        "final_title": final_title,
        "expected_title": expected_title,
        "final_title_match": matches(expected_title, final_title),
        "steps": results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_swapped_in_values_and_keys_only() {
        let map: BTreeMap<String, String> =
            [("ax_3".to_owned(), "ax_40".to_owned())].into_iter().collect();
        let args =
            json!({"ref": "ax_3", "refs": {"ax_3": "x"}, "query": "ax_3 button", "other": "ax_31"});
        assert_eq!(
            remap(&args, &map),
            json!({"ref": "ax_40", "refs": {"ax_40": "x"}, "query": "ax_3 button", "other": "ax_31"})
        );
    }

    #[test]
    fn redacted_arguments_are_named() {
        assert_eq!(has_redacted(&json!({"a": 1, "b": {"c": "[REDACTED]"}})), Some("b.c".into()));
        assert_eq!(has_redacted(&json!({"a": "REDACTED"})), None);
    }
}
