//! Recordings that replay real flows (issue: record once, replay anywhere): a
//! login and a "create a record" flow on the admin app (Flask-Admin over
//! SQLite, from PyPI at test time), recorded through MCP, replayed with new
//! parameters and a secret from ochre's store; every effect checked in the
//! database. And no secret in anything ochre wrote or answered.

use std::sync::{Arc, Mutex};

use anyhow::Result;
use ochre_tests::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery staple";
const TOTP_SECRET: &str = "JBSWY3DPEHPK3PXP";

/// A client whose every answer is kept, to look for secrets in them.
struct Agent {
    client: Client,
    answers: Mutex<Vec<String>>,
}

impl Agent {
    async fn call(&self, name: &str, args: Value) -> Result<CallToolResult> {
        let r = self.client.tool(name, args).await?;
        self.answers.lock().expect("answers").push(serde_json::to_string(&r)?);
        Ok(r)
    }
    async fn ok(&self, name: &str, args: Value) -> Result<Value> {
        Ok(structured(&self.call(name, args).await?))
    }
    async fn text(&self, name: &str, args: Value) -> Result<String> {
        let r = self.call(name, args).await?;
        assert_ne!(r.is_error, Some(true), "{name} failed: {r:?}");
        Ok(texts(&r))
    }
    async fn err(&self, name: &str, args: Value) -> Result<Value> {
        Ok(error_of(&self.call(name, args).await?))
    }
    async fn snapshot(&self) -> Result<String> {
        self.text("read_page", json!({})).await
    }
    async fn click(&self, role: &str, name: &str) -> Result<()> {
        let r = ref_of(&self.snapshot().await?, role, name);
        let t = self.text("interact", json!({"ref": r})).await?;
        assert!(t.starts_with("clicked"), "{t}");
        Ok(())
    }
}

/// A client whose user answers elicitations: a secret on ochre's page (URL
/// mode), opened in a real browser (Playwright from PyPI) where the person
/// types the admin password; with `url: false`, a client with form mode only.
struct AsksUser {
    asked: Arc<Mutex<Vec<Value>>>,
    url: bool,
    people: Arc<Mutex<Vec<std::process::Child>>>,
}

impl rmcp::ClientHandler for AsksUser {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        eliciting_client("asks-user", self.url)
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let seen = serde_json::to_value(&request).unwrap_or_default();
        self.asked.lock().expect("asked").push(seen.clone());
        let fail = |e: String| rmcp::ErrorData::internal_error(e, None);
        if let Some(url) = seen["url"].as_str() {
            // The person opens the page: their browser sends the password to
            // ochre. The client only says the user agreed to go there.
            let child = person_answers(url, PASSWORD, None).map_err(|e| fail(e.to_string()))?;
            self.people.lock().expect("people").push(child);
            return Ok(rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept));
        }
        Ok(rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
            .with_content(json!({"password": PASSWORD})))
    }
}

/// The rows of the book table, by title.
fn titles(app: &AdminApp) -> Result<Vec<Value>> {
    app.rows("select title from book order by id")
}

