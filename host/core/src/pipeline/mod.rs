//! The tool-call pipeline: every call, from MCP or an embedder, passes the same
//! named stages in the same order. `docs/architecture.md` draws it.
//!
//! ```text
//!  call ─► gate (resolve the tool or refuse: unknown, capability disabled)
//!       ─► check   each stage, in order: take its own fields, validate them
//!       ─► before  each stage, in order: whole-call checks and preparation
//!       ─► the tool runs (a plugin, or a host tool)
//!       ─► after   each stage, in order: look at the outcome, change it, log it
//! ```
//!
//! A refusal in `check` ends the call with nothing done: no browser action, no
//! journal entry. A refusal in `before` (the intent guard's block) ends it too,
//! and each stage's `refused` may add to the error (the session's hint).
//!
//! The stages, in order (each seed feature lives in exactly one):
//!
//! | stage        | check                         | before            | after                                     |
//! |--------------|-------------------------------|-------------------|-------------------------------------------|
//! | `arguments`  | an object, within the size cap |                  |                                           |
//! | `events`     |                               | mark page events  | tell what pages did meanwhile             |
//! | `redact`     |                               | resolve a nested call's secret parameters; learn secret fields | mask every known secret in the outcome |
//! | `task_guard` | `run_id`: the call's task run | the intent guard  | count browser successes in the run        |
//! | `bulk`       | `contract_id`: open contract  |                   | record the result's items in the contract |
//! | `output`     | `output_mode`                 |                   | output handles, the response budget       |
//! | `intent`     | `intent`: a short label       |                   | a `needs_human` result carries it         |
//! | `schema`     | the tool's input schema       |                   |                                           |
//! | `relaunch`   |                               |                   | say the browser was relaunched            |
//! | `journal`    |                               |                   | journal + trace (call, page events, handle) |
//! | `record`     | is a recording running?       | identify the refs | append the step to the recording          |
//! | `hints`      |                               |                   | the session's hint (refusals too)         |
//!
//! Stages an embedder adds ([`crate::HostBuilder::stage`]) come after these.

mod arguments;
pub(crate) mod budget;
mod bulk;
mod events;
pub(crate) mod gate;
mod hints;
mod intent;
mod journal;
mod output;
mod record;
pub mod redact;
pub(crate) mod sessions;
mod task_guard;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::Clock;
use crate::browser::BrowserManager;
use crate::error::{Code, ToolError};
use crate::stores::journal::{CallRecord, Journal, Trace};
use crate::stores::output::{HandleMeta, HandleStore, OutputMode};
use crate::stores::recording::Recorder;
use crate::stores::taskrun::TaskRuns;
use crate::tool::{CallOptions, ToolInfo, ToolOutput};

pub use futures::future::BoxFuture;
pub use intent::{MAX_INTENT_CHARS, check_intent};
use record::Targets;
pub(crate) use sessions::Sessions;

/// What a call comes to.
pub type Outcome = Result<ToolOutput, ToolError>;

/// One step every tool call passes. Each hook has a default that does nothing;
/// a stage implements the ones it needs.
pub trait Stage: Send + Sync + 'static {
    /// A short name (logs, docs).
    fn name(&self) -> &'static str;

    /// Take this stage's own fields out of the arguments and validate them. A
    /// refusal ends the call: nothing has happened, nothing is written.
    fn check(&self, _call: &mut Call<'_>) -> Result<(), ToolError> {
        Ok(())
    }

    /// Once every stage's fields are taken: whole-call checks and preparation
    /// (it may read the page). A refusal ends the call; every stage's
    /// [`Stage::refused`] sees it.
    fn before<'a>(&'a self, _call: &'a mut Call<'_>) -> BoxFuture<'a, Result<(), ToolError>> {
        proceed(Ok(()))
    }

    /// A stage's `before` refused the call: add to the error if need be.
    fn refused(&self, _call: &Call<'_>, _error: &mut ToolError) {}

    /// The tool ran: look at the outcome, change it, log it.
    fn after<'a>(
        &'a self,
        _call: &'a mut Call<'_>,
        _outcome: &'a mut Outcome,
    ) -> BoxFuture<'a, ()> {
        done()
    }
}

/// What a `before` that did its work at once returns; going on costs no
/// allocation.
pub fn proceed<'a>(result: Result<(), ToolError>) -> BoxFuture<'a, Result<(), ToolError>> {
    match result {
        Ok(()) => Box::pin(ReadyOk),
        Err(e) => Box::pin(std::future::ready(Err(e))),
    }
}

/// What an `after` that did its work at once returns (no allocation).
pub fn done<'a>() -> BoxFuture<'a, ()> {
    Box::pin(Ready)
}

