//! Plugins in OCI registries: `ochre plugin publish FILE oci://HOST/REPO:TAG` and
//! `ochre plugin install oci://HOST/REPO:TAG` (or `@sha256:...`).
//!
//! A plugin is stored as the CNCF Wasm OCI artifact (config
//! `application/vnd.wasm.config.v0+json`, one `application/wasm` layer: the
//! component), so other Wasm tools read it too; ochre's signature (the JSON of
//! `<file>.sig`) rides in the manifest's annotation [`SIGNATURE_ANNOTATION`]. The
//! manifest and the component are checked against their digests here, whatever
//! the registry says, and the lock records the manifest digest installed.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, bail};
use ochre_host::plugin::lock::{self, PluginSignature};
use ochre_host::plugin::manifest;
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::errors::OciDistributionError;
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciImageManifest, WASM_LAYER_MEDIA_TYPE};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

use crate::install::Component;

/// The prefix of a registry reference on the command line.
pub const SCHEME: &str = "oci://";
/// The media type of the component layer (CNCF Wasm OCI artifact).
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The media type of the artifact's config (CNCF Wasm OCI artifact).
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The manifest annotation that holds the plugin's signature (JSON).
pub const SIGNATURE_ANNOTATION: &str = "dev.ochre.plugin.signature";
/// The largest component installed from a registry.
const MAX_COMPONENT_BYTES: i64 = 512 << 20;
/// Registry credentials come from these environment variables (never a file).
pub(crate) const USERNAME_ENV: &str = "OCHRE_REGISTRY_USERNAME";
pub(crate) const PASSWORD_ENV: &str = "OCHRE_REGISTRY_PASSWORD";

/// How to reach a registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reach {
    /// Plain HTTP instead of HTTPS (loopback registries always use HTTP).
    pub plain_http: bool,
}

/// `oci://HOST[:PORT]/REPO[:TAG|@sha256:...]` parsed; the host must be named.
pub fn parse(text: &str) -> anyhow::Result<Reference> {
    let rest = text.strip_prefix(SCHEME).with_context(|| format!("{text}: not oci://..."))?;
    let host = rest.split('/').next().unwrap_or("");
    if !rest.contains('/') || !(host.contains('.') || host.contains(':') || host == "localhost") {
        bail!("{text}: name the registry, as in oci://ghcr.io/OWNER/PLUGIN:TAG");
    }
    rest.parse::<Reference>().map_err(|e| anyhow::anyhow!("{text}: not an OCI reference: {e}"))
}

fn is_loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => registry.rsplit_once(':').map_or(registry, |(h, _)| h),
    };
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn client(reference: &Reference, reach: Reach) -> Client {
    let plain = reach.plain_http || is_loopback(reference.resolve_registry());
    Client::new(ClientConfig {
        protocol: if plain { ClientProtocol::Http } else { ClientProtocol::Https },
        connect_timeout: Some(Duration::from_secs(10)),
        read_timeout: Some(Duration::from_secs(60)),
        platform_resolver: None,
        ..Default::default()
    })
}

fn auth() -> RegistryAuth {
    match (std::env::var(USERNAME_ENV), std::env::var(PASSWORD_ENV)) {
        (Ok(user), Ok(password)) => RegistryAuth::Basic(user, password),
        _ => RegistryAuth::Anonymous,
    }
}

/// `oci://REGISTRY/REPO[:TAG]@DIGEST`.
fn pinned(reference: &Reference, digest: &str) -> String {
    let tag = reference.tag().map(|t| format!(":{t}")).unwrap_or_default();
    format!("{SCHEME}{}/{}{tag}@{digest}", reference.registry(), reference.repository())
}

/// Say what a registry error means for the user.
fn explain(e: OciDistributionError, what: &str, text: &str) -> anyhow::Error {
    use oci_client::errors::OciErrorCode::{BlobUnknown, ManifestUnknown, NameUnknown};
    match e {
        OciDistributionError::DigestError(d) => anyhow::anyhow!(
            "{text}: what the registry sent does not match its digest ({d}): it was changed in the \
             registry or on the way"
        ),
        OciDistributionError::ImageManifestNotFoundError(_) => {
            anyhow::anyhow!("{text}: not in the registry")
        }
        OciDistributionError::RegistryError { envelope, .. }
            if envelope
                .errors
                .iter()
                .any(|e| matches!(e.code, ManifestUnknown | NameUnknown | BlobUnknown)) =>
        {
            anyhow::anyhow!("{text}: not in the registry ({envelope})")
        }
        e => anyhow::Error::new(e).context(format!("{text}: cannot {what}")),
    }
}

