//! Acting on elements: points, actionability, the truthful action, fields, drags.

use super::*;
use std::collections::BTreeMap;

/// What [`Drag`] did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dragged {
    /// The ends as they were before the drag.
    pub ends: DragPoints,
    /// The press reached the source and the page reacted (or HTML5 events were
    /// sent, or the page navigated). `false`: see `refused`.
    pub done: bool,
    /// Why it is not done, in words (the press did not reach the source, or
    /// the page did not react), with `received_by`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// What received the events instead (when not done), or the drop (when
    /// the drop's events reached another element than the target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received_by: Option<String>,
    /// How the page reacted (`moved in the page`, `target changed`, ...).
    #[serde(default)]
    pub effect: Vec<String>,
    /// What it changed (as `settle` tells it).
    pub delta: Settled,
}

/// The viewport point to click an element at (it is scrolled into view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// The element.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// `plain` (its centre, and what covers it), `center`, or `sample` (the
    /// first of nine points that reaches it).
    #[serde(default)]
    pub how: Option<String>,
}

/// A point in the viewport, or why there is none.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ViewportPoint {
    /// `None`: no point reaches the element (see `reason`).
    #[serde(default)]
    pub x: Option<f64>,
    /// The point's y.
    #[serde(default)]
    pub y: Option<f64>,
    /// The point reaches the element (not another one over it).
    #[serde(default)]
    pub hits: Option<bool>,
    /// What covers it there.
    #[serde(default)]
    pub covered_by: Option<String>,
    /// Why there is no point.
    #[serde(default)]
    pub reason: Option<String>,
    /// The element's ref now ([`Relocate`]: it may have been found again).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub ref_id: Option<RefId>,
}

impl ViewportPoint {
    /// The point, or why there is none (no point, or what covers it).
    pub fn point(&self) -> Result<(f64, f64), String> {
        match (self.x, self.y) {
            (Some(x), Some(y)) if self.hits != Some(false) => Ok((x, y)),
            (Some(_), Some(_)) => Err(format!(
                "the element is covered by {}",
                self.covered_by.as_deref().unwrap_or("another element")
            )),
            _ => Err(self
                .reason
                .clone()
                .unwrap_or_else(|| "the element has no clickable point".into())),
        }
    }
}

/// Wait (at most `timeout_ms`, default 5 000) until an element can take an
/// event: attached, visible, enabled, not moving, not covered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Actionable {
    /// The element.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// How long to wait.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// `false`: a disabled element is acceptable.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Also describe the element (the result's `target`), as `describe` does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub describe: Option<bool>,
    /// Once it can take the event, start watching what the event changes (as
    /// `watch` does; the result's `token` is for `settle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<bool>,
}

/// Whether the element can take an event, and where.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Actionability {
    /// `None`: the time ran out (see `reason`).
    #[serde(default)]
    pub x: Option<f64>,
    /// The point's y.
    #[serde(default)]
    pub y: Option<f64>,
    /// What stood in the way last.
    #[serde(default)]
    pub reason: Option<String>,
    /// How long it waited.
    #[serde(default)]
    pub waited_ms: u64,
    /// What it waited for (at most five).
    #[serde(default)]
    pub waited: Vec<String>,
    /// The element (asked with `describe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Description>,
    /// The watch's token (asked with `watch`, and the element could take the event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The part of its widget the point is on, when the element itself is
    /// hidden or covered by the widget's own parts (`div.el-switch`, its
    /// label): the event counts only by its effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// The element a ref meant, found again by role and name if it was
/// re-rendered, with a point that reaches it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Relocate {
    /// The ref.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// Its role.
    pub role: String,
    /// Its accessible name.
    pub name: String,
}

