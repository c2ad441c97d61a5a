//! What a tool is and what a call returns: the types the pipeline, the plugins,
//! the host's own tools and the servers share.

use std::sync::Arc;

use serde_json::Value;

use crate::ProgressFn;
use crate::stores::output::Payload;

pub use ochre_protocol::browser::Hints;
pub use ochre_protocol::tool::Annotations;

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
    /// Arguments whose values the call types into the page: never logged,
    /// kept as parameters in recordings.
    pub redact: Vec<String>,
    /// A field of the structured result that is a secret, and the name it is
    /// known by (`("code", "totp:{domain}")`, `{arg}` filled from the call).
    pub secret_result: Option<(String, String)>,
    /// Arguments (among `redact`) whose values are secrets the call sets behind
    /// the page (a cookie's value, a stored token) rather than text a person
    /// types: a recording keeps each as a secret parameter, with no default.
    pub secret_args: Vec<String>,
    /// The plugin offering it (`host` for host tools).
    pub plugin: String,
    /// What it touches, for the intent guard; `None` (a tool that declares
    /// nothing) is classified by name ([`crate::intent::classify_by_name`]).
    pub scope: Option<crate::intent::Scope>,
    /// One of the host's own tools, the guards' control plane (task runs, bulk
    /// progress, the journal, output handles): the intent guard never blocks
    /// it, its results are never stored as output handles, and it stays
    /// whatever capability groups are enabled.
    pub control: bool,
}

impl ToolInfo {
    /// The tool's scope for the intent guard.
    pub fn guard_scope(&self) -> crate::intent::Scope {
        self.scope.unwrap_or_else(|| crate::intent::classify_by_name(&self.name))
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
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// Sends the client's user to a page of ochre's own (MCP URL-mode
    /// elicitation), when the client can.
    pub url_asker: Option<Arc<dyn crate::people::UrlAsker>>,
    /// The call sees and opens only this owner's tabs (see
    /// [`crate::HostBrowser::with_owner`]); `None`: the shared tabs.
    pub tab_owner: Option<Arc<str>>,
    /// The task run of the calling step (nested calls).
    pub(crate) run: Option<String>,
    /// The journal `seq` of the calling step (nested calls).
    pub(crate) parent: Option<u64>,
    /// Counts the tool calls this call makes (a replay's, a plan's steps).
    pub(crate) children: Option<Arc<std::sync::atomic::AtomicU32>>,
    /// Whose words the answer's hints are in (the MCP tools', or the command
    /// line's for `ochre`'s session daemon).
    pub hints: Hints,
}

impl CallOptions {
    /// Options that forward progress reports to `progress`.
    pub fn with_progress(progress: Option<ProgressFn>) -> Self {
        Self { progress, ..Self::default() }
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

    /// The answer's hints in these words.
    pub fn with_hints(mut self, hints: Hints) -> Self {
        self.hints = hints;
        self
    }

    /// Ask this model when the intent detector is `model`.
    pub fn with_sampler(mut self, sampler: Arc<dyn crate::intent::Sampler>) -> Self {
        self.sampler = Some(sampler);
        self
    }

    /// Send the client's user to ochre's own pages through `asker` (a hand-off's
    /// live view, a secret's page).
    pub fn with_url_asker(mut self, asker: Arc<dyn crate::people::UrlAsker>) -> Self {
        self.url_asker = Some(asker);
        self
    }

    /// The options of a tool call made by the call these options are of: one
    /// level deeper, in its session and task run, its child in the journal.
    pub(crate) fn child(&self) -> Self {
        if let Some(c) = &self.children {
            c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Self {
            progress: None,
            depth: self.depth.saturating_add(1),
            session: self.session.clone(),
            sampler: self.sampler.clone(),
            url_asker: self.url_asker.clone(),
            tab_owner: None,
            run: self.run.clone(),
            parent: self.parent,
            children: None,
            hints: self.hints,
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
            .field("url_asker", &self.url_asker.is_some())
            .field("tab_owner", &self.tab_owner)
            .field("run", &self.run)
            .field("parent", &self.parent)
            .field("hints", &self.hints)
            .finish()
    }
}

/// The JSON object of a successful result, for host tools.
impl ToolOutput {
    /// A JSON result: compact JSON text for the agent, the value as structured
    /// content, its first line as the journal's summary.
    pub fn json(value: Value) -> Self {
        let summary = one_line(&value.to_string());
        json_output(value, summary)
    }

    /// The text of the result's text content, joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                Content::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }
}

pub(crate) fn json_output(value: Value, summary: String) -> ToolOutput {
    ToolOutput { content: vec![Content::Text(value.to_string())], structured: Some(value), summary }
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

/// The first line of `s`, at most 200 chars (journal summaries).
pub(crate) fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        out.push('…');
    }
    out
}
