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

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Clock;
use crate::error::ToolError;
use crate::stores::journal::iso_of;
use crate::stores::{StoreGuard, StoreLock, read_json, write_json};

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

mod guard;
pub use guard::{GuardResult, check, clean_item};

/// A contract's terms, checked and normalized ([`validate_spec`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContractSpec {
    /// What the contract covers: one of [`SCOPES`].
    pub scope: String,
    /// How many items the work has, when known.
    pub expected_total: Option<u64>,
    /// The items the work has (distinct, cleaned), when listed.
    pub expected_items: Option<Vec<String>>,
    /// The fewest completed items that allow completion.
    pub min_completed: Option<u64>,
    /// Failed items do not block completion.
    pub allow_partial: bool,
    /// When an open-ended contract may complete ("no next page").
    pub stop_condition: String,
    /// The field of a result's items that names them (`url`, `page`).
    pub item_key: String,
    /// Where to resume.
    pub cursor: Option<String>,
}

/// An item that failed, with why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FailedItem {
    /// The item.
    pub item: String,
    /// Why it failed.
    pub reason: String,
    /// Whether retrying may help (when the agent said).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
}

/// A contract as stored in `progress-contracts/<contract_id>.json` and shown
/// (its JSON is the agent's view of it). Fields missing from a file written by
/// an older version read as their defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Contract {
    /// `bp-<timestamp>-<random>`.
    pub contract_id: String,
    /// The task run it belongs to.
    pub run_id: Option<String>,
    /// Its terms.
    #[serde(flatten)]
    pub spec: ContractSpec,
    /// The stop condition holds (the agent said so).
    pub stop_satisfied: bool,
    /// Completed items (the last [`ITEMS_KEPT`]).
    pub completed: Vec<String>,
    /// Failed items (the last [`ITEMS_KEPT`]).
    pub failed: Vec<FailedItem>,
    /// Completed items, all of them.
    pub completed_count: u64,
    /// Failed items, all of them.
    pub failed_count: u64,
    /// `completed` holds only the tail.
    pub completed_truncated: bool,
    /// `failed` holds only the tail.
    pub failed_truncated: bool,
    /// When an item, cursor or stop last moved.
    pub last_progress_at: Option<String>,
    /// Created (ISO 8601).
    pub created_at: String,
    /// Last changed (ISO 8601).
    pub updated_at: String,
    /// Its run ended: it takes no more progress.
    pub closed: bool,
}

/// The contracts under a data dir.
#[derive(Debug)]
pub struct Contracts {
    dir: PathBuf,
    clock: Clock,
    /// Serializes read-modify-write of contracts (across processes too).
    lock: StoreLock,
}

fn not_found(id: &str) -> ToolError {
    ToolError::contract_not_found(format!(
        "no bulk progress contract {id:?}; oc_bulk_progress_start creates one"
    ))
    .with("contract_id", id)
}

/// A contract spec as an agent writes it (`oc_bulk_progress_start`'s
/// arguments, `bulk_contract` of `oc_task_run_start`); `null` is absent.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecArgs {
    scope: Option<String>,
    expected_total: Option<u64>,
    expected_items: Option<Vec<String>>,
    min_completed: Option<u64>,
    allow_partial: Option<bool>,
    stop_condition: Option<String>,
    item_key: Option<String>,
    cursor: Option<String>,
    /// The run a contract is for (the host sets it; not a term).
    #[allow(dead_code)]
    run_id: Option<serde::de::IgnoredAny>,
}

/// Longest text of a spec's text field.
fn max_chars(field: &str) -> usize {
    match field {
        "stop_condition" => 500,
        "item_key" => 64,
        _ => 2000,
    }
}

/// What a spec's field must be (the error's words, for a wrong type or value).
fn rule(field: &str) -> String {
    match field {
        "scope" => format!("must be one of {SCOPES:?}"),
        "expected_total" | "min_completed" => format!("must be an integer from 0 to {MAX_TOTAL}"),
        "expected_items" => "must be an array of non-empty strings".into(),
        "allow_partial" => "must be a boolean".into(),
        "stop_condition" | "item_key" | "cursor" => {
            format!("must be a string of at most {} characters", max_chars(field))
        }
        _ => "is not a contract field".into(),
    }
}

