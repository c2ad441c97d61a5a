//! The capability-gated tool surface (seed 001) and the `recording` group, over
//! MCP against real headless Chromium and the fixture sites: the seed's six
//! scenarios (the golden default list is `catalogue.rs`), `--slim`, startup
//! errors for conflicting flags, and record → export → replay.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use ochre_tests::*;
use serde_json::{Value, json};

/// name -> group, from `ochre tools --json` (every group enabled).
fn catalogue() -> Result<BTreeMap<String, (String, u64)>> {
    let data = TempDir::new("surface-cat");
    let out = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["tools", "--json"])
        .output()?;
    assert!(out.status.success());
    let all: Vec<Value> = serde_json::from_slice(&out.stdout)?;
    Ok(all
        .into_iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or_default().to_owned(),
                (
                    t["group"].as_str().unwrap_or_default().to_owned(),
                    t["tier"].as_u64().unwrap_or(0),
                ),
            )
        })
        .collect())
}

/// Run `ochre <args> tools` and expect a clean startup error.
fn startup_error(args: &[&str]) -> String {
    let data = TempDir::new("surface-flags");
    let out = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(args)
        .arg("tools")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("run ochre");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(out.stdout.is_empty(), "{args:?} printed a catalogue");
    assert!(
        err.starts_with("error: ") && !err.contains("backtrace") && err.lines().count() <= 5,
        "not a clean error: {err}"
    );
    err
}

fn names_of(tools: &[rmcp::model::Tool]) -> BTreeSet<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

/// Scenarios 2, 3 and 5: what each filter lists, and what it costs in bytes.
#[tokio::test]
async fn capability_filters_define_the_listed_surface_within_budget() -> Result<()> {
    let cat = catalogue()?;
    let group = |n: &str| cat.get(n).map(|(g, _)| g.as_str()).unwrap_or("core");

    let data = TempDir::new("surface-default");
    let client = stdio_client(data.path(), &[], &[]).await?;
    let default = client.list_all_tools().await?;
    client.cancel().await?;
    let default_names = names_of(&default);
    let default_bytes = serde_json::to_vec(&default)?.len();
    for g in ["storage", "profile", "totp", "recording"] {
        assert!(
            default_names.iter().any(|n| group(n) == g),
            "the default list has no {g} tool: {default_names:?}"
        );
    }

    // 2. --tools-only core: only core tools, and no other plugin instantiated.
    let client = stdio_client(data.path(), &["--tools-only", "core"], &[]).await?;
    let core = client.list_all_tools().await?;
    client.cancel().await?;
    let stray: Vec<String> = names_of(&core).into_iter().filter(|n| group(n) != "core").collect();
    assert!(stray.is_empty(), "non-core tools listed: {stray:?}");
    let out = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["plugins", "list", "--json", "--tools-only", "core"])
        .output()?;
    let plugins: Vec<Value> = serde_json::from_slice(&out.stdout)?;
    for p in &plugins {
        if p["group"] == "core" {
            assert_eq!(p["status"], "loaded", "{p}");
        } else {
            assert_eq!(p["status"], "disabled", "{p}");
            assert_eq!(p["instantiations"], 0, "{p}");
        }
    }
    assert!(plugins.iter().any(|p| p["name"] == "recording"));

    // 3. --disable-tools workflow,recording: the default list minus those groups.
    let client = stdio_client(data.path(), &["--disable-tools", "workflow,recording"], &[]).await?;
    let fewer = names_of(&client.list_all_tools().await?);
    client.cancel().await?;
    let want: BTreeSet<String> = default_names
        .iter()
        .filter(|n| !matches!(group(n), "workflow" | "recording"))
        .cloned()
        .collect();
    assert_eq!(fewer, want);
    assert!(fewer.len() < default_names.len());

    // 5. Bytes: the default within 12,000; core alone at least 25% smaller.
    let core_bytes = serde_json::to_vec(&core)?.len();
    eprintln!(
        "tools/list bytes: default {default_bytes} ({} tools), --tools-only core {core_bytes} ({} tools), {:.1}% smaller",
        default.len(),
        core.len(),
        100.0 * (1.0 - core_bytes as f64 / default_bytes as f64)
    );
    assert!(default_bytes <= 12_000, "default: {default_bytes} bytes");
    assert!(
        core_bytes * 4 <= default_bytes * 3,
        "core {core_bytes} is not 25% below default {default_bytes}"
    );
    Ok(())
}

