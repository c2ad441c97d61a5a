//! The network policy: which origins a browser context may reach, enforced
//! where nothing in a page can get around it. Each policed browser context
//! is given its own proxy (Chromium's per-context `proxyServer`, loopback
//! included), served here on 127.0.0.1: every connection the context opens
//! (documents, subresources, frames of any site, popups, workers' fetches,
//! WebSockets, which Chromium tunnels with `CONNECT`) asks it first. A
//! blocked one is answered `403` and fails in the page; an allowed one is
//! passed through, directly or through the session's upstream proxy.
//!
//! What it sees: hosts and ports for `https`/`wss` (a tunnel), whole
//! requests for plain `http`. It decides on parsed hosts
//! ([`ochre_protocol::site::Host`]: every spelling of an address is that
//! address) and on the address it connects to: a name is resolved here, each
//! address checked, and only one that passed is connected to; "this host"
//! (`0.0.0.0`, `[::]`) never. WebRTC is kept to the proxy (no UDP: see
//! [`webrtc_through_proxy`]). What it does not police: what the browser does
//! outside a page's network (its own updates, DNS prefetch is off in
//! headless), and contexts it is not given (a remote browser that cannot
//! reach this machine's loopback).

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, RwLock};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use ochre_protocol::site::{Host, Net, Reach, canonical, reach};
use ochre_protocol::{ToolError, lock, read_lock, write_lock};

mod proxy;

pub use proxy::{PolicyProxy, Refused, shown, upstream_addr};

/// One rule: a host (`app.example`, `*.example.com` for it and its
/// subdomains) or addresses (`127.0.0.2`, `[::1]`, `10.0.0.0/8`), with a port
/// or any. Hosts are parsed as browsers parse them ([`Host`]): a rule on
/// `127.0.0.2` holds against `2130706434`, `[::ffff:127.0.0.2]` and every other
/// spelling, one on `example.com` against `EXAMPLE.com.`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HostRule {
    /// As given.
    pub text: String,
    target: Target,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A name, and with `wildcard` its subdomains.
    Name { name: String, wildcard: bool },
    /// Addresses: one, or a range.
    Net(Net),
}

impl TryFrom<String> for HostRule {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        Self::parse(&text)
    }
}

impl From<HostRule> for String {
    fn from(r: HostRule) -> String {
        r.text
    }
}

impl HostRule {
    /// A rule from `https://app.example` (that host and port), `app.example`
    /// or `app.example:8080` (any port, or that one), `*.example.com` (it and
    /// its subdomains), an address (`127.0.0.2`, `[::1]:8080`) or a range
    /// (`10.0.0.0/8`, `fc00::/7`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let bad = || {
            format!(
                "{t:?} is not an origin, host or address rule (https://app.example, app.example:8080, *.example.com, 10.0.0.0/8)"
            )
        };
        let rule = |target, port| Ok(Self { text: t.to_owned(), target, port });
        let target = |host: Host, wildcard: bool| match host {
            Host::Name(name) => Ok(Target::Name { name, wildcard }),
            Host::Ip(ip) if !wildcard => Ok(Target::Net(Net::parse(&ip.to_string())?)),
            Host::Ip(_) => Err(bad()),
        };
        if t.contains("://") {
            let url = url::Url::parse(t).map_err(|_| bad())?;
            let host = Host::parse(url.host_str().ok_or_else(bad)?).map_err(|_| bad())?;
            return rule(target(host, false)?, url.port_or_known_default());
        }
        if t.contains('/') {
            return rule(Target::Net(Net::parse(t)?), None);
        }
        let (wildcard, rest) = match t.strip_prefix("*.") {
            Some(r) => (true, r),
            None => (false, t),
        };
        let (host, port) = split_rule_port(rest).ok_or_else(bad)?;
        let host = Host::parse(host).map_err(|_| bad())?;
        rule(target(host, wildcard)?, port)
    }

    /// Whether it covers a connection to `host:port` that goes to `ip` (the
    /// host itself when it is an address, else one it resolves to): a name
    /// rule by the name, an address rule by the address.
    pub fn covers(&self, host: &Host, ip: Option<IpAddr>, port: u16) -> bool {
        let at = match (&self.target, host) {
            (Target::Name { name, wildcard }, Host::Name(h)) => {
                h == name
                    || (*wildcard
                        && h.strip_suffix(name.as_str()).is_some_and(|p| p.ends_with('.')))
            }
            (Target::Name { .. }, Host::Ip(_)) => false,
            (Target::Net(net), _) => ip.or(host.ip()).is_some_and(|ip| net.contains(ip)),
        };
        at && self.port.is_none_or(|p| p == port)
    }
}

