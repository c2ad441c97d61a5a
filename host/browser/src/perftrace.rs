//! Performance traces of a tab (`performance_trace`): Chromium's tracing of
//! the categories DevTools' Performance panel records, over the host's own
//! CDP connection (its events are JSON there, whatever chromiumoxide's types
//! know), streamed out at the end and written as Chrome's trace JSON (what
//! DevTools and Perfetto open), with what it shows: the long tasks, the
//! layout shifts, the largest contentful paint. Bounded: a trace stops by
//! itself at its time bound, records into a buffer of `BUFFER_KB` (what
//! comes once it is full is not kept, and the answer says so), and a file
//! past `FILE_MAX` is refused.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use serde_json::{Value, json};

use super::{BrowserManager, TabId};
use ochre_protocol::page_ops as typed;
use ochre_protocol::{ToolError, lock};

/// What DevTools' Performance panel records: tasks, script, style, layout,
/// paint, frames, user timings and console timings, input latency, loading
/// (the paints), JavaScript samples.
const CATEGORIES: &[&str] = &[
    "toplevel",
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.timeline.frame",
    "disabled-by-default-devtools.timeline.stack",
    "v8.execute",
    "blink.console",
    "blink.user_timing",
    "latencyInfo",
    "loading",
    "disabled-by-default-v8.cpu_profiler",
];
/// The screen, a frame at a time (DevTools' filmstrip): asked for.
const SCREENSHOTS: &str = "disabled-by-default-devtools.screenshot";
/// The trace buffer (KB): recording stops when it is full.
const BUFFER_KB: u64 = 64 * 1024;
/// The largest trace file written (bytes).
const FILE_MAX: usize = 256 << 20;
/// A trace's time bound unless asked (ms), and the longest one asked.
const DEFAULT_MS: u32 = 30_000;
const MAX_MS: u32 = 300_000;
/// A long task (µs), as DevTools and the Long Tasks API have it.
const LONG_TASK_US: f64 = 50_000.0;
/// How many long tasks an answer names.
const LONG_TASKS_SAID: usize = 10;

/// A tab's traces: the one running, and the last one written.
#[derive(Default)]
pub(crate) struct Traces {
    running: Option<Run>,
    /// A run being ended (its file being read and written).
    ending: bool,
    /// Told each time a run's end is over (`ending` falls).
    ended: std::sync::Arc<tokio::sync::Notify>,
    last: Option<typed::TraceWritten>,
    /// Counted at each start: a time bound ends only its own run.
    seq: u64,
}

struct Run {
    seq: u64,
    began: Instant,
}

impl BrowserManager {
    /// `performance_trace` {action: start|stop|status}.
    pub(super) async fn performance_trace(
        &self,
        n: TabId,
        page: &Page,
        a: &typed::PerformanceTrace,
    ) -> Result<typed::TraceTaken, ToolError> {
        let with_start = (a.screenshots.is_some() || a.max_ms.is_some())
            .then_some("screenshots and max_ms go with start");
        let action = start_stop_status(a.action.as_deref(), with_start, a.max_ms, MAX_MS)?;
        let w = self
            .tab_watch(n)
            .ok_or_else(|| ToolError::browser_error("the tab is not watched (it closed?)"))?;
        match action {
            "start" => self.start_trace(n, page, &w.traces, a).await,
            "stop" => self.stop_trace(n, page, &w.traces).await,
            _ => {
                let t = lock(&w.traces);
                Ok(typed::TraceTaken { tracing: t.running.is_some(), trace: t.last.clone() })
            }
        }
    }

