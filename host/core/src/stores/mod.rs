//! The host's stores under the data dir, each a module of its own, and what
//! they share: the durable file primitives (from `ochre_protocol::fs`: atomic
//! writes, append-only JSONL with fsync) and, here, the lock, the JSON files and
//! the check for damaged ones.
//!
//! | store | what it keeps |
//! |---|---|
//! | [`journal`] | every call (JSONL per day) and the call traces |
//! | [`output`] | output handles: large results kept for `oc_output_fetch` |
//! | [`taskrun`] | task runs and their state machine |
//! | [`bulk`] | progress contracts of bulk work |
//! | [`recording`] | recordings of tool calls, for replay |
//! | [`kv`] | plugins' key-value state, per plugin |
//! | [`secrets`] | named secrets (`0600` files) |
//! | [`sealed`] | files sealed with the operator's key: what logins and credentials are kept in |
//! | [`logins`] | named logins: sessions' storage states, sealed |
//! | [`credentials`] | origin-bound credentials (username, password, TOTP seed), sealed |

pub mod bulk;
pub mod credentials;
pub mod journal;
pub mod kv;
pub mod logins;
pub mod output;
pub mod recording;
pub mod sealed;
pub mod secrets;
pub mod taskrun;

use ochre_protocol::lock;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

pub use ochre_protocol::fs::{JsonlFile, read_jsonl, write_atomic, write_atomic_private};

/// Serializes the read-modify-write of a store's files among this process's
/// threads (a mutex) and among the processes that share the data dir (an
/// advisory `flock` on a hidden lock file beside the files: replicas of a
/// server tier on one machine, or on several over an NFS mount, whose Linux
/// client carries `flock` as a byte-range lock to the server). Readers take no
/// lock: every file is replaced atomically, so they see the old or the new one.
#[derive(Debug)]
pub(crate) struct StoreLock {
    file: PathBuf,
    threads: Mutex<()>,
}

/// Held while a store changes its files; dropping it unlocks (the lock file's
/// descriptor is closed first, then the mutex).
pub(crate) struct StoreGuard<'a> {
    _file: Option<std::fs::File>,
    _threads: MutexGuard<'a, ()>,
}

impl StoreLock {
    /// A lock on the lock file `file` (created, with its directory, when first
    /// locked).
    pub(crate) fn new(file: PathBuf) -> Self {
        Self { file, threads: Mutex::new(()) }
    }

    /// Wait for the lock. If the lock file cannot be made or locked (a
    /// read-only dir, a file system without locks) the store is still
    /// serialized within this process, and that is logged: the write that
    /// follows reports its own error if the dir cannot be written either.
    pub(crate) fn lock(&self) -> StoreGuard<'_> {
        let threads = lock(&self.threads);
        let file = (|| {
            if let Some(dir) = self.file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let f = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&self.file)?;
            f.lock()?;
            std::io::Result::Ok(f)
        })();
        let file = file
            .inspect_err(|e| {
                tracing::warn!(file = %self.file.display(), error = %e, "cannot lock the store across processes; only this process's changes are serialized");
            })
            .ok();
        StoreGuard { _file: file, _threads: threads }
    }
}

/// The error of stored state that exists but cannot be read: `STATE_CORRUPT`
/// naming the file, which is kept as it is (never replaced nor swept).
pub(crate) fn corrupt(file: &Path, what: &str) -> crate::ToolError {
    crate::ToolError::state_corrupt(format!(
            "{what} is damaged: {} is not the JSON it should be; it is kept as it is (restore it, or move it away to forget it)",
            file.display()
        ),
    )
    .with("file", file.display().to_string())
}

/// Read a JSON record written by [`write_json`]: `None` when there is no file,
/// `STATE_CORRUPT` (naming it) when it cannot be read as a `T`.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(
    file: &Path,
    what: &str,
) -> Result<Option<T>, crate::ToolError> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(crate::ToolError::storage_failed(format!(
                "cannot read {what} ({}): {e}",
                file.display()
            ))
            .with("file", file.display().to_string()));
        }
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|_| corrupt(file, what))
}

/// Write a JSON record atomically (pretty, newline-terminated), creating its
/// dir; a failure is `STORAGE_FAILED` "cannot save {what}".
pub(crate) fn write_json<T: serde::Serialize>(
    file: &Path,
    record: &T,
    what: &str,
) -> Result<(), crate::ToolError> {
    let fail = |e: &dyn std::fmt::Display| {
        crate::ToolError::storage_failed(format!("cannot save {what}: {e}"))
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    }
    let mut bytes = serde_json::to_vec_pretty(record).map_err(|e| fail(&e))?;
    bytes.push(b'\n');
    write_atomic(file, &bytes).map_err(|e| fail(&e))
}

/// The damaged state files under a data dir (task runs, contracts, output
/// handles' metadata, plugin state), for the startup warning.
pub fn damaged_files(data_dir: &Path) -> Vec<PathBuf> {
    let list = |dir: PathBuf| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default()
    };
    let mut files: Vec<PathBuf> = Vec::new();
    files.extend(
        list(data_dir.join("task-runs"))
            .into_iter()
            .map(|d| d.join("meta.json"))
            .filter(|f| f.exists()),
    );
    files.extend(list(data_dir.join("progress-contracts")));
    files.extend(list(data_dir.join("state")));
    for day in list(data_dir.join("output")) {
        files.extend(list(day).into_iter().filter(|f| {
            f.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".meta.json"))
        }));
    }
    files.retain(|f| {
        let is_json = f.extension().and_then(|e| e.to_str()) == Some("json");
        let hidden = f.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'));
        is_json
            && !hidden
            && read_json::<serde_json::Map<String, serde_json::Value>>(f, "")
                .is_err_and(|e| e.code == crate::error::Code::StateCorrupt)
    });
    files.sort();
    files
}

/// A store id: `prefix` then lowercase letters, digits and dashes, at most 64
/// bytes (so it is a safe file name and never a path).
pub fn valid_id(id: &str, prefix: &str) -> bool {
    id.starts_with(prefix)
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// A name safe to join to a dir: 1 to `max` bytes of `[A-Za-z0-9._-]`, not
/// starting with a dot (so never `.`, `..` or a hidden file).
pub fn is_plain_name(name: &str, max: usize) -> bool {
    !name.is_empty()
        && name.len() <= max
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}
