//! `performance_trace`: a tab's timeline as DevTools' Performance panel
//! records it, written as Chrome's trace JSON, read back with the trace
//! engine of DevTools itself (from the npm registry at test time), and the
//! answer's summary checked against what the page did.

use anyhow::{Context, Result};
use ochre_tests::*;
use serde_json::{Value, json};

/// What DevTools' trace engine makes of a trace file: the renderer's main
/// thread's tasks of 250 ms or more (with the functions called in them), the
/// layout shifts it found, the navigations, as JSON. A file it cannot parse
/// fails the script.
fn read_with_trace_engine(path: &str) -> Result<Value> {
    let modules = npm_modules("trace")?;
    let engine = modules.join("@paulirish/trace_engine/analyze-trace.mjs");
    let script = format!(
        r#"
import {{ analyzeTrace }} from {engine};
const {{ parsedTrace }} = await analyzeTrace(process.argv[1]);
const data = parsedTrace.data ?? parsedTrace;
const long = [];
for (const [, thread] of data.Renderer.processes) for (const [, t] of thread.threads) {{
  if (t.name !== 'CrRendererMain') continue;
  for (const e of t.entries) {{
    if (e.name !== 'RunTask' || (e.dur ?? 0) < 250000) continue;
    const inside = t.entries.filter((c) => c.ts >= e.ts && c.ts < e.ts + e.dur && c.name === 'FunctionCall');
    long.push({{ dur_ms: e.dur / 1000, functions: inside.map((c) => c.args?.data?.functionName) }});
  }}
}}
const shifts = data.LayoutShifts.clusters.flatMap((c) => c.events).length;
console.log(JSON.stringify({{ long, shifts, navigations: data.Meta.navigationsByNavigationId.size }}));
"#,
        engine = json!(engine.display().to_string())
    );
    let out = std::process::Command::new("node")
        .args(["--input-type=module", "-e", &script, path])
        .output()
        .context("run node")?;
    anyhow::ensure!(
        out.status.success(),
        "DevTools' trace engine could not read {path}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// A trace of a load and a click whose handler is busy for 300 ms: the file
/// opens in DevTools' trace engine, which finds that task (and the function
/// in it) and the layout shift the page made; the answer names the task,
/// what ran in it, the shift and the paint; and the evidence bundle holds
/// the trace.
#[tokio::test]
async fn a_trace_shows_the_long_task_a_click_started() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("trace");
    let client = stdio_client(data.path(), &[], &[]).await?;
    navigate(&client, "about:blank").await?;
    // Refused before anything starts: stop with nothing running, a bound
    // out of range.
    let none = client.tool("performance_trace", json!({"action": "stop"})).await?;
    assert_eq!(none.is_error, Some(true), "{none:?}");
    let wrong = client.tool("performance_trace", json!({"action": "start", "max_ms": 10})).await?;
    assert_eq!(wrong.is_error, Some(true), "{wrong:?}");
    let status = client.tool_json("performance_trace", json!({"action": "status"})).await?;
    assert_eq!(status["tracing"], false, "a refused start started: {status}");

    let started = client.tool_json("performance_trace", json!({"action": "start"})).await?;
    assert_eq!(started["tracing"], true, "{started}");
    let again = client.tool("performance_trace", json!({"action": "start"})).await?;
    assert_eq!(again.is_error, Some(true), "a second start on the tab: {again:?}");
    navigate(&client, &site.url("busy.html")).await?;
    // Chromium records the load's largest paint on a frame after the first
    // paint's, and an input before that frame ends the recording with no
    // candidate (the answer then has no `lcp_ms`, as DevTools shows none):
    // the click waits until the page has reported its largest paint.
    let lcp = "new Promise((done) => new PerformanceObserver((list, o) => { o.disconnect(); \
               done(list.getEntries().length); }).observe({type: 'largest-contentful-paint', buffered: true}))";
    let painted = client.tool_json("javascript_tool", json!({"code": lcp})).await?;
    assert!(painted["value"].as_u64() >= Some(1), "{painted}");
    let snap = snapshot(&client).await?;
    let button = ref_of(&snap, "button", "Crunch the numbers");
    let clicked = client.tool_text("interact", json!({"ref": button})).await?;
    assert!(clicked.contains("Margin: 18.4"), "{clicked}");
    client.tool_text("wait_for", json!({"type": "selector", "value": "#banner"})).await?;
    let out = client.tool_json("performance_trace", json!({"action": "stop"})).await?;
    assert_eq!(out["tracing"], false, "{out}");
    let trace = &out["trace"];
    let path = trace["path"].as_str().with_context(|| format!("no path: {out}"))?;

    // The answer: the task, what ran in it, the shift, the paint.
    let tasks = trace["long_tasks"].as_array().context("long_tasks")?;
    let crunch = tasks
        .iter()
        .find(|t| t["what"].as_str().is_some_and(|w| w.contains("crunchNumbers()")))
        .with_context(|| format!("no long task names crunchNumbers: {trace}"))?;
    let ms = crunch["duration_ms"].as_f64().context("duration")?;
    assert!((295.0..1500.0).contains(&ms), "the busy click's task took {ms} ms: {crunch}");
    let what = crunch["what"].as_str().unwrap_or_default();
    assert!(what.starts_with("a click event: crunchNumbers() ("), "{what}");
    assert!(what.contains("busy.html:"), "{what}");
    assert!(trace["layout_shifts"].as_u64() >= Some(1), "the banner's shift: {trace}");
    assert!(trace["cls"].as_f64() > Some(0.0), "{trace}");
    let lcp = trace["lcp_ms"].as_f64().with_context(|| format!("no LCP: {trace}"))?;
    assert!(lcp > 0.0 && lcp < 10_000.0, "{lcp}");
    // The journal's one line for the stop names it too.
    let j = client.tool_json("oc_journal", json!({"tool": "performance_trace"})).await?;
    let said: Vec<&str> = j["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["summary"].as_str().or_else(|| e["outcome"].as_str()))
        .collect();
    assert!(
        said.iter()
            .any(|s| s.contains("crunchNumbers() (busy.html:") && s.contains("1 layout shift")),
        "{j}"
    );

    // The file: Chrome's trace JSON, as DevTools reads it.
    let text = std::fs::read_to_string(path)?;
    assert_eq!(trace["bytes"].as_u64(), Some(text.len() as u64));
    let doc: Value = serde_json::from_str(&text)?;
    let events = doc["traceEvents"].as_array().context("traceEvents")?;
    assert_eq!(trace["events"].as_u64(), Some(events.len() as u64));
    let read = read_with_trace_engine(path)?;
    let long = read["long"].as_array().context("long")?;
    assert!(
        long.iter().any(|t| {
            t["dur_ms"].as_f64().is_some_and(|d| (d - ms).abs() < 1.0)
                && t["functions"].as_array().is_some_and(|f| f.contains(&json!("crunchNumbers")))
        }),
        "DevTools' engine does not see the {ms} ms task of crunchNumbers: {read}"
    );
    assert!(read["shifts"].as_u64() >= Some(1), "{read}");
    assert!(read["navigations"].as_u64() >= Some(1), "{read}");

    // What an evidence bundle holds: the trace.
    let bundle = client.tool_json("oc_evidence_bundle", json!({"include": ["dom"]})).await?;
    let files: Vec<&str> = bundle["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert!(files.contains(&"trace.json"), "{bundle}");
    let dir = bundle["path"].as_str().context("bundle path")?;
    assert_eq!(std::fs::read_to_string(std::path::Path::new(dir).join("trace.json"))?, text);
    Ok(())
}

/// A trace stops by itself at its time bound; `stop` then answers it, saying
/// why it ended; the tab can be traced again.
#[tokio::test]
async fn a_trace_ends_at_its_time_bound() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("trace-bound");
    let client = stdio_client(data.path(), &[], &[]).await?;
    navigate(&client, &site.url("busy.html")).await?;
    client.tool_json("performance_trace", json!({"action": "start", "max_ms": 1000})).await?;
    // (Bounded: the bound ends it well within this.)
    let mut status = json!(null);
    for _ in 0..100 {
        status = client.tool_json("performance_trace", json!({"action": "status"})).await?;
        if status["tracing"] == false && !status["trace"].is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status["tracing"], false, "still tracing past its bound: {status}");
    let out = client.tool_json("performance_trace", json!({"action": "stop"})).await?;
    let ended = out["trace"]["ended_by"].as_str().unwrap_or_default();
    assert_eq!(ended, "its time bound of 1000 ms", "{out}");
    let ms = out["trace"]["duration_ms"].as_u64().unwrap_or_default();
    assert!((1000..5000).contains(&ms), "{out}");
    let path = out["trace"]["path"].as_str().context("path")?;
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    assert!(doc["traceEvents"].as_array().is_some_and(|e| !e.is_empty()), "{path}");
    let again = client.tool_json("performance_trace", json!({"action": "start"})).await?;
    assert_eq!(again["tracing"], true, "{again}");
    client.tool_json("performance_trace", json!({"action": "stop"})).await?;
    Ok(())
}

/// Chromium traces the whole browser: a trace of one tab says that tab's
/// long tasks, not another's. A second tab traced at the same time gets its
/// own trace, or a plain refusal.
#[tokio::test]
async fn a_trace_says_its_own_tabs_tasks() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("trace-tabs");
    let client = stdio_client(data.path(), &[], &[]).await?;
    navigate(&client, &site.url("busy.html")).await?;
    let first = client.tool_json("tabs_context", json!({})).await?;
    let a = first["tabs"][0]["tabId"].as_str().or(first["tabs"][0]["id"].as_str());
    let a = a.with_context(|| format!("no tab: {first}"))?.to_owned();
    client.tool_json("performance_trace", json!({"action": "start"})).await?;
    let t = client.tool_json("tabs_create", json!({"url": site.url("busy.html")})).await?;
    let b = t["tabId"].as_str().or(t["id"].as_str()).context("the new tab's id")?.to_owned();
    let second = client.tool("performance_trace", json!({"action": "start", "tabId": b})).await?;
    let snap = snapshot_of(&client, &b).await?;
    let crunch = ref_of(&snap, "button", "Crunch the numbers");
    let clicked = client.tool_text("interact", json!({"ref": crunch, "tabId": b})).await?;
    assert!(clicked.contains("Margin: 18.4"), "{clicked}");
    let out = client.tool_json("performance_trace", json!({"action": "stop", "tabId": a})).await?;
    let tasks = out["trace"]["long_tasks"].as_array().context("long_tasks")?;
    assert!(
        tasks.iter().all(|t| !t["what"].as_str().unwrap_or_default().contains("crunchNumbers")),
        "tab {a}'s trace holds the other tab's task: {out}"
    );
    if second.is_error == Some(true) {
        let said = format!("{:?}", second.content);
        println!("a second tab's trace at the same time was refused: {said}");
        assert!(said.contains("Tracing"), "the refusal does not say why: {said}");
    } else {
        println!("a second tab was traced at the same time");
        let out =
            client.tool_json("performance_trace", json!({"action": "stop", "tabId": b})).await?;
        let tasks = out["trace"]["long_tasks"].as_array().context("long_tasks")?;
        assert!(
            tasks.iter().any(|t| t["what"].as_str().unwrap_or_default().contains("crunchNumbers")),
            "tab {b}'s own trace lacks its task: {out}"
        );
    }
    Ok(())
}

/// The read of tab `tab`.
async fn snapshot_of(client: &Client, tab: &str) -> Result<String> {
    client.tool_text("read_page", json!({"tabId": tab})).await
}