    async fn start_trace(
        &self,
        n: TabId,
        page: &Page,
        traces: &std::sync::Mutex<Traces>,
        a: &typed::PerformanceTrace,
    ) -> Result<typed::TraceTaken, ToolError> {
        self.evidence_root()?;
        {
            let t = lock(traces);
            if t.running.is_some() || t.ending {
                return Err(ToolError::invalid_argument(
                    "action",
                    "a trace of this tab is running: performance_trace stop first",
                ));
            }
        }
        let mut included: Vec<&str> = CATEGORIES.to_vec();
        if a.screenshots == Some(true) {
            included.push(SCREENSHOTS);
        }
        let link = self.frame_link(self.slot_of_tab(n)).await?;
        let target = page.target_id().as_ref().to_owned();
        link.send(
            &target,
            "Tracing.start",
            json!({
                "transferMode": "ReturnAsStream",
                "streamFormat": "json",
                "streamCompression": "none",
                "traceConfig": {
                    "recordMode": "recordUntilFull",
                    "traceBufferSizeInKb": BUFFER_KB,
                    "includedCategories": included,
                    "excludedCategories": ["*"],
                },
            }),
        )
        .await?;
        let bound = Duration::from_millis(u64::from(a.max_ms.unwrap_or(DEFAULT_MS)));
        let seq = {
            let mut t = lock(traces);
            t.seq += 1;
            t.running = Some(Run { seq: t.seq, began: Instant::now() });
            t.seq
        };
        // Its time bound: it ends by itself (a later stop answers it).
        let (me, page) = (self.clone(), page.clone());
        tokio::spawn(async move {
            tokio::time::sleep(bound).await;
            let Some(w) = me.tab_watch(n) else { return };
            if lock(&w.traces).running.as_ref().is_some_and(|r| r.seq == seq) {
                let why = format!("its time bound of {} ms", bound.as_millis());
                if let Err(e) = me.end_trace(n, &page, &w.traces, Some(why)).await {
                    tracing::warn!(error = %e.message, "a trace at its time bound");
                }
            }
        });
        Ok(typed::TraceTaken { tracing: true, trace: None })
    }

