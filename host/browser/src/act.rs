//! The truthful action as one host operation (`act`): wait until the element can
//! take the pointer, send the event, and count it only when it reached the
//! element and had its effect; a custom element that ignored the mouse is tried
//! other ways. Every plugin gets this guarantee from one host call (the core
//! plugin's `interact` is that call and the words around its answer).
//!
//! The steps are the page library's operations (`describe`, `actionable`,
//! `watch`, `settle`, `relocate`, `js_click`, `focus`) and trusted input; see
//! `docs/architecture.md` for the path of one click.

use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use ochre_protocol::page_ops::{
    self as ops, ActKind, Acted, Description, DragPoints, Dragged, Settled, Strategy, Tried,
};
use ochre_protocol::{Code, ToolError};
use serde_json::json;

use super::{BrowserManager, Caller, Input, RefId, TabId, TabRef};

/// Default bound of the actionability wait, in ms.
const ACTIONABLE_MS: u64 = 5_000;
/// Longest actionability wait a caller may ask for, in ms.
const ACTIONABLE_MAX_MS: u64 = 60_000;
/// Time the other ways of clicking (after the mouse changed nothing) may take together.
const OTHER_WAYS: Duration = Duration::from_secs(6);
/// The other ways of clicking, in the order they are tried, each under the
/// name a skipped one is reported by (the keyboard: Enter, then Space).
const OTHER_WAYS_IN_ORDER: [(Strategy, &[Way]); 3] = [
    (Strategy::Ax, &[Way::Ax]),
    (Strategy::JsClick, &[Way::JsClick]),
    (Strategy::Keyboard, &[Way::Enter, Way::Space]),
];

/// A way of clicking other than the mouse at the element's point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// The element found again by role and name, then the mouse.
    Ax,
    /// `element.click()` in the page's script.
    JsClick,
    /// Enter while it has the focus.
    Enter,
    /// Space while it has the focus.
    Space,
}

impl Way {
    /// The name the answer gives it.
    fn strategy(self) -> Strategy {
        match self {
            Self::Ax => Strategy::Ax,
            Self::JsClick => Strategy::JsClick,
            Self::Enter => Strategy::KeyboardEnter,
            Self::Space => Strategy::KeyboardSpace,
        }
    }
}
/// Bound of each page-library step, in ms.
const STEP_MS: u32 = 30_000;
/// How long a navigation a click started may take to load, in ms.
const NAVIGATION_MS: u32 = 15_000;
/// At most this long for the window a link followed into a new window opens
/// (the browser opens it after the click; ochre gives it an id).
const NEW_WINDOW_MS: u64 = 2_000;
/// At most this long for a tab a click opened to show its first document.
const FIRST_COMMIT_MS: u64 = 150;
/// Most clicks that something else took before the click is refused.
const MAX_MISSES: usize = 20;

/// What a click that reached its target changed, what was waited for, and the misses.
struct Delivered {
    delta: Settled,
    waited: String,
    tried: Vec<Tried>,
}

/// The clicks (and their presses) of a click or double click at (x, y).
fn clicks(x: f64, y: f64, double: bool) -> Vec<Input> {
    let mut ev =
        vec![Input::MouseMove((x, y, 0)), Input::MouseDown((x, y, 1)), Input::MouseUp((x, y, 1))];
    if double {
        ev.push(Input::MouseDown((x, y, 2)));
        ev.push(Input::MouseUp((x, y, 2)));
    }
    ev
}

/// Where an action can send its event, watched since it could.
struct Aim {
    x: f64,
    y: f64,
    /// What was waited for (empty when nothing was).
    waited: String,
    /// The watch's token, for `settle`.
    token: String,
    /// The part of its widget aimed at instead of the element (hidden or
    /// covered by the widget's own parts).
    via: Option<String>,
}

/// The element an action described before acting.
fn described(info: Option<Description>) -> Result<Description, ToolError> {
    info.ok_or_else(|| ToolError::internal("the element was not described before the action"))
}

/// The target's line for a message: `role "name" ax_N`, or its ref.
fn line_of(info: Option<&Description>, target: RefId) -> String {
    info.map_or_else(|| target.to_string(), Description::ident)
}

