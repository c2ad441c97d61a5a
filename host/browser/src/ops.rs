//! What each page operation is, in one table, defined next to its types in
//! `ochre_protocol::page_ops` ([`PAGE_OPS`] is its `SPECS`): its arguments in
//! words, what it does, and how the host runs it (whether a read is retried
//! in the new document when a navigation cuts it short, whether it covers a
//! page's cross-site frames, whether its result holds viewport points that a
//! frame's offset shifts, whether it is long by design, whether it needs a
//! tab). The dispatch ([`crate::HostBrowser::page_op`]) and the host's plugin
//! interface read it, `docs/page-ops.md` is generated from it, and a call is
//! checked against its operation's type before anything touches the browser.

pub use ochre_protocol::page_ops::{Frames, Spec as PageOp};

/// Every page operation, in the order the docs list them.
pub const PAGE_OPS: &[PageOp] = ochre_protocol::page_ops::SPECS;

/// The operation named `name`.
pub use ochre_protocol::page_ops::spec as page_op;

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
        let js = crate::library::PAGE_JS;
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
