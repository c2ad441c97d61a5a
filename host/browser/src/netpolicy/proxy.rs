//! The proxy a policed browser context is given: it reads each connection's
//! target (a `CONNECT` tunnel or a plain request), decides on the parsed host
//! and the address it resolves to, and passes the connection through (directly
//! or by the session's upstream proxy) or answers `403`.

use super::*;

/// What one policed context's proxy holds.
#[derive(Default)]
struct ProxyState {
    policy: RwLock<NetPolicy>,
    /// `http://host:port` of the session's own proxy, if it has one.
    upstream: RwLock<Option<String>>,
    /// The last refused connections, as `host:port`.
    refused: Mutex<VecDeque<String>>,
    refused_total: std::sync::atomic::AtomicU64,
    /// Told of each refused connection (`host:port`).
    tell: Option<Refused>,
}

/// What a proxy tells of each connection it refuses.
pub type Refused = Box<dyn Fn(&str) + Send + Sync>;

/// A policed context's proxy: serves until dropped.
#[derive(Debug)]
pub struct PolicyProxy {
    pub(super) addr: SocketAddr,
    state: Arc<ProxyState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PolicyProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How many refused connections a proxy remembers.
const REMEMBERED: usize = 50;

/// The longest request head read.
const MAX_HEAD: usize = 64 * 1024;

impl PolicyProxy {
    /// A new proxy on 127.0.0.1 enforcing `policy`; `tell` hears of each
    /// connection it refuses.
    pub async fn start(mut policy: NetPolicy, tell: Option<Refused>) -> Result<Self, ToolError> {
        policy.resolve_names().await;
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| ToolError::internal(format!("cannot start the policy proxy: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ToolError::internal(format!("the policy proxy has no address: {e}")))?;
        let state =
            Arc::new(ProxyState { policy: RwLock::new(policy), tell, ..Default::default() });
        let served = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = served.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve(stream, &state).await {
                        tracing::debug!(error = %e, "a proxied connection ended");
                    }
                });
            }
        });
        Ok(Self { addr, state, task })
    }

    /// What Chromium is told: `http://127.0.0.1:PORT`.
    pub fn server(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The rules now.
    pub fn policy(&self) -> NetPolicy {
        read_lock(&self.state.policy).clone()
    }

    /// Enforce `policy` from the next connection on, the names of its rules
    /// resolved first (see [`NetPolicy::resolve_names`]).
    pub async fn set_policy(&self, mut policy: NetPolicy) {
        policy.resolve_names().await;
        *write_lock(&self.state.policy) = policy;
    }

    /// The upstream proxy now, as answers show it (its password `•••`).
    pub fn upstream(&self) -> Option<String> {
        read_lock(&self.state.upstream).as_deref().map(shown)
    }

    /// Send what is allowed through `upstream` (`http://host:port`), or directly.
    pub fn set_upstream(&self, upstream: Option<String>) {
        *write_lock(&self.state.upstream) = upstream;
    }

    /// The last refused `host:port`s (newest last) and how many in all.
    pub fn refused(&self) -> (Vec<String>, u64) {
        let total = self.state.refused_total.load(std::sync::atomic::Ordering::Relaxed);
        (lock(&self.state.refused).iter().cloned().collect(), total)
    }
}

/// `host:port` of an upstream proxy URL (`http://[user:password@]host:port`),
/// or why not (never quoting the URL: it may hold a password).
pub fn upstream_addr(url: &str) -> Result<String, String> {
    let u = url::Url::parse(url.trim()).map_err(|e| {
        format!("the session proxy is not a URL ({e}); it is http://[user:password@]host:port")
    })?;
    if u.scheme() != "http" || u.host_str().is_none() {
        return Err("a session proxy is http://[user:password@]host:port".into());
    }
    let host = u.host_str().unwrap_or_default();
    Ok(format!("{host}:{}", u.port_or_known_default().unwrap_or(80)))
}

