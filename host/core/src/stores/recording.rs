//! Recordings of tool calls (`<data-dir>/recordings/<id>/`): `meta.json` (written
//! atomically after every step), `actions.jsonl` (one line per step, fsynced) and
//! `shots/NNNN.jpg` (optional screenshots). The pipeline feeds the active recording;
//! the `recording` plugin reads them through the `recorder` WIT interface.
//!
//! A recording left active by a server that stopped is closed at the next start
//! (`stopped_reason`); recordings older than the retention are deleted then too.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Clock;
use crate::error::ToolError;
use crate::stores::journal::iso_of;
use crate::stores::{JsonlFile, read_jsonl, write_atomic};
use ochre_protocol::lock;

/// Default retention of stopped recordings, in days.
pub const DEFAULT_RETENTION_DAYS: u64 = 30;

pub use ochre_protocol::recording::{Param, RecordedStep, Recording, RecordingMeta, VersionNote};

/// What `meta.json` in `dir` says.
fn read_meta(dir: &Path) -> Result<RecordingMeta, ToolError> {
    let bytes = std::fs::read(dir.join("meta.json"))
        .map_err(|e| storage_error("cannot read the recording", e))?;
    serde_json::from_slice(&bytes).map_err(|e| storage_error("corrupt recording", e))
}

/// `steps`, one JSON line each.
fn jsonl(steps: &[RecordedStep]) -> String {
    let mut text = String::new();
    for step in steps {
        text.push_str(&serde_json::to_string(step).unwrap_or_default());
        text.push('\n');
    }
    text
}

struct Active {
    meta: RecordingMeta,
    actions: JsonlFile,
}

/// The recordings under a data dir, and the one being recorded.
pub struct Recorder {
    dir: PathBuf,
    clock: Clock,
    retention_ms: u64,
    active: Mutex<Option<Active>>,
    ids: AtomicU64,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("dir", &self.dir).finish_non_exhaustive()
    }
}

fn storage_error(what: &str, e: impl std::fmt::Display) -> ToolError {
    ToolError::storage_failed(format!("{what}: {e}"))
}

/// Whether `id` can name a recording (and so is safe as a path segment).
fn valid_id(id: &str) -> bool {
    crate::stores::valid_id(id, "rec-")
}

/// Whether `name` is a plain file name we accept for exports.
fn valid_file_name(name: &str) -> bool {
    crate::stores::is_plain_name(name, 64) && !matches!(name, "meta.json" | "actions.jsonl")
}

impl Recorder {
    /// The recordings under `data_dir`; closes one a stopped server left open and
    /// deletes stopped recordings older than `retention_days` (0 keeps them forever).
    pub fn open(data_dir: &Path, clock: Clock, retention_days: u64) -> Self {
        let r = Self {
            dir: data_dir.join("recordings"),
            clock,
            retention_ms: retention_days.saturating_mul(86_400_000),
            active: Mutex::new(None),
            ids: AtomicU64::new(0),
        };
        r.recover();
        r
    }

