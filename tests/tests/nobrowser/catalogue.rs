//! The tool catalogue: every tool has one capability group and one tier (the seed's
//! `lint:tools-capabilities`, as a test), `docs/tools.md` is generated from
//! `ochre tools --markdown` and kept fresh, and the default `tools/list` is pinned
//! by `fixtures/golden/tools-list.default.json`. Regenerate the files on purpose
//! with `OCHRE_UPDATE_GOLDEN=1`.

use std::path::PathBuf;

use anyhow::Result;
use ochre_tests::*;
use serde_json::Value;

fn ochre(data: &TempDir, args: &[&str]) -> Result<String> {
    let out = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(args)
        .output()?;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Ok(String::from_utf8(out.stdout)?)
}

pub(crate) fn repo_root() -> PathBuf {
    sites_dir().parent().and_then(|p| p.parent()).expect("repo root").to_path_buf()
}

/// Compare `got` with a checked-in file; on a difference, show where.
fn check_fresh(file: &PathBuf, got: &str) -> Result<()> {
    if std::env::var_os("OCHRE_UPDATE_GOLDEN").is_some() {
        std::fs::write(file, got)?;
    }
    let want = std::fs::read_to_string(file)?;
    if want != got {
        let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
        let at = w.iter().zip(&g).position(|(a, b)| a != b).unwrap_or(w.len().min(g.len()));
        panic!(
            "{} is out of date (regenerate with OCHRE_UPDATE_GOLDEN=1 if the change is deliberate); first difference at line {}:\n- {}\n+ {}",
            file.display(),
            at + 1,
            w.get(at).unwrap_or(&"<end>"),
            g.get(at).unwrap_or(&"<end>")
        );
    }
    Ok(())
}

#[test]
fn every_tool_has_one_group_and_one_tier() -> Result<()> {
    let (data, _plugins, dir) = data_and_plugins("catalogue", &["hello"]);
    let list: Vec<Value> =
        serde_json::from_str(&ochre(&data, &["--plugin-dir", &dir, "tools", "--json"])?)?;
    let mut names = std::collections::BTreeSet::new();
    for t in &list {
        let name = t["name"].as_str().expect("name");
        assert!(names.insert(name.to_owned()), "{name} twice");
        let group = t["group"].as_str().unwrap_or("");
        assert!(
            !group.is_empty()
                && group.bytes().all(|b| b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || b == b'-'
                    || b == b'_'),
            "{name}: group {group:?}"
        );
        let tier = t["tier"].as_u64().unwrap_or(0);
        assert!((1..=3).contains(&tier), "{name}: tier {tier}");
        assert!(t["purpose"].as_str().is_some_and(|p| p.len() > 10), "{name}: {t}");
    }
    for t in [
        "navigate",
        "read_page",
        "oc_journal",
        "expand_tools",
        "oc_totp_generate",
        "cookies",
        "list_profiles",
        "hello_greet",
    ] {
        assert!(names.contains(t), "{t} missing");
    }
    let groups: std::collections::BTreeSet<&str> =
        list.iter().filter_map(|t| t["group"].as_str()).collect();
    for g in ["core", "totp", "storage", "profile", "example"] {
        assert!(groups.contains(g), "{g} missing: {groups:?}");
    }
    Ok(())
}

#[test]
fn docs_tools_md_is_generated_from_the_catalogue() -> Result<()> {
    let data = TempDir::new("catalogue-md");
    let md = ochre(&data, &["tools", "--markdown"])?;
    assert!(md.contains("| core | 1 | `read_page` |"), "{md}");
    check_fresh(&repo_root().join("docs/tools.md"), &md)
}

#[tokio::test]
async fn default_tools_list_matches_the_golden_file() -> Result<()> {
    let data = TempDir::new("tools-golden");
    let client = stdio_client(data.path(), &[], &[]).await?;
    let tools = client.list_all_tools().await?;
    let got = serde_json::to_string_pretty(&tools)? + "\n";
    client.cancel().await?;
    check_fresh(&repo_root().join("fixtures/golden/tools-list.default.json"), &got)
}

/// `docs/errors.md`: every error code of the registry (`ochre-protocol`'s
/// `codes`, `ochre_sdk::codes` for plugins) with what it means, kept fresh.
#[test]
fn the_error_codes_are_documented_from_the_registry() -> Result<()> {
    let mut md = String::from(
        "# Error codes\n\nA failed tool call answers `{\"error\": {\"code\": ..., \"message\": ...}}`; the \
         code is stable and agents and clients may match on it. These are the codes ochre's host, \
         browser and built-in tools use (generated from `ochre_protocol::codes`; plugins get them as \
         `ochre_sdk::codes` and may add their own).\n\n| Code | Meaning |\n|---|---|\n",
    );
    for (code, meaning) in ochre_host::error::codes::ALL {
        md.push_str(&format!("| `{code}` | {} |\n", meaning.replace('|', "\\|")));
    }
    check_fresh(&repo_root().join("docs/errors.md"), &md)
}

