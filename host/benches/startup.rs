//! Server start to answered `initialize` over stdio, and idle RSS: ochre with an
//! empty compile cache (a new machine), ochre with a fresh data dir on a warm
//! cache (every later start), and — in the same run, as the baseline —
//! playwright-mcp and chrome-devtools-mcp when their npm packages are found.
//!
//! Run: `cargo bench -p ochre-host --bench startup`. Peers: `OCHRE_BENCH_NODE_MODULES`
//! (a `node_modules` with `@playwright/mcp` and `chrome-devtools-mcp`, default
//! `/tmp/ochre-bench/node_modules`). Targets: cold ≤ 150 ms, warm ≤ 30 ms, idle
//! RSS ≤ 40 MB.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const RUNS: usize = 10;

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

/// Spawn `cmd`, send `initialize`, time the reply; the idle RSS a moment later.
fn one_run(mut cmd: Command) -> (f64, u64) {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
    writeln!(stdin, "{init}").expect("write");
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    // Skip anything that is not the reply (a peer's notifications).
    while !line.contains("\"id\":1") {
        line.clear();
        if out.read_line(&mut line).expect("read") == 0 {
            panic!("the server closed stdout before answering");
        }
    }
    let ms = start.elapsed().as_secs_f64() * 1e3;
    assert!(line.contains("\"result\""), "no initialize result: {line}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let rss = rss_kb(child.id());
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    (ms, rss)
}

fn ochre(data: &Path, cache: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ochre"));
    c.arg("--data-dir").arg(data).env("OCHRE_CACHE_DIR", cache);
    c
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let tmp = std::env::temp_dir().join(format!("ochre-bench-startup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let dir = |name: String| -> PathBuf { tmp.join(name) };

    let (mut cold, mut warm, mut rss) = (Vec::new(), Vec::new(), Vec::new());
    let warm_cache = dir("warm-cache".into());
    one_run(ochre(&dir("fill".into()), &warm_cache)); // fills the warm cache
    for i in 0..RUNS {
        // A new machine: empty cache, new data dir.
        let (ms, _) = one_run(ochre(&dir(format!("cold-{i}")), &dir(format!("cache-{i}"))));
        cold.push(ms);
        // Every later start: a new data dir, the machine's warm cache.
        let (ms, kb) = one_run(ochre(&dir(format!("warm-{i}")), &warm_cache));
        warm.push(ms);
        rss.push(kb as f64 / 1024.0);
    }
    let (cold, warm, rss) = (median(cold), median(warm), median(rss));
    println!("ochre, empty compile cache (new machine): median {cold:.1} ms over {RUNS} runs");
    println!("ochre, new data dir, warm cache: median {warm:.1} ms over {RUNS} runs");
    println!("ochre idle RSS after initialize: median {rss:.1} MB");

    let modules = std::env::var_os("OCHRE_BENCH_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/ochre-bench/node_modules"));
    for (name, bin, args) in [
        ("playwright-mcp", "playwright-mcp", &["--headless"][..]),
        (
            "chrome-devtools-mcp",
            "chrome-devtools-mcp",
            &["--headless"][..],
        ),
    ] {
        let path = modules.join(".bin").join(bin);
        if !path.exists() {
            println!("{name}: not found under {} (skipped)", modules.display());
            continue;
        }
        let runs: Vec<f64> = (0..RUNS)
            .map(|_| {
                let mut c = Command::new(&path);
                c.args(args);
                one_run(c).0
            })
            .collect();
        let m = median(runs);
        println!(
            "{name}: median {m:.1} ms; ochre/{name}: cold {:.2}x, warm {:.2}x",
            cold / m,
            warm / m
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
