//! The browser-first intent guard: a task run whose goal asks for the browser
//! ("open it in the browser", "用浏览器") is held to it. Its intent is detected at
//! `oc_task_run_start` (keywords first; optionally the client's model through MCP
//! sampling, or an embedder's [`IntentDetector`]); then
//!
//! - **preflight**: with `no_fallback`, a server with no browser-scope tool (or a
//!   browser that cannot start) fails the run at once (`intent_execution_failed`);
//! - **before each call** in the run: browser-scope tools pass; network-adjacent
//!   ones pass for the first `soft_block_after` calls when `network_adjacent_only`;
//!   beyond that, and local tools, are blocked (`tool_policy_blocked`) before
//!   anything happens;
//! - **completion**: with `fail_task_if_unmet`, `COMPLETED` is refused while no
//!   browser-scope call has succeeded (`intent_execution_failed`).
//!
//! Host tools (task runs, bulk progress, the journal, output handles) are the
//! control plane and are never blocked.

use std::future::Future;
use std::pin::Pin;

use serde_json::{Value, json};

/// A boxed future (object-safe async callbacks).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub use ochre_protocol::tool::Scope;

/// The scope of a tool that declares none, from its name (the seed's patterns):
/// browser drivers, then fetch/http/url/page-ish names, else local.
pub fn classify_by_name(name: &str) -> Scope {
    let n = name.to_ascii_lowercase();
    const BROWSER: &[&str] = &[
        "browser",
        "playwright",
        "puppeteer",
        "selenium",
        "chrome",
        "navigate",
        "click",
        "screenshot",
        "tab",
        "dom",
    ];
    const NETWORK: &[&str] =
        &["fetch", "http", "url", "page", "web", "crawl", "request", "download", "scrape"];
    if BROWSER.iter().any(|k| n.contains(k)) {
        Scope::Browser
    } else if NETWORK.iter().any(|k| n.contains(k)) {
        Scope::NetworkAdjacent
    } else {
        Scope::Local
    }
}

/// How intent is detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detector {
    /// Keywords and patterns only.
    #[default]
    Heuristic,
    /// Keywords first, then the client's model (MCP sampling).
    Model,
}

/// `[intent_guard]` of the config file.
#[derive(Debug, Clone, PartialEq)]
pub struct IntentGuardConfig {
    /// The guard acts at all (default true).
    pub enabled: bool,
    /// `heuristic` (default) or `model`.
    pub detector: Detector,
    /// Network-adjacent calls allowed in a browser-first run (default 2).
    pub soft_block_after: u32,
    /// Fail a browser-first run at start when no browser tool can run (default true).
    pub no_fallback: bool,
    /// Allow only browser tools, plus `soft_block_after` network-adjacent calls
    /// (default true).
    pub network_adjacent_only: bool,
    /// Refuse `COMPLETED` when no browser call succeeded (default true).
    pub fail_task_if_unmet: bool,
}

impl Default for IntentGuardConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            detector: Detector::Heuristic,
            soft_block_after: 2,
            no_fallback: true,
            network_adjacent_only: true,
            fail_task_if_unmet: true,
        }
    }
}

impl IntentGuardConfig {
    /// Read the `[intent_guard]` section of a config table. Unknown keys and wrong
    /// types are errors naming the key (`intent_guard.browser.no_fallback`).
    pub fn from_table(table: &toml::Table) -> Result<Self, String> {
        let mut c = Self::default();
        let Some(section) = table.get("intent_guard") else {
            return Ok(c);
        };
        let Some(section) = section.as_table() else {
            return Err("`intent_guard` must be a table ([intent_guard])".into());
        };
        let boolean = |key: &str, v: &toml::Value| {
            v.as_bool().ok_or_else(|| format!("`{key}` must be true or false"))
        };
        for (k, v) in section {
            let key = format!("intent_guard.{k}");
            match k.as_str() {
                "enabled" => c.enabled = boolean(&key, v)?,
                "detector" => {
                    c.detector = match v.as_str() {
                        Some("heuristic") => Detector::Heuristic,
                        Some("model") => Detector::Model,
                        _ => return Err(format!("`{key}` must be \"heuristic\" or \"model\"")),
                    }
                }
                "soft_block_after" => {
                    c.soft_block_after = v
                        .as_integer()
                        .and_then(|n| u32::try_from(n).ok())
                        .filter(|n| *n <= 1000)
                        .ok_or_else(|| format!("`{key}` must be an integer from 0 to 1000"))?
                }
                "browser" => {
                    let Some(b) = v.as_table() else {
                        return Err(format!("`{key}` must be a table ([intent_guard.browser])"));
                    };
                    for (bk, bv) in b {
                        let key = format!("intent_guard.browser.{bk}");
                        match bk.as_str() {
                            "no_fallback" => c.no_fallback = boolean(&key, bv)?,
                            "network_adjacent_only" => c.network_adjacent_only = boolean(&key, bv)?,
                            "fail_task_if_unmet" => c.fail_task_if_unmet = boolean(&key, bv)?,
                            _ => return Err(format!("unknown key `{key}`")),
                        }
                    }
                }
                _ => return Err(format!("unknown key `{key}`")),
            }
        }
        Ok(c)
    }

