//! The pipeline's run-aware guards: which task run a call belongs to, the intent
//! guard around calls in a browser-first run, recording a tool's items into a
//! bulk progress contract, and the session's hints.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::bulk::{self, Progress};
use crate::error::ToolError;
use crate::hints::{Hint, HintState, Seen};
use crate::host::Host;
use crate::intent::{self, Decision, IntentDetector, Label, Scope, Verdict};
use crate::pipeline::{CallOptions, ToolInfo, ToolOutput, json_output};
use crate::taskrun::codes;

/// Sessions remembered at most (HTTP clients come and go).
const MAX_SESSIONS: usize = 1024;
/// The session of calls that name none (an embedder's).
const SHARED: &str = "-";

#[derive(Default)]
struct SessionState {
    /// Unfinished runs started in this session (the active one is the single one).
    runs: Vec<String>,
    hints: HintState,
    last_used: u64,
}

/// Per-session guard state.
#[derive(Default)]
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, SessionState>>,
    tick: std::sync::atomic::AtomicU64,
}

impl Sessions {
    fn with<T>(&self, session: Option<&str>, f: impl FnOnce(&mut SessionState) -> T) -> T {
        let key = session.unwrap_or(SHARED);
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_SESSIONS
            && !map.contains_key(key)
            && let Some(oldest) = map
                .iter()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| k.clone())
        {
            map.remove(&oldest);
        }
        let s = map.entry(key.to_owned()).or_default();
        s.last_used = self.tick.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f(s)
    }
}

impl Sessions {
    /// A run ended: it is no session's active run any more (so finding a call's
    /// run needs no disk read).
    pub(crate) fn forget_run(&self, id: &str) {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        for s in map.values_mut() {
            s.runs.retain(|r| r != id);
        }
    }
}

/// An embedder's intent detector, as the builder keeps it.
#[derive(Clone)]
pub(crate) struct DetectorSlot(pub Arc<dyn IntentDetector>);

impl std::fmt::Debug for DetectorSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IntentDetector")
    }
}

/// Host-owned fields every tool accepts: `run_id` (which task run the call
/// belongs to) and `contract_id` (record the result's items in a bulk progress
/// contract). Taken out of the arguments unless the tool's own schema declares them.
pub(crate) fn take_host_field(
    tool: &str,
    info: &ToolInfo,
    args: &mut Map<String, Value>,
    field: &str,
) -> Result<Option<String>, ToolError> {
    if info.plugin == "host" || info.input_schema["properties"].get(field).is_some() {
        return Ok(args.get(field).and_then(Value::as_str).map(str::to_owned));
    }
    match args.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 64 => Ok(Some(s)),
        Some(_) => Err(ToolError::invalid_argument(
            field,
            format!("{tool}: `{field}` must be a string id"),
        )),
    }
}

