//! What real pages do on their own, over MCP against real headless Chromium and
//! the fixture sites: JavaScript dialogs never hang a tab, pages a page opens are
//! tabs, downloads are saved, the keyboard sends trusted keys, big results stay
//! within the response budget, and the login-wall hint needs evidence. Effects
//! are checked on the server side (`/record`, the downloaded file).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ochre_tests::*;
use serde_json::{Value, json};

/// Call and time it.
async fn timed(
    client: &Client,
    tool: &str,
    args: Value,
) -> Result<(rmcp::model::CallToolResult, Duration)> {
    let t = Instant::now();
    let r = client.tool(tool, args).await?;
    Ok((r, t.elapsed()))
}

/// A page's service worker installs, takes control and fetches for the page:
/// the worker's request arrives at the server. (chromiumoxide held each new
/// worker for a debugger and let a service worker go too late: `register()`
/// never settled.)
#[tokio::test]
async fn a_pages_service_worker_runs_and_fetches_for_it() -> Result<()> {
    let (site, _data, client) = site_and_client("service-worker", &[]).await?;
    navigate(&client, &site.url("reach.html")).await?;
    let ready = "document.getElementById('status').textContent !== 'loading'";
    client.tool_text("wait_for", json!({"type": "function", "value": ready})).await?;
    let status = client
        .tool_json(
            "javascript_tool",
            json!({"code": "document.getElementById('status').textContent"}),
        )
        .await?;
    assert_eq!(status["value"], "ready", "{status}");
    let ask = "navigator.serviceWorker.ready.then((reg) => new Promise((done) => { \
               const c = new MessageChannel(); c.port1.onmessage = (e) => done(e.data); \
               reg.active.postMessage('/record?from=service-worker', [c.port2]); }))";
    let said = client.tool_json("javascript_tool", json!({"code": ask})).await?;
    assert_eq!(said["value"], 1, "{said}");
    site.expect_recorded("from=service-worker").await?;
    Ok(())
}

#[tokio::test]
async fn dialogs_answer_at_once_and_are_answered_by_handle_dialog() -> Result<()> {
    let (site, data, client, snap) = open_page("dialogs", &[], "dialogs.html").await?;
    let fast = Duration::from_secs(2);

    // alert: the click answers at once, naming the dialog.
    let (r, took) =
        timed(&client, "interact", json!({"ref": ref_of(&snap, "button", "Show alert")})).await?;
    assert!(took < fast, "the click took {took:?}");
    let out = structured(&r);
    assert_eq!(out["dialog"]["type"], "alert");
    assert_eq!(out["dialog"]["message"], "Saved!");
    assert!(texts(&r).contains("handle_dialog"), "{}", texts(&r));
    // Any other call on the tab answers at once with the dialog.
    let (r, took) = timed(&client, "read_page", json!({})).await?;
    assert!(took < fast, "read_page took {took:?}");
    let err = error_of(&r);
    assert_eq!(err["code"], "DIALOG_OPEN");
    assert_eq!(err["dialog"]["message"], "Saved!");
    // tabs_context still works and answers at once.
    let (r, took) = timed(&client, "tabs_context", json!({})).await?;
    assert!(took < fast, "tabs_context took {took:?}");
    assert!(!r.is_error.unwrap_or(false), "{r:?}");
    let (r, _) = timed(&client, "handle_dialog", json!({"accept": true})).await?;
    assert!(texts(&r).contains("accepted the alert dialog"), "{}", texts(&r));
    site.expect_recorded("alert=closed").await?;

    // confirm: dismissed -> the page sees false.
    let (r, took) =
        timed(&client, "interact", json!({"ref": ref_of(&snap, "button", "Delete file")})).await?;
    assert!(took < fast, "{took:?}");
    assert_eq!(structured(&r)["dialog"]["type"], "confirm");
    client.tool("handle_dialog", json!({"accept": false})).await?;
    site.expect_recorded("confirm=false").await?;

    // prompt: answered with text.
    let (r, _) =
        timed(&client, "interact", json!({"ref": ref_of(&snap, "button", "Ask name")})).await?;
    assert_eq!(structured(&r)["dialog"]["type"], "prompt");
    assert_eq!(structured(&r)["dialog"]["defaultPrompt"], "anonymous");
    client.tool("handle_dialog", json!({"accept": true, "promptText": "Ada Lovelace"})).await?;
    site.expect_recorded("prompt=Ada Lovelace").await?;

    // A dialog that opens after the call ended blocks the next call, not for long.
    client.tool("interact", json!({"ref": ref_of(&snap, "button", "Ask later")})).await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (r, took) = timed(&client, "find", json!({"query": "Delete file"})).await?;
    assert!(took < fast, "{took:?}");
    assert_eq!(error_of(&r)["code"], "DIALOG_OPEN");
    client.tool("handle_dialog", json!({"accept": true})).await?;
    site.expect_recorded("later=true").await?;
    // No dialog: a clear error.
    let r = client.tool("handle_dialog", json!({"accept": true})).await?;
    assert_eq!(error_of(&r)["code"], "NO_DIALOG");

    // beforeunload: leaving a page that asks answers at once; accepting leaves.
    client.tool("interact", json!({"ref": ref_of(&snap, "button", "Start editing")})).await?;
    site.expect_recorded("armed=1").await?;
    let (r, took) = timed(&client, "navigate", json!({"url": site.url("page2.html")})).await?;
    assert!(took < fast, "navigate took {took:?}");
    assert_eq!(structured(&r)["dialog"]["type"], "beforeunload", "{r:?}");
    let r = client.tool("handle_dialog", json!({"accept": true})).await?;
    assert!(texts(&r).contains("beforeunload"), "{}", texts(&r));
    let tabs = client.tool_json("tabs_context", json!({})).await?;
    assert!(tabs.to_string().contains("page2.html"), "{tabs}");

    // The journal and the trace have the dialogs, never the prompt's answer.
    let journal = read_all_text(&data.path().join("journal"));
    assert!(journal.contains("dialog_opened") && journal.contains("dialog_closed"), "{journal}");
    assert!(!journal.contains("Ada Lovelace"), "the prompt's answer leaked");
    let traces = read_all_text(&data.path().join("traces"));
    assert!(traces.contains("dialog_opened"));
    assert!(!traces.contains("Ada Lovelace"));
    client.cancel().await?;
    Ok(())
}

