//! Visiting many pages at once (`page-op` `visit_batch`, for the `crawl` group).
//!
//! Two ways, chosen per page (`render`: `auto`, the default, or `always`):
//! - **static**: one worker tab per origin fetches the pages' HTML in parallel
//!   (`fetch`, with the browser's cookies) and reads it with `DOMParser`: no
//!   rendering, no scripts, no subresources. Used when no script must run and the
//!   page does not need JavaScript (a page whose static text is tiny but that has
//!   scripts, or that cannot be fetched, is rendered instead).
//! - **rendered**: up to `concurrency` worker tabs load the pages for real and
//!   read them (and run `script`).
//!
//! Either way the result per page is status, title, links and the content as
//! markdown, text, a structured outline or raw text. Worker tabs are the host's
//! own (never the agent's) and are closed even when the call is cancelled.
//! Plugins are single-threaded; this is where crawl parallelism lives. With a
//! pool of browsers, worker tabs and an origin's static fetches spread over
//! every browser that is up, and the pages of a browser that dies during the
//! call are read again on the others.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Page;
use ochre_protocol::page_ops::{self as typed, PageVisited};
use serde_json::json;

use super::library::page_library;
use super::{BrowserManager, Load, bounded, cdp_error};
use ochre_protocol::ToolError;
use ochre_protocol::lock;

/// Most URLs in one batch.
pub const MAX_BATCH: usize = 64;
/// Most worker tabs.
pub const MAX_CONCURRENCY: usize = 8;

/// Closes the worker tabs (each with its browser's index) when dropped (a
/// cancelled call included).
struct Workers(Vec<(usize, Page)>);

