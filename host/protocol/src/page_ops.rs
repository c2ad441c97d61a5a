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
//! Refs are strings as snapshots give them (`ax_12`). Optional arguments are
//! `Option`s; `None` is sent as `null`, which every operation reads as absent.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

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

/// `args` as the operation's arguments (`null` counts as no arguments).
pub fn parse<O: PageOp>(args: &serde_json::Value) -> Result<O, ArgsError> {
    let empty = serde_json::Value::Object(Default::default());
    let args = if args.is_null() { &empty } else { args };
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { "args".to_owned() } else { path };
        ArgsError { field, message: format!("{}: {}", O::NAME, e.into_inner()) }
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
        "ref | selector",
        "an element's role, name, state, tag and whether it is focusable, native or listening for clicks",
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
        "a login form or CAPTCHA shown without a sign-out control: right after `navigate` or `history`, as the document was at its load event; else read at once (it does not wait for the network quiet a navigation leaves owed)",
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
    );
    Focus => "focus" -> Focused = Spec::op("ref", "focus an element");
    SetValue => "set_value" -> ValueSet = Spec::op(
        "ref, value",
        "set a field's value as typing would, events included",
    );
    PickOption => "pick_option" -> Picked = Spec::op(
        "ref, name",
        "choose the option of a select or listbox with that label",
    );
    Fill => "fill" -> Filled = Spec::op(
        "fields, refs, submit",
        "fill a form's fields by label or ref, optionally submit it",
    ).frames(Frames::Fields);
    LoginFields => "login_fields" -> BTreeMap<String, LoginField> = Spec::read(
        "refs",
        "a login form's username, password and one-time-code fields, with their documents' origins",
    ).frames(Frames::Fields);
    Scroll => "scroll" -> Scrolled = Spec::op(
        "direction, amount, to, ref",
        "scroll the page or an element",
    );
    Drag => "drag" -> Dragged = Spec::op(
        "source | source_selector, target | target_selector",
        "the truthful drag in one call: press the source, move it onto the target as a hand does, release (HTML5 events for an HTML5-draggable source); done only when the press reached the source and the page reacted",
    )
    .host();
    DragInfo => "drag_info" -> DragPoints = Spec::op(
        "source | source_selector, target | target_selector",
        "the points of a drag's source and target",
    ).points();
    Html5Drag => "html5_drag" -> Done = Spec::op(
        "source | source_selector, target | target_selector",
        "an HTML5 drag and drop dispatched in the page",
    );
    Check => "check" -> bool = Spec::op(
        "type: selector|selector_hidden, value, visible",
        "whether a wait's condition holds now (the host's own waits)",
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
    Storage => "storage" -> Json = Spec::op(
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
        "what the action changed once a whole frame passes without a layout change, the work and requests it started have run, and its motion has ended",
    );
    Unwatch => "unwatch" -> Done = Spec::op("watch, token", "stop watching (with `watch`, that watch only; `token`: in its document)");
    Wait => "wait" -> Json = Spec::op(
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
    HandleDialog => "handle_dialog" -> Json = Spec::op(
        "accept, promptText",
        "answer the open JavaScript dialog",
    ).host();
    Console => "console" -> Json = Spec::op(
        "clear, level, limit",
        "the console messages of the tab",
    ).host();
    Cookies => "cookies" -> Json = Spec::op(
        "action: get|set|delete|clear, name, value, domain, path, secure, httpOnly, sameSite, expires",
        "the cookies of the page's site",
    ).host();
    NetworkCapture => "network_capture" -> Json = Spec::op(
        "action: start|stop|get|clear, include_bodies, limit",
        "the network requests of the tab",
    ).host();
    NetworkConditions => "network_conditions" -> Json = Spec::op(
        "preset, cpu_slowdown",
        "emulate a network (offline, slow 3G, ...) or stop emulating",
    ).host();
    Emulate => "emulate" -> Emulated = Spec::op(
        "scope: tab|session, reset, device, width, height, scale, mobile, user_agent, locale, timezone, geolocation, color_scheme: light|dark|no-preference, reduced_motion: reduce|no-preference, network, cpu_slowdown",
        "emulate a device (viewport, scale, touch, user agent), a place (locale, timezone, geolocation), preferences (colour scheme, reduced motion) and a slower machine (network preset, CPU) on the tab, or on every tab of the caller's session now and opened later; what is emulated after",
    ).host();
    EvidenceBundle => "evidence_bundle" -> Json = Spec::op(
        "include: [dom, screenshot, network, console]",
        "write the page's evidence (DOM, screenshot, network, console) to a bundle and return its manifest",
    ).host();
    // Without a tab.
    VisitBatch => "visit_batch" -> Json = Spec::op(
        "urls, concurrency, format: markdown|text|structured|raw|none, max_chars, timeout_ms, script, render: auto|always",
        "load pages in parallel worker tabs: status, title, links, content, the script's value",
    ).long();
    Sleep => "sleep" -> Slept = Spec::op("ms", "pause (bounded)").long();
    NewIsolatedTab => "new_isolated_tab" -> NewTab = Spec::op(
        "url, spread, login",
        "a tab in a browser context of its own, not made current; closing it disposes of the context",
    ).no_tab();
    ProfileStatus => "profile_status" -> Json = Spec::op(
        "",
        "the browser's profile: managed or attached, persistent or not",
    ).no_tab();
    ListProfiles => "list_profiles" -> Json = Spec::op("", "the browser profiles known").no_tab();
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

/// A screenshot sized for the model that reads it (see [`Captured`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// `webp` (the default), `jpeg` or `png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// 1 to 100 (`webp` and `jpeg`; default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    /// The image's longer side at most, in pixels (64 to 4096; default 1024).
    /// Never more than the device's own pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_edge: Option<u32>,
    /// A region of the viewport (x, y, width, height in CSS pixels); default
    /// the whole viewport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip: Option<[f64; 4]>,
}

/// What [`Capture`] took: the image and how its pixels map to the
/// viewport's CSS pixels (`css = origin + image / scale`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Captured {
    /// The image, base64.
    pub data: String,
    /// `image/webp`, `image/jpeg` or `image/png`.
    pub mime: String,
    /// The image's size in pixels.
    pub width: u32,
    /// As `width`.
    pub height: u32,
    /// Image pixels per CSS pixel.
    pub scale: f64,
    /// Where the image starts in the viewport (CSS pixels).
    pub x: f64,
    /// As `x`.
    pub y: f64,
    /// The region's size in CSS pixels.
    pub css_width: f64,
    /// As `css_width`.
    pub css_height: f64,
    /// The viewport's size in CSS pixels.
    pub viewport_width: f64,
    /// As `viewport_width`.
    pub viewport_height: f64,
}

