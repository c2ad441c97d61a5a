//! The config file (`--config`, TOML): `[intent_guard]` (see [`crate::intent`]),
//! `[trust.keys]` (the keys whose plugin signatures the operator trusts, by name)
//! and `[plugins.NAME]` (per plugin: `grants`, the sensitive interfaces it may
//! use; `allow_unsigned`, whether `ochre plugin install` takes it unsigned);
//! `[browser] endpoints`, browsers to attach to (a pool; see `--cdp-endpoint`),
//! each a URL or `{ url = "...", max_sessions = N }` (a Selenium Grid's also
//! `capabilities = { ... }`, asked of each new session); `[server]
//! max_sessions`, the most MCP sessions served at once over HTTP (as
//! `--max-sessions`, which overrides it), and `resume_sessions`, whether a
//! session's handshake is kept in the data dir for another server to resume
//! (as `--resume-sessions`); `[network] allow` and `block`, the origins or
//! hosts every browser context alone may reach or never reaches (as
//! `--network-allow` and `--network-block`, which add to them; the section
//! alone polices the network, as `--network-policy`), `block_private`
//! (as `--network-block-private`) and `resolve`, `NAME=ADDRESS` entries
//! answered instead of DNS (as `--network-resolve`).
//! Unknown sections and keys, and wrong types, are errors naming the key.
//!
//! ```toml
//! [trust.keys]
//! alice = "ed25519:Vb0Sx...="
//!
//! [plugins.cdpuser]
//! grants = ["cdp"]
//!
//! [plugins.homemade]
//! allow_unsigned = true
//!
//! [browser]
//! endpoints = ["http://10.0.0.5:9222", { url = "ws://grid:3000?token=T", max_sessions = 4 }]
//! # or one table per endpoint:
//! # [[browser.endpoints]]
//! # url = "selenium+http://grid:4444"
//! # capabilities = { "goog:chromeOptions" = { args = ["--headless=new"] } }
//!
//! [server]
//! max_sessions = 32
//! resume_sessions = true
//!
//! [network]
//! block = ["*.doubleclick.net", "https://tracker.example"]
//! resolve = ["staging.example=10.0.0.5"]
//! ```

use std::collections::BTreeMap;

#[cfg(feature = "browser")]
use crate::browser::Endpoint;
use crate::intent::IntentGuardConfig;

/// A parsed config file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// `[intent_guard]`.
    pub intent_guard: IntentGuardConfig,
    /// `[trust.keys]`: name -> `ed25519:<base64>` public key.
    pub trusted_keys: BTreeMap<String, String>,
    /// `[plugins.NAME]`.
    pub plugins: BTreeMap<String, PluginSettings>,
    /// `[browser] endpoints`.
    #[cfg(feature = "browser")]
    pub browser_endpoints: Vec<Endpoint>,
    /// `[server] max_sessions`: the most MCP sessions served at once.
    pub max_sessions: Option<usize>,
    /// `[server] resume_sessions`: keep sessions' handshakes in the data dir.
    pub resume_sessions: bool,
    /// `[network]`: `Some` when the section is there (the network is policed).
    pub network: Option<NetworkRules>,
}

/// `[network]`: its rules as written (the browser's policy reads them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkRules {
    /// `allow`: only these origins or hosts.
    pub allow: Vec<String>,
    /// `block`: never these.
    pub block: Vec<String>,
    /// `block_private`: never an address inside the machine or its networks
    /// unless an `allow` rule names it (as `--network-block-private`).
    pub block_private: bool,
    /// `resolve`: `NAME=ADDRESS` entries answered instead of DNS (as
    /// `--network-resolve`).
    pub resolve: Vec<String>,
}

/// What the operator says of one plugin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginSettings {
    /// Sensitive interfaces granted to it (as `--grant NAME=IFACE`).
    pub grants: Vec<String>,
    /// `ochre plugin install` takes it without a trusted signature.
    pub allow_unsigned: bool,
}

impl Config {
    /// The settings of plugin `name` (defaults when the file says nothing).
    pub fn plugin(&self, name: &str) -> PluginSettings {
        self.plugins.get(name).cloned().unwrap_or_default()
    }
}

