//! A recording exported from Chrome DevTools' Recorder panel (its JSON, as
//! `@puppeteer/replay` defines it: `{title, steps: [{type, selectors, ...}]}`)
//! as an ochre recording: `navigate`, `interact` (click, double click,
//! hover), `form_input` (change: its value a parameter), `press_key`
//! (keyDown) and `wait_for` (waitForElement) steps. A step's selectors become
//! its target: an ARIA selector with a role is a role and name, as ochre's own
//! recordings keep them; CSS, XPath and text selectors are kept as they are,
//! and the first replay that finds the element by one of them saves its role
//! and name as the recording's next version.

use serde_json::{Map, Value, json};

use ochre_sdk::ToolError;
use ochre_sdk::browser::ops::Target;
use ochre_sdk::recorder::{Param, RecordedStep, RecordedTarget};

/// What an import makes: ochre steps, their parameters, and the Recorder's
/// steps it left out (with why).
#[derive(Debug, Default)]
pub struct Imported {
    pub title: String,
    pub steps: Vec<RecordedStep>,
    pub params: Vec<Param>,
    pub skipped: Vec<Value>,
}

/// A Recorder step's target from its selectors (each a list: one selector,
/// or a chain through frames or shadow roots, of which only single ones are
/// used): `{role, name, nth}` from an ARIA selector with a role, and the
/// first CSS (`selector`), XPath (`xpath`) and text (`text`) selectors;
/// `None` if none is usable.
fn target_of(selectors: &Value) -> Option<RecordedTarget> {
    let mut t = Target::default();
    for chain in selectors.as_array().into_iter().flatten() {
        let one = match chain {
            Value::String(s) => s.as_str(),
            Value::Array(parts) if parts.len() == 1 => parts[0].as_str().unwrap_or_default(),
            _ => continue,
        };
        if let Some(aria) = one.strip_prefix("aria/") {
            let (name, role) = match aria.rsplit_once("[role=\"") {
                Some((name, rest)) => (name, rest.strip_suffix("\"]")),
                None => (aria, None),
            };
            match role {
                Some(role) if t.role.is_none() => {
                    t.role = Some(role.to_owned());
                    t.name = Some(name.to_owned());
                    t.nth = Some(0);
                }
                None if t.name.is_none() => t.name = Some(name.to_owned()),
                _ => {}
            }
        } else if let Some(xp) = one.strip_prefix("xpath/") {
            t.xpath.get_or_insert_with(|| xp.to_owned());
        } else if let Some(text) = one.strip_prefix("text/") {
            t.text.get_or_insert_with(|| text.to_owned());
        } else if let Some(css) = one.strip_prefix("pierce/") {
            // Query searches shadow roots anyway.
            t.selector.get_or_insert_with(|| css.to_owned());
        } else if !one.is_empty() {
            t.selector.get_or_insert_with(|| one.to_owned());
        }
    }
    let usable = [&t.role, &t.selector, &t.xpath, &t.text, &t.name].iter().any(|f| f.is_some());
    usable.then_some(RecordedTarget { target: t, tag: None })
}

/// A parameter name from a field's name: lowercase words joined by `_`.
fn param_name(base: &str, taken: &[Param]) -> String {
    let mut name: String = base
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .collect();
    name = name.split('_').filter(|w| !w.is_empty()).collect::<Vec<_>>().join("_");
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name = format!("value_{name}").trim_end_matches('_').to_owned();
    }
    name.truncate(40);
    let used = |n: &str| taken.iter().any(|p| p.name == n);
    if !used(&name) {
        return name;
    }
    (2..).map(|i| format!("{name}_{i}")).find(|n| !used(n)).unwrap_or(name)
}

