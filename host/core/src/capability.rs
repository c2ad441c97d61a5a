//! Capability gating at load time (`--tools-only` / `--disable-tools`): a plugin
//! whose group is excluded is never instantiated, and a call to one of its tools
//! fails with `CAPABILITY_DISABLED` before anything else happens.

use std::collections::BTreeSet;

use crate::error::{Error, Result};

/// The tool groups that ship with ochre.
pub const BUILTIN_GROUPS: &[&str] =
    &["core", "crawl", "recording", "workflow", "storage", "profile", "totp"];

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
    /// Only the `core` group's tier-1 tools (`--slim`): the smallest surface;
    /// `expand_tools` has nothing to reveal.
    Slim,
}

impl CapabilityFilter {
    /// Build from the CLI options (`--tools-only`, `--disable-tools`, `--slim`);
    /// more than one of them at once is an error.
    pub fn from_options(
        tools_only: &[String],
        disable_tools: &[String],
        slim: bool,
    ) -> Result<Self> {
        if slim && !(tools_only.is_empty() && disable_tools.is_empty()) {
            return Err(Error::Config(format!(
                "--slim cannot be combined with {}: --slim already means core tier-1 tools only",
                if tools_only.is_empty() { "--disable-tools" } else { "--tools-only" }
            )));
        }
        if slim {
            return Ok(Self::Slim);
        }
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
            Self::Slim => group == "core",
        }
    }

    /// The highest tier a tool of an allowed group may have (1 with `--slim`).
    pub fn max_tier(&self) -> u8 {
        match self {
            Self::Slim => 1,
            _ => u8::MAX,
        }
    }

    /// Every group this filter names must be in `known`.
    pub fn check_known(&self, known: &BTreeSet<String>) -> Result<()> {
        let named = match self {
            Self::All | Self::Slim => return Ok(()),
            Self::Only(s) | Self::Disable(s) => s,
        };
        let unknown: Vec<&str> =
            named.iter().filter(|g| !known.contains(*g)).map(String::as_str).collect();
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
        let f = CapabilityFilter::from_options(&s(&["totp, Core"]), &[], false).expect("ok");
        assert!(f.allows("totp") && f.allows("core") && !f.allows("crawl"));
        let f = CapabilityFilter::from_options(&[], &s(&["totp"]), false).expect("ok");
        assert!(!f.allows("totp") && f.allows("core"));
        assert!(CapabilityFilter::from_options(&s(&["a"]), &s(&["b"]), false).is_err());
        let f = CapabilityFilter::from_options(&[], &[], true).expect("slim");
        assert!(f.allows("core") && !f.allows("totp") && f.max_tier() == 1);
        for (only, dis) in [(s(&["core"]), vec![]), (vec![], s(&["totp"]))] {
            let e = CapabilityFilter::from_options(&only, &dis, true).expect_err("exclusive");
            assert!(e.to_string().contains("--slim"), "{e}");
        }
    }

    #[test]
    fn unknown_groups_are_named_with_the_valid_ones() {
        let known: BTreeSet<String> = BUILTIN_GROUPS.iter().map(|g| g.to_string()).collect();
        let f = CapabilityFilter::from_options(&s(&["totp,bogus"]), &[], false).expect("ok");
        let err = f.check_known(&known).expect_err("unknown").to_string();
        assert!(err.contains("bogus") && err.contains("crawl"), "{err}");
    }
}
