//! A tab's captured network as HAR 1.2 (`network_capture` `har`; the HAR of an
//! evidence bundle): requests and responses with their headers, cookies,
//! timings and bodies (bounded), each hop of a redirect, a websocket's
//! messages as Chrome writes them (`_webSocketMessages`).
//!
//! Masked, before the host's own scrubbing of its known secrets: the values
//! of cookies (every value a `Cookie` or `Set-Cookie` header carried,
//! wherever it shows again), of `Authorization` and of headers, query keys
//! and body fields whose names say they hold a secret (`password`, `token`,
//! `session`, …): such a value is masked wherever it shows in the HAR, in a
//! URL, a body or a message, also as a form or a URL encodes it.

use std::collections::BTreeSet;
use std::time::Instant;

use serde_json::{Map, Value, json};

use ochre_protocol::tool::{is_secret_query_key, is_sensitive_name};

/// What a masked value is shown as (the host's mark for a secret).
pub(super) const MASK: &str = "•••";

/// Values shorter than this are masked where their name says so, but not
/// looked for elsewhere (they would mask ordinary words): a field named for
/// a secret (`password`), and a cookie's or a header's value (`theme=dark`,
/// `Access-…: true` are no secrets to look for).
const MIN_SECRET_CHARS: usize = 4;
const MIN_COOKIE_CHARS: usize = 8;

/// One captured request (one hop of a redirect chain; a websocket with its
/// messages), as `network_capture` keeps it. The fields after `from_cache`
/// are for the HAR.
#[derive(Debug, Default, Clone)]
pub(super) struct Entry {
    pub(super) seq: u64,
    pub(super) url: Option<String>,
    pub(super) method: Option<String>,
    pub(super) resource_type: Option<String>,
    pub(super) started: Option<Instant>,
    pub(super) status: Option<i64>,
    pub(super) mime_type: Option<String>,
    pub(super) duration_ms: Option<u64>,
    pub(super) encoded_bytes: Option<f64>,
    pub(super) failed: Option<String>,
    pub(super) from_cache: bool,
    /// When it was sent: the wall clock (seconds since the epoch) and the
    /// browser's monotonic clock (seconds), which its other times use.
    pub(super) wall: Option<f64>,
    pub(super) mono: Option<f64>,
    /// When it ended (the monotonic clock).
    pub(super) mono_end: Option<f64>,
    /// The headers sent: as the page asked, then as they went (with cookies).
    pub(super) request_headers: Option<Value>,
    pub(super) request_headers_sent: Option<Value>,
    /// The body sent (at most `POST_CAP` bytes; `post_bytes` is its length).
    pub(super) post: Option<Vec<u8>>,
    pub(super) post_bytes: usize,
    pub(super) status_text: Option<String>,
    /// The headers received: as the page sees them, then as they came.
    pub(super) response_headers: Option<Value>,
    pub(super) response_headers_raw: Option<Value>,
    pub(super) protocol: Option<String>,
    pub(super) remote: Option<String>,
    pub(super) connection: Option<String>,
    pub(super) timing: Option<Timing>,
    /// The URL its response said it was for.
    pub(super) response_url: Option<String>,
    /// A hop of a redirect chain: where it sent the browser.
    pub(super) redirect_url: Option<String>,
    /// A websocket's messages (at most `WS_CAP`; more are counted).
    pub(super) messages: Vec<WsMessage>,
    pub(super) messages_dropped: u64,
    /// Its response's body, read as it finished (a document's, a fetch's, an
    /// XHR's: the page may not keep it past the next navigation).
    pub(super) body: Option<(String, bool)>,
}

/// A request's phases as Chromium times them: milliseconds after
/// `request_time` (seconds, the monotonic clock); -1 where there was none.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Timing {
    pub(super) request_time: f64,
    pub(super) dns: (f64, f64),
    pub(super) connect: (f64, f64),
    pub(super) ssl: (f64, f64),
    pub(super) send: (f64, f64),
    pub(super) headers_end: f64,
}

/// One websocket message.
#[derive(Debug, Clone)]
pub(super) struct WsMessage {
    pub(super) sent: bool,
    /// The monotonic clock, in seconds.
    pub(super) mono: f64,
    pub(super) opcode: f64,
    pub(super) data: String,
}

impl Entry {
    /// Whether a body may be read for it: not a redirect's hop, not a
    /// websocket.
    pub(super) fn has_body(&self) -> bool {
        self.redirect_url.is_none() && self.resource_type.as_deref() != Some("WebSocket")
    }
}