/// Finished hooks: zero-sized futures, so boxing them allocates nothing.
struct Ready;
struct ReadyOk;

impl std::future::Future for Ready {
    type Output = ();
    fn poll(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        std::task::Poll::Ready(())
    }
}

impl std::future::Future for ReadyOk {
    type Output = Result<(), ToolError>;
    fn poll(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// One tool call on its way through the stages.
pub struct Call<'a> {
    pub(crate) name: &'a str,
    pub(crate) info: &'a ToolInfo,
    pub(crate) validator: &'a jsonschema::Validator,
    pub(crate) options: &'a CallOptions,
    /// The arguments: a JSON object once `arguments` has checked them, without
    /// the host's own fields once every `check` has run.
    pub(crate) args: Value,
    /// `intent`: the call's label.
    pub(crate) intent: Option<String>,
    /// `task_guard`: the task run the call belongs to (top-level calls).
    pub(crate) run: Option<String>,
    /// `bulk`: the contract to record the result's items in.
    pub(crate) contract_id: Option<String>,
    /// `output`: how the result is returned.
    pub(crate) mode: OutputMode,
    /// `output`: the caller asked for `output_mode: "inline"` (no budget).
    pub(crate) asked_inline: bool,
    /// `output`: the handle the result was stored as.
    pub(crate) created: Option<HandleMeta>,
    /// `events`: where the page events of this call begin.
    pub(crate) event_mark: u64,
    /// `record`: a recording runs (`Some(capture screenshots)`).
    pub(crate) recording: Option<bool>,
    /// `record`: who the call's refs were before it ran.
    pub(crate) targets: Targets,
    /// When the tool started running.
    pub(crate) started: Instant,
    /// `journal`: what was journaled.
    pub(crate) record: Option<CallRecord>,
    /// `journal`: the call's `seq`, taken before it runs (its own calls name it).
    pub(crate) seq: Option<u64>,
    /// How many tool calls the tool made (a replay's, a plan's steps).
    pub(crate) children: Arc<std::sync::atomic::AtomicU32>,
}

impl<'a> Call<'a> {
    pub(crate) fn new(
        name: &'a str,
        info: &'a ToolInfo,
        validator: &'a jsonschema::Validator,
        options: &'a CallOptions,
        args: Value,
    ) -> Self {
        Self {
            name,
            info,
            validator,
            options,
            args,
            intent: None,
            run: None,
            contract_id: None,
            mode: OutputMode::Inline,
            asked_inline: false,
            created: None,
            event_mark: 0,
            recording: None,
            targets: Targets::new(),
            started: Instant::now(),
            record: None,
            seq: None,
            children: Arc::default(),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// What the tool is.
    pub fn info(&self) -> &ToolInfo {
        self.info
    }

    /// The arguments (the host's own fields taken out once `check` has run).
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The MCP session the call came from (`None`: an embedder's call).
    pub fn session(&self) -> Option<&str> {
        self.options.session.as_deref()
    }

    /// A client's call (not a call a plugin made through the `tools` interface).
    pub fn is_top_level(&self) -> bool {
        self.options.depth == 0
    }

    /// The call's `intent` label, once checked.
    pub fn intent(&self) -> Option<&str> {
        self.intent.as_deref()
    }

    /// One of the host's own tools (journal, task runs, bulk progress, output):
    /// the guards' control plane (see [`ToolInfo::control`]).
    pub(crate) fn is_control(&self) -> bool {
        self.info.control
    }

    /// The argument object (empty before `arguments` has checked it).
    pub(crate) fn fields(&mut self) -> Option<&mut Map<String, Value>> {
        self.args.as_object_mut()
    }

    /// Take a host-owned id field (`run_id`, `contract_id`) out of the
    /// arguments, unless the tool's own schema declares it (then it is read and
    /// left for the tool). Every tool accepts these fields.
    pub(crate) fn take_id(&mut self, field: &str) -> Result<Option<String>, ToolError> {
        let declared = self.declares(field);
        let name = self.name;
        let Some(args) = self.fields() else {
            return Ok(None);
        };
        if declared {
            return Ok(args.get(field).and_then(Value::as_str).map(str::to_owned));
        }
        match args.remove(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.is_empty() && s.len() <= 64 => Ok(Some(s)),
            Some(_) => Err(ToolError::invalid_argument(
                field,
                format!("{name}: `{field}` must be a string id"),
            )),
        }
    }

    /// The tool's own schema has this argument.
    pub(crate) fn declares(&self, field: &str) -> bool {
        self.info.input_schema["properties"].get(field).is_some()
    }
}

/// The stages in order.
#[derive(Clone)]
pub(crate) struct Pipeline {
    stages: Vec<Arc<dyn Stage>>,
}

/// What the standard stages work with: narrow handles on the host's state.
pub(crate) struct Parts {
    pub clock: Clock,
    pub session: String,
    pub browser: BrowserManager,
    pub journal: Arc<Journal>,
    pub trace: Arc<Trace>,
    pub seq: Arc<AtomicU64>,
    /// Spans of the journal's calls to a collector (`--otlp-endpoint`).
    pub otlp: Option<Arc<crate::otlp::Otlp>>,
    pub task_runs: Arc<TaskRuns>,
    pub sessions: Arc<Sessions>,
    pub output: Arc<HandleStore>,
    pub recorder: Arc<Recorder>,
    pub known: Arc<crate::redact::KnownSecrets>,
    pub secret_store: crate::stores::secrets::SecretStore,
    pub caller: crate::plugin::CallerCell,
    pub max_arg_bytes: usize,
    pub max_response_tokens: usize,
}

impl Pipeline {
    /// The standard stages, then `extra` (an embedder's).
    pub(crate) fn new(p: Parts, extra: Vec<Arc<dyn Stage>>) -> Self {
        let mut stages: Vec<Arc<dyn Stage>> = vec![
            Arc::new(arguments::Arguments { max_bytes: p.max_arg_bytes }),
            Arc::new(events::PageEvents { browser: p.browser.clone() }),
            Arc::new(redact::Redact {
                known: p.known.clone(),
                browser: p.browser.clone(),
                store: p.secret_store,
                caller: p.caller,
            }),
            Arc::new(task_guard::TaskGuard {
                runs: p.task_runs.clone(),
                sessions: p.sessions.clone(),
            }),
            Arc::new(bulk::Bulk { runs: p.task_runs.clone() }),
            Arc::new(output::Output {
                store: p.output.clone(),
                max_response_tokens: p.max_response_tokens,
            }),
            Arc::new(intent::Intent),
            Arc::new(arguments::Schema),
            Arc::new(events::RelaunchNote { browser: p.browser.clone() }),
            Arc::new(journal::JournalStage {
                clock: p.clock,
                session: p.session,
                journal: p.journal,
                trace: p.trace,
                seq: p.seq,
                browser: p.browser.clone(),
                known: p.known.clone(),
                otlp: p.otlp,
            }),
            Arc::new(record::Record {
                recorder: p.recorder,
                browser: p.browser,
                clock: p.clock,
                known: p.known,
            }),
            Arc::new(hints::Hints { sessions: p.sessions }),
        ];
        stages.extend(extra);
        Self { stages }
    }

    /// The stages' names, in order.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.stages.iter().map(|s| s.name()).collect()
    }

    /// Run `call` through the stages; `tool` runs it.
    pub(crate) async fn run(
        &self,
        mut call: Call<'_>,
        tool: impl AsyncFnOnce(&Call<'_>) -> Outcome,
    ) -> Outcome {
        for stage in &self.stages {
            stage.check(&mut call)?;
        }
        for stage in &self.stages {
            if let Err(mut error) = stage.before(&mut call).await {
                for s in &self.stages {
                    s.refused(&call, &mut error);
                }
                return Err(error);
            }
        }
        call.started = Instant::now();
        let mut outcome = tool(&call).await;
        for stage in &self.stages {
            stage.after(&mut call, &mut outcome).await;
        }
        outcome
    }
}

/// Refusals by a guard, told to the client's operator.
pub(crate) const GUARD_CODES: &[Code] = &[
    Code::IntentExecutionFailed,
    Code::ToolPolicyBlocked,
    Code::BulkCompletionGuardFailed,
    Code::CapabilityDisabled,
];

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;

    fn info() -> ToolInfo {
        ToolInfo {
            name: "t".into(),
            description: String::new(),
            input_schema: json!({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": false}),
            capability: "core".into(),
            tier: 1,
            annotations: Default::default(),
            intent: true,
            output_mode: true,
            redact: Vec::new(),
            secret_result: None,
            secret_args: Vec::new(),
            plugin: "core".into(),
            scope: None,
            control: false,
        }
    }

    /// Logs each hook it sees; refuses in `check` or `before` when told to.
    struct Probe {
        name: &'static str,
        log: Arc<Mutex<Vec<String>>>,
        refuse_check: bool,
        refuse_before: bool,
    }

    impl Probe {
        fn log(&self, what: &str) {
            self.log.lock().expect("log").push(format!("{}.{what}", self.name));
        }
    }

    impl Stage for Probe {
        fn name(&self) -> &'static str {
            self.name
        }
        fn check(&self, _call: &mut Call<'_>) -> Result<(), ToolError> {
            self.log("check");
            match self.refuse_check {
                true => Err(ToolError::new(Code::named("NO"), "no")),
                false => Ok(()),
            }
        }
        fn before<'a>(&'a self, _call: &'a mut Call<'_>) -> BoxFuture<'a, Result<(), ToolError>> {
            self.log("before");
            let r = match self.refuse_before {
                true => Err(ToolError::new(Code::named("BLOCKED"), "blocked")),
                false => Ok(()),
            };
            Box::pin(std::future::ready(r))
        }
        fn refused(&self, _call: &Call<'_>, error: &mut ToolError) {
            self.log("refused");
            error.details.insert(self.name.into(), json!(true));
        }
        fn after<'a>(
            &'a self,
            _call: &'a mut Call<'_>,
            outcome: &'a mut Outcome,
        ) -> BoxFuture<'a, ()> {
            self.log("after");
            if let Ok(out) = outcome {
                out.summary.push_str(self.name);
            }
            done()
        }
    }

