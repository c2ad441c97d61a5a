//! Stage `bulk` (seed 002): a call that names a bulk progress contract
//! (`contract_id`) records its result's items in it: each item with the
//! contract's key is completed, or failed when it carries an `error`.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{Call, Outcome, Stage, done};
use crate::error::ToolError;
use crate::stores::bulk::{self, Progress};
use crate::stores::taskrun::TaskRuns;
use crate::tool::Content;

pub(crate) struct Bulk {
    pub runs: Arc<TaskRuns>,
}

impl Stage for Bulk {
    fn name(&self) -> &'static str {
        "bulk"
    }

    fn check(&self, call: &mut Call<'_>) -> Result<(), ToolError> {
        if call.is_control() {
            return Ok(());
        }
        call.contract_id = call.take_id("contract_id")?;
        // The contract a call names must exist and be open.
        if let Some(id) = &call.contract_id {
            let c = self.runs.contracts.load(id)?;
            if c.closed {
                return Err(ToolError::contract_closed(format!(
                    "{}: bulk progress contract {} is closed (its run is finished)",
                    call.name, c.contract_id
                ))
                .with("field", "contract_id"));
            }
        }
        Ok(())
    }

    fn after<'a>(&'a self, call: &'a mut Call<'_>, outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        if let (Ok(out), Some(c)) = (outcome, &call.contract_id) {
            let line = match out.structured.as_ref().map(|v| self.record_items(c, v)) {
                Some(Ok(line)) => line,
                Some(Err(e)) => format!("progress not recorded in {c}: {}", e.message),
                None => format!("progress not recorded in {c}: the result has no item list"),
            };
            out.content.push(Content::Text(line));
        }
        done()
    }
}

impl Bulk {
    /// Record the items of a result in a contract: each item (of the result's
    /// list: `pages`, `results`, `items`, ...) with a string `item_key` field is
    /// completed, or failed when it carries an `error`. Returns a line to append.
    fn record_items(&self, contract_id: &str, result: &Value) -> Result<String, ToolError> {
        let contracts = &self.runs.contracts;
        let c = contracts.load(contract_id)?;
        let key = c.spec.item_key;
        let list = match result {
            Value::Array(a) => Some(a),
            Value::Object(m) => crate::stores::output::ITEM_FIELDS
                .iter()
                .find_map(|f| m.get(*f).and_then(Value::as_array)),
            _ => None,
        };
        let mut p = Progress::default();
        for item in list.into_iter().flatten() {
            let Some(k) = item.get(&key).and_then(Value::as_str) else {
                continue;
            };
            match item.get("error").filter(|e| !e.is_null()) {
                Some(e) => p.failed.push((
                    k.to_owned(),
                    e.as_str().map(str::to_owned).unwrap_or_else(|| e.to_string()),
                    None,
                )),
                None => p.completed.push(k.to_owned()),
            }
        }
        let (done, failed) = (p.completed.len(), p.failed.len());
        let c = contracts.update(contract_id, &p)?;
        let g = bulk::check(&c);
        Ok(format!(
            "progress {contract_id}: recorded {done} completed, {failed} failed by `{key}`; now {} completed, {} failed{}",
            c.completed_count,
            c.failed_count,
            match g.missing_count {
                Some(m) => format!(", {m} missing"),
                None => String::new(),
            }
        ))
    }
}
