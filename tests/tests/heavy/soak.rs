//! Soak under faults: several HTTP sessions work for a bounded time (pages and
//! clicks, task-run writes, bad input) while Chromium and the server itself are
//! killed at random. Every acknowledged write must survive (the click reached
//! the site; the task run and its items are there after a final restart, and in
//! the journal), every call must be answered (a call cut by a server kill is
//! counted as cut, never left hanging), and the server must keep answering.
//!
//! CI runs it for 20 s (and on, without faults, for at most 30 s more until a
//! click and a task-run item were acknowledged, on a machine too loaded to
//! get one through in the 20). A long run: `OCHRE_SOAK_SECS=600 cargo nextest run -p
//! ochre-tests --test heavy soak:: --no-capture` (`OCHRE_SOAK_SEED=N` replays a
//! run's choices).

use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use ochre_tests::*;
use serde_json::{Value, json};

/// Longest wait for any answer: a call that takes longer is a hang.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);
const SESSIONS: usize = 3;
/// How long past its faults a soak goes on for work of each kind to be
/// acknowledged.
const UNTIL_WORK: Duration = Duration::from_secs(30);

#[derive(Default)]
struct Counts {
    calls: AtomicU64,
    answered_errors: AtomicU64,
    cut: AtomicU64,
    bad_inputs: AtomicU64,
    clicks_acked: AtomicU64,
    items_acked: AtomicU64,
    browser_kills: AtomicU64,
    server_kills: AtomicU64,
    hangs: AtomicU64,
    losses: AtomicU64,
}

