//! Reading tools: `read_page`, `find`, `query_dom`, `wait_for`, `lightweight_scroll`,
//! `console_capture`, `extract_data`.

use ochre_sdk::browser::{self, RefId, ops};
use ochre_sdk::{Output, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Run a typed page operation with the default timeout.
pub(crate) fn run<O: ops::PageOp>(tab: Option<&str>, op: &O) -> Result<O::Output, ToolError> {
    browser::run(tab, op, 30_000)
}

/// Watch what the next action changes (around `target`, else the focused
/// element): the document's token for `settle`.
pub(crate) fn watch(tab: Option<&str>, target: Option<RefId>) -> Result<String, ToolError> {
    Ok(run(tab, &ops::Watch { ref_id: target })?.token)
}

/// Stop watching (the action failed: no `settle` follows). Best effort: the
/// failure being reported matters more.
pub(crate) fn unwatch(tab: Option<&str>) {
    let _ = run(tab, &ops::Unwatch::default());
}

/// `read_page` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ReadArgs {
    /// `ax` (default): tree with refs; `text`; `markdown`; `dom` (HTML).
    #[schemars(regex(pattern = r"^(ax|text|markdown|dom)$"))]
    mode: Option<String>,
    /// Only the subtree of this ref.
    #[serde(rename = "ref_id", alias = "refId")]
    ref_id: Option<RefId>,
    /// `interactive`: only elements with refs.
    #[schemars(regex(pattern = r"^(interactive|all)$"))]
    filter: Option<String>,
    /// Max tree depth (ax).
    #[schemars(range(min = 0, max = 200))]
    depth: Option<u32>,
    /// Cut at this many chars (default 50000; ax: no cut).
    #[schemars(range(min = 100, max = 5000000))]
    max_chars: Option<u32>,
    tab_id: Option<String>,
}

/// Read the page as roles and names with refs (ax_N) on interactive elements; mode
/// text/markdown to read, dom for HTML.
#[ochre_sdk::tool(name = "read_page", read_only, output_mode, scope = Browser)]
pub(crate) fn read_page(a: ReadArgs) -> Result<Output, ToolError> {
    let mode = a.mode.unwrap_or_else(|| "ax".into());
    let max = a.max_chars.or(if mode == "ax" { None } else { Some(50_000) });
    let r = run(
        a.tab_id.as_deref(),
        &ops::Snapshot {
            mode: Some(mode.clone()),
            ref_id: a.ref_id,
            filter: a.filter,
            depth: a.depth,
            max_chars: max.map(u64::from),
        },
    )?;
    let text = &r.text;
    let mut out =
        format!("{} {}\n{text}", r.url, serde_json::to_string(&r.title).unwrap_or_default());
    if r.truncated {
        out.push_str(&format!(
            "\n…(cut at {} of {} chars: pass maxChars, ref_id or filter=interactive)",
            text.len(),
            json!(r.total)
        ));
    }
    let lines = text.lines().count();
    Ok(Output::text(out).with_summary(format!("{mode}: {lines} lines")))
}

/// `find` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct FindArgs {
    /// Words, e.g. `submit button`, `Sign in`.
    #[schemars(length(min = 1, max = 500))]
    query: String,
    #[schemars(range(min = 1, max = 20))]
    limit: Option<u32>,
    tab_id: Option<String>,
}

/// Find elements by text or description, best first, with refs; cheaper than read_page.
#[ochre_sdk::tool(name = "find", read_only, scope = Browser)]
pub(crate) fn find(a: FindArgs) -> Result<Output, ToolError> {
    if a.query.trim().is_empty() {
        return Err(ToolError::invalid_argument("query", "query is blank"));
    }
    let find = ops::Find { query: a.query.clone(), limit: a.limit, scores: None };
    let matches = run(a.tab_id.as_deref(), &find)?.matches;
    if matches.is_empty() {
        return Ok(Output::text(format!(
            "nothing matches {:?}; try other words or read_page",
            a.query
        ))
        .with_summary("0 matches"));
    }
    let n = matches.len();
    Ok(Output::text(matches.join("\n")).with_summary(format!("{n} matches")))
}

