//! Videos of a tab (`page_video`): the screen as Chromium paints it (a CDP
//! screencast of JPEG pictures, one when the page repaints, 25 a second at
//! most), each picture at the time it was painted, written as it comes into
//! a Matroska file in the evidence dir (see `mkv`: a video cut short by a
//! crash still plays). Bounded: a video stops by itself at its time bound,
//! and at `FILE_MAX` bytes. The tab's screencast is shared with the live
//! view (`screencast_on`/`screencast_off`): a person watching and a video
//! being recorded neither stop the other.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    EventScreencastFrame, ScreencastFrameAckParams, StartScreencastFormat, StartScreencastParams,
    StopScreencastParams,
};
use futures::StreamExt;
use tokio::sync::oneshot;

use super::mkv::{Mkv, jpeg_size};
use super::perftrace::start_stop_status;
use super::{BrowserManager, TabId, cdp_error};
use ochre_protocol::page_ops as typed;
use ochre_protocol::{ToolError, lock};

/// The largest picture a screencast sends (CSS pixels are scaled down to fit).
const MAX_SIDE: i64 = 1600;
/// The JPEG quality of its pictures.
const QUALITY: i64 = 70;
/// The least time between two pictures kept (ms): 25 a second. A picture
/// that comes sooner waits, and is kept if no newer one comes in that time.
const FRAME_MS: u64 = 40;
/// A video's time bound unless asked (ms), and the longest one asked.
const DEFAULT_MS: u32 = 60_000;
const MAX_MS: u32 = 600_000;
/// The largest video file written (bytes): it ends there.
const FILE_MAX: u64 = 256 << 20;
/// How long a page that paints nothing is waited for before its first
/// picture is taken as a screenshot would be.
const FIRST_MS: u64 = 700;
/// How long after a picture came, none coming since, the screen is taken once
/// as a screenshot would be: Chromium sends a picture only for a frame painted
/// while at most two it sent are not acknowledged, and sends none again for a
/// frame it left out, so a change painted then (a click's, on a loaded
/// machine) would not be seen until the page next painted.
const QUIET_MS: u64 = 150;

/// A tab's videos: the one being recorded, and the last one written.
#[derive(Default)]
pub(crate) struct Videos {
    running: Option<Run>,
    last: Option<typed::VideoWritten>,
    /// How the last one that ended by itself failed (a write refused), for
    /// the `stop` that comes after.
    failed: Option<ToolError>,
}

struct Run {
    path: String,
    /// Tells the recorder to end, and why (none: `stop`).
    stop: oneshot::Sender<Option<String>>,
    /// The recorder: what it wrote.
    done: tokio::task::JoinHandle<Result<typed::VideoWritten, ToolError>>,
    /// The tool calls that ended while it recorded: when each began, and
    /// what it was (its chapters).
    chapters: Chapters,
    /// Where ochre's own mouse input went while it recorded (CSS pixels).
    pointer: Pointer,
}

type Chapters = Arc<std::sync::Mutex<Vec<(Instant, String)>>>;
type Pointer = Arc<std::sync::Mutex<Vec<(Instant, f64, f64)>>>;
/// The most pointer positions a video keeps.
const POINTER_MAX: usize = 20_000;

/// The most chapters a video keeps, and the longest title of one (chars).
const CHAPTERS_MAX: usize = 1000;
const CHAPTER_CHARS: usize = 200;

/// Where a recorder was when it ended.
struct Ending {
    video: Option<Mkv>,
    /// A picture that came too soon after the last written: its time and bytes.
    waiting: Option<(u64, Vec<u8>)>,
    last_jpeg: Vec<u8>,
    ended_by: Option<String>,
}

/// What the recorder of one video is given.
struct Recorder {
    path: std::path::PathBuf,
    began: Instant,
    began_at: SystemTime,
    bound: Duration,
    chapters: Chapters,
    pointer: Pointer,
    /// The page's width in CSS pixels when it began (the pointer's unit).
    css_width: f64,
}

