//! The `ochre` binary over stdio with rmcp's client: the totp group, capability
//! gating, argument validation, the journal and trace, a third-party plugin.

use anyhow::Result;
use ochre_tests::*;
use serde_json::{Value, json};

const SECRET: &str = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs()
}

#[tokio::test]
async fn totp_code_matches_an_independent_computation() -> Result<()> {
    let data = TempDir::new("totp");
    let client = stdio_client(data.path(), &[], &[("OCHRE_TOTP_EXAMPLE_COM", SECRET)]).await?;
    let names = tool_names(&client).await?;
    assert!(names.contains(&"oc_totp_generate".to_owned()), "{names:?}");
    assert!(names.contains(&"oc_output_fetch".to_owned()), "{names:?}");

    let before = now_secs();
    let res = client.tool("oc_totp_generate", json!({"domain": "example.com"})).await?;
    let after = now_secs();
    assert_ne!(res.is_error, Some(true), "{res:?}");
    let out = res.structured_content.clone().expect("structured content");
    assert_eq!(out, result_json(&res), "text and structured content agree");
    let code = out["code"].as_str().expect("code").to_owned();
    assert_eq!(code.len(), 6);
    let expected: Vec<String> =
        [before, after].iter().map(|t| reference_totp(SECRET, *t, 6, 30)).collect();
    assert!(expected.contains(&code), "{code} not in {expected:?}");
    assert_eq!(out["domain"], "example.com");
    let remaining = out["secondsRemaining"].as_u64().expect("secondsRemaining");
    assert!((1..=30).contains(&remaining), "{remaining}");
    assert!(out["expiresAt"].as_str().expect("expiresAt").ends_with('Z'));

    // A missing secret is a structured error that says how to add one.
    let res = client.tool("oc_totp_generate", json!({"domain": "nothing.example"})).await?;
    let err = error_of(&res);
    assert_eq!(err["code"], "SECRET_NOT_FOUND");
    let msg = err["message"].as_str().expect("message");
    assert!(msg.contains("ochre totp add --domain nothing.example"), "{msg}");
    assert!(msg.contains("OCHRE_TOTP_NOTHING_EXAMPLE"), "{msg}");
    client.cancel().await?;

    // Neither the secret nor the code is in the journal or the trace.
    let logs =
        read_all_text(&data.path().join("journal")) + &read_all_text(&data.path().join("traces"));
    assert!(logs.contains("oc_totp_generate"), "calls were journaled");
    assert!(!logs.contains(SECRET), "secret leaked");
    // The code would appear as a JSON string (a bare 6-digit run could be part of a
    // millisecond timestamp by chance).
    assert!(!logs.contains(&format!("\"{code}\"")), "code leaked");
    assert!(!logs.contains("\"code\""), "code field leaked");
    Ok(())
}

