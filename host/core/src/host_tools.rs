//! The host's own tools: they read host state, so they live here, not in a
//! plugin: `oc_journal`, `oc_output_fetch`, `oc_task_run_*` and
//! `oc_bulk_progress_*` (`expand_tools` is per MCP session, in the server). Each
//! is a [`HostTool`], as an embedder's native tools are.

use futures::future::BoxFuture;

use crate::browser::HostBrowser;
use crate::native::HostTool;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::ToolError;
use crate::intent::{self, Label, Verdict};
use crate::tool::{Annotations, CallOptions, ToolInfo, ToolOutput, json_output};

/// What the host's own tools work with: narrow handles on the host's state.
pub(crate) struct HostTools {
    pub journal: Arc<crate::stores::journal::Journal>,
    pub output: Arc<crate::stores::output::HandleStore>,
    pub task_runs: Arc<crate::stores::taskrun::TaskRuns>,
    pub sessions: Arc<crate::pipeline::Sessions>,
    pub intent_guard: crate::intent::IntentGuardConfig,
    pub intent_detector: Option<crate::intent::DetectorSlot>,
    pub browser: crate::browser::BrowserManager,
    /// A browser tool is enabled on this server (a browser-first run can run);
    /// known once every tool is loaded.
    pub browser_tools: std::sync::OnceLock<bool>,
    /// The named logins (sealed with the operator's key).
    pub logins: Arc<crate::stores::logins::LoginStore>,
    /// The origin-bound credentials (sealed with the same key).
    pub credentials: Arc<crate::stores::credentials::CredentialStore>,
    /// The secrets every outcome is scrubbed of (a typed password joins them).
    pub known: Arc<crate::redact::KnownSecrets>,
    /// The hand-offs under way (`oc_handoff`).
    pub people: Arc<crate::people::People>,
}

/// Which of the host's own tools.
#[derive(Debug, Clone, Copy)]
enum Own {
    Journal,
    OutputFetch,
    StartRun,
    TaskRun,
    Bulk,
    Login,
    Credential,
    Handoff,
}

/// One of the host's own tools.
struct OwnTool {
    info: ToolInfo,
    kind: Own,
    host: Arc<HostTools>,
}

impl HostTool for OwnTool {
    fn info(&self) -> ToolInfo {
        self.info.clone()
    }

    fn call<'a>(
        &'a self,
        args: &'a Value,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let (host, name) = (&*self.host, self.info.name.as_str());
        match self.kind {
            Own::StartRun => Box::pin(start_run(host, args, options)),
            Own::Journal => Box::pin(std::future::ready(run_journal(host, args))),
            Own::OutputFetch => Box::pin(std::future::ready(run_output_fetch(host, args))),
            Own::TaskRun => Box::pin(std::future::ready(run_task_tool(host, name, args))),
            Own::Bulk => Box::pin(std::future::ready(run_bulk_tool(host, name, args))),
            Own::Login => Box::pin(run_login_tool(host, name, args)),
            Own::Credential => Box::pin(crate::credential_tool::run(
                &host.credentials,
                &host.browser,
                &host.known,
                &host.people,
                options,
                args,
            )),
            Own::Handoff => {
                Box::pin(crate::handoff_tool::run(&host.people, &host.browser, options, args))
            }
        }
    }
}

/// The host's own tools, each with whether it stays whatever capability groups
/// are enabled (task runs and bulk progress: the guards' control plane).
pub(crate) fn own_tools(host: &Arc<HostTools>) -> Vec<(Arc<dyn HostTool>, bool)> {
    let tools = [(journal_tool_info(), Own::Journal), (output_fetch_tool_info(), Own::OutputFetch)]
        .into_iter()
        .chain(task_run_tools().into_iter().map(|t| {
            let kind = if t.name == "oc_task_run_start" { Own::StartRun } else { Own::TaskRun };
            (t, kind)
        }))
        .chain(bulk_tools().into_iter().map(|t| (t, Own::Bulk)))
        .chain(login_tools().into_iter().map(|t| (t, Own::Login)))
        .chain(std::iter::once((crate::credential_tool::info(), Own::Credential)))
        .chain(std::iter::once((crate::handoff_tool::info(), Own::Handoff)));
    tools
        .map(|(info, kind)| {
            let always = matches!(kind, Own::StartRun | Own::TaskRun | Own::Bulk);
            let tool: Arc<dyn HostTool> = Arc::new(OwnTool { info, kind, host: host.clone() });
            (tool, always)
        })
        .collect()
}

