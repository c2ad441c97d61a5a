//! The error codes ochre itself produces, in one place (DESIGN.md §7): the
//! [`Code`] enum. A tool error's `code` is stable: agents and clients match on
//! its spelling ([`Code::as_str`]). Plugins and embedders may add codes of
//! their own ([`Code::Plugin`]); the named variants are the host's, the
//! browser's and the built-in tools'. [`ALL`] lists every one with what it
//! means; `docs/errors.md`, the Python SDK's `Code` class and the page
//! library's code table are generated from it.
//!
//! Four codes keep the lower-case spelling of OpenChrome's guards, which
//! clients written for OpenChrome match on: `output_handle_not_found`,
//! `bulk_completion_guard_failed`, and the task-run stop reasons
//! `intent_execution_failed` and `tool_policy_blocked`.

macro_rules! registry {
    ($( $(#[doc = $doc:literal])+ $name:ident = $value:literal $(=> $ctor:ident)?; )*) => {
        /// A tool error's stable code. Match on the variant in Rust; on the
        /// wire it is its spelling (`Code::StaleRef` is `"STALE_REF"`).
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Code {
            $( $(#[doc = $doc])+ $name, )*
            /// A code of a plugin's or an embedder's own (never one of the
            /// registry's spellings: [`Code::named`] gives those their variant).
            Plugin(String),
        }

        impl Code {
            /// Every code of the registry.
            pub const REGISTRY: &[Code] = &[ $( Code::$name ),* ];

            /// The code's spelling on the wire, e.g. `"STALE_REF"`.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Code::$name => $value, )*
                    Code::Plugin(code) => code,
                }
            }

            /// What the code means (`None` for a plugin's own).
            pub fn meaning(&self) -> Option<&'static str> {
                match self {
                    $( Code::$name => Some(concat!($($doc),+).trim_ascii()), )*
                    Code::Plugin(_) => None,
                }
            }

            /// The code of this spelling: the registry's variant when it is
            /// one of the registry's, else [`Code::Plugin`]. For codes that
            /// arrive as text (from a plugin, the page library, a client).
            pub fn named(code: impl Into<String> + AsRef<str>) -> Code {
                match code.as_ref() {
                    $( $value => Code::$name, )*
                    _ => Code::Plugin(code.into()),
                }
            }
        }

        /// Every code of the registry: `(code, what it means)`.
        pub const ALL: &[(&str, &str)] = &[ $( ($value, concat!($($doc),+).trim_ascii()) ),* ];

        /// A constructor per code for a tool error type with
        /// `fn new(code, message)`: `ToolError::stale_ref("…")` is
        /// `ToolError::new(Code::StaleRef, "…")`. Used inside the type's
        /// `impl` (`ochre_protocol::ToolError`'s).
        macro_rules! code_constructors {
            () => {
                $($(
                    #[doc = concat!("A `", $value, "` error (its meaning: `ochre_protocol::codes::Code`).")]
                    pub fn $ctor(message: impl Into<String>) -> Self {
                        Self::new(crate::codes::Code::$name, message)
                    }
                )?)*
            };
        }
    };
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Code::named(String::deserialize(d)?))
    }
}

