//! What each page operation is, in one table: its name, its arguments, what it
//! does, and how the host runs it (whether a read is retried in the new document
//! when a navigation cuts it short, whether it covers a page's cross-site
//! frames, whether its result holds viewport points that a frame's offset
//! shifts, whether it is long by design, whether it needs a tab). The dispatch
//! ([`crate::BrowserManager::page_op`]) and the host's plugin interface read it,
//! `docs/page-ops.md` is generated from it, and a name not in it is refused
//! before anything touches the browser.

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
}

const fn op(name: &'static str, args: &'static str, what: &'static str) -> PageOp {
    PageOp {
        name,
        args,
        what,
        retried: false,
        frames: Frames::One,
        points: false,
        long: false,
        tab: true,
    }
}

const fn read(name: &'static str, args: &'static str, what: &'static str) -> PageOp {
    PageOp { retried: true, ..op(name, args, what) }
}

const fn frames(p: PageOp, frames: Frames) -> PageOp {
    PageOp { frames, ..p }
}

const fn points(p: PageOp) -> PageOp {
    PageOp { points: true, ..p }
}

const fn no_tab(p: PageOp) -> PageOp {
    PageOp { tab: false, ..p }
}

const fn long(p: PageOp) -> PageOp {
    PageOp { long: true, tab: false, ..p }
}