    async fn stop_trace(
        &self,
        n: TabId,
        page: &Page,
        traces: &std::sync::Mutex<Traces>,
    ) -> Result<typed::TraceTaken, ToolError> {
        // One that its bound is ending: its file, once written.
        let ended = lock(traces).ended.clone();
        let written = async {
            loop {
                let told = ended.notified();
                tokio::pin!(told);
                told.as_mut().enable();
                if !lock(traces).ending {
                    break;
                }
                told.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(60), written).await.map_err(|_| {
            ToolError::timeout("the trace its time bound ended took over 60 s to be written")
        })?;
        let running = lock(traces).running.is_some();
        if !running {
            let last = lock(traces).last.clone();
            return match last {
                Some(t) if t.ended_by.is_some() => {
                    Ok(typed::TraceTaken { tracing: false, trace: Some(t) })
                }
                _ => Err(ToolError::invalid_argument(
                    "action",
                    "no trace of this tab is running: performance_trace start first",
                )),
            };
        }
        let written = self.end_trace(n, page, traces, None).await?;
        Ok(typed::TraceTaken { tracing: false, trace: Some(written) })
    }

    /// End tab `n`'s trace, read it out and write it; `ended_by`: why, when
    /// not by `stop`.
    async fn end_trace(
        &self,
        n: TabId,
        page: &Page,
        traces: &std::sync::Mutex<Traces>,
        ended_by: Option<String>,
    ) -> Result<typed::TraceWritten, ToolError> {
        let run = {
            let mut t = lock(traces);
            let r = t.running.take();
            t.ending = r.is_some();
            r
        };
        let Some(run) = run else {
            return Err(ToolError::browser_error("the trace was ended meanwhile"));
        };
        let done = self.collect_trace(n, page, &run, ended_by).await;
        let mut t = lock(traces);
        t.ending = false;
        t.ended.notify_waiters();
        if let Ok(written) = &done {
            t.last = Some(written.clone());
        }
        done
    }

    async fn collect_trace(
        &self,
        n: TabId,
        page: &Page,
        run: &Run,
        ended_by: Option<String>,
    ) -> Result<typed::TraceWritten, ToolError> {
        let link = self.frame_link(self.slot_of_tab(n)).await?;
        let target = page.target_id().as_ref().to_owned();
        let done = link
            .send_awaiting(&target, "Tracing.end", json!({}), "Tracing.tracingComplete", 60_000)
            .await?;
        let duration_ms = u64::try_from(run.began.elapsed().as_millis()).unwrap_or(u64::MAX);
        let handle = done["stream"]
            .as_str()
            .ok_or_else(|| ToolError::browser_error("the trace ended without its data"))?
            .to_owned();
        let mut bytes = Vec::new();
        let read = async {
            loop {
                let r = link
                    .send(&target, "IO.read", json!({"handle": handle, "size": 4 << 20}))
                    .await?;
                let data = r["data"].as_str().unwrap_or_default();
                if r["base64Encoded"].as_bool() == Some(true) {
                    let raw = data_encoding::BASE64.decode(data.as_bytes()).map_err(|e| {
                        ToolError::browser_error(format!("the trace's data did not decode: {e}"))
                    })?;
                    bytes.extend_from_slice(&raw);
                } else {
                    bytes.extend_from_slice(data.as_bytes());
                }
                if bytes.len() > FILE_MAX {
                    return Err(ToolError::browser_error(format!(
                        "the trace is over {} MB: trace a shorter stretch",
                        FILE_MAX >> 20
                    )));
                }
                if r["eof"].as_bool() != Some(false) {
                    return Ok(());
                }
            }
        };
        let outcome = read.await;
        let _ = link.send(&target, "IO.close", json!({"handle": handle})).await;
        outcome?;
        let text = self.scrub(&String::from_utf8_lossy(&bytes));
        let doc: Value = serde_json::from_str(&text).map_err(|e| {
            ToolError::browser_error(format!("the trace Chromium gave is not JSON: {e}"))
        })?;
        let mut written = summarize(&doc);
        written.duration_ms = duration_ms;
        written.ended_by = ended_by.or_else(|| {
            (done["dataLossOccurred"].as_bool() == Some(true)).then(|| {
                format!("its buffer filled ({} MB): what came after is not in it", BUFFER_KB >> 10)
            })
        });
        written.bytes = text.len();
        written.path = self.write_evidence_file("trace", "json", text.as_bytes())?;
        Ok(written)
    }

    /// The last trace written of tab `n`, if any: its file's bytes.
    pub(super) fn last_trace(&self, n: TabId) -> Option<Vec<u8>> {
        let w = self.tab_watch(n)?;
        let path = lock(&w.traces).last.as_ref()?.path.clone();
        std::fs::read(path).ok()
    }
}

/// The action of a tool that records a tab (`start`, `stop` or `status`,
/// the default), checked with what goes with `start` only (`with_start`:
/// what to say when given, if it was) and its time bound (1 s to `max`).
pub(super) fn start_stop_status<'a>(
    action: Option<&'a str>,
    with_start: Option<&str>,
    max_ms: Option<u32>,
    max: u32,
) -> Result<&'a str, ToolError> {
    let action = action.unwrap_or("status");
    if !matches!(action, "start" | "stop" | "status") {
        return Err(ToolError::invalid_argument(
            "action",
            format!("action is start, stop or status, not {action:?}"),
        ));
    }
    if let Some(said) = with_start.filter(|_| action != "start") {
        return Err(ToolError::invalid_argument("max_ms", said));
    }
    if max_ms.is_some_and(|m| !(1_000..=max).contains(&m)) {
        return Err(ToolError::invalid_argument(
            "max_ms",
            format!("max_ms is between 1000 and {max}"),
        ));
    }
    Ok(action)
}

