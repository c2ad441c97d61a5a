//! The guards that keep an agent on task, over MCP against real Chromium and the
//! local fixtures: the bulk progress contract and its completion guard (seed 002's
//! live verification), the browser-first intent guard (seed 003's four scenarios,
//! the model detector over MCP sampling, the config file) and hints.
// MCP sampling is deprecated by SEP-2577, but clients still offer it.
#![allow(deprecated)]

use anyhow::Result;
use ochre_tests::*;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    Implementation, Role, SamplingMessage, SamplingMessageContentBlock,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleClient};
use serde_json::{Value, json};

async fn run_get(client: &Client, id: &str) -> Result<Value> {
    client.tool_json("oc_task_run_get", json!({"run_id": id, "include_events": true})).await
}

async fn visit(client: &Client, url: &str) -> Result<()> {
    let r = client.tool("navigate", json!({"url": url})).await?;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let r = client.tool("read_page", json!({"mode": "text"})).await?;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    Ok(())
}

#[tokio::test]
async fn a_bulk_contract_refuses_premature_completion_and_survives_a_restart() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("bulk");
    let urls: Vec<String> =
        ["product.html", "form.html", "page2.html"].iter().map(|p| site.url(p)).collect();
    let client = stdio_client(data.path(), &[], &[]).await?;
    let run = client.tool_json("oc_task_run_start", json!({"goal": "Visit three URLs and collect their titles",
                   "bulk_contract": {"expected_total": 3, "item_key": "url", "expected_items": urls}})).await?;
    let id = run["run_id"].as_str().expect("run_id").to_owned();
    assert_eq!(run["bulk_contract"]["expected_total"], 3);
    assert_eq!(run["execution"]["intent"]["label"], "general");

    // Visit one, record it, try to complete: refused with the missing count.
    visit(&client, &urls[0]).await?;
    client
        .tool_json(
            "oc_task_run_update",
            json!({"run_id": id, "completed_items": [urls[0]], "current_cursor": "after-1"}),
        )
        .await?;
    let r =
        client.tool("oc_task_run_complete", json!({"run_id": id, "status": "COMPLETED"})).await?;
    let err = error_of(&r);
    assert_eq!(err["code"], "bulk_completion_guard_failed");
    assert_eq!(err["missing_count"], 2);
    assert_eq!(err["failed_count"], 0);
    assert_eq!(err["missing_items"], json!([urls[1], urls[2]]));
    let next = err["suggested_next_action"].as_str().expect("next action");
    assert!(next.contains(&urls[1]), "{next}");
    assert_eq!(err["_hint"]["rule"], "premature_completion");
    assert_eq!(err["_hint"]["severity"], "warning");
    assert!(texts(&r).contains("hint (warning): Not done yet: 2 item(s) missing"), "{}", texts(&r));
    assert_eq!(run_get(&client, &id).await?["status"], "RUNNING", "a refusal changes nothing");

    // Visit and record the other two (through the progress helper): completion passes.
    for u in &urls[1..] {
        visit(&client, u).await?;
    }
    let c = client
        .tool_json(
            "oc_bulk_progress_update",
            json!({"run_id": id, "completed": [urls[1], urls[2], urls[1]]}),
        )
        .await?;
    assert_eq!(c["completed_count"], 3, "duplicates count once");
    assert_eq!(c["completion_guard"]["allowed"], true);
    let done = client
        .tool_json("oc_task_run_complete", json!({"run_id": id, "status": "COMPLETED"}))
        .await?;
    assert_eq!(done["status"], "COMPLETED");
    assert_eq!(done["bulk_contract"]["completed"], json!(urls));
    assert_eq!(done["execution"]["stop_reason"], "completed");

    // One item fails: not complete unless the contract allows partial completion
    // or the agent forces it with a reason.
    let start = |partial: bool| {
        json!({"goal": "Visit three URLs",
               "bulk_contract": {"expected_items": urls, "item_key": "url", "allow_partial": partial}})
    };
    let strict = client.tool_json("oc_task_run_start", start(false)).await?;
    let strict_id = strict["run_id"].as_str().expect("id").to_owned();
    let partial = client.tool_json("oc_task_run_start", start(true)).await?;
    let partial_id = partial["run_id"].as_str().expect("id").to_owned();
    for rid in [&strict_id, &partial_id] {
        client
            .tool_json(
                "oc_task_run_update",
                json!({"run_id": rid, "completed_items": [urls[0], urls[1]],
                       "failed_items": [{"item": urls[2], "reason": "HTTP 500"}],
                       "current_cursor": {"page": 3}}),
            )
            .await?;
    }
    let err = client
        .tool_error("oc_task_run_complete", json!({"run_id": strict_id, "status": "COMPLETED"}))
        .await?;
    assert_eq!(
        (err["code"].as_str(), err["missing_count"].as_u64(), err["failed_count"].as_u64()),
        (Some("bulk_completion_guard_failed"), Some(0), Some(1))
    );
    let err = client
        .tool_error(
            "oc_task_run_complete",
            json!({"run_id": strict_id, "status": "COMPLETED", "force": true, "force_reason": " "}),
        )
        .await?;
    assert_eq!(err["field"], "force_reason");
    let forced = client
        .tool_json(
            "oc_task_run_complete",
            json!({"run_id": strict_id, "status": "COMPLETED", "force": true,
                   "force_reason": "the third page is down; the user accepts two"}),
        )
        .await?;
    assert_eq!(forced["status"], "COMPLETED");
    assert_eq!(forced["forced"]["guard"]["failed_count"], 1);
    let ok = client
        .tool_json("oc_task_run_complete", json!({"run_id": partial_id, "status": "COMPLETED"}))
        .await?;
    assert_eq!(ok["status"], "COMPLETED");
    assert_eq!(ok["bulk_contract"]["failed"][0]["item"], urls[2].as_str(), "failures are kept");
    assert_eq!(ok["bulk_contract"]["completed_count"], 2, "a failure never counts as done");
    client.cancel().await?;

    // After a restart the runs show the same items, failures and cursors.
    let client = stdio_client(data.path(), &[], &[]).await?;
    let again = run_get(&client, &id).await?;
    assert_eq!(again["bulk_contract"]["completed"], json!(urls));
    assert_eq!(again["current_cursor"], "after-1");
    assert_eq!(again["bulk_contract"]["cursor"], "after-1");
    let again = run_get(&client, &strict_id).await?;
    assert_eq!(again["bulk_contract"]["failed"][0]["reason"], "HTTP 500");
    assert_eq!(again["current_cursor"], json!({"page": 3}));
    assert_eq!(again["forced"]["reason"], "the third page is down; the user accepts two");
    let events: Vec<&str> = again["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["event"].as_str())
        .collect();
    assert!(events.contains(&"completion_refused"), "{events:?}");
    // A finished run's contract is closed.
    let err = client
        .tool_error("oc_bulk_progress_update", json!({"run_id": id, "completed": ["x"]}))
        .await?;
    assert_eq!(err["code"], "CONTRACT_CLOSED");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_crawl_records_its_pages_in_a_contract() -> Result<()> {
    let (site, data, client) = site_and_client("bulk-crawl", &[]).await?;
    // Malformed contracts are structured errors and create nothing.
    let err = client.tool_error("oc_bulk_progress_start", json!({"item_key": "url"})).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("stop_condition"))
    );
    let err = client
        .tool_error("oc_bulk_progress_start", json!({"expected_total": 2, "min_completed": 5}))
        .await?;
    assert_eq!(err["field"], "min_completed");
    assert!(
        !data.path().join("progress-contracts").exists()
            || std::fs::read_dir(data.path().join("progress-contracts"))?.next().is_none()
    );

    let c = client.tool_json("oc_bulk_progress_start", json!({"scope": "crawl", "item_key": "url", "stop_condition": "the crawl reached its page budget"})).await?;
    let cid = c["contract_id"].as_str().expect("contract id").to_owned();
    assert_eq!(c["completion_guard"]["allowed"], false);
    // A crawl naming a contract that does not exist does nothing.
    let before = site.hits();
    let err = client.tool_error("crawl", json!({"url": site.url("many-pages/index.html"), "max_pages": 5, "contract_id": "bp-nope"}))
    .await?;
    assert_eq!(err["code"], "CONTRACT_NOT_FOUND");
    assert_eq!(site.hits(), before, "no page was fetched");

    let r = client
        .tool(
            "crawl",
            json!({"url": site.url("many-pages/index.html"), "max_pages": 5, "contract_id": cid}),
        )
        .await?;
    let pages = structured(&r)["pages"].as_array().expect("pages").clone();
    assert_eq!(pages.len(), 5);
    assert!(texts(&r).contains("recorded 5 completed"), "{}", texts(&r));
    let c = client
        .tool_json("oc_bulk_progress_check", json!({"contract_id": cid, "include_items": true}))
        .await?;
    assert_eq!(c["completed_count"], 5);
    let recorded: Vec<&str> =
        c["completed"].as_array().expect("items").iter().filter_map(Value::as_str).collect();
    for p in &pages {
        assert!(recorded.contains(&p["url"].as_str().expect("url")), "{p} not in {recorded:?}");
    }
    let c = client
        .tool_json("oc_bulk_progress_update", json!({"contract_id": cid, "stop_satisfied": true}))
        .await?;
    assert_eq!(c["completion_guard"]["allowed"], true);
    client.cancel().await?;
    Ok(())
}