/// Every page operation, in the order the docs list them.
pub const PAGE_OPS: &[PageOp] = &[
    // Reading the page.
    frames(
        read(
            "snapshot",
            "mode: ax|text|markdown|dom, ref, filter, depth, max_chars",
            "the page as roles and names with refs, or as text, Markdown or HTML",
        ),
        Frames::Snapshot,
    ),
    frames(
        read("find", "query, limit", "elements matching a description, best first, with refs"),
        Frames::Wide,
    ),
    frames(
        read(
            "query",
            "selector | xpath, limit",
            "elements matching a CSS selector or XPath, with refs",
        ),
        Frames::Wide,
    ),
    frames(
        op(
            "resolve_query",
            "query",
            "the ref of the best match of a description (ELEMENT_NOT_FOUND if none)",
        ),
        Frames::Wide,
    ),
    op(
        "describe",
        "ref | selector",
        "an element's role, name, state, tag and whether it is focusable, native or listening for clicks",
    ),
    read(
        "extract_static",
        "schema, ref, selector, item_selector",
        "structured data read from the page by a JSON Schema, without running the page",
    ),
    op(
        "extract",
        "schema, ref, selector, item_selector",
        "structured data read from the page by a JSON Schema",
    ),
    op(
        "shown",
        "ref",
        "the value a form field shows (a select's chosen label, a checkbox's state)",
    ),
    op("value_of", "ref", "a field's current value"),
    op(
        "field_secrets",
        "",
        "the values typed into password and one-time-code fields (for redaction)",
    ),
    read("ping", "", "the page's URL and readiness"),
    // Acting on elements.
    points(op(
        "point",
        "ref, how: plain|center|sample",
        "the viewport point to click an element at",
    )),
    points(op(
        "actionable",
        "ref, timeout_ms",
        "whether an element can take an event now (visible, enabled, not covered), with its point",
    )),
    points(op(
        "relocate",
        "ref, role, name",
        "the element a ref meant, found again by role and name, with its point",
    )),
    op(
        "js_click",
        "ref",
        "a click dispatched in the page's script (when trusted input cannot reach the element)",
    ),
    op("focus", "ref", "focus an element"),
    op("set_value", "ref, value", "set a field's value as typing would, events included"),
    op("pick_option", "ref, name", "choose the option of a select or listbox with that label"),
    frames(
        op(
            "fill",
            "fields, refs, submit",
            "fill a form's fields by label or ref, optionally submit it",
        ),
        Frames::Fields,
    ),
    op("scroll", "direction, amount, to, ref", "scroll the page or an element"),
    points(op(
        "drag_info",
        "source | source_selector, target | target_selector",
        "the points of a drag's source and target",
    )),
    op(
        "html5_drag",
        "source | source_selector, target | target_selector",
        "an HTML5 drag and drop dispatched in the page",
    ),
    op(
        "check",
        "type: selector|selector_hidden, value, visible",
        "whether a wait's condition holds now (the host's own waits)",
    ),
    op("element", "ref | selector", "the element itself (a remote object, for the host's own use)"),
    op("file_input", "target", "the file input a ref or selector names (for set-files)"),
    op("files_of", "target", "the file names a file input now holds"),
    op(
        "storage",
        "type: local|session, action: get|set|delete|clear, key, value",
        "the page's localStorage or sessionStorage",
    ),
    // What an action changed.
    op("watch", "ref", "start watching what an action changes (returns a token)"),
    op(
        "settle",
        "token, idle_ms, quiet_ms, max_ms, wait_ms",
        "what the action changed once the DOM and the requests it started settle",
    ),
    op("unwatch", "", "stop watching"),
    op(
        "wait",
        "type: selector|selector_hidden|function|navigation|url_match|timeout, value, visible",
        "wait for a condition on the page",
    ),
    op("wait_load", "", "wait for the load event"),
    op("network_idle", "quiet_ms", "wait until no request has been in flight for quiet_ms"),
    // Recordings.
    op("identify", "ref", "an element's role, name and rank, to find it again in a replay"),
    op("locate", "role, name, nth", "a fresh ref for an element found by role, name and rank"),
    // The tab.
    op("dialog", "", "the open JavaScript dialog, if any"),
    op("handle_dialog", "accept, promptText", "answer the open JavaScript dialog"),
    op("console", "clear, level, limit", "the console messages of the tab"),
    op(
        "cookies",
        "action: get|set|delete|clear, name, value, domain, path, secure, httpOnly, sameSite, expires",
        "the cookies of the page's site",
    ),
    op(
        "network_capture",
        "action: start|stop|get|clear, include_bodies, limit",
        "the network requests of the tab",
    ),
    op(
        "network_conditions",
        "preset",
        "emulate a network (offline, slow 3G, ...) or stop emulating",
    ),
    op(
        "evidence_bundle",
        "include: [dom, screenshot, network, console]",
        "write the page's evidence (DOM, screenshot, network, console) to a bundle and return its manifest",
    ),
    // Without a tab.
    long(op(
        "visit_batch",
        "urls, concurrency, format: markdown|text|structured|raw|none, max_chars, timeout_ms, script",
        "load pages in parallel worker tabs: status, title, links, content, the script's value",
    )),
    long(op("sleep", "ms", "pause (bounded)")),
    no_tab(op(
        "new_isolated_tab",
        "url, spread",
        "a tab in a browser context of its own, not made current; closing it disposes of the context",
    )),
    no_tab(op(
        "profile_status",
        "",
        "the browser's profile: managed or attached, persistent or not",
    )),
    no_tab(op("list_profiles", "", "the browser profiles known")),
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

    #[test]
    fn every_typed_operation_is_in_the_table_with_its_arguments() {
        use ochre_protocol::page_ops::*;
        // Each typed operation's name and JSON keys, as its type writes them.
        fn fields<O: PageOp>(op: O) -> (&'static str, Vec<String>) {
            let v = serde_json::to_value(op).unwrap_or_default();
            (O::NAME, v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default())
        }
        let typed = [
            fields(Sleep { ms: 1 }),
            fields(Describe::of_ref("ax_1")),
            fields(ResolveQuery { query: "q".into() }),
            fields(NetworkIdle { quiet_ms: Some(1) }),
            fields(Watch { ref_id: Some("ax_1".into()) }),
            fields(Unwatch {}),
            fields(Focus::of("ax_1")),
            fields(ValueOf::of("ax_1")),
            fields(JsClick::of("ax_1")),
        ];
        assert_eq!(typed.len(), TYPED.len());
        for (name, args) in &typed {
            assert!(TYPED.iter().any(|(n, _)| n == name), "{name}");
            let op = page_op(name).unwrap_or_else(|| panic!("typed op {name} not in the table"));
            for a in args {
                assert!(op.args.contains(a.as_str()), "{name}: `{a}` not in {:?}", op.args);
            }
        }
    }

    #[test]
    fn names_are_unique_and_the_page_library_has_no_op_outside_the_table() {
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
            let name: String =
                rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
            let after = rest[name.len()..].chars().next();
            if !name.is_empty() && matches!(after, Some(':' | ',' | '(')) {
                in_js.push(name);
            }
        }
        assert!(in_js.len() > 25, "{in_js:?}");
        let missing: Vec<&String> = in_js.iter().filter(|n| page_op(n).is_none()).collect();
        assert!(missing.is_empty(), "page.js ops not in the table: {missing:?}");
    }
}