/// Raw input at viewport coordinates, in order (see [`Gesture`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gestures {
    /// The events.
    pub events: Vec<Gesture>,
}

/// One input event of [`Gestures`]: x and y are CSS pixels of the viewport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Gesture {
    /// Move the mouse (buttons held stay held: a drag).
    Move {
        /// Where.
        x: f64,
        /// Where.
        y: f64,
    },
    /// Press a button.
    Down {
        /// Where.
        x: f64,
        /// Where.
        y: f64,
        /// `left` (default), `middle` or `right`.
        #[serde(default)]
        button: Option<String>,
        /// 1 (default); 2 for a double click's second press, 3 for a triple's third.
        #[serde(default)]
        count: Option<u32>,
    },
    /// Release a button.
    Up {
        /// Where.
        x: f64,
        /// Where.
        y: f64,
        /// `left` (default), `middle` or `right`.
        #[serde(default)]
        button: Option<String>,
        /// As the press's.
        #[serde(default)]
        count: Option<u32>,
    },
    /// Turn the wheel over a point (CSS pixels: positive `dy` scrolls down).
    Wheel {
        /// Where.
        x: f64,
        /// Where.
        y: f64,
        /// Horizontal.
        #[serde(default)]
        dx: f64,
        /// Vertical.
        #[serde(default)]
        dy: f64,
    },
    /// Hold a key (or a chord's keys) down.
    KeyDown {
        /// `Shift`, `a`, `Control+a`.
        key: String,
    },
    /// Release what [`Gesture::KeyDown`] held.
    KeyUp {
        /// As held.
        key: String,
    },
    /// Press and release a key or chord.
    Key {
        /// `Enter`, `Control+a`.
        key: String,
    },
    /// Type text.
    Text {
        /// What.
        text: String,
    },
    /// Wait (at most 10 s).
    Pause {
        /// How long.
        ms: u64,
    },
}

