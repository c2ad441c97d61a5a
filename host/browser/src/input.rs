//! Trusted input: keys by name and chords (`Control+a`), the mouse's
//! buttons, the wheel, text and pauses, sent to a tab as CDP `Input.*`
//! events; a left-button drag over an HTML5 draggable played as the drag
//! Chromium hands over. Every event is checked before the first is sent.

use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchMouseEventParams, InsertTextParams,
};
use futures::StreamExt;
use ochre_protocol::ToolError;
use ochre_protocol::keys::{self, KEY_HELP};
use ochre_protocol::page_ops;
use serde_json::{Value, json};

use super::pageops::cdp_params;
use super::{BrowserManager, TabId, bounded, cdp_error};

pub use ochre_protocol::browser::Input;

/// One key of a chord: CDP's `key`, `code`, Windows virtual key code and the text
/// it types (none for keys that type nothing).
#[derive(Debug, Clone, PartialEq)]
struct KeyDef {
    key: String,
    code: String,
    vk: i64,
    text: Option<String>,
}

/// One key: by its name (see [`keys`]), or the character it types.
fn key_def(name: &str) -> Result<KeyDef, ToolError> {
    let def = |key: &str, code: &str, vk: i64, text: Option<&str>| KeyDef {
        key: key.to_owned(),
        code: code.to_owned(),
        vk,
        text: text.map(str::to_owned),
    };
    let named = keys::named(name).map(|k| def(k.key, k.code, k.vk, k.text));
    if let Some(d) = named {
        return Ok(d);
    }
    if let Some(n) = keys::function(name) {
        let k = format!("F{n}");
        return Ok(def(&k, &k, 111 + n, None));
    }
    if let Some(m) = keys::modifier(name) {
        return Ok(def(m.name, m.code, m.vk, None));
    }
    let mut chars = name.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => {
            let up = c.to_ascii_uppercase();
            let vk = if up.is_ascii_alphanumeric() {
                i64::from(up as u8)
            } else if c == ' ' {
                32
            } else {
                0
            };
            let code = if c.is_ascii_alphabetic() {
                format!("Key{up}")
            } else if c.is_ascii_digit() {
                format!("Digit{c}")
            } else if c == ' ' {
                "Space".into()
            } else {
                String::new()
            };
            Ok(KeyDef { key: c.to_string(), code, vk, text: Some(c.to_string()) })
        }
        _ => Err(ToolError::invalid_argument("key", format!("unknown key {name:?}: {KEY_HELP}"))),
    }
}

/// A key or chord (`Control+Shift+ArrowLeft`, `Shift+Tab`, `+`, `Control++`):
/// the modifiers (bit, key) and the main key.
fn parse_chord(chord: &str) -> Result<(Vec<(i64, KeyDef)>, KeyDef), ToolError> {
    if chord.is_empty() || chord.len() > 64 {
        return Err(ToolError::invalid_argument(
            "key",
            format!("key must be 1-64 characters: {KEY_HELP}"),
        ));
    }
    let (mods, main) = match chord.strip_suffix("++") {
        Some(rest) => (rest, "+"),
        None if chord == "+" => ("", "+"),
        None => match chord.rsplit_once('+') {
            Some((m, k)) => (m, k),
            None => ("", chord),
        },
    };
    let mut out = Vec::new();
    for m in mods.split('+').filter(|m| !m.is_empty()) {
        let Some(modifier) = keys::modifier(m) else {
            return Err(ToolError::invalid_argument(
                "key",
                format!(
                    "{m:?} in {chord:?} is not a modifier (Control, Shift, Alt, Meta): {KEY_HELP}"
                ),
            ));
        };
        let key = modifier.name.to_owned();
        let code = modifier.code.to_owned();
        out.push((modifier.bit, KeyDef { key, code, vk: modifier.vk, text: None }));
    }
    Ok((out, key_def(main)?))
}

