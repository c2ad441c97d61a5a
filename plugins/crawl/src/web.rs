//! URLs, robots.txt, globs and sitemaps: small parsers, no network (the host's
//! `visit_batch` page-op fetches).

use ochre_sdk::site::{Host, WebUrl};

/// The origin of an absolute http(s) URL, as a browser serializes it
/// (`http://app.example:8080`).
pub fn origin(url: &str) -> Option<String> {
    WebUrl::parse(url).map(|w| w.origin.to_string())
}

/// Path and query of an absolute URL (`/` when empty).
pub fn path_of(url: &str) -> String {
    WebUrl::parse(url).map_or_else(|| "/".to_owned(), |w| w.path)
}

/// The URL as a browser serializes it, without its fragment (as written,
/// less the fragment, when it is no http(s) URL).
pub fn normalize(url: &str) -> String {
    WebUrl::parse(url).map_or_else(|| url.split('#').next().unwrap_or(url).to_owned(), |w| w.url)
}

/// A crawl's scope from its start, read once: `any`, `same-domain` (the
/// start's host less a leading `www.`, and its subdomains) or `same-origin`
/// (the default); decided on the URLs as a browser reads them. A start that
/// is no http(s) URL has nothing in a scope but `any`.
#[derive(Debug, Clone)]
pub enum Scope {
    /// Every URL.
    Any,
    /// URLs of this origin.
    SameOrigin(Option<ochre_sdk::site::Origin>),
    /// URLs of this host (less a leading `www.`) or its subdomains; an
    /// address, only itself.
    SameDomain(Option<Host>),
}

impl Scope {
    /// `scope` from `start`.
    pub fn new(scope: &str, start: &str) -> Self {
        let start = WebUrl::parse(start).map(|w| w.origin);
        match scope {
            "any" => Self::Any,
            "same-domain" => Self::SameDomain(start.map(|o| o.host)),
            _ => Self::SameOrigin(start),
        }
    }

    /// Whether `url` is in it.
    pub fn contains(&self, url: &str) -> bool {
        let url = || WebUrl::parse(url).map(|w| w.origin);
        match self {
            Self::Any => true,
            Self::SameOrigin(start) => {
                start.is_some() && url().is_some_and(|o| Some(&o) == start.as_ref())
            }
            Self::SameDomain(Some(Host::Name(a))) => url().is_some_and(|o| match &o.host {
                Host::Name(b) => {
                    let root = a.strip_prefix("www.").unwrap_or(a);
                    b == root || b.strip_suffix(root).is_some_and(|sub| sub.ends_with('.'))
                }
                _ => false,
            }),
            Self::SameDomain(Some(a)) => url().is_some_and(|o| &o.host == a),
            Self::SameDomain(None) => false,
        }
    }
}

/// The rules of a robots.txt for `*` (or `ochre`, preferred when present).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Robots {
    /// (allow, path pattern) in file order.
    pub rules: Vec<(bool, String)>,
    /// `Sitemap:` URLs.
    pub sitemaps: Vec<String>,
}

impl Robots {
    /// Parse robots.txt text.
    pub fn parse(text: &str) -> Self {
        // (user agents, rules) per group.
        type Group = (Vec<String>, Vec<(bool, String)>);
        let mut groups: Vec<Group> = Vec::new();
        let mut sitemaps = Vec::new();
        let mut in_agents = false;
        for raw in text.lines() {
            let line = raw.split('#').next().unwrap_or("").trim();
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_owned());
            match k.as_str() {
                "user-agent" => {
                    if !in_agents {
                        groups.push((Vec::new(), Vec::new()));
                    }
                    in_agents = true;
                    if let Some(g) = groups.last_mut() {
                        g.0.push(v.to_ascii_lowercase());
                    }
                }
                "allow" | "disallow" => {
                    in_agents = false;
                    if let Some(g) = groups.last_mut()
                        && !v.is_empty()
                    {
                        g.1.push((k == "allow", v));
                    }
                }
                "sitemap" => sitemaps.push(v),
                _ => in_agents = false,
            }
        }
        let pick = |name: &str| {
            groups
                .iter()
                .filter(|(agents, _)| agents.iter().any(|a| a == name))
                .flat_map(|(_, r)| r.iter().cloned())
                .collect::<Vec<_>>()
        };
        let mine = pick("ochre");
        let rules = if mine.is_empty() { pick("*") } else { mine };
        Self { rules, sitemaps }
    }

    /// Whether `path` may be fetched: the longest matching rule wins, Allow on ties.
    pub fn allowed(&self, path: &str) -> bool {
        let mut best: Option<(usize, bool)> = None;
        for (allow, pat) in &self.rules {
            if rule_matches(pat, path) {
                let len = pat.len();
                let better = match best {
                    None => true,
                    Some((l, a)) => len > l || (len == l && *allow && !a),
                };
                if better {
                    best = Some((len, *allow));
                }
            }
        }
        best.is_none_or(|(_, allow)| allow)
    }
}