/// A drag judged by its effect: done when the press reached the source and the
/// page reacted (the item moved, the list reordered, the drop's handler changed
/// the page). The drop's events may reach the dragged item rather than the
/// target (a sortable list keeps it under the pointer): the effect decides.
/// HTML5 events (sent in the page) and a navigation count as done.
fn judge_drag(ends: DragPoints, delta: Settled) -> Dragged {
    let effect = delta.effect.clone();
    let by = delta.received_by.clone().unwrap_or_else(|| "no element".to_owned());
    let reached = delta.delivered;
    let dragged = |done, refused: Option<String>, received_by| Dragged {
        ends: ends.clone(),
        done,
        refused,
        received_by,
        effect: effect.clone(),
        delta: delta.clone(),
    };
    if ends.html5 || delta.navigated {
        return dragged(true, None, None);
    }
    if delta.source_delivered != Some(true) {
        let by = delta.source_received_by.clone().unwrap_or_else(|| "no element".to_owned());
        let why = format!(
            "the press did not reach {}: {by} received it; nothing was dragged",
            ends.source_line
        );
        return dragged(false, Some(why), Some(by));
    }
    if effect.is_empty() {
        let (where_, got) = if reached {
            (format!("the drop reached {}", ends.target_line), ends.target_line.clone())
        } else {
            (format!("the drop did not reach {}: {by} received it", ends.target_line), by)
        };
        let why = format!(
            "{where_}, but the page did not react (nothing moved, nothing changed: it does not take this drop there)"
        );
        return dragged(false, Some(why), Some(got));
    }
    dragged(true, None, (!reached).then_some(by))
}

/// The element an action is aimed at: its ref now, how it was found, and
/// how to find it again if the page replaces it while the action waits.
struct Element {
    r: RefId,
    found: Option<ops::TargetFound>,
    again: Option<ops::Target>,
}

/// How to find an action's element again if the page replaces it: its
/// `target` when that names it other than by ref, or its description. A
/// plain ref is the caller's: its element gone is `STALE_REF`, told.
fn refindable(a: &ops::Act) -> Option<ops::Target> {
    let t = a.element()?;
    t.ref_only().is_none().then_some(ops::Target { ref_id: None, ..t })
}

/// Aborts its task when dropped (the call that waited for it was cancelled).
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl BrowserManager {
    /// `f` on the running call's tab `tab` (resolved once, inside the dialog
    /// guard: a dialog open on it answers at once), on a stack of its own
    /// ([`TabRef::own_stack`]), as a boxed future of a named type: the
    /// dispatch holds it without holding its type, which holds the
    /// dispatch's own (each step is a page operation), a cycle no `Send`
    /// check could close. `checked`: the arguments' verdict, given before the
    /// tab is resolved (a refused call opens no tab).
    pub(super) fn on_own_stack<T, F>(
        &self,
        tab: Option<TabId>,
        checked: Result<(), ToolError>,
        f: F,
    ) -> BoxFuture<'_, Result<T, ToolError>>
    where
        T: Send + 'static,
        F: FnOnce(TabRef) -> BoxFuture<'static, Result<T, ToolError>> + Send + 'static,
    {
        if let Err(e) = checked {
            return Box::pin(std::future::ready(Err(e)));
        }
        let (me, caller) = (self.clone(), Caller::current());
        let guarded =
            async move { f(me.guarded_for(&caller, tab, me.tab(&caller, tab)).await?).await };
        Box::pin(TabRef::own_stack(Box::pin(guarded)))
    }

    /// [`TabRef::act`] on the running call's tab `tab` (see [`Self::on_own_stack`]).
    pub(super) fn act_boxed(
        &self,
        tab: Option<TabId>,
        a: ops::Act,
    ) -> BoxFuture<'_, Result<Acted, ToolError>> {
        self.on_own_stack(tab, check_act(&a), move |t| Box::pin(async move { t.act(a).await }))
    }

    /// [`TabRef::drag`] on the running call's tab `tab` (see [`Self::on_own_stack`]).
    pub(super) fn drag_boxed(
        &self,
        tab: Option<TabId>,
        a: ops::Drag,
    ) -> BoxFuture<'_, Result<Dragged, ToolError>> {
        self.on_own_stack(tab, check_drag(&a), move |t| Box::pin(async move { t.drag(a).await }))
    }
}

