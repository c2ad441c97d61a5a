//! The journal and the trace: one line per executed tool call, written before the
//! result goes back to the agent.
//!
//! - Journal: `<data-dir>/journal/journal-YYYY-MM-DD.jsonl`, one entry per call
//!   (`ts`, `session`, `seq`, `tool`, `plugin`, redacted `args`, `durationMs`, `ok`,
//!   `summary`, `error`, and `intent` when given). Files older than
//!   [`RETENTION_DAYS`] are pruned at startup. Read back by `oc_journal`.
//! - Trace: `<data-dir>/traces/<session>/events.jsonl` (`ts`, `seq`, `kind`, `body`,
//!   plus top-level fields such as `intent`) and `meta.json` (written atomically).
//!
//! Both are append-only: each line reaches the kernel in one `write` before the call
//! returns, so a crash of the server loses nothing already answered.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use crate::Clock;
use crate::stores::{JsonlFile, read_jsonl, write_atomic};
use ochre_protocol::lock;

/// Days of journal kept.
pub const RETENTION_DAYS: u64 = 7;

/// What the pipeline records about one executed call.
#[derive(Debug, Clone)]
pub struct CallRecord {
    /// Tool name.
    pub tool: String,
    /// Plugin name (`host` for host tools).
    pub plugin: String,
    /// Arguments with secrets redacted.
    pub args: Value,
    /// Wall time of the call.
    pub duration_ms: u64,
    /// Whether it succeeded.
    pub ok: bool,
    /// One line, no secrets.
    pub summary: String,
    /// Error code when it failed.
    pub error: Option<String>,
    /// The caller's intent label, if given.
    pub intent: Option<String>,
    /// The journal `seq` of the call that made this one (a replay's, a plan's
    /// step).
    pub parent: Option<u64>,
}

/// A writer an embedder gives for the journal and the trace (one JSON line each).
pub type SharedWriter = std::sync::Arc<Mutex<dyn std::io::Write + Send>>;

/// Where the journal and the trace go ([`crate::HostBuilder::journal`]).
#[derive(Clone, Default)]
pub enum JournalOutput {
    /// Day files under `<data-dir>/journal`, the trace under
    /// `<data-dir>/traces/<session>` (the default; `oc_journal` reads them).
    #[default]
    Files,
    /// Nothing is written (`oc_journal` finds no entries).
    Off,
    /// Each journal entry and trace event as a JSON line to this writer, with
    /// `"stream": "journal"` or `"trace"`; nothing under the data dir.
    Writer(SharedWriter),
}

impl std::fmt::Debug for JournalOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Files => "Files",
            Self::Off => "Off",
            Self::Writer(_) => "Writer",
        })
    }
}

impl JournalOutput {
    /// Write `line` (with `"stream": stream`) to the writer, if that is where
    /// lines go; `None` when they go to files.
    fn to_writer(&self, stream: &str, mut line: Map<String, Value>) -> Option<std::io::Result<()>> {
        match self {
            Self::Files => None,
            Self::Off => Some(Ok(())),
            Self::Writer(w) => {
                line.insert("stream".into(), json!(stream));
                let mut bytes = match serde_json::to_vec(&Value::Object(line)) {
                    Ok(b) => b,
                    Err(e) => return Some(Err(std::io::Error::other(e))),
                };
                bytes.push(b'\n');
                let mut w = lock(w);
                Some(w.write_all(&bytes).and_then(|()| w.flush()))
            }
        }
    }
}

/// The journal of tool calls.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    output: JournalOutput,
    current: Mutex<Option<(String, std::sync::Arc<JsonlFile>)>>,
}

/// `YYYY-MM-DD` of a Unix time in ms (UTC).
pub fn day_of(ms: u64) -> String {
    let s = humantime::format_rfc3339_seconds(
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms),
    )
    .to_string();
    s.get(..10).unwrap_or(&s).to_owned()
}

/// RFC 3339 with milliseconds of a Unix time in ms (UTC).
pub fn iso_of(ms: u64) -> String {
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
        .to_string()
}

