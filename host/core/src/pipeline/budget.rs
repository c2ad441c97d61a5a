//! The response budget (stage `output`). No tool result is larger than the budget
//! (default 25,000 tokens, counted as UTF-8 bytes / 4: MCP clients refuse larger
//! results, and an agent then gets nothing at all). A larger result is stored
//! whole as an output handle and the answer is a first view of it:
//!
//! - its beginning, cut on a line boundary (for a `read_page` snapshot: the
//!   landmarks, headings and controls at the top of the page);
//! - an outline of what follows (landmarks and headings of the rest, one line
//!   each), so the agent knows what it did not see;
//! - how to get the rest: `oc_output_fetch` on the handle, `read_page {ref_id}` on
//!   a part, `find` for one element.
//!
//! Results within the budget are untouched (byte-identical), and an explicit
//! `output_mode: "inline"` still returns everything: the caller asked for it.

use serde_json::json;

use crate::error::ToolError;
use crate::stores::output::{HandleMeta, HandleStore};
use crate::tool::{Content, ToolOutput, payload_of};

/// The default budget in tokens.
pub const DEFAULT_MAX_TOKENS: usize = 25_000;

/// Bytes a token stands for.
const BYTES_PER_TOKEN: usize = 4;

/// Room kept for the notice and the outline's heading, in bytes.
const NOTICE_ROOM: usize = 1_200;

/// Roles whose lines make the outline of the part not shown.
const OUTLINE_ROLES: &[&str] = &[
    "heading",
    "banner",
    "navigation",
    "main",
    "complementary",
    "contentinfo",
    "region",
    "form",
    "search",
    "dialog",
    "iframe",
];

/// The size of a result as a client counts it: its text, or its structured JSON
/// when it has no text.
fn size_of(out: &ToolOutput) -> usize {
    let text: usize = out
        .content
        .iter()
        .map(|c| match c {
            Content::Text(t) => t.len(),
            Content::Image { .. } => 0,
        })
        .sum();
    if text > 0 {
        return text;
    }
    out.structured.as_ref().and_then(|v| serde_json::to_vec(v).ok()).map_or(0, |v| v.len())
}

/// The longest prefix of `text` of whole lines within `max` bytes (at least
/// something: a first line longer than `max` is cut on a char boundary).
fn head(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let cut = text.floor_char_boundary(max);
    match text[..cut].rfind('\n') {
        Some(i) if i > 0 => &text[..i],
        _ => &text[..cut],
    }
}

/// Whether a snapshot line names a landmark or heading.
fn is_outline(line: &str) -> bool {
    let t = line.trim_start().trim_start_matches("- ");
    let heading = t
        .strip_prefix('h')
        .and_then(|r| r.strip_prefix(|c: char| c.is_ascii_digit()))
        .is_some_and(|r| r.starts_with(' '));
    heading
        || OUTLINE_ROLES.iter().any(|r| {
            t.strip_prefix(r)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '[', '"']))
        })
        || t.starts_with('#')
}

/// Outline lines of `rest`, within `max` bytes: (the text, lines left out).
fn outline(rest: &str, max: usize) -> (String, usize) {
    let mut out = String::new();
    let mut left = 0;
    for line in rest.lines().filter(|l| is_outline(l)) {
        let line = line.trim_end();
        if out.len() + line.len() + 1 > max {
            left += 1;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, left)
}

/// Apply the budget of `max_tokens` to a successful result of `tool`.
pub(crate) fn apply(
    store: &HandleStore,
    tool: &str,
    out: ToolOutput,
    max_tokens: usize,
) -> Result<(ToolOutput, Option<HandleMeta>), ToolError> {
    let max = max_tokens.saturating_mul(BYTES_PER_TOKEN);
    let size = size_of(&out);
    if max_tokens == 0 || size <= max {
        return Ok((out, None));
    }
    let payload = payload_of(&out);
    let (meta, _) = store.create(tool, &payload).map_err(|e| {
        ToolError::storage_failed(format!(
            "{tool}: the result is over the response budget and cannot be stored: {e}"
        ))
    })?;
    let text: String = match out
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.as_str()),
            Content::Image { .. } => None,
        })
        .collect::<Vec<_>>()
    {
        t if !t.is_empty() => t.join("\n"),
        _ => out
            .structured
            .as_ref()
            .and_then(|v| serde_json::to_string_pretty(v).ok())
            .unwrap_or_default(),
    };
    let room = max.saturating_sub(NOTICE_ROOM);
    // Three quarters for the top of the result, the rest for the outline.
    let first = head(&text, room * 3 / 4);
    let rest = &text[first.len()..];
    let (outline_text, outline_left) = outline(rest, room - first.len().min(room));
    let handle = &meta.output_handle;
    let mut view = String::with_capacity(max);
    view.push_str(first);
    view.push_str("\n\n");
    view.push_str(&format!(
        "[truncated: the whole result is {size} bytes (about {} tokens), over the response budget of {max_tokens} tokens; the first {} bytes are shown above.]\n",
        size / BYTES_PER_TOKEN,
        first.len()
    ));
    if !outline_text.is_empty() {
        view.push_str("Landmarks and headings further on:\n");
        view.push_str(&outline_text);
        if outline_left > 0 {
            view.push_str(&format!("(+{outline_left} more)\n"));
        }
    }
    view.push_str(&format!(
        "For the rest: oc_output_fetch {{output_handle: \"{handle}\", offset: {}}} pages through the whole result; read_page {{ref_id}} reads one part; find {{query}} finds one element; output_mode \"inline\" returns everything in one answer.",
        // A JSON result is paged by items from the start; text by bytes from
        // where the view ends.
        if out.structured.is_some() { 0 } else { first.len() }
    ));
    let mut content = vec![Content::Text(view)];
    content.extend(out.content.into_iter().filter(|c| matches!(c, Content::Image { .. })));
    let structured = out.structured.map(|_| {
        json!({
            "truncated": true, "output_handle": handle, "total_bytes": size,
            "shown_bytes": first.len(), "max_response_tokens": max_tokens,
        })
    });
    let summary = format!("{} (over the response budget: {handle})", out.summary);
    Ok((ToolOutput { content, structured, summary }, Some(meta)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_end_on_a_line_or_char_boundary() {
        assert_eq!(head("ab\ncd\nef", 6), "ab\ncd");
        assert_eq!(head("short", 100), "short");
        assert_eq!(head("ééééé", 3), "é");
    }

    #[test]
    fn outline_keeps_landmarks_and_headings_only() {
        let rest = "  link \"a\" ax_1\n  h2 \"Methods\"\nnavigation \"Side\"\n  button \"x\" ax_2\n  html \"x\"\n## Title\n";
        let (o, left) = outline(rest, 1000);
        assert_eq!(o, "  h2 \"Methods\"\nnavigation \"Side\"\n## Title\n");
        assert_eq!(left, 0);
        let (o, left) = outline(rest, 20);
        assert_eq!(o, "  h2 \"Methods\"\n");
        assert_eq!(left, 2);
    }

    #[test]
    fn sizes_count_text_or_else_json() {
        let out = ToolOutput {
            content: vec![Content::Text("abcd".into())],
            structured: Some(json!({"a": "much longer than the text"})),
            summary: String::new(),
        };
        assert_eq!(size_of(&out), 4);
        let out =
            ToolOutput { content: vec![], structured: Some(json!([1, 2])), summary: String::new() };
        assert_eq!(size_of(&out), 5);
    }
}
