//! `ochre guide`: the guide for coding agents, shipped in the binary so it
//! always matches it; `ochre guide install` writes it as a skill and its
//! short form into AGENTS.md.

use std::path::Path;

use anyhow::Context as _;

/// The guide (a SKILL.md: front matter, then Markdown).
pub(crate) const GUIDE: &str = include_str!("../guide.md");

/// Where AGENTS.md's ochre block begins and ends (replaced on each install).
const BEGIN: &str = "<!-- ochre guide: begin (`ochre guide install` rewrites this block) -->";
const END: &str = "<!-- ochre guide: end -->";

/// The AGENTS.md block: what ochre is for and where the whole guide is.
fn agents_block() -> String {
    format!(
        "{BEGIN}\n## Browser: ochre\n\
Drive a browser with the `ochre` command (run `ochre guide` for the whole guide). \
The loop: `ochre open URL`, `ochre snapshot` (roles, names and refs like ax_7), act by ref \
(`ochre click ax_7`, `ochre fill ax_4 \"text\"`, `ochre press Enter`), read the answer, snapshot \
again after the page changed. Exit codes: 0 done, 1 the page said no (snapshot again), 2 a wrong \
command, 3 a guard refused (ask the person), 4 the session's daemon went away (run it again), \
5 ochre or the browser failed. Sign in with `ochre sign-in NAME` (a stored credential); never \
type a password you read; hand CAPTCHAs and payments to a person (`ochre handoff --reason ...`). \
Every tool of `ochre tools` is a command too (`ochre TOOL --help`).\n{END}\n"
    )
}

/// Write DIR/ochre/SKILL.md and (with `agents_md`) the block in ./AGENTS.md.
pub(crate) fn install(dir: &Path, agents_md: bool) -> anyhow::Result<()> {
    let skill = dir.join("ochre").join("SKILL.md");
    if let Some(parent) = skill.parent() {
        std::fs::create_dir_all(parent).with_context(|| parent.display().to_string())?;
    }
    ochre_host::stores::write_atomic(&skill, GUIDE.as_bytes())
        .with_context(|| skill.display().to_string())?;
    crate::say!("wrote {}", skill.display());
    if agents_md {
        let path = Path::new("AGENTS.md");
        let old = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).context("reading AGENTS.md"),
        };
        let new = with_block(&old, &agents_block());
        ochre_host::stores::write_atomic(path, new.as_bytes()).context("writing AGENTS.md")?;
        crate::say!("wrote the ochre block of AGENTS.md");
    }
    Ok(())
}

/// `text` with its ochre block replaced by `block` (or `block` appended).
fn with_block(text: &str, block: &str) -> String {
    if let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END))
        && b < e
    {
        let after = &text[e + END.len()..];
        return format!("{}{}{}", &text[..b], block, after.strip_prefix('\n').unwrap_or(after));
    }
    let sep = if text.is_empty() || text.ends_with("\n\n") {
        ""
    } else if text.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    format!("{text}{sep}{block}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_block_is_replaced_not_repeated() {
        let block = agents_block();
        let once = with_block("# Project\n", &block);
        assert!(once.starts_with("# Project\n\n<!-- ochre guide: begin"), "{once}");
        let twice = with_block(&format!("{once}\nmore\n"), &block);
        assert_eq!(twice.matches(BEGIN).count(), 1, "{twice}");
        assert!(twice.ends_with("more\n"), "{twice}");
        assert_eq!(with_block("", &block), block);
    }

    #[test]
    fn the_guide_is_a_skill() {
        let front = GUIDE.strip_prefix("---\n").and_then(|g| g.split_once("\n---\n"));
        let (front, _) = front.expect("front matter");
        assert!(front.contains("name: ochre\n") && front.contains("description: "), "{front}");
    }
}
