//! ochre's `recording` tool group. While a recording runs, the host's pipeline
//! records every tool call (tool, redacted arguments, intent, outcome, URL, tab,
//! the role and name of each ref, optionally a screenshot) under
//! `<data-dir>/recordings/<id>/`. These tools start and stop recordings, list
//! them, export one as JSON or as a self-contained HTML page, and replay one
//! through the host's pipeline (so capability gates, validation and the journal
//! apply), re-finding each ref's element by its recorded role and name.

mod chrome;
mod html;
mod playwright;
mod replay;

use ochre_sdk::recorder::{self, RecordingMeta};
use ochre_sdk::{Output, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// `oc_recording_start` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StartArgs {
    /// A name for it.
    #[schemars(length(min = 1, max = 120))]
    label: Option<String>,
    /// A small screenshot after each step.
    capture_screenshots: Option<bool>,
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// `oc_recording_list` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    /// Default 20.
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
}

/// `oc_recording_export` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExportArgs {
    #[schemars(length(min = 1, max = 64))]
    recording_id: String,
    /// `json` (default), `html` (one self-contained page with screenshots),
    /// `playwright-python` or `playwright-test` (a script for a test suite).
    #[schemars(regex(pattern = r"^(json|html|playwright-python|playwright-test)$"))]
    format: Option<String>,
}

/// `oc_recording_import` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ImportArgs {
    /// Chrome Recorder JSON (object or text).
    recording: Value,
    #[schemars(length(min = 1, max = 120))]
    label: Option<String>,
}

/// `oc_recording_replay` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReplayArgs {
    #[serde(rename = "recordingId")]
    #[schemars(length(min = 1, max = 64))]
    recording_id: String,
    #[serde(rename = "tabId")]
    #[schemars(length(min = 1, max = 16))]
    tab_id: Option<String>,
    /// Parameter values; a secret as "secret:NAME" or "totp:DOMAIN".
    params: Option<std::collections::BTreeMap<String, String>>,
    /// Default true.
    stop_on_error: Option<bool>,
    /// Default 10000.
    #[schemars(range(min = 100, max = 60000))]
    step_timeout_ms: Option<u32>,
    /// Missing target: needs_target (default true).
    heal: Option<bool>,
    /// After needs_target: its step.
    #[schemars(range(min = 1))]
    from_step: Option<u64>,
    /// Recorded ref -> ref now.
    targets: Option<std::collections::BTreeMap<String, String>>,
}

/// The targets a replay was given (recorded ref -> ref now), each new ref
/// parsed: one that is not a ref is refused, naming it, before any step runs.
fn targets_given(
    given: std::collections::BTreeMap<String, String>,
) -> Result<std::collections::BTreeMap<String, ochre_sdk::browser::RefId>, ToolError> {
    given
        .into_iter()
        .map(|(old, new)| match new.parse() {
            Ok(r) => Ok((old, r)),
            Err(why) => Err(ToolError::invalid_argument(&format!("targets.{old}"), why)),
        })
        .collect()
}

fn meta_line(m: &RecordingMeta) -> String {
    let label = m.label.as_ref().map(|l| format!(", {l:?}")).unwrap_or_default();
    format!("{} ({} steps{label})", m.id, m.steps)
}

/// Start recording every tool call (args, intent, outcome, URL) for export or replay.
#[ochre_sdk::tool(name = "oc_recording_start", scope = Local)]
fn start(a: StartArgs) -> Result<Output, ToolError> {
    if a.label.as_deref().is_some_and(|l| l.trim().is_empty()) {
        return Err(ToolError::invalid_argument(
            "label",
            "oc_recording_start: `label` must not be blank",
        ));
    }
    let m =
        recorder::start(a.label.as_deref().map(str::trim), a.capture_screenshots.unwrap_or(false))?;
    let out = json!({
        "recordingId": m.id,
        "label": m.label,
        "capture_screenshots": m.capture_screenshots,
        "started_at": m.started_at,
    });
    Ok(Output::json(&out)?.with_summary(format!("recording {}", meta_line(&m))))
}

/// Stop the running recording; returns its id and step count.
#[ochre_sdk::tool(name = "oc_recording_stop", scope = Local)]
fn stop(_: NoArgs) -> Result<Output, ToolError> {
    let m = recorder::stop()?;
    let out = json!({
        "recordingId": m.id,
        "steps": m.steps,
        "failed_steps": m.failed_steps,
        "final_url": m.final_url,
    });
    Ok(Output::json(&out)?.with_summary(format!("stopped {}", meta_line(&m))))
}

/// Whether a recording is running, and its id and step count.
#[ochre_sdk::tool(name = "oc_recording_status", read_only, tier = 2, scope = Local)]
fn status(_: NoArgs) -> Result<Output, ToolError> {
    match recorder::active() {
        Some(m) => {
            let summary = format!("recording {}", meta_line(&m));
            Ok(Output::json(&json!({"recording": true, "meta": m}))?.with_summary(summary))
        }
        None => Ok(Output::json(&json!({"recording": false}))?.with_summary("not recording")),
    }
}

