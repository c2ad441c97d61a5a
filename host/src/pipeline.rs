//! The tool-call pipeline: every call, from MCP or an embedder, runs these steps in
//! this one place: resolve -> capability gate -> host-owned fields (`intent`) ->
//! schema validation -> plugin call under limits -> journal + trace + recording.
//!
//! A call rejected before it runs (unknown tool, disabled capability, invalid
//! arguments or intent) performs nothing and writes no journal or trace entry.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{Map, Value, json};
use tracing::Instrument;

use crate::error::{ToolError, codes};
use crate::guard;
use crate::hints::Seen;
use crate::host::{Host, ToolImpl};
use crate::journal::{CallRecord, iso_of, redact_args, redact_args_full};
use crate::output::{HandleMeta, OutputMode, Payload};
use crate::plugin::bindings;
use crate::{ProgressFn, host_tools};

/// MCP annotations of a tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    /// Changes nothing.
    pub read_only: bool,
    /// May destroy data.
    pub destructive: bool,
    /// Repeating has no extra effect.
    pub idempotent: bool,
    /// Talks to the open web.
    pub open_world: bool,
}

/// A tool as the host offers it.
#[derive(Debug, Clone)]
pub struct ToolInfo {
    /// Unique name.
    pub name: String,
    /// What it does and when to use it.
    pub description: String,
    /// JSON Schema of its arguments as clients see it (host-owned fields included).
    pub input_schema: Value,
    /// Capability group.
    pub capability: String,
    /// Disclosure tier.
    pub tier: u8,
    /// MCP annotations.
    pub annotations: Annotations,
    /// Accepts an `intent` label.
    pub intent: bool,
    /// Supports `output_mode`.
    pub output_mode: bool,
    /// Argument names never logged.
    pub redact: Vec<String>,
    /// The plugin offering it (`host` for host tools).
    pub plugin: String,
    /// What it touches, for the intent guard; `None` (a tool that declares
    /// nothing) is classified by name ([`crate::intent::classify_by_name`]).
    pub scope: Option<crate::intent::Scope>,
}

impl ToolInfo {
    /// The tool's scope for the intent guard.
    pub fn guard_scope(&self) -> crate::intent::Scope {
        self.scope
            .unwrap_or_else(|| crate::intent::classify_by_name(&self.name))
    }
}

/// One piece of a result.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Text (JSON results are compact JSON text).
    Text(String),
    /// An image.
    Image {
        /// Encoded bytes.
        data: Vec<u8>,
        /// e.g. `image/png`.
        mime_type: String,
    },
}

/// A successful call's result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Content for the agent.
    pub content: Vec<Content>,
    /// Structured result (MCP `structuredContent`).
    pub structured: Option<Value>,
    /// The journal's one-line summary.
    pub summary: String,
}

/// Per-call options.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Receives progress reports, if the caller wants them.
    pub progress: Option<ProgressFn>,
    /// Nesting depth: 0 for a client's call, +1 for each plugin calling a tool
    /// through the `tools` interface.
    pub(crate) depth: u8,
    /// The client session the call belongs to: its single active task run and
    /// its hints. `None` is one shared session (an embedder's calls).
    pub session: Option<String>,
    /// The client's model, for the intent guard's `model` detector (MCP sampling).
    pub sampler: Option<Arc<dyn crate::intent::Sampler>>,
    /// The call sees and opens only this owner's tabs (see
    /// [`crate::browser::with_tab_owner`]); `None`: the shared tabs.
    pub tab_owner: Option<Arc<str>>,
}

impl CallOptions {
    /// Options that forward progress reports to `progress`.
    pub fn with_progress(progress: Option<ProgressFn>) -> Self {
        Self {
            progress,
            ..Self::default()
        }
    }

    /// The call belongs to this client session.
    pub fn in_session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// The call works in `owner`'s own tabs (an HTTP session's), apart from
    /// every other owner's.
    pub fn with_own_tabs(mut self, owner: Arc<str>) -> Self {
        self.tab_owner = Some(owner);
        self
    }

