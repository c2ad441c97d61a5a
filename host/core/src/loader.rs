//! Loading a host's tools: the host's own, then each plugin (built in, then the
//! plugin dirs' `.wasm` files), each checked against its manifest, the operator's
//! capability filter and interface policy. A plugin that cannot be loaded is
//! refused and reported; it never fails the host.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use serde_json::Value;

#[cfg(feature = "browser")]
use crate::browser::BrowserManager;
use crate::capability::{BUILTIN_GROUPS, CapabilityFilter};
use crate::client_log::ClientLogs;
use crate::error::{Error, Result};
use crate::plugin::manifest::{self, Manifest};
use crate::plugin::{CallerCell, InterfacePolicy, PluginRuntime, PluginServices, PreparedPlugin};
use crate::stores::kv::KvStore;
use crate::stores::recording::Recorder;
use crate::stores::secrets::SecretStore;
use crate::tool::{Annotations, ToolInfo};
use crate::{Clock, builtin};

/// Where a plugin came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// Shipped with ochre.
    Builtin,
    /// A `.wasm` file from a plugin dir.
    File(PathBuf),
    /// Installed with `ochre plugin install` and matching its `plugins.lock` entry.
    Installed {
        /// The file in `<data-dir>/plugins`.
        path: PathBuf,
        /// Where it was installed from (a file, or `oci://...@sha256:...`), as locked.
        from: String,
        /// Its `sha256:` digest (as locked).
        digest: String,
        /// Who signed it (a trusted key's name), as locked.
        signer: String,
    },
    /// Given as bytes by the embedder ([`crate::HostBuilder::plugin_bytes`]), under
    /// this label.
    Memory(String),
    /// A file in `<data-dir>/plugins` that does not match `plugins.lock`: refused.
    Unpinned {
        /// The file.
        path: PathBuf,
        /// Why it is not loaded.
        reason: String,
    },
}

impl PluginSource {
    /// What names a plugin whose manifest cannot be read: its file's stem.
    fn file_stem(&self) -> String {
        match self {
            Self::File(p) | Self::Installed { path: p, .. } | Self::Unpinned { path: p, .. } => {
                p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
            }
            Self::Builtin => "builtin".into(),
            Self::Memory(label) => label.clone(),
        }
    }
}

impl std::fmt::Display for PluginSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Builtin => f.write_str("builtin"),
            Self::Memory(label) => write!(f, "{label} (from memory)"),
            Self::File(p) | Self::Unpinned { path: p, .. } => write!(f, "{}", p.display()),
            Self::Installed { path, from, digest, signer } => {
                write!(f, "{} (installed from {from}, {digest}, signer {signer})", path.display())
            }
        }
    }
}

/// What became of a plugin at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginStatus {
    /// Loaded; its tools are callable.
    Loaded,
    /// Its capability group is excluded; it was not instantiated.
    Disabled,
    /// Refused (bad manifest, denied interface, duplicate tool, ...).
    Refused(String),
}

/// One plugin as `ochre plugins list` shows it.
#[derive(Debug, Clone)]
pub struct PluginReport {
    /// Plugin name (the file name when the manifest is unreadable).
    pub name: String,
    /// Capability group ("" when unknown).
    pub group: String,
    /// Where it came from.
    pub source: PluginSource,
    /// Loaded, disabled or refused.
    pub status: PluginStatus,
    /// Its tools (from `describe` when loaded, from the manifest otherwise).
    pub tools: Vec<String>,
    /// The host interfaces it asked for (granted when loaded).
    pub interfaces: Vec<String>,
    /// The `ochre:plugin` version it was built against (as linked when loaded, as
    /// its manifest says otherwise; "" when unknown).
    pub wit: String,
    pub(crate) instances: Option<Arc<AtomicU64>>,
}

