//! Task runs (`oc_task_run_*`): an agent's unit of work with a goal, progress and
//! an explicit end. State outlives plugin calls and restarts:
//! `<data-dir>/task-runs/<run_id>/meta.json` (written atomically on every change)
//! and `events.jsonl` (one line per change).
//!
//! States: `PENDING` → `RUNNING` ⇄ `NEEDS_HELP` → `COMPLETED` | `FAILED` |
//! `CANCELLED`. A terminal run is immutable; any other transition is refused with
//! `INVALID_TRANSITION` and changes nothing.

use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use crate::Clock;
use crate::bulk::{self, Contracts, Progress};
use crate::error::ToolError;
use crate::journal::iso_of;
use crate::store::{JsonlFile, read_jsonl, write_atomic};

/// Error codes (the registry of `ochre-protocol`).
pub use ochre_protocol::codes;

/// Items kept in a run's completed / failed lists (the tail; counts stay true).
pub const ITEMS_KEPT: usize = bulk::ITEMS_KEPT;

const TERMINAL: &[&str] = &["COMPLETED", "FAILED", "CANCELLED"];

/// The task runs under a data dir.
#[derive(Debug)]
pub struct TaskRuns {
    dir: PathBuf,
    clock: Clock,
    /// Serializes read-modify-write of runs.
    lock: Mutex<()>,
    /// Bulk progress contracts (of runs and standalone).
    pub contracts: Contracts,
}

fn not_found(id: &str) -> ToolError {
    ToolError::run_not_found(format!("no task run {id:?}; oc_task_run_list shows the runs"))
        .with("run_id", id)
}

fn transition_ok(id: &str, run: &Map<String, Value>, to: &str) -> Result<(), ToolError> {
    let from = run["status"].as_str().unwrap_or("PENDING");
    let ok = match (from, to) {
        (f, _) if TERMINAL.contains(&f) => false,
        (_, t) if TERMINAL.contains(&t) => true,
        ("PENDING" | "RUNNING" | "NEEDS_HELP", "RUNNING" | "NEEDS_HELP") => true,
        _ => false,
    };
    if ok {
        return Ok(());
    }
    Err(ToolError::invalid_transition(if TERMINAL.contains(&from) {
        format!("task run {id} is {from}: a finished run cannot change")
    } else {
        format!("task run {id} cannot go from {from} to {to}")
    })
    .with("run_id", id)
    .with("status", from))
}

/// Text as a run keeps it: capped, credentials in URLs redacted.
fn clip(s: &str) -> String {
    bulk::clean_item(s)
}

impl TaskRuns {
    /// The runs under `data_dir`.
    pub fn new(data_dir: &std::path::Path, clock: Clock) -> Self {
        Self {
            dir: data_dir.join("task-runs"),
            clock,
            lock: Mutex::new(()),
            contracts: Contracts::new(data_dir, clock),
        }
    }

    fn guard(&self) -> std::sync::MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn load(&self, id: &str) -> Result<Map<String, Value>, ToolError> {
        if !crate::store::valid_id(id, "run-") {
            return Err(not_found(id));
        }
        let file = self.dir.join(id).join("meta.json");
        crate::store::read_object(&file, &format!("task run {id}"))
            .map_err(|e| e.with("run_id", id))?
            .ok_or_else(|| not_found(id))
    }

    fn save(&self, run: &Map<String, Value>, event: &str, body: Value) -> Result<(), ToolError> {
        let id = run["run_id"].as_str().unwrap_or_default();
        let dir = self.dir.join(id);
        let fail = |e: std::io::Error| {
            ToolError::storage_failed(format!("cannot save task run {id}: {e}"))
        };
        std::fs::create_dir_all(&dir).map_err(fail)?;
        let ev = json!({"ts": iso_of(self.clock.now_ms()), "event": event, "status": run["status"], "body": body});
        let log = JsonlFile::new(dir.join("events.jsonl"));
        log.append(&ev).and_then(|()| log.sync()).map_err(fail)?;
        let mut bytes = serde_json::to_vec_pretty(&Value::Object(run.clone()))
            .map_err(|e| fail(std::io::Error::other(e)))?;
        bytes.push(b'\n');
        write_atomic(&dir.join("meta.json"), &bytes).map_err(fail)
    }

    fn new_id(&self) -> String {
        let mut raw = [0u8; 4];
        let _ = getrandom::fill(&mut raw);
        let stamp: String =
            iso_of(self.clock.now_ms()).chars().filter(char::is_ascii_digit).take(14).collect();
        format!("run-{stamp}-{}", data_encoding::HEXLOWER.encode(&raw))
    }

