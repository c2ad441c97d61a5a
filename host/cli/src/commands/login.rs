//! `ochre login keygen|list|show|delete`: the named logins (sessions' storage
//! states, sealed with the operator's key; see `ochre_host::stores::logins`).

use ochre_host::stores::logins::{LoginKey, LoginStore, LoginSummary};

use crate::{Cli, LoginCommand};

/// `ochre login keygen|list|show|delete`.
pub(crate) fn login(cli: &Cli, command: &LoginCommand) -> anyhow::Result<()> {
    if let LoginCommand::Keygen = command {
        // To stdout alone, so that it can go straight to a file or a vault.
        println!("{}", LoginKey::generate().map_err(|e| anyhow::anyhow!("{e}"))?.encoded());
        eprintln!(
            "a new login key: keep it outside the data dir (a file for --login-key-file, \
             or OCHRE_LOGIN_KEY in the server's environment); logins saved with it open \
             with it alone"
        );
        return Ok(());
    }
    // Listing, showing and deleting need no key.
    let store = LoginStore::new(&cli.host.data_dir(), None);
    let said = |e: ochre_host::ToolError| anyhow::anyhow!("{}", e.message);
    match command {
        LoginCommand::Keygen => {}
        LoginCommand::List { json } => {
            let all = store.list().map_err(said)?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&all)?);
            } else if all.is_empty() {
                eprintln!("no saved logins");
            }
            for l in all.iter().filter(|_| !*json) {
                println!("{}\t{}\t{}", l.name, l.saved_at, l.origins.join(", "));
            }
        }
        LoginCommand::Show { name } => show(&store.show(name).map_err(said)?),
        LoginCommand::Delete { name } => {
            anyhow::ensure!(store.delete(name).map_err(said)?, "no login named {name:?}");
            eprintln!("deleted the login {name}");
        }
    }
    Ok(())
}

/// A login's summary: its origins and its cookies' names, never a value.
fn show(l: &LoginSummary) {
    println!("name: {}", l.name);
    println!("saved: {}", l.saved_at);
    println!("origins (localStorage, {} entries):", l.storage_entries);
    for o in &l.origins {
        println!("  {o}");
    }
    println!("cookies ({}):", l.cookies.len());
    for c in &l.cookies {
        println!("  {c}");
    }
    if !l.indexed_db.is_empty() {
        println!("IndexedDB ({} databases):", l.indexed_db.len());
        for d in &l.indexed_db {
            println!("  {d}");
        }
    }
    if l.indexed_db_skipped > 0 {
        println!("not saved: {} IndexedDB records holding a Blob", l.indexed_db_skipped);
    }
}