impl PluginReport {
    /// How many instances of this plugin were created so far (0 for a plugin that
    /// was never instantiated, e.g. a disabled one).
    pub fn instantiations(&self) -> u64 {
        self.instances.as_ref().map(|c| c.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(0)
    }

    /// A JSON view (for `ochre plugins list --json`).
    pub fn to_json(&self) -> Value {
        let (status, reason) = match &self.status {
            PluginStatus::Loaded => ("loaded", None),
            PluginStatus::Disabled => ("disabled", None),
            PluginStatus::Refused(r) => ("refused", Some(r.clone())),
        };
        serde_json::json!({
            "name": self.name,
            "group": self.group,
            "source": self.source.to_string(),
            "status": status,
            "reason": reason,
            "tools": self.tools,
            "interfaces": self.interfaces,
            "wit": self.wit,
            "instantiations": self.instantiations(),
        })
    }
}

pub(crate) enum ToolImpl {
    Plugin(PreparedPlugin),
    /// The host's own tools and an embedder's.
    Native(Arc<dyn crate::native::HostTool>),
}

pub(crate) struct ToolEntry {
    pub info: ToolInfo,
    pub imp: ToolImpl,
    pub validator: jsonschema::Validator,
}

/// What every plugin of a host is loaded with.
pub(crate) struct LoadContext<'a> {
    pub runtime: &'a PluginRuntime,
    pub policy: &'a InterfacePolicy,
    pub filter: &'a CapabilityFilter,
    pub data_dir: &'a Path,
    pub clock: Clock,
    #[cfg(feature = "browser")]
    pub browser: &'a BrowserManager,
    pub recorder: &'a Arc<Recorder>,
    pub session: &'a str,
    pub client_logs: &'a Arc<ClientLogs>,
    pub caller: &'a CallerCell,
    pub known: &'a Arc<crate::redact::KnownSecrets>,
    pub secrets: &'a SecretStore,
}

/// A plugin's bytes and where they came from.
pub(crate) type Candidate = (PluginSource, Vec<u8>);

/// Every candidate plugin, before anything is instantiated: the built-in ones,
/// each plugin dir's `.wasm` files by name, then the installed ones.
pub(crate) fn candidates(
    builtin: bool,
    memory: &[(String, Arc<[u8]>)],
    dirs: &[PathBuf],
    data_dir: &Path,
) -> Result<Vec<Candidate>> {
    let mut out: Vec<Candidate> = Vec::new();
    if builtin {
        for (_, bytes) in builtin::BUILTIN_PLUGINS {
            out.push((PluginSource::Builtin, bytes.to_vec()));
        }
    }
    for (label, bytes) in memory {
        out.push((PluginSource::Memory(label.clone()), bytes.to_vec()));
    }
    for dir in dirs {
        for path in wasm_files(dir)? {
            match std::fs::read(&path) {
                Ok(bytes) => out.push((PluginSource::File(path), bytes)),
                Err(e) => tracing::warn!(path = %path.display(), error = %e, "cannot read plugin"),
            }
        }
    }
    out.extend(installed(data_dir)?);
    Ok(out)
}

