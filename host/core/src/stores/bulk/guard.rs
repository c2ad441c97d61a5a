//! The completion guard: whether a contract's work may be called done, and
//! what is missing; item text as a contract keeps it (capped, credentials in
//! URLs redacted).

use ochre_protocol::tool::is_secret_query_key;
use serde_json::{Map, Value, json};

use crate::error::ToolError;

use super::{Contract, ITEM_CHARS, MISSING_SHOWN};

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
pub fn check(c: &Contract) -> GuardResult {
    let (done, failed) = (c.completed_count, c.failed_count);
    let (total, min) = (c.spec.expected_total, c.spec.min_completed);
    let partial = c.spec.allow_partial || min.is_some();
    let stop = c.spec.stop_condition.trim();
    let satisfied = c.stop_satisfied;
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
fn missing(c: &Contract) -> Vec<String> {
    let Some(expected) = &c.spec.expected_items else {
        return Vec::new();
    };
    expected
        .iter()
        .filter(|i| !c.completed.contains(i) && !c.failed.iter().any(|f| &f.item == *i))
        .take(MISSING_SHOWN)
        .cloned()
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
                    Some((k, _)) if is_secret_query_key(k) => {
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
