//! Hints: short, rule-based advice appended to a tool result (a trailing text
//! block and a `_hint` field) when the agent is about to waste effort: completing
//! too early, using a stale ref, retrying the same failing call, or landing on a
//! login/CAPTCHA wall. Rules are data ([`RULES`]); a rule that fires again in the
//! same session escalates its severity.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::error::Code;

/// How loud a hint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Change course.
    Warning,
    /// Stop repeating this.
    Critical,
}

impl Severity {
    /// `info`, `warning` or `critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Critical => "critical",
        }
    }

    fn raised(self, levels: u32) -> Self {
        match (self as u32 + levels).min(2) {
            0 => Self::Info,
            1 => Self::Warning,
            _ => Self::Critical,
        }
    }
}

/// When a rule fires.
#[derive(Debug, Clone)]
pub enum Trigger {
    /// The call failed with this error code.
    ErrorCode(Code),
    /// The same tool with the same arguments failed this many times running.
    RepeatedFailure(u32),
    /// A successful call of one of `tools` whose result has a string `field`
    /// (evidence the tool found on the page; `{matched}` is its value).
    ResultField {
        /// Tools the rule watches.
        tools: &'static [&'static str],
        /// The field of the structured result.
        field: &'static str,
    },
}

/// One rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Stable id (`_hint.rule`).
    pub id: &'static str,
    /// When it fires.
    pub trigger: Trigger,
    /// Severity of the first firing.
    pub severity: Severity,
    /// Each this many further firings in a session raise the severity one level.
    pub escalate_every: u32,
    /// The message; `{key}` is replaced by the error's field or `tool`, `count`,
    /// `matched`.
    pub text: &'static str,
}

/// The rules, most important first (the first that fires wins).
pub const RULES: &[Rule] = &[
    Rule {
        id: "premature_completion",
        trigger: Trigger::ErrorCode(Code::BulkCompletionGuardFailed),
        severity: Severity::Warning,
        escalate_every: 2,
        text: "Not done yet: {missing_count} item(s) missing, {failed_count} failed. Next: {suggested_next_action}",
    },
    Rule {
        id: "intent_unmet",
        trigger: Trigger::ErrorCode(Code::IntentExecutionFailed),
        severity: Severity::Warning,
        escalate_every: 2,
        text: "This task asks for the browser: do it with the browser tools (navigate, read_page, interact), or end the run as FAILED.",
    },
    Rule {
        id: "policy_blocked",
        trigger: Trigger::ErrorCode(Code::ToolPolicyBlocked),
        severity: Severity::Warning,
        escalate_every: 2,
        text: "{tool} is out of this browser-first run's scope: use navigate / read_page / interact instead.",
    },
    Rule {
        id: "repeated_failure",
        trigger: Trigger::RepeatedFailure(3),
        severity: Severity::Warning,
        escalate_every: 2,
        text: "{tool} failed {count} times in a row with the same arguments: stop retrying it; re-read the page (read_page), pick another target or tool, or call oc_task_run_needs_help.",
    },
    Rule {
        id: "stale_ref",
        trigger: Trigger::ErrorCode(Code::StaleRef),
        severity: Severity::Info,
        escalate_every: 3,
        text: "The page changed since that ref was read: call read_page for fresh refs, then retry with the new ref.",
    },
    Rule {
        id: "unknown_ref",
        trigger: Trigger::ErrorCode(Code::RefNotFound),
        severity: Severity::Info,
        escalate_every: 3,
        text: "That ref was never given out on this tab: call read_page (or find) on this tab to get refs.",
    },
    Rule {
        id: "login_wall",
        // Evidence, not words in the URL: `navigate` reports `wall` only when the
        // page shows a password field or a CAPTCHA and no sign-out control.
        trigger: Trigger::ResultField { tools: &["navigate"], field: "wall" },
        severity: Severity::Warning,
        escalate_every: 2,
        text: "This page looks like a login or CAPTCHA wall ({matched}): sign in if you have the credentials (oc_credential_fill, or fill_form; oc_totp_generate for codes), otherwise hand the tab to a person with oc_handoff (they solve it in ochre's live view). Do not guess credentials.",
    },
];

/// A hint for one result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    /// The rule's id.
    pub rule: &'static str,
    /// How loud.
    pub severity: Severity,
    /// The advice.
    pub message: String,
}

impl Hint {
    /// `{"rule":..,"severity":..,"message":..}`.
    pub fn to_json(&self) -> Value {
        json!({"rule": self.rule, "severity": self.severity.as_str(), "message": self.message})
    }

    /// The trailing text block.
    pub fn text(&self) -> String {
        format!("hint ({}): {}", self.severity.as_str(), self.message)
    }
}

/// What a session's hints remember.
#[derive(Debug, Default)]
pub struct HintState {
    /// Failures running per call signature (tool + arguments).
    failures: HashMap<String, u32>,
    /// Firings per rule.
    fired: HashMap<&'static str, u32>,
}

/// A call as the engine sees it.
#[derive(Debug)]
pub struct Seen<'a> {
    /// Tool name.
    pub tool: &'a str,
    /// Arguments (host fields removed).
    pub args: &'a Value,
    /// `Ok(structured result)` or `Err(error code, error fields)`.
    pub outcome: Result<Option<&'a Value>, (&'a Code, &'a Map<String, Value>)>,
}