/// `host` and port of a rule's `host[:port]` (`[v6]:port`, a bare IPv6 has
/// none), or None when the port does not read.
fn split_rule_port(t: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = t.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(p) => Some((h, Some(p.parse().ok()?))),
            None if after.is_empty() => Some((h, None)),
            None => None,
        };
    }
    match t.split_once(':') {
        Some((h, p)) if !p.contains(':') => Some((h, Some(p.parse().ok()?))),
        _ => Some((t, None)),
    }
}

/// Where a context may connect: nothing `blocked`; with an `allowed` list,
/// only what it covers. Blocking wins. Decided on the address a connection
/// goes to (see [`Self::allows_at`]); "this host" (`0.0.0.0`, `[::]`), which
/// reaches the machine's own servers, never.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetPolicy {
    /// Only these (empty: everything not blocked).
    #[serde(default)]
    pub allowed: Vec<HostRule>,
    /// Never these.
    #[serde(default)]
    pub blocked: Vec<HostRule>,
    /// Never an address inside the machine or its networks ([`Reach::is_internal`]:
    /// loopback, private, link-local and metadata ranges) unless an allowed
    /// rule covers the connection.
    #[serde(default)]
    pub block_private: bool,
    /// What the names of the rules resolved to when the policy was set (see
    /// [`Self::resolve_names`]): a rule on a name covers those addresses too.
    #[serde(skip)]
    pub resolved: std::collections::BTreeMap<String, Vec<IpAddr>>,
    /// Names answered from this table, not DNS (the server's
    /// `--network-resolve NAME=ADDR`, as curl's `--resolve`): the proxy
    /// connects there, and the rules judge those addresses.
    #[serde(default)]
    pub hosts: std::collections::BTreeMap<String, Vec<IpAddr>>,
}

/// How long a name's lookup may take.
const LOOKUP_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A `NAME=ADDR` entry of the hosts table, both parsed as a URL's host
/// (`intranet.test=10.0.0.5`, `v6.test=[fd00::5]`).
pub fn parse_resolve(text: &str) -> Result<(String, IpAddr), String> {
    let (name, addr) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: want NAME=ADDRESS (intranet.test=10.0.0.5)"))?;
    let name = match Host::parse(name) {
        Ok(Host::Name(n)) => n,
        _ => return Err(format!("{text:?}: {name:?} is not a host name")),
    };
    match Host::parse(addr) {
        Ok(Host::Ip(ip)) => Ok((name, ip)),
        _ => Err(format!("{text:?}: {addr:?} is not an IP address")),
    }
}

impl NetPolicy {
    /// Whether a connection to `host:port` may go to `ip` (the host itself
    /// when it is an address, else one it resolves to). `ip` None: judged by
    /// the name alone (what goes through a session's upstream proxy, which
    /// resolves it): an address rule covers nothing then.
    pub fn allows_at(&self, host: &Host, ip: Option<IpAddr>, port: u16) -> bool {
        let ip = ip.or(host.ip()).map(canonical);
        if ip.is_some_and(|ip| reach(ip) == Reach::Unspecified) {
            return false;
        }
        let hit = |r: &HostRule| r.covers(host, ip, port) || self.covers_by_address(r, ip, port);
        let allowed = self.allowed.iter().any(hit);
        if self.block_private && ip.is_some_and(|ip| reach(ip).is_internal()) && !allowed {
            return false;
        }
        !self.blocked.iter().any(hit) && (self.allowed.is_empty() || allowed)
    }

