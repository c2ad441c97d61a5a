//! Sessions of the command line: one daemon per named session, serving MCP on
//! a local socket (mode 0600, in a dir only its user reaches) with the same
//! host and MCP server as `ochre serve`; every command is a short MCP
//! conversation with it. The first command of a session starts its daemon;
//! the daemon ends after an idle time, on `ochre session stop`, or on SIGTERM.
//!
//! Files of a session NAME, in the sessions dir: `NAME.sock` (the socket),
//! `NAME.lock` (locked by the daemon for its whole life: a second daemon of
//! that name exits at once, and a lock nobody holds means the daemon is gone),
//! `NAME.json` (who it is: pid, start, working dir, data dir, the binary it
//! serves from) and `NAME.log` (its stderr).
//!
//! This file is the commands' side (they run in the small `ochre` binary);
//! the daemon itself is `ochre-server`'s (`daemon.rs`).

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::{Value, json};

/// How long a command waits for a new daemon to take connections (a first
/// start on a new machine compiles the plugins).
const START_WAIT: Duration = Duration::from_secs(120);

/// A session's name: letters, digits, `.`, `_` and `-`, at most 64.
pub(crate) fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(crate::UsageError(format!(
            "session name {name:?}: letters, digits, '.', '_' and '-' (at most 64, not starting with '.')"
        ))
        .into())
    }
}

/// The session of a command: `--session`, else `OCHRE_SESSION`, else one per
/// working directory (its last part and a hash of the whole path).
pub(crate) fn session_name(given: Option<&str>) -> anyhow::Result<String> {
    if let Some(name) = given {
        check_name(name)?;
        return Ok(name.to_owned());
    }
    let cwd = std::env::current_dir().context("the working directory")?;
    let base: String = cwd
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') { c } else { '-' })
        .take(40)
        .collect();
    // FNV-1a of the path: stable across runs and versions.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in cwd.as_os_str().as_encoded_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    let base = if base.is_empty() { "root".to_owned() } else { base };
    Ok(format!("{base}-{:08x}", h as u32))
}

/// The dir of the sessions' sockets: `OCHRE_SESSION_DIR`, else
/// `$XDG_RUNTIME_DIR/ochre`, else `/tmp/ochre-UID`; made with mode 0700, and
/// refused when someone else owns it or others may write to it (they could
/// put a socket of theirs in the place of a session's).
pub(crate) fn sessions_dir() -> anyhow::Result<PathBuf> {
    let uid = my_uid();
    let dir = match std::env::var_os("OCHRE_SESSION_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
            Some(d) => PathBuf::from(d).join("ochre"),
            None => std::env::temp_dir().join(format!("ochre-{uid}")),
        },
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("making {}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(&dir).with_context(|| dir.display().to_string())?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o022 != 0 {
        anyhow::bail!(
            "{} must be a directory of yours that nobody else may write to (as 0700 or 0755): it \
             holds the sessions' sockets; fix it, or set OCHRE_SESSION_DIR to another",
            dir.display()
        );
    }
    Ok(dir)
}

/// This process's user id: the owner of `/proc/self`.
fn my_uid() -> u32 {
    std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0)
}

/// A session's files.
#[derive(Debug, Clone)]
pub(crate) struct Paths {
    pub(crate) name: String,
    pub(crate) socket: PathBuf,
    pub(crate) lock: PathBuf,
    pub(crate) info: PathBuf,
    pub(crate) log: PathBuf,
}

impl Paths {
    pub(crate) fn of(name: &str) -> anyhow::Result<Self> {
        let dir = sessions_dir()?;
        Ok(Self {
            name: name.to_owned(),
            socket: dir.join(format!("{name}.sock")),
            lock: dir.join(format!("{name}.lock")),
            info: dir.join(format!("{name}.json")),
            log: dir.join(format!("{name}.log")),
        })
    }

    /// Whether a daemon holds the session's lock (it is alive, or starting).
    fn daemon_alive(&self) -> bool {
        let Ok(f) = std::fs::OpenOptions::new().read(true).open(&self.lock) else {
            return false;
        };
        match f.try_lock_shared() {
            Ok(()) => false,
            Err(std::fs::TryLockError::WouldBlock) => true,
            Err(std::fs::TryLockError::Error(_)) => false,
        }
    }

    fn info(&self) -> Option<Value> {
        serde_json::from_slice(&std::fs::read(&self.info).ok()?).ok()
    }
}

