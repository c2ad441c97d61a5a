//! Stage `redact`: no secret leaves the server through a call.
//!
//! - `before`: in a call a replay or a plan makes (a nested call), the
//!   parameters `{{secret:NAME}}` and `{{totp:DOMAIN}}` in the values it types
//!   are resolved here, from the operator's secret store and the `totp` tool,
//!   so the value never enters a plugin; then a value about to be typed into a
//!   password or one-time-code field becomes a known secret.
//! - `after`: a tool's secret result (the code of `oc_totp_generate`) becomes a
//!   known secret; then every known secret is masked in the outcome (texts,
//!   structured result, summary, error), before the handles, the journal, the
//!   trace and the recording see it. A tool's own secret result reaches its
//!   caller (that is what it is for) but not its summary.

use crate::browser::page_ops::FieldSecrets;
use crate::browser::{HostBrowser, TabId};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::{Call, Outcome, Stage, done, proceed};
use crate::browser::BrowserManager;
use crate::error::ToolError;
use crate::redact::{KnownSecrets, MIN_SECRET_CHARS, slug};
use crate::stores::secrets::SecretStore;
use crate::tool::{CallOptions, Content};

/// The namespace of the secret store that `{{secret:NAME}}` reads
/// (`ochre secret set NAME`, or `OCHRE_SECRET_<NAME>`).
pub const SECRET_NAMESPACE: &str = "secret";

/// How long a tool's secret result (a one-time code) stays known: past its
/// use, masking its digits would mask any number that equals them.
const SECRET_RESULT_TTL: std::time::Duration = std::time::Duration::from_secs(180);

pub(crate) struct Redact {
    pub known: Arc<KnownSecrets>,
    pub browser: BrowserManager,
    pub store: SecretStore,
    pub caller: crate::plugin::CallerCell,
}

impl Stage for Redact {
    fn name(&self) -> &'static str {
        "redact"
    }

    fn before<'a>(&'a self, call: &'a mut Call<'_>) -> BoxFuture<'a, Result<(), ToolError>> {
        // Values too short to be known by value need no look at the page.
        if typed_values(call).is_empty() {
            return proceed(Ok(()));
        }
        Box::pin(async move {
            if !call.is_top_level() {
                self.resolve(call).await?;
            }
            if call.info.guard_scope() == crate::intent::Scope::Browser {
                self.learn_secret_fields(call).await;
            }
            Ok(())
        })
    }

    fn after<'a>(&'a self, call: &'a mut Call<'_>, outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        let own_result = match (&call.info.secret_result, &*outcome) {
            (Some((field, template)), Ok(out)) => {
                if let Some(v) = out.structured.as_ref().and_then(|s| s[field].as_str()) {
                    self.known.add_for(&fill_template(template, &call.args), v, SECRET_RESULT_TTL);
                }
                true
            }
            _ => false,
        };
        if self.known.is_empty() {
            return done();
        }
        match outcome {
            Ok(out) => {
                self.known.scrub_string(&mut out.summary);
                if !own_result {
                    for c in &mut out.content {
                        if let Content::Text(t) = c {
                            self.known.scrub_string(t);
                        }
                    }
                    if let Some(s) = &mut out.structured {
                        self.known.scrub_value(s);
                    }
                }
            }
            Err(e) => {
                self.known.scrub_string(&mut e.message);
                let mut details = Value::Object(std::mem::take(&mut e.details));
                self.known.scrub_value(&mut details);
                if let Value::Object(m) = details {
                    e.details = m;
                }
            }
        }
        done()
    }
}

/// The values a call types (those long enough to be a known secret), by where
/// they go: `(target, value)`, where the
/// target is the call's `ref` (a value argument) or a key of an object
/// argument (a ref or a field's label); the tool declares these arguments
/// (`redact`).
fn typed_values(call: &Call<'_>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let target = call.args["ref"].as_str().unwrap_or_default();
    for arg in &call.info.redact {
        match &call.args[arg.as_str()] {
            Value::String(s) => out.push((target.to_owned(), s.clone())),
            Value::Object(m) => {
                for (k, v) in m {
                    if let Some(s) = v.as_str() {
                        out.push((k.clone(), s.to_owned()));
                    }
                }
            }
            _ => {}
        }
    }
    out.retain(|(_, v)| v.trim().chars().count() >= MIN_SECRET_CHARS);
    out
}

/// `{{name}}` placeholders of a template filled from the call's arguments
/// (`totp:{domain}` → `totp:example.com`).
fn fill_template(template: &str, args: &Value) -> String {
    let mut out = template.to_owned();
    if let Some(m) = args.as_object() {
        for (k, v) in m {
            if let Some(s) = v.as_str() {
                out = out.replace(&format!("{{{k}}}"), s);
            }
        }
    }
    out
}

