//! The tab: dialogs, console, cookies, network capture and conditions, emulation.

use super::*;

/// The dialog open in a tab.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OpenDialog {
    /// `None`: no dialog is open; else its `type`, `message`, `tabId` and
    /// (a prompt) `defaultPrompt`.
    #[serde(default)]
    pub dialog: Option<Json>,
}

/// Answer the open JavaScript dialog.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandleDialog {
    /// Accept it (default) or dismiss it.
    #[serde(default)]
    pub accept: Option<bool>,
    /// The text to answer a prompt with.
    #[serde(rename = "promptText", default)]
    pub prompt_text: Option<String>,
}

/// The dialog [`HandleDialog`] answered.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DialogHandled {
    /// Its tab.
    #[serde(rename = "tabId")]
    pub tab_id: String,
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What it said.
    pub message: String,
    /// The page that opened it.
    pub url: String,
    /// A prompt's default text.
    #[serde(rename = "defaultPrompt", default, skip_serializing_if = "Option::is_none")]
    pub default_prompt: Option<String>,
    /// Accepted (else dismissed).
    pub accepted: bool,
    /// The text a prompt was accepted with.
    #[serde(rename = "promptText", default, skip_serializing_if = "Option::is_none")]
    pub prompt_text: Option<String>,
}

/// The tab's console messages and uncaught exceptions.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Console {
    /// Clear them after reading.
    #[serde(default)]
    pub clear: Option<bool>,
    /// Only this level (`error` includes exceptions).
    #[serde(default)]
    pub level: Option<String>,
    /// The last this many (default 100).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// The console messages read.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ConsoleMessages {
    /// The last ones asked for, oldest first: each `level`, `text`, `ts`
    /// (and `url`, `line` when the page said where).
    pub messages: Vec<Json>,
    /// How many the tab holds (before a `clear`).
    #[serde(default)]
    pub total: usize,
    /// How many older ones were dropped to keep the tab's log bounded.
    #[serde(default)]
    pub dropped: u64,
}

/// The cookies of the page's site.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cookies {
    /// `get`, `set`, `delete` or `clear`.
    pub action: String,
    /// The cookie's name.
    #[serde(default)]
    pub name: Option<String>,
    /// Its value (`set`).
    #[serde(default)]
    pub value: Option<String>,
    /// Its domain (default: the page's host).
    #[serde(default)]
    pub domain: Option<String>,
    /// Its path.
    #[serde(default)]
    pub path: Option<String>,
    /// HTTPS only.
    #[serde(default)]
    pub secure: Option<bool>,
    /// Hidden from scripts.
    #[serde(rename = "httpOnly", default)]
    pub http_only: Option<bool>,
    /// `Strict`, `Lax` or `None`.
    #[serde(rename = "sameSite", default)]
    pub same_site: Option<String>,
    /// When it expires (seconds since the Unix epoch).
    #[serde(default)]
    pub expires: Option<f64>,
}

/// What `cookies` did: the cookies read (`get`; values only where the
/// cookie is not a secret: see the host), the one set, or how many were
/// deleted.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CookiesDone {
    /// `get`: the cookies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cookies: Option<Vec<Json>>,
    /// `set`: its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<String>,
    /// `delete`, `clear`: how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted: Option<usize>,
}

/// The tab's network requests.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkCapture {
    /// `start`, `stop`, `get` (default), `clear` or `har` (what it holds,
    /// written as a HAR file).
    #[serde(default)]
    pub action: Option<String>,
    /// `get`: read the bodies of text responses too. `har`: leave the
    /// bodies out (`false`).
    #[serde(default)]
    pub include_bodies: Option<bool>,
    /// The last this many (default 200).
    #[serde(default)]
    pub limit: Option<u32>,
    /// `tab` (default): the tab; `session`: every tab of the caller's
    /// session, the open ones and those it opens later (popups included),
    /// and the requests of those that closed meanwhile; one HAR for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// What `network_capture` did, or the requests it holds (`get`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NetworkCaptured {
    /// Whether it is recording the tab's requests now.
    pub capturing: bool,
    /// `get`: how many it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    /// `get`: how many older ones were let go to keep it bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u64>,
    /// `clear`: how many it let go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleared: Option<usize>,
    /// `get`: the requests (the last `limit`, oldest first); `stop`: how
    /// many it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<CapturedRequests>,
    /// `har`: the file written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub har: Option<HarWritten>,
    /// `scope: session`: the session's open tabs the call went to (each
    /// request of `get` says its tab as `tabId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tabs: Option<Vec<String>>,
    /// `scope: session`: how many of its tabs closed with requests kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_tabs: Option<usize>,
}

/// A HAR file `network_capture` wrote.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HarWritten {
    /// Where.
    pub path: String,
    /// Its entries (a redirect's each hop, a websocket with its messages).
    pub entries: usize,
    /// How many hold their response's body.
    pub bodies: usize,
    /// How many distinct secret values were masked (cookies, credentials,
    /// fields named for a secret), besides the host's known secrets.
    pub masked: usize,
    /// Its size in bytes.
    pub bytes: usize,
}

