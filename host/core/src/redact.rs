//! The secrets this server knows, and the one function that takes them out of
//! everything ochre writes or answers ([`KnownSecrets::scrub`]).
//!
//! A value becomes known when a plugin reads it from the secret store (the
//! `secrets` interface), when a tool returns it as a secret result (the code of
//! `oc_totp_generate`), when a call types it into a password or one-time-code
//! field, when a replay resolves `{{secret:NAME}}`, or when it is a browser
//! endpoint's token. Each has a name (`secret:NAME`, `totp:example.com`,
//! `password`): recordings keep the name as a parameter, never the value.

use std::borrow::Cow;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// What a secret is shown as.
pub const MASK: &str = "•••";

/// Values shorter than this are not redacted by value (they would mask
/// ordinary words); a field's or an argument's own redaction still applies.
pub const MIN_SECRET_CHARS: usize = 4;

/// At most this many values are kept (the oldest go first).
const MAX_KNOWN: usize = 1024;

/// One known secret.
struct Known {
    value: String,
    /// The value as escaping writes it where that differs: inside JSON
    /// quotes, inside a Rust `Debug` string (a logged message), and both (a
    /// logged message quoting JSON).
    escaped: Vec<String>,
    name: String,
    /// Forgotten then (a one-time code: masking its digits for good would
    /// mask any number that happens to equal it).
    until: Option<Instant>,
}

impl Known {
    fn live(&self, now: Instant) -> bool {
        self.until.is_none_or(|u| now < u)
    }
}

/// The known secrets: value and name.
#[derive(Default)]
pub struct KnownSecrets {
    known: RwLock<Vec<Known>>,
}

impl std::fmt::Debug for KnownSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.known.read().map(|k| k.len()).unwrap_or(0);
        f.debug_struct("KnownSecrets").field("count", &n).finish()
    }
}

impl KnownSecrets {
    /// Know `value` as the secret `name`; its name if it was known already.
    /// A field's name taken by another value gets a suffix (`password_2`); a
    /// source's (`totp:DOMAIN`, `secret:NAME`) is kept by every value. Short or
    /// blank values are ignored (`None`).
    pub fn add(&self, name: &str, value: &str) -> Option<String> {
        self.add_until(name, value, None)
    }

    /// Like [`KnownSecrets::add`], forgotten after `ttl` (a one-time code).
    pub fn add_for(&self, name: &str, value: &str, ttl: Duration) -> Option<String> {
        self.add_until(name, value, Some(Instant::now() + ttl))
    }

    fn add_until(&self, name: &str, value: &str, until: Option<Instant>) -> Option<String> {
        if value.trim().chars().count() < MIN_SECRET_CHARS {
            return None;
        }
        let now = Instant::now();
        let mut known = ochre_protocol::write_lock(&self.known);
        known.retain(|k| k.live(now));
        if let Some(k) = known.iter_mut().find(|k| k.value == value) {
            k.until = match (k.until, until) {
                (None, _) | (_, None) => None,
                (Some(a), Some(b)) => Some(a.max(b)),
            };
            return Some(k.name.clone());
        }
        // A name that says where the value comes from (`totp:example.com`,
        // `secret:NAME`) is the parameter a replay resolves it by: each of its
        // values keeps it (the second code for a site is that site's code). A
        // name taken from a field (`password`) gets a suffix for another value.
        let mut unique = name.to_owned();
        let mut i = 2;
        while !name.contains(':') && known.iter().any(|k| k.name == unique) {
            unique = format!("{name}_{i}");
            i += 1;
        }
        if known.len() >= MAX_KNOWN {
            known.remove(0);
        }
        let escaped = escapes(value);
        known.push(Known { value: value.to_owned(), escaped, name: unique.clone(), until });
        // Longest first: a secret that holds another is replaced whole.
        known.sort_by_key(|k| std::cmp::Reverse(k.value.len()));
        Some(unique)
    }

    /// Whether nothing is known (scrubbing is then free).
    pub fn is_empty(&self) -> bool {
        self.known.read().map(|k| k.is_empty()).unwrap_or(true)
    }

