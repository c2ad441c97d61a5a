//! An embedder adds a stage to the pipeline (`HostBuilder::stage`): one that
//! counts the calls that ran, and one that refuses a tool by its own policy.
//! Neither needs a browser or a plugin.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ochre_host::error::Code;
use ochre_host::pipeline::{BoxFuture, Call, Outcome, Stage};
use ochre_host::{CallOptions, Host, ToolError};
use serde_json::json;

/// Counts the calls that ran, and those that failed.
#[derive(Default)]
struct Count {
    ran: AtomicUsize,
    failed: AtomicUsize,
}

struct Counter(Arc<Count>);

impl Stage for Counter {
    fn name(&self) -> &'static str {
        "count"
    }

    fn after<'a>(&'a self, _call: &'a mut Call<'_>, outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        self.0.ran.fetch_add(1, Ordering::Relaxed);
        if outcome.is_err() {
            self.0.failed.fetch_add(1, Ordering::Relaxed);
        }
        ochre_host::pipeline::done()
    }
}

/// Refuses `oc_output_fetch` (an operator's own policy).
struct NoFetch;

impl Stage for NoFetch {
    fn name(&self) -> &'static str {
        "no_fetch"
    }

    fn check(&self, call: &mut Call<'_>) -> Result<(), ToolError> {
        match call.name() {
            "oc_output_fetch" => {
                Err(ToolError::new(Code::named("POLICY"), "output fetches are off here"))
            }
            _ => Ok(()),
        }
    }
}

#[tokio::test]
async fn an_added_stage_sees_every_call_that_runs_and_can_refuse_one() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("ochre-pipeline-stage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let count = Arc::new(Count::default());
    let host = Host::builder()
        .data_dir(&dir)
        .builtin_plugins(false)
        .compile_cache(false)
        .stage(Counter(count.clone()))
        .stage(NoFetch)
        .build()
        .await?;
    let stages = host.stages();
    assert_eq!(stages.first(), Some(&"arguments"));
    assert_eq!(&stages[stages.len() - 3..], ["hints", "count", "no_fetch"]);

    let call = |name: &'static str, args| host.call_tool(name, args, CallOptions::default());
    // Ran: counted.
    call("oc_journal", json!({})).await?;
    // Ran and failed (no such run): counted as failed.
    let e = call("oc_task_run_get", json!({"run_id": "run_nope"})).await;
    assert!(e.is_err());
    // Refused before running (schema; unknown tool; the added policy): not counted.
    let e = call("oc_journal", json!({"count": "many"})).await.expect_err("schema");
    assert_eq!(e.code.as_str(), "INVALID_ARGUMENT");
    let e = call("no_such_tool", json!({})).await.expect_err("unknown");
    assert_eq!(e.code.as_str(), "UNKNOWN_TOOL");
    let e = call("oc_output_fetch", json!({"output_handle": "oh_x"})).await.expect_err("policy");
    assert_eq!((e.code.as_str(), e.message.as_str()), ("POLICY", "output fetches are off here"));

    assert_eq!(count.ran.load(Ordering::Relaxed), 2);
    assert_eq!(count.failed.load(Ordering::Relaxed), 1);
    // The journal holds exactly the calls that ran.
    let journal = call("oc_journal", json!({"action": "recent"})).await?;
    let entries = journal.structured.expect("journal")["entries"].clone();
    let tools: Vec<&str> =
        entries.as_array().expect("entries").iter().filter_map(|e| e["tool"].as_str()).collect();
    assert_eq!(tools, ["oc_journal", "oc_task_run_get"], "{entries}");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
