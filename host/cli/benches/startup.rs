//! Server start to answered `initialize` and `tools/list` over stdio, and idle RSS: ochre with an
//! empty compile cache (a new machine), ochre with a fresh data dir on a warm
//! cache (every later start), and — in the same run, as the baseline —
//! playwright-mcp and chrome-devtools-mcp when their npm packages are found.
//!
//! Run: `cargo bench -p ochre --bench startup` (or `bash bench/run.sh`).
//! Peers: `OCHRE_BENCH_NODE_MODULES` (a `node_modules` with `@playwright/mcp` and
//! `chrome-devtools-mcp`, default `target/bench/node_modules`, where
//! `bash bench/setup.sh` installs them). Targets: `initialize` ≤ 150 ms on an
//! empty cache and ≤ 30 ms warm; idle RSS ≤ 40 MB. `tools/list` waits for the
//! plugins: on an empty cache that is their compiling, once per machine.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const RUNS: usize = 10;

/// The median of samples.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) / 2]
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

/// One start: ms to the `initialize` reply, ms to the `tools/list` reply (both
/// from the spawn) and the idle RSS in KB a moment later.
struct Start {
    init_ms: f64,
    list_ms: f64,
    rss_kb: u64,
}

/// The next reply with this id (skipping a peer's notifications).
fn reply(out: &mut impl BufRead, id: u32) -> String {
    let mut line = String::new();
    let needle = format!("\"id\":{id}");
    while !line.contains(&needle) {
        line.clear();
        if out.read_line(&mut line).expect("read") == 0 {
            panic!("the server closed stdout before answering request {id}");
        }
    }
    assert!(line.contains("\"result\""), "no result for request {id}: {line}");
    line
}

/// Spawn `cmd`, send `initialize` then `tools/list`, time both replies.
fn one_run(mut cmd: Command) -> Start {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
    writeln!(stdin, "{init}").expect("write");
    reply(&mut out, 1);
    let init_ms = start.elapsed().as_secs_f64() * 1e3;
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).expect("write");
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#).expect("write");
    reply(&mut out, 2);
    let list_ms = start.elapsed().as_secs_f64() * 1e3;
    std::thread::sleep(std::time::Duration::from_millis(300));
    let rss_kb = rss_kb(child.id());
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    Start { init_ms, list_ms, rss_kb }
}

fn ochre(data: &Path, cache: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ochre"));
    c.arg("--data-dir").arg(data).env("OCHRE_CACHE_DIR", cache);
    c
}

fn main() {
    let tmp = std::env::temp_dir().join(format!("ochre-bench-startup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let dir = |name: String| -> PathBuf { tmp.join(name) };

    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    let warm_cache = dir("warm-cache".into());
    one_run(ochre(&dir("fill".into()), &warm_cache)); // fills the warm cache
    for i in 0..RUNS {
        // A new machine: empty cache, new data dir.
        cold.push(one_run(ochre(&dir(format!("cold-{i}")), &dir(format!("cache-{i}")))));
        // Every later start: a new data dir, the machine's warm cache.
        warm.push(one_run(ochre(&dir(format!("warm-{i}")), &warm_cache)));
    }
    let size = |bin: &str| std::fs::metadata(bin).map_or(0, |m| m.len()) as f64 / 1e6;
    println!(
        "ochre: {:.1} MB, ochre-server: {:.1} MB (`ochre` starts, then becomes the server); {RUNS} runs each, medians",
        size(env!("CARGO_BIN_EXE_ochre")),
        size(env!("CARGO_BIN_EXE_ochre-server"))
    );
    println!("| server | initialize (ms) | tools/list answered (ms) | idle RSS (MB) |");
    println!("|---|---:|---:|---:|");
    let mut rows = Vec::new();
    for (name, runs) in [
        ("ochre, empty compile cache (a new machine)", cold),
        ("ochre, new data dir, warm cache", warm),
    ] {
        rows.push(row(name, &runs));
    }

    let modules =
        std::env::var_os("OCHRE_BENCH_NODE_MODULES").map(PathBuf::from).unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench/node_modules")
        });
    let mut skipped = Vec::new();
    for (name, bin) in
        [("playwright-mcp", "playwright-mcp"), ("chrome-devtools-mcp", "chrome-devtools-mcp")]
    {
        let path = modules.join(".bin").join(bin);
        if !path.exists() {
            skipped.push(format!(
                "{name}: not found under {} (skipped; `bash bench/setup.sh` installs it)",
                modules.display()
            ));
            continue;
        }
        let runs: Vec<Start> = (0..RUNS)
            .map(|_| {
                let mut c = Command::new(&path);
                c.arg("--headless");
                one_run(c)
            })
            .collect();
        rows.push(row(name, &runs));
    }
    for s in skipped {
        println!("{s}");
    }
    // Ratios against the first peer measured, in this same run.
    if let Some(base) = rows.get(2).cloned() {
        for r in rows.iter().take(2) {
            println!(
                "{} / {}: initialize {:.2}x, tools/list {:.2}x",
                r.0,
                base.0,
                r.1 / base.1,
                r.2 / base.2
            );
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Print one table row; (name, initialize, tools/list) medians.
fn row(name: &str, runs: &[Start]) -> (String, f64, f64) {
    let init = median(runs.iter().map(|r| r.init_ms).collect());
    let list = median(runs.iter().map(|r| r.list_ms).collect());
    let rss = median(runs.iter().map(|r| r.rss_kb as f64 / 1024.0).collect());
    println!("| {name} | {init:.1} | {list:.1} | {rss:.1} |");
    (name.to_owned(), init, list)
}
