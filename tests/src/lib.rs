//! Support for ochre's end-to-end tests: the real `ochre` binary, real MCP clients
//! (rmcp over stdio and Streamable HTTP) and the real fixture plugins.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// The `ochre` binary built by this `cargo test` (or `$OCHRE_BIN`).
pub fn ochre_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("OCHRE_BIN") {
        return PathBuf::from(p);
    }
    // target/<profile>/deps/<test> -> target/<profile>/ochre
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = dir.join("ochre");
    assert!(
        bin.exists(),
        "{} not found: run the tests with `cargo test --workspace` (which builds it)",
        bin.display()
    );
    bin
}

/// A fixture plugin's `.wasm` (built by this crate's build script).
pub fn fixture_wasm(stem: &str) -> PathBuf {
    let file = format!("ochre_fixture_{stem}.wasm");
    let path = Path::new(env!("OCHRE_FIXTURE_WASM_DIR")).join(&file);
    assert!(path.exists(), "fixture plugin {} missing", path.display());
    path
}

/// A directory removed on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh, empty directory.
    pub fn new(label: &str) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "ochre-test-{label}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create temp dir");
        Self(path)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A plugin dir holding copies of the named fixture plugins.
pub fn plugin_dir_with(stems: &[&str]) -> TempDir {
    let dir = TempDir::new("plugins");
    for stem in stems {
        std::fs::copy(fixture_wasm(stem), dir.path().join(format!("{stem}.wasm")))
            .expect("copy fixture");
    }
    dir
}

/// A data dir named after `name`, and a plugin dir holding the fixtures
/// `stems` (kept alive with it), as a `--plugin-dir` argument.
pub fn data_and_plugins(name: &str, stems: &[&str]) -> (TempDir, TempDir, String) {
    let plugins = plugin_dir_with(stems);
    let dir = plugins.path().to_str().expect("utf8").to_owned();
    (TempDir::new(name), plugins, dir)
}

/// A connected MCP client.
pub type Client = RunningService<RoleClient, ()>;

/// Start `ochre` on stdio with `args` (plus `envs`) and connect rmcp's client.
pub async fn stdio_client(data_dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> Result<Client> {
    stdio_client_with((), data_dir, args, envs).await
}

/// [`stdio_client`] with a client handler (to receive notifications).
pub async fn stdio_client_with<H: rmcp::ClientHandler>(
    handler: H,
    data_dir: &Path,
    args: &[&str],
    envs: &[(&str, &str)],
) -> Result<RunningService<RoleClient, H>> {
    spawn_stdio(handler, data_dir, args, envs, None, false).await
}

/// [`stdio_client`] for a test that slows its pages' CPU `slowdown` times
/// (`network`'s `cpuSlowdown`; 1: not at all). Chromium slows a page by making
/// the main thread of its renderer busy-wait after each slice of run time
/// (three quarters of the time at 4x, whether the page has work or not): a
/// core's worth of CPU for as long as the page is slowed, which the tests
/// running beside it then lack. Slowed, this server and the Chromium it starts
/// run at a lower priority (nice 10), so that the busy wait gives way to the
/// other tests' work. (Chromium sets most of its threads' priorities itself
/// where it may; a renderer's main thread, where the page's scripts run and the
/// busy wait spins, keeps the one it started with.) The page, slowed 4x, is
/// slower still while the machine is busy: the same checks, on a slower page.
pub async fn stdio_client_slowed(data_dir: &Path, slowdown: f64) -> Result<Client> {
    spawn_stdio((), data_dir, &[], &[], None, slowdown > 1.0).await
}

/// Open `url` in `client`'s tab and slow that tab's CPU `slowdown` times
/// (`network`'s `cpuSlowdown`; it holds across the tab's later pages);
/// nothing at 1 (not at all).
pub async fn slow_the_tab(client: &Client, url: &str, slowdown: u32) -> Result<()> {
    if slowdown > 1 {
        navigate(client, url).await?;
        client.tool_json("network", serde_json::json!({"cpuSlowdown": slowdown})).await?;
    }
    Ok(())
}

/// The lines a log file (the server's stderr, see [`stdio_client_logged`])
/// gained since byte `from`, and its new end.
pub fn log_since(log: &std::path::Path, from: usize) -> Result<(usize, Vec<String>)> {
    let all = std::fs::read(log)?;
    let tail = String::from_utf8_lossy(&all[from.min(all.len())..]).into_owned();
    Ok((all.len(), tail.lines().map(str::to_owned).collect()))
}

/// Like [`stdio_client_with`], the server's stderr (at `RUST_LOG=debug`, or the
/// `RUST_LOG` of `envs`) written to `stderr_file`, for a test that reads what
/// ochre logs.
pub async fn stdio_client_logged<H: rmcp::ClientHandler>(
    handler: H,
    data_dir: &Path,
    args: &[&str],
    envs: &[(&str, &str)],
    stderr_file: &Path,
) -> Result<RunningService<RoleClient, H>> {
    spawn_stdio(handler, data_dir, args, envs, Some(stderr_file), false).await
}

async fn spawn_stdio<H: rmcp::ClientHandler>(
    handler: H,
    data_dir: &Path,
    args: &[&str],
    envs: &[(&str, &str)],
    stderr_file: Option<&Path>,
    lower_priority: bool,
) -> Result<RunningService<RoleClient, H>> {
    let mut cmd = if lower_priority {
        // (coreutils' nice: it execs ochre, one process as before.)
        let mut nice = tokio::process::Command::new("nice");
        nice.args(["-n", "10"]).arg(ochre_bin());
        nice
    } else {
        tokio::process::Command::new(ochre_bin())
    };
    cmd.arg("--data-dir").arg(data_dir).args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    // OCHRE_TEST_STDERR=1 shows the servers' logs (with RUST_LOG from it).
    let show = std::env::var_os("OCHRE_TEST_STDERR").is_some();
    if !show {
        cmd.env_remove("RUST_LOG");
    }
    let stderr = match stderr_file {
        Some(f) => {
            // `RUST_LOG` from `envs` (a test's own filter), else debug.
            let filter = envs.iter().find(|(k, _)| *k == "RUST_LOG").map_or("debug", |(_, v)| *v);
            cmd.env("RUST_LOG", filter);
            Stdio::from(std::fs::File::create(f)?)
        }
        // Under cargo-nextest each test is a process whose output is kept and
        // shown when it fails: the server's warnings and errors go there too.
        None if show || own_process() => Stdio::inherit(),
        None => Stdio::null(),
    };
    let (transport, _stderr) =
        TokioChildProcess::builder(cmd).stderr(stderr).spawn().context("spawn ochre")?;
    let client = handler.serve(transport).await.context("MCP handshake over stdio")?;
    Ok(client)
}

/// [`stdio_client_logged`], and every byte of the MCP messages both ways
/// (what the client sends and receives) appended to `wire`.
pub async fn stdio_client_wiretapped<H: rmcp::ClientHandler>(
    handler: H,
    data_dir: &Path,
    stderr_file: &Path,
    wire: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
) -> Result<RunningService<RoleClient, H>> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut child = tokio::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data_dir)
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(stderr_file)?))
        .kill_on_drop(true)
        .spawn()
        .context("spawn ochre")?;
    let mut to_server = child.stdin.take().context("stdin")?;
    let mut from_server = child.stdout.take().context("stdout")?;
    let (client_read, mut tap_in) = tokio::io::duplex(1 << 16);
    let (mut tap_out, client_write) = tokio::io::duplex(1 << 16);
    let heard = wire.clone();
    tokio::spawn(async move {
        let _child = child;
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = from_server.read(&mut buf).await {
            if n == 0 || tap_in.write_all(&buf[..n]).await.is_err() {
                break;
            }
            heard.lock().expect("wire").extend_from_slice(&buf[..n]);
        }
    });
    tokio::spawn(async move {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = tap_out.read(&mut buf).await {
            if n == 0 || to_server.write_all(&buf[..n]).await.is_err() {
                break;
            }
            wire.lock().expect("wire").extend_from_slice(&buf[..n]);
        }
    });
    let client = handler.serve((client_read, client_write)).await.context("MCP handshake")?;
    Ok(client)
}