/// Reading a page gives it no user activation: a page that asks "leave this
/// page?" asks only once a person acted on it, so an agent that only read,
/// searched, waited and hovered leaves it with no prompt. A click (a person's
/// act) arms the prompt, and the caller's own script counts as an act too.
/// The page reports the first act it sees to the server.
#[tokio::test]
async fn reading_a_page_is_not_acting_on_it() -> Result<()> {
    let (site, _data, client, snap) = open_page("activation", &[], "draft.html").await?;
    for mode in ["text", "markdown", "dom"] {
        let r = client.tool("read_page", json!({"mode": mode})).await?;
        assert!(texts(&r).contains("Draft"), "{mode}: {}", texts(&r));
    }
    let found = client.tool_text("find", json!({"query": "Nothing button"})).await?;
    assert!(found.contains("Nothing"), "{found}");
    client.tool_text("query_dom", json!({"selector": "textarea"})).await?;
    client.tool_text("wait_for", json!({"type": "selector", "value": "#state"})).await?;
    let ready = "document.readyState === 'complete'";
    client.tool_text("wait_for", json!({"type": "function", "value": ready})).await?;
    client.tool_text("storage", json!({"storageType": "local", "action": "keys"})).await?;
    let nothing = ref_of(&snap, "button", "Nothing");
    let r = client.tool("interact", json!({"ref": nothing, "action": "hover"})).await?;
    assert!(!r.is_error.unwrap_or(false), "{r:?}");
    let r = navigate(&client, &site.url("page2.html")).await?;
    let out = structured(&r);
    assert!(out.get("dialog").is_none(), "a page only read asked before it was left: {out}");
    assert!(out["url"].as_str().is_some_and(|u| u.ends_with("/page2.html")), "{out}");
    assert!(site.requests().iter().any(|q| q == "GET /page2.html"), "{:?}", site.requests());
    let recorded = site.recorded();
    assert!(!recorded.iter().any(|r| r.contains("activated")), "{recorded:?}");

    // A click is a person's act: the page sees it and asks before it is left.
    navigate(&client, &site.url("draft.html")).await?;
    let snap = snapshot(&client).await?;
    client.tool_text("interact", json!({"ref": ref_of(&snap, "button", "Nothing")})).await?;
    site.expect_recorded("activated=1").await?;
    let r = navigate(&client, &site.url("page2.html")).await?;
    assert_eq!(structured(&r)["dialog"]["type"], "beforeunload", "{r:?}");
    client.tool_text("handle_dialog", json!({"accept": true})).await?;

    // The caller's own script acts as a person would (as Puppeteer's and
    // Playwright's evaluate do).
    navigate(&client, &site.url("draft.html")).await?;
    let before = site.recorded().len();
    client.tool_json("javascript_tool", json!({"code": "document.title"})).await?;
    let seen = site.wait_recorded_since(before, "activated=1").await;
    assert!(seen.is_some(), "the script gave no activation: {:?}", site.recorded());
    client.cancel().await?;
    Ok(())
}

