//! The server tier: two ochre replicas behind HAProxy (Debian's package, started
//! here), sessions sticky by `Mcp-Session-Id`, one data dir shared by both
//! (`--resume-sessions`), one browser for both (a Chromium with a debugging
//! port, given as `--cdp-endpoint`). Eight MCP clients drive pages and write to
//! one task run at once through both replicas; one replica is killed with
//! kill -9 mid-run. Every client goes on, on the survivor, under the same
//! session (resumed from the shared data dir); a call that was running on the
//! dead replica fails at once (HAProxy's 502, or the survivor's 405 to the
//! resumption of its stream), and two idle sessions go on without an error. Then, where the user would look: HAProxy's
//! log (which replica served which session), the site (every acknowledged
//! navigation arrived), the shared run and the journal on disk (every
//! acknowledged write is there, every line whole).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use ochre_tests::*;
use rmcp::ServiceExt as _;
use serde_json::{Value, json};

/// Clients at once.
const CLIENTS: usize = 8;
/// Steps of each client (a navigation and a write to the shared run).
const STEPS: usize = 8;
/// Steps acknowledged in all before the kill.
const KILL_AFTER: usize = 20;
/// The longest a step may take (a bound nothing healthy reaches).
const STEP_LIMIT: Duration = Duration::from_secs(45);

