//! A person in the loop. Two things a person does through pages of ochre's
//! own (served by the MCP crate on its HTTP server, or on a loopback listener
//! of its own beside stdio):
//! - a **hand-off** ([`Handoff`]): a tab held for a person, who watches it
//!   live, drives it and presses "Done" (`oc_handoff`);
//! - an **ask** ([`Ask`]): secrets a call lacks, typed by the person into
//!   ochre's page and sent from their browser to ochre, never through the
//!   MCP client (MCP URL-mode elicitation).
//!
//! Each is reached by an unguessable link (`/live/<token>`, `/ask/<token>`)
//! that works only while it lasts.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use ochre_protocol::lock;

use crate::error::ToolError;
use crate::redact::KnownSecrets;

mod demonstration;

/// What the client's user did with a page ochre sent them to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// They agreed to open it.
    Accepted,
    /// They declined or dismissed it.
    Declined,
    /// The client could not ask them (it said why).
    Failed(String),
}

/// Sends the client's user to a page of ochre's own: MCP URL-mode
/// elicitation (the MCP server implements it for clients that support it).
pub trait UrlAsker: Send + Sync {
    /// Ask the client to show `message` and open `url` for its user.
    fn open<'a>(&'a self, message: &'a str, url: &'a str) -> BoxFuture<'a, Asked>;
}

/// Starts the listener that serves the pages (stdio: bound at the first
/// need); the base URL people reach it at.
pub type Starter = Arc<dyn Fn() -> BoxFuture<'static, Result<String, String>> + Send + Sync>;

/// How a hand-off ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The person pressed "Done".
    Done,
    /// Its time ran out.
    Expired,
    /// The client's user declined to open the link.
    Declined,
}

impl Ended {
    /// As answers say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Ended::Done => "done",
            Ended::Expired => "expired",
            Ended::Declined => "declined",
        }
    }
}

/// What the page showed when it was handed over.
#[derive(Debug, Clone, Default)]
pub struct PageState {
    /// Its URL.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Its text, line by line.
    pub text: String,
}

/// A tab handed to a person.
#[derive(Debug)]
pub struct Handoff {
    /// Its id for the agent (`h1`): `oc_handoff {handoffId}` waits for it.
    pub id: String,
    /// The tab.
    pub tab: crate::browser::TabId,
    /// Why the agent asks (shown on the page).
    pub reason: String,
    /// When its time runs out.
    pub deadline: Instant,
    /// The tab's owner (an HTTP session's own tabs), for the agent's wait.
    pub owner: Option<Arc<str>>,
    /// The page as it was handed over.
    pub before: PageState,
    /// The recording the person made of what they did (a demonstration), if any.
    pub demonstration: Mutex<Option<String>>,
    /// The demonstration being recorded, between batches of the person's input.
    demo: tokio::sync::Mutex<Option<demonstration::Demo>>,
    ended: tokio::sync::watch::Sender<Option<Ended>>,
}

impl Handoff {
    /// End it (the first end counts).
    pub fn end(&self, how: Ended) {
        self.ended.send_if_modified(|e| {
            let first = e.is_none();
            if first {
                *e = Some(how);
            }
            first
        });
    }

    /// How it ended, if it has.
    pub fn ended(&self) -> Option<Ended> {
        *self.ended.borrow()
    }

    /// Wait until it ends or `max` passes: how it ended, `None` if it goes on.
    pub async fn wait(&self, max: Duration) -> Option<Ended> {
        let mut rx = self.ended.subscribe();
        let until = tokio::time::timeout(max, rx.wait_for(Option::is_some)).await;
        match until {
            Ok(Ok(e)) => *e,
            _ => self.ended(),
        }
    }

    /// Seconds left.
    pub fn remaining_s(&self) -> u64 {
        self.deadline.saturating_duration_since(Instant::now()).as_secs()
    }
}

/// Secrets a call lacks, asked of a person on ochre's own page.
#[derive(Debug)]
pub struct Ask {
    /// The tool that needs them.
    pub tool: String,
    /// The secret parameters asked for, in order.
    pub names: Vec<String>,
    /// Until when the page takes an answer.
    pub deadline: Instant,
    answer: Mutex<Option<tokio::sync::oneshot::Sender<BTreeMap<String, String>>>>,
}