/// Scenario 4: a tool of an excluded group cannot be revealed, even one whose
/// group this build does not ship yet.
#[tokio::test]
async fn expanding_a_tool_of_an_excluded_group_is_capability_disabled() -> Result<()> {
    let data = TempDir::new("surface-expand");
    let client = stdio_client(data.path(), &["--tools-only", "core"], &[]).await?;
    for (tool, group) in [
        ("workflow_init", "workflow"),
        ("oc_recording_start", "recording"),
        ("crawl_sitemap", "crawl"),
    ] {
        let err = client.tool_error("expand_tools", json!({"name": tool})).await?;
        assert_eq!(
            (err["code"].as_str(), err["capability"].as_str()),
            (Some("CAPABILITY_DISABLED"), Some(group)),
            "{err}"
        );
        let err = client.tool_error(tool, json!({})).await?;
        assert_eq!(err["code"], "CAPABILITY_DISABLED", "{err}");
        assert!(!tool_names(&client).await?.contains(&tool.to_owned()));
    }
    client.cancel().await?;
    Ok(())
}

/// `--slim`: core tier 1 and nothing to expand; conflicting or unknown flags are
/// clean startup errors.
#[tokio::test]
async fn slim_lists_core_tier_one_and_bad_flags_fail_cleanly() -> Result<()> {
    let cat = catalogue()?;
    let data = TempDir::new("surface-slim");
    let client = stdio_client(data.path(), &["--slim"], &[]).await?;
    let names = tool_names(&client).await?;
    let want: Vec<&String> = cat
        .iter()
        .filter(|(n, (g, t))| g == "core" && *t == 1 && *n != "expand_tools")
        .map(|(n, _)| n)
        .collect();
    let mut got: Vec<&String> = names.iter().collect();
    got.sort();
    assert_eq!(got, want);
    let err = client.tool_error("page_screenshot", json!({})).await?;
    assert_eq!(
        (err["code"].as_str(), err["capability"].as_str()),
        (Some("CAPABILITY_DISABLED"), Some("core"))
    );
    assert!(err["message"].as_str().unwrap_or("").contains("--slim"), "{err}");
    let err = client.tool_error("oc_totp_generate", json!({})).await?;
    assert_eq!(err["capability"], "totp");
    client.cancel().await?;

    let e = startup_error(&["--slim", "--tools-only", "core"]);
    assert!(e.contains("--slim") && e.contains("--tools-only"), "{e}");
    let e = startup_error(&["--slim", "--disable-tools", "totp"]);
    assert!(e.contains("--slim") && e.contains("--disable-tools"), "{e}");
    let e = startup_error(&["--tools-only", "core", "--disable-tools", "totp"]);
    assert!(e.contains("cannot be used with"), "{e}");
    let e = startup_error(&["--tools-only", "core,bogus"]);
    assert!(e.contains("bogus") && e.contains("recording"), "{e}");
    let e = startup_error(&["--disable-tools", "nope"]);
    assert!(e.contains("nope"), "{e}");
    Ok(())
}

