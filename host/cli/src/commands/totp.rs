//! `ochre totp set|remove|list`: the TOTP secrets of the `totp` tool group.

use crate::{Cli, TotpCommand};

/// `ochre totp add|remove|list`.
pub(crate) fn totp(cli: &Cli, command: &TotpCommand) -> anyhow::Result<()> {
    let store = ochre_host::stores::secrets::SecretStore::new(&cli.host.data_dir())
        .with_key(cli.host.login_key()?);
    match command {
        TotpCommand::Add { domain, secret } => {
            let domain = domain.trim().to_ascii_lowercase();
            if domain.is_empty() {
                anyhow::bail!("--domain must not be empty");
            }
            let secret = match secret {
                Some(s) => s.clone(),
                None => {
                    let mut s = String::new();
                    std::io::stdin().read_line(&mut s)?;
                    s
                }
            };
            let secret = secret.trim();
            if secret.is_empty() {
                anyhow::bail!("the secret is empty");
            }
            store.set("totp", &domain, secret)?;
            eprintln!("stored the TOTP secret for {domain} in {}", store.path().display());
        }
        TotpCommand::Remove { domain } => {
            let domain = domain.trim().to_ascii_lowercase();
            if store.remove("totp", &domain)? {
                eprintln!("removed the TOTP secret for {domain}");
            } else {
                anyhow::bail!("no TOTP secret stored for {domain}");
            }
        }
        TotpCommand::List => {
            for key in store.keys("totp")? {
                crate::say!("{key}");
            }
        }
    }
    Ok(())
}
