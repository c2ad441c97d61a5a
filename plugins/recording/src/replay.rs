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
//!   page: each recorded target (role and name and rank, or the selectors an
//!   imported recording keeps) is found again by the host in one call
//!   (`find_target`), which waits for it to appear as an agent would
//!   (bounded); the tool then waits for it to be actionable as for any call.
//! - A step that cannot proceed ends the replay (unless `stop_on_error` is
//!   false) with its number, tool, error and the page's URL and title.
//! - Healing (`heal`, the default, with `stop_on_error`): a step whose recorded target is not on
//!   the page stops the replay with `needs_target` (the step, what it looked
//!   for, the elements the page has now that come closest, with refs); the
//!   caller replays again `from_step` that step with `targets` (recorded ref ->
//!   a ref on the page now). When that replay passes, the repaired targets
//!   (the new element's role, name and rank) are saved as the recording's new
//!   version (the old one kept), so the next replay needs no help.

use std::collections::BTreeMap;

use ochre_sdk::browser::RefId;
use ochre_sdk::params::{self, Placeholder};
use ochre_sdk::recorder::{RecordedStep, RecordedTarget, Recording, RecordingMeta};
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
    /// A target not found asks for one (`needs_target`) instead of failing.
    pub heal: bool,
    /// Start at this step (its `step` number).
    pub from_step: Option<u64>,
    /// For the first step run: recorded ref -> a ref on the page now.
    pub targets: BTreeMap<String, RefId>,
}

