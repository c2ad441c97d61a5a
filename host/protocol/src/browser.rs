//! The browser as the host sees it: what it reports, as plain data (a tab, a
//! page event, a trusted input event), and what the host asks of it
//! ([`HostBrowser`]). `ochre-browser` implements it over Chromium; `ochre-host`
//! calls it whether or not it was built with a browser.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::ToolError;
use crate::page_ops::{self, PageOp};

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

    /// The tab an agent names (`None`: its current tab), read where the name
    /// comes in (an MCP argument, a plugin's host call): `TAB_NOT_FOUND` for a
    /// name that is no tab's.
    pub fn named(text: Option<&str>) -> Result<Option<Self>, ToolError> {
        text.map(Self::of).transpose()
    }

    /// The tab `text` names (`t3`): `TAB_NOT_FOUND` for a name that is no tab's.
    pub fn of(text: &str) -> Result<Self, ToolError> {
        Self::parse(text).ok_or_else(|| tab_not_found(text))
    }
}

/// `TAB_NOT_FOUND` for tab `id` (as the agent spelled it).
pub fn tab_not_found(id: &str) -> ToolError {
    let id: String = id.chars().take(24).collect();
    ToolError::tab_not_found(format!("no tab {id:?}: call tabs_context for the open tabs"))
        .with("tabId", id.as_str())
}

impl std::fmt::Display for TabId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t{}", self.0)
    }
}

/// An element's ref: `ax_12` on the wire, given out by the page library of one
/// document (a ref of an older document is stale). (Its default, `ax_0`, is
/// never given out.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

impl std::str::FromStr for RefId {
    type Err = String;

    /// `ax_12`; else what is wrong, for the agent.
    fn from_str(s: &str) -> Result<Self, String> {
        Self::parse(s).ok_or_else(|| {
            let s: String = s.chars().take(40).collect();
            format!("{s:?} is not a ref: refs look like ax_12 (from read_page or find)")
        })
    }
}

/// On the wire as it is spelled (`"ax_12"`).
impl serde::Serialize for RefId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A string spelled `ax_12` (a tool argument that takes a ref).
#[cfg(feature = "schema")]
impl schemars::JsonSchema for RefId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RefId".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "pattern": "^ax_\\d+$"})
    }
}

/// Read from its spelling (`"ax_12"`), parsed: anything else is refused with
/// what a ref looks like.
impl<'de> serde::Deserialize<'de> for RefId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
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

/// A dialog of `kind` (`alert`, `confirm`, `prompt`, `beforeunload`) with its
/// article: "an alert dialog", "a confirm dialog".
pub fn a_dialog(kind: &str) -> String {
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{article} {kind} dialog")
}

/// Whose words an answer's hints are in: the MCP tools' (`handle_dialog`,
/// `tabId`), or the command line's (`ochre dialog accept`, `--tab`), for the
/// calls of `ochre`'s own session daemon.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Hints {
    /// The MCP tools and their arguments.
    #[default]
    Tools,
    /// The `ochre` commands and their flags.
    Commands,
}

impl Hints {
    /// The line that says a dialog of `kind` is open on `tab` with `message`,
    /// and how to answer it.
    pub fn dialog_open(self, kind: &str, tab: &str, message: &str) -> String {
        let answer = match self {
            Hints::Tools => {
                let prompt = if kind == "prompt" { ", promptText: \"...\"" } else { "" };
                format!("Answer it with handle_dialog {{accept: true|false{prompt}}}")
            }
            Hints::Commands => {
                let text = if kind == "prompt" { " [TEXT]" } else { "" };
                format!(
                    "Answer it with `ochre --tab {tab} dialog accept{text}` or `ochre --tab {tab} dialog dismiss`"
                )
            }
        };
        format!(
            "{} is open on {tab}: {message:?}. {answer}; the tab does nothing else until then",
            a_dialog(kind)
        )
    }

    /// How to act on tab `tab`, which a page opened (it is not made current).
    pub fn act_on_tab(self, tab: &str) -> String {
        match self {
            Hints::Tools => format!("act on it with tabId {tab:?}"),
            Hints::Commands => format!("act on it with `ochre --tab {tab} ...`"),
        }
    }
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

/// A browser session's storage state: what a named login holds. Its `Debug`
/// names origins and cookies, never a value.
#[derive(Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StorageState {
    /// The cookies, as CDP's `Network.Cookie` objects (httpOnly ones too).
    pub cookies: Vec<Value>,
    /// `localStorage` and IndexedDB per origin.
    pub origins: Vec<OriginStorage>,
    /// IndexedDB records left out when it was read (they hold a Blob).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl std::fmt::Debug for StorageState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cookies: Vec<&str> = self.cookies.iter().filter_map(|c| c["name"].as_str()).collect();
        let origins: Vec<(&str, usize)> =
            self.origins.iter().map(|o| (o.origin.as_str(), o.local_storage.len())).collect();
        f.debug_struct("StorageState")
            .field("cookies", &cookies)
            .field("origins", &origins)
            .finish()
    }
}

