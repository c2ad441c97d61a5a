//! Stage `record`: while a recording runs, each call is a step of it: what ran,
//! how it went, where the tab is now, a small screenshot if asked, and who the
//! call's refs were (role, name, rank, read before the call changed the page) so
//! a replay finds the same elements on a fresh page.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{Call, Outcome, Stage, done, proceed};
use crate::Clock;
use crate::browser::BrowserManager;
use crate::browser::{HostBrowser, RefId, TabId};
use crate::error::ToolError;
use crate::redact::{KnownSecrets, secret_arg_name, slug};
use crate::stores::journal::{CallRecord, is_sensitive_name, iso_of};
use crate::stores::recording::{RecordedStep, Recorder};
use crate::tool::ToolInfo;
use ochre_protocol::recording::RecordedTarget;

/// Who each ref of a call's arguments was before it ran, by ref.
pub(crate) type Targets = std::collections::BTreeMap<String, RecordedTarget>;

pub(crate) struct Record {
    pub recorder: Arc<Recorder>,
    pub browser: BrowserManager,
    pub clock: Clock,
    pub known: Arc<KnownSecrets>,
}

impl Stage for Record {
    fn name(&self) -> &'static str {
        "record"
    }

    fn check(&self, call: &mut Call<'_>) -> Result<(), ToolError> {
        // The recording tools themselves are not steps, nor are the calls a
        // step makes (a plan's, a replay's): they are part of it.
        if call.info.capability != "recording" && call.is_top_level() {
            call.recording = self.recorder.recording();
        }
        Ok(())
    }

    fn before<'a>(&'a self, call: &'a mut Call<'_>) -> BoxFuture<'a, Result<(), ToolError>> {
        if call.recording.is_none() {
            return proceed(Ok(()));
        }
        Box::pin(async move {
            call.targets = match tab_of(&call.args) {
                Ok(tab) => self.identify_refs(tab, &call.args).await,
                Err(_) => Targets::new(),
            };
            Ok(())
        })
    }

    fn after<'a>(&'a self, call: &'a mut Call<'_>, _outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        if call.recording.is_none() {
            return done();
        }
        Box::pin(async move {
            if let (Some(capture), Some(record)) = (call.recording, &call.record) {
                let targets = std::mem::take(&mut call.targets);
                self.record_step(
                    call.info,
                    &call.args,
                    record,
                    tab_of(&call.args).unwrap_or(None),
                    targets,
                    capture,
                )
                .await;
            }
        })
    }
}

/// The tab a call names (`None`: the current tab); an error for a name that
/// is no tab's.
fn tab_of(args: &Value) -> Result<Option<TabId>, ToolError> {
    TabId::named(args.get("tabId").and_then(Value::as_str))
}

impl Record {
    /// Role, name and rank of each ref in `args` (string values and object keys
    /// `ax_<n>`), so a replay can find the same elements on a fresh page.
    async fn identify_refs(&self, tab: Option<TabId>, args: &Value) -> Targets {
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
        let mut out = Targets::new();
        let browser = &self.browser;
        if refs.is_empty() || browser.peek_tab(tab).await.is_none() {
            return out;
        }
        for r in refs.into_iter().take(32) {
            let Some(id) = RefId::parse(&r) else { continue };
            let who = browser.run(tab, &crate::browser::page_ops::Identify::of(id), 2_000).await;
            if let Ok(who) = who {
                out.insert(r, RecordedTarget::from(who));
            }
        }
        out
    }

    /// Append a step to the running recording: what ran, how it went, where the
    /// tab is now, and (if asked) a small screenshot.
    async fn record_step(
        &self,
        info: &ToolInfo,
        args: &Value,
        record: &CallRecord,
        tab: Option<TabId>,
        mut targets: Targets,
        capture: bool,
    ) {
        let browser = &self.browser;
        let at = match browser.peek_tab(tab).await {
            Some(t) => Some(t),
            None => browser.peek_tab(None).await,
        };
        let shot = match (&at, capture) {
            (Some(t), true) => browser.thumbnail(TabId::parse(&t.id)).await.ok(),
            _ => None,
        };
        self.scrub_targets(&mut targets);
        let args = self.parameterize(info, args, &targets);
        let step = RecordedStep {
            ts: iso_of(self.clock.now_ms()),
            tool: info.name.clone(),
            args,
            duration_ms: record.duration_ms,
            ok: record.ok,
            outcome: record.summary.clone(),
            intent: record.intent.clone(),
            error: record.error.clone(),
            tab: at.as_ref().map(|t| t.id.clone()),
            url: at.as_ref().map(|t| t.url.clone()),
            title: at.map(|t| t.title),
            targets,
            ..RecordedStep::default()
        };
        self.recorder.append(step, shot);
    }
}

