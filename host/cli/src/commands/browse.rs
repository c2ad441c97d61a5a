//! The browsing commands (`ochre open`, `snapshot`, `click`, `fill`, ...,
//! `call` for any tool): each is one tool call to the session's daemon
//! ([`super::session`]), printed as the MCP tool answers it (its text, or its
//! JSON with `--json`), exiting with a code by the error's class.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use base64::Engine as _;
use clap::{Subcommand, ValueEnum};
use serde_json::{Map, Value, json};

use super::session::{Client, Paths, session_name};
use crate::{Cli, UsageError};

/// TARGET, in the commands that act on an element.
const TARGET_HELP: &str = "TARGET: a ref from `ochre snapshot` (ax_12, or @ax_12), css=SELECTOR, \
xpath=PATH, text=TEXT, role=ROLE[:NAME] (role=button:Save), label=NAME, or a description \
(\"the Save button\")";

#[derive(Subcommand, Debug, Clone)]
pub(crate) enum Browse {
    /// Open a URL in the session's current tab and wait for the page to load
    /// (the session's daemon, and its browser, start first if need be).
    Open {
        url: String,
        /// In a new tab (made current).
        #[arg(long)]
        new_tab: bool,
    },
    /// Go back in the tab's history.
    Back,
    /// Go forward in the tab's history.
    Forward,
    /// Reload the tab and wait for it to load.
    Reload,
    /// The page as roles, names and refs (ax_N): interactive elements by
    /// default; --all for every node; --text or --markdown to read it.
    Snapshot {
        /// Every node, not only the interactive ones.
        #[arg(long)]
        all: bool,
        /// The page's text as a person reads it.
        #[arg(long, conflicts_with_all = ["all", "markdown"])]
        text: bool,
        /// The page as Markdown.
        #[arg(long, conflicts_with = "all")]
        markdown: bool,
        /// Only the part under this ref.
        #[arg(long = "under", value_name = "REF")]
        under: Option<String>,
    },
    /// Elements matching words or a short description, best first, with refs.
    Find {
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Click an element once it can take the click; says what changed.
    #[command(after_help = TARGET_HELP)]
    Click {
        target: String,
        /// Double-click.
        #[arg(long)]
        double: bool,
        #[command(flatten)]
        at: Pick,
    },
    /// Move the mouse over an element.
    #[command(after_help = TARGET_HELP)]
    Hover {
        target: String,
        #[command(flatten)]
        at: Pick,
    },
    /// Set a field to a value, read back (text, a date, an option's label); a
    /// plain TARGET is a field's label, name, id or placeholder.
    #[command(after_help = TARGET_HELP)]
    Fill {
        target: String,
        value: String,
        #[command(flatten)]
        at: Pick,
    },
    /// Choose options of a select or a combobox (several for a multi-select).
    #[command(after_help = TARGET_HELP)]
    Select {
        target: String,
        #[arg(required = true, num_args = 1..)]
        options: Vec<String>,
        #[command(flatten)]
        at: Pick,
    },
    /// Check a checkbox, a switch or a radio (left so when it already is).
    #[command(after_help = TARGET_HELP)]
    Check {
        target: String,
        #[command(flatten)]
        at: Pick,
    },
    /// Uncheck a checkbox or a switch.
    #[command(after_help = TARGET_HELP)]
    Uncheck {
        target: String,
        #[command(flatten)]
        at: Pick,
    },
    /// Type text key by key into an element (a ref): for autocompletes,
    /// masks and editors; read back.
    Type {
        /// The element's ref (ax_12).
        target: String,
        text: String,
        /// Press Enter after.
        #[arg(long)]
        submit: bool,
    },
    /// Press a key or a chord (Enter, Escape, Control+a), on an element's ref
    /// if given, else where the focus is.
    Press {
        key: String,
        /// The element's ref (ax_12).
        target: Option<String>,
    },
    /// Read the current tab: its text, HTML, title or URL.
    Get { what: GetWhat },
    /// Run JavaScript in the page; prints the JSON value of its last expression.
    Eval { code: String },
    /// Wait (bounded) for an element, its going, a URL, a condition or a time.
    Wait {
        /// A CSS selector to appear.
        #[arg(long, group = "until")]
        selector: Option<String>,
        /// A CSS selector to go.
        #[arg(long, group = "until")]
        gone: Option<String>,
        /// A URL pattern to be at (a glob with *, or /regex/).
        #[arg(long, group = "until")]
        url: Option<String>,
        /// A JavaScript condition to become true.
        #[arg(long, group = "until")]
        js: Option<String>,
        /// A navigation to end.
        #[arg(long, group = "until")]
        navigation: bool,
        /// This many milliseconds.
        #[arg(long, group = "until")]
        ms: Option<u64>,
        /// The most milliseconds to wait.
        #[arg(long, value_name = "MS")]
        timeout: Option<u64>,
    },
    /// Save a screenshot of the current tab as PNG (default: screenshot.png).
    Screenshot {
        path: Option<PathBuf>,
        /// The whole page, not only the viewport.
        #[arg(long)]
        full: bool,
    },
    /// The session's open tabs.
    Tabs,
    /// Open or close a tab.
    Tab {
        #[command(subcommand)]
        command: TabCommand,
    },
    /// Answer the tab's JavaScript dialog (an alert, a confirm, a prompt, or
    /// the page asking before it is left): accept it (a prompt with TEXT) or
    /// dismiss it.
    Dialog {
        #[command(subcommand)]
        command: DialogCommand,
    },
    /// Sign in on the current page with a stored credential (`ochre secret
    /// credential set`): ochre types it on its own origins only; the values
    /// never reach the command's output.
    SignIn {
        /// The credential's name.
        name: String,
        /// Submit the form after.
        #[arg(long)]
        submit: bool,
    },
    /// Record what this session does (start [LABEL]), end the recording
    /// (stop: its id and steps), or list the recordings.
    Record {
        #[command(subcommand)]
        command: RecordCommand,
    },
    /// Replay a recording on the current tab, each step checked as it ran;
    /// parameters as KEY=VALUE (a recording made with them, or `secret:NAME`).
    Replay {
        /// The recording's id (`ochre record list`).
        id: String,
        /// KEY=VALUE parameters.
        params: Vec<String>,
    },
    /// Call any tool by name (`ochre tools` lists them): arguments as
    /// KEY=TEXT, KEY:=JSON (a number, true, a list, an object), or one JSON object.
    Call { tool: String, args: Vec<String> },
}

/// Which of several matches (TARGET as role, name or text), and how long to wait.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct Pick {
    /// Which match, from 0, when TARGET names several.
    #[arg(long)]
    nth: Option<u64>,
    /// The most milliseconds to wait until the element can take it.
    #[arg(long, value_name = "MS")]
    timeout: Option<u64>,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
pub(crate) enum GetWhat {
    Text,
    Html,
    Title,
    Url,
}

#[derive(Subcommand, Debug, Clone)]
pub(crate) enum RecordCommand {
    /// Start recording every command of the session.
    Start { label: Option<String> },
    /// Stop the recording: its id and step count.
    Stop,
    /// The recordings, newest first.
    List,
}

#[derive(Subcommand, Debug, Clone)]
pub(crate) enum DialogCommand {
    /// Accept it (OK; leave the page); a prompt's answer is TEXT (else the
    /// text it offered).
    Accept { text: Option<String> },
    /// Dismiss it (Cancel; stay on the page).
    Dismiss,
}

#[derive(Subcommand, Debug, Clone)]
pub(crate) enum TabCommand {
    /// Open a tab (at URL if given) and make it current.
    New { url: Option<String> },
    /// Close a tab by its id (see `ochre tabs`).
    Close { id: String },
}

/// An element as a command names it.
#[derive(Debug, PartialEq)]
enum Element {
    Ref(String),
    /// A target object (`{selector}`, `{role, name}`, ...).
    Named(Value),
    /// A description, or for fields a label.
    Words(String),
}

fn element(text: &str, nth: Option<u64>) -> anyhow::Result<Element> {
    let t = text.trim();
    if t.is_empty() {
        return Err(UsageError(format!("an empty TARGET; {TARGET_HELP}")).into());
    }
    let r = t.strip_prefix('@').unwrap_or(t);
    if r.strip_prefix("ax_").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    {
        return Ok(Element::Ref(r.to_owned()));
    }
    let mut target = Map::new();
    if let Some((kind, rest)) = t.split_once('=') {
        match kind {
            "css" => target.insert("selector".into(), json!(rest)),
            "xpath" => target.insert("xpath".into(), json!(rest)),
            "text" => target.insert("text".into(), json!(rest)),
            "label" | "name" => target.insert("name".into(), json!(rest)),
            "role" => {
                let (role, name) = rest.split_once(':').map_or((rest, None), |(r, n)| (r, Some(n)));
                if let Some(n) = name {
                    target.insert("name".into(), json!(n));
                }
                target.insert("role".into(), json!(role))
            }
            _ => None,
        };
    }
    if target.is_empty() {
        return Ok(Element::Words(t.to_owned()));
    }
    if let Some(n) = nth {
        target.insert("nth".into(), json!(n));
    }
    Ok(Element::Named(Value::Object(target)))
}

/// How a call's answer is printed.
#[derive(Debug, PartialEq)]
enum Render {
    /// The tool's text.
    Text,
    /// The image, written to this file.
    Image(PathBuf),
    /// One field (`title` or `url`) of the tab given (`tabs_context`), else
    /// of the current one.
    TabField(&'static str, Option<String>),
    /// A recording started or stopped, or the list of them: a line each.
    Recording,
}

/// The tool call a command makes.
#[derive(Debug, PartialEq)]
pub(crate) struct ToolCall {
    tool: String,
    args: Value,
    render: Render,
}

fn call(tool: &str, args: Value) -> ToolCall {
    ToolCall { tool: tool.to_owned(), args, render: Render::Text }
}

/// A field's value set through the element named: by ref or target
/// (`form_input`), or by label (`fill_form`).
fn set_field(target: &str, value: Value, at: &Pick) -> anyhow::Result<ToolCall> {
    Ok(match element(target, at.nth)? {
        Element::Ref(r) => call("form_input", json!({"ref": r, "value": value})),
        Element::Named(t) => {
            let mut args = json!({"target": t, "value": value});
            if let Some(ms) = at.timeout {
                args["timeout"] = json!(ms);
            }
            call("form_input", args)
        }
        Element::Words(label) => call("fill_form", json!({"fields": {label: value}})),
    })
}

/// The element argument of `interact`.
fn act_on(target: &str, at: &Pick, action: &str) -> anyhow::Result<ToolCall> {
    let mut args = match element(target, at.nth)? {
        Element::Ref(r) => json!({"ref": r}),
        Element::Named(t) => json!({"target": t}),
        Element::Words(q) => json!({"query": q}),
    };
    args["action"] = json!(action);
    if let Some(ms) = at.timeout {
        args["timeout"] = json!(ms);
    }
    Ok(call("interact", args))
}

fn ref_of(target: &str, what: &str) -> anyhow::Result<String> {
    match element(target, None)? {
        Element::Ref(r) => Ok(r),
        _ => Err(UsageError(format!(
            "{what} takes an element's ref (ax_12, from `ochre snapshot` or `ochre find`), not {target:?}; \
             to set a field by its label, `ochre fill LABEL VALUE`"
        ))
        .into()),
    }
}

/// `ochre call`'s arguments: one JSON object, or KEY=TEXT and KEY:=JSON pairs.
pub(crate) fn call_args(args: &[String]) -> anyhow::Result<Value> {
    if let [one] = args
        && one.trim_start().starts_with('{')
    {
        let v: Value = serde_json::from_str(one)
            .map_err(|e| UsageError(format!("the arguments are not a JSON object: {e}")))?;
        return Ok(v);
    }
    let mut out = Map::new();
    for a in args {
        let (key, value) = if let Some((k, j)) = a.split_once(":=") {
            let v = serde_json::from_str(j)
                .map_err(|e| UsageError(format!("{k}:= takes JSON, and {j:?} is not: {e}")))?;
            (k, v)
        } else if let Some((k, t)) = a.split_once('=') {
            (k, json!(t))
        } else {
            return Err(UsageError(format!(
                "{a:?}: arguments are KEY=TEXT, KEY:=JSON or one JSON object"
            ))
            .into());
        };
        if key.is_empty() {
            return Err(UsageError(format!("{a:?}: the argument has no name")).into());
        }
        out.insert(key.to_owned(), value);
    }
    Ok(Value::Object(out))
}

impl Browse {
    /// The tool call this command makes (checked before the daemon is reached).
    pub(crate) fn tool_call(&self, tab: Option<&str>) -> anyhow::Result<ToolCall> {
        let mut c = match self {
            Self::Open { url, new_tab: false } => call("navigate", json!({"url": url})),
            Self::Open { url, new_tab: true } => call("tabs_create", json!({"url": url})),
            Self::Back => call("navigate", json!({"url": "back"})),
            Self::Forward => call("navigate", json!({"url": "forward"})),
            Self::Reload => call("page_reload", json!({})),
            Self::Snapshot { all, text, markdown, under } => {
                let mut args = json!({});
                if *text {
                    args["mode"] = json!("text");
                } else if *markdown {
                    args["mode"] = json!("markdown");
                } else {
                    args["filter"] = json!(if *all { "all" } else { "interactive" });
                }
                if let Some(r) = under {
                    args["ref_id"] = json!(ref_of(r, "--under")?);
                }
                call("read_page", args)
            }
            Self::Find { query } => call("find", json!({"query": query.join(" ")})),
            Self::Click { target, double, at } => {
                act_on(target, at, if *double { "double_click" } else { "click" })?
            }
            Self::Hover { target, at } => act_on(target, at, "hover")?,
            Self::Fill { target, value, at } => set_field(target, json!(value), at)?,
            Self::Select { target, options, at } => {
                let v = if let [one] = options.as_slice() { json!(one) } else { json!(options) };
                set_field(target, v, at)?
            }
            Self::Check { target, at } => set_field(target, json!(true), at)?,
            Self::Uncheck { target, at } => set_field(target, json!(false), at)?,
            Self::Type { target, text, submit } => {
                let mut args = json!({"ref": ref_of(target, "type")?, "text": text});
                if *submit {
                    args["submit"] = json!(true);
                }
                call("type", args)
            }
            Self::Press { key, target } => {
                let mut args = json!({"key": key});
                if let Some(t) = target {
                    args["ref"] = json!(ref_of(t, "press")?);
                }
                call("press_key", args)
            }
            Self::Get { what: GetWhat::Text } => call("page_content", json!({"format": "text"})),
            Self::Get { what: GetWhat::Html } => call("page_content", json!({"format": "html"})),
            Self::Get { what: what @ (GetWhat::Title | GetWhat::Url) } => {
                let field = if matches!(what, GetWhat::Title) { "title" } else { "url" };
                let render = Render::TabField(field, tab.map(str::to_owned));
                ToolCall { render, ..call("tabs_context", json!({})) }
            }
            Self::Eval { code } => call("javascript_tool", json!({"code": code})),
            Self::Wait { .. } => self.wait_call()?,
            Self::Screenshot { path, full } => ToolCall {
                render: Render::Image(path.clone().unwrap_or_else(|| "screenshot.png".into())),
                ..call("page_screenshot", json!({"fullPage": full, "format": "png"}))
            },
            Self::Tabs => call("tabs_context", json!({})),
            Self::Tab { command: TabCommand::New { url } } => {
                call("tabs_create", url.as_ref().map_or_else(|| json!({}), |u| json!({"url": u})))
            }
            Self::Tab { command: TabCommand::Close { id } } => {
                call("tabs_close", json!({"tabId": id}))
            }
            Self::Dialog { command: DialogCommand::Accept { text } } => {
                let mut args = json!({"accept": true});
                if let Some(t) = text {
                    args["promptText"] = json!(t);
                }
                call("handle_dialog", args)
            }
            Self::Dialog { command: DialogCommand::Dismiss } => {
                call("handle_dialog", json!({"accept": false}))
            }
            Self::SignIn { name, submit } => {
                call("oc_credential_fill", json!({"name": name, "submit": submit}))
            }
            Self::Record { command } => {
                let c = match command {
                    RecordCommand::Start { label } => call(
                        "oc_recording_start",
                        label.as_ref().map_or_else(|| json!({}), |l| json!({"label": l})),
                    ),
                    RecordCommand::Stop => call("oc_recording_stop", json!({})),
                    RecordCommand::List => call("oc_recording_list", json!({})),
                };
                ToolCall { render: Render::Recording, ..c }
            }
            Self::Replay { id, params } => replay_call(id, params)?,
            Self::Call { tool, args } => call(tool, call_args(args)?),
        };
        let page_tool = self.on_a_page();
        if let (Some(tab), true) = (tab, page_tool) {
            c.args["tabId"] = json!(tab);
        }
        Ok(c)
    }

