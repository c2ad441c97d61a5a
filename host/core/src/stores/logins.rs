//! Named logins: a browser session's storage state (its cookies, httpOnly ones
//! included, and its pages' `localStorage`, per origin) kept under a name, to
//! seed new isolated sessions already signed in.
//!
//! A login is sealed with a key the operator holds outside the data dir
//! ([`LoginKey`]: `OCHRE_LOGIN_KEY`, or a key file, for the CLI), with
//! XChaCha20-Poly1305: no cookie or storage value is ever written in clear.
//! Beside the sealed state each file keeps a summary in clear (its origins,
//! its cookies' domains and names, how many storage entries), which is what
//! `list` and `show` tell; the summary is bound to the sealed state (it is the
//! cipher's associated data, with the name), so it cannot be changed or moved to
//! another login unnoticed. Without the key, or with another one, a login
//! cannot be read, and loading it says so.
//!
//! Files: `<data-dir>/logins/<name>.json` (mode 0600), each written atomically.

use std::path::{Path, PathBuf};

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use data_encoding::BASE64;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use ochre_protocol::ToolError;

use crate::stores::{StoreLock, write_atomic_private};

type Result<T> = std::result::Result<T, ToolError>;

fn failed(doing: &str, e: impl std::fmt::Display) -> ToolError {
    ToolError::storage_failed(format!("{doing}: {e}"))
}

/// The file format's version.
const VERSION: u32 = 1;

/// The key logins are sealed with: 32 bytes, written as base64 (or 64 hex
/// digits). `ochre login keygen` prints a new one.
#[derive(Clone)]
pub struct LoginKey([u8; 32]);

impl std::fmt::Debug for LoginKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoginKey(•••)")
    }
}

impl LoginKey {
    /// A key from its text (base64 of 32 bytes, or 64 hex digits); surrounding
    /// white space is ignored. The error never quotes the text.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let t = text.trim();
        let bytes = data_encoding::HEXLOWER_PERMISSIVE
            .decode(t.as_bytes())
            .ok()
            .filter(|b| b.len() == 32)
            .or_else(|| BASE64.decode(t.as_bytes()).ok())
            .or_else(|| data_encoding::BASE64URL.decode(t.as_bytes()).ok());
        match bytes.map(<[u8; 32]>::try_from) {
            Some(Ok(k)) => Ok(Self(k)),
            _ => Err("a login key is 32 bytes written as base64 (44 characters) or as 64 hex \
                      digits; `ochre login keygen` makes one"
                .into()),
        }
    }

    /// A new random key (from the operating system's source).
    pub fn generate() -> Result<Self> {
        let mut k = [0u8; 32];
        getrandom::fill(&mut k).map_err(|e| ToolError::internal(format!("no randomness: {e}")))?;
        Ok(Self(k))
    }

    /// The key as base64, as [`Self::parse`] reads it.
    pub fn encoded(&self) -> String {
        BASE64.encode(&self.0)
    }
}

pub use ochre_protocol::browser::{OriginStorage, StorageState};

/// What a login is, without a value: what `list` and `show` tell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoginSummary {
    /// Its name.
    pub name: String,
    /// When it was saved (RFC 3339, UTC).
    pub saved_at: String,
    /// The origins whose `localStorage` it holds.
    pub origins: Vec<String>,
    /// Its cookies, as `domain name` (never a value).
    pub cookies: Vec<String>,
    /// How many `localStorage` entries, over all origins.
    pub storage_entries: usize,
}

impl LoginSummary {
    fn of(name: &str, state: &StorageState) -> Self {
        let text = |c: &Value, k: &str| c[k].as_str().unwrap_or_default().to_owned();
        let mut cookies: Vec<String> = state
            .cookies
            .iter()
            .map(|c| format!("{} {}", text(c, "domain"), text(c, "name")))
            .collect();
        cookies.sort();
        Self {
            name: name.to_owned(),
            saved_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            origins: state.origins.iter().map(|o| o.origin.clone()).collect(),
            cookies,
            storage_entries: state.origins.iter().map(|o| o.local_storage.len()).sum(),
        }
    }
}

/// A login's file.
#[derive(Serialize, Deserialize)]
struct LoginFile {
    version: u32,
    summary: LoginSummary,
    /// base64 of the 24-byte nonce.
    nonce: String,
    /// base64 of the sealed JSON of the [`StorageState`].
    sealed: String,
}

/// The named logins of a data dir.
#[derive(Debug)]
pub struct LoginStore {
    dir: PathBuf,
    key: Option<LoginKey>,
    lock: StoreLock,
}

/// Whether `name` may name a login: 1 to 64 of `A-Z a-z 0-9 . _ -`, not
/// starting with a dot.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