    /// Start a run (`PENDING`), with a bulk progress contract (a spec checked by
    /// [`bulk::validate_spec`]) and the intent guard's `execution` record.
    pub fn start(
        &self,
        goal: &str,
        criteria: Option<&str>,
        page_url: Option<&str>,
        contract: Option<Map<String, Value>>,
        execution: Value,
    ) -> Result<Value, ToolError> {
        let _g = self.guard();
        let now = iso_of(self.clock.now_ms());
        let id = self.new_id();
        let contract_id = match contract {
            Some(spec) => Some(self.contracts.create(spec, Some(&id))?["contract_id"].clone()),
            None => None,
        };
        let mut run = Map::new();
        run.insert("run_id".into(), json!(id));
        run.insert("goal".into(), json!(goal));
        run.insert("success_criteria".into(), json!(criteria));
        run.insert("page_url".into(), json!(page_url));
        run.insert("status".into(), json!("PENDING"));
        run.insert("created_at".into(), json!(now));
        run.insert("updated_at".into(), json!(now));
        run.insert("progress_summary".into(), Value::Null);
        run.insert("current_cursor".into(), Value::Null);
        run.insert("completed_items".into(), json!([]));
        run.insert("failed_items".into(), json!([]));
        run.insert("completed_count".into(), json!(0));
        run.insert("failed_count".into(), json!(0));
        run.insert("checkpoints".into(), json!(0));
        run.insert("bulk_contract_id".into(), json!(contract_id));
        run.insert("execution".into(), execution);
        self.save(
            &run,
            "started",
            json!({"goal": goal, "bulk_contract_id": contract_id, "intent": run["execution"]["intent"]}),
        )?;
        Ok(self.with_contract(run, false))
    }

    /// Change a run: `f` may edit it and returns the event name and body; the
    /// state moves to `to` (checked against the state machine).
    fn change(
        &self,
        id: &str,
        to: &str,
        f: impl FnOnce(&mut Map<String, Value>) -> Result<(String, Value), ToolError>,
    ) -> Result<Map<String, Value>, ToolError> {
        let _g = self.guard();
        let mut run = self.load(id)?;
        transition_ok(id, &run, to)?;
        let (event, body) = f(&mut run)?;
        self.finish_change(&mut run, to, &event, body)?;
        Ok(run)
    }

    fn finish_change(
        &self,
        run: &mut Map<String, Value>,
        to: &str,
        event: &str,
        body: Value,
    ) -> Result<(), ToolError> {
        run.insert("status".into(), json!(to));
        run.insert("updated_at".into(), json!(iso_of(self.clock.now_ms())));
        if TERMINAL.contains(&to) {
            if let Some(cid) = run["bulk_contract_id"].as_str() {
                self.contracts.close(cid)?;
            }
            // A guard's reason stays: a blocked call whatever the run ends in,
            // a failed intent check unless the run completed after all.
            let reason = match (to, run["execution"]["stop_reason"].as_str()) {
                (_, Some(r @ "tool_policy_blocked")) => r.to_owned(),
                (_, Some(r @ "intent_execution_failed")) if to != "COMPLETED" => r.to_owned(),
                ("COMPLETED", _) => "completed".to_owned(),
                (other, _) => other.to_lowercase(),
            };
            if let Some(Value::Object(ex)) = run.get_mut("execution") {
                ex.insert("stop_reason".into(), json!(reason));
            }
        }
        self.save(run, event, body)
    }

    /// The run as returned to the agent: with its contract (compact, or with
    /// the item lists).
    fn with_contract(&self, run: Map<String, Value>, items: bool) -> Value {
        let mut v = Value::Object(run);
        if let Some(cid) = v["bulk_contract_id"].as_str()
            && let Ok(c) = self.contracts.load(cid)
        {
            v["bulk_contract"] = bulk::view(&c, items);
        }
        v
    }