/// The `Proxy-Authorization` value for an upstream proxy URL's credentials.
pub(super) fn upstream_auth(url: &str) -> Option<String> {
    use base64::Engine as _;
    let u = url::Url::parse(url.trim()).ok()?;
    if u.username().is_empty() {
        return None;
    }
    let decode = |s: &str| {
        url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    let pair = format!("{}:{}", decode(u.username()), decode(u.password().unwrap_or("")));
    Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair)))
}

/// An upstream proxy URL as answers show it: its password as `•••`.
pub fn shown(url: &str) -> String {
    match url::Url::parse(url.trim()) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("•••"));
            u.to_string().replace("%E2%80%A2%E2%80%A2%E2%80%A2", "•••")
        }
        Ok(u) => u.to_string(),
        Err(_) => "•••".into(),
    }
}

const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

/// A request's head, read up to its blank line (`None`: the connection
/// ended or the head is over `MAX_HEAD`).
async fn read_head(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<String>> {
    let mut head = Vec::new();
    loop {
        let n = reader.read_until(b'\n', &mut head).await?;
        if n == 0 || head.len() > MAX_HEAD {
            return Ok(None);
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            return Ok(Some(String::from_utf8_lossy(&head).into_owned()));
        }
    }
}

/// Where a request line asks to go: its host as written, port, and the path
/// of a plain `http` request (`None`: a `CONNECT` tunnel). `None` when it
/// names no `http` URL.
pub(super) fn request_target(method: &str, target: &str) -> Option<(String, u16, Option<String>)> {
    if method.eq_ignore_ascii_case("CONNECT") {
        let (h, p) = split_host_port(target, 443);
        return Some((h, p, None));
    }
    let u = url::Url::parse(target).ok().filter(|u| u.scheme() == "http")?;
    let host = u.host_str()?.trim_matches(['[', ']']).to_owned();
    let mut path = u.path().to_owned();
    if let Some(q) = u.query() {
        path.push('?');
        path.push_str(q);
    }
    Some((host, u.port_or_known_default().unwrap_or(80), Some(path)))
}

/// What the policy says of a connection to `host:port`: refused (with what
/// else the answer says), through the upstream proxy (which resolves names
/// itself: judged by the name), or to these addresses, each checked. A name
/// is resolved here, once, and only an address that passed is connected to
/// (no second lookup between the check and the connect).
pub(super) enum Decision {
    Refused(String),
    Upstream,
    To(Vec<SocketAddr>),
}

pub(super) async fn decide(policy: &NetPolicy, upstream: bool, host: &Host, port: u16) -> Decision {
    if policy.refuses_early(host, port) {
        return Decision::Refused(String::new());
    }
    match (upstream, host) {
        (true, _) if !policy.allows_at(host, None, port) => Decision::Refused(String::new()),
        (true, _) => Decision::Upstream,
        (false, Host::Ip(ip)) => Decision::To(vec![SocketAddr::new(*ip, port)]),
        (false, Host::Name(name)) => {
            let found = policy.lookup(name).await;
            let ok: Vec<SocketAddr> = (found.iter())
                .filter(|ip| policy.allows_at(host, Some(**ip), port))
                .map(|ip| SocketAddr::new(*ip, port))
                .collect();
            if ok.is_empty() && !found.is_empty() {
                let to: Vec<String> = found.iter().map(ToString::to_string).collect();
                return Decision::Refused(format!(" (it resolves to {})", to.join(", ")));
            }
            Decision::To(ok)
        }
    }
}

/// One proxied connection: its request read, judged, and carried or refused.
async fn serve(stream: TcpStream, state: &ProxyState) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream);
    let Some(text) = read_head(&mut reader).await? else { return Ok(()) };
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (method, target, version) =
        (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let asked = request_target(method, target)
        .and_then(|(host, port, path)| Some((Host::parse(&host).ok()?, host, port, path)));
    let Some((parsed, host, port, path)) = asked else {
        return reader.get_mut().write_all(BAD_REQUEST).await;
    };
    let at = format!("{parsed}:{port}");
    let policy = read_lock(&state.policy).clone();
    let upstream = read_lock(&state.upstream).clone();
    let targets = match decide(&policy, upstream.is_some(), &parsed, port).await {
        Decision::Refused(why) => return refuse(reader.get_mut(), state, &at, &why).await,
        Decision::Upstream => Vec::new(),
        Decision::To(targets) => targets,
    };
    let leftover = reader.buffer().to_vec();
    let mut client = reader.into_inner();
    let via = match &upstream {
        Some(u) => Some(upstream_addr(u).map_err(std::io::Error::other)?),
        None => None,
    };
    let auth = upstream.as_deref().and_then(upstream_auth);
    let mut server = match &via {
        Some(proxy) => TcpStream::connect(proxy).await,
        None => TcpStream::connect(&targets[..]).await,
    };
    let Ok(server) = server.as_mut() else {
        let _ = client
            .write_all(
                b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            )
            .await;
        return Ok(());
    };
    let auth = auth.filter(|_| via.is_some());
    match path {
        None if via.is_some() => {
            if !tunnel_upstream(&mut client, server, &host, port, auth.as_deref()).await? {
                return Ok(());
            }
            client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await?;
        }
        None => client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await?,
        Some(path) => {
            // One request a connection (`Connection: close`): the next may
            // be for another host.
            let target = if via.is_some() { target.to_owned() } else { path };
            let head = forwarded_head(method, &target, version, lines, auth.as_deref());
            server.write_all(head.as_bytes()).await?;
        }
    }
    server.write_all(&leftover).await?;
    let _ = tokio::io::copy_bidirectional(&mut client, server).await;
    let _ = client.shutdown().await;
    let mut rest = Vec::new();
    let _ = server.read_to_end(&mut rest).await;
    Ok(())
}

