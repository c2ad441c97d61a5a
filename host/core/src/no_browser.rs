//! The browser of a host built without one (`ochre-host` with the `browser`
//! feature off: no chromiumoxide, no Chromium). Served in place of
//! `ochre-browser` under the same names, it answers truly for a host that has
//! no tabs: no tab, no page event, no dialog; an operation on a page fails with
//! `BROWSER_UNAVAILABLE`. Plugins asking for the `browser` or `cdp` interface
//! are refused at load, so only the host's own guards reach it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use ochre_protocol::ToolError;
pub use ochre_protocol::browser::{Input, Owner, PageEvent, TabDialog, TabInfo};
pub use ochre_protocol::page_ops;

/// Where the browser tells the operator about launches (unused here).
pub type Notices = Arc<dyn Fn(ochre_protocol::Level, String) + Send + Sync>;

/// Run `fut` on behalf of `owner` (there are no tabs to keep apart).
pub async fn with_tab_owner<F: std::future::Future>(_owner: Owner, fut: F) -> F::Output {
    fut.await
}

fn unavailable() -> ToolError {
    ToolError::browser_unavailable(
        "this host was built without a browser (ochre-host's `browser` feature is off)",
    )
}

/// No browser: no tabs, no page events.
#[derive(Clone, Debug, Default)]
pub struct BrowserManager;

impl BrowserManager {
    /// Nothing is ever launched: nothing to tell.
    pub fn set_notices(&self, _notices: Notices) {}

    /// An owner's tabs are closed when its session ends: it has none.
    pub async fn release_owner(&self, _owner: &str) {}

    /// Where evidence bundles are written: nowhere (no page to take one of).
    pub fn evidence_dir(&self) -> Option<std::path::PathBuf> {
        None
    }

    /// The page-event log's position: always at its start.
    pub fn event_mark(&self) -> u64 {
        0
    }

    /// The page events since `mark`: none.
    pub fn events_since(&self, _mark: u64) -> Vec<PageEvent> {
        Vec::new()
    }

    /// The page events no call has reported: none.
    pub fn take_unjournaled(&self) -> Vec<PageEvent> {
        Vec::new()
    }

    /// Whether dialog `seq` is still open: no dialog ever is.
    pub fn dialog_still_open(&self, _seq: u64) -> bool {
        false
    }

    /// No download is ever in progress.
    pub async fn wait_downloads(&self, _mark: u64, _max: Duration) {}

    /// No page is ever being adopted.
    pub async fn wait_adoptions(&self, _max: Duration) {}

    /// There is no downloads directory.
    pub fn downloads_dir_shown(&self) -> String {
        String::new()
    }

    /// No tab is open.
    pub async fn peek_tab(&self, _tab: Option<&str>) -> Option<TabInfo> {
        None
    }

    /// The caller's tabs: none.
    pub async fn tabs(&self) -> Result<Vec<TabInfo>, ToolError> {
        Ok(Vec::new())
    }

    /// The browser was never relaunched.
    pub fn take_relaunch_note(&self) -> bool {
        false
    }

    /// A typed page operation: there is no page.
    pub async fn run<O: ochre_protocol::page_ops::PageOp>(
        &self,
        _tab: Option<&str>,
        _op: &O,
        _timeout_ms: u32,
    ) -> Result<O::Output, ToolError> {
        Err(unavailable())
    }

    /// A page operation: there is no page.
    pub async fn page_op(
        &self,
        _tab: Option<&str>,
        _op: &str,
        _args: Value,
        _timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        Err(unavailable())
    }

    /// A tab's thumbnail: there is no tab.
    pub async fn thumbnail(&self, _tab: Option<&str>) -> Result<Vec<u8>, ToolError> {
        Err(unavailable())
    }

    /// Nothing to close.
    pub async fn shutdown(&self) {}
}