/// What a trace (Chrome's trace JSON: `{traceEvents: [...]}` or the list)
/// shows: its events, the traced tab's long tasks and what ran in them, the
/// layout shifts no input caused and their worst window, the largest
/// contentful paint after a navigation it holds. (Its path, size, duration
/// and end are the caller's.)
pub(super) fn summarize(doc: &Value) -> typed::TraceWritten {
    let empty = Vec::new();
    let events = doc["traceEvents"].as_array().or_else(|| doc.as_array()).unwrap_or(&empty);
    let thread = |e: &Value| (e["pid"].as_i64().unwrap_or(0), e["tid"].as_i64().unwrap_or(0));
    // The traced tab's renderers: Chromium traces the whole browser, and says
    // which processes the tab's frames were in when the trace began and as
    // they committed later (none said, as an older trace: every renderer).
    let mut ours: HashSet<i64> = HashSet::new();
    for e in events {
        let d = &e["args"]["data"];
        if e["name"] == "TracingStartedInBrowser" {
            ours.extend(
                d["frames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f["processId"].as_i64()),
            );
        } else if e["name"] == "FrameCommittedInBrowser" {
            ours.extend(d["processId"].as_i64());
        }
    }
    let mine = |e: &Value| ours.is_empty() || ours.contains(&e["pid"].as_i64().unwrap_or(0));
    let mains: HashSet<(i64, i64)> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .filter(|e| e["args"]["name"] == "CrRendererMain")
        .map(thread)
        .filter(|(pid, _)| ours.is_empty() || ours.contains(pid))
        .collect();
    let t0 = events
        .iter()
        .find(|e| e["name"] == "TracingStartedInBrowser")
        .map(|e| num(&e["ts"]))
        .or_else(|| {
            events
                .iter()
                .filter(|e| e["ph"] != "M")
                .map(|e| num(&e["ts"]))
                .filter(|t| *t > 0.0)
                .reduce(f64::min)
        })
        .unwrap_or(0.0);
    // The renderers' tasks, with what ran on their thread.
    let on_main: Vec<&Value> =
        events.iter().filter(|e| e["ph"] == "X" && mains.contains(&thread(e))).collect();
    let mut long: Vec<(f64, f64, (i64, i64))> = Vec::new();
    for e in &on_main {
        let name = e["name"].as_str().unwrap_or_default();
        let (ts, dur) = (num(&e["ts"]), num(&e["dur"]));
        if matches!(name, "RunTask" | "ThreadControllerImpl::RunTask") && dur >= LONG_TASK_US {
            // (A task inside one already counted is the same work.)
            let th = thread(e);
            if !long.iter().any(|(s, d, t)| *t == th && *s <= ts && ts + dur <= s + d) {
                long.retain(|(s, d, t)| !(*t == th && ts <= *s && s + d <= ts + dur));
                long.push((ts, dur, th));
            }
        }
    }
    long.sort_by(|a, b| b.1.total_cmp(&a.1));
    let long_tasks = long
        .iter()
        .take(LONG_TASKS_SAID)
        .map(|(ts, dur, th)| {
            let inside: Vec<&&Value> = on_main
                .iter()
                .filter(|e| thread(e) == *th && num(&e["ts"]) >= *ts && num(&e["ts"]) < ts + dur)
                .collect();
            typed::LongTask {
                at_ms: round1((ts - t0) / 1000.0),
                duration_ms: round1(dur / 1000.0),
                what: what_ran(&inside),
            }
        })
        .collect();
    let (layout_shifts, cls) = layout_shifts(events, &mine);
    let lcp_ms = largest_paint(events, &mine);
    typed::TraceWritten {
        events: events.len(),
        long_tasks,
        layout_shifts,
        cls,
        lcp_ms,
        ..Default::default()
    }
}

/// The layout shifts no input caused (of the traced tab: `mine`), and
/// their worst window (gaps under 1 s, 5 s at most), as CLS.
fn layout_shifts(events: &[Value], mine: &dyn Fn(&Value) -> bool) -> (u32, f64) {
    let mut shifts: Vec<(f64, f64)> = events
        .iter()
        .filter(|e| e["name"] == "LayoutShift" && mine(e))
        .filter(|e| e["args"]["data"]["had_recent_input"] != true)
        .map(|e| (num(&e["ts"]), num(&e["args"]["data"]["score"])))
        .collect();
    shifts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut cls, mut window, mut first, mut prev) = (0.0f64, 0.0f64, 0.0f64, f64::MIN);
    for (ts, score) in &shifts {
        if ts - prev >= 1_000_000.0 || ts - first >= 5_000_000.0 {
            window = 0.0;
            first = *ts;
        }
        window += score;
        prev = *ts;
        cls = cls.max(window);
    }
    (u32::try_from(shifts.len()).unwrap_or(u32::MAX), (cls * 10_000.0).round() / 10_000.0)
}

