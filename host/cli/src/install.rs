//! `ochre plugin keygen`, `ochre plugin sign` and `ochre plugin install`: signed
//! plugins put in the data dir and pinned in `plugins.lock`.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use ochre_host::config::Config;
use ochre_host::plugin::lock::{self, INSTALLED_DIR, LockedPlugin, PluginLock, PluginSignature};
use ochre_host::plugin::manifest;

/// Write a new private key to `out` (mode 0600, never over an existing file);
/// returns the public key to trust.
pub fn keygen(out: &Path) -> anyhow::Result<String> {
    let (private, public) = lock::generate_key().map_err(anyhow::Error::msg)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(out)
        .with_context(|| format!("cannot create {} (it must not exist yet)", out.display()))?;
    std::io::Write::write_all(&mut file, private.as_bytes())?;
    file.sync_all()?;
    Ok(public)
}

/// The signature file of a component: `<file>.sig`.
pub fn signature_path(wasm: &Path) -> PathBuf {
    let mut name = wasm.as_os_str().to_owned();
    name.push(".sig");
    PathBuf::from(name)
}

/// Sign `wasm` with the private key in `key`: writes `<wasm>.sig`.
pub fn sign(wasm: &Path, key: &Path) -> anyhow::Result<PathBuf> {
    let bytes = std::fs::read(wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
    manifest::read(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", wasm.display()))?;
    let key_text =
        std::fs::read_to_string(key).with_context(|| format!("cannot read {}", key.display()))?;
    let sig =
        lock::sign(&key_text, &bytes).map_err(|e| anyhow::anyhow!("{}: {e}", key.display()))?;
    let out = signature_path(wasm);
    lock::write_atomic(&out, serde_json::to_string_pretty(&sig)?.as_bytes())?;
    Ok(out)
}

/// What `ochre plugin install` did.
pub struct Installed {
    /// The lock entry written.
    pub entry: LockedPlugin,
    /// Where the component now is.
    pub path: PathBuf,
}

/// Install the component file `source` (with its `<source>.sig`) into `data_dir`.
pub fn install(
    data_dir: &Path,
    source: &Path,
    config: &Config,
    allow_unsigned: bool,
) -> anyhow::Result<Installed> {
    let bytes =
        std::fs::read(source).with_context(|| format!("cannot read {}", source.display()))?;
    let sig_path = signature_path(source);
    let signature = match std::fs::read_to_string(&sig_path) {
        Ok(text) => Some(
            serde_json::from_str(&text)
                .with_context(|| format!("{} is not a plugin signature", sig_path.display()))?,
        ),
        Err(_) => None,
    };
    let source_text = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
    let component = Component {
        bytes,
        signature,
        source: source_text.display().to_string(),
        unsigned_hint: format!("no {}; sign it with `ochre plugin sign`", sig_path.display()),
    };
    install_component(data_dir, component, config, allow_unsigned)
}

/// A component to install, from a file or a registry.
pub struct Component {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The signature that came with it, if any.
    pub signature: Option<PluginSignature>,
    /// Where it came from, as recorded in the lock.
    pub source: String,
    /// How to sign it, said when it is not signed.
    pub unsigned_hint: String,
}

/// Install `c` into `data_dir`: checked as the host reads it, its signature
/// verified against the trusted keys (or let through unsigned when the operator
/// said so for this plugin), then the file and the lock entry written. Nothing is
/// written when a check fails.
pub fn install_component(
    data_dir: &Path,
    c: Component,
    config: &Config,
    allow_unsigned: bool,
) -> anyhow::Result<Installed> {
    let m = manifest::read(&c.bytes).map_err(|e| anyhow::anyhow!("{}: {e}", c.source))?;
    let unsigned_ok = allow_unsigned || config.plugin(&m.name).allow_unsigned;
    let signer = match &c.signature {
        Some(sig) => lock::verify(sig, &c.bytes, &config.trusted_keys)
            .map_err(|e| anyhow::anyhow!("plugin {} refused: {e}", m.name))?,
        None if unsigned_ok => lock::UNSIGNED.to_owned(),
        None => bail!(
            "plugin {} refused: it is not signed ({}), or let it in unsigned with \
             --allow-unsigned or `allow_unsigned = true` under [plugins.{}]",
            m.name,
            c.unsigned_hint,
            m.name
        ),
    };
    let mut locked = PluginLock::read(data_dir).map_err(anyhow::Error::msg)?;
    let file = format!("{}.wasm", m.name);
    let path = data_dir.join(INSTALLED_DIR).join(&file);
    let entry = LockedPlugin {
        name: m.name.clone(),
        file,
        source: c.source,
        digest: lock::digest(&c.bytes),
        signer,
    };
    lock::write_atomic(&path, &c.bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    locked.upsert(entry.clone());
    locked.write(data_dir).context("cannot write plugins.lock")?;
    Ok(Installed { entry, path })
}
