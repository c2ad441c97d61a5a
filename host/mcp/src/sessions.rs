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
//! transport's 404); a session's requests mark its file as used (at most once
//! a minute).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use ochre_protocol::lock;
use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

/// How long a session may sit idle and still be resumed: the transport's own
/// keep-alive, past which the server that opened it would have closed it too.
pub const RESUME_IDLE: Duration =
    rmcp::transport::streamable_http_server::session::local::SessionConfig::DEFAULT_KEEP_ALIVE;

/// How often a busy session's file is marked as used: well within
/// [`RESUME_IDLE`], and not a file operation per request.
const TOUCH_EVERY: Duration = Duration::from_secs(60);

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
    /// When this server last marked each session's file as used.
    touched: Mutex<HashMap<String, Instant>>,
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
            touched: Mutex::default(),
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
        let pending = lock(&self.restoring).get(id).cloned();
        if let Some(lock) = pending {
            drop(lock.lock().await);
            self.release(id, lock);
        }
    }

    /// Run `take_up` (a request that may take the session `id` up from the
    /// store) alone among the session's requests.
    pub async fn one_at_a_time<F: Future>(&self, id: &str, take_up: F) -> F::Output {
        let lock = ochre_protocol::lock(&self.restoring).entry(id.to_owned()).or_default().clone();
        let guard = lock.lock().await;
        let out = take_up.await;
        drop(guard);
        self.release(id, lock);
        out
    }

    /// Let go of the take-up lock of `id`: the last request holding it (new
    /// holders clone it under the map's lock) removes it from the map.
    fn release(&self, id: &str, lock: Arc<tokio::sync::Mutex<()>>) {
        let mine = Arc::as_ptr(&lock);
        drop(lock);
        let mut map = ochre_protocol::lock(&self.restoring);
        if map.get(id).is_some_and(|l| Arc::as_ptr(l) == mine && Arc::strong_count(l) == 1) {
            map.remove(id);
        }
    }

    /// Whether the session `id` has a handshake here that it could be taken
    /// up from (a file, not idle past the limit).
    pub fn has(&self, id: &str) -> bool {
        self.file(id).is_some_and(|f| f.is_file() && !self.stale(&f))
    }

    /// Whether this server took the session `id` up (rather than opened it).
    pub fn was_resumed(&self, id: &str) -> bool {
        lock(&self.resumed).contains(id)
    }

    /// Mark a session as used (its file's modification time), so that a busy
    /// session stays resumable however long it lives: at its first request
    /// here and then at most every [`TOUCH_EVERY`].
    pub fn touch(&self, id: &str) {
        let now = Instant::now();
        {
            let mut touched = lock(&self.touched);
            if touched.get(id).is_some_and(|t| now.duration_since(*t) < TOUCH_EVERY) {
                return;
            }
            if touched.len() >= 1024 {
                // Sessions gone without a `delete` (the transport's idle close).
                touched.retain(|_, t| now.duration_since(*t) < self.idle);
            }
            touched.insert(id.to_owned(), now);
        }
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
        lock(&self.resumed).insert(session_id.to_owned());
        Ok(Some(state))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let file = self.file(session_id).ok_or("not a session id")?;
        std::fs::create_dir_all(&self.dir)?;
        ochre_protocol::fs::write_atomic_private(&file, &serde_json::to_vec(state)?)?;
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        lock(&self.resumed).remove(session_id);
        lock(&self.touched).remove(session_id);
        if let Some(file) = self.file(session_id) {
            match std::fs::remove_file(file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Box::new(e)),
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(name: &str) -> (FileSessionStore, PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("ochre-sessions-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sessions")).expect("dir");
        (FileSessionStore::new(&dir), dir)
    }

    fn age(file: &Path, by: Duration) {
        let f = std::fs::OpenOptions::new().write(true).open(file).expect("open");
        f.set_modified(SystemTime::now() - by).expect("set_modified");
    }

    fn idle_for(file: &Path) -> Duration {
        let t = std::fs::metadata(file).and_then(|m| m.modified()).expect("mtime");
        SystemTime::now().duration_since(t).unwrap_or_default()
    }

    /// A session's first request here marks its file as used; the requests
    /// after it within a minute do not touch the file again.
    #[test]
    fn a_session_is_marked_used_at_its_first_request_then_once_a_minute() {
        let (store, dir) = store("touch");
        let file = dir.join("sessions").join("s-1.json");
        std::fs::write(&file, "{}").expect("write");
        age(&file, Duration::from_secs(200));
        assert!(store.has("s-1"));
        store.touch("s-1");
        assert!(idle_for(&file) < Duration::from_secs(10), "the first request marks it");
        age(&file, Duration::from_secs(200));
        store.touch("s-1");
        assert!(
            idle_for(&file) > Duration::from_secs(190),
            "a second request within a minute does not"
        );
        age(&file, RESUME_IDLE + Duration::from_secs(1));
        assert!(!store.has("s-1"), "idle past the limit: not to be taken up");
        assert!(!store.has("../s-1") && !store.has("none"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// However the requests of a session being taken up interleave (one
    /// taking it up, others waiting to run after it), none leaves its lock
    /// behind.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn taking_a_session_up_leaves_no_lock_behind() {
        let (store, dir) = store("locks");
        let store = Arc::new(store);
        for round in 0..50 {
            let id = format!("s-{round}");
            let mut tasks = Vec::new();
            for k in 0..4 {
                let (store, id) = (store.clone(), id.clone());
                tasks.push(tokio::spawn(async move {
                    if k % 2 == 0 {
                        store.one_at_a_time(&id, tokio::task::yield_now()).await;
                    } else {
                        tokio::task::yield_now().await;
                        store.settled(&id).await;
                    }
                }));
            }
            for t in tasks {
                t.await.expect("task");
            }
            let left = store.restoring.lock().expect("map").len();
            assert_eq!(left, 0, "round {round}: a take-up lock left behind");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
