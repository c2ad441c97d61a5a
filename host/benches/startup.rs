//! Server start to answered `initialize` (stdio, warm compile cache), and idle RSS.
//!
//! Run: `cargo bench -p ochre-host --bench startup`. Targets: ≤ 100 ms (playwright-mcp
//! needs 335 ms on this machine, chrome-devtools-mcp 577 ms), idle RSS ≤ 40 MB.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

const RUNS: usize = 20;
const PLAYWRIGHT_MS: f64 = 335.0;
const DEVTOOLS_MS: f64 = 577.0;

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

fn one_run(data: &std::path::Path) -> (f64, u64) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ochre"))
        .arg("--data-dir")
        .arg(data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ochre");
    let mut stdin = child.stdin.take().expect("stdin");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
    writeln!(stdin, "{init}").expect("write");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read");
    let ms = start.elapsed().as_secs_f64() * 1e3;
    assert!(line.contains("\"result\""), "no initialize result: {line}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let rss = rss_kb(child.id());
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    (ms, rss)
}

fn main() {
    let data = std::env::temp_dir().join(format!("ochre-bench-startup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let (cold, _) = one_run(&data); // fills the compile cache
    let mut times = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..RUNS {
        let (ms, kb) = one_run(&data);
        times.push(ms);
        rss.push(kb);
    }
    times.sort_by(f64::total_cmp);
    rss.sort();
    let median = times[times.len() / 2];
    println!("start -> initialize answered (cold compile cache): {cold:.1} ms");
    println!(
        "start -> initialize answered (warm cache): median {median:.1} ms, min {:.1}, max {:.1} over {RUNS} runs",
        times[0],
        times[times.len() - 1]
    );
    println!(
        "ratio vs playwright-mcp ({PLAYWRIGHT_MS} ms): {:.2}; vs chrome-devtools-mcp ({DEVTOOLS_MS} ms): {:.2}; target ≤ 100 ms",
        median / PLAYWRIGHT_MS,
        median / DEVTOOLS_MS
    );
    println!(
        "idle RSS after initialize: median {:.1} MB (target ≤ 40 MB)",
        rss[rss.len() / 2] as f64 / 1024.0
    );
    let _ = std::fs::remove_dir_all(&data);
}
