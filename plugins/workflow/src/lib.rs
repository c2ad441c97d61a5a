//! ochre's `workflow` tool group: one task split over parallel workers, each in
//! its own browser context and tab (cookies, storage and cache of its own). The
//! agent (or its sub-agents) drives each worker's tab with the ordinary tools
//! (`tabId`), reports with `worker_update` / `worker_complete`, and collects with
//! `workflow_collect`, which refuses to call the workflow done while workers are
//! missing: the workflow carries a bulk progress contract over its workers (host
//! tools `oc_bulk_progress_*`). Plans (`workflow_save_plan`) are tool-call
//! sequences with `{{param}}` placeholders, replayed on a tab by `execute_plan`
//! through the host's pipeline. State lives in the plugin's key-value store.

mod plan;
mod state;

use ochre_sdk::{Output, ToolError, browser, clock, tools};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use state::{Worker, Workflow};

/// Most workers in one workflow.
const MAX_WORKERS: usize = 16;

/// One worker of `workflow_init`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WorkerSpec {
    #[schemars(length(min = 1, max = 64))]
    name: String,
    /// http(s) or about:blank.
    #[schemars(length(min = 1, max = 4096))]
    url: String,
    #[schemars(length(min = 1, max = 2000))]
    task: String,
    #[schemars(length(max = 2000))]
    success_criteria: Option<String>,
    /// A saved login its tab starts signed in with.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$"))]
    login: Option<String>,
}

/// `workflow_init` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct InitArgs {
    #[schemars(length(min = 1, max = 120))]
    name: String,
    #[schemars(length(min = 1, max = 16))]
    workers: Vec<WorkerSpec>,
    /// Default 300000.
    #[schemars(range(min = 1000, max = 86400000))]
    worker_timeout_ms: Option<u64>,
    /// Default 1800000.
    #[schemars(range(min = 1000, max = 86400000))]
    global_timeout_ms: Option<u64>,
}

/// Arguments naming a workflow (default: the newest one).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WorkflowRef {
    #[schemars(length(min = 1, max = 64))]
    workflow_id: Option<String>,
}

/// `worker_update` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpdateArgs {
    #[schemars(length(min = 1, max = 64))]
    worker_name: String,
    #[schemars(length(min = 1, max = 64))]
    workflow_id: Option<String>,
    /// What the worker did so far.
    #[schemars(length(max = 2000))]
    progress: Option<String>,
    /// Data gathered so far (any JSON).
    extracted_data: Option<Value>,
}

/// Arguments naming one worker.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WorkerRef {
    #[schemars(length(min = 1, max = 64))]
    worker_name: String,
    #[schemars(length(min = 1, max = 64))]
    workflow_id: Option<String>,
}

/// `worker_complete` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CompleteArgs {
    #[schemars(length(min = 1, max = 64))]
    worker_name: String,
    #[schemars(length(min = 1, max = 64))]
    workflow_id: Option<String>,
    /// `SUCCESS`, `PARTIAL` or `FAIL`.
    #[schemars(regex(pattern = r"^(SUCCESS|PARTIAL|FAIL)$"))]
    status: String,
    #[schemars(length(min = 1, max = 4000))]
    result_summary: String,
    extracted_data: Option<Value>,
}

/// A worker's tab: isolated (a browser context of its own), on the least
/// busy browser of a pool.
fn isolated(url: &str, login: Option<&str>) -> browser::ops::NewIsolatedTab {
    browser::ops::NewIsolatedTab {
        url: Some(url.to_owned()),
        spread: Some(true),
        login: login.map(str::to_owned),
    }
}

fn bad(field: &str, msg: impl Into<String>) -> ToolError {
    ToolError::invalid_argument(field, msg)
}