/// A client's info that offers elicitation by form, and with `url` by URL
/// (ochre's own pages) too.
pub fn eliciting_client(name: &str, url: bool) -> rmcp::model::ClientConfig {
    let mut caps = rmcp::model::ClientCapabilities::default();
    let mut e = rmcp::model::ElicitationCapability::new().with_form(Default::default());
    if url {
        e = e.with_url(Default::default());
    }
    caps.elicitation = Some(e);
    rmcp::model::ClientConfig::new(caps, rmcp::model::Implementation::new(name, "0"))
}

/// A person answering ochre's secret page at `url` in a real browser
/// (Playwright from PyPI, `fixtures/people/secret_person.py`): they type
/// `secret` into each field (`username` into one named so) and send it. The
/// process, not waited for.
pub fn person_answers(
    url: &str,
    secret: &str,
    username: Option<&str>,
) -> Result<std::process::Child> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/people/secret_person.py");
    let mut cmd = std::process::Command::new(python_venv("playwright")?);
    cmd.arg(script)
        .arg(url)
        .env("SECRET", secret)
        .env("PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH", chromium_bin()?);
    if let Some(u) = username {
        cmd.env("USERNAME", u);
    }
    cmd.spawn().context("start the person's browser")
}

/// Whether this test runs in a process of its own (cargo-nextest), so that what
/// a child process writes to the inherited stderr is this test's output.
fn own_process() -> bool {
    std::env::var("NEXTEST_EXECUTION_MODE").is_ok_and(|m| m == "process-per-test")
}

/// An MCP `initialize` request as a raw JSON-RPC body.
pub fn initialize_body() -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}
        }
    })
}

/// `initialize` over raw HTTP with extra `headers`: the response (its body unread).
pub async fn initialize_raw(port: u16, headers: &[(&str, &str)]) -> Result<reqwest::Response> {
    let mut req = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(initialize_body().to_string());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    Ok(req.send().await?)
}

/// A running `ochre --http` process, killed on drop.
#[derive(Debug)]
pub struct HttpServer {
    child: tokio::process::Child,
    /// The bound port.
    pub port: u16,
    /// The last lines the server wrote to stderr, printed when it is dropped.
    tail: LogTail,
}

/// The last lines a process a test started wrote: printed to the test's stderr
/// when the test lets go of the process, so that a failing test's output (which
/// the test runner shows; a passing test's it hides) ends with what the process
/// said last.
#[derive(Debug, Clone, Default)]
pub struct LogTail(std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>);

impl LogTail {
    const LINES: usize = 60;

    /// Keep `line` (the oldest kept line goes past [`Self::LINES`]).
    pub fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == Self::LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// Print the kept lines to stderr under a heading naming `what`.
    pub fn print(&self, what: &str) {
        let lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !lines.is_empty() {
            eprintln!("--- the last {} lines of {what} ---", lines.len());
            for line in lines.iter() {
                eprintln!("{line}");
            }
        }
    }

    /// Print the last lines of the file `log` under a heading naming `what`.
    pub fn print_file(log: &Path, what: &str) {
        let tail = LogTail::default();
        for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
            tail.push(line.to_owned());
        }
        tail.print(what);
    }
}

impl HttpServer {
    /// Start `ochre --http 0 ...` and wait until it says where it listens.
    pub async fn start(data_dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> Result<Self> {
        use tokio::io::AsyncBufReadExt;
        let mut cmd = tokio::process::Command::new(ochre_bin());
        cmd.arg("--data-dir")
            .arg(data_dir)
            .args(["--http", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if std::env::var_os("OCHRE_TEST_STDERR").is_none() {
            cmd.env_remove("RUST_LOG");
        }
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().context("spawn ochre --http")?;
        let stderr = child.stderr.take().context("stderr")?;
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        let tail = LogTail::default();
        let port = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await? {
                tail.push(line.clone());
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.trim_end_matches("/mcp");
                    let port = addr.rsplit(':').next().unwrap_or("").parse::<u16>()?;
                    return anyhow::Ok(port);
                }
            }
            bail!("ochre exited before listening")
        })
        .await
        .context("waiting for ochre to listen")??;
        // Keep draining stderr so the server never blocks on a full pipe (shown
        // with OCHRE_TEST_STDERR=1).
        let show = std::env::var_os("OCHRE_TEST_STDERR").is_some();
        let kept = tail.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                if show {
                    eprintln!("[ochre] {line}");
                }
                kept.push(line);
            }
        });
        Ok(Self { child, port, tail })
    }

    /// The server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The command line of the server's managed Chromium (its browser
    /// process, found among the server's descendants in `/proc`).
    pub fn browser_args(&self) -> Result<Vec<String>> {
        let server = self.pid().context("the server has exited")?;
        let parent_of = |pid: &str| -> Option<u32> {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // "pid (comm) state ppid ...": the comm may hold spaces.
            stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
        };
        let mut under = vec![server];
        for _ in 0..4 {
            for e in std::fs::read_dir("/proc")?.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Ok(pid) = name.parse::<u32>() else { continue };
                if under.contains(&pid) || !parent_of(&name).is_some_and(|p| under.contains(&p)) {
                    continue;
                }
                under.push(pid);
                let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
                let args: Vec<String> = raw
                    .split(|b| *b == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                if args.iter().any(|a| a.starts_with("--remote-debugging-port"))
                    && !args.iter().any(|a| a.starts_with("--type="))
                {
                    return Ok(args);
                }
            }
        }
        anyhow::bail!("no browser process under the server {server}")
    }

    /// The pages of the server's managed Chromium, as its `/json/list` tells
    /// (found through the temporary profile's `DevToolsActivePort`).
    pub async fn browser_pages(&self) -> Result<Vec<Value>> {
        let pid = self.pid().context("the server has exited")?;
        let dir = std::env::temp_dir();
        let mut profiles: Vec<PathBuf> = std::fs::read_dir(&dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("ochre-profile-{pid}-")))
            })
            .collect();
        profiles.sort();
        let profile = profiles.pop().context("no temporary profile of the server")?;
        let port = std::fs::read_to_string(profile.join("DevToolsActivePort"))?;
        let port = port.lines().next().unwrap_or_default().trim().to_owned();
        let list: Vec<Value> =
            reqwest::get(format!("http://127.0.0.1:{port}/json/list")).await?.json().await?;
        Ok(list.into_iter().filter(|t| t["type"] == "page").collect())
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Connect rmcp's Streamable HTTP client.
    pub async fn client(&self) -> Result<Client> {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(self.url());
        ().serve(transport).await.context("MCP handshake over HTTP")
    }

    /// A client whose `initialize` carries `meta` as its `_meta`, and whose
    /// requests carry `headers`.
    pub async fn client_with(
        &self,
        meta: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Result<RunningService<RoleClient, Initialize>> {
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url());
        for (k, v) in headers {
            config.custom_headers.insert(
                reqwest::header::HeaderName::from_bytes(k.as_bytes())?,
                reqwest::header::HeaderValue::from_str(v)?,
            );
        }
        let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
        let mut info = rmcp::model::ClientConfig::default();
        if let Some(Value::Object(m)) = meta {
            info.meta = Some(rmcp::model::RequestMetaObject(rmcp::model::MetaObject(m)));
        }
        Initialize(info).serve(transport).await.context("MCP handshake over HTTP")
    }
}

/// A client that says `initialize` as given.
#[derive(Debug, Clone)]
pub struct Initialize(pub rmcp::model::ClientConfig);

impl rmcp::ClientHandler for Initialize {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        self.0.clone()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        self.tail.print(&format!("ochre --http on port {}'s stderr", self.port));
    }
}

/// Tool calls as methods of a client, so that a call reads as one line:
/// `client.tool_json("find", json!({"query": "Save"})).await?`.
pub trait ToolCalls {
    /// Call a tool with JSON arguments (an object, or null for none).
    fn tool(&self, name: &str, args: Value) -> impl Future<Output = Result<CallToolResult>> + Send;
    /// Call a tool that must succeed: its structured result.
    fn tool_json(&self, name: &str, args: Value) -> impl Future<Output = Result<Value>> + Send;
    /// Call a tool that must fail: its `error` object.
    fn tool_error(&self, name: &str, args: Value) -> impl Future<Output = Result<Value>> + Send;
    /// Call a tool that must succeed: its first text block.
    fn tool_text(&self, name: &str, args: Value) -> impl Future<Output = Result<String>> + Send;
}