    /// Ask this model when the intent detector is `model`.
    pub fn with_sampler(mut self, sampler: Arc<dyn crate::intent::Sampler>) -> Self {
        self.sampler = Some(sampler);
        self
    }

    /// A nested call (a plugin calling a tool).
    pub(crate) fn nested(depth: u8) -> Self {
        Self {
            depth,
            ..Self::default()
        }
    }
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("progress", &self.progress.is_some())
            .field("depth", &self.depth)
            .field("session", &self.session)
            .field("sampler", &self.sampler.is_some())
            .field("tab_owner", &self.tab_owner)
            .finish()
    }
}

/// Refusals by a guard, told to the client's operator.
const GUARD_CODES: &[&str] = &[
    crate::taskrun::codes::INTENT_EXECUTION_FAILED,
    crate::taskrun::codes::TOOL_POLICY_BLOCKED,
    crate::bulk::codes::BULK_COMPLETION_GUARD_FAILED,
    codes::CAPABILITY_DISABLED,
];

/// Longest `intent` label.
pub const MAX_INTENT_CHARS: usize = 120;

/// Validate an `intent` value: a string of 1-120 chars that is not blank.
pub fn check_intent(value: &Value) -> Result<String, ToolError> {
    let bad = |why: &str| {
        ToolError::new(
            codes::INVALID_INTENT,
            format!("intent {why}: pass a short label of what this action is for (1-{MAX_INTENT_CHARS} chars), or omit it"),
        )
        .with("field", "intent")
    };
    let Some(s) = value.as_str() else {
        return Err(bad("must be a string"));
    };
    if s.trim().is_empty() {
        return Err(bad("must not be empty or blank"));
    }
    if s.chars().count() > MAX_INTENT_CHARS {
        return Err(bad(&format!(
            "is {} chars, over the limit",
            s.chars().count()
        )));
    }
    Ok(s.to_owned())
}

/// Turn the first schema violation into `INVALID_ARGUMENT` naming the field. The
/// message never quotes the offending value (it may be huge, or a secret).
fn schema_error(tool: &str, validator: &jsonschema::Validator, args: &Value) -> Option<ToolError> {
    use jsonschema::error::ValidationErrorKind as K;
    let err = validator.iter_errors(args).next()?;
    let path = err.instance_path().to_string();
    let at = path.trim_start_matches('/').replace('/', ".");
    let (field, what) = match err.kind() {
        K::Required { property } => {
            let p = property.as_str().unwrap_or_default().to_owned();
            let field = if at.is_empty() {
                p.clone()
            } else {
                format!("{at}.{p}")
            };
            (field, "is required".to_owned())
        }
        K::AdditionalProperties { unexpected } => {
            let p = unexpected.first().cloned().unwrap_or_default();
            let field = if at.is_empty() {
                p
            } else {
                format!("{at}.{p}")
            };
            (field, "is not an accepted argument".to_owned())
        }
        K::MaxLength { limit } => (at, format!("is longer than {limit} characters")),
        K::MinLength { limit } => (at, format!("is shorter than {limit} characters")),
        K::Type { kind } => {
            let want = match kind {
                jsonschema::error::TypeKind::Single(t) => t.to_string(),
                jsonschema::error::TypeKind::Multiple(set) => format!("{set:?}").to_lowercase(),
            };
            (at, format!("must be of type {want}"))
        }
        K::Pattern { pattern } => (at, format!("does not match the pattern {pattern}")),
        K::Enum { options } => {
            let mut o = options.to_string();
            if o.len() > 200 {
                o.truncate(200);
            }
            (at, format!("must be one of {o}"))
        }
        K::Minimum { limit } => (at, format!("must be at least {limit}")),
        K::Maximum { limit } => (at, format!("must be at most {limit}")),
        _ => {
            let mut m = err.to_string();
            if m.len() > 200 {
                let mut cut = 200;
                while !m.is_char_boundary(cut) {
                    cut -= 1;
                }
                m.truncate(cut);
                m.push('…');
            }
            (at, m)
        }
    };
    let shown = if field.is_empty() {
        "arguments".to_owned()
    } else {
        field.clone()
    };
    Some(ToolError::invalid_argument(
        if field.is_empty() {
            "arguments"
        } else {
            &field
        },
        format!("{tool}: `{shown}` {what}"),
    ))
}