    /// Whether the command acts on the page or the session (its answer
    /// reports an effect, which `--quiet` leaves to the exit code), rather
    /// than reading (its answer is what was asked for).
    pub(crate) fn acts(&self) -> bool {
        match self {
            Self::Open { .. }
            | Self::Back
            | Self::Forward
            | Self::Reload
            | Self::Click { .. }
            | Self::Hover { .. }
            | Self::Fill { .. }
            | Self::Select { .. }
            | Self::Check { .. }
            | Self::Uncheck { .. }
            | Self::Type { .. }
            | Self::Press { .. }
            | Self::Wait { .. }
            | Self::Tab { .. }
            | Self::Dialog { .. }
            | Self::SignIn { .. }
            | Self::Replay { .. } => true,
            Self::Snapshot { .. }
            | Self::Find { .. }
            | Self::Get { .. }
            | Self::Eval { .. }
            | Self::Screenshot { .. }
            | Self::Tabs
            | Self::Record { .. }
            | Self::Call { .. } => false,
        }
    }

    /// Whether the command works on a page (and so takes `--tab`).
    fn on_a_page(&self) -> bool {
        !matches!(
            self,
            Self::Tabs
                | Self::Tab { .. }
                | Self::Call { .. }
                | Self::Record { .. }
                | Self::Open { new_tab: true, .. }
                | Self::Get { what: GetWhat::Title | GetWhat::Url }
        )
    }