const DEFAULT_COUNT: u64 = 20;
const MAX_COUNT: u64 = 100;

pub(crate) fn journal_tool_info() -> ToolInfo {
    host_tool(
        "oc_journal",
        "Read the journal of tool calls: `recent` (latest calls: tool, redacted args, outcome, intent) \
                      or `summary` (counts per tool). Use it to review or hand over work."
            .into(),
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["recent", "summary"], "description": "default recent"},
                "kind": {"type": "string", "enum": ["recent", "summary"], "description": "alias of action"},
                "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "description": "default 20"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "description": "alias of count"},
                "tool": {"type": "string", "maxLength": 64, "description": "only this tool"}
            },
            "additionalProperties": false
        }),
        // Tier 2: for review and hand-over, not the agent's main loop.
        2,
        true,
    )
}

pub(crate) fn output_fetch_tool_info() -> ToolInfo {
    use crate::stores::output::{DEFAULT_BYTES, DEFAULT_ITEMS, MAX_BYTES};
    host_tool(
        "oc_output_fetch",
        "Read a stored output handle (oh_...) page by page: JSON lists by items, other output by bytes."
            .into(),
        json!({
            "type": "object",
            "properties": {
                "output_handle": {"type": "string", "maxLength": 64},
                "offset": {"type": "integer", "minimum": 0, "description": "next_offset of the previous page"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_BYTES,
                          "description": format!("default {DEFAULT_ITEMS} items or {DEFAULT_BYTES} bytes")},
                "format": {"type": "string", "enum": ["auto", "items", "bytes"]}
            },
            "required": ["output_handle"],
            "additionalProperties": false
        }),
        1,
        true,
    )
}

pub(crate) fn run_output_fetch(host: &HostTools, args: &Value) -> Result<ToolOutput, ToolError> {
    let handle = args["output_handle"].as_str().unwrap_or_default();
    let page = host.output.fetch(
        handle,
        args["offset"].as_u64().unwrap_or(0),
        args["limit"].as_u64(),
        args["format"].as_str().unwrap_or("auto"),
    )?;
    let summary = format!(
        "{handle} {} {}+{} of {}",
        page["format"].as_str().unwrap_or(""),
        page["offset"],
        page["returned"],
        page["total"]
    );
    Ok(json_output(page, summary))
}

pub(crate) fn run_journal(host: &HostTools, args: &Value) -> Result<ToolOutput, ToolError> {
    let action = match (args["action"].as_str(), args["kind"].as_str()) {
        (Some(a), Some(k)) if a != k => {
            return Err(ToolError::invalid_argument(
                "kind",
                format!("oc_journal: `action` is {a:?} but `kind` is {k:?}; pass one of them"),
            ));
        }
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => "recent",
    };
    let count = args["count"]
        .as_u64()
        .or_else(|| args["limit"].as_u64())
        .unwrap_or(DEFAULT_COUNT)
        .min(MAX_COUNT) as usize;
    let tool = args["tool"].as_str();
    let journal = &host.journal;
    if action == "summary" {
        let mut all = journal.all(tool);
        all.retain(|e| e.get("event").is_none());
        let mut by_tool: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        let mut failed = 0u64;
        for e in &all {
            let slot = by_tool.entry(e["tool"].as_str().unwrap_or("?").to_owned()).or_default();
            slot.0 += 1;
            if e["ok"] != true {
                slot.1 += 1;
                failed += 1;
            }
        }
        let tools: serde_json::Map<String, Value> = by_tool
            .into_iter()
            .map(|(k, (calls, fails))| (k, json!({"calls": calls, "failed": fails})))
            .collect();
        let total = all.len();
        let value = json!({
            "total": total,
            "ok": total as u64 - failed,
            "failed": failed,
            "first": all.first().map(|e| e["ts"].clone()),
            "last": all.last().map(|e| e["ts"].clone()),
            "byTool": tools,
        });
        return Ok(json_output(value, format!("summary of {total} calls")));
    }
    let entries = journal.recent(count, tool);
    let n = entries.len();
    Ok(json_output(json!({ "entries": entries }), format!("{n} recent entries")))
}

