//! Answers that wait in frames: on pages that move by script once a frame
//! (jQuery's slideDown and its accordion, GSAP, from the npm registry at test
//! time; a hand-written `requestAnimationFrame` height, one stepped in
//! frames whose first five frames show no change, and one run by a ticker
//! that asked frames before the action, whose first change is followed by
//! four frames without one; a web component's panel shown and hidden by
//! animations in its shadow root, which a document does not list, and a box
//! in a shadow root the parser attached, animated the same way) and on
//! searches that wait
//! for typing to pause (jQuery UI's autocomplete, a React combobox with a
//! debounce), an action's answer comes once the motion it started has
//! ended. Each action runs back to back with the read after it (no sleep),
//! at full speed and with the CPU slowed 4x:
//!
//! - the action is done, and its effect reached the page's server;
//! - the first read after it already holds what the motion brings (the
//!   panel's words, the suggestions);
//! - the page stands still at the answer: its layout (every box, its
//!   opacity, the scroll) right after it is the layout once the page has not
//!   moved for 40 frames;
//! - that read is the page once it stands still: a read taken then is the
//!   same, and it agrees with Chromium's accessibility tree (the fidelity
//!   suite's judge): 0 reads of a motion's middle.
//!
//! And a settle that begins only after the first frame of a slide (a loaded
//! machine's round trip) still waits it out.

use anyhow::{Context, Result};
use ochre_host::browser::page_ops::{Act, ActKind, Settle, Snapshot, Watch};
use ochre_host::{BrowserManager, BrowserOptions, HostBrowser};
use ochre_tests::*;
use serde_json::json;

use crate::fidelity::{cdp, measure};

/// One step: what to do, to which element (role and name in a fresh read),
/// and the words the first read after it must hold.
struct Step {
    act: ActKind,
    role: &'static str,
    name: &'static str,
    text: Option<&'static str>,
    expect: &'static [&'static str],
}

const fn click(role: &'static str, name: &'static str, expect: &'static [&'static str]) -> Step {
    Step { act: ActKind::Click, role, name, text: None, expect }
}

const fn typed(
    role: &'static str,
    name: &'static str,
    text: &'static str,
    expect: &'static [&'static str],
) -> Step {
    Step { act: ActKind::Type, role, name, text: Some(text), expect }
}

/// The pages: (site, page, steps, what the last step sends to the server).
fn cases() -> Vec<(&'static str, &'static str, Vec<Step>, &'static str)> {
    vec![
        (
            "lib",
            "jqui-accordion-animated.html",
            vec![
                click(
                    "tab",
                    "Can I pick a delivery day?",
                    &["Saturday delivery costs four euros more.", "Choose a weekday"],
                ),
                click("tab", "Do you deliver abroad?", &["in four to eight days"]),
                click("tab", "Can I pick a delivery day?", &["Choose a weekday"]),
                click("button", "Choose a weekday", &[]),
            ],
            "weekday=1",
        ),
        (
            "lib",
            "jquery-slidedown.html",
            vec![
                click(
                    "button",
                    "Show details",
                    &["Linen lampshade, 19.50 EUR", "Send the invoice"],
                ),
                click(
                    "link",
                    "Delivery notes",
                    &["Leave the parcel with the neighbour at number 12."],
                ),
                click("button", "Send the invoice", &[]),
            ],
            "invoice=1042",
        ),
        (
            "lib",
            "raf-height.html",
            vec![
                click("button", "Compare plans", &["2 TB", "Choose Family"]),
                click("button", "Choose Family", &[]),
            ],
            "plan=family",
        ),
        (
            "lib",
            "raf-frames.html",
            vec![
                click("button", "Show shipping rates", &["Express, next day", "Ship express"]),
                click("button", "Ship express", &[]),
            ],
            "ship=express",
        ),
        (
            "lib",
            "raf-ticker.html",
            vec![
                click("button", "Show order history", &["Order 1042: linen curtains, delivered"]),
                click("button", "Download invoice", &[]),
            ],
            "invoice=1041",
        ),
        (
            "lib",
            "shadow-anim.html",
            vec![
                click("button", "Show size note", &["Sizes run small: order one size up."]),
                click("button", "Hide size note", &[]),
                click("button", "Show delivery times", &["Next-day delivery before 4 pm."]),
                click("button", "Open filters", &["Apply filters"]),
                click("button", "Close filters", &[]),
                click("button", "Open filters", &["Apply filters"]),
                click("button", "Apply filters", &[]),
            ],
            "filters=all",
        ),
        (
            "lib",
            "gsap.html",
            vec![
                click("button", "Show recently viewed", &["Oak side table", "Wool throw"]),
                click("button", "Open cart", &["Ceramic vase, 34.00 EUR", "Go to checkout"]),
                click("button", "Go to checkout", &[]),
            ],
            "checkout=1",
        ),
        (
            "lib",
            "jqui-autocomplete-debounced.html",
            vec![typed("textbox", "City", "bre", &["Bremen"]), click("*", "Bremen", &[])],
            "city=Bremen",
        ),
        (
            "lib-react",
            "debounced.html",
            vec![
                typed("combobox", "Destination", "li", &["Lisbon", "Linz"]),
                click("option", "Linz", &[]),
            ],
            "city=Linz",
        ),
    ]
}

