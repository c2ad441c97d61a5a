//! Acting tools: `interact` (with click recovery and a human-in-the-loop payload),
//! `form_input`, `fill_form`, `drag_drop`, `file_upload`. All accept `intent`
//! (validated and audited by the host, never used to find the element).

use std::collections::BTreeMap;

use ochre_sdk::browser::{self, Input, RefId, ops};
use ochre_sdk::{Content, Output, ToolError, clock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::read::{run, unwatch, watch};

/// A form value.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Debug)]
#[serde(untagged)]
pub(crate) enum FieldValue {
    Bool(bool),
    Number(f64),
    Text(String),
    List(Vec<String>),
}

pub(crate) use ochre_sdk::browser::ops::without_value;

/// What an action changed, in one short line.
pub(crate) fn describe_delta(d: &ops::Settled) -> String {
    let mut parts = Vec::new();
    if d.navigated {
        parts.push("navigated".to_owned());
    }
    if let Some(u) = &d.url {
        parts.push(format!("url {u}"));
    }
    if let Some(t) = &d.title {
        parts.push(format!("title {t:?}"));
    }
    if let Some(t) = &d.target {
        // The element's new state, said plainly (`now expanded`).
        for (k, v) in t {
            let on = v == &json!(true);
            let word = match k.as_str() {
                "connected" if !on => Some("target removed".to_owned()),
                "connected" => None,
                "expanded" => Some(format!("now {}", if on { "expanded" } else { "collapsed" })),
                "checked" => Some(format!("now {}", if on { "checked" } else { "unchecked" })),
                "pressed" => Some(format!("now {}", if on { "pressed" } else { "not pressed" })),
                "selected" => Some(format!("now {}", if on { "selected" } else { "not selected" })),
                _ => Some(format!("{k}={v}")),
            };
            parts.extend(word);
        }
    }
    if let Some(n) = d.requests {
        parts.push(format!("{n} request{} sent", if n == 1 { "" } else { "s" }));
    }
    if !d.pending.is_empty() {
        let urls: Vec<&str> = d.pending.iter().map(String::as_str).take(3).collect();
        parts.push(format!("still pending after the wait: {}", urls.join(", ")));
    }
    if !d.added.is_empty() {
        let texts: Vec<String> = d.added.iter().map(|s| format!("{s:?}")).collect();
        parts.push(format!("new text {}", texts.join(", ")));
    }
    if !d.later_ms.is_empty() {
        let ms: Vec<String> = d.later_ms.iter().map(|m| format!("{m} ms")).collect();
        let what = if ms.len() == 1 { "a timer" } else { "timers" };
        parts.push(format!(
            "still to come: {what} of {} it set (not waited for; read the page again later)",
            ms.join(", ")
        ));
    }
    if !d.still.is_empty() {
        let bound = d.bound_ms.unwrap_or(2_000);
        parts.push(format!(
            "not settled after {bound} ms (the wait's bound): {}",
            d.still.join(", ")
        ));
    }
    if let Some(f) = &d.focus {
        parts.push(format!("focus {}", without_value(f)));
    }
    if let Some(m) = d.mutations
        && m > 0
    {
        parts.push(format!("{m} DOM change{}", if m == 1 { "" } else { "s" }));
    }
    if parts.is_empty() { "no visible change".into() } else { parts.join("; ") }
}

/// A wait for the navigation that left the document of `token`.
pub(crate) fn navigation(token: Option<&str>) -> ops::Wait {
    let kind = ops::WaitKind::Navigation;
    ops::Wait { kind, token: token.map(str::to_owned), ..ops::Wait::default() }
}

/// Default bound of the actionability wait, in ms.
const ACTIONABLE_MS: u64 = 5_000;

/// `interact` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct InteractArgs {
    /// Element ref.
    #[serde(rename = "ref")]
    target: Option<RefId>,
    /// Or describe it (best find match).
    #[schemars(length(min = 1, max = 500))]
    query: Option<String>,
    /// Unlisted: the element as a recording names it (replays pass it).
    #[serde(rename = "target")]
    named: Option<NamedTarget>,
    /// `click` (default), `double_click` or `hover`.
    #[schemars(regex(pattern = r"^(click|double_click|hover)$"))]
    action: Option<String>,
    /// Max ms to wait until clickable (default 5000).
    #[schemars(range(min = 0, max = 60000))]
    timeout: Option<u64>,
    tab_id: Option<String>,
}

