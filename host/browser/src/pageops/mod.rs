//! Page operations for the `browser` interface: the dispatch of a page
//! operation to the page library (`page/`, one injected function that walks the
//! DOM — far faster and smaller than `Accessibility.getFullAXTree` on big
//! pages) or to the host, in the document its refs belong to, and the ref
//! registry. By subject beside it: a document's load and the settle it leaves
//! owed (`loads`), the tab's console and network (`watch`), what an action
//! changed and the page's waits (`settle`), file inputs (`files`), cookies.
//!
//! Refs: the page library remembers the elements it gave a number to, per
//! document; the host remembers which numbers were given out in which document
//! (a random token per document) on which tab, and hands the page the expected
//! token of every ref it passes in. A ref of an older document, or of an element
//! since removed, is `STALE_REF`; a number never given out on the tab is
//! `REF_NOT_FOUND`. Numbers keep growing across documents of a tab, so an old ref
//! can never silently name a new element.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestServedFromCache, EventRequestWillBeSent,
    EventResponseReceived, EventWebSocketClosed, EventWebSocketCreated,
    EventWebSocketFrameReceived, EventWebSocketFrameSent, EventWebSocketHandshakeResponseReceived,
    EventWebSocketWillSendHandshakeRequest, ResourceType,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    EventBindingCalled, EventConsoleApiCalled, EventExceptionThrown,
};
use futures::future::BoxFuture;
use futures::{FutureExt as _, StreamExt};
use serde_json::{Value, json};

use super::frames::Doc;
use super::library::{NOT_INSTALLED, page_call, page_install_and_call, page_library_key};
use super::netcap::{AfterLoad, TabWatch};
use super::ops::Frames;
use super::{BrowserManager, Code, bounded, cdp_error, lock, raw_command};
use super::{RefId, TabId};
use ochre_protocol::ToolError;
use ochre_protocol::page_ops::{
    self, Actionable, AnyOp, Console, Cookies, OnElement, PageOp, Settle, Settled, Wait, WaitKind,
    Waited,
};
use ochre_protocol::url::UrlPattern;

mod cookies;
mod files;
mod loads;
mod settle;
mod watch;

use loads::*;
use watch::*;

pub(super) fn cdp_params<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, ToolError> {
    serde_json::from_value(v).map_err(|e| cdp_error("bad CDP parameters", e))
}

/// A host-run operation's typed result as the wire's JSON.
fn answer<T: serde::Serialize>(v: T) -> Result<Value, ToolError> {
    serde_json::to_value(v).map_err(|e| ToolError::internal(e.to_string()))
}

/// Refs named in page-op arguments, rewritten from `ax_<n>` to `n`.
fn take_refs(args: &mut Value) -> Result<Vec<RefId>, ToolError> {
    fn parse(field: &str, s: &str) -> Result<RefId, ToolError> {
        RefId::parse(s).ok_or_else(|| {
            ToolError::invalid_argument(
                field,
                format!(
                    "{field} {s:?} is not a ref: refs look like ax_12 (from read_page or find)"
                ),
            )
        })
    }
    let mut out = Vec::new();
    let Some(obj) = args.as_object_mut() else {
        return Ok(out);
    };
    for key in ["ref", "source", "target"] {
        if let Some(Value::String(s)) = obj.get(key) {
            let r = parse(key, s)?;
            out.push(r);
            obj.insert(key.into(), json!(r.0));
        }
    }
    if let Some(Value::Object(refs)) = obj.get("refs") {
        for k in refs.keys() {
            out.push(parse("refs", k)?);
        }
    }
    Ok(out)
}

impl BrowserManager {
    /// Drop everything known of tab `n` (it closed or its browser died).
    /// What its session's network capture holds of it stays (see
    /// `sessioncap`).
    pub(super) fn forget_tab(&self, n: TabId) -> Option<super::tabs::Tab> {
        let tab = self.inner.tabs.remove(n)?;
        self.keep_closed_capture(n, &tab);
        Some(tab)
    }

