//! Typed page operations: for every operation of the host's page library, a
//! struct of its arguments (the operation's JSON arguments) and the type of its
//! result. The wire stays JSON (the WIT `page-op`); these types are what a
//! plugin writes and reads instead of keys, and what the host checks a call's
//! arguments against before it touches the browser ([`check_args`]):
//!
//! ```
//! use ochre_protocol::page_ops::{PageOp, Sleep};
//! assert_eq!(Sleep::NAME, "sleep");
//! assert_eq!(serde_json::to_value(Sleep { ms: 50 }).unwrap(), serde_json::json!({"ms": 50}));
//! ```
//!
//! In a plugin: `ochre_sdk::browser::run(tab, &Sleep { ms: 50 }, 2_000)?.slept_ms`.
//! Each operation is defined once, in `typed_ops!` below: its name, argument
//! and result types, and its [`Spec`] (its arguments in words, what it does, how
//! the host runs it), from which `ochre-browser`'s dispatch reads and
//! `docs/page-ops.md` is generated. Results that are free-form by nature
//! (extracted data, a capture, a settle's account of what changed) are [`Json`].
//!
//! Refs are [`RefId`]s, spelled on the wire as snapshots give them (`ax_12`)
//! and parsed when an operation's arguments are read. Optional arguments are
//! `Option`s; `None` is sent as `null`, which every operation reads as absent.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use crate::browser::RefId;

/// A result that is free-form JSON (its keys are in `docs/page-ops.md`).
pub type Json = serde_json::Value;

/// A page operation: its name, its arguments (`Self`) and its result.
pub trait PageOp: Serialize + DeserializeOwned + Clone + Into<AnyOp> {
    /// The operation's name (the `op` of the WIT `page-op`).
    const NAME: &'static str;
    /// What it returns.
    type Output: DeserializeOwned;
}

/// Which documents of a tab an operation runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frames {
    /// The document its refs (or document token) belong to: the page, or the
    /// cross-site frame the refs were given out in.
    One,
    /// Without refs, the page and every cross-site frame in it (results merged).
    Wide,
    /// Read modes other than `dom` cover the frames, each under its `iframe` line.
    Snapshot,
    /// The page's own form first, else the first frame that has every field.
    Fields,
}

/// What a page operation is, beside its types: its arguments in words, what
/// it does, and how the host runs it. One per operation, next to its types
/// (`typed_ops!` below), so that adding an operation touches its definition
/// here and its implementation (page.js or the host), nothing else: the
/// host's dispatch reads [`SPECS`], `docs/page-ops.md` is generated from it,
/// and a test holds page.js's table of operations to the ones marked
/// `library`.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Its name (the `op` of the WIT `page-op`).
    pub name: &'static str,
    /// Its arguments, as a plugin passes them (JSON object keys).
    pub args: &'static str,
    /// What it does and returns.
    pub what: &'static str,
    /// A read: retried once in the new document when a navigation cuts it short.
    pub retried: bool,
    /// Which documents it runs in.
    pub frames: Frames,
    /// Its result holds viewport points (shifted by a frame's offset).
    pub points: bool,
    /// Long by design and bounded on its own (its time extends a plugin call's
    /// wall-clock backstop).
    pub long: bool,
    /// Runs on a tab (the current one when none is named); `false`: on none.
    pub tab: bool,
    /// Runs in the page library (page.js's table of operations has it);
    /// `false`: the host runs it (in Rust, or through other operations).
    pub library: bool,
    /// An act a person would have done with a hand (a script click, a value
    /// set, a form filled): it gives the page a user activation, as that
    /// person's act would. Every other operation runs without one, so that
    /// reading a page never arms what only a person's act allows (a "leave
    /// this page?" prompt, a popup, sound).
    pub gesture: bool,
}

impl Spec {
    /// An operation on a tab's page library.
    pub const fn op(args: &'static str, what: &'static str) -> Self {
        Spec {
            name: "",
            args,
            what,
            retried: false,
            frames: Frames::One,
            points: false,
            long: false,
            tab: true,
            library: true,
            gesture: false,
        }
    }

    /// A read: retried once in the new document when a navigation cuts it short.
    pub const fn read(args: &'static str, what: &'static str) -> Self {
        Spec { retried: true, ..Spec::op(args, what) }
    }

