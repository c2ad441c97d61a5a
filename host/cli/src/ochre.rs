//! `ochre`: the command line. The commands that only talk to a session's
//! daemon (browsing, the tools as commands, `batch`, `session`) run here, in a process small enough
//! to start in about a millisecond: a coding agent runs one per step. Every
//! other command (serving MCP, plugins, logins, secrets, the doctor, the
//! guide) and a session's daemon are `ochre-server`'s, the binary installed
//! beside this one: this process becomes it, with the same arguments.

mod args;
mod commands {
    pub(crate) mod browse;
    pub(crate) mod client;
    pub(crate) mod session;
    pub(crate) mod tool;
}

use args::*;

fn main() -> std::process::ExitCode {
    let cli = parse_cli();
    if let Some(done) = commands::client::run_client(&cli) {
        return commands::client::exit_code(done);
    }
    commands::client::exit_code(become_server())
}

/// `ochre-server`, beside this binary.
pub(crate) fn server_exe() -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context as _;
    let exe = std::env::current_exe().context("finding the ochre binary")?;
    let server = exe.with_file_name("ochre-server");
    anyhow::ensure!(
        server.is_file(),
        "{} is missing: ochre's server is installed beside the ochre command (reinstall ochre)",
        server.display()
    );
    Ok(server)
}

/// Replace this process with `ochre-server`, given this one's arguments (its
/// name in messages stays `ochre`).
fn become_server() -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt as _;
    let server = server_exe()?;
    let err =
        std::process::Command::new(&server).arg0("ochre").args(std::env::args_os().skip(1)).exec();
    Err(anyhow::anyhow!("starting {}: {err}", server.display()))
}
