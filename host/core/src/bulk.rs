//! Bulk progress contracts (`oc_bulk_progress_*`, `bulk_contract` on
//! `oc_task_run_start`): an opt-in record of item-level progress for repetitive
//! work (a list of URLs, pages of a listing, workers of a workflow) and the
//! completion guard that refuses to call such work done while items are missing.
//!
//! A contract lives in `<data-dir>/progress-contracts/<contract_id>.json`, written
//! atomically on every change, so it survives restarts. Item lists keep their
//! last [`ITEMS_KEPT`] entries with true counts and truncation flags; item text is
//! capped and credentials in URLs are redacted.

use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use crate::Clock;
use crate::error::ToolError;
use crate::journal::iso_of;
use crate::store::write_atomic;

/// Error codes (the registry of `ochre-protocol`).
pub use ochre_protocol::codes;

/// Items kept in a contract's completed / failed lists (the tail; counts stay true).
pub const ITEMS_KEPT: usize = 500;
/// Longest item text kept.
pub const ITEM_CHARS: usize = 300;
/// Most expected items a contract may list.
pub const MAX_EXPECTED_ITEMS: usize = 1000;
/// Largest `expected_total`.
pub const MAX_TOTAL: u64 = 1_000_000;
/// Missing items named in a guard result.
const MISSING_SHOWN: usize = 10;

/// Scopes a contract may have.
pub const SCOPES: &[&str] = &["task_run", "workflow", "batch", "crawl"];

/// What the completion guard says.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardResult {
    /// Completion may proceed.
    pub allowed: bool,
    /// Why not (when refused), or how it was met.
    pub reason: String,
    /// Items neither completed nor failed, when the total is known.
    pub missing_count: Option<u64>,
    /// Failed items.
    pub failed_count: u64,
    /// Completed items.
    pub completed_count: u64,
    /// What the agent should do next (when refused).
    pub suggested_next_action: Option<String>,
    /// Up to 10 expected items not yet recorded (when the contract lists them).
    pub missing_items: Vec<String>,
}

impl GuardResult {
    /// JSON view (`completion_guard` in results, details of the refusal).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("allowed".into(), json!(self.allowed));
        m.insert("reason".into(), json!(self.reason));
        if let Some(n) = self.missing_count {
            m.insert("missing_count".into(), json!(n));
        }
        m.insert("failed_count".into(), json!(self.failed_count));
        m.insert("completed_count".into(), json!(self.completed_count));
        if let Some(a) = &self.suggested_next_action {
            m.insert("suggested_next_action".into(), json!(a));
        }
        if !self.missing_items.is_empty() {
            m.insert("missing_items".into(), json!(self.missing_items));
        }
        Value::Object(m)
    }

    /// The refusal as a tool error (`bulk_completion_guard_failed`, guard
    /// `bulk_completion_guard_failed`).
    pub fn to_error(&self, contract_id: &str) -> ToolError {
        let mut e = ToolError::bulk_completion_guard_failed(format!(
            "bulk_completion_guard_failed: {}; {}",
            self.reason,
            self.suggested_next_action.as_deref().unwrap_or("")
        ))
        .with("contract_id", contract_id);
        if let Value::Object(m) = self.to_json() {
            for (k, v) in m {
                if k != "allowed" && k != "reason" {
                    e.details.insert(k, v);
                }
            }
        }
        e
    }
}

