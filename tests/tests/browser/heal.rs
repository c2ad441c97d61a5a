//! Replays that heal, over MCP: a recording made on a page whose button is
//! then renamed stops with `needs_target` (the step, what it looked for, the
//! page's closest elements with refs) instead of failing; given the new ref it
//! finishes (the click reaches the server), the repair is saved as the
//! recording's new version (the old one kept), and the next replay needs no
//! help. With `heal: false` it fails as before. Each replayed click is one
//! host call (the host finds the recorded element within the click's wait,
//! and again when the page replaces it), counted in the server's log.

use anyhow::{Result, ensure};
use ochre_tests::*;
use serde_json::{Value, json};

/// The server's log filter that shows each host call a plugin makes.
const HOST_CALLS: (&str, &str) = ("RUST_LOG", "ochre::host_call=debug");

/// The page operations plugins asked of the host since byte `at` of `log`
/// (each a host call: `what="act"`, ...), and the log's new end.
fn page_ops_since(log: &std::path::Path, at: usize) -> Result<(Vec<String>, usize)> {
    let (end, lines) = log_since(log, at)?;
    let ops = lines
        .iter()
        .filter(|l| l.contains("ochre::host_call") && l.contains("function=\"page-op\""))
        .map(|l| l.split("what=").nth(1).unwrap_or(l).to_owned())
        .collect();
    Ok((ops, end))
}

/// The `heal=` reports the page sent its server.
fn clicks(site: &SiteServer) -> Vec<String> {
    site.recorded().into_iter().filter(|r| r.starts_with("heal=")).collect()
}

#[tokio::test]
async fn a_replay_asks_for_a_renamed_target_and_keeps_the_repair() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("heal");
    let logs = TempDir::new("heal-log");
    let log = logs.path().join("stderr.log");
    let client = stdio_client_logged((), data.path(), &[], &[HOST_CALLS], &log).await?;

    // Record: fill the name, press Save.
    let rec = client.tool_json("oc_recording_start", json!({"label": "settings"})).await?;
    let id = rec["recordingId"].as_str().or(rec["id"].as_str()).unwrap_or_default().to_owned();
    navigate(&client, &site.url("heal.html")).await?;
    let snap = snapshot(&client).await?;
    client
        .tool(
            "form_input",
            json!({"ref": ref_of(&snap, "textbox", "Display name"), "value": "Ada"}),
        )
        .await?;
    client.tool("interact", json!({"ref": ref_of(&snap, "button", "Save")})).await?;
    site.expect_recorded("heal=Save&name=Ada").await?;
    client.tool_json("oc_recording_stop", json!({})).await?;

    // The site renames its button.
    client
        .tool_json("javascript_tool", json!({"code": "localStorage.setItem('label', 'Store'); 1"}))
        .await?;
    let r = client.tool_json("oc_recording_replay", json!({"recordingId": id})).await?;
    assert_eq!(r["ok"], false, "{r}");
    let need = &r["needs_target"];
    assert_eq!(
        (need["tool"].as_str(), need["looked_for"]["name"].as_str()),
        (Some("interact"), Some("Save")),
        "{r}"
    );
    let candidates: Vec<&str> =
        need["candidates"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let store = candidates
        .iter()
        .find(|c| c.starts_with("button \"Store\""))
        .unwrap_or_else(|| panic!("no Store button among the candidates: {r}"));
    assert_eq!(clicks(&site).len(), 1, "the stopped replay clicked something");

    // Given the new ref, the replay goes on from that step and the click lands.
    let step = need["step"].clone();
    let old = need["ref"].as_str().unwrap_or_default().to_owned();
    let args =
        json!({"recordingId": id, "from_step": step, "targets": {old.clone(): ref_in(store)}});
    let at = page_ops_since(&log, 0)?.1;
    let r = client.tool_json("oc_recording_replay", args).await?;
    assert_eq!((r["ok"].as_bool(), r["healed"]["version"].as_u64()), (Some(true), Some(2)), "{r}");
    site.expect_recorded("heal=Store&name=Ada").await?;
    // The healed step (a click on the element given) was one host call: the
    // host's act, which also said who the element is (the repair).
    let (ops, at) = page_ops_since(&log, at)?;
    ensure!(ops.len() == 1 && ops[0].starts_with("\"act\""), "the healed click: {ops:#?}");

    // The next replay needs no help: the new version looks for Store.
    let r = client.tool_json("oc_recording_replay", json!({"recordingId": id})).await?;
    // Its steps: the navigation; the field, one host call that finds it and
    // sets it; the click, one host call that finds the button and clicks it.
    let (ops, _) = page_ops_since(&log, at)?;
    let count = |what: &str| ops.iter().filter(|o| o.starts_with(&format!("\"{what}\""))).count();
    let counted = (count("act"), count("set_value"), count("find_target"));
    ensure!(counted == (1, 1, 0), "{ops:#?}");
    assert_eq!(
        (r["ok"].as_bool(), r["needs_target"].is_null(), r["healed"].is_null()),
        (Some(true), true, true),
        "{r}"
    );
    assert_eq!(clicks(&site), ["heal=Save&name=Ada", "heal=Store&name=Ada", "heal=Store&name=Ada"]);
    // The version it replaced is kept, and the recording says why it changed.
    let kept =
        std::fs::read_to_string(data.path().join(format!("recordings/{id}/versions/v1.jsonl")))?;
    assert!(kept.contains("\"Save\""), "{kept}");
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(
        data.path().join(format!("recordings/{id}/meta.json")),
    )?)?;
    assert_eq!(meta["version"], 2, "{meta}");
    assert!(
        meta["versions"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("is now button \"Store\"")),
        "{meta}"
    );

    // Renamed again, without healing: it fails as before, naming the target.
    client
        .tool_json("javascript_tool", json!({"code": "localStorage.setItem('label', 'Keep'); 1"}))
        .await?;
    let r =
        client.tool_json("oc_recording_replay", json!({"recordingId": id, "heal": false})).await?;
    assert_eq!(
        (r["ok"].as_bool(), r["first_failure"]["code"].as_str()),
        (Some(false), Some("TARGET_NOT_FOUND")),
        "{r}"
    );
    assert!(r["needs_target"].is_null(), "{r}");
    // A step that is not there is refused before anything runs.
    let err = client
        .tool_error("oc_recording_replay", json!({"recordingId": id, "from_step": 99}))
        .await?;
    assert_eq!(err["field"], "from_step", "{err}");
    Ok(())
}