impl Journal {
    /// The journal under `<data_dir>/journal`.
    pub fn new(data_dir: &Path) -> Self {
        Self::with_output(data_dir, JournalOutput::Files)
    }

    /// The journal of `data_dir`, written where `output` says.
    pub fn with_output(data_dir: &Path, output: JournalOutput) -> Self {
        Self { dir: data_dir.join("journal"), output, current: Mutex::new(None) }
    }

    /// Delete day files older than [`RETENTION_DAYS`] before `now_ms`.
    pub fn prune(&self, now_ms: u64) {
        let cutoff = day_of(now_ms.saturating_sub(RETENTION_DAYS * 86_400_000));
        for path in self.files() {
            let day = day_from_path(&path);
            if day.as_str() < cutoff.as_str() {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("journal-") && n.ends_with(".jsonl"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    /// Append one entry.
    pub fn append(
        &self,
        session: &str,
        seq: u64,
        ts_ms: u64,
        rec: &CallRecord,
    ) -> std::io::Result<()> {
        let mut entry = Map::new();
        entry.insert("ts".into(), json!(iso_of(ts_ms)));
        entry.insert("session".into(), json!(session));
        entry.insert("seq".into(), json!(seq));
        entry.insert("tool".into(), json!(rec.tool));
        entry.insert("plugin".into(), json!(rec.plugin));
        entry.insert("args".into(), rec.args.clone());
        entry.insert("durationMs".into(), json!(rec.duration_ms));
        entry.insert("ok".into(), json!(rec.ok));
        entry.insert("summary".into(), json!(rec.summary));
        if let Some(code) = &rec.error {
            entry.insert("error".into(), json!(code));
        }
        if let Some(intent) = &rec.intent {
            entry.insert("intent".into(), json!(intent));
        }
        if let Some(parent) = rec.parent {
            entry.insert("parent".into(), json!(parent));
        }
        self.write(ts_ms, entry)
    }

    fn write(&self, ts_ms: u64, entry: Map<String, Value>) -> std::io::Result<()> {
        match self.output {
            JournalOutput::Files => self.file_for(ts_ms).append(&Value::Object(entry)),
            _ => self.output.to_writer("journal", entry).unwrap_or(Ok(())),
        }
    }

    /// Append an event that is not a call (e.g. `output_handle_created`): `ts`,
    /// `session`, `seq`, `event` and the fields of `body`.
    pub fn append_event(
        &self,
        session: &str,
        seq: u64,
        ts_ms: u64,
        event: &str,
        body: &Map<String, Value>,
    ) -> std::io::Result<()> {
        let mut entry = Map::new();
        entry.insert("ts".into(), json!(iso_of(ts_ms)));
        entry.insert("session".into(), json!(session));
        entry.insert("seq".into(), json!(seq));
        entry.insert("event".into(), json!(event));
        for (k, v) in body {
            entry.entry(k.clone()).or_insert_with(|| v.clone());
        }
        self.write(ts_ms, entry)
    }

    fn file_for(&self, ts_ms: u64) -> std::sync::Arc<JsonlFile> {
        let day = day_of(ts_ms);
        let mut cur = lock(&self.current);
        match cur.as_ref() {
            Some((d, f)) if *d == day => f.clone(),
            _ => {
                let f = std::sync::Arc::new(JsonlFile::new(
                    self.dir.join(format!("journal-{day}.jsonl")),
                ));
                *cur = Some((day, f.clone()));
                f
            }
        }
    }

    /// fsync the current day file.
    pub fn sync(&self) -> std::io::Result<()> {
        let cur = lock(&self.current);
        match cur.as_ref() {
            Some((_, f)) => f.sync(),
            None => Ok(()),
        }
    }

    /// The newest `count` entries (oldest first), optionally of one tool.
    pub fn recent(&self, count: usize, tool: Option<&str>) -> Vec<Value> {
        let mut out: Vec<Value> = Vec::new();
        for path in self.files().iter().rev() {
            let mut lines = read_jsonl(path).unwrap_or_default();
            lines.retain(|e| tool.is_none_or(|t| e["tool"] == t));
            let take = count - out.len().min(count);
            let start = lines.len().saturating_sub(take);
            let mut newer = std::mem::take(&mut out);
            out = lines.split_off(start);
            out.append(&mut newer);
            if out.len() >= count {
                break;
            }
        }
        out
    }

    /// Every retained entry (oldest first), optionally of one tool.
    pub fn all(&self, tool: Option<&str>) -> Vec<Value> {
        let mut out = Vec::new();
        for path in self.files() {
            let mut lines = read_jsonl(&path).unwrap_or_default();
            lines.retain(|e| tool.is_none_or(|t| e["tool"] == t));
            out.append(&mut lines);
        }
        out
    }
}

fn day_from_path(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("journal-"))
        .and_then(|n| n.strip_suffix(".jsonl"))
        .unwrap_or("")
        .to_owned()
}

/// The trace of one server session. Its dir and `meta.json` (status
/// `running`) are written with its first event: a run that records nothing (a
/// CLI command, a session with no call) leaves nothing behind.
#[derive(Debug)]
pub struct Trace {
    dir: PathBuf,
    events: JsonlFile,
    output: JournalOutput,
    session: String,
    started_ms: u64,
    /// The dir and `meta.json` are written.
    begun: Mutex<bool>,
}

impl Trace {
    /// Start the trace of `session` (`meta.json` with status `running` is
    /// written with the first event).
    pub fn start(data_dir: &Path, session: &str, clock: &Clock) -> std::io::Result<Self> {
        Self::start_with(data_dir, session, clock, JournalOutput::Files)
    }

    /// Start the trace of `session`, written where `output` says (files:
    /// `meta.json` with status `running` before the first event).
    pub fn start_with(
        data_dir: &Path,
        session: &str,
        clock: &Clock,
        output: JournalOutput,
    ) -> std::io::Result<Self> {
        let dir = data_dir.join("traces").join(session);
        Ok(Self {
            events: JsonlFile::new(dir.join("events.jsonl")),
            dir,
            output,
            session: session.to_owned(),
            started_ms: clock.now_ms(),
            begun: Mutex::new(false),
        })
    }

    /// The dir and `meta.json` (status `running`), once, before the first
    /// event is written.
    fn begin(&self) -> std::io::Result<()> {
        let mut begun = lock(&self.begun);
        if !*begun {
            std::fs::create_dir_all(&self.dir)?;
            self.write_meta("running", None)?;
            *begun = true;
        }
        Ok(())
    }

    fn write_meta(&self, status: &str, ended_ms: Option<u64>) -> std::io::Result<()> {
        let meta = json!({
            "session_id": self.session,
            "started_at": iso_of(self.started_ms),
            "ended_at": ended_ms.map(iso_of),
            "status": status,
        });
        let bytes = serde_json::to_vec_pretty(&meta).map_err(std::io::Error::other)?;
        write_atomic(&self.dir.join("meta.json"), &bytes)
    }

    /// The directory of this session's trace.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Append one event.
    pub fn event(
        &self,
        ts_ms: u64,
        seq: u64,
        kind: &str,
        body: Value,
        extra: Map<String, Value>,
    ) -> std::io::Result<()> {
        let mut ev = Map::new();
        ev.insert("ts".into(), json!(ts_ms));
        ev.insert("seq".into(), json!(seq));
        ev.insert("kind".into(), json!(kind));
        ev.insert("body".into(), body);
        for (k, v) in extra {
            ev.entry(k).or_insert(v);
        }
        match self.output {
            JournalOutput::Files => {
                self.begin()?;
                self.events.append(&Value::Object(ev))
            }
            _ => self.output.to_writer("trace", ev).unwrap_or(Ok(())),
        }
    }

    /// The event for one executed call.
    pub fn call(&self, ts_ms: u64, seq: u64, rec: &CallRecord) -> std::io::Result<()> {
        let mut body = Map::new();
        body.insert("tool".into(), json!(rec.tool));
        body.insert("plugin".into(), json!(rec.plugin));
        body.insert("args".into(), rec.args.clone());
        body.insert("ok".into(), json!(rec.ok));
        body.insert("durationMs".into(), json!(rec.duration_ms));
        if let Some(code) = &rec.error {
            body.insert("error".into(), json!(code));
        }
        let mut extra = Map::new();
        if let Some(intent) = &rec.intent {
            extra.insert("intent".into(), json!(intent));
        }
        if let Some(parent) = rec.parent {
            extra.insert("parent".into(), json!(parent));
        }
        self.event(ts_ms, seq, "tool_call", Value::Object(body), extra)
    }

    /// fsync the events.
    pub fn sync(&self) -> std::io::Result<()> {
        self.events.sync()
    }

    /// Mark the session ended (a trace with no event stays unwritten).
    pub fn finish(&self, clock: &Clock) -> std::io::Result<()> {
        let begun = *lock(&self.begun);
        if !matches!(self.output, JournalOutput::Files) || !begun {
            return Ok(());
        }
        self.events.sync()?;
        self.write_meta("completed", Some(clock.now_ms()))
    }
}

pub use ochre_protocol::tool::is_sensitive_name;

/// Longest string value kept in a logged argument.
const MAX_LOGGED_STRING: usize = 256;

/// A copy of `args` fit for the journal: values of `redact` keys (top level) and of
/// sensitive-looking keys (any depth) replaced by `"[REDACTED]"`, long strings cut.
pub fn redact_args(args: &Value, redact: &[String]) -> Value {
    redact_with(args, redact, Some(MAX_LOGGED_STRING))
}

fn redact_with(args: &Value, redact: &[String], max: Option<usize>) -> Value {
    fn walk(v: &Value, top: Option<&[String]>, max: Option<usize>) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let hide =
                            top.is_some_and(|r| r.iter().any(|x| x == k)) || is_sensitive_name(k);
                        let v = if hide { json!("[REDACTED]") } else { walk(v, None, max) };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|i| walk(i, None, max)).collect()),
            Value::String(s) if max.is_some_and(|m| s.len() > m) => {
                let cut = s.floor_char_boundary(max.unwrap_or(0));
                json!(format!("{}…(+{} bytes)", &s[..cut], s.len() - cut))
            }
            other => other.clone(),
        }
    }
    walk(args, Some(redact), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_declared_and_sensitive_keys_and_cuts_long_strings() {
        let args = json!({
            "domain": "example.com",
            "value": "s3cr3t",
            "nested": {"apiKey": "k", "ok": 1},
            "long": "x".repeat(1000),
        });
        let out = redact_args(&args, &["value".to_owned()]);
        assert_eq!(out["domain"], "example.com");
        assert_eq!(out["value"], "[REDACTED]");
        assert_eq!(out["nested"]["apiKey"], "[REDACTED]");
        assert_eq!(out["nested"]["ok"], 1);
        assert!(out["long"].as_str().expect("str").len() < 300);
        assert!(!out.to_string().contains("s3cr3t"));
    }

    #[test]
    fn journal_recent_spans_days_and_keeps_order() {
        let dir = std::env::temp_dir().join(format!("ochre-journal-{}", std::process::id()));
        let j = Journal::new(&dir);
        let rec = |tool: &str| CallRecord {
            tool: tool.into(),
            plugin: "p".into(),
            args: json!({}),
            duration_ms: 1,
            ok: true,
            summary: "s".into(),
            error: None,
            intent: None,
            parent: None,
        };
        let day = 86_400_000;
        j.append("s", 1, 10 * day, &rec("a")).expect("append");
        j.append("s", 2, 11 * day, &rec("b")).expect("append");
        j.append("s", 3, 11 * day + 5, &rec("c")).expect("append");
        let tools: Vec<_> = j.recent(2, None).iter().map(|e| e["tool"].clone()).collect();
        assert_eq!(tools, [json!("b"), json!("c")]);
        let tools: Vec<_> = j.recent(10, None).iter().map(|e| e["tool"].clone()).collect();
        assert_eq!(tools, [json!("a"), json!("b"), json!("c")]);
        assert_eq!(j.recent(10, Some("a")).len(), 1);
        j.prune(11 * day + RETENTION_DAYS * day);
        assert_eq!(j.all(None).len(), 2, "day 10 pruned, day 11 kept");
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
