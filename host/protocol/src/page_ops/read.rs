//! Reading the page: snapshots, finding elements, their values, static pages.

use super::*;
use std::collections::BTreeMap;

/// The page (or one element's subtree) as roles and names with refs, or as
/// text, Markdown or HTML.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// `ax` (default), `text`, `markdown` or `dom`.
    #[serde(default)]
    pub mode: Option<String>,
    /// Only this element's subtree.
    #[serde(rename = "ref", default)]
    pub ref_id: Option<RefId>,
    /// `interactive`: only what can be acted on.
    #[serde(default)]
    pub filter: Option<String>,
    /// How deep to go.
    #[serde(default)]
    pub depth: Option<u32>,
    /// Cut the text at this many characters.
    #[serde(default)]
    pub max_chars: Option<u64>,
}

/// A snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Snapshotted {
    /// The page as the mode shows it.
    pub text: String,
    /// Cut at `max_chars`.
    #[serde(default)]
    pub truncated: bool,
    /// Its length before the cut.
    #[serde(default)]
    pub total: Option<u64>,
    /// The page's URL.
    #[serde(default)]
    pub url: String,
    /// The page's title.
    #[serde(default)]
    pub title: String,
}

/// Elements matching a description in words, best first, with refs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Find {
    /// What to look for (`"the Send button"`).
    pub query: String,
    /// At most this many (default and cap 20).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Give each match's score too.
    #[serde(default)]
    pub scores: Option<bool>,
}

/// What [`Find`] found.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Found {
    /// Each match as a snapshot line (role, name, ref).
    pub matches: Vec<String>,
    /// Each match's ref, in the same order (`ax_12`).
    #[serde(default)]
    pub refs: Vec<RefId>,
    /// How many matched in all.
    #[serde(default)]
    pub total: u64,
    /// Their scores (with `scores`).
    #[serde(default)]
    pub scores: Option<Vec<f64>>,
}

/// Elements matching a CSS selector or an XPath, with refs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Query {
    /// A CSS selector (shadow roots and same-site frames searched too).
    #[serde(default)]
    pub selector: Option<String>,
    /// Or an XPath.
    #[serde(default)]
    pub xpath: Option<String>,
    /// At most this many (default 20, cap 200).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// What [`Query`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Queried {
    /// The elements.
    pub matches: Vec<QueryMatch>,
    /// More matched than `limit`.
    #[serde(default)]
    pub more: bool,
}

/// One element [`Query`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueryMatch {
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// Its tag name.
    pub tag: String,
    /// Its text (cut).
    #[serde(default)]
    pub text: String,
    /// Up to eight of its attributes (values cut).
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
    /// Whether it is visible.
    #[serde(default)]
    pub visible: bool,
}

/// The ref of the element that best matches a description
/// (`ELEMENT_NOT_FOUND` when nothing does).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveQuery {
    /// What to look for, in words (`"the Send button"`).
    pub query: String,
}

/// A ref.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolved {
    /// The best match's ref.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
}

/// Describe one element: a ref, or a [`Target`] found (and waited for)
/// first, in the same call.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Describe {
    /// The element (or name it by `target`).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub ref_id: Option<RefId>,
    /// Or the element as a caller names it (role and name, a selector, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// With `target`: how long to wait for it (default 5 000, at most 60 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl Describe {
    /// The element of a ref.
    pub fn of_ref(ref_id: RefId) -> Self {
        Self { ref_id: Some(ref_id), ..Self::default() }
    }
}

/// An element as [`Describe`] reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Description {
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// Its ARIA role (or tag name).
    pub role: String,
    /// Its accessible name.
    pub name: String,
    /// Its line as a snapshot shows it (role, name, ref, state).
    pub line: String,
    /// Its tag name.
    pub tag: String,
    /// Whether it can take the keyboard focus.
    pub focusable: bool,
    /// A native control (link, button, input, select, textarea, summary, label, option).
    pub native: bool,
    /// Whether a click listener of its own was seen.
    pub listens: bool,
    /// Named by a target: how it was found (and who it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<TargetFound>,
}

impl Description {
    /// The element as `role "name" ax_N` (`role ax_N` without a name), without
    /// the state it had before an action.
    pub fn ident(&self) -> String {
        if self.name.is_empty() {
            format!("{} {}", self.role, self.ref_id)
        } else {
            format!("{} {} {}", self.role, serde_json::json!(self.name), self.ref_id)
        }
    }
}

