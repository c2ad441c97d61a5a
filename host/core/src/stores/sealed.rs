//! Files sealed with the operator's key: what the named logins ([`super::logins`])
//! and the origin-bound credentials ([`super::credentials`]) are kept in.
//!
//! Each is `<data-dir>/<dir>/<name>.json` (mode 0600, written atomically): a
//! summary in clear (what `list` and `show` tell, never a value) and the
//! secret part sealed with XChaCha20-Poly1305 under the operator's
//! [`LoginKey`] (`OCHRE_LOGIN_KEY`, or a key file, for the CLI). The summary,
//! its name included, is the cipher's associated data: it cannot be changed,
//! or the file moved to another name, unnoticed. Without the key, or with
//! another one, nothing sealed can be read, and opening it says so.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use data_encoding::BASE64;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use ochre_protocol::ToolError;

use crate::stores::{StoreLock, write_atomic_private};

type Result<T> = std::result::Result<T, ToolError>;

fn failed(doing: &str, e: impl std::fmt::Display) -> ToolError {
    ToolError::storage_failed(format!("{doing}: {e}"))
}

/// The file format's version.
const VERSION: u32 = 1;

/// The key logins and credentials are sealed with: 32 bytes, written as
/// base64 (or 64 hex digits). `ochre login keygen` prints a new one.
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

/// What a kind of sealed file is: its dir, its word, its two parts.
pub trait Kind {
    /// The dir under the data dir (`logins`).
    const DIR: &'static str;
    /// What one is called in messages (`login`).
    const WHAT: &'static str;
    /// The part in clear: what `list` and `show` tell.
    type Summary: Serialize + DeserializeOwned + Clone;
    /// The sealed part.
    type Secret: Serialize + DeserializeOwned;
    /// The name a summary carries.
    fn name_of(summary: &Self::Summary) -> &str;
    /// The error for a name with no file.
    fn not_found(name: &str) -> ToolError;
}

/// A sealed file.
#[derive(Serialize, Deserialize)]
struct SealedFile<S> {
    version: u32,
    summary: S,
    /// base64 of the 24-byte nonce.
    nonce: String,
    /// base64 of the sealed JSON of the secret part.
    sealed: String,
}

/// Seal `plain` with `key` (XChaCha20-Poly1305, a random nonce), bound to
/// `aad`: the nonce and the sealed bytes, as base64.
pub(crate) fn seal_bytes(key: &LoginKey, plain: &[u8], aad: &[u8]) -> Result<(String, String)> {
    let mut nonce = [0u8; 24];
    getrandom::fill(&mut nonce).map_err(|e| ToolError::internal(format!("no randomness: {e}")))?;
    let sealed = XChaCha20Poly1305::new((&key.0).into())
        .encrypt(XNonce::from_slice(&nonce), Payload { msg: plain, aad })
        .map_err(|_| ToolError::internal("cannot seal"))?;
    Ok((BASE64.encode(&nonce), BASE64.encode(&sealed)))
}

/// Why [`open_bytes`] opened nothing.
pub(crate) enum Unsealed {
    /// The base64 or the nonce's length is wrong.
    Damaged,
    /// Sealed with another key, or changed since.
    OtherKey,
}

/// Open what [`seal_bytes`] sealed (its base64 nonce and bytes) with `key`
/// and the same `aad`.
pub(crate) fn open_bytes(
    key: &LoginKey,
    nonce: &str,
    sealed: &str,
    aad: &[u8],
) -> std::result::Result<Vec<u8>, Unsealed> {
    let nonce = BASE64.decode(nonce.as_bytes()).map_err(|_| Unsealed::Damaged)?;
    let sealed = BASE64.decode(sealed.as_bytes()).map_err(|_| Unsealed::Damaged)?;
    if nonce.len() != 24 {
        return Err(Unsealed::Damaged);
    }
    XChaCha20Poly1305::new((&key.0).into())
        .decrypt(XNonce::from_slice(&nonce), Payload { msg: &sealed, aad })
        .map_err(|_| Unsealed::OtherKey)
}

/// The sealed files of one kind in a data dir.
pub struct Sealed<K: Kind> {
    dir: PathBuf,
    key: Option<LoginKey>,
    lock: StoreLock,
    kind: PhantomData<K>,
}

impl<K: Kind> std::fmt::Debug for Sealed<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealed").field("dir", &self.dir).field("key", &self.key).finish()
    }
}

/// Whether `name` may name a login or a credential: 1 to 64 of
/// `A-Z a-z 0-9 . _ -`, not starting with a dot.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

impl<K: Kind> Sealed<K> {
    /// The files under `data_dir`, sealed and opened with `key` (without one,
    /// they can be listed, shown and deleted, not sealed or opened).
    pub fn new(data_dir: &Path, key: Option<LoginKey>) -> Self {
        let dir = data_dir.join(K::DIR);
        Self { lock: StoreLock::new(dir.join(".lock")), dir, key, kind: PhantomData }
    }