/// The CDP key events of a key or chord, in order.
pub(super) fn key_events(chord: &str) -> Result<Vec<Value>, ToolError> {
    let (mods, main) = parse_chord(chord)?;
    let mut events = Vec::new();
    let mut bits = 0;
    for (bit, m) in &mods {
        bits |= bit;
        events.push(json!({"type": "rawKeyDown", "key": m.key, "code": m.code, "windowsVirtualKeyCode": m.vk, "modifiers": bits}));
    }
    // With Control, Alt or Meta held a key types nothing (it is a shortcut);
    // Shift types the shifted character.
    let text = match &main.text {
        Some(_) if bits & 7 != 0 => None,
        Some(t) if bits & 8 != 0 => Some(t.to_uppercase()),
        other => other.clone(),
    };
    let key = match &text {
        Some(t) if t.chars().count() == 1 && main.key.chars().count() == 1 => t.clone(),
        _ => main.key.clone(),
    };
    let mut down = json!({"type": if text.is_some() { "keyDown" } else { "rawKeyDown" }, "key": key, "code": main.code, "windowsVirtualKeyCode": main.vk, "modifiers": bits});
    if let Some(t) = &text {
        down["text"] = json!(t);
        down["unmodifiedText"] = json!(t);
    }
    events.push(down);
    events.push(json!({"type": "keyUp", "key": key, "code": main.code, "windowsVirtualKeyCode": main.vk, "modifiers": bits}));
    for (bit, m) in mods.iter().rev() {
        bits &= !bit;
        events.push(json!({"type": "keyUp", "key": m.key, "code": m.code, "windowsVirtualKeyCode": m.vk, "modifiers": bits}));
    }
    Ok(events)
}

/// A native drag in progress: Chromium hands the drag to us
/// (`Input.setInterceptDrags`) and we play its events at the pointer.
struct DragSession {
    events: chromiumoxide::listeners::EventStream<
        chromiumoxide::cdp::browser_protocol::input::EventDragIntercepted,
    >,
    /// The drag's data, once the page started a drag.
    data: Option<Value>,
    entered: bool,
}

impl DragSession {
    async fn start(page: &Page) -> Option<Self> {
        use chromiumoxide::cdp::browser_protocol::input::{
            EventDragIntercepted, SetInterceptDragsParams,
        };
        let events = page.event_listener::<EventDragIntercepted>().await.ok()?;
        page.execute(SetInterceptDragsParams::new(true)).await.ok()?;
        Some(Self { events, data: None, entered: false })
    }

    /// Whether the last move started a drag (the interception comes a moment
    /// after the move).
    async fn poll(&mut self) {
        if self.data.is_some() {
            return;
        }
        if let Ok(Some(ev)) =
            tokio::time::timeout(Duration::from_millis(30), self.events.next()).await
        {
            self.data = serde_json::to_value(&ev.data).ok();
        }
    }

    async fn dispatch(&self, page: &Page, kind: &str, x: f64, y: f64) -> Result<(), ToolError> {
        use chromiumoxide::cdp::browser_protocol::input::DispatchDragEventParams;
        // At a hand's pace, one event a frame: drag libraries ignore events that
        // come right after they moved something (SortableJS waits 30 ms).
        tokio::time::sleep(Duration::from_millis(16)).await;
        let p: DispatchDragEventParams = cdp_params(
            json!({"type": kind, "x": x, "y": y, "data": self.data.clone().unwrap_or(Value::Null)}),
        )?;
        page.execute(p).await.map(|_| ()).map_err(|e| cdp_error("drag", e))
    }

    async fn stop(self, page: &Page) {
        use chromiumoxide::cdp::browser_protocol::input::SetInterceptDragsParams;
        let _ = page.execute(SetInterceptDragsParams::new(false)).await;
    }
}

/// A mouse button's CDP name and bit (`None`: the left one).
fn button_of(name: Option<&str>) -> Result<(&'static str, i32), String> {
    match name.unwrap_or("left") {
        "left" => Ok(("left", 1)),
        "right" => Ok(("right", 2)),
        "middle" => Ok(("middle", 4)),
        other => Err(format!("button {other:?} is not left, middle or right")),
    }
}