    /// Progress: summary, items done or failed, cursor (also recorded in the
    /// run's contract). Moves to `RUNNING`.
    pub fn update(&self, id: &str, args: &Value) -> Result<Value, ToolError> {
        let run = self.change(id, "RUNNING", |run| {
            if let Some(s) = args["progress_summary"].as_str() {
                run.insert("progress_summary".into(), json!(clip(s)));
            }
            if !args["current_cursor"].is_null() {
                run.insert("current_cursor".into(), args["current_cursor"].clone());
            }
            let mut completed: Vec<Value> =
                run["completed_items"].as_array().cloned().unwrap_or_default();
            let mut failed: Vec<Value> =
                run["failed_items"].as_array().cloned().unwrap_or_default();
            let mut done_n = run["completed_count"].as_u64().unwrap_or(0);
            let mut fail_n = run["failed_count"].as_u64().unwrap_or(0);
            for item in args["completed_items"].as_array().into_iter().flatten() {
                let Some(item) = item.as_str().map(clip) else {
                    continue;
                };
                // A failed item that now completes moves to completed.
                if let Some(i) = failed.iter().position(|f| f["item"] == item.as_str()) {
                    failed.remove(i);
                    fail_n = fail_n.saturating_sub(1);
                }
                if !completed.iter().any(|c| c == item.as_str()) {
                    completed.push(json!(item));
                    done_n += 1;
                }
            }
            for f in args["failed_items"].as_array().into_iter().flatten() {
                let Some(item) = f["item"].as_str().map(clip) else {
                    continue;
                };
                let reason = clip(f["reason"].as_str().unwrap_or(""));
                if completed.iter().any(|c| c == item.as_str()) {
                    continue;
                }
                match failed.iter_mut().find(|x| x["item"] == item.as_str()) {
                    Some(x) => x["reason"] = json!(reason),
                    None => {
                        failed.push(json!({"item": item, "reason": reason}));
                        fail_n += 1;
                    }
                }
            }
            let cut = |v: &mut Vec<Value>| {
                let extra = v.len().saturating_sub(ITEMS_KEPT);
                v.drain(..extra);
            };
            cut(&mut completed);
            cut(&mut failed);
            if let Some(cid) = run["bulk_contract_id"].as_str() {
                let p = Progress::from_args(args);
                if !p.is_empty() {
                    self.contracts.update(cid, &p)?;
                }
            }
            run.insert("completed_items".into(), json!(completed));
            run.insert("failed_items".into(), json!(failed));
            run.insert("completed_count".into(), json!(done_n));
            run.insert("failed_count".into(), json!(fail_n));
            run.insert(
                "items_truncated".into(),
                json!(done_n as usize > ITEMS_KEPT || fail_n as usize > ITEMS_KEPT),
            );
            Ok((
                "updated".into(),
                json!({
                    "progress_summary": args["progress_summary"],
                    "completed": args["completed_items"].as_array().map_or(0, Vec::len),
                    "failed": args["failed_items"].as_array().map_or(0, Vec::len),
                    "current_cursor": args["current_cursor"],
                }),
            ))
        })?;
        Ok(self.with_contract(run, false))
    }

    /// A checkpoint summary. Moves to `RUNNING`.
    pub fn checkpoint(&self, id: &str, summary: &str) -> Result<Value, ToolError> {
        let run = self.change(id, "RUNNING", |run| {
            let n = run["checkpoints"].as_u64().unwrap_or(0) + 1;
            run.insert("checkpoints".into(), json!(n));
            run.insert("last_checkpoint".into(), json!(clip(summary)));
            Ok(("checkpoint".into(), json!({"summary": clip(summary)})))
        })?;
        Ok(self.with_contract(run, false))
    }

    /// The agent needs a person. Moves to `NEEDS_HELP`.
    pub fn needs_help(
        &self,
        id: &str,
        reason: &str,
        hint: Option<&str>,
    ) -> Result<Value, ToolError> {
        let run = self.change(id, "NEEDS_HELP", |run| {
            run.insert(
                "needs_help".into(),
                json!({"reason": clip(reason), "resume_hint": hint.map(clip)}),
            );
            Ok((
                "needs_help".into(),
                json!({"reason": clip(reason), "resume_hint": hint.map(clip)}),
            ))
        })?;
        Ok(self.with_contract(run, false))
    }