impl Drop for Workers {
    fn drop(&mut self) {
        let pages = std::mem::take(&mut self.0);
        if pages.is_empty() {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                for (_, p) in pages {
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
            "{{ const c = {lib}.run({{op: 'snapshot', args: {{mode: {m}, max_chars: {max_chars}}}, base: 1, expect: {{}}, raw: true}}); out.content = c.text; if (c.truncated) out.truncated = true; }}",
            lib = page_library(),
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
    let next = ochre_protocol::scripts::NEXT_LINK;
    format!(
        "(async () => {{ const out = {{url: location.href, title: document.title, \
         status: ((performance.getEntriesByType('navigation')[0] || {{}}).responseStatus) || 0, \
         links: [...new Set(Array.from(document.querySelectorAll('a[href]'), (a) => a.href.split('#')[0]).filter((h) => /^https?:/.test(h)))].slice(0, 2000), \
         next: {next}(document)}}; \
         {content} {script} return out; }})()"
    )
}

/// The arguments of `visit_batch`, checked.
struct Batch<'a> {
    urls: Vec<String>,
    concurrency: usize,
    format: &'a str,
    max_chars: u64,
    timeout_ms: u64,
    script: Option<&'a str>,
    render: &'a str,
}

impl<'a> Batch<'a> {
    fn parse(args: &'a typed::VisitBatch) -> Result<Self, ToolError> {
        let urls = args.urls.clone();
        if urls.is_empty() || urls.len() > MAX_BATCH {
            return Err(bad("urls", format!("visit_batch takes 1 to {MAX_BATCH} URLs")));
        }
        if let Some(u) =
            urls.iter().find(|u| !(u.starts_with("http://") || u.starts_with("https://")))
        {
            return Err(bad("urls", format!("{u:?} is not an http(s) URL")));
        }
        let concurrency =
            (args.concurrency.unwrap_or(4) as usize).clamp(1, MAX_CONCURRENCY).min(urls.len());
        let format = args.format.as_deref().unwrap_or("markdown");
        if !matches!(format, "markdown" | "text" | "structured" | "raw" | "none") {
            return Err(bad("format", "format must be markdown, text, structured, raw or none"));
        }
        let max_chars = args.max_chars.unwrap_or(20_000).clamp(100, 2_000_000);
        let timeout_ms = args.timeout_ms.unwrap_or(15_000).clamp(1_000, 120_000);
        let script = args.script.as_deref();
        let render = args.render.as_deref().unwrap_or("auto");
        if !matches!(render, "auto" | "always") {
            return Err(bad("render", "render must be auto or always"));
        }
        Ok(Batch { urls, concurrency, format, max_chars, timeout_ms, script, render })
    }
}

impl BrowserManager {
    /// Run `visit_batch` (see the module docs).
    pub(super) async fn visit_batch(
        &self,
        args: &typed::VisitBatch,
    ) -> Result<typed::Visited, ToolError> {
        let b = Batch::parse(args)?;
        let (urls, format, max_chars, timeout_ms) = (&b.urls, b.format, b.max_chars, b.timeout_ms);
        let mut results = vec![PageVisited::default(); urls.len()];
        let to_render = if b.render == "auto" && b.script.is_none() && format != "structured" {
            self.fetch_static_first(&b, &mut results).await
        } else {
            (0..urls.len()).collect()
        };
        if to_render.is_empty() {
            return Ok(typed::Visited { results });
        }
        let concurrency = b.concurrency.min(to_render.len());
        let reader = Arc::new(reader(format, max_chars, b.script));
        let queue: Arc<Mutex<VecDeque<(usize, String)>>> =
            Arc::new(Mutex::new(to_render.iter().map(|i| (*i, urls[*i].clone())).collect()));
        let results: Arc<Mutex<Vec<PageVisited>>> = Arc::new(Mutex::new(results));
        // A round ends when the queue is empty or every worker's browser died;
        // then the pages left go to new workers on the browsers still up.
        for round in 0..3 {
            let left = lock(&queue).len();
            if left == 0 {
                break;
            }
            let workers = match self.worker_tabs(concurrency.min(left)).await {
                Ok(w) => w,
                Err(e) if round == 0 => return Err(e),
                Err(_) => break,
            };
            let runs = workers.0.iter().map(|(slot, page)| {
                let (queue, results, reader) = (queue.clone(), results.clone(), reader.clone());
                async move {
                    loop {
                        let next = lock(&queue).pop_front();
                        let Some((i, url)) = next else { break };
                        let r = match self.visit_one((*slot, page), &url, &reader, timeout_ms).await
                        {
                            Ok(v) => v,
                            Err(e) if self.pool_size() > 1 && self.lost(*slot, &e).await => {
                                // This browser died: another worker reads the page.
                                lock(&queue).push_front((i, url));
                                break;
                            }
                            Err(e) => PageVisited::failed(&url, e.message, e.code),
                        };
                        lock(&results)[i] = r;
                    }
                }
            });
            futures::future::join_all(runs).await;
            drop(workers);
        }
        let mut results = std::mem::take(&mut *lock(&results));
        for (i, url) in lock(&queue).drain(..) {
            let why = "every browser that could read it went away";
            results[i] = PageVisited::failed(&url, why, super::Code::BrowserUnavailable);
        }
        Ok(typed::Visited { results })
    }

    /// Whether `e`, met in browser `slot`, is that browser's connection ending
    /// (waiting a moment for the end to be noticed).
    async fn lost(&self, slot: usize, e: &ochre_protocol::ToolError) -> bool {
        let alive = || async {
            self.slot(slot)
                .session
                .lock()
                .await
                .as_ref()
                .is_some_and(|s| s.alive.load(std::sync::atomic::Ordering::Relaxed))
        };
        if super::events::connection_lost(e) || e.code == super::Code::BrowserUnavailable {
            return true;
        }
        for _ in 0..10 {
            if !alive().await {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    /// Read what can be read without rendering (each origin's pages fetched from
    /// one tab); the indexes of the pages that need a render.
    async fn fetch_static_first(&self, b: &Batch<'_>, results: &mut [PageVisited]) -> Vec<usize> {
        let (urls, format, max_chars, timeout_ms, concurrency) =
            (&b.urls, b.format, b.max_chars, b.timeout_ms, b.concurrency);
        let mut to_render = Vec::new();
        let mut by_origin: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
        for (i, u) in urls.iter().enumerate() {
            by_origin.entry(origin_of(u)).or_default().push(i);
        }
        for (origin, idxs) in by_origin {
            // The origin's pages split over the browsers up, fetched at once.
            let parts = self.up_count().min(idxs.len());
            let slots = match self.spread(parts) {
                Ok(s) => s,
                Err(_) => {
                    to_render.extend(idxs);
                    continue;
                }
            };
            let chunks: Vec<Vec<usize>> =
                (0..parts).map(|k| idxs.iter().copied().skip(k).step_by(parts).collect()).collect();
            let fetches = chunks.iter().zip(&slots).map(|(chunk, slot)| {
                let batch: Vec<String> = chunk.iter().map(|i| urls[*i].clone()).collect();
                let origin = origin.clone();
                async move {
                    let c = concurrency * 2;
                    self.fetch_static(&origin, *slot, &batch, format, max_chars, timeout_ms, c)
                        .await
                }
            });
            let fetched = futures::future::join_all(fetches).await;
            for (chunk, fetched) in chunks.into_iter().zip(fetched) {
                match fetched {
                    Ok(vals) if vals.len() == chunk.len() => {
                        for (i, f) in chunk.into_iter().zip(vals) {
                            if f.render || f.needs_render {
                                to_render.push(i);
                            } else {
                                let mut page = f.page;
                                page.mark_http_error();
                                results[i] = page;
                            }
                        }
                    }
                    Ok(_) | Err(_) => to_render.extend(chunk),
                }
            }
        }
        to_render.sort_unstable();
        to_render
    }

    /// Load and read one page in a worker tab; a load or read error as an error.
    async fn visit_one(
        &self,
        (slot, page): (usize, &Page),
        url: &str,
        reader: &str,
        timeout_ms: u64,
    ) -> Result<PageVisited, ochre_protocol::ToolError> {
        let ms = u32::try_from(timeout_ms).unwrap_or(u32::MAX);
        bounded(ms, "loading the page", async {
            let loaded = self.load(slot, page, Load::Url(url)).await;
            loaded.map_err(|e| cdp_error("cannot load", e))?;
            Ok(())
        })
        .await?;
        let v = bounded(ms, "reading the page", self.eval(page, reader, true)).await?;
        let mut read: PageVisited = serde_json::from_value(v)
            .map_err(|e| ToolError::internal(format!("the page's reading does not parse: {e}")))?;
        read.requested_url = url.to_owned();
        read.rendered = true;
        read.mark_http_error();
        Ok(read)
    }
}

impl BrowserManager {
    /// Fetch and read `urls` (all of `origin`) without rendering, from one worker
    /// tab at that origin.
    #[allow(clippy::too_many_arguments)]
    async fn fetch_static(
        &self,
        origin: &str,
        slot: usize,
        urls: &[String],
        format: &str,
        max_chars: u64,
        timeout_ms: u64,
        concurrency: usize,
    ) -> Result<Vec<Fetched>, ToolError> {
        let ms = u32::try_from(timeout_ms).unwrap_or(u32::MAX);
        let script = format!(
            "(async () => {{ const P = {lib}; const urls = {urls}; const mode = {mode}; const max = {max_chars}; \
             const out = new Array(urls.length); let next = 0; \
             const one = async (k) => {{ const u = urls[k]; \
               try {{ const r = await fetch(u, {{credentials: 'include'}}); const ct = r.headers.get('content-type') || ''; \
                 const o = {{requested_url: u, url: r.url, status: r.status, rendered: false, title: '', links: []}}; \
                 const body = await r.text(); \
                 if (mode === 'raw') o.content = body.slice(0, max); \
                 else if (/html/i.test(ct)) Object.assign(o, P.run({{op: 'extract_static', args: {{html: body, url: r.url, mode, max_chars: max}}, base: 1, expect: {{}}, raw: true}})); \
                 else if (mode !== 'none') o.content = body.slice(0, max); \
                 out[k] = o; }} \
               catch (e) {{ out[k] = {{requested_url: u, render: true, why: String((e && e.message) || e)}}; }} }}; \
             await Promise.all(Array.from({{length: Math.min({concurrency}, urls.length)}}, async () => {{ while (next < urls.length) {{ const k = next++; await one(k); }} }})); \
             return out; }})()",
            lib = page_library(),
            urls = json!(urls),
            mode = json!(format),
            concurrency = concurrency.max(1),
        );
        let total = ms.saturating_mul(u32::try_from(urls.len()).unwrap_or(64)).min(300_000);
        // The origin's fetcher tab is kept between batches; a dead one (the
        // browser was relaunched) is replaced once.
        for attempt in 0..2 {
            let page = self.fetcher(origin, slot, ms, attempt > 0).await?;
            match bounded(total, "fetching the pages", self.eval(&page, &script, true)).await {
                Ok(v) => {
                    return serde_json::from_value(v).map_err(|e| {
                        ToolError::internal(format!(
                            "the fetched pages' reading does not parse: {e}"
                        ))
                    });
                }
                Err(e) if attempt > 0 => return Err(e),
                Err(_) => {}
            }
        }
        Err(ToolError::browser_error("cannot fetch the pages"))
    }

    /// `n` new worker tabs (not the agent's), spread over the browsers up,
    /// closed when the returned guard drops. A browser that cannot open one is
    /// skipped (marked down in a pool) while another can.
    async fn worker_tabs(&self, n: usize) -> Result<Workers, ToolError> {
        self.worker_tabs_on(&self.spread(n)?).await
    }

    /// A worker tab in each browser of `slots`.
    async fn worker_tabs_on(&self, slots: &[usize]) -> Result<Workers, ToolError> {
        let who = super::owner();
        let mut workers = Workers(Vec::with_capacity(slots.len()));
        let mut failed = None;
        for &i in slots {
            let opened = async {
                let guard = self.session_at(i, false).await?;
                let (_, _, page) = self.page_for(guard, &who, "about:blank").await?;
                // A new window: the tab in front may be behind it now.
                if let Some(s) = self.slot(i).session.lock().await.as_mut() {
                    s.front = None;
                }
                Ok::<_, ToolError>(page)
            }
            .await;
            match opened {
                Ok(page) => {
                    super::events::dismiss_dialogs(&page).await;
                    workers.0.push((i, page));
                }
                Err(e) if self.pool_size() > 1 => {
                    self.mark_down(i, &e.message);
                    failed = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        match failed {
            Some(e) if workers.0.is_empty() => Err(e),
            _ => Ok(workers),
        }
    }

    /// A worker tab showing a document of `origin` (its robots.txt, or the error
    /// page if there is none): fetches from it are same-origin.
    async fn fetcher(
        &self,
        origin: &str,
        slot: usize,
        ms: u32,
        fresh: bool,
    ) -> Result<Page, ToolError> {
        let who = super::owner();
        let key = (origin.to_owned(), slot);
        let cached = self.inner.owners.write(&who, |s| {
            if fresh {
                if let Some(old) = s.fetchers.remove(&key) {
                    tokio::spawn(async move {
                        let _ = old.close().await;
                    });
                }
                None
            } else {
                s.fetchers.get(&key).cloned()
            }
        });
        if let Some(p) = cached {
            return Ok(p);
        }
        // Closed if opening the origin fails or the call is cancelled.
        let mut worker = self.worker_tabs_on(&[slot]).await?;
        bounded(ms, "opening the origin", async {
            let robots = format!("{origin}/robots.txt");
            let loaded = self.load(slot, &worker.0[0].1, Load::Url(&robots)).await;
            loaded.map_err(|e| cdp_error("cannot load", e))?;
            Ok(())
        })
        .await?;
        let (_, page) = worker.0.remove(0);
        self.inner.owners.write(&who, |s| {
            if s.fetchers.len() >= 16 {
                // Few origins per session in practice; keep the count bounded.
                for (_, p) in s.fetchers.drain() {
                    tokio::spawn(async move {
                        let _ = p.close().await;
                    });
                }
            }
            s.fetchers.insert(key, page.clone());
        });
        Ok(page)
    }
}

/// The origin of an http(s) URL as a browser reads it (the URL itself when
/// it has none: a page of its own).
fn origin_of(url: &str) -> String {
    ochre_protocol::site::Origin::parse(url).map_or_else(|_| url.to_owned(), |o| o.to_string())
}

/// A page as a static fetch read it: to be rendered instead when it could
/// not be fetched (`render`) or its text needs its scripts (`needs_render`).
#[derive(serde::Deserialize)]
struct Fetched {
    #[serde(flatten)]
    page: PageVisited,
    #[serde(default)]
    render: bool,
    #[serde(default)]
    needs_render: bool,
}

/// A pause that needs no tab (crawl politeness delays).
pub(super) async fn sleep(args: &typed::Sleep) -> typed::Slept {
    let ms = args.ms.min(60_000);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    typed::Slept { slept_ms: ms }
}