    /// Running in these documents.
    pub const fn frames(self, frames: Frames) -> Self {
        Spec { frames, ..self }
    }

    /// Its result holds viewport points.
    pub const fn points(self) -> Self {
        Spec { points: true, ..self }
    }

    /// Run by the host without a tab.
    pub const fn no_tab(self) -> Self {
        Spec { tab: false, library: false, ..self }
    }

    /// Long by design, without a tab.
    pub const fn long(self) -> Self {
        Spec { long: true, tab: false, library: false, ..self }
    }

    /// An act that gives the page a user activation (see [`Spec::gesture`]).
    pub const fn acts(self) -> Self {
        Spec { gesture: true, ..self }
    }

    /// Run by the host, not in the page library.
    pub const fn host(self) -> Self {
        Spec { library: false, ..self }
    }

    const fn named(self, name: &'static str) -> Self {
        Spec { name, ..self }
    }
}

/// The operation named `name`.
pub fn spec(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|o| o.name == name)
}

/// Each typed operation: its argument type, name and result type.
macro_rules! typed_ops {
    ($($(#[$c:meta])* $op:ident => $name:literal -> $out:ty = $spec:expr;)*) => {
        $(impl PageOp for $op {
            const NAME: &'static str = $name;
            type Output = $out;
        }
        impl From<$op> for AnyOp {
            fn from(op: $op) -> AnyOp {
                AnyOp::$op(op)
            }
        })*
        /// The typed operations: (name, the type of its arguments).
        pub const TYPED: &[(&str, &str)] = &[$(($name, stringify!($op))),*];

        /// Every page operation, in the order the docs list them: what it is
        /// and how the host runs it ([`Spec`]).
        pub const SPECS: &[Spec] = &[$($spec.named($name)),*];

        /// Check `args` against the arguments of the operation `name`: `None`
        /// for a name that is not an operation; else the first problem (the
        /// field's path and what is wrong), or `Ok`.
        pub fn check_args(name: &str, args: &serde_json::Value) -> Option<Result<(), ArgsError>> {
            AnyOp::parse(name, args).map(|r| r.map(drop))
        }

        /// A page operation with its arguments read: what the host dispatches on.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum AnyOp {
            $(#[doc = concat!("`", $name, "`: [`", stringify!($op), "`].")] $op($op),)*
        }

        impl AnyOp {
            /// `args` as the arguments of the operation `name`: `None` for a
            /// name that is not an operation; else the operation, or the first
            /// problem with its arguments.
            pub fn parse(name: &str, args: &serde_json::Value) -> Option<Result<AnyOp, ArgsError>> {
                Some(match name {
                    $($name => parse::<$op>(args).map(AnyOp::$op),)*
                    _ => return None,
                })
            }

            /// Its name.
            pub fn name(&self) -> &'static str {
                match self {
                    $(AnyOp::$op(_) => $name,)*
                }
            }
        }

        /// The names of the arguments of the operation `name`, in the order
        /// its type declares them (`None`: no such operation).
        pub fn arg_names(name: &str) -> Option<&'static [&'static str]> {
            Some(match name {
                $($name => fields::<$op>(),)*
                _ => return None,
            })
        }
    };
}

/// What is wrong with a page operation's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsError {
    /// The argument (its path, `fields.email`), or `args` for the whole.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// An argument refused: `INVALID_ARGUMENT` naming it (its `field`).
impl From<ArgsError> for crate::ToolError {
    fn from(e: ArgsError) -> Self {
        crate::ToolError::invalid_argument(&e.field, e.message)
    }
}

/// `args` as the operation's arguments (`null` counts as no arguments).
pub fn parse<O: PageOp>(args: &serde_json::Value) -> Result<O, ArgsError> {
    read_args(O::NAME, args)
}

/// `args` read as the arguments of `what` (an operation or a tool; `null`
/// counts as no arguments). The error names the argument at fault by its path
/// (`fields.email`, or the unknown key itself), or `args` for the whole.
pub fn read_args<T: DeserializeOwned>(
    what: &str,
    args: &serde_json::Value,
) -> Result<T, ArgsError> {
    let empty = serde_json::Value::Object(Default::default());
    let args = if args.is_null() { &empty } else { args };
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { "args".to_owned() } else { path };
        ArgsError { field, message: format!("{what}: {}", e.into_inner()) }
    })
}

