//! `ochre:plugin/secrets`: read-only secrets; what a call reads is redacted from what it writes.

use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "secrets",
    sensitive: true, // secrets are the user's
    link: link_versions!(secrets),
    check: no_rule,
};

for_each_version! { secrets =>
    impl secrets::Host for CallState {
        async fn get(&mut self, key: String) -> Option<String> {
            let value = self.services.secrets.get(&self.services.name, &key)?;
            let plugin = &self.services.name;
            self.services.known.add(&format!("secret:{plugin}.{key}"), &value);
            if self.secrets_read.len() < 64 {
                self.secrets_read.push(value.clone());
            }
            Some(value)
        }
    }
}
