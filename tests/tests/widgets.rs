//! Real UI libraries, installed from the npm registry at test time (never copied
//! into the repository), driven as an agent would: `read_page` or `find` → a ref
//! by role and name → act. Every result is checked on the server side (the
//! request the page sent to `/record`), never by asking the page.

use anyhow::Result;
use ochre_tests::*;
use serde_json::json;

async fn widget_site() -> Result<SiteServer> {
    let modules = widget_modules()?;
    SiteServer::start_with(sites_dir(), vec![("/vendor/".into(), modules)]).await
}

async fn snapshot(client: &Client) -> Result<String> {
    Ok(texts(&call(client, "read_page", json!({})).await?))
}

/// The ref of the line with this role and name in a fresh snapshot.
async fn find_ref(client: &Client, role: &str, name: &str) -> Result<String> {
    Ok(ref_of(&snapshot(client).await?, role, name))
}

async fn click(client: &Client, r: &str) -> Result<String> {
    let res = call(client, "interact", json!({"ref": r})).await?;
    let t = texts(&res);
    assert!(t.starts_with("clicked"), "{t}");
    Ok(t)
}

#[tokio::test]
async fn choices_js_searchable_select() -> Result<()> {
    let site = widget_site().await?;
    let data = TempDir::new("widgets-choices");
    let client = stdio_client(data.path(), &[], &[]).await?;
    call(
        &client,
        "navigate",
        json!({"url": site.url("widgets/choices.html")}),
    )
    .await?;
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
    call(&client, "type", json!({"ref": search, "text": "Ger"})).await?;
    let germany = find_ref(&client, "option", "Germany").await?;
    click(&client, &germany).await?;
    click(&client, &find_ref(&client, "button", "Send").await?).await?;
    assert!(
        site.wait_recorded("country=de").await.is_some(),
        "{:?}",
        site.recorded()
    );
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn bootstrap_dropdown_and_modal() -> Result<()> {
    let site = widget_site().await?;
    let data = TempDir::new("widgets-bootstrap");
    let client = stdio_client(data.path(), &[], &[]).await?;
    call(
        &client,
        "navigate",
        json!({"url": site.url("widgets/bootstrap.html")}),
    )
    .await?;
    click(&client, &find_ref(&client, "button", "Actions").await?).await?;
    click(&client, &find_ref(&client, "link", "Archive").await?).await?;
    assert!(
        site.wait_recorded("action=archive").await.is_some(),
        "{:?}",
        site.recorded()
    );
    click(&client, &find_ref(&client, "button", "Edit profile").await?).await?;
    let name = find_ref(&client, "textbox", "Display name").await?;
    call(
        &client,
        "form_input",
        json!({"ref": name, "value": "Grace Hopper"}),
    )
    .await?;
    click(&client, &find_ref(&client, "button", "Save changes").await?).await?;
    assert!(
        site.wait_recorded("name=Grace Hopper").await.is_some(),
        "{:?}",
        site.recorded()
    );
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn sweetalert2_confirmation() -> Result<()> {
    let site = widget_site().await?;
    let data = TempDir::new("widgets-swal");
    let client = stdio_client(data.path(), &[], &[]).await?;
    call(
        &client,
        "navigate",
        json!({"url": site.url("widgets/sweetalert.html")}),
    )
    .await?;
    click(
        &client,
        &find_ref(&client, "button", "Delete account").await?,
    )
    .await?;
    let snap = snapshot(&client).await?;
    assert!(snap.contains("Are you sure?"), "{snap}");
    click(&client, &ref_of(&snap, "button", "Yes, delete it")).await?;
    assert!(
        site.wait_recorded("deleted=true").await.is_some(),
        "{:?}",
        site.recorded()
    );
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn htmx_requests() -> Result<()> {
    let site = widget_site().await?;
    let data = TempDir::new("widgets-htmx");
    let client = stdio_client(data.path(), &[], &[]).await?;
    call(
        &client,
        "navigate",
        json!({"url": site.url("widgets/htmx.html")}),
    )
    .await?;
    let q = find_ref(&client, "textbox", "Query").await?;
    call(&client, "form_input", json!({"ref": q, "value": "ochre"})).await?;
    click(&client, &find_ref(&client, "button", "Search").await?).await?;
    assert!(
        site.wait_recorded("q=ochre").await.is_some(),
        "{:?}",
        site.recorded()
    );
    click(&client, &find_ref(&client, "button", "Load more").await?).await?;
    assert!(
        site.wait_recorded("more=1").await.is_some(),
        "{:?}",
        site.recorded()
    );
    // htmx put the server's answer in the page.
    let t = texts(&call(&client, "read_page", json!({"mode": "text"})).await?);
    assert!(t.contains("ok"), "{t}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn pikaday_date_picker() -> Result<()> {
    let site = widget_site().await?;
    let data = TempDir::new("widgets-pikaday");
    let client = stdio_client(data.path(), &[], &[]).await?;
    call(
        &client,
        "navigate",
        json!({"url": site.url("widgets/pikaday.html")}),
    )
    .await?;
    click(&client, &find_ref(&client, "textbox", "Arrival").await?).await?;
    let snap = snapshot(&client).await?;
    click(&client, &ref_of(&snap, "button", "Next Month")).await?;
    click(&client, &find_ref(&client, "button", "15").await?).await?;
    click(&client, &find_ref(&client, "button", "Book").await?).await?;
    assert!(
        site.wait_recorded("arrival=Sun Feb 15 2026")
            .await
            .is_some(),
        "{:?}",
        site.recorded()
    );
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn sortablejs_list() -> Result<()> {
    let site = widget_site().await?;
    let data = TempDir::new("widgets-sortable");
    let client = stdio_client(data.path(), &[], &[]).await?;
    call(
        &client,
        "navigate",
        json!({"url": site.url("widgets/sortable.html")}),
    )
    .await?;
    let snap = snapshot(&client).await?;
    let charlie = ref_of(&snap, "generic", "Charlie");
    let alpha = ref_of(&snap, "generic", "Alpha");
    let r = call(
        &client,
        "drag_drop",
        json!({"source": charlie, "target": alpha}),
    )
    .await?;
    assert!(texts(&r).starts_with("dragged"), "{}", texts(&r));
    click(&client, &find_ref(&client, "button", "Save order").await?).await?;
    assert!(
        site.wait_recorded("order=Charlie,Alpha,Bravo")
            .await
            .is_some(),
        "{:?}",
        site.recorded()
    );
    client.cancel().await?;
    Ok(())
}
