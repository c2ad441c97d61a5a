//! A recording exported from Chrome DevTools' Recorder (its JSON, written to
//! the format `@puppeteer/replay` documents, with CSS, ARIA, XPath and text
//! selectors) imports as an ochre recording, replays on a real page with new
//! values (checked at the page's server), keeps the role and name of what its
//! selectors found as its next version, and exports to Playwright.

use anyhow::{Context, Result};
use ochre_tests::*;
use serde_json::{Value, json};

/// The Recorder's JSON for `site`.
fn recorder_json(site: &SiteServer) -> Result<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/recordings/chrome-order.json");
    let text = std::fs::read_to_string(path)?.replace("BASE", &site.base);
    Ok(serde_json::from_str(&text)?)
}

#[tokio::test]
async fn a_chrome_recorder_recording_imports_replays_and_exports() -> Result<()> {
    let (site, _data, client) = site_and_client("recorder-import", &[]).await?;
    let rec = recorder_json(&site)?;

    // Bad input is refused and makes nothing.
    let err =
        client.tool_error("oc_recording_import", json!({"recording": {"title": "x"}})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    let err = client.tool_error("oc_recording_import", json!({"recording": "{not json"})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    let listed = client.tool_json("oc_recording_list", json!({})).await?;
    assert_eq!(listed["recordings"], json!([]), "{listed}");

    // As text, as an agent may pass a file's content.
    let imported =
        client.tool_json("oc_recording_import", json!({"recording": rec.to_string()})).await?;
    let id = imported["recordingId"].as_str().context("id")?.to_owned();
    assert_eq!(imported["label"], "Order a print");
    // navigate, click, change, Tab, change, click, click; setViewport left out, said why.
    assert_eq!(imported["steps"], 7, "{imported}");
    let skipped: Vec<&str> = imported["skipped"]
        .as_array()
        .context("skipped")?
        .iter()
        .filter_map(|s| s["type"].as_str())
        .collect();
    assert_eq!(skipped, ["setViewport"], "{imported}");
    let params: Vec<&str> = imported["params"]
        .as_array()
        .context("params")?
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(params, ["your_name", "email"], "{imported}");

    // Replayed with a new name: the order reaches the server with it, and
    // with what the recording typed and chose elsewhere.
    let r = client
        .tool_json(
            "oc_recording_replay",
            json!({"recordingId": id, "params": {"your_name": "Grace Hopper"}}),
        )
        .await?;
    assert_eq!(r["ok"], true, "{r}");
    let order = site.expect_recorded("name=Grace Hopper").await?;
    assert!(order.contains("email=ada@example.com") && order.contains("size=large"), "{order}");
    // What the selectors found is kept by role and name, as the next version.
    assert_eq!(r["healed"]["version"], 2, "{r}");
    let now: Vec<String> = r["healed"]["repaired"]
        .as_array()
        .context("repaired")?
        .iter()
        .map(|x| {
            format!(
                "{} {}",
                x["now"]["role"].as_str().unwrap_or(""),
                x["now"]["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(
        now.contains(&"textbox Your name".to_owned()) && now.contains(&"textbox Email".to_owned()),
        "{now:?}"
    );

    // The next replay finds them by role and name: nothing to repair.
    let r = client
        .tool_json("oc_recording_replay", json!({"recordingId": id, "params": {"your_name": "Alan Kay", "email": "alan@example.com"}}))
        .await?;
    assert_eq!(r["ok"], true, "{r}");
    assert!(r["healed"].is_null(), "{r}");
    let order = site.expect_recorded("name=Alan Kay").await?;
    assert!(order.contains("email=alan@example.com"), "{order}");

    // Exported like any recording: role and name locators, values as parameters.
    let export = client
        .tool_json("oc_recording_export", json!({"recordingId": id, "format": "playwright-python"}))
        .await?;
    let script = std::fs::read_to_string(export["path"].as_str().context("path")?)?;
    assert!(script.contains("get_by_role(\"textbox\", name=\"Your name\""), "{script}");
    assert!(script.contains("get_by_role(\"button\", name=\"Send order\""), "{script}");
    assert!(script.contains("YOUR_NAME"), "{script}");
    client.cancel().await?;
    Ok(())
}
