//! The `ochre` commands, one file each; `main.rs` holds their arguments.

pub(crate) mod browse;
pub(crate) mod doctor;
pub(crate) mod guide;
pub(crate) mod login;
pub(crate) mod plugin;
pub(crate) mod secret;
pub(crate) mod serve;
pub(crate) mod session;
pub(crate) mod tool;
pub(crate) mod tools;
pub(crate) mod totp;

use crate::{Cli, Command, GuideCommand, SessionCommand};

/// The command line's client commands (browsing, `batch`, `session`,
/// `guide`), run without a runtime; `None` for the others.
pub(crate) fn run_client(cli: &Cli) -> Option<anyhow::Result<()>> {
    Some(match cli.command.as_ref()? {
        Command::Browse(cmd) => browse::Conn::new(cli).and_then(|mut c| c.run(cmd)),
        Command::Tool(words) => tool::run(cli, words),
        Command::Batch { file, keep_going } => browse::batch(cli, file.as_deref(), *keep_going),
        Command::Session { command: SessionCommand::List } => session::list(cli.json),
        Command::Session { command: SessionCommand::Stop { name, all } } => stop(cli, name, *all),
        Command::Guide { command: None } => {
            print!("{}", guide::GUIDE);
            Ok(())
        }
        Command::Guide { command: Some(GuideCommand::Install { dir, no_agents_md }) } => {
            guide::install(dir, !no_agents_md)
        }
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
            println!("session {name}: stopped");
        } else {
            println!("session {name}: not running");
        }
    }
    Ok(())
}
