//! The named-login tools: save the session's login, sign the session in with
//! one, list them. Values never travel: the answers name origins and cookies.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{HostTools, Made, Offer};
use crate::browser::HostBrowser;
use crate::error::ToolError;
use crate::stores::logins::LoginSummary;
use crate::tool::{ToolOutput, json_output};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct LoginName {
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$"))]
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct NoArgs {}

pub(super) fn add(made: &mut Made) {
    made.add(
        "oc_login_save",
        "Save this session's login (its cookies and its tabs' localStorage) under a name, sealed.",
        Offer::control(false),
        |host, args: LoginName, _| async move {
            crate::stores::logins::LoginStore::check_name(&args.name)?;
            let state = host.browser.storage_state().await?;
            let summary = host.logins.save(&args.name, &state)?;
            Ok(told(&summary, "saved"))
        },
    );
    made.add(
        "oc_login_load",
        "Sign this session in with a saved login: its cookies and localStorage, no login request.",
        Offer::control(false),
        |host, args: LoginName, _| async move {
            let (summary, state) = host.logins.open(&args.name)?;
            host.browser.use_login(Some(state)).await?;
            Ok(told(&summary, "signed in with"))
        },
    );
    made.add(
        "oc_login_list",
        "The saved logins: name, origins, cookie names.",
        Offer::control(true),
        |host, _: NoArgs, _| async move { list(&host) },
    );
}

fn list(host: &HostTools) -> Result<ToolOutput, ToolError> {
    let all = host.logins.list()?;
    let text = format!("{} saved logins", all.len());
    Ok(json_output(json!({"logins": all}), text))
}

/// What was done with a login, and what it holds (no value).
fn told(summary: &LoginSummary, did: &str) -> ToolOutput {
    let origins = if summary.origins.is_empty() {
        String::new()
    } else {
        format!(" for {}", summary.origins.join(", "))
    };
    let idb = match summary.indexed_db.len() {
        0 => String::new(),
        n => format!(", {n} IndexedDB databases"),
    };
    let skipped = match summary.indexed_db_skipped {
        0 => String::new(),
        n => format!(" ({n} IndexedDB records holding a Blob not saved)"),
    };
    let text = format!(
        "{did} login {}: {} cookies, {} storage entries{idb}{origins}{skipped}",
        summary.name,
        summary.cookies.len(),
        summary.storage_entries
    );
    json_output(json!(summary), text)
}