use super::redact::is_ref;

impl Record {
    /// Known secrets in what the elements were called (a field named after
    /// the value it holds) as their names.
    fn scrub_targets(&self, targets: &mut Targets) {
        if targets.is_empty() {
            return;
        }
        let Ok(mut v) = serde_json::to_value(&*targets) else { return };
        self.known.scrub_value(&mut v);
        *targets = serde_json::from_value(v).unwrap_or_default();
    }

    /// The arguments as a recording keeps them, so that a replay can change
    /// them and no secret is written: each value the call typed (the tool's
    /// `redact` arguments) becomes a parameter named after its field, with
    /// the value as its default (`{{title=Quarterly report}}`), or, for a known
    /// secret, its name alone (`{{password}}`, `{{totp:example.com}}`).
    /// Elsewhere a known secret becomes its parameter, and the value of an
    /// argument with a secret's name (`password`, `token`) one with no default.
    fn parameterize(&self, info: &ToolInfo, args: &Value, targets: &Targets) -> Value {
        // What a value's parameter is named after: the field's recorded name,
        // else the label `fill_form` was given, else the argument.
        let field = |target: &str, arg: &str| -> String {
            match targets
                .get(target)
                .and_then(|t| t.target.name.as_deref())
                .filter(|n| !n.is_empty())
            {
                Some(named) => named.to_owned(),
                None if is_ref(target) || target.is_empty() => arg.to_owned(),
                None => target.to_owned(),
            }
        };
        let mut out = args.clone();
        let Some(m) = out.as_object_mut() else {
            return out;
        };
        let target = args["ref"].as_str().unwrap_or_default();
        for (k, v) in m.iter_mut() {
            if info.secret_args.contains(k) {
                if let Value::String(s) = v
                    && !s.is_empty()
                {
                    let name = secret_arg_name(&info.name, args, k);
                    *s = format!("{{{{{}}}}}", self.recorder.param(&name, None));
                }
                continue;
            }
            if !info.redact.contains(k) {
                self.mask(k, v);
                continue;
            }
            match v {
                Value::String(s) => *s = self.param_text(&field(target, k), s),
                Value::Object(fields) => {
                    for (fk, fv) in fields.iter_mut() {
                        if let Value::String(s) = fv {
                            *s = self.param_text(&field(fk, k), s);
                        }
                    }
                }
                other => self.mask(k, other),
            }
        }
        out
    }

    /// A typed value as a parameter of the recording.
    fn param_text(&self, base: &str, value: &str) -> String {
        // A known secret, whole or in part, as its parameter.
        let masked = self.secret_params(value);
        if masked != value {
            return masked;
        }
        let name = slug(base, "value");
        if is_sensitive_name(base) {
            return format!("{{{{{}}}}}", self.recorder.param(&name, None));
        }
        if value.contains("{{") || value.contains("}}") || value.is_empty() {
            return value.to_owned();
        }
        format!("{{{{{}={value}}}}}", self.recorder.param(&name, Some(value)))
    }

    /// `text` with each known secret in it replaced by its parameter.
    fn secret_params(&self, text: &str) -> String {
        self.known
            .replace(text, |name| {
                self.recorder.param(name, None);
                format!("{{{{{name}}}}}")
            })
            .into_owned()
    }

    /// Known secrets in `v` as their parameters; the value of an argument
    /// with a secret's name as a parameter with no default.
    fn mask(&self, key: &str, v: &mut Value) {
        match v {
            Value::String(s) if is_sensitive_name(key) && !s.is_empty() => {
                *s = format!("{{{{{}}}}}", self.recorder.param(&slug(key, "secret"), None));
            }
            Value::String(s) => *s = self.secret_params(s),
            Value::Array(items) => items.iter_mut().for_each(|i| self.mask(key, i)),
            Value::Object(m) => m.iter_mut().for_each(|(k, x)| self.mask(k, x)),
            _ => {}
        }
    }
}