/// Every error code the sources produce is one of the registry's: Rust code
/// names it as a `Code` variant (a code of text, `Code::named("...")`, only in
/// tests), the page library's `fail` codes are registered (and it is handed
/// the registry, refusing any other at run time), and the Python SDK's `Code`
/// class is generated from the registry and is what the SDK raises with.
#[test]
fn every_error_code_produced_is_registered() -> Result<()> {
    let root = repo_root();
    let registered: std::collections::BTreeSet<&str> =
        ochre_host::error::codes::ALL.iter().map(|(c, _)| *c).collect();
    let mut files = Vec::new();
    for dir in ["host", "plugins", "sdk"] {
        collect(&root.join(dir), &mut files);
    }
    let mut made_up = Vec::new();
    // Sources only: tests and examples play an embedder, whose codes are its own.
    let sources = files.iter().filter(|f| {
        f.extension().is_some_and(|e| e == "rs") && f.components().any(|c| c.as_os_str() == "src")
    });
    for file in sources {
        let text = std::fs::read_to_string(file)?;
        // Unit tests may make up codes.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let lines = code.lines().filter(|l| !l.trim_start().starts_with("//"));
        for line in lines.filter(|l| l.contains("Code::named(\"") || l.contains("Code::Plugin(\""))
        {
            made_up.push(format!("{}: {}", file.display(), line.trim()));
        }
    }
    assert!(made_up.is_empty(), "codes of text in sources (use a Code variant): {made_up:#?}");
    let page = ochre_host::browser::PAGE_JS;
    let mut unknown = Vec::new();
    let mut fails = 0;
    for (at, _) in page.match_indices("fail(") {
        let rest = page[at + 5..].trim_start();
        let Some(quoted) = rest.strip_prefix('\'') else { continue };
        fails += 1;
        let code: String = quoted.chars().take_while(|c| *c != '\'').collect();
        if !registered.contains(code.as_str()) {
            unknown.push(code);
        }
    }
    assert!(unknown.is_empty(), "page.js fails with unregistered codes: {unknown:?}");
    assert!(fails > 20, "page.js read: {fails} fail calls");
    assert!(page.contains("(function (KEY, nextLink, CODES) {"), "page.js is handed the registry");

    // The Python SDK's `Code` class, generated between its two marker lines.
    let path = root.join("sdk/python/ochre_sdk.py");
    let python = std::fs::read_to_string(&path)?;
    let (begin, end) =
        ("# every_error_code_produced_is_registered", "# ---- end of the error codes ----");
    let from = python.find(begin).expect("the SDK's begin marker");
    let from = from + python[from..].find('\n').expect("a line") + 1;
    let to = python.find(end).expect("the SDK's end marker");
    let mut block = String::from(
        "class Code:\n    \"\"\"The error codes ochre uses (docs/errors.md): \
         ``ToolError(Code.ELEMENT_NOT_FOUND, ...)``.\"\"\"\n\n",
    );
    for (code, meaning) in ochre_host::error::codes::ALL {
        block.push_str(&format!("    # {meaning}\n    {} = {code:?}\n", code.to_ascii_uppercase()));
    }
    let fresh = format!("{}{block}{}", &python[..from], &python[to..]);
    let python = if std::env::var_os("OCHRE_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &fresh)?;
        fresh.clone()
    } else {
        python
    };
    assert!(
        python == fresh,
        "sdk/python/ochre_sdk.py's Code class is out of date (regenerate with OCHRE_UPDATE_GOLDEN=1)"
    );
    // The SDK raises with the class, not with bare strings.
    let bare: Vec<&str> =
        python.lines().filter(|l| l.contains("_error(\"") || l.contains("cls(\"")).collect();
    assert!(bare.is_empty(), "the Python SDK raises with bare codes: {bare:?}");
    assert!(python.matches("Code.").count() >= 3, "the Python SDK read");
    Ok(())
}