impl BrowserManager {
    /// `page_video` {action: start|stop|status}.
    pub(super) async fn page_video(
        &self,
        n: TabId,
        page: &Page,
        a: &typed::PageVideo,
    ) -> Result<typed::VideoTaken, ToolError> {
        let with_start = a.max_ms.is_some().then_some("max_ms goes with start");
        let action = start_stop_status(a.action.as_deref(), with_start, a.max_ms, MAX_MS)?;
        let w = self
            .tab_watch(n)
            .ok_or_else(|| ToolError::browser_error("the tab is not watched (it closed?)"))?;
        match action {
            "start" => self.start_video(n, page, a.max_ms.unwrap_or(DEFAULT_MS)).await,
            "stop" => {
                let run = lock(&w.videos).running.take();
                let Some(run) = run else {
                    // One that ended by itself: how it failed, else what it wrote.
                    if let Some(e) = lock(&w.videos).failed.take() {
                        return Err(e);
                    }
                    let last = lock(&w.videos).last.clone();
                    return match last {
                        Some(v) if v.ended_by.is_some() => {
                            Ok(typed::VideoTaken { recording: false, path: None, video: Some(v) })
                        }
                        _ => Err(ToolError::invalid_argument(
                            "action",
                            "no video of this tab is being recorded: page_video start first",
                        )),
                    };
                };
                let _ = run.stop.send(None);
                let video = finished(run.done).await?;
                lock(&w.videos).last = Some(video.clone());
                Ok(typed::VideoTaken { recording: false, path: None, video: Some(video) })
            }
            _ => {
                let v = lock(&w.videos);
                let running = v.running.as_ref().filter(|r| !r.done.is_finished());
                let path = running.map(|r| r.path.clone());
                Ok(typed::VideoTaken { recording: path.is_some(), path, video: v.last.clone() })
            }
        }
    }

    async fn start_video(
        &self,
        n: TabId,
        page: &Page,
        max_ms: u32,
    ) -> Result<typed::VideoTaken, ToolError> {
        let w = self
            .tab_watch(n)
            .ok_or_else(|| ToolError::browser_error("the tab is not watched (it closed?)"))?;
        if lock(&w.videos).running.as_ref().is_some_and(|r| !r.done.is_finished()) {
            return Err(ToolError::invalid_argument(
                "action",
                "a video of this tab is being recorded: page_video stop first",
            ));
        }
        let path = self.evidence_path("video", "mkv")?;
        std::fs::create_dir_all(path.parent().unwrap_or(&path)).map_err(|e| {
            ToolError::storage_failed(format!("cannot create {}: {e}", path.display()))
        })?;
        let frames = page
            .event_listener::<EventScreencastFrame>()
            .await
            .map_err(|e| cdp_error("cannot watch the tab's screen", e))?;
        let css_width = self.eval(page, "innerWidth", true).await.ok().and_then(|v| v.as_f64());
        self.screencast_on(n, page).await?;
        let rec = Recorder {
            path: path.clone(),
            began: Instant::now(),
            began_at: SystemTime::now(),
            bound: Duration::from_millis(u64::from(max_ms)),
            chapters: Chapters::default(),
            pointer: Pointer::default(),
            css_width: css_width.unwrap_or(0.0),
        };
        let (chapters, pointer) = (rec.chapters.clone(), rec.pointer.clone());
        let (stop, told) = oneshot::channel();
        let (me, page) = (self.clone(), page.clone());
        self.inner.videos_recording.fetch_add(1, Ordering::Relaxed);
        let done = tokio::spawn(async move {
            let written = me.record(&page, frames, told, rec).await;
            me.inner.videos_recording.fetch_sub(1, Ordering::Relaxed);
            me.screencast_off(n, &page).await;
            // Ended by itself (no `stop` took it: it is still running), kept
            // for `stop` and `status`: what it wrote, or how it failed.
            if let Some(w) = me.tab_watch(n) {
                let mut videos = lock(&w.videos);
                if videos.running.take().is_some() {
                    match &written {
                        Ok(v) => videos.last = Some(v.clone()),
                        Err(e) => videos.failed = Some(e.clone()),
                    }
                }
            }
            written
        });
        let path = path.display().to_string();
        let mut videos = lock(&w.videos);
        videos.failed = None;
        videos.running = Some(Run { path: path.clone(), stop, done, chapters, pointer });
        Ok(typed::VideoTaken { recording: true, path: Some(path), video: None })
    }