impl<H: rmcp::ClientHandler> ToolCalls for RunningService<RoleClient, H> {
    async fn tool(&self, name: &str, args: Value) -> Result<CallToolResult> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        Ok(self.call_tool(params).await?)
    }

    async fn tool_json(&self, name: &str, args: Value) -> Result<Value> {
        Ok(structured(&self.tool(name, args).await?))
    }

    async fn tool_error(&self, name: &str, args: Value) -> Result<Value> {
        Ok(error_of(&self.tool(name, args).await?))
    }

    async fn tool_text(&self, name: &str, args: Value) -> Result<String> {
        let result = self.tool(name, args).await?;
        assert_ne!(result.is_error, Some(true), "{name} failed: {result:?}");
        Ok(result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default())
    }
}

/// The JSON of a result's first text content.
pub fn result_json(result: &CallToolResult) -> Value {
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// The text blocks of a result, joined with newlines.
pub fn texts(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The ref of the first element with this role and name in a snapshot, if there
/// is one (a line of its own, or a cell of a table's `row` line).
pub fn find_ref(snapshot: &str, role: &str, name: &str) -> Option<String> {
    refs_of(snapshot, role, name).into_iter().next()
}

/// The refs of every element with this role and name in a snapshot, in order.
pub fn refs_of(snapshot: &str, role: &str, name: &str) -> Vec<String> {
    let Ok(quoted) = serde_json::to_string(name) else {
        return Vec::new();
    };
    let needle = format!("{role} {quoted} ax_");
    let mut out = Vec::new();
    for line in snapshot.lines() {
        let mut rest = line;
        while let Some(i) = rest.find(&needle) {
            // A whole word: at the line's start, or after a space.
            let starts = i == 0 || rest[..i].ends_with(' ');
            let after = &rest[i + needle.len() - 3..];
            if starts && let Some(r) = after.split_whitespace().next() {
                out.push(r.to_owned());
            }
            rest = &rest[i + needle.len()..];
        }
    }
    out
}

/// The ref (`ax_<n>`) on a snapshot or `find` line.
pub fn ref_in(line: &str) -> &str {
    line.split_whitespace()
        .find(|w| w.starts_with("ax_"))
        .unwrap_or_else(|| panic!("no ref on the line {line:?}"))
}

/// The ref on the snapshot line with this role and name (panics if none).
pub fn ref_of(snapshot: &str, role: &str, name: &str) -> String {
    find_ref(snapshot, role, name)
        .unwrap_or_else(|| panic!("no ref of {role} {name:?} in:\n{snapshot}"))
}

/// The structured content of a successful result (panics if the call failed).
pub fn structured(result: &CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "the call failed: {result:?}");
    result.structured_content.clone().expect("structured content")
}

/// The error object of a failed result (panics if the call succeeded).
pub fn error_of(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(true), "expected an error: {result:?}");
    result_json(result)["error"].clone()
}

/// One `notifications/progress`: progress, total, message.
pub type Progress = (f64, Option<f64>, Option<String>);

/// A client handler that collects `notifications/progress`.
#[derive(Clone, Default)]
pub struct ProgressCollector(std::sync::Arc<std::sync::Mutex<Vec<Progress>>>);

impl ProgressCollector {
    /// What arrived so far.
    pub fn seen(&self) -> Vec<Progress> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl rmcp::ClientHandler for ProgressCollector {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push((
            params.progress,
            params.total,
            params.message,
        ));
    }
}

/// What most browser tests start with: the fixture sites, a data dir named
/// after the test, and a stdio client of a server started with `args`.
pub async fn site_and_client(name: &str, args: &[&str]) -> Result<(SiteServer, TempDir, Client)> {
    let site = SiteServer::start().await?;
    let data = TempDir::new(name);
    let client = stdio_client(data.path(), args, &[]).await?;
    Ok((site, data, client))
}

/// `read_page` with no arguments, which must succeed: the snapshot's text.
pub async fn snapshot<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
) -> Result<String> {
    let r = client.tool("read_page", serde_json::json!({})).await?;
    anyhow::ensure!(r.is_error != Some(true), "read_page: {}", texts(&r));
    Ok(texts(&r))
}

/// [`site_and_client`], the client navigated to the site's `page`.
pub async fn site_at(
    name: &str,
    args: &[&str],
    page: &str,
) -> Result<(SiteServer, TempDir, Client)> {
    let (site, data, client) = site_and_client(name, args).await?;
    navigate(&client, &site.url(page)).await?;
    Ok((site, data, client))
}

/// [`site_at`], and the page's first snapshot.
pub async fn open_page(
    name: &str,
    args: &[&str],
    page: &str,
) -> Result<(SiteServer, TempDir, Client, String)> {
    let (site, data, client) = site_at(name, args, page).await?;
    let snap = snapshot(&client).await?;
    Ok((site, data, client, snap))
}

/// `navigate` to `url` (the result, whether it succeeded or not).
pub async fn navigate<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
    url: &str,
) -> Result<CallToolResult> {
    client.tool("navigate", serde_json::json!({ "url": url })).await
}

/// Every page of an output handle, fetched `limit` items (or bytes, with
/// `"format": "bytes"` in `extra`) at a time; checks on each page that the
/// offsets, counts and `eof` agree.
pub async fn fetch_pages(
    client: &Client,
    handle: &str,
    limit: u64,
    extra: Value,
) -> Result<Vec<Value>> {
    let mut pages = Vec::new();
    let mut offset = 0u64;
    loop {
        let mut args =
            serde_json::json!({"output_handle": handle, "offset": offset, "limit": limit});
        if let (Some(args), Value::Object(extra)) = (args.as_object_mut(), extra.clone()) {
            args.extend(extra);
        }
        let page = client.tool_json("oc_output_fetch", args).await?;
        let returned = page["returned"].as_u64().expect("returned");
        assert!(returned <= limit, "{page}");
        assert!(page["total"].as_u64().expect("total") >= returned, "{page}");
        let next = page["next_offset"].as_u64();
        assert_eq!(page["eof"], next.is_none(), "{page}");
        pages.push(page);
        match next {
            Some(next) => {
                assert_eq!(next, offset + returned);
                offset = next;
            }
            None => return Ok(pages),
        }
    }
}

/// A text handle's whole content, fetched `limit` bytes at a time.
pub async fn fetch_all_bytes(client: &Client, handle: &str, limit: u64) -> Result<String> {
    let pages = fetch_pages(client, handle, limit, serde_json::json!({"format": "bytes"})).await?;
    Ok(pages.iter().map(|p| p["content"].as_str().expect("content")).collect())
}

