//! `ochre secret set|remove|list`: the secrets store.

use crate::{Cli, SecretCommand};

/// `ochre secret set|remove|list`.
pub(crate) fn secret(cli: &Cli, command: &SecretCommand) -> anyhow::Result<()> {
    use ochre_host::pipeline::redact::SECRET_NAMESPACE as NS;
    let store = ochre_host::stores::secrets::SecretStore::new(&cli.host.data_dir());
    let check = |name: &str| -> anyhow::Result<String> {
        let name = name.trim();
        let ok = !name.is_empty()
            && name.len() <= 128
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
        anyhow::ensure!(ok, "a secret's name is 1-128 chars of [A-Za-z0-9_.-]");
        Ok(name.to_owned())
    };
    match command {
        SecretCommand::Set { name, value } => {
            let name = check(name)?;
            let value = match value {
                Some(v) => v.clone(),
                None => {
                    let mut s = String::new();
                    std::io::stdin().read_line(&mut s)?;
                    s.trim_end_matches(['\r', '\n']).to_owned()
                }
            };
            anyhow::ensure!(!value.is_empty(), "the secret is empty");
            store.set(NS, &name, &value)?;
            eprintln!(
                "stored the secret {name} in {}; replays and plans take it as \"secret:{name}\"",
                store.path().display()
            );
        }
        SecretCommand::Remove { name } => {
            let name = check(name)?;
            anyhow::ensure!(store.remove(NS, &name)?, "no secret {name} is stored");
            eprintln!("removed the secret {name}");
        }
        SecretCommand::List => {
            for key in store.keys(NS)? {
                println!("{key}");
            }
        }
    }
    Ok(())
}
