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
