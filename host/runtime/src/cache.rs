//! On-disk compile cache: a component's native code, keyed by the component's
//! SHA-256 and the engine's compatibility hash (wasmtime version and every setting
//! that affects code generation). A warm start deserializes (≈0.2 ms) instead of
//! compiling (≈50 ms per plugin in release, seconds in debug).
//!
//! The cache is the user's (`~/.cache/ochre/wasm`), shared by every data dir and
//! every server: a plugin is compiled once per machine and engine. Entries are
//! written atomically under a name of their own per process, so servers starting
//! together on an empty cache each compile and the last rename wins with
//! identical bytes. Entries of other engines (other ochre builds) unused for a
//! week are pruned when an entry is written.
//!
//! A package may also ship compiled built-in plugins in a read-only dir (the
//! Debian package: `/usr/lib/ochre/compiled`, made by the very binary it ships):
//! entries found there are used first and nothing is ever written there.

use std::hash::Hash;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use ochre_protocol::fs::write_atomic;

/// Where compiled components live (`<cache-dir>/wasm`).
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: Option<PathBuf>,
    shipped: Option<PathBuf>,
    engine_key: String,
}

impl CompileCache {
    /// A cache in `dir`, or none (always compile) when `dir` is `None`; entries
    /// in `shipped` (read only) are used first.
    pub fn new(engine: &Engine, dir: Option<PathBuf>, shipped: Option<PathBuf>) -> Self {
        // SHA-256 of what wasmtime hashes for compatibility: stable for a given
        // build of the host, and the same digest the components are named by.
        struct Sha(Sha256);
        impl std::hash::Hasher for Sha {
            fn write(&mut self, bytes: &[u8]) {
                self.0.update(bytes);
            }
            fn finish(&self) -> u64 {
                0
            }
        }
        let mut hasher = Sha(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let key: String = hasher.0.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect();
        Self { dir, shipped, engine_key: key }
    }

    /// The compiled component for `bytes`, from the cache or freshly compiled (and
    /// then stored). A corrupt or incompatible cache entry is recompiled.
    pub fn load(&self, engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Component> {
        if self.dir.is_none() && self.shipped.is_none() {
            return Component::new(engine, bytes);
        }
        let digest = Sha256::digest(bytes);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let name = format!("{hex}-{}.cwasm", self.engine_key);
        // The shipped dir first, then the user's cache: both hold only files made
        // by `Engine::precompile_component` of an engine with this compatibility
        // hash (it is in the name); a file wasmtime refuses is passed over.
        for dir in [&self.shipped, &self.dir].into_iter().flatten() {
            if let Some(c) = deserialize(engine, &dir.join(&name)) {
                return Ok(c);
            }
        }
        let Some(dir) = &self.dir else {
            return Component::new(engine, bytes);
        };
        let path = dir.join(&name);
        let compiled = engine.precompile_component(bytes)?;
        if let Err(e) = store(dir, &path, &compiled) {
            tracing::warn!(path = %path.display(), error = %e, "cannot write compile cache");
        }
        self.prune(dir);
        // SAFETY: `compiled` was produced just now by this engine.
        unsafe { Component::deserialize(engine, &compiled) }
    }
}

impl CompileCache {
    /// Remove entries of other engines not used for a week.
    fn prune(&self, dir: &Path) {
        const UNUSED: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mine = format!("-{}.cwasm", self.engine_key);
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if !name.ends_with(".cwasm") || name.ends_with(&mine) {
                continue;
            }
            let old = e
                .metadata()
                .and_then(|m| m.accessed().or_else(|_| m.modified()))
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > UNUSED);
            if old {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// The compiled component in `path`, if there is one this engine accepts.
fn deserialize(engine: &Engine, path: &Path) -> Option<Component> {
    if !path.exists() {
        return None;
    }
    // SAFETY: the file was written by `Engine::precompile_component` of an engine
    // with the same compatibility hash (it is in the file name), into the user's
    // own cache dir (trusted as the user's data dir is) or shipped with this very
    // binary in a dir only the package's installer writes; wasmtime also checks
    // the header and refuses an incompatible artifact, which is then recompiled.
    match unsafe { Component::deserialize_file(engine, path) } {
        Ok(c) => Some(c),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "unusable compiled plugin; compiling it again");
            None
        }
    }
}

fn store(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_atomic(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty component (the component-model preamble only).
    const EMPTY: &[u8] = &[0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

    fn scratch(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ochre-cache-test-{label}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn entries(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_damaged_entry_is_compiled_again_and_shipped_code_comes_first() -> wasmtime::Result<()> {
        let engine = Engine::default();
        let (cache, shipped) = (scratch("cache"), scratch("shipped"));

        // Compiled once, stored; a damaged entry is replaced by a good one.
        CompileCache::new(&engine, Some(cache.clone()), None).load(&engine, EMPTY)?;
        let stored = entries(&cache);
        assert_eq!(stored.len(), 1, "{stored:?}");
        let good = std::fs::read(&stored[0])?;
        std::fs::write(&stored[0], b"not a compiled component")?;
        CompileCache::new(&engine, Some(cache.clone()), None).load(&engine, EMPTY)?;
        assert_eq!(std::fs::read(&stored[0])?, good);

        // A shipped entry is used and nothing is written to the cache.
        std::fs::create_dir_all(&shipped)?;
        let name = stored[0].file_name().expect("name");
        std::fs::rename(&stored[0], shipped.join(name))?;
        CompileCache::new(&engine, Some(cache.clone()), Some(shipped.clone()))
            .load(&engine, EMPTY)?;
        assert!(entries(&cache).is_empty(), "{:?}", entries(&cache));

        // A damaged shipped entry is passed over: compiled into the cache, the
        // shipped dir left as it is.
        std::fs::write(shipped.join(name), b"damaged")?;
        CompileCache::new(&engine, Some(cache.clone()), Some(shipped.clone()))
            .load(&engine, EMPTY)?;
        assert_eq!(entries(&cache).len(), 1);
        assert_eq!(std::fs::read(shipped.join(name))?, b"damaged");
        let _ = std::fs::remove_dir_all(&cache);
        let _ = std::fs::remove_dir_all(&shipped);
        Ok(())
    }
}
