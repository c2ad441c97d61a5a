//! The guards' control plane: the `oc_task_run_*` tools (tier 2 until the
//! intent guard and hints make them part of every task; they are callable
//! all the same) and the `oc_bulk_progress_*` tools. Both are offered
//! whatever capability groups are enabled.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{HostTools, Made, Offer};
use crate::browser::HostBrowser;
use crate::error::ToolError;
use crate::intent::{self, Label, Verdict};
use crate::stores::bulk::{self, MAX_EXPECTED_ITEMS, MAX_TOTAL, Progress};
use crate::stores::taskrun::Status;
use crate::tool::{CallOptions, ToolOutput, json_output};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunStart {
    #[schemars(length(min = 1, max = 2000))]
    goal: String,
    #[schemars(length(min = 1, max = 2000))]
    success_criteria: Option<String>,
    #[schemars(length(min = 1, max = 4096))]
    page_url: Option<String>,
    /// the fields of oc_bulk_progress_start
    bulk_contract: Option<serde_json::Map<String, Value>>,
}

/// An item that failed, and why.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunFailed {
    #[schemars(length(min = 1, max = 1000))]
    item: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    reason: Option<String>,
}

/// The progress a run reports (the run's store reads it as JSON).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunUpdate {
    #[schemars(length(max = 64))]
    run_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2000))]
    progress_summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000), inner(length(min = 1, max = 1000)))]
    completed_items: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    failed_items: Option<Vec<RunFailed>>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    current_cursor: Value,
    /// the contract's stop condition holds
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_satisfied: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunCheckpoint {
    #[schemars(length(max = 64))]
    run_id: String,
    #[schemars(length(min = 1, max = 2000))]
    summary: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunNeedsHelp {
    #[schemars(length(max = 64))]
    run_id: String,
    #[schemars(length(min = 1, max = 2000))]
    reason: String,
    #[schemars(length(min = 1, max = 2000))]
    resume_hint: Option<String>,
}

// How a run ends (no docs here or below: a listed enum is its names).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(inline)]
pub(super) enum Ending {
    Completed,
    Failed,
    Cancelled,
}

impl From<Ending> for Status {
    fn from(e: Ending) -> Status {
        match e {
            Ending::Completed => Status::Completed,
            Ending::Failed => Status::Failed,
            Ending::Cancelled => Status::Cancelled,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunEnd {
    #[schemars(length(max = 64))]
    run_id: String,
    status: Ending,
    force: Option<bool>,
    #[schemars(length(min = 1, max = 2000))]
    force_reason: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunGet {
    #[schemars(length(max = 64))]
    run_id: String,
    include_events: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunList {
    #[serde(default)]
    #[schemars(schema_with = "status_names")]
    status: Option<Status>,
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u64>,
}

/// A status as a list takes it: one of its names (a listed enum is its names).
fn status_names(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
    schemars::json_schema!({"type": "string", "enum": names})
}

/// A bulk contract's terms (its store validates them as JSON).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct BulkStart {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = bulk::SCOPES))]
    scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_TOTAL))]
    expected_total: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_EXPECTED_ITEMS), inner(length(min = 1, max = 1000)))]
    expected_items: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_completed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    allow_partial: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 500))]
    stop_condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    item_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2000))]
    cursor: Option<String>,
}

/// An item that failed, why, and whether trying again may help.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct BulkFailed {
    #[schemars(length(min = 1, max = 1000))]
    item: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retryable: Option<bool>,
}

/// The progress a contract records (its store reads it as JSON).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct BulkUpdate {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    contract_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000), inner(length(min = 1, max = 1000)))]
    completed: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    failed: Option<Vec<BulkFailed>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2000))]
    cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_satisfied: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct BulkCheck {
    #[schemars(length(max = 64))]
    contract_id: Option<String>,
    #[schemars(length(max = 64))]
    run_id: Option<String>,
    include_items: Option<bool>,
}

