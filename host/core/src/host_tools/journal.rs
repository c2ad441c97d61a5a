//! `oc_journal` (the journal of tool calls) and `oc_output_fetch` (a stored
//! output handle, page by page).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{HostTools, Made, Offer};
use crate::error::ToolError;
use crate::tool::{ToolOutput, json_output};

const DEFAULT_COUNT: u64 = 20;
const MAX_COUNT: u64 = 100;

// What `oc_journal` shows: the latest calls, or counts per tool (no docs:
// the listed schema is the tool's description's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub(super) enum View {
    Recent,
    Summary,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct JournalArgs {
    /// default recent
    action: Option<View>,
    /// alias of action
    kind: Option<View>,
    /// default 20
    #[schemars(range(min = 1, max = MAX_COUNT))]
    count: Option<u64>,
    /// alias of count
    #[schemars(range(min = 1, max = MAX_COUNT))]
    limit: Option<u64>,
    /// only this tool
    #[schemars(length(max = 64))]
    tool: Option<String>,
}

// How `oc_output_fetch` pages a handle (no doc: its schema is the field's).
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub(super) enum Paging {
    #[default]
    Auto,
    Items,
    Bytes,
}

impl Paging {
    fn as_str(self) -> &'static str {
        match self {
            Paging::Auto => "auto",
            Paging::Items => "items",
            Paging::Bytes => "bytes",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct OutputFetchArgs {
    #[schemars(length(max = 64))]
    output_handle: String,
    /// next_offset of the previous page
    offset: Option<u64>,
    /// default 200 items or 65536 bytes
    #[schemars(range(min = 1, max = crate::stores::output::MAX_BYTES))]
    limit: Option<u64>,
    #[serde(default)]
    format: Paging,
}

pub(super) fn add(made: &mut Made) {
    // Tier 2: for review and hand-over, not the agent's main loop.
    let journal = Offer::control(true);
    made.add(
        "oc_journal",
        "Read the journal of tool calls: `recent` (latest calls: tool, redacted args, outcome, intent) \
         or `summary` (counts per tool). Use it to review or hand over work.",
        journal,
        |host, args: JournalArgs, _| async move { run_journal(&host, &args) },
    );
    let fetch = Offer { tier: 1, ..Offer::control(true) };
    made.add(
        "oc_output_fetch",
        "Read a stored output handle (oh_...) page by page: JSON lists by items, other output by bytes.",
        fetch,
        |host, args: OutputFetchArgs, _| async move { run_output_fetch(&host, &args) },
    );
}

fn run_output_fetch(host: &HostTools, args: &OutputFetchArgs) -> Result<ToolOutput, ToolError> {
    let handle = args.output_handle.as_str();
    let format = args.format.as_str();
    let page = host.output.fetch(handle, args.offset.unwrap_or(0), args.limit, format)?;
    let summary = format!(
        "{handle} {} {}+{} of {}",
        page["format"].as_str().unwrap_or(""),
        page["offset"],
        page["returned"],
        page["total"]
    );
    Ok(json_output(page, summary))
}

fn run_journal(host: &HostTools, args: &JournalArgs) -> Result<ToolOutput, ToolError> {
    let view = match (args.action, args.kind) {
        (Some(a), Some(k)) if a != k => {
            return Err(ToolError::invalid_argument(
                "kind",
                format!("oc_journal: `action` is {a:?} but `kind` is {k:?}; pass one of them"),
            ));
        }
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => View::Recent,
    };
    let count = args.count.or(args.limit).unwrap_or(DEFAULT_COUNT).min(MAX_COUNT) as usize;
    let tool = args.tool.as_deref();
    let journal = &host.journal;
    if view == View::Summary {
        let mut all = journal.all(tool);
        all.retain(|e| e.get("event").is_none());
        let mut by_tool: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        let mut failed = 0u64;
        for e in &all {
            let slot = by_tool.entry(e["tool"].as_str().unwrap_or("?").to_owned()).or_default();
            slot.0 += 1;
            if e["ok"] != true {
                slot.1 += 1;
                failed += 1;
            }
        }
        let tools: serde_json::Map<String, Value> = by_tool
            .into_iter()
            .map(|(k, (calls, fails))| (k, json!({"calls": calls, "failed": fails})))
            .collect();
        let total = all.len();
        let value = json!({
            "total": total,
            "ok": total as u64 - failed,
            "failed": failed,
            "first": all.first().map(|e| e["ts"].clone()),
            "last": all.last().map(|e| e["ts"].clone()),
            "byTool": tools,
        });
        return Ok(json_output(value, format!("summary of {total} calls")));
    }
    let entries = journal.recent(count, tool);
    let n = entries.len();
    Ok(json_output(json!({ "entries": entries }), format!("{n} recent entries")))
}
