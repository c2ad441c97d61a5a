//! `ochre:plugin/cdp`: raw CDP commands, only in the domains the manifest names.

use super::bindings::ochre::plugin::cdp;
use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "cdp",
    sensitive: true, // raw CDP reaches past every guard
    link: |linker| cdp::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
};

impl cdp::Host for CallState {
    async fn send(
        &mut self,
        tab: Option<String>,
        method: String,
        params: String,
    ) -> WitResult<String> {
        let domain = method.split_once('.').map(|(d, _)| d).unwrap_or("");
        if domain.is_empty() || method.split_once('.').is_none_or(|(_, c)| c.is_empty()) {
            return Err(wit_error(crate::ToolError::invalid_argument(
                "method",
                format!("CDP method {method:?} is not `Domain.command`"),
            )));
        }
        if !self.services.cdp_domains.contains(domain) {
            let declared: Vec<&str> = self
                .services
                .cdp_domains
                .iter()
                .map(String::as_str)
                .collect();
            return Err(wit_error(
                crate::ToolError::new(
                    crate::browser::codes::PERMISSION_DENIED,
                    format!(
                        "plugin {} may not use the CDP domain {domain} (it declared: {})",
                        self.services.name,
                        if declared.is_empty() {
                            "none".to_owned()
                        } else {
                            declared.join(", ")
                        }
                    ),
                )
                .with("domain", domain),
            ));
        }
        let params: serde_json::Value = if params.trim().is_empty() {
            serde_json::json!({})
        } else {
            serde_json::from_str(&params).map_err(|e| {
                wit_error(crate::ToolError::invalid_argument(
                    "params",
                    format!("CDP params are not JSON: {e}"),
                ))
            })?
        };
        self.services
            .browser
            .cdp_send(tab.as_deref(), &method, params)
            .await
            .map(|v| v.to_string())
            .map_err(wit_error)
    }
}