/// The `oc_bulk_progress_*` tools.
pub(crate) fn bulk_tools() -> Vec<ToolInfo> {
    let id = json!({"type": "string", "maxLength": 64});
    let item = json!({"type": "string", "minLength": 1, "maxLength": 1000});
    let defs = [
        (
            "oc_bulk_progress_start",
            "Start a bulk progress contract for repetitive work (URLs, pages, rows): completion is refused while items are missing. Give expected_total/expected_items or a stop_condition; run_id attaches it to a run; tools called with contract_id record their items in it.".to_owned(),
            json!({"run_id": id, "scope": {"type": "string", "enum": crate::stores::bulk::SCOPES},
                   "expected_total": {"type": "integer", "minimum": 0, "maximum": crate::stores::bulk::MAX_TOTAL},
                   "expected_items": {"type": "array", "items": item, "maxItems": crate::stores::bulk::MAX_EXPECTED_ITEMS},
                   "min_completed": {"type": "integer", "minimum": 0}, "allow_partial": {"type": "boolean"},
                   "stop_condition": {"type": "string", "maxLength": 500}, "item_key": {"type": "string", "maxLength": 64},
                   "cursor": {"type": "string", "maxLength": 2000}}),
            false,
        ),
        (
            "oc_bulk_progress_update",
            "Record items completed or failed (deduplicated; a failed item that completes moves over), the cursor, and whether the stop condition holds.".to_owned(),
            json!({"contract_id": id, "run_id": id,
                   "completed": {"type": "array", "items": item, "maxItems": 1000},
                   "failed": {"type": "array", "maxItems": 1000, "items": {"type": "object",
                       "properties": {"item": item, "reason": {"type": "string", "maxLength": 1000}, "retryable": {"type": "boolean"}},
                       "required": ["item"], "additionalProperties": false}},
                   "cursor": {"type": "string", "maxLength": 2000}, "stop_satisfied": {"type": "boolean"}}),
            false,
        ),
        (
            "oc_bulk_progress_check",
            "A contract's counts and its completion guard (allowed, missing_count, suggested_next_action); items on request.".to_owned(),
            json!({"contract_id": id, "run_id": id, "include_items": {"type": "boolean"}}),
            true,
        ),
    ];
    defs.into_iter()
        .map(|(name, description, properties, read_only)| {
            control_tool(name, description, properties, &[], read_only)
        })
        .collect()
}

/// The named-login tools: save the session's login, sign the session in with
/// one, list them. Values never travel: the answers name origins and cookies.
pub(crate) fn login_tools() -> Vec<ToolInfo> {
    let name =
        json!({"name": {"type": "string", "pattern": "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$"}});
    // Host tools (never a browser-first run's browser tool, never blocked).
    let tool = |n: &str, what: &str, properties: Value, required: &[&str], read_only| {
        control_tool(n, what.into(), properties, required, read_only)
    };
    vec![
        tool(
            "oc_login_save",
            "Save this session's login (its cookies and its tabs' localStorage) under a name, sealed.",
            name.clone(),
            &["name"],
            false,
        ),
        tool(
            "oc_login_load",
            "Sign this session in with a saved login: its cookies and localStorage, no login request.",
            name,
            &["name"],
            false,
        ),
        tool(
            "oc_login_list",
            "The saved logins: name, origins, cookie names.",
            json!({}),
            &[],
            true,
        ),
    ]
}