/// One origin's `localStorage` and IndexedDB (its `Debug` shows no value).
#[derive(Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OriginStorage {
    /// `https://app.example.com`.
    pub origin: String,
    /// Its entries, in order.
    pub local_storage: Vec<(String, String)>,
    /// Its IndexedDB databases, each `{name, version, stores: [{name,
    /// keyPath, autoIncrement, indexes, records: [{key, value}]}]}` (values
    /// JSON cannot hold are tagged objects: see the browser's `idb.js`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexed_db: Vec<Value>,
}

impl OriginStorage {
    /// Its IndexedDB databases' names, with how many records each holds.
    pub fn databases(&self) -> Vec<(String, usize)> {
        self.indexed_db
            .iter()
            .map(|d| {
                let stores = d["stores"].as_array().map(Vec::as_slice).unwrap_or_default();
                let records = stores.iter().filter_map(|s| s["records"].as_array()).map(Vec::len);
                (d["name"].as_str().unwrap_or_default().to_owned(), records.sum())
            })
            .collect()
    }
}

impl std::fmt::Debug for OriginStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<&str> = self.local_storage.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("OriginStorage")
            .field("origin", &self.origin)
            .field("keys", &keys)
            .field("databases", &self.databases())
            .finish()
    }
}

/// Opens a saved login by name (see [`HostBrowser::set_login_source`]).
pub type LoginSource = Arc<dyn Fn(&str) -> Result<StorageState, ToolError> + Send + Sync>;

/// One frame of a tab's screen as a person watching it sees it (see
/// [`HostBrowser::watch_tab`]).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScreenFrame {
    /// The picture: JPEG, base64.
    pub jpeg: String,
    /// The viewport it shows, in CSS pixels (a point's x on the picture times
    /// `width / picture width` is its x on the page).
    pub width: f64,
    /// As `width`.
    pub height: f64,
}

/// Where [`HostBrowser::watch_tab`] sends frames.
pub trait FrameSink: Send {
    /// Take a frame; `false`: nobody watches any more (the screencast stops).
    fn frame(&mut self, frame: ScreenFrame) -> bool;
    /// Whether anybody still watches (asked while the page paints nothing).
    fn watching(&self) -> bool;
}

/// Receives what the browser tells the clients' operators (launches,
/// relaunches, endpoints lost and back), with its level.
pub type Notices = Arc<dyn Fn(crate::Level, String) + Send + Sync>;

/// Takes the host's known secrets out of a text the browser writes to a file
/// (an evidence bundle's parts, a HAR): the host's one redaction.
pub type Scrubber = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// What the host asks of its browser: the one list of what the host's guards
/// and the MCP server call, whatever drives the pages. `ochre-browser`'s
/// `BrowserManager` implements it over Chromium; a host built without the
/// `browser` feature has a `NoBrowser` that answers truly for a host with no
/// tabs. A tab is a [`TabId`] (`None`: the caller's current tab), read from
/// the agent's `"t3"` where it comes in ([`TabId::named`]); calls see only
/// their owner's tabs (see [`Self::with_owner`]).
pub trait HostBrowser: Send + Sync {
    /// Tell launches and relaunches through `notices` (the host sends them as
    /// MCP log messages of the logger `browser`).
    fn set_notices(&self, notices: Notices);

    /// Run `fut` on behalf of `owner`: the tabs it opens belong to that owner,
    /// in a browser context of the owner's own, and it sees and acts on no
    /// other tab (another owner's tab answers `TAB_NOT_FOUND`, as a closed one
    /// does). `None` runs on the shared tabs.
    fn with_owner<F: Future + Send>(
        &self,
        owner: Owner,
        fut: F,
    ) -> impl Future<Output = F::Output> + Send;

    /// Close every tab of `owner` and its browser contexts (its MCP session
    /// ended).
    fn release_owner(&self, owner: &str) -> impl Future<Output = ()> + Send;

    /// The caller's open tabs, in order.
    fn tabs(&self) -> impl Future<Output = Result<Vec<TabInfo>, ToolError>> + Send;

