//! Stage `journal`: every call that ran is journaled and traced (tool, redacted
//! arguments, duration, outcome, intent), then what pages did on their own
//! meanwhile and the output handle the call created. A call refused before it
//! ran writes nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::{Call, Outcome, Stage, done, events, proceed};
use crate::Clock;
use crate::browser::BrowserManager;
use crate::browser::HostBrowser;
use crate::error::ToolError;
use crate::stores::journal::{CallRecord, Journal, Trace, redact_args};
use crate::tool::one_line;

pub(crate) struct JournalStage {
    pub clock: Clock,
    pub session: String,
    pub journal: Arc<Journal>,
    pub trace: Arc<Trace>,
    pub seq: Arc<AtomicU64>,
    pub browser: BrowserManager,
    pub known: Arc<crate::redact::KnownSecrets>,
    pub otlp: Option<Arc<crate::otlp::Otlp>>,
}

impl Stage for JournalStage {
    fn name(&self) -> &'static str {
        "journal"
    }

    fn before<'a>(&'a self, call: &'a mut Call<'_>) -> BoxFuture<'a, Result<(), ToolError>> {
        // Taken now: the calls this one makes name it as their parent.
        let seq = self.next_seq();
        call.seq = Some(seq);
        if let Some(otlp) = &self.otlp {
            otlp.begin(seq, call.options.parent, call.run.as_deref());
        }
        proceed(Ok(()))
    }

    fn refused(&self, call: &Call<'_>, _error: &mut ToolError) {
        if let (Some(otlp), Some(seq)) = (&self.otlp, call.seq) {
            otlp.forget(seq);
        }
    }

    fn after<'a>(&'a self, call: &'a mut Call<'_>, outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        let duration_ms = self.clock.elapsed_ms(call.started);
        let mut args = redact_args(&call.args, &call.info.redact);
        self.known.scrub_value(&mut args);
        let mut intent = call.intent.clone();
        if let Some(i) = &mut intent {
            self.known.scrub_string(i);
        }
        let record = CallRecord {
            tool: call.name.to_owned(),
            plugin: call.info.plugin.clone(),
            args,
            duration_ms,
            ok: outcome.is_ok(),
            summary: match &*outcome {
                Ok(o) => o.summary.clone(),
                Err(e) => one_line(&e.message),
            },
            error: outcome.as_ref().err().map(|e| e.code.to_string()),
            intent,
            parent: call.options.parent,
        };
        let ts = self.clock.now_ms();
        let seq = call.seq.unwrap_or_else(|| self.next_seq());
        if let Err(e) = self.journal.append(&self.session, seq, ts, &record) {
            tracing::error!(error = %e, "cannot write the journal");
        }
        if let Err(e) = self.trace.call(ts, seq, &record) {
            tracing::error!(error = %e, "cannot write the trace");
        }
        self.browser.note_call(&format!("{}: {}", record.tool, record.summary), call.started);
        let mut seen = Vec::new();
        for ev in self.browser.take_unjournaled() {
            let mut body = Value::Object(events::public_body(&ev.body));
            self.known.scrub_value(&mut body);
            if let Value::Object(body) = body {
                if self.otlp.is_some() {
                    seen.push((ev.kind.to_owned(), Value::Object(body.clone())));
                }
                self.event(ts, ev.kind, body);
            }
        }
        if let Some(otlp) = &self.otlp {
            otlp.end(crate::otlp::CallSpan {
                session: &self.session,
                seq,
                tool: &record.tool,
                plugin: &record.plugin,
                args: &record.args,
                ok: record.ok,
                summary: &record.summary,
                error: record.error.as_deref(),
                intent: record.intent.as_deref(),
                run: call.run.as_deref(),
                parent_seq: record.parent,
                elapsed: call.started.elapsed(),
                events: seen,
            });
        }
        if let Some(meta) = &call.created {
            let mut body = Map::new();
            body.insert("handle".into(), json!(meta.output_handle));
            body.insert("source_tool".into(), json!(meta.source_tool));
            body.insert("size_bytes".into(), json!(meta.size_bytes));
            body.insert("mime_type".into(), json!(meta.mime_type));
            self.event(ts, "output_handle_created", body);
        }
        match &*outcome {
            Ok(_) => tracing::debug!(duration_ms, "tool call ok"),
            Err(e) => tracing::info!(duration_ms, code = %e.code, "tool call failed"),
        }
        call.record = Some(record);
        done()
    }
}

impl JournalStage {
    fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// An event line in the journal and the trace.
    fn event(&self, ts: u64, kind: &str, body: Map<String, Value>) {
        let seq = self.next_seq();
        if let Err(e) = self.journal.append_event(&self.session, seq, ts, kind, &body) {
            tracing::error!(error = %e, "cannot write the journal");
        }
        if let Err(e) = self.trace.event(ts, seq, kind, Value::Object(body), Map::new()) {
            tracing::error!(error = %e, "cannot write the trace");
        }
    }
}
