//! The plugin manifest: the `ochre-manifest` custom section that `ochre-sdk`'s
//! `register_plugin!` writes into the component. The host reads it *without
//! instantiating the plugin*, so an excluded capability group costs nothing and an
//! interface the operator denies is refused before any guest code runs.
//!
//! Format (UTF-8 lines): `ochre-manifest 1`, then `key=value` lines: `sdk`, `name`,
//! `group` once each; `interface`, `cdp-domain` and `tool` any number of times.

use std::collections::BTreeSet;

/// The custom section's name.
pub const SECTION: &str = "ochre-manifest";

/// What a plugin declares about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The WIT version the plugin's SDK built against.
    pub sdk: String,
    /// The plugin's name (unique per host).
    pub name: String,
    /// Its capability group.
    pub group: String,
    /// Host interfaces it asks for.
    pub interfaces: BTreeSet<String>,
    /// Names of the tools it offers.
    pub tools: Vec<String>,
    /// CDP domains it may use through the `cdp` interface.
    pub cdp_domains: BTreeSet<String>,
}

/// Read the manifest out of a component's bytes.
pub fn read(bytes: &[u8]) -> Result<Manifest, String> {
    let mut found: Option<Vec<u8>> = None;
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| format!("not a valid WebAssembly file: {e}"))?;
        if let wasmparser::Payload::CustomSection(reader) = payload
            && reader.name() == SECTION
        {
            if found.is_some() {
                return Err(format!("more than one {SECTION} section"));
            }
            found = Some(reader.data().to_vec());
        }
    }
    let data = found.ok_or_else(|| {
        format!(
            "no {SECTION} section: not an ochre plugin (build it with ochre-sdk's register_plugin!)"
        )
    })?;
    parse(&data)
}

/// Parse the manifest text.
pub fn parse(data: &[u8]) -> Result<Manifest, String> {
    let text = std::str::from_utf8(data).map_err(|_| format!("{SECTION} is not UTF-8"))?;
    let mut lines = text.lines();
    if lines.next() != Some("ochre-manifest 1") {
        return Err(format!("{SECTION} has an unknown format version"));
    }
    let (mut sdk, mut name, mut group) = (None, None, None);
    let mut interfaces = BTreeSet::new();
    let mut tools = Vec::new();
    let mut cdp_domains = BTreeSet::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (key, value) =
            line.split_once('=').ok_or_else(|| format!("{SECTION}: malformed line {line:?}"))?;
        match key {
            "sdk" => sdk = Some(value.to_owned()),
            "name" => name = Some(value.to_owned()),
            "group" => group = Some(value.to_owned()),
            "interface" => {
                interfaces.insert(value.to_owned());
            }
            "tool" => tools.push(value.to_owned()),
            "cdp-domain" => {
                if value.is_empty() || !value.bytes().all(|b| b.is_ascii_alphanumeric()) {
                    return Err(format!("{SECTION}: bad CDP domain {value:?}"));
                }
                cdp_domains.insert(value.to_owned());
            }
            _ => {} // unknown keys are for newer hosts
        }
    }
    let name = name.ok_or_else(|| format!("{SECTION}: no name"))?;
    let group = group.ok_or_else(|| format!("{SECTION}: no group"))?;
    if !valid_plugin_name(&name) {
        return Err(format!("plugin name {name:?} must be 1-64 chars of [a-z0-9_-]"));
    }
    if !valid_plugin_name(&group) {
        return Err(format!("capability group {group:?} must be 1-64 chars of [a-z0-9_-]"));
    }
    for tool in &tools {
        if !valid_tool_name(tool) {
            return Err(format!("tool name {tool:?} must be 1-64 chars of [A-Za-z0-9_-]"));
        }
    }
    Ok(Manifest { sdk: sdk.unwrap_or_default(), name, group, interfaces, tools, cdp_domains })
}

/// Tool names MCP clients accept: 1-64 chars of `[A-Za-z0-9_-]`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Plugin and group names: 1-64 chars of `[a-z0-9_-]`.
pub fn valid_plugin_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_manifest() {
        let m = parse(b"ochre-manifest 1\nsdk=0.1.0\nname=totp\ngroup=totp\ninterface=secrets\ninterface=clock\ntool=oc_totp_generate\n")
            .expect("valid");
        assert_eq!(m.name, "totp");
        assert_eq!(m.group, "totp");
        assert_eq!(
            m.interfaces.iter().map(String::as_str).collect::<Vec<_>>(),
            ["clock", "secrets"]
        );
        assert_eq!(m.tools, ["oc_totp_generate"]);
    }

    #[test]
    fn rejects_bad_names_and_formats() {
        assert!(parse(b"ochre-manifest 2\nname=a\ngroup=b\n").is_err());
        assert!(parse(b"ochre-manifest 1\ngroup=b\n").is_err());
        assert!(parse(b"ochre-manifest 1\nname=A B\ngroup=b\n").is_err());
        assert!(parse(b"ochre-manifest 1\nname=a\ngroup=b\ntool=has space\n").is_err());
        assert!(read(b"\0asm\x01\0\0\0").is_err());
    }

    #[test]
    fn tool_names_follow_mcp_rules() {
        assert!(valid_tool_name("oc_totp_generate"));
        assert!(valid_tool_name("a-B_9"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name(&"x".repeat(65)));
        assert!(!valid_tool_name("dotted.name"));
    }
}
