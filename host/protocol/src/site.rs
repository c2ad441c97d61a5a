//! Which site is this: a host as a browser parses it, and what an address is.
//!
//! One notion of a site for all of ochre: the network policy's rules, the
//! credentials' origins and the HTTP server's `Host` and `Origin` checks.
//!
//! Hosts are read by the WHATWG URL host parser (the `url` crate's, the one
//! browsers follow): IPv4 in every form a URL accepts (`2130706433`,
//! `0x7f.1`, `0177.0.0.1`, `127.1`), IPv6 with its brackets, international
//! names to punycode, upper case to lower. Two more steps make one spelling
//! of each place: a name's trailing dot goes (`example.com.` is
//! `example.com`), and an IPv4-mapped IPv6 address is its IPv4 address
//! (`[::ffff:127.0.0.2]` connects to `127.0.0.2`). Decisions are made on
//! [`Host`] and [`IpAddr`] values, never on the text as written.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A host, parsed and in its one spelling.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A domain name: lower case, punycode, no trailing dot.
    Name(String),
    /// An address (IPv4-mapped IPv6 as IPv4).
    Ip(IpAddr),
}

impl Host {
    /// Parse a host as a URL's (`app.example`, `127.1`, `[::1]` or `::1`),
    /// or say why it is not one.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text;
        let bracketed;
        let input = if t.contains(':') && !t.starts_with('[') {
            bracketed = format!("[{t}]");
            bracketed.as_str()
        } else {
            t
        };
        let bad = |why: &str| format!("{t:?} is not a host: {why}");
        match url::Host::parse(input) {
            Ok(url::Host::Domain(d)) => {
                let name = d.strip_suffix('.').unwrap_or(&d);
                if name.is_empty() || name.ends_with('.') || name.starts_with('.') {
                    return Err(bad("an empty label"));
                }
                // A name whose last label is a number is an IPv4 address or
                // nothing (the URL parser has said which).
                Ok(Self::Name(name.to_owned()))
            }
            Ok(url::Host::Ipv4(a)) => Ok(Self::Ip(IpAddr::V4(a))),
            Ok(url::Host::Ipv6(a)) => Ok(Self::Ip(canonical(IpAddr::V6(a)))),
            Err(e) => Err(bad(&e.to_string())),
        }
    }

    /// The address, when the host is one.
    pub fn ip(&self) -> Option<IpAddr> {
        match self {
            Self::Ip(a) => Some(*a),
            Self::Name(_) => None,
        }
    }
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Name(n) => f.write_str(n),
            Self::Ip(IpAddr::V4(a)) => write!(f, "{a}"),
            Self::Ip(IpAddr::V6(a)) => write!(f, "[{a}]"),
        }
    }
}

/// An origin: a scheme, a [`Host`] and a port (the scheme's default when a
/// URL leaves it out), as a browser reads it from a URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    /// `http`, `https`, `ws` or `wss`, lower case.
    pub scheme: String,
    /// Its host, in its one spelling.
    pub host: Host,
    /// Its port.
    pub port: u16,
}

impl Origin {
    /// The origin of `text`, a URL or an origin of a special scheme with a
    /// host (`http`, `https`, `ws`, `wss`), or why not.
    pub fn parse(text: &str) -> Result<Self, String> {
        let url = url::Url::parse(text.trim()).map_err(|e| not_origin(text, &e.to_string()))?;
        Self::of_url(&url, text)
    }

    /// The origin of `url`, parsed from `text`; else why not (as
    /// [`Self::parse`] says it).
    fn of_url(url: &url::Url, text: &str) -> Result<Self, String> {
        let bad = |why: &str| not_origin(text, why);
        if !matches!(url.scheme(), "http" | "https" | "ws" | "wss") {
            return Err(format!(
                "{text:?} is not an http(s) origin; an origin looks like https://app.example"
            ));
        }
        let host = Host::parse(url.host_str().ok_or_else(|| bad("no host"))?)?;
        let port = url.port_or_known_default().ok_or_else(|| bad("no port"))?;
        Ok(Self { scheme: url.scheme().to_owned(), host, port })
    }