/// The `.wasm` files of a dir, by name.
fn wasm_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(format!("reading plugin dir {}", dir.display()), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wasm") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// The installed plugins (`<data-dir>/plugins`), each checked against its
/// `plugins.lock` entry: a file the lock does not name, or whose bytes are not
/// the locked digest, is a candidate only to be refused.
fn installed(data_dir: &Path) -> Result<Vec<Candidate>> {
    use crate::plugin::lock::{INSTALLED_DIR, PluginLock, digest};
    let dir = data_dir.join(INSTALLED_DIR);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let lock = PluginLock::read(data_dir);
    let mut out = Vec::new();
    for path in wasm_files(&dir)? {
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let found = digest(&bytes);
        let source = match lock.as_ref().map(|l| l.entry(&file)) {
            Err(reason) => PluginSource::Unpinned { path, reason: reason.clone() },
            Ok(None) => PluginSource::Unpinned {
                path,
                reason: "not in plugins.lock: install it with `ochre plugin install`".into(),
            },
            Ok(Some(e)) if e.digest != found => PluginSource::Unpinned {
                path,
                reason: format!(
                    "its bytes ({found}) are not the ones installed ({}): it was changed since; install it again",
                    e.digest
                ),
            },
            Ok(Some(e)) => PluginSource::Installed {
                path,
                from: e.source.clone(),
                digest: found,
                signer: e.signer.clone(),
            },
        };
        out.push((source, bytes));
    }
    Ok(out)
}

/// The capability filter may name built-in groups and any group a plugin declares.
pub(crate) fn check_filter(
    filter: &CapabilityFilter,
    manifests: &[std::result::Result<Manifest, String>],
) -> Result<()> {
    let mut known: BTreeSet<String> = BUILTIN_GROUPS.iter().map(|g| g.to_string()).collect();
    known.extend(manifests.iter().flatten().map(|m| m.group.clone()));
    filter.check_known(&known)
}

/// The tools a host serves, the ones it knows but has disabled (by group), and
/// what became of each plugin.
#[derive(Default)]
pub(crate) struct Loaded {
    pub tools: BTreeMap<String, ToolEntry>,
    pub disabled: BTreeMap<String, String>,
    pub plugins: Vec<PluginReport>,
    /// Which plugin (or `host`) offers each tool.
    owner: BTreeMap<String, String>,
    /// Plugin names taken.
    names: BTreeSet<String>,
    /// The secret namespaces taken (`OCHRE_<NS>_…`, see
    /// [`crate::stores::secrets::SecretStore::env_name`]) by plugins that read secrets.
    secret_namespaces: BTreeMap<String, String>,
}

impl Loaded {
    /// Native tools: the host's own first, then an embedder's; they win name
    /// clashes with plugins, and two native tools of one name are refused. A
    /// tool marked `always` stays whatever groups are enabled.
    pub(crate) fn native_tools(
        &mut self,
        filter: &CapabilityFilter,
        tools: Vec<(Arc<dyn crate::native::HostTool>, bool)>,
    ) -> Result<()> {
        for (tool, always) in tools {
            let info = tool.info();
            if !manifest::valid_tool_name(&info.name) {
                return Err(Error::Config(format!(
                    "native tool name {:?} is not valid",
                    info.name
                )));
            }
            if self.owner.contains_key(&info.name) || self.disabled.contains_key(&info.name) {
                return Err(Error::Config(format!("two native tools are named {}", info.name)));
            }
            if !(always || filter.allows(&info.capability)) || info.tier > filter.max_tier() {
                self.disabled.insert(info.name.clone(), info.capability.clone());
                continue;
            }
            let validator = jsonschema::validator_for(&info.input_schema)
                .map_err(|e| Error::Config(format!("{} schema: {e}", info.name)))?;
            self.owner.insert(info.name.clone(), info.plugin.clone());
            let entry = ToolEntry { info, imp: ToolImpl::Native(tool), validator };
            self.tools.insert(entry.info.name.clone(), entry);
        }
        Ok(())
    }

    /// Load one candidate plugin, or report why not.
    pub(crate) async fn plugin(
        &mut self,
        cx: &LoadContext<'_>,
        (source, bytes): Candidate,
        manifest: std::result::Result<Manifest, String>,
    ) {
        // A changed installed file is refused for that, whatever its bytes now say.
        if let PluginSource::Unpinned { reason, .. } = &source {
            let reason = reason.clone();
            let report = match manifest {
                Ok(m) => {
                    let ifaces = m.interfaces.into_iter().collect();
                    refused(m.name, m.group, source, reason, m.tools, ifaces)
                }
                Err(_) => {
                    refused(source.file_stem(), String::new(), source, reason, vec![], vec![])
                }
            };
            return self.refuse(report);
        }
        let manifest = match manifest {
            Ok(m) => m,
            Err(reason) => {
                let name = source.file_stem();
                let report = refused(name, String::new(), source, reason, vec![], vec![]);
                return self.refuse(report);
            }
        };
        let report = |status| PluginReport {
            name: manifest.name.clone(),
            group: manifest.group.clone(),
            source: source.clone(),
            status,
            tools: manifest.tools.clone(),
            interfaces: manifest.interfaces.iter().cloned().collect(),
            wit: manifest.sdk.clone(),
            instances: None,
        };
        if !self.names.insert(manifest.name.clone()) {
            let reason = format!(
                "another plugin named {:?} is already loaded; plugin names must be unique",
                manifest.name
            );
            return self.refuse(report(PluginStatus::Refused(reason)));
        }
        if let Err(reason) = self.take_secret_namespace(&manifest) {
            return self.refuse(report(PluginStatus::Refused(reason)));
        }
        if !cx.filter.allows(&manifest.group) {
            for t in &manifest.tools {
                self.disabled.entry(t.clone()).or_insert_with(|| manifest.group.clone());
            }
            return self.plugins.push(report(PluginStatus::Disabled));
        }
        let builtin = source == PluginSource::Builtin;
        match load_plugin(cx, &manifest, &bytes, builtin, &self.owner).await {
            Ok((plugin, entries)) => {
                let tools = self.enable(&manifest.name, entries, cx.filter.max_tier());
                tracing::info!(plugin = %manifest.name, group = %manifest.group, tools = tools.len(), "plugin loaded");
                self.plugins.push(PluginReport {
                    tools,
                    wit: plugin.wit_version().to_owned(),
                    instances: Some(plugin.instance_counter()),
                    ..report(PluginStatus::Loaded)
                });
            }
            Err(reason) => self.refuse(report(PluginStatus::Refused(reason))),
        }
    }

    /// Serve a loaded plugin's tools (those within the tier cap: `--slim`
    /// disables the rest like an excluded group's); their names.
    fn enable(&mut self, plugin: &str, entries: Vec<ToolEntry>, max_tier: u8) -> Vec<String> {
        let mut names = Vec::new();
        for e in entries {
            if e.info.tier > max_tier {
                self.disabled.insert(e.info.name.clone(), e.info.capability.clone());
                continue;
            }
            names.push(e.info.name.clone());
            self.owner.insert(e.info.name.clone(), plugin.to_owned());
            self.tools.insert(e.info.name.clone(), e);
        }
        names
    }

    /// A plugin that reads secrets gets the values named `OCHRE_<NAME>_<KEY>`;
    /// two such plugins whose names overlap there (`a` and `a-b`: key `b_c` of
    /// `a` is key `c` of `a-b`), or one named like the host's own namespace
    /// (`secret`, the `{{secret:NAME}}` parameters), would read each other's:
    /// the later one is refused.
    fn take_secret_namespace(&mut self, manifest: &Manifest) -> std::result::Result<(), String> {
        if !manifest.interfaces.contains("secrets") {
            return Ok(());
        }
        let ns = crate::stores::secrets::normalize_key(&manifest.name);
        let host_ns =
            crate::stores::secrets::normalize_key(crate::pipeline::redact::SECRET_NAMESPACE);
        let overlaps = |other: &str| {
            ns == other
                || ns.strip_prefix(other).is_some_and(|r| r.starts_with('_'))
                || other.strip_prefix(ns.as_str()).is_some_and(|r| r.starts_with('_'))
        };
        if overlaps(&host_ns) {
            return Err(format!(
                "reads secrets, and its name overlaps the host's secret namespace \
                 (OCHRE_{host_ns}_*, the {{{{secret:NAME}}}} parameters): rename the plugin"
            ));
        }
        if let Some((other_ns, other)) = self.secret_namespaces.iter().find(|(o, _)| overlaps(o)) {
            return Err(format!(
                "reads secrets, and its namespace OCHRE_{ns}_* overlaps OCHRE_{other_ns}_* of \
                 plugin {other:?}: each could read the other's secrets; rename one of them"
            ));
        }
        self.secret_namespaces.insert(ns, manifest.name.clone());
        Ok(())
    }

    fn refuse(&mut self, report: PluginReport) {
        if let PluginStatus::Refused(reason) = &report.status {
            tracing::error!(plugin = %report.name, source = %report.source, "plugin refused: {reason}");
        }
        self.plugins.push(report);
    }

    /// A tool both disabled (by group) and offered by a loaded plugin stays callable.
    pub(crate) fn finish(mut self) -> Self {
        let tools = &self.tools;
        self.disabled.retain(|name, _| !tools.contains_key(name));
        self
    }
}

fn refused(
    name: String,
    group: String,
    source: PluginSource,
    reason: String,
    tools: Vec<String>,
    interfaces: Vec<String>,
) -> PluginReport {
    PluginReport {
        name,
        group,
        source,
        status: PluginStatus::Refused(reason),
        tools,
        interfaces,
        wit: String::new(),
        instances: None,
    }
}

/// Instantiate a plugin and check the tools it describes against its manifest.
async fn load_plugin(
    cx: &LoadContext<'_>,
    manifest: &Manifest,
    bytes: &[u8],
    builtin: bool,
    owner: &BTreeMap<String, String>,
) -> std::result::Result<(PreparedPlugin, Vec<ToolEntry>), String> {
    cx.policy.check(manifest, builtin)?;
    let services = Arc::new(PluginServices {
        name: manifest.name.clone(),
        kv: KvStore::new(cx.data_dir.join("state"), &manifest.name),
        secrets: cx.secrets.clone(),
        clock: cx.clock,
        #[cfg(feature = "browser")]
        browser: cx.browser.clone(),
        #[cfg(feature = "browser")]
        cdp_domains: manifest.cdp_domains.clone(),
        recorder: cx.recorder.clone(),
        session: cx.session.to_owned(),
        client_logs: cx.client_logs.clone(),
        caller: cx.caller.clone(),
        known: cx.known.clone(),
    });
    let plugin = crate::plugin::prepare(cx.runtime, bytes, manifest, services)?;
    let defs = plugin.describe().await.map_err(|e| format!("describe failed: {}", e.message))?;
    let mut entries = Vec::with_capacity(defs.len());
    let mut seen = BTreeSet::new();
    for def in defs {
        check_definition(&def, manifest, &mut seen, owner)?;
        let schema: Value = serde_json::from_str(&def.input_schema)
            .map_err(|e| format!("tool {:?}: input schema is not JSON: {e}", def.name))?;
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(format!("tool {:?}: input schema must be an object schema", def.name));
        }
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| format!("tool {:?}: invalid input schema: {e}", def.name))?;
        let info = tool_info(def, schema, &manifest.name);
        entries.push(ToolEntry { info, imp: ToolImpl::Plugin(plugin.clone()), validator });
    }
    Ok((plugin, entries))
}