/// A response body read for the HAR.
pub(super) struct Body {
    pub(super) text: String,
    pub(super) base64: bool,
}

/// The page a HAR's entries belong to (a tab).
pub(super) struct HarPage {
    pub(super) id: String,
    pub(super) title: String,
    /// When its first request was sent (seconds since the epoch).
    pub(super) started: f64,
    /// What a reader should know of it (its `comment`).
    pub(super) comment: Option<String>,
}

/// A HAR 1.2 log of `entries` (each: its key in the capture, the entry, its
/// page's id, and its body if one was read), its secrets masked; and how many
/// distinct values were masked.
pub(super) fn har(
    pages: &[HarPage],
    entries: &[(String, Entry, String, Option<Body>)],
    scrub: &dyn Fn(&str) -> String,
) -> (Value, usize) {
    let mut secrets = BTreeSet::new();
    let first = pages.iter().map(|p| p.started).fold(f64::INFINITY, f64::min);
    let first = if first.is_finite() { first } else { 0.0 };
    let mut out: Vec<(f64, u64, Value)> = entries
        .iter()
        .filter(|(_, e, _, _)| e.url.is_some())
        .map(|(_, e, page, body)| {
            // (One whose sending went unseen: at its page's start.)
            let at = e.wall.unwrap_or(first);
            (at, e.seq, entry(e, at, page, body, &mut secrets))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let pages: Vec<Value> = pages
        .iter()
        .map(|p| {
            let mut page = json!({
                "startedDateTime": date(p.started),
                "id": p.id,
                "title": p.title,
                "pageTimings": {"onContentLoad": -1, "onLoad": -1},
            });
            if let Some(c) = &p.comment {
                page["comment"] = json!(c);
            }
            page
        })
        .collect();
    let mut log = json!({"log": {
        "version": "1.2",
        "creator": {"name": "ochre", "version": env!("CARGO_PKG_VERSION")},
        "pages": pages,
        "entries": out.into_iter().map(|(_, _, v)| v).collect::<Vec<_>>(),
    }});
    let forms = secret_forms(&secrets);
    mask_base64_bodies(&mut log, &forms, scrub);
    mask_strings(&mut log, &forms, scrub);
    (log, secrets.len())
}

/// The bodies the log holds in base64 (binary, or text the browser gave so):
/// each decoded and masked as text is, then encoded again; one whose bytes
/// are not text but hold a secret is left out, and its `comment` says so.
fn mask_base64_bodies(log: &mut Value, forms: &[String], scrub: &dyn Fn(&str) -> String) {
    use data_encoding::BASE64;
    let Some(entries) = log["log"]["entries"].as_array_mut() else { return };
    for e in entries {
        let content = &mut e["response"]["content"];
        if content["encoding"] != "base64" {
            continue;
        }
        let Some(raw) = content["text"].as_str().and_then(|t| BASE64.decode(t.as_bytes()).ok())
        else {
            continue;
        };
        let (text, binary) = match String::from_utf8(raw) {
            Ok(t) => (t, false),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
        };
        let mut masked = Value::String(text.clone());
        mask_strings(&mut masked, forms, scrub);
        match masked.as_str() {
            Some(m) if m == text => {}
            Some(m) if !binary => content["text"] = json!(BASE64.encode(m.as_bytes())),
            _ => {
                content["text"] = json!("");
                content["comment"] = json!("left out: these bytes held a secret");
            }
        }
    }
}

/// One HAR entry.
fn entry(
    e: &Entry,
    at: f64,
    page: &str,
    body: &Option<Body>,
    secrets: &mut BTreeSet<String>,
) -> Value {
    let url = e.url.clone().unwrap_or_default();
    let version = http_version(e.protocol.as_deref());
    let req_headers = merged(e.request_headers.as_ref(), e.request_headers_sent.as_ref());
    let resp_headers = merged(e.response_headers.as_ref(), e.response_headers_raw.as_ref());
    let request_cookies = cookies_sent(&req_headers, secrets);
    let response_cookies = cookies_set(&resp_headers, secrets);
    let query = query_string(&url, secrets);
    let mut request = json!({
        "method": e.method.clone().unwrap_or_else(|| "GET".into()),
        "url": url,
        "httpVersion": version,
        "cookies": request_cookies,
        "headers": headers(&req_headers, secrets),
        "queryString": query,
        "headersSize": -1,
        "bodySize": e.post_bytes,
    });
    if let Some(post) = &e.post {
        let mime = header(&req_headers, "content-type").unwrap_or_default();
        request["postData"] = post_data(post, e.post_bytes, &mime, secrets);
    }
    let status = if e.failed.is_some() { 0 } else { e.status.unwrap_or(0) };
    let mut content = json!({
        "size": body.as_ref().map_or(0, |b| b.text.len()),
        "mimeType": e.mime_type.clone().unwrap_or_else(|| "x-unknown".into()),
    });
    if let Some(b) = body {
        content["text"] = json!(b.text);
        if b.base64 {
            content["encoding"] = json!("base64");
        }
    }
    let mut response = json!({
        "status": status,
        "statusText": e.status_text.clone().unwrap_or_default(),
        "httpVersion": version,
        "cookies": response_cookies,
        "headers": headers(&resp_headers, secrets),
        "content": content,
        "redirectURL": e.redirect_url.clone().unwrap_or_default(),
        "headersSize": -1,
        "bodySize": -1,
    });
    if let Some(n) = e.encoded_bytes {
        response["_transferSize"] = json!(n.max(0.0) as u64);
    }
    if let Some(f) = &e.failed {
        response["_error"] = json!(f);
    }
    let (timings, time) = timings(e);
    let mut v = json!({
        "pageref": page,
        "startedDateTime": date(at),
        "time": time,
        "request": request,
        "response": response,
        "cache": {},
        "timings": timings,
        "_resourceType": e.resource_type.as_deref().unwrap_or("other").to_ascii_lowercase(),
    });
    if let Some(ip) = &e.remote {
        v["serverIPAddress"] = json!(ip);
    }
    if let Some(c) = &e.connection {
        v["connection"] = json!(c);
    }
    if e.from_cache {
        v["_fromCache"] = json!("disk");
    }
    if !e.messages.is_empty() || e.resource_type.as_deref() == Some("WebSocket") {
        // Their times: the wall clock, from the handshake's two clocks.
        let offset = e.wall.zip(e.mono).map_or(0.0, |(w, m)| w - m);
        // In time order: sent and received messages are reported on streams
        // of their own, and may be kept out of order.
        let mut kept: Vec<&WsMessage> = e.messages.iter().collect();
        kept.sort_by(|a, b| a.mono.total_cmp(&b.mono));
        let messages: Vec<Value> = kept
            .into_iter()
            .map(|m| {
                json!({
                    "type": if m.sent { "send" } else { "receive" },
                    "time": m.mono + offset,
                    "opcode": m.opcode,
                    "data": m.data,
                })
            })
            .collect();
        v["_webSocketMessages"] = json!(messages);
        if e.messages_dropped > 0 {
            v["_webSocketMessagesDropped"] = json!(e.messages_dropped);
        }
    }
    v
}

/// `seconds` since the epoch as HAR writes a date (RFC 3339, milliseconds).
fn date(seconds: f64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(seconds.max(0.0));
    humantime::format_rfc3339_millis(at).to_string()
}

fn http_version(protocol: Option<&str>) -> String {
    match protocol.map(str::to_ascii_lowercase).as_deref() {
        Some("h2") => "HTTP/2".into(),
        Some("h3" | "quic") => "HTTP/3".into(),
        Some(p) if p.starts_with("http/") => p.to_ascii_uppercase(),
        Some(p) => p.to_owned(),
        None => String::new(),
    }
}

/// HAR's timings of `e` and their sum (`time`): from Chromium's phases when
/// it timed them, else the whole as the wait.
fn timings(e: &Entry) -> (Value, f64) {
    let total = match (e.mono, e.mono_end) {
        (Some(a), Some(b)) if b >= a => (b - a) * 1000.0,
        _ => e.duration_ms.map_or(0.0, |d| d as f64),
    };
    let Some(t) = e.timing else {
        let t = json!({"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": round(total),
            "receive": 0, "ssl": -1});
        return (t, round(total));
    };
    let Timing { request_time, dns, connect, ssl, send, headers_end } = t;
    let span = |(a, b): (f64, f64)| if a >= 0.0 && b >= a { b - a } else { -1.0 };
    let dns = span(dns);
    let connect = span(connect);
    let ssl = span(ssl);
    let sent = span(send).max(0.0);
    let wait = (headers_end - send.1).max(0.0);
    let end = e.mono_end.map_or(headers_end, |m| (m - request_time) * 1000.0);
    let receive = (end - headers_end).max(0.0);
    let phases: f64 = [dns, connect, sent, wait, receive].iter().filter(|x| **x >= 0.0).sum();
    // Blocked: the rest, from when it was asked for (queued, stalled, the
    // gaps between phases).
    let blocked = if e.mono.is_some() && e.mono_end.is_some() {
        (total - phases).max(0.0)
    } else {
        [dns_start(&t), 0.0].into_iter().fold(0.0, f64::max)
    };
    let t = json!({
        "blocked": round(blocked), "dns": round(dns), "connect": round(connect),
        "send": round(sent), "wait": round(wait), "receive": round(receive), "ssl": round(ssl),
    });
    (t, round(blocked + phases))
}

/// When the first phase of `t` began (ms after its request time).
fn dns_start(t: &Timing) -> f64 {
    [t.dns.0, t.connect.0, t.send.0].into_iter().find(|x| *x >= 0.0).unwrap_or(0.0)
}

/// A time in milliseconds, to three decimals (-1 stays -1).
fn round(ms: f64) -> f64 {
    if ms < 0.0 { -1.0 } else { (ms * 1000.0).round() / 1000.0 }
}

/// A request's or a response's headers: as the page saw them, with those
/// that only went on the wire (cookies) added.
fn merged(seen: Option<&Value>, wire: Option<&Value>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, h) in [seen, wire].into_iter().enumerate() {
        let Some(map) = h.and_then(Value::as_object) else { continue };
        for (name, value) in map {
            if i == 1 && out.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                continue;
            }
            let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            out.push((name.clone(), value));
        }
    }
    out
}