/// Run a named-login tool.
async fn run_login_tool(
    host: &HostTools,
    name: &str,
    args: &Value,
) -> Result<ToolOutput, ToolError> {
    let login = || args["name"].as_str().unwrap_or_default();
    let told = |summary: &crate::stores::logins::LoginSummary,
                did: &str|
     -> Result<ToolOutput, ToolError> {
        let origins = if summary.origins.is_empty() {
            String::new()
        } else {
            format!(" for {}", summary.origins.join(", "))
        };
        let idb = match summary.indexed_db.len() {
            0 => String::new(),
            n => format!(", {n} IndexedDB databases"),
        };
        let skipped = match summary.indexed_db_skipped {
            0 => String::new(),
            n => format!(" ({n} IndexedDB records holding a Blob not saved)"),
        };
        let text = format!(
            "{did} login {}: {} cookies, {} storage entries{idb}{origins}{skipped}",
            summary.name,
            summary.cookies.len(),
            summary.storage_entries
        );
        Ok(json_output(json!(summary), text))
    };
    match name {
        "oc_login_save" => {
            crate::stores::logins::LoginStore::check_name(login())?;
            let state = host.browser.storage_state().await?;
            let summary = host.logins.save(login(), &state)?;
            told(&summary, "saved")
        }
        "oc_login_load" => {
            let (summary, state) = host.logins.open(login())?;
            host.browser.use_login(Some(state)).await?;
            told(&summary, "signed in with")
        }
        _ => {
            let all = host.logins.list()?;
            let text = format!("{} saved logins", all.len());
            Ok(json_output(json!({"logins": all}), text))
        }
    }
}

/// A task-run or bulk-progress tool: the host's control plane (tier 2).
fn control_tool(
    name: &str,
    description: String,
    properties: Value,
    required: &[&str],
    read_only: bool,
) -> ToolInfo {
    host_tool(
        name,
        description,
        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false}),
        2,
        read_only,
    )
}

/// A host tool: capability core, local scope (never blocked by the intent guard).
fn host_tool(
    name: &str,
    description: String,
    input_schema: Value,
    tier: u8,
    read_only: bool,
) -> ToolInfo {
    let mut info =
        ToolInfo::host_own(name, &description, input_schema, tier, crate::intent::Scope::Local);
    info.annotations = Annotations { read_only, idempotent: read_only, ..Annotations::default() };
    info.control = true;
    info
}

pub(crate) fn run_bulk_tool(
    host: &HostTools,
    name: &str,
    args: &Value,
) -> Result<ToolOutput, ToolError> {
    use crate::stores::bulk::{self, Progress};
    let runs = &host.task_runs;
    let contracts = &runs.contracts;
    let run_id = args["run_id"].as_str();
    if name == "oc_bulk_progress_start" {
        let mut spec = args.clone();
        if let Value::Object(m) = &mut spec {
            m.remove("run_id");
        }
        let spec = bulk::validate_spec(&spec, "")?;
        let c = match run_id {
            Some(r) => runs.attach_contract(r, spec)?,
            None => contracts.create(spec, None)?,
        };
        let summary = format!("{} started", c.contract_id);
        return Ok(json_output(bulk::view(&c, false), summary));
    }
    let id = match (args["contract_id"].as_str(), run_id) {
        (Some(c), _) => c.to_owned(),
        (None, Some(r)) => match runs.load(r)?.bulk_contract_id {
            Some(c) => c,
            None => {
                return Err(ToolError::contract_not_found(format!("{name}: task run {r} has no bulk contract (oc_bulk_progress_start with run_id adds one)"),
                )
                .with("run_id", r));
            }
        },
        (None, None) => {
            return Err(ToolError::invalid_argument(
                "contract_id",
                format!("{name}: pass `contract_id` (or the `run_id` of a run with a contract)"),
            ));
        }
    };
    let c = if name == "oc_bulk_progress_update" {
        let p = Progress::from_args(args);
        if p.is_empty() {
            return Err(ToolError::invalid_argument(
                "completed",
                format!(
                    "{name}: nothing to record: pass completed, failed, cursor or stop_satisfied"
                ),
            ));
        }
        contracts.update(&id, &p)?
    } else {
        contracts.load(&id)?
    };
    let g = bulk::check(&c);
    let summary = format!(
        "{id} {} completed, {} failed, {}",
        c.completed_count,
        c.failed_count,
        if g.allowed { "complete" } else { "incomplete" }
    );
    Ok(json_output(bulk::view(&c, args["include_items"] == json!(true)), summary))
}