    /// `text` with every known secret (also as JSON escapes it) replaced by
    /// [`MASK`].
    pub fn scrub<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.replace(text, |_| MASK.to_owned())
    }

    /// `text` with every known secret replaced by `with(name)`.
    pub fn replace<'t>(&self, text: &'t str, with: impl Fn(&str) -> String) -> Cow<'t, str> {
        let now = Instant::now();
        let known = ochre_protocol::read_lock(&self.known);
        let mut out = Cow::Borrowed(text);
        for k in known.iter().filter(|k| k.live(now)) {
            for form in std::iter::once(&k.value).chain(&k.escaped) {
                if out.contains(form.as_str()) {
                    out = Cow::Owned(out.replace(form, &with(&k.name)));
                }
            }
        }
        out
    }

    /// Scrub every string of `v` (object keys too), in place.
    pub fn scrub_value(&self, v: &mut Value) {
        if self.is_empty() {
            return;
        }
        self.walk(v);
    }

    fn walk(&self, v: &mut Value) {
        match v {
            Value::String(s) => {
                if let Cow::Owned(o) = self.scrub(s) {
                    *s = o;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.walk(i)),
            Value::Object(m) => {
                let needs_key = m.keys().any(|k| matches!(self.scrub(k), Cow::Owned(_)));
                if needs_key {
                    let old = std::mem::take(m);
                    for (k, mut val) in old {
                        self.walk(&mut val);
                        m.insert(self.scrub(&k).into_owned(), val);
                    }
                } else {
                    m.values_mut().for_each(|x| self.walk(x));
                }
            }
            _ => {}
        }
    }

    /// Scrub a string in place.
    pub fn scrub_string(&self, s: &mut String) {
        if self.is_empty() {
            return;
        }
        if let Cow::Owned(o) = self.scrub(s) {
            *s = o;
        }
    }
}

/// How `value` reads once escaped (other than itself): in JSON, in a Rust
/// `Debug` string, and in both.
fn escapes(value: &str) -> Vec<String> {
    let json = |v: &str| serde_json::to_string(v).map(|e| e[1..e.len() - 1].to_owned()).ok();
    let debug = |v: &str| {
        let d = format!("{v:?}");
        d[1..d.len() - 1].to_owned()
    };
    let once = json(value).unwrap_or_else(|| value.to_owned());
    let mut out = vec![once.clone(), debug(value), debug(&once)];
    out.sort();
    out.dedup();
    out.retain(|e| e != value);
    out
}

/// The name of a tool's secret argument (`secret = "value"`) as a known
/// secret and a recording's parameter: after the tool and what the value is
/// of (`cookies` `name` `session` -> `cookies_session`, `storage` `key`).
pub fn secret_arg_name(tool: &str, args: &Value, arg: &str) -> String {
    let of = ["name", "key"].iter().find_map(|k| args[*k].as_str()).unwrap_or(arg);
    slug(&format!("{tool} {of}"), arg)
}

/// A parameter name from a field's name or label: lower case, words joined by
/// `_`, at most 40 characters; `fallback` when nothing is left.
pub fn slug(text: &str, fallback: &str) -> String {
    let mut out = String::new();
    for c in text.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
        if out.chars().count() >= 40 {
            break;
        }
    }
    let out = out.trim_end_matches('_').to_owned();
    if out.is_empty() { fallback.to_owned() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_values_are_masked_everywhere_and_names_stay_unique() {
        let k = KnownSecrets::default();
        assert!(k.is_empty());
        assert_eq!(k.add("password", "hunter22").as_deref(), Some("password"));
        assert_eq!(k.add("password", "other-pass").as_deref(), Some("password_2"));
        assert_eq!(k.add("again", "hunter22").as_deref(), Some("password"), "known already");
        assert_eq!(k.add("short", "123"), None, "too short to mask by value");
        assert_eq!(k.scrub("typed hunter22 and other-pass"), "typed ••• and •••");
        assert_eq!(k.replace("other-pass", str::to_owned), "password_2");
        let mut v = json!({"a": ["x hunter22"], "hunter22": 1, "n": 5});
        k.scrub_value(&mut v);
        assert_eq!(v, json!({"a": ["x •••"], "•••": 1, "n": 5}));
        // A value with a quote is masked in JSON text too.
        k.add("q", "pa\"ss");
        assert_eq!(k.scrub(r#"{"v":"pa\"ss"}"#), r#"{"v":"•••"}"#);
        assert_eq!(k.replace("x other-pass", |n| format!("{{{{{n}}}}}")), "x {{password_2}}");
        // A one-time code is forgotten after its time.
        k.add_for("totp:a", "123456", Duration::from_millis(0));
        assert_eq!(k.scrub("code 123456"), "code 123456");
        assert_eq!(k.replace("123456", str::to_owned), "123456");
        // Two codes of one site (or two values of one stored secret) are that
        // site's code, the parameter a replay resolves: no `_2`.
        let long = Duration::from_secs(90);
        assert_eq!(
            k.add_for("totp:example.com", "246810", long).as_deref(),
            Some("totp:example.com")
        );
        assert_eq!(
            k.add_for("totp:example.com", "135791", long).as_deref(),
            Some("totp:example.com")
        );
        assert_eq!(k.replace("135791 246810", str::to_owned), "totp:example.com totp:example.com");
        assert_eq!(k.add("secret:p.key", "first-value").as_deref(), Some("secret:p.key"));
        assert_eq!(k.add("secret:p.key", "second-value").as_deref(), Some("secret:p.key"));
    }

    #[test]
    fn slugs_name_parameters() {
        assert_eq!(slug("One-time code", "value"), "one_time_code");
        assert_eq!(slug("  Title ", "value"), "title");
        assert_eq!(slug("***", "value"), "value");
        assert_eq!(slug("Année", "v"), "année");
    }
}