fn header(headers: &[(String, String)], name: &str) -> Option<String> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone())
}

/// Whether a header's value is a secret as a whole (not a CORS header's:
/// `Access-Control-Allow-Credentials` names a policy).
fn secret_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !lower.starts_with("access-control-")
        && (is_sensitive_name(&lower) || lower.contains("session") || lower.contains("auth"))
}

/// HAR's headers, masked: a cookie's value, a credential (its scheme kept:
/// `Bearer •••`), the value of a header named for a secret. Chromium joins
/// a repeated header with line breaks; HAR lists each.
fn headers(headers: &[(String, String)], secrets: &mut BTreeSet<String>) -> Vec<Value> {
    let mut out = Vec::new();
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        for value in value.split('\n') {
            let shown = match lower.as_str() {
                "cookie" => value
                    .split(';')
                    .map(|c| match c.trim().split_once('=') {
                        Some((n, v)) => {
                            learn_long(secrets, v);
                            format!("{n}={MASK}")
                        }
                        None => c.trim().to_owned(),
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
                "set-cookie" => {
                    let (pair, attrs) = value.split_once(';').unwrap_or((value, ""));
                    let (n, v) = pair.split_once('=').unwrap_or((pair, ""));
                    learn_long(secrets, v.trim());
                    let attrs = if attrs.is_empty() { String::new() } else { format!(";{attrs}") };
                    format!("{}={MASK}{attrs}", n.trim())
                }
                _ if secret_header(&lower) => match value.split_once(' ') {
                    Some((scheme, cred)) if lower.contains("authorization") => {
                        learn_long(secrets, cred.trim());
                        format!("{scheme} {MASK}")
                    }
                    _ => {
                        learn_long(secrets, value.trim());
                        MASK.to_owned()
                    }
                },
                _ => value.to_owned(),
            };
            out.push(json!({"name": name, "value": shown}));
        }
    }
    out
}

/// The cookies a request sent (from its `Cookie` header), their values masked.
fn cookies_sent(headers: &[(String, String)], secrets: &mut BTreeSet<String>) -> Vec<Value> {
    let Some(h) = header(headers, "cookie") else { return Vec::new() };
    h.split(';')
        .filter_map(|c| c.trim().split_once('='))
        .map(|(n, v)| {
            learn_long(secrets, v);
            json!({"name": n, "value": MASK})
        })
        .collect()
}

/// The cookies a response set (each `Set-Cookie`), their values masked.
fn cookies_set(headers: &[(String, String)], secrets: &mut BTreeSet<String>) -> Vec<Value> {
    let mut out = Vec::new();
    for (_, value) in headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie")) {
        for line in value.split('\n') {
            let mut parts = line.split(';');
            let Some((n, v)) = parts.next().and_then(|p| p.split_once('=')) else { continue };
            learn_long(secrets, v.trim());
            let mut c = json!({"name": n.trim(), "value": MASK});
            for attr in parts {
                let (k, v) = attr.split_once('=').unwrap_or((attr, ""));
                match k.trim().to_ascii_lowercase().as_str() {
                    "path" => c["path"] = json!(v.trim()),
                    "domain" => c["domain"] = json!(v.trim()),
                    "expires" => c["expires"] = json!(v.trim()),
                    "httponly" => c["httpOnly"] = json!(true),
                    "secure" => c["secure"] = json!(true),
                    "samesite" => c["sameSite"] = json!(v.trim()),
                    _ => {}
                }
            }
            out.push(c);
        }
    }
    out
}