/// The hand-offs and asks under way, and where their pages are served.
pub struct People {
    known: Arc<KnownSecrets>,
    base: Mutex<Option<String>>,
    starter: Mutex<Option<Starter>>,
    starting: tokio::sync::Mutex<()>,
    handoffs: Mutex<HashMap<String, Arc<Handoff>>>,
    asks: Mutex<HashMap<String, Arc<Ask>>>,
    next: AtomicU64,
}

impl std::fmt::Debug for People {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("People")
            .field("base", &*lock(&self.base))
            .field("handoffs", &lock(&self.handoffs).len())
            .field("asks", &lock(&self.asks).len())
            .finish()
    }
}

/// An unguessable token: 32 random bytes, hex.
fn token() -> Result<String, ToolError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| ToolError::internal(format!("no randomness for a link: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl People {
    /// None under way; values a person gives become `known` secrets.
    pub fn new(known: Arc<KnownSecrets>) -> Self {
        Self {
            known,
            base: Mutex::new(None),
            starter: Mutex::new(None),
            starting: tokio::sync::Mutex::new(()),
            handoffs: Mutex::new(HashMap::new()),
            asks: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        }
    }

    /// The pages are served at `base` (`http://127.0.0.1:8765`, or the public
    /// URL a proxy serves ochre at).
    pub fn serve_at(&self, base: &str) {
        *lock(&self.base) = Some(base.trim_end_matches('/').to_owned());
    }

    /// The pages are served by what `starter` starts, at the first need.
    pub fn serve_on_demand(&self, starter: Starter) {
        *lock(&self.starter) = Some(starter);
    }

    /// Where the pages are served (starting the listener if it waits for a need).
    pub async fn base(&self) -> Result<String, ToolError> {
        let _one = self.starting.lock().await;
        if let Some(b) = lock(&self.base).clone() {
            return Ok(b);
        }
        let starter = lock(&self.starter).clone();
        let Some(start) = starter else {
            return Err(ToolError::live_view_unavailable(
                "this ochre serves no pages for people (a host embedded without its MCP server): \
                 no live view or secret page can be offered",
            ));
        };
        let base = start()
            .await
            .map_err(|e| ToolError::internal(format!("cannot serve the pages for people: {e}")))?;
        self.serve_at(&base);
        Ok(base.trim_end_matches('/').to_owned())
    }

    /// Start a hand-off of `tab` for `reason`, lasting at most `max`: (its link
    /// path `/live/<token>`, the hand-off). The caller holds the tab.
    pub fn start_handoff(
        &self,
        tab: crate::browser::TabId,
        reason: &str,
        max: Duration,
        owner: Option<Arc<str>>,
        before: PageState,
    ) -> Result<(String, Arc<Handoff>), ToolError> {
        let token = token()?;
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let h = Arc::new(Handoff {
            id: format!("h{n}"),
            tab,
            reason: reason.to_owned(),
            deadline: Instant::now() + max,
            owner,
            before,
            demonstration: Mutex::new(None),
            demo: tokio::sync::Mutex::new(None),
            ended: tokio::sync::watch::channel(None).0,
        });
        lock(&self.handoffs).insert(token.clone(), h.clone());
        Ok((format!("/live/{token}"), h))
    }

    /// The hand-off a live-view link names, while it lasts.
    pub fn handoff(&self, token: &str) -> Option<Arc<Handoff>> {
        let h = lock(&self.handoffs).get(token).cloned()?;
        (h.ended().is_none() && Instant::now() < h.deadline).then_some(h)
    }

    /// The hand-off `id` (`h1`), ended or not, if not yet forgotten.
    pub fn handoff_by_id(&self, id: &str) -> Option<Arc<Handoff>> {
        lock(&self.handoffs).values().find(|h| h.id == id).cloned()
    }

    /// Forget a hand-off once its end has been told.
    pub fn forget_handoff(&self, id: &str) {
        lock(&self.handoffs).retain(|_, h| h.id != id);
    }

    /// Ask a person for the secrets `names` that `tool` lacks, answered within
    /// `max`: (the page's path `/ask/<token>`, what the page will send).
    pub fn ask(
        &self,
        tool: &str,
        names: Vec<String>,
        max: Duration,
    ) -> Result<(String, tokio::sync::oneshot::Receiver<BTreeMap<String, String>>), ToolError> {
        let token = token()?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let ask = Arc::new(Ask {
            tool: tool.to_owned(),
            names,
            deadline: Instant::now() + max,
            answer: Mutex::new(Some(tx)),
        });
        let mut asks = lock(&self.asks);
        asks.retain(|_, a| Instant::now() < a.deadline);
        asks.insert(token.clone(), ask);
        Ok((format!("/ask/{token}"), rx))
    }

    /// Ask a person for `names` on ochre's page, sending them there through
    /// `asker` with `message`, and wait (at most `max`) for their answer: the
    /// values (known secrets already), or why there are none.
    pub async fn ask_by_url(
        &self,
        asker: &dyn UrlAsker,
        tool: &str,
        names: Vec<String>,
        message: &str,
        max: Duration,
    ) -> Result<BTreeMap<String, String>, String> {
        let (path, answer) = self.ask(tool, names, max).map_err(|e| e.message)?;
        let base = self.base().await.map_err(|e| e.message)?;
        match asker.open(message, &format!("{base}{path}")).await {
            Asked::Accepted => {}
            Asked::Declined => return Err("the user declined to open ochre's page".into()),
            Asked::Failed(why) => return Err(format!("the client could not ask its user: {why}")),
        }
        tokio::time::timeout(max, answer)
            .await
            .map_err(|_| "nobody answered on ochre's page in time".to_owned())?
            .map_err(|_| "ochre's page was not answered".to_owned())
    }

    /// The ask a secret page's link names, while it waits for its answer.
    pub fn asked(&self, token: &str) -> Option<Arc<Ask>> {
        let a = lock(&self.asks).get(token).cloned()?;
        let open = lock(&a.answer).is_some() && Instant::now() < a.deadline;
        open.then_some(a)
    }

    /// The person's answer to ask `token`: every name asked, none empty. The
    /// values are known secrets before anything else sees them. An error says
    /// what is wrong (and takes nothing).
    pub fn answer(&self, token: &str, mut values: BTreeMap<String, String>) -> Result<(), String> {
        let ask = self.asked(token).ok_or("this page has expired or was answered")?;
        values.retain(|k, _| ask.names.contains(k));
        if let Some(missing) =
            ask.names.iter().find(|n| values.get(*n).is_none_or(String::is_empty))
        {
            return Err(format!("{missing} is empty"));
        }
        for (name, value) in &values {
            self.known.add(name, value);
        }
        let tx = lock(&ask.answer).take().ok_or("this page was answered")?;
        lock(&self.asks).remove(token);
        tx.send(values).map_err(|_| "the call that asked has ended".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_ask_takes_one_whole_answer_and_makes_its_values_known() {
        let known = Arc::new(KnownSecrets::default());
        let people = People::new(known.clone());
        let (path, rx) = people
            .ask("oc_recording_replay", vec!["password".into()], Duration::from_secs(60))
            .expect("ask");
        let token = path.strip_prefix("/ask/").expect("path");
        assert_eq!(token.len(), 64);
        assert!(people.asked("0000").is_none());
        let empty = BTreeMap::from([("password".to_owned(), String::new())]);
        assert!(people.answer(token, empty).is_err());
        let given = BTreeMap::from([
            ("password".to_owned(), "hunter22-horse".to_owned()),
            ("other".to_owned(), "x".to_owned()),
        ]);
        people.answer(token, given).expect("answered");
        let got = rx.await.expect("sent");
        assert_eq!(got.keys().collect::<Vec<_>>(), ["password"]);
        let mut line = "typed hunter22-horse".to_owned();
        known.scrub_string(&mut line);
        assert!(!line.contains("hunter22"), "{line}");
        assert!(people.asked(token).is_none(), "answered twice");
    }

    #[tokio::test]
    async fn a_handoff_ends_once_and_its_link_dies_with_it() {
        let people = People::new(Arc::default());
        let (path, h) = people
            .start_handoff(
                crate::browser::TabId(1),
                "a CAPTCHA",
                Duration::from_secs(60),
                None,
                PageState::default(),
            )
            .expect("started");
        let token = path.strip_prefix("/live/").expect("path");
        assert!(people.handoff(token).is_some());
        assert_eq!(h.wait(Duration::from_millis(10)).await, None);
        h.end(Ended::Done);
        h.end(Ended::Expired);
        assert_eq!(h.wait(Duration::from_secs(1)).await, Some(Ended::Done));
        assert!(people.handoff(token).is_none());
        assert!(people.handoff_by_id(&h.id).is_some());
        people.forget_handoff(&h.id);
        assert!(people.handoff_by_id(&h.id).is_none());
    }
}