/// An element as a recording names it: a ref it was given, or its role and
/// name (and rank), a CSS selector, an XPath, its text. The host finds it
/// within the action's wait, and again if the page replaces it meanwhile.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(inline)]
pub(crate) struct NamedTarget {
    #[serde(rename = "ref")]
    ref_id: Option<RefId>,
    #[schemars(length(min = 1, max = 100))]
    role: Option<String>,
    #[schemars(length(max = 1000))]
    name: Option<String>,
    nth: Option<u64>,
    #[schemars(length(min = 1, max = 4000))]
    selector: Option<String>,
    #[schemars(length(min = 1, max = 4000))]
    xpath: Option<String>,
    #[schemars(length(min = 1, max = 1000))]
    text: Option<String>,
}

impl From<NamedTarget> for ops::Target {
    fn from(t: NamedTarget) -> Self {
        let NamedTarget { ref_id, role, name, nth, selector, xpath, text } = t;
        ops::Target { ref_id, role, name, nth, selector, xpath, text, query: None }
    }
}

/// Click `target` with the mouse as a person does (the host's `act`, the mouse
/// only): a click that reached it counts, whatever it changed; what it changed.
fn click_delivered(tab: Option<&str>, target: RefId) -> Result<ops::Settled, ToolError> {
    let act = ops::Act { ref_id: Some(target), other_ways: Some(false), ..ops::Act::default() };
    Ok(browser::run(tab, &act, 70_000)?.delta)
}

/// Click, double-click or hover an element (ref or description) once it can take it;
/// reports what changed.
#[ochre_sdk::tool(name = "interact", intent, scope = Browser)]
pub(crate) fn interact(a: InteractArgs) -> Result<Output, ToolError> {
    // The host does it in one call (`act`): the wait, the click, the check
    // that it reached the element, the other ways.
    let tab = a.tab_id.as_deref();
    if a.target.is_none() && a.query.is_none() && a.named.is_none() {
        return Err(ToolError::invalid_argument("ref", "interact needs `ref` or `query`"));
    }
    // The schema lets only click, double_click and hover through.
    let action = a.action.as_deref().and_then(ops::ActKind::parse).unwrap_or_default();
    let wait_ms = a.timeout.unwrap_or(ACTIONABLE_MS).min(60_000);
    let act = ops::Act {
        ref_id: a.target,
        query: a.query,
        target: a.named.map(ops::Target::from),
        action: Some(action),
        timeout_ms: Some(wait_ms),
        ..ops::Act::default()
    };
    let acted = browser::run(tab, &act, u32::try_from(wait_ms + 60_000).unwrap_or(u32::MAX))?;
    let Some(info) = &acted.target else {
        return Err(ToolError::internal("the host did not say which element it clicked"));
    };
    if !acted.done {
        return hitl(tab, info.ref_id, info, acted.tried);
    }
    let line = info.ident();
    let verb = match action {
        ops::ActKind::Hover => "hovered",
        ops::ActKind::DoubleClick => "double-clicked",
        _ => "clicked",
    };
    let how = match &acted.via {
        Some(way) => format!(" (via {way} after {} other ways)", acted.tried.len()),
        None => paren(&acted.waited),
    };
    // Focus on the element acted on, as it was named, goes without saying.
    let mut delta = acted.delta;
    if delta.focus.as_deref().is_some_and(|f| without_value(f) == line) {
        delta.focus = None;
    }
    let out = format!("{verb} {line}{how}: {}", describe_delta(&delta));
    with_found(Output::text(out.clone()).with_summary(out), &acted.found)
}

/// Named by a recording: how the element was found goes back to the replay
/// (who it is, to keep in the recording).
fn with_found(told: Output, found: &Option<ops::TargetFound>) -> Result<Output, ToolError> {
    match found {
        Some(found) => told.with_structured(&json!({"found": found})),
        None => Ok(told),
    }
}