/// The `oc_task_run_*` tools (tier 2 until the intent guard and hints make them
/// part of every task; they are callable all the same).
pub(crate) fn task_run_tools() -> Vec<ToolInfo> {
    let id = json!({"type": "string", "maxLength": 64});
    let text = |max: u64| json!({"type": "string", "minLength": 1, "maxLength": max});
    let defs = [
        (
            "oc_task_run_start",
            "Start a task run for a goal; report progress with oc_task_run_update and end it with oc_task_run_complete. \
             For repetitive work pass bulk_contract so the run cannot complete while items are missing.",
            json!({"goal": text(2000), "success_criteria": text(2000), "page_url": text(4096),
                   "bulk_contract": {"type": "object", "description": "the fields of oc_bulk_progress_start"}}),
            vec!["goal"],
            false,
        ),
        (
            "oc_task_run_update",
            "Report a run's progress: a summary, items done or failed (deduplicated), a cursor to resume from.",
            json!({"run_id": id, "progress_summary": text(2000),
                   "completed_items": {"type": "array", "items": text(1000), "maxItems": 1000},
                   "failed_items": {"type": "array", "maxItems": 1000, "items": {"type": "object",
                       "properties": {"item": text(1000), "reason": text(1000)}, "required": ["item"], "additionalProperties": false}},
                   "current_cursor": {}, "stop_satisfied": {"type": "boolean", "description": "the contract's stop condition holds"}}),
            vec!["run_id"],
            false,
        ),
        (
            "oc_task_run_checkpoint",
            "Record a checkpoint summary of a run (resumes a run that needed help).",
            json!({"run_id": id, "summary": text(2000)}),
            vec!["run_id", "summary"],
            false,
        ),
        (
            "oc_task_run_needs_help",
            "Mark a run as needing a person, with the reason and how to resume.",
            json!({"run_id": id, "reason": text(2000), "resume_hint": text(2000)}),
            vec!["run_id", "reason"],
            false,
        ),
        (
            "oc_task_run_complete",
            "End a run: COMPLETED, FAILED or CANCELLED. A finished run cannot change. COMPLETED is refused while the run's bulk contract has missing items (force + force_reason overrides).",
            json!({"run_id": id, "status": {"type": "string", "enum": ["COMPLETED", "FAILED", "CANCELLED"]},
                   "force": {"type": "boolean"}, "force_reason": text(2000)}),
            vec!["run_id", "status"],
            false,
        ),
        (
            "oc_task_run_get",
            "A run's state (and its events on request).",
            json!({"run_id": id, "include_events": {"type": "boolean"}}),
            vec!["run_id"],
            true,
        ),
        (
            "oc_task_run_list",
            "Task runs, newest first, optionally of one status.",
            json!({"status": {"type": "string", "enum": ["PENDING", "RUNNING", "NEEDS_HELP", "COMPLETED", "FAILED", "CANCELLED"]},
                   "limit": {"type": "integer", "minimum": 1, "maximum": 100}}),
            vec![],
            true,
        ),
    ];
    defs.into_iter()
        .map(|(name, description, properties, required, read_only)| {
            control_tool(name, description.into(), properties, &required, read_only)
        })
        .collect()
}

