//! The breadth-first crawler. Its whole state serializes (crawl jobs keep it in
//! the plugin's key-value state between calls and across restarts).

use ochre_sdk::url::UrlPattern;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use ochre_sdk::browser::ops::PageVisited;
use ochre_sdk::{ToolError, browser};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::web::{self, Robots};

/// How many URLs one `visit_batch` gets for `concurrency` tabs.
pub fn batch_size(concurrency: u32) -> usize {
    (concurrency.clamp(1, 8) as usize * 6).clamp(6, 48)
}

/// Load `urls` in the host's worker tabs (rendered only when needed).
pub fn visit(
    urls: &[String],
    concurrency: u32,
    format: &str,
    max_chars: u64,
    script: Option<&str>,
) -> Result<Vec<PageVisited>, ToolError> {
    visit_with(urls, concurrency, format, max_chars, script, "auto")
}

/// [`visit`] with a `render` mode: `auto` or `always`.
pub fn visit_with(
    urls: &[String],
    concurrency: u32,
    format: &str,
    max_chars: u64,
    script: Option<&str>,
    render: &str,
) -> Result<Vec<PageVisited>, ToolError> {
    let batch = browser::ops::VisitBatch {
        urls: urls.to_vec(),
        concurrency: Some(concurrency),
        format: Some(format.to_owned()),
        max_chars: Some(max_chars.max(100)),
        timeout_ms: None,
        script: script.map(str::to_owned),
        render: Some(render.to_owned()),
    };
    Ok(browser::run(None, &batch, 0)?.results)
}

/// The robots.txt of `origin` (allow-all when there is none).
pub fn fetch_robots(origin: &str) -> Result<Robots, ToolError> {
    let r = visit(&[format!("{origin}/robots.txt")], 1, "raw", 500_000, None)?;
    Ok(match r.first() {
        Some(r) if r.ok() => {
            Robots::parse(r.content.as_ref().and_then(Value::as_str).unwrap_or(""))
        }
        _ => Robots::default(),
    })
}

/// A page as crawl results show it.
pub fn page_of(r: &PageVisited, depth: u32) -> Value {
    let url = &r.requested_url;
    let mut p = json!({
        "url": url,
        "title": r.title,
        "depth": depth,
        "status": r.status,
        "links_found": r.links.len(),
        "rendered": r.rendered,
    });
    if let Some(final_url) = &r.url
        && final_url != url
    {
        p["final_url"] = json!(final_url);
    }
    match &r.error {
        Some(e) => p["error"] = json!(e),
        None => {
            p["content"] = r.content.clone().unwrap_or(Value::Null);
            if r.truncated {
                p["truncated"] = json!(true);
            }
        }
    }
    p
}

/// What to crawl.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrawlSpec {
    pub start: String,
    pub max_depth: u32,
    pub max_pages: u32,
    pub scope: String,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub format: String,
    pub respect_robots: bool,
    pub delay_ms: u64,
    pub concurrency: u32,
    pub max_chars: u64,
    /// `auto` (render only pages that need JavaScript) or `always`.
    #[serde(default = "auto")]
    pub render: String,
}

fn auto() -> String {
    "auto".into()
}

impl CrawlSpec {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        start: String,
        max_depth: u32,
        max_pages: u32,
        scope: String,
        include: Vec<String>,
        exclude: Vec<String>,
        format: String,
        respect_robots: bool,
        delay_ms: u64,
        concurrency: u32,
        max_chars: u64,
        render: String,
    ) -> Result<Self, ToolError> {
        if web::origin(&start).is_none() {
            return Err(ToolError::invalid_argument(
                "url",
                format!("{start:?} is not an http(s) URL"),
            ));
        }
        for (field, patterns) in [("include_patterns", &include), ("exclude_patterns", &exclude)] {
            for p in patterns {
                UrlPattern::parse(p).map_err(|why| ToolError::invalid_argument(field, why))?;
            }
        }
        Ok(Self {
            start: web::normalize(&start),
            max_depth,
            max_pages,
            scope,
            include,
            exclude,
            format,
            respect_robots,
            delay_ms,
            concurrency,
            max_chars,
            render,
        })
    }
}

/// A crawl in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Crawler {
    pub spec: CrawlSpec,
    pub queue: VecDeque<(String, u32)>,
    pub seen: BTreeSet<String>,
    pub robots: BTreeMap<String, Robots>,
    /// Every URL loaded, in order.
    pub visited: Vec<String>,
    pub done: u32,
    pub failed: u32,
    pub skipped_robots: u32,
    pub max_depth_reached: u32,
    started: bool,
    /// The include and exclude patterns, compiled on first use.
    #[serde(skip)]
    patterns: std::sync::OnceLock<(Vec<UrlPattern>, Vec<UrlPattern>)>,
    /// The scope from the start, read on first use.
    #[serde(skip)]
    scope: std::sync::OnceLock<web::Scope>,
}