fn haproxy_bin() -> Result<PathBuf> {
    ["/usr/sbin/haproxy", "/usr/bin/haproxy", "/usr/local/sbin/haproxy"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .context("HAProxy is not installed: `bash .ci/setup` installs it (Debian package haproxy)")
}

/// HAProxy in front of `replicas`: round robin for new sessions, then each
/// session sticks to the replica whose response named it; a replica that
/// fails its health check (or refuses a connection) is left, and its sessions'
/// requests go to another. Its log: one line per request, `server status
/// request-session-id response-session-id`.
struct Balancer {
    child: std::process::Child,
    port: u16,
    log: PathBuf,
}

impl Balancer {
    async fn start(dir: &std::path::Path, replicas: &[u16]) -> Result<Self> {
        let port = free_port()?;
        let servers: String = replicas
            .iter()
            .enumerate()
            .map(|(i, p)| {
                format!("    server r{} 127.0.0.1:{p} check inter 250ms fall 2 rise 2\n", i + 1)
            })
            .collect();
        let config = format!(
            "global\n    log stdout format raw local0\n    maxconn 512\n\
             defaults\n    mode http\n    log global\n    retries 2\n    option redispatch\n\
             \x20   timeout connect 2s\n    timeout client 5m\n    timeout server 5m\n\
             frontend mcp\n    bind 127.0.0.1:{port}\n\
             \x20   capture request header mcp-session-id len 64\n\
             \x20   capture response header mcp-session-id len 64\n\
             \x20   log-format \"%s %ST req=%[capture.req.hdr(0)] res=%[capture.res.hdr(0)]\"\n\
             \x20   default_backend ochre\n\
             backend ochre\n    balance roundrobin\n\
             \x20   option httpchk\n    http-check send meth GET uri /health ver HTTP/1.1 hdr Host 127.0.0.1\n\
             \x20   stick-table type string len 64 size 10k expire 30m\n\
             \x20   stick on req.hdr(mcp-session-id)\n\
             \x20   stick store-response res.hdr(mcp-session-id)\n{servers}"
        );
        let cfg = dir.join("haproxy.cfg");
        std::fs::write(&cfg, config)?;
        let log = dir.join("haproxy.log");
        let child = std::process::Command::new(haproxy_bin()?)
            .arg("-db")
            .arg("-f")
            .arg(&cfg)
            .stdout(std::fs::File::create(&log)?)
            .stderr(std::fs::File::create(dir.join("haproxy.err"))?)
            .spawn()
            .context("start haproxy")?;
        let me = Self { child, port, log };
        let health = format!("http://127.0.0.1:{port}/health");
        eventually("HAProxy to answer /health from a replica", Duration::from_secs(20), || async {
            Ok(reqwest::get(&health).await.is_ok_and(|r| r.status().is_success()))
        })
        .await?;
        Ok(me)
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The log's lines as (server, status, session id: the request's, else
    /// the response's, else "-").
    fn requests(text: &str) -> Vec<(String, String, String)> {
        let value = |f: &str, key: &str| {
            f.strip_prefix(key).filter(|v| !v.is_empty() && *v != "-").map(str::to_owned)
        };
        text.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let [server, status, req, res] = f[..] else { return None };
                let id = value(req, "req=").or_else(|| value(res, "res=")).unwrap_or("-".into());
                Some((server.to_owned(), status.to_owned(), id))
            })
            .collect()
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn connect(url: &str) -> Result<Client> {
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
    tokio::time::timeout(STEP_LIMIT, ().serve(transport))
        .await
        .context("MCP handshake through HAProxy: no answer in 45 s")?
        .context("MCP handshake through HAProxy")
}

/// A tool call that must succeed: its structured result (or the error, shown).
async fn call(client: &Client, name: &str, args: Value) -> Result<Value> {
    let r = tokio::time::timeout(STEP_LIMIT, client.tool(name, args))
        .await
        .with_context(|| format!("{name}: no answer in 45 s"))??;
    if r.is_error == Some(true) {
        bail!("{name} failed: {}", texts(&r));
    }
    Ok(structured(&r))
}

/// What one client did.
#[derive(Debug, Default)]
struct Outcome {
    /// Items whose write the server acknowledged.
    acked: Vec<String>,
    /// Every error met, in order.
    errors: Vec<String>,
    /// New sessions opened after an error.
    new_sessions: usize,
}

async fn agent(
    n: usize,
    lb: String,
    site: String,
    run: String,
    acked: Arc<AtomicUsize>,
    connected: Arc<AtomicUsize>,
    killed: Arc<tokio::sync::Notify>,
) -> Result<Outcome> {
    let mut out = Outcome::default();
    let mut client = connect(&lb).await?;
    connected.fetch_add(1, Ordering::SeqCst);
    // An output handle made before the kill, read back after it.
    call(&client, "navigate", json!({"url": format!("{site}/record?c={n}&i=first")})).await?;
    let handle = call(&client, "read_page", json!({"output_mode": "handle"})).await?;
    let (id, size) = (handle["output_handle"].clone(), handle["size_bytes"].clone());
    let mut step = 0;
    let mut failed_here = 0;
    while step < STEPS {
        if step == STEPS - 1 {
            // The last step comes after the kill, whatever the pace.
            tokio::time::timeout(Duration::from_secs(180), killed.notified())
                .await
                .context("the replica was never killed")?;
        }
        let item = format!("c{n}-s{step}");
        let r = async {
            call(&client, "navigate", json!({"url": format!("{site}/record?c={n}&s={step}")}))
                .await?;
            call(&client, "oc_task_run_update", json!({"run_id": run, "completed_items": [item]}))
                .await
        }
        .await;
        match r {
            Ok(_) => {
                out.acked.push(item);
                acked.fetch_add(1, Ordering::SeqCst);
                step += 1;
                failed_here = 0;
            }
            Err(e) => {
                out.errors.push(format!("{e:#}"));
                if out.errors.len() > 4 {
                    bail!("client {n}: too many errors: {:#?}", out.errors);
                }
                failed_here += 1;
                if failed_here >= 4 {
                    // The same session failed four times in a row: a new one.
                    client = connect(&lb).await?;
                    out.new_sessions += 1;
                    failed_here = 0;
                }
            }
        }
    }
    let fetched =
        call(&client, "oc_output_fetch", json!({"output_handle": id, "format": "bytes"})).await?;
    anyhow::ensure!(
        size.as_u64().is_some() && fetched["total"] == size,
        "client {n}: the handle read back after the kill is not the one stored: {fetched} vs size {size}"
    );
    let _ = client.cancel().await;
    Ok(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_behind_haproxy_lose_nothing_when_one_is_killed() -> Result<()> {
    let work = TempDir::new("tier");
    let data = work.path().join("data");
    let browser = Chromium::start(work.path(), "tier").await?;
    let site = SiteServer::start().await?;
    let endpoint = browser.endpoint();
    let args = ["--cdp-endpoint", endpoint.as_str(), "--resume-sessions"];
    let r1 = HttpServer::start(&data, &args, &[]).await?;
    let r2 = HttpServer::start(&data, &args, &[]).await?;
    let lb = Balancer::start(work.path(), &[r1.port, r2.port]).await?;

    let setup = connect(&lb.url()).await?;
    let run =
        call(&setup, "oc_task_run_start", json!({"goal": "visit every page of every client"}))
            .await?["run_id"]
            .as_str()
            .context("run_id")?
            .to_owned();
    setup.cancel().await?;

    let acked = Arc::new(AtomicUsize::new(0));
    let connected = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(tokio::sync::Notify::new());
    let base = site.url("").trim_end_matches('/').to_owned();
    let agents: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let (acked, connected, killed) = (acked.clone(), connected.clone(), killed.clone());
            tokio::spawn(agent(n, lb.url(), base.clone(), run.clone(), acked, connected, killed))
        })
        .collect();

    // Two sessions that have no call running when the replica dies: new
    // sessions go round robin, so one of two made one after the other is on
    // each replica.
    eventually("every client connected", Duration::from_secs(60), || async {
        Ok(connected.load(Ordering::SeqCst) == CLIENTS)
    })
    .await?;
    let mut idle = Vec::new();
    for k in 0..2 {
        let c = connect(&lb.url()).await?;
        call(
            &c,
            "oc_task_run_update",
            json!({"run_id": run, "completed_items": [format!("idle{k}-before")]}),
        )
        .await?;
        idle.push(c);
    }

    let what = format!("{KILL_AFTER} steps acknowledged");
    eventually(&what, Duration::from_secs(180), || async {
        Ok(acked.load(Ordering::SeqCst) >= KILL_AFTER)
    })
    .await?;
    let log_at_kill = std::fs::read_to_string(&lb.log)?.len();
    assert!(kill9(r1.pid().context("replica 1 runs")?), "kill -9 of replica 1");
    killed.notify_waiters();
    // A client that reaches its last step after this point needs no wake-up.
    let wake = {
        let killed = killed.clone();
        tokio::spawn(async move {
            loop {
                killed.notify_waiters();
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };

    let mut outcomes = Vec::new();
    for (n, a) in agents.into_iter().enumerate() {
        outcomes.push(a.await?.with_context(|| format!("client {n}"))?);
    }
    wake.abort();
    // Shown when the test fails (nextest prints a failing test's output).
    let log = std::fs::read_to_string(&lb.log)?;
    eprintln!("--- HAProxy's log from the kill on ---\n{}", &log[log_at_kill.min(log.len())..]);
    for (n, o) in outcomes.iter().enumerate() {
        eprintln!("client {n}: {} new sessions, errors: {:?}", o.new_sessions, o.errors);
        assert_eq!(o.acked.len(), STEPS, "client {n} did all its steps");
        // A call that was running on the dead replica fails at once, and no
        // call waits out its time limit: HAProxy's 502
        // when the replica died before answering, or, when its answer had
        // begun, the survivor's 405 to the client's resumption of the stream
        // (there is none to resume here), which the Rust SDK reports as its
        // transport closed.
        // A call sent at once after that may fail the same way until the
        // balancer has taken the killed replica out (seen: two 502s in a row in
        // the full suite, about once in eight runs); the session then goes on.
        assert!(o.errors.len() <= 3, "client {n}: {:?}", o.errors);
        for e in &o.errors {
            assert!(e.contains("Transport closed") || e.contains("HTTP 502"), "client {n}: {e}");
        }
        assert_eq!(o.new_sessions, 0, "client {n} went on in its own session");
    }
    // The idle sessions go on, under their ids (resumed where needed), without
    // an error.
    let mut items: Vec<String> = outcomes.iter().flat_map(|o| o.acked.clone()).collect();
    for (k, c) in idle.iter().enumerate() {
        call(c, "navigate", json!({"url": format!("{base}/record?c=idle{k}&s=after")})).await?;
        let item = format!("idle{k}-after");
        call(c, "oc_task_run_update", json!({"run_id": run, "completed_items": [item]})).await?;
        items.extend([format!("idle{k}-before"), item]);
    }

    // HAProxy's log: before the kill each session stayed on one replica and
    // both served; after it, the dead one served nothing and the sessions it
    // had went on on the survivor under their ids (resumed) or anew.
    let text = std::fs::read_to_string(&lb.log)?;
    let (before, after) = text.split_at(log_at_kill.min(text.len()));
    let mut servers_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (server, _, id) in Balancer::requests(before).into_iter().filter(|(_, _, id)| id != "-") {
        servers_of.entry(id).or_default().insert(server);
    }
    assert!(
        servers_of.values().all(|s| s.len() == 1),
        "a session moved between replicas before the kill: {servers_of:?}"
    );
    let on = |r: &str| servers_of.iter().filter(|(_, s)| s.contains(r)).count();
    assert!(on("r1") >= 1 && on("r2") >= 1, "both replicas served sessions: {servers_of:?}");
    let later = Balancer::requests(after);
    let resumed: BTreeSet<&String> = later
        .iter()
        .filter(|(s, status, id)| {
            s == "r2"
                && status.starts_with('2')
                && servers_of.get(id).is_some_and(|x| x.contains("r1"))
        })
        .map(|(_, _, id)| id)
        .collect();
    eprintln!("sessions on r1 before the kill: {}, resumed on r2: {}", on("r1"), resumed.len());
    assert!(!resumed.is_empty(), "no session of r1 went on on r2 under its id: {after}");
    for c in idle {
        c.cancel().await?;
    }

    // The site saw every acknowledged navigation.
    let recorded: BTreeSet<String> = site.recorded().into_iter().collect();
    for item in items.iter().filter(|i| i.starts_with('c')) {
        let (c, s) = item.trim_start_matches('c').split_once("-s").context("item")?;
        let q = format!("c={c}&s={s}");
        assert!(recorded.contains(&q), "navigation {q} never reached the site");
    }

    // The shared run holds every acknowledged item, read by the survivor and
    // from the disk; its event log and the journal are whole lines.
    let check = connect(&lb.url()).await?;
    let got = call(&check, "oc_task_run_get", json!({"run_id": run})).await?;
    check.cancel().await?;
    let kept: BTreeSet<&str> = got["completed_items"]
        .as_array()
        .context("completed_items")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for item in &items {
        assert!(kept.contains(item.as_str()), "acknowledged {item} is not in the run: {got}");
    }
    assert_eq!(got["completed_count"], items.len(), "{got}");
    let meta: Value = serde_json::from_slice(&std::fs::read(
        data.join("task-runs").join(&run).join("meta.json"),
    )?)?;
    assert_eq!(meta["completed_count"], items.len());
    let whole = |file: PathBuf| -> Result<Vec<Value>> {
        let text = std::fs::read_to_string(&file)?;
        text.lines()
            .map(|l| serde_json::from_str(l).with_context(|| format!("{}: {l}", file.display())))
            .collect()
    };
    let events = whole(data.join("task-runs").join(&run).join("events.jsonl"))?;
    assert!(events.iter().filter(|e| e["event"] == "updated").count() >= items.len());
    let mut journal = Vec::new();
    for e in std::fs::read_dir(data.join("journal"))? {
        journal.extend(whole(e?.path())?);
    }
    for item in &items {
        assert!(
            journal.iter().any(|e| e["tool"] == "oc_task_run_update"
                && e["ok"] == true
                && e["args"]["completed_items"][0] == item.as_str()),
            "acknowledged {item} has no journal entry"
        );
    }
    drop(r2);
    Ok(())
}

/// A JSON-RPC request of session `id` to the server on `port`.
async fn post_in(port: u16, id: &str, body: Value) -> Result<reqwest::Response> {
    Ok(reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_string())
        .send()
        .await?)
}

/// A session opened by hand on `port`: its id, once the handshake is done.
async fn open_session(port: u16) -> Result<String> {
    let r = initialize_raw(port, &[]).await?;
    anyhow::ensure!(r.status() == reqwest::StatusCode::OK, "initialize: {}", r.status());
    let id = r
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .context("no Mcp-Session-Id")?;
    drop(r);
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = post_in(port, &id, done).await?;
    anyhow::ensure!(r.status().is_success(), "initialized: {}", r.status());
    Ok(id)
}

/// A session taken up from the shared data dir counts against the session
/// cap as a new one does: a replica at its cap answers the dead replica's
/// session with 503 and Retry-After (the session stays in the store), and
/// takes it up once a slot is free.
#[tokio::test]
async fn a_session_taken_up_counts_against_the_session_cap() -> Result<()> {
    let data = TempDir::new("tier-cap");
    let first = HttpServer::start(data.path(), &["--resume-sessions"], &[]).await?;
    let orphan = open_session(first.port).await?;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = post_in(first.port, &orphan, list.clone()).await?;
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    let pid = first.pid().context("pid")?;
    assert!(kill9(pid), "kill -9 of the first server");
    drop(first);
    let stored = data.path().join("sessions").join(format!("{orphan}.json"));
    assert!(stored.is_file(), "the session's handshake is in the shared data dir");

    let second =
        HttpServer::start(data.path(), &["--resume-sessions", "--max-sessions", "1"], &[]).await?;
    let own = open_session(second.port).await?;
    let refused = post_in(second.port, &orphan, list.clone()).await?;
    assert_eq!(refused.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("5"));
    let body: Value = refused.json().await?;
    assert_eq!(body["error"]["data"]["max_sessions"], 1, "{body}");
    assert!(body["error"]["message"].as_str().is_some_and(|m| m.contains("--max-sessions 1")));
    assert!(stored.is_file(), "a refused take-up leaves the session in the store");
    // The replica's own session still works; once it ends, the orphan is taken up.
    let r = post_in(second.port, &own, list.clone()).await?;
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    drop(r);
    let closed = reqwest::Client::new()
        .delete(format!("http://127.0.0.1:{}/mcp", second.port))
        .header("mcp-session-id", &own)
        .send()
        .await?;
    assert_eq!(closed.status(), reqwest::StatusCode::OK, "DELETE");
    let r = post_in(second.port, &orphan, list).await?;
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    let text = r.text().await?;
    assert!(text.contains("\"tools\"") && text.contains("\"navigate\""), "{text}");
    // And now it holds the one slot.
    assert_eq!(
        initialize_raw(second.port, &[]).await?.status(),
        reqwest::StatusCode::SERVICE_UNAVAILABLE
    );
    Ok(())
}
