//! The page tools of the `core` group (refs, reading, acting, waiting) over MCP,
//! against real headless Chromium and the fixture sites.

use anyhow::Result;
use ochre_tests::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// The first text content of a successful result.
fn text(res: &CallToolResult) -> String {
    assert_ne!(res.is_error, Some(true), "the call failed: {res:?}");
    res.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default()
}

async fn js(client: &Client, code: &str) -> Result<Value> {
    let res = client.tool("javascript_tool", json!({"code": code})).await?;
    Ok(res.structured_content.clone().expect("structured")["value"].clone())
}

fn base64_decode(s: &str) -> Vec<u8> {
    data_encoding::BASE64.decode(s.as_bytes()).expect("base64")
}

#[tokio::test]
async fn read_page_gives_refs_and_refs_go_stale() -> Result<()> {
    let (site, _data, client, snap) = open_page("read-page", &[], "form.html").await?;
    assert!(snap.starts_with(&site.url("form.html")), "{snap}");
    // Every control has a ref, with its label as name.
    for (role, name) in [
        ("textbox", "Customer name:"),
        ("textbox", "Telephone:"),
        ("textbox", "E-mail address:"),
        ("radio", "Small"),
        ("radio", "Large"),
        ("checkbox", "Extra Cheese"),
        ("combobox", "Crust:"),
        ("textbox", "Delivery instructions:"),
        ("textbox", "Coupon code"),
        ("button", "Submit order"),
    ] {
        ref_of(&snap, role, name);
    }
    assert!(snap.contains("group") || snap.contains("\"Pizza Size\""), "{snap}");
    let refs = snap.matches(" ax_").count();
    let controls =
        js(&client, "document.querySelectorAll('input,select,textarea,button').length").await?;
    assert_eq!(refs as u64, controls.as_u64().expect("count"), "{snap}");
    assert!(snap.contains("combobox \"Crust:\" ax_"), "{snap}");
    assert!(snap.contains("=\"Thin crust\""), "select value shown: {snap}");

    // The same element keeps its ref across snapshots.
    let again = snapshot(&client).await?;
    assert_eq!(ref_of(&snap, "textbox", "Telephone:"), ref_of(&again, "textbox", "Telephone:"));

    // Filters and modes.
    let inter = client.tool_text("read_page", json!({"filter": "interactive"})).await?;
    assert!(!inter.contains("\"Pizza Size\""), "{inter}");
    assert_eq!(inter.matches(" ax_").count(), refs);
    let md = client.tool_text("read_page", json!({"mode": "markdown"})).await?;
    assert!(md.contains("Customer name:"), "{md}");
    let txt = client.tool_text("read_page", json!({"mode": "text"})).await?;
    assert!(txt.contains("Pizza Toppings"), "{txt}");
    let dom = client.tool_text("read_page", json!({"mode": "dom", "maxChars": 300})).await?;
    assert!(dom.contains("<form") || dom.contains("<html"), "{dom}");
    assert!(dom.contains("cut at"), "{dom}");
    let name_ref = ref_of(&snap, "textbox", "Customer name:");
    let sub = client.tool_text("read_page", json!({"ref_id": name_ref})).await?;
    assert_eq!(sub.lines().count(), 2, "scoped to one element: {sub}");

    // Bad refs: malformed, never given out, stale after a reload, removed.
    let err = client.tool_error("form_input", json!({"ref": "12", "value": "x"})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    let err = client.tool_error("form_input", json!({"ref": "ax_99999", "value": "x"})).await?;
    assert_eq!(err["code"], "REF_NOT_FOUND", "{err}");
    let phone = ref_of(&snap, "textbox", "Telephone:");
    js(&client, "document.querySelector('[name=custtel]').remove(); 1").await?;
    let err = client.tool_error("form_input", json!({"ref": phone, "value": "1"})).await?;
    assert_eq!(err["code"], "STALE_REF", "{err}");
    assert!(err["message"].as_str().expect("msg").contains("read_page"), "{err}");
    client.tool("page_reload", json!({})).await?;
    let err = client.tool_error("form_input", json!({"ref": name_ref, "value": "x"})).await?;
    assert_eq!(err["code"], "STALE_REF", "{err}");
    // The rejected calls changed nothing.
    assert_eq!(js(&client, "document.querySelector('[name=custname]').value").await?, "");
    // A fresh snapshot gives new, working refs (new numbers, never reused).
    let fresh = snapshot(&client).await?;
    let new_ref = ref_of(&fresh, "textbox", "Customer name:");
    assert_ne!(new_ref, name_ref);
    let out = client.tool_text("form_input", json!({"ref": new_ref, "value": "Ada"})).await?;
    assert!(out.contains("=\"Ada\""), "{out}");

    // Unknown tab.
    let err = client.tool_error("read_page", json!({"tabId": "t9"})).await?;
    assert_eq!(err["code"], "TAB_NOT_FOUND", "{err}");
    Ok(())
}

#[tokio::test]
async fn find_and_query_dom() -> Result<()> {
    let (_site, _data, client) = site_at("find", &[], "form.html").await?;

    let found = client.tool_text("find", json!({"query": "Submit order"})).await?;
    assert!(
        found.lines().next().expect("a match").starts_with("button \"Submit order\" ax_"),
        "{found}"
    );
    let found = client.tool_text("find", json!({"query": "email field"})).await?;
    assert!(found.lines().next().expect("a match").contains("E-mail address"), "{found}");
    let none = client.tool_text("find", json!({"query": "zzqx"})).await?;
    assert!(none.starts_with("nothing matches"), "{none}");

    let q = client.tool("query_dom", json!({"selector": "input[name=custname]"})).await?;
    let m = q.structured_content.clone().expect("structured");
    assert_eq!(m["matches"][0]["tag"], "input", "{m}");
    let r = m["matches"][0]["ref"].as_str().expect("ref").to_owned();
    client.tool_text("form_input", json!({"ref": r, "value": "Grace"})).await?;
    assert_eq!(js(&client, "document.querySelector('[name=custname]').value").await?, "Grace");

    let q = client.tool("query_dom", json!({"method": "xpath", "selector": "//legend"})).await?;
    let m = q.structured_content.clone().expect("structured");
    assert_eq!(m["matches"].as_array().expect("list").len(), 2, "{m}");
    assert_eq!(m["matches"][1]["text"], "Pizza Toppings");

    let err = client.tool_error("query_dom", json!({"selector": "input[[["})).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("selector")),
        "{err}"
    );
    let err = client.tool_error("query_dom", json!({"xpath": "//*[@"})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    let err = client.tool_error("query_dom", json!({})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    Ok(())
}

#[tokio::test]
async fn fill_form_submits_to_the_echo_endpoint() -> Result<()> {
    let (_site, data, client) = site_at("fill", &[], "form.html").await?;

    // One unknown field: nothing is filled.
    let err = client
        .tool_error("fill_form", json!({"fields": {"Customer name": "Ada", "Shoe size": "42"}}))
        .await?;
    assert_eq!(err["code"], "FIELD_NOT_FOUND", "{err}");
    assert!(err["message"].as_str().expect("msg").contains("Shoe size"), "{err}");
    assert_eq!(js(&client, "document.querySelector('[name=custname]').value").await?, "");
    // A bad option: nothing is filled either.
    let err = client
        .tool_error("fill_form", json!({"fields": {"Customer name": "Ada", "Crust": "Square"}}))
        .await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    assert_eq!(js(&client, "document.querySelector('[name=custname]').value").await?, "");

    let res = client
        .tool(
            "fill_form",
            json!({
                "fields": {
                    "Customer name": "Ada Lovelace",
                    "custtel": "555-0100",
                    "E-mail address": "ada@example.com",
                    "size": "Medium",
                    "topping": ["bacon", "Onion"],
                    "Crust": "Thick crust",
                    "Delivery instructions": "ring twice",
                    "Coupon code": "PI"
                },
                "submit": true,
                "intent": "order a pizza"
            }),
        )
        .await?;
    let out = text(&res);
    assert!(out.contains("filled 9 fields"), "{out}");
    assert!(out.contains("submitted; now at") && out.contains("/echo"), "{out}");
    let posted = js(&client, "document.getElementById('posted').textContent").await?;
    let posted = posted.as_str().expect("posted");
    for part in [
        "custname=Ada+Lovelace",
        "custtel=555-0100",
        "custemail=ada%40example.com",
        "size=medium",
        "topping=bacon",
        "topping=onion",
        "crust=thick",
        "comments=ring+twice",
        "coupon=PI",
    ] {
        assert!(posted.contains(part), "{part} not in {posted}");
    }
    assert!(!posted.contains("topping=cheese"), "{posted}");
    // Values never reach the journal.
    let journal = read_all_text(&data.path().join("journal"));
    assert!(!journal.contains("Ada Lovelace"), "{journal}");
    assert!(journal.contains("order a pizza"));
    Ok(())
}

#[tokio::test]
async fn interact_recovers_clicks_and_escalates_to_a_human() -> Result<()> {
    let (_site, _data, client, snap) = open_page("interact", &[], "interactive.html").await?;
    let status = || js(&client, "document.getElementById('status').textContent");

    // A plain click, verified by what it changed.
    let change = ref_of(&snap, "button", "Change text");
    let out = client.tool_text("interact", json!({"ref": change, "action": "click"})).await?;
    assert!(out.starts_with("clicked button \"Change text\""), "{out}");
    assert!(out.contains("Button was clicked"), "{out}");
    assert!(!out.contains("via"), "the first strategy worked: {out}");
    assert_eq!(status().await?, "Button was clicked");

    // Under an overlay that stays: a person's click would reach the overlay, so
    // the click is refused naming it, after the wait, and nothing happened.
    let covered = ref_of(&snap, "button", "Covered action");
    let r = client.tool("interact", json!({"ref": covered, "timeout": 600})).await?;
    let err = error_of(&r);
    assert_eq!(err["code"], "ELEMENT_NOT_INTERACTABLE", "{err}");
    assert!(err["message"].as_str().unwrap_or("").contains("div#overlay"), "{err}");
    assert_eq!(status().await?, "Button was clicked", "the covered button must not be clicked");

    // Keyboard only.
    let out = client.tool_text("interact", json!({"query": "Keyboard only"})).await?;
    assert!(out.contains("via keyboard Enter"), "{out}");
    assert_eq!(status().await?, "Keyboard widget worked");

    // Nothing works: an honest escalation, with the intent and a screenshot.
    let dead = ref_of(&snap, "button", "Dead control");
    let res =
        client.tool("interact", json!({"ref": dead, "intent": "press the dead control"})).await?;
    assert_ne!(res.is_error, Some(true));
    let p = res.structured_content.clone().expect("structured");
    assert_eq!(p["needs_human"], true, "{p}");
    assert_eq!(p["intent"], "press the dead control", "{p}");
    assert_eq!(p["target"]["name"], "Dead control");
    assert_eq!(p["target"]["role"], "button");
    let tried: Vec<&str> = p["strategies_tried"]
        .as_array()
        .expect("tried")
        .iter()
        .map(|t| t["strategy"].as_str().expect("strategy"))
        .collect();
    assert!(
        tried.len() >= 5 && tried.contains(&"mouse") && tried.contains(&"js_click"),
        "{tried:?}"
    );
    let text0 = res.content[0].as_text().expect("text").text.clone();
    assert!(text0.contains("\"intent\":\"press the dead control\""), "{text0}");
    assert!(res.content.iter().any(|c| c.as_image().is_some_and(|i| i.mime_type == "image/jpeg")));

    // Hover, double click, a checkbox, a navigating link, an in-page anchor.
    let q = client.tool("query_dom", json!({"selector": "#hover-target"})).await?;
    let hover_ref = q.structured_content.clone().expect("q")["matches"][0]["ref"].clone();
    let hover = client.tool_text("interact", json!({"ref": hover_ref, "action": "hover"})).await?;
    assert!(hover.starts_with("hovered"), "{hover}");
    assert_eq!(
        js(&client, "document.getElementById('hover-target').textContent").await?,
        "Hovered!"
    );
    let twice = ref_of(&snap, "button", "Double click me");
    client.tool_text("interact", json!({"ref": twice, "action": "double_click"})).await?;
    assert_eq!(
        js(&client, "document.getElementById('twice').textContent").await?,
        "Double clicked"
    );
    let agree = ref_of(&snap, "checkbox", "I agree");
    let out = client.tool_text("interact", json!({"ref": agree})).await?;
    assert!(out.contains("now checked"), "{out}");
    let anchor = ref_of(&snap, "link", "Jump to bottom");
    let out = client.tool_text("interact", json!({"ref": anchor})).await?;
    assert!(out.contains("#bottom"), "{out}");
    let link = ref_of(&snap, "link", "Go to page two");
    let out = client.tool_text("interact", json!({"ref": link})).await?;
    assert!(out.contains("navigated") && out.contains("page2.html"), "{out}");
    let tabs = client.tool("tabs_context", json!({})).await?;
    assert!(
        tabs.structured_content.clone().expect("tabs")["tabs"][0]["url"]
            .as_str()
            .expect("url")
            .ends_with("page2.html")
    );
    // The old page's refs are stale now.
    let err = client.tool_error("interact", json!({"ref": change})).await?;
    assert_eq!(err["code"], "STALE_REF", "{err}");
    let err = client.tool_error("interact", json!({"query": "zzqx wyvern"})).await?;
    assert_eq!(err["code"], "ELEMENT_NOT_FOUND", "{err}");
    Ok(())
}

#[tokio::test]
async fn intent_labels_follow_the_seed() -> Result<()> {
    let (site, data, client) = site_and_client("intent", &[]).await?;
    client.tool("expand_tools", json!({"tier": 2})).await?;
    let tools = client.list_all_tools().await?;
    for name in ["interact", "form_input", "fill_form", "drag_drop", "file_upload"] {
        let t = tools.iter().find(|t| t.name == name).expect(name);
        let d = t.description.as_deref().unwrap_or_default();
        assert!(
            d.ends_with("Pass intent=\"...\" (≤120 chars) to label this action in audit logs."),
            "{name}: {d}"
        );
        assert_eq!(t.input_schema["properties"]["intent"]["maxLength"], 120);
    }
    let read = tools.iter().find(|t| t.name == "read_page").expect("read_page");
    assert!(read.input_schema["properties"].get("intent").is_none());

    navigate(&client, &site.url("form.html")).await?;
    let snap = snapshot(&client).await?;
    let name = ref_of(&snap, "textbox", "Customer name:");
    let tel = ref_of(&snap, "textbox", "Telephone:");
    let mail = ref_of(&snap, "textbox", "E-mail address:");
    client
        .tool_text(
            "form_input",
            json!({"ref": name, "value": "Ada", "intent": "enter the customer name"}),
        )
        .await?;
    client
        .tool_text("form_input", json!({"ref": tel, "value": "555", "intent": "enter the phone"}))
        .await?;
    client.tool_text("form_input", json!({"ref": mail, "value": "a@example.com"})).await?;
    let journal = |n: u64| {
        let client = &client;
        async move {
            let res = client
                .tool("oc_journal", json!({"action": "recent", "count": n, "tool": "form_input"}))
                .await?;
            anyhow::Ok(res.structured_content.clone().expect("structured")["entries"].clone())
        }
    };
    let entries = journal(10).await?;
    let entries = entries.as_array().expect("entries");
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["intent"], "enter the customer name");
    assert_eq!(entries[1]["intent"], "enter the phone");
    assert!(entries[2].get("intent").is_none(), "absent, not empty: {}", entries[2]);

    // Bad intents: rejected before anything happens, and never journaled.
    let before = read_jsonl_dir(&data.path().join("journal")).len();
    let trace_before = read_jsonl_dir(&data.path().join("traces")).len();
    let submit = ref_of(&snap, "button", "Submit order");
    for bad in [json!(""), json!("   "), json!("x".repeat(200)), json!(7)] {
        let err = client.tool_error("interact", json!({"ref": submit, "intent": bad})).await?;
        assert_eq!(err["code"], "INVALID_INTENT", "{err}");
    }
    assert_eq!(read_jsonl_dir(&data.path().join("journal")).len(), before);
    assert_eq!(read_jsonl_dir(&data.path().join("traces")).len(), trace_before);
    assert!(js(&client, "location.pathname").await?.as_str().expect("path").ends_with("form.html"));

    // Trace lines: the intent at top level where given, no key where not.
    let trace: Vec<Value> = read_jsonl_dir(&data.path().join("traces"))
        .into_iter()
        .filter(|e| e["body"]["tool"] == "form_input")
        .collect();
    assert_eq!(trace.len(), 3, "{trace:?}");
    assert_eq!(trace[0]["intent"], "enter the customer name");
    assert_eq!(trace[1]["intent"], "enter the phone");
    assert!(trace[2].get("intent").is_none());
    Ok(())
}

