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
    let r = client
        .tool_json(
            "oc_task_run_start",
            json!({"goal": "collect the prices of 3 products", "success_criteria": "3 prices"}),
        )
        .await?;
    let id = r["run_id"].as_str().expect("run_id").to_owned();
    assert_eq!(r["status"], "PENDING");
    let r = client
        .tool_json(
            "oc_task_run_update",
            json!({"run_id": id, "progress_summary": "2 of 3",
                   "completed_items": ["mug", "teapot", "mug"],
                   "failed_items": [{"item": "saucer", "reason": "out of stock page"}],
                   "current_cursor": {"page": 2}}),
        )
        .await?;
    assert_eq!(r["status"], "RUNNING");
    assert_eq!((r["completed_count"].as_u64(), r["failed_count"].as_u64()), (Some(2), Some(1)));
    assert_eq!(r["current_cursor"], json!({"page": 2}));
    let r = client.tool_json("oc_task_run_needs_help", json!({"run_id": id, "reason": "a captcha", "resume_hint": "solve it, then checkpoint"}))
    .await?;
    assert_eq!(r["status"], "NEEDS_HELP");

    // Refusals are structured and change nothing.
    let err = client
        .tool_error(
            "oc_task_run_complete",
            json!({"run_id": id, "status": "COMPLETED", "force": true}),
        )
        .await?;
    assert_eq!(err["field"], "force_reason");
    let err = client.tool_error("oc_task_run_get", json!({"run_id": "run-nope"})).await?;
    assert_eq!(err["code"], "RUN_NOT_FOUND");
    let err =
        client.tool_error("oc_task_run_complete", json!({"run_id": id, "status": "DONE"})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    assert_eq!(
        client.tool_json("oc_task_run_get", json!({"run_id": id})).await?["status"],
        "NEEDS_HELP"
    );
    client.cancel().await?;

    // After a restart: resume, finish, and a finished run stays finished.
    let client = stdio_client(data.path(), &[], &[]).await?;
    let r = client
        .tool_json("oc_task_run_checkpoint", json!({"run_id": id, "summary": "captcha solved"}))
        .await?;
    assert_eq!(r["status"], "RUNNING");
    let r = client
        .tool_json("oc_task_run_update", json!({"run_id": id, "completed_items": ["saucer"]}))
        .await?;
    assert_eq!((r["completed_count"].as_u64(), r["failed_count"].as_u64()), (Some(3), Some(0)));
    let r = client
        .tool_json("oc_task_run_complete", json!({"run_id": id, "status": "COMPLETED"}))
        .await?;
    assert_eq!(r["status"], "COMPLETED");
    let err = client
        .tool_error("oc_task_run_update", json!({"run_id": id, "progress_summary": "more"}))
        .await?;
    assert_eq!(
        (err["code"].as_str(), err["status"].as_str()),
        (Some("INVALID_TRANSITION"), Some("COMPLETED"))
    );
    let r =
        client.tool_json("oc_task_run_get", json!({"run_id": id, "include_events": true})).await?;
    let events: Vec<&str> = r["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["event"].as_str())
        .collect();
    assert_eq!(events, ["started", "updated", "needs_help", "checkpoint", "updated", "completed"]);
    let l = client.tool_json("oc_task_run_list", json!({"status": "COMPLETED"})).await?;
    assert_eq!(l["runs"][0]["run_id"], id.as_str());
    let l = client.tool_json("oc_task_run_list", json!({"status": "RUNNING"})).await?;
    assert_eq!(l["runs"], json!([]));
    client.cancel().await?;
    Ok(())
}

/// A file cut to half its length (a torn write that slipped past the atomic
/// rename: a disk fault, a hand edit).
fn truncate_half(file: &std::path::Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(file)?;
    let half = bytes[..bytes.len() / 2].to_vec();
    std::fs::write(file, &half)?;
    Ok(half)
}

#[tokio::test]
async fn damaged_state_answers_state_corrupt_naming_the_file_and_is_kept() -> Result<()> {
    let (site, data, client) = site_and_client("damaged", &[]).await?;
    let run = client.tool_json("oc_task_run_start", json!({"goal": "keep me"})).await?;
    let run = run["run_id"].as_str().expect("run_id").to_owned();
    let c = client
        .tool_json("oc_bulk_progress_start", json!({"expected_total": 2, "item_key": "url"}))
        .await?;
    let contract = c["contract_id"].as_str().expect("contract_id").to_owned();
    navigate(&client, &site.url("large.html")).await?;
    let d = client.tool_json("read_page", json!({"output_mode": "handle"})).await?;
    let handle = d["output_handle"].as_str().expect("handle").to_owned();
    let whole_entries = client.tool_json("oc_journal", json!({"limit": 100})).await?["entries"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    client.cancel().await?;

    // Damage each store's file; tear the journal's last line.
    let run_file = data.path().join("task-runs").join(&run).join("meta.json");
    let contract_file = data.path().join("progress-contracts").join(format!("{contract}.json"));
    let side = std::fs::read_dir(data.path().join("output"))?
        .flatten()
        .map(|day| day.path().join(format!("{handle}.meta.json")))
        .find(|p| p.exists())
        .expect("the handle's metadata");
    let damaged = [
        (run_file.clone(), truncate_half(&run_file)?),
        (contract_file.clone(), truncate_half(&contract_file)?),
        (side.clone(), truncate_half(&side)?),
    ];
    let journal = std::fs::read_dir(data.path().join("journal"))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a journal file");
    let mut torn = std::fs::OpenOptions::new().append(true).open(&journal)?;
    std::io::Write::write_all(&mut torn, b"{\"torn\": tr")?;
    drop(torn);

    // A restart (its sweep included) keeps every damaged file as it was, and
    // each call that needs one answers STATE_CORRUPT naming it.
    let client = stdio_client(data.path(), &[], &[]).await?;
    let cases = [
        ("oc_task_run_get", json!({"run_id": run}), &run_file),
        ("oc_bulk_progress_check", json!({"contract_id": contract}), &contract_file),
        ("oc_output_fetch", json!({"output_handle": handle}), &side),
    ];
    for (tool, args, file) in cases {
        let err = client.tool_error(tool, args).await?;
        assert_eq!(err["code"], "STATE_CORRUPT", "{tool}: {err}");
        assert_eq!(err["file"], file.display().to_string(), "{tool}: {err}");
    }
    for (file, bytes) in &damaged {
        assert_eq!(&std::fs::read(file)?, bytes, "{} was changed", file.display());
    }
    // A run naming the damaged run does nothing either.
    let err = client
        .tool_error("oc_task_run_update", json!({"run_id": run, "progress_summary": "x"}))
        .await?;
    assert_eq!(err["code"], "STATE_CORRUPT");
    assert_eq!(std::fs::read(&run_file)?, damaged[0].1);

    // The torn journal line stays one bad line: the next entries are whole, and
    // oc_journal shows every whole entry.
    let after = client.tool_json("oc_journal", json!({"limit": 100})).await?;
    let entries = after["entries"].as_array().cloned().unwrap_or_default();
    assert!(entries.len() > whole_entries, "{} <= {whole_entries}", entries.len());
    let text = std::fs::read_to_string(&journal)?;
    let lines: Vec<&str> = text.lines().collect();
    let torn_at =
        lines.iter().position(|l| *l == "{\"torn\": tr").expect("the torn line stands alone");
    assert!(torn_at + 1 < lines.len(), "nothing was written after the torn line");
    for l in &lines[torn_at + 1..] {
        serde_json::from_str::<serde_json::Value>(l)?;
    }
    client.cancel().await?;

    // `ochre doctor` names each damaged file and how to mend it, and fails.
    let out = ochre_cli(data.path(), &["doctor"])?;
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{said}");
    for (file, _) in &damaged {
        assert!(said.contains(&format!("FAIL  state              {}", file.display())), "{said}");
    }
    assert!(said.contains("fix: restore it from a backup"), "{said}");
    Ok(())
}