/// The page's layout: the scroll, and every element's box and opacity, a
/// line each (an element of a pixel or less across, as a screen reader's
/// live region, is left out: no person sees it).
macro_rules! layout_js {
    () => {
        r#"() => {
    let s = 'scroll ' + scrollY;
    for (const e of document.querySelectorAll('body *')) {
      const r = e.getBoundingClientRect();
      if (r.width <= 1 || r.height <= 1) continue;
      const c = typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\s+/)[0] : '';
      s += '\n' + e.localName + (e.id ? '#' + e.id : '') + c + ' ' + [r.x, r.y, r.width, r.height].map((v) => v.toFixed(1)).join(',') + ' ' + getComputedStyle(e).opacity;
    }
    return s;
  }"#
    };
}

/// The layout now.
const LAYOUT_JS: &str = concat!("(", layout_js!(), ")()");

/// Waits (bounded) until the page's layout has not changed for 40 frames
/// (longer than any debounce and reply here), then answers it; null when it
/// kept moving for 8 s.
const STILL_JS: &str = concat!(
    "(async () => {\n  const sig = ",
    layout_js!(),
    r#";
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  let last = sig(), same = 0;
  const t0 = performance.now();
  while (same < 40 && performance.now() - t0 < 8000) {
    await frame();
    const s = sig();
    if (s === last) same++;
    else { same = 0; last = s; }
  }
  return same >= 40 ? last : null;
})()"#
);

/// The lines of two layouts (`LAYOUT_JS`) that the other lacks, three of each.
fn moved(then: &serde_json::Value, still: &serde_json::Value) -> String {
    let lines = |v: &serde_json::Value| {
        v.as_str().unwrap_or("").lines().map(str::to_owned).collect::<Vec<_>>()
    };
    let (then, still) = (lines(then), lines(still));
    let only = |a: &[String], b: &[String], tag: &str| {
        a.iter()
            .filter(|l| !b.contains(l))
            .take(3)
            .map(|l| format!("  {tag}: {l}"))
            .collect::<Vec<_>>()
    };
    [only(&then, &still, "then"), only(&still, &then, "still")].concat().join("\n")
}

/// The ref of `role "name"`, or (role `*`) of the first element named so.
fn target_in(snapshot: &str, role: &str, name: &str) -> Option<String> {
    if role != "*" {
        return find_ref(snapshot, role, name);
    }
    let needle = format!("{} ax_", json!(name));
    let line = snapshot.lines().find(|l| l.contains(&needle))?;
    Some(ref_in(&line[line.find(&needle)?..]).to_owned())
}

async fn read(b: &BrowserManager) -> Result<String> {
    Ok(b.run(None, &Snapshot::default(), 30_000).await?.text)
}