/// A snapshot line without the element's current value (` ="..."`): what a
/// field holds may be secret, and one-line answers go to the journal.
pub fn without_value(line: &str) -> &str {
    line.find(" =\"").map_or(line, |i| &line[..i])
}

/// Read fetched HTML without rendering it (no script runs, nothing loads).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractStatic {
    /// The HTML.
    #[serde(default)]
    pub html: Option<String>,
    /// The URL it came from (links are resolved against it).
    #[serde(default)]
    pub url: Option<String>,
    /// `markdown` or `text` for its content; otherwise none.
    #[serde(default)]
    pub mode: Option<String>,
    /// Cut the content at this many characters (default 20 000).
    #[serde(default)]
    pub max_chars: Option<u64>,
}

/// What [`ExtractStatic`] read.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StaticPage {
    /// The title.
    #[serde(default)]
    pub title: String,
    /// Its http(s) links (at most 2 000, without fragments).
    #[serde(default)]
    pub links: Vec<String>,
    /// Its `rel=next` link.
    #[serde(default)]
    pub next: Option<String>,
    /// It runs scripts and has little text: render it to read it.
    #[serde(default)]
    pub needs_render: bool,
    /// The content in the mode asked.
    #[serde(default)]
    pub content: Option<String>,
    /// The content was cut.
    #[serde(default)]
    pub truncated: bool,
}

/// Structured data read from the page by a JSON Schema (JSON-LD, microdata,
/// OpenGraph and meta tags, then CSS heuristics).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Extract {
    /// The JSON Schema: an object with `properties`, or an array of them.
    pub schema: Json,
    /// Only inside this element.
    #[serde(rename = "ref", default)]
    pub ref_id: Option<RefId>,
    /// Or inside the element of this selector.
    #[serde(default)]
    pub selector: Option<String>,
    /// For an array: the CSS selector of one item.
    #[serde(default)]
    pub item_selector: Option<String>,
}

/// The value a form field shows (a select's chosen label, a checkbox's state);
/// with `name`, where it shows that name (in itself or beside it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shown {
    /// The field.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// A name to look for in or beside it.
    #[serde(default)]
    pub name: Option<String>,
}

impl Shown {
    /// What the field of a ref shows.
    pub fn of(ref_id: RefId) -> Self {
        Self { ref_id, name: None }
    }
}

/// What a field shows.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShownValue {
    /// Its value or text.
    #[serde(default)]
    pub value: String,
    /// Its `aria-valuenow`.
    #[serde(default)]
    pub now: Option<String>,
    /// Its `aria-checked`.
    #[serde(default)]
    pub checked: Option<String>,
    /// Its `aria-expanded`.
    #[serde(default)]
    pub expanded: Option<String>,
    /// Its snapshot line.
    #[serde(default)]
    pub line: String,
    /// The text beside it that holds `name` (a multiple select's chips).
    #[serde(default)]
    pub beside: Option<String>,
}

/// Whether the focus is now on the element (or inside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Focused {
    /// `false`: it does not take the focus.
    pub focused: bool,
}

/// A field's value: `None` for a password (never read) or what is no field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldValue {
    /// The value.
    pub value: Option<String>,
    /// A password field.
    #[serde(default)]
    pub secret: bool,
}

/// Which of the fields a call is about to type into hold secrets (passwords,
/// one-time codes): by label or name as `fill` takes them, or by ref.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldSecrets {
    /// Fields by label or name.
    #[serde(default)]
    pub keys: Option<Vec<String>>,
    /// Fields by ref.
    #[serde(default)]
    pub refs: Option<Vec<String>>,
}

/// One field [`FieldSecrets`] found (keyed by the key or ref asked).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FieldSecret {
    /// Its accessible name.
    #[serde(default)]
    pub name: String,
    /// A password or a one-time code.
    #[serde(default)]
    pub secret: bool,
    /// A one-time code.
    #[serde(default)]
    pub otp: bool,
}

/// The page's URL and readiness.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Pong {
    /// The URL.
    pub url: String,
    /// `document.readyState`.
    pub ready: String,
}

/// Evidence that the page is a login or CAPTCHA wall.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WallSeen {
    /// `a login form` (a visible password field) or `a CAPTCHA` (a visible
    /// CAPTCHA widget), on a page without a visible sign-out control; else none.
    #[serde(default)]
    pub wall: Option<String>,
    /// The HTTP status the document came with (none for a document that
    /// came with no response: an error page, a `data:` or `about:` one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}
