//! Network tools: `network_capture` (requests of a tab, optionally with bodies),
//! `performance_trace` (a tab's timeline as DevTools records it),
//! `page_video` (a tab's screen as a video file),
//! `network` (OpenChrome's throttling presets), `emulate` (a device, a place,
//! preferences and a slower machine, on a tab or a whole session) and
//! `oc_evidence_bundle` (DOM, screenshot, network and console of a tab written
//! to a bundle dir).

use ochre_sdk::browser::ops;
use ochre_sdk::{Output, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::read::run;

/// `network_capture` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct CaptureArgs {
    /// `start` (clears), `stop`, `get`, `clear` or `har` (write a HAR file).
    #[schemars(regex(pattern = r"^(start|stop|get|clear|har)$"))]
    action: String,
    /// get: response bodies too (text, 32 KB each). har: false leaves them out.
    #[serde(rename = "include_bodies", alias = "includeBodies")]
    include_bodies: Option<bool>,
    /// get: the last N requests (default 200).
    #[schemars(range(min = 1, max = 2000))]
    limit: Option<u32>,
    /// tab (default) or session: all its tabs, later and closed ones too.
    #[schemars(regex(pattern = r"^(tab|session)$"))]
    scope: Option<String>,
    tab_id: Option<String>,
}

/// Record a tab's or the session's requests (start, then get): URL, method, type,
/// status, MIME type, duration, size, failures; bodies on request; har: a HAR file,
/// secrets masked.
#[ochre_sdk::tool(name = "network_capture", read_only, tier = 2, output_mode, scope = Browser)]
pub(crate) fn network_capture(a: CaptureArgs) -> Result<Output, ToolError> {
    let capture = ops::NetworkCapture {
        action: Some(a.action.clone()),
        include_bodies: a.include_bodies,
        limit: a.limit,
        scope: a.scope.clone(),
    };
    let r = run(a.tab_id.as_deref(), &capture)?;
    let summary = match a.action.as_str() {
        "get" => format!(
            "{} requests{}",
            match &r.requests {
                Some(ops::CapturedRequests::List(l)) => l.len(),
                _ => 0,
            },
            if r.capturing { ", capturing" } else { "" }
        ),
        "har" => match &r.har {
            Some(h) => format!(
                "HAR of {} requests ({} with bodies, {} secrets masked) written to {}",
                h.entries, h.bodies, h.masked, h.path
            ),
            None => "no HAR written".into(),
        },
        other => format!("capture {other}"),
    };
    // A session's: which tabs, and how many closed ones it holds.
    let summary = match &r.tabs {
        Some(tabs) => format!(
            "{summary} (session: tabs {}{})",
            if tabs.is_empty() { "none open".to_owned() } else { tabs.join(", ") },
            match r.closed_tabs {
                Some(n) if n > 0 => format!(", {n} closed"),
                _ => String::new(),
            }
        ),
        None => summary,
    };
    Ok(Output::json(&r)?.with_summary(summary))
}

/// `performance_trace` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TraceArgs {
    /// start, stop (write it) or status.
    #[schemars(regex(pattern = r"^(start|stop|status)$"))]
    action: String,
    /// start: the screen too.
    screenshots: Option<bool>,
    /// start: end after this long (ms; 30000).
    #[serde(rename = "max_ms", alias = "maxMs")]
    #[schemars(range(min = 1000, max = 300_000))]
    max_ms: Option<u32>,
    tab_id: Option<String>,
}

/// Trace a tab as DevTools' Performance panel does (start, act, stop): a trace file
/// DevTools and Perfetto open, its long tasks, layout shifts and LCP.
#[ochre_sdk::tool(name = "performance_trace", read_only, tier = 2, scope = Browser)]
pub(crate) fn performance_trace(a: TraceArgs) -> Result<Output, ToolError> {
    let op = ops::PerformanceTrace {
        action: Some(a.action.clone()),
        screenshots: a.screenshots,
        max_ms: a.max_ms,
    };
    let r = run(a.tab_id.as_deref(), &op)?;
    let summary = match (&r.trace, a.action.as_str()) {
        (Some(t), "stop" | "status") => trace_summary(t),
        (_, "start") => "tracing".into(),
        _ if r.tracing => "tracing".into(),
        _ => "no trace".into(),
    };
    Ok(Output::json(&r)?.with_summary(summary))
}