/// Check a contract spec (`oc_bulk_progress_start`'s arguments, or `bulk_contract`
/// of a task run; `prefix` names it in errors) and return its normalized terms.
/// Every error is `INVALID_ARGUMENT` naming the field (with the prefix).
pub fn validate_spec(spec: &Value, prefix: &str) -> Result<ContractSpec, ToolError> {
    let fail = |k: &str, what: &dyn std::fmt::Display| {
        let f = format!("{prefix}{k}");
        ToolError::invalid_argument(&f, format!("`{f}` {what}"))
    };
    if !spec.is_object() {
        let whole = prefix.trim_end_matches('.');
        return Err(ToolError::invalid_argument(whole, "the contract must be an object"));
    }
    let args: SpecArgs = serde_path_to_error::deserialize(spec).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string();
        // The field at fault: the path's first step, or the unknown key.
        let key = match path.split(['.', '[']).next().filter(|k| !k.is_empty()) {
            Some(k) => k.to_owned(),
            None => message.split('`').nth(1).unwrap_or("args").to_owned(),
        };
        fail(&key, &rule(&key))
    })?;
    let uint = |k: &str, v: Option<u64>| match v {
        Some(n) if n > MAX_TOTAL => Err(fail(k, &rule(k))),
        v => Ok(v),
    };
    let text = |k: &str, v: Option<String>| match v {
        Some(s) if s.chars().count() > max_chars(k) => Err(fail(k, &rule(k))),
        v => Ok(v.map(|s| s.trim().to_owned())),
    };
    let scope = match args.scope {
        None => "task_run".to_owned(),
        Some(s) if SCOPES.contains(&s.as_str()) => s,
        Some(_) => return Err(fail("scope", &rule("scope"))),
    };
    let mut total = uint("expected_total", args.expected_total)?;
    let min = uint("min_completed", args.min_completed)?;
    let items = match args.expected_items {
        None => None,
        Some(a) if a.len() > MAX_EXPECTED_ITEMS => {
            let n = a.len();
            return Err(fail(
                "expected_items",
                &format!(
                    "lists {n} items, over the {MAX_EXPECTED_ITEMS} limit; give expected_total instead"
                ),
            ));
        }
        Some(a) if a.iter().any(|s| s.trim().is_empty()) => {
            return Err(fail("expected_items", &rule("expected_items")));
        }
        Some(a) => {
            let mut seen: Vec<String> = Vec::with_capacity(a.len());
            for s in a.iter().map(|s| clean_item(s)) {
                if !seen.contains(&s) {
                    seen.push(s);
                }
            }
            Some(seen)
        }
    };
    if let Some(items) = &items {
        let n = items.len() as u64;
        match total {
            None => total = Some(n),
            Some(t) if t != n => {
                let why = format!("is {t} but expected_items lists {n} distinct items");
                return Err(fail("expected_total", &why));
            }
            Some(_) => {}
        }
    }
    if let (Some(m), Some(t)) = (min, total)
        && m > t
    {
        return Err(fail("min_completed", &format!("({m}) is more than expected_total ({t})")));
    }
    let stop = text("stop_condition", args.stop_condition)?.unwrap_or_default();
    if total.is_none() && stop.is_empty() {
        let f = format!("{prefix}stop_condition");
        return Err(ToolError::invalid_argument(
            &f,
            format!(
                "with no expected_total or expected_items, `{f}` is required (e.g. \"no next page\"): it is the only way such a contract can complete"
            ),
        ));
    }
    let key = text("item_key", args.item_key)?.filter(|k| !k.is_empty());
    Ok(ContractSpec {
        scope,
        expected_total: total,
        expected_items: items,
        min_completed: min,
        allow_partial: args.allow_partial.unwrap_or(false),
        stop_condition: stop,
        item_key: key.unwrap_or_else(|| "item".into()),
        cursor: text("cursor", args.cursor)?.filter(|c| !c.is_empty()),
    })
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

/// Record `p`'s items in item lists kept to their last [`ITEMS_KEPT`] entries
/// with true counts: an item counts once; a failed item that completes moves
/// over; failing a completed item changes nothing. Whether anything was added.
pub(crate) fn record_items(
    p: &Progress,
    completed: &mut Vec<String>,
    failed: &mut Vec<FailedItem>,
    completed_count: &mut u64,
    failed_count: &mut u64,
) -> bool {
    let mut added = false;
    for item in &p.completed {
        let item = clean_item(item);
        if item.is_empty() {
            continue;
        }
        if let Some(i) = failed.iter().position(|f| f.item == item) {
            failed.remove(i);
            *failed_count = failed_count.saturating_sub(1);
        }
        if !completed.contains(&item) {
            completed.push(item);
            *completed_count += 1;
            added = true;
        }
    }
    for (item, reason, retryable) in &p.failed {
        let item = clean_item(item);
        if item.is_empty() || completed.contains(&item) {
            continue;
        }
        let entry = FailedItem { reason: clean_item(reason), retryable: *retryable, item };
        match failed.iter_mut().find(|x| x.item == entry.item) {
            Some(x) => *x = entry,
            None => {
                failed.push(entry);
                *failed_count += 1;
                added = true;
            }
        }
    }
    keep_tail(completed);
    keep_tail(failed);
    added
}