impl LoginStore {
    /// The logins under `data_dir`, sealed and opened with `key` (without
    /// one, they can be listed, shown and deleted, not saved or loaded).
    pub fn new(data_dir: &Path, key: Option<LoginKey>) -> Self {
        let dir = data_dir.join("logins");
        Self { lock: StoreLock::new(dir.join(".lock")), dir, key }
    }

    /// `name`, if it may name a login; else `INVALID_ARGUMENT` saying why.
    pub fn check_name(name: &str) -> Result<()> {
        if !valid_name(name) {
            return Err(ToolError::invalid_argument(
                "name",
                format!(
                    "{name:?} is not a login name (1 to 64 of A-Z a-z 0-9 . _ -, not starting with a dot)"
                ),
            ));
        }
        Ok(())
    }

    fn path(&self, name: &str) -> Result<PathBuf> {
        Self::check_name(name)?;
        Ok(self.dir.join(format!("{name}.json")))
    }

    fn key(&self, doing: &str) -> Result<&LoginKey> {
        self.key.as_ref().ok_or_else(|| {
            ToolError::login_locked(format!(
                "cannot {doing}: the server has no login key (the operator sets \
                 OCHRE_LOGIN_KEY or --login-key-file; `ochre login keygen` makes one)"
            ))
        })
    }

    /// Save `state` as login `name` (replacing one of that name); its summary.
    pub fn save(&self, name: &str, state: &StorageState) -> Result<LoginSummary> {
        let path = self.path(name)?;
        let key = self.key("save a login")?;
        let summary = LoginSummary::of(name, state);
        let mut nonce = [0u8; 24];
        getrandom::fill(&mut nonce)
            .map_err(|e| ToolError::internal(format!("no randomness: {e}")))?;
        let plain = serde_json::to_vec(state).map_err(|e| ToolError::internal(e.to_string()))?;
        let aad = associated(&summary)?;
        let sealed = XChaCha20Poly1305::new((&key.0).into())
            .encrypt(XNonce::from_slice(&nonce), Payload { msg: &plain, aad: &aad })
            .map_err(|_| ToolError::internal("cannot seal the login"))?;
        let file = LoginFile {
            version: VERSION,
            summary: summary.clone(),
            nonce: BASE64.encode(&nonce),
            sealed: BASE64.encode(&sealed),
        };
        let bytes =
            serde_json::to_vec_pretty(&file).map_err(|e| ToolError::internal(e.to_string()))?;
        let _guard = self.lock.lock();
        std::fs::create_dir_all(&self.dir).map_err(|e| failed("cannot make the logins dir", e))?;
        write_atomic_private(&path, &bytes).map_err(|e| failed("cannot write the login", e))?;
        Ok(summary)
    }

    /// Login `name`'s storage state (unsealed with the key).
    pub fn load(&self, name: &str) -> Result<StorageState> {
        self.open(name).map(|(_, state)| state)
    }

    /// Login `name`'s summary and storage state, from one read of its file.
    pub fn open(&self, name: &str) -> Result<(LoginSummary, StorageState)> {
        let key = self.key("load a login")?;
        let file = self.read(name)?;
        let aad = associated(&file.summary)?;
        let bad = || {
            ToolError::state_corrupt(format!(
                "login {name:?} is damaged (its file does not decode)"
            ))
        };
        let nonce = BASE64.decode(file.nonce.as_bytes()).map_err(|_| bad())?;
        let sealed = BASE64.decode(file.sealed.as_bytes()).map_err(|_| bad())?;
        if nonce.len() != 24 {
            return Err(bad());
        }
        let plain = XChaCha20Poly1305::new((&key.0).into())
            .decrypt(XNonce::from_slice(&nonce), Payload { msg: &sealed, aad: &aad })
            .map_err(|_| {
                ToolError::login_locked(format!(
                    "cannot open login {name:?}: it was saved with another key (or its file was changed)"
                ))
            })?;
        let state = serde_json::from_slice(&plain).map_err(|_| bad())?;
        Ok((file.summary, state))
    }

    /// What login `name` holds, without a value (no key needed).
    pub fn show(&self, name: &str) -> Result<LoginSummary> {
        Ok(self.read(name)?.summary)
    }