/// A URL's query as HAR lists it; a value under a secret's key masked.
fn query_string(url: &str, secrets: &mut BTreeSet<String>) -> Vec<Value> {
    let Ok(u) = url::Url::parse(url) else { return Vec::new() };
    u.query_pairs()
        .map(|(k, v)| {
            let v = if is_secret_query_key(&k) {
                learn(secrets, &v);
                MASK.to_owned()
            } else {
                v.into_owned()
            };
            json!({"name": k, "value": v})
        })
        .collect()
}

/// A request's body as HAR writes it: a form's fields (`params`) or the text,
/// each field named for a secret masked (in a form, JSON or a multipart
/// body), and with it every place its value shows.
fn post_data(body: &[u8], bytes: usize, mime: &str, secrets: &mut BTreeSet<String>) -> Value {
    let text = String::from_utf8_lossy(body).into_owned();
    let lower = mime.to_ascii_lowercase();
    let mut v = json!({"mimeType": mime});
    if lower.starts_with("application/x-www-form-urlencoded") {
        let mut params = Vec::new();
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        for (k, val) in url::form_urlencoded::parse(body) {
            let val = if is_sensitive_name(&k) {
                learn(secrets, &val);
                MASK.into()
            } else {
                val
            };
            form.append_pair(&k, &val);
            params.push(json!({"name": k, "value": val}));
        }
        v["params"] = json!(params);
        v["text"] = json!(form.finish());
    } else if lower.contains("json")
        && let Ok(mut parsed) = serde_json::from_slice::<Value>(body)
    {
        mask_fields(&mut parsed, secrets);
        v["text"] = json!(parsed.to_string());
    } else {
        if lower.starts_with("multipart/form-data") {
            multipart_secrets(&text, secrets);
        }
        v["text"] = json!(text);
    }
    if body.len() < bytes {
        v["_truncated"] = json!(bytes);
    }
    v
}

