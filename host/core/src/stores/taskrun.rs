//! Task runs (`oc_task_run_*`): an agent's unit of work with a goal, progress and
//! an explicit end. State outlives plugin calls and restarts:
//! `<data-dir>/task-runs/<run_id>/meta.json` (written atomically on every change)
//! and `events.jsonl` (one line per change).
//!
//! States: `PENDING` → `RUNNING` ⇄ `NEEDS_HELP` → `COMPLETED` | `FAILED` |
//! `CANCELLED`. A terminal run is immutable; any other transition is refused with
//! `INVALID_TRANSITION` and changes nothing.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Clock;
use crate::error::ToolError;
use crate::stores::bulk::{self, Contract, ContractSpec, Contracts, FailedItem, Progress};
use crate::stores::journal::iso_of;
use crate::stores::{JsonlFile, StoreGuard, StoreLock, read_json, read_jsonl, write_json};

/// Items kept in a run's completed / failed lists (the tail; counts stay true).
pub const ITEMS_KEPT: usize = bulk::ITEMS_KEPT;

ochre_protocol::named_enum! {
    /// Where a run is.
    #[derive(Default, schemars::JsonSchema)]
    #[schemars(inline)]
    pub enum Status {
        /// Started, no progress yet.
        #[default]
        Pending = "PENDING",
        /// Progressing.
        Running = "RUNNING",
        /// Waiting for a person.
        NeedsHelp = "NEEDS_HELP",
        /// Done (its guards passed, or were forced).
        Completed = "COMPLETED",
        /// Ended without success.
        Failed = "FAILED",
        /// Ended on purpose.
        Cancelled = "CANCELLED",
    }
}

impl Status {
    /// A run in it is finished and cannot change.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

/// What the intent guard keeps of a run: the goal's intent, the policy it
/// applies, its counts, and why the run stopped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Execution {
    /// The goal's intent verdict (`label`, `confidence`, ...).
    pub intent: Value,
    /// The guard's policy for the run (`null`: not guarded).
    pub policy: Value,
    /// Browser tool calls that succeeded.
    pub successful_browser_calls: u64,
    /// Network-adjacent calls let through.
    pub network_adjacent_calls: u64,
    /// Calls the policy blocked.
    pub blocked_calls: u64,
    /// Why the run stopped (`tool_policy_blocked`, `intent_execution_failed`,
    /// `completed`, `failed`, `cancelled`).
    pub stop_reason: Option<String>,
}

/// A person's help, asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NeedsHelp {
    /// Why.
    pub reason: String,
    /// How to resume.
    pub resume_hint: Option<String>,
}

/// A forced completion: why, and what the guard said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Forced {
    /// The agent's reason.
    pub reason: String,
    /// The bulk completion guard's result it overrode (`null`: none).
    pub guard: Option<Value>,
}

/// A task run as stored in `task-runs/<run_id>/meta.json` and shown (its JSON
/// is the agent's view of it). Fields missing from a file written by an older
/// version read as their defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskRun {
    /// `run-<timestamp>-<random>`.
    pub run_id: String,
    /// What the agent set out to do.
    pub goal: String,
    /// How it will know it is done.
    pub success_criteria: Option<String>,
    /// Where it starts.
    pub page_url: Option<String>,
    /// Where it is.
    pub status: Status,
    /// Created (ISO 8601).
    pub created_at: String,
    /// Last changed (ISO 8601).
    pub updated_at: String,
    /// The last summary of progress.
    pub progress_summary: Option<String>,
    /// Where to resume (any JSON the agent gave).
    pub current_cursor: Value,
    /// Completed items (the last [`ITEMS_KEPT`]).
    pub completed_items: Vec<String>,
    /// Failed items (the last [`ITEMS_KEPT`]).
    pub failed_items: Vec<FailedItem>,
    /// Completed items, all of them.
    pub completed_count: u64,
    /// Failed items, all of them.
    pub failed_count: u64,
    /// An item list holds only its tail.
    pub items_truncated: bool,
    /// Checkpoints recorded.
    pub checkpoints: u64,
    /// The last checkpoint's summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_checkpoint: Option<String>,
    /// The help asked for, when the run needed a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs_help: Option<NeedsHelp>,
    /// Its bulk progress contract.
    pub bulk_contract_id: Option<String>,
    /// The intent guard's record.
    pub execution: Execution,
    /// When it finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// A completion forced past its guard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forced: Option<Forced>,
}