    /// Whether `host:port` is refused before it is resolved: a name rule
    /// blocks it, or it is an address the policy refuses.
    pub fn refuses_early(&self, host: &Host, port: u16) -> bool {
        match host {
            Host::Ip(ip) => !self.allows_at(host, Some(*ip), port),
            Host::Name(_) => self.blocked.iter().any(|r| r.covers(host, None, port)),
        }
    }

    /// Whether rule `r`, a name's, covers a connection to `ip:port` by what
    /// its name resolved to.
    fn covers_by_address(&self, r: &HostRule, ip: Option<IpAddr>, port: u16) -> bool {
        let Target::Name { name, wildcard: false } = &r.target else { return false };
        let at = ip.is_some_and(|ip| self.resolved.get(name).is_some_and(|a| a.contains(&ip)));
        at && r.port.is_none_or(|p| p == port)
    }

    /// Look up the names of the rules (not wildcards), at most 5 s each, all
    /// at once: a rule on `localhost` then holds against `127.0.0.1` too. A
    /// name that does not resolve covers only itself.
    pub async fn resolve_names(&mut self) {
        let names: std::collections::BTreeSet<String> = (self.allowed.iter())
            .chain(&self.blocked)
            .filter_map(|r| match &r.target {
                Target::Name { name, wildcard: false } => Some(name.clone()),
                _ => None,
            })
            .collect();
        let me = &*self;
        let lookups = names.into_iter().map(|name| async move {
            let addrs = me.lookup(&name).await;
            (name, addrs)
        });
        let resolved = futures::future::join_all(lookups).await.into_iter().collect();
        self.resolved = resolved;
    }

    /// The addresses `name` (a parsed host name) goes to: from the hosts
    /// table, else DNS (at most 5 s; none when it fails).
    pub async fn lookup(&self, name: &str) -> Vec<IpAddr> {
        if let Some(addrs) = self.hosts.get(name) {
            return addrs.clone();
        }
        match tokio::time::timeout(LOOKUP_LIMIT, tokio::net::lookup_host((name, 0))).await {
            Ok(Ok(addrs)) => addrs.map(|a| canonical(a.ip())).collect(),
            _ => Vec::new(),
        }
    }

    /// This policy with `other`'s rules added (a session's, over the server's).
    pub fn and(&self, other: &NetPolicy) -> NetPolicy {
        let mut out = self.clone();
        out.allowed.extend(other.allowed.iter().cloned());
        out.blocked.extend(other.blocked.iter().cloned());
        out.block_private |= other.block_private;
        out.resolved.extend(other.resolved.iter().map(|(k, v)| (k.clone(), v.clone())));
        out.hosts.extend(other.hosts.iter().map(|(k, v)| (k.clone(), v.clone())));
        out
    }

    /// Whether it lets everything through.
    pub fn is_open(&self) -> bool {
        self.allowed.is_empty() && self.blocked.is_empty() && !self.block_private
    }
}

/// Set Chromium's WebRTC IP handling policy to `disable_non_proxied_udp` in
/// the profile at `dir` (its `Default/Preferences`, the rest kept), before
/// the browser starts: WebRTC then sends no UDP (no STUN, no peer traffic
/// past the proxy) and reaches a TURN server only by TCP through the
/// context's proxy, where the policy holds. Browser contexts made later
/// inherit it.
pub(crate) fn webrtc_through_proxy(dir: &std::path::Path) -> std::io::Result<()> {
    let path = dir.join("Default").join("Preferences");
    let mut prefs = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| serde_json::json!({}));
    if !prefs["webrtc"].is_object() {
        prefs["webrtc"] = serde_json::json!({});
    }
    prefs["webrtc"]["ip_handling_policy"] = "disable_non_proxied_udp".into();
    std::fs::create_dir_all(dir.join("Default"))?;
    ochre_protocol::fs::write_atomic(&path, prefs.to_string().as_bytes())
}

