//! Routes (`route`): a session's requests answered by ochre before they leave
//! the browser: a status, headers and a body (given, or a file's), or aborted.
//! The server they were meant for sees nothing.
//!
//! Routes are kept per owner and hold on every tab of its session: the open
//! ones and each tab it opens later (its popups included: held by the
//! browser until ochre has set them up, see `frames::Held`), through CDP's
//! `Fetch` on each tab's page: its documents, subresources and same-site
//! frames, and its dedicated workers' fetches. A route's URL pattern is
//! ochre's one rule for URL patterns (`ochre_protocol::url`); the first route
//! that matches a request (and its method, when the route names one) answers
//! it; the rest go on untouched. While a session has routes, each of its
//! requests passes by ochre (a round trip within the machine); without, none
//! does.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use futures::StreamExt;
use serde_json::json;

use ochre_protocol::ToolError;
use ochre_protocol::page_ops::{Route, RouteAction, RouteInfo, Routed};
use ochre_protocol::url::UrlPattern;

use super::{BrowserManager, Owner, TabId, owner, raw_command};

/// The largest body a route answers with.
const MAX_BODY: usize = 10 * 1024 * 1024;
/// The most routes a session keeps.
const MAX_ROUTES: usize = 100;

/// What a route does.
#[derive(Debug)]
enum Answer {
    /// Fail the request (the page sees a network error).
    Abort,
    /// Answer it.
    Fulfil { status: u16, headers: Vec<(String, String)>, body: Vec<u8> },
}

/// One route of a session.
#[derive(Debug)]
pub(crate) struct OwnRoute {
    url: String,
    pattern: UrlPattern,
    method: Option<String>,
    answer: Answer,
    hits: AtomicU64,
}

impl OwnRoute {
    /// Whether it takes a request: its method, and its pattern on the URL as
    /// sent or with its host in its one spelling (a route on
    /// `*://ads.example.com/*` takes `ads.example.com.` too).
    fn matches(&self, url: &str, method: &str) -> bool {
        self.method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(method))
            && (self.pattern.matches(url)
                || ochre_protocol::site::canonical_url(url)
                    .is_some_and(|u| self.pattern.matches(&u)))
    }

    fn info(&self) -> RouteInfo {
        let answer = match &self.answer {
            Answer::Abort => "abort".to_owned(),
            Answer::Fulfil { status, body, .. } => format!("status {status}, {} bytes", body.len()),
        };
        RouteInfo {
            url: self.url.clone(),
            method: self.method.clone(),
            answer,
            hits: self.hits.load(Ordering::Relaxed),
        }
    }
}

/// The routes of one owner: a list replaced whole on each change.
pub(crate) type OwnerRoutes = Arc<Vec<Arc<OwnRoute>>>;

impl BrowserManager {
    /// `route`: add, remove, clear or list the caller's session's routes.
    pub(super) async fn route(&self, a: &Route) -> Result<Routed, ToolError> {
        let who = owner();
        let action =
            a.action.unwrap_or(if a.url.is_some() { RouteAction::Add } else { RouteAction::List });
        let bad = |field: &str, why: String| Err(ToolError::invalid_argument(field, why));
        let current = self.routes_of(&who);
        let next: Vec<Arc<OwnRoute>> = match action {
            RouteAction::List => current.iter().cloned().collect(),
            RouteAction::Clear => Vec::new(),
            RouteAction::Remove => {
                let Some(url) = a.url.as_deref() else {
                    return bad("url", "remove takes the `url` of the route".into());
                };
                let kept: Vec<_> = current.iter().filter(|r| r.url != url).cloned().collect();
                if kept.len() == current.len() {
                    return Err(ToolError::invalid_argument(
                        "url",
                        format!("no route for {url:?}; list them with route {{action: \"list\"}}"),
                    ));
                }
                kept
            }
            RouteAction::Add => {
                let added = Arc::new(self.new_route(a)?);
                let mut all: Vec<_> =
                    current.iter().filter(|r| r.url != added.url).cloned().collect();
                if all.len() >= MAX_ROUTES {
                    return bad("url", format!("a session keeps at most {MAX_ROUTES} routes"));
                }
                all.push(added);
                all
            }
        };
        if action != RouteAction::List {
            self.inner.owners.write(&who, |s| s.routes = Some(Arc::new(next.clone())));
            for (n, page) in self.inner.tabs.of_owner(&who) {
                self.route_tab(n, &page, &who).await?;
            }
        }
        Ok(Routed { routes: next.iter().map(|r| r.info()).collect() })
    }

