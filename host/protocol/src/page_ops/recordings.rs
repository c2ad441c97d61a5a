//! Recordings: who an element is, and the one `Target` every way of naming
//! an element comes to.

use super::*;

/// Who an element is.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Identity {
    /// Its role.
    pub role: String,
    /// Its accessible name.
    pub name: String,
    /// Its rank among elements of that role and name.
    #[serde(default)]
    pub nth: u64,
    /// Its tag name.
    #[serde(default)]
    pub tag: String,
}

/// A fresh ref for the element of a role, name and rank (`ELEMENT_NOT_FOUND`
/// when there is none now).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locate {
    /// Its role.
    pub role: String,
    /// Its accessible name.
    pub name: String,
    /// Its rank among elements of that role and name (default 0).
    #[serde(default)]
    pub nth: Option<u64>,
}

/// An element as a caller names it: by ref, by role and accessible name
/// (the `nth` of its namesakes), by CSS selector, XPath or its own text, or by
/// a description (the best `find` match). Tried in that order: the first way
/// given that finds it names it. A recording keeps each element it acted on
/// this way; an imported one keeps the selectors its tool had.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// A ref from a snapshot (`ax_12`).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub ref_id: Option<RefId>,
    /// Its role (with `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Its accessible name (with `role`; alone, the best match of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its rank among the elements of that role and name (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nth: Option<u64>,
    /// A CSS selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// An XPath.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
    /// Its own text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A description (`"the Send button"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

impl Target {
    /// The element of a ref, as given.
    pub fn of_ref(ref_id: RefId) -> Self {
        Self { ref_id: Some(ref_id), ..Self::default() }
    }

    /// The best match of a description.
    pub fn of_query(query: impl Into<String>) -> Self {
        Self { query: Some(query.into()), ..Self::default() }
    }

    /// Its ref when it names the element by that only (a ref is the
    /// caller's: used as given, never looked for).
    pub fn ref_only(&self) -> Option<RefId> {
        self.ref_id.filter(|r| *self == Self::of_ref(*r))
    }

    /// Whether it names no element.
    pub fn is_empty(&self) -> bool {
        self.ref_id.is_none()
            && [&self.name, &self.selector, &self.xpath, &self.text, &self.query]
                .iter()
                .all(|f| f.is_none())
    }

    /// As a message names it: `button "Save"`, else the first way given
    /// (`selector "#save"`).
    pub fn shown(&self) -> String {
        if let (Some(role), Some(name)) = (&self.role, &self.name) {
            return format!("{role} {name:?}");
        }
        if let Some(r) = self.ref_id {
            return format!("ref {:?}", r.to_string());
        }
        let ways = [
            ("selector", &self.selector),
            ("xpath", &self.xpath),
            ("text", &self.text),
            ("name", &self.name),
            ("query", &self.query),
        ];
        ways.iter()
            .find_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v:?}")))
            .unwrap_or_else(|| "no element".to_owned())
    }
}

/// An operation on one element that a caller names by `ref` or by a
/// [`Target`]: the host finds the target (waiting for it), then runs the
/// operation on its ref and says how it was found.
pub trait OnElement: PageOp {
    /// It names its element by a target, or by nothing (then it is refused).
    fn needs_finding(&self) -> bool;
    /// Its target and how long to wait for it, taken out (`None`: no target).
    fn take_target(&mut self) -> Option<(Target, Option<u64>)>;
    /// The same operation on the element of `r`.
    #[must_use]
    fn on_ref(self, r: RefId) -> Self;
    /// Its answer, told how the element was found.
    fn found(out: &mut Self::Output, found: TargetFound);
}

macro_rules! on_element {
    ($($op:ident => $out:ident),*) => {$(
        impl OnElement for $op {
            fn needs_finding(&self) -> bool {
                self.target.is_some() || self.ref_id.is_none()
            }
            fn take_target(&mut self) -> Option<(Target, Option<u64>)> {
                Some((self.target.take()?, self.timeout_ms.take()))
            }
            fn on_ref(self, r: RefId) -> Self {
                Self { ref_id: Some(r), ..self }
            }
            fn found(out: &mut $out, found: TargetFound) {
                out.found = Some(found);
            }
        }
    )*};
}
on_element!(SetValue => ValueSet, Describe => Description);

/// Find a [`Target`] on the page, waiting (up to `timeout_ms`) while it is
/// not there yet or the page is between documents.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindTarget {
    /// The element.
    pub target: Target,
    /// How long to wait for it (default 5 000, at most 60 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Say who it is (role, name, rank) when a selector, a text or a
    /// description found it, and its role and name find it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identify: Option<bool>,
}

impl FindTarget {
    /// `target` found within `timeout_ms`, and who it is said.
    #[must_use]
    pub fn identifying(target: Target, timeout_ms: u64) -> Self {
        Self { target, timeout_ms: Some(timeout_ms), identify: Some(true) }
    }
}

/// The element [`FindTarget`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TargetFound {
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// The way that found it: `ref`, `role`, `selector`, `xpath`, `text`,
    /// `name` or `query`.
    pub by: String,
    /// Who it is (with `identify`, when found other than by role and name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// How long it was waited for, in ms.
    #[serde(default)]
    pub waited_ms: u64,
}

/// The element [`Locate`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Located {
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// How many elements have that role and name.
    #[serde(default)]
    pub matches: u64,
}

/// The element at a viewport point (CSS pixels), or the one with focus.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtPoint {
    /// Where.
    #[serde(default)]
    pub x: f64,
    /// Where.
    #[serde(default)]
    pub y: f64,
    /// The element with focus instead (in shadow roots too).
    #[serde(default)]
    pub focused: bool,
}

/// What [`AtPoint`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AtPointFound {
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_id: RefId,
    /// Its role.
    pub role: String,
    /// Its accessible name.
    #[serde(default)]
    pub name: String,
    /// It takes typed text (a text field, a text area, an editable element).
    #[serde(default)]
    pub editable: bool,
}