/// What the server acknowledged: (run id, item).
type Acked = Arc<std::sync::Mutex<Vec<(String, String)>>>;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn connect(port: &AtomicU16, until: Instant) -> Result<Client> {
    loop {
        let p = port.load(Ordering::SeqCst);
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(format!(
            "http://127.0.0.1:{p}/mcp"
        ));
        match tokio::time::timeout(ANSWER_WITHIN, rmcp::ServiceExt::serve((), transport)).await {
            Ok(Ok(c)) => return Ok(c),
            _ if Instant::now() > until => bail!("the server stopped answering (port {p})"),
            _ => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// One call: `Ok(Some(result))` answered, `Ok(None)` cut by a fault (the
/// connection went away), `Err` a hang.
async fn one(
    counts: &Counts,
    client: &Client,
    tool: &str,
    args: Value,
) -> Result<Option<rmcp::model::CallToolResult>> {
    counts.calls.fetch_add(1, Ordering::Relaxed);
    // rmcp's HTTP client may wait on for a server that was killed: a call the
    // server's death cut is over once a new server runs (plus a grace period).
    let server = counts.server_kills.load(Ordering::SeqCst);
    let cut_off = async {
        while counts.server_kills.load(Ordering::SeqCst) == server {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    };
    let answered = async {
        tokio::select! {
            r = client.tool(tool, args) => r,
            () = cut_off => Err(anyhow::anyhow!("the server was killed")),
        }
    };
    match tokio::time::timeout(ANSWER_WITHIN, answered).await {
        Ok(Ok(r)) => {
            if r.is_error == Some(true) {
                counts.answered_errors.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Some(r))
        }
        Ok(Err(_)) => {
            counts.cut.fetch_add(1, Ordering::Relaxed);
            Ok(None)
        }
        Err(_) => {
            counts.hangs.fetch_add(1, Ordering::Relaxed);
            bail!("{tool} got no answer within {ANSWER_WITHIN:?}")
        }
    }
}

fn ok(r: &Option<rmcp::model::CallToolResult>) -> bool {
    r.as_ref().is_some_and(|r| r.is_error != Some(true))
}

/// Bad input: wrong types and unknown fields, for tools of every kind.
fn bad_input(rng: &mut Rng) -> (&'static str, Value) {
    let cases: [(&str, Value); 8] = [
        ("navigate", json!({"url": 42})),
        ("interact", json!({"ref": ["e1"], "action": "explode"})),
        ("read_page", json!({"maxChars": "lots"})),
        ("oc_task_run_update", json!({"run_id": "run-../../etc"})),
        ("oc_output_fetch", json!({"output_handle": "oh_!!!"})),
        ("javascript_tool", json!({"code": {"not": "code"}})),
        ("tabs_create", json!({"url": "javascript:alert(1)"})),
        ("oc_bulk_progress_check", json!({"contract_id": "bp-none"})),
    ];
    let (tool, args) = &cases[rng.below(cases.len() as u64) as usize];
    (tool, args.clone())
}

#[allow(clippy::too_many_arguments)]
async fn session(
    i: usize,
    seed: u64,
    port: Arc<AtomicU16>,
    site: Arc<SiteServer>,
    counts: Arc<Counts>,
    acked: Acked,
    end: Instant,
) -> Result<()> {
    let mut rng = Rng((seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1);
    let mut client = connect(&port, end + ANSWER_WITHIN).await?;
    let mut k = 0u64;
    // Past `end` (the faults have stopped), on until some work of each kind
    // was acknowledged (bounded): a loaded machine may answer too few calls
    // in the faults' time for a click to be read and acknowledged.
    let more = |c: &Counts| {
        Instant::now() < end + UNTIL_WORK
            && (c.clicks_acked.load(Ordering::Relaxed) == 0
                || c.items_acked.load(Ordering::Relaxed) == 0)
    };
    while Instant::now() < end || more(&counts) {
        k += 1;
        let mut cut = false;
        match rng.below(3) {
            0 => {
                let tag = format!("soak{seed}-{i}-{k}");
                let r = one(
                    &counts,
                    &client,
                    "navigate",
                    json!({"url": site.url(&format!("counter.html?tag={tag}"))}),
                )
                .await?;
                cut |= r.is_none();
                if ok(&r) {
                    let r = one(&counts, &client, "read_page", json!({})).await?;
                    cut |= r.is_none();
                    // After a browser kill the tab is a new, blank one (the
                    // answer says the browser was relaunched): nothing to click.
                    let snap = r.filter(|r| r.is_error != Some(true)).map(|r| texts(&r));
                    if let Some(button) = snap.and_then(|s| find_ref(&s, "button", "Count")) {
                        let r = one(&counts, &client, "interact", json!({"ref": button})).await?;
                        cut |= r.is_none();
                        if ok(&r) {
                            counts.clicks_acked.fetch_add(1, Ordering::Relaxed);
                            // An acknowledged click reached the site.
                            if site.wait_recorded(&format!("tag={tag}&n=1")).await.is_none() {
                                counts.losses.fetch_add(1, Ordering::Relaxed);
                                eprintln!("lost: the click of {tag}");
                            }
                        }
                    }
                }
            }
            1 => {
                let r = one(
                    &counts,
                    &client,
                    "oc_task_run_start",
                    json!({"goal": format!("soak {i} {k}")}),
                )
                .await?;
                cut |= r.is_none();
                if let Some(run) = r.filter(|r| r.is_error != Some(true)).map(|r| structured(&r)) {
                    let id = run["run_id"].as_str().unwrap_or_default().to_owned();
                    let item = format!("item-{i}-{k}");
                    let r = one(
                        &counts,
                        &client,
                        "oc_task_run_update",
                        json!({"run_id": id, "completed_items": [item]}),
                    )
                    .await?;
                    cut |= r.is_none();
                    if ok(&r) {
                        counts.items_acked.fetch_add(1, Ordering::Relaxed);
                        acked.lock().unwrap_or_else(|p| p.into_inner()).push((id.clone(), item));
                    }
                    let r = one(
                        &counts,
                        &client,
                        "oc_task_run_complete",
                        json!({"run_id": id, "status": "COMPLETED"}),
                    )
                    .await?;
                    cut |= r.is_none();
                }
            }
            _ => {
                let (tool, args) = bad_input(&mut rng);
                counts.bad_inputs.fetch_add(1, Ordering::Relaxed);
                if let Some(r) = one(&counts, &client, tool, args.clone()).await? {
                    let code = error_of(&r)["code"].as_str().map(str::to_owned);
                    if r.is_error != Some(true) || code.is_none() {
                        bail!(
                            "bad input to {tool} ({args}) was not refused with a code: {}",
                            texts(&r)
                        );
                    }
                } else {
                    cut = true;
                }
            }
        }
        if cut {
            // The server was killed: a new session on the new server.
            let _ = client.cancel().await;
            client = connect(&port, end + ANSWER_WITHIN).await?;
        }
    }
    let _ = client.cancel().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_under_browser_and_server_kills_loses_nothing() -> Result<()> {
    let secs: u64 =
        std::env::var("OCHRE_SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let seed: u64 =
        std::env::var("OCHRE_SOAK_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64 | 1)
        });
    println!("soak: {secs} s, {SESSIONS} sessions, seed {seed}");
    let site = Arc::new(SiteServer::start().await?);
    let data = TempDir::new("soak");
    let mut server = HttpServer::start(data.path(), &[], &[]).await?;
    let port = Arc::new(AtomicU16::new(server.port));
    let counts = Arc::new(Counts::default());
    let acked: Acked = Default::default();
    let end = Instant::now() + Duration::from_secs(secs);

    let workers: Vec<_> = (0..SESSIONS)
        .map(|i| {
            tokio::spawn(session(
                i,
                seed,
                port.clone(),
                site.clone(),
                counts.clone(),
                acked.clone(),
                end,
            ))
        })
        .collect();

    // Faults: every 2-5 s, kill Chromium (3 in 4) or the server (then start a
    // new one on the same data dir).
    let mut rng = Rng(seed);
    while Instant::now() + Duration::from_secs(2) < end {
        tokio::time::sleep(Duration::from_millis(2_000 + rng.below(3_000))).await;
        let pid = server.pid().unwrap_or(0);
        if rng.below(4) < 3 {
            if kill_processes_with(&format!("ochre-profile-{pid}-")) > 0 {
                counts.browser_kills.fetch_add(1, Ordering::Relaxed);
            }
        } else {
            kill9(pid);
            server = HttpServer::start(data.path(), &[], &[]).await?;
            port.store(server.port, Ordering::SeqCst);
            counts.server_kills.fetch_add(1, Ordering::SeqCst);
        }
    }
    for w in workers {
        w.await??;
    }

    // A final restart: every acknowledged item is in its run and the journal.
    let pid = server.pid().unwrap_or(0);
    kill9(pid);
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let client = server.client().await?;
    let acked = acked.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut journal = String::new();
    for entry in std::fs::read_dir(data.path().join("journal"))?.flatten() {
        journal.push_str(&std::fs::read_to_string(entry.path())?);
    }
    for (run, item) in &acked {
        let r = client.tool("oc_task_run_get", json!({"run_id": run})).await?;
        let items = structured(&r)["completed_items"].clone();
        let kept = items.as_array().is_some_and(|a| a.iter().any(|v| v == item));
        let journaled = journal.contains(item.as_str());
        if !kept || !journaled {
            counts.losses.fetch_add(1, Ordering::Relaxed);
            eprintln!("lost: {item} of {run} (in the run: {kept}, in the journal: {journaled})");
        }
    }
    client.cancel().await?;

    let c = &counts;
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    println!(
        "soak: {} calls ({} answered with an error, {} cut by a server kill), {} bad inputs refused; \
         acknowledged: {} clicks, {} task-run items; faults: {} browser kills, {} server kills; \
         hangs {}, losses {}",
        get(&c.calls),
        get(&c.answered_errors),
        get(&c.cut),
        get(&c.bad_inputs),
        get(&c.clicks_acked),
        get(&c.items_acked),
        get(&c.browser_kills),
        get(&c.server_kills),
        get(&c.hangs),
        get(&c.losses),
    );
    assert_eq!(get(&c.hangs), 0);
    assert_eq!(get(&c.losses), 0);
    // The run did work and met faults (a run too short for either proves nothing).
    assert!(get(&c.clicks_acked) > 0 && get(&c.items_acked) > 0, "no acknowledged work");
    assert!(get(&c.browser_kills) + get(&c.server_kills) > 0, "no fault injected");
    Ok(())
}
