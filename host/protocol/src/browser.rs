//! What the browser reports to the host, as plain data: a tab, a page event,
//! a trusted input event. `ochre-browser` produces them; `ochre-host` reads
//! them whether or not it was built with a browser.

use std::sync::Arc;

use serde_json::Value;

/// Who owns a tab: an MCP session's id, or `None` for the shared tabs.
pub type Owner = Option<Arc<str>>;

/// A tab's id: `t3` on the wire. Numbers are given out once per browser
/// manager (across its pool and relaunches) and never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TabId(pub u64);

impl TabId {
    /// The id that `text` spells (`t3`), if it spells one.
    pub fn parse(text: &str) -> Option<Self> {
        number_after(text, "t").map(Self)
    }
}

impl std::fmt::Display for TabId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t{}", self.0)
    }
}

/// An element's ref: `ax_12` on the wire, given out by the page library of one
/// document (a ref of an older document is stale).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RefId(pub u64);

impl RefId {
    /// The ref that `text` spells (`ax_12`), if it spells one.
    pub fn parse(text: &str) -> Option<Self> {
        number_after(text, "ax_").map(Self)
    }
}

impl std::fmt::Display for RefId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ax_{}", self.0)
    }
}

/// The number `text` spells after `prefix`: digits only (no sign, no space).
fn number_after(text: &str, prefix: &str) -> Option<u64> {
    let digits = text.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

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

#[cfg(test)]
mod tests {
    use super::{RefId, TabId};

    #[test]
    fn tab_ids_and_refs_read_back_what_they_write_and_nothing_else() {
        for n in [0, 3, 12, u64::MAX] {
            assert_eq!(TabId::parse(&TabId(n).to_string()), Some(TabId(n)));
            assert_eq!(RefId::parse(&RefId(n).to_string()), Some(RefId(n)));
        }
        for bad in ["", "t", "3", "t-3", "t+3", "T3", "t3 ", "t99999999999999999999", "ax_3"] {
            assert_eq!(TabId::parse(bad), None, "{bad:?}");
        }
        for bad in ["", "ax_", "12", "ax_-1", "ax_+1", "AX_1", "ax_1x", "t3"] {
            assert_eq!(RefId::parse(bad), None, "{bad:?}");
        }
    }
}