/// The completion guard over a contract (pure; see the module docs).
///
/// - known total: `completed + failed < expected_total` blocks (`missing_count`);
/// - `min_completed` unmet blocks;
/// - failed items block unless the contract allows partial completion
///   (`allow_partial`, or an explicit `min_completed` that is met);
/// - unknown total: only a non-empty `stop_condition` marked satisfied allows.
pub fn check(c: &Map<String, Value>) -> GuardResult {
    let done = c["completed_count"].as_u64().unwrap_or(0);
    let failed = c["failed_count"].as_u64().unwrap_or(0);
    let total = c.get("expected_total").and_then(Value::as_u64);
    let min = c.get("min_completed").and_then(Value::as_u64);
    let partial = c.get("allow_partial") == Some(&json!(true)) || min.is_some();
    let stop = c["stop_condition"].as_str().unwrap_or("").trim().to_owned();
    let satisfied = c.get("stop_satisfied") == Some(&json!(true));
    let missing_items = missing(c);
    let mut r = GuardResult {
        allowed: false,
        reason: String::new(),
        missing_count: total.map(|t| t.saturating_sub(done + failed)),
        failed_count: failed,
        completed_count: done,
        suggested_next_action: None,
        missing_items: missing_items.clone(),
    };
    let next = |n: u64| match missing_items.first() {
        Some(first) => format!(
            "process the {n} missing item(s), next: {first}; record each with oc_bulk_progress_update (or oc_task_run_update), then complete again"
        ),
        None => format!(
            "process the {n} missing item(s) and record each with oc_bulk_progress_update (or oc_task_run_update), then complete again"
        ),
    };
    if let Some(t) = total
        && done + failed < t
    {
        let n = t - done - failed;
        r.reason = format!("{done} completed + {failed} failed of {t} expected: {n} missing");
        r.suggested_next_action = Some(next(n));
        return r;
    }
    if let Some(m) = min
        && done < m
    {
        r.reason = format!("{done} completed, min_completed is {m}");
        r.suggested_next_action = Some(if failed > 0 {
            format!(
                "retry the {failed} failed item(s) (retryable ones first) until {m} are completed, or end the run as FAILED"
            )
        } else {
            format!("complete {} more item(s), then complete again", m - done)
        });
        return r;
    }
    if failed > 0 && !partial {
        r.reason =
            format!("{failed} item(s) failed and the contract does not allow partial completion");
        r.suggested_next_action = Some(
            "retry the failed items (retryable ones first), end the run as FAILED, or pass force: true with a force_reason".into(),
        );
        return r;
    }
    if total.is_none() {
        if stop.is_empty() || !satisfied {
            r.reason = if stop.is_empty() {
                "the total is unknown and the contract has no stop_condition".into()
            } else {
                format!(
                    "the total is unknown and the stop condition {stop:?} is not marked satisfied"
                )
            };
            r.suggested_next_action = Some(
                "go on until the stop condition holds, then mark it with oc_bulk_progress_update {stop_satisfied: true}".into(),
            );
            return r;
        }
        r.allowed = true;
        r.reason = format!("stop condition {stop:?} satisfied; {done} completed, {failed} failed");
        return r;
    }
    r.allowed = true;
    r.reason = format!("{done} completed + {failed} failed of {} expected", total.unwrap_or(0));
    r
}

/// Up to [`MISSING_SHOWN`] expected items not recorded yet.
fn missing(c: &Map<String, Value>) -> Vec<String> {
    let Some(expected) = c.get("expected_items").and_then(Value::as_array) else {
        return Vec::new();
    };
    let has = |list: &str, item: &str, key: Option<&str>| {
        c[list].as_array().is_some_and(|l| {
            l.iter().any(|v| match key {
                None => v == item,
                Some(k) => v[k] == item,
            })
        })
    };
    expected
        .iter()
        .filter_map(Value::as_str)
        .filter(|i| !has("completed", i, None) && !has("failed", i, Some("item")))
        .take(MISSING_SHOWN)
        .map(str::to_owned)
        .collect()
}

/// Item text as stored: credentials in URLs redacted, capped at [`ITEM_CHARS`].
pub fn clean_item(s: &str) -> String {
    let s = redact_url(s.trim());
    let mut out: String = s.chars().take(ITEM_CHARS).collect();
    if s.chars().count() > ITEM_CHARS {
        out.push('…');
    }
    out
}

/// `scheme://user:pass@host/...?token=x` -> `scheme://REDACTED@host/...?token=REDACTED`.
fn redact_url(s: &str) -> String {
    let Some(scheme_end) = s.find("://") else {
        return s.to_owned();
    };
    let (head, rest) = s.split_at(scheme_end + 3);
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (auth, tail) = rest.split_at(auth_end);
    let auth = match auth.rfind('@') {
        Some(at) => format!("REDACTED@{}", &auth[at + 1..]),
        None => auth.to_owned(),
    };
    const SECRET_KEYS: &[&str] = &[
        "token",
        "access_token",
        "id_token",
        "password",
        "passwd",
        "pwd",
        "secret",
        "api_key",
        "apikey",
        "key",
        "auth",
        "session",
        "sessionid",
        "sig",
        "signature",
        "code",
    ];
    let tail = match tail.split_once('?') {
        None => tail.to_owned(),
        Some((path, query)) => {
            let (query, frag) = match query.split_once('#') {
                Some((q, f)) => (q, Some(f)),
                None => (query, None),
            };
            let q: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if SECRET_KEYS.contains(&k.to_ascii_lowercase().as_str()) => {
                        format!("{k}=REDACTED")
                    }
                    _ => kv.to_owned(),
                })
                .collect();
            let mut t = format!("{path}?{}", q.join("&"));
            if let Some(f) = frag {
                t.push('#');
                t.push_str(f);
            }
            t
        }
    };
    format!("{head}{auth}{tail}")
}