/// Ask `check` every 100 ms until it answers `true`, for at most `limit`; the
/// error names `what` was waited for.
pub async fn eventually<F, Fut>(what: &str, limit: Duration, mut check: F) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool>>,
{
    let until = Instant::now() + limit;
    loop {
        if check().await? {
            return Ok(());
        }
        if Instant::now() >= until {
            bail!("waited {limit:?} for {what}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `ochre --data-dir DATA ARGS`, run to its end.
pub fn ochre_cli(data: &Path, args: &[&str]) -> Result<std::process::Output> {
    Ok(std::process::Command::new(ochre_bin()).arg("--data-dir").arg(data).args(args).output()?)
}

/// The stdout of a command that must have succeeded.
pub fn ok(out: std::process::Output) -> String {
    assert!(out.status.success(), "failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The stderr of a command that must have failed.
pub fn refused(out: std::process::Output) -> String {
    assert!(!out.status.success(), "accepted: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `ochre --data-dir DATA plugins list --json ARGS` (with `envs`), which must succeed.
pub fn plugins_list(data: &Path, args: &[&str], envs: &[(&str, &str)]) -> Result<Vec<Value>> {
    let mut cmd = std::process::Command::new(ochre_bin());
    cmd.arg("--data-dir").arg(data).args(["plugins", "list", "--json"]).args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output()?;
    anyhow::ensure!(out.status.success(), "plugins list: {}", String::from_utf8_lossy(&out.stderr));
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// A new stdio server on `data` serves the installed `hello` plugin: its first
/// greeting there, and the plugin `loaded` in `plugins list` with a source
/// saying `source_has`.
pub async fn serves_installed_hello(data: &Path, source_has: &str) -> Result<()> {
    let client = stdio_client(data, &[], &[]).await?;
    let res = client.tool("hello_greet", serde_json::json!({"name": "Ada"})).await?;
    anyhow::ensure!(result_json(&res) == "Hello, Ada! (greeting #1)", "{res:?}");
    client.cancel().await?;
    let list = plugins_list(data, &[], &[])?;
    let hello = listed(&list, "hello");
    anyhow::ensure!(hello["status"] == "loaded", "{hello}");
    let source = hello["source"].as_str().unwrap_or("");
    anyhow::ensure!(source.contains(source_has), "{hello}");
    Ok(())
}

/// The plugin named `name` in a `plugins list --json` (panics if it is not there).
pub fn listed<'a>(list: &'a [Value], name: &str) -> &'a Value {
    list.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{name} not listed: {list:?}"))
}

/// Names of the tools a client sees.
pub async fn tool_names(client: &Client) -> Result<Vec<String>> {
    Ok(client.list_all_tools().await?.into_iter().map(|t| t.name.to_string()).collect())
}

/// Every line of every file under `dir` (recursively).
pub fn read_all_text(dir: &Path) -> String {
    let mut out = String::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in rd.flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.push_str(&read_all_text(&p));
        } else if let Ok(t) = std::fs::read_to_string(&p) {
            out.push_str(&t);
        }
    }
    out
}

/// Lines of the JSONL files in `dir` (recursively), parsed.
pub fn read_jsonl_dir(dir: &Path) -> Vec<Value> {
    read_all_text(dir).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// An RFC 6238 code, computed here independently of the plugin (HMAC-SHA1).
pub fn reference_totp(secret_b32: &str, unix_secs: u64, digits: u32, period: u64) -> String {
    use hmac::{Hmac, KeyInit, Mac};
    let key = data_encoding::BASE32_NOPAD
        .decode(secret_b32.trim_end_matches('=').as_bytes())
        .expect("base32");
    let mut mac = <Hmac<sha1::Sha1> as KeyInit>::new_from_slice(&key).expect("key");
    mac.update(&(unix_secs / period).to_be_bytes());
    let d = mac.finalize().into_bytes();
    let o = (d[d.len() - 1] & 0xf) as usize;
    let v = (u32::from(d[o] & 0x7f) << 24)
        | (u32::from(d[o + 1]) << 16)
        | (u32::from(d[o + 2]) << 8)
        | u32::from(d[o + 3]);
    format!("{:0w$}", v % 10u32.pow(digits), w = digits as usize)
}

/// The Rust standard library's HTML docs on this machine: the toolchain's
/// (`rustup component add rust-docs`) or Debian's `rust-doc` package
/// (`.ci/setup` installs it when neither is there).
pub fn rust_docs_dir() -> Option<PathBuf> {
    let sysroot = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let candidates = sysroot
        .map(|s| PathBuf::from(s).join("share/doc/rust/html"))
        .into_iter()
        .chain([PathBuf::from("/usr/share/doc/rust-doc/html")]);
    candidates.into_iter().find(|d| d.join("std/vec/struct.Vec.html").is_file())
}

/// The cargo target dir of this test run (`target/<profile>/deps/<test>` → `target`).
pub fn target_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    Ok(exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .context("target dir")?
        .to_path_buf())
}

/// The pinned third-party packages of the entry `name` in
/// `tests/third-party/pins.toml` (the one list the tests and `.ci/run` read).
pub fn pins(name: &str) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(third_party_dir().join("pins.toml"))?;
    let pins: toml::Table = toml::from_str(&text).context("tests/third-party/pins.toml")?;
    ["npm", "pypi"]
        .iter()
        .find_map(|kind| pins.get(*kind)?.get(name)?.get("packages")?.as_array())
        .with_context(|| format!("no entry {name} in tests/third-party/pins.toml"))?
        .iter()
        .map(|p| p.as_str().map(str::to_owned).context("a pin is not a string"))
        .collect()
}

/// The pinned version of `package` in the entry `name` (`pkg@1.2.3`, `pkg==1.2.3`).
pub fn pinned_version(name: &str, package: &str) -> Result<String> {
    pins(name)?
        .iter()
        .find_map(|pin| {
            let v = pin.strip_prefix(package)?;
            v.strip_prefix('@').or_else(|| v.strip_prefix("==")).map(str::to_owned)
        })
        .with_context(|| format!("{package} is not pinned in entry {name}"))
}

fn third_party_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("third-party")
}

/// Installs the entry `name` of `tests/third-party/pins.toml` if it is missing or
/// broken (`tests/third-party/install.py`: once per machine, into a cache outside
/// the clone, shared with other test processes through a lock) and answers its path.
fn third_party(name: &str) -> Result<PathBuf> {
    let out = std::process::Command::new("python3")
        .arg(third_party_dir().join("install.py"))
        .args(["ensure", name])
        .stderr(std::process::Stdio::piped())
        .output()
        .context("run python3 tests/third-party/install.py")?;
    anyhow::ensure!(
        out.status.success(),
        "installing the test dependency {name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = String::from_utf8(out.stdout)?.trim().to_owned();
    anyhow::ensure!(!path.is_empty(), "install.py named no path for {name}");
    Ok(PathBuf::from(path))
}

/// The `node_modules` dir of the npm entry `name` of the pins (installed on
/// first use; never copied into the repository).
pub fn npm_modules(name: &str) -> Result<PathBuf> {
    third_party(name)
}

/// The `node_modules` dir with the UI libraries the widget tests drive.
pub fn widget_modules() -> Result<PathBuf> {
    npm_modules("widgets")
}

/// The names of the HTML pages in a dir of `fixtures/sites` (`""` for its
/// top), sorted.
pub fn html_pages(dir: &str) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(sites_dir().join(dir))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".html"))
        .collect();
    names.sort();
    Ok(names)
}

/// The MUI fixture app, bundled now with esbuild from the `mui` entry of the
/// pins (installed on first use): a dir with `index.html` and `bundle.js` to serve.
pub fn mui_site() -> Result<PathBuf> {
    bundled_site("mui", "mui")
}

/// The React library pages of the fidelity suite (`fixtures/sites/lib-react`),
/// bundled now from the `fidelity-react` entry of the pins.
pub fn react_lib_site() -> Result<PathBuf> {
    bundled_site("fidelity-react", "lib-react")
}

/// The library pages of the fidelity suite that are bundled at test time,
/// each (its dir under `fixtures/sites`, the npm entry of the pins that
/// bundles it): React libraries, web components, Vue component kits (Vuetify
/// apart: its style sheet resets the whole page), Angular Material, Svelte.
pub const BUNDLED_LIB_DIRS: &[(&str, &str)] = &[
    ("lib-react", "fidelity-react"),
    ("lib-wc", "fidelity-wc"),
    ("lib-vue", "fidelity-vue"),
    ("lib-vuetify", "fidelity-vue"),
    ("lib-angular", "fidelity-angular"),
    ("lib-svelte", "fidelity-svelte"),
];

/// Each of [`BUNDLED_LIB_DIRS`], bundled now: (its dir name, the dir to serve).
pub fn bundled_lib_sites() -> Result<Vec<(&'static str, PathBuf)>> {
    BUNDLED_LIB_DIRS.iter().map(|(dir, entry)| Ok((*dir, bundled_site(entry, dir)?))).collect()
}

/// A fixture dir of `fixtures/sites` with an `app.jsx` (or `app.js`), bundled
/// now with the esbuild of the npm entry `modules` (installed on first use,
/// with what the app imports): a dir with the dir's HTML pages, `bundle.js`
/// and, if the app imports style sheets, `bundle.css`, to serve. A dir with a
/// `build.mjs` is bundled by it instead (`node build.mjs ENTRY OUTFILE
/// NODE_MODULES`: esbuild's API, for what needs a plugin, as Svelte does).
/// Nothing of the libraries is in the repository.
///
/// Built once per content: a digest of the dir's files (and of how they are
/// built) names the output, which every test process then shares; a build
/// lands whole (made in a dir of its own, then renamed into place).
pub fn bundled_site(modules: &str, dir: &str) -> Result<PathBuf> {
    use sha2::Digest;
    let modules = npm_modules(modules)?;
    let npm = modules.parent().context("npm dir")?;
    let src = sites_dir().join(dir);
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&src)?.map(|e| e.map(|e| e.path())).collect::<std::io::Result<_>>()?;
    files.sort();
    // (Bump the recipe when the build below changes.)
    let mut digest = sha2::Sha256::new();
    digest.update(b"bundled_site 1");
    for f in files.iter().filter(|f| f.is_file()) {
        let bytes = std::fs::read(f)?;
        digest.update(f.file_name().context("name")?.as_encoded_bytes());
        digest.update((bytes.len() as u64).to_le_bytes());
        digest.update(&bytes);
    }
    let key: String = digest.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect();
    let done = npm.join(format!("site-{dir}-{key}"));
    if done.join("bundle.js").is_file() {
        return Ok(done);
    }
    // The per-process dirs of earlier versions of this function, never reused.
    for old in std::fs::read_dir(npm)?.flatten() {
        let name = old.file_name().to_string_lossy().into_owned();
        let legacy = name
            .strip_prefix("site-")
            .and_then(|r| r.split_once('-'))
            .is_some_and(|(pid, rest)| rest == dir && pid.bytes().all(|b| b.is_ascii_digit()));
        if legacy {
            let _ = std::fs::remove_dir_all(old.path());
        }
    }
    let pid = std::process::id();
    let out = npm.join(format!("site-{dir}-{key}.{pid}.tmp"));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out)?;
    let app = ["app.jsx", "app.js"]
        .into_iter()
        .find(|a| src.join(a).is_file())
        .with_context(|| format!("no app.jsx or app.js in {}", src.display()))?;
    for page in std::fs::read_dir(&src)? {
        let page = page?.path();
        if page.extension().is_some_and(|e| e == "html") {
            std::fs::copy(&page, out.join(page.file_name().context("name")?))?;
        }
    }
    let bundle = out.join("bundle.js");
    // What runs sits beside node_modules, so that its imports resolve there.
    let (ran, copy) = if src.join("build.mjs").is_file() {
        let script = npm.join(format!("build-{pid}-{dir}.mjs"));
        std::fs::copy(src.join("build.mjs"), &script)?;
        let mut node = std::process::Command::new("node");
        node.arg(&script).arg(src.join(app)).arg(&bundle).arg(&modules);
        (node.output().context("run node build.mjs"), script)
    } else {
        let entry = npm.join(format!("app-{pid}-{dir}-{app}"));
        std::fs::copy(src.join(app), &entry)?;
        let mut esbuild = std::process::Command::new(modules.join(".bin").join("esbuild"));
        esbuild
            .arg(&entry)
            .args(["--bundle", "--minify", "--jsx=automatic", "--log-level=warning"])
            .arg("--define:process.env.NODE_ENV=\"production\"")
            // Vuetify reads a Vite variable of its own; a page has no `process`.
            .arg("--define:process.env.VITE_LOGGER_ENABLED=undefined")
            .arg(format!("--outfile={}", bundle.display()));
        (esbuild.output().context("run esbuild"), entry)
    };
    let _ = std::fs::remove_file(&copy);
    let built = ran?;
    if !built.status.success() {
        let _ = std::fs::remove_dir_all(&out);
        bail!("bundling {dir} failed: {}", String::from_utf8_lossy(&built.stderr));
    }
    // Another process may have landed the same build first: either is whole.
    if let Err(e) = std::fs::rename(&out, &done) {
        let _ = std::fs::remove_dir_all(&out);
        anyhow::ensure!(
            done.join("bundle.js").is_file(),
            "cannot put {dir}'s bundle in place: {e}"
        );
    }
    Ok(done)
}

