//! Secrets the operator configures for plugins. A plugin sees only its own namespace:
//! key `K` of plugin `p` is the value named `OCHRE_<P>_<K>` (upper case, every
//! non-alphanumeric char `_`) among the values the embedder gives
//! ([`SecretStore::with_values`]; the `ochre` CLI gives its `OCHRE_*`
//! environment), else entry `K` under `"p"` in `<data-dir>/secrets.json` (mode
//! 0600). With the operator's login key ([`SecretStore::with_key`]) the file
//! is sealed like logins and credentials (XChaCha20-Poly1305: `{"version",
//! "nonce", "sealed"}`); a file in clear is still read, and sealed at its next
//! write. The library itself reads no environment. Values are never logged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::stores::sealed::{LoginKey, Unsealed, open_bytes, seal_bytes};
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
    key: Option<LoginKey>,
    cached: std::sync::Arc<std::sync::Mutex<Cached>>,
}

/// What the sealed file's cipher is bound to.
const SEALED_AAD: &[u8] = b"ochre secrets.json 1";

/// How `secrets.json` is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// There is no file.
    Nothing,
    /// In clear, with this many secrets.
    Clear(usize),
    /// Sealed with a login key.
    Sealed,
}

impl std::fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names only: never a value.
        f.debug_struct("SecretStore")
            .field("path", &self.path)
            .field("values", &self.values.keys().collect::<Vec<_>>())
            .field("key", &self.key)
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
            key: None,
            cached: Default::default(),
        }
    }

    /// Seal the file with `key` (the operator's login key) when it writes,
    /// and open it with that key when it is sealed.
    pub fn with_key(mut self, key: Option<LoginKey>) -> Self {
        self.key = key;
        self
    }

    /// How the file is stored now (for `ochre doctor`).
    pub fn stored(&self) -> Result<Stored> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Stored::Nothing),
            Err(e) => return Err(Error::io(format!("reading {}", self.path.display()), e)),
        };
        if Self::envelope(&bytes).is_some() {
            return Ok(Stored::Sealed);
        }
        Ok(Stored::Clear(self.read()?.values().map(BTreeMap::len).sum()))
    }

    /// Write the file again: sealed, with a key (what `ochre secret seal` does).
    pub fn rewrite(&self) -> Result<()> {
        let file = self.read()?;
        self.write(&file)
    }

    /// The nonce and sealed text of a sealed file's bytes.
    fn envelope(bytes: &[u8]) -> Option<(String, String)> {
        let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        Some((v.get("nonce")?.as_str()?.to_owned(), v.get("sealed")?.as_str()?.to_owned()))
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
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SecretsFile::new()),
            Err(e) => return Err(Error::io(format!("reading {}", self.path.display()), e)),
        };
        let path = self.path.display();
        let plain = match (Self::envelope(&bytes), &self.key) {
            (None, _) => bytes,
            (Some(_), None) => {
                return Err(Error::Config(format!(
                    "{path} is sealed with the login key, and none is set (OCHRE_LOGIN_KEY or --login-key-file)"
                )));
            }
            (Some((nonce, sealed)), Some(key)) => {
                match open_bytes(key, &nonce, &sealed, SEALED_AAD) {
                    Ok(plain) => plain,
                    Err(Unsealed::Damaged) => {
                        return Err(Error::Config(format!(
                            "{path} is damaged (it does not decode)"
                        )));
                    }
                    Err(Unsealed::OtherKey) => {
                        return Err(Error::Config(format!(
                            "{path} was sealed with another login key (or changed since)"
                        )));
                    }
                }
            }
        };
        serde_json::from_slice(&plain)
            .map_err(|e| Error::Config(format!("{path} is not valid JSON: {e}")))
    }

    fn write(&self, file: &SecretsFile) -> Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        let mut bytes = serde_json::to_vec_pretty(file)
            .map_err(|e| Error::Config(format!("cannot encode secrets: {e}")))?;
        if let Some(key) = &self.key {
            let (nonce, sealed) = seal_bytes(key, &bytes, SEALED_AAD)
                .map_err(|e| Error::Config(format!("cannot seal the secrets: {}", e.message)))?;
            let file = serde_json::json!({"version": 1, "nonce": nonce, "sealed": sealed});
            bytes = serde_json::to_vec_pretty(&file)
                .map_err(|e| Error::Config(format!("cannot encode secrets: {e}")))?;
        }
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
    fn with_a_key_the_file_is_sealed_and_a_clear_one_is_sealed_at_its_next_write() {
        let dir = std::env::temp_dir().join(format!("ochre-secrets-sealed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let clear = SecretStore::new(&dir);
        clear.set("ochre", "admin_password", "hunter2-clear").expect("set");
        assert_eq!(clear.stored().ok(), Some(Stored::Clear(1)));
        let key = LoginKey::generate().expect("key");
        let sealed = SecretStore::new(&dir).with_key(Some(key.clone()));
        // A clear file is read with a key, and sealed when written.
        assert_eq!(sealed.get("ochre", "admin_password").as_deref(), Some("hunter2-clear"));
        sealed.set("totp", "a.example", "JBSWY3DPEHPK3PXP").expect("set");
        assert_eq!(sealed.stored().ok(), Some(Stored::Sealed));
        let text = std::fs::read_to_string(sealed.path()).expect("read");
        for value in ["hunter2-clear", "JBSWY3DPEHPK3PXP", "admin_password", "a.example"] {
            assert!(!text.contains(value), "{value} in clear: {text}");
        }
        let again = SecretStore::new(&dir).with_key(Some(key));
        assert_eq!(again.get("totp", "a.example").as_deref(), Some("JBSWY3DPEHPK3PXP"));
        assert_eq!(again.keys("ochre").expect("keys"), ["ADMIN_PASSWORD"]);
        // Without the key, or with another, nothing is read, and a write is refused.
        assert_eq!(clear.get("totp", "a.example"), None);
        assert!(clear.set("totp", "b", "x").is_err(), "a keyless write over a sealed file");
        let other = SecretStore::new(&dir).with_key(Some(LoginKey::generate().expect("key")));
        let e = other.keys("totp").expect_err("another key");
        assert!(e.to_string().contains("another login key"), "{e}");
        assert_eq!(again.get("totp", "a.example").as_deref(), Some("JBSWY3DPEHPK3PXP"));
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
