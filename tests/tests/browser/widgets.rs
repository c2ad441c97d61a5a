//! Real UI libraries, installed from the npm registry at test time (never copied
//! into the repository), driven as an agent would: `read_page` or `find` → a ref
//! by role and name → act. Every result is checked on the server side (the
//! request the page sent to `/record`), never by asking the page.

use anyhow::Result;
use ochre_tests::*;
use serde_json::{Value, json};

async fn widget_site() -> Result<SiteServer> {
    let modules = widget_modules()?;
    SiteServer::start_with(sites_dir(), vec![("/vendor/".into(), modules)]).await
}

/// A server of the widget pages, an ochre server, and the page opened.
async fn open_widget(label: &str, page: &str) -> Result<(SiteServer, TempDir, Client)> {
    let site = widget_site().await?;
    let data = TempDir::new(label);
    let client = stdio_client(data.path(), &[], &[]).await?;
    navigate(&client, &site.url(page)).await?;
    Ok((site, data, client))
}

/// The ref of the line with this role and name in a fresh snapshot.
async fn find_ref(client: &Client, role: &str, name: &str) -> Result<String> {
    Ok(ref_of(&snapshot(client).await?, role, name))
}

async fn click(client: &Client, r: &str) -> Result<String> {
    let res = client.tool("interact", json!({"ref": r})).await?;
    let t = texts(&res);
    assert!(t.starts_with("clicked"), "{t}");
    Ok(t)
}