fn collect(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() && !path.ends_with("target") && !path.ends_with("templates") {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// `docs/page-ops.md`: every page operation a plugin can ask for (the one table
/// of `ochre_browser::ops`), kept fresh.
#[test]
fn the_page_operations_are_documented_from_their_table() -> Result<()> {
    check_fresh(&repo_root().join("docs/page-ops.md"), &ochre_host::browser::ops::markdown())
}

/// The built-in plugins run page operations by their types
/// (`ochre_sdk::browser::run`), never by a name and JSON: a misspelt
/// operation or argument is a compile error there, and the table's check of
/// the types covers every operation they use.
#[test]
fn the_plugins_run_page_operations_by_their_types() -> Result<()> {
    let mut files = Vec::new();
    collect(&repo_root().join("plugins"), &mut files);
    let (mut typed, mut by_name) = (0, Vec::new());
    for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "rs")) {
        let text = std::fs::read_to_string(file)?;
        typed += text.matches("ops::").count();
        for (n, line) in text.lines().enumerate() {
            if line.contains("page_op(") {
                by_name.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(typed > 40, "only {typed} typed operations found: is the search looking in plugins/?");
    assert!(by_name.is_empty(), "page operations run by name: {by_name:#?}");
    Ok(())
}

/// The arguments a tool row of docs/using.md writes (`{url, tabId?, ref \| query, ...}`):
/// each name, and whether the row says it is required (no `?`, not one of
/// alternatives). `None` for a row that writes no argument list.
fn readme_arguments(cell: &str) -> Option<Vec<(String, bool)>> {
    let body = cell.strip_prefix("`{")?;
    // The list ends at the `}` that closes it (lists nest: `clip?: {x, y}`).
    let (mut depth, mut end) = (0i32, None);
    for (i, c) in body.char_indices() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' if depth == 0 => {
                end = Some(i);
                break;
            }
            '}' | ']' | ')' => depth -= 1,
            _ => {}
        }
    }
    let body = &body[..end?];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&body[start..]);
    let mut out = Vec::new();
    for item in items {
        // What follows `:` is the value's shape, `(...)` a default or a note,
        // `[...]` an array's items.
        let mut head = String::new();
        let mut depth = 0;
        for c in item.split(':').next().unwrap_or("").chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ if depth == 0 => head.push(c),
                _ => {}
            }
        }
        let alternatives: Vec<&str> =
            head.split("\\|").map(str::trim).filter(|a| !a.is_empty()).collect();
        for a in &alternatives {
            let name: String =
                a.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            assert!(!name.is_empty(), "cannot read an argument in {item:?} of {cell:?}");
            out.push((name, alternatives.len() == 1 && !a.ends_with('?')));
        }
    }
    Some(out)
}

/// Arguments a call needs though the schema cannot require them: one of two
/// names is needed, and the other is an alias the schema hides from clients
/// (`form_input`'s other is the unlisted `target` a replay names a field by).
fn required_in_effect(tool: &str, arg: &str) -> bool {
    matches!((tool, arg), ("javascript_tool", "code") | ("form_input", "ref"))
}

/// Every tool row of the reference (`docs/using.md`) agrees with the tool's
/// schema: each argument it writes exists under that name, and it writes as
/// required exactly the arguments the schema requires.
#[test]
fn the_reference_tool_rows_match_the_tool_schemas() -> Result<()> {
    let data = TempDir::new("catalogue-readme");
    let list: Vec<Value> = serde_json::from_str(&ochre(&data, &["tools", "--json"])?)?;
    let readme = std::fs::read_to_string(repo_root().join("docs/using.md"))?;
    let mut rows = std::collections::BTreeMap::new();
    for line in readme.lines() {
        let cells: Vec<&str> = line.split(" | ").collect();
        if cells.len() < 3 || !cells[0].starts_with("| `") {
            continue;
        }
        let name = cells[0].trim_start_matches("| `").trim_end_matches('`');
        if list.iter().any(|t| t["name"] == name) {
            rows.insert(name.to_owned(), cells[2].trim().to_owned());
        }
    }
    let mut wrong = Vec::new();
    for t in &list {
        let name = t["name"].as_str().expect("name");
        let Some(cell) = rows.get(name) else {
            wrong.push(format!("{name}: no row in docs/using.md's tool tables"));
            continue;
        };
        let Some(args) = readme_arguments(cell) else {
            continue;
        };
        let schema = &t["inputSchema"];
        let props = schema["properties"].as_object().cloned().unwrap_or_default();
        let required: std::collections::BTreeSet<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (arg, req) in &args {
            if !props.contains_key(arg) {
                wrong.push(format!(
                    "{name}: docs/using.md writes `{arg}`, the schema has no such argument (it has {:?})",
                    props.keys().collect::<Vec<_>>()
                ));
            } else if *req && !required.contains(arg.as_str()) && !required_in_effect(name, arg) {
                wrong.push(format!(
                    "{name}: docs/using.md writes `{arg}` as required, the schema does not require it"
                ));
            }
        }
        for r in &required {
            if !args.iter().any(|(a, req)| a == r && *req) {
                wrong.push(format!(
                    "{name}: the schema requires `{r}`, docs/using.md does not write it as required"
                ));
            }
        }
    }
    assert!(rows.len() >= 50, "docs/using.md's tool rows were not found ({} rows)", rows.len());
    assert!(
        wrong.is_empty(),
        "docs/using.md's tool rows disagree with the schemas:\n{}",
        wrong.join("\n")
    );
    Ok(())
}
