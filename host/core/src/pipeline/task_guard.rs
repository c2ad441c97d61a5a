//! Stage `task_guard` (seed 003): a call belongs to a task run (its `run_id`, or
//! the session's single unfinished run). In a browser-first run the intent guard
//! lets browser tools through and others by the run's policy; a blocked call does
//! nothing and is recorded in the run. Browser successes are counted.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::json;

use super::{Call, Outcome, Sessions, Stage, done, proceed};
use crate::error::ToolError;
use crate::intent::{self, Decision, Scope};
use crate::stores::taskrun::TaskRuns;
use crate::tool::ToolInfo;

pub(crate) struct TaskGuard {
    pub runs: Arc<TaskRuns>,
    pub sessions: Arc<Sessions>,
}

impl Stage for TaskGuard {
    fn name(&self) -> &'static str {
        "task_guard"
    }

    fn check(&self, call: &mut Call<'_>) -> Result<(), ToolError> {
        let explicit = call.take_id("run_id")?;
        // The task run a call names must exist (nothing runs otherwise); a
        // tool that takes `run_id` itself says so in its own words.
        if !call.declares("run_id")
            && let Some(r) = &explicit
        {
            self.runs.load(r)?;
        }
        if !call.is_control() {
            call.run = match call.is_top_level() {
                true => self.run_of(call.session(), explicit),
                // A replay's or a plan's step belongs to the run of the call
                // that made it: the guard holds for it as for that call.
                false => explicit.or_else(|| call.options.run.clone()),
            };
        }
        Ok(())
    }

    fn before<'a>(&'a self, call: &'a mut Call<'_>) -> BoxFuture<'a, Result<(), ToolError>> {
        let checked = match &call.run {
            Some(r) => self.guard_before(r, call.info),
            None => Ok(()),
        };
        proceed(checked)
    }

    fn after<'a>(&'a self, call: &'a mut Call<'_>, outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        // A call that made tool calls (a replay, a plan) counts through them,
        // each on its own.
        let made_calls = call.children.load(std::sync::atomic::Ordering::Relaxed) > 0;
        if let (Ok(_), Some(r), false) = (&*outcome, &call.run, made_calls) {
            self.guard_after(r, call.info);
        }
        done()
    }
}

impl TaskGuard {
    /// The task run a call belongs to: the explicit `run_id`, else the session's
    /// single unfinished run.
    fn run_of(&self, session: Option<&str>, explicit: Option<String>) -> Option<String> {
        if let Some(id) = explicit {
            return Some(id);
        }
        self.sessions.with(session, |s| match s.runs.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        })
    }

    /// The intent guard before a call in run `run`: browser tools pass; the
    /// rest by the run's policy. A block is recorded in the run and nothing runs.
    fn guard_before(&self, run: &str, info: &ToolInfo) -> Result<(), ToolError> {
        // The host's tools and the recording tools manage the session, not the
        // task: never blocked (a replay's steps are guarded one by one).
        if info.control || info.capability == "recording" {
            return Ok(());
        }
        let scope = info.guard_scope();
        let mut blocked = None;
        self.runs.touch_execution(run, |ex| {
            if ex.intent["label"] != "browser_access" || ex.policy.is_null() {
                return None;
            }
            match intent::decide(&ex.policy, scope, ex.network_adjacent_calls) {
                Decision::Allow => {
                    if scope == Scope::NetworkAdjacent {
                        ex.network_adjacent_calls += 1;
                    }
                    None
                }
                Decision::Block(why) => {
                    ex.blocked_calls += 1;
                    ex.stop_reason = Some("tool_policy_blocked".into());
                    let body = json!({"stop_reason": "tool_policy_blocked", "tool": info.name, "scope": scope.as_str(), "reason": why});
                    blocked = Some(why);
                    Some(("tool_policy_blocked".into(), body))
                }
            }
        });
        match blocked {
            None => Ok(()),
            Some(why) => Err(ToolError::tool_policy_blocked(format!(
                "tool_policy_blocked: {} ({}): {why}",
                info.name,
                scope.as_str()
            ))
            .with("stop_reason", "tool_policy_blocked")
            .with("scope", scope.as_str())
            .with("run_id", run)),
        }
    }

    /// After a successful call in run `run`: count browser successes.
    fn guard_after(&self, run: &str, info: &ToolInfo) {
        if info.control || info.guard_scope() != Scope::Browser {
            return;
        }
        self.runs.touch_execution(run, |ex| {
            ex.successful_browser_calls += 1;
            None
        });
    }
}