    /// `wait`'s call: what it waits for, and how long at most.
    fn wait_call(&self) -> anyhow::Result<ToolCall> {
        let Self::Wait { selector, gone, url, js, navigation, ms, timeout } = self else {
            return Err(UsageError("not a wait".into()).into());
        };
        let mut args = match (selector, gone, url, js, ms) {
            (Some(s), ..) => json!({"type": "selector", "value": s}),
            (_, Some(s), ..) => json!({"type": "selector_hidden", "value": s}),
            (_, _, Some(u), ..) => json!({"type": "url_match", "value": u}),
            (_, _, _, Some(j), _) => json!({"type": "function", "value": j}),
            (.., Some(ms)) => json!({"type": "timeout", "value": ms.to_string()}),
            _ if *navigation => json!({"type": "navigation"}),
            _ => {
                return Err(UsageError(
                    "wait for what: --selector, --gone, --url, --js, --navigation or --ms".into(),
                )
                .into());
            }
        };
        if let Some(t) = timeout {
            args["timeout"] = json!(t);
        }
        Ok(call("wait_for", args))
    }
}

/// `replay`'s call: the recording and its KEY=VALUE parameters.
fn replay_call(id: &str, params: &[String]) -> anyhow::Result<ToolCall> {
    let mut values = Map::new();
    for p in params {
        let (k, v) = p
            .split_once('=')
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| UsageError(format!("{p:?}: a replay's parameters are KEY=VALUE")))?;
        values.insert(k.to_owned(), json!(v));
    }
    Ok(call("oc_recording_replay", json!({"recordingId": id, "params": values})))
}

/// Exit codes by the class of a tool's error (documented in docs/cli.md).
pub(crate) mod exit {
    /// The page said no: an element not found or not interactable, a stale
    /// ref, a timeout, a navigation that failed, a script that threw.
    pub(crate) const FAILED: u8 = 1;
    /// The command or its arguments are wrong (clap's usage errors too).
    pub(crate) const USAGE: u8 = 2;
    /// A guard or policy refused it (a disabled tool, an origin, the network
    /// policy, a locked login, the session limit).
    pub(crate) const REFUSED: u8 = 3;
    /// The session's daemon could not start, or went away mid-command (what
    /// the command did is not known).
    pub(crate) const DAEMON: u8 = 4;
    /// ochre or the browser failed (a plugin trapped, the browser is gone,
    /// stored state unreadable).
    pub(crate) const SERVER: u8 = 5;
    /// Its output's reader went away first (`ochre snapshot | head`): 128 +
    /// SIGPIPE, as a shell tool that signal ends; nothing is printed.
    pub(crate) const CLOSED: u8 = 141;