    async fn run(refuse_check: bool, refuse_before: bool) -> (Outcome, Vec<String>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let probe = |name, refuse_check, refuse_before| -> Arc<dyn Stage> {
            Arc::new(Probe { name, log: log.clone(), refuse_check, refuse_before })
        };
        let pipeline = Pipeline {
            stages: vec![probe("a", false, false), probe("b", refuse_check, refuse_before)],
        };
        let (info, options) = (info(), CallOptions::default());
        let validator = jsonschema::validator_for(&info.input_schema).expect("schema");
        let call = Call::new("t", &info, &validator, &options, json!({}));
        let ran = log.clone();
        let outcome = pipeline
            .run(call, async |_: &Call<'_>| {
                ran.lock().expect("log").push("tool".into());
                Ok(ToolOutput::default())
            })
            .await;
        let log = log.lock().expect("log").clone();
        (outcome, log)
    }

    #[tokio::test]
    async fn checks_then_befores_then_the_tool_then_afters_in_list_order() {
        let (outcome, log) = run(false, false).await;
        assert_eq!(outcome.expect("ok").summary, "ab");
        assert_eq!(
            log,
            ["a.check", "b.check", "a.before", "b.before", "tool", "a.after", "b.after"]
        );
    }

    #[tokio::test]
    async fn a_refused_check_runs_nothing_else() {
        let (outcome, log) = run(true, false).await;
        assert_eq!(outcome.expect_err("refused").code.as_str(), "NO");
        assert_eq!(log, ["a.check", "b.check"]);
    }

    #[tokio::test]
    async fn a_refused_before_runs_no_tool_and_every_stage_sees_the_refusal() {
        let (outcome, log) = run(false, true).await;
        let e = outcome.expect_err("blocked");
        assert_eq!(e.code.as_str(), "BLOCKED");
        assert_eq!((e.details["a"].clone(), e.details["b"].clone()), (json!(true), json!(true)));
        assert_eq!(log, ["a.check", "b.check", "a.before", "b.before", "a.refused", "b.refused"]);
    }

    #[test]
    fn the_host_fields_are_taken_out_by_their_stages_before_the_schema() {
        let (info, options) = (info(), CallOptions::default());
        let validator = jsonschema::validator_for(&info.input_schema).expect("schema");
        let args = json!({"a": 1, "intent": "fill the form", "output_mode": "handle"});
        let mut call = Call::new("t", &info, &validator, &options, args);
        let stages: [&dyn Stage; 4] = [
            &arguments::Arguments { max_bytes: 1 << 20 },
            &intent::Intent,
            &output::Output {
                store: Arc::new(HandleStore::new(
                    &std::env::temp_dir().join("ochre-unused"),
                    Clock::Fixed(0),
                    1,
                )),
                max_response_tokens: 0,
            },
            &arguments::Schema,
        ];
        for s in stages {
            s.check(&mut call).expect("valid");
        }
        assert_eq!(call.args, json!({"a": 1}));
        assert_eq!(call.intent(), Some("fill the form"));
        assert_eq!(call.mode, OutputMode::Handle);

        // The schema refuses what no stage took.
        let mut call = Call::new("t", &info, &validator, &options, json!({"b": 2}));
        let e = arguments::Schema.check(&mut call).expect_err("extra field");
        assert_eq!(e.details["field"], "b");
        // Arguments over the cap name their largest field.
        let mut call = Call::new("t", &info, &validator, &options, json!({"a": "x".repeat(64)}));
        let e = arguments::Arguments { max_bytes: 32 }.check(&mut call).expect_err("too big");
        assert_eq!(e.details["field"], "a");
    }
}
