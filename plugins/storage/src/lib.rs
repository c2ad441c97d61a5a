//! ochre's `storage` tool group: a tab's cookies (`cookies`) and its local and
//! session storage (`storage`), with OpenChrome's names and arguments. Cookie and
//! storage values are redacted from the journal and trace.

use ochre_sdk::browser::{self, ops};
use ochre_sdk::{Output, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// `cookies` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CookieArgs {
    /// get, set, delete or clear.
    #[schemars(regex(pattern = r"^(get|set|delete|clear)$"))]
    action: String,
    /// For set, delete.
    #[schemars(length(min = 1, max = 4096))]
    name: Option<String>,
    /// For set.
    #[schemars(length(max = 4096))]
    value: Option<String>,
    /// Default: the page's host.
    #[schemars(length(min = 1, max = 253))]
    domain: Option<String>,
    /// Default /.
    #[schemars(length(min = 1, max = 4096))]
    path: Option<String>,
    secure: Option<bool>,
    http_only: Option<bool>,
    #[schemars(regex(pattern = r"^(Strict|Lax|None)$"))]
    same_site: Option<String>,
    /// Unix s.
    expires: Option<f64>,
    tab_id: Option<String>,
}

/// Get, set, delete or clear the page's site's cookies (httpOnly too).
#[ochre_sdk::tool(name = "cookies", destructive, scope = Browser, secret = "value")]
fn cookies(a: CookieArgs) -> Result<Output, ToolError> {
    let needs_name = matches!(a.action.as_str(), "set" | "delete");
    if needs_name && a.name.as_deref().is_none_or(|n| n.trim().is_empty()) {
        return Err(ToolError::invalid_argument(
            "name",
            format!("cookies {}: `name` is required", a.action),
        ));
    }
    if a.action == "set" && a.value.is_none() {
        return Err(ToolError::invalid_argument("value", "cookies set: `value` is required"));
    }
    if let Some(n) = &a.name
        && n.contains([';', '=', ' ', ',', '\t', '\n', '\r'])
    {
        return Err(ToolError::invalid_argument(
            "name",
            "a cookie name cannot contain ; = , or whitespace",
        ));
    }
    let cookies = ops::Cookies {
        action: a.action.clone(),
        name: a.name,
        value: a.value,
        domain: a.domain,
        path: a.path,
        secure: a.secure,
        http_only: a.http_only,
        same_site: a.same_site,
        expires: a.expires,
    };
    let r = browser::run(a.tab_id.as_deref(), &cookies, 30_000)?;
    let summary = match a.action.as_str() {
        "get" => format!("{} cookies", r.cookies.as_ref().map_or(0, Vec::len)),
        other => format!("{other} done"),
    };
    Ok(Output::json(&r)?.with_summary(summary))
}

/// `storage` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StorageArgs {
    /// local or session.
    #[schemars(regex(pattern = r"^(local|session)$"))]
    storage_type: String,
    /// get, set, remove, clear or keys.
    #[schemars(regex(pattern = r"^(get|set|remove|clear|keys)$"))]
    action: String,
    /// Omit with get for all items.
    #[schemars(length(min = 1, max = 4096))]
    key: Option<String>,
    /// For set.
    #[schemars(length(max = 1000000))]
    value: Option<String>,
    tab_id: Option<String>,
}

/// Read or change the page's localStorage or sessionStorage.
#[ochre_sdk::tool(name = "storage", destructive, scope = Browser, secret = "value")]
fn storage(a: StorageArgs) -> Result<Output, ToolError> {
    // (The schema's patterns hold both to these names.)
    let kind = ops::StorageKind::parse(&a.storage_type)
        .ok_or_else(|| ToolError::invalid_argument("storageType", "local or session"))?;
    let action = ops::StorageAction::parse(&a.action)
        .ok_or_else(|| ToolError::invalid_argument("action", "get, set, remove, clear or keys"))?;
    use ops::StorageAction::{Remove, Set};
    if matches!(action, Set | Remove) && a.key.is_none() {
        return Err(ToolError::invalid_argument(
            "key",
            format!("storage {action}: `key` is required"),
        ));
    }
    if action == Set && a.value.is_none() {
        return Err(ToolError::invalid_argument("value", "storage set: `value` is required"));
    }
    let storage = ops::Storage { kind, action, key: a.key, value: a.value };
    let r = browser::run(a.tab_id.as_deref(), &storage, 30_000)?;
    let summary = format!("{kind} {action} done");
    Ok(Output::json(&r)?.with_summary(summary))
}

ochre_sdk::register_plugin! {
    name: "storage",
    group: "storage",
    interfaces: [browser],
    tools: [Cookies, Storage],
}
