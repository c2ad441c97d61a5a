//! What the browser reports to the host, as plain data: a tab, a page event,
//! a trusted input event. `ochre-browser` produces them; `ochre-host` reads
//! them whether or not it was built with a browser.

use std::sync::Arc;

use serde_json::Value;

/// Who owns a tab: an MCP session's id, or `None` for the shared tabs.
pub type Owner = Option<Arc<str>>;

/// One tab as the browser interface reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabInfo {
    /// Short id.
    pub id: String,
    /// Current URL.
    pub url: String,
    /// Document title.
    pub title: String,
    /// Whether it is the current tab.
    pub current: bool,
    /// The tab whose page opened this one, if a page did.
    pub opener: Option<String>,
    /// The JavaScript dialog open on it, if any.
    pub dialog: Option<TabDialog>,
}

/// A JavaScript dialog open on a tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabDialog {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: &'static str,
    /// Its message.
    pub message: String,
}

/// One thing a page did on its own.
#[derive(Debug, Clone)]
pub struct PageEvent {
    /// Position in the log (grows).
    pub seq: u64,
    /// `dialog_opened`, `dialog_closed`, `tab_opened`, `tab_closed`, `download`.
    pub kind: &'static str,
    /// The details (always with `tabId` when a tab is concerned).
    pub body: Value,
    /// The owner of the tab concerned: only its calls are told.
    pub owner: Owner,
}

/// A trusted input event (see the WIT `input-event`): points are (x, y, click count).
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Move the mouse to (x, y).
    MouseMove((f64, f64, u32)),
    /// Press the left button at (x, y) with a click count.
    MouseDown((f64, f64, u32)),
    /// Release the left button at (x, y) with a click count.
    MouseUp((f64, f64, u32)),
    /// Press and release a named key.
    Key(String),
    /// Insert text.
    Text(String),
}