/// The truthful action, in one call: the host waits (at most `timeout_ms`,
/// default 5 000) until the element can take the pointer, clicks (or
/// double-clicks, or hovers), and counts the click only when its press or the
/// click itself reached the element; something that took the click in between
/// is waited out again. A click that reached a custom element and changed
/// nothing is tried other ways (the element found again by role and name, a
/// click in script, Enter and Space). `press` focuses the element and sends a
/// key, counted when it reached the element. A navigation it started is
/// waited for.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Act {
    /// The element.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub ref_id: Option<RefId>,
    /// Or a description of it (the best `find` match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Or the element as a recording names it, found within the wait (and
    /// found again if the page replaces it while the action waits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// `click` (default), `double_click` or `hover`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<ActKind>,
    /// How long to wait until the element can take the event (at most 60 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// `press`: the key or chord (`Enter`, `Control+a`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `type`: the text, key by key (`\n` is Enter, `\t` Tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `type`: press Enter after the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit: Option<bool>,
    /// `type`: a pause after each key, in ms (at most 1 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u32>,
    /// `false`: the mouse only; a click that reached the element counts, change
    /// or not (for a click whose effect the caller checks itself, such as an
    /// option of a list, where a second way would undo the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_ways: Option<bool>,
}

impl Act {
    /// The element it names, as one [`Target`]: its ref, its description or
    /// its target (`None`: the keys go to whatever has the focus).
    pub fn element(&self) -> Option<Target> {
        match (self.ref_id, &self.query, &self.target) {
            (Some(r), ..) => Some(Target::of_ref(r)),
            (None, Some(q), _) => Some(Target::of_query(q.clone())),
            (None, None, t) => t.clone(),
        }
    }
}

named_enum! {
    /// What [`Act`] does.
    #[derive(Default)]
    pub enum ActKind {
        /// One click.
        #[default]
        Click = "click",
        /// Two clicks.
        DoubleClick = "double_click",
        /// The pointer moved over it.
        Hover = "hover",
        /// A key or chord (`key`), with the element focused first; without an
        /// element, to the focused one. Done when the keys reached it.
        Press = "press",
        /// Text (`text`) key by key into the element, focused first (refused
        /// with `ELEMENT_NOT_FOCUSABLE` when it takes no focus). Done when the keys
        /// reached it; the field's value before and after are in the answer.
        Type = "type",
    }
}

/// What [`Act`] did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Acted {
    /// The element, as it was before the action (`press` without one: none).
    #[serde(default)]
    pub target: Option<Description>,
    /// The event reached the element and (for a custom element) had an effect.
    /// `false`: every way was tried and none changed anything (see `tried`);
    /// `press`: the keys reached another element (`delta.received_by`).
    pub done: bool,
    /// What it changed (as `settle` tells it; after a navigation, the new `url`).
    pub delta: Settled,
    /// What was waited for before the element could take the event (empty
    /// when nothing was).
    #[serde(default)]
    pub waited: String,
    /// The way that worked, when the plain mouse click did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Strategy>,
    /// The ways tried before (or without) success.
    #[serde(default)]
    pub tried: Vec<Tried>,
    /// `type`: the field's value before the keys (none: not a field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_before: Option<String>,
    /// `type`: the field's value after them (not read after Enter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_after: Option<String>,
    /// With `target`: how the element was found (and, when a selector or a
    /// ref found it, who it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<TargetFound>,
}

/// A way an action tried and what came of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tried {
    /// The way.
    pub strategy: Strategy,
    /// What came of it: `no change`, `the click reached ...`, `skipped: ...`,
    /// `failed: ...`.
    pub outcome: String,
}

impl Tried {
    /// `strategy` and what came of it.
    pub fn new(strategy: Strategy, outcome: impl Into<String>) -> Self {
        Tried { strategy, outcome: outcome.into() }
    }
}

named_enum! {
    /// A way of clicking an element: the mouse as a person does, then the ways
    /// a custom element may listen instead.
    pub enum Strategy {
        /// The mouse, at the element's point.
        Mouse = "mouse",
        /// The element found again by role and name (it re-rendered), then the mouse.
        Ax = "ax",
        /// A click in the page's script (`element.click()`).
        JsClick = "js_click",
        /// The keyboard, as a way not taken (not focusable, out of time).
        Keyboard = "keyboard",
        /// Enter while the element has the focus.
        KeyboardEnter = "keyboard Enter",
        /// Space while the element has the focus.
        KeyboardSpace = "keyboard Space",
    }
}

