//! Named logins in the browser: a session's storage state read from its
//! browser context and its tabs ([`BrowserManager::read_storage_state`]), and
//! a login's state written into the session's browser contexts
//! ([`BrowserManager::set_login`]): its own (made then if it has none) and
//! each isolated tab's made later (workflow workers). No request reaches a
//! login's origins while their `localStorage` is written: a helper tab asks
//! for each origin and answers itself (`Fetch`), writes, and is closed.

use std::sync::Arc;

use chromiumoxide::Browser;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use data_encoding::BASE64;
use futures::StreamExt;
use serde_json::{Value, json};

use ochre_protocol::browser::{OriginStorage, StorageState};
use ochre_protocol::{ToolError, lock};

use super::{BrowserManager, Owner, bounded, cdp_error, owner, raw_command};

/// The page script that reads and writes an origin's IndexedDB whole.
const IDB_JS: &str = include_str!("idb.js");

/// The most IndexedDB a login keeps per origin, as JSON.
const MAX_IDB_BYTES: usize = 20 * 1024 * 1024;

/// Send a browser-wide CDP command by name (bounded by 30 s).
pub(super) async fn browser_command(
    browser: &Browser,
    method: &str,
    params: Value,
) -> Result<Value, ToolError> {
    let cmd = super::RawCommand { method: method.to_owned().into(), params };
    bounded(30_000, method, async {
        browser.execute(cmd).await.map(|r| r.result).map_err(|e| cdp_error(method, e))
    })
    .await
}

/// `Storage.*` parameters naming `context` (none: the default context).
fn in_context(mut params: Value, context: Option<&BrowserContextId>) -> Value {
    if let Some(c) = context {
        params["browserContextId"] = json!(c.inner());
    }
    params
}

/// A cookie as `Storage.getCookies` tells it, as `Storage.setCookies` takes
/// it (a session cookie has no expiry).
fn cookie_param(c: &Value) -> Value {
    let mut p = serde_json::Map::new();
    for k in [
        "name",
        "value",
        "domain",
        "path",
        "secure",
        "httpOnly",
        "sameSite",
        "priority",
        "sourceScheme",
        "sourcePort",
        "partitionKey",
    ] {
        if let Some(v) = c.get(k).filter(|v| !v.is_null()) {
            p.insert(k.to_owned(), v.clone());
        }
    }
    if let Some(e) = c["expires"].as_f64().filter(|e| *e > 0.0) {
        p.insert("expires".to_owned(), json!(e));
    }
    Value::Object(p)
}

