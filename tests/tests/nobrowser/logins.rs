//! `ochre login keygen|list|show|delete` on logins sealed by the host's store:
//! the key the CLI makes opens them, nothing of a value is ever printed or
//! written in clear, and without the key a login does not open.

use anyhow::Result;
use ochre_host::stores::logins::{LoginKey, LoginStore, OriginStorage, StorageState};
use ochre_tests::*;
use serde_json::json;

#[test]
fn logins_are_listed_and_shown_without_a_value_and_open_only_with_their_key() -> Result<()> {
    let data = TempDir::new("logins-cli");
    let key = ok(ochre_cli(data.path(), &["login", "keygen"])?);
    let key = LoginKey::parse(&key).map_err(anyhow::Error::msg)?;
    let state = StorageState {
        cookies: vec![
            json!({"name": "session", "value": "cookie-VALUE-1", "domain": "127.0.0.1", "httpOnly": true}),
            json!({"name": "prefs", "value": "cookie-VALUE-2", "domain": ".example.com"}),
        ],
        origins: vec![OriginStorage {
            origin: "http://127.0.0.1:8000".into(),
            local_storage: vec![("token".into(), "storage-VALUE-3".into())],
            ..Default::default()
        }],
        ..Default::default()
    };
    LoginStore::new(data.path(), Some(key.clone()))
        .save("admin", &state)
        .map_err(anyhow::Error::msg)?;

    let list = ok(ochre_cli(data.path(), &["login", "list"])?);
    assert!(list.starts_with("admin\t") && list.contains("http://127.0.0.1:8000"), "{list}");
    let shown = ok(ochre_cli(data.path(), &["login", "show", "admin"])?);
    for name in ["127.0.0.1 session", ".example.com prefs", "http://127.0.0.1:8000"] {
        assert!(shown.contains(name), "{name} not in {shown}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&ok(ochre_cli(data.path(), &["login", "list", "--json"])?))?;
    assert_eq!(json[0]["storage_entries"], 1, "{json}");
    // No value anywhere: not printed, not in any file of the data dir.
    let everything = format!("{list}{shown}{json}{}", read_all_text(data.path()));
    assert!(!everything.contains("VALUE"), "a value in clear: {everything}");

    // Only the key it was saved with opens it.
    assert_eq!(
        LoginStore::new(data.path(), Some(key)).load("admin").map_err(anyhow::Error::msg)?,
        state
    );
    let e = LoginStore::new(data.path(), None).load("admin").expect_err("no key");
    assert_eq!(e.code.as_str(), "LOGIN_LOCKED", "{e}");
    let other = LoginKey::generate().map_err(anyhow::Error::msg)?;
    let e = LoginStore::new(data.path(), Some(other)).load("admin").expect_err("another key");
    assert_eq!(e.code.as_str(), "LOGIN_LOCKED", "{e}");

    // A name that is not one, or a login that is not there, is refused clearly.
    let out = refused(ochre_cli(data.path(), &["login", "show", "../secrets"])?);
    assert!(out.contains("not a login name"), "{out}");
    ok(ochre_cli(data.path(), &["login", "delete", "admin"])?);
    let out = refused(ochre_cli(data.path(), &["login", "delete", "admin"])?);
    assert!(out.contains("no login named"), "{out}");
    assert!(ok(ochre_cli(data.path(), &["login", "list"])?).is_empty());
    Ok(())
}

/// `ochre secret credential set|list|show|remove`: the password (and TOTP
/// seed) from stdin, sealed with the login key; listed and shown without a
/// value and without the key; refused without the key, or bound to no http(s)
/// origin.
#[test]
fn credentials_are_set_from_stdin_sealed_and_listed_without_a_value() -> Result<()> {
    use ochre_host::stores::credentials::CredentialStore;
    use std::io::Write;
    let data = TempDir::new("credentials-cli");
    let key = ok(ochre_cli(data.path(), &["login", "keygen"])?);
    let set = |args: &[&str], stdin: &str, key: Option<&str>| -> Result<std::process::Output> {
        let mut cmd = std::process::Command::new(ochre_bin());
        cmd.arg("--data-dir").arg(data.path()).args(["secret", "credential", "set"]).args(args);
        cmd.env_remove("OCHRE_LOGIN_KEY");
        if let Some(k) = key {
            cmd.env("OCHRE_LOGIN_KEY", k.trim());
        }
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        child.stdin.take().expect("stdin").write_all(stdin.as_bytes())?;
        Ok(child.wait_with_output()?)
    };
    let seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
    let app = ["app", "--origin", "https://app.example/login", "--username", "alice", "--totp"];
    let out = refused(set(&app, &format!("pw-VALUE-1\n{seed}\n"), None)?);
    assert!(out.contains("login key"), "{out}");
    let out = refused(set(&["x", "--origin", "ftp://files.example"], "pw\n", Some(&key))?);
    assert!(out.contains("not an http(s) origin"), "{out}");
    let out = refused(set(&["x", "--origin", "https://a.example"], "\n", Some(&key))?);
    assert!(out.contains("the password is empty"), "{out}");
    ok(set(&app, &format!("pw-VALUE-1\n{seed}\n"), Some(&key))?);

    let list = ok(ochre_cli(data.path(), &["secret", "credential", "list"])?);
    assert_eq!(list, "app\thttps://app.example\tusername, password, TOTP seed\n");
    let shown = ok(ochre_cli(data.path(), &["secret", "credential", "show", "app"])?);
    assert!(shown.contains("  https://app.example"), "{shown}");
    let everything = format!("{list}{shown}{}", read_all_text(data.path()));
    for value in ["VALUE", "alice", seed] {
        assert!(!everything.contains(value), "{value} in clear: {everything}");
    }
    let parsed = LoginKey::parse(&key).map_err(anyhow::Error::msg)?;
    let (_, secret) =
        CredentialStore::new(data.path(), Some(parsed)).open("app").map_err(anyhow::Error::msg)?;
    assert_eq!((secret.username.as_str(), secret.password.as_str()), ("alice", "pw-VALUE-1"));
    assert_eq!(secret.totp.as_deref(), Some(seed));

    ok(ochre_cli(data.path(), &["secret", "credential", "remove", "app"])?);
    let out = refused(ochre_cli(data.path(), &["secret", "credential", "remove", "app"])?);
    assert!(out.contains("no credential named"), "{out}");
    Ok(())
}
