//! `page_video`: a tab's screen as a video file, read back with PyAV (FFmpeg's
//! libraries, from PyPI at test time): it plays to its end, holds the frames
//! and the duration the answer says, and a frame at a known moment shows what
//! the page showed then (pixels compared); a video cut short by a killed
//! server still plays up to where it was.

use anyhow::{Context, Result};
use ochre_tests::*;
use serde_json::{Value, json};

use ochre_tests::now_unix as now;

/// Whether `rgb` is `want` (as a JPEG keeps it: within 48 a channel).
fn near(rgb: &Value, want: [i64; 3]) -> bool {
    let got: Vec<i64> = rgb.as_array().into_iter().flatten().filter_map(Value::as_i64).collect();
    got.len() == 3 && got.iter().zip(want).all(|(g, w)| (g - w).abs() <= 48)
}

const BLUE: [i64; 3] = [0x00, 0x40, 0xff];
const RED: [i64; 3] = [0xff, 0x20, 0x00];
const GREEN: [i64; 3] = [0x00, 0xc0, 0x40];

/// Waits (in the page) until its colour has been on screen 600 ms.
async fn held(client: &Client) -> Result<()> {
    let held = json!({"type": "selector", "value": "#held:not([hidden])"});
    client.tool_text("wait_for", held).await?;
    Ok(())
}

