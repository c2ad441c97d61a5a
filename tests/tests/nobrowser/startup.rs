//! A server that cannot start tells its MCP client why: a missing plugin dir, a
//! config file that is not there or not valid, a login key file that cannot be
//! read, each refused at `initialize` with an error naming the flag, the path
//! and the fix (a client shows it; before, it saw the connection close). The
//! server then exits with the same reason on stderr, and a good start is still
//! answered at once.

use std::time::{Duration, Instant};

use anyhow::Result;
use ochre_tests::*;

/// What a client is told when the server started with `args` is refused.
async fn refused_at_initialize(data: &std::path::Path, args: &[&str]) -> Result<String> {
    let started = Instant::now();
    let client = stdio_client(data, args, &[]).await;
    let Err(e) = client else { anyhow::bail!("a server started with {args:?} was taken") };
    // Refused at the handshake, not after a wait for the browser or plugins.
    assert!(started.elapsed() < Duration::from_secs(30), "refused after {:?}", started.elapsed());
    Ok(format!("{e:#}"))
}

#[tokio::test]
async fn a_server_that_cannot_start_says_why_at_initialize() -> Result<()> {
    let data = TempDir::new("startup");
    let missing = data.path().join("no-such-plugins");
    let missing = missing.to_str().expect("utf8");
    let why = refused_at_initialize(data.path(), &["--plugin-dir", missing]).await?;
    for part in ["the server could not start", "--plugin-dir", missing, "no such directory"] {
        assert!(why.contains(part), "{part:?} is not in: {why}");
    }
    assert!(why.contains("leave the flag out"), "no fix named: {why}");

    // A config file that is not there, then one with a key ochre does not know.
    let config = data.path().join("ochre.toml");
    let config_path = config.to_str().expect("utf8");
    let why = refused_at_initialize(data.path(), &["--config", config_path]).await?;
    assert!(why.contains("--config") && why.contains(config_path), "{why}");
    std::fs::write(&config, "[server]\nmax_sesions = 4\n")?;
    let why = refused_at_initialize(data.path(), &["--config", config_path]).await?;
    assert!(why.contains("max_sesions"), "the unknown key is not named: {why}");

    // A login key file that cannot be read.
    let key = data.path().join("..").join("startup-no-such.key");
    let why =
        refused_at_initialize(data.path(), &["--login-key-file", key.to_str().expect("utf8")])
            .await?;
    assert!(why.contains("--login-key-file"), "{why}");

    // Over the wire: the error answers the `initialize` request itself, and
    // the server then exits by itself, code 2, the reason on its stderr.
    let mut server = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["--plugin-dir", missing])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    std::io::Write::write_all(
        server.stdin.as_mut().expect("stdin"),
        format!("{init}\n").as_bytes(),
    )?;
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().expect("stdout")),
        &mut line,
    )?;
    let answer: serde_json::Value = serde_json::from_str(&line)?;
    assert_eq!(answer["id"], 1, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("--plugin-dir") && message.contains(missing), "{answer}");
    let end = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = server.try_wait()? {
            break status;
        }
        if Instant::now() > end {
            server.kill()?;
            anyhow::bail!("the refused server did not exit within 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(2), "{status}");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut server.stderr.take().expect("stderr"), &mut stderr)?;
    assert!(stderr.contains("no such directory") && stderr.contains(missing), "{stderr}");

    // The same server with good flags is answered, and lists its tools.
    let good = data.path().join("plugins");
    std::fs::create_dir_all(&good)?;
    let client =
        stdio_client(data.path(), &["--plugin-dir", good.to_str().expect("utf8")], &[]).await?;
    let tools = client.list_all_tools().await?;
    assert!(tools.iter().any(|t| t.name == "navigate"), "{} tools", tools.len());
    client.cancel().await?;
    // A run that called no tool (that session, a CLI command) left no trace
    // dir behind; a call starts one.
    ok(ochre_cli(data.path(), &["tools"])?);
    assert!(!data.path().join("traces").exists(), "a trace of nothing was left behind");
    let client = stdio_client(data.path(), &[], &[]).await?;
    let _ = client.tool("oc_journal", serde_json::json!({"action": "recent", "count": 1})).await?;
    client.cancel().await?;
    let traces: Vec<_> = std::fs::read_dir(data.path().join("traces"))?.collect();
    assert_eq!(traces.len(), 1, "one session called a tool: {traces:?}");
    Ok(())
}

/// Each subcommand's `--help` lists its own flags and the server's that bear on
/// it, not the forty of the server; the server's help lists them all; and a
/// hidden flag is still taken where it is given.
#[test]
fn each_commands_help_lists_its_own_flags() -> Result<()> {
    let help = |args: &[&str]| -> Result<String> {
        let out = std::process::Command::new(ochre_bin()).args(args).arg("--help").output()?;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let flags = |text: &str| text.lines().filter(|l| l.trim_start().starts_with("--")).count();
    let server = help(&[])?;
    for flag in ["--chrome-path", "--network-block", "--plugin-timeout-ms", "--data-dir"] {
        assert!(server.contains(flag), "{flag} is not in the server's help");
    }
    let tools = help(&["tools"])?;
    for flag in ["--tools-only", "--plugin-dir", "--json", "--data-dir"] {
        assert!(tools.contains(flag), "{flag} is not in `ochre tools --help`:\n{tools}");
    }
    for flag in ["--chrome-path", "--network-block", "--plugin-timeout-ms", "--login-key-file"] {
        assert!(!tools.contains(flag), "{flag} is in `ochre tools --help`:\n{tools}");
    }
    let save = help(&["login", "save"])?;
    assert!(save.contains("--login-key-file") && !save.contains("--chrome-path"), "{save}");
    assert!(flags(&tools) * 3 < flags(&server), "{} of {} flags", flags(&tools), flags(&server));
    // `ochre doctor` checks a server configured by any of them: all listed.
    assert!(help(&["doctor"])?.contains("--chrome-path"));
    // Hidden from a command's help, a server flag is still taken there.
    let data = TempDir::new("help");
    let out = ochre_cli(data.path(), &["tools", "--plugin-timeout-ms", "0"])?;
    let said = refused(out);
    assert!(said.contains("--plugin-timeout-ms must be positive"), "{said}");
    Ok(())
}
