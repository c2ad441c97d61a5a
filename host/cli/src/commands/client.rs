//! The commands `ochre` runs itself, without the server (browsing, the tools
//! as commands, `batch`, `session`): a few lines on the session's socket. Shared by the `ochre`
//! command and `ochre-server` (which runs them too when named).

use super::browse::{self, ToolFailed, exit};
use super::{session, tool};
use crate::{CheckFailed, Cli, Command, ServerRefused, SessionCommand};

/// The command line's client commands (browsing, `batch`, `session`), run
/// without a runtime; `None` for the others (the server's).
pub(crate) fn run_client(cli: &Cli) -> Option<anyhow::Result<()>> {
    if cli.session_daemon.is_some() {
        return None;
    }
    Some(match cli.command.as_ref()? {
        Command::Browse(cmd) => browse::Conn::new(cli).and_then(|mut c| c.run(cmd)),
        Command::Tool(words) => tool::run(cli, words),
        Command::Batch { file, keep_going } => browse::batch(cli, file.as_deref(), *keep_going),
        Command::Session { command: SessionCommand::List } => session::list(cli.json),
        Command::Session { command: SessionCommand::Stop { name, all } } => stop(cli, name, *all),
        _ => return None,
    })
}

fn stop(cli: &Cli, name: &Option<String>, all: bool) -> anyhow::Result<()> {
    let names = if all {
        session::all_names()?
    } else {
        vec![session::session_name(name.as_deref().or(cli.session.as_deref()))?]
    };
    for name in names {
        session::check_name(&name)?;
        if session::stop(&name)? {
            crate::say!("session {name}: stopped");
        } else {
            crate::say!("session {name}: not running");
        }
    }
    Ok(())
}

/// A command's exit code by its error's class (docs/cli.md), its error
/// printed as one clean line (with its causes), never a backtrace.
pub(crate) fn exit_code(result: anyhow::Result<()>) -> std::process::ExitCode {
    // What it printed did not all get out (see `crate::say!`): an error of
    // its own, unless one came first.
    let result = match (result, crate::stdout_error()) {
        (Ok(()), Some(e)) => {
            Err(std::io::Error::new(e.kind(), format!("writing the output: {e}")).into())
        }
        (result, _) => result,
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // Printed already, as the tool answered.
        Err(e) if e.is::<ToolFailed>() => std::process::ExitCode::from(
            e.downcast_ref::<ToolFailed>().map_or(exit::FAILED, |t| t.code),
        ),
        // Its reader went away (`ochre snapshot | head`): nothing to say to it.
        Err(e) if closed_stdout(&e) => std::process::ExitCode::from(exit::CLOSED),
        Err(e) => {
            eprintln!("error: {e:#}");
            // A check that ran and found a problem (`ochre doctor`): 1, as
            // its help says; the command line's classes; 2 for a command
            // that could not run.
            std::process::ExitCode::from(if e.is::<CheckFailed>() {
                1
            } else if e.is::<session::DaemonLost>() {
                exit::DAEMON
            } else if e.is::<ServerRefused>() {
                exit::SERVER
            } else {
                exit::USAGE
            })
        }
    }
}

/// The error is a write to a closed pipe.
fn closed_stdout(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