/// The button a move reports while `held` are down (the first of them).
fn held_button(held: i32) -> &'static str {
    if held & 1 != 0 {
        "left"
    } else if held & 2 != 0 {
        "right"
    } else if held & 4 != 0 {
        "middle"
    } else {
        "none"
    }
}

impl BrowserManager {
    /// Dispatch trusted input to a tab (the WIT `input`): the mouse's left
    /// button, keys and text, as [`Self::gestures`] sends them.
    pub async fn input(&self, tab: Option<TabId>, events: &[Input]) -> Result<(), ToolError> {
        self.gestures(tab, &gestures_of(events), 10_000).await.map(drop)
    }

    /// Send raw input to a tab, in order: mouse moves, presses and releases of
    /// any button, the wheel, keys held, released or pressed, text, pauses. A
    /// left-button drag over an HTML5 draggable is played as the drag Chromium
    /// hands over (`Input.setInterceptDrags`). Every event is checked before
    /// the first is sent.
    pub(super) async fn gestures(
        &self,
        tab: Option<TabId>,
        events: &[page_ops::Gesture],
        timeout_ms: u32,
    ) -> Result<page_ops::Gestured, ToolError> {
        check_gestures(events)?;
        self.guarded(tab, async {
            let (n, page) = self.page(tab).await?;
            self.send_on(n, &page, events, timeout_ms, false).await
        })
        .await
    }

    /// Send input to tab `n` (resolved) whose events were checked (see
    /// [`Self::gestures`]). `aimed`: every point is one the page library
    /// found its element at (`elementFromPoint`: inside the viewport), so
    /// the viewport is not asked again.
    pub(super) async fn send_on(
        &self,
        n: TabId,
        page: &Page,
        events: &[page_ops::Gesture],
        timeout_ms: u32,
        aimed: bool,
    ) -> Result<page_ops::Gestured, ToolError> {
        use page_ops::Gesture as G;
        // An action that sends input is still under way (a long typing).
        if let Some(w) = self.tab_watch(n) {
            w.action_goes_on();
        }
        if !aimed {
            self.within_viewport(page, events).await?;
        }
        let drag = events
            .iter()
            .skip_while(|e| !matches!(e, G::Down(_)))
            .any(|e| matches!(e, G::Move { .. }));
        let bound = timeout_ms.max(1_000);
        bounded(bound, "input", async {
            let started = Instant::now();
            let mut session = if drag { DragSession::start(page).await } else { None };
            let r = self.send_gestures(page, events, session.as_mut()).await;
            tracing::debug!(events = events.len(), took = ?started.elapsed(), "input");
            if let Some(s) = session {
                s.stop(page).await;
            }
            // Where the mouse is: this call's last point, else the last one's.
            let r = r?;
            let at = match (r.x, r.y) {
                (Some(x), Some(y)) => {
                    self.inner.tabs.with(n, |t| t.pointer = Some((x, y)));
                    Some((x, y))
                }
                _ => self.inner.tabs.with(n, |t| t.pointer).flatten(),
            };
            Ok(page_ops::Gestured { events: r.events, x: at.map(|a| a.0), y: at.map(|a| a.1) })
        })
        .await
    }

