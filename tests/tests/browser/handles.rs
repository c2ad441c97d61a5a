//! One handle, one target: an action through the host's entry point
//! resolves its tab once (ownership, a person's hold, the owed settle) and
//! drives its steps as typed page operations, and an element named as a
//! caller names it (a ref, role and name, a selector, a description) is found,
//! waited for and used in the same call, whichever operation takes it.

use anyhow::{Context as _, Result, ensure};
use ochre_host::HostBrowser;
use ochre_host::browser::{BrowserManager, BrowserOptions, CallCounts};
use ochre_tests::{SiteServer, chromium_bin, ref_of, tab_id};
use serde_json::{Value, json};

const T: u32 = 15_000;

/// What a call added to the counts.
fn spent(before: CallCounts, after: CallCounts) -> (u64, u64) {
    (after.tab_resolutions - before.tab_resolutions, after.json_ops - before.json_ops)
}

/// A page operation through the JSON entry point (as a plugin sends it), and
/// what it added to the counts.
async fn counted(
    b: &BrowserManager,
    tab: &str,
    op: &str,
    args: Value,
) -> Result<(Value, u64, u64)> {
    let before = b.call_counts();
    let out = b
        .page_op(tab_id(tab)?, op, args.clone(), T)
        .await
        .with_context(|| format!("{op} {args}"))?;
    let (tabs, json) = spent(before, b.call_counts());
    Ok((out, tabs, json))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_resolves_its_tab_once_and_its_steps_are_typed() -> Result<()> {
    let site = SiteServer::start().await?;
    let b = BrowserManager::new(BrowserOptions {
        chrome_path: Some(chromium_bin()?),
        ..Default::default()
    });
    let tab = b.new_tab(Some(&site.url("counter.html?tag=once")), T).await?.id;
    let snap = b.page_op(tab_id(&tab)?, "snapshot", json!({}), T).await?;
    let count = ref_of(snap["text"].as_str().context("the snapshot's text")?, "button", "Count");

    // A click by ref: the tab once, the call's own arguments the only JSON
    // read (its steps: wait until it can take the click, press, settle).
    let (acted, tabs, json) =
        counted(&b, &tab, "act", json!({"ref": count, "action": "click"})).await?;
    ensure!(acted["done"] == json!(true), "the click was not done: {acted}");
    site.expect_recorded("tag=once&n=1").await?;
    assert_eq!(tabs, 1, "tab resolutions for one click");
    assert_eq!(json, 1, "page operations read from JSON for one click (its own call only)");

    // Five more back to back, each at the server: the counts grow by one a click.
    for n in 2..=6 {
        let (acted, tabs, json) =
            counted(&b, &tab, "act", json!({"ref": count, "action": "click"})).await?;
        ensure!(acted["done"] == json!(true), "click {n} was not done: {acted}");
        site.expect_recorded(&format!("tag=once&n={n}")).await?;
        assert_eq!((tabs, json), (1, 1), "click {n}: tab resolutions and JSON reads");
    }

    // A button the page draws 300 ms later, named by role and name: described
    // (waited for, and how it was found said), then clicked by the same
    // target, each one call on a tab resolved once.
    let later = "setTimeout(() => { const b = document.createElement('button'); \
                 b.textContent = 'Later'; b.onclick = (e) => e.isTrusted && fetch('/record?tag=later'); \
                 document.querySelector('main').append(b); }, 300); 1";
    b.evaluate(tab_id(&tab)?, later, T).await?;
    let named = json!({"role": "button", "name": "Later"});
    let (described, tabs, json) =
        counted(&b, &tab, "describe", json!({"target": named, "timeout_ms": 5000})).await?;
    ensure!(described["name"] == "Later" && described["role"] == "button", "{described}");
    ensure!(described["found"]["by"] == "role", "how it was found: {described}");
    assert_eq!((tabs, json), (1, 1), "describe by target: tab resolutions and JSON reads");
    let (acted, tabs, json) =
        counted(&b, &tab, "act", json!({"target": named, "action": "click"})).await?;
    ensure!(acted["done"] == json!(true), "the click by target was not done: {acted}");
    ensure!(acted["found"]["ref"] == described["ref"], "the same element: {acted} {described}");
    site.expect_recorded("tag=later").await?;
    assert_eq!((tabs, json), (1, 1), "a click by target: tab resolutions and JSON reads");

    // By a CSS selector that never matches: ELEMENT_NOT_FOUND naming it, after the wait asked.
    let missing = json!({"target": {"selector": "#nowhere"}, "timeout_ms": 300});
    let e = b.page_op(tab_id(&tab)?, "describe", missing, T).await.expect_err("no such element");
    assert_eq!(e.code.as_str(), "ELEMENT_NOT_FOUND", "{e}");
    ensure!(e.message.contains("#nowhere") && e.message.contains("waited"), "{e}");
    // Neither a ref nor a target: refused before the page is touched.
    let e = b.page_op(tab_id(&tab)?, "describe", json!({}), T).await.expect_err("nothing named");
    assert_eq!(e.code.as_str(), "INVALID_ARGUMENT", "{e}");
    // The selector alone is the target's now: refused as an unknown field.
    let old = json!({"selector": "#count"});
    let e = b.page_op(tab_id(&tab)?, "describe", old, T).await.expect_err("not a field");
    assert_eq!(e.code.as_str(), "INVALID_ARGUMENT", "{e}");
    Ok(())
}
