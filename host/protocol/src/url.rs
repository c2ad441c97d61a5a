//! The one rule for URL patterns, wherever ochre takes one (`wait_for`'s
//! `url_match`, `crawl`'s `include_patterns`/`exclude_patterns` and `filter`):
//!
//! - `/body/` whose body holds a regular-expression character (`^ $ . * + ? ( )
//!   [ ] { } | \`) is that regular expression, found anywhere in the URL
//!   (`/^https:\/\/shop\./`, `/example\.com\/p\/\d+/`). A pattern that does not
//!   compile is refused before anything is done.
//! - Else a pattern with `*` is a glob: `*` is any run of characters and the
//!   whole URL must match (`*/docs/*.html`); nothing else is special (`?` is
//!   the URL's own).
//! - Else it is found as it is, anywhere in the URL (`/blog/`, `example.com`).
//!
//! Regular expressions are `regex-lite`'s: linear in the URL's length whatever
//! the pattern, so a page's URL cannot make a match run away.

/// A URL pattern, parsed once (see the module for its rule).
#[derive(Debug, Clone)]
pub enum UrlPattern {
    /// `/body/` with a regular-expression character in its body.
    Regex(regex_lite::Regex),
    /// A pattern with `*`: the whole URL matches it.
    Glob(wildmatch::WildMatchPattern<'*', '\0'>),
    /// Anything else: found anywhere in the URL.
    Substring(String),
}

/// The characters that make `/body/` a regular expression.
const REGEX_CHARS: &[char] =
    &['^', '$', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '\\'];

impl UrlPattern {
    /// Parse `pattern`; an empty one, or a regular expression that does not
    /// compile, is refused with what is wrong.
    pub fn parse(pattern: &str) -> Result<Self, String> {
        if pattern.is_empty() {
            return Err("an empty pattern matches every URL; leave it out instead".into());
        }
        if let Some(body) = pattern.strip_prefix('/').and_then(|p| p.strip_suffix('/'))
            && body.contains(REGEX_CHARS)
        {
            return regex_lite::RegexBuilder::new(body)
                .size_limit(1 << 20)
                .build()
                .map(Self::Regex)
                .map_err(|e| format!("{pattern:?} is not a regular expression: {e}"));
        }
        if pattern.contains('*') {
            return Ok(Self::Glob(wildmatch::WildMatchPattern::new(pattern)));
        }
        Ok(Self::Substring(pattern.to_owned()))
    }

    /// Whether `url` matches.
    pub fn matches(&self, url: &str) -> bool {
        match self {
            Self::Regex(re) => re.is_match(url),
            Self::Glob(g) => g.matches(url),
            Self::Substring(s) => url.contains(s.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::UrlPattern;

    fn m(pattern: &str, url: &str) -> bool {
        UrlPattern::parse(pattern).expect(pattern).matches(url)
    }

    #[test]
    fn one_rule_for_regexes_globs_and_substrings() {
        // A path between slashes is a substring, as crawl's users write it.
        assert!(m("/blog/", "http://h/blog/post-1"));
        assert!(!m("/blog/", "http://h/blogs"));
        // Regular expressions, found anywhere.
        assert!(m("/^https:/", "https://h/x"));
        assert!(!m("/^https:/", "http://h/x"));
        assert!(m("/example.com/", "http://example.com/a"));
        assert!(m(r"/\/p\/\d+$/", "http://h/p/42"));
        assert!(!m(r"/\/p\/\d+$/", "http://h/p/42x"));
        assert!(m("/done|finished/", "http://h/finished"));
        // Globs: the whole URL; `?` is literal.
        assert!(m("*/s1/*.html", "http://h/s1/p01.html"));
        assert!(!m("*/s1/*.xml", "http://h/s1/p01.html"));
        assert!(m("*/search?q=*", "http://h/search?q=1"));
        assert!(!m("*/search?q=*", "http://h/searchXq=1"));
        // Substrings.
        assert!(m("page2.html", "http://h/page2.html?x=1"));
        assert!(!m("page3", "http://h/page2.html"));
        // Refused: empty, and a regular expression that does not compile.
        assert!(UrlPattern::parse("").is_err());
        let e = UrlPattern::parse("/a(b/").expect_err("unbalanced");
        assert!(e.contains("not a regular expression"), "{e}");
        // Linear time: a pattern that backtracks exponentially elsewhere.
        let long = format!("http://h/{}!", "a".repeat(5_000));
        assert!(!m("/(a+)+$x/", &long));
    }
}
