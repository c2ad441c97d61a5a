//! Stages `events` and `relaunch`: what pages did on their own while a call ran — a dialog that
//! opened, a tab a page opened or closed, a download — is told in the call's
//! answer (one line each, and `page_events` in the structured result), and every
//! page event goes to the journal and the trace.
//!
//! A call whose action opened a dialog gets a successful answer naming the dialog
//! (the action happened; the page now waits for an answer), not the `DIALOG_OPEN`
//! error the blocked browser calls inside it saw.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::browser::HostBrowser;
use crate::browser::{BrowserManager, PageEvent, TabId};
use crate::error::Code;
use crate::error::ToolError;
use futures::future::BoxFuture;
use ochre_protocol::browser::{Hints, a_dialog};

use super::{Call, Outcome, Stage, done, proceed};
use crate::tool::{Content, ToolOutput};

/// Longest wait for a page a tab opened to get its tab id.
const ADOPT_WAIT: Duration = Duration::from_secs(3);

/// Longest wait for downloads a call started.
const DOWNLOAD_WAIT: Duration = Duration::from_secs(15);

/// One line for the agent about an event, if it needs one (its hints in
/// `hints`' words).
async fn line(
    browser: &BrowserManager,
    e: &PageEvent,
    all: &[PageEvent],
    hints: Hints,
) -> Option<String> {
    let b = &e.body;
    let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    match e.kind {
        "dialog_opened" if browser.dialog_still_open(e.seq) => {
            Some(format!("dialog: {}", hints.dialog_open(&s("type"), &s("tabId"), &s("message"))))
        }
        "dialog_closed" if s("by") == "policy" => Some(format!(
            "dialog: {} on {} ({:?}) was {} by the server's --dialogs policy",
            a_dialog(&s("type")),
            s("tabId"),
            s("message"),
            if b["accepted"] == json!(true) { "accepted" } else { "dismissed" }
        )),
        "tab_opened" => {
            let id = s("tabId");
            let info = match TabId::parse(&id) {
                Some(n) => browser.peek_tab(Some(n)).await,
                None => None,
            };
            let (url, title) = match info {
                Some(t) => (t.url, t.title),
                None => (s("url"), String::new()),
            };
            Some(format!(
                "opened tab {id} {title:?} ({url}) from {}; {}",
                s("openerTabId"),
                hints.act_on_tab(&id)
            ))
        }
        "tab_closed" => Some(format!("tab {} was closed by its page", s("tabId"))),
        "download" => Some(match s("state").as_str() {
            "completed" => format!(
                "downloaded {} ({} bytes) to {}",
                s("file"),
                b["bytes"].as_u64().unwrap_or(0),
                s("path")
            ),
            _ => format!("the download of {} was canceled", s("file")),
        }),
        "download_started" => {
            let finished =
                all.iter().any(|x| x.kind == "download" && x.body["startedSeq"] == json!(e.seq));
            (!finished).then(|| {
                format!(
                    "the download of {} is still in progress (it will be saved in {})",
                    s("file"),
                    browser.downloads_dir_shown()
                )
            })
        }
        _ => None,
    }
}

/// A `DIALOG_OPEN` error (a call the open dialog blocked) saying how to
/// answer the dialog in `hints`' words; any other error as it is.
fn dialog_open_in(mut e: ToolError, hints: Hints) -> ToolError {
    let d = e.details.get("dialog").cloned().unwrap_or(Value::Null);
    let s = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    if e.code == Code::DialogOpen && d.is_object() {
        e.message = hints.dialog_open(&s("type"), &s("tabId"), &s("message"));
    }
    e
}

/// One line for every connection the network policy refused meanwhile.
fn refused_line(events: &[PageEvent]) -> Option<String> {
    let mut to: Vec<&str> = Vec::new();
    let mut n = 0;
    for e in events.iter().filter(|e| e.kind == "network_refused") {
        n += 1;
        let at = e.body["to"].as_str().unwrap_or("?");
        if !to.contains(&at) {
            to.push(at);
        }
    }
    (n > 0).then(|| {
        let shown = to.iter().take(8).copied().collect::<Vec<_>>().join(", ");
        let more = if to.len() > 8 { format!(" and {} more", to.len() - 8) } else { String::new() };
        format!("the network policy refused {n} connection(s) of the page: to {shown}{more}")
    })
}