impl Host {
    /// The task run a call belongs to: the explicit `run_id`, else the session's
    /// single unfinished run.
    pub(crate) fn run_of(&self, session: Option<&str>, explicit: Option<String>) -> Option<String> {
        if let Some(id) = explicit {
            return Some(id);
        }
        self.inner
            .sessions
            .with(session, |s| match s.runs.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            })
    }

    /// The hint a finished call earns in its session.
    pub(crate) fn hint_for(&self, session: Option<&str>, seen: &Seen<'_>) -> Option<Hint> {
        self.inner.sessions.with(session, |s| s.hints.observe(seen))
    }

    /// The intent guard before a call in run `run`: browser tools pass; the
    /// rest by the run's policy. A block is recorded in the run and nothing runs.
    pub(crate) fn guard_before(&self, run: &str, info: &ToolInfo) -> Result<(), ToolError> {
        if info.plugin == "host" {
            return Ok(());
        }
        let scope = info.guard_scope();
        let mut blocked = None;
        self.inner.task_runs.touch_execution(run, |ex| {
            if ex["intent"]["label"] != "browser_access" || ex["policy"].is_null() {
                return None;
            }
            let n = ex["network_adjacent_calls"].as_u64().unwrap_or(0);
            match intent::decide(&ex["policy"], scope, n) {
                Decision::Allow => {
                    if scope == Scope::NetworkAdjacent {
                        ex.insert("network_adjacent_calls".into(), json!(n + 1));
                    }
                    None
                }
                Decision::Block(why) => {
                    let b = ex["blocked_calls"].as_u64().unwrap_or(0) + 1;
                    ex.insert("blocked_calls".into(), json!(b));
                    ex.insert("stop_reason".into(), json!("tool_policy_blocked"));
                    let body = json!({"stop_reason": "tool_policy_blocked", "tool": info.name, "scope": scope.as_str(), "reason": why});
                    blocked = Some(why);
                    Some(("tool_policy_blocked".into(), body))
                }
            }
        });
        match blocked {
            None => Ok(()),
            Some(why) => Err(ToolError::new(
                codes::TOOL_POLICY_BLOCKED,
                format!(
                    "tool_policy_blocked: {} ({}): {why}",
                    info.name,
                    scope.as_str()
                ),
            )
            .with("stop_reason", "tool_policy_blocked")
            .with("scope", scope.as_str())
            .with("run_id", run)),
        }
    }

    /// After a successful call in run `run`: count browser successes.
    pub(crate) fn guard_after(&self, run: &str, info: &ToolInfo) {
        if info.plugin == "host" || info.guard_scope() != Scope::Browser {
            return;
        }
        self.inner.task_runs.touch_execution(run, |ex| {
            let n = ex["successful_browser_calls"].as_u64().unwrap_or(0) + 1;
            ex.insert("successful_browser_calls".into(), json!(n));
            None
        });
    }

    /// Record the items of a result in a contract: each item (of the result's
    /// list: `pages`, `results`, `items`, ...) with a string `item_key` field is
    /// completed, or failed when it carries an `error`. Returns a line to append.
    pub(crate) fn record_items(
        &self,
        contract_id: &str,
        result: &Value,
    ) -> Result<String, ToolError> {
        let contracts = &self.inner.task_runs.contracts;
        let c = contracts.load(contract_id)?;
        let key = c["item_key"].as_str().unwrap_or("item").to_owned();
        let list = match result {
            Value::Array(a) => Some(a),
            Value::Object(m) => crate::output::ITEM_FIELDS
                .iter()
                .find_map(|f| m.get(*f).and_then(Value::as_array)),
            _ => None,
        };
        let mut p = Progress::default();
        for item in list.into_iter().flatten() {
            let Some(k) = item.get(&key).and_then(Value::as_str) else {
                continue;
            };
            match item.get("error").filter(|e| !e.is_null()) {
                Some(e) => p.failed.push((
                    k.to_owned(),
                    e.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| e.to_string()),
                    None,
                )),
                None => p.completed.push(k.to_owned()),
            }
        }
        let (done, failed) = (p.completed.len(), p.failed.len());
        let c = contracts.update(contract_id, &p)?;
        let g = bulk::check(&c);
        Ok(format!(
            "progress {contract_id}: recorded {done} completed, {failed} failed by `{key}`; now {} completed, {} failed{}",
            c["completed_count"],
            c["failed_count"],
            match g.missing_count {
                Some(m) => format!(", {m} missing"),
                None => String::new(),
            }
        ))
    }

    /// `oc_task_run_start`: detect the goal's intent, run the preflight, start.
    pub(crate) async fn start_run(
        &self,
        args: &Value,
        options: &CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        let runs = &self.inner.task_runs;
        let goal = args["goal"].as_str().unwrap_or_default();
        let contract = match args.get("bulk_contract").filter(|c| !c.is_null()) {
            Some(spec) => Some(bulk::validate_spec(spec, "bulk_contract.")?),
            None => None,
        };
        let config = &self.inner.intent_guard;
        let verdict = self.detect_intent(goal, options).await;
        let guarded = config.enabled && verdict.label == Label::BrowserAccess;
        let execution = json!({
            "intent": verdict.to_json(),
            "policy": if guarded { config.to_json() } else { Value::Null },
            "successful_browser_calls": 0,
            "network_adjacent_calls": 0,
            "blocked_calls": 0,
            "stop_reason": null,
        });
        let run = runs.start(
            goal,
            args["success_criteria"].as_str(),
            args["page_url"].as_str(),
            contract,
            execution,
        )?;
        let id = run["run_id"].as_str().unwrap_or_default().to_owned();
        if guarded
            && config.no_fallback
            && let Some(why) = self.browser_unavailable().await
        {
            runs.fail_preflight(&id, &why)?;
            return Err(ToolError::new(
                codes::INTENT_EXECUTION_FAILED,
                format!("intent_execution_failed: the goal asks for the browser but {why}; the run {id} failed at start"),
            )
            .with("stop_reason", "intent_execution_failed")
            .with("run_id", id.as_str()));
        }
        self.inner
            .sessions
            .with(options.session.as_deref(), |s| s.runs.push(id.clone()));
        let summary = format!("{id} PENDING ({})", verdict.label.as_str());
        Ok(json_output(run, summary))
    }

    async fn detect_intent(&self, goal: &str, options: &CallOptions) -> Verdict {
        if let Some(d) = &self.inner.intent_detector
            && let Some(mut v) = d.0.detect(goal).await
        {
            v.source = "detector".into();
            return v;
        }
        if let Some(v) = intent::heuristic(goal) {
            return v;
        }
        if self.inner.intent_guard.detector != intent::Detector::Model {
            return intent::general("no browser keyword in the goal");
        }
        let Some(sampler) = &options.sampler else {
            return intent::general("no browser keyword; the client does not support sampling");
        };
        let asked = tokio::time::timeout(
            std::time::Duration::from_secs(30),
            sampler.ask(intent::MODEL_PROMPT, goal),
        )
        .await;
        match asked {
            Ok(Ok(text)) => match intent::parse_model_answer(&text) {
                Some(v) => v,
                None => intent::general("no browser keyword; the model's answer was not usable"),
            },
            Ok(Err(e)) => {
                tracing::info!(error = %e, "sampling failed; intent from keywords");
                intent::general("no browser keyword; sampling failed")
            }
            Err(_) => intent::general("no browser keyword; sampling timed out"),
        }
    }

    /// Why a browser-first run cannot run here, if it cannot.
    async fn browser_unavailable(&self) -> Option<String> {
        let any = self
            .tools()
            .iter()
            .any(|t| t.plugin != "host" && t.guard_scope() == Scope::Browser);
        if !any {
            return Some(
                "no browser tool is enabled on this server (see --tools-only / --disable-tools)"
                    .into(),
            );
        }
        match self.inner.browser.tabs().await {
            Ok(_) => None,
            Err(e) => Some(format!("the browser cannot start ({})", e.message)),
        }
    }
}
