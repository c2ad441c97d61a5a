//! On-disk compile cache: a component's native code, keyed by the component's
//! SHA-256 and the engine's compatibility hash (wasmtime version and every setting
//! that affects code generation). A warm start deserializes (≈0.2 ms) instead of
//! compiling (≈50 ms per plugin in release, seconds in debug).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::store::write_atomic;

/// Where compiled components live (`<data-dir>/cache/wasm`).
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: Option<PathBuf>,
    engine_key: String,
}

impl CompileCache {
    /// A cache in `dir`, or none (always compile) when `dir` is `None`.
    pub fn new(engine: &Engine, dir: Option<PathBuf>) -> Self {
        // SipHash with fixed keys: stable for a given build of the host.
        #[allow(deprecated)]
        let mut hasher = std::hash::SipHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Self {
            dir,
            engine_key: format!("{:016x}", hasher.finish()),
        }
    }

    /// The compiled component for `bytes`, from the cache or freshly compiled (and
    /// then stored). A corrupt or incompatible cache entry is recompiled.
    pub fn load(&self, engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Component> {
        let Some(dir) = &self.dir else {
            return Component::new(engine, bytes);
        };
        let digest = Sha256::digest(bytes);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let path = dir.join(format!("{hex}-{}.cwasm", self.engine_key));
        if path.exists() {
            // SAFETY: the file was written by `Engine::precompile_component` of an
            // engine with the same compatibility hash (it is in the file name), into
            // the host's own data dir; wasmtime also checks the header and refuses
            // an incompatible artifact, which we then recompile.
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(c) => return Ok(c),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "stale compile cache entry; recompiling")
                }
            }
        }
        let compiled = engine.precompile_component(bytes)?;
        if let Err(e) = store(dir, &path, &compiled) {
            tracing::warn!(path = %path.display(), error = %e, "cannot write compile cache");
        }
        // SAFETY: `compiled` was produced just now by this engine.
        unsafe { Component::deserialize(engine, &compiled) }
    }
}

fn store(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_atomic(path, bytes)
}