/// Mask, in place, the values of fields named for a secret (any depth).
fn mask_fields(v: &mut Value, secrets: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if is_sensitive_name(k) {
                    secret_values(val, secrets);
                    *val = json!(MASK);
                } else {
                    mask_fields(val, secrets);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| mask_fields(i, secrets)),
        _ => {}
    }
}

fn secret_values(v: &Value, secrets: &mut BTreeSet<String>) {
    match v {
        Value::String(s) => learn(secrets, s),
        Value::Number(n) => learn(secrets, &n.to_string()),
        Value::Array(items) => items.iter().for_each(|i| secret_values(i, secrets)),
        Value::Object(map) => map.values().for_each(|i| secret_values(i, secrets)),
        _ => {}
    }
}

/// The values of a multipart body's parts named for a secret.
fn multipart_secrets(text: &str, secrets: &mut BTreeSet<String>) {
    for part in text.split("Content-Disposition:").skip(1) {
        let Some(at) = part.find("name=\"") else { continue };
        let name = &part[at + 6..];
        let Some(end) = name.find('"') else { continue };
        if !is_sensitive_name(&name[..end]) {
            continue;
        }
        if let Some(start) = part.find("\r\n\r\n") {
            let value = &part[start + 4..];
            let value = value.split("\r\n--").next().unwrap_or(value);
            learn(secrets, value);
        }
    }
}

fn learn(secrets: &mut BTreeSet<String>, value: &str) {
    learn_at(secrets, value, MIN_SECRET_CHARS);
}

/// A cookie's or a header's value: looked for elsewhere when it is long
/// enough to be an id or a token.
fn learn_long(secrets: &mut BTreeSet<String>, value: &str) {
    learn_at(secrets, value, MIN_COOKIE_CHARS);
}