/// Apply `p` to contract `c` (see [`record_items`]).
pub fn apply(c: &mut Contract, p: &Progress, now: &str) {
    let mut progressed = record_items(
        p,
        &mut c.completed,
        &mut c.failed,
        &mut c.completed_count,
        &mut c.failed_count,
    );
    c.completed_truncated = c.completed_count as usize > ITEMS_KEPT;
    c.failed_truncated = c.failed_count as usize > ITEMS_KEPT;
    if let Some(cur) = &p.cursor {
        c.spec.cursor = Some(clean_item(cur));
        progressed = true;
    }
    if let Some(s) = p.stop_satisfied {
        c.stop_satisfied = s;
    }
    if progressed {
        c.last_progress_at = Some(now.to_owned());
    }
    c.updated_at = now.to_owned();
}

/// Keep the last [`ITEMS_KEPT`] entries of an item list.
fn keep_tail<T>(v: &mut Vec<T>) {
    let extra = v.len().saturating_sub(ITEMS_KEPT);
    v.drain(..extra);
}

/// A compact view: everything but the item lists (unless `items`), plus the guard.
pub fn view(c: &Contract, items: bool) -> Value {
    let mut v = serde_json::to_value(c).unwrap_or_default();
    if let Value::Object(m) = &mut v {
        if !items {
            for k in ["completed", "failed", "expected_items"] {
                m.remove(k);
            }
        }
        m.insert("completion_guard".into(), check(c).to_json());
    }
    v
}

impl Contracts {
    /// The contracts under `data_dir`.
    pub fn new(data_dir: &std::path::Path, clock: Clock) -> Self {
        let dir = data_dir.join("progress-contracts");
        Self { lock: StoreLock::new(dir.join(".lock")), dir, clock }
    }

