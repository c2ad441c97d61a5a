//! Who may reach ochre's HTTP pages: the `Host` and `Origin` checks against
//! DNS rebinding and other sites, shared by `/mcp`, `/health` and the pages
//! for people.

/// The host name of `url` (`https://a.example:8443/x` -> `a.example`).
pub(crate) fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let name = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => authority.rsplit_once(':').map_or(authority, |(n, _)| n),
    };
    (!name.is_empty()).then(|| name.to_owned())
}

/// Whether the request's `Host` (without its port) is one of `hosts`.
pub(crate) fn host_allowed(headers: &axum::http::HeaderMap, hosts: &[String]) -> bool {
    let Some(h) = headers.get(axum::http::header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let name = match h.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => match h.rsplit_once(':') {
            Some((n, port)) if port.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => h,
        },
    };
    hosts.iter().any(|x| x.eq_ignore_ascii_case(name))
}

/// Whether the request has no `Origin` or one of `origins` (`scheme://host:*`
/// allows any port).
pub(crate) fn origin_allowed(headers: &axum::http::HeaderMap, origins: &[String]) -> bool {
    let Some(o) = headers.get(axum::http::header::ORIGIN) else {
        return true;
    };
    let Ok(o) = o.to_str() else {
        return false;
    };
    origins.iter().any(|pat| match pat.strip_suffix(":*") {
        Some(prefix) => {
            o.eq_ignore_ascii_case(prefix)
                || o.get(..prefix.len()).is_some_and(|p| p.eq_ignore_ascii_case(prefix))
                    && o[prefix.len()..]
                        .strip_prefix(':')
                        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        }
        None => o.eq_ignore_ascii_case(pat),
    })
}
