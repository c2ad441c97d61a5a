//! `ochre:plugin/clock`: the host's clock (fixed in tests).

use super::bindings::ochre::plugin::clock;
use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "clock",
    sensitive: false,
    link: |linker| clock::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
    check: no_rule,
};

impl clock::Host for CallState {
    async fn now_ms(&mut self) -> u64 {
        self.services.clock.now_ms()
    }
}
