//! The host side of the WIT interfaces (`wit/plugin.wit`), one `Host` impl per
//! interface, linked per plugin by [`add_to_linker`] only when granted.

use wasmtime::component::{HasSelf, Linker};

use super::{CallState, WIT_VERSION};

pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "../wit",
        // kv traps when the plugin's state file is damaged: the call fails with
        // STATE_CORRUPT instead of the plugin reading it as empty.
        imports: { "ochre:plugin/kv": async | trappable, default: async },
        exports: { default: async },
    });
}

use bindings::ochre::plugin::{
    browser, cdp, clock, kv, logging, progress, recorder, secrets, tools,
};

/// Longest log message a plugin may emit; longer ones are cut.
const MAX_LOG_BYTES: usize = 4096;

/// The types-only interface: an empty instance satisfies its import.
pub(crate) fn add_types(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.instance(&format!("ochre:plugin/types@{WIT_VERSION}"))?;
    Ok(())
}

/// Link host interface `iface` into `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>, iface: &str) -> wasmtime::Result<()> {
    match iface {
        "logging" => logging::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
        "clock" => clock::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
        "kv" => kv::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
        "secrets" => secrets::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
        "progress" => progress::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
        "browser" => browser::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
        "cdp" => cdp::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
        "recorder" => recorder::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
        "tools" => tools::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
        other => wasmtime::bail!("unknown host interface {other:?}"),
    }
}

impl bindings::ochre::plugin::types::Host for CallState {}

impl logging::Host for CallState {
    async fn log(&mut self, level: logging::Level, message: String) {
        let mut message = message;
        if message.len() > MAX_LOG_BYTES {
            let mut cut = MAX_LOG_BYTES;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
            message.push('…');
        }
        // A plugin must not leak a secret through its log (stderr or a client).
        let message = crate::client_log::without_secrets(&message, &self.secrets_read);
        let plugin = self.services.name.as_str();
        if let Ok(host) = self.host() {
            use crate::client_log::Level as L;
            let to = match level {
                logging::Level::Trace | logging::Level::Debug => L::Debug,
                logging::Level::Info => L::Info,
                logging::Level::Warn => L::Warning,
                logging::Level::Error => L::Error,
            };
            host.client_logs()
                .emit(to, &format!("plugin:{plugin}"), message.clone());
        }
        match level {
            logging::Level::Trace => tracing::trace!(plugin, "{message}"),
            logging::Level::Debug => tracing::debug!(plugin, "{message}"),
            logging::Level::Info => tracing::info!(plugin, "{message}"),
            logging::Level::Warn => tracing::warn!(plugin, "{message}"),
            logging::Level::Error => tracing::error!(plugin, "{message}"),
        }
    }
}

impl clock::Host for CallState {
    async fn now_ms(&mut self) -> u64 {
        self.services.clock.now_ms()
    }
}

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

impl secrets::Host for CallState {
    async fn get(&mut self, key: String) -> Option<String> {
        let value = self.services.secrets.get(&self.services.name, &key)?;
        if self.secrets_read.len() < 64 {
            self.secrets_read.push(value.clone());
        }
        Some(value)
    }
}

impl progress::Host for CallState {
    async fn report(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(report) = &self.progress
            && progress.is_finite()
        {
            report(progress, total.filter(|t| t.is_finite()), message);
        }
    }
}

fn wit_error(e: crate::ToolError) -> bindings::ochre::plugin::types::ToolError {
    bindings::ochre::plugin::types::ToolError {
        details: (!e.details.is_empty())
            .then(|| serde_json::Value::Object(e.details.clone()).to_string()),
        code: e.code,
        message: e.message,
    }
}

fn wit_tab(t: crate::browser::TabInfo) -> browser::TabInfo {
    browser::TabInfo {
        id: t.id,
        url: t.url,
        title: t.title,
        current: t.current,
    }
}

type BrowserResult<T> = Result<T, bindings::ochre::plugin::types::ToolError>;

impl browser::Host for CallState {
    async fn tabs(&mut self) -> BrowserResult<Vec<browser::TabInfo>> {
        let tabs = self.services.browser.tabs().await.map_err(wit_error)?;
        Ok(tabs.into_iter().map(wit_tab).collect())
    }

    async fn new_tab(
        &mut self,
        url: Option<String>,
        timeout_ms: u32,
    ) -> BrowserResult<browser::TabInfo> {
        self.services
            .browser
            .new_tab(url.as_deref(), timeout_ms)
            .await
            .map(wit_tab)
            .map_err(wit_error)
    }