/// `query_dom` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct QueryArgs {
    /// `css` (default) or `xpath`.
    #[schemars(regex(pattern = r"^(css|xpath)$"))]
    method: Option<String>,
    /// CSS (pierces shadow roots and iframes).
    #[schemars(length(min = 1, max = 4000))]
    selector: Option<String>,
    /// XPath expression.
    #[schemars(length(min = 1, max = 4000))]
    xpath: Option<String>,
    /// false: only the first match.
    multiple: Option<bool>,
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
    tab_id: Option<String>,
}

/// Query elements by CSS selector or XPath: tag, text, attributes and a ref for each.
#[ochre_sdk::tool(name = "query_dom", read_only, scope = Browser)]
pub(crate) fn query_dom(a: QueryArgs) -> Result<Output, ToolError> {
    let xpath_mode = a.method.as_deref() == Some("xpath");
    let (sel, xp) = match (a.selector, a.xpath) {
        (_, Some(x)) => (None, Some(x)),
        (Some(s), None) if xpath_mode => (None, Some(s)),
        (Some(s), None) => (Some(s), None),
        (None, None) => {
            return Err(ToolError::invalid_argument(
                "selector",
                "query_dom needs `selector` (CSS) or `xpath`",
            ));
        }
    };
    let limit = if a.multiple == Some(false) { 1 } else { a.limit.unwrap_or(20) };
    let r = run(a.tab_id.as_deref(), &ops::Query { selector: sel, xpath: xp, limit: Some(limit) })?;
    let n = r.matches.len();
    Ok(Output::json(&r)?.with_summary(format!("{n} matches")))
}

/// `wait_for` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct WaitArgs {
    /// What to wait for.
    #[serde(rename = "type")]
    #[schemars(regex(
        pattern = r"^(selector|selector_hidden|function|navigation|url_match|timeout)$"
    ))]
    kind: String,
    /// CSS selector; JS expression or function; URL substring, glob or /regex/; ms.
    #[schemars(length(min = 1, max = 10000))]
    value: Option<String>,
    /// selector: must be visible.
    visible: Option<bool>,
    /// Max wait in ms (default 30000).
    #[schemars(range(min = 1, max = 120000))]
    timeout: Option<u32>,
    tab_id: Option<String>,
}

/// Wait for a selector to appear or go, a JS condition, a navigation, a URL match, or
/// some ms.
#[ochre_sdk::tool(name = "wait_for", read_only, scope = Browser)]
pub(crate) fn wait_for(a: WaitArgs) -> Result<Output, ToolError> {
    let needs_value = a.kind != "navigation";
    let value = a.value.unwrap_or_default();
    if needs_value && value.trim().is_empty() {
        return Err(ToolError::invalid_argument(
            "value",
            format!("wait_for type {} needs a value", a.kind),
        ));
    }
    let mut timeout = a.timeout.unwrap_or(30_000);
    if a.kind == "timeout" {
        let ms: u32 = value.trim().parse().map_err(|_| {
            ToolError::invalid_argument("value", "for type timeout, value is a number of ms")
        })?;
        if ms > 120_000 {
            return Err(ToolError::invalid_argument("value", "wait at most 120000 ms"));
        }
        timeout = ms + 1_000;
    }
    // (The schema holds `type` to the kinds: one it lets through is one.)
    let kind = ops::WaitKind::parse(&a.kind).ok_or_else(|| {
        ToolError::invalid_argument("type", format!("unknown wait type {:?}", a.kind))
    })?;
    let wait = ops::Wait { kind, value: Some(value), visible: a.visible, token: None };
    let r = browser::run(a.tab_id.as_deref(), &wait, timeout)?;
    let line = format!("{} met after {} ms at {}", a.kind, r.elapsed_ms, r.url);
    Ok(Output::text(line.clone()).with_summary(line))
}

