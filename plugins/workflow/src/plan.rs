//! Saved plans: a sequence of tool calls with `{{param}}` placeholders, replayed
//! on one tab through the host's pipeline (`tools` interface), so every gate,
//! validation and journal applies to each step.

use std::collections::BTreeMap;

use ochre_sdk::{Output, ToolError, kv, params, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// One step of a plan.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    #[schemars(length(min = 1, max = 64))]
    pub tool: String,
    /// String values may hold `{{param}}`.
    pub args: Option<Map<String, Value>>,
}

/// `workflow_save_plan` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SaveArgs {
    /// Saving again replaces the plan.
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9_-]+$"))]
    plan_id: String,
    #[schemars(length(max = 500))]
    description: Option<String>,
    #[schemars(length(min = 1, max = 50))]
    steps: Vec<Step>,
}

/// `execute_plan` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExecuteArgs {
    #[schemars(length(min = 1, max = 64))]
    plan_id: String,
    /// The tab to run it on (e.g. a worker's).
    #[schemars(length(min = 1, max = 16))]
    tab_id: String,
    /// Values of the plan's `{{param}}` placeholders; `secret:NAME` or
    /// `totp:DOMAIN` for a secret the server resolves (never seen here).
    params: Option<BTreeMap<String, String>>,
    /// Stop at the first failing step (default true).
    stop_on_error: Option<bool>,
}

#[derive(Serialize, Deserialize)]
struct Plan {
    id: String,
    description: Option<String>,
    steps: Vec<Step>,
    params: Vec<String>,
}

/// The parameters of a plan's steps, in order of first use.
fn plan_params(steps: &[Step]) -> Vec<params::Placeholder> {
    let all: Vec<Value> =
        steps.iter().map(|s| Value::Object(s.args.clone().unwrap_or_default())).collect();
    params::placeholders(&Value::Array(all))
}

/// Save a plan: tool calls with {{param}} placeholders, for execute_plan to replay on
/// any tab.
#[ochre_sdk::tool(name = "workflow_save_plan", tier = 2, scope = Local)]
pub fn save_plan(a: SaveArgs) -> Result<Output, ToolError> {
    for (i, s) in a.steps.iter().enumerate() {
        if s.tool == "execute_plan" {
            return Err(ToolError::invalid_argument(
                &format!("steps.{i}.tool"),
                "a plan cannot run execute_plan",
            ));
        }
    }
    let params: Vec<String> = plan_params(&a.steps).into_iter().map(|p| p.name).collect();
    let plan = Plan {
        id: a.plan_id.clone(),
        description: a.description,
        steps: a.steps,
        params: params.clone(),
    };
    let text = serde_json::to_string(&plan).map_err(|e| ToolError::internal(e.to_string()))?;
    kv::set(&format!("plan:{}", a.plan_id), &text)
        .map_err(|e| ToolError::state_error(format!("cannot save the plan: {e}")))?;
    let body = json!({"planId": a.plan_id, "steps": plan.steps.len(), "params": params});
    Ok(Output::json(&body)?.with_summary(format!(
        "plan {} saved ({} steps)",
        a.plan_id,
        plan.steps.len()
    )))
}

/// Run a saved plan on a tab with parameter values; each step goes through the normal
/// tool pipeline.
#[ochre_sdk::tool(name = "execute_plan", tier = 2, scope = Browser, redact = "params")]
pub fn execute_plan(a: ExecuteArgs) -> Result<Output, ToolError> {
    let text = kv::get(&format!("plan:{}", a.plan_id)).ok_or_else(|| {
        ToolError::plan_not_found(format!(
            "no plan {:?}; save one with workflow_save_plan",
            a.plan_id
        ))
        .with_details(json!({"field": "planId"}))
    })?;
    let plan: Plan = serde_json::from_str(&text)
        .map_err(|e| ToolError::state_error(format!("plan unreadable: {e}")))?;
    let given = a.params.unwrap_or_default();
    let found = plan_params(&plan.steps);
    let missing = params::missing(&found, &given);
    if !missing.is_empty() {
        return Err(ToolError::missing_parameters(format!(
                "plan {} needs values for: {} (give them in `params`; a secret as \"secret:NAME\" or \"totp:DOMAIN\"); no step ran",
                plan.id,
                missing.join(", ")
            ),
        )
        .with_details(json!({
            "field": "params",
            "missing": missing,
            // Which are secrets (by name): a client is asked for those on
            // ochre's own page, never by form.
            "params": missing.iter().map(|name| json!({
                "name": name,
                "secret": ochre_sdk::is_sensitive_name(name),
            })).collect::<Vec<_>>(),
        })));
    }
    let stop = a.stop_on_error.unwrap_or(true);
    let mut steps = Vec::with_capacity(plan.steps.len());
    let mut failed = 0;
    for (i, s) in plan.steps.iter().enumerate() {
        let mut args =
            params::fill(&Value::Object(s.args.clone().unwrap_or_default()), &given, &found);
        if let Value::Object(m) = &mut args {
            m.insert("tabId".into(), json!(a.tab_id));
        }
        ochre_sdk::progress::report(i as f64, Some(plan.steps.len() as f64), Some(&s.tool));
        match tools::call(&s.tool, &args) {
            Ok(out) => steps
                .push(json!({"step": i + 1, "tool": s.tool, "ok": true, "summary": out.summary})),
            Err(e) => {
                failed += 1;
                steps.push(json!({"step": i + 1, "tool": s.tool, "ok": false, "error": {"code": e.code, "message": e.message}}));
                if stop {
                    break;
                }
            }
        }
    }
    let ran = steps.len();
    let body = json!({
        "planId": plan.id,
        "tabId": a.tab_id,
        "ok": failed == 0 && ran == plan.steps.len(),
        "steps": steps,
    });
    Ok(Output::json(&body)?.with_summary(format!(
        "plan {}: {ran} of {} steps ran, {failed} failed",
        plan.id,
        plan.steps.len()
    )))
}
