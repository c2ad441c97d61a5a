//! Capability gating at load time (`--tools-only` / `--disable-tools`): a plugin
//! whose group is excluded is never instantiated, and a call to one of its tools
//! fails with `CAPABILITY_DISABLED` before anything else happens.

use std::collections::BTreeSet;

use crate::error::{Error, Result};

/// The tool groups that ship with ochre.
pub const BUILTIN_GROUPS: &[&str] = &[
    "core",
    "crawl",
    "recording",
    "workflow",
    "storage",
    "profile",
    "totp",
];

/// Which capability groups are enabled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CapabilityFilter {
    /// Every group (the default).
    #[default]
    All,
    /// Only these groups (`--tools-only`).
    Only(BTreeSet<String>),
    /// Every group but these (`--disable-tools`).
    Disable(BTreeSet<String>),
}

impl CapabilityFilter {
    /// Build from the two CLI options; both at once is an error.
    pub fn from_options(tools_only: &[String], disable_tools: &[String]) -> Result<Self> {
        let clean = |v: &[String]| -> BTreeSet<String> {
            v.iter()
                .flat_map(|s| s.split(','))
                .map(|s| s.trim().to_ascii_lowercase())
                .filter(|s| !s.is_empty())
                .collect()
        };
        match (tools_only.is_empty(), disable_tools.is_empty()) {
            (true, true) => Ok(Self::All),
            (false, true) => Ok(Self::Only(clean(tools_only))),
            (true, false) => Ok(Self::Disable(clean(disable_tools))),
            (false, false) => Err(Error::Config(
                "--tools-only and --disable-tools cannot be used together".into(),
            )),
        }
    }

    /// Whether `group` is enabled.
    pub fn allows(&self, group: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(set) => set.contains(group),
            Self::Disable(set) => !set.contains(group),
        }
    }

    /// Every group this filter names must be in `known`.
    pub fn check_known(&self, known: &BTreeSet<String>) -> Result<()> {
        let named = match self {
            Self::All => return Ok(()),
            Self::Only(s) | Self::Disable(s) => s,
        };
        let unknown: Vec<&str> = named
            .iter()
            .filter(|g| !known.contains(*g))
            .map(String::as_str)
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let valid: Vec<&str> = known.iter().map(String::as_str).collect();
        Err(Error::Config(format!(
            "unknown tool group{} {}; valid groups: {}",
            if unknown.len() > 1 { "s" } else { "" },
            unknown.join(", "),
            valid.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn options_parse_csv_and_are_exclusive() {
        let f = CapabilityFilter::from_options(&s(&["totp, Core"]), &[]).expect("ok");
        assert!(f.allows("totp") && f.allows("core") && !f.allows("crawl"));
        let f = CapabilityFilter::from_options(&[], &s(&["totp"])).expect("ok");
        assert!(!f.allows("totp") && f.allows("core"));
        assert!(CapabilityFilter::from_options(&s(&["a"]), &s(&["b"])).is_err());
    }

    #[test]
    fn unknown_groups_are_named_with_the_valid_ones() {
        let known: BTreeSet<String> = BUILTIN_GROUPS.iter().map(|g| g.to_string()).collect();
        let f = CapabilityFilter::from_options(&s(&["totp,bogus"]), &[]).expect("ok");
        let err = f.check_known(&known).expect_err("unknown").to_string();
        assert!(err.contains("bogus") && err.contains("crawl"), "{err}");
    }
}
