//! `ochre login keygen|list|show|delete`: the named logins (sessions' storage
//! states, sealed with the operator's key; see `ochre_host::stores::logins`).

use ochre_host::stores::logins::{LoginKey, LoginStore, LoginSummary};

use crate::{Cli, LoginCommand};

/// `ochre login keygen|list|show|delete`.
pub(crate) fn login(cli: &Cli, command: &LoginCommand) -> anyhow::Result<()> {
    if let LoginCommand::Keygen = command {
        // To stdout alone, so that it can go straight to a file or a vault.
        crate::say!("{}", LoginKey::generate().map_err(|e| anyhow::anyhow!("{e}"))?.encoded());
        eprintln!(
            "a new login key: keep it outside the data dir (a file for --login-key-file, \
             or OCHRE_LOGIN_KEY in the server's environment); logins saved with it open \
             with it alone"
        );
        return Ok(());
    }
    let said = |e: ochre_host::ToolError| anyhow::anyhow!("{}", e.message);
    if let LoginCommand::Save { name, from } = command {
        let Some(key) = cli.host.login_key()? else {
            anyhow::bail!(
                "logins are sealed with the login key: set OCHRE_LOGIN_KEY or pass \
                 --login-key-file (`ochre login keygen` makes one)"
            );
        };
        LoginStore::check_name(name).map_err(said)?;
        let text = if from.as_os_str() == "-" {
            std::io::read_to_string(std::io::stdin())?
        } else {
            std::fs::read_to_string(from)
                .map_err(|e| anyhow::anyhow!("--from {}: {e}", from.display()))?
        };
        let state = from_playwright(&text)
            .map_err(|e| anyhow::anyhow!("--from {}: {e}", from.display()))?;
        let summary =
            LoginStore::new(&cli.host.data_dir(), Some(key)).save(name, &state).map_err(said)?;
        show(&summary);
        eprintln!(
            "saved the login {name}; sessions sign in with oc_login_load {{\"name\": \"{name}\"}} \
             (or --login {name}). The file you read it from holds its values in clear: delete it"
        );
        return Ok(());
    }
    // Listing, showing and deleting need no key.
    let store = LoginStore::new(&cli.host.data_dir(), None);
    match command {
        LoginCommand::Keygen | LoginCommand::Save { .. } => {}
        LoginCommand::List { json } => {
            let all = store.list().map_err(said)?;
            if *json {
                crate::say!("{}", serde_json::to_string_pretty(&all)?);
            } else if all.is_empty() {
                eprintln!("no saved logins");
            }
            for l in all.iter().filter(|_| !*json) {
                crate::say!("{}\t{}\t{}", l.name, l.saved_at, l.origins.join(", "));
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
    crate::say!("name: {}", l.name);
    crate::say!("saved: {}", l.saved_at);
    crate::say!("origins (localStorage, {} entries):", l.storage_entries);
    for o in &l.origins {
        crate::say!("  {o}");
    }
    crate::say!("cookies ({}):", l.cookies.len());
    for c in &l.cookies {
        crate::say!("  {c}");
    }
    if !l.indexed_db.is_empty() {
        crate::say!("IndexedDB ({} databases):", l.indexed_db.len());
        for d in &l.indexed_db {
            crate::say!("  {d}");
        }
    }
    if l.indexed_db_skipped > 0 {
        crate::say!("not saved: {} IndexedDB records holding a Blob", l.indexed_db_skipped);
    }
}

/// A storage state from Playwright's `storageState` JSON: `cookies` (each
/// `name`, `value`, `domain`, `path`, `expires` (-1: a session cookie),
/// `httpOnly`, `secure`, `sameSite`) and `origins` (each `origin` and its
/// `localStorage` as `{name, value}` pairs). The error never quotes a value.
fn from_playwright(text: &str) -> anyhow::Result<ochre_host::stores::logins::StorageState> {
    use ochre_host::stores::logins::{OriginStorage, StorageState};
    use serde_json::{Value, json};
    let v: Value = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("not JSON (line {}, column {})", e.line(), e.column()))?;
    let list = |k: &str| -> anyhow::Result<Vec<Value>> {
        match &v[k] {
            Value::Null => Ok(Vec::new()),
            Value::Array(a) => Ok(a.clone()),
            _ => anyhow::bail!("`{k}` is not a list"),
        }
    };
    let text_of = |c: &Value, k: &str, i: usize, what: &str| -> anyhow::Result<String> {
        c[k].as_str().map(str::to_owned).ok_or_else(|| anyhow::anyhow!("{what} {i} has no `{k}`"))
    };
    let mut cookies = Vec::new();
    for (i, c) in list("cookies")?.iter().enumerate() {
        let mut cookie = json!({
            "name": text_of(c, "name", i, "cookie")?,
            "value": text_of(c, "value", i, "cookie")?,
            "domain": text_of(c, "domain", i, "cookie")?,
            "path": c["path"].as_str().unwrap_or("/"),
            "httpOnly": c["httpOnly"].as_bool().unwrap_or(false),
            "secure": c["secure"].as_bool().unwrap_or(false),
        });
        if let Some(e) = c["expires"].as_f64().filter(|e| *e > 0.0) {
            cookie["expires"] = json!(e);
        }
        if let Some(s) = c["sameSite"].as_str() {
            anyhow::ensure!(
                matches!(s, "Strict" | "Lax" | "None"),
                "cookie {i}: sameSite is Strict, Lax or None"
            );
            cookie["sameSite"] = json!(s);
        }
        cookies.push(cookie);
    }
    let mut origins = Vec::new();
    for (i, o) in list("origins")?.iter().enumerate() {
        let origin = text_of(o, "origin", i, "origin")?;
        let entries = o["localStorage"].as_array().cloned().unwrap_or_default();
        let mut local_storage = Vec::new();
        for (j, e) in entries.iter().enumerate() {
            let what = format!("origin {i}'s localStorage entry");
            local_storage.push((text_of(e, "name", j, &what)?, text_of(e, "value", j, &what)?));
        }
        origins.push(OriginStorage { origin, local_storage, ..Default::default() });
    }
    anyhow::ensure!(!cookies.is_empty() || !origins.is_empty(), "it holds no cookie and no origin");
    Ok(StorageState { cookies, origins, ..Default::default() })
}
