//! Plugin-private key-value state, one JSON file per plugin under
//! `<data-dir>/state/`, rewritten atomically on every change.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::stores::{StoreLock, write_atomic};

/// Longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 256;
/// Largest value, in bytes.
pub const MAX_VALUE_BYTES: usize = 1 << 20;
/// Most keys per plugin.
pub const MAX_KEYS: usize = 10_000;

/// A state file that exists but cannot be read as state (garbage, a torn
/// write by another tool, a disk error). It is kept as it is: nothing reads it
/// as empty and nothing writes over it until the operator looks.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the state file {} is damaged ({why}); it is kept as it is and nothing is written over it", file.display())]
pub struct Corrupt {
    /// The damaged file.
    pub file: PathBuf,
    /// What is wrong with it.
    pub why: String,
}

/// The state of one plugin.
#[derive(Debug)]
pub struct KvStore {
    path: PathBuf,
    /// Serializes read-modify-write of the file (across processes too).
    lock: StoreLock,
}

impl KvStore {
    /// The store of `plugin` under `state_dir`.
    pub fn new(state_dir: PathBuf, plugin: &str) -> Self {
        let lock = StoreLock::new(state_dir.join(format!(".{plugin}.json.lock")));
        Self { path: state_dir.join(format!("{plugin}.json")), lock }
    }

    fn read(&self) -> Result<BTreeMap<String, String>, Corrupt> {
        let corrupt = |why: String| Corrupt { file: self.path.clone(), why };
        match std::fs::read(&self.path) {
            Ok(b) => serde_json::from_slice(&b)
                .map_err(|e| corrupt(format!("not a JSON map of strings: {e}"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(corrupt(format!("cannot read it: {e}"))),
        }
    }

    fn write(&self, map: &BTreeMap<String, String>) -> Result<(), String> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("state dir: {e}"))?;
        }
        let bytes = serde_json::to_vec(map).map_err(|e| e.to_string())?;
        write_atomic(&self.path, &bytes).map_err(|e| format!("writing state: {e}"))
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Result<Option<String>, Corrupt> {
        let _g = self.lock.lock();
        Ok(self.read()?.remove(key))
    }

    /// Set `key` to `value` (the inner error is the plugin's to handle).
    pub fn set(&self, key: &str, value: &str) -> Result<Result<(), String>, Corrupt> {
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return Ok(Err(format!("key must be 1-{MAX_KEY_BYTES} bytes")));
        }
        if value.len() > MAX_VALUE_BYTES {
            return Ok(Err(format!("value must be at most {MAX_VALUE_BYTES} bytes")));
        }
        let _g = self.lock.lock();
        let mut map = self.read()?;
        if !map.contains_key(key) && map.len() >= MAX_KEYS {
            return Ok(Err(format!("at most {MAX_KEYS} keys")));
        }
        map.insert(key.to_owned(), value.to_owned());
        Ok(self.write(&map))
    }

    /// Remove `key`.
    pub fn delete(&self, key: &str) -> Result<Result<(), String>, Corrupt> {
        let _g = self.lock.lock();
        let mut map = self.read()?;
        if map.remove(key).is_some() {
            return Ok(self.write(&map));
        }
        Ok(Ok(()))
    }

    /// All keys.
    pub fn keys(&self) -> Result<Vec<String>, Corrupt> {
        let _g = self.lock.lock();
        Ok(self.read()?.into_keys().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_file_is_reported_and_never_written_over() {
        let dir = std::env::temp_dir().join(format!("ochre-kv-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let kv = KvStore::new(dir.clone(), "crawl");
        assert_eq!(kv.get("a").expect("no file is empty state"), None);
        kv.set("a", "1").expect("readable").expect("set");
        assert_eq!(kv.keys().expect("keys"), ["a"]);
        let file = dir.join("crawl.json");
        std::fs::write(&file, b"{\"a\": \"1\", garbage").expect("damage");
        let e = kv.get("a").expect_err("damaged");
        assert_eq!(e.file, file);
        assert!(kv.set("b", "2").is_err() && kv.delete("a").is_err() && kv.keys().is_err());
        assert_eq!(std::fs::read(&file).expect("kept"), b"{\"a\": \"1\", garbage");
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
