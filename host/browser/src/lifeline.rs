//! A managed browser never outlives its server.
//!
//! - **While the server lives**, Chromium is started through a launcher: the
//!   server's own executable, run with [`LAUNCHER_ENV`] set, asks the kernel to
//!   kill it when its parent dies (`PR_SET_PDEATHSIG`, Linux) and then becomes
//!   Chromium ([`exec_browser_if_asked`]). A `kill -9` of the server takes its
//!   browser with it.
//! - **After a crash** (or where the kernel cannot help), each launch leaves a
//!   record in `<data-dir>/run/<server pid>.json`: the server's pid and start
//!   time, the browser's pid, the temporary profile. The next server with that
//!   data dir finds the records of servers that are gone, kills what is left of
//!   their browsers and removes their temporary profiles
//!   ([`clean_after_dead_servers`]). A clean exit removes its own record.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Set (to the browser's executable) when the launcher should become the browser.
pub const LAUNCHER_ENV: &str = "OCHRE_LAUNCH_BROWSER";
/// The pid of the server that started the launcher (the launcher gives up if
/// its parent is already another process).
const PARENT_ENV: &str = "OCHRE_LAUNCH_PARENT";

/// Call first thing in `main` of a binary given as
/// [`super::BrowserOptions::launcher`]: when the process was started as the
/// browser's launcher it becomes the browser, bound to die with its parent, and
/// never returns; otherwise it returns at once.
pub fn exec_browser_if_asked() {
    let Some(exe) = std::env::var_os(LAUNCHER_ENV) else {
        return;
    };
    #[cfg(target_os = "linux")]
    if let Err(e) = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL) {
        eprintln!("ochre: the browser will not die with the server: {e}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // The server may have died before the line above took effect.
        let parent = std::env::var(PARENT_ENV).ok().and_then(|p| p.parse::<u32>().ok());
        if parent.is_some_and(|p| p != std::os::unix::process::parent_id()) {
            std::process::exit(1);
        }
        let err = std::process::Command::new(&exe)
            .args(std::env::args_os().skip(1))
            .env_remove(LAUNCHER_ENV)
            .env_remove(PARENT_ENV)
            .exec();
        eprintln!("ochre: cannot start the browser {}: {err}", Path::new(&exe).display());
        std::process::exit(127);
    }
    #[cfg(not(unix))]
    {
        let _ = exe;
        std::process::exit(127);
    }
}

/// The environment a launcher needs to start `exe` for this server.
pub(super) fn launcher_env(exe: &Path) -> [(String, String); 2] {
    [
        (LAUNCHER_ENV.into(), exe.display().to_string()),
        (PARENT_ENV.into(), std::process::id().to_string()),
    ]
}

/// What a server left running.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    server_pid: u32,
    /// The server's start time in clock ticks since boot (`/proc/PID/stat`):
    /// a new process with a recycled pid is not the server.
    server_started: Option<u64>,
    browser_pid: Option<u32>,
    /// The browser's profile dir (its command line names it).
    profile: Option<PathBuf>,
    /// Whether the profile is a temporary one, to remove (never a user's
    /// `--user-data-dir`).
    temporary: bool,
    /// The machine the server ran on (a data dir shared by the replicas of a
    /// server tier may be seen from several): only that machine's servers
    /// clean up after it, since its pids mean nothing elsewhere.
    #[serde(default)]
    host: Option<String>,
}

/// This machine's name (`/proc/sys/kernel/hostname`).
fn this_host() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|h| h.trim().to_owned())
}

/// A process's start time in clock ticks since boot, if it runs (not a zombie).
fn started(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields after it.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.first() == Some(&"Z") || fields.first() == Some(&"X") {
        return None;
    }
    // Field 22 of the line, 20th after the name.
    fields.get(19)?.parse().ok()
}

fn record_path(run_dir: &Path) -> PathBuf {
    match this_host() {
        Some(h)
            if !h.is_empty()
                && h.len() <= 64
                && h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') =>
        {
            run_dir.join(format!("{h}-{}.json", std::process::id()))
        }
        _ => run_dir.join(format!("{}.json", std::process::id())),
    }
}