#[tokio::test]
async fn totp_with_a_fixed_clock_and_a_secret_file() -> Result<()> {
    let data = TempDir::new("totp-file");
    // `ochre totp add` stores the secret (mode 0600); the env has none.
    let status = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["totp", "add", "--domain", "Login.Example-Site.com", "--secret", SECRET])
        .status()?;
    assert!(status.success());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.path().join("secrets.json"))?.permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // RFC 6238's first SHA-1 time step, on a fixed clock.
    let t = 1_111_111_109u64;
    let client =
        stdio_client(data.path(), &[], &[("OCHRE_FIXED_CLOCK_MS", &(t * 1000).to_string())])
            .await?;
    let res = client.tool("oc_totp_generate", json!({"domain": "login.example-site.com"})).await?;
    let out = res.structured_content.clone().expect("structured");
    assert_eq!(out["code"], reference_totp(SECRET, t, 6, 30));
    assert_eq!(out["secondsRemaining"], 1);
    assert_eq!(out["expiresAt"], "2005-03-18T01:58:30Z");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn tools_only_and_disable_tools_gate_groups() -> Result<()> {
    let data = TempDir::new("gate");
    let client =
        stdio_client(data.path(), &["--tools-only", "totp"], &[("OCHRE_TOTP_EXAMPLE_COM", SECRET)])
            .await?;
    // The host's task-run and progress tools stay (tier 2, behind expand_tools).
    assert_eq!(tool_names(&client).await?, ["oc_totp_generate", "expand_tools"]);
    let err = client.tool_error("oc_journal", json!({})).await?;
    assert_eq!(err["code"], "CAPABILITY_DISABLED");
    assert_eq!(err["capability"], "core");
    let ok = client.tool("oc_totp_generate", json!({"domain": "example.com"})).await?;
    assert_ne!(ok.is_error, Some(true));
    client.cancel().await?;

    let client = stdio_client(data.path(), &["--disable-tools", "totp"], &[]).await?;
    let names = tool_names(&client).await?;
    assert!(!names.iter().any(|n| n.contains("totp")), "{names:?}");
    assert!(names.contains(&"oc_output_fetch".to_owned()));
    let err = client.tool_error("oc_totp_generate", json!({"domain": "example.com"})).await?;
    assert_eq!(err["code"], "CAPABILITY_DISABLED");
    assert_eq!(err["capability"], "totp");
    // Even bad arguments get the capability error first.
    let err = client.tool_error("oc_totp_generate", json!({"junk": 1})).await?;
    assert_eq!(err["code"], "CAPABILITY_DISABLED");
    let err = client.tool_error("no_such_tool", json!({})).await?;
    assert_eq!(err["code"], "UNKNOWN_TOOL");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn invalid_arguments_are_refused_and_not_journaled() -> Result<()> {
    let data = TempDir::new("invalid");
    let client = stdio_client(data.path(), &[], &[("OCHRE_TOTP_EXAMPLE_COM", SECRET)]).await?;
    let huge = "a".repeat(1 << 20);
    let cases = [
        (json!({"domain": 5}), "domain"),
        (json!({}), "domain"),
        (json!({"domain": "example.com", "junk": true}), "junk"),
        (json!({"domain": huge}), "domain"),
        (json!({"domain": "has space"}), "domain"),
        (json!({"domain": ""}), "domain"),
    ];
    for (args, field) in cases {
        let res = client.tool("oc_totp_generate", args).await?;
        let err = error_of(&res);
        assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
        assert_eq!(err["field"], field, "{err}");
        assert!(err["message"].as_str().expect("message").contains(field));
        assert!(result_json(&res).to_string().len() < 1000, "the huge value is not echoed");
    }
    let err = client.tool_error("oc_journal", json!({"count": "ten"})).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("count"))
    );

    // Nothing was journaled or traced for the rejected calls ...
    assert!(read_jsonl_dir(&data.path().join("journal")).is_empty());
    assert!(read_jsonl_dir(&data.path().join("traces")).is_empty());
    // ... and the server still serves.
    let ok = client.tool("oc_totp_generate", json!({"domain": "example.com"})).await?;
    assert_ne!(ok.is_error, Some(true), "{ok:?}");
    let entries = read_jsonl_dir(&data.path().join("journal"));
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["ok"], true);
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn journal_and_trace_record_every_call() -> Result<()> {
    let data = TempDir::new("journal");
    let client = stdio_client(
        data.path(),
        &[],
        &[("OCHRE_TOTP_EXAMPLE_COM", SECRET), ("OCHRE_SESSION_ID", "s-test")],
    )
    .await?;
    client.tool("oc_totp_generate", json!({"domain": "example.com"})).await?;
    client.tool("oc_totp_generate", json!({"domain": "missing.example"})).await?;
    let res = client.tool("oc_journal", json!({"action": "recent", "count": 5})).await?;
    let entries = res.structured_content.clone().expect("structured")["entries"].clone();
    let entries = entries.as_array().expect("entries");
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["tool"], "oc_totp_generate");
    assert_eq!(entries[0]["ok"], true);
    assert_eq!(entries[0]["args"], json!({"domain": "example.com"}));
    assert_eq!(entries[1]["ok"], false);
    assert_eq!(entries[1]["error"], "SECRET_NOT_FOUND");
    assert!(entries.iter().all(|e| e.get("intent").is_none()));
    let res = client.tool("oc_journal", json!({"kind": "summary"})).await?;
    let summary = res.structured_content.clone().expect("structured");
    assert_eq!(summary["total"], 3, "{summary}");
    assert_eq!(summary["byTool"]["oc_totp_generate"], json!({"calls": 2, "failed": 1}));
    client.cancel().await?;

    let trace_dir = data.path().join("traces").join("s-test");
    let events = read_jsonl_dir(&trace_dir);
    assert_eq!(events.len(), 4, "{events:?}");
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["seq"], i as u64 + 1);
        assert_eq!(e["kind"], "tool_call");
        assert!(e["ts"].as_u64().is_some());
        assert!(e["body"]["tool"].is_string());
    }
    let meta: Value = serde_json::from_slice(&std::fs::read(trace_dir.join("meta.json"))?)?;
    assert_eq!(meta["session_id"], "s-test");
    Ok(())
}