/// An action's arguments checked before anything is done: what it needs, the
/// keys it sends.
fn check_act(a: &ops::Act) -> Result<(), ToolError> {
    let named = a.element().is_some();
    if let Some(t) = &a.target {
        super::target::check(t)?;
    }
    match a.action.unwrap_or_default() {
        ActKind::Press => keys_of(a, false).map(drop),
        ActKind::Type => {
            keys_of(a, true)?;
            match named {
                true => Ok(()),
                false => {
                    Err(ToolError::invalid_argument("ref", "type needs `ref`, `query` or `target`"))
                }
            }
        }
        _ if !named => {
            Err(ToolError::invalid_argument("ref", "act needs `ref`, `query` or `target`"))
        }
        _ => Ok(()),
    }
}

/// The keys `press` (`typing` false) or `type` sends, each checked.
fn keys_of(a: &ops::Act, typing: bool) -> Result<Vec<Input>, ToolError> {
    if !typing {
        let Some(key) = a.key.clone() else {
            return Err(ToolError::invalid_argument("key", "press needs `key`"));
        };
        super::input::key_events(&key)?;
        return Ok(vec![Input::Key(key)]);
    }
    let Some(text) = a.text.as_deref().filter(|t| !t.is_empty()) else {
        return Err(ToolError::invalid_argument("text", "type needs `text`"));
    };
    let mut keys: Vec<Input> = text
        .chars()
        .map(|c| match c {
            '\n' => Input::Key("Enter".into()),
            '\t' => Input::Key("Tab".into()),
            c => Input::Key(c.to_string()),
        })
        .collect();
    if a.submit == Some(true) {
        keys.push(Input::Key("Enter".into()));
    }
    Ok(keys)
}

/// A drag's arguments checked before anything is done: both ends named.
fn check_drag(a: &ops::Drag) -> Result<(), ToolError> {
    a.check("drag", ["source_selector", "target_selector"])?;
    super::target::check(&a.source)?;
    super::target::check(&a.target)
}