    /// Refuse input whose points are not all in the tab's viewport (CSS px,
    /// `0 <= x < width`, the same for y), before any is sent: an event outside
    /// reaches nothing on the page, and a drag that ends there would be
    /// pressed and never released where meant.
    async fn within_viewport(
        &self,
        page: &Page,
        events: &[page_ops::Gesture],
    ) -> Result<(), ToolError> {
        use page_ops::{Gesture as G, Press};
        let points: Vec<(usize, f64, f64)> = (events.iter().enumerate())
            .filter_map(|(i, e)| match e {
                G::Move { x, y }
                | G::Wheel { x, y, .. }
                | G::Down(Press { x, y, .. })
                | G::Up(Press { x, y, .. }) => Some((i, *x, *y)),
                _ => None,
            })
            .collect();
        if points.is_empty() {
            return Ok(());
        }
        let size = self.eval(page, "[innerWidth, innerHeight]", true).await?;
        let (Some(w), Some(h)) = (size[0].as_f64(), size[1].as_f64()) else {
            return Err(ToolError::internal(format!("the viewport's size reads {size}")));
        };
        match points.iter().find(|(_, x, y)| !(0.0..w).contains(x) || !(0.0..h).contains(y)) {
            Some((i, x, y)) => Err(ToolError::invalid_argument(
                &format!("events.{i}"),
                format!(
                    "({x}, {y}) is outside the viewport (0 <= x < {w}, 0 <= y < {h} CSS px); nothing was sent"
                ),
            )),
            None => Ok(()),
        }
    }

    /// Send input events as they are (no drag session: a person's drag, sent
    /// event by event, is the page's own pointer events).
    pub(super) async fn send_plain(
        &self,
        page: &Page,
        events: &[page_ops::Gesture],
    ) -> Result<(), ToolError> {
        self.send_gestures(page, events, None).await.map(drop)
    }

    async fn send_gestures(
        &self,
        page: &Page,
        events: &[page_ops::Gesture],
        mut drag: Option<&mut DragSession>,
    ) -> Result<page_ops::Gestured, ToolError> {
        use page_ops::{Gesture as G, Press};
        // The buttons held (CDP's bit mask: left 1, right 2, middle 4).
        let mut held = 0i32;
        let mut at: Option<(f64, f64)> = None;
        let mouse = |kind: &str, x: f64, y: f64, button: &str, buttons: i32, count: u32| {
            cdp_params::<DispatchMouseEventParams>(json!({
                "type": kind, "x": x, "y": y, "button": button, "buttons": buttons,
                "clickCount": count,
            }))
        };
        // Mouse events sent and not yet answered (see `pipelined`), in the
        // order sent; all are answered before any other event is sent, and
        // before the call answers.
        let mut unanswered = InFlight::default();
        // Where the pointer went, and when (a video draws it).
        let mut points: Vec<(std::time::Instant, f64, f64)> = Vec::new();
        for (i, ev) in events.iter().enumerate() {
            let ahead = pipelined(events, i, held, drag.is_some());
            if !ahead {
                unanswered.answered().await?;
            }
            match ev {
                G::Move { x, y } => {
                    at = Some((*x, *y));
                    points.push((std::time::Instant::now(), *x, *y));
                    if ahead {
                        unanswered.send(
                            page,
                            mouse("mouseMoved", *x, *y, "none", 0, 0)?,
                            "mouse move",
                        );
                        continue;
                    }
                    if let Some(d) = drag.as_deref_mut()
                        && d.data.is_some()
                    {
                        d.dispatch(page, if d.entered { "dragOver" } else { "dragEnter" }, *x, *y)
                            .await?;
                        d.entered = true;
                        continue;
                    }
                    let button = held_button(held);
                    let p = mouse("mouseMoved", *x, *y, button, held, 0)?;
                    page.execute(p).await.map_err(|e| cdp_error("mouse move", e))?;
                    if held & 1 != 0
                        && let Some(d) = drag.as_deref_mut()
                    {
                        d.poll().await;
                    }
                }
                G::Down(Press { x, y, button, count }) | G::Up(Press { x, y, button, count }) => {
                    at = Some((*x, *y));
                    points.push((std::time::Instant::now(), *x, *y));
                    let press = matches!(ev, G::Down(_));
                    let (name, bit) = button_of(button.as_deref()).map_err(ToolError::internal)?;
                    if !press
                        && bit == 1
                        && let Some(d) = drag.as_deref_mut()
                        && d.data.is_some()
                    {
                        if !d.entered {
                            d.dispatch(page, "dragEnter", *x, *y).await?;
                        }
                        d.dispatch(page, "dragOver", *x, *y).await?;
                        d.dispatch(page, "drop", *x, *y).await?;
                        d.data = None;
                        held &= !bit;
                        continue;
                    }
                    held = if press { held | bit } else { held & !bit };
                    let kind = if press { "mousePressed" } else { "mouseReleased" };
                    let p = mouse(kind, *x, *y, name, held, count.unwrap_or(1).max(1))?;
                    unanswered.send(page, p, "mouse button");
                }
                G::Wheel { x, y, dx, dy } => {
                    at = Some((*x, *y));
                    points.push((std::time::Instant::now(), *x, *y));
                    let p: DispatchMouseEventParams = cdp_params(json!({
                        "type": "mouseWheel", "x": x, "y": y, "deltaX": dx, "deltaY": dy,
                        "button": "none", "buttons": held,
                    }))?;
                    page.execute(p).await.map_err(|e| cdp_error("mouse wheel", e))?;
                }
                G::Key { key } => send_key(page, key, true, true).await?,
                G::KeyDown { key } => send_key(page, key, true, false).await?,
                G::KeyUp { key } => send_key(page, key, false, true).await?,
                G::Text { text } => {
                    page.execute(InsertTextParams::new(text.clone()))
                        .await
                        .map_err(|e| cdp_error("insert text", e))?;
                }
                G::Pause { ms } => {
                    tokio::time::sleep(Duration::from_millis((*ms).min(10_000))).await
                }
            }
        }
        unanswered.answered().await?;
        self.video_pointer(page, &points);
        Ok(page_ops::Gestured { events: events.len(), x: at.map(|a| a.0), y: at.map(|a| a.1) })
    }
}

