//! A person in the loop: an agent hands a tab to a person (`oc_handoff`); the
//! person, played by real Playwright (PyPI) on the system Chromium, watches the
//! tab in ochre's live view, clicks and types in it and presses Done; the
//! agent's call returns with what changed. Checked where it lands: the
//! fixture site's server, the tab itself.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use ochre_tests::*;
use serde_json::{Value, json};

/// A client whose user opens the pages ochre sends them to (URL-mode
/// elicitation): it notes each URL and accepts.
#[derive(Clone, Default)]
struct Person {
    urls: Arc<Mutex<Vec<Value>>>,
}

impl rmcp::ClientHandler for Person {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        eliciting_client("person", true)
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        self.urls.lock().expect("urls").push(serde_json::to_value(&request).unwrap_or_default());
        Ok(rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept))
    }
}

/// The person at the live view: a Playwright script fed commands.
struct LiveView {
    child: std::process::Child,
    out: std::io::BufReader<std::process::ChildStdout>,
}

impl LiveView {
    /// Open `url`; the script compares the first picture with `reference`.
    fn open(url: &str, reference: &std::path::Path) -> Result<(Self, Value)> {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/people/live_person.py");
        let mut child = std::process::Command::new(python_venv("playwright")?)
            .arg(script)
            .arg(url)
            .arg(reference)
            .env("PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH", chromium_bin()?)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .context("start the person's browser")?;
        let out = std::io::BufReader::new(child.stdout.take().context("stdout")?);
        let mut view = Self { child, out };
        let first = view.line()?;
        Ok((view, first))
    }

    fn line(&mut self) -> Result<Value> {
        let mut line = String::new();
        if self.out.read_line(&mut line)? == 0 {
            bail!("the person's browser ended: {:?}", self.child.wait()?);
        }
        Ok(serde_json::from_str(&line)?)
    }