    /// The exit code of an error `code`.
    pub(crate) fn of(code: &str) -> u8 {
        match code {
            "INVALID_ARGUMENT" | "INVALID_INTENT" | "UNKNOWN_TOOL" | "MISSING_PARAMETERS"
            | "REDACTED_ARGUMENT" | "INVALID_SECRET" => USAGE,
            "CAPABILITY_DISABLED"
            | "PERMISSION_DENIED"
            | "ORIGIN_REFUSED"
            | "LOGIN_LOCKED"
            | "SESSION_LIMIT"
            | "intent_execution_failed"
            | "tool_policy_blocked"
            | "bulk_completion_guard_failed" => REFUSED,
            "INTERNAL"
            | "PLUGIN_TRAPPED"
            | "PLUGIN_TIMEOUT"
            | "PLUGIN_OUT_OF_MEMORY"
            | "PLUGIN_FAILED"
            | "STATE_CORRUPT"
            | "STORAGE_FAILED"
            | "STATE_WRITE_FAILED"
            | "BROWSER_UNAVAILABLE"
            | "BROWSER_ERROR" => SERVER,
            _ => FAILED,
        }
    }
}

/// Print a tool's error answer (as JSON with `json_out`): the command fails
/// with its class's exit code.
fn print_failure(result: &Value, text: &[&str], json_out: bool) -> anyhow::Result<()> {
    let body = result.get("structuredContent").cloned().unwrap_or_else(|| {
        text.first().and_then(|t| serde_json::from_str(t).ok()).unwrap_or(Value::Null)
    });
    let code = body["error"]["code"].as_str().unwrap_or("INTERNAL").to_owned();
    if json_out {
        writeln!(std::io::stdout().lock(), "{body}")?;
    } else {
        let message = body["error"]["message"].as_str().unwrap_or("");
        eprintln!("error {code}: {message}");
        for hint in text.iter().skip(1) {
            eprintln!("{hint}");
        }
    }
    Err(ToolFailed { code: exit::of(&code) }.into())
}

/// A list's items a line each (`none` for an empty list); `None` when an
/// item is not of the shape `line` reads.
fn each_line(
    items: &[Value],
    none: &str,
    line: impl Fn(&Value) -> Option<String>,
) -> Option<String> {
    if items.is_empty() {
        return Some(none.to_owned());
    }
    items.iter().map(line).collect::<Option<Vec<_>>>().map(|l| l.join("\n"))
}

/// `record start`, `record stop` and `record list` answered as lines, from
/// the tools' structured answers; `None` for an answer of another shape.
fn recording_lines(v: &Value) -> Option<String> {
    let label = |r: &Value| r["label"].as_str().map(|l| format!(" {}", Value::from(l)));
    if let Some(list) = v.get("recordings").and_then(Value::as_array) {
        let none = "no recordings (`ochre record start [LABEL]` starts one)";
        return each_line(list, none, |r| {
            let params: Vec<&str> = r["params"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["name"].as_str())
                .collect();
            let params = if params.is_empty() {
                String::new()
            } else {
                format!("; parameters: {}", params.join(", "))
            };
            Some(format!(
                "{}{}: {} steps, {}, started {}{params}",
                r["id"].as_str()?,
                label(r).unwrap_or_default(),
                r["steps"].as_u64()?,
                r["status"].as_str().unwrap_or("stopped"),
                r["started_at"].as_str().unwrap_or("?"),
            ))
        });
    }
    let id = v["recordingId"].as_str()?;
    match v["steps"].as_u64() {
        // `record stop`.
        Some(steps) => {
            let failed = v["failed_steps"].as_u64().unwrap_or(0);
            let last =
                v["final_url"].as_str().map(|u| format!("; it ended at {u}")).unwrap_or_default();
            Some(format!(
                "stopped {id}: {steps} steps, {failed} failed{last} (`ochre replay {id}` plays it)"
            ))
        }
        // `record start`.
        None => Some(format!(
            "recording {id}{}: every command of the session from now on (`ochre record stop` ends it)",
            label(v).unwrap_or_default()
        )),
    }
}

/// A tool's error, printed: the command exits with its class's code.
#[derive(Debug)]
pub(crate) struct ToolFailed {
    pub(crate) code: u8,
}

impl std::fmt::Display for ToolFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the tool failed (exit {})", self.code)
    }
}