/// Whether event `i` of `events` is sent without waiting for the answers to
/// the mouse events before it. A renderer holds a move for its next frame (up
/// to 17 ms) unless a press comes, which has the move dispatched first, at
/// once; presses and releases are never merged or held, and a tab's input is
/// dispatched in the order sent. So a move that leads to a press, and the
/// buttons of a click (no drag in between: no move while a button is held),
/// go out back to back: the page sees the same events in the same order, and
/// the hover's and the press's handlers run before the release is dispatched.
/// Anything else waits for what was sent before it (moves one by one, or the
/// renderer would merge them; a drag's events at a hand's pace).
fn pipelined(events: &[page_ops::Gesture], i: usize, held: i32, dragging: bool) -> bool {
    use page_ops::Gesture as G;
    match &events[i] {
        G::Move { .. } => held == 0 && matches!(events.get(i + 1), Some(G::Down(_))),
        // (In a drag, the release waits: it may be the drop played instead.)
        G::Down(_) => true,
        G::Up(_) => !dragging,
        _ => false,
    }
}

/// Mouse events sent to a tab and not yet answered (see [`pipelined`]).
#[derive(Default)]
struct InFlight {
    sent: Vec<(
        futures::future::BoxFuture<'static, Result<(), chromiumoxide::error::CdpError>>,
        &'static str,
    )>,
}

impl InFlight {
    /// Send `p` now, without waiting for its answer. The first poll of a
    /// command's future sends it (its sender is a fresh clone of the tab's
    /// channel, never full): sent before anything after it is.
    fn send(&mut self, page: &Page, p: DispatchMouseEventParams, what: &'static str) {
        let page = page.clone();
        let mut fut: futures::future::BoxFuture<'static, _> =
            Box::pin(async move { page.execute(p).await.map(drop) });
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        match fut.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(r) => {
                self.sent.push((Box::pin(std::future::ready(r)), what));
            }
            std::task::Poll::Pending => self.sent.push((fut, what)),
        }
    }

    /// Wait for every answer; the first failure, named.
    async fn answered(&mut self) -> Result<(), ToolError> {
        let sent = std::mem::take(&mut self.sent);
        let (whats, futs): (Vec<_>, Vec<_>) = sent.into_iter().map(|(f, w)| (w, f)).unzip();
        for (r, what) in futures::future::join_all(futs).await.into_iter().zip(whats) {
            r.map_err(|e| cdp_error(what, e))?;
        }
        Ok(())
    }
}

