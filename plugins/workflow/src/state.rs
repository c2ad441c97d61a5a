//! Workflows as stored in the plugin's key-value state: `wf:<id>` (the
//! workflow's header), `wf:<id>:<n>` (worker n, rewritten alone when it reports,
//! so workers reporting at the same time never overwrite each other) and
//! `current` (the newest workflow, the default of every tool).

use ochre_sdk::{ToolError, kv, tools};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Worker {
    pub name: String,
    pub url: String,
    pub task: String,
    pub success_criteria: Option<String>,
    pub tab_id: String,
    /// `RUNNING`, then `SUCCESS`, `PARTIAL` or `FAIL`.
    pub status: String,
    pub progress: Option<String>,
    pub extracted_data: Option<Value>,
    pub result_summary: Option<String>,
    pub updates: u64,
    pub started_ms: u64,
    pub updated_ms: u64,
    pub completed_ms: Option<u64>,
    /// The saved login its tab was signed in with, if it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login: Option<String>,
}

impl Worker {
    pub fn new(
        name: String,
        url: String,
        task: String,
        success_criteria: Option<String>,
        tab_id: String,
        now: u64,
    ) -> Self {
        Self {
            name,
            url,
            task,
            success_criteria,
            tab_id,
            status: "RUNNING".into(),
            progress: None,
            extracted_data: None,
            result_summary: None,
            updates: 0,
            started_ms: now,
            updated_ms: now,
            completed_ms: None,
            login: None,
        }
    }

    /// Completed by `worker_complete`.
    pub fn is_done(&self) -> bool {
        self.status != "RUNNING"
    }

    /// Still running past the worker's or the workflow's limit.
    pub fn timed_out(&self, now: u64, wf: &Workflow) -> bool {
        !self.is_done()
            && (now.saturating_sub(self.started_ms) > wf.worker_timeout_ms
                || now.saturating_sub(wf.created_ms) > wf.global_timeout_ms)
    }

    fn shown_status(&self, now: u64, wf: &Workflow) -> &str {
        if self.timed_out(now, wf) { "TIMED_OUT" } else { &self.status }
    }

    /// A result of `workflow_collect`.
    pub fn result_json(&self, now: u64, wf: &Workflow) -> Value {
        json!({
            "worker": self.name,
            "status": self.shown_status(now, wf),
            "resultSummary": self.result_summary,
            "extractedData": self.extracted_data,
            "tabId": self.tab_id,
            "duration_ms": self.completed_ms.unwrap_or(now).saturating_sub(self.started_ms),
        })
    }
}

/// One workflow.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Workflow {
    pub id: String,
    pub name: String,
    pub created_ms: u64,
    pub worker_timeout_ms: u64,
    pub global_timeout_ms: u64,
    /// The bulk progress contract over the workers (none if the host refused it).
    pub contract_id: Option<String>,
    /// Stored under their own keys (`wf:<id>:<n>`).
    #[serde(skip)]
    pub workers: Vec<Worker>,
    /// How many workers there are.
    pub worker_count: usize,
}