#[tokio::test]
async fn drag_upload_wait_scroll_and_console() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("misc");
    let uploads = TempDir::new("uploads");
    let outside = TempDir::new("outside");
    std::fs::write(uploads.path().join("hello.txt"), "hello")?;
    std::fs::write(uploads.path().join("two.txt"), "two!")?;
    std::fs::write(outside.path().join("secret.txt"), "no")?;
    let root = uploads.path().display().to_string();
    let client = stdio_client(data.path(), &["--allow-file-root", &root], &[]).await?;
    navigate(&client, &site.url("interactive.html")).await?;
    let snap = snapshot(&client).await?;

    // HTML5 drag and drop, and a mouse-driven knob.
    let out = client.tool_text("drag_drop", json!({"sourceSelector": "#drag-source", "targetSelector": "#drop-zone", "intent": "drop it"})).await?;
    assert!(out.contains("HTML5"), "{out}");
    assert_eq!(
        js(&client, "document.getElementById('drop-zone').textContent").await?,
        "Dropped: payload"
    );
    let knob = ref_of(&snap, "slider", "Volume");
    client.tool_text("drag_drop", json!({"source": knob, "targetSelector": "#track"})).await?;
    let knob_at = js(&client, "document.getElementById('slider-status').textContent").await?;
    assert_ne!(knob_at, "knob at 0", "the knob moved");
    let err = client.tool_error("drag_drop", json!({"source": knob})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    // A drop zone the page has not drawn yet is waited for, as an action's
    // target is; one that never comes is named when the wait ends.
    let later = "setTimeout(() => { const z = document.createElement('div'); z.id = 'late-zone'; \
                 z.textContent = 'Late zone'; z.style.cssText = 'width:120px;height:40px'; \
                 z.addEventListener('drop', (e) => { e.preventDefault(); z.textContent = 'Late: ' + e.dataTransfer.getData('text/plain'); }); \
                 z.addEventListener('dragover', (e) => e.preventDefault()); document.body.append(z); }, 300); 1";
    js(&client, later).await?;
    client
        .tool_text(
            "drag_drop",
            json!({"sourceSelector": "#drag-source", "targetSelector": "#late-zone"}),
        )
        .await?;
    assert_eq!(
        js(&client, "document.getElementById('late-zone').textContent").await?,
        "Late: payload"
    );
    let err =
        client.tool_error("drag_drop", json!({"source": knob, "targetSelector": "#never"})).await?;
    assert_eq!(err["code"], "ELEMENT_NOT_FOUND", "{err}");
    assert!(err["message"].as_str().unwrap_or("").contains("#never"), "{err}");

    // File upload: only under the allowed roots.
    let input = snap
        .lines()
        .find(|l| l.ends_with(" file"))
        .and_then(|l| l.split_whitespace().find(|w| w.starts_with("ax_")))
        .expect("file input ref")
        .to_owned();
    let files = [
        uploads.path().join("hello.txt").display().to_string(),
        uploads.path().join("two.txt").display().to_string(),
    ];
    let out = client.tool_text("file_upload", json!({"ref": input, "filePaths": files})).await?;
    assert!(out.contains("2 files"), "{out}");
    assert_eq!(
        js(&client, "document.getElementById('files').textContent").await?,
        "hello.txt:5, two.txt:4"
    );
    let secret = outside.path().join("secret.txt").display().to_string();
    let err = client
        .tool_error("file_upload", json!({"selector": "#upload", "filePaths": [secret]}))
        .await?;
    assert_eq!(err["code"], "PERMISSION_DENIED", "{err}");
    let missing = uploads.path().join("nope.txt").display().to_string();
    let err = client
        .tool_error("file_upload", json!({"selector": "#upload", "filePaths": [missing]}))
        .await?;
    assert_eq!(err["code"], "FILE_NOT_FOUND", "{err}");
    let err = client
        .tool_error("file_upload", json!({"selector": "#agree", "filePaths": [files[0].clone()]}))
        .await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    // The rejected calls left the input as it was.
    assert_eq!(js(&client, "document.getElementById('upload').files.length").await?, 2);
    // By selector: the input it names gets them.
    let out = client
        .tool_text("file_upload", json!({"selector": "#upload", "filePaths": [files[1].clone()]}))
        .await?;
    assert!(out.contains("1 file: two.txt"), "{out}");
    assert_eq!(js(&client, "document.getElementById('files').textContent").await?, "two.txt:4");

    // Waits.
    js(&client, "addLater(300); 1").await?;
    let out = client.tool_text("wait_for", json!({"type": "selector", "value": "#late"})).await?;
    assert!(out.starts_with("selector met"), "{out}");
    client
        .tool_text("wait_for", json!({"type": "selector_hidden", "value": "#never-there"}))
        .await?;
    client
        .tool_text(
            "wait_for",
            json!({"type": "function", "value": "() => document.title === 'Interactive fixture'"}),
        )
        .await?;
    // ochre's one URL rule: a glob, a /regex/, a substring.
    for pattern in
        ["*interactive.html", r"/^http:\/\/127\.0\.0\.1:\d+\/interactive/", "/interactive"]
    {
        client.tool_text("wait_for", json!({"type": "url_match", "value": pattern})).await?;
    }
    let err = client
        .tool_error("wait_for", json!({"type": "url_match", "value": "/interactive(/"}))
        .await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("value"))
    );
    // `/nowhere/` has no regex character: a substring, not in this URL.
    let err = client
        .tool_error("wait_for", json!({"type": "url_match", "value": "/nowhere/", "timeout": 200}))
        .await?;
    assert_eq!(err["code"], "TIMEOUT", "{err}");
    client.tool_text("wait_for", json!({"type": "timeout", "value": "50"})).await?;
    let err = client
        .tool_error("wait_for", json!({"type": "selector", "value": "#never", "timeout": 300}))
        .await?;
    assert_eq!(err["code"], "TIMEOUT", "{err}");
    let err = client.tool_error("wait_for", json!({"type": "function", "value": "(("})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    let err = client.tool_error("wait_for", json!({"type": "selector", "value": "a[["})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    let err = client.tool_error("wait_for", json!({"type": "sometime"})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");

    // A clipped screenshot is exactly the clip (PNG width and height from IHDR).
    let shot = client
        .tool("page_screenshot", json!({"clip": {"x": 0, "y": 0, "width": 120, "height": 50}}))
        .await?;
    let img = shot.content[0].as_image().expect("image");
    let png = base64_decode(&img.data);
    let dims =
        (u32::from_be_bytes(png[16..20].try_into()?), u32::from_be_bytes(png[20..24].try_into()?));
    assert_eq!(dims, (120, 50));
    let err = client
        .tool_error("page_screenshot", json!({"clip": {"x": 0, "y": 0, "width": 0, "height": 50}}))
        .await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");

    // Scrolling.
    let s = client.tool("lightweight_scroll", json!({"to": "bottom"})).await?;
    assert_eq!(s.structured_content.clone().expect("s")["atBottom"], true);
    let s = client.tool("lightweight_scroll", json!({"direction": "up", "amount": 100})).await?;
    let s = s.structured_content.clone().expect("s");
    assert_eq!(s["atBottom"], false, "{s}");

    // Console.
    let c = client.tool("console_capture", json!({})).await?;
    let c = c.structured_content.clone().expect("c");
    let texts: Vec<&str> =
        c["messages"].as_array().expect("m").iter().filter_map(|m| m["text"].as_str()).collect();
    assert!(texts.contains(&"fixture loaded 42"), "{c}");
    let w = client.tool("console_capture", json!({"level": "warning"})).await?;
    let w = w.structured_content.clone().expect("w");
    assert_eq!(w["messages"].as_array().expect("m").len(), 1, "{w}");
    client.tool("console_capture", json!({"action": "clear"})).await?;
    js(&client, "console.error('after clear'); 1").await?;
    let c = client.tool("console_capture", json!({})).await?;
    let c = c.structured_content.clone().expect("c");
    // What the page logged before the clear is gone; what came after is there
    // (the browser's own late messages, such as a resource error, may be too).
    let msgs = c["messages"].as_array().expect("m");
    assert!(
        msgs.iter().all(
            |m| !["fixture loaded 42", "a warning"].contains(&m["text"].as_str().unwrap_or(""))
        ),
        "{c}"
    );
    // The host's own console fence (it waits for messages in flight) is not one.
    assert!(!c.to_string().contains("console-fence"), "{c}");
    let after: Vec<&Value> = msgs.iter().filter(|m| m["text"] == "after clear").collect();
    assert_eq!(after.len(), 1, "{c}");
    assert_eq!(after[0]["level"], "error");
    Ok(())
}

#[tokio::test]
async fn frames_shadow_roots_big_pages_extraction_and_network_quiet() -> Result<()> {
    let (site, _data, client, snap) = open_page("frames", &[], "frames.html").await?;
    assert!(snap.contains("iframe \"Inner frame\""), "{snap}");
    let frame_btn = ref_of(&snap, "button", "Frame button");
    let shadow_btn = ref_of(&snap, "button", "Shadow button");
    let shadow_in = ref_of(&snap, "textbox", "Shadow name");
    ref_of(&snap, "link", "Back home");
    client.tool_text("interact", json!({"ref": frame_btn})).await?;
    assert_eq!(
        js(&client, "document.getElementById('log').textContent").await?,
        "frame button clicked"
    );
    client.tool_text("interact", json!({"ref": shadow_btn})).await?;
    assert_eq!(
        js(&client, "document.getElementById('log').textContent").await?,
        "shadow button clicked"
    );
    client.tool_text("form_input", json!({"ref": shadow_in, "value": "in the shadow"})).await?;
    assert_eq!(
        js(
            &client,
            "document.querySelector('shadow-card').shadowRoot.getElementById('sh-input').value"
        )
        .await?,
        "in the shadow"
    );
    let q = client.tool("query_dom", json!({"selector": "#sh-btn"})).await?;
    assert_eq!(q.structured_content.clone().expect("q")["matches"][0]["text"], "Shadow button");

    // A large page: a ref for every one of its 3000 controls (asked for in full:
    // it is over the response budget).
    navigate(&client, &site.url("large.html")).await?;
    let big = client.tool_text("read_page", json!({"output_mode": "inline"})).await?;
    assert_eq!(big.matches(" ax_").count(), 3000);
    let buy = ref_of(&big, "button", "Buy 1400");
    js(&client, "document.querySelector('[data-i=\"1400\"]').onclick = function () { this.textContent = 'bought'; }; 1").await?;
    client.tool_text("interact", json!({"ref": buy})).await?;
    assert_eq!(
        js(&client, "document.querySelector('[data-i=\"1400\"]').textContent").await?,
        "bought"
    );

    // Extraction.
    navigate(&client, &site.url("product.html")).await?;
    let r = client.tool("extract_data", json!({"schema": {"type": "object", "properties": {
            "name": {"type": "string"}, "sku": {"type": "string"}, "price": {"type": "number"},
            "priceCurrency": {"type": "string"}, "description": {"type": "string"}, "image": {"type": "string"},
            "color": {"type": "string"}
        }}}))
    .await?;
    let r = r.structured_content.clone().expect("r");
    assert_eq!(r["data"]["name"], "Ochre Mug", "{r}");
    assert_eq!(r["data"]["sku"], "MUG-42");
    assert_eq!(r["data"]["price"], 12.5);
    assert_eq!(r["data"]["priceCurrency"], "EUR");
    assert_eq!(r["data"]["description"], "A mug the colour of ochre.");
    assert_eq!(r["fieldsMissing"], json!(["color"]));
    assert!(r["strategies"].as_array().expect("s").contains(&json!("json-ld")));
    let reviews = client.tool("extract_data", json!({"schema": {"type": "array", "items": {"properties": {"author": {"type": "string"}, "rating": {"type": "integer"}}}}}))
    .await?;
    let reviews = reviews.structured_content.clone().expect("r");
    assert_eq!(
        reviews["data"],
        json!([{"author": "Ada", "rating": 5}, {"author": "Alan", "rating": 4}]),
        "{reviews}"
    );
    let cards = client.tool("extract_data", json!({"schema": {"type": "array", "items": {"properties": {"title": {"type": "string"}, "price": {"type": "number"}}}}, "itemSelector": ".card"}))
    .await?;
    let cards = cards.structured_content.clone().expect("c");
    assert_eq!(
        cards["data"],
        json!([{"title": "Teapot", "price": 30}, {"title": "Saucer", "price": 4}]),
        "{cards}"
    );
    let err = client.tool_error("extract_data", json!({"schema": {"type": "object"}})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT");

    // navigate answers at the load event; the tab's next call first waits for
    // the network to go quiet (counted from the load): the page's fetch has
    // landed by the time it reads.
    navigate(&client, &site.url("slow.html")).await?;
    assert_eq!(js(&client, "document.getElementById('data').textContent").await?, "got slow 400");
    Ok(())
}

#[tokio::test]
async fn storage_and_profile_groups() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("storage");
    let profile = TempDir::new("profile-dir");
    let dir = profile.path().display().to_string();
    let client = stdio_client(data.path(), &["--user-data-dir", &dir], &[]).await?;

    // Status before the browser starts: nothing is launched to answer.
    let st = client.tool("oc_profile_status", json!({})).await?;
    let st = st.structured_content.clone().expect("status");
    assert_eq!(st["mode"], "managed", "{st}");
    assert_eq!(st["running"], false);
    assert_eq!(st["persistent"], true);
    assert_eq!(st["userDataDir"], dir.as_str());
    // The headless browser is Chromium's headless shell when it is installed
    // (the tests' setup installs it): the binary itself, not Debian's script
    // in /usr/bin that starts it.
    headless_shell_bin()?;
    let exe = std::path::PathBuf::from(st["executable"].as_str().expect("executable"));
    let name = exe.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    assert!(name.ends_with("-headless-shell"), "{st}");
    assert!(std::fs::read(&exe)?.starts_with(b"\x7fELF"), "{st}");

    navigate(&client, &site.url("index.html")).await?;
    let st = client.tool("oc_profile_status", json!({})).await?;
    assert_eq!(st.structured_content.clone().expect("status")["running"], true);
    let lp = client.tool("list_profiles", json!({})).await?;
    let lp = lp.structured_content.clone().expect("profiles");
    assert_eq!(lp["userDataDir"], dir.as_str(), "{lp}");
    assert!(lp["profiles"].is_array());

    // Cookies: set, read (httpOnly too), delete, clear; values never journaled.
    let secret = "cookie-value-7f3a";
    let set = |name: &str, extra: Value| {
        let mut args = json!({"action": "set", "name": name, "value": secret});
        if let (Value::Object(a), Value::Object(e)) = (&mut args, extra) {
            a.extend(e);
        }
        client.tool("cookies", args)
    };
    text(&set("sid", json!({"httpOnly": true})).await?);
    text(&set("theme", json!({})).await?);
    let got = client.tool("cookies", json!({"action": "get"})).await?;
    let got = got.structured_content.clone().expect("cookies");
    let cookies = got["cookies"].as_array().expect("list");
    assert_eq!(cookies.len(), 2, "{got}");
    let sid = cookies.iter().find(|c| c["name"] == "sid").expect("sid");
    assert_eq!((sid["value"].as_str(), sid["httpOnly"].as_bool()), (Some(secret), Some(true)));
    assert_eq!(js(&client, "document.cookie").await?, format!("theme={secret}"));
    client.tool_text("cookies", json!({"action": "delete", "name": "theme"})).await?;
    let got = client.tool("cookies", json!({"action": "get"})).await?;
    assert_eq!(
        got.structured_content.clone().expect("c")["cookies"].as_array().expect("l").len(),
        1
    );
    let cleared = client.tool("cookies", json!({"action": "clear"})).await?;
    assert_eq!(cleared.structured_content.clone().expect("c")["deleted"], 1);
    let err = client.tool_error("cookies", json!({"action": "set", "value": "x"})).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("name"))
    );
    let err = client.tool_error("cookies", json!({"action": "eat"})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT");

    // Web storage.
    let st = |args: Value| client.tool("storage", args);
    text(&st(json!({"storageType": "local", "action": "set", "key": "k1", "value": "v1"})).await?);
    text(&st(json!({"storageType": "local", "action": "set", "key": "k2", "value": "v2"})).await?);
    text(&st(json!({"storageType": "session", "action": "set", "key": "s", "value": "sv"})).await?);
    let v = st(json!({"storageType": "local", "action": "get", "key": "k1"})).await?;
    assert_eq!(v.structured_content.clone().expect("v")["value"], "v1");
    let keys = st(json!({"storageType": "local", "action": "keys"})).await?;
    let mut keys: Vec<String> =
        serde_json::from_value(keys.structured_content.clone().expect("k")["keys"].clone())?;
    keys.sort();
    assert_eq!(keys, ["k1", "k2"]);
    let all = st(json!({"storageType": "session", "action": "get"})).await?;
    assert_eq!(all.structured_content.clone().expect("a")["items"], json!({"s": "sv"}));
    let rm = st(json!({"storageType": "local", "action": "remove", "key": "k1"})).await?;
    assert_eq!(rm.structured_content.clone().expect("r")["removed"], true);
    let cl = st(json!({"storageType": "local", "action": "clear"})).await?;
    assert_eq!(cl.structured_content.clone().expect("c")["cleared"], 1);
    assert_eq!(js(&client, "localStorage.length").await?, 0);
    let err = error_of(&st(json!({"storageType": "local", "action": "set", "key": "k"})).await?);
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    let err = error_of(&st(json!({"storageType": "disk", "action": "keys"})).await?);
    assert_eq!(err["code"], "INVALID_ARGUMENT");

    let journal = read_all_text(&data.path().join("journal"));
    let trace = read_all_text(&data.path().join("traces"));
    assert!(journal.contains("\"cookies\""), "the calls are journaled");
    assert!(!journal.contains(secret) && !trace.contains(secret), "cookie values are redacted");
    assert!(!journal.contains("\"v1\""), "storage values are redacted");
    Ok(())
}

/// Collects `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct ListChanged(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for ListChanged {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Agents pay for `tools/list` on every turn: the default list (tier 1 of every
/// built-in group, plus `expand_tools`) stays within 12,000 bytes, everything
/// revealed stays within 0.75x of playwright-mcp's 20,286, and every tool still says
/// what it is for. `expand_tools` reveals tools, tells the client, and returns the
/// new definitions inline.
#[tokio::test]
async fn tools_are_disclosed_in_tiers_within_byte_budgets() -> Result<()> {
    let data = TempDir::new("budget");
    let seen = ListChanged::default();
    let client = stdio_client_with(seen.clone(), data.path(), &[], &[]).await?;
    let tools = client.list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for t in [
        "read_page",
        "interact",
        "cookies",
        "storage",
        "list_profiles",
        "oc_profile_status",
        "oc_totp_generate",
        "oc_output_fetch",
        "oc_recording_start",
        "expand_tools",
    ] {
        assert!(names.contains(&t), "{t} missing: {names:?}");
    }
    for t in [
        "oc_journal",
        "lightweight_scroll",
        "oc_recording_replay",
        "drag_drop",
        "file_upload",
        "page_screenshot",
        "page_content",
        "console_capture",
        "extract_data",
    ] {
        assert!(!names.contains(&t), "{t} listed at start: {names:?}");
    }
    let default_bytes = serde_json::to_vec(&tools)?.len();
    assert!(default_bytes <= 12_000, "default tools/list is {default_bytes} bytes");
    // expand_tools' schema is derived from the arguments it reads.
    let expand = tools.iter().find(|t| t.name == "expand_tools").expect("listed");
    let props = Value::Object((*expand.input_schema).clone());
    assert_eq!(
        (&props["properties"]["tier"]["minimum"], &props["properties"]["tier"]["maximum"]),
        (&json!(2), &json!(3)),
        "{props}"
    );
    assert_eq!(props["properties"]["name"]["type"], "string", "{props}");

    // By name: just that one.
    let r = client.tool("expand_tools", json!({"name": "file_upload"})).await?;
    let r = r.structured_content.clone().expect("structured");
    assert_eq!(r["revealed"], json!(["file_upload"]), "{r}");
    assert_eq!(r["tools"][0]["name"], "file_upload");
    let names: Vec<String> =
        client.list_all_tools().await?.iter().map(|t| t.name.to_string()).collect();
    assert!(names.contains(&"file_upload".to_owned()) && !names.contains(&"drag_drop".to_owned()));
    // By tier: the rest.
    let r = client.tool("expand_tools", json!({"tier": "2"})).await?;
    let r = r.structured_content.clone().expect("structured");
    let revealed: Vec<&str> =
        r["revealed"].as_array().expect("list").iter().filter_map(Value::as_str).collect();
    for t in ["drag_drop", "page_screenshot", "page_content", "console_capture", "extract_data"] {
        assert!(revealed.contains(&t), "{t} not revealed: {r}");
    }
    assert!(!revealed.contains(&"computer"), "tier 3 revealed with tier 2: {r}");
    // Tier 3: the coordinate tier.
    let r = client.tool("expand_tools", json!({"tier": "3"})).await?;
    let r = r.structured_content.clone().expect("structured");
    assert_eq!(r["revealed"], json!(["computer"]), "{r}");
    let all = client.list_all_tools().await?;
    assert!(all.iter().all(|t| t.name != "expand_tools"), "nothing left to expand");
    // Everything revealed stays within 600 bytes a tool on average (the budget
    // grows with the tool set, never per tool).
    let all_bytes = serde_json::to_vec(&all)?.len();
    println!("all tools: {all_bytes} bytes for {}", all.len());
    assert!(all_bytes <= 600 * all.len(), "all tools: {all_bytes} bytes for {}", all.len());
    for t in &all {
        let d = t.description.as_deref().unwrap_or_default();
        assert!(d.len() >= 30, "{}: {d:?}", t.name);
    }
    // The client was told, once per change (by name, tier 2, tier 3).
    for _ in 0..50 {
        if seen.0.load(std::sync::atomic::Ordering::SeqCst) >= 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(seen.0.load(std::sync::atomic::Ordering::SeqCst), 3);

    for tier in [json!(5), json!(300), json!("1")] {
        let err = client.tool_error("expand_tools", json!({"tier": tier})).await?;
        assert_eq!(
            (err["code"].as_str(), err["field"].as_str()),
            (Some("INVALID_ARGUMENT"), Some("tier")),
            "{err}"
        );
        assert!(err["message"].as_str().is_some_and(|m| m.contains("2 (specialist")), "{err}");
    }
    let err = client.tool_error("expand_tools", json!({})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    let err = client.tool_error("expand_tools", json!({"name": "nope"})).await?;
    assert_eq!(err["code"], "UNKNOWN_TOOL");
    let err = client.tool_error("expand_tools", json!({"tier": 2, "level": 3})).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("level")),
        "{err}"
    );
    let err = client.tool_error("expand_tools", json!({"tier": "two"})).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("tier")),
        "{err}"
    );
    client.cancel().await?;

    // A tool of a disabled group stays hidden and says why.
    let data = TempDir::new("budget-core");
    let client = stdio_client(data.path(), &["--tools-only", "core"], &[]).await?;
    let core_bytes = serde_json::to_vec(&client.list_all_tools().await?)?.len();
    assert!(core_bytes < default_bytes, "{core_bytes} vs {default_bytes}");
    let err = client.tool_error("expand_tools", json!({"name": "oc_totp_generate"})).await?;
    assert_eq!(
        (err["code"].as_str(), err["capability"].as_str()),
        (Some("CAPABILITY_DISABLED"), Some("totp")),
        "{err}"
    );
    assert!(!tool_names(&client).await?.contains(&"oc_totp_generate".to_owned()));
    Ok(())
}

