//! `oc_handoff`: the agent hands a tab to a person (a CAPTCHA, a single
//! sign-on page, a push to a phone, a payment). The tab is held: the agent's
//! calls on it are refused with `TAB_HELD` until the person presses "Done" on
//! the live view (ochre's page that shows the tab and sends it their mouse and
//! keys) or the time runs out. The link goes to the client's user by MCP
//! URL-mode elicitation when the client can (the call then waits for the
//! person), else in the answer (the agent passes it on and waits with
//! `oc_handoff {handoffId}`). The end says what changed: URL, title, new text.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::browser::page_ops::Snapshot;
use crate::browser::{BrowserManager, HostBrowser, TabId};
use crate::error::ToolError;
use crate::people::{Asked, Ended, Handoff, PageState, People};
use crate::tool::{Annotations, CallOptions, ToolOutput, json_output};

/// How long a person has by default, and at most.
const DEFAULT_MS: u64 = 300_000;
const MAX_MS: u64 = 3_600_000;
/// The most new lines of text an answer lists.
const MAX_LINES: usize = 40;

/// `oc_handoff`'s arguments: a reason starts a hand-off, a `handoffId`
/// waits for one under way.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HandoffArgs {
    #[schemars(length(min = 1, max = 300))]
    reason: Option<String>,
    #[serde(rename = "handoffId")]
    #[schemars(regex(pattern = r"^h\d+$"))]
    handoff_id: Option<String>,
    #[serde(rename = "tabId")]
    tab_id: Option<String>,
    #[schemars(range(min = 1000, max = MAX_MS))]
    timeout_ms: Option<u64>,
}

pub(super) fn add(made: &mut super::Made) {
    let offer = super::Offer {
        tier: 2,
        scope: crate::intent::Scope::Browser,
        annotations: Annotations { open_world: true, ..Annotations::default() },
        control: false,
        always: false,
    };
    made.add(
        "oc_handoff",
        "Hand a tab to a person (CAPTCHA, sign-on, payment): they see it live and drive it \
         through a link, and press Done; the tab is held meanwhile. Answers what changed. \
         Without URL elicitation the link is in the answer: call again with handoffId to wait.",
        offer,
        |host, args: HandoffArgs, options| async move {
            run(&host.people, &host.browser, &options, &args).await
        },
    );
}

/// Run `oc_handoff`.
async fn run(
    people: &Arc<People>,
    browser: &BrowserManager,
    options: &CallOptions,
    args: &HandoffArgs,
) -> Result<ToolOutput, ToolError> {
    let timeout = args.timeout_ms.map(|ms| Duration::from_millis(ms.min(MAX_MS)));
    if let Some(id) = args.handoff_id.as_deref() {
        return wait_for(people, browser, options, id, timeout).await;
    }
    let Some(reason) = args.reason.as_deref() else {
        return Err(ToolError::invalid_argument(
            "reason",
            "say why a person is needed (or give handoffId to wait for one under way)",
        ));
    };
    start(people, browser, options, args.tab_id.as_deref(), reason, timeout).await
}

/// Wait (at most `timeout`, and the hand-off's own time) for hand-off `id`
/// of this session to end: its answer.
async fn wait_for(
    people: &People,
    browser: &BrowserManager,
    options: &CallOptions,
    id: &str,
    timeout: Option<Duration>,
) -> Result<ToolOutput, ToolError> {
    let h = people.handoff_by_id(id).ok_or_else(|| {
        ToolError::handoff_not_found(format!(
            "no hand-off {id:?} under way (it ended and was told, or never was)"
        ))
        .with("handoffId", id)
    })?;
    if h.owner != options.tab_owner {
        return Err(ToolError::handoff_not_found(format!("no hand-off {id:?} in this session")));
    }
    let max = timeout
        .unwrap_or(Duration::MAX)
        .min(h.deadline.saturating_duration_since(std::time::Instant::now()));
    ended(people, browser, &h, h.wait(max).await).await
}

/// Hand tab `tab` (`None`: the current one) to a person for `reason`: the
/// link (in the answer, or opened by the client for its user) and, when the
/// client opened it, the answer once they are done.
async fn start(
    people: &Arc<People>,
    browser: &BrowserManager,
    options: &CallOptions,
    tab: Option<&str>,
    reason: &str,
    timeout: Option<Duration>,
) -> Result<ToolOutput, ToolError> {
    let Some(info) = browser.peek_tab(TabId::named(tab)?).await else {
        return Err(ToolError::tab_not_found(match tab {
            Some(t) => format!("no tab {t:?} to hand over: call tabs_context for the open tabs"),
            None => "no tab to hand over: open the page first (navigate)".to_owned(),
        }));
    };
    let n = TabId::of(&info.id)?;
    let tab = n.to_string();
    let before = page_state(browser, n).await?;
    let base = people.base().await?;
    let max = timeout.unwrap_or(Duration::from_millis(DEFAULT_MS));
    browser.hold_tab(n, reason)?;
    let (path, h) = match people.start_handoff(n, reason, max, options.tab_owner.clone(), before) {
        Ok(started) => started,
        Err(e) => {
            browser.release_tab(n);
            return Err(e);
        }
    };
    // However it ends (Done, its time, a declined link), the tab is let go.
    {
        let (h, browser) = (h.clone(), browser.clone());
        tokio::spawn(async move {
            if h.wait(max).await.is_none() {
                h.end(Ended::Expired);
            }
            browser.release_tab(h.tab);
        });
    }
    let link = format!("{base}{path}");
    let message = format!(
        "ochre asks for your help on tab {tab}: {reason}. Press Done on the page when finished."
    );
    let Some(asker) = &options.url_asker else {
        return Ok(link_answer(&h, &link, max));
    };
    match asker.open(&message, &link).await {
        Asked::Accepted => {
            let how = h.wait(max).await;
            ended(people, browser, &h, how).await
        }
        Asked::Declined => {
            h.end(Ended::Declined);
            ended(people, browser, &h, Some(Ended::Declined)).await
        }
        Asked::Failed(why) => {
            h.end(Ended::Declined);
            people.forget_handoff(&h.id);
            browser.release_tab(h.tab);
            Err(ToolError::internal(format!(
                "the client could not open the live view for its user: {why}"
            )))
        }
    }
}