    async fn close_tab(&mut self, tab: String) -> BrowserResult<()> {
        self.services
            .browser
            .close_tab(&tab)
            .await
            .map_err(wit_error)
    }

    async fn navigate(
        &mut self,
        tab: Option<String>,
        url: String,
        timeout_ms: u32,
    ) -> BrowserResult<browser::TabInfo> {
        self.services
            .browser
            .navigate(tab.as_deref(), &url, timeout_ms)
            .await
            .map(wit_tab)
            .map_err(wit_error)
    }

    async fn history(
        &mut self,
        tab: Option<String>,
        delta: i32,
        timeout_ms: u32,
    ) -> BrowserResult<browser::TabInfo> {
        self.services
            .browser
            .history(tab.as_deref(), delta, timeout_ms)
            .await
            .map(wit_tab)
            .map_err(wit_error)
    }

    async fn reload(
        &mut self,
        tab: Option<String>,
        timeout_ms: u32,
    ) -> BrowserResult<browser::TabInfo> {
        self.services
            .browser
            .reload(tab.as_deref(), timeout_ms)
            .await
            .map(wit_tab)
            .map_err(wit_error)
    }

    async fn evaluate(
        &mut self,
        tab: Option<String>,
        expression: String,
        timeout_ms: u32,
    ) -> BrowserResult<String> {
        self.services
            .browser
            .evaluate(tab.as_deref(), &expression, timeout_ms)
            .await
            .map(|v| v.to_string())
            .map_err(wit_error)
    }

    async fn screenshot(
        &mut self,
        tab: Option<String>,
        full_page: bool,
        format: String,
        quality: Option<u8>,
        clip: Option<browser::Rect>,
    ) -> BrowserResult<Vec<u8>> {
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
                tab.as_deref(),
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
    ) -> BrowserResult<()> {
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
        self.services
            .browser
            .input(tab.as_deref(), &events)
            .await
            .map_err(wit_error)
    }

    async fn page_op(
        &mut self,
        tab: Option<String>,
        op: String,
        args: String,
        timeout_ms: u32,
    ) -> BrowserResult<String> {
        let args: serde_json::Value = serde_json::from_str(&args).map_err(|e| {
            wit_error(crate::ToolError::invalid_argument(
                "args",
                format!("page-op arguments are not JSON: {e}"),
            ))
        })?;
        // Batch visits and pauses are long by design and bounded on their own:
        // their time extends the call's wall-clock backstop, like nested calls.
        let long = matches!(op.as_str(), "visit_batch" | "sleep");
        let started = std::time::Instant::now();
        let out = self
            .services
            .browser
            .page_op(tab.as_deref(), &op, args, timeout_ms)
            .await;
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
    ) -> BrowserResult<Vec<String>> {
        self.services
            .browser
            .set_files(tab.as_deref(), &target, &paths)
            .await
            .map_err(wit_error)
    }
}

impl cdp::Host for CallState {
    async fn send(
        &mut self,
        tab: Option<String>,
        method: String,
        params: String,
    ) -> BrowserResult<String> {
        let domain = method.split_once('.').map(|(d, _)| d).unwrap_or("");
        if domain.is_empty() || method.split_once('.').is_none_or(|(_, c)| c.is_empty()) {
            return Err(wit_error(crate::ToolError::invalid_argument(
                "method",
                format!("CDP method {method:?} is not `Domain.command`"),
            )));
        }
        if !self.services.cdp_domains.contains(domain) {
            let declared: Vec<&str> = self
                .services
                .cdp_domains
                .iter()
                .map(String::as_str)
                .collect();
            return Err(wit_error(
                crate::ToolError::new(
                    crate::browser::codes::PERMISSION_DENIED,
                    format!(
                        "plugin {} may not use the CDP domain {domain} (it declared: {})",
                        self.services.name,
                        if declared.is_empty() {
                            "none".to_owned()
                        } else {
                            declared.join(", ")
                        }
                    ),
                )
                .with("domain", domain),
            ));
        }
        let params: serde_json::Value = if params.trim().is_empty() {
            serde_json::json!({})
        } else {
            serde_json::from_str(&params).map_err(|e| {
                wit_error(crate::ToolError::invalid_argument(
                    "params",
                    format!("CDP params are not JSON: {e}"),
                ))
            })?
        };
        self.services
            .browser
            .cdp_send(tab.as_deref(), &method, params)
            .await
            .map(|v| v.to_string())
            .map_err(wit_error)
    }
}