/// A video of a click and a navigation, each colour held 600 ms: the file
/// plays to its end in PyAV (Motion JPEG), with as many frames as the answer
/// says and its duration; the frame shown in the middle of each colour's
/// stretch is that colour, the first is the page at the start; bad calls are
/// refused and change nothing; the evidence bundle holds the video.
#[tokio::test]
async fn a_video_shows_what_the_page_showed_when() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("video");
    let client = stdio_client(data.path(), &[], &[]).await?;
    navigate(&client, &site.url("colours.html")).await?;
    held(&client).await?;
    let none = client.tool("page_video", json!({"action": "stop"})).await?;
    assert_eq!(none.is_error, Some(true), "{none:?}");
    let wrong = client.tool("page_video", json!({"action": "start", "max_ms": 10})).await?;
    assert_eq!(wrong.is_error, Some(true), "{wrong:?}");
    let status = client.tool_json("page_video", json!({"action": "status"})).await?;
    assert_eq!(status["recording"], false, "a refused start started: {status}");

    // (Recorded: the recording's HTML export links the video.)
    let rec = client.tool_json("oc_recording_start", json!({"label": "video"})).await?;
    let started = client.tool_json("page_video", json!({"action": "start"})).await?;
    assert_eq!(started["recording"], true, "{started}");
    let again = client.tool("page_video", json!({"action": "start"})).await?;
    assert_eq!(again.is_error, Some(true), "a second start on the tab: {again:?}");
    // Red by a click, then green by a link to another document.
    let snap = snapshot(&client).await?;
    let click_sent = now();
    client.tool_text("interact", json!({"ref": ref_of(&snap, "button", "Turn red")})).await?;
    let red_from = now();
    held(&client).await?;
    let red_to = now();
    let snap = snapshot(&client).await?;
    client.tool_text("interact", json!({"ref": ref_of(&snap, "link", "Go green")})).await?;
    let green_from = now();
    held(&client).await?;
    let green_to = now();
    let stopped = now();
    let out = client.tool_json("page_video", json!({"action": "stop"})).await?;
    eprintln!("stop (the WebM written) took {:.0} ms", (now() - stopped) * 1000.0);
    client.tool_json("oc_recording_stop", json!({})).await?;
    assert_eq!(out["recording"], false, "{out}");
    let video = &out["video"];
    let path = video["path"].as_str().context("the video's path")?;
    assert!(path.ends_with(".mkv") && path.contains("/evidence/video-"), "{video}");
    assert_eq!(std::fs::metadata(path)?.len(), video["bytes"].as_u64().unwrap_or(0), "{video}");
    assert!(video["ended_by"].is_null(), "{video}");
    let started_at = video["started_at"].as_str().context("started_at")?;

    let checks = json!([
        {"what": "red, mid-stretch", "at": f64::midpoint(red_from, red_to)},
        {"what": "green, mid-stretch", "at": f64::midpoint(green_from, green_to)},
        {"what": "green, at the stop", "at": stopped},
    ]);
    let read = read_video(path, started_at, &checks)?;
    assert_eq!(read["codec"], "mjpeg", "{read}");
    assert_eq!(read["frames"], video["frames"], "{read}\n{video}");
    assert!(read["frames"].as_u64().unwrap_or(0) >= 3, "{read}");
    let duration = video["duration_ms"].as_f64().unwrap_or(0.0);
    let took = (stopped - red_from) * 1000.0;
    assert!(duration >= took && duration < took + 5_000.0, "{duration} ms against {took}");
    let container = read["duration_ms"].as_f64().context("the container's duration")?;
    assert!((container - duration).abs() <= 50.0, "{container} against {duration}");
    let last = read["last_ms"].as_f64().unwrap_or(0.0);
    assert!((last - duration).abs() <= 50.0, "the last frame at {last} ms of {duration}");
    assert!(near(&read["first"][0], BLUE), "the first frame: {read}");
    let want = [RED, GREEN, GREEN];
    for (check, colour) in read["checks"].as_array().context("checks")?.iter().zip(want) {
        assert!(near(&check["rgb"], colour), "{check} is not {colour:?}: {read}");
    }
    // Its WebM copy (FFmpeg is installed by the test setup): VP8, the same
    // pictures at the same times, ochre's pointer drawn where it clicked.
    let webm = video["webm"].as_str().with_context(|| format!("no WebM: {video}"))?;
    assert!(webm.ends_with(".webm") && std::path::Path::new(webm).is_file(), "{video}");
    let checks_then = json!([
        {"what": "before the click", "at": click_sent - 0.05},
        {"what": "red, mid-stretch", "at": f64::midpoint(red_from, red_to)},
        {"what": "green, mid-stretch", "at": f64::midpoint(green_from, green_to)},
    ]);
    let copy = read_video(webm, started_at, &checks_then)?;
    assert_eq!(copy["codec"], "vp8", "{copy}");
    assert_eq!(copy["frames"], read["frames"], "one frame each: {copy}\n{read}");
    let copy_ms = copy["duration_ms"].as_f64().unwrap_or(0.0);
    assert!((copy_ms - duration).abs() <= 100.0, "the WebM runs {copy_ms} ms of {duration}");
    let marked: Vec<u64> = copy["checks"]
        .as_array()
        .context("checks")?
        .iter()
        .map(|c| c["pointer"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(marked[0], 0, "no pointer before ochre's first mouse input: {copy}");
    assert!(marked[1] >= 25, "the pointer where the click went, while red: {copy}");
    let colours = copy["checks"].as_array().context("checks")?;
    assert!(near(&colours[1]["rgb"], RED) && near(&colours[2]["rgb"], GREEN), "{copy}");
    // The chapters carried over: each title, at its time (FFmpeg's copy
    // rounds a time to its own base: within a millisecond).
    let (theirs, ours) = (copy["chapters"].as_array(), read["chapters"].as_array());
    let (theirs, ours) = (theirs.context("the copy's chapters")?, ours.context("chapters")?);
    assert_eq!(theirs.len(), ours.len(), "the chapters carried over: {copy}\n{read}");
    for (t, o) in theirs.iter().zip(ours) {
        let (a, b) =
            (t["start_ms"].as_f64().unwrap_or(-9.0), o["start_ms"].as_f64().unwrap_or(9.0));
        assert!(
            t["title"] == o["title"] && (a - b).abs() <= 1.0,
            "a chapter carried over: {t} against {o}"
        );
    }
    // The recording's HTML export plays the WebM and links both files.
    let h = client
        .tool_json(
            "oc_recording_export",
            json!({"recordingId": rec["recordingId"], "format": "html"}),
        )
        .await?;
    let html = std::fs::read_to_string(h["path"].as_str().context("the export's path")?)?;
    assert!(
        html.contains(&format!("<video controls preload=\"metadata\" src=\"file://{webm}\">")),
        "{html}"
    );
    assert!(html.contains(&format!("<a href=\"file://{path}\">")), "{html}");
    // Each call while it recorded is a chapter, from when it began.
    let chapters = read["chapters"].as_array().context("chapters")?;
    assert_eq!(Some(chapters.len() as u64), video["chapters"].as_u64(), "{video}");
    let titles: Vec<&str> = chapters.iter().filter_map(|c| c["title"].as_str()).collect();
    assert_eq!(titles.iter().filter(|t| t.starts_with("interact: ")).count(), 2, "{titles:?}");
    assert!(titles.iter().any(|t| t.starts_with("read_page: ")), "{titles:?}");
    let click =
        chapters.iter().find(|c| c["title"].as_str().is_some_and(|t| t.starts_with("interact: ")));
    let at = click.and_then(|c| c["at"].as_f64()).context("the click's chapter")?;
    assert!(
        at >= click_sent - 0.02 && at <= red_from + 0.02,
        "the click's chapter at {at}, the click sent at {click_sent} and answered at {red_from}"
    );
    // Its size is the tab's viewport's.
    let size = &read["first"];
    assert_eq!((&size[1], &size[2]), (&video["width"], &video["height"]), "{read}");

    let status = client.tool_json("page_video", json!({"action": "status"})).await?;
    assert_eq!((&status["recording"], &status["video"]["path"]), (&json!(false), &json!(path)));
    let bundle = client.tool_json("oc_evidence_bundle", json!({"include": ["dom"]})).await?;
    let files: Vec<&str> = bundle["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert!(files.contains(&"video.mkv"), "{bundle}");
    let copy = std::path::Path::new(bundle["path"].as_str().unwrap_or("")).join("video.mkv");
    assert_eq!(std::fs::read(copy)?, std::fs::read(path)?);
    Ok(())
}

/// A video ends by itself at its time bound (`stop` then answers it, saying
/// so); a server killed (kill -9) while it records leaves a file that plays
/// up to the kill.
#[tokio::test]
async fn a_video_ends_at_its_bound_and_outlives_a_killed_server() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("video-kill");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let client = server.client().await?;
    navigate(&client, &site.url("colours.html")).await?;
    let started =
        client.tool_json("page_video", json!({"action": "start", "max_ms": 1000})).await?;
    let first = started["path"].as_str().context("the path")?.to_owned();
    let snap = snapshot(&client).await?;
    client.tool_text("interact", json!({"ref": ref_of(&snap, "button", "Turn red")})).await?;
    held(&client).await?;
    // Past its bound (the page's 600 ms twice over).
    client.tool_text("interact", json!({"ref": ref_of(&snap, "button", "Turn red")})).await?;
    held(&client).await?;
    let out = client.tool_json("page_video", json!({"action": "stop"})).await?;
    let ended = out["video"]["ended_by"].as_str().unwrap_or_default();
    assert!(ended.contains("time bound of 1000 ms"), "{out}");
    assert_eq!(out["video"]["path"], json!(first), "{out}");
    let d = out["video"]["duration_ms"].as_u64().unwrap_or(0);
    assert!((1_000..1_500).contains(&d), "{out}");
    let read = read_video(&first, out["video"]["started_at"].as_str().unwrap_or(""), &json!([]))?;
    assert_eq!(read["frames"], out["video"]["frames"], "{read}");

    // Killed while recording: the file plays up to then.
    let started = client.tool_json("page_video", json!({"action": "start"})).await?;
    let path = started["path"].as_str().context("the path")?.to_owned();
    let snap = snapshot(&client).await?;
    client.tool_text("interact", json!({"ref": ref_of(&snap, "link", "Go green")})).await?;
    held(&client).await?;
    let at = now();
    assert!(kill9(server.pid().context("the server's pid")?), "cannot kill the server");
    let read = read_video(&path, "1970-01-01T00:00:00Z", &json!([{"what": "kill", "at": at}]))?;
    assert!(read["frames"].as_u64().unwrap_or(0) >= 2, "{read}");
    assert!(near(&read["first"][0], RED), "the page when it began: {read}");
    assert!(near(&read["checks"][0]["rgb"], GREEN), "the last frame before the kill: {read}");
    Ok(())
}
