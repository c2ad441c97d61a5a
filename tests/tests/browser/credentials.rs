//! Origin-bound credentials over MCP: the operator stores them with the CLI
//! (the password on stdin), an agent names one, the host types it. On its
//! origin it signs in to the admin app (the app's own log of login requests
//! says so), the origin spelled any way a URL accepts; on the same app under another host name, and in a frame from
//! another site inside a page of its origin, it is refused with both origins
//! named and nothing reaches a server. The password is in no answer, journal,
//! trace, recording or log (the server logs at debug, Chromium's protocol at
//! trace).

use anyhow::{Context, Result, ensure};
use ochre_host::stores::logins::LoginKey;
use ochre_tests::*;
use serde_json::json;
use std::io::Write;

const APP_PASSWORD: &str = "correct horse battery staple";
const SITE_PASSWORD: &str = "pw-site-0123456789";

/// `ochre secret credential set NAME --origin ... --username USER`, the
/// password on stdin.
fn store(
    data: &std::path::Path,
    key: &str,
    name: &str,
    origins: &[&str],
    user: &str,
    password: &str,
) -> Result<()> {
    let mut cmd = std::process::Command::new(ochre_bin());
    cmd.arg("--data-dir").arg(data).args(["secret", "credential", "set", name, "--username", user]);
    for o in origins {
        cmd.args(["--origin", o]);
    }
    let mut child = cmd
        .env("OCHRE_LOGIN_KEY", key)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    child.stdin.take().context("stdin")?.write_all(format!("{password}\n").as_bytes())?;
    let out = child.wait_with_output()?;
    let said = String::from_utf8_lossy(&out.stderr);
    ensure!(out.status.success() && said.contains("stored the credential"), "{said}");
    Ok(())
}

fn login_rows(app: &AdminApp) -> Result<Vec<serde_json::Value>> {
    app.rows("select username, ok from login_log")
}

#[tokio::test]
async fn a_credential_signs_in_on_its_origin_only_and_its_password_is_shown_nowhere() -> Result<()>
{
    let dir = TempDir::new("creds-app");
    let app = AdminApp::start(dir.path()).await?;
    let site = SiteServer::start().await?;
    let data = TempDir::new("creds");
    let logs = TempDir::new("creds-log");
    let log = logs.path().join("stderr.log");
    let key = LoginKey::generate().map_err(anyhow::Error::msg)?.encoded();
    let elsewhere = |base: &str| base.replace("127.0.0.1", "localhost");
    // The admin app's origin as the operator might spell it: the scheme in
    // capitals, the address in hex (the same origin as a browser reads it).
    let spelled = app.base.replace("http://127.0.0.1", "HTTP://0x7F000001");
    store(data.path(), &key, "admin", &[&spelled], "admin", APP_PASSWORD)?;
    store(data.path(), &key, "site", &[&site.base], "shop@example.test", SITE_PASSWORD)?;
    let both = [site.base.as_str(), &elsewhere(&site.base)];
    store(data.path(), &key, "both", &both, "shop@example.test", SITE_PASSWORD)?;
    assert!(!read_all_text(data.path()).contains(SITE_PASSWORD), "a password in clear");

    let envs = [("OCHRE_LOGIN_KEY", key.as_str()), ("RUST_LOG", "debug,chromiumoxide=trace")];
    let client = stdio_client_logged((), data.path(), &[], &envs, &log).await?;
    let mut answers = String::new();
    client.tool_json("oc_recording_start", json!({"label": "credentials"})).await?;

    // The same app under another host name: refused, both origins named,
    // nothing typed, no login request.
    let look_alike = format!("{}/login", elsewhere(&app.base));
    navigate(&client, &look_alike).await?;
    let err =
        client.tool_error("oc_credential_fill", json!({"name": "admin", "submit": true})).await?;
    answers.push_str(&err.to_string());
    assert_eq!(err["code"], "ORIGIN_REFUSED", "{err}");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(message.contains(&app.base) && message.contains(&elsewhere(&app.base)), "{err}");
    let snap = snapshot(&client).await?;
    assert!(!snap.contains("value="), "something was typed on the look-alike: {snap}");
    assert!(login_rows(&app)?.is_empty(), "a login request reached the app");
    let err = client.tool_error("oc_credential_fill", json!({"name": "nobody"})).await?;
    assert_eq!(err["code"], "CREDENTIAL_NOT_FOUND", "{err}");

    // On its origin (asked for in yet another spelling, one number):
    // typed, submitted, signed in; the app saw one good login.
    navigate(&client, &format!("{}/login", app.base.replace("127.0.0.1", "2130706433"))).await?;
    let r = client.tool("oc_credential_fill", json!({"name": "admin", "submit": true})).await?;
    let said = texts(&r);
    answers.push_str(&said);
    answers.push_str(&structured(&r).to_string());
    assert!(said.starts_with("typed credential admin (username, password)"), "{said}");
    assert!(said.contains("submitted; now at"), "{said}");
    assert!(!said.contains("\"admin\""), "the username is told: {said}");
    assert_eq!(login_rows(&app)?, vec![json!(["admin", 1])]);
    navigate(&client, &format!("{}/admin/book/", app.base)).await?;
    let snap = snapshot(&client).await?;
    assert!(snap.contains("Dune"), "not signed in: {snap}");
    answers.push_str(&snap);

    // A frame from another site in a page of the credential's origin: refused.
    navigate(&client, &site.url("credential-frame.html")).await?;
    let err =
        client.tool_error("oc_credential_fill", json!({"name": "site", "submit": true})).await?;
    answers.push_str(&err.to_string());
    assert_eq!(err["code"], "ORIGIN_REFUSED", "{err}");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&site.base)
            && message.contains(&format!("in a frame) is on {}", elsewhere(&site.base))),
        "{err}"
    );
    // A credential bound to both origins is typed in that frame, whose form
    // reaches its server.
    let r = client.tool("oc_credential_fill", json!({"name": "both", "submit": true})).await?;
    answers.push_str(&texts(&r));
    let sent = site.expect_recorded("tag=credential").await?;
    assert!(sent.contains(&format!("pw={SITE_PASSWORD}")), "{sent}");
    assert!(sent.contains("user=shop@example.test"), "{sent}");
    assert_eq!(site.recorded().iter().filter(|r| r.contains("tag=credential")).count(), 1);

    client.tool("oc_recording_stop", json!({})).await?;
    client.cancel().await?;

    // No password in any answer, file of the data dir, or log line.
    let files = read_all_text(data.path());
    let logged = std::fs::read_to_string(&log)?;
    assert!(files.contains("oc_credential_fill"), "the calls are journaled");
    assert!(logged.contains("Runtime.evaluate"), "the protocol is in the log");
    for (what, text) in [("an answer", &answers), ("the data dir", &files), ("the log", &logged)] {
        for pw in [APP_PASSWORD, SITE_PASSWORD] {
            let line = text.lines().find(|l| l.contains(pw)).map(|l| l.replace(pw, "<PASSWORD>"));
            assert!(line.is_none(), "a password in {what}: {line:?}");
        }
    }
    Ok(())
}
