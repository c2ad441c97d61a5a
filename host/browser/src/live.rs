//! A person in the loop: a tab held for a person (the agent's calls on it
//! refused with `TAB_HELD`), its screen streamed to them (a CDP screencast)
//! and their mouse, wheel and keys sent to it. The live-view page that shows
//! it is the MCP server's; this is what that page asks of the browser.

use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{EventScreencastFrame, ScreencastFrameAckParams};
use futures::StreamExt;

use ochre_protocol::browser::{FrameSink, RefId, ScreenFrame};
use ochre_protocol::{ToolError, page_ops};

use super::{BrowserManager, TabId, cdp_error, not_found, owner};

impl BrowserManager {
    /// See [`ochre_protocol::browser::HostBrowser::hold_tab`].
    pub(crate) fn hold(&self, n: TabId, why: &str) -> Result<(), ToolError> {
        let gone = || not_found(&n.to_string());
        if self.visible_page(n, &owner()).is_none() {
            return Err(gone());
        }
        self.check_held(n)?;
        self.inner.tabs.with(n, |t| t.held = Some(why.into())).ok_or_else(gone)
    }

    /// See [`ochre_protocol::browser::HostBrowser::release_tab`].
    pub(crate) fn release(&self, n: TabId) {
        self.inner.tabs.with(n, |t| t.held = None);
    }

    /// `TAB_HELD` if a person holds tab `n` (and the running call is not theirs).
    pub(crate) fn check_held(&self, n: TabId) -> Result<(), ToolError> {
        self.check_held_for(n, &super::Caller::current())
    }

    /// `TAB_HELD` if a person holds tab `n` (and `caller` is not them).
    pub(crate) fn check_held_for(&self, n: TabId, caller: &super::Caller) -> Result<(), ToolError> {
        if caller.person == Some(n) {
            return Ok(());
        }
        match self.inner.tabs.with(n, |t| t.held.clone()).flatten() {
            None => Ok(()),
            Some(why) => Err(ToolError::tab_held(format!(
                "a person holds tab {n} ({why}); nothing was done: wait for them \
                 (oc_handoff with the handoffId waits) and call again"
            ))
            .with("tabId", n.to_string())
            .with("reason", why.to_string())),
        }
    }

    /// The page of tab `tab`, whoever owns it (a person's link names it).
    fn person_page(&self, n: TabId) -> Result<Page, ToolError> {
        self.inner.tabs.with(n, |t| t.page.clone()).ok_or_else(|| not_found(&n.to_string()))
    }

    /// See [`ochre_protocol::browser::HostBrowser::watch_tab`].
    pub(crate) async fn watch(
        &self,
        n: TabId,
        mut sink: Box<dyn FrameSink>,
    ) -> Result<(), ToolError> {
        let page = self.person_page(n)?;
        let mut frames = page
            .event_listener::<EventScreencastFrame>()
            .await
            .map_err(|e| cdp_error("cannot watch the tab's screen", e))?;
        // A tab behind others paints nothing: the watched one is in front.
        let _ = tokio::time::timeout(Duration::from_secs(2), page.bring_to_front()).await;
        // (Shared with a video of the tab being recorded.)
        self.screencast_on(n, &page).await?;
        // A page that does not repaint sends one frame, or none: the first
        // picture is taken as a screenshot would be.
        let mut sent = false;
        let result = loop {
            let next = tokio::time::timeout(Duration::from_millis(700), frames.next()).await;
            if self.inner.tabs.with(n, |_| ()).is_none() {
                break Ok(());
            }
            match next {
                Ok(Some(ev)) => {
                    let ack = ScreencastFrameAckParams::new(ev.session_id);
                    let _ = page.execute(ack).await;
                    sent = true;
                    let frame = ScreenFrame {
                        jpeg: AsRef::<str>::as_ref(&ev.data).to_owned(),
                        width: ev.metadata.device_width,
                        height: ev.metadata.device_height,
                    };
                    if !sink.frame(frame) {
                        break Ok(());
                    }
                }
                Ok(None) => break Ok(()),
                Err(_) if !sent => {
                    sent = true;
                    match self.still(&page).await {
                        Ok(frame) => {
                            if !sink.frame(frame) {
                                break Ok(());
                            }
                        }
                        Err(e) => break Err(e),
                    }
                }
                // Nothing painted: is anyone still watching?
                Err(_) if !sink.watching() => break Ok(()),
                Err(_) => {}
            }
        };
        self.screencast_off(n, &page).await;
        result
    }

    /// The tab's viewport now, as a screencast frame.
    async fn still(&self, page: &Page) -> Result<ScreenFrame, ToolError> {
        use base64::Engine as _;
        let size = self.eval(page, "[innerWidth, innerHeight]", true).await?;
        let num = |i: usize| size.get(i).and_then(serde_json::Value::as_f64).unwrap_or(0.0);
        let bytes = self.picture_now(page).await?;
        Ok(ScreenFrame {
            jpeg: base64::engine::general_purpose::STANDARD.encode(bytes),
            width: num(0),
            height: num(1),
        })
    }

    /// See [`ochre_protocol::browser::HostBrowser::as_person`].
    pub(crate) fn person_scope<F: Future>(
        &self,
        n: TabId,
        fut: F,
    ) -> impl Future<Output = F::Output> {
        super::PERSON.scope(n, fut)
    }

    /// See [`ochre_protocol::browser::HostBrowser::person_field_text`].
    pub(crate) async fn field_text(&self, n: TabId, ref_id: RefId) -> Result<String, ToolError> {
        let page = self.person_page(n)?;
        let args = serde_json::json!({"ref": ref_id});
        let (doc, object) = self.element(n, &page, args, 5_000).await?;
        let r = self
            .doc_send(
                &doc,
                "Runtime.callFunctionOn",
                serde_json::json!({
                    "functionDeclaration": "function () { return this.isContentEditable ? this.innerText : String(this.value ?? ''); }",
                    "objectId": object,
                    "returnByValue": true,
                }),
            )
            .await
            .map_err(|e| cdp_error("cannot read the field", e.message))?;
        Ok(r["result"]["value"].as_str().unwrap_or_default().to_owned())
    }

    /// See [`ochre_protocol::browser::HostBrowser::person_input`].
    pub(crate) async fn person_gestures(
        &self,
        n: TabId,
        events: &[page_ops::Gesture],
    ) -> Result<(), ToolError> {
        let page = self.person_page(n)?;
        super::bounded(10_000, "a person's input", self.send_plain(&page, events)).await
    }
}