/// A described tool is well named, declared in the manifest, described once,
/// not another plugin's, and of the plugin's group.
fn check_definition(
    def: &crate::plugin::bindings::ochre::plugin::types::ToolDefinition,
    manifest: &Manifest,
    seen: &mut BTreeSet<String>,
    owner: &BTreeMap<String, String>,
) -> std::result::Result<(), String> {
    if !manifest::valid_tool_name(&def.name) {
        return Err(format!("tool name {:?} must be 1-64 chars of [A-Za-z0-9_-]", def.name));
    }
    if !manifest.tools.contains(&def.name) {
        return Err(format!("tool {:?} is not declared in the manifest", def.name));
    }
    if !seen.insert(def.name.clone()) {
        return Err(format!("tool {:?} is described twice", def.name));
    }
    if let Some(other) = owner.get(&def.name) {
        return Err(format!(
            "tool {:?} is already offered by plugin {other:?}; refusing plugin {:?}",
            def.name, manifest.name
        ));
    }
    if def.capability != manifest.group {
        return Err(format!(
            "tool {:?} claims capability {:?} but the plugin's group is {:?}",
            def.name, def.capability, manifest.group
        ));
    }
    Ok(())
}

/// What the host knows of a plugin's tool.
/// A `redact` entry that declares a secret result: `result.FIELD as NAME`
/// (the SDK's `secret_result = "FIELD as NAME"`).
fn secret_result_of(entry: &str) -> Option<(String, String)> {
    let (field, name) = entry.strip_prefix("result.")?.split_once(" as ")?;
    let (field, name) = (field.trim(), name.trim());
    (!field.is_empty() && !name.is_empty()).then(|| (field.to_owned(), name.to_owned()))
}