/// One Recorder step as a replay step; or why it is skipped (`Err(None)`: a
/// step with nothing to replay, such as a key's release, said nowhere).
/// `params`: the recording's parameters so far (a changed field's value
/// becomes one).
fn step_of(
    s: &Value,
    params: &mut Vec<Param>,
    next_ref: &mut impl FnMut() -> String,
) -> Result<RecordedStep, Option<&'static str>> {
    let kind = s["type"].as_str().unwrap_or_default();
    let step = |tool: &str, args: Value| RecordedStep {
        tool: tool.to_owned(),
        args,
        ..RecordedStep::default()
    };
    let targeted = |tool: &str, mut args: Map<String, Value>, r: String, t: RecordedTarget| {
        args.insert("ref".into(), json!(r));
        RecordedStep { targets: [(r, t)].into(), ..step(tool, Value::Object(args)) }
    };
    let no_target = Some("no selector ochre can use (frame chains are not)");
    Ok(match kind {
        "navigate" => match s["url"].as_str() {
            Some(url) => {
                RecordedStep { url: Some(url.to_owned()), ..step("navigate", json!({"url": url})) }
            }
            None => return Err(Some("a navigate step without a url")),
        },
        "click" | "doubleClick" | "hover" => {
            if s["button"].as_str().is_some_and(|b| b != "primary") {
                return Err(Some("a click of another button than the primary one"));
            }
            let t = target_of(&s["selectors"]).ok_or(no_target)?;
            let mut args = Map::new();
            match kind {
                "doubleClick" => args.insert("action".into(), json!("double_click")),
                "hover" => args.insert("action".into(), json!("hover")),
                _ => None,
            };
            targeted("interact", args, next_ref(), t)
        }
        "change" => {
            let t = target_of(&s["selectors"]).ok_or(no_target)?;
            let value = s["value"].as_str().unwrap_or_default();
            let base = t.target.name.as_deref().or(t.target.selector.as_deref()).unwrap_or("value");
            let name = param_name(base.trim_start_matches(['#', '.']), params);
            let default = Some(value.to_owned());
            params.push(Param { name: name.clone(), secret: false, default });
            let mut args = Map::new();
            args.insert("value".into(), json!(format!("{{{{{name}={value}}}}}")));
            targeted("form_input", args, next_ref(), t)
        }
        "keyDown" => match s["key"].as_str() {
            Some(k) if !["Shift", "Control", "Alt", "Meta"].contains(&k) => {
                step("press_key", json!({"key": k}))
            }
            _ => return Err(None),
        },
        "keyUp" => return Err(None),
        "waitForElement" => match target_of(&s["selectors"]).and_then(|t| t.target.selector) {
            Some(css) => step("wait_for", json!({"type": "selector", "value": css})),
            None => return Err(Some("ochre waits for a CSS selector; this one has none")),
        },
        "setViewport" => return Err(Some("the viewport is the browser's (see `emulate`)")),
        "scroll" => return Err(Some("ochre scrolls to each element it acts on")),
        "close" => return Err(Some("closing the page is left to the replay's caller")),
        "" => return Err(Some("a step without a type")),
        _ => return Err(Some("a step type ochre does not replay")),
    })
}

/// Convert a Recorder recording.
pub fn convert(rec: &Value) -> Result<Imported, ToolError> {
    let Some(steps) = rec["steps"].as_array() else {
        return Err(ToolError::invalid_argument(
            "recording",
            "not a Chrome Recorder recording: it has no `steps` list (export it from DevTools' Recorder panel as JSON)",
        ));
    };
    let mut out = Imported {
        title: rec["title"].as_str().unwrap_or("imported from Chrome's Recorder").to_owned(),
        ..Imported::default()
    };
    let mut refs = 0u32;
    let mut next_ref = || {
        refs += 1;
        format!("ax_{refs}")
    };
    for (i, s) in steps.iter().enumerate() {
        match step_of(s, &mut out.params, &mut next_ref) {
            Ok(step) => out.steps.push(step),
            Err(Some(why)) => {
                let kind = s["type"].as_str().unwrap_or_default();
                out.skipped.push(json!({"step": i + 1, "type": kind, "why": why}));
            }
            Err(None) => {}
        }
    }
    if out.steps.is_empty() {
        return Err(ToolError::invalid_argument(
            "recording",
            format!("none of its {} steps can be replayed by ochre", steps.len()),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_become_a_role_and_name_kept_beside_css_xpath_and_text() {
        let t = target_of(&json!([
            ["aria/Send[role=\"button\"]"],
            ["#send"],
            ["xpath///*[@id=\"send\"]"],
            ["pierce/#send"],
            ["text/Send"],
            ["iframe", "#inner"]
        ]))
        .expect("a target");
        assert_eq!(
            serde_json::to_value(t).expect("json"),
            json!({"role": "button", "name": "Send", "nth": 0, "selector": "#send",
                   "xpath": "//*[@id=\"send\"]", "text": "Send"})
        );
        assert_eq!(target_of(&json!([["iframe", "#inner"]])), None);
        let by_name = RecordedTarget {
            target: Target { name: Some("Name".into()), ..Target::default() },
            tag: None,
        };
        assert_eq!(target_of(&json!([["aria/Name"]])), Some(by_name));
    }

    #[test]
    fn a_recorder_flow_becomes_steps_with_parameters_and_says_what_it_left_out() {
        let rec = json!({"title": "t", "steps": [
            {"type": "setViewport", "width": 800, "height": 600},
            {"type": "navigate", "url": "http://x/"},
            {"type": "change", "value": "Ada", "selectors": [["aria/Your name"], ["#name"]]},
            {"type": "change", "value": "Bob", "selectors": [["#name"]]},
            {"type": "keyDown", "key": "Enter"}, {"type": "keyUp", "key": "Enter"},
            {"type": "doubleClick", "selectors": [["text/Go"]]},
            {"type": "customStep", "name": "x"}
        ]});
        let out = convert(&rec).expect("converted");
        let tools: Vec<&str> = out.steps.iter().map(|s| s.tool.as_str()).collect();
        assert_eq!(tools, ["navigate", "form_input", "form_input", "press_key", "interact"]);
        assert_eq!(out.steps[1].args["value"], "{{your_name=Ada}}");
        assert_eq!(out.steps[2].args["value"], "{{name=Bob}}");
        assert_eq!(out.steps[4].args["action"], "double_click");
        assert_eq!(out.params.len(), 2);
        let why: Vec<&str> = out.skipped.iter().filter_map(|s| s["type"].as_str()).collect();
        assert_eq!(why, ["setViewport", "customStep"]);
        assert!(convert(&json!({"steps": [{"type": "scroll"}]})).is_err());
        assert!(convert(&json!({"title": "no steps"})).is_err());
    }
}