/// What [`Gestures`] did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Gestured {
    /// How many events were sent.
    pub events: usize,
    /// Where the mouse is now (CSS pixels), if an event put it somewhere.
    #[serde(default)]
    pub x: Option<f64>,
    /// As `x`.
    #[serde(default)]
    pub y: Option<f64>,
}

/// Add, remove, list or clear the caller's session's routes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// `add` (the default with a `url`), `remove`, `list` (the default
    /// without) or `clear`.
    #[serde(default)]
    pub action: Option<String>,
    /// The URL pattern (ochre's one rule: a glob with `*`, `/regex/`, else a
    /// part of the URL); `remove` takes the pattern as it was added.
    #[serde(default)]
    pub url: Option<String>,
    /// Only requests of this method.
    #[serde(default)]
    pub method: Option<String>,
    /// The answer's status (default 200).
    #[serde(default)]
    pub status: Option<u16>,
    /// The answer's headers.
    #[serde(default)]
    pub headers: Option<BTreeMap<String, String>>,
    /// The answer's body.
    #[serde(default)]
    pub body: Option<String>,
    /// The answer's body from this file (under an allowed file root).
    #[serde(default)]
    pub file: Option<String>,
    /// Fail matching requests instead.
    #[serde(default)]
    pub abort: Option<bool>,
}

/// One route of a session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RouteInfo {
    /// Its URL pattern.
    pub url: String,
    /// Its method, if it names one.
    #[serde(default)]
    pub method: Option<String>,
    /// What it answers (`abort`, `status 200, 12 bytes`).
    pub answer: String,
    /// How many requests it answered.
    #[serde(default)]
    pub hits: u64,
}

/// A session's routes after a change.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Routed {
    /// Its routes, in the order they are tried.
    #[serde(default)]
    pub routes: Vec<RouteInfo>,
}

/// Change the caller's session's network policy (each field given replaces
/// the session's own; nothing given: read it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkPolicy {
    /// Origins or hosts the session alone may reach (`https://app.example`,
    /// `app.example:8080`, `*.example.com`), beside the server's.
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// Origins or hosts the session never reaches, beside the server's.
    #[serde(default)]
    pub block: Option<Vec<String>>,
    /// The session's upstream proxy, `http://host:port` (`""`: none).
    #[serde(default)]
    pub proxy: Option<String>,
    /// Drop the session's own rules and proxy first.
    #[serde(default)]
    pub reset: Option<bool>,
}

/// The network policy in force for a session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PolicyInForce {
    /// Only these are reached (the server's and the session's; empty: all
    /// that is not blocked).
    #[serde(default)]
    pub allowed: Vec<String>,
    /// Never these.
    #[serde(default)]
    pub blocked: Vec<String>,
    /// Whether addresses inside the machine or its networks are refused
    /// unless allowed (the server's `--network-block-private`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub block_private: bool,
    /// The session's upstream proxy.
    #[serde(default)]
    pub proxy: Option<String>,
    /// The last connections refused (`host:port`), newest last.
    #[serde(default)]
    pub refused: Vec<String>,
    /// How many were refused in all.
    #[serde(default)]
    pub refused_total: u64,
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
                pub ref_id: Option<String>,
                /// Or a CSS selector.
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub selector: Option<String>,
            }

            impl $op {
                /// The element of a ref.
                pub fn of_ref(ref_id: &str) -> Self {
                    Self { ref_id: Some(ref_id.to_owned()), selector: None }
                }
            }
        )*
    };
}