impl std::error::Error for ToolFailed {}

/// What every browsing command shares: the session, `--json`, `--quiet`,
/// `--tab`.
pub(crate) struct Conn {
    paths: Paths,
    client: Option<Client>,
    daemon_args: Vec<std::ffi::OsString>,
    json: bool,
    quiet: bool,
    tab: Option<String>,
}

impl Conn {
    pub(crate) fn new(cli: &Cli) -> anyhow::Result<Self> {
        let conn = Self::with(cli.session.as_deref(), cli.json, cli.tab.clone())?;
        Ok(Self { quiet: cli.quiet, ..conn })
    }

    /// Whether `cmd`'s answer is left out (`--quiet` and an action).
    pub(crate) fn quiet_for(&self, cmd: &Browse) -> bool {
        self.quiet && cmd.acts()
    }

    /// A connection to `session` (default: the working directory's).
    pub(crate) fn with(
        session: Option<&str>,
        json: bool,
        tab: Option<String>,
    ) -> anyhow::Result<Self> {
        let name = session_name(session)?;
        Ok(Self {
            paths: Paths::of(&name)?,
            client: None,
            // A new daemon takes this command's own arguments: the host flags
            // given with the session's first command are its.
            daemon_args: std::env::args_os().skip(1).collect(),
            json,
            quiet: false,
            tab,
        })
    }

    /// The tab given with `--tab`.
    pub(crate) fn tab(&self) -> Option<&str> {
        self.tab.as_deref()
    }

    /// The tools the session's server offers: those it lists, and with
    /// `all` its hidden tiers too (see [`Self::hidden_tools`]).
    pub(crate) fn tools(&mut self, all: bool) -> anyhow::Result<Vec<Value>> {
        let mut tools = self.client()?.tools()?;
        if all {
            tools.extend(self.hidden_tools()?);
        }
        Ok(tools)
    }