impl Host {
    /// Run one tool call through the pipeline.
    pub async fn call_tool(
        &self,
        name: &str,
        args: Value,
        options: CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        let span = tracing::info_span!("tool", tool = %name, plugin = tracing::field::Empty);
        let owner = options.tab_owner.clone();
        let top = options.depth == 0;
        let session = options.session.clone();
        // Boxed: a call's future is large, and calls nest.
        let call = Box::pin(self.call_inner(name, args, options).instrument(span));
        let call = async {
            let result = match owner {
                Some(owner) => crate::browser::with_tab_owner(Some(owner), call).await,
                // Nested calls (and an embedder's own `with_tab_owner`) keep the
                // owner they run under.
                None => call.await,
            };
            if let Err(e) = &result
                && GUARD_CODES.contains(&e.code.as_str())
            {
                // The tool and the code only: a guard's message may quote the
                // call's arguments.
                self.client_logs().emit(
                    crate::client_log::Level::Warning,
                    "guard",
                    format!("{name} was refused: {}", e.code),
                );
            }
            result
        };
        // A client's call: what it logs goes to its session.
        if top {
            crate::client_log::in_session(session, call).await
        } else {
            call.await
        }
    }

    async fn call_inner(
        &self,
        name: &str,
        args: Value,
        options: CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        let inner = &self.inner;
        // Resolve and gate.
        let Some(entry) = inner.tools.get(name) else {
            if let Some(e) = self.capability_disabled(name) {
                return Err(e);
            }
            return Err(ToolError::new(
                codes::UNKNOWN_TOOL,
                format!("no tool named {name:?}; call tools/list for the available tools"),
            ));
        };
        tracing::Span::current().record("plugin", entry.info.plugin.as_str());

        // Arguments: an object (absent = {}), within the size cap.
        let mut args = match args {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            other => {
                return Err(ToolError::invalid_argument(
                    "arguments",
                    format!(
                        "{name}: arguments must be a JSON object, not {}",
                        type_name(&other)
                    ),
                ));
            }
        };
        let size = serde_json::to_vec(&args)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        if size > inner.max_arg_bytes {
            let field = args
                .iter()
                .max_by_key(|(_, v)| serde_json::to_vec(v).map(|b| b.len()).unwrap_or(0))
                .map(|(k, _)| k.clone())
                .unwrap_or_else(|| "arguments".into());
            return Err(ToolError::invalid_argument(
                &field,
                format!(
                    "{name}: arguments are {size} bytes, over the {} byte limit (largest field: `{field}`)",
                    inner.max_arg_bytes
                ),
            ));
        }

        // Host-owned fields.
        let intent = if entry.info.intent {
            match args.remove("intent") {
                None => None,
                Some(v) => Some(check_intent(&v)?),
            }
        } else {
            None
        };

        // An explicit `output_mode: "inline"` opts out of the response budget.
        let asked_inline = args.get("output_mode") == Some(&json!("inline"));
        let mode = if entry.info.output_mode {
            output_mode_of(name, &mut args)?
        } else {
            OutputMode::Inline
        };
        let host_tool = entry.info.plugin == "host";
        let explicit_run = guard::take_host_field(name, &entry.info, &mut args, "run_id")?;
        let contract_id = if host_tool {
            None
        } else {
            guard::take_host_field(name, &entry.info, &mut args, "contract_id")?
        };

        // Schema.
        let args = Value::Object(args);
        if let Some(err) = schema_error(name, &entry.validator, &args) {
            return Err(err);
        }
        // The task run and contract a call names must exist (nothing runs otherwise).
        if !host_tool && let Some(r) = &explicit_run {
            inner.task_runs.load(r)?;
        }
        if let Some(c) = &contract_id {
            let c = inner.task_runs.contracts.load(c)?;
            if c["closed"] == json!(true) {
                return Err(ToolError::new(
                    crate::bulk::codes::CONTRACT_CLOSED,
                    format!(
                        "{name}: bulk progress contract {} is closed (its run is finished)",
                        c["contract_id"].as_str().unwrap_or("?")
                    ),
                )
                .with("field", "contract_id"));
            }
        }
        let session = options.session.as_deref();
        let top = options.depth == 0;
        // The intent guard of the call's task run: a blocked call does nothing.
        let run = if top && !host_tool {
            self.run_of(session, explicit_run)
        } else {
            None
        };
        if let Some(r) = &run
            && let Err(mut e) = self.guard_before(r, &entry.info)
        {
            self.attach_hint(session, name, &args, &mut Err(&mut e));
            return Err(e);
        }

        // A running recording wants to know who the refs were, before the call
        // changes the page.
        let recording = if entry.info.capability == "recording" {
            None
        } else {
            inner.recorder.recording()
        };
        let tab_arg = args.get("tabId").and_then(Value::as_str).map(str::to_owned);
        let targets = match recording {
            Some(_) => self.identify_refs(tab_arg.as_deref(), &args).await,
            None => None,
        };

        // Run.
        let started = Instant::now();
        let event_mark = inner.browser.event_mark();
        let outcome = match &entry.imp {
            ToolImpl::Journal => host_tools::run_journal(self, &args),
            ToolImpl::OutputFetch => host_tools::run_output_fetch(self, &args),
            ToolImpl::TaskRun if name == "oc_task_run_start" => {
                self.start_run(&args, &options).await
            }
            ToolImpl::TaskRun => host_tools::run_task_tool(self, name, &args),
            ToolImpl::Bulk => host_tools::run_bulk_tool(self, name, &args),
            ToolImpl::Plugin(plugin) => {
                let raw = serde_json::to_string(&args).unwrap_or_else(|_| "{}".into());
                match plugin
                    .call(name, &raw, options.progress.clone(), options.depth)
                    .await
                {
                    Err(e) => Err(e),
                    Ok(Err(guest)) => Err(guest_error(guest)),
                    Ok(Ok(out)) => guest_output(name, out),
                }
            }
        };
        // What pages did on their own meanwhile (dialogs, new tabs, downloads).
        let mut outcome = if host_tool {
            outcome
        } else {
            Box::pin(crate::page_events::report(
                &inner.browser,
                name,
                event_mark,
                outcome,
            ))
            .await
        };
        if let Ok(out) = &mut outcome {
            if let Some(r) = &run {
                self.guard_after(r, &entry.info);
            }
            if let Some(c) = &contract_id {
                let line = match out.structured.as_ref().map(|v| self.record_items(c, v)) {
                    Some(Ok(line)) => line,
                    Some(Err(e)) => format!("progress not recorded in {c}: {}", e.message),
                    None => format!("progress not recorded in {c}: the result has no item list"),
                };
                out.content.push(Content::Text(line));
            }
        }
        // Output mode: a large result becomes a stored handle.
        let mut created = None;
        let outcome = match (outcome, mode) {
            (Ok(out), OutputMode::Handle | OutputMode::Auto(_)) => {
                match to_handle(self, name, out, mode) {
                    Ok((out, meta)) => {
                        created = meta;
                        Ok(out)
                    }
                    Err(e) => Err(e),
                }
            }
            (Ok(out), OutputMode::Inline) if !asked_inline && !host_tool => {
                match crate::budget::apply(self, name, out, inner.max_response_tokens) {
                    Ok((out, meta)) => {
                        created = meta;
                        Ok(out)
                    }
                    Err(e) => Err(e),
                }
            }
            (other, _) => other,
        };
        let duration_ms = inner.clock.elapsed_ms(started);
        let outcome = outcome.map(|mut out| {
            if let Some(intent) = &intent {
                attach_intent(&mut out, intent);
            }
            if inner.browser.take_relaunch_note() {
                out.content.push(Content::Text(
                    "note: the browser had stopped and was relaunched; tabs opened before are gone"
                        .into(),
                ));
            }
            out
        });

        // Journal + trace.
        let seq = inner.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let ts = inner.clock.now_ms();
        let record = CallRecord {
            tool: name.to_owned(),
            plugin: entry.info.plugin.clone(),
            args: redact_args(&args, &entry.info.redact),
            duration_ms,
            ok: outcome.is_ok(),
            summary: match &outcome {
                Ok(o) => o.summary.clone(),
                Err(e) => one_line(&e.message),
            },
            error: outcome.as_ref().err().map(|e| e.code.clone()),
            intent,
        };
        if let Some(capture) = recording {
            self.record_step(
                &entry.info,
                &args,
                &record,
                tab_arg.as_deref(),
                targets,
                capture,
            )
            .await;
        }
        if let Err(e) = inner.journal.append(&inner.session, seq, ts, &record) {
            tracing::error!(error = %e, "cannot write the journal");
        }
        if let Err(e) = inner.trace.call(ts, seq, &record) {
            tracing::error!(error = %e, "cannot write the trace");
        }
        for ev in inner.browser.take_unjournaled() {
            let seq = inner.seq.fetch_add(1, Ordering::Relaxed) + 1;
            let body = crate::page_events::public_body(&ev.body);
            if let Err(e) = inner
                .journal
                .append_event(&inner.session, seq, ts, ev.kind, &body)
            {
                tracing::error!(error = %e, "cannot write the journal");
            }
            if let Err(e) = inner
                .trace
                .event(ts, seq, ev.kind, Value::Object(body), Map::new())
            {
                tracing::error!(error = %e, "cannot write the trace");
            }
        }
        if let Some(meta) = created {
            let seq = inner.seq.fetch_add(1, Ordering::Relaxed) + 1;
            let mut body = Map::new();
            body.insert("handle".into(), json!(meta.output_handle));
            body.insert("source_tool".into(), json!(meta.source_tool));
            body.insert("size_bytes".into(), json!(meta.size_bytes));
            body.insert("mime_type".into(), json!(meta.mime_type));
            if let Err(e) =
                inner
                    .journal
                    .append_event(&inner.session, seq, ts, "output_handle_created", &body)
            {
                tracing::error!(error = %e, "cannot write the journal");
            }
            if let Err(e) = inner.trace.event(
                ts,
                seq,
                "output_handle_created",
                Value::Object(body),
                Map::new(),
            ) {
                tracing::error!(error = %e, "cannot write the trace");
            }
        }
        match &outcome {
            Ok(_) => tracing::debug!(duration_ms, "tool call ok"),
            Err(e) => tracing::info!(duration_ms, code = %e.code, "tool call failed"),
        }
        let mut outcome = outcome;
        if top {
            match &mut outcome {
                Ok(out) => self.attach_hint(session, name, &args, &mut Ok(out)),
                Err(e) => self.attach_hint(session, name, &args, &mut Err(e)),
            }
        }
        outcome
    }

