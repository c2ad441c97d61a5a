//! `ochre doctor`: every check of the setup, with a fix for each failure.

use ochre_host::{Host, PluginStatus};

use crate::HostArgs;

/// One line of `ochre doctor`.
fn check(ok: Result<String, (String, String)>, what: &str, failed: &mut bool) {
    match ok {
        Ok(detail) => crate::say!("  ok    {what:<18} {detail}"),
        Err((detail, fix)) => {
            *failed = true;
            crate::say!("  FAIL  {what:<18} {detail}");
            crate::say!("        fix: {fix}");
        }
    }
}

/// How the secrets file is kept: sealed with the login key, or in clear (a
/// warning, not a failure: mode 0600 keeps it from other users).
fn check_secrets(args: &HostArgs, failed: &mut bool) {
    use ochre_host::stores::secrets::{SecretStore, Stored};
    let store = SecretStore::new(&args.data_dir());
    let path = store.path().display().to_string();
    match store.stored() {
        Ok(Stored::Nothing | Stored::Clear(0)) => {
            crate::say!("  -     secrets            none stored")
        }
        Ok(Stored::Sealed) => {
            check(Ok(format!("sealed with the login key ({path})")), "secrets", failed)
        }
        Ok(Stored::Clear(n)) => {
            crate::say!("  warn  secrets            {n} stored unsealed in {path} (mode 0600)");
            crate::say!(
                "        fix: set a login key (OCHRE_LOGIN_KEY or --login-key-file; `ochre login keygen` \
                 makes one) and run `ochre secret seal`"
            );
        }
        Err(e) => {
            check(Err((e.to_string(), format!("repair or remove {path}"))), "secrets", failed)
        }
    }
}

/// Whether `dir` can be written (a file created and removed there).
fn writable(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".ochre-doctor-{}", std::process::id()));
    std::fs::write(&probe, b"ok")?;
    std::fs::remove_file(&probe)
}

/// `ochre doctor`: every check, with a fix for each failure; exit 1 if any.
pub(crate) async fn doctor(args: &HostArgs) -> anyhow::Result<()> {
    let mut failed = false;
    crate::say!("ochre {} doctor", env!("CARGO_PKG_VERSION"));
    check_dirs(args, &mut failed);
    check_state(args, &mut failed);
    check_secrets(args, &mut failed);
    let host = match args.build().await {
        Ok(h) => h,
        Err(e) => {
            check(
                Err((format!("{e:#}"), "fix the flag or file the message names".into())),
                "server",
                &mut failed,
            );
            return Err(crate::CheckFailed("ochre doctor: the server cannot start".into()).into());
        }
    };
    check_cache(&host, &mut failed);
    check_plugins(&host, &mut failed);
    check_browser(&host, &mut failed).await;
    check_otlp(args, &mut failed).await;
    host.shutdown().await;
    if failed {
        return Err(
            crate::CheckFailed("ochre doctor: something failed (see FAIL above)".into()).into()
        );
    }
    crate::say!("all good");
    print_registrations();
    Ok(())
}

/// The README's registration snippets with the installed command's own path
/// (a client started from a desktop may not search the shell's `PATH`).
fn print_registrations() {
    let Ok(exe) = crate::command_exe() else { return };
    let path = exe.display().to_string();
    let quoted = serde_json::json!(path);
    crate::say!("register it with your agent (this command):");
    crate::say!("  Claude Code:  claude mcp add ochre -- {}", shell_quoted(&path));
    crate::say!("  Codex (~/.codex/config.toml):  [mcp_servers.ochre] command = {quoted}");
    crate::say!(
        "  Cursor, Claude Desktop, any JSON client:  {}",
        serde_json::json!({"mcpServers": {"ochre": {"command": path, "args": []}}})
    );
}