    /// The tools of the server's hidden tiers, revealed on this connection
    /// only: `expand_tools` answers with their definitions.
    pub(crate) fn hidden_tools(&mut self) -> anyhow::Result<Vec<Value>> {
        let answer = self.client()?.call("expand_tools", &json!({"tier": 3}))?;
        if answer["isError"] == true {
            anyhow::bail!("expand_tools failed: {}", answer["structuredContent"]);
        }
        Ok(answer["structuredContent"]["tools"].as_array().cloned().unwrap_or_default())
    }

    /// Call `tool` and print its answer as text (or JSON with `--json`).
    pub(crate) fn call_text(&mut self, tool: &str, args: Value) -> anyhow::Result<()> {
        let result = self.client()?.call(tool, &args)?;
        let c = ToolCall { tool: tool.to_owned(), args, render: Render::Text };
        print_result(&c, &result, self.json)
    }

    fn client(&mut self) -> anyhow::Result<&mut Client> {
        if self.client.is_none() {
            self.client = Some(Client::connect(&self.paths, &self.daemon_args)?);
        }
        self.client.as_mut().context("connected")
    }

    /// Run one command and print its answer; `Err(ToolFailed)` when the tool
    /// answered with an error (printed already).
    pub(crate) fn run(&mut self, cmd: &Browse) -> anyhow::Result<()> {
        let c = cmd.tool_call(self.tab.as_deref())?;
        let (json_out, quiet) = (self.json, self.quiet_for(cmd));
        let result = self.client()?.call(&c.tool, &c.args)?;
        if quiet && result["isError"] != true {
            return Ok(());
        }
        print_result(&c, &result, json_out)
    }
}

/// Print a tool's MCP result as the command's answer.
fn print_result(c: &ToolCall, result: &Value, json_out: bool) -> anyhow::Result<()> {
    let blocks = result["content"].as_array().cloned().unwrap_or_default();
    let text: Vec<&str> =
        blocks.iter().filter(|b| b["type"] == "text").filter_map(|b| b["text"].as_str()).collect();
    if result["isError"] == true {
        return print_failure(result, &text, json_out);
    }
    let mut out = std::io::stdout().lock();
    match &c.render {
        Render::Image(path) => {
            let data = blocks
                .iter()
                .find(|b| b["type"] == "image")
                .and_then(|b| b["data"].as_str())
                .context("the answer holds no image")?;
            let bytes = base64::engine::general_purpose::STANDARD.decode(data)?;
            std::fs::write(path, &bytes).with_context(|| format!("writing {}", path.display()))?;
            if json_out {
                writeln!(out, "{}", json!({"path": path, "bytes": bytes.len()}))?;
            } else {
                writeln!(out, "{} ({} bytes)", path.display(), bytes.len())?;
            }
        }
        Render::TabField(field, tab) => {
            let tabs = result["structuredContent"]["tabs"].as_array().cloned().unwrap_or_default();
            let current = match tab {
                Some(id) => tabs.iter().find(|t| t["tabId"] == id.as_str()),
                None => tabs.iter().find(|t| t["current"] == true),
            };
            let Some(current) = current else {
                let (code, message) = match tab {
                    Some(id) => ("TAB_NOT_FOUND", format!("no tab {id} (`ochre tabs` lists them)")),
                    None => (
                        "TAB_NOT_FOUND",
                        "the session has no tab open (`ochre open URL` opens one)".to_owned(),
                    ),
                };
                if json_out {
                    writeln!(out, "{}", json!({"error": {"code": code, "message": message}}))?;
                } else {
                    eprintln!("error {code}: {message}");
                }
                return Err(ToolFailed { code: exit::of(code) }.into());
            };
            if json_out {
                writeln!(out, "{}", json!({*field: current[*field]}))?;
            } else {
                writeln!(out, "{}", current[*field].as_str().unwrap_or(""))?;
            }
        }
        Render::Recording
            if !json_out && recording_lines(&result["structuredContent"]).is_some() =>
        {
            writeln!(out, "{}", recording_lines(&result["structuredContent"]).unwrap_or_default())?;
        }
        Render::Text | Render::Recording if json_out => match result.get("structuredContent") {
            Some(v) if !v.is_null() => writeln!(out, "{v}")?,
            _ => {
                let mut answer = json!({"text": text.join("\n")});
                // An image is named, not printed (`ochre screenshot FILE` saves one).
                let images: Vec<Value> = blocks
                    .iter()
                    .filter(|b| b["type"] == "image")
                    .map(|b| {
                        let size = b["data"].as_str().map_or(0, |d| d.len() / 4 * 3);
                        json!({"mimeType": b["mimeType"], "bytes": size})
                    })
                    .collect();
                if !images.is_empty() {
                    answer["images"] = json!(images);
                }
                writeln!(out, "{answer}")?
            }
        },
        Render::Text | Render::Recording => {
            for t in &text {
                writeln!(out, "{}", page_line(t).unwrap_or_else(|| (*t).to_owned()))?;
            }
            for b in blocks.iter().filter(|b| b["type"] == "image") {
                writeln!(
                    out,
                    "[an image, {}: `ochre screenshot FILE` saves one]",
                    b["mimeType"].as_str().unwrap_or("image")
                )?;
            }
        }
    }
    Ok(())
}