/// The task runs under a data dir.
#[derive(Debug)]
pub struct TaskRuns {
    dir: PathBuf,
    clock: Clock,
    /// Serializes read-modify-write of runs (across processes too).
    lock: StoreLock,
    /// Bulk progress contracts (of runs and standalone).
    pub contracts: Contracts,
}

fn not_found(id: &str) -> ToolError {
    ToolError::run_not_found(format!("no task run {id:?}; oc_task_run_list shows the runs"))
        .with("run_id", id)
}

fn transition_ok(id: &str, run: &TaskRun, to: Status) -> Result<(), ToolError> {
    use Status::{NeedsHelp, Pending, Running};
    let from = run.status;
    let ok = match (from, to) {
        (f, _) if f.is_terminal() => false,
        (_, t) if t.is_terminal() => true,
        (Pending | Running | NeedsHelp, Running | NeedsHelp) => true,
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let (from, to) = (from.as_str(), to.as_str());
    Err(ToolError::invalid_transition(if run.status.is_terminal() {
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
            lock: StoreLock::new(data_dir.join("task-runs").join(".lock")),
            contracts: Contracts::new(data_dir, clock),
        }
    }

    fn guard(&self) -> StoreGuard<'_> {
        self.lock.lock()
    }

    /// One run.
    pub fn load(&self, id: &str) -> Result<TaskRun, ToolError> {
        if !crate::stores::valid_id(id, "run-") {
            return Err(not_found(id));
        }
        let file = self.dir.join(id).join("meta.json");
        read_json(&file, &format!("task run {id}"))
            .map_err(|e| e.with("run_id", id))?
            .ok_or_else(|| not_found(id))
    }

    /// Save a run: its event appended (and synced) to `events.jsonl`, then
    /// `meta.json` replaced atomically.
    fn save(&self, run: &TaskRun, event: &str, body: Value) -> Result<(), ToolError> {
        let id = &run.run_id;
        let dir = self.dir.join(id);
        let fail = |e: std::io::Error| {
            ToolError::storage_failed(format!("cannot save task run {id}: {e}"))
        };
        std::fs::create_dir_all(&dir).map_err(fail)?;
        let ev = json!({"ts": iso_of(self.clock.now_ms()), "event": event, "status": run.status, "body": body});
        let log = JsonlFile::new(dir.join("events.jsonl"));
        log.append(&ev).and_then(|()| log.sync()).map_err(fail)?;
        self.save_meta(run)
    }

    fn save_meta(&self, run: &TaskRun) -> Result<(), ToolError> {
        let id = &run.run_id;
        write_json(&self.dir.join(id).join("meta.json"), run, &format!("task run {id}"))
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
        contract: Option<ContractSpec>,
        execution: Execution,
    ) -> Result<Value, ToolError> {
        let _g = self.guard();
        let now = iso_of(self.clock.now_ms());
        let id = self.new_id();
        let contract_id = match contract {
            Some(spec) => Some(self.contracts.create(spec, Some(&id))?.contract_id),
            None => None,
        };
        let run = TaskRun {
            run_id: id,
            goal: goal.to_owned(),
            success_criteria: criteria.map(str::to_owned),
            page_url: page_url.map(str::to_owned),
            created_at: now.clone(),
            updated_at: now,
            bulk_contract_id: contract_id,
            execution,
            ..TaskRun::default()
        };
        self.save(
            &run,
            "started",
            json!({"goal": goal, "bulk_contract_id": run.bulk_contract_id, "intent": run.execution.intent}),
        )?;
        Ok(self.with_contract(&run, false))
    }

    /// Change a run: `f` may edit it and returns the event name and body; the
    /// state moves to `to` (checked against the state machine).
    fn change(
        &self,
        id: &str,
        to: Status,
        f: impl FnOnce(&mut TaskRun) -> Result<(String, Value), ToolError>,
    ) -> Result<TaskRun, ToolError> {
        let _g = self.guard();
        let mut run = self.load(id)?;
        transition_ok(id, &run, to)?;
        let (event, body) = f(&mut run)?;
        self.finish_change(&mut run, to, &event, body)?;
        Ok(run)
    }

    fn finish_change(
        &self,
        run: &mut TaskRun,
        to: Status,
        event: &str,
        body: Value,
    ) -> Result<(), ToolError> {
        run.status = to;
        run.updated_at = iso_of(self.clock.now_ms());
        if to.is_terminal() {
            if let Some(cid) = &run.bulk_contract_id {
                self.contracts.close(cid)?;
            }
            // A guard's reason stays: a blocked call whatever the run ends in,
            // a failed intent check unless the run completed after all.
            let reason = match (to, run.execution.stop_reason.as_deref()) {
                (_, Some(r @ "tool_policy_blocked")) => r.to_owned(),
                (Status::Completed, _) => "completed".to_owned(),
                (_, Some(r @ "intent_execution_failed")) => r.to_owned(),
                (other, _) => other.as_str().to_lowercase(),
            };
            run.execution.stop_reason = Some(reason);
        }
        self.save(run, event, body)
    }

    /// The run as returned to the agent: with its contract (compact, or with
    /// the item lists).
    fn with_contract(&self, run: &TaskRun, items: bool) -> Value {
        let mut v = serde_json::to_value(run).unwrap_or_default();
        if let Some(cid) = &run.bulk_contract_id
            && let Ok(c) = self.contracts.load(cid)
        {
            v["bulk_contract"] = bulk::view(&c, items);
        }
        v
    }

    /// Progress: summary, items done or failed, cursor (also recorded in the
    /// run's contract). Moves to `RUNNING`.
    pub fn update(&self, id: &str, args: &Value) -> Result<Value, ToolError> {
        let run = self.change(id, Status::Running, |run| {
            if let Some(s) = args["progress_summary"].as_str() {
                run.progress_summary = Some(clip(s));
            }
            if !args["current_cursor"].is_null() {
                run.current_cursor = args["current_cursor"].clone();
            }
            let p = Progress::from_args(args);
            bulk::record_items(
                &p,
                &mut run.completed_items,
                &mut run.failed_items,
                &mut run.completed_count,
                &mut run.failed_count,
            );
            if let Some(cid) = &run.bulk_contract_id
                && !p.is_empty()
            {
                self.contracts.update(cid, &p)?;
            }
            run.items_truncated =
                run.completed_count as usize > ITEMS_KEPT || run.failed_count as usize > ITEMS_KEPT;
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
        Ok(self.with_contract(&run, false))
    }

    /// A checkpoint summary. Moves to `RUNNING`.
    pub fn checkpoint(&self, id: &str, summary: &str) -> Result<Value, ToolError> {
        let run = self.change(id, Status::Running, |run| {
            run.checkpoints += 1;
            run.last_checkpoint = Some(clip(summary));
            Ok(("checkpoint".into(), json!({"summary": clip(summary)})))
        })?;
        Ok(self.with_contract(&run, false))
    }

    /// The agent needs a person. Moves to `NEEDS_HELP`.
    pub fn needs_help(
        &self,
        id: &str,
        reason: &str,
        hint: Option<&str>,
    ) -> Result<Value, ToolError> {
        let run = self.change(id, Status::NeedsHelp, |run| {
            let help = NeedsHelp { reason: clip(reason), resume_hint: hint.map(clip) };
            let body = serde_json::to_value(&help).unwrap_or_default();
            run.needs_help = Some(help);
            Ok(("needs_help".into(), body))
        })?;
        Ok(self.with_contract(&run, false))
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
        status: Status,
        force_reason: Option<&str>,
    ) -> Result<Value, ToolError> {
        let _g = self.guard();
        let mut run = self.load(id)?;
        transition_ok(id, &run, status)?;
        let mut forced_guard = None;
        if status == Status::Completed {
            let ex = &mut run.execution;
            if ex.intent["label"] == "browser_access"
                && ex.policy["fail_task_if_unmet"] == json!(true)
                && ex.successful_browser_calls == 0
            {
                // A blocked call stays the reason the run stopped.
                if ex.stop_reason.as_deref() != Some("tool_policy_blocked") {
                    ex.stop_reason = Some("intent_execution_failed".into());
                }
                run.updated_at = iso_of(self.clock.now_ms());
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
            if let Some(cid) = &run.bulk_contract_id {
                let g = bulk::check(&self.contracts.load(cid)?);
                if !g.allowed {
                    match force_reason {
                        Some(_) => forced_guard = Some(g.to_json()),
                        None => {
                            let err = g.to_error(cid).with("run_id", id);
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
        run.ended_at = Some(iso_of(self.clock.now_ms()));
        if let Some(r) = force_reason {
            run.forced = Some(Forced { reason: clip(r), guard: forced_guard });
        }
        let body = json!({"status": status, "force_reason": force_reason});
        self.finish_change(&mut run, status, "completed", body)?;
        Ok(self.with_contract(&run, true))
    }

    /// A browser-first run that cannot run at all (preflight): it ends `FAILED`
    /// with stop reason `intent_execution_failed`.
    pub fn fail_preflight(&self, id: &str, why: &str) -> Result<Value, ToolError> {
        let _g = self.guard();
        let mut run = self.load(id)?;
        run.execution.stop_reason = Some("intent_execution_failed".into());
        run.ended_at = Some(iso_of(self.clock.now_ms()));
        self.finish_change(
            &mut run,
            Status::Failed,
            "preflight_failed",
            json!({"stop_reason": "intent_execution_failed", "reason": why}),
        )?;
        Ok(serde_json::to_value(&run).unwrap_or_default())
    }

    /// Give an unfinished run without one a bulk progress contract.
    pub fn attach_contract(&self, id: &str, spec: ContractSpec) -> Result<Contract, ToolError> {
        let _g = self.guard();
        let mut run = self.load(id)?;
        transition_ok(id, &run, Status::Running)?;
        if let Some(c) = &run.bulk_contract_id {
            return Err(ToolError::invalid_transition(format!(
                "task run {id} already has bulk contract {c}"
            ))
            .with("run_id", id)
            .with("contract_id", c.as_str()));
        }
        let c = self.contracts.create(spec, Some(id))?;
        run.bulk_contract_id = Some(c.contract_id.clone());
        run.updated_at = iso_of(self.clock.now_ms());
        self.save(&run, "contract_attached", json!({"bulk_contract_id": c.contract_id}))?;
        Ok(c)
    }

    /// Change an active run's `execution` record in place (no status change);
    /// `f` returns the event to log, if any. Nothing happens when the run is
    /// missing or finished.
    pub fn touch_execution(
        &self,
        id: &str,
        f: impl FnOnce(&mut Execution) -> Option<(String, Value)>,
    ) {
        let _g = self.guard();
        let Ok(mut run) = self.load(id) else {
            return;
        };
        if run.status.is_terminal() {
            return;
        }
        let before = run.execution.clone();
        let event = f(&mut run.execution);
        if event.is_none() && run.execution == before {
            return;
        }
        run.updated_at = iso_of(self.clock.now_ms());
        let saved = match event {
            Some((name, body)) => self.save(&run, &name, body),
            None => self.save_meta(&run),
        };
        if let Err(e) = saved {
            tracing::error!(run = id, error = %e, "cannot save the task run");
        }
    }

    /// One run, with its events if asked.
    pub fn get(&self, id: &str, events: bool) -> Result<Value, ToolError> {
        let run = self.load(id)?;
        let mut v = self.with_contract(&run, true);
        if events {
            v["events"] =
                json!(read_jsonl(&self.dir.join(id).join("events.jsonl")).unwrap_or_default());
        }
        Ok(v)
    }

    /// The newest runs (by creation), optionally of one status.
    pub fn list(&self, status: Option<Status>, limit: usize) -> Vec<Value> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut runs: Vec<TaskRun> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| self.load(&e.file_name().to_string_lossy()).ok())
            .filter(|r| status.is_none_or(|s| r.status == s))
            .collect();
        runs.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.run_id.cmp(&a.run_id)));
        runs.truncate(limit);
        runs.into_iter()
            .map(|r| {
                json!({
                    "run_id": r.run_id, "goal": r.goal, "status": r.status,
                    "created_at": r.created_at, "updated_at": r.updated_at,
                    "completed_count": r.completed_count, "failed_count": r.failed_count,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    #[test]
    fn the_state_machine_holds_and_terminal_runs_are_immutable() {
        let d = std::env::temp_dir().join(format!("ochre-runs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let runs = TaskRuns::new(&d, Clock::System);
        let r =
            runs.start("collect prices", None, None, None, Execution::default()).expect("start");
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
        assert_eq!(
            runs.complete(&id, Status::Completed, None).expect("done")["status"],
            "COMPLETED"
        );
        for e in [
            runs.update(&id, &json!({})).expect_err("update"),
            runs.needs_help(&id, "x", None).expect_err("help"),
            runs.complete(&id, Status::Failed, None).expect_err("again"),
        ] {
            assert_eq!(e.code, Code::InvalidTransition);
        }
        let got = runs.get(&id, true).expect("get");
        assert_eq!(got["events"].as_array().map(Vec::len), Some(6));
        // A new store over the same dir (a restart) sees the same run.
        let again = TaskRuns::new(&d, Clock::System);
        assert_eq!(again.get(&id, false).expect("get")["status"], "COMPLETED");
        assert_eq!(again.list(Some(Status::Completed), 10).len(), 1);
        assert_eq!(again.get("run-../../x", false).expect_err("bad").code, Code::RunNotFound);
        std::fs::remove_dir_all(&d).expect("cleanup");
    }

    #[test]
    fn two_stores_over_one_dir_lose_no_update() {
        // Two stores over one data dir, as two server replicas sharing it: each
        // has its own in-process mutex, so only the lock file keeps their
        // read-modify-writes of one run apart.
        let d = std::env::temp_dir().join(format!("ochre-runs-shared-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let stores = [TaskRuns::new(&d, Clock::System), TaskRuns::new(&d, Clock::System)];
        let r = stores[0].start("shared", None, None, None, Execution::default()).expect("start");
        let id = r["run_id"].as_str().expect("id").to_owned();
        std::thread::scope(|s| {
            for (n, store) in stores.iter().enumerate() {
                for t in 0..2 {
                    let id = &id;
                    s.spawn(move || {
                        for i in 0..20 {
                            let item = format!("s{n}-t{t}-{i}");
                            store.update(id, &json!({"completed_items": [item]})).expect("update");
                        }
                    });
                }
            }
        });
        let got = stores[1].get(&id, true).expect("get");
        assert_eq!(got["completed_count"], 80, "{got}");
        assert_eq!(got["events"].as_array().map(Vec::len), Some(81));
        std::fs::remove_dir_all(&d).expect("cleanup");
    }

    #[test]
    fn a_run_file_of_the_previous_version_reads_and_writes_back_the_same() {
        // As the hand-written writer of 0.x stored a run that needed help.
        let old = json!({
            "bulk_contract_id": null, "checkpoints": 1, "completed_count": 2,
            "completed_items": ["a", "b"], "created_at": "2026-11-26T00:00:00.000Z",
            "current_cursor": {"page": 3},
            "execution": {"blocked_calls": 0, "intent": {"label": "browser_access"}, "network_adjacent_calls": 1,
                          "policy": {"fail_task_if_unmet": true}, "stop_reason": null, "successful_browser_calls": 4},
            "failed_count": 1, "failed_items": [{"item": "c", "reason": "404"}], "goal": "collect prices",
            "items_truncated": false, "last_checkpoint": "page 2", "needs_help": {"reason": "captcha", "resume_hint": null},
            "page_url": null, "progress_summary": "2 of 3", "run_id": "run-20261126000000-0a0b0c0d",
            "status": "NEEDS_HELP", "success_criteria": null, "updated_at": "2026-11-26T00:00:01.000Z"
        });
        let r: TaskRun = serde_json::from_value(old.clone()).expect("reads");
        assert_eq!(
            (r.status, r.execution.successful_browser_calls, r.failed_items[0].item.as_str()),
            (Status::NeedsHelp, 4, "c")
        );
        assert_eq!(serde_json::to_value(&r).expect("json"), old);
        // A file without the newer fields (a run never updated) reads too.
        let r: TaskRun =
            serde_json::from_value(json!({"run_id": "run-1", "goal": "g", "status": "PENDING"}))
                .expect("reads");
        assert_eq!((r.status, r.completed_count, r.items_truncated), (Status::Pending, 0, false));
        // A status this version does not know is not a run.
        assert!(serde_json::from_value::<TaskRun>(json!({"status": "PAUSED"})).is_err());
    }
}
