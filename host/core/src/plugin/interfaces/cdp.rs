//! `ochre:plugin/cdp`: raw CDP commands, only in the domains the manifest names.

use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "cdp",
    sensitive: true, // raw CDP reaches past every guard
    link: link_versions!(cdp),
    check: domains_declared,
};

/// A plugin that asks for `cdp` names the CDP domains it uses (`cdp-domain`
/// in its manifest): without them every command would be refused. One that
/// names domains asks for `cdp`.
fn domains_declared(m: &Manifest, asked: bool) -> Result<(), String> {
    match (asked, m.cdp_domains.is_empty()) {
        (true, true) => Err(
            "asks for host interface \"cdp\" but names no CDP domain (`cdp_domains: [...]` in register_plugin!)"
                .into(),
        ),
        (false, false) => Err(format!(
            "names CDP domains ({}) but does not ask for host interface \"cdp\"",
            m.cdp_domains.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
        )),
        _ => Ok(()),
    }
}

for_each_version! { cdp =>
    impl cdp::Host for CallState {
        async fn send(
            &mut self,
            tab: Option<String>,
            method: String,
            params: String,
        ) -> WitResult<String> {
            super::host_call("cdp", "send", &method);
            let domain = method.split_once('.').map(|(d, _)| d).unwrap_or("");
            if domain.is_empty() || method.split_once('.').is_none_or(|(_, c)| c.is_empty()) {
                return Err(wit_error(crate::ToolError::invalid_argument(
                    "method",
                    format!("CDP method {method:?} is not `Domain.command`"),
                )));
            }
            if !self.services.cdp_domains.contains(domain) {
                let declared: Vec<&str> =
                    self.services.cdp_domains.iter().map(String::as_str).collect();
                return Err(wit_error(
                    crate::ToolError::permission_denied(format!(
                            "plugin {} may not use the CDP domain {domain} (it declared: {})",
                            self.services.name,
                            if declared.is_empty() { "none".to_owned() } else { declared.join(", ") }
                        ),
                    )
                    .with("domain", domain),
                ));
            }
            let params = super::json_arg("params", "CDP params", &params)?;
            json_text(self.services.browser.cdp_send(super::tab_arg(tab)?, &method, params).await)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::test_manifest as manifest;

    #[test]
    fn a_plugin_that_asks_for_cdp_names_its_domains_and_only_then() {
        assert!(domains_declared(&manifest(&["cdp"], &["Runtime"]), true).is_ok());
        assert!(domains_declared(&manifest(&["browser"], &[]), false).is_ok());
        let e = domains_declared(&manifest(&["cdp"], &[]), true).expect_err("no domain");
        assert!(e.contains("names no CDP domain"), "{e}");
        let e = domains_declared(&manifest(&[], &["Page", "Runtime"]), false).expect_err("no cdp");
        assert!(e.contains("Page, Runtime") && e.contains("does not ask"), "{e}");
    }
}
