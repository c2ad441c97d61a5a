//! ochre's `core` tool group (first part): navigation, tabs, scripts, screenshots and
//! page content, with OpenChrome's tool and argument names. Built on `ochre-sdk` like
//! any third-party plugin; the browser itself lives in the host.

mod act;
mod computer;
mod keys;
mod net;
mod read;

use ochre_sdk::browser::{self, ops};
use ochre_sdk::{Content, Output, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// Longest timeout a caller may ask for, in ms.
const MAX_TIMEOUT_MS: u32 = 120_000;

fn timeout(ms: Option<u32>) -> u32 {
    ms.unwrap_or(30_000).min(MAX_TIMEOUT_MS)
}

/// Schemes `navigate` and `tabs_create` accept.
fn check_url(url: &str) -> Result<(), ToolError> {
    let lower = url.trim().to_ascii_lowercase();
    let ok = ["http://", "https://", "about:", "data:"].iter().any(|p| lower.starts_with(p));
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid_argument(
            "url",
            format!("url {url:?} must start with http://, https://, about: or data:"),
        ))
    }
}

/// Arguments of `navigate`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NavigateArgs {
    /// The URL to open, or `back` / `forward`.
    #[schemars(length(min = 1, max = 8192))]
    url: String,
    tab_id: Option<String>,
    /// Max wait in ms (default 30000).
    #[schemars(range(min = 1, max = 120000))]
    timeout: Option<u32>,
}

/// Open a URL in a tab (or go `back`/`forward`) and wait for the load; returns tab id,
/// URL and title.
#[ochre_sdk::tool(name = "navigate", open_world, scope = Browser)]
fn navigate(a: NavigateArgs) -> Result<Output, ToolError> {
    let tab = a.tab_id.as_deref();
    let t = match a.url.as_str() {
        "back" => browser::history(tab, -1, timeout(a.timeout))?,
        "forward" => browser::history(tab, 1, timeout(a.timeout))?,
        url => {
            check_url(url)?;
            browser::navigate(tab, url, timeout(a.timeout))?
        }
    };
    let mut summary = format!("{} at {}", t.tab_id, t.url);
    let mut v = serde_json::to_value(&t).map_err(|e| ToolError::internal(e.to_string()))?;
    let seen = browser::run(Some(&t.tab_id), &ops::Wall {}, 2_000).unwrap_or_default();
    // The server answered with an error page: the load is done, and the
    // page is not the one asked for.
    if let Some(status) = seen.status.filter(|s| *s >= 400) {
        v["status"] = serde_json::json!(status);
        summary.push_str(&format!(" (HTTP {status})"));
    }
    // Evidence that the page is a login or CAPTCHA wall (see the `wall`
    // page operation), read at the load event.
    if let Some(wall) = seen.wall {
        v["wall"] = serde_json::json!(wall);
    }
    Ok(Output::json(&v)?.with_summary(summary))
}

/// Arguments of `tabs_create`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CreateArgs {
    /// URL to open (default about:blank).
    #[schemars(length(min = 1, max = 8192))]
    url: Option<String>,
    /// Max wait in ms (default 30000).
    #[schemars(range(min = 1, max = 120000))]
    timeout: Option<u32>,
}

/// Open a tab (optionally at a URL) and make it current; returns its id.
#[ochre_sdk::tool(name = "tabs_create", tier = 2, scope = Browser)]
fn tabs_create(a: CreateArgs) -> Result<Output, ToolError> {
    if let Some(u) = &a.url {
        check_url(u)?;
    }
    let t = browser::new_tab(a.url.as_deref(), timeout(a.timeout))?;
    let summary = format!("opened {}", t.tab_id);
    Ok(Output::json(&t)?.with_summary(summary))
}

/// Arguments of `tabs_close`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CloseArgs {
    #[schemars(length(min = 1, max = 16))]
    tab_id: String,
}

/// Close a tab by its id (see tabs_context).
#[ochre_sdk::tool(name = "tabs_close", tier = 2, destructive, scope = Browser)]
fn tabs_close(a: CloseArgs) -> Result<Output, ToolError> {
    browser::close_tab(&a.tab_id)?;
    Ok(Output::json(&serde_json::json!({"closed": a.tab_id}))?
        .with_summary(format!("closed {}", a.tab_id)))
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// List open tabs (id, URL, title, current, opener, dialog).
#[ochre_sdk::tool(name = "tabs_context", read_only, scope = Browser)]
fn tabs_context(_: NoArgs) -> Result<Output, ToolError> {
    let tabs = browser::tabs()?;
    let n = tabs.len();
    Ok(Output::json(&serde_json::json!({ "tabs": tabs }))?.with_summary(format!("{n} tabs")))
}

/// Arguments of `javascript_tool`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct JsArgs {
    /// Promises are awaited.
    #[schemars(length(min = 1, max = 100000))]
    code: Option<String>,
    /// alias of code
    #[schemars(length(min = 1, max = 100000))]
    text: Option<String>,
    tab_id: Option<String>,
    /// Max wait in ms (default 30000).
    #[schemars(range(min = 1, max = 120000))]
    timeout: Option<u32>,
}