/// A snapshot line up to its ref (`combobox "City" ax_4`), without the state it
/// had before an action.
fn ident(line: &str) -> &str {
    match line.find(" ax_") {
        Some(i) => {
            let end = line[i + 4..].find(' ').map_or(line.len(), |j| i + 4 + j);
            &line[..end]
        }
        None => line,
    }
}

/// ` (TEXT)`, or nothing for an empty text.
fn paren(s: &str) -> String {
    if s.is_empty() { String::new() } else { format!(" ({s})") }
}

/// The human-in-the-loop escalation: what was tried, the target, and a small
/// screenshot of where it is. The host adds the call's `intent`.
fn hitl(
    tab: Option<&str>,
    target: RefId,
    info: &ops::Description,
    tried: Vec<ops::Tried>,
) -> Result<Output, ToolError> {
    let mut payload = json!({
        "needs_human": true,
        "reason": "no click strategy changed the page; the element may need a human (a custom widget, an overlay, a captcha, or a dead control)",
        "strategies_tried": tried,
        "target": {"ref": target, "role": info.role, "name": info.name},
    });
    let plain = ops::Point { ref_id: target, how: Some("plain".into()) };
    let clip = run(tab, &plain).ok().and_then(|p| Some((p.x?, p.y?)));
    let shot = browser::screenshot(
        tab,
        false,
        "jpeg",
        Some(50),
        clip.map(|(x, y)| [(x - 160.0).max(0.0), (y - 100.0).max(0.0), 320.0, 200.0]),
    );
    let out = match shot {
        Ok(data) => {
            payload["screenshot"] =
                json!({"content_index": 1, "mime_type": "image/jpeg", "bytes": data.len()});
            Output::json(&payload)?
                .with_content(Content::Image { data, mime_type: "image/jpeg".into() })
        }
        Err(_) => Output::json(&payload)?,
    };
    Ok(out.with_summary(format!("needs_human: could not click {}", info.line)))
}

/// `form_input` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct FormInputArgs {
    /// The field's ref.
    #[serde(rename = "ref")]
    target: Option<RefId>,
    /// Unlisted: the field as a recording names it (replays pass it).
    #[serde(rename = "target")]
    named: Option<NamedTarget>,
    /// Unlisted: with target, the most ms to wait for the field.
    #[schemars(range(min = 0, max = 60000))]
    timeout: Option<u64>,
    /// Text, true/false, or an option.
    value: FieldValue,
    tab_id: Option<String>,
}

/// Set a field by ref (text, checkbox, select or combobox option, slider); read back,
/// or refused if it cannot hold the value.
#[ochre_sdk::tool(name = "form_input", intent, scope = Browser, redact = "value")]
pub(crate) fn form_input(a: FormInputArgs) -> Result<Output, ToolError> {
    let tab = a.tab_id.as_deref();
    if a.target.is_none() && a.named.is_none() {
        return Err(ToolError::invalid_argument("ref", "form_input needs `ref`"));
    }
    let set = ops::SetValue {
        ref_id: a.target,
        value: json!(a.value),
        target: a.named.map(ops::Target::from),
        timeout_ms: a.timeout,
    };
    let r = run(tab, &set)?;
    // The field's ref (as found, when a recording named it).
    let Some(field) = r.found.as_ref().map(|f| f.ref_id).or(set.ref_id) else {
        return Err(ToolError::internal("the host did not say which field it set"));
    };
    let shown = field.to_string();
    let line = if r.line.is_empty() { shown.as_str() } else { r.line.as_str() };
    match r.widget {
        Some(ops::Widget::Combobox) => {
            let names = match &a.value {
                FieldValue::List(l) => l.clone(),
                v => vec![value_text(v)],
            };
            // Several names: one after another (a multi-select keeps each).
            let mut said = Vec::new();
            for (i, name) in names.iter().enumerate() {
                let last = i + 1 == names.len();
                said.push(choose_option(tab, field, without_value(line), name, r.typing, last)?);
            }
            let summary = format!("chose {} in {}", plural(names.len(), "option"), ident(line));
            return with_found(Output::text(said.join("\n")).with_summary(summary), &r.found);
        }
        Some(ops::Widget::Slider) => {
            let slid = slide(tab, field, without_value(line), &a.value)?;
            return with_found(slid, &r.found);
        }
        Some(ops::Widget::Toggle) => {
            let (want, checked) = (r.want == Some(true), r.checked == Some(true));
            let toggled = toggle(tab, field, without_value(line), want, checked)?;
            return with_found(toggled, &r.found);
        }
        None => {}
    }
    let mut out = format!("set {line}");
    // The field read back: a value it does not hold as asked is said, exactly.
    if let (Some(held), Some(asked)) = (&r.value, &r.asked) {
        out.push_str(&format!(
            "\nnote: the field holds {}, not the {} asked (the page or the browser changed it)",
            json!(held),
            json!(asked)
        ));
    } else if r.differs {
        out.push_str("\nnote: the field does not hold the value as asked (the page changed it)");
    }
    // The journal's line names the field, never its value (it may be secret).
    with_found(Output::text(out).with_summary(format!("set {}", without_value(line))), &r.found)
}

