//! `computer`: the coordinate tier, for computer-use models and canvas pages.
//! One tool that takes the actions of Anthropic's `computer` tool (`action`:
//! `left_click`, `type`, `key`, `scroll`, `zoom`, ... with `coordinate`) and of
//! OpenAI's (`type`: `click`, `drag`, `keypress`, `scroll`, ... with `x`, `y`),
//! so a model drives the browser with its own schema. Coordinates are CSS
//! pixels of the tab's viewport; a screenshot says how its pixels map to them.
//! Every action is one `gestures` page operation (trusted input).

use base64::Engine as _;
use ochre_sdk::browser::ops::{Captured, Gesture, Gestures, Press};
use ochre_sdk::browser::{self, ops};
use ochre_sdk::keys;
use ochre_sdk::{Content, Output, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// A point of OpenAI's `drag` path.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Xy {
    x: f64,
    y: f64,
}

/// `computer` arguments: Anthropic's shape (`action`) or OpenAI's (`type`).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ComputerArgs {
    /// Anthropic's (left_click, key, zoom...).
    action: Option<String>,
    /// OpenAI's (click, drag, keypress...).
    #[serde(rename = "type")]
    kind: Option<String>,
    coordinate: Option<[f64; 2]>,
    start_coordinate: Option<[f64; 2]>,
    x: Option<f64>,
    y: Option<f64>,
    button: Option<String>,
    text: Option<String>,
    keys: Option<Vec<String>>,
    path: Option<Vec<Xy>>,
    scroll_direction: Option<String>,
    scroll_amount: Option<u32>,
    scroll_x: Option<f64>,
    scroll_y: Option<f64>,
    /// Seconds.
    duration: Option<f64>,
    region: Option<[f64; 4]>,
    /// Screenshots: `webp` (default), `jpeg` or `png`.
    image_format: Option<String>,
    /// Screenshots: 1-100 for webp and jpeg (default 60).
    image_quality: Option<u8>,
    /// Screenshots: the longer side at most, in pixels (default 1024; 64-4096).
    image_long_edge: Option<u32>,
    #[serde(rename = "tabId")]
    tab_id: Option<String>,
}

/// Pixels a wheel "click" scrolls (Anthropic's `scroll_amount` counts clicks).
const WHEEL_CLICK: f64 = 100.0;

fn bad(field: &str, why: impl Into<String>) -> ToolError {
    ToolError::invalid_argument(field, why)
}

/// A key as the vendors write it (xdotool's `ctrl+shift+t`, `Return`,
/// `Page_Down`; OpenAI's `["CTRL", "A"]`) as ochre's chord (`Control+Shift+t`).
pub(crate) fn chord(parts: &[&str]) -> Result<String, ToolError> {
    let mut out = Vec::new();
    for p in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        if let Some(m) = keys::modifier(p) {
            out.push(m.name.to_owned());
        } else if let Some(k) = keys::named(p) {
            out.push(k.name.to_owned());
        } else if let Some(n) = keys::function(p) {
            out.push(format!("F{n}"));
        } else if p.chars().count() == 1 {
            // A letter after a modifier is the key itself, lower case
            // (Shift makes it upper case).
            out.push(if out.is_empty() { p.to_owned() } else { p.to_ascii_lowercase() });
        } else {
            return Err(bad("keys", format!("unknown key {p:?}")));
        }
    }
    if out.is_empty() {
        return Err(bad("keys", "no key given"));
    }
    Ok(out.join("+"))
}

/// The chords of xdotool's text: `ctrl+a`, or several space-separated.
fn xdotool_keys(text: &str) -> Result<Vec<String>, ToolError> {
    text.split_whitespace().map(|combo| chord(&combo.split('+').collect::<Vec<_>>())).collect()
}

/// A click (`count` presses) with `button` at (x, y), with `mods` held.
fn click(x: f64, y: f64, button: &str, count: u32, mods: Option<&str>) -> Vec<Gesture> {
    let b = Some(button.to_owned());
    let mut g = Vec::new();
    if let Some(m) = mods {
        g.push(Gesture::KeyDown { key: m.to_owned() });
    }
    g.push(Gesture::Move { x, y });
    for c in 1..=count {
        g.push(Gesture::Down(Press { x, y, button: b.clone(), count: Some(c) }));
        g.push(Gesture::Up(Press { x, y, button: b.clone(), count: Some(c) }));
    }
    if let Some(m) = mods {
        g.push(Gesture::KeyUp { key: m.to_owned() });
    }
    g
}

