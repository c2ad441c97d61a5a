//! `ochre:plugin/kv`: the plugin's own key-value state; a damaged state file traps the call (STATE_CORRUPT).

use super::*;

pub(super) const INTERFACE: HostInterface =
    HostInterface { name: "kv", sensitive: false, link: link_versions!(kv), check: no_rule };

for_each_version! { kv =>
    impl kv::Host for CallState {
        async fn get(&mut self, key: String) -> wasmtime::Result<Option<String>> {
            Ok(self.services.kv.get(&key)?)
        }
        async fn set(&mut self, key: String, value: String) -> wasmtime::Result<Result<(), String>> {
            Ok(self.services.kv.set(&key, &value)?)
        }
        async fn delete(&mut self, key: String) -> wasmtime::Result<Result<(), String>> {
            Ok(self.services.kv.delete(&key)?)
        }
        async fn keys(&mut self) -> wasmtime::Result<Vec<String>> {
            Ok(self.services.kv.keys()?)
        }
    }
}