/// Ask the upstream proxy for a tunnel to `host:port`; its answer is passed
/// on to the client when it is not a 200 (then `false`).
async fn tunnel_upstream(
    client: &mut TcpStream,
    server: &mut TcpStream,
    host: &str,
    port: u16,
    auth: Option<&str>,
) -> std::io::Result<bool> {
    let credentials = auth.map(|a| format!("Proxy-Authorization: {a}\r\n")).unwrap_or_default();
    let ask = format!("CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n{credentials}\r\n");
    server.write_all(ask.as_bytes()).await?;
    let mut answer = BufReader::new(&mut *server);
    let mut got = Vec::new();
    while !got.ends_with(b"\r\n\r\n") && got.len() < MAX_HEAD {
        if answer.read_until(b'\n', &mut got).await? == 0 {
            break;
        }
    }
    if !got.starts_with(b"HTTP/1.1 200") && !got.starts_with(b"HTTP/1.0 200") {
        client.write_all(&got).await?;
        return Ok(false);
    }
    Ok(true)
}

/// A plain request's head as sent on: hop-by-hop headers dropped, the
/// upstream's credentials added (`auth`), one request a connection.
pub(super) fn forwarded_head<'a>(
    method: &str,
    target: &str,
    version: &str,
    lines: impl Iterator<Item = &'a str>,
    auth: Option<&str>,
) -> String {
    let mut out = format!("{method} {target} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim().to_ascii_lowercase();
        let hop = ["connection", "proxy-connection", "keep-alive", "proxy-authorization"];
        if !hop.contains(&name.as_str()) {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    if let Some(a) = auth {
        out.push_str(&format!("Proxy-Authorization: {a}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    out
}

/// Answer a refused connection `403`, and remember and tell it (`at`:
/// `host:port`; `why`: what else the answer says).
async fn refuse(
    stream: &mut TcpStream,
    state: &ProxyState,
    at: &str,
    why: &str,
) -> std::io::Result<()> {
    tracing::debug!(to = %at, why, "the network policy refused a connection");
    {
        let mut refused = lock(&state.refused);
        if refused.len() == REMEMBERED {
            refused.pop_front();
        }
        refused.push_back(at.to_owned());
    }
    state.refused_total.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Some(tell) = &state.tell {
        tell(at);
    }
    let body = format!("blocked by ochre's network policy: {at}{why}\n");
    let answer = format!(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Ochre-Blocked: {at}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(answer.as_bytes()).await
}

impl std::fmt::Debug for ProxyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyState").field("policy", &self.policy).finish_non_exhaustive()
    }
}
