//! Inside each of the host's crates (`ochre-host`, `ochre-browser`, `ochre-runtime`,
//! `ochre-mcp`), modules import each other without cycles: reading the crate's
//! `src`, the graph of `crate::a` and `super::a` references between modules
//! (top-level modules, and sibling modules inside one) has no cycle. Between
//! crates, Cargo forbids up-imports (see `layering.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path (`["browser", "pageops"]`) from its file.
fn module_of(src: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Vec<String> =
        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    (parts != ["lib"] && parts != ["main"]).then_some(parts)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules `code` (of module `me`) names, at `depth` path segments.
fn references(me: &[String], code: &str, depth: usize) -> BTreeSet<String> {
    // Unit tests may reach anywhere.
    let code = code.split("#[cfg(test)]\nmod tests").next().unwrap_or(code);
    let mut out = BTreeSet::new();
    for line in code.lines().map(|l| l.split("//").next().unwrap_or("")) {
        for (prefix, base) in [("crate::", &[][..]), ("super::", &me[..me.len() - 1])] {
            for (i, _) in line.match_indices(prefix) {
                let before = line[..i].chars().last();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let rest = &line[i + prefix.len()..];
                let mut path: Vec<String> = base.to_vec();
                if let Some(group) = rest.strip_prefix('{') {
                    // `crate::{a, b::c}`: each first segment.
                    let group = group.split('}').next().unwrap_or("");
                    for item in group.split(',') {
                        let seg: String = item
                            .trim()
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        let mut p = path.clone();
                        p.push(seg);
                        out.insert(p[..depth.min(p.len())].join("::"));
                    }
                    continue;
                }
                path.extend(
                    rest.split("::")
                        .map(|s| {
                            s.chars()
                                .take_while(|c| c.is_alphanumeric() || *c == '_')
                                .collect::<String>()
                        })
                        .take_while(|s| !s.is_empty()),
                );
                out.insert(path[..depth.min(path.len())].join("::"));
            }
        }
    }
    out
}

/// A cycle of the graph, if there is one.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_owned(), 1);
        stack.push(n.to_owned());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m.as_str()) {
                Some(1) => {
                    let at = stack.iter().position(|s| s == m).unwrap_or(0);
                    let mut c = stack[at..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(n.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n.as_str()) {
            let found = visit(n, edges, &mut state, &mut Vec::new());
            if found.is_some() {
                return found;
            }
        }
    }
    None
}

#[test]
fn the_host_modules_import_each_other_without_cycles() {
    let host = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    for krate in ["core", "browser", "runtime", "mcp"] {
        let src = host.join(krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for depth in [1, 2, 3] {
            let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            let mut modules = 0;
            for file in &files {
                let Some(me) = module_of(&src, file) else {
                    continue;
                };
                if me.len() < depth {
                    continue;
                }
                modules += 1;
                let code = std::fs::read_to_string(file).expect("read");
                let name = me[..depth].join("::");
                for r in references(&me, &code, depth) {
                    // A module and its own parent or children are one unit.
                    if r != name
                        && !r.starts_with(&format!("{name}::"))
                        && !name.starts_with(&format!("{r}::"))
                    {
                        edges.entry(name.clone()).or_default().insert(r);
                    }
                }
            }
            assert!(depth > 1 || modules > 2, "{krate}: {modules} modules read");
            if let Some(c) = cycle(&edges) {
                panic!("{krate}: modules import each other in a circle: {}", c.join(" -> "));
            }
        }
    }
}

#[test]
fn a_cycle_is_found() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    assert!(cycle(&edges).is_none());
    edges.entry("c".into()).or_default().insert("a".into());
    assert_eq!(cycle(&edges), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    let me = vec!["browser".to_owned(), "visit".to_owned()];
    let refs =
        references(&me, "use super::library::page_library;\nuse crate::{error::X, tool};", 2);
    assert!(
        refs.contains("browser::library") && refs.contains("error") && refs.contains("tool"),
        "{refs:?}"
    );
}