/// Parse a whole config file.
pub fn parse(text: &str) -> Result<Config, String> {
    let table: toml::Table =
        text.parse().map_err(|e: toml::de::Error| format!("not valid TOML: {}", e.message()))?;
    const SECTIONS: &str =
        "[intent_guard], [trust.keys], [plugins.NAME], [browser], [server], [network]";
    let known = ["intent_guard", "trust", "plugins", "browser", "server", "network"];
    if let Some(k) = table.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!("unknown key `{k}` (known sections: {SECTIONS})"));
    }
    #[cfg(not(feature = "browser"))]
    if table.contains_key("browser") {
        return Err("`[browser]`: this host was built without a browser".into());
    }
    let (max_sessions, resume_sessions) = server(&table)?;
    Ok(Config {
        intent_guard: IntentGuardConfig::from_table(&table)?,
        trusted_keys: trusted_keys(&table)?,
        plugins: plugins(&table)?,
        #[cfg(feature = "browser")]
        browser_endpoints: browser_endpoints(&table)?,
        max_sessions,
        resume_sessions,
        network: network(&table)?,
    })
}

/// `[network]`: `allow`, `block` and `resolve`, lists of strings (checked by
/// the browser's policy when the server starts), and `block_private`.
fn network(table: &toml::Table) -> Result<Option<NetworkRules>, String> {
    let Some(network) = table.get("network") else { return Ok(None) };
    let mut rules = NetworkRules::default();
    for (k, v) in section(network, "network")? {
        let into = match k.as_str() {
            "allow" => &mut rules.allow,
            "block" => &mut rules.block,
            "resolve" => &mut rules.resolve,
            "block_private" => {
                rules.block_private =
                    v.as_bool().ok_or("`network.block_private` must be true or false")?;
                continue;
            }
            _ => {
                return Err(format!(
                    "unknown key `network.{k}` (known: allow, block, block_private, resolve)"
                ));
            }
        };
        let list = v.as_array().ok_or(format!("`network.{k}` must be a list of strings"))?;
        for item in list {
            let s = item.as_str().ok_or(format!("`network.{k}` must be a list of strings"))?;
            into.push(s.to_owned());
        }
    }
    Ok(Some(rules))
}

/// `[server]`: `max_sessions` (a whole number from 1) and `resume_sessions`
/// (a boolean).
fn server(table: &toml::Table) -> Result<(Option<usize>, bool), String> {
    let Some(server) = table.get("server") else { return Ok((None, false)) };
    let (mut max, mut resume) = (None, false);
    for (k, v) in section(server, "server")? {
        match k.as_str() {
            "max_sessions" => {
                let n = v.as_integer().and_then(|n| usize::try_from(n).ok()).filter(|n| *n >= 1);
                max = Some(n.ok_or("`server.max_sessions` must be a whole number from 1")?);
            }
            "resume_sessions" => {
                resume = v.as_bool().ok_or("`server.resume_sessions` must be true or false")?;
            }
            _ => {
                return Err(format!(
                    "unknown key `server.{k}` (known: max_sessions, resume_sessions)"
                ));
            }
        }
    }
    Ok((max, resume))
}

#[cfg(feature = "browser")]
fn browser_endpoints(table: &toml::Table) -> Result<Vec<Endpoint>, String> {
    let Some(browser) = table.get("browser") else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (k, v) in section(browser, "browser")? {
        if k != "endpoints" {
            return Err(format!("unknown key `browser.{k}` (known: endpoints)"));
        }
        let list = v.as_array().ok_or("`browser.endpoints` must be a list")?;
        for (n, item) in list.iter().enumerate() {
            let key = format!("browser.endpoints[{n}]");
            let (url, max, caps) = match item {
                toml::Value::String(url) => (url.as_str(), None, None),
                toml::Value::Table(t) => {
                    const KNOWN: [&str; 3] = ["url", "max_sessions", "capabilities"];
                    if let Some(bad) = t.keys().find(|k| !KNOWN.contains(&k.as_str())) {
                        return Err(format!(
                            "unknown key `{key}.{bad}` (known: url, max_sessions, capabilities)"
                        ));
                    }
                    let url = t.get("url").and_then(toml::Value::as_str);
                    let max = match t.get("max_sessions") {
                        None => None,
                        Some(m) => {
                            Some(m.as_integer().and_then(|m| usize::try_from(m).ok()).ok_or_else(
                                || format!("`{key}.max_sessions` must be a positive number"),
                            )?)
                        }
                    };
                    let caps = match t.get("capabilities") {
                        None => None,
                        Some(toml::Value::Table(c)) => Some(
                            serde_json::to_value(c)
                                .ok()
                                .and_then(|v| v.as_object().cloned())
                                .unwrap_or_default(),
                        ),
                        Some(_) => {
                            return Err(format!("`{key}.capabilities` must be a table"));
                        }
                    };
                    (url.ok_or_else(|| format!("`{key}.url` is missing"))?, max, caps)
                }
                _ => {
                    return Err(format!(
                        "`{key}` must be a URL or {{ url = ..., max_sessions = N }}"
                    ));
                }
            };
            let mut e = Endpoint::parse(url, max).map_err(|e| format!("`{key}`: {e}"))?;
            if let Some(caps) = caps {
                if !e.is_grid() {
                    return Err(format!(
                        "`{key}.capabilities` is for Selenium Grid endpoints (selenium+http://...)"
                    ));
                }
                e.capabilities = caps;
            }
            out.push(e);
        }
    }
    Ok(out)
}