/// A tab's answer (`navigate`, `tabs_create`, `page_reload`: a JSON object
/// with its tab, URL and title) as one line, as `snapshot` heads a page:
/// `t1 https://example.com/ "Example Domain"`, then what else it holds
/// (`wall: a login form`, `opener: t1`, ...); `tabs_context`'s list a line
/// a tab; `tabs_close`'s `closed t2`. `None` for any other text.
fn page_line(text: &str) -> Option<String> {
    let answer = serde_json::from_str::<Value>(text).ok()?;
    // `tabs_context`: a line a tab, `*` before the current one.
    if let Some(tabs) = answer.get("tabs").and_then(Value::as_array) {
        return each_line(tabs, "no tab open (`ochre open URL` opens one)", |t| {
            let mark = if t["current"] == true { "* " } else { "  " };
            Some(format!("{mark}{}", tab_line(t.as_object()?)?))
        });
    }
    // `tabs_close`.
    if let Some(tab) = answer.get("closed").and_then(Value::as_str) {
        return Some(format!("closed {tab}"));
    }
    tab_line(answer.as_object()?)
}

fn tab_line(o: &Map<String, Value>) -> Option<String> {
    let (tab, url) = (o.get("tabId")?.as_str()?, o.get("url")?.as_str()?);
    let mut line = format!("{tab} {url}");
    if let Some(title) = o.get("title").and_then(Value::as_str) {
        line.push_str(&format!(" {}", Value::from(title)));
    }
    for (k, v) in o {
        if matches!(k.as_str(), "tabId" | "url" | "title" | "current") || v.is_null() {
            continue;
        }
        let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        line.push_str(&format!("; {k}: {v}"));
    }
    Some(line)
}

/// `ochre batch`: commands, one per line (as typed after `ochre`; `#` starts
/// a comment), on one connection to the session, each answered in turn;
/// stops at the first that fails unless `keep_going`.
pub(crate) fn batch(
    cli: &Cli,
    file: Option<&std::path::Path>,
    keep_going: bool,
) -> anyhow::Result<()> {
    let text = match file {
        None => std::io::read_to_string(std::io::stdin()).context("reading stdin")?,
        Some(p) if p.as_os_str() == "-" => {
            std::io::read_to_string(std::io::stdin()).context("reading stdin")?
        }
        Some(p) => std::fs::read_to_string(p).with_context(|| p.display().to_string())?,
    };
    /// A line ready to run: a browsing command, or a tool's name and arguments.
    enum Ready {
        Browse(Browse),
        Call(String, Value),
    }
    // Every line is read and checked before the first runs: a typo on line
    // 9 changes nothing.
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words =
            shell_words(line).map_err(|e| UsageError(format!("line {}: {e}: {line}", i + 1)))?;
        let step = crate::parse_batch_line(&words)
            .map_err(|e| UsageError(format!("line {}: {e}", i + 1)))?;
        if let crate::BatchLine::Browse(parsed) = &step {
            parsed
                .tool_call(cli.tab.as_deref())
                .map_err(|e| UsageError(format!("line {}: {e:#}", i + 1)))?;
        }
        lines.push((i + 1, line.to_owned(), step));
    }
    let mut conn = Conn::new(cli)?;
    // A tool's line is checked against its schema, from the session's daemon
    // (started now if none runs), before the first line runs too.
    let tools = match lines.iter().any(|(_, _, s)| matches!(s, crate::BatchLine::Tool(_))) {
        true => conn.tools(true)?,
        false => Vec::new(),
    };
    let mut cmds = Vec::new();
    for (n, line, step) in lines {
        let call = match step {
            crate::BatchLine::Browse(cmd) => Ready::Browse(cmd),
            crate::BatchLine::Tool(words) => {
                let bad = |e: String| UsageError(format!("line {n}: {e}"));
                let (globals, words) =
                    super::tool::globals(&words).map_err(|e| bad(e.to_string()))?;
                if globals.session.is_some() || words.iter().any(|w| w == "--help" || w == "-h") {
                    return Err(bad("a batch's lines take no --session or --help".into()).into());
                }
                let tab = globals.tab.or_else(|| cli.tab.clone());
                let (tool, args) = super::tool::prepare(&tools, &words, tab.as_deref())
                    .map_err(|e| bad(e.to_string()))?;
                Ready::Call(tool, args)
            }
        };
        cmds.push((n, line, call));
    }
    let mut failed = None;
    for (n, line, call) in &cmds {
        let quiet = matches!(call, Ready::Browse(cmd) if conn.quiet_for(cmd));
        if !cli.json && !quiet {
            crate::say!("> {line}");
        }
        let done = match call {
            Ready::Browse(cmd) => conn.run(cmd),
            Ready::Call(tool, args) => conn.call_text(tool, args.clone()),
        };
        match done {
            Ok(()) => {}
            Err(e) if e.is::<ToolFailed>() => {
                let code = e.downcast_ref::<ToolFailed>().map_or(exit::FAILED, |t| t.code);
                failed.get_or_insert((*n, code));
                if !keep_going {
                    break;
                }
            }
            Err(e) => return Err(e.context(format!("line {n}: {line}"))),
        }
    }
    match failed {
        None => Ok(()),
        Some((n, code)) => {
            eprintln!("ochre batch: line {n} failed");
            Err(ToolFailed { code }.into())
        }
    }
}