    /// Write the pictures as they come until told to stop, the time bound,
    /// the file's bound or the tab's end; what was written.
    async fn record(
        &self,
        page: &Page,
        mut frames: chromiumoxide::listeners::EventStream<EventScreencastFrame>,
        mut told: oneshot::Receiver<Option<String>>,
        rec: Recorder,
    ) -> Result<typed::VideoWritten, ToolError> {
        let io = |e: std::io::Error| {
            ToolError::storage_failed(format!("cannot write {}: {e}", rec.path.display()))
        };
        let deadline = tokio::time::Instant::from_std(rec.began + rec.bound);
        let first_by = tokio::time::Instant::now() + Duration::from_millis(FIRST_MS);
        let mut video: Option<Mkv> = None;
        // A picture that came too soon after the last kept: its time and bytes.
        let mut waiting: Option<(u64, Vec<u8>)> = None;
        let mut last_jpeg: Vec<u8> = Vec::new();
        // When the last picture came, until the screen was taken once after
        // it; and that picture's bytes.
        let mut quiet_since: Option<Instant> = None;
        let mut last_cast: Vec<u8> = Vec::new();
        // That picture, being taken: apart from this loop, which goes on
        // acknowledging the screencast's pictures meanwhile (one not
        // acknowledged holds the next back, and the screenshot may wait for
        // a frame the screencast holds).
        let mut shooting: Option<tokio::task::JoinHandle<Result<Vec<u8>, ToolError>>> = None;
        let ms = |t: Instant| u64::try_from(t.duration_since(rec.began).as_millis()).unwrap_or(0);
        let ended_by = loop {
            let flush_at = match (&waiting, &video, quiet_since) {
                (Some(_), Some(v), _) => rec.began + Duration::from_millis(v.last_ms() + FRAME_MS),
                (_, None, _) => first_by.into_std(),
                (None, Some(_), Some(came)) => came + Duration::from_millis(QUIET_MS),
                _ => rec.began + rec.bound,
            };
            let picture = tokio::select! {
                why = &mut told => break why.unwrap_or_else(|_| Some("the tab's end".into())),
                () = tokio::time::sleep_until(deadline) => {
                    break Some(format!("its time bound of {} ms", rec.bound.as_millis()));
                }
                () = tokio::time::sleep_until(tokio::time::Instant::from_std(flush_at)) => None,
                shot = async {
                    match shooting.as_mut() {
                        Some(h) => h.await,
                        None => std::future::pending().await,
                    }
                } => {
                    shooting = None;
                    // (A picture that does not come: the next one will.)
                    match shot {
                        Ok(Ok(jpeg)) => Some((ms(Instant::now()), jpeg)),
                        _ => continue,
                    }
                }
                ev = frames.next() => match ev {
                    Some(ev) => {
                        let ack = ScreencastFrameAckParams::new(ev.session_id);
                        let _ = page.execute(ack).await;
                        let (at, jpeg) = cast_picture(&ev, ms(Instant::now()), rec.began_at)?;
                        // The same picture again (the screen taken after a
                        // quiet time paints a frame): nothing new to show, and
                        // no new quiet time.
                        if jpeg == last_cast {
                            continue;
                        }
                        last_cast.clone_from(&jpeg);
                        quiet_since = Some(Instant::now());
                        Some((at, jpeg))
                    }
                    None => break Some("the tab's end".to_owned()),
                },
            };
            let now = ms(Instant::now());
            // The picture to write now, if any.
            let due = match picture {
                Some((at, jpeg)) => {
                    let last = video.as_ref().map(Mkv::last_ms);
                    if video.is_some() && last.is_some_and(|l| at < l + FRAME_MS) {
                        waiting = Some((at, jpeg));
                        None
                    } else {
                        waiting = None;
                        Some((at, jpeg))
                    }
                }
                None if video.is_none() => Some((now, self.picture_now(page).await?)),
                None if waiting.is_none() && quiet_since.take().is_some() => {
                    if shooting.is_none() {
                        let (me, page) = (self.clone(), page.clone());
                        shooting = Some(tokio::spawn(async move { me.picture_now(&page).await }));
                    }
                    None
                }
                None => waiting.take(),
            };
            let Some((at, jpeg)) = due else { continue };
            if video.is_none() {
                let size = jpeg_size(&jpeg).unwrap_or((0, 0));
                video = Some(Mkv::create(&rec.path, rec.began_at, size).map_err(io)?);
            }
            let Some(v) = video.as_mut() else { continue };
            v.frame(at, &jpeg).map_err(io)?;
            last_jpeg = jpeg;
            if v.bytes >= FILE_MAX {
                break Some(format!("its size bound of {} MB", FILE_MAX >> 20));
            }
        };
        if let Some(h) = shooting {
            h.abort();
        }
        let end = Ending { video, waiting, last_jpeg, ended_by };
        self.end_video(page, &rec, end).await
    }