/// List recordings, newest first (id, label, steps, times).
#[ochre_sdk::tool(name = "oc_recording_list", read_only, tier = 2, scope = Local)]
fn list(a: ListArgs) -> Result<Output, ToolError> {
    let all = recorder::recent(a.limit.unwrap_or(20));
    let n = all.len();
    Ok(Output::json(&json!({"recordings": all}))?.with_summary(format!("{n} recordings")))
}

/// Export a recording: json (steps inline), html (a self-contained timeline page), or a
/// Playwright script for a test suite (playwright-python, playwright-test); returns its path.
#[ochre_sdk::tool(name = "oc_recording_export", tier = 2, scope = Local)]
fn export(a: ExportArgs) -> Result<Output, ToolError> {
    let rec = recorder::load(&a.recording_id)?;
    let steps = rec.steps.len();
    let format = a.format.as_deref().unwrap_or("json");
    if let Some(lang) = playwright::Lang::parse(format) {
        let script = playwright::render(&a.recording_id, &rec, lang);
        let name = lang.file_name(&a.recording_id);
        let path = recorder::save_export(&a.recording_id, &name, script.as_bytes())?;
        let out = json!({
            "recordingId": a.recording_id,
            "format": format,
            "path": path,
            "bytes": script.len(),
            "steps": steps,
            "params": rec.meta.params,
        });
        return Ok(Output::json(&out)?.with_summary(format!("{format} export, {steps} steps")));
    }
    match format {
        "html" => {
            let page = html::render(&a.recording_id, &rec);
            let path = recorder::save_export(&a.recording_id, "recording.html", page.as_bytes())?;
            let out = json!({
                "recordingId": a.recording_id,
                "format": "html",
                "path": path,
                "bytes": page.len(),
                "steps": steps,
            });
            Ok(Output::json(&out)?.with_summary(format!("html export, {steps} steps")))
        }
        _ => {
            let text = serde_json::to_vec_pretty(&rec).unwrap_or_default();
            let path = recorder::save_export(&a.recording_id, "recording.json", &text)?;
            let out = json!({
                "recordingId": a.recording_id,
                "format": "json",
                "path": path,
                "meta": rec.meta,
                "steps": rec.steps,
            });
            Ok(Output::json(&out)?.with_summary(format!("json export, {steps} steps")))
        }
    }
}

/// Import a recording exported from Chrome DevTools' Recorder (JSON) as an ochre
/// recording: replay or export it like any other.
#[ochre_sdk::tool(name = "oc_recording_import", tier = 2, scope = Local)]
fn import(a: ImportArgs) -> Result<Output, ToolError> {
    let rec = match a.recording {
        Value::String(text) => serde_json::from_str(&text)
            .map_err(|e| ToolError::invalid_argument("recording", format!("not JSON: {e}")))?,
        other => other,
    };
    let imported = chrome::convert(&rec)?;
    let label = a.label.unwrap_or(imported.title);
    let meta = ochre_sdk::recordings::import(&label, &imported.steps, &imported.params)?;
    let id = meta.id;
    let n = imported.steps.len();
    let out = json!({
        "recordingId": id,
        "label": label,
        "steps": n,
        "params": meta.params,
        "skipped": imported.skipped,
        "next": format!("replay it with oc_recording_replay {{\"recordingId\": \"{id}\"}} (params to change its values)"),
    });
    Ok(Output::json(&out)?.with_summary(format!("imported {id}: {n} steps")))
}

/// Re-run a recording's steps through the normal pipeline with new parameter values,
/// re-finding elements by role and name; reports each step and the first failure.
#[ochre_sdk::tool(name = "oc_recording_replay", tier = 2, scope = Browser, redact = "params")]
fn replay(a: ReplayArgs) -> Result<Output, ToolError> {
    let rec = recorder::load(&a.recording_id)?;
    let opts = replay::Options {
        tab: a.tab_id,
        params: a.params.unwrap_or_default(),
        stop_on_error: a.stop_on_error.unwrap_or(true),
        step_timeout_ms: u64::from(a.step_timeout_ms.unwrap_or(10_000)),
        heal: a.heal.unwrap_or(true),
        from_step: a.from_step,
        targets: targets_given(a.targets.unwrap_or_default())?,
    };
    let report = replay::run(&a.recording_id, &rec, &opts)?;
    let summary = if report["needs_target"].is_object() {
        format!(
            "replay of {} needs a target at step {}",
            a.recording_id, report["needs_target"]["step"]
        )
    } else {
        format!(
            "replayed {}: {}/{} steps passed{}{}",
            a.recording_id,
            report["steps_passed"],
            report["steps_total"],
            match report["final_url_match"].as_bool() {
                Some(true) => ", final URL matches",
                Some(false) => ", final URL differs",
                None => "",
            },
            match report["healed"]["version"].as_u64() {
                Some(v) => format!("; the repair is saved as version {v}"),
                None => String::new(),
            }
        )
    };
    Ok(Output::json(&report)?.with_summary(summary))
}

ochre_sdk::register_plugin! {
    name: "recording",
    group: "recording",
    interfaces: [recorder, recordings, tools, browser, clock, progress],
    tools: [Start, Stop, Status, List, Export, Import, Replay],
}