impl TabRef {
    /// Run `fut` as a task of its own. A plugin's host call is polled on the
    /// plugin's fiber stack; the action, and each of its steps, starting on a
    /// fresh stack keeps that stack from holding every step's frames at once
    /// (a debug build overflowed it). The action carries its tab and caller:
    /// nothing is scoped again for the task.
    async fn own_stack<T: Send + 'static>(
        fut: BoxFuture<'static, Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        let task = tokio::spawn(fut);
        let _abort = AbortOnDrop(task.abort_handle());
        task.await.unwrap_or_else(|e| {
            Err(ToolError::internal(format!("a step of the action failed: {e}")))
        })
    }

    /// One page operation of an action (see [`Self::own_stack`]).
    pub(super) async fn step<O>(&self, op: O, ms: u32) -> Result<O::Output, ToolError>
    where
        O: ops::PageOp + Into<ops::AnyOp> + Send + Sync + 'static,
        O::Output: Send,
    {
        let t = self.clone();
        Self::own_stack(Box::pin(async move { t.run(op, ms).await })).await
    }

    /// Trusted input of an action (see [`Self::own_stack`]).
    async fn press(&self, events: Vec<Input>) -> Result<(), ToolError> {
        self.press_aimed(events, false).await
    }

    /// The mouse at points the page library aimed at (`aimed`: it found the
    /// element there), as [`Self::press`].
    async fn press_aimed(&self, events: Vec<Input>, aimed: bool) -> Result<(), ToolError> {
        let t = self.clone();
        Self::own_stack(Box::pin(async move { t.input(&events, aimed).await })).await
    }

    /// The `act` page operation: see [`ops::Act`].
    pub(super) async fn act(&self, a: ops::Act) -> Result<Acted, ToolError> {
        let action = a.action.unwrap_or_default();
        if matches!(action, ActKind::Press | ActKind::Type) {
            return self.keys(a, action == ActKind::Type).await;
        }
        let wait_ms = a.timeout_ms.unwrap_or(ACTIONABLE_MS).min(ACTIONABLE_MAX_MS);
        let started = Instant::now();
        let (target, found) = self.element_of(&a, wait_ms).await?;
        let wait_ms = wait_ms.saturating_sub(started.elapsed().as_millis() as u64);
        let mut info = None;
        if action == ActKind::Hover {
            let aim = self.aim(target, &mut info, wait_ms, false).await?;
            self.press_aimed(vec![Input::MouseMove((aim.x, aim.y, 0))], true).await?;
            let settle = ops::Settle { idle_ms: Some(100), ..ops::Settle::after(&aim.token) };
            let delta = self.step(settle, STEP_MS).await?;
            let info = described(info)?;
            let waited = aim.waited;
            return Ok(Acted {
                target: Some(info),
                done: true,
                delta,
                waited,
                found,
                ..Acted::default()
            });
        }
        let double = action == ActKind::DoubleClick;
        let again = refindable(&a);
        let (Delivered { mut delta, waited, mut tried }, found) = self
            .click_delivered(Element { r: target, found, again }, &mut info, wait_ms, double)
            .await?;
        let info = described(info)?;
        // A native control, or an element with its own click listener: a click
        // that reaches it is handled even when nothing on the page changes (a
        // state kept in script).
        // (Not when the click went to the part of the widget that stands for
        // it: then only an effect says it acted.)
        let native = (info.native || info.listens) && !delta.via;
        if delta.changed || native || a.other_ways == Some(false) {
            self.after_navigation(&mut delta).await;
            return Ok(Acted {
                target: Some(info),
                done: true,
                delta,
                waited,
                tried,
                found,
                ..Acted::default()
            });
        }
        tried.push(Tried::new(Strategy::Mouse, "no change"));
        match self.other_ways(&info, double, &mut tried).await? {
            Some((delta, via)) => Ok(Acted {
                target: Some(info),
                done: true,
                delta,
                via: Some(via),
                tried,
                found,
                ..Acted::default()
            }),
            None => Ok(Acted {
                target: Some(info),
                delta: Settled::default(),
                waited,
                tried,
                found,
                ..Acted::default()
            }),
        }
    }

    /// The click reached a custom element and nothing happened: the other
    /// ways a widget may listen (it re-rendered under the pointer, it wants a
    /// synthetic click, or the keyboard), within [`OTHER_WAYS`]. What the way
    /// that worked changed and its name, or `None` (each try is in `tried`).
    async fn other_ways(
        &self,
        info: &Description,
        double: bool,
        tried: &mut Vec<Tried>,
    ) -> Result<Option<(Settled, Strategy)>, ToolError> {
        let target = info.ref_id;
        let started = Instant::now();
        for (kind, ways) in OTHER_WAYS_IN_ORDER {
            if started.elapsed() > OTHER_WAYS {
                tried.push(Tried::new(kind, "skipped: out of time"));
                continue;
            }
            if kind == Strategy::Keyboard && (!info.focusable || double) {
                tried.push(Tried::new(kind, "skipped: not focusable"));
                continue;
            }
            for &way in ways {
                let w = self.watch_target(target).await?;
                if let Err(e) = self.other_way(way, info, double).await {
                    self.unwatch().await;
                    // The element is gone: no other way will reach it.
                    if e.code == Code::StaleRef {
                        return Err(e);
                    }
                    tried.push(Tried::new(way.strategy(), format!("failed: {}", e.message)));
                    continue;
                }
                let mut delta = self.step(ops::Settle::after(&w), STEP_MS).await?;
                // Only what the event reaching the element did counts (a timer
                // elsewhere on the page must not pass for success).
                if delta.delivered && delta.changed {
                    self.after_navigation(&mut delta).await;
                    return Ok(Some((delta, way.strategy())));
                }
                let outcome = if delta.delivered {
                    "no change".to_owned()
                } else {
                    format!("reached {}", delta.received_by.as_deref().unwrap_or("another element"))
                };
                tried.push(Tried::new(way.strategy(), outcome));
            }
        }
        Ok(None)
    }

    /// `press` and `type`: the keys (checked before anything is sent) to the
    /// element, focused first, or (`press` only) to the focused one; done when
    /// they reached the element.
    async fn keys(&self, a: ops::Act, typing: bool) -> Result<Acted, ToolError> {
        let keys = keys_of(&a, typing)?;
        let wait_ms = a.timeout_ms.unwrap_or(ACTIONABLE_MS).min(ACTIONABLE_MAX_MS);
        let (target, found) = match a.element() {
            Some(_) => {
                let (r, found) = self.element_of(&a, wait_ms).await?;
                (Some(r), found)
            }
            None => (None, None),
        };
        let mut info = None;
        let mut value_before = None;
        if let Some(r) = target {
            let described = self.step(ops::Describe::of_ref(r), STEP_MS).await?;
            let focused = self.step(ops::Focus::of(r), STEP_MS).await?.focused;
            if typing && !focused {
                return Err(ToolError::element_not_focusable(format!(
                    "{} does not take keyboard focus; click it first or pick the field inside it",
                    ops::without_value(&described.line)
                )));
            }
            if typing {
                value_before = self.step(ops::ValueOf::of(r), STEP_MS).await?.value;
            }
            info = Some(described);
        }
        let token = self.step(ops::Watch { ref_id: target }, STEP_MS).await?.token;
        if let Err(e) = self.send_keys(keys, a.delay_ms.unwrap_or(0).min(1_000)).await {
            self.unwatch().await;
            return Err(e);
        }
        let mut delta = self.step(ops::Settle::after(&token), STEP_MS).await?;
        // With an element, the keys count only if they reached it (a dialog or
        // a script that took the focus in between got them instead).
        let done = info.is_none() || delta.delivered;
        if done {
            self.after_navigation(&mut delta).await;
        }
        // Read back (not after Enter: a search box empties on submit).
        let value_after = match (target, typing && done && a.submit != Some(true)) {
            (Some(r), true) => {
                self.step(ops::ValueOf::of(r), STEP_MS).await.ok().and_then(|v| v.value)
            }
            _ => None,
        };
        Ok(Acted {
            target: info,
            done,
            delta,
            value_before,
            value_after,
            found,
            ..Acted::default()
        })
    }

    /// Keys, in slices that keep each input call within the host's bound (10
    /// s a call: ten keys get a second each, as a heavy editor in a page slowed
    /// 4x on a loaded two-core machine can take: marimo's took over 400 ms a
    /// key, and 25 to a call missed the bound), or one by one with a pause
    /// after each.
    async fn send_keys(&self, keys: Vec<Input>, delay_ms: u32) -> Result<(), ToolError> {
        if delay_ms == 0 {
            for chunk in keys.chunks(10) {
                self.press(chunk.to_vec()).await?;
            }
        } else {
            for k in keys {
                self.press(vec![k]).await?;
                tokio::time::sleep(Duration::from_millis(u64::from(delay_ms))).await;
            }
        }
        Ok(())
    }

    /// The `drag` page operation: see [`ops::Drag`].
    pub(super) async fn drag(&self, a: ops::Drag) -> Result<Dragged, ToolError> {
        check_drag(&a)?;
        let ops::Drag { source, target } = a;
        // Each end found (and waited for) as an action's target is.
        let source = self.element(source, super::target::FIND_MS, false).await?.0;
        let target = self.element(target, super::target::FIND_MS, false).await?.0;
        let ends = self.step(ops::DragInfo { source, target }, STEP_MS).await?;
        if ends.html5 {
            self.step(ops::Html5Drag { source, target }, STEP_MS).await?;
        } else {
            let (sx, sy) = match ends.source.point() {
                Ok(p) => p,
                Err(why) => {
                    self.unwatch().await;
                    return Err(ToolError::element_not_interactable(format!("cannot drag: {why}")));
                }
            };
            let (Some(tx), Some(ty)) = (ends.target.x, ends.target.y) else {
                self.unwatch().await;
                return Err(ToolError::element_not_interactable(
                    "the drop target has no size on screen",
                ));
            };
            let mut ev = vec![Input::MouseMove((sx, sy, 0)), Input::MouseDown((sx, sy, 1))];
            for i in 1..=8 {
                let f = f64::from(i) / 8.0;
                ev.push(Input::MouseMove((sx + (tx - sx) * f, sy + (ty - sy) * f, 0)));
            }
            // End a quarter of the target past its centre, in the direction of
            // travel (still inside it), as a hand does: a sortable list then
            // puts the item in the target's place instead of hesitating at its
            // middle.
            let size =
                |k: &str| ends.target_box.as_ref().and_then(|b| b[k].as_f64()).unwrap_or(0.0);
            let past = |from: f64, to: f64, size: f64| {
                if (to - from).abs() < 1.0 { to } else { to + (to - from).signum() * size / 4.0 }
            };
            let (ex, ey) = (past(sx, tx, size("width")), past(sy, ty, size("height")));
            ev.push(Input::MouseMove((ex, ey, 0)));
            ev.push(Input::MouseUp((ex, ey, 1)));
            if let Err(e) = self.press(ev).await {
                self.unwatch().await;
                return Err(e);
            }
        }
        let settle = ops::Settle { token: ends.token.clone(), ..ops::Settle::default() };
        let delta = self.step(settle, STEP_MS).await?;
        Ok(judge_drag(ends, delta))
    }

    /// The element an action names (see [`ops::Act::element`] and
    /// [`TabRef::element`]). Named by `target`, it is always found and who it
    /// is said, a ref too (a replay's repair: the element the caller chose).
    async fn element_of(
        &self,
        a: &ops::Act,
        wait_ms: u64,
    ) -> Result<(RefId, Option<ops::TargetFound>), ToolError> {
        if let Some(t) = a.target.clone().filter(|_| a.ref_id.is_none() && a.query.is_none()) {
            let found = self.find_target(ops::FindTarget::identifying(t, wait_ms)).await?;
            return Ok((found.ref_id, Some(found)));
        }
        let Some(t) = a.element() else {
            return Err(ToolError::invalid_argument("ref", "act needs `ref`, `query` or `target`"));
        };
        let (r, _) = self.element(t, wait_ms, false).await?;
        Ok((r, None))
    }

    /// One of the other ways of clicking: the element found again by role and
    /// name (`ax`), a click in script, or a key while it has the focus.
    async fn other_way(&self, way: Way, info: &Description, double: bool) -> Result<(), ToolError> {
        let target = info.ref_id;
        let key = match way {
            Way::Ax => {
                let again = ops::Relocate {
                    ref_id: target,
                    role: info.role.clone(),
                    name: info.name.clone(),
                };
                let p = self.step(again, STEP_MS).await?;
                let (x, y) = p.point().map_err(ToolError::element_not_interactable)?;
                return self.press_aimed(clicks(x, y, double), true).await;
            }
            Way::JsClick => {
                return self.step(ops::JsClick::of(target), STEP_MS).await.map(drop);
            }
            Way::Enter => "Enter",
            Way::Space => "Space",
        };
        self.step(ops::Focus::of(target), STEP_MS).await?;
        self.press(vec![Input::Key(key.to_owned())]).await
    }

    /// Click `target` with the mouse as a person does: wait (at most `wait_ms`)
    /// until it can take the click, click, and count it only if the click
    /// reached it; something that took the click in between (a toast, an
    /// overlay fading in) is waited out again.
    async fn click_delivered(
        &self,
        mut element: Element,
        info: &mut Option<Description>,
        wait_ms: u64,
        double: bool,
    ) -> Result<(Delivered, Option<ops::TargetFound>), ToolError> {
        let started = Instant::now();
        let left = || wait_ms.saturating_sub(started.elapsed().as_millis() as u64);
        let mut tried: Vec<Tried> = Vec::new();
        let mut waited_all = Vec::new();
        loop {
            let target = element.r;
            let aim = match self.aim(target, info, left(), true).await {
                Ok(aim) => aim,
                // The page replaced the element while the click waited (a
                // re-render): found again, as named, within the same wait.
                Err(e) if e.code == Code::StaleRef && left() > 0 && element.again.is_some() => {
                    let target = element.again.clone().unwrap_or_default();
                    let ask = ops::FindTarget { target, timeout_ms: Some(left()), identify: None };
                    let found = self.find_target(ask).await?;
                    waited_all.push(format!(
                        "{} was replaced by the page and found again",
                        line_of(info.as_ref(), element.r)
                    ));
                    element.r = found.ref_id;
                    if let Some(f) = &mut element.found {
                        f.ref_id = found.ref_id;
                    }
                    *info = None;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if !aim.waited.is_empty() {
                waited_all.push(aim.waited);
            }
            if let Some(via) = &aim.via {
                waited_all.push(format!(
                    "at {via}, the part of its widget a person clicks: the element itself is hidden or covered"
                ));
            }
            let mark = self.mgr.events().mark();
            if let Err(e) = self.press_aimed(clicks(aim.x, aim.y, double), true).await {
                self.unwatch().await;
                return Err(e);
            }
            // A click that opened a tab (a popup, set up before the page's
            // `window.open` returned: see `frames::Held`) had that effect: no
            // wait for a late change of its own page past the first quiet look.
            let mut settle = ops::Settle::after(&aim.token);
            let opened = self.mgr.events().tab_opened_since(mark, self.n);
            if opened.is_some() {
                settle.idle_ms = Some(0);
            }
            let delta = self.step(settle, STEP_MS).await?;
            if opened.is_some() || delta.new_window {
                self.tab_opened(mark).await;
            }
            // A click counts when its press or the click itself reached the
            // target (a navigation it started says so too); the pointer passing
            // over it does not.
            if delta.delivered && delta.pressed != Some(false) {
                let delivered = Delivered { delta, waited: waited_all.join("; "), tried };
                return Ok((delivered, element.found));
            }
            let line = line_of(info.as_ref(), target);
            if delta.removed_before_release {
                return Err(ToolError::stale_ref(format!(
                    "{line} took the mouse press, then the page removed it before the release (not while handling the press: a timer or a script): no click reached it"
                )));
            }
            let by = delta.received_by.unwrap_or_else(|| "another element".to_owned());
            tried.push(Tried::new(Strategy::Mouse, format!("the click reached {by}")));
            if left() == 0 || tried.len() >= MAX_MISSES {
                let mut e = ToolError::element_not_interactable(format!(
                    "{line} did not get the click: it reached {by} (covered); nothing was clicked on purpose"
                ));
                e.details.insert("received_by".into(), json!(by));
                return Err(e);
            }
        }
    }

    /// Wait (at most `ms`) until `target` can take a pointer event (attached,
    /// visible, enabled unless `enabled` is false, not moving, and a point of
    /// it receives the event), then start watching what the event changes: one
    /// page operation, which also describes the element into `info` the first
    /// time. `ELEMENT_NOT_INTERACTABLE` naming the last obstacle when time runs
    /// out.
    async fn aim(
        &self,
        target: RefId,
        info: &mut Option<Description>,
        ms: u64,
        enabled: bool,
    ) -> Result<Aim, ToolError> {
        let ask = ops::Actionable {
            ref_id: target,
            timeout_ms: Some(ms),
            enabled: Some(enabled),
            describe: Some(info.is_none()),
            watch: Some(true),
        };
        let bound = u32::try_from(ms + 5_000).unwrap_or(u32::MAX);
        let p = self.step(ask, bound).await?;
        if let Some(d) = p.target {
            *info = Some(d);
        }
        let waited = if p.waited.is_empty() {
            String::new()
        } else {
            format!("waited {} ms: {}", p.waited_ms, p.waited.join(", "))
        };
        match (p.x, p.y, p.token) {
            (Some(x), Some(y), Some(token)) => Ok(Aim { x, y, waited, token, via: p.via }),
            _ => {
                let mut e = ToolError::element_not_interactable(format!(
                    "{} cannot take the event: {} (waited {} ms; pass `timeout` to wait longer)",
                    line_of(info.as_ref(), target),
                    p.reason.as_deref().unwrap_or("no point of it can be reached"),
                    p.waited_ms
                ));
                e.details.insert("waited".into(), json!(p.waited));
                Err(e)
            }
        }
    }

    /// Wait (at most [`NEW_WINDOW_MS`]) until this tab's page has opened a
    /// tab since log position `mark` (a link followed into a new window:
    /// the browser opens it after the click) and ochre has given it an id;
    /// then (at most [`FIRST_COMMIT_MS`], the wait a click that changed
    /// nothing has) until that tab shows its first document, so that the
    /// answer reads its address and title from one document.
    async fn tab_opened(&self, mark: u64) {
        let by = Instant::now() + Duration::from_millis(NEW_WINDOW_MS);
        let tab = loop {
            match self.mgr.events().tab_opened_since(mark, self.n) {
                Some(n) => break n,
                None if Instant::now() >= by => return,
                None => tokio::time::sleep(Duration::from_millis(2)).await,
            }
        };
        let Some(page) = self.mgr.inner.tabs.with(tab, |t| t.page.clone()) else { return };
        let by = Instant::now() + Duration::from_millis(FIRST_COMMIT_MS);
        while Instant::now() < by {
            let url = crate::frame_url(&page).await;
            if !url.is_empty() && url != "about:blank" {
                return;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Start watching what the next event changes around `target`: the token
    /// of the document for `settle`.
    async fn watch_target(&self, target: RefId) -> Result<String, ToolError> {
        Ok(self.step(ops::Watch { ref_id: Some(target) }, STEP_MS).await?.token)
    }

    /// Stop watching (the action failed: no `settle` follows). Best effort: the
    /// failure being reported matters more.
    async fn unwatch(&self) {
        let _ = self.step(ops::Unwatch::default(), STEP_MS).await;
    }

    /// After an action that navigated: wait for the new page (its URL goes in
    /// `delta`).
    async fn after_navigation(&self, delta: &mut Settled) {
        if !delta.navigated {
            return;
        }
        let token = delta.token.clone();
        let wait = ops::Wait { kind: ops::WaitKind::Navigation, token, ..ops::Wait::default() };
        match self.step(wait, NAVIGATION_MS).await {
            Ok(r) => delta.url = Some(r.url),
            Err(_) => delta.url = Some("(the navigation did not finish within 15 s)".into()),
        }
        let _ = self.step(ops::NetworkIdle { quiet_ms: Some(0) }, 3_000).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(v: serde_json::Value) -> ops::Act {
        serde_json::from_value(v).expect("act arguments")
    }

    /// What an action lacks, or a key no keyboard has, is refused before its
    /// tab is resolved (no tab is opened for a refused call), with the field.
    #[test]
    fn an_action_is_checked_before_its_tab_is_touched() {
        let refused = |v: serde_json::Value| check_act(&act(v)).map_err(|e| e.details);
        for (args, field) in [
            (json!({}), "ref"),
            (json!({"action": "hover"}), "ref"),
            (json!({"action": "press"}), "key"),
            (json!({"action": "press", "key": "NoSuchKey"}), ""),
            (json!({"action": "type", "ref": "ax_1"}), "text"),
            (json!({"action": "type", "ref": "ax_1", "text": ""}), "text"),
            (json!({"action": "type", "text": "hi"}), "ref"),
        ] {
            let e = refused(args.clone()).expect_err(&args.to_string());
            if !field.is_empty() {
                assert_eq!(e.get("field"), Some(&json!(field)), "{args}: {e:?}");
            }
        }
        for ok in [
            json!({"ref": "ax_1"}),
            json!({"query": "Send"}),
            json!({"action": "press", "key": "Enter"}),
            json!({"action": "type", "query": "Name", "text": "Ada"}),
        ] {
            refused(ok.clone()).unwrap_or_else(|e| panic!("{ok}: {e:?}"));
        }
        let keys = keys_of(&act(json!({"text": "a\n", "submit": true})), true).expect("keys");
        assert_eq!(keys.len(), 3, "a, Enter for the newline, Enter to submit");
    }
}