/// An operation's arguments as the wire's JSON.
pub fn to_args<O: PageOp>(op: &O) -> Result<serde_json::Value, String> {
    serde_json::to_value(op).map_err(|e| format!("{}: cannot write its arguments: {e}", O::NAME))
}

/// An operation's result read from the wire's JSON as its type.
pub fn from_output<O: PageOp>(out: serde_json::Value) -> Result<O::Output, String> {
    serde_json::from_value(out)
        .map_err(|e| format!("the result of {} has an unexpected shape: {e}", O::NAME))
}

/// The field names a `Deserialize` struct declares: it is asked to read
/// itself from a deserializer that only notes them.
fn fields<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Names(Option<&'static [&'static str]>);
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("stop")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    impl<'de> serde::Deserializer<'de> for &mut Names {
        type Error = Stop;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0 = Some(fields);
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            enum identifier ignored_any
        }
    }
    let mut names = Names(None);
    let _ = T::deserialize(&mut names);
    names.0.unwrap_or(&[])
}

typed_ops! {
    // Reading the page.
    Snapshot => "snapshot" -> Snapshotted = Spec::read(
        "mode: ax|text|markdown|dom, ref, filter, depth, max_chars",
        "the page as roles and names with refs, or as text, Markdown or HTML",
    ).frames(Frames::Snapshot);
    Find => "find" -> Found = Spec::read(
        "query, limit, scores",
        "elements matching a description, best first, with refs",
    ).frames(Frames::Wide);
    Query => "query" -> Queried = Spec::read(
        "selector | xpath, limit",
        "elements matching a CSS selector or XPath, with refs",
    ).frames(Frames::Wide);
    ResolveQuery => "resolve_query" -> Resolved = Spec::op(
        "query",
        "the ref of the best match of a description (ELEMENT_NOT_FOUND if none)",
    ).frames(Frames::Wide);
    Describe => "describe" -> Description = Spec::op(
        "ref | target, timeout_ms",
        "an element's role, name, state, tag and whether it is focusable, native or listening for clicks (an element named by target is found first, waited for up to timeout_ms, in the same call)",
    );
    ExtractStatic => "extract_static" -> StaticPage = Spec::read(
        "html, url, mode: markdown|text, max_chars",
        "the title, links and content of fetched HTML, read without rendering it",
    );
    Extract => "extract" -> Json = Spec::op(
        "schema, ref, selector, item_selector",
        "structured data read from the page by a JSON Schema",
    );
    Shown => "shown" -> ShownValue = Spec::op(
        "ref, name",
        "the value a form field shows (a select's chosen label, a checkbox's state)",
    );
    ValueOf => "value_of" -> FieldValue = Spec::op("ref", "a field's current value");
    FieldSecrets => "field_secrets" -> BTreeMap<String, FieldSecret> = Spec::op(
        "keys, refs",
        "the values typed into password and one-time-code fields (for redaction)",
    );
    Ping => "ping" -> Pong = Spec::read("", "the page's URL and readiness");
    Wall => "wall" -> WallSeen = Spec::read(
        "",
        "a login form or CAPTCHA shown without a sign-out control, and the HTTP status the document came with: right after `navigate` or `history`, as the document was at its load event; else read at once (it does not wait for the network quiet a navigation leaves owed)",
    ).host();
    // Acting on elements.
    Point => "point" -> ViewportPoint = Spec::op(
        "ref, how: plain|center|sample",
        "the viewport point to click an element at",
    ).points();
    Actionable => "actionable" -> Actionability = Spec::op(
        "ref, timeout_ms, enabled, describe, watch",
        "wait until an element can take an event (visible, enabled, not moving, not covered): its point; with describe, the element as describe tells it; with watch, the watch of what the event changes starts then (its token)",
    ).points();
    Relocate => "relocate" -> ViewportPoint = Spec::op(
        "ref, role, name",
        "the element a ref meant, found again by role and name, with its point",
    ).points();
    Act => "act" -> Acted = Spec::op(
        "ref | query | target, action: click|double_click|hover|press|type, key, text, submit, delay_ms, timeout_ms, other_ways",
        "the truthful action in one call: wait until the element can take it, click, count it only if it reached the element and had its effect (other ways tried on a custom element that ignored the mouse, unless other_ways is false); press and type: focus it, send the keys, count them only if they reached it; what it changed",
    ).host();
    JsClick => "js_click" -> Done = Spec::op(
        "ref",
        "a click dispatched in the page's script (when trusted input cannot reach the element)",
    ).acts();
    Focus => "focus" -> Focused = Spec::op("ref", "focus an element");
    SetValue => "set_value" -> ValueSet = Spec::op(
        "ref | target, value, timeout_ms",
        "set a field's value as typing would, events included (a field named by target is found first, waited for up to timeout_ms, in the same call)",
    ).acts();
    PickOption => "pick_option" -> Picked = Spec::op(
        "ref, name",
        "choose the option of a select or listbox with that label",
    ).acts();
    Fill => "fill" -> Filled = Spec::op(
        "fields, refs, submit",
        "fill a form's fields by label or ref, optionally submit it",
    ).frames(Frames::Fields).acts();
    LoginFields => "login_fields" -> BTreeMap<LoginRole, LoginField> = Spec::read(
        "refs",
        "a login form's username, password and one-time-code fields, with their documents' origins",
    ).frames(Frames::Fields);
    Scroll => "scroll" -> Scrolled = Spec::op(
        "direction, amount, to, ref",
        "scroll the page or an element",
    );
    Drag => "drag" -> Dragged = Spec::op(
        "source, target",
        "the truthful drag in one call (each end a target: a ref, role and name, selector, XPath, text or description, found and waited for): press the source, move it onto the target as a hand does, release (HTML5 events for an HTML5-draggable source); done only when the press reached the source and the page reacted",
    )
    .host();
    DragInfo => "drag_info" -> DragPoints = Spec::op(
        "source, target",
        "the points of a drag's source and target",
    ).points();
    Html5Drag => "html5_drag" -> Done = Spec::op(
        "source, target",
        "an HTML5 drag and drop dispatched in the page",
    ).acts();
    Check => "check" -> bool = Spec::op(
        "type: selector|selector_hidden, value, visible, wait_ms",
        "whether a wait's condition holds now, or with wait_ms once it does in a frame drawn within that time (the host's own waits)",
    );
    Element => "element" -> Json = Spec::op(
        "ref | selector",
        "the element itself (a remote object, for the host's own use)",
    );
    FileInput => "file_input" -> FileInputInfo = Spec::op(
        "ref | selector",
        "the file input a ref or selector names (for set-files)",
    );
    FilesOf => "files_of" -> Files = Spec::op(
        "ref | selector",
        "the file names a file input now holds",
    );
    Storage => "storage" -> Stored = Spec::op(
        "type: local|session, action: get|set|remove|clear|keys, key, value",
        "the page's localStorage or sessionStorage",
    );
    // What an action changed.
    Watch => "watch" -> Watching = Spec::op(
        "ref",
        "start watching what an action changes (returns a token)",
    );
    Settle => "settle" -> Settled = Spec::op(
        "token, idle_ms, quiet_ms, max_ms, wait_ms, keep",
        "what the action changed once a whole frame passes without a layout change (or at once when nothing it set going waits for a frame: no animation frame asked, message posted, scroll the page hears, focus by script, observer, link to another page, form or key), the work (timers, frames, idle callbacks, posted messages) and requests it started have run, and its motion has ended",
    );
    Unwatch => "unwatch" -> Done = Spec::op("watch, token", "stop watching (with `watch`, that watch only; `token`: in its document)");
    Wait => "wait" -> Waited = Spec::op(
        "type: selector|selector_hidden|function|navigation|url_match|timeout, value, visible, token",
        "wait for a condition on the page",
    ).host();
    WaitLoad => "wait_load" -> Loaded = Spec::op("", "wait for the load event").host();
    NetworkIdle => "network_idle" -> Idle = Spec::op(
        "quiet_ms",
        "wait until no request has been in flight for quiet_ms",
    ).host();
    // Recordings.
    Identify => "identify" -> Identity = Spec::op(
        "ref",
        "an element's role, name and rank, to find it again in a replay",
    );
    Locate => "locate" -> Located = Spec::op(
        "role, name, nth",
        "a fresh ref for an element found by role, name and rank",
    );
    FindTarget => "find_target" -> TargetFound = Spec::op(
        "target, timeout_ms, identify",
        "an element as a caller names it (target: ref, role and name and nth, selector, xpath, text or query), waited for while it is not there yet (or the page is between documents), with a fresh ref; with identify, who it is when a selector found it",
    ).host();
    AtPoint => "at_point" -> AtPointFound = Spec::op(
        "x, y, focused",
        "the element a click at a viewport point would act on (the interactive element it is in), with a ref: what a person's click in the live view becomes in a demonstration",
    );
    // The tab.
    Dialog => "dialog" -> OpenDialog = Spec::op("", "the open JavaScript dialog, if any").host();
    HandleDialog => "handle_dialog" -> DialogHandled = Spec::op(
        "accept, promptText",
        "answer the open JavaScript dialog",
    ).host();
    Console => "console" -> ConsoleMessages = Spec::op(
        "clear, level, limit",
        "the console messages of the tab",
    ).host();
    Cookies => "cookies" -> CookiesDone = Spec::op(
        "action: get|set|delete|clear, name, value, domain, path, secure, httpOnly, sameSite, expires",
        "the cookies of the page's site",
    ).host();
    NetworkCapture => "network_capture" -> NetworkCaptured = Spec::op(
        "action: start|stop|get|clear|har, include_bodies, limit, scope: tab|session",
        "the network requests of the tab, or of every tab of the caller's session (har: written as a HAR 1.2 file in the evidence dir)",
    ).host();
    PerformanceTrace => "performance_trace" -> TraceTaken = Spec::op(
        "action: start|stop|status, screenshots, max_ms",
        "a performance trace of the tab (DevTools' timeline), written as Chrome's trace JSON in the evidence dir, with its long tasks, layout shifts and largest contentful paint",
    ).host();
    PageVideo => "page_video" -> VideoTaken = Spec::op(
        "action: start|stop|status, max_ms",
        "a video of the tab (the screen as painted), written as a Matroska file in the evidence dir",
    ).host();
    NetworkConditions => "network_conditions" -> NetworkApplied = Spec::op(
        "preset, cpu_slowdown",
        "emulate a network (offline, slow 3G, ...) or stop emulating",
    ).host();
    Emulate => "emulate" -> Emulated = Spec::op(
        "scope: tab|session, reset, device, width, height, scale, mobile, user_agent, locale, timezone, geolocation, color_scheme: light|dark|no-preference, reduced_motion: reduce|no-preference, network, cpu_slowdown",
        "emulate a device (viewport, scale, touch, user agent), a place (locale, timezone, geolocation), preferences (colour scheme, reduced motion) and a slower machine (network preset, CPU) on the tab, or on every tab of the caller's session now and opened later; what is emulated after",
    ).host();
    EvidenceBundle => "evidence_bundle" -> BundleManifest = Spec::op(
        "include: [dom, screenshot, network, console]",
        "write the page's evidence (DOM, screenshot, network, console) to a bundle and return its manifest",
    ).host();
    // Without a tab.
    VisitBatch => "visit_batch" -> Visited = Spec::op(
        "urls, concurrency, format: markdown|text|structured|raw|none, max_chars, timeout_ms, script, render: auto|always",
        "load pages in parallel worker tabs: status, title, links, content, the script's value",
    ).long();
    Sleep => "sleep" -> Slept = Spec::op("ms", "pause (bounded)").long();
    NewIsolatedTab => "new_isolated_tab" -> NewTab = Spec::op(
        "url, spread, login",
        "a tab in a browser context of its own, not made current; closing it disposes of the context",
    ).no_tab();
    ProfileStatus => "profile_status" -> ProfileInfo = Spec::op(
        "",
        "the browser's profile: managed or attached, persistent or not",
    ).no_tab();
    ListProfiles => "list_profiles" -> Profiles = Spec::op("", "the browser profiles known").no_tab();
    NetworkPolicy => "network_policy" -> PolicyInForce = Spec::op(
        "allow, block, proxy, reset",
        "the caller's session's network policy: origins, hosts or addresses it alone may reach or never reaches (beside the server's), its upstream proxy; what is in force and what was refused",
    ).no_tab();
    Gestures => "gestures" -> Gestured = Spec::op(
        "events: [move|down|up|wheel|key_down|key_up|key|text|pause]",
        "raw input at viewport coordinates (CSS pixels), in order: the mouse moved, any button pressed or released (button left|middle|right, count), the wheel turned (dx, dy), a key held, released or pressed (a chord: Control+a), text typed, a pause (ms)",
    ).host();
    Capture => "capture" -> Captured = Spec::op(
        "format: webp|jpeg|png, quality, long_edge, clip: [x, y, width, height]",
        "a screenshot of the viewport (or of clip, in its CSS pixels) sized for a model: at most long_edge pixels on its longer side (default 1024, never above the device's pixels), WebP at quality 60 by default; with how its pixels map to CSS pixels",
    ).host();
    Route => "route" -> Routed = Spec::op(
        "action: add|remove|list|clear, url, method, status, headers, body, file, abort",
        "answer the caller's session's requests matching a URL pattern (a status, headers, a body or a file's) or abort them, before they leave the browser; list and remove routes",
    ).no_tab();
}

