//! Secrets the operator configures for plugins. A plugin sees only its own namespace:
//! key `K` of plugin `p` is the value named `OCHRE_<P>_<K>` (upper case, every
//! non-alphanumeric char `_`) among the values the embedder gives
//! ([`SecretStore::with_values`]; the `ochre` CLI gives its `OCHRE_*`
//! environment), else entry `K` under `"p"` in `<data-dir>/secrets.json` (mode
//! 0600). The library itself reads no environment. Values are never logged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::stores::write_atomic_private;
use ochre_protocol::lock;

type SecretsFile = BTreeMap<String, BTreeMap<String, String>>;

/// The file as last read, and what identified its version then.
type Cached = Option<(FileVersion, std::sync::Arc<SecretsFile>)>;

/// A file's identity and version: another process's write (atomic, by rename)
/// changes the inode, an in-place edit the length or the modification time.
#[derive(Clone, Copy, PartialEq, Eq)]
struct FileVersion {
    modified: Option<std::time::SystemTime>,
    len: u64,
    #[cfg(unix)]
    inode: u64,
}

impl FileVersion {
    /// File times tick coarsely (a kernel tick), and a freed inode number is
    /// soon reused: two writes close together may look the same. A version is
    /// trusted only once its file is older than that ("racy git").
    fn settled(&self) -> bool {
        self.modified
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > std::time::Duration::from_secs(2))
    }

    fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Self {
            modified: meta.modified().ok(),
            len: meta.len(),
            #[cfg(unix)]
            inode: meta.ino(),
        }
    }
}

/// Reads (and, for the CLI, writes) plugin secrets. The file is parsed again
/// only when it changed (a plugin reading a secret at every call costs a
/// `stat`, not a read and a parse).
#[derive(Clone)]
pub struct SecretStore {
    path: PathBuf,
    values: std::sync::Arc<BTreeMap<String, String>>,
    cached: std::sync::Arc<std::sync::Mutex<Cached>>,
}