/// `lightweight_scroll` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ScrollArgs {
    /// `down` (default), `up`, `left` or `right`.
    #[schemars(regex(pattern = r"^(up|down|left|right)$"))]
    direction: Option<String>,
    /// Pixels (default 80% of the viewport).
    #[schemars(range(min = 1, max = 100000))]
    amount: Option<u32>,
    /// `top` or `bottom` of the page instead.
    #[schemars(regex(pattern = r"^(top|bottom)$"))]
    to: Option<String>,
    /// Scroll this element into view instead.
    #[serde(rename = "ref")]
    target: Option<RefId>,
    tab_id: Option<String>,
}

/// Scroll the page (or an element into view); returns the new scroll position.
#[ochre_sdk::tool(name = "lightweight_scroll", tier = 2, scope = Browser)]
pub(crate) fn lightweight_scroll(a: ScrollArgs) -> Result<Output, ToolError> {
    let scroll =
        ops::Scroll { direction: a.direction, amount: a.amount, to: a.to, ref_id: a.target };
    let r = run(a.tab_id.as_deref(), &scroll)?;
    let summary = format!("scrollY {}", r.scroll_y);
    Ok(Output::json(&r)?.with_summary(summary))
}

/// `console_capture` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ConsoleArgs {
    /// `get` (default) or `clear` (capture is always on).
    #[schemars(regex(pattern = r"^(get|clear|start|stop)$"))]
    action: Option<String>,
    /// Only this level (error includes exceptions).
    #[schemars(regex(pattern = r"^(log|info|warning|error|debug)$"))]
    level: Option<String>,
    /// Last N (default 100).
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
    tab_id: Option<String>,
}

/// Console messages and uncaught exceptions of a tab since it opened (or the last
/// clear).
#[ochre_sdk::tool(name = "console_capture", read_only, tier = 2, scope = Browser)]
pub(crate) fn console_capture(a: ConsoleArgs) -> Result<Output, ToolError> {
    let action = a.action.as_deref().unwrap_or("get");
    let console = ops::Console { level: a.level, limit: a.limit, clear: Some(action == "clear") };
    let r = run(a.tab_id.as_deref(), &console)?;
    let summary = format!("{} messages", r.messages.len());
    Ok(Output::json(&r)?.with_summary(summary))
}

/// `extract_data` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ExtractArgs {
    /// JSON Schema: an object with `properties`, or an array of them.
    schema: serde_json::Map<String, Value>,
    /// Only inside this element.
    #[schemars(length(min = 1, max = 4000))]
    selector: Option<String>,
    #[serde(rename = "ref_id", alias = "refId")]
    ref_id: Option<RefId>,
    /// Arrays: CSS selector of one item.
    #[schemars(length(min = 1, max = 4000))]
    item_selector: Option<String>,
    tab_id: Option<String>,
}

/// Extract structured data matching a JSON Schema, from JSON-LD, microdata, OpenGraph,
/// then CSS heuristics.
#[ochre_sdk::tool(name = "extract_data", output_mode, read_only, tier = 2, scope = Browser)]
pub(crate) fn extract_data(a: ExtractArgs) -> Result<Output, ToolError> {
    let schema = Value::Object(a.schema);
    let props = match schema.get("type").and_then(Value::as_str) {
        Some("array") => schema.pointer("/items/properties"),
        _ => schema.get("properties"),
    };
    if props.is_none_or(|p| p.as_object().is_none_or(|o| o.is_empty())) {
        return Err(ToolError::invalid_argument(
            "schema",
            "schema needs `properties` (or `items.properties` for an array)",
        ));
    }
    let extract = ops::Extract {
        schema,
        selector: a.selector,
        ref_id: a.ref_id,
        item_selector: a.item_selector,
    };
    let r = run(a.tab_id.as_deref(), &extract)?;
    let summary = format!("{}/{} fields", r["fieldsFound"], r["fieldsTotal"]);
    Ok(Output::json(&r)?.with_summary(summary))
}
