//! What a tool declares about itself, shared by the host and the SDK.

/// Hints for MCP clients about a tool's effects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    /// The tool changes nothing.
    pub read_only: bool,
    /// The tool may destroy data.
    pub destructive: bool,
    /// Calling twice with the same arguments has no extra effect.
    pub idempotent: bool,
    /// The tool talks to an open world (the web) rather than a closed domain.
    pub open_world: bool,
}

/// What a tool touches, for the host's intent guard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Scope {
    /// Nothing outside the tool (computation, plugin state).
    #[default]
    Local,
    /// The browser (pages, tabs, DOM).
    Browser,
    /// Network-adjacent work (HTTP fetches, crawls).
    NetworkAdjacent,
}

impl Scope {
    /// `browser`, `network-adjacent` or `local`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Browser => "browser",
            Self::NetworkAdjacent => "network-adjacent",
            Self::Local => "local",
        }
    }
}

/// Argument names whose values are never written, whatever the tool declares.
const SENSITIVE_NAMES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "authorization",
    "cookie",
    "cookies",
    "otp",
    "totp",
    "credential",
    "credentials",
];

/// Whether a name says its value is a secret (`password`, `apiKey`): an
/// argument never journaled, a parameter asked only on ochre's own page.
pub fn is_sensitive_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SENSITIVE_NAMES.iter().any(|s| lower.contains(s))
}

/// Short query keys that carry a secret in a URL (`?sig=`, `?code=`), too
/// common inside other words to be read into an argument's name.
const URL_SECRET_KEYS: &[&str] =
    &["pwd", "key", "auth", "session", "sessionid", "sig", "signature", "code"];

/// Whether a URL's query key holds a secret: a sensitive name
/// ([`is_sensitive_name`]: `access_token`, `password`), or one of a URL's
/// own short keys, whole (`key`, `sig`, `code`).
pub fn is_secret_query_key(key: &str) -> bool {
    is_sensitive_name(key) || URL_SECRET_KEYS.contains(&key.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_read_inside_words_and_a_urls_short_keys_whole() {
        for name in ["password", "apiKey", "X-Auth-Token", "totp_code", "session_cookie"] {
            assert!(is_sensitive_name(name), "{name}");
            assert!(is_secret_query_key(name), "{name}");
        }
        for key in ["key", "SIG", "code", "sessionid", "pwd"] {
            assert!(is_secret_query_key(key), "{key}");
        }
        for word in ["postcode", "keyword", "monkey", "author", "q", "page"] {
            assert!(!is_secret_query_key(word), "{word}");
        }
        assert!(!is_sensitive_name("code"), "a form's code field is no secret by name");
    }
}