impl std::fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names only: never a value.
        f.debug_struct("SecretStore")
            .field("path", &self.path)
            .field("values", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Upper case, every char that is not `[A-Za-z0-9]` becomes `_`.
pub fn normalize_key(key: &str) -> String {
    key.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect()
}

impl SecretStore {
    /// The store of a data dir.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            path: data_dir.join("secrets.json"),
            values: Default::default(),
            cached: Default::default(),
        }
    }

    /// Values that win over the file, by name (`OCHRE_<P>_<K>`, see
    /// [`Self::env_name`]).
    pub fn with_values(mut self, values: std::sync::Arc<BTreeMap<String, String>>) -> Self {
        self.values = values;
        self
    }

    /// The secrets file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The name of the value (the CLI: the env var) holding `key` for `plugin`.
    pub fn env_name(plugin: &str, key: &str) -> String {
        format!("OCHRE_{}_{}", normalize_key(plugin), normalize_key(key))
    }

    /// Secret `key` of `plugin`: the given values first, then the file.
    pub fn get(&self, plugin: &str, key: &str) -> Option<String> {
        if key.is_empty() || key.len() > 256 {
            return None;
        }
        if let Some(v) = self.values.get(&Self::env_name(plugin, key)).filter(|v| !v.is_empty()) {
            return Some(v.clone());
        }
        let file = self.read_cached().ok()?;
        file.get(plugin)?.get(&normalize_key(key)).cloned()
    }

    /// Store secret `key` for `plugin` in the file (atomically, mode 0600).
    pub fn set(&self, plugin: &str, key: &str, value: &str) -> Result<()> {
        let mut file = self.read()?;
        file.entry(plugin.to_owned()).or_default().insert(normalize_key(key), value.to_owned());
        self.write(&file)
    }

    /// Remove secret `key` of `plugin`; whether it was there.
    pub fn remove(&self, plugin: &str, key: &str) -> Result<bool> {
        let mut file = self.read()?;
        let removed = file.get_mut(plugin).and_then(|m| m.remove(&normalize_key(key))).is_some();
        if removed {
            self.write(&file)?;
        }
        Ok(removed)
    }

    /// Keys configured in the file for `plugin` (never the values).
    pub fn keys(&self, plugin: &str) -> Result<Vec<String>> {
        Ok(self.read()?.get(plugin).map(|m| m.keys().cloned().collect()).unwrap_or_default())
    }

    /// The file, parsed again only if it changed since the last read.
    fn read_cached(&self) -> Result<std::sync::Arc<SecretsFile>> {
        let version = match std::fs::metadata(&self.path) {
            Ok(meta) => FileVersion::of(&meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
            Err(e) => return Err(Error::io(format!("reading {}", self.path.display()), e)),
        };
        let mut cached = lock(&self.cached);
        if let Some((v, file)) = cached.as_ref()
            && *v == version
            && version.settled()
        {
            return Ok(file.clone());
        }
        let file = std::sync::Arc::new(self.read()?);
        *cached = Some((version, file.clone()));
        Ok(file)
    }

    fn read(&self) -> Result<SecretsFile> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::Config(format!("{} is not valid JSON: {e}", self.path.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SecretsFile::new()),
            Err(e) => Err(Error::io(format!("reading {}", self.path.display()), e)),
        }
    }

    fn write(&self, file: &SecretsFile) -> Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        let bytes = serde_json::to_vec_pretty(file)
            .map_err(|e| Error::Config(format!("cannot encode secrets: {e}")))?;
        write_atomic_private(&self.path, &bytes)
            .map_err(|e| Error::io(format!("writing {}", self.path.display()), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_secrets_are_scoped_by_plugin_and_private() {
        let dir = std::env::temp_dir().join(format!("ochre-secrets-{}", std::process::id()));
        let store = SecretStore::new(&dir);
        store.set("totp", "example.com", "ABC").expect("set");
        assert_eq!(store.get("totp", "example.com").as_deref(), Some("ABC"));
        assert_eq!(store.get("totp", "EXAMPLE_COM").as_deref(), Some("ABC"));
        assert_eq!(store.get("other", "example.com"), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path()).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(store.remove("totp", "example.com").expect("remove"));
        assert_eq!(store.get("totp", "example.com"), None);
        // Given values win over the file; the debug form names them, never the value.
        store.set("totp", "example.com", "FROM-FILE").expect("set");
        let given = [("OCHRE_TOTP_EXAMPLE_COM".to_owned(), "GIVEN".to_owned())];
        let store = store.with_values(std::sync::Arc::new(given.into_iter().collect()));
        assert_eq!(store.get("totp", "example.com").as_deref(), Some("GIVEN"));
        assert!(!format!("{store:?}").contains("GIVEN"));
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn a_change_by_another_writer_is_read_at_once() {
        let dir = std::env::temp_dir().join(format!("ochre-secrets-cache-{}", std::process::id()));
        let reader = SecretStore::new(&dir);
        assert_eq!(reader.get("totp", "a.example"), None);
        let writer = SecretStore::new(&dir);
        for i in 0..50 {
            // Back to back, same length each time: the cache must still see each write.
            writer.set("totp", "a.example", &format!("V{i:02}")).expect("set");
            assert_eq!(reader.get("totp", "a.example"), Some(format!("V{i:02}")));
        }
        // An in-place edit of the same length (no rename).
        let text = std::fs::read_to_string(reader.path()).expect("read");
        std::fs::write(reader.path(), text.replace("V49", "W49")).expect("edit");
        assert_eq!(reader.get("totp", "a.example").as_deref(), Some("W49"));
        // A settled file (older than a few ticks) is read once: an edit that keeps
        // its inode, length and time is not seen, which shows the cache is used.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let set_time = |t| {
            let f = std::fs::File::options().write(true).open(reader.path()).expect("open");
            f.set_modified(t).expect("mtime");
        };
        set_time(old);
        assert_eq!(reader.get("totp", "a.example").as_deref(), Some("W49"));
        std::fs::write(reader.path(), text.replace("V49", "X49")).expect("edit");
        set_time(old);
        assert_eq!(reader.get("totp", "a.example").as_deref(), Some("W49"));
        set_time(std::time::SystemTime::now());
        assert_eq!(reader.get("totp", "a.example").as_deref(), Some("X49"));
        std::fs::remove_file(reader.path()).expect("rm");
        assert_eq!(reader.get("totp", "a.example"), None);
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn env_names_are_normalized() {
        assert_eq!(
            SecretStore::env_name("totp", "login.example-site.com"),
            "OCHRE_TOTP_LOGIN_EXAMPLE_SITE_COM"
        );
    }
}
