//! Messages for the client's operator (MCP `notifications/message`): what a
//! plugin logs during a call, the browser's launches and relaunches, plugins
//! refused at load, calls a guard refused. Each message goes to the sessions
//! that may see it: a call's messages to that call's session, the rest to every
//! session. Nothing here carries a secret: plugin lines have the secrets their
//! call read taken out, and guard refusals name the tool and the code only.

use std::sync::Mutex;

use ochre_protocol::lock;
use tokio::sync::broadcast;

pub use ochre_protocol::Level;

/// One message.
#[derive(Debug, Clone)]
pub struct ClientLog {
    /// Its level.
    pub level: Level,
    /// Who says it: `ochre`, `browser`, `guard` or `plugin:<name>`.
    pub logger: String,
    /// The text.
    pub message: String,
    /// The MCP session it is for (`None`: every session).
    pub session: Option<String>,
}

/// Messages kept for sessions that start later (plugins refused at load).
const STARTUP_KEPT: usize = 64;

/// Where messages go: every session's forwarder subscribes.
#[derive(Debug)]
pub struct ClientLogs {
    tx: broadcast::Sender<ClientLog>,
    startup: Mutex<Vec<ClientLog>>,
}

impl Default for ClientLogs {
    fn default() -> Self {
        Self { tx: broadcast::channel(256).0, startup: Mutex::new(Vec::new()) }
    }
}

tokio::task_local! {
    /// The MCP session of the running call (set by the pipeline).
    static SESSION: Option<String>;
}

/// Run `fut` as a call of `session` (its messages go to that session).
pub(crate) async fn in_session<F: std::future::Future>(
    session: Option<String>,
    fut: F,
) -> F::Output {
    SESSION.scope(session, fut).await
}

/// The MCP session of the running call, if any.
pub(crate) fn current_session() -> Option<String> {
    SESSION.try_with(Clone::clone).ok().flatten()
}

impl ClientLogs {
    /// Send a message to the running call's session (every session outside a
    /// call).
    pub fn emit(&self, level: Level, logger: &str, message: impl Into<String>) {
        let _ = self.tx.send(ClientLog {
            level,
            logger: logger.to_owned(),
            message: message.into(),
            session: current_session(),
        });
    }

    /// A message of the server's start, also told to every session that starts
    /// later.
    pub fn emit_startup(&self, level: Level, logger: &str, message: impl Into<String>) {
        let m =
            ClientLog { level, logger: logger.to_owned(), message: message.into(), session: None };
        let mut kept = lock(&self.startup);
        if kept.len() < STARTUP_KEPT {
            kept.push(m.clone());
        }
        let _ = self.tx.send(m);
    }

    /// The messages of the server's start.
    pub fn startup(&self) -> Vec<ClientLog> {
        lock(&self.startup).clone()
    }

    /// Every message from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ClientLog> {
        self.tx.subscribe()
    }
}

/// `message` with each of `secrets` (4 chars or more) replaced by `[redacted]`.
pub(crate) fn without_secrets(message: &str, secrets: &[String]) -> String {
    let mut out = message.to_owned();
    for s in secrets.iter().filter(|s| s.chars().count() >= 4) {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "[redacted]");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_taken_out_and_short_values_left() {
        let s = vec!["JBSWY3DPEHPK3PXP".to_owned(), "ab".to_owned()];
        assert_eq!(without_secrets("seed JBSWY3DPEHPK3PXP for ab", &s), "seed [redacted] for ab");
    }

    #[tokio::test]
    async fn a_calls_messages_name_its_session() {
        let logs = ClientLogs::default();
        let mut rx = logs.subscribe();
        logs.emit(Level::Info, "ochre", "outside");
        in_session(Some("s1".into()), async {
            logs.emit(Level::Warning, "plugin:x", "inside");
        })
        .await;
        let a = rx.recv().await.expect("first");
        let b = rx.recv().await.expect("second");
        assert_eq!((a.session, a.message.as_str()), (None, "outside"));
        assert_eq!((b.session.as_deref(), b.level), (Some("s1"), Level::Warning));
    }
}
