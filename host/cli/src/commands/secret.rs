//! `ochre secret set|remove|list`: the secrets store.

use ochre_host::stores::credentials::{CredentialSecret, CredentialStore, CredentialSummary};

use crate::{Cli, CredentialCommand, SecretCommand};

/// `ochre secret set|remove|list`.
pub(crate) fn secret(cli: &Cli, command: &SecretCommand) -> anyhow::Result<()> {
    use ochre_host::pipeline::redact::SECRET_NAMESPACE as NS;
    let store = ochre_host::stores::secrets::SecretStore::new(&cli.host.data_dir())
        .with_key(cli.host.login_key()?);
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
        SecretCommand::Seal => {
            anyhow::ensure!(
                cli.host.login_key()?.is_some(),
                "secrets are sealed with the login key: set OCHRE_LOGIN_KEY or pass \
                 --login-key-file (`ochre login keygen` makes one)"
            );
            store.rewrite()?;
            eprintln!("sealed {} with the login key", store.path().display());
        }
        SecretCommand::List => {
            for key in store.keys(NS)? {
                crate::say!("{key}");
            }
        }
        SecretCommand::Credential { command } => credential(cli, command)?,
    }
    Ok(())
}

/// `ochre secret credential set|list|show|remove`.
fn credential(cli: &Cli, command: &CredentialCommand) -> anyhow::Result<()> {
    let said = |e: ochre_host::ToolError| anyhow::anyhow!("{}", e.message);
    let data = cli.host.data_dir();
    match command {
        CredentialCommand::Set { name, origins, username, totp } => {
            let Some(key) = cli.host.login_key()? else {
                anyhow::bail!(
                    "credentials are sealed with the login key: set OCHRE_LOGIN_KEY or pass \
                     --login-key-file (`ochre login keygen` makes one)"
                );
            };
            let mut lines = std::io::stdin().lines();
            let mut line = |what: &str| -> anyhow::Result<String> {
                let l = lines.next().transpose()?.unwrap_or_default();
                let l = l.trim_end_matches(['\r', '\n']).to_owned();
                anyhow::ensure!(!l.is_empty(), "{what} is empty (stdin gives it, one line)");
                Ok(l)
            };
            let password = line("the password")?;
            let totp = if *totp { Some(line("the TOTP seed")?) } else { None };
            let secret =
                CredentialSecret { username: username.clone().unwrap_or_default(), password, totp };
            let s = CredentialStore::new(&data, Some(key))
                .save(name, origins, &secret)
                .map_err(said)?;
            eprintln!(
                "stored the credential {} for {}; agents sign in with oc_credential_fill {{\"name\": \"{}\"}}",
                s.name,
                s.origins.join(", "),
                s.name
            );
        }
        CredentialCommand::List { json } => {
            let all = CredentialStore::new(&data, None).list().map_err(said)?;
            if *json {
                crate::say!("{}", serde_json::to_string_pretty(&all)?);
            } else if all.is_empty() {
                eprintln!("no credentials");
            }
            for c in all.iter().filter(|_| !*json) {
                crate::say!("{}\t{}\t{}", c.name, c.origins.join(", "), holds(c));
            }
        }
        CredentialCommand::Show { name } => {
            let c = CredentialStore::new(&data, None).show(name).map_err(said)?;
            crate::say!("name: {}", c.name);
            crate::say!("saved: {}", c.saved_at);
            crate::say!("holds: {}", holds(&c));
            crate::say!("origins:");
            for o in &c.origins {
                crate::say!("  {o}");
            }
        }
        CredentialCommand::Remove { name } => {
            let gone = CredentialStore::new(&data, None).delete(name).map_err(said)?;
            anyhow::ensure!(gone, "no credential named {name:?}");
            eprintln!("removed the credential {name}");
        }
    }
    Ok(())
}

/// What a credential holds, in words (never a value).
fn holds(c: &CredentialSummary) -> String {
    let mut parts = vec![];
    if c.username {
        parts.push("username");
    }
    parts.push("password");
    if c.totp {
        parts.push("TOTP seed");
    }
    parts.join(", ")
}