    /// The policy as stored with a run (so a restart keeps the run's rules).
    pub fn to_json(&self) -> Value {
        json!({
            "soft_block_after": self.soft_block_after,
            "no_fallback": self.no_fallback,
            "network_adjacent_only": self.network_adjacent_only,
            "fail_task_if_unmet": self.fail_task_if_unmet,
        })
    }
}

/// The two intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// The task asks for the browser.
    BrowserAccess,
    /// Anything else: no browser-first rules.
    General,
}

impl Label {
    /// `browser_access` or `general`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BrowserAccess => "browser_access",
            Self::General => "general",
        }
    }
}

/// A detected intent.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The label.
    pub label: Label,
    /// 0..1.
    pub confidence: f64,
    /// Why, in a few words.
    pub reason: String,
    /// `heuristic`, `model` or `detector` (an embedder's).
    pub source: String,
}

impl Verdict {
    /// JSON view (`execution.intent` of a run).
    pub fn to_json(&self) -> Value {
        json!({
            "label": self.label.as_str(),
            "confidence": self.confidence,
            "reason": self.reason,
            "detector": self.source,
        })
    }
}

/// Keywords and patterns that ask for the browser.
const BROWSER_PHRASES: &[&str] = &[
    "用浏览器",
    "使用浏览器",
    "浏览器访问",
    "浏览器打开",
    "在浏览器",
    "打开浏览器",
    "open in browser",
    "open in the browser",
    "open it in the browser",
    "in the browser",
    "in a browser",
    "in your browser",
    "use the browser",
    "use a browser",
    "using the browser",
    "using a browser",
    "with the browser",
    "with a browser",
    "via the browser",
    "through the browser",
    "browse to",
    "open the browser",
    "launch the browser",
    "headless browser",
    "real browser",
];

/// Keyword detection: `Some(browser_access)` on a hit, `None` otherwise.
pub fn heuristic(goal: &str) -> Option<Verdict> {
    let g: String = goal.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ");
    let hit = BROWSER_PHRASES.iter().find(|p| g.contains(**p))?;
    Some(Verdict {
        label: Label::BrowserAccess,
        confidence: 0.95,
        reason: format!("the goal says {hit:?}"),
        source: "heuristic".into(),
    })
}

/// The fallback verdict when nothing says browser.
pub fn general(reason: &str) -> Verdict {
    Verdict {
        label: Label::General,
        confidence: 0.6,
        reason: reason.into(),
        source: "heuristic".into(),
    }
}

/// The system prompt sent with a sampling request.
pub const MODEL_PROMPT: &str = "Classify the task goal. Answer with JSON only: \
{\"label\":\"browser_access|general\",\"confidence\":0..1,\"reason\":\"short\"}. \
browser_access means the task must be done by driving a web browser (visiting pages, clicking, reading rendered pages); general means anything else.";

/// Parse a model's answer: the first JSON object in the text with a known label
/// and a confidence in 0..1. Anything else is `None`.
pub fn parse_model_answer(text: &str) -> Option<Verdict> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let v: Value = serde_json::from_str(text.get(start..=end)?).ok()?;
    let label = match v["label"].as_str()? {
        "browser_access" => Label::BrowserAccess,
        "general" => Label::General,
        _ => return None,
    };
    let confidence = v["confidence"].as_f64().filter(|c| (0.0..=1.0).contains(c))?;
    let reason: String = v["reason"].as_str().unwrap_or("").chars().take(200).collect();
    Some(Verdict { label, confidence, reason, source: "model".into() })
}