fn learn_at(secrets: &mut BTreeSet<String>, value: &str, min: usize) {
    if value.chars().count() >= min {
        secrets.insert(value.to_owned());
    }
}

/// Each secret as it may be written: itself, as a form encodes it (`+` for a
/// space), as a URL's path or query escapes it (`%20`), inside JSON quotes;
/// longest first, so that one holding another is masked whole.
fn secret_forms(secrets: &BTreeSet<String>) -> Vec<String> {
    let mut forms = BTreeSet::new();
    for s in secrets {
        forms.insert(s.clone());
        let form: String = url::form_urlencoded::byte_serialize(s.as_bytes()).collect();
        forms.insert(form.clone());
        forms.insert(form.replace('+', "%20"));
        let quoted = serde_json::to_string(s).unwrap_or_default();
        forms.insert(quoted.trim_matches('"').to_owned());
    }
    let mut forms: Vec<String> =
        forms.into_iter().filter(|f| f.chars().count() >= MIN_SECRET_CHARS).collect();
    forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    forms
}

/// Every string of `v` with each of `forms` masked, then scrubbed by the
/// host (its known secrets).
fn mask_strings(v: &mut Value, forms: &[String], scrub: &dyn Fn(&str) -> String) {
    match v {
        Value::String(s) => {
            let mut out = std::borrow::Cow::Borrowed(s.as_str());
            for f in forms {
                if out.contains(f.as_str()) {
                    out = std::borrow::Cow::Owned(out.replace(f.as_str(), MASK));
                }
            }
            let scrubbed = scrub(&out);
            if scrubbed != *s {
                *s = scrubbed;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| mask_strings(i, forms, scrub)),
        Value::Object(map) => {
            let m: &mut Map<String, Value> = map;
            m.values_mut().for_each(|i| mask_strings(i, forms, scrub));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdrs(pairs: &[(&str, &str)]) -> Value {
        Value::Object(pairs.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect())
    }

    #[test]
    fn secrets_in_base64_bodies_are_masked_or_the_body_left_out() {
        use data_encoding::BASE64;
        let post = |n: u64| Entry {
            seq: n,
            url: Some(format!("https://app.test/{n}")),
            method: Some("POST".into()),
            request_headers: Some(hdrs(&[("Content-Type", "application/x-www-form-urlencoded")])),
            post: Some(b"password=hunter2-long-enough".to_vec()),
            post_bytes: 28,
            status: Some(200),
            ..Entry::default()
        };
        let body = |bytes: &[u8]| Body { text: BASE64.encode(bytes), base64: true };
        let mut binary = vec![0xff, 0xfe, 0x00];
        binary.extend_from_slice(b"hunter2-long-enough");
        let entries = [
            (
                "1".into(),
                post(1),
                "page_1".into(),
                Some(body(b"echo: hunter2-long-enough, known-secret")),
            ),
            ("2".into(), post(2), "page_1".into(), Some(body(&binary))),
            ("3".into(), post(3), "page_1".into(), Some(body(&[0xff, 0x00, 0x01]))),
        ];
        let pages = [HarPage {
            id: "page_1".into(),
            title: "t".into(),
            started: 1_700_000_000.0,
            comment: None,
        }];
        let known = |s: &str| s.replace("known-secret", "[known]");
        let (har, _) = har(&pages, &entries, &known);
        let content = |i: usize| har["log"]["entries"][i]["response"]["content"].clone();
        let text =
            BASE64.decode(content(0)["text"].as_str().unwrap_or("").as_bytes()).unwrap_or_default();
        assert_eq!(String::from_utf8_lossy(&text), format!("echo: {MASK}, [known]"));
        assert_eq!(
            (content(1)["text"].as_str(), content(1)["comment"].is_string()),
            (Some(""), true)
        );
        assert_eq!(content(2)["text"], BASE64.encode(&[0xff, 0x00, 0x01]), "kept: no secret in it");
    }

    #[test]
    fn cookies_credentials_and_secret_fields_are_masked_wherever_they_show() {
        let e = Entry {
            seq: 1,
            url: Some("https://app.test/login?next=/books&access_token=tok-12345".into()),
            method: Some("POST".into()),
            wall: Some(1_700_000_000.5),
            mono: Some(100.0),
            mono_end: Some(100.25),
            request_headers: Some(hdrs(&[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Authorization", "Bearer abc.def.ghi"),
            ])),
            request_headers_sent: Some(hdrs(&[("Cookie", "session=s3ss10n-v4lue; theme=dark")])),
            post: Some(b"username=admin&password=correct+horse+battery+staple".to_vec()),
            post_bytes: 52,
            status: Some(302),
            status_text: Some("FOUND".into()),
            response_headers: Some(hdrs(&[("Location", "/admin/")])),
            response_headers_raw: Some(hdrs(&[(
                "Set-Cookie",
                "session=n3w-s3ss10n; HttpOnly; Path=/\nother=plain-value; Path=/",
            )])),
            redirect_url: Some("https://app.test/admin/?echo=n3w-s3ss10n".into()),
            ..Entry::default()
        };
        let body = Body {
            text: "your password: correct horse battery staple; dark mode, true".into(),
            base64: false,
        };
        let pages = [HarPage {
            id: "page_1".into(),
            title: "t".into(),
            started: 1_700_000_000.0,
            comment: None,
        }];
        let known = |s: &str| s.replace("known-secret", "[known]");
        let (har, masked) = har(&pages, &[("1".into(), e, "page_1".into(), Some(body))], &known);
        let text = har.to_string();
        for secret in [
            "s3ss10n-v4lue",
            "n3w-s3ss10n",
            "plain-value",
            "correct horse",
            "correct+horse",
            "abc.def.ghi",
            "tok-12345",
        ] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(masked >= 6, "{masked}");
        let entry = &har["log"]["entries"][0];
        assert_eq!(
            entry["request"]["postData"]["params"][0],
            json!({"name": "username", "value": "admin"})
        );
        assert_eq!(entry["request"]["postData"]["params"][1]["value"], json!(MASK));
        assert_eq!(entry["response"]["cookies"][0]["httpOnly"], json!(true));
        assert_eq!(entry["response"]["cookies"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            entry["response"]["redirectURL"],
            json!(format!("https://app.test/admin/?echo={MASK}"))
        );
        assert!(text.contains("Bearer •••"), "{text}");
        assert!(text.contains("theme=•••"), "{text}");
        assert!(text.contains("dark mode, true"), "{text}");
        assert_eq!(entry["time"], json!(250.0));
        assert_eq!(entry["startedDateTime"], json!("2023-11-14T22:13:20.500Z"));
        // An innocent value stays; a short cookie value is masked in its
        // header but not looked for elsewhere (the body's word stays).
        assert!(text.contains("next"), "{text}");
        assert!(text.contains("theme=•••"), "{text}");
        assert!(text.contains("dark mode, true"), "{text}");
    }

    #[test]
    fn json_and_multipart_bodies_lose_their_secret_fields() {
        let mut secrets = BTreeSet::new();
        let v = post_data(
            br#"{"user":"ann","auth":{"password":"hunter2-long","otp":123456}}"#,
            60,
            "application/json",
            &mut secrets,
        );
        assert!(!v["text"].as_str().unwrap_or_default().contains("hunter2"), "{v}");
        assert!(secrets.contains("hunter2-long") && secrets.contains("123456"), "{secrets:?}");
        let body = "--x\r\nContent-Disposition: form-data; name=\"new_password\"\r\n\r\nsw0rdf1sh!\r\n--x--";
        post_data(body.as_bytes(), body.len(), "multipart/form-data; boundary=x", &mut secrets);
        assert!(secrets.contains("sw0rdf1sh!"), "{secrets:?}");
    }

    #[test]
    fn timings_add_up_to_the_time() {
        let e = Entry {
            mono: Some(10.0),
            mono_end: Some(10.1),
            timing: Some(Timing {
                request_time: 10.002,
                dns: (-1.0, -1.0),
                connect: (1.0, 3.0),
                ssl: (-1.0, -1.0),
                send: (4.0, 5.0),
                headers_end: 50.0,
            }),
            ..Entry::default()
        };
        let (t, time) = timings(&e);
        assert_eq!(t["dns"], json!(-1.0));
        assert_eq!(t["connect"], json!(2.0));
        assert_eq!(t["wait"], json!(45.0));
        let sum: f64 = ["blocked", "connect", "send", "wait", "receive"]
            .iter()
            .map(|k| t[k].as_f64().unwrap_or(0.0))
            .sum();
        assert!((sum - time).abs() < 0.01, "{t} vs {time}");
        assert!((time - 100.0).abs() < 0.01, "{time}");
    }
}