/// Report the page events since `mark` in the call's outcome, its hints in
/// `hints`' words.
pub(crate) async fn report(
    browser: &BrowserManager,
    tool: &str,
    mark: u64,
    hints: Hints,
    outcome: Result<ToolOutput, ToolError>,
) -> Result<ToolOutput, ToolError> {
    browser.wait_adoptions(ADOPT_WAIT).await;
    let mut events = browser.events_since(mark);
    if events.iter().any(|e| e.kind == "download_started") {
        browser.wait_downloads(mark, DOWNLOAD_WAIT).await;
        events = browser.events_since(mark);
    }
    let outcome = outcome.map_err(|e| dialog_open_in(e, hints));
    if events.is_empty() {
        return outcome;
    }
    let mut lines = Vec::new();
    for e in &events {
        if let Some(l) = line(browser, e, &events, hints).await {
            lines.push(l);
        }
    }
    lines.extend(refused_line(&events));
    let bodies: Vec<Value> = events
        .iter()
        .map(|e| {
            let mut b = public_body(&e.body);
            b.insert("event".into(), json!(e.kind));
            Value::Object(b)
        })
        .collect();
    let opened =
        events.iter().find(|e| e.kind == "dialog_opened" && browser.dialog_still_open(e.seq));
    match outcome {
        Err(e) if e.code == Code::DialogOpen && opened.is_some() => {
            // The action ran and the page answered with a dialog.
            let dialog = opened.map(|d| d.body.clone()).unwrap_or(Value::Null);
            let head = format!(
                "{tool}: the page opened {}: {:?}",
                a_dialog(dialog["type"].as_str().unwrap_or("?")),
                dialog["message"].as_str().unwrap_or("")
            );
            let mut content = vec![Content::Text(head.clone())];
            content.extend(lines.into_iter().map(Content::Text));
            Ok(ToolOutput {
                content,
                structured: Some(json!({"dialog": dialog, "page_events": bodies})),
                summary: head,
            })
        }
        Err(mut e) => {
            e.details.insert("page_events".into(), Value::Array(bodies));
            if !lines.is_empty() {
                e.message = format!("{} ({})", e.message, lines.join("; "));
            }
            Err(e)
        }
        Ok(mut out) => {
            if !lines.is_empty() {
                out.content.push(Content::Text(lines.join("\n")));
            }
            if let Some(Value::Object(m)) = &mut out.structured {
                m.insert("page_events".into(), Value::Array(bodies));
            }
            Ok(out)
        }
    }
}

/// An event's body as the agent, the journal and the trace may see it: a prompt's
/// answer may be a secret, so only its length is kept.
pub(crate) fn public_body(body: &Value) -> Map<String, Value> {
    let mut m = body.as_object().cloned().unwrap_or_default();
    if let Some(Value::String(t)) = m.remove("promptText") {
        m.insert("promptTextChars".into(), json!(t.chars().count()));
    }
    m.remove("startedSeq");
    m
}

pub(crate) struct PageEvents {
    pub browser: BrowserManager,
}

impl Stage for PageEvents {
    fn name(&self) -> &'static str {
        "events"
    }

    fn before<'a>(&'a self, call: &'a mut Call<'_>) -> BoxFuture<'a, Result<(), ToolError>> {
        call.event_mark = self.browser.event_mark();
        proceed(Ok(()))
    }

    fn after<'a>(&'a self, call: &'a mut Call<'_>, outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        if call.is_control() {
            return done();
        }
        Box::pin(async move {
            let ran = std::mem::replace(outcome, Ok(ToolOutput::default()));
            let hints = call.options.hints;
            *outcome = report(&self.browser, call.name, call.event_mark, hints, ran).await;
        })
    }
}

/// The caller's browser is another one than at its last call (relaunched,
/// reconnected, or on another endpoint of the pool): its tabs are gone, and the
/// answer says so.
pub(crate) struct RelaunchNote {
    pub browser: BrowserManager,
}

impl Stage for RelaunchNote {
    fn name(&self) -> &'static str {
        "relaunch"
    }

    fn after<'a>(&'a self, _call: &'a mut Call<'_>, outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        if let Ok(out) = outcome
            && self.browser.take_relaunch_note()
        {
            out.content.push(Content::Text(
                "note: the browser had stopped and was replaced (relaunched, reconnected or \
                 moved to another endpoint); tabs opened before are gone"
                    .into(),
            ));
        }
        done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_answers_never_leave_the_host() {
        let b = public_body(&json!({"type": "prompt", "promptText": "hunter2", "startedSeq": 3}));
        assert_eq!(b.get("promptTextChars"), Some(&json!(7)));
        assert!(!Value::Object(b.clone()).to_string().contains("hunter2"));
        assert!(b.get("startedSeq").is_none());
    }
}
