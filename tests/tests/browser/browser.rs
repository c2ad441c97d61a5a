//! The `core` group against real headless Chromium and the fixture sites.

use anyhow::Result;
use ochre_host::HostBrowser;
use ochre_tests::*;
use serde_json::json;

#[tokio::test]
async fn core_tools_drive_a_real_browser() -> Result<()> {
    let (site, _data, client) = site_and_client("browser", &[]).await?;
    let names = tool_names(&client).await?;
    for t in ["navigate", "tabs_context", "javascript_tool", "type", "press_key"] {
        assert!(names.contains(&t.to_owned()), "{t} missing: {names:?}");
    }
    // Tier 2 tools are not listed at start, yet they can be called.
    for t in ["page_content", "tabs_create", "page_reload"] {
        assert!(!names.contains(&t.to_owned()), "{t} listed: {names:?}");
    }

    let res = navigate(&client, &site.url("index.html")).await?;
    let out = res.structured_content.clone().expect("structured");
    assert_eq!(out["tabId"], "t1", "{out}");
    assert_eq!(out["title"], "Ochre fixture");
    assert!(out["url"].as_str().expect("url").ends_with("/index.html"));

    let res = client.tool("page_content", json!({})).await?;
    let text = result_json(&res);
    assert!(text.as_str().expect("text").contains("Hello from the fixture"), "{text}");
    let res = client.tool("page_content", json!({"format": "html", "maxChars": 40})).await?;
    let html = result_json(&res);
    assert!(html.as_str().expect("html").contains("cut:"), "{html}");

    let res = client.tool("javascript_tool", json!({"code": "document.querySelector('#count').click(); document.querySelector('#count').textContent"})).await?;
    assert_eq!(res.structured_content.clone().expect("value")["value"], "clicked 1");
    let res = client
        .tool(
            "javascript_tool",
            json!({"text": "new Promise(r => setTimeout(() => r({n: 42}), 10))"}),
        )
        .await?;
    assert_eq!(res.structured_content.clone().expect("value")["value"], json!({"n": 42}));
    let err =
        client.tool_error("javascript_tool", json!({"code": "throw new Error('boom')"})).await?;
    assert_eq!(err["code"], "JS_ERROR");
    assert!(err["message"].as_str().expect("message").contains("boom"));
    let err = client.tool_error("javascript_tool", json!({})).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("code"))
    );

    // History.
    let res = navigate(&client, &site.url("page2.html")).await?;
    assert_eq!(res.structured_content.clone().expect("s")["title"], "Page two");
    let res = navigate(&client, "back").await?;
    assert_eq!(res.structured_content.clone().expect("s")["title"], "Ochre fixture");
    let res = navigate(&client, "forward").await?;
    assert_eq!(res.structured_content.clone().expect("s")["title"], "Page two");
    let res = client.tool("page_reload", json!({})).await?;
    assert_eq!(res.structured_content.clone().expect("s")["title"], "Page two");

    // Tabs.
    let res = client.tool("tabs_create", json!({"url": site.url("index.html")})).await?;
    let t2 = res.structured_content.clone().expect("s");
    assert_eq!((t2["tabId"].as_str(), t2["current"].as_bool()), (Some("t2"), Some(true)));
    let res = client.tool("tabs_context", json!({})).await?;
    let tabs = res.structured_content.clone().expect("s")["tabs"].clone();
    assert_eq!(tabs.as_array().expect("tabs").len(), 2, "{tabs}");
    let res = client.tool("page_content", json!({"tabId": "t1"})).await?;
    assert!(result_json(&res).as_str().expect("text").contains("You followed the link"));
    client.tool("tabs_close", json!({"tabId": "t2"})).await?;
    let res = client.tool("tabs_context", json!({})).await?;
    let tabs = res.structured_content.clone().expect("s")["tabs"].clone();
    assert_eq!(
        tabs,
        json!([{"tabId": "t1", "url": site.url("page2.html"), "title": "Page two", "current": true}])
    );

    // Screenshot: MCP image content holding a PNG.
    let res = client.tool("page_screenshot", json!({})).await?;
    let image = res.content.first().and_then(|c| c.as_image()).expect("image content");
    assert_eq!(image.mime_type, "image/png");
    assert!(image.data.starts_with("iVBORw0KGgo"), "PNG signature in base64");

    // Bad input: structured errors, nothing happens.
    let err = client.tool_error("tabs_close", json!({"tabId": "t9"})).await?;
    assert_eq!(err["code"], "TAB_NOT_FOUND");
    let err = client
        .tool_error("navigate", json!({"url": site.url("index.html"), "tabId": "t9"}))
        .await?;
    assert_eq!(err["code"], "TAB_NOT_FOUND");
    let err = client.tool_error("navigate", json!({"url": "file:///etc/passwd"})).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("url"))
    );
    let err = client.tool_error("page_screenshot", json!({"format": "gif"})).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("format"))
    );
    let res = client.tool("javascript_tool", json!({"code": "location.href"})).await?;
    assert_eq!(
        res.structured_content.clone().expect("s")["value"],
        site.url("page2.html"),
        "the page did not move"
    );
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_missing_browser_is_a_structured_error_and_the_server_keeps_serving() -> Result<()> {
    let data = TempDir::new("nobrowser");
    let client =
        stdio_client(data.path(), &["--chrome-path", "/nonexistent/chromium"], &[]).await?;
    let err = client.tool_error("navigate", json!({"url": "about:blank"})).await?;
    assert_eq!(err["code"], "BROWSER_UNAVAILABLE");
    assert!(err["message"].as_str().expect("message").contains("apt-get install -y chromium"));
    let res = client.tool("oc_journal", json!({})).await?;
    assert_ne!(res.is_error, Some(true));
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_killed_browser_is_relaunched_and_the_result_says_so() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("relaunch");
    let profile = data.path().join("profile");
    let profile_arg = profile.to_str().expect("utf8").to_owned();
    let client = stdio_client(data.path(), &["--user-data-dir", &profile_arg], &[]).await?;
    let res = navigate(&client, &site.url("index.html")).await?;
    assert_ne!(res.is_error, Some(true), "{res:?}");
    // Chromium has `--user-data-dir=<dir>` on its command line; the server has the
    // flag and the dir as two arguments, so it is spared.
    let needle = format!("--user-data-dir={profile_arg}");
    assert!(kill_processes_with(&needle) > 0, "no browser process found");
    // The connection drop is noticed; the next call relaunches.
    let mut relaunched = None;
    for _ in 0..20 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let res = navigate(&client, &site.url("page2.html")).await?;
        if res.is_error != Some(true) {
            relaunched = Some(res);
            break;
        }
    }
    let res = relaunched.expect("a navigate succeeded after the kill");
    let texts: Vec<String> =
        res.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    assert!(texts.iter().any(|t| t.contains("relaunched")), "{texts:?}");
    assert_eq!(res.structured_content.clone().expect("s")["title"], "Page two");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_browser_killed_during_a_call_ends_the_call_at_once() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("kill-wait");
    let profile = data.path().join("profile");
    let profile_arg = profile.to_str().expect("utf8").to_owned();
    let client = stdio_client(data.path(), &["--user-data-dir", &profile_arg], &[]).await?;
    let needle = format!("--user-data-dir={profile_arg}");
    // Waits (a selector that never appears, a plain timeout, which once even
    // reported success), and calls that wait on the browser in other ways: a page
    // that loads slowly, a page whose script is busy, a crawl, a workflow's workers.
    let busy =
        "setTimeout(() => { const t = Date.now(); while (Date.now() - t < 15000) {} }, 200); 1";
    let cases = [
        ("wait_for", None, json!({"type": "selector", "value": "#never-there", "timeout": 20000})),
        ("wait_for", None, json!({"type": "timeout", "value": "15000", "timeout": 20000})),
        ("navigate", None, json!({"url": site.url("slow?ms=9000")})),
        ("read_page", Some(busy), json!({})),
        ("crawl", None, json!({"url": site.url("slow?ms=9000"), "max_pages": 5})),
        (
            "workflow_init",
            None,
            json!({"name": "slow", "workers": [{"name": "w", "url": site.url("slow?ms=9000"), "task": "wait"}]}),
        ),
    ];
    for (tool, setup, args) in cases {
        let res = navigate(&client, &site.url("index.html")).await?;
        assert_ne!(res.is_error, Some(true), "{tool}: {res:?}");
        if let Some(code) = setup {
            client.tool("javascript_tool", json!({"code": code})).await?;
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
        let started = std::time::Instant::now();
        let (res, killed) = tokio::join!(client.tool(tool, args), async {
            tokio::time::sleep(std::time::Duration::from_millis(700)).await;
            kill_processes_with(&needle)
        });
        assert!(killed > 0, "{tool}: no browser process found");
        let err = error_of(&res?);
        assert_eq!(err["code"], "BROWSER_UNAVAILABLE", "{tool}: {err}");
        // Within 2 s of the kill (700 ms in).
        let took = started.elapsed();
        println!("{tool}: ended {took:?} after the call started");
        assert!(took < std::time::Duration::from_millis(2_700), "{tool}: {took:?}");
    }
    // The next call relaunches.
    let res = navigate(&client, &site.url("page2.html")).await?;
    assert_ne!(res.is_error, Some(true), "{res:?}");
    client.cancel().await?;
    Ok(())
}

