//! Replay: each recorded step runs again through the host's pipeline (the `tools`
//! interface), so capability gates, the task run's guard, validation, intent and
//! the journal apply as for a client's call.
//!
//! - Parameters: the values a step typed were recorded as `{{name=default}}`,
//!   secrets as `{{name}}`; `params` fills them before any step runs, and a
//!   missing one refuses the replay, naming every one missing. A secret is
//!   given as `secret:NAME` or `totp:DOMAIN` and resolved by the host in the
//!   called tool (this plugin never sees it).
//! - Refs are minted per page, so a recorded `ax_<n>` means nothing on the new
//!   page: each ref whose role and name were recorded is found again by them
//!   (and by its rank among its namesakes), waiting for it to appear as an agent
//!   would (bounded); the tool then waits for it to be actionable as for any call.
//! - A step that cannot proceed ends the replay (unless `stop_on_error` is
//!   false) with its number, tool, error and the page's URL and title.

use std::collections::BTreeMap;

use ochre_sdk::params::{self, Placeholder};
use ochre_sdk::{ToolError, browser, clock, tools};
use serde_json::{Map, Value, json};

/// How to replay.
pub struct Options {
    /// Run every step in this tab (else in the tab each step named).
    pub tab: Option<String>,
    /// Parameter values.
    pub params: BTreeMap<String, String>,
    pub stop_on_error: bool,
    /// How long a step may wait for its element to appear, in ms.
    pub step_timeout_ms: u64,
}

/// The placeholder older versions wrote for a value they did not keep.
const REDACTED: &str = "[REDACTED]";

/// The path of an argument a recording of an older version did not keep.
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

/// What a step waited for before it ran.
#[derive(Default)]
struct Waited {
    ms: u64,
    what: Vec<String>,
}

/// Find each recorded target on the page, waiting (up to `timeout_ms` in all)
/// for one that is not there yet; old ref -> new ref.
fn relocate(
    step: &Value,
    tab: Option<&str>,
    timeout_ms: u64,
    waited: &mut Waited,
) -> Result<BTreeMap<String, String>, ToolError> {
    let mut map = BTreeMap::new();
    let Some(targets) = step["targets"].as_object() else {
        return Ok(map);
    };
    let started = clock::now_ms();
    for (old, t) in targets {
        let (Some(role), Some(name)) = (t["role"].as_str(), t["name"].as_str()) else {
            continue;
        };
        let what = format!("{role} {name:?}");
        let ask = browser::ops::Locate {
            role: role.to_owned(),
            name: name.to_owned(),
            nth: Some(t["nth"].as_u64().unwrap_or(0)),
        };
        let since = clock::now_ms();
        let found = loop {
            match browser::run(tab, &ask, 5_000) {
                Ok(found) => break found,
                Err(e) => {
                    let spent = clock::now_ms().saturating_sub(started);
                    // Not there yet, or the page is between documents or busy:
                    // ask again (the codes the host produces for these).
                    use ochre_sdk::Code;
                    let again = matches!(
                        e.code,
                        Code::ElementNotFound | Code::DocumentLoading | Code::Timeout
                    );
                    if spent >= timeout_ms || !again {
                        return Err(ToolError::target_not_found(format!(
                                "the recorded target of {old} ({what}) is not on the page (waited {spent} ms): {}",
                                e.message
                            ),
                        )
                        .with_details(json!({"ref": old, "role": role, "name": name, "waited_ms": spent})));
                    }
                    // Let the page go on (a navigation, a render) before asking again.
                    let _ = browser::run(tab, &browser::ops::Sleep { ms: 100 }, 2_000);
                }
            }
        };
        let ms = clock::now_ms().saturating_sub(since);
        if ms >= 50 {
            waited.what.push(format!("{what} ({ms} ms)"));
        }
        map.insert(old.clone(), found.ref_id);
    }
    waited.ms = clock::now_ms().saturating_sub(started);
    Ok(map)
}

