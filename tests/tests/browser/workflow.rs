//! The `workflow` group over MCP against real Chromium: three workers in isolated
//! browser contexts over local pages; collecting before they finish names the
//! missing ones (the workflow's bulk contract), after it gives every result;
//! saved plans replay on a worker's tab.

use anyhow::Result;
use ochre_tests::*;
use serde_json::{Value, json};

async fn js(client: &Client, tab: &str, code: &str) -> Result<Value> {
    let r = client.tool("javascript_tool", json!({"code": code, "tabId": tab})).await?;
    Ok(structured(&r)["value"].clone())
}

#[tokio::test]
async fn a_workflow_of_three_workers_reports_missing_ones_then_all_results() -> Result<()> {
    let (site, _data, client) = site_and_client("workflow", &[]).await?;
    let pages = ["product.html", "form.html", "page2.html"];
    let workers: Vec<Value> = ["alpha", "beta", "gamma"]
        .iter()
        .zip(pages)
        .map(|(n, p)| json!({"name": n, "url": site.url(p), "task": format!("read the title of {p}")}))
        .collect();

    // Bad input is refused before any tab opens.
    let tabs_before = client.tool_json("tabs_context", json!({})).await?;
    let mut dup = workers.clone();
    dup[1]["name"] = json!("alpha");
    let err = client.tool_error("workflow_init", json!({"name": "titles", "workers": dup})).await?;
    assert_eq!(err["field"], "workers.1.name");
    let mut ftp = workers.clone();
    ftp[2]["url"] = json!("file:///etc/passwd");
    let err = client.tool_error("workflow_init", json!({"name": "titles", "workers": ftp})).await?;
    assert_eq!(err["field"], "workers.2.url");
    assert_eq!(client.tool_json("tabs_context", json!({})).await?, tabs_before);

    let wf =
        client.tool_json("workflow_init", json!({"name": "titles", "workers": workers})).await?;
    let id = wf["workflowId"].as_str().expect("id").to_owned();
    let tabs: Vec<String> = wf["workers"]
        .as_array()
        .expect("workers")
        .iter()
        .map(|w| w["tabId"].as_str().expect("tab").to_owned())
        .collect();
    assert_eq!(tabs.len(), 3);
    assert!(wf["contract_id"].as_str().is_some_and(|c| c.starts_with("bp-")), "{wf}");

    // Each worker's tab is on its page, in a browser context of its own.
    for (tab, page) in tabs.iter().zip(pages) {
        let href = js(&client, tab, "location.href").await?;
        assert_eq!(href, site.url(page));
    }
    js(&client, &tabs[0], "localStorage.setItem('who', 'alpha'); document.cookie = 'w=alpha'; 1")
        .await?;
    assert_eq!(js(&client, &tabs[0], "localStorage.getItem('who')").await?, "alpha");
    assert_eq!(js(&client, &tabs[1], "localStorage.getItem('who')").await?, Value::Null);
    assert_eq!(js(&client, &tabs[2], "document.cookie").await?, "");

    // One worker reports and finishes; collect names the other two.
    let title = js(&client, &tabs[0], "document.title").await?;
    client.tool("worker_update", json!({"workerName": "alpha", "progress": "page open"})).await?;
    let r = client.tool("worker_complete", json!({"workerName": "alpha", "status": "SUCCESS", "resultSummary": "got the title", "extractedData": {"title": title}}))
    .await?;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let err = client.tool_error("workflow_collect", json!({})).await?;
    assert_eq!(err["code"], "WORKFLOW_INCOMPLETE");
    assert_eq!(err["missing_workers"], json!(["beta", "gamma"]));
    assert_eq!(err["completion_guard"]["missing_count"], 2);
    assert_eq!(err["completion_guard"]["allowed"], false);
    let partial = client.tool_json("workflow_collect_partial", json!({"workflowId": id})).await?;
    assert_eq!(partial["results"].as_array().map(Vec::len), Some(1));
    assert_eq!(partial["pending_workers"], json!(["beta", "gamma"]));
    let status = client.tool_json("workflow_status", json!({})).await?;
    assert_eq!(status["workers"][0]["status"], "SUCCESS");
    assert_eq!(status["workers"][1]["status"], "RUNNING");
    // A finished worker stays finished; an unknown one is named.
    let err = client
        .tool_error(
            "worker_complete",
            json!({"workerName": "alpha", "status": "FAIL", "resultSummary": "x"}),
        )
        .await?;
    assert_eq!(err["code"], "INVALID_TRANSITION");
    let err = client.tool_error("worker_update", json!({"workerName": "delta"})).await?;
    assert_eq!(err["code"], "WORKER_NOT_FOUND");

    // A saved plan replays on a worker's tab, through the pipeline.
    let saved = client
        .tool_json(
            "workflow_save_plan",
            json!({"planId": "read-title", "steps": [
                {"tool": "navigate", "args": {"url": "{{page}}"}},
                {"tool": "javascript_tool", "args": {"code": "document.title"}}
            ]}),
        )
        .await?;
    assert_eq!(saved["params"], json!(["page"]));
    let err = client
        .tool_error("execute_plan", json!({"planId": "read-title", "tabId": tabs[1]}))
        .await?;
    assert_eq!(err["field"], "params");
    let ran = client.tool_json("execute_plan", json!({"planId": "read-title", "tabId": tabs[1], "params": {"page": site.url("form.html")}})).await?;
    assert_eq!(ran["ok"], true, "{ran}");
    assert_eq!(ran["steps"].as_array().map(Vec::len), Some(2));
    let beta_title = js(&client, &tabs[1], "document.title").await?;
    client.tool("worker_complete", json!({"workerName": "beta", "status": "PARTIAL", "resultSummary": "title only", "extractedData": {"title": beta_title}}))
    .await?;
    client
        .tool(
            "worker_complete",
            json!({"workerName": "gamma", "status": "FAIL", "resultSummary": "page had no title"}),
        )
        .await?;

    let all = client.tool_json("workflow_collect", json!({})).await?;
    assert_eq!(all["complete"], true);
    let results = all["results"].as_array().expect("results");
    let statuses: Vec<&str> = results.iter().filter_map(|r| r["status"].as_str()).collect();
    assert_eq!(statuses, ["SUCCESS", "PARTIAL", "FAIL"]);
    assert_eq!(results[0]["extractedData"]["title"], title);
    assert_eq!(all["completion_guard"]["completed_count"], 2);
    assert_eq!(all["completion_guard"]["failed_count"], 1);
    assert_eq!(all["completion_guard"]["missing_count"], 0);

    // Cleanup closes the worker tabs and forgets the workflow.
    let cleaned = client.tool_json("workflow_cleanup", json!({})).await?;
    assert_eq!(cleaned["closed_tabs"].as_array().map(Vec::len), Some(3));
    let open = client.tool_json("tabs_context", json!({})).await?.to_string();
    for t in &tabs {
        assert!(!open.contains(&format!("\"{t}\"")), "{t} still open: {open}");
    }
    let err = client.tool_error("workflow_status", json!({})).await?;
    assert_eq!(err["code"], "WORKFLOW_NOT_FOUND");
    client.cancel().await?;
    Ok(())
}