/// How long a combobox's option may take to show (a list fading in, options
/// fetched as the text is typed), in ms.
const OPTION_WAIT_MS: u64 = 5_000;
/// How long a widget may take to show a choice or a step (a server round trip).
const SHOW_WAIT_MS: u64 = 1_500;

fn value_text(v: &FieldValue) -> String {
    match v {
        FieldValue::Text(s) => s.clone(),
        FieldValue::Number(n) => n.to_string(),
        FieldValue::Bool(b) => b.to_string(),
        FieldValue::List(l) => l.join(", "),
    }
}

/// A custom combobox (a React select, an autocomplete): open it, and choose the
/// option of that name, typing the name first where the combobox takes typing
/// and the option is not already listed; then read back what it shows. An
/// option that is not there is refused and the combobox keeps its choice.
fn choose_option(
    tab: Option<&str>,
    target: RefId,
    line: &str,
    name: &str,
    typing: bool,
    close: bool,
) -> Result<String, ToolError> {
    let name = name.to_owned();
    let line = ident(line).to_owned();
    let before = run(tab, &ops::Shown::of(target))?;
    let expanded = before.expanded.as_deref() == Some("true");
    let before = before.value;
    // Opened unless it is open and lists the option (a multi-select stays open
    // after a choice: a click would close it).
    let listed = if expanded { Some(run(tab, &pick(target, &name))?) } else { None };
    let mut found = if let Some(listed) = listed.filter(|l| l.ref_id.is_some()) {
        Ok(listed)
    } else {
        click_delivered(tab, target)?;
        wait_option(tab, target, &name, if typing { 300 } else { OPTION_WAIT_MS })?
    };
    let mut typed = false;
    if found.is_err() && typing {
        // Type the name, as a person narrows an autocomplete (it may ask its
        // server as the text changes).
        type_into(tab, target, &name)?;
        typed = true;
        found = wait_option(tab, target, &name, OPTION_WAIT_MS)?;
    }
    let option = match found {
        Ok(o) => o,
        Err(p) => {
            // Put back what it showed: the typed text cleared an
            // autocomplete's choice.
            if typed && !before.is_empty() {
                let _ = type_into(tab, target, &before);
                if let Ok(Ok(o)) = wait_option(tab, target, &before, 2_000)
                    && let Some(r) = o.ref_id
                {
                    let _ = click_delivered(tab, r);
                }
            }
            let _ = browser::input(tab, &[Input::Key("Escape".into())]);
            let now = run(tab, &ops::Shown::of(target))?.value;
            let shown: Vec<String> = p.options.iter().map(|s| format!("{s:?}")).collect();
            let why = match &p.ambiguous {
                Some(many) => format!("{} options match {name:?}: {}", many.len(), json!(many)),
                None if shown.is_empty() => "no list of options appeared".to_owned(),
                None => format!("no option is named {name:?}; options shown: {}", shown.join(", ")),
            };
            let kept = if now == before {
                format!("nothing was chosen; it shows {} as before", json!(now))
            } else {
                format!(
                    "nothing was chosen, but it shows {} (it showed {})",
                    json!(now),
                    json!(before)
                )
            };
            return Err(ToolError::new(
                ochre_sdk::Code::InvalidArgument,
                format!("{line}: {why}; {kept}"),
            )
            .with_details(json!({"field": "value", "options": p.options})));
        }
    };
    let Some(opt_ref) = option.ref_id else {
        return Err(ToolError::internal("the host found an option without a ref"));
    };
    let opt_line = option.line.clone().unwrap_or_else(|| opt_ref.to_string());
    let opt_line = without_value(&opt_line).to_owned();
    let chosen = option.name.clone().unwrap_or_else(|| name.clone());
    // An option already chosen is left so (a click would unselect it in a
    // multi-select).
    let already = opt_line.ends_with(" selected") || opt_line.contains(" selected ");
    let d = if already { ops::Settled::default() } else { click_delivered(tab, opt_ref)? };
    let chosen = chosen.as_str();
    // The page may take a moment (a server round trip) to show the choice.
    let where_shown = ops::Shown { ref_id: target, name: Some(chosen.to_owned()) };
    let mut shown = run(tab, &where_shown)?;
    let started = clock::now_ms();
    while !already
        && !shown.value.to_lowercase().contains(&chosen.to_lowercase())
        && clock::now_ms().saturating_sub(started) < SHOW_WAIT_MS
    {
        browser::run(tab, &ops::Sleep { ms: 50 }, 2_000)?;
        shown = run(tab, &where_shown)?;
    }
    // A list still open (a multi-select's) is closed after the last choice,
    // as a person does, so it covers nothing the next step needs.
    if close && shown.expanded.as_deref() == Some("true") {
        browser::input(tab, &[Input::Key("Escape".into())])?;
    }
    let holds = shown.value.as_str();
    let mut out = if already && holds.to_lowercase().contains(&chosen.to_lowercase()) {
        format!("option {} was already chosen in {line}; it shows {}", json!(chosen), json!(holds))
    } else if holds.to_lowercase().contains(&chosen.to_lowercase()) {
        format!("chose option {} in {line}; it shows {}", json!(chosen), json!(holds))
    } else if let Some(beside) = shown.beside.as_deref() {
        format!("chose option {} in {line}; shown beside it: {}", json!(chosen), json!(beside))
    } else {
        format!(
            "chose option {} in {line}, but it shows {}: the choice did not take",
            json!(chosen),
            json!(holds)
        )
    };
    if let Some(n) = d.requests {
        out.push_str(&format!("; {} sent", plural(n as usize, "request")));
    }
    Ok(out)
}