/// An owner's policing: its proxy and its own rules over the server's.
#[derive(Debug)]
pub(crate) struct OwnerNet {
    proxy: Arc<PolicyProxy>,
    /// The session's own rules (the proxy enforces the server's and these).
    own: NetPolicy,
}

/// Rules from their texts; the first that does not read, as an error of `field`.
fn rules(field: &str, texts: &[String]) -> Result<Vec<HostRule>, ToolError> {
    if texts.len() > 200 {
        return Err(ToolError::invalid_argument(field, "at most 200 rules"));
    }
    texts
        .iter()
        .map(|t| HostRule::parse(t).map_err(|why| ToolError::invalid_argument(field, why)))
        .collect()
}

impl super::BrowserManager {
    /// `who`'s policy proxy, started the first time (`None`: the server
    /// does not police the network).
    pub(super) async fn policy_proxy(
        &self,
        who: &super::Owner,
    ) -> Result<Option<Arc<PolicyProxy>>, ToolError> {
        let Some(server) = &self.inner.options.network_policy else { return Ok(None) };
        if let Some(Some(proxy)) =
            self.inner.owners.read(who, |s| s.net.as_ref().map(|n| n.proxy.clone()))
        {
            return Ok(Some(proxy));
        }
        // Each refusal is a page event of the owner's: told in the answer of
        // the call it happened in.
        let inner = Arc::downgrade(&self.inner);
        let owner = who.clone();
        let tell: Refused = Box::new(move |to| {
            if let Some(inner) = inner.upgrade() {
                inner.events.refused(to, owner.clone());
            }
        });
        let started = Arc::new(PolicyProxy::start(server.clone(), Some(tell)).await?);
        // Another call of the owner's may have started one meanwhile.
        let proxy = self.inner.owners.write(who, |s| {
            let n =
                s.net.get_or_insert_with(|| OwnerNet { proxy: started, own: NetPolicy::default() });
            n.proxy.clone()
        });
        Ok(Some(proxy))
    }

    /// How a browser context of `who`'s is made: through its policy proxy
    /// (loopback included) when the network is policed.
    pub(super) async fn context_params(
        &self,
        who: &super::Owner,
    ) -> Result<chromiumoxide::cdp::browser_protocol::target::CreateBrowserContextParams, ToolError>
    {
        let mut params =
            chromiumoxide::cdp::browser_protocol::target::CreateBrowserContextParams::default();
        if let Some(proxy) = self.policy_proxy(who).await? {
            params.proxy_server = Some(proxy.server());
            params.proxy_bypass_list = Some("<-loopback>".into());
        }
        Ok(params)
    }