/// The contracts under a data dir.
#[derive(Debug)]
pub struct Contracts {
    dir: PathBuf,
    clock: Clock,
    lock: Mutex<()>,
}

fn not_found(id: &str) -> ToolError {
    ToolError::contract_not_found(format!(
        "no bulk progress contract {id:?}; oc_bulk_progress_start creates one"
    ))
    .with("contract_id", id)
}

fn bad(field: &str, msg: impl Into<String>) -> ToolError {
    ToolError::invalid_argument(field, msg)
}

/// Check a contract spec (`oc_bulk_progress_start`'s arguments, or `bulk_contract`
/// of a task run; `prefix` names it in errors) and return the normalized fields.
pub fn validate_spec(spec: &Value, prefix: &str) -> Result<Map<String, Value>, ToolError> {
    let Some(obj) = spec.as_object() else {
        return Err(bad(prefix.trim_end_matches('.'), "the contract must be an object"));
    };
    let r = SpecReader { obj, prefix };
    const KNOWN: &[&str] = &[
        "scope",
        "expected_total",
        "expected_items",
        "min_completed",
        "allow_partial",
        "stop_condition",
        "item_key",
        "cursor",
        "run_id",
    ];
    if let Some(k) = obj.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(r.bad(k, "is not a contract field"));
    }
    let scope = match obj.get("scope") {
        None => "task_run",
        Some(v) => match v.as_str().filter(|s| SCOPES.contains(s)) {
            Some(s) => s,
            None => return Err(r.bad("scope", format!("must be one of {SCOPES:?}"))),
        },
    };
    let mut total = r.uint("expected_total")?;
    let min = r.uint("min_completed")?;
    let items = r.items()?;
    if let Some(items) = &items {
        match total {
            None => total = Some(items.len() as u64),
            Some(t) if t != items.len() as u64 => {
                let n = items.len();
                return Err(r.bad(
                    "expected_total",
                    format!("is {t} but expected_items lists {n} distinct items"),
                ));
            }
            Some(_) => {}
        }
    }
    if let (Some(m), Some(t)) = (min, total)
        && m > t
    {
        return Err(r.bad("min_completed", format!("({m}) is more than expected_total ({t})")));
    }
    let stop = r.text("stop_condition", 500)?.unwrap_or_default();
    if total.is_none() && stop.is_empty() {
        let f = r.field("stop_condition");
        return Err(bad(
            &f,
            format!(
                "with no expected_total or expected_items, `{f}` is required (e.g. \"no next page\"): it is the only way such a contract can complete"
            ),
        ));
    }
    let key = r.text("item_key", 64)?.filter(|k| !k.is_empty());
    let mut out = Map::new();
    out.insert("scope".into(), json!(scope));
    out.insert("expected_total".into(), json!(total));
    out.insert("expected_items".into(), json!(items));
    out.insert("min_completed".into(), json!(min));
    out.insert("allow_partial".into(), json!(r.flag("allow_partial")?));
    out.insert("stop_condition".into(), json!(stop));
    out.insert("stop_satisfied".into(), json!(false));
    out.insert("item_key".into(), json!(key.unwrap_or_else(|| "item".into())));
    out.insert("cursor".into(), json!(r.text("cursor", 2000)?.filter(|c| !c.is_empty())));
    Ok(out)
}

/// Reads the fields of a contract spec; its errors name the field with the
/// spec's prefix.
struct SpecReader<'a> {
    obj: &'a Map<String, Value>,
    prefix: &'a str,
}

