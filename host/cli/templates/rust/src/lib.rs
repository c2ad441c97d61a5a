//! {{name}}: an ochre tool plugin.
//!
//! A tool is one function: its doc comment is the description the agent reads,
//! its argument struct is the JSON Schema of its arguments, and the attribute
//! names it (see the ochre-sdk docs for `read_only`, `tier`, `scope`, ...).
//! `register_plugin!` at the end lists the tools and the host interfaces the
//! plugin asks for: the host links those and nothing else.

use ochre_sdk::{Output, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `{{tool}}`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HeadingsArgs {
    /// The deepest heading level to list: 1 lists only h1, 6 lists h1 to h6 (default 3).
    #[schemars(range(min = 1, max = 6))]
    max_level: Option<u8>,
}

/// List the headings (h1, h2, ...) of the current page, one per line, indented by
/// level. Use it to see a page's outline before reading it all.
#[ochre_sdk::tool(name = "{{tool}}", read_only, scope = Browser)]
fn headings(args: HeadingsArgs) -> Result<Output, ToolError> {
    let level = args.max_level.unwrap_or(3);
    if !(1..=6).contains(&level) {
        return Err(ToolError::invalid_argument("max_level", "must be 1 to 6"));
    }
    let found = ochre_sdk::browser::evaluate(None, &script(level), 10_000)?;
    let lines = outline(&found);
    ochre_sdk::log::info(&format!("{} headings", lines.len()));
    let text = if lines.is_empty() { "no headings".to_owned() } else { lines.join("\n") };
    Ok(Output::text(text).with_summary(format!("{} headings", lines.len())))
}

/// The page script: `[[level, text], ...]` of the headings down to `level`.
fn script(level: u8) -> String {
    let selector: Vec<String> = (1..=level).map(|n| format!("h{n}")).collect();
    format!(
        "[...document.querySelectorAll('{}')].map(h => [Number(h.tagName[1]), h.innerText.replace(/\\s+/g, ' ').trim()])",
        selector.join(",")
    )
}

/// One line per heading, two spaces of indent per level below 1.
fn outline(found: &serde_json::Value) -> Vec<String> {
    let Some(items) = found.as_array() else { return Vec::new() };
    items
        .iter()
        .filter_map(|item| {
            let level = item[0].as_u64()?;
            let text = item[1].as_str()?;
            Some(format!("{}h{level} {text}", "  ".repeat(level.saturating_sub(1) as usize)))
        })
        .collect()
}

ochre_sdk::register_plugin! {
    name: "{{name}}",
    group: "{{name}}",
    interfaces: [logging, browser],
    tools: [Headings],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_selects_the_levels_asked_for() {
        assert!(script(2).contains("'h1,h2'"));
        assert!(script(6).contains("'h1,h2,h3,h4,h5,h6'"));
    }

    #[test]
    fn the_outline_indents_by_level_and_skips_what_it_cannot_read() {
        let found = serde_json::json!([[1, "Title"], [2, "Part"], ["x", "bad"], [3, "Detail"]]);
        assert_eq!(outline(&found), ["h1 Title", "  h2 Part", "    h3 Detail"]);
        assert!(outline(&serde_json::json!(null)).is_empty());
    }
}