    /// `network_policy`: change the caller's session's own rules and
    /// upstream proxy (each field given replaces its own), and say what is
    /// in force.
    pub(super) async fn network_policy(
        &self,
        a: &ochre_protocol::page_ops::NetworkPolicy,
    ) -> Result<ochre_protocol::page_ops::PolicyInForce, ToolError> {
        let allow = a.allow.as_deref().map(|t| rules("allow", t)).transpose()?;
        let block = a.block.as_deref().map(|t| rules("block", t)).transpose()?;
        let upstream = match a.proxy.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(u) => {
                upstream_addr(u).map_err(|why| ToolError::invalid_argument("proxy", why))?;
                Some(Some(u.to_owned()))
            }
        };
        let Some(server) = self.inner.options.network_policy.clone() else {
            let changes = a.allow.is_some() || a.block.is_some() || a.proxy.is_some();
            if changes || a.reset == Some(true) {
                return Err(ToolError::capability_disabled(
                    "this server does not police the network: start it with --network-policy \
                     (or --network-allow / --network-block) to give sessions rules and proxies",
                )
                .with("capability", "network_policy"));
            }
            return Ok(Default::default());
        };
        let who = super::owner();
        let Some(proxy) = self.policy_proxy(&who).await? else {
            return Err(ToolError::internal("no policy proxy"));
        };
        let policy = self.inner.owners.write(&who, |s| {
            let Some(n) = s.net.as_mut() else {
                return Err(ToolError::internal("the session's policing went away"));
            };
            if a.reset == Some(true) {
                n.own = NetPolicy::default();
                proxy.set_upstream(None);
            }
            if let Some(allow) = allow {
                n.own.allowed = allow;
            }
            if let Some(block) = block {
                n.own.blocked = block;
            }
            if let Some(upstream) = upstream {
                proxy.set_upstream(upstream);
            }
            Ok(server.and(&n.own))
        })?;
        // A read changes nothing: the rules' names are looked up again only
        // when the rules change.
        if a.allow.is_some() || a.block.is_some() || a.reset == Some(true) {
            proxy.set_policy(policy.clone()).await;
        }
        let policy = proxy.policy();
        let (refused, refused_total) = proxy.refused();
        let texts = |r: &[HostRule]| r.iter().map(|r| r.text.clone()).collect();
        Ok(ochre_protocol::page_ops::PolicyInForce {
            allowed: texts(&policy.allowed),
            blocked: texts(&policy.blocked),
            block_private: policy.block_private,
            proxy: proxy.upstream(),
            refused,
            refused_total,
        })
    }
}

/// `host` and port of `host:port` (`[v6]:port`), the port `default` when absent.
fn split_host_port(target: &str, default: u16) -> (String, u16) {
    match target.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty() => {
            (h.trim_matches(['[', ']']).to_owned(), p.parse().unwrap_or(default))
        }
        _ => (target.trim_matches(['[', ']']).to_owned(), default),
    }
}

#[cfg(test)]
mod tests {
    use super::proxy::*;
    use super::*;

    #[test]
    fn request_lines_name_their_target_and_heads_lose_hop_headers() {
        assert_eq!(request_target("CONNECT", "[::1]:8443"), Some(("::1".to_owned(), 8443, None)));
        assert_eq!(
            request_target("GET", "http://Example.COM/a?b=1"),
            Some(("example.com".to_owned(), 80, Some("/a?b=1".to_owned())))
        );
        for bad in ["/relative", "https://example.com/", "ftp://example.com/", "http://"] {
            assert_eq!(request_target("GET", bad), None, "{bad}");
        }
        let lines = [
            "Host: a",
            "Proxy-Authorization: Basic x",
            "Connection: keep-alive",
            "Accept: */*",
            "",
        ];
        let head = forwarded_head("GET", "/p", "HTTP/1.1", lines.into_iter(), Some("Basic up"));
        assert_eq!(
            head,
            "GET /p HTTP/1.1\r\nHost: a\r\nAccept: */*\r\nProxy-Authorization: Basic up\r\nConnection: close\r\n\r\n"
        );
    }

    #[tokio::test]
    async fn a_name_is_judged_by_every_address_it_resolves_to() {
        let p = NetPolicy {
            blocked: vec![HostRule::parse("127.0.0.2").expect("rule")],
            hosts: [
                ("inward.test".to_owned(), vec!["127.0.0.2".parse().expect("ip")]),
                (
                    "both.test".to_owned(),
                    vec!["127.0.0.2".parse().expect("ip"), "127.0.0.3".parse().expect("ip")],
                ),
            ]
            .into(),
            ..NetPolicy::default()
        };
        let name = |n: &str| Host::parse(n).expect("host");
        assert!(
            matches!(decide(&p, false, &name("inward.test"), 80).await, Decision::Refused(why) if why.contains("127.0.0.2"))
        );
        // Only the address that passed is connected to.
        let both = decide(&p, false, &name("both.test"), 80).await;
        assert!(
            matches!(&both, Decision::To(to) if to == &vec!["127.0.0.3:80".parse().expect("addr")])
        );
        // Through an upstream proxy a name is judged by the name.
        assert!(matches!(decide(&p, true, &name("inward.test"), 80).await, Decision::Upstream));
        assert!(matches!(decide(&p, true, &name("127.0.0.2"), 80).await, Decision::Refused(_)));
        assert!(matches!(decide(&p, false, &name("0.0.0.0"), 80).await, Decision::Refused(_)));
    }

