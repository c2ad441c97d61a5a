//! The network policy over MCP, counted at the servers: a page on one site
//! (`reach.html`) reaches a second site server (another site: `localhost`
//! against the page's `127.0.0.1`) every way a page can (`WAYS`). In a
//! session that blocks the second site (HTTP, sessions apart) that server
//! sees no request at all; in another session at the same time it sees every
//! one. A server's `--network-block`
//! holds for the shared tabs (stdio) too. Bad rules change nothing.

use anyhow::{Context as _, Result};
use ochre_tests::*;
use serde_json::json;

/// The other site's origin under another host name (`localhost`): another
/// site than the page's (127.0.0.1), so its frame is a cross-site one, in a
/// renderer of its own.
fn far(other: &SiteServer) -> String {
    other.base.replace("127.0.0.1", "localhost")
}

/// The ways of `reach.html` that arrived at `server` (by path).
fn ways_at(server: &SiteServer) -> Vec<String> {
    let mut got: Vec<String> = (server.requests().iter())
        .filter_map(|r| r.split_once(" /way-").map(|(_, w)| w.to_owned()))
        .filter(|w| WAYS.contains(&w.as_str()))
        .collect();
    got.sort();
    got.dedup();
    got
}

#[tokio::test]
async fn a_blocked_origin_sees_no_request_of_any_kind_and_an_allowed_one_sees_them_all()
-> Result<()> {
    let site = SiteServer::start().await?;
    let other = SiteServer::start().await?;
    let data = TempDir::new("netpolicy");
    let server = HttpServer::start(data.path(), &["--network-policy"], &[]).await?;
    let (fenced, open) = (server.client().await?, server.client().await?);

    // A rule that does not read is refused, naming it; nothing changes.
    let err = fenced.tool_error("network_policy", json!({"block": ["not a rule!"]})).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("block"))
    );
    let err = fenced.tool_error("network_policy", json!({"proxy": "socks5://x:1"})).await?;
    assert_eq!(err["field"], "proxy", "{err}");
    let now = fenced.tool_json("network_policy", json!({})).await?;
    assert_eq!(now["blocked"], json!([]), "{now}");

    let now = fenced.tool_json("network_policy", json!({"block": [far(&other)]})).await?;
    assert_eq!(now["blocked"], json!([far(&other)]), "{now}");
    // A refused navigation fails in the page, and the answer says so.
    let r = fenced.tool("navigate", json!({"url": format!("{}/index.html", far(&other))})).await?;
    let said = texts(&r);
    let far_at = far(&other);
    let at = far_at.trim_start_matches("http://");
    // Chromium may open a second connection (a preconnect) to the host: each
    // is refused and counted.
    let refused = said
        .split("the network policy refused ")
        .nth(1)
        .and_then(|rest| rest.split_once(" connection(s) of the page: to "))
        .and_then(|(n, to)| Some((n.parse::<u32>().ok()?, to.lines().next()?.to_owned())));
    assert!(refused.as_ref().is_some_and(|(n, to)| *n >= 1 && to == at), "{said}");
    open_reach(&fenced, &site).await?;
    let before = refused_total(&fenced).await?;
    reach(&fenced, &far(&other)).await?;
    assert_eq!(eval(&fenced, "settled()").await?, "settled", "the WebSockets");
    assert_eq!(other.requests(), Vec::<String>::new(), "the blocked site was reached");
    let now = fenced.tool_json("network_policy", json!({})).await?;
    let refused = now["refused_total"].as_u64().unwrap_or(0) - before;
    assert!(refused >= WAYS.len() as u64, "{refused} refused: {now}");
    assert!(now["refused"].as_array().is_some_and(|r| r.iter().all(|x| x == at)), "{now}");
    // The page's own site is reached as ever.
    assert!(site.requests().iter().any(|r| r.starts_with("GET /reach-sw.js")));

    // Another session at the same time: every way reaches the other site.
    open_reach(&open, &site).await?;
    reach(&open, &far(&other)).await?;
    let all: Vec<String> = WAYS.iter().map(|w| w.to_string()).collect();
    let mut sorted = all.clone();
    sorted.sort();
    eventually("every way at the other site", std::time::Duration::from_secs(10), || {
        let got = ways_at(&other) == sorted;
        async move { Ok(got) }
    })
    .await
    .map_err(|e| anyhow::anyhow!("{e}: {:?}", ways_at(&other)))?;
    let arrived = other.requests().len();

    // The fenced session still reaches nothing there; reset lifts its rule.
    reach(&fenced, &far(&other)).await?;
    assert_eq!(eval(&fenced, "settled()").await?, "settled", "the WebSockets");
    assert_eq!(other.requests().len(), arrived, "{:?}", other.requests());
    let now = fenced.tool_json("network_policy", json!({"reset": true})).await?;
    assert_eq!(now["blocked"], json!([]), "{now}");
    navigate(&fenced, &format!("{}/index.html", far(&other))).await?;
    assert!(other.requests()[arrived..].iter().any(|r| r == "GET /index.html"), "not reached");
    Ok(())
}

