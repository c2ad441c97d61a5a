//! Without a tab: crawls, pauses, new tabs.

use super::*;

/// Load pages in parallel worker tabs: status, title, links, content, a
/// script's value.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisitBatch {
    /// The pages.
    pub urls: Vec<String>,
    /// How many at once.
    #[serde(default)]
    pub concurrency: Option<u32>,
    /// `markdown`, `text`, `structured`, `raw` or `none`.
    #[serde(default)]
    pub format: Option<String>,
    /// Cut each page's content at this many characters.
    #[serde(default)]
    pub max_chars: Option<u64>,
    /// Each page's time.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// A script whose value each page returns.
    #[serde(default)]
    pub script: Option<String>,
    /// `auto` (default: render a page only when its HTML needs it) or
    /// `always`.
    #[serde(default)]
    pub render: Option<String>,
}

/// What [`VisitBatch`] read: a page each, in the order asked.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Visited {
    /// The pages.
    pub results: Vec<PageVisited>,
}

/// One page [`VisitBatch`] read, or why it could not (`error`, `code`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PageVisited {
    /// The URL asked for.
    #[serde(default)]
    pub requested_url: String,
    /// The URL it ended at (after redirects), when it was loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Its HTTP status (0: not known).
    #[serde(default)]
    pub status: u16,
    /// Its title.
    #[serde(default)]
    pub title: String,
    /// The http(s) links on it, without fragments, each once (2 000 at most).
    #[serde(default)]
    pub links: Vec<String>,
    /// Its next page, as a "next" link names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// Its content in the format asked: a text (markdown, text, raw), or an
    /// outline (`structured`: headings, description, text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Json>,
    /// The content was cut at `max_chars`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
    /// It was loaded in a tab (its scripts ran), not only fetched.
    #[serde(default)]
    pub rendered: bool,
    /// The script's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Json>,
    /// Why the script failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_error: Option<String>,
    /// Why the page could not be read (`HTTP 404` for a status of 400 or
    /// more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The error's code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<crate::Code>,
}

impl PageVisited {
    /// A page that could not be read.
    pub fn failed(url: &str, error: impl Into<String>, code: crate::Code) -> Self {
        let requested_url = url.to_owned();
        Self { requested_url, error: Some(error.into()), code: Some(code), ..Self::default() }
    }

    /// Where it was read: the URL it ended at, else the one asked for.
    pub fn final_url(&self) -> &str {
        self.url.as_deref().unwrap_or(&self.requested_url)
    }

    /// Whether it was read (no error).
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }

    /// A status of 400 or more makes it a failed page.
    pub fn mark_http_error(&mut self) {
        if self.status >= 400 {
            self.error = Some(format!("HTTP {}", self.status));
            self.code = Some(crate::Code::HttpError);
        }
    }
}

/// Wait on the host for `ms` milliseconds (at most 60 000), holding no tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sleep {
    /// How long.
    pub ms: u64,
}

/// What [`Sleep`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slept {
    /// How long it slept (the asked time, capped).
    pub slept_ms: u64,
}

/// A tab in a browser context of its own, not made current; closing it
/// disposes of the context.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewIsolatedTab {
    /// The page to open (default `about:blank`).
    #[serde(default)]
    pub url: Option<String>,
    /// Put it on the least busy browser of a pool.
    #[serde(default)]
    pub spread: Option<bool>,
    /// Sign its context in with this saved login (instead of the session's).
    #[serde(default)]
    pub login: Option<String>,
}

/// A tab opened.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NewTab {
    /// Its id.
    pub id: String,
    /// Its URL.
    #[serde(default)]
    pub url: String,
    /// Its title.
    #[serde(default)]
    pub title: String,
}

/// Which browser ochre drives (`profile_status`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileInfo {
    /// `managed` (ochre started it) or `attach`.
    pub mode: String,
    /// Whether it runs now.
    pub running: bool,
    /// Whether its profile outlives ochre (`--user-data-dir`, or attached).
    pub persistent: bool,
    /// Its profile's folder (`None`: attached, or not started yet).
    pub user_data_dir: Option<String>,
    /// Managed: whether it runs headless.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headless: Option<bool>,
    /// Managed: the Chromium it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// Managed: how many times it was started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches: Option<u64>,
    /// Attached: the browsers of the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<Json>,
    /// What else to know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The profiles in the user-data-dir (`list_profiles`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profiles {
    /// The folder read (`None`: none to read: see `note`).
    pub user_data_dir: Option<String>,
    /// Whether it outlives ochre.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent: Option<bool>,
    /// Each profile's folder and name.
    pub profiles: Vec<ProfileDir>,
    /// Why there are none to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One profile: its folder under the user-data-dir and the name Chrome
/// shows (when `Local State` names it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProfileDir {
    /// Its folder (`Default`, `Profile 1`).
    pub dir: String,
    /// Its name.
    pub name: Option<String>,
}
