//! MCP resources over stdio and Streamable HTTP: output handles, recordings
//! (JSON and the HTML export), evidence bundles and journal days are listed and
//! read; ids are checked as the tools check them, and an expired handle is gone.

use anyhow::Result;
use base64::Engine as _;
use ochre_tests::*;
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};

/// Every resource URI, following `nextCursor`.
async fn all_uris(client: &Client) -> Result<Vec<String>> {
    let mut uris = Vec::new();
    let mut cursor = None;
    loop {
        let mut params = rmcp::model::PaginatedRequestParams::default();
        params.cursor = cursor;
        let page = client.list_resources(Some(params)).await?;
        uris.extend(page.resources.iter().map(|r| r.uri.clone()));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => return Ok(uris),
        }
    }
}

/// The one content of a resource: (mime type, text or bytes).
async fn read(client: &Client, uri: &str) -> Result<(String, Result<String, Vec<u8>>)> {
    let result = client.read_resource(ReadResourceRequestParams::new(uri)).await?;
    Ok(match result.contents.into_iter().next() {
        Some(ResourceContents::TextResourceContents { mime_type, text, .. }) => {
            (mime_type.unwrap_or_default(), Ok(text))
        }
        Some(ResourceContents::BlobResourceContents { mime_type, blob, .. }) => (
            mime_type.unwrap_or_default(),
            Err(base64::engine::general_purpose::STANDARD.decode(blob)?),
        ),
        other => anyhow::bail!("not one text or blob content: {other:?}"),
    })
}

/// A read that must fail as "resource not found" (-32002).
async fn missing(client: &Client, uri: &str) -> Result<String> {
    match client.read_resource(ReadResourceRequestParams::new(uri)).await {
        Err(rmcp::ServiceError::McpError(e)) => {
            assert_eq!(e.code.0, -32002, "{uri}: {e:?}");
            Ok(e.message.to_string())
        }
        other => anyhow::bail!("{uri} was read: {other:?}"),
    }
}

async fn resources_of_a_session(client: &Client, site: &SiteServer) -> Result<()> {
    // A recording, exported; an evidence bundle; an output handle.
    let rec = client.tool_json("oc_recording_start", json!({"label": "res"})).await?;
    let rec = rec["recordingId"].as_str().or(rec["id"].as_str()).expect("recording id").to_owned();
    client.tool("navigate", json!({"url": site.url("index.html")})).await?;
    client.tool("oc_recording_stop", json!({})).await?;
    client.tool("oc_recording_export", json!({"recordingId": rec, "format": "html"})).await?;
    let manifest = client.tool_json("oc_evidence_bundle", json!({})).await?;
    let bundle = manifest["bundle_id"].as_str().expect("bundle").to_owned();
    client.tool("navigate", json!({"url": site.url("large.html")})).await?;
    let d = client.tool_json("read_page", json!({"output_mode": "handle"})).await?;
    let handle = d["output_handle"].as_str().expect("handle").to_owned();

    let uris = all_uris(client).await?;
    let day = {
        let j = client.tool_json("oc_journal", json!({"limit": 1})).await?;
        j["entries"][0]["ts"].as_str().unwrap_or("")[..10].to_owned()
    };
    for want in [
        format!("ochre://output/{handle}"),
        format!("ochre://recordings/{rec}"),
        format!("ochre://recordings/{rec}/recording.html"),
        format!("ochre://evidence/{bundle}/manifest.json"),
        format!("ochre://evidence/{bundle}/screenshot.png"),
        format!("ochre://journal/{day}"),
    ] {
        assert!(uris.contains(&want), "{want} not listed: {uris:?}");
    }

    let (mime, body) = read(client, &format!("ochre://output/{handle}")).await?;
    assert_eq!(mime, "text/markdown");
    let text = body.expect("text");
    assert!(text.starts_with(d["preview"].as_str().expect("preview")));
    assert_eq!(text.len() as u64, d["size_bytes"].as_u64().expect("size"));

    let (_, body) = read(client, &format!("ochre://recordings/{rec}")).await?;
    let v: Value = serde_json::from_str(&body.expect("text"))?;
    assert_eq!(v["meta"]["id"], rec.as_str());
    assert_eq!(v["steps"].as_array().map(Vec::len), Some(1));
    let (mime, body) = read(client, &format!("ochre://recordings/{rec}/recording.html")).await?;
    assert_eq!(mime, "text/html");
    assert!(body.expect("text").contains("<html"));

    let (_, body) = read(client, &format!("ochre://evidence/{bundle}/manifest.json")).await?;
    assert_eq!(serde_json::from_str::<Value>(&body.expect("text"))?, manifest);
    let (mime, body) = read(client, &format!("ochre://evidence/{bundle}/screenshot.png")).await?;
    assert_eq!(mime, "image/png");
    assert_eq!(&body.expect_err("bytes")[..4], b"\x89PNG");

    let (_, body) = read(client, &format!("ochre://journal/{day}")).await?;
    assert!(body.expect("text").contains("\"navigate\""));

    // Ids are checked as the tools check them.
    for uri in [
        "ochre://output/oh_aaaaaaaaaaaa".to_owned(),
        "ochre://output/../../secrets.json".to_owned(),
        format!("ochre://evidence/{bundle}/../../secrets.json"),
        "ochre://evidence/..%2F/manifest.json".to_owned(),
        "ochre://recordings/rec-nope".to_owned(),
        "ochre://journal/1999-01-01".to_owned(),
        "file:///etc/passwd".to_owned(),
    ] {
        missing(client, &uri).await?;
    }
    Ok(())
}

#[tokio::test]
async fn resources_over_stdio_and_an_expired_handle_is_gone() -> Result<()> {
    let (site, _data, client) = site_and_client("resources-stdio", &[]).await?;
    let caps = client.peer_info().map(|i| i.capabilities.clone());
    assert!(caps.is_some_and(|c| c.resources.is_some()));
    resources_of_a_session(&client, &site).await?;
    client.cancel().await?;

    // Handles that expire at once: listed no more, and read as gone.
    let data = TempDir::new("resources-expired");
    let client = stdio_client(data.path(), &["--output-handle-ttl-hours", "0"], &[]).await?;
    navigate(&client, &site.url("large.html")).await?;
    let d = client.tool_json("read_page", json!({"output_mode": "handle"})).await?;
    let handle = d["output_handle"].as_str().expect("handle").to_owned();
    let uri = format!("ochre://output/{handle}");
    assert!(!all_uris(&client).await?.contains(&uri));
    let why = missing(&client, &uri).await?;
    assert!(why.contains("expired"), "{why}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn resources_over_http() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("resources-http");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let client = server.client().await?;
    resources_of_a_session(&client, &site).await?;
    client.cancel().await?;
    Ok(())
}