    /// Add the session's hint for this call, if it earns one: `_hint` in the
    /// structured result (or the error's fields) and a trailing text block.
    fn attach_hint(
        &self,
        session: Option<&str>,
        tool: &str,
        args: &Value,
        outcome: &mut Result<&mut ToolOutput, &mut ToolError>,
    ) {
        let seen = Seen {
            tool,
            args,
            outcome: match outcome {
                Ok(out) => Ok(out.structured.as_ref()),
                Err(e) => Err((e.code.as_str(), &e.details)),
            },
        };
        let Some(hint) = self.hint_for(session, &seen) else {
            return;
        };
        match outcome {
            Ok(out) => {
                if let Some(Value::Object(m)) = &mut out.structured {
                    m.insert("_hint".into(), hint.to_json());
                }
                out.content.push(Content::Text(hint.text()));
            }
            Err(e) => {
                e.details.insert("_hint".into(), hint.to_json());
            }
        }
    }
}

impl Host {
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
        let browser = &self.inner.browser;
        browser.peek_tab(tab).await?;
        let mut out = Map::new();
        for r in refs.into_iter().take(32) {
            if let Ok(v) = browser
                .page_op(tab, "identify", json!({"ref": r}), 2_000)
                .await
            {
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
        let browser = &self.inner.browser;
        let at = match browser.peek_tab(tab).await {
            Some(t) => Some(t),
            None => browser.peek_tab(None).await,
        };
        let shot = match (&at, capture) {
            (Some(t), true) => browser.thumbnail(Some(&t.id)).await.ok(),
            _ => None,
        };
        let mut step = json!({
            "ts": iso_of(self.inner.clock.now_ms()),
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
        self.inner.recorder.append(step, shot);
    }
}

/// Take `output_mode` and `output_inline_limit_bytes` out of the arguments.
fn output_mode_of(tool: &str, args: &mut Map<String, Value>) -> Result<OutputMode, ToolError> {
    let mode = args.remove("output_mode");
    let limit = args.remove("output_inline_limit_bytes");
    let mode = match mode.as_ref().map(|m| m.as_str()) {
        None => "inline",
        Some(Some(m @ ("inline" | "handle" | "auto"))) => m,
        Some(_) => {
            return Err(ToolError::invalid_argument(
                "output_mode",
                format!("{tool}: `output_mode` must be one of \"inline\", \"handle\", \"auto\""),
            ));
        }
    };
    let limit = match limit {
        None => None,
        Some(v) => match v.as_u64().filter(|n| (1..=1 << 30).contains(n)) {
            Some(n) => Some(n),
            None => {
                return Err(ToolError::invalid_argument(
                    "output_inline_limit_bytes",
                    format!(
                        "{tool}: `output_inline_limit_bytes` must be an integer from 1 to 1073741824"
                    ),
                ));
            }
        },
    };
    match (mode, limit) {
        ("auto", l) => Ok(OutputMode::Auto(
            l.unwrap_or(crate::output::DEFAULT_INLINE_LIMIT),
        )),
        (_, Some(_)) => Err(ToolError::invalid_argument(
            "output_inline_limit_bytes",
            format!("{tool}: `output_inline_limit_bytes` applies only with output_mode \"auto\""),
        )),
        ("handle", None) => Ok(OutputMode::Handle),
        _ => Ok(OutputMode::Inline),
    }
}

/// What a result stores as: its structured JSON, its text, or its one image.
pub(crate) fn payload_of(out: &ToolOutput) -> Payload {
    if let Some(v) = &out.structured {
        return Payload::Json(v.clone());
    }
    let texts: Vec<&str> = out
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.as_str()),
            Content::Image { .. } => None,
        })
        .collect();
    if texts.len() == out.content.len() {
        return Payload::Text(texts.join("\n"));
    }
    match out.content.iter().find_map(|c| match c {
        Content::Image { data, mime_type } => Some((data.clone(), mime_type.clone())),
        Content::Text(_) => None,
    }) {
        Some((data, mime)) => Payload::Binary(data, mime),
        None => Payload::Text(String::new()),
    }
}

