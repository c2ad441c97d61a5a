//! Output handles (seed 004) over MCP against real Chromium: `output_mode` on
//! `read_page` and `extract_data`, `oc_output_fetch` paging, expiry and the sweep,
//! the journal event, and handles surviving a restart.

use anyhow::Result;
use ochre_tests::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

fn text(res: &CallToolResult) -> String {
    assert_ne!(res.is_error, Some(true), "the call failed: {res:?}");
    res.content[0].as_text().expect("text").text.clone()
}

fn is_handle(h: &str) -> bool {
    h.len() == 15
        && h.starts_with("oh_")
        && h[3..].bytes().all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
}

#[tokio::test]
async fn read_page_output_modes_and_byte_paging() -> Result<()> {
    let (site, data, client) = site_and_client("output-modes", &[]).await?;
    // Within the response budget, the default and explicit inline are
    // byte-identical.
    navigate(&client, &site.url("product.html")).await?;
    let plain = client.tool("read_page", json!({})).await?;
    let inline = client.tool("read_page", json!({"output_mode": "inline"})).await?;
    assert_eq!(serde_json::to_string(&plain)?, serde_json::to_string(&inline)?);

    // Over it, the default is a first view and explicit inline is everything.
    navigate(&client, &site.url("large.html")).await?;
    let plain = client.tool("read_page", json!({"output_mode": "inline"})).await?;
    let full = text(&plain);
    assert!(full.len() > 100_000, "{}", full.len());
    let view = text(&client.tool("read_page", json!({})).await?);
    assert!(view.len() <= 100_000 && full.starts_with(&view[..1000]), "{}", view.len());

    // handle: a small descriptor whatever the size.
    let res = client.tool("read_page", json!({"output_mode": "handle"})).await?;
    let d = structured(&res);
    let handle = d["output_handle"].as_str().expect("handle").to_owned();
    assert!(is_handle(&handle), "{handle}");
    assert_eq!(d["size_bytes"].as_u64(), Some(full.len() as u64));
    assert_eq!(d["mime_type"], "text/markdown");
    assert_eq!(d["fetch_with"], "oc_output_fetch");
    assert!(d["preview"].as_str().expect("preview").len() <= 2048);
    assert!(full.starts_with(d["preview"].as_str().expect("preview")));
    assert!(d["expires_at"].as_str().is_some());
    let bytes = serde_json::to_vec(&res)?.len();
    eprintln!(
        "read_page large.html: inline {} bytes, handle response {bytes} bytes",
        serde_json::to_vec(&plain)?.len()
    );
    assert!(bytes <= 4096, "descriptor response is {bytes} bytes");
    assert_eq!(fetch_all_bytes(&client, &handle, 16_384).await?, full);

    // auto: inline under the limit, a handle over it.
    let res = client
        .tool("read_page", json!({"output_mode": "auto", "output_inline_limit_bytes": 10_000_000}))
        .await?;
    assert_eq!(text(&res), full);
    let res = client.tool("read_page", json!({"output_mode": "auto"})).await?;
    assert!(is_handle(structured(&res)["output_handle"].as_str().expect("handle")));

    // Bad input: refused, nothing stored or journaled.
    for (args, field) in [
        (json!({"output_mode": "bogus"}), "output_mode"),
        (
            json!({"output_mode": "handle", "output_inline_limit_bytes": 10}),
            "output_inline_limit_bytes",
        ),
        (
            json!({"output_mode": "auto", "output_inline_limit_bytes": 0}),
            "output_inline_limit_bytes",
        ),
    ] {
        let err = client.tool_error("read_page", args).await?;
        assert_eq!(
            (err["code"].as_str(), err["field"].as_str()),
            (Some("INVALID_ARGUMENT"), Some(field))
        );
    }
    let err = client
        .tool_error("navigate", json!({"url": site.url("index.html"), "output_mode": "handle"}))
        .await?;
    assert_eq!(err["field"], "output_mode", "a tool without the feature refuses it");

    // Unknown and malformed handles.
    for h in ["oh_AAAAAAAAAAAA", "../../../etc/passwd", "oh_short"] {
        let err = client.tool_error("oc_output_fetch", json!({"output_handle": h})).await?;
        assert_eq!(err["code"], "output_handle_not_found", "{h}: {err}");
        assert!(!err.to_string().contains("panicked"));
    }

    // The journal lists the creations with the calls.
    let j = client.tool_json("oc_journal", json!({"count": 100})).await?;
    let created: Vec<&Value> = j["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["event"] == "output_handle_created")
        .collect();
    // The response budget's first view, `handle`, and `auto` over its limit.
    assert_eq!(created.len(), 3, "{j}");
    assert_eq!(created[1]["handle"], handle.as_str());
    for c in &created {
        assert_eq!(c["source_tool"], "read_page");
        assert_eq!(c["size_bytes"].as_u64(), Some(full.len() as u64));
    }
    let files = std::fs::read_dir(data.path().join("output"))?.count();
    assert_eq!(files, 1, "one day dir");
    client.cancel().await?;

    // A restart keeps the handle.
    let client = stdio_client(data.path(), &[], &[]).await?;
    assert_eq!(fetch_all_bytes(&client, &handle, 1 << 20).await?, full);
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn json_outputs_page_by_items() -> Result<()> {
    let (_site, _data, client) = site_at("output-items", &[], "product.html").await?;
    let args = json!({
        "schema": {"type": "array", "items": {"properties": {"title": {"type": "string"}, "price": {"type": "number"}}}},
        "itemSelector": ".card"
    });
    let inline = client.tool_json("extract_data", args.clone()).await?;
    let mut with = args.clone();
    with["output_mode"] = json!("handle");
    let d = client.tool_json("extract_data", with).await?;
    let handle = d["output_handle"].as_str().expect("handle");
    assert_eq!(d["mime_type"], "application/json");
    let n = d["item_count"].as_u64().expect("item_count");
    assert!(n >= 2, "{d}");
    let mut items = Vec::new();
    for page in fetch_pages(&client, handle, 1, json!({})).await? {
        assert_eq!(page["format"], "items");
        items.extend(page["content"].as_array().expect("items").iter().cloned());
    }
    assert_eq!(items.len() as u64, n);
    // The items are exactly the main list of the inline result.
    assert_eq!(&items, inline["data"].as_array().expect("a list in the inline result"));
    // Bytes of the same handle rebuild the inline JSON.
    let whole = fetch_all_bytes(&client, handle, 100).await?;
    assert_eq!(serde_json::from_str::<Value>(&whole)?, inline);
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn expired_handles_are_refused_and_swept() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("output-ttl");
    let client = stdio_client(
        data.path(),
        &["--output-handle-ttl-hours", "0", "--output-handle-sweep-interval-seconds", "2"],
        &[],
    )
    .await?;
    navigate(&client, &site.url("index.html")).await?;
    let d = client.tool_json("read_page", json!({"output_mode": "handle"})).await?;
    let handle = d["output_handle"].as_str().expect("handle");
    // Refused at once, before any sweep.
    let err = client.tool_error("oc_output_fetch", json!({"output_handle": handle})).await?;
    assert_eq!(err["code"], "output_handle_not_found");
    assert!(err["message"].as_str().unwrap_or("").contains("expired"), "{err}");
    // Gone from disk after the sweep.
    let gone = async {
        for _ in 0..60 {
            let left = read_all_text(&data.path().join("output"));
            if !left.contains(handle) && std::fs::read_dir(data.path().join("output"))?.count() == 0
            {
                return anyhow::Ok(true);
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        Ok(false)
    };
    assert!(gone.await?, "the sweep did not delete {handle}");
    client.cancel().await?;
    Ok(())
}