/// "1 option", "2 options".
fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A custom checkbox, switch or radio (a `role` on a `div`): clicked when it
/// does not already hold `want`, then read back from `aria-checked`.
fn toggle(
    tab: Option<&str>,
    target: RefId,
    line: &str,
    want: bool,
    checked: bool,
) -> Result<Output, ToolError> {
    let line = ident(line).to_owned();
    let state = |c: bool| if c { "checked" } else { "unchecked" };
    if checked == want {
        let out = format!("{line} was already {}", state(want));
        return Ok(Output::text(out.clone()).with_summary(out));
    }
    click_delivered(tab, target)?;
    let now = run(tab, &ops::Shown::of(target))?.checked.as_deref() == Some("true");
    if now != want {
        return Err(ToolError::element_not_editable(format!(
            "clicked {line}, but it is still {} (the page did not take it)",
            state(now)
        )));
    }
    let out = format!("{line} is now {}", state(now));
    Ok(Output::text(out.clone()).with_summary(out))
}

/// Replace the text of a field that has focus: select all, delete, insert.
fn type_into(tab: Option<&str>, target: RefId, text: &str) -> Result<(), ToolError> {
    let w = watch(tab, Some(target))?;
    let keys = [
        Input::Key("Control+a".into()),
        Input::Key("Backspace".into()),
        Input::Text(text.to_owned()),
    ];
    if let Err(e) = browser::input(tab, &keys) {
        unwatch(tab);
        return Err(e);
    }
    run(tab, &ops::Settle::after(&w))?;
    Ok(())
}

/// Pick the option `name` of the combobox or select `target`.
fn pick(target: RefId, name: &str) -> ops::PickOption {
    ops::PickOption { ref_id: target, name: name.to_owned() }
}

