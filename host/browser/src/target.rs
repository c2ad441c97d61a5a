//! An element as a caller names it ([`Target`]: a ref, role and name, a CSS
//! selector, an XPath, its text, a description), found on the page and waited
//! for in one loop with one rule for what may pass if tried again
//! ([`again`]). A replay's recorded targets and the selectors an imported
//! recording keeps are found here, each in one host call.

use std::time::{Duration, Instant};

use ochre_protocol::page_ops::{self as ops, Identity, Target, TargetFound};
use ochre_protocol::{Code, ToolError};

use super::{BrowserManager, RefId, TabId, TabRef, bounded};

/// Default bound of the wait for a target, in ms.
pub(super) const FIND_MS: u64 = 5_000;
/// Longest wait a caller may ask for, in ms.
const FIND_MAX_MS: u64 = 60_000;
/// Between tries: about three frames (a render, a navigation's commit).
const RETRY: Duration = Duration::from_millis(50);
/// Bound of each page operation of a try, in ms.
const TRY_MS: u32 = 5_000;

/// Whether a failed try may pass if tried again: the element is not there
/// yet or was replaced under the try, the page is between documents, or a
/// busy page did not answer in time. Anything else (a selector that does not
/// parse, a closed tab) fails at once.
pub(super) fn again(e: &ToolError) -> bool {
    matches!(e.code, Code::ElementNotFound | Code::StaleRef | Code::DocumentLoading | Code::Timeout)
}

/// A target's arguments checked before anything is done.
pub(super) fn check(t: &Target) -> Result<(), ToolError> {
    if t.is_empty() {
        return Err(ToolError::invalid_argument(
            "target",
            "name the element: ref, role and name, selector, xpath, text or query",
        ));
    }
    Ok(())
}

/// The XPath of an element whose own text is `text` (`None`: a text with
/// both kinds of quotes).
fn text_xpath(text: &str) -> Option<String> {
    let lit = if !text.contains('"') {
        format!("\"{text}\"")
    } else if !text.contains('\'') {
        format!("'{text}'")
    } else {
        return None;
    };
    Some(format!("//*[text()[normalize-space(.)={lit}]]"))
}

fn ms_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A target's wait (`wait_ms`, default [`FIND_MS`], at most [`FIND_MAX_MS`])
/// and the bound of a call that waits for it: the wait and 30 s more for the
/// tries' page operations, at least the call's own `timeout_ms`.
fn wait_and_bound(wait_ms: Option<u64>, timeout_ms: u32) -> (u64, u32) {
    let wait = wait_ms.unwrap_or(FIND_MS).min(FIND_MAX_MS);
    (wait, u32::try_from(wait + 30_000).unwrap_or(u32::MAX).max(timeout_ms))
}

impl BrowserManager {
    /// [`TabRef::find_target`] on the running call's tab `tab` (see
    /// [`Self::on_own_stack`]), within [`wait_and_bound`]'s bound; `what`
    /// names it if that passes.
    pub(super) async fn find_target_bounded(
        &self,
        tab: Option<TabId>,
        a: ops::FindTarget,
        timeout_ms: u32,
        what: &str,
    ) -> Result<TargetFound, ToolError> {
        let (_, bound) = wait_and_bound(a.timeout_ms, timeout_ms);
        let checked = check(&a.target);
        let run = self
            .on_own_stack(tab, checked, move |t| Box::pin(async move { t.find_target(a).await }));
        bounded(bound, what, run).await
    }

    /// `op` on the element `target` names, on the running call's tab `tab`
    /// (resolved once): the element found first (waited for up to `wait_ms`,
    /// default 5 000, and who it is said), then `op` of its ref, in one call
    /// within [`wait_and_bound`]'s bound; `what` names it if that passes.
    pub(super) async fn on_target<O>(
        &self,
        tab: Option<TabId>,
        target: Target,
        wait_ms: Option<u64>,
        timeout_ms: u32,
        what: &str,
        op: impl FnOnce(RefId) -> O + Send + 'static,
    ) -> Result<(O::Output, TargetFound), ToolError>
    where
        O: ops::PageOp + Into<ops::AnyOp> + Send + 'static,
        O::Output: Send + 'static,
    {
        let (wait, bound) = wait_and_bound(wait_ms, timeout_ms);
        let checked = check(&target);
        let run = self.on_own_stack(tab, checked, move |t| {
            Box::pin(async move {
                let found = t.find_target(ops::FindTarget::identifying(target, wait)).await?;
                let out = t.run(op(found.ref_id), timeout_ms).await?;
                Ok((out, found))
            })
        });
        bounded(bound, what, run).await
    }
}

impl TabRef {
    /// The element `t` names, for an action, a drag, a field set or a
    /// description: a ref alone is used as given (the caller's: an element
    /// gone is `STALE_REF` where it is used, never looked for), anything
    /// else found within `wait_ms` (and who it is said with `identify`).
    /// How it was found is `None` for a ref alone.
    pub(super) async fn element(
        &self,
        t: Target,
        wait_ms: u64,
        identify: bool,
    ) -> Result<(RefId, Option<TargetFound>), ToolError> {
        if let Some(r) = t.ref_only() {
            return Ok((r, None));
        }
        let ask =
            ops::FindTarget { target: t, timeout_ms: Some(wait_ms), identify: Some(identify) };
        let found = self.find_target(ask).await?;
        Ok((found.ref_id, Some(found)))
    }