/// A `redact` entry that declares an argument a secret: `secret.ARG` (the SDK's
/// `secret = "ARG"`, which also redacts `ARG` itself, so a host that does not
/// know the entry still never logs the value).
fn secret_arg_of(entry: &str) -> Option<String> {
    entry.strip_prefix("secret.").filter(|a| !a.is_empty()).map(str::to_owned)
}

fn tool_info(
    def: crate::plugin::bindings::ochre::plugin::types::ToolDefinition,
    schema: Value,
    plugin: &str,
) -> ToolInfo {
    ToolInfo {
        name: def.name,
        description: def.description,
        input_schema: schema,
        capability: def.capability,
        tier: def.tier,
        annotations: Annotations {
            read_only: def.annotations.read_only,
            destructive: def.annotations.destructive,
            idempotent: def.annotations.idempotent,
            open_world: def.annotations.open_world,
        },
        intent: def
            .features
            .contains(crate::plugin::bindings::ochre::plugin::types::HostFeatures::INTENT),
        output_mode: def
            .features
            .contains(crate::plugin::bindings::ochre::plugin::types::HostFeatures::OUTPUT_MODE),
        secret_result: def.redact.iter().find_map(|r| secret_result_of(r)),
        secret_args: def.redact.iter().filter_map(|r| secret_arg_of(r)).collect(),
        redact: def
            .redact
            .into_iter()
            .filter(|r| secret_result_of(r).is_none() && secret_arg_of(r).is_none())
            .collect(),
        plugin: plugin.to_owned(),
        scope: Some({
            use crate::plugin::bindings::ochre::plugin::types::GuardScope as G;
            match def.scope {
                G::Browser => crate::intent::Scope::Browser,
                G::NetworkAdjacent => crate::intent::Scope::NetworkAdjacent,
                G::Local => crate::intent::Scope::Local,
            }
        }),
        control: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str, secrets: bool) -> Manifest {
        Manifest {
            sdk: "0.1.0".into(),
            name: name.into(),
            group: "g".into(),
            interfaces: if secrets { ["secrets".to_string()].into() } else { BTreeSet::new() },
            tools: vec![],
            cdp_domains: BTreeSet::new(),
        }
    }

    #[test]
    fn plugins_reading_secrets_never_share_a_namespace() {
        let mut loaded = Loaded::default();
        assert!(loaded.take_secret_namespace(&manifest("totp", true)).is_ok());
        assert!(loaded.take_secret_namespace(&manifest("a", true)).is_ok());
        // `a-b`'s key `c` is `a`'s key `b_c`: OCHRE_A_B_C.
        let err = loaded.take_secret_namespace(&manifest("a-b", true)).expect_err("refused");
        assert!(err.contains("OCHRE_A_B_*") && err.contains("\"a\""), "{err}");
        // The same name up to case and punctuation.
        assert!(loaded.take_secret_namespace(&manifest("TOTP", true)).is_err());
        // The host's own `{{secret:NAME}}` namespace, and names beneath it.
        for name in ["secret", "secret-stealer"] {
            let err = loaded.take_secret_namespace(&manifest(name, true)).expect_err("refused");
            assert!(err.contains("OCHRE_SECRET_*"), "{err}");
        }
        // Without the secrets interface the name reads nothing: no clash.
        assert!(loaded.take_secret_namespace(&manifest("a-b", false)).is_ok());
        assert!(loaded.take_secret_namespace(&manifest("ab", true)).is_ok());
    }
}
