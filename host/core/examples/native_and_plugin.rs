//! Embed the host: a native tool written here in Rust and a plugin component
//! loaded from memory, both called through the host's pipeline (argument
//! validation, journal, guards), with no browser and no built-in plugins.
//!
//! Run: `cargo run -p ochre-host --example native_and_plugin -- PLUGIN.wasm`
//! (any plugin component; the tests run it with the `hello` fixture, whose tool
//! is `hello_greet`). With `--no-default-features` the host has no browser at
//! all (no chromiumoxide compiled); CI runs it so with the `scoped` fixture, a
//! plugin that asks for no browser interface (`hello` asks for one and is
//! refused there, saying why).

use ochre_host::native::typed_tool;
use ochre_host::{CallOptions, Host, PluginStatus, ToolOutput};
use serde_json::json;

/// The native tool's arguments: its JSON Schema is derived from this type.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    /// The numbers to add.
    numbers: Vec<f64>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let wasm = std::env::args().nth(1).ok_or("usage: native_and_plugin PLUGIN.wasm")?;
    let bytes = std::fs::read(&wasm)?;
    let data = std::env::temp_dir().join(format!("ochre-example-{}", std::process::id()));

    let add = typed_tool("sum", "Add numbers.", |args: Add, _options| async move {
        Ok(ToolOutput::json(json!({"sum": args.numbers.iter().sum::<f64>()})))
    });
    let host = Host::builder()
        .data_dir(&data)
        .builtin_plugins(false)
        .tool(add)
        .plugin_bytes("example plugin", bytes)
        .build()
        .await?;
    for p in host.plugins() {
        println!("plugin {} from {}: {:?}", p.name, p.source, p.status);
        if p.status != PluginStatus::Loaded {
            return Err(format!("the plugin was not loaded: {:?}", p.status).into());
        }
    }

    let out =
        host.call_tool("sum", json!({"numbers": [1, 2, 3.5]}), CallOptions::default()).await?;
    println!("sum: {}", out.structured.clone().unwrap_or_default());
    assert_eq!(out.structured, Some(json!({"sum": 6.5})));

    // The schema is checked before the tool runs: a wrong argument never reaches it.
    let refused = host.call_tool("sum", json!({"numbers": "1,2"}), CallOptions::default()).await;
    let err = refused.err().ok_or("a string for numbers was accepted")?;
    println!("refused: {}", err.to_json());
    assert_eq!(err.code.as_str(), "INVALID_ARGUMENT");

    // The plugin's tools, whatever they are, went through the same pipeline.
    let tools: Vec<String> =
        host.tools().iter().filter(|t| t.plugin != "host").map(|t| t.name.clone()).collect();
    println!("tools: {tools:?}");
    // The fixtures' tools the tests load: (tool, arguments, what it answers).
    let known = [
        ("hello_greet", json!({"name": "embedder"}), "Hello, embedder!"),
        ("scoped_note", json!({"text": "from an embedder"}), "noted from an embedder"),
    ];
    for (tool, args, says) in known.into_iter().filter(|(t, ..)| tools.iter().any(|n| n == t)) {
        let text = host.call_tool(tool, args, CallOptions::default()).await?.text();
        println!("{tool}: {text}");
        assert!(text.contains(says), "{text}");
    }
    // Both calls are in the journal.
    let journal =
        host.call_tool("oc_journal", json!({"action": "summary"}), CallOptions::default()).await?;
    println!("journal: {}", journal.structured.clone().unwrap_or_default());
    host.shutdown().await;
    let _ = std::fs::remove_dir_all(&data);
    Ok(())
}