/// A left-button drag along `points`, a few moves between each two.
fn drag(points: &[(f64, f64)]) -> Vec<Gesture> {
    let Some(&(x0, y0)) = points.first() else { return Vec::new() };
    let mut g = vec![Gesture::Move { x: x0, y: y0 }, Gesture::Down(Press::left(x0, y0, 1))];
    let mut last = (x0, y0);
    for &(x, y) in &points[1..] {
        for i in 1..=5 {
            let t = f64::from(i) / 5.0;
            g.push(Gesture::Move { x: last.0 + (x - last.0) * t, y: last.1 + (y - last.1) * t });
        }
        last = (x, y);
    }
    g.push(Gesture::Up(Press::left(last.0, last.1, 1)));
    g
}

/// What one action is: input to send, a screenshot (of a region) to take,
/// or the cursor's place to tell.
enum Plan {
    Input(Vec<Gesture>, String),
    Shot(Option<[f64; 4]>),
    Cursor,
}

/// The action `a` names and whether by Anthropic's names (`action`) or
/// OpenAI's (`type`).
fn action_of(a: &ComputerArgs) -> Result<(&str, bool), ToolError> {
    match (&a.action, &a.kind) {
        (Some(x), None) => Ok((x.as_str(), true)),
        (None, Some(x)) => Ok((x.as_str(), false)),
        (Some(_), Some(_)) => {
            Err(bad("action", "give `action` (Anthropic's) or `type` (OpenAI's), not both"))
        }
        (None, None) => {
            Err(bad("action", "give `action` (Anthropic's names) or `type` (OpenAI's)"))
        }
    }
}

/// `zoom`: a screenshot of `region` [x0, y0, x1, y1].
fn zoom(region: Option<[f64; 4]>) -> Result<Plan, ToolError> {
    let r = region.ok_or_else(|| bad("region", "zoom needs region [x0, y0, x1, y1]"))?;
    if !(r[2] > r[0] && r[3] > r[1]) {
        return Err(bad("region", "region is [x0, y0, x1, y1] with x1 > x0 and y1 > y0"));
    }
    Ok(Plan::Shot(Some(r)))
}

/// OpenAI's `click` at `p` with `button` (left, right, wheel, back, forward).
fn openai_click(p: (f64, f64), button: Option<&str>) -> Result<Plan, ToolError> {
    let said = |what: &str| format!("{what} at ({}, {})", p.0, p.1);
    let key = |key: &str| vec![Gesture::Key { key: key.into() }];
    Ok(match button.unwrap_or("left") {
        b @ ("left" | "right") => {
            Plan::Input(click(p.0, p.1, b, 1, None), said(&format!("{b} click")))
        }
        "wheel" | "middle" => Plan::Input(click(p.0, p.1, "middle", 1, None), said("middle click")),
        "back" => Plan::Input(key("Alt+ArrowLeft"), "back".into()),
        "forward" => Plan::Input(key("Alt+ArrowRight"), "forward".into()),
        other => {
            return Err(bad(
                "button",
                format!("button {other:?} is not left, right, wheel, back or forward"),
            ));
        }
    })
}

/// The left button pressed (`down`) or released at `p`.
fn left_button(down: bool, p: (f64, f64)) -> Result<Plan, ToolError> {
    let g = if down {
        Gesture::Down(Press::left(p.0, p.1, 1))
    } else {
        Gesture::Up(Press::left(p.0, p.1, 1))
    };
    let what = if down { "left mouse down" } else { "left mouse up" };
    Ok(Plan::Input(
        vec![Gesture::Move { x: p.0, y: p.1 }, g],
        format!("{what} at ({}, {})", p.0, p.1),
    ))
}

/// `scroll` at `p`: by wheel clicks in a direction (Anthropic's), or by
/// pixels (OpenAI's).
fn scroll(a: &ComputerArgs, p: (f64, f64), anthropic: bool) -> Result<Plan, ToolError> {
    let (dx, dy) = if anthropic {
        let n = f64::from(a.scroll_amount.unwrap_or(3).min(100)) * WHEEL_CLICK;
        match a.scroll_direction.as_deref() {
            Some("down") => (0.0, n),
            Some("up") => (0.0, -n),
            Some("right") => (n, 0.0),
            Some("left") => (-n, 0.0),
            _ => {
                return Err(bad("scroll_direction", "scroll_direction is up, down, left or right"));
            }
        }
    } else {
        (a.scroll_x.unwrap_or(0.0), a.scroll_y.unwrap_or(0.0))
    };
    Ok(Plan::Input(
        vec![Gesture::Move { x: p.0, y: p.1 }, Gesture::Wheel { x: p.0, y: p.1, dx, dy }],
        format!("scrolled ({dx}, {dy}) at ({}, {})", p.0, p.1),
    ))
}