#[tokio::test]
async fn a_servers_blocked_origin_holds_for_the_shared_tabs_and_sessions_cannot_loosen_it()
-> Result<()> {
    let site = SiteServer::start().await?;
    let other = SiteServer::start().await?;
    let data = TempDir::new("netpolicy-server");
    let client = stdio_client(data.path(), &["--network-block", &far(&other)], &[]).await?;
    open_reach(&client, &site).await?;
    reach(&client, &far(&other)).await?;
    assert_eq!(eval(&client, "settled()").await?, "settled", "the WebSockets");
    assert_eq!(other.requests(), Vec::<String>::new(), "the blocked site was reached");
    // A session's rules add to the server's; they never lift them.
    let now = client.tool_json("network_policy", json!({"allow": [far(&other)]})).await?;
    assert_eq!(now["blocked"], json!([far(&other)]), "{now}");
    let r = client.tool("navigate", json!({"url": format!("{}/index.html", far(&other))})).await?;
    let said = texts(&r);
    assert!(other.requests().is_empty(), "reached after allowing: {said}");
    // Without a policed server, a session cannot set one.
    let plain = TempDir::new("netpolicy-none");
    let client = stdio_client(plain.path(), &[], &[]).await?;
    let err = client.tool_error("network_policy", json!({"block": ["example.com"]})).await?;
    assert_eq!(err["code"], "CAPABILITY_DISABLED", "{err}");
    assert!(err["message"].as_str().unwrap_or_default().contains("--network-policy"), "{err}");
    Ok(())
}

/// What `code` (a promise) comes to in the page, as text.
async fn eval(client: &Client, code: &str) -> Result<String> {
    let v = client.tool_json("javascript_tool", json!({"code": code})).await?;
    Ok(v["value"].as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()))
}

/// A fetch of `path` from the page: `STATUS HEADER BODY`, or `failed`.
fn fetch_js(path: &str) -> String {
    format!(
        "fetch('{path}').then(async r => r.status + ' ' + r.headers.get('x-mocked') + ' ' + await r.text()).catch(() => 'failed')"
    )
}