/// Note this server's browser (`None`: it has none now).
pub(super) fn write_record(
    run_dir: &Path,
    browser_pid: Option<u32>,
    profile: Option<&Path>,
    temporary: bool,
) {
    let record = Record {
        server_pid: std::process::id(),
        server_started: started(std::process::id()),
        browser_pid,
        profile: profile.map(Path::to_path_buf),
        temporary,
        host: this_host(),
    };
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(run_dir)?;
        let body = serde_json::to_vec(&record).unwrap_or_default();
        ochre_protocol::fs::write_atomic(&record_path(run_dir), &body)
    };
    if let Err(e) = write() {
        tracing::warn!(error = %e, dir = %run_dir.display(), "cannot record the browser's pid");
    }
}

/// This server's browser is gone (a clean exit).
pub(super) fn remove_record(run_dir: &Path) {
    let _ = std::fs::remove_file(record_path(run_dir));
}

/// Whether `pid` runs a browser with `profile` (its command line names it).
fn runs_profile(pid: u32, profile: Option<&Path>) -> bool {
    let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let cmd = String::from_utf8_lossy(&cmd);
    match profile {
        Some(p) => cmd.contains(&format!("--user-data-dir={}", p.display())),
        None => false,
    }
}

/// Clean up after the servers of this data dir that died without doing it
/// themselves: kill what is left of their browsers, remove their temporary
/// profiles and their records. One line per server cleaned up.
pub fn clean_after_dead_servers(run_dir: &Path) -> Vec<String> {
    let mut done = Vec::new();
    let Ok(entries) = std::fs::read_dir(run_dir) else {
        return done;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let Some(record) =
            std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<Record>(&b).ok())
        else {
            // A torn record (the server died writing it) names nothing to clean.
            let _ = std::fs::remove_file(&path);
            continue;
        };
        if record.host.is_some() && record.host != this_host() {
            continue;
        }
        let alive = started(record.server_pid)
            .is_some_and(|t| record.server_started.is_none_or(|s| s == t));
        if alive {
            continue;
        }
        let mut what = Vec::new();
        if let Some(pid) = record.browser_pid
            && started(pid).is_some()
            && runs_profile(pid, record.profile.as_deref())
        {
            #[cfg(unix)]
            {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            what.push(format!("killed its browser (pid {pid})"));
        }
        if let Some(p) = record.profile.as_ref().filter(|_| record.temporary)
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(super::TEMP_PROFILE_PREFIX))
            && p.exists()
        {
            // The browser may take a moment to die and stop writing there.
            for _ in 0..20 {
                if std::fs::remove_dir_all(p).is_ok() || !p.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            what.push(format!("removed its profile {}", p.display()));
        }
        let _ = std::fs::remove_file(&path);
        if !what.is_empty() {
            done.push(format!("server {} had died: {}", record.server_pid, what.join(", ")));
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_live_servers_are_kept_and_dead_ones_cleaned() {
        let dir = std::env::temp_dir().join(format!("ochre-lifeline-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // This process: alive, kept.
        write_record(&dir, None, None, false);
        // A server that is gone, with a temporary profile left behind.
        let profile = std::env::temp_dir().join(format!(
            "{}lifeline-test-{}",
            super::super::TEMP_PROFILE_PREFIX,
            std::process::id()
        ));
        std::fs::create_dir_all(profile.join("Default")).unwrap_or_default();
        let dead = Record {
            server_pid: u32::MAX - 7,
            server_started: Some(1),
            browser_pid: None,
            profile: Some(profile.clone()),
            temporary: true,
            host: this_host(),
        };
        let body = serde_json::to_vec(&dead).unwrap_or_default();
        std::fs::write(dir.join("4294967288.json"), body).unwrap_or_default();
        // Another machine's server sharing the data dir: its pid means nothing
        // here, and its record stays.
        let elsewhere = Record { host: Some("elsewhere.example".into()), ..dead };
        let body = serde_json::to_vec(&elsewhere).unwrap_or_default();
        std::fs::write(dir.join("elsewhere.example-4294967288.json"), body).unwrap_or_default();
        std::fs::write(dir.join("torn.json"), b"{\"server_pid\": 12").unwrap_or_default();
        let done = clean_after_dead_servers(&dir);
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(done[0].contains("removed its profile"), "{done:?}");
        assert!(!profile.exists());
        assert!(!dir.join("4294967288.json").exists());
        assert!(!dir.join("torn.json").exists());
        assert!(dir.join("elsewhere.example-4294967288.json").exists());
        assert!(record_path(&dir).exists(), "the live server's record was removed");
        remove_record(&dir);
        assert!(!record_path(&dir).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
