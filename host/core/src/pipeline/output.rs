//! Stage `output` (seed 004): `output_mode: "handle"` (or `"auto"` over a size)
//! stores a result as an output handle and answers with its descriptor; any
//! other result over the response budget is stored whole and answered with a
//! first view of it ([`super::budget`]).

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::{Call, Outcome, Stage, budget, done};
use crate::error::ToolError;
use crate::stores::output::{HandleMeta, HandleStore, OutputMode};
use crate::tool::{Content, ToolOutput, one_line, payload_of};

pub(crate) struct Output {
    pub store: Arc<HandleStore>,
    /// The response budget in tokens (0: none).
    pub max_response_tokens: usize,
}

impl Stage for Output {
    fn name(&self) -> &'static str {
        "output"
    }

    fn check(&self, call: &mut Call<'_>) -> Result<(), ToolError> {
        // An explicit `output_mode: "inline"` opts out of the response budget.
        call.asked_inline = call.args.get("output_mode") == Some(&json!("inline"));
        if call.info.output_mode {
            let name = call.name;
            if let Some(args) = call.fields() {
                call.mode = output_mode_of(name, args)?;
            }
        }
        Ok(())
    }

    fn after<'a>(&'a self, call: &'a mut Call<'_>, outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        if let Ok(out) = outcome {
            let stored = match call.mode {
                OutputMode::Handle | OutputMode::Auto(_) => {
                    Some(to_handle(&self.store, call.name, std::mem::take(out), call.mode))
                }
                OutputMode::Inline if !call.asked_inline && !call.is_control() => {
                    Some(budget::apply(
                        &self.store,
                        call.name,
                        std::mem::take(out),
                        self.max_response_tokens,
                    ))
                }
                OutputMode::Inline => None,
            };
            if let Some(stored) = stored {
                *outcome = stored.map(|(out, meta)| {
                    call.created = meta;
                    out
                });
            }
        }
        done()
    }
}

/// Take `output_mode` and `output_inline_limit_bytes` out of the arguments.
fn output_mode_of(tool: &str, args: &mut Map<String, Value>) -> Result<OutputMode, ToolError> {
    let mode = args.remove("output_mode");
    let limit = args.remove("output_inline_limit_bytes");
    let mode = match mode.as_ref().map(|m| m.as_str()) {
        None => "inline",
        Some(Some(m @ ("inline" | "handle" | "auto"))) => m,
        Some(_) => {
            return Err(ToolError::invalid_argument(
                "output_mode",
                format!("{tool}: `output_mode` must be one of \"inline\", \"handle\", \"auto\""),
            ));
        }
    };
    let limit = match limit {
        None => None,
        Some(v) => match v.as_u64().filter(|n| (1..=1 << 30).contains(n)) {
            Some(n) => Some(n),
            None => {
                return Err(ToolError::invalid_argument(
                    "output_inline_limit_bytes",
                    format!(
                        "{tool}: `output_inline_limit_bytes` must be an integer from 1 to 1073741824"
                    ),
                ));
            }
        },
    };
    match (mode, limit) {
        ("auto", l) => {
            Ok(OutputMode::Auto(l.unwrap_or(crate::stores::output::DEFAULT_INLINE_LIMIT)))
        }
        (_, Some(_)) => Err(ToolError::invalid_argument(
            "output_inline_limit_bytes",
            format!("{tool}: `output_inline_limit_bytes` applies only with output_mode \"auto\""),
        )),
        ("handle", None) => Ok(OutputMode::Handle),
        _ => Ok(OutputMode::Inline),
    }
}

/// Apply `handle` / `auto` to a successful result.
fn to_handle(
    store: &HandleStore,
    tool: &str,
    out: ToolOutput,
    mode: OutputMode,
) -> Result<(ToolOutput, Option<HandleMeta>), ToolError> {
    let payload = payload_of(&out);
    if let OutputMode::Auto(limit) = mode
        && payload.size() as u64 <= limit
    {
        return Ok((out, None));
    }
    let (meta, descriptor) = store.create(tool, &payload).map_err(|e| {
        ToolError::storage_failed(format!("{tool}: cannot store the output handle: {e}"))
    })?;
    let summary = format!("{} -> {} ({} bytes)", out.summary, meta.output_handle, meta.size_bytes);
    Ok((
        ToolOutput {
            content: vec![Content::Text(descriptor.to_string())],
            structured: Some(descriptor),
            summary: one_line(&summary),
        },
        Some(meta),
    ))
}
