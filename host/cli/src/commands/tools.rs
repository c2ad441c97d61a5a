//! `ochre tools`: the tool catalogue (text, `--json` or `--markdown`).

use crate::Cli;

/// `ochre tools`.
pub(crate) async fn list_tools(cli: &Cli, json: bool, markdown: bool) -> anyhow::Result<()> {
    let host = cli.host.build().await?;
    let catalogue = ochre_mcp::server::catalogue(&host);
    host.shutdown().await;
    if json {
        crate::say!("{}", serde_json::to_string_pretty(&catalogue)?);
    } else if markdown {
        crate::say_raw!("{}", ochre_mcp::server::catalogue_markdown(&catalogue));
    } else {
        for e in &catalogue {
            crate::say!(
                "{:<10} {} {:<20} {}",
                e["group"].as_str().unwrap_or(""),
                e["tier"],
                e["name"].as_str().unwrap_or(""),
                e["purpose"].as_str().unwrap_or("")
            );
        }
    }
    Ok(())
}