impl BrowserManager {
    /// The caller's storage state: its browser context's cookies (httpOnly
    /// ones included) and the `localStorage` and IndexedDB of the origins its
    /// tabs show. A record IndexedDB holds a Blob in is left out and counted.
    pub(super) async fn read_storage_state(&self) -> Result<StorageState, ToolError> {
        let who = owner();
        let home = self.home()?;
        let pages = self.inner.tabs.pages_in(home, Some(&who));
        if pages.is_empty() {
            return Err(ToolError::tab_not_found(
                "this session has no tab to save a login from: sign in on a page first",
            ));
        }
        let (browser, context) = {
            let guard = self.slot(home).session.lock().await;
            let s = guard.as_ref().ok_or_else(|| ToolError::browser_unavailable("no browser"))?;
            (s.browser.clone(), s.context_of(&who))
        };
        let got = browser_command(
            &browser,
            "Storage.getCookies",
            in_context(json!({}), context.as_ref()),
        )
        .await?;
        let cookies = got["cookies"].as_array().cloned().unwrap_or_default();
        let mut origins: Vec<OriginStorage> = Vec::new();
        let mut skipped = 0;
        for (_, page) in pages {
            let read = "[location.origin, Object.entries(localStorage)]";
            // A page whose storage cannot be read (an opaque origin) holds none.
            let Ok(v) = bounded(5_000, "reading localStorage", self.eval(&page, read, true)).await
            else {
                continue;
            };
            let Some(origin) = v[0].as_str().filter(|o| o.starts_with("http")) else { continue };
            if origins.iter().any(|o| o.origin == origin) {
                continue;
            }
            let entries: Vec<(String, String)> = v[1]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| Some((e[0].as_str()?.to_owned(), e[1].as_str()?.to_owned())))
                .collect();
            let dump = format!("({IDB_JS}).dump({MAX_IDB_BYTES})");
            let idb = bounded(15_000, "reading IndexedDB", self.eval(&page, &dump, true))
                .await
                .map_err(|e| {
                    ToolError::new(
                        e.code.clone(),
                        format!("cannot read {origin}'s IndexedDB: {}", e.message),
                    )
                })?;
            skipped += idb["skipped"].as_u64().unwrap_or(0);
            let indexed_db = idb["dbs"].as_array().cloned().unwrap_or_default();
            if !entries.is_empty() || !indexed_db.is_empty() {
                origins.push(OriginStorage {
                    origin: origin.to_owned(),
                    local_storage: entries,
                    indexed_db,
                });
            }
        }
        Ok(StorageState { cookies, origins, skipped })
    }

    /// Sign the caller's session in with `state` (`None`: its later contexts
    /// start empty): its browser context now, made if it has none (the shared
    /// tabs': the default context), and each isolated tab's context later.
    pub(super) async fn set_login(&self, state: Option<StorageState>) -> Result<(), ToolError> {
        let who = owner();
        let Some(state) = state else {
            self.inner.owners.write(&who, |s| s.login = None);
            return Ok(());
        };
        let state = Arc::new(state);
        self.inner.owners.write(&who, |s| s.login = Some(state.clone()));
        let home = self.home()?;
        let (browser, context) = {
            let guard = self.session().await?;
            let s = guard.as_ref().ok_or_else(|| ToolError::browser_unavailable("no browser"))?;
            (s.browser.clone(), s.context_of(&who))
        };
        let context = match (&who, context) {
            (Some(_), None) => Some(self.owner_context(home, &browser, &who, false).await?),
            (_, c) => c,
        };
        self.seed(&browser, context.as_ref(), &state).await
    }

    /// The login a new context of `who` starts with: its session's, else the
    /// server's.
    pub(super) fn login_of(&self, who: &Owner) -> Option<Arc<StorageState>> {
        (self.inner.owners.read(who, |s| s.login.clone()).flatten())
            .or_else(|| self.default_login())
    }

    /// The login every session starts with (`--login`), if the server has one.
    pub(super) fn default_login(&self) -> Option<Arc<StorageState>> {
        lock(&self.inner.default_login).clone()
    }

    /// Set the login every session starts with: the contexts made from now on
    /// (each session's own, isolated tabs') and the shared tabs' context when
    /// the browser starts.
    pub(super) fn set_default_login(&self, state: Option<StorageState>) {
        *lock(&self.inner.default_login) = state.map(Arc::new);
    }

    /// Write `state` into browser context `context` (none: the default one):
    /// its cookies, then each origin's `localStorage`.
    pub(super) async fn seed(
        &self,
        browser: &Browser,
        context: Option<&BrowserContextId>,
        state: &StorageState,
    ) -> Result<(), ToolError> {
        if !state.cookies.is_empty() {
            let cookies: Vec<Value> = state.cookies.iter().map(cookie_param).collect();
            let params = in_context(json!({"cookies": cookies}), context);
            browser_command(browser, "Storage.setCookies", params).await?;
        }
        for o in &state.origins {
            self.seed_origin(browser, context, o).await?;
        }
        Ok(())
    }

    /// Write `o`'s `localStorage` and IndexedDB in `context` from a helper tab
    /// that asks for the origin and answers the request itself: nothing
    /// reaches the origin.
    async fn seed_origin(
        &self,
        browser: &Browser,
        context: Option<&BrowserContextId>,
        o: &OriginStorage,
    ) -> Result<(), ToolError> {
        let mut params = super::own_window("about:blank");
        params.browser_context_id = context.cloned();
        let page = browser
            .new_page(params)
            .await
            .map_err(|e| cdp_error("cannot open a tab to write a login's localStorage", e))?;
        let write = async {
            let mut paused = page
                .event_listener::<EventRequestPaused>()
                .await
                .map_err(|e| cdp_error("Fetch.requestPaused", e))?;
            let pattern =
                json!({"urlPattern": format!("{}/*", o.origin), "requestStage": "Request"});
            raw_command(&page, "Fetch.enable", json!({"patterns": [pattern]})).await?;
            let go = raw_command(&page, "Page.navigate", json!({"url": format!("{}/", o.origin)}));
            let answer = async {
                let Some(ev) = paused.next().await else {
                    return Err(ToolError::browser_error("the helper tab's request was not seen"));
                };
                // An icon of its own: the browser asks no `/favicon.ico` of the site.
                let page_html = b"<!doctype html><title>ochre</title><link rel=icon href='data:,'>";
                let body = BASE64.encode(page_html);
                let fulfil = json!({
                    "requestId": ev.request_id.inner(),
                    "responseCode": 200,
                    "responseHeaders": [{"name": "Content-Type", "value": "text/html"}],
                    "body": body,
                });
                raw_command(&page, "Fetch.fulfillRequest", fulfil).await
            };
            let (went, answered) = futures::join!(go, answer);
            went?;
            answered?;
            self.wait_loaded(&page, 10_000).await?;
            let entries = serde_json::to_string(&o.local_storage)
                .map_err(|e| ToolError::internal(e.to_string()))?;
            let dbs = serde_json::to_string(&o.indexed_db)
                .map_err(|e| ToolError::internal(e.to_string()))?;
            let script = format!(
                "(async () => {{ if (location.origin !== {origin}) throw new Error('not at ' + {origin}); \
                 for (const [k, v] of {entries}) localStorage.setItem(k, v); \
                 return await ({IDB_JS}).load({dbs}); }})()",
                origin = serde_json::to_string(&o.origin).unwrap_or_default(),
            );
            self.eval(&page, &script, true).await.map(drop)
        };
        let done = bounded(30_000, "writing a login's storage", write).await;
        use chromiumoxide::cdp::browser_protocol::target::CloseTargetParams;
        let close = browser.execute(CloseTargetParams::new(page.target_id().clone()));
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), close).await;
        done.map_err(|e| {
            ToolError::browser_error(format!("cannot write {}'s storage: {}", o.origin, e.message))
        })
    }
}