    /// Evaluate `expression` in the tab's page (promises awaited): its value, or
    /// with `by_value` false the remote object id. A throw is `JS_ERROR`. It
    /// gives the page no user activation: ochre's own reads leave the page as
    /// a person who only looked would.
    pub(super) async fn eval(
        &self,
        page: &Page,
        expression: &str,
        by_value: bool,
    ) -> Result<Value, ToolError> {
        let r = self.eval_doc_result(&Doc::Main(page.clone()), expression, by_value, false).await?;
        Ok(if by_value { r["value"].clone() } else { r["objectId"].clone() })
    }

    /// The caller's own script (`javascript_tool`), evaluated as [`Self::eval`]
    /// but with a user activation, as Puppeteer's and Playwright's `evaluate`
    /// give: a script that clicks a link into a new window or starts a video
    /// with sound works as the same act by a person would.
    pub(super) async fn eval_as_act(
        &self,
        page: &Page,
        expression: &str,
    ) -> Result<Value, ToolError> {
        let r = self.eval_doc_result(&Doc::Main(page.clone()), expression, true, true).await?;
        Ok(r["value"].clone())
    }

    /// The document a call's refs (or its document token) belong to: the tab's
    /// page or one of its cross-site frames; with the tokens the refs must still
    /// carry. The refs are taken out of `args`.
    fn locate(
        &self,
        n: TabId,
        page: &Page,
        args: &mut Value,
    ) -> Result<(Doc, serde_json::Map<String, Value>), ToolError> {
        let wanted = take_refs(args)?;
        let (frame, expect) = self.inner.tabs.all(|tabs| {
            let refs = tabs.get(&n).map(|t| &t.refs);
            let mut expect = serde_json::Map::new();
            let mut frame: Option<Option<String>> = None;
            for r in wanted {
                let Some((token, f)) = refs.and_then(|t| t.token_of(r)) else {
                    return Err(ToolError::ref_not_found(format!(
                            "ref {r} was never given out on this tab; call read_page or find for refs"
                        ),
                    )
                    .with("ref", r.to_string()));
                };
                expect.insert(r.0.to_string(), json!(token));
                match &frame {
                    None => frame = Some(f.map(str::to_owned)),
                    Some(g) if g.as_deref() != f => {
                        return Err(ToolError::invalid_argument(
                            "ref",
                            "these refs are in different frames of the page (one in a cross-site frame); act within one frame",
                        ));
                    }
                    Some(_) => {}
                }
            }
            if frame.is_none()
                && let Some(t) = args.get("token").and_then(Value::as_str)
            {
                frame = Some(refs.and_then(|r| r.frame_of_token(t)).map(str::to_owned));
            }
            Ok((frame.flatten(), expect))
        })?;
        let doc = match frame {
            Some(f) => Doc::Frame(f, self.slot_of_tab(n)),
            None => Doc::Main(page.clone()),
        };
        Ok((doc, expect))
    }

    /// A page-library element (a ref or selector in `args`) as a remote object
    /// of its document, for CDP commands that take one: (document, object id).
    pub(super) async fn element(
        &self,
        n: TabId,
        page: &Page,
        mut args: Value,
        timeout_ms: u32,
    ) -> Result<(Doc, String), ToolError> {
        let (doc, expect) = self.locate(n, page, &mut args)?;
        let v = self.run_in(n, &doc, "element", args, expect, true, timeout_ms).await?;
        match v.as_str() {
            Some(id) => Ok((doc, id.to_owned())),
            None => Err(cdp_error("cannot reach the element", "no object id")),
        }
    }