    /// `name`, if it may name one; else `INVALID_ARGUMENT` saying why.
    pub fn check_name(name: &str) -> Result<()> {
        if !valid_name(name) {
            return Err(ToolError::invalid_argument(
                "name",
                format!(
                    "{name:?} is not a {} name (1 to 64 of A-Z a-z 0-9 . _ -, not starting with a dot)",
                    K::WHAT
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
                "cannot {doing} {}: the server has no login key (the operator sets \
                 OCHRE_LOGIN_KEY or --login-key-file; `ochre login keygen` makes one)",
                K::WHAT
            ))
        })
    }

    /// Seal `secret` under `name` beside `summary` (replacing one of that name).
    pub fn seal(&self, name: &str, summary: &K::Summary, secret: &K::Secret) -> Result<()> {
        let path = self.path(name)?;
        let key = self.key("save a")?;
        if K::name_of(summary) != name {
            return Err(ToolError::internal("a summary of another name"));
        }
        let plain = serde_json::to_vec(secret).map_err(|e| ToolError::internal(e.to_string()))?;
        let aad = serde_json::to_vec(summary).map_err(|e| ToolError::internal(e.to_string()))?;
        let (nonce, sealed) = seal_bytes(key, &plain, &aad)?;
        let file = SealedFile { version: VERSION, summary, nonce, sealed };
        let bytes =
            serde_json::to_vec_pretty(&file).map_err(|e| ToolError::internal(e.to_string()))?;
        let _guard = self.lock.lock();
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| failed(&format!("cannot make {}", self.dir.display()), e))?;
        write_atomic_private(&path, &bytes)
            .map_err(|e| failed(&format!("cannot write the {}", K::WHAT), e))?;
        Ok(())
    }

    /// `name`'s summary and secret part (unsealed with the key), from one read
    /// of its file.
    pub fn open(&self, name: &str) -> Result<(K::Summary, K::Secret)> {
        let key = self.key("open a")?;
        let file = self.read(name)?;
        let aad =
            serde_json::to_vec(&file.summary).map_err(|e| ToolError::internal(e.to_string()))?;
        let bad = || {
            ToolError::state_corrupt(format!(
                "{} {name:?} is damaged (its file does not decode)",
                K::WHAT
            ))
        };
        let plain = match open_bytes(key, &file.nonce, &file.sealed, &aad) {
            Ok(plain) => plain,
            Err(Unsealed::Damaged) => return Err(bad()),
            Err(Unsealed::OtherKey) => {
                return Err(ToolError::login_locked(format!(
                    "cannot open {} {name:?}: it was saved with another key (or its file was changed)",
                    K::WHAT
                )));
            }
        };
        let secret = serde_json::from_slice(&plain).map_err(|_| bad())?;
        Ok((file.summary, secret))
    }

    /// What `name` holds, without a value (no key needed).
    pub fn show(&self, name: &str) -> Result<K::Summary> {
        Ok(self.read(name)?.summary)
    }

    /// Every one, by name (no key needed). A file that does not read is left
    /// out and logged.
    pub fn list(&self) -> Result<Vec<K::Summary>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(failed(&format!("cannot read {}", self.dir.display()), e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let file = entry.file_name();
            let Some(name) = file.to_str().and_then(|f| f.strip_suffix(".json")) else { continue };
            match self.read(name) {
                Ok(f) => out.push(f.summary),
                Err(e) => {
                    tracing::warn!(kind = K::WHAT, name, error = %e, "a sealed file does not read")
                }
            }
        }
        out.sort_by(|a, b| K::name_of(a).cmp(K::name_of(b)));
        Ok(out)
    }

    /// Delete `name`; whether there was one.
    pub fn delete(&self, name: &str) -> Result<bool> {
        let path = self.path(name)?;
        let _guard = self.lock.lock();
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(failed(&format!("cannot delete the {}", K::WHAT), e)),
        }
    }

    fn read(&self, name: &str) -> Result<SealedFile<K::Summary>> {
        let path = self.path(name)?;
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(K::not_found(name)),
            Err(e) => return Err(failed(&format!("cannot read the {}", K::WHAT), e)),
        };
        let damaged = |why: String| {
            ToolError::state_corrupt(format!("{} {name:?} is damaged: {why}", K::WHAT))
                .with("file", path.display().to_string())
        };
        let file: SealedFile<K::Summary> =
            serde_json::from_slice(&bytes).map_err(|e| damaged(e.to_string()))?;
        if file.version != VERSION || K::name_of(&file.summary) != name {
            return Err(damaged(format!("not a version-{VERSION} {} named {name:?}", K::WHAT)));
        }
        Ok(file)
    }
}