/// Start a workflow of parallel workers: each gets its own isolated browser context and
/// tab (drive it with tabId), reports with worker_update / worker_complete;
/// workflow_collect gathers the results and names missing workers.
#[ochre_sdk::tool(name = "workflow_init", tier = 2, scope = Browser)]
fn init(a: InitArgs) -> Result<Output, ToolError> {
    let mut names = Vec::new();
    for (i, w) in a.workers.iter().enumerate() {
        if names.contains(&w.name) {
            return Err(bad(
                &format!("workers.{i}.name"),
                format!("worker name {:?} is used twice", w.name),
            ));
        }
        let ok =
            w.url == "about:blank" || w.url.starts_with("http://") || w.url.starts_with("https://");
        if !ok {
            return Err(bad(
                &format!("workers.{i}.url"),
                "a worker url must be http(s) or about:blank",
            ));
        }
        names.push(w.name.clone());
    }
    if a.workers.len() > MAX_WORKERS {
        return Err(bad("workers", format!("at most {MAX_WORKERS} workers")));
    }
    let now = clock::now_ms();
    let id = state::new_id(now);
    // One isolated tab per worker; if one cannot open, close the others.
    let mut opened: Vec<String> = Vec::new();
    let mut workers = Vec::with_capacity(a.workers.len());
    for w in a.workers {
        let tab = browser::run(None, &isolated(&w.url, w.login.as_deref()), 30_000);
        let tab = match tab {
            Ok(t) => t,
            Err(e) => {
                for t in &opened {
                    let _ = browser::close_tab(t);
                }
                return Err(ToolError::new(
                    e.code,
                    format!("worker {:?}: cannot open its tab: {}", w.name, e.message),
                ));
            }
        };
        let tab_id = tab.id;
        opened.push(tab_id.clone());
        let mut worker = Worker::new(w.name, w.url, w.task, w.success_criteria, tab_id, now);
        worker.login = w.login;
        workers.push(worker);
    }
    // The contract over the workers: collect cannot pass while one is missing.
    let contract = tools::call(
        "oc_bulk_progress_start",
        &json!({"scope": "workflow", "item_key": "worker", "expected_items": names}),
    )
    .ok()
    .and_then(|c| c.structured)
    .and_then(|c| c["contract_id"].as_str().map(str::to_owned));
    let mut wf = Workflow {
        id: id.clone(),
        name: a.name,
        created_ms: now,
        worker_timeout_ms: a.worker_timeout_ms.unwrap_or(300_000),
        global_timeout_ms: a.global_timeout_ms.unwrap_or(1_800_000),
        contract_id: contract.clone(),
        worker_count: workers.len(),
        workers,
    };
    wf.save()?;
    let body = json!({
        "workflowId": id,
        "name": wf.name,
        "contract_id": contract,
        "workers": wf.workers.iter().map(|w| json!({"name": w.name, "tabId": w.tab_id, "url": w.url, "task": w.task})).collect::<Vec<_>>(),
        "next": "drive each worker's tab with tabId; report with worker_update and worker_complete; then workflow_collect (a worker whose tab is gone, its browser having gone away, gets a new one with worker_reopen)",
    });
    Ok(Output::json(&body)?
        .with_summary(format!("{id}: {} workers in isolated tabs", wf.workers.len())))
}

/// A workflow's workers: status, progress, tab, time used (TIMED_OUT past the limit).
#[ochre_sdk::tool(name = "workflow_status", read_only, tier = 2, scope = Local)]
fn status(a: WorkflowRef) -> Result<Output, ToolError> {
    let wf = Workflow::load(a.workflow_id.as_deref())?;
    let now = clock::now_ms();
    let body = wf.status_json(now);
    let summary = format!(
        "{}: {} of {} workers done",
        wf.id,
        wf.workers.iter().filter(|w| w.is_done()).count(),
        wf.workers.len()
    );
    Ok(Output::json(&body)?.with_summary(summary))
}

/// All workers' results, once every worker is complete (or timed out); before that,
/// WORKFLOW_INCOMPLETE naming the missing workers.
#[ochre_sdk::tool(name = "workflow_collect", read_only, tier = 2, scope = Local)]
fn collect(a: WorkflowRef) -> Result<Output, ToolError> {
    let wf = Workflow::load(a.workflow_id.as_deref())?;
    let now = clock::now_ms();
    let guard = wf.contract_guard();
    let names = wf.pending(now);
    if !names.is_empty() {
        return Err(ToolError::workflow_incomplete(format!(
                "{} of {} workers have not completed: {}; finish them (worker_complete) or use workflow_collect_partial",
                names.len(),
                wf.workers.len(),
                names.join(", ")
            ),
        )
        .with_details(json!({
            "workflowId": wf.id,
            "missing_workers": names,
            "missing_count": names.len(),
            "completed_count": wf.workers.len() - names.len(),
            "completion_guard": guard,
        })));
    }
    let results: Vec<Value> = wf.workers.iter().map(|w| w.result_json(now, &wf)).collect();
    let ok = wf.workers.iter().filter(|w| w.status == "SUCCESS").count();
    let body = json!({
        "workflowId": wf.id,
        "name": wf.name,
        "complete": true,
        "results": results,
        "completion_guard": guard,
    });
    Ok(Output::json(&body)?.with_summary(format!(
        "{}: {ok} of {} workers succeeded",
        wf.id,
        wf.workers.len()
    )))
}

/// The results of the workers done so far, and the names of those still running.
#[ochre_sdk::tool(name = "workflow_collect_partial", read_only, tier = 2, scope = Local)]
fn collect_partial(a: WorkflowRef) -> Result<Output, ToolError> {
    let wf = Workflow::load(a.workflow_id.as_deref())?;
    let now = clock::now_ms();
    let pending = wf.pending(now);
    let done: Vec<Value> = wf
        .workers
        .iter()
        .filter(|w| !pending.contains(&w.name.as_str()))
        .map(|w| w.result_json(now, &wf))
        .collect();
    let body = json!({
        "workflowId": wf.id,
        "complete": pending.is_empty(),
        "results": done,
        "pending_workers": pending,
    });
    Ok(Output::json(&body)?.with_summary(format!(
        "{}: {} done, {} pending",
        wf.id,
        done.len(),
        pending.len()
    )))
}