impl SpecReader<'_> {
    fn field(&self, k: &str) -> String {
        format!("{}{k}", self.prefix)
    }

    /// "`field` <what>".
    fn bad(&self, k: &str, what: impl std::fmt::Display) -> ToolError {
        let f = self.field(k);
        bad(&f, format!("`{f}` {what}"))
    }

    fn uint(&self, k: &str) -> Result<Option<u64>, ToolError> {
        match self.obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64().filter(|n| *n <= MAX_TOTAL) {
                Some(n) => Ok(Some(n)),
                None => Err(self.bad(k, format!("must be an integer from 0 to {MAX_TOTAL}"))),
            },
        }
    }

    fn text(&self, k: &str, max: usize) -> Result<Option<String>, ToolError> {
        match self.obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.chars().count() <= max => Ok(Some(s.trim().to_owned())),
            Some(_) => Err(self.bad(k, format!("must be a string of at most {max} characters"))),
        }
    }

    fn flag(&self, k: &str) -> Result<bool, ToolError> {
        match self.obj.get(k) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.bad(k, "must be a boolean")),
        }
    }

    /// `expected_items`: distinct, cleaned, at most [`MAX_EXPECTED_ITEMS`].
    fn items(&self) -> Result<Option<Vec<String>>, ToolError> {
        const K: &str = "expected_items";
        let a = match self.obj.get(K) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Array(a)) => a,
            Some(_) => return Err(self.bad(K, "must be an array of strings")),
        };
        if a.len() > MAX_EXPECTED_ITEMS {
            return Err(self.bad(
                K,
                format!(
                    "lists {} items, over the {MAX_EXPECTED_ITEMS} limit; give expected_total instead",
                    a.len()
                ),
            ));
        }
        let mut seen = Vec::with_capacity(a.len());
        for v in a {
            let Some(s) = v.as_str().filter(|s| !s.trim().is_empty()) else {
                return Err(self.bad(K, "must hold non-empty strings"));
            };
            let s = clean_item(s);
            if !seen.contains(&s) {
                seen.push(s);
            }
        }
        Ok(Some(seen))
    }
}

/// Items of one update.
#[derive(Debug, Default, Clone)]
pub struct Progress {
    /// Items done.
    pub completed: Vec<String>,
    /// Items failed: item, reason, retryable.
    pub failed: Vec<(String, String, Option<bool>)>,
    /// New cursor.
    pub cursor: Option<String>,
    /// Mark (or unmark) the stop condition.
    pub stop_satisfied: Option<bool>,
}

impl Progress {
    /// Read `completed` / `failed` / `cursor` / `stop_satisfied` (or the task-run
    /// names `completed_items` / `failed_items` / `current_cursor`).
    pub fn from_args(args: &Value) -> Self {
        let list = |a: &str, b: &str| {
            args.get(a)
                .or_else(|| args.get(b))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let completed = list("completed", "completed_items")
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        let failed = list("failed", "failed_items")
            .iter()
            .filter_map(|f| {
                Some((
                    f["item"].as_str()?.to_owned(),
                    f["reason"].as_str().unwrap_or("").to_owned(),
                    f["retryable"].as_bool(),
                ))
            })
            .collect();
        let cursor = match args.get("cursor").or_else(|| args.get("current_cursor")) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        Self {
            completed,
            failed,
            cursor,
            stop_satisfied: args.get("stop_satisfied").and_then(Value::as_bool),
        }
    }

    /// Whether it records anything.
    pub fn is_empty(&self) -> bool {
        self.completed.is_empty()
            && self.failed.is_empty()
            && self.cursor.is_none()
            && self.stop_satisfied.is_none()
    }
}

/// Apply `p` to contract `c` (dedupe; a failed item that completes moves over;
/// lists capped with true counts).
pub fn apply(c: &mut Map<String, Value>, p: &Progress, now: &str) {
    let mut completed: Vec<Value> = c["completed"].as_array().cloned().unwrap_or_default();
    let mut failed: Vec<Value> = c["failed"].as_array().cloned().unwrap_or_default();
    let mut done_n = c["completed_count"].as_u64().unwrap_or(0);
    let mut fail_n = c["failed_count"].as_u64().unwrap_or(0);
    let mut progressed = false;
    for item in &p.completed {
        let item = clean_item(item);
        if item.is_empty() {
            continue;
        }
        if let Some(i) = failed.iter().position(|f| f["item"] == item.as_str()) {
            failed.remove(i);
            fail_n = fail_n.saturating_sub(1);
        }
        if !completed.iter().any(|x| x == item.as_str()) {
            completed.push(json!(item));
            done_n += 1;
            progressed = true;
        }
    }
    for (item, reason, retryable) in &p.failed {
        let item = clean_item(item);
        if item.is_empty() || completed.iter().any(|x| x == item.as_str()) {
            continue;
        }
        let mut entry = json!({"item": item, "reason": clean_item(reason)});
        if let Some(r) = retryable {
            entry["retryable"] = json!(r);
        }
        match failed.iter_mut().find(|x| x["item"] == item.as_str()) {
            Some(x) => *x = entry,
            None => {
                failed.push(entry);
                fail_n += 1;
                progressed = true;
            }
        }
    }
    let cut = |v: &mut Vec<Value>| {
        let extra = v.len().saturating_sub(ITEMS_KEPT);
        v.drain(..extra);
    };
    cut(&mut completed);
    cut(&mut failed);
    c.insert("completed".into(), json!(completed));
    c.insert("failed".into(), json!(failed));
    c.insert("completed_count".into(), json!(done_n));
    c.insert("failed_count".into(), json!(fail_n));
    c.insert("completed_truncated".into(), json!(done_n as usize > ITEMS_KEPT));
    c.insert("failed_truncated".into(), json!(fail_n as usize > ITEMS_KEPT));
    if let Some(cur) = &p.cursor {
        c.insert("cursor".into(), json!(clean_item(cur)));
        progressed = true;
    }
    if let Some(s) = p.stop_satisfied {
        c.insert("stop_satisfied".into(), json!(s));
    }
    if progressed {
        c.insert("last_progress_at".into(), json!(now));
    }
    c.insert("updated_at".into(), json!(now));
}

/// A compact view: everything but the item lists (unless `items`), plus the guard.
pub fn view(c: &Map<String, Value>, items: bool) -> Value {
    let mut v = Map::new();
    for (k, val) in c {
        if !items && matches!(k.as_str(), "completed" | "failed" | "expected_items") {
            continue;
        }
        v.insert(k.clone(), val.clone());
    }
    v.insert("completion_guard".into(), check(c).to_json());
    Value::Object(v)
}

impl Contracts {
    /// The contracts under `data_dir`.
    pub fn new(data_dir: &std::path::Path, clock: Clock) -> Self {
        Self { dir: data_dir.join("progress-contracts"), clock, lock: Mutex::new(()) }
    }