/// The tab `id` (`"t3"`, as `TabInfo` gives it) for the browser's calls.
pub fn tab_id(id: &str) -> Result<Option<ochre_host::browser::TabId>> {
    Ok(Some(ochre_host::browser::TabId::named(Some(id))?.context("a tab id")?))
}

/// The Chromium on `PATH` (Debian's `chromium`, which `.ci/setup` installs).
pub fn chromium_bin() -> Result<PathBuf> {
    on_path(&["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"])
        .context("no Chromium on PATH: `bash .ci/setup` installs it")
}

/// Chromium's headless shell on `PATH` (Debian's `chromium-headless-shell`,
/// which `.ci/setup` installs with the test stack).
pub fn headless_shell_bin() -> Result<PathBuf> {
    on_path(&["chromium-headless-shell", "chrome-headless-shell"])
        .context("no chromium-headless-shell on PATH: `bash .ci/setup` installs it")
}

/// The first of `names` found in a directory of `PATH`.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    ochre_host::browser::find_on_path(names.iter().copied())
}

/// A Python virtualenv with the admin app's packages: its `python`.
pub fn admin_python() -> Result<PathBuf> {
    python_venv("admin")
}

/// componentize-py (PyPI), which builds Python plugins: the venv's `bin` dir.
pub fn componentize_py_bin() -> Result<PathBuf> {
    let python = python_venv("componentize-py")?;
    Ok(python.parent().expect("bin").to_path_buf())
}