impl Crawler {
    pub fn new(spec: CrawlSpec) -> Self {
        let start = spec.start.clone();
        Self {
            spec,
            queue: VecDeque::from([(start.clone(), 0)]),
            seen: BTreeSet::from([start]),
            robots: BTreeMap::new(),
            visited: Vec::new(),
            done: 0,
            failed: 0,
            skipped_robots: 0,
            max_depth_reached: 0,
            started: false,
            patterns: Default::default(),
            scope: Default::default(),
        }
    }

    pub fn finished(&self) -> bool {
        self.queue.is_empty() || self.done + self.failed >= self.spec.max_pages
    }

    fn in_scope(&self, url: &str) -> bool {
        let scope = self.scope.get_or_init(|| web::Scope::new(&self.spec.scope, &self.spec.start));
        let ok = scope.contains(url);
        let (include, exclude) = self.patterns.get_or_init(|| {
            // Checked when the crawl began (a job saved by an older version
            // may hold one that no longer parses: it is then found as it is).
            let compile = |ps: &[String]| -> Vec<UrlPattern> {
                ps.iter()
                    .map(|p| UrlPattern::parse(p).unwrap_or(UrlPattern::Substring(p.clone())))
                    .collect()
            };
            (compile(&self.spec.include), compile(&self.spec.exclude))
        });
        ok && (include.is_empty() || include.iter().any(|p| p.matches(url)))
            && !exclude.iter().any(|p| p.matches(url))
    }

    fn robots_allow(&mut self, url: &str) -> Result<bool, ToolError> {
        if !self.spec.respect_robots {
            return Ok(true);
        }
        let Some(origin) = web::origin(url) else {
            return Ok(false);
        };
        if !self.robots.contains_key(&origin) {
            let r = fetch_robots(&origin)?;
            self.robots.insert(origin.clone(), r);
        }
        Ok(self.robots[&origin].allowed(&web::path_of(url)))
    }

    /// Crawl up to `budget` more pages; the pages.
    pub fn step(&mut self, budget: u32) -> Result<Vec<Value>, ToolError> {
        if !self.started {
            self.started = true;
            let start = self.spec.start.clone();
            if !self.robots_allow(&start)? {
                self.queue.clear();
                self.skipped_robots += 1;
            }
        }
        let mut pages = Vec::new();
        while (pages.len() as u32) < budget && !self.finished() {
            let room = (budget - pages.len() as u32)
                .min(self.spec.max_pages - (self.done + self.failed))
                as usize;
            let n = room.min(batch_size(self.spec.concurrency));
            let batch: Vec<(String, u32)> = (0..n).filter_map(|_| self.queue.pop_front()).collect();
            let urls: Vec<String> = batch.iter().map(|(u, _)| u.clone()).collect();
            let results = visit_with(
                &urls,
                self.spec.concurrency,
                &self.spec.format,
                self.spec.max_chars,
                None,
                &self.spec.render,
            )?;
            for ((url, depth), r) in batch.iter().zip(&results) {
                self.visited.push(url.clone());
                let page = page_of(r, *depth);
                if !r.ok() {
                    self.failed += 1;
                } else {
                    self.done += 1;
                    self.max_depth_reached = self.max_depth_reached.max(*depth);
                    if let Some(f) = &r.url {
                        self.seen.insert(web::normalize(f));
                    }
                    if *depth < self.spec.max_depth {
                        for link in &r.links {
                            let link = web::normalize(link);
                            if self.seen.contains(&link) || !self.in_scope(&link) {
                                continue;
                            }
                            self.seen.insert(link.clone());
                            if self.robots_allow(&link)? {
                                self.queue.push_back((link, depth + 1));
                            } else {
                                self.skipped_robots += 1;
                            }
                        }
                    }
                }
                pages.push(page);
            }
            ochre_sdk::progress::report(
                f64::from(self.done + self.failed),
                Some(f64::from(self.spec.max_pages)),
                Some(&format!("{} pages crawled", self.done + self.failed)),
            );
            if self.spec.delay_ms > 0 && !self.finished() {
                browser::run(None, &browser::ops::Sleep { ms: self.spec.delay_ms }, 0)?;
            }
        }
        Ok(pages)
    }

    pub fn summary(&self, duration_ms: u64) -> Value {
        json!({
            "total_pages": self.done + self.failed,
            "succeeded": self.done,
            "failed": self.failed,
            "max_depth_reached": self.max_depth_reached,
            "skipped_robots": self.skipped_robots,
            "queued": self.queue.len(),
            "duration_ms": duration_ms,
        })
    }
}