    /// The video's last pictures, its duration in its header: what it is.
    async fn end_video(
        &self,
        page: &Page,
        rec: &Recorder,
        e: Ending,
    ) -> Result<typed::VideoWritten, ToolError> {
        let io = |err: std::io::Error| {
            ToolError::storage_failed(format!("cannot write {}: {err}", rec.path.display()))
        };
        let ms = |t: Instant| u64::try_from(t.duration_since(rec.began).as_millis()).unwrap_or(0);
        let Ending { video, mut waiting, mut last_jpeg, ended_by } = e;
        // The screen at the end (a picture on its way may not have come),
        // else the last picture, held until then.
        let at_end = self.picture_now(page).await;
        let end = ms(Instant::now());
        let mut v = match video {
            Some(v) => v,
            None => {
                let size = at_end.as_ref().ok().and_then(|j| jpeg_size(j)).unwrap_or((0, 0));
                Mkv::create(&rec.path, rec.began_at, size).map_err(io)?
            }
        };
        if let Some((at, jpeg)) = waiting.take() {
            v.frame(at, &jpeg).map_err(io)?;
            last_jpeg = jpeg;
        }
        let last = match at_end {
            Ok(jpeg) => jpeg,
            Err(_) if !last_jpeg.is_empty() => last_jpeg,
            Err(e) => return Err(e),
        };
        if v.frames == 0 || v.last_ms() < end {
            v.last_frame(end, &last).map_err(io)?;
        }
        let chapters: Vec<(u64, String)> = lock(&rec.chapters)
            .iter()
            .map(|(at, title)| (ms((*at).max(rec.began)).min(end), title.clone()))
            .collect();
        let (frames, size) = (v.frames, v.size);
        let bytes = v.finish(end, &chapters).map_err(io)?;
        // Its WebM copy, the pointer drawn (in the frames' pixels).
        #[allow(clippy::cast_precision_loss)]
        let scale =
            if rec.css_width > 0.0 && size.0 > 0 { f64::from(size.0) / rec.css_width } else { 1.0 };
        let points: Vec<(u64, f64, f64)> = lock(&rec.pointer)
            .iter()
            .map(|(at, x, y)| (ms((*at).max(rec.began)).min(end), x * scale, y * scale))
            .collect();
        let (webm, webm_skipped) = match super::webm::write(&rec.path, &points, end).await {
            Ok(p) => (Some(std::path::absolute(&p).unwrap_or(p).display().to_string()), None),
            Err(why) => (None, Some(why)),
        };
        Ok(typed::VideoWritten {
            path: std::path::absolute(&rec.path).unwrap_or(rec.path.clone()).display().to_string(),
            bytes,
            frames,
            chapters: u64::try_from(chapters.len()).unwrap_or(u64::MAX),
            duration_ms: end,
            width: size.0,
            height: size.1,
            started_at: humantime::format_rfc3339_millis(rec.began_at).to_string(),
            ended_by,
            webm,
            webm_skipped,
        })
    }

    /// A tool call of the caller's (its tool and summary, begun at
    /// `started`) as a chapter of each video being recorded of its tabs.
    pub(super) fn video_chapter(&self, label: &str, started: Instant) {
        if self.inner.videos_recording.load(Ordering::Relaxed) == 0 {
            return;
        }
        let who = super::owner();
        for (n, _) in self.inner.tabs.of_owner(&who) {
            let Some(w) = self.tab_watch(n) else { continue };
            let videos = lock(&w.videos);
            if let Some(run) = videos.running.as_ref().filter(|r| !r.done.is_finished()) {
                let mut chapters = lock(&run.chapters);
                if chapters.len() < CHAPTERS_MAX {
                    chapters.push((started, label.chars().take(CHAPTER_CHARS).collect()));
                }
            }
        }
    }

    /// Where ochre's own mouse input went on `page` (CSS pixels, and when):
    /// the pointer of the tab's video being recorded, if one is.
    pub(super) fn video_pointer(&self, page: &Page, points: &[(Instant, f64, f64)]) {
        if points.is_empty() || self.inner.videos_recording.load(Ordering::Relaxed) == 0 {
            return;
        }
        let Some(n) = self.inner.tabs.by_target(page.target_id().as_ref()) else { return };
        let Some(w) = self.tab_watch(n) else { return };
        let videos = lock(&w.videos);
        if let Some(run) = videos.running.as_ref().filter(|r| !r.done.is_finished()) {
            let mut pointer = lock(&run.pointer);
            let room = POINTER_MAX.saturating_sub(pointer.len());
            pointer.extend(points.iter().take(room));
        }
    }