/// What PyAV makes of a video: every frame decoded (one it cannot decode
/// fails the script), their count, the container's duration (ms), and at
/// each `checks` moment (`at`: seconds since the Unix epoch) the colour of
/// the bottom-right corner of the frame shown then (the last whose time is
/// at or before it) and how many of its pixels (one in 4) are the pointer's
/// magenta, every frame's time (ms) and the chapters (`start_ms`, `at`
/// in seconds since the epoch, `title`), as JSON.
pub fn read_video(path: &str, started_at: &str, checks: &Value) -> Result<Value> {
    let python = python_venv("video")?;
    let script = r#"
import json, sys
from datetime import datetime
import av
path, started, checks = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
t0 = datetime.fromisoformat(started.replace('Z', '+00:00')).timestamp()
frames = []
with av.open(path) as c:
    s = c.streams.video[0]
    duration = c.duration / 1000 if c.duration is not None else None
    codec = s.codec_context.name
    for f in c.decode(s):
        plane = f.reformat(format='rgb24').planes[0]
        w, h = f.width, f.height
        i = (h - 8) * plane.line_size + (w - 8) * 3
        raw = bytes(plane)
        # Pixels of the pointer's magenta (ochre's own mouse input drawn).
        mag = sum(1 for y in range(0, h, 2) for x in range(0, w, 2)
                  if raw[y * plane.line_size + x * 3] > 200 and raw[y * plane.line_size + x * 3 + 1] < 80
                  and raw[y * plane.line_size + x * 3 + 2] > 200)
        frames.append((f.time * 1000, list(raw[i:i + 3]), w, h, mag))
    chapters = [{'start_ms': float(k['start'] * k['time_base']) * 1000,
                 'at': t0 + float(k['start'] * k['time_base']),
                 'title': k['metadata'].get('title')} for k in c.chapters()]
out = []
for ch in checks:
    at = (ch['at'] - t0) * 1000
    shown = [f for f in frames if f[0] <= at]
    out.append({'what': ch['what'], 'at_ms': at, 'rgb': shown[-1][1] if shown else None,
                'pointer': shown[-1][4] if shown else None})
print(json.dumps({'frames': len(frames), 'duration_ms': duration, 'codec': codec, 'chapters': chapters,
                  'times': [f[0] for f in frames],
                  'first': frames[0][1:4] if frames else None,
                  'last_ms': frames[-1][0] if frames else None, 'checks': out}))
"#;
    let out = std::process::Command::new(python)
        .args(["-c", script, path, started_at, &checks.to_string()])
        .output()?;
    anyhow::ensure!(out.status.success(), "PyAV: {}", String::from_utf8_lossy(&out.stderr));
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Now, in seconds since the Unix epoch.
pub fn now_unix() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The virtualenv of the PyPI entry `name` of the pins (installed on first use):
/// its `python`.
pub fn python_venv(name: &str) -> Result<PathBuf> {
    third_party(name)
}

/// An OTLP receiver from PyPI (oteltest's HTTP sink: OTLP over HTTP, parsed
/// with OpenTelemetry's own protobuf schema) on a free loopback port, each
/// export it takes kept as one JSON line (protobuf's JSON form: ids in base64,
/// 64-bit numbers as strings, plus `headers`); killed on drop.
pub struct OtlpSink {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    file: PathBuf,
    _app: PyApp,
}

impl OtlpSink {
    /// Start it, writing to a file in `dir`.
    pub async fn start(dir: &Path) -> Result<Self> {
        let python = python_venv("otel")?;
        let port = free_port()?;
        let file = dir.join(format!("otlp-{port}.jsonl"));
        let script = r#"
import json, logging, sys
from google.protobuf.json_format import MessageToDict
from oteltest.sink import HttpSink
port, out = int(sys.argv[1]), sys.argv[2]
class Keep:
    def handle_trace(self, request, headers):
        d = MessageToDict(request)
        d['headers'] = {k.lower(): v for k, v in headers.items()}
        with open(out, 'a') as f:
            f.write(json.dumps(d) + '\n')
    def handle_metrics(self, request, headers): pass
    def handle_logs(self, request, headers): pass
HttpSink(Keep(), logging.getLogger('sink'), port=port, daemon=False).start()
"#;
        let mut cmd = std::process::Command::new(python);
        cmd.args(["-c", script, &port.to_string()]).arg(&file);
        let app = PyApp::start(cmd, port, "the OTLP sink").await?;
        Ok(Self { base: app.base.clone(), file, _app: app })
    }

    /// Everything taken so far, as written.
    pub fn raw(&self) -> String {
        std::fs::read_to_string(&self.file).unwrap_or_default()
    }

    /// Every export taken so far, in order.
    pub fn exports(&self) -> Vec<Value> {
        self.raw().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// Every span taken so far, with its resource's attributes as
    /// `resource` (a map) and its own as `attrs` (a map of plain values).
    pub fn spans(&self) -> Vec<Value> {
        let plain = |attrs: &Value| -> Value {
            let mut m = serde_json::Map::new();
            for a in attrs.as_array().into_iter().flatten() {
                let v = &a["value"];
                let v = v.get("stringValue").or(v.get("intValue")).or(v.get("boolValue"));
                m.insert(a["key"].as_str().unwrap_or("").into(), v.cloned().unwrap_or(Value::Null));
            }
            Value::Object(m)
        };
        let mut out = Vec::new();
        for e in self.exports() {
            for rs in e["resourceSpans"].as_array().into_iter().flatten() {
                let resource = plain(&rs["resource"]["attributes"]);
                for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                    for sp in ss["spans"].as_array().into_iter().flatten() {
                        let mut sp = sp.clone();
                        sp["attrs"] = plain(&sp["attributes"]);
                        sp["resource"] = resource.clone();
                        out.push(sp);
                    }
                }
            }
        }
        out
    }
}

/// The admin app (`fixtures/admin/app.py`) on a free loopback port, over an SQLite
/// file; killed on drop.
#[derive(Debug)]
pub struct AdminApp {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The SQLite database.
    pub db: PathBuf,
    python: PathBuf,
    _app: PyApp,
}

impl AdminApp {
    /// Start it and wait (at most 30 s) until it answers.
    pub async fn start(dir: &Path) -> Result<Self> {
        let python = admin_python()?;
        let port = free_port()?;
        let db = dir.join("admin.db");
        let mut cmd = std::process::Command::new(&python);
        cmd.arg(fixture_app("../fixtures/admin/app.py")).arg(port.to_string()).arg(&db);
        let app = PyApp::start(cmd, port, "the admin app").await?;
        Ok(Self { base: app.base.clone(), db, python, _app: app })
    }

    /// Rows of `sql` in the app's database, each as a list of values (read with
    /// Python's sqlite3: the server side, not the page).
    pub fn rows(&self, sql: &str) -> Result<Vec<Value>> {
        sqlite_rows(&self.python, &self.db, sql)
    }

    /// Run `sql` (a change) on the app's database and commit it.
    pub fn exec(&self, sql: &str) -> Result<()> {
        let out = std::process::Command::new(&self.python)
            .args(["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()"])
            .arg(&self.db)
            .arg(sql)
            .output()?;
        anyhow::ensure!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        Ok(())
    }

    /// Every request the server has seen, in order: `METHOD /path?query`.
    pub fn requests(&self) -> Result<Vec<String>> {
        let log = PathBuf::from(format!("{}.requests", self.db.display()));
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        Ok(text.lines().map(str::to_owned).collect())
    }

    /// Show (or take away) the tall banner at the top of every page.
    pub fn banner(&self, on: bool) -> Result<()> {
        let flag = PathBuf::from(format!("{}.banner", self.db.display()));
        if on {
            std::fs::write(&flag, "")?;
        } else if flag.exists() {
            std::fs::remove_file(&flag)?;
        }
        Ok(())
    }
}

/// Rows of `sql` in the SQLite file `db`, each a list of values, read with
/// `python`'s sqlite3 (the server side, not the page).
pub fn sqlite_rows(python: &Path, db: &Path, sql: &str) -> Result<Vec<Value>> {
    let out = std::process::Command::new(python)
        .args([
            "-c",
            "import json, sqlite3, sys; print(json.dumps([list(r) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]))",
        ])
        .arg(db)
        .arg(sql)
        .output()?;
    anyhow::ensure!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// A file of the repository's `fixtures/`, by its path from the tests crate.
pub fn fixture_app(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A free port on 127.0.0.1.
pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A server process (a Python app from PyPI, run from its venv) listening on
/// `127.0.0.1:port`, in a process group of its own: the group (its kernels and
/// workers too) is killed on drop. Its output goes to a log file beside the
/// target dir's test venvs (removed on drop), named in the error when it does
/// not start.
#[derive(Debug)]
pub struct PyApp {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    child: std::process::Child,
    log: PathBuf,
}

impl PyApp {
    /// Spawn `cmd` and wait (at most 60 s) until the port answers.
    pub async fn start(mut cmd: std::process::Command, port: u16, what: &str) -> Result<Self> {
        use std::os::unix::process::CommandExt;
        let log = target_dir()?.join("test-logs").join(format!("app-{port}.log"));
        std::fs::create_dir_all(log.parent().context("log dir")?)?;
        let out = std::fs::File::create(&log)?;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .process_group(0)
            .spawn()
            .with_context(|| format!("start {what}"))?;
        let mut me = Self { base: format!("http://127.0.0.1:{port}"), child, log: log.clone() };
        for _ in 0..600 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Ok(me);
            }
            if let Ok(Some(status)) = me.child.try_wait() {
                bail!(
                    "{what} exited ({status}) before listening on port {port}: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("{what} did not listen on port {port} within 60 s (its log: {})", log.display())
    }

    /// `base` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for PyApp {
    fn drop(&mut self) {
        // The group: `--` first, or kill(1) reads `-PID` as options (util-linux's
        // took `-1…` for "every process").
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        LogTail::print_file(&self.log, &format!("{}'s log", self.base));
        let _ = std::fs::remove_file(&self.log);
    }
}

/// The directory of the fixture sites.
/// The `many-pages` site for crawl tests (`fixtures/many-pages.py`: 200+
/// interlinked pages, a robots-disallowed area, a paged list, sitemaps),
/// generated once per test process into a temporary dir.
pub fn many_pages_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ochre-many-pages-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let script = sites_dir().join("../many-pages.py");
        let status = std::process::Command::new("python3")
            .arg(&script)
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("python3 runs fixtures/many-pages.py");
        assert!(status.success(), "{} failed", script.display());
        dir
    })
    .clone()
}

pub fn sites_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("fixtures").join("sites")
}

/// A tiny HTTP/1.1 server on 127.0.0.1:0 serving `fixtures/sites/` (with
/// `{{ORIGIN}}` in `.xml` and `.txt` files replaced by its origin), `POST /echo`
/// (answers an HTML page that shows the posted body), `/slow?ms=N` and
/// `/slow.js?ms=N`, `/redirect?to=URL` (a 302 there), `/nocontent` (a 204),
/// `/record?...`
/// (remembers the query: what a page reported, checked on the server side,
/// see [`SiteServer::recorded`]) and
/// `/download/NAME` (an attachment whose bytes are [`download_bytes`]). Stops
/// on drop.
#[derive(Debug)]
pub struct SiteServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    records: Records,
    /// Every request that arrived, as `METHOD /path?query`.
    requests: Records,
    task: tokio::task::JoinHandle<()>,
}

type Records = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// The bytes `/download/NAME` answers.
pub fn download_bytes(name: &str) -> Vec<u8> {
    (0..200).flat_map(|i| format!("{name} line {i}\n").into_bytes()).collect()
}

impl SiteServer {
    /// Start serving the fixture sites.
    pub async fn start() -> Result<Self> {
        Self::start_with(sites_dir(), vec![("/many-pages/".to_owned(), many_pages_dir())]).await
    }

    /// Start serving the fixture sites with the libraries their library pages
    /// load (installed on first use): the `widgets` npm entry under
    /// `/vendor/`, `fidelity` under `/lib-vendor/`, `fidelity-kits` under
    /// `/kit-vendor/`.
    pub async fn start_with_libraries() -> Result<Self> {
        Self::start_with(
            sites_dir(),
            vec![
                ("/vendor/".into(), widget_modules()?),
                ("/lib-vendor/".into(), npm_modules("fidelity")?),
                ("/kit-vendor/".into(), npm_modules("fidelity-kits")?),
            ],
        )
        .await
    }