    /// End the run. `COMPLETED` passes two guards first: the intent guard (a
    /// browser-first run with no successful browser call is refused with
    /// `intent_execution_failed`) and the bulk completion guard (an incomplete
    /// contract is refused with `bulk_completion_guard_failed` unless
    /// `force_reason` is given). A refusal changes the run's status in nothing; it
    /// is recorded in its events (and the intent's in `execution.stop_reason`).
    pub fn complete(
        &self,
        id: &str,
        status: &str,
        force_reason: Option<&str>,
    ) -> Result<Value, ToolError> {
        let _g = self.guard();
        let mut run = self.load(id)?;
        transition_ok(id, &run, status)?;
        let mut forced_guard = None;
        if status == "COMPLETED" {
            let ex = &run["execution"];
            if ex["intent"]["label"] == "browser_access"
                && ex["policy"]["fail_task_if_unmet"] == json!(true)
                && ex["successful_browser_calls"].as_u64().unwrap_or(0) == 0
            {
                // A blocked call stays the reason the run stopped.
                if let Some(Value::Object(e)) = run.get_mut("execution")
                    && e.get("stop_reason").and_then(Value::as_str) != Some("tool_policy_blocked")
                {
                    e.insert("stop_reason".into(), json!("intent_execution_failed"));
                }
                run.insert("updated_at".into(), json!(iso_of(self.clock.now_ms())));
                let why =
                    "the goal asks for the browser but no browser tool call succeeded in this run";
                self.save(
                    &run,
                    "completion_refused",
                    json!({"stop_reason": "intent_execution_failed", "reason": why}),
                )?;
                return Err(ToolError::intent_execution_failed(format!("intent_execution_failed: {why}; do the task with the browser tools, or end the run as FAILED"),
                )
                .with("stop_reason", "intent_execution_failed")
                .with("run_id", id));
            }
            if let Some(cid) = run["bulk_contract_id"].as_str().map(str::to_owned) {
                let c = self.contracts.load(&cid)?;
                let g = bulk::check(&c);
                if !g.allowed {
                    match force_reason {
                        Some(_) => forced_guard = Some(g.to_json()),
                        None => {
                            let err = g.to_error(&cid).with("run_id", id);
                            self.save(
                                &run,
                                "completion_refused",
                                json!({"guard": "bulk_completion_guard_failed", "result": g.to_json()}),
                            )?;
                            return Err(err);
                        }
                    }
                }
            }
        }
        run.insert("ended_at".into(), json!(iso_of(self.clock.now_ms())));
        if let Some(r) = force_reason {
            run.insert("forced".into(), json!({"reason": clip(r), "guard": forced_guard}));
        }
        let body = json!({"status": status, "force_reason": force_reason});
        self.finish_change(&mut run, status, "completed", body)?;
        Ok(self.with_contract(run, true))
    }

    /// A browser-first run that cannot run at all (preflight): it ends `FAILED`
    /// with stop reason `intent_execution_failed`.
    pub fn fail_preflight(&self, id: &str, why: &str) -> Result<Value, ToolError> {
        let _g = self.guard();
        let mut run = self.load(id)?;
        if let Some(Value::Object(e)) = run.get_mut("execution") {
            e.insert("stop_reason".into(), json!("intent_execution_failed"));
        }
        run.insert("ended_at".into(), json!(iso_of(self.clock.now_ms())));
        self.finish_change(
            &mut run,
            "FAILED",
            "preflight_failed",
            json!({"stop_reason": "intent_execution_failed", "reason": why}),
        )?;
        Ok(Value::Object(run))
    }

    /// Give an unfinished run without one a bulk progress contract.
    pub fn attach_contract(
        &self,
        id: &str,
        spec: Map<String, Value>,
    ) -> Result<Map<String, Value>, ToolError> {
        let _g = self.guard();
        let mut run = self.load(id)?;
        transition_ok(id, &run, "RUNNING")?;
        if let Some(c) = run["bulk_contract_id"].as_str() {
            return Err(ToolError::invalid_transition(format!(
                "task run {id} already has bulk contract {c}"
            ))
            .with("run_id", id)
            .with("contract_id", c));
        }
        let c = self.contracts.create(spec, Some(id))?;
        run.insert("bulk_contract_id".into(), c["contract_id"].clone());
        run.insert("updated_at".into(), json!(iso_of(self.clock.now_ms())));
        self.save(&run, "contract_attached", json!({"bulk_contract_id": c["contract_id"]}))?;
        Ok(c)
    }

    /// Change an active run's `execution` record in place (no status change);
    /// `f` returns the event to log, if any. `None` when the run is missing or
    /// finished.
    pub fn touch_execution(
        &self,
        id: &str,
        f: impl FnOnce(&mut Map<String, Value>) -> Option<(String, Value)>,
    ) -> Option<Map<String, Value>> {
        let _g = self.guard();
        let mut run = self.load(id).ok()?;
        if TERMINAL.contains(&run["status"].as_str().unwrap_or("")) {
            return None;
        }
        let Some(Value::Object(ex)) = run.get_mut("execution") else {
            return None;
        };
        let before = ex.clone();
        let event = f(ex);
        let ex = ex.clone();
        if event.is_none() && ex == before {
            return Some(ex);
        }
        run.insert("updated_at".into(), json!(iso_of(self.clock.now_ms())));
        let saved = match event {
            Some((name, body)) => self.save(&run, &name, body),
            None => self.save_meta(&run),
        };
        if let Err(e) = saved {
            tracing::error!(run = id, error = %e, "cannot save the task run");
        }
        Some(ex)
    }

