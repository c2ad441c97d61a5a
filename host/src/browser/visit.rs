//! Visiting many pages at once (`page-op` `visit_batch`, for the `crawl` group):
//! the host opens up to `concurrency` worker tabs of its own (never the agent's
//! tabs), loads the URLs in parallel, reads each page (status, title, links, and
//! its content as markdown, text, a structured outline or raw text, and
//! optionally the value of a script), and closes the tabs, even when the call is
//! cancelled. Plugins are single-threaded; this is where crawl parallelism lives.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Page;
use serde_json::{Value, json};

use super::pageops::PAGE_JS;
use super::{BrowserManager, bounded, cdp_error};
use crate::error::ToolError;

/// Most URLs in one batch.
pub const MAX_BATCH: usize = 64;
/// Most worker tabs.
pub const MAX_CONCURRENCY: usize = 8;

/// Closes the worker tabs when dropped (a cancelled call included).
struct Workers(Vec<Page>);

impl Drop for Workers {
    fn drop(&mut self) {
        let pages = std::mem::take(&mut self.0);
        if pages.is_empty() {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                for p in pages {
                    let _ = p.close().await;
                }
            });
        }
    }
}

fn bad(field: &str, msg: impl Into<String>) -> ToolError {
    ToolError::invalid_argument(field, msg)
}

/// The script run in each page after it loads.
fn reader(format: &str, max_chars: u64, script: Option<&str>) -> String {
    let content = match format {
        "markdown" | "text" => format!(
            "{{ const c = ({PAGE_JS})({{op: 'snapshot', args: {{mode: {m}, max_chars: {max_chars}}}, base: 1, expect: {{}}, raw: true}}); out.content = c.text; if (c.truncated) out.truncated = true; }}",
            m = json!(format)
        ),
        "structured" => format!(
            "out.content = {{headings: Array.from(document.querySelectorAll('h1,h2,h3'), (h) => ({{level: Number(h.tagName[1]), text: h.innerText.trim().slice(0, 200)}})).slice(0, 100), \
             description: (document.querySelector('meta[name=description]') || {{}}).content || null, \
             text: (document.body ? document.body.innerText : '').slice(0, {max_chars})}};"
        ),
        "raw" => format!(
            "out.content = (await (await fetch(location.href)).text()).slice(0, {max_chars});"
        ),
        _ => String::new(),
    };
    let script = match script {
        Some(s) => format!(
            "try {{ out.value = await ({s})(); }} catch (e) {{ out.script_error = String((e && e.message) || e); }}"
        ),
        None => String::new(),
    };
    format!(
        "(async () => {{ const out = {{url: location.href, title: document.title, \
         status: ((performance.getEntriesByType('navigation')[0] || {{}}).responseStatus) || 0, \
         links: [...new Set(Array.from(document.querySelectorAll('a[href]'), (a) => a.href.split('#')[0]).filter((h) => /^https?:/.test(h)))].slice(0, 2000), \
         next: ((document.querySelector('a[rel~=next],link[rel~=next]') || {{}}).href) || null}}; \
         {content} {script} return out; }})()"
    )
}

impl BrowserManager {
    /// Run `visit_batch` (see the module docs).
    pub(super) async fn visit_batch(&self, args: &Value) -> Result<Value, ToolError> {
        let urls: Vec<String> = args["urls"]
            .as_array()
            .ok_or_else(|| bad("urls", "visit_batch needs `urls`, a list of http(s) URLs"))?
            .iter()
            .map(|u| u.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("urls", "every URL must be a string"))?;
        if urls.is_empty() || urls.len() > MAX_BATCH {
            return Err(bad(
                "urls",
                format!("visit_batch takes 1 to {MAX_BATCH} URLs"),
            ));
        }
        if let Some(u) = urls
            .iter()
            .find(|u| !(u.starts_with("http://") || u.starts_with("https://")))
        {
            return Err(bad("urls", format!("{u:?} is not an http(s) URL")));
        }
        let concurrency = (args["concurrency"].as_u64().unwrap_or(4) as usize)
            .clamp(1, MAX_CONCURRENCY)
            .min(urls.len());
        let format = args["format"].as_str().unwrap_or("markdown");
        if !matches!(format, "markdown" | "text" | "structured" | "raw" | "none") {
            return Err(bad(
                "format",
                "format must be markdown, text, structured, raw or none",
            ));
        }
        let max_chars = args["max_chars"]
            .as_u64()
            .unwrap_or(20_000)
            .clamp(100, 2_000_000);
        let timeout_ms = args["timeout_ms"]
            .as_u64()
            .unwrap_or(15_000)
            .clamp(1_000, 120_000);
        let script = args["script"].as_str();
        let reader = Arc::new(reader(format, max_chars, script));

        // Worker tabs, opened under the session lock, used without it.
        let workers = {
            let mut guard = self.session().await?;
            let session = guard
                .as_mut()
                .ok_or_else(|| ToolError::new(super::codes::BROWSER_UNAVAILABLE, "no browser"))?;
            let mut pages = Vec::with_capacity(concurrency);
            for _ in 0..concurrency {
                let page = session
                    .browser
                    .new_page("about:blank")
                    .await
                    .map_err(|e| cdp_error("cannot open a worker tab", e))?;
                pages.push(page);
            }
            Workers(pages)
        };
        let queue: Arc<Mutex<VecDeque<(usize, String)>>> =
            Arc::new(Mutex::new(urls.iter().cloned().enumerate().collect()));
        let results: Arc<Mutex<Vec<Value>>> = Arc::new(Mutex::new(vec![Value::Null; urls.len()]));
        let runs = workers.0.iter().map(|page| {
            let (queue, results, reader) = (queue.clone(), results.clone(), reader.clone());
            async move {
                loop {
                    let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                    let Some((i, url)) = next else { break };
                    let r = self.visit_one(page, &url, &reader, timeout_ms).await;
                    results.lock().unwrap_or_else(|p| p.into_inner())[i] = r;
                }
            }
        });
        futures::future::join_all(runs).await;
        drop(workers);
        let results = std::mem::take(&mut *results.lock().unwrap_or_else(|p| p.into_inner()));
        Ok(json!({"results": results}))
    }

    async fn visit_one(&self, page: &Page, url: &str, reader: &str, timeout_ms: u64) -> Value {
        let ms = u32::try_from(timeout_ms).unwrap_or(u32::MAX);
        let loaded = bounded(ms, "loading the page", async {
            page.goto(url)
                .await
                .map_err(|e| cdp_error("cannot load", e))?;
            Ok(())
        })
        .await;
        if let Err(e) = loaded {
            return json!({"url": url, "error": e.message, "code": e.code});
        }
        match bounded(ms, "reading the page", self.eval(page, reader, true)).await {
            Ok(mut v) => {
                v["requested_url"] = json!(url);
                let status = v["status"].as_u64().unwrap_or(0);
                if status >= 400 {
                    v["error"] = json!(format!("HTTP {status}"));
                    v["code"] = json!("HTTP_ERROR");
                }
                v
            }
            Err(e) => json!({"url": url, "error": e.message, "code": e.code}),
        }
    }
}

/// A pause that needs no tab (crawl politeness delays).
pub(super) async fn sleep(args: &Value) -> Value {
    let ms = args["ms"].as_u64().unwrap_or(0).min(60_000);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    json!({"slept_ms": ms})
}
