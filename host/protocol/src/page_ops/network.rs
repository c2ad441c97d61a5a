//! The session's network: routes that answer requests, and the network policy.

use super::*;
use std::collections::BTreeMap;

/// Add, remove, list or clear the caller's session's routes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// What to do (default: `add` with a `url`, else `list`).
    #[serde(default)]
    pub action: Option<RouteAction>,
    /// The URL pattern (ochre's one rule: a glob with `*`, `/regex/`, else a
    /// part of the URL); `remove` takes the pattern as it was added.
    #[serde(default)]
    pub url: Option<String>,
    /// Only requests of this method.
    #[serde(default)]
    pub method: Option<String>,
    /// The answer's status (default 200).
    #[serde(default)]
    pub status: Option<u16>,
    /// The answer's headers.
    #[serde(default)]
    pub headers: Option<BTreeMap<String, String>>,
    /// The answer's body.
    #[serde(default)]
    pub body: Option<String>,
    /// The answer's body from this file (under an allowed file root).
    #[serde(default)]
    pub file: Option<String>,
    /// Fail matching requests instead.
    #[serde(default)]
    pub abort: Option<bool>,
}

named_enum! {
    /// What [`Route`] does.
    pub enum RouteAction {
        /// Answer the requests matching `url` (a route of the same `url` is replaced).
        Add = "add",
        /// Remove the route added with `url`.
        Remove = "remove",
        /// The session's routes.
        List = "list",
        /// Remove every route of the session.
        Clear = "clear",
    }
}

/// One route of a session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RouteInfo {
    /// Its URL pattern.
    pub url: String,
    /// Its method, if it names one.
    #[serde(default)]
    pub method: Option<String>,
    /// What it answers (`abort`, `status 200, 12 bytes`).
    pub answer: String,
    /// How many requests it answered.
    #[serde(default)]
    pub hits: u64,
}

/// A session's routes after a change.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Routed {
    /// Its routes, in the order they are tried.
    #[serde(default)]
    pub routes: Vec<RouteInfo>,
}

/// Change the caller's session's network policy (each field given replaces
/// the session's own; nothing given: read it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkPolicy {
    /// Origins or hosts the session alone may reach (`https://app.example`,
    /// `app.example:8080`, `*.example.com`), beside the server's.
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// Origins or hosts the session never reaches, beside the server's.
    #[serde(default)]
    pub block: Option<Vec<String>>,
    /// The session's upstream proxy, `http://host:port` (`""`: none).
    #[serde(default)]
    pub proxy: Option<String>,
    /// Drop the session's own rules and proxy first.
    #[serde(default)]
    pub reset: Option<bool>,
}

/// The network policy in force for a session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PolicyInForce {
    /// Only these are reached (the server's and the session's; empty: all
    /// that is not blocked).
    #[serde(default)]
    pub allowed: Vec<String>,
    /// Never these.
    #[serde(default)]
    pub blocked: Vec<String>,
    /// Whether addresses inside the machine or its networks are refused
    /// unless allowed (the server's `--network-block-private`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub block_private: bool,
    /// The session's upstream proxy.
    #[serde(default)]
    pub proxy: Option<String>,
    /// The last connections refused (`host:port`), newest last.
    #[serde(default)]
    pub refused: Vec<String>,
    /// How many were refused in all.
    #[serde(default)]
    pub refused_total: u64,
}