/// On both browsers: the headless shell (the default) and Chromium. Debian
/// starts each through a script in /usr/bin, the shell's without `exec`.
#[tokio::test]
async fn a_killed_servers_browser_and_profile_do_not_outlive_it() -> Result<()> {
    let site = SiteServer::start().await?;
    let chromium = chromium_bin()?.display().to_string();
    for args in [vec![], vec!["--chrome-path", chromium.as_str()]] {
        killed_server_leaves_nothing(&site, &args).await?;
    }
    Ok(())
}

async fn killed_server_leaves_nothing(site: &SiteServer, args: &[&str]) -> Result<()> {
    let data = TempDir::new("server-kill");
    let server = HttpServer::start(data.path(), args, &[]).await?;
    let client = server.client().await?;
    let res = navigate(&client, &site.url("index.html")).await?;
    assert_ne!(res.is_error, Some(true), "{res:?}");
    let pid = server.pid().expect("pid");
    let browser = descendants(pid);
    assert!(!browser.is_empty(), "the server runs no browser");
    let profiles = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(std::env::temp_dir())
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with(&format!("ochre-profile-{pid}-")))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(profiles().len(), 1, "{:?}", profiles());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")?;
    let record = data.path().join("run").join(format!("{}-{pid}.json", host.trim()));
    assert!(record.exists(), "no run record");

    // kill -9: the browser dies with the server.
    assert!(kill9(pid), "cannot kill the server");
    let mut left = browser.clone();
    for _ in 0..50 {
        left.retain(|p| process_runs(*p));
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        left.is_empty(),
        "{args:?}: browser processes outlived the server: {left:?} of {browser:?}"
    );
    drop(client);
    drop(server);

    // The next server with this data dir removes what the dead one left.
    let next = HttpServer::start(data.path(), args, &[]).await?;
    assert!(profiles().is_empty(), "a dead server's profile remains: {:?}", profiles());
    assert!(!record.exists(), "the dead server's record remains");
    // And it works.
    let client = next.client().await?;
    let res = navigate(&client, &site.url("page2.html")).await?;
    assert_ne!(res.is_error, Some(true), "{res:?}");
    client.cancel().await?;
    Ok(())
}

