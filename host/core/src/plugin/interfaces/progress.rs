//! `ochre:plugin/progress`: progress notifications to the client that asked for them.

use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "progress",
    sensitive: false,
    link: link_versions!(progress),
    check: no_rule,
};

for_each_version! { progress =>
    impl progress::Host for CallState {
        async fn report(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
            if let Some(report) = &self.parent.progress
                && progress.is_finite()
            {
                report(progress, total.filter(|t| t.is_finite()), message);
            }
        }
    }
}