/// When file `p` last changed, in nanoseconds since the epoch.
pub(crate) fn modified_ns(p: &std::path::Path) -> Option<u64> {
    let t = std::fs::metadata(p).ok()?.modified().ok()?;
    u64::try_from(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos()).ok()
}

/// Whether the binary a daemon serves from (its session file: `info`) has
/// changed on disk since it started: ochre was rebuilt or upgraded, and the
/// daemon still runs the old one. (A file from a daemon that did not record
/// it: not known, taken as no.)
fn replaced(info: &Value) -> bool {
    let (Some(exe), Some(then)) = (info["server"].as_str(), info["server_modified_ns"].as_u64())
    else {
        return false;
    };
    modified_ns(std::path::Path::new(exe)) != Some(then)
}

crate::message_errors! {
    /// Why a command could not be answered by its session's daemon (exit 4).
    DaemonLost;
}

crate::message_errors! {
    /// A connection that ended before the daemon answered its handshake: the
    /// daemon ran nothing it sent (see [`Client::request`]; never a command's
    /// own error).
    NotTaken;
}

/// A connection to a session's daemon, MCP initialized.
pub(crate) struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
    session: String,
    pid: Option<u64>,
    /// Whether the daemon has answered the handshake: until it has, it has
    /// run nothing this connection sent (it answers `initialize` before it
    /// reads a call).
    greeted: bool,
    /// What a new daemon needs, should this one end before it took the
    /// first request (see [`Self::request`]).
    paths: Paths,
    daemon_args: Vec<std::ffi::OsString>,
}

/// How long a daemon that closed a connection before answering its handshake
/// is given to end (it was killed, or is stopping), before the command says
/// it went away.
const ENDING_WAIT: Duration = Duration::from_secs(3);

impl Client {
    /// Connect to the session's daemon, starting one first if there is none
    /// (saying so on stderr when an earlier one was gone). `daemon_args` are
    /// the arguments a new daemon is started with.
    pub(crate) fn connect(
        paths: &Paths,
        daemon_args: &[std::ffi::OsString],
    ) -> anyhow::Result<Self> {
        let (stream, started) = match UnixStream::connect(&paths.socket) {
            Ok(s) => (s, false),
            Err(_) => (start_daemon(paths, daemon_args)?, true),
        };
        let info = paths.info();
        let pid = info.as_ref().and_then(|i| i["pid"].as_u64());
        if !started && info.as_ref().is_some_and(replaced) {
            eprintln!(
                "ochre: session {name}'s daemon (pid {}) runs the ochre-server it started with, \
                 which has been rebuilt or upgraded since; `ochre session stop {name}` ends it \
                 (its tabs close) and the next command starts the new one",
                pid.map_or_else(|| "?".to_owned(), |p| p.to_string()),
                name = paths.name
            );
        }
        Self::handshake(stream, paths, daemon_args, pid)
    }