/// `wf-<ms in base 36>`: unique per plugin (one call at a time per instance, and
/// the key is checked).
pub fn new_id(now: u64) -> String {
    let mut n = now;
    loop {
        let id = format!("wf-{}", base36(n));
        if kv::get(&format!("wf:{id}")).is_none() {
            return id;
        }
        n += 1;
    }
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

fn state_error(e: String) -> ToolError {
    ToolError::state_error(format!("cannot save the workflow: {e}"))
}

impl Workflow {
    /// A workflow by id, or the newest.
    pub fn load(id: Option<&str>) -> Result<Self, ToolError> {
        let id = match id {
            Some(i) => i.to_owned(),
            None => kv::get("current").ok_or_else(|| {
                ToolError::workflow_not_found("no workflow: start one with workflow_init")
            })?,
        };
        let text = kv::get(&format!("wf:{id}")).ok_or_else(|| {
            ToolError::workflow_not_found(format!(
                "no workflow {id:?} (cleaned up, or never started)"
            ))
            .with_details(json!({"workflowId": id}))
        })?;
        let unreadable =
            |e: String| ToolError::state_error(format!("workflow {id} is unreadable: {e}"));
        let mut wf: Workflow =
            serde_json::from_str(&text).map_err(|e| unreadable(e.to_string()))?;
        for n in 0..wf.worker_count {
            let text = kv::get(&format!("wf:{id}:{n}"))
                .ok_or_else(|| unreadable(format!("worker {n} is missing")))?;
            wf.workers.push(serde_json::from_str(&text).map_err(|e| unreadable(e.to_string()))?);
        }
        Ok(wf)
    }

    /// Write it whole (at init), and make it the newest.
    pub fn save(&mut self) -> Result<(), ToolError> {
        self.worker_count = self.workers.len();
        for n in 0..self.workers.len() {
            self.save_worker(n)?;
        }
        let text = serde_json::to_string(self).map_err(|e| state_error(e.to_string()))?;
        kv::set(&format!("wf:{}", self.id), &text).map_err(state_error)?;
        kv::set("current", &self.id).map_err(state_error)
    }

    /// Write worker `n` alone.
    pub fn save_worker(&self, n: usize) -> Result<(), ToolError> {
        let text =
            serde_json::to_string(&self.workers[n]).map_err(|e| state_error(e.to_string()))?;
        kv::set(&format!("wf:{}:{n}", self.id), &text).map_err(state_error)
    }

    /// Forget it.
    pub fn delete(&self) -> Result<(), ToolError> {
        for n in 0..self.worker_count {
            kv::delete(&format!("wf:{}:{n}", self.id)).map_err(state_error)?;
        }
        kv::delete(&format!("wf:{}", self.id)).map_err(state_error)?;
        if kv::get("current").as_deref() == Some(&self.id) {
            kv::delete("current").map_err(state_error)?;
        }
        Ok(())
    }

    /// The index of the worker with this name.
    pub fn worker_index(&self, name: &str) -> Result<usize, ToolError> {
        self.workers.iter().position(|w| w.name == name).ok_or_else(|| {
            let known: Vec<&str> = self.workers.iter().map(|w| w.name.as_str()).collect();
            ToolError::worker_not_found(format!(
                "no worker {name:?}; the workers are {}",
                known.join(", ")
            ))
            .with_details(json!({"field": "workerName"}))
        })
    }

    /// The index of a worker that is still running (one that is done cannot change).
    pub fn running_worker(&self, name: &str) -> Result<usize, ToolError> {
        let n = self.worker_index(name)?;
        let w = &self.workers[n];
        if w.is_done() {
            return Err(ToolError::invalid_transition(format!(
                "worker {:?} is already {}",
                w.name, w.status
            )));
        }
        Ok(n)
    }

    /// Names of the workers neither complete nor timed out.
    pub fn pending(&self, now: u64) -> Vec<&str> {
        self.workers
            .iter()
            .filter(|w| !w.is_done() && !w.timed_out(now, self))
            .map(|w| w.name.as_str())
            .collect()
    }

    /// The contract's completion guard (null without a contract).
    pub fn contract_guard(&self) -> Value {
        let Some(c) = &self.contract_id else {
            return Value::Null;
        };
        tools::call("oc_bulk_progress_check", &json!({"contract_id": c}))
            .ok()
            .and_then(|r| r.structured)
            .map(|v| v["completion_guard"].clone())
            .unwrap_or(Value::Null)
    }

    /// `workflow_status`'s body.
    pub fn status_json(&self, now: u64) -> Value {
        json!({
            "workflowId": self.id,
            "name": self.name,
            "elapsed_ms": now.saturating_sub(self.created_ms),
            "contract_id": self.contract_id,
            "workers": self.workers.iter().map(|w| json!({
                "name": w.name,
                "tabId": w.tab_id,
                "status": w.shown_status(now, self),
                "progress": w.progress,
                "updates": w.updates,
                "elapsed_ms": w.completed_ms.unwrap_or(now).saturating_sub(w.started_ms),
            })).collect::<Vec<_>>(),
        })
    }
}
