//! What an action changed: the watch, the settle and the page's own waits.

use super::*;

/// What an action changed, as `settle` tells it: what the page library's
/// watch saw (the event's way, the DOM, the element's state, the motion and
/// timers it set going) and the requests the host saw it send. Every key is
/// optional on the wire; what is absent there is absent here (`false`, empty).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Settled {
    /// The event reached the element watched (or one inside it).
    #[serde(default)]
    pub delivered: bool,
    /// Anything changed: the URL, the title, the element's state, the DOM, or
    /// (for an event that reached it) a request it sent.
    #[serde(default)]
    pub changed: bool,
    /// The press or the click reached the target (`false`: the pointer only
    /// passed over it before something else took it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressed: Option<bool>,
    /// DOM changes seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutations: Option<u64>,
    /// The document was replaced (its `token` says which the watch had).
    #[serde(default, skip_serializing_if = "is_false")]
    pub navigated: bool,
    /// The document's token (after a navigation: the watch's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The page's new URL (after a navigation, once it loaded, or why not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The page's new title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What received the event instead of the target (a ref line or a tag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received_by: Option<String>,
    /// A link was followed into a new window (`target=_blank`): the host
    /// sees that window open.
    #[serde(default, skip_serializing_if = "is_false")]
    pub new_window: bool,
    /// The press reached the target, then the page removed it before the
    /// release (a timer, not a handler): no click reached it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub removed_before_release: bool,
    /// The event went to the part of its widget that stands for the target:
    /// only an effect says it acted.
    #[serde(default, skip_serializing_if = "is_false")]
    pub via: bool,
    /// A drag: the press reached the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_delivered: Option<bool>,
    /// A drag: what received the press instead of the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_received_by: Option<String>,
    /// A drag: how the page reacted (`moved in the page`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effect: Vec<String>,
    /// The element's state where it changed: `connected`, `checked`,
    /// `value_length`, and each ARIA state (`expanded`, `pressed`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<serde_json::Map<String, Json>>,
    /// New text on the page (up to three).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    /// The element that has the focus now (a ref line), when it moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    /// What was still going at the bound (`bound_ms`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub still: Vec<String>,
    /// The page's bound of the wait, when it was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_ms: Option<u64>,
    /// Timers it set that are due later than the wait (ms; up to five).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub later_ms: Vec<u64>,
    /// Requests the page saw the action send (the host waits for as many).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<u64>,
    /// The watch kept for a second look (`keep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<u64>,
    /// Requests the action started, as the host saw them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// Those still pending at the bound of the wait (their URLs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
}

impl Settled {
    /// A navigation replaced the document the watch had (`token`): the event
    /// reached it, and everything changed.
    pub fn navigated(token: Option<String>) -> Self {
        Settled { navigated: true, changed: true, delivered: true, token, ..Settled::default() }
    }
}

/// Start watching what changes on the page (mutations, navigation, focus,
/// the element's state) for a later `settle`: around `ref_id`, or the
/// focused element when none is named.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// The element watched.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub ref_id: Option<RefId>,
}

/// A watch started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watching {
    /// The document's token: `settle` with it tells a navigation apart.
    pub token: String,
    /// The watch's number (`unwatch` ends that watch only).
    #[serde(default)]
    pub watch: Option<u64>,
}

/// What the action since `watch` changed, once the DOM and the requests it
/// started settle (bounded by `wait_ms`, default 3 000).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settle {
    /// The token `watch` gave (a navigation since is told apart).
    #[serde(default)]
    pub token: Option<String>,
    /// Without a change, how long to wait for one (default 150 ms).
    #[serde(default)]
    pub idle_ms: Option<u64>,
    /// After a change, how long without another counts as settled, besides
    /// the whole frame without one that always counts (default none; a drag
    /// asks for at least 250 ms).
    #[serde(default)]
    pub quiet_ms: Option<u64>,
    /// At most this long in the page (default 2 000 ms).
    #[serde(default)]
    pub max_ms: Option<u64>,
    /// At most this long for the requests the action started.
    #[serde(default)]
    pub wait_ms: Option<u64>,
    /// Keep watching afterwards (the answer's `watch` numbers the watch, for
    /// `unwatch`).
    #[serde(default)]
    pub keep: Option<bool>,
}

/// Stop watching (no `settle` follows, or a kept one needs no second look).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unwatch {
    /// Only the watch of this number (a kept `settle` gives it): a newer
    /// action's watch is left running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<u64>,
    /// The token of the watch's document (a cross-site frame's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl Settle {
    /// Settle the watch of `token`, with the defaults.
    pub fn after(token: &str) -> Self {
        Self { token: Some(token.to_owned()), ..Self::default() }
    }
}

/// Wait for a condition on the page (within the call's timeout).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wait {
    /// What it waits for.
    #[serde(rename = "type")]
    pub kind: WaitKind,
    /// The selector, function, URL pattern or milliseconds.
    #[serde(default)]
    pub value: Option<String>,
    /// `selector`: it must be visible too.
    #[serde(default)]
    pub visible: Option<bool>,
    /// `navigation`: the document the caller acted in (a later one counts).
    #[serde(default)]
    pub token: Option<String>,
}

named_enum! {
    /// What a [`Wait`] waits for.
    #[derive(Default)]
    pub enum WaitKind {
        /// An element matching the CSS selector `value` (visible too with `visible`).
        #[default]
        Selector = "selector",
        /// No element matching `value` (or none visible).
        SelectorHidden = "selector_hidden",
        /// The JavaScript function or expression `value` is true (awaited).
        Function = "function",
        /// A new document has loaded (or a download started).
        Navigation = "navigation",
        /// The page's URL matches the pattern `value`.
        UrlMatch = "url_match",
        /// `value` ms have passed.
        Timeout = "timeout",
    }
}

/// What happened, once a [`Wait`] is over.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Waited {
    /// It happened (a wait that does not end with it fails `TIMEOUT`).
    pub met: bool,
    /// After how long.
    #[serde(default)]
    pub elapsed_ms: u64,
    /// The page's URL then.
    #[serde(default)]
    pub url: String,
    /// `navigation`: a download started instead (the page stayed).
    #[serde(default, skip_serializing_if = "is_false")]
    pub download: bool,
}

/// The load event came.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Loaded {
    /// The page's URL.
    #[serde(default)]
    pub url: String,
}

/// Wait until the tab's network has been quiet for `quiet_ms` (default 100,
/// at most 10 000), within the call's timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkIdle {
    /// How long without a request in flight counts as quiet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<u64>,
}

/// Whether the network went quiet in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Idle {
    /// `false`: requests were still in flight when the time ran out.
    pub idle: bool,
}