/// A recorded click whose button the page renders again while the replay
/// waits for it (disabled while loading, then a new element, enabled): the
/// host waits, finds it again by its role and name, and clicks it; the
/// server gets the click. The step is one host call.
#[tokio::test]
async fn a_replayed_click_whose_element_is_replaced_mid_wait_is_one_host_call() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("rerender");
    let logs = TempDir::new("rerender-log");
    let log = logs.path().join("stderr.log");
    let client = stdio_client_logged((), data.path(), &[], &[HOST_CALLS], &log).await?;
    let rec = client.tool_json("oc_recording_start", json!({"label": "order"})).await?;
    let id = rec["recordingId"].as_str().or(rec["id"].as_str()).unwrap_or_default().to_owned();
    navigate(&client, &site.url("rerender.html")).await?;
    // The agent clicks once the page has rendered its enabled button.
    let mut snap = String::new();
    for _ in 0..100 {
        snap = snapshot(&client).await?;
        let line = snap.lines().find(|l| l.contains("button \"Place order\"")).unwrap_or("");
        if !line.is_empty() && !line.contains("disabled") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    client.tool("interact", json!({"ref": ref_of(&snap, "button", "Place order")})).await?;
    site.expect_recorded("order=placed").await?;
    client.tool_json("oc_recording_stop", json!({})).await?;

    let before = site.recorded().len();
    let at = page_ops_since(&log, 0)?.1;
    let r = client.tool_json("oc_recording_replay", json!({"recordingId": id})).await?;
    assert_eq!(r["ok"], true, "{r}");
    let click = r["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["tool"] == "interact"))
        .cloned()
        .unwrap_or_default();
    // The click waited for the button and found it again when the page
    // replaced it.
    let said = click["outcome"].as_str().unwrap_or_default();
    assert!(said.contains("found again"), "{r}");
    let reached = site.wait_recorded_since(before, "order=placed").await;
    assert!(reached.is_some(), "the replay's click did not reach the server: {r}");
    // The recorded reads ran again too (the agent read the page until the
    // button was enabled); what found and clicked the button is one call.
    let (ops, _) = page_ops_since(&log, at)?;
    let finding = ["act", "find_target", "locate", "query", "identify", "resolve_query", "sleep"];
    let element: Vec<&String> =
        ops.iter().filter(|o| finding.iter().any(|f| o.starts_with(&format!("\"{f}\"")))).collect();
    ensure!(
        element.len() == 1 && element[0].starts_with("\"act\""),
        "the replayed click: {element:#?} (all: {ops:#?})"
    );
    Ok(())
}
