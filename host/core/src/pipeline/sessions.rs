//! What the guards remember per MCP session: the session's unfinished task runs
//! (the active one is the single one) and its hint state.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::hints::HintState;
use ochre_protocol::lock;

/// Sessions remembered at most (HTTP clients come and go).
const MAX_SESSIONS: usize = 1024;
/// The session of calls that name none (an embedder's).
const SHARED: &str = "-";

#[derive(Default)]
pub(crate) struct SessionState {
    /// Unfinished runs started in this session (the active one is the single one).
    pub runs: Vec<String>,
    pub hints: HintState,
    last_used: u64,
}

/// Per-session guard state.
#[derive(Default)]
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, SessionState>>,
    tick: std::sync::atomic::AtomicU64,
}

impl Sessions {
    pub(crate) fn with<T>(
        &self,
        session: Option<&str>,
        f: impl FnOnce(&mut SessionState) -> T,
    ) -> T {
        let key = session.unwrap_or(SHARED);
        let mut map = lock(&self.map);
        if map.len() >= MAX_SESSIONS
            && !map.contains_key(key)
            && let Some(oldest) =
                map.iter().min_by_key(|(_, s)| s.last_used).map(|(k, _)| k.clone())
        {
            map.remove(&oldest);
        }
        let s = map.entry(key.to_owned()).or_default();
        s.last_used = self.tick.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f(s)
    }
}

impl Sessions {
    /// A run ended: it is no session's active run any more (so finding a call's
    /// run needs no disk read).
    pub(crate) fn forget_run(&self, id: &str) {
        let mut map = lock(&self.map);
        for s in map.values_mut() {
            s.runs.retain(|r| r != id);
        }
    }
}