    fn handshake(
        stream: UnixStream,
        paths: &Paths,
        daemon_args: &[std::ffi::OsString],
        pid: Option<u64>,
    ) -> anyhow::Result<Self> {
        let writer = stream.try_clone().context("the session's socket")?;
        let mut c = Self {
            reader: BufReader::new(stream),
            writer,
            next_id: 1,
            session: paths.name.clone(),
            pid,
            greeted: false,
            paths: paths.clone(),
            daemon_args: daemon_args.to_vec(),
        };
        // The handshake and the first call go out together: the daemon reads
        // them in order, so a command costs one round trip.
        // (A daemon that is ending may refuse them: the first request finds
        // the socket so and goes to a new daemon; see `request`.)
        let hello = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "ochre-cli", "version": env!("CARGO_PKG_VERSION")},
        }});
        if c.send(&hello).is_ok() {
            let _ = c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        }
        Ok(c)
    }

    fn send(&mut self, v: &Value) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(v)?;
        line.push(b'\n');
        // (A daemon that is ending may refuse it: see `request`.)
        if let Err(e) = self.writer.write_all(&line) {
            return Err(self.lost(&format!("sending the command: {e}")));
        }
        Ok(())
    }

    fn lost(&self, what: &str) -> anyhow::Error {
        if !self.greeted {
            return NotTaken(what.to_owned()).into();
        }
        self.went_away(what)
    }

    fn went_away(&self, what: &str) -> anyhow::Error {
        let pid = self.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        DaemonLost(format!(
            "session {}: its daemon{pid} went away before answering ({what}); what the command did is \
             not known. The next command starts a new daemon (the old one's tabs are gone; its \
             journal is kept)",
            self.session
        ))
        .into()
    }

    /// Call a tool: its MCP result (`isError` set for a tool error).
    pub(crate) fn call(&mut self, tool: &str, args: &Value) -> anyhow::Result<Value> {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
    }

    /// The tools the session's server offers (every page of `tools/list`).
    pub(crate) fn tools(&mut self) -> anyhow::Result<Vec<Value>> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self.request("tools/list", params)?;
            tools.extend(page["tools"].as_array().cloned().unwrap_or_default());
            match page["nextCursor"].as_str() {
                Some(c) if !c.is_empty() => cursor = Some(c.to_owned()),
                _ => return Ok(tools),
            }
        }
    }

    /// One JSON-RPC request: its result. A daemon that ends before it has
    /// answered the handshake has run nothing of this connection's (a
    /// connection made as the daemon was being killed or stopping, taken by
    /// its socket and never read): once it has ended, the request goes to a
    /// new daemon, as it would have had it come a moment later.
    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        match self.request_once(method, &params) {
            Err(e) if e.is::<NotTaken>() => {
                let what = e.to_string();
                let by = Instant::now() + ENDING_WAIT;
                while self.paths.daemon_alive() && Instant::now() < by {
                    std::thread::sleep(Duration::from_millis(5));
                }
                if self.paths.daemon_alive() {
                    let pid = self.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
                    return Err(DaemonLost(format!(
                        "session {}: its daemon{pid} closed the connection before it took the \
                         command ({what}) and still holds the session {} s later: the command \
                         was not run; see {}",
                        self.session,
                        ENDING_WAIT.as_secs(),
                        self.paths.log.display()
                    ))
                    .into());
                }
                *self = Self::connect(&self.paths.clone(), &self.daemon_args.clone())?;
                // Twice is not chance: said as the daemon going away.
                self.request_once(method, &params).map_err(|e| match e.downcast::<NotTaken>() {
                    Ok(NotTaken(what)) => self.went_away(&what),
                    Err(e) => e,
                })
            }
            other => other,
        }
    }

    fn request_once(&mut self, method: &str, params: &Value) -> anyhow::Result<Value> {
        // (After a new connection's handshake: the daemon numbers answers by
        // this connection's ids.)
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut line = String::new();
        loop {
            line.clear();
            match self.reader.read_line(&mut line) {
                Ok(0) => return Err(self.lost("the connection closed")),
                Ok(_) => {}
                Err(e) => return Err(self.lost(&e.to_string())),
            }
            let Ok(msg) = serde_json::from_str::<Value>(&line) else { continue };
            let Some(got) = msg.get("id").and_then(Value::as_u64) else { continue };
            if got == 0 {
                self.greeted = true;
            }
            if let Some(e) = msg.get("error") {
                // The handshake refused (a host that could not start says why)
                // or the request itself.
                let text = e["message"].as_str().unwrap_or("refused").to_owned();
                return Err(
                    crate::ServerRefused(format!("session {}: {text}", self.session)).into()
                );
            }
            if got == id {
                return Ok(msg.get("result").cloned().unwrap_or(Value::Null));
            }
        }
    }
}

/// Start the session's daemon and wait until it takes connections.
fn start_daemon(paths: &Paths, daemon_args: &[std::ffi::OsString]) -> anyhow::Result<UnixStream> {
    if !paths.daemon_alive() {
        if let Some(info) = paths.info() {
            eprintln!(
                "ochre: session {}'s daemon (pid {}) is gone; starting a new one (its tabs were lost, \
                 its journal is kept)",
                paths.name, info["pid"]
            );
        }
        let log = std::fs::File::create(&paths.log)
            .with_context(|| format!("creating {}", paths.log.display()))?;
        let exe = crate::server_exe()?;
        let mut cmd = std::process::Command::new(exe);
        cmd.arg("--session-daemon")
            .arg(&paths.name)
            .args(daemon_args)
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        // Its own process group: an interrupt at the agent's shell does not end it.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().context("starting the session's daemon")?;
        // Reaped by a thread: the daemon outlives this command, but a daemon
        // that exits early must not stay a zombie while we wait.
        let (exited, waited) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = exited.send(child.wait());
        });
        return poll_socket(
            paths,
            || {
                let status = waited.try_recv().ok()?;
                let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
                // Another daemon of this name may have won the start.
                if let Ok(s) = UnixStream::connect(&paths.socket) {
                    return Some(Ok(s));
                }
                let log = std::fs::read_to_string(&paths.log).unwrap_or_default();
                Some(Err(DaemonLost(format!(
                    "session {}: its daemon could not start ({status}): {}",
                    paths.name,
                    log.trim()
                ))
                .into()))
            },
            || {
                format!(
                    "session {}: its daemon did not take connections within {} s (see {})",
                    paths.name,
                    START_WAIT.as_secs(),
                    paths.log.display()
                )
            },
        );
    }
    // A daemon holds the lock but its socket is not there yet: it is starting.
    poll_socket(
        paths,
        || (!paths.daemon_alive()).then(|| start_daemon(paths, daemon_args)),
        || {
            format!(
                "session {}: its daemon holds the session but takes no connections (see {})",
                paths.name,
                paths.log.display()
            )
        },
    )
}