impl CallState {
    fn host(&self) -> Result<crate::Host, bindings::ochre::plugin::types::ToolError> {
        self.services.host.get().ok_or_else(|| {
            wit_error(crate::ToolError::new(
                crate::error::codes::PLUGIN_FAILED,
                "the host is shutting down",
            ))
        })
    }
}

fn meta_json(m: &crate::recording::RecordingMeta) -> String {
    serde_json::to_string(m).unwrap_or_else(|_| "{}".into())
}

impl recorder::Host for CallState {
    async fn start(
        &mut self,
        label: Option<String>,
        capture_screenshots: bool,
    ) -> BrowserResult<String> {
        let host = self.host()?;
        host.recorder()
            .start(label, capture_screenshots, host.session_id())
            .map(|m| meta_json(&m))
            .map_err(wit_error)
    }

    async fn stop(&mut self) -> BrowserResult<String> {
        let host = self.host()?;
        host.recorder()
            .stop()
            .map(|m| meta_json(&m))
            .map_err(wit_error)
    }

    async fn active(&mut self) -> Option<String> {
        let host = self.host().ok()?;
        host.recorder().active().map(|m| meta_json(&m))
    }

    async fn recent(&mut self, limit: u32) -> String {
        let Ok(host) = self.host() else {
            return "[]".into();
        };
        serde_json::to_string(&host.recorder().list(limit as usize)).unwrap_or_else(|_| "[]".into())
    }

    async fn load(&mut self, id: String) -> BrowserResult<String> {
        let host = self.host()?;
        host.recorder()
            .load(&id)
            .map(|v| v.to_string())
            .map_err(wit_error)
    }

    async fn screenshot(&mut self, id: String, file: String) -> BrowserResult<Vec<u8>> {
        let host = self.host()?;
        host.recorder().screenshot(&id, &file).map_err(wit_error)
    }

    async fn save_export(
        &mut self,
        id: String,
        file_name: String,
        data: Vec<u8>,
    ) -> BrowserResult<String> {
        let host = self.host()?;
        host.recorder()
            .save_export(&id, &file_name, &data)
            .map(|p| p.display().to_string())
            .map_err(wit_error)
    }
}

type BoxedCall = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<crate::ToolOutput, crate::ToolError>> + Send>,
>;

impl tools::Host for CallState {
    async fn call(
        &mut self,
        name: String,
        args: String,
    ) -> Result<bindings::ochre::plugin::types::ToolOutput, bindings::ochre::plugin::types::ToolError>
    {
        use bindings::ochre::plugin::types as t;
        let host = self.host()?;
        if self.depth >= super::MAX_CALL_DEPTH {
            return Err(wit_error(crate::ToolError::new(
                crate::browser::codes::PERMISSION_DENIED,
                format!(
                    "tool calls may nest at most {} deep; {name} was not called",
                    super::MAX_CALL_DEPTH
                ),
            )));
        }
        if host
            .tools()
            .iter()
            .any(|t| t.name == name && t.plugin == self.services.name)
        {
            return Err(wit_error(crate::ToolError::new(
                crate::browser::codes::PERMISSION_DENIED,
                format!(
                    "plugin {} cannot call its own tool {name} through the host",
                    self.services.name
                ),
            )));
        }
        let args: serde_json::Value = if args.trim().is_empty() {
            serde_json::json!({})
        } else {
            serde_json::from_str(&args).map_err(|e| {
                wit_error(crate::ToolError::invalid_argument(
                    "args",
                    format!("arguments of {name} are not JSON: {e}"),
                ))
            })?
        };
        let options = crate::CallOptions::nested(self.depth + 1);
        let started = std::time::Instant::now();
        // Boxed: this call re-enters the pipeline, which may call a plugin again.
        let fut: BoxedCall = Box::pin(async move { host.call_tool(&name, args, options).await });
        let out = fut.await;
        self.nested_ms.fetch_add(
            started.elapsed().as_millis() as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        let out = out.map_err(wit_error)?;
        Ok(t::ToolOutput {
            content: out
                .content
                .into_iter()
                .map(|c| match c {
                    crate::Content::Text(s) => t::Content::Text(s),
                    crate::Content::Image { data, mime_type } => {
                        t::Content::Image(t::Image { data, mime_type })
                    }
                })
                .collect(),
            structured: out.structured.map(|v| v.to_string()),
            summary: Some(out.summary),
        })
    }
}