/// One pass over the pages with the CPU slowed `slowdown` times; the
/// failures, each saying what was read.
async fn pass(b: &BrowserManager, slowdown: u32) -> Result<Vec<String>> {
    let lib = SiteServer::start_with_libraries().await?;
    let react = SiteServer::start_at(react_lib_site()?).await?;
    let mut failures = Vec::new();
    for (site, page, steps, record) in cases() {
        let server = if site == "lib" { &lib } else { &react };
        let url = if site == "lib" { lib.url(&format!("lib/{page}")) } else { react.url(page) };
        b.navigate(None, &url, 20_000).await?;
        cdp(b, "Emulation.setCPUThrottlingRate", json!({"rate": slowdown})).await?;
        for (i, step) in steps.iter().enumerate() {
            let label =
                format!("{page} at {slowdown}x, step {} ({} {:?})", i + 1, step.role, step.name);
            let before = read(b).await?;
            let Some(target) = target_in(&before, step.role, step.name) else {
                failures.push(format!("{label}: nothing to act on in:\n{before}"));
                break;
            };
            let act = Act {
                ref_id: Some(target.parse().expect("a ref")),
                action: Some(step.act),
                text: step.text.map(str::to_owned),
                ..Act::default()
            };
            let acted = b.run(None, &act, 70_000).await.with_context(|| label.clone())?;
            // Back to back: the layout and the read right after the answer.
            let layout = b.evaluate(None, LAYOUT_JS, 15_000).await?;
            let first = read(b).await?;
            if !acted.done {
                failures.push(format!("{label}: not done: {}", json!(acted.delta)));
                break;
            }
            let missing: Vec<&str> =
                step.expect.iter().copied().filter(|w| !first.contains(w)).collect();
            if !missing.is_empty() {
                failures.push(format!(
                    "{label}: the first read after the answer ({}) lacks {missing:?}:\n{first}",
                    json!(acted.delta)
                ));
            }
            let still = b.evaluate(None, STILL_JS, 15_000).await?;
            if still.is_null() {
                failures.push(format!("{label}: the page did not stand still within 8 s"));
                continue;
            }
            if still != layout {
                failures.push(format!(
                    "{label}: the answer ({}) came while the page was still moving: its layout then and once still differ (element x,y,w,h opacity):\n{}",
                    json!(acted.delta),
                    moved(&layout, &still)
                ));
            }
            let settled = read(b).await?;
            if settled != first {
                failures.push(format!(
                    "{label}: the first read was of a page still moving ({}):\n--- first\n{first}\n--- once still\n{settled}",
                    json!(acted.delta)
                ));
            }
            let s = measure(b, &label).await?;
            if s.with_ref < s.focusable || s.texts_exact < s.texts || s.refs_hidden > 0 {
                failures.push(format!(
                    "{label}: the page at rest differs from Chromium's tree:\n{}",
                    s.misses.join("\n")
                ));
            }
        }
        if server.wait_recorded(record).await.is_none() {
            failures.push(format!(
                "{page} at {slowdown}x: the server never got {record:?} (got {:?})",
                server.recorded()
            ));
        }
    }
    cdp(b, "Emulation.setCPUThrottlingRate", json!({"rate": 1})).await?;
    Ok(failures)
}

#[tokio::test]
async fn the_first_read_after_a_motion_or_a_debounce_is_the_page_at_rest() -> Result<()> {
    let data = TempDir::new("motion");
    let b = BrowserManager::new(BrowserOptions {
        downloads_dir: Some(data.path().join("downloads")),
        ..Default::default()
    });
    let mut failures = Vec::new();
    for slowdown in [1, 4] {
        failures.extend(pass(&b, slowdown).await?);
    }
    b.shutdown().await;
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n\n"));
    Ok(())
}

