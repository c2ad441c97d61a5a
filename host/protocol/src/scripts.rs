//! Scripts that more than one part of ochre runs in pages: the page library
//! (page.js, for fetched HTML), `visit_batch`'s worker tabs and the `crawl`
//! plugin's pagination. One text each, so that one rule holds everywhere.

/// A JavaScript function `(document) => string | null`: a page's "next" link,
/// without its fragment: `a` or `link` with `rel=next`, else a link whose words
/// are `next`, `next page`, `›` or `»` (any case).
pub const NEXT_LINK: &str = "((d) => { \
    const a = d.querySelector('a[rel~=next][href],link[rel~=next][href]') \
      || Array.from(d.querySelectorAll('a[href]')).find((x) => \
           /^\\s*(next|next page|›|»)\\s*$/i.test(x.innerText || x.textContent || '')); \
    return a && a.href ? a.href.split('#')[0] : null; })";