pub(super) fn add(made: &mut Made) {
    add_task_runs(made);
    made.add(
        "oc_bulk_progress_start",
        "Start a bulk progress contract for repetitive work (URLs, pages, rows): completion is refused while items are missing. Give expected_total/expected_items or a stop_condition; run_id attaches it to a run; tools called with contract_id record their items in it.",
        Offer::control(false).always(),
        |host, args: BulkStart, _| async move { bulk_start(&host, &args) },
    );
    made.add(
        "oc_bulk_progress_update",
        "Record items completed or failed (deduplicated; a failed item that completes moves over), the cursor, and whether the stop condition holds.",
        Offer::control(false).always(),
        |host, args: BulkUpdate, _| async move {
            const NAME: &str = "oc_bulk_progress_update";
            let id = contract_of(&host, NAME, args.contract_id.as_deref(), args.run_id.as_deref())?;
            let p = Progress::from_args(&as_json(&args)?);
            if p.is_empty() {
                return Err(ToolError::invalid_argument(
                    "completed",
                    format!(
                        "{NAME}: nothing to record: pass completed, failed, cursor or stop_satisfied"
                    ),
                ));
            }
            let c = host.task_runs.contracts.update(&id, &p)?;
            Ok(contract_answer(&id, &c, false))
        },
    );
    made.add(
        "oc_bulk_progress_check",
        "A contract's counts and its completion guard (allowed, missing_count, suggested_next_action); items on request.",
        Offer::control(true).always(),
        |host, args: BulkCheck, _| async move {
            const NAME: &str = "oc_bulk_progress_check";
            let id = contract_of(&host, NAME, args.contract_id.as_deref(), args.run_id.as_deref())?;
            let c = host.task_runs.contracts.load(&id)?;
            Ok(contract_answer(&id, &c, args.include_items == Some(true)))
        },
    );
}

fn add_task_runs(made: &mut Made) {
    made.add(
        "oc_task_run_start",
        "Start a task run for a goal; report progress with oc_task_run_update and end it with oc_task_run_complete. \
         For repetitive work pass bulk_contract so the run cannot complete while items are missing.",
        Offer::control(false).always(),
        |host, args: RunStart, options| async move { start_run(&host, &args, &options).await },
    );
    made.add(
        "oc_task_run_update",
        "Report a run's progress: a summary, items done or failed (deduplicated), a cursor to resume from.",
        Offer::control(false).always(),
        |host, args: RunUpdate, _| async move {
            let run = host.task_runs.update(&args.run_id, &as_json(&args)?)?;
            Ok(run_answer(run))
        },
    );
    made.add(
        "oc_task_run_checkpoint",
        "Record a checkpoint summary of a run (resumes a run that needed help).",
        Offer::control(false).always(),
        |host, args: RunCheckpoint, _| async move {
            Ok(run_answer(host.task_runs.checkpoint(&args.run_id, &args.summary)?))
        },
    );
    made.add(
        "oc_task_run_needs_help",
        "Mark a run as needing a person, with the reason and how to resume.",
        Offer::control(false).always(),
        |host, args: RunNeedsHelp, _| async move {
            let hint = args.resume_hint.as_deref();
            Ok(run_answer(host.task_runs.needs_help(&args.run_id, &args.reason, hint)?))
        },
    );
    made.add(
        "oc_task_run_complete",
        "End a run: COMPLETED, FAILED or CANCELLED. A finished run cannot change. COMPLETED is refused while the run's bulk contract has missing items (force + force_reason overrides).",
        Offer::control(false).always(),
        |host, args: RunEnd, _| async move { end_run(&host, &args) },
    );
    made.add(
        "oc_task_run_get",
        "A run's state (and its events on request).",
        Offer::control(true).always(),
        |host, args: RunGet, _| async move {
            let events = args.include_events == Some(true);
            Ok(run_answer(host.task_runs.get(&args.run_id, events)?))
        },
    );
    made.add(
        "oc_task_run_list",
        "Task runs, newest first, optionally of one status.",
        Offer::control(true).always(),
        |host, args: RunList, _| async move {
            let limit = usize::try_from(args.limit.unwrap_or(20)).unwrap_or(100);
            let list = host.task_runs.list(args.status, limit);
            let n = list.len();
            Ok(json_output(json!({"runs": list}), format!("{n} task runs")))
        },
    );
}