#[tokio::test]
async fn third_party_plugin_loads_from_plugin_dir() -> Result<()> {
    let (data, _plugins, dir) = data_and_plugins("hello", &["hello"]);
    let client = stdio_client(data.path(), &["--plugin-dir", &dir], &[]).await?;
    let names = tool_names(&client).await?;
    assert!(names.contains(&"hello_greet".to_owned()), "{names:?}");
    let res = client.tool("hello_greet", json!({"name": "Ada"})).await?;
    assert_eq!(result_json(&res), json!("Hello, Ada! (greeting #1)"));
    let res = client.tool("hello_greet", json!({"name": "Grace"})).await?;
    assert_eq!(result_json(&res), json!("Hello, Grace! (greeting #2)"), "kv state persists");
    client.cancel().await?;

    // State survives a restart.
    let client = stdio_client(data.path(), &["--plugin-dir", &dir], &[]).await?;
    let res = client.tool("hello_greet", json!({"name": "Alan"})).await?;
    assert_eq!(result_json(&res), json!("Hello, Alan! (greeting #3)"));
    // --tools-only with the plugin's own group.
    client.cancel().await?;
    let client =
        stdio_client(data.path(), &["--plugin-dir", &dir, "--tools-only", "example"], &[]).await?;
    assert_eq!(tool_names(&client).await?, ["hello_greet", "hello_tabs", "expand_tools"]);
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn plugin_progress_reaches_the_client_when_it_asked() -> Result<()> {
    let (data, _plugins, dir) = data_and_plugins("progress", &["hello"]);
    let collector = ProgressCollector::default();
    let client =
        stdio_client_with(collector.clone(), data.path(), &["--plugin-dir", &dir], &[]).await?;

    // rmcp's client puts a progress token on every request; the plugin reports once
    // per greeting, host tools never.
    client.tool("hello_greet", json!({"name": "one"})).await?;
    client.tool("oc_journal", json!({})).await?;
    let res = client.tool("hello_greet", json!({"name": "two"})).await?;
    assert_ne!(res.is_error, Some(true));
    let mut got = Vec::new();
    for _ in 0..50 {
        got = collector.seen();
        if got.len() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let got_all = collector.seen();
    assert_eq!(got_all.len(), got.len(), "no late extra notifications");
    let one = (1.0, Some(1.0), Some("greeted".to_owned()));
    assert_eq!(got, [one.clone(), one]);
    client.cancel().await?;
    Ok(())
}

/// The server process over raw stdin/stdout lines (not through an MCP client,
/// which would never send a broken line).
struct RawStdio {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl RawStdio {
    async fn start(data: &std::path::Path) -> Result<Self> {
        Self::start_with(data, &[]).await
    }

    async fn start_with(data: &std::path::Path, envs: &[(&str, &std::path::Path)]) -> Result<Self> {
        use std::process::Stdio;
        let mut child = tokio::process::Command::new(ochre_bin())
            .arg("--data-dir")
            .arg(data)
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove("RUST_LOG")
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
        Ok(Self { child, stdin, lines })
    }

    async fn send(&mut self, line: &str) -> Result<()> {
        use tokio::io::AsyncWriteExt;
        self.stdin.write_all(line.as_bytes()).await?;
        self.stdin.write_all(b"\n").await?;
        self.stdin.flush().await?;
        Ok(())
    }

    /// The next message the server writes (bounded: a missing reply fails).
    async fn next(&mut self) -> Result<Value> {
        self.next_within(10).await
    }

    async fn next_within(&mut self, secs: u64) -> Result<Value> {
        let line =
            tokio::time::timeout(std::time::Duration::from_secs(secs), self.lines.next_line())
                .await
                .map_err(|_| anyhow::anyhow!("no reply within {secs} s"))??
                .ok_or_else(|| anyhow::anyhow!("the server closed stdout"))?;
        Ok(serde_json::from_str(&line)?)
    }
}

#[tokio::test]
async fn every_unparsable_line_gets_an_error_reply_and_the_session_goes_on() -> Result<()> {
    let data = TempDir::new("raw-stdio");
    let mut s = RawStdio::start(data.path()).await?;
    s.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#).await?;
    assert_eq!(s.next().await?["id"], 0);
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await?;

    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"find","arguments":{{"q":{}1{}}}}}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let cases: Vec<(String, Value, i64)> = vec![
        (deep, json!(1), -32700),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"find","arguments":{"query":"\ud800"}}}"#.into(),
            json!(2),
            -32700,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wait_for","arguments":{"type":"timeout","value":1e400}}}"#.into(),
            json!(3),
            -32700,
        ),
        ("this is not json".into(), Value::Null, -32700),
        (r#"{"jsonrpc":"2.0","id":4}"#.into(), json!(4), -32600),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"find","arguments":[1,2]}}"#.into(),
            json!(5),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"find"}"#.into(),
            json!(6),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}"#.into(),
            json!(7),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"no/such/method"}"#.into(),
            json!(8),
            -32601,
        ),
    ];
    for (line, id, code) in cases {
        s.send(&line).await?;
        let r = s.next().await?;
        assert_eq!(r["id"], id, "{r}");
        assert_eq!(r["error"]["code"], code, "{r}");
    }
    // The session goes on.
    s.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#).await?;
    let r = s.next().await?;
    assert_eq!(r["id"], 9);
    assert!(r["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{r}");
    // A broken last line before the end of input is still answered.
    s.send("{\"jsonrpc\":\"2.0\",\"id\":10,").await?;
    drop(s.stdin);
    let r = tokio::time::timeout(std::time::Duration::from_secs(10), s.lines.next_line())
        .await??
        .map(|l| serde_json::from_str::<Value>(&l))
        .transpose()?;
    assert_eq!(
        r.as_ref().map(|r| (r["id"].clone(), r["error"]["code"].clone())),
        Some((json!(10), json!(-32700))),
        "{r:?}"
    );
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), s.child.wait()).await;
    Ok(())
}

