//! `ochre:plugin/secrets`: read-only secrets; what a call reads is redacted from what it writes.

use super::bindings::ochre::plugin::secrets;
use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "secrets",
    sensitive: true, // secrets are the user's
    link: |linker| secrets::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
    check: no_rule,
};

impl secrets::Host for CallState {
    async fn get(&mut self, key: String) -> Option<String> {
        let value = self.services.secrets.get(&self.services.name, &key)?;
        if self.secrets_read.len() < 64 {
            self.secrets_read.push(value.clone());
        }
        Some(value)
    }
}