/// Close a workflow's worker tabs and their browser contexts, and forget the workflow.
#[ochre_sdk::tool(name = "workflow_cleanup", destructive, tier = 2, scope = Browser)]
fn cleanup(a: WorkflowRef) -> Result<Output, ToolError> {
    let wf = Workflow::load(a.workflow_id.as_deref())?;
    let mut closed = Vec::new();
    for w in &wf.workers {
        if browser::close_tab(&w.tab_id).is_ok() {
            closed.push(w.tab_id.clone());
        }
    }
    wf.delete()?;
    let body = json!({"workflowId": wf.id, "closed_tabs": closed});
    Ok(Output::json(&body)?.with_summary(format!("{}: {} tabs closed", wf.id, closed.len())))
}

/// Give a running worker a new isolated tab at its start URL: for a worker whose
/// tab is gone (its browser went away). In a pool of browsers the tab opens on one
/// that is up. The worker keeps its progress and data; its old tab is closed if it
/// still exists.
#[ochre_sdk::tool(name = "worker_reopen", tier = 2, scope = Browser)]
fn reopen(a: WorkerRef) -> Result<Output, ToolError> {
    let mut wf = Workflow::load(a.workflow_id.as_deref())?;
    let n = wf.running_worker(&a.worker_name)?;
    let w = &mut wf.workers[n];
    let tab = browser::run(None, &isolated(&w.url, w.login.as_deref()), 30_000)?;
    let new_tab = tab.id;
    let old_tab = std::mem::replace(&mut w.tab_id, new_tab.clone());
    let _ = browser::close_tab(&old_tab);
    w.updated_ms = clock::now_ms();
    let line =
        format!("{}: worker {} reopened in tab {new_tab} (was {old_tab})", wf.id, a.worker_name);
    wf.save_worker(n)?;
    let body = json!({"workflowId": wf.id, "worker": a.worker_name, "tabId": new_tab, "previousTabId": old_tab, "url": tab.url});
    Ok(Output::json(&body)?.with_summary(line))
}

/// Report a worker's progress and the data it has so far.
#[ochre_sdk::tool(name = "worker_update", tier = 2, scope = Local)]
fn update(a: UpdateArgs) -> Result<Output, ToolError> {
    let mut wf = Workflow::load(a.workflow_id.as_deref())?;
    let now = clock::now_ms();
    let n = wf.running_worker(&a.worker_name)?;
    let w = &mut wf.workers[n];
    if let Some(p) = a.progress {
        w.progress = Some(p);
    }
    if let Some(d) = a.extracted_data {
        w.extracted_data = Some(d);
    }
    w.updates += 1;
    w.updated_ms = now;
    let line = format!("{}: worker {} updated", wf.id, a.worker_name);
    wf.save_worker(n)?;
    Ok(Output::text(line.clone()).with_summary(line))
}

/// End a worker: SUCCESS, PARTIAL or FAIL, with a summary and its data.
#[ochre_sdk::tool(name = "worker_complete", tier = 2, scope = Local)]
fn complete(a: CompleteArgs) -> Result<Output, ToolError> {
    let mut wf = Workflow::load(a.workflow_id.as_deref())?;
    let now = clock::now_ms();
    let contract = wf.contract_id.clone();
    let n = wf.running_worker(&a.worker_name)?;
    let w = &mut wf.workers[n];
    w.status = a.status.clone();
    w.result_summary = Some(a.result_summary.clone());
    if let Some(d) = a.extracted_data {
        w.extracted_data = Some(d);
    }
    w.completed_ms = Some(now);
    w.updated_ms = now;
    let name = w.name.clone();
    wf.save_worker(n)?;
    if let Some(c) = contract {
        let update = if a.status == "FAIL" {
            json!({"contract_id": c, "failed": [{"item": name, "reason": a.result_summary}]})
        } else {
            json!({"contract_id": c, "completed": [name]})
        };
        if let Err(e) = tools::call("oc_bulk_progress_update", &update) {
            ochre_sdk::log::warn(&format!("cannot record worker {name}: {e}"));
        }
    }
    let done = wf.workers.iter().filter(|w| w.is_done()).count();
    let line =
        format!("{}: worker {name} {} ({done} of {} done)", wf.id, a.status, wf.workers.len());
    Ok(Output::text(line.clone()).with_summary(line))
}

ochre_sdk::register_plugin! {
    name: "workflow",
    group: "workflow",
    interfaces: [browser, kv, clock, tools, logging, progress],
    tools: [Init, Status, Collect, CollectPartial, Cleanup, Reopen, Update, Complete, plan::SavePlan, plan::ExecutePlan],
}
