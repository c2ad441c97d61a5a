//! ochre's `totp` tool group: `oc_totp_generate`, RFC 6238 one-time codes.
//!
//! The secret never passes through the agent: the host hands it over through its
//! `secrets` interface, from env `OCHRE_TOTP_<DOMAIN_UPPER_WITH_UNDERSCORES>` or the
//! data dir's secrets file (`ochre totp add --domain D --secret BASE32`). The plugin
//! imports only `secrets` and `clock`: no files, no network, no browser. The code is
//! returned to the caller and never written to the journal (the summary omits it).

use ochre_protocol::totp::{SecretError, parse_secret, totp_code};
use ochre_sdk::{Output, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of `oc_totp_generate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateArgs {
    /// The site, e.g. `github.com`, as set with `ochre totp add`.
    #[schemars(length(min = 1, max = 253), regex(pattern = r"^[A-Za-z0-9._-]+$"))]
    pub domain: String,
}

/// The result of `oc_totp_generate`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Generated {
    domain: String,
    code: String,
    seconds_remaining: u64,
    expires_at: String,
}

/// The current TOTP (2FA) code for a configured site; the secret stays in the host.
#[ochre_sdk::tool(name = "oc_totp_generate", read_only, secret_result = "code as totp:{domain}")]
pub fn generate(args: GenerateArgs) -> Result<Output, ToolError> {
    let domain = args.domain.to_ascii_lowercase();
    let env_name = format!("OCHRE_TOTP_{}", secret_key(&domain));
    let raw = ochre_sdk::secrets::get(&domain).ok_or_else(|| {
        ToolError::secret_not_found(format!(
                "no TOTP secret is configured for {domain}: run `ochre totp add --domain {domain} --secret <BASE32>` \
                 or set {env_name} in the server's environment"
            ),
        )
        .with_details(serde_json::json!({ "domain": domain, "env": env_name }))
    })?;
    let params = parse_secret(&raw).map_err(|SecretError(why)| {
        ToolError::invalid_secret(format!(
            "the TOTP secret configured for {domain} is unusable: {why}"
        ))
    })?;
    let now_ms = ochre_sdk::clock::now_ms();
    let now = now_ms / 1000;
    let code = totp_code(&params, now);
    let expires = (now / params.period + 1) * params.period;
    let expires_at = humantime::format_rfc3339_seconds(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(expires),
    )
    .to_string();
    let out =
        Generated { domain: domain.clone(), code, seconds_remaining: expires - now, expires_at };
    Ok(Output::json(&out)?.with_summary(format!("generated a code for {domain}")))
}

/// The secrets key (and env suffix) for a domain: uppercase, every other character `_`.
pub fn secret_key(domain: &str) -> String {
    domain
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect()
}

ochre_sdk::register_plugin! {
    name: "totp",
    group: "totp",
    interfaces: [secrets, clock],
    tools: [Generate],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys_are_env_safe() {
        assert_eq!(secret_key("login.example-site.com"), "LOGIN_EXAMPLE_SITE_COM");
    }
}
