//! `network_capture` `har`: a tab's network as a HAR 1.2 file, read back with
//! a HAR reader from PyPI (haralyzer), checked against what the servers saw,
//! and holding no secret.

use anyhow::{Context, Result};
use ochre_tests::*;
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery staple";

/// The HAR file a `network_capture har` answer names, parsed.
async fn har_of(client: &Client, scope: &str) -> Result<(Value, Value, String)> {
    let out = client.tool_json("network_capture", json!({"action": "har", "scope": scope})).await?;
    let path = out["har"]["path"].as_str().with_context(|| format!("no path: {out}"))?;
    let text = std::fs::read_to_string(path).with_context(|| path.to_owned())?;
    Ok((serde_json::from_str(&text)?, out, text))
}

/// A HAR entry's request as a server's log has it: `METHOD /path?query`.
fn as_logged(e: &Value) -> String {
    let url = url::Url::parse(e["request"]["url"].as_str().unwrap_or_default())
        .map(|u| match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_owned(),
        })
        .unwrap_or_default();
    format!("{} {url}", e["request"]["method"].as_str().unwrap_or_default())
}

/// What haralyzer makes of a HAR file: every page with its entries, each
/// entry's request and response read through its accessors (any it cannot
/// read fails the script), as JSON.
fn read_with_haralyzer(path: &str) -> Result<Value> {
    let python = python_venv("har")?;
    let script = r#"
import json, sys
from haralyzer import HarParser
har = HarParser.from_file(sys.argv[1])
pages = []
for page in har.pages:
    entries = []
    for e in page.entries:
        rq, rs = e.request, e.response
        entries.append({
            "method": rq.method, "url": rq.url, "status": rs.status,
            "mime": rs.mimeType, "time": e.time, "timings": e.timings,
            "headers": len(rq.headers) + len(rs.headers), "cookies": rq.cookies,
            "query": rq.queryString, "redirect": rs.redirectURL,
            "start": str(e.startTime), "size": rs.contentSize,
        })
    pages.append({"id": page.page_id, "entries": entries, "size": page.page_size,
                  "ttfb": page.time_to_first_byte, "posts": len(page.post_requests)})
print(json.dumps({"creator": har.creator, "version": har.version, "pages": pages}))
"#;
    let out = std::process::Command::new(python).args(["-c", script, path]).output()?;
    anyhow::ensure!(out.status.success(), "haralyzer: {}", String::from_utf8_lossy(&out.stderr));
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// A session on the admin app: sign in (a password typed into its field, a
/// redirect), add a book in a second tab (closed after), read the list. Its
/// HAR (`scope: session`, one page per tab) opens in haralyzer, holds
/// every request the app's server logged (counted, method and path), each
/// redirect's hop, timings that add up, and no password, cookie value or
/// session id (the session cookie read from the browser is nowhere in it).
#[tokio::test]
async fn a_har_of_a_session_on_the_admin_app_holds_its_requests_and_no_secret() -> Result<()> {
    let dir = TempDir::new("har-app");
    let app = AdminApp::start(dir.path()).await?;
    let data = TempDir::new("har");
    let client = stdio_client(data.path(), &[], &[]).await?;
    navigate(&client, "about:blank").await?;
    // (Before the capture: the app's requests so far are not the session's.)
    let before = app.requests()?.len();
    let start = json!({"action": "start", "scope": "session"});
    client.tool_json("network_capture", start).await?;
    navigate(&client, &format!("{}/admin/book/", app.base)).await?;
    let fields = json!({"Username": "admin", "Password": PASSWORD});
    client.tool_text("fill_form", json!({"fields": fields, "submit": true})).await?;
    // The book is added in a second tab, closed after.
    let new = json!({"url": format!("{}/admin/book/new/", app.base)});
    let tab = client.tool_json("tabs_create", new).await?;
    let tab = tab["tabId"].as_str().context("tabId")?.to_owned();
    let book = json!({"Title": "Solaris", "Author": "Stanisław Lem", "Year": "1961"});
    client.tool_text("fill_form", json!({"fields": book, "submit": true, "tabId": tab})).await?;
    client.tool_text("tabs_close", json!({"tabId": tab})).await?;
    let rows = app.rows("SELECT title, author, year FROM book WHERE title = 'Solaris'")?;
    assert_eq!(rows, vec![json!(["Solaris", "Stanisław Lem", 1961])], "the book was not added");
    navigate(&client, &format!("{}/admin/book/?search=Solaris", app.base)).await?;
    let cookies = client.tool("cookies", json!({"action": "get"})).await?;
    let cookies = cookies.structured_content.clone().context("cookies")?;
    let session = cookies["cookies"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["name"] == "session"))
        .and_then(|c| c["value"].as_str())
        .with_context(|| format!("no session cookie: {cookies}"))?
        .to_owned();
    assert!(session.len() > 20, "{session}");

    let (har, answer, text) = har_of(&client, "session").await?;
    let logged: Vec<String> = app.requests()?.split_off(before);
    let entries = har["log"]["entries"].as_array().context("entries")?;
    // Every request the server saw is an entry (a multiset: the list is
    // read twice, the sign-in page too).
    let mut left: Vec<String> = entries
        .iter()
        .filter(|e| e["request"]["url"].as_str().is_some_and(|u| u.starts_with(&app.base)))
        .map(as_logged)
        .collect();
    for line in &logged {
        // (The HAR's URL is masked where the server's log is not: none here.)
        let at = left.iter().position(|l| l == line);
        let at = at.with_context(|| {
            format!("{line:?} reached the server but is not in the HAR: {left:#?}")
        })?;
        left.remove(at);
    }
    assert!(left.is_empty(), "in the HAR but never at the server: {left:?}");
    assert!(logged.len() >= 8, "{logged:?}");
    assert_eq!(answer["har"]["entries"].as_u64(), Some(entries.len() as u64), "{answer}");
    // The sign-in: its POST, masked, and its redirect's hop.
    let post = entries
        .iter()
        .find(|e| {
            e["request"]["method"] == "POST"
                && e["request"]["url"].as_str().is_some_and(|u| u.contains("/login"))
        })
        .context("no sign-in POST")?;
    let params = &post["request"]["postData"]["params"];
    assert_eq!(params[0], json!({"name": "username", "value": "admin"}), "{post}");
    assert_eq!(params[1], json!({"name": "password", "value": "•••"}), "{post}");
    assert_eq!(post["response"]["status"], 302, "{post}");
    assert!(
        post["response"]["redirectURL"].as_str().is_some_and(|u| u.contains("/admin/")),
        "{post}"
    );
    assert!(post["response"]["cookies"][0]["name"] == "session", "{post}");
    for secret in [PASSWORD, "correct+horse+battery+staple", "correct%20horse", &session] {
        assert!(!text.contains(secret), "{secret:?} is in the HAR");
    }
    assert!(text.contains("session=•••"), "the cookie's name is kept, its value masked");
    // Bodies: the sign-in page's (a document the tab has left since), and
    // the list page's, which holds the new book.
    let form = entries
        .iter()
        .find(|e| {
            e["request"]["method"] == "GET"
                && e["response"]["status"] == 200
                && e["request"]["url"].as_str().is_some_and(|u| u.contains("/login"))
        })
        .context("no sign-in page")?;
    let text_of =
        |e: &Value| e["response"]["content"]["text"].as_str().unwrap_or_default().to_owned();
    assert!(text_of(form).contains("type='password'"), "{form}");
    let list = entries
        .iter()
        .rev()
        .find(|e| e["request"]["url"].as_str().is_some_and(|u| u.contains("search=Solaris")))
        .context("no list page")?;
    let body = list["response"]["content"]["text"].as_str().unwrap_or_default();
    assert!(body.contains("Stanisław Lem"), "{list}");
    // The headers it went with, as the network sent them: the session's
    // cookie (its value masked) and the Host the page never set.
    assert_eq!(list["request"]["cookies"], json!([{"name": "session", "value": "•••"}]), "{list}");
    let sent: Vec<&str> = list["request"]["headers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["name"].as_str())
        .collect();
    assert!(sent.iter().any(|h| h.eq_ignore_ascii_case("host")), "{sent:?}");
    // Each entry's time is the sum of its timings (those not -1).
    for e in entries {
        let t = &e["timings"];
        let sum: f64 = ["blocked", "dns", "connect", "send", "wait", "receive"]
            .iter()
            .filter_map(|k| t[k].as_f64())
            .filter(|v| *v >= 0.0)
            .sum();
        let time = e["time"].as_f64().unwrap_or(-1.0);
        assert!((sum - time).abs() < 0.01, "time {time} is not its timings' sum {t}");
    }

    // A HAR reader opens it, and reads the same requests.
    let path = answer["har"]["path"].as_str().unwrap_or_default();
    let read = read_with_haralyzer(path)?;
    assert_eq!(read["version"], "1.2", "{read}");
    // A page for each tab: the sign-in's (its POST), the closed one's (the
    // book's POST).
    let pages = read["pages"].as_array().context("pages")?;
    assert_eq!(pages.len(), 2, "{read}");
    let read_entries: usize =
        pages.iter().filter_map(|p| p["entries"].as_array().map(Vec::len)).sum();
    assert_eq!(read_entries, entries.len(), "{read}");
    assert!(pages.iter().all(|p| p["posts"].as_u64() >= Some(1)), "{read}");
    client.cancel().await?;
    Ok(())
}

/// A websocket's messages are in its entry (`_webSocketMessages`, as Chrome
/// writes them), sent and received, in order; a capture never started is
/// refused, saying what to do, and writes nothing.
#[tokio::test]
async fn a_har_holds_a_websockets_messages() -> Result<()> {
    let (site, data, client, _) = open_page("har-socket", &[], "index.html").await?;
    let err = client.tool_error("network_capture", json!({"action": "har"})).await?;
    assert!(err["message"].as_str().is_some_and(|m| m.contains("network_capture start")), "{err}");
    let evidence = data.path().join("evidence");
    let written = std::fs::read_dir(&evidence).map(|d| d.count()).unwrap_or(0);
    assert_eq!(written, 0, "a refused har wrote a file");
    client.tool_json("network_capture", json!({"action": "start"})).await?;
    navigate(&client, &site.url("socket.html")).await?;
    let connected = "document.getElementById('status').textContent == 'connected'";
    client.tool_text("wait_for", json!({"type": "function", "value": connected})).await?;
    let snap = snapshot(&client).await?;
    client
        .tool_text("type", json!({"ref": ref_of(&snap, "textbox", "Code"), "text": "x1"}))
        .await?;
    client.tool_text("interact", json!({"ref": ref_of(&snap, "button", "Run")})).await?;
    site.expect_recorded("ws run:x1").await?;
    let (har, _, _) = har_of(&client, "tab").await?;
    let entries = har["log"]["entries"].as_array().context("entries")?;
    let ws = entries
        .iter()
        .find(|e| e["_resourceType"] == "websocket")
        .with_context(|| format!("no websocket entry: {har}"))?;
    assert!(ws["request"]["url"].as_str().is_some_and(|u| u.starts_with("ws://")), "{ws}");
    assert_eq!(ws["response"]["status"], 101, "{ws}");
    let messages = ws["_webSocketMessages"].as_array().context("messages")?;
    let said: Vec<String> = messages
        .iter()
        .map(|m| {
            format!("{} {}", m["type"].as_str().unwrap_or(""), m["data"].as_str().unwrap_or(""))
        })
        .collect();
    for want in ["send run:x1", "receive queued:x1", "receive output:x1", "send echo:x1"] {
        assert!(said.contains(&want.to_owned()), "{want} not in {said:?}");
    }
    let at = |m: &str| said.iter().position(|s| s == m);
    assert!(at("send run:x1") < at("receive output:x1"), "{said:?}");
    let times: Vec<f64> = messages.iter().filter_map(|m| m["time"].as_f64()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs_f64();
    assert!(
        times.iter().all(|t| (now - t).abs() < 600.0),
        "message times are the wall clock: {times:?}"
    );
    client.cancel().await?;
    Ok(())
}

/// `scope: session`: one HAR for every tab of the session, the one it started
/// on, pages the page opened (a link's, `window.open`'s, one that closed
/// itself) and a tab opened later and closed. It holds every request the
/// site's server logged since the start (counted; a popup's first document
/// excepted, asked for before ochre knew the popup), each under its tab's
/// page (a HAR reader reads the pages), and `get` says each request's tab. A bad
/// scope is refused and changes nothing; once stopped, a new tab captures
/// nothing.
#[tokio::test]
async fn a_session_har_holds_every_tab_of_the_session_those_opened_later_and_closed() -> Result<()>
{
    let site = SiteServer::start().await?;
    let data = TempDir::new("har-session");
    let client = stdio_client(data.path(), &[], &[]).await?;
    navigate(&client, "about:blank").await?;
    let bad = json!({"action": "start", "scope": "everywhere"});
    let err = client.tool_error("network_capture", bad).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    let err =
        client.tool_error("network_capture", json!({"action": "har", "scope": "session"})).await?;
    assert!(err["message"].as_str().is_some_and(|m| m.contains("scope: session")), "{err}");
    let started =
        client.tool_json("network_capture", json!({"action": "start", "scope": "session"})).await?;
    assert_eq!(started["capturing"], true, "{started}");
    assert_eq!(started["tabs"], json!(["t1"]), "{started}");
    let before = site.requests().len();

    navigate(&client, &site.url("popups.html")).await?;
    let snap = snapshot(&client).await?;
    let link = json!({"ref": ref_of(&snap, "link", "Open page two in a new tab")});
    let said = texts(&client.tool("interact", link).await?);
    assert!(said.contains("opened tab t2"), "{said}");
    let product = json!({"ref": ref_of(&snap, "button", "Open the product")});
    let said = texts(&client.tool("interact", product).await?);
    assert!(said.contains("opened tab t3"), "{said}");
    let closing = json!({"ref": ref_of(&snap, "button", "Open a page that closes itself")});
    let said = texts(&client.tool("interact", closing).await?);
    assert!(said.contains("opened tab t4"), "{said}");
    let later = client.tool_json("tabs_create", json!({"url": site.url("form.html")})).await?;
    let later = later["tabId"].as_str().context("tabId")?.to_owned();
    assert_eq!(later, "t5");
    // t4 closes itself; t5 is closed by the agent.
    let mut gone = false;
    for _ in 0..100 {
        let tabs = client.tool_json("tabs_context", json!({})).await?.to_string();
        if !tabs.contains("\"t4\"") {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(gone, "the self-closing tab is still open");
    client.tool_text("tabs_close", json!({"tabId": "t5"})).await?;
    // A popup is captured from its start (the browser holds it until ochre
    // has set it up): its first document, and what it asks for later. One
    // opened with no way back to its opener (a link's `target=_blank`)
    // cannot be set up while held: captured from when ochre knew it.
    let fetch = "fetch('/popup-fetch?from=t3').then(r => r.status)";
    client.tool_text("javascript_tool", json!({"code": fetch, "tabId": "t3"})).await?;

    let answer =
        client.tool_json("network_capture", json!({"action": "har", "scope": "session"})).await?;
    assert_eq!(answer["closed_tabs"], 2, "{answer}");
    let path = answer["har"]["path"].as_str().with_context(|| format!("no path: {answer}"))?;
    let har: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let logged: Vec<String> = (site.requests().split_off(before).into_iter())
        .filter(|l| l != "GET /page2.html")
        .collect();
    let entries = har["log"]["entries"].as_array().context("entries")?;
    // Each request the server saw, with its tab's page.
    let mut left: Vec<(String, String)> = entries
        .iter()
        .map(|e| (as_logged(e), e["pageref"].as_str().unwrap_or_default().to_owned()))
        .collect();
    let mut pages_of = std::collections::BTreeMap::new();
    for line in &logged {
        let at = left.iter().position(|(l, _)| l == line).with_context(|| {
            format!("{line:?} reached the server but is not in the HAR: {left:#?}")
        })?;
        let (_, page) = left.remove(at);
        pages_of.entry(line.clone()).or_insert_with(Vec::new).push(page);
    }
    assert!(left.iter().all(|(l, _)| !l.contains(".html")), "never at the server: {left:?}");
    for (page, tab) in [
        ("GET /popups.html", "t1"),
        ("GET /product.html", "t3"),
        ("GET /closing.html", "t4"),
        ("GET /popup-fetch?from=t3", "t3"),
        ("GET /form.html", "t5"),
    ] {
        assert_eq!(pages_of.get(page), Some(&vec![tab.to_owned()]), "{page}: {pages_of:?}");
    }
    let ids: Vec<&str> = har["log"]["pages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["id"].as_str())
        .collect();
    // A popup's page says which tab opened it; the agent's own tabs' do not.
    let comment = |id: &str| {
        let pages = har["log"]["pages"].as_array();
        let page = pages.and_then(|p| p.iter().find(|p| p["id"] == id));
        page.and_then(|p| p["comment"].as_str()).unwrap_or_default().to_owned()
    };
    assert_eq!(comment("t3"), "opened by a page of tab t1", "{har}");
    assert!(comment("t2").contains("that request is not here"), "{har}");
    assert!(comment("t1").is_empty() && comment("t5").is_empty(), "{har}");
    // A page per open tab, and per closed tab that left requests (the
    // self-closing popup's document).
    assert_eq!(ids, ["t1", "t2", "t3", "t4", "t5"], "{har}");
    // A HAR reader reads each tab's page with its entries.
    let read = read_with_haralyzer(path)?;
    let per_page: usize = read["pages"]
        .as_array()
        .context("pages")?
        .iter()
        .filter_map(|p| p["entries"].as_array().map(Vec::len))
        .sum();
    assert_eq!(per_page, entries.len(), "{read}");

    // `get`: each request says its tab, the closed ones' too.
    let got =
        client.tool_json("network_capture", json!({"action": "get", "scope": "session"})).await?;
    let tab_of = |path: &str| -> Option<String> {
        got["requests"].as_array()?.iter().find_map(|r| {
            r["url"].as_str()?.ends_with(path).then(|| r["tabId"].as_str().map(str::to_owned))?
        })
    };
    assert_eq!(tab_of("/form.html").as_deref(), Some("t5"), "{got}");
    assert_eq!(tab_of("/popup-fetch?from=t3").as_deref(), Some("t3"), "{got}");

    // Stopped: a tab opened now captures nothing.
    let stopped =
        client.tool_json("network_capture", json!({"action": "stop", "scope": "session"})).await?;
    assert_eq!(stopped["capturing"], false, "{stopped}");
    client.tool_json("tabs_create", json!({"url": site.url("page2.html?after=stop")})).await?;
    let got =
        client.tool_json("network_capture", json!({"action": "get", "scope": "session"})).await?;
    assert!(!got.to_string().contains("after=stop"), "{got}");
    assert!(got.to_string().contains("/form.html"), "stop keeps what was captured: {got}");
    // An evidence bundle holds the session's HAR, the closed tab's page too.
    let bundle = client.tool_json("oc_evidence_bundle", json!({"include": ["network"]})).await?;
    let dir = std::path::PathBuf::from(bundle["path"].as_str().context("path")?);
    let har: Value = serde_json::from_slice(&std::fs::read(dir.join("session.har"))?)?;
    let closed = har["log"]["pages"].as_array().and_then(|p| p.iter().find(|p| p["id"] == "t5"));
    let title = closed.and_then(|p| p["title"].as_str()).unwrap_or_default();
    assert!(title.contains("closed") && title.contains("form.html"), "{har}");
    client.cancel().await?;
    Ok(())
}