/// Fetch the plugin at `text` (`oci://...`): the manifest (checked against the
/// digest asked for), then the component (checked against the manifest's layer
/// digest) and the signature the manifest carries.
pub async fn fetch(text: &str, reach: Reach) -> anyhow::Result<Component> {
    let reference = parse(text)?;
    let client = client(&reference, reach);
    let (raw, _) = client
        .pull_manifest_raw(&reference, &auth(), &[OCI_IMAGE_MEDIA_TYPE])
        .await
        .map_err(|e| explain(e, "read the manifest", text))?;
    let digest = lock::digest(&raw);
    if let Some(asked) = reference.digest()
        && asked != digest
    {
        bail!("{text}: the registry sent a manifest of digest {digest}, not the one asked for");
    }
    let manifest: OciImageManifest = serde_json::from_slice(&raw)
        .with_context(|| format!("{text}: the registry sent no OCI image manifest"))?;
    let [layer] = manifest.layers.as_slice() else {
        bail!("{text}: not a plugin: {} layers, a plugin has one", manifest.layers.len());
    };
    if layer.media_type != LAYER_MEDIA_TYPE && layer.media_type != WASM_LAYER_MEDIA_TYPE {
        bail!("{text}: not a plugin: its layer is {}, not {LAYER_MEDIA_TYPE}", layer.media_type);
    }
    if !(0..=MAX_COMPONENT_BYTES).contains(&layer.size) {
        bail!("{text}: the component is {} bytes, over {MAX_COMPONENT_BYTES}", layer.size);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(layer.size).unwrap_or(0));
    client
        .pull_blob(&reference, layer, &mut bytes)
        .await
        .map_err(|e| explain(e, "read the component", text))?;
    if lock::digest(&bytes) != layer.digest {
        bail!("{text}: the component does not match its digest {}", layer.digest);
    }
    let signature = match manifest.annotations.as_ref().and_then(|a| a.get(SIGNATURE_ANNOTATION)) {
        Some(json) => Some(
            serde_json::from_str::<PluginSignature>(json)
                .with_context(|| format!("{text}: its signature annotation is damaged"))?,
        ),
        None => None,
    };
    Ok(Component {
        bytes,
        signature,
        source: pinned(&reference, &digest),
        unsigned_hint: "the artifact carries no signature; publish it with --key".into(),
    })
}

/// What `ochre plugin publish` pushed.
#[derive(Debug)]
pub struct Published {
    /// `oci://REGISTRY/REPO:TAG@sha256:...` (the manifest's digest).
    pub reference: String,
    /// The component's digest.
    pub digest: String,
    /// The signer's public key, when signed.
    pub signer: Option<String>,
}

/// The signature to publish with `file`: made now with `key`, else its
/// `<file>.sig` (which must be of these bytes), else none.
fn signature_for(
    file: &Path,
    bytes: &[u8],
    key: Option<&Path>,
) -> anyhow::Result<Option<PluginSignature>> {
    if let Some(key) = key {
        let text = std::fs::read_to_string(key)
            .with_context(|| format!("cannot read {}", key.display()))?;
        return Ok(Some(
            lock::sign(&text, bytes).map_err(|e| anyhow::anyhow!("{}: {e}", key.display()))?,
        ));
    }
    let sig_path = crate::install::signature_path(file);
    let Ok(text) = std::fs::read_to_string(&sig_path) else { return Ok(None) };
    let sig: PluginSignature = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a plugin signature", sig_path.display()))?;
    if sig.digest != lock::digest(bytes) {
        bail!(
            "{} is the signature of other bytes: sign {} again",
            sig_path.display(),
            file.display()
        );
    }
    Ok(Some(sig))
}

/// Push the component `file` to `target` (`oci://HOST/REPO:TAG`) as a Wasm OCI
/// artifact, signed with `key` (or carrying `<file>.sig`).
pub async fn publish(
    file: &Path,
    target: &str,
    key: Option<&Path>,
    reach: Reach,
) -> anyhow::Result<Published> {
    let reference = parse(target)?;
    if reference.digest().is_some() {
        bail!(
            "{target}: publish to a tag (oci://HOST/REPO:TAG); the digest is the registry's to give"
        );
    }
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let m = manifest::read(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let signature = signature_for(file, &bytes, key)?;
    let digest = lock::digest(&bytes);
    let config = serde_json::json!({
        "created": humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [digest],
    });
    let config = Config::new(serde_json::to_vec(&config)?, CONFIG_MEDIA_TYPE.into(), None);
    let title =
        BTreeMap::from([("org.opencontainers.image.title".to_owned(), format!("{}.wasm", m.name))]);
    let layers = [ImageLayer::new(bytes, LAYER_MEDIA_TYPE.into(), Some(title))];
    let mut annotations = BTreeMap::from([
        ("org.opencontainers.image.title".to_owned(), m.name.clone()),
        (
            "org.opencontainers.image.description".to_owned(),
            format!("ochre tool plugin {}", m.name),
        ),
    ]);
    if let Some(sig) = &signature {
        annotations.insert(SIGNATURE_ANNOTATION.into(), serde_json::to_string(sig)?);
    }
    let manifest = OciImageManifest::build(&layers, &config, Some(annotations));
    let client = client(&reference, reach);
    let auth = auth();
    client
        .push(&reference, &layers, config, &auth, Some(manifest))
        .await
        .map_err(|e| explain(e, "push", target))?;
    let pushed = client
        .fetch_manifest_digest(&reference, &auth)
        .await
        .map_err(|e| explain(e, "read back the digest pushed", target))?;
    Ok(Published {
        reference: pinned(&reference, &pushed),
        digest,
        signer: signature.map(|s| s.key),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_name_their_registry() {
        let r = parse("oci://127.0.0.1:5000/plugins/hello:1.0").expect("parses");
        assert_eq!(
            (r.registry(), r.repository(), r.tag()),
            ("127.0.0.1:5000", "plugins/hello", Some("1.0"))
        );
        let d = format!("sha256:{}", "a".repeat(64));
        let r = parse(&format!("oci://ghcr.io/o/p@{d}")).expect("parses");
        assert_eq!(r.digest(), Some(d.as_str()));
        assert_eq!(pinned(&r, &d), format!("oci://ghcr.io/o/p@{d}"));
        for bad in
            ["ghcr.io/o/p:1", "oci://hello:1.0", "oci://plugins/hello", "oci://ghcr.io/O/p:1"]
        {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(
            is_loopback("127.0.0.1:5000") && is_loopback("localhost") && is_loopback("[::1]:80")
        );
        assert!(!is_loopback("ghcr.io") && !is_loopback("10.0.0.1:5000"));
    }
}