#[tokio::test]
async fn a_recorded_login_and_create_replays_with_new_values_and_a_stored_secret() -> Result<()> {
    let dir = TempDir::new("rec-admin-app");
    let app = AdminApp::start(dir.path()).await?;
    let data = TempDir::new("rec-admin");
    ok(ochre_cli(data.path(), &["secret", "set", "admin_password", "--value", PASSWORD])?);
    ok(ochre_cli(
        data.path(),
        &["totp", "add", "--domain", "example.com", "--secret", TOTP_SECRET],
    )?);
    let stderr = dir.path().join("ochre-stderr.log");
    let client = stdio_client_logged((), data.path(), &[], &[], &stderr).await?;
    let agent = Agent { client, answers: Mutex::new(Vec::new()) };

    // Record: sign in, create a book.
    let started = agent.ok("oc_recording_start", json!({"label": "add a book"})).await?;
    let id = started["recordingId"].as_str().expect("id").to_owned();
    agent.call("navigate", json!({"url": format!("{}/admin/book/", app.base)})).await?;
    agent
        .text(
            "fill_form",
            json!({"fields": {"Username": "admin", "Password": PASSWORD}, "submit": true}),
        )
        .await?;
    agent.click("link", "Create").await?;
    agent
        .text(
            "fill_form",
            json!({"fields": {"Title": "Neuromancer", "Author": "William Gibson", "Year": "1984"}}),
        )
        .await?;
    agent.click("button", "Save").await?;
    agent.text("wait_for", json!({"type": "selector", "value": "table"})).await?;
    let stopped = agent.ok("oc_recording_stop", json!({})).await?;
    // navigate, fill_form, read_page, interact, fill_form, read_page, interact, wait_for
    assert_eq!(stopped["steps"], 8, "{stopped}");
    assert_eq!(titles(&app)?, [json!(["Dune"]), json!(["Neuromancer"])]);

    // What it keeps: the values typed as parameters, the password by name only.
    let export =
        agent.ok("oc_recording_export", json!({"recordingId": id, "format": "json"})).await?;
    let params = &export["meta"]["params"];
    let param = |name: &str| -> Value {
        params
            .as_array()
            .expect("params")
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(param("title")["default"], "Neuromancer", "{params}");
    assert_eq!(param("username")["default"], "admin", "{params}");
    assert_eq!(param("password")["secret"], true, "{params}");
    assert!(param("password").get("default").is_none(), "{params}");
    assert_eq!(export["steps"][7]["args"]["value"], "table", "a recorded wait keeps its selector");
    let login = &export["steps"][1]["args"]["fields"];
    assert_eq!(login["Password"], "{{password}}", "{login}");
    assert_eq!(login["Username"], "{{username=admin}}", "{login}");

    // A fresh database, signed out.
    app.exec("delete from book where title != 'Dune'")?;
    agent.call("navigate", json!({"url": format!("{}/logout", app.base)})).await?;

    // A missing parameter: refused before any step, naming it.
    let journal_before = journal_lines(data.path()).len();
    let e = agent.err("oc_recording_replay", json!({"recordingId": id})).await?;
    assert_eq!(e["code"], "MISSING_PARAMETERS", "{e}");
    assert_eq!(e["missing"], json!(["password"]), "{e}");
    let nested: Vec<Value> = journal_lines(data.path())
        .into_iter()
        .skip(journal_before)
        .filter(|l| l.get("parent").is_some())
        .collect();
    assert!(nested.is_empty(), "no step ran: {nested:?}");
    assert_eq!(titles(&app)?, [json!(["Dune"])]);

    // Replayed with a new title and the stored password.
    let replay = |title: &str| json!({"recordingId": id, "params": {"title": title, "password": "secret:admin_password"}});
    let r = agent.ok("oc_recording_replay", replay("Foundation")).await?;
    assert_eq!(r["ok"], true, "{r}");
    // How long the flow took the agent's calls, and the replay (for the record).
    let recorded_ms: u64 = export["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["duration_ms"].as_u64())
        .sum();
    eprintln!(
        "replay of the admin flow: {} ms; the recorded calls took {recorded_ms} ms (ratio {:.2})",
        r["ms"],
        r["ms"].as_f64().unwrap_or(0.0) / recorded_ms.max(1) as f64
    );
    assert_eq!(
        app.rows("select title, author, year from book order by id")?,
        [json!(["Dune", "Frank Herbert", 1965]), json!(["Foundation", "William Gibson", 1984])]
    );
    // Each step is journaled as a child of the replay.
    let lines = journal_lines(data.path());
    let replayed = lines.iter().rev().find(|l| l["tool"] == "oc_recording_replay").expect("replay");
    let children: Vec<&Value> = lines.iter().filter(|l| l["parent"] == replayed["seq"]).collect();
    let tools: Vec<&str> = children.iter().filter_map(|l| l["tool"].as_str()).collect();
    assert_eq!(
        tools,
        [
            "navigate",
            "fill_form",
            "read_page",
            "interact",
            "fill_form",
            "read_page",
            "interact",
            "wait_for"
        ],
        "{children:?}"
    );

    // A banner now pushes the form down: the replay finds its elements again.
    app.banner(true)?;
    agent.call("navigate", json!({"url": format!("{}/logout", app.base)})).await?;
    let r = agent.ok("oc_recording_replay", replay("Hyperion")).await?;
    assert_eq!(r["ok"], true, "{r}");
    assert!(titles(&app)?.contains(&json!(["Hyperion"])), "{:?}", titles(&app)?);
    app.banner(false)?;

    // Exported as a Playwright script, run with real Playwright (PyPI) on the
    // system Chromium against a fresh database: it creates the row.
    let export = agent
        .ok("oc_recording_export", json!({"recordingId": id, "format": "playwright-python"}))
        .await?;
    let script = std::path::PathBuf::from(export["path"].as_str().expect("path"));
    app.exec("delete from book where title != 'Dune'")?;
    let python = python_venv("playwright")?;
    let started = std::time::Instant::now();
    let run = std::process::Command::new(&python)
        .arg(&script)
        .env("PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH", chromium_bin()?)
        .env("PASSWORD", PASSWORD)
        .env("TITLE", "Dragonflight")
        .output()?;
    let script_ms = started.elapsed().as_millis();
    assert!(
        run.status.success(),
        "the exported script failed: {}\n{}",
        String::from_utf8_lossy(&run.stderr),
        std::fs::read_to_string(&script)?
    );
    assert_eq!(titles(&app)?, [json!(["Dune"]), json!(["Dragonflight"])]);
    // And as a @playwright/test spec (checked for its shape here; the Python
    // script is the one run).
    let spec = agent
        .ok("oc_recording_export", json!({"recordingId": id, "format": "playwright-test"}))
        .await?;
    let spec = std::fs::read_to_string(spec["path"].as_str().expect("path"))?;
    assert!(spec.contains("getByRole(\"link\", { name: \"Create\", exact: true })"), "{spec}");
    // The same flow replayed by ochre, for the record.
    app.exec("delete from book where title != 'Dune'")?;
    agent.call("navigate", json!({"url": format!("{}/logout", app.base)})).await?;
    let r = agent.ok("oc_recording_replay", replay("Dragonflight")).await?;
    assert_eq!(r["ok"], true, "{r}");
    eprintln!(
        "the exported Playwright script ran the flow in {script_ms} ms (its Python and browser start included); ochre's replay in {} ms",
        r["ms"]
    );

    // A TOTP code typed into a plain text field is masked in the answer and
    // in the page's snapshot.
    let code = agent.ok("oc_totp_generate", json!({"domain": "example.com"})).await?;
    let code = code["code"].as_str().expect("code").to_owned();
    let generated = agent.answers.lock().expect("answers").len() - 1;
    agent.call("navigate", json!({"url": format!("{}/admin/book/new/", app.base)})).await?;
    let title = ref_of(&agent.snapshot().await?, "textbox", "Title *");
    let set = agent.text("form_input", json!({"ref": title, "value": code})).await?;
    assert!(set.contains("=\"•••\""), "{set}");
    let snap = agent.snapshot().await?;
    assert!(snap.contains("textbox \"Title *\"") && snap.contains("•••"), "{snap}");

    // Nothing ochre wrote or answered holds a secret.
    let mut answers = agent.answers.lock().expect("answers").clone();
    answers.remove(generated); // the one answer that hands the code to the agent
    let written = text_except(data.path(), "secrets.json");
    let logged = std::fs::read_to_string(&stderr)?;
    for (what, text) in
        [("the data dir", written), ("stderr", logged), ("the answers", answers.join("\n"))]
    {
        for secret in [PASSWORD, TOTP_SECRET, code.as_str()] {
            let lines: Vec<&str> = text.lines().filter(|l| l.contains(secret)).take(3).collect();
            assert!(lines.is_empty(), "{what} holds a secret ({secret:?}): {lines:#?}");
        }
    }
    agent.client.cancel().await?;

    // A client that can ask its user by form only is not asked for the
    // password (the MCP specification forbids asking a credential by form):
    // the replay stops before its first step, saying why.
    let asked = Arc::new(Mutex::new(Vec::new()));
    let people = Arc::new(Mutex::new(Vec::new()));
    let user = AsksUser { asked: asked.clone(), url: false, people: people.clone() };
    let client = stdio_client_with(user, data.path(), &[], &[]).await?;
    app.exec("delete from book where title != 'Dune'")?;
    let err = client
        .tool_error(
            "oc_recording_replay",
            json!({"recordingId": id, "params": {"title": "Solaris"}}),
        )
        .await?;
    assert_eq!(err["code"], "MISSING_PARAMETERS", "{err}");
    let why = err["elicitation"].as_str().unwrap_or_default().to_owned();
    assert!(why.contains("URL-mode"), "{err}");
    assert!(asked.lock().expect("asked").is_empty(), "asked by form: {asked:?}");
    assert_eq!(titles(&app)?, [json!(["Dune"])]);
    client.cancel().await?;

    // A client with URL-mode elicitation sends its user to ochre's own page;
    // the person types the password there (a real browser); the replay then
    // creates the row. The password is in no MCP message (every byte both
    // ways captured at the client), no file and no log line.
    let wire = Arc::new(Mutex::new(Vec::new()));
    let user = AsksUser { asked: asked.clone(), url: true, people: people.clone() };
    let log = dir.path().join("ochre-url-stderr.log");
    let client = stdio_client_wiretapped(user, data.path(), &log, wire.clone()).await?;
    client.tool("navigate", json!({"url": format!("{}/logout", app.base)})).await?;
    let r = client
        .tool_json(
            "oc_recording_replay",
            json!({"recordingId": id, "params": {"title": "Solaris"}}),
        )
        .await?;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(titles(&app)?, [json!(["Dune"]), json!(["Solaris"])]);
    let asked = asked.lock().expect("asked").clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["mode"], "url", "{asked:?}");
    let page = asked[0]["url"].as_str().unwrap_or_default();
    assert!(page.starts_with("http://127.0.0.1:") && page.contains("/ask/"), "{asked:?}");
    assert!(asked[0]["message"].as_str().is_some_and(|m| m.contains("password")), "{asked:?}");
    for mut person in people.lock().expect("people").drain(..) {
        assert!(person.wait()?.success(), "the person's browser failed");
    }
    // The page is answered once: its link is dead now.
    let again = reqwest::get(page).await?;
    assert_eq!(again.status().as_u16(), 404);
    client.cancel().await?;
    let wire = String::from_utf8_lossy(&wire.lock().expect("wire")).into_owned();
    assert!(
        wire.contains("oc_recording_replay") && wire.contains("/ask/"),
        "the wiretap heard nothing"
    );
    assert!(!wire.contains(PASSWORD), "an MCP message carried the password");
    let logged = std::fs::read_to_string(&log)?;
    assert!(logged.contains("/ask/") || logged.contains("pages for people"), "the log is empty");
    assert!(!logged.contains(PASSWORD), "the log holds the password");
    let written = text_except(data.path(), "secrets.json");
    assert!(!written.contains(PASSWORD), "the elicited password was written somewhere");

    // The page is gone: the replay ends within its bound, naming the step.
    drop(app);
    let client = stdio_client(data.path(), &[], &[]).await?;
    let started = std::time::Instant::now();
    let r = client
        .tool_json(
            "oc_recording_replay",
            json!({"recordingId": id, "params": {"password": "secret:admin_password"}, "step_timeout_ms": 2000}),
        )
        .await?;
    assert_eq!(r["ok"], false, "{r}");
    let failure = &r["first_failure"];
    assert!(failure["step"].as_u64().is_some() && failure["tool"].is_string(), "{r}");
    assert!(failure["url"].is_string() && failure["message"].is_string(), "{r}");
    assert!(started.elapsed() < std::time::Duration::from_secs(40), "{:?}", started.elapsed());
    client.cancel().await?;
    Ok(())
}

/// The text of every file under `dir` but those named `skip` (the secret
/// store itself: where the operator put the secrets).
fn text_except(dir: &std::path::Path, skip: &str) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.push_str(&text_except(&p, skip));
        } else if p.file_name().is_some_and(|n| n != skip)
            && let Ok(bytes) = std::fs::read(&p)
        {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

/// Every journal line (calls and events), oldest first.
fn journal_lines(data: &std::path::Path) -> Vec<Value> {
    read_jsonl_dir(&data.join("journal"))
}

/// A value set with `cookies` or `storage` is a session token as often as not:
/// a recording keeps it as a secret parameter (no default, not on disk), and
/// every TOTP code of one site is that site's `{{totp:DOMAIN}}`, which a replay
/// resolves. The replay's effects are checked where they land: the cookie in
/// the request the server got, the stored value in the page's storage.
#[tokio::test]
async fn cookie_and_storage_values_and_totp_codes_are_secret_parameters() -> Result<()> {
    const COOKIE: &str = "ck-7f3a9e2b-session-token";
    const STORED: &str = "st-91c4d2-stored-token";
    let site = SiteServer::start().await?;
    let data = TempDir::new("rec-secret-args");
    // A one-second period, so that a second code differs from the first soon.
    let uri = format!("otpauth://totp/x?secret={TOTP_SECRET}&period=1");
    ok(ochre_cli(data.path(), &["totp", "add", "--domain", "example.com", "--secret", &uri])?);
    let client = stdio_client(data.path(), &[], &[]).await?;
    let agent = Agent { client, answers: Mutex::new(Vec::new()) };
    agent.call("navigate", json!({"url": site.url("form.html")})).await?;

    let started = agent.ok("oc_recording_start", json!({"label": "secret args"})).await?;
    let id = started["recordingId"].as_str().expect("id").to_owned();
    agent.text("cookies", json!({"action": "set", "name": "session", "value": COOKIE})).await?;
    agent
        .text(
            "storage",
            json!({"storageType": "local", "action": "set", "key": "auth", "value": STORED}),
        )
        .await?;
    let first = agent.ok("oc_totp_generate", json!({"domain": "example.com"})).await?;
    let first = first["code"].as_str().expect("code").to_owned();
    let snap = agent.snapshot().await?;
    let name = ref_of(&snap, "textbox", "Customer name:");
    agent.text("form_input", json!({"ref": name, "value": first})).await?;
    // The next code (a new one each second; bounded).
    let mut second = first.clone();
    for _ in 0..40 {
        let c = agent.ok("oc_totp_generate", json!({"domain": "example.com"})).await?;
        second = c["code"].as_str().expect("code").to_owned();
        if second != first {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_ne!(second, first, "no second code in 4 s with a 1 s period");
    let coupon = ref_of(&snap, "textbox", "Coupon code");
    agent.text("form_input", json!({"ref": coupon, "value": second})).await?;
    agent.ok("oc_recording_stop", json!({})).await?;

    let export =
        agent.ok("oc_recording_export", json!({"recordingId": id, "format": "json"})).await?;
    let params = export["meta"]["params"].as_array().cloned().unwrap_or_default();
    let by_name = |n: &str| params.iter().find(|p| p["name"] == n).cloned();
    for n in ["cookies_session", "storage_auth", "totp:example.com"] {
        let p = by_name(n).unwrap_or_else(|| panic!("no parameter {n}: {params:?}"));
        assert_eq!(p["secret"], true, "{p}");
        assert!(p.get("default").is_none_or(Value::is_null), "{p}");
    }
    let names: Vec<&str> = params.iter().filter_map(|p| p["name"].as_str()).collect();
    assert!(!names.iter().any(|n| n.ends_with("_2")), "{names:?}");
    let html =
        agent.ok("oc_recording_export", json!({"recordingId": id, "format": "html"})).await?;
    assert!(html["path"].is_string(), "{html}");
    let written = text_except(data.path(), "secrets.json");
    for secret in [COOKIE, STORED, first.as_str(), second.as_str()] {
        assert!(!written.contains(secret), "a secret value ({secret}) was written");
    }
    agent.client.cancel().await?;

    // The replay: new values for the cookie and the stored token; the codes
    // come from the server's TOTP secret for example.com.
    let client = stdio_client(data.path(), &[], &[]).await?;
    client.tool("navigate", json!({"url": site.url("form.html")})).await?;
    let r = client
        .tool_json(
            "oc_recording_replay",
            json!({"recordingId": id, "params": {"cookies_session": "replayed-cookie-1", "storage_auth": "replayed-store-1"}}),
        )
        .await?;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["steps_failed"], 0, "{r}");
    let read = |js: &str| client.tool_json("javascript_tool", json!({"code": js}));
    let v = read("[localStorage.getItem('auth'), document.querySelector('[name=custname]').value, document.querySelector('[name=coupon]').value]").await?;
    assert_eq!(v["value"][0], "replayed-store-1", "{v}");
    // Each field holds a code the server generated for example.com: a known
    // secret, masked in the answer.
    assert_eq!(v["value"][1], "•••", "{v}");
    assert_eq!(v["value"][2], "•••", "{v}");
    let lens = read("[...document.querySelectorAll('[name=custname], [name=coupon]')].map(e => /^[0-9]{6}$/.test(e.value))").await?;
    assert_eq!(lens["value"], json!([true, true]), "{lens}");
    read("fetch('/record?after=replay').then(r => r.status)").await?;
    site.expect_recorded("after=replay cookie=session=replayed-cookie-1").await?;
    client.cancel().await?;
    Ok(())
}
