//! The browser of a host built without one (`ochre-host` with the `browser`
//! feature off: no chromiumoxide, no Chromium). Served in place of
//! `ochre-browser` under the same names, it answers truly for a host that has
//! no tabs: no tab, no page event, no dialog; an operation on a page fails with
//! `BROWSER_UNAVAILABLE`. Plugins asking for the `browser` or `cdp` interface
//! are refused at load, so only the host's own guards reach it.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use ochre_protocol::ToolError;
pub use ochre_protocol::browser::{
    HostBrowser, Input, Notices, Owner, PageEvent, RefId, StorageState, TabDialog, TabId, TabInfo,
};
pub use ochre_protocol::page_ops;

/// The host's browser here: none.
pub type BrowserManager = NoBrowser;

fn unavailable() -> ToolError {
    ToolError::browser_unavailable(
        "this host was built without a browser (ochre-host's `browser` feature is off)",
    )
}

/// No browser: no tabs, no page events, nothing ever launched.
#[derive(Clone, Debug, Default)]
pub struct NoBrowser;

impl HostBrowser for NoBrowser {
    fn set_scrubber(&self, _scrub: ochre_protocol::browser::Scrubber) {}

    fn set_notices(&self, _notices: Notices) {}

    async fn with_owner<F: Future + Send>(&self, _owner: Owner, fut: F) -> F::Output {
        fut.await
    }

    async fn release_owner(&self, _owner: &str) {}

    async fn tabs(&self) -> Result<Vec<TabInfo>, ToolError> {
        Ok(Vec::new())
    }

    async fn peek_tab(&self, _tab: Option<TabId>) -> Option<TabInfo> {
        None
    }

    async fn page_op(
        &self,
        _tab: Option<TabId>,
        _op: &str,
        _args: Value,
        _timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        Err(unavailable())
    }

    async fn thumbnail(&self, _tab: Option<TabId>) -> Result<Vec<u8>, ToolError> {
        Err(unavailable())
    }

    fn event_mark(&self) -> u64 {
        0
    }

    fn events_since(&self, _mark: u64) -> Vec<PageEvent> {
        Vec::new()
    }

    fn take_unjournaled(&self) -> Vec<PageEvent> {
        Vec::new()
    }

    fn dialog_still_open(&self, _seq: u64) -> bool {
        false
    }

    async fn wait_adoptions(&self, _max: Duration) {}

    async fn wait_downloads(&self, _mark: u64, _max: Duration) {}

    fn downloads_dir_shown(&self) -> String {
        String::new()
    }

    fn evidence_dir(&self) -> Option<PathBuf> {
        None
    }

    fn take_relaunch_note(&self) -> bool {
        false
    }

    async fn storage_state(&self) -> Result<StorageState, ToolError> {
        Err(unavailable())
    }

    async fn use_login(&self, _state: Option<StorageState>) -> Result<(), ToolError> {
        Err(unavailable())
    }

    fn use_login_everywhere(&self, _state: Option<StorageState>) -> Result<(), ToolError> {
        Err(unavailable())
    }

    fn set_login_source(&self, _source: ochre_protocol::browser::LoginSource) {}

    fn hold_tab(&self, tab: TabId, _why: &str) -> Result<(), ToolError> {
        Err(ToolError::tab_not_found(format!("no tab {tab}: this host has no browser")))
    }

    fn release_tab(&self, _tab: TabId) {}

    async fn watch_tab(
        &self,
        _tab: TabId,
        _sink: Box<dyn ochre_protocol::browser::FrameSink>,
    ) -> Result<(), ToolError> {
        Err(unavailable())
    }

    async fn person_input(
        &self,
        _tab: TabId,
        _events: &[page_ops::Gesture],
    ) -> Result<(), ToolError> {
        Err(unavailable())
    }

    async fn as_person<F: Future + Send>(&self, _tab: TabId, fut: F) -> F::Output {
        fut.await
    }

    async fn person_field_text(&self, _tab: TabId, _ref_id: RefId) -> Result<String, ToolError> {
        Err(unavailable())
    }

    async fn shutdown(&self) {}
}