    fn guard(&self) -> StoreGuard<'_> {
        self.lock.lock()
    }

    /// One contract.
    pub fn load(&self, id: &str) -> Result<Contract, ToolError> {
        if !crate::stores::valid_id(id, "bp-") {
            return Err(not_found(id));
        }
        let file = self.dir.join(format!("{id}.json"));
        read_json(&file, &format!("bulk progress contract {id}"))
            .map_err(|e| e.with("contract_id", id))?
            .ok_or_else(|| not_found(id))
    }

    fn save(&self, c: &Contract) -> Result<(), ToolError> {
        let id = &c.contract_id;
        write_json(&self.dir.join(format!("{id}.json")), c, &format!("bulk progress contract {id}"))
    }

    /// Create a contract from a validated spec (see [`validate_spec`]).
    pub fn create(&self, spec: ContractSpec, run_id: Option<&str>) -> Result<Contract, ToolError> {
        let _g = self.guard();
        let now = iso_of(self.clock.now_ms());
        let mut raw = [0u8; 4];
        let _ = getrandom::fill(&mut raw);
        let stamp: String = now.chars().filter(char::is_ascii_digit).take(14).collect();
        let c = Contract {
            contract_id: format!("bp-{stamp}-{}", data_encoding::HEXLOWER.encode(&raw)),
            run_id: run_id.map(str::to_owned),
            spec,
            created_at: now.clone(),
            updated_at: now,
            ..Contract::default()
        };
        self.save(&c)?;
        Ok(c)
    }

    /// Record progress. A closed contract (its run finished) refuses.
    pub fn update(&self, id: &str, p: &Progress) -> Result<Contract, ToolError> {
        let _g = self.guard();
        let mut c = self.load(id)?;
        if c.closed {
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
        c.closed = true;
        c.updated_at = iso_of(self.clock.now_ms());
        self.save(&c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;
    use serde_json::json;

    fn contract(spec: Value) -> Contract {
        Contract { spec: validate_spec(&spec, "").expect("valid"), ..Contract::default() }
    }

    fn done(c: &mut Contract, items: &[&str]) {
        apply(
            c,
            &Progress {
                completed: items.iter().map(|s| s.to_string()).collect(),
                ..Progress::default()
            },
            "t",
        );
    }

    fn fail(c: &mut Contract, item: &str, retryable: Option<bool>) {
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
        assert_eq!(c.spec.expected_total, Some(3));
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
        assert_eq!(p.failed[0].item, "c");
        // A failed item that later completes moves to completed.
        done(&mut c, &["c"]);
        let g = check(&c);
        assert!(g.allowed);
        assert_eq!((g.completed_count, g.failed_count), (3, 0));
        // Failing an item already completed changes nothing.
        fail(&mut c, "a", None);
        assert_eq!(c.failed_count, 0);
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
        assert_eq!(c.completed_count, 1200);
        assert_eq!(c.completed.len(), ITEMS_KEPT);
        assert_eq!(c.completed[0], "item-700", "the tail is kept");
        assert!(c.completed_truncated);
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
            assert_eq!(e.code, crate::error::Code::InvalidArgument);
            assert_eq!(e.details["field"], field, "{spec}");
        }
        assert_eq!(
            validate_spec(&json!([1]), "bulk_contract.").expect_err("array").details["field"],
            "bulk_contract"
        );
        // The message says what the field must be, in the same words for a
        // wrong type and a value out of range, with the spec's prefix.
        for (spec, message) in [
            (
                json!({"expected_total": -1}),
                "`bulk_contract.expected_total` must be an integer from 0 to 1000000",
            ),
            (
                json!({"expected_total": 2_000_000}),
                "`bulk_contract.expected_total` must be an integer from 0 to 1000000",
            ),
            (
                json!({"expected_total": 1, "colour": "red"}),
                "`bulk_contract.colour` is not a contract field",
            ),
            (
                json!({"expected_items": ["a", 5]}),
                "`bulk_contract.expected_items` must be an array of non-empty strings",
            ),
            (
                json!({"expected_items": ["a", " "]}),
                "`bulk_contract.expected_items` must be an array of non-empty strings",
            ),
            (
                json!({"stop_condition": "x".repeat(501)}),
                "`bulk_contract.stop_condition` must be a string of at most 500 characters",
            ),
        ] {
            let e = validate_spec(&spec, "bulk_contract.").expect_err(&spec.to_string());
            assert_eq!(e.message, message, "{spec}");
        }
        // `null` is absent; `run_id` is the host's, not a term.
        let s = validate_spec(&json!({"expected_total": null, "expected_items": ["a", "a", "b"], "run_id": "run-1", "cursor": null}), "")
            .expect("valid");
        assert_eq!(
            (s.expected_total, s.expected_items.as_deref().map(<[String]>::len)),
            (Some(2), Some(2))
        );
    }

    #[test]
    fn a_contract_file_of_the_previous_version_reads() {
        // As the hand-written writer of 0.x stored it: every key, sorted.
        let old = json!({
            "allow_partial": false, "closed": false, "completed": ["a"], "completed_count": 1,
            "completed_truncated": false, "contract_id": "bp-20261126000000-0a0b0c0d",
            "created_at": "2026-11-26T00:00:00.000Z", "cursor": null, "expected_items": ["a", "b", "c"],
            "expected_total": 3, "failed": [{"item": "b", "reason": "404", "retryable": true}],
            "failed_count": 1, "failed_truncated": false, "item_key": "url",
            "last_progress_at": "2026-11-26T00:00:01.000Z", "min_completed": null, "run_id": null,
            "scope": "task_run", "stop_condition": "", "stop_satisfied": false,
            "updated_at": "2026-11-26T00:00:01.000Z"
        });
        let c: Contract = serde_json::from_value(old.clone()).expect("reads");
        assert_eq!(
            (c.completed_count, c.failed[0].retryable, c.spec.item_key.as_str()),
            (1, Some(true), "url")
        );
        assert_eq!(check(&c).missing_items, vec!["c"]);
        // And it writes back the same keys and values.
        assert_eq!(serde_json::to_value(&c).expect("json"), old);
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
        let id = c.contract_id.clone();
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
        assert_eq!((c.completed_count, c.spec.cursor.as_deref()), (1, Some("p2")));
        again.close(&id).expect("close");
        assert_eq!(
            again.update(&id, &Progress::default()).expect_err("closed").code,
            Code::ContractClosed
        );
        assert_eq!(again.load("bp-../../etc").expect_err("bad").code, Code::ContractNotFound);
        std::fs::remove_dir_all(&d).expect("cleanup");
    }
}