    /// Start serving another directory the same way.
    pub async fn start_at(root: PathBuf) -> Result<Self> {
        Self::start_with(root, Vec::new()).await
    }

    /// Start serving `root`, and each mount's dir under its URL prefix (e.g.
    /// `("/vendor/", node_modules)`).
    pub async fn start_with(root: PathBuf, mounts: Vec<(String, PathBuf)>) -> Result<Self> {
        let mounts = std::sync::Arc::new(mounts);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let origin = base.clone();
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = hits.clone();
        let records = Records::default();
        let log = records.clone();
        let requests = Records::default();
        let arrived = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let root = root.clone();
                let mounts = mounts.clone();
                let origin = origin.clone();
                let log = log.clone();
                let arrived = arrived.clone();
                tokio::spawn(async move {
                    let _ = serve_one(stream, &root, &mounts, &origin, &log, &arrived).await;
                });
            }
        });
        Ok(Self { base, hits, records, requests, task })
    }

    /// The queries of `/record` requests so far, decoded, in order (with the
    /// cookies the request carried after them: ` cookie=a=1; b=2`).
    pub fn recorded(&self) -> Vec<String> {
        self.records.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Like [`Self::wait_recorded`], but an error listing what was recorded when
    /// nothing matched.
    pub async fn expect_recorded(&self, needle: &str) -> Result<String> {
        match self.wait_recorded(needle).await {
            Some(r) => Ok(r),
            None => bail!("no /record request with {needle:?}; recorded: {:?}", self.recorded()),
        }
    }

    /// Wait (at most 5 s) until a `/record` query contains `needle`.
    pub async fn wait_recorded(&self, needle: &str) -> Option<String> {
        self.wait_recorded_since(0, needle).await
    }

    /// Like [`Self::wait_recorded`], counting only the `/record` requests after
    /// the first `before` (those an action sent, with `before` read as it began).
    pub async fn wait_recorded_since(&self, before: usize, needle: &str) -> Option<String> {
        for _ in 0..250 {
            if let Some(r) = self.recorded().into_iter().skip(before).find(|r| r.contains(needle)) {
                return Some(r);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        None
    }

    /// Every request that arrived so far, as `METHOD /path?query` (a
    /// connection opened ahead, with no request on it, is none).
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Connections served so far (one request each).
    pub fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The URL of a fixture page.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base, path.trim_start_matches('/'))
    }
}

impl Drop for SiteServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `%XX` and `+` decoded.
fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One request to the fixture site: its route table, one arm per route.
#[allow(clippy::too_many_lines)] // a table of the site's routes
async fn serve_one(
    mut stream: tokio::net::TcpStream,
    root: &Path,
    mounts: &[(String, PathBuf)],
    origin: &str,
    records: &Records,
    requests: &Records,
) -> Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut first = head.lines().next().unwrap_or("").split_whitespace();
    let method = first.next().unwrap_or("").to_owned();
    let path = first.next().unwrap_or("/").to_owned();
    if let Ok(mut r) = requests.lock() {
        r.push(format!("{method} {path}"));
    }
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length").then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let query = path.split_once('?').map(|(_, q)| q.to_owned()).unwrap_or_default();
    let path = path.split('?').next().unwrap_or("/").to_owned();
    if path == "/ws" {
        return serve_socket(stream, &head, records).await;
    }
    let mut extra = String::new();
    let (status, ctype, payload) = if path == "/record" {
        // The cookies the request carried, after the query (` cookie=a=1; b=2`).
        let cookie = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("cookie").then(|| v.trim().to_owned())
        });
        let mut line = url_decode(&query);
        if let Some(c) = cookie {
            line.push_str(&format!(" cookie={c}"));
        }
        if let Ok(mut r) = records.lock() {
            r.push(line);
        }
        ("200 OK", "text/plain", b"ok".to_vec())
    } else if path == "/redirect" {
        // `/redirect?to=URL`: a 302 to URL.
        let to = query.split('&').find_map(|kv| kv.strip_prefix("to=")).unwrap_or("/");
        extra = format!("Location: {}\r\n", url_decode(to));
        ("302 Found", "text/plain", b"moved".to_vec())
    } else if path == "/nocontent" {
        ("204 No Content", "text/plain", Vec::new())
    } else if path == "/headers" {
        // `/headers?tag=X`: a page; recorded as `headers tag=X lang=<Accept-Language>
        // ua=<User-Agent>` (what the browser sent, for emulation tests).
        let header = |name: &str| {
            head.lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
                })
                .unwrap_or_default()
        };
        let line = format!(
            "headers {} lang={} ua={}",
            url_decode(&query),
            header("accept-language"),
            header("user-agent")
        );
        if let Ok(mut r) = records.lock() {
            r.push(line);
        }
        let page = "<!doctype html><title>Headers</title><p>seen</p>";
        ("200 OK", "text/html", page.as_bytes().to_vec())
    } else if let Some(name) = path.strip_prefix("/download/") {
        extra = format!("Content-Disposition: attachment; filename=\"{name}\"\r\n");
        ("200 OK", "text/csv", download_bytes(name))
    } else if path == "/slow" || path == "/slow.js" {
        // `/slow?ms=N`: answers `slow N` after N ms (network-quiet waits);
        // `/slow.js?ms=N` a script that writes `got slow N` into `#data`.
        let ms: u64 = query
            .split('&')
            .find_map(|kv| kv.strip_prefix("ms="))
            .and_then(|v| v.parse().ok())
            .unwrap_or(300)
            .min(10_000);
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        if path == "/slow.js" {
            let js = format!("document.getElementById('data').textContent = 'got slow {ms}';");
            ("200 OK", "text/javascript", js.into_bytes())
        } else {
            ("200 OK", "text/plain", format!("slow {ms}").into_bytes())
        }
    } else if method == "POST" && path == "/echo" {
        let text = String::from_utf8_lossy(&body).replace('<', "&lt;");
        let page = format!(
            "<!doctype html><title>Echo</title><h1>Posted</h1><pre id=\"posted\">{text}</pre>"
        );
        ("200 OK", "text/html; charset=utf-8", page.into_bytes())
    } else {
        let rel = if path == "/" { "index.html" } else { path.trim_start_matches('/') };
        let mounted = mounts.iter().find_map(|(prefix, dir)| {
            path.strip_prefix(prefix.as_str()).map(|rest| dir.join(rest))
        });
        let file = mounted.unwrap_or_else(|| root.join(rel));
        match (rel.contains(".."), std::fs::read(&file)) {
            (false, Ok(bytes)) => {
                let ctype = match file.extension().and_then(|e| e.to_str()) {
                    Some("html") => "text/html; charset=utf-8",
                    Some("js" | "mjs") => "text/javascript",
                    Some("css") => "text/css",
                    Some("json") => "application/json",
                    Some("xml") => "application/xml",
                    Some("txt") => "text/plain; charset=utf-8",
                    _ => "application/octet-stream",
                };
                // Sitemaps and robots.txt name absolute URLs: `{{ORIGIN}}` is ours.
                let bytes =
                    if ctype.starts_with("application/xml") || ctype.starts_with("text/plain") {
                        String::from_utf8_lossy(&bytes).replace("{{ORIGIN}}", origin).into_bytes()
                    } else {
                        bytes
                    };
                ("200 OK", ctype, bytes)
            }
            _ => ("404 Not Found", "text/plain", b"not found".to_vec()),
        }
    };
    let header = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        payload.len()
    );
    stream.write_all(header.as_bytes()).await?;
    stream.write_all(&payload).await?;
    stream.shutdown().await?;
    Ok(())
}

