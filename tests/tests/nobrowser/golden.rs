//! The trace of a fixed sequence of calls, with the clock and the session id fixed
//! and `intent` omitted everywhere, is byte-identical to the checked-in
//! `fixtures/golden/trace-basic.jsonl`. A change to the trace format shows up here
//! first; regenerate the file on purpose with `OCHRE_UPDATE_GOLDEN=1`.

use anyhow::Result;
use ochre_tests::*;
use serde_json::json;

const PAGE: &str = "data:text/html,<title>Golden</title><label>Name <input id=n></label><button onclick=\"document.title='done'\">Go</button>";

#[tokio::test]
async fn a_fixed_sequence_writes_the_golden_trace() -> Result<()> {
    let data = TempDir::new("golden");
    let envs = [("OCHRE_FIXED_CLOCK_MS", "1767225600000"), ("OCHRE_SESSION_ID", "golden-session")];
    let client = stdio_client(data.path(), &[], &envs).await?;
    let ok = |r: &rmcp::model::CallToolResult| assert_ne!(r.is_error, Some(true), "{r:?}");
    ok(&navigate(&client, PAGE).await?);
    ok(&client.tool("read_page", json!({})).await?);
    ok(&client.tool("form_input", json!({"ref": "ax_1", "value": "Ada"})).await?);
    ok(&client.tool("interact", json!({"ref": "ax_2"})).await?);
    // Rejected before running: no trace line.
    let bad = client.tool("interact", json!({"ref": "ax_2", "intent": ""})).await?;
    assert_eq!(error_of(&bad)["code"], "INVALID_INTENT");
    // Failed while running: a trace line with the error code.
    let missing = client.tool("form_input", json!({"ref": "ax_99", "value": "x"})).await?;
    assert_eq!(error_of(&missing)["code"], "REF_NOT_FOUND");
    ok(&client.tool("tabs_context", json!({})).await?);
    client.cancel().await?;

    let path = data.path().join("traces/golden-session/events.jsonl");
    let got = std::fs::read_to_string(&path)?;
    let golden = sites_dir().parent().expect("fixtures").join("golden/trace-basic.jsonl");
    if std::env::var_os("OCHRE_UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &got)?;
    }
    let want = std::fs::read_to_string(&golden)?;
    assert_eq!(got, want, "the trace differs from {}", golden.display());
    assert!(!got.contains("\"intent\""), "intent omitted: no intent key");
    assert!(!got.contains("Ada"), "form values are redacted");
    Ok(())
}