fn rule_matches(pattern: &str, path: &str) -> bool {
    let (pat, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    if anchored { glob_full(pat, path) } else { glob_full(&format!("{pat}*"), path) }
}

/// Whole-string match where `*` is any run and nothing else is special
/// (robots.txt rules: `?` is literal).
fn glob_full(pattern: &str, text: &str) -> bool {
    wildmatch::WildMatchPattern::<'*', '\0'>::new(pattern).matches(text)
}

/// A sitemap's `<loc>` values, and whether it is a sitemap index.
pub fn sitemap_locs(xml: &str) -> (Vec<String>, bool) {
    let index = xml.contains("<sitemapindex");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find("<loc>") {
        let after = &rest[start + 5..];
        let Some(end) = after.find("</loc>") else {
            break;
        };
        let loc =
            after[..end].trim().replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
        if !loc.is_empty() {
            out.push(loc);
        }
        rest = &after[end + 6..];
    }
    (out, index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_scope(scope: &str, start: &str, url: &str) -> bool {
        Scope::new(scope, start).contains(url)
    }

    #[test]
    fn urls() {
        assert_eq!(
            origin("http://127.0.0.1:8080/a/b?c#d").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(origin("https://x.org").as_deref(), Some("https://x.org"));
        assert_eq!(origin("HTTP://X.ORG:80/").as_deref(), Some("http://x.org"));
        assert_eq!(origin("ftp://x"), None);
        assert_eq!(path_of("http://a.b.c:81/x/../y?q=1#f"), "/y?q=1");
        assert_eq!(normalize("http://A.example/p#frag"), "http://a.example/p");
    }

    #[test]
    fn scope_is_decided_on_urls_as_a_browser_reads_them() {
        let start = "HTTP://WWW.Shop.Example.:80/";
        assert!(in_scope("same-origin", start, "http://www.shop.example/a"));
        assert!(!in_scope("same-origin", start, "https://www.shop.example/a"));
        assert!(!in_scope("same-origin", start, "http://www.shop.example:8080/a"));
        assert!(in_scope("same-domain", start, "http://shop.example/a"));
        assert!(in_scope("same-domain", start, "https://img.shop.example/a"));
        assert!(!in_scope("same-domain", start, "http://evilshop.example/a"));
        assert!(!in_scope("same-domain", start, "http://shop.example.evil.test/a"));
        assert!(in_scope("same-origin", "http://127.0.0.1:8080/", "http://2130706433:8080/x"));
        assert!(!in_scope("same-origin", start, "javascript:alert(1)"));
        assert!(in_scope("any", start, "https://elsewhere.test/"));
    }

    #[test]
    fn robots_rules() {
        let r = Robots::parse(
            "User-agent: other\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\nAllow: /private/open\nDisallow: /*.pdf$\n# c\nSitemap: http://h/sitemap.xml\n",
        );
        assert!(r.allowed("/index.html"));
        assert!(!r.allowed("/private/x.html"));
        assert!(r.allowed("/private/open.html"));
        assert!(!r.allowed("/a/b.pdf"));
        assert!(r.allowed("/a/b.pdf?x"));
        assert_eq!(r.sitemaps, ["http://h/sitemap.xml"]);
        assert!(Robots::parse("").allowed("/anything"));
    }

    #[test]
    fn sitemaps() {
        let (locs, index) = sitemap_locs(
            "<sitemapindex><sitemap><loc> http://h/a.xml </loc></sitemap></sitemapindex>",
        );
        assert!(index);
        assert_eq!(locs, ["http://h/a.xml"]);
        let (locs, index) =
            sitemap_locs("<urlset><url><loc>http://h/?a=1&amp;b=2</loc></url></urlset>");
        assert!(!index);
        assert_eq!(locs, ["http://h/?a=1&b=2"]);
    }
}