/// A browser manager of its own (a managed headless Chromium), its downloads in `data`.
fn manager(data: &TempDir) -> ochre_host::BrowserManager {
    ochre_host::BrowserManager::new(ochre_host::BrowserOptions {
        downloads_dir: Some(data.path().join("downloads")),
        ..Default::default()
    })
}

/// `navigate` takes the title and the login-wall evidence from what the
/// document reported at its load event; the `wall` operation right after it
/// answers from that, and once anything else has been done on the tab it reads
/// the page again (a stale answer would call a signed-in page a wall, or miss
/// one).
#[tokio::test]
async fn the_wall_read_at_a_load_stands_only_until_the_tab_is_touched() -> Result<()> {
    use ochre_host::browser::page_ops::Wall;
    let site = SiteServer::start().await?;
    let data = TempDir::new("wall-at-load");
    let b = manager(&data);
    let wall = async || -> Result<Option<String>> { Ok(b.run(None, &Wall {}, 5_000).await?.wall) };

    let info = b.navigate(None, &site.url("login.html"), 20_000).await?;
    assert_eq!(info.title, "Sign in to Fixture Shop");
    assert_eq!(wall().await?.as_deref(), Some("a login form"));
    // The document reported its load through a binding the page never sees.
    let key = serde_json::json!(format!("{}_load", ochre_host::browser::page_library_key()));
    let seen = format!(
        "typeof window[{key}] + ' ' + Object.keys(window).filter((k) => k.startsWith('__ochre')).length"
    );
    assert_eq!(b.evaluate(None, &seen, 5_000).await?, json!("undefined 0"));
    assert_eq!(wall().await?.as_deref(), Some("a login form"), "read again from the page");

    // The page changes after the load and before the question: the change is seen.
    b.navigate(None, &site.url("login.html?again=1"), 20_000).await?;
    b.evaluate(None, "document.querySelector('input[type=password]').remove()", 5_000).await?;
    assert_eq!(wall().await?, None, "the password field was removed after the load");

    // A wall at one load says nothing of the next page's.
    b.navigate(None, &site.url("login.html?again=2"), 20_000).await?;
    let info = b.navigate(None, &site.url("form.html"), 20_000).await?;
    assert_ne!(info.title, "Sign in to Fixture Shop");
    assert_eq!(wall().await?, None);
    b.history(None, -1, 20_000).await?;
    assert_eq!(wall().await?.as_deref(), Some("a login form"), "back on the login page");
    Ok(())
}