    #[tokio::test]
    async fn a_hosts_table_answers_before_dns_and_the_rules_judge_its_addresses() {
        assert_eq!(
            parse_resolve("Intranet.TEST.=0x7f.2"),
            Ok(("intranet.test".to_owned(), "127.0.0.2".parse().expect("ip")))
        );
        assert_eq!(
            parse_resolve("v6.test=[::ffff:10.0.0.5]").map(|(_, ip)| ip),
            Ok("10.0.0.5".parse().expect("ip"))
        );
        for bad in ["intranet.test", "10.0.0.1=10.0.0.2", "a.test=b.test", "=1.2.3.4", "a.test="] {
            assert!(parse_resolve(bad).is_err(), "{bad}");
        }
        let (name, ip) = parse_resolve("rebind.test=127.0.0.2").expect("entry");
        let mut p = NetPolicy {
            blocked: vec![HostRule::parse("127.0.0.2").expect("rule")],
            hosts: [(name.clone(), vec![ip])].into(),
            ..NetPolicy::default()
        };
        assert_eq!(p.lookup("rebind.test").await, vec![ip]);
        let h = Host::parse("rebind.test").expect("host");
        assert!(!p.refuses_early(&h, 80), "a name rule does not name it");
        assert!(!p.allows_at(&h, Some(ip), 80), "its address is blocked");
        // A rule on the name covers what the table answers for it.
        p.blocked = vec![HostRule::parse("rebind.test").expect("rule")];
        p.resolve_names().await;
        assert!(!p.allows_at(&Host::Ip(ip), Some(ip), 80));
    }

    fn host(t: &str) -> Host {
        Host::parse(t).expect(t)
    }

    /// Whether `rule` covers `h:port` (an address host judged by itself).
    fn covers(rule: &str, h: &str, port: u16) -> bool {
        HostRule::parse(rule).expect(rule).covers(&host(h), None, port)
    }

    #[test]
    fn rules_cover_hosts_ports_and_subdomains() {
        assert!(covers("https://App.Example", "app.example", 443));
        assert!(!covers("https://app.example", "app.example", 80));
        assert!(covers("app.example", "app.example", 8080));
        assert!(covers("app.example:8080", "app.example", 8080));
        assert!(!covers("app.example:8080", "app.example", 80));
        assert!(covers("*.example.com", "cdn.example.com", 443));
        assert!(!covers("*.example.com", "badexample.com", 443));
        assert!(!covers("app.example", "app.example.evil.test", 443));
        assert!(covers("http://127.0.0.1:5000", "127.0.0.1", 5000));
        for bad in ["", "a b", "ftp//x", "x:port", "*.127.0.0.1", "10.0.0.0/33", "[::1"] {
            assert!(HostRule::parse(bad).is_err(), "{bad}");
        }
        let r = |t: &str| HostRule::parse(t).expect(t);
        let p = NetPolicy {
            allowed: vec![r("*.example.com")],
            blocked: vec![r("ads.example.com")],
            ..Default::default()
        };
        assert!(p.allows_at(&host("www.example.com"), None, 443));
        assert!(!p.allows_at(&host("ads.example.com"), None, 443));
        assert!(!p.allows_at(&host("other.test"), None, 443));
        assert!(NetPolicy::default().allows_at(&host("anything"), None, 1));
        // A rule reads back as its text.
        let json = serde_json::to_string(&p).expect("json");
        assert_eq!(serde_json::from_str::<NetPolicy>(&json).expect("back"), p);
    }