registry! {
    // The call and its arguments.
    /// Arguments do not match the tool's schema (the field is named).
    InvalidArgument = "INVALID_ARGUMENT";
    /// The `intent` label is empty, blank or longer than 120 chars.
    InvalidIntent = "INVALID_INTENT" => invalid_intent;
    /// No loaded plugin offers this tool.
    UnknownTool = "UNKNOWN_TOOL" => unknown_tool;
    /// The tool's capability group is excluded by `--tools-only`/`--disable-tools`.
    CapabilityDisabled = "CAPABILITY_DISABLED" => capability_disabled;
    /// The operator's policy forbids this (a file outside the allowed roots, a host interface).
    PermissionDenied = "PERMISSION_DENIED" => permission_denied;
    /// The client cancelled the call (`notifications/cancelled`).
    Cancelled = "CANCELLED" => cancelled;
    /// The call ran past its timeout.
    Timeout = "TIMEOUT" => timeout;
    /// A replay or plan lacks parameters that have no default (all are named).
    MissingParameters = "MISSING_PARAMETERS" => missing_parameters;
    /// The host failed (I/O and the like).
    Internal = "INTERNAL" => internal;

    // Plugins.
    /// The plugin trapped (a panic, an unreachable, a bad memory access).
    PluginTrapped = "PLUGIN_TRAPPED" => plugin_trapped;
    /// The plugin ran past its deadline.
    PluginTimeout = "PLUGIN_TIMEOUT" => plugin_timeout;
    /// The plugin tried to grow its memory past its cap.
    PluginOutOfMemory = "PLUGIN_OUT_OF_MEMORY" => plugin_out_of_memory;
    /// The plugin returned something the host cannot use.
    PluginFailed = "PLUGIN_FAILED" => plugin_failed;

    // Stored state.
    /// Stored state exists but is damaged (the file is named and kept).
    StateCorrupt = "STATE_CORRUPT" => state_corrupt;
    /// The data dir could not be written or read.
    StorageFailed = "STORAGE_FAILED" => storage_failed;
    /// A `{{secret:NAME}}` parameter names no stored secret.
    SecretNotFound = "SECRET_NOT_FOUND" => secret_not_found;
    /// No saved login of that name.
    LoginNotFound = "LOGIN_NOT_FOUND" => login_not_found;
    /// A saved login or credential cannot be opened: no login key, or not the key it was saved with.
    LoginLocked = "LOGIN_LOCKED" => login_locked;
    /// No credential of that name (`ochre secret credential set`).
    CredentialNotFound = "CREDENTIAL_NOT_FOUND" => credential_not_found;
    /// A credential was asked for on a page (or frame) of an origin it is not bound to: nothing was typed.
    OriginRefused = "ORIGIN_REFUSED" => origin_refused;
    /// No hand-off or live view with that id (or it ended).
    HandoffNotFound = "HANDOFF_NOT_FOUND" => handoff_not_found;
    /// No pages for people can be served here (a host embedded without ochre's MCP server): no live view, no secret page.
    LiveViewUnavailable = "LIVE_VIEW_UNAVAILABLE" => live_view_unavailable;
    /// No output handle with that id (or it expired).
    OutputHandleNotFound = "output_handle_not_found" => output_handle_not_found;
    /// No `ochre://` resource with that URI.
    ResourceNotFound = "RESOURCE_NOT_FOUND" => resource_not_found;
    /// The server serves its `--max-sessions` sessions: a new one is refused at
    /// `initialize` (HTTP 503 with `Retry-After`; in the JSON-RPC error's `data`).
    SessionLimit = "SESSION_LIMIT" => session_limit;

    // The browser.
    /// No browser could be launched or reached.
    BrowserUnavailable = "BROWSER_UNAVAILABLE" => browser_unavailable;
    /// A CDP command failed.
    BrowserError = "BROWSER_ERROR" => browser_error;
    /// No tab with that id.
    TabNotFound = "TAB_NOT_FOUND" => tab_not_found;
    /// A person holds the tab (a hand-off or a live view in control): calls on it are refused until they are done.
    TabHeld = "TAB_HELD" => tab_held;
    /// Navigation failed or timed out.
    NavigationFailed = "NAVIGATION_FAILED" => navigation_failed;
    /// A page answered with an HTTP error status (crawl results).
    HttpError = "HTTP_ERROR" => http_error;
    /// The page's JavaScript threw.
    JsError = "JS_ERROR" => js_error;
    /// The document was replaced while the page operation ran (it is retried once).
    DocumentLoading = "DOCUMENT_LOADING" => document_loading;
    /// A ref of an older page or of a removed element.
    StaleRef = "STALE_REF" => stale_ref;
    /// A ref that was never given out on that tab.
    RefNotFound = "REF_NOT_FOUND" => ref_not_found;
    /// No element matches the selector or description.
    ElementNotFound = "ELEMENT_NOT_FOUND" => element_not_found;
    /// The element takes no typed value (not an input, textarea, select or editable).
    ElementNotEditable = "ELEMENT_NOT_EDITABLE" => element_not_editable;
    /// The element cannot take the event now (covered, disabled, moving, hidden); waited for it.
    ElementNotInteractable = "ELEMENT_NOT_INTERACTABLE" => element_not_interactable;
    /// The element does not take keyboard focus.
    ElementNotFocusable = "ELEMENT_NOT_FOCUSABLE" => element_not_focusable;
    /// No form field with that label or name.
    FieldNotFound = "FIELD_NOT_FOUND" => field_not_found;
    /// A JavaScript dialog blocks the tab (answer it with `handle_dialog`; from the shell, `ochre dialog accept` or `dismiss`).
    DialogOpen = "DIALOG_OPEN" => dialog_open;
    /// `handle_dialog` on a tab without a dialog.
    NoDialog = "NO_DIALOG" => no_dialog;
    /// A file that does not exist.
    FileNotFound = "FILE_NOT_FOUND" => file_not_found;
    /// The page's storage cannot be read or written (an opaque origin, storage disabled).
    StorageUnavailable = "STORAGE_UNAVAILABLE" => storage_unavailable;
    /// The page's storage quota is exceeded.
    StorageFull = "STORAGE_FULL" => storage_full;

    // Recordings.
    /// A recording is already running.
    RecordingActive = "RECORDING_ACTIVE" => recording_active;
    /// No recording is running.
    NotRecording = "NOT_RECORDING" => not_recording;
    /// No recording with that id.
    RecordingNotFound = "RECORDING_NOT_FOUND" => recording_not_found;
    /// A recorded argument was not kept (a recording of an older version): record again.
    RedactedArgument = "REDACTED_ARGUMENT" => redacted_argument;
    /// A replayed step's recorded target is not on the page (waited for it).
    TargetNotFound = "TARGET_NOT_FOUND" => target_not_found;

    // Built-in tool groups.
    /// The TOTP secret configured for a domain is unusable (not base32, too short).
    InvalidSecret = "INVALID_SECRET" => invalid_secret;
    /// No crawl job with that id.
    JobNotFound = "JOB_NOT_FOUND" => job_not_found;
    /// No sitemap found for the site (robots.txt `Sitemap:` lines, `/sitemap.xml`).
    SitemapNotFound = "SITEMAP_NOT_FOUND" => sitemap_not_found;
    /// A crawl job's state could not be saved.
    StateWriteFailed = "STATE_WRITE_FAILED" => state_write_failed;
    /// No saved plan with that id.
    PlanNotFound = "PLAN_NOT_FOUND" => plan_not_found;
    /// A workflow's or plan's state could not be read or saved.
    StateError = "STATE_ERROR" => state_error;
    /// No workflow is running (start one with `workflow_init`).
    WorkflowNotFound = "WORKFLOW_NOT_FOUND" => workflow_not_found;
    /// No worker of that name in the workflow.
    WorkerNotFound = "WORKER_NOT_FOUND" => worker_not_found;
    /// Workers of the workflow have not completed.
    WorkflowIncomplete = "WORKFLOW_INCOMPLETE" => workflow_incomplete;

    // Task runs and progress contracts.
    /// No run with that id.
    RunNotFound = "RUN_NOT_FOUND" => run_not_found;
    /// The run cannot go from its state to the one asked for.
    InvalidTransition = "INVALID_TRANSITION" => invalid_transition;
    /// A browser-first run cannot (or did not) use the browser (also its stop reason).
    IntentExecutionFailed = "intent_execution_failed" => intent_execution_failed;
    /// The intent guard blocked a call of a browser-first run (also its stop reason).
    ToolPolicyBlocked = "tool_policy_blocked" => tool_policy_blocked;
    /// No contract with that id (or the run has none).
    ContractNotFound = "CONTRACT_NOT_FOUND" => contract_not_found;
    /// The contract's run is finished: the contract cannot change.
    ContractClosed = "CONTRACT_CLOSED" => contract_closed;
    /// Completion refused: the contract's criteria are not met.
    BulkCompletionGuardFailed = "bulk_completion_guard_failed" => bulk_completion_guard_failed;
}