/// Scenario 6, and what a recording holds: record navigate -> read_page ->
/// interact on a link (with screenshots); export it; replay it in the same
/// server (the recorded ref is stale there) and in a `--tools-only core,recording`
/// server.
#[tokio::test]
async fn a_recording_replays_under_a_narrower_surface() -> Result<()> {
    let (site, data, client) = site_and_client("surface-record", &[]).await?;

    let err = client.tool_error("oc_recording_stop", json!({})).await?;
    assert_eq!(err["code"], "NOT_RECORDING");
    let started = client
        .tool_json(
            "oc_recording_start",
            json!({"label": "follow <the> link", "capture_screenshots": true}),
        )
        .await?;
    let id = started["recordingId"].as_str().expect("id").to_owned();
    let err = client.tool_error("oc_recording_start", json!({})).await?;
    assert_eq!(err["code"], "RECORDING_ACTIVE");
    let status = client.tool_json("oc_recording_status", json!({})).await?;
    assert_eq!(status["recording"], true);

    navigate(&client, &site.url("index.html")).await?;
    let snap = client.tool("read_page", json!({})).await?;
    let snap = snap.content[0].as_text().expect("text").text.clone();
    let link = snap
        .lines()
        .find(|l| l.contains("link \"Go to page two\""))
        .and_then(|l| l.split_whitespace().find(|w| w.starts_with("ax_")))
        .expect("link ref")
        .to_owned();
    let res = client.tool("interact", json!({"ref": link, "intent": "open page two"})).await?;
    assert_ne!(res.is_error, Some(true), "{res:?}");
    let stopped = client.tool_json("oc_recording_stop", json!({})).await?;
    assert_eq!(stopped["steps"], 3, "{stopped}");

    // On disk: metadata, one line per step (the recording tools not among them),
    // a screenshot per step.
    let dir = data.path().join("recordings").join(&id);
    let meta: Value = serde_json::from_slice(&std::fs::read(dir.join("meta.json"))?)?;
    assert_eq!(meta["status"], "stopped");
    assert_eq!(meta["final_url"], site.url("page2.html"));
    let steps: Vec<Value> = std::fs::read_to_string(dir.join("actions.jsonl"))?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let tools: Vec<&str> = steps.iter().filter_map(|s| s["tool"].as_str()).collect();
    assert_eq!(tools, ["navigate", "read_page", "interact"]);
    let click = &steps[2];
    assert_eq!(click["intent"], "open page two");
    assert_eq!(click["ok"], true);
    assert_eq!(click["tab"], "t1");
    assert_eq!(click["url"], site.url("page2.html"));
    assert_eq!(click["args"], json!({"ref": link}));
    assert_eq!(click["targets"][&link]["role"], "link");
    assert_eq!(click["targets"][&link]["name"], "Go to page two");
    for s in &steps {
        let shot = s["screenshot"].as_str().expect("screenshot");
        let bytes = std::fs::read(dir.join(shot))?;
        assert_eq!(&bytes[..2], [0xFF, 0xD8], "{shot} is not a JPEG");
    }

    // Exports: JSON inline, HTML as one self-contained file.
    let j = client
        .tool_json("oc_recording_export", json!({"recordingId": id, "format": "json"}))
        .await?;
    assert_eq!(j["steps"].as_array().map(Vec::len), Some(3));
    let h = client
        .tool_json("oc_recording_export", json!({"recordingId": id, "format": "html"}))
        .await?;
    let html = std::fs::read_to_string(h["path"].as_str().expect("path"))?;
    assert!(html.starts_with("<!doctype html>"));
    assert_eq!(html.matches("data:image/jpeg;base64,").count(), 3);
    assert!(html.contains("intent: open page two"));
    assert!(html.contains("follow &lt;the&gt; link") && !html.contains("<the>"));
    assert!(!html.contains("<script") && !html.contains("src=\"http"));
    let err = client
        .tool_error("oc_recording_export", json!({"recordingId": id, "format": "pdf"}))
        .await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    let listed = client.tool_json("oc_recording_list", json!({"limit": 5})).await?;
    assert_eq!(listed["recordings"][0]["id"], id.as_str());

    // Replay here: the page is a new document, the recorded ref is stale, and the
    // link is found again by its role and name.
    let r = client.tool_json("oc_recording_replay", json!({"recordingId": id})).await?;
    assert_eq!((r["steps_passed"].as_u64(), r["ok"].as_bool()), (Some(3), Some(true)), "{r}");
    let new_ref = r["steps"][2]["refs"][&link].as_str().expect("remapped");
    assert_ne!(new_ref, link, "{r}");
    assert_eq!(r["final_url_match"], true);
    let err = client.tool_error("oc_recording_replay", json!({"recordingId": "../../etc"})).await?;
    assert_eq!(err["code"], "RECORDING_NOT_FOUND");
    client.cancel().await?;

    // Scenario 6 proper: a narrower server replays it with no capability or
    // unknown-tool errors, and ends where the recording ended.
    let client = stdio_client(data.path(), &["--tools-only", "core,recording"], &[]).await?;
    let r = client.tool_json("oc_recording_replay", json!({"recordingId": id})).await?;
    assert_eq!(r["steps_run"], 3, "{r}");
    assert_eq!(r["steps_passed"], 3, "{r}");
    assert_eq!(r["first_failure"], Value::Null);
    assert_eq!(r["final_url_match"], true, "{r}");
    assert_eq!(r["final_url"], site.url("page2.html"));
    // The replayed calls went through the pipeline: they are in this server's journal.
    let j = client.tool_json("oc_journal", json!({"count": 10})).await?;
    let journaled: Vec<&str> = j["entries"]
        .as_array()
        .or_else(|| j["calls"].as_array())
        .map(|a| a.iter().filter_map(|e| e["tool"].as_str()).collect())
        .unwrap_or_default();
    for t in ["navigate", "read_page", "interact"] {
        assert!(journaled.contains(&t), "{t} not journaled: {j}");
    }
    client.cancel().await?;
    Ok(())
}