    fn guard(&self) -> std::sync::MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One contract.
    pub fn load(&self, id: &str) -> Result<Map<String, Value>, ToolError> {
        if !crate::store::valid_id(id, "bp-") {
            return Err(not_found(id));
        }
        let file = self.dir.join(format!("{id}.json"));
        crate::store::read_object(&file, &format!("bulk progress contract {id}"))
            .map_err(|e| e.with("contract_id", id))?
            .ok_or_else(|| not_found(id))
    }

    fn save(&self, c: &Map<String, Value>) -> Result<(), ToolError> {
        let id = c["contract_id"].as_str().unwrap_or_default();
        let fail = |e: std::io::Error| {
            ToolError::storage_failed(format!("cannot save bulk progress contract {id}: {e}"))
        };
        std::fs::create_dir_all(&self.dir).map_err(fail)?;
        let mut bytes = serde_json::to_vec_pretty(&Value::Object(c.clone()))
            .map_err(|e| fail(std::io::Error::other(e)))?;
        bytes.push(b'\n');
        write_atomic(&self.dir.join(format!("{id}.json")), &bytes).map_err(fail)
    }

    /// Create a contract from a validated spec (see [`validate_spec`]).
    pub fn create(
        &self,
        mut spec: Map<String, Value>,
        run_id: Option<&str>,
    ) -> Result<Map<String, Value>, ToolError> {
        let _g = self.guard();
        let now = iso_of(self.clock.now_ms());
        let mut raw = [0u8; 4];
        let _ = getrandom::fill(&mut raw);
        let stamp: String = now.chars().filter(char::is_ascii_digit).take(14).collect();
        let id = format!("bp-{stamp}-{}", data_encoding::HEXLOWER.encode(&raw));
        spec.insert("contract_id".into(), json!(id));
        spec.insert("run_id".into(), json!(run_id));
        spec.insert("completed".into(), json!([]));
        spec.insert("failed".into(), json!([]));
        spec.insert("completed_count".into(), json!(0));
        spec.insert("failed_count".into(), json!(0));
        spec.insert("completed_truncated".into(), json!(false));
        spec.insert("failed_truncated".into(), json!(false));
        spec.insert("last_progress_at".into(), Value::Null);
        spec.insert("created_at".into(), json!(now));
        spec.insert("updated_at".into(), json!(now));
        spec.insert("closed".into(), json!(false));
        self.save(&spec)?;
        Ok(spec)
    }