/// A performance trace of the tab (the timeline Chrome DevTools records).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerformanceTrace {
    /// `start`, `stop` (write it as a file in the evidence dir) or `status`
    /// (default).
    #[serde(default)]
    pub action: Option<String>,
    /// `start`: the screen too, a frame at a time (as DevTools' filmstrip).
    #[serde(default)]
    pub screenshots: Option<bool>,
    /// `start`: stop by itself after this long (ms; default 30,000, at most
    /// 300,000); `stop` then answers the trace it took.
    #[serde(default)]
    pub max_ms: Option<u32>,
}

/// What `performance_trace` did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TraceTaken {
    /// Whether a trace of the tab is being recorded now.
    pub tracing: bool,
    /// `stop` (or `status` after one ended by itself): the trace written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceWritten>,
}

/// A trace file `performance_trace` wrote, and what it shows.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TraceWritten {
    /// Where (Chrome's trace JSON: DevTools' Performance panel and Perfetto
    /// open it).
    pub path: String,
    /// Its size.
    pub bytes: usize,
    /// How many events it holds.
    pub events: usize,
    /// How long it ran (ms).
    pub duration_ms: u64,
    /// Why it ended when not by `stop`: its time bound, or its buffer full
    /// (what came after is not in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<String>,
    /// The page's tasks of 50 ms or more (the longest first, ten at most).
    pub long_tasks: Vec<LongTask>,
    /// How many layout shifts a person did not cause.
    pub layout_shifts: u32,
    /// Their cumulative layout shift (the worst window, as Core Web Vitals
    /// has it).
    pub cls: f64,
    /// The largest contentful paint after the navigation traced (ms after
    /// it began), when a navigation was traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lcp_ms: Option<f64>,
}

/// One long task of a trace.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LongTask {
    /// When it began (ms after the trace began).
    pub at_ms: f64,
    /// How long it ran (ms).
    pub duration_ms: f64,
    /// What ran in it, as far as the trace says (a function and where it
    /// is, an event handled, a timer, a script evaluated).
    pub what: String,
}

/// A video of the tab: the screen as it is painted.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageVideo {
    /// `start`, `stop` (end it: the file is whole) or `status` (default).
    #[serde(default)]
    pub action: Option<String>,
    /// `start`: stop by itself after this long (ms; default 60,000, at most
    /// 600,000); `stop` then answers the video it wrote.
    #[serde(default)]
    pub max_ms: Option<u32>,
}

/// What `page_video` did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct VideoTaken {
    /// Whether a video of the tab is being recorded now.
    pub recording: bool,
    /// The file being written, while it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `stop` (or `status` after one): the video written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<VideoWritten>,
}

/// A video file `page_video` wrote.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct VideoWritten {
    /// Where (Matroska, Motion JPEG, with chapters: VLC, mpv, ffmpeg and PyAV
    /// play it).
    pub path: String,
    /// Its size.
    pub bytes: u64,
    /// The pictures it holds (one each time the page repainted, 25 a second
    /// at most; the last repeated at the end).
    pub frames: u64,
    /// Its chapters: one for each tool call that ended while it recorded
    /// (its tool and summary, from when the call began).
    #[serde(default)]
    pub chapters: u64,
    /// How long it runs (ms).
    pub duration_ms: u64,
    /// Its first picture's size (pixels).
    pub width: u32,
    /// (See `width`.)
    pub height: u32,
    /// When it began (RFC 3339): its time 0.
    pub started_at: String,
    /// Why it ended when not by `stop`: its time or size bound, or the tab's
    /// end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<String>,
    /// Its WebM copy (VP8, a browser plays it), ochre's pointer drawn on it,
    /// when FFmpeg is installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webm: Option<String>,
    /// Why there is no WebM copy (no FFmpeg, or how it failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webm_skipped: Option<String>,
}

/// The requests of [`NetworkCaptured`]: listed (`get`) or counted (`stop`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CapturedRequests {
    /// How many.
    Count(usize),
    /// Each: `url`, `method`, `type`, `status`, `mimeType`, timings, sizes,
    /// a failure; with `include_bodies`, `body` (or why it was left out).
    List(Vec<Json>),
}

/// Emulate a network (`offline`, `slow-3g`, …) or a slower CPU, or stop.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkConditions {
    /// The network preset (`none` stops emulating).
    #[serde(default)]
    pub preset: Option<String>,
    /// How many times slower the CPU runs (1 stops).
    #[serde(default)]
    pub cpu_slowdown: Option<f64>,
}

/// What `network_conditions` set: the preset's numbers (none for `none`)
/// and the CPU's slowdown, when given.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkApplied {
    /// The preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Whether it is offline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline: Option<bool>,
    /// Its added latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// Its download speed, bytes a second (-1: not limited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download_bps: Option<f64>,
    /// Its upload speed, bytes a second (-1: not limited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_bps: Option<f64>,
    /// How many times slower the CPU runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_slowdown: Option<f64>,
}