/// The answer of a hand-off whose link goes to the agent (the client cannot
/// open it for its user): give it to the person, then wait.
fn link_answer(h: &Handoff, link: &str, max: Duration) -> ToolOutput {
    let tab = h.tab;
    let summary = format!("{} handed {tab} to a person: the link is in the answer", h.id);
    json_output(
        json!({
            "status": "waiting",
            "handoffId": h.id,
            "tabId": tab.to_string(),
            "url": link,
            "expires_in_s": max.as_secs(),
            "next": format!(
                "Give the person this link (it shows and drives tab {tab} until they press Done; it lasts {} s). \
                 Then call oc_handoff {{\"handoffId\": \"{}\"}} to wait for them.",
                max.as_secs(),
                h.id
            ),
        }),
        summary,
    )
}

/// The page as the person left it: what their last input sent (a form's
/// request, the answer it shows) ended first, bounded at 3 s (a page that
/// never goes quiet is read as it is then).
async fn page_left(browser: &BrowserManager, tab: TabId) -> Result<PageState, ToolError> {
    let quiet = crate::browser::page_ops::NetworkIdle { quiet_ms: Some(100) };
    let _ = browser.run(Some(tab), &quiet, 3_000).await;
    page_state(browser, tab).await
}

/// The page's URL, title and text.
async fn page_state(browser: &BrowserManager, tab: TabId) -> Result<PageState, ToolError> {
    let ask =
        Snapshot { mode: Some("text".into()), max_chars: Some(50_000), ..Snapshot::default() };
    let s = browser.run(Some(tab), &ask, 10_000).await?;
    Ok(PageState { url: s.url, title: s.title, text: s.text })
}

/// The answer once hand-off `h` ended (`how`; `None`: still under way).
async fn ended(
    people: &People,
    browser: &BrowserManager,
    h: &Handoff,
    how: Option<Ended>,
) -> Result<ToolOutput, ToolError> {
    let Some(how) = how else {
        return Ok(json_output(
            json!({
                "status": "waiting",
                "handoffId": h.id,
                "tabId": h.tab.to_string(),
                "expires_in_s": h.remaining_s(),
                "next": format!("The person is not done yet: call oc_handoff {{\"handoffId\": \"{}\"}} again to wait.", h.id),
            }),
            format!("{}: the person is not done yet", h.id),
        ));
    };
    browser.release_tab(h.tab);
    people.forget_handoff(&h.id);
    let after = match page_left(browser, h.tab).await {
        Ok(s) => s,
        Err(e) => {
            return Ok(json_output(
                json!({
                    "status": how.as_str(),
                    "done": how == Ended::Done,
                    "handoffId": h.id,
                    "tabId": h.tab.to_string(),
                    "note": format!("the page cannot be read now: {}", e.message),
                }),
                format!("{} {}: the page cannot be read now", h.id, how.as_str()),
            ));
        }
    };
    let seen: std::collections::HashSet<&str> = h.before.text.lines().map(str::trim).collect();
    let mut new_text: Vec<&str> = Vec::new();
    for line in after.text.lines().map(str::trim) {
        if !line.is_empty() && !seen.contains(line) && !new_text.contains(&line) {
            new_text.push(line);
        }
    }
    let more = new_text.len().saturating_sub(MAX_LINES);
    new_text.truncate(MAX_LINES);
    let mut out = json!({
        "status": how.as_str(),
        "done": how == Ended::Done,
        "handoffId": h.id,
        "tabId": h.tab.to_string(),
        "url": after.url,
        "title": after.title,
        "url_changed": after.url != h.before.url,
        "title_changed": after.title != h.before.title,
        "new_text": new_text,
    });
    if more > 0 {
        out["new_text_more"] = json!(more);
    }
    if let Some(id) = ochre_protocol::lock(&h.demonstration).clone() {
        // What the person did, recorded as steps: replay or export it.
        out["recordingId"] = json!(id);
    }
    if how != Ended::Done {
        out["note"] = json!(match how {
            Ended::Expired => "the person's time ran out before they pressed Done",
            _ => "the client's user declined to open the live view",
        });
    }
    let summary = format!(
        "{} {} on {}{}{}",
        h.id,
        how.as_str(),
        h.tab,
        if out["url_changed"] == json!(true) { "; the URL changed" } else { "" },
        match new_text_count(&out) {
            0 => String::new(),
            n => format!("; {n} new lines of text"),
        }
    );
    Ok(json_output(out, summary))
}

/// How many new lines an answer lists.
fn new_text_count(out: &Value) -> usize {
    out["new_text"].as_array().map_or(0, Vec::len)
}
