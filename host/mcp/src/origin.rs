//! Who may reach ochre's HTTP pages: the `Host` and `Origin` checks against
//! DNS rebinding and other sites, shared by `/mcp`, `/health` and the pages
//! for people. Hosts and origins are compared parsed
//! ([`ochre_protocol::site`]), never as text.

use axum::http::{HeaderMap, header};
use ochre_protocol::site::{Host, Origin, host_header};

/// The host of `url` (`https://a.example:8443/x` -> `a.example`).
pub(crate) fn url_host(url: &str) -> Option<String> {
    Origin::parse(url).ok().map(|o| o.host.to_string())
}

/// The request's `Host`, parsed (its port apart).
fn request_host(headers: &HeaderMap) -> Option<(Host, Option<u16>)> {
    headers.get(header::HOST).and_then(|v| v.to_str().ok()).and_then(host_header)
}

/// Whether the request's `Host` (its port aside) is one of `hosts`.
pub(crate) fn host_allowed(headers: &HeaderMap, hosts: &[String]) -> bool {
    let Some((host, _)) = request_host(headers) else { return false };
    hosts.iter().any(|x| Host::parse(x).is_ok_and(|h| h == host))
}

/// Whether the request has no `Origin` or one of `origins` (`scheme://host:*`
/// allows any port).
pub(crate) fn origin_allowed(headers: &HeaderMap, origins: &[String]) -> bool {
    let Some(o) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Some(o) = o.to_str().ok().and_then(|o| Origin::parse(o).ok()) else {
        return false;
    };
    origins.iter().any(|pat| match pat.strip_suffix(":*") {
        Some(prefix) => {
            Origin::parse(prefix).is_ok_and(|p| p.scheme == o.scheme && p.host == o.host)
        }
        None => Origin::parse(pat).is_ok_and(|p| p == o),
    })
}

/// Whether the request's `Origin`, if it has one, is the page's own: the
/// host and port its `Host` names.
pub(crate) fn same_origin(headers: &HeaderMap) -> bool {
    let Some(o) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Some(o) = o.to_str().ok().and_then(|o| Origin::parse(o).ok()) else {
        return false;
    };
    request_host(headers).is_some_and(|(host, port)| {
        let default = if o.scheme == "https" { 443 } else { 80 };
        host == o.host && port.unwrap_or(default) == o.port
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().expect("a header value"));
        }
        h
    }

    #[test]
    fn hosts_and_origins_are_compared_parsed() {
        let hosts = ["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
        for ok in ["localhost:3000", "LOCALHOST.:3000", "127.0.0.1", "127.1:8080", "[::1]:3000"] {
            assert!(host_allowed(&headers(&[("host", ok)]), &hosts), "{ok}");
        }
        for bad in ["evil.example", "localhost.evil.example", "127.0.0.2", "", "a b"] {
            assert!(!host_allowed(&headers(&[("host", bad)]), &hosts), "{bad:?}");
        }
        assert!(!host_allowed(&HeaderMap::new(), &hosts), "no Host");
        let origins = ["http://localhost:*".to_owned(), "https://app.example".to_owned()];
        for ok in ["http://localhost:3000", "http://LOCALHOST.", "https://app.example:443"] {
            assert!(origin_allowed(&headers(&[("origin", ok)]), &origins), "{ok}");
        }
        for bad in [
            "null",
            "https://localhost:3000",
            "http://app.example",
            "https://app.example:8443",
            "http://localhost.evil.example:3000",
        ] {
            assert!(!origin_allowed(&headers(&[("origin", bad)]), &origins), "{bad}");
        }
        assert!(origin_allowed(&HeaderMap::new(), &origins), "no Origin");
        let same = |o: &str, h: &str| same_origin(&headers(&[("origin", o), ("host", h)]));
        assert!(same("http://127.0.0.1:4000", "127.0.0.1:4000"));
        assert!(same("http://localhost", "LOCALHOST."));
        assert!(!same("http://127.0.0.1:4001", "127.0.0.1:4000"));
        assert!(!same("http://evil.example:4000", "127.0.0.1:4000"));
        assert_eq!(url_host("http://[::1]:3000/x").as_deref(), Some("[::1]"));
    }
}