pub(crate) fn run_task_tool(
    host: &HostTools,
    name: &str,
    args: &Value,
) -> Result<ToolOutput, ToolError> {
    use crate::stores::taskrun::Status;
    let runs = &host.task_runs;
    let id = args["run_id"].as_str().unwrap_or_default();
    let s = |k: &str| args[k].as_str();
    let status = match s("status").map(|n| (n, Status::parse(n))) {
        None => None,
        Some((_, Some(st))) => Some(st),
        Some((n, None)) => {
            let names: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
            return Err(ToolError::invalid_argument(
                "status",
                format!("{name}: `status` {n:?} is not one of {names:?}"),
            ));
        }
    };
    let run = match name {
        "oc_task_run_update" => runs.update(id, args)?,
        "oc_task_run_checkpoint" => runs.checkpoint(id, s("summary").unwrap_or_default())?,
        "oc_task_run_needs_help" => {
            runs.needs_help(id, s("reason").unwrap_or_default(), s("resume_hint"))?
        }
        "oc_task_run_complete" => {
            let forced = args["force"] == json!(true);
            if forced && s("force_reason").is_none_or(|r| r.trim().is_empty()) {
                return Err(ToolError::invalid_argument(
                    "force_reason",
                    "oc_task_run_complete: `force: true` needs a non-empty `force_reason`",
                ));
            }
            let run = runs.complete(
                id,
                status.unwrap_or(Status::Completed),
                if forced { s("force_reason") } else { None },
            )?;
            host.sessions.forget_run(id);
            run
        }
        "oc_task_run_get" => runs.get(id, args["include_events"] == json!(true))?,
        _ => {
            let list = runs.list(status, args["limit"].as_u64().unwrap_or(20) as usize);
            let n = list.len();
            return Ok(json_output(json!({"runs": list}), format!("{n} task runs")));
        }
    };
    let summary = format!(
        "{} {}",
        run["run_id"].as_str().unwrap_or("?"),
        run["status"].as_str().unwrap_or("?")
    );
    Ok(json_output(run, summary))
}

/// `oc_task_run_start`: detect the goal's intent, run the preflight, start.
pub(crate) async fn start_run(
    host: &HostTools,
    args: &Value,
    options: &CallOptions,
) -> Result<ToolOutput, ToolError> {
    let runs = &host.task_runs;
    let goal = args["goal"].as_str().unwrap_or_default();
    let contract = match args.get("bulk_contract").filter(|c| !c.is_null()) {
        Some(spec) => Some(crate::stores::bulk::validate_spec(spec, "bulk_contract.")?),
        None => None,
    };
    let config = &host.intent_guard;
    let verdict = detect_intent(host, goal, options).await;
    let guarded = config.enabled && verdict.label == Label::BrowserAccess;
    let execution = crate::stores::taskrun::Execution {
        intent: verdict.to_json(),
        policy: if guarded { config.to_json() } else { Value::Null },
        ..Default::default()
    };
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
        && let Some(why) = browser_unavailable(host).await
    {
        runs.fail_preflight(&id, &why)?;
        return Err(ToolError::intent_execution_failed(format!("intent_execution_failed: the goal asks for the browser but {why}; the run {id} failed at start"),
        )
        .with("stop_reason", "intent_execution_failed")
        .with("run_id", id.as_str()));
    }
    host.sessions.with(options.session.as_deref(), |s| s.runs.push(id.clone()));
    let summary = format!("{id} PENDING ({})", verdict.label.as_str());
    Ok(json_output(run, summary))
}

async fn detect_intent(host: &HostTools, goal: &str, options: &CallOptions) -> Verdict {
    if let Some(d) = &host.intent_detector
        && let Some(mut v) = d.0.detect(goal).await
    {
        v.source = "detector".into();
        return v;
    }
    if let Some(v) = intent::heuristic(goal) {
        return v;
    }
    if host.intent_guard.detector != intent::Detector::Model {
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
async fn browser_unavailable(host: &HostTools) -> Option<String> {
    if !host.browser_tools.get().copied().unwrap_or(false) {
        return Some(
            "no browser tool is enabled on this server (see --tools-only / --disable-tools)".into(),
        );
    }
    match host.browser.tabs().await {
        Ok(_) => None,
        Err(e) => Some(format!("the browser cannot start ({})", e.message)),
    }
}