#[tokio::test]
async fn a_route_answers_what_it_was_given_and_the_server_sees_nothing() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("routes");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let (mocked, plain) = (server.client().await?, server.client().await?);
    let asked = |path: &str| site.requests().iter().filter(|r| r.contains(path)).count();

    // Bad routes are refused and change nothing.
    for (args, field) in [
        (json!({"url": "*/api/*", "status": 700}), "status"),
        (json!({"url": "", "body": "x"}), "url"),
        (json!({"url": "*/api/*", "abort": true, "body": "x"}), "abort"),
        (json!({"action": "drop"}), "action"),
    ] {
        let err = mocked.tool_error("route", args.clone()).await?;
        assert_eq!(err["field"], field, "{args}: {err}");
    }
    let err = mocked.tool_error("route", json!({"url": "*/x", "file": "/etc/passwd"})).await?;
    assert_eq!(err["code"], "PERMISSION_DENIED", "{err}");
    assert_eq!(mocked.tool_json("route", json!({})).await?["routes"], json!([]));

    // A mocked API, an aborted request and a mocked document.
    let api = json!({"url": "*/api/data*", "status": 201, "headers": {"X-Mocked": "yes"}, "body": "{\"mocked\":true}"});
    mocked.tool_json("route", api).await?;
    mocked.tool_json("route", json!({"url": "*/record?kind=abort*", "abort": true})).await?;
    let page = json!({"url": "*/made-up.html", "headers": {"Content-Type": "text/html"}, "body": "<title>Made up</title><h1>From the route</h1>"});
    let routes = mocked.tool_json("route", page).await?;
    assert_eq!(routes["routes"].as_array().map(Vec::len), Some(3), "{routes}");

    navigate(&mocked, &site.url("made-up.html")).await?;
    assert!(snapshot(&mocked).await?.contains("From the route"));
    assert_eq!(asked("/made-up.html"), 0, "the mocked document reached the server");
    assert_eq!(eval(&mocked, &fetch_js("/api/data?x=1")).await?, "201 yes {\"mocked\":true}");
    assert_eq!(eval(&mocked, &fetch_js("/record?kind=abort")).await?, "failed");
    assert_eq!((asked("/api/data"), asked("kind=abort")), (0, 0), "{:?}", site.requests());
    let listed = mocked.tool_json("route", json!({"action": "list"})).await?;
    let hits: Vec<u64> = listed["routes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["hits"].as_u64())
        .collect();
    assert_eq!(hits, vec![1, 1, 1], "{listed}");

    // A popup's first document too: the browser holds a page another page
    // opens until ochre has set it up.
    let popup = json!({"url": "*/product.html", "headers": {"Content-Type": "text/html"}, "body": "<title>Routed</title><h1>From the route, in a popup</h1>"});
    mocked.tool_json("route", popup).await?;
    navigate(&mocked, &site.url("popups.html")).await?;
    let snap = snapshot(&mocked).await?;
    let open = json!({"ref": ref_of(&snap, "button", "Open the product")});
    let said = texts(&mocked.tool("interact", open).await?);
    let tab = said
        .split("opened tab ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .with_context(|| format!("no popup: {said}"))?;
    let read = json!({"code": "document.body.innerText", "tabId": tab});
    let shown = mocked.tool_text("javascript_tool", read).await?;
    assert!(shown.contains("From the route, in a popup"), "{shown}");
    assert_eq!(asked("/product.html"), 0, "the popup's document reached the server");

    // Another session at the same time: its requests reach the server.
    navigate(&plain, &site.url("index.html")).await?;
    assert!(eval(&plain, &fetch_js("/api/data?x=2")).await?.starts_with("404"));
    assert_eq!(asked("/api/data"), 1);

    // Removed, the route answers no more.
    mocked.tool_json("route", json!({"action": "remove", "url": "*/api/data*"})).await?;
    assert!(eval(&mocked, &fetch_js("/api/data?x=3")).await?.starts_with("404"));
    assert_eq!(asked("/api/data"), 2);
    let err = mocked.tool_error("route", json!({"action": "remove", "url": "*/api/data*"})).await?;
    assert_eq!(err["field"], "url", "{err}");
    Ok(())
}

/// Debian's tinyproxy on a free port, logging each request it carries, asking
/// for `user:password` (Basic) when given.
struct TinyProxy {
    child: std::process::Child,
    url: String,
    log: std::path::PathBuf,
    _dir: TempDir,
}

impl TinyProxy {
    async fn start(auth: Option<(&str, &str)>) -> Result<Self> {
        let dir = TempDir::new("tinyproxy");
        let port = free_port()?;
        let log = dir.path().join("tinyproxy.log");
        let conf = dir.path().join("tinyproxy.conf");
        std::fs::write(
            &conf,
            format!(
                "Port {port}\nListen 127.0.0.1\nTimeout 60\nLogFile \"{}\"\nLogLevel Connect\nMaxClients 50\nAllow 127.0.0.1\nDisableViaHeader Yes\n{}",
                log.display(),
                auth.map(|(u, p)| format!("BasicAuth {u} {p}\n")).unwrap_or_default()
            ),
        )?;
        let child = std::process::Command::new("tinyproxy")
            .arg("-d")
            .arg("-c")
            .arg(&conf)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| {
                anyhow::anyhow!("tinyproxy (Debian's package; .ci/setup installs it): {e}")
            })?;
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(Self { child, url: format!("http://127.0.0.1:{port}"), log, _dir: dir });
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        anyhow::bail!("tinyproxy did not listen on {port} within 5 s")
    }

    /// The requests it carried: `GET http://...` lines of its log.
    fn requests(&self) -> Vec<String> {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        log.lines()
            .filter_map(|l| l.split_once("): ").map(|(_, r)| r))
            .filter(|r| !r.starts_with("127.0.0.1") && r.contains(" http"))
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for TinyProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A document and three fetches, each tagged `who`.
async fn visit(client: &Client, site: &SiteServer, who: &str) -> Result<()> {
    navigate(client, &site.url(&format!("index.html?who={who}"))).await?;
    for n in 1..=3 {
        let f = format!("fetch('/record?who={who}&n={n}').then(r => r.status)");
        client.tool_json("javascript_tool", json!({"code": f})).await?;
    }
    Ok(())
}

#[tokio::test]
async fn a_sessions_proxy_carries_its_requests_and_no_other_sessions() -> Result<()> {
    let site = SiteServer::start().await?;
    // A proxy that asks for a password: the session's URL carries it.
    let proxy = TinyProxy::start(Some(("ann", "tiny-proxy-pw"))).await?;
    let data = TempDir::new("netpolicy-proxy");
    let server = HttpServer::start(data.path(), &["--network-policy"], &[]).await?;
    let (proxied, direct) = (server.client().await?, server.client().await?);
    let with_password = proxy.url.replace("http://", "http://ann:tiny-proxy-pw@");
    let now = proxied.tool_json("network_policy", json!({"proxy": with_password})).await?;
    let shown = format!("{}/", proxy.url.replace("http://", "http://ann:•••@"));
    assert_eq!(now["proxy"], json!(shown), "{now}");
    // Both at the same time: a document and three fetches each.
    futures::future::try_join(visit(&proxied, &site, "a"), visit(&direct, &site, "b")).await?;
    let carried = proxy.requests();
    let of = |who: &str| -> Vec<String> {
        site.requests().into_iter().filter(|r| r.contains(&format!("who={who}"))).collect()
    };
    let (a, b) = (of("a"), of("b"));
    assert_eq!((a.len(), b.len()), (4, 4), "{:?}", site.requests());
    for r in &a {
        // `GET /record?...` at the site is `GET http://127.0.0.1:P/record?... HTTP/1.1` there.
        let path = r.trim_start_matches("GET ");
        assert!(
            carried
                .iter()
                .any(|c| c.starts_with("GET http://") && c.contains(&format!("{path} HTTP/1.1"))),
            "{r} not in the proxy's log: {carried:#?}"
        );
    }
    assert!(
        !carried.iter().any(|c| c.contains("who=b")),
        "the other session went through it: {carried:#?}"
    );
    // The password is in no answer and no file of the data dir.
    assert!(!now.to_string().contains("tiny-proxy-pw"));
    assert!(
        !read_all_text(data.path()).contains("tiny-proxy-pw"),
        "the proxy's password in the data dir"
    );
    // Unset, the session goes direct again.
    let now = proxied.tool_json("network_policy", json!({"proxy": ""})).await?;
    assert!(now["proxy"].is_null(), "{now}");
    let before = proxy.requests().len();
    navigate(&proxied, &site.url("index.html?who=c")).await?;
    assert_eq!(of("c").len(), 1);
    assert_eq!(proxy.requests().len(), before, "still through the proxy");
    Ok(())
}

/// A server on `ip` that counts every TCP connection it accepts, remembers
/// the path each asked for, and answers each with a small page any origin
/// may read.
struct Counting {
    port: u16,
    seen: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    paths: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Counting {
    async fn start(ip: &str) -> Result<Self> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind((ip, 0)).await?;
        let port = listener.local_addr()?.port();
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let paths = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (count, asked) = (seen.clone(), paths.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let asked = asked.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let n = s.read(&mut buf).await.unwrap_or(0);
                    let head = String::from_utf8_lossy(&buf[..n]).to_string();
                    let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
                    if let Ok(mut all) = asked.lock() {
                        all.push(path);
                    }
                    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: *\r\nContent-Type: text/html\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok").await;
                });
            }
        });
        Ok(Self { port, seen, paths, task })
    }

    fn seen(&self) -> usize {
        self.seen.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The paths asked for, in order (`""` for a connection that asked none).
    fn paths(&self) -> Vec<String> {
        self.paths.lock().map(|p| p.clone()).unwrap_or_default()
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Every way `reach.html` reaches an origin (`/way-<name>` at its server).
const WAYS: [&str; 15] = [
    "popup",
    "fetch",
    "image",
    "script",
    "style",
    "prefetch",
    "frame",
    "websocket",
    "eventsource",
    "beacon",
    "ping",
    "form",
    "worker",
    "serviceworker",
    "redirect",
];

/// Open `reach.html` and wait for its service worker.
async fn open_reach(client: &Client, site: &SiteServer) -> Result<()> {
    navigate(client, &site.url("reach.html")).await?;
    let ready = "document.getElementById('status').textContent !== 'loading'";
    client.tool_text("wait_for", json!({"type": "function", "value": ready})).await?;
    let status = eval(client, "document.getElementById('status').textContent").await?;
    anyhow::ensure!(status == "ready", "reach.html: {status}");
    Ok(())
}

/// Reach `origin` every way from `reach.html` (opened), checking each was tried.
async fn reach(client: &Client, origin: &str) -> Result<()> {
    let tried = eval(client, &format!("reach({})", serde_json::to_string(origin)?)).await?;
    anyhow::ensure!(tried == WAYS.join(" "), "{origin}: tried {tried}");
    Ok(())
}

/// How many connections the caller's policy has refused in all.
async fn refused_total(client: &Client) -> Result<u64> {
    let now = client.tool_json("network_policy", json!({})).await?;
    now["refused_total"].as_u64().ok_or_else(|| anyhow::anyhow!("no refused_total: {now}"))
}

/// Reach each of `origins` every way under rules that block them: the
/// policy refuses at least one connection per way and origin (so each
/// attempt was made and stopped at the proxy, none lost on the way) and
/// none of `servers` counts a connection.
async fn refused_everywhere(
    client: &Client,
    origins: &[String],
    servers: &[&Counting],
) -> Result<()> {
    let before = refused_total(client).await?;
    for origin in origins {
        reach(client, origin).await?;
    }
    assert_eq!(eval(client, "settled()").await?, "settled", "the WebSockets");
    let want = before + (origins.len() * WAYS.len()) as u64;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut now = refused_total(client).await?;
    while now < want && std::time::Instant::now() < until {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        now = refused_total(client).await?;
    }
    for s in servers {
        assert_eq!(s.seen(), 0, "reached under a rule: {:?}", s.paths());
    }
    anyhow::ensure!(
        now >= want,
        "{} refusals in 10 s for {} ways of {origins:?}",
        now - before,
        origins.len() * WAYS.len()
    );
    Ok(())
}

/// Without a rule, every way to `origin` arrives at `server`.
async fn reached_every_way(client: &Client, origin: &str, server: &Counting) -> Result<()> {
    let before = server.paths().len();
    reach(client, origin).await?;
    assert_eq!(eval(client, "settled()").await?, "settled", "the WebSockets");
    let missing = || -> Vec<&str> {
        let got = server.paths();
        WAYS.iter()
            .copied()
            .filter(|w| !got[before..].iter().any(|p| p.starts_with(&format!("/way-{w}"))))
            .collect()
    };
    let waited = eventually("every way to arrive", std::time::Duration::from_secs(10), || {
        let done = missing().is_empty();
        async move { Ok(done) }
    })
    .await;
    anyhow::ensure!(waited.is_ok(), "{origin}: {:?} did not arrive without a rule", missing());
    Ok(())
}

/// Spellings of 127.0.0.2 a URL accepts (`P`: the port).
const SPELLINGS: [&str; 11] = [
    "http://127.0.0.2:P",
    "http://2130706434:P",
    "http://0x7f000002:P",
    "http://0X7F000002:P",
    "http://0177.0.0.2:P",
    "http://127.000.000.002:P",
    "http://127.2:P",
    "http://127.0.0.2.:P",
    "http://[::ffff:127.0.0.2]:P",
    "http://[::FFFF:7F00:2]:P",
    "http://[0:0:0:0:0:ffff:7f00:2]:P",
];

/// A blocked address is blocked in every spelling a URL accepts (decimal,
/// hex in both cases, octal, short, a trailing dot, IPv4-mapped IPv6), for
/// every way a page opens a connection (`WAYS`: a popup, fetch, subresources,
/// prefetch, a frame, a WebSocket, EventSource, a beacon, `<a ping>`, a form,
/// a worker, a service worker, a redirect), by a session's rule and by the
/// server's, counted at a server on that address; a session without the rule
/// reaches it every way in each spelling (so each is a live way there).
/// Among the spellings: a name the server's hosts table (`--network-resolve`,
/// which the test controls) points at the blocked address, as a DNS name an
/// attacker points at an internal address.
/// "This host" (`0.0.0.0`, `0`, `[::]`, mapped) and names that resolve to a
/// blocked address (`localhost`, `LOCALHOST.` against `127.0.0.1:PORT`)
/// reach nothing either, nor does an address against a rule on a name that
/// resolves to it (`127.0.0.1:PORT` against `localhost:PORT`); the page's own
/// site is reached as ever.
#[tokio::test]
async fn a_blocked_address_holds_against_every_spelling_and_every_way_out() -> Result<()> {
    let site = SiteServer::start().await?;
    let blocked = Counting::start("127.0.0.2").await?;
    let admin = Counting::start("127.0.0.1").await?;
    // Blocked by its name: reached by its address.
    let named = Counting::start("127.0.0.1").await?;
    let by_address: Vec<String> = ["127.0.0.1", "[::ffff:127.0.0.1]", "0x7f.1"]
        .iter()
        .map(|h| format!("http://{h}:{}", named.port))
        .collect();
    // The names the server's hosts table (`--network-resolve`) points at it.
    let resolve = "rebind.test=127.0.0.2";
    let spelled: Vec<String> = (SPELLINGS.iter())
        .chain(&["http://rebind.test:P", "http://Rebind.TEST.:P"])
        .map(|s| s.replace('P', &blocked.port.to_string()))
        .collect();
    let this_host: Vec<String> =
        ["0.0.0.0", "0", "[::]", "[::ffff:0.0.0.0]", "localhost", "LOCALHOST.", "127.1"]
            .iter()
            .map(|h| format!("http://{h}:{}", admin.port))
            .collect();
    let all: Vec<String> = [&spelled[..], &this_host[..], &by_address[..]].concat();
    let servers = [&blocked, &admin, &named];

    let data = TempDir::new("netpolicy-spellings");
    let server = HttpServer::start(data.path(), &["--network-resolve", resolve], &[]).await?;
    let (fenced, open) = (server.client().await?, server.client().await?);
    let rules = json!({"block": ["127.0.0.2", format!("127.0.0.1:{}", admin.port), format!("localhost:{}", named.port)]});
    fenced.tool_json("network_policy", rules).await?;
    open_reach(&fenced, &site).await?;
    refused_everywhere(&fenced, &all, &servers).await?;
    // The page's own site is reached as ever: its redirects arrived.
    let redirects = site.requests().iter().filter(|r| r.starts_with("GET /redirect?")).count();
    assert_eq!(redirects, all.len(), "{:?}", site.requests());

    // Without the rule, each spelling reaches the server every way.
    open_reach(&open, &site).await?;
    for url in &spelled {
        reached_every_way(&open, url, &blocked).await?;
    }
    reached_every_way(&open, &format!("http://localhost:{}", admin.port), &admin).await?;
    reached_every_way(&open, &by_address[0], &named).await?;
    drop((fenced, open, server));

    // A server's rule holds the same (stdio: the shared tabs).
    let quiet = [Counting::start("127.0.0.2").await?, Counting::start("127.0.0.1").await?];
    let plain = TempDir::new("netpolicy-spellings-server");
    let rule = format!("127.0.0.1:{}", quiet[1].port);
    let client = stdio_client(
        plain.path(),
        &["--network-block", "127.0.0.2", "--network-block", &rule, "--network-resolve", resolve],
        &[],
    )
    .await?;
    let again: Vec<String> = [&spelled[..], &this_host[..]]
        .concat()
        .iter()
        .map(|o| {
            o.replace(&format!(":{}", blocked.port), &format!(":{}", quiet[0].port))
                .replace(&format!(":{}", admin.port), &format!(":{}", quiet[1].port))
        })
        .collect();
    open_reach(&client, &site).await?;
    refused_everywhere(&client, &again, &[&quiet[0], &quiet[1]]).await?;
    Ok(())
}

/// WebRTC sends no UDP past a policed server's proxy (a STUN and a TURN
/// server on 127.0.0.3 count the datagrams they get): a page's peer
/// connection gathers nothing there, in the headless shell (the default; it
/// reads no profile preferences) and in Chromium (`--chrome-path`), and the
/// same page on an unpoliced server reaches them (so the count can move).
#[tokio::test]
async fn webrtc_sends_no_udp_while_the_network_is_policed() -> Result<()> {
    let site = SiteServer::start().await?;
    let udp = std::sync::Arc::new(tokio::net::UdpSocket::bind("127.0.0.3:0").await?);
    let port = udp.local_addr()?.port();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (rx, count) = (udp.clone(), seen.clone());
    let task = tokio::spawn(async move {
        let mut buf = [0u8; 2048];
        while rx.recv_from(&mut buf).await.is_ok() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let peer = format!(
        "(async () => {{ const pc = new RTCPeerConnection({{ iceServers: [{{ urls: 'stun:127.0.0.3:{port}' }}, \
         {{ urls: 'turn:127.0.0.3:{port}?transport=udp', username: 'u', credential: 'p' }}] }}); \
         pc.createDataChannel('x'); const found = []; \
         pc.onicecandidate = (e) => e.candidate && found.push(e.candidate.type); \
         await pc.setLocalDescription(await pc.createOffer()); \
         await new Promise((done) => setTimeout(done, 2500)); pc.close(); return found.join(' '); }})()"
    );
    let count = || seen.load(std::sync::atomic::Ordering::SeqCst);
    // The default headless browser (the headless shell) and Chromium.
    let chromium = chromium_bin()?.display().to_string();
    for browser in [None, Some(chromium.as_str())] {
        let mut args = vec!["--network-policy"];
        args.extend(browser.iter().flat_map(|p| ["--chrome-path", *p]));
        let policed = TempDir::new("netpolicy-webrtc");
        let client = stdio_client(policed.path(), &args, &[]).await?;
        navigate(&client, &site.url("index.html")).await?;
        let found = eval(&client, &peer).await?;
        assert_eq!(
            count(),
            0,
            "UDP reached 127.0.0.3 under the policy in {} (candidates: {found})",
            browser.unwrap_or("the headless shell")
        );
        drop(client);
    }
    let plain = TempDir::new("netpolicy-webrtc-open");
    let client = stdio_client(plain.path(), &[], &[]).await?;
    navigate(&client, &site.url("index.html")).await?;
    let found = eval(&client, &peer).await?;
    assert!(count() > 0, "no UDP without the policy either: the test shows nothing ({found})");
    task.abort();
    Ok(())
}

/// `--network-block-private` refuses what is inside the machine: a page on a
/// loopback server (by its address and by `localhost`) is not reached, and
/// the server counts nothing; without the flag it is.
#[tokio::test]
async fn block_private_refuses_loopback_targets() -> Result<()> {
    let inside = Counting::start("127.0.0.1").await?;
    let data = TempDir::new("netpolicy-private");
    let client = stdio_client(data.path(), &["--network-block-private"], &[]).await?;
    let now = client.tool_json("network_policy", json!({})).await?;
    assert_eq!(now["block_private"], true, "{now}");
    for url in
        [format!("http://127.0.0.1:{}/", inside.port), format!("http://localhost:{}/", inside.port)]
    {
        let r = client.tool("navigate", json!({"url": url})).await?;
        assert!(texts(&r).contains("network policy"), "{url}: {}", texts(&r));
    }
    assert_eq!(inside.seen(), 0, "a loopback server was reached under --network-block-private");
    drop(client);
    let plain = TempDir::new("netpolicy-private-open");
    let client = stdio_client(plain.path(), &["--network-policy"], &[]).await?;
    navigate(&client, &format!("http://127.0.0.1:{}/", inside.port)).await?;
    assert!(inside.seen() > 0, "not reached without the flag");
    Ok(())
}

/// A random spelling of a host as a URL may hold it: IPv4 in its forms
/// (decimal, hex, octal, short, one number, a trailing dot, out of range),
/// IPv6 in brackets (compressed, upper case, IPv4-mapped), names (case, a
/// trailing dot, international, percent-encoded, a forbidden character).
fn spelling(rng: &mut Rng) -> String {
    let byte = |rng: &mut Rng| -> u64 {
        match rng.below(4) {
            0 => [0, 1, 127, 255, 10, 192, 169][rng.below(7) as usize],
            _ => rng.below(256),
        }
    };
    let part = |rng: &mut Rng, v: u64| -> String {
        match rng.below(4) {
            0 => format!("0x{v:x}"),
            1 => format!("0{v:o}"),
            2 if v > 0 => format!("0X{v:X}"),
            _ => v.to_string(),
        }
    };
    match rng.below(4) {
        0 | 1 => {
            let b: Vec<u64> = (0..4).map(|_| byte(rng)).collect();
            let mut s = match rng.below(5) {
                0 => part(rng, b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]),
                1 => format!("{}.{}", part(rng, b[0]), part(rng, b[1] << 16 | b[2] << 8 | b[3])),
                2 => format!(
                    "{}.{}.{}",
                    part(rng, b[0]),
                    part(rng, b[1]),
                    part(rng, b[2] << 8 | b[3])
                ),
                3 => format!("{}.{}.{}.{}", b[0], b[1], b[2], 256 + rng.below(3)),
                _ => (0..4).map(|i| part(rng, b[i])).collect::<Vec<_>>().join("."),
            };
            if rng.below(6) == 0 {
                s.push('.');
            }
            s
        }
        2 => {
            let g: Vec<String> = (0..8)
                .map(|_| {
                    if rng.below(3) == 0 { "0".into() } else { format!("{:x}", rng.below(0x10000)) }
                })
                .collect();
            let s = match rng.below(4) {
                0 => g.join(":"),
                1 => format!("{}::{}", g[0], g[7]),
                2 => format!("::ffff:{}.{}.{}.{}", byte(rng), byte(rng), byte(rng), byte(rng)),
                _ => format!("::ffff:{}:{}", g[1], g[2]),
            };
            let s = if rng.below(2) == 0 { s.to_uppercase() } else { s };
            format!("[{s}]")
        }
        _ => {
            const CHARS: &[&str] =
                &["a", "B", "z", "0", "9", "-", "ü", "Ö", "%41", "%2e", " ", "_", "é", "ß", "x"];
            let labels = 1 + rng.below(3);
            let mut s = (0..labels)
                .map(|_| {
                    (0..1 + rng.below(6))
                        .map(|_| CHARS[rng.below(CHARS.len() as u64) as usize])
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join(".");
            if rng.below(4) == 0 {
                s.push('.');
            }
            s
        }
    }
}

/// ochre's host parser agrees with Chromium's on 600 random spellings: where
/// both read a host, the host Chromium reads back (`new URL(...).hostname`) is
/// the same place to ochre; ochre reads none that Chromium refuses; and
/// where Chromium reads one ochre refuses, it is a name no resolver answers
/// (a space, an empty label).
#[tokio::test]
async fn the_host_parser_agrees_with_chromium_on_random_spellings() -> Result<()> {
    use ochre_protocol::site::Host;
    let mut rng = Rng::from_env("host spellings");
    let all: Vec<String> = (0..600).map(|_| spelling(&mut rng)).collect();
    let (site, _data, client) = site_and_client("host-parser", &[]).await?;
    navigate(&client, &site.url("index.html")).await?;
    let code = format!(
        "JSON.stringify({}.map((h) => {{ try {{ return new URL('http://' + h + '/').hostname; }} catch (e) {{ return null; }} }}))",
        serde_json::to_string(&all)?
    );
    let read: Vec<Option<String>> = serde_json::from_str(&eval(&client, &code).await?)?;
    // Chromium keeps what the URL standard forbids in a name (a space, as
    // %20) and empty labels: names no resolver answers. ochre refuses them
    // (a policed connection to one is refused): the one way they may differ.
    let unresolvable = |c: &str| {
        let c = c.strip_suffix('.').unwrap_or(c);
        c.contains('%') || c.split('.').any(str::is_empty)
    };
    let (mut disagree, mut refused) = (Vec::new(), 0);
    let mut hosts = 0;
    for (s, chromium) in all.iter().zip(&read) {
        let ours = Host::parse(s);
        match (chromium, &ours) {
            (None, Err(_)) => {}
            (Some(c), Ok(h)) => {
                hosts += 1;
                if Host::parse(c).as_ref() != Ok(h) {
                    disagree.push(format!("{s:?}: Chromium {c:?}, ochre {h}"));
                }
            }
            (Some(c), Err(_)) if unresolvable(c) => refused += 1,
            (c, o) => disagree.push(format!("{s:?}: Chromium {c:?}, ochre {o:?}")),
        }
    }
    eprintln!("{hosts} hosts, {refused} names Chromium keeps and ochre refuses");
    assert!(disagree.is_empty(), "{} of {}: {disagree:#?}", disagree.len(), all.len());
    assert!(
        hosts > 300 && hosts < all.len(),
        "{hosts} of {} were hosts: the spellings test both ways",
        all.len()
    );
    Ok(())
}