/// The last candidate for the largest contentful paint (of the traced tab:
/// `mine`), in ms after the start of its navigation.
fn largest_paint(events: &[Value], mine: &dyn Fn(&Value) -> bool) -> Option<f64> {
    let starts: Vec<(&Value, f64)> = events
        .iter()
        .filter(|e| e["name"] == "navigationStart" && mine(e))
        .filter(|e| e["args"]["data"]["isOutermostMainFrame"] != false)
        .filter(|e| {
            let url = e["args"]["data"]["documentLoaderURL"].as_str().unwrap_or_default();
            !url.is_empty() && url != "about:blank"
        })
        .map(|e| (&e["args"]["data"]["navigationId"], num(&e["ts"])))
        .collect();
    events
        .iter()
        .filter(|e| e["name"] == "largestContentfulPaint::Candidate" && mine(e))
        .filter(|e| e["args"]["data"]["isOutermostMainFrame"] != false)
        .filter_map(|e| {
            let nav = &e["args"]["data"]["navigationId"];
            let begun = starts.iter().find(|(id, _)| !nav.is_null() && *id == nav)?.1;
            Some((num(&e["ts"]), round1((num(&e["ts"]) - begun) / 1000.0)))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, ms)| ms)
}

/// What ran in a task, from the events inside it: what set it going (an
/// event handled, a timer, an animation frame, a script evaluated, HTML
/// parsed) and the longest function called, with where it is.
fn what_ran(inside: &[&&Value]) -> String {
    let longest = |names: &[&str]| {
        inside
            .iter()
            .filter(|e| names.iter().any(|n| e["name"] == *n))
            .max_by(|a, b| num(&a["dur"]).total_cmp(&num(&b["dur"])))
    };
    let mut parts = Vec::new();
    if let Some(e) = longest(&[
        "EventDispatch",
        "TimerFire",
        "FireAnimationFrame",
        "EvaluateScript",
        "ParseHTML",
        "FireIdleCallback",
    ]) {
        let d = &e["args"]["data"];
        parts.push(match e["name"].as_str().unwrap_or_default() {
            "EventDispatch" => format!("a {} event", d["type"].as_str().unwrap_or("DOM")),
            "TimerFire" => "a timer".to_owned(),
            "FireAnimationFrame" => "an animation frame".to_owned(),
            "FireIdleCallback" => "an idle callback".to_owned(),
            "ParseHTML" => "parsing HTML".to_owned(),
            _ => match d["url"].as_str() {
                Some(u) if !u.is_empty() => format!("the script {u}"),
                _ => "a script".to_owned(),
            },
        });
    }
    if let Some(e) = longest(&["FunctionCall"]) {
        let d = &e["args"]["data"];
        let name = d["functionName"].as_str().filter(|s| !s.is_empty()).unwrap_or("(anonymous)");
        let at = match (d["url"].as_str(), d["lineNumber"].as_i64()) {
            (Some(u), Some(l)) if !u.is_empty() => format!(" ({u}:{})", l + 1),
            (Some(u), None) if !u.is_empty() => format!(" ({u})"),
            _ => String::new(),
        };
        parts.push(format!("{name}(){at}"));
    }
    if parts.is_empty() {
        for (name, said) in
            [("Layout", "layout"), ("UpdateLayoutTree", "style"), ("Paint", "paint")]
        {
            if inside.iter().any(|e| e["name"] == name) {
                parts.push(said.to_owned());
            }
        }
    }
    if parts.is_empty() { "a task the trace does not name".to_owned() } else { parts.join(": ") }
}