/// A step whose group the replaying server disabled is reported as
/// `CAPABILITY_DISABLED`; with `stop_on_error: false` the rest still runs.
#[tokio::test]
async fn replaying_a_step_of_a_disabled_group_reports_it() -> Result<()> {
    let (site, data, client) = site_and_client("surface-replay-disabled", &[]).await?;
    let id = client.tool_json("oc_recording_start", json!({})).await?["recordingId"]
        .as_str()
        .expect("id")
        .to_owned();
    navigate(&client, &site.url("index.html")).await?;
    let res = client.tool("cookies", json!({"action": "get"})).await?;
    assert_ne!(res.is_error, Some(true), "{res:?}");
    client.tool("read_page", json!({"filter": "interactive"})).await?;
    client.tool("oc_recording_stop", json!({})).await?;
    client.cancel().await?;

    let client = stdio_client(data.path(), &["--tools-only", "core,recording"], &[]).await?;
    let r = client
        .tool_json("oc_recording_replay", json!({"recordingId": id, "stop_on_error": false}))
        .await?;
    assert_eq!(r["steps_run"], 3, "{r}");
    assert_eq!(r["steps_passed"], 2, "{r}");
    assert_eq!(r["first_failure"]["tool"], "cookies");
    assert_eq!(r["first_failure"]["code"], "CAPABILITY_DISABLED");
    assert_eq!(r["steps"][1]["code"], "CAPABILITY_DISABLED");
    assert_eq!(r["ok"], false);
    // Stopping at the error is the default.
    let r = client.tool_json("oc_recording_replay", json!({"recordingId": id})).await?;
    assert_eq!((r["steps_run"].as_u64(), r["steps_passed"].as_u64()), (Some(2), Some(1)), "{r}");
    client.cancel().await?;
    Ok(())
}

/// A replay cannot recurse into the recording tools, cannot invent redacted
/// values, reports a target that is gone, and skips steps that had failed.
#[tokio::test]
async fn replay_refuses_recursion_redacted_values_and_missing_targets() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("surface-replay-guards");
    let id = "rec-20260101-000000-abcd";
    let dir = data.path().join("recordings").join(id);
    std::fs::create_dir_all(&dir)?;
    // Recent, or the retention (30 days) would delete it at startup.
    let now_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis() as u64;
    let meta = json!({
        "id": id, "status": "stopped", "started_at": "2026-01-01T00:00:00Z",
        "started_ms": now_ms, "steps": 5, "capture_screenshots": false,
        "session": "handmade", "final_url": site.url("index.html")
    });
    std::fs::write(dir.join("meta.json"), meta.to_string())?;
    let steps = [
        json!({"step": 1, "tool": "navigate", "args": {"url": site.url("index.html")}, "ok": true}),
        json!({"step": 2, "tool": "oc_recording_replay", "args": {"recordingId": id}, "ok": true}),
        json!({"step": 3, "tool": "cookies", "args": {"action": "set", "name": "a", "value": "[REDACTED]"}, "ok": true}),
        json!({"step": 4, "tool": "interact", "args": {"ref": "ax_99"}, "ok": true,
               "targets": {"ax_99": {"role": "button", "name": "no such button", "nth": 0}}}),
        json!({"step": 5, "tool": "interact", "args": {"query": "nothing"}, "ok": false}),
    ];
    let lines: Vec<String> = steps.iter().map(Value::to_string).collect();
    std::fs::write(dir.join("actions.jsonl"), lines.join("\n") + "\n")?;

    let client = stdio_client(data.path(), &[], &[]).await?;
    let r = client
        .tool_json("oc_recording_replay", json!({"recordingId": id, "stop_on_error": false}))
        .await?;
    let codes: Vec<&str> = r["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["code"].as_str().or(s["skipped"].as_str().map(|_| "skipped")).unwrap_or("ok"))
        .collect();
    assert_eq!(
        codes,
        ["ok", "PERMISSION_DENIED", "REDACTED_ARGUMENT", "TARGET_NOT_FOUND", "skipped"],
        "{r}"
    );
    assert_eq!(
        (r["steps_run"].as_u64(), r["steps_passed"].as_u64(), r["steps_skipped"].as_u64()),
        (Some(4), Some(1), Some(1))
    );
    assert_eq!(r["final_url_match"], true);
    client.cancel().await?;
    Ok(())
}
