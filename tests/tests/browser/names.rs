//! Name quality: the names the page library gives interactive elements, against
//! Chromium's own accessibility tree (`Accessibility.getPartialAXTree` of each
//! element a snapshot gave a ref), on the fixture pages and the widget pages
//! (real UI libraries from npm). This drives the embeddable host library
//! directly: the measurement needs the browser's CDP next to the snapshot.
//!
//! Compared: elements Chromium gives an interactive role (a generic element
//! that only listens for clicks has no accessible name in Chromium, so it is
//! named by ochre alone and left out). Run with `--nocapture` for the table.

use anyhow::{Context, Result};
use ochre_host::HostBrowser;
use ochre_host::browser::page_ops::{Describe, NetworkIdle, RefId, Snapshot};
use ochre_host::{BrowserManager, BrowserOptions};
use ochre_tests::*;
use serde_json::{Value, json};

/// Chromium roles an agent acts on.
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
    "gridcell",
    "cell",
    "row",
    "columnheader",
    "rowheader",
    "ListBoxOption",
    "MenuListPopup",
    "PopUpButton",
    "ComboBoxMenuButton",
    "ComboBoxSelect",
    "TextField",
    "DisclosureTriangle",
];
/// At most this many refs of one page are compared (evenly spread).
const PER_PAGE: usize = 250;

/// (role, name, ref number) of each snapshot line that has a ref; a table row's
/// line (`row "Pears" | link "0 (restock)" ax_7`) counts each cell.
fn refs_of(snapshot: &str) -> Vec<(String, String, u64)> {
    snapshot
        .lines()
        .flat_map(|l| {
            let l = l.trim_start();
            match l.strip_prefix("row ").or_else(|| l.strip_prefix("columns ")) {
                Some(cells) => cells.split(" | ").collect::<Vec<_>>(),
                None => vec![l],
            }
        })
        .filter_map(|l| {
            let l = l.trim_start();
            let n = l
                .split_whitespace()
                .rev()
                .find_map(|w| w.strip_prefix("ax_")?.parse::<u64>().ok())?;
            let (role, rest) = l.split_once(' ')?;
            let name = if rest.starts_with('"') {
                serde_json::Deserializer::from_str(rest).into_iter::<String>().next()?.ok()?
            } else {
                String::new()
            };
            Some((role.to_owned(), name, n))
        })
        .collect()
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether ochre's name says what Chromium's does (ours may be cut at 100 chars).
fn agrees(ours: &str, chrome: &str) -> bool {
    let (o, c) = (norm(ours), norm(chrome));
    match o.strip_suffix('\u{2026}') {
        Some(head) => c.starts_with(head),
        None => o == c,
    }
}

struct Tally {
    compared: usize,
    agreed: usize,
    misses: Vec<String>,
    /// Refs whose name `describe` (what an action's answer says) was read.
    described: usize,
    /// Where `describe` names an element otherwise than the snapshot did.
    described_otherwise: Vec<String>,
}

async fn measure(b: &BrowserManager, url: &str, t: &mut Tally) -> Result<(usize, usize)> {
    b.navigate(None, url, 20_000).await?;
    let _ = b.run(None, &NetworkIdle { quiet_ms: Some(200) }, 3_000).await;
    let snap = b.run(None, &Snapshot::default(), 30_000).await?;
    let refs = refs_of(&snap.text);
    let step = refs.len().div_ceil(PER_PAGE).max(1);
    let (mut compared, mut agreed) = (0, 0);
    for (role, name, n) in refs.into_iter().step_by(step) {
        // One element, one name: what an action's answer calls it (its
        // `describe`) is what the snapshot called it.
        let described = b
            .run(None, &Describe { ref_id: Some(RefId(n)), ..Default::default() }, 5_000)
            .await
            .with_context(|| format!("describing ax_{n} ({role} {name:?})"))?;
        t.described += 1;
        if described.role != role || !agrees(&described.name, &name) {
            t.described_otherwise.push(format!(
                "{url}: the snapshot's {role} {name:?} ax_{n} is described as {} {:?}",
                described.role, described.name
            ));
        }
        let obj = b
            .cdp_send(
                None,
                "Runtime.evaluate",
                json!({"expression": format!("window[{}].refs.get({n})", json!(ochre_host::browser::page_library_key())), "returnByValue": false}),
            )
            .await?;
        let Some(id) = obj["result"]["objectId"].as_str() else {
            continue; // in a cross-site frame: not in this session
        };
        let ax = b
            .cdp_send(
                None,
                "Accessibility.getPartialAXTree",
                json!({"objectId": id, "fetchRelatives": false}),
            )
            .await?;
        let node: &Value = &ax["nodes"][0];
        let chrome_role = node["role"]["value"].as_str().unwrap_or_default();
        if node["ignored"] == json!(true) || !INTERACTIVE.contains(&chrome_role) {
            continue;
        }
        let chrome_name = node["name"]["value"].as_str().unwrap_or_default();
        compared += 1;
        if agrees(&name, chrome_name) {
            agreed += 1;
        } else {
            t.misses.push(format!(
                "{url}: ours {role} {name:?}, Chromium {chrome_role} {chrome_name:?}"
            ));
        }
    }
    t.compared += compared;
    t.agreed += agreed;
    Ok((compared, agreed))
}

#[tokio::test]
async fn names_agree_with_chromiums_accessibility_tree() -> Result<()> {
    let modules = widget_modules()?;
    let site = SiteServer::start_with(sites_dir(), vec![("/vendor/".into(), modules)]).await?;
    let data = TempDir::new("names");
    let b = BrowserManager::new(BrowserOptions {
        downloads_dir: Some(data.path().join("downloads")),
        evidence_dir: Some(data.path().join("evidence")),
        ..Default::default()
    });
    let mut pages: Vec<String> = Vec::new();
    for dir in ["", "widgets/"] {
        pages.extend(html_pages(dir)?.into_iter().map(|n| site.url(&format!("{dir}{n}"))));
    }
    let docs = match rust_docs_dir() {
        Some(dir) => Some(SiteServer::start_at(dir).await?),
        None => None,
    };
    if let Some(docs) = &docs {
        pages.push(docs.url("std/vec/struct.Vec.html"));
    }
    // A React page of MUI components (from npm, bundled at test time).
    let mui = SiteServer::start_at(mui_site()?).await?;
    pages.push(mui.url("index.html"));
    let mut t = Tally {
        compared: 0,
        agreed: 0,
        misses: Vec::new(),
        described: 0,
        described_otherwise: Vec::new(),
    };
    println!("| page | compared | agreed |\n|---|---:|---:|");
    for url in &pages {
        let (c, a) = measure(&b, url, &mut t).await.with_context(|| format!("measuring {url}"))?;
        println!("| {} | {c} | {a} |", url.rsplit('/').next().unwrap_or(url));
    }
    let share = t.agreed as f64 / t.compared.max(1) as f64;
    println!("| all | {} | {} ({:.1}%) |", t.compared, t.agreed, share * 100.0);
    for m in &t.misses {
        println!("differs: {m}");
    }
    assert!(t.compared >= 200, "too few names compared: {}", t.compared);
    assert!(
        t.described_otherwise.is_empty(),
        "{} of {} elements are named otherwise by describe (an action's answer) than by the snapshot:\n{}",
        t.described_otherwise.len(),
        t.described,
        t.described_otherwise.join("\n")
    );
    assert!(
        share >= 0.98,
        "{:.1}% of names agree with Chromium's; differences:\n{}",
        share * 100.0,
        t.misses.join("\n")
    );
    Ok(())
}
