//! `ochre:plugin/browser`: tabs, navigation, page reads and actions through the host's browser guards.

use super::*;
use crate::browser::HostBrowser;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "browser",
    sensitive: false,
    link: link_versions!(browser),
    check: no_rule,
};

impl FromHostTab for bindings::ochre::plugin::browser::TabInfo {
    fn from_host(t: crate::browser::TabInfo) -> Self {
        use bindings::ochre::plugin::browser::{Dialog, DialogKind};
        let dialog = t.dialog.map(|d| Dialog {
            kind: match d.kind {
                "confirm" => DialogKind::Confirm,
                "prompt" => DialogKind::Prompt,
                "beforeunload" => DialogKind::Beforeunload,
                _ => DialogKind::Alert,
            },
            message: d.message,
        });
        Self { id: t.id, url: t.url, title: t.title, current: t.current, opener: t.opener, dialog }
    }
}

/// A tab as the guest sees it, or the error.
fn tab_info<T: FromHostTab>(r: Result<crate::browser::TabInfo, crate::ToolError>) -> WitResult<T> {
    r.map(T::from_host).map_err(wit_error)
}

for_each_version! { browser =>
    impl browser::Host for CallState {
        async fn tabs(&mut self) -> WitResult<Vec<browser::TabInfo>> {
            super::host_call("browser", "tabs", "");
            let tabs = self.services.browser.tabs().await.map_err(wit_error)?;
            Ok(tabs.into_iter().map(browser::TabInfo::from_host).collect())
        }

        async fn new_tab(
            &mut self,
            url: Option<String>,
            timeout_ms: u32,
        ) -> WitResult<browser::TabInfo> {
            super::host_call("browser", "new-tab", url.as_deref().unwrap_or(""));
            tab_info(self.services.browser.new_tab(url.as_deref(), timeout_ms).await)
        }

        async fn close_tab(&mut self, tab: String) -> WitResult<()> {
            super::host_call("browser", "close-tab", &tab);
            let tab = crate::browser::TabId::of(&tab).map_err(wit_error)?;
            self.services.browser.close_tab(tab).await.map_err(wit_error)
        }

        async fn navigate(
            &mut self,
            tab: Option<String>,
            url: String,
            timeout_ms: u32,
        ) -> WitResult<browser::TabInfo> {
            super::host_call("browser", "navigate", &url);
            tab_info(self.services.browser.navigate(super::tab_arg(tab)?, &url, timeout_ms).await)
        }

        async fn history(
            &mut self,
            tab: Option<String>,
            delta: i32,
            timeout_ms: u32,
        ) -> WitResult<browser::TabInfo> {
            super::host_call("browser", "history", "");
            tab_info(self.services.browser.history(super::tab_arg(tab)?, delta, timeout_ms).await)
        }

        async fn reload(
            &mut self,
            tab: Option<String>,
            timeout_ms: u32,
        ) -> WitResult<browser::TabInfo> {
            super::host_call("browser", "reload", "");
            tab_info(self.services.browser.reload(super::tab_arg(tab)?, timeout_ms).await)
        }

        async fn evaluate(
            &mut self,
            tab: Option<String>,
            expression: String,
            timeout_ms: u32,
        ) -> WitResult<String> {
            super::host_call("browser", "evaluate", "");
            json_text(self.services.browser.evaluate(super::tab_arg(tab)?, &expression, timeout_ms).await)
        }

        async fn screenshot(
            &mut self,
            tab: Option<String>,
            full_page: bool,
            format: String,
            quality: Option<u8>,
            clip: Option<browser::Rect>,
        ) -> WitResult<Vec<u8>> {
            super::host_call("browser", "screenshot", &format);
            let jpeg = match format.as_str() {
                "png" => None,
                "jpeg" | "jpg" => Some(quality.unwrap_or(80)),
                other => {
                    return Err(wit_error(crate::ToolError::invalid_argument(
                        "format",
                        format!("screenshot format {other:?} is not png or jpeg"),
                    )));
                }
            };
            self.services
                .browser
                .screenshot(
                    super::tab_arg(tab)?,
                    full_page,
                    jpeg,
                    clip.map(|c| [c.x, c.y, c.width, c.height]),
                )
                .await
                .map_err(wit_error)
        }

        async fn input(
            &mut self,
            tab: Option<String>,
            events: Vec<browser::InputEvent>,
        ) -> WitResult<()> {
            super::host_call("browser", "input", "");
            use crate::browser::Input;
            let p = |p: browser::Pointer| (p.x, p.y, p.count);
            let events = events
                .into_iter()
                .map(|e| match e {
                    browser::InputEvent::MouseMove(q) => Input::MouseMove(p(q)),
                    browser::InputEvent::MouseDown(q) => Input::MouseDown(p(q)),
                    browser::InputEvent::MouseUp(q) => Input::MouseUp(p(q)),
                    browser::InputEvent::Key(k) => Input::Key(k),
                    browser::InputEvent::Text(t) => Input::Text(t),
                })
                .collect::<Vec<_>>();
            self.services.browser.input(super::tab_arg(tab)?, &events).await.map_err(wit_error)
        }

        async fn page_op(
            &mut self,
            tab: Option<String>,
            op: String,
            args: String,
            timeout_ms: u32,
        ) -> WitResult<String> {
            super::host_call("browser", "page-op", &op);
            let args = super::json_arg("args", "page-op arguments", &args)?;
            // Batch visits and pauses are long by design and bounded on their own:
            // their time extends the call's wall-clock backstop, like nested calls.
            let long = crate::browser::ops::page_op(&op).is_some_and(|o| o.long);
            let started = std::time::Instant::now();
            let out = self.services.browser.page_op(super::tab_arg(tab)?, &op, args, timeout_ms).await;
            if long {
                self.nested_ms.fetch_add(
                    started.elapsed().as_millis() as u64,
                    std::sync::atomic::Ordering::Relaxed,
                );
            }
            out.map(|v| v.to_string()).map_err(wit_error)
        }

        async fn set_files(
            &mut self,
            tab: Option<String>,
            target: String,
            paths: Vec<String>,
        ) -> WitResult<Vec<String>> {
            super::host_call("browser", "set-files", "");
            // A ref as it is spelled (`ax_12`), else a CSS selector.
            let target = match target.parse::<crate::browser::RefId>() {
                Ok(r) => crate::browser::page_ops::FileInput::of_ref(r),
                Err(_) => crate::browser::page_ops::FileInput { ref_id: None, selector: Some(target) },
            };
            self.services.browser.set_files(super::tab_arg(tab)?, &target, &paths).await.map_err(wit_error)
        }
    }
}
