//! ochre's `crawl` tool group: breadth-first crawls (`crawl`), sitemaps
//! (`crawl_sitemap`), resumable crawl jobs (`crawl_start`, `crawl_status`,
//! `crawl_cancel`), a script across many pages (`batch_execute`) and "next" link
//! pagination (`batch_paginate`). Pages load in parallel in the host's worker tabs
//! (the `visit_batch` page-op); this plugin decides what to visit: scope,
//! include/exclude globs, robots.txt, depth and page budgets.

mod engine;
mod web;

use engine::{CrawlSpec, Crawler, visit};
use ochre_sdk::url::UrlPattern;
use ochre_sdk::{Output, ToolError, browser, clock, kv};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// `crawl` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CrawlArgs {
    /// Start URL (http or https).
    #[schemars(length(min = 1, max = 4096))]
    url: String,
    /// Link depth from the start page (default 2).
    #[schemars(range(max = 10))]
    max_depth: Option<u32>,
    /// Default 50.
    #[schemars(range(min = 1, max = 1000))]
    max_pages: Option<u32>,
    /// same-origin (default), same-domain (with subdomains), any.
    #[schemars(regex(pattern = r"^(same-origin|same-domain|any)$"))]
    scope: Option<String>,
    /// Only URLs matching one (substring, * glob, /regex/).
    #[schemars(length(max = 50))]
    include_patterns: Option<Vec<String>>,
    /// Never URLs matching one.
    #[schemars(length(max = 50))]
    exclude_patterns: Option<Vec<String>>,
    /// markdown (default), text, structured.
    #[schemars(regex(pattern = r"^(markdown|text|structured)$"))]
    output_format: Option<String>,
    /// Honour robots.txt (default true).
    respect_robots: Option<bool>,
    /// Pause between batches.
    #[schemars(range(max = 10000))]
    delay_ms: Option<u64>,
    /// Parallel tabs (default 4).
    #[schemars(range(min = 1, max = 8))]
    concurrency: Option<u32>,
    /// Characters kept per page (default 20000).
    #[schemars(range(min = 100, max = 1000000))]
    max_chars: Option<u64>,
    /// auto (default: when a page needs JavaScript), always.
    #[schemars(regex(pattern = r"^(auto|always)$"))]
    render: Option<String>,
    /// A bulk progress contract to record each page in.
    #[schemars(length(max = 64))]
    #[serde(rename = "contract_id")]
    _contract_id: Option<String>,
}

impl CrawlArgs {
    fn spec(self) -> Result<CrawlSpec, ToolError> {
        CrawlSpec::new(
            self.url,
            self.max_depth.unwrap_or(2),
            self.max_pages.unwrap_or(50),
            self.scope.unwrap_or_else(|| "same-origin".into()),
            self.include_patterns.unwrap_or_default(),
            self.exclude_patterns.unwrap_or_default(),
            self.output_format.unwrap_or_else(|| "markdown".into()),
            self.respect_robots.unwrap_or(true),
            self.delay_ms.unwrap_or(0),
            self.concurrency.unwrap_or(4),
            self.max_chars.unwrap_or(20_000),
            self.render.unwrap_or_else(|| "auto".into()),
        )
    }
}

/// Crawl a site breadth-first from a URL (same origin by default, robots.txt honoured,
/// several tabs in parallel); returns each page's content and a summary.
#[ochre_sdk::tool(name = "crawl", read_only, open_world, tier = 2, output_mode, scope = NetworkAdjacent)]
fn crawl(a: CrawlArgs) -> Result<Output, ToolError> {
    let started = clock::now_ms();
    let mut c = Crawler::new(a.spec()?);
    let budget = c.spec.max_pages;
    let pages = c.step(budget)?;
    let summary = c.summary(clock::now_ms().saturating_sub(started));
    let line = format!(
        "crawled {} pages ({} failed), depth {}",
        summary["total_pages"], summary["failed"], summary["max_depth_reached"]
    );
    Ok(Output::json(&json!({"summary": summary, "pages": pages}))?.with_summary(line))
}

/// `crawl_sitemap` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SitemapArgs {
    /// The site (its robots.txt `Sitemap:` lines or /sitemap.xml are used).
    #[schemars(length(min = 1, max = 4096))]
    url: String,
    /// Use this sitemap instead.
    #[schemars(length(min = 1, max = 4096))]
    sitemap_url: Option<String>,
    /// Only URLs matching this (a substring, a `*` glob or a `/regex/`).
    #[schemars(length(min = 1, max = 500))]
    filter: Option<String>,
    /// Default 100.
    #[schemars(range(min = 1, max = 1000))]
    max_pages: Option<u32>,
    /// Parallel tabs (default 4).
    #[schemars(range(min = 1, max = 8))]
    concurrency: Option<u32>,
    /// `markdown` (default), `text` or `structured`.
    #[schemars(regex(pattern = r"^(markdown|text|structured)$"))]
    output_format: Option<String>,
}

