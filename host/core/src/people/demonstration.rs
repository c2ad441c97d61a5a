//! A demonstration: what a person does in the live view of a handed-over
//! tab, recorded as an agent's calls are. Their clicks become `interact`
//! steps and what they type into a field one `form_input` step, run through
//! the tool pipeline as the person (so the recording, the journal and every
//! guard see them as any call); the rest of their input goes to the page as
//! it is. The recording starts on the page as it is (a `navigate` to its URL
//! is its first step) and replays and exports like any other.

use serde_json::{Value, json};

use ochre_protocol::page_ops::{AtPoint, AtPointFound, Gesture, Press};

use super::Handoff;
use crate::browser::{HostBrowser, RefId};
use crate::error::ToolError;
use crate::{CallOptions, Host};

/// A demonstration under way, between batches of the person's input.
#[derive(Debug, Default)]
pub(super) struct Demo {
    /// The text field being typed into (its ref): its text becomes a step
    /// when the person leaves it.
    field: Option<RefId>,
    /// The element a press landed on: clicked (a step) at the release.
    click: Option<RefId>,
}

impl Host {
    /// Start recording a demonstration of `h`'s tab (refused while one is
    /// recorded): its recording's id.
    pub async fn start_demonstration(&self, h: &Handoff) -> Result<String, ToolError> {
        let mut demo = h.demo.lock().await;
        if demo.is_some() {
            return Err(ToolError::invalid_argument("action", "a demonstration is being recorded"));
        }
        let label = format!("demonstration: {}", h.reason);
        let started = self.person_call(h, "oc_recording_start", json!({"label": label})).await?;
        let id = started["recordingId"].as_str().unwrap_or_default().to_owned();
        *demo = Some(Demo::default());
        *ochre_protocol::lock(&h.demonstration) = Some(id.clone());
        let url = self.browser().with_owner(h.owner.clone(), self.browser().peek_tab(Some(h.tab)));
        if let Some(url) = url.await.map(|t| t.url).filter(|u| u.starts_with("http")) {
            self.person_call(h, "navigate", json!({"url": url, "tabId": h.tab.to_string()}))
                .await?;
        }
        Ok(id)
    }

    /// Stop the demonstration of `h`, if one is recorded (the field being
    /// typed into becomes its last step): its recording's id.
    pub async fn stop_demonstration(&self, h: &Handoff) -> Result<Option<String>, ToolError> {
        let mut slot = h.demo.lock().await;
        let Some(mut demo) = slot.take() else { return Ok(None) };
        let committed = self.commit(h, &mut demo).await;
        self.person_call(h, "oc_recording_stop", json!({})).await?;
        committed?;
        Ok(ochre_protocol::lock(&h.demonstration).clone())
    }

    /// The person's input on `h`'s tab: to the page, and during a
    /// demonstration its steps. A left click on an element is an `interact`
    /// step; a press on a text field and what is typed there go to the page
    /// as they are, and the field's text becomes a `form_input` step when the
    /// person leaves it (a click elsewhere, Tab, Enter: a `press_key` step,
    /// Stop or Done). The rest (the wheel, other buttons, keys outside a
    /// field) goes to the page unrecorded.
    pub async fn person_input(&self, h: &Handoff, events: Vec<Gesture>) -> Result<(), ToolError> {
        let mut slot = h.demo.lock().await;
        let browser = self.browser();
        let Some(demo) = slot.as_mut() else {
            return browser.person_input(h.tab, &events).await;
        };
        let left = |b: &Option<String>| b.as_deref().is_none_or(|b| b == "left");
        for ev in events {
            match &ev {
                Gesture::Down(Press { x, y, button, .. }) if left(button) => {
                    match self.element_at(h, AtPoint { x: *x, y: *y, focused: false }).await {
                        Ok(f) if f.editable => {
                            if demo.field != Some(f.ref_id) {
                                self.commit(h, demo).await?;
                            }
                            demo.field = Some(f.ref_id);
                            browser.person_input(h.tab, &[ev]).await?;
                        }
                        Ok(f) => {
                            self.commit(h, demo).await?;
                            demo.click = Some(f.ref_id);
                        }
                        Err(_) => browser.person_input(h.tab, &[ev]).await?,
                    }
                }
                Gesture::Up(Press { button, .. }) if left(button) && demo.click.is_some() => {
                    let target = demo.click.take().unwrap_or_default();
                    let args = json!({"ref": target, "tabId": h.tab.to_string()});
                    self.person_call(h, "interact", args).await?;
                }
                Gesture::Move { .. } if demo.click.is_some() => {}
                Gesture::Key { key } if key == "Enter" && demo.field.is_some() => {
                    let field = demo.field.unwrap_or_default();
                    self.commit(h, demo).await?;
                    let args = json!({"key": "Enter", "ref": field, "tabId": h.tab.to_string()});
                    self.person_call(h, "press_key", args).await?;
                }
                Gesture::Key { key } if key == "Tab" || key == "Shift+Tab" => {
                    self.commit(h, demo).await?;
                    browser.person_input(h.tab, &[ev]).await?;
                    let focused = self.element_at(h, AtPoint { x: 0.0, y: 0.0, focused: true });
                    demo.field = focused.await.ok().filter(|f| f.editable).map(|f| f.ref_id);
                }
                _ => browser.person_input(h.tab, &[ev]).await?,
            }
        }
        Ok(())
    }

    /// Run `fut` as the person holding `h`'s tab, in its owner's tabs.
    async fn as_person<T>(&self, h: &Handoff, fut: impl Future<Output = T> + Send) -> T {
        let browser = self.browser();
        browser.with_owner(h.owner.clone(), browser.as_person(h.tab, fut)).await
    }

    /// A tool call made for the person (a step of their demonstration). On
    /// the agent's current tab it names no tab, as an agent's calls mostly
    /// do: a replay in another session has no tab of that id.
    async fn person_call(
        &self,
        h: &Handoff,
        tool: &str,
        mut args: Value,
    ) -> Result<Value, ToolError> {
        let current = self.as_person(h, self.browser().peek_tab(None)).await;
        if current.is_some_and(|t| t.id == h.tab.to_string())
            && let Some(o) = args.as_object_mut()
        {
            o.remove("tabId");
        }
        let mut options = CallOptions::default();
        if let Some(o) = &h.owner {
            options = options.with_own_tabs(o.clone());
        }
        let out = self.as_person(h, self.call_tool(tool, args, options)).await?;
        Ok(out.structured.unwrap_or(Value::Null))
    }

    /// The element at a point of `h`'s tab (or the one with focus).
    async fn element_at(&self, h: &Handoff, at: AtPoint) -> Result<AtPointFound, ToolError> {
        self.as_person(h, self.browser().run(Some(h.tab), &at, 5_000)).await
    }

    /// The field being typed into becomes a step: `form_input` with its text.
    async fn commit(&self, h: &Handoff, demo: &mut Demo) -> Result<(), ToolError> {
        let Some(field) = demo.field.take() else { return Ok(()) };
        let text = self.as_person(h, self.browser().person_field_text(h.tab, field)).await?;
        if text.is_empty() {
            return Ok(());
        }
        let args = json!({"ref": field, "value": text, "tabId": h.tab.to_string()});
        self.person_call(h, "form_input", args).await.map(drop)
    }
}