#[tokio::test]
async fn choices_js_searchable_select() -> Result<()> {
    let (site, _data, client) = open_widget("widgets-choices", "widgets/choices.html").await?;
    let snap = snapshot(&client).await?;
    let combo = snap
        .lines()
        .find(|l| l.trim_start().starts_with("combobox"))
        .and_then(|l| l.split_whitespace().find(|w| w.starts_with("ax_")))
        .expect("the Choices combobox")
        .to_owned();
    click(&client, &combo).await?;
    let snap = snapshot(&client).await?;
    let search = snap
        .lines()
        .find(|l| l.trim_start().starts_with("searchbox") || l.trim_start().starts_with("textbox"))
        .and_then(|l| l.split_whitespace().find(|w| w.starts_with("ax_")))
        .expect("the search field")
        .to_owned();
    client.tool("type", json!({"ref": search, "text": "Ger"})).await?;
    let germany = find_ref(&client, "option", "Germany").await?;
    click(&client, &germany).await?;
    click(&client, &find_ref(&client, "button", "Send").await?).await?;
    site.expect_recorded("country=de").await?;
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn bootstrap_dropdown_and_modal() -> Result<()> {
    let (site, _data, client) = open_widget("widgets-bootstrap", "widgets/bootstrap.html").await?;
    click(&client, &find_ref(&client, "button", "Actions").await?).await?;
    click(&client, &find_ref(&client, "link", "Archive").await?).await?;
    site.expect_recorded("action=archive").await?;
    click(&client, &find_ref(&client, "button", "Edit profile").await?).await?;
    let name = find_ref(&client, "textbox", "Display name").await?;
    client.tool("form_input", json!({"ref": name, "value": "Grace Hopper"})).await?;
    click(&client, &find_ref(&client, "button", "Save changes").await?).await?;
    site.expect_recorded("name=Grace Hopper").await?;
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn sweetalert2_confirmation() -> Result<()> {
    let (site, _data, client) = open_widget("widgets-swal", "widgets/sweetalert.html").await?;
    click(&client, &find_ref(&client, "button", "Delete account").await?).await?;
    let snap = snapshot(&client).await?;
    assert!(snap.contains("Are you sure?"), "{snap}");
    click(&client, &ref_of(&snap, "button", "Yes, delete it")).await?;
    site.expect_recorded("deleted=true").await?;
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn htmx_requests() -> Result<()> {
    let (site, _data, client) = open_widget("widgets-htmx", "widgets/htmx.html").await?;
    let q = find_ref(&client, "textbox", "Query").await?;
    client.tool("form_input", json!({"ref": q, "value": "ochre"})).await?;
    click(&client, &find_ref(&client, "button", "Search").await?).await?;
    site.expect_recorded("q=ochre").await?;
    click(&client, &find_ref(&client, "button", "Load more").await?).await?;
    site.expect_recorded("more=1").await?;
    // htmx put the server's answer in the page.
    let t = texts(&client.tool("read_page", json!({"mode": "text"})).await?);
    assert!(t.contains("ok"), "{t}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn pikaday_date_picker() -> Result<()> {
    let (site, _data, client) = open_widget("widgets-pikaday", "widgets/pikaday.html").await?;
    click(&client, &find_ref(&client, "textbox", "Arrival").await?).await?;
    let snap = snapshot(&client).await?;
    click(&client, &ref_of(&snap, "button", "Next Month")).await?;
    click(&client, &find_ref(&client, "button", "15").await?).await?;
    click(&client, &find_ref(&client, "button", "Book").await?).await?;
    site.expect_recorded("arrival=Sun Feb 15 2026").await?;
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn sortablejs_list() -> Result<()> {
    let (site, _data, client) = open_widget("widgets-sortable", "widgets/sortable.html").await?;
    let snap = snapshot(&client).await?;
    let charlie = ref_of(&snap, "generic", "Charlie");
    let alpha = ref_of(&snap, "generic", "Alpha");
    let r = client.tool("drag_drop", json!({"source": charlie, "target": alpha})).await?;
    assert!(texts(&r).starts_with("dragged"), "{}", texts(&r));
    click(&client, &find_ref(&client, "button", "Save order").await?).await?;
    site.expect_recorded("order=Charlie,Alpha,Bravo").await?;
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn flask_admin_sign_in_create_edit_delete() -> Result<()> {
    let dir = TempDir::new("admin-app");
    let app = AdminApp::start(dir.path()).await?;
    let data = TempDir::new("admin-agent");
    let client = stdio_client(data.path(), &[], &[]).await?;
    // The admin sends us to its sign-in page: a login wall, on evidence.
    let r = client.tool("navigate", json!({"url": format!("{}/admin/book/", app.base)})).await?;
    let out = structured(&r);
    assert_eq!(out["wall"], "a login form", "{out}");
    let password = "correct horse battery staple";
    client
        .tool(
            "fill_form",
            json!({"fields": {"Username": "admin", "Password": password}, "submit": true}),
        )
        .await?;
    let snap = snapshot(&client).await?;
    assert!(snap.contains("Dune"), "{snap}");
    // Create.
    click(&client, &ref_of(&snap, "link", "Create")).await?;
    client
        .tool(
            "fill_form",
            json!({"fields": {"Title": "Neuromancer", "Author": "William Gibson", "Year": "1984"}}),
        )
        .await?;
    click(&client, &find_ref(&client, "button", "Save").await?).await?;
    assert_eq!(
        app.rows("select title, author, year from book order by id")?,
        vec![
            json!(["Dune", "Frank Herbert", 1965]),
            json!(["Neuromancer", "William Gibson", 1984])
        ]
    );
    // Edit the new row: its "Edit Record" icon link.
    let snap = snapshot(&client).await?;
    let edits = refs_of(&snap, "link", "Edit Record");
    assert_eq!(edits.len(), 2, "{snap}");
    click(&client, &edits[1]).await?;
    client.tool("fill_form", json!({"fields": {"Year": "1985"}})).await?;
    click(&client, &find_ref(&client, "button", "Save").await?).await?;
    assert_eq!(app.rows("select year from book where title = 'Neuromancer'")?, vec![json!([1985])]);
    // Delete: the app asks with a JavaScript confirm dialog.
    let snap = snapshot(&client).await?;
    let deletes = refs_of(&snap, "button", "Delete Record");
    assert_eq!(deletes.len(), 2, "{snap}");
    let r = client.tool("interact", json!({"ref": deletes[1]})).await?;
    assert_eq!(structured(&r)["dialog"]["type"], "confirm", "{r:?}");
    client.tool("handle_dialog", json!({"accept": true})).await?;
    let mut rows = Vec::new();
    for _ in 0..50 {
        rows = app.rows("select title from book order by id")?;
        if rows.len() == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(rows, vec![json!(["Dune"])]);
    // The password never reached the journal.
    let journal = read_all_text(&data.path().join("journal"));
    assert!(!journal.contains(password), "the password leaked into the journal");
    client.cancel().await?;
    Ok(())
}

/// One pass over the MUI form, every call back to back (no sleeps), each choice
/// checked on the server side.
async fn mui_pass(client: &Client, site: &SiteServer, run: u32, slow: f64) -> Result<()> {
    navigate(client, &site.url(&format!("index.html?run={run}"))).await?;
    if slow > 1.0 {
        client.tool_json("network", json!({"cpuSlowdown": slow})).await?;
    }
    let snap = texts(&client.tool("read_page", json!({"filter": "interactive"})).await?);
    let r = |role: &str, name: &str| ref_of(&snap, role, name);
    let set = |r: String, v: Value| async move {
        let res = client.tool("form_input", json!({"ref": r, "value": v})).await?;
        assert_ne!(res.is_error, Some(true), "form_input {v}: {}", texts(&res));
        anyhow::Ok(texts(&res))
    };
    set(r("textbox", "Your name"), json!("Ada Lovelace")).await?;
    // A Select whose menu grows in (a portal): opened, the option clicked by name.
    let out = set(r("combobox", "Country"), json!("Germany")).await?;
    assert!(out.contains(r#"it shows "Germany""#), "{out}");
    // An Autocomplete: typed, then chosen.
    let out = set(r("combobox", "City"), json!("Tokyo")).await?;
    assert!(out.contains(r#"it shows "Tokyo""#), "{out}");
    // A multiple Autocomplete: the choice is a chip beside it.
    let out = set(r("combobox", "Interests"), json!("food")).await?;
    assert!(out.contains("food"), "{out}");
    // An option that is not there: refused, the choice kept.
    let err = client
        .tool_error("form_input", json!({"ref": r("combobox", "Country"), "value": "Atlantis"}))
        .await?;
    assert!(
        err["message"].as_str().unwrap_or("").contains(r#"shows "Germany" as before"#),
        "{err}"
    );
    // A Slider (its native range input), set and read back.
    let out = set(r("slider", "Budget share"), json!("55")).await?;
    assert!(out.contains(r#"="55""#), "{out}");
    // A DatePicker's sections take typed digits.
    let month = r("spinbutton", "Month");
    client.tool_text("type", json!({"ref": month, "text": "04092016"})).await?;
    // MUI lays a transparent native checkbox over its drawn one.
    let out =
        client.tool_text("interact", json!({"ref": r("checkbox", "I accept the terms")})).await?;
    assert!(out.contains("now checked"), "{out}");
    // A Dialog that fades in; its Confirm leaves a Snackbar over "Send" for a
    // moment. (MUI's buttons show their words in capitals, and so are they named.)
    client.tool_text("interact", json!({"ref": r("button", "REVIEW")})).await?;
    let confirm = find_ref(client, "button", "CONFIRM").await?;
    client.tool_text("interact", json!({"ref": confirm})).await?;
    site.expect_recorded(&format!("run={run}&dialog=confirmed")).await?;
    let out = client.tool_text("interact", json!({"ref": r("button", "SEND")})).await?;
    assert!(out.contains("covered by div.Mui"), "the snackbar was waited out: {out}");
    assert!(out.contains("1 request sent"), "{out}");
    let sent = site.expect_recorded(&format!("form=mui&run={run}&name=")).await?;
    for part in [
        "name=Ada Lovelace",
        "country=de",
        "city=Tokyo",
        "tags=food",
        "volume=55",
        "start=2016-04-09",
        "agree=true",
    ] {
        assert!(sent.contains(part), "{part} not in {sent}");
    }
    Ok(())
}

#[tokio::test]
async fn mui_components_by_ref_back_to_back_and_slowed() -> Result<()> {
    let site = SiteServer::start_at(mui_site()?).await?;
    let data = TempDir::new("widgets-mui");
    let client = stdio_client_slowed(data.path(), 4.0).await?;
    mui_pass(&client, &site, 1, 1.0).await?;
    // Again with the page's CPU throttled 4x.
    mui_pass(&client, &site, 2, 4.0).await?;
    client.cancel().await?;
    Ok(())
}

/// A server of the library pages (`fixtures/sites/lib`, their libraries as
/// `SiteServer::start_with_libraries` serves them), an ochre server, the page
/// opened and its snapshot.
async fn open_lib(label: &str, page: &str) -> Result<(SiteServer, TempDir, Client, String)> {
    let site = SiteServer::start_with_libraries().await?;
    let data = TempDir::new(label);
    let client = stdio_client(data.path(), &[], &[]).await?;
    navigate(&client, &site.url(page)).await?;
    let snap = snapshot(&client).await?;
    Ok((site, data, client, snap))
}

/// A code editor that takes its keys through a textarea in a box of no height
/// (CodeMirror 5) is offered as a textbox, and typing there edits the code.
#[tokio::test]
async fn codemirror5_takes_typed_text_through_its_textarea() -> Result<()> {
    let (site, _data, client, snap) = open_lib("lib-cm5", "lib/codemirror5.html").await?;
    let editor = snap
        .lines()
        .find(|l| l.trim_start().starts_with("textbox"))
        .map(ref_in)
        .unwrap_or_else(|| panic!("no textbox for the editor in:\n{snap}"));
    let typed = client.tool("type", json!({"ref": editor, "text": "// checked"})).await?;
    assert_ne!(typed.is_error, Some(true), "{}", texts(&typed));
    click(&client, &find_ref(&client, "button", "Save script").await?).await?;
    let code = site.expect_recorded("code=").await?;
    assert!(code.contains("// checked") && code.contains("function greet"), "{code}");
    client.cancel().await?;
    Ok(())
}

/// A sortable list whose dragged item follows the pointer (jQuery UI): the
/// drop's events reach the item, the list reorders: "dragged", not a failure.
/// A drag onto what does not take it (a heading) changes nothing: a failure
/// that says what received it.
#[tokio::test]
async fn jquery_ui_sortable_drag_is_judged_by_its_effect() -> Result<()> {
    let (site, _data, client, snap) = open_lib("lib-sortable", "lib/jqui-sortable.html").await?;
    let first = ref_of(&snap, "generic", "Login page");
    let third = ref_of(&snap, "generic", "Audit log");
    let r = client.tool("drag_drop", json!({"source": first, "target": third})).await?;
    let t = texts(&r);
    assert_ne!(r.is_error, Some(true), "{t}");
    assert!(t.starts_with("dragged"), "{t}");
    let order = site.expect_recorded("order=").await?;
    assert!(order.starts_with("order=Password reset"), "{order}");
    client.cancel().await?;

    let (site, _data, client, snap) = open_lib("lib-draggable", "lib/jqui-draggable.html").await?;
    let card = ref_of(&snap, "generic", "Quarterly report");
    // Onto the status line, which takes nothing: the card goes back (revert),
    // nothing changed: a failure naming what received the drop.
    assert!(snap.contains("\"Nothing archived\""), "no status line in {snap}");
    let r = client.tool("drag_drop", json!({"source": card, "targetSelector": "#status"})).await?;
    let e = error_of(&r);
    assert_eq!(e["code"], "ELEMENT_NOT_INTERACTABLE", "{e}");
    assert!(e["message"].as_str().unwrap_or_default().contains("did not react"), "{e}");
    assert!(!site.recorded().iter().any(|q| q.contains("archived=")), "{:?}", site.recorded());
    // Onto the bin: archived (checked on the server).
    assert!(snap.contains("\"Archive (drop here)\""), "{snap}");
    let r = client.tool("drag_drop", json!({"source": card, "targetSelector": "#bin"})).await?;
    assert!(texts(&r).starts_with("dragged"), "{}", texts(&r));
    site.expect_recorded("archived=Quarterly report").await?;
    client.cancel().await?;
    Ok(())
}

/// Autocomplete suggestions that are plain items under a list taking their
/// clicks through one delegated listener (jQuery UI) have refs: the agent
/// clicks the one it read.
#[tokio::test]
async fn jquery_ui_autocomplete_suggestions_can_be_clicked() -> Result<()> {
    let (site, _data, client, snap) =
        open_lib("lib-autocomplete", "lib/jqui-autocomplete.html").await?;
    let field = ref_of(&snap, "textbox", "Language");
    client.tool("type", json!({"ref": field, "text": "ja"})).await?;
    let found = client.tool_text("find", json!({"query": "JavaScript"})).await?;
    let line =
        found.lines().find(|l| l.contains("\"JavaScript\"")).unwrap_or_else(|| panic!("{found}"));
    click(&client, ref_in(line)).await?;
    site.expect_recorded("language=JavaScript").await?;
    client.cancel().await?;
    Ok(())
}

/// A form label above a select that a library replaced (Select2) is read, and
/// the choice made through the library's own widget reaches the server.
#[tokio::test]
async fn select2_label_is_read_and_a_choice_is_made() -> Result<()> {
    let (site, _data, client, snap) = open_lib("lib-select2", "lib/select2.html").await?;
    // The label, as on screen, before the widget that stands for its select.
    let label = snap.find("\"Status *\"").unwrap_or_else(|| panic!("no label in:\n{snap}"));
    let widget = snap.find("=\"Pending\"").unwrap_or_else(|| panic!("no widget in:\n{snap}"));
    assert!(label < widget, "{snap}");
    let found = client.tool_text("find", json!({"query": "Status"})).await?;
    assert!(found.contains("Status"), "{found}");
    let combo = snap
        .lines()
        .find(|l| l.trim_start().starts_with("combobox") && l.contains("=\"Pending\""))
        .map(ref_in)
        .unwrap_or_else(|| panic!("{snap}"));
    click(&client, combo).await?;
    click(&client, &find_ref(&client, "option", "Shipped").await?).await?;
    site.expect_recorded("status=shipped").await?;
    client.cancel().await?;
    Ok(())
}

/// The ref of what a step of a library page's action names: `role` (and
/// `name`) in a fresh snapshot, or the first line of `find` with `find`'s
/// words; `None` when nothing matches.
async fn step_ref(client: &Client, at: &Value) -> Result<Option<String>> {
    if let Some(q) = at["find"].as_str() {
        // The most specific match: the shortest line with the words.
        let found = client.tool_text("find", json!({"query": q})).await?;
        return Ok(found
            .lines()
            .filter(|l| l.contains(q) && l.contains(" ax_"))
            .min_by_key(|l| l.len())
            .map(|l| ref_in(l).to_owned()));
    }
    let Some(role) = at["role"].as_str() else { return Ok(None) };
    let snap = snapshot(client).await?;
    // `role "name" ax_N` anywhere in a line (a table row holds several).
    let want = match at["name"].as_str() {
        Some(n) => format!("{role} {} ax_", json!(n)),
        None => format!("{role} ax_"),
    };
    for line in snap.lines() {
        let l = line.trim_start();
        let at = if at["name"].is_null() && l.starts_with(&format!("{role} \"")) {
            // A role without a name asked: the first line of that role.
            l.find(" ax_").map(|i| i + 1)
        } else {
            l.find(&want).map(|i| i + want.len() - 3)
        };
        if let Some(i) = at {
            let digits: String = l[i + 3..].chars().take_while(char::is_ascii_digit).collect();
            return Ok(Some(format!("ax_{digits}")));
        }
    }
    Ok(None)
}

/// What one pass of the library actions found.
#[derive(Default)]
struct Pass {
    pages: usize,
    actions: usize,
    done: usize,
    false_success: Vec<String>,
    false_failure: Vec<String>,
    failed: Vec<String>,
}

/// Which library pages a pass covers: `fixtures/sites/lib` (pages that load
/// their libraries as they are), or the component kits' dirs (bundled at test
/// time). Two parts, so that no pass runs near the suite's time limit.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Lib,
    Kits,
}

/// One pass over the library pages' actions, on fresh servers (their requests
/// are this pass's alone), the tab's CPU slowed `slowdown` times.
async fn library_actions(part: Part, slowdown: u32) -> Result<Pass> {
    let site = SiteServer::start_with_libraries().await?;
    let mut bundled = Vec::new();
    if part == Part::Kits {
        for (dir, built) in bundled_lib_sites()? {
            bundled.push((dir, SiteServer::start_at(built).await?));
        }
    }
    let data = TempDir::new("lib-actions");
    let client = stdio_client_slowed(data.path(), slowdown.into()).await?;
    client.tool("expand_tools", json!({"tier": 2})).await?;
    let mut actions = Vec::new();
    let lib = (part == Part::Lib).then_some(("lib", &site));
    let dirs = lib.into_iter().chain(bundled.iter().map(|(d, s)| (*d, s)));
    // OCHRE_ACTIONS_ONLY=a,b: the pages whose path has one of these (to look
    // into one page; the bar below then holds for those).
    let only = std::env::var("OCHRE_ACTIONS_ONLY").ok();
    for (dir, server) in dirs {
        for n in html_pages(dir)? {
            let path = format!("{dir}/{n}");
            if only.as_deref().is_some_and(|o| !o.split(',').any(|o| path.contains(o))) {
                continue;
            }
            let html = std::fs::read_to_string(sites_dir().join(dir).join(&n))?;
            let Some(spec) = html
                .split("<script type=\"application/json\" id=\"ochre-action\">")
                .nth(1)
                .and_then(|s| s.split("</script>").next())
            else {
                anyhow::bail!("{dir}/{n} has no ochre-action block");
            };
            let url = if dir == "lib" { server.url(&format!("lib/{n}")) } else { server.url(&n) };
            // One action, or a list of them (one per widget), run in order
            // on one load of the page.
            let own = match serde_json::from_str::<Value>(spec)? {
                Value::Array(list) => list,
                one => vec![one],
            };
            anyhow::ensure!(!own.is_empty(), "{dir}/{n}: an empty ochre-action list");
            for (k, spec) in own.into_iter().enumerate() {
                actions.push((format!("{dir}/{n}"), url.clone(), spec, server, k == 0));
            }
        }
    }
    let (mut done, mut false_success, mut false_failure, mut failed) =
        (0, Vec::new(), Vec::new(), Vec::new());
    println!(
        "CPU slowed {slowdown}x\n| page | action | ochre said | effect on the server |\n|---|---|---|---|"
    );
    for (i, (name, url, spec, server, first)) in actions.iter().enumerate() {
        // Each page loads at full speed and is slowed for its actions (a
        // slowed load is motion.rs's subject): Chromium's throttle spends a
        // core's worth of CPU for as long as it lasts (see stdio_client_slowed).
        if *first {
            if i > 0 && slowdown > 1 {
                client.tool_json("network", json!({"cpuSlowdown": 1})).await?;
            }
            navigate(&client, url).await?;
            if slowdown > 1 {
                client.tool_json("network", json!({"cpuSlowdown": slowdown})).await?;
            }
        }
        // The requests before this action are not its effect.
        let before = server.recorded().len();
        let mut said = Ok(String::new());
        for step in spec["steps"].as_array().into_iter().flatten() {
            let tool = step["tool"].as_str().expect("tool");
            let targeted = !step["role"].is_null() || !step["find"].is_null();
            let r = if targeted { step_ref(&client, step).await? } else { None };
            if targeted && r.is_none() {
                // OCHRE_ACTIONS_DUMP=1: the page as ochre read it, to see why.
                if std::env::var_os("OCHRE_ACTIONS_DUMP").is_some() {
                    println!("--- {name}: nothing for {step}\n{}\n---", snapshot(&client).await?);
                }
                let after = said.as_deref().unwrap_or_default();
                said = Err(format!("nothing to act on for {step} (after {after:?})"));
                break;
            }
            let mut args = step["args"].as_object().cloned().unwrap_or_default();
            if tool == "drag_drop" {
                args.insert("source".into(), json!(r));
                match step["target"]["selector"].as_str() {
                    Some(sel) => {
                        args.insert("targetSelector".into(), json!(sel));
                    }
                    None => match step_ref(&client, &step["target"]).await? {
                        Some(t) => {
                            args.insert("target".into(), json!(t));
                        }
                        None => {
                            said = Err(format!("no drop target for {step}"));
                            break;
                        }
                    },
                }
            } else if let Some(r) = r {
                args.insert("ref".into(), json!(r));
            }
            let mut res = client.tool(tool, Value::Object(args.clone())).await?;
            // A ref the page replaced since it was read (Grid.js renders a
            // page in several passes): as the answer's hint says, read again
            // and retry, once.
            if targeted
                && tool != "drag_drop"
                && res.is_error == Some(true)
                && error_of(&res)["code"] == "STALE_REF"
                && let Some(again) = step_ref(&client, step).await?
            {
                args.insert("ref".into(), json!(again));
                res = client.tool(tool, Value::Object(args)).await?;
            }
            let t = texts(&res);
            if res.is_error == Some(true) {
                said = Err(format!("{tool}: {t}"));
                break;
            }
            said = Ok(format!("{tool}: {}", t.lines().next().unwrap_or_default()));
        }
        let needle = spec["record"].as_str().expect("record");
        let effect = server.wait_recorded_since(before, needle).await.is_some();
        let cut = |s: &str| s.chars().take(140).collect::<String>().replace('|', "\\|");
        let (answer, verdict) = match (&said, effect) {
            (Ok(t), true) => {
                done += 1;
                (cut(t), "done")
            }
            (Ok(t), false) => {
                false_success.push(format!("{name}: {t}"));
                (cut(t), "FALSE SUCCESS: no effect")
            }
            (Err(e), true) => {
                false_failure.push(format!("{name}: {e}"));
                (cut(e), "FALSE FAILURE: it had its effect")
            }
            (Err(e), false) => {
                failed.push(format!("{name}: {e}"));
                (cut(e), "failed, no effect")
            }
        };
        println!(
            "| {name} | {} | {answer} | {verdict} |",
            spec["what"].as_str().unwrap_or_default()
        );
    }
    client.cancel().await?;
    let pages = actions.iter().filter(|a| a.4).count();
    println!(
        "{done} of {} actions done on {pages} pages; {} false successes, {} false failures, {} honest failures",
        actions.len(),
        false_success.len(),
        false_failure.len(),
        failed.len()
    );
    Ok(Pass { pages, actions: actions.len(), done, false_success, false_failure, failed })
}

/// One action per widget of every library page (its `ochre-action` block:
/// one action or a list of them, each steps through ochre's tools and the
/// request the page sends when the action had its effect), back to back on
/// one load of the page, every answer compared with the effect on the server:
/// a success with no effect is a false success, a failure with the effect a
/// false failure; at full speed and with the page's CPU slowed 4x. The tables
/// are printed (`--nocapture`). Four tests (two parts, two speeds), each well
/// within the suite's time limit on a loaded machine.
#[tokio::test]
async fn every_library_widget_acts_and_its_answer_is_true() -> Result<()> {
    library_actions_hold(Part::Lib, 1).await
}

#[tokio::test]
async fn every_library_widget_acts_truly_with_the_cpu_slowed_4x() -> Result<()> {
    library_actions_hold(Part::Lib, 4).await
}

#[tokio::test]
async fn every_component_kit_widget_acts_and_its_answer_is_true() -> Result<()> {
    library_actions_hold(Part::Kits, 1).await
}

#[tokio::test]
async fn every_component_kit_widget_acts_truly_with_the_cpu_slowed_4x() -> Result<()> {
    library_actions_hold(Part::Kits, 4).await
}

async fn library_actions_hold(part: Part, slowdown: u32) -> Result<()> {
    let p = library_actions(part, slowdown).await?;
    let all = std::env::var_os("OCHRE_ACTIONS_ONLY").is_none();
    assert!(p.pages >= 20 || !all, "only {} library pages", p.pages);
    assert!(p.actions >= p.pages, "{} actions on {} pages", p.actions, p.pages);
    assert!(
        p.false_success.is_empty() && p.false_failure.is_empty(),
        "untrue answers at {slowdown}x:\n{}\n{}",
        p.false_success.join("\n"),
        p.false_failure.join("\n")
    );
    // At least 99% done over the whole set (198 actions at each speed): each
    // of the two parts may fail one honestly (2 of 198 is 99.0%).
    assert!(
        p.done * 100 >= p.actions * 99 || p.done + 1 >= p.actions,
        "{} of {} actions done at {slowdown}x; not done:\n{}",
        p.done,
        p.actions,
        p.failed.join("\n")
    );
    Ok(())
}

/// A notebook's code cell (a focusable container named by `aria-label`, as
/// notebook apps render one; Alpine here) shows its output in `read_page` once
/// run, where the click's answer and `find` had it too.
#[tokio::test]
async fn a_focusable_named_cell_shows_its_output() -> Result<()> {
    let (site, _data, client, snap) = open_lib("lib-cell", "lib/alpine.html").await?;
    let cell = snap
        .lines()
        .find(|l| l.contains("generic \"Code cell 1\" ax_"))
        .unwrap_or_else(|| panic!("no cell in:\n{snap}"))
        .to_owned();
    let run = click(&client, &find_ref(&client, "button", "Run cell").await?).await?;
    site.expect_recorded("ran=42").await?;
    assert!(run.contains("\"42\""), "{run}");
    let snap = snapshot(&client).await?;
    // The cell's words (its code and output, inline) as a text line under it.
    let mut lines = snap.lines().skip_while(|l| *l != cell);
    assert!(lines.next().is_some(), "{cell} gone:\n{snap}");
    let under = lines.next().unwrap_or_default();
    assert_eq!(under.trim(), "\"6 * 7 42\"", "the cell's code and output under it:\n{snap}");
    let found = client.tool_text("find", json!({"query": "42"})).await?;
    assert!(found.contains("42"), "{found}");
    client.cancel().await?;
    Ok(())
}