/// The session's socket once it takes a connection, looked for every 5 ms
/// for [`START_WAIT`]; earlier, what `meanwhile` answers (the daemon exited,
/// or none holds the session any more); after, the error `late` tells.
fn poll_socket(
    paths: &Paths,
    mut meanwhile: impl FnMut() -> Option<anyhow::Result<UnixStream>>,
    late: impl FnOnce() -> String,
) -> anyhow::Result<UnixStream> {
    let deadline = Instant::now() + START_WAIT;
    loop {
        if let Ok(s) = UnixStream::connect(&paths.socket) {
            return Ok(s);
        }
        if let Some(done) = meanwhile() {
            return done;
        }
        if Instant::now() > deadline {
            return Err(DaemonLost(late()).into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `ochre session list`: the sessions with a daemon, and those whose daemon is gone.
pub(crate) fn list(json_out: bool) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut names = all_names()?;
    names.sort();
    for name in names {
        let paths = Paths::of(&name)?;
        let Some(mut info) = paths.info() else { continue };
        let alive = paths.daemon_alive();
        info["replaced"] = json!(alive && replaced(&info));
        info["alive"] = json!(alive);
        info["socket"] = json!(paths.socket);
        rows.push(info);
    }
    if json_out {
        crate::say!("{}", serde_json::to_string_pretty(&rows)?);
    } else if rows.is_empty() {
        crate::say!("no sessions (the first command of a session starts its daemon)");
    } else {
        for r in &rows {
            let name = r["name"].as_str().unwrap_or("");
            crate::say!(
                "{:<24} {} pid {:<8} since {}  {}{}",
                name,
                if r["alive"] == true { "running" } else { "gone   " },
                r["pid"],
                r["started"].as_str().unwrap_or(""),
                r["cwd"].as_str().unwrap_or(""),
                if r["replaced"] == true {
                    format!("  (an older build: `ochre session stop {name}` for the new one)")
                } else {
                    String::new()
                }
            );
        }
    }
    Ok(())
}

/// `ochre session stop`: end a session's daemon (SIGTERM: its journal and
/// recordings are closed as at any stop), waiting until it has.
pub(crate) fn stop(name: &str) -> anyhow::Result<bool> {
    let paths = Paths::of(name)?;
    let Some(info) = paths.info() else { return Ok(false) };
    if !paths.daemon_alive() {
        let _ = std::fs::remove_file(&paths.info);
        let _ = std::fs::remove_file(&paths.socket);
        return Ok(false);
    }
    let pid = info["pid"].as_u64().and_then(|p| i32::try_from(p).ok()).context("its pid")?;
    let status = std::process::Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
    if !status.is_ok_and(|s| s.success()) {
        anyhow::bail!("session {name}: cannot signal its daemon (pid {pid})");
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while paths.daemon_alive() {
        if Instant::now() > deadline {
            anyhow::bail!("session {name}: its daemon (pid {pid}) did not end within 15 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(true)
}

/// Every session's name that has a record.
pub(crate) fn all_names() -> anyhow::Result<Vec<String>> {
    Ok(std::fs::read_dir(sessions_dir()?)?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(str::to_owned))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_are_checked_and_one_per_directory_by_default() {
        for bad in ["", ".x", "a/b", "a b", "../x", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["a", "agent-1", "my_app.v2"] {
            assert!(check_name(good).is_ok(), "{good:?}");
        }
        assert_eq!(session_name(Some("mine")).ok().as_deref(), Some("mine"));
        let here = session_name(None).expect("a name");
        assert!(check_name(&here).is_ok(), "{here}");
        assert_eq!(session_name(None).ok(), Some(here), "stable for one directory");
    }
}