/// Names and quoted words are as the page shows them, whichever way they are
/// read: a tab whose words show in capitals is named in capitals by the
/// snapshot and by the click's answer, which quotes the new words as shown.
/// A focusable box around controls of its own (a layout, a field's box, as
/// UI kits build them) is named nothing, as Chromium names it: its words are
/// its controls', named under it, and read as text there; a focusable card
/// with words of its own keeps them as its name. An item named nothing says
/// its words even in the interactive view. A dialog that fades in is quoted
/// once it shows.
#[tokio::test]
async fn names_and_quoted_words_are_as_the_page_shows_them() -> Result<()> {
    let (site, _data, client, snap) = open_page("shown-words", &[], "boxes.html").await?;
    let lines: Vec<&str> = snap.lines().map(str::trim_start).collect();
    let boxed: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("generic \"") && !l.starts_with("generic \"Sea view"))
        .collect();
    assert!(boxed.is_empty(), "boxes named by their controls' words: {boxed:?}\n{snap}");
    assert!(
        lines.iter().any(|l| l.starts_with("generic \"Sea view from 90 a night\" ax_")),
        "{snap}"
    );
    assert!(lines.iter().any(|l| l.starts_with("textbox \"Guest email\" ax_")), "{snap}");
    assert!(lines.contains(&"\"Boxes\"") || snap.contains("h1 \"Boxes\""), "{snap}");
    // The interactive view tells an item named nothing by its words.
    let view = client.tool_text("read_page", json!({"filter": "interactive"})).await?;
    let at = view.lines().position(|l| l.starts_with("listitem ax_")).context("no list item")?;
    assert_eq!(view.lines().nth(at + 1), Some("\"Print receipt\""), "{view}");
    assert!(!view.lines().any(|l| l == "\"Boxes\""), "only controls' own words: {view}");
    let room = ref_of(&snap, "tab", "ROOM");
    let said = client.tool_text("interact", json!({"ref": room})).await?;
    assert!(said.contains("clicked tab \"ROOM\""), "{said}");
    assert!(said.contains("SHOWING ROOM") && !said.contains("Showing"), "{said}");
    site.expect_recorded("tab=Room").await?;
    // A dialog that fades in: its words are told once it shows.
    let said =
        client.tool_text("interact", json!({"ref": ref_of(&snap, "button", "Book")})).await?;
    assert!(said.contains("new text \"Confirm the booking? Yes, book\""), "{said}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_dialog_policy_answers_dialogs_itself() -> Result<()> {
    let (site, _data, client, snap) =
        open_page("dialog-policy", &["--dialogs", "accept"], "dialogs.html").await?;
    let r = client.tool("interact", json!({"ref": ref_of(&snap, "button", "Delete file")})).await?;
    assert!(!r.is_error.unwrap_or(false), "{r:?}");
    assert!(texts(&r).contains("was accepted by the server's --dialogs policy"), "{}", texts(&r));
    site.expect_recorded("confirm=true").await?;
    // Nothing blocks the tab.
    let r = client.tool("read_page", json!({})).await?;
    assert!(!r.is_error.unwrap_or(false), "{r:?}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn pages_a_page_opens_are_tabs_and_downloads_are_saved() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("popups");
    let downloads = TempDir::new("popups-downloads");
    let dl = downloads.path().display().to_string();
    let client = stdio_client(data.path(), &["--downloads-dir", &dl], &[]).await?;
    navigate(&client, &site.url("popups.html")).await?;
    let snap = snapshot(&client).await?;

    // target=_blank
    let r = client
        .tool("interact", json!({"ref": ref_of(&snap, "link", "Open page two in a new tab")}))
        .await?;
    let t = texts(&r);
    assert!(t.contains("opened tab t2"), "{t}");
    // window.open
    let r = client
        .tool("interact", json!({"ref": ref_of(&snap, "button", "Open the product")}))
        .await?;
    let t = texts(&r);
    assert!(t.contains("opened tab t3") && t.contains("product.html"), "{t}");
    // The opener, now behind the new tabs, is brought to the front when acted on:
    // a hidden page gets no animation frames (and clicks on it stall).
    let r = client.tool("javascript_tool", json!({"code": "new Promise(r => { requestAnimationFrame(() => r('frame')); setTimeout(() => r('no frame'), 1500) })"}))
    .await?;
    assert!(texts(&r).contains("\"frame\""), "{}", texts(&r));
    let tabs = client.tool_json("tabs_context", json!({})).await?.to_string();
    assert!(
        tabs.contains("\"t2\"") && tabs.contains("\"t3\"") && tabs.contains("page2.html"),
        "{tabs}"
    );
    // Acted on by tabId: the product page's content.
    let r = client.tool("read_page", json!({"tabId": "t3", "mode": "text"})).await?;
    assert!(texts(&r).to_lowercase().contains("product") || texts(&r).len() > 20, "{}", texts(&r));
    let r = client.tool("find", json!({"query": "page", "tabId": "t2"})).await?;
    assert!(!r.is_error.unwrap_or(false), "{r:?}");

    // A page that closes itself disappears.
    let r = client
        .tool("interact", json!({"ref": ref_of(&snap, "button", "Open a page that closes itself")}))
        .await?;
    assert!(texts(&r).contains("opened tab t4"), "{}", texts(&r));
    let mut gone = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let tabs = client.tool_json("tabs_context", json!({})).await?.to_string();
        if !tabs.contains("\"t4\"") {
            gone = true;
            break;
        }
    }
    assert!(gone, "the self-closing tab is still listed");

    // A download: saved with its name and the right bytes.
    let r = client
        .tool("interact", json!({"ref": ref_of(&snap, "link", "Download the report")}))
        .await?;
    let t = texts(&r);
    assert!(t.contains("downloaded report.csv"), "{t}");
    let file = downloads.path().join("report.csv");
    assert_eq!(std::fs::read(&file)?, download_bytes("report.csv"));
    assert!(t.contains(&file.display().to_string()), "{t}");
    let journal = read_all_text(&data.path().join("journal"));
    assert!(journal.contains("tab_opened") && journal.contains("\"download\""), "{journal}");

    // Tabs the agent opens have windows of their own: acting on one never hides
    // another (a hidden page stalls on input and gets no animation frames).
    let made = client.tool_json("tabs_create", json!({"url": site.url("page2.html")})).await?;
    let other = made["tabId"].as_str().unwrap_or_default().to_owned();
    let watch = "window.__seen = [document.visibilityState]; document.addEventListener('visibilitychange', () => __seen.push(document.visibilityState)); 1";
    client.tool("javascript_tool", json!({"tabId": other, "code": watch})).await?;
    client.tool("interact", json!({"tabId": "t1", "query": "Open the product"})).await?;
    let seen =
        client.tool("javascript_tool", json!({"tabId": other, "code": "__seen.join()"})).await?;
    assert!(texts(&seen).contains("\"visible\""), "{}", texts(&seen));
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn the_keyboard_sends_trusted_keys() -> Result<()> {
    let (site, data, client, snap) = open_page("keys", &[], "keys.html").await?;
    let search = ref_of(&snap, "textbox", "Search");
    let r =
        client.tool("type", json!({"ref": search, "text": "Héllo w0rld", "submit": true})).await?;
    assert!(texts(&r).contains("typed 11 characters"), "{}", texts(&r));
    let rec = site.expect_recorded("typed=").await?;
    // 11 characters and the Enter, every one a trusted keydown.
    assert!(rec.contains("typed=Héllo w0rld&keydowns=12&keys=Héllo w0rld"), "{rec}");
    // press_key: Escape, Tab moves focus, Control+a selects.
    client.tool("press_key", json!({"key": "Escape"})).await?;
    site.expect_recorded("escape=1").await?;
    client.tool("press_key", json!({"key": "Tab", "ref": search})).await?;
    site.expect_recorded("tabbed=1").await?;
    let other = ref_of(&snap, "textbox", "Other");
    // What changed in a text field is its value's length (never `checked`,
    // which every input has), not the value: it may be a secret. In
    // characters, as the typed text is counted (the emoji is two UTF-16 units).
    let r = client.tool("type", json!({"ref": other, "text": "ab😀"})).await?;
    let said = texts(&r);
    assert!(said.starts_with("typed 3 characters"), "{said}");
    assert!(said.contains(": value_length=3") && !said.contains("checked"), "{said}");
    client.tool("form_input", json!({"ref": other, "value": "select me"})).await?;
    let r = client.tool("press_key", json!({"key": "Control+a", "ref": other})).await?;
    assert!(texts(&r).starts_with("pressed Control+a"), "{}", texts(&r));
    site.expect_recorded("selected=9").await?;
    // Bad keys change nothing and say what is allowed.
    let r = client.tool("press_key", json!({"key": "Hyper+q"})).await?;
    let err = error_of(&r);
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    assert!(err["message"].as_str().unwrap_or("").contains("Control"), "{err}");
    // A guessed argument name is answered with the names the tool takes.
    let err = error_of(&client.tool("press_key", json!({"key": "Enter", "keys": "x"})).await?);
    assert_eq!(err["field"], "keys", "{err}");
    assert_eq!(err["accepted"], json!(["key", "ref", "tabId"]), "{err}");
    // The typed text never reaches the journal.
    let journal = read_all_text(&data.path().join("journal"));
    assert!(!journal.contains("w0rld"), "typed text leaked into the journal: {journal}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn cross_site_frames_are_part_of_the_page() -> Result<()> {
    // The page is on 127.0.0.1, its payment frame on localhost (another site, so
    // another renderer process), and that frame holds a terms frame from
    // 127.0.0.1 again: a cross-site frame inside a cross-site frame.
    let site = SiteServer::start().await?;
    let data = TempDir::new("frames");
    let uploads = TempDir::new("frames-uploads");
    std::fs::write(uploads.path().join("receipt.txt"), "paid in full\n")?;
    let root = uploads.path().display().to_string();
    let client = stdio_client(data.path(), &["--allow-file-root", &root], &[]).await?;
    navigate(&client, &site.url("checkout.html")).await?;
    let snap = snapshot(&client).await?;
    // The frame's lines sit under its iframe line, one level deeper.
    let lines: Vec<&str> = snap.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with("iframe \"Payment\""))
        .unwrap_or_else(|| panic!("no payment frame in:\n{snap}"));
    let indent = |l: &str| l.len() - l.trim_start().len();
    assert!(
        lines[at + 1].contains("Card details") && indent(lines[at + 1]) > indent(lines[at]),
        "{snap}"
    );
    assert!(!snap.contains("not expanded"), "{snap}");
    let card = ref_of(&snap, "textbox", "Card number");
    let holder = ref_of(&snap, "textbox", "Name on card");
    let terms = ref_of(&snap, "checkbox", "I accept the terms");
    let saved = ref_of(&snap, "generic", "Use my saved card");
    let outer = ref_of(&snap, "button", "Outer button");

    // Keys typed into the frame are trusted key events there; form_input sets a
    // field; the button inside submits (the frame's own script reports to its
    // own origin: the server sees what was entered).
    client.tool("type", json!({"ref": card, "text": "4242 4242"})).await?;
    client.tool("form_input", json!({"ref": holder, "value": "Ada Lovelace"})).await?;
    let found = texts(&client.tool("find", json!({"query": "Pay now button"})).await?);
    let pay = found
        .lines()
        .next()
        .filter(|l| l.starts_with("button \"Pay now\""))
        .unwrap_or_else(|| panic!("find did not find the frame's button first: {found}"));
    let pay = ref_in(pay).to_owned();
    let r = client.tool("interact", json!({"ref": pay})).await?;
    assert!(texts(&r).starts_with("clicked button \"Pay now\""), "{}", texts(&r));
    let rec = site.expect_recorded("card=").await?;
    assert_eq!(rec, "card=4242 4242&holder=Ada Lovelace&keydowns=9&from=localhost");

    // A frame inside the frame; an element that is clickable only by its listener.
    client.tool("interact", json!({"ref": terms})).await?;
    site.expect_recorded("terms=true").await?;
    client.tool("interact", json!({"ref": saved})).await?;
    site.expect_recorded("saved=1").await?;
    // find reaches the nested frame; interact by query too.
    let found = texts(&client.tool("find", json!({"query": "accept the terms"})).await?);
    assert!(found.starts_with(&format!("checkbox \"I accept the terms\" {terms}")), "{found}");
    // query_dom covers the frames.
    let q = client.tool_json("query_dom", json!({"selector": "input[name=card]"})).await?;
    assert_eq!(q["matches"].as_array().map(Vec::len), Some(1), "{q}");
    // The page's own elements still work next to the frames.
    client.tool("interact", json!({"ref": outer})).await?;
    site.expect_recorded("outer=clicked").await?;

    // The frame loads a new document: its old refs are stale, new ones work.
    let again = ref_of(&snap, "button", "Start over");
    client.tool("interact", json!({"ref": again})).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = client.tool("form_input", json!({"ref": holder, "value": "x"})).await?;
    assert_eq!(error_of(&r)["code"], "STALE_REF", "{}", texts(&r));
    let snap = snapshot(&client).await?;
    let holder2 = ref_of(&snap, "textbox", "Name on card");
    assert_ne!(holder2, holder);
    client.tool("form_input", json!({"ref": holder2, "value": "Grace Hopper"})).await?;
    client.tool("interact", json!({"query": "Pay now"})).await?;
    site.expect_recorded("holder=Grace Hopper").await?;
    // fill_form by labels finds the frame that has the fields.
    let r = client.tool("fill_form", json!({"fields": {"Card number": "5555 0000", "Name on card": "Alan Turing"}, "submit": true}))
    .await?;
    assert!(texts(&r).starts_with("filled 2 fields"), "{}", texts(&r));
    site.expect_recorded("card=5555 0000&holder=Alan Turing").await?;
    // read_page's interactive filter lists the frames' controls too.
    let r = client.tool("read_page", json!({"filter": "interactive"})).await?;
    let only = texts(&r);
    assert!(only.contains("checkbox \"I accept the terms\""), "{only}");
    assert!(!only.contains("iframe"), "{only}");
    // A file input inside the frame takes files (the frame's page reads the file
    // and reports its text to its server).
    let receipt = ref_of(&snap, "button", "Receipt");
    let path = uploads.path().join("receipt.txt").display().to_string();
    let r = client.tool("file_upload", json!({"ref": receipt, "filePaths": [path]})).await?;
    assert!(texts(&r).contains("1 file: receipt.txt"), "{}", texts(&r));
    site.expect_recorded("receipt=paid in full").await?;
    // A dialog the frame opens is the tab's dialog, answered like any other.
    let cancel = ref_of(&snap, "button", "Cancel payment");
    let r = client.tool("interact", json!({"ref": cancel})).await?;
    assert!(texts(&r).contains("confirm dialog: \"Cancel the payment?\""), "{}", texts(&r));
    client.tool("handle_dialog", json!({"accept": true})).await?;
    site.expect_recorded("cancel=true").await?;
    // Text and markdown read the frames too (a frame's text is not in its page's).
    for mode in ["text", "markdown"] {
        let r = client.tool("read_page", json!({"mode": mode})).await?;
        let t = texts(&r);
        assert!(t.contains("Card details") && t.contains("I accept the terms"), "{mode}: {t}");
        assert!(!t.contains('\u{1}'), "{mode}: a frame mark is left: {t:?}");
    }
    client.cancel().await?;
    Ok(())
}

/// The tests' headless browser is Chromium's headless shell (ochre's default
/// when installed), which keeps cross-site frames in the page's renderer
/// unless told otherwise: ochre launches every browser with a renderer per
/// site. The full Chromium (`--chrome-path`) reads the payment frame (and the
/// frame inside it) the same way.
#[tokio::test]
async fn cross_site_frames_are_read_in_the_full_chromium_too() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("frames-chromium");
    let chromium = chromium_bin()?.display().to_string();
    let client = stdio_client(data.path(), &["--chrome-path", &chromium], &[]).await?;
    navigate(&client, &site.url("checkout.html")).await?;
    let snap = snapshot(&client).await?;
    assert!(!snap.contains("not expanded"), "{snap}");
    ref_of(&snap, "textbox", "Card number");
    ref_of(&snap, "checkbox", "I accept the terms");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn big_results_stay_within_the_response_budget() -> Result<()> {
    let (site, data, client) = site_at("budget", &[], "many-controls.html").await?;
    let r = client.tool("read_page", json!({})).await?;
    let t = texts(&r);
    assert!(t.len() <= 100_000, "read_page answered {} bytes", t.len());
    let head: String = t.chars().take(600).collect();
    assert!(t.contains("h1 \"Inventory\""), "the first view lost the top: {head}");
    assert!(t.contains("[truncated: the whole result is"), "no notice");
    assert!(t.contains("h2 \"Section 399\""), "the outline misses the far end");
    let handle = t.split('"').find(|w| w.starts_with("oh_")).expect("an output handle").to_owned();
    // The rest is there to page through.
    let page = client
        .tool_json(
            "oc_output_fetch",
            json!({"output_handle": handle, "offset": 0, "limit": 8_000_000}),
        )
        .await?;
    let whole = page["content"].as_str().unwrap_or("");
    assert!(whole.contains("Finish the inventory"), "the stored result misses the end");
    // The far-end element is still found and clicked.
    let found = texts(&client.tool("find", json!({"query": "Finish the inventory"})).await?);
    let r = ref_in(&found).to_owned();
    client.tool("interact", json!({"ref": r})).await?;
    site.expect_recorded("clicked=last").await?;
    // The caller may still ask for everything.
    let r = client.tool("read_page", json!({"output_mode": "inline"})).await?;
    assert!(texts(&r).len() > 100_000 && !texts(&r).contains("[truncated"));
    // Small results are untouched.
    navigate(&client, &site.url("form.html")).await?;
    assert!(!snapshot(&client).await?.contains("[truncated"));
    // A smaller budget, set by the operator.
    client.cancel().await?;
    let client = stdio_client(data.path(), &["--max-response-tokens", "1000"], &[]).await?;
    navigate(&client, &site.url("many-controls.html")).await?;
    let t = snapshot(&client).await?;
    assert!(t.len() <= 4_000 && t.contains("[truncated"), "{} bytes", t.len());
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn the_login_wall_hint_needs_a_login_form() -> Result<()> {
    let (site, _data, client) = site_and_client("login-wall", &[]).await?;
    // A signed-in admin page under /admin/auth/: no hint.
    let r = navigate(&client, &site.url("admin/auth/user/index.html")).await?;
    let out = structured(&r);
    assert!(out.get("_hint").is_none() && out.get("wall").is_none(), "{out}");
    // A real login page: a hint.
    let r = navigate(&client, &site.url("login.html")).await?;
    let out = structured(&r);
    assert_eq!(out["wall"], "a login form");
    assert_eq!(out["_hint"]["rule"], "login_wall");
    client.cancel().await?;
    Ok(())
}

/// A page the server answers with an error (a 404 here) loads, and the answer
/// says its HTTP status, also at the end of a redirect; a page that came
/// with 200 says none. The requests are checked at the server.
#[tokio::test]
async fn a_page_the_server_answers_with_an_error_says_its_status() -> Result<()> {
    let (site, _data, client) = site_and_client("http-status", &[]).await?;
    let r = navigate(&client, &site.url("no-such-page.html")).await?;
    let out = structured(&r);
    assert_eq!(out["status"], 404, "{out}");
    assert_eq!(out["url"], site.url("no-such-page.html"), "{out}");
    assert!(site.requests().iter().any(|q| q == "GET /no-such-page.html"), "{:?}", site.requests());
    let to = site.url("gone.html");
    let r = navigate(&client, &site.url(&format!("redirect?to={to}"))).await?;
    let out = structured(&r);
    assert_eq!((out["status"].clone(), out["url"].clone()), (json!(404), json!(to)), "{out}");
    assert!(site.requests().iter().any(|q| q == "GET /gone.html"), "{:?}", site.requests());
    let r = navigate(&client, &site.url("page2.html")).await?;
    let out = structured(&r);
    assert!(out.get("status").is_none() && out["title"] == "Page two", "{out}");
    client.cancel().await?;
    Ok(())
}

/// A page that navigates itself again and again before any of its documents
/// loads (its script submits its own form at once) is said to as soon as
/// eight documents have come, stopped and left for about:blank (where it
/// would go on using a core), not waited for until the navigation's
/// timeout; the server saw those documents, and no more. The tab is not
/// stuck behind it: the next navigation loads, and the one after. Nor behind
/// a navigation whose time ran out first. The same with the page's CPU
/// slowed 4x.
#[tokio::test]
async fn a_page_that_navigates_itself_before_it_loads_is_said_to_and_stopped() -> Result<()> {
    self_navigating_pages_are_left(1).await
}

#[tokio::test]
async fn a_page_that_navigates_itself_is_stopped_with_the_cpu_slowed_4x() -> Result<()> {
    self_navigating_pages_are_left(4).await
}

async fn self_navigating_pages_are_left(slowdown: u32) -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("self-submit");
    let client = stdio_client_slowed(data.path(), slowdown.into()).await?;
    slow_the_tab(&client, &site.url("index.html"), slowdown).await?;
    // Stopped and left: the tab shows about:blank, and the server hears no
    // more of it; so too a page whose script retries once stopped.
    let documents = || site.requests().iter().filter(|r| r.contains("self-submit")).count();
    for page in ["misbehaving/self-submit.html", "misbehaving/self-submit.html?again=1"] {
        let before = documents();
        let err = error_of(&client.tool("navigate", json!({"url": site.url(page)})).await?);
        assert_eq!(err["code"], "NAVIGATION_FAILED", "{err}");
        let message = err["message"].as_str().unwrap_or_default();
        eprintln!("{slowdown}x: {message}");
        for says in [
            "navigated itself again and again",
            "self-submit.html?n=",
            "stopped its loading",
            "and left it: the tab shows about:blank",
        ] {
            assert!(message.contains(says), "{message}");
        }
        let sent = documents() - before;
        assert!(sent >= 8, "the server saw {sent} of its documents: {:?}", site.requests());
        let tabs = client.tool_json("tabs_context", json!({})).await?;
        assert_eq!(tabs["tabs"][0]["url"], "about:blank", "{page}: {tabs}");
        let (then, t0) = (documents(), std::time::Instant::now());
        // (Looked at for 300 ms: six of the retries.)
        while t0.elapsed() < std::time::Duration::from_millis(300) {
            assert_eq!(documents(), then, "{page} went on after it was left");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
    for page in ["fields.html", "inpage.html"] {
        let r = navigate(&client, &site.url(page)).await?;
        assert!(structured(&r)["url"].as_str().is_some_and(|u| u.ends_with(page)), "{r:?}");
    }
    // Cut short by its own timeout: the next navigation is not held behind it.
    let slow = json!({"url": site.url("slow?ms=4000"), "timeout": 500});
    assert_eq!(error_of(&client.tool("navigate", slow).await?)["code"], "TIMEOUT");
    let r = navigate(&client, &site.url("fields.html")).await?;
    assert_eq!(structured(&r)["title"], "What fields hold", "{r:?}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn clickable_elements_without_a_role_get_refs_and_names() -> Result<()> {
    let (site, _data, client, snap) = open_page("widgets", &[], "widgets.html").await?;
    // Listeners, onclick, cursor: pointer, draggable: refs with their text.
    let day = ref_of(&snap, "generic", "November 14, 2026");
    // An anchor without href that listens is a link, as Chromium has it.
    let next = ref_of(&snap, "link", "Next");
    let red = ref_of(&snap, "generic", "Red");
    let green = ref_of(&snap, "generic", "Green");
    ref_of(&snap, "generic", "First item");
    // Names: flex items apart, hidden words left out; selects show their choice.
    ref_of(&snap, "link", "GET /pets/{petId} Find a pet");
    ref_of(&snap, "button", "Save");
    assert!(!snap.contains("hidden words"), "{snap}");
    let toppings =
        snap.lines().find(|l| l.contains("listbox \"Toppings\"")).expect("the multiple select");
    assert!(toppings.ends_with("=\"Cheese, Olives\" (3 options)"), "{toppings}");
    let size = snap.lines().find(|l| l.contains("combobox \"Size\"")).expect("select");
    assert!(size.ends_with("=\"Large\" (2 options)"), "{size}");
    // All the options on request.
    let r = ref_of(&snap, "listbox", "Toppings");
    let opts = texts(&client.tool("read_page", json!({"ref_id": r})).await?);
    assert!(
        opts.contains("option \"Ham\"") && opts.contains("option \"Olives\" selected"),
        "{opts}"
    );
    // Acting on them reaches the page's handlers (checked on the server).
    for (r, needle) in
        [(&day, "day=14"), (&next, "month=next"), (&red, "picked=red"), (&green, "picked=green")]
    {
        let res = client.tool("interact", json!({"ref": r})).await?;
        assert!(texts(&res).starts_with("clicked"), "{}", texts(&res));
        site.expect_recorded(needle).await?;
    }
    // Each click was one click, not a retry storm.
    assert_eq!(site.recorded().iter().filter(|r| r.as_str() == "day=14").count(), 1);
    // find sees them too.
    let found = texts(&client.tool("find", json!({"query": "November 20, 2026"})).await?);
    assert!(found.contains("November 20, 2026"), "{found}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn the_rustdoc_vec_page_fits_the_budget_and_its_far_end_is_reachable() -> Result<()> {
    let docs = rust_docs_dir().expect(
        "the Rust standard library docs (rustup component add rust-docs, or apt-get install rust-doc; .ci/setup does)",
    );
    let site = SiteServer::start_at(docs).await?;
    let data = TempDir::new("vec-budget");
    let client = stdio_client(data.path(), &[], &[]).await?;
    navigate(&client, &site.url("std/vec/struct.Vec.html")).await?;
    let t = snapshot(&client).await?;
    assert!(t.len() <= 100_000, "read_page answered {} bytes", t.len());
    assert!(t.contains("[truncated: the whole result is"), "{}", &t[..200.min(t.len())]);
    assert!(t.contains("Blanket Implementations"), "the outline misses the end");
    // The last auto trait implementation, near the end of the page (the last of
    // the links so named: the first is the sidebar's).
    let found = texts(&client.tool("find", json!({"query": "UnwindSafe", "limit": 20})).await?);
    let line = found
        .lines()
        .filter(|l| l.contains("link \"UnwindSafe\""))
        .max_by_key(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_prefix("ax_").and_then(|n| n.parse::<u64>().ok()))
                .unwrap_or(0)
        })
        .unwrap_or_else(|| panic!("no UnwindSafe link in {found}"));
    let r = ref_in(line).to_owned();
    let res = client.tool("interact", json!({"ref": r})).await?;
    assert!(texts(&res).contains("trait.UnwindSafe.html"), "{}", texts(&res));
    let tabs = client.tool_json("tabs_context", json!({})).await?.to_string();
    assert!(tabs.contains("trait.UnwindSafe.html"), "{tabs}");
    client.cancel().await?;
    Ok(())
}

/// `ochre:plugin@0.2.0` tells a plugin which tab opened a tab and the dialog open
/// on it (the core plugin's tabs_context shows both); a plugin built against 0.1.0
/// (the hello fixture) is served the same tabs through the host's adapter, without
/// the fields its version does not have.
#[tokio::test]
async fn tabs_tell_their_opener_and_open_dialog_and_0_1_plugins_still_read_them() -> Result<()> {
    let site = SiteServer::start().await?;
    let (data, _plugins, dir) = data_and_plugins("wit-tabs", &["hello"]);
    let client = stdio_client(data.path(), &["--plugin-dir", &dir], &[]).await?;
    navigate(&client, &site.url("popups.html")).await?;
    let snap = snapshot(&client).await?;
    client.tool("interact", json!({"ref": ref_of(&snap, "button", "Open the product")})).await?;
    // The popup's own page raises an alert.
    client
        .tool(
            "javascript_tool",
            json!({"tabId": "t2", "code": "setTimeout(() => alert('Out of stock'), 0); 1"}),
        )
        .await?;
    let tabs = async {
        loop {
            let tabs = client.tool_json("tabs_context", json!({})).await?;
            if tabs["tabs"][1].get("dialog").is_some() {
                return anyhow::Ok(tabs);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let tabs = tokio::time::timeout(Duration::from_secs(10), tabs).await??;
    let (first, popup) = (&tabs["tabs"][0], &tabs["tabs"][1]);
    assert_eq!(first["tabId"], "t1");
    assert!(first.get("openerTabId").is_none() && first.get("dialog").is_none(), "{first}");
    // The opener shares the popup's renderer, blocked by the alert: its title
    // still comes (from the browser), without waiting on the page (asking the
    // page first waits out its 1 s bound per blocked tab, two here: the bound
    // below tells the two apart with room for a busy machine).
    assert_eq!(first["title"], "Popups", "{first}");
    let started = Instant::now();
    client.tool_json("tabs_context", json!({})).await?;
    assert!(
        started.elapsed() < Duration::from_millis(1_900),
        "tabs_context took {:?}: it waited on the blocked pages",
        started.elapsed()
    );
    assert_eq!(popup["tabId"], "t2");
    assert_eq!(popup["openerTabId"], "t1", "{popup}");
    assert_eq!(popup["dialog"], json!({"type": "alert", "message": "Out of stock"}));

    // The 0.1.0 plugin reads the same tabs, without opener or dialog.
    let seen = client.tool_json("hello_tabs", json!({})).await?;
    assert_eq!(seen["wit"], "0.1.0");
    let ids: Vec<&str> =
        seen["tabs"].as_array().expect("tabs").iter().filter_map(|t| t["tabId"].as_str()).collect();
    assert_eq!(ids, ["t1", "t2"]);
    assert!(
        seen["tabs"]
            .as_array()
            .expect("tabs")
            .iter()
            .all(|t| t.get("dialog").is_none() && t.get("openerTabId").is_none()),
        "{seen}"
    );
    assert!(seen["tabs"][1]["url"].as_str().unwrap_or("").contains("product.html"), "{seen}");
    client.tool("handle_dialog", json!({"tabId": "t2", "accept": true})).await?;
    let tabs = client.tool_json("tabs_context", json!({})).await?;
    assert!(tabs["tabs"][1].get("dialog").is_none(), "answered, yet {tabs}");
    client.cancel().await?;
    Ok(())
}
