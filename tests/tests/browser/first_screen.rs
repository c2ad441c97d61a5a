//! The README's first screen, followed as a new user would: `ochre doctor`,
//! each client's registration started exactly as its snippet says (the
//! binary at the path the snippet names replaced by this build's), and the
//! first task: its page served by the README's own command, the form filled
//! and sent through ochre, and the request read in that server's log. (The
//! install itself, `cargo install --locked --path host/cli` and the package,
//! is `.ci/install-check`'s, which reads its command from the README too.)

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use ochre_tests::*;
use serde_json::{Value, json};

/// The README's fenced code blocks, in order: (info string, body).
fn code_blocks() -> Result<Vec<(String, String)>> {
    let readme = std::fs::read_to_string(sites_dir().join("../../README.md"))?;
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in readme.lines() {
        if let Some(info) = line.strip_prefix("```") {
            match open.take() {
                Some(block) => blocks.push(block),
                None => open = Some((info.trim().to_owned(), String::new())),
            }
        } else if let Some((_, body)) = open.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    Ok(blocks)
}

/// The one block of the README whose text has `needle`.
fn block_with<'a>(blocks: &'a [(String, String)], needle: &str) -> Result<&'a (String, String)> {
    let found: Vec<_> = blocks.iter().filter(|(_, b)| b.contains(needle)).collect();
    ensure!(found.len() == 1, "{} README blocks have {needle:?}", found.len());
    Ok(found[0])
}

/// The server arguments each registration snippet gives: (client, arguments).
fn registrations(blocks: &[(String, String)]) -> Result<Vec<(&'static str, Vec<String>)>> {
    let mut out = Vec::new();
    // Claude Code: `claude mcp add ochre -- BINARY ARGS...`.
    let (_, claude) = block_with(blocks, "claude mcp add")?;
    let line = claude.lines().find(|l| l.starts_with("claude mcp add")).context("claude line")?;
    let (_, command) = line.split_once(" -- ").context("no `--` in the claude line")?;
    let args = command.strip_prefix("\"$(command -v ochre)\"").context("the binary")?;
    out.push(("Claude Code", args.split_whitespace().map(str::to_owned).collect()));
    // Codex: `[mcp_servers.ochre]` with `command` and `args`.
    let (info, codex) = block_with(blocks, "[mcp_servers.ochre]")?;
    ensure!(info == "toml", "{info}");
    let codex: toml::Value = toml::from_str(codex)?;
    let server = &codex["mcp_servers"]["ochre"];
    ensure!(server["command"].as_str() == Some("ochre"), "{server}");
    let args = server.get("args").and_then(toml::Value::as_array).cloned().unwrap_or_default();
    out.push(("Codex", args.iter().filter_map(|a| a.as_str().map(str::to_owned)).collect()));
    // Cursor and any JSON client: `mcpServers.ochre`.
    let (info, cursor) = block_with(blocks, "\"mcpServers\"")?;
    ensure!(info == "json", "{info}");
    let cursor: Value = serde_json::from_str(cursor)?;
    let server = &cursor["mcpServers"]["ochre"];
    ensure!(server["command"].as_str() == Some("ochre"), "{server}");
    let args = server["args"].as_array().cloned().unwrap_or_default();
    out.push(("Cursor", args.iter().filter_map(|a| a.as_str().map(str::to_owned)).collect()));
    Ok(out)
}

