//! Sessions that outlive their server (`--resume-sessions`): each Streamable
//! HTTP session's handshake is kept in `<data-dir>/sessions/<session-id>.json`,
//! so that another server sharing the data dir (a replica behind a load
//! balancer, when the one that opened the session died) or this one after a
//! restart takes the session up under the same `Mcp-Session-Id`: rmcp replays
//! the `initialize` it stored, and the client's next call is served.
//!
//! What the session finds again is what lives in the data dir: task runs and
//! their contracts, output handles, recordings, the journal. Its tabs are gone
//! (they were in the dead server's browser context): a call naming one of them
//! gets `TAB_NOT_FOUND`, and the session's next tab opens in a new context.
//!
//! A call that was running on the dead server is not taken up: its response
//! died with that server. The client's attempt to resume its response stream
//! (`GET` with `Last-Event-ID`) gets 405 (no SSE stream here, the spec's answer
//! to a `GET` a server does not serve), so the client fails the call at once
//! instead of retrying an empty stream (`server::session_resume`). A session idle past the transport's keep-alive
//! is not resumed either (its file is removed, and the client gets the
//! transport's 404); every request of a session marks its file as used.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

/// How long a session may sit idle and still be resumed: the transport's own
/// keep-alive, past which the server that opened it would have closed it too.
pub const RESUME_IDLE: Duration =
    rmcp::transport::streamable_http_server::session::local::SessionConfig::DEFAULT_KEEP_ALIVE;

/// The sessions' handshakes under a data dir, and what this server knows of
/// the sessions it takes up.
#[derive(Debug)]
pub struct FileSessionStore {
    dir: PathBuf,
    idle: Duration,
    /// Sessions being taken up now: another request of one waits until it
    /// is (the transport would hand a request to a session still replaying
    /// its `initialize`, and lose the session).
    restoring: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Sessions this server took up: their streams from before were
    /// another server's.
    resumed: Mutex<HashSet<String>>,
}

impl FileSessionStore {
    /// The store under `data_dir` (`<data-dir>/sessions`); files idle past
    /// [`RESUME_IDLE`] are removed now.
    pub fn new(data_dir: &Path) -> Self {
        let me = Self {
            dir: data_dir.join("sessions"),
            idle: RESUME_IDLE,
            restoring: Mutex::default(),
            resumed: Mutex::default(),
        };
        me.prune();
        me
    }

    /// The file of `id`, if `id` is a plausible session id (rmcp's are UUIDs;
    /// anything that could be a path is not one).
    fn file(&self, id: &str) -> Option<PathBuf> {
        let plain = !id.is_empty()
            && id.len() <= 128
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        plain.then(|| self.dir.join(format!("{id}.json")))
    }

    fn stale(&self, file: &Path) -> bool {
        std::fs::metadata(file)
            .and_then(|m| m.modified())
            .map(|t| SystemTime::now().duration_since(t).unwrap_or_default() > self.idle)
            .unwrap_or(false)
    }

    /// Remove the files of sessions idle past the limit.
    pub fn prune(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut removed = 0;
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "json") && self.stale(&p) {
                removed += usize::from(std::fs::remove_file(&p).is_ok());
            }
        }
        removed
    }

    /// Wait until no request is taking the session `id` up.
    pub async fn settled(&self, id: &str) {
        let pending = self.restoring.lock().unwrap_or_else(|p| p.into_inner()).get(id).cloned();
        if let Some(lock) = pending {
            drop(lock.lock().await);
        }
    }

    /// Run `take_up` (a request that may take the session `id` up from the
    /// store) alone among the session's requests.
    pub async fn one_at_a_time<F: Future>(&self, id: &str, take_up: F) -> F::Output {
        let lock = self
            .restoring
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id.to_owned())
            .or_default()
            .clone();
        let guard = lock.lock().await;
        let out = take_up.await;
        drop(guard);
        let mut map = self.restoring.lock().unwrap_or_else(|p| p.into_inner());
        if map.get(id).is_some_and(|l| Arc::ptr_eq(l, &lock)) && Arc::strong_count(&lock) <= 2 {
            map.remove(id);
        }
        out
    }

    /// Whether this server took the session `id` up (rather than opened it).
    pub fn was_resumed(&self, id: &str) -> bool {
        self.resumed.lock().unwrap_or_else(|p| p.into_inner()).contains(id)
    }

    /// Mark a session as used now (its file's modification time), so that a
    /// busy session stays resumable however long it lives.
    pub fn touch(&self, id: &str) {
        if let Some(file) = self.file(id)
            && let Ok(f) = std::fs::OpenOptions::new().write(true).open(&file)
        {
            let _ = f.set_modified(SystemTime::now());
        }
    }
}

#[async_trait::async_trait]
impl SessionStore for FileSessionStore {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(file) = self.file(session_id) else {
            return Ok(None);
        };
        if self.stale(&file) {
            let _ = std::fs::remove_file(&file);
            tracing::info!(session = session_id, "not resuming a session idle past its keep-alive");
            return Ok(None);
        }
        let bytes = match std::fs::read(&file) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Box::new(e)),
        };
        let state: SessionState = serde_json::from_slice(&bytes)?;
        tracing::info!(session = session_id, "resuming a session from the shared data dir");
        self.resumed.lock().unwrap_or_else(|p| p.into_inner()).insert(session_id.to_owned());
        Ok(Some(state))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let file = self.file(session_id).ok_or("not a session id")?;
        std::fs::create_dir_all(&self.dir)?;
        ochre_protocol::fs::write_atomic_private(&file, &serde_json::to_vec(state)?)?;
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        self.resumed.lock().unwrap_or_else(|p| p.into_inner()).remove(session_id);
        if let Some(file) = self.file(session_id) {
            match std::fs::remove_file(file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Box::new(e)),
                _ => {}
            }
        }
        Ok(())
    }
}