/// An enum whose variants go by a name on the wire, each name written once:
/// serde's, `as_str`, `parse`, `ALL` and `Display` come from it. More
/// attributes (a `#[derive(Default, schemars::JsonSchema)]`, a variant's
/// `#[default]`) pass through.
#[macro_export]
macro_rules! named_enum {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal,)* }) => {
        $(#[$m])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
            ::serde::Serialize, ::serde::Deserialize,
        )]
        pub enum $name {
            $($(#[$vm])* #[serde(rename = $s)] $v,)*
        }

        impl $name {
            /// Every one, in order.
            pub const ALL: &'static [$name] = &[$($name::$v),*];

            /// Its name on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$v => $s,)*
                }
            }

            /// The one called `name`.
            pub fn parse(name: &str) -> Option<$name> {
                match name {
                    $($s => Some($name::$v),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// Operations whose only argument is an element's ref.
macro_rules! on_element {
    ($($(#[$doc:meta])* $op:ident;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $op {
                /// A ref from a snapshot (`ax_12`).
                #[serde(rename = "ref")]
                pub ref_id: RefId,
            }

            impl $op {
                /// On the element of a ref.
                pub fn of(ref_id: RefId) -> Self {
                    Self { ref_id }
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
    /// An element's role, name and rank among its namesakes (to find it again
    /// in a replay).
    Identify;
}

/// Operations without arguments.
macro_rules! no_args {
    ($($(#[$doc:meta])* $op:ident;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $op {}
        )*
    };
}

no_args! {
    /// The page's URL and readiness.
    Ping;
    /// Evidence that the page is a login or CAPTCHA wall, read as the page is
    /// (without the wait for the network to go quiet a navigation leaves owed).
    Wall;
    /// Wait for the load event.
    WaitLoad;
    /// The open JavaScript dialog, if any.
    Dialog;
    /// The browser's profile: managed or attached, persistent or not.
    ProfileStatus;
    /// The browser profiles known.
    ListProfiles;
}

/// Operations on an element named by a ref or a CSS selector.
macro_rules! ref_or_selector {
    ($($(#[$doc:meta])* $op:ident;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $op {
                /// A ref from a snapshot (`ax_12`).
                #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
                pub ref_id: Option<RefId>,
                /// Or a CSS selector.
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub selector: Option<String>,
            }

            impl $op {
                /// The element of a ref.
                pub fn of_ref(ref_id: RefId) -> Self {
                    Self { ref_id: Some(ref_id), selector: None }
                }
            }
        )*
    };
}

ref_or_selector! {
    /// The element itself (a remote object, for the host's own use).
    Element;
    /// The file input a ref or selector names (it must be one, and enabled).
    FileInput;
    /// The file names a file input holds now (its `input` and `change` fire).
    FilesOf;
}

/// The two ends of a drag, found: what is dragged and where it is dropped.
macro_rules! drag_ends {
    ($($(#[$doc:meta])* $op:ident;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $op {
                /// The source's ref.
                pub source: RefId,
                /// The target's ref.
                pub target: RefId,
            }
        )*
    };
}

drag_ends! {
    /// The viewport points of a drag's source and target (and a watch on the
    /// target, for the `settle` after the drop).
    DragInfo;
    /// An HTML5 drag and drop dispatched in the page (`dragstart` … `drop`).
    Html5Drag;
}

/// The truthful drag, in one call: the source pressed, moved onto the target
/// as a hand does and released there (or HTML5 drag events for an
/// HTML5-draggable source), judged by its effect: done when the press reached
/// the source and the page reacted (the item moved, the list reordered, the
/// page changed). Each end is a [`Target`] (a ref, a CSS selector, a role and
/// name, …), found and waited for as an action's is.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drag {
    /// What is dragged.
    pub source: Target,
    /// Where it is dropped.
    pub target: Target,
}

impl Drag {
    /// Checked before anything is done: both ends named (a ref or a selector
    /// each; the tool's own names of them in `words`).
    pub fn check(&self, tool: &str, words: [&str; 2]) -> Result<(), crate::ToolError> {
        let ends = [("source", &self.source), ("target", &self.target)];
        for ((end, t), selector) in ends.into_iter().zip(words) {
            if t.is_empty() {
                let why = format!("{tool} needs `{end}` (a ref) or `{selector}`");
                return Err(crate::ToolError::invalid_argument(end, why));
            }
        }
        Ok(())
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// An operation that returns nothing to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Done {}

// The operations' types, by subject.
mod act;
mod changes;
mod input;
mod network;
mod no_tab;
mod read;
mod recordings;
mod tab;

pub use act::*;
pub use changes::*;
pub use input::*;
pub use network::*;
pub use no_tab::*;
pub use read::*;
pub use recordings::*;
pub use tab::*;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A settle answer reads into its type and writes back as it came: what
    /// the page left out stays out (a plugin reading the JSON sees the same
    /// keys), what it said is kept, `false` included where it means something.
    #[test]
    fn a_settle_answer_keeps_its_shape_through_its_type() {
        for wire in [
            json!({"delivered": true, "pressed": true, "mutations": 3, "changed": true,
                   "added": ["Saved"], "focus": "button \"Send\" ax_4", "later_ms": [2000]}),
            json!({"delivered": false, "pressed": false, "mutations": 0, "changed": false,
                   "received_by": "div.toast", "removed_before_release": true}),
            json!({"delivered": true, "pressed": true, "mutations": 1, "changed": true,
                   "source_delivered": false, "source_received_by": "li ax_9",
                   "effect": ["moved in the page"], "target": {"expanded": true, "value_length": 4},
                   "still": ["an animation was running"], "bound_ms": 2000, "via": true,
                   "requests": 2, "pending": ["http://127.0.0.1/slow"]}),
            json!({"navigated": true, "changed": true, "delivered": true, "token": "d7",
                   "url": "http://127.0.0.1/next"}),
        ] {
            let read: Settled = serde_json::from_value(wire.clone()).expect("a settle answer");
            assert_eq!(serde_json::to_value(&read).expect("written"), wire);
        }
        let nav = Settled::navigated(Some("d7".into()));
        assert!(nav.navigated && nav.changed && nav.delivered);
    }

    /// The argument at fault is named by its path: an unknown key by itself,
    /// a bad nested value by its path, a missing one as the whole (`args`).
    #[test]
    fn arguments_read_name_the_field_at_fault() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct A {
            n: u8,
            #[serde(default)]
            inner: Option<BTreeMap<String, u8>>,
        }
        let field = |v: serde_json::Value| read_args::<A>("t", &v).expect_err("bad").field;
        assert_eq!(field(json!({"n": 1, "level": 3})), "level");
        assert_eq!(field(json!({"n": "x"})), "n");
        assert_eq!(field(json!({"n": 1, "inner": {"a": -1}})), "inner.a");
        assert_eq!(field(json!({})), "args");
        assert_eq!(field(serde_json::Value::Null), "args");
        let e = read_args::<A>("t", &json!({"n": 300})).expect_err("too big");
        assert!(e.message.starts_with("t: "), "{e:?}");
        assert_eq!(read_args::<A>("t", &json!({"n": 7})).map(|a| a.n), Ok(7));
    }
}
