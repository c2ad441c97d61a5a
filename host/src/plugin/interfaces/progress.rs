//! `ochre:plugin/progress`: progress notifications to the client that asked for them.

use super::bindings::ochre::plugin::progress;
use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "progress",
    sensitive: false,
    link: |linker| progress::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
    check: no_rule,
};

impl progress::Host for CallState {
    async fn report(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(report) = &self.progress
            && progress.is_finite()
        {
            report(progress, total.filter(|t| t.is_finite()), message);
        }
    }
}