    /// A route from its arguments, checked whole (a file read now).
    fn new_route(&self, a: &Route) -> Result<OwnRoute, ToolError> {
        let bad = |field: &str, why: String| ToolError::invalid_argument(field, why);
        let url = a
            .url
            .clone()
            .ok_or_else(|| bad("url", "a route needs the `url` pattern it answers".into()))?;
        let pattern = UrlPattern::parse(&url).map_err(|why| bad("url", why))?;
        if let Some(m) = &a.method
            && (m.is_empty() || !m.chars().all(|c| c.is_ascii_alphabetic()))
        {
            return Err(bad("method", format!("{m:?} is not an HTTP method")));
        }
        let answers =
            a.status.is_some() || a.body.is_some() || a.file.is_some() || a.headers.is_some();
        let answer = if a.abort == Some(true) {
            if answers {
                return Err(bad(
                    "abort",
                    "an aborted route answers nothing: leave out status, headers, body and file"
                        .into(),
                ));
            }
            Answer::Abort
        } else {
            let status = a.status.unwrap_or(200);
            if !(100..=599).contains(&status) {
                return Err(bad("status", format!("{status} is not an HTTP status (100-599)")));
            }
            let body = match (&a.body, &a.file) {
                (Some(_), Some(_)) => {
                    return Err(bad(
                        "file",
                        "a route answers with `body` or `file`, not both".into(),
                    ));
                }
                (Some(b), None) => b.clone().into_bytes(),
                (None, Some(f)) => {
                    let path = self.allowed_files(std::slice::from_ref(f))?.remove(0);
                    std::fs::read(&path).map_err(|e| {
                        ToolError::file_not_found(format!("cannot read {f:?}: {e}"))
                            .with("path", f.as_str())
                    })?
                }
                (None, None) => Vec::new(),
            };
            if body.len() > MAX_BODY {
                return Err(bad("body", format!("a route's body is at most {MAX_BODY} bytes")));
            }
            let mut headers: Vec<(String, String)> =
                a.headers.iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect();
            if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) {
                let guessed = a
                    .file
                    .as_deref()
                    .and_then(ochre_protocol::mime::of)
                    .unwrap_or("text/plain; charset=utf-8");
                headers.push(("Content-Type".into(), guessed.into()));
            }
            Answer::Fulfil { status, headers, body }
        };
        Ok(OwnRoute {
            url,
            pattern,
            method: a.method.as_ref().map(|m| m.to_ascii_uppercase()),
            answer,
            hits: AtomicU64::new(0),
        })
    }

    /// The routes of `who` now.
    pub(super) fn routes_of(&self, who: &Owner) -> OwnerRoutes {
        self.inner.owners.read(who, |s| s.routes.clone()).flatten().unwrap_or_default()
    }

    /// Make tab `n` (`who`'s) answer by `who`'s routes: its requests pass by
    /// ochre while there are any, none when there are none.
    pub(super) async fn route_tab(
        &self,
        n: TabId,
        page: &Page,
        who: &Owner,
    ) -> Result<(), ToolError> {
        let routed = !self.routes_of(who).is_empty();
        let listening =
            self.inner.tabs.with(n, |t| std::mem::replace(&mut t.routed, routed)).unwrap_or(false);
        if !routed {
            if listening {
                raw_command(page, "Fetch.disable", json!({})).await?;
            }
            return Ok(());
        }
        if !listening {
            let events = page
                .event_listener::<EventRequestPaused>()
                .await
                .map_err(|e| super::cdp_error("Fetch.requestPaused", e))?;
            tokio::spawn(answer_requests(self.clone(), page.clone(), who.clone(), events));
        }
        raw_command(
            page,
            "Fetch.enable",
            json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}),
        )
        .await?;
        Ok(())
    }
}

/// Answer each paused request of a tab by its owner's routes, until the tab goes.
async fn answer_requests(
    me: BrowserManager,
    page: Page,
    who: Owner,
    mut events: chromiumoxide::listeners::EventStream<EventRequestPaused>,
) {
    while let Some(ev) = events.next().await {
        let id = ev.request_id.inner().clone();
        let routes = me.routes_of(&who);
        let hit = routes.iter().find(|r| r.matches(&ev.request.url, &ev.request.method));
        let sent = match hit.map(|r| (r, &r.answer)) {
            None => raw_command(&page, "Fetch.continueRequest", json!({"requestId": id})).await,
            Some((r, Answer::Abort)) => {
                r.hits.fetch_add(1, Ordering::Relaxed);
                let failed = json!({"requestId": id, "errorReason": "BlockedByClient"});
                raw_command(&page, "Fetch.failRequest", failed).await
            }
            Some((r, Answer::Fulfil { status, headers, body })) => {
                r.hits.fetch_add(1, Ordering::Relaxed);
                let headers: Vec<_> =
                    headers.iter().map(|(k, v)| json!({"name": k, "value": v})).collect();
                let body = base64::engine::general_purpose::STANDARD.encode(body);
                let answer = json!({"requestId": id, "responseCode": status, "responseHeaders": headers, "body": body});
                raw_command(&page, "Fetch.fulfillRequest", answer).await
            }
        };
        if let Err(e) = sent {
            tracing::debug!(error = %e.message, "a paused request was not answered (its page went away?)");
        }
    }
}
