//! An embedder's own intent detector (`HostBuilder::intent_detector`) decides a
//! run's intent, and the preflight fails a browser-first run on a host without
//! browser tools, before anything starts a browser.

use std::sync::Arc;

use ochre_host::intent::{BoxFuture, IntentDetector, Label, Verdict};
use ochre_host::{CallOptions, Host};
use serde_json::json;

/// Says `browser_access` for goals that mention "portal", nothing otherwise.
struct Portal;

impl IntentDetector for Portal {
    fn detect<'a>(&'a self, goal: &'a str) -> BoxFuture<'a, Option<Verdict>> {
        Box::pin(async move {
            goal.contains("portal").then(|| Verdict {
                label: Label::BrowserAccess,
                confidence: 0.7,
                reason: "portals are web apps".into(),
                source: String::new(),
            })
        })
    }
}

#[tokio::test]
async fn an_embedders_detector_decides_and_the_preflight_holds() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("ochre-embed-guard-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let host = Host::builder()
        .data_dir(&dir)
        .builtin_plugins(false)
        .compile_cache(false)
        .intent_detector(Arc::new(Portal))
        .build()
        .await?;
    let err = host
        .call_tool(
            "oc_task_run_start",
            json!({"goal": "file the expense in the HR portal"}),
            CallOptions::default(),
        )
        .await
        .expect_err("no browser tool on this host");
    assert_eq!(err.code.as_str(), "intent_execution_failed");
    let id = err.details["run_id"].as_str().expect("run id").to_owned();
    let run = host
        .call_tool("oc_task_run_get", json!({"run_id": id}), CallOptions::default())
        .await?
        .structured
        .expect("run");
    assert_eq!(run["status"], "FAILED");
    assert_eq!(run["execution"]["intent"]["detector"], "detector");
    assert_eq!(run["execution"]["intent"]["reason"], "portals are web apps");
    // Without the browser feature there is no browser to start.
    #[cfg(feature = "browser")]
    assert_eq!(host.browser().launches(), 0, "the preflight started no browser");
    // The detector has no opinion: the keywords decide.
    let run = host
        .call_tool("oc_task_run_start", json!({"goal": "sum the receipts"}), CallOptions::default())
        .await?
        .structured
        .expect("run");
    assert_eq!(run["execution"]["intent"]["label"], "general");
    assert!(run["execution"]["policy"].is_null());
    host.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