/// Set a field's value as typing would, its events included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetValue {
    /// The field (or name it by `target`).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub ref_id: Option<RefId>,
    /// The value: text, a number, `true`/`false`, or a list of option names.
    pub value: Json,
    /// Or the field as a caller names it (a recording's target): the host
    /// finds it first, waiting while it is not there yet, in the same call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// With `target`: how long to wait for it (default 5 000, at most 60 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// What [`SetValue`] did: a field set and read back, or a custom widget
/// named for the caller to operate as a person does.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ValueSet {
    /// The field as a snapshot line (role, name, ref).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub line: String,
    /// A custom widget the value was not set in: the caller operates it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widget: Option<Widget>,
    /// A combobox one types into (an input, a text area, an editable).
    #[serde(default, skip_serializing_if = "is_false")]
    pub typing: bool,
    /// A toggle: the state asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub want: Option<bool>,
    /// A checkbox, radio button or toggle: its state now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    /// What the field holds now, read back (a secret's as shown: masked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The value asked, when the field holds another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<String>,
    /// A secret field does not hold the value asked.
    #[serde(default, skip_serializing_if = "is_false")]
    pub differs: bool,
    /// With `target`: how the field was found (and who it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<TargetFound>,
}

named_enum! {
    /// A custom widget [`SetValue`] leaves to its caller.
    pub enum Widget {
        /// A listbox pops up: its option is chosen by name.
        Combobox = "combobox",
        /// A checkbox or switch drawn by the page: clicked to the state asked.
        Toggle = "toggle",
        /// Moved by its keys to the value asked.
        Slider = "slider",
    }
}

/// Choose the option with a label of a select or listbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PickOption {
    /// The select or listbox (or combobox).
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// The option's label (exact, else its start, else a part of it).
    pub name: String,
}

/// The option [`PickOption`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Picked {
    /// Its ref (`None`: none or several matched).
    #[serde(rename = "ref", default)]
    pub ref_id: Option<RefId>,
    /// Its label.
    #[serde(default)]
    pub name: Option<String>,
    /// Its snapshot line.
    #[serde(default)]
    pub line: Option<String>,
    /// The labels of the options (the first 30).
    #[serde(default)]
    pub options: Vec<String>,
    /// The labels that matched when several did.
    #[serde(default)]
    pub ambiguous: Option<Vec<String>>,
}

/// Fill a form's fields by label, name or ref, and optionally submit it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fill {
    /// Values by label or name.
    #[serde(default)]
    pub fields: Option<BTreeMap<String, Json>>,
    /// Values by ref.
    #[serde(default)]
    pub refs: Option<BTreeMap<String, Json>>,
    /// Submit the form once filled.
    #[serde(default)]
    pub submit: Option<bool>,
}

/// What [`Fill`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Filled {
    /// Each field's snapshot line, `(asked "…")` after one that does not hold
    /// the value as given.
    #[serde(default)]
    pub filled: Vec<String>,
    /// The form was submitted.
    #[serde(default)]
    pub submitted: bool,
    /// The document's token (a `wait` for navigation starts from it).
    #[serde(default)]
    pub token: Option<String>,
}

/// The fields of a login form, each with the origin of its document: the
/// fields named by ref, else the page's own form with a password, username
/// or one-time-code field (else a frame's: `FIELD_NOT_FOUND` when none).
/// Keyed by `username`, `password` and `otp`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoginFields {
    /// The fields by ref: ref → what it is for.
    #[serde(default)]
    pub refs: Option<BTreeMap<String, LoginRole>>,
}

named_enum! {
    /// What a login form's field is for (in the order a credential types them).
    pub enum LoginRole {
        /// The username (or email).
        Username = "username",
        /// The password.
        Password = "password",
        /// A one-time code.
        Otp = "otp",
    }
}

/// One field [`LoginFields`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LoginField {
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// Its snapshot line.
    #[serde(default)]
    pub line: String,
    /// Its document's origin (`location.origin`: `null` for an opaque one).
    pub origin: String,
}