    /// [`Self::run_op_once`]; a read that a navigation cut short (the document
    /// it ran in went away: a `read_page` sent while a `navigate` or a click's
    /// navigation is under way) reads the new document once it has loaded.
    async fn run_op(
        &self,
        n: TabId,
        page: &Page,
        op: &str,
        args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let read = super::ops::page_op(op).is_some_and(|o| o.retried);
        let again = read.then(|| args.clone());
        let started = Instant::now();
        let r = self.run_op_once(n, page, op, args, timeout_ms).await;
        tracing::debug!(op, took = ?started.elapsed(), "page op");
        match (r, again) {
            (Err(e), Some(args)) if document_went_away(&e) => {
                tracing::debug!(op, error = %e.message, "the document went away under a read; reading the new one");
                self.wait_loaded(page, timeout_ms.clamp(1, 10_000)).await?;
                self.run_op_once(n, page, op, args, timeout_ms).await
            }
            (r, _) => r,
        }
    }

    /// Run one page-library operation with the registry's view of the refs, in
    /// the document its refs (or its document token) belong to: the tab's page or
    /// one of its cross-site frames. A snapshot, `find` and `query` without refs
    /// cover the frames too.
    async fn run_op_once(
        &self,
        n: TabId,
        page: &Page,
        op: &str,
        mut args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let (doc, expect) = self.locate(n, page, &mut args)?;
        let spec = super::ops::page_op(op);
        let frames = spec.map_or(Frames::One, |o| o.frames);
        {
            // Every read mode but `dom` (the page's own HTML) covers frames.
            let read = frames == Frames::Snapshot && args.get("mode").is_none_or(|m| m != "dom");
            let wide = frames == Frames::Wide && matches!(doc, Doc::Main(_));
            if read || wide {
                let frames = self.discover_frames(n, page).await;
                if !frames.is_empty() || matches!(doc, Doc::Frame(..)) {
                    let slot = self.slot_of_tab(n);
                    let docs: Vec<Doc> = std::iter::once(doc.clone())
                        .chain(frames.into_iter().map(|f| Doc::Frame(f.id, slot)))
                        .collect();
                    return match op {
                        "snapshot" => self.snapshot_frames(n, doc, args, expect, timeout_ms).await,
                        _ => self.wide_op(n, &docs, op, args, timeout_ms).await,
                    };
                }
            }
        }
        if frames == Frames::Fields && expect.is_empty() {
            // Fields named by label: the page's own form, else the first frame
            // that has them all (a payment or sign-in frame).
            let main = self.run_in(n, &doc, op, args.clone(), expect, false, timeout_ms).await;
            match main {
                Err(e) if e.code == Code::FieldNotFound => {
                    for f in self.discover_frames(n, page).await {
                        let doc = Doc::Frame(f.id, self.slot_of_tab(n));
                        let r = self
                            .run_in(
                                n,
                                &doc,
                                op,
                                args.clone(),
                                Default::default(),
                                false,
                                timeout_ms,
                            )
                            .await;
                        if r.is_ok() {
                            return r;
                        }
                    }
                    return Err(e);
                }
                other => return other,
            }
        }
        let shift = matches!(&doc, Doc::Frame(..)) && spec.is_some_and(|o| o.points);
        let mut v = self.run_in(n, &doc, op, args, expect, false, timeout_ms).await?;
        if shift && let Doc::Frame(f, _) = &doc {
            let (dx, dy) = self.frame_origin(n, page, f).await?;
            super::frames::shift_points(&mut v, dx, dy);
        }
        Ok(v)
    }