/// Wait (at most `ms`) for a combobox's option named `name`: `Ok(option)`, or
/// `Err(last look)` (the options shown). A list that shows options and stays
/// the same for a second without that name ends the wait early.
fn wait_option(
    tab: Option<&str>,
    target: RefId,
    name: &str,
    ms: u64,
) -> Result<Result<ops::Picked, ops::Picked>, ToolError> {
    let started = clock::now_ms();
    let (mut seen, mut since) = (None, started);
    loop {
        let p = run(tab, &pick(target, name))?;
        if p.ref_id.is_some() {
            return Ok(Ok(p));
        }
        let now = clock::now_ms();
        if seen.as_ref() != Some(&p.options) {
            (seen, since) = (Some(p.options.clone()), now);
        }
        let settled = !p.options.is_empty() && now - since >= 1_000;
        if now.saturating_sub(started) >= ms || settled {
            return Ok(Err(p));
        }
        browser::run(tab, &ops::Sleep { ms: 50 }, 2_000)?;
    }
}

/// A custom slider: focus it and press its arrow keys until it holds the value
/// (read back from `aria-valuenow` after each key).
fn slide(
    tab: Option<&str>,
    target: RefId,
    line: &str,
    value: &FieldValue,
) -> Result<Output, ToolError> {
    let want: f64 = value_text(value)
        .trim()
        .parse()
        .map_err(|_| ToolError::invalid_argument("value", format!("{line} takes a number")))?;
    if !run(tab, &ops::Focus::of(target))?.focused {
        return Err(ToolError::element_not_focusable(format!(
            "{line} does not take keyboard focus"
        )));
    }
    let now = |tab| -> Result<f64, ToolError> {
        let s = run(tab, &ops::Shown::of(target))?;
        s.now.as_deref().and_then(|n| n.trim().parse().ok()).ok_or_else(|| {
            ToolError::element_not_editable(format!("{line} has no aria-valuenow to read back"))
        })
    };
    let mut last = now(tab)?;
    let mut dir = 0.0;
    for _ in 0..500 {
        if (last - want).abs() < 1e-9 {
            break;
        }
        let step = if last < want { 1.0 } else { -1.0 };
        if dir != 0.0 && step != dir {
            break; // it stepped over the value: its steps do not hit it
        }
        dir = step;
        let key = if step > 0.0 { "ArrowRight" } else { "ArrowLeft" };
        browser::input(tab, &[Input::Key(key.into())])?;
        // It may move only once its server answered: wait (bounded) for it.
        let started = clock::now_ms();
        let mut next = now(tab)?;
        while (next - last).abs() < 1e-12 && clock::now_ms().saturating_sub(started) < SHOW_WAIT_MS
        {
            browser::run(tab, &ops::Sleep { ms: 30 }, 2_000)?;
            next = now(tab)?;
        }
        if (next - last).abs() < 1e-12 {
            break; // at its end
        }
        last = next;
    }
    let mut out = format!("set {} to {last}", ident(line));
    if (last - want).abs() >= 1e-9 {
        out.push_str(&format!(
            "\nnote: the slider holds {last}, the nearest it reaches to the {want} asked"
        ));
    }
    Ok(Output::text(out).with_summary(format!("set {line}")))
}

/// `fill_form` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct FillArgs {
    /// By label, name, id or placeholder; groups take option values or labels.
    fields: Option<BTreeMap<String, FieldValue>>,
    /// Values by ref.
    refs: Option<BTreeMap<String, FieldValue>>,
    /// Submit the form afterwards.
    submit: Option<bool>,
    tab_id: Option<String>,
}