/// `s` as one word for a POSIX shell (single-quoted when it needs quoting).
fn shell_quoted(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `ochre doctor`: the OpenTelemetry collector, when spans are to go to one,
/// takes an export of no span.
async fn check_otlp(args: &HostArgs, failed: &mut bool) {
    let Ok(Some(config)) = args.otlp() else { return };
    let fix = "start the collector (OTLP over HTTP, port 4318), or fix --otlp-endpoint or \
               OTEL_EXPORTER_OTLP_*; calls still run, their spans are dropped";
    check(
        ochre_host::otlp::probe(&config).await.map_err(|e| (e, fix.into())),
        "opentelemetry",
        failed,
    );
}

/// `ochre doctor`: the data dir is writable, the plugin dirs are dirs.
fn check_dirs(args: &HostArgs, failed: &mut bool) {
    let data = args.data_dir();
    check(
        writable(&data).map(|()| format!("{} (writable)", data.display())).map_err(|e| {
            (
                format!("{}: {e}", data.display()),
                "pass --data-dir (or OCHRE_HOME) a dir you can write".into(),
            )
        }),
        "data dir",
        failed,
    );
    for dir in &args.plugin_dir {
        check(
            if dir.is_dir() {
                Ok(format!("{} (a dir)", dir.display()))
            } else {
                Err((
                    format!("{} is not a dir", dir.display()),
                    "create it, or drop this --plugin-dir".into(),
                ))
            },
            "plugin dir",
            failed,
        );
    }
}

/// `ochre doctor`: no state file (task run, contract, plugin state, output
/// handle) is damaged.
fn check_state(args: &HostArgs, failed: &mut bool) {
    let damaged = ochre_host::stores::damaged_files(&args.data_dir());
    if damaged.is_empty() {
        check(Ok("no damaged file".into()), "state", failed);
    }
    for file in damaged {
        check(
            Err((
                format!("{} is damaged: calls that need it answer STATE_CORRUPT", file.display()),
                "restore it from a backup, or move it out of the data dir to forget it".into(),
            )),
            "state",
            failed,
        );
    }
}

/// `ochre doctor`: the compile cache, and the plugins a package shipped compiled.
fn check_cache(host: &Host, failed: &mut bool) {
    match host.compile_cache_dir() {
        Some(dir) => {
            let entries = std::fs::read_dir(dir)
                .map(|rd| {
                    rd.flatten()
                        .filter(|e| e.file_name().to_string_lossy().ends_with(".cwasm"))
                        .count()
                })
                .unwrap_or(0);
            check(
                writable(dir)
                    .map(|()| format!("{} ({entries} compiled plugins)", dir.display()))
                    .map_err(|e| {
                        (
                            format!("{}: {e}", dir.display()),
                            "pass --cache-dir (or OCHRE_CACHE_DIR) a dir you can write; without it plugins compile at every start".into(),
                        )
                    }),
                "compile cache",
                failed,
            );
        }
        None => crate::say!("  -     compile cache      off"),
    }
    if let Some(dir) = crate::shipped_compiled_dir() {
        let n = std::fs::read_dir(&dir).map_or(0, |rd| rd.count());
        crate::say!("  ok    shipped plugins    {} ({n} compiled plugins)", dir.display());
    }
}

/// `ochre doctor`: what became of each plugin.
fn check_plugins(host: &Host, failed: &mut bool) {
    for p in host.plugins() {
        let what = format!("plugin {}", p.name);
        match &p.status {
            PluginStatus::Loaded => {
                check(Ok(format!("loaded ({} tools, {})", p.tools.len(), p.source)), &what, failed)
            }
            PluginStatus::Disabled => {
                crate::say!("  -     {what:<18} disabled (its group is excluded)")
            }
            PluginStatus::Refused(why) => check(
                Err((
                    format!("not loaded: {why}"),
                    "see the reason; `ochre plugins list` shows every plugin".into(),
                )),
                &what,
                failed,
            ),
        }
    }
}

/// `ochre doctor`: the browser starts and answers.
async fn check_browser(host: &Host, failed: &mut bool) {
    let browser = host.browser();
    let exe = browser.executable();
    let started = std::time::Instant::now();
    let version = match &exe {
        Ok(_) => browser.version().await,
        Err(e) => Err(e.clone()),
    };
    check(
        version
            .map(|v| {
                let at = match &exe {
                    Ok(Some(p)) => p.display().to_string(),
                    _ => "--cdp-endpoint".into(),
                };
                format!(
                    "{v} at {at} (started and answered in {} ms)",
                    started.elapsed().as_millis()
                )
            })
            .map_err(|e| {
                let (what, fix) = match e.message.split_once("; ") {
                    Some((w, f)) => (w.to_owned(), f.to_owned()),
                    None => (e.message.clone(), "see the message".to_owned()),
                };
                (what, fix)
            }),
        "browser",
        failed,
    );
    if matches!(exe, Ok(None)) {
        for e in browser.pool_status().await {
            let state = if e.up {
                let latency =
                    e.latency_ms.map(|ms| format!(", answers in {ms} ms")).unwrap_or_default();
                let cap = e.capacity.map(|c| format!(" of {c}")).unwrap_or_default();
                Ok(format!("up{latency}, {} sessions{cap}", e.sessions))
            } else {
                Err((
                    format!("down: {}", e.down_reason.unwrap_or_default()),
                    "start that browser, or drop the endpoint".into(),
                ))
            };
            check(state, &format!("endpoint {}", e.endpoint), failed);
        }
    }
}