/// Run JavaScript in a page; returns the JSON value of its last expression.
#[ochre_sdk::tool(name = "javascript_tool", scope = Browser)]
fn javascript_tool(a: JsArgs) -> Result<Output, ToolError> {
    let code = match (a.code, a.text) {
        (Some(c), _) | (None, Some(c)) => c,
        (None, None) => {
            return Err(ToolError::invalid_argument("code", "javascript_tool: `code` is required"));
        }
    };
    let value = browser::evaluate(a.tab_id.as_deref(), &code, timeout(a.timeout))?;
    Ok(Output::json(&serde_json::json!({ "value": value }))?.with_summary("script ran"))
}

/// Arguments of `page_screenshot`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ShotArgs {
    tab_id: Option<String>,
    /// The whole page rather than the viewport.
    full_page: Option<bool>,
    /// `png` (default) or `jpeg`.
    #[schemars(regex(pattern = r"^(png|jpeg)$"))]
    format: Option<String>,
    /// JPEG quality 1-100 (default 80).
    #[schemars(range(min = 1, max = 100))]
    quality: Option<u8>,
    /// Only this rectangle (CSS px).
    clip: Option<Clip>,
}

/// A rectangle.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Clip {
    x: f64,
    y: f64,
    #[schemars(range(min = 1, max = 16384))]
    width: f64,
    #[schemars(range(min = 1, max = 16384))]
    height: f64,
}

/// Capture a tab as an image (viewport, full page or clip). Use it to look at layout;
/// prefer read_page for content.
#[ochre_sdk::tool(name = "page_screenshot", read_only, tier = 2, scope = Browser)]
fn page_screenshot(a: ShotArgs) -> Result<Output, ToolError> {
    let format = a.format.unwrap_or_else(|| "png".into());
    let data = browser::screenshot(
        a.tab_id.as_deref(),
        a.full_page.unwrap_or(false),
        &format,
        a.quality,
        a.clip.map(|c| [c.x, c.y, c.width, c.height]),
    )?;
    let n = data.len();
    Ok(Output::default()
        .with_content(Content::Image { data, mime_type: format!("image/{format}") })
        .with_summary(format!("{format} screenshot, {n} bytes")))
}

/// Arguments of `page_content`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ContentArgs {
    tab_id: Option<String>,
    /// `text` (default: the visible text) or `html`.
    #[schemars(regex(pattern = r"^(text|html)$"))]
    format: Option<String>,
    /// Default 50000.
    #[schemars(range(min = 1, max = 1000000))]
    max_chars: Option<u32>,
}

/// Get a page's visible text (or its HTML). Use it to read a page when you do not need
/// element refs.
#[ochre_sdk::tool(name = "page_content", read_only, tier = 2, scope = Browser)]
fn page_content(a: ContentArgs) -> Result<Output, ToolError> {
    let html = a.format.as_deref() == Some("html");
    // The text is read_page's text mode (the page model's one reading: what
    // fields hold included, frames' text after the page's).
    let text = if html {
        let expr = "document.documentElement ? document.documentElement.outerHTML : ''";
        let value = browser::evaluate(a.tab_id.as_deref(), expr, 30_000)?;
        value.as_str().unwrap_or_default().to_owned()
    } else {
        let op = ops::Snapshot { mode: Some("text".into()), ..Default::default() };
        browser::run(a.tab_id.as_deref(), &op, 30_000)?.text
    };
    let text = text.as_str();
    let max = a.max_chars.unwrap_or(50_000) as usize;
    let total = text.chars().count();
    let mut out: String = text.chars().take(max).collect();
    if total > max {
        out.push_str(&format!("\n…(cut: {total} chars in all; raise maxChars for more)"));
    }
    Ok(Output::text(out).with_summary(format!("{total} chars")))
}

/// Arguments of `page_reload`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ReloadArgs {
    tab_id: Option<String>,
    /// Max wait in ms (default 30000).
    #[schemars(range(min = 1, max = 120000))]
    timeout: Option<u32>,
}

/// Reload a tab and wait for it to load.
#[ochre_sdk::tool(name = "page_reload", tier = 2, scope = Browser)]
fn page_reload(a: ReloadArgs) -> Result<Output, ToolError> {
    let t = browser::reload(a.tab_id.as_deref(), timeout(a.timeout))?;
    let summary = format!("reloaded {}", t.tab_id);
    Ok(Output::json(&t)?.with_summary(summary))
}

ochre_sdk::register_plugin! {
    name: "core",
    group: "core",
    interfaces: [browser, clock],
    tools: [
        Navigate, read::ReadPage, read::Find, read::QueryDom, act::Interact, act::FormInput,
        act::FillForm, act::DragDrop, act::FileUpload, JavascriptTool, read::WaitFor,
        PageScreenshot, PageContent, PageReload, read::LightweightScroll, TabsCreate, TabsClose,
        TabsContext, read::ConsoleCapture, read::ExtractData, net::NetworkCapture, net::PerformanceTrace, net::PageVideo, net::Network,
        net::Emulate, net::NetworkPolicy, net::Route, net::EvidenceBundle, computer::Computer, keys::PressKey, keys::Type, keys::HandleDialog,
    ],
}