    /// The `find_target` page operation: see [`ops::FindTarget`]. Tried until
    /// a try finds it or fails for good ([`again`]), or `timeout_ms` has
    /// passed: then `ELEMENT_NOT_FOUND` naming the target and the wait
    /// (`waited_ms`), with the last try's reason.
    pub(super) async fn find_target(&self, a: ops::FindTarget) -> Result<TargetFound, ToolError> {
        check(&a.target)?;
        let wait = a.timeout_ms.unwrap_or(FIND_MS).min(FIND_MAX_MS);
        let identify = a.identify == Some(true);
        let started = Instant::now();
        loop {
            let e = match self.find_once(&a.target, identify).await {
                Ok((ref_id, by, identity)) => {
                    let by = by.to_owned();
                    return Ok(TargetFound { ref_id, by, identity, waited_ms: ms_since(started) });
                }
                Err(e) => e,
            };
            let spent = ms_since(started);
            // A ref does not come back: only a name, a selector or a
            // description may find an element that is not there yet.
            if !again(&e) || a.target.ref_only().is_some() {
                return Err(e);
            }
            if spent >= wait {
                let shown = a.target.shown();
                return Err(ToolError::element_not_found(format!(
                    "{shown} is not on the page (waited {spent} ms): {}",
                    e.message
                ))
                .with("waited_ms", spent));
            }
            tokio::time::sleep(RETRY.min(Duration::from_millis(wait - spent))).await;
        }
    }

    /// One try at finding `t`, each way it gives in turn: its ref, who it
    /// is (with `identify`, when not found by role and name) and the way.
    async fn find_once(
        &self,
        t: &Target,
        identify: bool,
    ) -> Result<(RefId, &'static str, Option<Identity>), ToolError> {
        if let Some(r) = t.ref_id {
            // Still on the page: who it is says so.
            let who = self.step(ops::Identify::of(r), TRY_MS).await?;
            return Ok((r, "ref", identify.then_some(who)));
        }
        let mut last = None;
        if let (Some(role), Some(name)) = (&t.role, &t.name) {
            let nth = Some(t.nth.unwrap_or(0));
            let ask = ops::Locate { role: role.clone(), name: name.clone(), nth };
            match self.step(ask, TRY_MS).await {
                Ok(found) => return Ok((found.ref_id, "role", None)),
                Err(e) => last = Some(e),
            }
        }
        let by_text = t.text.as_deref().and_then(text_xpath);
        let selectors = [
            ("selector", t.selector.clone(), None),
            ("xpath", None, t.xpath.clone()),
            ("text", None, by_text),
        ];
        for (by, selector, xpath) in selectors {
            if selector.is_none() && xpath.is_none() {
                continue;
            }
            match self.step(ops::Query { selector, xpath, limit: Some(1) }, TRY_MS).await {
                Ok(q) => match q.matches.into_iter().next() {
                    Some(m) => {
                        return Ok((m.ref_id, by, self.who(m.ref_id, identify).await));
                    }
                    None => {
                        last = Some(ToolError::element_not_found(format!(
                            "no element matches its {by}"
                        )))
                    }
                },
                Err(e) => last = Some(e),
            }
        }
        // An accessible name without a role, or a description: the best match.
        let described =
            [("name", t.name.as_ref().filter(|_| t.role.is_none())), ("query", t.query.as_ref())];
        for (by, query) in described {
            let Some(query) = query else { continue };
            match self.step(ops::ResolveQuery { query: query.clone() }, TRY_MS).await {
                Ok(r) => return Ok((r.ref_id, by, self.who(r.ref_id, identify).await)),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| ToolError::element_not_found("no element matches it now")))
    }

    /// Who the element of `r` is, when asked and its role and name find it
    /// again (a label, say, is no role ochre locates by: then `None`, and a
    /// recording keeps its selector).
    async fn who(&self, r: RefId, identify: bool) -> Option<Identity> {
        if !identify {
            return None;
        }
        let who = self.step(ops::Identify::of(r), TRY_MS).await.ok()?;
        let again =
            ops::Locate { role: who.role.clone(), name: who.name.clone(), nth: Some(who.nth) };
        self.step(again, TRY_MS).await.ok().map(|_| who)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_may_pass_later_is_tried_again_and_nothing_else() {
        for code in [Code::ElementNotFound, Code::StaleRef, Code::DocumentLoading, Code::Timeout] {
            assert!(again(&ToolError::new(code.clone(), "x")), "{code:?}");
        }
        for code in [Code::InvalidArgument, Code::TabNotFound, Code::BrowserError] {
            assert!(!again(&ToolError::new(code.clone(), "x")), "{code:?}");
        }
    }

    #[test]
    fn a_target_names_an_element_or_is_refused() {
        let only_role = Target { role: Some("button".into()), ..Target::default() };
        assert_eq!(check(&only_role).expect_err("no name").code, Code::InvalidArgument);
        let named =
            Target { role: Some("button".into()), name: Some("Save".into()), ..Target::default() };
        assert!(check(&named).is_ok());
        assert_eq!(named.shown(), "button \"Save\"");
        let css = Target { selector: Some("#save".into()), ..Target::default() };
        assert_eq!(css.shown(), "selector \"#save\"");
        assert_eq!(text_xpath("Save").as_deref(), Some("//*[text()[normalize-space(.)=\"Save\"]]"));
        assert_eq!(text_xpath("it's \"x\""), None);
    }
}