fn section<'a>(v: &'a toml::Value, key: &str) -> Result<&'a toml::Table, String> {
    v.as_table().ok_or_else(|| format!("`{key}` must be a table ([{key}])"))
}

fn trusted_keys(table: &toml::Table) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let Some(trust) = table.get("trust") else { return Ok(out) };
    for (k, v) in section(trust, "trust")? {
        if k != "keys" {
            return Err(format!("unknown key `trust.{k}`"));
        }
        for (name, key) in section(v, "trust.keys")? {
            let key = key.as_str().filter(|k| k.starts_with("ed25519:")).ok_or_else(|| {
                format!(
                    "`trust.keys.{name}` must be \"ed25519:<base64>\" (from `ochre plugin keygen`)"
                )
            })?;
            out.insert(name.clone(), key.to_owned());
        }
    }
    Ok(out)
}

fn plugins(table: &toml::Table) -> Result<BTreeMap<String, PluginSettings>, String> {
    let mut out = BTreeMap::new();
    let Some(plugins) = table.get("plugins") else { return Ok(out) };
    for (name, v) in section(plugins, "plugins")? {
        let mut s = PluginSettings::default();
        for (k, v) in section(v, &format!("plugins.{name}"))? {
            let key = format!("plugins.{name}.{k}");
            match k.as_str() {
                "grants" => {
                    s.grants = v
                        .as_array()
                        .and_then(|a| a.iter().map(|i| i.as_str().map(str::to_owned)).collect())
                        .ok_or_else(|| format!("`{key}` must be a list of interface names"))?;
                }
                "allow_unsigned" => {
                    s.allow_unsigned =
                        v.as_bool().ok_or_else(|| format!("`{key}` must be true or false"))?;
                }
                _ => return Err(format!("unknown key `{key}` (known: grants, allow_unsigned)")),
            }
        }
        out.insert(name.clone(), s);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intent::Detector;

    fn parse_intent(text: &str) -> Result<IntentGuardConfig, String> {
        parse(text).map(|c| c.intent_guard)
    }

    #[test]
    fn config_names_the_bad_key() {
        let c = parse_intent(
            "[intent_guard]\nenabled = true\ndetector = \"model\"\nsoft_block_after = 3\n[intent_guard.browser]\nno_fallback = false\n",
        )
        .expect("valid");
        assert_eq!(
            (c.detector, c.soft_block_after, c.no_fallback, c.fail_task_if_unmet),
            (Detector::Model, 3, false, true)
        );
        assert_eq!(parse_intent("").expect("empty"), IntentGuardConfig::default());
        for (text, key) in [
            ("[intent_guard]\nenabled = \"yes\"", "intent_guard.enabled"),
            ("[intent_guard]\ndetector = \"llm\"", "intent_guard.detector"),
            ("[intent_guard]\nsoft_block_after = -1", "intent_guard.soft_block_after"),
            ("[intent_guard.browser]\nno_fallbak = true", "intent_guard.browser.no_fallbak"),
            ("[intent_gaurd]\nenabled = true", "intent_gaurd"),
            ("[intent_guard]\ncolour = 1", "intent_guard.colour"),
        ] {
            let e = parse_intent(text).expect_err(text);
            assert!(e.contains(&format!("`{key}`")), "{text}: {e}");
        }
        assert!(parse_intent("[intent_guard\n").expect_err("toml").contains("TOML"));
    }

    #[test]
    fn network_rules_and_block_private_are_read() {
        let c = parse(
            "[network]\nblock = [\"10.0.0.0/8\"]\nblock_private = true\nresolve = [\"a.test=10.0.0.5\"]\n",
        )
        .expect("valid");
        let n = c.network.expect("the section");
        assert_eq!((n.block, n.block_private), (vec!["10.0.0.0/8".to_owned()], true));
        assert_eq!(n.resolve, vec!["a.test=10.0.0.5".to_owned()]);
        let e = parse("[network]\nblock_private = \"yes\"").expect_err("not a boolean");
        assert!(e.contains("`network.block_private`"), "{e}");
        let e = parse("[network]\nblock_privat = true").expect_err("unknown");
        assert!(e.contains("`network.block_privat`"), "{e}");
    }

    #[test]
    fn trust_and_plugin_settings_are_read_and_bad_keys_named() {
        let c = parse(
            "[trust.keys]\nalice = \"ed25519:AAAA\"\n[plugins.cdpuser]\ngrants = [\"cdp\"]\n[plugins.home]\nallow_unsigned = true\n",
        )
        .expect("valid");
        assert_eq!(c.trusted_keys.get("alice").map(String::as_str), Some("ed25519:AAAA"));
        assert_eq!(c.plugin("cdpuser").grants, ["cdp"]);
        assert!(c.plugin("home").allow_unsigned && !c.plugin("other").allow_unsigned);
        // The endpoints are read with the browser (the feature).
        #[cfg(feature = "browser")]
        {
            let c = parse("[browser]\nendpoints = [\"http://a:9222\", { url = \"ws://b:3000?token=t\", max_sessions = 2 }]\n")
                .expect("valid");
            let got: Vec<(&str, Option<usize>)> =
                c.browser_endpoints.iter().map(|e| (e.url.as_str(), e.max_sessions)).collect();
            assert_eq!(got, [("http://a:9222", None), ("ws://b:3000/?token=t", Some(2))]);
            let c = parse("[[browser.endpoints]]\nurl = \"selenium+http://g:4444\"\ncapabilities = { \"goog:chromeOptions\" = { args = [\"--headless=new\"] } }\n")
                .expect("valid");
            assert_eq!(
                serde_json::Value::Object(c.browser_endpoints[0].capabilities.clone()),
                serde_json::json!({"goog:chromeOptions": {"args": ["--headless=new"]}})
            );
        }
        for (text, key) in [
            ("[trust.keys]\nbob = \"rsa:1\"", "trust.keys.bob"),
            ("[trust]\nkey = 1", "trust.key"),
            ("[plugins.x]\ngrants = \"cdp\"", "plugins.x.grants"),
            ("[plugins.x]\nallow_unsigned = 1", "plugins.x.allow_unsigned"),
            ("[plugins.x]\ngrant = [\"cdp\"]", "plugins.x.grant"),
            ("[plugin.x]\ngrants = []", "plugin"),
            ("[browser]\nendpoint = []", "browser.endpoint"),
            ("[browser]\nendpoints = [\"ftp://x\"]", "browser.endpoints[0]"),
            (
                "[browser]\nendpoints = [{ url = \"http://h:1\", max = 1 }]",
                "browser.endpoints[0].max",
            ),
            (
                "[browser]\nendpoints = [{ url = \"http://h:1\", max_sessions = 0 }]",
                "browser.endpoints[0]",
            ),
            (
                "[browser]\nendpoints = [{ url = \"http://h:1\", capabilities = {} }]",
                "browser.endpoints[0].capabilities",
            ),
            (
                "[browser]\nendpoints = [{ url = \"selenium+http://h:1\", capabilities = 1 }]",
                "browser.endpoints[0].capabilities",
            ),
            ("[server]\nmax_sessions = 0", "server.max_sessions"),
            ("[server]\nmax_sessions = \"4\"", "server.max_sessions"),
            ("[server]\nsessions = 4", "server.sessions"),
        ] {
            let e = parse(text).expect_err(text);
            if cfg!(not(feature = "browser")) && text.starts_with("[browser]") {
                assert!(e.contains("built without a browser"), "{text}: {e}");
                continue;
            }
            assert!(e.contains(&format!("`{key}`")), "{text}: {e}");
        }
        assert_eq!(parse("[server]\nmax_sessions = 32\n").map(|c| c.max_sessions), Ok(Some(32)));
        assert_eq!(parse("").map(|c| c.max_sessions), Ok(None));
    }
}
