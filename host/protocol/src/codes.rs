//! The error codes ochre itself produces, in one place (DESIGN.md §7). A tool
//! error's `code` is stable: agents and clients match on it. Plugins may add
//! codes of their own; these are the host's, the browser's and the built-in
//! tools'. [`ALL`] lists every one with what it means.
//!
//! Four codes keep the lower-case spelling of OpenChrome's guards, which
//! clients written for OpenChrome match on: `output_handle_not_found`,
//! `bulk_completion_guard_failed`, and the task-run stop reasons
//! `intent_execution_failed` and `tool_policy_blocked`.

macro_rules! registry {
    ($( $(#[doc = $doc:literal])+ $name:ident = $value:literal $(=> $ctor:ident)?; )*) => {
        $( $(#[doc = $doc])+ pub const $name: &str = $value; )*
        /// Every code of the registry: `(code, what it means)`.
        pub const ALL: &[(&str, &str)] = &[ $( ($value, concat!($($doc),+).trim_ascii()) ),* ];

        /// A constructor per code for a tool error type with
        /// `fn new(code, message)`: `ToolError::stale_ref("…")` is
        /// `ToolError::new(codes::STALE_REF, "…")`. Used inside the type's
        /// `impl` (`ochre_protocol::ToolError`'s and the SDK's).
        #[macro_export]
        macro_rules! code_constructors {
            () => {
                $($(
                    #[doc = concat!("A `", $value, "` error (its meaning: `ochre_protocol::codes`).")]
                    pub fn $ctor(message: impl Into<String>) -> Self {
                        Self::new($value, message)
                    }
                )?)*
            };
        }
    };
}

registry! {
    // The call and its arguments.
    /// Arguments do not match the tool's schema (the field is named).
    INVALID_ARGUMENT = "INVALID_ARGUMENT";
    /// The `intent` label is empty, blank or longer than 120 chars.
    INVALID_INTENT = "INVALID_INTENT" => invalid_intent;
    /// No loaded plugin offers this tool.
    UNKNOWN_TOOL = "UNKNOWN_TOOL" => unknown_tool;
    /// The tool's capability group is excluded by `--tools-only`/`--disable-tools`.
    CAPABILITY_DISABLED = "CAPABILITY_DISABLED" => capability_disabled;
    /// The operator's policy forbids this (a file outside the allowed roots, a host interface).
    PERMISSION_DENIED = "PERMISSION_DENIED" => permission_denied;
    /// The client cancelled the call (`notifications/cancelled`).
    CANCELLED = "CANCELLED" => cancelled;
    /// The call ran past its timeout.
    TIMEOUT = "TIMEOUT" => timeout;
    /// A replay or plan lacks parameters that have no default (all are named).
    MISSING_PARAMETERS = "MISSING_PARAMETERS" => missing_parameters;
    /// The host failed (I/O and the like).
    INTERNAL = "INTERNAL" => internal;

    // Plugins.
    /// The plugin trapped (a panic, an unreachable, a bad memory access).
    PLUGIN_TRAPPED = "PLUGIN_TRAPPED" => plugin_trapped;
    /// The plugin ran past its deadline.
    PLUGIN_TIMEOUT = "PLUGIN_TIMEOUT" => plugin_timeout;
    /// The plugin tried to grow its memory past its cap.
    PLUGIN_OUT_OF_MEMORY = "PLUGIN_OUT_OF_MEMORY" => plugin_out_of_memory;
    /// The plugin returned something the host cannot use.
    PLUGIN_FAILED = "PLUGIN_FAILED" => plugin_failed;

    // Stored state.
    /// Stored state exists but is damaged (the file is named and kept).
    STATE_CORRUPT = "STATE_CORRUPT" => state_corrupt;
    /// The data dir could not be written or read.
    STORAGE_FAILED = "STORAGE_FAILED" => storage_failed;
    /// A `{{secret:NAME}}` parameter names no stored secret.
    SECRET_NOT_FOUND = "SECRET_NOT_FOUND" => secret_not_found;
    /// No output handle with that id (or it expired).
    OUTPUT_HANDLE_NOT_FOUND = "output_handle_not_found" => output_handle_not_found;
    /// No `ochre://` resource with that URI.
    RESOURCE_NOT_FOUND = "RESOURCE_NOT_FOUND" => resource_not_found;
    /// The server serves its `--max-sessions` sessions: a new one is refused at
    /// `initialize` (HTTP 503 with `Retry-After`; in the JSON-RPC error's `data`).
    SESSION_LIMIT = "SESSION_LIMIT" => session_limit;

    // The browser.
    /// No browser could be launched or reached.
    BROWSER_UNAVAILABLE = "BROWSER_UNAVAILABLE" => browser_unavailable;
    /// A CDP command failed.
    BROWSER_ERROR = "BROWSER_ERROR" => browser_error;
    /// No tab with that id.
    TAB_NOT_FOUND = "TAB_NOT_FOUND" => tab_not_found;
    /// Navigation failed or timed out.
    NAVIGATION_FAILED = "NAVIGATION_FAILED" => navigation_failed;
    /// A page answered with an HTTP error status (crawl results).
    HTTP_ERROR = "HTTP_ERROR" => http_error;
    /// The page's JavaScript threw.
    JS_ERROR = "JS_ERROR" => js_error;
    /// The document was replaced while the page operation ran (it is retried once).
    DOCUMENT_LOADING = "DOCUMENT_LOADING" => document_loading;
    /// A ref of an older page or of a removed element.
    STALE_REF = "STALE_REF" => stale_ref;
    /// A ref that was never given out on that tab.
    REF_NOT_FOUND = "REF_NOT_FOUND" => ref_not_found;
    /// No element matches the selector or description.
    ELEMENT_NOT_FOUND = "ELEMENT_NOT_FOUND" => element_not_found;
    /// The element takes no typed value (not an input, textarea, select or editable).
    ELEMENT_NOT_EDITABLE = "ELEMENT_NOT_EDITABLE" => element_not_editable;
    /// The element cannot take the event now (covered, disabled, moving, hidden); waited for it.
    ELEMENT_NOT_INTERACTABLE = "ELEMENT_NOT_INTERACTABLE" => element_not_interactable;
    /// The element does not take keyboard focus.
    ELEMENT_NOT_FOCUSABLE = "ELEMENT_NOT_FOCUSABLE" => element_not_focusable;
    /// No form field with that label or name.
    FIELD_NOT_FOUND = "FIELD_NOT_FOUND" => field_not_found;
    /// A JavaScript dialog blocks the tab (answer it with `handle_dialog`).
    DIALOG_OPEN = "DIALOG_OPEN" => dialog_open;
    /// `handle_dialog` on a tab without a dialog.
    NO_DIALOG = "NO_DIALOG" => no_dialog;
    /// A file that does not exist.
    FILE_NOT_FOUND = "FILE_NOT_FOUND" => file_not_found;
    /// The page's storage cannot be read or written (an opaque origin, storage disabled).
    STORAGE_UNAVAILABLE = "STORAGE_UNAVAILABLE" => storage_unavailable;
    /// The page's storage quota is exceeded.
    STORAGE_FULL = "STORAGE_FULL" => storage_full;

    // Recordings.
    /// A recording is already running.
    RECORDING_ACTIVE = "RECORDING_ACTIVE" => recording_active;
    /// No recording is running.
    NOT_RECORDING = "NOT_RECORDING" => not_recording;
    /// No recording with that id.
    RECORDING_NOT_FOUND = "RECORDING_NOT_FOUND" => recording_not_found;
    /// A recorded argument was not kept (a recording of an older version): record again.
    REDACTED_ARGUMENT = "REDACTED_ARGUMENT" => redacted_argument;
    /// A replayed step's recorded target is not on the page (waited for it).
    TARGET_NOT_FOUND = "TARGET_NOT_FOUND" => target_not_found;

    // Built-in tool groups.
    /// The TOTP secret configured for a domain is unusable (not base32, too short).
    INVALID_SECRET = "INVALID_SECRET" => invalid_secret;
    /// No crawl job with that id.
    JOB_NOT_FOUND = "JOB_NOT_FOUND" => job_not_found;
    /// No sitemap found for the site (robots.txt `Sitemap:` lines, `/sitemap.xml`).
    SITEMAP_NOT_FOUND = "SITEMAP_NOT_FOUND" => sitemap_not_found;
    /// A crawl job's state could not be saved.
    STATE_WRITE_FAILED = "STATE_WRITE_FAILED" => state_write_failed;
    /// No saved plan with that id.
    PLAN_NOT_FOUND = "PLAN_NOT_FOUND" => plan_not_found;
    /// A workflow's or plan's state could not be read or saved.
    STATE_ERROR = "STATE_ERROR" => state_error;
    /// No workflow is running (start one with `workflow_init`).
    WORKFLOW_NOT_FOUND = "WORKFLOW_NOT_FOUND" => workflow_not_found;
    /// No worker of that name in the workflow.
    WORKER_NOT_FOUND = "WORKER_NOT_FOUND" => worker_not_found;
    /// Workers of the workflow have not completed.
    WORKFLOW_INCOMPLETE = "WORKFLOW_INCOMPLETE" => workflow_incomplete;

    // Task runs and progress contracts.
    /// No run with that id.
    RUN_NOT_FOUND = "RUN_NOT_FOUND" => run_not_found;
    /// The run cannot go from its state to the one asked for.
    INVALID_TRANSITION = "INVALID_TRANSITION" => invalid_transition;
    /// A browser-first run cannot (or did not) use the browser (also its stop reason).
    INTENT_EXECUTION_FAILED = "intent_execution_failed" => intent_execution_failed;
    /// The intent guard blocked a call of a browser-first run (also its stop reason).
    TOOL_POLICY_BLOCKED = "tool_policy_blocked" => tool_policy_blocked;
    /// No contract with that id (or the run has none).
    CONTRACT_NOT_FOUND = "CONTRACT_NOT_FOUND" => contract_not_found;
    /// The contract's run is finished: the contract cannot change.
    CONTRACT_CLOSED = "CONTRACT_CLOSED" => contract_closed;
    /// Completion refused: the contract's criteria are not met.
    BULK_COMPLETION_GUARD_FAILED = "bulk_completion_guard_failed" => bulk_completion_guard_failed;
}

#[cfg(test)]
mod tests {
    use super::ALL;

    #[test]
    fn codes_are_unique_and_each_says_what_it_means() {
        let mut seen = std::collections::BTreeSet::new();
        for (code, meaning) in ALL {
            assert!(seen.insert(*code), "{code} twice");
            assert!(meaning.ends_with('.') || meaning.ends_with(')'), "{code}: {meaning:?}");
        }
        assert!(ALL.len() >= 40, "{}", ALL.len());
    }

    #[test]
    fn each_code_has_a_constructor_of_its_spelling() {
        use crate::ToolError;
        let e = ToolError::stale_ref("ref ax_3 is from an older page");
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            ("STALE_REF", "ref ax_3 is from an older page")
        );
        // The old lower-case spellings are kept, constructors and all.
        assert_eq!(ToolError::output_handle_not_found("gone").code, super::OUTPUT_HANDLE_NOT_FOUND);
        assert_eq!(
            ToolError::bulk_completion_guard_failed("no").code,
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