/// A target a step was given in place of its recorded one: the step's
/// number, the recorded ref and who the new element is.
struct Repair {
    step: u64,
    old: String,
    now: browser::ops::Identity,
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
fn remap(v: &Value, map: &BTreeMap<String, RefId>) -> Value {
    match v {
        Value::String(s) => map.get(s).map_or_else(|| v.clone(), |n| Value::String(n.to_string())),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    (map.get(k).map_or_else(|| k.clone(), RefId::to_string), remap(v, map))
                })
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
/// for one that is not there yet; old ref -> new ref. Each is one host call
/// (`find_target`): the host waits for it and says, when a selector found
/// it, who it is (its role and name, kept once the replay passes).
fn relocate(
    step: &RecordedStep,
    tab: Option<&str>,
    timeout_ms: u64,
    waited: &mut Waited,
    given: &BTreeMap<String, RefId>,
    repairs: &mut Vec<Repair>,
) -> Result<BTreeMap<String, RefId>, ToolError> {
    use browser::ops::{FindTarget, Target};
    let mut map = BTreeMap::new();
    let started = clock::now_ms();
    for (old, t) in &step.targets {
        let recorded = t.target();
        // The caller's choice is taken as it is (no wait); its identity is
        // what finds it next time.
        let (target, left) = match given.get(old) {
            Some(new) => (Target { ref_id: Some(*new), ..Target::default() }, 0),
            None if recorded.is_empty() => continue,
            None => (recorded.clone(), timeout_ms.saturating_sub(clock::now_ms() - started)),
        };
        let ask = FindTarget { target, timeout_ms: Some(left), identify: Some(true) };
        let bound = u32::try_from(left + 30_000).unwrap_or(u32::MAX);
        let found = browser::run(tab, &ask, bound).map_err(|e| match given.get(old) {
            Some(new) => {
                ToolError::new(e.code, format!("the target given for {old} ({new}): {}", e.message))
                    .with_details(json!({"field": "targets"}))
            }
            None => not_found(old, t, &e),
        })?;
        if found.waited_ms >= 50 {
            waited.what.push(format!("{} ({} ms)", recorded.shown(), found.waited_ms));
        }
        if let Some(now) = found.identity {
            repairs.push(Repair { step: step.step, old: old.clone(), now });
        }
        map.insert(old.clone(), found.ref_id);
    }
    waited.ms = clock::now_ms().saturating_sub(started);
    Ok(map)
}

/// A recorded target the page does not have (the host's error `e` says how
/// long it was waited for, and why the last try failed).
fn not_found(old: &str, t: &RecordedTarget, e: &ToolError) -> ToolError {
    let t = &t.target;
    let mut details = json!({"ref": old, "role": t.role, "name": t.name, "nth": t.nth});
    details["waited_ms"] = e.details.get("waited_ms").cloned().unwrap_or(json!(0));
    for (k, v) in [("selector", &t.selector), ("xpath", &t.xpath), ("text", &t.text)] {
        if let Some(v) = v {
            details[k] = json!(v);
        }
    }
    ToolError::target_not_found(format!("the recorded target of {old}: {}", e.message))
        .with_details(details)
}

fn run_step(
    step: &RecordedStep,
    opts: &Options,
    found: &[Placeholder],
    waited: &mut Waited,
    given: &BTreeMap<String, RefId>,
    repairs: &mut Vec<Repair>,
) -> (Result<tools::Called, ToolError>, BTreeMap<String, RefId>) {
    let tool = step.tool.as_str();
    let mut args = step.args.clone();
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
    if let Some((old, target)) = named_target(step, &args, given) {
        return call_named(step, args, (&old, target), opts, given, repairs);
    }
    let tab = args["tabId"].as_str().map(str::to_owned);
    let map = match relocate(step, tab.as_deref(), opts.step_timeout_ms, waited, given, repairs) {
        Ok(m) => m,
        Err(e) => return (Err(e), BTreeMap::new()),
    };
    let mut args = remap(&args, &map);
    if let (Some(intent), Value::Object(o)) = (&step.intent, &mut args) {
        o.insert("intent".into(), json!(intent));
    }
    (tools::call(tool, &args), map)
}

/// An `interact` or `form_input` step whose element was recorded (or given
/// by the caller): its recorded ref and the element as the tool takes it
/// (`target`). The host finds it within the action's own wait (a click's:
/// and again if the page replaces it meanwhile): the step is one host call.
fn named_target(
    step: &RecordedStep,
    args: &Value,
    given: &BTreeMap<String, RefId>,
) -> Option<(String, Value)> {
    use browser::ops::Target;
    if !NAMED_TOOLS.contains(&step.tool.as_str()) {
        return None;
    }
    let old = args["ref"].as_str()?;
    let target = match given.get(old) {
        Some(new) => Target { ref_id: Some(*new), ..Target::default() },
        None => step.targets.get(old)?.target(),
    };
    if target.is_empty() || target.query.is_some() {
        return None;
    }
    Some((old.to_owned(), serde_json::to_value(&target).ok()?))
}

/// The tools that take an element as a recording names it (`target`).
const NAMED_TOOLS: [&str; 2] = ["interact", "form_input"];

/// Run a step on its named element (see [`named_target`]): who the element
/// is comes back with the answer, kept as a repair when a selector or the
/// caller found it.
fn call_named(
    step: &RecordedStep,
    mut args: Value,
    (old, target): (&str, Value),
    opts: &Options,
    given: &BTreeMap<String, RefId>,
    repairs: &mut Vec<Repair>,
) -> (Result<tools::Called, ToolError>, BTreeMap<String, RefId>) {
    use ochre_sdk::Code;
    let tool = step.tool.as_str();
    if let Value::Object(o) = &mut args {
        o.remove("ref");
        o.insert("target".into(), target);
        // The wait for the element to appear (and to take the click), as one.
        let asked = o.get("timeout").and_then(Value::as_u64).unwrap_or(5_000);
        o.insert("timeout".into(), json!(asked.max(opts.step_timeout_ms).min(60_000)));
        if let Some(intent) = &step.intent {
            o.insert("intent".into(), json!(intent));
        }
    }
    let mut map = BTreeMap::new();
    match tools::call(tool, &args) {
        Ok(called) => {
            let found = called.structured.as_ref().map(|s| s["found"].clone());
            let found: Option<browser::ops::TargetFound> =
                found.and_then(|f| serde_json::from_value(f).ok());
            if let Some(f) = found {
                if let Some(now) = f.identity {
                    repairs.push(Repair { step: step.step, old: old.to_owned(), now });
                }
                map.insert(old.to_owned(), f.ref_id);
            }
            (Ok(called), map)
        }
        Err(e) => {
            let e = match given.get(old) {
                Some(new) if matches!(e.code, Code::StaleRef | Code::ElementNotFound) => {
                    let said = format!("the target given for {old} ({new}): {}", e.message);
                    ToolError::new(e.code, said).with_details(json!({"field": "targets"}))
                }
                None if e.code == Code::ElementNotFound => {
                    not_found(old, &step.targets.get(old).cloned().unwrap_or_default(), &e)
                }
                _ => e,
            };
            (Err(e), map)
        }
    }
}

/// The parameters of a recording, checked against the values given: refused
/// before any step runs when a value is missing or names no parameter.
pub fn check_params(
    id: &str,
    steps: &[RecordedStep],
    given: &BTreeMap<String, String>,
) -> Result<Vec<Placeholder>, ToolError> {
    let all: Vec<Value> = steps.iter().map(|s| s.args.clone()).collect();
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
pub fn run(id: &str, rec: &Recording, opts: &Options) -> Result<Value, ToolError> {
    let steps = rec.steps.as_slice();
    let found = check_params(id, steps, &opts.params)?;
    let (mut run, mut passed, mut skipped) = (0u64, 0u64, 0u64);
    let mut first_failure = Value::Null;
    let mut needs_target = Value::Null;
    let mut results = Vec::with_capacity(steps.len());
    let mut repairs: Vec<Repair> = Vec::new();
    let replay_started = clock::now_ms();
    if let Some(from) = opts.from_step
        && !steps.iter().any(|s| s.step == from)
    {
        return Err(ToolError::invalid_argument(
            "from_step",
            format!("recording {id} has no step {from} ({} steps)", steps.len()),
        ));
    }
    let mut given = Some(&opts.targets).filter(|t| !t.is_empty());
    for (i, step) in steps.iter().enumerate() {
        let (n, tool) = (step.step, step.tool.as_str());
        if let Some(why) = skip_reason(step, opts) {
            skipped += 1;
            results.push(json!({"step": n, "tool": tool, "skipped": why}));
            continue;
        }
        ochre_sdk::progress::report(i as f64, Some(steps.len() as f64), Some(tool));
        run += 1;
        let started = clock::now_ms();
        let mut waited = Waited::default();
        let none = BTreeMap::new();
        let targets = given.take().unwrap_or(&none);
        let (outcome, remapped) = run_step(step, opts, &found, &mut waited, targets, &mut repairs);
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
            // Healing stops the replay: not when the caller asked to run every step.
            Err(e)
                if opts.heal && opts.stop_on_error && e.code == ochre_sdk::Code::TargetNotFound =>
            {
                // Ask for the target instead of failing: what was looked for
                // and what the page has now that comes closest.
                r["code"] = json!(e.code);
                r["message"] = json!(e.message);
                needs_target = needs(step, &e, opts.tab.as_deref());
                results.push(r);
                break;
            }
            Err(e) => {
                r["code"] = json!(e.code);
                r["message"] = json!(e.message);
                if first_failure.is_null() {
                    first_failure = failure(step, opts, &e);
                }
            }
        }
        results.push(r);
        if opts.stop_on_error && !first_failure.is_null() {
            break;
        }
    }
    let given: Vec<&str> = opts.params.keys().map(String::as_str).collect();
    // A replay that ran no step (each failed when recorded) reproduced nothing.
    let all_passed =
        needs_target.is_null() && run > 0 && passed == run && run + skipped == steps.len() as u64;
    // A repair that took the replay to its end is the recording's new version.
    let healed = if all_passed && !repairs.is_empty() {
        save_repairs(id, steps, &repairs)?
    } else {
        Value::Null
    };
    let mut report = json!({
        "recordingId": id,
        "ok": all_passed,
        "needs_target": needs_target,
        "healed": healed,
        "steps_total": steps.len(),
        "steps_run": run,
        "steps_passed": passed,
        "steps_failed": run - passed,
        "steps_skipped": skipped,
        "ms": clock::now_ms().saturating_sub(replay_started),
        "params_given": given,
        "first_failure": first_failure,
        "steps": results,
    });
    if let (Some(r), Value::Object(end)) = (report.as_object_mut(), ending(&rec.meta, opts)) {
        r.extend(end);
    }
    Ok(report)
}

/// The first step that failed: what it was, why, and where the tab is.
fn failure(step: &RecordedStep, opts: &Options, e: &ToolError) -> Value {
    let tab = opts.tab.as_deref().or(step.args["tabId"].as_str());
    let (url, title) = where_now(tab);
    json!({
        "step": step.step, "tool": step.tool, "code": e.code, "message": e.message,
        "url": url, "title": title,
    })
}

/// Why `step` is not replayed (`None`: it is): before `from_step`, or it
/// failed when recorded (exploration, not part of the path).
fn skip_reason(step: &RecordedStep, opts: &Options) -> Option<&'static str> {
    if opts.from_step.is_some_and(|from| step.step < from) {
        return Some("before from_step");
    }
    (!step.ok).then_some("failed when recorded")
}