/// Scroll the page (by `direction` and `amount`, or `to` an end) or an element
/// into view.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scroll {
    /// `up`, `down` (default), `left` or `right`.
    #[serde(default)]
    pub direction: Option<String>,
    /// Pixels (default 80 % of the viewport).
    #[serde(default)]
    pub amount: Option<u32>,
    /// `top` or `bottom`.
    #[serde(default)]
    pub to: Option<String>,
    /// Scroll this element into view instead.
    #[serde(rename = "ref", default)]
    pub ref_id: Option<RefId>,
}

/// Where the page is scrolled to.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scrolled {
    /// Horizontal position.
    pub scroll_x: i64,
    /// Vertical position.
    pub scroll_y: i64,
    /// The page's height.
    pub scroll_height: i64,
    /// The viewport's height.
    pub viewport_height: i64,
    /// At the top.
    pub at_top: bool,
    /// At the bottom.
    pub at_bottom: bool,
}

/// The points of a drag's ends.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DragPoints {
    /// The watch on the target (for `settle`).
    #[serde(default)]
    pub token: Option<String>,
    /// The source is HTML5-draggable (`html5_drag` moves it).
    #[serde(default)]
    pub html5: bool,
    /// The source's point.
    pub source: ViewportPoint,
    /// The target's point.
    pub target: ViewportPoint,
    /// The target's size.
    #[serde(default)]
    pub target_box: Option<Json>,
    /// The source's snapshot line.
    #[serde(default)]
    pub source_line: String,
    /// The target's snapshot line.
    #[serde(default)]
    pub target_line: String,
}

/// Whether one of the host's own wait conditions holds now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// `selector` or `selector_hidden`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The selector.
    pub value: String,
    /// `selector`: it must be visible too.
    #[serde(default)]
    pub visible: Option<bool>,
    /// Wait this long (at most) for it to hold in a frame drawn, looking
    /// after each frame; none: look once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u32>,
}

/// A file input.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FileInputInfo {
    /// Its snapshot line.
    pub line: String,
    /// It takes several files.
    #[serde(default)]
    pub multiple: bool,
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
}

/// The files a file input holds.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Files {
    /// Their names.
    pub files: Vec<String>,
}

named_enum! {
    /// Which of the page's storages [`Storage`] reads or changes.
    #[derive(Default)]
    pub enum StorageKind {
        /// `localStorage`.
        #[default]
        Local = "local",
        /// `sessionStorage`.
        Session = "session",
    }
}

named_enum! {
    /// What [`Storage`] does.
    #[derive(Default)]
    pub enum StorageAction {
        /// One key's value (with `key`), or every key's.
        #[default]
        Get = "get",
        /// A key's value set.
        Set = "set",
        /// A key removed.
        Remove = "remove",
        /// Every key removed.
        Clear = "clear",
        /// The keys.
        Keys = "keys",
    }
}

/// The page's `localStorage` or `sessionStorage`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    /// `local` or `session`.
    #[serde(rename = "type")]
    pub kind: StorageKind,
    /// `get` (one key, or all), `set`, `remove`, `clear` or `keys`.
    pub action: StorageAction,
    /// The key.
    #[serde(default)]
    pub key: Option<String>,
    /// The value to set.
    #[serde(default)]
    pub value: Option<String>,
}

/// What [`Storage`] did (as the page library answers it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Stored {
    /// `get` with a key: its value (`None`: not set).
    Item {
        /// The key.
        key: String,
        /// Its value.
        value: Option<String>,
    },
    /// `get` without one: every key's value.
    Items {
        /// Key to value.
        items: BTreeMap<String, String>,
    },
    /// `set`: the key set.
    Set {
        /// The key.
        set: String,
    },
    /// `remove`: whether the key was there.
    Removed {
        /// It was.
        removed: bool,
    },
    /// `clear`: how many keys there were.
    Cleared {
        /// So many.
        cleared: u64,
    },
    /// `keys`: the keys, in the storage's order.
    Keys {
        /// The keys.
        keys: Vec<String>,
    },
}
