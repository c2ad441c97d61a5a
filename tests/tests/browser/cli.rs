//! The command line for coding agents, driven as an agent at a shell drives
//! it: the `ochre` binary run command by command (no MCP client here), each
//! session a daemon of its own. The guide's examples run as written against
//! the admin app (the books they add checked in its database); two sessions
//! work at once without seeing each other's tabs or cookies; a daemon killed
//! mid-command is said to be gone, the next command starts a new one, and the
//! journal it acknowledged is still there.

use anyhow::{Context, Result, ensure};
use ochre_host::stores::logins::LoginKey;
use ochre_tests::*;
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Output, Stdio};

const APP_PASSWORD: &str = "correct horse battery staple";

/// A shell's environment for ochre: one data dir, one sessions dir, the
/// login key, a working dir of its own.
struct Shell {
    data: TempDir,
    sessions: TempDir,
    cwd: TempDir,
    key: String,
}

impl Shell {
    fn new(name: &str) -> Result<Self> {
        Ok(Self {
            data: TempDir::new(&format!("{name}-data")),
            sessions: TempDir::new(&format!("{name}-sessions")),
            cwd: TempDir::new(&format!("{name}-cwd")),
            key: LoginKey::generate().map_err(anyhow::Error::msg)?.encoded(),
        })
    }

    /// `ochre ARGS` on session `session` (`None`: the working dir's).
    fn command(&self, session: Option<&str>, args: &[&str]) -> Command {
        let mut cmd = Command::new(ochre_bin());
        cmd.args(args)
            .current_dir(self.cwd.path())
            .env("OCHRE_HOME", self.data.path())
            .env("OCHRE_SESSION_DIR", self.sessions.path())
            .env("OCHRE_LOGIN_KEY", &self.key)
            .env_remove("OCHRE_SESSION")
            .stdin(Stdio::null());
        if let Some(s) = session {
            cmd.env("OCHRE_SESSION", s);
        }
        cmd
    }

    fn run(&self, session: Option<&str>, args: &[&str]) -> Result<Output> {
        Ok(self.command(session, args).output()?)
    }