    /// The tab's screen now as a JPEG (a page that paints nothing sends no
    /// picture). A plain capture: chromiumoxide's `screenshot` activates the
    /// tab first, which a recorder must not do to a tab a person or another
    /// tab's work is using.
    pub(super) async fn picture_now(&self, page: &Page) -> Result<Vec<u8>, ToolError> {
        use chromiumoxide::cdp::browser_protocol::page::{
            CaptureScreenshotFormat, CaptureScreenshotParams,
        };
        let params = CaptureScreenshotParams::builder()
            .format(CaptureScreenshotFormat::Jpeg)
            .quality(QUALITY)
            .build();
        let shot = tokio::time::timeout(Duration::from_secs(10), page.execute(params))
            .await
            .map_err(|_| ToolError::timeout("the tab's picture took over 10 s"))?
            .map_err(|e| cdp_error("cannot take the tab's picture", e))?;
        let data: &str = shot.result.data.as_ref();
        data_encoding::BASE64
            .decode(data.as_bytes())
            .map_err(|e| ToolError::browser_error(format!("the tab's picture did not decode: {e}")))
    }

    /// The tab's screencast, started for one more watcher (the live view, a
    /// video): one screencast a tab, stopped when the last leaves.
    pub(super) async fn screencast_on(&self, n: TabId, page: &Page) -> Result<(), ToolError> {
        let w = self.tab_watch(n);
        let mut users = match &w {
            Some(w) => Some(w.screencasts.lock().await),
            None => None,
        };
        if users.as_deref().is_none_or(|u| *u == 0) {
            let start = StartScreencastParams::builder()
                .format(StartScreencastFormat::Jpeg)
                .quality(QUALITY)
                .max_width(MAX_SIDE)
                .max_height(MAX_SIDE)
                .every_nth_frame(1)
                .build();
            page.execute(start).await.map_err(|e| cdp_error("cannot start the screencast", e))?;
        }
        if let Some(u) = users.as_deref_mut() {
            *u += 1;
        }
        Ok(())
    }

    /// One watcher of the tab's screencast left (see `screencast_on`).
    pub(super) async fn screencast_off(&self, n: TabId, page: &Page) {
        let w = self.tab_watch(n);
        let mut users = match &w {
            Some(w) => Some(w.screencasts.lock().await),
            None => None,
        };
        if let Some(u) = users.as_deref_mut() {
            *u = u.saturating_sub(1);
        }
        if users.as_deref().is_none_or(|u| *u == 0) {
            let stop = page.execute(StopScreencastParams {});
            let _ = tokio::time::timeout(Duration::from_secs(2), stop).await;
        }
    }

    /// The last video written of tab `n`, if any: its file, and its WebM copy.
    pub(super) fn last_video(&self, n: TabId) -> Option<(PathBuf, Option<PathBuf>)> {
        let w = self.tab_watch(n)?;
        let videos = lock(&w.videos);
        let last = videos.last.as_ref()?;
        Some((last.path.clone().into(), last.webm.clone().map(PathBuf::from)))
    }
}

/// What a recorder wrote, once it ends (bounded: it ends at its next picture
/// or timer).
async fn finished(
    done: tokio::task::JoinHandle<Result<typed::VideoWritten, ToolError>>,
) -> Result<typed::VideoWritten, ToolError> {
    match tokio::time::timeout(Duration::from_secs(30), done).await {
        Ok(Ok(written)) => written,
        Ok(Err(e)) => Err(ToolError::internal(format!("the video's recorder failed: {e}"))),
        Err(_) => Err(ToolError::timeout("the video took over 30 s to be written")),
    }
}

/// A screencast's picture (which came `arrived` ms into the video): when it
/// was painted (the frame's swap), else when it came; and its JPEG.
fn cast_picture(
    ev: &EventScreencastFrame,
    arrived: u64,
    began_at: SystemTime,
) -> Result<(u64, Vec<u8>), ToolError> {
    let data: &str = ev.data.as_ref();
    let jpeg = data_encoding::BASE64
        .decode(data.as_bytes())
        .map_err(|e| ToolError::browser_error(format!("a picture did not decode: {e}")))?;
    let painted = ev.metadata.timestamp.as_ref().map(|t| *t.inner());
    let at = painted.and_then(|t| painted_ms(t, began_at)).filter(|at| *at <= arrived);
    Ok((at.unwrap_or(arrived), jpeg))
}

/// A picture's paint time (seconds since the Unix epoch) as ms after the
/// video began; none before it began (by more than a frame: a clock's
/// rounding) or unreadable.
fn painted_ms(t: f64, began_at: SystemTime) -> Option<u64> {
    let began = began_at.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_secs_f64();
    let d = (t - began) * 1000.0;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (d.is_finite() && d > -(FRAME_MS as f64)).then(|| d.max(0.0).round() as u64)
}