/// A trace event's number (a time, a duration, a score); 0 when absent.
fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace as Chromium writes one: the traced tab's renderer's main
    /// thread, a click's task of 300 ms that called `crunch`, a short task, a
    /// nested task, two shifts (one after input), a navigation and its
    /// paints; another tab's renderer, busy for 400 ms.
    #[test]
    fn a_trace_is_summed_up_with_its_long_task_shifts_and_paint() {
        let doc = json!({"traceEvents": [
            {"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "CrRendererMain"}},
            {"ph": "M", "name": "thread_name", "pid": 7, "tid": 2, "args": {"name": "Compositor"}},
            {"ph": "M", "name": "thread_name", "pid": 9, "tid": 1, "args": {"name": "CrRendererMain"}},
            {"ph": "I", "name": "TracingStartedInBrowser", "pid": 1, "tid": 1, "ts": 1_000_000,
             "args": {"data": {"frames": [{"frame": "F1", "processId": 7, "url": "about:blank"}]}}},
            {"ph": "X", "name": "RunTask", "pid": 9, "tid": 1, "ts": 2_500_000, "dur": 400_000},
            {"ph": "R", "name": "navigationStart", "pid": 7, "tid": 1, "ts": 1_100_000,
             "args": {"data": {"navigationId": "N1", "documentLoaderURL": "http://127.0.0.1/p.html", "isOutermostMainFrame": true}}},
            {"ph": "I", "name": "largestContentfulPaint::Candidate", "pid": 7, "tid": 1, "ts": 1_350_000,
             "args": {"data": {"navigationId": "N1", "isOutermostMainFrame": true, "size": 100}}},
            {"ph": "I", "name": "largestContentfulPaint::Candidate", "pid": 7, "tid": 1, "ts": 1_600_000,
             "args": {"data": {"navigationId": "N1", "isOutermostMainFrame": true, "size": 900}}},
            {"ph": "X", "name": "RunTask", "pid": 7, "tid": 1, "ts": 2_000_000, "dur": 300_000},
            {"ph": "X", "name": "ThreadControllerImpl::RunTask", "pid": 7, "tid": 1, "ts": 2_000_010, "dur": 299_000},
            {"ph": "X", "name": "EventDispatch", "pid": 7, "tid": 1, "ts": 2_000_100, "dur": 299_800,
             "args": {"data": {"type": "click"}}},
            {"ph": "X", "name": "FunctionCall", "pid": 7, "tid": 1, "ts": 2_000_200, "dur": 299_000,
             "args": {"data": {"functionName": "crunch", "url": "http://127.0.0.1/p.html", "lineNumber": 11}}},
            {"ph": "X", "name": "RunTask", "pid": 7, "tid": 1, "ts": 3_000_000, "dur": 20_000},
            {"ph": "X", "name": "RunTask", "pid": 7, "tid": 2, "ts": 3_000_000, "dur": 90_000},
            {"ph": "I", "name": "LayoutShift", "pid": 7, "tid": 1, "ts": 4_000_000,
             "args": {"data": {"score": 0.12, "had_recent_input": false}}},
            {"ph": "I", "name": "LayoutShift", "pid": 7, "tid": 1, "ts": 4_200_000,
             "args": {"data": {"score": 0.05, "had_recent_input": false}}},
            {"ph": "I", "name": "LayoutShift", "pid": 7, "tid": 1, "ts": 4_300_000,
             "args": {"data": {"score": 0.5, "had_recent_input": true}}},
            {"ph": "I", "name": "LayoutShift", "pid": 7, "tid": 1, "ts": 9_000_000,
             "args": {"data": {"score": 0.1, "had_recent_input": false}}},
        ]});
        let s = summarize(&doc);
        assert_eq!(s.events, 18);
        assert_eq!(
            s.long_tasks.len(),
            1,
            "another tab's renderer (9) is not the traced one: {s:?}"
        );
        let t = &s.long_tasks[0];
        assert_eq!((t.at_ms, t.duration_ms), (1000.0, 300.0));
        assert_eq!(t.what, "a click event: crunch() (http://127.0.0.1/p.html:12)");
        assert_eq!(s.layout_shifts, 3);
        assert!((s.cls - 0.17).abs() < 1e-9, "{}", s.cls);
        assert_eq!(s.lcp_ms, Some(500.0));
    }

    #[test]
    fn a_trace_without_a_navigation_has_no_paint_and_nothing_long() {
        let s = summarize(
            &json!([{"ph": "X", "name": "RunTask", "pid": 1, "tid": 1, "ts": 5, "dur": 900_000}]),
        );
        assert_eq!(s.events, 1);
        assert!(s.long_tasks.is_empty(), "no renderer's main thread is named");
        assert_eq!((s.layout_shifts, s.lcp_ms), (0, None));
    }
}
