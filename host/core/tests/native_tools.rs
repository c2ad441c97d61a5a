//! An embedder's native tools (`HostBuilder::tool`): typed arguments checked
//! against the schema derived from their type before the tool runs; the call's
//! run and session reach the tool; names taken by the host's own tools or by
//! another native tool fail the build; a tool of a disabled group answers
//! `CAPABILITY_DISABLED`; a browser-scoped native tool is guarded by a
//! browser-first task run like a plugin's tool.

use std::sync::{Arc, Mutex};

use ochre_host::intent::Scope;
use ochre_host::native::typed_tool;
use ochre_host::{CallOptions, CapabilityFilter, Error, Host, ToolOutput};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
}

fn temp(label: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("ochre-native-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    p
}

fn echo(name: &str) -> impl ochre_host::HostTool {
    typed_tool(name, "Echo the text.", |args: Echo, _| async move {
        Ok(ToolOutput::json(json!({"text": args.text})))
    })
}

#[tokio::test]
async fn typed_arguments_are_checked_and_the_call_reaches_the_tool() -> anyhow::Result<()> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let tool = typed_tool("echo", "Echo the text.", move |args: Echo, options: CallOptions| {
        log.lock().expect("log").push((args.text.clone(), options.session.clone()));
        async move { Ok(ToolOutput::json(json!({"text": args.text}))) }
    });
    let host =
        Host::builder().data_dir(temp("typed")).builtin_plugins(false).tool(tool).build().await?;
    let info = host.tools().into_iter().find(|t| t.name == "echo").expect("listed").clone();
    assert_eq!(info.plugin, "native");
    assert_eq!(info.input_schema["required"], json!(["text"]), "{}", info.input_schema);

    let out = host
        .call_tool("echo", json!({"text": "hi"}), CallOptions::default().in_session("s1"))
        .await?;
    assert_eq!(out.structured, Some(json!({"text": "hi"})));
    let err = host
        .call_tool("echo", json!({"text": 3}), CallOptions::default())
        .await
        .expect_err("refused");
    assert_eq!(err.code.as_str(), "INVALID_ARGUMENT");
    assert_eq!(err.details.get("field"), Some(&json!("text")), "{err:?}");
    // The refused call never reached the tool.
    assert_eq!(*seen.lock().expect("log"), [("hi".to_owned(), Some("s1".to_owned()))]);
    host.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn names_taken_fail_the_build() {
    let dir = temp("names");
    let clash = Host::builder()
        .data_dir(&dir)
        .builtin_plugins(false)
        .tool(echo("oc_journal"))
        .build()
        .await;
    assert!(matches!(clash, Err(Error::Config(ref m)) if m.contains("oc_journal")), "{clash:?}");
    let twice = Host::builder()
        .data_dir(&dir)
        .builtin_plugins(false)
        .tool(echo("e"))
        .tool(echo("e"))
        .build()
        .await;
    assert!(matches!(twice, Err(Error::Config(_))), "{twice:?}");
    let bad =
        Host::builder().data_dir(&dir).builtin_plugins(false).tool(echo("no spaces")).build().await;
    assert!(matches!(bad, Err(Error::Config(_))), "{bad:?}");
}

#[tokio::test]
async fn a_disabled_group_and_the_intent_guard_apply() -> anyhow::Result<()> {
    let only_totp = CapabilityFilter::Only(["totp".to_owned()].into());
    let host = Host::builder()
        .data_dir(temp("disabled"))
        .builtin_plugins(false)
        .capabilities(only_totp)
        .tool(echo("echo"))
        .build()
        .await?;
    let err = host
        .call_tool("echo", json!({"text": "x"}), CallOptions::default())
        .await
        .expect_err("off");
    assert_eq!(err.code.as_str(), "CAPABILITY_DISABLED");
    host.shutdown().await;

    // A local native tool in a browser-first run is blocked (the run's policy),
    // as a plugin's would be; a browser one passes; the host's own never block.
    let tidy = typed_tool("tidy_notes", "Tidy notes.", |args: Echo, _| async move {
        Ok(ToolOutput::json(json!({"tidied": args.text})))
    })
    .with_info(|i| i.scope = Some(Scope::Local));
    let browserish = typed_tool("open_page", "Open a page.", |args: Echo, _| async move {
        Ok(ToolOutput::json(json!({"opened": args.text})))
    })
    .with_info(|i| i.scope = Some(Scope::Browser));
    let host = Host::builder()
        .data_dir(temp("guard"))
        .builtin_plugins(false)
        .tool(tidy)
        .tool(browserish)
        .build()
        .await?;
    let opts = || CallOptions::default().in_session("agent");
    let run = host
        .call_tool(
            "oc_task_run_start",
            json!({"goal": "open the dashboard page in the browser and read it"}),
            opts(),
        )
        .await?;
    let run = run.structured.expect("run");
    assert_eq!(run["execution"]["intent"]["label"], "browser_access", "{run}");
    let err =
        host.call_tool("tidy_notes", json!({"text": "u"}), opts()).await.expect_err("blocked");
    assert_eq!(err.code.as_str(), "tool_policy_blocked", "{err}");
    host.call_tool("open_page", json!({"text": "u"}), opts()).await?;
    host.shutdown().await;
    Ok(())
}