/// The plugin deadline measures the plugin's own time: a page wait longer than
/// `--plugin-timeout-ms` still completes (its own `timeout` bounds it).
#[tokio::test]
async fn browser_waits_do_not_count_against_the_plugin_deadline() -> Result<()> {
    let (site, _data, client) =
        site_and_client("deadline", &["--plugin-timeout-ms", "1000"]).await?;
    navigate(&client, &site.url("interactive.html")).await?;
    js(&client, "addLater(1600); 1").await?;
    let started = std::time::Instant::now();
    let out = client
        .tool_text("wait_for", json!({"type": "selector", "value": "#late", "timeout": 8000}))
        .await?;
    assert!(out.starts_with("selector met"), "{out}");
    assert!(started.elapsed() >= std::time::Duration::from_millis(1500), "{:?}", started.elapsed());
    Ok(())
}

#[tokio::test]
async fn file_upload_never_gives_ochres_own_files_or_credentials() -> Result<()> {
    // One allowed root holds the data dir, the browser profile, dotfiles and a
    // key; a second root names a dot dir explicitly.
    let site = SiteServer::start().await?;
    let root = TempDir::new("upload-guard");
    let r = root.path();
    let data = r.join("data");
    let profile = r.join("profile");
    for d in [&data, &profile, &r.join(".ssh"), &r.join("keys"), &r.join("named.d")] {
        std::fs::create_dir_all(d)?;
    }
    std::fs::write(data.join("secrets.json"), "{}")?;
    std::fs::write(r.join(".env"), "TOKEN=x")?;
    std::fs::write(r.join(".ssh").join("id_rsa"), "key")?;
    std::fs::write(r.join("keys").join("id_ed25519"), "key")?;
    std::fs::write(r.join("report.txt"), "report")?;
    let outside = TempDir::new("upload-guard-outside");
    std::fs::write(outside.path().join("exists.txt"), "x")?;
    let args = [
        "--allow-file-root",
        &r.display().to_string(),
        "--allow-file-root",
        &r.join(".ssh").display().to_string(),
        "--user-data-dir",
        &profile.display().to_string(),
    ];
    let client = stdio_client(&data, &args, &[]).await?;
    navigate(&client, &site.url("interactive.html")).await?;
    let upload = |p: std::path::PathBuf| {
        let client = &client;
        async move {
            let path = p.display().to_string();
            client.tool("file_upload", json!({"selector": "#upload", "filePaths": [path]})).await
        }
    };
    // Chromium has written its profile by now (the full browser and the
    // headless shell both write this file at the profile's root).
    let profile_file = profile.join("DevToolsActivePort");
    assert!(profile_file.exists(), "no profile file to try");
    for (file, says) in [
        (data.join("secrets.json"), "ochre's own data"),
        (data.clone(), "ochre's own data"),
        (profile_file, "ochre's own data"),
        (r.join(".env"), "dotfile"),
        (r.join("keys").join("id_ed25519"), "SSH private key"),
        (r.join("named.d").join("..").join(".env"), "dotfile"),
    ] {
        let shown = file.display().to_string();
        let res = upload(file).await?;
        let err = error_of(&res);
        assert_eq!(err["code"], "PERMISSION_DENIED", "{shown}: {err}");
        assert!(err["message"].as_str().unwrap_or("").contains(says), "{shown}: {err}");
    }
    assert_eq!(
        js(&client, "document.getElementById('files').textContent").await?,
        "no files",
        "a refused upload gave the page something"
    );
    // A file outside the roots: the same answer whether it exists or not.
    let a = error_of(&upload(outside.path().join("exists.txt")).await?);
    let b = error_of(&upload(outside.path().join("missing.txt")).await?);
    assert_eq!(
        (a["code"].clone(), b["code"].clone()),
        (json!("PERMISSION_DENIED"), json!("PERMISSION_DENIED"))
    );
    let strip = |e: &Value, name: &str| e["message"].as_str().unwrap_or("").replace(name, "");
    assert_eq!(strip(&a, "exists.txt"), strip(&b, "missing.txt"));
    // A root that names the dot dir gives its files; plain files are given.
    let res = upload(r.join(".ssh").join("id_rsa")).await?;
    assert!(!res.is_error.unwrap_or(false), "{}", text(&res));
    let res = upload(r.join("report.txt")).await?;
    assert!(text(&res).contains("1 file: report.txt"), "{}", text(&res));
    assert_eq!(js(&client, "document.getElementById('files').textContent").await?, "report.txt:6");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_read_sent_while_a_navigation_is_under_way_reads_a_whole_document() -> Result<()> {
    // An agent sends navigate and read_page at once: the read may start in the
    // document the navigation replaces. It then reads the new one once loaded,
    // instead of failing with "Inspected target navigated or closed".
    let (site, _data, client) = site_and_client("read-during-nav", &[]).await?;
    // The tab first shows a page of the site: a read that comes before the
    // navigation begins reads that whole page (on a new tab it would read
    // the blank one the tab opened with, as it did once in CI).
    navigate(&client, &site.url("index.html")).await?;
    // Pages an agent meets every day. (Not the page of twelve thousand
    // controls: a read of it keeps the renderer busy for seconds, and the
    // navigation's load waits for the renderer; on a loaded machine that
    // passed the navigation's 30-second bound.)
    let pages = ["product.html", "form.html", "large.html", "page2.html"];
    for round in 0..12 {
        let url = site.url(pages[round % pages.len()]);
        let (nav, read) = tokio::join!(
            client.tool("navigate", json!({"url": url})),
            client.tool("read_page", json!({})),
        );
        let nav = nav?;
        assert_ne!(nav.is_error, Some(true), "round {round}: {nav:?}");
        let read = read?;
        assert_ne!(
            read.is_error,
            Some(true),
            "round {round}: read_page failed: {}",
            error_of(&read)
        );
        // A whole document: the snapshot starts with its URL line.
        assert!(texts(&read).starts_with("http://"), "round {round}: {}", texts(&read));
    }
    Ok(())
}