    #[test]
    fn a_rule_holds_against_every_spelling_of_its_host() {
        for spelled in [
            "127.0.0.2",
            "2130706434",
            "0x7f000002",
            "0177.0.0.2",
            "127.2",
            "[::ffff:127.0.0.2]",
            "::ffff:7f00:2",
        ] {
            for rule in ["127.0.0.2", "127.0.0.2:8080", "http://127.0.0.2:8080", "127.0.0.0/24"] {
                assert!(covers(rule, spelled, 8080), "{rule} misses {spelled}");
            }
            assert!(!covers("127.0.0.2:8080", spelled, 8081));
        }
        for spelled in ["EXAMPLE.com", "example.com.", "Example.Com."] {
            assert!(covers("example.com", spelled, 443), "{spelled}");
            assert!(covers("*.example.com", &format!("www.{spelled}"), 443), "{spelled}");
        }
        assert!(covers("localhost", "LOCALHOST.", 80));
        assert!(covers("[::1]:8080", "0:0:0:0:0:0:0:1", 8080));
        // "This host" is never reached, blocked or not, allowed or not.
        let open = NetPolicy::default();
        let all =
            NetPolicy { allowed: vec![HostRule::parse("0.0.0.0/0").expect("all")], ..open.clone() };
        for p in [&open, &all] {
            for h in ["0.0.0.0", "0", "[::]", "0.1.2.3", "[::ffff:0.0.0.0]"] {
                assert!(!p.allows_at(&host(h), None, 80), "{h}");
            }
        }
        // A name is judged by the address it resolves to as well.
        let p = NetPolicy { blocked: vec![HostRule::parse("127.0.0.0/8").expect("r")], ..open };
        let ip = "127.0.0.1".parse().ok();
        assert!(!p.allows_at(&host("rebound.example"), ip, 80));
        assert!(p.allows_at(&host("rebound.example"), "93.184.215.14".parse().ok(), 80));
        // Addresses inside the machine or its networks, unless allowed.
        let inside = NetPolicy { block_private: true, ..NetPolicy::default() };
        for h in [
            "127.0.0.1",
            "10.0.0.1",
            "172.20.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "[fd00::1]",
            "[::1]",
            "[::ffff:10.0.0.1]",
        ] {
            assert!(!inside.allows_at(&host(h), None, 80), "{h}");
        }
        assert!(!inside.allows_at(&host("intranet.example"), "192.168.1.1".parse().ok(), 80));
        assert!(inside.allows_at(&host("example.com"), "93.184.215.14".parse().ok(), 80));
        let some =
            NetPolicy { allowed: vec![HostRule::parse("127.0.0.1:8080").expect("r")], ..inside };
        assert!(some.allows_at(&host("127.0.0.1"), None, 8080));
        assert!(!some.allows_at(&host("127.0.0.1"), None, 8081));
    }

    #[tokio::test]
    async fn a_rule_on_a_name_holds_against_what_it_resolves_to() {
        let mut p = NetPolicy {
            blocked: vec![HostRule::parse("localhost:8080").expect("r")],
            ..NetPolicy::default()
        };
        assert!(p.allows_at(&host("127.0.0.1"), None, 8080), "judged before the lookup");
        p.resolve_names().await;
        for h in ["127.0.0.1", "[::ffff:127.0.0.1]", "2130706433", "localhost"] {
            assert!(!p.allows_at(&host(h), None, 8080), "{h}");
        }
        assert!(p.allows_at(&host("127.0.0.1"), None, 8081), "another port");
        // A name that does not resolve covers only itself.
        let mut q = NetPolicy {
            blocked: vec![HostRule::parse("no-such-host.invalid").expect("r")],
            ..NetPolicy::default()
        };
        q.resolve_names().await;
        assert!(q.allows_at(&host("127.0.0.1"), None, 80));
        assert!(!q.allows_at(&host("no-such-host.invalid"), None, 80));
    }