#[tokio::test]
async fn the_readmes_first_screen_works_as_written() -> Result<()> {
    let blocks = code_blocks()?;
    // The install block names the command CI installs with, and the doctor.
    let (_, install) = block_with(&blocks, "cargo install")?;
    assert!(install.contains("cargo install --locked --path host/cli"), "{install}");
    assert!(install.contains("ochre doctor"), "{install}");
    let data = TempDir::new("first-screen");
    let doctor = ok(ochre_cli(data.path(), &["doctor"])?);
    assert!(doctor.contains("all good"), "{doctor}");
    // It prints the snippets with its own path, for a client that does not
    // search PATH: the same commands, the binary named in full.
    let exe = std::fs::canonicalize(ochre_bin())?.display().to_string();
    let printed = |prefix: &str| -> Result<String> {
        let line = doctor.lines().find(|l| l.trim_start().starts_with(prefix));
        Ok(line.with_context(|| format!("no {prefix:?} line in:\n{doctor}"))?.to_owned())
    };
    ensure!(
        printed("Claude Code:")?.ends_with(&format!("claude mcp add ochre -- {exe}")),
        "{doctor}"
    );
    let codex = printed("Codex")?;
    let codex = codex.split_once("  [").map(|(_, t)| format!("[{t}")).context("codex")?;
    let codex: toml::Value = toml::from_str(&codex.replace("] command", "]\ncommand"))?;
    ensure!(codex["mcp_servers"]["ochre"]["command"].as_str() == Some(exe.as_str()), "{codex}");
    let json = printed("Cursor")?;
    let json: Value = serde_json::from_str(
        json.split_once("  {").map(|(_, t)| format!("{{{t}")).as_deref().unwrap_or(""),
    )?;
    ensure!(json["mcpServers"]["ochre"]["command"] == exe.as_str(), "{json}");

    // Each client's registration starts a server that lists its tools.
    let regs = registrations(&blocks)?;
    assert_eq!(regs.len(), 3);
    for (client, args) in &regs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let server = stdio_client(data.path(), &args, &[]).await?;
        let tools = server.list_all_tools().await?;
        assert!(tools.iter().any(|t| t.name == "navigate"), "{client}: {} tools", tools.len());
        server.cancel().await?;
    }

    // The first task: the page made and served by the README's commands.
    let (_, serve) = block_with(&blocks, "python3 -m http.server")?;
    let page = serve
        .lines()
        .find_map(|l| l.strip_prefix("echo '")?.split_once("' > index.html").map(|(h, _)| h))
        .context("the README's page")?;
    let serve_line =
        serve.lines().find(|l| l.starts_with("python3 -m http.server")).context("serve")?;
    let dir = TempDir::new("first-page");
    std::fs::write(dir.path().join("index.html"), format!("{page}\n"))?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    // The README's command, its port (8000) swapped for a free one.
    let command = serve_line.replace(" 8000 ", &format!(" {port} "));
    let log = dir.path().join("server.log");
    let mut server = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec {command}"))
        .current_dir(dir.path())
        .stderr(std::fs::File::create(&log)?)
        .stdout(std::process::Stdio::null())
        .spawn()?;
    let mut result = first_task(&data, port, &log).await;
    if result.is_ok() {
        let (_, shell) = block_with(&blocks, "ochre snapshot")?;
        result = first_task_from_the_shell(&data, shell, port, &log);
    }
    let _ = server.kill();
    let _ = server.wait();
    result
}

/// What the agent does with "Open http://127.0.0.1:8000 with ochre, put Ada in
/// the Name field and send the form": the form reaches the README's server.
async fn first_task(data: &TempDir, port: u16, log: &std::path::Path) -> Result<()> {
    let client = stdio_client(data.path(), &[], &[]).await?;
    let url = format!("http://127.0.0.1:{port}/");
    let end = Instant::now() + Duration::from_secs(20);
    // The server may take a moment to listen.
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        ensure!(Instant::now() < end, "the README's server did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    navigate(&client, &url).await?;
    let snap = snapshot(&client).await?;
    let name = ref_of(&snap, "textbox", "Name");
    let filled = client.tool_text("form_input", json!({"ref": name, "value": "Ada"})).await?;
    assert!(filled.contains("Ada"), "{filled}");
    let send = ref_of(&snap, "button", "Send");
    let sent = client.tool_text("interact", json!({"ref": send})).await?;
    assert!(
        sent.contains("/thanks?name=Ada"),
        "the answer does not say where the form went: {sent}"
    );
    // Checked where the user would: the server's own log.
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains("GET /thanks?name=Ada") {
            break;
        }
        ensure!(Instant::now() < end, "the form never reached the server; its log:\n{text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    client.cancel().await?;
    Ok(())
}

/// The same task through the README's shell commands, run as written (the
/// port swapped) in a shell with this build's ochre on its PATH: the form
/// reaches the server a second time.
fn first_task_from_the_shell(
    data: &TempDir,
    block: &str,
    port: u16,
    log: &std::path::Path,
) -> Result<()> {
    let sessions = TempDir::new("first-screen-sessions");
    let bin_dir = ochre_bin().parent().context("bin dir")?.to_owned();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let script = block.replace("127.0.0.1:8000", &format!("127.0.0.1:{port}"));
    let out = std::process::Command::new("bash")
        .args(["-e", "-c", &script])
        .current_dir(data.path())
        .env("PATH", &path)
        .env("OCHRE_HOME", data.path())
        .env("OCHRE_SESSION_DIR", sessions.path())
        .stdin(std::process::Stdio::null())
        .output()?;
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let stopped = std::process::Command::new(ochre_bin())
        .args(["session", "stop", "--all"])
        .env("OCHRE_SESSION_DIR", sessions.path())
        .output()?;
    ensure!(out.status.success(), "the README's shell commands failed:\n{script}\n{said}");
    ensure!(stopped.status.success(), "{}", String::from_utf8_lossy(&stopped.stderr));
    assert!(said.contains("textbox \"Name\" ax_"), "the snapshot: {said}");
    assert!(said.contains("/thanks?name=Ada"), "the click's answer does not say where: {said}");
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let sent = text.matches("GET /thanks?name=Ada").count();
    ensure!(
        sent == 2,
        "the shell's form did not reach the server ({sent} requests); its log:\n{text}"
    );
    Ok(())
}