ref_or_selector! {
    /// Describe one element.
    Describe;
    /// The element itself (a remote object, for the host's own use).
    Element;
    /// The file input a ref or selector names (it must be one, and enabled).
    FileInput;
    /// The file names a file input holds now (its `input` and `change` fire).
    FilesOf;
}

/// The two ends of a drag, each a ref or a CSS selector.
macro_rules! drag_ends {
    ($($(#[$doc:meta])* $op:ident;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $op {
                /// The source's ref.
                #[serde(default)]
                pub source: Option<String>,
                /// Or its CSS selector.
                #[serde(default)]
                pub source_selector: Option<String>,
                /// The target's ref.
                #[serde(default)]
                pub target: Option<String>,
                /// Or its CSS selector.
                #[serde(default)]
                pub target_selector: Option<String>,
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
    /// The truthful drag, in one call: the source pressed, moved onto the
    /// target as a hand does and released there (or HTML5 drag events for an
    /// HTML5-draggable source), judged by its effect: done when the press
    /// reached the source and the page reacted (the item moved, the list
    /// reordered, the page changed).
    Drag;
}

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

fn is_false(b: &bool) -> bool {
    !*b
}

/// An operation that returns nothing to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Done {}

// ---- reading the page ---------------------------------------------------------------

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
    pub ref_id: Option<String>,
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
    pub ref_id: String,
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
    pub ref_id: String,
}

/// An element as [`Describe`] reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    pub ref_id: Option<String>,
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
    pub ref_id: String,
    /// A name to look for in or beside it.
    #[serde(default)]
    pub name: Option<String>,
}

impl Shown {
    /// What the field of a ref shows.
    pub fn of(ref_id: &str) -> Self {
        Self { ref_id: ref_id.to_owned(), name: None }
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
}

// ---- acting on elements -------------------------------------------------------------

/// The viewport point to click an element at (it is scrolled into view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// The element.
    #[serde(rename = "ref")]
    pub ref_id: String,
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
    pub ref_id: Option<String>,
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
    pub ref_id: String,
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
    pub ref_id: String,
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
    pub ref_id: Option<String>,
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

/// What [`Act`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActKind {
    /// One click.
    #[default]
    Click,
    /// Two clicks.
    DoubleClick,
    /// The pointer moved over it.
    Hover,
    /// A key or chord (`key`), with the element focused first; without an
    /// element, to the focused one. Done when the keys reached it.
    Press,
    /// Text (`text`) key by key into the element, focused first (refused
    /// with `ELEMENT_NOT_FOCUSABLE` when it takes no focus). Done when the keys
    /// reached it; the field's value before and after are in the answer.
    Type,
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
    /// The way that worked, when the plain mouse click did not (`js_click`,
    /// `keyboard Enter`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
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
    /// The way: `mouse`, `ax` (found again by role and name), `js_click`,
    /// `keyboard Enter`, ...
    pub strategy: String,
    /// What came of it: `no change`, `the click reached ...`, `skipped: ...`,
    /// `failed: ...`.
    pub outcome: String,
}

impl Tried {
    /// `strategy` and what came of it.
    pub fn new(strategy: impl Into<String>, outcome: impl Into<String>) -> Self {
        Tried { strategy: strategy.into(), outcome: outcome.into() }
    }
}

/// Set a field's value as typing would, its events included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetValue {
    /// The field.
    #[serde(rename = "ref")]
    pub ref_id: String,
    /// The value: text, a number, `true`/`false`, or a list of option names.
    pub value: Json,
}