fn run_step(
    step: &Value,
    opts: &Options,
    found: &[Placeholder],
    waited: &mut Waited,
) -> (Result<tools::Called, ToolError>, BTreeMap<String, String>) {
    let tool = step["tool"].as_str().unwrap_or_default();
    let mut args = step["args"].clone();
    if !args.is_object() {
        args = json!({});
    }
    if let Some(field) = has_redacted(&args) {
        let e = ToolError::redacted_argument(format!(
                "argument `{field}` of {tool} was not kept when recorded (a recording of an older version), so it cannot be replayed; record the flow again"
            ),
        )
        .with_details(json!({"field": field}));
        return (Err(e), BTreeMap::new());
    }
    let mut args = params::fill(&args, &opts.params, found);
    if let (Some(tab), Value::Object(o)) = (&opts.tab, &mut args) {
        o.insert("tabId".into(), json!(tab));
    }
    let tab = args["tabId"].as_str().map(str::to_owned);
    let map = match relocate(step, tab.as_deref(), opts.step_timeout_ms, waited) {
        Ok(m) => m,
        Err(e) => return (Err(e), BTreeMap::new()),
    };
    let mut args = remap(&args, &map);
    if let (Some(intent), Value::Object(o)) = (step["intent"].as_str(), &mut args) {
        o.insert("intent".into(), json!(intent));
    }
    (tools::call(tool, &args), map)
}

/// The parameters of a recording, checked against the values given: refused
/// before any step runs when a value is missing or names no parameter.
pub fn check_params(
    id: &str,
    steps: &[Value],
    given: &BTreeMap<String, String>,
) -> Result<Vec<Placeholder>, ToolError> {
    let all: Vec<Value> = steps.iter().map(|s| s["args"].clone()).collect();
    let found = params::placeholders(&Value::Array(all));
    let describe = |p: &Placeholder| json!({"name": p.name, "secret": p.default.is_none(), "default": p.default, "required": p.required()});
    if let Some(unknown) = given.keys().find(|k| !found.iter().any(|p| &p.name == *k)) {
        let names: Vec<&str> = found.iter().map(|p| p.name.as_str()).collect();
        return Err(ToolError::new(
            ochre_sdk::Code::InvalidArgument,
            format!(
                "recording {id} has no parameter {unknown:?}; its parameters: {}",
                if names.is_empty() { "none".to_owned() } else { names.join(", ") }
            ),
        )
        .with_details(
            json!({"field": "params", "params": found.iter().map(describe).collect::<Vec<_>>()}),
        ));
    }
    let missing = params::missing(&found, given);
    if !missing.is_empty() {
        let wanted: Vec<Value> =
            found.iter().filter(|p| missing.contains(&p.name)).map(describe).collect();
        return Err(ToolError::missing_parameters(format!(
                "recording {id} needs values for: {} (give them in `params`; a secret as \"secret:NAME\" or \"totp:DOMAIN\"); no step ran",
                missing.join(", ")
            ),
        )
        .with_details(json!({"field": "params", "missing": missing, "params": wanted})));
    }
    Ok(found)
}

/// The tab a step ran in, now: its URL and title.
fn where_now(tab: Option<&str>) -> (Value, Value) {
    let tabs = browser::tabs().unwrap_or_default();
    let t = match tab {
        Some(id) => tabs.iter().find(|t| t.tab_id == id),
        None => tabs.iter().find(|t| t.current),
    };
    match t {
        Some(t) => (json!(t.url), json!(t.title)),
        None => (Value::Null, Value::Null),
    }
}

