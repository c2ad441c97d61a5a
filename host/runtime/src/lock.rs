//! Installed plugins: `ochre plugin install` puts a component in
//! `<data-dir>/plugins/` and pins it in `<data-dir>/plugins.lock` (TOML) by name,
//! source, SHA-256 digest and signer. The host loads an installed file only when
//! its bytes match its lock entry; the lock is written whole (temporary file,
//! fsync, rename), so a crash leaves the old lock or the new one.
//!
//! Signatures are ed25519 over [`signed_message`] of the component's digest; the
//! operator trusts keys by name in the config file (`[trust.keys]`).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use data_encoding::BASE64;
use ed25519_dalek::{Signer as _, SigningKey, Verifier as _, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

/// The lock file's name in the data dir.
pub const LOCK_FILE: &str = "plugins.lock";
/// The installed plugins' dir in the data dir.
pub const INSTALLED_DIR: &str = "plugins";
/// What a signer without a key (an install the operator let through unsigned) is
/// recorded as.
pub const UNSIGNED: &str = "unsigned (allowed by the operator)";

/// One installed plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedPlugin {
    /// The plugin's name (its manifest's).
    pub name: String,
    /// Its file in the installed dir.
    pub file: String,
    /// Where it was installed from (a path or an `oci://` reference).
    pub source: String,
    /// `sha256:<hex>` of the component's bytes.
    pub digest: String,
    /// The trusted key's name that signed it, or [`UNSIGNED`].
    pub signer: String,
}

/// `plugins.lock`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginLock {
    /// The installed plugins, by name.
    #[serde(default, rename = "plugin")]
    pub plugins: Vec<LockedPlugin>,
}

impl PluginLock {
    /// The lock of `data_dir` (empty when there is none); a damaged lock is an
    /// error naming the file, never read as empty.
    pub fn read(data_dir: &Path) -> Result<Self, String> {
        let path = data_dir.join(LOCK_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text)
                .map_err(|e| format!("{} is damaged: {}", path.display(), e.message())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// Write the lock whole: a temporary file, fsync, rename, fsync of the dir.
    pub fn write(&self, data_dir: &Path) -> std::io::Result<()> {
        let text = toml::to_string_pretty(self).map_err(std::io::Error::other)?;
        let text = format!(
            "# Written by `ochre plugin install`; the host loads only what matches it.\n{text}"
        );
        write_atomic(&data_dir.join(LOCK_FILE), text.as_bytes())
    }

    /// The entry of installed file `file`.
    pub fn entry(&self, file: &str) -> Option<&LockedPlugin> {
        self.plugins.iter().find(|p| p.file == file)
    }

    /// Add `entry`, replacing the one of the same name.
    pub fn upsert(&mut self, entry: LockedPlugin) {
        self.plugins.retain(|p| p.name != entry.name);
        self.plugins.push(entry);
        self.plugins.sort_by(|a, b| a.name.cmp(&b.name));
    }
}

/// Write `bytes` to `path` whole: a temporary file beside it, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp: PathBuf = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)?;
    std::fs::File::open(dir)?.sync_all()
}

/// `sha256:<hex>` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let hash = sha2::Sha256::digest(bytes);
    format!("sha256:{}", data_encoding::HEXLOWER.encode(&hash))
}

/// What a signer signs for a component of digest `digest`.
pub fn signed_message(digest: &str) -> Vec<u8> {
    format!("ochre-plugin-signature-v1\n{digest}\n").into_bytes()
}

/// A detached signature of a component (`<file>.sig`, JSON; or an OCI annotation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSignature {
    /// The signed component's digest.
    pub digest: String,
    /// The signer's public key, `ed25519:<base64>`.
    pub key: String,
    /// The ed25519 signature of [`signed_message`], base64.
    pub signature: String,
}

/// A new signing key: (the private key file's text, the public key `ed25519:<base64>`).
pub fn generate_key() -> Result<(String, String), String> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| format!("no randomness: {e}"))?;
    let key = SigningKey::from_bytes(&seed);
    Ok((format!("ochre-ed25519-private-key\n{}\n", BASE64.encode(&seed)), public_key(&key)))
}

fn public_key(key: &SigningKey) -> String {
    format!("ed25519:{}", BASE64.encode(key.verifying_key().as_bytes()))
}