/// Key (or chord) `key` to `page`: its presses (`down`), then its releases
/// (`up`).
async fn send_key(page: &Page, key: &str, down: bool, up: bool) -> Result<(), ToolError> {
    let all = key_events(key)?;
    let first_up = all.iter().position(|e| e["type"] == "keyUp").unwrap_or(all.len());
    let (from, to) = (if down { 0 } else { first_up }, if up { all.len() } else { first_up });
    for e in &all[from..to] {
        let p: DispatchKeyEventParams = cdp_params(e.clone())?;
        page.execute(p).await.map_err(|e| cdp_error("key", e))?;
    }
    Ok(())
}

/// Trusted input as the gestures that send it (left button).
pub(super) fn gestures_of(events: &[Input]) -> Vec<page_ops::Gesture> {
    use page_ops::{Gesture as G, Press};
    events
        .iter()
        .map(|e| match e {
            Input::MouseMove((x, y, _)) => G::Move { x: *x, y: *y },
            Input::MouseDown((x, y, c)) => G::Down(Press::left(*x, *y, *c)),
            Input::MouseUp((x, y, c)) => G::Up(Press::left(*x, *y, *c)),
            Input::Key(k) => G::Key { key: k.clone() },
            Input::Text(t) => G::Text { text: t.clone() },
        })
        .collect()
}

/// Every event of an input checked before the first is sent: points are
/// numbers, buttons and keys have names.
pub(super) fn check_gestures(events: &[page_ops::Gesture]) -> Result<(), ToolError> {
    use page_ops::{Gesture as G, Press};
    for (i, e) in events.iter().enumerate() {
        match e {
            G::Move { x, y }
            | G::Wheel { x, y, .. }
            | G::Down(Press { x, y, .. })
            | G::Up(Press { x, y, .. })
                if !(x.is_finite() && y.is_finite()) =>
            {
                return Err(ToolError::invalid_argument(
                    &format!("events.{i}"),
                    "x and y are numbers",
                ));
            }
            G::Down(Press { button, .. }) | G::Up(Press { button, .. }) => {
                button_of(button.as_deref()).map_err(|why| {
                    ToolError::invalid_argument(&format!("events.{i}.button"), why)
                })?;
            }
            G::Key { key } | G::KeyDown { key } | G::KeyUp { key } => {
                key_events(key).map_err(|e| {
                    ToolError::invalid_argument(&format!("events.{i}.key"), e.message)
                })?;
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(key_def("Enter").expect("enter").vk, 13);
        assert_eq!(key_def("a").expect("a").code, "KeyA");
        assert_eq!(key_def("F5").expect("f5").vk, 116);
        assert!(key_def("Hyper").is_err());
    }

    #[test]
    fn chords() {
        let ev = key_events("Control+a").expect("chord");
        let types: Vec<&str> = ev.iter().filter_map(|e| e["type"].as_str()).collect();
        assert_eq!(types, ["rawKeyDown", "rawKeyDown", "keyUp", "keyUp"]);
        assert_eq!(ev[1]["modifiers"], json!(2));
        assert!(ev[1].get("text").is_none(), "a shortcut types nothing");
        assert_eq!(ev[3]["modifiers"], json!(0));
        let ev = key_events("Shift+Tab").expect("chord");
        assert_eq!(ev[1]["key"], json!("Tab"));
        assert_eq!(ev[1]["modifiers"], json!(8));
        let ev = key_events("Shift+a").expect("chord");
        assert_eq!(ev[1]["text"], json!("A"));
        let ev = key_events("Control++").expect("plus");
        assert_eq!(ev[1]["key"], json!("+"));
        assert_eq!(key_events("+").expect("plus").len(), 2);
        assert!(key_events("Hyper+a").is_err());
        assert!(key_events("Control+Nope").is_err());
        assert!(key_events("").is_err());
    }
}
