//! Task runs (`oc_task_run_*`, host tools) over MCP: the state machine, item
//! bookkeeping, structured refusals that change nothing, and runs surviving a
//! restart.

use anyhow::Result;
use ochre_tests::*;
use serde_json::json;

#[tokio::test]
async fn a_task_run_moves_through_its_states_and_survives_a_restart() -> Result<()> {
    let data = TempDir::new("taskruns");
    let client = stdio_client(data.path(), &[], &[]).await?;
    let r = structured(
        &call(
            &client,
            "oc_task_run_start",
            json!({"goal": "collect the prices of 3 products", "success_criteria": "3 prices"}),
        )
        .await?,
    );
    let id = r["run_id"].as_str().expect("run_id").to_owned();
    assert_eq!(r["status"], "PENDING");
    let r = structured(
        &call(
            &client,
            "oc_task_run_update",
            json!({"run_id": id, "progress_summary": "2 of 3",
                   "completed_items": ["mug", "teapot", "mug"],
                   "failed_items": [{"item": "saucer", "reason": "out of stock page"}],
                   "current_cursor": {"page": 2}}),
        )
        .await?,
    );
    assert_eq!(r["status"], "RUNNING");
    assert_eq!(
        (r["completed_count"].as_u64(), r["failed_count"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(r["current_cursor"], json!({"page": 2}));
    let r = structured(
        &call(
            &client,
            "oc_task_run_needs_help",
            json!({"run_id": id, "reason": "a captcha", "resume_hint": "solve it, then checkpoint"}),
        )
        .await?,
    );
    assert_eq!(r["status"], "NEEDS_HELP");

    // Refusals are structured and change nothing.
    let err = error_of(
        &call(
            &client,
            "oc_task_run_complete",
            json!({"run_id": id, "status": "COMPLETED", "force": true}),
        )
        .await?,
    );
    assert_eq!(err["field"], "force_reason");
    let err = error_of(&call(&client, "oc_task_run_get", json!({"run_id": "run-nope"})).await?);
    assert_eq!(err["code"], "RUN_NOT_FOUND");
    let err = error_of(
        &call(
            &client,
            "oc_task_run_complete",
            json!({"run_id": id, "status": "DONE"}),
        )
        .await?,
    );
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    assert_eq!(
        structured(&call(&client, "oc_task_run_get", json!({"run_id": id})).await?)["status"],
        "NEEDS_HELP"
    );
    client.cancel().await?;

    // After a restart: resume, finish, and a finished run stays finished.
    let client = stdio_client(data.path(), &[], &[]).await?;
    let r = structured(
        &call(
            &client,
            "oc_task_run_checkpoint",
            json!({"run_id": id, "summary": "captcha solved"}),
        )
        .await?,
    );
    assert_eq!(r["status"], "RUNNING");
    let r = structured(
        &call(
            &client,
            "oc_task_run_update",
            json!({"run_id": id, "completed_items": ["saucer"]}),
        )
        .await?,
    );
    assert_eq!(
        (r["completed_count"].as_u64(), r["failed_count"].as_u64()),
        (Some(3), Some(0))
    );
    let r = structured(
        &call(
            &client,
            "oc_task_run_complete",
            json!({"run_id": id, "status": "COMPLETED"}),
        )
        .await?,
    );
    assert_eq!(r["status"], "COMPLETED");
    let err = error_of(
        &call(
            &client,
            "oc_task_run_update",
            json!({"run_id": id, "progress_summary": "more"}),
        )
        .await?,
    );
    assert_eq!(
        (err["code"].as_str(), err["status"].as_str()),
        (Some("INVALID_TRANSITION"), Some("COMPLETED"))
    );
    let r = structured(
        &call(
            &client,
            "oc_task_run_get",
            json!({"run_id": id, "include_events": true}),
        )
        .await?,
    );
    let events: Vec<&str> = r["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["event"].as_str())
        .collect();
    assert_eq!(
        events,
        [
            "started",
            "updated",
            "needs_help",
            "checkpoint",
            "updated",
            "completed"
        ]
    );
    let l = structured(&call(&client, "oc_task_run_list", json!({"status": "COMPLETED"})).await?);
    assert_eq!(l["runs"][0]["run_id"], id.as_str());
    let l = structured(&call(&client, "oc_task_run_list", json!({"status": "RUNNING"})).await?);
    assert_eq!(l["runs"], json!([]));
    client.cancel().await?;
    Ok(())
}
