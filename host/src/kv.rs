//! Plugin-private key-value state, one JSON file per plugin under
//! `<data-dir>/state/`, rewritten atomically on every change.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::store::write_atomic;

/// Longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 256;
/// Largest value, in bytes.
pub const MAX_VALUE_BYTES: usize = 1 << 20;
/// Most keys per plugin.
pub const MAX_KEYS: usize = 10_000;

/// The state of one plugin.
#[derive(Debug)]
pub struct KvStore {
    path: PathBuf,
    lock: Mutex<()>,
}

impl KvStore {
    /// The store of `plugin` under `state_dir`.
    pub fn new(state_dir: PathBuf, plugin: &str) -> Self {
        Self {
            path: state_dir.join(format!("{plugin}.json")),
            lock: Mutex::new(()),
        }
    }

    fn read(&self) -> BTreeMap<String, String> {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn write(&self, map: &BTreeMap<String, String>) -> Result<(), String> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("state dir: {e}"))?;
        }
        let bytes = serde_json::to_vec(map).map_err(|e| e.to_string())?;
        write_atomic(&self.path, &bytes).map_err(|e| format!("writing state: {e}"))
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<String> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.read().remove(key)
    }

    /// Set `key` to `value`.
    pub fn set(&self, key: &str, value: &str) -> Result<(), String> {
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return Err(format!("key must be 1-{MAX_KEY_BYTES} bytes"));
        }
        if value.len() > MAX_VALUE_BYTES {
            return Err(format!("value must be at most {MAX_VALUE_BYTES} bytes"));
        }
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut map = self.read();
        if !map.contains_key(key) && map.len() >= MAX_KEYS {
            return Err(format!("at most {MAX_KEYS} keys"));
        }
        map.insert(key.to_owned(), value.to_owned());
        self.write(&map)
    }

    /// Remove `key`.
    pub fn delete(&self, key: &str) -> Result<(), String> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut map = self.read();
        if map.remove(key).is_some() {
            self.write(&map)?;
        }
        Ok(())
    }

    /// All keys.
    pub fn keys(&self) -> Vec<String> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.read().into_keys().collect()
    }
}