/// A line split as a POSIX shell splits words: spaces separate, '...' is
/// literal, "..." keeps spaces (with \" and \\), \ escapes one character.
fn shell_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = cur.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("a ' is not closed".into()),
                    }
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("a \" is not closed".into()),
                        },
                        Some(c) => w.push(c),
                        None => return Err("a \" is not closed".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => cur.get_or_insert_with(String::new).push(c),
                None => return Err("a \\ ends the line".into()),
            },
            c => cur.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(cur);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_as_refs_locators_or_words() {
        assert_eq!(element("@ax_12", None).ok(), Some(Element::Ref("ax_12".into())));
        assert_eq!(element("ax_3", None).ok(), Some(Element::Ref("ax_3".into())));
        assert_eq!(
            element("role=button:Save", Some(1)).ok(),
            Some(Element::Named(json!({"role": "button", "name": "Save", "nth": 1})))
        );
        assert_eq!(
            element("css=#a > b[x=y]", None).ok(),
            Some(Element::Named(json!({"selector": "#a > b[x=y]"})))
        );
        assert_eq!(
            element("label=E-mail", None).ok(),
            Some(Element::Named(json!({"name": "E-mail"})))
        );
        assert_eq!(element("ax_", None).ok(), Some(Element::Words("ax_".into())));
        assert_eq!(element("a=b", None).ok(), Some(Element::Words("a=b".into())));
        assert!(element("  ", None).is_err());
    }

    #[test]
    fn a_tabs_answer_is_a_line_and_other_text_is_left_alone() {
        let nav = r#"{"current":true,"tabId":"t1","title":"A \"b\"","url":"http://x/","wall":"a login form","opener":null}"#;
        assert_eq!(
            page_line(nav).as_deref(),
            Some(r#"t1 http://x/ "A \"b\""; wall: a login form"#)
        );
        let tabs = r#"{"tabs":[{"current":false,"tabId":"t1","title":"One","url":"http://x/1"},{"current":true,"tabId":"t2","title":"Two","url":"http://x/2"}]}"#;
        assert_eq!(
            page_line(tabs).as_deref(),
            Some("  t1 http://x/1 \"One\"\n* t2 http://x/2 \"Two\"")
        );
        assert!(page_line(r#"{"tabs": []}"#).is_some_and(|l| l.starts_with("no tab open")));
        assert_eq!(page_line(r#"{"closed":"t2"}"#).as_deref(), Some("closed t2"));
        for other in
            ["clicked button \"Save\" ax_1", "{\"url\": \"http://x/\"}", "[1]", "{\"tabs\": [1]}"]
        {
            assert_eq!(page_line(other), None, "{other}");
        }
    }

    #[test]
    fn recordings_are_told_in_lines() {
        let started = json!({"capture_screenshots": false, "label": "form test",
            "recordingId": "rec-1", "started_at": "2026-12-06T20:24:31.803Z"});
        assert_eq!(
            recording_lines(&started).as_deref(),
            Some(
                "recording rec-1 \"form test\": every command of the session from now on (`ochre record stop` ends it)"
            )
        );
        let stopped = json!({"failed_steps": 0, "final_url": "http://a.test/echo",
            "recordingId": "rec-1", "steps": 6});
        assert_eq!(
            recording_lines(&stopped).as_deref(),
            Some(
                "stopped rec-1: 6 steps, 0 failed; it ended at http://a.test/echo (`ochre replay rec-1` plays it)"
            )
        );
        let list = json!({"recordings": [{"id": "rec-1", "label": "form test", "steps": 6,
            "status": "stopped", "started_at": "2026-12-06T20:24:31.803Z",
            "params": [{"default": "Ada", "name": "customer_name", "secret": false}]},
            {"id": "rec-0", "steps": 0, "status": "stopped", "started_at": "2026-12-05T10:00:00Z"}]});
        assert_eq!(
            recording_lines(&list).as_deref(),
            Some(
                "rec-1 \"form test\": 6 steps, stopped, started 2026-12-06T20:24:31.803Z; parameters: customer_name\n\
                 rec-0: 0 steps, stopped, started 2026-12-05T10:00:00Z"
            )
        );
        assert!(
            recording_lines(&json!({"recordings": []}))
                .is_some_and(|l| l.starts_with("no recordings"))
        );
        // Any other shape is left to the tool's text.
        assert_eq!(recording_lines(&json!({"other": 1})), None);
    }

    #[test]
    fn call_arguments_are_text_json_or_one_object() {
        let v = call_args(&["mode=text".into(), "maxChars:=500".into(), "x:=[1]".into()]).ok();
        assert_eq!(v, Some(json!({"mode": "text", "maxChars": 500, "x": [1]})));
        assert_eq!(call_args(&[r#"{"a": 1}"#.into()]).ok(), Some(json!({"a": 1})));
        // Text stays text, even when it reads as a number.
        assert_eq!(call_args(&["text=123".into()]).ok(), Some(json!({"text": "123"})));
        assert!(call_args(&["nokey".into()]).is_err());
        assert!(call_args(&["n:=nope".into()]).is_err());
        assert!(call_args(&["=v".into()]).is_err());
    }

    #[test]
    fn lines_split_as_a_shell_splits_them() {
        assert_eq!(
            shell_words(r#"fill "Full name" 'Ada  L.' a\ b "q\"x""#).ok(),
            Some(vec![
                "fill".into(),
                "Full name".into(),
                "Ada  L.".into(),
                "a b".into(),
                "q\"x".into()
            ])
        );
        assert_eq!(
            shell_words("call x ''").ok(),
            Some(vec!["call".into(), "x".into(), String::new()])
        );
        assert!(shell_words("open 'x").is_err());
    }

    #[test]
    fn error_codes_have_exit_classes() {
        assert_eq!(exit::of("ELEMENT_NOT_FOUND"), exit::FAILED);
        assert_eq!(exit::of("INVALID_ARGUMENT"), exit::USAGE);
        assert_eq!(exit::of("CAPABILITY_DISABLED"), exit::REFUSED);
        assert_eq!(exit::of("BROWSER_ERROR"), exit::SERVER);
        assert_eq!(exit::DAEMON, 4);
    }
}