/// A trace's line: its long tasks (the longest, what ran in it, its script
/// named by file), its shifts, its paint, then where it is.
fn trace_summary(t: &ops::TraceWritten) -> String {
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let mut s = plural(t.long_tasks.len(), "long task");
    if let Some(l) = t.long_tasks.first() {
        // (A script's URL by its file name: the line is short.)
        let what: Vec<String> = l
            .what
            .split(' ')
            .map(|w| match w.strip_prefix('(').and_then(|u| u.split_once("://")) {
                Some((_, rest)) => format!("({}", rest.rsplit('/').next().unwrap_or(rest)),
                None => w.to_owned(),
            })
            .collect();
        s += &format!(" (the longest {} ms at +{} ms: {})", l.duration_ms, l.at_ms, what.join(" "));
    }
    s += &format!(", {} (CLS {})", plural(t.layout_shifts as usize, "layout shift"), t.cls);
    if let Some(lcp) = t.lcp_ms {
        s += &format!(", LCP {lcp} ms");
    }
    if let Some(why) = &t.ended_by {
        s += &format!("; ended by {why}");
    }
    s + &format!("; {} ms traced, written to {}", t.duration_ms, t.path)
}

/// `page_video` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct VideoArgs {
    /// start, stop or status.
    #[schemars(regex(pattern = r"^(start|stop|status)$"))]
    action: String,
    /// start: end after this long (ms; 60000).
    #[serde(rename = "max_ms", alias = "maxMs")]
    #[schemars(range(min = 1000, max = 600_000))]
    max_ms: Option<u32>,
    tab_id: Option<String>,
}

/// Record a tab's screen as a video (start, act, stop): an MKV file.
#[ochre_sdk::tool(name = "page_video", read_only, tier = 2, scope = Browser)]
pub(crate) fn page_video(a: VideoArgs) -> Result<Output, ToolError> {
    let op = ops::PageVideo { action: Some(a.action.clone()), max_ms: a.max_ms };
    let r = run(a.tab_id.as_deref(), &op)?;
    let summary = match (&r.video, &r.path) {
        (_, Some(p)) => format!("recording to {p}"),
        (Some(v), None) => format!(
            "{} frames, {} ms, {} chapters{}, written to {}{}",
            v.frames,
            v.duration_ms,
            v.chapters,
            v.ended_by.as_deref().map(|w| format!(" (ended by {w})")).unwrap_or_default(),
            v.path,
            v.webm.as_deref().map(|w| format!(" and {w}")).unwrap_or_default()
        ),
        (None, None) => "no video".into(),
    };
    Ok(Output::json(&r)?.with_summary(summary))
}

/// `network` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct NetworkArgs {
    /// `offline`, `slow-3g`, `fast-3g`, `4g` or `no-throttling`.
    #[schemars(regex(pattern = r"^(offline|slow-3g|fast-3g|4g|no-throttling)$"))]
    preset: Option<String>,
    /// Slow the tab's CPU this many times (1 = full speed), as a slow device.
    #[schemars(range(min = 1, max = 20))]
    cpu_slowdown: Option<f64>,
    tab_id: Option<String>,
}

/// Throttle a tab's network to a preset (offline, slow-3g, fast-3g, 4g) or back to
/// no-throttling, and/or slow its CPU (cpuSlowdown).
#[ochre_sdk::tool(name = "network", tier = 2, scope = Browser)]
pub(crate) fn network(a: NetworkArgs) -> Result<Output, ToolError> {
    if a.preset.is_none() && a.cpu_slowdown.is_none() {
        return Err(ToolError::invalid_argument(
            "preset",
            "network needs `preset` or `cpuSlowdown`",
        ));
    }
    let conditions =
        ops::NetworkConditions { preset: a.preset.clone(), cpu_slowdown: a.cpu_slowdown };
    let r = run(a.tab_id.as_deref(), &conditions)?;
    let mut summary = Vec::new();
    if let Some(p) = &a.preset {
        summary.push(format!("network {p}"));
    }
    if let Some(c) = a.cpu_slowdown {
        summary.push(format!("cpu {c}x slower"));
    }
    Ok(Output::json(&r)?.with_summary(summary.join(", ")))
}

/// `emulate` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct EmulateArgs {
    /// tab or session.
    scope: Option<String>,
    reset: Option<bool>,
    /// iphone-15, iphone-se, ipad-mini, pixel-8, laptop, laptop-hidpi, desktop.
    device: Option<String>,
    width: Option<u32>,
    height: Option<u32>,
    scale: Option<f64>,
    mobile: Option<bool>,
    user_agent: Option<String>,
    /// e.g. de-DE.
    locale: Option<String>,
    /// e.g. Asia/Tokyo.
    timezone: Option<String>,
    #[schemars(range(min = -90, max = 90))]
    latitude: Option<f64>,
    #[schemars(range(min = -180, max = 180))]
    longitude: Option<f64>,
    /// light, dark, no-preference.
    color_scheme: Option<String>,
    /// reduce, no-preference.
    reduced_motion: Option<String>,
    /// offline, slow-3g, fast-3g, 4g, no-throttling.
    network: Option<String>,
    #[schemars(range(min = 1, max = 20))]
    cpu_slowdown: Option<f64>,
    tab_id: Option<String>,
}

