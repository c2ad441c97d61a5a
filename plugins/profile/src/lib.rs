//! ochre's `profile` tool group: which browser profile the server uses
//! (`oc_profile_status`) and which profiles its user-data-dir holds
//! (`list_profiles`). Neither launches the browser.

use ochre_sdk::browser::{self, ops};
use ochre_sdk::{Output, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// Which browser ochre drives: managed or attached, its profile dir, temporary or not,
/// running or not.
#[ochre_sdk::tool(name = "oc_profile_status", read_only, scope = Local)]
fn profile_status(_: NoArgs) -> Result<Output, ToolError> {
    let r = browser::run(None, &ops::ProfileStatus {}, 5_000)?;
    let summary = format!("{} {}", r.mode, if r.persistent { "persistent" } else { "temporary" });
    Ok(Output::json(&r)?.with_summary(summary))
}

/// List the Chrome profiles (dir and name) in the user-data-dir ochre uses.
#[ochre_sdk::tool(name = "list_profiles", read_only, scope = Local)]
fn list_profiles(_: NoArgs) -> Result<Output, ToolError> {
    let r = browser::run(None, &ops::ListProfiles {}, 5_000)?;
    let n = r.profiles.len();
    Ok(Output::json(&r)?.with_summary(format!("{n} profiles")))
}

ochre_sdk::register_plugin! {
    name: "profile",
    group: "profile",
    interfaces: [browser],
    tools: [ProfileStatus, ListProfiles],
}
