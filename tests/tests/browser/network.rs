//! `network_capture`, `network` throttling presets and `oc_evidence_bundle` over
//! MCP against real Chromium and the fixture sites.

use anyhow::Result;
use ochre_tests::*;
use serde_json::{Value, json};

#[tokio::test]
async fn capture_throttle_and_bundle() -> Result<()> {
    let (site, data, client) = site_at("network", &[], "index.html").await?;

    let r = client.tool_json("network_capture", json!({"action": "start"})).await?;
    assert_eq!(r["capturing"], true);
    navigate(&client, &site.url("slow.html")).await?;
    // Bodies: Chromium keeps those of the current document's requests.
    let r = client
        .tool_json("network_capture", json!({"action": "get", "include_bodies": true}))
        .await?;
    let reqs = r["requests"].as_array().expect("requests");
    let find = |suffix: &str| {
        reqs.iter()
            .find(|q| q["url"].as_str().is_some_and(|u| u.ends_with(suffix)))
            .unwrap_or_else(|| panic!("no {suffix} in {r}"))
    };
    let doc = find("/slow.html");
    assert_eq!(doc["status"], 200);
    assert_eq!(doc["method"], "GET");
    assert_eq!(doc["type"], "Document");
    assert_eq!(doc["mimeType"], "text/html");
    assert!(
        doc["body"]
            .as_str()
            .unwrap_or_else(|| panic!("no body: {doc}"))
            .contains("<title>Slow data</title>")
    );
    let xhr = find("/slow?ms=400");
    assert_eq!(xhr["type"], "Fetch");
    assert_eq!(xhr["body"], "slow 400");
    assert!(
        reqs.iter().all(|q| !q["url"].as_str().unwrap_or("").ends_with("/index.html")),
        "captured before start"
    );
    navigate(&client, &site.url("no-such-page.html")).await?;
    let r = client.tool_json("network_capture", json!({"action": "get"})).await?;
    let missing = r["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .find(|q| q["url"].as_str().is_some_and(|u| u.ends_with("/no-such-page.html")))
        .cloned()
        .unwrap_or_default();
    assert_eq!(missing["status"], 404, "{r}");

    let r = client.tool_json("network_capture", json!({"action": "stop"})).await?;
    assert_eq!(r["capturing"], false);
    navigate(&client, &site.url("page2.html")).await?;
    let r = client.tool_json("network_capture", json!({"action": "get"})).await?;
    assert!(
        r["requests"]
            .as_array()
            .expect("requests")
            .iter()
            .all(|q| !q["url"].as_str().unwrap_or("").ends_with("/page2.html")),
        "captured after stop"
    );
    let err = client.tool_error("network_capture", json!({"action": "pause"})).await?;
    assert_eq!(err["field"], "action");

    // Offline: the next load fails; back to no throttling, it works.
    client.tool_json("network", json!({"preset": "offline"})).await?;
    let res = navigate(&client, &site.url("index.html")).await?;
    let offline_failed = res.is_error == Some(true) || structured(&res)["title"] != "Ochre fixture";
    assert!(offline_failed, "offline navigation succeeded: {res:?}");
    client.tool_json("network", json!({"preset": "no-throttling"})).await?;
    let r = client.tool_json("navigate", json!({"url": site.url("index.html")})).await?;
    assert_eq!(r["title"], "Ochre fixture");
    let err = client.tool_error("network", json!({"preset": "5g"})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT");

    // An evidence bundle: its files with their hashes, the manifest last.
    let err = client.tool_error("oc_evidence_bundle", json!({"include": ["dom", "bogus"]})).await?;
    assert_eq!(err["field"], "include");
    assert!(!data.path().join("evidence").exists(), "a refused call wrote a bundle");
    let m = client.tool_json("oc_evidence_bundle", json!({})).await?;
    let dir = std::path::PathBuf::from(m["path"].as_str().expect("path"));
    assert!(
        dir.starts_with(data.path().join("evidence"))
            || dir.ends_with(m["bundle_id"].as_str().expect("id"))
    );
    assert_eq!(m["url"], site.url("index.html"));
    let names: Vec<&str> =
        m["files"].as_array().expect("files").iter().filter_map(|f| f["name"].as_str()).collect();
    // (The tab's network is captured: its HAR too.)
    assert_eq!(
        names,
        ["dom.html", "screenshot.png", "network.json", "network.har", "console.json"]
    );
    let har: Value = serde_json::from_slice(&std::fs::read(dir.join("network.har"))?)?;
    assert_eq!(har["log"]["version"], "1.2", "{har}");
    let missing = har["log"]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["request"]["url"] == site.url("no-such-page.html"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(missing["response"]["status"], 404, "{har}");
    for f in m["files"].as_array().expect("files") {
        let bytes = std::fs::read(dir.join(f["name"].as_str().expect("name")))?;
        assert_eq!(f["bytes"].as_u64(), Some(bytes.len() as u64));
        use sha2::Digest;
        let sum = data_encoding::HEXLOWER.encode(&sha2::Sha256::digest(&bytes));
        assert_eq!(f["sha256"], sum.as_str());
    }
    assert!(std::fs::read_to_string(dir.join("dom.html"))?.contains("Hello from the fixture"));
    assert_eq!(&std::fs::read(dir.join("screenshot.png"))?[..4], b"\x89PNG");
    let manifest: Value = serde_json::from_slice(&std::fs::read(dir.join("manifest.json"))?)?;
    assert_eq!(manifest, m);
    client.cancel().await?;
    Ok(())
}