    /// Run one page-library operation in one document.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_in(
        &self,
        n: TabId,
        doc: &Doc,
        op: &str,
        args: Value,
        expect: serde_json::Map<String, Value>,
        raw: bool,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let base = self.inner.tabs.with(n, |t| t.refs.next).unwrap_or(1);
        let ctx = json!({"op": op, "args": args, "base": base, "expect": expect, "raw": raw});
        let gesture = super::ops::page_op(op).is_some_and(|o| o.gesture);
        let run = async {
            let r = self.eval_doc_result(doc, &page_call(&ctx), !raw, gesture).await?;
            match r["value"].as_str() {
                Some(NOT_INSTALLED) => {
                    self.eval_doc_result(doc, &page_install_and_call(&ctx), !raw, gesture).await
                }
                _ => Ok(r),
            }
        };
        let r = bounded(timeout_ms, op, run).await?;
        let v = if raw { r["objectId"].clone() } else { r["value"].clone() };
        if raw {
            return Ok(v);
        }
        if let (Some(token), Some(lo), Some(hi)) = (
            v.get("token").and_then(Value::as_str),
            v.get("lo").and_then(Value::as_u64),
            v.get("hi").and_then(Value::as_u64),
        ) {
            let frame = match doc {
                Doc::Frame(f, _) => Some(f.as_str()),
                Doc::Main(_) => None,
            };
            self.inner.tabs.with(n, |t| t.refs.record(lo, hi, token, frame));
        }
        if let Some(err) = v.get("err") {
            let code = err.get("code").and_then(Value::as_str).unwrap_or("JS_ERROR");
            let message = err.get("message").and_then(Value::as_str).unwrap_or("");
            let mut e = ToolError::new(Code::named(code), message);
            if let Some(Value::Object(d)) = err.get("details") {
                e.details = d.clone();
            }
            return Err(e);
        }
        Ok(v.get("ok").cloned().unwrap_or(Value::Null))
    }

    /// The `RemoteObject` an evaluation in a document (the tab's page or a
    /// cross-site frame) gives; a JS exception is a `JS_ERROR`. With `gesture`
    /// the page gets a user activation first (an act; see
    /// `page_ops::Spec::gesture`).
    async fn eval_doc_result(
        &self,
        doc: &Doc,
        expression: &str,
        by_value: bool,
        gesture: bool,
    ) -> Result<Value, ToolError> {
        let mut r = self
            .doc_send(
                doc,
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": by_value, "userGesture": gesture}),
            )
            .await?;
        if let Some(ex) = r.get("exceptionDetails") {
            let text = ex["exception"]["description"]
                .as_str()
                .or(ex["text"].as_str())
                .unwrap_or("exception");
            let mut e = ToolError::js_error(text);
            if let Some(class) = ex["exception"]["className"].as_str() {
                e = e.with("exception", class);
            }
            return Err(e);
        }
        Ok(r["result"].take())
    }

    /// Run page operation `parsed` (read from `args`, which go to the page
    /// library as they came) in a tab: see [`HostBrowser::page_op`].
    pub(super) async fn dispatch(
        &self,
        tab: Option<TabId>,
        parsed: AnyOp,
        args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        match parsed {
            AnyOp::Dialog(_) => {
                let (n, _) = self.page(tab).await?;
                Ok(json!({"dialog": self.open_dialog(n)}))
            }
            AnyOp::HandleDialog(a) => {
                let (n, page) = self.page(tab).await?;
                let out = self.handle_dialog(n, &page, &a).await?;
                if out.kind == "beforeunload" && out.accepted {
                    // The navigation the dialog held goes on: let it load.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let _ = self.wait_loaded(&page, 10_000).await;
                    let _ = self.network_quiet(n, 50, 3_000).await;
                }
                answer(out)
            }
            AnyOp::ProfileStatus(_) => answer(self.profile_status().await),
            AnyOp::ListProfiles(_) => answer(self.list_profiles().await),
            AnyOp::Route(a) => {
                let now = self.route(&a).await?;
                answer(now)
            }
            AnyOp::NetworkPolicy(a) => {
                let now = self.network_policy(&a).await?;
                answer(now)
            }
            // One browser: its death ends the call at once. A pool: the pages
            // of a browser that dies are read on the others.
            AnyOp::VisitBatch(a) if self.pool_size() > 1 => answer(self.visit_batch(&a).await?),
            AnyOp::VisitBatch(a) => answer(self.while_alive(self.visit_batch(&a)).await?),
            AnyOp::Sleep(a) => answer(super::visit::sleep(&a).await),
            // Its steps are page operations of their own, each guarded.
            AnyOp::Act(a) => {
                let ms = a.timeout_ms.unwrap_or(0).min(60_000) + 60_000;
                let bound = u32::try_from(ms).unwrap_or(u32::MAX).max(timeout_ms);
                let acted = bounded(bound, "the action", self.act_boxed(tab, a)).await?;
                answer(acted)
            }
            AnyOp::FindTarget(a) => {
                answer(self.find_target_bounded(tab, a, timeout_ms, "finding the element").await?)
            }
            // An element named as a caller names it: found (and waited for)
            // first, then set or described, in one call.
            AnyOp::SetValue(a) if a.needs_finding() => {
                self.on_element(tab, a, timeout_ms, "setting the field").await
            }
            AnyOp::Describe(a) if a.needs_finding() => {
                self.on_element(tab, a, timeout_ms, "describing the element").await
            }
            AnyOp::Gestures(a) => {
                let done = Box::pin(self.gestures(tab, &a.events, timeout_ms)).await?;
                answer(done)
            }
            AnyOp::Drag(a) => {
                let dragged =
                    bounded(timeout_ms.max(60_000), "the drag", self.drag_boxed(tab, a)).await?;
                answer(dragged)
            }
            AnyOp::NewIsolatedTab(a) => {
                let (spread, ms) = (a.spread.unwrap_or(false), timeout_ms.max(1000));
                let info =
                    self.new_isolated_tab(a.url.as_deref(), ms, spread, a.login.as_deref()).await?;
                Ok(json!({"id": info.id, "url": info.url, "title": info.title}))
            }
            parsed => self.guarded(tab, self.tab_op(tab, parsed, args, timeout_ms)).await,
        }
    }

    /// `op` on the element its target names, found (and waited for) first;
    /// its answer says how it was found. An op that names no element is
    /// refused.
    async fn on_element<O>(
        &self,
        tab: Option<TabId>,
        mut op: O,
        timeout_ms: u32,
        what: &str,
    ) -> Result<Value, ToolError>
    where
        O: OnElement + Send + 'static,
        O::Output: serde::Serialize + Send + 'static,
    {
        let Some((target, wait)) = op.take_target() else {
            let e = format!("{} needs `ref` or `target`", O::NAME);
            return Err(ToolError::invalid_argument("ref", e));
        };
        let on = self.on_target(tab, target, wait, timeout_ms, what, move |r| op.on_ref(r));
        let (mut out, found) = on.await?;
        O::found(&mut out, found);
        answer(out)
    }

    /// A page operation on one tab (no dialog open there): `op` read from
    /// `args`, which go to the page library as they came.
    async fn tab_op(
        &self,
        tab: Option<TabId>,
        op: AnyOp,
        args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let (n, page) = match op {
            // Read at the load event: it does not pay the navigation's owed wait.
            AnyOp::Wall(_) => self.page_as_is(tab).await?,
            _ => self.page(tab).await?,
        };
        self.on_tab(n, &page, op, args, timeout_ms).await
    }

    /// Page operation `op` on tab `n` (resolved for its caller), `args` its
    /// arguments as the page library gets them. Boxed where it is made: its
    /// future is large, and a debug build's caller would hold a copy of it on
    /// the stack while it runs.
    pub(super) fn on_tab(
        &self,
        n: TabId,
        page: &Page,
        op: AnyOp,
        args: Value,
        timeout_ms: u32,
    ) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(self.handle(n, page.clone(), op, args, timeout_ms))
    }

    /// See [`Self::on_tab`].
    async fn handle(
        &self,
        n: TabId,
        page: Page,
        op: AnyOp,
        args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let timeout_ms = if timeout_ms == 0 { 30_000 } else { timeout_ms };
        match op {
            AnyOp::Cookies(a) => {
                answer(bounded(timeout_ms, "cookies", self.cookies(&page, &a)).await?)
            }
            AnyOp::NetworkCapture(a) => {
                let captured = bounded(
                    timeout_ms.max(20_000),
                    "network capture",
                    self.network_capture(n, self.tab_watch(n), &page, &a),
                )
                .await?;
                answer(captured)
            }
            AnyOp::PerformanceTrace(a) => {
                let t = bounded(120_000, "performance trace", self.performance_trace(n, &page, &a));
                answer(t.await?)
            }
            AnyOp::PageVideo(a) => {
                answer(bounded(60_000, "the video", self.page_video(n, &page, &a)).await?)
            }
            AnyOp::NetworkConditions(a) => answer(self.network_conditions(n, &page, &a).await?),
            AnyOp::Emulate(a) => {
                let done = bounded(timeout_ms, "emulating", self.emulate(n, &page, &a)).await?;
                answer(done)
            }
            AnyOp::EvidenceBundle(a) => answer(
                bounded(60_000, "the evidence bundle", self.evidence_bundle(n, &page, &a)).await?,
            ),
            AnyOp::WaitLoad(_) => {
                self.wait_loaded(&page, timeout_ms).await?;
                let url = crate::frame_url(&page).await;
                Ok(json!({"url": url}))
            }
            AnyOp::Capture(a) => {
                let shot = self.capture(&page, &a).await?;
                answer(shot)
            }
            AnyOp::NetworkIdle(a) => {
                let quiet = a.quiet_ms.unwrap_or(100).min(10_000);
                let idle = self.network_quiet(n, quiet, u64::from(timeout_ms)).await;
                Ok(json!({"idle": idle}))
            }
            AnyOp::Console(a) => {
                self.console_settled(n, &page).await;
                answer(self.console_messages(n, &a))
            }
            // Each check is bounded too (a JS condition may never settle).
            AnyOp::Wait(a) => {
                let wait = self.wait(n, &page, &a, timeout_ms);
                answer(bounded(timeout_ms.saturating_add(1_000), "the wait", wait).await?)
            }
            // The watch starts once the element can take the event: requests
            // from now on are the action's, not those of the wait before.
            AnyOp::Actionable(Actionable { watch: Some(true), .. }) => {
                let v = self.run_op(n, &page, op.name(), args, timeout_ms).await?;
                if v.get("token").is_some_and(Value::is_string)
                    && let Some(w) = self.tab_watch(n)
                {
                    w.action_begins();
                }
                Ok(v)
            }
            AnyOp::Watch(_) | AnyOp::DragInfo(_) => {
                if let Some(w) = self.tab_watch(n) {
                    w.action_begins();
                }
                self.run_op(n, &page, op.name(), args, timeout_ms).await
            }
            AnyOp::Settle(a) => {
                let settled = self.settle_action(n, &page, a, timeout_ms).await?;
                answer(settled)
            }
            // A failed action's watch ends: no settle answers it.
            AnyOp::Unwatch(_) => {
                if let Some(w) = self.tab_watch(n) {
                    w.action_answered();
                }
                self.run_op(n, &page, op.name(), args, timeout_ms).await
            }
            AnyOp::Wall(_) => {
                if let Some(seen) = self.inner.tabs.with(n, |t| t.wall_at_load.take()).flatten() {
                    return Ok(seen);
                }
                let (wall, _) =
                    bounded(timeout_ms, "the wall probe", self.wall_and_title(&page)).await?;
                Ok(wall)
            }
            // The table says which operations the page library runs (a test
            // holds page.js to it); any other reaching here has no handler.
            op if !super::ops::page_op(op.name()).is_some_and(|o| o.library) => {
                Err(ToolError::internal(format!("the host has no handler for {}", op.name())))
            }
            op => self.run_op(n, &page, op.name(), args, timeout_ms).await,
        }
    }
}