    fn metas(&self) -> Vec<RecordingMeta> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok())
            .filter(|e| valid_id(&e.file_name().to_string_lossy()))
            .filter_map(|e| read_meta(&e.path()).ok())
            .collect()
    }

    fn recover(&self) {
        let now = self.clock.now_ms();
        for mut meta in self.metas() {
            if meta.status == "recording" {
                meta.status = "stopped".into();
                meta.stopped_reason = Some("the server stopped while recording".into());
                meta.stopped_at = Some(iso_of(now));
                meta.stopped_ms = Some(now);
                if let Err(e) = self.write_meta(&meta) {
                    tracing::warn!(recording = %meta.id, error = %e, "cannot close a recording");
                }
                continue;
            }
            let ended = meta.stopped_ms.unwrap_or(meta.started_ms);
            if self.retention_ms > 0 && now.saturating_sub(ended) > self.retention_ms {
                let dir = self.dir.join(&meta.id);
                match std::fs::remove_dir_all(&dir) {
                    Ok(()) => {
                        tracing::info!(recording = %meta.id, "recording past retention deleted")
                    }
                    Err(e) => {
                        tracing::warn!(recording = %meta.id, error = %e, "cannot delete an old recording")
                    }
                }
            }
        }
    }

    fn write_meta(&self, meta: &RecordingMeta) -> std::io::Result<()> {
        let dir = self.dir.join(&meta.id);
        std::fs::create_dir_all(&dir)?;
        let mut bytes = serde_json::to_vec_pretty(meta).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        write_atomic(&dir.join("meta.json"), &bytes)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Active>> {
        lock(&self.active)
    }

    fn new_id(&self) -> String {
        let now = self.clock.now_ms();
        let stamp: String = iso_of(now).chars().filter(char::is_ascii_digit).take(14).collect();
        let (day, time) = stamp.split_at(stamp.len().min(8));
        loop {
            let n = self.ids.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            use sha2::Digest;
            let h = sha2::Sha256::digest(format!("{now}/{nanos}/{}/{n}", std::process::id()));
            let id = format!("rec-{day}-{time}-{:02x}{:02x}", h[0], h[1]);
            if !self.dir.join(&id).exists() {
                return id;
            }
        }
    }

    /// Start a recording. `RECORDING_ACTIVE` if one runs already.
    pub fn start(
        &self,
        label: Option<String>,
        capture_screenshots: bool,
        session: &str,
    ) -> Result<RecordingMeta, ToolError> {
        let mut guard = self.lock();
        if let Some(a) = guard.as_ref() {
            return Err(ToolError::recording_active(format!(
                "recording {} is already running; stop it with oc_recording_stop first",
                a.meta.id
            ))
            .with("recordingId", a.meta.id.as_str()));
        }
        let now = self.clock.now_ms();
        let meta = RecordingMeta {
            id: self.new_id(),
            label,
            status: "recording".into(),
            started_at: iso_of(now),
            started_ms: now,
            stopped_at: None,
            stopped_ms: None,
            stopped_reason: None,
            params: Vec::new(),
            steps: 0,
            failed_steps: 0,
            capture_screenshots,
            session: session.to_owned(),
            final_url: None,
            final_title: None,
            version: 1,
            versions: Vec::new(),
        };
        self.write_meta(&meta).map_err(|e| storage_error("cannot create the recording", e))?;
        let actions = JsonlFile::new(self.dir.join(&meta.id).join("actions.jsonl"));
        *guard = Some(Active { meta: meta.clone(), actions });
        Ok(meta)
    }

    /// Stop the active recording. `NOT_RECORDING` if none runs.
    pub fn stop(&self) -> Result<RecordingMeta, ToolError> {
        let mut guard = self.lock();
        let Some(mut active) = guard.take() else {
            return Err(ToolError::not_recording(
                "no recording is running; start one with oc_recording_start",
            ));
        };
        let now = self.clock.now_ms();
        active.meta.status = "stopped".into();
        active.meta.stopped_at = Some(iso_of(now));
        active.meta.stopped_ms = Some(now);
        let _ = active.actions.sync();
        if let Err(e) = self.write_meta(&active.meta) {
            // Keep recording rather than lose the stop silently.
            let err = storage_error("cannot save the recording", e);
            active.meta.status = "recording".into();
            *guard = Some(active);
            return Err(err);
        }
        Ok(active.meta)
    }

    /// A parameter of the running recording for a value typed into a field
    /// named `base`: its name, unique in the recording (`title`, `title_2` for
    /// another value); a secret (`default` none) reuses its name.
    pub fn param(&self, base: &str, default: Option<&str>) -> String {
        let mut guard = self.lock();
        let Some(active) = guard.as_mut() else {
            return base.to_owned();
        };
        let params = &mut active.meta.params;
        let mut name = base.to_owned();
        let mut i = 2;
        loop {
            match params.iter().find(|p| p.name == name) {
                None => break,
                Some(p) if p.default.as_deref() == default => return name,
                Some(_) => {
                    name = format!("{base}_{i}");
                    i += 1;
                }
            }
        }
        params.push(Param {
            name: name.clone(),
            secret: default.is_none(),
            default: default.map(str::to_owned),
        });
        name
    }

    /// The running recording's metadata.
    pub fn active(&self) -> Option<RecordingMeta> {
        self.lock().as_ref().map(|a| a.meta.clone())
    }

    /// Whether a recording runs, and whether it wants screenshots.
    pub fn recording(&self) -> Option<bool> {
        self.lock().as_ref().map(|a| a.meta.capture_screenshots)
    }

    /// Append a step (its `step` number and `screenshot` file are filled in here).
    /// Does nothing when no recording runs.
    pub fn append(&self, mut step: RecordedStep, screenshot: Option<Vec<u8>>) {
        let mut guard = self.lock();
        let Some(active) = guard.as_mut() else {
            return;
        };
        let n = active.meta.steps + 1;
        step.step = n;
        if let Some(bytes) = screenshot {
            let rel = format!("shots/{n:04}.jpg");
            let path = self.dir.join(&active.meta.id).join(&rel);
            let saved = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| write_atomic(&path, &bytes));
            match saved {
                Ok(()) => step.screenshot = Some(rel),
                Err(e) => tracing::warn!(error = %e, "cannot save a recording screenshot"),
            }
        }
        let written = active.actions.append(&step).and_then(|()| active.actions.sync());
        if let Err(e) = written {
            tracing::error!(recording = %active.meta.id, error = %e, "cannot record a step");
            return;
        }
        active.meta.steps = n;
        if !step.ok {
            active.meta.failed_steps += 1;
        }
        if let Some(url) = step.url {
            active.meta.final_url = Some(url);
            active.meta.final_title = step.title;
        }
        if let Err(e) = self.write_meta(&active.meta) {
            tracing::warn!(recording = %active.meta.id, error = %e, "cannot update a recording's metadata");
        }
    }

    /// The newest `limit` recordings, newest first.
    pub fn list(&self, limit: usize) -> Vec<RecordingMeta> {
        let mut all = self.metas();
        all.sort_by(|a, b| b.started_ms.cmp(&a.started_ms).then_with(|| b.id.cmp(&a.id)));
        all.truncate(limit);
        all
    }

    fn dir_of(&self, id: &str) -> Result<PathBuf, ToolError> {
        let dir = self.dir.join(id);
        if !valid_id(id) || !dir.join("meta.json").is_file() {
            return Err(ToolError::recording_not_found(format!(
                "no recording {id:?}; oc_recording_list shows the recordings"
            ))
            .with("recordingId", id));
        }
        Ok(dir)
    }

    /// One recording: what it is and its steps.
    pub fn load(&self, id: &str) -> Result<Recording, ToolError> {
        let dir = self.dir_of(id)?;
        let meta = read_meta(&dir)?;
        let lines = read_jsonl(&dir.join("actions.jsonl"))
            .map_err(|e| storage_error("cannot read the recording", e))?;
        let steps = lines
            .into_iter()
            .map(serde_json::from_value)
            .collect::<Result<_, _>>()
            .map_err(|e| storage_error("corrupt recording step", e))?;
        Ok(Recording { meta, steps })
    }

    /// Save `steps` as a new version of stopped recording `id` (the steps it
    /// had go to `versions/v<N>.jsonl`, kept); its metadata after.
    pub fn save_version(
        &self,
        id: &str,
        steps: &[RecordedStep],
        reason: &str,
    ) -> Result<RecordingMeta, ToolError> {
        let dir = self.dir_of(id)?;
        // The lock: no recording starts or stops meanwhile.
        let guard = self.lock();
        if guard.as_ref().is_some_and(|a| a.meta.id == id) {
            return Err(ToolError::recording_active(format!(
                "recording {id} is still running: stop it before saving a version"
            ))
            .with("recordingId", id));
        }
        let mut meta = read_meta(&dir)?;
        if steps.len() as u64 != meta.steps {
            return Err(ToolError::invalid_argument(
                "steps",
                format!(
                    "recording {id} has {} steps; a version keeps them all ({} given)",
                    meta.steps,
                    steps.len()
                ),
            ));
        }
        let versions = dir.join("versions");
        std::fs::create_dir_all(&versions)
            .map_err(|e| storage_error("cannot keep the recording's version", e))?;
        let old = std::fs::read(dir.join("actions.jsonl"))
            .map_err(|e| storage_error("cannot read the recording", e))?;
        write_atomic(&versions.join(format!("v{}.jsonl", meta.version)), &old)
            .map_err(|e| storage_error("cannot keep the recording's version", e))?;
        write_atomic(&dir.join("actions.jsonl"), jsonl(steps).as_bytes())
            .map_err(|e| storage_error("cannot save the recording's version", e))?;
        meta.version += 1;
        let reason: String = reason.chars().take(2_000).collect();
        meta.versions.push(VersionNote {
            version: meta.version,
            at: iso_of(self.clock.now_ms()),
            reason,
        });
        self.write_meta(&meta).map_err(|e| storage_error("cannot save the recording", e))?;
        drop(guard);
        Ok(meta)
    }

    /// A new, stopped recording of `steps` (numbered from 1 here), labelled
    /// `label`, taking `params`: a recording made elsewhere, brought in.
    pub fn import(
        &self,
        label: &str,
        steps: Vec<RecordedStep>,
        params: Vec<Param>,
    ) -> Result<RecordingMeta, ToolError> {
        if steps.is_empty() {
            return Err(ToolError::invalid_argument("steps", "a recording has at least one step"));
        }
        let now = self.clock.now_ms();
        let label: String = label.chars().take(120).collect();
        let last_url = steps.iter().rev().find(|s| s.url.is_some());
        let meta = RecordingMeta {
            id: self.new_id(),
            label: (!label.is_empty()).then_some(label),
            status: "stopped".into(),
            started_at: iso_of(now),
            started_ms: now,
            stopped_at: Some(iso_of(now)),
            stopped_ms: Some(now),
            stopped_reason: Some("imported".into()),
            params,
            steps: steps.len() as u64,
            failed_steps: 0,
            capture_screenshots: false,
            session: "import".into(),
            final_url: last_url.and_then(|s| s.url.clone()),
            final_title: last_url.and_then(|s| s.title.clone()),
            version: 1,
            versions: Vec::new(),
        };
        let dir = self.dir.join(&meta.id);
        std::fs::create_dir_all(&dir)
            .map_err(|e| storage_error("cannot create the recording", e))?;
        let steps: Vec<RecordedStep> =
            steps.into_iter().zip(1..).map(|(s, step)| RecordedStep { step, ..s }).collect();
        write_atomic(&dir.join("actions.jsonl"), jsonl(&steps).as_bytes())
            .map_err(|e| storage_error("cannot save the recording", e))?;
        self.write_meta(&meta).map_err(|e| storage_error("cannot save the recording", e))?;
        Ok(meta)
    }

    /// A screenshot file a step names (`shots/NNNN.jpg`).
    pub fn screenshot(&self, id: &str, file: &str) -> Result<Vec<u8>, ToolError> {
        let dir = self.dir_of(id)?;
        let ok = file
            .strip_prefix("shots/")
            .and_then(|f| f.strip_suffix(".jpg"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !ok {
            return Err(ToolError::invalid_argument(
                "file",
                format!("{file:?} is not a screenshot of a recording (shots/NNNN.jpg)"),
            ));
        }
        std::fs::read(dir.join(file)).map_err(|e| {
            ToolError::recording_not_found(format!("screenshot {file} of recording {id}: {e}"))
        })
    }

    /// Write an export file into the recording's dir; its absolute path.
    pub fn save_export(&self, id: &str, name: &str, data: &[u8]) -> Result<PathBuf, ToolError> {
        let dir = self.dir_of(id)?;
        if !valid_file_name(name) {
            return Err(ToolError::invalid_argument(
                "file-name",
                format!(
                    "{name:?} is not a plain file name ([A-Za-z0-9._-], not meta.json or actions.jsonl)"
                ),
            ));
        }
        let path = dir.join(name);
        write_atomic(&path, data).map_err(|e| storage_error("cannot write the export", e))?;
        Ok(std::path::absolute(&path).unwrap_or(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ochre-rec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn steps_persist_and_an_interrupted_recording_is_closed_on_reopen() {
        let d = tmp("persist");
        let r = Recorder::open(&d, Clock::System, 30);
        let meta = r.start(Some("demo".into()), false, "s1").expect("start");
        assert_eq!(r.start(None, false, "s1").expect_err("twice").code, Code::RecordingActive);
        let step = |tool: &str, ok: bool, url: Option<&str>| RecordedStep {
            tool: tool.into(),
            ok,
            url: url.map(str::to_owned),
            ..RecordedStep::default()
        };
        r.append(step("navigate", true, Some("http://x/")), None);
        r.append(step("interact", false, None), Some(vec![1, 2, 3]));
        let loaded = r.load(&meta.id).expect("load");
        assert_eq!(loaded.steps[1].step, 2);
        assert_eq!(loaded.steps[1].screenshot.as_deref(), Some("shots/0002.jpg"));
        assert_eq!(loaded.meta.steps, 2);
        assert_eq!(loaded.meta.failed_steps, 1);
        assert_eq!(loaded.meta.final_url.as_deref(), Some("http://x/"));
        assert_eq!(r.screenshot(&meta.id, "shots/0002.jpg").expect("shot"), [1, 2, 3]);
        // The server "dies" while recording: a new one closes it.
        drop(r);
        let r = Recorder::open(&d, Clock::System, 30);
        assert!(r.active().is_none());
        let m = &r.list(10)[0];
        assert_eq!(m.status, "stopped");
        assert!(m.stopped_reason.is_some());
        assert_eq!(r.stop().expect_err("none").code, Code::NotRecording);
        std::fs::remove_dir_all(&d).expect("cleanup");
    }

    #[test]
    fn ids_and_file_names_cannot_escape_the_recordings_dir() {
        let d = tmp("escape");
        let r = Recorder::open(&d, Clock::System, 30);
        let meta = r.start(None, false, "s").expect("start");
        r.stop().expect("stop");
        for id in ["../x", "rec-../../etc", "", "REC-1"] {
            assert_eq!(r.load(id).expect_err(id).code, Code::RecordingNotFound);
        }
        for f in ["../meta.json", "shots/../../x.jpg", "meta.json"] {
            assert!(r.screenshot(&meta.id, f).is_err(), "{f}");
        }
        for f in ["../x.html", "meta.json", ".hidden", "a/b"] {
            assert!(r.save_export(&meta.id, f, b"x").is_err(), "{f}");
        }
        let p = r.save_export(&meta.id, "export.html", b"<p>").expect("save");
        assert!(p.starts_with(d.join("recordings")) || p.is_absolute());
        assert_eq!(std::fs::read(p).expect("read"), b"<p>");
        std::fs::remove_dir_all(&d).expect("cleanup");
    }

    #[test]
    fn retention_deletes_old_stopped_recordings() {
        let d = tmp("retention");
        let old = Recorder::open(&d, Clock::Fixed(1_000_000), 1);
        let m = old.start(None, false, "s").expect("start");
        old.stop().expect("stop");
        drop(old);
        let later = Recorder::open(&d, Clock::Fixed(1_000_000 + 2 * 86_400_000), 1);
        assert!(later.list(10).is_empty());
        assert!(!d.join("recordings").join(&m.id).exists());
        std::fs::remove_dir_all(&d).expect("cleanup");
    }
}