/// Read a site's sitemap (robots.txt Sitemap:, else /sitemap.xml; indexes followed) and
/// load its pages in parallel.
#[ochre_sdk::tool(name = "crawl_sitemap", read_only, open_world, tier = 2, output_mode, scope = NetworkAdjacent)]
fn crawl_sitemap(a: SitemapArgs) -> Result<Output, ToolError> {
    let started = clock::now_ms();
    let filter = a.filter.as_deref().map(UrlPattern::parse).transpose();
    let filter = filter.map_err(|why| ToolError::invalid_argument("filter", why))?;
    let origin = web::origin(&a.url)
        .ok_or_else(|| ToolError::invalid_argument("url", "url must be an http(s) URL"))?;
    let roots = match &a.sitemap_url {
        Some(s) => {
            web::origin(s).ok_or_else(|| {
                ToolError::invalid_argument("sitemap_url", "sitemap_url must be an http(s) URL")
            })?;
            vec![s.clone()]
        }
        None => {
            let robots = engine::fetch_robots(&origin)?;
            if robots.sitemaps.is_empty() {
                vec![format!("{origin}/sitemap.xml")]
            } else {
                robots.sitemaps
            }
        }
    };
    let max = a.max_pages.unwrap_or(100) as usize;
    let mut sitemaps_read = Vec::new();
    let mut urls: Vec<String> = Vec::new();
    // Two levels: a sitemap index and the sitemaps it names.
    let mut level = roots;
    for _ in 0..2 {
        let mut next = Vec::new();
        for sm in level.into_iter().take(50) {
            let Some(r) = visit(std::slice::from_ref(&sm), 1, "raw", 5_000_000, None)?.pop() else {
                continue;
            };
            if !r.ok() {
                continue;
            }
            sitemaps_read.push(sm);
            let text = r.content.as_ref().and_then(Value::as_str).unwrap_or("");
            let (locs, index) = web::sitemap_locs(text);
            if index {
                next.extend(locs);
            } else {
                urls.extend(locs);
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    if sitemaps_read.is_empty() {
        return Err(ToolError::sitemap_not_found(format!(
            "no sitemap found for {origin} (robots.txt Sitemap: lines, /sitemap.xml)"
        )));
    }
    let found = urls.len();
    let mut seen = std::collections::BTreeSet::new();
    urls.retain(|u| {
        web::origin(u).is_some()
            && filter.as_ref().is_none_or(|f| f.matches(u))
            && seen.insert(web::normalize(u))
    });
    urls.truncate(max);
    let format = a.output_format.as_deref().unwrap_or("markdown");
    let concurrency = a.concurrency.unwrap_or(4);
    let mut pages = Vec::with_capacity(urls.len());
    let (mut ok, mut failed) = (0, 0);
    for chunk in urls.chunks(engine::batch_size(concurrency)) {
        for r in visit(chunk, concurrency, format, 20_000, None)? {
            let p = engine::page_of(&r, 0);
            if !r.ok() {
                failed += 1;
            } else {
                ok += 1;
            }
            pages.push(p);
        }
        ochre_sdk::progress::report(
            pages.len() as f64,
            Some(urls.len() as f64),
            Some(&format!("{} of {} sitemap pages", pages.len(), urls.len())),
        );
    }
    let summary = json!({
        "sitemaps": sitemaps_read,
        "urls_found": found,
        "total_pages": pages.len(),
        "succeeded": ok,
        "failed": failed,
        "duration_ms": clock::now_ms().saturating_sub(started),
    });
    let line = format!("{} sitemap pages ({failed} failed) of {found} URLs", pages.len());
    Ok(Output::json(&json!({"summary": summary, "pages": pages}))?.with_summary(line))
}

const JOB_PREFIX: &str = "job:";

fn load_job(id: &str) -> Result<(Value, Crawler), ToolError> {
    let bad =
        || ToolError::job_not_found(format!("no crawl job {id:?}; crawl_start returns job ids"));
    if !id.starts_with("cj-") || id.len() > 40 {
        return Err(bad());
    }
    let text = kv::get(&format!("{JOB_PREFIX}{id}")).ok_or_else(bad)?;
    let v: Value = serde_json::from_str(&text).map_err(|_| bad())?;
    let crawler: Crawler = serde_json::from_value(v["crawler"].clone()).map_err(|_| bad())?;
    Ok((v["meta"].clone(), crawler))
}

fn save_job(id: &str, meta: &Value, crawler: &Crawler) -> Result<(), ToolError> {
    let v = json!({"meta": meta, "crawler": crawler});
    kv::set(&format!("{JOB_PREFIX}{id}"), &v.to_string())
        .map_err(|e| ToolError::state_write_failed(format!("cannot save crawl job {id}: {e}")))
}

/// Create a resumable crawl job (nothing is fetched yet); advance it with crawl_status.
/// Jobs survive restarts.
#[ochre_sdk::tool(name = "crawl_start", tier = 2, scope = Local)]
fn crawl_start(a: CrawlArgs) -> Result<Output, ToolError> {
    let crawler = Crawler::new(a.spec()?);
    let now = clock::now_ms();
    let n = kv::keys().iter().filter(|k| k.starts_with(JOB_PREFIX)).count();
    let id = format!("cj-{now}-{n}");
    let meta =
        json!({"jobId": id, "status": "running", "created_ms": now, "url": crawler.spec.start});
    save_job(&id, &meta, &crawler)?;
    Ok(Output::json(&json!({"jobId": id, "status": "running", "queued": 1}))?
        .with_summary(format!("crawl job {id}")))
}

/// `crawl_status` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StatusArgs {
    #[serde(rename = "jobId")]
    #[schemars(length(min = 1, max = 40))]
    job_id: String,
    /// Fetch up to this many more pages first (default 0: just report).
    #[schemars(range(max = 200))]
    advance: Option<u32>,
}

/// Report a crawl job, first fetching up to `advance` more pages; returns those pages.
#[ochre_sdk::tool(name = "crawl_status", tier = 2, output_mode, scope = NetworkAdjacent)]
fn crawl_status(a: StatusArgs) -> Result<Output, ToolError> {
    let (mut meta, mut crawler) = load_job(&a.job_id)?;
    let mut pages = Vec::new();
    let advance = a.advance.unwrap_or(0);
    if advance > 0 && meta["status"] == "running" {
        // Saved after every batch: a restart resumes without refetching.
        let mut left = advance;
        while left > 0 && !crawler.finished() {
            let got =
                crawler.step(left.min(engine::batch_size(crawler.spec.concurrency) as u32))?;
            left = left.saturating_sub(got.len().max(1) as u32);
            pages.extend(got);
            if crawler.finished() {
                meta["status"] = json!("done");
            }
            save_job(&a.job_id, &meta, &crawler)?;
        }
    }
    if crawler.finished() && meta["status"] == "running" {
        meta["status"] = json!("done");
        save_job(&a.job_id, &meta, &crawler)?;
    }
    let out = json!({
        "jobId": a.job_id,
        "status": meta["status"],
        "summary": crawler.summary(0),
        "visited": crawler.visited,
        "pages": pages,
    });
    let line = format!(
        "job {} {}: {} pages, {} queued",
        a.job_id,
        meta["status"].as_str().unwrap_or("?"),
        crawler.done + crawler.failed,
        crawler.queue.len()
    );
    Ok(Output::json(&out)?.with_summary(line))
}

/// `crawl_cancel` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CancelArgs {
    #[serde(rename = "jobId")]
    #[schemars(length(min = 1, max = 40))]
    job_id: String,
}

/// Cancel a crawl job; what it fetched stays readable with crawl_status.
#[ochre_sdk::tool(name = "crawl_cancel", tier = 2, scope = Local)]
fn crawl_cancel(a: CancelArgs) -> Result<Output, ToolError> {
    let (mut meta, crawler) = load_job(&a.job_id)?;
    if meta["status"] == "running" {
        meta["status"] = json!("cancelled");
        save_job(&a.job_id, &meta, &crawler)?;
    }
    Ok(Output::json(&json!({"jobId": a.job_id, "status": meta["status"]}))?.with_summary(format!(
        "job {} {}",
        a.job_id,
        meta["status"].as_str().unwrap_or("?")
    )))
}

/// `batch_execute` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct BatchArgs {
    /// Pages to load (in worker tabs).
    #[schemars(length(min = 1, max = 500))]
    urls: Option<Vec<String>>,
    /// Or open tabs to run in.
    #[schemars(length(min = 1, max = 50))]
    tab_ids: Option<Vec<String>>,
    /// A JS function, e.g. `() => document.title`; its (awaited) value per page.
    #[schemars(length(min = 1, max = 100000))]
    script: String,
    /// Parallel tabs for urls (default 4).
    #[schemars(range(min = 1, max = 8))]
    concurrency: Option<u32>,
}