    /// Record progress. A closed contract (its run finished) refuses.
    pub fn update(&self, id: &str, p: &Progress) -> Result<Map<String, Value>, ToolError> {
        let _g = self.guard();
        let mut c = self.load(id)?;
        if c["closed"] == json!(true) {
            return Err(ToolError::contract_closed(format!(
                "bulk progress contract {id} is closed (its run is finished)"
            ))
            .with("contract_id", id));
        }
        apply(&mut c, p, &iso_of(self.clock.now_ms()));
        self.save(&c)?;
        Ok(c)
    }

    /// Close a contract (its run ended); it keeps its items.
    pub fn close(&self, id: &str) -> Result<(), ToolError> {
        let _g = self.guard();
        let mut c = self.load(id)?;
        c.insert("closed".into(), json!(true));
        c.insert("updated_at".into(), json!(iso_of(self.clock.now_ms())));
        self.save(&c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(spec: Value) -> Map<String, Value> {
        let mut c = validate_spec(&spec, "").expect("valid");
        for (k, v) in [
            ("completed", json!([])),
            ("failed", json!([])),
            ("completed_count", json!(0)),
            ("failed_count", json!(0)),
        ] {
            c.insert(k.into(), v);
        }
        c
    }

    fn done(c: &mut Map<String, Value>, items: &[&str]) {
        apply(
            c,
            &Progress {
                completed: items.iter().map(|s| s.to_string()).collect(),
                ..Progress::default()
            },
            "t",
        );
    }

    fn fail(c: &mut Map<String, Value>, item: &str, retryable: Option<bool>) {
        apply(
            c,
            &Progress {
                failed: vec![(item.into(), "404".into(), retryable)],
                ..Progress::default()
            },
            "t",
        );
    }

    #[test]
    fn all_complete_passes_and_partial_is_blocked_with_the_missing_count() {
        let mut c = contract(json!({"expected_items": ["a", "b", "c"], "item_key": "url"}));
        assert_eq!(c["expected_total"], 3);
        done(&mut c, &["a"]);
        let g = check(&c);
        assert!(!g.allowed);
        assert_eq!(g.missing_count, Some(2));
        assert_eq!(g.missing_items, vec!["b", "c"]);
        assert!(g.suggested_next_action.as_deref().is_some_and(|a| a.contains("next: b")), "{g:?}");
        done(&mut c, &["b", "a"]);
        assert_eq!(check(&c).missing_count, Some(1), "duplicates count once");
        done(&mut c, &["c"]);
        let g = check(&c);
        assert!(g.allowed, "{g:?}");
        assert_eq!((g.completed_count, g.missing_count), (3, Some(0)));
    }

    #[test]
    fn failed_items_block_unless_partial_completion_is_allowed() {
        let mut c = contract(json!({"expected_total": 3}));
        done(&mut c, &["a", "b"]);
        fail(&mut c, "c", Some(true));
        let g = check(&c);
        assert!(!g.allowed, "a failure is not a completion");
        assert_eq!((g.completed_count, g.failed_count, g.missing_count), (2, 1, Some(0)));
        // allow_partial lets the run finish; the failure stays on record.
        let mut p = contract(json!({"expected_total": 3, "allow_partial": true}));
        done(&mut p, &["a", "b"]);
        fail(&mut p, "c", None);
        assert!(check(&p).allowed);
        assert_eq!(p["failed"][0]["item"], "c");
        // A failed item that later completes moves to completed.
        done(&mut c, &["c"]);
        let g = check(&c);
        assert!(g.allowed);
        assert_eq!((g.completed_count, g.failed_count), (3, 0));
        // Failing an item already completed changes nothing.
        fail(&mut c, "a", None);
        assert_eq!(c["failed_count"], 0);
    }

    #[test]
    fn min_completed_is_a_floor() {
        let mut c = contract(json!({"expected_total": 4, "min_completed": 3}));
        done(&mut c, &["a", "b"]);
        fail(&mut c, "c", None);
        fail(&mut c, "d", Some(false));
        let g = check(&c);
        assert!(!g.allowed);
        assert!(g.reason.contains("min_completed is 3"), "{}", g.reason);
        done(&mut c, &["d"]);
        assert!(check(&c).allowed, "3 of 4 with an explicit floor of 3");
    }

    #[test]
    fn unknown_total_needs_the_stop_condition_marked() {
        let mut c = contract(json!({"stop_condition": "no next page", "item_key": "page"}));
        done(&mut c, &["1", "2"]);
        let g = check(&c);
        assert!(!g.allowed);
        assert_eq!(g.missing_count, None);
        apply(&mut c, &Progress { stop_satisfied: Some(true), ..Progress::default() }, "t");
        assert!(check(&c).allowed);
        // Without a stop condition and a total such a contract is refused at start.
        let e = validate_spec(&json!({"item_key": "page"}), "").expect_err("no stop");
        assert_eq!(e.details["field"], "stop_condition");
        let e =
            validate_spec(&json!({"stop_condition": "  "}), "bulk_contract.").expect_err("blank");
        assert_eq!(e.details["field"], "bulk_contract.stop_condition");
    }

    #[test]
    fn lists_are_capped_with_true_counts_and_items_are_cleaned() {
        let mut c = contract(json!({"expected_total": 1200}));
        let items: Vec<String> = (0..1200).map(|i| format!("item-{i}")).collect();
        apply(&mut c, &Progress { completed: items.clone(), ..Progress::default() }, "t");
        assert_eq!(c["completed_count"], 1200);
        assert_eq!(c["completed"].as_array().map(Vec::len), Some(ITEMS_KEPT));
        assert_eq!(c["completed"][0], "item-700", "the tail is kept");
        assert_eq!(c["completed_truncated"], true);
        assert!(check(&c).allowed);
        assert_eq!(
            clean_item("https://bob:hunter2@x.test/a?q=1&token=abc#f"),
            "https://REDACTED@x.test/a?q=1&token=REDACTED#f"
        );
        assert_eq!(clean_item(&"x".repeat(1000)).chars().count(), ITEM_CHARS + 1);
    }

    #[test]
    fn malformed_contracts_are_structured_errors() {
        for (spec, field) in [
            (json!({"expected_total": -1}), "expected_total"),
            (json!({"expected_total": "3"}), "expected_total"),
            (json!({"expected_total": 2, "min_completed": 3}), "min_completed"),
            (json!({"expected_total": 2, "expected_items": ["a"]}), "expected_total"),
            (json!({"expected_items": ["a", 5]}), "expected_items"),
            (json!({"expected_items": "a"}), "expected_items"),
            (json!({"expected_total": 1, "scope": "galaxy"}), "scope"),
            (json!({"expected_total": 1, "allow_partial": "yes"}), "allow_partial"),
            (json!({"expected_total": 1, "colour": "red"}), "colour"),
            (json!({"expected_total": 1, "item_key": 7}), "item_key"),
        ] {
            let e = validate_spec(&spec, "").expect_err(&spec.to_string());
            assert_eq!(e.code, crate::error::codes::INVALID_ARGUMENT);
            assert_eq!(e.details["field"], field, "{spec}");
        }
        assert_eq!(
            validate_spec(&json!([1]), "bulk_contract.").expect_err("array").details["field"],
            "bulk_contract"
        );
    }

    #[test]
    fn contracts_survive_a_new_store_and_close() {
        let d = std::env::temp_dir().join(format!("ochre-bulk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let store = Contracts::new(&d, Clock::System);
        let c = store
            .create(
                validate_spec(&json!({"expected_total": 2, "cursor": "p1"}), "").expect("spec"),
                None,
            )
            .expect("create");
        let id = c["contract_id"].as_str().expect("id").to_owned();
        store
            .update(
                &id,
                &Progress {
                    completed: vec!["a".into()],
                    cursor: Some("p2".into()),
                    ..Progress::default()
                },
            )
            .expect("update");
        let again = Contracts::new(&d, Clock::System);
        let c = again.load(&id).expect("load");
        assert_eq!((c["completed_count"].as_u64(), c["cursor"].as_str()), (Some(1), Some("p2")));
        again.close(&id).expect("close");
        assert_eq!(
            again.update(&id, &Progress::default()).expect_err("closed").code,
            codes::CONTRACT_CLOSED
        );
        assert_eq!(again.load("bp-../../etc").expect_err("bad").code, codes::CONTRACT_NOT_FOUND);
        std::fs::remove_dir_all(&d).expect("cleanup");
    }
}