    /// Every login, by name (no key needed). A file that does not read is
    /// left out and logged.
    pub fn list(&self) -> Result<Vec<LoginSummary>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(failed("cannot read the logins dir", e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let file = entry.file_name();
            let Some(name) = file.to_str().and_then(|f| f.strip_suffix(".json")) else { continue };
            match self.read(name) {
                Ok(f) => out.push(f.summary),
                Err(e) => tracing::warn!(login = name, error = %e, "a login file does not read"),
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Delete login `name`; whether there was one.
    pub fn delete(&self, name: &str) -> Result<bool> {
        let path = self.path(name)?;
        let _guard = self.lock.lock();
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(failed("cannot delete the login", e)),
        }
    }

    fn read(&self, name: &str) -> Result<LoginFile> {
        let path = self.path(name)?;
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ToolError::login_not_found(format!("no login named {name:?}")));
            }
            Err(e) => return Err(failed("cannot read the login", e)),
        };
        let damaged = |why: String| {
            ToolError::state_corrupt(format!("login {name:?} is damaged: {why}"))
                .with("file", path.display().to_string())
        };
        let file: LoginFile = serde_json::from_slice(&bytes).map_err(|e| damaged(e.to_string()))?;
        if file.version != VERSION || file.summary.name != name {
            return Err(damaged(format!("not a version-{VERSION} login named {name:?}")));
        }
        Ok(file)
    }
}

/// What a login's seal is bound to besides its content: its summary (name
/// included).
fn associated(summary: &LoginSummary) -> Result<Vec<u8>> {
    serde_json::to_vec(summary).map_err(|e| ToolError::internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> StorageState {
        StorageState {
            cookies: vec![
                json!({"name": "session", "value": "s3cr3t-cookie-value", "domain": "127.0.0.1", "httpOnly": true}),
            ],
            origins: vec![OriginStorage {
                origin: "http://127.0.0.1:5000".into(),
                local_storage: vec![("token".into(), "s3cr3t-storage-value".into())],
            }],
        }
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ochre-logins-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_login_is_sealed_and_only_its_key_opens_it() {
        let data = dir("seal");
        let key = LoginKey::generate().expect("a key");
        let store = LoginStore::new(&data, Some(key.clone()));
        let summary = store.save("admin", &state()).expect("saved");
        assert_eq!(summary.cookies, ["127.0.0.1 session"]);
        assert_eq!((summary.origins.len(), summary.storage_entries), (1, 1));
        let file = std::fs::read_to_string(data.join("logins/admin.json")).expect("the file");
        assert!(!file.contains("s3cr3t"), "a value in clear: {file}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(data.join("logins/admin.json"))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(store.load("admin").expect("opened"), state());
        // The same key read back from its text opens it too.
        let again = LoginStore::new(&data, Some(LoginKey::parse(&key.encoded()).expect("parsed")));
        assert_eq!(again.load("admin").expect("opened"), state());

        // Without the key: listed and shown, never opened; another key fails.
        let keyless = LoginStore::new(&data, None);
        assert_eq!(keyless.list().expect("list")[0].name, "admin");
        assert_eq!(keyless.show("admin").expect("show").cookies, ["127.0.0.1 session"]);
        let e = keyless.load("admin").expect_err("no key");
        assert!(
            e.code == ochre_protocol::Code::LoginLocked && e.message.contains("no login key"),
            "{e}"
        );
        let other = LoginStore::new(&data, Some(LoginKey::generate().expect("a key")));
        let e = other.load("admin").expect_err("another key");
        assert!(
            e.code == ochre_protocol::Code::LoginLocked && e.message.contains("another key"),
            "{e}"
        );

        // A changed summary (or a file moved to another name) does not open.
        let path = data.join("logins/admin.json");
        let changed = file.replace("127.0.0.1 session", "127.0.0.1 other");
        std::fs::write(&path, changed).expect("written");
        assert!(store.load("admin").is_err());
        std::fs::write(&path, &file).expect("written");
        std::fs::copy(&path, data.join("logins/copy.json")).expect("copied");
        assert!(store.load("copy").is_err(), "a login opened under another name");

        assert!(store.delete("admin").expect("deleted"));
        assert!(!store.delete("admin").expect("gone"));
        assert_eq!(
            store.load("admin").expect_err("gone").code,
            ochre_protocol::Code::LoginNotFound
        );
        let _ = std::fs::remove_dir_all(&data);
    }

    #[test]
    fn names_and_keys_are_checked() {
        for good in ["admin", "a.b-c_d", "x"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", ".hidden", "a/b", "../x", "a b", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
        let store = LoginStore::new(&dir("names"), LoginKey::generate().ok());
        let e = store.save("../escape", &state()).expect_err("refused");
        assert_eq!(e.details["field"], "name");
        assert!(LoginKey::parse("short").is_err());
        let hex = "ab".repeat(32);
        assert!(LoginKey::parse(&hex).is_ok());
        let e = LoginKey::parse("not a key at all").expect_err("refused");
        assert!(!e.contains("not a key at all"), "the error quotes the text: {e}");
    }
}
