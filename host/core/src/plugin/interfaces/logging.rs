//! `ochre:plugin/logging`: a plugin's log lines, cut at [`MAX_LOG_BYTES`], to the server log and (at their level) to MCP clients, secrets redacted.

use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "logging",
    sensitive: false,
    link: link_versions!(logging),
    check: no_rule,
};

/// Longest log message a plugin may emit; longer ones are cut.
const MAX_LOG_BYTES: usize = 4096;

for_each_version! { logging =>
    impl logging::Host for CallState {
        async fn log(&mut self, level: logging::Level, message: String) {
            let mut message = message;
            if message.len() > MAX_LOG_BYTES {
                message.truncate(message.floor_char_boundary(MAX_LOG_BYTES));
                message.push('…');
            }
            // A plugin must not leak a secret through its log (stderr or a client).
            let message = crate::client_log::without_secrets(&message, &self.secrets_read);
            let message = self.services.known.scrub(&message).into_owned();
            let plugin = self.services.name.as_str();
            use crate::client_log::Level as L;
            let to = match level {
                logging::Level::Trace | logging::Level::Debug => L::Debug,
                logging::Level::Info => L::Info,
                logging::Level::Warn => L::Warning,
                logging::Level::Error => L::Error,
            };
            self.services.client_logs.emit(to, &format!("plugin:{plugin}"), message.clone());
            match level {
                logging::Level::Trace => tracing::trace!(plugin, "{message}"),
                logging::Level::Debug => tracing::debug!(plugin, "{message}"),
                logging::Level::Info => tracing::info!(plugin, "{message}"),
                logging::Level::Warn => tracing::warn!(plugin, "{message}"),
                logging::Level::Error => tracing::error!(plugin, "{message}"),
            }
        }
    }
}