/// Where the replay ended (the tab's URL and title) against where the
/// recording did (`meta`).
fn ending(meta: &RecordingMeta, opts: &Options) -> Value {
    let (final_url, final_title) = where_now(opts.tab.as_deref());
    let expected_url = meta.final_url.as_deref();
    let expected_title = meta.final_title.as_deref();
    let matches = |want: Option<&str>, got: &Value| match (want, got.as_str()) {
        (Some(w), Some(g)) => json!(w == g),
        _ => Value::Null,
    };
    json!({
        "final_url_match": matches(expected_url, &final_url),
        "final_title_match": matches(expected_title, &final_title),
        "final_url": final_url,
        "expected_url": expected_url,
        "final_title": final_title,
        "expected_title": expected_title,
    })
}

/// The `needs_target` answer for `step`, whose recorded target `e` names was
/// not found: what it looked for, the closest elements on the page now (with
/// refs), and how to go on.
fn needs(step: &RecordedStep, e: &ToolError, tab: Option<&str>) -> Value {
    let d = &e.details;
    let (role, name) = (d["role"].as_str().unwrap_or(""), d["name"].as_str().unwrap_or(""));
    let old = d["ref"].as_str().unwrap_or("");
    let query = if name.is_empty() { role.to_owned() } else { format!("{name} {role}") };
    let ask = browser::ops::Find { query: query.clone(), limit: Some(8), scores: None };
    let mut candidates = browser::run(tab, &ask, 5_000).map(|f| f.matches).unwrap_or_default();
    if candidates.is_empty() || !name.is_empty() {
        // Elements of the same role, whatever their name now.
        let same = browser::ops::Find { query: role.to_owned(), limit: Some(8), scores: None };
        for m in browser::run(tab, &same, 5_000).map(|f| f.matches).unwrap_or_default() {
            if !candidates.contains(&m) {
                candidates.push(m);
            }
        }
    }
    let (url, title) = where_now(tab);
    let n = step.step;
    json!({
        "step": n,
        "tool": step.tool,
        "ref": old,
        "looked_for": {"role": role, "name": name, "nth": d["nth"]},
        "candidates": candidates,
        "url": url,
        "title": title,
        "next": format!(
            "replay again with from_step: {n} and targets: {{\"{old}\": <the ref of the element it is now>}}; the repair is saved as a new version once the replay passes"
        ),
    })
}

