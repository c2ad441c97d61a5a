//! `ochre:plugin/clock`: the host's clock (fixed in tests).

use super::*;

pub(super) const INTERFACE: HostInterface =
    HostInterface { name: "clock", sensitive: false, link: link_versions!(clock), check: no_rule };

for_each_version! { clock =>
    impl clock::Host for CallState {
        async fn now_ms(&mut self) -> u64 {
            self.services.clock.now_ms()
        }
    }
}
