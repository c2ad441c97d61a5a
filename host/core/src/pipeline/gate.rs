//! The capability gate: a call names a tool this server serves, or it is refused
//! before anything else: `UNKNOWN_TOOL`, or `CAPABILITY_DISABLED` for a tool of a
//! group the operator left out (`--tools-only`, `--disable-tools`, `--slim`).

use std::collections::BTreeMap;

use crate::error::ToolError;

/// The tools this server knows but has disabled, by name (their group).
#[derive(Debug, Default)]
pub(crate) struct Gate {
    pub disabled: BTreeMap<String, String>,
    /// The server runs with `--slim` (core tier-1 tools only).
    pub slim: bool,
}

impl Gate {
    /// The served tool named `name`, or why there is none.
    pub(crate) fn resolve<'t, T>(
        &self,
        tools: &'t BTreeMap<String, T>,
        name: &str,
    ) -> Result<&'t T, ToolError> {
        tools.get(name).ok_or_else(|| {
            self.disabled(name).unwrap_or_else(|| {
                ToolError::unknown_tool(format!(
                    "no tool named {name:?}; call tools/list for the available tools"
                ))
            })
        })
    }

    /// The capability group of a tool this server knows but has disabled.
    pub(crate) fn group(&self, tool: &str) -> Option<&str> {
        self.disabled.get(tool).map(String::as_str)
    }

    /// The `CAPABILITY_DISABLED` error for a tool this server knows but has
    /// disabled, if `tool` is one.
    pub(crate) fn disabled(&self, tool: &str) -> Option<ToolError> {
        let group = self.group(tool)?;
        let why = if self.slim {
            "this server runs with --slim (core tier-1 tools only)"
        } else {
            "this server has disabled that group (--tools-only / --disable-tools)"
        };
        Some(
            ToolError::capability_disabled(format!(
                "tool {tool} belongs to capability group {group:?}; {why}"
            ))
            .with("capability", group),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    #[test]
    fn unknown_and_disabled_tools_are_refused_with_their_codes() {
        let gate = Gate {
            disabled: BTreeMap::from([("crawl".to_owned(), "crawl".to_owned())]),
            slim: false,
        };
        let tools = BTreeMap::from([("navigate".to_owned(), 1)]);
        assert_eq!(gate.resolve(&tools, "navigate").ok(), Some(&1));
        let e = gate.resolve(&tools, "crawl").expect_err("disabled");
        assert_eq!(e.code, Code::CapabilityDisabled);
        assert_eq!(e.details["capability"], "crawl");
        let e = gate.resolve(&tools, "nope").expect_err("unknown");
        assert_eq!(e.code, Code::UnknownTool);
    }
}