impl BrowserManager {
    /// The profile in use, without launching anything.
    async fn profile_status(&self) -> page_ops::ProfileInfo {
        let o = &self.inner.options;
        // From the slot's record, not its session: a call may hold that.
        let home = self.slot(self.home().unwrap_or(0));
        let running = home.connected();
        let temp_dir = home.profile_dir().map(|p| p.display().to_string());
        if !o.endpoints.is_empty() {
            let endpoints = serde_json::to_value(self.pool_status().await).ok();
            return page_ops::ProfileInfo {
                mode: "attach".into(),
                endpoints,
                running,
                persistent: true,
                note: Some(
                    "attached to a browser ochre did not start: its profile belongs to it".into(),
                ),
                ..Default::default()
            };
        }
        let persistent = o.user_data_dir.is_some();
        let dir = match &o.user_data_dir {
            Some(d) => Some(d.display().to_string()),
            None => temp_dir,
        };
        page_ops::ProfileInfo {
            mode: "managed".into(),
            running,
            persistent,
            user_data_dir: dir,
            headless: Some(!o.headed),
            executable: self.find_executable().ok().map(|p| p.display().to_string()),
            launches: Some(self.launches()),
            ..Default::default()
        }
    }

    /// Profiles in the user-data-dir: from Chrome's `Local State`, else the dirs.
    async fn list_profiles(&self) -> page_ops::Profiles {
        let status = self.profile_status().await;
        let Some(dir) = status.user_data_dir.as_deref().map(PathBuf::from) else {
            let why = if status.mode == "attach" {
                "attached to a browser ochre did not start; its profiles are not visible to ochre"
            } else {
                "the browser has not started yet and uses a fresh temporary profile (pass --user-data-dir for a persistent one)"
            };
            return page_ops::Profiles { note: Some(why.into()), ..Default::default() };
        };
        let mut profiles = Vec::new();
        let local_state = std::fs::read_to_string(dir.join("Local State"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok());
        if let Some(Value::Object(cache)) =
            local_state.as_ref().and_then(|v| v.pointer("/profile/info_cache"))
        {
            for (d, info) in cache {
                let name = info.get("name").and_then(Value::as_str).map(str::to_owned);
                profiles.push(page_ops::ProfileDir { dir: d.clone(), name });
            }
        } else if let Ok(rd) = std::fs::read_dir(&dir) {
            let mut dirs: Vec<String> = rd
                .flatten()
                .filter(|e| e.path().join("Preferences").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            dirs.sort();
            profiles =
                dirs.into_iter().map(|dir| page_ops::ProfileDir { dir, name: None }).collect();
        }
        page_ops::Profiles {
            user_data_dir: Some(dir.display().to_string()),
            persistent: Some(status.persistent),
            profiles,
            note: None,
        }
    }
}

impl BrowserManager {
    /// Send a raw CDP command to a tab's page session (the caller checked the
    /// domain).
    pub async fn cdp_send(
        &self,
        tab: Option<TabId>,
        method: &str,
        params: Value,
    ) -> Result<Value, ToolError> {
        self.guarded(tab, async {
            if !params.is_object() {
                return Err(ToolError::invalid_argument(
                    "params",
                    "CDP params must be a JSON object",
                ));
            }
            let (_, page) = self.page(tab).await?;
            raw_command(&page, method, params).await
        })
        .await
    }
}

fn token_of(v: Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

/// The document an evaluation ran in was replaced (a navigation) or its frame
/// went away before the evaluation returned (`cdp_error`), or the page library
/// found a document the browser has only just created.
fn document_went_away(e: &ToolError) -> bool {
    e.code == Code::DocumentLoading
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_rewritten_and_checked() {
        let mut a = json!({"ref": "ax_12", "refs": {"ax_3": "x"}, "value": "ax_9"});
        let r = take_refs(&mut a).expect("refs");
        assert_eq!(r, vec![RefId(12), RefId(3)]);
        assert_eq!(a["ref"], json!(12));
        assert_eq!(a["value"], json!("ax_9"));
        let mut bad = json!({"ref": "12"});
        assert_eq!(take_refs(&mut bad).expect_err("bad").code, Code::InvalidArgument);
    }
}