/// Asks the client's model (MCP `sampling/createMessage`): `(system, user)` →
/// the answer's text. The server gives one per call when the client supports
/// sampling.
pub trait Sampler: Send + Sync {
    /// One completion.
    fn ask<'a>(&'a self, system: &'a str, user: &'a str) -> BoxFuture<'a, Result<String, String>>;
}

/// An embedder's own intent detector; replaces the keyword + model detection.
/// `None` falls back to the keywords.
pub trait IntentDetector: Send + Sync {
    /// Classify a goal.
    fn detect<'a>(&'a self, goal: &'a str) -> BoxFuture<'a, Option<Verdict>>;
}

/// What the guard says of a call in a browser-first run.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Go ahead.
    Allow,
    /// Blocked, with why.
    Block(String),
}

/// The per-call rule. `network_calls` is how many network-adjacent calls the run
/// was already allowed.
pub fn decide(policy: &Value, scope: Scope, network_calls: u64) -> Decision {
    let adjacent_only = policy["network_adjacent_only"] != json!(false);
    let soft = policy["soft_block_after"].as_u64().unwrap_or(2);
    match scope {
        Scope::Browser => Decision::Allow,
        _ if !adjacent_only => Decision::Allow,
        Scope::NetworkAdjacent if network_calls < soft => Decision::Allow,
        Scope::NetworkAdjacent => Decision::Block(format!(
            "this run's goal asks for the browser: {soft} network-adjacent call(s) were allowed, this one is over the limit; use the browser tools (navigate, read_page, ...)"
        )),
        Scope::Local => Decision::Block(
            "this run's goal asks for the browser and this tool is out of scope (local); use the browser tools (navigate, read_page, ...)".into(),
        ),
    }
}

/// An embedder's intent detector, as the builder keeps it.
#[derive(Clone)]
pub(crate) struct DetectorSlot(pub std::sync::Arc<dyn IntentDetector>);

impl std::fmt::Debug for DetectorSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IntentDetector")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_find_browser_goals_in_english_and_chinese() {
        for g in [
            "用浏览器打开 example.com 并读标题",
            "请浏览器访问这个网址",
            "Open in browser: https://x.test",
            "check the price IN THE   BROWSER",
            "use the browser to log in",
        ] {
            let v = heuristic(g).unwrap_or_else(|| panic!("{g}"));
            assert_eq!(v.label, Label::BrowserAccess);
            assert!(v.confidence > 0.9);
        }
        for g in ["summarize this text", "compute 2+2", "浏览一下文件"] {
            assert!(heuristic(g).is_none(), "{g}");
        }
    }

    #[test]
    fn model_answers_parse_or_fall_back() {
        let v = parse_model_answer(
            "Sure: {\"label\":\"browser_access\",\"confidence\":0.8,\"reason\":\"visit a site\"}",
        )
        .expect("valid");
        assert_eq!((v.label, v.confidence), (Label::BrowserAccess, 0.8));
        for bad in [
            "no json here",
            "{\"label\":\"maybe\",\"confidence\":0.5}",
            "{\"label\":\"general\",\"confidence\":7}",
            "{\"label\":\"general\"}",
            "{not json}",
        ] {
            assert!(parse_model_answer(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_call_policy_follows_scope_and_the_soft_limit() {
        let p = IntentGuardConfig::default().to_json();
        assert_eq!(decide(&p, Scope::Browser, 99), Decision::Allow);
        assert_eq!(decide(&p, Scope::NetworkAdjacent, 0), Decision::Allow);
        assert_eq!(decide(&p, Scope::NetworkAdjacent, 1), Decision::Allow);
        assert!(matches!(decide(&p, Scope::NetworkAdjacent, 2), Decision::Block(_)));
        assert!(matches!(decide(&p, Scope::Local, 0), Decision::Block(_)));
        let open = json!({"network_adjacent_only": false, "soft_block_after": 0});
        assert_eq!(decide(&open, Scope::Local, 9), Decision::Allow);
    }

    #[test]
    fn names_classify_undeclared_tools() {
        assert_eq!(classify_by_name("browser_click"), Scope::Browser);
        assert_eq!(classify_by_name("playwright_snapshot"), Scope::Browser);
        assert_eq!(classify_by_name("webfetch"), Scope::NetworkAdjacent);
        assert_eq!(classify_by_name("http_get"), Scope::NetworkAdjacent);
        assert_eq!(classify_by_name("read_file"), Scope::Local);
    }
}
