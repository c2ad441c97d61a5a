//! The keyboard and dialogs: `press_key` (a key or chord), `type` (trusted key
//! events character by character), `handle_dialog` (answer an `alert`, `confirm`,
//! `prompt` or `beforeunload` dialog).

use ochre_sdk::browser::{self, RefId, ops};
use ochre_sdk::{Output, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::act::{describe_delta, without_value};

/// Longest text `type` sends.
const MAX_TYPE_CHARS: usize = 5_000;

fn bare_line(info: &ops::Description) -> String {
    without_value(&info.line).to_owned()
}

/// The keys went to another element than `line` (a dialog or a script took
/// the focus in between): what received them, and what changed.
fn not_reached(line: &str, d: &ops::Settled) -> ToolError {
    let by = d.received_by.clone().unwrap_or_else(|| "no element".to_owned());
    ToolError::element_not_interactable(format!(
        "the keys did not reach {line}: {by} received them ({})",
        describe_delta(d)
    ))
    .with_details(json!({"received_by": by}))
}

/// `press_key` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct PressKeyArgs {
    /// `Enter`, `F2`, a character, or a chord (`Control+a`).
    #[schemars(length(min = 1, max = 64))]
    key: String,
    /// Focused first.
    #[serde(rename = "ref")]
    target: Option<RefId>,
    tab_id: Option<String>,
}

/// Press a key or chord (Enter, Escape, Control+a, Shift+Tab); reports what changed.
#[ochre_sdk::tool(name = "press_key", scope = Browser)]
pub(crate) fn press_key(a: PressKeyArgs) -> Result<Output, ToolError> {
    // One host call (`act`): the key checked, the element focused, the key
    // sent, and whether it reached the element.
    let tab = a.tab_id.as_deref();
    let act = ops::Act {
        ref_id: a.target,
        action: Some(ops::ActKind::Press),
        key: Some(a.key.clone()),
        ..ops::Act::default()
    };
    let acted = browser::run(tab, &act, 60_000)?;
    let line = acted.target.as_ref().map(bare_line).unwrap_or_default();
    if !acted.done {
        return Err(not_reached(&line, &acted.delta));
    }
    let on = if line.is_empty() { String::new() } else { format!(" on {line}") };
    let out = format!("pressed {}{on}: {}", a.key, describe_delta(&acted.delta));
    Ok(Output::text(out.clone()).with_summary(out))
}

/// `type` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TypeArgs {
    /// Focused first.
    #[serde(rename = "ref")]
    target: RefId,
    /// `\n` is Enter.
    #[schemars(length(min = 1, max = 5000))]
    text: String,
    /// Press Enter after the text.
    submit: Option<bool>,
    #[schemars(range(min = 0, max = 1000))]
    delay_ms: Option<u32>,
    tab_id: Option<String>,
}

/// Type text key by key (autocompletes, editors, masks); `submit` presses Enter.
#[ochre_sdk::tool(name = "type", intent, scope = Browser, redact = "text")]
pub(crate) fn r#type(a: TypeArgs) -> Result<Output, ToolError> {
    let tab = a.tab_id.as_deref();
    let chars = a.text.chars().count();
    if chars > MAX_TYPE_CHARS {
        return Err(ToolError::invalid_argument(
            "text",
            format!("text is {chars} characters; type sends at most {MAX_TYPE_CHARS}"),
        ));
    }
    // One host call (`act`): the element focused (or refused), the keys sent,
    // whether they reached it, and the field's value before and after.
    let act = ops::Act {
        ref_id: Some(a.target),
        action: Some(ops::ActKind::Type),
        text: Some(a.text.clone()),
        submit: a.submit,
        delay_ms: a.delay_ms,
        ..ops::Act::default()
    };
    let bound =
        60_000 + u32::try_from(chars).unwrap_or(0) * (a.delay_ms.unwrap_or(0).min(1000) + 20);
    let acted = browser::run(tab, &act, bound)?;
    let line = acted.target.as_ref().map(bare_line).unwrap_or_default();
    if !acted.done {
        return Err(not_reached(&line, &acted.delta));
    }
    let changed = describe_delta(&acted.delta);
    let submit = if a.submit == Some(true) { " and pressed Enter" } else { "" };
    // The text may be a secret: say how much was typed, not what.
    let noun = if chars == 1 { "character" } else { "characters" };
    let summary = format!("typed {chars} {noun} into {line}{submit}: {changed}");
    let mut out = summary.clone();
    // Read back: an editor that closed a bracket, indented or completed a
    // word, or a mask that reformatted, leaves other text than was typed.
    if let (Some(was), Some(now)) = (&acted.value_before, &acted.value_after)
        && !holds_typed(was, now, &a.text)
    {
        out.push_str(&format!(
            "\nnote: the field now holds {}, not just the text typed (the page changed it)",
            json!(now)
        ));
    }
    Ok(Output::text(out).with_summary(summary))
}

/// Whether a field that held `was` and now holds `now` has `typed` in it as
/// typed: inserted whole somewhere in what it held (a caret anywhere), or it is
/// all the field holds (it replaced a selection).
fn holds_typed(was: &str, now: &str, typed: &str) -> bool {
    if now == typed {
        return true;
    }
    let Some(i) = now.find(typed) else { return false };
    let rest = format!("{}{}", &now[..i], &now[i + typed.len()..]);
    rest == was || was.contains(&rest)
}

/// `handle_dialog` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct DialogArgs {
    accept: bool,
    /// A prompt's answer.
    #[schemars(length(max = 10000))]
    prompt_text: Option<String>,
    tab_id: Option<String>,
}

/// Accept or dismiss a tab's JavaScript dialog (alert, confirm, prompt, beforeunload).
#[ochre_sdk::tool(name = "handle_dialog", scope = Browser, redact = "promptText")]
pub(crate) fn handle_dialog(a: DialogArgs) -> Result<Output, ToolError> {
    let tab = a.tab_id.as_deref();
    let answer = ops::HandleDialog { accept: Some(a.accept), prompt_text: a.prompt_text.clone() };
    let d = browser::run(tab, &answer, 15_000)?;
    let verb = if d.accepted { "accepted" } else { "dismissed" };
    let answer = if d.prompt_text.is_some() { " with the given text" } else { "" };
    let out = format!("{verb} the {} dialog {:?} on {}{answer}", d.kind, d.message, d.tab_id);
    // The text typed is not shown again.
    let shown = ops::DialogHandled { prompt_text: None, ..d };
    Ok(Output::json(&shown)?.with_content(ochre_sdk::Content::Text(out.clone())).with_summary(out))
}