/// Spawn to the `initialize` reply and to the `tools/list` reply, in ms, with
/// this compile cache.
async fn start_ms(data: &std::path::Path, cache: &std::path::Path) -> Result<(f64, f64)> {
    let started = std::time::Instant::now();
    let mut s = RawStdio::start_with(data, &[("OCHRE_CACHE_DIR", cache)]).await?;
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#).await?;
    let reply = s.next_within(120).await?;
    let init = started.elapsed().as_secs_f64() * 1000.0;
    assert!(reply.get("result").is_some(), "{reply}");
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await?;
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await?;
    let reply = s.next_within(120).await?;
    let listed = started.elapsed().as_secs_f64() * 1000.0;
    let tools = reply["result"]["tools"].as_array().map_or(0, Vec::len);
    assert!(tools > 10, "{reply}");
    let _ = s.child.kill().await;
    Ok((init, listed))
}

#[tokio::test]
async fn plugins_are_compiled_once_per_machine_not_per_data_dir() -> Result<()> {
    let cache = TempDir::new("user-cache");
    let (d1, d2) = (TempDir::new("cold-1"), TempDir::new("cold-2"));
    // Two servers at once on an empty cache: both start and list their tools.
    let (a, b) = tokio::join!(start_ms(d1.path(), cache.path()), start_ms(d2.path(), cache.path()));
    let ((init_a, list_a), (init_b, list_b)) = (a?, b?);
    let (cold_init, cold_list) = (init_a.max(init_b), list_a.max(list_b));
    let compiled = std::fs::read_dir(cache.path().join("wasm"))?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".cwasm"))
        .count();
    assert!(compiled >= 7, "{compiled} compiled plugins in the cache");
    assert!(!d1.path().join("cache").exists(), "compiled code in the data dir");
    // `initialize` does not wait for the compiling; `tools/list` does.
    assert!(
        cold_init * 3.0 < cold_list,
        "initialize {cold_init:.0} ms vs tools/list {cold_list:.0} ms on an empty cache"
    );
    // Fresh data dirs on the warm cache: nothing is compiled again.
    let mut warm = Vec::new();
    for i in 0..3 {
        let d = TempDir::new(&format!("warm-{i}"));
        warm.push(start_ms(d.path(), cache.path()).await?);
    }
    warm.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (warm_init, warm_list) = warm[1];
    println!(
        "empty cache (two servers at once): initialize {cold_init:.0} ms, tools/list {cold_list:.0} ms; \
         fresh data dir on a warm cache (median of 3): initialize {warm_init:.0} ms, tools/list {warm_list:.0} ms"
    );
    assert!(warm_list * 3.0 < cold_list, "warm {warm_list:.0} ms vs cold {cold_list:.0} ms");
    Ok(())
}

