//! The host's own tools: they read host state, so they live here, not in a
//! plugin: `oc_journal` and `oc_output_fetch` ([`journal`]), `oc_task_run_*`
//! and `oc_bulk_progress_*` ([`runs`]), `oc_login_*` ([`logins`]),
//! `oc_credential_fill` ([`credential`]) and `oc_handoff` ([`handoff`])
//! (`expand_tools` is per MCP session, in the server). Each is a typed
//! [`HostTool`], as an embedder's native tools are
//! ([`crate::native::typed_tool`]): its JSON Schema is derived from its
//! arguments' type, and its call gets that type.

mod credential;
mod handoff;
mod journal;
mod logins;
mod runs;

use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::error::ToolError;
use crate::intent::Scope;
use crate::native::HostTool;
use crate::tool::{Annotations, CallOptions, ToolInfo, ToolOutput};

/// What the host's own tools work with: narrow handles on the host's state.
pub(crate) struct HostTools {
    pub journal: Arc<crate::stores::journal::Journal>,
    pub output: Arc<crate::stores::output::HandleStore>,
    pub task_runs: Arc<crate::stores::taskrun::TaskRuns>,
    pub sessions: Arc<crate::pipeline::Sessions>,
    pub intent_guard: crate::intent::IntentGuardConfig,
    pub intent_detector: Option<crate::intent::DetectorSlot>,
    pub browser: crate::browser::BrowserManager,
    /// A browser tool is enabled on this server (a browser-first run can run);
    /// known once every tool is loaded.
    pub browser_tools: std::sync::OnceLock<bool>,
    /// The named logins (sealed with the operator's key).
    pub logins: Arc<crate::stores::logins::LoginStore>,
    /// The origin-bound credentials (sealed with the same key).
    pub credentials: Arc<crate::stores::credentials::CredentialStore>,
    /// The secrets every outcome is scrubbed of (a typed password joins them).
    pub known: Arc<crate::redact::KnownSecrets>,
    /// The hand-offs under way (`oc_handoff`).
    pub people: Arc<crate::people::People>,
}

/// How a host tool is offered.
#[derive(Debug, Clone, Copy)]
struct Offer {
    tier: u8,
    /// What the intent guard counts it as.
    scope: Scope,
    annotations: Annotations,
    /// Part of the guards' control plane (task runs, bulk progress, logins):
    /// never a browser-first run's browser tool.
    control: bool,
    /// Offered whatever capability groups are enabled.
    always: bool,
}

impl Offer {
    /// A control-plane tool (tier 2, local scope): read-only ones are
    /// idempotent.
    fn control(read_only: bool) -> Self {
        Offer {
            tier: 2,
            scope: Scope::Local,
            annotations: Annotations { read_only, idempotent: read_only, ..Annotations::default() },
            control: true,
            always: false,
        }
    }

    /// Offered whatever capability groups are enabled.
    fn always(self) -> Self {
        Offer { always: true, ..self }
    }
}

/// The host's own tools as they are made.
struct Made {
    host: Arc<HostTools>,
    tools: Vec<(Arc<dyn HostTool>, bool)>,
}

impl Made {
    /// Add tool `name`, whose arguments are an `A` and whose body is `f`.
    fn add<A, F, Fut>(&mut self, name: &str, description: &str, offer: Offer, f: F)
    where
        A: DeserializeOwned + schemars::JsonSchema + 'static,
        F: Fn(Arc<HostTools>, A, CallOptions) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        let host = self.host.clone();
        let tool = crate::native::typed_tool(name, description, move |args: A, options| {
            f(host.clone(), args, options)
        })
        .with_info(|info| {
            let schema = std::mem::take(&mut info.input_schema);
            let mut own = ToolInfo::host_own(name, description, schema, offer.tier, offer.scope);
            own.annotations = offer.annotations;
            own.control = offer.control;
            *info = own;
        });
        self.tools.push((Arc::new(tool), offer.always));
    }
}

/// The host's own tools, each with whether it stays whatever capability groups
/// are enabled (task runs and bulk progress: the guards' control plane).
pub(crate) fn own_tools(host: &Arc<HostTools>) -> Vec<(Arc<dyn HostTool>, bool)> {
    let mut made = Made { host: host.clone(), tools: Vec::new() };
    journal::add(&mut made);
    runs::add(&mut made);
    logins::add(&mut made);
    credential::add(&mut made);
    handoff::add(&mut made);
    made.tools
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn schema<A: schemars::JsonSchema>() -> Value {
        serde_json::to_value(schemars::schema_for!(A)).expect("a schema")
    }

    /// The derived schemas keep the bounds the hand-written ones had: a
    /// call past one is refused by the pipeline's validation, before the
    /// tool runs.
    #[test]
    fn derived_schemas_bound_what_they_take() {
        let valid = |s: &Value, v: Value| jsonschema::validator_for(s).expect("valid").is_valid(&v);
        let j = schema::<journal::JournalArgs>();
        assert!(valid(&j, json!({"action": "summary", "count": 100})));
        assert!(!valid(&j, json!({"count": 101})), "{j}");
        assert!(!valid(&j, json!({"action": "all"})), "{j}");
        assert!(!valid(&j, json!({"other": 1})), "{j}");
        let l = schema::<logins::LoginName>();
        assert!(valid(&l, json!({"name": "work-1"})));
        assert!(!valid(&l, json!({"name": "../x"})), "{l}");
        assert!(!valid(&l, json!({})), "{l}");
        let c = schema::<runs::RunEnd>();
        assert!(valid(&c, json!({"run_id": "r1", "status": "FAILED"})));
        assert!(!valid(&c, json!({"run_id": "r1", "status": "DONE"})), "{c}");
        let u = schema::<runs::BulkUpdate>();
        assert!(!valid(&u, json!({"failed": [{"item": "a", "why": "b"}]})), "{u}");
        assert!(!valid(&u, json!({"completed": [""]})), "{u}");
        let h = schema::<handoff::HandoffArgs>();
        assert!(valid(&h, json!({"reason": "a CAPTCHA", "tabId": "t2", "timeout_ms": 1000})));
        assert!(!valid(&h, json!({"handoffId": "x1"})), "{h}");
        assert!(!valid(&h, json!({"timeout_ms": 999})), "{h}");
        let f = schema::<credential::CredentialArgs>();
        assert!(valid(&f, json!({"name": "bank", "password": "ax_3"})));
        assert!(!valid(&f, json!({"name": "bank", "password": "3"})), "{f}");
    }
}