/// A frame loop that ran before the action (GSAP's ticker kept awake, as a
/// smooth scroller or a scroll-linked animation keeps it) draws the first
/// step of the slide a click starts in the first frame after the click,
/// before ochre's own callback of that frame. When the settle begins only
/// once that frame has been drawn (the round trip from the click outlasted a
/// frame: a loaded machine), that frame's change is still the action's, and
/// the answer waits the slide out. Made certain here: the click is sent as
/// raw input, and the settle asked for after the frame that follows it.
#[tokio::test]
async fn a_settle_begun_after_the_first_frame_of_a_slide_waits_it_out() -> Result<()> {
    let data = TempDir::new("motion-late");
    let b = BrowserManager::new(BrowserOptions {
        downloads_dir: Some(data.path().join("downloads")),
        ..Default::default()
    });
    let lib = SiteServer::start_with_libraries().await?;
    const DRAWER: &str = "(() => { const d = document.getElementById('drawer'); \
        return d.getBoundingClientRect().x.toFixed(1) + ' ' + getComputedStyle(d).opacity; })()";
    let mut failures = Vec::new();
    for round in 0..5 {
        b.navigate(None, &lib.url("lib/gsap.html"), 20_000).await?;
        b.evaluate(None, "gsap.ticker.add(() => {}), true", 5_000).await?;
        let snapshot = read(&b).await?;
        let target = find_ref(&snapshot, "button", "Open cart").context("the button")?;
        let centre = b
            .evaluate(
                None,
                "(() => { const r = document.getElementById('open').getBoundingClientRect(); \
                 return [r.x + r.width / 2, r.y + r.height / 2]; })()",
                5_000,
            )
            .await?;
        let watch = Watch { ref_id: Some(target.parse().map_err(anyhow::Error::msg)?) };
        let token = b.run(None, &watch, 10_000).await?.token;
        for kind in ["mousePressed", "mouseReleased"] {
            let (x, y) = (&centre[0], &centre[1]);
            let event = json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1});
            cdp(&b, "Input.dispatchMouseEvent", event).await?;
        }
        // The frame after the click drawn, and a task after it run.
        let frame = "new Promise((r) => requestAnimationFrame(() => setTimeout(() => r(true), 0)))";
        b.evaluate(None, frame, 5_000).await?;
        let settled = b.run(None, &Settle::after(&token), 10_000).await?;
        let at = b.evaluate(None, DRAWER, 5_000).await?;
        b.evaluate(None, STILL_JS, 15_000).await?;
        let still = b.evaluate(None, DRAWER, 5_000).await?;
        if at != still || !settled.changed {
            failures.push(format!(
                "round {round}: answered ({}) at {at}; at rest {still}",
                json!(settled)
            ));
        }
    }
    b.shutdown().await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// The ways a page starts work at its load (see `fixtures/sites/load-work.html`):
/// a fetch, an XHR, a fetch from a timer of 0 ms or after awaits, an answer
/// shown a task and a frame after it arrives, a request a short one starts,
/// a script the load handler adds, a fetch from `DOMContentLoaded` still in
/// flight at the load.
const LOAD_CASES: &[&str] = &["fetch", "xhr", "timer", "async", "task", "chain", "script", "ready"];

/// `navigate` answers at the load event; the first read after it (back to
/// back) already holds what the work the load started brings, at full speed
/// and with the CPU slowed 4x; the server got each request once.
#[tokio::test]
async fn the_first_read_after_navigate_holds_what_the_load_started() -> Result<()> {
    let data = TempDir::new("load-work");
    let b = BrowserManager::new(BrowserOptions {
        downloads_dir: Some(data.path().join("downloads")),
        ..Default::default()
    });
    let site = SiteServer::start().await?;
    let mut failures = Vec::new();
    for slowdown in [1, 4] {
        // Rounds: the first of a page in a tab, then again (cached scripts).
        for round in 0..2 {
            for case in LOAD_CASES {
                b.navigate(None, &site.url("index.html"), 20_000).await?;
                cdp(&b, "Emulation.setCPUThrottlingRate", json!({"rate": slowdown})).await?;
                let page = site.url(&format!("load-work.html?case={case}"));
                b.navigate(None, &page, 20_000).await?;
                let first = read(&b).await?;
                if !first.contains("got slow") {
                    failures.push(format!("{case} at {slowdown}x, round {round}:\n{first}"));
                }
                cdp(&b, "Emulation.setCPUThrottlingRate", json!({"rate": 1})).await?;
            }
        }
    }
    let requests = site.requests();
    let slow = requests.iter().filter(|r| r.contains("/slow")).count();
    // chain sends two requests; every other case one.
    assert_eq!(slow, 4 * (LOAD_CASES.len() + 1), "{requests:#?}");
    b.shutdown().await;
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n\n"));
    Ok(())
}
