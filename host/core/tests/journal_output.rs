//! An embedder chooses where the journal and the trace go
//! (`HostBuilder::journal`): nowhere (nothing under the data dir), or a writer
//! of its own (one JSON line per entry and event, nothing under the data dir);
//! the default, files, is what every other test reads.

use std::sync::{Arc, Mutex};

use ochre_host::native::typed_tool;
use ochre_host::stores::journal::JournalOutput;
use ochre_host::{CallOptions, Host, ToolOutput};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Ping {
    n: u32,
}

fn temp(label: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("ochre-journal-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    p
}

async fn host_with(data: &std::path::Path, output: JournalOutput) -> anyhow::Result<Host> {
    let ping = typed_tool("ping", "Answer pong.", |args: Ping, _| async move {
        Ok(ToolOutput::json(json!({"pong": args.n})))
    });
    Ok(Host::builder()
        .data_dir(data)
        .builtin_plugins(false)
        .journal(output)
        .tool(ping)
        .build()
        .await?)
}

#[tokio::test]
async fn off_writes_nothing_and_a_writer_gets_every_line() -> anyhow::Result<()> {
    let data = temp("off");
    let host = host_with(&data, JournalOutput::Off).await?;
    host.call_tool("ping", json!({"n": 1}), CallOptions::default()).await?;
    let recent = host.call_tool("oc_journal", json!({}), CallOptions::default()).await?;
    assert_eq!(recent.structured, Some(json!({"entries": []})));
    host.shutdown().await;
    assert!(!data.join("journal").exists() && !data.join("traces").exists());

    let data = temp("writer");
    let lines = Arc::new(Mutex::new(Vec::<u8>::new()));
    let host = host_with(&data, JournalOutput::Writer(lines.clone())).await?;
    host.call_tool("ping", json!({"n": 2}), CallOptions::default()).await?;
    host.shutdown().await;
    assert!(!data.join("journal").exists() && !data.join("traces").exists());
    let text = String::from_utf8(lines.lock().expect("lines").clone())?;
    let entries: Vec<Value> = text.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
    let journal: Vec<&Value> = entries.iter().filter(|e| e["stream"] == "journal").collect();
    assert_eq!(journal.len(), 1, "{text}");
    assert_eq!(
        (journal[0]["tool"].as_str(), journal[0]["ok"].as_bool()),
        (Some("ping"), Some(true))
    );
    assert_eq!(journal[0]["args"], json!({"n": 2}));
    let trace =
        entries.iter().filter(|e| e["stream"] == "trace" && e["kind"] == "tool_call").count();
    assert_eq!(trace, 1, "{text}");
    Ok(())
}