#[tokio::test]
async fn a_host_that_cannot_be_built_ends_the_server_with_the_reason() -> Result<()> {
    // The data dir is a file: `initialize` is answered at once, then the build
    // fails and the server exits non-zero saying why.
    let dir = TempDir::new("not-a-dir");
    let file = dir.path().join("file");
    std::fs::write(&file, "x")?;
    // std's process (not tokio's): tokio may miss this child's exit when another
    // test's runtime, which set up its SIGCHLD handling, has ended.
    let mut child = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(&file)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .env_remove("RUST_LOG")
        .spawn()?;
    let mut stdin = child.stdin.take().expect("stdin");
    use std::io::Write;
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )?;
    let pid = child.id();
    let waited = tokio::task::spawn_blocking(move || child.wait_with_output());
    let out = match tokio::time::timeout(std::time::Duration::from_secs(60), waited).await {
        Ok(out) => out??,
        Err(_) => {
            let _ = std::process::Command::new("kill").arg(pid.to_string()).status();
            anyhow::bail!("the server did not exit within 60 s");
        }
    };
    drop(stdin);
    assert!(!out.status.success(), "{:?}", out.status);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("could not start") && err.contains(&file.display().to_string()), "{err}");
    Ok(())
}

#[tokio::test]
async fn sigterm_ends_the_server_while_its_client_keeps_stdin_open() -> Result<()> {
    // A client that keeps the pipe open (most do) must not keep the server
    // alive after SIGTERM: a read of stdin pending in a blocking thread used to
    // hold the runtime's shutdown for good.
    let data = TempDir::new("term-open-stdin");
    let mut child = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .env_remove("RUST_LOG")
        .spawn()?;
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    use std::io::{BufRead, Write};
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )?;
    let mut line = String::new();
    stdout.read_line(&mut line)?;
    assert!(line.contains("serverInfo"), "{line}");
    let pid = child.id();
    let status = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status()?;
    assert!(status.success());
    let waited = tokio::task::spawn_blocking(move || child.wait());
    let exited = tokio::time::timeout(std::time::Duration::from_secs(20), waited).await;
    if exited.is_err() {
        let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    drop(stdin);
    let status = exited
        .map_err(|_| anyhow::anyhow!("the server was still running 20 s after SIGTERM"))???;
    assert!(status.success(), "{status:?}");
    Ok(())
}

#[tokio::test]
async fn a_terminal_is_told_what_ochre_is_and_a_pipe_is_not() -> Result<()> {
    use tokio::io::AsyncReadExt;
    let data = TempDir::new("tty");
    // `script` (util-linux) runs the server on a pseudo-terminal.
    let cmd = format!("{} --data-dir {}", ochre_bin().display(), data.path().display());
    let mut child = tokio::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .env_remove("RUST_LOG")
        .kill_on_drop(true)
        .spawn()?;
    let mut out = child.stdout.take().expect("stdout");
    let mut seen = String::new();
    let told = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        let mut buf = [0u8; 4096];
        while !seen.contains("--http 8765") {
            let n = out.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        anyhow::Ok(())
    })
    .await;
    let _ = child.kill().await;
    assert!(told.is_ok(), "nothing within 60 s: {seen:?}");
    for needle in ["speaks MCP", "claude mcp add ochre -- ", " tools", "--http 8765"] {
        assert!(seen.contains(needle), "{needle:?} missing from {seen:?}");
    }

    // On a pipe (an MCP client) stderr carries no such paragraph.
    let out = tokio::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .stdin(std::process::Stdio::null())
        .env_remove("RUST_LOG")
        .output()
        .await?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("claude mcp add"), "{err}");
    assert!(out.stdout.is_empty());
    Ok(())
}

/// Collects `notifications/message`: (level, logger, text).
#[derive(Clone, Default)]
struct LogCollector(std::sync::Arc<std::sync::Mutex<Vec<(String, String, String)>>>);

