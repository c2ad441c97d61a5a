//! OpenTelemetry export (`--otlp-endpoint`): the journal's calls reach a real
//! OTLP receiver from PyPI (oteltest's HTTP sink) as spans, one trace per task
//! run or top-level call, a replay's steps as child spans of the replay, the
//! error code as status and the journal's masking; a collector that is down
//! costs the calls nothing but their spans (said in the log); a bad setting
//! stops the server, named.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use ochre_tests::*;
use serde_json::{Value, json};

const SECRET: &str = "otlp-Hunter2-secret";

/// The spans the sink took, waited for until there is one per journaled call
/// (the last ones are sent when the server ends).
async fn spans_of_every_call(sink: &OtlpSink, calls: usize) -> Result<Vec<Value>> {
    let end = Instant::now() + Duration::from_secs(15);
    loop {
        let spans = sink.spans();
        if spans.len() >= calls {
            return Ok(spans);
        }
        ensure!(
            Instant::now() < end,
            "the sink took {} spans in 15 s, the journal has {calls} calls: {spans:#?}",
            spans.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn calls_reach_a_collector_as_spans_with_the_journals_parents_and_masking() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("otlp");
    let sink = OtlpSink::start(data.path()).await?;
    let envs = [
        ("OTEL_BSP_SCHEDULE_DELAY", "50"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k%20ey"),
        ("OTEL_SERVICE_NAME", "agents-ochre"),
    ];
    let client = stdio_client(data.path(), &["--otlp-endpoint", &sink.base], &envs).await?;
    // Outside any run: a recording of two steps, a password typed, a call
    // that fails.
    let rec = client.tool_json("oc_recording_start", json!({"label": "otlp"})).await?;
    let id = rec["recordingId"].as_str().expect("id").to_owned();
    navigate(&client, &site.url("form.html")).await?;
    client.tool_text("read_page", json!({"mode": "text"})).await?;
    client.tool_json("oc_recording_stop", json!({})).await?;
    navigate(&client, &site.url("login.html")).await?;
    let snap = snapshot(&client).await?;
    let pw = ref_of(&snap, "textbox", "Password");
    client.tool_text("form_input", json!({"ref": pw, "value": SECRET})).await?;
    // (A call refused before it runs, a bad ref say, is not journaled: no span.)
    client.tool_error("form_input", json!({"ref": "e99999", "value": "x"})).await?;
    let bad = client
        .tool_error(
            "wait_for",
            json!({"type": "selector", "value": "#never-there", "timeout": 200}),
        )
        .await?;
    // A task run: its calls, and the replay's steps inside it.
    let run = client.tool_json("oc_task_run_start", json!({"goal": "read the form page"})).await?;
    let run_id = run["run_id"].as_str().expect("run_id").to_owned();
    let r = client.tool_json("oc_recording_replay", json!({"recordingId": id})).await?;
    assert_eq!(r["ok"], true, "{r}");
    client.tool_text("read_page", json!({"mode": "text"})).await?;
    client.cancel().await?;

    let journal: Vec<Value> = read_jsonl_dir(&data.path().join("journal"))
        .into_iter()
        .filter(|l| l["tool"].is_string())
        .collect();
    let spans = spans_of_every_call(&sink, journal.len()).await?;
    assert_eq!(spans.len(), journal.len(), "one span a call, no more: {spans:#?}");
    let by_seq: BTreeMap<String, &Value> = spans
        .iter()
        .map(|s| (s["attrs"]["ochre.seq"].as_str().unwrap_or("").to_owned(), s))
        .collect();
    let span_of = |l: &Value| by_seq.get(&l["seq"].to_string()).copied();
    let mut roots_outside_runs = BTreeSet::new();
    let mut run_traces = BTreeSet::new();
    let mut children = 0;
    for l in &journal {
        let s = span_of(l).unwrap_or_else(|| panic!("no span of {l}"));
        assert_eq!(s["name"], l["tool"], "{s}");
        assert_eq!(s["attrs"]["ochre.summary"], l["summary"], "{s}");
        assert_eq!(
            s["attrs"]["ochre.args"]
                .as_str()
                .map(serde_json::from_str::<Value>)
                .and_then(Result::ok)
                .as_ref(),
            Some(&l["args"]),
            "the journal's arguments: {s}"
        );
        // Its times: the call's duration, as the journal has it (ms).
        let ns = |k: &str| s[k].as_str().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let took = (ns("endTimeUnixNano") - ns("startTimeUnixNano")) as f64 / 1e6;
        let journaled = l["durationMs"].as_f64().unwrap_or(-1.0);
        assert!((took - journaled).abs() <= 20.0, "span {took} ms, journal {journaled} ms: {s}");
        match l["parent"].as_u64() {
            Some(p) => {
                let parent = journal.iter().find(|j| j["seq"] == p).expect("parent journaled");
                let ps = span_of(parent).expect("the parent's span");
                assert_eq!(s["parentSpanId"], ps["spanId"], "{s}");
                assert_eq!(s["traceId"], ps["traceId"], "{s}");
                children += 1;
            }
            None => {
                assert!(s.get("parentSpanId").is_none(), "a top-level call has no parent: {s}");
                if s["attrs"]["ochre.task_run"] == run_id.as_str() {
                    run_traces.insert(s["traceId"].to_string());
                } else {
                    assert!(
                        roots_outside_runs.insert(s["traceId"].to_string()),
                        "a trace of its own: {s}"
                    );
                }
            }
        }
        match l["error"].as_str() {
            Some(code) => {
                assert_eq!(s["status"]["code"], "STATUS_CODE_ERROR", "{s}");
                let message = s["status"]["message"].as_str().unwrap_or("");
                assert!(message.starts_with(code), "{message}");
                assert_eq!(s["attrs"]["ochre.error"], code, "{s}");
            }
            None => assert!(s.get("status").is_none_or(|st| st.get("code").is_none()), "{s}"),
        }
    }
    assert_eq!(children, 2, "the replay's two steps are its children");
    assert_eq!(run_traces.len(), 1, "the run's calls share one trace");
    assert!(!roots_outside_runs.contains(run_traces.iter().next().expect("run")));
    assert!(roots_outside_runs.len() >= 8, "{roots_outside_runs:?}");
    let failed = journal.iter().find(|l| l["ok"] == false).expect("the failed call");
    assert_eq!(failed["error"], bad["code"]);
    // The password is masked as in the journal; nowhere in what was sent.
    let raw = sink.raw();
    assert!(!raw.contains(SECRET), "the password reached the collector");
    let typed = spans.iter().find(|s| s["name"] == "form_input" && s["attrs"]["ochre.ok"] == true);
    assert!(
        typed.is_some_and(|s| !s["attrs"]["ochre.args"].as_str().unwrap_or("").contains("Hunter2"))
    );
    // The resource and the headers.
    assert_eq!(spans[0]["resource"]["service.name"], "agents-ochre");
    assert!(sink.exports().iter().all(|e| e["headers"]["x-api-key"] == "k ey"), "the header");
    // `ochre doctor` checks the collector: this one takes an export.
    let before = sink.exports().len();
    let doctor = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["doctor", "--otlp-endpoint", &sink.base])
        .output()?;
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert!(said.contains("ok    opentelemetry") && doctor.status.success(), "{said}");
    assert_eq!(sink.exports().len(), before + 1, "the doctor's export reached the sink");
    Ok(())
}

#[tokio::test]
async fn a_collector_that_is_down_costs_the_calls_nothing_and_is_told() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("otlp-down");
    let down = format!("http://127.0.0.1:{}", free_port()?);
    let log = data.path().join("stderr.log");
    let client = stdio_client_logged(
        (),
        data.path(),
        &["--otlp-endpoint", &down],
        &[("OTEL_BSP_SCHEDULE_DELAY", "20"), ("RUST_LOG", "warn")],
        &log,
    )
    .await?;
    for n in 0..5 {
        navigate(&client, &site.url(&format!("record?otlp={n}"))).await?;
    }
    let end = Instant::now() + Duration::from_secs(15);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("OpenTelemetry: cannot reach the collector") {
            assert!(text.contains("its spans are dropped"), "{text}");
            break;
        }
        ensure!(Instant::now() < end, "no word of the collector being down: {text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Every call reached its page (the server's log).
    assert_eq!(site.recorded().iter().filter(|q| q.starts_with("otlp=")).count(), 5);
    client.cancel().await?;

    // `ochre doctor` says it, with the fix, and exits 1.
    let doctor = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["doctor", "--otlp-endpoint", &down])
        .output()?;
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert!(said.contains("FAIL  opentelemetry") && said.contains("start the collector"), "{said}");
    assert_eq!(doctor.status.code(), Some(1), "{said}");
    // A bad setting stops the server before anything runs, naming it.
    for (args, envs, named) in [
        (vec!["--otlp-endpoint", "ftp://collector:4318"], vec![], "--otlp-endpoint"),
        (
            vec!["--otlp-endpoint", &down],
            vec![("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
            "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
        ),
    ] {
        let out = std::process::Command::new(ochre_bin())
            .arg("--data-dir")
            .arg(data.path())
            .args(&args)
            .args(["plugins", "list"])
            .envs(envs)
            .output()?;
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(named), "{args:?}: {err}");
    }
    Ok(())
}
