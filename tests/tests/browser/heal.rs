//! Replays that heal, over MCP: a recording made on a page whose button is
//! then renamed stops with `needs_target` (the step, what it looked for, the
//! page's closest elements with refs) instead of failing; given the new ref it
//! finishes (the click reaches the server), the repair is saved as the
//! recording's new version (the old one kept), and the next replay needs no
//! help. With `heal: false` it fails as before.

use anyhow::Result;
use ochre_tests::*;
use serde_json::{Value, json};

/// The `heal=` reports the page sent its server.
fn clicks(site: &SiteServer) -> Vec<String> {
    site.recorded().into_iter().filter(|r| r.starts_with("heal=")).collect()
}

#[tokio::test]
async fn a_replay_asks_for_a_renamed_target_and_keeps_the_repair() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("heal");
    let client = stdio_client(data.path(), &[], &[]).await?;

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
    let r = client.tool_json("oc_recording_replay", args).await?;
    assert_eq!((r["ok"].as_bool(), r["healed"]["version"].as_u64()), (Some(true), Some(2)), "{r}");
    site.expect_recorded("heal=Store&name=Ada").await?;

    // The next replay needs no help: the new version looks for Store.
    let r = client.tool_json("oc_recording_replay", json!({"recordingId": id})).await?;
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
