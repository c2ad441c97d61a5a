//! What each page operation is, in one table: its type (its name, its arguments
//! and its result: `ochre_protocol::page_ops`, one row per type), its arguments
//! in words, what it does, and how the host runs it (whether a read is retried
//! in the new document when a navigation cuts it short, whether it covers a
//! page's cross-site frames, whether its result holds viewport points that a
//! frame's offset shifts, whether it is long by design, whether it needs a
//! tab). The dispatch ([`crate::BrowserManager::page_op`]) and the host's plugin
//! interface read it, `docs/page-ops.md` is generated from it, and a call is
//! checked against its operation's type before anything touches the browser.

use ochre_protocol::page_ops::{self as typed, PageOp as Typed};

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

/// One page operation.
#[derive(Debug, Clone, Copy)]
pub struct PageOp {
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

const fn op<O: Typed>(args: &'static str, what: &'static str) -> PageOp {
    PageOp {
        name: O::NAME,
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

const fn read<O: Typed>(args: &'static str, what: &'static str) -> PageOp {
    PageOp { retried: true, ..op::<O>(args, what) }
}

const fn frames(p: PageOp, frames: Frames) -> PageOp {
    PageOp { frames, ..p }
}

const fn points(p: PageOp) -> PageOp {
    PageOp { points: true, ..p }
}

const fn no_tab(p: PageOp) -> PageOp {
    PageOp { tab: false, library: false, ..p }
}

const fn long(p: PageOp) -> PageOp {
    PageOp { long: true, tab: false, library: false, ..p }
}

/// Run by the host, not in the page library.
const fn host(p: PageOp) -> PageOp {
    PageOp { library: false, ..p }
}

/// Every page operation, in the order the docs list them.
pub const PAGE_OPS: &[PageOp] = &[
    // Reading the page.
    frames(
        read::<typed::Snapshot>(
            "mode: ax|text|markdown|dom, ref, filter, depth, max_chars",
            "the page as roles and names with refs, or as text, Markdown or HTML",
        ),
        Frames::Snapshot,
    ),
    frames(
        read::<typed::Find>(
            "query, limit, scores",
            "elements matching a description, best first, with refs",
        ),
        Frames::Wide,
    ),
    frames(
        read::<typed::Query>(
            "selector | xpath, limit",
            "elements matching a CSS selector or XPath, with refs",
        ),
        Frames::Wide,
    ),
    frames(
        op::<typed::ResolveQuery>(
            "query",
            "the ref of the best match of a description (ELEMENT_NOT_FOUND if none)",
        ),
        Frames::Wide,
    ),
    op::<typed::Describe>(
        "ref | selector",
        "an element's role, name, state, tag and whether it is focusable, native or listening for clicks",
    ),
    read::<typed::ExtractStatic>(
        "html, url, mode: markdown|text, max_chars",
        "the title, links and content of fetched HTML, read without rendering it",
    ),
    op::<typed::Extract>(
        "schema, ref, selector, item_selector",
        "structured data read from the page by a JSON Schema",
    ),
    op::<typed::Shown>(
        "ref, name",
        "the value a form field shows (a select's chosen label, a checkbox's state)",
    ),
    op::<typed::ValueOf>("ref", "a field's current value"),
    op::<typed::FieldSecrets>(
        "keys, refs",
        "the values typed into password and one-time-code fields (for redaction)",
    ),
    read::<typed::Ping>("", "the page's URL and readiness"),
    host(read::<typed::Wall>(
        "",
        "a login form or CAPTCHA shown without a sign-out control: right after `navigate` or `history`, as the document was at its load event; else read at once (it does not wait for the network quiet a navigation leaves owed)",
    )),
    // Acting on elements.
    points(op::<typed::Point>(
        "ref, how: plain|center|sample",
        "the viewport point to click an element at",
    )),
    points(op::<typed::Actionable>(
        "ref, timeout_ms, enabled, describe, watch",
        "wait until an element can take an event (visible, enabled, not moving, not covered): its point; with describe, the element as describe tells it; with watch, the watch of what the event changes starts then (its token)",
    )),
    points(op::<typed::Relocate>(
        "ref, role, name",
        "the element a ref meant, found again by role and name, with its point",
    )),
    host(op::<typed::Act>(
        "ref | query, action: click|double_click|hover|press, key, timeout_ms, other_ways",
        "the truthful action in one call: wait until the element can take it, click, count it only if it reached the element and had its effect (other ways tried on a custom element that ignored the mouse, unless other_ways is false); press: focus it, send the key, count it only if it reached it; what it changed",
    )),
    op::<typed::JsClick>(
        "ref",
        "a click dispatched in the page's script (when trusted input cannot reach the element)",
    ),
    op::<typed::Focus>("ref", "focus an element"),
    op::<typed::SetValue>("ref, value", "set a field's value as typing would, events included"),
    op::<typed::PickOption>(
        "ref, name",
        "choose the option of a select or listbox with that label",
    ),
    frames(
        op::<typed::Fill>(
            "fields, refs, submit",
            "fill a form's fields by label or ref, optionally submit it",
        ),
        Frames::Fields,
    ),
    op::<typed::Scroll>("direction, amount, to, ref", "scroll the page or an element"),
    points(op::<typed::DragInfo>(
        "source | source_selector, target | target_selector",
        "the points of a drag's source and target",
    )),
    op::<typed::Html5Drag>(
        "source | source_selector, target | target_selector",
        "an HTML5 drag and drop dispatched in the page",
    ),
    op::<typed::Check>(
        "type: selector|selector_hidden, value, visible",
        "whether a wait's condition holds now (the host's own waits)",
    ),
    op::<typed::Element>(
        "ref | selector",
        "the element itself (a remote object, for the host's own use)",
    ),
    op::<typed::FileInput>(
        "ref | selector",
        "the file input a ref or selector names (for set-files)",
    ),
    op::<typed::FilesOf>("ref | selector", "the file names a file input now holds"),
    op::<typed::Storage>(
        "type: local|session, action: get|set|remove|clear|keys, key, value",
        "the page's localStorage or sessionStorage",
    ),
    // What an action changed.
    op::<typed::Watch>("ref", "start watching what an action changes (returns a token)"),
    op::<typed::Settle>(
        "token, idle_ms, quiet_ms, max_ms, wait_ms, keep",
        "what the action changed once the DOM and the requests it started settle",
    ),
    op::<typed::Unwatch>("", "stop watching"),
    host(op::<typed::Wait>(
        "type: selector|selector_hidden|function|navigation|url_match|timeout, value, visible, token",
        "wait for a condition on the page",
    )),
    host(op::<typed::WaitLoad>("", "wait for the load event")),
    host(op::<typed::NetworkIdle>(
        "quiet_ms",
        "wait until no request has been in flight for quiet_ms",
    )),
    // Recordings.
    op::<typed::Identify>("ref", "an element's role, name and rank, to find it again in a replay"),
    op::<typed::Locate>(
        "role, name, nth",
        "a fresh ref for an element found by role, name and rank",
    ),
    // The tab.
    host(op::<typed::Dialog>("", "the open JavaScript dialog, if any")),
    host(op::<typed::HandleDialog>("accept, promptText", "answer the open JavaScript dialog")),
    host(op::<typed::Console>("clear, level, limit", "the console messages of the tab")),
    host(op::<typed::Cookies>(
        "action: get|set|delete|clear, name, value, domain, path, secure, httpOnly, sameSite, expires",
        "the cookies of the page's site",
    )),
    host(op::<typed::NetworkCapture>(
        "action: start|stop|get|clear, include_bodies, limit",
        "the network requests of the tab",
    )),
    host(op::<typed::NetworkConditions>(
        "preset, cpu_slowdown",
        "emulate a network (offline, slow 3G, ...) or stop emulating",
    )),
    host(op::<typed::EvidenceBundle>(
        "include: [dom, screenshot, network, console]",
        "write the page's evidence (DOM, screenshot, network, console) to a bundle and return its manifest",
    )),
    // Without a tab.
    long(op::<typed::VisitBatch>(
        "urls, concurrency, format: markdown|text|structured|raw|none, max_chars, timeout_ms, script, render: auto|always",
        "load pages in parallel worker tabs: status, title, links, content, the script's value",
    )),
    long(op::<typed::Sleep>("ms", "pause (bounded)")),
    no_tab(op::<typed::NewIsolatedTab>(
        "url, spread",
        "a tab in a browser context of its own, not made current; closing it disposes of the context",
    )),
    no_tab(op::<typed::ProfileStatus>(
        "",
        "the browser's profile: managed or attached, persistent or not",
    )),
    no_tab(op::<typed::ListProfiles>("", "the browser profiles known")),
];

/// The operation named `name`.
pub fn page_op(name: &str) -> Option<&'static PageOp> {
    PAGE_OPS.iter().find(|o| o.name == name)
}

/// Every name, for an error that lists them.
pub fn names() -> String {
    PAGE_OPS.iter().map(|o| o.name).collect::<Vec<_>>().join(", ")
}

/// The table as Markdown (`docs/page-ops.md`).
pub fn markdown() -> String {
    let mut md = String::from(
        "# Page operations\n\nWhat a plugin can ask of a tab through the `browser` interface's \
         `page-op` (`ochre_sdk::browser::page_op`): the operation's name, its arguments (a JSON \
         object) and what it returns (JSON). Generated from `ochre_browser::ops::PAGE_OPS`. \
         The typed ones are also reached with `ochre_sdk::browser::run` and the arguments' type \
         named (in `ochre_sdk::browser::ops`), whose result is typed too.\n\n\
         | Operation | Arguments | What it does | Runs on |\n|---|---|---|---|\n",
    );
    for o in PAGE_OPS {
        let on = match (o.tab, o.frames) {
            (false, _) => "no tab",
            (true, Frames::One) => "the tab (the refs' document)",
            (true, Frames::Wide) => "the page and its cross-site frames",
            (true, Frames::Snapshot) => "the page and its cross-site frames (but `dom`)",
            (true, Frames::Fields) => "the page's form, else a frame with every field",
        };
        // A `|` inside a table cell is escaped (GitHub's tables), code spans too.
        let cell = |s: &str| s.replace('|', "\\|");
        let args =
            if o.args.is_empty() { "—".to_owned() } else { format!("`{{{}}}`", cell(o.args)) };
        let typed = ochre_protocol::page_ops::TYPED.iter().find(|(n, _)| *n == o.name);
        let name = match typed {
            Some((_, ty)) => format!("`{}` (`ops::{ty}`)", o.name),
            None => format!("`{}`", o.name),
        };
        md.push_str(&format!("| {name} | {args} | {} | {on} |\n", cell(o.what)));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The argument names a row of the table documents: `mode: a|b, ref | selector,
    /// include: [x, y]` names `mode`, `ref`, `selector` and `include`.
    fn documented(args: &str) -> Vec<String> {
        let (mut parts, mut depth, mut cur) = (Vec::new(), 0, String::new());
        for c in args.chars() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                ',' if depth == 0 => parts.push(std::mem::take(&mut cur)),
                _ => cur.push(c),
            }
        }
        parts.push(cur);
        let mut names: Vec<String> = parts
            .iter()
            .flat_map(|p| p.split(':').next().unwrap_or_default().split('|'))
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn every_operation_is_typed_with_exactly_the_arguments_the_table_names() {
        use ochre_protocol::page_ops::{TYPED, arg_names};
        let example = documented("mode: a|b, ref | selector, include: [x, y]");
        assert_eq!(example, ["include", "mode", "ref", "selector"]);
        assert_eq!(TYPED.len(), PAGE_OPS.len(), "typed and documented operations differ");
        for o in PAGE_OPS {
            let typed = arg_names(o.name).unwrap_or_else(|| panic!("{} has no type", o.name));
            let mut typed: Vec<String> = typed.iter().map(|n| (*n).to_owned()).collect();
            typed.sort();
            assert_eq!(typed, documented(o.args), "{}: its type's fields vs the table", o.name);
        }
    }

    #[test]
    fn arguments_are_checked_against_the_operation_type() {
        use ochre_protocol::page_ops::check_args;
        use serde_json::json;
        assert_eq!(check_args("nope", &json!({})), None);
        assert_eq!(check_args("sleep", &json!({"ms": 5})), Some(Ok(())));
        assert_eq!(check_args("ping", &json!(null)), Some(Ok(())));
        // Absent options may be null, as `json!` writes a `None`.
        assert_eq!(check_args("snapshot", &json!({"mode": "text", "ref": null})), Some(Ok(())));
        let e = check_args("sleep", &json!({"ms": "5"})).and_then(Result::err).expect("an error");
        assert_eq!(e.field, "ms");
        assert!(e.message.starts_with("sleep: invalid type"), "{}", e.message);
        let e = check_args("find", &json!({"query": "x", "limt": 3})).and_then(Result::err);
        let e = e.expect("an unknown argument is refused");
        assert!(e.message.contains("unknown field `limt`"), "{}", e.message);
        let e = check_args("fill", &json!({"fields": {"a": 1}, "submit": "yes"}));
        assert_eq!(e.and_then(Result::err).expect("an error").field, "submit");
        let e = check_args("find", &json!({})).and_then(Result::err).expect("query is required");
        assert!(e.message.contains("missing field `query`"), "{}", e.message);
    }

    #[test]
    fn names_are_unique_and_the_page_library_runs_exactly_the_tables_library_operations() {
        let mut seen = std::collections::BTreeSet::new();
        for o in PAGE_OPS {
            assert!(seen.insert(o.name), "{} twice", o.name);
        }
        // The keys of the page library's `ops` object.
        let js = include_str!("page.js");
        let start = js.find("  const ops = {").expect("ops object");
        let body = &js[start..];
        let body = &body[..body.find("\n  };").expect("end of ops")];
        let mut in_js = Vec::new();
        for line in body.lines().skip(1) {
            let Some(rest) = line.strip_prefix("    ") else { continue };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            let after = rest[name.len()..].chars().next();
            if !name.is_empty() && matches!(after, Some(':' | ',' | '(')) {
                in_js.push(name);
            }
        }
        assert!(in_js.len() > 25, "{in_js:?}");
        in_js.sort();
        let mut library: Vec<&str> =
            PAGE_OPS.iter().filter(|o| o.library).map(|o| o.name).collect();
        library.sort();
        // Both ways: an operation the table says the page library runs is in
        // page.js's table, and page.js runs nothing the table does not name.
        assert_eq!(in_js, library, "page.js's operations vs the table's page-library ones");
    }
}