/// Emulate a device, a place, preferences and a slower machine on a tab or on
/// every tab of the caller's session. Each field given is set; the others stay
/// as they were (`reset` first goes back to the browser's own for all).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Emulate {
    /// `tab` (default): the tab; `session`: every tab of the caller's session,
    /// the open ones and those opened later (popups included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Go back to the browser's own for everything first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset: Option<bool>,
    /// A named device ([`DEVICES`]): its viewport, scale, touch and user agent
    /// (the fields given beside it win).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The viewport's width in CSS pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// The viewport's height in CSS pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// Device pixels per CSS pixel (`devicePixelRatio`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// A phone or tablet: a mobile viewport and touch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mobile: Option<bool>,
    /// The user agent (`navigator.userAgent` and the header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// The locale (`navigator.language`, `Intl`, `Accept-Language`), e.g. `de-DE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// The time zone (IANA), e.g. `Asia/Tokyo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// Where the device is (and the page may ask: geolocation is granted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Geolocation>,
    /// `prefers-color-scheme`: `light`, `dark` or `no-preference`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color_scheme: Option<String>,
    /// `prefers-reduced-motion`: `reduce` or `no-preference`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced_motion: Option<String>,
    /// A network preset: `offline`, `slow-3g`, `fast-3g`, `4g` or
    /// `no-throttling`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// How many times slower the CPU runs (1 to 20; 1 is full speed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_slowdown: Option<f64>,
}

/// A position on Earth.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geolocation {
    /// Degrees, -90 to 90.
    pub latitude: f64,
    /// Degrees, -180 to 180.
    pub longitude: f64,
    /// Metres (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f64>,
}

/// What `emulate` did: where, and what is emulated there now.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Emulated {
    /// `tab` or `session`.
    pub scope: String,
    /// The open tabs it was applied to.
    pub tabs: Vec<String>,
    /// Everything emulated now (the tab's; with `session`, what every tab of
    /// the session gets): only the fields set.
    pub emulating: Emulate,
}

/// A named device for `emulate`'s `device`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Device {
    /// Its name, as `device` takes it.
    pub name: &'static str,
    /// Viewport width and height, CSS pixels.
    pub width: u32,
    /// Viewport height.
    pub height: u32,
    /// Device pixels per CSS pixel.
    pub scale: f64,
    /// A phone or tablet (touch, mobile viewport).
    pub mobile: bool,
    /// Its browser's user agent (`None`: the browser's own).
    pub user_agent: Option<&'static str>,
}

const IOS_UA: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 \
                      (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const IPAD_UA: &str = "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 \
                       (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const ANDROID_UA: &str = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 \
                          (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36";

/// The devices `emulate` knows by name.
pub const DEVICES: &[Device] = &[
    Device {
        name: "iphone-15",
        width: 393,
        height: 852,
        scale: 3.0,
        mobile: true,
        user_agent: Some(IOS_UA),
    },
    Device {
        name: "iphone-se",
        width: 375,
        height: 667,
        scale: 2.0,
        mobile: true,
        user_agent: Some(IOS_UA),
    },
    Device {
        name: "ipad-mini",
        width: 744,
        height: 1133,
        scale: 2.0,
        mobile: true,
        user_agent: Some(IPAD_UA),
    },
    Device {
        name: "pixel-8",
        width: 412,
        height: 915,
        scale: 2.625,
        mobile: true,
        user_agent: Some(ANDROID_UA),
    },
    Device {
        name: "laptop",
        width: 1366,
        height: 768,
        scale: 1.0,
        mobile: false,
        user_agent: None,
    },
    Device {
        name: "laptop-hidpi",
        width: 1440,
        height: 900,
        scale: 2.0,
        mobile: false,
        user_agent: None,
    },
    Device {
        name: "desktop",
        width: 1920,
        height: 1080,
        scale: 1.0,
        mobile: false,
        user_agent: None,
    },
];

/// The device named `name` (case and spaces aside: `iPhone 15` is `iphone-15`).
pub fn device(name: &str) -> Option<&'static Device> {
    let key = name.trim().to_ascii_lowercase().replace([' ', '_'], "-");
    DEVICES.iter().find(|d| d.name == key)
}

/// Write the page's evidence to a bundle and return its manifest.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceBundle {
    /// Any of `dom`, `screenshot`, `network`, `console` (default all).
    #[serde(default)]
    pub include: Option<Vec<String>>,
}

/// An evidence bundle's manifest (`manifest.json`, written last).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BundleManifest {
    /// Its id (its folder's name).
    pub bundle_id: String,
    /// Its folder.
    pub path: String,
    /// The tab it was taken of.
    #[serde(rename = "tabId")]
    pub tab_id: String,
    /// The page's URL then.
    pub url: String,
    /// Its title then.
    pub title: String,
    /// When (RFC 3339, ms).
    pub created_at: String,
    /// Its files, in the order written.
    pub files: Vec<BundleFile>,
}

/// One file of an evidence bundle.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BundleFile {
    /// Its name (`dom.html`, `screenshot.png`, `network.json`, `console.json`).
    pub name: String,
    /// Its size.
    pub bytes: usize,
    /// Its SHA-256, lowercase hex.
    pub sha256: String,
}