    /// The tab `tab` if a browser is running and has it; never launches a
    /// browser or opens a tab.
    fn peek_tab(&self, tab: Option<TabId>) -> impl Future<Output = Option<TabInfo>> + Send;

    /// Run page operation `op` (see [`crate::page_ops`] and the WIT
    /// `page-op`) in a tab, its arguments and result as JSON. An unknown
    /// operation or arguments its type does not take are refused before the
    /// browser is touched.
    fn page_op(
        &self,
        tab: Option<TabId>,
        op: &str,
        args: Value,
        timeout_ms: u32,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send;

    /// Run the typed page operation `op` and read its result as its type:
    /// `browser.run(None, &Find { query: "Send".into(), ..Default::default() }, 5_000)`.
    fn run<O: PageOp>(
        &self,
        tab: Option<TabId>,
        op: &O,
        timeout_ms: u32,
    ) -> impl Future<Output = Result<O::Output, ToolError>> + Send {
        let args = page_ops::to_args(op);
        async move {
            let args = args.map_err(ToolError::internal)?;
            let out = self.page_op(tab, O::NAME, args, timeout_ms).await?;
            page_ops::from_output::<O>(out).map_err(ToolError::internal)
        }
    }

    /// A small JPEG of the tab's viewport, for recordings.
    fn thumbnail(
        &self,
        tab: Option<TabId>,
    ) -> impl Future<Output = Result<Vec<u8>, ToolError>> + Send;

    /// The current position of the page-event log: events after it happened
    /// after this call.
    fn event_mark(&self) -> u64;

    /// Page events after `mark` on the caller's tabs.
    fn events_since(&self, mark: u64) -> Vec<PageEvent>;

    /// Page events the journal has not seen yet; each is returned once.
    fn take_unjournaled(&self) -> Vec<PageEvent>;

    /// A tool call ended (the journal's `label`: its tool and summary): each
    /// video being recorded of the caller's tabs marks it as a chapter from
    /// `started`.
    fn note_call(&self, _label: &str, _started: std::time::Instant) {}

    /// Whether the dialog reported by log entry `seq` is still open.
    fn dialog_still_open(&self, seq: u64) -> bool;

    /// Wait (at most `max`) until no page opened by a tab is still being given
    /// its tab id (so that a call's answer can name the tab its click opened).
    fn wait_adoptions(&self, max: Duration) -> impl Future<Output = ()> + Send;

    /// Wait (at most `max`) until the downloads that started after `mark`
    /// have finished.
    fn wait_downloads(&self, mark: u64, max: Duration) -> impl Future<Output = ()> + Send;

    /// Where downloads go, for messages.
    fn downloads_dir_shown(&self) -> String;

    /// Where evidence bundles are written.
    fn evidence_dir(&self) -> Option<PathBuf>;

    /// Whether the caller's browser is another one than at its last call (it
    /// died and was relaunched, or its endpoint went down): its tabs are gone.
    /// Each owner is told once.
    fn take_relaunch_note(&self) -> bool;

    /// The caller's storage state: the cookies of its browser context
    /// (httpOnly ones included) and the `localStorage` of the origins its
    /// tabs show.
    fn storage_state(&self) -> impl Future<Output = Result<StorageState, ToolError>> + Send;

    /// Sign the caller's session in with `state`: its browser context (made
    /// now if it has none) gets the cookies and each origin's `localStorage`,
    /// without a request reaching the origins; so do the contexts of its
    /// isolated tabs opened later. `None`: its later contexts start empty.
    fn use_login(
        &self,
        state: Option<StorageState>,
    ) -> impl Future<Output = Result<(), ToolError>> + Send;

    /// Every session starts signed in with `state` (`--login`): each browser
    /// context made from now on, and the shared tabs' context when the
    /// browser starts. A session's own `use_login` wins. `None`: none.
    fn use_login_everywhere(&self, state: Option<StorageState>) -> Result<(), ToolError>;

    /// Where the browser opens a saved login by name (the host's sealed
    /// store): what a page operation naming one (a workflow worker's
    /// `new_isolated_tab {login}`) signs its new context in with.
    fn set_login_source(&self, source: LoginSource);

    /// What every file the browser writes (an evidence bundle's parts, a
    /// HAR) is scrubbed with before it is written.
    fn set_scrubber(&self, scrub: Scrubber);

    /// Hold tab `tab` for a person: until [`Self::release_tab`], every
    /// call on it but the person's ([`Self::person_input`], [`Self::watch_tab`])
    /// is refused with `TAB_HELD`, saying `why`. The tab is named as the
    /// caller's own (another owner's answers `TAB_NOT_FOUND`).
    fn hold_tab(&self, tab: TabId, why: &str) -> Result<(), ToolError>;

    /// Let the agent's calls on tab `tab` through again.
    fn release_tab(&self, tab: TabId);

    /// Send tab `tab`'s screen to `sink` as it changes (a CDP screencast) until
    /// `sink` answers `false` or the tab closes. For a person's live view: it
    /// needs no owner, and a hold does not stop it.
    fn watch_tab(
        &self,
        tab: TabId,
        sink: Box<dyn FrameSink>,
    ) -> impl Future<Output = Result<(), ToolError>> + Send;

    /// A person's mouse, wheel and keys on tab `tab` (CSS pixels of its
    /// viewport), sent as they come; a hold does not stop them.
    fn person_input(
        &self,
        tab: TabId,
        events: &[page_ops::Gesture],
    ) -> impl Future<Output = Result<(), ToolError>> + Send;

    /// Run `fut` as the person who holds tab `tab`: its calls on that tab pass
    /// the hold (a demonstration's steps, run through the tool pipeline).
    fn as_person<F: Future + Send>(
        &self,
        tab: TabId,
        fut: F,
    ) -> impl Future<Output = F::Output> + Send;

    /// The text field `ref_id` of tab `tab` holds, as it is (a password
    /// too): what a person typed in a demonstration, typed again by its step.
    fn person_field_text(
        &self,
        tab: TabId,
        ref_id: RefId,
    ) -> impl Future<Output = Result<String, ToolError>> + Send;

    /// Close the browser (managed mode) or disconnect (attach mode).
    fn shutdown(&self) -> impl Future<Output = ()> + Send;
}

#[cfg(test)]
mod tests {
    use super::{Hints, OriginStorage, RefId, StorageState, TabId};