/// Run a JS function on many pages (URLs loaded in parallel tabs, or open tabs);
/// returns each page's value.
#[ochre_sdk::tool(name = "batch_execute", open_world, tier = 2, output_mode, scope = Browser)]
fn batch_execute(a: BatchArgs) -> Result<Output, ToolError> {
    let mut results = Vec::new();
    match (&a.urls, &a.tab_ids) {
        (Some(urls), None) => {
            let concurrency = a.concurrency.unwrap_or(4);
            for chunk in urls.chunks(engine::batch_size(concurrency)) {
                for r in visit(chunk, concurrency, "none", 0, Some(&a.script))? {
                    let mut o = json!({"url": r.requested_url});
                    match r.error.as_ref().or(r.script_error.as_ref()) {
                        Some(e) => o["error"] = json!(e),
                        None => o["value"] = r.value.clone().unwrap_or(Value::Null),
                    }
                    results.push(o);
                }
            }
        }
        (None, Some(tabs)) => {
            let expr = format!("(async () => ({})())()", a.script);
            for t in tabs {
                let mut o = json!({"tabId": t});
                match browser::evaluate(Some(t), &expr, 30_000) {
                    Ok(v) => o["value"] = v,
                    Err(e) => o["error"] = json!(format!("{}: {}", e.code, e.message)),
                }
                results.push(o);
            }
        }
        _ => {
            return Err(ToolError::invalid_argument(
                "urls",
                "batch_execute needs `urls` or `tabIds` (one of them)",
            ));
        }
    }
    let failed = results.iter().filter(|r| r.get("error").is_some()).count();
    let line = format!("{} pages, {failed} failed", results.len());
    Ok(Output::json(
        &json!({"results": results, "succeeded": results.len() - failed, "failed": failed}),
    )?
    .with_summary(line))
}