/// Start a task run; the run and its id.
async fn start_run(client: &Client, goal: &str) -> Result<(Value, String)> {
    let run = client.tool_json("oc_task_run_start", json!({"goal": goal})).await?;
    let id = run["run_id"].as_str().expect("run_id").to_owned();
    Ok((run, id))
}

/// A server with the `scoped` fixture plugin (network-adjacent and local tools).
async fn scoped_client(label: &str) -> Result<(TempDir, TempDir, Client)> {
    let plugins = plugin_dir_with(&["scoped"]);
    let data = TempDir::new(label);
    let dir = plugins.path().display().to_string();
    let client = stdio_client(data.path(), &["--plugin-dir", &dir], &[]).await?;
    Ok((plugins, data, client))
}

#[tokio::test]
async fn a_browser_task_with_browser_tools_succeeds() -> Result<()> {
    let (site, _data, client) = site_and_client("intent-ok", &[]).await?;
    let (run, id) =
        start_run(&client, "Open the product page in the browser and read its price").await?;
    assert_eq!(run["execution"]["intent"]["label"], "browser_access");
    assert_eq!(run["execution"]["intent"]["detector"], "heuristic");
    visit(&client, &site.url("product.html")).await?;
    let done = client
        .tool_json("oc_task_run_complete", json!({"run_id": id, "status": "COMPLETED"}))
        .await?;
    assert_eq!(done["status"], "COMPLETED");
    assert_eq!(done["execution"]["successful_browser_calls"], 2);
    assert_eq!(done["execution"]["stop_reason"], "completed");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_browser_task_without_browser_tools_fails_at_preflight() -> Result<()> {
    let data = TempDir::new("intent-preflight");
    let client = stdio_client(data.path(), &["--tools-only", "totp"], &[]).await?;
    let err = client
        .tool_error("oc_task_run_start", json!({"goal": "用浏览器打开 example.com 并读取标题"}))
        .await?;
    assert_eq!(err["code"], "intent_execution_failed");
    assert_eq!(err["stop_reason"], "intent_execution_failed");
    let id = err["run_id"].as_str().expect("the failed run is on record");
    let run = run_get(&client, id).await?;
    assert_eq!(run["status"], "FAILED");
    assert_eq!(run["execution"]["stop_reason"], "intent_execution_failed");
    let events: Vec<&str> = run["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["event"].as_str())
        .collect();
    assert_eq!(events, ["started", "preflight_failed"]);
    // A general task on the same server starts as usual.
    let ok = client.tool_json("oc_task_run_start", json!({"goal": "generate a TOTP code"})).await?;
    assert_eq!(ok["status"], "PENDING");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn network_adjacent_calls_beyond_the_soft_limit_and_local_calls_are_blocked() -> Result<()> {
    let (_plugins, _data, client) = scoped_client("intent-block").await?;
    let (_, id) = start_run(&client, "Use the browser to check the shop's opening hours").await?;
    for n in 1..=2 {
        let r = client.tool("scoped_lookup", json!({"query": "hours"})).await?;
        assert!(texts(&r).contains(&format!("(#{n})")), "{}", texts(&r));
    }
    let r = client.tool("scoped_lookup", json!({"query": "hours"})).await?;
    let err = error_of(&r);
    assert_eq!(err["code"], "tool_policy_blocked");
    assert_eq!(err["stop_reason"], "tool_policy_blocked");
    assert_eq!(err["scope"], "network-adjacent");
    assert_eq!(err["_hint"]["rule"], "policy_blocked");
    let err = client.tool_error("scoped_note", json!({"text": "x"})).await?;
    assert_eq!(
        (err["code"].as_str(), err["scope"].as_str()),
        (Some("tool_policy_blocked"), Some("local"))
    );
    // Bad arguments are still refused as such, before the guard.
    let err = client.tool_error("scoped_note", json!({"text": ""})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    let run = run_get(&client, &id).await?;
    assert_eq!(run["execution"]["blocked_calls"], 2);
    assert_eq!(run["execution"]["network_adjacent_calls"], 2);
    assert_eq!(run["execution"]["stop_reason"], "tool_policy_blocked");
    let blocked = run["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["event"] == "tool_policy_blocked")
        .count();
    assert_eq!(blocked, 2);
    // Outside the run (it is over) the tools run again: the blocked calls never ran.
    client.tool_json("oc_task_run_complete", json!({"run_id": id, "status": "CANCELLED"})).await?;
    let r = client.tool("scoped_lookup", json!({"query": "hours"})).await?;
    assert!(texts(&r).contains("(#3)"), "{}", texts(&r));
    let r = client.tool("scoped_note", json!({"text": "x"})).await?;
    assert!(texts(&r).contains("(#1)"), "{}", texts(&r));
    // A run named explicitly (run_id, accepted by every tool) is guarded too.
    let run = client
        .tool_json("oc_task_run_start", json!({"goal": "open in browser the help page"}))
        .await?;
    let other = client.tool_json("oc_task_run_start", json!({"goal": "summarize notes"})).await?;
    // Two active runs: a call without run_id belongs to neither.
    let r = client.tool("scoped_note", json!({"text": "y"})).await?;
    assert!(texts(&r).contains("(#2)"), "{}", texts(&r));
    let err =
        client.tool_error("scoped_note", json!({"text": "y", "run_id": run["run_id"]})).await?;
    assert_eq!(err["code"], "tool_policy_blocked");
    let r = client.tool("scoped_note", json!({"text": "z", "run_id": other["run_id"]})).await?;
    assert!(texts(&r).contains("(#3)"), "a general run is not guarded: {}", texts(&r));
    let err =
        client.tool_error("scoped_note", json!({"text": "y", "run_id": "run-missing"})).await?;
    assert_eq!(err["code"], "RUN_NOT_FOUND");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn only_non_browser_successes_cannot_complete_a_browser_task() -> Result<()> {
    let (_plugins, _data, client) = scoped_client("intent-unmet").await?;
    let (_, id) = start_run(&client, "Look up the weather in the browser").await?;
    let r = client.tool("scoped_lookup", json!({"query": "weather"})).await?;
    assert_ne!(r.is_error, Some(true));
    let r =
        client.tool("oc_task_run_complete", json!({"run_id": id, "status": "COMPLETED"})).await?;
    let err = error_of(&r);
    assert_eq!(err["code"], "intent_execution_failed");
    assert_eq!(err["_hint"]["rule"], "intent_unmet");
    let run = run_get(&client, &id).await?;
    assert_eq!(run["status"], "PENDING", "a refusal changes no status");
    assert_eq!(run["execution"]["stop_reason"], "intent_execution_failed");
    assert_eq!(run["execution"]["successful_browser_calls"], 0);
    let failed =
        client.tool_json("oc_task_run_complete", json!({"run_id": id, "status": "FAILED"})).await?;
    assert_eq!(failed["execution"]["stop_reason"], "intent_execution_failed");
    client.cancel().await?;
    Ok(())
}

/// A client whose "model" answers sampling requests with a fixed text.
#[derive(Clone)]
struct Model(&'static str);

impl rmcp::ClientHandler for Model {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.sampling = Some(Default::default());
        ClientConfig::new(caps, Implementation::new("sampling-test", "0"))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        assert!(params.system_prompt.as_deref().is_some_and(|p| p.contains("browser_access")));
        Ok(CreateMessageResult::new(
            SamplingMessage::new(Role::Assistant, SamplingMessageContentBlock::text(self.0)),
            "fixture-model".into(),
        ))
    }
}

#[tokio::test]
async fn the_model_detector_asks_the_client_and_falls_back_to_keywords() -> Result<()> {
    let data = TempDir::new("intent-model");
    let config = data.path().join("ochre.toml");
    std::fs::write(&config, "[intent_guard]\ndetector = \"model\"\nsoft_block_after = 1\n")?;
    let config = config.display().to_string();
    let args = ["--config", config.as_str()];
    let goal = json!({"goal": "Check what the shop's product page says about the mug"});

    let client = stdio_client_with(
        Model(
            "{\"label\":\"browser_access\",\"confidence\":0.87,\"reason\":\"needs the live page\"}",
        ),
        data.path(),
        &args,
        &[],
    )
    .await?;
    let run = client.tool_json("oc_task_run_start", goal.clone()).await?;
    let intent = &run["execution"]["intent"];
    assert_eq!(
        (intent["label"].as_str(), intent["detector"].as_str()),
        (Some("browser_access"), Some("model"))
    );
    assert_eq!(intent["confidence"], 0.87);
    assert_eq!(run["execution"]["policy"]["soft_block_after"], 1);
    // Keywords come first: the model is not needed for them.
    let run = client
        .tool_json("oc_task_run_start", json!({"goal": "open in browser the mug page"}))
        .await?;
    assert_eq!(run["execution"]["intent"]["detector"], "heuristic");
    client.cancel().await?;

    let client =
        stdio_client_with(Model("I think it is a browser thing!"), data.path(), &args, &[]).await?;
    let run = client.tool_json("oc_task_run_start", goal.clone()).await?;
    assert_eq!(run["execution"]["intent"]["label"], "general");
    assert!(
        run["execution"]["intent"]["reason"].as_str().is_some_and(|r| r.contains("not usable")),
        "{run}"
    );
    assert!(run["execution"]["policy"].is_null());
    client.cancel().await?;

    let client = stdio_client(data.path(), &args, &[]).await?;
    let run = client.tool_json("oc_task_run_start", goal).await?;
    assert_eq!(run["execution"]["intent"]["label"], "general");
    assert!(
        run["execution"]["intent"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("does not support sampling")),
        "{run}"
    );
    client.cancel().await?;
    Ok(())
}

#[test]
fn a_bad_config_file_is_a_startup_error_naming_the_key() -> Result<()> {
    let data = TempDir::new("intent-config");
    let config = data.path().join("bad.toml");
    std::fs::write(&config, "[intent_guard.browser]\nno_fallback = \"sometimes\"\n")?;
    let out = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .arg("--config")
        .arg(&config)
        .arg("tools")
        .output()?;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`intent_guard.browser.no_fallback` must be true or false"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    Ok(())
}

#[tokio::test]
async fn hints_point_to_read_page_flag_repeats_and_spot_login_walls() -> Result<()> {
    let (site, _data, client) = site_at("hints", &[], "form.html").await?;
    let snap = texts(&client.tool("read_page", json!({})).await?);
    let old = ref_in(&snap).to_owned();
    let r = navigate(&client, &site.url("product.html")).await?;
    assert!(structured(&r).get("_hint").is_none(), "an ordinary page earns no hint");
    let r = client.tool("interact", json!({"ref": old})).await?;
    let err = error_of(&r);
    assert_eq!(err["code"], "STALE_REF");
    assert_eq!(err["_hint"]["rule"], "stale_ref");
    assert!(texts(&r).contains("hint (info)") && texts(&r).contains("read_page"), "{}", texts(&r));

    // The same failing call three times.
    for n in 1..=3 {
        let err = client.tool_error("interact", json!({"ref": "ax_987654"})).await?;
        assert_eq!(err["code"], "REF_NOT_FOUND");
        let rule = err["_hint"]["rule"].as_str();
        assert_eq!(
            rule,
            if n < 3 { Some("unknown_ref") } else { Some("repeated_failure") },
            "call {n}"
        );
    }

    let r = navigate(&client, &site.url("login.html")).await?;
    let out = structured(&r);
    assert_eq!(out["_hint"]["rule"], "login_wall");
    assert_eq!(out["_hint"]["severity"], "warning");
    assert!(texts(&r).contains("hint (warning): This page looks like a login"), "{}", texts(&r));
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn each_http_session_has_its_own_active_run() -> Result<()> {
    let plugins = plugin_dir_with(&["scoped"]);
    let data = TempDir::new("intent-http");
    let dir = plugins.path().display().to_string();
    let server = HttpServer::start(data.path(), &["--plugin-dir", &dir], &[]).await?;
    let a = server.client().await?;
    let b = server.client().await?;
    // Session A starts a browser-first run; its local calls are blocked...
    let run = a
        .tool_json("oc_task_run_start", json!({"goal": "use the browser to read the news"}))
        .await?;
    assert_eq!(run["execution"]["intent"]["label"], "browser_access");
    let err = a.tool_error("scoped_note", json!({"text": "a"})).await?;
    assert_eq!(err["code"], "tool_policy_blocked");
    // ...while session B, with no run, is not affected.
    let r = b.tool("scoped_note", json!({"text": "b"})).await?;
    assert!(texts(&r).contains("noted b (#1)"), "{}", texts(&r));
    // B may still name A's run explicitly.
    let err = b.tool_error("scoped_note", json!({"text": "b", "run_id": run["run_id"]})).await?;
    assert_eq!(err["code"], "tool_policy_blocked");
    a.cancel().await?;
    b.cancel().await?;
    Ok(())
}

/// What a replay or a plan calls is guarded as the caller's own calls: in a
/// browser-first run, recorded crawls are let through up to the soft limit and
/// blocked after it (the site sees no extra request), a local tool is blocked,
/// the replay itself unlocks nothing, and the journal names each step's parent.
#[tokio::test]
async fn a_replay_and_a_plan_are_guarded_step_by_step_in_a_browser_first_run() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("guard-replay");
    let client = stdio_client(data.path(), &[], &[]).await?;
    let crawl = |n: u32| json!({"url": site.url(&format!("record?crawl={n}")), "max_pages": 1, "max_depth": 0, "respect_robots": false});
    // Recorded outside any run: three crawls and a local tool.
    let rec = client.tool_json("oc_recording_start", json!({"label": "crawls"})).await?;
    let id = rec["recordingId"].as_str().expect("id").to_owned();
    for n in 1..=3 {
        client.tool_json("crawl", crawl(n)).await?;
    }
    let plan = json!({"planId": "crawls", "steps": [{"tool": "crawl", "args": crawl(7)}, {"tool": "read_page"}]});
    client.tool_json("workflow_save_plan", plan).await?;
    client.tool_json("oc_recording_stop", json!({})).await?;
    let crawled =
        |site: &SiteServer| site.recorded().iter().filter(|q| q.contains("crawl=")).count();
    assert_eq!(crawled(&site), 3);

    let tabs = client.tool_json("tabs_context", json!({})).await?;
    let tab =
        tabs["tabs"][0]["tabId"].as_str().or(tabs["current"].as_str()).unwrap_or("t1").to_owned();
    // The same calls inside a browser-first run.
    let (_, run_id) =
        start_run(&client, "Use the browser to check the shop's opening hours").await?;
    // Recording tools are never blocked.
    client.tool_json("oc_recording_status", json!({})).await?;
    let r = client
        .tool_json("oc_recording_replay", json!({"recordingId": id, "stop_on_error": false}))
        .await?;
    assert_eq!(r["ok"], false, "{r}");
    let codes: Vec<&str> = r["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["code"].as_str().unwrap_or("ok"))
        .collect();
    assert_eq!(codes, ["ok", "ok", "tool_policy_blocked", "tool_policy_blocked"], "{r}");
    assert_eq!(crawled(&site), 5, "the blocked crawl sent no request");
    let got = run_get(&client, &run_id).await?;
    assert_eq!(got["execution"]["network_adjacent_calls"], 2, "{got}");
    assert_eq!(got["execution"]["blocked_calls"], 2, "{got}");
    assert_eq!(got["execution"]["successful_browser_calls"].as_u64().unwrap_or(0), 0, "{got}");
    // A plan's crawl is blocked the same; the plan counts as nothing.
    let p = client.tool_json("execute_plan", json!({"planId": "crawls", "tabId": tab})).await?;
    assert_eq!(p["ok"], false, "{p}");
    assert_eq!(p["steps"][0]["error"]["code"], "tool_policy_blocked", "{p}");
    assert_eq!(crawled(&site), 5);
    // Neither unlocks COMPLETED: no browser call of the run succeeded.
    let e = client
        .tool_error("oc_task_run_complete", json!({"run_id": run_id, "status": "COMPLETED"}))
        .await?;
    assert_eq!(e["code"], "intent_execution_failed", "{e}");
    // The replay's steps are in the journal, each naming the replay.
    let lines = read_jsonl_dir(&data.path().join("journal"));
    let replay = lines.iter().find(|l| l["tool"] == "oc_recording_replay").expect("replay");
    let children: Vec<&str> = lines
        .iter()
        .filter(|l| l["parent"] == replay["seq"])
        .filter_map(|l| l["tool"].as_str())
        .collect();
    assert_eq!(children, ["crawl", "crawl"], "the blocked calls did not run");
    // A blocked run keeps its reason whatever it ends in.
    let done = client
        .tool_json("oc_task_run_complete", json!({"run_id": run_id, "status": "FAILED"}))
        .await?;
    let got = run_get(&client, &run_id).await?;
    assert_eq!(got["execution"]["stop_reason"], "tool_policy_blocked", "{done} {got}");
    client.cancel().await?;
    Ok(())
}

/// Every tool accepts `run_id` (the host's own tools too), and a run it names
/// must exist.
#[tokio::test]
async fn every_tool_accepts_run_id() -> Result<()> {
    let data = TempDir::new("run-id-everywhere");
    let client = stdio_client(data.path(), &[], &[]).await?;
    let run = client.tool_json("oc_task_run_start", json!({"goal": "summarize notes"})).await?;
    let id = run["run_id"].clone();
    client.tool_json("oc_journal", json!({"run_id": id})).await?;
    client.tool_json("oc_task_run_list", json!({"run_id": id})).await?;
    let e = client
        .tool_error("oc_output_fetch", json!({"run_id": id, "output_handle": "oh-missing"}))
        .await?;
    assert_ne!(e["field"], "run_id", "{e}");
    let e = client.tool_error("oc_journal", json!({"run_id": "run-missing"})).await?;
    assert_eq!(e["code"], "RUN_NOT_FOUND", "{e}");
    client.cancel().await?;
    Ok(())
}
