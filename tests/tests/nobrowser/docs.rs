//! The README and `docs/` as a reader follows them: every relative link leads
//! to a file that is there, every `#anchor` to a heading of that file (as
//! GitHub names headings), and the README stays a first screen, not a manual.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::catalogue::repo_root;
use anyhow::{Context as _, Result};

/// The Markdown files a reader meets: the README and everything under docs/.
fn markdown_files() -> Result<Vec<PathBuf>> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("{}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The text outside fenced code blocks and inline code spans.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code: drop what is between backticks.
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// The anchors of a file's headings, as GitHub makes them: lower case, spaces
/// to hyphens, punctuation other than hyphens and underscores dropped; a
/// repeated one gets `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut name = slug.clone();
        let mut n = 0;
        while seen.contains(&name) {
            n += 1;
            name = format!("{slug}-{n}");
        }
        seen.insert(name);
    }
    seen
}

/// Each `[text](target)` link of the prose: (line, target).
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in prose(text).lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((i + 1, after[..end].to_owned()));
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_link_and_anchor_of_the_docs_resolves() -> Result<()> {
    let files = markdown_files()?;
    assert!(files.len() >= 15, "only {} Markdown files found", files.len());
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file)?;
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let dest: PathBuf = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap_or(Path::new(".")).join(path)
            };
            let at = format!("{}:{line}: ({target})", file.strip_prefix(repo_root())?.display());
            if !dest.exists() {
                broken.push(format!("{at}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let known = anchors(&std::fs::read_to_string(&dest)?);
                if !known.contains(anchor) {
                    broken.push(format!("{at}: no heading makes #{anchor}"));
                }
            }
        }
    }
    assert!(checked >= 60, "only {checked} links were checked: the parser missed them");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    Ok(())
}

/// Every page of docs/ is reached from the index, and the README is a first
/// screen (a few hundred lines at most) that links to it.
#[test]
fn the_readme_is_short_and_the_index_reaches_every_page() -> Result<()> {
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md"))?;
    let lines = readme.lines().count();
    assert!(lines <= 200, "the README has {lines} lines: the reference belongs in docs/");
    assert!(readme.contains("](docs/README.md)"), "the README does not link the docs' index");
    let index = std::fs::read_to_string(root.join("docs/README.md"))?;
    let linked: BTreeSet<String> = links(&index)
        .into_iter()
        .map(|(_, t)| t.split('#').next().unwrap_or_default().to_owned())
        .collect();
    for entry in std::fs::read_dir(root.join("docs"))? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "README.md" {
            assert!(linked.contains(&name), "docs/{name} is not in docs/README.md");
        }
    }
    Ok(())
}