/// `/ws`: a websocket (RFC 6455, text frames) that answers what a page sends:
/// `echo:X` with `echo:X` at once; `run:X` with `queued:X` at once and
/// `output:X` 150 ms later (recorded as `ws run:X`: a notebook's kernel
/// answers so); `complete:X` with `completion:X` 600 ms later (an editor's
/// suggestion, which comes after the typing's echo has paused); `tick:N` starts a frame `tick` every N ms (a stream of
/// prices); `lag:N` holds every answer after it N ms longer (a server slower
/// than the page: its echo comes after the typing's page has settled).
#[allow(clippy::too_many_lines)] // the socket's handshake and its protocol, one loop
async fn serve_socket(stream: tokio::net::TcpStream, head: &str, records: &Records) -> Result<()> {
    use base64::Engine;
    use sha1::Digest;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let key = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("sec-websocket-key").then(|| v.trim().to_owned())
        })
        .context("no Sec-WebSocket-Key")?;
    let accept = base64::engine::general_purpose::STANDARD.encode(sha1::Sha1::digest(
        format!("{key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11").as_bytes(),
    ));
    let (mut rx, mut tx) = stream.into_split();
    tx.write_all(
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        )
        .as_bytes(),
    )
    .await?;
    // Each answer with when it was given: the writer holds it `lag` ms from then.
    let (out, mut queue) = tokio::sync::mpsc::unbounded_channel::<(Instant, String)>();
    let lag = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let held = lag.clone();
    let writer = tokio::spawn(async move {
        while let Some((given, text)) = queue.recv().await {
            let lag = held.load(std::sync::atomic::Ordering::Relaxed);
            tokio::time::sleep_until((given + Duration::from_millis(lag)).into()).await;
            let mut frame = vec![0x81u8];
            match text.len() {
                n if n < 126 => frame.push(n as u8),
                n if n <= 0xffff => {
                    frame.push(126);
                    frame.extend_from_slice(&(n as u16).to_be_bytes());
                }
                n => {
                    frame.push(127);
                    frame.extend_from_slice(&(n as u64).to_be_bytes());
                }
            }
            frame.extend_from_slice(text.as_bytes());
            if tx.write_all(&frame).await.is_err() {
                break;
            }
        }
    });
    let mut ticker: Option<tokio::task::JoinHandle<()>> = None;
    loop {
        let mut two = [0u8; 2];
        if rx.read_exact(&mut two).await.is_err() {
            break;
        }
        let len = match two[1] & 0x7f {
            126 => u64::from(rx.read_u16().await?),
            127 => rx.read_u64().await?,
            n => u64::from(n),
        };
        let mut mask = [0u8; 4];
        if two[1] & 0x80 != 0 {
            rx.read_exact(&mut mask).await?;
        }
        anyhow::ensure!(len <= 1 << 16, "frame too long");
        let mut data = vec![0u8; len as usize];
        rx.read_exact(&mut data).await?;
        for (i, b) in data.iter_mut().enumerate() {
            *b ^= mask[i % 4];
        }
        if two[0] & 0x0f == 8 {
            break;
        }
        let text = String::from_utf8_lossy(&data).into_owned();
        if let Some(x) = text.strip_prefix("echo:") {
            let _ = out.send((Instant::now(), format!("echo:{x}")));
        } else if let Some(x) = text.strip_prefix("run:") {
            if let Ok(mut r) = records.lock() {
                r.push(format!("ws run:{x}"));
            }
            let _ = out.send((Instant::now(), format!("queued:{x}")));
            let (out, x) = (out.clone(), x.to_owned());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(150)).await;
                let _ = out.send((Instant::now(), format!("output:{x}")));
            });
        } else if let Some(x) = text.strip_prefix("complete:") {
            let (out, x) = (out.clone(), x.to_owned());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(600)).await;
                let _ = out.send((Instant::now(), format!("completion:{x}")));
            });
        } else if let Some(ms) = text.strip_prefix("lag:").and_then(|v| v.parse::<u64>().ok()) {
            lag.store(ms.min(5_000), std::sync::atomic::Ordering::Relaxed);
        } else if let Some(ms) = text.strip_prefix("tick:").and_then(|v| v.parse::<u64>().ok()) {
            let out = out.clone();
            if let Some(t) = ticker.take() {
                t.abort();
            }
            ticker = Some(tokio::spawn(async move {
                let mut n = 0u64;
                loop {
                    tokio::time::sleep(Duration::from_millis(ms.max(5))).await;
                    n += 1;
                    if out.send((Instant::now(), format!("tick:{n}"))).is_err() {
                        break;
                    }
                }
            }));
        }
    }
    if let Some(t) = ticker {
        t.abort();
    }
    writer.abort();
    Ok(())
}

/// Every process: its pid and its `/proc` dir.
fn processes() -> Vec<(u32, PathBuf)> {
    std::fs::read_dir("/proc")
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
                    Some((pid, e.path()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `kill -9 PID`; whether it was delivered.
pub fn kill9(pid: u32) -> bool {
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}

/// SIGKILL every process whose command line contains `needle` (e.g. a browser
/// profile dir); how many were killed.
pub fn kill_processes_with(needle: &str) -> usize {
    processes()
        .into_iter()
        .filter(|(_, dir)| {
            std::fs::read(dir.join("cmdline"))
                .is_ok_and(|cmd| String::from_utf8_lossy(&cmd).contains(needle))
        })
        .filter(|(pid, _)| kill9(*pid))
        .count()
}

/// Whether process `pid` runs (exists and is not a zombie).
pub fn process_runs(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rfind(')').and_then(|i| stat.get(i + 2..i + 3)).unwrap_or("Z");
        state != "Z" && state != "X"
    })
}

/// The processes descended from `pid` (children, their children, ...).
pub fn descendants(pid: u32) -> Vec<u32> {
    let parent_of: Vec<(u32, u32)> = processes()
        .into_iter()
        .filter_map(|(p, dir)| {
            let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
            let ppid =
                stat.get(stat.rfind(')')? + 2..)?.split_whitespace().nth(1)?.parse::<u32>().ok()?;
            Some((p, ppid))
        })
        .collect();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let at = found[i];
        found.extend(parent_of.iter().filter(|(_, pp)| *pp == at).map(|(p, _)| *p));
        i += 1;
    }
    found.remove(0);
    found
}

/// A small xorshift generator: reproducible from its seed (randomized tests
/// print theirs), no dependency.
pub struct Rng(pub u64);

impl Rng {
    /// A generator seeded from `OCHRE_TRIAL_SEED` when set, else from the
    /// process id; the seed is printed (with `what` the trials are) so a
    /// failing run can be repeated.
    pub fn from_env(what: &str) -> Self {
        let seed = std::env::var("OCHRE_TRIAL_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| u64::from(std::process::id()) * 2_654_435_761 + 1);
        eprintln!("{what}: OCHRE_TRIAL_SEED={seed}");
        Self(seed.max(1))
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (0 for `n` = 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// A Chromium with a debugging port and a profile of its own; killed on drop.
pub struct Chromium {
    child: Option<std::process::Child>,
    /// Its debugging port.
    pub port: u16,
    profile: PathBuf,
    /// Its name (also in its User-Agent, `ochre-pool-test/NAME`).
    pub name: String,
}

impl Chromium {
    /// Start one with its profile under `dir`.
    pub async fn start(dir: &Path, name: &str) -> Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut me = Self {
            child: None,
            port,
            profile: dir.join(format!("profile-{name}")),
            name: name.into(),
        };
        me.launch().await?;
        Ok(me)
    }

    /// (Re)start its process on the same port and profile.
    pub async fn launch(&mut self) -> Result<()> {
        let child = std::process::Command::new(chromium_bin()?)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                &format!("--remote-debugging-port={}", self.port),
                &format!("--user-data-dir={}", self.profile.display()),
                &format!("--user-agent=ochre-pool-test/{}", self.name),
                "about:blank",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("start chromium")?;
        self.child = Some(child);
        let what = format!("chromium {} to open port {}", self.name, self.port);
        eventually(&what, Duration::from_secs(30), || async {
            Ok(self.json("/json/version").await.is_ok())
        })
        .await
    }

    /// Its `http://127.0.0.1:PORT`, for `--cdp-endpoint`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// GET a JSON document of its debugging server.
    pub async fn json(&self, path: &str) -> Result<Value> {
        let url = format!("http://127.0.0.1:{}{path}", self.port);
        Ok(reqwest::get(url).await?.error_for_status()?.json().await?)
    }

    /// The URLs of its pages (`/json/list`).
    pub async fn page_urls(&self) -> Result<Vec<String>> {
        let list = self.json("/json/list").await?;
        Ok(list
            .as_array()
            .map(|a| a.iter().filter_map(|t| t["url"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default())
    }

    /// Kill it and its helper processes.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Its helper processes go with the profile's processes.
        kill_processes_with(&format!("--user-data-dir={}", self.profile.display()));
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        self.kill9();
    }
}