/// What [`SetValue`] did: its keys depend on the field (`typing`, `widget`,
/// `checked`, `value`, `line`), so it is JSON.
pub type ValueSet = Json;

/// Choose the option with a label of a select or listbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PickOption {
    /// The select or listbox (or combobox).
    #[serde(rename = "ref")]
    pub ref_id: String,
    /// The option's label (exact, else its start, else a part of it).
    pub name: String,
}

/// The option [`PickOption`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Picked {
    /// Its ref (`None`: none or several matched).
    #[serde(rename = "ref", default)]
    pub ref_id: Option<String>,
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
    /// The fields by ref: ref → `username`, `password` or `otp`.
    #[serde(default)]
    pub refs: Option<BTreeMap<String, String>>,
}

/// One field [`LoginFields`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LoginField {
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_id: String,
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
    pub ref_id: Option<String>,
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
    pub ref_id: String,
}

/// The files a file input holds.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Files {
    /// Their names.
    pub files: Vec<String>,
}

/// The page's `localStorage` or `sessionStorage`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    /// `local` or `session`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `get` (one key, or all), `set`, `remove`, `clear` or `keys`.
    pub action: String,
    /// The key.
    #[serde(default)]
    pub key: Option<String>,
    /// The value to set.
    #[serde(default)]
    pub value: Option<String>,
}

// ---- what an action changed -----------------------------------------------------------

/// Start watching what changes on the page (mutations, navigation, focus,
/// the element's state) for a later `settle`: around `ref_id`, or the
/// focused element when none is named.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// The element watched.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub ref_id: Option<String>,
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
    /// `selector`, `selector_hidden`, `function`, `navigation`, `url_match` or
    /// `timeout`.
    #[serde(rename = "type")]
    pub kind: String,
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

// ---- recordings -----------------------------------------------------------------------

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
    pub ref_id: Option<String>,
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
    /// Read from a recording's or a caller's JSON: the fields it knows, the
    /// rest ignored (a recording keeps more: the element's tag, say).
    pub fn from_json(v: &serde_json::Value) -> Self {
        let s = |k: &str| v[k].as_str().filter(|x| !x.is_empty()).map(str::to_owned);
        Target {
            ref_id: s("ref"),
            role: s("role"),
            name: s("name"),
            nth: v["nth"].as_u64(),
            selector: s("selector"),
            xpath: s("xpath"),
            text: s("text"),
            query: s("query"),
        }
    }

    /// Whether it names no element.
    pub fn is_empty(&self) -> bool {
        [&self.ref_id, &self.name, &self.selector, &self.xpath, &self.text, &self.query]
            .iter()
            .all(|f| f.is_none())
    }

    /// As a message names it: `button "Save"`, else the first way given
    /// (`selector "#save"`).
    pub fn shown(&self) -> String {
        if let (Some(role), Some(name)) = (&self.role, &self.name) {
            return format!("{role} {name:?}");
        }
        let ways = [
            ("ref", &self.ref_id),
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

/// The element [`FindTarget`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TargetFound {
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_id: String,
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
    pub ref_id: String,
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
    pub ref_id: String,
    /// Its role.
    pub role: String,
    /// Its accessible name.
    #[serde(default)]
    pub name: String,
    /// It takes typed text (a text field, a text area, an editable element).
    #[serde(default)]
    pub editable: bool,
}

// ---- the tab --------------------------------------------------------------------------

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

/// The tab's network requests.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkCapture {
    /// `start`, `stop`, `get` (default) or `clear`.
    #[serde(default)]
    pub action: Option<String>,
    /// Read the bodies of text responses too.
    #[serde(default)]
    pub include_bodies: Option<bool>,
    /// The last this many (default 200).
    #[serde(default)]
    pub limit: Option<u32>,
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

// ---- without a tab ----------------------------------------------------------------------

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
}
