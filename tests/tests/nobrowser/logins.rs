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
        }],
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
