//! The cookies of the page's site (`cookies`), as the page's URL scopes them.

use super::*;

impl BrowserManager {
    /// Cookies of the page's site: get, set, delete, clear.
    pub(super) async fn cookies(
        &self,
        page: &Page,
        a: &Cookies,
    ) -> Result<page_ops::CookiesDone, ToolError> {
        use chromiumoxide::cdp::browser_protocol::network::{
            DeleteCookiesParams, GetCookiesParams, SetCookieParams,
        };
        let url = crate::frame_url(page).await;
        let web = is_web(&url);
        if !web && a.domain.is_none() {
            return Err(ToolError::storage_unavailable(format!(
                "the tab is at {url:?}, which has no cookies; navigate to a site or pass `domain`"
            )));
        }
        let get = |page: &Page| {
            let url = url.clone();
            let page = page.clone();
            async move {
                let p: GetCookiesParams = cdp_params(json!({"urls": [url]}))?;
                let r = page.execute(p).await.map_err(|e| cdp_error("cannot read cookies", e))?;
                Ok::<_, ToolError>(r.result.cookies.clone())
            }
        };
        let action = a.action.as_str();
        match action {
            "get" => {
                let cookies = if web { get(page).await? } else { Vec::new() };
                let name = a.name.as_deref();
                let list: Vec<Value> = cookies
                    .iter()
                    .filter(|c| name.is_none_or(|n| c.name == n))
                    .map(public_cookie)
                    .collect();
                Ok(page_ops::CookiesDone { cookies: Some(list), ..Default::default() })
            }
            "set" => {
                let p = cookie_to_set(a, &url);
                let params: SetCookieParams = cdp_params(p)?;
                page.execute(params).await.map_err(|e| {
                    let refused = ToolError::invalid_argument(
                        "name",
                        format!("the browser refused the cookie (check domain, secure and sameSite): {e}"),
                    );
                    crate::with_cdp_cause(refused, &e)
                })?;
                Ok(page_ops::CookiesDone { set: a.name.clone(), ..Default::default() })
            }
            "delete" | "clear" => {
                let names: Vec<String> = if action == "delete" {
                    vec![a.name.clone().unwrap_or_default()]
                } else if web {
                    get(page).await?.into_iter().map(|c| c.name).collect()
                } else {
                    Vec::new()
                };
                for name in &names {
                    let mut p = json!({"name": name});
                    match &a.domain {
                        Some(d) => p["domain"] = json!(d),
                        None => p["url"] = json!(url),
                    }
                    if let Some(path) = &a.path {
                        p["path"] = json!(path);
                    }
                    let params: DeleteCookiesParams = cdp_params(p)?;
                    page.execute(params)
                        .await
                        .map_err(|e| cdp_error("cannot delete the cookie", e))?;
                }
                Ok(page_ops::CookiesDone { deleted: Some(names.len()), ..Default::default() })
            }
            other => Err(ToolError::invalid_argument(
                "action",
                format!("unknown cookies action {other:?}"),
            )),
        }
    }
}

/// A cookie as `cookies get` shows it.
fn public_cookie(c: &chromiumoxide::cdp::browser_protocol::network::Cookie) -> Value {
    let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.retain(|k, _| {
            matches!(
                k.as_str(),
                "name"
                    | "value"
                    | "domain"
                    | "path"
                    | "expires"
                    | "httpOnly"
                    | "secure"
                    | "sameSite"
                    | "session"
            )
        });
    }
    v
}

/// `Network.setCookie`'s params for `cookies set` on a page at `url`.
fn cookie_to_set(a: &Cookies, url: &str) -> Value {
    let mut p = json!({"name": a.name, "value": a.value.as_deref().unwrap_or_default()});
    match &a.domain {
        Some(d) => {
            p["domain"] = json!(d);
            p["path"] = json!(a.path.as_deref().unwrap_or("/"));
        }
        None => {
            p["url"] = json!(url);
            if let Some(path) = &a.path {
                p["path"] = json!(path);
            }
        }
    }
    for (k, b) in [("secure", a.secure), ("httpOnly", a.http_only)] {
        if let Some(b) = b {
            p[k] = json!(b);
        }
    }
    if let Some(ss) = &a.same_site {
        p["sameSite"] = json!(ss);
    }
    if let Some(e) = a.expires {
        p["expires"] = json!(e);
    }
    p
}