impl LogCollector {
    fn all(&self) -> Vec<(String, String, String)> {
        self.0.lock().expect("lock").clone()
    }

    /// Wait (up to 10 s) for a message from `logger` containing `needle`.
    async fn wait_for(&self, logger: &str, needle: &str) -> Result<(String, String, String)> {
        for _ in 0..100 {
            if let Some(m) =
                self.all().into_iter().find(|(_, l, t)| l == logger && t.contains(needle))
            {
                return Ok(m);
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        anyhow::bail!("no {logger} message with {needle:?}: {:?}", self.all())
    }
}

#[allow(deprecated)] // MCP logging: deprecated by SEP-2577, still in the protocol
impl rmcp::ClientHandler for LogCollector {
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        let level = format!("{:?}", params.level).to_lowercase();
        let text = params.data.as_str().map_or_else(|| params.data.to_string(), str::to_owned);
        self.0.lock().expect("lock").push((level, params.logger.unwrap_or_default(), text));
    }
}

#[tokio::test]
#[allow(deprecated)] // MCP logging: deprecated by SEP-2577, still in the protocol
async fn log_messages_reach_the_client_at_its_level_and_never_a_secret() -> Result<()> {
    const SECRET: &str = "hunter2-very-secret";
    let site = SiteServer::start().await?;
    let data = TempDir::new("mcp-log");
    let profile = data.path().join("profile");
    let profile_arg = profile.to_str().expect("utf8").to_owned();
    let plugins = plugin_dir_with(&["greedy", "futurewit"]);
    let dir = plugins.path().to_str().expect("utf8").to_owned();
    let logs = LogCollector::default();
    let args = [
        "--plugin-dir",
        &dir,
        "--grant",
        "greedy=secrets",
        "--disable-tools",
        "recording",
        "--user-data-dir",
        &profile_arg,
    ];
    let client =
        stdio_client_with(logs.clone(), data.path(), &args, &[("OCHRE_GREEDY_TOKEN", SECRET)])
            .await?;
    let caps = client.peer_info().map(|i| i.capabilities.clone());
    assert!(caps.is_some_and(|c| c.logging.is_some()), "no logging capability");

    // What happened at start reaches the new session: a plugin that was refused.
    let (level, _, text) = logs.wait_for("ochre", "plugin futurewit was not loaded").await?;
    assert_eq!(level, "warning", "{text}");
    // At the default level (warning), the browser's launch (info) is not sent.
    let r = navigate(&client, &site.url("index.html")).await?;
    assert_ne!(r.is_error, Some(true), "{}", texts(&r));
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!logs.all().iter().any(|(_, l, _)| l == "browser"), "{:?}", logs.all());

    // logging/setLevel info: the relaunch after a kill (notice) and the launch
    // (info) are told.
    client
        .set_level(rmcp::model::SetLevelRequestParams::new(rmcp::model::LoggingLevel::Info))
        .await?;
    assert!(kill_processes_with(&format!("--user-data-dir={profile_arg}")) > 0);
    let mut relaunched = false;
    for _ in 0..20 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let r = navigate(&client, &site.url("page2.html")).await?;
        if r.is_error != Some(true) {
            relaunched = true;
            break;
        }
    }
    assert!(relaunched);
    let (level, _, _) = logs.wait_for("browser", "the browser had gone").await?;
    assert_eq!(level, "notice");
    logs.wait_for("browser", "launched the browser").await?;

    // A plugin's log line, with the secret it read taken out; its answer too
    // (a tool hands a secret to the agent only by declaring `secret_result`).
    let r = client.tool("greedy_steal", json!({"key": "token"})).await?;
    assert_eq!(texts(&r), "•••", "a secret it read is masked in its answer");
    let (level, _, text) = logs.wait_for("plugin:greedy", "stole").await?;
    assert_eq!(level, "warning");
    assert_eq!(text, "stole [redacted] from token");

    // A guard's refusal: the tool and the code.
    let err = client.tool_error("oc_recording_start", json!({})).await?;
    assert_eq!(err["code"], "CAPABILITY_DISABLED");
    logs.wait_for("guard", "oc_recording_start was refused: CAPABILITY_DISABLED").await?;

    assert!(
        !logs.all().iter().any(|(_, _, t)| t.contains(SECRET)),
        "a secret reached the client: {:?}",
        logs.all()
    );
    client.cancel().await?;
    Ok(())
}