    fn say(&mut self, cmd: Value) -> Result<Value> {
        let stdin = self.child.stdin.as_mut().context("stdin")?;
        writeln!(stdin, "{cmd}")?;
        stdin.flush()?;
        self.line()
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The centre of the element `selector`, and the viewport's size (CSS px).
async fn centre(client: &impl ToolCalls, selector: &str) -> Result<(f64, f64, f64, f64)> {
    let code = format!(
        "(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); \
         return [r.x + r.width / 2, r.y + r.height / 2, innerWidth, innerHeight]; }})()"
    );
    let v = client.tool_json("javascript_tool", json!({"code": code})).await?;
    let n = |i: usize| v["value"][i].as_f64().context("a number");
    Ok((n(0)?, n(1)?, n(2)?, n(3)?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_takes_a_tab_over_in_the_live_view_and_the_agent_learns_what_changed() -> Result<()>
{
    let site = SiteServer::start().await?;
    let data = TempDir::new("live-view");
    let person = Person::default();
    let client = stdio_client_with(person.clone(), data.path(), &[], &[]).await?;
    navigate(&client, &site.url("handoff.html")).await?;
    let (ax, ay, vw, vh) = centre(&client, "#answer").await?;
    let (bx, by, _, _) = centre(&client, "#verify").await?;
    let shot = client.tool("page_screenshot", json!({})).await?;
    let png = shot.content.first().and_then(|c| c.as_image()).context("image")?.data.clone();
    let reference = data.path().join("reference.png");
    {
        use base64::Engine as _;
        std::fs::write(&reference, base64::engine::general_purpose::STANDARD.decode(png)?)?;
    }

    // A video of the tab records through the hand-off (the live view shares
    // its screencast, and leaving does not end it).
    let video = client.tool_json("page_video", json!({"action": "start"})).await?;
    assert_eq!(video["recording"], true, "{video}");

    // The agent asks for a person; the call waits while the client's user
    // is sent to the live view.
    let handoff = client.tool_json(
        "oc_handoff",
        json!({"reason": "a check only a person can pass", "timeout_ms": 120_000}),
    );
    let person_side = async {
        let url = loop {
            if let Some(r) = person.urls.lock().expect("urls").first().cloned() {
                break r;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(url["mode"], "url", "{url}");
        assert!(
            url["message"].as_str().is_some_and(|m| m.contains("a check only a person can pass")),
            "{url}"
        );
        let link = url["url"].as_str().context("url")?.to_owned();
        let token = link.rsplit('/').next().context("token")?.to_owned();
        assert_eq!(token.len(), 64, "{link}");

        // While the person holds the tab, the agent's calls on it are refused
        // and change nothing.
        let err = client.tool_error("read_page", json!({})).await?;
        assert_eq!(err["code"], "TAB_HELD", "{err}");
        let err = client.tool_error("navigate", json!({"url": site.url("page2.html")})).await?;
        assert_eq!(err["code"], "TAB_HELD", "{err}");
        // The link without its secret, or with another, is refused.
        let base = link.trim_end_matches(&token);
        let http = reqwest::Client::new();
        for bad in [
            base.to_owned(),
            format!("{base}{}", "0".repeat(64)),
            format!("{base}{}", &token[..63]),
        ] {
            let r = http.get(&bad).send().await?;
            assert_eq!(r.status().as_u16(), 404, "{bad}");
        }
        let r = http
            .post(format!("{base}{}/input", "0".repeat(64)))
            .body(r#"{"events":[{"type":"text","text":"x"}]}"#)
            .send()
            .await?;
        assert_eq!(r.status().as_u16(), 404);

        // The person's view shows the tab's page.
        let (mut view, first) = tokio::task::block_in_place(|| LiveView::open(&link, &reference))?;
        let compare = &first["compare"];
        let diff = compare["diff"].as_f64().context("diff")?;
        let from_white = compare["from_white"].as_f64().context("from_white")?;
        assert!(diff < 12.0, "the live picture differs from the tab's screenshot: {first}");
        assert!(from_white > 3.0 * diff, "the picture is nearly blank: {first}");
        tokio::task::block_in_place(|| -> Result<()> {
            let vp = json!([vw, vh]);
            view.say(json!({"click": [ax, ay], "viewport": vp}))?;
            view.say(json!({"type": "blue42"}))?;
            view.say(json!({"click": [bx, by], "viewport": vp}))?;
            Ok(())
        })?;
        // The click and the typed text reached the page: its server has them.
        site.expect_recorded("answer=blue42").await?;
        let done = tokio::task::block_in_place(|| view.say(json!({"done": true})))?;
        assert!(done["done"].as_str().is_some_and(|s| s.starts_with("Done")), "{done}");
        // Ended: the link no longer works.
        let r = http.get(&link).send().await?;
        assert_eq!(r.status().as_u16(), 404);
        anyhow::Ok(())
    };
    let (answer, person_side) = tokio::join!(handoff, person_side);
    person_side?;
    let answer = answer?;
    assert_eq!(answer["status"], "done", "{answer}");
    assert_eq!(answer["done"], true);
    assert_eq!(answer["title"], "Verified", "{answer}");
    assert_eq!(answer["title_changed"], true);
    assert_eq!(answer["url_changed"], false);
    let new_text: Vec<&str> = answer["new_text"]
        .as_array()
        .context("new_text")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(new_text.contains(&"Verified: blue42"), "{answer}");
    // The tab is the agent's again.
    let page = snapshot(&client).await?;
    assert!(page.contains("Verified: blue42"), "{page}");
    // The video went on after the person left: the page the agent opens
    // next, then turns red, is painted into it (the frame shown in the middle
    // of the red stretch, held 600 ms, is red).
    navigate(&client, &site.url("colours.html")).await?;
    let held = json!({"type": "selector", "value": "#held:not([hidden])"});
    client.tool_text("wait_for", held.clone()).await?;
    let snap = snapshot(&client).await?;
    client.tool_text("interact", json!({"ref": ref_of(&snap, "button", "Turn red")})).await?;
    let red_from = now_unix();
    client.tool_text("wait_for", held).await?;
    let red = f64::midpoint(red_from, now_unix());
    let out = client.tool_json("page_video", json!({"action": "stop"})).await?;
    let v = &out["video"];
    assert!(v["ended_by"].is_null(), "{out}");
    let path = v["path"].as_str().context("path")?;
    let checks = json!([{"what": "red", "at": red}]);
    let read = read_video(path, v["started_at"].as_str().unwrap_or(""), &checks)?;
    let rgb: Vec<u64> = read["checks"][0]["rgb"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
        .collect();
    assert!(
        rgb.len() == 3 && rgb[0] > 200 && rgb[2] < 60,
        "the video stopped with the live view (not red after it closed): {read}"
    );
    client.cancel().await?;
    Ok(())
}

/// Over HTTP, a client without URL-mode elicitation gets the link (on the
/// MCP server's own port) in the answer, and waits for the person with
/// `handoffId`.
#[tokio::test]
async fn without_url_elicitation_the_link_is_in_the_answer_and_the_agent_waits_by_id() -> Result<()>
{
    let site = SiteServer::start().await?;
    let data = TempDir::new("live-answer");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let client = server.client().await?;
    navigate(&client, &site.url("handoff.html")).await?;
    let started =
        client.tool_json("oc_handoff", json!({"reason": "sign-on", "timeout_ms": 60_000})).await?;
    assert_eq!(started["status"], "waiting", "{started}");
    let id = started["handoffId"].as_str().context("id")?.to_owned();
    let link = started["url"].as_str().context("url")?.to_owned();
    let own = format!("http://127.0.0.1:{}/live/", server.port);
    assert!(link.starts_with(&own), "{link}");
    let err = client.tool_error("find", json!({"query": "Verify"})).await?;
    assert_eq!(err["code"], "TAB_HELD", "{err}");

    // Not done yet: a short wait says so.
    let r = client.tool_json("oc_handoff", json!({"handoffId": id, "timeout_ms": 1000})).await?;
    assert_eq!(r["status"], "waiting", "{r}");
    // The page serves, its input reaches the tab, Done ends it.
    let http = reqwest::Client::new();
    let page = http.get(&link).send().await?;
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().await?.contains("sign-on"));
    let r =
        http.post(format!("{link}/input")).body(r#"{"events":[{"type":"bogus"}]}"#).send().await?;
    assert_eq!(r.status().as_u16(), 400, "bad input is refused");
    let r =
        http.post(format!("{link}/done")).header("Origin", "http://evil.example").send().await?;
    assert_eq!(r.status().as_u16(), 403, "Done from another site is refused");
    let r = http.get(&link).header("Host", "evil.example").send().await?;
    assert_eq!(r.status().as_u16(), 403, "another Host (DNS rebinding) is refused");
    let r = http.post(format!("{link}/done")).send().await?;
    assert_eq!(r.status().as_u16(), 200);
    let r = client.tool_json("oc_handoff", json!({"handoffId": id})).await?;
    assert_eq!(r["status"], "done", "{r}");
    assert_eq!(r["title_changed"], false, "{r}");
    // Told once: the id is gone; the tab is free.
    let err = client.tool_error("oc_handoff", json!({"handoffId": id})).await?;
    assert_eq!(err["code"], "HANDOFF_NOT_FOUND", "{err}");
    let err = client.tool_error("oc_handoff", json!({})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    snapshot(&client).await?;
    drop(site);
    client.cancel().await?;
    Ok(())
}

/// A person demonstrates a flow in the live view (Record, their clicks and
/// typing, Stop, Done) on the admin app: it is an ordinary recording (targets
/// by role and name, values as parameters, the password a secret by name),
/// replays on a fresh database and exports a Playwright script that passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_demonstration_in_the_live_view_replays_and_exports_like_any_recording() -> Result<()> {
    const PASSWORD: &str = "correct horse battery staple";
    let dir = TempDir::new("demo-admin-app");
    let app = AdminApp::start(dir.path()).await?;
    let titles = || app.rows("select title from book order by id");
    let data = TempDir::new("demo-admin");
    ok(ochre_cli(data.path(), &["secret", "set", "admin_password", "--value", PASSWORD])?);
    let person = Person::default();
    let client = stdio_client_with(person.clone(), data.path(), &[], &[]).await?;
    navigate(&client, &format!("{}/admin/book/", app.base)).await?;
    let v =
        client.tool_json("javascript_tool", json!({"code": "[innerWidth, innerHeight]"})).await?;
    let (vw, vh) = (v["value"][0].to_string(), v["value"][1].to_string());

    let handoff = client.tool_json(
        "oc_handoff",
        json!({"reason": "show me how to add a book", "timeout_ms": 90_000}),
    );
    let person_side = async {
        let url = loop {
            if let Some(r) = person.urls.lock().expect("urls").first().cloned() {
                break r["url"].as_str().unwrap_or_default().to_owned();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/people/demo_person.py");
        let out = tokio::process::Command::new(python_venv("playwright")?)
            .arg(script)
            .args([url.as_str(), app.base.as_str(), vw.as_str(), vh.as_str()])
            .env("PASSWORD", PASSWORD)
            .env("TITLE", "Solaris")
            .env("PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH", chromium_bin()?)
            .output()
            .await?;
        anyhow::ensure!(
            out.status.success(),
            "the person's demonstration failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        anyhow::Ok(())
    };
    let (answer, person_side) = tokio::join!(handoff, person_side);
    person_side?;
    let answer = answer?;
    assert_eq!(answer["status"], "done", "{answer}");
    let id = answer["recordingId"].as_str().context("recordingId")?.to_owned();
    // What the person did happened: the row is there.
    let rec = data.path().join("recordings").join(&id);
    let steps = std::fs::read_to_string(rec.join("actions.jsonl")).unwrap_or_default();
    assert_eq!(titles()?, [json!(["Dune"]), json!(["Solaris"])], "{steps}");

    // An ordinary recording: steps by role and name, the title a parameter
    // with its value, the password a secret by name and in no file.
    let meta: Value = serde_json::from_slice(&std::fs::read(rec.join("meta.json"))?)?;
    let params = meta["params"].as_array().context("params")?;
    let param = |n: &str| params.iter().find(|p| p["name"] == n).cloned().unwrap_or_default();
    assert_eq!(param("password")["secret"], true, "{meta}");
    assert_eq!(param("title")["default"], "Solaris", "{meta}");
    let tools: Vec<String> = steps
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|s| s["tool"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(tools.first().map(String::as_str), Some("navigate"), "{steps}");
    assert!(
        tools.iter().any(|t| t == "form_input") && tools.iter().any(|t| t == "interact"),
        "{steps}"
    );
    assert!(steps.contains("\"role\":\"button\"") && steps.contains("Save"), "{steps}");
    // (`secrets.json` is where the operator stored it.)
    for f in walk(data.path()) {
        let text = std::fs::read(&f).map(|b| String::from_utf8_lossy(&b).into_owned());
        if f.file_name().is_some_and(|n| n != "secrets.json") {
            assert!(
                !text.unwrap_or_default().contains(PASSWORD),
                "{} holds the password",
                f.display()
            );
        }
    }

    // Replayed on a fresh database, signed out: the row appears.
    app.exec("delete from book where title != 'Dune'")?;
    navigate(&client, &format!("{}/logout", app.base)).await?;
    let r = client
        .tool_json(
            "oc_recording_replay",
            json!({"recordingId": id, "params": {"title": "Hyperion", "password": "secret:admin_password"}}),
        )
        .await?;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(titles()?, [json!(["Dune"]), json!(["Hyperion"])]);

    // Exported to Playwright and run on a fresh database: it passes.
    let export = client
        .tool_json("oc_recording_export", json!({"recordingId": id, "format": "playwright-python"}))
        .await?;
    let script = std::path::PathBuf::from(export["path"].as_str().context("path")?);
    app.exec("delete from book where title != 'Dune'")?;
    let run = std::process::Command::new(python_venv("playwright")?)
        .arg(&script)
        .env("PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH", chromium_bin()?)
        .env("PASSWORD", PASSWORD)
        .env("TITLE", "Dragonflight")
        .output()?;
    assert!(
        run.status.success(),
        "the exported script failed: {}\n{}",
        String::from_utf8_lossy(&run.stderr),
        std::fs::read_to_string(&script)?
    );
    assert_eq!(titles()?, [json!(["Dune"]), json!(["Dragonflight"])]);
    client.cancel().await?;
    Ok(())
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A client whose user answers form elicitations with `{"note": ...}` and
/// opens URL ones in a real browser, typing the secret there.
#[derive(Clone, Default)]
struct Answers {
    asked: Arc<Mutex<Vec<Value>>>,
}

const PLAN_SECRET: &str = "plan-secret-7731";

impl rmcp::ClientHandler for Answers {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        eliciting_client("answers", true)
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let seen = serde_json::to_value(&request).unwrap_or_default();
        self.asked.lock().expect("asked").push(seen.clone());
        let accept = rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept);
        let Some(url) = seen["url"].as_str() else {
            return Ok(accept.with_content(json!({"note": "from-the-form"})));
        };
        person_answers(url, PLAN_SECRET, Some("ada@example.com"))
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
        Ok(accept)
    }
}

/// A plan missing a secret and a plain value: the secret is asked on ochre's
/// page (URL mode, typed in a real browser), the plain value by form; the
/// plan then runs with both (checked at the page's server).
#[tokio::test]
async fn a_plan_asks_its_secret_on_ochres_page_and_the_rest_by_form() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("plan-secret");
    let user = Answers::default();
    let client = stdio_client_with(user.clone(), data.path(), &[], &[]).await?;
    navigate(&client, &site.url("handoff.html")).await?;
    let steps = json!([
        {"tool": "fill_form", "args": {"fields": {"Answer": "{{api_token}}:{{note}}"}}},
        {"tool": "interact", "args": {"query": "Verify button"}}
    ]);
    client.tool_json("workflow_save_plan", json!({"planId": "check", "steps": steps})).await?;
    let r = client.tool_json("execute_plan", json!({"planId": "check", "tabId": "t1"})).await?;
    assert_eq!(r["ok"], true, "{r}");
    let sent = site.expect_recorded(&format!("answer={PLAN_SECRET}:from-the-form")).await?;
    assert!(!sent.is_empty());
    let asked = user.asked.lock().expect("asked").clone();
    let modes: Vec<&str> = asked.iter().map(|a| a["mode"].as_str().unwrap_or("form")).collect();
    assert_eq!(modes, ["url", "form"], "{asked:?}");
    assert_eq!(asked[1]["requestedSchema"]["required"], json!(["note"]), "{asked:?}");
    client.cancel().await?;
    Ok(())
}

/// No credential of that name is stored: a client with URL-mode elicitation
/// sends its user to ochre's page, where they type a username and password
/// for this page's origin; ochre types them into the form (the server gets
/// them) and neither is in the answer or stored.
#[tokio::test]
async fn a_credential_not_stored_is_asked_on_ochres_page_and_typed_once() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("cred-ask");
    let user = Answers::default();
    let client = stdio_client_with(user.clone(), data.path(), &[], &[]).await?;
    navigate(&client, &site.url("credential-form.html")).await?;
    let r = client.tool("oc_credential_fill", json!({"name": "shop", "submit": true})).await?;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let sent = site.expect_recorded(&format!("pw={PLAN_SECRET}")).await?;
    assert!(sent.contains("user=ada@example.com"), "{sent}");
    let answer = serde_json::to_string(&r)?;
    assert!(!answer.contains(PLAN_SECRET) && !answer.contains("ada@example.com"), "{answer}");
    let asked = user.asked.lock().expect("asked").clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["mode"], "url", "{asked:?}");
    assert!(asked[0]["message"].as_str().is_some_and(|m| m.contains(&site.base)), "{asked:?}");
    assert!(!data.path().join("credentials").join("shop.json").exists(), "it was stored");
    client.cancel().await?;
    Ok(())
}
