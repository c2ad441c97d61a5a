use crate::ToolError;
use crate::bindings::ochre::plugin::browser as raw;

/// An open tab.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tab {
    /// Short id (`t1`, ...).
    pub tab_id: String,
    /// Current URL.
    pub url: String,
    /// Document title.
    pub title: String,
    /// Whether it is the current tab.
    pub current: bool,
    /// The tab whose page opened this one (a popup, a `target=_blank` link).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opener_tab_id: Option<String>,
    /// The JavaScript dialog open on this tab: it runs no script until the
    /// dialog is answered (the `handle_dialog` page-op).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<Dialog>,
}

/// A JavaScript dialog open on a tab.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Dialog {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its message.
    pub message: String,
}

#[cfg(not(feature = "wit-v0-1"))]
fn tab(t: raw::TabInfo) -> Tab {
    let dialog = t.dialog.map(|d| Dialog {
        kind: match d.kind {
            raw::DialogKind::Alert => "alert",
            raw::DialogKind::Confirm => "confirm",
            raw::DialogKind::Prompt => "prompt",
            raw::DialogKind::Beforeunload => "beforeunload",
        }
        .to_owned(),
        message: d.message,
    });
    Tab {
        tab_id: t.id,
        url: t.url,
        title: t.title,
        current: t.current,
        opener_tab_id: t.opener,
        dialog,
    }
}

/// A 0.1.0 host says nothing of openers and dialogs.
#[cfg(feature = "wit-v0-1")]
fn tab(t: raw::TabInfo) -> Tab {
    Tab {
        tab_id: t.id,
        url: t.url,
        title: t.title,
        current: t.current,
        opener_tab_id: None,
        dialog: None,
    }
}

fn err(e: crate::bindings::ochre::plugin::types::ToolError) -> ToolError {
    e.into()
}

/// All open tabs.
pub fn tabs() -> Result<Vec<Tab>, ToolError> {
    Ok(raw::tabs().map_err(err)?.into_iter().map(tab).collect())
}
/// Open a tab (and make it current).
pub fn new_tab(url: Option<&str>, timeout_ms: u32) -> Result<Tab, ToolError> {
    raw::new_tab(url, timeout_ms).map(tab).map_err(err)
}
/// Close a tab.
pub fn close_tab(tab_id: &str) -> Result<(), ToolError> {
    raw::close_tab(tab_id).map_err(err)
}
/// Navigate and wait for the load event.
pub fn navigate(tab_id: Option<&str>, url: &str, timeout_ms: u32) -> Result<Tab, ToolError> {
    raw::navigate(tab_id, url, timeout_ms).map(tab).map_err(err)
}
/// Back (-1) or forward (+1).
pub fn history(tab_id: Option<&str>, delta: i32, timeout_ms: u32) -> Result<Tab, ToolError> {
    raw::history(tab_id, delta, timeout_ms).map(tab).map_err(err)
}
/// Reload.
pub fn reload(tab_id: Option<&str>, timeout_ms: u32) -> Result<Tab, ToolError> {
    raw::reload(tab_id, timeout_ms).map(tab).map_err(err)
}
/// Evaluate a JavaScript expression (promises awaited); its value.
pub fn evaluate(
    tab_id: Option<&str>,
    expression: &str,
    timeout_ms: u32,
) -> Result<serde_json::Value, ToolError> {
    let text = raw::evaluate(tab_id, expression, timeout_ms).map_err(err)?;
    serde_json::from_str(&text)
        .map_err(|e| ToolError::internal(format!("the host returned bad JSON: {e}")))
}
/// A screenshot: `format` `png` or `jpeg` (with `quality`); the viewport, the
/// full page, or `clip` (x, y, width, height in CSS pixels).
pub fn screenshot(
    tab_id: Option<&str>,
    full_page: bool,
    format: &str,
    quality: Option<u8>,
    clip: Option<[f64; 4]>,
) -> Result<Vec<u8>, ToolError> {
    let clip = clip.map(|[x, y, width, height]| raw::Rect { x, y, width, height });
    raw::screenshot(tab_id, full_page, format, quality, clip).map_err(err)
}

/// A trusted input event, as a user would give it.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Move the mouse to (x, y) (CSS pixels of the viewport).
    MouseMove(f64, f64),
    /// Press the left button at (x, y); the count is 2 for a double click's second press.
    MouseDown(f64, f64, u32),
    /// Release the left button at (x, y).
    MouseUp(f64, f64, u32),
    /// Press and release a key (`Enter`, `Tab`, `Space`, arrows, `F1`-`F12`, one
    /// character...) or a chord (`Control+a`, `Shift+Tab`).
    Key(String),
    /// Insert text as if typed.
    Text(String),
}

/// Dispatch input events in order.
pub fn input(tab_id: Option<&str>, events: &[Input]) -> Result<(), ToolError> {
    let p = |x: f64, y: f64, count: u32| raw::Pointer { x, y, count };
    let events: Vec<raw::InputEvent> = events
        .iter()
        .map(|e| match e {
            Input::MouseMove(x, y) => raw::InputEvent::MouseMove(p(*x, *y, 0)),
            Input::MouseDown(x, y, c) => raw::InputEvent::MouseDown(p(*x, *y, *c)),
            Input::MouseUp(x, y, c) => raw::InputEvent::MouseUp(p(*x, *y, *c)),
            Input::Key(k) => raw::InputEvent::Key(k.clone()),
            Input::Text(t) => raw::InputEvent::Text(t.clone()),
        })
        .collect();
    raw::input(tab_id, &events).map_err(err)
}

/// Run an operation of the host's page library by name, with JSON
/// arguments and result (`docs/page-ops.md` lists them): refs are minted and
/// checked by the host, and arguments the operation does not take are
/// refused. [`run`] does the same with the operation's types.
pub fn page_op(
    tab_id: Option<&str>,
    op: &str,
    args: &serde_json::Value,
    timeout_ms: u32,
) -> Result<serde_json::Value, ToolError> {
    let text = raw::page_op(tab_id, op, &args.to_string(), timeout_ms).map_err(err)?;
    serde_json::from_str(&text)
        .map_err(|e| ToolError::internal(format!("the host returned bad JSON: {e}")))
}

/// A tab's id (`t3`) and an element's ref (`ax_12`), parsed and written one way.
pub use ochre_protocol::browser::{RefId, TabId};
/// Typed page operations (the same types the host's table is checked against).
pub use ochre_protocol::page_ops as ops;
use ochre_protocol::page_ops::PageOp;

/// Run a typed page operation: `run(tab, &ops::Sleep { ms: 50 }, 2_000)?.slept_ms`,
/// `run(tab, &ops::Find { query: "Send".into(), ..Default::default() }, 5_000)?.matches`.
/// A result of another shape than the operation's (a host of another
/// version) is an `INTERNAL` error naming the operation.
pub fn run<O: PageOp>(
    tab_id: Option<&str>,
    op: &O,
    timeout_ms: u32,
) -> Result<O::Output, ToolError> {
    let args = ochre_protocol::page_ops::to_args(op).map_err(ToolError::internal)?;
    let out = page_op(tab_id, O::NAME, &args, timeout_ms)?;
    ochre_protocol::page_ops::from_output::<O>(out).map_err(ToolError::internal)
}

/// Give files to a file input (`target`: a ref or a CSS selector); the host
/// only accepts files under the operator's allowed roots.
pub fn set_files(
    tab_id: Option<&str>,
    target: &str,
    paths: &[String],
) -> Result<Vec<String>, ToolError> {
    raw::set_files(tab_id, target, paths).map_err(err)
}