    fn save_meta(&self, run: &Map<String, Value>) -> Result<(), ToolError> {
        let id = run["run_id"].as_str().unwrap_or_default();
        let mut bytes = serde_json::to_vec_pretty(&Value::Object(run.clone())).unwrap_or_default();
        bytes.push(b'\n');
        write_atomic(&self.dir.join(id).join("meta.json"), &bytes)
            .map_err(|e| ToolError::storage_failed(format!("cannot save task run {id}: {e}")))
    }

    /// One run, with its events if asked.
    pub fn get(&self, id: &str, events: bool) -> Result<Value, ToolError> {
        let run = self.load(id)?;
        let mut v = self.with_contract(run, true);
        if events {
            v["events"] =
                json!(read_jsonl(&self.dir.join(id).join("events.jsonl")).unwrap_or_default());
        }
        Ok(v)
    }

    /// The newest runs (by creation), optionally of one status.
    pub fn list(&self, status: Option<&str>, limit: usize) -> Vec<Value> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut runs: Vec<Map<String, Value>> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| self.load(&e.file_name().to_string_lossy()).ok())
            .filter(|r| status.is_none_or(|s| r["status"] == s))
            .collect();
        runs.sort_by(|a, b| {
            b["created_at"]
                .as_str()
                .cmp(&a["created_at"].as_str())
                .then_with(|| b["run_id"].as_str().cmp(&a["run_id"].as_str()))
        });
        runs.truncate(limit);
        runs.into_iter()
            .map(|r| {
                json!({
                    "run_id": r["run_id"], "goal": r["goal"], "status": r["status"],
                    "created_at": r["created_at"], "updated_at": r["updated_at"],
                    "completed_count": r["completed_count"], "failed_count": r["failed_count"],
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_machine_holds_and_terminal_runs_are_immutable() {
        let d = std::env::temp_dir().join(format!("ochre-runs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let runs = TaskRuns::new(&d, Clock::System);
        let r = runs.start("collect prices", None, None, None, json!({})).expect("start");
        let id = r["run_id"].as_str().expect("id").to_owned();
        assert_eq!(r["status"], "PENDING");
        let r = runs
            .update(&id, &json!({"completed_items": ["a", "b"], "failed_items": [{"item": "c", "reason": "404"}]}))
            .expect("update");
        assert_eq!(
            (r["status"].as_str(), r["completed_count"].as_u64(), r["failed_count"].as_u64()),
            (Some("RUNNING"), Some(2), Some(1))
        );
        // Duplicates do not count twice; a failed item that completes moves over.
        let r = runs.update(&id, &json!({"completed_items": ["a", "c"]})).expect("update");
        assert_eq!((r["completed_count"].as_u64(), r["failed_count"].as_u64()), (Some(3), Some(0)));
        assert_eq!(runs.needs_help(&id, "captcha", None).expect("help")["status"], "NEEDS_HELP");
        assert_eq!(runs.checkpoint(&id, "resumed").expect("cp")["status"], "RUNNING");
        assert_eq!(runs.complete(&id, "COMPLETED", None).expect("done")["status"], "COMPLETED");
        for e in [
            runs.update(&id, &json!({})).expect_err("update"),
            runs.needs_help(&id, "x", None).expect_err("help"),
            runs.complete(&id, "FAILED", None).expect_err("again"),
        ] {
            assert_eq!(e.code, codes::INVALID_TRANSITION);
        }
        let got = runs.get(&id, true).expect("get");
        assert_eq!(got["events"].as_array().map(Vec::len), Some(6));
        // A new store over the same dir (a restart) sees the same run.
        let again = TaskRuns::new(&d, Clock::System);
        assert_eq!(again.get(&id, false).expect("get")["status"], "COMPLETED");
        assert_eq!(again.list(Some("COMPLETED"), 10).len(), 1);
        assert_eq!(again.get("run-../../x", false).expect_err("bad").code, codes::RUN_NOT_FOUND);
        std::fs::remove_dir_all(&d).expect("cleanup");
    }
}