    /// The stdout of a command that must succeed.
    fn ok(&self, session: Option<&str>, args: &[&str]) -> Result<String> {
        let out = self.run(session, args)?;
        ensure!(
            out.status.success(),
            "ochre {args:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Store the admin app's credential `library` (the password on stdin).
    fn store_credential(&self, origin: &str) -> Result<()> {
        let args = ["secret", "credential", "set", "library", "--origin", origin];
        let mut child = self
            .command(None, &args)
            .args(["--username", "admin"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        child.stdin.take().context("stdin")?.write_all(format!("{APP_PASSWORD}\n").as_bytes())?;
        let out = child.wait_with_output()?;
        ensure!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        Ok(())
    }

    /// The session's daemon pid, from `ochre session list --json`.
    fn daemon_pid(&self, session: &str) -> Result<u32> {
        let list: Value = serde_json::from_str(&self.ok(None, &["--json", "session", "list"])?)?;
        let row = list
            .as_array()
            .and_then(|l| l.iter().find(|r| r["name"] == session))
            .with_context(|| format!("session {session} in {list}"))?;
        ensure!(row["alive"] == true, "{row}");
        Ok(u32::try_from(row["pid"].as_u64().context("pid")?)?)
    }

    fn stop_all(&self) {
        let _ = self.run(None, &["session", "stop", "--all"]);
    }
}

/// Whether process `pid` holds a connected Unix socket.
fn connected_socket(pid: u32) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    let inodes: Vec<String> = fds
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let unix = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    // Num RefCount Protocol Flags Type St Inode [Path]
    unix.lines().skip(1).any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() >= 7 && f[5] == "03" && inodes.iter().any(|i| i == f[6])
    })
}

/// The ```sh blocks of the guide.
fn guide_blocks(guide: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in guide.lines() {
        match (&mut cur, line.trim_end()) {
            (None, "```sh") => cur = Some(String::new()),
            (Some(_), "```") => blocks.extend(cur.take()),
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

fn titles(app: &AdminApp) -> Result<Vec<Value>> {
    app.rows("select title, author, year from book order by id")
}

#[tokio::test]
async fn the_guide_runs_as_written_and_help_lists_every_command_it_names() -> Result<()> {
    let dir = TempDir::new("cli-guide-app");
    let app = AdminApp::start(dir.path()).await?;
    let shell = Shell::new("cli-guide")?;
    let guide = shell.ok(None, &["guide"])?;
    let blocks = guide_blocks(&guide);
    ensure!(blocks.len() >= 4, "the guide's examples: {blocks:?}");

    // Every block, as written but for the app's address, in a shell with
    // ochre on its PATH: each must succeed.
    let bin_dir = ochre_bin().parent().context("bin dir")?.to_owned();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut said = String::new();
    for (i, block) in blocks.iter().enumerate() {
        let script = block.replace("https://app.example", &app.base);
        let out = Command::new("bash")
            .args(["-e", "-o", "pipefail", "-c", &script])
            .current_dir(shell.cwd.path())
            .env("PATH", &path)
            .env("APP_PASSWORD", APP_PASSWORD)
            .env("OCHRE_HOME", shell.data.path())
            .env("OCHRE_SESSION_DIR", shell.sessions.path())
            .env("OCHRE_LOGIN_KEY", &shell.key)
            .env("OCHRE_SESSION", "guide")
            .stdin(Stdio::null())
            .output()?;
        let (stdout, stderr) =
            (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            shell.stop_all();
        }
        ensure!(
            out.status.success(),
            "the guide's block {i} failed:\n{script}\n{stdout}\n{stderr}"
        );
        said.push_str(&stdout);
        said.push_str(&stderr);
    }
    // What the examples did, checked in the app's database: the credential
    // signed in (one good login), the book was added.
    assert_eq!(app.rows("select username, ok from login_log")?, vec![json!(["admin", 1])]);
    assert_eq!(
        titles(&app)?,
        vec![
            json!(["Dune", "Frank Herbert", 1965]),
            json!(["The Left Hand of Darkness", "Ursula K. Le Guin", 1969]),
            // Recorded, then replayed.
            json!(["Kindred", "Octavia E. Butler", null]),
            json!(["Kindred", "Octavia E. Butler", null]),
        ]
    );
    // And what they printed: the snapshot's refs, the title read, the found
    // cell, the failing click's exit code, the screenshot.
    assert!(said.contains("textbox \"Username\" ax_"), "{said}");
    assert!(said.contains("Le Guin"), "{said}");
    assert!(said.contains("exit 1"), "the failing example: {said}");
    assert!(said.contains("{\"title\":"), "--json get title: {said}");
    // The recording, started and listed, told in lines.
    assert!(
        said.contains("recording rec-") && said.contains("\"add a book\": every command"),
        "{said}"
    );
    assert!(said.contains("\"add a book\": 4 steps, stopped, started "), "{said}");
    let png = std::fs::read(shell.cwd.path().join("books.png"))?;
    assert!(png.starts_with(b"\x89PNG"), "the screenshot");
    // The password is in no output and no file ochre wrote.
    assert!(!said.contains(APP_PASSWORD), "the password was shown");
    assert!(!read_all_text(shell.data.path()).contains(APP_PASSWORD), "the password in a file");

    // `ochre --help` lists every command the guide names.
    let help = shell.ok(None, &["--help"])?;
    let listed: Vec<&str> =
        help.lines().filter_map(|l| l.strip_prefix("  ")?.split_whitespace().next()).collect();
    let mut named: Vec<String> = guide
        .split("`ochre ")
        .skip(1)
        .chain(blocks.iter().flat_map(|b| b.lines()).filter_map(|l| l.strip_prefix("ochre ")))
        .filter_map(|rest| rest.split([' ', '`']).next())
        .filter(|w| !w.starts_with('-') && !w.is_empty())
        .map(str::to_owned)
        .collect();
    named.sort();
    named.dedup();
    ensure!(named.len() >= 20, "commands the guide names: {named:?}");
    // A word that is no command of the help's is a tool of `ochre tools`
    // (`read-page` for `read_page`, `handoff` for `oc_handoff`), which the
    // help's TOOL line names.
    ensure!(listed.contains(&"TOOL"), "`ochre --help` has no TOOL line:\n{help}");
    let tools = shell.ok(None, &["tools", "--json"])?;
    let tools: Vec<String> = serde_json::from_str::<Vec<Value>>(&tools)?
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    let mut as_tools = Vec::new();
    for cmd in named.iter().filter(|c| c.as_str() != "TOOL") {
        if listed.contains(&cmd.as_str()) {
            continue;
        }
        let snake = cmd.replace('-', "_");
        ensure!(
            tools.contains(&snake) || tools.contains(&format!("oc_{snake}")),
            "`ochre --help` does not list {cmd}, and no tool is named so:\n{help}"
        );
        as_tools.push(cmd.clone());
    }
    ensure!(as_tools.len() >= 3, "the guide's tool commands: {as_tools:?}");
    // `guide install`, twice, beside an AGENTS.md of the project's own: the
    // skill is the guide, and AGENTS.md keeps its text and one ochre block.
    std::fs::write(shell.cwd.path().join("AGENTS.md"), "# Our project\n\nRun make test.\n")?;
    for _ in 0..2 {
        shell.ok(None, &["guide", "install"])?;
    }
    let skill = std::fs::read_to_string(shell.cwd.path().join(".claude/skills/ochre/SKILL.md"))?;
    assert_eq!(skill, guide);
    let agents = std::fs::read_to_string(shell.cwd.path().join("AGENTS.md"))?;
    assert!(agents.starts_with("# Our project\n\nRun make test.\n"), "{agents}");
    assert_eq!(agents.matches("ochre guide: begin").count(), 1, "{agents}");
    assert!(agents.contains("ochre snapshot"), "{agents}");
    // The last block stopped the session: nothing runs on.
    let list = shell.ok(None, &["session", "list"])?;
    assert!(!list.contains("running"), "{list}");
    Ok(())
}

#[tokio::test]
async fn two_sessions_at_once_keep_apart_and_a_killed_daemon_is_replaced() -> Result<()> {
    let dir = TempDir::new("cli-two-app");
    let app = AdminApp::start(dir.path()).await?;
    let shell = std::sync::Arc::new(Shell::new("cli-two")?);
    shell.store_credential(&app.base)?;

    // Two agents at once, each signing in and adding a book in its own
    // session: one command by command, the other with a batch.
    let login = format!("{}/login", app.base);
    let new_book = format!("{}/admin/book/new/", app.base);
    let a = {
        let (shell, login, new_book) = (shell.clone(), login.clone(), new_book.clone());
        std::thread::spawn(move || -> Result<()> {
            let s = Some("a");
            shell.ok(s, &["open", &login])?;
            let said = shell.ok(s, &["sign-in", "library", "--submit"])?;
            ensure!(said.contains("typed credential library"), "{said}");
            shell.ok(s, &["open", &new_book])?;
            let snap = shell.ok(s, &["snapshot"])?;
            let title = ref_of(&snap, "textbox", "Title *");
            shell.ok(s, &["fill", &title, "Solaris"])?;
            shell.ok(s, &["fill", "label=Author *", "Stanisław Lem"])?;
            // Quiet: a done action prints nothing (the year is checked in
            // the database below); a failed one still says why, with its code.
            let said = shell.ok(s, &["-q", "fill", "Year", "1961"])?;
            ensure!(said.is_empty(), "a quiet fill printed {said:?}");
            let failed = shell.run(s, &["--quiet", "fill", "ax_999999", "x"])?;
            let why = String::from_utf8_lossy(&failed.stderr);
            ensure!(
                failed.status.code().is_some_and(|c| c != 0) && why.starts_with("error "),
                "a quiet fill on no element: {:?} {why}",
                failed.status
            );
            shell.ok(s, &["click", "role=button:Save"])?;
            Ok(())
        })
    };
    let b = {
        let (shell, login, new_book) = (shell.clone(), login.clone(), new_book.clone());
        std::thread::spawn(move || -> Result<()> {
            let lines = format!(
                "open {login}\nsign-in library --submit\nopen {new_book}\n\
                 fill 'Title' Kindred\nfill Author 'Octavia E. Butler'\nfill Year 1979\n\
                 click 'role=button:Save'\n"
            );
            let mut child = shell
                .command(Some("b"), &["batch"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()?;
            child.stdin.take().context("stdin")?.write_all(lines.as_bytes())?;
            let out = child.wait_with_output()?;
            ensure!(
                out.status.success(),
                "batch: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            Ok(())
        })
    };
    let (ra, rb) = (a.join(), b.join());
    let done = ra
        .map_err(|_| anyhow::anyhow!("a panicked"))?
        .and(rb.map_err(|_| anyhow::anyhow!("b panicked"))?);
    if done.is_err() {
        shell.stop_all();
    }
    done?;
    let mut books = titles(&app)?;
    books.sort_by_key(|v| v[0].as_str().unwrap_or_default().to_owned());
    assert_eq!(
        books,
        vec![
            json!(["Dune", "Frank Herbert", 1965]),
            json!(["Kindred", "Octavia E. Butler", 1979]),
            json!(["Solaris", "Stanisław Lem", 1961]),
        ]
    );
    assert_eq!(app.rows("select count(*) from login_log where ok")?, vec![json!([2])]);
    // Read back where each agent is: the list its save led to.
    let found = shell.ok(Some("a"), &["find", "Solaris"])?;
    assert!(found.contains("Solaris") && found.contains("ax_"), "{found}");
    let text = shell.ok(Some("b"), &["get", "text"])?;
    assert!(text.contains("Kindred") && text.contains("Octavia E. Butler"), "{text}");

    // Neither sees the other's cookies: b signs out, a is still signed in.
    shell.ok(Some("b"), &["open", &format!("{}/logout", app.base)])?;
    let url_b = shell.ok(Some("b"), &["get", "url"])?;
    assert!(url_b.trim().ends_with("/login"), "{url_b}");
    shell.ok(Some("a"), &["open", &format!("{}/admin/book/", app.base)])?;
    let url_a = shell.ok(Some("a"), &["get", "url"])?;
    assert!(url_a.trim().ends_with("/admin/book/"), "a was signed out with b: {url_a}");
    // Nor its tabs: each lists its own one tab.
    for (s, url) in [("a", url_a.trim()), ("b", url_b.trim())] {
        let tabs: Value = serde_json::from_str(&shell.ok(Some(s), &["--json", "tabs"])?)?;
        let urls: Vec<&str> = tabs["tabs"]
            .as_array()
            .context("tabs")?
            .iter()
            .filter_map(|t| t["url"].as_str())
            .collect();
        assert_eq!(urls, [url], "session {s}'s tabs: {tabs}");
    }

    // A client that keeps a connection to the daemon open (an MCP client on
    // the socket) holds no command up: calls queue, connections do not.
    let held = std::os::unix::net::UnixStream::connect(shell.sessions.path().join("a.sock"))?;
    let url = shell.ok(Some("a"), &["get", "url"])?;
    assert_eq!(url.trim(), url_a.trim());
    drop(held);

    // Session a's daemon killed (SIGKILL) while a command waits on it: the
    // command says so, with exit 4.
    let pid = shell.daemon_pid("a")?;
    let child = shell
        .command(Some("a"), &["wait", "--ms", "20000", "--timeout", "30000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Killed once the command has connected: its own socket is connected
    // (state 03 in /proc/net/unix), whatever other connections there are.
    let command_pid = child.id();
    eventually(
        "the command's connection to the daemon",
        std::time::Duration::from_secs(10),
        || async move { Ok(connected_socket(command_pid)) },
    )
    .await?;
    // Then the daemon answers its greeting before it takes the command: a
    // kill before that answer is a command it never took, which the command
    // line rightly runs on a new daemon (so CI once saw exit 0 here). The
    // greeting takes milliseconds; the wait is 20 s: killed a second in.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    ensure!(Command::new("kill").args(["-9", &pid.to_string()]).status()?.success());
    let out = child.wait_with_output()?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("went away") && err.contains("not known"), "{err}");

    // The next command starts a new daemon and says so; the journal holds
    // what the old one acknowledged.
    let out = shell.run(Some("a"), &["get", "url"])?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is gone; starting a new one"), "{err}");
    // Its browser is new: no tab (said as such, exit 1) until one is opened.
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("TAB_NOT_FOUND") && err.contains("ochre open URL"), "{err}");
    shell.ok(Some("a"), &["open", &login])?;
    assert_ne!(shell.daemon_pid("a")?, pid);
    let journal: Value = serde_json::from_str(
        &shell.ok(Some("a"), &["--json", "call", "oc_journal", "action=recent", "limit:=100"])?,
    )?;
    let text = journal.to_string();
    for tool in ["oc_credential_fill", "form_input", "fill_form", "interact", "navigate"] {
        assert!(text.contains(tool), "{tool} is not in the journal: {text}");
    }
    assert!(!text.contains(APP_PASSWORD));

    // A usage error changes nothing and says which argument: exit 2.
    let out = shell.run(Some("a"), &["call", "navigate", "url:=3"])?;
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let out = shell.run(Some("a"), &["type", "Title", "x"])?;
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    shell.stop_all();
    let list = shell.ok(None, &["session", "list"])?;
    assert!(!list.contains("running"), "{list}");
    Ok(())
}

/// A command that reaches a daemon as it ends (its socket took the
/// connection and it never read it: it was being killed, or was stopping)
/// was not run: once that daemon has ended (its lock free) the command goes
/// to a new one and says so, as it would a moment later; while the old one
/// still holds the session it says the command was not run (exit 4). The
/// ending daemon is the test's own: a socket nobody reads, and the lock.
#[tokio::test]
async fn a_command_that_reaches_an_ending_daemon_runs_on_a_new_one() -> Result<()> {
    use std::os::unix::net::UnixListener;
    let shell = Shell::new("cli-ending")?;
    let dir = shell.sessions.path();
    let mut gone = Command::new("true").spawn()?;
    let pid = gone.id();
    gone.wait()?;
    std::fs::write(dir.join("e.json"), json!({"pid": pid}).to_string())?;
    // The daemon ends: its socket closes with the connection unread, then
    // (`hold`) its lock is let go.
    let reached = |hold: std::time::Duration| -> Result<Output> {
        let lock = std::fs::File::create(dir.join("e.lock"))?;
        lock.lock()?;
        let listener = UnixListener::bind(dir.join("e.sock"))?;
        let child = shell
            .command(Some("e"), &["get", "url"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let by = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !connected_socket(child.id()) {
            ensure!(std::time::Instant::now() < by, "the command never connected");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        drop(listener);
        std::thread::sleep(hold);
        drop(lock);
        let _ = std::fs::remove_file(dir.join("e.sock"));
        Ok(child.wait_with_output()?)
    };

    // Still holding the session 3 s on: not run, said so.
    let out = reached(std::time::Duration::from_secs(4))?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("before it took the command") && err.contains("was not run"), "{err}");

    // Ended at once: the command runs on a new daemon (its browser has no
    // tab yet: said as such, exit 1).
    let out = reached(std::time::Duration::ZERO)?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("(pid {pid}) is gone; starting a new one")), "{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("TAB_NOT_FOUND"), "{err}");
    assert_ne!(shell.daemon_pid("e")?, pid);
    shell.stop_all();
    Ok(())
}

/// Every tool is a command, its flags read from the tool's schema: a page
/// opened and a form filled through the tools' own names (what the page
/// received checked at its server), a plugin's tool without its `oc_`,
/// `--json` after the tool's name, the help from the schema; wrong flags and
/// a mistyped word are usage errors that reach nothing. (Multi-threaded: the
/// page's server answers while a command blocks the test's thread.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_is_a_command_its_flags_read_from_its_schema() -> Result<()> {
    let site = SiteServer::start().await?;
    let shell = Shell::new("cli-tools")?;
    let s = Some("tools");
    let said = shell.ok(s, &["navigate", "--url", &site.url("fields.html")])?;
    // The tab's answer as one line, as `snapshot` heads a page.
    let first = said.lines().next().unwrap_or_default();
    let line = format!("t1 {} \"What fields hold\"; wall: a login form", site.url("fields.html"));
    ensure!(first == line, "{said}");
    ensure!(site.requests().iter().any(|r| r == "GET /fields.html"), "{:?}", site.requests());
    // An object parameter as JSON; a true-or-false one alone.
    shell.ok(s, &["fill-form", "--fields", r#"{"Name": "Ada", "Terms": true}"#])?;
    site.expect_recorded("value=Ada").await?;
    site.expect_recorded("field=terms&value=true").await?;
    // A reader that went away first (`ochre snapshot | head`): the answer's
    // command ends quietly with 141, as a shell tool; the session serves on.
    let (reader, writer) = std::io::pipe()?;
    drop(reader);
    let out = shell.command(s, &["snapshot"]).stdout(writer).stderr(Stdio::piped()).output()?;
    let err = String::from_utf8_lossy(&out.stderr);
    ensure!(out.status.code() == Some(141) && err.is_empty(), "{:?}: {err}", out.status);
    ensure!(shell.ok(s, &["snapshot"])?.contains("What fields hold"));
    // The daemon's binary replaced since it started (ochre rebuilt or
    // upgraded; here its recorded time is moved back): each command still
    // runs, and says how to start the new one; the list marks it.
    let file = shell.sessions.path().join("tools.json");
    let mut info: Value = serde_json::from_slice(&std::fs::read(&file)?)?;
    ensure!(info["server_modified_ns"].as_u64().is_some(), "{info}");
    let out = shell.run(s, &["snapshot"])?;
    ensure!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    info["server_modified_ns"] = json!(1);
    std::fs::write(&file, serde_json::to_vec(&info)?)?;
    let out = shell.run(s, &["snapshot"])?;
    let err = String::from_utf8_lossy(&out.stderr);
    ensure!(out.status.success(), "{err}");
    ensure!(String::from_utf8_lossy(&out.stdout).contains("What fields hold"));
    ensure!(
        err.contains("rebuilt or upgraded") && err.contains("ochre session stop tools"),
        "{err}"
    );
    let list: Value = serde_json::from_str(&shell.ok(None, &["--json", "session", "list"])?)?;
    ensure!(list.to_string().contains("\"replaced\":true"), "{list}");

    let help = shell.ok(s, &["fill-form", "--help"])?;
    for flag in ["--fields", "--refs", "--submit", "--tab-id"] {
        ensure!(help.contains(flag), "{help}");
    }

    // Refused before any call: nothing reaches the page or the journal.
    let before = (site.requests().len(), site.recorded().len());
    for (args, says) in [
        (vec!["fill-form", "--feilds", "{}"], "no flag --feilds; this tool takes"),
        (vec!["navigate", "--url"], "--url takes a value"),
        (vec!["oc-journal", "--count", "many"], "--count takes a number"),
        (vec!["navigat", "--url", "x"], "did you mean `ochre navigate`"),
    ] {
        let out = shell.run(s, &args)?;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!((site.requests().len(), site.recorded().len()), before);

    // A plugin's tool by its name without `oc_`, `--json` after it.
    let journal: Value = serde_json::from_str(
        &shell.ok(s, &["journal", "--action", "recent", "--count", "20", "--json"])?,
    )?;
    let text = journal.to_string();
    assert_eq!(text.matches("\"fill_form\"").count(), 1, "{text}");
    assert!(text.contains("\"navigate\"") && !text.contains("Ada"), "{text}");
    shell.stop_all();
    Ok(())
}

/// JavaScript dialogs from the shell: an action that opens one says so and
/// how to answer it (`ochre dialog accept|dismiss`, never in the tools'
/// words), so does every command the dialog then blocks; `ochre dialog`
/// answers an alert, a confirm, a prompt (its text never printed nor
/// journaled) and a page asking before it is left. A tab a page opens is
/// named with `--tab`. What the page saw is checked at its server.
/// (Multi-threaded: the page's server answers while a command blocks the
/// test's thread.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_are_answered_from_the_command_line() -> Result<()> {
    let site = SiteServer::start().await?;
    let shell = Shell::new("cli-dialogs")?;
    let s = Some("dialogs");
    shell.ok(s, &["open", &site.url("dialogs.html")])?;

    // An alert: the click says the page opened it, and how to answer it.
    let said = shell.ok(s, &["click", "Show alert"])?;
    ensure!(said.contains("the page opened an alert dialog: \"Saved!\""), "{said}");
    ensure!(
        said.contains(
            "Answer it with `ochre --tab t1 dialog accept` or `ochre --tab t1 dialog dismiss`"
        ),
        "{said}"
    );
    // In the command line's words only: no tool name, no tool argument.
    ensure!(!said.contains("handle_dialog") && !said.contains("accept: true"), "{said}");
    // A command the dialog blocks fails at once, saying the same.
    let out = shell.run(s, &["snapshot"])?;
    let err = String::from_utf8_lossy(&out.stderr);
    ensure!(out.status.code() == Some(1), "{:?}: {err}", out.status);
    ensure!(err.contains("error DIALOG_OPEN: an alert dialog is open on t1: \"Saved!\""), "{err}");
    ensure!(err.contains("`ochre --tab t1 dialog accept`"), "{err}");
    ensure!(!err.contains("handle_dialog"), "{err}");
    let said = shell.ok(s, &["dialog", "accept"])?;
    ensure!(said.contains("accepted the alert dialog \"Saved!\" on t1"), "{said}");
    site.expect_recorded("alert=closed").await?;

    // A confirm, dismissed: the page's confirm() returns false.
    shell.ok(s, &["click", "Delete file"])?;
    shell.ok(s, &["dialog", "dismiss"])?;
    site.expect_recorded("confirm=false").await?;

    // A prompt, answered with text (offered as TEXT in the hint).
    let said = shell.ok(s, &["click", "Ask name"])?;
    ensure!(said.contains("`ochre --tab t1 dialog accept [TEXT]`"), "{said}");
    ensure!(!said.contains("promptText"), "{said}");
    let said = shell.ok(s, &["dialog", "accept", "Ada Lovelace"])?;
    ensure!(said.contains("with the given text") && !said.contains("Ada"), "{said}");
    site.expect_recorded("prompt=Ada Lovelace").await?;

    // No dialog open: a clear error, and nothing reaches the page.
    let before = site.recorded().len();
    let out = shell.run(s, &["dialog", "dismiss"])?;
    let err = String::from_utf8_lossy(&out.stderr);
    ensure!(out.status.code() == Some(1) && err.contains("error NO_DIALOG"), "{err}");
    ensure!(site.recorded().len() == before, "{:?}", site.recorded());

    // A page that asks before it is left: dismissed, the tab stays; accepted,
    // it goes.
    shell.ok(s, &["click", "Start editing"])?;
    site.expect_recorded("armed=1").await?;
    let said = shell.ok(s, &["open", &site.url("page2.html")])?;
    ensure!(said.contains("beforeunload"), "{said}");
    ensure!(said.contains("dialog dismiss"), "{said}");
    shell.ok(s, &["dialog", "dismiss"])?;
    ensure!(shell.ok(s, &["get", "url"])?.trim() == site.url("dialogs.html"));
    shell.ok(s, &["open", &site.url("page2.html")])?;
    shell.ok(s, &["dialog", "accept"])?;
    ensure!(shell.ok(s, &["get", "url"])?.trim() == site.url("page2.html"));
    ensure!(site.requests().iter().any(|r| r == "GET /page2.html"), "{:?}", site.requests());

    // A page the server answers with an error: the line says its status.
    let said = shell.ok(s, &["open", &site.url("no-such-page.html")])?;
    let line = format!("t1 {} \"\"; status: 404", site.url("no-such-page.html"));
    ensure!(said.trim() == line, "{said}");

    // A tab the page opens: the line says how to act on it, in commands.
    shell.ok(s, &["open", &site.url("popups.html")])?;
    let said = shell.ok(s, &["click", "Open page two in a new tab"])?;
    let opened = format!(
        "opened tab t2 \"Page two\" ({}) from t1; act on it with `ochre --tab t2 ...`",
        site.url("page2.html")
    );
    ensure!(said.contains(&opened) && !said.contains("tabId"), "{said}");
    ensure!(shell.ok(s, &["--tab", "t2", "get", "title"])?.trim() == "Page two");

    // The prompt's answer is in no file ochre wrote.
    ensure!(!read_all_text(shell.data.path()).contains("Ada Lovelace"), "the answer leaked");
    shell.stop_all();
    Ok(())
}