impl HintState {
    /// Take in a call; the hint it earns, if any.
    pub fn observe(&mut self, seen: &Seen<'_>) -> Option<Hint> {
        let sig = format!("{}\u{0}{}", seen.tool, seen.args);
        let count = match &seen.outcome {
            Ok(_) => {
                self.failures.remove(&sig);
                0
            }
            Err(_) => {
                if self.failures.len() > 256 {
                    self.failures.clear();
                }
                let n = self.failures.entry(sig).or_insert(0);
                *n += 1;
                *n
            }
        };
        let mut vars: Map<String, Value> = Map::new();
        vars.insert("tool".into(), json!(seen.tool));
        vars.insert("count".into(), json!(count));
        let rule = RULES.iter().find(|r| match (&r.trigger, &seen.outcome) {
            (Trigger::ErrorCode(code), Err((c, fields))) if *c == code => {
                for (k, v) in fields.iter() {
                    vars.insert(k.clone(), v.clone());
                }
                true
            }
            (Trigger::RepeatedFailure(min), Err(_)) => count >= *min,
            (Trigger::ResultField { tools, field }, Ok(Some(result)))
                if tools.contains(&seen.tool) =>
            {
                match result[field].as_str() {
                    Some(v) => {
                        vars.insert("matched".into(), json!(v));
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        })?;
        let fired = self.fired.entry(rule.id).or_insert(0);
        *fired += 1;
        let levels = (*fired - 1) / rule.escalate_every.max(1);
        Some(Hint {
            rule: rule.id,
            severity: rule.severity.raised(levels),
            message: fill(rule.text, &vars),
        })
    }
}

fn fill(template: &str, vars: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let key = &after[..close];
                match vars.get(key) {
                    Some(Value::String(s)) => out.push_str(s),
                    Some(Value::Null) | None => out.push('?'),
                    Some(v) => out.push_str(&v.to_string()),
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err<'a>(
        tool: &'a str,
        args: &'a Value,
        code: &'a Code,
        f: &'a Map<String, Value>,
    ) -> Seen<'a> {
        Seen { tool, args, outcome: Err((code, f)) }
    }

    #[test]
    fn premature_completion_warns_with_the_missing_count_and_escalates() {
        let mut s = HintState::default();
        let args = json!({"run_id": "run-1", "status": "COMPLETED"});
        let mut f = Map::new();
        f.insert("missing_count".into(), json!(2));
        f.insert("failed_count".into(), json!(0));
        f.insert("suggested_next_action".into(), json!("visit b"));
        let h = s
            .observe(&err("oc_task_run_complete", &args, &Code::BulkCompletionGuardFailed, &f))
            .expect("hint");
        assert_eq!((h.rule, h.severity), ("premature_completion", Severity::Warning));
        assert_eq!(h.message, "Not done yet: 2 item(s) missing, 0 failed. Next: visit b");
        s.observe(&err("oc_task_run_complete", &args, &Code::BulkCompletionGuardFailed, &f));
        let h = s
            .observe(&err("oc_task_run_complete", &args, &Code::BulkCompletionGuardFailed, &f))
            .expect("third");
        assert_eq!(h.severity, Severity::Critical, "escalates");
    }

    #[test]
    fn the_same_failing_call_three_times_is_flagged_and_success_resets_it() {
        let mut s = HintState::default();
        let a = json!({"url": "http://x.test"});
        let f = Map::new();
        assert!(s.observe(&err("navigate", &a, &Code::NavigationFailed, &f)).is_none());
        assert!(s.observe(&err("navigate", &a, &Code::NavigationFailed, &f)).is_none());
        let h = s.observe(&err("navigate", &a, &Code::NavigationFailed, &f)).expect("3rd");
        assert_eq!(h.rule, "repeated_failure");
        assert!(h.message.contains("3 times"), "{}", h.message);
        // Other arguments are another call.
        let b = json!({"url": "http://y.test"});
        assert!(s.observe(&err("navigate", &b, &Code::NavigationFailed, &f)).is_none());
        let ok = Seen { tool: "navigate", args: &a, outcome: Ok(None) };
        assert!(s.observe(&ok).is_none());
        assert!(s.observe(&err("navigate", &a, &Code::NavigationFailed, &f)).is_none(), "reset");
    }

    #[test]
    fn stale_refs_point_to_read_page_and_login_walls_are_spotted() {
        let mut s = HintState::default();
        let f = Map::new();
        let a = json!({"ref": "ax_3"});
        let h = s.observe(&err("interact", &a, &Code::StaleRef, &f)).expect("stale");
        assert_eq!((h.rule, h.severity), ("stale_ref", Severity::Info));
        assert!(h.message.contains("read_page"));
        let page = json!({"url": "http://127.0.0.1:9/account/login?next=/", "title": "Welcome", "wall": "a login form"});
        let seen = Seen { tool: "navigate", args: &a, outcome: Ok(Some(&page)) };
        let h = s.observe(&seen).expect("login");
        assert_eq!(h.rule, "login_wall");
        assert!(h.message.contains("login"), "{}", h.message);
        assert!(h.message.contains("oc_handoff"), "{}", h.message);
        // Words in the URL or title are no evidence.
        let fine =
            json!({"url": "http://127.0.0.1:9/admin/auth/user/", "title": "Sign in history"});
        let seen = Seen { tool: "navigate", args: &a, outcome: Ok(Some(&fine)) };
        assert!(s.observe(&seen).is_none());
        let other = Seen { tool: "read_page", args: &a, outcome: Ok(Some(&page)) };
        assert!(s.observe(&other).is_none(), "only navigate is watched");
    }

    #[test]
    fn templates_fill_known_keys_and_mark_missing_ones() {
        let mut v = Map::new();
        v.insert("a".into(), json!("x"));
        v.insert("n".into(), json!(3));
        assert_eq!(fill("{a}-{n}-{zz}-{", &v), "x-3-?-{");
    }
}
