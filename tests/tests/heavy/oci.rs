//! Plugins through a real OCI registry (Debian's `docker-registry`, the CNCF
//! Distribution registry, on 127.0.0.1): `ochre plugin publish` pushes a signed
//! component, `ochre plugin install oci://...` installs it by tag and by digest
//! and pins it in plugins.lock, and a new server loads it from there. A tampered
//! blob, a tampered manifest (its digest no longer the one asked for) and an
//! unknown signer are each refused with nothing written.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use ochre_tests::*;
use serde_json::{Value, json};

/// A registry on a free loopback port, storing in `root`; killed on drop.
struct Registry {
    child: Child,
    port: u16,
    root: PathBuf,
}

impl Registry {
    async fn start(dir: &Path) -> Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let root = dir.join("registry");
        let config = dir.join("registry.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
                 http:\n  addr: 127.0.0.1:{port}\n",
                root.display()
            ),
        )?;
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("registry.log"))?)
            .spawn()
            .context("docker-registry not found: `bash .ci/setup` installs it (Debian package docker-registry)")?;
        let me = Self { child, port, root };
        for _ in 0..300 {
            if me.get("/v2/", "*/*").await.is_ok_and(|r| r.status().is_success()) {
                return Ok(me);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("docker-registry did not answer on port {port} within 30 s")
    }

    fn oci(&self, path: &str) -> String {
        format!("oci://127.0.0.1:{}/{path}", self.port)
    }

    async fn get(&self, path: &str, accept: &str) -> reqwest::Result<reqwest::Response> {
        let url = format!("http://127.0.0.1:{}{path}", self.port);
        reqwest::Client::new().get(url).header("Accept", accept).send().await
    }

    /// The manifest the registry serves for `repo:reference`, and its raw bytes.
    async fn manifest(&self, repo: &str, reference: &str) -> Result<(Value, Vec<u8>)> {
        let accept = "application/vnd.oci.image.manifest.v1+json";
        let r = self.get(&format!("/v2/{repo}/manifests/{reference}"), accept).await?;
        anyhow::ensure!(r.status().is_success(), "{repo}:{reference}: {}", r.status());
        let bytes = r.bytes().await?.to_vec();
        Ok((serde_json::from_slice(&bytes)?, bytes))
    }

    /// Where the registry keeps the blob `sha256:<hex>` on disk.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
        self.root.join("docker/registry/v2/blobs/sha256").join(&hex[..2]).join(hex).join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn digest_of(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("sha256:{}", data_encoding::HEXLOWER.encode(&sha2::Sha256::digest(bytes)))
}

/// The lock's one entry.
fn locked(data: &Path) -> Result<toml::Value> {
    let lock: toml::Table = toml::from_str(&std::fs::read_to_string(data.join("plugins.lock"))?)?;
    let entries = lock["plugin"].as_array().context("entries")?;
    assert_eq!(entries.len(), 1, "{entries:?}");
    Ok(entries[0].clone())
}

/// `published oci://...@sha256:...` from publish's output.
fn published(said: &str) -> String {
    let line = said.lines().find_map(|l| l.strip_prefix("published ")).expect("a reference");
    line.to_owned()
}

fn nothing_written(data: &Path) {
    assert!(!data.join("plugins.lock").exists(), "a lock was written in {}", data.display());
    assert!(!data.join("plugins").exists(), "a plugin was written in {}", data.display());
}

#[tokio::test]
async fn a_signed_plugin_goes_through_a_registry_pinned_by_tag_and_by_digest() -> Result<()> {
    let work = TempDir::new("oci");
    let w = |name: &str| work.path().join(name);
    let s = |p: &Path| p.to_str().expect("utf8").to_owned();
    let registry = Registry::start(work.path()).await?;
    let keys = w("keys");
    let key = |name: &str| -> Result<String> {
        let said = ok(ochre_cli(&keys, &["plugin", "keygen", "--out", &s(&w(name))])?);
        Ok(said.lines().find_map(|l| l.strip_prefix("public key: ")).expect("key").to_owned())
    };
    let alice = key("alice.key")?;
    key("mallory.key")?;
    std::fs::write(w("ochre.toml"), format!("[trust.keys]\nalice = \"{alice}\"\n"))?;
    let config = s(&w("ochre.toml"));
    let wasm = std::fs::read(fixture_wasm("hello"))?;
    std::fs::write(w("hello.wasm"), &wasm)?;
    let component = digest_of(&wasm);

    // Published, signed by alice: the registry holds a Wasm artifact whose one
    // layer is the component and whose annotation is alice's signature.
    let tag = registry.oci("plugins/hello:1.0");
    let said = ok(ochre_cli(
        &keys,
        &["plugin", "publish", &s(&w("hello.wasm")), &tag, "--key", &s(&w("alice.key"))],
    )?);
    let pinned = published(&said);
    let (manifest, raw) = registry.manifest("plugins/hello", "1.0").await?;
    assert_eq!(pinned, format!("{tag}@{}", digest_of(&raw)));
    assert_eq!(manifest["config"]["mediaType"], "application/vnd.wasm.config.v0+json");
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(manifest["layers"][0]["digest"], json!(component));
    let sig: Value = serde_json::from_str(
        manifest["annotations"]["dev.ochre.plugin.signature"].as_str().expect("signed"),
    )?;
    assert_eq!(
        (sig["key"].as_str(), sig["digest"].as_str()),
        (Some(alice.as_str()), Some(component.as_str()))
    );
    let blob = registry.get(&format!("/v2/plugins/hello/blobs/{component}"), "*/*").await?;
    assert_eq!(blob.bytes().await?.to_vec(), wasm);

    // Installed by tag: pinned to the manifest's digest; a new server loads it.
    let by_tag = w("by-tag");
    let said = ok(ochre_cli(&by_tag, &["--config", &config, "plugin", "install", &tag])?);
    assert!(said.contains("installed plugin hello"), "{said}");
    let entry = locked(&by_tag)?;
    assert_eq!(entry["source"].as_str(), Some(pinned.as_str()));
    assert_eq!(entry["digest"].as_str(), Some(component.as_str()));
    assert_eq!(entry["signer"].as_str(), Some("alice"));
    assert_eq!(std::fs::read(by_tag.join("plugins/hello.wasm"))?, wasm);
    serves_installed_hello(&by_tag, &pinned).await?;

    // Installed by digest: the same component, pinned to that digest.
    let digest = pinned.rsplit_once('@').expect("pinned").1.to_owned();
    let by_digest = w("by-digest");
    let at_digest = registry.oci(&format!("plugins/hello@{digest}"));
    ok(ochre_cli(&by_digest, &["--config", &config, "plugin", "install", &at_digest])?);
    assert_eq!(locked(&by_digest)?["source"].as_str(), Some(at_digest.as_str()));
    assert_eq!(
        plugins_list(&by_digest, &[], &[])?.iter().filter(|p| p["name"] == "hello").count(),
        1
    );

    // Refused, nothing written: signed by a key the operator does not trust ...
    let refused_dir = w("refused");
    let other = registry.oci("plugins/hello:mallory");
    ok(ochre_cli(
        &keys,
        &["plugin", "publish", &s(&w("hello.wasm")), &other, "--key", &s(&w("mallory.key"))],
    )?);
    let e = refused(ochre_cli(&refused_dir, &["--config", &config, "plugin", "install", &other])?);
    assert!(e.contains("not a trusted key"), "{e}");
    // ... not signed at all ...
    let bare = registry.oci("plugins/hello:unsigned");
    std::fs::write(w("bare.wasm"), &wasm)?;
    ok(ochre_cli(&keys, &["plugin", "publish", &s(&w("bare.wasm")), &bare])?);
    let e = refused(ochre_cli(&refused_dir, &["--config", &config, "plugin", "install", &bare])?);
    assert!(e.contains("not signed") && e.contains("--allow-unsigned"), "{e}");
    nothing_written(&refused_dir);

    // ... a component blob changed in the registry's storage ...
    let blob_file = registry.blob_file(&component);
    let mut tampered = wasm.clone();
    let at = tampered.len() / 2;
    tampered[at] ^= 0xff;
    std::fs::write(&blob_file, &tampered)?;
    let e = refused(ochre_cli(&refused_dir, &["--config", &config, "plugin", "install", &tag])?);
    assert!(e.contains("does not match its digest") && e.contains(&component), "{e}");
    nothing_written(&refused_dir);
    std::fs::write(&blob_file, &wasm)?;

    // ... and a manifest changed in storage, so that what comes back for the
    // digest asked for is another one (by digest, and by the tag that names it).
    let manifest_file = registry.blob_file(&digest);
    let text = std::fs::read_to_string(&manifest_file)?;
    let forged = text.replace(&component, &digest_of(b"other component"));
    assert_ne!(forged, text);
    std::fs::write(&manifest_file, forged)?;
    for source in [&at_digest, &tag] {
        let e =
            refused(ochre_cli(&refused_dir, &["--config", &config, "plugin", "install", source])?);
        assert!(e.contains("does not match its digest") && e.contains(&digest), "{source}: {e}");
    }
    nothing_written(&refused_dir);
    // The installed copies are untouched and still load from their locks.
    assert_eq!(listed(&plugins_list(&by_tag, &[], &[])?, "hello")["status"], "loaded");
    Ok(())
}

#[test]
fn bad_references_and_unreachable_registries_get_clear_errors() -> Result<()> {
    let work = TempDir::new("oci-bad");
    let data = work.path().join("data");
    for (source, says) in [
        ("oci://hello:1.0", "name the registry"),
        ("oci://127.0.0.1:9/Upper/Case:1", "not an OCI reference"),
    ] {
        let e = refused(ochre_cli(&data, &["plugin", "install", source])?);
        assert!(e.contains(says), "{source}: {e}");
    }
    let e = refused(ochre_cli(&data, &["plugin", "install", "oci://127.0.0.1:9/plugins/hello:1"])?);
    assert!(e.contains("Connection refused"), "{e}");
    let e = refused(ochre_cli(
        &data,
        &[
            "plugin",
            "publish",
            &fixture_wasm("hello").display().to_string(),
            "oci://127.0.0.1:9/p@sha256:00",
        ],
    )?);
    assert!(e.contains("not an OCI reference") || e.contains("publish to a tag"), "{e}");
    nothing_written(&data);
    Ok(())
}