/// Apply `handle` / `auto` to a successful result.
fn to_handle(
    host: &Host,
    tool: &str,
    out: ToolOutput,
    mode: OutputMode,
) -> Result<(ToolOutput, Option<HandleMeta>), ToolError> {
    let payload = payload_of(&out);
    if let OutputMode::Auto(limit) = mode
        && payload.size() as u64 <= limit
    {
        return Ok((out, None));
    }
    let (meta, descriptor) = host.inner.output.create(tool, &payload).map_err(|e| {
        ToolError::new(
            crate::recording::codes::STORAGE_FAILED,
            format!("{tool}: cannot store the output handle: {e}"),
        )
    })?;
    let summary = format!(
        "{} -> {} ({} bytes)",
        out.summary, meta.output_handle, meta.size_bytes
    );
    Ok((
        ToolOutput {
            content: vec![Content::Text(descriptor.to_string())],
            structured: Some(descriptor),
            summary: one_line(&summary),
        },
        Some(meta),
    ))
}

fn is_ref(s: &str) -> bool {
    s.strip_prefix("ax_")
        .is_some_and(|d| !d.is_empty() && d.len() <= 12 && d.bytes().all(|b| b.is_ascii_digit()))
}

/// A human-in-the-loop escalation (`needs_human: true`) carries the call's intent,
/// in the structured content and in its JSON text.
fn attach_intent(out: &mut ToolOutput, intent: &str) {
    let Some(Value::Object(obj)) = &mut out.structured else {
        return;
    };
    if obj.get("needs_human") != Some(&Value::Bool(true)) {
        return;
    }
    let before = Value::Object(obj.clone());
    obj.insert("intent".into(), Value::String(intent.to_owned()));
    let after = Value::Object(obj.clone()).to_string();
    for c in &mut out.content {
        if let Content::Text(t) = c
            && serde_json::from_str::<Value>(t).ok().as_ref() == Some(&before)
        {
            *t = after.clone();
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        out.push('…');
    }
    out
}

fn guest_error(e: bindings::ToolError) -> ToolError {
    let code_ok = !e.code.is_empty()
        && e.code.len() <= 64
        && e.code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let mut err = ToolError::new(
        if code_ok {
            e.code
        } else {
            codes::PLUGIN_FAILED.to_owned()
        },
        e.message,
    );
    if let Some(Value::Object(details)) = e.details.and_then(|d| serde_json::from_str(&d).ok()) {
        err.details = details;
    }
    err
}

fn guest_output(tool: &str, out: bindings::ToolOutput) -> Result<ToolOutput, ToolError> {
    use bindings::ochre::plugin::types::Content as C;
    let content = out
        .content
        .into_iter()
        .map(|c| match c {
            C::Text(t) | C::Json(t) => Content::Text(t),
            C::Image(img) => Content::Image {
                data: img.data,
                mime_type: img.mime_type,
            },
        })
        .collect();
    let structured = match out.structured {
        None => None,
        Some(s) => Some(serde_json::from_str(&s).map_err(|e| {
            ToolError::new(
                codes::PLUGIN_FAILED,
                format!("{tool}: the plugin returned structured content that is not JSON: {e}"),
            )
        })?),
    };
    Ok(ToolOutput {
        content,
        structured,
        summary: out
            .summary
            .map(|s| one_line(&s))
            .unwrap_or_else(|| "ok".into()),
    })
}

/// The JSON object of a successful result, for host tools.
pub(crate) fn json_output(value: Value, summary: String) -> ToolOutput {
    ToolOutput {
        content: vec![Content::Text(value.to_string())],
        structured: Some(value),
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn intent_rules() {
        assert_eq!(
            check_intent(&json!("submit the form")).expect("ok"),
            "submit the form"
        );
        for bad in [json!(""), json!("   "), json!("x".repeat(121)), json!(5)] {
            assert_eq!(
                check_intent(&bad).expect_err("bad").code,
                codes::INVALID_INTENT
            );
        }
        assert!(
            check_intent(&json!("é".repeat(120))).is_ok(),
            "chars, not bytes"
        );
    }

    #[test]
    fn schema_errors_name_the_field_and_never_quote_the_value() {
        let schema = json!({
            "type": "object",
            "properties": {"domain": {"type": "string", "maxLength": 10}},
            "required": ["domain"],
            "additionalProperties": false
        });
        let v = jsonschema::validator_for(&schema).expect("schema");
        let e = schema_error("t", &v, &json!({})).expect("missing");
        assert_eq!(e.details["field"], "domain");
        let e = schema_error("t", &v, &json!({"domain": 5})).expect("type");
        assert_eq!(e.details["field"], "domain");
        let e = schema_error("t", &v, &json!({"domain": "a", "junk": 1})).expect("extra");
        assert_eq!(e.details["field"], "junk");
        let huge = "y".repeat(1 << 20);
        let e = schema_error("t", &v, &json!({"domain": huge})).expect("long");
        assert_eq!(e.details["field"], "domain");
        assert!(e.message.len() < 200, "{}", e.message.len());
        assert!(schema_error("t", &v, &json!({"domain": "ok"})).is_none());
    }
}