/// The secret parameters in `s`: `(token, kind, key)` for each
/// `{{secret:NAME}}` and `{{totp:DOMAIN}}`.
fn secret_tokens(s: &str) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("{{") {
        let after = &rest[i + 2..];
        let Some(j) = after.find("}}") else { break };
        let inner = after[..j].trim();
        for kind in ["secret", "totp"] {
            if let Some(key) = inner.strip_prefix(kind).and_then(|r| r.strip_prefix(':')) {
                let key = key.trim();
                if !key.is_empty() && key.len() <= 253 {
                    out.push((format!("{{{{{}}}}}", &after[..j]), kind, key.to_owned()));
                }
            }
        }
        rest = &after[j + 2..];
    }
    out
}

impl Redact {
    /// Put the values of `{{secret:NAME}}` and `{{totp:DOMAIN}}` into the
    /// typed arguments of a nested call.
    async fn resolve(&self, call: &mut Call<'_>) -> Result<(), ToolError> {
        for arg in &call.info.redact {
            let options = call.options;
            let Some(v) = call.args.as_object_mut().and_then(|m| m.get_mut(arg)) else {
                continue;
            };
            self.resolve_value(v, options).await?;
        }
        Ok(())
    }

    async fn resolve_value(&self, v: &mut Value, options: &CallOptions) -> Result<(), ToolError> {
        match v {
            Value::String(s) => {
                for (token, kind, key) in secret_tokens(s) {
                    let value = self.secret(kind, &key, options).await?;
                    *s = s.replace(&token, &value);
                }
            }
            Value::Object(m) => {
                for x in m.values_mut() {
                    Box::pin(self.resolve_value(x, options)).await?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The value of a secret parameter, now known as `kind:key`.
    async fn secret(
        &self,
        kind: &str,
        key: &str,
        options: &CallOptions,
    ) -> Result<String, ToolError> {
        let name = format!("{kind}:{key}");
        let value = if kind == "totp" {
            let Some(caller) = self.caller.get() else {
                return Err(ToolError::plugin_failed("shutting down"));
            };
            let out = caller
                .call_tool("oc_totp_generate".into(), json!({"domain": key}), options.child())
                .await
                .map_err(|e| {
                    ToolError::new(
                        e.code.clone(),
                        format!("the parameter {{{{{name}}}}} needs a TOTP code: {}", e.message),
                    )
                })?;
            out.structured
                .and_then(|s| s["code"].as_str().map(str::to_owned))
                .ok_or_else(|| ToolError::secret_not_found("oc_totp_generate returned no code"))?
        } else {
            self.store.get(SECRET_NAMESPACE, key).ok_or_else(|| {
                ToolError::secret_not_found(format!(
                        "no secret {key:?} for the parameter {{{{{name}}}}}: store it with `ochre secret set {key}` or set {} in the server's environment",
                        SecretStore::env_name(SECRET_NAMESPACE, key)
                    ),
                )
                .with("secret", key)
            })?
        };
        // A TOTP code is known already: `oc_totp_generate` declares it.
        if kind == "secret" {
            self.known.add(&name, &value);
        }
        Ok(value)
    }

    /// The values about to go into password and one-time-code fields become
    /// known secrets, named after their field.
    async fn learn_secret_fields(&self, call: &Call<'_>) {
        let typed = typed_values(call);
        let (refs, keys): (Vec<&str>, Vec<&str>) = typed
            .iter()
            .map(|(t, _)| t.as_str())
            .filter(|t| !t.is_empty())
            .partition(|t| is_ref(t));
        let Ok(tab) = TabId::named(call.args["tabId"].as_str()) else {
            return;
        };
        if self.browser.peek_tab(tab).await.is_none() {
            return;
        }
        let own = |v: Vec<&str>| Some(v.into_iter().map(str::to_owned).collect());
        let ask = FieldSecrets { refs: own(refs), keys: own(keys) };
        let Ok(fields) = self.browser.run(tab, &ask, 2_000).await else {
            return;
        };
        for (target, value) in &typed {
            let Some(f) = fields.get(target.as_str()) else { continue };
            if f.secret {
                let fallback = if f.otp { "one_time_code" } else { "password" };
                self.known.add(&slug(&f.name, fallback), value);
            }
        }
    }
}

pub(crate) fn is_ref(s: &str) -> bool {
    ochre_protocol::browser::RefId::parse(s).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_tokens_are_found_in_text() {
        let t =
            secret_tokens("a {{secret:admin_pw}} b {{ totp:example.com }} {{title=x}} {{totp:}}");
        assert_eq!(
            t,
            vec![
                ("{{secret:admin_pw}}".into(), "secret", "admin_pw".into()),
                ("{{ totp:example.com }}".into(), "totp", "example.com".into()),
            ]
        );
        assert_eq!(fill_template("totp:{domain}", &json!({"domain": "a.b"})), "totp:a.b");
    }
}