/// Emulate a device, place, preferences, network or CPU on a tab or the session.
#[ochre_sdk::tool(name = "emulate", tier = 2, scope = Browser)]
pub(crate) fn emulate(a: EmulateArgs) -> Result<Output, ToolError> {
    let e = ops::Emulate {
        scope: a.scope,
        reset: a.reset,
        device: a.device,
        width: a.width,
        height: a.height,
        scale: a.scale,
        mobile: a.mobile,
        user_agent: a.user_agent,
        locale: a.locale,
        timezone: a.timezone,
        geolocation: match (a.latitude, a.longitude) {
            (Some(latitude), Some(longitude)) => {
                Some(ops::Geolocation { latitude, longitude, accuracy: None })
            }
            (None, None) => None,
            _ => {
                let why = "a position is latitude and longitude, together";
                return Err(ToolError::invalid_argument("latitude", why));
            }
        },
        color_scheme: a.color_scheme,
        reduced_motion: a.reduced_motion,
        network: a.network,
        cpu_slowdown: a.cpu_slowdown,
    };
    let r = run(a.tab_id.as_deref(), &e)?;
    let set = serde_json::to_value(&r.emulating).map_err(|e| ToolError::internal(e.to_string()))?;
    let keys: Vec<&str> =
        set.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    let what = if keys.is_empty() { "nothing".to_owned() } else { keys.join(", ") };
    let summary = format!("emulating {what} on {} ({})", r.tabs.join(", "), r.scope);
    Ok(Output::json(&r)?.with_summary(summary))
}

/// `network_policy` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyArgs {
    /// Only these (https://a.example, *.b.example).
    allow: Option<Vec<String>>,
    /// Never these.
    block: Option<Vec<String>>,
    /// http://[user:pass@]host:port ("": none).
    proxy: Option<String>,
    reset: Option<bool>,
}

/// This session's network rules and proxy, beside the server's; what is in force and refused.
#[ochre_sdk::tool(name = "network_policy", tier = 2, scope = Browser, secret = "proxy")]
pub(crate) fn network_policy(a: PolicyArgs) -> Result<Output, ToolError> {
    let p = ops::NetworkPolicy { allow: a.allow, block: a.block, proxy: a.proxy, reset: a.reset };
    let r = run(None, &p)?;
    let summary = format!(
        "network policy: {} allowed, {} blocked{}; {} refused",
        r.allowed.len(),
        r.blocked.len(),
        r.proxy.as_deref().map(|p| format!(", through {p}")).unwrap_or_default(),
        r.refused_total
    );
    Ok(Output::json(&r)?.with_summary(summary))
}

/// `route` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RouteArgs {
    /// add (default with url), remove, list, clear.
    action: Option<String>,
    /// URL pattern: glob with *, /regex/, or a part.
    url: Option<String>,
    method: Option<String>,
    status: Option<u16>,
    headers: Option<std::collections::BTreeMap<String, String>>,
    body: Option<String>,
    /// Body from this file.
    file: Option<String>,
    abort: Option<bool>,
}

/// Answer this session's requests matching a URL (status, headers, body or file) or abort them; list, remove.
#[ochre_sdk::tool(name = "route", tier = 2, scope = Browser)]
pub(crate) fn route(a: RouteArgs) -> Result<Output, ToolError> {
    let action = match a.action.as_deref() {
        None => None,
        Some(name) => Some(ops::RouteAction::parse(name).ok_or_else(|| {
            let why = format!("action {name:?} is not add, remove, list or clear");
            ToolError::invalid_argument("action", why)
        })?),
    };
    let r = ops::Route {
        action,
        url: a.url,
        method: a.method,
        status: a.status,
        headers: a.headers,
        body: a.body,
        file: a.file,
        abort: a.abort,
    };
    let out = run(None, &r)?;
    let summary = format!("{} routes", out.routes.len());
    Ok(Output::json(&out)?.with_summary(summary))
}

/// `oc_evidence_bundle` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct BundleArgs {
    /// Any of `dom`, `screenshot`, `network`, `console` (default all).
    #[schemars(length(min = 1, max = 4))]
    include: Option<Vec<String>>,
    tab_id: Option<String>,
}

/// Save the tab's DOM, a screenshot, captured network and console to a bundle dir;
/// returns its manifest (path, files, hashes).
#[ochre_sdk::tool(name = "oc_evidence_bundle", tier = 2, output_mode, scope = Browser)]
pub(crate) fn evidence_bundle(a: BundleArgs) -> Result<Output, ToolError> {
    if let Some(bad) = a
        .include
        .iter()
        .flatten()
        .find(|i| !matches!(i.as_str(), "dom" | "screenshot" | "network" | "console"))
    {
        return Err(ToolError::invalid_argument(
            "include",
            format!("{bad:?} is not dom, screenshot, network or console"),
        ));
    }
    let r = run(a.tab_id.as_deref(), &ops::EvidenceBundle { include: a.include })?;
    let summary = format!("bundle {} ({} files)", r.bundle_id, r.files.len());
    Ok(Output::json(&r)?.with_summary(summary))
}