#[cfg(test)]
mod tests {
    use super::{ALL, Code};

    #[test]
    fn codes_are_unique_and_each_says_what_it_means() {
        let mut seen = std::collections::BTreeSet::new();
        for (code, meaning) in ALL {
            assert!(seen.insert(*code), "{code} twice");
            assert!(meaning.ends_with('.') || meaning.ends_with(')'), "{code}: {meaning:?}");
        }
        assert!(ALL.len() >= 40, "{}", ALL.len());
        assert_eq!(ALL.len(), Code::REGISTRY.len());
        for (code, (spelling, meaning)) in Code::REGISTRY.iter().zip(ALL) {
            assert_eq!((code.as_str(), code.meaning()), (*spelling, Some(*meaning)));
            // Text of a registry spelling is that variant, never a plugin's code.
            assert_eq!(&Code::named(*spelling), code);
        }
        assert_eq!(Code::named("MY_OWN"), Code::Plugin("MY_OWN".into()));
        assert_eq!(Code::named("MY_OWN").meaning(), None);
        let wire = serde_json::to_value(Code::StaleRef).expect("serialize");
        assert_eq!(wire, serde_json::json!("STALE_REF"));
        assert_eq!(serde_json::from_value::<Code>(wire).expect("parse"), Code::StaleRef);
    }

    #[test]
    fn each_code_has_a_constructor_of_its_spelling() {
        use crate::ToolError;
        let e = ToolError::stale_ref("ref ax_3 is from an older page");
        assert_eq!(
            (&e.code, e.message.as_str()),
            (&Code::StaleRef, "ref ax_3 is from an older page")
        );
        // The old lower-case spellings are kept, constructors and all.
        assert_eq!(ToolError::output_handle_not_found("gone").code, Code::OutputHandleNotFound);
        assert_eq!(
            ToolError::bulk_completion_guard_failed("no").code.as_str(),
            "bulk_completion_guard_failed"
        );
        // INVALID_ARGUMENT's constructor names the field.
        let e = ToolError::invalid_argument("query", "blank");
        assert_eq!(
            (e.code.as_str(), e.details["field"].as_str()),
            ("INVALID_ARGUMENT", Some("query"))
        );
    }
}