/// ochre follows its navigations itself: a crawl's worker tab whose page
/// was cut short by its time loads the next page at once (chromiumoxide,
/// which ochre's loads no longer go through, held a tab's next navigation
/// behind one it still waited for, until that one loaded or its own 30 s
/// passed); a reload asks the server again; a fragment of the page shown
/// answers where the tab is; an address that is a download says so, and
/// the download is made.
#[tokio::test]
async fn loads_are_followed_by_ochre_a_cut_short_one_holds_nothing_back() -> Result<()> {
    use ochre_host::browser::page_ops::VisitBatch;
    let site = SiteServer::start().await?;
    let data = TempDir::new("loads-followed");
    let b = manager(&data);
    let batch = VisitBatch {
        urls: vec![site.url("slow?ms=6000"), site.url("page2.html"), site.url("form.html")],
        concurrency: Some(1),
        timeout_ms: Some(1_000),
        render: Some("always".into()),
        format: Some("text".into()),
        ..Default::default()
    };
    let r = b.run(None, &batch, 30_000).await?.results;
    assert_eq!(r.len(), 3, "{r:?}");
    assert_eq!(r[0].code.as_ref().map(|c| c.as_str()), Some("TIMEOUT"), "{:?}", r[0]);
    assert_eq!((r[1].title.as_str(), &r[1].error), ("Page two", &None), "{:?}", r[1]);
    assert_eq!((r[2].title.as_str(), &r[2].error), ("Order a pizza", &None), "{:?}", r[2]);

    // A navigation cut short by its timeout holds the tab's next one back no more.
    let cut = b.navigate(None, &site.url("slow?ms=6000&tab"), 500).await;
    assert_eq!(cut.map(|i| i.url).map_err(|e| e.code.as_str().to_owned()), Err("TIMEOUT".into()));
    let info = b.navigate(None, &site.url("page2.html?after-cut"), 5_000).await?;
    assert_eq!(info.title, "Page two");

    // A reload is a new request for the page, answered when it has loaded.
    let asked = |path: &str| site.requests().iter().filter(|r| r.ends_with(path)).count();
    assert_eq!(asked("/page2.html?after-cut"), 1);
    let info = b.reload(None, 5_000).await?;
    assert_eq!((info.title.as_str(), asked("/page2.html?after-cut")), ("Page two", 2));

    // A fragment of the page shown: no new document; the answer says where
    // the tab is now, the same fragment again too.
    for frag in ["#a", "#a", "#b"] {
        let info =
            b.navigate(None, &site.url(&format!("page2.html?after-cut{frag}")), 5_000).await?;
        assert!(info.url.ends_with(&format!("?after-cut{frag}")), "{frag}: {}", info.url);
    }
    assert_eq!(asked("/page2.html?after-cut"), 2, "a fragment is not fetched");

    // A page with no title has an empty one, whichever call answers.
    assert_eq!(b.navigate(None, "about:blank", 5_000).await?.title, "");
    assert_eq!(b.reload(None, 5_000).await?.title, "");
    assert_eq!(b.tabs().await?[0].title, "");
    b.navigate(None, &site.url("page2.html?after-cut#b"), 5_000).await?;

    // An address that answers with no content: the tab stays where it was.
    let err = b.navigate(None, &site.url("nocontent"), 5_000).await.expect_err("no page");
    assert_eq!(err.code.as_str(), "NAVIGATION_FAILED", "{err:?}");
    assert!(
        err.message.contains("showed no new page")
            && err.message.contains("still shows http://")
            && err.message.ends_with("page2.html?after-cut#b"),
        "{}",
        err.message
    );

    // An address that is a file to download.
    let err = b.navigate(None, &site.url("download/report.csv"), 5_000).await.expect_err("a file");
    assert_eq!(err.code.as_str(), "NAVIGATION_FAILED", "{err:?}");
    assert!(err.message.contains("a file to download, not a page"), "{}", err.message);
    let file = data.path().join("downloads").join("report.csv");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !file.exists() && std::time::Instant::now() < until {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(file.exists(), "the download was not made");
    assert_eq!(b.tabs().await?[0].title, "Page two", "the tab shows the page it showed");

    // A reload of a page whose server has gone: the browser's error page
    // loads in its place, and the reload says it failed (it said the reload
    // was done, the tab titled by the error page).
    let gone = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/", gone.local_addr()?);
    let served = tokio::spawn(async move {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (mut s, _) = gone.accept().await?;
        let mut asked = Vec::new();
        while !asked.ends_with(b"\r\n\r\n") {
            let mut b = [0u8; 1];
            anyhow::ensure!(s.read(&mut b).await? == 1, "the request ended early");
            asked.push(b[0]);
        }
        let page = "<title>Soon gone</title><p>here";
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nCache-Control: no-store\r\n";
        let answer =
            format!("{head}Connection: close\r\nContent-Length: {}\r\n\r\n{page}", page.len());
        s.write_all(answer.as_bytes()).await?;
        // The listener ends with this task: nothing answers on the port after.
        anyhow::Ok(())
    });
    assert_eq!(b.navigate(None, &url, 5_000).await?.title, "Soon gone");
    served.await??;
    let err = b.reload(None, 5_000).await.expect_err("the server is gone");
    assert_eq!(err.code.as_str(), "NAVIGATION_FAILED", "{err:?}");
    assert!(
        err.message.contains("net::ERR_CONNECTION_REFUSED")
            && err.message.contains(&format!("could not load {url} and shows its error page")),
        "{}",
        err.message
    );
    // The same where a page goes on to it by script, before its own load.
    let goes_on = format!("data:text/html,<script>location.href='{url}'</script>");
    let err = b.navigate(None, &goes_on, 5_000).await.expect_err("the server is gone");
    assert_eq!(err.code.as_str(), "NAVIGATION_FAILED", "{err:?}");
    assert!(err.message.contains(&format!("could not load {url}")), "{}", err.message);
    Ok(())
}

/// Page operations from Rust through their types (`HostBrowser::run`), and
/// arguments an operation does not take refused before the page is touched:
/// nothing is filled and no request reaches the server.
#[tokio::test]
async fn typed_page_operations_run_and_bad_arguments_change_nothing() -> Result<()> {
    use ochre_host::browser::page_ops::{Fill, Find, Shown, Snapshot, Wait, WaitKind};
    let site = SiteServer::start().await?;
    let data = TempDir::new("typed-ops");
    let b = manager(&data);
    b.navigate(None, &site.url("form.html"), 20_000).await?;
    let text = async || -> Result<String> {
        let text = Snapshot { mode: Some("text".into()), ..Default::default() };
        Ok(b.run(None, &text, 10_000).await?.text)
    };
    let field = async |name: &str| -> Result<String> {
        let expression = format!("document.querySelector('[name={name}]').value");
        let ask = json!({"expression": expression, "returnByValue": true});
        let value = b.cdp_send(None, "Runtime.evaluate", ask).await?;
        Ok(value["result"]["value"].as_str().unwrap_or_default().to_owned())
    };

    // Wrong type, unknown argument, missing argument, unknown operation: each
    // refused with the field named, before anything runs.
    let hits = site.hits();
    let order = json!({"Customer name": "Ada", "size": "Medium"});
    let fill = |args| b.page_op(None, "fill", args, 10_000);
    let e = fill(json!({"fields": order, "submit": "yes"})).await.expect_err("refused");
    let field_of = |e: &ochre_host::ToolError| e.details["field"].as_str().map(str::to_owned);
    assert_eq!((e.code.as_str(), field_of(&e).as_deref()), ("INVALID_ARGUMENT", Some("submit")));
    let e = fill(json!({"fields": order, "sumbit": true})).await.expect_err("refused");
    assert!(e.message.contains("unknown field `sumbit`"), "{}", e.message);
    let e = b.page_op(None, "find", json!({"limit": 3}), 10_000).await.expect_err("refused");
    assert!(e.message.contains("missing field `query`"), "{}", e.message);
    let e = b.page_op(None, "fil", json!({}), 10_000).await.expect_err("refused");
    assert_eq!((e.code.as_str(), field_of(&e).as_deref()), ("INVALID_ARGUMENT", Some("op")));
    assert_eq!(field("custname").await?, "", "nothing was filled");
    assert_eq!(site.hits(), hits, "no request reached the server");

    // The same through the types: found, filled, submitted, and the body that
    // arrived (the server's echo page shows it).
    let find = Find { query: "Customer name".into(), ..Default::default() };
    // Each match's ref comes as data beside its line.
    let found = b.run(None, &find, 10_000).await?;
    assert_eq!(found.refs.len(), found.matches.len(), "{found:?}");
    let name_ref = *found.refs.first().expect("a ref for the name field");
    let spelled = name_ref.to_string();
    assert!(
        found.matches[0].ends_with(&spelled) || found.matches[0].contains(&format!("{spelled} "))
    );
    let fields = [("Customer name", "Ada Lovelace"), ("size", "Medium")];
    let fields = fields.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
    let fill = Fill { fields: Some(fields), submit: Some(true), ..Default::default() };
    let filled = b.run(None, &fill, 10_000).await?;
    assert!(filled.submitted && filled.filled.len() == 2, "{filled:?}");
    let left = Wait { kind: WaitKind::Navigation, token: filled.token, ..Default::default() };
    b.run(None, &left, 10_000).await?;
    let echo = text().await?;
    assert!(echo.contains("custname=Ada+Lovelace") && echo.contains("size=medium"), "{echo}");
    // A ref of the page that was left is refused, not read on the new page.
    let e = b.run(None, &Shown::of(name_ref), 10_000).await.expect_err("refused");
    assert_eq!(e.code.as_str(), "STALE_REF", "{}", e.message);
    Ok(())
}

/// `unwatch` with a watch's number ends that watch only: the host ends a kept
/// watch without waiting, and a newer action's watch started before that
/// arrives must keep watching.
#[tokio::test]
async fn unwatch_by_number_ends_that_watch_only() -> Result<()> {
    use ochre_host::browser::Input;
    let data = TempDir::new("unwatch-number");
    let b = manager(&data);
    let page = r#"data:text/html,<title>0</title>
        <button id=b onclick="document.title=String(Number(document.title)+1)">Count</button>"#;
    b.navigate(None, page, 20_000).await?;
    let found = b.page_op(None, "find", json!({"query": "Count"}), 10_000).await?;
    let line = found["matches"][0].as_str().unwrap_or_default().to_owned();
    let r = line.split(' ').find(|w| w.starts_with("ax_")).expect("a ref").to_owned();
    let at = b
        .evaluate(
            None,
            "(() => { const r = b.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()",
            10_000,
        )
        .await?;
    let (x, y) = (at[0].as_f64().expect("x"), at[1].as_f64().expect("y"));
    let click =
        [Input::MouseMove((x, y, 0)), Input::MouseDown((x, y, 1)), Input::MouseUp((x, y, 1))];
    // Watch, maybe unwatch by `number` (of this watch or another), click, settle.
    let round = async |unwatch: &dyn Fn(u64) -> Option<u64>| -> Result<serde_json::Value> {
        let w = b.page_op(None, "watch", json!({"ref": r}), 10_000).await?;
        let id = w["watch"].as_u64().expect("a watch number");
        if let Some(n) = unwatch(id) {
            b.page_op(None, "unwatch", json!({"watch": n}), 10_000).await?;
        }
        b.input(None, &click).await?;
        Ok(b.page_op(None, "settle", json!({"token": w["token"]}), 10_000).await?)
    };
    let first = b.page_op(None, "watch", json!({"ref": r}), 10_000).await?["watch"].as_u64();
    let first = first.expect("a watch number");
    // Another watch's number (an older one, as a late unwatch carries): this
    // watch goes on and sees the click.
    let d = Box::pin(round(&|_| Some(first))).await?;
    assert_eq!((&d["delivered"], &d["changed"]), (&json!(true), &json!(true)), "{d}");
    assert!(d.get("watch").is_none(), "the host ends a kept watch itself: {d}");
    // Its own number: it ends, and the settle has no watch to judge by.
    let d = Box::pin(round(&|id| Some(id))).await?;
    assert_eq!((&d["delivered"], &d["mutations"]), (&json!(false), &json!(0)), "{d}");
    // The clicks did reach the page (the watch only looks).
    assert_eq!(b.evaluate(None, "document.title", 10_000).await?, json!("2"));
    b.shutdown().await;
    Ok(())
}

/// A click whose target the page removes between the press and the release is
/// told apart by what removed it: a handler of the press (a date picker that
/// redraws on mousedown) means the press was taken; anything else (a timer, a
/// script) means no click reached the target, and the answer says so instead
/// of counting the removal as the click's effect.
#[tokio::test]
async fn a_target_removed_between_press_and_release_is_told_apart_by_what_removed_it() -> Result<()>
{
    use ochre_host::browser::Input;
    let data = TempDir::new("press-release");
    let b = manager(&data);
    let page = r#"data:text/html,<title>start</title>
        <button id=timer onclick="document.title='clicked timer'">Timer</button>
        <button id=redraw onmousedown="this.remove()">Redraw</button>
        <button id=marked onmousedown="this.textContent='Marked!'" onclick="document.title='clicked marked'">Marked</button>
        <button id=kept onclick="document.title='clicked kept'">Kept</button>"#;
    // Press `name`; remove it by script before the release when `remove`; what
    // the watch saw, and the title after. (Boxed: the future is too big for the
    // test thread's stack in a debug build.)
    let press = async |name: &str, remove: bool| -> Result<(serde_json::Value, String)> {
        b.navigate(None, page, 20_000).await?;
        let found = b.page_op(None, "find", json!({"query": name}), 10_000).await?;
        let line = found["matches"][0].as_str().unwrap_or_default().to_owned();
        let r = line.split(' ').find(|w| w.starts_with("ax_")).expect("a ref").to_owned();
        let id = name.to_lowercase();
        let rect = format!(
            "(() => {{ const r = document.getElementById('{id}').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        );
        let at = b.evaluate(None, &rect, 10_000).await?;
        let (x, y) = (at[0].as_f64().expect("x"), at[1].as_f64().expect("y"));
        let token = b.page_op(None, "watch", json!({"ref": r}), 10_000).await?["token"].clone();
        b.input(None, &[Input::MouseMove((x, y, 0)), Input::MouseDown((x, y, 1))]).await?;
        if remove {
            let gone = format!("document.getElementById('{id}').remove(); 1");
            b.evaluate(None, &gone, 10_000).await?;
        }
        b.input(None, &[Input::MouseUp((x, y, 1))]).await?;
        let d = b.page_op(None, "settle", json!({"token": token}), 10_000).await?;
        let title = b.evaluate(None, "document.title", 10_000).await?;
        Ok((d, title.as_str().unwrap_or_default().to_owned()))
    };

    // Removed by a script between press and release: no click reached it.
    let (d, title) = Box::pin(press("Timer", true)).await?;
    assert_eq!(
        (&d["delivered"], &d["removed_before_release"]),
        (&json!(false), &json!(true)),
        "{d}"
    );
    assert_eq!(title, "start");
    // Removed by its own mousedown handler: the press was taken.
    let (d, _) = Box::pin(press("Redraw", false)).await?;
    assert_eq!(d["delivered"], json!(true), "{d}");
    assert!(d.get("removed_before_release").is_none(), "{d}");
    // The press changed the page, then a script removed it: the press was taken.
    let (d, title) = Box::pin(press("Marked", true)).await?;
    assert_eq!(d["delivered"], json!(true), "{d}");
    assert!(d.get("removed_before_release").is_none(), "{d}");
    assert_eq!(title, "start", "no click reached it");
    // A plain click.
    let (d, title) = Box::pin(press("Kept", false)).await?;
    assert_eq!((&d["delivered"], &d["changed"]), (&json!(true), &json!(true)), "{d}");
    assert!(d.get("removed_before_release").is_none(), "{d}");
    assert_eq!(title, "clicked kept");
    b.shutdown().await;
    Ok(())
}

/// The browser ochre launches opens no window of its own (Chromium's new-tab
/// page would load for a second or two beside the agent's first page), its
/// features switch is given once, with ochre's features in it (given twice,
/// Chromium keeps one: which one followed a hash map's order), and its pages
/// are a desktop's, 1280x720 with a mouse.
#[tokio::test]
async fn the_launched_browser_has_no_page_but_ochres_and_one_features_switch() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("launch-args");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let client = server.client().await?;
    navigate(&client, &site.url("index.html")).await?;
    let args = server.browser_args()?;
    let features: Vec<&String> =
        args.iter().filter(|a| a.starts_with("--disable-features=")).collect();
    assert_eq!(features.len(), 1, "{args:?}");
    for f in ochre_host::browser::DISABLED_FEATURES {
        assert!(features[0].split(['=', ',']).any(|x| x == *f), "{f} not off: {args:?}");
    }
    // A desktop's page: no touch emulation (the launcher's viewport emulation
    // turned it on: pages took the browser for a phone's), the window's size.
    let res = client
        .tool(
            "javascript_tool",
            json!({"code": "JSON.stringify([navigator.maxTouchPoints, matchMedia('(pointer: fine)').matches, matchMedia('(hover: hover)').matches, 'ontouchstart' in window, innerWidth, innerHeight])"}),
        )
        .await?;
    assert!(texts(&res).contains("[0,true,true,false,1280,720]"), "{}", texts(&res));
    // What the browser holds, asked over its own DevTools endpoint.
    let pages = server.browser_pages().await?;
    let urls: Vec<&str> = pages.iter().filter_map(|t| t["url"].as_str()).collect();
    assert_eq!(urls, [site.url("index.html").as_str()], "{pages:#?}");
    Ok(())
}