fn plan(
    a: &ComputerArgs,
    cursor: impl Fn() -> Result<(f64, f64), ToolError>,
) -> Result<Plan, ToolError> {
    let at = |field: &str| -> Result<(f64, f64), ToolError> {
        match (a.coordinate, a.x, a.y) {
            (Some([x, y]), _, _) | (None, Some(x), Some(y)) => Ok((x, y)),
            _ if field == "coordinate?" => cursor(),
            _ => {
                Err(bad("coordinate", "this action needs a point: coordinate [x, y] (or x and y)"))
            }
        }
    };
    let text = |field: &str| a.text.clone().ok_or_else(|| bad(field, "this action needs `text`"));
    let secs = |d: Option<f64>| -> Result<u64, ToolError> {
        match d {
            Some(s) if !(0.0..=10.0).contains(&s) => {
                Err(bad("duration", "duration is 0-10 seconds"))
            }
            Some(s) => Ok((s * 1000.0) as u64),
            None => Ok(1000),
        }
    };
    let said = |what: &str, (x, y): (f64, f64)| format!("{what} at ({x}, {y})");
    let input = |g: Vec<Gesture>, s: String| Ok(Plan::Input(g, s));
    let (action, anthropic) = action_of(a)?;
    match (action, anthropic) {
        ("screenshot", _) => Ok(Plan::Shot(None)),
        ("zoom", true) => zoom(a.region),
        ("cursor_position", true) => Ok(Plan::Cursor),
        ("left_click" | "right_click" | "middle_click", true) => {
            let p = at("coordinate?")?;
            let button = action.trim_end_matches("_click");
            let mods =
                a.text.as_deref().map(|t| chord(&t.split('+').collect::<Vec<_>>())).transpose()?;
            input(click(p.0, p.1, button, 1, mods.as_deref()), said(&action.replace('_', " "), p))
        }
        ("double_click" | "triple_click", _) => {
            let p = at(if anthropic { "coordinate?" } else { "coordinate" })?;
            let n = if action == "double_click" { 2 } else { 3 };
            input(click(p.0, p.1, "left", n, None), said(&action.replace('_', " "), p))
        }
        ("click", false) => openai_click(at("coordinate")?, a.button.as_deref()),
        ("mouse_move", true) | ("move", false) => {
            let p = at("coordinate")?;
            input(vec![Gesture::Move { x: p.0, y: p.1 }], said("moved", p))
        }
        ("left_click_drag", true) => {
            let [sx, sy] = a
                .start_coordinate
                .ok_or_else(|| bad("start_coordinate", "left_click_drag needs start_coordinate"))?;
            let p = at("coordinate")?;
            input(drag(&[(sx, sy), p]), format!("dragged from ({sx}, {sy}) to ({}, {})", p.0, p.1))
        }
        ("drag", false) => {
            let path: Vec<(f64, f64)> = a.path.iter().flatten().map(|p| (p.x, p.y)).collect();
            if path.len() < 2 {
                return Err(bad("path", "drag needs a path of two points or more"));
            }
            let end = path[path.len() - 1];
            input(drag(&path), said(&format!("dragged {} points", path.len()), end))
        }
        ("left_mouse_down" | "left_mouse_up", true) => {
            left_button(action == "left_mouse_down", at("coordinate?")?)
        }
        ("key", true) => {
            let keys = xdotool_keys(&text("text")?)?;
            let s = format!("pressed {}", keys.join(" "));
            input(keys.into_iter().map(|key| Gesture::Key { key }).collect(), s)
        }
        ("keypress", false) => {
            let keys = a.keys.as_ref().ok_or_else(|| bad("keys", "keypress needs keys"))?;
            let key = chord(&keys.iter().map(String::as_str).collect::<Vec<_>>())?;
            let s = format!("pressed {key}");
            input(vec![Gesture::Key { key }], s)
        }
        ("hold_key", true) => {
            let key = chord(&text("text")?.split('+').collect::<Vec<_>>())?;
            let ms = secs(a.duration)?;
            let s = format!("held {key} for {ms} ms");
            let held = vec![Gesture::KeyDown { key: key.clone() }, Gesture::Pause { ms }];
            input([held, vec![Gesture::KeyUp { key }]].concat(), s)
        }
        ("type", _) => {
            let t = text("text")?;
            let s = format!("typed {} characters", t.chars().count());
            input(vec![Gesture::Text { text: t }], s)
        }
        ("scroll", _) => scroll(a, at("coordinate")?, anthropic),
        ("wait", _) => {
            let ms = secs(a.duration)?;
            input(vec![Gesture::Pause { ms }], format!("waited {ms} ms"))
        }
        (other, true) => Err(bad("action", format!("unknown action {other:?}"))),
        (other, false) => Err(bad("type", format!("unknown action type {other:?}"))),
    }
}