/// Sign the component `bytes` with the private key file's text.
pub fn sign(key_file: &str, bytes: &[u8]) -> Result<PluginSignature, String> {
    let mut lines = key_file.lines();
    if lines.next() != Some("ochre-ed25519-private-key") {
        return Err("not an ochre private key (from `ochre plugin keygen`)".into());
    }
    let seed = lines
        .next()
        .and_then(|l| BASE64.decode(l.trim().as_bytes()).ok())
        .and_then(|s| <[u8; 32]>::try_from(s).ok())
        .ok_or("the private key is damaged")?;
    let key = SigningKey::from_bytes(&seed);
    let digest = digest(bytes);
    let signature = BASE64.encode(&key.sign(&signed_message(&digest)).to_bytes());
    Ok(PluginSignature { digest, key: public_key(&key), signature })
}

/// Check `sig` for the component `bytes` against the operator's trusted keys
/// (name -> `ed25519:<base64>`): the name of the key that signed it.
pub fn verify(
    sig: &PluginSignature,
    bytes: &[u8],
    trusted: &BTreeMap<String, String>,
) -> Result<String, String> {
    let digest = digest(bytes);
    if sig.digest != digest {
        return Err(format!(
            "the signature is for {}, the component is {digest}: it was changed after signing",
            sig.digest
        ));
    }
    let Some((name, _)) = trusted.iter().find(|(_, k)| **k == sig.key) else {
        return Err(format!(
            "signed by {}, which is not a trusted key (add it under [trust.keys] in the config)",
            sig.key
        ));
    };
    let key = sig
        .key
        .strip_prefix("ed25519:")
        .and_then(|k| BASE64.decode(k.as_bytes()).ok())
        .and_then(|k| <[u8; 32]>::try_from(k).ok())
        .and_then(|k| VerifyingKey::from_bytes(&k).ok())
        .ok_or("the signer's key is not an ed25519 public key")?;
    let signature = BASE64
        .decode(sig.signature.as_bytes())
        .ok()
        .and_then(|s| <[u8; 64]>::try_from(s).ok())
        .map(|s| ed25519_dalek::Signature::from_bytes(&s))
        .ok_or("the signature is damaged")?;
    key.verify(&signed_message(&digest), &signature)
        .map_err(|_| format!("the signature does not match the component (key {name})"))?;
    Ok(name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_holds_only_for_its_bytes_and_a_trusted_key() {
        let (private, public) = generate_key().expect("key");
        let (other_private, _) = generate_key().expect("key");
        let bytes = b"\0asm component".to_vec();
        let trusted = BTreeMap::from([("alice".to_owned(), public)]);
        let sig = sign(&private, &bytes).expect("sign");
        assert_eq!(verify(&sig, &bytes, &trusted), Ok("alice".into()));
        let mut changed = bytes.clone();
        changed.push(0);
        assert!(
            verify(&sig, &changed, &trusted)
                .expect_err("refused")
                .contains("changed after signing")
        );
        let stranger = sign(&other_private, &bytes).expect("sign");
        assert!(
            verify(&stranger, &bytes, &trusted).expect_err("refused").contains("not a trusted key")
        );
        // A signature moved onto another key's name does not verify.
        let forged = PluginSignature { key: sig.key.clone(), ..stranger };
        assert!(verify(&forged, &bytes, &trusted).expect_err("refused").contains("does not match"));
        assert!(sign("garbage", &bytes).is_err());
    }

    #[test]
    fn the_lock_round_trips_and_a_damaged_one_is_an_error() {
        let dir = std::env::temp_dir().join(format!("ochre-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(PluginLock::read(&dir), Ok(PluginLock::default()));
        let mut lock = PluginLock::default();
        let entry = |name: &str, digest: &str| LockedPlugin {
            name: name.into(),
            file: format!("{name}.wasm"),
            source: "/tmp/x.wasm".into(),
            digest: digest.into(),
            signer: "alice".into(),
        };
        lock.upsert(entry("b", "sha256:1"));
        lock.upsert(entry("a", "sha256:2"));
        lock.upsert(entry("b", "sha256:3"));
        lock.write(&dir).expect("write");
        let back = PluginLock::read(&dir).expect("read");
        assert_eq!(back, lock);
        assert_eq!(back.plugins.len(), 2);
        assert_eq!(back.entry("b.wasm").map(|e| e.digest.as_str()), Some("sha256:3"));
        std::fs::write(dir.join(LOCK_FILE), "[[plugin]]\nname = 1\n").expect("write");
        assert!(PluginLock::read(&dir).expect_err("refused").contains("damaged"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
