//! Stage `record`: while a recording runs, each call is a step of it: what ran,
//! how it went, where the tab is now, a small screenshot if asked, and who the
//! call's refs were (role, name, rank, read before the call changed the page) so
//! a replay finds the same elements on a fresh page.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::{Call, Outcome, Stage, done, proceed};
use crate::Clock;
use crate::browser::BrowserManager;
use crate::error::ToolError;
use crate::journal::{CallRecord, iso_of, redact_args_full};
use crate::recording::Recorder;
use crate::tool::ToolInfo;

pub(crate) struct Record {
    pub recorder: Arc<Recorder>,
    pub browser: BrowserManager,
    pub clock: Clock,
}

impl Stage for Record {
    fn name(&self) -> &'static str {
        "record"
    }

    fn check(&self, call: &mut Call<'_>) -> Result<(), ToolError> {
        // The recording tools themselves are not steps.
        if call.info.capability != "recording" {
            call.recording = self.recorder.recording();
        }
        Ok(())
    }

    fn before<'a>(&'a self, call: &'a mut Call<'_>) -> BoxFuture<'a, Result<(), ToolError>> {
        if call.recording.is_none() {
            return proceed(Ok(()));
        }
        Box::pin(async move {
            call.targets = self.identify_refs(tab_of(&call.args), &call.args).await;
            Ok(())
        })
    }

    fn after<'a>(&'a self, call: &'a mut Call<'_>, _outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        if call.recording.is_none() {
            return done();
        }
        Box::pin(async move {
            if let (Some(capture), Some(record)) = (call.recording, &call.record) {
                let targets = call.targets.take();
                self.record_step(
                    call.info,
                    &call.args,
                    record,
                    tab_of(&call.args),
                    targets,
                    capture,
                )
                .await;
            }
        })
    }
}

fn tab_of(args: &Value) -> Option<&str> {
    args.get("tabId").and_then(Value::as_str)
}

impl Record {
    /// Role, name and rank of each ref in `args` (string values and object keys
    /// `ax_<n>`), so a replay can find the same elements on a fresh page.
    async fn identify_refs(&self, tab: Option<&str>, args: &Value) -> Option<Value> {
        fn collect(v: &Value, out: &mut std::collections::BTreeSet<String>) {
            match v {
                Value::String(s) if is_ref(s) => {
                    out.insert(s.clone());
                }
                Value::Object(m) => {
                    for (k, v) in m {
                        if is_ref(k) {
                            out.insert(k.clone());
                        }
                        collect(v, out);
                    }
                }
                Value::Array(items) => items.iter().for_each(|i| collect(i, out)),
                _ => {}
            }
        }
        let mut refs = std::collections::BTreeSet::new();
        collect(args, &mut refs);
        if refs.is_empty() {
            return None;
        }
        let browser = &self.browser;
        browser.peek_tab(tab).await?;
        let mut out = Map::new();
        for r in refs.into_iter().take(32) {
            if let Ok(v) = browser.page_op(tab, "identify", json!({"ref": r}), 2_000).await {
                out.insert(r, v);
            }
        }
        (!out.is_empty()).then_some(Value::Object(out))
    }

    /// Append a step to the running recording: what ran, how it went, where the
    /// tab is now, and (if asked) a small screenshot.
    async fn record_step(
        &self,
        info: &ToolInfo,
        args: &Value,
        record: &CallRecord,
        tab: Option<&str>,
        targets: Option<Value>,
        capture: bool,
    ) {
        let browser = &self.browser;
        let at = match browser.peek_tab(tab).await {
            Some(t) => Some(t),
            None => browser.peek_tab(None).await,
        };
        let shot = match (&at, capture) {
            (Some(t), true) => browser.thumbnail(Some(&t.id)).await.ok(),
            _ => None,
        };
        let mut step = json!({
            "ts": iso_of(self.clock.now_ms()),
            "tool": info.name,
            "args": redact_args_full(args, &info.redact),
            "duration_ms": record.duration_ms,
            "ok": record.ok,
            "outcome": record.summary,
        });
        if let Value::Object(o) = &mut step {
            if let Some(i) = &record.intent {
                o.insert("intent".into(), json!(i));
            }
            if let Some(c) = &record.error {
                o.insert("error".into(), json!(c));
            }
            if let Some(t) = at {
                o.insert("tab".into(), json!(t.id));
                o.insert("url".into(), json!(t.url));
                o.insert("title".into(), json!(t.title));
            }
            if let Some(t) = targets {
                o.insert("targets".into(), t);
            }
        }
        self.recorder.append(step, shot);
    }
}

fn is_ref(s: &str) -> bool {
    s.strip_prefix("ax_")
        .is_some_and(|d| !d.is_empty() && d.len() <= 12 && d.bytes().all(|b| b.is_ascii_digit()))
}
