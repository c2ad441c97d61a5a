//! `ochre plugin new|build|keygen|sign|install|publish|list`.

use ochre_host::PluginStatus;

use crate::{Cli, PluginCommand, install, oci, scaffold};

/// Run one `ochre plugin` command.
pub(crate) async fn run(cli: &Cli, command: &PluginCommand) -> anyhow::Result<()> {
    match command {
        PluginCommand::List { json } => list_plugins(cli, *json).await,
        PluginCommand::New { name, dir, sdk, lang } => {
            let req = scaffold::NewPlugin {
                name: name.clone(),
                dir: dir.clone(),
                sdk: sdk.clone(),
                lang: *lang,
            };
            let dir = scaffold::new_plugin(&req)?;
            crate::say!("created plugin {name} in {}", dir.display());
            crate::say!("next: cd {} && ochre plugin build", dir.display());
            Ok(())
        }
        PluginCommand::Build { dir, out } => {
            scaffold::build_plugin(dir, out.as_deref()).map(|_| ())
        }
        PluginCommand::Keygen { out } => {
            let public = install::keygen(out)?;
            crate::say!("private key written to {} (keep it secret)", out.display());
            crate::say!("public key: {public}");
            crate::say!(
                "trust it:   [trust.keys] NAME = \"{public}\"   (in the server's --config file)"
            );
            Ok(())
        }
        PluginCommand::Sign { file, key } => {
            let sig = install::sign(file, key)?;
            crate::say!("signed {}: {}", file.display(), sig.display());
            Ok(())
        }
        PluginCommand::Install { source, allow_unsigned, plain_http } => {
            let config = cli.host.config()?;
            let data = cli.host.data_dir();
            let done = if source.starts_with(oci::SCHEME) {
                let component = oci::fetch(source, oci::Reach { plain_http: *plain_http }).await?;
                install::install_component(&data, component, &config, *allow_unsigned)?
            } else {
                install::install(&data, std::path::Path::new(source), &config, *allow_unsigned)?
            };
            let e = &done.entry;
            crate::say!("installed plugin {} from {}", e.name, e.source);
            crate::say!("  {} ({}), signer: {}", done.path.display(), e.digest, e.signer);
            Ok(())
        }
        PluginCommand::Publish { file, target, key, plain_http } => {
            let reach = oci::Reach { plain_http: *plain_http };
            let done = oci::publish(file, target, key.as_deref(), reach).await?;
            crate::say!("published {}", done.reference);
            match &done.signer {
                Some(key) => crate::say!("  component {}, signed by {key}", done.digest),
                None => {
                    crate::say!("  component {}, unsigned", done.digest);
                    eprintln!(
                        "warning: published without a signature: servers refuse it unless \
                     they allow it unsigned (sign with --key)"
                    );
                }
            }
            Ok(())
        }
    }
}

/// `ochre plugins list`.
async fn list_plugins(cli: &Cli, json: bool) -> anyhow::Result<()> {
    let host = cli.host.build().await?;
    let policy = cli.host.interface_policy(&cli.host.config()?)?;
    // What the operator granted each plugin (--grant, [plugins.NAME] grants).
    let granted = |name: &str| -> Vec<String> {
        policy.grants.iter().filter(|(p, _)| p == name).map(|(_, i)| i.clone()).collect()
    };
    if json {
        let list: Vec<_> = host
            .plugins()
            .iter()
            .map(|p| {
                let mut v = p.to_json();
                v["granted"] = serde_json::json!(granted(&p.name));
                v
            })
            .collect();
        crate::say!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        for p in host.plugins() {
            let status = match &p.status {
                PluginStatus::Loaded => "loaded".to_owned(),
                PluginStatus::Disabled => "disabled (group excluded; not instantiated)".to_owned(),
                PluginStatus::Refused(r) => format!("REFUSED: {r}"),
            };
            crate::say!("{} [{}] {} ({})", p.name, p.group, status, p.source);
            crate::say!("  tools: {}", p.tools.join(", "));
            crate::say!("  interfaces: {}", p.interfaces.join(", "));
            let granted = granted(&p.name);
            if !granted.is_empty() {
                crate::say!("  granted by the operator: {}", granted.join(", "));
            }
            if !p.wit.is_empty() {
                crate::say!("  built against: ochre:plugin@{}", p.wit);
            }
        }
    }
    host.shutdown().await;
    Ok(())
}