/// `batch_paginate` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PaginateArgs {
    /// First page.
    #[schemars(length(min = 1, max = 4096))]
    url: String,
    /// The "next" link (default: rel=next, else a link saying Next).
    #[schemars(length(min = 1, max = 500))]
    next_selector: Option<String>,
    /// A JS function whose value is taken per page (default: the page's text).
    #[schemars(length(min = 1, max = 100000))]
    script: Option<String>,
    /// Default 10.
    #[schemars(range(min = 1, max = 200))]
    max_pages: Option<u32>,
}

/// Follow a list's "next" links page by page, taking a script's value (or the text)
/// from each page.
#[ochre_sdk::tool(name = "batch_paginate", read_only, open_world, tier = 2, output_mode, scope = NetworkAdjacent)]
fn batch_paginate(a: PaginateArgs) -> Result<Output, ToolError> {
    web::origin(&a.url)
        .ok_or_else(|| ToolError::invalid_argument("url", "url must be an http(s) URL"))?;
    let value =
        a.script.as_deref().map_or(
            "document.body ? document.body.innerText.slice(0, 20000) : ''".to_owned(),
            |s| format!("await ({s})()"),
        );
    let sel = serde_json::to_string(&a.next_selector).unwrap_or_else(|_| "null".into());
    let next = ochre_sdk::scripts::NEXT_LINK;
    let script = format!(
        "async () => {{ const sel = {sel}; const a = sel && document.querySelector(sel); \
         const next = sel ? (a && a.href ? a.href.split('#')[0] : null) : {next}(document); \
         return {{ value: {value}, next }}; }}"
    );
    let max = a.max_pages.unwrap_or(10);
    let mut pages = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut url = a.url.clone();
    let stopped = loop {
        if pages.len() as u32 >= max {
            break "max_pages";
        }
        if !seen.insert(url.clone()) {
            break "loop";
        }
        let Some(r) = visit(std::slice::from_ref(&url), 1, "none", 0, Some(&script))?.pop() else {
            break "error";
        };
        let n = pages.len() + 1;
        if let Some(e) = r.error.as_ref().or(r.script_error.as_ref()) {
            pages.push(json!({"page": n, "url": url, "error": e}));
            break "error";
        }
        let v = r.value.unwrap_or(Value::Null);
        pages.push(json!({"page": n, "url": url, "value": v["value"]}));
        match v["next"].as_str() {
            Some(next) if web::origin(next).is_some() => url = next.to_owned(),
            _ => break "no next link",
        }
    };
    let line = format!("{} pages, stopped: {stopped}", pages.len());
    Ok(Output::json(
        &json!({"pages": pages, "summary": {"pages": pages.len(), "stopped": stopped}}),
    )?
    .with_summary(line))
}

ochre_sdk::register_plugin! {
    name: "crawl",
    group: "crawl",
    interfaces: [browser, kv, clock, progress],
    tools: [Crawl, CrawlSitemap, CrawlStart, CrawlStatus, CrawlCancel, BatchExecute, BatchPaginate],
}