/// Fill fields by label/name or ref, optionally submit; all are checked first.
#[ochre_sdk::tool(name = "fill_form", intent, scope = Browser, redact = ["fields", "refs"])]
pub(crate) fn fill_form(a: FillArgs) -> Result<Output, ToolError> {
    let tab = a.tab_id.as_deref();
    let n = a.fields.as_ref().map_or(0, |f| f.len()) + a.refs.as_ref().map_or(0, |f| f.len());
    if n == 0 {
        return Err(ToolError::invalid_argument(
            "fields",
            "fill_form needs `fields` or `refs` with at least one value",
        ));
    }
    if n > 200 {
        return Err(ToolError::invalid_argument("fields", "at most 200 fields"));
    }
    if let Some(refs) = &a.refs
        && let Some(bad) = refs.keys().find(|k| browser::RefId::parse(k).is_none())
    {
        return Err(ToolError::invalid_argument(
            "refs",
            format!("{bad:?} is not a ref (refs look like ax_12)"),
        ));
    }
    // One field by its label, nothing else: a custom widget of that label is
    // set as form_input sets it (below).
    let single = match (&a.fields, &a.refs, a.submit) {
        (Some(f), None, None | Some(false)) if f.len() == 1 => f.iter().next(),
        _ => None,
    }
    .map(|(label, value)| (label.clone(), value.clone()));
    let values = |m: Option<BTreeMap<String, FieldValue>>| {
        m.map(|m| m.into_iter().map(|(k, v)| (k, json!(v))).collect())
    };
    let fill = ops::Fill {
        fields: values(a.fields),
        refs: values(a.refs),
        submit: Some(a.submit == Some(true)),
    };
    let r = match (run(tab, &fill), single) {
        (Ok(r), _) => r,
        (Err(e), Some((label, value))) => return custom_field(tab, &label, value, e),
        (Err(e), None) => return Err(e),
    };
    let filled = &r.filled;
    let mut out = format!("filled {}:\n{}", plural(filled.len(), "field"), filled.join("\n"));
    if r.submitted {
        match browser::run(tab, &navigation(r.token.as_deref()), 5_000) {
            Ok(w) => {
                let _ = browser::run(tab, &ops::NetworkIdle { quiet_ms: Some(0) }, 3_000);
                out.push_str(&format!("\nsubmitted; now at {}", w.url));
            }
            Err(e) if e.code == ochre_sdk::Code::Timeout => {
                out.push_str("\nsubmitted; the page did not navigate within 5 s")
            }
            Err(e) => return Err(e),
        }
    }
    let submitted = if r.submitted { ", submitted" } else { "" };
    let summary = format!("filled {}{submitted}", plural(filled.len(), "field"));
    Ok(Output::text(out).with_summary(summary))
}

/// The roles of the widgets a page draws as fields (no native field of their
/// own): what a label names when no native field has it.
const CUSTOM_FIELDS: &[&str] = &[
    "checkbox",
    "switch",
    "radio",
    "combobox",
    "slider",
    "spinbutton",
    "textbox",
    "searchbox",
    "listbox",
];

/// One field named by `label` that the page library's fill refused (`e`):
/// a custom widget (its ref in the error) or no native field of that label
/// but exactly one custom widget of that accessible name (a Quasar checkbox, a
/// switch drawn on a div) is set as form_input sets it, with a person's
/// clicks and keys; else the refusal as it was.
fn custom_field(
    tab: Option<&str>,
    label: &str,
    value: FieldValue,
    e: ToolError,
) -> Result<Output, ToolError> {
    let field = match e.code {
        ochre_sdk::Code::InvalidArgument => {
            e.details.get("ref").and_then(|r| r.as_str()).and_then(RefId::parse)
        }
        ochre_sdk::Code::FieldNotFound => CUSTOM_FIELDS.iter().find_map(|role| {
            let at = ops::Locate { role: (*role).to_owned(), name: label.to_owned(), nth: None };
            let found = run(tab, &at).ok()?;
            (found.matches == 1).then_some(found.ref_id)
        }),
        _ => None,
    };
    match field {
        Some(r) => form_input(FormInputArgs {
            target: Some(r),
            named: None,
            timeout: None,
            value,
            tab_id: tab.map(str::to_owned),
        }),
        None => Err(e),
    }
}

/// `drag_drop` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct DragArgs {
    /// Ref of what to drag.
    source: Option<RefId>,
    #[schemars(length(min = 1, max = 4000))]
    source_selector: Option<String>,
    /// Ref of where to drop it.
    target: Option<RefId>,
    #[schemars(length(min = 1, max = 4000))]
    target_selector: Option<String>,
    tab_id: Option<String>,
}

