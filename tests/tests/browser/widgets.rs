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
    let client = stdio_client(data.path(), &[], &[]).await?;
    mui_pass(&client, &site, 1, 1.0).await?;
    // Again with the page slowed: the CPU throttled 4x.
    mui_pass(&client, &site, 2, 4.0).await?;
    client.cancel().await?;
    Ok(())
}