#[test]
fn doctor_passes_here_and_names_the_fix_of_what_fails() -> Result<()> {
    let data = TempDir::new("doctor");
    // Exit 0 when all is good, 1 when a check fails (as its help says).
    let run = |args: &[&str]| -> Result<(bool, String)> {
        let out = std::process::Command::new(ochre_bin())
            .arg("--data-dir")
            .arg(data.path())
            .arg("doctor")
            .args(args)
            .env_remove("RUST_LOG")
            .output()?;
        let code = out.status.code();
        assert!(matches!(code, Some(0 | 1)), "ochre doctor exited {code:?}");
        Ok((out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned()))
    };
    let (ok, text) = run(&[])?;
    assert!(ok, "{text}");
    for needle in [
        "ok    data dir",
        "ok    state              no damaged file",
        "ok    compile cache",
        "ok    plugin core",
        "ok    browser",
        "all good",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    assert!(text.contains("Chrome/") || text.contains("Chromium/"), "{text}");
    assert!(!text.contains("FAIL"), "{text}");

    let (ok, text) = run(&["--chrome-path", "/nonexistent/chromium"])?;
    assert!(!ok, "{text}");
    assert!(text.contains("FAIL  browser") && text.contains("/nonexistent/chromium"), "{text}");
    assert!(
        text.contains(
            "fix: install Chromium (Debian: `apt-get install -y chromium chromium-headless-shell`)"
        ),
        "{text}"
    );
    // Everything else still checked and fine.
    assert!(text.contains("ok    data dir"), "{text}");
    // A headed browser with no display says so, not "install Chromium".
    let out = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["doctor", "--headed"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("neither DISPLAY nor WAYLAND_DISPLAY is set"), "{text}");
    assert!(text.contains("xvfb-run") && !text.contains("install Chromium"), "{text}");
    // With a display but only the headless shell on PATH, --headed says the
    // shell shows no window (it is not taken, and not missing).
    let only_shell = TempDir::new("doctor-only-shell");
    std::os::unix::fs::symlink(
        headless_shell_bin()?,
        only_shell.path().join("chromium-headless-shell"),
    )?;
    let out = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["doctor", "--headed"])
        .env("DISPLAY", ":99")
        .env("PATH", only_shell.path())
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("only Chromium's headless shell is on PATH"), "{text}");
    assert!(text.contains("fix: install Chromium"), "{text}");
    // A server that cannot start is a failed check too, with its fix.
    let (ok, text) = run(&["--plugin-dir", "/nonexistent/plugins"])?;
    assert!(!ok && text.contains("FAIL  server") && text.contains("leave the flag out"), "{text}");

    // Secrets kept in clear are said, with the fix; sealed, they are not in the file.
    let cli = |args: &[&str], key: Option<&str>| {
        let mut c = std::process::Command::new(ochre_bin());
        c.arg("--data-dir").arg(data.path()).args(args).env_remove("OCHRE_LOGIN_KEY");
        if let Some(k) = key {
            c.env("OCHRE_LOGIN_KEY", k);
        }
        c.output()
    };
    ochre_tests::ok(cli(&["secret", "set", "admin_password", "--value", "s3cr3t-in-clear"], None)?);
    let (ok_, text) = run(&[])?;
    assert!(ok_, "a warning is no failure: {text}");
    assert!(text.contains("warn  secrets            1 stored unsealed"), "{text}");
    assert!(text.contains("`ochre secret seal`"), "{text}");
    let key = ochre_tests::ok(cli(&["login", "keygen"], None)?).trim().to_owned();
    ochre_tests::ok(cli(&["secret", "seal"], Some(&key))?);
    let file = std::fs::read_to_string(data.path().join("secrets.json"))?;
    assert!(!file.contains("s3cr3t-in-clear") && !file.contains("admin_password"), "{file}");
    assert_eq!(ochre_tests::ok(cli(&["secret", "list"], Some(&key))?).trim(), "ADMIN_PASSWORD");
    let said = refused(cli(&["secret", "list"], None)?);
    assert!(said.contains("sealed with the login key"), "{said}");
    let (_, text) = run(&[])?;
    assert!(text.contains("ok    secrets            sealed with the login key"), "{text}");
    Ok(())
}
