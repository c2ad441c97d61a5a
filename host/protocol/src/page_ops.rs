//! Typed page operations: for an operation of the host's page library, a
//! struct of its arguments (serialized as the operation's JSON arguments) and
//! the type of its result. The wire stays JSON (the WIT `page-op`); these types
//! are what a plugin writes and reads instead of keys:
//!
//! ```
//! use ochre_protocol::page_ops::{PageOp, Sleep};
//! assert_eq!(Sleep::NAME, "sleep");
//! assert_eq!(serde_json::to_value(Sleep { ms: 50 }).unwrap(), serde_json::json!({"ms": 50}));
//! ```
//!
//! In a plugin: `ochre_sdk::browser::run(tab, &Sleep { ms: 50 }, 2_000)?.slept_ms`.
//! Every name here is in `ochre-browser`'s table of operations
//! (`docs/page-ops.md`), which a test checks; the operations not typed yet are
//! reached with `ochre_sdk::browser::page_op` and JSON.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A page operation: its name, its arguments (`Self`) and its result.
pub trait PageOp: Serialize {
    /// The operation's name (the `op` of the WIT `page-op`).
    const NAME: &'static str;
    /// What it returns.
    type Output: DeserializeOwned;
}

/// Each typed operation: its argument type, name and result type.
macro_rules! typed_ops {
    ($($op:ident => $name:literal -> $out:ty;)*) => {
        $(impl PageOp for $op {
            const NAME: &'static str = $name;
            type Output = $out;
        })*
        /// The typed operations: (name, the type of its arguments).
        pub const TYPED: &[(&str, &str)] = &[$(($name, stringify!($op))),*];
    };
}

typed_ops! {
    Sleep => "sleep" -> Slept;
    Describe => "describe" -> Description;
    ResolveQuery => "resolve_query" -> Resolved;
    NetworkIdle => "network_idle" -> Idle;
    Watch => "watch" -> Watching;
    Unwatch => "unwatch" -> Done;
    Focus => "focus" -> Focused;
    ValueOf => "value_of" -> FieldValue;
    JsClick => "js_click" -> Done;
}

/// Operations whose only argument is an element's ref.
macro_rules! on_element {
    ($($(#[$doc:meta])* $op:ident;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
            pub struct $op {
                /// A ref from a snapshot (`ax_12`).
                #[serde(rename = "ref")]
                pub ref_id: String,
            }

            impl $op {
                /// On the element of a ref.
                pub fn of(ref_id: &str) -> Self {
                    Self { ref_id: ref_id.to_owned() }
                }
            }
        )*
    };
}

on_element! {
    /// Give an element the keyboard focus (a widget's focusable part inside it).
    Focus;
    /// What a field holds now.
    ValueOf;
    /// A click by script (`element.click()`), for widgets that ignore the mouse.
    JsClick;
}

/// An operation that returns nothing to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Done {}

/// Start watching what changes on the page (mutations, navigation, focus,
/// the element's state) for a later `settle`: around `ref_id`, or the
/// focused element when none is named.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Watch {
    /// The element watched.
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub ref_id: Option<String>,
}

/// A watch started.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Watching {
    /// The document's token: `settle` with it tells a navigation apart.
    pub token: String,
}

/// Stop watching (no `settle` follows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Unwatch {}

/// Whether the focus is now on the element (or inside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Focused {
    /// `false`: it does not take the focus.
    pub focused: bool,
}

/// A field's value: `None` for a password (never read) or what is no field.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FieldValue {
    /// The value.
    pub value: Option<String>,
    /// A password field.
    #[serde(default)]
    pub secret: bool,
}

/// Wait on the host for `ms` milliseconds (at most 60 000), holding no tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sleep {
    /// How long.
    pub ms: u64,
}

/// What [`Sleep`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Slept {
    /// How long it slept (the asked time, capped).
    pub slept_ms: u64,
}

/// Describe one element, named by a ref or a CSS selector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Describe {
    /// A ref from a snapshot (`ax_12`).
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub ref_id: Option<String>,
    /// Or a CSS selector.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

impl Describe {
    /// The element of a ref.
    pub fn of_ref(ref_id: &str) -> Self {
        Self { ref_id: Some(ref_id.to_owned()), selector: None }
    }
}

/// An element as [`Describe`] reports it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Description {
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_id: String,
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
}

/// The ref of the element that best matches a description
/// (`ELEMENT_NOT_FOUND` when nothing does).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolveQuery {
    /// What to look for, in words (`"the Send button"`).
    pub query: String,
}

/// A ref.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Resolved {
    /// The best match's ref.
    #[serde(rename = "ref")]
    pub ref_id: String,
}

/// Wait until the tab's network has been quiet for `quiet_ms` (default 100,
/// at most 10 000), within the call's timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct NetworkIdle {
    /// How long without a request in flight counts as quiet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<u64>,
}

/// Whether the network went quiet in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Idle {
    /// `false`: requests were still in flight when the time ran out.
    pub idle: bool,
}