/// A scale as a short exact-enough number (`1`, `0.8`, `0.666667`).
fn number(v: f64) -> String {
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Act at x,y (CSS px of the viewport) as a person: click, drag, scroll, type, keys, screenshots; Anthropic's or OpenAI's computer actions.
#[ochre_sdk::tool(name = "computer", tier = 3, scope = Browser)]
pub(crate) fn computer(a: ComputerArgs) -> Result<Output, ToolError> {
    let tab = a.tab_id.as_deref();
    let cursor = || -> Result<(f64, f64), ToolError> {
        let g = browser::run(tab, &Gestures { events: Vec::new() }, 5_000)?;
        match (g.x, g.y) {
            (Some(x), Some(y)) => Ok((x, y)),
            _ => Err(bad(
                "coordinate",
                "the mouse has not been anywhere on this tab yet: give coordinate [x, y]",
            )),
        }
    };
    match plan(&a, cursor)? {
        Plan::Cursor => {
            let (x, y) = cursor()?;
            let out = serde_json::json!({"x": x, "y": y});
            Ok(Output::json(&out)?.with_summary(format!("the mouse is at ({x}, {y})")))
        }
        Plan::Input(events, said) => {
            // A point the host refuses (outside the viewport) is named by the
            // argument it came from, not the event it became.
            let from = match (&a.action, a.path.is_some()) {
                (None, true) => "path",
                (None, false) => "x",
                (Some(_), _) => "coordinate",
            };
            let done: ops::Gestured =
                browser::run(tab, &Gestures { events }, 15_000).map_err(|mut e| {
                    let of_event = e.details.get("field").and_then(|f| f.as_str());
                    if of_event.is_some_and(|f| f.starts_with("events.")) {
                        e.details.insert("field".into(), from.into());
                    }
                    e
                })?;
            let where_ = match (done.x, done.y) {
                (Some(x), Some(y)) => format!("; the mouse is at ({x}, {y})"),
                _ => String::new(),
            };
            Ok(Output::text(format!("{said}{where_}")).with_summary(said))
        }
        Plan::Shot(region) => {
            let capture = ops::Capture {
                format: a.image_format.clone(),
                quality: a.image_quality,
                long_edge: a.image_long_edge,
                clip: region.map(|[x0, y0, x1, y1]| [x0, y0, x1 - x0, y1 - y0]),
            };
            let shot = browser::run(tab, &capture, 30_000)?;
            let data = base64::engine::general_purpose::STANDARD
                .decode(&shot.data)
                .map_err(|e| ToolError::internal(format!("the screenshot is not base64: {e}")))?;
            let Captured { width: iw, height: ih, scale, x, y, .. } = shot;
            let (vw, vh) = (shot.viewport_width, shot.viewport_height);
            let s = number(scale);
            let text = format!(
                "screenshot {iw}x{ih} px ({}) of the viewport's ({x}, {y}) to ({}, {}) (the viewport is {vw}x{vh} CSS px); \
                 coordinates are CSS px: x = {x} + image_x / {s}, y = {y} + image_y / {s}",
                shot.mime,
                x + shot.css_width,
                y + shot.css_height,
            );
            let n = data.len();
            Ok(Output::default()
                .with_content(Content::Text(text))
                .with_content(Content::Image { data, mime_type: shot.mime })
                .with_summary(format!("screenshot {iw}x{ih}, {n} bytes")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_keys_become_chords() {
        assert_eq!(chord(&["CTRL", "A"]).ok().as_deref(), Some("Control+a"));
        assert_eq!(chord(&["ctrl", "shift", "t"]).ok().as_deref(), Some("Control+Shift+t"));
        assert_eq!(chord(&["Return"]).ok().as_deref(), Some("Enter"));
        assert_eq!(chord(&["Page_Down"]).ok().as_deref(), Some("PageDown"));
        assert_eq!(chord(&["f5"]).ok().as_deref(), Some("F5"));
        assert_eq!(chord(&["A"]).ok().as_deref(), Some("A"));
        assert_eq!(
            xdotool_keys("ctrl+a Delete").ok(),
            Some(vec!["Control+a".to_owned(), "Delete".to_owned()])
        );
        assert!(chord(&["hyper"]).is_err());
    }
}