/// Arguments as the JSON their store reads.
fn as_json(args: &impl Serialize) -> Result<Value, ToolError> {
    serde_json::to_value(args).map_err(|e| ToolError::internal(format!("arguments: {e}")))
}

/// A run's state as the answer: its id and status first.
fn run_answer(run: Value) -> ToolOutput {
    let summary = format!(
        "{} {}",
        run["run_id"].as_str().unwrap_or("?"),
        run["status"].as_str().unwrap_or("?")
    );
    json_output(run, summary)
}

/// `oc_task_run_complete`.
fn end_run(host: &HostTools, args: &RunEnd) -> Result<ToolOutput, ToolError> {
    let forced = args.force == Some(true);
    let reason = args.force_reason.as_deref().filter(|r| !r.trim().is_empty());
    if forced && reason.is_none() {
        return Err(ToolError::invalid_argument(
            "force_reason",
            "oc_task_run_complete: `force: true` needs a non-empty `force_reason`",
        ));
    }
    let run = host.task_runs.complete(
        &args.run_id,
        args.status.into(),
        if forced { args.force_reason.as_deref() } else { None },
    )?;
    host.sessions.forget_run(&args.run_id);
    Ok(run_answer(run))
}

/// `oc_bulk_progress_start`: a contract on its own, or attached to run `run_id`.
fn bulk_start(host: &HostTools, args: &BulkStart) -> Result<ToolOutput, ToolError> {
    let runs = &host.task_runs;
    let mut spec = as_json(args)?;
    if let Value::Object(m) = &mut spec {
        m.remove("run_id");
    }
    let spec = bulk::validate_spec(&spec, "")?;
    let c = match &args.run_id {
        Some(r) => runs.attach_contract(r, spec)?,
        None => runs.contracts.create(spec, None)?,
    };
    let summary = format!("{} started", c.contract_id);
    Ok(json_output(bulk::view(&c, false), summary))
}

/// The contract a call names: by its id, or the one of run `run_id`.
fn contract_of(
    host: &HostTools,
    name: &str,
    contract_id: Option<&str>,
    run_id: Option<&str>,
) -> Result<String, ToolError> {
    match (contract_id, run_id) {
        (Some(c), _) => Ok(c.to_owned()),
        (None, Some(r)) => host.task_runs.load(r)?.bulk_contract_id.ok_or_else(|| {
            ToolError::contract_not_found(format!("{name}: task run {r} has no bulk contract (oc_bulk_progress_start with run_id adds one)"))
            .with("run_id", r)
        }),
        (None, None) => Err(ToolError::invalid_argument(
            "contract_id",
            format!("{name}: pass `contract_id` (or the `run_id` of a run with a contract)"),
        )),
    }
}

/// A contract's counts and guard as the answer.
fn contract_answer(id: &str, c: &bulk::Contract, items: bool) -> ToolOutput {
    let g = bulk::check(c);
    let summary = format!(
        "{id} {} completed, {} failed, {}",
        c.completed_count,
        c.failed_count,
        if g.allowed { "complete" } else { "incomplete" }
    );
    json_output(bulk::view(c, items), summary)
}

/// `oc_task_run_start`: detect the goal's intent, run the preflight, start.
async fn start_run(
    host: &HostTools,
    args: &RunStart,
    options: &CallOptions,
) -> Result<ToolOutput, ToolError> {
    let runs = &host.task_runs;
    let contract = match &args.bulk_contract {
        Some(spec) => Some(bulk::validate_spec(&Value::Object(spec.clone()), "bulk_contract.")?),
        None => None,
    };
    let config = &host.intent_guard;
    let verdict = detect_intent(host, &args.goal, options).await;
    let guarded = config.enabled && verdict.label == Label::BrowserAccess;
    let execution = crate::stores::taskrun::Execution {
        intent: verdict.to_json(),
        policy: if guarded { config.to_json() } else { Value::Null },
        ..Default::default()
    };
    let run = runs.start(
        &args.goal,
        args.success_criteria.as_deref(),
        args.page_url.as_deref(),
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