/// Replay recording `id` (`rec` as the recorder loads it); the report.
pub fn run(id: &str, rec: &Value, opts: &Options) -> Result<Value, ToolError> {
    let steps: &[Value] = rec["steps"].as_array().map_or(&[], Vec::as_slice);
    let found = check_params(id, steps, &opts.params)?;
    let (mut run, mut passed, mut skipped) = (0u64, 0u64, 0u64);
    let mut first_failure = Value::Null;
    let mut results = Vec::with_capacity(steps.len());
    let replay_started = clock::now_ms();
    for (i, step) in steps.iter().enumerate() {
        let n = step["step"].clone();
        let tool = step["tool"].as_str().unwrap_or_default();
        // A step that failed when recorded was exploration, not part of the path.
        if step["ok"] == json!(false) {
            skipped += 1;
            results.push(json!({"step": n, "tool": tool, "skipped": "failed when recorded"}));
            continue;
        }
        ochre_sdk::progress::report(i as f64, Some(steps.len() as f64), Some(tool));
        run += 1;
        let started = clock::now_ms();
        let mut waited = Waited::default();
        let (outcome, remapped) = run_step(step, opts, &found, &mut waited);
        let mut r = json!({
            "step": n,
            "tool": tool,
            "ok": outcome.is_ok(),
            "ms": clock::now_ms().saturating_sub(started),
        });
        if !waited.what.is_empty() {
            r["waited_for"] = json!(waited.what);
            r["waited_ms"] = json!(waited.ms);
        }
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
                    let tab = opts.tab.as_deref().or(step["args"]["tabId"].as_str());
                    let (url, title) = where_now(tab);
                    first_failure = json!({
                        "step": n, "tool": tool, "code": e.code, "message": e.message,
                        "url": url, "title": title,
                    });
                }
            }
        }
        results.push(r);
        if opts.stop_on_error && !first_failure.is_null() {
            break;
        }
    }
    let meta = &rec["meta"];
    let (final_url, final_title) = where_now(opts.tab.as_deref());
    let expected_url = meta["final_url"].as_str();
    let expected_title = meta["final_title"].as_str();
    let matches = |want: Option<&str>, got: &Value| match (want, got.as_str()) {
        (Some(w), Some(g)) => json!(w == g),
        _ => Value::Null,
    };
    let given: Vec<&str> = opts.params.keys().map(String::as_str).collect();
    Ok(json!({
        "recordingId": id,
        "ok": passed == run && run + skipped == steps.len() as u64,
        "steps_total": steps.len(),
        "steps_run": run,
        "steps_passed": passed,
        "steps_failed": run - passed,
        "steps_skipped": skipped,
        "ms": clock::now_ms().saturating_sub(replay_started),
        "params_given": given,
        "first_failure": first_failure,
        "final_url": final_url,
        "expected_url": expected_url,
        "final_url_match": matches(expected_url, &final_url),
        "final_title": final_title,
        "expected_title": expected_title,
        "final_title_match": matches(expected_title, &final_title),
        "steps": results,
    }))
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
    fn values_an_older_version_did_not_keep_are_named() {
        assert_eq!(has_redacted(&json!({"a": 1, "b": {"c": "[REDACTED]"}})), Some("b.c".into()));
        assert_eq!(has_redacted(&json!({"a": "REDACTED"})), None);
    }

    #[test]
    fn missing_and_unknown_parameters_are_refused_naming_them() {
        let steps = vec![
            json!({"args": {"value": "{{title=Dune}}"}}),
            json!({"args": {"value": "{{password}}"}}),
            json!({"args": {"value": "{{pin}}"}}),
            json!({"args": {"value": "{{totp:ex.com}}"}}),
        ];
        let e = check_params("r", &steps, &BTreeMap::new()).expect_err("missing");
        assert_eq!(e.code.as_str(), "MISSING_PARAMETERS");
        assert!(e.message.contains("password, pin"), "{}", e.message);
        let given: BTreeMap<String, String> =
            [("nope".to_owned(), "x".to_owned())].into_iter().collect();
        assert_eq!(
            check_params("r", &steps, &given).expect_err("unknown").code,
            ochre_sdk::Code::InvalidArgument
        );
        let given: BTreeMap<String, String> =
            [("password", "secret:a"), ("pin", "1234")].map(|(a, b)| (a.into(), b.into())).into();
        assert_eq!(check_params("r", &steps, &given).expect("ok").len(), 4);
    }
}