    /// The scheme's default port.
    fn default_port(&self) -> Option<u16> {
        match self.scheme.as_str() {
            "http" | "ws" => Some(80),
            "https" | "wss" => Some(443),
            _ => None,
        }
    }
}

/// Why `text` is not an origin, for the person who wrote it.
fn not_origin(text: &str, why: &str) -> String {
    format!("{text:?} is not an origin ({why}); an origin looks like https://app.example")
}

impl std::fmt::Display for Origin {
    /// As a browser serializes it: the default port left out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        if self.default_port() != Some(self.port) {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

/// An http(s) URL as a browser reads it: the WHATWG parse, its host in its
/// one spelling, its fragment dropped (`HTTP://App.Example:80/a#b` is
/// `http://app.example/a`, of origin `http://app.example`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebUrl {
    /// Its origin.
    pub origin: Origin,
    /// The URL as a browser serializes it, without its fragment.
    pub url: String,
    /// Its path and query (`/a?b=1`; `/` at least).
    pub path: String,
}

impl WebUrl {
    /// `text` read as an absolute http(s) URL; `None` when it is not one.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let mut u = url::Url::parse(text.trim()).ok()?;
        if !matches!(u.scheme(), "http" | "https") {
            return None;
        }
        u.set_fragment(None);
        let origin = Origin::of_url(&u, text).ok()?;
        let spelled = origin.host.to_string();
        if u.host_str() != Some(spelled.as_str()) {
            u.set_host(Some(&spelled)).ok()?;
        }
        let path = match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_owned(),
        };
        Some(Self { origin, url: u.into(), path })
    }
}

/// The host and port of an HTTP `Host` header's value (`a.example:8080`,
/// `[::1]:3000`, `a.example`: port None), parsed as a URL's.
pub fn host_header(value: &str) -> Option<(Host, Option<u16>)> {
    let url = url::Url::parse(&format!("http://{value}/")).ok()?;
    if url.path() != "/" || url.query().is_some() || !url.username().is_empty() {
        return None;
    }
    let host = Host::parse(url.host_str()?).ok()?;
    Some((host, url.port()))
}

/// `url` with its host in its one spelling (a name's trailing dot dropped,
/// an IPv4-mapped IPv6 address as its IPv4), for patterns written on URLs;
/// None when nothing changes or it is no URL with a host.
pub fn canonical_url(url: &str) -> Option<String> {
    let mut u = url::Url::parse(url).ok()?;
    let host = Host::parse(u.host_str()?).ok()?;
    let spelled = host.to_string();
    if u.host_str() == Some(spelled.as_str()) {
        return None;
    }
    u.set_host(Some(&spelled)).ok()?;
    Some(u.to_string())
}

/// An address in its one form: an IPv4-mapped IPv6 address as its IPv4.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// What kind of place an address is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// `0.0.0.0/8`, `::`: "this host", which a connection reaches as loopback.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`, `100.64/10` (shared), `fc00::/7`.
    Private,
    /// `169.254/16` (the cloud metadata services among them), `fe80::/10`.
    LinkLocal,
    /// Anything else.
    Public,
}

impl Reach {
    /// Whether an address of this kind is inside the machine or its networks
    /// (what `--network-block-private` refuses).
    pub fn is_internal(self) -> bool {
        self != Self::Public
    }
}

/// The kind of place `ip` is (mapped forms as their IPv4).
pub fn reach(ip: IpAddr) -> Reach {
    match canonical(ip) {
        IpAddr::V4(a) => reach_v4(a),
        IpAddr::V6(a) => reach_v6(a),
    }
}

fn reach_v4(a: Ipv4Addr) -> Reach {
    let [x, y, ..] = a.octets();
    match (x, y) {
        (0, _) => Reach::Unspecified,
        (127, _) => Reach::Loopback,
        (10, _) | (192, 168) => Reach::Private,
        (172, 16..=31) | (100, 64..=127) => Reach::Private,
        (169, 254) => Reach::LinkLocal,
        _ => Reach::Public,
    }
}