    #[test]
    fn hints_are_in_the_callers_words() {
        let tools = Hints::Tools.dialog_open("prompt", "t1", "Your name?");
        assert_eq!(
            tools,
            "a prompt dialog is open on t1: \"Your name?\". Answer it with handle_dialog \
             {accept: true|false, promptText: \"...\"}; the tab does nothing else until then"
        );
        let shell = Hints::Commands.dialog_open("alert", "t3", "Saved!");
        assert_eq!(
            shell,
            "an alert dialog is open on t3: \"Saved!\". Answer it with `ochre --tab t3 dialog \
             accept` or `ochre --tab t3 dialog dismiss`; the tab does nothing else until then"
        );
        assert!(Hints::Commands.dialog_open("prompt", "t1", "").contains("dialog accept [TEXT]`"));
        assert_eq!(Hints::Tools.act_on_tab("t2"), "act on it with tabId \"t2\"");
        assert_eq!(Hints::Commands.act_on_tab("t2"), "act on it with `ochre --tab t2 ...`");
    }

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

    #[test]
    fn a_ref_is_written_as_spelled_and_read_only_from_its_spelling() {
        let op: crate::page_ops::Focus =
            serde_json::from_str(r#"{"ref": "ax_12"}"#).expect("a ref");
        assert_eq!(op.ref_id, RefId(12));
        assert_eq!(
            serde_json::to_value(&op).expect("written"),
            serde_json::json!({"ref": "ax_12"})
        );
        for bad in [r#""ax_""#, r#""12""#, "12", r#""ax_1 ""#, "null"] {
            let args: serde_json::Value =
                serde_json::from_str(&format!(r#"{{"ref": {bad}}}"#)).expect("JSON");
            let e = crate::page_ops::parse::<crate::page_ops::Focus>(&args).expect_err(bad);
            assert_eq!(e.field, "ref", "{bad}");
        }
        let args = serde_json::json!({"ref": "button"});
        let e = crate::page_ops::parse::<crate::page_ops::Focus>(&args).expect_err("not a ref");
        assert!(
            e.message.contains(r#""button" is not a ref: refs look like ax_12"#),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_storage_states_debug_names_cookies_and_keys_never_values() {
        let state = StorageState {
            cookies: vec![serde_json::json!({"name": "sid", "value": "v4lue-one"})],
            origins: vec![OriginStorage {
                origin: "https://a.example".into(),
                local_storage: vec![("token".into(), "v4lue-two".into())],
                ..Default::default()
            }],
            ..Default::default()
        };
        let shown = format!("{state:?} {:?}", state.origins[0]);
        assert!(shown.contains("sid") && shown.contains("token") && shown.contains("a.example"));
        assert!(!shown.contains("v4lue"), "{shown}");
    }
}