    #[test]
    fn an_upstream_proxys_password_is_sent_and_never_shown() {
        let url = "http://ann:p%40ss+w0rd@proxy.example:3128";
        assert_eq!(upstream_addr(url).as_deref(), Ok("proxy.example:3128"));
        // base64 of "ann:p@ss+w0rd".
        assert_eq!(upstream_auth(url).as_deref(), Some("Basic YW5uOnBAc3MrdzByZA=="));
        assert_eq!(shown(url), "http://ann:•••@proxy.example:3128/");
        assert_eq!(upstream_auth("http://proxy.example:3128"), None);
        let e = upstream_addr("socks5://ann:secretpw@x:1").expect_err("socks");
        assert!(!e.contains("secretpw"), "{e}");
    }

    #[tokio::test]
    async fn the_proxy_refuses_what_is_blocked_and_passes_the_rest() {
        // A server that answers one request with its own request line.
        let origin = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = origin.local_addr().expect("addr").port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = origin.accept().await {
                let mut buf = vec![0u8; 4096];
                let n = s.read(&mut buf).await.unwrap_or(0);
                let line =
                    String::from_utf8_lossy(&buf[..n]).lines().next().unwrap_or("").to_owned();
                let body = format!("saw {line}");
                let _ = s
                    .write_all(
                        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len())
                            .as_bytes(),
                    )
                    .await;
            }
        });
        let blocked = NetPolicy {
            blocked: vec![HostRule::parse(&format!("127.0.0.1:{port}")).expect("rule")],
            ..Default::default()
        };
        let proxy = PolicyProxy::start(NetPolicy::default(), None).await.expect("proxy");
        let ask = |req: String| {
            let addr = proxy.addr;
            async move {
                let mut s = TcpStream::connect(addr).await.expect("connect");
                s.write_all(req.as_bytes()).await.expect("write");
                let mut out = String::new();
                let _ = s.read_to_string(&mut out).await;
                out
            }
        };
        let get =
            format!("GET http://127.0.0.1:{port}/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        let out = ask(get.clone()).await;
        assert!(out.ends_with("saw GET /x?y=1 HTTP/1.1"), "{out}");
        let connect = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nGET /t HTTP/1.1\r\n\r\n");
        let out = ask(connect.clone()).await;
        assert!(
            out.starts_with("HTTP/1.1 200 Connection Established")
                && out.ends_with("saw GET /t HTTP/1.1"),
            "{out}"
        );
        proxy.set_policy(blocked).await;
        for req in [get, connect] {
            let out = ask(req).await;
            assert!(out.starts_with("HTTP/1.1 403") && out.contains("network policy"), "{out}");
        }
        assert_eq!(proxy.refused().1, 2);
        // Every other spelling of the address, "this host", and a name that
        // resolves to it (localhost, from the hosts table).
        let spellings = [
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "2130706433",
            "127.1",
            "0.0.0.0",
            "0",
            "[::]",
            "localhost",
            "LOCALHOST.",
        ];
        for h in spellings {
            for req in [
                format!("CONNECT {h}:{port} HTTP/1.1\r\n\r\nGET /t HTTP/1.1\r\n\r\n"),
                format!("GET http://{h}:{port}/x HTTP/1.1\r\nHost: {h}:{port}\r\n\r\n"),
            ] {
                let out = ask(req.clone()).await;
                assert!(out.starts_with("HTTP/1.1 403") && !out.contains("saw "), "{req}: {out}");
            }
        }
        let out = ask(format!("GET http://localhost:{port}/x HTTP/1.1\r\n\r\n")).await;
        assert!(out.contains("(it resolves to 127.0.0.1"), "{out}");
    }
}