/// Save the repaired targets as the recording's new version.
fn save_repairs(id: &str, steps: &[RecordedStep], repairs: &[Repair]) -> Result<Value, ToolError> {
    let mut steps = steps.to_vec();
    let mut said = Vec::new();
    let mut reasons = Vec::new();
    for r in repairs {
        let Some(step) = steps.iter_mut().find(|s| s.step == r.step) else { continue };
        let before = step.targets.get(&r.old).cloned().unwrap_or_default();
        // An imported target's selectors stay beside its role and name.
        let mut now = RecordedTarget::from(r.now.clone());
        now.target.selector.clone_from(&before.target.selector);
        now.target.xpath.clone_from(&before.target.xpath);
        now.target.text.clone_from(&before.target.text);
        step.targets.insert(r.old.clone(), now);
        let (was_role, was_name) = match (&before.target.role, before.shown()) {
            (None, Some(what)) => (String::new(), what),
            _ => (before.target.role.unwrap_or_default(), before.target.name.unwrap_or_default()),
        };
        reasons.push(format!(
            "step {}: {was_role} {was_name:?} is now {} {:?}",
            r.step, r.now.role, r.now.name
        ));
        said.push(json!({
            "step": r.step,
            "ref": r.old,
            "was": {"role": was_role, "name": was_name},
            "now": {"role": r.now.role, "name": r.now.name},
        }));
    }
    let meta = ochre_sdk::recordings::save_version(id, &steps, &reasons.join("; "))?;
    Ok(json!({"version": meta.version, "repaired": said}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_swapped_in_values_and_keys_only() {
        let map: BTreeMap<String, RefId> = [("ax_3".to_owned(), RefId(40))].into_iter().collect();
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
        let steps: Vec<RecordedStep> =
            ["{{title=Dune}}", "{{password}}", "{{pin}}", "{{totp:ex.com}}"]
                .map(|v| RecordedStep { args: json!({"value": v}), ..RecordedStep::default() })
                .into();
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