fn reach_v6(a: Ipv6Addr) -> Reach {
    let first = a.segments()[0];
    if a.is_unspecified() {
        Reach::Unspecified
    } else if a.is_loopback() {
        Reach::Loopback
    } else if first & 0xfe00 == 0xfc00 {
        Reach::Private
    } else if first & 0xffc0 == 0xfe80 {
        Reach::LinkLocal
    } else if let Some(v4) = a.to_ipv4() {
        // IPv4-compatible (`::a.b.c.d`, deprecated) and the like: by their IPv4.
        if first == 0 && a.segments()[1..6].iter().all(|s| *s == 0) {
            reach_v4(v4)
        } else {
            Reach::Public
        }
    } else {
        Reach::Public
    }
}

/// A range of addresses: `10.0.0.0/8`, `fc00::/7`, or one address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Net {
    addr: IpAddr,
    prefix: u8,
}

impl Net {
    /// Parse `addr/prefix` (or a lone address, its whole length).
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let bad = || format!("{t:?} is not an address range (10.0.0.0/8, fc00::/7)");
        let (a, p) = match t.split_once('/') {
            Some((a, p)) => (a, Some(p.parse::<u8>().map_err(|_| bad())?)),
            None => (t, None),
        };
        let addr: IpAddr = a.trim_matches(['[', ']']).parse().map_err(|_| bad())?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = p.unwrap_or(max);
        if prefix > max {
            return Err(bad());
        }
        // A mapped range is a range of IPv4 addresses.
        match (canonical(addr), addr) {
            (IpAddr::V4(v4), IpAddr::V6(_)) if prefix >= 96 => {
                Ok(Self { addr: IpAddr::V4(v4), prefix: prefix - 96 })
            }
            _ => Ok(Self { addr, prefix }),
        }
    }

    /// Whether it holds `ip` (mapped forms as their IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.prefix)).unwrap_or(0);
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(self.prefix)).unwrap_or(0);
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Host {
        Host::Ip(s.parse().expect("an address"))
    }

    #[test]
    fn a_web_url_is_read_as_a_browser_reads_it() {
        let w = WebUrl::parse(" HTTP://App.Example.:80/a/../b?c=1#top").expect("a URL");
        assert_eq!(w.url, "http://app.example/b?c=1");
        assert_eq!(w.origin.to_string(), "http://app.example");
        assert_eq!(w.path, "/b?c=1");
        let w = WebUrl::parse("https://[::ffff:7f00:1]:8443").expect("a URL");
        assert_eq!((w.url.as_str(), w.path.as_str()), ("https://127.0.0.1:8443/", "/"));
        assert_eq!(w.origin.host, ip("127.0.0.1"));
        for not in ["ftp://x.example/", "ws://x.example/", "/relative", "javascript:alert(1)", ""] {
            assert_eq!(WebUrl::parse(not), None, "{not}");
        }
    }

    #[test]
    fn every_spelling_of_an_address_is_that_address() {
        for s in [
            "127.0.0.2",
            "2130706434",
            "0x7f000002",
            "0x7f.0.0.2",
            "0177.0.0.2",
            "127.2",
            "127.0.2",
            "[::ffff:127.0.0.2]",
            "::ffff:7f00:2",
            "[::FFFF:7F00:0002]",
        ] {
            assert_eq!(Host::parse(s), Ok(ip("127.0.0.2")), "{s}");
        }
        for s in ["0", "0.0.0.0", "0x0", "00"] {
            assert_eq!(Host::parse(s), Ok(ip("0.0.0.0")), "{s}");
        }
        assert_eq!(Host::parse("[::]"), Ok(ip("::")));
        assert_eq!(Host::parse("::1"), Ok(ip("::1")));
    }

    #[test]
    fn names_have_one_spelling() {
        for s in ["example.com", "EXAMPLE.com", "example.com.", "Example.COM."] {
            assert_eq!(Host::parse(s), Ok(Host::Name("example.com".into())), "{s}");
        }
        assert_eq!(Host::parse("bücher.example"), Ok(Host::Name("xn--bcher-kva.example".into())));
        assert_eq!(Host::parse("localhost."), Ok(Host::Name("localhost".into())));
        for bad in
            ["", ".", "a..", "exa mple.com", " example.com", "[::1", "256.0.0.1", "1.2.3.4.5"]
        {
            assert!(Host::parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn origins_are_read_as_a_browser_reads_them() {
        let o = |t: &str| Origin::parse(t).map(|o| o.to_string());
        assert_eq!(o("HTTP://App.Example:80/login?x=1").as_deref(), Ok("http://app.example"));
        assert_eq!(o("https://app.example.:8443").as_deref(), Ok("https://app.example:8443"));
        assert_eq!(o("http://[::ffff:127.0.0.1]:3000/").as_deref(), Ok("http://127.0.0.1:3000"));
        assert_eq!(o("http://2130706433").as_deref(), Ok("http://127.0.0.1"));
        assert_eq!(o("http://[::1]:80").as_deref(), Ok("http://[::1]"));
        for bad in ["ftp://a.example", "file:///etc", "app.example", "http://", "data:text/plain,x"]
        {
            assert!(Origin::parse(bad).is_err(), "{bad}");
        }
        let h = |v: &str| host_header(v);
        assert_eq!(h("LOCALHOST.:8080"), Some((Host::Name("localhost".into()), Some(8080))));
        assert_eq!(h("127.1"), Some((ip("127.0.0.1"), None)));
        assert_eq!(h("[::1]:3000"), Some((ip("::1"), Some(3000))));
        for bad in ["a.example/x", "user@a.example", "a b", "", "a.example:port"] {
            assert_eq!(h(bad), None, "{bad}");
        }
    }

    #[test]
    fn urls_get_their_hosts_one_spelling() {
        let c = |u: &str| canonical_url(u);
        assert_eq!(
            c("https://ads.example.com./x?y").as_deref(),
            Some("https://ads.example.com/x?y")
        );
        assert_eq!(c("http://[::ffff:7f00:1]:8080/").as_deref(), Some("http://127.0.0.1:8080/"));
        assert_eq!(c("https://ads.example.com/x"), None);
        assert_eq!(c("data:text/plain,x"), None);
    }

    #[test]
    fn addresses_are_classified_by_range() {
        let r = |s: &str| reach(s.parse().expect("an address"));
        for s in ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(r(s), Reach::Loopback, "{s}");
        }
        for s in ["10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "fc00::1", "fd12::1"] {
            assert_eq!(r(s), Reach::Private, "{s}");
        }
        for s in ["169.254.169.254", "fe80::1", "::ffff:169.254.169.254"] {
            assert_eq!(r(s), Reach::LinkLocal, "{s}");
        }
        for s in ["0.0.0.0", "0.1.2.3", "::"] {
            assert_eq!(r(s), Reach::Unspecified, "{s}");
        }
        for s in ["8.8.8.8", "172.32.0.1", "172.15.0.1", "192.169.0.1", "2001:db8::1", "fec0::1"] {
            assert_eq!(r(s), Reach::Public, "{s}");
        }
        assert!(Reach::Loopback.is_internal() && !Reach::Public.is_internal());
    }

    #[test]
    fn ranges_hold_their_addresses_in_every_form() {
        let n = Net::parse("10.0.0.0/8").expect("a range");
        assert!(n.contains("10.255.1.1".parse().expect("an address")));
        assert!(n.contains("::ffff:10.0.0.1".parse().expect("an address")));
        assert!(!n.contains("11.0.0.1".parse().expect("an address")));
        let one = Net::parse("127.0.0.2").expect("a range");
        assert!(one.contains("::ffff:127.0.0.2".parse().expect("an address")));
        assert!(!one.contains("127.0.0.1".parse().expect("an address")));
        let v6 = Net::parse("fc00::/7").expect("a range");
        assert!(
            v6.contains("fdff::1".parse().expect("an address"))
                && !v6.contains("fe00::1".parse().expect("an address"))
        );
        let mapped = Net::parse("::ffff:192.168.0.0/112").expect("a range");
        assert!(mapped.contains("192.168.3.4".parse().expect("an address")));
        assert!(
            Net::parse("0.0.0.0/0")
                .expect("a range")
                .contains("8.8.8.8".parse().expect("an address"))
        );
        for bad in ["10.0.0.0/33", "::/129", "10.0.0/8", "x/1", ""] {
            assert!(Net::parse(bad).is_err(), "{bad:?} parsed");
        }
    }
}