/// Drag an element onto another (by ref or CSS selector); works for HTML5 drag-and-drop
/// and mouse-driven widgets.
#[ochre_sdk::tool(name = "drag_drop", intent, tier = 2, scope = Browser)]
pub(crate) fn drag_drop(a: DragArgs) -> Result<Output, ToolError> {
    let tab = a.tab_id.as_deref();
    // One host call (`drag`): the ends found, the press, the moves and the
    // release sent, and the drag judged by its effect.
    let end = |ref_id, selector| ops::Target { ref_id, selector, ..ops::Target::default() };
    let drag = ops::Drag {
        source: end(a.source, a.source_selector),
        target: end(a.target, a.target_selector),
    };
    drag.check("drag_drop", ["sourceSelector", "targetSelector"])?;
    let d = browser::run(tab, &drag, 90_000)?;
    if !d.done {
        let why = d.refused.as_deref().unwrap_or("the drag had no effect");
        return Err(ToolError::element_not_interactable(format!(
            "{why} ({})",
            describe_delta(&d.delta)
        ))
        .with_details(json!({"received_by": d.received_by})));
    }
    let what = format!("{} onto {}", d.ends.source_line, d.ends.target_line);
    // HTML5 events and a navigation tell their own story.
    let plain = !d.ends.html5 && !d.delta.navigated;
    let said = match (&d.received_by, d.effect.is_empty() || !plain) {
        (_, true) => String::new(),
        (None, false) => format!(" ({})", d.effect.join(", ")),
        (Some(by), false) => format!(" (the drop's events reached {by}; {})", d.effect.join(", ")),
    };
    let out = format!(
        "dragged {what}{}{said}: {}",
        if d.ends.html5 { " (HTML5 events)" } else { "" },
        describe_delta(&d.delta)
    );
    Ok(Output::text(out.clone()).with_summary(out))
}

/// `file_upload` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct UploadArgs {
    /// The file input's ref.
    #[serde(rename = "ref")]
    target: Option<RefId>,
    /// Or its CSS selector.
    #[schemars(length(min = 1, max = 4000))]
    selector: Option<String>,
    /// Under the server's cwd or an --allow-file-root dir.
    #[schemars(length(min = 1, max = 50))]
    file_paths: Vec<String>,
    tab_id: Option<String>,
}

/// Put local files into a file input (<input type=file>) by ref or selector.
#[ochre_sdk::tool(name = "file_upload", intent, tier = 2, scope = Browser)]
pub(crate) fn file_upload(a: UploadArgs) -> Result<Output, ToolError> {
    let target = match (a.target, a.selector) {
        (Some(r), _) => r.to_string(),
        (None, Some(s)) => s,
        (None, None) => {
            return Err(ToolError::invalid_argument(
                "ref",
                "file_upload needs `ref` or `selector`",
            ));
        }
    };
    if a.file_paths.iter().any(|p| p.trim().is_empty()) {
        return Err(ToolError::invalid_argument("filePaths", "a file path is blank"));
    }
    let names = browser::set_files(a.tab_id.as_deref(), &target, &a.file_paths)?;
    let out = match names.len() {
        1 => format!("the input now has 1 file: {}", names[0]),
        n => format!("the input now has {n} files: {}", names.join(", ")),
    };
    Ok(Output::text(out.clone()).with_summary(out))
}

#[cfg(test)]
mod tests {
    use super::describe_delta;
    use ochre_sdk::browser::ops::Settled;
    use serde_json::json;

    fn settled(v: serde_json::Value) -> Settled {
        serde_json::from_value(v).expect("a settle answer")
    }

    /// A timer the action set and nothing waited for, and a bound reached
    /// while the page still moved, are both said.
    #[test]
    fn what_is_still_to_come_is_said() {
        let d = settled(json!({"mutations": 2, "later_ms": [2000]}));
        let said = describe_delta(&d);
        assert!(said.contains("still to come: a timer of 2000 ms it set"), "{said}");
        let d = settled(
            json!({"mutations": 90, "still": ["an animation was running"], "bound_ms": 2000}),
        );
        let said = describe_delta(&d);
        assert!(
            said.contains("not settled after 2000 ms (the wait's bound): an animation was running"),
            "{said}"
        );
        assert_eq!(describe_delta(&settled(json!({"mutations": 1}))), "1 DOM change");
        assert_eq!(describe_delta(&settled(json!({"mutations": 3}))), "3 DOM changes");
    }
}
